//! The v3 `write-default`s (spec "Default values") of struct fields a written struct
//! value leaves out: `icefloe_fill_defaults(value, defaults)`.
//!
//! The spec: a writer that does not supply a field's value writes its `write-default`.
//! `INSERT INTO t (cols)` and `MERGE … INSERT (cols)` fill the columns they do not list
//! (`TableProvider::get_column_default`, module `column_defaults`); a struct value that
//! lacks one of its struct's fields (`named_struct('a', 1)` into `STRUCT<a INT, c INT>`,
//! `c` with `write-default` 7) gets the field's `write-default` the same way, at any depth:
//! structs in structs, the structs of list elements and of map keys and values. A field
//! without a `write-default` stays missing, and the write refuses the value naming it
//! (module [`struct_fields`](super::struct_fields)); so does an extra field. A null
//! struct stays null (its fields are not written).
//!
//! How: the written value (after its fields are renamed to the table's,
//! [`struct_rename`](super::struct_rename)) is wrapped in [`FILL_DEFAULTS`] with a
//! literal of the defaults ([`write_defaults_of`]): a struct value whose type holds only
//! the paths to fields that have a `write-default`, each such field holding its default
//! (a list's element under a field `element`, a map's key and value under `key` and
//! `value`). The function appends to each struct of the value the fields of the
//! defaults' struct it lacks, each its default in every row, and leaves the rest as it
//! is; the cast to the column's type that follows orders the fields by name as for any
//! struct value. The call crosses plan codecs by name (its arguments are the value and a
//! literal).
//!
//! Reached by `INSERT … SELECT` and `UPDATE … SET st = …` (an analyzer rule,
//! [`StructFieldsCheck`](super::struct_fields::StructFieldsCheck)) and `MERGE`'s `UPDATE
//! SET` and `INSERT` values. `INSERT … VALUES` with such a struct is refused by DataFusion
//! 55's planner before any rule sees it ("Types don't match", module
//! `sql::values_struct_fields`): give its rows as a `SELECT` (`INSERT INTO t SELECT 1,
//! named_struct('a', 1)`). So is a list of such structs in `INSERT … SELECT` ("Cannot
//! automatically convert List(Struct(…)) …"): the function fills lists and maps for
//! whatever plan reaches it with one, which SQL through DataFusion 55 does not.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, GenericListArray, MapArray, OffsetSizeTrait, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{exec_err, DataFusionError as DFError, Result as DFResult, ScalarValue};
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{
    Cast, ColumnarValue, DmlStatement, Expr, ExprSchemable, LogicalPlan, Projection,
    ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TryCast, Volatility,
};

use super::scalar::literal_to_scalar;
use super::table_provider::IcebergTableProvider;
use crate::error::Result;
use crate::spec::{Literal, NestedField, Type};

/// The name of the scalar function (also how plan codecs send it: by name).
pub const FILL_DEFAULTS: &str = "icefloe_fill_defaults";

/// `icefloe_fill_defaults(value, defaults)` (see the module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct FillDefaults {
    signature: Signature,
}

impl Default for FillDefaults {
    fn default() -> Self {
        Self {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

/// The [`FillDefaults`] function.
pub fn fill_defaults_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(FillDefaults::default()))
}

/// The defaults literal of a field of the table (`field`, of Arrow type `arrow`): the
/// `write-default`s of the fields inside it that have one, as described in the module
/// docs, as an array of one row; `None` when no field inside it has one (a primitive
/// field: its own `write-default`, for a field of a struct).
///
/// Errors: a default that is not a value of its field's type (naming the field by
/// `path`).
fn defaults_array(field: &NestedField, arrow: &DataType, path: &str) -> Result<Option<ArrayRef>> {
    let mut children: Vec<(String, ArrayRef)> = vec![];
    match (field.field_type.as_ref(), arrow) {
        (Type::Primitive(p), target) => {
            let Some(json) = &field.write_default else {
                return Ok(None);
            };
            if json.is_null() {
                return Ok(None);
            }
            let at = |e: crate::error::Error| e.context(format!("write-default of field '{path}'"));
            let literal = Literal::from_json(json, p).map_err(at)?;
            let value = literal_to_scalar(Some(&literal), target).map_err(at)?;
            return Ok(Some(value.to_array_of_size(1)?));
        }
        (Type::Struct(s), DataType::Struct(arrow)) => {
            for (child, arrow_child) in s.fields.iter().zip(arrow.iter()) {
                let child_path = format!("{path}.{}", child.name);
                if let Some(a) = defaults_array(child, arrow_child.data_type(), &child_path)? {
                    children.push((child.name.clone(), a));
                }
            }
        }
        (Type::List(l), DataType::List(e) | DataType::LargeList(e)) => {
            let inner = format!("{path}.element");
            if let Some(a) = struct_defaults(&l.element_field, e.data_type(), &inner)? {
                children.push(("element".into(), a));
            }
        }
        (Type::Map(m), DataType::Map(entries, _)) => {
            if let DataType::Struct(kv) = entries.data_type() {
                if let (Some(k), Some(v)) = (kv.first(), kv.get(1)) {
                    let key = struct_defaults(&m.key_field, k.data_type(), &format!("{path}.key"))?;
                    let value =
                        struct_defaults(&m.value_field, v.data_type(), &format!("{path}.value"))?;
                    children.extend(key.map(|a| ("key".to_string(), a)));
                    children.extend(value.map(|a| ("value".to_string(), a)));
                }
            }
        }
        _ => {}
    }
    if children.is_empty() {
        return Ok(None);
    }
    let fields: Fields = children
        .iter()
        .map(|(name, a)| Field::new(name, a.data_type().clone(), true))
        .collect();
    let arrays = children.into_iter().map(|(_, a)| a).collect();
    Ok(Some(Arc::new(StructArray::try_new(fields, arrays, None)?)))
}

/// [`defaults_array`] of a list's element or a map's key or value: only a struct's
/// fields are filled (a list element or map value a written list or map has is never
/// missing).
fn struct_defaults(field: &NestedField, arrow: &DataType, path: &str) -> Result<Option<ArrayRef>> {
    match field.field_type.as_ref() {
        Type::Primitive(_) => Ok(None),
        _ => defaults_array(field, arrow, path),
    }
}

/// The defaults literal ([`FILL_DEFAULTS`]'s second argument) of the top-level column
/// `column` (of Arrow type `arrow`, the table's): `None` when no struct field inside it
/// has a `write-default`.
///
/// Errors: a default that is not a value of its field's type (naming the field).
pub(crate) fn write_defaults_of(
    column: &NestedField,
    arrow: &DataType,
) -> Result<Option<ScalarValue>> {
    match struct_defaults(column, arrow, &column.name)? {
        Some(array) => Ok(Some(ScalarValue::try_from_array(&array, 0)?)),
        None => Ok(None),
    }
}

/// Top-level column name → its defaults literal ([`write_defaults_of`]), for the columns
/// of `schema` (whose Arrow schema is `arrow`) with a struct field that has a
/// `write-default` at any depth.
///
/// Errors: a default that is not a value of its field's type (naming the field).
pub(crate) fn struct_write_defaults(
    schema: &crate::spec::Schema,
    arrow: &datafusion::arrow::datatypes::Schema,
) -> Result<std::collections::HashMap<String, ScalarValue>> {
    let mut out = std::collections::HashMap::new();
    for (column, arrow_field) in schema.columns().iter().zip(arrow.fields()) {
        if let Some(defaults) = write_defaults_of(column, arrow_field.data_type())? {
            out.insert(column.name.clone(), defaults);
        }
    }
    Ok(out)
}

/// `expr`, a value of type `given` written into a column whose defaults literal is
/// `defaults` ([`write_defaults_of`]), with the `write-default`s of the struct fields it
/// lacks filled in; `expr` itself when it lacks none.
pub(crate) fn fill_defaults(expr: Expr, given: &DataType, defaults: &ScalarValue) -> Expr {
    if filled_type(given, &defaults.data_type()) == *given {
        return expr;
    }
    fill_defaults_udf().call(vec![expr, Expr::Literal(defaults.clone(), None)])
}

/// The type of a value of type `given` once the fields of `defaults` (a defaults
/// literal's type) it lacks are appended.
fn filled_type(given: &DataType, defaults: &DataType) -> DataType {
    let DataType::Struct(d) = defaults else {
        return given.clone();
    };
    match given {
        DataType::Struct(g) => {
            let mut fields: Vec<FieldRef> = g
                .iter()
                .map(|f| match d.find(f.name()) {
                    Some((_, df)) => Arc::new(
                        f.as_ref()
                            .clone()
                            .with_data_type(filled_type(f.data_type(), df.data_type())),
                    ),
                    None => Arc::clone(f),
                })
                .collect();
            for df in d.iter() {
                if g.find(df.name()).is_none() && !df.data_type().is_nested() {
                    fields.push(Arc::new(Field::new(
                        df.name(),
                        df.data_type().clone(),
                        true,
                    )));
                }
            }
            DataType::Struct(fields.into())
        }
        DataType::List(e) | DataType::LargeList(e) => {
            let Some((_, de)) = d.find("element") else {
                return given.clone();
            };
            let e = Arc::new(
                e.as_ref()
                    .clone()
                    .with_data_type(filled_type(e.data_type(), de.data_type())),
            );
            match given {
                DataType::List(_) => DataType::List(e),
                _ => DataType::LargeList(e),
            }
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return given.clone();
            };
            let kv: Fields = kv
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let name = if i == 0 { "key" } else { "value" };
                    match d.find(name) {
                        Some((_, df)) => Arc::new(
                            f.as_ref()
                                .clone()
                                .with_data_type(filled_type(f.data_type(), df.data_type())),
                        ),
                        None => Arc::clone(f),
                    }
                })
                .collect();
            let entries = entries
                .as_ref()
                .clone()
                .with_data_type(DataType::Struct(kv));
            DataType::Map(Arc::new(entries), *sorted)
        }
        other => other.clone(),
    }
}

/// The list `l` (of field `f`) with its elements filled from `element_defaults`
/// ([`fill`]), offsets and nulls kept; `List` and `LargeList` alike.
fn fill_list<O: OffsetSizeTrait>(
    l: &GenericListArray<O>,
    f: &FieldRef,
    element_defaults: &ArrayRef,
) -> DFResult<ArrayRef> {
    let values = fill(l.values(), element_defaults)?;
    let f = Arc::new(
        f.as_ref()
            .clone()
            .with_data_type(values.data_type().clone()),
    );
    Ok(Arc::new(GenericListArray::<O>::try_new(
        f,
        l.offsets().clone(),
        values,
        l.nulls().cloned(),
    )?))
}

/// `value` with the fields of `defaults` (a one-row defaults array) it lacks appended
/// ([`filled_type`]).
fn fill(value: &ArrayRef, defaults: &ArrayRef) -> DFResult<ArrayRef> {
    let Some(d) = defaults.as_struct_opt() else {
        return Ok(Arc::clone(value));
    };
    let child = |name: &str| d.column_by_name(name).cloned();
    match value.data_type() {
        DataType::Struct(fields) => {
            let s = value.as_struct();
            let mut out_fields: Vec<FieldRef> = vec![];
            let mut columns: Vec<ArrayRef> = vec![];
            for (f, column) in fields.iter().zip(s.columns()) {
                let column = match child(f.name()) {
                    Some(dc) => fill(column, &dc)?,
                    None => Arc::clone(column),
                };
                out_fields.push(Arc::new(
                    f.as_ref()
                        .clone()
                        .with_data_type(column.data_type().clone()),
                ));
                columns.push(column);
            }
            let DataType::Struct(default_fields) = d.data_type() else {
                return exec_err!("{FILL_DEFAULTS}: the defaults are not a struct");
            };
            for (df, dc) in default_fields.iter().zip(d.columns()) {
                if fields.find(df.name()).is_some() || df.data_type().is_nested() {
                    continue;
                }
                let default = ScalarValue::try_from_array(dc, 0)?;
                out_fields.push(Arc::new(Field::new(
                    df.name(),
                    df.data_type().clone(),
                    true,
                )));
                columns.push(default.to_array_of_size(s.len())?);
            }
            Ok(Arc::new(StructArray::try_new(
                out_fields.into(),
                columns,
                s.nulls().cloned(),
            )?))
        }
        DataType::List(f) => match child("element") {
            Some(de) => fill_list(value.as_list::<i32>(), f, &de),
            None => Ok(Arc::clone(value)),
        },
        DataType::LargeList(f) => match child("element") {
            Some(de) => fill_list(value.as_list::<i64>(), f, &de),
            None => Ok(Arc::clone(value)),
        },
        DataType::Map(entries_field, sorted) => {
            let m = value.as_map();
            let entries = m.entries();
            let DataType::Struct(kv) = entries.data_type() else {
                return Ok(Arc::clone(value));
            };
            let mut columns = vec![];
            let mut fields: Vec<FieldRef> = vec![];
            for (i, (f, column)) in kv.iter().zip(entries.columns()).enumerate() {
                let name = if i == 0 { "key" } else { "value" };
                let column = match child(name) {
                    Some(dc) => fill(column, &dc)?,
                    None => Arc::clone(column),
                };
                fields.push(Arc::new(
                    f.as_ref()
                        .clone()
                        .with_data_type(column.data_type().clone()),
                ));
                columns.push(column);
            }
            let fields: Fields = fields.into();
            let entries = StructArray::try_new(fields.clone(), columns, entries.nulls().cloned())?;
            let entries_field = Arc::new(
                entries_field
                    .as_ref()
                    .clone()
                    .with_data_type(DataType::Struct(fields)),
            );
            Ok(Arc::new(MapArray::try_new(
                entries_field,
                m.offsets().clone(),
                entries,
                m.nulls().cloned(),
                *sorted,
            )?))
        }
        _ => Ok(Arc::clone(value)),
    }
}

/// The rows an `INSERT` or `UPDATE` of `dml` writes (`Dml ← Projection` of casts to the
/// table's column types) with the `write-default`s of the struct fields their values
/// lack filled in ([`fill_defaults`]); `None` when the target is no icefloe table or
/// nothing is filled. The types of the rows do not change (the casts stay).
///
/// Errors: a stored default that is not a value of its field's type (naming the field);
/// DataFusion's, typing a value.
pub(crate) fn filled_written(dml: &DmlStatement) -> DFResult<Option<LogicalPlan>> {
    let LogicalPlan::Projection(p) = dml.input.as_ref() else {
        return Ok(None);
    };
    let Ok(provider) = source_as_provider(&dml.target) else {
        return Ok(None);
    };
    let Some(provider) = provider.downcast_ref::<IcebergTableProvider>() else {
        return Ok(None);
    };
    let columns = provider.iceberg_schema().columns();
    let arrow = provider.arrow_schema();
    let mut changed = false;
    let mut exprs = Vec::with_capacity(p.expr.len());
    for (expr, out) in p.expr.iter().zip(p.schema.fields().iter()) {
        let found = columns
            .iter()
            .zip(arrow.fields())
            .find(|(c, _)| c.name == *out.name());
        let defaults = match found {
            Some((column, arrow_field)) => {
                write_defaults_of(column, arrow_field.data_type()).map_err(DFError::from)?
            }
            None => None,
        };
        let (Some(defaults), Expr::Alias(alias)) = (defaults, expr) else {
            exprs.push(expr.clone());
            continue;
        };
        let (Expr::Cast(Cast { expr: value, field })
        | Expr::TryCast(TryCast { expr: value, field })) = alias.expr.as_ref()
        else {
            exprs.push(expr.clone());
            continue;
        };
        let given = value.get_type(p.input.schema())?;
        let filled = fill_defaults(value.as_ref().clone(), &given, &defaults);
        if filled == **value {
            exprs.push(expr.clone());
            continue;
        }
        changed = true;
        let field = Arc::clone(field);
        let cast = match alias.expr.as_ref() {
            Expr::TryCast(_) => Expr::TryCast(TryCast {
                expr: Box::new(filled),
                field,
            }),
            _ => Expr::Cast(Cast {
                expr: Box::new(filled),
                field,
            }),
        };
        let mut alias = alias.clone();
        alias.expr = Box::new(cast);
        exprs.push(Expr::Alias(alias));
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(LogicalPlan::Projection(
        Projection::try_new_with_schema(exprs, Arc::clone(&p.input), Arc::clone(&p.schema))?,
    )))
}

impl ScalarUDFImpl for FillDefaults {
    fn name(&self) -> &str {
        FILL_DEFAULTS
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> DFResult<DataType> {
        match arg_types {
            [value, defaults] => Ok(filled_type(value, defaults)),
            _ => exec_err!("{FILL_DEFAULTS} takes a value and its defaults"),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DFResult<FieldRef> {
        let [value, defaults] = args.arg_fields else {
            return exec_err!("{FILL_DEFAULTS} takes a value and its defaults");
        };
        Ok(Arc::new(Field::new(
            self.name(),
            filled_type(value.data_type(), defaults.data_type()),
            value.is_nullable(),
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let [value, ColumnarValue::Scalar(defaults)] = args.args.as_slice() else {
            return exec_err!("{FILL_DEFAULTS} takes a value and a literal of its defaults");
        };
        let defaults = defaults.to_array_of_size(1)?;
        match value {
            ColumnarValue::Array(a) => Ok(ColumnarValue::Array(fill(a, &defaults)?)),
            ColumnarValue::Scalar(s) => {
                let filled = fill(&s.to_array_of_size(1)?, &defaults)?;
                Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                    &filled, 0,
                )?))
            }
        }
    }
}
