//! The work of one row-level statement once its scan runs: find the rows the condition
//! matches, write what the mode asks for (rewritten data files, or delete files — position
//! deletes or deletion vectors — and new rows) and commit once (see the [module docs](super)).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Int64Array, RecordBatch, StringArray,
};
use datafusion::arrow::compute::kernels::zip::zip;
use datafusion::arrow::compute::{filter_record_batch, CastOptions};
use datafusion::arrow::datatypes::{Int64Type, SchemaRef};
use datafusion::execution::{SendableRecordBatchStream, SessionState, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::ExecutionPlan;
use futures::StreamExt;
use roaring::RoaringTreemap;

use super::merge::MergeActions;
use super::sorted_writer::{table_ordering, RowsWriter};
use super::RowLevelMode;
use crate::datafusion::delete_planning::DeletePlan;
use crate::datafusion::insert::{data_location, WriteTarget};
use crate::datafusion::snapshot_metric::record_snapshot;
use crate::datafusion::table_provider::IcebergTableProvider;
use crate::error::{Error, ErrorKind, Result};
use crate::expr::Predicate;
use crate::spec::{DataFile, FormatVersion, Literal};
use crate::table::Table;
use crate::time_narrowing::cast_flooring;
use crate::transaction::{IsolationLevel, OverwriteFiles, RowDelta, Transaction};
use crate::write::{DataFileWriterConfig, PartitionedDataFileWriter};

/// What the statement does to the rows its condition matches.
#[derive(Debug)]
pub(crate) enum RowLevelOp {
    /// Remove them.
    Delete,
    /// Set columns (index in the table's Arrow schema) to expressions over the row.
    Update(Vec<(usize, Arc<dyn PhysicalExpr>)>),
    /// `MERGE`: the clauses, over the target's rows joined with the source.
    Merge(MergeActions),
}

/// What pass one found in one input partition.
#[derive(Debug, Default)]
struct PassOne {
    positions: Positions,
    count: u64,
    /// Target rows a `MERGE` matched (for the cardinality check across partitions).
    matched: Positions,
    /// New data files written.
    files: Vec<DataFile>,
}

/// The row-id columns of a row-level scan batch whose table has `columns` columns: the
/// data file locations and the row positions.
///
/// Errors: a batch without them ([`ErrorKind::InvalidData`]).
fn row_ids(batch: &RecordBatch, columns: usize) -> Result<(&StringArray, &Int64Array)> {
    let files = batch
        .columns()
        .get(columns)
        .and_then(|c| c.as_string_opt::<i32>());
    let pos = batch
        .columns()
        .get(columns + 1)
        .and_then(|c| c.as_primitive_opt::<Int64Type>());
    match (files, pos) {
        (Some(files), Some(pos)) => Ok((files, pos)),
        _ => Err(Error::invalid_data(
            "a row-level scan batch lacks its data file and position columns",
        )),
    }
}

fn cardinality_error(statement: &str, ident: &crate::catalog::TableIdent) -> Error {
    match statement {
        "MERGE" => Error::invalid_argument(format!(
            "MERGE into '{ident}': a row of the target table matched more than one row of the \
             source (each target row may match at most one source row)"
        )),
        // a DELETE/UPDATE planned as a query (module `correlated`) that returned a row twice
        _ => Error::invalid_argument(format!(
            "{statement} of '{ident}': the statement's plan returned a row of the table more \
             than once"
        )),
    }
}

/// Deleted positions per data file location.
pub(super) type Positions = HashMap<String, RoaringTreemap>;

/// A partition tuple as bytes (each value's single-value serialization).
pub(super) type PartitionKey = Vec<Option<Vec<u8>>>;

/// The deletes of one partition: its tuple and (data file, positions) pairs.
pub(super) type DeleteGroup = (Vec<Option<Literal>>, Vec<(String, RoaringTreemap)>);

/// One row-level statement: planned state and the run.
#[derive(Debug)]
pub(crate) struct RowLevelJob {
    provider: IcebergTableProvider,
    target: WriteTarget,
    session: SessionState,
    mode: RowLevelMode,
    isolation: IsolationLevel,
    conflict_filter: Predicate,
    statement: &'static str,
    op: RowLevelOp,
    condition: Option<Arc<dyn PhysicalExpr>>,
    /// Every data file the statement may change, deletes planned.
    plan: DeletePlan,
    /// Files removed whole (spec id, file), and which of them are read to be counted.
    whole: Vec<(i32, DataFile)>,
    whole_read: HashSet<String>,
    /// Rows of whole files known without reading them.
    whole_rows: u64,
    /// The write-audit-publish id the commit is staged under (`None`: it moves the
    /// branch).
    wap_id: Option<String>,
    pub(crate) metrics: ExecutionPlanMetricsSet,
}

impl RowLevelJob {
    pub(crate) fn new(
        provider: IcebergTableProvider,
        target: WriteTarget,
        session: SessionState,
        mode: RowLevelMode,
        isolation: IsolationLevel,
        conflict_filter: Predicate,
        statement: &'static str,
    ) -> Self {
        Self {
            provider,
            target,
            session,
            mode,
            isolation,
            conflict_filter,
            statement,
            op: RowLevelOp::Delete,
            condition: None,
            plan: DeletePlan::default(),
            whole: vec![],
            whole_read: HashSet::new(),
            whole_rows: 0,
            wap_id: None,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// Stage the commit for write-audit-publish under `wap_id` (a snapshot with summary
    /// `wap.id` that no branch points at; its parent the snapshot the statement read, or,
    /// when another commit landed meanwhile, that commit, once the usual conflict checks
    /// passed); `None`: commit as usual.
    pub(crate) fn staged(mut self, wap_id: Option<String>) -> Self {
        self.wap_id = wap_id;
        self
    }

    /// Remove `file` whole; `read`: it has deletes, so its rows are counted by reading.
    pub(crate) fn remove_whole(&mut self, spec_id: i32, file: DataFile, read: bool) {
        if read {
            self.whole_read.insert(file.file_path.clone());
        } else {
            self.whole_rows = self
                .whole_rows
                .saturating_add(u64::try_from(file.record_count).unwrap_or(0));
        }
        self.whole.push((spec_id, file));
    }

    /// Remove `file` whole, a file every row of which is deleted already (no row counted).
    pub(crate) fn remove_fully_deleted(&mut self, spec_id: i32, file: DataFile) {
        self.whole.push((spec_id, file));
    }

    pub(crate) fn set_plan(&mut self, plan: DeletePlan) {
        self.plan = plan;
    }

    pub(crate) fn set_operation(
        &mut self,
        op: RowLevelOp,
        condition: Option<Arc<dyn PhysicalExpr>>,
    ) {
        self.op = op;
        self.condition = condition;
    }

    /// The statement's name and table, for errors and display.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} {}, mode={:?}",
            self.statement, self.target.ident, self.mode
        )
    }

    fn table(&self) -> &Table {
        self.provider.table()
    }

    /// Which rows of `batch` (a row-level scan batch) the condition matches (`TRUE`).
    fn matches(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        let Some(condition) = &self.condition else {
            return Ok(BooleanArray::from(vec![true; batch.num_rows()]));
        };
        let value = condition.evaluate(batch)?.into_array(batch.num_rows())?;
        let mask = value.as_boolean_opt().ok_or_else(|| {
            Error::invalid_argument(format!(
                "{} condition is not boolean ({})",
                self.statement,
                value.data_type()
            ))
        })?;
        // NULL is not a match (SQL three-valued logic)
        Ok(mask.iter().map(|v| Some(v == Some(true))).collect())
    }

    /// The batch's table columns (without the two row-id columns).
    fn table_columns(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let n = self.provider.arrow_schema().fields().len();
        Ok(batch.project(&(0..n).collect::<Vec<_>>())?)
    }

    /// The table columns of `batch` with the update's assignments applied where `mask`
    /// is true. Each assignment is evaluated on those rows only (as Spark, Trino and
    /// DuckDB compute `SET` values only for the rows the condition matches): a value that
    /// fails on a row the statement leaves alone (`SET k = 10 / k WHERE k <> 0` over a
    /// `k = 0` row of a file copy-on-write rewrites) does not fail the statement.
    fn updated(&self, batch: &RecordBatch, mask: &BooleanArray) -> Result<RecordBatch> {
        let RowLevelOp::Update(assignments) = &self.op else {
            return self.table_columns(batch);
        };
        let table = self.table_columns(batch)?;
        let schema: SchemaRef = table.schema();
        let mut columns: Vec<ArrayRef> = table.columns().to_vec();
        for (index, expr) in assignments {
            let field = schema.field(*index);
            let value = expr
                .evaluate_selection(batch, mask)
                .and_then(|v| v.into_array(batch.num_rows()))
                .map_err(|e| {
                    Error::from(e).context(format!(
                        "UPDATE of '{}': computing the value of column '{}'",
                        self.target.ident,
                        field.name()
                    ))
                })?;
            let value =
                cast_flooring(&value, field.data_type(), &CastOptions::default()).map_err(|e| {
                    Error::invalid_argument(format!(
                        "UPDATE of '{}': cannot set column '{}' of type {} to a value of type {}",
                        self.target.ident,
                        field.name(),
                        field.data_type(),
                        value.data_type()
                    ))
                    .with_source(e)
                })?;
            columns[*index] = zip(mask, &value, &columns[*index])?;
        }
        super::required::table_rows(&schema, columns, "UPDATE SET")
            .map_err(|e| e.context(format!("UPDATE of '{}'", self.target.ident)))
    }

    /// Whether the rows a statement writes carry their lineage explicitly: on every v3
    /// table (spec: "Row Lineage": a copied row keeps `_row_id` and
    /// `_last_updated_sequence_number`; an updated one keeps `_row_id` with a null
    /// `_last_updated_sequence_number`, which inherits the new snapshot's; an inserted
    /// one has both null, inheriting its file's `first_row_id` + position).
    fn keeps_lineage(&self) -> bool {
        self.table().metadata().format_version >= FormatVersion::V3
    }

    /// `rows` (table columns) with the lineage columns of `batch` (a v3 row-level scan
    /// batch of the same rows) appended; `_last_updated_sequence_number` null where
    /// `updated`.
    fn with_lineage(
        &self,
        rows: RecordBatch,
        batch: &RecordBatch,
        updated: &BooleanArray,
    ) -> Result<RecordBatch> {
        let n = self.provider.arrow_schema().fields().len();
        let (Some(row_id), Some(sequence)) =
            (batch.columns().get(n + 2), batch.columns().get(n + 3))
        else {
            return Err(Error::invalid_data(
                "a v3 row-level scan batch lacks its row lineage columns",
            ));
        };
        let sequence = datafusion::arrow::compute::nullif(sequence, updated)?;
        crate::datafusion::metadata_columns::append_lineage(&rows, Arc::clone(row_id), sequence)
    }

    /// A data file writer; `lineage`: with the two row lineage columns after the
    /// table's (reserved field ids 2147483540 and 2147483539). Its rows are sorted by the
    /// table's sort order, as an `INSERT`'s are (module `sorted_writer`), with `context`'s
    /// memory pool and spilling.
    ///
    /// Errors: a table without a default partition spec, or with a sort order a writer
    /// cannot sort by (naming the statement and table).
    fn writer_for(&self, lineage: bool, context: Arc<TaskContext>) -> Result<RowsWriter> {
        let ordering = table_ordering(self.table(), self.provider.arrow_schema())
            .map_err(|e| e.context(format!("{} of '{}'", self.statement, self.target.ident)))?;
        Ok(RowsWriter::new(
            self.data_file_writer(lineage)?,
            ordering,
            context,
        ))
    }

    fn data_file_writer(&self, lineage: bool) -> Result<PartitionedDataFileWriter> {
        let m = self.table().metadata();
        let spec = m.default_partition_spec().ok_or_else(|| {
            Error::invalid_data(format!(
                "table '{}' has no default partition spec",
                self.target.ident
            ))
        })?;
        let lineage_schema;
        let schema = if lineage {
            lineage_schema =
                crate::datafusion::metadata_columns::with_lineage_fields(m.current_schema())
                    .map_err(|e| e.context(format!("table '{}'", self.target.ident)))?;
            &lineage_schema
        } else {
            m.current_schema()
        };
        PartitionedDataFileWriter::new(
            self.table().file_io().clone(),
            &data_location(self.table()),
            schema,
            spec,
            DataFileWriterConfig::for_table(m)?,
        )
    }

    /// Pass one over one input partition: the positions to delete (of files not removed
    /// whole), the rows changed, the target rows a `MERGE` matched, and the new rows
    /// written (merge-on-read `UPDATE`, `MERGE`).
    async fn find_matches(
        &self,
        mut input: SendableRecordBatchStream,
        context: Arc<TaskContext>,
    ) -> Result<PassOne> {
        let writes_rows = match self.op {
            RowLevelOp::Merge(_) => true,
            RowLevelOp::Update(_) => self.mode == RowLevelMode::MergeOnRead,
            RowLevelOp::Delete => false,
        };
        let mut writer = if writes_rows {
            Some(self.writer_for(self.keeps_lineage(), context)?)
        } else {
            None
        };
        let result = async {
            let mut out = PassOne::default();
            while let Some(batch) = input.next().await {
                let batch = batch?;
                let new_rows = match &self.op {
                    RowLevelOp::Merge(actions) => self.merge_batch(actions, &batch, &mut out)?,
                    _ => self.match_batch(&batch, &mut out, writer.is_some())?,
                };
                if let Some(w) = &mut writer {
                    for rows in &new_rows {
                        w.write(rows).await?;
                    }
                }
            }
            Ok::<_, Error>(out)
        }
        .await;
        match (result, writer) {
            (Ok(mut out), Some(w)) => {
                out.files = w.close().await?;
                Ok(out)
            }
            (Ok(out), None) => Ok(out),
            (Err(e), Some(w)) => {
                let _ = w.abort().await;
                Err(e)
            }
            (Err(e), None) => Err(e),
        }
    }

    /// `DELETE`/`UPDATE`: the rows of `batch` the condition matches; returns their new
    /// versions when `new_rows` (merge-on-read `UPDATE`).
    fn match_batch(
        &self,
        batch: &RecordBatch,
        out: &mut PassOne,
        new_rows: bool,
    ) -> Result<Vec<RecordBatch>> {
        let columns = self.provider.arrow_schema().fields().len();
        let mask = self.matches(batch)?;
        let matched = mask.true_count();
        if matched == 0 {
            return Ok(vec![]);
        }
        out.count += matched as u64;
        let (files, pos) = row_ids(batch, columns)?;
        for row in (0..batch.num_rows()).filter(|r| mask.value(*r)) {
            let file = files.value(row);
            if self.whole_read.contains(file) {
                continue;
            }
            out.positions
                .entry(file.to_string())
                .or_default()
                .insert(pos.value(row) as u64);
        }
        if !new_rows {
            return Ok(vec![]);
        }
        let rows = filter_record_batch(batch, &mask)?;
        let all = BooleanArray::from(vec![true; rows.num_rows()]);
        let updated = self.updated(&rows, &all)?;
        if self.keeps_lineage() {
            // the new versions keep `_row_id`; their sequence number is the new snapshot's
            return Ok(vec![self.with_lineage(updated, &rows, &all)?]);
        }
        Ok(vec![updated])
    }

    /// `MERGE`: apply the clauses to a joined batch; returns the new rows.
    ///
    /// Errors: a target row matched twice (when the statement has a `MATCHED` clause).
    fn merge_batch(
        &self,
        actions: &MergeActions,
        batch: &RecordBatch,
        out: &mut PassOne,
    ) -> Result<Vec<RecordBatch>> {
        let columns = self.provider.arrow_schema().fields().len();
        let outcome = actions.apply(batch).map_err(|e| match self.statement {
            "MERGE" => e.context(format!("MERGE into '{}'", self.target.ident)),
            statement => e.context(format!("{statement} of '{}'", self.target.ident)),
        })?;
        out.count += outcome.count;
        let (files, pos) = row_ids(batch, columns)?;
        if actions.check_cardinality() {
            for row in (0..batch.num_rows()).filter(|r| outcome.matched.value(*r)) {
                let seen = out.matched.entry(files.value(row).to_string()).or_default();
                if !seen.insert(pos.value(row) as u64) {
                    return Err(cardinality_error(self.statement, &self.target.ident));
                }
            }
        }
        for row in (0..batch.num_rows()).filter(|r| outcome.removed.value(*r)) {
            let fresh = out
                .positions
                .entry(files.value(row).to_string())
                .or_default()
                .insert(pos.value(row) as u64);
            if !fresh {
                // a target row deleted again by another source row it matched (no
                // cardinality check): counted once
                out.count = out.count.saturating_sub(1);
            }
        }
        Ok(outcome.new_rows)
    }

    /// Pass two (copy-on-write) over one partition of the rewrite scan: each row not
    /// deleted written as it is, or as updated (`MERGE`: every row but those in
    /// `positions`, whose new versions pass one wrote).
    async fn rewrite(
        &self,
        mut input: SendableRecordBatchStream,
        positions: &Positions,
        context: Arc<TaskContext>,
    ) -> Result<Vec<DataFile>> {
        let lineage = self.keeps_lineage();
        let mut writer = self.writer_for(lineage, context)?;
        let columns = self.provider.arrow_schema().fields().len();
        let result = async {
            while let Some(batch) = input.next().await {
                let batch = batch?;
                // the rows pass one found (never the condition again: a volatile one,
                // e.g. random(), would pick other rows than it counted)
                let (files, pos) = row_ids(&batch, columns)?;
                let found: BooleanArray = (0..batch.num_rows())
                    .map(|r| {
                        Some(
                            positions
                                .get(files.value(r))
                                .is_some_and(|p| p.contains(pos.value(r) as u64)),
                        )
                    })
                    .collect();
                let out = match &self.op {
                    // MERGE: updated rows' new versions were written in pass one
                    RowLevelOp::Merge(_) | RowLevelOp::Delete => {
                        let keep: BooleanArray = found.iter().map(|f| f.map(|f| !f)).collect();
                        let kept = filter_record_batch(&batch, &keep)?;
                        let rows = self.table_columns(&kept)?;
                        if lineage {
                            let none = BooleanArray::from(vec![false; kept.num_rows()]);
                            self.with_lineage(rows, &kept, &none)?
                        } else {
                            rows
                        }
                    }
                    RowLevelOp::Update(_) if lineage => {
                        self.with_lineage(self.updated(&batch, &found)?, &batch, &found)?
                    }
                    RowLevelOp::Update(_) => self.updated(&batch, &found)?,
                };
                if out.num_rows() > 0 {
                    writer.write(&out).await?;
                }
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

    /// Run: pass one over `streams` (the scan's partitions), the writes, the commit.
    /// Returns the rows deleted or updated.
    pub(crate) async fn run(
        self: Arc<Self>,
        streams: Vec<SendableRecordBatchStream>,
        context: Arc<TaskContext>,
    ) -> Result<u64> {
        let mut written: Vec<DataFile> = vec![];
        let mut committing = false;
        let mut outcome = self
            .run_inner(streams, context, &mut written, &mut committing)
            .await;
        if !committing {
            if let Err(e) = outcome {
                // a read that failed because the statement's snapshot was expired meanwhile
                let base = self.provider.snapshot().map(|s| s.snapshot_id);
                outcome = Err(crate::transaction::expired_base::explain(
                    self.target.catalog.as_ref(),
                    &self.target.ident,
                    self.statement,
                    base,
                    e,
                )
                .await);
            }
        }
        if let Err(e) = &outcome {
            if e.kind() != ErrorKind::CommitStateUnknown {
                for f in &written {
                    let _ = self.table().file_io().delete(&f.file_path).await;
                }
                self.target
                    .catalog
                    .clean_up_failed_write(&self.target.ident, e)
                    .await;
            }
        }
        outcome
    }

    async fn run_inner(
        self: &Arc<Self>,
        streams: Vec<SendableRecordBatchStream>,
        context: Arc<TaskContext>,
        written: &mut Vec<DataFile>,
        committing: &mut bool,
    ) -> Result<u64> {
        // pass one, every input partition on its own task
        let mut tasks = tokio::task::JoinSet::new();
        for stream in streams {
            let (this, context) = (Arc::clone(self), Arc::clone(&context));
            tasks.spawn(async move { this.find_matches(stream, context).await });
        }
        let (mut positions, mut count) = (Positions::new(), self.whole_rows);
        let (mut new_rows, mut failure) = (vec![], None);
        let mut matched = Positions::new();
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(pass)) => {
                    let mut again = 0;
                    let merge = matches!(self.op, RowLevelOp::Merge(_));
                    for (file, rows) in pass.positions {
                        let seen = positions.entry(file).or_default();
                        // a row another partition changed too (a MERGE without the
                        // cardinality check): counted once. A DELETE or UPDATE scan
                        // returns each row once per manifest entry of its file: a file
                        // referenced by two live entries has each position changed
                        // twice, two rows, each counted.
                        if merge {
                            again += (&*seen & &rows).len();
                        }
                        *seen |= rows;
                    }
                    for (file, rows) in pass.matched {
                        let seen = matched.entry(file).or_default();
                        if !(&*seen & &rows).is_empty() {
                            failure = failure
                                .or(Some(cardinality_error(self.statement, &self.target.ident)));
                        }
                        *seen |= rows;
                    }
                    count += pass.count.saturating_sub(again);
                    written.extend(pass.files.iter().cloned());
                    new_rows.extend(pass.files);
                }
                Ok(Err(e)) => failure = failure.or(Some(e)),
                Err(e) => {
                    failure = failure.or(Some(
                        Error::new(ErrorKind::Io, "a row-level scan task failed").with_source(e),
                    ))
                }
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        if positions.is_empty() && self.whole.is_empty() && new_rows.is_empty() {
            return Ok(count);
        }
        crate::failpoint::hit("after-data-files");
        let (txn, snapshot_id) = match self.mode {
            RowLevelMode::MergeOnRead => {
                let v3 = self.table().metadata().format_version >= FormatVersion::V3;
                let (deletes, replaced) = if v3 {
                    super::delete_files::write_deletion_vectors(
                        self.table(),
                        &self.plan,
                        &positions,
                        written,
                    )
                    .await?
                } else {
                    (
                        super::delete_files::write_position_deletes(
                            self.table(),
                            &self.plan,
                            &positions,
                            written,
                        )
                        .await?,
                        vec![],
                    )
                };
                self.row_delta(&positions, deletes, &replaced, new_rows)?
            }
            RowLevelMode::CopyOnWrite => {
                let affected: HashSet<String> = positions.keys().cloned().collect();
                let positions = Arc::new(positions);
                let mut files = match self.rewrite_files(&positions, context).await {
                    Ok(f) => f,
                    Err((e, partial)) => {
                        written.extend(partial);
                        return Err(e);
                    }
                };
                written.extend(files.iter().cloned());
                // MERGE's updated and inserted rows, written in pass one
                files.extend(new_rows);
                self.overwrite(&affected, files)?
            }
        };
        *committing = true;
        // every failure names the statement, as its validation failures do (a commit
        // that ran out of retries included)
        txn.commit()
            .await
            .map_err(|e| e.context(format!("{} on '{}'", self.statement, self.target.ident)))?;
        record_snapshot(&self.metrics, self.wap_id.as_deref(), snapshot_id);
        Ok(count)
    }

    /// The planned data files by location: (spec id, file).
    fn planned_files(&self) -> HashMap<&str, (i32, &DataFile)> {
        super::delete_files::planned_files(&self.plan)
    }

    fn row_delta(
        &self,
        positions: &Positions,
        deletes: Vec<(i32, DataFile)>,
        replaced: &[DataFile],
        new_rows: Vec<DataFile>,
    ) -> Result<(Transaction, i64)> {
        let start = self.provider.snapshot().map(|s| s.snapshot_id);
        let mut delta = RowDelta::new(start)
            .with_isolation_level(self.isolation)
            .conflict_detection_filter(self.conflict_filter.clone());
        if let Some(branch) = self.provider.branch() {
            delta = delta.to_branch(branch);
        }
        let spec_id = self.table().metadata().default_spec_id;
        if !new_rows.is_empty() {
            delta = delta.add_rows(spec_id, new_rows)?;
        }
        let mut by_spec: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
        for (spec, file) in deletes {
            by_spec.entry(spec).or_default().push(file);
        }
        for (spec, files) in by_spec {
            delta = delta.add_deletes(spec, files)?;
        }
        let planned = self.planned_files();
        for path in positions.keys() {
            if let Some((spec, file)) = planned.get(path.as_str()) {
                delta = delta.validate_data_file(*spec, (*file).clone());
            }
        }
        for (spec, file) in &self.whole {
            delta = delta.remove_rows(*spec, file.clone());
        }
        for dv in replaced {
            delta = delta.remove_deletes(dv);
        }
        if let Some(wap) = &self.wap_id {
            delta = delta.stage_only(wap);
        }
        let id = delta.snapshot_id();
        Ok((self.transaction().add_action(delta), id))
    }

    fn overwrite(
        &self,
        affected: &HashSet<String>,
        files: Vec<DataFile>,
    ) -> Result<(Transaction, i64)> {
        let start = self.provider.snapshot().map(|s| s.snapshot_id);
        let mut overwrite = OverwriteFiles::new(start)
            .with_isolation_level(self.isolation)
            .conflict_detection_filter(self.conflict_filter.clone())
            .validate_no_conflicting_deletes();
        if let Some(branch) = self.provider.branch() {
            overwrite = overwrite.to_branch(branch);
        }
        for path in affected {
            overwrite = overwrite.delete_file(path.clone());
        }
        for (_, file) in &self.whole {
            overwrite = overwrite.delete_file(file.file_path.clone());
        }
        if !files.is_empty() {
            let spec_id = self.table().metadata().default_spec_id;
            overwrite = overwrite.add_files(spec_id, files)?;
        }
        if let Some(wap) = &self.wap_id {
            overwrite = overwrite.stage_only(wap);
        }
        let id = overwrite.snapshot_id();
        Ok((self.transaction().add_action(overwrite), id))
    }

    fn transaction(&self) -> Transaction {
        Transaction::new(
            Arc::clone(&self.target.catalog),
            self.target.ident.clone(),
            self.table().clone(),
        )
    }

    /// Pass two (copy-on-write): rewrite the `affected` files, every partition of the
    /// rewrite scan on its own task. On error, also returns the files already written.
    async fn rewrite_files(
        self: &Arc<Self>,
        positions: &Arc<Positions>,
        context: Arc<TaskContext>,
    ) -> std::result::Result<Vec<DataFile>, (Error, Vec<DataFile>)> {
        if positions.is_empty() {
            return Ok(vec![]);
        }
        let mut plan = self.plan.clone();
        plan.files
            .retain(|f| positions.contains_key(&f.task.data_file().file_path));
        let scan: Arc<dyn ExecutionPlan> = self
            .provider
            .row_level_exec(&self.session, plan, &[])
            .map_err(|e| (e, vec![]))?;
        let mut tasks = tokio::task::JoinSet::new();
        for p in 0..scan.properties().partitioning.partition_count() {
            let stream = scan
                .execute(p, Arc::clone(&context))
                .map_err(|e| (e.into(), vec![]))?;
            let (this, positions) = (Arc::clone(self), Arc::clone(positions));
            let context = Arc::clone(&context);
            tasks.spawn(async move { this.rewrite(stream, &positions, context).await });
        }
        let (mut files, mut failure) = (vec![], None);
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok(Ok(f)) => files.extend(f),
                Ok(Err(e)) => failure = failure.or(Some(e)),
                Err(e) => {
                    failure = failure.or(Some(
                        Error::new(ErrorKind::Io, "a rewrite task failed").with_source(e),
                    ))
                }
            }
        }
        match failure {
            Some(e) => Err((e, files)),
            None => Ok(files),
        }
    }
}
