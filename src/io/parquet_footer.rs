//! Checks of a Parquet footer before anything reads a file by it.
//!
//! The `parquet` crate trusts a footer's column-chunk offsets: it asserts they are not
//! negative when it computes a chunk's byte range (`ColumnChunkMetaData::byte_range`),
//! so a corrupt footer panics there instead of failing. Every reader of Parquet files in
//! icefloe (data files through the scan's reader, position and equality delete files)
//! checks the footer first and fails with an error naming the file.

use datafusion::parquet::file::metadata::ParquetMetaData;

/// The first column chunk of `metadata` whose byte range — from its dictionary page (or
/// first data page) offset, `compressed_size` bytes long — is negative or ends past
/// `file_size` bytes, described for an error ("row group 0, column 'a.b': bytes -5 + 120
/// of a 1134-byte file"); `None` when every chunk lies inside the file.
pub fn column_chunk_out_of_range(metadata: &ParquetMetaData, file_size: u64) -> Option<String> {
    for (g, group) in metadata.row_groups().iter().enumerate() {
        for column in group.columns() {
            let start = column
                .dictionary_page_offset()
                .unwrap_or_else(|| column.data_page_offset());
            let length = column.compressed_size();
            let fits = start >= 0
                && length >= 0
                && start
                    .checked_add(length)
                    .and_then(|end| u64::try_from(end).ok())
                    .is_some_and(|end| end <= file_size);
            if !fits {
                return Some(format!(
                    "row group {g}, column '{}': bytes {start} + {length} of a {file_size}-byte \
                     file (corrupt footer)",
                    column.column_path().string()
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, RecordBatch};
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::file::metadata::ColumnChunkMetaDataBuilder;

    /// A real two-column file's footer and size.
    fn footer() -> (ParquetMetaData, u64) {
        let batch = RecordBatch::try_from_iter([
            (
                "a",
                std::sync::Arc::new(Int64Array::from(vec![1, 2, 3])) as _,
            ),
            (
                "b",
                std::sync::Arc::new(Int64Array::from(vec![4, 5, 6])) as _,
            ),
        ])
        .unwrap();
        let mut bytes = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let size = bytes.len() as u64;
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes)).unwrap();
        (builder.metadata().as_ref().clone(), size)
    }

    /// `metadata` with column `b` of row group 0 changed by `change`.
    fn with_b(
        metadata: ParquetMetaData,
        change: impl Fn(ColumnChunkMetaDataBuilder) -> ColumnChunkMetaDataBuilder,
    ) -> ParquetMetaData {
        let mut builder = metadata.into_builder();
        let mut groups = builder.take_row_groups();
        let mut group = groups.remove(0).into_builder();
        let mut columns = group.take_columns();
        columns[1] = change(columns[1].clone().into_builder()).build().unwrap();
        groups.insert(0, group.set_column_metadata(columns).build().unwrap());
        for g in groups {
            builder = builder.add_row_group(g);
        }
        builder.build()
    }

    #[test]
    fn chunks_inside_the_file_pass() {
        let (metadata, size) = footer();
        assert_eq!(column_chunk_out_of_range(&metadata, size), None);
    }

    #[test]
    fn negative_or_overlong_chunks_are_named() {
        let (metadata, size) = footer();
        let chunk = metadata.row_group(0).column(1).clone();
        let start = chunk
            .dictionary_page_offset()
            .unwrap_or(chunk.data_page_offset());
        let length = chunk.compressed_size();
        for (change, shown) in [
            (
                Box::new(|c: ColumnChunkMetaDataBuilder| c.set_total_compressed_size(-85))
                    as Box<dyn Fn(_) -> _>,
                format!("bytes {start} + -85"),
            ),
            (
                Box::new(|c: ColumnChunkMetaDataBuilder| {
                    c.set_dictionary_page_offset(Some(-3))
                        .set_data_page_offset(-3)
                }),
                format!("bytes -3 + {length}"),
            ),
            (
                Box::new(move |c: ColumnChunkMetaDataBuilder| {
                    c.set_total_compressed_size(size as i64)
                }),
                format!("bytes {start} + {size}"),
            ),
            (
                Box::new(|c: ColumnChunkMetaDataBuilder| c.set_total_compressed_size(i64::MAX)),
                format!("bytes {start} + {}", i64::MAX),
            ),
        ] {
            let broken = with_b(metadata.clone(), change);
            assert_eq!(
                column_chunk_out_of_range(&broken, size),
                Some(format!(
                    "row group 0, column 'b': {shown} of a {size}-byte file (corrupt footer)"
                ))
            );
        }
    }
}
