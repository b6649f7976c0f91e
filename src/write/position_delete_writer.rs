//! Writing position delete files (spec: "Position Delete Files"): Parquet files of
//! `(file_path, pos)` rows, sorted by `file_path` then `pos`, each naming a row of a data
//! file by the file's location (as stored in its manifest) and the row's 0-based ordinal.
//!
//! One delete file holds the deletes of one partition (`write.delete.granularity` =
//! `partition`) or of one data file (`file`, the default as in Iceberg Java 1.8+; then
//! the entry's `referenced_data_file` names that file). The columns carry the reserved
//! field ids 2147483546 (`file_path`) and 2147483545 (`pos`), and both get full
//! lower/upper bounds, so readers (this crate's `DeleteFileIndex` among them) can tell
//! from the manifest alone which data files a delete file covers.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::array::{ArrayRef, Int64Builder, RecordBatch, StringBuilder};
use datafusion::parquet::arrow::ArrowWriter;
use roaring::RoaringTreemap;

use super::metrics_config::MetricsMode;
use super::parquet_metrics::{data_file_from_footer, unsorted_order_id};
use super::partition_path::{file_location, partition_path};
use super::writer_config::DataFileWriterConfig;
use crate::delete::delete_file_index::DELETE_FILE_PATH_FIELD_ID;
use crate::error::{Error, ErrorKind, Result};
use crate::io::FileIO;
use crate::spec::arrow::schema_to_arrow;
use crate::spec::{
    DataContentType, DataFile, Literal, NestedField, PartitionSpec, PrimitiveType, Schema, Type,
};

/// Field id of a position delete file's `pos` column (spec: reserved field ids).
pub const DELETE_POS_FIELD_ID: i32 = 2147483545;

/// Table property: `file` (one delete file per data file) or `partition`.
pub const DELETE_GRANULARITY: &str = crate::table_properties::DELETE_GRANULARITY.name;

/// Rows per Arrow batch handed to the Parquet writer.
const BATCH_ROWS: usize = 64 * 1024;

/// How many data files one position delete file covers (`write.delete.granularity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteGranularity {
    /// One delete file per data file (`referenced_data_file` set).
    File,
    /// One delete file per partition.
    Partition,
}

impl DeleteGranularity {
    /// The table's granularity from its properties (default `file`).
    ///
    /// Errors: a value other than `file` / `partition`, naming it.
    pub fn from_properties(props: &HashMap<String, String>) -> Result<Self> {
        Ok(
            match crate::table_properties::DELETE_GRANULARITY.choice(props)? {
                Some("partition") => Self::Partition,
                _ => Self::File,
            },
        )
    }
}

/// The Iceberg schema of a position delete file.
pub fn position_delete_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(
                DELETE_FILE_PATH_FIELD_ID,
                "file_path",
                Type::Primitive(PrimitiveType::String),
            ),
            NestedField::required(
                DELETE_POS_FIELD_ID,
                "pos",
                Type::Primitive(PrimitiveType::Long),
            ),
        ],
    )
}

/// Write one position delete file holding `deletes` (data file location → deleted row
/// ordinals; written sorted by location, then ordinal) for a partition of `spec`, under
/// `<data_location>/<partition path>/`, and return its [`DataFile`] (content
/// `PositionDeletes`, the partition tuple, metrics with full bounds of both columns, and
/// `referenced_data_file` when it covers exactly one data file).
///
/// Errors: nothing to write ([`ErrorKind::InvalidArgument`]); [`ErrorKind::Io`] naming the
/// file when encoding or storing it fails (the file does not exist then).
pub async fn write_position_delete_file(
    file_io: &FileIO,
    data_location: &str,
    spec: &PartitionSpec,
    partition: Vec<Option<Literal>>,
    mut deletes: Vec<(String, RoaringTreemap)>,
    config: &DataFileWriterConfig,
) -> Result<DataFile> {
    deletes.retain(|(_, positions)| !positions.is_empty());
    if deletes.is_empty() {
        return Err(Error::invalid_argument(
            "a position delete file needs at least one deleted row",
        ));
    }
    deletes.sort_by(|a, b| a.0.cmp(&b.0));
    let schema = position_delete_schema();
    let arrow_schema = Arc::new(schema_to_arrow(&schema)?);
    let name = format!("{}-deletes.parquet", uuid::Uuid::new_v4());
    let location = file_location(data_location, &partition_path(spec, &partition), &name);
    let io_error = |e: datafusion::parquet::errors::ParquetError| {
        Error::new(
            ErrorKind::Io,
            format!("cannot write position delete file '{location}'"),
        )
        .with_source(e)
    };
    let properties = config.writer_properties_for(&schema)?;
    let mut bytes: Vec<u8> = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut bytes, Arc::clone(&arrow_schema), Some(properties))
        .map_err(io_error)?;
    let mut paths = StringBuilder::new();
    let mut positions = Int64Builder::new();
    let mut rows = 0usize;
    for (path, deleted) in &deletes {
        for pos in deleted.iter() {
            let pos = i64::try_from(pos).map_err(|_| {
                Error::invalid_argument(format!("row position {pos} of '{path}' exceeds a long"))
            })?;
            paths.append_value(path);
            positions.append_value(pos);
            rows += 1;
            if rows == BATCH_ROWS {
                write_batch(&mut writer, &arrow_schema, &mut paths, &mut positions)
                    .map_err(io_error)?;
                rows = 0;
            }
        }
    }
    if rows > 0 {
        write_batch(&mut writer, &arrow_schema, &mut paths, &mut positions).map_err(io_error)?;
    }
    let meta = writer.close().map_err(io_error)?;
    let size = bytes.len() as i64;
    file_io.write_new(&location, Bytes::from(bytes)).await?;
    let mut file = data_file_from_footer(
        &meta,
        size,
        &location,
        &schema,
        partition,
        &|_| MetricsMode::Full,
        &HashMap::new(),
    );
    file.content = DataContentType::PositionDeletes;
    file.sort_order_id = unsorted_order_id(file.content);
    if let [(only, _)] = deletes.as_slice() {
        file.referenced_data_file = Some(only.clone());
    }
    Ok(file)
}

fn write_batch(
    writer: &mut ArrowWriter<&mut Vec<u8>>,
    schema: &datafusion::arrow::datatypes::SchemaRef,
    paths: &mut StringBuilder,
    positions: &mut Int64Builder,
) -> std::result::Result<(), datafusion::parquet::errors::ParquetError> {
    let columns: Vec<ArrayRef> = vec![Arc::new(paths.finish()), Arc::new(positions.finish())];
    let batch = RecordBatch::try_new(Arc::clone(schema), columns)?;
    writer.write(&batch)
}
