//! Projecting a predicate on a source column to a predicate on a partition field
//! (Java: `Transform.project` / `projectStrict`, `ProjectionUtil`).
//!
//! * **Inclusive**: `P'(t(x))` holds whenever `P(x)` holds; partitions where `P'` is false
//!   hold no matching row. `None` means "no useful projection" (treat as true).
//! * **Strict**: `P'(t(x))` implies `P(x)`; partitions where `P'` is true hold only
//!   matching rows. `None` means "no projection" (treat as false).
//!
//! Order-preserving transforms (truncate, year/month/day/hour) turn ranges into closed
//! ranges on the partition value; `bucket` keeps only `=`/`in` (inclusive) and
//! `!=`/`not in` (strict). `starts_with` / `not_starts_with` go through `truncate[W]` on
//! strings by comparing the prefix length in code points with W. Temporal projections
//! also match the partition values written by Iceberg ≤ 0.10 for pre-1970 values (one
//! larger than correct), as Java's `fixInclusiveTimeProjection` does.

use super::apply;
use crate::error::Result;
use crate::expr::literal::literal_eq;
use crate::expr::{BinaryOp, BoundPredicate, BoundReference, Predicate, SetOp, UnaryOp};
use crate::spec::{Literal, Transform};

/// Inclusive projection of a leaf `predicate` (bound to the source column) through
/// `transform` onto the partition field `partition`.
pub fn project_inclusive(
    transform: &Transform,
    partition: &BoundReference,
    predicate: &BoundPredicate,
) -> Result<Option<BoundPredicate>> {
    Ok(project(transform, partition, predicate, false))
}

/// Strict projection of a leaf `predicate` through `transform` onto `partition`.
pub fn project_strict(
    transform: &Transform,
    partition: &BoundReference,
    predicate: &BoundPredicate,
) -> Result<Option<BoundPredicate>> {
    Ok(project(transform, partition, predicate, true))
}

fn project(
    transform: &Transform,
    part: &BoundReference,
    predicate: &BoundPredicate,
    strict: bool,
) -> Option<BoundPredicate> {
    let p = part.clone();
    match (transform, predicate) {
        (Transform::Void | Transform::Unknown(_), _) => None,
        (_, _) if part.field_type == crate::spec::PrimitiveType::Unknown => None,
        (Transform::Identity, Predicate::Unary { op, .. }) => Some(Predicate::unary(*op, p)),
        (Transform::Identity, Predicate::Binary { op, literal, .. }) => {
            Some(Predicate::binary(*op, p, literal.clone()))
        }
        (Transform::Identity, Predicate::Set { op, literals, .. }) => {
            Some(Predicate::set(*op, p, literals.clone()))
        }
        // every transform maps null to null and non-null to non-null
        (
            _,
            Predicate::Unary {
                op: op @ (UnaryOp::IsNull | UnaryOp::NotNull),
                ..
            },
        ) => Some(Predicate::unary(*op, p)),
        (_, Predicate::Unary { .. }) => None,
        (Transform::Bucket(_), Predicate::Binary { op, literal, .. }) => match (op, strict) {
            (BinaryOp::Eq, false) | (BinaryOp::NotEq, true) => {
                Some(Predicate::binary(*op, p, apply(transform, literal).ok()??))
            }
            _ => None,
        },
        (_, Predicate::Set { op, literals, .. }) => {
            let wanted = if strict { SetOp::NotIn } else { SetOp::In };
            if *op != wanted {
                return None;
            }
            let values = apply_all(transform, literals)?;
            let projected = set_or_single(*op, p, values);
            if is_temporal(transform) {
                fix_time_projection(projected, strict)
            } else {
                Some(projected)
            }
        }
        (Transform::Truncate(w), Predicate::Binary { op, literal, .. }) => match literal {
            Literal::String(_) | Literal::Binary(_) => {
                truncate_array(transform, *w as usize, p, *op, literal, strict)
            }
            _ => ordered(transform, p, *op, literal, strict),
        },
        (_, Predicate::Binary { op, literal, .. }) if is_temporal(transform) => {
            fix_time_projection(ordered(transform, p, *op, literal, strict)?, strict)
        }
        _ => None,
    }
}

fn is_temporal(t: &Transform) -> bool {
    matches!(
        t,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour
    )
}

fn apply_all(transform: &Transform, literals: &[Literal]) -> Option<Vec<Literal>> {
    let mut out: Vec<Literal> = vec![];
    for l in literals {
        let v = apply(transform, l).ok()??;
        if !out.iter().any(|o| literal_eq(o, &v)) {
            out.push(v);
        }
    }
    Some(out)
}

fn set_or_single(op: SetOp, term: BoundReference, mut values: Vec<Literal>) -> BoundPredicate {
    if values.len() == 1 {
        let single = if op == SetOp::In {
            BinaryOp::Eq
        } else {
            BinaryOp::NotEq
        };
        Predicate::binary(single, term, values.remove(0))
    } else {
        Predicate::set(op, term, values)
    }
}

/// `literal` moved by `delta` units of its type (1 for ints, 1 unscaled unit for
/// decimals, 1 day for dates, 1 µs / ns for timestamps); `None` on overflow.
fn step(literal: &Literal, delta: i64) -> Option<Literal> {
    Some(match literal {
        Literal::Int(v) => Literal::Int(v.checked_add(i32::try_from(delta).ok()?)?),
        Literal::Date(v) => Literal::Date(v.checked_add(i32::try_from(delta).ok()?)?),
        Literal::Long(v) => Literal::Long(v.checked_add(delta)?),
        Literal::Time(v) => Literal::Time(v.checked_add(delta)?),
        Literal::Timestamp(v) => Literal::Timestamp(v.checked_add(delta)?),
        Literal::Timestamptz(v) => Literal::Timestamptz(v.checked_add(delta)?),
        Literal::TimestampNs(v) => Literal::TimestampNs(v.checked_add(delta)?),
        Literal::TimestamptzNs(v) => Literal::TimestamptzNs(v.checked_add(delta)?),
        Literal::Decimal {
            unscaled,
            precision,
            scale,
        } => Literal::Decimal {
            unscaled: unscaled.checked_add(i128::from(delta))?,
            precision: *precision,
            scale: *scale,
        },
        _ => return None,
    })
}

/// Ranges through an order-preserving transform of an integer-like source (Java
/// `truncateInteger` / `truncateLong` / `truncateDecimal` and their strict variants).
fn ordered(
    transform: &Transform,
    p: BoundReference,
    op: BinaryOp,
    v: &Literal,
    strict: bool,
) -> Option<BoundPredicate> {
    let t = |l: &Literal| apply(transform, l).ok().flatten();
    let (op, value) = match (op, strict) {
        (BinaryOp::Lt, false) => (BinaryOp::LtEq, t(&step(v, -1)?)?),
        (BinaryOp::LtEq, false) => (BinaryOp::LtEq, t(v)?),
        (BinaryOp::Gt, false) => (BinaryOp::GtEq, t(&step(v, 1)?)?),
        (BinaryOp::GtEq, false) => (BinaryOp::GtEq, t(v)?),
        (BinaryOp::Eq, false) => (BinaryOp::Eq, t(v)?),
        (BinaryOp::Lt, true) => (BinaryOp::Lt, t(v)?),
        (BinaryOp::LtEq, true) => (BinaryOp::Lt, t(&step(v, 1)?)?),
        (BinaryOp::Gt, true) => (BinaryOp::Gt, t(v)?),
        (BinaryOp::GtEq, true) => (BinaryOp::Gt, t(&step(v, -1)?)?),
        (BinaryOp::NotEq, true) => (BinaryOp::NotEq, t(v)?),
        _ => return None,
    };
    let projected = Predicate::binary(op, p.clone(), value.clone());
    let Transform::Truncate(w) = transform else {
        return Some(projected);
    };
    let Some((wrapped, first_normal)) = super::truncate::wrapped_partition(v, *w) else {
        return Some(projected);
    };
    // rows just above the minimum are in partition `wrapped`, the largest of all
    let is_wrapped = literal_eq(&value, &wrapped);
    Some(match (op, strict) {
        (BinaryOp::LtEq, false) => projected.or(Predicate::binary(BinaryOp::Eq, p, wrapped)),
        (BinaryOp::GtEq, false) if is_wrapped => Predicate::binary(BinaryOp::GtEq, p, first_normal),
        (BinaryOp::Lt, true) if is_wrapped => return None,
        (BinaryOp::Gt, true) => projected.and(Predicate::binary(BinaryOp::NotEq, p, wrapped)),
        _ => projected,
    })
}

fn array_len(l: &Literal) -> usize {
    match l {
        Literal::String(s) => s.chars().count(),
        Literal::Binary(b) => b.len(),
        _ => 0,
    }
}

/// Strings and binary through `truncate[w]` (Java `truncateArray`, `TruncateString`).
fn truncate_array(
    transform: &Transform,
    w: usize,
    p: BoundReference,
    op: BinaryOp,
    v: &Literal,
    strict: bool,
) -> Option<BoundPredicate> {
    let tv = apply(transform, v).ok()??;
    let len = array_len(v);
    let (op, value) = match (op, strict) {
        (BinaryOp::Lt | BinaryOp::LtEq, false) => (BinaryOp::LtEq, tv),
        (BinaryOp::Gt | BinaryOp::GtEq, false) => (BinaryOp::GtEq, tv),
        (BinaryOp::Eq, false) => (BinaryOp::Eq, tv),
        (BinaryOp::Lt | BinaryOp::LtEq, true) => (BinaryOp::Lt, tv),
        (BinaryOp::Gt | BinaryOp::GtEq, true) => (BinaryOp::Gt, tv),
        (BinaryOp::NotEq, true) => (BinaryOp::NotEq, tv),
        // a prefix shorter than W is kept whole by truncation; one of W code points is
        // the whole partition value; a longer one is cut to W
        (BinaryOp::StartsWith, _) if len < w => (BinaryOp::StartsWith, v.clone()),
        (BinaryOp::StartsWith, _) if len == w => (BinaryOp::Eq, v.clone()),
        (BinaryOp::StartsWith, false) => (BinaryOp::Eq, tv),
        (BinaryOp::NotStartsWith, _) if len < w => (BinaryOp::NotStartsWith, v.clone()),
        (BinaryOp::NotStartsWith, _) if len == w => (BinaryOp::NotEq, v.clone()),
        // rows whose first W code points equal the prefix's may still not start with it
        (BinaryOp::NotStartsWith, true) => (BinaryOp::NotStartsWith, tv),
        _ => return None,
    };
    Some(Predicate::binary(op, p, value))
}

fn int_value(l: &Literal) -> Option<i32> {
    match l {
        Literal::Int(v) | Literal::Date(v) => Some(*v),
        _ => None,
    }
}

/// Adjust a temporal projection for pre-1970 partition values written one too large by
/// Iceberg ≤ 0.10 (Java `fixInclusiveTimeProjection` / `fixStrictTimeProjection`).
fn fix_time_projection(projected: BoundPredicate, strict: bool) -> Option<BoundPredicate> {
    match projected {
        Predicate::Binary { op, term, literal } => {
            let v = int_value(&literal)?;
            let next = step(&literal, 1);
            match (op, strict) {
                (BinaryOp::Lt | BinaryOp::LtEq, false) if v < 0 => {
                    Some(Predicate::binary(op, term, next?))
                }
                (BinaryOp::Eq, false) if v < 0 => {
                    Some(Predicate::set(SetOp::In, term, vec![literal, next?]))
                }
                (BinaryOp::Gt | BinaryOp::GtEq, true) if v <= 0 => {
                    Some(Predicate::binary(op, term, next?))
                }
                (BinaryOp::NotEq, true) if v < 0 => {
                    Some(Predicate::set(SetOp::NotIn, term, vec![literal, next?]))
                }
                (op, _) => Some(Predicate::binary(op, term, literal)),
            }
        }
        Predicate::Set { op, term, literals } => {
            let mut out = literals.clone();
            for l in &literals {
                if int_value(l)? < 0 {
                    let n = step(l, 1)?;
                    if !out.iter().any(|o| literal_eq(o, &n)) {
                        out.push(n);
                    }
                }
            }
            Some(Predicate::set(op, term, out))
        }
        other => Some(other),
    }
}

#[cfg(test)]
mod tests;
