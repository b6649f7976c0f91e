//! A least-recently-used map bounded by the total weight of its values, the one eviction
//! policy of the session caches (decoded manifests, manifest lists, position deletes).
//!
//! Each value carries a weight in the unit of the cache's bound (manifest entries,
//! estimated bytes, or 1 per value for a count bound). Inserting beyond the bound evicts
//! the least recently used values (reads and inserts both count as use) until the total
//! fits; a value heavier than the whole bound is not kept. Lookups and evictions are
//! O(log n). Not synchronised: each cache holds one behind its own lock.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

#[derive(Debug)]
struct Slot<V> {
    value: V,
    weight: u64,
    /// The tick of its latest use (its key in `by_use`).
    used: u64,
}

/// A map of at most `max_weight` total weight, least recently used evicted first.
#[derive(Debug)]
pub(crate) struct WeightedLru<K, V> {
    map: HashMap<K, Slot<V>>,
    /// Tick of latest use → key, oldest first.
    by_use: BTreeMap<u64, K>,
    held: u64,
    tick: u64,
    max_weight: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> WeightedLru<K, V> {
    /// An empty map bounded by `max_weight` (0 keeps only weightless values).
    pub(crate) fn new(max_weight: u64) -> Self {
        Self {
            map: HashMap::new(),
            by_use: BTreeMap::new(),
            held: 0,
            tick: 0,
            max_weight,
        }
    }

    /// The value of `key` (any borrowed form of the key type, as `HashMap::get` takes),
    /// marked as just used.
    pub(crate) fn get<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.tick += 1;
        let tick = self.tick;
        let stored = self.map.get_key_value(key)?.0.clone();
        let slot = self.map.get_mut(key)?;
        let previous = std::mem::replace(&mut slot.used, tick);
        let value = slot.value.clone();
        self.by_use.remove(&previous);
        self.by_use.insert(tick, stored);
        Some(value)
    }

    /// Keep `value` of `weight` under `key` (replacing any value there), then evict the
    /// least recently used values while the total exceeds the bound. A value heavier
    /// than the bound is not kept (and evicts nothing). Returns how many were evicted.
    pub(crate) fn insert(&mut self, key: K, value: V, weight: u64) -> u64 {
        if weight > self.max_weight {
            return 0;
        }
        self.tick += 1;
        let used = self.tick;
        let slot = Slot {
            value,
            weight,
            used,
        };
        if let Some(old) = self.map.insert(key.clone(), slot) {
            self.by_use.remove(&old.used);
            self.held -= old.weight;
        }
        self.by_use.insert(used, key);
        self.held += weight;
        let mut evicted = 0;
        while self.held > self.max_weight {
            let Some((_, oldest)) = self.by_use.pop_first() else {
                break;
            };
            if let Some(old) = self.map.remove(&oldest) {
                self.held -= old.weight;
                evicted += 1;
            }
        }
        evicted
    }

    /// Values held.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Their total weight.
    pub(crate) fn weight(&self) -> u64 {
        self.held
    }

    /// Drop every value.
    pub(crate) fn clear(&mut self) {
        self.map.clear();
        self.by_use.clear();
        self.held = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_by_weight() {
        let mut lru = WeightedLru::new(10);
        assert_eq!(lru.insert("a", 1, 4), 0);
        assert_eq!(lru.insert("b", 2, 4), 0);
        // reading "a" makes "b" the oldest
        assert_eq!(lru.get(&"a"), Some(1));
        assert_eq!(lru.insert("c", 3, 4), 1);
        assert_eq!(lru.get(&"b"), None);
        assert_eq!((lru.len(), lru.weight()), (2, 8));
        // a heavy value evicts as many as it needs
        assert_eq!(lru.insert("d", 4, 9), 2);
        assert_eq!((lru.len(), lru.weight()), (1, 9));
        // replacing a key counts its new weight only
        assert_eq!(lru.insert("d", 5, 2), 0);
        assert_eq!((lru.get(&"d"), lru.weight()), (Some(5), 2));
    }

    #[test]
    fn a_value_heavier_than_the_bound_is_not_kept() {
        let mut lru = WeightedLru::new(5);
        lru.insert("a", 1, 3);
        assert_eq!(lru.insert("big", 2, 6), 0);
        assert_eq!((lru.get(&"big"), lru.get(&"a")), (None, Some(1)));
        lru.clear();
        assert_eq!((lru.len(), lru.weight()), (0, 0));
    }
}
