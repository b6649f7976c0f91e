//! The data files a row-level statement writes (copy-on-write rewrites, the new rows of
//! merge-on-read `UPDATE` and of `MERGE`), in the table's sort order.
//!
//! Spark orders the rows of copy-on-write rewrites and the new rows of row-level
//! operations by the table's sort order (`SparkWriteRequirements` of
//! `SparkWriteConf.copyOnWriteRequirements` / `positionDeltaRequirements`), as its `INSERT`
//! does, and Iceberg Java records the order in each file's `sort_order_id`. icefloe's
//! `INSERT` sorts each input partition by the table's default sort order
//! ([`IcebergDataSink::sort_requirement`], a DataFusion `SortExec` the planner adds for
//! the writer's required ordering). A [`RowsWriter`] does the same for the rows one task
//! of a row-level statement writes: with a sort order, its rows go through a `SortExec`
//! (which spills to disk under the session's memory limit, as the `INSERT`'s does) and
//! its files record the order's id; without one (unsorted, or `void` terms only), the
//! rows are written as they come and the files record order 0. Position delete files
//! and deletion vectors keep their own order (`file_path`, `pos`; module `delete_files`).

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::LexOrdering;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::ExecutionPlan;
use futures::channel::mpsc;
use futures::{SinkExt, StreamExt};
use tokio::task::JoinHandle;

use crate::datafusion::insert::IcebergDataSink;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::DataFile;
use crate::table::Table;
use crate::write::PartitionedDataFileWriter;

/// The sort order a row-level statement's data files are written in: the table's
/// default sort order as a DataFusion ordering over the table's Arrow schema `arrow`
/// (the written rows' first columns), with its id; `None` for an unsorted order.
///
/// Errors: an order a writer cannot sort by, naming the term
/// ([`IcebergDataSink::sort_requirement`]): the statement fails rather than write files
/// out of the table's order, as an `INSERT` does.
pub(super) fn table_ordering(
    table: &Table,
    arrow: &SchemaRef,
) -> Result<Option<(LexOrdering, i32)>> {
    let Some(requirement) = IcebergDataSink::sort_requirement(table, arrow)? else {
        return Ok(None);
    };
    let ordering = LexOrdering::from(requirement);
    let id = i32::try_from(table.metadata().default_sort_order_id).map_err(|_| {
        Error::invalid_data(format!(
            "sort order id {} is not an int",
            table.metadata().default_sort_order_id
        ))
    })?;
    Ok(Some((ordering, id)))
}

/// A writer of one task's rows: straight into a [`PartitionedDataFileWriter`], or
/// through a `SortExec` by the table's sort order (see the module docs).
pub(super) struct RowsWriter {
    state: State,
}

enum State {
    Direct(PartitionedDataFileWriter),
    /// Sorted, before the first batch (the sort is started with its schema).
    Idle(PartitionedDataFileWriter, LexOrdering, Arc<TaskContext>),
    /// Sorted: batches go to the task that sorts and writes them.
    Sorting(
        mpsc::Sender<DFResult<RecordBatch>>,
        JoinHandle<Result<Vec<DataFile>>>,
    ),
    Done,
}

impl std::fmt::Debug for RowsWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Direct(_) => "direct",
            State::Idle(..) | State::Sorting(..) => "sorted",
            State::Done => "done",
        };
        f.debug_struct("RowsWriter").field("state", &state).finish()
    }
}

/// The one stream of rows the `SortExec` reads (taken once).
struct Rows {
    schema: SchemaRef,
    stream: std::sync::Mutex<Option<SendableRecordBatchStream>>,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows")
            .field("schema", &self.schema)
            .finish()
    }
}

impl PartitionStream for Rows {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let taken = self.stream.lock().ok().and_then(|mut s| s.take());
        match taken {
            Some(stream) => stream,
            None => Box::pin(RecordBatchStreamAdapter::new(
                Arc::clone(&self.schema),
                futures::stream::once(async {
                    Err(DataFusionError::Internal(
                        "the rows of a row-level write were read twice".into(),
                    ))
                }),
            )),
        }
    }
}

/// Sort `rows` (of `schema`) by `ordering` and write them with `writer`; the files
/// written, or the first error (the files are removed).
async fn sort_and_write(
    mut writer: PartitionedDataFileWriter,
    ordering: LexOrdering,
    context: Arc<TaskContext>,
    schema: SchemaRef,
    rows: mpsc::Receiver<DFResult<RecordBatch>>,
) -> Result<Vec<DataFile>> {
    let result = async {
        let source = Rows {
            schema: Arc::clone(&schema),
            stream: std::sync::Mutex::new(Some(Box::pin(RecordBatchStreamAdapter::new(
                Arc::clone(&schema),
                rows,
            )))),
        };
        let input =
            StreamingTableExec::try_new(schema, vec![Arc::new(source)], None, vec![], false, None)?;
        let sort = SortExec::new(ordering, Arc::new(input));
        let mut sorted = sort.execute(0, context)?;
        while let Some(batch) = sorted.next().await {
            writer.write(&batch?).await?;
        }
        Ok::<_, Error>(())
    }
    .await;
    match result {
        Ok(()) => writer.close().await,
        Err(e) => {
            let _ = writer.abort().await;
            Err(e)
        }
    }
}

impl RowsWriter {
    /// A writer with `writer`, sorting by `ordering` (the table's, [`table_ordering`])
    /// when given, recording its id in every file.
    pub(super) fn new(
        writer: PartitionedDataFileWriter,
        ordering: Option<(LexOrdering, i32)>,
        context: Arc<TaskContext>,
    ) -> Self {
        let state = match ordering {
            None => State::Direct(writer),
            Some((ordering, id)) => State::Idle(writer.with_sort_order_id(id), ordering, context),
        };
        Self { state }
    }

    /// Write `batch` (the table's columns, then any lineage columns).
    ///
    /// Errors: the data file writer's, or the sort's (then the files are removed).
    pub(super) async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if let State::Idle(..) = self.state {
            let State::Idle(writer, ordering, context) =
                std::mem::replace(&mut self.state, State::Done)
            else {
                return Err(Error::invalid_data("a row writer changed state"));
            };
            let (tx, rx) = mpsc::channel(2);
            let task = tokio::spawn(sort_and_write(
                writer,
                ordering,
                context,
                batch.schema(),
                rx,
            ));
            self.state = State::Sorting(tx, task);
        }
        match &mut self.state {
            State::Direct(writer) => writer.write(batch).await,
            State::Sorting(tx, _) => {
                if tx.send(Ok(batch.clone())).await.is_ok() {
                    return Ok(());
                }
                // the sort ended early: its error
                match std::mem::replace(&mut self.state, State::Done) {
                    State::Sorting(_, task) => match joined(task.await)? {
                        Ok(files) => Err(Error::invalid_data(format!(
                            "the sort of a row-level write ended after {} files with rows \
                             left to write",
                            files.len()
                        ))),
                        Err(e) => Err(e),
                    },
                    _ => Err(Error::invalid_data("a row writer changed state")),
                }
            }
            State::Idle(..) | State::Done => Err(Error::invalid_data(
                "a row writer was written to after it closed",
            )),
        }
    }

    /// The data files written.
    ///
    /// Errors: the writer's or the sort's (then the files are removed).
    pub(super) async fn close(self) -> Result<Vec<DataFile>> {
        match self.state {
            State::Direct(writer) | State::Idle(writer, ..) => writer.close().await,
            State::Sorting(tx, task) => {
                drop(tx);
                joined(task.await)?
            }
            State::Done => Ok(vec![]),
        }
    }

    /// Remove the files written (the statement failed).
    pub(super) async fn abort(self) -> Result<()> {
        match self.state {
            State::Direct(writer) | State::Idle(writer, ..) => writer.abort().await,
            State::Sorting(mut tx, task) => {
                // an error ends the sort, which then removes its files
                let _ = tx
                    .send(Err(DataFusionError::Execution(
                        "the row-level statement failed".into(),
                    )))
                    .await;
                drop(tx);
                let _ = joined(task.await)?;
                Ok(())
            }
            State::Done => Ok(()),
        }
    }
}

/// The result of the sort task, or the error of a task that did not finish.
fn joined(
    result: std::result::Result<Result<Vec<DataFile>>, tokio::task::JoinError>,
) -> Result<Result<Vec<DataFile>>> {
    result.map_err(|e| Error::new(ErrorKind::Io, "a sorting write task failed").with_source(e))
}
