//! [`EqualityDeleteExec`]: equality deletes as a hashed anti-join after the scan.
//!
//! The delete keys are loaded once per scan, shared by every partition, into one
//! [`EqualityDeleteKeys`] per equality-id set (the spec's rules live there). Each input
//! batch carries two hidden constant columns, the data file's sequence number and scope
//! id (see [`delete_planning`](super::delete_planning)). The pushed-down filters are
//! evaluated first, so only rows the query keeps are probed, and one copy of the batch
//! drops both the filtered and the deleted rows. Memory grows with the number of
//! distinct delete keys, not with the data.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, AsArray, BooleanArray, BooleanBufferBuilder, Int32Array, Int64Array, RecordBatch,
};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result as DFResult, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::statistics::{ChildStats, StatisticsArgs};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};
use tokio::sync::OnceCell;

use super::delete_planning::{EqualityDeleteFile, NO_EQUALITY_DELETES};
use crate::delete::{EqualityDeleteKeys, EqualityDeleteLoader};
use crate::error::Error;

/// One set of equality field ids: the files using it and where its key is in the input.
#[derive(Debug, Clone)]
pub(crate) struct EqualityGroup {
    /// The key schema (one field per equality id, table types).
    pub key_schema: SchemaRef,
    /// Indices of the key columns in the input batches.
    pub input_columns: Vec<usize>,
    /// The delete files with this id set.
    pub files: Vec<EqualityDeleteFile>,
}

/// Applies equality deletes to its input and projects away the helper columns.
#[derive(Debug)]
pub struct EqualityDeleteExec {
    input: Arc<dyn ExecutionPlan>,
    groups: Arc<Vec<EqualityGroup>>,
    loader: Arc<EqualityDeleteLoader>,
    loaded: Arc<OnceCell<Arc<Vec<EqualityDeleteKeys>>>>,
    /// Row filter applied before the probe (on the input schema).
    predicate: Option<Arc<dyn PhysicalExpr>>,
    sequence_column: usize,
    scope_column: usize,
    output_columns: Vec<usize>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl EqualityDeleteExec {
    /// Wrap `input`: `predicate` (on the input schema) filters rows before the probe,
    /// `sequence_column` / `scope_column` are the hidden per-file columns,
    /// `output_columns` the input columns to return.
    pub(crate) fn try_new(
        input: Arc<dyn ExecutionPlan>,
        groups: Vec<EqualityGroup>,
        loader: Arc<EqualityDeleteLoader>,
        predicate: Option<Arc<dyn PhysicalExpr>>,
        sequence_column: usize,
        scope_column: usize,
        output_columns: Vec<usize>,
    ) -> DFResult<Self> {
        let schema = Arc::new(input.schema().project(&output_columns)?);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            input.output_partitioning().clone(),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(Self {
            input,
            groups: Arc::new(groups),
            loader,
            loaded: Arc::new(OnceCell::new()),
            predicate,
            sequence_column,
            scope_column,
            output_columns,
            schema,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

/// The state of an [`EqualityDeleteExec`] besides its input, for the plan codec.
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
pub(crate) struct EqualityDeleteParts<'a> {
    pub groups: &'a [EqualityGroup],
    pub loader: &'a Arc<EqualityDeleteLoader>,
    pub predicate: Option<&'a Arc<dyn PhysicalExpr>>,
    pub sequence_column: usize,
    pub scope_column: usize,
    pub output_columns: &'a [usize],
}

impl EqualityDeleteExec {
    /// Its state besides the input (see [`EqualityDeleteParts`]).
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn parts(&self) -> EqualityDeleteParts<'_> {
        EqualityDeleteParts {
            groups: &self.groups,
            loader: &self.loader,
            predicate: self.predicate.as_ref(),
            sequence_column: self.sequence_column,
            scope_column: self.scope_column,
            output_columns: &self.output_columns,
        }
    }
}

async fn load_groups(
    groups: &[EqualityGroup],
    loader: &EqualityDeleteLoader,
) -> crate::Result<Vec<EqualityDeleteKeys>> {
    let mut out = Vec::with_capacity(groups.len());
    for group in groups {
        let mut keys = EqualityDeleteKeys::new(&group.key_schema)?;
        for file in &group.files {
            let batches = loader.load(&file.entry, &group.key_schema).await?;
            for batch in &batches.batches {
                keys.insert(batch.columns(), file.scope, file.entry.data_sequence_number)?;
            }
        }
        out.push(keys);
    }
    Ok(out)
}

fn as_i64s(batch: &RecordBatch, index: usize) -> DFResult<&Int64Array> {
    batch
        .column(index)
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or_else(|| {
            DataFusionError::Internal("equality delete sequence column is not Int64".into())
        })
}

fn as_i32s(batch: &RecordBatch, index: usize) -> DFResult<&Int32Array> {
    batch
        .column(index)
        .as_any()
        .downcast_ref::<Int32Array>()
        .ok_or_else(|| {
            DataFusionError::Internal("equality delete scope column is not Int32".into())
        })
}

/// What one batch loses.
#[derive(Default)]
struct Removed {
    by_filter: usize,
    by_deletes: usize,
}

/// Drop the rows of one batch that fail `predicate` or are deleted; returns the
/// surviving rows (all columns).
fn apply(
    batch: RecordBatch,
    predicate: Option<&Arc<dyn PhysicalExpr>>,
    groups: &[EqualityGroup],
    loaded: &[EqualityDeleteKeys],
    sequence_column: usize,
    scope_column: usize,
) -> DFResult<(RecordBatch, Removed)> {
    let rows = batch.num_rows();
    let mut removed = Removed::default();
    // The rows kept so far as a bitmap (a NULL filter result drops the row).
    // The filter may fail on rows that deletes remove (`10 / (id - 2)` where the row with
    // id 2 is deleted). Then this batch is probed unfiltered: DataFusion's own
    // `FilterExec` above evaluates the Inexact filters on the surviving rows and raises
    // the error only if a surviving row causes it; the Exact (identity-partition) ones
    // were decided by file pruning.
    let filtered = predicate.and_then(|p| {
        let result = p.evaluate(&batch).and_then(|v| v.into_array(rows)).ok()?;
        let mask = result.as_boolean_opt()?;
        Some(match mask.nulls() {
            Some(nulls) => mask.values() & nulls.inner(),
            None => mask.values().clone(),
        })
    });
    let mut keep = filtered.unwrap_or_else(|| BooleanBuffer::new_set(rows));
    removed.by_filter = rows - keep.count_set_bits();
    let seqs = as_i64s(&batch, sequence_column)?;
    let all_without_deletes =
        seqs.null_count() == 0 && seqs.values().iter().all(|s| *s == NO_EQUALITY_DELETES);
    if !all_without_deletes && removed.by_filter < rows {
        let scopes = as_i32s(&batch, scope_column)?;
        for (group, keys) in groups.iter().zip(loaded) {
            if keys.is_empty() {
                continue;
            }
            let columns: Vec<_> = group
                .input_columns
                .iter()
                .map(|i| Arc::clone(batch.column(*i)))
                .collect();
            let deleted = keys.probe(&columns, scopes, seqs, keep.set_indices())?;
            if !deleted.is_empty() {
                removed.by_deletes += deleted.len();
                let mut builder = BooleanBufferBuilder::new(rows);
                builder.append_buffer(&keep);
                for i in deleted {
                    builder.set_bit(i, false);
                }
                keep = builder.finish();
            }
        }
    }
    if removed.by_filter + removed.by_deletes == 0 {
        return Ok((batch, removed));
    }
    let mask = BooleanArray::new(keep, None);
    Ok((filter_record_batch(&batch, &mask)?, removed))
}

impl DisplayAs for EqualityDeleteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let files: usize = self.groups.iter().map(|g| g.files.len()).sum();
        write!(
            f,
            "EqualityDeleteExec: equality_delete_files={files}, equality_id_sets={}",
            self.groups.len()
        )?;
        if let Some(p) = &self.predicate {
            write!(f, ", predicate={p}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for EqualityDeleteExec {
    fn name(&self) -> &str {
        "EqualityDeleteExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        match &self.predicate {
            Some(p) => f(p),
            None => Ok(TreeNodeRecursion::Continue),
        }
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(
                "EqualityDeleteExec takes one child".into(),
            ));
        }
        let mut exec = EqualityDeleteExec::try_new(
            children.swap_remove(0),
            self.groups.as_ref().clone(),
            Arc::clone(&self.loader),
            self.predicate.clone(),
            self.sequence_column,
            self.scope_column,
            self.output_columns.clone(),
        )?;
        exec.loaded = Arc::clone(&self.loaded);
        Ok(Arc::new(exec))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let groups = Arc::clone(&self.groups);
        let loader = Arc::clone(&self.loader);
        let loaded = Arc::clone(&self.loaded);
        let (seq_col, scope_col) = (self.sequence_column, self.scope_column);
        let output = self.output_columns.clone();
        let predicate = self.predicate.clone();
        let removed: Count = MetricBuilder::new(&self.metrics)
            .counter("rows_deleted_by_equality_deletes", partition);
        let baseline = BaselineMetrics::new(&self.metrics, partition);
        let stream = futures::stream::once(async move {
            let state = loaded
                .get_or_try_init(|| async { load_groups(&groups, &loader).await.map(Arc::new) })
                .await
                .map_err(|e: Error| DataFusionError::from(e))?;
            let state = Arc::clone(state);
            Ok::<_, DataFusionError>(input.and_then(move |batch| {
                let timer = baseline.elapsed_compute().timer();
                let result = apply(
                    batch,
                    predicate.as_ref(),
                    &groups,
                    &state,
                    seq_col,
                    scope_col,
                )
                .and_then(|(b, n)| {
                    removed.add(n.by_deletes);
                    Ok(b.project(&output)?)
                });
                timer.done();
                if let Ok(b) = &result {
                    baseline.record_output(b.num_rows());
                }
                futures::future::ready(result)
            }))
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            stream.boxed(),
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    /// The input's statistics for the output columns, inexact: deletes (and the filter)
    /// only remove rows, so bounds still hold and counts become upper estimates. Without
    /// them DataFusion could not size joins over tables with equality deletes.
    fn child_stats_requests(&self, partition: Option<usize>) -> Vec<ChildStats> {
        vec![ChildStats::At(partition)]
    }

    fn statistics_from_inputs(
        &self,
        input_stats: &[Arc<Statistics>],
        _args: &StatisticsArgs,
    ) -> DFResult<Arc<Statistics>> {
        Ok(super::statistics::after_removing_rows(
            input_stats,
            &self.output_columns,
            &self.schema,
        ))
    }
}
