//! `INSERT INTO` / `INSERT OVERWRITE` into Iceberg tables: [`IcebergDataSink`], the
//! write of one statement, run by [`IcebergWriteExec`](super::write_exec::IcebergWriteExec)
//! (what `IcebergTableProvider::insert_into` plans).
//!
//! Each input partition streams its rows into Parquet data files with a writer of its
//! own, in parallel ([`PartitionedDataFileWriter`]: field ids, partition fan-out,
//! rolling, metrics per the table's properties); then all the files are committed in
//! one snapshot through the crate's one commit path ([`Transaction`]) to the catalog
//! the table was loaded from:
//!
//! | statement | action |
//! |---|---|
//! | `INSERT INTO t …` | [`AppendFiles`] |
//! | `INSERT OVERWRITE t …`, `icefloe.partition_overwrite_mode = 'static'` (default) | [`OverwriteFiles`] removing every file (the whole table) |
//! | `INSERT OVERWRITE t …`, `icefloe.partition_overwrite_mode = 'dynamic'` | [`OverwriteFiles::replace_partitions`]: the partitions the new rows fall in (Spark's `partitionOverwriteMode=dynamic`) |
//!
//! The overwrite is validated at [`IsolationLevel::Serializable`] against the snapshot
//! the statement was planned on. When the table has a sort order (`ALTER TABLE … WRITE
//! ORDERED BY`) over top-level columns, each input partition is sorted by it before
//! writing (a DataFusion `SortExec`; transforms such as `bucket(4, c)` through
//! [`IcebergTransformExpr`]), so every data file is sorted and records the order's id
//! in `sort_order_id`.
//! A commit that fails removes the data files the statement wrote (unless its state is
//! unknown: then they are kept, as the commit may have landed). The statement's result
//! is DataFusion's usual one row, `count`: the rows written.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{LexRequirement, PhysicalExpr, PhysicalSortRequirement};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;

use super::options::{IcefloeOptions, PartitionOverwriteMode};
use super::transform_expr::IcebergTransformExpr;
use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::expr::Predicate;
use crate::spec::{DataFile, Transform};
use crate::table::Table;
use crate::transaction::{AppendFiles, IsolationLevel, OverwriteFiles, Transaction};
use crate::write::{DataFileWriterConfig, PartitionedDataFileWriter};

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
    /// `committed_snapshot_id` (a gauge) once the statement committed; shown by
    /// `EXPLAIN ANALYZE` and printed by the CLI.
    metrics: ExecutionPlanMetricsSet,
}

/// The name of the sink's metric holding the committed snapshot id.
pub const COMMITTED_SNAPSHOT_METRIC: &str = "committed_snapshot_id";

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
            Some(o) => PartitionOverwriteMode::parse(&o.partition_overwrite_mode)?,
            None => PartitionOverwriteMode::Static,
        };
        Ok(Self {
            target,
            table,
            schema,
            op,
            overwrite_mode,
            sort_order_id: None,
            branch: None,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// The required input ordering for the table's default sort order (spec "Sorting"),
    /// its terms over top-level columns: identity terms sort by the column, other
    /// transforms by an [`IcebergTransformExpr`] of it. `None` for the unsorted order or
    /// an order DataFusion cannot sort by here (a nested source column, an unknown
    /// transform): rows are then written in arrival order and the files record no
    /// sort order.
    pub(crate) fn sort_requirement(table: &Table, schema: &SchemaRef) -> Option<LexRequirement> {
        let m = table.metadata();
        let order = m
            .sort_orders
            .iter()
            .find(|o| o.order_id == m.default_sort_order_id)?;
        Self::sort_requirement_of(table, order, schema)
    }

    /// As [`Self::sort_requirement`], for sort order `order` over the table's current
    /// schema (e.g. `rewrite_data_files`' `sort_order` argument).
    pub(crate) fn sort_requirement_of(
        table: &Table,
        order: &crate::spec::sort_order::SortOrder,
        schema: &SchemaRef,
    ) -> Option<LexRequirement> {
        let current = table.metadata().current_schema();
        let mut reqs = vec![];
        for f in &order.fields {
            let field = current.columns().iter().find(|c| c.id == f.source_id)?;
            let index = schema.index_of(&field.name).ok()?;
            let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new(&field.name, index));
            let expr = match f.transform {
                Transform::Identity => column,
                Transform::Void => continue,
                t => Arc::new(
                    IcebergTransformExpr::try_new(t, *field.field_type.as_primitive()?, column)
                        .ok()?,
                ),
            };
            reqs.push(PhysicalSortRequirement::new(
                expr,
                Some(SortOptions {
                    descending: f.direction.eq_ignore_ascii_case("desc"),
                    nulls_first: f.null_order.eq_ignore_ascii_case("nulls-first"),
                }),
            ));
        }
        LexRequirement::new(reqs)
    }

    /// Append to branch `branch` instead of `main` (`None`: `main`).
    pub(crate) fn with_branch(mut self, branch: Option<String>) -> Self {
        self.branch = branch;
        self
    }

    /// Record `order_id` as the sort order of every file written: the plan sorts the
    /// rows of each input partition by it.
    pub(crate) fn with_sort_order_id(mut self, order_id: Option<i64>) -> Self {
        self.sort_order_id = order_id.and_then(|id| i32::try_from(id).ok());
        self
    }

    fn data_location(&self) -> String {
        data_location(&self.table)
    }

    /// Write one input stream into data files (its own writer; memory: one open file
    /// per partition value it meets). On error, the files it wrote are removed.
    async fn write_stream(
        &self,
        mut data: SendableRecordBatchStream,
    ) -> Result<(Vec<DataFile>, u64)> {
        let m = self.table.metadata();
        let spec = self.spec()?;
        let config = DataFileWriterConfig::from_properties(&m.properties)?;
        let mut writer = PartitionedDataFileWriter::new(
            self.table.file_io().clone(),
            &self.data_location(),
            m.current_schema(),
            spec,
            config,
        )?;
        let mut rows = 0u64;
        while let Some(batch) = data.next().await {
            let written = match batch {
                Ok(batch) => {
                    rows += batch.num_rows() as u64;
                    writer.write(&batch).await
                }
                Err(e) => Err(Error::from(e)),
            };
            if let Err(e) = written {
                let _ = writer.abort().await;
                return Err(e);
            }
        }
        let mut files = writer.close().await?;
        for f in &mut files {
            f.sort_order_id = self.sort_order_id;
        }
        Ok((files, rows))
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

    /// Write every input stream at once (one writer each, on its own task), then commit
    /// all the files in one snapshot. Returns the rows written.
    ///
    /// Errors: a stream's or writer's error (every file written is removed), or the
    /// commit's (the files are removed unless the commit's state is unknown).
    pub(crate) async fn write_all_streams(
        self: Arc<Self>,
        streams: Vec<SendableRecordBatchStream>,
    ) -> Result<u64> {
        let mut tasks = tokio::task::JoinSet::new();
        for stream in streams {
            let this = Arc::clone(&self);
            tasks.spawn(async move { this.write_stream(stream).await });
        }
        let (mut files, mut rows, mut failure) = (vec![], 0u64, None);
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok((f, n))) => {
                    files.extend(f);
                    rows += n;
                }
                Ok(Err(e)) => failure = failure.or(Some(e)),
                Err(e) => {
                    failure = failure.or(Some(
                        Error::new(ErrorKind::Io, "a data file writer task failed").with_source(e),
                    ))
                }
            }
        }
        if let Some(e) = failure {
            for f in &files {
                let _ = self.table.file_io().delete(&f.file_path).await;
            }
            return Err(e);
        }
        crate::failpoint::hit("after-data-files");
        self.commit(files).await?;
        Ok(rows)
    }

    async fn commit(&self, files: Vec<DataFile>) -> Result<()> {
        let m = self.table.metadata();
        let spec = self.spec()?;
        let paths: Vec<String> = files.iter().map(|f| f.file_path.clone()).collect();
        let start = m.current_snapshot_id;
        let txn = Transaction::new(
            Arc::clone(&self.target.catalog),
            self.target.ident.clone(),
            self.table.clone(),
        );
        let txn = match (self.op, self.overwrite_mode) {
            (InsertOp::Append, _) => {
                let append = AppendFiles::new(spec.spec_id, files)?;
                txn.add_action(match &self.branch {
                    Some(branch) => append.to_branch(branch),
                    None => append,
                })
            }
            (_, PartitionOverwriteMode::Static) => txn.add_action(
                OverwriteFiles::new(start)
                    .overwrite_by_row_filter(Predicate::AlwaysTrue)
                    .with_isolation_level(IsolationLevel::Serializable)
                    .add_files(spec.spec_id, files)?,
            ),
            (_, PartitionOverwriteMode::Dynamic) => txn.add_action(
                OverwriteFiles::new(start)
                    .replace_partitions()
                    .with_isolation_level(IsolationLevel::Serializable)
                    .add_files(spec.spec_id, files)?,
            ),
        };
        match txn.commit().await {
            Ok(table) => {
                let branch = self.branch.as_deref().unwrap_or(crate::spec::MAIN_BRANCH);
                if let Some(id) = table.metadata().ref_snapshot_id(branch) {
                    MetricBuilder::new(&self.metrics)
                        .global_gauge(COMMITTED_SNAPSHOT_METRIC)
                        .set(usize::try_from(id).unwrap_or_default());
                }
                Ok(())
            }
            Err(e) => {
                if e.kind() != ErrorKind::CommitStateUnknown {
                    for p in &paths {
                        let _ = self.table.file_io().delete(p).await;
                    }
                }
                Err(e)
            }
        }
    }
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
