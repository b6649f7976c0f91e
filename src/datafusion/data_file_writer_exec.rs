//! [`IcebergDataFileWriterExec`]: the half of an `INSERT` that writes, wherever its
//! input runs.
//!
//! Each input partition streams its rows into Parquet data files with a writer of its
//! own ([`PartitionedDataFileWriter`]: field ids, partition fan-out, rolling, metrics per
//! the table's properties; sorted by the table's sort order when the plan sorts it) and
//! emits one row, `data_files`: the files it wrote, encoded with
//! [`encode_written_files`]. Nothing here commits: the rows go to
//! [`IcebergWriteExec`](super::IcebergWriteExec), which commits them all at once on the
//! node that planned the statement.
//!
//! Under `write.distribution-mode` `hash` or `range` (Spark's default for a partitioned
//! table) the node asks DataFusion for its input hash-partitioned by the partition
//! values, so each partition is written by one writer
//! ([`write_distribution`](super::write_distribution)).
//!
//! The node holds only what writing needs ([`DataFileWriteState`]: FileIO, data
//! location, schema, partition spec, properties), none of it process-local, so
//! `IcebergPhysicalCodec` can send it to a worker of a distributed engine: an
//! `INSERT … SELECT` then writes its files on the workers that produce its rows.
//!
//! Failure: a partition whose input or writer fails removes the files it wrote and
//! returns the error; a partition whose stream is dropped before it finished (its task
//! failed, the query was cancelled) removes its files in the background. The committer
//! then commits nothing and removes the rest (see
//! [`IcebergDataSink::commit_written`](super::insert::IcebergDataSink::commit_written)).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BinaryArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{
    Distribution, EquivalenceProperties, LexRequirement, OrderingRequirements, PhysicalExpr,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties,
};
use futures::StreamExt;

use super::write_distribution::partition_distribution;
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::{DataFile, FormatVersion, PartitionSpec, Schema};
use crate::write::{encode_written_files, DataFileWriterConfig, PartitionedDataFileWriter};

/// The name of the writer's output column: the encoded data files of one partition.
pub const DATA_FILES_COLUMN: &str = "data_files";

/// The writer's output schema: one non-null `data_files` binary column.
pub(crate) fn written_files_schema() -> SchemaRef {
    Arc::new(ArrowSchema::new(vec![Field::new(
        DATA_FILES_COLUMN,
        DataType::Binary,
        false,
    )]))
}

/// Run partition `partition` of `input`, the rows to write into a table of Arrow schema
/// `sink_schema` (of Iceberg schema `schema`): a null in a required top-level column the
/// input may leave null is an error naming the column (DataFusion's
/// `execute_input_stream` names it by its index), and saying when the column has no
/// `write-default`, the value an `INSERT` that does not list it gets.
fn execute_required_checked(
    input: Arc<dyn ExecutionPlan>,
    sink_schema: SchemaRef,
    schema: &Schema,
    partition: usize,
    context: Arc<TaskContext>,
) -> DFResult<SendableRecordBatchStream> {
    let stream = input.execute(partition, context)?;
    let risky: Vec<(usize, String)> = sink_schema
        .fields()
        .iter()
        .zip(input.schema().fields().iter())
        .enumerate()
        .filter(|(_, (sink, given))| !sink.is_nullable() && given.is_nullable())
        .map(|(i, (sink, _))| {
            let no_default = schema
                .field_by_name(sink.name())
                .is_some_and(|f| f.write_default.is_none());
            let message = format!(
                "column '{}' is required (NOT NULL) but a row to write holds null for it{}",
                sink.name(),
                if no_default {
                    " (it has no write-default, so an INSERT must give it a value)"
                } else {
                    ""
                }
            );
            (i, message)
        })
        .collect();
    if risky.is_empty() {
        return Ok(stream);
    }
    let checked = stream.map(move |batch| {
        let batch = batch?;
        for (i, message) in &risky {
            let nulls = batch
                .columns()
                .get(*i)
                .and_then(|c| c.logical_nulls())
                .map_or(0, |n| n.null_count());
            if nulls > 0 {
                return Err(Error::invalid_argument(message.clone()).into());
            }
        }
        Ok(batch)
    });
    Ok(Box::pin(RecordBatchStreamAdapter::new(
        sink_schema,
        checked,
    )))
}

/// What writing a table's data files needs, and nothing tied to one process.
#[derive(Debug, Clone)]
pub struct DataFileWriteState {
    /// The table's name, for messages and `EXPLAIN`.
    pub table: String,
    /// How to reach the table's storage.
    pub file_io: FileIO,
    /// Where data files go (`write.data.path`, else `<location>/data`).
    pub data_location: String,
    /// The table's current schema (the rows' columns, by field id).
    pub schema: Schema,
    /// The table's default partition spec (the files' partition tuples).
    pub spec: PartitionSpec,
    /// The table's properties (`write.*`: file size, Parquet codec, metrics modes).
    pub properties: HashMap<String, String>,
    /// The table's format version (the layout the files are encoded in).
    pub format_version: FormatVersion,
    /// The sort order every file is written in (recorded as `sort_order_id`), if any;
    /// `None`: unsorted (recorded as 0, as Iceberg Java's writers do).
    pub sort_order_id: Option<i32>,
    /// The field ids of the table's default sort order's columns whose metrics mode is
    /// promoted ([`MetricsConfig::with_sort_order`](crate::write::MetricsConfig::with_sort_order)),
    /// whether or not this write sorts by it (Java `MetricsConfig.forTable`).
    pub sorted_field_ids: Vec<i32>,
    /// The id of the statement's write (a UUID), in the name of every file it writes
    /// ([`PartitionedDataFileWriter::with_operation_id`]).
    pub operation_id: String,
}

/// Removes what a writer wrote unless it was handed on: the writer of a partition whose
/// stream is dropped before it finished is aborted on the runtime in the background.
struct AbortOnDrop(Option<PartitionedDataFileWriter>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(writer) = self.0.take() {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = writer.abort().await;
                });
            }
        }
    }
}

impl DataFileWriteState {
    /// Write `data` into data files. On error, the files written are removed.
    async fn write_stream(&self, mut data: SendableRecordBatchStream) -> Result<Vec<DataFile>> {
        let mut config = DataFileWriterConfig::from_properties(&self.properties)?;
        config.metrics.sorted_field_ids = self.sorted_field_ids.clone();
        let mut guard = AbortOnDrop(Some(
            PartitionedDataFileWriter::new(
                self.file_io.clone(),
                &self.data_location,
                &self.schema,
                &self.spec,
                config,
            )?
            .with_operation_id(&self.operation_id)
            .with_sort_order_id(self.sort_order_id.unwrap_or(0)),
        ));
        while let Some(batch) = data.next().await {
            let Some(writer) = guard.0.as_mut() else {
                break;
            };
            let written = match batch {
                Ok(batch) => writer.write(&batch).await,
                Err(e) => Err(Error::from(e)),
            };
            if let Err(e) = written {
                if let Some(writer) = guard.0.take() {
                    let _ = writer.abort().await;
                }
                return Err(e);
            }
        }
        let Some(writer) = guard.0.take() else {
            return Ok(vec![]);
        };
        writer.close().await
    }
}

/// Writes each input partition into data files and emits them (see the module docs).
#[derive(Debug)]
pub struct IcebergDataFileWriterExec {
    input: Arc<dyn ExecutionPlan>,
    state: Arc<DataFileWriteState>,
    /// The rows' schema (the provider's Arrow schema): input is checked against it.
    schema: SchemaRef,
    sort: Option<LexRequirement>,
    /// The partition values the input is hash-distributed by (`write.distribution-mode`
    /// `hash` or `range`), if any.
    distribution: Option<Vec<Arc<dyn PhysicalExpr>>>,
    properties: Arc<PlanProperties>,
}

impl IcebergDataFileWriterExec {
    /// Write `input` (rows of `schema`, the provider's Arrow schema) with `state`;
    /// `sort`: the order each input partition is written in (the table's sort order),
    /// if any. As many output partitions as `input` has.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        state: Arc<DataFileWriteState>,
        schema: SchemaRef,
        sort: Option<LexRequirement>,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(written_files_schema()),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            input.pipeline_behavior(),
            input.boundedness(),
        ));
        let distribution = partition_distribution(&state, &schema);
        Self {
            input,
            state,
            schema,
            sort,
            distribution,
            properties,
        }
    }

    /// What the writer writes with.
    pub fn state(&self) -> &Arc<DataFileWriteState> {
        &self.state
    }

    /// The rows' schema (the provider's Arrow schema).
    pub fn row_schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The order each input partition is written in, if any.
    pub fn sort(&self) -> Option<&LexRequirement> {
        self.sort.as_ref()
    }
}

impl DisplayAs for IcebergDataFileWriterExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => write!(
                f,
                "IcebergDataFileWriterExec: table={}, spec_id={}",
                self.state.table, self.state.spec.spec_id
            ),
            DisplayFormatType::TreeRender => write!(f, "table={}", self.state.table),
        }
    }
}

impl ExecutionPlan for IcebergDataFileWriterExec {
    fn name(&self) -> &str {
        "IcebergDataFileWriterExec"
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
        match &self.distribution {
            Some(exprs) => vec![Distribution::KeyPartitioned(exprs.clone())],
            None => vec![Distribution::UnspecifiedDistribution],
        }
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![true]
    }

    fn required_input_ordering(&self) -> Vec<Option<OrderingRequirements>> {
        vec![self.sort.clone().map(Into::into)]
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
                "IcebergDataFileWriterExec takes one child".into(),
            ));
        }
        Ok(Arc::new(Self::new(
            children.swap_remove(0),
            Arc::clone(&self.state),
            Arc::clone(&self.schema),
            self.sort.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        let data = execute_required_checked(
            Arc::clone(&self.input),
            Arc::clone(&self.schema),
            &self.state.schema,
            partition,
            context,
        )?;
        let state = Arc::clone(&self.state);
        let schema = written_files_schema();
        let out = Arc::clone(&schema);
        let stream = futures::stream::once(async move {
            let files = state.write_stream(data).await?;
            let rows: Vec<Vec<u8>> = if files.is_empty() {
                vec![]
            } else {
                let bytes =
                    encode_written_files(&files, &state.schema, &state.spec, state.format_version);
                match bytes {
                    Ok(bytes) => vec![bytes],
                    Err(e) => {
                        for f in &files {
                            let _ = state.file_io.delete(&f.file_path).await;
                        }
                        return Err(e.into());
                    }
                }
            };
            let column: ArrayRef = Arc::new(BinaryArray::from_iter_values(rows));
            Ok(RecordBatch::try_new(out, vec![column])?)
        })
        .boxed();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}
