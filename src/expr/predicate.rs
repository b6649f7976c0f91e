//! Predicates: unbound (by column name) and bound (by field id), and `rewrite_not`.
//!
//! One enum, [`Predicate`], serves both: its term type `R` is a [`Reference`] (a column
//! name) before binding and a [`BoundReference`] (field id + primitive type) after
//! [`Binder`](super::Binder) has resolved it against a schema. Projections produce bound
//! predicates whose references are partition fields.
//!
//! Row semantics (used by every evaluator, see `crate::eval::Evaluator`): a null value
//! satisfies only `is_null`; NaN satisfies `is_nan`, `not_eq` and `not_in` and none of the
//! range or equality operators; floats compare by IEEE 754 (so `-0.0 == 0.0`); strings
//! compare by their UTF-8 bytes (= code points), binary by unsigned bytes.

use std::fmt;

use crate::spec::{Literal, PrimitiveType};

/// An unbound reference to a column by name. Nested struct fields are named by their
/// dotted path (`"location.lat"`) when no top-level column has that exact name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// The column name (or dotted path of a nested struct field).
    pub name: String,
}

impl Reference {
    /// A reference to the column `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into() }
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// A reference bound to a field: its id, name and primitive type.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundReference {
    /// The field id (a schema field id, or a partition field id after projection).
    pub field_id: i32,
    /// The field name, for display.
    pub name: String,
    /// The field's type; literals of predicates on it have this type.
    pub field_type: PrimitiveType,
    /// Whether the field is required (never null).
    pub required: bool,
}

impl fmt::Display for BoundReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.name, self.field_id)
    }
}

/// Operators without a literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `is_null`
    IsNull,
    /// `not_null`
    NotNull,
    /// `is_nan` (float and double only)
    IsNan,
    /// `not_nan` (float and double only); false for null.
    NotNan,
}

/// Operators with one literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `=`
    Eq,
    /// `!=`
    NotEq,
    /// `starts_with` (strings)
    StartsWith,
    /// `not_starts_with` (strings); false for null.
    NotStartsWith,
}

/// Operators with a set of literals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetOp {
    /// `in`
    In,
    /// `not_in`; false for null.
    NotIn,
}

impl UnaryOp {
    /// The operator matching exactly the non-matching rows (nulls aside).
    pub fn negate(self) -> Self {
        match self {
            UnaryOp::IsNull => UnaryOp::NotNull,
            UnaryOp::NotNull => UnaryOp::IsNull,
            UnaryOp::IsNan => UnaryOp::NotNan,
            UnaryOp::NotNan => UnaryOp::IsNan,
        }
    }
}

impl BinaryOp {
    /// The negated operator (`<` ↔ `>=`, `=` ↔ `!=`, `starts_with` ↔ `not_starts_with`).
    pub fn negate(self) -> Self {
        match self {
            BinaryOp::Lt => BinaryOp::GtEq,
            BinaryOp::LtEq => BinaryOp::Gt,
            BinaryOp::Gt => BinaryOp::LtEq,
            BinaryOp::GtEq => BinaryOp::Lt,
            BinaryOp::Eq => BinaryOp::NotEq,
            BinaryOp::NotEq => BinaryOp::Eq,
            BinaryOp::StartsWith => BinaryOp::NotStartsWith,
            BinaryOp::NotStartsWith => BinaryOp::StartsWith,
        }
    }

    /// The operator with its operands swapped (`5 < x` is `x > 5`); `None` for
    /// `starts_with`, which is not symmetric.
    pub fn flip(self) -> Option<Self> {
        Some(match self {
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::LtEq => BinaryOp::GtEq,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::GtEq => BinaryOp::LtEq,
            BinaryOp::Eq => BinaryOp::Eq,
            BinaryOp::NotEq => BinaryOp::NotEq,
            BinaryOp::StartsWith | BinaryOp::NotStartsWith => return None,
        })
    }
}

impl SetOp {
    /// `in` ↔ `not_in`.
    pub fn negate(self) -> Self {
        match self {
            SetOp::In => SetOp::NotIn,
            SetOp::NotIn => SetOp::In,
        }
    }
}

/// An Iceberg predicate over terms of type `R` ([`Reference`] when unbound,
/// [`BoundReference`] when bound).
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate<R = Reference> {
    /// Matches every row.
    AlwaysTrue,
    /// Matches no row.
    AlwaysFalse,
    /// Both match.
    And(Box<Predicate<R>>, Box<Predicate<R>>),
    /// Either matches.
    Or(Box<Predicate<R>>, Box<Predicate<R>>),
    /// The child does not match (removed by [`rewrite_not`] before evaluation).
    Not(Box<Predicate<R>>),
    /// `is_null`, `not_null`, `is_nan`, `not_nan`.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The column.
        term: R,
    },
    /// A comparison with one literal.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The column.
        term: R,
        /// The literal (of the column's type once bound).
        literal: Literal,
    },
    /// `in` / `not_in` a set of literals (no duplicates once bound).
    Set {
        /// The operator.
        op: SetOp,
        /// The column.
        term: R,
        /// The literals.
        literals: Vec<Literal>,
    },
}

/// A predicate bound to a schema (or to a partition type, after projection).
pub type BoundPredicate = Predicate<BoundReference>;

impl<R> Predicate<R> {
    /// `left AND right`, folding constants.
    pub fn and(self, other: Self) -> Self {
        match (self, other) {
            (Predicate::AlwaysFalse, _) | (_, Predicate::AlwaysFalse) => Predicate::AlwaysFalse,
            (Predicate::AlwaysTrue, p) | (p, Predicate::AlwaysTrue) => p,
            (l, r) => Predicate::And(Box::new(l), Box::new(r)),
        }
    }

    /// `left OR right`, folding constants.
    pub fn or(self, other: Self) -> Self {
        match (self, other) {
            (Predicate::AlwaysTrue, _) | (_, Predicate::AlwaysTrue) => Predicate::AlwaysTrue,
            (Predicate::AlwaysFalse, p) | (p, Predicate::AlwaysFalse) => p,
            (l, r) => Predicate::Or(Box::new(l), Box::new(r)),
        }
    }

    /// `NOT self`, folding constants and double negation.
    pub fn negate(self) -> Self {
        match self {
            Predicate::AlwaysTrue => Predicate::AlwaysFalse,
            Predicate::AlwaysFalse => Predicate::AlwaysTrue,
            Predicate::Not(inner) => *inner,
            p => Predicate::Not(Box::new(p)),
        }
    }

    /// A unary predicate.
    pub fn unary(op: UnaryOp, term: R) -> Self {
        Predicate::Unary { op, term }
    }

    /// A predicate with one literal.
    pub fn binary(op: BinaryOp, term: R, literal: Literal) -> Self {
        Predicate::Binary { op, term, literal }
    }

    /// A set predicate.
    pub fn set(op: SetOp, term: R, literals: Vec<Literal>) -> Self {
        Predicate::Set { op, term, literals }
    }

    /// The term of a leaf predicate (`None` for constants and connectives).
    pub fn term(&self) -> Option<&R> {
        match self {
            Predicate::Unary { term, .. }
            | Predicate::Binary { term, .. }
            | Predicate::Set { term, .. } => Some(term),
            _ => None,
        }
    }

    /// Every term of the predicate's leaves, in order.
    pub fn terms(&self) -> Vec<&R> {
        let mut out = vec![];
        self.collect_terms(&mut out);
        out
    }

    fn collect_terms<'a>(&'a self, out: &mut Vec<&'a R>) {
        match self {
            Predicate::And(l, r) | Predicate::Or(l, r) => {
                l.collect_terms(out);
                r.collect_terms(out);
            }
            Predicate::Not(c) => c.collect_terms(out),
            p => out.extend(p.term()),
        }
    }
}

impl Predicate<Reference> {
    /// `name IS NULL` etc.: a unary predicate on a column name.
    pub fn col_unary(op: UnaryOp, name: &str) -> Self {
        Predicate::unary(op, Reference::new(name))
    }

    /// `name <op> literal` on a column name.
    pub fn col_binary(op: BinaryOp, name: &str, literal: Literal) -> Self {
        Predicate::binary(op, Reference::new(name), literal)
    }

    /// `name [NOT] IN (literals)` on a column name.
    pub fn col_set(op: SetOp, name: &str, literals: Vec<Literal>) -> Self {
        Predicate::set(op, Reference::new(name), literals)
    }
}

/// Remove every `Not` node by pushing negations into the leaves (De Morgan, and each
/// operator replaced by its negation).
///
/// Under the row semantics of this module this preserves the matching rows, except that
/// for NaN values `NOT (x < 5)` matches while `x >= 5` does not (as in Iceberg Java);
/// callers converting SQL push SQL negations down themselves (see
/// `crate::datafusion::filter`).
pub fn rewrite_not<R>(predicate: Predicate<R>) -> Predicate<R> {
    rewrite(predicate, false)
}

fn rewrite<R>(p: Predicate<R>, negated: bool) -> Predicate<R> {
    match p {
        Predicate::AlwaysTrue if negated => Predicate::AlwaysFalse,
        Predicate::AlwaysFalse if negated => Predicate::AlwaysTrue,
        Predicate::Not(c) => rewrite(*c, !negated),
        Predicate::And(l, r) if negated => rewrite(*l, true).or(rewrite(*r, true)),
        Predicate::Or(l, r) if negated => rewrite(*l, true).and(rewrite(*r, true)),
        Predicate::And(l, r) => rewrite(*l, false).and(rewrite(*r, false)),
        Predicate::Or(l, r) => rewrite(*l, false).or(rewrite(*r, false)),
        Predicate::Unary { op, term } if negated => Predicate::Unary {
            op: op.negate(),
            term,
        },
        Predicate::Binary { op, term, literal } if negated => Predicate::Binary {
            op: op.negate(),
            term,
            literal,
        },
        Predicate::Set { op, term, literals } if negated => Predicate::Set {
            op: op.negate(),
            term,
            literals,
        },
        p => p,
    }
}

impl fmt::Display for UnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UnaryOp::IsNull => "is_null",
            UnaryOp::NotNull => "not_null",
            UnaryOp::IsNan => "is_nan",
            UnaryOp::NotNan => "not_nan",
        })
    }
}

impl fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "!=",
            BinaryOp::StartsWith => "starts_with",
            BinaryOp::NotStartsWith => "not_starts_with",
        })
    }
}

impl<R: fmt::Display> fmt::Display for Predicate<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::AlwaysTrue => f.write_str("true"),
            Predicate::AlwaysFalse => f.write_str("false"),
            Predicate::And(l, r) => write!(f, "({l} and {r})"),
            Predicate::Or(l, r) => write!(f, "({l} or {r})"),
            Predicate::Not(c) => write!(f, "not({c})"),
            Predicate::Unary { op, term } => write!(f, "{op}({term})"),
            Predicate::Binary { op, term, literal } => write!(f, "{term} {op} {literal}"),
            Predicate::Set { op, term, literals } => {
                let op = if *op == SetOp::In { "in" } else { "not in" };
                write!(f, "{term} {op} (")?;
                for (i, l) in literals.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{l}")?;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lt(name: &str, v: i32) -> Predicate {
        Predicate::col_binary(BinaryOp::Lt, name, Literal::Int(v))
    }

    #[test]
    fn rewrite_not_pushes_negation_to_leaves() {
        let p = Predicate::Not(Box::new(
            lt("a", 1).and(Predicate::col_unary(UnaryOp::IsNull, "b")),
        ));
        let expected = Predicate::col_binary(BinaryOp::GtEq, "a", Literal::Int(1))
            .or(Predicate::col_unary(UnaryOp::NotNull, "b"));
        assert_eq!(rewrite_not(p), expected);
        let double = Predicate::Not(Box::new(Predicate::Not(Box::new(lt("a", 1)))));
        assert_eq!(rewrite_not(double), lt("a", 1));
        assert_eq!(
            rewrite_not(Predicate::<Reference>::AlwaysTrue.negate()),
            Predicate::AlwaysFalse
        );
    }

    #[test]
    fn constant_folding() {
        assert_eq!(lt("a", 1).and(Predicate::AlwaysTrue), lt("a", 1));
        assert_eq!(lt("a", 1).or(Predicate::AlwaysTrue), Predicate::AlwaysTrue);
        assert_eq!(
            lt("a", 1).and(Predicate::AlwaysFalse),
            Predicate::AlwaysFalse
        );
        assert_eq!(lt("a", 1).to_string(), "a < 1");
    }
}
