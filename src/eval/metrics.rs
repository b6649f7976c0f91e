//! Pruning files by their column metrics (Java: `InclusiveMetricsEvaluator` and
//! `InclusiveEvalVisitor`), written once against the [`FileStats`] accessor.
//!
//! Metrics (spec: "Manifests", `data_file` fields 108–128, 137): `value_counts` (values
//! incl. nulls and NaNs), `null_value_counts`, `nan_value_counts`, and `lower_bounds` /
//! `upper_bounds` over the non-null, non-NaN values. String and binary bounds may be
//! truncated (lower bound a prefix of the minimum; upper bound a prefix with its last
//! code point / byte incremented), which keeps them valid bounds; `starts_with` compares
//! only the prefix's length of each bound. Bounds written before a type promotion (int
//! under long, float under double) decode to the promoted type.
//!
//! Java's rules kept: a file with no rows cannot match; a column whose values are all
//! null or all NaN cannot match a comparison; a NaN bound is treated as unknown; `in`
//! with more than [`IN_PREDICATE_LIMIT`] values is not checked; `!=` / `not in` prune
//! only when the file holds a single non-null, non-NaN value equal to the literal.
//!
//! **Metrics that contradict themselves are unknown.** A column whose metrics in a file
//! cannot all be true ([`metrics_inconsistency`]: a lower bound above the upper bound, a
//! bound whose byte width or encoding is wrong for the type, more nulls or NaNs than
//! values, a negative count) is not pruned by at all for that file: every predicate on
//! it might match. Java prunes a live file on inverted bounds; a writer bug must not
//! lose rows, so here it only costs the pruning. Such files are counted
//! ([`MetricsVerdict::inconsistent`], `ScanMetrics::data_files_with_inconsistent_metrics`).

use std::cmp::Ordering;

use super::{IN_PREDICATE_LIMIT, ROWS_CANNOT_MATCH, ROWS_MIGHT_MATCH};
use crate::error::Result;
use crate::expr::literal::is_nan;
use crate::expr::{
    compare, rewrite_not, visit, BinaryOp, BoundPredicate, BoundReference, PredicateVisitor, SetOp,
    UnaryOp,
};
use crate::spec::{DataFile, Literal, PrimitiveType};

/// Column statistics of one file (or any other container of rows).
pub trait FileStats {
    /// Rows in the file.
    fn record_count(&self) -> i64;
    /// Values of the field, nulls and NaNs included; `None` if unknown.
    fn value_count(&self, field_id: i32) -> Option<i64>;
    /// Null values of the field; `None` if unknown.
    fn null_count(&self, field_id: i32) -> Option<i64>;
    /// NaN values of the field; `None` if unknown.
    fn nan_count(&self, field_id: i32) -> Option<i64>;
    /// Lower bound of the field's non-null, non-NaN values, as type `ty`.
    fn lower_bound(&self, field_id: i32, ty: &PrimitiveType) -> Option<Literal>;
    /// Upper bound of the field's non-null, non-NaN values, as type `ty`.
    fn upper_bound(&self, field_id: i32, ty: &PrimitiveType) -> Option<Literal>;
    /// Whether the field's stored bounds (those present) are well-formed values of `ty`:
    /// the type's byte width (or that of a type promotable to it), valid UTF-8 for
    /// strings. Stats that hold decoded values only keep the default, `true`.
    fn bounds_well_formed(&self, _field_id: i32, _ty: &PrimitiveType) -> bool {
        true
    }
}

/// Why the metrics of column `field_id` (of type `ty`) in a file contradict themselves,
/// or `None` when they can all be true. The spec ("Manifests", `data_file` fields
/// 109–110, 137, 125, 128) defines value counts as including nulls and NaNs and bounds
/// as a lower ≤ every non-null, non-NaN value ≤ an upper, in the single-value binary
/// form of the type (Appendix D), so any of these is a broken writer:
///
/// - a bound that is not a value of the type (wrong byte width, a string bound that is
///   not UTF-8);
/// - a negative value, null or NaN count;
/// - more nulls, more NaNs, or more nulls plus NaNs than values;
/// - a lower bound above the upper bound (NaN bounds, already unknown, are not compared).
///
/// Callers treat all of that column's metrics in that file as unknown.
pub fn metrics_inconsistency(
    stats: &dyn FileStats,
    field_id: i32,
    ty: &PrimitiveType,
) -> Option<&'static str> {
    if !stats.bounds_well_formed(field_id, ty) {
        return Some("a bound is not a value of the column's type");
    }
    let (values, nulls, nans) = (
        stats.value_count(field_id),
        stats.null_count(field_id),
        stats.nan_count(field_id),
    );
    if [values, nulls, nans].iter().flatten().any(|n| *n < 0) {
        return Some("a negative count");
    }
    if let Some(values) = values {
        let nulls = nulls.unwrap_or(0);
        let nans = nans.unwrap_or(0);
        if nulls > values || nans > values || nulls.saturating_add(nans) > values {
            return Some("more nulls or NaNs than values");
        }
    }
    let lower = stats.lower_bound(field_id, ty).filter(|l| !is_nan(l));
    let upper = stats.upper_bound(field_id, ty).filter(|u| !is_nan(u));
    if let (Some(l), Some(u)) = (lower, upper) {
        if compare(&l, &u) == Some(Ordering::Greater) {
            return Some("the lower bound is above the upper bound");
        }
    }
    None
}

/// Whether `bytes` is a well-formed stored bound of type `ty` (spec Appendix D, with the
/// narrower forms written before a promotion: int under long, float under double, date
/// under timestamp).
fn bound_well_formed(bytes: &[u8], ty: &PrimitiveType) -> bool {
    match ty {
        PrimitiveType::Boolean => bytes.len() == 1,
        // truncated like binary by writers, never longer than the type
        PrimitiveType::Fixed(n) => bytes.len() as u64 <= *n,
        _ => Literal::from_bytes(bytes, ty).is_ok(),
    }
}

impl FileStats for DataFile {
    fn record_count(&self) -> i64 {
        self.record_count
    }
    fn value_count(&self, field_id: i32) -> Option<i64> {
        self.value_counts.get(&field_id).copied()
    }
    fn null_count(&self, field_id: i32) -> Option<i64> {
        self.null_value_counts.get(&field_id).copied()
    }
    fn nan_count(&self, field_id: i32) -> Option<i64> {
        self.nan_value_counts.get(&field_id).copied()
    }
    fn lower_bound(&self, field_id: i32, ty: &PrimitiveType) -> Option<Literal> {
        let bytes = self.lower_bounds.get(&field_id)?;
        Literal::from_bytes(bytes, ty).ok()
    }
    fn upper_bound(&self, field_id: i32, ty: &PrimitiveType) -> Option<Literal> {
        let bytes = self.upper_bounds.get(&field_id)?;
        Literal::from_bytes(bytes, ty).ok()
    }
    fn bounds_well_formed(&self, field_id: i32, ty: &PrimitiveType) -> bool {
        [&self.lower_bounds, &self.upper_bounds]
            .iter()
            .filter_map(|bounds| bounds.get(&field_id))
            .all(|bytes| bound_well_formed(bytes, ty))
    }
}

/// What the metrics say about one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsVerdict {
    /// Whether the file might hold a matching row (`false`: skip it).
    pub might_match: bool,
    /// Whether the metrics of a column the filter looked at contradicted themselves (and
    /// were therefore not used).
    pub inconsistent: bool,
}

/// Evaluates files' metrics against a row filter.
#[derive(Debug, Clone)]
pub struct InclusiveMetricsEvaluator {
    predicate: BoundPredicate,
}

impl InclusiveMetricsEvaluator {
    /// An evaluator for `predicate` (bound to the table schema).
    pub fn new(predicate: &BoundPredicate) -> Self {
        Self {
            predicate: rewrite_not(predicate.clone()),
        }
    }

    /// Whether the file might hold a matching row (`false`: skip it).
    pub fn eval(&self, stats: &dyn FileStats) -> Result<bool> {
        Ok(self.verdict(stats)?.might_match)
    }

    /// Whether the file might hold a matching row, and whether a column's metrics were
    /// ignored because they contradict themselves ([`metrics_inconsistency`]).
    pub fn verdict(&self, stats: &dyn FileStats) -> Result<MetricsVerdict> {
        let rows = stats.record_count();
        let might_match = |might_match| MetricsVerdict {
            might_match,
            inconsistent: false,
        };
        if rows == 0 {
            return Ok(might_match(ROWS_CANNOT_MATCH));
        }
        if rows < 0 {
            return Ok(might_match(ROWS_MIGHT_MATCH));
        }
        let mut visitor = MetricsVisitor {
            stats,
            inconsistent: false,
        };
        let result = visit(&self.predicate, &mut visitor)?;
        Ok(MetricsVerdict {
            might_match: result,
            inconsistent: visitor.inconsistent,
        })
    }
}

struct MetricsVisitor<'a> {
    stats: &'a dyn FileStats,
    /// Set when a column's metrics were found to contradict themselves.
    inconsistent: bool,
}

impl MetricsVisitor<'_> {
    /// Whether the column's metrics contradict themselves in this file (and so say
    /// nothing); records it.
    fn unknown(&mut self, t: &BoundReference) -> bool {
        let bad = metrics_inconsistency(self.stats, t.field_id, &t.field_type).is_some();
        self.inconsistent |= bad;
        bad
    }
    fn may_contain_null(&self, id: i32) -> bool {
        self.stats.null_count(id).is_none_or(|n| n != 0)
    }
    fn contains_nulls_only(&self, id: i32) -> bool {
        matches!((self.stats.value_count(id), self.stats.null_count(id)), (Some(v), Some(n)) if v == n)
    }
    /// Whether the column may hold NaN. Without a NaN count (some writers omit it), the
    /// bounds still prove there is none when they account for every non-null value: one
    /// value and a bound, or two values and two different bounds.
    fn may_contain_nan(&self, t: &BoundReference) -> bool {
        let id = t.field_id;
        if let Some(n) = self.stats.nan_count(id) {
            return n != 0;
        }
        let (Some(values), Some(nulls)) = (self.stats.value_count(id), self.stats.null_count(id))
        else {
            return true;
        };
        let (lower, upper) = (self.lower(t), self.upper(t));
        let known = match (&lower, &upper) {
            (Some(l), Some(u)) if compare(l, u) != Some(Ordering::Equal) => 2,
            (None, None) => 0,
            _ => 1,
        };
        values - nulls > known
    }
    fn contains_nans_only(&self, id: i32) -> bool {
        matches!((self.stats.nan_count(id), self.stats.value_count(id)), (Some(n), Some(v)) if n == v)
    }
    fn lower(&self, t: &BoundReference) -> Option<Literal> {
        self.stats
            .lower_bound(t.field_id, &t.field_type)
            .filter(|l| !is_nan(l))
    }
    fn upper(&self, t: &BoundReference) -> Option<Literal> {
        self.stats
            .upper_bound(t.field_id, &t.field_type)
            .filter(|l| !is_nan(l))
    }
    /// The single value of the column, when it has no nulls or NaNs and lower == upper.
    fn unique_value(&self, t: &BoundReference) -> Option<Literal> {
        let id = t.field_id;
        let is_float = matches!(t.field_type, PrimitiveType::Float | PrimitiveType::Double);
        if self.may_contain_null(id) || (is_float && self.may_contain_nan(t)) {
            return None;
        }
        let (lower, upper) = (self.lower(t)?, self.upper(t)?);
        (compare(&lower, &upper) == Some(Ordering::Equal)).then_some(lower)
    }
    fn raw_bound(&self, t: &BoundReference, upper: bool) -> Option<Vec<u8>> {
        let b = if upper {
            self.stats.upper_bound(t.field_id, &t.field_type)
        } else {
            self.stats.lower_bound(t.field_id, &t.field_type)
        };
        match b? {
            Literal::String(s) => Some(s.into_bytes()),
            _ => None,
        }
    }
}

impl PredicateVisitor<BoundReference> for MetricsVisitor<'_> {
    type Output = bool;

    fn unary(&mut self, op: UnaryOp, t: &BoundReference) -> Result<bool> {
        if self.unknown(t) {
            return Ok(ROWS_MIGHT_MATCH);
        }
        let id = t.field_id;
        Ok(match op {
            UnaryOp::IsNull => self.may_contain_null(id),
            UnaryOp::NotNull => !self.contains_nulls_only(id),
            UnaryOp::IsNan => !self.contains_nulls_only(id) && self.may_contain_nan(t),
            UnaryOp::NotNan => !self.contains_nans_only(id),
        })
    }

    fn binary(&mut self, op: BinaryOp, t: &BoundReference, lit: &Literal) -> Result<bool> {
        if self.unknown(t) {
            return Ok(ROWS_MIGHT_MATCH);
        }
        let id = t.field_id;
        match op {
            BinaryOp::NotEq => {
                return Ok(self
                    .unique_value(t)
                    .is_none_or(|v| compare(&v, lit) != Some(Ordering::Equal)))
            }
            BinaryOp::NotStartsWith => return Ok(self.not_starts_with(t, lit)),
            BinaryOp::StartsWith => {
                if self.contains_nulls_only(id) {
                    return Ok(ROWS_CANNOT_MATCH);
                }
                let Literal::String(prefix) = lit else {
                    return Ok(ROWS_MIGHT_MATCH);
                };
                let p = prefix.as_bytes();
                if let Some(lower) = self.raw_bound(t, false) {
                    if &lower[..p.len().min(lower.len())] > p {
                        return Ok(ROWS_CANNOT_MATCH);
                    }
                }
                if let Some(upper) = self.raw_bound(t, true) {
                    if &upper[..p.len().min(upper.len())] < p {
                        return Ok(ROWS_CANNOT_MATCH);
                    }
                }
                return Ok(ROWS_MIGHT_MATCH);
            }
            _ => {}
        }
        if self.contains_nulls_only(id) || self.contains_nans_only(id) {
            return Ok(ROWS_CANNOT_MATCH);
        }
        let lower_cmp = || self.lower(t).and_then(|l| compare(&l, lit));
        let upper_cmp = || self.upper(t).and_then(|u| compare(&u, lit));
        Ok(match op {
            BinaryOp::Lt => lower_cmp().is_none_or(|c| c == Ordering::Less),
            BinaryOp::LtEq => lower_cmp().is_none_or(|c| c != Ordering::Greater),
            BinaryOp::Gt => upper_cmp().is_none_or(|c| c == Ordering::Greater),
            BinaryOp::GtEq => upper_cmp().is_none_or(|c| c != Ordering::Less),
            BinaryOp::Eq => {
                lower_cmp().is_none_or(|c| c != Ordering::Greater)
                    && upper_cmp().is_none_or(|c| c != Ordering::Less)
            }
            _ => ROWS_MIGHT_MATCH,
        })
    }

    fn set(&mut self, op: SetOp, t: &BoundReference, literals: &[Literal]) -> Result<bool> {
        if self.unknown(t) {
            return Ok(ROWS_MIGHT_MATCH);
        }
        let id = t.field_id;
        if op == SetOp::NotIn {
            return Ok(self.unique_value(t).is_none_or(|v| {
                !literals
                    .iter()
                    .any(|l| compare(&v, l) == Some(Ordering::Equal))
            }));
        }
        if self.contains_nulls_only(id) || self.contains_nans_only(id) {
            return Ok(ROWS_CANNOT_MATCH);
        }
        if literals.len() > IN_PREDICATE_LIMIT {
            return Ok(ROWS_MIGHT_MATCH);
        }
        let Some(lower) = self.lower(t) else {
            return Ok(ROWS_MIGHT_MATCH);
        };
        let upper = self.upper(t);
        Ok(literals.iter().any(|l| {
            compare(&lower, l) != Some(Ordering::Greater)
                && upper
                    .as_ref()
                    .is_none_or(|u| compare(u, l) != Some(Ordering::Less))
        }))
    }
}

impl MetricsVisitor<'_> {
    fn not_starts_with(&self, t: &BoundReference, lit: &Literal) -> bool {
        if self.may_contain_null(t.field_id) {
            return ROWS_MIGHT_MATCH;
        }
        let (Literal::String(prefix), Some(lower), Some(upper)) =
            (lit, self.raw_bound(t, false), self.raw_bound(t, true))
        else {
            return ROWS_MIGHT_MATCH;
        };
        // every value lies between two strings that both start with the prefix
        let p = prefix.as_bytes();
        !(lower.starts_with(p) && upper.starts_with(p))
    }
}
