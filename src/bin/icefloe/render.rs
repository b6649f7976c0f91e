//! Cell values as text for the CSV and JSON output, and batches prepared for the table
//! output, so that every result (metadata tables included) prints without loss:
//!
//! - JSON: one object per row with every column, `null` for NULL (map values included);
//!   integers and finite floats are numbers, `NaN`, `Infinity` and `-Infinity` are
//!   strings (JSON has no such numbers), decimals are strings holding the exact decimal
//!   (a JSON number would be read as a binary float), dates, times and timestamps are
//!   strings as in the table output, binary is hex, UUIDs are canonical 8-4-4-4-12
//!   strings; structs are objects, lists are arrays, maps with string keys are objects and
//!   other maps arrays of `{"key": …, "value": …}` objects.
//! - CSV: nested values (structs, lists, maps) as their JSON text; NULL as the null string
//!   (unquoted; empty by default), while an empty string is written as `""`.
//! - Table: NULL as `NULL`, UUIDs in canonical form (inside structs, lists and maps too).
//!
//! A UUID is a `FixedSizeBinary(16)` field tagged with Arrow's canonical `arrow.uuid`
//! extension type, as icefloe types Iceberg `uuid` columns.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeBinaryArray, LargeListArray, ListArray, MapArray,
    RecordBatch, StringArray, StructArray,
};
use datafusion::arrow::datatypes::{
    DataType, Field, Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Schema, SchemaRef, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use serde_json::Value;

/// Whether `field` holds UUIDs (see the module docs): the library's own test of the tag.
pub use icefloe::spec::arrow::is_uuid_field as is_uuid;

fn uuid_text(bytes: &[u8]) -> String {
    match uuid::Uuid::from_slice(bytes) {
        Ok(u) => u.hyphenated().to_string(),
        Err(_) => hex(bytes),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `array[row]` is NULL as SQL sees it: every value of a `Null` array (which
/// has no validity bitmap, so [`Array::is_null`] says false), and a dictionary or
/// run-end encoded value whose key is valid but whose value is NULL.
fn is_null(array: &dyn Array, row: usize) -> bool {
    match array.data_type() {
        DataType::Null => true,
        DataType::Dictionary(_, _) | DataType::RunEndEncoded(_, _) => array
            .logical_nulls()
            .is_some_and(|nulls| nulls.is_null(row)),
        _ => array.is_null(row),
    }
}

/// Options of the text rendering of scalar values (dates, timestamps, decimals, …).
fn text_options() -> FormatOptions<'static> {
    FormatOptions::default().with_display_error(true)
}

/// The text of a non-null scalar value, as the table output shows it.
fn scalar_text(array: &dyn Array, row: usize) -> Result<String, ArrowError> {
    Ok(ArrayFormatter::try_new(array, &text_options())?
        .value(row)
        .to_string())
}

/// A float as JSON: a number, or a string for the values JSON has no number for.
fn float_json(v: f64) -> String {
    if v.is_nan() {
        "\"NaN\"".into()
    } else if v.is_infinite() && v > 0.0 {
        "\"Infinity\"".into()
    } else if v.is_infinite() {
        "\"-Infinity\"".into()
    } else {
        Value::from(v).to_string()
    }
}

fn json_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Append the JSON text of `array[row]` to `out` (see the module docs). `field` is the
/// array's field when known (for the UUID tag). Objects keep the column order.
pub fn write_json(
    out: &mut String,
    array: &dyn Array,
    field: Option<&Field>,
    row: usize,
) -> Result<(), ArrowError> {
    if is_null(array, row) {
        out.push_str("null");
        return Ok(());
    }
    macro_rules! int {
        ($t:ty) => {
            out.push_str(&array.as_primitive::<$t>().value(row).to_string())
        };
    }
    match array.data_type() {
        DataType::Boolean => out.push_str(if array.as_boolean().value(row) {
            "true"
        } else {
            "false"
        }),
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => int!(UInt64Type),
        DataType::Float16 => out.push_str(&float_json(f64::from(
            array.as_primitive::<Float16Type>().value(row),
        ))),
        DataType::Float32 => out.push_str(&float_json(f64::from(
            array.as_primitive::<Float32Type>().value(row),
        ))),
        DataType::Float64 => {
            out.push_str(&float_json(array.as_primitive::<Float64Type>().value(row)))
        }
        DataType::FixedSizeBinary(16) if field.is_some_and(is_uuid) => out.push_str(&json_string(
            &uuid_text(array.as_fixed_size_binary().value(row)),
        )),
        DataType::Struct(fields) => {
            let s = array.as_struct();
            out.push('{');
            for (i, (child_field, child)) in fields.iter().zip(s.columns()).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&json_string(child_field.name()));
                out.push(':');
                write_json(out, child.as_ref(), Some(child_field), row)?;
            }
            out.push('}');
        }
        DataType::List(item) => write_list(out, &array.as_list::<i32>().value(row), item)?,
        DataType::LargeList(item) => write_list(out, &array.as_list::<i64>().value(row), item)?,
        DataType::FixedSizeList(item, _) => {
            write_list(out, &array.as_fixed_size_list().value(row), item)?
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(ArrowError::InvalidArgumentError(
                    "map entries are not a struct".into(),
                ));
            };
            let entries = array.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            let string_keys = matches!(
                keys.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            );
            out.push(if string_keys { '{' } else { '[' });
            for i in 0..entries.len() {
                if i > 0 {
                    out.push(',');
                }
                if string_keys {
                    out.push_str(&json_string(&scalar_text(keys.as_ref(), i)?));
                    out.push(':');
                    write_json(out, values.as_ref(), Some(&kv[1]), i)?;
                } else {
                    out.push_str("{\"key\":");
                    write_json(out, keys.as_ref(), Some(&kv[0]), i)?;
                    out.push_str(",\"value\":");
                    write_json(out, values.as_ref(), Some(&kv[1]), i)?;
                    out.push('}');
                }
            }
            out.push(if string_keys { '}' } else { ']' });
        }
        DataType::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            let key = dict.normalized_keys()[row];
            write_json(out, dict.values().as_ref(), field, key)?
        }
        // strings, decimals (exact, as text), dates, times, timestamps, durations,
        // intervals, binary (hex)
        _ => out.push_str(&json_string(&scalar_text(array, row)?)),
    }
    Ok(())
}

fn write_list(out: &mut String, items: &ArrayRef, item_field: &Field) -> Result<(), ArrowError> {
    out.push('[');
    for i in 0..items.len() {
        if i > 0 {
            out.push(',');
        }
        write_json(out, items.as_ref(), Some(item_field), i)?;
    }
    out.push(']');
    Ok(())
}

/// The JSON text of `array[row]`.
pub fn json_text(
    array: &dyn Array,
    field: Option<&Field>,
    row: usize,
) -> Result<String, ArrowError> {
    let mut out = String::new();
    write_json(&mut out, array, field, row)?;
    Ok(out)
}

/// Append one JSON object per row of `batch` to `out`, each on its own line, every
/// column present in order.
pub fn write_json_rows(out: &mut String, batch: &RecordBatch) -> Result<(), ArrowError> {
    let schema = batch.schema();
    for row in 0..batch.num_rows() {
        out.push('{');
        for (i, (field, column)) in schema.fields().iter().zip(batch.columns()).enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&json_string(field.name()));
            out.push(':');
            write_json(out, column.as_ref(), Some(field), row)?;
        }
        out.push_str("}\n");
    }
    Ok(())
}

/// The CSV text of `array[row]`, `None` for NULL (see the module docs).
pub fn csv_cell(
    array: &dyn Array,
    field: &Field,
    row: usize,
) -> Result<Option<String>, ArrowError> {
    if is_null(array, row) {
        return Ok(None);
    }
    Ok(Some(match array.data_type() {
        DataType::Struct(_)
        | DataType::List(_)
        | DataType::LargeList(_)
        | DataType::FixedSizeList(_, _)
        | DataType::Map(_, _) => json_text(array, Some(field), row)?,
        DataType::FixedSizeBinary(16) if is_uuid(field) => {
            uuid_text(array.as_fixed_size_binary().value(row))
        }
        _ => scalar_text(array, row)?,
    }))
}

/// A CSV field: quoted when it holds a separator, quote or line break, when it is an
/// empty string (an unquoted empty field is NULL), or when it equals the null string.
pub fn csv_field(value: Option<&str>, null: &str) -> String {
    match value {
        None => null.to_string(),
        Some(v) => {
            let needs_quotes = v.is_empty()
                || v == null
                || v.contains([',', '"', '\n', '\r'])
                || v.starts_with(' ')
                || v.ends_with(' ');
            if needs_quotes {
                format!("\"{}\"", v.replace('"', "\"\""))
            } else {
                v.to_string()
            }
        }
    }
}

/// `batch` with every UUID in it as its canonical string, for the table output: UUID
/// columns and UUIDs inside structs, lists and maps (the `partition` struct of a
/// metadata table, its `readable_metrics` bounds), whose fields are typed `Utf8` then.
pub fn uuids_as_text(batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    let schema = batch.schema();
    if !schema.fields().iter().any(|f| holds_uuid(f)) {
        return Ok(batch.clone());
    }
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let (field, column) = uuid_text_column(field, column)?;
        fields.push(field);
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

/// The schema [`uuids_as_text`] gives batches of `schema`.
pub fn uuids_as_text_schema(schema: &SchemaRef) -> SchemaRef {
    if !schema.fields().iter().any(|f| holds_uuid(f)) {
        return Arc::clone(schema);
    }
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| uuid_text_field(f))
            .collect::<Vec<_>>(),
    ))
}

/// Whether `field` is a UUID or holds one at any depth.
fn holds_uuid(field: &Field) -> bool {
    match field.data_type() {
        _ if is_uuid(field) => true,
        DataType::Struct(fields) => fields.iter().any(|f| holds_uuid(f)),
        DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _) => {
            holds_uuid(item)
        }
        _ => false,
    }
}

/// `field` with its UUIDs typed `Utf8` (as [`uuid_text_column`] gives them).
fn uuid_text_field(field: &Field) -> Field {
    if !holds_uuid(field) {
        return field.clone();
    }
    let data_type = match field.data_type() {
        _ if is_uuid(field) => {
            return Field::new(field.name(), DataType::Utf8, field.is_nullable())
        }
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|f| uuid_text_field(f))
                .collect::<Vec<_>>()
                .into(),
        ),
        DataType::List(item) => DataType::List(Arc::new(uuid_text_field(item))),
        DataType::LargeList(item) => DataType::LargeList(Arc::new(uuid_text_field(item))),
        DataType::Map(entries, sorted) => {
            DataType::Map(Arc::new(uuid_text_field(entries)), *sorted)
        }
        other => other.clone(),
    };
    field.clone().with_data_type(data_type)
}

/// `column` (of `field`) with its UUIDs, at any depth, as canonical strings, and its
/// field ([`uuid_text_field`]).
fn uuid_text_column(field: &Field, column: &ArrayRef) -> Result<(Field, ArrayRef), ArrowError> {
    if !holds_uuid(field) {
        return Ok((field.clone(), Arc::clone(column)));
    }
    let text_field = uuid_text_field(field);
    let array: ArrayRef = match (field.data_type(), text_field.data_type()) {
        _ if is_uuid(field) => {
            let bytes: &FixedSizeBinaryArray = column.as_fixed_size_binary();
            Arc::new(
                bytes
                    .iter()
                    .map(|v| v.map(uuid_text))
                    .collect::<StringArray>(),
            )
        }
        (DataType::Struct(fields), DataType::Struct(text_fields)) => {
            let s = column.as_struct();
            let children = fields
                .iter()
                .zip(s.columns())
                .map(|(f, c)| Ok(uuid_text_column(f, c)?.1))
                .collect::<Result<Vec<_>, ArrowError>>()?;
            Arc::new(StructArray::try_new(
                text_fields.clone(),
                children,
                s.nulls().cloned(),
            )?)
        }
        (DataType::List(item), DataType::List(text_item)) => {
            let l = column.as_list::<i32>();
            let (_, values) = uuid_text_column(item, l.values())?;
            Arc::new(ListArray::try_new(
                Arc::clone(text_item),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?)
        }
        (DataType::LargeList(item), DataType::LargeList(text_item)) => {
            let l = column.as_list::<i64>();
            let (_, values) = uuid_text_column(item, l.values())?;
            Arc::new(LargeListArray::try_new(
                Arc::clone(text_item),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?)
        }
        (DataType::Map(entries, sorted), DataType::Map(text_entries, _)) => {
            let m = column.as_map();
            let entries_array: ArrayRef = Arc::new(m.entries().clone());
            let (_, text) = uuid_text_column(entries, &entries_array)?;
            Arc::new(MapArray::try_new(
                Arc::clone(text_entries),
                m.offsets().clone(),
                text.as_struct().clone(),
                m.nulls().cloned(),
                *sorted,
            )?)
        }
        _ => Arc::clone(column),
    };
    Ok((text_field, array))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting_tells_null_from_empty() {
        assert_eq!(csv_field(None, ""), "");
        assert_eq!(csv_field(Some(""), ""), "\"\"");
        assert_eq!(csv_field(Some("a,b"), ""), "\"a,b\"");
        assert_eq!(csv_field(Some("say \"hi\""), ""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field(Some("NULL"), "NULL"), "\"NULL\"");
        assert_eq!(csv_field(None, "NULL"), "NULL");
    }

    /// An untyped NULL (`SELECT NULL`) is an array of type `Null`, without a validity
    /// bitmap: it is NULL all the same, in CSV (the null string) and JSON.
    #[test]
    fn untyped_and_dictionary_nulls_are_null() {
        use datafusion::arrow::array::{DictionaryArray, Int32Array, NullArray};
        let nulls = NullArray::new(2);
        let field = Field::new("note", DataType::Null, true);
        assert_eq!(csv_cell(&nulls, &field, 1).unwrap(), None);
        assert_eq!(json_text(&nulls, Some(&field), 1).unwrap(), "null");
        // a valid key pointing at a NULL value
        let dict = DictionaryArray::new(
            Int32Array::from(vec![0, 1]),
            Arc::new(StringArray::from(vec![Some("a"), None])),
        );
        let field = Field::new("d", dict.data_type().clone(), true);
        assert_eq!(csv_cell(&dict, &field, 0).unwrap().as_deref(), Some("a"));
        assert_eq!(csv_cell(&dict, &field, 1).unwrap(), None);
        assert_eq!(json_text(&dict, Some(&field), 1).unwrap(), "null");
    }

    /// UUIDs inside structs, lists and maps (a metadata table's `partition` struct)
    /// become their canonical text for the table output, at any depth, nulls kept (the
    /// table output printed 32 hex digits for them).
    #[test]
    fn nested_uuids_become_text_for_the_table_output() {
        use datafusion::arrow::array::{FixedSizeBinaryArray, Int32Array, ListArray};
        use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
        let tag = std::collections::HashMap::from([(
            "ARROW:extension:name".to_string(),
            "arrow.uuid".to_string(),
        )]);
        let bytes = uuid::Uuid::parse_str("550e8400-e29b-41d4-a716-446655440000")
            .expect("uuid")
            .into_bytes();
        let uuids: ArrayRef = Arc::new(
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                [Some(bytes), None].into_iter(),
                16,
            )
            .expect("uuids"),
        );
        let u = Field::new("u", DataType::FixedSizeBinary(16), true).with_metadata(tag.clone());
        let plain = Field::new("f", DataType::FixedSizeBinary(16), true);
        let st = StructArray::try_new(
            vec![u.clone(), plain.clone()].into(),
            vec![Arc::clone(&uuids), Arc::clone(&uuids)],
            Some(NullBuffer::from(vec![true, false])),
        )
        .expect("struct");
        let item = Field::new("item", DataType::FixedSizeBinary(16), true).with_metadata(tag);
        let list = ListArray::try_new(
            Arc::new(item.clone()),
            OffsetBuffer::from_lengths([2, 0]),
            Arc::clone(&uuids),
            None,
        )
        .expect("list");
        let schema = Arc::new(Schema::new(vec![
            Field::new("p", st.data_type().clone(), true),
            Field::new("l", list.data_type().clone(), true),
            Field::new("n", DataType::Int32, true),
        ]));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(st),
                Arc::new(list),
                Arc::new(Int32Array::from(vec![1, 2])),
            ],
        )
        .expect("batch");
        let text = uuids_as_text(&batch).expect("text");
        assert_eq!(text.schema(), uuids_as_text_schema(&schema));
        let shown = datafusion::arrow::util::pretty::pretty_format_batches(&[text])
            .expect("shown")
            .to_string();
        // the tagged field as text, the untagged `fixed[16]` as before, the NULL struct
        // and the NULL element kept
        assert!(
            shown.contains(
                "| {u: 550e8400-e29b-41d4-a716-446655440000, f: 550e8400e29b41d4a716446655440000} \
                 | [550e8400-e29b-41d4-a716-446655440000, ] | 1 |"
            ),
            "{shown}"
        );
        assert!(
            shown.lines().any(|line| {
                line.split('|').map(str::trim).collect::<Vec<_>>() == ["", "", "[]", "2", ""]
            }),
            "{shown}"
        );
    }

    #[test]
    fn non_finite_floats_are_strings() {
        assert_eq!(float_json(f64::NAN), "\"NaN\"");
        assert_eq!(float_json(f64::NEG_INFINITY), "\"-Infinity\"");
        assert_eq!(float_json(1.5), "1.5");
    }
}
