//! Evaluator case tables, re-expressed from Java's `TestInclusiveMetricsEvaluator`,
//! `TestInclusiveManifestEvaluator` and `TestMetricsEvaluatorsNaNHandling` (own values),
//! and the pruning soundness property test.

mod cases;
mod inconsistent;
mod soundness;

use std::collections::HashMap;

use crate::eval::FileStats;
use crate::spec::{Literal, PrimitiveType};
use crate::write::bounds::literal_to_bytes;

/// In-memory column statistics of one file, for the evaluator tests.
#[derive(Default, Clone)]
struct Stats {
    rows: i64,
    values: HashMap<i32, i64>,
    nulls: HashMap<i32, i64>,
    nans: HashMap<i32, i64>,
    lower: HashMap<i32, Literal>,
    upper: HashMap<i32, Literal>,
    /// Give bounds as a manifest would: serialized (the spec's single-value form) and
    /// read back as the asked type.
    through_bytes: bool,
}

impl Stats {
    fn bound(&self, l: &Literal, ty: &PrimitiveType) -> Option<Literal> {
        if self.through_bytes {
            Literal::from_bytes(&literal_to_bytes(l), ty).ok()
        } else {
            Some(l.clone())
        }
    }
}

impl FileStats for Stats {
    fn record_count(&self) -> i64 {
        self.rows
    }
    fn value_count(&self, id: i32) -> Option<i64> {
        self.values.get(&id).copied()
    }
    fn null_count(&self, id: i32) -> Option<i64> {
        self.nulls.get(&id).copied()
    }
    fn nan_count(&self, id: i32) -> Option<i64> {
        self.nans.get(&id).copied()
    }
    fn lower_bound(&self, id: i32, ty: &PrimitiveType) -> Option<Literal> {
        self.bound(self.lower.get(&id)?, ty)
    }
    fn upper_bound(&self, id: i32, ty: &PrimitiveType) -> Option<Literal> {
        self.bound(self.upper.get(&id)?, ty)
    }
}
