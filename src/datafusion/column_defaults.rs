//! A table schema's v3 default values (spec "Default values") as DataFusion values:
//! the `initial-default`s the scan reads for columns and struct fields a data file
//! lacks, and the `write-default`s `INSERT` fills into the columns it does not list.

use std::collections::HashMap;

use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Expr;
use serde_json::Value as JsonValue;

use super::scalar::literal_to_scalar;
use crate::error::{Error, Result};
use crate::spec::{Literal, NestedField, Schema, Type};

/// Field id → `initial-default` of every field that has one: the top-level columns and
/// the fields of structs (at any depth through structs), each as a value of its Arrow
/// type in `arrow_schema` (the table's Arrow schema of `schema`).
///
/// Errors: a default that is not a value of its field's type (naming the field).
pub fn initial_defaults(
    schema: &Schema,
    arrow_schema: &ArrowSchema,
) -> Result<HashMap<i32, ScalarValue>> {
    let mut out = HashMap::new();
    for (field, arrow_field) in schema.columns().iter().zip(arrow_schema.fields()) {
        collect(field, arrow_field, &field.name, &mut out)?;
    }
    Ok(out)
}

fn collect(
    field: &NestedField,
    arrow_field: &Field,
    path: &str,
    out: &mut HashMap<i32, ScalarValue>,
) -> Result<()> {
    if let Some(default) = &field.initial_default {
        let value = scalar(
            default,
            field,
            arrow_field.data_type(),
            path,
            "initial-default",
        )?;
        if let Some(value) = value {
            out.insert(field.id, value);
        }
    }
    match field.field_type.as_ref() {
        Type::Struct(s) => {
            if let DataType::Struct(arrow) = arrow_field.data_type() {
                for (child, arrow_child) in s.fields.iter().zip(arrow.iter()) {
                    collect(child, arrow_child, &format!("{path}.{}", child.name), out)?;
                }
            }
        }
        Type::List(l) => refuse_repeated_defaults(&l.element_field, &format!("{path}.element"))?,
        Type::Map(m) => {
            refuse_repeated_defaults(&m.key_field, &format!("{path}.key"))?;
            refuse_repeated_defaults(&m.value_field, &format!("{path}.value"))?;
        }
        Type::Primitive(_) => {}
    }
    Ok(())
}

/// Refuse an `initial-default` on `field` (inside a list or a map) or below it: the scan
/// fills defaults into columns and struct fields only, and reading NULL where the spec
/// says the default would be wrong rows.
fn refuse_repeated_defaults(field: &NestedField, path: &str) -> Result<()> {
    if field.initial_default.is_some() {
        return Err(Error::unsupported(format!(
            "field '{path}' (id {}) has an initial-default inside a list or map: reading \
             such defaults is not supported yet",
            field.id
        )));
    }
    match field.field_type.as_ref() {
        Type::Struct(s) => s
            .fields
            .iter()
            .try_for_each(|c| refuse_repeated_defaults(c, &format!("{path}.{}", c.name))),
        Type::List(l) => refuse_repeated_defaults(&l.element_field, &format!("{path}.element")),
        Type::Map(m) => {
            refuse_repeated_defaults(&m.key_field, &format!("{path}.key"))?;
            refuse_repeated_defaults(&m.value_field, &format!("{path}.value"))
        }
        Type::Primitive(_) => Ok(()),
    }
}

/// Top-level column name → its `write-default` as a literal expression of the column's
/// Arrow type (what DataFusion's `INSERT` planner fills in for a column the statement
/// does not list, through `TableProvider::get_column_default`).
///
/// Errors: a default that is not a value of its column's type (naming the column).
pub fn write_defaults(
    schema: &Schema,
    arrow_schema: &ArrowSchema,
) -> Result<HashMap<String, Expr>> {
    let mut out = HashMap::new();
    for (field, arrow_field) in schema.columns().iter().zip(arrow_schema.fields()) {
        let Some(default) = &field.write_default else {
            continue;
        };
        let value = scalar(
            default,
            field,
            arrow_field.data_type(),
            &field.name,
            "write-default",
        )?;
        if let Some(value) = value {
            out.insert(field.name.clone(), Expr::Literal(value, None));
        }
    }
    Ok(out)
}

/// A default's JSON form as a value of `target`; `None` for a JSON null (no default).
fn scalar(
    json: &JsonValue,
    field: &NestedField,
    target: &DataType,
    path: &str,
    which: &str,
) -> Result<Option<ScalarValue>> {
    if json.is_null() {
        return Ok(None);
    }
    // a struct's default is its fields' (spec "Default values"); lists and maps have none
    let Some(p) = field.field_type.as_primitive() else {
        return Ok(None);
    };
    let lit =
        Literal::from_json(json, p).map_err(|e| e.context(format!("{which} of field '{path}'")))?;
    literal_to_scalar(Some(&lit), target)
        .map(Some)
        .map_err(|e| e.context(format!("{which} of field '{path}'")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{ListType, MapType, PrimitiveType, StructType};
    use crate::ErrorKind;

    fn with_default(mut f: NestedField) -> NestedField {
        f.initial_default = Some(serde_json::json!(5));
        f
    }

    /// A default inside a list element or a map value would be read as NULL by the
    /// scan: it is refused, naming the field, instead of giving wrong rows.
    #[test]
    fn defaults_inside_lists_and_maps_are_refused() {
        let int = || Type::Primitive(PrimitiveType::Int);
        let element = NestedField::optional(
            3,
            "element",
            Type::Struct(StructType::new(vec![with_default(NestedField::optional(
                4,
                "x",
                int(),
            ))])),
        );
        let list = NestedField::optional(
            2,
            "arr",
            Type::List(ListType {
                element_field: element,
            }),
        );
        let map = NestedField::optional(
            5,
            "m",
            Type::Map(MapType {
                key_field: NestedField::required(6, "key", int()),
                value_field: with_default(NestedField::optional(7, "value", int())),
            }),
        );
        for (field, named) in [(list, "arr.element.x"), (map, "m.value")] {
            let schema = Schema::new(0, vec![field.clone()]);
            let arrow = ArrowSchema::new(vec![Field::new(&field.name, DataType::Null, true)]);
            let err = initial_defaults(&schema, &arrow).expect_err("refused");
            assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
            assert!(err.to_string().contains(&format!("'{named}'")), "{err}");
        }
        // a top-level default is fine
        let top = with_default(NestedField::optional(1, "n", int()));
        let schema = Schema::new(0, vec![top]);
        let arrow = ArrowSchema::new(vec![Field::new("n", DataType::Int32, true)]);
        let defaults = initial_defaults(&schema, &arrow).expect("top-level default");
        assert_eq!(defaults[&1], ScalarValue::Int32(Some(5)));
    }
}
