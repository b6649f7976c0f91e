//! Checks of a Parquet footer before anything reads a file by it.
//!
//! The `parquet` crate trusts a footer's column-chunk offsets: it asserts they are not
//! negative when it computes a chunk's byte range (`ColumnChunkMetaData::byte_range`),
//! so a corrupt footer panics there instead of failing. Every reader of Parquet files in
//! icefloe (data files through the scan's reader, position and equality delete files)
//! checks the footer first and fails with an error naming the file.
//!
//! The footer's own length field is trusted too: the metadata decoder DataFusion's
//! readers drive (`ParquetMetaDataPushDecoder`, `parquet` 59.3) subtracts it from the
//! file size unchecked, so a length beyond the file panics there ("attempt to subtract
//! with overflow") in debug builds and asks for a wrapped-around byte range in release
//! builds. [`check_footer_length`] is the one check of that field (parquet-format
//! "File Format": the file ends with the 4-byte little-endian footer length and the
//! magic `PAR1`, or `PARE` for an encrypted footer); the stores DataFusion reads footers
//! through apply it to the bytes they return ([`crate::io::FooterCheckedStore`]), and
//! the readers that decode a whole file in memory apply it before decoding.

use std::fmt;

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

/// The Parquet footer's fixed tail: the metadata length (4 bytes) and the magic (4).
pub const FOOTER_TAIL_BYTES: u64 = 8;

/// A Parquet footer whose length field says the metadata is longer than the file
/// ([`check_footer_length`]). Its text says what is wrong without naming the file
/// ("its footer gives a metadata length of 2000000000 bytes, more than the 1506-byte
/// file holds (corrupt footer)"): callers name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FooterLengthBeyondFile {
    /// The footer's metadata length field (bytes).
    pub metadata_length: u64,
    /// The file's size (bytes).
    pub file_size: u64,
}

impl fmt::Display for FooterLengthBeyondFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "its footer gives a metadata length of {} bytes, more than the {}-byte file \
             holds (corrupt footer)",
            self.metadata_length, self.file_size
        )
    }
}

impl std::error::Error for FooterLengthBeyondFile {}

/// Check the footer length field in `tail`, the last bytes of a Parquet file of
/// `file_size` bytes (`tail` ends at the end of the file; the whole file will do): the
/// metadata it gives and the 8-byte footer tail must fit in the file.
///
/// A `tail` shorter than 8 bytes, or not ending in the magic `PAR1`/`PARE`, is left to
/// the decoder, which reports a file that is too short or not Parquet in its own words.
///
/// # Errors
/// [`FooterLengthBeyondFile`] when the length field exceeds `file_size - 8`.
pub fn check_footer_length(tail: &[u8], file_size: u64) -> Result<(), FooterLengthBeyondFile> {
    let Some(start) = tail.len().checked_sub(FOOTER_TAIL_BYTES as usize) else {
        return Ok(());
    };
    let footer = &tail[start..];
    if &footer[4..] != b"PAR1" && &footer[4..] != b"PARE" {
        return Ok(());
    }
    let metadata_length = u64::from(u32::from_le_bytes([
        footer[0], footer[1], footer[2], footer[3],
    ]));
    if metadata_length.saturating_add(FOOTER_TAIL_BYTES) <= file_size {
        return Ok(());
    }
    Err(FooterLengthBeyondFile {
        metadata_length,
        file_size,
    })
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
    fn footer_lengths_beyond_the_file_are_refused() {
        let tail = |length: u32, magic: &[u8; 4]| {
            let mut t = length.to_le_bytes().to_vec();
            t.extend_from_slice(magic);
            t
        };
        // the metadata and the 8-byte tail fill the file exactly
        assert_eq!(check_footer_length(&tail(92, b"PAR1"), 100), Ok(()));
        for (length, magic, size) in [
            (93, b"PAR1", 100),
            (u32::MAX, b"PARE", 100),
            (1, b"PAR1", 8),
        ] {
            assert_eq!(
                check_footer_length(&tail(length, magic), size),
                Err(FooterLengthBeyondFile {
                    metadata_length: u64::from(length),
                    file_size: size,
                })
            );
        }
        // a longer tail is read at its end; not Parquet, or too short: the decoder's
        let mut longer = vec![7u8; 20];
        longer.extend(tail(93, b"PAR1"));
        assert!(check_footer_length(&longer, 100).is_err());
        assert_eq!(check_footer_length(&tail(93, b"PARX"), 100), Ok(()));
        assert_eq!(check_footer_length(b"PAR1", 4), Ok(()));
        assert_eq!(
            check_footer_length(&tail(93, b"PAR1"), 100).map_err(|e| e.to_string()),
            Err(
                "its footer gives a metadata length of 93 bytes, more than the 100-byte \
                 file holds (corrupt footer)"
                    .to_string()
            )
        );
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
