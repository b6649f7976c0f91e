//! Whether files written with one schema can still be committed to a table whose current
//! schema changed while they were written.
//!
//! A write encodes its rows with the schema current when it started (field ids and
//! types in the Parquet files). Another commit may change the schema before the write
//! commits: `ALTER TABLE` only makes changes every old file stays readable under
//! (spec: "Schema Evolution": promotions, new optional columns, renames), but
//! `CREATE OR REPLACE TABLE` / `REPLACE TABLE` keeps the field id of a column of the same
//! name whatever its new type or nullability. Files typed `int` under a column that is now
//! `string`, or holding nulls in a column that is now required, would make the branch
//! unreadable. The transaction checks this on every attempt (not only Java's checks,
//! which let such an append land) and fails without retrying, since retrying cannot
//! change what the files hold.

use crate::error::{Error, ErrorKind, Result};
use crate::spec::{FormatVersion, NestedField, Schema, Type};

use super::check_promotion;

/// Check that data written with `written` reads under `now` (the table's current schema
/// at the attempt), for every field of `written` that `now` still has by id, and every
/// required field of `now` the files lack.
///
/// Rules: a primitive keeps its type or takes a valid promotion
/// ([`check_promotion`]); a struct, list or map stays one; an optional field does not
/// become required; a required field of `now` that `written` does not have needs an
/// `initial-default` (spec: "Default values").
///
/// Errors: [`ErrorKind::ValidationFailed`] naming the column, its field id, both types
/// (or the nullability) and the two schema ids.
pub(crate) fn check_written_schema(
    written: &Schema,
    now: &Schema,
    version: FormatVersion,
) -> Result<()> {
    if written == now {
        return Ok(());
    }
    let fail = |what: String| {
        Err(Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "the files of this write hold rows of schema {} but a concurrent commit \
                 made schema {} current, under which they cannot be read: {what}; write \
                 the rows again",
                written.schema_id, now.schema_id
            ),
        ))
    };
    for field in all_fields(written.columns()) {
        let Some(current) = now.field_by_id(field.id) else {
            continue;
        };
        if !field.required && current.required {
            return fail(format!(
                "column '{}' (field id {}) is optional in the files and required now",
                current.name, field.id
            ));
        }
        let compatible = match (field.field_type.as_ref(), current.field_type.as_ref()) {
            (Type::Primitive(from), Type::Primitive(to)) => {
                check_promotion(*from, *to, version).is_ok()
            }
            (Type::Struct(_), Type::Struct(_))
            | (Type::List(_), Type::List(_))
            | (Type::Map(_), Type::Map(_)) => true,
            _ => false,
        };
        if !compatible {
            return fail(format!(
                "column '{}' (field id {}) is {} in the files and {} now",
                current.name, field.id, field.field_type, current.field_type
            ));
        }
    }
    for field in required_fields(now.columns()) {
        if written.field_by_id(field.id).is_none() && field.initial_default.is_none() {
            return fail(format!(
                "required column '{}' (field id {}) is not in the files and has no \
                 initial-default",
                field.name, field.id
            ));
        }
    }
    Ok(())
}

/// Every field of `fields`, nested ones included (struct fields, list elements, map keys
/// and values).
fn all_fields(fields: &[NestedField]) -> Vec<&NestedField> {
    let mut out = vec![];
    let mut stack: Vec<&NestedField> = fields.iter().rev().collect();
    while let Some(f) = stack.pop() {
        out.push(f);
        match f.field_type.as_ref() {
            Type::Struct(s) => stack.extend(s.fields.iter().rev()),
            Type::List(l) => stack.push(&l.element_field),
            Type::Map(m) => {
                stack.push(&m.value_field);
                stack.push(&m.key_field);
            }
            Type::Primitive(_) => {}
        }
    }
    out
}

/// The fields of `fields` that every row must hold: required ones reached through
/// required parents only (a required field of an optional struct is absent with it).
fn required_fields(fields: &[NestedField]) -> Vec<&NestedField> {
    let mut out = vec![];
    let mut stack: Vec<&NestedField> = fields.iter().filter(|f| f.required).collect();
    while let Some(f) = stack.pop() {
        out.push(f);
        if let Type::Struct(s) = f.field_type.as_ref() {
            stack.extend(s.fields.iter().filter(|c| c.required));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{PrimitiveType, StructType};

    fn schema(id: i32, fields: Vec<NestedField>) -> Schema {
        Schema::new(id, fields)
    }

    fn int(id: i32, name: &str) -> NestedField {
        NestedField::optional(id, name, Type::Primitive(PrimitiveType::Int))
    }

    #[test]
    fn promotions_and_new_optional_columns_pass() {
        let written = schema(0, vec![int(1, "a"), int(2, "b")]);
        let now = schema(
            1,
            vec![
                NestedField::optional(1, "a", Type::Primitive(PrimitiveType::Long)),
                NestedField::optional(3, "c", Type::Primitive(PrimitiveType::String)),
            ],
        );
        assert!(check_written_schema(&written, &now, FormatVersion::V2).is_ok());
    }

    #[test]
    fn a_changed_type_a_new_requirement_or_kind_fails_naming_the_column() {
        let written = schema(
            0,
            vec![
                int(1, "a"),
                NestedField::optional(2, "st", Type::Struct(StructType::new(vec![int(3, "x")]))),
            ],
        );
        let cases = [
            (
                vec![NestedField::optional(
                    1,
                    "a",
                    Type::Primitive(PrimitiveType::String),
                )],
                "column 'a' (field id 1) is int in the files and string now",
            ),
            (
                vec![NestedField::required(
                    1,
                    "a",
                    Type::Primitive(PrimitiveType::Int),
                )],
                "column 'a' (field id 1) is optional in the files and required now",
            ),
            (
                vec![NestedField::optional(
                    2,
                    "st",
                    Type::Primitive(PrimitiveType::Long),
                )],
                "column 'st' (field id 2) is struct<",
            ),
            (
                vec![NestedField::optional(
                    2,
                    "st",
                    Type::Struct(StructType::new(vec![NestedField::optional(
                        3,
                        "x",
                        Type::Primitive(PrimitiveType::Date),
                    )])),
                )],
                "column 'x' (field id 3) is int in the files and date now",
            ),
            (
                vec![NestedField::required(
                    9,
                    "z",
                    Type::Primitive(PrimitiveType::Int),
                )],
                "required column 'z' (field id 9) is not in the files",
            ),
        ];
        for (fields, expected) in cases {
            let err = check_written_schema(&written, &schema(5, fields), FormatVersion::V2)
                .expect_err(expected);
            assert_eq!(err.kind(), ErrorKind::ValidationFailed);
            assert!(
                err.message().contains(expected)
                    && err.message().contains("schema 0")
                    && err.message().contains("schema 5"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_required_column_with_an_initial_default_passes() {
        let written = schema(0, vec![int(1, "a")]);
        let mut z = NestedField::required(9, "z", Type::Primitive(PrimitiveType::Int));
        z.initial_default = Some(serde_json::json!(7));
        let now = schema(1, vec![int(1, "a"), z]);
        assert!(check_written_schema(&written, &now, FormatVersion::V3).is_ok());
    }
}
