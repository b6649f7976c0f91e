//! Evaluating a bound predicate on one row or partition tuple (Java: `Evaluator`), and
//! the per-file residual (Java: `ResidualEvaluator`).
//!
//! Row semantics (see [`crate::expr`]): null satisfies only `is_null`; NaN satisfies
//! `is_nan`, `not_eq` and `not_in`; comparisons use [`crate::expr::compare`].

use std::cmp::Ordering;

use super::projection::{BoundPartitionSpec, InclusiveProjection, StrictProjection};
use crate::error::Result;
use crate::expr::literal::{is_nan, literal_eq};
use crate::expr::{
    compare, rewrite_not, visit, BinaryOp, BoundPredicate, BoundReference, Predicate,
    PredicateVisitor, SetOp, UnaryOp,
};
use crate::spec::Literal;

/// Whether a value satisfies a leaf predicate.
pub fn eval_unary(op: UnaryOp, value: Option<&Literal>) -> bool {
    match op {
        UnaryOp::IsNull => value.is_none(),
        UnaryOp::NotNull => value.is_some(),
        UnaryOp::IsNan => value.is_some_and(is_nan),
        UnaryOp::NotNan => value.is_some_and(|v| !is_nan(v)),
    }
}

/// Whether a value satisfies `value <op> literal`.
pub fn eval_binary(op: BinaryOp, value: Option<&Literal>, literal: &Literal) -> bool {
    let Some(v) = value else {
        return false;
    };
    let cmp = compare(v, literal);
    match op {
        BinaryOp::Lt => cmp == Some(Ordering::Less),
        BinaryOp::LtEq => matches!(cmp, Some(Ordering::Less | Ordering::Equal)),
        BinaryOp::Gt => cmp == Some(Ordering::Greater),
        BinaryOp::GtEq => matches!(cmp, Some(Ordering::Greater | Ordering::Equal)),
        BinaryOp::Eq => cmp == Some(Ordering::Equal),
        BinaryOp::NotEq => cmp != Some(Ordering::Equal),
        BinaryOp::StartsWith | BinaryOp::NotStartsWith => {
            let (Literal::String(s), Literal::String(prefix)) = (v, literal) else {
                return false;
            };
            s.starts_with(prefix.as_str()) == (op == BinaryOp::StartsWith)
        }
    }
}

/// Whether a value satisfies `value [not] in literals`.
pub fn eval_set(op: SetOp, value: Option<&Literal>, literals: &[Literal]) -> bool {
    let Some(v) = value else {
        return false;
    };
    literals.iter().any(|l| literal_eq(v, l)) == (op == SetOp::In)
}

struct RowVisitor<'f, 'a> {
    value_of: &'f dyn Fn(i32) -> Option<&'a Literal>,
}

impl PredicateVisitor<BoundReference> for RowVisitor<'_, '_> {
    type Output = bool;

    fn not(&mut self, c: bool) -> Result<bool> {
        Ok(!c)
    }
    fn unary(&mut self, op: UnaryOp, term: &BoundReference) -> Result<bool> {
        Ok(eval_unary(op, (self.value_of)(term.field_id)))
    }
    fn binary(&mut self, op: BinaryOp, term: &BoundReference, literal: &Literal) -> Result<bool> {
        Ok(eval_binary(op, (self.value_of)(term.field_id), literal))
    }
    fn set(&mut self, op: SetOp, term: &BoundReference, literals: &[Literal]) -> Result<bool> {
        Ok(eval_set(op, (self.value_of)(term.field_id), literals))
    }
}

/// Evaluate `predicate` on a row whose value for a field id is `value_of(id)` (`None`
/// for null). `Not` nodes are evaluated as boolean negation.
pub fn evaluate<'a>(
    predicate: &BoundPredicate,
    value_of: &dyn Fn(i32) -> Option<&'a Literal>,
) -> Result<bool> {
    visit(predicate, &mut RowVisitor { value_of })
}

/// Evaluate a predicate over partition fields (from a projection) on a partition tuple
/// of `spec` (values in spec field order, `None` for null).
pub fn evaluate_partition(
    spec: &BoundPartitionSpec,
    predicate: &BoundPredicate,
    partition: &[Option<Literal>],
) -> Result<bool> {
    let value_of = |id: i32| -> Option<&Literal> {
        spec.position(id)
            .and_then(|pos| partition.get(pos))
            .and_then(Option::as_ref)
    };
    evaluate(predicate, &value_of)
}

/// The residual of a row filter for the files of one partition (Java:
/// `ResidualEvaluator`): each leaf becomes `true` where the partition guarantees it (its
/// strict projection holds), `false` where the partition excludes it (its inclusive
/// projection fails), and stays otherwise.
#[derive(Debug, Clone)]
pub struct ResidualEvaluator {
    spec: BoundPartitionSpec,
    predicate: BoundPredicate,
}

impl ResidualEvaluator {
    /// A residual evaluator for `predicate` (bound to the table schema) under `spec`.
    pub fn new(spec: BoundPartitionSpec, predicate: &BoundPredicate) -> Self {
        Self {
            spec,
            predicate: rewrite_not(predicate.clone()),
        }
    }

    /// The residual for the files of partition `partition`.
    pub fn residual_for(&self, partition: &[Option<Literal>]) -> Result<BoundPredicate> {
        visit(
            &self.predicate,
            &mut ResidualVisitor {
                spec: &self.spec,
                partition,
            },
        )
    }
}

struct ResidualVisitor<'a> {
    spec: &'a BoundPartitionSpec,
    partition: &'a [Option<Literal>],
}

impl PredicateVisitor<BoundReference> for ResidualVisitor<'_> {
    type Output = BoundPredicate;

    fn leaf(&mut self, leaf: &BoundPredicate) -> Result<BoundPredicate> {
        let strict = StrictProjection::new(self.spec).project(leaf)?;
        if evaluate_partition(self.spec, &strict, self.partition)? {
            return Ok(Predicate::AlwaysTrue);
        }
        let inclusive = InclusiveProjection::new(self.spec).project(leaf)?;
        if !evaluate_partition(self.spec, &inclusive, self.partition)? {
            return Ok(Predicate::AlwaysFalse);
        }
        Ok(leaf.clone())
    }
}
