//! Writing a partition statistics file (spec: "Partition Statistics File"): the rows
//! [`crate::maintenance::compute_partition_stats`] computed, as one Parquet file with the
//! spec's field ids ([`crate::maintenance::partition_stats_schema`]), the `partition`
//! struct in the table's unified partition type (module `unified_partition`), written with
//! the table's Parquet settings (codec, page and row group sizes) and its Iceberg schema
//! in the `iceberg.schema` key, as the crate's data files are.

use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{
    ArrayRef, AsArray, Int32Array, Int64Array, RecordBatch, StructArray,
};
use datafusion::arrow::datatypes::DataType;
use datafusion::parquet::arrow::ArrowWriter;

use super::metadata_files::partition_column;
use super::unified_partition::{unified_partition_type, UnifiedField};
use crate::error::{Error, ErrorKind, Result};
use crate::maintenance::{
    partition_stats_location, partition_stats_schema, PartitionStats, UnifiedPartitionField,
};
use crate::spec::arrow::schema_to_arrow;
use crate::spec::{FormatVersion, Literal, PartitionStatisticsFile, TableMetadata};
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
