//! A bounded cache of decoded manifests and manifest lists, shared across the queries
//! of a session.
//!
//! Manifest files and manifest lists are immutable (spec: "Overview": every metadata
//! file is written once), so a decoded manifest can be reused by every later plan of any
//! snapshot that lists it. An [`IcebergTableProvider`](crate::IcebergTableProvider)
//! holds one cache for its lifetime (the session's registration of the table) and hands
//! it to each [`TableScan`](super::TableScan) it plans; re-opening a table starts a new
//! one, except through a catalog: an
//! [`IcebergCatalogProvider`](crate::datafusion::IcebergCatalogProvider) shares one cache
//! among the providers it loads for each statement ([`SessionCaches`] bundles it with the
//! position delete cache). Entries are keyed by the location actually read (after
//! remapping) and, for a manifest, the `first_row_id` its manifest list entry hands its
//! data files ([`manifest_key`]). The cache is bounded by the estimated bytes of the decoded entries it
//! holds ([`ManifestEntry::estimated_bytes`]; default [`DEFAULT_MAX_BYTES`], least
//! recently used manifest evicted first) and by [`MAX_MANIFEST_LISTS`] lists
//! (`crate::lru::WeightedLru` for both); one scan adds at most half the bound
//! ([`ManifestCache::scan_budget`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::lru::WeightedLru;
use crate::spec::ColumnStats;
use crate::spec::ManifestEntry;

/// Default bound: estimated bytes of decoded manifest entries held (512 MiB). An entry
/// with metrics for three columns is estimated at about 1.3 KiB decoded, so this holds
/// about 400,000 entries: the whole of a 2,000-manifest, 200,000-file table. One scan
/// adds at most half the bound ([`ManifestCache::scan_budget`]): a table whose manifests
/// do not fit keeps that much of them cached, and the rest is read again on each full
/// plan, without evicting what other queries cached.
pub const DEFAULT_MAX_BYTES: u64 = 512 << 20;

/// Decoded entries of one manifest.
pub type CachedManifest = Arc<Vec<Arc<ManifestEntry>>>;

#[derive(Debug)]
struct Inner {
    /// Manifests, weighed by the estimated bytes of their entries.
    manifests: WeightedLru<String, CachedManifest>,
    /// Manifest lists, one each.
    lists: WeightedLru<String, Arc<Vec<crate::spec::ManifestFile>>>,
    hits: u64,
    misses: u64,
}

/// A bounded LRU of decoded manifests keyed by location.
#[derive(Debug)]
pub struct ManifestCache {
    inner: Mutex<Inner>,
    /// The bound, estimated bytes.
    max_bytes: u64,
}

/// What one scan may still add to a [`ManifestCache`], in estimated bytes
/// ([`ManifestCache::scan_budget`]).
#[derive(Debug)]
pub struct InsertBudget(AtomicU64);

impl InsertBudget {
    /// Take `bytes` from the budget; `false` (nothing taken) when fewer are left.
    fn take(&self, bytes: u64) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes)
            })
            .is_ok()
    }
}

/// Hit and miss counts since the cache was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that were not.
    pub misses: u64,
    /// Manifests held now.
    pub manifests: usize,
    /// Their estimated size in bytes ([`ManifestEntry::estimated_bytes`]).
    pub bytes: u64,
}

impl ManifestCache {
    /// A cache holding decoded manifests of at most `max_bytes` estimated bytes in all
    /// (0 keeps no manifests).
    pub fn new(max_bytes: u64) -> Self {
        Self {
            inner: Mutex::new(Inner {
                manifests: WeightedLru::new(max_bytes),
                lists: WeightedLru::new(MAX_MANIFEST_LISTS as u64),
                hits: 0,
                misses: 0,
            }),
            max_bytes,
        }
    }

    /// What one scan may add: half the bound. A scan whose manifests do not fit (a full
    /// plan of a table of a million files) then keeps the first half-bound of them and
    /// reads the rest without caching them, instead of evicting every manifest cached
    /// before (the selective queries' too) for manifests that least recently used
    /// eviction would drop again before a repeated full scan reached them.
    pub fn scan_budget(&self) -> InsertBudget {
        InsertBudget(AtomicU64::new(self.max_bytes / 2))
    }

    /// [`Self::insert`] if `budget` has room for the manifest's estimated bytes (taken
    /// from it); whether it was inserted.
    pub fn insert_within(
        &self,
        location: &str,
        manifest: CachedManifest,
        budget: &InsertBudget,
    ) -> bool {
        if !budget.take(manifest_bytes(&manifest)) {
            return false;
        }
        self.insert(location, manifest);
        true
    }

    /// The decoded manifest at `location`, if cached.
    pub fn get(&self, location: &str) -> Option<CachedManifest> {
        let mut inner = self.inner.lock().ok()?;
        let found = inner.manifests.get(location);
        match found {
            Some(_) => inner.hits += 1,
            None => inner.misses += 1,
        }
        found
    }

    /// The decoded manifest at `location` read keeping at least the metrics `stats`
    /// selects: the one read keeping all metrics, else the one read keeping exactly
    /// those (one hit or miss counted).
    pub fn get_covering(&self, location: &str, stats: &ColumnStats) -> Option<CachedManifest> {
        let mut inner = self.inner.lock().ok()?;
        let mut found = inner.manifests.get(location);
        if found.is_none() && *stats != ColumnStats::All {
            found = inner.manifests.get(stats_key(location, stats).as_str());
        }
        match found {
            Some(_) => inner.hits += 1,
            None => inner.misses += 1,
        }
        found
    }

    /// Cache the decoded manifest at `location`, evicting the least recently used ones
    /// beyond the bound. A manifest larger than the whole bound is not cached.
    pub fn insert(&self, location: &str, manifest: CachedManifest) {
        let bytes = manifest_bytes(&manifest);
        if let Ok(mut inner) = self.inner.lock() {
            inner
                .manifests
                .insert(location.to_string(), manifest, bytes);
        }
    }

    /// Hit and miss counts and current size.
    pub fn stats(&self) -> CacheStats {
        self.inner
            .lock()
            .map(|i| CacheStats {
                hits: i.hits,
                misses: i.misses,
                manifests: i.manifests.len(),
                bytes: i.manifests.weight(),
            })
            .unwrap_or_default()
    }

    /// Drop every cached manifest.
    pub fn clear(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.manifests.clear();
            inner.lists.clear();
        }
    }
}

/// Bytes an `Arc` adds before its value (the strong and weak counts).
const ARC_HEADER_BYTES: u64 = 2 * std::mem::size_of::<usize>() as u64;

/// The estimated bytes of a decoded manifest: its entries
/// ([`ManifestEntry::estimated_bytes`]), their `Arc`s and the vector holding them.
fn manifest_bytes(manifest: &CachedManifest) -> u64 {
    manifest
        .iter()
        .map(|e| e.estimated_bytes() + ARC_HEADER_BYTES)
        .sum::<u64>()
        + (manifest.capacity() * std::mem::size_of::<Arc<ManifestEntry>>()) as u64
}

/// Parsed manifest lists held by a [`ManifestCache`] (lists are small next to their
/// manifests; the least recently used list is dropped beyond this count).
pub const MAX_MANIFEST_LISTS: usize = 64;

impl ManifestCache {
    fn get_list(&self, location: &str) -> Option<Arc<Vec<crate::spec::ManifestFile>>> {
        self.inner.lock().ok()?.lists.get(&location.to_string())
    }

    fn insert_list(&self, location: &str, list: Arc<Vec<crate::spec::ManifestFile>>) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.lists.insert(location.to_string(), list, 1);
        }
    }
}

/// The caches of immutable files a table provider shares with the other providers of a
/// session's catalog: decoded manifests and manifest lists ([`ManifestCache`]) and
/// decoded position deletes and deletion vectors
/// ([`PositionDeleteCache`](crate::delete::PositionDeleteCache)), and the data files that
/// passed the reader's checks ([`CheckedFiles`](super::checked_files::CheckedFiles)).
/// Cloning shares them.
/// The default makes new ones, each with its default bound.
#[derive(Debug, Clone, Default)]
pub struct SessionCaches {
    /// Decoded manifest lists and manifests.
    pub manifests: Arc<ManifestCache>,
    /// Decoded position delete files and deletion vectors.
    pub position_deletes: Arc<crate::delete::PositionDeleteCache>,
    /// Data files that passed the reader's per-file checks.
    pub checked_files: Arc<super::checked_files::CheckedFiles>,
}

/// `e`, a failure to find or open the manifest list of snapshot `snapshot_id` of
/// `table`, naming where the list is recorded (the metadata file and its field): the
/// location itself (missing, relative, of a scheme no store serves) may be what is wrong.
/// For every reader of a manifest list (scans, `DROP TABLE … PURGE`).
pub(crate) fn manifest_list_recorded(
    e: crate::error::Error,
    table: &crate::table::Table,
    snapshot_id: i64,
) -> crate::error::Error {
    e.context(format!(
        "manifest list recorded in table metadata '{}' (field 'manifest-list' of snapshot \
         {snapshot_id})",
        table.metadata_location()
    ))
}

/// Read the manifest list of snapshot `snapshot_id`, through `cache` when given (checked
/// against the snapshot first, see [`super::file_identity::check_manifest_list`]).
pub(super) async fn read_manifest_list_cached(
    table: &crate::table::Table,
    location: &str,
    snapshot_id: i64,
    cache: Option<&ManifestCache>,
) -> crate::error::Result<Arc<Vec<crate::spec::ManifestFile>>> {
    let recorded = |e| manifest_list_recorded(e, table, snapshot_id);
    let key = table.file_io().remap(location).map_err(recorded)?;
    if let Some(hit) = cache.and_then(|c| c.get_list(&key)) {
        return Ok(hit);
    }
    let bytes = table.file_io().read(location).await.map_err(recorded)?;
    let list = Arc::new(
        super::file_identity::check_manifest_list(&bytes, location, snapshot_id)
            .and_then(|()| crate::spec::manifest_list::parse_manifest_list(&bytes, location))
            .map_err(|e| crate::io::when_moved(e, "manifest list", table.file_io(), location))?,
    );
    if let Some(c) = cache {
        c.insert_list(&key, Arc::clone(&list));
    }
    Ok(list)
}

/// The cache key of `manifest` as a manifest list lists it, read at `location`: the
/// location, and the `first_row_id` the list hands the manifest's data files (spec:
/// "First Row ID Inheritance"), which the decoded entries carry. A manifest written
/// before an upgrade to v3 is listed without one by the snapshots before the upgrade and
/// with one after it (by different branches possibly with different ones).
/// The key of a manifest's entries read keeping `stats` ([`ColumnStats`]): the manifest's
/// own key for all metrics, with the kept field ids appended otherwise.
fn stats_key(key: &str, stats: &ColumnStats) -> String {
    match stats {
        ColumnStats::All => key.to_string(),
        ColumnStats::Only(ids) => format!("{key}\nstats={ids:?}"),
    }
}

fn manifest_key(location: String, manifest: &crate::spec::ManifestFile) -> String {
    match manifest.first_row_id {
        None => location,
        // a line break cannot end a location the metadata names
        Some(id) => format!("{location}\nfirst_row_id={id}"),
    }
}

/// Read one manifest (listed in the manifest list at `list`), through `cache` when given.
pub(super) async fn read_manifest_cached(
    table: &crate::table::Table,
    metadata: &crate::spec::TableMetadata,
    manifest: &crate::spec::ManifestFile,
    list: &str,
    cache: Option<(&ManifestCache, &InsertBudget)>,
    stats: &ColumnStats,
) -> crate::error::Result<CachedManifest> {
    let key = match cache {
        Some((c, budget)) => {
            let key = manifest_key(table.file_io().remap(&manifest.manifest_path)?, manifest);
            if let Some(hit) = c.get_covering(&key, stats) {
                return Ok(hit);
            }
            Some((c, budget, stats_key(&key, stats)))
        }
        None => None,
    };
    let entries = super::read_manifest_keeping(table, metadata, manifest, Some(list), stats)
        .await
        .map_err(|e| super::missing_from(e, format!("manifest listed in '{list}'")))?;
    let entries: CachedManifest = Arc::new(entries.into_iter().map(Arc::new).collect());
    if let Some((c, budget, key)) = key {
        c.insert_within(&key, Arc::clone(&entries), budget);
    }
    Ok(entries)
}

impl Default for ManifestCache {
    /// A cache bounded by [`DEFAULT_MAX_BYTES`].
    fn default() -> Self {
        Self::new(DEFAULT_MAX_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{DataContentType, Literal, ManifestStatus};
    use crate::write::empty_data_file;

    fn manifest(n: usize) -> CachedManifest {
        Arc::new(
            (0..n)
                .map(|i| {
                    Arc::new(ManifestEntry {
                        status: ManifestStatus::Added,
                        snapshot_id: 1,
                        data_sequence_number: 1,
                        file_sequence_number: 1,
                        spec_id: 0,
                        data_file: empty_data_file(&format!("f{i}"), DataContentType::Data),
                    })
                })
                .collect(),
        )
    }

    #[test]
    fn evicts_least_recently_used_beyond_the_bound_in_bytes() {
        let four = manifest_bytes(&manifest(4));
        // room for two manifests of 4 entries, not three
        let cache = ManifestCache::new(four * 5 / 2);
        cache.insert("a", manifest(4));
        cache.insert("b", manifest(4));
        assert!(cache.get("a").is_some()); // a is now more recent than b
        cache.insert("c", manifest(4)); // three do not fit: b goes
        assert!(cache.get("b").is_none());
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
        cache.insert("huge", manifest(11));
        assert!(cache.get("huge").is_none());
        let s = cache.stats();
        assert_eq!(
            (s.manifests, s.bytes, s.hits, s.misses),
            (2, 2 * four, 3, 2)
        );
    }

    /// A scan adds at most half the bound: what was cached before it stays.
    #[test]
    fn a_scan_adds_at_most_half_the_bound() {
        let four = manifest_bytes(&manifest(4));
        let cache = ManifestCache::new(four * 4);
        cache.insert("earlier", manifest(4));
        let budget = cache.scan_budget();
        let kept: Vec<bool> = ["a", "b", "c", "d"]
            .iter()
            .map(|name| cache.insert_within(name, manifest(4), &budget))
            .collect();
        assert_eq!(kept, [true, true, false, false]);
        for (name, cached) in [("earlier", true), ("a", true), ("b", true), ("c", false)] {
            assert_eq!(cache.get(name).is_some(), cached, "{name}");
        }
        // a smaller manifest still fits what is left of another scan's budget
        let budget = cache.scan_budget();
        assert!(cache.insert_within("e", manifest(4), &budget));
        assert!(cache.insert_within("f", manifest(3), &budget));
        assert!(!cache.insert_within("g", manifest(2), &budget));
    }

    #[test]
    fn an_entry_weighs_what_its_metrics_hold() {
        let plain = manifest(1)[0].as_ref().clone();
        let base = plain.estimated_bytes();
        assert!(base >= std::mem::size_of::<ManifestEntry>() as u64);
        let mut big = plain.clone();
        big.data_file.file_path = "p".repeat(1000);
        big.data_file.lower_bounds.insert(1, vec![0; 5000]);
        big.data_file.upper_bounds.insert(1, vec![0; 7000]);
        big.data_file.partition = vec![Some(Literal::String("s".repeat(300)))];
        assert!(big.estimated_bytes() >= base + 1000 + 5000 + 7000 + 300);
        // a manifest of wide entries fills the bound sooner than one of plain entries
        let cache = ManifestCache::new(manifest_bytes(&manifest(4)));
        let wide = (0..4).map(|_| Arc::new(big.clone())).collect();
        cache.insert("wide", Arc::new(wide));
        assert_eq!(cache.stats().manifests, 0);
        cache.insert("plain", manifest(4));
        assert_eq!(cache.stats().manifests, 1);
    }

    #[test]
    fn bounds_of_up_to_16_bytes_are_held_inline_and_longer_ones_weigh_their_bytes() {
        let plain = manifest(1)[0].as_ref().clone();
        let mut short = plain.clone();
        short.data_file.lower_bounds.insert(7, vec![1; 16]);
        assert!(!short.data_file.lower_bounds[&7].spilled());
        let mut long = plain.clone();
        long.data_file.lower_bounds.insert(7, vec![1; 17]);
        assert!(long.data_file.lower_bounds[&7].spilled());
        assert_eq!(long.data_file.lower_bounds[&7].as_slice(), &[1; 17][..]);
        // the two maps hold one pair each; only the long bound adds heap bytes
        assert_eq!(long.estimated_bytes(), short.estimated_bytes() + 17);
    }
}
