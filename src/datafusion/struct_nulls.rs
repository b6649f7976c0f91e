//! Nulls of a struct pushed down into its fields.
//!
//! Iceberg (spec: "Nested Types") and Parquet let a *required* field sit inside an
//! *optional* struct: the field is present whenever the struct is, and null wherever the
//! struct is null. Arrow's struct layout keeps the struct's validity on the struct only:
//! the Parquet reader fills a required child at a null parent's rows with a default value
//! (`""`, `0`) and no null bit, and DataFusion's `get_field` returns the child array as
//! it is, so `address.street` would read `""` (and `IS NULL` false, `count` too high)
//! where `address` is null.
//!
//! [`push_struct_nulls`] gives every field the nulls of all its enclosing structs, and
//! [`PushStructNullsExpr`] applies it to each struct-holding file column the scan reads
//! (the field-id expression adapter wraps them), before any field access, cast or filter.
//! Lists and maps do not pass their own nulls down (a null list has no elements), but
//! structs inside their elements, keys and values are handled. The table's Arrow schema
//! marks such fields nullable (see [`crate::spec::arrow::nullable_under_nullable_structs`]).

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::{
    make_array, Array, ArrayRef, AsArray, LargeListArray, ListArray, MapArray, RecordBatch,
    StructArray,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{DataType, FieldRef, Schema};
use datafusion::arrow::error::ArrowError;
use datafusion::common::Result as DFResult;
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;

/// Whether values of `data_type` can hold a struct (at any depth), i.e. whether
/// [`push_struct_nulls`] can change them.
pub fn holds_struct(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(_) => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => {
            holds_struct(f.data_type())
        }
        _ => false,
    }
}

/// `array` with each struct field null wherever an enclosing struct is null (at any
/// depth, through list elements and map entries too). Same type, same values elsewhere.
///
/// Errors: only if Arrow rejects a rebuilt array (not expected for a valid input).
pub fn push_struct_nulls(array: ArrayRef) -> Result<ArrayRef, ArrowError> {
    push(array, None)
}

fn push(array: ArrayRef, parent: Option<&NullBuffer>) -> Result<ArrayRef, ArrowError> {
    let array = match parent {
        Some(p) if p.null_count() > 0 && array.data_type() != &DataType::Null => {
            let nulls = NullBuffer::union(array.nulls(), Some(p));
            make_array(array.to_data().into_builder().nulls(nulls).build()?)
        }
        _ => array,
    };
    if !holds_struct(array.data_type()) {
        return Ok(array);
    }
    Ok(match array.data_type() {
        DataType::Struct(_) => {
            let (fields, columns, nulls) = array.as_struct().clone().into_parts();
            let columns = columns
                .into_iter()
                .map(|c| push(c, nulls.as_ref()))
                .collect::<Result<Vec<_>, _>>()?;
            Arc::new(StructArray::try_new(fields, columns, nulls)?)
        }
        DataType::List(_) => {
            let (field, offsets, values, nulls) = array.as_list::<i32>().clone().into_parts();
            Arc::new(ListArray::try_new(
                field,
                offsets,
                push(values, None)?,
                nulls,
            )?)
        }
        DataType::LargeList(_) => {
            let (field, offsets, values, nulls) = array.as_list::<i64>().clone().into_parts();
            Arc::new(LargeListArray::try_new(
                field,
                offsets,
                push(values, None)?,
                nulls,
            )?)
        }
        DataType::Map(_, _) => {
            let (field, offsets, entries, nulls, ordered) = array.as_map().clone().into_parts();
            let entries = push(Arc::new(entries), None)?;
            Arc::new(MapArray::try_new(
                field,
                offsets,
                entries.as_struct().clone(),
                nulls,
                ordered,
            )?)
        }
        _ => array,
    })
}

/// Evaluates its input (a file column holding structs) and pushes struct nulls down into
/// the fields ([`push_struct_nulls`]); type and nullability are the input's.
#[derive(Debug, Clone)]
pub struct PushStructNullsExpr {
    input: Arc<dyn PhysicalExpr>,
}

impl PartialEq for PushStructNullsExpr {
    fn eq(&self, other: &Self) -> bool {
        self.input.as_ref() == other.input.as_ref()
    }
}

impl Eq for PushStructNullsExpr {}

impl Hash for PushStructNullsExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.input.as_ref().hash(state);
    }
}

impl PushStructNullsExpr {
    /// Push struct nulls down in the values of `input`.
    pub fn new(input: Arc<dyn PhysicalExpr>) -> Self {
        Self { input }
    }
}

impl fmt::Display for PushStructNullsExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.input)
    }
}

impl PhysicalExpr for PushStructNullsExpr {
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
        Ok(ColumnarValue::Array(push_struct_nulls(array)?))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> DFResult<Arc<dyn PhysicalExpr>> {
        let input = children.pop().unwrap_or_else(|| Arc::clone(&self.input));
        Ok(Arc::new(PushStructNullsExpr::new(input)))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.input.fmt_sql(f)
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Int32Array, StringArray};
    use datafusion::arrow::buffer::OffsetBuffer;
    use datafusion::arrow::datatypes::{Field, Fields};

    use super::*;

    /// address: struct<street: string not null, info: struct<city: string not null> not null>
    fn address(valid: Vec<bool>, info_valid: Vec<bool>) -> StructArray {
        let n = valid.len();
        let city = Field::new("city", DataType::Utf8, false);
        let info = StructArray::try_new(
            Fields::from(vec![city]),
            vec![Arc::new(StringArray::from(vec!["c"; n])) as ArrayRef],
            Some(NullBuffer::from(info_valid)),
        )
        .unwrap();
        let fields = Fields::from(vec![
            Field::new("street", DataType::Utf8, false),
            Field::new("info", info.data_type().clone(), true),
        ]);
        StructArray::try_new(
            fields,
            vec![
                Arc::new(StringArray::from(vec!["s"; n])) as ArrayRef,
                Arc::new(info) as ArrayRef,
            ],
            Some(NullBuffer::from(valid)),
        )
        .unwrap()
    }

    fn field_nulls(s: &StructArray, path: &[&str]) -> Vec<bool> {
        let mut col: ArrayRef = Arc::new(s.clone());
        for p in path {
            col = Arc::clone(col.as_struct().column_by_name(p).unwrap());
        }
        (0..col.len()).map(|i| col.is_null(i)).collect()
    }

    #[test]
    fn two_levels_of_struct_nulls_reach_the_leaves() {
        let a = address(vec![false, true, true, true], vec![true, true, false, true]);
        let out = push_struct_nulls(Arc::new(a)).unwrap();
        let out = out.as_struct();
        assert_eq!(field_nulls(out, &["street"]), [true, false, false, false]);
        assert_eq!(field_nulls(out, &["info"]), [true, false, true, false]);
        assert_eq!(
            field_nulls(out, &["info", "city"]),
            [true, false, true, false]
        );
        // a slice keeps its own rows' nulls
        let sliced = push_struct_nulls(Arc::new(
            address(vec![true, false, true], vec![false, true, true]).slice(1, 2),
        ))
        .unwrap();
        assert_eq!(
            field_nulls(sliced.as_struct(), &["info", "city"]),
            [true, false]
        );
    }

    #[test]
    fn structs_inside_lists_and_maps_get_their_nulls_pushed() {
        let element = address(vec![true, false, true], vec![true, true, false]);
        let item = Arc::new(Field::new("element", element.data_type().clone(), true));
        let list = ListArray::try_new(
            Arc::clone(&item),
            OffsetBuffer::from_lengths([2, 0, 1]),
            Arc::new(element.clone()),
            Some(NullBuffer::from(vec![true, false, true])),
        )
        .unwrap();
        let out = push_struct_nulls(Arc::new(list)).unwrap();
        let values = out.as_list::<i32>().values().as_struct().clone();
        assert_eq!(field_nulls(&values, &["street"]), [false, true, false]);
        assert_eq!(field_nulls(&values, &["info", "city"]), [false, true, true]);

        let keys = Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef;
        let entries = StructArray::try_new(
            Fields::from(vec![
                Field::new("key", DataType::Int32, false),
                Field::new("value", element.data_type().clone(), true),
            ]),
            vec![keys, Arc::new(element)],
            None,
        )
        .unwrap();
        let entries_field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
        let map = MapArray::try_new(
            entries_field,
            OffsetBuffer::from_lengths([1, 2]),
            entries,
            None,
            false,
        )
        .unwrap();
        let out = push_struct_nulls(Arc::new(map)).unwrap();
        let values = out.as_map().values().as_struct().clone();
        assert_eq!(field_nulls(&values, &["street"]), [false, true, false]);
        assert!(holds_struct(out.data_type()));
        assert!(!holds_struct(&DataType::List(Arc::new(Field::new(
            "element",
            DataType::Int32,
            true
        )))));
    }
}
