//! `initial-default`s of struct fields absent from a data file (spec "Default values":
//! rows written before a field was added read its `initial-default`, nested fields too).
//!
//! The field-id adapter ([`super::expr_adapter`]) replaces a top-level column absent
//! from a file with its default itself. A column present in the file may still lack
//! fields added to its struct later: DataFusion's struct cast fills them with nulls.
//! [`missing_defaults`] finds, per column, the struct fields (through nested structs,
//! by field id) the file lacks that have a default, and [`FillDefaultsExpr`] puts the
//! default in their place, null wherever an enclosing struct is null. Fields inside
//! list elements and map keys/values are not filled (they read null).

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StructArray};
use datafusion::arrow::datatypes::{DataType, FieldRef, Schema};
use datafusion::common::{DataFusionError, Result as DFResult, ScalarValue};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;

use super::struct_nulls::push_struct_nulls;
use crate::spec::arrow::arrow_field_id;

/// A struct field to fill: its path of field indices in the column's table type, and
/// its `initial-default`.
pub type Fill = (Vec<usize>, ScalarValue);

/// The fields of `table` (a column's table type) inside structs (at any depth through
/// structs) whose field id `file` (the file's type of the column) lacks and that have a
/// default in `defaults` (field id → value). Empty for non-struct types.
pub fn missing_defaults(
    table: &DataType,
    file: &DataType,
    defaults: &HashMap<i32, ScalarValue>,
) -> Vec<Fill> {
    let mut out = vec![];
    walk(table, file, defaults, &mut vec![], &mut out);
    out
}

fn walk(
    table: &DataType,
    file: &DataType,
    defaults: &HashMap<i32, ScalarValue>,
    path: &mut Vec<usize>,
    out: &mut Vec<Fill>,
) {
    let (DataType::Struct(table), DataType::Struct(file)) = (table, file) else {
        return;
    };
    for (i, field) in table.iter().enumerate() {
        let Some(id) = arrow_field_id(field) else {
            continue;
        };
        path.push(i);
        match file.iter().find(|f| arrow_field_id(f) == Some(id)) {
            Some(in_file) => walk(field.data_type(), in_file.data_type(), defaults, path, out),
            None => {
                if let Some(value) = defaults.get(&id) {
                    out.push((path.clone(), value.clone()));
                }
            }
        }
        path.pop();
    }
}

/// `array` (a struct column) with the fields at the fills' paths replaced by their
/// values, then struct nulls pushed into the fields.
///
/// Errors: a path that is not a struct field of `array`, a value that cannot be cast
/// to its field's type.
pub fn fill_defaults(array: ArrayRef, fills: &[Fill]) -> DFResult<ArrayRef> {
    let filled = fill(array, fills, 0)?;
    Ok(push_struct_nulls(filled)?)
}

fn fill(array: ArrayRef, fills: &[Fill], depth: usize) -> DFResult<ArrayRef> {
    let Some(s) = array.as_struct_opt() else {
        return Err(DataFusionError::Internal(format!(
            "a default value of a struct field, in a {} value",
            array.data_type()
        )));
    };
    let (fields, mut columns, nulls) = s.clone().into_parts();
    let rows = array.len();
    for (i, column) in columns.iter_mut().enumerate() {
        let here: Vec<&Fill> = fills
            .iter()
            .filter(|(p, _)| p.get(depth) == Some(&i))
            .collect();
        if here.is_empty() {
            continue;
        }
        if let Some((_, value)) = here.iter().find(|(p, _)| p.len() == depth + 1) {
            let value = value.cast_to(fields[i].data_type())?;
            *column = value.to_array_of_size(rows)?;
        } else {
            let deeper: Vec<Fill> = here.into_iter().cloned().collect();
            *column = fill(Arc::clone(column), &deeper, depth + 1)?;
        }
    }
    // required fields under an optional struct are marked nullable by the table schema;
    // the fields' own nullability is kept
    Ok(Arc::new(StructArray::try_new(fields, columns, nulls)?))
}

/// Evaluates its input (a struct column read from a file) and fills the struct fields
/// the file lacks with their `initial-default` ([`fill_defaults`]); type and
/// nullability are the input's.
#[derive(Debug, Clone)]
pub struct FillDefaultsExpr {
    input: Arc<dyn PhysicalExpr>,
    fills: Arc<Vec<Fill>>,
}

impl FillDefaultsExpr {
    /// Fill `fills` in the values of `input`.
    pub fn new(input: Arc<dyn PhysicalExpr>, fills: Arc<Vec<Fill>>) -> Self {
        Self { input, fills }
    }
}

impl PartialEq for FillDefaultsExpr {
    fn eq(&self, other: &Self) -> bool {
        self.input.as_ref() == other.input.as_ref() && self.fills == other.fills
    }
}

impl Eq for FillDefaultsExpr {}

impl Hash for FillDefaultsExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.input.as_ref().hash(state);
        for (path, value) in self.fills.iter() {
            path.hash(state);
            value.hash(state);
        }
    }
}

impl fmt::Display for FillDefaultsExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fill_defaults({})", self.input)
    }
}

impl PhysicalExpr for FillDefaultsExpr {
    fn data_type(&self, input_schema: &Schema) -> DFResult<DataType> {
        self.input.data_type(input_schema)
    }

    fn nullable(&self, input_schema: &Schema) -> DFResult<bool> {
        self.input.nullable(input_schema)
    }

    fn return_field(&self, input_schema: &Schema) -> DFResult<FieldRef> {
        self.input.return_field(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> DFResult<ColumnarValue> {
        let array = self.input.evaluate(batch)?.into_array(batch.num_rows())?;
        Ok(ColumnarValue::Array(fill_defaults(array, &self.fills)?))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> DFResult<Arc<dyn PhysicalExpr>> {
        let input = children.pop().unwrap_or_else(|| Arc::clone(&self.input));
        Ok(Arc::new(FillDefaultsExpr::new(
            input,
            Arc::clone(&self.fills),
        )))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.input.fmt_sql(f)
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::Int32Array;
    use datafusion::arrow::buffer::NullBuffer;
    use datafusion::arrow::datatypes::{Field, Fields};

    use super::*;
    use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;

    fn field(name: &str, dt: DataType, id: i32) -> Field {
        Field::new(name, dt, true).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    }

    #[test]
    fn fills_absent_struct_fields_at_any_depth() {
        // table: s struct<a int (2), t struct<b int (4), c int (5)> (3), d int (6)>
        let t_type = DataType::Struct(Fields::from(vec![
            field("b", DataType::Int32, 4),
            field("c", DataType::Int32, 5),
        ]));
        let table = DataType::Struct(Fields::from(vec![
            field("a", DataType::Int32, 2),
            field("t", t_type.clone(), 3),
            field("d", DataType::Int32, 6),
        ]));
        // file: s struct<a (2), t struct<b (4)>>: lacks c (default 7) and d (default 9)
        let file = DataType::Struct(Fields::from(vec![
            field("a", DataType::Int32, 2),
            field(
                "t",
                DataType::Struct(Fields::from(vec![field("b", DataType::Int32, 4)])),
                3,
            ),
        ]));
        let defaults = HashMap::from([
            (5, ScalarValue::Int32(Some(7))),
            (6, ScalarValue::Int32(Some(9))),
            (2, ScalarValue::Int32(Some(1))),
        ]);
        let fills = missing_defaults(&table, &file, &defaults);
        assert_eq!(
            fills,
            vec![
                (vec![1, 1], ScalarValue::Int32(Some(7))),
                (vec![2], ScalarValue::Int32(Some(9))),
            ]
        );
        // the table-typed column as the struct cast gives it: absent fields null;
        // row 1's s is null, row 2's t is null
        let ints = |v: Vec<Option<i32>>| Arc::new(Int32Array::from(v)) as ArrayRef;
        let DataType::Struct(t_fields) = t_type else {
            unreachable!()
        };
        let t = StructArray::try_new(
            t_fields,
            vec![ints(vec![Some(10), Some(11), None]), ints(vec![None; 3])],
            Some(NullBuffer::from(vec![true, true, false])),
        )
        .unwrap();
        let DataType::Struct(s_fields) = table else {
            unreachable!()
        };
        let s = StructArray::try_new(
            s_fields,
            vec![
                ints(vec![Some(1), Some(2), Some(3)]),
                Arc::new(t),
                ints(vec![None; 3]),
            ],
            Some(NullBuffer::from(vec![true, false, true])),
        )
        .unwrap();
        let out = fill_defaults(Arc::new(s), &fills).unwrap();
        let out = out.as_struct();
        let d = out
            .column(2)
            .as_primitive::<datafusion::arrow::datatypes::Int32Type>();
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![Some(9), None, Some(9)]);
        let c = out.column(1).as_struct().column(1);
        let c = c.as_primitive::<datafusion::arrow::datatypes::Int32Type>();
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![Some(7), None, None]);
        let b = out.column(1).as_struct().column(0);
        let b = b.as_primitive::<datafusion::arrow::datatypes::Int32Type>();
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![Some(10), None, None]);
    }
}
