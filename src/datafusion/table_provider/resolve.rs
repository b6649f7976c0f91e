//! Equality deletes resolved to deleted positions once per session (issue 18, item 4).
//!
//! Probing equality deletes per batch ([`EqualityDeleteExec`]) costs every scan the
//! decoding of the equality columns, two hidden per-file columns and a hash probe per
//! row: TPC-H SF1 `lineitem` after five merge-on-read refreshes (equality deletes on
//! `l_orderkey`) scans at about 1.5× the compacted table in `q06`. But which rows of a
//! data file its equality delete files delete never changes: data and delete files are
//! immutable (spec: "Overview"), and which delete files apply to a data file (spec:
//! "Scan Planning": a greater data sequence number, a global delete or one of the data
//! file's partition) is fixed by the files themselves. So the first scan that meets a
//! data file with equality deletes resolves them: one pass over the file's equality
//! columns (and each row's position), probed by the same [`EqualityDeleteExec`], gives
//! the deleted positions, which the session's position delete cache keeps (keyed by
//! the data file and the set of equality delete files). This scan and every later one
//! apply them as position deletes, merged with the file's own position deletes and
//! deletion vectors: a row selection or a per-batch mask, without reading the equality
//! columns.
//!
//! The pass reads every row of the file, ignoring its position deletes (a row both
//! deleted by position and matched by a key is resolved as deleted either way, so the
//! kept positions hold for any snapshot that lists the same delete files). It runs at
//! planning time, in the session's task context, over all files to resolve at once.
//! `icefloe.equality_deletes` chooses: `auto` resolves unless the scan has a `LIMIT`
//! (which may read far less than the files) or the cache keeps nothing; `probe` never
//! resolves; `resolve` always does.
//!
//! [`EqualityDeleteExec`]: crate::datafusion::equality_delete_exec::EqualityDeleteExec

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Int64Type};
use datafusion::catalog::Session;
use datafusion::physical_plan::execute_stream;
use futures::TryStreamExt;
use roaring::RoaringTreemap;

use crate::datafusion::delete_planning::{
    DeletePlan, EqualityDeletePolicy, PositionDeletes, NO_EQUALITY_DELETES,
};
use crate::datafusion::options::IcefloeOptions;
use crate::error::{Error, Result};
use crate::scan::file_version::FileVersion;

use super::hidden::{Hidden, FILE_COLUMN, POS_COLUMN};
use super::IcebergTableProvider;

/// A data file's cache key: its read location and its equality delete files' read
/// locations.
type ResolvedKey = (String, Vec<String>);

impl IcebergTableProvider {
    /// `plan` with the equality deletes of its files applied as deleted positions where
    /// the session's cache holds them or the policy resolves them now (see the module
    /// docs); a scan with a `limit` resolves only under `resolve`. Files left with
    /// equality deletes keep them, and `plan.equality_deletes` is emptied when none is.
    /// A file whose rows are all deleted is dropped and counted as fully deleted.
    ///
    /// Errors: an unknown `icefloe.equality_deletes`, a location that does not resolve,
    /// any error of the resolving scan (a missing or corrupt data or delete file).
    pub(super) async fn resolve_equality_deletes(
        &self,
        state: &dyn Session,
        mut plan: DeletePlan,
        limit: Option<usize>,
    ) -> Result<DeletePlan> {
        if plan.equality_deletes.is_empty() {
            return Ok(plan);
        }
        let policy = match state.config_options().extensions.get::<IcefloeOptions>() {
            Some(options) => EqualityDeletePolicy::parse(options.equality_deletes.as_str())?,
            None => EqualityDeletePolicy::Auto,
        };
        if policy == EqualityDeletePolicy::Probe {
            return Ok(plan);
        }
        let cache = Arc::clone(&self.caches.position_deletes);
        let io = self.table.file_io();
        let mut keys: Vec<Option<ResolvedKey>> = Vec::with_capacity(plan.files.len());
        for file in &plan.files {
            if file.equality_sequence_number == NO_EQUALITY_DELETES
                || file.equality_deletes.is_empty()
            {
                keys.push(None);
                continue;
            }
            // each location with the version its entry lists: a file re-added at the
            // same path is another file (`crate::scan::file_version`)
            let data =
                FileVersion::of(&file.task.entry).key(&io.remap(&file.task.data_file().file_path)?);
            let deletes = file
                .equality_deletes
                .iter()
                .map(|d| Ok(FileVersion::of(d).key(&io.remap(&d.data_file.file_path)?)))
                .collect::<Result<Vec<_>>>()?;
            keys.push(Some((data, deletes)));
        }
        let mut resolved: Vec<Option<Arc<RoaringTreemap>>> = keys
            .iter()
            .map(|key| {
                key.as_ref()
                    .and_then(|(data, deletes)| cache.get_resolved_equality_deletes(data, deletes))
            })
            .collect();
        let resolve_now = match policy {
            EqualityDeletePolicy::Auto => limit.is_none() && cache.max_bytes() > 0,
            EqualityDeletePolicy::Resolve => true,
            EqualityDeletePolicy::Probe => false,
        };
        let missing: Vec<usize> = (0..plan.files.len())
            .filter(|i| keys[*i].is_some() && resolved[*i].is_none())
            .collect();
        if resolve_now && !missing.is_empty() {
            let found = self.resolve_files(state, &plan, &missing).await?;
            for (i, positions) in missing.into_iter().zip(found) {
                if let Some((data, deletes)) = &keys[i] {
                    cache.insert_resolved_equality_deletes(data, deletes, Arc::clone(&positions));
                }
                resolved[i] = Some(positions);
            }
        }
        let files = std::mem::take(&mut plan.files);
        for (mut file, positions) in files.into_iter().zip(resolved) {
            let Some(positions) = positions else {
                plan.files.push(file);
                continue;
            };
            plan.metrics.data_files_equality_resolved += 1;
            file.equality_sequence_number = NO_EQUALITY_DELETES;
            file.equality_deletes.clear();
            if !positions.is_empty() {
                let total = u64::try_from(file.task.data_file().record_count).unwrap_or(0);
                let mut deleted = match &file.position {
                    Some(p) => (*p.deleted).clone(),
                    None => RoaringTreemap::new(),
                };
                deleted |= positions.as_ref();
                if deleted.len() >= total {
                    plan.metrics.data_files_fully_deleted += 1;
                    continue;
                }
                file.position = Some(PositionDeletes::new(deleted, total));
            }
            plan.files.push(file);
        }
        if plan
            .files
            .iter()
            .all(|f| f.equality_sequence_number == NO_EQUALITY_DELETES)
        {
            plan.equality_deletes.clear();
        }
        Ok(plan)
    }

    /// The positions equality deletes delete in `plan.files[i]` for each `i` of
    /// `which`, in that order: one scan of those files (every row, no position deletes)
    /// probed by [`EqualityDeleteExec`](crate::datafusion::equality_delete_exec::EqualityDeleteExec),
    /// whose surviving positions are complemented within each file's `record_count`.
    async fn resolve_files(
        &self,
        state: &dyn Session,
        plan: &DeletePlan,
        which: &[usize],
    ) -> Result<Vec<Arc<RoaringTreemap>>> {
        let mut by_path: HashMap<String, usize> = HashMap::with_capacity(which.len());
        let mut totals = Vec::with_capacity(which.len());
        let mut files = Vec::with_capacity(which.len());
        for (k, i) in which.iter().enumerate() {
            let mut file = plan.files[*i].clone();
            file.position = None;
            file.position_deletes.clear();
            let data_file = file.task.data_file();
            by_path.insert(data_file.file_path.clone(), k);
            totals.push(u64::try_from(data_file.record_count).map_err(|_| {
                Error::invalid_data(format!(
                    "data file '{}' has a negative record_count",
                    data_file.file_path
                ))
            })?);
            files.push(file);
        }
        let sub = DeletePlan {
            files,
            equality_deletes: plan.equality_deletes.clone(),
            ..Default::default()
        };
        let exec = self.build_scan(state, sub, Some(&vec![]), &[], None, Hidden::RowIds)?;
        let schema = exec.schema();
        let file_at = schema.index_of(FILE_COLUMN)?;
        let pos_at = schema.index_of(POS_COLUMN)?;
        let mut live = vec![RoaringTreemap::new(); which.len()];
        let mut stream = execute_stream(exec, state.task_ctx())?;
        while let Some(batch) = stream.try_next().await? {
            add_live_positions(&batch, file_at, pos_at, &by_path, &mut live)?;
        }
        Ok(live
            .into_iter()
            .zip(totals)
            .map(|(live, total)| {
                let mut deleted = RoaringTreemap::new();
                deleted.insert_range(0..total);
                deleted -= live;
                Arc::new(deleted)
            })
            .collect())
    }
}

/// Add the positions of `batch`'s rows (data file location in column `file_at`,
/// position in `pos_at`) to `live` at the index `by_path` gives the location, as runs
/// of consecutive positions.
fn add_live_positions(
    batch: &RecordBatch,
    file_at: usize,
    pos_at: usize,
    by_path: &HashMap<String, usize>,
    live: &mut [RoaringTreemap],
) -> Result<()> {
    let files = batch.column(file_at);
    let file_of = |row: usize| -> Option<&str> {
        if files.is_null(row) {
            return None;
        }
        match files.data_type() {
            DataType::Utf8 => Some(files.as_string::<i32>().value(row)),
            DataType::LargeUtf8 => Some(files.as_string::<i64>().value(row)),
            DataType::Utf8View => Some(files.as_string_view().value(row)),
            _ => None,
        }
    };
    let positions = batch
        .column(pos_at)
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| Error::invalid_data("row positions of a resolving scan are not Int64"))?;
    // the run being collected: (file index, first position, next position)
    let mut run: Option<(usize, u64, u64)> = None;
    let mut current: Option<(&str, usize)> = None;
    for row in 0..batch.num_rows() {
        let path = file_of(row).ok_or_else(|| {
            Error::invalid_data("a resolving scan returned a row without its file")
        })?;
        let k = match current {
            Some((p, k)) if p == path => k,
            _ => {
                let k = *by_path.get(path).ok_or_else(|| {
                    Error::invalid_data(format!(
                        "a resolving scan returned a row of data file '{path}', which it did not read"
                    ))
                })?;
                current = Some((path, k));
                k
            }
        };
        let pos = u64::try_from(positions.value(row))
            .map_err(|_| Error::invalid_data(format!("negative row position in '{path}'")))?;
        run = match run {
            Some((file, first, next)) if file == k && next == pos => Some((file, first, pos + 1)),
            Some((file, first, next)) => {
                live[file].insert_range(first..next);
                Some((k, pos, pos + 1))
            }
            None => Some((k, pos, pos + 1)),
        };
    }
    if let Some((file, first, next)) = run {
        live[file].insert_range(first..next);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::{Field, Schema};

    fn batch(rows: &[(&str, i64)]) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new(FILE_COLUMN, DataType::Utf8, false),
                Field::new(POS_COLUMN, DataType::Int64, false),
            ])),
            vec![
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.0))),
                Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
            ],
        )
        .unwrap()
    }

    #[test]
    fn live_positions_are_gathered_per_file_across_runs_and_batches() {
        let by_path = HashMap::from([("a".to_string(), 0), ("b".to_string(), 1)]);
        let mut live = vec![RoaringTreemap::new(), RoaringTreemap::new()];
        let first = batch(&[("a", 0), ("a", 1), ("a", 2), ("b", 5), ("a", 3), ("a", 7)]);
        add_live_positions(&first, 0, 1, &by_path, &mut live).unwrap();
        // a later batch of a range of file a read by another partition, lower positions
        let second = batch(&[("b", 6), ("a", 5), ("a", 6)]);
        add_live_positions(&second, 0, 1, &by_path, &mut live).unwrap();
        assert_eq!(live[0].iter().collect::<Vec<_>>(), [0, 1, 2, 3, 5, 6, 7]);
        assert_eq!(live[1].iter().collect::<Vec<_>>(), [5, 6]);
    }

    #[test]
    fn a_row_of_an_unknown_file_or_a_negative_position_is_an_error() {
        let by_path = HashMap::from([("a".to_string(), 0)]);
        let mut live = vec![RoaringTreemap::new()];
        let err = add_live_positions(&batch(&[("c", 0)]), 0, 1, &by_path, &mut live)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("data file 'c', which it did not read"),
            "{err}"
        );
        let err = add_live_positions(&batch(&[("a", -1)]), 0, 1, &by_path, &mut live)
            .unwrap_err()
            .to_string();
        assert!(err.contains("negative row position in 'a'"), "{err}");
    }
}
