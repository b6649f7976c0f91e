//! A table's changelog as Iceberg Java's incremental changelog scan computes it
//! (`BaseIncrementalChangelogScan`), post-processed as Spark's `create_changelog_view`
//! does (`RemoveCarryoverIterator`, `RemoveNetCarryoverIterator`,
//! `ComputeUpdateIterator`), as a DataFusion logical plan over the data files the
//! snapshots added and removed.
//!
//! The changelog snapshots are the ancestors of the end snapshot after the (exclusive)
//! start one, oldest first, `replace` snapshots (compactions) left out; the k-th of them
//! has `_change_ordinal` k (from 0). Each row of a data file one of them added is an
//! `INSERT`, each row of a data file one of them removed a `DELETE`, with the snapshot's
//! id as `_commit_snapshot_id`. Rows are read in the table's current schema.
//!
//! As Java, a changelog snapshot whose manifest list holds delete manifests is refused
//! ("Delete files are currently not supported in changelog scans"): row-level deletes
//! (merge-on-read) would need the deleted rows' values.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::array::{AsArray, BooleanArray};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::common::{Column, DataFusionError, ScalarValue};
use datafusion::dataframe::DataFrame;
use datafusion::functions_aggregate::first_last::first_value_udaf;
use datafusion::functions_aggregate::min_max::max_udaf;
use datafusion::functions_aggregate::sum::sum_udaf;
use datafusion::functions_window::expr_fn::row_number;
use datafusion::logical_expr::expr::WindowFunction;
use datafusion::logical_expr::{
    case, cast, create_udf, lit, when, ColumnarValue, Expr, ExprFunctionExt, Volatility,
    WindowFrame, WindowFrameBound, WindowFrameUnits,
};
use datafusion::prelude::SessionContext;

use super::table_provider::{FileSetTable, IcebergTableProvider};
use crate::error::{Error, Result};
use crate::scan::{read_manifest, FileScanTask, TableScan};
use crate::spec::manifest::ManifestStatus;
use crate::spec::{ManifestContent, Snapshot, TableMetadata};
use crate::table::Table;

/// `_change_type`: `INSERT`, `DELETE`, `UPDATE_BEFORE` or `UPDATE_AFTER` (string).
pub const CHANGE_TYPE: &str = "_change_type";
/// `_change_ordinal`: the changelog snapshot's position, oldest first from 0 (int).
pub const CHANGE_ORDINAL: &str = "_change_ordinal";
/// `_commit_snapshot_id`: the snapshot that made the change (long).
pub const COMMIT_SNAPSHOT_ID: &str = "_commit_snapshot_id";

const INSERT: &str = "INSERT";
const DELETE: &str = "DELETE";

/// The range of a changelog, as Spark's read options give it (all optional): the
/// exclusive start and inclusive end snapshot, or start and end timestamps (ms since
/// the epoch; a snapshot committed exactly at the start is left out, one committed
/// exactly at the end is in).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangelogRange {
    /// `start-snapshot-id`: changes after this snapshot.
    pub start_snapshot_id: Option<i64>,
    /// `end-snapshot-id`: changes up to this snapshot (default: the current one).
    pub end_snapshot_id: Option<i64>,
    /// `start-timestamp`, ms.
    pub start_timestamp_ms: Option<i64>,
    /// `end-timestamp`, ms.
    pub end_timestamp_ms: Option<i64>,
}

/// How the changes are post-processed (carry-over rows are always removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangelogMode {
    /// Every change, carry-over rows (a row removed and added back unchanged by the same
    /// snapshot, as copy-on-write rewrites do) removed.
    Changes,
    /// Net changes over the whole range: a row inserted and later deleted (or the
    /// reverse) is no change; `_change_ordinal` and `_commit_snapshot_id` are those of
    /// the change that remains (Spark's `net_changes`).
    NetChanges,
    /// A `DELETE` and an `INSERT` of one snapshot with equal values in these columns
    /// become `UPDATE_BEFORE` and `UPDATE_AFTER` (Spark's `compute_updates`).
    UpdateImages(Vec<String>),
}

/// The snapshot range `(from exclusive, to inclusive]` of `range` in `metadata`, as
/// Spark's `SparkChangelogScanBuilder` and Java's `BaseIncrementalScan` resolve it;
/// `None` for an empty changelog.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): a start (or end) given both as a
/// snapshot id and a timestamp, a start timestamp not before the end one, an end snapshot
/// the table does not hold, a start snapshot that is not the parent of an ancestor of the
/// end one (e.g. a start after the end), history too short for the start timestamp.
pub fn changelog_range(
    metadata: &TableMetadata,
    range: &ChangelogRange,
) -> Result<Option<(Option<i64>, i64)>> {
    if range.start_snapshot_id.is_some() && range.start_timestamp_ms.is_some() {
        return Err(Error::invalid_argument(
            "Cannot set both start-snapshot-id and start-timestamp for changelogs",
        ));
    }
    if range.end_snapshot_id.is_some() && range.end_timestamp_ms.is_some() {
        return Err(Error::invalid_argument(
            "Cannot set both end-snapshot-id and end-timestamp for changelogs",
        ));
    }
    if let (Some(s), Some(e)) = (range.start_timestamp_ms, range.end_timestamp_ms) {
        if s >= e {
            return Err(Error::invalid_argument(format!(
                "Cannot set start-timestamp ({s}) to be greater than or equal to end-timestamp \
                 ({e}) for changelogs"
            )));
        }
    }
    let current = metadata.current_snapshot();
    let mut start = range.start_snapshot_id;
    let mut end = range.end_snapshot_id;
    if let Some(ts) = range.start_timestamp_ms {
        match current {
            Some(c) if ts <= c.timestamp_ms => {}
            _ => return Ok(None),
        }
        start = start_snapshot_at(metadata, ts)?;
    }
    if let Some(ts) = range.end_timestamp_ms {
        end = crate::catalog::ancestors(metadata, metadata.current_snapshot_id)
            .into_iter()
            .find(|s| s.timestamp_ms <= ts)
            .map(|s| s.snapshot_id);
        // no snapshot at or before the end: nothing changed by then
        if end.is_none() || start == end {
            return Ok(None);
        }
    }
    let to = match end {
        Some(id) => {
            if metadata.snapshot_by_id(id).is_none() {
                return Err(Error::invalid_argument(format!(
                    "Cannot find the end snapshot: {id}"
                )));
            }
            id
        }
        None => match current {
            Some(c) => c.snapshot_id,
            None if start.is_none() => return Ok(None),
            None => {
                return Err(Error::invalid_argument(
                    "End snapshot is not set and table has no current snapshot",
                ))
            }
        },
    };
    if let Some(from) = start {
        let is_parent_of_ancestor = crate::catalog::ancestors(metadata, Some(to))
            .iter()
            .any(|s| s.parent_snapshot_id == Some(from));
        if !is_parent_of_ancestor {
            return Err(Error::invalid_argument(format!(
                "Starting snapshot (exclusive) {from} is not a parent ancestor of end snapshot \
                 {to}"
            )));
        }
    }
    Ok(Some((start, to)))
}

/// The exclusive start snapshot for start timestamp `ts` (Spark's `getStartSnapshotId`
/// over Java's `SnapshotUtil.oldestAncestorAfter`): the snapshot committed exactly at
/// `ts`, else the parent of the oldest current ancestor committed after it (`None`: from
/// the table's first snapshot).
fn start_snapshot_at(metadata: &TableMetadata, ts: i64) -> Result<Option<i64>> {
    let mut last: Option<&Snapshot> = None;
    for s in crate::catalog::ancestors(metadata, metadata.current_snapshot_id) {
        if s.timestamp_ms < ts {
            return Ok(last.and_then(|l| l.parent_snapshot_id));
        } else if s.timestamp_ms == ts {
            return Ok(Some(s.snapshot_id));
        }
        last = Some(s);
    }
    match last {
        // the table's first snapshot is after `ts`: from the beginning
        Some(first) if first.parent_snapshot_id.is_none() => Ok(None),
        Some(oldest) => Err(Error::invalid_argument(format!(
            "Cannot find snapshot older than start-timestamp {ts} (the oldest ancestor \
             still held, {}, is newer)",
            oldest.snapshot_id
        ))),
        None => Ok(None),
    }
}

/// The changelog of `table` over `range`, post-processed by `mode`, as a DataFrame of
/// `ctx`: the table's columns (current schema), then [`CHANGE_TYPE`], [`CHANGE_ORDINAL`],
/// [`COMMIT_SNAPSHOT_ID`]. Files are listed now (the range is fixed); rows are read when
/// the DataFrame runs.
///
/// Errors: those of [`changelog_range`]; a changelog snapshot with delete files
/// ([`crate::ErrorKind::Unsupported`], naming it); identifier columns that are not
/// top-level columns of the table ([`crate::ErrorKind::InvalidArgument`]); map columns
/// (which DataFusion cannot compare rows by) ([`crate::ErrorKind::Unsupported`]); a
/// manifest list or manifest that cannot be read. Running the DataFrame of
/// [`ChangelogMode::UpdateImages`] fails when one snapshot deletes two rows with the
/// same identifier values (as Java's `ComputeUpdateIterator`).
pub async fn changelog(
    ctx: &SessionContext,
    table: &Table,
    range: &ChangelogRange,
    mode: &ChangelogMode,
) -> Result<DataFrame> {
    let provider = IcebergTableProvider::try_new(table.clone())?;
    let schema = Arc::clone(provider.arrow_schema());
    if let Some(f) = schema
        .fields()
        .iter()
        .find(|f| matches!(f.data_type(), DataType::Map(..)))
    {
        return Err(Error::unsupported(format!(
            "changelog of a table with map column '{}': rows with maps cannot be compared",
            f.name()
        )));
    }
    let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    if let ChangelogMode::UpdateImages(ids) = mode {
        if ids.is_empty() {
            return Err(Error::invalid_argument(
                "Cannot compute the update images because identifier columns are not set",
            ));
        }
        if let Some(bad) = ids.iter().find(|id| !columns.contains(id)) {
            let e = Error::invalid_argument(format!(
                "identifier column '{bad}' is not a top-level column of the table"
            ));
            let names = columns.iter().map(String::as_str);
            return Err(match crate::column_case::other_case_note(bad, names) {
                Some(note) => e.with_note(note),
                None => e,
            });
        }
    }
    let groups = match changelog_range(table.metadata(), range)? {
        Some((from, to)) => changed_files(table, from, to).await?,
        None => vec![],
    };
    let mut frames = vec![];
    for group in groups {
        let scan = ctx.read_table(Arc::new(FileSetTable::new(provider.clone(), group.files)))?;
        let mut exprs: Vec<Expr> = columns.iter().map(|c| column(c)).collect();
        exprs.push(lit(group.change_type).alias(CHANGE_TYPE));
        exprs.push(lit(group.ordinal).alias(CHANGE_ORDINAL));
        exprs.push(lit(group.snapshot_id).alias(COMMIT_SNAPSHOT_ID));
        frames.push(scan.select(exprs)?);
    }
    let mut raw = match frames.pop() {
        Some(last) => last,
        None => {
            let empty = ctx.read_table(Arc::new(FileSetTable::new(provider, vec![])))?;
            let mut exprs: Vec<Expr> = columns.iter().map(|c| column(c)).collect();
            exprs.push(lit(INSERT).alias(CHANGE_TYPE));
            exprs.push(lit(0i32).alias(CHANGE_ORDINAL));
            exprs.push(lit(0i64).alias(COMMIT_SNAPSHOT_ID));
            empty.select(exprs)?
        }
    };
    for frame in frames.into_iter().rev() {
        raw = frame.union(raw)?;
    }
    match mode {
        ChangelogMode::Changes => remove_carryovers(raw, &columns),
        ChangelogMode::NetChanges => net_changes(raw, &columns),
        ChangelogMode::UpdateImages(ids) => {
            update_images(remove_carryovers(raw, &columns)?, &columns, ids)
        }
    }
}

/// The files one changelog snapshot added (or removed).
struct ChangedFiles {
    ordinal: i32,
    snapshot_id: i64,
    change_type: &'static str,
    files: Vec<FileScanTask>,
}

/// The data files added and removed by the changelog snapshots of `(from, to]`, as
/// Java's `BaseIncrementalChangelogScan.doPlanFiles`: the data manifests those snapshots
/// wrote, their entries added or deleted by one of them.
async fn changed_files(table: &Table, from: Option<i64>, to: i64) -> Result<Vec<ChangedFiles>> {
    let metadata = table.metadata();
    // `ancestorsBetween(to, from)`, newest first
    let mut snapshots: Vec<&Snapshot> = vec![];
    for s in crate::catalog::ancestors(metadata, Some(to)) {
        if Some(s.snapshot_id) == from {
            break;
        }
        snapshots.push(s);
    }
    let mut changelog: Vec<(&Snapshot, Vec<crate::spec::ManifestFile>)> = vec![];
    for s in snapshots.into_iter().rev() {
        if s.operation() == Some("replace") {
            continue;
        }
        let manifests = TableScan::new(table.clone(), Some(s.clone()))
            .manifest_list()
            .await?;
        if manifests
            .iter()
            .any(|m| m.content == ManifestContent::Deletes)
        {
            return Err(Error::unsupported(format!(
                "changelog of snapshot {} ({}): it has delete files, and delete files are \
                 currently not supported in changelog scans (as Iceberg Java)",
                s.snapshot_id,
                s.operation().unwrap_or("unknown operation")
            )));
        }
        changelog.push((s, manifests));
    }
    let ordinals: HashMap<i64, i32> = changelog
        .iter()
        .enumerate()
        .map(|(i, (s, _))| (s.snapshot_id, i32::try_from(i).unwrap_or(i32::MAX)))
        .collect();
    let mut seen = HashSet::new();
    // (ordinal, insert?) → files
    let mut groups: HashMap<(i32, bool), Vec<FileScanTask>> = HashMap::new();
    for (_, manifests) in &changelog {
        for m in manifests {
            if m.content != ManifestContent::Data
                || !ordinals.contains_key(&m.added_snapshot_id)
                || !seen.insert(m.manifest_path.clone())
            {
                continue;
            }
            for entry in read_manifest(table, metadata, m).await? {
                let Some(ordinal) = ordinals.get(&entry.snapshot_id) else {
                    continue;
                };
                let inserted = match entry.status {
                    ManifestStatus::Added => true,
                    ManifestStatus::Deleted => false,
                    ManifestStatus::Existing => continue,
                };
                let location = table.file_io().remap(&entry.data_file.file_path)?;
                groups
                    .entry((*ordinal, inserted))
                    .or_default()
                    .push(FileScanTask {
                        entry: Arc::new(entry),
                        location,
                    });
            }
        }
    }
    let mut out: Vec<ChangedFiles> = groups
        .into_iter()
        .map(|((ordinal, inserted), files)| ChangedFiles {
            ordinal,
            snapshot_id: changelog
                .get(usize::try_from(ordinal).unwrap_or(usize::MAX))
                .map_or(0, |(s, _)| s.snapshot_id),
            change_type: if inserted { INSERT } else { DELETE },
            files,
        })
        .collect();
    out.sort_by_key(|g| (g.ordinal, g.change_type));
    Ok(out)
}

/// A column by its exact name (no dotted-path parsing).
fn column(name: &str) -> Expr {
    Expr::Column(Column::from_name(name))
}

/// 1 for rows whose change type is `t`, else 0 (a long).
fn is(t: &str) -> Result<Expr> {
    Ok(when(column(CHANGE_TYPE).eq(lit(t)), lit(1i64)).otherwise(lit(0i64))?)
}

/// `f(arg) OVER (PARTITION BY partition ORDER BY order)` of aggregate `f` (frame: the
/// rows up to the current one when ordered).
fn aggregate_over(
    f: Arc<datafusion::logical_expr::AggregateUDF>,
    arg: Expr,
    partition: Vec<Expr>,
    order: Vec<datafusion::logical_expr::SortExpr>,
) -> Result<Expr> {
    let frame = if order.is_empty() {
        WindowFrame::new(None)
    } else {
        WindowFrame::new_bounds(
            WindowFrameUnits::Rows,
            WindowFrameBound::Preceding(ScalarValue::Null),
            WindowFrameBound::CurrentRow,
        )
    };
    Ok(Expr::from(WindowFunction::new(f, vec![arg]))
        .partition_by(partition)
        .order_by(order)
        .window_frame(frame)
        .build()?)
}

/// The expressions whose values tell two rows of `columns` (of `frame`) apart as
/// Spark's `ChangelogIterator.isSameRecord` does (`Objects.equals` of each column's
/// boxed value): each column, and for a float or double column also its text, since
/// `Double.equals` tells `-0.0` from `0.0` (every NaN equal) while DataFusion's
/// partitions take them as one value.
fn row_key(frame: &DataFrame, columns: &[String]) -> Vec<Expr> {
    let mut key: Vec<Expr> = columns.iter().map(|c| column(c)).collect();
    for c in columns {
        let float = frame
            .schema()
            .field_with_unqualified_name(c)
            .is_ok_and(|f| f.data_type().is_floating());
        if float {
            key.push(cast(column(c), DataType::Utf8));
        }
    }
    key
}

/// `df` with, per row, the deletes (`__d`) and inserts (`__i`) among the rows of its
/// `key`, and its number among the rows of its key and change type (`__rn`, from 1).
fn counted(df: DataFrame, key: Vec<Expr>) -> Result<DataFrame> {
    let mut by_type = key.clone();
    by_type.push(column(CHANGE_TYPE));
    // one `window` per partitioning: DataFusion plans each over one sort
    Ok(df
        .window(vec![
            aggregate_over(sum_udaf(), is(DELETE)?, key.clone(), vec![])?.alias("__d"),
            aggregate_over(sum_udaf(), is(INSERT)?, key, vec![])?.alias("__i"),
        ])?
        .window(vec![row_number()
            .partition_by(by_type)
            .build()?
            .alias("__rn")])?)
}

/// Spark's `RemoveCarryoverIterator` as a plan: among rows equal in every column but
/// `_change_type` (so of one snapshot; see [`row_key`]), D deletes and I inserts leave
/// D−I deletes or I−D inserts.
fn remove_carryovers(raw: DataFrame, columns: &[String]) -> Result<DataFrame> {
    let mut key = row_key(&raw, columns);
    key.push(column(CHANGE_ORDINAL));
    key.push(column(COMMIT_SNAPSHOT_ID));
    let windowed = counted(raw, key)?;
    let (d, i, rn) = (column("__d"), column("__i"), column("__rn"));
    let keep = (column(CHANGE_TYPE)
        .eq(lit(DELETE))
        .and(rn.clone().lt_eq(d.clone() - i.clone())))
    .or(column(CHANGE_TYPE).eq(lit(INSERT)).and(rn.lt_eq(i - d)));
    Ok(windowed.filter(keep)?.select(output(columns))?)
}

/// The view's columns, in order.
fn output(columns: &[String]) -> Vec<Expr> {
    let mut out: Vec<Expr> = columns.iter().map(|c| column(c)).collect();
    out.extend([
        column(CHANGE_TYPE),
        column(CHANGE_ORDINAL),
        column(COMMIT_SNAPSHOT_ID),
    ]);
    out
}

/// Spark's `RemoveNetCarryoverIterator` as a plan. Rows equal in the table's columns
/// (see [`row_key`]), ordered by ordinal then type (`DELETE` first), are read as runs whose inserts and
/// deletes cancel; what the last run leaves (|inserts − deletes| of the whole group,
/// of the sign's type) is emitted as copies of that run's first row.
fn net_changes(raw: DataFrame, columns: &[String]) -> Result<DataFrame> {
    let key = row_key(&raw, columns);
    let order = vec![
        column(CHANGE_ORDINAL).sort(true, false),
        column(CHANGE_TYPE).sort(true, false),
    ];
    let sign = is(INSERT)? - is(DELETE)?;
    let windowed = raw
        .window(vec![
            aggregate_over(sum_udaf(), sign.clone(), key.clone(), order.clone())?.alias("__s"),
            row_number()
                .partition_by(key.clone())
                .order_by(order)
                .build()?
                .alias("__j"),
        ])?
        .window(vec![aggregate_over(
            sum_udaf(),
            sign.clone(),
            key.clone(),
            vec![],
        )?
        .alias("__net")])?;
    // a run starts where the sum before the row is 0
    let start = when((column("__s") - sign).eq(lit(0i64)), column("__j")).end()?;
    let runs = windowed.window(vec![aggregate_over(
        max_udaf(),
        start,
        key.clone(),
        vec![],
    )?
    .alias("__last_run")])?;
    let net = column("__net");
    let net_type = when(net.clone().gt(lit(0i64)), lit(INSERT)).otherwise(lit(DELETE))?;
    let last_run = runs.filter(
        net.clone()
            .not_eq(lit(0i64))
            .and(column("__j").gt_eq(column("__last_run")))
            .and(column(CHANGE_TYPE).eq(net_type)),
    )?;
    let by_j = vec![column("__j").sort(true, false)];
    let first = |c: &str| aggregate_over(first_value_udaf(), column(c), key.clone(), by_j.clone());
    let numbered = last_run.window(vec![
        row_number()
            .partition_by(key.clone())
            .order_by(by_j.clone())
            .build()?
            .alias("__k"),
        first(CHANGE_ORDINAL)?.alias("__first_ordinal"),
        first(COMMIT_SNAPSHOT_ID)?.alias("__first_snapshot"),
    ])?;
    let abs_net = case(net.clone().gt(lit(0i64)))
        .when(lit(true), net.clone())
        .otherwise(lit(0i64) - net)?;
    let kept = numbered.filter(column("__k").lt_eq(abs_net))?;
    let mut out: Vec<Expr> = columns.iter().map(|c| column(c)).collect();
    out.extend([
        column(CHANGE_TYPE),
        column("__first_ordinal").alias(CHANGE_ORDINAL),
        column("__first_snapshot").alias(COMMIT_SNAPSHOT_ID),
    ]);
    Ok(kept.select(out)?)
}

/// Spark's `ComputeUpdateIterator` as a plan (after carry-over removal): within one
/// snapshot, a `DELETE` and an `INSERT` with equal `ids` values become `UPDATE_BEFORE`
/// and `UPDATE_AFTER` (a second insert of those values stays an `INSERT`). Two deletes
/// with equal `ids` values in one snapshot fail the query, as in Java.
fn update_images(changes: DataFrame, columns: &[String], ids: &[String]) -> Result<DataFrame> {
    let mut key: Vec<Expr> = ids.iter().map(|c| column(c)).collect();
    key.push(column(CHANGE_ORDINAL));
    let windowed = counted(changes, key)?;
    let message = format!(
        "Cannot compute updates because there are multiple rows with the same identifier \
         fields([{}]). Please make sure the rows are unique.",
        ids.join(",")
    );
    let unique = create_udf(
        "iceberg_changelog_unique_identifiers",
        vec![DataType::Int64],
        DataType::Boolean,
        Volatility::Immutable,
        Arc::new(move |args: &[ColumnarValue]| {
            let arrays = ColumnarValue::values_to_arrays(args)?;
            let Some(deletes) = arrays
                .first()
                .and_then(|a| a.as_primitive_opt::<Int64Type>())
            else {
                return Err(DataFusionError::Internal(
                    "iceberg_changelog_unique_identifiers takes a long".to_string(),
                ));
            };
            if deletes.iter().any(|d| d.is_some_and(|d| d > 1)) {
                return Err(DataFusionError::Execution(message.clone()));
            }
            Ok(ColumnarValue::Array(Arc::new(BooleanArray::from(vec![
                true;
                deletes.len()
            ]))))
        }),
    );
    let checked = windowed.filter(unique.call(vec![column("__d")]))?;
    let (d, i) = (column("__d"), column("__i"));
    let change_type = when(
        column(CHANGE_TYPE).eq(lit(DELETE)).and(i.gt_eq(lit(1i64))),
        lit("UPDATE_BEFORE"),
    )
    .when(
        column(CHANGE_TYPE)
            .eq(lit(INSERT))
            .and(d.eq(lit(1i64)))
            .and(column("__rn").eq(lit(1u64))),
        lit("UPDATE_AFTER"),
    )
    .otherwise(column(CHANGE_TYPE))?;
    let mut out: Vec<Expr> = columns.iter().map(|c| column(c)).collect();
    out.extend([
        change_type.alias(CHANGE_TYPE),
        column(CHANGE_ORDINAL),
        column(COMMIT_SNAPSHOT_ID),
    ]);
    Ok(checked.select(out)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int32Array, Int64Array, RecordBatch, StringArray};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{Field, Schema};

    /// `id`, `s`, `_change_type`, `_change_ordinal`, `_commit_snapshot_id`.
    type R = (i64, String, String, i32, i64);

    /// Rows read in order, as Java's iterators read them (`hasNext`, `next`).
    struct Rows(Vec<R>, usize);

    impl Rows {
        fn has_next(&self) -> bool {
            self.1 < self.0.len()
        }
        fn next(&mut self) -> R {
            self.1 += 1;
            self.0[self.1 - 1].clone()
        }
    }

    /// Java's `RemoveCarryoverIterator`, line by line, over rows sorted by every column
    /// but the change type, then the change type.
    fn java_remove_carryovers(rows: Vec<R>) -> Vec<R> {
        let same = |a: &R, b: &R| a.0 == b.0 && a.1 == b.1 && a.3 == b.3 && a.4 == b.4;
        let mut it = Rows(rows, 0);
        let (mut cached_deleted, mut deleted_count, mut cached_next) = (None::<R>, 0, None::<R>);
        let mut out = vec![];
        while cached_deleted.is_some() || cached_next.is_some() || it.has_next() {
            let boundary = !it.has_next() || cached_next.is_some();
            if boundary {
                if let Some(d) = cached_deleted.clone() {
                    deleted_count -= 1;
                    if deleted_count == 0 {
                        cached_deleted = None;
                    }
                    out.push(d);
                    continue;
                }
            }
            let current = match cached_next.take() {
                Some(n) => n,
                None => it.next(),
            };
            if current.2 == DELETE && it.has_next() {
                cached_deleted = Some(current);
                deleted_count = 1;
                let mut next_row = Some(it.next());
                while let (Some(n), Some(d)) = (next_row.clone(), cached_deleted.clone()) {
                    if !same(&d, &n) {
                        break;
                    }
                    if n.2 == INSERT {
                        deleted_count -= 1;
                        if deleted_count == 0 {
                            cached_deleted = None;
                        }
                    } else {
                        deleted_count += 1;
                    }
                    next_row = it.has_next().then(|| it.next());
                }
                cached_next = next_row;
            } else {
                out.push(current);
            }
        }
        out
    }

    /// Java's `RemoveNetCarryoverIterator`, line by line, over rows sorted by the table's
    /// columns, then ordinal, then change type.
    fn java_remove_net_carryovers(rows: Vec<R>) -> Vec<R> {
        let same = |a: &R, b: &R| a.0 == b.0 && a.1 == b.1;
        let opposite = |a: &R, b: &R| a.2 != b.2;
        let mut it = Rows(rows, 0);
        let (mut cached_next, mut cached_row, mut count) = (None::<R>, None::<R>, 0);
        let mut out = vec![];
        while count > 0 || cached_next.is_some() || it.has_next() {
            if count > 0 {
                count -= 1;
                out.extend(cached_row.clone());
                continue;
            }
            let current = match cached_next.take() {
                Some(n) => n,
                None => it.next(),
            };
            cached_row = Some(current.clone());
            if !it.has_next() {
                out.push(current);
                continue;
            }
            count = 1;
            let mut next = it.next();
            cached_next = Some(next.clone());
            while same(&current, &next) {
                if opposite(&current, &next) {
                    count -= 1;
                } else {
                    count += 1;
                }
                if count <= 0 || !it.has_next() {
                    cached_next = None;
                    break;
                }
                next = it.next();
                cached_next = Some(next.clone());
            }
        }
        out
    }

    fn frame(ctx: &SessionContext, rows: &[R]) -> DataFrame {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new(CHANGE_TYPE, DataType::Utf8, false),
            Field::new(CHANGE_ORDINAL, DataType::Int32, false),
            Field::new(COMMIT_SNAPSHOT_ID, DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.1))),
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.2))),
                Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.3))),
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.4))),
            ],
        )
        .expect("batch");
        ctx.read_batch(batch).expect("read")
    }

    async fn collect(df: DataFrame) -> Vec<R> {
        let mut out = vec![];
        for b in df.collect().await.expect("collect") {
            let long = |i: usize| cast(b.column(i), &DataType::Int64).expect("cast");
            let (id, o, sid) = (long(0), long(3), long(4));
            let (id, o, sid) = (
                id.as_primitive::<Int64Type>(),
                o.as_primitive::<Int64Type>(),
                sid.as_primitive::<Int64Type>(),
            );
            let text = |i: usize| cast(b.column(i), &DataType::Utf8).expect("cast");
            let (s, t) = (text(1), text(2));
            let (s, t) = (s.as_string::<i32>(), t.as_string::<i32>());
            for r in 0..b.num_rows() {
                out.push((
                    id.value(r),
                    s.value(r).to_string(),
                    t.value(r).to_string(),
                    i32::try_from(o.value(r)).expect("ordinal"),
                    sid.value(r),
                ));
            }
        }
        out.sort();
        out
    }

    /// The plans of carry-over removal and net changes answer as Java's iterators on
    /// random changelogs with many equal rows (duplicates, rows inserted and deleted
    /// several times, in one snapshot or across several).
    #[tokio::test]
    async fn carryover_plans_answer_as_javas_iterators() {
        let ctx = SessionContext::new();
        let columns = ["id".to_string(), "s".to_string()];
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut random = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for case in 0..80 {
            let rows: Vec<R> = (0..random(14))
                .map(|_| {
                    let ordinal = i32::try_from(random(3)).expect("small");
                    (
                        i64::try_from(random(2)).expect("small"),
                        ["a", "b"][usize::try_from(random(2)).expect("small")].to_string(),
                        [INSERT, DELETE][usize::try_from(random(2)).expect("small")].to_string(),
                        ordinal,
                        100 + i64::from(ordinal),
                    )
                })
                .collect();
            let mut sorted = rows.clone();
            sorted.sort_by(|a, b| (a.0, &a.1, a.3, a.4, &a.2).cmp(&(b.0, &b.1, b.3, b.4, &b.2)));
            let mut expected = java_remove_carryovers(sorted.clone());
            expected.sort();
            let got = collect(remove_carryovers(frame(&ctx, &rows), &columns).expect("plan")).await;
            assert_eq!(got, expected, "case {case}: {rows:?}");
            let mut expected = java_remove_net_carryovers(sorted);
            expected.sort();
            let got = collect(net_changes(frame(&ctx, &rows), &columns).expect("plan")).await;
            assert_eq!(got, expected, "case {case}: {rows:?}");
        }
    }
}
