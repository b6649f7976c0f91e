//! [`PositionDeleteExec`]: position deletes and deletion vectors applied per batch after
//! decoding, for data files whose deletes are fragmented (issue 18, item 4).
//!
//! A row selection with hundreds of thousands of selectors per file costs DataFusion 55
//! and parquet 59 more to split by row group than the decoding it saves (see
//! [`delete_planning`](super::delete_planning)). For those files the scan gets no
//! selection and reads two hidden columns after the ones asked for: each row's position
//! in its file (Parquet's `RowNumber` virtual column, counted before any pruning or
//! filtering, as position deletes count) and the file's index in this node's list
//! (a constant per-file column, of the narrowest unsigned type holding every index:
//! [`file_index_type`]). This node keeps the rows whose position is live in the
//! file's bitmap and drops both columns, so its schema is the scan's without them.
//!
//! DataFusion fills the per-file column anew for every batch, so its width is paid per
//! row: with a `UInt8` index (scans of at most 256 files) a full scan after fragmented
//! deletes runs 1.8 % fewer instructions than with an `Int32` one (benches/README.md,
//! "The file index one byte wide").
//!
//! Each file's live rows are held as one bit per row (a file of 1.5 M rows: 190 KB),
//! so a batch whose positions are contiguous (no row filter pushed into the decoder)
//! takes a slice of it as its mask, and any other batch looks its positions up one by
//! one. The scan must not be given a `LIMIT` (it would count deleted rows); this node
//! does not pass limits down. Filters above it pass through to the scan (for pruning,
//! and for decoding under `pushdown_filters`); those the scan does not apply to rows
//! this node takes over (so DataFusion drops its `FilterExec`): it evaluates them on each
//! batch and drops the filtered and the deleted rows with one copy, where a `FilterExec`
//! above would copy the batch a second time (most of it, when deletes are sparse).

use std::fmt;
use std::ops::{BitOr, BitXor};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, BooleanArray, Int64Array, RecordBatch};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, SchemaRef, UInt16Type, UInt32Type, UInt8Type};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result as DFResult, ScalarValue, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::utils::conjunction;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::filter_pushdown::{
    ChildPushdownResult, FilterDescription, FilterPushdownPhase, FilterPushdownPropagation,
    PushedDown,
};
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::statistics::{ChildStats, StatisticsArgs};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};
use roaring::RoaringTreemap;

/// The type of the file-index column of a per-batch scan of `files` data files: `UInt8`
/// up to 256 files, `UInt16` up to 65,536, `UInt32` beyond (the narrowest that holds
/// every index, see the module docs).
///
/// Errors: more than 2^32 files.
pub(crate) fn file_index_type(files: usize) -> crate::error::Result<DataType> {
    Ok(if files <= 1 << 8 {
        DataType::UInt8
    } else if files <= 1 << 16 {
        DataType::UInt16
    } else if u32::try_from(files - 1).is_ok() {
        DataType::UInt32
    } else {
        return Err(crate::error::Error::unsupported(
            "a scan of more than 2^32 data files with deletes applied per batch",
        ));
    })
}

/// The file-index value of the file at `index` of a per-batch scan of `files` data files,
/// of [`file_index_type`]`(files)`.
///
/// Errors: `index` not below `files`, or more than 2^32 files.
pub(crate) fn file_index_value(index: usize, files: usize) -> crate::error::Result<ScalarValue> {
    let out_of_range = || {
        crate::error::Error::unsupported(format!(
            "file index {index} of a per-batch scan of {files} data files"
        ))
    };
    if index >= files {
        return Err(out_of_range());
    }
    Ok(match file_index_type(files)? {
        DataType::UInt8 => {
            ScalarValue::UInt8(Some(u8::try_from(index).map_err(|_| out_of_range())?))
        }
        DataType::UInt16 => {
            ScalarValue::UInt16(Some(u16::try_from(index).map_err(|_| out_of_range())?))
        }
        _ => ScalarValue::UInt32(Some(u32::try_from(index).map_err(|_| out_of_range())?)),
    })
}

/// The values of a batch's file-index column, of any of [`file_index_type`]'s types.
enum FileIndices<'a> {
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
}

impl<'a> FileIndices<'a> {
    /// The file-index column `column` (without nulls) of a batch.
    fn of(column: &'a dyn Array) -> DFResult<Self> {
        if column.null_count() > 0 {
            return Err(DataFusionError::Internal(
                "PositionDeleteExec: null file index".into(),
            ));
        }
        Ok(match column.data_type() {
            DataType::UInt8 => Self::U8(column.as_primitive::<UInt8Type>().values()),
            DataType::UInt16 => Self::U16(column.as_primitive::<UInt16Type>().values()),
            DataType::UInt32 => Self::U32(column.as_primitive::<UInt32Type>().values()),
            other => {
                return Err(DataFusionError::Internal(format!(
                    "PositionDeleteExec: file index column of type {other}"
                )))
            }
        })
    }

    /// The index of row `i`.
    fn get(&self, i: usize) -> usize {
        match self {
            Self::U8(v) => usize::from(v[i]),
            Self::U16(v) => usize::from(v[i]),
            Self::U32(v) => v[i] as usize,
        }
    }

    /// Whether every row has the first row's index.
    fn all_equal(&self) -> bool {
        match self {
            Self::U8(v) => all_equal(v),
            Self::U16(v) => all_equal(v),
            Self::U32(v) => all_equal(v),
        }
    }
}

/// The deletes of one data file: its deleted positions, and the live rows as bits.
#[derive(Debug)]
pub(crate) struct FileDeletes {
    /// The deleted positions (what the plan codec carries).
    pub deleted: Arc<RoaringTreemap>,
    /// One bit per row of the file, set when the row is live.
    live: BooleanBuffer,
}

impl FileDeletes {
    /// The deletes `deleted` of a file whose live rows are `live` (one bit per row,
    /// see [`crate::delete::PositionDeletes::live_rows`]).
    pub(crate) fn new(deleted: Arc<RoaringTreemap>, live: BooleanBuffer) -> Self {
        Self { deleted, live }
    }

    /// The deletes of a file of `total_rows` rows (for the plan codecs).
    ///
    /// Errors: a deleted position at or beyond `total_rows`, or more rows than memory
    /// can address.
    #[cfg(any(test, feature = "distributed", feature = "ballista"))]
    pub(crate) fn try_new(deleted: Arc<RoaringTreemap>, total_rows: u64) -> DFResult<Self> {
        let live = crate::delete::live_rows(&deleted, total_rows)
            .map_err(|e| DataFusionError::Internal(e.to_string()))?;
        Ok(Self { deleted, live })
    }

    /// The file's row count (for the plan codecs).
    #[cfg(any(feature = "distributed", feature = "ballista"))]
    pub(crate) fn total_rows(&self) -> u64 {
        self.live.len() as u64
    }

    /// Which of the rows at `positions` are live (a position beyond the file is).
    fn live_mask(&self, positions: &Int64Array) -> BooleanBuffer {
        let n = positions.len();
        let values = positions.values();
        if let (Some(first), Some(last)) = (values.first(), values.last()) {
            // positions come in increasing order within a file: equal ends mean a run
            let (first, last) = (*first, *last);
            if first >= 0 && last - first == n as i64 - 1 && (last as u64) < self.live.len() as u64
            {
                return self.live.slice(first as usize, n);
            }
        }
        let len = self.live.len();
        BooleanBuffer::collect_bool(n, |i| {
            usize::try_from(values[i])
                .ok()
                .filter(|p| *p < len)
                .is_none_or(|p| self.live.value(p))
        })
    }
}

/// Applies fragmented position deletes per batch and projects away the position and
/// file-index columns.
#[derive(Debug)]
pub struct PositionDeleteExec {
    input: Arc<dyn ExecutionPlan>,
    /// Per file index: the file's deletes (`None`: none by position).
    files: Arc<Vec<Option<FileDeletes>>>,
    /// The input column of each row's position in its file (Int64).
    pos_column: usize,
    /// The input column of each row's file index ([`file_index_type`]).
    file_column: usize,
    output_columns: Vec<usize>,
    /// Filters taken over from above (on the output schema): rows failing them are
    /// dropped with the deleted ones.
    predicate: Option<Arc<dyn PhysicalExpr>>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl PositionDeleteExec {
    /// Wrap `input`, whose rows carry their position at `pos_column` and their file's
    /// index into `files` at `file_column`; the output is the input without those two
    /// columns (the others in order).
    pub(crate) fn try_new(
        input: Arc<dyn ExecutionPlan>,
        files: Arc<Vec<Option<FileDeletes>>>,
        pos_column: usize,
        file_column: usize,
    ) -> DFResult<Self> {
        let width = input.schema().fields().len();
        if pos_column >= width || file_column >= width || pos_column == file_column {
            return Err(DataFusionError::Internal(format!(
                "PositionDeleteExec: position column {pos_column} and file column \
                 {file_column} of {width}"
            )));
        }
        let output_columns: Vec<usize> = (0..width)
            .filter(|i| *i != pos_column && *i != file_column)
            .collect();
        let schema = Arc::new(input.schema().project(&output_columns)?);
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            input.output_partitioning().clone(),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(Self {
            input,
            files,
            pos_column,
            file_column,
            output_columns,
            predicate: None,
            schema,
            properties,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// The same node, also dropping the rows for which `predicate` (on the output
    /// schema) is not true.
    pub(crate) fn with_predicate(mut self, predicate: Option<Arc<dyn PhysicalExpr>>) -> Self {
        self.predicate = predicate;
        self
    }

    /// The filters taken over from above, if any (for the plan codec).
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn predicate(&self) -> Option<&Arc<dyn PhysicalExpr>> {
        self.predicate.as_ref()
    }

    /// Per file index, the file's deletes (for the plan codec).
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn files(&self) -> &[Option<FileDeletes>] {
        &self.files
    }

    /// The input columns of the positions and of the file indices.
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn columns(&self) -> (usize, usize) {
        (self.pos_column, self.file_column)
    }
}

fn column<'a, T: 'static>(batch: &'a RecordBatch, index: usize, what: &str) -> DFResult<&'a T> {
    batch
        .column(index)
        .as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| DataFusionError::Internal(format!("PositionDeleteExec: {what} column")))
}

/// Whether every value of `values` is the first (true when empty).
///
/// Checked for every batch: a fold without an early exit, which the compiler
/// vectorizes (an `all` that stops at the first difference compares one value at a
/// time, and cost more than the rest of the node's work on a batch but the copy).
fn all_equal<T>(values: &[T]) -> bool
where
    T: Copy + Default + PartialEq + BitXor<Output = T> + BitOr<Output = T>,
{
    let Some(&first) = values.first() else {
        return true;
    };
    values
        .iter()
        .fold(T::default(), |differ, &v| differ | (v ^ first))
        == T::default()
}

/// Which rows of `batch` its file's deletes keep (`None`: all of them).
fn live_rows(
    batch: &RecordBatch,
    files: &[Option<FileDeletes>],
    pos_column: usize,
    file_column: usize,
) -> DFResult<Option<BooleanBuffer>> {
    let rows = batch.num_rows();
    if rows == 0 {
        return Ok(None);
    }
    let indices = FileIndices::of(batch.column(file_column).as_ref())?;
    let positions: &Int64Array = column(batch, pos_column, "position")?;
    let file = |i: usize| {
        let index = indices.get(i);
        files.get(index).ok_or_else(|| {
            DataFusionError::Internal(format!("PositionDeleteExec: no file {index}"))
        })
    };
    // a scan's batch holds rows of one file; mixed ones are looked up row by row
    let keep = if indices.all_equal() {
        match file(0)? {
            None => return Ok(None),
            Some(deletes) => deletes.live_mask(positions),
        }
    } else {
        let mut mask = Vec::with_capacity(rows);
        for i in 0..rows {
            mask.push(match file(i)? {
                None => true,
                Some(d) => !d.deleted.contains(positions.value(i) as u64),
            });
        }
        BooleanBuffer::from(mask)
    };
    Ok(Some(keep))
}

/// The rows of `batch` for which `predicate` is true (a NULL drops the row).
fn matching(predicate: &Arc<dyn PhysicalExpr>, batch: &RecordBatch) -> DFResult<BooleanBuffer> {
    let result = predicate.evaluate(batch)?.into_array(batch.num_rows())?;
    let mask = result
        .as_any()
        .downcast_ref::<BooleanArray>()
        .ok_or_else(|| {
            DataFusionError::Internal(format!(
                "PositionDeleteExec: predicate {predicate} is not boolean"
            ))
        })?;
    Ok(match mask.nulls() {
        Some(nulls) => mask.values() & nulls.inner(),
        None => mask.values().clone(),
    })
}

/// The rows of `batch` that survive the deletes and `predicate`, without the helper
/// columns; and how many the deletes removed.
fn apply(
    batch: &RecordBatch,
    files: &[Option<FileDeletes>],
    pos_column: usize,
    file_column: usize,
    output: &[usize],
    predicate: Option<&Arc<dyn PhysicalExpr>>,
) -> DFResult<(RecordBatch, usize)> {
    let rows = batch.num_rows();
    let projected = batch.project(output)?;
    let live = live_rows(batch, files, pos_column, file_column)?;
    let deleted = live.as_ref().map_or(0, |l| rows - l.count_set_bits());
    let keep = match (predicate, live) {
        (None, None) => return Ok((projected, 0)),
        (None, Some(live)) => live,
        (Some(p), live) => match (matching(p, &projected), live) {
            (Ok(matched), None) => matched,
            (Ok(matched), Some(live)) => &matched & &live,
            (Err(e), None) => return Err(e),
            // The filter may fail on a deleted row (`10 / (id - 2)` where the row with
            // id 2 is deleted), as it would not above this node: then it is evaluated
            // on the surviving rows alone, and fails only if one of them makes it.
            (Err(_), Some(live)) => {
                let survivors = filter_record_batch(&projected, &BooleanArray::new(live, None))?;
                let matched = matching(p, &survivors)?;
                let kept = filter_record_batch(&survivors, &BooleanArray::new(matched, None))?;
                return Ok((kept, deleted));
            }
        },
    };
    if keep.count_set_bits() == rows {
        return Ok((projected, deleted));
    }
    let mask = BooleanArray::new(keep, None);
    Ok((filter_record_batch(&projected, &mask)?, deleted))
}

impl DisplayAs for PositionDeleteExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let with = self.files.iter().flatten().count();
        let deleted: u64 = self.files.iter().flatten().map(|d| d.deleted.len()).sum();
        write!(
            f,
            "PositionDeleteExec: files={with}, deleted_positions={deleted}"
        )?;
        if let Some(p) = &self.predicate {
            write!(f, ", predicate={p}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for PositionDeleteExec {
    fn name(&self) -> &str {
        "PositionDeleteExec"
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

    /// Filters above pass through to the scan (its columns keep their indices here), for
    /// pruning, dynamic filters and, with `pushdown_filters`, decoding: a filter commutes
    /// with deletes, and positions count rows before any filtering.
    fn gather_filters_for_pushdown(
        &self,
        _phase: FilterPushdownPhase,
        parent_filters: Vec<Arc<dyn PhysicalExpr>>,
        _config: &ConfigOptions,
    ) -> DFResult<FilterDescription> {
        FilterDescription::from_children(parent_filters, &self.children())
    }

    /// The filters of a `FilterExec` above (the `Pre` phase) that the scan does not apply
    /// to rows are taken over: this node evaluates them (see the module docs), so the
    /// `FilterExec` goes. Dynamic filters (the `Post` phase) stay with the scan alone.
    fn handle_child_pushdown_result(
        &self,
        phase: FilterPushdownPhase,
        child_pushdown_result: ChildPushdownResult,
        _config: &ConfigOptions,
    ) -> DFResult<FilterPushdownPropagation<Arc<dyn ExecutionPlan>>> {
        if phase != FilterPushdownPhase::Pre {
            return Ok(FilterPushdownPropagation::if_all(child_pushdown_result));
        }
        let mut taken = vec![];
        let mut results = vec![];
        for filter in &child_pushdown_result.parent_filters {
            if matches!(filter.all(), PushedDown::No) {
                taken.push(Arc::clone(&filter.filter));
            }
            results.push(PushedDown::Yes);
        }
        let propagation = FilterPushdownPropagation::with_parent_pushdown_result(results);
        if taken.is_empty() {
            return Ok(propagation);
        }
        let predicate = conjunction(self.predicate.iter().cloned().chain(taken));
        let node = PositionDeleteExec::try_new(
            Arc::clone(&self.input),
            Arc::clone(&self.files),
            self.pos_column,
            self.file_column,
        )?
        .with_predicate(Some(predicate));
        Ok(propagation.with_updated_node(Arc::new(node)))
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(
                "PositionDeleteExec takes one child".into(),
            ));
        }
        Ok(Arc::new(
            PositionDeleteExec::try_new(
                children.swap_remove(0),
                Arc::clone(&self.files),
                self.pos_column,
                self.file_column,
            )?
            .with_predicate(self.predicate.clone()),
        ))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let files = Arc::clone(&self.files);
        let (pos, file) = (self.pos_column, self.file_column);
        let output = self.output_columns.clone();
        let predicate = self.predicate.clone();
        let removed: Count =
            MetricBuilder::new(&self.metrics).counter("rows_deleted_by_position", partition);
        let baseline = BaselineMetrics::new(&self.metrics, partition);
        let stream = input
            .and_then(move |batch| {
                let timer = baseline.elapsed_compute().timer();
                let result =
                    apply(&batch, &files, pos, file, &output, predicate.as_ref()).map(|(b, n)| {
                        removed.add(n);
                        b
                    });
                timer.done();
                if let Ok(b) = &result {
                    baseline.record_output(b.num_rows());
                }
                futures::future::ready(result)
            })
            .try_filter(|b| futures::future::ready(b.num_rows() > 0));
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            stream.boxed(),
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    /// The input's statistics for the output columns, inexact: deletes only remove
    /// rows, so bounds still hold and counts become upper estimates.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn deletes(deleted: &[u64], rows: u64) -> FileDeletes {
        FileDeletes::try_new(Arc::new(deleted.iter().copied().collect()), rows).unwrap()
    }

    fn mask(d: &FileDeletes, positions: &[i64]) -> Vec<bool> {
        d.live_mask(&Int64Array::from(positions.to_vec()))
            .iter()
            .collect()
    }

    #[test]
    fn contiguous_positions_take_a_slice_of_the_live_rows() {
        let d = deletes(&[1, 2, 9], 10);
        assert_eq!(mask(&d, &[0, 1, 2, 3]), [true, false, false, true]);
        assert_eq!(mask(&d, &[7, 8, 9]), [true, true, false]);
    }

    #[test]
    fn scattered_positions_are_looked_up_one_by_one() {
        // as after a filter pushed into the decoder
        let d = deletes(&[1, 2, 9], 10);
        assert_eq!(mask(&d, &[0, 2, 5, 9]), [true, false, true, false]);
        // a position beyond the file is not deleted (no bit for it)
        assert_eq!(mask(&d, &[2, 12]), [false, true]);
    }

    #[test]
    fn a_deleted_position_beyond_the_file_is_an_error() {
        let err = FileDeletes::try_new(Arc::new([3u64, 10].into_iter().collect()), 10)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("deleted position 10 of a file of 10 rows"),
            "{err}"
        );
    }

    /// A batch of `positions` of the files at `indices` (index column first, of `index`'s
    /// type, positions second), as the scan builds it.
    fn batch_of(index: DataType, indices: &[u32], positions: &[i64]) -> RecordBatch {
        use datafusion::arrow::array::{ArrayRef, UInt32Array};
        use datafusion::arrow::compute::cast;
        use datafusion::arrow::datatypes::{Field, Schema};
        let schema = Schema::new(vec![
            Field::new("f", index.clone(), false),
            Field::new("p", DataType::Int64, false),
        ]);
        let indices: ArrayRef = Arc::new(UInt32Array::from(indices.to_vec()));
        RecordBatch::try_new(
            Arc::new(schema),
            vec![
                cast(&indices, &index).unwrap(),
                Arc::new(Int64Array::from(positions.to_vec())),
            ],
        )
        .unwrap()
    }

    fn batch(indices: &[u32], positions: &[i64]) -> RecordBatch {
        batch_of(DataType::UInt8, indices, positions)
    }

    fn kept(batch: &RecordBatch, files: &[Option<FileDeletes>]) -> Option<Vec<bool>> {
        live_rows(batch, files, 1, 0)
            .unwrap()
            .map(|b| b.iter().collect())
    }

    #[test]
    fn equal_values_are_told_from_any_difference() {
        assert!(all_equal::<u8>(&[]));
        assert!(all_equal(&[7]));
        assert!(all_equal(&[3; 8192]));
        for at in [0, 1, 4095, 8191] {
            let mut values = vec![3; 8192];
            values[at] = 2;
            assert!(!all_equal(&values), "{at}");
        }
        // values that differ in one bit, and negative ones
        assert!(!all_equal(&[1u32, 1, 1 | (1 << 30)]));
        assert!(!all_equal(&[u8::MAX, u8::MAX, 0x7f]));
        assert!(!all_equal(&[0u16, 0, 0, 0x8000]));
    }

    #[test]
    fn the_file_index_is_the_narrowest_type_holding_every_index() {
        assert_eq!(file_index_type(0).unwrap(), DataType::UInt8);
        assert_eq!(file_index_type(256).unwrap(), DataType::UInt8);
        assert_eq!(file_index_type(257).unwrap(), DataType::UInt16);
        assert_eq!(file_index_type(65_536).unwrap(), DataType::UInt16);
        assert_eq!(file_index_type(65_537).unwrap(), DataType::UInt32);
        assert_eq!(
            file_index_value(255, 256).unwrap(),
            ScalarValue::UInt8(Some(255))
        );
        assert_eq!(
            file_index_value(256, 257).unwrap(),
            ScalarValue::UInt16(Some(256))
        );
        assert_eq!(
            file_index_value(70_000, 70_001).unwrap(),
            ScalarValue::UInt32(Some(70_000))
        );
        let err = file_index_value(3, 3).unwrap_err().to_string();
        assert!(
            err.contains("file index 3 of a per-batch scan of 3"),
            "{err}"
        );
        #[cfg(target_pointer_width = "64")]
        {
            let err = file_index_type((1usize << 32) + 1).unwrap_err().to_string();
            assert!(err.contains("more than 2^32 data files"), "{err}");
            assert_eq!(file_index_type(1usize << 32).unwrap(), DataType::UInt32);
        }
    }

    #[test]
    fn file_indices_of_every_width_find_each_rows_file() {
        let files = vec![Some(deletes(&[0, 2], 4)), None, Some(deletes(&[1], 4))];
        for index in [DataType::UInt8, DataType::UInt16, DataType::UInt32] {
            let one = batch_of(index.clone(), &[2, 2, 2], &[0, 1, 2]);
            assert_eq!(kept(&one, &files), Some(vec![true, false, true]), "{index}");
            let mixed = batch_of(index.clone(), &[0, 1, 2, 0], &[0, 0, 1, 1]);
            assert_eq!(
                kept(&mixed, &files),
                Some(vec![false, true, false, true]),
                "{index}"
            );
        }
        // a column of another type is an internal error, not a wrong answer
        let err = live_rows(&batch_of(DataType::Int32, &[0], &[0]), &files, 1, 0).unwrap_err();
        assert!(
            err.to_string().contains("file index column of type Int32"),
            "{err}"
        );
    }

    #[test]
    fn batches_of_one_file_and_of_several_find_each_rows_file() {
        let files = vec![Some(deletes(&[0, 2], 4)), None, Some(deletes(&[1], 4))];
        assert_eq!(
            kept(&batch(&[2, 2, 2], &[0, 1, 2]), &files),
            Some(vec![true, false, true])
        );
        // a file without deletes keeps every row
        assert_eq!(kept(&batch(&[1, 1], &[0, 1]), &files), None);
        // rows of several files are looked up one by one, the same first and last file
        // included
        assert_eq!(
            kept(&batch(&[0, 1, 2, 0], &[0, 0, 1, 1]), &files),
            Some(vec![false, true, false, true])
        );
        // an index beyond the node's files is an error
        let err = live_rows(&batch(&[5], &[0]), &files, 1, 0).unwrap_err();
        assert!(err.to_string().contains("no file 5"), "{err}");
    }
}
