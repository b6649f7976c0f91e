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
//! Equality deletes are resolved to deleted positions once per session and applied as
//! position deletes (see `resolve`); where they are not, the scan sits under
//! [`EqualityDeleteExec`], which applies the pushed-down filters before probing the
//! delete keys.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::datatypes::{FieldRef, Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{DFSchemaRef, Result as DFResult};
use datafusion::datasource::file_format::parquet::transform_schema_to_view;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::dml::MergeIntoClause;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;

use super::column_defaults::write_defaults;
use super::data_file_writer_exec::IcebergDataFileWriterExec;
use super::delete_planning::{plan_deletes, DeleteMetrics, DeletePlan};
use super::filter::{exact_by_identity_partitions, FilterConverter};
use super::followed_directory::FollowedDirectory;
use super::insert::{IcebergDataSink, WriteTarget};
use super::metadata_columns::MetadataColumns;
use super::metrics::{attach_counters, attach_scan_metrics, attach_table_name};
use super::options::IcefloeOptions;
use super::request_metrics::StoreRequestMetrics;
use super::row_count::rows_without_columns;
use super::write_exec::IcebergWriteExec;
use crate::error::{Error, Result};
use crate::expr::Predicate;
use crate::io::RequestCounts;
use crate::scan::cache::SessionCaches;
use crate::scan::{ScanMetrics, TableScan};
use crate::spec::arrow::{
    nullable_nested_fields, schema_to_arrow, with_uuid_extension, without_nested_field_ids,
};
use crate::spec::{ColumnStats, Schema, Snapshot};
use crate::table::Table;
use crate::transaction::ReplaceTable;
use datafusion::logical_expr::dml::InsertOp;

mod deferred;
mod dropped_equality;
mod file_groups;
mod files;
mod hidden;
mod plan_scan;
mod resolve;
mod scan;

pub(crate) use files::FileSetTable;
use hidden::Hidden;
pub(crate) use hidden::{read_only_metadata_view, FILE_COLUMN, POS_COLUMN, ROW_ID_COLUMN};

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
    /// The branch the table was opened at (`"t@dev"`), where writes commit.
    branch: Option<String>,
    /// The tag the table was opened at (`"t@v1"`): named when a write is refused.
    tag: Option<String>,
    /// The table's name in the session (`ns.t`), for the messages refusing a write to a
    /// tag or snapshot; `None`: they name its metadata file (a table opened by location).
    table_name: Option<String>,
    /// `CREATE OR REPLACE TABLE … AS`: the table as loaded and its replacement, which
    /// `INSERT` commits before the rows (this provider's table is the staged result).
    replacing: Option<(Table, ReplaceTable)>,
    /// `CREATE TABLE … AS`: the table is staged, and `INSERT` creates it in its commit.
    creating: bool,
    /// With metadata columns (see [`Self::with_metadata_columns`]): the columns, and
    /// the schema with them appended.
    metadata_columns: Option<(Arc<MetadataColumns>, SchemaRef)>,
    /// Top-level column name → its v3 `write-default`, for `INSERT` statements that do
    /// not list the column ([`TableProvider::get_column_default`]).
    write_defaults: Arc<HashMap<String, Expr>>,
    /// The rows an `INSERT OVERWRITE` through this provider replaces (see
    /// [`Self::with_overwrite_filter`]).
    overwrite_filter: Option<Predicate>,
    /// For a table registered by its directory: how to load its current version at each
    /// statement ([`crate::datafusion::followed_directory`]); `None`: read as loaded.
    followed: Option<Arc<FollowedDirectory>>,
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
            tag: None,
            table_name: None,
            replacing: None,
            creating: false,
            metadata_columns: None,
            write_defaults,
            overwrite_filter: None,
            followed: None,
        })
    }

    /// The same provider, whose `INSERT OVERWRITE` in static mode replaces only the rows
    /// matching `filter` (Spark's `INSERT OVERWRITE t PARTITION (p = v) …`, Java
    /// `OverwriteFiles.overwriteByRowFilter`) instead of the whole table. A data file
    /// matching it only in part fails the commit ([`crate::ErrorKind::Unsupported`]).
    pub(crate) fn with_overwrite_filter(&self, filter: Predicate) -> Self {
        Self {
            overwrite_filter: Some(filter),
            ..self.clone()
        }
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

    /// The same table whose schema appends the metadata columns, as
    /// [`Self::with_metadata_columns`], keeping its write target: the target of a
    /// `DELETE` or `UPDATE` whose condition or `SET` values read them (the statement
    /// layer plans such a statement against it). Other writes through it (`INSERT`,
    /// `TRUNCATE`, `MERGE`) are [`crate::ErrorKind::Unsupported`] errors, as is an
    /// assignment to a metadata column.
    pub(crate) fn with_metadata_columns_for_row_level(mut self) -> Self {
        self.set_metadata_columns();
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

    /// Name the table `name` (`ns.t`, as the session knows it) in the errors refusing a
    /// write to it (a tag, a snapshot); without a name they give its metadata file.
    pub fn with_table_name(mut self, name: impl Into<String>) -> Self {
        self.table_name = Some(name.into());
        self
    }

    /// The table as write refusals name it: its name in the session
    /// ([`Self::with_table_name`], else the write target's identifier), else its
    /// metadata file.
    pub(crate) fn display_name(&self) -> String {
        match (&self.table_name, &self.write_target) {
            (Some(name), _) => name.clone(),
            (None, Some(target)) => target.ident.to_string(),
            (None, None) => self.table.metadata_location().to_string(),
        }
    }

    /// Share `caches` (e.g. one set per catalog) for the decoded manifest lists,
    /// manifests and position deletes of this provider's scans, instead of its own.
    pub fn with_caches(mut self, caches: SessionCaches) -> Self {
        self.caches = caches;
        self
    }

    /// The caches this provider's scans use ([`Self::with_caches`]).
    pub(crate) fn caches(&self) -> &SessionCaches {
        &self.caches
    }

    /// This provider loading `followed`'s current version at each statement where a
    /// schema resolves it ([`crate::datafusion::followed_directory`]).
    pub(crate) fn with_followed(mut self, followed: Arc<FollowedDirectory>) -> Self {
        self.followed = Some(followed);
        self
    }

    /// How to load this table's current version, when it was registered by its
    /// directory ([`crate::datafusion::followed_directory`]).
    pub(crate) fn followed(&self) -> Option<&Arc<FollowedDirectory>> {
        self.followed.as_ref()
    }

    /// Where writes commit, if this provider takes writes.
    pub fn write_target(&self) -> Option<&WriteTarget> {
        self.write_target.as_ref()
    }

    /// The same table at snapshot `id`, read with the schema that snapshot was written
    /// with (as Iceberg Java's `SnapshotUtil.schemaFor` does for time travel by id),
    /// sharing this provider's caches (they hold immutable files only).
    /// Errors with [`crate::ErrorKind::NotFound`] naming the id, or `InvalidData` when the
    /// snapshot's `schema-id` names no schema.
    pub fn with_snapshot_id(self, id: i64) -> Result<Self> {
        let metadata = self.table.metadata();
        let snapshot = metadata.snapshot_by_id(id).cloned().ok_or_else(|| {
            Error::not_found(format!(
                "snapshot id {id} in table '{}'",
                self.display_name()
            ))
        })?;
        let schema = metadata.schema_for_snapshot(&snapshot)?.clone();
        let caches = self.caches.clone();
        let mut provider = Self::at_snapshot(self.table, Some(snapshot), schema, self.view_types)?
            .with_caches(caches);
        provider.table_name = self.table_name;
        Ok(provider)
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
        if name == crate::spec::MAIN_BRANCH
            && !metadata.refs.contains_key(name)
            && metadata.current_snapshot_id.is_none()
        {
            // `main` of a table without snapshots: its current, empty state
            return Ok(self);
        }
        let reference = metadata.refs.get(name).ok_or_else(|| {
            Error::not_found(format!(
                "branch or tag '{name}' in table '{}'",
                self.display_name()
            ))
        })?;
        if reference.ref_type != "branch" {
            let id = reference.snapshot_id;
            let mut provider = self.with_snapshot_id(id)?;
            provider.tag = Some(name.to_string());
            return Ok(provider);
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
        let caches = self.caches.clone();
        let mut provider = Self::at_snapshot(self.table, Some(snapshot), schema, self.view_types)?
            .with_caches(caches);
        provider.branch = Some(name.to_string());
        provider.table_name = self.table_name;
        Ok(provider)
    }

    /// This provider, over `replacement`'s staged table ([`ReplaceTable::staged`]),
    /// writing `INSERT INTO`'s rows as `CREATE OR REPLACE TABLE … AS` does: the commit
    /// applies `replacement` to `base` (the table as loaded) and appends the rows, in one
    /// transaction. Other writes are refused.
    pub(crate) fn replacing(mut self, base: Table, replacement: ReplaceTable) -> Self {
        self.replacing = Some((base, replacement));
        self
    }

    /// This provider, over a staged table
    /// ([`Catalog::stage_create_table`](crate::catalog::Catalog::stage_create_table)),
    /// writing `INSERT INTO`'s rows as `CREATE TABLE … AS` does: one commit creates the
    /// table with them ([`Transaction::create`](crate::transaction::Transaction::create)).
    /// Other writes are refused.
    pub(crate) fn creating(mut self) -> Self {
        self.creating = true;
        self
    }

    /// The branch the table was opened at (`with_ref` of a branch), if any.
    pub fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }

    /// `Err` naming the tag and the table when the table was opened at a tag
    /// (`with_ref` of a tag): a tag names one snapshot for good (spec: "Branching and
    /// Tagging"), so `statement` cannot change it.
    ///
    /// Errors: [`crate::ErrorKind::Unsupported`], "cannot write to tag 't1' of table
    /// 'ns.t': …" (the table as [`Self::with_table_name`] names it, else its metadata
    /// file), with the statement.
    pub(crate) fn check_not_tag(&self, statement: &str) -> Result<()> {
        match &self.tag {
            Some(tag) => Err(Error::unsupported(format!(
                "cannot write to tag '{tag}' of table '{}': a tag names one snapshot and \
                 cannot be changed ({statement}); write to the table or to a branch",
                self.display_name()
            ))),
            None => Ok(()),
        }
    }

    /// `Err` when `statement` (`INSERT INTO`, `DELETE`, …) cannot write through this
    /// provider: it was opened at a tag ([`Self::check_not_tag`]), or by location or at a
    /// snapshot id or timestamp (no write target). `sql::execute` calls it before
    /// DataFusion plans a write to a `"t@…"` name, so the refusal comes first, not an
    /// error of the tag's older schema (a column added since).
    ///
    /// Errors: [`crate::ErrorKind::Unsupported`], "cannot write to tag 't1' of table
    /// 'ns.t': …", or "INSERT INTO on table 'ns.t': it was opened by location or at a
    /// snapshot; …" (the table as [`Self::display_name`] names it).
    pub(crate) fn check_writable(&self, statement: &str) -> Result<&WriteTarget> {
        self.check_not_tag(statement)?;
        self.write_target.as_ref().ok_or_else(|| {
            Error::unsupported(format!(
                "{statement} on table '{}': it was opened by location or at a snapshot; \
                 writes go to the current snapshot of a table in a catalog (--catalog, \
                 IcebergCatalogProvider) or to one of its branches",
                self.display_name()
            ))
        })
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

    /// The table's name in the session (`ns.t`), else (a table opened by location) its
    /// location: what [`metrics::TABLE_METRIC`](super::metrics::TABLE_METRIC) of its
    /// scans says.
    pub fn scan_name(&self) -> String {
        self.table_name
            .clone()
            .unwrap_or_else(|| self.table.metadata().location.clone())
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

/// The Arrow schema a provider exposes (see
/// [`IcebergTableProvider::with_schema_force_view_types`]).
///
/// Top-level `uuid` columns are tagged with Arrow's canonical `arrow.uuid` extension
/// type (`ARROW:extension:name`), so that results tell a UUID from a `fixed[16]` (the CLI
/// prints them as 8-4-4-4-12 strings). Columns carry their field ids, nested fields do
/// not ([`without_nested_field_ids`]: DataFusion compares types with those, and its
/// functions do not keep them); the scan's reader matches nested fields by the ids of
/// [`Schema`] itself (`expr_adapter_factory`), writers write them from it.
fn arrow_schema(schema: &Schema, view_types: bool) -> Result<ArrowSchema> {
    let arrow = without_nested_field_ids(&read_schema(schema)?);
    let fields: Vec<_> = (arrow.fields().iter().zip(schema.columns()))
        .map(|(field, column)| {
            if let crate::spec::Type::Primitive(p) = column.field_type.as_ref() {
                Arc::new(with_uuid_extension(field.as_ref().clone(), p))
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

/// The Arrow schema of what a scan of `schema` reads, field ids at every depth: nested
/// fields nullable whatever `required` says (fields of optional structs are null where
/// the struct is, and writes cast to these types: [`nullable_nested_fields`]).
pub(super) fn read_schema(schema: &Schema) -> Result<ArrowSchema> {
    Ok(nullable_nested_fields(&schema_to_arrow(schema)?))
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
    /// metrics; files whose rows are all deleted already are left out of the files to
    /// read, in [`DeletePlan::fully_deleted`].
    ///
    /// Errors: planning errors (a manifest or delete file that cannot be read).
    pub(crate) async fn plan_row_level(&self, filters: &[Expr]) -> Result<DeletePlan> {
        let plan = self
            .filtered_scan(self.table.clone(), filters)
            .plan_files()
            .await?;
        let cache = Some(&self.caches.position_deletes);
        let mut deletes = plan_deletes(&self.table, plan.tasks, plan.delete_entries, cache).await?;
        deletes.scan_metrics = Some(plan.metrics);
        Ok(deletes)
    }

    /// The metrics a scan reading `projection` (of [`TableProvider::schema`]'s columns;
    /// `None`: all) needs of its data files: those of the table columns read and of the
    /// fields nested in them (statistics, NaN counts); none for the metadata columns.
    fn read_column_stats(&self, projection: Option<&Vec<usize>>) -> ColumnStats {
        let Some(projection) = projection else {
            return ColumnStats::All;
        };
        let columns = self.schema.columns();
        let mut ids = vec![];
        for field in projection.iter().filter_map(|i| columns.get(*i)) {
            field.collect_ids(&mut ids);
        }
        ColumnStats::only(ids)
    }

    /// This provider reading through a FileIO whose requests `store_requests` counts
    /// (the scan's own reads, `EXPLAIN ANALYZE`).
    fn counting_store_requests(&self, store_requests: &Arc<StoreRequestMetrics>) -> Self {
        Self {
            table: self.table.with_file_io(
                self.table
                    .file_io()
                    .with_request_observer(Arc::clone(store_requests) as _),
            ),
            ..self.clone()
        }
    }

    /// A [`TableScan`] of `table` (this provider's table, perhaps with another FileIO)
    /// at this provider's snapshot, sharing its manifest cache, filtered by what of
    /// `filters` converts to Iceberg predicates (on the table's columns, and, with
    /// metadata columns, on the fields of `_partition`).
    fn filtered_scan(&self, table: Table, filters: &[Expr]) -> TableScan {
        let mut scan = TableScan::new(table, self.snapshot.clone())
            .with_manifest_cache(Arc::clone(&self.caches.manifests))
            .with_schema(Arc::clone(&self.schema));
        if let Some((columns, _)) = &self.metadata_columns {
            let metadata = self.table.metadata_ref();
            if let Some(keep) = columns.partition_file_filter(metadata, filters) {
                scan = scan.with_data_file_filter(keep);
            }
        }
        match FilterConverter::new(&self.schema).convert_all(filters) {
            Some(filter) => scan.with_filter(filter),
            None => scan,
        }
    }
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

    /// The scan of this provider's snapshot; a read failing because a concurrent
    /// `expire_snapshots` expired the snapshot says so ([`expired_reads`]).
    ///
    /// [`expired_reads`]: crate::datafusion::expired_reads
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let planned = self.plan_scan(state, projection, filters, limit).await;
        super::expired_reads::explain_planning(self, planned).await
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
        let statement = match insert_op {
            InsertOp::Append => "INSERT INTO",
            _ => "INSERT OVERWRITE",
        };
        let target = self.check_writable(statement)?;
        // a branch is written at the snapshot it points at (`with_ref`)
        if self.branch.is_none()
            && self.snapshot.as_ref().map(|s| s.snapshot_id)
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
        let order = IcebergDataSink::sort_requirement(&self.table, &self.arrow_schema)
            .map_err(|e| e.context(format!("{statement} '{}'", target.ident)))?;
        let sink = match &self.replacing {
            Some(_) if insert_op != InsertOp::Append => {
                return Err(
                    Error::unsupported(format!("{statement} into a table being replaced")).into(),
                )
            }
            Some((base, replacement)) => {
                sink.with_replacement(base.clone(), replacement.clone())?
            }
            None if self.creating && insert_op != InsertOp::Append => {
                return Err(
                    Error::unsupported(format!("{statement} into a table being created")).into(),
                )
            }
            None if self.creating => sink.with_create()?,
            None => sink,
        };
        let sink = sink
            .with_overwrite_filter(self.overwrite_filter.clone())
            .with_branch(self.branch.clone())?
            .with_sort_order_id(
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
