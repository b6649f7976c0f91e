//! Which Parquet min/max statistics a reader may trust.
//!
//! Parquet's `Statistics` (parquet-format `parquet.thrift`) has two pairs of bounds: the
//! deprecated `min` / `max`, which writers before `min_value` / `max_value` existed
//! (parquet-mr before 1.10, so Hive, Spark 2 and Impala files of those years) computed
//! by comparing values as *signed* numbers and byte arrays byte by byte as signed bytes,
//! and `min_value` / `max_value`, in the column's sort order. For a column of byte arrays
//! (strings, binary, and decimals or UUIDs stored as bytes, whose bytes compared as signed
//! bytes do not follow their values) or of unsigned integers, the deprecated pair is not a
//! bound: `é` (`0xC3 0xA9`) sorts below `a` as signed bytes, so a
//! file holding `a`, `é` and `z` says `min = é`, and a filter `s = 'a'` would skip it.
//! parquet-mr's reader (`ParquetMetadataConverter`), and so Iceberg Java's metrics and
//! row-group filters, ignore such bounds; the `parquet` crate hands them over as if they
//! were `min_value` / `max_value` (`Statistics::is_min_max_deprecated` tells them
//! apart). icefloe ignores them too: [`trusted_min_max`] says whether a column chunk's
//! bounds may be used (`add_files` metrics), [`without_untrusted_min_max`] drops the
//! others from a footer before DataFusion prunes row groups by it. Null counts are kept.

use datafusion::parquet::basic::{SortOrder, Type as PhysicalType};
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use datafusion::parquet::file::statistics::Statistics;
use datafusion::parquet::schema::types::ColumnDescriptor;

/// Whether `stats`, the statistics of a column chunk of `column`, hold usable min/max
/// bounds: `min_value` / `max_value`, or the deprecated `min` / `max` of a column of
/// numbers in signed order (`INT32`, `INT64`, `FLOAT`, `DOUBLE` with a signed sort
/// order). See the module docs.
pub fn trusted_min_max(stats: &Statistics, column: &ColumnDescriptor) -> bool {
    !stats.is_min_max_deprecated()
        || (column.sort_order() == SortOrder::SIGNED
            && matches!(
                column.physical_type(),
                PhysicalType::INT32
                    | PhysicalType::INT64
                    | PhysicalType::FLOAT
                    | PhysicalType::DOUBLE
            ))
}

/// `stats` without its min/max (its null and distinct counts kept).
fn without_min_max(stats: &Statistics) -> Statistics {
    let (d, n) = (stats.distinct_count_opt(), stats.null_count_opt());
    match stats {
        Statistics::Boolean(_) => Statistics::boolean(None, None, d, n, false),
        Statistics::Int32(_) => Statistics::int32(None, None, d, n, false),
        Statistics::Int64(_) => Statistics::int64(None, None, d, n, false),
        Statistics::Int96(_) => Statistics::int96(None, None, d, n, false),
        Statistics::Float(_) => Statistics::float(None, None, d, n, false),
        Statistics::Double(_) => Statistics::double(None, None, d, n, false),
        Statistics::ByteArray(_) => Statistics::byte_array(None, None, d, n, false),
        Statistics::FixedLenByteArray(_) => {
            Statistics::fixed_len_byte_array(None, None, d, n, false)
        }
    }
}

/// Whether the chunk of `column` has a min or max that is not trusted. A chunk with
/// neither (all nulls) has none: its statistics read as deprecated (the `parquet` crate
/// marks any without `min_value` / `max_value` so) but hold nothing to drop.
fn untrusted(column: &ColumnChunkMetaData) -> bool {
    column.statistics().is_some_and(|s| {
        (s.min_bytes_opt().is_some() || s.max_bytes_opt().is_some())
            && !trusted_min_max(s, column.column_descr())
    })
}

/// `metadata` with the min/max of every column chunk whose bounds are not trusted
/// ([`trusted_min_max`]) removed; `None` when every chunk's are, or a chunk has none
/// (nothing to change).
///
/// Errors: the `parquet` crate's, rebuilding a row group's metadata.
pub fn without_untrusted_min_max(
    metadata: &ParquetMetaData,
) -> Result<Option<ParquetMetaData>, ParquetError> {
    let any = metadata
        .row_groups()
        .iter()
        .any(|g| g.columns().iter().any(untrusted));
    if !any {
        return Ok(None);
    }
    let mut builder = metadata.clone().into_builder();
    let groups = builder
        .take_row_groups()
        .into_iter()
        .map(|group| {
            let columns = group
                .columns()
                .iter()
                .map(|column| match column.statistics() {
                    Some(stats) if untrusted(column) => column
                        .clone()
                        .into_builder()
                        .set_statistics(without_min_max(stats))
                        .build(),
                    _ => Ok(column.clone()),
                })
                .collect::<Result<Vec<_>, _>>();
            columns.and_then(|c| group.into_builder().set_column_metadata(c).build())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(builder.set_row_groups(groups).build()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::file::metadata::ParquetMetaDataReader;
    use std::sync::Arc;

    /// The footer of a file of `batch` as the `parquet` crate writes it.
    fn footer(batch: &RecordBatch) -> ParquetMetaData {
        let mut writer = ArrowWriter::try_new(Vec::new(), batch.schema(), None).expect("writer");
        writer.write(batch).expect("write");
        let bytes = bytes::Bytes::from(writer.into_inner().expect("close"));
        ParquetMetaDataReader::new()
            .parse_and_finish(&bytes)
            .expect("footer")
    }

    #[test]
    fn chunks_of_nulls_have_no_bounds_to_drop() {
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            ("s", Arc::new(StringArray::from(vec![None::<&str>, None]))),
        ])
        .expect("batch");
        let metadata = footer(&batch);
        let s = metadata.row_group(0).column(1);
        // read as deprecated statistics (no min_value / max_value), without bounds
        let stats = s.statistics().expect("statistics");
        assert!(stats.is_min_max_deprecated(), "{stats:?}");
        assert_eq!(stats.null_count_opt(), Some(2));
        assert!(without_untrusted_min_max(&metadata)
            .expect("read")
            .is_none());
        // with strings, min_value / max_value: trusted
        let batch = RecordBatch::try_from_iter([(
            "s",
            Arc::new(StringArray::from(vec![Some("a"), None])) as ArrayRef,
        )])
        .expect("batch");
        assert!(without_untrusted_min_max(&footer(&batch))
            .expect("read")
            .is_none());
    }
}
