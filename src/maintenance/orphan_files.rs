//! `remove_orphan_files`: delete files under a table's location that no metadata
//! references (Java `DeleteOrphanFilesSparkAction`).
//!
//! Referenced are: the current metadata file and every file of its `metadata-log`, the
//! `metadata/version-hint.text` of filesystem tables, every snapshot's manifest list,
//! every manifest of those lists and every data and delete file their entries name (any
//! status), and the statistics and partition statistics files. Listed files are compared
//! with these by location normalised and remapped (`file:/x`, `file:///x` and `/x` are
//! one file) and with the schemes `s3`, `s3a`, `s3n` taken as one (Spark's
//! `equal_schemes`). A listed file whose path equals a referenced one's but whose scheme
//! or authority differs is an error (Spark's `prefix_mismatch_mode` `ERROR`): deleting
//! it could break the table.
//!
//! Only files last modified before `older_than` (default: 3 days ago) are orphans:
//! younger ones may belong to a commit in flight. An `older_than` within the last 24
//! hours is refused unless [`RemoveOrphanFiles::allow_recent`] says otherwise (Spark
//! refuses it in SQL).
//!
//! A table whose `gc.enabled` is false is refused (a dry run too), as Java's
//! `DeleteOrphanFilesSparkAction` refuses it.

use std::collections::{HashMap, HashSet};

use futures::stream::{self, StreamExt};

use super::reachable::{content_files, manifests, statistics_files};
use crate::error::{Error, ErrorKind, Result};
use crate::io::normalize_location;
use crate::table::Table;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// What [`remove_orphan_files`] does.
#[derive(Debug, Clone, Default)]
pub struct RemoveOrphanFiles {
    older_than_ms: Option<i64>,
    location: Option<String>,
    dry_run: bool,
    allow_recent: bool,
    max_concurrent_deletes: Option<usize>,
}

impl RemoveOrphanFiles {
    /// Files older than 3 days, under the table location, deleted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only files last modified before `timestamp_ms` (ms since the epoch).
    pub fn older_than(mut self, timestamp_ms: i64) -> Self {
        self.older_than_ms = Some(timestamp_ms);
        self
    }

    /// Look under `location` instead of the table location; it must be the table
    /// location or a directory inside it (files elsewhere may be other tables').
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// List the orphans; delete nothing.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Accept an `older_than` within the last 24 hours (only when no other writer can
    /// be committing to the table: its new files are not referenced yet).
    pub fn allow_recent(mut self, allow: bool) -> Self {
        self.allow_recent = allow;
        self
    }

    /// Delete this many files at once (default 16; at least 1).
    pub fn max_concurrent_deletes(mut self, n: usize) -> Self {
        self.max_concurrent_deletes = Some(n);
        self
    }
}

/// A location split for comparison: (scheme class, authority, path).
fn parts(location: &str) -> (String, String, String) {
    let Some((scheme, rest)) = location.split_once("://") else {
        return (String::new(), String::new(), location.to_string());
    };
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "s3a" | "s3n" => "s3".to_string(),
        s => s.to_string(),
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    (scheme, authority.to_string(), path.to_string())
}

/// Check that `location` is `table_location` or under it. Every file under a directory
/// outside it that the table does not reference would count as an orphan, other tables'
/// data and metadata files among them (Spark deletes them; icefloe refuses).
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming both locations.
fn check_inside(io: &crate::io::FileIO, location: &str, table_location: &str) -> Result<()> {
    let (scheme, authority, path) = parts(&io.remap(location)?);
    let (t_scheme, t_authority, t_path) = parts(&io.remap(table_location)?);
    let (path, t_path) = (path.trim_end_matches('/'), t_path.trim_end_matches('/'));
    let inside = scheme == t_scheme
        && authority == t_authority
        && path
            .strip_prefix(t_path)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
    if inside {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "location '{location}' is not inside the table location '{table_location}': \
             files there the table does not reference may be other tables' files, and \
             removing them as orphans would lose their data"
        )))
    }
}

/// Delete (or with `dry_run`, list) the orphan files of `table` per `options`.
/// Returns their locations as listed, sorted.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) for a table whose
/// `gc.enabled` is false (naming its location), an `older_than` within 24 hours or in
/// the future (unless allowed), `max_concurrent_deletes` 0, or a `location` outside the
/// table location (naming both);
/// [`ErrorKind::InvalidData`](crate::ErrorKind) for a listed file that matches a
/// referenced one in path only (scheme or authority differ), naming both; an unreadable
/// manifest list or manifest (nothing is deleted then); listing errors.
pub async fn remove_orphan_files(
    table: &Table,
    options: &RemoveOrphanFiles,
) -> Result<Vec<String>> {
    crate::table_properties::check_gc_enabled(
        &table.metadata().properties,
        &format!(
            "remove orphan files of the table at '{}'",
            table.metadata().location
        ),
    )?;
    let now = chrono::Utc::now().timestamp_millis();
    let older_than = options.older_than_ms.unwrap_or(now - 3 * DAY_MS);
    if older_than > now - DAY_MS && !options.allow_recent {
        let when = if older_than > now {
            "in the future"
        } else {
            "within the last 24 hours"
        };
        return Err(Error::invalid_argument(format!(
            "cannot remove orphan files with older_than {} ({older_than} ms), {when}: files of \
             commits in flight would be deleted and the table corrupted (older_than must be at \
             least 24 hours ago)",
            crate::catalog::format_ms(older_than)
        )));
    }
    let concurrency = options.max_concurrent_deletes.unwrap_or(16);
    if concurrency == 0 {
        return Err(Error::invalid_argument(
            "max_concurrent_deletes must be at least 1",
        ));
    }
    let m = table.metadata();
    let io = table.file_io();
    let root = match options.location.as_deref() {
        None => m.location.as_str(),
        Some(l) => {
            check_inside(io, l, &m.location)?;
            l
        }
    };

    // every file the metadata references, by normalised (and remapped) location
    let mut referenced: HashSet<String> = HashSet::new();
    referenced.insert(io.remap(table.metadata_location())?);
    // a table opened from its directory has the metadata file where it is (a moved
    // table's is remapped already)
    referenced.insert(normalize_location(table.metadata_location())?);
    for entry in &m.metadata_log {
        referenced.insert(io.remap(&entry.metadata_file)?);
    }
    referenced.insert(io.remap(&format!("{}/metadata/version-hint.text", m.location))?);
    let snapshots: Vec<_> = m.snapshots.iter().collect();
    for s in &snapshots {
        if let Some(l) = &s.manifest_list {
            referenced.insert(io.remap(l)?);
        }
    }
    let all_manifests = manifests(table, &snapshots, false).await?;
    referenced.extend(all_manifests.keys().cloned());
    referenced.extend(
        content_files(table, all_manifests.values(), false, false)
            .await?
            .into_keys(),
    );
    referenced.extend(statistics_files(io, m)?.into_iter().map(|l| l.key));

    let by_parts: HashMap<(String, String, String), &String> =
        referenced.iter().map(|r| (parts(r), r)).collect();
    let by_path: HashMap<&str, &String> = by_parts
        .iter()
        .map(|((_, _, p), r)| (p.as_str(), *r))
        .collect();

    let mut orphans = vec![];
    for f in io.list_files(root).await? {
        if f.last_modified_ms >= older_than {
            continue;
        }
        // a listed location is where the file is (remapped already)
        let key = parts(&normalize_location(&f.location)?);
        if by_parts.contains_key(&key) {
            continue;
        }
        if let Some(other) = by_path.get(key.2.as_str()) {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!(
                    "cannot tell whether '{}' is an orphan: the metadata references '{other}', \
                     the same path under another scheme or authority",
                    f.location
                ),
            ));
        }
        orphans.push(f.location);
    }
    orphans.sort();
    if !options.dry_run {
        // listed locations are remapped already: deleted as they are
        let io = &io.without_remaps();
        let failed: Vec<String> = stream::iter(orphans.iter().cloned())
            .map(|path| async move {
                match io.delete(&path).await {
                    Ok(()) => None,
                    Err(_) => Some(path),
                }
            })
            .buffer_unordered(concurrency)
            .filter_map(|f| async move { f })
            .collect()
            .await;
        if let Some(first) = failed.first() {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "removed {} orphan files but could not delete {} (e.g. '{first}')",
                    orphans.len() - failed.len(),
                    failed.len()
                ),
            ));
        }
    }
    Ok(orphans)
}

#[cfg(test)]
mod tests {
    use super::parts;

    #[test]
    fn schemes_s3_s3a_s3n_are_one_and_authorities_count() {
        assert_eq!(
            parts("s3a://b/t/data/f.parquet"),
            parts("s3://b/t/data/f.parquet")
        );
        assert_eq!(
            parts("s3n://b/t/data/f.parquet"),
            parts("s3://b/t/data/f.parquet")
        );
        assert_ne!(
            parts("s3://other/t/data/f.parquet"),
            parts("s3://b/t/data/f.parquet")
        );
        assert_ne!(
            parts("gs://b/t/data/f.parquet"),
            parts("s3://b/t/data/f.parquet")
        );
        // the path alone (what a prefix mismatch is detected by) is the same
        assert_eq!(
            parts("s3://other/t/data/f.parquet").2,
            parts("s3://b/t/data/f.parquet").2
        );
        // local forms are normalised first: file:/x, file:///x and /x
        let io = crate::io::FileIO::default();
        let forms = [
            "file:/tmp/t/f.parquet",
            "file:///tmp/t/f.parquet",
            "/tmp/t/f.parquet",
        ];
        let keys: Vec<_> = forms.iter().map(|f| parts(&io.remap(f).unwrap())).collect();
        assert!(keys.windows(2).all(|w| w[0] == w[1]), "{keys:?}");
    }
}
