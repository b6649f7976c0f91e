//! Binding predicates to a schema (Java: `Binder`).
//!
//! A [`Reference`] is resolved to its field id and primitive type: by exact top-level
//! name, else (when `case_sensitive` is off) case-insensitively, else as a dotted path
//! through struct fields. Fields inside lists and maps cannot be bound (their metrics
//! count elements, not rows).
//!
//! Literals are converted to the field's type ([`convert`]). When the value has no exact
//! counterpart the predicate is replaced by an equivalent one on the nearest values, so
//! binding never changes which rows match: `int_col < 3000000000` becomes
//! `int_col <= 2147483647`, `float_col = 1.1` (a double) becomes false,
//! `ts_col >= <1500 ns>` becomes `ts_col >= 2 µs`.

use super::literal::{compare, convert, is_nan, literal_eq, Conversion};
use super::predicate::{
    BinaryOp, BoundPredicate, BoundReference, Predicate, Reference, SetOp, UnaryOp,
};
use crate::error::{Error, Result};
use crate::spec::{Literal, NestedField, PrimitiveType, Schema, Type};

/// Binds predicates by field id against a schema.
#[derive(Debug, Clone, Copy)]
pub struct Binder<'a> {
    schema: &'a Schema,
    case_sensitive: bool,
}

impl<'a> Binder<'a> {
    /// A case-sensitive binder for `schema`.
    pub fn new(schema: &'a Schema) -> Self {
        Self {
            schema,
            case_sensitive: true,
        }
    }

    /// Whether names match case-sensitively (default true).
    pub fn with_case_sensitive(mut self, case_sensitive: bool) -> Self {
        self.case_sensitive = case_sensitive;
        self
    }

    /// Resolve a column reference.
    ///
    /// Errors: [`crate::ErrorKind::NotFound`] for an unknown column,
    /// [`crate::ErrorKind::Unsupported`] for a non-primitive column or one inside a list
    /// or map.
    pub fn bind_reference(&self, reference: &Reference) -> Result<BoundReference> {
        let field = self.resolve(&reference.name).ok_or_else(|| {
            Error::not_found(format!(
                "column '{}' in schema {}",
                reference.name, self.schema.schema_id
            ))
        })?;
        let Type::Primitive(ty) = field.field_type.as_ref() else {
            return Err(Error::unsupported(format!(
                "predicates on non-primitive column '{}'",
                reference.name
            )));
        };
        Ok(BoundReference {
            field_id: field.id,
            name: reference.name.clone(),
            field_type: *ty,
            // never null in a row: a required field inside an optional struct is null
            // wherever the struct is, so `is_null` on it is not false
            required: self.schema.is_never_null(field.id),
        })
    }

    fn resolve(&self, name: &str) -> Option<&'a NestedField> {
        let columns = self.schema.columns();
        let find = |fields: &'a [NestedField], n: &str| -> Option<&'a NestedField> {
            fields.iter().find(|f| f.name == n).or_else(|| {
                if self.case_sensitive {
                    None
                } else {
                    fields.iter().find(|f| f.name.eq_ignore_ascii_case(n))
                }
            })
        };
        if let Some(f) = find(columns, name) {
            return Some(f);
        }
        // a dotted path through structs only
        let mut fields = columns;
        let mut found = None;
        for part in name.split('.') {
            let f = find(fields, part)?;
            fields = match f.field_type.as_ref() {
                Type::Struct(s) => &s.fields,
                _ => &[],
            };
            found = Some(f);
        }
        found
    }

    /// Bind every reference of `predicate` and convert its literals.
    ///
    /// Errors: unknown columns, literals that cannot be compared with the column's type,
    /// NaN literals in comparisons (use `is_nan`), `is_nan` on a non-float column,
    /// `starts_with` on a non-string column.
    pub fn bind(&self, predicate: &Predicate) -> Result<BoundPredicate> {
        Ok(match predicate {
            Predicate::AlwaysTrue => Predicate::AlwaysTrue,
            Predicate::AlwaysFalse => Predicate::AlwaysFalse,
            Predicate::And(l, r) => self.bind(l)?.and(self.bind(r)?),
            Predicate::Or(l, r) => self.bind(l)?.or(self.bind(r)?),
            Predicate::Not(c) => self.bind(c)?.negate(),
            Predicate::Unary { op, term } => bind_unary(*op, self.bind_reference(term)?)?,
            Predicate::Binary { op, term, literal } => {
                bind_binary(*op, self.bind_reference(term)?, literal)?
            }
            Predicate::Set { op, term, literals } => {
                bind_set(*op, self.bind_reference(term)?, literals)?
            }
        })
    }
}

fn is_float(ty: &PrimitiveType) -> bool {
    matches!(ty, PrimitiveType::Float | PrimitiveType::Double)
}

/// A unary predicate, simplified on required fields (`not_null` of a required field is
/// true, `is_null` false).
pub fn bind_unary(op: UnaryOp, term: BoundReference) -> Result<BoundPredicate> {
    if matches!(op, UnaryOp::IsNan | UnaryOp::NotNan) && !is_float(&term.field_type) {
        return Err(Error::invalid_argument(format!(
            "{op} on column '{}' of type {}",
            term.name, term.field_type
        )));
    }
    Ok(match (op, term.required) {
        (UnaryOp::IsNull, true) => Predicate::AlwaysFalse,
        (UnaryOp::NotNull, true) => Predicate::AlwaysTrue,
        _ => Predicate::unary(op, term),
    })
}

fn reject_nan(term: &BoundReference, literal: &Literal) -> Result<()> {
    if is_nan(literal) {
        return Err(Error::invalid_argument(format!(
            "NaN literal compared with column '{}': use is_nan / not_nan",
            term.name
        )));
    }
    Ok(())
}

fn bind_binary(op: BinaryOp, term: BoundReference, literal: &Literal) -> Result<BoundPredicate> {
    reject_nan(&term, literal)?;
    if matches!(op, BinaryOp::StartsWith | BinaryOp::NotStartsWith) {
        return match (&term.field_type, literal) {
            (PrimitiveType::String, Literal::String(_)) => {
                Ok(Predicate::binary(op, term, literal.clone()))
            }
            _ => Err(Error::invalid_argument(format!(
                "{op} on column '{}' of type {} with {literal}",
                term.name, term.field_type
            ))),
        };
    }
    let conversion = convert(literal, &term.field_type)
        .map_err(|e| e.context(format!("column '{}'", term.name)))?;
    let (below, above) = match conversion {
        Conversion::Exact(lit) => return Ok(Predicate::binary(op, term, lit)),
        Conversion::Between { below, above } => (below, above),
    };
    // the value lies strictly between `below` and `above`
    Ok(match op {
        BinaryOp::Lt | BinaryOp::LtEq => match below {
            Some(b) => Predicate::binary(BinaryOp::LtEq, term, b),
            None => Predicate::AlwaysFalse,
        },
        BinaryOp::Gt | BinaryOp::GtEq => match above {
            Some(a) => Predicate::binary(BinaryOp::GtEq, term, a),
            None => Predicate::AlwaysFalse,
        },
        BinaryOp::Eq => Predicate::AlwaysFalse,
        BinaryOp::NotEq => bind_unary(UnaryOp::NotNull, term)?,
        BinaryOp::StartsWith | BinaryOp::NotStartsWith => Predicate::AlwaysFalse,
    })
}

fn bind_set(op: SetOp, term: BoundReference, literals: &[Literal]) -> Result<BoundPredicate> {
    let mut converted: Vec<Literal> = Vec::with_capacity(literals.len());
    for literal in literals {
        reject_nan(&term, literal)?;
        let conversion = convert(literal, &term.field_type)
            .map_err(|e| e.context(format!("column '{}'", term.name)))?;
        // values without an exact counterpart can never be equal to a column value
        if let Conversion::Exact(l) = conversion {
            converted.push(l);
        }
    }
    let mut exact = distinct(converted);
    Ok(match (op, exact.len()) {
        (SetOp::In, 0) => Predicate::AlwaysFalse,
        (SetOp::NotIn, 0) => bind_unary(UnaryOp::NotNull, term)?,
        (SetOp::In, 1) => Predicate::binary(BinaryOp::Eq, term, exact.remove(0)),
        (SetOp::NotIn, 1) => Predicate::binary(BinaryOp::NotEq, term, exact.remove(0)),
        _ => Predicate::set(op, term, exact),
    })
}

/// `literals` without repeats (equal by [`literal_eq`]), each kept where it first
/// appears. Sorted to find them when every literal is of one kind and none is NaN (a
/// total order then: an `IN` list of thousands of values, as a `DELETE … WHERE k IN
/// (SELECT …)` gives, is bound in n·log n), compared pairwise otherwise.
fn distinct(literals: Vec<Literal>) -> Vec<Literal> {
    let one_kind = literals.first().is_none_or(|first| {
        literals
            .iter()
            .all(|l| std::mem::discriminant(l) == std::mem::discriminant(first) && !is_nan(l))
    });
    if !one_kind {
        let mut out: Vec<Literal> = Vec::with_capacity(literals.len());
        for l in literals {
            if !out.iter().any(|e| literal_eq(e, &l)) {
                out.push(l);
            }
        }
        return out;
    }
    let mut order: Vec<usize> = (0..literals.len()).collect();
    order.sort_by(|&a, &b| {
        compare(&literals[a], &literals[b])
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    // the first of each run of equal values (the smallest index: ties sort by index)
    let mut keep = vec![false; literals.len()];
    let mut last: Option<usize> = None;
    for i in order {
        if !last.is_some_and(|j| literal_eq(&literals[j], &literals[i])) {
            keep[i] = true;
            last = Some(i);
        }
    }
    literals
        .into_iter()
        .zip(keep)
        .filter_map(|(l, k)| k.then_some(l))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::types::StructType;

    fn schema() -> Schema {
        Schema::new(
            1,
            vec![
                NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
                NestedField::optional(2, "i", Type::Primitive(PrimitiveType::Int)),
                NestedField::optional(3, "f", Type::Primitive(PrimitiveType::Float)),
                NestedField::optional(
                    4,
                    "s",
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        5,
                        "a",
                        Type::Primitive(PrimitiveType::String),
                    )])),
                ),
            ],
        )
    }

    fn bound(name: &str, id: i32, ty: PrimitiveType, required: bool) -> BoundReference {
        BoundReference {
            field_id: id,
            name: name.into(),
            field_type: ty,
            required,
        }
    }

    #[test]
    fn required_field_of_an_optional_struct_can_be_null() {
        let s = Schema::new(
            1,
            vec![
                NestedField::optional(
                    1,
                    "address",
                    Type::Struct(StructType::new(vec![NestedField::required(
                        2,
                        "street",
                        Type::Primitive(PrimitiveType::String),
                    )])),
                ),
                NestedField::required(
                    3,
                    "r",
                    Type::Struct(StructType::new(vec![NestedField::required(
                        4,
                        "x",
                        Type::Primitive(PrimitiveType::Int),
                    )])),
                ),
            ],
        );
        let b = Binder::new(&s);
        let street = bound("address.street", 2, PrimitiveType::String, false);
        for op in [UnaryOp::IsNull, UnaryOp::NotNull] {
            assert_eq!(
                b.bind(&Predicate::col_unary(op, "address.street")).unwrap(),
                Predicate::unary(op, street.clone())
            );
        }
        // under required ancestors only, a required field is never null
        assert_eq!(
            b.bind(&Predicate::col_unary(UnaryOp::IsNull, "r.x"))
                .unwrap(),
            Predicate::AlwaysFalse
        );
    }

    /// An `IN` list loses its repeats (by value: `Long(1)` is `Int(1)` on an int column,
    /// `-0.0` is `0.0`), each value kept where it first appears, for long lists too.
    #[test]
    fn set_literals_lose_their_repeats_in_first_order() {
        let s = schema();
        let b = Binder::new(&s);
        let i = bound("i", 2, PrimitiveType::Int, false);
        let bound_set = b
            .bind(&Predicate::col_set(
                SetOp::In,
                "i",
                vec![
                    Literal::Int(3),
                    Literal::Long(1),
                    Literal::Int(3),
                    Literal::Int(2),
                    Literal::Int(1),
                ],
            ))
            .unwrap();
        let expected = vec![Literal::Int(3), Literal::Int(1), Literal::Int(2)];
        assert_eq!(bound_set, Predicate::set(SetOp::In, i.clone(), expected));
        let zeros = b
            .bind(&Predicate::col_set(
                SetOp::NotIn,
                "f",
                vec![
                    Literal::Float(-0.0),
                    Literal::Float(2.0),
                    Literal::Float(0.0),
                ],
            ))
            .unwrap();
        let Predicate::Set { literals, .. } = &zeros else {
            panic!("{zeros:?}");
        };
        assert_eq!(literals.len(), 2, "{zeros:?}");
        assert!(literals[0] == Literal::Float(-0.0) && literals[1] == Literal::Float(2.0));
        let many: Vec<Literal> = (0..20_000).map(|v| Literal::Long(v % 7_000)).collect();
        let bound_many = b.bind(&Predicate::col_set(SetOp::In, "i", many)).unwrap();
        let expected: Vec<Literal> = (0..7_000).map(Literal::Int).collect();
        assert_eq!(bound_many, Predicate::set(SetOp::In, i, expected));
    }

    #[test]
    fn binds_and_converts() {
        let s = schema();
        let b = Binder::new(&s);
        let i = bound("i", 2, PrimitiveType::Int, false);
        let cases: Vec<(Predicate, BoundPredicate)> = vec![
            (
                Predicate::col_binary(BinaryOp::Lt, "i", Literal::Long(3_000_000_000)),
                Predicate::binary(BinaryOp::LtEq, i.clone(), Literal::Int(i32::MAX)),
            ),
            (
                Predicate::col_binary(BinaryOp::Gt, "i", Literal::Long(3_000_000_000)),
                Predicate::AlwaysFalse,
            ),
            (
                Predicate::col_binary(BinaryOp::NotEq, "i", Literal::Long(3_000_000_000)),
                Predicate::unary(UnaryOp::NotNull, i.clone()),
            ),
            (
                Predicate::col_binary(BinaryOp::Eq, "f", Literal::Double(1.1)),
                Predicate::AlwaysFalse,
            ),
            (
                Predicate::col_unary(UnaryOp::NotNull, "id"),
                Predicate::AlwaysTrue,
            ),
            (
                Predicate::col_set(
                    SetOp::In,
                    "i",
                    vec![Literal::Long(1), Literal::Int(1), Literal::Long(1 << 40)],
                ),
                Predicate::binary(BinaryOp::Eq, i.clone(), Literal::Int(1)),
            ),
            (
                Predicate::col_binary(BinaryOp::StartsWith, "s.a", Literal::String("x".into())),
                Predicate::binary(
                    BinaryOp::StartsWith,
                    bound("s.a", 5, PrimitiveType::String, false),
                    Literal::String("x".into()),
                ),
            ),
        ];
        for (p, expected) in cases {
            assert_eq!(b.bind(&p).unwrap(), expected, "{p}");
        }
        assert!(b.bind(&Predicate::col_unary(UnaryOp::IsNan, "i")).is_err());
        assert!(b
            .bind(&Predicate::col_binary(
                BinaryOp::Eq,
                "f",
                Literal::Float(f32::NAN)
            ))
            .is_err());
        assert!(b
            .bind(&Predicate::col_binary(
                BinaryOp::Eq,
                "nope",
                Literal::Int(1)
            ))
            .is_err());
        assert!(b
            .bind(&Predicate::col_binary(BinaryOp::Eq, "I", Literal::Int(1)))
            .is_err());
        assert!(b
            .with_case_sensitive(false)
            .bind(&Predicate::col_binary(BinaryOp::Eq, "I", Literal::Int(1)))
            .is_ok());
    }
}
