//! [`IcebergRowLevelExec`]: the plan node of a `DELETE`, `UPDATE` or `TRUNCATE` on an
//! Iceberg table. Its child is the row-level scan of the rows the statement may change;
//! every partition of it is read on its own task, and the statement commits once. Like
//! DataFusion's DML nodes it has one output partition holding one row, `count`, and
//! carries `committed_snapshot_id` in its metrics.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{Distribution, EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties,
};
use futures::StreamExt;

use super::job::RowLevelJob;

/// Runs one row-level statement over its scan and commits it.
#[derive(Debug)]
pub struct IcebergRowLevelExec {
    input: Arc<dyn ExecutionPlan>,
    job: Arc<RowLevelJob>,
    count_schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl IcebergRowLevelExec {
    pub(crate) fn new(input: Arc<dyn ExecutionPlan>, job: Arc<RowLevelJob>) -> Self {
        let count_schema = Arc::new(ArrowSchema::new(vec![Field::new(
            "count",
            DataType::UInt64,
            false,
        )]));
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&count_schema)),
            Partitioning::UnknownPartitioning(1),
            input.pipeline_behavior(),
            input.boundedness(),
        ));
        Self {
            input,
            job,
            count_schema,
            properties,
        }
    }
}

impl DisplayAs for IcebergRowLevelExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(f, "IcebergRowLevelExec: {}", self.job.describe())
            }
            DisplayFormatType::TreeRender => write!(f, "{}", self.job.describe()),
        }
    }
}

impl ExecutionPlan for IcebergRowLevelExec {
    fn name(&self) -> &str {
        "IcebergRowLevelExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
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

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![Distribution::UnspecifiedDistribution]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![false]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(
                "IcebergRowLevelExec takes one child".into(),
            ));
        }
        Ok(Arc::new(Self::new(
            children.swap_remove(0),
            Arc::clone(&self.job),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "IcebergRowLevelExec has one output partition, asked for {partition}"
            )));
        }
        let streams = (0..self.input.output_partitioning().partition_count())
            .map(|p| self.input.execute(p, Arc::clone(&context)))
            .collect::<DFResult<Vec<_>>>()?;
        let job = Arc::clone(&self.job);
        let stream = futures::stream::once(async move {
            let rows = job.run(streams, context).await?;
            let count: ArrayRef = Arc::new(UInt64Array::from(vec![rows]));
            Ok(RecordBatch::try_from_iter_with_nullable(vec![(
                "count", count, false,
            )])?)
        })
        .boxed();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.count_schema),
            stream,
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.job.metrics.clone_inner())
    }
}
