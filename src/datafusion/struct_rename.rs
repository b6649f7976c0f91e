//! `icefloe_rename_fields(value, names)`: `value` with the struct field names (at any
//! depth: struct fields, list elements, map keys and values) of `names`, a typed NULL
//! whose type has the same shape; the values are not touched (Arrow arrays are renamed
//! by rebuilding their fields, no data is copied).
//!
//! Why: DataFusion's casts of a struct value to a table's struct type match fields by
//! their exact names (`datafusion_common::nested_struct`), so a value whose field names
//! differ from the table's only in case (`named_struct('MyField', 1)` into `STRUCT<myfield
//! INT>`), or that has DataFusion's positional names (`struct(4, 'four')`, fields `c0`,
//! `c1`), would be written with nulls. A write first renames such a value's fields to the
//! table's ([`renamed_type`] decides which), as Spark resolves struct fields
//! case-insensitively (`spark.sql.caseSensitive=false`) and takes an unnamed struct by
//! position (`TableOutputResolver`). The call crosses plan codecs by name (its
//! argument is a literal).

use std::sync::Arc;

use datafusion::arrow::array::{
    make_array, Array, ArrayRef, AsArray, LargeListArray, ListArray, MapArray, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{exec_err, internal_err, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

/// The name of the scalar function (also how plan codecs send it: by name).
pub const RENAME_FIELDS: &str = "icefloe_rename_fields";

/// `icefloe_rename_fields(value, names)` (see the module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct RenameFields {
    signature: Signature,
}

impl Default for RenameFields {
    fn default() -> Self {
        Self {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

/// The [`RenameFields`] function.
pub fn rename_fields_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(RenameFields::default()))
}

/// `expr` (of type `given`) with the field names of `renamed` (a type of the same shape,
/// from [`renamed_type`]).
///
/// Errors: DataFusion's, making the typed NULL of `renamed`.
pub(crate) fn rename_fields(expr: Expr, renamed: &DataType) -> DFResult<Expr> {
    let names = Expr::Literal(ScalarValue::try_from(renamed)?, None);
    Ok(rename_fields_udf().call(vec![expr, names]))
}

/// Whether `name` is one DataFusion's `struct(…)` gives its `i`-th field (`c0`, `c1`, …).
fn positional_name(name: &str, i: usize) -> bool {
    name.strip_prefix('c') == Some(i.to_string().as_str())
}

/// The expected field that given field `name` is, matched by name: the one of that exact
/// name, else the one whose name differs only in case when exactly one does and no other
/// given field (in `given`) names it exactly or in another case.
fn matching<'e>(name: &str, given: &Fields, expected: &'e Fields) -> Option<&'e FieldRef> {
    if let Some((_, e)) = expected.find(name) {
        return Some(e);
    }
    let mut folded = expected
        .iter()
        .filter(|e| e.name().eq_ignore_ascii_case(name));
    let (Some(e), None) = (folded.next(), folded.next()) else {
        return None;
    };
    let others = given
        .iter()
        .filter(|g| g.name().eq_ignore_ascii_case(e.name()))
        .count();
    (others == 1).then_some(e)
}

/// `given` (a written value's type) with its struct fields renamed to those of
/// `expected` (the column's type) that they match, at any depth; `None` when no name
/// changes. A struct's fields match by name, ignoring case where that is unambiguous
/// (Spark's case-insensitive resolution); a struct whose fields are all DataFusion's
/// positional names (`c0`, `c1`, … of `struct(…)`), as many as `expected` has, matches by
/// position (Spark's by-position struct of an `INSERT`). Fields that match nothing keep
/// their names (the write then refuses them, module `struct_fields`).
pub(crate) fn renamed_type(given: &DataType, expected: &DataType) -> Option<DataType> {
    let renamed = rename_type(given, expected);
    (renamed != *given).then_some(renamed)
}

fn rename_type(given: &DataType, expected: &DataType) -> DataType {
    match (given, expected) {
        (DataType::Struct(g), DataType::Struct(e)) => {
            let positional = g.len() == e.len()
                && g.iter()
                    .enumerate()
                    .all(|(i, f)| positional_name(f.name(), i))
                && e.iter().all(|f| g.find(f.name()).is_none());
            let fields: Fields = g
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let target = match positional {
                        true => e.get(i),
                        false => matching(f.name(), g, e),
                    };
                    match target {
                        Some(t) => Arc::new(
                            Field::new(
                                t.name(),
                                rename_type(f.data_type(), t.data_type()),
                                f.is_nullable(),
                            )
                            .with_metadata(f.metadata().clone()),
                        ),
                        None => Arc::clone(f),
                    }
                })
                .collect();
            DataType::Struct(fields)
        }
        (DataType::List(g), DataType::List(e) | DataType::LargeList(e)) => {
            DataType::List(renamed_child(g, e))
        }
        (DataType::LargeList(g), DataType::List(e) | DataType::LargeList(e)) => {
            DataType::LargeList(renamed_child(g, e))
        }
        (DataType::Map(g, sorted), DataType::Map(e, _)) => match (g.data_type(), e.data_type()) {
            // entries are (key, value) by position; their names are the writer's
            (DataType::Struct(gs), DataType::Struct(es)) if gs.len() == 2 && es.len() == 2 => {
                let entries: Fields = gs
                    .iter()
                    .zip(es.iter())
                    .map(|(g, e)| renamed_child(g, e))
                    .collect();
                DataType::Map(
                    Arc::new(Field::new(
                        g.name(),
                        DataType::Struct(entries),
                        g.is_nullable(),
                    )),
                    *sorted,
                )
            }
            _ => given.clone(),
        },
        _ => given.clone(),
    }
}

/// `given` (a list's element, a map's key or value) keeping its name, its type renamed
/// after `expected`'s.
fn renamed_child(given: &FieldRef, expected: &FieldRef) -> FieldRef {
    Arc::new(
        Field::new(
            given.name(),
            rename_type(given.data_type(), expected.data_type()),
            given.is_nullable(),
        )
        .with_metadata(given.metadata().clone()),
    )
}

/// `array` retyped as `to` (a type of the same shape, from [`renamed_type`]): the same
/// buffers under the new field names.
///
/// Errors: a `to` of another shape than the array's.
fn renamed_array(array: &ArrayRef, to: &DataType) -> DFResult<ArrayRef> {
    if array.data_type() == to {
        return Ok(Arc::clone(array));
    }
    match (array.data_type(), to) {
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = array.as_struct();
            let columns = s
                .columns()
                .iter()
                .zip(fields.iter())
                .map(|(c, f)| renamed_array(c, f.data_type()))
                .collect::<DFResult<Vec<_>>>()?;
            Ok(Arc::new(StructArray::try_new(
                fields.clone(),
                columns,
                s.nulls().cloned(),
            )?))
        }
        (DataType::List(_), DataType::List(field)) => {
            let l = array.as_list::<i32>();
            let values = renamed_array(l.values(), field.data_type())?;
            Ok(Arc::new(ListArray::try_new(
                Arc::clone(field),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?))
        }
        (DataType::LargeList(_), DataType::LargeList(field)) => {
            let l = array.as_list::<i64>();
            let values = renamed_array(l.values(), field.data_type())?;
            Ok(Arc::new(LargeListArray::try_new(
                Arc::clone(field),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?))
        }
        (DataType::Map(_, _), DataType::Map(field, sorted)) => {
            let m = array.as_map();
            let entries: ArrayRef = Arc::new(m.entries().clone());
            let entries = renamed_array(&entries, field.data_type())?;
            Ok(Arc::new(MapArray::try_new(
                Arc::clone(field),
                m.offsets().clone(),
                entries.as_struct().clone(),
                m.nulls().cloned(),
                *sorted,
            )?))
        }
        (from, to) => {
            // same layout, other names only: rebuild the data under the new type
            let data = array.to_data().into_builder().data_type(to.clone()).build();
            match data {
                Ok(d) => Ok(make_array(d)),
                Err(e) => exec_err!("{RENAME_FIELDS}: cannot retype {from} as {to}: {e}"),
            }
        }
    }
}

impl ScalarUDFImpl for RenameFields {
    fn name(&self) -> &str {
        RENAME_FIELDS
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DFResult<DataType> {
        internal_err!("{RENAME_FIELDS}'s type depends on its arguments")
    }

    /// The renamed type (`names`' type), nullable as the value.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DFResult<FieldRef> {
        match (args.arg_fields, args.scalar_arguments) {
            ([value, names], _) => Ok(Arc::new(Field::new(
                self.name(),
                names.data_type().clone(),
                value.is_nullable(),
            ))),
            _ => exec_err!("{RENAME_FIELDS} takes a value and a typed NULL"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let [value, _] = args.args.as_slice() else {
            return exec_err!("{RENAME_FIELDS} takes a value and a typed NULL");
        };
        let to = args.return_field.data_type();
        let array = value.to_array(args.number_rows)?;
        let renamed = renamed_array(&array, to)?;
        Ok(match value {
            ColumnarValue::Scalar(_) => {
                ColumnarValue::Scalar(ScalarValue::try_from_array(&renamed, 0)?)
            }
            ColumnarValue::Array(_) => ColumnarValue::Array(renamed),
        })
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::Int32Array;

    use super::*;

    fn st(fields: &[&str]) -> DataType {
        DataType::Struct(
            fields
                .iter()
                .map(|n| Field::new(*n, DataType::Int32, true))
                .collect(),
        )
    }

    #[test]
    fn renames_by_case_or_position_when_unambiguous() {
        let table = st(&["myfield", "b"]);
        assert_eq!(
            renamed_type(&st(&["MyField", "B"]), &table),
            Some(st(&["myfield", "b"]))
        );
        assert_eq!(renamed_type(&st(&["b", "myfield"]), &table), None);
        // two given fields of the same name but for case: neither is renamed
        assert_eq!(
            renamed_type(&st(&["MyField", "MYFIELD"]), &st(&["myfield", "x"])),
            None
        );
        // DataFusion's positional names, as many as the table's fields
        assert_eq!(
            renamed_type(&st(&["c0", "c1"]), &table),
            Some(st(&["myfield", "b"]))
        );
        assert_eq!(renamed_type(&st(&["c0"]), &table), None);
        let list = |t: DataType| DataType::new_list(t, true);
        assert_eq!(
            renamed_type(&list(st(&["B", "myfield"])), &list(table.clone())),
            Some(list(st(&["b", "myfield"])))
        );
    }

    #[test]
    fn renamed_arrays_keep_their_values_and_nulls() {
        let given = StructArray::try_new(
            vec![Field::new("MyField", DataType::Int32, true)].into(),
            vec![Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]))],
            Some(vec![true, true, false].into()),
        )
        .expect("struct");
        let to = st(&["myfield"]);
        let out = renamed_array(&(Arc::new(given) as ArrayRef), &to).expect("renamed");
        assert_eq!(out.data_type(), &to);
        let s = out.as_struct();
        assert_eq!(s.null_count(), 1);
        let values = s
            .column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int32Type>();
        assert_eq!(values.iter().collect::<Vec<_>>(), [Some(1), None, Some(3)]);
    }
}
