//! Iceberg's Avro files (manifest lists and manifests) decoded column-wise into Arrow
//! record batches by arrow-rs's Avro reader (`arrow-avro`), and typed access to their
//! columns by field name.
//!
//! Columns are looked up by the names the spec gives each field ("Manifest Lists",
//! "Manifests"); a field that is absent or null reads as `None`, and a column of the
//! wrong Arrow type is an error naming the field. Optional fields are Avro unions with
//! null, which the reader turns into nullable columns.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;

use arrow_avro::reader::{read_header_info, ReaderBuilder};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, FixedSizeBinaryArray, GenericListArray,
    Int32Array, Int64Array, LargeBinaryArray, RecordBatch, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Int32Type};

use super::avro_block_codec::{inflate, inflated_bound, BlockCodec};
use super::avro_header::write_long;
use super::column_stats::ColumnStats;
use super::int_map::IntMap;
use crate::error::{Error, Result};

/// Decode all records of an Avro object container file into record batches: one batch
/// per data block holding records, one column per top-level field of its writer schema.
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
/// Compressed blocks (`deflate`, `snappy`, `zstandard`) are inflated here, each to at
/// most [`inflated_bound`] bytes (64 MiB to 1 GiB by its compressed size), and decoded
/// from the inflated bytes, inflated once.
///
/// Errors ([`InvalidData`](crate::ErrorKind::InvalidData)) name `location`: a block cut
/// short, a wrong sync marker, a block yielding fewer records than it claims, a writer
/// schema whose records or array items could take no bytes (see [`records_take_bytes`]),
/// an unknown codec, a block whose compressed data is corrupt or which inflates beyond
/// its bound (naming the block's byte offset and the bound); a panic inside the decoder
/// on corrupt input is caught and becomes the same error.
/// [`Unsupported`](crate::ErrorKind::Unsupported): the `bzip2` or `xz` codec.
/// [`Io`](crate::ErrorKind::Io): memory for an inflated block cannot be allocated.
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
    let header_len = usize::try_from(header.header_len())
        .ok()
        .filter(|l| *l <= bytes.len())
        .ok_or_else(unreadable)?;
    // The reader stops silently at a block cut short and does not check sync markers:
    // the block framing is checked here, so a truncated file is an error, not fewer rows.
    let blocks = blocks(bytes, header_len, &header.sync()).map_err(|why| corrupt().context(why))?;
    // A normalized schema replaces the header's (no schema resolution: the encoding of
    // the records is unchanged by the normalization).
    let checked = checked_schema(&writer.json_string, location)?;
    let normalized = checked.normalized.as_deref();
    if !checked.records_take_bytes {
        return Err(unreadable().context(
            "its schema allows records or array items of no bytes, which no manifest or \
             manifest list has (a block could then claim any number of them)",
        ));
    }
    // Blocks are inflated here, each to at most a bound (`avro_block_codec`), and handed
    // to the reader under a header naming the `null` codec, so that the reader does not
    // inflate them again (it would with no bound).
    let header_bytes = &bytes[..header_len];
    let entries =
        super::avro_header::entries(header_bytes).map_err(|why| unreadable().context(why))?;
    let codec_value = entries
        .iter()
        .find(|(key, _)| *key == b"avro.codec")
        .map(|(_, value)| *value);
    let codec = BlockCodec::of_header_value(codec_value, location)?;
    let mut replace: Vec<(&str, &[u8])> = vec![];
    if let Some(schema) = normalized {
        replace.push(("avro.schema", schema.as_bytes()));
    }
    if codec != BlockCodec::Null {
        replace.push(("avro.codec", b"null"));
    }
    let file_header: Cow<'_, [u8]> = if replace.is_empty() {
        Cow::Borrowed(header_bytes)
    } else {
        Cow::Owned(
            super::avro_header::with_values(header_bytes, &replace)
                .map_err(|why| unreadable().context(why))?,
        )
    };
    // Each block is decoded by a reader of its own over the header and that block, in
    // one batch of exactly the block's record count. `arrow-avro` 59's `Reader::read`
    // loops forever on a block whose records end before its (decompressed) bytes do:
    // once the block's count is decoded it asks for no more records, yet waits for the
    // block's bytes to be used up. A corrupt length inside a record (or a flipped bit in
    // deflate data, which carries no checksum) does that, and so does a block of no
    // records holding bytes. A full batch makes the reader return before that loop;
    // the batch's row count is checked against the block's count, so no records go
    // missing silently either. Bytes left in a block after its records are ignored, as
    // Avro's Java and Rust readers do. (One reader over all blocks joined into one
    // would read such left bytes as the next block's records.)
    let sync = header.sync();
    let mut batches = Vec::with_capacity(blocks.len());
    for block in blocks {
        if block.count == 0 {
            continue; // holds no records
        }
        let data = &bytes[block.data_start..block.end - 16];
        let records = inflate(
            codec,
            data,
            inflated_bound(data.len()),
            location,
            block.start,
        )?;
        let mut framing = Vec::with_capacity(20);
        write_long(&mut framing, block.count as i64);
        write_long(&mut framing, records.len() as i64);
        let input = file_header
            .as_ref()
            .chain(framing.as_slice())
            .chain(records.as_ref())
            .chain(sync.as_slice());
        let mut reader = ReaderBuilder::new()
            .with_batch_size(block.count)
            .build(input)
            .map_err(|e| unreadable().with_source(e))?;
        let decoded = match reader.next() {
            Some(Ok(batch)) => batch,
            Some(Err(e)) => {
                return Err(corrupt()
                    .context(format!("block at byte {}", block.start))
                    .with_source(e))
            }
            None => RecordBatch::new_empty(reader.schema()),
        };
        if decoded.num_rows() != block.count {
            return Err(corrupt().context(format!(
                "{} records decoded where the block at byte {} holds {}",
                decoded.num_rows(),
                block.start,
                block.count
            )));
        }
        batches.push(decoded);
    }
    Ok(batches)
}

/// What [`decode`] derives from a writer schema: the normalized schema (`None`: the
/// writer's as it is) and whether its records take bytes ([`records_take_bytes`]).
struct CheckedSchema {
    normalized: Option<String>,
    records_take_bytes: bool,
}

/// The checks of recently seen writer schemas, keyed by the schema's JSON text and
/// bounded by [`CHECKED_SCHEMAS_MAX_BYTES`] of it: the manifests of a table share a few
/// writer schemas, and parsing one (several KiB of JSON) costs about as much as decoding
/// a manifest of 100 entries.
static CHECKED_SCHEMAS: std::sync::OnceLock<
    std::sync::Mutex<crate::lru::WeightedLru<std::sync::Arc<str>, std::sync::Arc<CheckedSchema>>>,
> = std::sync::OnceLock::new();

/// The bound of [`CHECKED_SCHEMAS`], in bytes of schema text (keys and normalized
/// schemas).
const CHECKED_SCHEMAS_MAX_BYTES: u64 = 4 << 20;

/// The checks of `writer` (the header's schema JSON), from [`CHECKED_SCHEMAS`] when
/// seen before. Errors as [`normalized_schema`] (they are not cached).
fn checked_schema(writer: &str, location: &str) -> Result<std::sync::Arc<CheckedSchema>> {
    let cache = CHECKED_SCHEMAS.get_or_init(|| {
        std::sync::Mutex::new(crate::lru::WeightedLru::new(CHECKED_SCHEMAS_MAX_BYTES))
    });
    // a poisoned lock only means another decode panicked: the map itself is whole
    let lock = || cache.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(hit) = lock().get(writer) {
        return Ok(hit);
    }
    let normalized = normalized_schema(writer, location)?;
    let records_take_bytes = records_take_bytes(normalized.as_deref().unwrap_or(writer));
    let weight = (writer.len() + normalized.as_ref().map_or(0, String::len)) as u64;
    let checked = std::sync::Arc::new(CheckedSchema {
        normalized,
        records_take_bytes,
    });
    lock().insert(
        std::sync::Arc::from(writer),
        std::sync::Arc::clone(&checked),
        weight,
    );
    Ok(checked)
}

/// One data block of an object container file: its record count and the bytes from
/// its count to the end of its sync marker.
struct Block {
    count: usize,
    start: usize,
    /// Where the block's (compressed) records start, after its count and byte size.
    data_start: usize,
    end: usize,
}

/// The data blocks of an object container file (spec: Avro "Object Container Files":
/// each block is a record count, a byte size, the serialized records and the file's
/// 16-byte sync marker), checking that each ends with the sync marker and that the
/// blocks end exactly at the end of `bytes`.
fn blocks(
    bytes: &[u8],
    header_len: usize,
    sync: &[u8; 16],
) -> std::result::Result<Vec<Block>, String> {
    let mut pos = header_len;
    let mut out = vec![];
    while pos < bytes.len() {
        let start = pos;
        let count = read_long(bytes, &mut pos)?;
        let size = read_long(bytes, &mut pos)?;
        let (Ok(count), Ok(size)) = (usize::try_from(count), usize::try_from(size)) else {
            return Err(format!("negative block count or size at byte {start}"));
        };
        let end = pos
            .checked_add(size)
            .filter(|e| e.checked_add(16).is_some_and(|s| s <= bytes.len()))
            .ok_or_else(|| format!("block at byte {start} is cut short"))?;
        if &bytes[end..end + 16] != sync {
            return Err(format!("sync marker after byte {end} does not match"));
        }
        let data_start = pos;
        pos = end + 16;
        out.push(Block {
            count,
            start,
            data_start,
            end: pos,
        });
    }
    Ok(out)
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

/// Whether every record of the top-level `schema` (Avro schema JSON) and every item of
/// each array in it takes at least one byte of Avro binary encoding: the decoder loops
/// once per record of a block and once per array item a block of the array claims, so
/// each iteration must use up a byte of the input for the loops to end with it. A
/// schema that is not JSON passes (the decoder rejects it).
fn records_take_bytes(schema: &str) -> bool {
    let Ok(schema) = serde_json::from_str::<serde_json::Value>(schema) else {
        return true;
    };
    let mut walk = MinBytes::default();
    walk.of(&schema) > 0 && !walk.empty_items
}

/// The least number of bytes a value of an Avro type takes (spec: Avro "Binary
/// Encoding"), with the named types seen so far.
#[derive(Default)]
struct MinBytes {
    named: HashMap<String, u64>,
    empty_items: bool,
}

impl MinBytes {
    fn of(&mut self, t: &serde_json::Value) -> u64 {
        match t {
            serde_json::Value::String(name) => match name.as_str() {
                "null" => 0,
                "float" => 4,
                "double" => 8,
                "boolean" | "int" | "long" | "string" | "bytes" => 1,
                other => self.named.get(other).copied().unwrap_or(1),
            },
            // a union: the branch index, then the branch
            serde_json::Value::Array(branches) => {
                1 + branches.iter().map(|b| self.of(b)).min().unwrap_or(0)
            }
            serde_json::Value::Object(map) => {
                let size = match map.get("type").and_then(|t| t.as_str()) {
                    Some("record" | "error") => {
                        let fields = map.get("fields").and_then(|f| f.as_array());
                        fields
                            .into_iter()
                            .flatten()
                            .filter_map(|f| f.get("type"))
                            .map(|f| self.of(f))
                            .fold(0u64, u64::saturating_add)
                    }
                    Some("fixed") => map.get("size").and_then(|s| s.as_u64()).unwrap_or(0),
                    Some("enum") => 1,
                    Some("array") => {
                        let items = map.get("items").map_or(0, |i| self.of(i));
                        self.empty_items |= items == 0;
                        1
                    }
                    // map keys are strings, so each entry takes a byte
                    Some("map") => {
                        if let Some(values) = map.get("values") {
                            self.of(values);
                        }
                        1
                    }
                    _ => map.get("type").map_or(0, |t| self.of(t)),
                };
                if let Some(name) = map.get("name").and_then(|n| n.as_str()) {
                    self.named.insert(name.to_string(), size);
                    if let Some(ns) = map.get("namespace").and_then(|n| n.as_str()) {
                        self.named.insert(format!("{ns}.{name}"), size);
                    }
                }
                size
            }
            _ => 0,
        }
    }
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
    /// The map at `row` (empty when absent or null) with the keys (field ids) `keep`
    /// keeps (nothing is read when it keeps none), each value read by `value` from the
    /// value column at an item index; entries whose value reads as `None` (null) are
    /// left out. A null key is an error naming `name`.
    pub(crate) fn get_kept<T>(
        &self,
        row: usize,
        name: &str,
        keep: &ColumnStats,
        value: impl Fn(&V, usize) -> Option<T>,
    ) -> Result<IntMap<T>> {
        let Some((list, keys, values)) = &self.list else {
            return Ok(IntMap::new());
        };
        if keep.keeps_none() {
            return Ok(IntMap::new());
        }
        if list.is_null(row) {
            return Ok(IntMap::new());
        }
        let offsets = list.value_offsets();
        let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
        let mut out = Vec::with_capacity(end - start);
        for i in start..end {
            if keys.is_null(i) {
                return Err(Error::invalid_data(format!(
                    "field '{name}': malformed map"
                )));
            }
            let key = keys.value(i);
            if !keep.keeps(key) {
                continue;
            }
            if let Some(v) = value(values, i) {
                out.push((key, v));
            }
        }
        // present, even with no pairs: `{}`, not null
        Ok(IntMap::from_pairs(out).into_written())
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
        // a block claiming far more records than it has bytes
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
    /// `f` run on a thread of its own; fails the test when it has not returned within
    /// 30 s (the decoder spins) instead of hanging it.
    fn within_deadline<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(30))
            .expect("the Avro decoder did not return within 30 s: it spins")
    }

    /// An object container file of `records` under `schema` (one block).
    fn container(schema: &str, records: Vec<apache_avro::types::Value>) -> Vec<u8> {
        let schema = apache_avro::Schema::parse_str(schema).unwrap();
        let mut w = apache_avro::Writer::new(&schema, Vec::new());
        for r in records {
            w.append(r).unwrap();
        }
        w.into_inner().unwrap()
    }

    /// The byte offset of the first data block (after the header's sync marker).
    fn data_start(bytes: &[u8]) -> usize {
        let sync = &bytes[bytes.len() - 16..];
        bytes.windows(16).position(|w| w == sync).unwrap() + 16
    }

    #[test]
    fn a_block_whose_records_end_before_its_bytes_is_read_without_spinning() {
        use apache_avro::types::Value;
        let bytes = container(
            r#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "string"},
                {"name": "b", "type": "long"}]}"#,
            vec![Value::Record(vec![
                ("a".into(), Value::String("hello".into())),
                ("b".into(), Value::Long(1)),
            ])],
        );
        let start = data_start(&bytes);
        // count 1, size 7: the string's length (5), "hello", the long
        assert_eq!(&bytes[start..start + 3], &[2, 14, 10]);
        // The string's length cut to 1 (a flipped bit, as the fuzz test of corrupt files
        // does): the record ends 4 bytes before its block, where arrow-avro's reader
        // looped forever. The block's one record is read (Avro readers ignore what is
        // left of a block after its records), the sync marker still matches.
        let mut short_string = bytes.clone();
        short_string[start + 2] = 2;
        let batches = within_deadline(move || read_batches(&short_string, "m.avro")).unwrap();
        assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
        let columns = Columns::of_batch(&batches[0]);
        assert_eq!(columns.string("a").unwrap().get(0), Some("h"));
        // A block claiming no records but holding bytes, before the real one: it holds
        // no records, the reader looped forever on it too.
        let mut empty_block = bytes[..start].to_vec();
        empty_block.extend_from_slice(&[0, 4, 1, 2]);
        empty_block.extend_from_slice(&bytes[bytes.len() - 16..]);
        empty_block.extend_from_slice(&bytes[start..]);
        let batches = within_deadline(move || read_batches(&empty_block, "m.avro")).unwrap();
        assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
        let columns = Columns::of_batch(&batches[0]);
        assert_eq!(columns.string("a").unwrap().get(0), Some("hello"));
        assert_eq!(columns.long("b").unwrap().get(0), Some(1));
    }

    /// The mutated file on which the fuzz test of corrupt files (`tests/integration/fuzz.rs`,
    /// seed 16) hung: a manifest list of the corpus with one byte of its deflate block
    /// flipped, so the block's records end before its decompressed bytes.
    #[test]
    fn a_corrupt_deflate_block_of_a_corpus_manifest_list_is_read_without_spinning() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "testdata/corpus/spark_v2_nested/metadata/\
             snap-9022307558027715534-1-eaec2f03-fad3-4e87-acfc-cce2fd109868.avro",
        );
        let original = std::fs::read(&path).unwrap();
        let rows = |batches: &[RecordBatch]| batches.iter().map(|b| b.num_rows()).sum::<usize>();
        let good = read_batches(&original, "snap.avro").unwrap();
        let mut flipped = original.clone();
        let at = flipped.len() - 25; // 9 bytes before the closing sync marker
        flipped[at] ^= 0x0f;
        let result = within_deadline(move || read_batches(&flipped, "/t/metadata/snap.avro"));
        // the block's two records, or an error naming the file: never fewer rows
        match result {
            Ok(batches) => assert_eq!(rows(&batches), rows(&good)),
            Err(err) => {
                assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
                assert!(err.to_string().contains("'/t/metadata/snap.avro'"), "{err}");
            }
        }
        assert_eq!(rows(&good), 2);
    }

    #[test]
    fn a_schema_whose_records_or_items_may_take_no_bytes_is_an_error_naming_the_file() {
        use apache_avro::types::Value;
        // records of nulls only, and an array of nulls: a block could claim any number
        // of them in no bytes, and the decoder would loop through the claimed count
        let nulls = container(
            r#"{"type": "record", "name": "r", "fields": [{"name": "n", "type": "null"}]}"#,
            vec![Value::Record(vec![("n".into(), Value::Null)])],
        );
        let null_items = container(
            r#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
                {"name": "l", "type": {"type": "array", "items": "null"}}]}"#,
            vec![Value::Record(vec![
                ("a".into(), Value::Int(1)),
                ("l".into(), Value::Array(vec![Value::Null])),
            ])],
        );
        for bad in [nulls, null_items] {
            let err =
                within_deadline(move || read_batches(&bad, "/t/metadata/m.avro")).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
            assert!(err.to_string().contains("'/t/metadata/m.avro'"), "{err}");
            assert!(err.to_string().contains("no bytes"), "{err}");
        }
        // a fixed of size 0 in a record with an int, a named record used twice, a
        // union with null: each takes a byte at least
        assert!(records_take_bytes(
            r#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
                {"name": "f", "type": {"type": "fixed", "name": "f0", "size": 0}},
                {"name": "l", "type": {"type": "array", "items": ["null", "f0"]}}]}"#
        ));
        assert!(!records_take_bytes(
            r#"{"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
                {"name": "f", "type": {"type": "fixed", "name": "f0", "size": 0}},
                {"name": "l", "type": {"type": "array", "items": "f0"}}]}"#
        ));
    }

    /// `bytes` (an object container file of deflate blocks) with each data block's
    /// records encoded by `encode` instead, its header naming `codec`.
    fn recoded(bytes: &[u8], codec: &str, encode: impl Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
        let header = read_header_info(bytes).unwrap();
        let header_len = header.header_len() as usize;
        let mut out = crate::spec::avro_header::with_values(
            &bytes[..header_len],
            &[("avro.codec", codec.as_bytes())],
        )
        .unwrap();
        for block in blocks(bytes, header_len, &header.sync()).unwrap() {
            let data = &bytes[block.data_start..block.end - 16];
            let records = inflate(BlockCodec::Deflate, data, 1 << 30, "m.avro", 0).unwrap();
            let encoded = encode(&records);
            write_long(&mut out, block.count as i64);
            write_long(&mut out, encoded.len() as i64);
            out.extend_from_slice(&encoded);
            out.extend_from_slice(&header.sync());
        }
        out
    }

    fn corpus_avro_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                corpus_avro_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "avro") {
                out.push(p);
            }
        }
    }

    /// Blocks are inflated by icefloe and handed to the reader under a `null` codec:
    /// every manifest and manifest list of the corpus (deflate) reads the same with its
    /// blocks stored as `null`, `snappy` and `zstandard`.
    #[test]
    fn every_codec_reads_the_corpus_files_as_deflate_does() {
        use crate::spec::avro_block_codec::tests::{snappy, zstandard};
        let mut files = vec![];
        corpus_avro_files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus"),
            &mut files,
        );
        assert!(files.len() > 50, "{files:?}");
        for path in files {
            let original = std::fs::read(&path).unwrap();
            let expected = read_batches(&original, "m.avro").unwrap();
            assert!(!expected.is_empty(), "{path:?}");
            for (codec, encode) in [
                ("null", (|b: &[u8]| b.to_vec()) as fn(&[u8]) -> Vec<u8>),
                ("snappy", snappy),
                ("zstandard", zstandard),
            ] {
                let file = recoded(&original, codec, encode);
                assert_eq!(
                    read_batches(&file, "m.avro").unwrap(),
                    expected,
                    "{path:?} as {codec}"
                );
            }
        }
    }

    /// Raw deflate data of `chunks` times 8 MiB of zeros: the first 8 MiB compressed,
    /// then the next 8 MiB (matches of the zeros before, byte-aligned by a sync flush)
    /// repeated, then an empty final block: a compression bomb built in milliseconds.
    fn deflate_zeros(chunks: usize) -> Vec<u8> {
        use flate2::{Compress, Compression, FlushCompress};
        let zeros = vec![0u8; 8 << 20];
        let mut c = Compress::new(Compression::best(), false);
        let mut run = |input: &[u8], flush| {
            let mut out = Vec::with_capacity(1 << 20);
            let before = c.total_in();
            c.compress_vec(input, &mut out, flush).unwrap();
            assert_eq!(c.total_in() - before, input.len() as u64);
            out
        };
        let first = run(&zeros, FlushCompress::Sync);
        let next = run(&zeros, FlushCompress::Sync);
        let last = run(&[], FlushCompress::Finish);
        let mut out = first;
        for _ in 1..chunks {
            out.extend_from_slice(&next);
        }
        out.extend_from_slice(&last);
        out
    }

    /// Report W67 F10: a manifest list whose one deflate block inflates past its bound
    /// (the larger of 64 MiB and 1,000 times its compressed size) is an error naming
    /// the file and the block's byte offset; inflating stops at the bound.
    #[test]
    fn a_deflate_bomb_is_an_error_naming_the_file_and_the_block() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "testdata/corpus/spark_v2_nested/metadata/\
             snap-9022307558027715534-1-eaec2f03-fad3-4e87-acfc-cce2fd109868.avro",
        );
        let original = std::fs::read(&path).unwrap();
        let header = read_header_info(original.as_slice()).unwrap();
        let header_len = header.header_len() as usize;
        let block = &blocks(&original, header_len, &header.sync()).unwrap()[0];
        let bomb = deflate_zeros(10); // 80 MiB
        let bound = inflated_bound(bomb.len());
        assert!(
            80 << 20 > bound,
            "{} bytes may inflate to {bound}",
            bomb.len()
        );
        let mut file = original[..header_len].to_vec();
        write_long(&mut file, block.count as i64);
        write_long(&mut file, bomb.len() as i64);
        file.extend_from_slice(&bomb);
        file.extend_from_slice(&header.sync());
        let err =
            within_deadline(move || read_batches(&file, "/t/metadata/snap.avro")).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
        assert!(
            err.to_string().contains(&format!(
                "block at byte {header_len} inflates beyond {bound} bytes: corrupt Avro \
                 data in '/t/metadata/snap.avro'"
            )),
            "{err}"
        );
        // the same block within its bound reads (the records, then zeros ignored)
        let mut fits = original[..header_len].to_vec();
        let data = &original[block.data_start..block.end - 16];
        let mut records = inflate(BlockCodec::Deflate, data, 1 << 20, "m", 0)
            .unwrap()
            .into_owned();
        records.resize(records.len() + (1 << 20), 0);
        let fitting = crate::spec::avro_block_codec::tests::deflate(&records);
        write_long(&mut fits, block.count as i64);
        write_long(&mut fits, fitting.len() as i64);
        fits.extend_from_slice(&fitting);
        fits.extend_from_slice(&header.sync());
        assert_eq!(
            read_batches(&fits, "snap.avro").unwrap(),
            read_batches(&original, "snap.avro").unwrap()
        );
    }
}
