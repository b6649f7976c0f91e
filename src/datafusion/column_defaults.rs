//! A table schema's v3 default values (spec "Default values") as DataFusion values:
//! the `initial-default`s the scan reads for columns and struct fields a data file
//! lacks, and the `write-default`s `INSERT` fills into the columns it does not list.

use std::collections::HashMap;

use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Expr;
use serde_json::Value as JsonValue;

use super::scalar::literal_to_scalar;
use crate::error::Result;
use crate::spec::{Literal, NestedField, Schema, Type};

/// Field id → `initial-default` of every field that has one: the top-level columns and
/// the fields of structs at any depth (through structs, list elements and map keys and
/// values), each as a value of its Arrow type in `arrow_schema` (the table's Arrow schema
/// of `schema`).
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
    match (field.field_type.as_ref(), arrow_field.data_type()) {
        (Type::Struct(s), DataType::Struct(arrow)) => {
            for (child, arrow_child) in s.fields.iter().zip(arrow.iter()) {
                collect(child, arrow_child, &format!("{path}.{}", child.name), out)?;
            }
        }
        (Type::List(l), DataType::List(e) | DataType::LargeList(e)) => {
            collect(&l.element_field, e, &format!("{path}.element"), out)?;
        }
        (Type::Map(m), DataType::Map(entries, _)) => {
            if let DataType::Struct(kv) = entries.data_type() {
                if let (Some(k), Some(v)) = (kv.first(), kv.get(1)) {
                    collect(&m.key_field, k, &format!("{path}.key"), out)?;
                    collect(&m.value_field, v, &format!("{path}.value"), out)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
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

/// The `write-default` of the struct field at `path` (a top-level column, then field
/// names through structs, as `UPDATE … SET st.c = DEFAULT` names it) as a literal of its
/// Arrow type in `arrow_schema` (the table's Arrow schema of `schema`); `None` when the
/// field has none or the path names no such field.
///
/// Errors: a default that is not a value of its field's type (naming the field).
pub fn struct_field_write_default(
    schema: &Schema,
    arrow_schema: &ArrowSchema,
    path: &[String],
) -> Result<Option<Expr>> {
    let Some((top, inner)) = path.split_first() else {
        return Ok(None);
    };
    let found = schema
        .columns()
        .iter()
        .zip(arrow_schema.fields())
        .find(|(f, _)| f.name == *top);
    let Some((mut field, arrow_field)) = found else {
        return Ok(None);
    };
    let mut arrow_type = arrow_field.data_type();
    for name in inner {
        let (Type::Struct(s), DataType::Struct(arrow)) = (field.field_type.as_ref(), arrow_type)
        else {
            return Ok(None);
        };
        let Some((f, a)) = s
            .fields
            .iter()
            .zip(arrow.iter())
            .find(|(f, _)| f.name == *name)
        else {
            return Ok(None);
        };
        field = f;
        arrow_type = a.data_type();
    }
    let Some(default) = &field.write_default else {
        return Ok(None);
    };
    Ok(
        scalar(default, field, arrow_type, &path.join("."), "write-default")?
            .map(|v| Expr::Literal(v, None)),
    )
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

    fn with_default(mut f: NestedField) -> NestedField {
        f.initial_default = Some(serde_json::json!(5));
        f
    }

    /// Defaults of struct fields inside list elements and map values are collected as
    /// those of top-level columns and struct fields are (the scan reads them at any
    /// depth), as values of their Arrow types.
    #[test]
    fn defaults_inside_lists_and_maps_are_collected() {
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
                value_field: NestedField::optional(
                    7,
                    "value",
                    Type::Struct(StructType::new(vec![with_default(NestedField::optional(
                        8,
                        "y",
                        Type::Primitive(PrimitiveType::Long),
                    ))])),
                ),
            }),
        );
        let top = with_default(NestedField::optional(1, "n", int()));
        let schema = Schema::new(0, vec![top, list, map]);
        let arrow = crate::spec::arrow::schema_to_arrow(&schema).expect("arrow schema");
        let defaults = initial_defaults(&schema, &arrow).expect("defaults");
        assert_eq!(
            defaults,
            HashMap::from([
                (1, ScalarValue::Int32(Some(5))),
                (4, ScalarValue::Int32(Some(5))),
                (8, ScalarValue::Int64(Some(5))),
            ])
        );
        // a default that is not a value of its type names the nested field
        let mut bad = schema.columns()[2].clone();
        if let Type::Map(m) = bad.field_type.as_mut() {
            if let Type::Struct(s) = m.value_field.field_type.as_mut() {
                s.fields[0].initial_default = Some(serde_json::json!("five"));
            }
        }
        let schema = Schema::new(0, vec![bad]);
        let arrow = crate::spec::arrow::schema_to_arrow(&schema).expect("arrow schema");
        let err = initial_defaults(&schema, &arrow).expect_err("bad default");
        assert!(err.to_string().contains("'m.value.y'"), "{err}");
    }
}
