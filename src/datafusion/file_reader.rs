//! The Parquet reader under an Iceberg scan: DataFusion's own reader, with each data file
//! checked against what the manifest and the table's schema say before it is decoded.
//!
//! [`IcebergParquetReaderFactory`] wraps DataFusion's `CachedParquetFileReaderFactory`
//! (set on the scan's `ParquetSource`), which keeps each file's decoded footer (and page
//! index, once loaded) in the session's file-metadata cache (`RuntimeEnv` →
//! `CacheManager::get_file_metadata_cache`, the one DataFusion's own Parquet tables
//! use, bounded by `datafusion.runtime.metadata_cache_limit`): later scans of the same
//! files in the session read no footer (issue 18, item 6). Entries are keyed by object
//! path and checked against the size recorded in the manifest and the `last_modified`
//! the scan derives from the manifest entry's version of the file (Iceberg data files
//! are never rewritten in place, but a path may be removed and re-added with other
//! contents: that is another version, whose footer is read again; see
//! [`crate::scan::file_version`]). Its readers
//! - name the data file in every I/O error (its location as the manifest records it,
//!   and where it was read from when the table was moved);
//! - when the footer cannot be read, say why: the file is missing, its size differs from
//!   the manifest's `file_size_in_bytes` ("is 812 bytes, the manifest says 1134"), its
//!   footer length field is beyond the file (checked before DataFusion's footer decoder
//!   sees it, [`FooterCheckedStore`]: the decoder would panic), or it is not Parquet;
//! - check that every column chunk the footer describes lies inside the file (a corrupt
//!   footer's negative offsets would panic in the `parquet` crate, see
//!   [`crate::io::parquet_footer`]);
//! - check each column's stored type against the table's type, matching columns by field
//!   id (or by the table's name mapping for files without ids): only the same type or a
//!   promotion the spec allows (spec: "Schema Evolution": int→long, float→double, decimal
//!   precision widening, v3 date→timestamp) is read; anything else fails naming the
//!   file, the column and both types, where DataFusion's casts would read `4.7` stored in
//!   a `double` file as the `int` 4 (issue 16, item 4);
//! - drop the deprecated min/max statistics of columns not in signed order (old Hive and
//!   Spark files' strings) before DataFusion prunes row groups by them
//!   ([`crate::io::parquet_statistics`]).
//!
//! A file that passed these checks is recorded in the session's [`CheckedFiles`] (when
//! the scan has one, [`IcebergParquetReaderFactory::with_checked_files`]) with what it
//! was checked against; a later scan of the same version of the file under the same
//! table schema and name mapping skips them (see [`crate::scan::checked_files`]).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::common::Result as DFResult;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::parquet::arrow::parquet_to_arrow_schema;
use datafusion::parquet::errors::ParquetError;
use datafusion::parquet::file::metadata::ParquetMetaData;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::future::BoxFuture;
use futures::FutureExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use super::expr_adapter::FieldIdExprAdapterFactory;
use super::int96_units::{
    check_nanosecond_range, has_int96, nanosecond_leaves, with_int96_units, NanosecondColumns,
};
use super::scan_errors::Locations;
use crate::error::Error;
use crate::io::parquet_footer::column_chunk_out_of_range;
use crate::io::parquet_statistics::without_untrusted_min_max;
use crate::io::FooterCheckedStore;
use crate::scan::checked_files::{CheckContext, CheckedFile, CheckedFiles};
use crate::spec::arrow::arrow_field_id;
use crate::spec::arrow_compat::check_field;

/// Creates the readers of one scan's data files on one object store.
#[derive(Debug)]
pub struct IcebergParquetReaderFactory {
    store: Arc<dyn ObjectStore>,
    /// The session's footer cache (see the module docs).
    metadata_cache: Arc<FileMetadataCache>,
    /// How locations are shown (the store's URL; for moved tables, the locations the
    /// manifests record).
    locations: Locations,
    /// The table schema the scan reads (Arrow, columns' field ids in the field metadata).
    table_schema: SchemaRef,
    /// For the table's name mapping (files without field ids) and the ids of nested
    /// fields.
    columns: Arc<FieldIdExprAdapterFactory>,
    /// Field ids of the table columns the scan reads (all when `None`): only their INT96
    /// values are checked against the nanosecond range.
    read_ids: Option<Arc<HashSet<i32>>>,
    /// The session's files known to pass the checks, the number of this scan's
    /// [`CheckContext`] in it, and the store's URL as the files' keys hold it.
    checked_files: Option<(Arc<CheckedFiles>, u64, Arc<str>)>,
}

impl IcebergParquetReaderFactory {
    /// This factory for a scan reading only the columns at `indices` of its table
    /// schema (indices past its columns, partition columns, are ignored).
    pub fn with_read_columns(mut self, indices: &[usize]) -> Self {
        let fields = self.table_schema.fields();
        self.read_ids = Some(Arc::new(
            indices
                .iter()
                .filter_map(|&i| fields.get(i).and_then(|f| arrow_field_id(f)))
                .collect(),
        ));
        self
    }

    /// This factory skipping the checks of files `cache` holds as passed under the same
    /// table schema, nested field ids and name mapping, and recording there the files
    /// that pass (see the module docs).
    pub fn with_checked_files(mut self, cache: Arc<CheckedFiles>) -> Self {
        let context = CheckContext {
            table_schema: self.table_schema.as_ref().clone(),
            id_columns: self.columns.id_columns().fields().to_vec(),
            name_mapping: self.columns.name_mapping().map(|m| m.as_ref().clone()),
        };
        let store_url = Arc::from(self.locations.store_url.as_str());
        self.checked_files = cache.context(context).map(|n| (cache, n, store_url));
        self
    }

    /// A factory for files in `store` (whose URL is `store_url`), read as `table_schema`
    /// with the column mapping of `columns`; `recorded` maps object paths of a moved
    /// table to the locations its manifests record. Footers are kept in
    /// `metadata_cache` (the session's, see the module docs).
    pub fn new(
        store: Arc<dyn ObjectStore>,
        store_url: &str,
        recorded: Arc<HashMap<Path, String>>,
        table_schema: SchemaRef,
        columns: Arc<FieldIdExprAdapterFactory>,
        metadata_cache: Arc<FileMetadataCache>,
    ) -> Self {
        Self {
            store,
            metadata_cache,
            locations: Locations {
                store_url: store_url.to_string(),
                recorded,
            },
            table_schema,
            columns,
            read_ids: None,
            checked_files: None,
        }
    }
}

impl ParquetFileReaderFactory for IcebergParquetReaderFactory {
    fn create_reader(
        &self,
        partition_index: usize,
        partitioned_file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> DFResult<Box<dyn AsyncFileReader + Send>> {
        let path = partitioned_file.object_meta.location.clone();
        let manifest_size = partitioned_file.object_meta.size;
        // the file's version as the scan hands it (`planned_file::data_file_at`); any
        // instant a `DateTime` holds that has no nanosecond count is keyed as 0
        let version = partitioned_file
            .object_meta
            .last_modified
            .timestamp_nanos_opt()
            .unwrap_or(0);
        let checked_files = self
            .checked_files
            .as_ref()
            .map(|(cache, context, store_url)| {
                let key = CheckedFile {
                    context: *context,
                    store_url: Arc::clone(store_url),
                    path: path.to_string(),
                    size: manifest_size,
                    version,
                };
                (Arc::clone(cache), key)
            });
        // the footer DataFusion reads for the file is checked on its way to the decoder
        let footer_store = Arc::new(FooterCheckedStore::new(
            Arc::clone(&self.store),
            [(path.clone(), manifest_size)],
        ));
        let inner = CachedParquetFileReaderFactory::new(
            Arc::clone(&footer_store) as Arc<dyn ObjectStore>,
            Arc::clone(&self.metadata_cache),
        )
        .create_reader(
            partition_index,
            partitioned_file,
            metadata_size_hint,
            metrics,
        )?;
        Ok(Box::new(IcebergFileReader {
            inner,
            footer_store,
            store: Arc::clone(&self.store),
            described: self.locations.describe(&path),
            path,
            manifest_size,
            table_schema: Arc::clone(&self.table_schema),
            columns: Arc::clone(&self.columns),
            read_ids: self.read_ids.clone(),
            checked: false,
            int96: None,
            checked_files,
            trusted: false,
        }))
    }
}

/// One data file's reader (see the module docs).
struct IcebergFileReader {
    inner: Box<dyn AsyncFileReader + Send>,
    /// The store `inner` reads through, which checks the file's footer length.
    footer_store: Arc<FooterCheckedStore>,
    store: Arc<dyn ObjectStore>,
    path: Path,
    /// The location as shown in errors, quoted.
    described: String,
    /// `file_size_in_bytes` from the manifest (bytes).
    manifest_size: u64,
    table_schema: SchemaRef,
    columns: Arc<FieldIdExprAdapterFactory>,
    /// See [`IcebergParquetReaderFactory::with_read_columns`].
    read_ids: Option<Arc<HashSet<i32>>>,
    /// Whether the column types were checked already (the footer is read more than once
    /// when the page index is loaded later).
    checked: bool,
    /// Once checked: the file's Arrow schema and its leaf columns the table reads as
    /// nanosecond timestamps (the unit INT96 columns are decoded in, see
    /// [`super::int96_units`]).
    int96: Option<(Schema, NanosecondColumns)>,
    /// The session's files known to pass the checks, and this file's key there.
    checked_files: Option<(Arc<CheckedFiles>, CheckedFile)>,
    /// Whether the file's footer is known to need no change: it passed the checks in an
    /// earlier scan ([`CheckedFiles`]), so it has no INT96 column and every min/max of it
    /// is trusted.
    trusted: bool,
}

/// A parquet error carrying our own (whose message is shown without a second
/// "Parquet error:" prefix by [`Error`]'s conversions).
fn external(e: Error) -> ParquetError {
    ParquetError::External(Box::new(e))
}

impl IcebergFileReader {
    /// `bytes` read for `range` hold the whole range: a store may return fewer bytes for
    /// a range past the end of a file shorter than the manifest says, which the `parquet`
    /// crate would take for a whole range (it asserts, and panics, on the length).
    fn check_length(&self, range: &Range<u64>, bytes: &Bytes) -> Result<(), ParquetError> {
        let wanted = range.end.saturating_sub(range.start);
        if bytes.len() as u64 == wanted {
            return Ok(());
        }
        Err(external(Error::invalid_data(format!(
            "data file {}: reading bytes {}..{} returned {} bytes: the file is shorter than \
             the manifest's file_size_in_bytes ({}) says (truncated?)",
            self.described,
            range.start,
            range.end,
            bytes.len(),
            self.manifest_size
        ))))
    }

    /// The file's columns against the table's types (see the module docs); the file's
    /// Arrow schema and its leaf columns read as nanosecond timestamps of the table.
    fn check_types(
        &self,
        metadata: &ParquetMetaData,
    ) -> Result<(Schema, NanosecondColumns), ParquetError> {
        let file_metadata = metadata.file_metadata();
        let physical = parquet_to_arrow_schema(
            file_metadata.schema_descr(),
            file_metadata.key_value_metadata(),
        )
        .map_err(|e| {
            external(Error::invalid_data(format!(
                "data file {}: its Parquet schema cannot be read: {e}",
                self.described
            )))
        })?;
        let by_id = self.columns.file_columns_by_id(&physical).map_err(|e| {
            external(Error::unsupported(format!(
                "data file {}: {e}",
                self.described
            )))
        })?;
        let mut table_columns = HashMap::new();
        for table_field in self.table_schema.fields() {
            let Some(id) = arrow_field_id(table_field) else {
                continue;
            };
            if let Some(file_field) = by_id.get(&id) {
                // nested fields matched by their ids
                let table_field = self.columns.with_nested_ids(table_field);
                let shown = super::metadata_columns::shown_name(table_field.name());
                check_field(&table_field, file_field, shown).map_err(|m| {
                    external(Error::invalid_data(format!(
                        "data file {}: {m}",
                        self.described
                    )))
                })?;
                if self.read_ids.as_ref().is_none_or(|r| r.contains(&id)) {
                    table_columns.insert(id, table_field);
                }
            }
        }
        // the file's columns in file order, annotated with their (mapped) ids
        let annotated: Vec<Field> = physical
            .fields()
            .iter()
            .map(|f| {
                by_id
                    .values()
                    .find(|m| m.name() == f.name())
                    .map(|m| m.as_ref().clone())
                    .unwrap_or_else(|| f.as_ref().clone())
            })
            .collect();
        let nanos = nanosecond_leaves(&annotated, &table_columns);
        Ok((physical, nanos))
    }
}

impl AsyncFileReader for IcebergFileReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, Result<Bytes, ParquetError>> {
        async move {
            let (start, end) = (range.start, range.end);
            let bytes = self.inner.get_bytes(range.clone()).await.map_err(|e| {
                external(Error::invalid_data(format!(
                    "reading bytes {start}..{end} of data file {}: {e}",
                    self.described
                )))
            })?;
            self.check_length(&range, &bytes)?;
            Ok(bytes)
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, Result<Vec<Bytes>, ParquetError>> {
        async move {
            let all = self
                .inner
                .get_byte_ranges(ranges.clone())
                .await
                .map_err(|e| {
                    external(Error::invalid_data(format!(
                        "reading data file {}: {e}",
                        self.described
                    )))
                })?;
            for (range, bytes) in ranges.iter().zip(&all) {
                self.check_length(range, bytes)?;
            }
            Ok(all)
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, Result<Arc<ParquetMetaData>, ParquetError>> {
        async move {
            // a footer length beyond the file is refused before the decoder sees it
            // (`footer_store`); any other panic of the decoder on a corrupt footer is
            // caught: it is a footer that cannot be read like any other
            let read = std::panic::AssertUnwindSafe(self.inner.get_metadata(options))
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| {
                    Err(ParquetError::General(format!(
                        "the footer decoder failed on it ({})",
                        crate::error::panic_message(panic.as_ref())
                    )))
                });
            let metadata = match read {
                Ok(m) => m,
                Err(e) => {
                    let cause = match self.footer_store.corrupt_footer() {
                        Some(corrupt) => corrupt.cause.to_string(),
                        None => super::scan_errors::parquet_cause(&e),
                    };
                    let store = Arc::clone(&self.store);
                    let path = self.path.clone();
                    let file = self.described.clone();
                    return Err(diagnose(store, path, file, self.manifest_size, cause).await);
                }
            };
            if !self.checked
                && self
                    .checked_files
                    .as_ref()
                    .is_some_and(|(c, k)| c.passed(k))
            {
                self.checked = true;
                self.trusted = true;
            }
            if self.trusted {
                return Ok(metadata);
            }
            if !self.checked {
                if let Some(what) = column_chunk_out_of_range(&metadata, self.manifest_size) {
                    return Err(external(Error::invalid_data(format!(
                        "data file {}: {what}",
                        self.described
                    ))));
                }
                let (physical, nanos) = self.check_types(&metadata)?;
                check_nanosecond_range(
                    Arc::clone(&self.store),
                    self.path.clone(),
                    &metadata,
                    &nanos,
                    &self.described,
                )
                .await
                .map_err(external)?;
                self.int96 = Some((physical, nanos));
                self.checked = true;
            }
            // deprecated min/max of a column not in signed order prune nothing
            let metadata = match without_untrusted_min_max(&metadata) {
                Ok(Some(trusted)) => Arc::new(trusted),
                Ok(None) if !has_int96(&metadata) => {
                    // passed, and nothing to change in its footer: a later scan with
                    // the same context needs none of these checks
                    self.trusted = true;
                    if let Some((cache, key)) = self.checked_files.take() {
                        cache.record(key);
                    }
                    return Ok(metadata);
                }
                Ok(None) => metadata,
                Err(e) => {
                    return Err(external(Error::invalid_data(format!(
                        "data file {}: its row-group statistics cannot be read: {e}",
                        self.described
                    ))))
                }
            };
            // INT96 columns decoded in the unit of the table's column
            let Some((physical, nanos)) = &self.int96 else {
                return Ok(metadata);
            };
            match with_int96_units(&metadata, physical, nanos) {
                Ok(Some(m)) => Ok(Arc::new(m)),
                Ok(None) => Ok(metadata),
                Err(e) => Err(external(Error::invalid_data(format!(
                    "data file {}: {e}",
                    self.described
                )))),
            }
        }
        .boxed()
    }
}

/// Why the footer of the data file at `path` (shown as `file`) could not be read, as
/// well as the store can tell; `cause` is what the footer's reader said.
async fn diagnose(
    store: Arc<dyn ObjectStore>,
    path: Path,
    file: String,
    manifest_size: u64,
    cause: String,
) -> ParquetError {
    let message = match store.head(&path).await {
        Err(object_store::Error::NotFound { .. }) => format!("data file {file} does not exist"),
        Ok(meta) if meta.size != manifest_size => format!(
            "data file {file} is {} bytes, the manifest says {manifest_size} \
             (file_size_in_bytes): the file was replaced or truncated",
            meta.size
        ),
        Ok(_) => format!("data file {file} is not a readable Parquet file: {cause}"),
        Err(e) => format!("data file {file} cannot be read: {e}"),
    };
    external(Error::invalid_data(message))
}
