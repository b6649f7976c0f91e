//! A cache of decoded position deletes shared across the queries of a session, bounded in
//! bytes.
//!
//! Delete files are immutable once committed (spec: "Overview": data and delete files are
//! never changed, only added and removed by new snapshots), so what a delete file decodes
//! to can be kept by its location and reused by every later scan of any snapshot that
//! lists it; a commit that deletes more rows adds a new delete file (a new key) and the
//! old one keeps its meaning. Two kinds of value are kept:
//! - a Parquet position delete file (spec: "Position Delete Files") parsed into its
//!   [`PositionDeleteFile`] (deleted positions per data file), keyed by its location;
//! - a deletion vector (spec: "Deletion Vectors"; Puffin `deletion-vector-v1` blob)
//!   decoded into a [`RoaringTreemap`], keyed by its Puffin file's location, the blob's
//!   `content_offset` and its `content_size_in_bytes`;
//! - the positions of one data file that its equality delete files delete (spec:
//!   "Equality Delete Files"), as a scan resolved them once (see
//!   `table_provider::resolve`), keyed by the data file's location and the locations
//!   of the equality delete files that apply to it: both kinds of file are immutable,
//!   so the rows they match never change, whatever snapshot lists them;
//! - the position deletes of one data file as a scan applies them ([`PositionDeletes`]:
//!   all its position delete files and deletion vectors merged, whether they are
//!   fragmented, and when they are, its live rows as one bit per row once a scan built
//!   them), keyed by the data file's location (as read and as stored), its record count
//!   and the keys of those delete files, so a later scan neither merges them again nor
//!   walks every deleted position.
//!
//! Locations are the ones actually read (after the table's remapping), so two tables whose
//! stored paths coincide but are read from different places never share an entry. Each
//! location (of a delete file or a data file) comes with the version of the file its
//! manifest entry lists ([`FileVersion::key`](crate::scan::file_version::FileVersion::key):
//! the adding snapshot, data sequence number, size and record count): a file removed and
//! re-added at the same path with other contents is another key, never the decoded
//! deletes of the old bytes.
//!
//! The cache holds at most [`max_bytes`](PositionDeleteCache::max_bytes) bytes of
//! estimated memory (default [`DEFAULT_POSITION_DELETE_CACHE_BYTES`]); beyond it the least
//! recently used entries are evicted, and a value larger than the whole budget is not
//! kept. The estimate of a value is the serialized size of its bitmaps
//! ([`RoaringTreemap::serialized_size`]: 2 bytes a position in sparse containers, 8 KiB
//! a dense container of 65,536 rows, 4 bytes a run), which is close to what they occupy
//! in memory, plus its keys' bytes and a fixed overhead per entry. Failed loads are never
//! cached (the loader inserts only what it decoded). The
//! [`PositionDeleteLoader`](super::PositionDeleteLoader) consults it through
//! [`PositionDeleteLoader::with_cache`](super::PositionDeleteLoader::with_cache); its own
//! per-key cells still make concurrent first loads within one scan load once.

use std::sync::{Arc, Mutex};

use roaring::RoaringTreemap;

use super::planned::PositionDeletes;
use super::position_delete::PositionDeleteFile;
use crate::lru::WeightedLru;

/// Default budget of a [`PositionDeleteCache`]: 256 MiB of estimated memory.
///
/// Deleted positions are cheap: a dense bitmap container covers 65,536 rows in 8 KiB
/// (1 bit a row), a sparse one costs 2 bytes a deleted row. 256 MiB thus holds the
/// deletes of about two billion rows deleted densely, or of ~128 million rows deleted
/// sparsely, which covers the delete files of the tables a session scans
/// repeatedly; with the manifest cache's default (512 MiB) it leaves most memory to a
/// query's own operators.
pub const DEFAULT_POSITION_DELETE_CACHE_BYTES: u64 = 256 * 1024 * 1024;

/// Bytes counted per entry beyond its bitmaps and key strings (map slots, `Arc` and
/// `String` headers, the bitmaps' own headers).
const ENTRY_OVERHEAD: u64 = 128;

/// Bytes counted per data file of a parsed position delete file beyond its path and
/// bitmap (the hash map slot, `String` and `RoaringTreemap` headers).
const DATA_FILE_OVERHEAD: u64 = 64;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// A Parquet position delete file by location.
    File(String),
    /// A deletion vector by Puffin location, content offset and content size.
    Vector(String, u64, u64),
    /// The positions equality deletes delete in a data file, by the data file's location
    /// then the sorted locations of the equality delete files.
    Resolved(Vec<String>),
    /// A data file's position deletes as planned: its location, its record count, then
    /// the keys of its position delete files and deletion vectors, sorted.
    Planned(Vec<String>),
}

impl Key {
    /// The bytes of the names in the key (locations, and the parts of a delete set).
    fn name_bytes(&self) -> u64 {
        match self {
            Key::File(location) | Key::Vector(location, _, _) => location.len() as u64,
            Key::Resolved(parts) | Key::Planned(parts) => {
                parts.iter().map(|p| p.len() as u64).sum()
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Value {
    File(Arc<PositionDeleteFile>),
    Vector(Arc<RoaringTreemap>),
    Planned(PositionDeletes),
}

#[derive(Debug)]
struct Inner {
    values: WeightedLru<Key, Value>,
    hits: u64,
    misses: u64,
    evictions: u64,
}

/// Hit and miss counts and size of a [`PositionDeleteCache`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PositionDeleteCacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that were not.
    pub misses: u64,
    /// Entries dropped to stay within the budget.
    pub evictions: u64,
    /// Delete files, deletion vectors and resolved equality deletes held now.
    pub entries: usize,
    /// Their estimated bytes.
    pub bytes: u64,
}

/// A least-recently-used cache of decoded position delete files and deletion vectors,
/// bounded in estimated bytes (see the module docs). Shared behind an `Arc` by the
/// scans of a session; all methods take `&self`.
#[derive(Debug)]
pub struct PositionDeleteCache {
    inner: Mutex<Inner>,
    max_bytes: u64,
}

impl Default for PositionDeleteCache {
    /// A cache of [`DEFAULT_POSITION_DELETE_CACHE_BYTES`].
    fn default() -> Self {
        Self::new(DEFAULT_POSITION_DELETE_CACHE_BYTES)
    }
}

/// Estimated bytes of a parsed position delete file kept at `location`.
fn file_bytes(location: &str, file: &PositionDeleteFile) -> u64 {
    let data_files: u64 = file
        .by_data_file
        .iter()
        .map(|(path, set)| path.len() as u64 + set.serialized_size() as u64 + DATA_FILE_OVERHEAD)
        .sum();
    ENTRY_OVERHEAD + location.len() as u64 + data_files
}

/// Estimated bytes of a deletion vector kept at `location`.
fn vector_bytes(location: &str, positions: &RoaringTreemap) -> u64 {
    ENTRY_OVERHEAD + location.len() as u64 + positions.serialized_size() as u64
}

/// `head`, then the delete file keys `deletes` sorted and without repeats (a key
/// names a set of delete files, whatever order a scan lists them in).
fn key_parts(head: &[&str], deletes: &[String]) -> Vec<String> {
    let mut parts: Vec<String> = head.iter().map(|h| h.to_string()).collect();
    let mut deletes = deletes.to_vec();
    deletes.sort();
    deletes.dedup();
    parts.extend(deletes);
    parts
}

/// The key of a data file's planned position deletes.
fn planned_key(data_file: &str, record_count: u64, delete_keys: &[String]) -> Key {
    Key::Planned(key_parts(
        &[data_file, &record_count.to_string()],
        delete_keys,
    ))
}

/// The key of a data file's resolved equality deletes.
fn resolved_key(data_file: &str, equality_deletes: &[String]) -> Key {
    Key::Resolved(key_parts(&[data_file], equality_deletes))
}

impl PositionDeleteCache {
    /// A cache holding at most `max_bytes` bytes of estimated memory (0 keeps nothing).
    pub fn new(max_bytes: u64) -> Self {
        Self {
            inner: Mutex::new(Inner {
                values: WeightedLru::new(max_bytes),
                hits: 0,
                misses: 0,
                evictions: 0,
            }),
            max_bytes,
        }
    }

    /// The budget in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The parsed Parquet position delete file read at `location` (after remapping), if
    /// cached.
    pub fn get_position_delete_file(&self, location: &str) -> Option<Arc<PositionDeleteFile>> {
        match self.get(Key::File(location.to_string()))? {
            Value::File(file) => Some(file),
            Value::Vector(_) | Value::Planned(_) => None,
        }
    }

    /// Keep the parsed position delete file read at `location` (after remapping),
    /// evicting the least recently used entries beyond the budget; not kept when larger
    /// than the whole budget.
    pub fn insert_position_delete_file(&self, location: &str, file: Arc<PositionDeleteFile>) {
        let bytes = file_bytes(location, &file);
        self.insert(Key::File(location.to_string()), Value::File(file), bytes);
    }

    /// The deletion vector stored in the Puffin file read at `location` (after
    /// remapping) at `offset` with `length` bytes, if cached.
    pub fn get_deletion_vector(
        &self,
        location: &str,
        offset: u64,
        length: u64,
    ) -> Option<Arc<RoaringTreemap>> {
        match self.get(Key::Vector(location.to_string(), offset, length))? {
            Value::Vector(positions) => Some(positions),
            Value::File(_) | Value::Planned(_) => None,
        }
    }

    /// Keep a deletion vector (as [`get_deletion_vector`](Self::get_deletion_vector)
    /// finds it), evicting as [`insert_position_delete_file`](Self::insert_position_delete_file).
    pub fn insert_deletion_vector(
        &self,
        location: &str,
        offset: u64,
        length: u64,
        positions: Arc<RoaringTreemap>,
    ) {
        let bytes = vector_bytes(location, &positions);
        let key = Key::Vector(location.to_string(), offset, length);
        self.insert(key, Value::Vector(positions), bytes);
    }

    /// The positions of the data file at `data_file` (read location) that the
    /// equality delete files at `equality_deletes` (read locations, in any order)
    /// delete, if a scan resolved and kept them.
    pub fn get_resolved_equality_deletes(
        &self,
        data_file: &str,
        equality_deletes: &[String],
    ) -> Option<Arc<RoaringTreemap>> {
        match self.get(resolved_key(data_file, equality_deletes))? {
            Value::Vector(positions) => Some(positions),
            Value::File(_) | Value::Planned(_) => None,
        }
    }

    /// Keep the positions that the equality delete files at `equality_deletes` delete in
    /// the data file at `data_file` (as
    /// [`get_resolved_equality_deletes`](Self::get_resolved_equality_deletes) finds
    /// them), evicting as [`insert_position_delete_file`](Self::insert_position_delete_file).
    pub fn insert_resolved_equality_deletes(
        &self,
        data_file: &str,
        equality_deletes: &[String],
        positions: Arc<RoaringTreemap>,
    ) {
        let key = resolved_key(data_file, equality_deletes);
        let bytes = ENTRY_OVERHEAD + key.name_bytes() + positions.serialized_size() as u64;
        self.insert(key, Value::Vector(positions), bytes);
    }

    /// The position deletes of the data file at `data_file` (read location) of
    /// `record_count` rows from the delete files keyed `delete_keys` (each delete
    /// file's read location, and for a deletion vector its offset and length; any
    /// order), as a scan planned them, if kept.
    pub fn get_planned(
        &self,
        data_file: &str,
        record_count: u64,
        delete_keys: &[String],
    ) -> Option<PositionDeletes> {
        match self.get(planned_key(data_file, record_count, delete_keys))? {
            Value::Planned(deletes) => Some(deletes),
            Value::File(_) | Value::Vector(_) => None,
        }
    }

    /// Keep a data file's planned position deletes (as
    /// [`get_planned`](Self::get_planned) finds them), evicting as
    /// [`insert_position_delete_file`](Self::insert_position_delete_file). Fragmented
    /// ones are counted with their live-row bits from the start (the first scan that
    /// applies them per batch builds them later; others are applied as row selections
    /// by default and build none).
    pub fn insert_planned(
        &self,
        data_file: &str,
        record_count: u64,
        delete_keys: &[String],
        deletes: PositionDeletes,
    ) {
        let key = planned_key(data_file, record_count, delete_keys);
        let bytes = ENTRY_OVERHEAD + key.name_bytes() + deletes.estimated_bytes(deletes.fragmented);
        self.insert(key, Value::Planned(deletes), bytes);
    }

    /// Hit and miss counts and current size.
    pub fn stats(&self) -> PositionDeleteCacheStats {
        self.inner
            .lock()
            .map(|i| PositionDeleteCacheStats {
                hits: i.hits,
                misses: i.misses,
                evictions: i.evictions,
                entries: i.values.len(),
                bytes: i.values.weight(),
            })
            .unwrap_or_default()
    }

    /// Drop every entry (the counts stay).
    pub fn clear(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.values.clear();
        }
    }

    fn get(&self, key: Key) -> Option<Value> {
        // a poisoned lock only loses the cache, never the load
        let mut inner = self.inner.lock().ok()?;
        let found = inner.values.get(&key);
        match found {
            Some(_) => inner.hits += 1,
            None => inner.misses += 1,
        }
        found
    }

    fn insert(&self, key: Key, value: Value, bytes: u64) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.evictions += inner.values.insert(key, value, bytes);
        }
    }
}

#[cfg(test)]
#[path = "position_delete_cache_tests.rs"]
mod tests;
