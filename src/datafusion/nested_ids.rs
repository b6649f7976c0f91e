//! Field ids inside structs, lists and maps.
//!
//! DataFusion adapts nested columns by field *name*. Iceberg matches nested fields by
//! field id too (spec: "Column Projection"), so a struct field renamed after a file was
//! written must still read its values. The adapter therefore works in three steps:
//! 1. [`rename_to_file`]: the table's nested type with every nested field renamed to the
//!    name its field id has in the file (fields absent from the file get a name the file
//!    does not have, so they read as null), keeping positions;
//! 2. `get_field(col, 'a', 'b')` keys are renamed along the same path
//!    ([`rename_field_access`]), so field accesses pushed into the scan find the file's
//!    fields;
//! 3. values whose type then differs from the table's only in nested names are relabelled
//!    back to the table's names by [`RelabelExpr`] (no copy: same buffers, new type).

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::{make_array, Array, ArrayData, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::common::{Result as DFResult, ScalarValue};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};

use crate::spec::arrow::arrow_field_id;

/// The name given to a nested field whose id is absent from a file.
fn absent_name(field: &Field) -> String {
    match arrow_field_id(field) {
        Some(id) => format!("__icefloe_absent_field_{id}"),
        None => format!("__icefloe_absent_field_{}", field.name()),
    }
}

/// The file's field matching a table field: by field id when the file has ids at this
/// level, else by name.
fn matching<'a>(table: &Field, file: &'a Fields) -> Option<&'a FieldRef> {
    let file_has_ids = file.iter().any(|f| arrow_field_id(f).is_some());
    match arrow_field_id(table) {
        Some(id) if file_has_ids => file.iter().find(|f| arrow_field_id(f) == Some(id)),
        _ => file.iter().find(|f| f.name() == table.name()),
    }
}

/// `table` (a column's table type) with nested fields renamed to the file's names by
/// field id (see the module docs). Non-nested types are returned unchanged.
pub fn rename_to_file(table: &DataType, file: &DataType) -> DataType {
    match (table, file) {
        (DataType::Struct(t), DataType::Struct(f)) => DataType::Struct(
            t.iter()
                .map(|tf| {
                    let renamed = match matching(tf, f) {
                        Some(ff) => tf
                            .as_ref()
                            .clone()
                            .with_name(ff.name())
                            .with_data_type(rename_to_file(tf.data_type(), ff.data_type())),
                        None => tf.as_ref().clone().with_name(absent_name(tf)),
                    };
                    Arc::new(renamed)
                })
                .collect::<Fields>(),
        ),
        (DataType::List(t), DataType::List(f)) => DataType::List(rename_child(t, f)),
        (DataType::LargeList(t), DataType::LargeList(f)) => DataType::LargeList(rename_child(t, f)),
        (DataType::Map(t, sorted), DataType::Map(f, _)) => {
            DataType::Map(rename_child(t, f), *sorted)
        }
        _ => table.clone(),
    }
}

fn rename_child(table: &FieldRef, file: &FieldRef) -> FieldRef {
    Arc::new(
        table
            .as_ref()
            .clone()
            .with_name(file.name())
            .with_data_type(rename_to_file(table.data_type(), file.data_type())),
    )
}

/// Whether two types are the same but for the names (and metadata) of nested fields.
pub fn same_but_names(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Struct(x), DataType::Struct(y)) => {
            x.len() == y.len()
                && x.iter().zip(y.iter()).all(|(p, q)| {
                    p.is_nullable() == q.is_nullable()
                        && same_but_names(p.data_type(), q.data_type())
                })
        }
        (DataType::List(x), DataType::List(y))
        | (DataType::LargeList(x), DataType::LargeList(y))
        | (DataType::Map(x, _), DataType::Map(y, _)) => {
            same_but_names(x.data_type(), y.data_type())
        }
        _ => a == b,
    }
}

/// Rename the keys of `get_field(column, key, …)` from table names to file names, given
/// the column's table type and its renamed type (same positions). Returns `None` when
/// `expr` is not such an access or nothing changes.
pub fn rename_field_access(
    expr: &Arc<dyn PhysicalExpr>,
    column_types: impl Fn(&str) -> Option<(DataType, DataType)>,
) -> DFResult<Option<Arc<dyn PhysicalExpr>>> {
    let Some(func) = expr.downcast_ref::<ScalarFunctionExpr>() else {
        return Ok(None);
    };
    if func.name() != "get_field" {
        return Ok(None);
    }
    let args = func.args();
    let Some(column) = args.first().and_then(|a| a.downcast_ref::<Column>()) else {
        return Ok(None);
    };
    let Some((mut table, mut renamed)) = column_types(column.name()) else {
        return Ok(None);
    };
    let mut new_args = vec![Arc::clone(&args[0])];
    let mut changed = false;
    for arg in &args[1..] {
        let key = arg
            .downcast_ref::<Literal>()
            .and_then(|l| l.value().try_as_str().flatten().map(str::to_string));
        let (Some(key), DataType::Struct(t), DataType::Struct(r)) = (key, &table, &renamed) else {
            new_args.push(Arc::clone(arg));
            continue;
        };
        let Some(pos) = t.iter().position(|f| f.name() == &key) else {
            new_args.push(Arc::clone(arg));
            continue;
        };
        let new_name = r[pos].name().clone();
        if new_name != key {
            changed = true;
        }
        new_args.push(Arc::new(Literal::new(ScalarValue::Utf8(Some(new_name)))));
        let (next_t, next_r) = (t[pos].data_type().clone(), r[pos].data_type().clone());
        table = next_t;
        renamed = next_r;
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(Arc::clone(expr).with_new_children(new_args)?))
}

/// An array's data with its type (and its children's types, recursively) replaced by
/// `target`, which must differ only in nested names.
pub(crate) fn relabel_data(data: ArrayData, target: &DataType) -> DFResult<ArrayData> {
    let children: Vec<ArrayData> = match target {
        DataType::Struct(fields) => data
            .child_data()
            .iter()
            .zip(fields.iter())
            .map(|(c, f)| relabel_data(c.clone(), f.data_type()))
            .collect::<DFResult<_>>()?,
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => data
            .child_data()
            .iter()
            .map(|c| relabel_data(c.clone(), f.data_type()))
            .collect::<DFResult<_>>()?,
        _ => return Ok(data),
    };
    Ok(data
        .into_builder()
        .data_type(target.clone())
        .child_data(children)
        .build()?)
}

/// Evaluates its input and gives the result the table's nested names (see module docs).
#[derive(Debug, Clone)]
pub struct RelabelExpr {
    input: Arc<dyn PhysicalExpr>,
    target: Field,
}

impl PartialEq for RelabelExpr {
    fn eq(&self, other: &Self) -> bool {
        self.target == other.target && self.input.as_ref() == other.input.as_ref()
    }
}

impl Eq for RelabelExpr {}

impl Hash for RelabelExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.input.as_ref().hash(state);
        self.target.hash(state);
    }
}

impl RelabelExpr {
    /// Relabel `input`'s values as `target` (same type but for nested names).
    pub fn new(input: Arc<dyn PhysicalExpr>, target: Field) -> Self {
        Self { input, target }
    }
}

impl fmt::Display for RelabelExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.input)
    }
}

impl PhysicalExpr for RelabelExpr {
    fn data_type(&self, _input_schema: &Schema) -> DFResult<DataType> {
        Ok(self.target.data_type().clone())
    }

    fn nullable(&self, input_schema: &Schema) -> DFResult<bool> {
        self.input.nullable(input_schema)
    }

    fn return_field(&self, input_schema: &Schema) -> DFResult<FieldRef> {
        Ok(Arc::new(
            self.target
                .clone()
                .with_nullable(self.input.nullable(input_schema)?),
        ))
    }

    fn evaluate(&self, batch: &RecordBatch) -> DFResult<ColumnarValue> {
        let array = self.input.evaluate(batch)?.into_array(batch.num_rows())?;
        let data = relabel_data(array.to_data(), self.target.data_type())?;
        Ok(ColumnarValue::Array(make_array(data)))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> DFResult<Arc<dyn PhysicalExpr>> {
        let input = children.pop().unwrap_or_else(|| Arc::clone(&self.input));
        Ok(Arc::new(RelabelExpr::new(input, self.target.clone())))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.input.fmt_sql(f)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use datafusion::arrow::array::{Int32Array, StructArray};

    use super::*;
    use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;

    fn field(name: &str, id: i32) -> Field {
        Field::new(name, DataType::Int32, true).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    }

    #[test]
    fn renames_by_id_and_marks_absent_fields() {
        let table = DataType::Struct(vec![field("alpha", 7), field("added", 9)].into());
        let file = DataType::Struct(vec![field("a", 7), field("dropped", 8)].into());
        let DataType::Struct(renamed) = rename_to_file(&table, &file) else {
            panic!("struct")
        };
        assert_eq!(renamed[0].name(), "a");
        assert_eq!(renamed[1].name(), "__icefloe_absent_field_9");
        assert!(same_but_names(&DataType::Struct(renamed.clone()), &table));
        assert!(!same_but_names(&DataType::Int64, &DataType::Int32));
    }

    #[test]
    fn relabels_without_copying_values() {
        let file_type = DataType::Struct(vec![field("a", 7)].into());
        let table_field = Field::new("st", DataType::Struct(vec![field("alpha", 7)].into()), true);
        let values = StructArray::from(vec![(
            Arc::new(field("a", 7)),
            Arc::new(Int32Array::from(vec![1, 2])) as _,
        )]);
        let data = relabel_data(values.to_data(), table_field.data_type()).unwrap();
        assert_eq!(data.data_type(), table_field.data_type());
        assert_ne!(&file_type, table_field.data_type());
        let array = make_array(data);
        let st = array.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(st.column_by_name("alpha").map(|c| c.len()), Some(2));
    }
}
