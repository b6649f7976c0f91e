//! The one predicate visitor used by every evaluator and projection.
//!
//! The four connectives (`always_true`, `always_false`, `and`, `or`) come from the output
//! type ([`Connectives`]: truth values for evaluators, folded predicates for projections);
//! leaves arrive through [`PredicateVisitor::leaf`], whose default splits them into
//! [`unary`](PredicateVisitor::unary), [`binary`](PredicateVisitor::binary) and
//! [`set`](PredicateVisitor::set). A projection overrides `leaf` alone (the shape of Java's
//! `Projections`); a metrics evaluator overrides the three kinds. `Not` is rejected by
//! default: call [`rewrite_not`](super::rewrite_not) first.

use super::predicate::{BinaryOp, Predicate, SetOp, UnaryOp};
use crate::error::{Error, Result};
use crate::spec::Literal;

/// A visitor's result type with the connectives of a predicate tree.
pub trait Connectives: Sized {
    /// The result for `AlwaysTrue`.
    fn always_true() -> Self;
    /// The result for `AlwaysFalse`.
    fn always_false() -> Self;
    /// Both sides of an `And`.
    fn and(self, other: Self) -> Self;
    /// Either side of an `Or`.
    fn or(self, other: Self) -> Self;
}

/// Truth values: for an evaluator, "rows might match" (`true`) or "cannot match".
impl Connectives for bool {
    fn always_true() -> Self {
        true
    }
    fn always_false() -> Self {
        false
    }
    fn and(self, other: Self) -> Self {
        self && other
    }
    fn or(self, other: Self) -> Self {
        self || other
    }
}

/// Predicates, with constants folded (a projection or residual).
impl<R> Connectives for Predicate<R> {
    fn always_true() -> Self {
        Predicate::AlwaysTrue
    }
    fn always_false() -> Self {
        Predicate::AlwaysFalse
    }
    fn and(self, other: Self) -> Self {
        Predicate::and(self, other)
    }
    fn or(self, other: Self) -> Self {
        Predicate::or(self, other)
    }
}

/// A visitor over a [`Predicate`] with terms of type `R`, producing `Self::Output`.
pub trait PredicateVisitor<R> {
    /// The result of visiting a node.
    type Output: Connectives;

    /// The result for `AlwaysTrue`.
    fn always_true(&mut self) -> Result<Self::Output> {
        Ok(Self::Output::always_true())
    }

    /// The result for `AlwaysFalse`.
    fn always_false(&mut self) -> Result<Self::Output> {
        Ok(Self::Output::always_false())
    }

    /// Combine the results of the two sides of an `And`.
    fn and(&mut self, left: Self::Output, right: Self::Output) -> Result<Self::Output> {
        Ok(left.and(right))
    }

    /// Combine the results of the two sides of an `Or`.
    fn or(&mut self, left: Self::Output, right: Self::Output) -> Result<Self::Output> {
        Ok(left.or(right))
    }

    /// The result of a `Not` from its child's. Default: an error asking for
    /// [`rewrite_not`](super::rewrite_not) first.
    fn not(&mut self, _child: Self::Output) -> Result<Self::Output> {
        Err(Error::invalid_argument(
            "a NOT node reached a visitor that needs rewrite_not first",
        ))
    }

    /// The result of a leaf (unary, binary or set predicate). Default: dispatch by kind.
    fn leaf(&mut self, predicate: &Predicate<R>) -> Result<Self::Output> {
        match predicate {
            Predicate::Unary { op, term } => self.unary(*op, term),
            Predicate::Binary { op, term, literal } => self.binary(*op, term, literal),
            Predicate::Set { op, term, literals } => self.set(*op, term, literals),
            _ => Err(Error::invalid_argument(
                "leaf() called on a non-leaf predicate",
            )),
        }
    }

    /// `is_null`, `not_null`, `is_nan`, `not_nan`. Default: an error.
    fn unary(&mut self, op: UnaryOp, _term: &R) -> Result<Self::Output> {
        Err(Error::unsupported(format!(
            "predicate {op} in this visitor"
        )))
    }

    /// Comparisons and `starts_with`. Default: an error.
    fn binary(&mut self, op: BinaryOp, _term: &R, _literal: &Literal) -> Result<Self::Output> {
        Err(Error::unsupported(format!(
            "predicate {op} in this visitor"
        )))
    }

    /// `in` / `not_in`. Default: an error.
    fn set(&mut self, op: SetOp, _term: &R, _literals: &[Literal]) -> Result<Self::Output> {
        Err(Error::unsupported(format!(
            "predicate {op:?} in this visitor"
        )))
    }
}

/// Visit `predicate` bottom-up with `visitor`.
pub fn visit<R, V: PredicateVisitor<R> + ?Sized>(
    predicate: &Predicate<R>,
    visitor: &mut V,
) -> Result<V::Output> {
    match predicate {
        Predicate::AlwaysTrue => visitor.always_true(),
        Predicate::AlwaysFalse => visitor.always_false(),
        Predicate::And(l, r) => {
            let l = visit(l, visitor)?;
            let r = visit(r, visitor)?;
            visitor.and(l, r)
        }
        Predicate::Or(l, r) => {
            let l = visit(l, visitor)?;
            let r = visit(r, visitor)?;
            visitor.or(l, r)
        }
        Predicate::Not(c) => {
            let c = visit(c, visitor)?;
            visitor.not(c)
        }
        leaf => visitor.leaf(leaf),
    }
}
