//! [`IcebergWriteExec`]: the plan node of an `INSERT` into an Iceberg table that
//! commits.
//!
//! Its input is an
//! [`IcebergDataFileWriterExec`](super::data_file_writer_exec::IcebergDataFileWriterExec)
//! under a `CoalescePartitionsExec`: each partition of the rows is written by its own
//! writer, in parallel, and this node collects the data files they all wrote and commits
//! them once, in one snapshot, on the node that runs it (the coordinator of a distributed
//! engine: datafusion-distributed puts the writers in a stage on the workers and keeps
//! this node on the coordinator, above the stage's `NetworkCoalesceExec`). Like
//! DataFusion's `DataSinkExec`, it has one output partition holding one row, `count` (the
//! rows written), and carries the sink's metrics (`committed_snapshot_id`).

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

use super::insert::IcebergDataSink;

/// Commits the data files its input wrote, in one Iceberg snapshot.
#[derive(Debug)]
pub struct IcebergWriteExec {
    input: Arc<dyn ExecutionPlan>,
    sink: Arc<IcebergDataSink>,
    count_schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl IcebergWriteExec {
    /// Commit through `sink` the data files `input` (an
    /// [`IcebergDataFileWriterExec`](super::data_file_writer_exec::IcebergDataFileWriterExec),
    /// or a plan over one that keeps its rows) wrote.
    pub fn new(input: Arc<dyn ExecutionPlan>, sink: Arc<IcebergDataSink>) -> Self {
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
            sink,
            count_schema,
            properties,
        }
    }
}

impl DisplayAs for IcebergWriteExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(f, "IcebergWriteExec: ")?;
                self.sink.fmt_as(t, f)
            }
            DisplayFormatType::TreeRender => self.sink.fmt_as(t, f),
        }
    }
}

impl ExecutionPlan for IcebergWriteExec {
    fn name(&self) -> &str {
        "IcebergWriteExec"
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
        // one commit: every writer's files arrive in one partition (on one node)
        vec![Distribution::SinglePartition]
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
                "IcebergWriteExec takes one child".into(),
            ));
        }
        Ok(Arc::new(Self::new(
            children.swap_remove(0),
            Arc::clone(&self.sink),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "IcebergWriteExec has one output partition, asked for {partition}"
            )));
        }
        // one input partition once planned; every partition otherwise
        let written = (0..self.input.output_partitioning().partition_count())
            .map(|p| self.input.execute(p, Arc::clone(&context)))
            .collect::<DFResult<Vec<_>>>()?;
        let written: SendableRecordBatchStream = Box::pin(RecordBatchStreamAdapter::new(
            self.input.schema(),
            futures::stream::select_all(written),
        ));
        let sink = Arc::clone(&self.sink);
        let stream = futures::stream::once(async move {
            let rows = sink.commit_written(written).await?;
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
        Some(self.sink.metrics())
    }
}
