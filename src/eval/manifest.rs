//! Pruning manifests by their partition summaries (Java: `ManifestEvaluator`).
//!
//! The row filter is projected inclusively onto the manifest's own partition spec, then
//! evaluated against the manifest list's `partitions` field summaries (spec: "Manifest
//! Lists", `field_summary`): `contains_null`, `contains_nan` and the lower / upper
//! bounds of the non-null, non-NaN partition values. `false` means no file of the
//! manifest can hold a matching row (`ROWS_CANNOT_MATCH`).
//!
//! A missing bound is read as "every value is null or NaN" only when the summary says
//! the field holds nulls or NaNs; a summary without bounds that explains neither is
//! treated as unknown.

use super::projection::{BoundPartitionSpec, InclusiveProjection};
use super::{IN_PREDICATE_LIMIT, ROWS_CANNOT_MATCH, ROWS_MIGHT_MATCH};
use crate::error::Result;
use crate::expr::literal::is_nan;
use crate::expr::{
    compare, visit, BinaryOp, BoundPredicate, BoundReference, PredicateVisitor, SetOp, UnaryOp,
};
use crate::spec::{FieldSummary, Literal, ManifestFile, PrimitiveType};
use std::cmp::Ordering;

/// Evaluates manifests of one partition spec against a row filter.
#[derive(Debug, Clone)]
pub struct ManifestEvaluator {
    spec: BoundPartitionSpec,
    partition_filter: BoundPredicate,
}

impl ManifestEvaluator {
    /// An evaluator for manifests written with `spec`, for the row filter `predicate`
    /// (bound to the table schema).
    pub fn new(spec: BoundPartitionSpec, predicate: &BoundPredicate) -> Result<Self> {
        let partition_filter = InclusiveProjection::new(&spec).project(predicate)?;
        Ok(Self {
            spec,
            partition_filter,
        })
    }

    /// The filter projected onto the partition spec.
    pub fn partition_filter(&self) -> &BoundPredicate {
        &self.partition_filter
    }

    /// Whether files of `manifest` might hold matching rows (`false`: skip it).
    pub fn eval(&self, manifest: &ManifestFile) -> Result<bool> {
        let Some(summaries) = &manifest.partitions else {
            return Ok(ROWS_MIGHT_MATCH);
        };
        visit(
            &self.partition_filter,
            &mut SummaryVisitor {
                spec: &self.spec,
                summaries,
            },
        )
    }
}

struct SummaryVisitor<'a> {
    spec: &'a BoundPartitionSpec,
    summaries: &'a [FieldSummary],
}

/// Decoded view of one field summary.
struct Summary<'a> {
    raw: &'a FieldSummary,
    ty: PrimitiveType,
}

impl Summary<'_> {
    fn decode(&self, b: Option<&Vec<u8>>) -> Option<Literal> {
        b.and_then(|b| Literal::from_bytes(b, &self.ty).ok())
            .filter(|l| !is_nan(l))
    }
    fn lower(&self) -> Option<Literal> {
        self.decode(self.raw.lower_bound.as_ref())
    }
    fn upper(&self) -> Option<Literal> {
        self.decode(self.raw.upper_bound.as_ref())
    }
    fn is_float(&self) -> bool {
        matches!(self.ty, PrimitiveType::Float | PrimitiveType::Double)
    }
    /// Every value is null or NaN: no bounds, and the summary says why.
    fn no_comparable_values(&self) -> bool {
        self.raw.lower_bound.is_none()
            && (self.raw.contains_null || self.raw.contains_nan == Some(true))
    }
    /// Every value is null (Java `allValuesAreNull`).
    fn all_null(&self) -> bool {
        self.raw.contains_null
            && self.raw.lower_bound.is_none()
            && (!self.is_float() || self.raw.contains_nan == Some(false))
    }
    /// The one value of the field, when no value is null or NaN and lower == upper.
    fn unique_value(&self) -> Option<Literal> {
        if self.raw.contains_null || (self.is_float() && self.raw.contains_nan != Some(false)) {
            return None;
        }
        let (lower, upper) = (self.lower()?, self.upper()?);
        (compare(&lower, &upper) == Some(Ordering::Equal)).then_some(lower)
    }
}

impl SummaryVisitor<'_> {
    fn summary(&self, term: &BoundReference) -> Option<Summary<'_>> {
        let pos = self.spec.position(term.field_id)?;
        Some(Summary {
            raw: self.summaries.get(pos)?,
            ty: self.spec.field_type(pos)?,
        })
    }
}

fn cmp(a: &Literal, b: &Literal) -> Option<Ordering> {
    compare(a, b)
}

fn starts_with_bounds(lower: Option<&[u8]>, upper: Option<&[u8]>, prefix: &[u8]) -> bool {
    if let Some(lower) = lower {
        let n = prefix.len().min(lower.len());
        if &lower[..n] > prefix {
            return ROWS_CANNOT_MATCH;
        }
    }
    if let Some(upper) = upper {
        let n = prefix.len().min(upper.len());
        if &upper[..n] < prefix {
            return ROWS_CANNOT_MATCH;
        }
    }
    ROWS_MIGHT_MATCH
}

impl PredicateVisitor<BoundReference> for SummaryVisitor<'_> {
    type Output = bool;

    fn unary(&mut self, op: UnaryOp, term: &BoundReference) -> Result<bool> {
        let Some(s) = self.summary(term) else {
            return Ok(ROWS_MIGHT_MATCH);
        };
        Ok(match op {
            UnaryOp::IsNull => s.raw.contains_null,
            UnaryOp::NotNull => !s.all_null(),
            UnaryOp::IsNan => s.raw.contains_nan != Some(false) && !s.all_null(),
            UnaryOp::NotNan => {
                !(s.raw.contains_nan == Some(true)
                    && !s.raw.contains_null
                    && s.raw.lower_bound.is_none())
            }
        })
    }

    fn binary(&mut self, op: BinaryOp, term: &BoundReference, lit: &Literal) -> Result<bool> {
        let Some(s) = self.summary(term) else {
            return Ok(ROWS_MIGHT_MATCH);
        };
        let needs_value = !matches!(op, BinaryOp::NotEq | BinaryOp::NotStartsWith);
        if needs_value && s.no_comparable_values() {
            return Ok(ROWS_CANNOT_MATCH);
        }
        let (lower, upper) = (s.lower(), s.upper());
        let lower_cmp = lower.as_ref().and_then(|l| cmp(l, lit));
        let upper_cmp = upper.as_ref().and_then(|u| cmp(u, lit));
        Ok(match op {
            BinaryOp::Lt => lower_cmp.is_none_or(|c| c == Ordering::Less),
            BinaryOp::LtEq => lower_cmp.is_none_or(|c| c != Ordering::Greater),
            BinaryOp::Gt => upper_cmp.is_none_or(|c| c == Ordering::Greater),
            BinaryOp::GtEq => upper_cmp.is_none_or(|c| c != Ordering::Less),
            BinaryOp::Eq => {
                lower_cmp.is_none_or(|c| c != Ordering::Greater)
                    && upper_cmp.is_none_or(|c| c != Ordering::Less)
            }
            BinaryOp::NotEq => s
                .unique_value()
                .is_none_or(|v| cmp(&v, lit) != Some(Ordering::Equal)),
            BinaryOp::StartsWith => {
                let Literal::String(prefix) = lit else {
                    return Ok(ROWS_MIGHT_MATCH);
                };
                starts_with_bounds(
                    s.raw.lower_bound.as_deref(),
                    s.raw.upper_bound.as_deref(),
                    prefix.as_bytes(),
                )
            }
            BinaryOp::NotStartsWith => {
                let (Literal::String(prefix), Some(lower), Some(upper)) =
                    (lit, &s.raw.lower_bound, &s.raw.upper_bound)
                else {
                    return Ok(ROWS_MIGHT_MATCH);
                };
                let p = prefix.as_bytes();
                s.raw.contains_null || !(lower.starts_with(p) && upper.starts_with(p))
            }
        })
    }

    fn set(&mut self, op: SetOp, term: &BoundReference, literals: &[Literal]) -> Result<bool> {
        let Some(s) = self.summary(term) else {
            return Ok(ROWS_MIGHT_MATCH);
        };
        if op == SetOp::NotIn {
            return Ok(s
                .unique_value()
                .is_none_or(|v| !literals.iter().any(|l| cmp(&v, l) == Some(Ordering::Equal))));
        }
        if s.no_comparable_values() {
            return Ok(ROWS_CANNOT_MATCH);
        }
        if literals.len() > IN_PREDICATE_LIMIT {
            return Ok(ROWS_MIGHT_MATCH);
        }
        let (Some(lower), upper) = (s.lower(), s.upper()) else {
            return Ok(ROWS_MIGHT_MATCH);
        };
        Ok(literals.iter().any(|l| {
            cmp(&lower, l) != Some(Ordering::Greater)
                && upper
                    .as_ref()
                    .is_none_or(|u| cmp(u, l) != Some(Ordering::Less))
        }))
    }
}
