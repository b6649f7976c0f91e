//! The position delete files of a path rewrite (Java `RewriteTablePathUtil.
//! rewritePositionDeleteFile`): their bytes name data files, so each is rewritten with the
//! data file paths moved from the source prefix to the target prefix.
//!
//! * A Parquet position delete file (spec: "Position Delete Files"): every row's
//!   `file_path` (field id 2147483546) replaced; `pos` and the optional `row` column kept
//!   as they are; the file's key-value metadata (`iceberg.schema`) kept.
//! * A Puffin file of deletion vectors (v3, spec: "Deletion Vectors"): each blob's
//!   `referenced-data-file` property replaced in the footer; the blobs keep their bytes
//!   and offsets (the manifests' `content_offset` and `content_size_in_bytes` stay
//!   right), only the footer and the file size change.
//!
//! Position delete files in Avro or ORC are refused ([`crate::ErrorKind::Unsupported`]).

use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{Array, ArrayRef, LargeStringArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;

use super::paths::PrefixRewrite;
use crate::delete::delete_file_index::DELETE_FILE_PATH_FIELD_ID;
use crate::delete::puffin::{parse_footer, PUFFIN_MAGIC};
use crate::error::{Error, Result};
use crate::spec::{DataFile, DataFileFormat};

/// The metrics of a rewritten Parquet position delete file that differ from the source
/// file's (spec: "Manifests", fields 108 and 132, and the bounds 125/128 of `file_path`):
/// the rows are the same, so value, null and NaN counts and the `pos` and `row` bounds
/// are too.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ParquetDeleteMetrics {
    /// Row group starts (`split_offsets`), bytes from the file's start.
    pub split_offsets: Vec<i64>,
    /// Compressed bytes of each leaf column with a field id (`column_sizes`).
    pub column_sizes: Vec<(i32, i64)>,
    /// The least and greatest moved `file_path` (full, by unsigned UTF-8 bytes); `None`
    /// for a file without rows.
    pub path_bounds: Option<(String, String)>,
}

/// The rewritten bytes of delete file `file` (its current bytes `bytes`), and, for a
/// Parquet file, the metrics of the written bytes.
///
/// Errors: a `file_path` or `referenced-data-file` not under the source prefix
/// ([`crate::ErrorKind::InvalidArgument`], naming the file and the path), a file that
/// is not Parquet or Puffin ([`crate::ErrorKind::Unsupported`]), unreadable bytes
/// ([`crate::ErrorKind::InvalidData`], naming the file).
pub(super) fn rewrite_delete_file(
    file: &DataFile,
    bytes: Bytes,
    paths: &PrefixRewrite,
) -> Result<(Vec<u8>, Option<ParquetDeleteMetrics>)> {
    match file.file_format {
        DataFileFormat::Parquet => {
            let (bytes, metrics) = rewrite_parquet(bytes, &file.file_path, paths)?;
            Ok((bytes, Some(metrics)))
        }
        DataFileFormat::Puffin => Ok((rewrite_puffin(&bytes, &file.file_path, paths)?, None)),
        other => Err(Error::unsupported(format!(
            "rewrite_table_path of position delete file '{}' in {other:?} (only Parquet \
             position deletes and Puffin deletion vectors)",
            file.file_path
        ))),
    }
}

/// A Parquet position delete file with every `file_path` value moved, and its metrics.
fn rewrite_parquet(
    bytes: Bytes,
    location: &str,
    paths: &PrefixRewrite,
) -> Result<(Vec<u8>, ParquetDeleteMetrics)> {
    let bad =
        |what: &str| Error::invalid_data(format!("position delete file '{location}': {what}"));
    crate::io::parquet_footer::check_footer_length(&bytes, bytes.len() as u64)
        .map_err(|e| bad(&e.to_string()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(|e| bad("cannot read Parquet").with_source(e))?;
    let schema = Arc::clone(builder.schema());
    let key_values = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned();
    let path_idx = schema
        .fields()
        .iter()
        .position(|f| {
            f.metadata()
                .get(datafusion::parquet::arrow::PARQUET_FIELD_ID_META_KEY)
                .and_then(|v| v.parse::<i32>().ok())
                == Some(DELETE_FILE_PATH_FIELD_ID)
        })
        .or_else(|| schema.fields().iter().position(|f| f.name() == "file_path"))
        .ok_or_else(|| bad("no 'file_path' column (field id 2147483546)"))?;
    let reader = builder
        .with_batch_size(64 * 1024)
        .build()
        .map_err(|e| bad("cannot read Parquet").with_source(e))?;
    let properties = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_key_value_metadata(key_values)
        .build();
    let mut out: Vec<u8> = Vec::new();
    let write_err =
        |e: datafusion::parquet::errors::ParquetError| bad("cannot write Parquet").with_source(e);
    let mut writer =
        ArrowWriter::try_new(&mut out, Arc::clone(&schema), Some(properties)).map_err(write_err)?;
    let mut path_bounds: Option<(String, String)> = None;
    for batch in reader {
        let batch = batch.map_err(|e| bad("cannot read Parquet").with_source(e))?;
        let column = batch.column(path_idx);
        let moved = moved_paths(column, location, paths)?;
        widen_bounds(&mut path_bounds, &moved);
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        columns[path_idx] = moved;
        let batch = RecordBatch::try_new(Arc::clone(&schema), columns)
            .map_err(|e| bad("rewritten rows").with_source(e))?;
        writer.write(&batch).map_err(write_err)?;
    }
    let meta = writer.close().map_err(write_err)?;
    let split_offsets = meta
        .row_groups()
        .iter()
        .filter_map(|rg| rg.columns().first())
        .map(|c| c.dictionary_page_offset().unwrap_or(c.data_page_offset()))
        .collect();
    let descr = meta.file_metadata().schema_descr();
    let mut column_sizes: Vec<(i32, i64)> = vec![];
    for i in 0..descr.num_columns() {
        let column = descr.column(i);
        let info = column.self_type().get_basic_info();
        if !info.has_id() {
            continue;
        }
        let size = meta
            .row_groups()
            .iter()
            .filter_map(|rg| rg.columns().get(i))
            .map(|c| c.compressed_size())
            .sum();
        column_sizes.push((info.id(), size));
    }
    let metrics = ParquetDeleteMetrics {
        split_offsets,
        column_sizes,
        path_bounds,
    };
    Ok((out, metrics))
}

/// `bounds` widened to the least and greatest non-null value of `column` (strings, as
/// [`moved_paths`] gives them), compared by bytes.
fn widen_bounds(bounds: &mut Option<(String, String)>, column: &ArrayRef) {
    let values: Box<dyn Iterator<Item = Option<&str>>> = match column.data_type() {
        DataType::Utf8 => match column.as_any().downcast_ref::<StringArray>() {
            Some(a) => Box::new(a.iter()),
            None => return,
        },
        DataType::LargeUtf8 => match column.as_any().downcast_ref::<LargeStringArray>() {
            Some(a) => Box::new(a.iter()),
            None => return,
        },
        _ => return,
    };
    for v in values.flatten() {
        match bounds {
            None => *bounds = Some((v.to_string(), v.to_string())),
            Some((lower, upper)) => {
                if v < lower.as_str() {
                    *lower = v.to_string();
                }
                if v > upper.as_str() {
                    *upper = v.to_string();
                }
            }
        }
    }
}

/// `column` (strings) with each path moved to the target prefix.
fn moved_paths(column: &ArrayRef, location: &str, paths: &PrefixRewrite) -> Result<ArrayRef> {
    let what = format!("position delete file '{location}'");
    let map = |v: Option<&str>| v.map(|p| paths.new_path(p, &what)).transpose();
    Ok(match column.data_type() {
        DataType::Utf8 => {
            let a = column
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(|| Error::invalid_data(format!("{what}: file_path column")))?;
            let values = a.iter().map(map).collect::<Result<Vec<_>>>()?;
            Arc::new(StringArray::from(values))
        }
        DataType::LargeUtf8 => {
            let a = column
                .as_any()
                .downcast_ref::<LargeStringArray>()
                .ok_or_else(|| Error::invalid_data(format!("{what}: file_path column")))?;
            let values = a.iter().map(map).collect::<Result<Vec<_>>>()?;
            Arc::new(LargeStringArray::from(values))
        }
        other => {
            return Err(Error::invalid_data(format!(
                "{what}: file_path column of type {other} (expected a string)"
            )))
        }
    })
}

/// A Puffin file of deletion vectors with each blob's `referenced-data-file` moved: the
/// bytes before the footer kept, a new footer (same blobs, offsets and properties but
/// that one) written after them.
fn rewrite_puffin(bytes: &[u8], location: &str, paths: &PrefixRewrite) -> Result<Vec<u8>> {
    // validates the magic bytes and the footer's size
    parse_footer(bytes, location)?;
    let n = bytes.len();
    let mut size = [0u8; 4];
    size.copy_from_slice(&bytes[n - 12..n - 8]);
    let payload_end = n - 12;
    let payload_start = payload_end - u32::from_le_bytes(size) as usize;
    let bad = |what: &str| Error::invalid_data(format!("Puffin file '{location}': {what}"));
    let mut footer: serde_json::Value = serde_json::from_slice(&bytes[payload_start..payload_end])
        .map_err(|e| bad("footer payload is not JSON").with_source(e))?;
    let what = format!("deletion vector file '{location}'");
    if let Some(blobs) = footer.get_mut("blobs").and_then(|b| b.as_array_mut()) {
        for blob in blobs {
            let Some(file) = blob
                .get_mut("properties")
                .and_then(|p| p.get_mut("referenced-data-file"))
            else {
                continue;
            };
            if let Some(path) = file.as_str() {
                *file = serde_json::Value::String(paths.new_path(path, &what)?);
            }
        }
    }
    let payload =
        serde_json::to_vec(&footer).map_err(|e| bad("footer payload to JSON").with_source(e))?;
    let footer_start = payload_start - PUFFIN_MAGIC.len();
    let mut out = Vec::with_capacity(footer_start + payload.len() + 16);
    out.extend_from_slice(&bytes[..footer_start]);
    out.extend_from_slice(&PUFFIN_MAGIC);
    out.extend_from_slice(&payload);
    let len = u32::try_from(payload.len()).map_err(|_| bad("footer payload too large"))?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&PUFFIN_MAGIC);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puffin_footer_moves_referenced_data_files_and_keeps_blob_offsets() {
        let blob = b"0123456789";
        let footer = crate::write::puffin_writer::puffin_footer(vec![serde_json::json!({
            "type": "deletion-vector-v1", "fields": [2147483645], "snapshot-id": -1,
            "sequence-number": -1, "offset": 4, "length": 10,
            "properties": {"referenced-data-file": "/a/t/data/f.parquet", "cardinality": "1"}
        })])
        .expect("footer");
        let mut file = PUFFIN_MAGIC.to_vec();
        file.extend_from_slice(blob);
        file.extend_from_slice(&footer);
        let paths = PrefixRewrite::new("/a/t", "/b/u").expect("prefixes");
        let out = rewrite_puffin(&file, "f.puffin", &paths).expect("rewrite");
        assert_eq!(&out[..14], &file[..14], "blob bytes and offsets kept");
        let meta = parse_footer(&out, "f.puffin").expect("footer");
        assert_eq!(
            meta.blobs[0].properties["referenced-data-file"],
            "/b/u/data/f.parquet"
        );
        assert_eq!(meta.blobs[0].offset, 4);
        let outside = PrefixRewrite::new("/c", "/d").expect("prefixes");
        let e = rewrite_puffin(&file, "f.puffin", &outside).expect_err("outside the prefix");
        assert!(e.to_string().contains("/a/t/data/f.parquet"), "{e}");
    }
}
