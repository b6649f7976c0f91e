//! The file-level metadata tables: `files` / `data_files` / `delete_files`, `entries` and
//! `partitions` (see [`super::metadata_tables`]).
//!
//! The `partition` column is a struct of the table's *unified* partition type, as in
//! Iceberg Java's `Partitioning.partitionType` (see [`super::unified_partition`]); a file
//! written under a spec without a field has null there. Tables whose specs have no fields
//! get no `partition` column (and `partitions` has no `partition` / `spec_id` columns),
//! as in Spark.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    new_empty_array, ArrayRef, BinaryArray, BinaryBuilder, Int32Builder, Int64Builder, ListBuilder,
    MapBuilder, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::ScalarValue;

use super::metadata_tables::{ints, longs, map_names, strings, timestamps_ms, Columns};
use super::scalar::literal_to_scalar;
use super::unified_partition::{unified_partition_type, unified_values, UnifiedField};
use crate::error::Result;
use crate::spec::arrow::{primitive_to_arrow, with_uuid_extension};
use crate::spec::{
    BoundBytes, DataContentType, DataFileFormat, IntMap, Literal, ManifestEntry, ManifestStatus,
    NestedField, PrimitiveType, TableMetadata, Transform, Type,
};
use crate::transform::human_string;

/// Which files a files table lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileFilter {
    /// `files`: data and delete files.
    All,
    /// `data_files`.
    Data,
    /// `delete_files`: position deletes, deletion vectors and equality deletes.
    Deletes,
}

/// One column of `values` (rows) typed `data_type`.
fn scalar_column(values: Vec<Option<&Literal>>, data_type: &DataType) -> Result<ArrayRef> {
    if values.is_empty() {
        return Ok(new_empty_array(data_type));
    }
    let scalars = values
        .into_iter()
        .map(|v| literal_to_scalar(v.filter(|_| *data_type != DataType::Null), data_type))
        .collect::<Result<Vec<_>>>()?;
    Ok(ScalarValue::iter_to_array(scalars)?)
}

/// The `partition` struct column, `None` when the table has no partition fields.
pub(crate) fn partition_column(
    unified: &[UnifiedField],
    rows: &[Vec<Option<Literal>>],
) -> Result<Option<ArrayRef>> {
    if unified.is_empty() {
        return Ok(None);
    }
    let mut c = Columns::default();
    for (i, f) in unified.iter().enumerate() {
        let values = rows
            .iter()
            .map(|r| r.get(i).and_then(Option::as_ref))
            .collect();
        c.add_field(f.arrow_field(), scalar_column(values, &f.data_type)?);
    }
    let (fields, arrays) = c.into_parts();
    Ok(Some(Arc::new(StructArray::try_new(fields, arrays, None)?)))
}

fn format_name(f: DataFileFormat) -> &'static str {
    match f {
        DataFileFormat::Parquet => "PARQUET",
        DataFileFormat::Avro => "AVRO",
        DataFileFormat::Orc => "ORC",
        DataFileFormat::Puffin => "PUFFIN",
    }
}

fn content_id(c: DataContentType) -> i32 {
    match c {
        DataContentType::Data => 0,
        DataContentType::PositionDeletes => 1,
        DataContentType::EqualityDeletes => 2,
    }
}

/// A `map<int, long>` column: a map not written is null, one written empty `{}`, as
/// in Iceberg Java ([`IntMap::is_written`]).
fn long_map_column<'a>(maps: impl Iterator<Item = &'a IntMap<i64>>) -> Result<ArrayRef> {
    let mut b = MapBuilder::new(Some(map_names()), Int32Builder::new(), Int64Builder::new());
    for m in maps {
        // pairs come in rising field-id order
        for (k, v) in m.iter() {
            b.keys().append_value(*k);
            b.values().append_value(*v);
        }
        b.append(m.is_written())?;
    }
    Ok(Arc::new(b.finish()))
}

/// A `map<int, binary>` column; null and `{}` as in [`long_map_column`].
fn bytes_map_column<'a>(maps: impl Iterator<Item = &'a IntMap<BoundBytes>>) -> Result<ArrayRef> {
    let mut b = MapBuilder::new(Some(map_names()), Int32Builder::new(), BinaryBuilder::new());
    for m in maps {
        for (k, v) in m.iter() {
            b.keys().append_value(*k);
            b.values().append_value(v);
        }
        b.append(m.is_written())?;
    }
    Ok(Arc::new(b.finish()))
}

/// The primitive fields of the current schema at any depth, with their dotted names as
/// Java's `Schema.idToName` gives them (`st.x`, `tags.element`, `m.key`, `m.value`,
/// `l.element.a`), sorted by name (Java's `MetricsUtil.readableMetricsSchema`).
fn metric_leaves(metadata: &TableMetadata) -> Vec<(String, i32, PrimitiveType)> {
    fn walk(fields: &[&NestedField], prefix: &str, out: &mut Vec<(String, i32, PrimitiveType)>) {
        for f in fields {
            let name = format!("{prefix}{}", f.name);
            let inner = format!("{name}.");
            match f.field_type.as_ref() {
                Type::Primitive(p) => out.push((name, f.id, *p)),
                Type::Struct(st) => walk(&st.fields.iter().collect::<Vec<_>>(), &inner, out),
                Type::List(l) => walk(&[&l.element_field], &inner, out),
                Type::Map(m) => walk(&[&m.key_field, &m.value_field], &inner, out),
            }
        }
    }
    let mut out = vec![];
    let columns: Vec<&NestedField> = metadata.current_schema().columns().iter().collect();
    walk(&columns, "", &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Spark's `readable_metrics`: per primitive field of the current schema (see
/// [`metric_leaves`]), a struct of
/// `column_size`, `value_count`, `null_value_count`, `nan_value_count` and
/// `lower_bound` / `upper_bound` decoded to the column's type. `None` when the schema
/// has no primitive column.
fn readable_metrics_column(
    metadata: &TableMetadata,
    entries: &[&ManifestEntry],
) -> Result<Option<ArrayRef>> {
    let files: Vec<_> = entries.iter().map(|e| &e.data_file).collect();
    let mut outer = Columns::default();
    for (name, id, ptype) in metric_leaves(metadata) {
        let Ok(data_type) = primitive_to_arrow(&ptype) else {
            continue;
        };
        let bound = |f: &crate::spec::DataFile, upper: bool| {
            let map = if upper {
                &f.upper_bounds
            } else {
                &f.lower_bounds
            };
            map.get(&id)
                .and_then(|b| Literal::from_bytes(b, &ptype).ok())
        };
        let lowers: Vec<Option<Literal>> = files.iter().map(|f| bound(f, false)).collect();
        let uppers: Vec<Option<Literal>> = files.iter().map(|f| bound(f, true)).collect();
        let count = |m: fn(&crate::spec::DataFile) -> &IntMap<i64>| {
            longs(files.iter().map(|f| m(f).get(&id).copied()))
        };
        let mut c = Columns::default();
        c.add("column_size", count(|f| &f.column_sizes));
        c.add("value_count", count(|f| &f.value_counts));
        c.add("null_value_count", count(|f| &f.null_value_counts));
        c.add("nan_value_count", count(|f| &f.nan_value_counts));
        // a `uuid` bound is typed as the table's `uuid` columns are
        let bound_field =
            |name: &str| with_uuid_extension(Field::new(name, data_type.clone(), true), &ptype);
        let lower = scalar_column(lowers.iter().map(Option::as_ref).collect(), &data_type)?;
        c.add_field(bound_field("lower_bound"), lower);
        let upper = scalar_column(uppers.iter().map(Option::as_ref).collect(), &data_type)?;
        c.add_field(bound_field("upper_bound"), upper);
        let (fields, arrays) = c.into_parts();
        outer.add(&name, Arc::new(StructArray::try_new(fields, arrays, None)?));
    }
    let (fields, arrays) = outer.into_parts();
    if fields.is_empty() {
        return Ok(None);
    }
    Ok(Some(Arc::new(StructArray::try_new(fields, arrays, None)?)))
}

/// The columns of Spark's `files` table for `entries` (also the `data_file` struct of
/// `entries`), without `readable_metrics`.
fn file_columns(metadata: &TableMetadata, entries: &[&ManifestEntry]) -> Result<Columns> {
    let unified = unified_partition_type(metadata);
    let files: Vec<_> = entries.iter().map(|e| &e.data_file).collect();
    let partitions: Vec<Vec<Option<Literal>>> = entries
        .iter()
        .map(|e| unified_values(metadata, &unified, e))
        .collect();
    let mut split_offsets = ListBuilder::new(Int64Builder::new());
    let mut equality_ids = ListBuilder::new(Int32Builder::new());
    for f in &files {
        split_offsets.values().append_slice(&f.split_offsets);
        split_offsets.append(!f.split_offsets.is_empty());
        equality_ids.values().append_slice(&f.equality_ids);
        equality_ids.append(!f.equality_ids.is_empty());
    }
    let mut c = Columns::default();
    c.add(
        "content",
        ints(files.iter().map(|f| Some(content_id(f.content)))),
    );
    c.add(
        "file_path",
        strings(files.iter().map(|f| Some(&f.file_path))),
    );
    c.add(
        "file_format",
        strings(files.iter().map(|f| Some(format_name(f.file_format)))),
    );
    c.add("spec_id", ints(entries.iter().map(|e| Some(e.spec_id))));
    if let Some(p) = partition_column(&unified, &partitions)? {
        c.add("partition", p);
    }
    c.add(
        "record_count",
        longs(files.iter().map(|f| Some(f.record_count))),
    );
    c.add(
        "file_size_in_bytes",
        longs(files.iter().map(|f| Some(f.file_size_in_bytes))),
    );
    c.add(
        "column_sizes",
        long_map_column(files.iter().map(|f| &f.column_sizes))?,
    );
    c.add(
        "value_counts",
        long_map_column(files.iter().map(|f| &f.value_counts))?,
    );
    c.add(
        "null_value_counts",
        long_map_column(files.iter().map(|f| &f.null_value_counts))?,
    );
    c.add(
        "nan_value_counts",
        long_map_column(files.iter().map(|f| &f.nan_value_counts))?,
    );
    c.add(
        "lower_bounds",
        bytes_map_column(files.iter().map(|f| &f.lower_bounds))?,
    );
    c.add(
        "upper_bounds",
        bytes_map_column(files.iter().map(|f| &f.upper_bounds))?,
    );
    c.add(
        "key_metadata",
        Arc::new(BinaryArray::from_iter(
            files.iter().map(|f| f.key_metadata.as_deref()),
        )),
    );
    c.add("split_offsets", Arc::new(split_offsets.finish()));
    c.add("equality_ids", Arc::new(equality_ids.finish()));
    c.add("sort_order_id", ints(files.iter().map(|f| f.sort_order_id)));
    c.add("first_row_id", longs(files.iter().map(|f| f.first_row_id)));
    c.add(
        "referenced_data_file",
        strings(files.iter().map(|f| f.referenced_data_file.as_deref())),
    );
    c.add(
        "content_offset",
        longs(files.iter().map(|f| f.content_offset)),
    );
    c.add(
        "content_size_in_bytes",
        longs(files.iter().map(|f| f.content_size_in_bytes)),
    );
    Ok(c)
}

/// `files` / `data_files` / `delete_files` over live entries.
pub(crate) fn files_table(
    metadata: &TableMetadata,
    live: &[&ManifestEntry],
    filter: FileFilter,
) -> Result<RecordBatch> {
    let selected: Vec<&ManifestEntry> = live
        .iter()
        .copied()
        .filter(|e| match filter {
            FileFilter::All => true,
            FileFilter::Data => e.data_file.content == DataContentType::Data,
            FileFilter::Deletes => e.data_file.content != DataContentType::Data,
        })
        .collect();
    let mut c = file_columns(metadata, &selected)?;
    if let Some(m) = readable_metrics_column(metadata, &selected)? {
        c.add("readable_metrics", m);
    }
    c.into_batch()
}

/// `entries`: every entry of the snapshot's manifests.
pub(crate) fn entries_table(
    metadata: &TableMetadata,
    entries: &[&ManifestEntry],
) -> Result<RecordBatch> {
    let status = |s: ManifestStatus| match s {
        ManifestStatus::Existing => 0,
        ManifestStatus::Added => 1,
        ManifestStatus::Deleted => 2,
    };
    let (fields, arrays) = file_columns(metadata, entries)?.into_parts();
    let mut c = Columns::default();
    c.add(
        "status",
        ints(entries.iter().map(|e| Some(status(e.status)))),
    );
    c.add(
        "snapshot_id",
        longs(entries.iter().map(|e| Some(e.snapshot_id))),
    );
    c.add(
        "sequence_number",
        longs(entries.iter().map(|e| Some(e.data_sequence_number))),
    );
    c.add(
        "file_sequence_number",
        longs(entries.iter().map(|e| Some(e.file_sequence_number))),
    );
    c.add(
        "data_file",
        Arc::new(StructArray::try_new(fields, arrays, None)?),
    );
    if let Some(m) = readable_metrics_column(metadata, entries)? {
        c.add("readable_metrics", m);
    }
    c.into_batch()
}

#[derive(Default)]
struct PartitionStats {
    values: Vec<Option<Literal>>,
    spec_id: i32,
    record_count: i64,
    file_count: i32,
    total_data_file_size_in_bytes: i64,
    position_delete_record_count: i64,
    position_delete_file_count: i32,
    equality_delete_record_count: i64,
    equality_delete_file_count: i32,
    last_updated_at_ms: Option<i64>,
    last_updated_snapshot_id: Option<i64>,
}

/// How many fields of the unified partition type `entry`'s spec has: Java's
/// `StructProjection.projectedFields` of the coerced partition, which `PartitionsTable`
/// compares before the values.
fn projected_fields(
    metadata: &TableMetadata,
    unified: &[UnifiedField],
    entry: &ManifestEntry,
) -> usize {
    metadata
        .partition_spec_by_id(entry.spec_id)
        .map_or(0, |spec| {
            (0..spec.fields.len())
                .filter(|i| unified.iter().any(|u| u.field_id == spec.field_id(*i)))
                .count()
        })
}

/// `partitions`: live files grouped by partition (Iceberg Java's `PartitionsTable`).
///
/// As Java: a group is the partition values in the unified type *and* how many of its
/// fields the file's spec has, so a file of spec `(k)` with `k = 1` and one of spec
/// `(k, ts_day)` with `k = 1, ts_day = null` are two rows; `spec_id`, `last_updated_at`
/// and `last_updated_snapshot_id` come from the file whose snapshot was committed last
/// (the first such file on a tie), and stay `0` / null while no file's snapshot is in the
/// table metadata any more (expired).
pub(crate) fn partitions_table(
    metadata: &TableMetadata,
    live: &[&ManifestEntry],
) -> Result<RecordBatch> {
    let unified = unified_partition_type(metadata);
    let mut groups: BTreeMap<(String, usize), PartitionStats> = BTreeMap::new();
    for e in live {
        let values = unified_values(metadata, &unified, e);
        let key = (
            format!("{values:?}"),
            projected_fields(metadata, &unified, e),
        );
        let stats = groups.entry(key).or_default();
        stats.values = values;
        let f = &e.data_file;
        match f.content {
            DataContentType::Data => {
                stats.record_count = stats.record_count.saturating_add(f.record_count);
                stats.file_count += 1;
                stats.total_data_file_size_in_bytes = stats
                    .total_data_file_size_in_bytes
                    .saturating_add(f.file_size_in_bytes);
            }
            DataContentType::PositionDeletes => {
                stats.position_delete_record_count = stats
                    .position_delete_record_count
                    .saturating_add(f.record_count);
                stats.position_delete_file_count += 1;
            }
            DataContentType::EqualityDeletes => {
                stats.equality_delete_record_count = stats
                    .equality_delete_record_count
                    .saturating_add(f.record_count);
                stats.equality_delete_file_count += 1;
            }
        }
        if let Some(s) = metadata.snapshot_by_id(e.snapshot_id) {
            if stats.last_updated_at_ms.is_none_or(|t| t < s.timestamp_ms) {
                stats.spec_id = e.spec_id;
                stats.last_updated_at_ms = Some(s.timestamp_ms);
                stats.last_updated_snapshot_id = Some(s.snapshot_id);
            }
        }
    }
    let rows: Vec<PartitionStats> = groups.into_values().collect();
    let mut c = Columns::default();
    let values: Vec<Vec<Option<Literal>>> = rows.iter().map(|r| r.values.clone()).collect();
    if let Some(p) = partition_column(&unified, &values)? {
        c.add("partition", p);
        c.add("spec_id", ints(rows.iter().map(|r| Some(r.spec_id))));
    }
    c.add(
        "record_count",
        longs(rows.iter().map(|r| Some(r.record_count))),
    );
    c.add("file_count", ints(rows.iter().map(|r| Some(r.file_count))));
    c.add(
        "total_data_file_size_in_bytes",
        longs(rows.iter().map(|r| Some(r.total_data_file_size_in_bytes))),
    );
    c.add(
        "position_delete_record_count",
        longs(rows.iter().map(|r| Some(r.position_delete_record_count))),
    );
    c.add(
        "position_delete_file_count",
        ints(rows.iter().map(|r| Some(r.position_delete_file_count))),
    );
    c.add(
        "equality_delete_record_count",
        longs(rows.iter().map(|r| Some(r.equality_delete_record_count))),
    );
    c.add(
        "equality_delete_file_count",
        ints(rows.iter().map(|r| Some(r.equality_delete_file_count))),
    );
    c.add(
        "last_updated_at",
        timestamps_ms(rows.iter().map(|r| r.last_updated_at_ms)),
    );
    c.add(
        "last_updated_snapshot_id",
        longs(rows.iter().map(|r| r.last_updated_snapshot_id)),
    );
    c.into_batch()
}

/// A manifest's partition summary bound (single-value binary) as Iceberg Java's
/// `ManifestsTable.partitionSummariesToRows` shows it: the field transform's
/// `toHumanString` ([`human_string`]); `None` for bytes that are no value of `ty`.
pub(crate) fn partition_summary_bound(
    bytes: &[u8],
    ty: &PrimitiveType,
    transform: Transform,
) -> Option<String> {
    Literal::from_bytes(bytes, ty)
        .ok()
        .map(|l| human_string(&transform, &l))
}
