//! `INSERT INTO` / `INSERT OVERWRITE` into Iceberg tables: [`IcebergDataSink`], the
//! commit of one statement, run by [`IcebergWriteExec`](super::write_exec::IcebergWriteExec)
//! (what `IcebergTableProvider::insert_into` plans) over the data files its
//! [`IcebergDataFileWriterExec`](super::data_file_writer_exec::IcebergDataFileWriterExec)
//! wrote.
//!
//! Each input partition streams its rows into Parquet data files with a writer of its
//! own, in parallel (on the workers of a distributed engine, when the plan is
//! distributed); then all the files are committed in one snapshot through the crate's
//! one commit path ([`Transaction`]) to the catalog the table was loaded from:
//!
//! | statement | action |
//! |---|---|
//! | `INSERT INTO t …` | [`AppendFiles`] |
//! | `INSERT OVERWRITE t …`, `icefloe.partition_overwrite_mode = 'static'` (default) | [`OverwriteFiles`] removing every file (the whole table) |
//! | `INSERT OVERWRITE t …`, `icefloe.partition_overwrite_mode = 'dynamic'` | [`OverwriteFiles::replace_partitions`]: the partitions the new rows fall in (Spark's `partitionOverwriteMode=dynamic`); no rows: no commit, as Spark's `SparkWrite.DynamicOverwrite` |
//!
//! The overwrite is validated at [`IsolationLevel::Serializable`] against the snapshot
//! the statement was planned on. When the table has a sort order (`ALTER TABLE … WRITE
//! ORDERED BY`), over top-level columns or fields of structs, each input partition is sorted by it before
//! writing (a DataFusion `SortExec`; transforms such as `bucket(4, c)` through
//! `icefloe_partition_transform`), so every data file is sorted and records the order's id
//! in `sort_order_id`.
//! A statement that fails commits nothing; the files it wrote are never referenced and
//! are removed (see `IcebergDataSink::commit_written`), except after a commit whose
//! state is unknown: then they are kept, as the commit may have landed. The statement's
//! result is DataFusion's usual one row, `count`: the rows written.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{BinaryArray, RecordBatch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;

use super::data_file_writer_exec::{DataFileWriteState, DATA_FILES_COLUMN};
use super::options::{IcefloeOptions, PartitionOverwriteMode};
use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::expr::Predicate;
use crate::spec::DataFile;
use crate::table::Table;
use crate::transaction::{AppendFiles, IsolationLevel, OverwriteFiles, ReplaceTable, Transaction};
use crate::write::decode_written_files;

/// Table property: where data files go (default `<location>/data`).
pub const DATA_PATH: &str = "write.data.path";

/// Where `table`'s data (and delete) files go: `write.data.path`, else `<location>/data`.
pub(crate) fn data_location(table: &Table) -> String {
    let m = table.metadata();
    match m.properties.get(DATA_PATH) {
        Some(p) => p.trim_end_matches('/').to_string(),
        None => format!("{}/data", m.location),
    }
}

/// The write-audit-publish id writes to `table` are staged under: the session's
/// `icefloe.wap_id` (Spark's `spark.wap.id`) when it is set and the table's
/// `write.wap.enabled` is true, else `None` (writes commit as usual).
///
/// Errors: a `write.wap.enabled` that is no boolean, naming it.
pub(crate) fn staged_wap_id(
    table: &Table,
    options: Option<&IcefloeOptions>,
) -> Result<Option<String>> {
    let Some(wap) = options.map(|o| o.wap_id.as_str()).filter(|w| !w.is_empty()) else {
        return Ok(None);
    };
    let enabled = crate::table_properties::WAP_ENABLED
        .bool(&table.metadata().properties)?
        .unwrap_or(false);
    Ok(enabled.then(|| wap.to_string()))
}

/// The error for `statement` on table `ident` while its writes are staged for
/// write-audit-publish: writes to `main` are staged (`INSERT`, `INSERT OVERWRITE`,
/// `DELETE`, `UPDATE`, `MERGE`, `TRUNCATE`); writes to another branch and table
/// replacements are not (Spark refuses a branch write under `spark.wap.id` too).
pub(crate) fn wap_refusal(statement: &str, ident: &TableIdent) -> Error {
    Error::unsupported(format!(
        "{statement} on '{ident}' while icefloe.wap_id is set and the table's \
         write.wap.enabled is true: write-audit-publish stages writes to main only \
         (RESET icefloe.wap_id to write directly)"
    ))
}

/// Where a table's writes commit: the catalog it was loaded from and its name there.
#[derive(Debug, Clone)]
pub struct WriteTarget {
    /// The catalog that commits.
    pub catalog: Arc<dyn Catalog>,
    /// The table's name in it.
    pub ident: TableIdent,
}

/// The sink of one `INSERT` statement.
#[derive(Debug)]
pub struct IcebergDataSink {
    target: WriteTarget,
    table: Table,
    schema: SchemaRef,
    op: InsertOp,
    overwrite_mode: PartitionOverwriteMode,
    /// The sort order the rows arrive in (the plan sorts each input partition by it),
    /// recorded in the data files' `sort_order_id`.
    sort_order_id: Option<i32>,
    /// The branch the rows are appended to (`None`: `main`).
    branch: Option<String>,
    /// `CREATE OR REPLACE TABLE … AS`: the table as loaded (the commit's base) and the
    /// replacement committed before the rows; `table` is the replacement's staged result
    /// ([`ReplaceTable::staged`]), which the rows are written against.
    replacing: Option<(Table, ReplaceTable)>,
    /// `CREATE TABLE … AS`: `table` is staged
    /// ([`Catalog::stage_create_table`](crate::catalog::Catalog::stage_create_table)),
    /// and the commit creates it with the rows ([`Transaction::create`]).
    creating: bool,
    /// The id of this statement's write, in the names of the files it writes.
    operation_id: String,
    /// The write-audit-publish id the write is staged under ([`staged_wap_id`]).
    wap_id: Option<String>,
    /// A static `INSERT OVERWRITE … PARTITION (p = v)`: the rows it replaces
    /// (`None`: the whole table), under `partition_overwrite_mode = 'static'`.
    overwrite_filter: Option<Predicate>,
    /// `committed_snapshot_id` (a gauge) once the statement committed; shown by
    /// `EXPLAIN ANALYZE` and printed by the CLI.
    metrics: ExecutionPlanMetricsSet,
}

use super::snapshot_metric::record_snapshot;
pub use super::snapshot_metric::{COMMITTED_SNAPSHOT_METRIC, STAGED_SNAPSHOT_METRIC};

impl IcebergDataSink {
    /// A sink writing rows of `schema` (the provider's Arrow schema) into `table` (as
    /// planned) and committing to `target`.
    ///
    /// Errors: `REPLACE INTO` ([`ErrorKind::Unsupported`]); a format version this crate
    /// does not write yet.
    pub(crate) fn try_new(
        target: WriteTarget,
        table: Table,
        schema: SchemaRef,
        op: InsertOp,
        options: Option<&IcefloeOptions>,
    ) -> Result<Self> {
        if op == InsertOp::Replace {
            return Err(Error::unsupported(format!(
                "REPLACE INTO Iceberg table '{}' (use INSERT OVERWRITE)",
                target.ident
            )));
        }
        let overwrite_mode = match options {
            Some(o) => PartitionOverwriteMode::parse(o.partition_overwrite_mode.as_str())?,
            None => PartitionOverwriteMode::Static,
        };
        let wap_id = staged_wap_id(&table, options)?;
        Ok(Self {
            target,
            table,
            schema,
            op,
            overwrite_mode,
            sort_order_id: None,
            branch: None,
            replacing: None,
            creating: false,
            operation_id: uuid::Uuid::new_v4().to_string(),
            wap_id,
            overwrite_filter: None,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// Replace only the rows matching `filter` (Spark's static `INSERT OVERWRITE …
    /// PARTITION (p = v)`, Java `OverwriteFiles.overwriteByRowFilter`) rather than the
    /// whole table, when the session's `partition_overwrite_mode` is `static`; a
    /// dynamic overwrite replaces the partitions written, as without it. Files that
    /// match `filter` only in part make the commit fail (as in Java).
    pub(crate) fn with_overwrite_filter(mut self, filter: Option<Predicate>) -> Self {
        self.overwrite_filter = filter;
        self
    }

    /// The required input ordering for the table's default sort order (spec "Sorting"),
    /// see [`super::sort_requirement`]: terms over top-level columns and fields of
    /// structs at any depth. `None` for the unsorted order.
    ///
    /// Errors: an order a writer cannot sort by, naming the term (the statement fails
    /// rather than write files out of the table's order).
    pub(crate) fn sort_requirement(
        table: &Table,
        schema: &SchemaRef,
    ) -> Result<Option<LexRequirement>> {
        let m = table.metadata();
        let Some(order) = m
            .sort_orders
            .iter()
            .find(|o| o.order_id == m.default_sort_order_id)
        else {
            return Ok(None);
        };
        Self::sort_requirement_of(table, order, schema)
    }

    /// As [`Self::sort_requirement`], for sort order `order` over the table's current
    /// schema (e.g. `rewrite_data_files`' `sort_order` argument).
    pub(crate) fn sort_requirement_of(
        table: &Table,
        order: &crate::spec::sort_order::SortOrder,
        schema: &SchemaRef,
    ) -> Result<Option<LexRequirement>> {
        super::sort_requirement::sort_requirement_of(
            table.metadata().current_schema(),
            order,
            schema,
        )
    }

    /// Commit `replacement` of `base` (the table as loaded) in the same transaction,
    /// before the rows (see the `replacing` field).
    ///
    /// Errors: a replacement while the write is staged for write-audit-publish.
    pub(crate) fn with_replacement(
        mut self,
        base: Table,
        replacement: ReplaceTable,
    ) -> Result<Self> {
        if self.wap_id.is_some() {
            return Err(wap_refusal(
                "CREATE OR REPLACE TABLE … AS",
                &self.target.ident,
            ));
        }
        self.replacing = Some((base, replacement));
        Ok(self)
    }

    /// Create the staged table in the commit of the rows (see the `creating` field).
    ///
    /// Errors: a create while the write is staged for write-audit-publish.
    pub(crate) fn with_create(mut self) -> Result<Self> {
        if self.wap_id.is_some() {
            return Err(wap_refusal("CREATE TABLE … AS", &self.target.ident));
        }
        self.creating = true;
        Ok(self)
    }

    /// Append to branch `branch` instead of `main` (`None`: `main`).
    ///
    /// Errors: a branch while the write is staged for write-audit-publish (Spark refuses
    /// both at once too).
    pub(crate) fn with_branch(mut self, branch: Option<String>) -> Result<Self> {
        if branch.is_some() && self.wap_id.is_some() {
            let statement = match self.op {
                InsertOp::Append => "INSERT INTO a branch",
                _ => "INSERT OVERWRITE of a branch",
            };
            return Err(wap_refusal(statement, &self.target.ident));
        }
        self.branch = branch;
        Ok(self)
    }

    /// Record `order_id` as the sort order of every file written: the plan sorts the
    /// rows of each input partition by it.
    pub(crate) fn with_sort_order_id(mut self, order_id: Option<i64>) -> Self {
        self.sort_order_id = order_id.and_then(|id| i32::try_from(id).ok());
        self
    }

    /// What the writers of this statement write with
    /// ([`IcebergDataFileWriterExec`](super::data_file_writer_exec::IcebergDataFileWriterExec)).
    ///
    /// Errors: a table without a default partition spec.
    pub(crate) fn write_state(&self) -> Result<DataFileWriteState> {
        let m = self.table.metadata();
        Ok(DataFileWriteState {
            table: self.target.ident.to_string(),
            file_io: self.table.file_io().clone(),
            data_location: data_location(&self.table),
            schema: m.current_schema().clone(),
            spec: self.spec()?.clone(),
            properties: m.properties.clone(),
            format_version: m.format_version,
            sort_order_id: self.sort_order_id,
            sorted_field_ids: crate::write::MetricsConfig::default()
                .with_sort_order(crate::write::metrics_config::default_sort_order(m))
                .sorted_field_ids,
            operation_id: self.operation_id.clone(),
        })
    }

    fn spec(&self) -> Result<&crate::spec::PartitionSpec> {
        self.table
            .metadata()
            .default_partition_spec()
            .ok_or_else(|| {
                Error::invalid_data(format!(
                    "table '{}' has no default partition spec",
                    self.target.ident
                ))
            })
    }

    /// Collect the data files the writers wrote (the `data_files` rows of `written`, the
    /// output of [`IcebergDataFileWriterExec`](super::data_file_writer_exec::IcebergDataFileWriterExec)),
    /// then commit them all in one snapshot. Returns the rows written (the files'
    /// record counts).
    ///
    /// Errors: the first writer's error or undecodable row, once every writer's output
    /// has ended (a read of a snapshot that a concurrent `expire_snapshots` expired
    /// meanwhile as a lost race, [`ErrorKind::ValidationFailed`] naming the statement and
    /// the snapshot: `transaction::expired_base::lost_race`): nothing is committed; a writer that fails removes its own files, the
    /// files received are removed here, and so are the statement's other files under
    /// the data location, found by the operation id in their names (those of writers
    /// whose output was lost with a failed task: datafusion-distributed ends every
    /// partition of a task that fails). Or the commit's error (the files are removed
    /// unless the commit's state is unknown). The table is unchanged either way.
    pub(crate) async fn commit_written(
        &self,
        mut written: SendableRecordBatchStream,
    ) -> Result<u64> {
        crate::failpoint::pause("before-data-files");
        let schema = self.table.metadata().current_schema();
        let spec = self.spec()?;
        // every writer's output is read, a failed one's too: the files of the writers
        // that finished are then known, and removed
        let mut files: Vec<DataFile> = vec![];
        let mut failure = None;
        while let Some(batch) = written.next().await {
            let decoded = batch
                .map_err(Error::from)
                .and_then(|b| decode_batch(&b, schema, spec));
            match decoded {
                Ok(decoded) => files.extend(decoded),
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        if let Some(e) = failure {
            for f in &files {
                let _ = self.table.file_io().delete(&f.file_path).await;
            }
            self.remove_operation_files().await;
            // a read whose snapshot a concurrent expiry removed: a lost race
            return Err(crate::transaction::expired_base::lost_race(
                self.statement(),
                e,
            ));
        }
        crate::failpoint::hit("after-data-files");
        let rows = files
            .iter()
            .map(|f| u64::try_from(f.record_count).unwrap_or_default())
            .sum();
        if files.is_empty()
            && self.op == InsertOp::Overwrite
            && self.overwrite_mode == PartitionOverwriteMode::Dynamic
        {
            // no partition to replace: nothing to commit (Spark's `DynamicOverwrite`
            // skips an empty commit too)
            return Ok(0);
        }
        self.commit(files).await?;
        Ok(rows)
    }

    /// Remove every file under the data location whose name holds this statement's
    /// operation id (best effort: a listing or delete that fails leaves files that no
    /// snapshot references, for `remove_orphan_files`).
    async fn remove_operation_files(&self) {
        let io = self.table.file_io();
        let marker = format!("-{}-", self.operation_id);
        let Ok(listed) = io.list_files(&data_location(&self.table)).await else {
            return;
        };
        // a listed location is where the file is (remapped already): deleted as it is
        let unmapped = io.without_remaps();
        for f in listed {
            let name = f.location.rsplit('/').next().unwrap_or_default();
            if name.contains(&marker) {
                let _ = unmapped.delete(&f.location).await;
            }
        }
    }

    /// The statement writing through this sink, as its errors name it.
    fn statement(&self) -> &'static str {
        match (&self.replacing, self.creating, self.op) {
            (Some(_), _, _) => "CREATE OR REPLACE TABLE … AS",
            (None, true, _) => "CREATE TABLE … AS",
            (None, false, InsertOp::Append) => "INSERT INTO",
            (None, false, _) => "INSERT OVERWRITE",
        }
    }

    async fn commit(&self, files: Vec<DataFile>) -> Result<()> {
        let m = self.table.metadata();
        let spec = self.spec()?;
        let paths: Vec<String> = files.iter().map(|f| f.file_path.clone()).collect();
        let branch = self.branch.as_deref().unwrap_or(crate::spec::MAIN_BRANCH);
        // what an overwrite replaces, and checks conflicts from: the branch's snapshot
        let start = m.ref_snapshot_id(branch);
        let txn = match &self.replacing {
            Some((base, replacement)) => Transaction::new(
                Arc::clone(&self.target.catalog),
                self.target.ident.clone(),
                base.clone(),
            )
            .add_action(replacement.clone()),
            None if self.creating => Transaction::create(
                Arc::clone(&self.target.catalog),
                self.target.ident.clone(),
                self.table.clone(),
            ),
            None => Transaction::new(
                Arc::clone(&self.target.catalog),
                self.target.ident.clone(),
                self.table.clone(),
            ),
        }
        // the rows were written with this table's schema (a replacement's staged one)
        .files_written_with(m.current_schema().clone());
        let wap = self.wap_id.as_deref();
        // the snapshot committed: main's (or the branch's) new head, or the staged one
        let (txn, snapshot_id) = match (self.op, self.overwrite_mode) {
            (InsertOp::Append, _) => {
                let mut append = AppendFiles::new(spec.spec_id, files)?.to_branch(branch);
                if let Some(wap) = wap {
                    append = append.stage_only(wap);
                }
                let id = append.snapshot_id();
                (txn.add_action(append), id)
            }
            (_, mode) => {
                let mut overwrite = OverwriteFiles::new(start)
                    .with_isolation_level(IsolationLevel::Serializable)
                    .to_branch(branch)
                    .add_files(spec.spec_id, files)?;
                overwrite = match mode {
                    PartitionOverwriteMode::Static => overwrite.overwrite_by_row_filter(
                        self.overwrite_filter
                            .clone()
                            .unwrap_or(Predicate::AlwaysTrue),
                    ),
                    PartitionOverwriteMode::Dynamic => overwrite.replace_partitions(),
                };
                if let Some(wap) = wap {
                    overwrite = overwrite.stage_only(wap);
                }
                let id = overwrite.snapshot_id();
                (txn.add_action(overwrite), id)
            }
        };
        match txn.commit().await {
            Ok(_) => {
                record_snapshot(&self.metrics, self.wap_id.as_deref(), snapshot_id);
                Ok(())
            }
            Err(e) => {
                if e.kind() != ErrorKind::CommitStateUnknown {
                    for p in &paths {
                        let _ = self.table.file_io().delete(p).await;
                    }
                    self.target
                        .catalog
                        .clean_up_failed_write(&self.target.ident, &e)
                        .await;
                }
                // a commit's failure names the statement and table, as a DELETE's does
                // (a CREATE or REPLACE TABLE … AS names itself: see `staged_create`)
                let statement = match self.op {
                    _ if self.creating || self.replacing.is_some() => return Err(e),
                    InsertOp::Append => "INSERT INTO",
                    _ => "INSERT OVERWRITE",
                };
                Err(e.context(format!("{statement} on '{}'", self.target.ident)))
            }
        }
    }
}

/// The data files of one batch of writer output (its `data_files` column).
fn decode_batch(
    batch: &RecordBatch,
    schema: &crate::spec::Schema,
    spec: &crate::spec::PartitionSpec,
) -> Result<Vec<DataFile>> {
    let column = batch
        .column_by_name(DATA_FILES_COLUMN)
        .and_then(|c| c.as_any().downcast_ref::<BinaryArray>())
        .ok_or_else(|| {
            Error::invalid_data(format!(
                "writer output without a binary '{DATA_FILES_COLUMN}' column"
            ))
        })?;
    let mut files = vec![];
    for bytes in column.iter().flatten() {
        files.extend(decode_written_files(bytes, schema, spec)?);
    }
    Ok(files)
}

impl IcebergDataSink {
    /// The rows' schema (the provider's Arrow schema).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The sink's metrics (`committed_snapshot_id`).
    pub fn metrics(&self) -> MetricsSet {
        self.metrics.clone_inner()
    }
}

impl DisplayAs for IcebergDataSink {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => write!(
                f,
                "IcebergDataSink: table={}, op={}",
                self.target.ident, self.op
            ),
            DisplayFormatType::TreeRender => write!(f, "table={}", self.target.ident),
        }
    }
}
