//! [`ColumnStats`]: which columns' metrics a read of a manifest keeps on its data files.
//!
//! A data file's metrics (spec: "Manifests", `data_file` fields 108 `column_sizes`, 109
//! `value_counts`, 110 `null_value_counts`, 137 `nan_value_counts`, 125 `lower_bounds`,
//! 128 `upper_bounds`) are kept per column, keyed by field id, and are most of a decoded
//! entry's memory. A plan that needs the metrics of a few columns (those its filter
//! prunes by, those a query reads statistics of) keeps only theirs, as Iceberg Java's
//! scans do (`Scan.includeColumnStats`, `ContentFile.copyWithStats`). Delete files always
//! keep all of theirs: the delete planner matches them to data files by their bounds.

use std::sync::Arc;

/// The columns whose metrics are kept, by field id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum ColumnStats {
    /// Every column's metrics (what the manifest holds).
    #[default]
    All,
    /// Only these field ids' metrics (sorted, no repeats; empty: none).
    Only(Arc<[i32]>),
}

impl ColumnStats {
    /// No column's metrics.
    pub fn none() -> Self {
        ColumnStats::Only(Arc::from([]))
    }

    /// The metrics of `ids` (any order, repeats ignored).
    pub fn only(ids: impl IntoIterator<Item = i32>) -> Self {
        let mut ids: Vec<i32> = ids.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        ColumnStats::Only(ids.into())
    }

    /// Whether the metrics of field `id` are kept.
    pub fn keeps(&self, id: i32) -> bool {
        match self {
            ColumnStats::All => true,
            ColumnStats::Only(ids) => ids.binary_search(&id).is_ok(),
        }
    }

    /// Whether no column's metrics are kept.
    pub fn keeps_none(&self) -> bool {
        matches!(self, ColumnStats::Only(ids) if ids.is_empty())
    }

    /// The metrics either keeps.
    pub fn union(&self, other: &ColumnStats) -> ColumnStats {
        match (self, other) {
            (ColumnStats::Only(a), ColumnStats::Only(b)) => {
                ColumnStats::only(a.iter().chain(b.iter()).copied())
            }
            _ => ColumnStats::All,
        }
    }

    /// Whether every metric `other` keeps is kept here (so entries read keeping `self`
    /// serve a read that asks for `other`).
    pub fn covers(&self, other: &ColumnStats) -> bool {
        match (self, other) {
            (ColumnStats::All, _) => true,
            (ColumnStats::Only(_), ColumnStats::All) => false,
            (ColumnStats::Only(_), ColumnStats::Only(ids)) => ids.iter().all(|id| self.keeps(*id)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_covers_and_unions_by_field_id() {
        let some = ColumnStats::only([3, 1, 3]);
        assert_eq!(some, ColumnStats::Only(Arc::from([1, 3])));
        assert!(some.keeps(1) && some.keeps(3) && !some.keeps(2));
        assert!(ColumnStats::All.keeps(2) && !ColumnStats::none().keeps(2));
        assert!(ColumnStats::none().keeps_none() && !some.keeps_none());
        assert!(!ColumnStats::All.keeps_none());
        assert!(some.covers(&ColumnStats::only([3])) && some.covers(&ColumnStats::none()));
        assert!(!some.covers(&ColumnStats::only([2, 3])) && !some.covers(&ColumnStats::All));
        assert!(ColumnStats::All.covers(&some));
        assert_eq!(
            some.union(&ColumnStats::only([2])),
            ColumnStats::only([1, 2, 3])
        );
        assert_eq!(some.union(&ColumnStats::All), ColumnStats::All);
    }
}
