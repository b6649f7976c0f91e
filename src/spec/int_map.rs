//! [`IntMap`]: the field id → value maps of a data file's metrics (spec: "Manifests",
//! `data_file` fields 108–110, 125, 128, 137: `map<int, long>` and `map<int, binary>`).
//!
//! A data file has metrics for a handful of columns, and a plan of a large table holds
//! one data file per planned file, so these maps are small and many. They are kept as a
//! vector of `(field id, value)` pairs sorted by field id: one allocation of exactly the
//! pairs, no hashing on insert or lookup (a binary search over a few keys), and
//! iteration in field-id order, which is the order writers and metadata tables want.
//!
//! The maps are optional in a manifest, and a writer may store one with no pairs: Iceberg
//! Java and PyIceberg store `nan_value_counts` as `{}` for a file without float columns,
//! and leave the maps out (null) for a deletion vector. Java's files tables show the two
//! apart (`{}` and null), so a map remembers whether it was written empty
//! ([`IntMap::is_written`]), and a manifest rewritten by icefloe keeps `{}` as `{}`.

use std::fmt;

/// A map from field id to `V`, kept sorted by field id (see the module docs). Inserting a
/// key that is present replaces its value, as a `HashMap` does.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IntMap<V> {
    pairs: Vec<(i32, V)>,
    /// The map has no pairs but is written (`{}`), as against left out (null); false
    /// whenever `pairs` is not empty, so that equal pairs make equal maps.
    written_empty: bool,
}

impl<V> Default for IntMap<V> {
    fn default() -> Self {
        Self {
            pairs: Vec::new(),
            written_empty: false,
        }
    }
}

impl<V> IntMap<V> {
    /// An empty map (no allocation), not written: a manifest stores it as null.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty map with room for `n` pairs.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            pairs: Vec::with_capacity(n),
            written_empty: false,
        }
    }

    /// `self` marked as written: when it has no pairs it stands for an empty map `{}`
    /// (what a manifest held, non-null), not for a map left out (null). Spec
    /// "Manifests": the metrics maps of `data_file` are optional.
    pub fn into_written(mut self) -> Self {
        self.written_empty = self.pairs.is_empty();
        self
    }

    /// Whether the map is written: it has pairs, or it is an empty map `{}` read from a
    /// manifest (or marked by [`IntMap::into_written`]). A map that is not written is
    /// null in a manifest and in the metadata tables (`value_counts` of `$files`), as in
    /// Iceberg Java.
    pub fn is_written(&self) -> bool {
        self.written_empty || !self.pairs.is_empty()
    }

    fn position(&self, key: i32) -> Result<usize, usize> {
        self.pairs.binary_search_by_key(&key, |(k, _)| *k)
    }

    /// Set `key` to `value`; the value it had before, if any. Appending keys in rising
    /// order (as manifests and writers produce them) costs one comparison each.
    pub fn insert(&mut self, key: i32, value: impl Into<V>) -> Option<V> {
        let value = value.into();
        self.written_empty = false;
        if self.pairs.last().is_none_or(|(last, _)| *last < key) {
            self.pairs.push((key, value));
            return None;
        }
        match self.position(key) {
            Ok(i) => Some(std::mem::replace(&mut self.pairs[i].1, value)),
            Err(i) => {
                self.pairs.insert(i, (key, value));
                None
            }
        }
    }

    /// A map of `pairs` in any order; of pairs with the same key the last wins (as
    /// inserting them one by one would). Pairs already in rising key order (as
    /// manifests written by Java, PyIceberg and icefloe mostly hold them) are kept as
    /// they are; others are sorted once (a stable sort, `O(n log n)`), so that a wide
    /// map in hash order does not cost a shift per insert.
    pub fn from_pairs(mut pairs: Vec<(i32, V)>) -> Self {
        if !pairs.windows(2).all(|w| w[0].0 < w[1].0) {
            pairs.sort_by_key(|(k, _)| *k);
            // of a run of equal keys keep one slot, holding the run's last value
            pairs.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    std::mem::swap(&mut later.1, &mut kept.1);
                    true
                } else {
                    false
                }
            });
        }
        Self {
            pairs,
            written_empty: false,
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &i32) -> Option<&V> {
        self.position(*key).ok().map(|i| &self.pairs[i].1)
    }

    /// Whether `key` has a value.
    pub fn contains_key(&self, key: &i32) -> bool {
        self.position(*key).is_ok()
    }

    /// Remove `key`; its value, if it had one.
    pub fn remove(&mut self, key: &i32) -> Option<V> {
        let i = self.position(*key).ok()?;
        let value = self.pairs.remove(i).1;
        // a written map stays written when its last pair goes
        self.written_empty = self.pairs.is_empty();
        Some(value)
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether the map has no keys.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Pairs the map has room for without reallocating (for memory estimates).
    pub fn capacity(&self) -> usize {
        self.pairs.capacity()
    }

    /// `(field id, value)` pairs in rising field-id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&i32, &V)> {
        self.pairs.iter().map(|(k, v)| (k, v))
    }

    /// The field ids, rising.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &i32> {
        self.pairs.iter().map(|(k, _)| k)
    }

    /// The values, in field-id order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &V> {
        self.pairs.iter().map(|(_, v)| v)
    }
}

impl<V> std::ops::Index<&i32> for IntMap<V> {
    type Output = V;

    /// The value of `key`; panics when absent, as `HashMap`'s index does (tests only:
    /// library code uses [`IntMap::get`]).
    fn index(&self, key: &i32) -> &V {
        match self.get(key) {
            Some(v) => v,
            None => panic!("field id {key} not in map"),
        }
    }
}

impl<V> FromIterator<(i32, V)> for IntMap<V> {
    fn from_iter<I: IntoIterator<Item = (i32, V)>>(iter: I) -> Self {
        Self::from_pairs(iter.into_iter().collect())
    }
}

impl<V, T: Into<V>, const N: usize> From<[(i32, T); N]> for IntMap<V> {
    fn from(pairs: [(i32, T); N]) -> Self {
        pairs.into_iter().map(|(k, v)| (k, v.into())).collect()
    }
}

impl<V> IntoIterator for IntMap<V> {
    type Item = (i32, V);
    type IntoIter = std::vec::IntoIter<(i32, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.pairs.into_iter()
    }
}

impl<V: fmt::Debug> fmt::Debug for IntMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_any_order_are_kept_sorted_and_found() {
        let mut m = IntMap::new();
        for k in [5, 1, 9, 3, 7] {
            assert_eq!(m.insert(k, i64::from(k) * 10), None);
        }
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![1, 3, 5, 7, 9]);
        for k in [1, 3, 5, 7, 9] {
            assert_eq!(m.get(&k), Some(&(i64::from(k) * 10)));
            assert!(m.contains_key(&k));
        }
        for k in [0, 2, 4, 6, 8, 10, -1] {
            assert_eq!(m.get(&k), None);
            assert!(!m.contains_key(&k));
        }
        assert_eq!(m.len(), 5);
    }

    #[test]
    fn a_map_written_empty_is_told_from_one_not_written() {
        let absent = IntMap::<i64>::new();
        assert!(!absent.is_written());
        let empty = IntMap::<i64>::new().into_written();
        assert!(empty.is_written() && empty.is_empty());
        assert_ne!(absent, empty);
        // pairs make it written, and equal pairs equal maps however they were made
        let mut m = IntMap::<i64>::new().into_written();
        m.insert(1, 5);
        assert_eq!(m, IntMap::<i64>::from([(1, 5)]));
        assert_eq!(
            IntMap::<i64>::from([(1, 5)]).into_written(),
            IntMap::<i64>::from([(1, 5)])
        );
        // losing its last pair leaves it written
        assert_eq!(m.remove(&1), Some(5));
        assert!(m.is_written());
    }

    #[test]
    fn inserting_a_present_key_replaces_its_value() {
        let mut m = IntMap::<&str>::from([(2, "b"), (4, "d")]);
        assert_eq!(m.insert(2, "B"), Some("b"));
        assert_eq!(m.insert(4, "D"), Some("d"));
        assert_eq!(m.len(), 2);
        assert_eq!(m[&2], "B");
        // a repeated key in the input keeps the last value, as a HashMap built from it does
        let m: IntMap<i64> = [(1, 10), (1, 11), (0, 5)].into_iter().collect();
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![(&0, &5), (&1, &11)]);
    }

    #[test]
    fn pairs_in_any_order_make_the_map_inserting_them_would() {
        let cases: Vec<Vec<(i32, i64)>> = vec![
            vec![],
            vec![(1, 10), (2, 20), (3, 30)],
            vec![(3, 30), (2, 20), (1, 10)],
            vec![(2, 20), (-5, 1), (2, 21), (7, 70), (-5, 2), (2, 22)],
            vec![(4, 1), (4, 2), (4, 3)],
            (0..200).rev().map(|k| (k % 37, i64::from(k))).collect(),
        ];
        for pairs in cases {
            let mut inserted = IntMap::new();
            for (k, v) in pairs.clone() {
                inserted.insert(k, v);
            }
            let built = IntMap::from_pairs(pairs.clone());
            assert_eq!(built, inserted, "{pairs:?}");
            assert!(built.keys().zip(built.keys().skip(1)).all(|(a, b)| a < b));
            let collected: IntMap<i64> = pairs.into_iter().collect();
            assert_eq!(collected, inserted);
        }
    }

    #[test]
    fn equality_does_not_depend_on_insertion_order() {
        let a: IntMap<Vec<u8>> = [(3, vec![3]), (1, vec![1])].into_iter().collect();
        let b: IntMap<Vec<u8>> = [(1, vec![1]), (3, vec![3])].into_iter().collect();
        assert_eq!(a, b);
        assert_ne!(a, IntMap::from([(1, vec![1])]));
        assert_ne!(a, IntMap::from([(1, vec![1]), (3, vec![4])]));
    }

    #[test]
    fn remove_and_debug() {
        let mut m = IntMap::<i64>::from([(1, 10), (2, 20)]);
        assert_eq!(m.remove(&1), Some(10));
        assert_eq!(m.remove(&1), None);
        assert_eq!(format!("{m:?}"), "{2: 20}");
        assert!(IntMap::<i64>::new().is_empty());
    }
}
