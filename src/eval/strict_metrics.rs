//! Whether every row of a file matches a row filter, by the file's column metrics alone
//! (Java: `StrictMetricsEvaluator`): what lets an overwrite by filter remove a file whole
//! without reading it.
//!
//! `true` means every row matches; `false` means some row may not (or the metrics cannot
//! tell). The rules, on the metrics of [`FileStats`] (spec "Manifests", `data_file`
//! fields 108–128):
//! - a file without rows: every row matches (there is none);
//! - `is_null`: every value is null (value count = null count); `not_null`: no nulls;
//!   `is_nan`: every value is NaN; `not_nan`: no NaNs and no nulls (a null is not
//!   `not_nan` in this crate's row semantics, where Java's evaluator counts it);
//! - `<`, `<=`, `>`, `>=`, `=`, `in`: no nulls, no NaNs (floating-point columns), and the
//!   bounds decide it: `upper < lit`, `upper <= lit`, `lower > lit`, `lower >= lit`,
//!   `lower = upper = lit`, and for `in` `lower = upper` among the values. Truncated string
//!   bounds stay safe: a truncated lower bound is at most the minimum and a truncated
//!   upper bound at least the maximum, and a truncated pair is never equal;
//! - `!=`, `not in`, `starts_with`, `not_starts_with`: not decided (`false`);
//! - `and` / `or` of the two sides; `not` is rewritten away first.
//!
//! Metrics that contradict themselves ([`metrics_inconsistency`]) decide nothing.

use std::cmp::Ordering;

use super::metrics::{metrics_inconsistency, FileStats};
use super::IN_PREDICATE_LIMIT;
use crate::error::Result;
use crate::expr::literal::is_nan;
use crate::expr::{
    compare, rewrite_not, visit, BinaryOp, BoundPredicate, BoundReference, PredicateVisitor, SetOp,
    UnaryOp,
};
use crate::spec::{Literal, PrimitiveType};

/// Every row of the file matches.
pub const ROWS_MUST_MATCH: bool = true;
/// Some row of the file may not match (or the metrics cannot tell).
pub const ROWS_MIGHT_NOT_MATCH: bool = false;

/// Evaluates whether every row of a file matches a row filter, by its metrics.
#[derive(Debug, Clone)]
pub struct StrictMetricsEvaluator {
    predicate: BoundPredicate,
}

impl StrictMetricsEvaluator {
    /// An evaluator for `predicate` (bound to the table schema).
    pub fn new(predicate: &BoundPredicate) -> Self {
        Self {
            predicate: rewrite_not(predicate.clone()),
        }
    }

    /// Whether every row of the file matches ([`ROWS_MUST_MATCH`]).
    pub fn eval(&self, stats: &dyn FileStats) -> Result<bool> {
        match stats.record_count() {
            0 => Ok(ROWS_MUST_MATCH),
            n if n < 0 => Ok(ROWS_MIGHT_NOT_MATCH),
            _ => visit(&self.predicate, &mut StrictVisitor { stats }),
        }
    }
}

struct StrictVisitor<'a> {
    stats: &'a dyn FileStats,
}

impl StrictVisitor<'_> {
    fn known(&self, t: &BoundReference) -> bool {
        metrics_inconsistency(self.stats, t.field_id, &t.field_type).is_none()
    }
    fn no_nulls(&self, id: i32) -> bool {
        self.stats.null_count(id) == Some(0)
    }
    fn nulls_only(&self, id: i32) -> bool {
        matches!((self.stats.value_count(id), self.stats.null_count(id)), (Some(v), Some(n)) if v == n)
    }
    fn no_nans(&self, t: &BoundReference) -> bool {
        !matches!(t.field_type, PrimitiveType::Float | PrimitiveType::Double)
            || self.stats.nan_count(t.field_id) == Some(0)
    }
    /// The bounds of a column with no nulls and no NaNs, each when known.
    fn bounds(&self, t: &BoundReference) -> Option<(Option<Literal>, Option<Literal>)> {
        if !self.no_nulls(t.field_id) || !self.no_nans(t) {
            return None;
        }
        let bound = |b: Option<Literal>| b.filter(|l| !is_nan(l));
        Some((
            bound(self.stats.lower_bound(t.field_id, &t.field_type)),
            bound(self.stats.upper_bound(t.field_id, &t.field_type)),
        ))
    }
    /// The single value of a column with no nulls or NaNs whose bounds are equal.
    fn single_value(&self, t: &BoundReference) -> Option<Literal> {
        let (lower, upper) = self.bounds(t)?;
        let (lower, upper) = (lower?, upper?);
        (compare(&lower, &upper) == Some(Ordering::Equal)).then_some(lower)
    }
}

impl PredicateVisitor<BoundReference> for StrictVisitor<'_> {
    type Output = bool;

    fn unary(&mut self, op: UnaryOp, t: &BoundReference) -> Result<bool> {
        if !self.known(t) {
            return Ok(ROWS_MIGHT_NOT_MATCH);
        }
        let id = t.field_id;
        Ok(match op {
            UnaryOp::IsNull => self.nulls_only(id),
            UnaryOp::NotNull => self.no_nulls(id),
            UnaryOp::IsNan => matches!(
                (self.stats.nan_count(id), self.stats.value_count(id)),
                (Some(n), Some(v)) if n == v
            ),
            // a null is not "not NaN" here (`crate::expr` row semantics), unlike Java
            UnaryOp::NotNan => self.stats.nan_count(id) == Some(0) && self.no_nulls(id),
        })
    }

    fn binary(&mut self, op: BinaryOp, t: &BoundReference, lit: &Literal) -> Result<bool> {
        if !self.known(t) {
            return Ok(ROWS_MIGHT_NOT_MATCH);
        }
        if op == BinaryOp::Eq {
            return Ok(self
                .single_value(t)
                .is_some_and(|v| compare(&v, lit) == Some(Ordering::Equal)));
        }
        let Some((lower, upper)) = self.bounds(t) else {
            return Ok(ROWS_MIGHT_NOT_MATCH);
        };
        let cmp = |b: Option<Literal>| b.and_then(|b| compare(&b, lit));
        Ok(match op {
            BinaryOp::Lt => cmp(upper) == Some(Ordering::Less),
            BinaryOp::LtEq => cmp(upper).is_some_and(|c| c != Ordering::Greater),
            BinaryOp::Gt => cmp(lower) == Some(Ordering::Greater),
            BinaryOp::GtEq => cmp(lower).is_some_and(|c| c != Ordering::Less),
            _ => ROWS_MIGHT_NOT_MATCH,
        })
    }

    fn set(&mut self, op: SetOp, t: &BoundReference, literals: &[Literal]) -> Result<bool> {
        if !self.known(t) || op != SetOp::In || literals.len() > IN_PREDICATE_LIMIT {
            return Ok(ROWS_MIGHT_NOT_MATCH);
        }
        Ok(self.single_value(t).is_some_and(|v| {
            literals
                .iter()
                .any(|l| compare(&v, l) == Some(Ordering::Equal))
        }))
    }
}
