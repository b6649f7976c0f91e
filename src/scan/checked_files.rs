//! Data files known to pass the reader's per-file checks, kept for a session so that a
//! later scan of the same file under the same table schema does not check it again.
//!
//! Before a data file is decoded, the scan's reader checks its footer against the
//! manifest and the table (`crate::datafusion::file_reader`): every column chunk lies
//! inside the file's `file_size_in_bytes`, every column's stored type is the table's
//! type or a promotion the spec allows (spec: "Schema Evolution"), and whether its
//! deprecated min/max statistics may be trusted. Building the file's Arrow schema for
//! those checks costs about 245,000 instructions per opened file range (callgrind of
//! TPC-H q06/q14, `benches/README.md`), made again in every scan because the reader is
//! made per scan. The outcome depends only on
//! - the file's bytes: Iceberg data files are written once and never changed in place
//!   (spec: "Overview"), so the object store URL, the object path, the size the
//!   manifest records and the version of the file the entry lists (a file removed and
//!   re-added at the same path is another version, see [`super::file_version`]) name
//!   them; the session's footer cache is keyed the same way;
//! - what they are checked against, the [`CheckContext`]: the scan's table schema (Arrow,
//!   columns' field ids in the field metadata), the table's columns with the ids of their
//!   nested fields, and the name mapping that gives ids to files written without them.
//!
//! So a file that passed is recorded under its [`CheckedFile`] key and its context, and
//! passes again at once. Only passes are recorded (a failing file fails again, naming
//! itself, each time), and only for files whose footer the reader hands on unchanged:
//! files with INT96 columns (whose decoding unit depends on the columns a scan reads)
//! or untrusted min/max statistics are checked on every scan, as before.
//!
//! Contexts are compared by equality (no hash that could collide): a scan's context is
//! interned once ([`CheckedFiles::context`], a comparison against each context kept),
//! and files are keyed by the interned context's number, never reused. Bounded: at most
//! [`MAX_CONTEXTS`] contexts, and files weighed by the bytes of their key up to
//! [`DEFAULT_MAX_BYTES`], least recently used dropped first (`crate::lru::WeightedLru`).

use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::{FieldRef, Schema};

use crate::lru::WeightedLru;
use crate::spec::name_mapping::NameMapping;

/// Default bound on the keys held, in bytes (8 MiB: about 50,000 files of 100-byte
/// paths).
pub const DEFAULT_MAX_BYTES: u64 = 8 << 20;

/// Contexts kept (the least recently asked dropped first); a dropped context's files are
/// no longer found and age out.
pub const MAX_CONTEXTS: usize = 64;

/// What a data file is checked against (see the module docs). Two scans with equal
/// contexts check a file the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckContext {
    /// The scan's table schema (the columns data files are read as, with field ids).
    pub table_schema: Schema,
    /// The table's columns with the field ids of their nested fields, by field id order.
    pub id_columns: Vec<FieldRef>,
    /// The name mapping for files without field ids.
    pub name_mapping: Option<NameMapping>,
}

/// One data file as a scan reads it: its store, object path, recorded size and version.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CheckedFile {
    /// The interned context's number ([`CheckedFiles::context`]).
    pub context: u64,
    /// The object store's URL (e.g. `file:///`, `s3://bucket`).
    pub store_url: Arc<str>,
    /// The object path in that store.
    pub path: String,
    /// `file_size_in_bytes` from the manifest (bytes).
    pub size: u64,
    /// The `last_modified` the scan hands DataFusion for the file: its
    /// [`FileVersion::last_modified`](super::file_version::FileVersion::last_modified),
    /// which differs for a file re-added at the same path, as nanoseconds.
    pub version: i64,
}

impl CheckedFile {
    /// Estimated bytes held for this key in the cache.
    fn weight(&self) -> u64 {
        (self.path.len() + 96) as u64
    }
}

#[derive(Debug)]
struct Inner {
    /// Interned contexts, least recently asked first, with their numbers.
    contexts: Vec<(Arc<CheckContext>, u64)>,
    next_context: u64,
    files: WeightedLru<CheckedFile, ()>,
    hits: u64,
    misses: u64,
}

/// The data files that passed the reader's checks in this session (see the module
/// docs). Shared through [`SessionCaches`](super::cache::SessionCaches).
#[derive(Debug)]
pub struct CheckedFiles {
    inner: Mutex<Inner>,
}

impl Default for CheckedFiles {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_BYTES)
    }
}

/// Lookups since the cache was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckedFilesStats {
    /// Files found (their checks skipped).
    pub hits: u64,
    /// Files not found (checked).
    pub misses: u64,
    /// Files held now.
    pub files: usize,
}

impl CheckedFiles {
    /// An empty cache holding keys of at most `max_bytes` estimated bytes (0 keeps
    /// none: every file is checked).
    pub fn new(max_bytes: u64) -> Self {
        Self {
            inner: Mutex::new(Inner {
                contexts: Vec::new(),
                next_context: 0,
                files: WeightedLru::new(max_bytes),
                hits: 0,
                misses: 0,
            }),
        }
    }

    /// The number of `context`: that of an equal context kept, else a new one (the
    /// least recently asked context dropped beyond [`MAX_CONTEXTS`]). `None` when the cache's lock is
    /// poisoned (nothing is then cached).
    pub fn context(&self, context: CheckContext) -> Option<u64> {
        let mut inner = self.inner.lock().ok()?;
        if let Some(i) = inner.contexts.iter().position(|(c, _)| **c == context) {
            // just used: the last to be dropped
            let found = inner.contexts.remove(i);
            let n = found.1;
            inner.contexts.push(found);
            return Some(n);
        }
        let n = inner.next_context;
        inner.next_context += 1;
        if inner.contexts.len() >= MAX_CONTEXTS {
            inner.contexts.remove(0);
        }
        inner.contexts.push((Arc::new(context), n));
        Some(n)
    }

    /// Whether `file` passed the checks before (counted as a hit or a miss).
    pub fn passed(&self, file: &CheckedFile) -> bool {
        let Ok(mut inner) = self.inner.lock() else {
            return false;
        };
        let found = inner.files.get(file).is_some();
        if found {
            inner.hits += 1;
        } else {
            inner.misses += 1;
        }
        found
    }

    /// Record that `file` passed the checks.
    pub fn record(&self, file: CheckedFile) {
        if let Ok(mut inner) = self.inner.lock() {
            let weight = file.weight();
            inner.files.insert(file, (), weight);
        }
    }

    /// Hits, misses and files held.
    pub fn stats(&self) -> CheckedFilesStats {
        self.inner
            .lock()
            .map(|i| CheckedFilesStats {
                hits: i.hits,
                misses: i.misses,
                files: i.files.len(),
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::{DataType, Field};
    use std::collections::HashMap;

    fn schema(id: &str, data_type: DataType) -> Schema {
        Schema::new(vec![Field::new("a", data_type, true).with_metadata(
            HashMap::from([("PARQUET:field_id".to_string(), id.to_string())]),
        )])
    }

    fn context(table_schema: Schema) -> CheckContext {
        CheckContext {
            table_schema,
            id_columns: Vec::new(),
            name_mapping: None,
        }
    }

    fn file(context: u64, path: &str, size: u64) -> CheckedFile {
        CheckedFile {
            context,
            store_url: Arc::from("file:///"),
            path: path.to_string(),
            size,
            version: 7,
        }
    }

    #[test]
    fn equal_contexts_share_a_number_and_any_difference_gets_another() {
        let cache = CheckedFiles::default();
        let a = cache.context(context(schema("1", DataType::Int64)));
        assert_eq!(a, cache.context(context(schema("1", DataType::Int64))));
        // another type, another field id, a name mapping, nested ids: each another context
        let others = [
            context(schema("1", DataType::Int32)),
            context(schema("2", DataType::Int64)),
            CheckContext {
                name_mapping: Some(NameMapping::default()),
                ..context(schema("1", DataType::Int64))
            },
            CheckContext {
                id_columns: vec![Arc::new(Field::new("a", DataType::Int64, true))],
                ..context(schema("1", DataType::Int64))
            },
        ];
        let mut seen = vec![a];
        for c in others {
            let n = cache.context(c);
            assert!(!seen.contains(&n), "{n:?} reused");
            seen.push(n);
        }
    }

    #[test]
    fn a_file_passes_only_under_its_context_store_path_size_and_version() {
        let cache = CheckedFiles::default();
        let c = cache
            .context(context(schema("1", DataType::Int64)))
            .unwrap();
        let d = cache.context(context(schema("1", DataType::Utf8))).unwrap();
        assert!(!cache.passed(&file(c, "t/data/a.parquet", 100)));
        cache.record(file(c, "t/data/a.parquet", 100));
        assert!(cache.passed(&file(c, "t/data/a.parquet", 100)));
        assert!(!cache.passed(&file(d, "t/data/a.parquet", 100)));
        assert!(!cache.passed(&file(c, "t/data/a.parquet", 101)));
        assert!(!cache.passed(&file(c, "t/data/b.parquet", 100)));
        let mut other_store = file(c, "t/data/a.parquet", 100);
        other_store.store_url = Arc::from("s3://bucket");
        assert!(!cache.passed(&other_store));
        // the same path and size re-added by another commit: another version
        let mut re_added = file(c, "t/data/a.parquet", 100);
        re_added.version = 8;
        assert!(!cache.passed(&re_added));
        assert_eq!(
            cache.stats(),
            CheckedFilesStats {
                hits: 1,
                misses: 6,
                files: 1
            }
        );
    }

    #[test]
    fn the_least_recently_asked_context_is_dropped() {
        let cache = CheckedFiles::default();
        let kept = cache.context(context(schema("0", DataType::Int64)));
        for id in 1..=MAX_CONTEXTS {
            // asked again before each new one: never the least recently asked
            assert_eq!(cache.context(context(schema("0", DataType::Int64))), kept);
            cache.context(context(schema(&id.to_string(), DataType::Int64)));
        }
        assert_eq!(cache.context(context(schema("0", DataType::Int64))), kept);
        // the context asked least recently ("1") was dropped: asked now, a new number
        let second = cache.context(context(schema("1", DataType::Int64)));
        assert!(second > kept.map(|k| k + MAX_CONTEXTS as u64), "{second:?}");
    }

    #[test]
    fn dropped_contexts_numbers_are_not_reused() {
        let cache = CheckedFiles::default();
        let first = cache
            .context(context(schema("0", DataType::Int64)))
            .unwrap();
        cache.record(file(first, "a", 1));
        for id in 1..=MAX_CONTEXTS {
            cache.context(context(schema(&id.to_string(), DataType::Int64)));
        }
        // the first context was dropped: asked again, it gets a new number, under which
        // the file it passed is not found
        let again = cache
            .context(context(schema("0", DataType::Int64)))
            .unwrap();
        assert_ne!(first, again);
        assert!(!cache.passed(&file(again, "a", 1)));
    }

    #[test]
    fn bounded_by_the_bytes_of_its_keys() {
        let cache = CheckedFiles::new(1000);
        for i in 0..100 {
            cache.record(file(0, &format!("f{i:04}"), 1));
        }
        // each key weighs 5 + 96 bytes: 9 fit, the most recent ones
        assert_eq!(cache.stats().files, 9);
        assert!(cache.passed(&file(0, "f0099", 1)));
        assert!(!cache.passed(&file(0, "f0000", 1)));
        let none = CheckedFiles::new(0);
        none.record(file(0, "a", 1));
        assert!(!none.passed(&file(0, "a", 1)));
    }
}
