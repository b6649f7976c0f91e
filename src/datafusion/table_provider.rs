//! [`IcebergTableProvider`]: an Iceberg snapshot as a DataFusion `TableProvider`.
//!
//! `scan()` plans the snapshot's files at planning time (so `EXPLAIN` lists them), splits
//! them into up to `target_partitions` file groups balanced by size, and returns
//! DataFusion's own Parquet scan (`DataSourceExec` over `ParquetSource`) with the
//! filters as its pruning predicate and [`FieldIdExprAdapterFactory`] mapping columns by
//! field id. Each file carries statistics from its manifest entry (see
//! [`statistics`](super::statistics)) for DataFusion's optimizer; top-level strings and
//! binaries are `Utf8View`/`BinaryView` unless
//! [`with_schema_force_view_types(false)`](IcebergTableProvider::with_schema_force_view_types).
//! With equality deletes the scan sits under [`EqualityDeleteExec`], which applies the
//! pushed-down filters before probing the delete keys.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::config::TableParquetOptions;
use datafusion::common::{DFSchema, DFSchemaRef, Result as DFResult, ScalarValue};
use datafusion::datasource::file_format::parquet::transform_schema_to_view;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::ParquetRowSelection;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::dml::MergeIntoClause;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::parquet::arrow::RowNumber;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_adapter::PhysicalExprAdapterFactory;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_datasource::compute_all_files_statistics;
use object_store::ObjectMeta;

use super::column_defaults::{initial_defaults, write_defaults};
use super::data_file_writer_exec::IcebergDataFileWriterExec;
use super::delete_planning::{
    equality_loader, plan_deletes, DeleteMetrics, DeletePlan, EqualityDeleteFile,
    PositionDeletePolicy, NO_EQUALITY_DELETES,
};
use super::equality_delete_exec::{EqualityDeleteExec, EqualityGroup};
use super::expr_adapter::FieldIdExprAdapterFactory;
use super::file_reader::IcebergParquetReaderFactory;
use super::filter::{exact_by_identity_partitions, FilterConverter};
use super::iceberg_source::{IcebergParquetSource, IcebergScanState};
use super::insert::{IcebergDataSink, WriteTarget};
use super::metadata_columns::{
    stored_lineage_fields, MetadataColumn, MetadataColumns, FIRST_ROW_ID_COLUMN, PARTITION_COLUMN,
    SEQUENCE_NUMBER_COLUMN, SPEC_ID_COLUMN, STORED_ROW_ID_COLUMN, STORED_SEQUENCE_NUMBER_COLUMN,
};
use super::metrics::{attach_counters, attach_scan_metrics};
use super::options::IcefloeOptions;
use super::position_delete_exec::{FileDeletes, PositionDeleteExec};
use super::request_metrics::StoreRequestMetrics;
use super::row_count::rows_without_columns;
use super::statistics::{file_statistics, untruncated_bounds};
use super::write_exec::IcebergWriteExec;
use crate::delete::equality_delete_schema;
use crate::error::{Error, Result};
use crate::io::RequestCounts;
use crate::scan::cache::SessionCaches;
use crate::scan::{ScanMetrics, TableScan};
use crate::spec::arrow::{nullable_under_nullable_structs, schema_to_arrow};
use crate::spec::name_mapping::{NameMapping, DEFAULT_NAME_MAPPING_PROPERTY};
use crate::spec::{Schema, Snapshot};
use crate::table::Table;
use datafusion::logical_expr::dml::InsertOp;

/// The unit INT96 timestamps are read in (DataFusion's `coerce_int96` Parquet option),
/// set on every scan whatever the session says (and `coerce_int96_tz` unset). INT96 (Impala/Hive/old Spark files,
/// migrated with `add_files`) holds nanoseconds of a Julian day; read as Arrow nanoseconds
/// in an `i64` a year outside 1677..2262 wraps around (3332 read as 2163). Iceberg
/// timestamps are microseconds (spec: "Primitive Types"), whose range covers any INT96
/// value Spark or Hive writes, so INT96 is decoded to microseconds directly.
pub const INT96_READ_UNIT: &str = "us";

/// An Iceberg table (one snapshot of it) as a DataFusion table.
///
/// The schema is the one the snapshot was written with; by default the current snapshot
/// and current schema are used, [`with_snapshot_id`](Self::with_snapshot_id) and
/// [`with_ref`](Self::with_ref) choose another snapshot.
#[derive(Debug, Clone)]
pub struct IcebergTableProvider {
    table: Table,
    snapshot: Option<Snapshot>,
    schema: Arc<Schema>,
    arrow_schema: SchemaRef,
    /// Whether top-level strings and binaries are exposed as `Utf8View`/`BinaryView`.
    view_types: bool,
    /// The planning counts of the latest `scan()` (shared by clones).
    last_scan_metrics: Arc<Mutex<Option<ScanMetrics>>>,
    /// The delete planning counts of the latest `scan()` (shared by clones).
    last_delete_metrics: Arc<Mutex<Option<DeleteMetrics>>>,
    /// Decoded manifest lists, manifests and position deletes, reused by every scan of
    /// this provider and its clones (bounded; see [`SessionCaches`]).
    caches: SessionCaches,
    /// Where `INSERT` commits; `None`: the table is read-only here (opened by location,
    /// or read at a snapshot, tag or branch).
    write_target: Option<WriteTarget>,
    /// The branch the table was opened at (`"t@dev"`), where `INSERT INTO` commits.
    branch: Option<String>,
    /// With metadata columns (see [`Self::with_metadata_columns`]): the columns, and
    /// the schema with them appended.
    metadata_columns: Option<(Arc<MetadataColumns>, SchemaRef)>,
    /// Top-level column name → its v3 `write-default`, for `INSERT` statements that do
    /// not list the column ([`TableProvider::get_column_default`]).
    write_defaults: Arc<HashMap<String, Expr>>,
}

impl IcebergTableProvider {
    /// Open the table at `location` (metadata file or table directory) at its current
    /// snapshot.
    pub async fn open(location: &str) -> Result<Self> {
        Self::try_new(Table::open(location).await?)
    }

    /// The table at its current snapshot (or empty, with the current schema, when it
    /// has none).
    ///
    /// Errors: [`crate::ErrorKind::Unsupported`] when the schema has a type icefloe
    /// cannot read yet (naming the column).
    pub fn try_new(table: Table) -> Result<Self> {
        let snapshot = table.metadata().current_snapshot().cloned();
        let schema = table.metadata().current_schema().clone();
        Self::at_snapshot(table, snapshot, schema, true)
    }

    /// `table` read at `snapshot` with `schema` (how every constructor ends; the
    /// Ballista logical codec rebuilds a provider from its identity with it).
    pub(super) fn at_snapshot(
        table: Table,
        snapshot: Option<Snapshot>,
        schema: Schema,
        view_types: bool,
    ) -> Result<Self> {
        let arrow_schema = Arc::new(arrow_schema(&schema, view_types)?);
        let write_defaults = Arc::new(write_defaults(&schema, &arrow_schema)?);
        Ok(Self {
            table,
            snapshot,
            schema: Arc::new(schema),
            arrow_schema,
            view_types,
            last_scan_metrics: Arc::default(),
            last_delete_metrics: Arc::default(),
            caches: SessionCaches::default(),
            write_target: None,
            branch: None,
            metadata_columns: None,
            write_defaults,
        })
    }

    /// A read-only view of the same table whose schema appends the metadata columns
    /// (`_file`, `_pos`, `_spec_id`, `_partition`, `_deleted`, and on v3 tables
    /// `_row_id` and `_last_updated_sequence_number`; see
    /// [`metadata_columns`](super::metadata_columns) for their values). Every write
    /// through it is an [`crate::ErrorKind::Unsupported`] error.
    pub fn with_metadata_columns(mut self) -> Self {
        self.set_metadata_columns();
        self.write_target = None;
        self
    }

    fn set_metadata_columns(&mut self) {
        let columns = MetadataColumns::new(self.table.metadata(), &self.arrow_schema);
        let mut fields: Vec<FieldRef> = self.arrow_schema.fields().iter().cloned().collect();
        fields.extend(columns.columns.iter().map(|(_, f)| Arc::clone(f)));
        let schema = Arc::new(ArrowSchema::new_with_metadata(
            fields,
            self.arrow_schema.metadata().clone(),
        ));
        self.metadata_columns = Some((Arc::new(columns), schema));
    }

    /// The names of the metadata columns this view appends (none unless made by
    /// [`Self::with_metadata_columns`]).
    pub fn metadata_column_names(&self) -> Vec<&str> {
        match &self.metadata_columns {
            Some((_, schema)) => schema.fields()[self.arrow_schema.fields().len()..]
                .iter()
                .map(|f| f.name().as_str())
                .collect(),
            None => vec![],
        }
    }

    /// Whether this is a view with metadata columns (read-only).
    pub fn has_metadata_columns(&self) -> bool {
        self.metadata_columns.is_some()
    }

    /// Let `INSERT INTO` / `INSERT OVERWRITE` write to this table, committing to
    /// `target` (the catalog the table was loaded from).
    pub fn with_write_target(mut self, target: WriteTarget) -> Self {
        self.write_target = Some(target);
        self
    }

    /// Share `caches` (e.g. one set per catalog) for the decoded manifest lists,
    /// manifests and position deletes of this provider's scans, instead of its own.
    pub fn with_caches(mut self, caches: SessionCaches) -> Self {
        self.caches = caches;
        self
    }

    /// Where writes commit, if this provider takes writes.
    pub fn write_target(&self) -> Option<&WriteTarget> {
        self.write_target.as_ref()
    }

    /// The same table at snapshot `id`, read with the schema that snapshot was written
    /// with (as Iceberg Java's `SnapshotUtil.schemaFor` does for time travel by id).
    /// Errors with [`crate::ErrorKind::NotFound`] naming the id.
    pub fn with_snapshot_id(self, id: i64) -> Result<Self> {
        let metadata = self.table.metadata();
        let snapshot = metadata.snapshot_by_id(id).cloned().ok_or_else(|| {
            Error::not_found(format!(
                "snapshot id {id} in table '{}'",
                self.table.metadata_location()
            ))
        })?;
        let schema = metadata.schema_for_snapshot(&snapshot).clone();
        Self::at_snapshot(self.table, Some(snapshot), schema, self.view_types)
    }

    /// Whether top-level `string` and `binary` columns are exposed as Arrow
    /// `Utf8View`/`BinaryView` (the default, as DataFusion's own Parquet tables do under
    /// `datafusion.execution.parquet.schema_force_view_types`, also on by default) or as
    /// `Utf8`/`Binary`. Views are decoded straight from Parquet and are faster to
    /// compare, hash and filter. Nested fields keep `Utf8`/`Binary`, as in DataFusion.
    ///
    /// Errors only if the schema cannot be converted (it could be when the provider was
    /// made).
    pub fn with_schema_force_view_types(mut self, view_types: bool) -> Result<Self> {
        if view_types != self.view_types {
            self.arrow_schema = Arc::new(arrow_schema(&self.schema, view_types)?);
            self.view_types = view_types;
            if self.metadata_columns.is_some() {
                self.set_metadata_columns();
            }
        }
        Ok(self)
    }

    /// The same table at the snapshot a branch or tag points at. A branch is read with
    /// the table's current schema, a tag with the schema its snapshot was written with
    /// (Iceberg Java's `SnapshotUtil.schemaFor(table, ref)`).
    /// Errors with [`crate::ErrorKind::NotFound`] naming the ref.
    pub fn with_ref(self, name: &str) -> Result<Self> {
        let metadata = self.table.metadata();
        let reference = metadata.refs.get(name).ok_or_else(|| {
            Error::not_found(format!(
                "branch or tag '{name}' in table '{}'",
                self.table.metadata_location()
            ))
        })?;
        if reference.ref_type != "branch" {
            let id = reference.snapshot_id;
            return self.with_snapshot_id(id);
        }
        let snapshot = metadata
            .snapshot_by_id(reference.snapshot_id)
            .cloned()
            .ok_or_else(|| {
                Error::invalid_data(format!(
                    "branch '{name}' points at snapshot {} which the table does not have",
                    reference.snapshot_id
                ))
            })?;
        let schema = metadata.current_schema().clone();
        let mut provider = Self::at_snapshot(self.table, Some(snapshot), schema, self.view_types)?;
        provider.branch = Some(name.to_string());
        Ok(provider)
    }

    /// The branch the table was opened at (`with_ref` of a branch), if any.
    pub fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }

    /// Whether top-level strings and binaries are exposed as views (see
    /// [`Self::with_schema_force_view_types`]).
    pub fn schema_force_view_types(&self) -> bool {
        self.view_types
    }

    /// The table.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The snapshot read (`None` for a table without snapshots).
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }

    /// The Iceberg schema read.
    pub fn iceberg_schema(&self) -> &Schema {
        &self.schema
    }

    /// A scan planner for this provider's snapshot, its filters bound to this
    /// provider's schema.
    pub fn table_scan(&self) -> TableScan {
        TableScan::new(self.table.clone(), self.snapshot.clone())
            .with_manifest_cache(Arc::clone(&self.caches.manifests))
            .with_schema(Arc::clone(&self.schema))
    }

    /// The planning counts (the pruning funnel) of the latest `scan()` of this provider
    /// or a clone of it: manifests and data files total / skipped, data files planned,
    /// delete files kept. `None` before the first scan.
    pub fn last_scan_metrics(&self) -> Option<ScanMetrics> {
        self.last_scan_metrics.lock().ok().and_then(|m| m.clone())
    }

    /// The delete planning counts (delete files applied, rows removed by position
    /// deletes) of the latest `scan()` of this provider or a clone of it.
    pub fn last_delete_metrics(&self) -> Option<DeleteMetrics> {
        self.last_delete_metrics.lock().ok().and_then(|m| m.clone())
    }
}

/// Split files into at most `n` groups of similar total size (largest first, each into
/// the currently smallest group), keeping the order deterministic.
fn split_into_groups(mut files: Vec<(PartitionedFile, u64)>, n: usize) -> Vec<FileGroup> {
    let n = n.max(1).min(files.len().max(1));
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.path().cmp(b.0.path())));
    let mut groups: Vec<(u64, Vec<PartitionedFile>)> = (0..n).map(|_| (0, vec![])).collect();
    for (file, size) in files {
        if let Some(g) = groups.iter_mut().min_by_key(|g| g.0) {
            g.0 += size;
            g.1.push(file);
        }
    }
    groups
        .into_iter()
        .filter(|g| !g.1.is_empty())
        .map(|g| FileGroup::new(g.1))
        .collect()
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

/// The Arrow schema a provider exposes (see
/// [`IcebergTableProvider::with_schema_force_view_types`]).
///
/// Top-level `uuid` columns are tagged with Arrow's canonical `arrow.uuid` extension
/// type (`ARROW:extension:name`), so that results tell a UUID from a `fixed[16]` (the CLI
/// prints them as 8-4-4-4-12 strings).
fn arrow_schema(schema: &Schema, view_types: bool) -> Result<ArrowSchema> {
    // fields of optional structs are null where the struct is, whatever `required` says
    let arrow = nullable_under_nullable_structs(&schema_to_arrow(schema)?);
    let fields: Vec<_> = (arrow.fields().iter().zip(schema.columns()))
        .map(|(field, column)| {
            if matches!(
                column.field_type.as_ref(),
                crate::spec::Type::Primitive(crate::spec::PrimitiveType::Uuid)
            ) {
                let mut metadata = field.metadata().clone();
                metadata.insert("ARROW:extension:name".to_string(), "arrow.uuid".to_string());
                Arc::new(field.as_ref().clone().with_metadata(metadata))
            } else {
                Arc::clone(field)
            }
        })
        .collect();
    let arrow = ArrowSchema::new_with_metadata(fields, arrow.metadata().clone());
    Ok(if view_types {
        transform_schema_to_view(&arrow)
    } else {
        arrow
    })
}

impl IcebergTableProvider {
    /// Top-level column name → its v3 `write-default` (a literal of the column's type).
    pub(crate) fn write_defaults(&self) -> &HashMap<String, Expr> {
        &self.write_defaults
    }

    /// The Arrow schema the provider exposes (as `TableProvider::schema`).
    pub(crate) fn arrow_schema(&self) -> &SchemaRef {
        &self.arrow_schema
    }

    /// The data files a row-level operation (`DELETE`, `UPDATE`, `MERGE`) with
    /// `filters` reads, with their deletes planned: files pruned by partitions and
    /// metrics; files whose rows are all deleted already are left out.
    ///
    /// Errors: planning errors (a manifest or delete file that cannot be read).
    pub(crate) async fn plan_row_level(&self, filters: &[Expr]) -> Result<DeletePlan> {
        let plan = self
            .filtered_scan(self.table.clone(), filters)
            .plan_files()
            .await?;
        let cache = Some(&self.caches.position_deletes);
        plan_deletes(&self.table, plan.tasks, plan.delete_entries, cache).await
    }

    /// A [`TableScan`] of `table` (this provider's table, perhaps with another FileIO)
    /// at this provider's snapshot, sharing its manifest cache, filtered by what of
    /// `filters` converts to Iceberg predicates.
    fn filtered_scan(&self, table: Table, filters: &[Expr]) -> TableScan {
        let scan = TableScan::new(table, self.snapshot.clone())
            .with_manifest_cache(Arc::clone(&self.caches.manifests))
            .with_schema(Arc::clone(&self.schema));
        match FilterConverter::new(&self.schema).convert_all(filters) {
            Some(filter) => scan.with_filter(filter),
            None => scan,
        }
    }

    /// A scan of `files` (from [`Self::plan_row_level`]) for a row-level operation:
    /// every table column, then [`FILE_COLUMN`] (the row's data file location as
    /// stored) and [`POS_COLUMN`] (its 0-based ordinal in the file, as position deletes
    /// count), on v3 tables then [`ROW_ID_COLUMN`] and [`LAST_UPDATED_COLUMN`] (the
    /// row's lineage, stored or inherited; spec: "Row Lineage"), with the files'
    /// existing deletes applied. `prune_by` are filters used for
    /// row-group and page pruning: rows not matching them may be left out, so only a
    /// scan that looks at the matching rows alone may pass any.
    ///
    /// Errors: a filter that cannot be planned; an unusable file location.
    pub(crate) fn row_level_exec(
        &self,
        state: &dyn Session,
        files: DeletePlan,
        prune_by: &[Expr],
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if self.table.metadata().format_version < crate::spec::FormatVersion::V3 {
            return self.build_scan(state, files, None, prune_by, None, Hidden::RowIds);
        }
        // v3: each row's `_row_id` and `_last_updated_sequence_number` too (as the
        // metadata columns compute them), after the file and position
        let scan = self.build_scan(state, files, None, prune_by, None, Hidden::Metadata)?;
        let scan_schema = scan.schema();
        let df_schema = DFSchema::try_from(Arc::clone(&scan_schema))?;
        let hidden = |name: &str| Expr::Column(datafusion::common::Column::from_name(name));
        let n = self.arrow_schema.fields().len();
        let mut exprs: Vec<(Arc<dyn PhysicalExpr>, String)> = (0..n + 2)
            .map(|i| {
                let name = scan_schema.field(i).name().clone();
                let column: Arc<dyn PhysicalExpr> = Arc::new(
                    datafusion::physical_expr::expressions::Column::new(&name, i),
                );
                (column, name)
            })
            .collect();
        for (expr, name) in [
            (
                stored_or(
                    STORED_ROW_ID_COLUMN,
                    hidden(FIRST_ROW_ID_COLUMN) + hidden(POS_COLUMN),
                )?,
                ROW_ID_COLUMN,
            ),
            (
                stored_or(
                    STORED_SEQUENCE_NUMBER_COLUMN,
                    hidden(SEQUENCE_NUMBER_COLUMN),
                )?,
                LAST_UPDATED_COLUMN,
            ),
        ] {
            exprs.push((
                state.create_physical_expr(expr, &df_schema)?,
                name.to_string(),
            ));
        }
        Ok(Arc::new(
            datafusion::physical_plan::projection::ProjectionExec::try_new(exprs, scan)?,
        ))
    }

    /// The scan of a provider with metadata columns: `projection` indexes the table's
    /// columns then the metadata columns. Without metadata columns projected, the plain
    /// scan; else a row-level style scan with a projection computing them on top.
    fn scan_with_metadata(
        &self,
        state: &dyn Session,
        deletes: DeletePlan,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        columns: &MetadataColumns,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let n = self.arrow_schema.fields().len();
        let all: Vec<usize> = (0..n + columns.columns.len()).collect();
        let projection = projection.unwrap_or(&all);
        // filters on metadata columns stay with DataFusion (they are Inexact)
        let filters: Vec<Expr> = filters
            .iter()
            .filter(|f| {
                f.column_refs()
                    .iter()
                    .all(|c| self.arrow_schema.field_with_name(&c.name).is_ok())
            })
            .cloned()
            .collect();
        if projection.iter().all(|i| *i < n) {
            return self.build_scan(
                state,
                deletes,
                Some(projection),
                &filters,
                limit,
                Hidden::None,
            );
        }
        let table_columns: Vec<usize> = projection.iter().copied().filter(|i| *i < n).collect();
        let scan = self.build_scan(
            state,
            deletes,
            Some(&table_columns),
            &filters,
            limit,
            Hidden::Metadata,
        )?;
        let scan_schema = scan.schema();
        let df_schema = DFSchema::try_from(Arc::clone(&scan_schema))?;
        let hidden = |name: &str| Expr::Column(datafusion::common::Column::from_name(name));
        let mut exprs: Vec<(Arc<dyn PhysicalExpr>, String)> = vec![];
        let mut table_at = 0;
        for i in projection {
            let (expr, name) = if *i < n {
                let field = scan_schema.field(table_at);
                let column =
                    datafusion::physical_expr::expressions::Column::new(field.name(), table_at);
                table_at += 1;
                exprs.push((Arc::new(column), field.name().clone()));
                continue;
            } else {
                let Some((kind, field)) = columns.columns.get(*i - n) else {
                    return Err(Error::invalid_argument(format!(
                        "column {i} of table '{}' projected, which has {} columns",
                        self.table.metadata_location(),
                        n + columns.columns.len()
                    )));
                };
                let expr = match kind {
                    MetadataColumn::File => hidden(FILE_COLUMN),
                    MetadataColumn::Pos => hidden(POS_COLUMN),
                    MetadataColumn::SpecId => hidden(SPEC_ID_COLUMN),
                    MetadataColumn::Partition => hidden(PARTITION_COLUMN),
                    MetadataColumn::Deleted => datafusion::logical_expr::lit(false),
                    // spec "Row Lineage": null in the file → first_row_id + _pos
                    MetadataColumn::RowId => stored_or(
                        STORED_ROW_ID_COLUMN,
                        hidden(FIRST_ROW_ID_COLUMN) + hidden(POS_COLUMN),
                    )?,
                    // null in the file → the file's data sequence number
                    MetadataColumn::LastUpdatedSequenceNumber => stored_or(
                        STORED_SEQUENCE_NUMBER_COLUMN,
                        hidden(SEQUENCE_NUMBER_COLUMN),
                    )?,
                };
                (expr, field.name().clone())
            };
            exprs.push((state.create_physical_expr(expr, &df_schema)?, name));
        }
        Ok(Arc::new(
            datafusion::physical_plan::projection::ProjectionExec::try_new(exprs, scan)?,
        ))
    }

    /// The field-id adapter for this schema: `initial-default`s of columns and struct
    /// fields, required field ids, and the table's name mapping.
    fn expr_adapter_factory(&self) -> Result<FieldIdExprAdapterFactory> {
        let defaults = initial_defaults(&self.schema, &self.arrow_schema)?;
        let required: HashSet<i32> = self
            .schema
            .columns()
            .iter()
            .filter(|f| f.required)
            .map(|f| f.id)
            .collect();
        let name_mapping = match self
            .table
            .metadata()
            .properties
            .get(DEFAULT_NAME_MAPPING_PROPERTY)
        {
            Some(text) => Some(Arc::new(NameMapping::from_json(text)?)),
            None => None,
        };
        Ok(FieldIdExprAdapterFactory::new(
            defaults,
            required,
            name_mapping,
        ))
    }

    fn build_scan(
        &self,
        state: &dyn Session,
        deletes: DeletePlan,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        hidden: Hidden,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let row_ids = hidden != Hidden::None;
        let projected_schema = match projection {
            Some(p) => Arc::new(self.arrow_schema.project(p)?),
            None => Arc::clone(&self.arrow_schema),
        };
        let layout = HiddenLayout::new(self, hidden);
        // Fragmented position deletes are applied per batch after decoding (see
        // `position_delete_exec`), except in row-level and metadata-column scans,
        // which read positions for themselves.
        let policy = match state.config_options().extensions.get::<IcefloeOptions>() {
            Some(options) => PositionDeletePolicy::parse(&options.position_deletes)?,
            None => PositionDeletePolicy::Auto,
        };
        let per_batch = !row_ids
            && deletes.files.iter().any(|planned| {
                planned
                    .position
                    .as_ref()
                    .is_some_and(|p| p.per_batch(policy))
            });
        if deletes.files.is_empty() {
            let mut fields: Vec<FieldRef> = projected_schema.fields().iter().cloned().collect();
            fields.extend(layout.output_fields());
            return Ok(Arc::new(EmptyExec::new(Arc::new(ArrowSchema::new(fields)))));
        }
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
        // Parquet writers leave NaN out of row-group and page min/max (pyarrow, and so
        // PyIceberg, does not count NaNs in Iceberg metrics either), and DataFusion's
        // row-group and page pruning then drops NaN rows that a filter (or a TopK's
        // dynamic filter) matches: `NaN > 0` is true in DataFusion and Spark. So when a
        // float column is read from a file that may hold NaNs, that pruning is off for
        // the scan; the manifests' pruning of whole files accounts for NaN itself.
        let float_columns: Vec<i32> = self
            .schema
            .columns()
            .iter()
            .zip(self.arrow_schema.fields())
            .zip(&read_columns)
            .filter(|((_, f), read)| {
                **read
                    && matches!(
                        f.data_type(),
                        DataType::Float16 | DataType::Float32 | DataType::Float64
                    )
            })
            .map(|((c, _), _)| c.id)
            .collect();
        let nan_unsafe = !float_columns.is_empty()
            && deletes.files.iter().any(|planned| {
                let nans = &planned.task.data_file().nan_value_counts;
                float_columns.iter().any(|id| nans.get(id) != Some(&0))
            });
        let untruncated = untruncated_bounds(&self.schema, &self.table.metadata().properties);
        let io = self.table.file_io();
        // Files grouped by object store (normally one).
        let mut by_store: BTreeMap<String, Vec<(PartitionedFile, u64)>> = BTreeMap::new();
        // where a moved table's files were recorded, for errors naming them
        let mut recorded = HashMap::new();
        // per-batch deletes: by file index (the file's hidden `DELETE_FILE_INDEX_COLUMN`)
        let mut file_deletes: Vec<Option<FileDeletes>> = vec![];
        for planned in deletes.files {
            let task = &planned.task;
            let resolved = io.resolve(&task.location)?;
            let size = u64::try_from(task.data_file().file_size_in_bytes).map_err(|_| {
                Error::invalid_data(format!(
                    "data file '{}' has negative file_size_in_bytes",
                    task.data_file().file_path
                ))
            })?;
            let has_deletes = planned.position.is_some()
                || planned.equality_sequence_number != NO_EQUALITY_DELETES;
            // The object path as resolved (the location's characters kept as they are):
            // `PartitionedFile::new` would re-parse its string with `Path::from`, which
            // encodes `%` (a file named `p=100%25` would be looked up as `p=100%2525`).
            if !io.remaps().is_empty() {
                recorded.insert(resolved.path.clone(), task.location.clone());
            }
            let mut file = PartitionedFile::new_from_meta(ObjectMeta {
                location: resolved.path,
                last_modified: chrono::DateTime::UNIX_EPOCH,
                size,
                e_tag: None,
                version: None,
            });
            let mut partition_values = vec![];
            if equality.is_some() {
                partition_values.extend([
                    ScalarValue::Int64(Some(planned.equality_sequence_number)),
                    ScalarValue::Int32(Some(planned.scope)),
                ]);
            }
            if row_ids {
                partition_values.push(ScalarValue::Utf8(Some(task.data_file().file_path.clone())));
            }
            if let Some(columns) = &layout.metadata {
                partition_values.push(ScalarValue::Int32(Some(task.entry.spec_id)));
                if columns.partitioned() {
                    partition_values
                        .push(columns.partition_value(self.table.metadata(), &task.entry)?);
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
                if row_ids || !position.per_batch(policy) {
                    selection = Some(position.selection(&task.data_file().file_path)?);
                }
            }
            if per_batch {
                let index = i32::try_from(file_deletes.len()).map_err(|_| {
                    Error::unsupported("a scan of more than 2^31 data files with deletes")
                })?;
                partition_values.push(ScalarValue::Int32(Some(index)));
                file_deletes.push(match (&planned.position, &selection) {
                    (Some(position), None) => Some(FileDeletes::try_new(
                        Arc::clone(&position.deleted),
                        position.total_rows,
                    )?),
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
                &read_columns,
                &untruncated,
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
            by_store
                .entry(resolved.store_url)
                .or_default()
                .push((file, size));
        }
        // Without equality deletes the scan is a plain `DataSourceExec`, and DataFusion's
        // physical filter pushdown hands it the `FilterExec` predicate itself; giving it
        // the filters here too would only evaluate them twice. Under `EqualityDeleteExec`
        // nothing is pushed through, so the filters are given here for row-group and page
        // pruning (a filter commutes with row-level deletes).
        let pruning_filters = if equality.is_some() || row_ids {
            filters
        } else {
            &[]
        };
        let predicate = match conjunction(pruning_filters.iter().cloned()) {
            Some(expr) => {
                let df_schema = DFSchema::try_from(Arc::clone(&self.arrow_schema))?;
                Some(state.create_physical_expr(expr, &df_schema)?)
            }
            None => None,
        };
        let mut partition_cols = match &equality {
            Some(_) => hidden_delete_columns(),
            None => vec![],
        };
        partition_cols.extend(layout.partition_fields());
        if per_batch {
            partition_cols.push(Arc::new(Field::new(
                DELETE_FILE_INDEX_COLUMN,
                DataType::Int32,
                false,
            )));
        }
        // DataFusion panics on a hidden column named like a table column
        let mut hidden_fields = layout.output_fields();
        if per_batch {
            hidden_fields.push(Arc::new(Field::new(
                DELETE_POS_COLUMN,
                DataType::Int64,
                false,
            )));
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
        // with per-batch deletes the scan reads, after everything else, each row's
        // position and its file's index
        let per_batch_columns = file_schema.fields().len() + partition_cols.len();
        let per_batch_columns = [per_batch_columns, per_batch_columns - 1];
        let mut builder = TableSchema::builder(file_schema);
        if row_ids {
            let [_, pos] = row_id_columns();
            builder = builder.with_virtual_columns(vec![pos]);
        } else if per_batch {
            builder = builder.with_virtual_columns(vec![Arc::new(
                Field::new(DELETE_POS_COLUMN, DataType::Int64, false)
                    .with_extension_type(RowNumber),
            ) as FieldRef]);
        }
        let table_schema = builder.with_table_partition_cols(partition_cols).build();
        let (mut scan_projection, mut scan_limit) = match &equality {
            Some(eq) => (Some(eq.scan_projection.clone()), None),
            None if row_ids => {
                let columns = self.arrow_schema.fields().len();
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
            // no LIMIT for the decoder: it would count deleted rows
            scan_limit = None;
            let mut p =
                scan_projection.unwrap_or_else(|| (0..self.arrow_schema.fields().len()).collect());
            p.extend(per_batch_columns);
            scan_projection = Some(p);
        }
        let columns = Arc::new(self.expr_adapter_factory()?);
        let adapter: Arc<dyn PhysicalExprAdapterFactory> = Arc::clone(&columns) as _;
        let target_partitions = state.config().target_partitions();
        let store_count = by_store.len();
        let recorded = Arc::new(recorded);
        let mut plans: Vec<Arc<dyn ExecutionPlan>> = Vec::with_capacity(store_count);
        for (store_url, files) in by_store {
            let url = ObjectStoreUrl::parse(&store_url)?;
            // the session's registry gets the plain store; this scan's readers, the one
            // counting its requests (request_metrics)
            let store = io.store(&store_url)?;
            state
                .runtime_env()
                .register_object_store(url.as_ref(), io.base_store(&store_url)?);
            let readers = IcebergParquetReaderFactory::new(
                store,
                &store_url,
                Arc::clone(&recorded),
                Arc::clone(table_schema.file_schema()),
                Arc::clone(&columns),
                state.runtime_env().cache_manager.get_file_metadata_cache(),
            );
            let mut global = state.config_options().execution.parquet.clone();
            global.coerce_int96 = Some(INT96_READ_UNIT.to_string());
            // no zone from the session: the table's type alone decides the column's zone
            global.coerce_int96_tz = None;
            if nan_unsafe {
                global.pruning = false;
                global.enable_page_index = false;
            }
            let mut source = ParquetSource::new(table_schema.clone()).with_table_parquet_options(
                TableParquetOptions {
                    global,
                    ..Default::default()
                },
            );
            // No `metadata_size_hint`: each footer costs two GETs (its 8-byte tail, then the
            // metadata). With the hint (one GET of the last 512 KiB), a file shorter than
            // its manifest's size panics in parquet 59's push decoder ("Range length must
            // match buffer length") instead of failing with the size error.
            source = source.with_parquet_file_reader_factory(Arc::new(readers));
            if let Some(p) = &predicate {
                source = source.with_predicate(Arc::clone(p));
            }
            let groups = split_into_groups(files, target_partitions.div_ceil(store_count));
            // Row counts from the manifests (exact for files without deletes) let
            // DataFusion answer e.g. COUNT(*) without opening data files.
            let (groups, statistics) = compute_all_files_statistics(
                groups,
                Arc::clone(table_schema.table_schema()),
                true,
                false,
            )?;
            // wrapped so that the whole scan, deletes included, can be sent to another
            // process (see `iceberg_source`)
            let state = Arc::new(IcebergScanState {
                file_io: io.clone(),
                store_url: store_url.clone(),
                recorded: Arc::clone(&recorded),
                columns: Arc::clone(&columns),
            });
            let source = IcebergParquetSource::new(Arc::new(source), state);
            let config = FileScanConfigBuilder::new(url, Arc::new(source))
                .with_file_groups(groups)
                .with_statistics(statistics)
                .with_projection_indices(scan_projection.clone())?
                .with_limit(scan_limit)
                .with_expr_adapter(Some(Arc::clone(&adapter)))
                .build();
            plans.push(DataSourceExec::from_data_source(config));
        }
        let mut scan: Arc<dyn ExecutionPlan> = if plans.len() == 1 {
            plans.remove(0)
        } else {
            UnionExec::try_new(plans)?
        };
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
        let mut schemas: Vec<&Schema> = vec![&self.schema, metadata.current_schema()];
        schemas.extend(metadata.schemas.iter().rev());
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

/// The scan layout for equality deletes (see `equality_scan`).
struct EqualityScan {
    scan_projection: Vec<usize>,
    output_columns: Vec<usize>,
    sequence_column: usize,
    groups: Vec<EqualityGroup>,
}

/// The name of a row-level scan's column holding each row's data file location (as
/// stored in its manifest entry).
pub(crate) const FILE_COLUMN: &str = "__icefloe_file";
/// The name of a row-level scan's column holding each row's 0-based ordinal in its file.
pub(crate) const POS_COLUMN: &str = "__icefloe_pos";
/// The name of the hidden column holding each row's position in its file when position
/// deletes are applied per batch ([`PositionDeleteExec`]).
pub(crate) const DELETE_POS_COLUMN: &str = "__icefloe_delete_pos";
/// The name of the hidden per-file column holding the file's index in the
/// [`PositionDeleteExec`] above the scan.
pub(crate) const DELETE_FILE_INDEX_COLUMN: &str = "__icefloe_delete_file_index";
/// The name of a v3 row-level scan's column holding each row's `_row_id` (after
/// [`POS_COLUMN`]).
pub(crate) const ROW_ID_COLUMN: &str = "__icefloe_row_id";
/// The name of a v3 row-level scan's column holding each row's
/// `_last_updated_sequence_number` (after [`ROW_ID_COLUMN`]).
pub(crate) const LAST_UPDATED_COLUMN: &str = "__icefloe_last_updated_sequence_number";

/// The two columns a row-level scan adds after the table's: the data file (constant
/// per file) and the row's position in it (Parquet's row number, counted before any
/// deletes, as position deletes count).
fn row_id_columns() -> [FieldRef; 2] {
    [
        Arc::new(Field::new(FILE_COLUMN, DataType::Utf8, false)),
        Arc::new(Field::new(POS_COLUMN, DataType::Int64, false).with_extension_type(RowNumber)),
    ]
}

/// `CASE WHEN stored IS NOT NULL THEN stored ELSE inherited END` over the hidden
/// column `stored` (a value a data file stores wins over the inherited one).
fn stored_or(stored: &str, inherited: Expr) -> Result<Expr> {
    let stored = Expr::Column(datafusion::common::Column::from_name(stored));
    Ok(
        datafusion::logical_expr::when(stored.clone().is_not_null(), stored)
            .otherwise(inherited)?,
    )
}

/// The error for a write through a view with metadata columns.
pub(crate) fn read_only_metadata_view(table: &Table) -> Error {
    Error::unsupported(format!(
        "writing to table '{}' through its view with metadata columns (_file, _pos, …), \
         which is read-only",
        table.metadata_location()
    ))
}

/// Which hidden columns a scan adds after the table's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hidden {
    /// None: a query's scan.
    None,
    /// [`FILE_COLUMN`] and [`POS_COLUMN`]: a row-level operation's scan.
    RowIds,
    /// Those and what the metadata columns are computed from.
    Metadata,
}

/// Where a scan's hidden columns come from, and the order it returns them in: file,
/// position, spec id, partition (partitioned tables), and on v3 tables the file's
/// `first_row_id` and data sequence number, then `_row_id` and
/// `_last_updated_sequence_number` as stored in the file.
struct HiddenLayout {
    row_ids: bool,
    metadata: Option<Arc<MetadataColumns>>,
    lineage: bool,
}

impl HiddenLayout {
    fn new(provider: &IcebergTableProvider, hidden: Hidden) -> Self {
        let metadata = (hidden == Hidden::Metadata).then(|| match &provider.metadata_columns {
            Some((columns, _)) => Arc::clone(columns),
            None => Arc::new(MetadataColumns::new(
                provider.table.metadata(),
                &provider.arrow_schema,
            )),
        });
        let lineage = metadata.is_some()
            && provider.table.metadata().format_version >= crate::spec::FormatVersion::V3;
        Self {
            row_ids: hidden != Hidden::None,
            metadata,
            lineage,
        }
    }

    /// Columns read from each data file after the table's.
    fn file_fields(&self) -> Vec<FieldRef> {
        if self.lineage {
            stored_lineage_fields().to_vec()
        } else {
            vec![]
        }
    }

    /// Per-file values (DataFusion partition columns), after any equality-delete ones.
    fn partition_fields(&self) -> Vec<FieldRef> {
        let mut out = vec![];
        if self.row_ids {
            let [file, _] = row_id_columns();
            out.push(file);
        }
        if let Some(columns) = &self.metadata {
            out.push(Arc::new(Field::new(SPEC_ID_COLUMN, DataType::Int32, false)));
            if columns.partitioned() {
                out.push(Arc::new(Field::new(
                    PARTITION_COLUMN,
                    columns.partition_type().clone(),
                    true,
                )));
            }
            if self.lineage {
                out.push(Arc::new(Field::new(
                    FIRST_ROW_ID_COLUMN,
                    DataType::Int64,
                    true,
                )));
                out.push(Arc::new(Field::new(
                    SEQUENCE_NUMBER_COLUMN,
                    DataType::Int64,
                    false,
                )));
            }
        }
        out
    }

    /// The hidden columns in the order the scan returns them.
    fn output_fields(&self) -> Vec<FieldRef> {
        if !self.row_ids {
            return vec![];
        }
        let mut out = self.partition_fields();
        let [_, pos] = row_id_columns();
        out.insert(1, pos);
        out.extend(self.file_fields());
        out
    }

    /// The indices of [`Self::output_fields`] in the scan's table schema, whose file
    /// schema has `columns` table columns (then [`Self::file_fields`]) and whose partition
    /// columns start with `before` others.
    fn scan_indices(&self, columns: usize, before: usize) -> Vec<usize> {
        if !self.row_ids {
            return vec![];
        }
        let extras = self.file_fields().len();
        let parts = self.partition_fields().len();
        let first = columns + extras + before;
        let mut out = vec![first, first + parts];
        out.extend(first + 1..first + parts);
        out.extend(columns..columns + extras);
        out
    }
}

/// The hidden per-file columns equality deletes need: data sequence number and scope.
fn hidden_delete_columns() -> Vec<FieldRef> {
    vec![
        Arc::new(Field::new(
            "__icefloe_data_sequence_number",
            DataType::Int64,
            false,
        )),
        Arc::new(Field::new(
            "__icefloe_partition_scope",
            DataType::Int32,
            false,
        )),
    ]
}

#[async_trait]
impl TableProvider for IcebergTableProvider {
    fn schema(&self) -> SchemaRef {
        match &self.metadata_columns {
            Some((_, schema)) => Arc::clone(schema),
            None => Arc::clone(&self.arrow_schema),
        }
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    /// The column's v3 `write-default` (spec "Default values"): `INSERT` fills it into a
    /// column the statement does not list (without one: null, which a required column
    /// refuses when written).
    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.write_defaults.get(column)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        // No column and no filter (`COUNT(*)`): the manifest list may give the count.
        if projection.is_some_and(|p| p.is_empty()) && filters.is_empty() {
            if let Some((rows, metrics)) = self.table_scan().live_row_count().await? {
                if let Ok(mut last) = self.last_scan_metrics.lock() {
                    *last = Some(metrics);
                }
                if let Ok(mut last) = self.last_delete_metrics.lock() {
                    *last = Some(DeleteMetrics::default());
                }
                return Ok(rows_without_columns(
                    rows,
                    limit,
                    state.config().batch_size(),
                )?);
            }
        }
        // Planning reads (manifest list, manifests, position deletes) are counted on one
        // FileIO, the scan's own reads on another (request_metrics).
        let planning_requests = Arc::new(RequestCounts::default());
        let planning_table = self.table.with_file_io(
            self.table
                .file_io()
                .with_request_observer(Arc::clone(&planning_requests) as _),
        );
        let scan = self.filtered_scan(planning_table.clone(), filters);
        // An unfiltered LIMIT opens only the manifests it needs (scan::limit).
        let plan = match limit {
            Some(n) if filters.is_empty() => scan.plan_files_with_limit(n).await?,
            _ => scan.plan_files().await?,
        };
        let scan_metrics = plan.metrics.clone();
        if let Ok(mut last) = self.last_scan_metrics.lock() {
            *last = Some(scan_metrics.clone());
        }
        let cache = Some(&self.caches.position_deletes);
        let deletes = plan_deletes(&planning_table, plan.tasks, plan.delete_entries, cache).await?;
        let delete_metrics = deletes.metrics.clone();
        if let Ok(mut last) = self.last_delete_metrics.lock() {
            *last = Some(delete_metrics.clone());
        }
        let store_requests = Arc::new(StoreRequestMetrics::default());
        let counted = Self {
            table: self.table.with_file_io(
                self.table
                    .file_io()
                    .with_request_observer(Arc::clone(&store_requests) as _),
            ),
            ..self.clone()
        };
        let exec = match &self.metadata_columns {
            Some((columns, _)) => {
                counted.scan_with_metadata(state, deletes, projection, filters, limit, columns)?
            }
            None => counted.build_scan(state, deletes, projection, filters, limit, Hidden::None)?,
        };
        attach_counters(&exec, &delete_metrics.counters());
        attach_scan_metrics(&exec, &scan_metrics);
        store_requests.register(&exec, planning_requests.totals());
        Ok(exec)
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if self.metadata_columns.is_some() {
            return Err(read_only_metadata_view(&self.table).into());
        }
        let Some(target) = &self.write_target else {
            return Err(Error::unsupported(format!(
                "writing to table '{}': it was opened by location or at a snapshot, tag or \
                 branch; writes go to the current snapshot of a table in a catalog \
                 (--catalog, IcebergCatalogProvider) or of one of its branches",
                self.table.metadata_location()
            ))
            .into());
        };
        if let Some(branch) = &self.branch {
            if insert_op != InsertOp::Append {
                return Err(Error::unsupported(format!(
                    "INSERT OVERWRITE into branch '{branch}' of '{}': only INSERT INTO \
                     appends to a branch",
                    target.ident
                ))
                .into());
            }
        } else if self.snapshot.as_ref().map(|s| s.snapshot_id)
            != self.table.metadata().current_snapshot_id
        {
            return Err(
                Error::unsupported("writing to a snapshot other than the current one").into(),
            );
        }
        let options = state.config_options().extensions.get::<IcefloeOptions>();
        let sink = IcebergDataSink::try_new(
            target.clone(),
            self.table.clone(),
            Arc::clone(&self.arrow_schema),
            insert_op,
            options,
        )?;
        let order = IcebergDataSink::sort_requirement(&self.table, &self.arrow_schema);
        let sink = sink.with_branch(self.branch.clone()).with_sort_order_id(
            order
                .as_ref()
                .map(|_| self.table.metadata().default_sort_order_id),
        );
        let writer = IcebergDataFileWriterExec::new(
            input,
            Arc::new(sink.write_state()?),
            Arc::clone(&self.arrow_schema),
            order,
        );
        Ok(Arc::new(IcebergWriteExec::new(
            Arc::new(writer),
            Arc::new(sink),
        )))
    }

    async fn delete_from(
        &self,
        state: &dyn Session,
        filters: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(super::dml::plan_delete(self, state, filters, "DELETE").await?)
    }

    async fn update(
        &self,
        state: &dyn Session,
        assignments: Vec<(String, Expr)>,
        filters: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(super::dml::plan_update(self, state, assignments, filters).await?)
    }

    async fn truncate(&self, state: &dyn Session) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(super::dml::plan_delete(self, state, vec![], "TRUNCATE").await?)
    }

    async fn merge_into(
        &self,
        state: &dyn Session,
        source: Arc<dyn ExecutionPlan>,
        merge_schema: DFSchemaRef,
        on: Expr,
        clauses: Vec<MergeIntoClause>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(super::dml::plan_merge(self, state, source, merge_schema, on, clauses).await?)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DFResult<Vec<TableProviderFilterPushDown>> {
        // Exact only where partition pruning alone decides every row: identity-partition
        // predicates under every partition spec of the table; DataFusion re-checks the rest.
        let converter = FilterConverter::new(&self.schema);
        let specs = &self.table.metadata().partition_specs;
        Ok(filters
            .iter()
            .map(|f| match converter.convert(f) {
                Some(c) if exact_by_identity_partitions(&c, &self.schema, specs) => {
                    TableProviderFilterPushDown::Exact
                }
                _ => TableProviderFilterPushDown::Inexact,
            })
            .collect())
    }
}
