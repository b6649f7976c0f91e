//! Position deletes: Parquet position delete files and Puffin deletion vectors, as sets
//! of deleted row positions per data file (Java's `PositionDeleteIndex`).
//!
//! Source: Iceberg spec, "Position Delete Files" (columns `file_path`, field id
//! 2147483546, and `pos`, field id 2147483545: the 0-based ordinal of the deleted row in
//! the data file) and "Deletion Vectors". Positions are `u64` row ordinals counted from
//! the first row of the data file, across all its row groups.
//!
//! [`PositionDeleteLoader`] reads each delete file once and keeps it for the life of the
//! loader (one loader per scan is the intended use): a Parquet position delete file is
//! parsed into a map from data file path to a [`RoaringTreemap`]; a deletion vector is
//! read by its byte range and kept by (Puffin file, offset, length). Given a
//! [`PositionDeleteCache`] ([`PositionDeleteLoader::with_cache`]), it also keeps what it
//! decodes there and looks there first, so the scans of a session decode each delete file
//! once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Int64Type, SchemaRef};
use datafusion::parquet::arrow::arrow_reader::{
    ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use datafusion::parquet::arrow::ProjectionMask;
use futures::future::try_join_all;
use roaring::RoaringTreemap;
use tokio::sync::OnceCell;

use super::delete_file_index::{
    is_deletion_vector, DELETE_FILE_PATH_FIELD_ID, DELETE_FILE_POS_FIELD_ID,
};
use super::deletion_vector::deserialize_deletion_vector;
use super::position_delete_cache::PositionDeleteCache;
use super::puffin::read_blob;
use crate::error::{Error, Result};
use crate::io::parquet_footer::{check_footer_length, column_chunk_out_of_range};
use crate::io::FileIO;
use crate::scan::file_version::FileVersion;
use crate::spec::arrow::arrow_field_id;
use crate::spec::{DataContentType, DataFileFormat, ManifestEntry};

/// The deletes of one Parquet position delete file, by data file.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PositionDeleteFile {
    /// Stored data file path (the `file_path` column) → deleted positions.
    pub by_data_file: HashMap<String, RoaringTreemap>,
    /// Rows read from the file.
    pub rows: u64,
}

impl PositionDeleteFile {
    /// The deleted positions of one data file (by stored path), if the file has any.
    pub fn positions(&self, data_file_path: &str) -> Option<&RoaringTreemap> {
        self.by_data_file.get(data_file_path)
    }
}

/// Index of the top-level column with field id `id`, else (when the file carries no
/// field ids at all) of the column named `name`.
fn find_column(schema: &SchemaRef, id: i32, name: &str) -> Option<usize> {
    let fields = schema.fields();
    if let Some(i) = fields.iter().position(|f| arrow_field_id(f) == Some(id)) {
        return Some(i);
    }
    if fields.iter().any(|f| arrow_field_id(f).is_some()) {
        return None;
    }
    fields.iter().position(|f| f.name() == name)
}

/// Parse a Parquet position delete file held in memory.
///
/// `location` names the file in errors. Columns are found by field id (2147483546
/// `file_path`, 2147483545 `pos`), or by name in files without field ids; the optional
/// `row` column is not read. Errors ([`crate::ErrorKind::InvalidData`]): not Parquet or
/// truncated, a missing column, a null or negative value.
pub fn parse_position_delete_file(bytes: Bytes, location: &str) -> Result<PositionDeleteFile> {
    let bad =
        |what: String| Error::invalid_data(format!("position delete file '{location}': {what}"));
    let size = bytes.len() as u64;
    check_footer_length(&bytes, size).map_err(|e| bad(e.to_string()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(|e| bad("cannot read Parquet (truncated or corrupt?)".into()).with_source(e))?;
    if let Some(what) = column_chunk_out_of_range(builder.metadata(), size) {
        return Err(bad(what));
    }
    let schema = builder.schema().clone();
    let path_idx =
        find_column(&schema, DELETE_FILE_PATH_FIELD_ID, "file_path").ok_or_else(|| {
            bad(format!(
                "no 'file_path' column (field id {DELETE_FILE_PATH_FIELD_ID})"
            ))
        })?;
    let pos_idx = find_column(&schema, DELETE_FILE_POS_FIELD_ID, "pos").ok_or_else(|| {
        bad(format!(
            "no 'pos' column (field id {DELETE_FILE_POS_FIELD_ID})"
        ))
    })?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), [path_idx, pos_idx]);
    let reader = builder
        .with_projection(mask)
        .with_batch_size(64 * 1024)
        .build()
        .map_err(|e| bad("cannot read Parquet".into()).with_source(e))?;
    // the projection keeps file order
    let (path_col, pos_col) = if path_idx < pos_idx { (0, 1) } else { (1, 0) };
    let mut out = PositionDeleteFile::default();
    for batch in reader {
        let batch: RecordBatch = batch.map_err(|e| {
            bad("cannot read Parquet data (truncated or corrupt?)".into()).with_source(e)
        })?;
        let paths = cast(batch.column(path_col), &DataType::Utf8)
            .map_err(|e| bad("column 'file_path' is not a string".into()).with_source(e))?;
        let positions = cast(batch.column(pos_col), &DataType::Int64)
            .map_err(|e| bad("column 'pos' is not a long".into()).with_source(e))?;
        if paths.null_count() > 0 || positions.null_count() > 0 {
            return Err(bad("null 'file_path' or 'pos' (both are required)".into()));
        }
        let paths = paths.as_string::<i32>();
        let positions = positions.as_primitive::<Int64Type>();
        // rows are sorted by file_path: look the map up once per run of equal paths
        let mut row = 0;
        while row < batch.num_rows() {
            let path = paths.value(row);
            let mut end = row + 1;
            while end < batch.num_rows() && paths.value(end) == path {
                end += 1;
            }
            let set = out.by_data_file.entry(path.to_string()).or_default();
            for &p in &positions.values()[row..end] {
                let p = u64::try_from(p)
                    .map_err(|_| bad(format!("negative position {p} for '{path}'")))?;
                set.insert(p);
            }
            row = end;
        }
        out.rows += batch.num_rows() as u64;
    }
    Ok(out)
}

/// The rows of a data file of `total_rows` rows (its `record_count`) that survive the
/// `deleted` positions, as a file-level Parquet [`RowSelection`]: alternating runs of
/// selected and skipped rows, in row order across all row groups. Suited to DataFusion's
/// `ParquetRowSelection` extension on a `PartitionedFile`, which splits it by row group
/// when the file is opened (so row-group and page pruning and filter pushdown stay on).
///
/// Errors ([`crate::ErrorKind::InvalidData`], naming `data_file_path`): a deleted position
/// at or beyond `total_rows`.
pub fn row_selection(
    deleted: &RoaringTreemap,
    total_rows: u64,
    data_file_path: &str,
) -> Result<RowSelection> {
    if let Some(max) = deleted.max().filter(|m| *m >= total_rows) {
        return Err(Error::invalid_data(format!(
            "position {max} of data file '{data_file_path}' is deleted, but the file has {total_rows} rows"
        )));
    }
    let to_usize = |n: u64| {
        usize::try_from(n).map_err(|_| {
            Error::invalid_data(format!("{n} rows in '{data_file_path}' exceed usize"))
        })
    };
    let mut selectors = Vec::new();
    let mut next = 0u64; // first row not yet covered by a selector
    let mut run: Option<(u64, u64)> = None; // [start, end) of the current run of deleted rows
    for p in deleted.iter() {
        match run {
            Some((start, end)) if end == p => run = Some((start, end + 1)),
            _ => {
                if let Some((start, end)) = run {
                    selectors.push(RowSelector::select(to_usize(start - next)?));
                    selectors.push(RowSelector::skip(to_usize(end - start)?));
                    next = end;
                }
                run = Some((p, p + 1));
            }
        }
    }
    if let Some((start, end)) = run {
        selectors.push(RowSelector::select(to_usize(start - next)?));
        selectors.push(RowSelector::skip(to_usize(end - start)?));
        next = end;
    }
    selectors.push(RowSelector::select(to_usize(total_rows - next)?));
    // collecting drops empty selectors and merges neighbours
    Ok(selectors.into_iter().collect())
}

/// A per-key cell: concurrent first requests wait for one load; failures are not kept.
type Cells<K, V> = Mutex<HashMap<K, Arc<OnceCell<Arc<V>>>>>;

fn cell<K: std::hash::Hash + Eq, V>(cells: &Cells<K, V>, key: K) -> Result<Arc<OnceCell<Arc<V>>>> {
    let mut map = cells
        .lock()
        .map_err(|_| Error::invalid_argument("position delete cache poisoned by a panic"))?;
    Ok(Arc::clone(map.entry(key).or_default()))
}

/// Loads position delete files and deletion vectors once each and answers the deleted
/// positions of data files. Cheap to share behind an `Arc` across scan partitions.
#[derive(Debug)]
pub struct PositionDeleteLoader {
    file_io: FileIO,
    files: Cells<String, PositionDeleteFile>,
    dvs: Cells<(String, u64, u64), RoaringTreemap>,
    cache: Option<Arc<PositionDeleteCache>>,
}

impl PositionDeleteLoader {
    /// A loader reading through `file_io` (the table's, with its remaps).
    pub fn new(file_io: FileIO) -> Self {
        Self {
            file_io,
            files: Mutex::default(),
            dvs: Mutex::default(),
            cache: None,
        }
    }

    /// A loader reading through `file_io` that first looks in `cache` (shared by the
    /// scans of a session) and keeps there what it decodes, keyed by the location read
    /// (after remapping). Failed loads are not kept.
    pub fn with_cache(file_io: FileIO, cache: Arc<PositionDeleteCache>) -> Self {
        Self {
            cache: Some(cache),
            ..Self::new(file_io)
        }
    }

    /// The session cache and the key of the delete file `entry` lists in it, if cached:
    /// the location read, with the version of the file the entry lists (a file re-added
    /// at the same path is another version, see [`crate::scan::file_version`]).
    fn cache_key(
        &self,
        kind: &str,
        entry: &ManifestEntry,
    ) -> Result<Option<(&PositionDeleteCache, String)>> {
        let Some(cache) = &self.cache else {
            return Ok(None);
        };
        let location = &entry.data_file.file_path;
        let read = self
            .file_io
            .remap(location)
            .map_err(|e| e.context(crate::io::file_context(kind, &self.file_io, location)))?;
        Ok(Some((cache, FileVersion::of(entry).key(&read))))
    }

    /// The parsed Parquet position delete file of `entry`, read on first use.
    ///
    /// Errors name the delete file: [`crate::ErrorKind::NotFound`] when it is missing,
    /// [`crate::ErrorKind::InvalidData`] when corrupt or of another size than the entry's
    /// `file_size_in_bytes` (replaced or truncated), [`crate::ErrorKind::Unsupported`] for
    /// Avro / ORC delete files.
    pub async fn load_position_delete_file(
        &self,
        entry: &ManifestEntry,
    ) -> Result<Arc<PositionDeleteFile>> {
        let file = &entry.data_file;
        if file.content != DataContentType::PositionDeletes || is_deletion_vector(file) {
            return Err(Error::invalid_argument(format!(
                "'{}' is not a position delete file",
                file.file_path
            )));
        }
        if file.file_format != DataFileFormat::Parquet {
            return Err(Error::unsupported(format!(
                "position delete file '{}' in {:?} format (only Parquet is read)",
                file.file_path, file.file_format
            )));
        }
        let location = file.file_path.clone();
        let cell = cell(&self.files, FileVersion::of(entry).key(&location))?;
        let loaded = cell
            .get_or_try_init(|| async {
                let cached = self.cache_key("position delete file", entry)?;
                if let Some(hit) = cached
                    .as_ref()
                    .and_then(|(c, key)| c.get_position_delete_file(key))
                {
                    return Ok(hit);
                }
                let bytes = self.file_io.read(&location).await.map_err(|e| {
                    e.context(crate::io::file_context(
                        "position delete file",
                        &self.file_io,
                        &location,
                    ))
                })?;
                super::file_size::check_delete_file_size(
                    "position delete file",
                    &self.file_io,
                    file,
                    bytes.len() as u64,
                )?;
                let what = format!("position delete file '{location}'");
                let loc = location.clone();
                let parsed = crate::blocking::run_blocking(what, move || {
                    parse_position_delete_file(bytes, &loc)
                })
                .await
                .map_err(|e| {
                    crate::io::when_moved(e, "position delete file", &self.file_io, &location)
                })?;
                let parsed = Arc::new(parsed);
                if let Some((c, key)) = cached {
                    c.insert_position_delete_file(&key, Arc::clone(&parsed));
                }
                Ok::<_, Error>(parsed)
            })
            .await?;
        Ok(Arc::clone(loaded))
    }

    /// The deletion vector of `entry` (a position delete in Puffin format), read on first
    /// use from `content_offset` / `content_size_in_bytes`.
    ///
    /// Errors name the Puffin file: missing offset or size, a blob beyond the end of the
    /// file, bad length, magic or CRC, or a cardinality that differs from the entry's
    /// `record_count` ([`crate::ErrorKind::InvalidData`]); a missing file
    /// ([`crate::ErrorKind::NotFound`]).
    pub async fn load_deletion_vector(&self, entry: &ManifestEntry) -> Result<Arc<RoaringTreemap>> {
        let file = &entry.data_file;
        if !is_deletion_vector(file) {
            return Err(Error::invalid_argument(format!(
                "'{}' is not a deletion vector",
                file.file_path
            )));
        }
        let location = file.file_path.clone();
        let bad =
            |what: String| Error::invalid_data(format!("deletion vector in '{location}': {what}"));
        let offset = file
            .content_offset
            .and_then(|o| u64::try_from(o).ok())
            .ok_or_else(|| bad(format!("invalid content_offset {:?}", file.content_offset)))?;
        let length = file
            .content_size_in_bytes
            .filter(|l| (12..=i64::from(i32::MAX)).contains(l))
            .ok_or_else(|| {
                bad(format!(
                    "invalid content_size_in_bytes {:?}",
                    file.content_size_in_bytes
                ))
            })? as u64;
        let cell = cell(
            &self.dvs,
            (FileVersion::of(entry).key(&location), offset, length),
        )?;
        let loaded = cell
            .get_or_try_init(|| async {
                let cached = self.cache_key("deletion vector", entry)?;
                if let Some(hit) = cached
                    .as_ref()
                    .and_then(|(c, key)| c.get_deletion_vector(key, offset, length))
                {
                    return Ok(hit);
                }
                let blob = read_blob(&self.file_io, &location, offset, length).await?;
                let positions = Arc::new(deserialize_deletion_vector(&blob, &location)?);
                if let Some((c, key)) = cached {
                    c.insert_deletion_vector(&key, offset, length, Arc::clone(&positions));
                }
                Ok::<_, Error>(positions)
            })
            .await?;
        // checked on every use: the blob may have been decoded for another entry
        if u64::try_from(file.record_count).ok() != Some(loaded.len()) {
            return Err(bad(format!(
                "cardinality {} differs from record_count {} (blob at offset {offset})",
                loaded.len(),
                file.record_count
            )));
        }
        Ok(Arc::clone(loaded))
    }

    /// The positions of `data_file_path` (the data file's **stored** `file_path`) deleted
    /// by `deletes` (as returned by [`super::DeleteFileIndex::for_data_file`]): the union of
    /// its deletion vector and position delete files. Equality delete files in `deletes`
    /// are ignored. Files are loaded concurrently, each once per loader.
    ///
    /// Errors: a deletion vector that references another data file
    /// ([`crate::ErrorKind::InvalidArgument`]), and the load errors above.
    pub async fn deleted_positions(
        &self,
        data_file_path: &str,
        deletes: &[Arc<ManifestEntry>],
    ) -> Result<RoaringTreemap> {
        let position_deletes = deletes
            .iter()
            .filter(|d| d.data_file.content == DataContentType::PositionDeletes);
        let loads = position_deletes.map(|d| async move {
            if is_deletion_vector(&d.data_file) {
                if d.data_file.referenced_data_file.as_deref() != Some(data_file_path) {
                    return Err(Error::invalid_argument(format!(
                        "deletion vector in '{}' references {:?}, not '{data_file_path}'",
                        d.data_file.file_path, d.data_file.referenced_data_file
                    )));
                }
                let dv = self.load_deletion_vector(d).await?;
                Ok((*dv).clone())
            } else {
                let file = self.load_position_delete_file(d).await?;
                Ok(file.positions(data_file_path).cloned().unwrap_or_default())
            }
        });
        let sets = try_join_all(loads).await?;
        Ok(sets
            .into_iter()
            .fold(RoaringTreemap::new(), |acc, s| acc | s))
    }
}

#[cfg(test)]
#[path = "position_delete_tests.rs"]
mod tests;
