//! A procedure's result that carries the snapshots its commit added, so the CLI prints
//! `committed snapshot <id>` after a `CALL` as it does after an `INSERT`, `DELETE`,
//! `UPDATE` or `MERGE`: a write records its snapshot on its plan's metrics
//! ([`crate::datafusion::snapshot_metric`]), and the CLI reads them back from the plan it
//! ran ([`committed_snapshots`](crate::datafusion::snapshot_metric::committed_snapshots)).
//! A procedure commits before its result is planned, so its result rows are read through
//! a plan node that carries those metrics ([`CommittedSnapshotsExec`]).
//!
//! The snapshots are those the table has after the procedure and had not before
//! ([`new_snapshot_ids`]): a compaction's (`rewrite_data_files`, one per commit of
//! partial progress), `rewrite_position_delete_files`, `rewrite_manifests`, `add_files`,
//! and the snapshot `cherrypick_snapshot`/`publish_changes` write. A procedure that only
//! moves a ref (`rollback_to_snapshot`, `rollback_to_timestamp`, `set_current_snapshot`,
//! `fast_forward`, and a cherry-pick that fast-forwards `main` to the staged snapshot)
//! adds none, and its result row names the snapshots.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::{MemTable, TableProvider, TableType};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use datafusion::prelude::SessionContext;

use super::ResolvedTable;
use crate::datafusion::snapshot_metric::record_snapshot;
use crate::error::Result;

/// The ids of `table`'s snapshots now (empty when it cannot be loaded: the procedure then
/// reports that itself).
pub(super) async fn snapshot_ids(table: &ResolvedTable) -> HashSet<i64> {
    match table.target.catalog().load_table(&table.ident).await {
        Ok(t) => t
            .metadata()
            .snapshots
            .iter()
            .map(|s| s.snapshot_id)
            .collect(),
        Err(_) => HashSet::new(),
    }
}

/// The snapshots `table` has now that are not in `before`, in commit order (sequence
/// number, then timestamp).
pub(super) async fn new_snapshot_ids(table: &ResolvedTable, before: &HashSet<i64>) -> Vec<i64> {
    let Ok(now) = table.target.catalog().load_table(&table.ident).await else {
        return vec![];
    };
    let mut added: Vec<_> = now
        .metadata()
        .snapshots
        .iter()
        .filter(|s| !before.contains(&s.snapshot_id))
        .map(|s| (s.sequence_number, s.timestamp_ms, s.snapshot_id))
        .collect();
    added.sort_unstable();
    added.into_iter().map(|(_, _, id)| id).collect()
}

/// `df` (a procedure's result, a few rows) read through a plan that records `snapshots`
/// as committed; `df` itself when there are none.
///
/// Errors: running `df` (in memory) fails.
pub(super) async fn with_committed(
    ctx: &SessionContext,
    df: DataFrame,
    snapshots: Vec<i64>,
) -> Result<DataFrame> {
    if snapshots.is_empty() {
        return Ok(df);
    }
    let schema: SchemaRef = Arc::clone(df.schema().inner());
    let batches = df.collect().await?;
    let rows = MemTable::try_new(Arc::clone(&schema), vec![batches])?;
    let provider = CommittedResult {
        rows: Arc::new(rows),
        snapshots,
    };
    Ok(ctx.read_table(Arc::new(provider))?)
}

/// A procedure's result rows, whose scan records the snapshots the procedure committed.
#[derive(Debug)]
struct CommittedResult {
    rows: Arc<MemTable>,
    snapshots: Vec<i64>,
}

#[async_trait]
impl TableProvider for CommittedResult {
    fn schema(&self) -> SchemaRef {
        self.rows.schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let input = self.rows.scan(state, projection, filters, limit).await?;
        let metrics = ExecutionPlanMetricsSet::new();
        for id in &self.snapshots {
            record_snapshot(&metrics, None, *id);
        }
        Ok(Arc::new(CommittedSnapshotsExec { input, metrics }))
    }
}

/// Passes its input's rows through, its metrics naming the snapshots a procedure
/// committed (`committed_snapshot_id`).
#[derive(Debug)]
struct CommittedSnapshotsExec {
    input: Arc<dyn ExecutionPlan>,
    metrics: ExecutionPlanMetricsSet,
}

impl DisplayAs for CommittedSnapshotsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CommittedSnapshotsExec")
    }
}

impl ExecutionPlan for CommittedSnapshotsExec {
    fn name(&self) -> &str {
        "CommittedSnapshotsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(
                "CommittedSnapshotsExec takes one child".into(),
            ));
        }
        Ok(Arc::new(Self {
            input: children.swap_remove(0),
            metrics: self.metrics.clone(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        self.input.execute(partition, context)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
