//! `INSERT INTO` / `INSERT OVERWRITE` into Iceberg tables: [`IcebergDataSink`], the
//! DataFusion `DataSink` under `DataSinkExec` that `IcebergTableProvider::insert_into`
//! plans.
//!
//! The sink streams the rows into Parquet data files ([`PartitionedDataFileWriter`]:
//! field ids, partition fan-out, rolling, metrics per the table's properties) and then
//! commits them through the crate's one commit path ([`Transaction`]) to the catalog the
//! table was loaded from:
//!
//! | statement | action |
//! |---|---|
//! | `INSERT INTO t …` | [`AppendFiles`] |
//! | `INSERT OVERWRITE t …`, `icefloe.partition_overwrite_mode = 'static'` (default) | [`OverwriteFiles`] removing every file (the whole table) |
//! | `INSERT OVERWRITE t …`, `icefloe.partition_overwrite_mode = 'dynamic'` | [`OverwriteFiles::replace_partitions`]: the partitions the new rows fall in (Spark's `partitionOverwriteMode=dynamic`) |
//!
//! The overwrite is validated at [`IsolationLevel::Serializable`] against the snapshot
//! the statement was planned on. When the table has a sort order whose fields are
//! identity transforms of top-level columns, the rows are sorted by it before writing.
//! A commit that fails removes the data files the statement wrote (unless its state is
//! unknown: then they are kept, as the commit may have landed). The statement's result
//! is DataFusion's usual one row, `count`: the rows written.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::Result as DFResult;
use datafusion::datasource::sink::DataSink;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{LexRequirement, PhysicalSortRequirement};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;

use super::options::{IcefloeOptions, PartitionOverwriteMode};
use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::expr::Predicate;
use crate::spec::Transform;
use crate::table::Table;
use crate::transaction::{AppendFiles, IsolationLevel, OverwriteFiles, Transaction};
use crate::write::{DataFileWriterConfig, PartitionedDataFileWriter};

/// Table property: where data files go (default `<location>/data`).
pub const DATA_PATH: &str = "write.data.path";

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
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// The required input ordering for the table's sort order, when every sort field
    /// is an identity transform of a top-level column (`None` otherwise: rows are
    /// written in arrival order).
    pub(crate) fn sort_requirement(table: &Table, schema: &SchemaRef) -> Option<LexRequirement> {
        let m = table.metadata();
        let order = m
            .sort_orders
            .iter()
            .find(|o| o.order_id == m.default_sort_order_id)?;
        let current = m.current_schema();
        let mut reqs = vec![];
        for f in &order.fields {
            if f.transform != Transform::Identity {
                return None;
            }
            let field = current.columns().iter().find(|c| c.id == f.source_id)?;
            let index = schema.index_of(&field.name).ok()?;
            reqs.push(PhysicalSortRequirement::new(
                Arc::new(Column::new(&field.name, index)),
                Some(SortOptions {
                    descending: f.direction.eq_ignore_ascii_case("desc"),
                    nulls_first: f.null_order.eq_ignore_ascii_case("nulls-first"),
                }),
            ));
        }
        LexRequirement::new(reqs)
    }

    fn data_location(&self) -> String {
        let m = self.table.metadata();
        match m.properties.get(DATA_PATH) {
            Some(p) => p.trim_end_matches('/').to_string(),
            None => format!("{}/data", m.location),
        }
    }

    async fn write(&self, mut data: SendableRecordBatchStream) -> Result<u64> {
        let m = self.table.metadata();
        let spec = m.default_partition_spec().ok_or_else(|| {
            Error::invalid_data(format!(
                "table '{}' has no default partition spec",
                self.target.ident
            ))
        })?;
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
        let files = writer.close().await?;
        crate::failpoint::hit("after-data-files");
        let paths: Vec<String> = files.iter().map(|f| f.file_path.clone()).collect();
        let start = m.current_snapshot_id;
        let txn = Transaction::new(
            Arc::clone(&self.target.catalog),
            self.target.ident.clone(),
            self.table.clone(),
        );
        let txn = match (self.op, self.overwrite_mode) {
            (InsertOp::Append, _) => txn.add_action(AppendFiles::new(spec.spec_id, files)?),
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
                if let Some(id) = table.metadata().current_snapshot_id {
                    MetricBuilder::new(&self.metrics)
                        .global_gauge(COMMITTED_SNAPSHOT_METRIC)
                        .set(usize::try_from(id).unwrap_or_default());
                }
                Ok(rows)
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

#[async_trait]
impl DataSink for IcebergDataSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        _context: &Arc<TaskContext>,
    ) -> DFResult<u64> {
        Ok(self.write(data).await?)
    }
}
