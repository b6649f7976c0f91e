//! Rewriting one `rewrite_data_files` file group: its rows read (deletes applied) and
//! written as new data files, cut into splits of about one input split size each (Java's
//! `inputSplitSize`), each split one new file, as Spark's bin-pack rewrite reads a group
//! in splits of that size and writes each split as a file
//! (`SparkBinPackFileRewriteRunner`).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::DataType;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::projection::ProjectionExpr;
use datafusion::physical_expr::{LexOrdering, PhysicalExpr, PhysicalSortExpr, ScalarFunctionExpr};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use futures::StreamExt;

use super::delete_planning::DeletePlan;
use super::insert::data_location;
use super::metadata_columns::{append_lineage, with_lineage_fields};
use super::table_provider::IcebergTableProvider;
use super::zorder_udf::{z_value_udf, Z_VALUE};
use crate::error::{Error, Result};
use crate::maintenance::zorder::ZOrderOptions;
use crate::spec::{DataFile, FormatVersion};
use crate::table::Table;
use crate::write::{DataFileWriterConfig, PartitionedDataFileWriter};

/// Where a stream of a group's rows is cut: each row weighs its input file's bytes per
/// row (`file_size_in_bytes` over `record_count`), and the k-th split ends at the row
/// that brings the rows so far to k split sizes (so no split's last row shifts the
/// later ones, and the last split holds what is left).
#[derive(Debug)]
pub(crate) struct InputSplits {
    split_size: f64,
    bytes_per_row: HashMap<String, f64>,
    /// The input bytes of the rows so far.
    filled: f64,
    /// The input bytes at which the split being filled ends.
    end: f64,
}

impl InputSplits {
    /// Splits of `split_size` input bytes over the rows of `files` (the group's data
    /// files; a row of another file weighs nothing).
    pub(crate) fn new<'a>(files: impl Iterator<Item = &'a DataFile>, split_size: u64) -> Self {
        let bytes_per_row = files
            .map(|f| {
                let per_row = if f.record_count > 0 {
                    f.file_size_in_bytes as f64 / f.record_count as f64
                } else {
                    0.0
                };
                (f.file_path.clone(), per_row)
            })
            .collect();
        Self {
            split_size: split_size as f64,
            bytes_per_row,
            filled: 0.0,
            end: split_size as f64,
        }
    }

    /// The rows of a batch at which a split ends (exclusive ends, increasing, each in
    /// `1..=len`), given the batch's data file column (each row's file location):
    /// the rows before such an end complete a split, the rows after start the next.
    ///
    /// Errors: a file column that is not of strings ([`crate::ErrorKind::InvalidData`]).
    pub(crate) fn split_ends(&mut self, files: &ArrayRef) -> Result<Vec<usize>> {
        let files = cast(files, &DataType::Utf8)?;
        let files = files.as_string_opt::<i32>().ok_or_else(|| {
            Error::invalid_data("the data file column of a rewrite scan is not a string")
        })?;
        let mut ends = vec![];
        let mut last: Option<(&str, f64)> = None;
        for row in 0..files.len() {
            let path = if files.is_null(row) {
                ""
            } else {
                files.value(row)
            };
            let weight = match last {
                Some((p, w)) if p == path => w,
                _ => {
                    let w = self.bytes_per_row.get(path).copied().unwrap_or(0.0);
                    last = Some((path, w));
                    w
                }
            };
            self.filled += weight;
            if self.filled >= self.end && self.split_size > 0.0 {
                ends.push(row + 1);
                while self.end <= self.filled {
                    self.end += self.split_size;
                }
            }
        }
        Ok(ends)
    }
}

/// The order a rewrite writes a group's rows in.
#[derive(Debug, Clone)]
pub(crate) enum RowOrder {
    /// Sorted by a sort order of the table's columns; the files record the sort order id.
    Sort(LexOrdering, i32),
    /// Sorted by the z-value ([`crate::maintenance::zorder`]) of the table's columns at
    /// these indexes (of the scan's schema, whose first columns are the table's); the
    /// files record sort order 0 (unsorted: no sort order of the table describes it).
    ZOrder(Vec<usize>, ZOrderOptions),
}

/// `exec` (a coalesced row-level scan) sorted by the z-value of its `columns`: the z-value
/// is added as the last column (after every column the writer takes, so their indexes
/// hold), the rows sorted by it.
fn z_ordered(
    ctx: &SessionContext,
    exec: Arc<dyn ExecutionPlan>,
    columns: &[usize],
    options: ZOrderOptions,
) -> Result<Arc<dyn ExecutionPlan>> {
    let schema = exec.schema();
    let mut exprs: Vec<ProjectionExpr> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| ProjectionExpr {
            expr: Arc::new(Column::new(f.name(), i)) as Arc<dyn PhysicalExpr>,
            alias: f.name().clone(),
        })
        .collect();
    let args = columns
        .iter()
        .map(|&i| {
            let field = schema.fields().get(i).ok_or_else(|| {
                Error::invalid_data(format!("z-order column {i} is not in the scan"))
            })?;
            Ok(Arc::new(Column::new(field.name(), i)) as Arc<dyn PhysicalExpr>)
        })
        .collect::<Result<Vec<_>>>()?;
    let config = Arc::new(ctx.state().config_options().as_ref().clone());
    let z = ScalarFunctionExpr::try_new(z_value_udf(options), args, &schema, config)?;
    exprs.push(ProjectionExpr {
        expr: Arc::new(z),
        alias: Z_VALUE.to_string(),
    });
    let at = exprs.len() - 1;
    let projected = Arc::new(ProjectionExec::try_new(exprs, exec)?);
    let ordering = LexOrdering::new([PhysicalSortExpr::new(
        Arc::new(Column::new(Z_VALUE, at)),
        SortOptions {
            descending: false,
            nulls_first: false,
        },
    )])
    .ok_or_else(|| Error::invalid_data("empty z-order sort"))?;
    Ok(Arc::new(SortExec::new(ordering, projected)))
}

/// Read `plan`'s rows (deletes applied; in `order` when given) and write them as new data
/// files under spec `spec_id`, a new file at each of `splits`' boundaries when given. On
/// error, also returns the files already written.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn rewrite_group(
    ctx: &SessionContext,
    provider: &IcebergTableProvider,
    table: &Table,
    plan: DeletePlan,
    order: Option<RowOrder>,
    config: DataFileWriterConfig,
    spec_id: i32,
    mut splits: Option<InputSplits>,
) -> std::result::Result<Vec<DataFile>, (Error, Vec<DataFile>)> {
    let state = ctx.state();
    let mut exec: Arc<dyn ExecutionPlan> = provider
        .row_level_exec(&state, plan, &[])
        .map_err(|e| (e, vec![]))?;
    let order_id = match &order {
        Some(RowOrder::Sort(_, id)) => *id,
        _ => 0,
    };
    match order {
        None => {}
        Some(RowOrder::Sort(ordering, _)) => {
            // the table's columns come first, so the sort fields' indexes hold
            exec = Arc::new(SortExec::new(
                ordering,
                Arc::new(CoalescePartitionsExec::new(exec)),
            ));
        }
        Some(RowOrder::ZOrder(columns, options)) => {
            let coalesced = Arc::new(CoalescePartitionsExec::new(exec));
            exec = z_ordered(ctx, coalesced, &columns, options).map_err(|e| (e, vec![]))?;
        }
    }
    let m = table.metadata();
    let spec = m.partition_spec_by_id(spec_id).ok_or_else(|| {
        (
            Error::invalid_data(format!("the table has no partition spec {spec_id}")),
            vec![],
        )
    })?;
    // v3: every row keeps its `_row_id` and `_last_updated_sequence_number` as read
    // (stored or inherited), stored in the new files (spec: "Row Lineage"); the scan has
    // them after the file and position columns
    let lineage = m.format_version >= FormatVersion::V3;
    let n = provider.arrow_schema().fields().len();
    let columns: Vec<usize> = (0..n).collect();
    let lineage_schema;
    let schema = if lineage {
        lineage_schema = with_lineage_fields(m.current_schema()).map_err(|e| (e, vec![]))?;
        &lineage_schema
    } else {
        m.current_schema()
    };
    let mut writer = PartitionedDataFileWriter::new(
        table.file_io().clone(),
        &data_location(table),
        schema,
        spec,
        config,
    )
    .map_err(|e| (e, vec![]))?
    .with_sort_order_id(order_id);
    let result = async {
        for p in 0..exec.properties().partitioning.partition_count() {
            let mut stream = exec.execute(p, ctx.task_ctx())?;
            while let Some(batch) = stream.next().await {
                let scanned = batch?;
                let rows = scanned.project(&columns)?;
                let batch = match (scanned.columns().get(n + 2), scanned.columns().get(n + 3)) {
                    (Some(row_id), Some(sequence)) if lineage => {
                        append_lineage(&rows, Arc::clone(row_id), Arc::clone(sequence))?
                    }
                    _ if lineage => {
                        return Err(Error::invalid_data(
                            "a v3 row-level scan batch lacks its row lineage columns",
                        ))
                    }
                    _ => rows,
                };
                let Some(splits) = splits.as_mut() else {
                    if batch.num_rows() > 0 {
                        writer.write(&batch).await?;
                    }
                    continue;
                };
                let ends = match scanned.columns().get(n) {
                    Some(files) => splits.split_ends(files)?,
                    None => vec![],
                };
                let mut start = 0;
                for end in ends {
                    if end > start {
                        writer.write(&batch.slice(start, end - start)).await?;
                    }
                    writer.roll().await?;
                    start = end;
                }
                if batch.num_rows() > start {
                    writer
                        .write(&batch.slice(start, batch.num_rows() - start))
                        .await?;
                }
            }
        }
        Ok::<_, Error>(())
    }
    .await;
    match result {
        Ok(()) => writer.close().await.map_err(|e| (e, vec![])),
        Err(e) => {
            let _ = writer.abort().await;
            Err((e, vec![]))
        }
    }
}
