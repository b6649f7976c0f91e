//! [`IcebergWriteExec`]: the plan node of an `INSERT` into an Iceberg table.
//!
//! DataFusion's own `DataSinkExec` hands its sink one input partition, so one writer
//! would encode every row. This node takes the input as it is partitioned: each input
//! partition is written by its own [`IcebergDataSink`] writer on its own task, and the
//! files of all of them are committed once, in one snapshot. Like `DataSinkExec`, it has
//! one output partition holding one row, `count` (the rows written), and carries the
//! sink's metrics (`committed_snapshot_id`).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{
    Distribution, EquivalenceProperties, LexRequirement, OrderingRequirements, PhysicalExpr,
};
use datafusion::physical_plan::execution_plan::execute_input_stream;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties,
};
use futures::StreamExt;

use super::insert::IcebergDataSink;

/// Writes every input partition in parallel into one Iceberg commit.
#[derive(Debug)]
pub struct IcebergWriteExec {
    input: Arc<dyn ExecutionPlan>,
    sink: Arc<IcebergDataSink>,
    sort: Option<LexRequirement>,
    count_schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl IcebergWriteExec {
    /// Write `input` through `sink`; `sort`: the order each input partition is written
    /// in (the table's sort order), if any.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        sink: Arc<IcebergDataSink>,
        sort: Option<LexRequirement>,
    ) -> Self {
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
            sort,
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
        vec![Distribution::UnspecifiedDistribution]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![true]
    }

    fn required_input_ordering(&self) -> Vec<Option<OrderingRequirements>> {
        vec![self.sort.clone().map(Into::into)]
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
                "IcebergWriteExec takes one child".into(),
            ));
        }
        Ok(Arc::new(Self::new(
            children.swap_remove(0),
            Arc::clone(&self.sink),
            self.sort.clone(),
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
        let streams = (0..self.input.output_partitioning().partition_count())
            .map(|p| {
                execute_input_stream(
                    Arc::clone(&self.input),
                    Arc::clone(self.sink.schema()),
                    p,
                    Arc::clone(&context),
                )
            })
            .collect::<DFResult<Vec<_>>>()?;
        let sink = Arc::clone(&self.sink);
        let stream = futures::stream::once(async move {
            let rows = sink.write_all_streams(streams).await?;
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
