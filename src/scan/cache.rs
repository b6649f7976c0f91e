//! A bounded, process-wide cache of decoded manifests, shared across queries.
//!
//! Manifest files are immutable (spec: "Overview", every metadata file is written once),
//! so a decoded manifest can be reused by every later plan of any snapshot that lists
//! it. Entries are keyed by the location actually read (after remapping), so two copies
//! of a table whose manifests carry the same stored path do not share entries. The cache
//! is bounded by the number of manifest entries it holds (default
//! [`DEFAULT_MAX_ENTRIES`]); the least recently used manifests are evicted first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::spec::ManifestEntry;

/// Default bound: manifest entries held (≈ 1 KiB each with column metrics).
pub const DEFAULT_MAX_ENTRIES: usize = 500_000;

/// Decoded entries of one manifest.
pub type CachedManifest = Arc<Vec<Arc<ManifestEntry>>>;

#[derive(Debug, Default)]
struct Inner {
    map: HashMap<String, (CachedManifest, u64)>,
    held: usize,
    tick: u64,
    hits: u64,
    misses: u64,
}

/// A bounded LRU of decoded manifests keyed by location.
#[derive(Debug)]
pub struct ManifestCache {
    inner: Mutex<Inner>,
    max_entries: usize,
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
    /// Manifest entries held now.
    pub entries: usize,
}

impl ManifestCache {
    /// A cache holding at most `max_entries` manifest entries (0 disables caching).
    pub fn new(max_entries: usize) -> Self {
        Self {
            inner: Mutex::default(),
            max_entries,
        }
    }

    /// The process-wide cache (bound from `ICEFLOE_MANIFEST_CACHE_ENTRIES` when set,
    /// else [`DEFAULT_MAX_ENTRIES`]).
    pub fn global() -> &'static ManifestCache {
        static CACHE: OnceLock<ManifestCache> = OnceLock::new();
        CACHE.get_or_init(|| {
            let max = std::env::var("ICEFLOE_MANIFEST_CACHE_ENTRIES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_MAX_ENTRIES);
            ManifestCache::new(max)
        })
    }

    /// The decoded manifest at `location`, if cached.
    pub fn get(&self, location: &str) -> Option<CachedManifest> {
        let mut inner = self.inner.lock().ok()?;
        inner.tick += 1;
        let tick = inner.tick;
        match inner.map.get_mut(location) {
            Some((m, used)) => {
                *used = tick;
                let m = Arc::clone(m);
                inner.hits += 1;
                Some(m)
            }
            None => {
                inner.misses += 1;
                None
            }
        }
    }

    /// Cache the decoded manifest at `location`, evicting the least recently used ones
    /// beyond the bound. A manifest larger than the whole bound is not cached.
    pub fn insert(&self, location: &str, manifest: CachedManifest) {
        if manifest.len() > self.max_entries {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.tick += 1;
        let tick = inner.tick;
        let added = manifest.len();
        if let Some((old, _)) = inner.map.insert(location.to_string(), (manifest, tick)) {
            inner.held -= old.len();
        }
        inner.held += added;
        while inner.held > self.max_entries {
            let Some(oldest) = inner
                .map
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((m, _)) = inner.map.remove(&oldest) {
                inner.held -= m.len();
            }
        }
    }

    /// Hit and miss counts and current size.
    pub fn stats(&self) -> CacheStats {
        self.inner
            .lock()
            .map(|i| CacheStats {
                hits: i.hits,
                misses: i.misses,
                manifests: i.map.len(),
                entries: i.held,
            })
            .unwrap_or_default()
    }

    /// Drop every cached manifest.
    pub fn clear(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.map.clear();
            inner.held = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{DataContentType, ManifestStatus};
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
    fn evicts_least_recently_used_beyond_the_bound() {
        let cache = ManifestCache::new(10);
        cache.insert("a", manifest(4));
        cache.insert("b", manifest(4));
        assert!(cache.get("a").is_some()); // a is now more recent than b
        cache.insert("c", manifest(4)); // 12 > 10: b goes
        assert!(cache.get("b").is_none());
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
        cache.insert("huge", manifest(11));
        assert!(cache.get("huge").is_none());
        let s = cache.stats();
        assert_eq!((s.manifests, s.entries, s.hits, s.misses), (2, 8, 3, 2));
    }
}

/// Read one manifest through the process-wide cache, keyed by the location read.
pub(super) async fn read_manifest_cached(
    table: &crate::table::Table,
    metadata: &crate::spec::TableMetadata,
    manifest: &crate::spec::ManifestFile,
) -> crate::error::Result<CachedManifest> {
    let cache = ManifestCache::global();
    let key = table.file_io().remap(&manifest.manifest_path)?;
    if let Some(hit) = cache.get(&key) {
        return Ok(hit);
    }
    let entries = super::read_manifest(table, metadata, manifest).await?;
    let entries: CachedManifest = Arc::new(entries.into_iter().map(Arc::new).collect());
    cache.insert(&key, Arc::clone(&entries));
    Ok(entries)
}
