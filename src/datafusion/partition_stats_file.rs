//! Writing a partition statistics file (spec: "Partition Statistics File"): the rows
//! [`crate::maintenance::compute_partition_stats`] computed, as one Parquet file with the
//! spec's field ids ([`crate::maintenance::partition_stats_schema`]), the `partition`
//! struct in the table's unified partition type (module `unified_partition`), written with
//! the table's Parquet settings (codec, page and row group sizes) and its Iceberg schema
//! in the `iceberg.schema` key, as the crate's data files are; reading one back
//! ([`read_partition_stats_file`]) for an incremental compute ([`partition_stats_rows`]).

use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int32Array, Int64Array, RecordBatch, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Int32Type, Int64Type};
use datafusion::common::ScalarValue;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::arrow::{ArrowWriter, PARQUET_FIELD_ID_META_KEY};

use super::filter::scalar_to_literal;
use super::metadata_files::partition_column;
use super::unified_partition::{unified_partition_type, UnifiedField};
use crate::error::{Error, ErrorKind, Result};
use crate::maintenance::{
    compute_partition_stats, compute_partition_stats_incremental, latest_ancestor_stats_file,
    partition_stats_location, partition_stats_schema, IncrementalStats, PartitionStats,
    UnifiedPartitionField,
};
use crate::spec::arrow::schema_to_arrow;
use crate::spec::{
    FormatVersion, Literal, PartitionStatisticsFile, PrimitiveType, Snapshot, TableMetadata,
};
use crate::table::Table;
use crate::write::writer_config::DataFileWriterConfig;

/// The table's unified partition type, the fields whose type is known (a field of no
/// typed source in any schema has no values to hold).
pub(crate) fn stats_partition_type(metadata: &TableMetadata) -> Vec<UnifiedField> {
    unified_partition_type(metadata)
        .into_iter()
        .filter(|f| f.primitive.is_some())
        .collect()
}

/// The same fields as [`UnifiedPartitionField`]s.
pub(crate) fn unified_fields(unified: &[UnifiedField]) -> Vec<UnifiedPartitionField> {
    unified
        .iter()
        .filter_map(|f| {
            Some(UnifiedPartitionField {
                field_id: f.field_id,
                name: f.name.clone(),
                field_type: f.primitive?,
            })
        })
        .collect()
}

/// The `partition` fields of `metadata`'s partition statistics files: its unified
/// partition type, the fields of a known type, ascending field ids.
pub fn partition_stats_fields(metadata: &TableMetadata) -> Vec<UnifiedPartitionField> {
    unified_fields(&stats_partition_type(metadata))
}

/// Write `rows` (statistics of `snapshot_id`, partitions in `unified`) as a new partition
/// statistics file next to `table`'s metadata; the file to register. Not registered
/// here: [`crate::maintenance::commit_partition_stats`] does that.
///
/// Errors: a `write.format.default` other than Parquet or a bad Parquet property
/// ([`ErrorKind::Unsupported`] / [`ErrorKind::InvalidArgument`] naming it); encoding or
/// storing the file ([`ErrorKind::Io`] naming it; it does not exist then).
pub(crate) async fn write_partition_stats_file(
    table: &Table,
    snapshot_id: i64,
    unified: &[UnifiedField],
    rows: &[PartitionStats],
) -> Result<PartitionStatisticsFile> {
    let metadata = table.metadata();
    let config = DataFileWriterConfig::from_properties(&metadata.properties)?;
    let schema = partition_stats_schema(&unified_fields(unified), metadata.format_version);
    let arrow_schema = Arc::new(schema_to_arrow(&schema)?);
    let location = partition_stats_location(metadata, snapshot_id);
    let io_error = |e: datafusion::arrow::error::ArrowError| {
        Error::new(
            ErrorKind::Io,
            format!("cannot write partition statistics file '{location}'"),
        )
        .with_source(e)
    };
    let tuples: Vec<Vec<Option<Literal>>> = rows.iter().map(|r| r.partition.clone()).collect();
    let partition = partition_column(unified, &tuples)?
        .ok_or_else(|| Error::invalid_argument("Table must be partitioned"))?;
    // the same arrays under the file's fields (with their field ids)
    let DataType::Struct(partition_fields) = arrow_schema.field(0).data_type() else {
        return Err(Error::invalid_data(
            "partition statistics: partition is no struct",
        ));
    };
    let (_, arrays, _) = partition.as_struct().clone().into_parts();
    let partition = StructArray::try_new(partition_fields.clone(), arrays, None)?;
    let ints = |f: fn(&PartitionStats) -> i32| -> ArrayRef {
        Arc::new(Int32Array::from_iter_values(rows.iter().map(f)))
    };
    let longs = |f: fn(&PartitionStats) -> Option<i64>| -> ArrayRef {
        Arc::new(Int64Array::from_iter(rows.iter().map(f)))
    };
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(partition),
        ints(|r| r.spec_id),
        longs(|r| Some(r.data_record_count)),
        ints(|r| r.data_file_count),
        longs(|r| Some(r.total_data_file_size_in_bytes)),
        longs(|r| Some(r.position_delete_record_count)),
        ints(|r| r.position_delete_file_count),
        longs(|r| Some(r.equality_delete_record_count)),
        ints(|r| r.equality_delete_file_count),
        longs(|r| r.total_record_count),
        longs(|r| r.last_updated_at),
        longs(|r| r.last_updated_snapshot_id),
    ];
    if metadata.format_version >= FormatVersion::V3 {
        columns.push(ints(|r| r.dv_count));
    }
    let batch = RecordBatch::try_new(Arc::clone(&arrow_schema), columns).map_err(io_error)?;
    let properties = config.writer_properties_for(&schema)?;
    let parquet_error = |e: datafusion::parquet::errors::ParquetError| {
        Error::new(
            ErrorKind::Io,
            format!("cannot write partition statistics file '{location}'"),
        )
        .with_source(e)
    };
    let mut bytes: Vec<u8> = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut bytes, Arc::clone(&arrow_schema), Some(properties))
        .map_err(parquet_error)?;
    writer.write(&batch).map_err(parquet_error)?;
    writer.close().map_err(parquet_error)?;
    let size = bytes.len() as i64;
    table
        .file_io()
        .write_new(&location, Bytes::from(bytes))
        .await?;
    Ok(PartitionStatisticsFile {
        snapshot_id,
        statistics_path: location,
        file_size_in_bytes: size,
    })
}

/// How [`partition_stats_rows`] computed its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatsComputation {
    /// From the statistics file of ancestor `base_snapshot_id` and the `manifests_read`
    /// manifests added since.
    Incremental {
        /// The ancestor whose file was read.
        base_snapshot_id: i64,
        /// Manifests read.
        manifests_read: usize,
    },
    /// Every manifest read; `reason`: why an ancestor's file was not used (`None`: no
    /// ancestor has one).
    Full {
        /// Why not incrementally.
        reason: Option<String>,
    },
}

/// The partition statistics of `snapshot` of `table`, the rows
/// [`crate::maintenance::compute_partition_stats`] gives, computed as Java 1.10's
/// `PartitionStatsHandler` does when it can: from the statistics file of the snapshot's
/// latest ancestor that has one, plus the manifests added since
/// ([`crate::maintenance::compute_partition_stats_incremental`], which says when the file
/// cannot give the same rows); else in full. As in Java, a file that cannot be read (gone,
/// corrupt, not Parquet, or of another partition type: a field of another type, or one
/// the table's unified partition type lacks) means a full compute, not an error.
///
/// Errors: an unpartitioned table ([`ErrorKind::InvalidArgument`]); reading the manifest
/// lists or manifests ([`ErrorKind::Io`], [`ErrorKind::NotFound`] naming the file).
pub async fn partition_stats_rows(
    table: &Table,
    snapshot: &Snapshot,
) -> Result<(Vec<PartitionStats>, StatsComputation)> {
    let metadata = table.metadata();
    let unified = stats_partition_type(metadata);
    let fields = unified_fields(&unified);
    let reason = match latest_ancestor_stats_file(metadata, snapshot) {
        None => None,
        Some(base) => match read_partition_stats_file(table, base, &unified).await {
            Err(e) => Some(format!("the statistics file cannot be used: {e}")),
            Ok(base_rows) => {
                match compute_partition_stats_incremental(table, snapshot, base, base_rows, &fields)
                    .await?
                {
                    IncrementalStats::Computed {
                        rows,
                        manifests_read,
                    } => {
                        let how = StatsComputation::Incremental {
                            base_snapshot_id: base.snapshot_id,
                            manifests_read,
                        };
                        return Ok((rows, how));
                    }
                    IncrementalStats::FullComputeNeeded(why) => Some(why),
                }
            }
        },
    };
    let rows = compute_partition_stats(table, snapshot, &fields).await?;
    Ok((rows, StatsComputation::Full { reason }))
}

/// A field's Parquet field id.
fn field_id(field: &Field) -> Option<i32> {
    field
        .metadata()
        .get(PARQUET_FIELD_ID_META_KEY)
        .and_then(|v| v.parse().ok())
}

/// The rows of partition statistics file `file` of `table` (spec: "Partition Statistics
/// File"), columns found by field id, each tuple placed in the table's unified partition
/// type `unified` (a field the file lacks is null; `dv_count` of a file without it, as
/// written before v3, is 0; `total_record_count` is not read: icefloe leaves it null).
///
/// Errors: a file that is not Parquet ([`ErrorKind::Unsupported`]); reading it
/// ([`ErrorKind::Io`], [`ErrorKind::NotFound`]); a file whose columns are not the spec's
/// (a required one missing or null, another type), or whose partition field is not in
/// `unified` or of another type there ([`ErrorKind::InvalidData`]); each naming the file.
pub(crate) async fn read_partition_stats_file(
    table: &Table,
    file: &PartitionStatisticsFile,
    unified: &[UnifiedField],
) -> Result<Vec<PartitionStats>> {
    let location = &file.statistics_path;
    let bad = |what: String| {
        Error::invalid_data(format!("partition statistics file '{location}': {what}"))
    };
    if !location.ends_with(".parquet") {
        return Err(Error::unsupported(format!(
            "partition statistics file '{location}': only Parquet files are read"
        )));
    }
    let bytes = table.file_io().read(location).await?;
    crate::io::parquet_footer::check_footer_length(&bytes, bytes.len() as u64)
        .map_err(|e| bad(e.to_string()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(|e| bad("not Parquet".into()).with_source(e))?;
    let metadata = table.metadata();
    let expected = schema_to_arrow(&partition_stats_schema(
        &unified_fields(unified),
        metadata.format_version,
    ))?;
    let DataType::Struct(expected_tuple) = expected.field(0).data_type() else {
        return Err(bad("partition is no struct".into()));
    };
    let file_schema = Arc::clone(builder.schema());
    let column = |id: i32| {
        file_schema
            .fields()
            .iter()
            .position(|f| field_id(f) == Some(id))
    };
    let partition = column(1).ok_or_else(|| bad("no partition column (field id 1)".into()))?;
    let DataType::Struct(file_tuple) = file_schema.field(partition).data_type() else {
        return Err(bad("partition is no struct".into()));
    };
    // the file's partition field of each unified field
    let mut positions: Vec<Option<usize>> = vec![None; unified.len()];
    for (i, f) in file_tuple.iter().enumerate() {
        let id = field_id(f)
            .ok_or_else(|| bad(format!("partition field '{}' has no field id", f.name())))?;
        let Some(u) = unified.iter().position(|u| u.field_id == id) else {
            return Err(bad(format!(
                "partition field {id} is not in the table's partition type"
            )));
        };
        if f.data_type() != expected_tuple[u].data_type() {
            return Err(bad(format!(
                "partition field {id} is {}, the table's partition type has {}",
                f.data_type(),
                expected_tuple[u].data_type()
            )));
        }
        positions[u] = Some(i);
    }
    let required = |id: i32| column(id).ok_or_else(|| bad(format!("no column of field id {id}")));
    let columns = [2, 3, 4, 5, 6, 7, 8, 9]
        .into_iter()
        .map(required)
        .collect::<Result<Vec<usize>>>()?;
    let (updated_at, updated_by, dv_count) = (column(11), column(12), column(13));
    let reader = builder
        .build()
        .map_err(|e| bad("cannot read".into()).with_source(e))?;
    let mut rows = vec![];
    for batch in reader {
        let batch = batch.map_err(|e| bad("cannot read".into()).with_source(e))?;
        let tuples = batch.column(partition).as_struct();
        let int = |c: usize, row: usize| -> Result<Option<i32>> {
            let a = batch.column(c);
            let a = a
                .as_primitive_opt::<Int32Type>()
                .ok_or_else(|| bad(format!("column {} is no int", file_schema.field(c).name())))?;
            Ok(a.is_valid(row).then(|| a.value(row)))
        };
        let long = |c: usize, row: usize| -> Result<Option<i64>> {
            let a = batch.column(c);
            let a = a
                .as_primitive_opt::<Int64Type>()
                .ok_or_else(|| bad(format!("column {} is no long", file_schema.field(c).name())))?;
            Ok(a.is_valid(row).then(|| a.value(row)))
        };
        let present = |v: Option<i64>, c: usize| {
            v.ok_or_else(|| bad(format!("a null {}", file_schema.field(c).name())))
        };
        let present_int = |v: Option<i32>, c: usize| {
            v.ok_or_else(|| bad(format!("a null {}", file_schema.field(c).name())))
        };
        for row in 0..batch.num_rows() {
            let mut tuple = Vec::with_capacity(unified.len());
            for (u, p) in unified.iter().zip(&positions) {
                tuple.push(match (p, u.primitive) {
                    (Some(c), Some(ty)) => literal_at(tuples.column(*c), row, ty)
                        .map_err(|what| bad(format!("partition field {}: {what}", u.field_id)))?,
                    _ => None,
                });
            }
            let spec_id = present_int(int(columns[0], row)?, columns[0])?;
            let mut stats = PartitionStats {
                partition: tuple,
                spec_id,
                data_record_count: present(long(columns[1], row)?, columns[1])?,
                data_file_count: present_int(int(columns[2], row)?, columns[2])?,
                total_data_file_size_in_bytes: present(long(columns[3], row)?, columns[3])?,
                position_delete_record_count: present(long(columns[4], row)?, columns[4])?,
                position_delete_file_count: present_int(int(columns[5], row)?, columns[5])?,
                equality_delete_record_count: present(long(columns[6], row)?, columns[6])?,
                equality_delete_file_count: present_int(int(columns[7], row)?, columns[7])?,
                total_record_count: None,
                last_updated_at: None,
                last_updated_snapshot_id: None,
                dv_count: 0,
            };
            if let Some(c) = updated_at {
                stats.last_updated_at = long(c, row)?;
            }
            if let Some(c) = updated_by {
                stats.last_updated_snapshot_id = long(c, row)?;
            }
            if let Some(c) = dv_count {
                stats.dv_count = present_int(int(c, row)?, c)?;
            }
            rows.push(stats);
        }
    }
    Ok(rows)
}

/// The value at `row` of a partition field's column as a literal of `ty` (`None`: null),
/// or why it is none.
fn literal_at(
    array: &ArrayRef,
    row: usize,
    ty: PrimitiveType,
) -> std::result::Result<Option<Literal>, String> {
    if array.is_null(row) {
        return Ok(None);
    }
    let value = ScalarValue::try_from_array(array, row).map_err(|e| e.to_string())?;
    match (scalar_to_literal(&value), ty) {
        (Some(Some(Literal::Fixed(b))), PrimitiveType::Uuid) => {
            let bytes: [u8; 16] = b.try_into().map_err(|_| "a uuid of other than 16 bytes")?;
            Ok(Some(Literal::Uuid(bytes)))
        }
        (Some(v), _) => Ok(v),
        (None, _) => Err(format!("a value of type {}", array.data_type())),
    }
}
