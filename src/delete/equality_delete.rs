//! Equality deletes: reading the delete keys of equality delete files.
//!
//! Source: Iceberg spec, "Equality Delete Files": a delete file holds some of the table's
//! columns (with the table's field ids); the columns listed in its `equality_ids` are the
//! delete key. A data row is deleted when it equals a delete row in every key column,
//! where a NULL key value matches NULL only. Key columns may be nested in structs (a null
//! parent makes the leaf null), and may have been dropped from the table since.
//!
//! [`EqualityDeleteLoader`] reads each file's key columns once into Arrow record batches
//! shaped like a target schema (the table's types for those field ids, see
//! [`equality_delete_schema`]); [`build_key_rows`] turns them into Arrow row-format keys,
//! whose equality treats NULL = NULL as the spec requires.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use datafusion::arrow::array::{make_array, Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::compute::{can_cast_types, cast};
use datafusion::arrow::datatypes::{
    DataType, Field, Fields, Schema as ArrowSchema, SchemaRef, TimeUnit,
};
use datafusion::arrow::row::{OwnedRow, RowConverter};
use datafusion::parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use datafusion::parquet::arrow::ProjectionMask;
use datafusion::parquet::basic::Type as PhysicalType;
use datafusion::parquet::schema::types::SchemaDescriptor;
use tokio::sync::OnceCell;

use crate::error::{Error, Result};
use crate::io::parquet_footer::{check_footer_length, column_chunk_out_of_range};
use crate::io::FileIO;
use crate::scan::file_version::FileVersion;
use crate::spec::arrow::{arrow_field_id, field_to_arrow};
use crate::spec::{DataContentType, DataFileFormat, ManifestEntry, Schema};

/// The Arrow schema of an equality delete key: one nullable field per id of
/// `equality_ids`, in that order, typed and named as in the first of `schemas` that has
/// the field (pass the current schema first, then older ones, so keys on dropped columns
/// still resolve). Each field carries its field id in its metadata.
///
/// Errors: an id that no schema has ([`crate::ErrorKind::InvalidData`]), or a type Arrow
/// cannot represent ([`crate::ErrorKind::Unsupported`]).
pub fn equality_delete_schema(schemas: &[&Schema], equality_ids: &[i32]) -> Result<SchemaRef> {
    let fields = equality_ids
        .iter()
        .map(|id| {
            let field = schemas
                .iter()
                .find_map(|s| s.field_by_id(*id))
                .ok_or_else(|| {
                    Error::invalid_data(format!(
                        "equality field id {id} is not in any table schema"
                    ))
                })?;
            Ok(field_to_arrow(field)?.with_nullable(true))
        })
        .collect::<Result<Vec<Field>>>()?;
    Ok(Arc::new(ArrowSchema::new(fields)))
}

/// Where a column sits in a file: the top-level index and the child indexes below it.
fn find_path(fields: &Fields, id: i32) -> Option<Vec<usize>> {
    for (i, f) in fields.iter().enumerate() {
        if arrow_field_id(f) == Some(id) {
            return Some(vec![i]);
        }
        if let DataType::Struct(children) = f.data_type() {
            if let Some(mut rest) = find_path(children, id) {
                rest.insert(0, i);
                return Some(rest);
            }
        }
    }
    None
}

fn has_field_ids(fields: &Fields) -> bool {
    fields.iter().any(|f| {
        arrow_field_id(f).is_some()
            || matches!(f.data_type(), DataType::Struct(c) if has_field_ids(c))
    })
}

/// Follow `path` below a top-level column; struct nulls are pushed into the leaf.
fn extract(column: &ArrayRef, path: &[usize]) -> Result<ArrayRef> {
    let mut current = Arc::clone(column);
    for &child in path {
        let s = current.as_struct_opt().ok_or_else(|| {
            Error::invalid_data(format!(
                "expected a struct column, found {}",
                current.data_type()
            ))
        })?;
        let leaf = s.column(child);
        let nulls = NullBuffer::union(s.nulls(), leaf.nulls());
        let data = leaf.to_data().into_builder().nulls(nulls).build()?;
        current = make_array(data);
    }
    Ok(current)
}

/// The file's Arrow schema with its top-level INT96 columns read as microseconds, as
/// the table scan reads those of microsecond columns (see `datafusion::int96_units`): as
/// Arrow's default nanoseconds a year outside 1677..2262 would wrap. `None` when there
/// are none. (Iceberg writers never write INT96 equality deletes; a `timestamp_ns` key
/// stored as INT96 in one would be compared at microseconds.)
fn int96_as_micros(parquet: &SchemaDescriptor, arrow: &SchemaRef) -> Option<SchemaRef> {
    let int96: Vec<&str> = parquet
        .columns()
        .iter()
        .filter(|c| c.physical_type() == PhysicalType::INT96 && c.path().parts().len() == 1)
        .map(|c| c.name())
        .collect();
    if int96.is_empty() {
        return None;
    }
    let fields: Vec<Field> = arrow
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Timestamp(_, tz) if int96.contains(&f.name().as_str()) => f
                .as_ref()
                .clone()
                .with_data_type(DataType::Timestamp(TimeUnit::Microsecond, tz.clone())),
            _ => f.as_ref().clone(),
        })
        .collect();
    Some(Arc::new(ArrowSchema::new_with_metadata(
        fields,
        arrow.metadata().clone(),
    )))
}

/// Parse the key columns of an equality delete file held in memory into batches of
/// `target` (see [`EqualityDeleteLoader::load`] for the matching rules).
pub fn parse_equality_delete_file(
    bytes: Bytes,
    location: &str,
    target: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let bad =
        |what: String| Error::invalid_data(format!("equality delete file '{location}': {what}"));
    let corrupt = |e| bad("cannot read Parquet (truncated or corrupt?)".into()).with_source(e);
    check_footer_length(&bytes, bytes.len() as u64).map_err(|e| bad(e.to_string()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes.clone()).map_err(corrupt)?;
    if let Some(what) = column_chunk_out_of_range(builder.metadata(), bytes.len() as u64) {
        return Err(bad(what));
    }
    let builder = match int96_as_micros(builder.parquet_schema(), builder.schema()) {
        Some(schema) => ParquetRecordBatchReaderBuilder::try_new_with_options(
            bytes,
            ArrowReaderOptions::new().with_schema(schema),
        )
        .map_err(corrupt)?,
        None => builder,
    };
    let file_schema = builder.schema().clone();
    let by_id = has_field_ids(file_schema.fields());
    // (top-level index in the file, path below it) per target field
    let mut paths = Vec::with_capacity(target.fields().len());
    for field in target.fields() {
        let path = match arrow_field_id(field) {
            Some(id) if by_id => find_path(file_schema.fields(), id),
            _ => file_schema
                .fields()
                .iter()
                .position(|f| f.name() == field.name())
                .map(|i| vec![i]),
        };
        let path = path.ok_or_else(|| {
            Error::invalid_data(format!(
                "equality delete file '{location}' has no column '{}' (field id {})",
                field.name(),
                arrow_field_id(field).map_or("none".to_string(), |id| id.to_string())
            ))
        })?;
        paths.push(path);
    }
    let mut roots: Vec<usize> = paths.iter().map(|p| p[0]).collect();
    roots.sort_unstable();
    roots.dedup();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| bad("cannot read Parquet".into()).with_source(e))?;
    let mut batches = vec![];
    for batch in reader {
        let batch = batch.map_err(|e| {
            bad("cannot read Parquet data (truncated or corrupt?)".into()).with_source(e)
        })?;
        let columns = target
            .fields()
            .iter()
            .zip(&paths)
            .map(|(field, path)| {
                // roots are projected in file order
                let root = roots
                    .binary_search(&path[0])
                    .map_err(|_| bad("projection lost a column".into()))?;
                extract(batch.column(root), &path[1..])
                    .and_then(|column| conform(column, field))
                    .map_err(|e| e.context(format!("equality delete file '{location}'")))
            })
            .collect::<Result<Vec<_>>>()?;
        let out = RecordBatch::try_new(Arc::clone(target), columns)
            .map_err(|e| bad("key columns do not fit the table's schema".into()).with_source(e))?;
        batches.push(out);
    }
    Ok(batches)
}

/// Cast a file column to the target field's type (e.g. int → long after a promotion, or a
/// large/view string to a string).
fn conform(column: ArrayRef, field: &Field) -> Result<ArrayRef> {
    if column.data_type() == field.data_type() {
        return Ok(column);
    }
    if !can_cast_types(column.data_type(), field.data_type()) {
        return Err(Error::invalid_data(format!(
            "column '{}' has type {}, which cannot be read as {}",
            field.name(),
            column.data_type(),
            field.data_type()
        )));
    }
    cast(&column, field.data_type()).map_err(|e| {
        Error::invalid_data(format!(
            "column '{}' cannot be cast to {}",
            field.name(),
            field.data_type()
        ))
        .with_source(e)
    })
}

/// The key columns of one equality delete file.
#[derive(Debug, Clone)]
pub struct EqualityDeleteBatches {
    /// The schema the batches have (the target schema they were loaded with).
    pub schema: SchemaRef,
    /// The delete rows' key columns.
    pub batches: Vec<RecordBatch>,
}

impl EqualityDeleteBatches {
    /// Number of delete rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

type Cells = Mutex<HashMap<(String, SchemaRef), Arc<OnceCell<Arc<EqualityDeleteBatches>>>>>;

/// Reads the key columns of equality delete files, each (file, target schema) once.
/// Cheap to share behind an `Arc` across scan partitions.
#[derive(Debug)]
pub struct EqualityDeleteLoader {
    file_io: FileIO,
    cells: Cells,
}

impl EqualityDeleteLoader {
    /// A loader reading through `file_io` (the table's, with its remaps).
    pub fn new(file_io: FileIO) -> Self {
        Self {
            file_io,
            cells: Mutex::default(),
        }
    }

    /// The FileIO the delete files are read through.
    pub fn file_io(&self) -> &FileIO {
        &self.file_io
    }

    /// The key columns of the equality delete file `entry`, as batches of `target`.
    ///
    /// `target` is usually [`equality_delete_schema`] of the entry's `equality_ids`. Each
    /// target field is found in the file by the field id in its metadata (nested struct
    /// fields too), or by name when the file has no field ids; file columns are cast to the
    /// target type when they differ (e.g. int → long).
    ///
    /// Errors name the delete file: [`crate::ErrorKind::NotFound`] when the file is
    /// missing, [`crate::ErrorKind::InvalidData`] when it is corrupt, of another size than
    /// the entry's `file_size_in_bytes` (replaced or truncated), lacks one of the requested
    /// columns, or a column cannot be read as the target type,
    /// [`crate::ErrorKind::Unsupported`] for Avro / ORC files.
    pub async fn load(
        &self,
        entry: &ManifestEntry,
        target: &SchemaRef,
    ) -> Result<Arc<EqualityDeleteBatches>> {
        let file = &entry.data_file;
        if file.content != DataContentType::EqualityDeletes {
            return Err(Error::invalid_argument(format!(
                "'{}' is not an equality delete file",
                file.file_path
            )));
        }
        if file.file_format != DataFileFormat::Parquet {
            return Err(Error::unsupported(format!(
                "equality delete file '{}' in {:?} format (only Parquet is read)",
                file.file_path, file.file_format
            )));
        }
        let location = file.file_path.clone();
        let cell = {
            let mut cells = self.cells.lock().map_err(|_| {
                Error::invalid_argument("equality delete cache poisoned by a panic")
            })?;
            Arc::clone(
                cells
                    // the version the entry lists: a path re-added with other contents
                    // is another file (`crate::scan::file_version`)
                    .entry((FileVersion::of(entry).key(&location), Arc::clone(target)))
                    .or_default(),
            )
        };
        let loaded = cell
            .get_or_try_init(|| async {
                let bytes = self.file_io.read(&location).await.map_err(|e| {
                    e.context(crate::io::file_context(
                        "equality delete file",
                        &self.file_io,
                        &location,
                    ))
                })?;
                super::file_size::check_delete_file_size(
                    "equality delete file",
                    &self.file_io,
                    file,
                    bytes.len() as u64,
                )?;
                let target = Arc::clone(target);
                let what = format!("equality delete file '{location}'");
                let (loc, schema) = (location.clone(), Arc::clone(&target));
                let batches = crate::blocking::run_blocking(what, move || {
                    parse_equality_delete_file(bytes, &loc, &schema)
                })
                .await
                .map_err(|e| {
                    crate::io::when_moved(e, "equality delete file", &self.file_io, &location)
                })?;
                Ok::<_, Error>(Arc::new(EqualityDeleteBatches {
                    schema: target,
                    batches,
                }))
            })
            .await?;
        Ok(Arc::clone(loaded))
    }
}

/// Convert delete key batches into owned Arrow rows with `converter` (built for the key
/// columns' types), e.g. to fill a hash set probed with the data's converted rows. Row
/// equality is byte equality, so a NULL key equals NULL only, as the spec requires.
pub fn build_key_rows(batches: &[RecordBatch], converter: &RowConverter) -> Result<Vec<OwnedRow>> {
    let mut out = Vec::with_capacity(batches.iter().map(RecordBatch::num_rows).sum());
    for batch in batches {
        let rows = converter.convert_columns(batch.columns())?;
        out.extend(rows.iter().map(|r| r.owned()));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "equality_delete_tests.rs"]
mod tests;
