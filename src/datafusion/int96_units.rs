//! The unit each INT96 timestamp column of a data file is decoded in.
//!
//! INT96 (Impala/Hive/old Spark files, migrated with `add_files`) holds a Julian day and
//! the nanoseconds of that day. Decoded to Arrow nanoseconds in an `i64`, a year outside
//! 1677..2262 wraps around (3332 reads as 2163, the `parquet` crate's `Int96::to_nanos`);
//! decoded to microseconds it covers any year Spark or Hive writes but drops the part
//! finer than a microsecond. So each INT96 column is decoded in the unit of the table
//! column it is read as (spec: "Primitive Types"): nanoseconds for `timestamp_ns` /
//! `timestamptz_ns` (v3), whose values keep their nanoseconds, and microseconds for
//! every other column (`timestamp` / `timestamptz`, or a column the table does not read).
//!
//! The unit is chosen per column through the footer's Arrow schema hint
//! (`ARROW:schema`), which the `parquet` crate honours for INT96 columns: the footer the
//! scan sees carries a hint that is the file's own Arrow schema with each INT96 column's
//! unit set ([`with_int96_units`]). A value of an INT96 column decoded in nanoseconds
//! that lies outside the `i64` nanosecond range cannot be read as the table's type: the
//! file is checked before it is read ([`check_nanosecond_range`]) and such a value fails
//! the scan naming the file and the column, where the decoder would wrap it silently.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray};
use datafusion::arrow::datatypes::{
    DataType, Field, FieldRef, Schema, TimeUnit, TimestampMicrosecondType,
};
use datafusion::parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use datafusion::parquet::arrow::{
    encode_arrow_schema, ParquetRecordBatchStreamBuilder, ProjectionMask, ARROW_SCHEMA_META_KEY,
};
use datafusion::parquet::basic::Type as PhysicalType;
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::metadata::{
    FileMetaData, KeyValue, ParquetMetaData, ParquetMetaDataBuilder,
};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::ObjectStore;

use crate::error::{Error, Result};
use crate::spec::arrow::arrow_field_id;

/// The INT96 columns of a file that the table reads in nanoseconds: Parquet leaf column
/// index → the table column's dotted path and field id (for errors).
pub(crate) type NanosecondColumns = BTreeMap<usize, (String, Option<i32>)>;

/// The leaf columns (Parquet column indices) of `file_columns` (a data file's top-level
/// Arrow fields, in file order, each annotated with the field ids it has or the name
/// mapping gives it) that are read as a nanosecond timestamp of the table: `table`
/// maps a field id to the table column (with the ids of its nested fields). Struct
/// fields are matched by field id, list elements and map keys/values by position. The
/// result holds every leaf whose table type is `Timestamp(Nanosecond, _)`, INT96 or not;
/// [`with_int96_units`] keeps the INT96 ones.
pub(crate) fn nanosecond_leaves(
    file_columns: &[Field],
    table: &HashMap<i32, Field>,
) -> NanosecondColumns {
    let mut out = BTreeMap::new();
    let mut leaf = 0;
    for f in file_columns {
        let t = arrow_field_id(f).and_then(|id| table.get(&id));
        walk(f, t, t.map(|t| t.name().clone()), &mut leaf, &mut out);
    }
    out
}

fn walk(
    file: &Field,
    table: Option<&Field>,
    path: Option<String>,
    leaf: &mut usize,
    out: &mut NanosecondColumns,
) {
    let child_path = |name: &str| path.as_ref().map(|p| format!("{p}.{name}"));
    match file.data_type() {
        DataType::Struct(fields) => {
            let table_fields = match table.map(Field::data_type) {
                Some(DataType::Struct(t)) => Some(t),
                _ => None,
            };
            for f in fields {
                let t = arrow_field_id(f).and_then(|id| {
                    table_fields?
                        .iter()
                        .find(|t| arrow_field_id(t) == Some(id))
                        .map(Arc::as_ref)
                });
                walk(f, t, t.and_then(|t| child_path(t.name())), leaf, out);
            }
        }
        DataType::List(e) | DataType::LargeList(e) | DataType::FixedSizeList(e, _) => {
            let t = match table.map(Field::data_type) {
                Some(DataType::List(t) | DataType::LargeList(t)) => Some(t.as_ref()),
                _ => None,
            };
            walk(e, t, child_path("element"), leaf, out);
        }
        DataType::Map(entries, _) => {
            let table_kv = match table.map(Field::data_type) {
                Some(DataType::Map(t, _)) => match t.data_type() {
                    DataType::Struct(kv) if kv.len() == 2 => Some(kv),
                    _ => None,
                },
                _ => None,
            };
            if let DataType::Struct(kv) = entries.data_type() {
                for (i, (f, name)) in kv.iter().zip(["key", "value"]).enumerate() {
                    let t = table_kv.map(|t| t[i].as_ref());
                    walk(f, t, child_path(name), leaf, out);
                }
            }
        }
        _ => {
            if let (Some(t), Some(p)) = (table, path) {
                if matches!(t.data_type(), DataType::Timestamp(TimeUnit::Nanosecond, _)) {
                    out.insert(*leaf, (p, arrow_field_id(t)));
                }
            }
            *leaf += 1;
        }
    }
}

/// Whether the file has an INT96 column, the columns whose decoding unit
/// [`with_int96_units`] sets.
pub(crate) fn has_int96(metadata: &ParquetMetaData) -> bool {
    metadata
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .any(|c| c.physical_type() == PhysicalType::INT96)
}

/// `metadata` whose Arrow schema hint reads every INT96 column of the file in
/// microseconds but those in `nanos` (leaf column indices, see [`nanosecond_leaves`]),
/// read in nanoseconds; `physical` is the file's Arrow schema as the `parquet` crate
/// reads its footer. `None` when the file has no INT96 column (nothing to change).
///
/// Errors: `physical` does not have one leaf per Parquet column (`InvalidData`).
pub(crate) fn with_int96_units(
    metadata: &ParquetMetaData,
    physical: &Schema,
    nanos: &NanosecondColumns,
) -> Result<Option<ParquetMetaData>> {
    if !has_int96(metadata) {
        return Ok(None);
    }
    let file = metadata.file_metadata();
    let int96: Vec<bool> = file
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.physical_type() == PhysicalType::INT96)
        .collect();
    let mut leaf = 0;
    let fields: Vec<FieldRef> = physical
        .fields()
        .iter()
        .map(|f| with_units(f, &int96, nanos, &mut leaf))
        .collect();
    if leaf != int96.len() {
        return Err(Error::invalid_data(format!(
            "its Arrow schema has {leaf} leaf columns where its Parquet schema has {}",
            int96.len()
        )));
    }
    let hint = encode_arrow_schema(&Schema::new(fields));
    let mut kv: Vec<KeyValue> = file
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .filter(|e| e.key != ARROW_SCHEMA_META_KEY)
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    kv.push(KeyValue::new(ARROW_SCHEMA_META_KEY.to_string(), hint));
    let file_metadata = FileMetaData::new(
        file.version(),
        file.num_rows(),
        file.created_by().map(str::to_string),
        Some(kv),
        file.schema_descr_ptr(),
        file.column_orders().cloned(),
    );
    let mut old = metadata.clone().into_builder();
    Ok(Some(
        ParquetMetaDataBuilder::new(file_metadata)
            .set_row_groups(old.take_row_groups())
            .set_column_index(old.take_column_index())
            .set_offset_index(old.take_offset_index())
            .build(),
    ))
}

/// `field` with each INT96 leaf (by Parquet leaf index, counted from `leaf`) in
/// nanoseconds when in `nanos`, else microseconds, its zone kept.
fn with_units(
    field: &FieldRef,
    int96: &[bool],
    nanos: &NanosecondColumns,
    leaf: &mut usize,
) -> FieldRef {
    let mut child = |f: &FieldRef| with_units(f, int96, nanos, leaf);
    let data_type = match field.data_type() {
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(child).collect()),
        DataType::List(e) => DataType::List(child(e)),
        DataType::LargeList(e) => DataType::LargeList(child(e)),
        DataType::FixedSizeList(e, n) => DataType::FixedSizeList(child(e), *n),
        DataType::Map(entries, sorted) => DataType::Map(child(entries), *sorted),
        other => {
            let i = *leaf;
            *leaf += 1;
            match other {
                DataType::Timestamp(_, tz) if int96.get(i) == Some(&true) => {
                    let unit = if nanos.contains_key(&i) {
                        TimeUnit::Nanosecond
                    } else {
                        TimeUnit::Microsecond
                    };
                    DataType::Timestamp(unit, tz.clone())
                }
                _ => return Arc::clone(field),
            }
        }
    };
    Arc::new(field.as_ref().clone().with_data_type(data_type))
}

/// The smallest and largest microsecond value whose every nanosecond fits an `i64`
/// (1677-09-21T00:12:43.145225 to 2262-04-11T23:47:16.854774).
const NANOS_MIN_MICROS: i64 = i64::MIN / 1000;
const NANOS_MAX_MICROS: i64 = i64::MAX / 1000 - 1;

/// Checks that every value of the INT96 columns of `nanos` in the data file at `path` of
/// `store` (footer `metadata`) fits the `i64` nanosecond range the
/// table's `timestamp_ns` / `timestamptz_ns` column holds: the columns are read once in
/// microseconds (a range decoding never wraps) and their least and greatest values
/// compared. Values within a microsecond of either end count as outside.
///
/// Errors: a value outside the range, naming `described` (the file), the column and the
/// value (`InvalidData`); reading the file (its reader's error).
pub(crate) async fn check_nanosecond_range(
    store: Arc<dyn ObjectStore>,
    path: Path,
    metadata: &ParquetMetaData,
    nanos: &NanosecondColumns,
    described: &str,
) -> Result<()> {
    let descr = metadata.file_metadata().schema_descr();
    let checked: Vec<usize> = nanos
        .keys()
        .copied()
        .filter(|&i| {
            i < descr.num_columns() && descr.column(i).physical_type() == PhysicalType::INT96
        })
        .collect();
    if checked.is_empty() {
        return Ok(());
    }
    // the whole top-level columns holding them (a map is not read without its keys)
    let mut roots: Vec<usize> = checked
        .iter()
        .map(|&i| descr.get_column_root_idx(i))
        .collect();
    roots.sort_unstable();
    roots.dedup();
    let first_leaf = |root: usize| {
        (0..descr.num_columns())
            .find(|&i| descr.get_column_root_idx(i) == root)
            .unwrap_or(0)
    };
    let failed = |e: ParquetError| {
        Error::invalid_data(format!(
            "data file {described}: reading its INT96 columns to check their range: {e}"
        ))
    };
    let physical = datafusion::parquet::arrow::parquet_to_arrow_schema(
        descr,
        metadata.file_metadata().key_value_metadata(),
    )
    .map_err(failed)?;
    // everything in microseconds
    let micros = with_int96_units(metadata, &physical, &NanosecondColumns::new())?
        .map_or_else(|| Arc::new(metadata.clone()), Arc::new);
    let reader_metadata =
        ArrowReaderMetadata::try_new(micros, ArrowReaderOptions::new()).map_err(failed)?;
    let reader = crate::io::ObjectRangeReader::new(store, path);
    let mask = ProjectionMask::roots(descr, roots.iter().copied());
    let mut stream = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, reader_metadata)
        .with_projection(mask)
        .build()
        .map_err(failed)?;
    while let Some(batch) = stream.try_next().await.map_err(failed)? {
        for (column, &root) in batch.columns().iter().zip(&roots) {
            let mut leaf = first_leaf(root);
            let mut found = None;
            out_of_range(column, &checked, &mut leaf, &mut found);
            if let Some((leaf, v)) = found {
                let (column, id) = &nanos[&leaf];
                let id = id.map_or(String::new(), |id| format!(" (field id {id})"));
                let shown = chrono::DateTime::from_timestamp_micros(v)
                    .map_or_else(|| format!("{v} µs"), |t| t.naive_utc().to_string());
                return Err(Error::invalid_data(format!(
                    "data file {described}: column '{column}'{id} holds the INT96 timestamp \
                     {shown}, outside the range of the table's nanosecond timestamp type \
                     (1677-09-21 to 2262-04-11)"
                )));
            }
        }
    }
    Ok(())
}

/// Walks `array` depth first counting Parquet leaf columns from `leaf` (as
/// [`nanosecond_leaves`] does); for a leaf in `checked` (microsecond timestamps), sets
/// `found` to the leaf index and a value outside the nanosecond range, if any.
fn out_of_range(
    array: &ArrayRef,
    checked: &[usize],
    leaf: &mut usize,
    found: &mut Option<(usize, i64)>,
) {
    let mut each = |children: &[ArrayRef]| {
        for c in children {
            out_of_range(c, checked, leaf, found);
        }
    };
    match array.data_type() {
        DataType::Struct(_) => each(array.as_struct().columns()),
        DataType::List(_) => each(&[Arc::clone(array.as_list::<i32>().values())]),
        DataType::LargeList(_) => each(&[Arc::clone(array.as_list::<i64>().values())]),
        DataType::FixedSizeList(..) => each(&[Arc::clone(array.as_fixed_size_list().values())]),
        DataType::Map(..) => {
            let entries: ArrayRef = Arc::new(array.as_map().entries().clone());
            each(&[entries])
        }
        other => {
            let i = *leaf;
            *leaf += 1;
            if found.is_some() || !checked.contains(&i) {
                return;
            }
            if let DataType::Timestamp(TimeUnit::Microsecond, _) = other {
                let values = array.as_primitive::<TimestampMicrosecondType>();
                let (min, max) = (
                    datafusion::arrow::compute::min(values),
                    datafusion::arrow::compute::max(values),
                );
                *found = [min, max]
                    .into_iter()
                    .flatten()
                    .find(|v| !(NANOS_MIN_MICROS..=NANOS_MAX_MICROS).contains(v))
                    .map(|v| (i, v));
            }
        }
    }
}
