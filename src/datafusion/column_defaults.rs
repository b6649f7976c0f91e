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
    if let (Type::Struct(s), DataType::Struct(arrow)) =
        (field.field_type.as_ref(), arrow_field.data_type())
    {
        for (child, arrow_child) in s.fields.iter().zip(arrow.iter()) {
            collect(child, arrow_child, &format!("{path}.{}", child.name), out)?;
        }
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
