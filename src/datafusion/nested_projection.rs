//! A data file's nested column read as the table's type, by field id at every depth.
//!
//! Iceberg selects columns *and nested fields* by field id (spec: "Column Projection"):
//! a struct field renamed, moved, dropped, re-added or promoted after a file was written
//! is found in the file by its id, wherever it sits (a struct's field, a list's
//! element, a map's key or value, and any nesting of them). A field id the file lacks
//! reads as the field's `initial-default` (spec: "Default values") or else as null; a
//! *required* field the file lacks with no default cannot be read (Java's readers fail
//! with "Missing required field"). DataFusion's own casts match struct fields by name
//! and hand maps to Arrow's cast, which matches a map value's struct fields by
//! *position* when the names differ: they cannot do this.
//!
//! [`NestedProjection::new`] compares a table column's Arrow type (field ids in the
//! metadata of every nested field, [`crate::spec::arrow`]) with the file column's type
//! once per file and records, for every nested field of the table's type, where its
//! values come from. [`NestedProjection::project`] applies that to each batch: it
//! rebuilds the column with the table's fields (names, order, types, field ids),
//! taking the file's child arrays by position (no copy), casting primitives whose type
//! was promoted (int→long, float→double, decimal widening, date→timestamp; the reader
//! checked the pair already, see `file_reader`) or whose time unit is finer than the
//! table's (`TIMESTAMP(NANOS)` of a migrated file in a microsecond `timestamp`: floored,
//! as Java's `DateTimeUtil.nanosToMicros`, see [`crate::time_narrowing`]), and filling
//! absent fields. The scan
//! returns the column without the nested ids ([`NestedProjection::reading_as`]: its
//! table schema has none, see [`crate::spec::arrow::without_nested_field_ids`]).
//! [`ProjectNestedExpr`] is the physical expression the field-id adapter
//! ([`super::expr_adapter`]) puts over such a file column.
//!
//! The same pass gives every field the nulls of its enclosing structs: Iceberg (spec:
//! "Nested Types") and Parquet let a required field sit in an optional struct, and the
//! Parquet reader fills such a field with a default value (`""`, `0`) and no null bit
//! where the struct is null, so `address.street` would read `""` (and `IS NULL` false)
//! where `address` is null. Lists and maps pass no nulls down to their elements (a null
//! list has none); structs inside them get their own nulls pushed. The table's Arrow
//! schema marks every nested field nullable
//! ([`crate::spec::arrow::nullable_nested_fields`]).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::{
    make_array, new_null_array, Array, ArrayRef, AsArray, LargeListArray, ListArray, MapArray,
    RecordBatch, StructArray,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::compute::{cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema};
use datafusion::common::{DataFusionError, Result as DFResult, ScalarValue};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;

use super::values_fields::{relabel_data, same_but_names};
use crate::spec::arrow::arrow_field_id;
use crate::time_narrowing::cast_flooring;

/// Whether a column of this Arrow type is read through a [`NestedProjection`]: structs,
/// lists and maps.
pub fn is_nested(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
    )
}

/// Where the values of one nested field of the table's type come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Plan {
    /// The file's values as they are (same type), with the enclosing structs' nulls.
    AsIs,
    /// A primitive of another type in the file: cast to the table's type (a finer time
    /// unit floored).
    Cast(DataType),
    /// A struct: one source per field of the table's struct, in the table's order.
    Struct(Vec<Source>),
    /// A list: its element's plan.
    List(Box<Plan>),
    /// A map: its key's and its value's plans.
    Map(Box<Plan>, Box<Plan>),
}

/// The source of one field of a table struct.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Source {
    /// The file struct's child at this position (the same field id), read by the plan.
    File(usize, Plan),
    /// Absent from the file: its `initial-default`, of the field's Arrow type.
    Default(ScalarValue),
    /// Absent from the file, without a default: null.
    Null,
}

/// How a file's column reads as a table column (see the module docs): built once per
/// file and column, applied to each batch.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NestedProjection {
    /// The table's column (name, type with field ids, nullability).
    target: FieldRef,
    plan: Plan,
    /// The column as the scan returns it: `target`, or its type without the nested
    /// field ids ([`Self::reading_as`]).
    output: FieldRef,
}

/// What [`NestedProjection::new`] reads beside the two types: the table's
/// `initial-default`s (field id → value of the field's Arrow type) and the ids of its
/// required fields.
pub struct Absent<'a> {
    /// Field id → `initial-default`.
    pub defaults: &'a HashMap<i32, ScalarValue>,
    /// Ids of required fields (any depth).
    pub required: &'a HashSet<i32>,
}

impl NestedProjection {
    /// The projection of the file column `file` (its Arrow field as the Parquet reader
    /// gives it, field ids in the metadata of every nested field, or the name mapping's
    /// ids) onto the table column `table` (a struct, list or map type). Struct fields are
    /// matched by field id (by name at a level where the file has no ids).
    ///
    /// Errors (a message naming the field by its dotted path and id): a required field
    /// absent from the file without an `initial-default`, a default that is not a value
    /// of its field's type, or a file type of another shape than the table's (a struct
    /// stored as a list).
    pub fn new(table: &Field, file: &Field, absent: &Absent<'_>) -> Result<Self, String> {
        let target = Arc::new(table.clone());
        Ok(Self {
            plan: plan(table, file, absent, table.name())?,
            output: Arc::clone(&target),
            target,
        })
    }

    /// The same projection returning `output`'s type: the table column's type but for
    /// the names and metadata of nested fields (the scan's type, whose nested fields
    /// carry no ids), the same buffers.
    ///
    /// Errors: `output` of another type (naming the column).
    pub fn reading_as(mut self, output: &Field) -> Result<Self, String> {
        if !same_but_names(self.target.data_type(), output.data_type()) {
            return Err(format!(
                "column '{}' of type {} cannot be read as {}",
                self.target.name(),
                self.target.data_type(),
                output.data_type()
            ));
        }
        self.output = Arc::new(output.clone());
        Ok(self)
    }

    /// `array` (the file column, of the file type the projection was built for) as the
    /// table's column: same rows, the table's type exactly (or the type of
    /// [`Self::reading_as`]).
    ///
    /// Errors: an array of another shape than the file type (internal), a promoted value
    /// Arrow cannot cast, a required field holding nulls.
    pub fn project(&self, array: &ArrayRef) -> DFResult<ArrayRef> {
        let projected = project(array, self.target.data_type(), &self.plan, None)
            .map_err(|e| e.context(format!("reading column '{}'", self.target.name())))?;
        if projected.data_type() == self.output.data_type() {
            return Ok(projected);
        }
        let data = relabel_data(projected.to_data(), self.output.data_type())?;
        Ok(make_array(data))
    }
}

/// The file field of a table struct's field `table` among the file struct's `file`
/// fields, with its position: by field id when the file has ids at this level, else by
/// name.
fn matching<'a>(table: &Field, file: &'a Fields) -> Option<(usize, &'a FieldRef)> {
    let file_has_ids = file.iter().any(|f| arrow_field_id(f).is_some());
    match arrow_field_id(table) {
        Some(id) if file_has_ids => file
            .iter()
            .enumerate()
            .find(|(_, f)| arrow_field_id(f) == Some(id)),
        _ => file
            .iter()
            .enumerate()
            .find(|(_, f)| f.name() == table.name()),
    }
}

fn plan(table: &Field, file: &Field, absent: &Absent<'_>, path: &str) -> Result<Plan, String> {
    let (t, f) = (table.data_type(), file.data_type());
    Ok(match (t, f) {
        (_, DataType::Null) => Plan::AsIs,
        (DataType::Struct(t_fields), DataType::Struct(f_fields)) => Plan::Struct(
            t_fields
                .iter()
                .map(|tf| {
                    let child_path = format!("{path}.{}", tf.name());
                    match matching(tf, f_fields) {
                        Some((i, ff)) => Ok(Source::File(i, plan(tf, ff, absent, &child_path)?)),
                        None => absent_source(tf, absent, &child_path),
                    }
                })
                .collect::<Result<_, String>>()?,
        ),
        (
            DataType::List(te) | DataType::LargeList(te),
            DataType::List(fe) | DataType::LargeList(fe) | DataType::FixedSizeList(fe, _),
        ) => Plan::List(Box::new(plan(te, fe, absent, &format!("{path}.element"))?)),
        (DataType::Map(te, _), DataType::Map(fe, _)) => match (te.data_type(), fe.data_type()) {
            (DataType::Struct(tkv), DataType::Struct(fkv)) if tkv.len() == 2 && fkv.len() == 2 => {
                Plan::Map(
                    Box::new(plan(&tkv[0], &fkv[0], absent, &format!("{path}.key"))?),
                    Box::new(plan(&tkv[1], &fkv[1], absent, &format!("{path}.value"))?),
                )
            }
            _ => return Err(format!("map '{path}' has no key and value fields")),
        },
        _ if t == f => Plan::AsIs,
        _ if !is_nested(t) && !is_nested(f) => Plan::Cast(t.clone()),
        _ => {
            return Err(format!(
                "field '{path}'{} is stored as {f}, which does not read as the table's {t}",
                id_note(table)
            ))
        }
    })
}

fn id_note(field: &Field) -> String {
    arrow_field_id(field).map_or(String::new(), |id| format!(" (field id {id})"))
}

/// The source of a table struct field absent from the file.
fn absent_source(field: &Field, absent: &Absent<'_>, path: &str) -> Result<Source, String> {
    let id = arrow_field_id(field);
    if let Some(value) = id.and_then(|id| absent.defaults.get(&id)) {
        let value = value.cast_to(field.data_type()).map_err(|e| {
            format!(
                "the initial-default of field '{path}'{}: {e}",
                id_note(field)
            )
        })?;
        return Ok(Source::Default(value));
    }
    if id.is_some_and(|id| absent.required.contains(&id)) {
        return Err(format!(
            "required field '{path}'{} is absent from a data file and has no initial-default",
            id_note(field)
        ));
    }
    Ok(Source::Null)
}

/// The cast of promoted primitives: an error, not a null, for a value that does not fit.
fn cast_options() -> CastOptions<'static> {
    CastOptions {
        safe: false,
        ..Default::default()
    }
}

/// `array` with `extra` nulls added to its own (a no-op without extra nulls).
fn with_nulls(array: ArrayRef, extra: Option<&NullBuffer>) -> DFResult<ArrayRef> {
    match extra {
        Some(n) if n.null_count() > 0 && array.data_type() != &DataType::Null => {
            let nulls = NullBuffer::union(array.nulls(), Some(n));
            Ok(make_array(
                array.to_data().into_builder().nulls(nulls).build()?,
            ))
        }
        _ => Ok(array),
    }
}

fn shape_error(array: &ArrayRef, target: &DataType) -> DataFusionError {
    DataFusionError::Internal(format!(
        "a nested column read as {target} holds {} values",
        array.data_type()
    ))
}

/// `array` read by `plan` as `target`, with the nulls of its enclosing structs
/// (`parent`).
fn project(
    array: &ArrayRef,
    target: &DataType,
    plan: &Plan,
    parent: Option<&NullBuffer>,
) -> DFResult<ArrayRef> {
    if array.data_type() == &DataType::Null {
        return Ok(new_null_array(target, array.len()));
    }
    match plan {
        Plan::AsIs => with_nulls(Arc::clone(array), parent),
        Plan::Cast(to) => {
            let array = with_nulls(Arc::clone(array), parent)?;
            Ok(cast_flooring(&array, to, &cast_options())?)
        }
        Plan::Struct(sources) => {
            let (DataType::Struct(fields), Some(file)) = (target, array.as_struct_opt()) else {
                return Err(shape_error(array, target));
            };
            let nulls = NullBuffer::union(file.nulls(), parent);
            let rows = array.len();
            let mut columns = Vec::with_capacity(fields.len());
            for (field, source) in fields.iter().zip(sources) {
                columns.push(match source {
                    Source::File(i, child) => {
                        let Some(column) = file.columns().get(*i) else {
                            return Err(shape_error(array, target));
                        };
                        project(column, field.data_type(), child, nulls.as_ref())?
                    }
                    Source::Default(value) => {
                        with_nulls(value.to_array_of_size(rows)?, nulls.as_ref())?
                    }
                    Source::Null => new_null_array(field.data_type(), rows),
                });
            }
            if fields.is_empty() {
                return Ok(Arc::new(StructArray::new_empty_fields(rows, nulls)));
            }
            Ok(Arc::new(StructArray::try_new(
                fields.clone(),
                columns,
                nulls,
            )?))
        }
        Plan::List(element) => match (array.data_type(), target) {
            (DataType::List(_), DataType::List(field)) => {
                let (_, offsets, values, nulls) = array.as_list::<i32>().clone().into_parts();
                let values = project(&values, field.data_type(), element, None)?;
                let nulls = NullBuffer::union(nulls.as_ref(), parent);
                Ok(Arc::new(ListArray::try_new(
                    Arc::clone(field),
                    offsets,
                    values,
                    nulls,
                )?))
            }
            (DataType::LargeList(_), DataType::LargeList(field)) => {
                let (_, offsets, values, nulls) = array.as_list::<i64>().clone().into_parts();
                let values = project(&values, field.data_type(), element, None)?;
                let nulls = NullBuffer::union(nulls.as_ref(), parent);
                Ok(Arc::new(LargeListArray::try_new(
                    Arc::clone(field),
                    offsets,
                    values,
                    nulls,
                )?))
            }
            (
                DataType::List(file) | DataType::LargeList(file) | DataType::FixedSizeList(file, _),
                DataType::List(_) | DataType::LargeList(_),
            ) => {
                // another list layout: Arrow's cast to the table's layout, the file's
                // element kept, then as above
                let layout = match target {
                    DataType::List(_) => DataType::List(Arc::clone(file)),
                    _ => DataType::LargeList(Arc::clone(file)),
                };
                let relaid = cast_with_options(array, &layout, &cast_options())?;
                project(&relaid, target, plan, parent)
            }
            _ => Err(shape_error(array, target)),
        },
        Plan::Map(key, value) => {
            let (DataType::Map(entries_field, sorted), Some(map)) = (target, array.as_map_opt())
            else {
                return Err(shape_error(array, target));
            };
            let DataType::Struct(kv) = entries_field.data_type() else {
                return Err(shape_error(array, target));
            };
            let (_, offsets, entries, nulls, _) = map.clone().into_parts();
            if kv.len() != 2 || entries.num_columns() != 2 {
                return Err(shape_error(array, target));
            }
            let keys = project(entries.column(0), kv[0].data_type(), key, None)?;
            let values = project(entries.column(1), kv[1].data_type(), value, None)?;
            let entries = StructArray::try_new(kv.clone(), vec![keys, values], None)?;
            let nulls = NullBuffer::union(nulls.as_ref(), parent);
            Ok(Arc::new(MapArray::try_new(
                Arc::clone(entries_field),
                offsets,
                entries,
                nulls,
                *sorted,
            )?))
        }
    }
}

/// Evaluates its input (a nested file column) and reads it as the table's column
/// ([`NestedProjection::project`]); its field is the column as the scan returns it.
#[derive(Debug, Clone)]
pub struct ProjectNestedExpr {
    input: Arc<dyn PhysicalExpr>,
    projection: Arc<NestedProjection>,
}

impl ProjectNestedExpr {
    /// Read the values of `input` by `projection`.
    pub fn new(input: Arc<dyn PhysicalExpr>, projection: Arc<NestedProjection>) -> Self {
        Self { input, projection }
    }
}

impl PartialEq for ProjectNestedExpr {
    fn eq(&self, other: &Self) -> bool {
        self.input.as_ref() == other.input.as_ref() && self.projection == other.projection
    }
}

impl Eq for ProjectNestedExpr {}

impl Hash for ProjectNestedExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.input.as_ref().hash(state);
        self.projection.hash(state);
    }
}

impl fmt::Display for ProjectNestedExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.input)
    }
}

impl PhysicalExpr for ProjectNestedExpr {
    fn data_type(&self, _input_schema: &Schema) -> DFResult<DataType> {
        Ok(self.projection.output.data_type().clone())
    }

    fn nullable(&self, _input_schema: &Schema) -> DFResult<bool> {
        Ok(self.projection.output.is_nullable())
    }

    fn return_field(&self, _input_schema: &Schema) -> DFResult<FieldRef> {
        Ok(Arc::clone(&self.projection.output))
    }

    fn evaluate(&self, batch: &RecordBatch) -> DFResult<ColumnarValue> {
        let array = self.input.evaluate(batch)?.into_array(batch.num_rows())?;
        Ok(ColumnarValue::Array(self.projection.project(&array)?))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> DFResult<Arc<dyn PhysicalExpr>> {
        let input = children.pop().unwrap_or_else(|| Arc::clone(&self.input));
        Ok(Arc::new(ProjectNestedExpr::new(
            input,
            Arc::clone(&self.projection),
        )))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.input.fmt_sql(f)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use datafusion::arrow::array::{Int32Array, StringArray};
    use datafusion::arrow::buffer::OffsetBuffer;
    use datafusion::arrow::json::writer::{JsonArray, WriterBuilder};
    use datafusion::arrow::json::ReaderBuilder;
    use serde_json::{json, Value};

    use super::*;
    use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;

    fn f(name: &str, data_type: DataType, id: i32) -> Field {
        Field::new(name, data_type, true).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    }

    fn st(fields: Vec<Field>) -> DataType {
        DataType::Struct(fields.into())
    }

    fn list(element: Field) -> DataType {
        DataType::List(Arc::new(element))
    }

    /// A map of `key_id` string keys to `value`; its entries named `entries`.
    fn map(entries: &str, key_id: i32, value: Field) -> DataType {
        let key = f("key", DataType::Utf8, key_id).with_nullable(false);
        DataType::Map(
            Arc::new(Field::new(entries, st(vec![key, value]), false)),
            false,
        )
    }

    /// The column `field` of the JSON rows `{"c": …}`.
    fn column(field: &Field, rows: &[Value]) -> ArrayRef {
        let schema = Arc::new(Schema::new(vec![field.clone().with_name("c")]));
        let text: Vec<String> = rows.iter().map(|r| json!({ "c": r }).to_string()).collect();
        let mut reader = ReaderBuilder::new(schema)
            .build(Cursor::new(text.join("\n")))
            .unwrap();
        let batch = reader.next().unwrap().unwrap();
        Arc::clone(batch.column(0))
    }

    /// The values of a column as JSON (nulls explicit).
    fn values(array: &ArrayRef) -> Vec<Value> {
        let schema = Schema::new(vec![Field::new("c", array.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::clone(array)]).unwrap();
        let mut writer = WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, JsonArray>(Vec::new());
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        let rows: Vec<Value> = serde_json::from_slice(&writer.into_inner()).unwrap();
        rows.into_iter().map(|r| r["c"].clone()).collect()
    }

    fn no_absent() -> (HashMap<i32, ScalarValue>, HashSet<i32>) {
        (HashMap::new(), HashSet::new())
    }

    /// Reads `rows` written as `file` through the projection onto `table`: the result
    /// has the table's type exactly, and the values `expected`.
    fn check(table: &Field, file: &Field, absent: &Absent<'_>, rows: &[Value], expected: &[Value]) {
        let projection = NestedProjection::new(table, file, absent).unwrap();
        let read = projection.project(&column(file, rows)).unwrap();
        assert_eq!(read.data_type(), table.data_type());
        assert_eq!(values(&read), expected);
    }

    /// The tester's D1 and D2: a map value's struct field dropped and another added
    /// (of the dropped one's type, or another), a field promoted: matched by id, not by
    /// position or name.
    #[test]
    fn map_value_struct_fields_by_id() {
        let file = f(
            "m",
            map(
                "key_value",
                2,
                f(
                    "value",
                    st(vec![f("c", DataType::Int32, 4), f("d", DataType::Utf8, 5)]),
                    3,
                ),
            ),
            1,
        );
        let rows = [
            json!({"k1": {"c": 100, "d": "d100"}, "k2": null}),
            Value::Null,
            json!({}),
        ];
        let (defaults, required) = no_absent();
        let absent = Absent {
            defaults: &defaults,
            required: &required,
        };
        for added in [DataType::Utf8, DataType::Int64] {
            // d (5) dropped, f (6) added, c promoted to long
            let table = f(
                "m",
                map(
                    "key_value",
                    2,
                    f(
                        "value",
                        st(vec![f("c", DataType::Int64, 4), f("f", added.clone(), 6)]),
                        3,
                    ),
                ),
                1,
            );
            check(
                &table,
                &file,
                &absent,
                &rows,
                &[
                    json!({"k1": {"c": 100, "f": null}, "k2": null}),
                    Value::Null,
                    json!({}),
                ],
            );
        }
        // only dropped; only added (a third field); entries named otherwise in the file
        let dropped = f(
            "m",
            map(
                "key_value",
                2,
                f("value", st(vec![f("c", DataType::Int32, 4)]), 3),
            ),
            1,
        );
        check(
            &dropped,
            &file,
            &absent,
            &rows[..1],
            &[json!({"k1": {"c": 100}, "k2": null})],
        );
        let grown = f(
            "m",
            map(
                "key_value",
                2,
                f(
                    "value",
                    st(vec![
                        f("c", DataType::Int32, 4),
                        f("d", DataType::Utf8, 5),
                        f("g", DataType::Int64, 7),
                    ]),
                    3,
                ),
            ),
            1,
        );
        let file_entries = f(
            "m",
            map(
                "entries",
                2,
                f(
                    "value",
                    st(vec![f("c", DataType::Int32, 4), f("d", DataType::Utf8, 5)]),
                    3,
                ),
            ),
            1,
        );
        check(
            &grown,
            &file_entries,
            &absent,
            &rows[..1],
            &[json!({"k1": {"c": 100, "d": "d100", "g": null}, "k2": null})],
        );
    }

    /// Every nesting: a list of maps of structs, a map of lists of structs, a struct of
    /// a map of structs; fields renamed, reordered, dropped, added (with a default and
    /// without), promoted; the file's names never decide.
    #[test]
    fn every_nesting_by_id() {
        let defaults = HashMap::from([(9, ScalarValue::Utf8(Some("zz".into())))]);
        let required = HashSet::new();
        let absent = Absent {
            defaults: &defaults,
            required: &required,
        };
        // list<map<string, struct<a int (4), b string (5)>>>: a renamed to `b` and
        // promoted, the old b dropped, x (8) re-using the name `a`, z (9) default 'zz'
        let file = f(
            "l",
            list(f(
                "element",
                map(
                    "key_value",
                    2,
                    f(
                        "value",
                        st(vec![f("a", DataType::Int32, 4), f("b", DataType::Utf8, 5)]),
                        3,
                    ),
                ),
                6,
            )),
            1,
        );
        let table = f(
            "l",
            list(f(
                "element",
                map(
                    "key_value",
                    2,
                    f(
                        "value",
                        st(vec![
                            f("z", DataType::Utf8, 9),
                            f("a", DataType::Utf8, 8),
                            f("b", DataType::Int64, 4),
                        ]),
                        3,
                    ),
                ),
                6,
            )),
            1,
        );
        check(
            &table,
            &file,
            &absent,
            &[
                json!([{"x": {"a": 1, "b": "one"}}, null, {"y": null}]),
                json!([]),
                Value::Null,
            ],
            &[
                json!([{"x": {"z": "zz", "a": null, "b": 1}}, null, {"y": null}]),
                json!([]),
                Value::Null,
            ],
        );

        // map<string, list<struct<p int (5), q string (6)>>>: q moved first, p dropped,
        // r (7) added
        let file = f(
            "m",
            map(
                "key_value",
                2,
                f(
                    "value",
                    list(f(
                        "element",
                        st(vec![f("p", DataType::Int32, 5), f("q", DataType::Utf8, 6)]),
                        4,
                    )),
                    3,
                ),
            ),
            1,
        );
        let table = f(
            "m",
            map(
                "key_value",
                2,
                f(
                    "value",
                    list(f(
                        "element",
                        st(vec![
                            f("q", DataType::Utf8, 6),
                            f("r", DataType::Float64, 7),
                        ]),
                        4,
                    )),
                    3,
                ),
            ),
            1,
        );
        check(
            &table,
            &file,
            &absent,
            &[json!({"k": [{"p": 1, "q": "x"}, null], "n": null})],
            &[json!({"k": [{"q": "x", "r": null}, null], "n": null})],
        );

        // struct<s map<string, struct<u int (5), v float (6)>> (2), w int (7)>: v
        // renamed and promoted to double, w dropped
        let file = f(
            "st",
            st(vec![
                f(
                    "s",
                    map(
                        "key_value",
                        3,
                        f(
                            "value",
                            st(vec![
                                f("u", DataType::Int32, 5),
                                f("v", DataType::Float32, 6),
                            ]),
                            4,
                        ),
                    ),
                    2,
                ),
                f("w", DataType::Int32, 7),
            ]),
            1,
        );
        let table = f(
            "st",
            st(vec![f(
                "s",
                map(
                    "key_value",
                    3,
                    f(
                        "value",
                        st(vec![
                            f("u", DataType::Int32, 5),
                            f("vv", DataType::Float64, 6),
                        ]),
                        4,
                    ),
                ),
                2,
            )]),
            1,
        );
        check(
            &table,
            &file,
            &absent,
            &[
                json!({"s": {"k": {"u": 1, "v": 1.5}}, "w": 3}),
                json!({"s": null}),
            ],
            &[json!({"s": {"k": {"u": 1, "vv": 1.5}}}), json!({"s": null})],
        );
    }

    /// A required field absent from the file reads its default; without one it cannot
    /// be read (named by its path and id); a file of another shape is refused.
    #[test]
    fn absent_required_fields_and_other_shapes() {
        let file = f(
            "m",
            map(
                "key_value",
                2,
                f("value", st(vec![f("c", DataType::Int32, 4)]), 3),
            ),
            1,
        );
        let table = f(
            "m",
            map(
                "key_value",
                2,
                f(
                    "value",
                    st(vec![
                        f("c", DataType::Int32, 4),
                        f("r", DataType::Int32, 5).with_nullable(false),
                    ]),
                    3,
                ),
            ),
            1,
        );
        let required = HashSet::from([5]);
        let no_defaults = HashMap::new();
        let err = NestedProjection::new(
            &table,
            &file,
            &Absent {
                defaults: &no_defaults,
                required: &required,
            },
        )
        .unwrap_err();
        assert_eq!(
            err,
            "required field 'm.value.r' (field id 5) is absent from a data file and has no \
             initial-default"
        );
        let defaults = HashMap::from([(5, ScalarValue::Int32(Some(42)))]);
        check(
            &table,
            &file,
            &Absent {
                defaults: &defaults,
                required: &required,
            },
            &[json!({"a": {"c": 1}, "b": null})],
            &[json!({"a": {"c": 1, "r": 42}, "b": null})],
        );
        let as_list = f("m", list(f("element", DataType::Int32, 2)), 1);
        let err = NestedProjection::new(
            &table,
            &as_list,
            &Absent {
                defaults: &no_defaults,
                required: &required,
            },
        )
        .unwrap_err();
        assert!(
            err.contains("field 'm' (field id 1) is stored as List"),
            "{err}"
        );
    }

    /// address: struct<street: string not null, info: struct<city: string not null>>
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

    /// The table type of an [`address`] column: its required fields nullable (they are
    /// null where the struct is).
    fn nullable_address() -> Field {
        let info = st(vec![Field::new("city", DataType::Utf8, true)]);
        Field::new(
            "a",
            st(vec![
                Field::new("street", DataType::Utf8, true),
                Field::new("info", info, true),
            ]),
            true,
        )
    }

    fn field_nulls(array: &ArrayRef, path: &[&str]) -> Vec<bool> {
        let mut col = Arc::clone(array);
        for p in path {
            col = Arc::clone(col.as_struct().column_by_name(p).unwrap());
        }
        (0..col.len()).map(|i| col.is_null(i)).collect()
    }

    fn project_as(table: &Field, array: ArrayRef) -> ArrayRef {
        let file = Field::new(table.name(), array.data_type().clone(), true);
        let (defaults, required) = no_absent();
        let absent = Absent {
            defaults: &defaults,
            required: &required,
        };
        NestedProjection::new(table, &file, &absent)
            .unwrap()
            .project(&array)
            .unwrap()
    }

    /// Required fields of optional structs read null where a struct enclosing them is
    /// (the Parquet reader leaves `""` there, without a null bit), at two levels, in a
    /// slice too.
    #[test]
    fn two_levels_of_struct_nulls_reach_the_leaves() {
        let a = address(vec![false, true, true, true], vec![true, true, false, true]);
        let out = project_as(&nullable_address(), Arc::new(a));
        assert_eq!(field_nulls(&out, &["street"]), [true, false, false, false]);
        assert_eq!(field_nulls(&out, &["info"]), [true, false, true, false]);
        assert_eq!(
            field_nulls(&out, &["info", "city"]),
            [true, false, true, false]
        );
        let sliced = project_as(
            &nullable_address(),
            Arc::new(address(vec![true, false, true], vec![false, true, true]).slice(1, 2)),
        );
        assert_eq!(field_nulls(&sliced, &["info", "city"]), [true, false]);
    }

    /// Structs inside list elements and map values get their own nulls pushed down; a
    /// null list passes none to its elements.
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
        let table = Field::new(
            "l",
            DataType::List(Arc::new(nullable_address().with_name("element"))),
            true,
        );
        let out = project_as(&table, Arc::new(list));
        let values = Arc::clone(out.as_list::<i32>().values());
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
        let table = Field::new(
            "m",
            DataType::Map(
                Arc::new(Field::new(
                    "key_value",
                    st(vec![
                        Field::new("key", DataType::Int32, false),
                        nullable_address().with_name("value"),
                    ]),
                    false,
                )),
                false,
            ),
            true,
        );
        let out = project_as(&table, Arc::new(map));
        assert_eq!(out.data_type(), table.data_type());
        let values = Arc::clone(out.as_map().values());
        assert_eq!(field_nulls(&values, &["street"]), [false, true, false]);
    }
}
