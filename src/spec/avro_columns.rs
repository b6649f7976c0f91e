//! Iceberg's Avro files (manifest lists and manifests) decoded column-wise into Arrow
//! record batches by arrow-rs's Avro reader (`arrow-avro`), and typed access to their
//! columns by field name.
//!
//! Columns are looked up by the names the spec gives each field ("Manifest Lists",
//! "Manifests"); a field that is absent or null reads as `None`, and a column of the
//! wrong Arrow type is an error naming the field. Optional fields are Avro unions with
//! null, which the reader turns into nullable columns.

use std::collections::HashMap;

use arrow_avro::reader::{read_header_info, ReaderBuilder};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, FixedSizeBinaryArray, GenericListArray,
    Int32Array, Int64Array, LargeBinaryArray, RecordBatch, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Int32Type};

use crate::error::{Error, Result};

/// Rows decoded per record batch: a manifest or manifest list is read in as few batches
/// as possible, since the conversion to domain types works per batch.
const BATCH_ROWS: usize = 64 * 1024;

/// Decode all records of an Avro object container file into record batches (one column
/// per top-level field of its writer schema).
///
/// The header's writer schema is normalized where `arrow-avro` 59 cannot read it (no
/// change alters Avro's binary encoding of the records):
/// - nested records without fields (the `partition` tuple of an unpartitioned table's
///   manifest) are left out: they occupy no bytes, and `arrow-avro` cannot build an
///   Arrow struct without fields (apache/arrow-rs#10770);
/// - a logical type wrapped around a named type (`{"type": {"type": "fixed", ...},
///   "logicalType": "decimal", ...}`, as apache-avro writes decimals on `fixed`) is
///   written flat, the logical type's attributes on the named type;
/// - a key repeated within one JSON object is kept once (the last value): apache-avro
///   0.21 writes a decimal on `fixed` with its `logicalType`, `precision` and `scale`
///   twice, which `arrow-avro`'s schema parser rejects.
///
/// Errors name `location`; a panic inside the decoder on corrupt input is caught and
/// becomes the same [`InvalidData`](crate::ErrorKind::InvalidData) error.
pub(crate) fn read_batches(bytes: &[u8], location: &str) -> Result<Vec<RecordBatch>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decode(bytes, location)))
        .unwrap_or_else(|_| {
            Err(Error::invalid_data(format!(
                "'{location}' is not a readable Avro file (the Avro decoder failed on it)"
            )))
        })
}

fn decode(bytes: &[u8], location: &str) -> Result<Vec<RecordBatch>> {
    let unreadable = || Error::invalid_data(format!("'{location}' is not a readable Avro file"));
    let corrupt = || Error::invalid_data(format!("corrupt Avro data in '{location}'"));
    let header = read_header_info(bytes).map_err(|e| unreadable().with_source(e))?;
    let writer = header
        .writer_schema()
        .map_err(|e| unreadable().with_source(e))?;
    let header_len = usize::try_from(header.header_len()).map_err(|_| unreadable())?;
    // The reader stops silently at a block cut short and does not check sync markers:
    // the block framing is checked here, so a truncated file is an error, not fewer rows.
    let rows =
        block_rows(bytes, header_len, &header.sync()).map_err(|why| corrupt().context(why))?;
    // A normalized schema replaces the header's (no schema resolution: the encoding of
    // the records is unchanged by the normalization).
    let rewritten = match normalized_schema(&writer.json_string, location)? {
        None => None,
        Some(schema) => {
            Some(with_schema(bytes, header_len, &schema).map_err(|why| unreadable().context(why))?)
        }
    };
    let input: &[u8] = rewritten.as_deref().unwrap_or(bytes);
    let reader = ReaderBuilder::new()
        .with_batch_size(BATCH_ROWS)
        .build(input)
        .map_err(|e| unreadable().with_source(e))?;
    let batches = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| corrupt().with_source(e))?;
    let decoded: usize = batches.iter().map(|b| b.num_rows()).sum();
    if decoded != rows {
        return Err(corrupt().context(format!(
            "{decoded} records decoded where the blocks hold {rows}"
        )));
    }
    Ok(batches)
}

/// `bytes` (an object container file whose header is `header_len` bytes) with the
/// `avro.schema` of its header replaced by `schema` (spec: Avro "Object Container
/// Files": magic, a metadata map of bytes, the sync marker).
fn with_schema(
    bytes: &[u8],
    header_len: usize,
    schema: &str,
) -> std::result::Result<Vec<u8>, String> {
    let mut pos = 4; // magic
    let mut out = Vec::with_capacity(bytes.len() + schema.len());
    out.extend_from_slice(bytes.get(..4).ok_or("file cut short")?);
    let mut entries: Vec<(&[u8], &[u8])> = vec![];
    loop {
        let count = read_long(bytes, &mut pos)?;
        if count == 0 {
            break;
        }
        if count < 0 {
            read_long(bytes, &mut pos)?; // the block's byte size
        }
        for _ in 0..count.unsigned_abs() {
            let key = read_bytes(bytes, &mut pos)?;
            let value = read_bytes(bytes, &mut pos)?;
            entries.push((key, value));
        }
    }
    write_long(&mut out, entries.len() as i64);
    for (key, value) in entries {
        let value = if key == b"avro.schema" {
            schema.as_bytes()
        } else {
            value
        };
        write_long(&mut out, key.len() as i64);
        out.extend_from_slice(key);
        write_long(&mut out, value.len() as i64);
        out.extend_from_slice(value);
    }
    write_long(&mut out, 0);
    if pos + 16 != header_len {
        return Err("header length does not match its metadata".to_string());
    }
    out.extend_from_slice(&bytes[pos..]);
    Ok(out)
}

fn read_bytes<'b>(bytes: &'b [u8], pos: &mut usize) -> std::result::Result<&'b [u8], String> {
    let len = usize::try_from(read_long(bytes, pos)?).map_err(|_| "negative length")?;
    let end = pos
        .checked_add(len)
        .filter(|e| *e <= bytes.len())
        .ok_or("header cut short")?;
    let out = &bytes[*pos..end];
    *pos = end;
    Ok(out)
}

fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// The number of records in the data blocks of an object container file (spec: Avro
/// "Object Container Files": each block is a record count, a byte size, the
/// serialized records and the file's 16-byte sync marker), checking that the blocks
/// end exactly at the end of `bytes`.
fn block_rows(
    bytes: &[u8],
    header_len: usize,
    sync: &[u8; 16],
) -> std::result::Result<usize, String> {
    let mut pos = header_len;
    let mut rows = 0usize;
    while pos < bytes.len() {
        let count = read_long(bytes, &mut pos)?;
        let size = read_long(bytes, &mut pos)?;
        let (Ok(count), Ok(size)) = (usize::try_from(count), usize::try_from(size)) else {
            return Err(format!("negative block count or size at byte {pos}"));
        };
        // Every record of a manifest or manifest list takes at least one byte (its first
        // field is a required `int` or `string`), so a block claiming more records than
        // bytes is corrupt; without this check the reader would spin through the claimed
        // count on no data.
        if count > size {
            return Err(format!(
                "block at byte {pos} claims {count} records in {size} bytes"
            ));
        }
        let end = pos
            .checked_add(size)
            .filter(|e| e.checked_add(16).is_some_and(|s| s <= bytes.len()))
            .ok_or_else(|| format!("block at byte {pos} is cut short"))?;
        if &bytes[end..end + 16] != sync {
            return Err(format!("sync marker after byte {end} does not match"));
        }
        pos = end + 16;
        rows = rows.saturating_add(count);
    }
    Ok(rows)
}

/// An Avro `long` (zig-zag varint) at `pos`, advancing it.
fn read_long(bytes: &[u8], pos: &mut usize) -> std::result::Result<i64, String> {
    let mut value: u64 = 0;
    for shift in (0..64).step_by(7) {
        let Some(&b) = bytes.get(*pos) else {
            return Err("file cut short in a block header".to_string());
        };
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
        }
    }
    Err(format!("varint longer than 10 bytes before byte {pos}"))
}

/// The writer schema normalized as [`read_batches`] describes, or `None` when it needs
/// no change.
fn normalized_schema(writer: &str, location: &str) -> Result<Option<String>> {
    // cheap pre-check on the schema without whitespace
    let compact = writer.replace(char::is_whitespace, "");
    if !compact.contains("\"fields\":[]")
        && !compact.contains("\"logicalType\":\"decimal\"")
        && !compact.contains("\"type\":{\"type\":\"fixed\"")
        && !compact.contains("\"type\":{\"type\":\"bytes\"")
    {
        return Ok(None);
    }
    let mut schema: serde_json::Value = serde_json::from_str(writer).map_err(|e| {
        Error::invalid_data(format!("'{location}': the Avro schema is not JSON")).with_source(e)
    })?;
    // re-serialized even when `normalize` changed nothing: parsing dropped repeated keys
    normalize(&mut schema);
    Ok(Some(schema.to_string()))
}

fn is_empty_record(v: &serde_json::Value) -> bool {
    v.get("type").and_then(|t| t.as_str()) == Some("record")
        && v.get("fields")
            .and_then(|f| f.as_array())
            .is_some_and(|f| f.is_empty())
}

/// Normalize at any depth; whether anything changed.
fn normalize(v: &mut serde_json::Value) -> bool {
    let mut changed = false;
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Array(fields)) = map.get_mut("fields") {
                let before = fields.len();
                fields.retain(|f| !f.get("type").is_some_and(is_empty_record));
                changed |= fields.len() != before;
            }
            // a logical type around a named type: hoist the named type
            let wrapped = map.contains_key("logicalType")
                && !map.contains_key("name")
                && map.get("type").is_some_and(|t| t.is_object());
            if wrapped {
                if let Some(serde_json::Value::Object(mut inner)) = map.remove("type") {
                    for (k, val) in std::mem::take(map) {
                        inner.entry(k).or_insert(val);
                    }
                    *map = inner;
                    changed = true;
                }
            }
            for child in map.values_mut() {
                changed |= normalize(child);
            }
        }
        serde_json::Value::Array(items) => {
            for child in items {
                changed |= normalize(child);
            }
        }
        _ => {}
    }
    changed
}

/// The columns of one record: the top level of a batch or a nested struct.
#[derive(Clone)]
pub(crate) struct Columns<'a> {
    names: Vec<&'a str>,
    arrays: &'a [ArrayRef],
}

fn mismatch(name: &str, expected: &str, found: &DataType) -> Error {
    Error::invalid_data(format!(
        "field '{name}': expected {expected}, found Avro data read as {found}"
    ))
}

impl<'a> Columns<'a> {
    /// The top-level columns of a batch.
    pub(crate) fn of_batch(batch: &'a RecordBatch) -> Self {
        let schema = batch.schema_ref();
        Columns {
            names: schema.fields().iter().map(|f| f.name().as_str()).collect(),
            arrays: batch.columns(),
        }
    }

    /// The children of a struct column.
    pub(crate) fn of_struct(array: &'a StructArray) -> Self {
        Columns {
            names: array.fields().iter().map(|f| f.name().as_str()).collect(),
            arrays: array.columns(),
        }
    }

    /// The column named `name`, if present.
    pub(crate) fn get(&self, name: &str) -> Option<&'a ArrayRef> {
        let arrays = self.arrays;
        self.names
            .iter()
            .position(|n| *n == name)
            .map(|i| &arrays[i])
    }

    /// A struct column (absent: `None`).
    pub(crate) fn struct_col(&self, name: &str) -> Result<Option<&'a StructArray>> {
        match self.get(name) {
            None => Ok(None),
            Some(a) => a
                .as_struct_opt()
                .map(Some)
                .ok_or_else(|| mismatch(name, "a record", a.data_type())),
        }
    }

    /// An int or long column.
    pub(crate) fn long(&self, name: &str) -> Result<LongCol<'a>> {
        Ok(match self.get(name) {
            None => LongCol::Absent,
            Some(a) => match a.data_type() {
                DataType::Int64 => LongCol::Long(a.as_primitive()),
                DataType::Int32 => LongCol::Int(a.as_primitive::<Int32Type>()),
                other => return Err(mismatch(name, "long", other)),
            },
        })
    }

    /// A string column (Avro string or enum).
    pub(crate) fn string(&self, name: &str) -> Result<StrCol<'a>> {
        Ok(match self.get(name) {
            None => StrCol::Absent,
            Some(a) => match a.data_type() {
                DataType::Utf8 => StrCol::Utf8(a.as_string::<i32>()),
                DataType::Utf8View => StrCol::View(a.as_string_view()),
                DataType::Dictionary(k, v) if **k == DataType::Int32 && **v == DataType::Utf8 => {
                    let dict = a.as_dictionary::<Int32Type>();
                    let values = dict.values().as_string::<i32>();
                    StrCol::Enum(dict.keys(), values)
                }
                other => return Err(mismatch(name, "string", other)),
            },
        })
    }

    /// A bytes or fixed column.
    pub(crate) fn bytes(&self, name: &str) -> Result<BytesCol<'a>> {
        match self.get(name) {
            None => Ok(BytesCol::Absent),
            Some(a) => BytesCol::of(a).ok_or_else(|| mismatch(name, "bytes", a.data_type())),
        }
    }

    /// A boolean column.
    pub(crate) fn boolean(&self, name: &str) -> Result<Option<&'a BooleanArray>> {
        match self.get(name) {
            None => Ok(None),
            Some(a) => a
                .as_boolean_opt()
                .map(Some)
                .ok_or_else(|| mismatch(name, "boolean", a.data_type())),
        }
    }

    /// An array column (`None` when absent).
    pub(crate) fn list(&self, name: &str) -> Result<Option<&'a GenericListArray<i32>>> {
        match self.get(name) {
            None => Ok(None),
            Some(a) => a
                .as_list_opt::<i32>()
                .map(Some)
                .ok_or_else(|| mismatch(name, "an array", a.data_type())),
        }
    }

    /// An array of ints or longs (`split_offsets`, `equality_ids`).
    pub(crate) fn long_list(&self, name: &str) -> Result<LongListCol<'a>> {
        let Some(list) = self.list(name)? else {
            return Ok(LongListCol { list: None });
        };
        let values = match list.values().data_type() {
            DataType::Int64 => LongCol::Long(list.values().as_primitive()),
            DataType::Int32 => LongCol::Int(list.values().as_primitive::<Int32Type>()),
            other => return Err(mismatch(name, "an array of numbers", other)),
        };
        Ok(LongListCol {
            list: Some((list, values)),
        })
    }

    /// An Iceberg int→long map (`column_sizes` etc.), stored as an array of
    /// `{key, value}` records (spec: "Avro", maps with non-string keys).
    pub(crate) fn long_map(&self, name: &str) -> Result<IntMapCol<'a, LongCol<'a>>> {
        self.int_map(name, |a| match a.data_type() {
            DataType::Int64 => Some(LongCol::Long(a.as_primitive())),
            DataType::Int32 => Some(LongCol::Int(a.as_primitive::<Int32Type>())),
            _ => None,
        })
    }

    /// An Iceberg int→binary map (`lower_bounds`, `upper_bounds`).
    pub(crate) fn bytes_map(&self, name: &str) -> Result<IntMapCol<'a, BytesCol<'a>>> {
        self.int_map(name, BytesCol::of)
    }

    fn int_map<V>(
        &self,
        name: &str,
        value: impl Fn(&'a ArrayRef) -> Option<V>,
    ) -> Result<IntMapCol<'a, V>> {
        let bad = || Error::invalid_data(format!("field '{name}': malformed map"));
        let Some(list) = self.list(name)? else {
            return Ok(IntMapCol { list: None });
        };
        let entries = list.values().as_struct_opt().ok_or_else(bad)?;
        let entry = Columns::of_struct(entries);
        let keys = match entry.get("key") {
            Some(k) if k.data_type() == &DataType::Int32 => k.as_primitive::<Int32Type>(),
            _ => return Err(bad()),
        };
        let values = entry.get("value").and_then(value).ok_or_else(bad)?;
        Ok(IntMapCol {
            list: Some((list, keys, values)),
        })
    }
}

/// A column of Avro ints or longs.
#[derive(Clone, Copy)]
pub(crate) enum LongCol<'a> {
    /// The field is not in the file.
    Absent,
    /// Avro `int`.
    Int(&'a Int32Array),
    /// Avro `long`.
    Long(&'a Int64Array),
}

impl LongCol<'_> {
    /// The value at `row`, `None` when absent or null.
    pub(crate) fn get(&self, row: usize) -> Option<i64> {
        match self {
            LongCol::Absent => None,
            LongCol::Int(a) => a.is_valid(row).then(|| i64::from(a.value(row))),
            LongCol::Long(a) => a.is_valid(row).then(|| a.value(row)),
        }
    }

    /// The value at `row` as an int; an error naming `name` when out of range.
    pub(crate) fn get_int(&self, row: usize, name: &str) -> Result<Option<i32>> {
        match self.get(row) {
            None => Ok(None),
            Some(v) => i32::try_from(v)
                .map(Some)
                .map_err(|_| Error::invalid_data(format!("field '{name}': {v} out of int range"))),
        }
    }
}

/// A column of Avro strings or enum symbols.
pub(crate) enum StrCol<'a> {
    /// The field is not in the file.
    Absent,
    /// Avro `string`.
    Utf8(&'a datafusion::arrow::array::StringArray),
    /// Avro `string` read as string views.
    View(&'a datafusion::arrow::array::StringViewArray),
    /// Avro `enum`: symbol indexes and symbols.
    Enum(&'a Int32Array, &'a datafusion::arrow::array::StringArray),
}

impl<'a> StrCol<'a> {
    /// The value at `row`, `None` when absent or null.
    pub(crate) fn get(&self, row: usize) -> Option<&'a str> {
        match self {
            StrCol::Absent => None,
            StrCol::Utf8(a) => a.is_valid(row).then(|| a.value(row)),
            StrCol::View(a) => a.is_valid(row).then(|| a.value(row)),
            StrCol::Enum(keys, symbols) => {
                if !keys.is_valid(row) {
                    return None;
                }
                let k = usize::try_from(keys.value(row)).ok()?;
                (k < symbols.len()).then(|| symbols.value(k))
            }
        }
    }
}

/// A column of Avro bytes or fixed values.
#[derive(Clone, Copy)]
pub(crate) enum BytesCol<'a> {
    /// The field is not in the file.
    Absent,
    /// Avro `bytes`.
    Binary(&'a BinaryArray),
    /// Avro `bytes` with 64-bit offsets.
    Large(&'a LargeBinaryArray),
    /// Avro `fixed`.
    Fixed(&'a FixedSizeBinaryArray),
}

impl<'a> BytesCol<'a> {
    /// Bytes access to `array`, `None` when it does not hold bytes.
    pub(crate) fn of(array: &'a ArrayRef) -> Option<Self> {
        match array.data_type() {
            DataType::Binary => Some(BytesCol::Binary(array.as_binary())),
            DataType::LargeBinary => Some(BytesCol::Large(array.as_binary())),
            DataType::FixedSizeBinary(_) => Some(BytesCol::Fixed(array.as_fixed_size_binary())),
            _ => None,
        }
    }

    /// The value at `row`, `None` when absent or null.
    pub(crate) fn get(&self, row: usize) -> Option<&'a [u8]> {
        match self {
            BytesCol::Absent => None,
            BytesCol::Binary(a) => a.is_valid(row).then(|| a.value(row)),
            BytesCol::Large(a) => a.is_valid(row).then(|| a.value(row)),
            BytesCol::Fixed(a) => a.is_valid(row).then(|| a.value(row)),
        }
    }
}

/// A column of arrays of ints or longs.
pub(crate) struct LongListCol<'a> {
    list: Option<(&'a GenericListArray<i32>, LongCol<'a>)>,
}

impl LongListCol<'_> {
    /// The items at `row` (empty when absent or null); a null item is an error naming
    /// `name`.
    pub(crate) fn get(&self, row: usize, name: &str) -> Result<Vec<i64>> {
        let Some((list, values)) = &self.list else {
            return Ok(vec![]);
        };
        if list.is_null(row) {
            return Ok(vec![]);
        }
        let offsets = list.value_offsets();
        let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
        (start..end)
            .map(|i| {
                values
                    .get(i)
                    .ok_or_else(|| Error::invalid_data(format!("field '{name}': expected numbers")))
            })
            .collect()
    }
}

/// A column of int-keyed maps whose values are read through a `V` column.
pub(crate) struct IntMapCol<'a, V> {
    list: Option<(&'a GenericListArray<i32>, &'a Int32Array, V)>,
}

impl<V> IntMapCol<'_, V> {
    /// The map at `row` (empty when absent or null), each value read by `value` from
    /// the value column at an item index; entries whose value reads as `None` (null)
    /// are left out. A null key is an error naming `name`.
    pub(crate) fn get<T>(
        &self,
        row: usize,
        name: &str,
        value: impl Fn(&V, usize) -> Option<T>,
    ) -> Result<HashMap<i32, T>> {
        let Some((list, keys, values)) = &self.list else {
            return Ok(HashMap::new());
        };
        if list.is_null(row) {
            return Ok(HashMap::new());
        }
        let offsets = list.value_offsets();
        let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
        let mut out = HashMap::with_capacity(end - start);
        for i in start..end {
            if keys.is_null(i) {
                return Err(Error::invalid_data(format!(
                    "field '{name}': malformed map"
                )));
            }
            if let Some(v) = value(values, i) {
                out.insert(keys.value(i), v);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_schema_drops_empty_records_and_flattens_wrapped_logical_types() {
        let writer = r#"{"type": "record", "name": "manifest_entry", "fields": [
            {"name": "partition", "type": {"type": "record", "name": "r102", "fields": []}},
            {"name": "d", "type": ["null", {"type": {"type": "fixed", "name": "decimal_1",
                "size": 4}, "logicalType": "decimal", "precision": 9, "scale": 2}]}]}"#;
        let normalized: serde_json::Value =
            serde_json::from_str(&normalized_schema(writer, "m.avro").unwrap().unwrap()).unwrap();
        assert_eq!(
            normalized,
            serde_json::json!({"type": "record", "name": "manifest_entry", "fields": [
                {"name": "d", "type": ["null", {"type": "fixed", "name": "decimal_1",
                    "size": 4, "logicalType": "decimal", "precision": 9, "scale": 2}]}]})
        );
        // apache-avro's decimal on fixed, keys repeated
        let repeated = r#"{"type": "record", "name": "r", "fields": [{"name": "d", "type":
            {"type": "fixed", "name": "decimal_1", "size": 4, "logicalType": "decimal",
             "precision": 9, "scale": 2, "logicalType": "decimal", "scale": 2,
             "precision": 9}}]}"#;
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(
                &normalized_schema(repeated, "m.avro").unwrap().unwrap()
            )
            .unwrap(),
            serde_json::json!({"type": "record", "name": "r", "fields": [{"name": "d", "type":
                {"type": "fixed", "name": "decimal_1", "size": 4, "logicalType": "decimal",
                 "precision": 9, "scale": 2}}]})
        );
        let plain = r#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]}"#;
        assert_eq!(normalized_schema(plain, "m.avro").unwrap(), None);
    }

    #[test]
    fn a_corrupt_header_is_an_error_naming_the_file() {
        let schema = apache_avro::Schema::parse_str(
            r#"{"type": "record", "name": "manifest_entry", "fields": [{"name": "p", "type":
                {"type": "record", "name": "r2", "fields": [{"name": "a", "type": "long"}]}}]}"#,
        )
        .unwrap();
        let mut w = apache_avro::Writer::new(&schema, Vec::new());
        w.append(apache_avro::types::Value::Record(vec![(
            "p".into(),
            apache_avro::types::Value::Record(vec![(
                "a".into(),
                apache_avro::types::Value::Long(1),
            )]),
        )]))
        .unwrap();
        let bytes = w.into_inner().unwrap();
        assert_eq!(read_batches(&bytes, "m.avro").unwrap()[0].num_rows(), 1);
        // a schema that is not JSON, the data or the sync marker cut short, a wrong sync
        let needle = br#""name":"r2""#;
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .unwrap()
            + 8;
        let mut bad_json = bytes.clone();
        bad_json[at - 1] = b'{';
        let mut bad_sync = bytes.clone();
        let last = bad_sync.len() - 1;
        bad_sync[last] ^= 0xff;
        // a block claiming far more records than it has bytes (the reader would spin)
        let sync = &bytes[bytes.len() - 16..];
        let data_start = bytes.windows(16).position(|w| w == sync).unwrap() + 16;
        assert_eq!(bytes[data_start], 2, "one record");
        let mut bad_count = bytes[..data_start].to_vec();
        bad_count.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff, 0x0f]);
        bad_count.extend_from_slice(&bytes[data_start + 1..]);
        for bad in [
            bad_count,
            bad_json,
            bytes[..bytes.len() - 20].to_vec(),
            bytes[..bytes.len() - 1].to_vec(),
            bad_sync,
        ] {
            let err = read_batches(&bad, "/t/metadata/m.avro").unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
            assert!(err.to_string().contains("'/t/metadata/m.avro'"), "{err}");
        }
    }
}
