//! [`EqualityDeleteExec`]: equality deletes as a hashed anti-join after the scan.
//!
//! Spec: "Equality Delete Files" and "Scan Planning". A data row is deleted by an
//! equality delete row whose `equality_ids` columns equal the row's (a NULL key equals
//! NULL only) when the delete's data sequence number is strictly greater than the data
//! file's, and the delete is global (written unpartitioned) or written for the data file's
//! spec and partition.
//!
//! The delete keys are loaded once per scan, shared by every partition, into one hash map
//! per equality-id set: key (Arrow row format) → the greatest delete sequence number,
//! globally and per partition scope. Each input batch carries two hidden constant
//! columns, the data file's sequence number and scope id (see
//! [`delete_planning`](super::delete_planning)); a row is probed with its vectorised key
//! and dropped when a greater sequence number is found. Memory grows with the number of
//! distinct delete keys, not with the data.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{Array, BooleanArray, Int32Array, Int64Array, RecordBatch};
use datafusion::arrow::compute::{cast, filter_record_batch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::row::{RowConverter, SortField};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, HashMap, Result as DFResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};
use tokio::sync::OnceCell;

use super::delete_planning::{EqualityDeleteFile, GLOBAL_SCOPE};
use crate::delete::EqualityDeleteLoader;
use crate::error::Error;

/// The greatest delete sequence numbers of one key.
#[derive(Debug, Default, Clone)]
struct KeySequences {
    global: Option<i64>,
    by_scope: Vec<(i32, i64)>,
}

impl KeySequences {
    fn record(&mut self, scope: i32, seq: i64) {
        if scope == GLOBAL_SCOPE {
            self.global = Some(self.global.map_or(seq, |s| s.max(seq)));
        } else if let Some(e) = self.by_scope.iter_mut().find(|e| e.0 == scope) {
            e.1 = e.1.max(seq);
        } else {
            self.by_scope.push((scope, seq));
        }
    }

    fn deletes(&self, scope: i32, data_seq: i64) -> bool {
        self.global.is_some_and(|s| s > data_seq)
            || self
                .by_scope
                .iter()
                .any(|(sc, s)| *sc == scope && *s > data_seq)
    }
}

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

#[derive(Debug)]
struct LoadedGroup {
    converter: RowConverter,
    keys: HashMap<Box<[u8]>, KeySequences>,
}

/// Applies equality deletes to its input and projects away the helper columns.
#[derive(Debug)]
pub struct EqualityDeleteExec {
    input: Arc<dyn ExecutionPlan>,
    groups: Arc<Vec<EqualityGroup>>,
    loader: Arc<EqualityDeleteLoader>,
    loaded: Arc<OnceCell<Arc<Vec<LoadedGroup>>>>,
    sequence_column: usize,
    scope_column: usize,
    output_columns: Vec<usize>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl EqualityDeleteExec {
    /// Wrap `input`: `sequence_column` / `scope_column` are the hidden per-file columns,
    /// `output_columns` the input columns to return.
    pub(crate) fn try_new(
        input: Arc<dyn ExecutionPlan>,
        groups: Vec<EqualityGroup>,
        loader: Arc<EqualityDeleteLoader>,
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
            sequence_column,
            scope_column,
            output_columns,
            schema,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

async fn load_groups(
    groups: &[EqualityGroup],
    loader: &EqualityDeleteLoader,
) -> crate::Result<Vec<LoadedGroup>> {
    let mut out = Vec::with_capacity(groups.len());
    for group in groups {
        let fields = group
            .key_schema
            .fields()
            .iter()
            .map(|f| SortField::new(f.data_type().clone()))
            .collect();
        let converter = RowConverter::new(fields)?;
        let mut keys: HashMap<Box<[u8]>, KeySequences> = HashMap::new();
        for file in &group.files {
            let batches = loader.load(&file.entry, &group.key_schema).await?;
            let seq = file.entry.data_sequence_number;
            for batch in &batches.batches {
                let rows = converter.convert_columns(batch.columns())?;
                for row in rows.iter() {
                    keys.entry(row.as_ref().into())
                        .or_default()
                        .record(file.scope, seq);
                }
            }
        }
        out.push(LoadedGroup { converter, keys });
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

/// Drop the deleted rows of one batch; returns the surviving rows (all columns) and the
/// number removed.
fn apply(
    batch: RecordBatch,
    groups: &[EqualityGroup],
    loaded: &[LoadedGroup],
    sequence_column: usize,
    scope_column: usize,
) -> DFResult<(RecordBatch, usize)> {
    let seqs = as_i64s(&batch, sequence_column)?;
    if seqs.null_count() == 0
        && seqs
            .values()
            .iter()
            .all(|s| *s == super::delete_planning::NO_EQUALITY_DELETES)
    {
        return Ok((batch, 0));
    }
    let scopes = as_i32s(&batch, scope_column)?;
    let mut keep = vec![true; batch.num_rows()];
    for (group, state) in groups.iter().zip(loaded) {
        if state.keys.is_empty() {
            continue;
        }
        let columns = group
            .input_columns
            .iter()
            .zip(group.key_schema.fields())
            .map(|(i, f)| {
                let c = batch.column(*i);
                if c.data_type() == f.data_type() {
                    Ok(Arc::clone(c))
                } else {
                    cast(c, f.data_type())
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rows = state.converter.convert_columns(&columns)?;
        for (i, k) in keep.iter_mut().enumerate() {
            if *k {
                if let Some(found) = state.keys.get(rows.row(i).as_ref()) {
                    if found.deletes(scopes.value(i), seqs.value(i)) {
                        *k = false;
                    }
                }
            }
        }
    }
    let removed = keep.iter().filter(|k| !**k).count();
    if removed == 0 {
        return Ok((batch, 0));
    }
    Ok((
        filter_record_batch(&batch, &BooleanArray::from(keep))?,
        removed,
    ))
}

impl DisplayAs for EqualityDeleteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let files: usize = self.groups.iter().map(|g| g.files.len()).sum();
        write!(
            f,
            "EqualityDeleteExec: equality_delete_files={files}, equality_id_sets={}",
            self.groups.len()
        )
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
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
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
                let result =
                    apply(batch, &groups, &state, seq_col, scope_col).and_then(|(b, n)| {
                        removed.add(n);
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
}
