//! Iceberg expressions: predicates over columns, binding to a schema, negation
//! rewriting, literal comparison and conversion, and the one visitor every evaluator uses.
//!
//! ```
//! use icefloe::expr::{Binder, BinaryOp, Predicate, UnaryOp};
//! use icefloe::spec::{Literal, NestedField, PrimitiveType, Schema, Type};
//!
//! let schema = Schema::new(0, vec![
//!     NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Long)),
//! ]);
//! let p = Predicate::col_binary(BinaryOp::GtEq, "id", Literal::Int(10))
//!     .and(Predicate::col_unary(UnaryOp::NotNull, "id"));
//! let bound = Binder::new(&schema).bind(&p).unwrap();
//! assert_eq!(bound.to_string(), "(id#1 >= 10 and not_null(id#1))");
//! ```

mod binder;
pub mod literal;
mod predicate;
mod visitor;

pub use binder::{bind_unary, Binder};
pub use literal::{compare, convert, Conversion};
pub use predicate::{
    rewrite_not, BinaryOp, BoundPredicate, BoundReference, Predicate, Reference, SetOp, UnaryOp,
};
pub use visitor::{visit, Connectives, PredicateVisitor};
