//! Building the physical scan of a planned snapshot: one `PartitionedFile` per data
//! file (statistics, row selections, hidden per-file values), DataFusion's Parquet scan
//! per object store, and the delete operators on top (`PositionDeleteExec`,
//! `EqualityDeleteExec`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::config::TableParquetOptions;
use datafusion::common::stats::Precision;
use datafusion::common::{DFSchema, ScalarValue, Statistics};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetRowSelection;
use datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfigBuilder, FileSource, ParquetSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::Expr;
use datafusion::parquet::arrow::RowNumber;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_adapter::PhysicalExprAdapterFactory;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_datasource::compute_all_files_statistics;
use object_store::path::Path as ObjectPath;

use crate::datafusion::canonical_nan::canonical_nan_projection;
use crate::datafusion::column_defaults::initial_defaults;
use crate::datafusion::deferred_files::{DeferredCounts, DeferredFiles, StatisticsInputs};
use crate::datafusion::delete_planning::{
    equality_loader, DeletePlan, EqualityDeleteFile, PlannedFile, PositionDeletePolicy,
    NO_EQUALITY_DELETES,
};
use crate::datafusion::equality_delete_exec::{EqualityDeleteExec, EqualityGroup};
use crate::datafusion::expr_adapter::FieldIdExprAdapterFactory;
use crate::datafusion::file_reader::IcebergParquetReaderFactory;
use crate::datafusion::iceberg_source::{IcebergParquetSource, IcebergScanState};
use crate::datafusion::options::IcefloeOptions;
use crate::datafusion::planned_file::data_file_at;
use crate::datafusion::position_delete_exec::{
    file_index_type, file_index_value, FileDeletes, PositionDeleteExec,
};
use crate::datafusion::statistics::file_statistics;
use crate::datafusion::stats_pruning::prunes_soundly_logical;
use crate::delete::equality_delete_schema;
use crate::error::{Error, Result};
use crate::nan::holds_floats;
use crate::scan::DeferredScan;
use crate::spec::name_mapping::{NameMapping, DEFAULT_NAME_MAPPING_PROPERTY};
use crate::spec::{NestedField, PrimitiveType, Schema, Type};

use super::file_groups::split_into_groups;
use super::hidden::{
    hidden_delete_columns, row_id_columns, Hidden, HiddenLayout, DELETE_FILE_INDEX_COLUMN,
    DELETE_POS_COLUMN,
};
use super::IcebergTableProvider;
use crate::datafusion::expired_reads::ExpiredReadCheck;

impl IcebergTableProvider {
    /// The field-id adapter for this schema: `initial-default`s of columns and nested
    /// fields, required field ids (at any depth), the table's name mapping, and the
    /// columns with the ids of their nested fields (which the scan's schema lacks).
    pub(super) fn expr_adapter_factory(&self) -> Result<FieldIdExprAdapterFactory> {
        let defaults = initial_defaults(&self.schema, &self.arrow_schema)?;
        let mut required = HashSet::new();
        for column in self.schema.columns() {
            collect_required(column, &mut required);
        }
        let name_mapping = match self
            .table
            .metadata()
            .properties
            .get(DEFAULT_NAME_MAPPING_PROPERTY)
        {
            Some(text) => Some(Arc::new(NameMapping::from_json(text)?)),
            None => None,
        };
        Ok(
            FieldIdExprAdapterFactory::new(defaults, required, name_mapping)
                .with_id_columns(&super::read_schema(&self.schema)?),
        )
    }

    /// The physical scan of `deletes.files` (planned files with their deletes):
    /// `projection` of the table's columns, then the `hidden` columns (see
    /// [`HiddenLayout`]), with position deletes as row selections or per batch
    /// ([`PositionDeleteExec`]) and equality deletes by [`EqualityDeleteExec`] on top.
    /// `filters` prune row groups and pages where DataFusion does not push them itself.
    ///
    /// Equality deletes on columns the schema lacks (dropped since) are applied through
    /// [`Self::with_dropped_equality_columns`].
    ///
    /// Errors: a reserved hidden column name used by the table, a bad file location or
    /// size, a filter that cannot be planned.
    pub(super) fn build_scan(
        &self,
        state: &dyn Session,
        deletes: DeletePlan,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        hidden: Hidden,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if let Some(widened) =
            self.with_dropped_equality_columns(&deletes.equality_deletes, hidden)?
        {
            // the provider's columns keep their indices; the appended ones are read only
            // for the deletes
            let all: Vec<usize> = (0..self.arrow_schema.fields().len()).collect();
            let projection = projection.unwrap_or(&all);
            return widened.build_scan(state, deletes, Some(projection), filters, limit, hidden);
        }
        let row_ids = hidden != Hidden::None;
        let layout = HiddenLayout::new(self, hidden);
        if deletes.files.is_empty() {
            let projected_schema = match projection {
                Some(p) => Arc::new(self.arrow_schema.project(p)?),
                None => Arc::clone(&self.arrow_schema),
            };
            let mut fields: Vec<FieldRef> = projected_schema.fields().iter().cloned().collect();
            fields.extend(layout.output_fields());
            return Ok(Arc::new(EmptyExec::new(Arc::new(ArrowSchema::new(fields)))));
        }
        // Fragmented position deletes are applied per batch after decoding (see
        // `position_delete_exec`), except in row-level and metadata-column scans,
        // which read positions for themselves.
        let policy = match state.config_options().extensions.get::<IcefloeOptions>() {
            Some(options) => PositionDeletePolicy::parse(options.position_deletes.as_str())?,
            None => PositionDeletePolicy::Auto,
        };
        let per_batch = !row_ids
            && deletes.files.iter().any(|planned| {
                planned
                    .position
                    .as_ref()
                    .is_some_and(|p| policy.per_batch(p))
            });
        let mut equality = self.equality_scan(
            &deletes.equality_deletes,
            projection,
            layout.file_fields().len(),
        )?;
        if let Some(eq) = &mut equality {
            let indices = layout.scan_indices(self.arrow_schema.fields().len(), 2);
            let first = eq.scan_projection.len();
            eq.output_columns.extend(first..first + indices.len());
            eq.scan_projection.extend(indices);
        }
        // The table columns the scan reads, whose metrics become statistics.
        let columns = self.arrow_schema.fields().len();
        let read_columns: Vec<bool> = match (&equality, projection) {
            (Some(eq), _) => (0..columns)
                .map(|i| eq.scan_projection.contains(&i))
                .collect(),
            (None, Some(p)) => (0..columns).map(|i| p.contains(&i)).collect(),
            (None, None) => vec![true; columns],
        };
        let nan_columns = self.nan_columns(&deletes.files, &read_columns);
        let nan_unsafe = nan_columns.iter().any(|(_, top_level)| *top_level);
        let files = FileLayout {
            layout: &layout,
            equality: equality.is_some(),
            per_batch,
            file_count: deletes.files.len(),
            policy,
            read_columns,
        };
        let mut by_store: BTreeMap<String, Vec<(PartitionedFile, u64)>> = BTreeMap::new();
        let mut recorded = HashMap::new();
        let mut file_deletes: Vec<Option<FileDeletes>> = vec![];
        for planned in deletes.files {
            let (store_url, file, size) =
                self.partitioned_file(planned, &files, &mut file_deletes, &mut recorded)?;
            by_store.entry(store_url).or_default().push((file, size));
        }
        // Without equality deletes the scan is a plain `DataSourceExec`, and DataFusion's
        // physical filter pushdown hands it the `FilterExec` predicate itself; giving it
        // the filters here too would only evaluate them twice. Under `EqualityDeleteExec`
        // nothing is pushed through, so the filters are given here for row-group and page
        // pruning (a filter commutes with row-level deletes), but for those the pruning
        // would answer wrongly (`stats_pruning`).
        let pruning_filters = if equality.is_some() || row_ids {
            filters
        } else {
            &[]
        };
        let pruning_filters = pruning_filters
            .iter()
            .filter(|f| prunes_soundly_logical(f))
            .cloned();
        let predicate = match conjunction(pruning_filters) {
            Some(expr) => {
                let df_schema = DFSchema::try_from(Arc::clone(&self.arrow_schema))?;
                Some(state.create_physical_expr(expr, &df_schema)?)
            }
            None => None,
        };
        let table_schema = self.scan_table_schema(&files)?;
        let (mut scan_projection, mut scan_limit) = match &equality {
            Some(eq) => (Some(eq.scan_projection.clone()), None),
            None if row_ids => {
                let mut p: Vec<usize> = match projection {
                    Some(p) => p.clone(),
                    None => (0..columns).collect(),
                };
                p.extend(layout.scan_indices(columns, 0));
                (Some(p), limit)
            }
            None => (projection.cloned(), limit),
        };
        if per_batch {
            // no LIMIT for the decoder: it would count deleted rows; the scan reads,
            // after everything else, each row's position (the last column: virtual) and
            // its file's index (the last per-file value)
            scan_limit = None;
            let last = table_schema.table_schema().fields().len() - 1;
            let mut p = scan_projection.unwrap_or_else(|| (0..columns).collect());
            p.extend([last, last - 1]);
            scan_projection = Some(p);
        }
        let scan = StoreScan {
            table_schema,
            predicate,
            projection: scan_projection,
            limit: scan_limit,
            nan_unsafe,
            recorded: Arc::new(recorded),
            columns: Arc::new(self.expr_adapter_factory()?),
        };
        let store_count = by_store.len();
        let target_partitions = state.config().target_partitions().div_ceil(store_count);
        let mut plans: Vec<Arc<dyn ExecutionPlan>> = Vec::with_capacity(store_count);
        for (store_url, files) in by_store {
            let groups = split_into_groups(files, target_partitions);
            plans.push(self.store_scan(state, &store_url, groups, &scan, None)?);
        }
        let mut scan: Arc<dyn ExecutionPlan> = if plans.len() == 1 {
            plans.remove(0)
        } else {
            UnionExec::try_new(plans)?
        };
        // below every filter, delete and comparison: one NaN, as Spark has it
        let nan_names: Vec<String> = nan_columns.into_iter().map(|(name, _)| name).collect();
        scan = canonical_nan_projection(scan, &nan_names)?;
        if per_batch {
            let width = scan.schema().fields().len();
            scan = Arc::new(PositionDeleteExec::try_new(
                scan,
                Arc::new(file_deletes),
                width - 2,
                width - 1,
            )?);
        }
        Ok(match equality {
            None => scan,
            Some(eq) => Arc::new(EqualityDeleteExec::try_new(
                Arc::clone(&scan),
                eq.groups,
                equality_loader(&self.table),
                filter_before_deletes(state, filters, &scan.schema())?,
                eq.sequence_column,
                eq.sequence_column + 1,
                eq.output_columns,
            )?),
        })
    }

    /// The read columns holding floats (at any depth) that a file of the scan may hold
    /// NaN in (its `nan_value_counts` for one of the column's float fields is not 0),
    /// by name, each with whether it is a top-level float column. The scan makes their
    /// NaNs one ([`canonical_nan_projection`]: Spark's NaN semantics, whatever NaN a
    /// writer stored).
    ///
    /// For the top-level float columns, DataFusion's row-group and page pruning is also
    /// turned off: Parquet writers leave NaN out of row-group and page min/max (pyarrow,
    /// and so PyIceberg, does not count NaNs in Iceberg metrics either), and that
    /// pruning then drops NaN rows that a filter (or a TopK's dynamic filter) matches:
    /// `NaN > 0` is true in DataFusion and Spark. The manifests' pruning of whole files
    /// accounts for NaN itself.
    fn nan_columns(&self, files: &[PlannedFile], read_columns: &[bool]) -> Vec<(String, bool)> {
        self.float_columns(read_columns, |ids| {
            files.iter().any(|planned| {
                let nans = &planned.task.data_file().nan_value_counts;
                ids.iter().any(|id| nans.get(id) != Some(&0))
            })
        })
    }

    /// The read columns holding floats (at any depth) for which `may_hold_nan` of the ids
    /// of their float fields is true, by name, each with whether it is a top-level float
    /// column (see [`Self::nan_columns`]).
    pub(super) fn float_columns(
        &self,
        read_columns: &[bool],
        may_hold_nan: impl Fn(&[i32]) -> bool,
    ) -> Vec<(String, bool)> {
        let mut out = vec![];
        for ((column, field), read) in self
            .schema
            .columns()
            .iter()
            .zip(self.arrow_schema.fields())
            .zip(read_columns)
        {
            if !*read || !holds_floats(field.data_type()) {
                continue;
            }
            let mut ids = vec![];
            float_field_ids(column, &mut ids);
            if may_hold_nan(&ids) {
                let top_level = matches!(
                    field.data_type(),
                    DataType::Float16 | DataType::Float32 | DataType::Float64
                );
                out.push((field.name().clone(), top_level));
            }
        }
        out
    }

    /// One data file of the scan as DataFusion's `PartitionedFile`, with its store URL
    /// and size in bytes: its hidden per-file values (in the order of
    /// [`Self::scan_table_schema`]'s partition columns), statistics from its manifest
    /// entry, and its position deletes as a row selection, or, per batch, pushed to
    /// `file_deletes` at the file's index. A moved table's file is recorded in
    /// `recorded` (object path → location as stored) for errors naming it.
    ///
    /// Errors: a location that does not resolve, a negative `file_size_in_bytes`, more
    /// than 2^32 files with per-batch deletes, bad statistics.
    fn partitioned_file(
        &self,
        planned: PlannedFile,
        files: &FileLayout<'_>,
        file_deletes: &mut Vec<Option<FileDeletes>>,
        recorded: &mut HashMap<ObjectPath, String>,
    ) -> Result<(String, PartitionedFile, u64)> {
        let io = self.table.file_io();
        let task = &planned.task;
        let resolved = io.resolve_remapped(&task.location, &task.data_file().file_path)?;
        let mut file = data_file_at(resolved.path.clone(), &task.entry)?;
        let size = file.object_meta.size;
        let has_deletes =
            planned.position.is_some() || planned.equality_sequence_number != NO_EQUALITY_DELETES;
        if !io.remaps().is_empty() {
            recorded.insert(resolved.path.clone(), task.data_file().file_path.clone());
        }
        let layout = files.layout;
        let mut partition_values = vec![];
        if files.equality {
            partition_values.extend([
                ScalarValue::Int64(Some(planned.equality_sequence_number)),
                ScalarValue::Int32(Some(planned.scope)),
            ]);
        }
        if layout.row_ids {
            partition_values.push(ScalarValue::Utf8(Some(task.data_file().file_path.clone())));
        }
        if let Some(columns) = &layout.metadata {
            partition_values.push(ScalarValue::Int32(Some(task.entry.spec_id)));
            if columns.partitioned() {
                partition_values.push(columns.partition_value(self.table.metadata(), &task.entry)?);
            }
            if layout.lineage {
                partition_values.extend([
                    ScalarValue::Int64(task.data_file().first_row_id),
                    ScalarValue::Int64(Some(task.entry.data_sequence_number)),
                ]);
            }
        }
        let mut selection = None;
        if let Some(position) = &planned.position {
            if layout.row_ids || !files.policy.per_batch(position) {
                selection = Some(position.selection(&task.data_file().file_path)?);
            }
        }
        if files.per_batch {
            partition_values.push(file_index_value(file_deletes.len(), files.file_count)?);
            file_deletes.push(match (&planned.position, &selection) {
                (Some(position), None) => Some(FileDeletes::new(
                    Arc::clone(&position.deleted),
                    position.live_rows()?,
                )),
                _ => None,
            });
        }
        if !partition_values.is_empty() {
            file = file.with_partition_values(partition_values);
        }
        let spec = self
            .table
            .metadata()
            .partition_spec_by_id(task.entry.spec_id);
        let mut statistics = file_statistics(
            &self.schema,
            &self.arrow_schema,
            spec,
            task.data_file(),
            has_deletes,
            &files.read_columns,
        )?;
        // the stored lineage columns read from the file: nothing known
        for _ in layout.file_fields() {
            statistics
                .column_statistics
                .push(datafusion::common::ColumnStatistics::new_unknown());
        }
        file = file.with_statistics(Arc::new(statistics));
        if let Some(selection) = selection {
            file = file.with_extension(ParquetRowSelection::new(selection));
        }
        Ok((resolved.store_url, file, size))
    }

    /// The scan's table schema: the table's columns and the hidden columns read from
    /// each file, then the per-file values (equality-delete values, the hidden layout's,
    /// then the file index for per-batch deletes), with the row position as a virtual
    /// column for row-level scans and per-batch deletes.
    ///
    /// Errors: a table column named like a hidden column (DataFusion would panic).
    pub(super) fn scan_table_schema(&self, files: &FileLayout<'_>) -> Result<TableSchema> {
        let layout = files.layout;
        let mut partition_cols = match files.equality {
            true => hidden_delete_columns(),
            false => vec![],
        };
        partition_cols.extend(layout.partition_fields());
        let delete_pos = Arc::new(
            Field::new(DELETE_POS_COLUMN, DataType::Int64, false).with_extension_type(RowNumber),
        ) as FieldRef;
        if files.per_batch {
            partition_cols.push(Arc::new(Field::new(
                DELETE_FILE_INDEX_COLUMN,
                file_index_type(files.file_count)?,
                false,
            )));
        }
        let mut hidden_fields = layout.output_fields();
        if files.per_batch {
            hidden_fields.push(Arc::clone(&delete_pos));
        }
        let hidden_names = partition_cols
            .iter()
            .chain(&hidden_fields)
            .map(|f| f.name().as_str());
        for name in hidden_names {
            if self.arrow_schema.field_with_name(name).is_ok() {
                return Err(Error::unsupported(format!(
                    "reading table '{}' with deletes or for a row-level change: its column \
                     '{name}' has a name icefloe reserves for a hidden column",
                    self.table.metadata_location()
                )));
            }
        }
        let file_schema = match layout.file_fields() {
            extra if extra.is_empty() => Arc::clone(&self.arrow_schema),
            extra => {
                let mut fields: Vec<FieldRef> =
                    self.arrow_schema.fields().iter().cloned().collect();
                fields.extend(extra);
                Arc::new(ArrowSchema::new_with_metadata(
                    fields,
                    self.arrow_schema.metadata().clone(),
                ))
            }
        };
        let mut builder = TableSchema::builder(file_schema);
        if layout.row_ids {
            let [_, pos] = row_id_columns();
            builder = builder.with_virtual_columns(vec![pos]);
        } else if files.per_batch {
            builder = builder.with_virtual_columns(vec![delete_pos]);
        }
        Ok(builder.with_table_partition_cols(partition_cols).build())
    }

    /// DataFusion's Parquet scan of one object store's files in `groups`, through
    /// icefloe's reader factory (field-id mapping, file checks, request counts, the
    /// session's footer cache) and wrapped so that it can be sent to another process.
    ///
    /// Errors: an unknown store URL, statistics that do not fit the schema.
    pub(super) fn store_scan(
        &self,
        state: &dyn Session,
        store_url: &str,
        groups: Vec<FileGroup>,
        scan: &StoreScan,
        deferred: Option<(DeferredScan, StatisticsInputs)>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let io = self.table.file_io();
        let url = ObjectStoreUrl::parse(store_url)?;
        // the session's registry gets the plain store; this scan's readers, the one
        // counting its requests (request_metrics)
        let store = io.store(store_url)?;
        state
            .runtime_env()
            .register_object_store(url.as_ref(), io.base_store(store_url)?);
        // the columns the scan reads: projected, or in its predicate
        let file_schema = scan.table_schema.file_schema();
        let mut read: Vec<usize> = match &scan.projection {
            Some(p) => p.clone(),
            None => (0..file_schema.fields().len()).collect(),
        };
        if let Some(p) = &scan.predicate {
            read.extend(
                datafusion::physical_expr::utils::collect_columns(p)
                    .iter()
                    .filter_map(|c| file_schema.index_of(c.name()).ok()),
            );
        }
        let readers = IcebergParquetReaderFactory::new(
            store,
            store_url,
            Arc::clone(&scan.recorded),
            Arc::clone(file_schema),
            Arc::clone(&scan.columns),
            state.runtime_env().cache_manager.get_file_metadata_cache(),
        )
        .with_read_columns(&read)
        .with_checked_files(Arc::clone(&self.caches.checked_files));
        let mut global = state.config_options().execution.parquet.clone();
        // INT96 columns are decoded in the unit of the table's column, by the footer's
        // Arrow schema hint the readers set (`int96_units`): not by the session's option,
        // which would decode every INT96 column in one unit
        global.coerce_int96 = None;
        global.coerce_int96_tz = None;
        if scan.nan_unsafe {
            global.pruning = false;
            global.enable_page_index = false;
        }
        let mut source = ParquetSource::new(scan.table_schema.clone()).with_table_parquet_options(
            TableParquetOptions {
                global,
                ..Default::default()
            },
        );
        // The session's `metadata_size_hint` (DataFusion's default: 512 KiB), as
        // `ListingTable` reads footers: one GET of the file's tail holds the footer (and
        // the page index) unless they are larger, instead of two (the 8-byte tail, then
        // the metadata). A file shorter than its manifest's size makes parquet's push
        // decoder panic on the short tail; the reader catches that and names the file and
        // both sizes (`file_reader::diagnose`).
        let hint = state.config_options().execution.parquet.metadata_size_hint;
        if let Some(hint) = hint {
            source = source.with_metadata_size_hint(hint);
        }
        source = source.with_parquet_file_reader_factory(Arc::new(readers));
        if let Some(p) = &scan.predicate {
            source = source.with_predicate(Arc::clone(p));
        }
        let (groups, statistics, deferred) = match deferred {
            // Row counts from the manifests (exact for files without deletes) let
            // DataFusion answer e.g. COUNT(*) without opening data files.
            None => {
                let (groups, statistics) = compute_all_files_statistics(
                    groups,
                    Arc::clone(scan.table_schema.table_schema()),
                    true,
                    false,
                )?;
                (groups, statistics, None)
            }
            // no data file is known yet: the manifest list's row count, inexact
            Some((deferred, inputs)) => {
                let mut statistics = Statistics::new_unknown(scan.table_schema.table_schema());
                let rows = usize::try_from(deferred.live_rows()).unwrap_or(usize::MAX);
                statistics.num_rows = Precision::Inexact(rows);
                let counts =
                    DeferredCounts::register(FileSource::metrics(&source), deferred.metrics());
                let files = DeferredFiles::new(deferred, io.clone(), store_url, counts, inputs);
                (groups, statistics, Some(Arc::new(files)))
            }
        };
        // wrapped so that the whole scan, deletes included, can be sent to another
        // process (see `iceberg_source`)
        let state = Arc::new(IcebergScanState {
            file_io: io.clone(),
            store_url: store_url.to_string(),
            recorded: Arc::clone(&scan.recorded),
            columns: Arc::clone(&scan.columns),
            deferred,
            expired_reads: ExpiredReadCheck::for_provider(self),
        });
        let source = IcebergParquetSource::new(Arc::new(source), state);
        let adapter: Arc<dyn PhysicalExprAdapterFactory> = Arc::clone(&scan.columns) as _;
        let config = FileScanConfigBuilder::new(url, Arc::new(source))
            .with_file_groups(groups)
            .with_statistics(statistics)
            .with_projection_indices(scan.projection.clone())?
            .with_limit(scan.limit)
            .with_expr_adapter(Some(adapter))
            .build();
        Ok(DataSourceExec::from_data_source(config))
    }

    /// How the scan reads for equality deletes: the user's columns, then the equality
    /// columns the user did not ask for, then the two hidden per-file columns.
    fn equality_scan(
        &self,
        files: &[EqualityDeleteFile],
        projection: Option<&Vec<usize>>,
        file_extras: usize,
    ) -> Result<Option<EqualityScan>> {
        if files.is_empty() {
            return Ok(None);
        }
        let mut scan_projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.arrow_schema.fields().len()).collect(),
        };
        let output_columns: Vec<usize> = (0..scan_projection.len()).collect();
        let metadata = self.table.metadata();
        let schemas: Vec<&Schema> = std::iter::once(self.schema.as_ref())
            .chain(metadata.schemas_newest_first())
            .collect();
        let mut groups: Vec<(Vec<i32>, EqualityGroup)> = vec![];
        for file in files {
            let ids = &file.entry.data_file.equality_ids;
            if let Some((_, g)) = groups.iter_mut().find(|(g_ids, _)| g_ids == ids) {
                g.files.push(file.clone());
                continue;
            }
            let mut input_columns = Vec::with_capacity(ids.len());
            let mut key_types = Vec::with_capacity(ids.len());
            for id in ids {
                let column = self.schema.columns().iter().position(|c| c.id == *id).ok_or_else(|| {
                    Error::unsupported(format!(
                        "equality deletes on field id {id} ('{}'), which is not a top-level column of the \
                         schema being read",
                        file.entry.data_file.file_path
                    ))
                })?;
                let at = match scan_projection.iter().position(|c| *c == column) {
                    Some(at) => at,
                    None => {
                        scan_projection.push(column);
                        scan_projection.len() - 1
                    }
                };
                input_columns.push(at);
                key_types.push(self.arrow_schema.field(column).data_type().clone());
            }
            // Keys in the types the scan returns the columns in (`Utf8View` strings), so
            // delete keys are cast once when loaded and data batches are never cast.
            let key_schema = equality_delete_schema(&schemas, ids)?;
            let key_schema = Arc::new(ArrowSchema::new(
                key_schema
                    .fields()
                    .iter()
                    .zip(key_types)
                    .map(|(f, t)| f.as_ref().clone().with_data_type(t))
                    .collect::<Vec<_>>(),
            ));
            groups.push((
                ids.clone(),
                EqualityGroup {
                    key_schema,
                    input_columns,
                    files: vec![file.clone()],
                },
            ));
        }
        let sequence_column = scan_projection.len();
        // the hidden delete columns come after the file's columns (the table's, then
        // `file_extras` more)
        let hidden = self.arrow_schema.fields().len() + file_extras;
        scan_projection.extend([hidden, hidden + 1]);
        Ok(Some(EqualityScan {
            scan_projection,
            output_columns,
            sequence_column,
            groups: groups.into_iter().map(|(_, g)| g).collect(),
        }))
    }
}

/// What the data files of one scan carry besides their locations (see
/// `IcebergTableProvider::partitioned_file`).
pub(super) struct FileLayout<'a> {
    /// The scan's hidden columns.
    pub(super) layout: &'a HiddenLayout,
    /// Equality deletes apply: each file's two hidden values for them come first.
    pub(super) equality: bool,
    /// Some file's position deletes are applied per batch: each file has an index.
    pub(super) per_batch: bool,
    /// How many data files the scan reads (the file index's type depends on it).
    pub(super) file_count: usize,
    /// The session's position delete policy.
    pub(super) policy: PositionDeletePolicy,
    /// Per table column, whether the scan reads it (its metrics become statistics).
    pub(super) read_columns: Vec<bool>,
}

/// What the Parquet scans of one table scan share, one per object store.
pub(super) struct StoreScan {
    pub(super) table_schema: TableSchema,
    /// The pruning predicate given to the Parquet source.
    pub(super) predicate: Option<Arc<dyn PhysicalExpr>>,
    pub(super) projection: Option<Vec<usize>>,
    pub(super) limit: Option<usize>,
    /// Row-group and page pruning off (see `may_read_nan`).
    pub(super) nan_unsafe: bool,
    /// Object path → location as recorded, for a moved table's errors.
    pub(super) recorded: Arc<HashMap<ObjectPath, String>>,
    pub(super) columns: Arc<FieldIdExprAdapterFactory>,
}

/// The ids of `field` and of the fields nested in it that are required.
fn collect_required(field: &NestedField, out: &mut HashSet<i32>) {
    if field.required {
        out.insert(field.id);
    }
    match field.field_type.as_ref() {
        Type::Struct(s) => s.fields.iter().for_each(|f| collect_required(f, out)),
        Type::List(l) => collect_required(&l.element_field, out),
        Type::Map(m) => {
            collect_required(&m.key_field, out);
            collect_required(&m.value_field, out);
        }
        Type::Primitive(_) => {}
    }
}

/// The scan layout for equality deletes (see `equality_scan`).
struct EqualityScan {
    scan_projection: Vec<usize>,
    output_columns: Vec<usize>,
    sequence_column: usize,
    groups: Vec<EqualityGroup>,
}

/// The predicate `EqualityDeleteExec` evaluates before probing, so that only rows the
/// query keeps are probed: the `filters` on columns the scan returns (`schema`). A filter
/// commutes with row-level deletes (a row is returned iff it matches and is not
/// deleted); DataFusion keeps its own `FilterExec` above for the Inexact filters. The
/// filters left out are Exact identity-partition ones, already decided by file pruning.
fn filter_before_deletes(
    state: &dyn Session,
    filters: &[Expr],
    schema: &SchemaRef,
) -> Result<Option<Arc<dyn PhysicalExpr>>> {
    let usable = filters.iter().filter(|f| {
        f.column_refs()
            .iter()
            .all(|c| schema.field_with_name(&c.name).is_ok())
    });
    let Some(expr) = conjunction(usable.cloned()) else {
        return Ok(None);
    };
    let df_schema = DFSchema::try_from(Arc::clone(schema))?;
    Ok(Some(state.create_physical_expr(expr, &df_schema)?))
}

/// The ids of the float and double fields in `field`, itself included, at any depth.
fn float_field_ids(field: &NestedField, out: &mut Vec<i32>) {
    match field.field_type.as_ref() {
        Type::Primitive(PrimitiveType::Float | PrimitiveType::Double) => out.push(field.id),
        Type::Primitive(_) => {}
        Type::Struct(s) => s.fields.iter().for_each(|f| float_field_ids(f, out)),
        Type::List(l) => float_field_ids(&l.element_field, out),
        Type::Map(m) => {
            float_field_ids(&m.key_field, out);
            float_field_ids(&m.value_field, out);
        }
    }
}
