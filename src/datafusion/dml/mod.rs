//! Row-level changes: `DELETE FROM`, `UPDATE`, `MERGE INTO` and `TRUNCATE` on Iceberg
//! tables, as DataFusion hands them to `TableProvider::delete_from` / `update` /
//! `merge_into` / `truncate`. `MERGE` joins the whole table with its source (see
//! module `merge` for its clauses) and writes per `write.merge.mode` like an
//! `UPDATE`.
//!
//! Each statement reads the rows it may change with a row-level scan of the table's
//! current snapshot, or of the branch's when the table was named at a branch
//! (`ns.t.branch_dev`, `ns."t@dev"`: the commit then moves that branch alone; spec:
//! "Branching and Tagging"; a tag is refused) (the table's existing deletes applied; every row tagged with its
//! data file and position), evaluates the `WHERE` condition on them (a row changes when
//! it is `TRUE`, not `NULL`) and commits once, through the crate's one commit path, per
//! the table's `write.delete.mode` / `write.update.mode` (spec: "Row-level Deletes";
//! the property names and defaults of Iceberg Java):
//!
//! | mode | `DELETE` | `UPDATE` |
//! |---|---|---|
//! | `copy-on-write` (default) | data files holding deleted rows are rewritten without them ([`OverwriteFiles`](crate::transaction::OverwriteFiles)) | data files holding updated rows are rewritten with the new values |
//! | `merge-on-read` | v2: a position delete file per data file (`write.delete.granularity` = `file`, default) or per partition (`partition`); v3: a deletion vector per data file ([`RowDelta`](crate::transaction::RowDelta)) | the old rows deleted as by `DELETE`, the new versions appended as data files, in one [`RowDelta`](crate::transaction::RowDelta) |
//!
//! The data files a statement writes (rewritten files, new rows) hold their rows in the
//! table's sort order and record its id, as an `INSERT`'s (module `sorted_writer`).
//!
//! Data files every row of which a `DELETE` removes are dropped in metadata alone,
//! without rewriting or delete files: when the condition is decided by identity
//! partition values alone (the filters DataFusion is told are exact), every file it
//! selects is such a file; `TRUNCATE` (and `DELETE` without `WHERE`) drops every file.
//! Those files are read only to count their rows when deletes apply to them; a file
//! whose rows are all deleted already is dropped too, never read. A delete file that
//! applies only to a dropped file (a deletion vector, a file-scoped position delete
//! file) is removed in the same commit.
//!
//! The commit is checked for conflicts with what was committed since the statement's
//! snapshot (re-checked on every retry; `write.delete.isolation-level` /
//! `write.update.isolation-level`, `serializable` default or `snapshot`): under
//! `serializable`, no data file added since may hold rows the condition matches; at
//! both levels, no delete file added since may apply to the files the statement
//! changes, and the files it changes are still live. A conflict fails the statement
//! with [`ErrorKind::ValidationFailed`](crate::ErrorKind) naming the file and snapshot,
//! and removes every file the statement wrote; so does a statement whose snapshot a
//! concurrent `expire_snapshots` expired while it read (`transaction::expired_base`). The
//! result is DataFusion's usual one row, `count`: the rows deleted or updated.
//!
//! A `DELETE`/`UPDATE` whose condition or `SET` values read its target's metadata
//! columns (`_file`, `_pos`, `_partition.k`, …; the statement layer plans it against the
//! target with them, module `sql::metadata_targets`) gets them in its row-level scan, after
//! the row-id (and lineage) columns, valued as a query reads them. Such a condition never
//! removes whole files (the rows are read and it is evaluated on each); its conjuncts on
//! metadata columns prune nothing but by fields of `_partition` (as a query's), and are
//! left out of the conflict-detection filter: for the rows of files committed since, they
//! count as true (the filter only widens).
//!
//! Format versions: v1, v2 and v3. v1 has no delete files: its merge-on-read statements
//! are refused, copy-on-write works. On v3, merge-on-read writes deletion vectors (one
//! per data file, an existing one — and the data file's file-scoped v2 position
//! delete files, after an upgrade — merged in and removed in the same commit), and every
//! statement keeps row lineage (spec: "Row Lineage"): the data files it writes store
//! each row's `_row_id` and `_last_updated_sequence_number` — a row copied into a
//! rewritten file keeps both; an updated row (`UPDATE`, `MERGE … UPDATE`, either mode)
//! keeps its `_row_id` with a null sequence number, which inherits the new snapshot's;
//! a row `MERGE` inserts has both null and inherits its file's `first_row_id` + position.

mod correlated;
mod delete_files;
mod exec;
mod guard;
mod job;
mod merge;
pub(crate) mod merge_clauses;
mod required;
mod sorted_writer;
mod subquery;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::common::{DFSchema, DFSchemaRef};
use datafusion::execution::SessionState;
use datafusion::logical_expr::dml::MergeIntoClause;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;

use super::delete_planning::DeletePlan;
use super::filter::{exact_by_identity_partitions, FilterConverter};
use super::insert::WriteTarget;
use super::table_provider::IcebergTableProvider;
use crate::error::{Error, Result};
use crate::expr::Predicate;
use crate::table_properties as tp;
use crate::transaction::{check_writable, IsolationLevel};

use correlated::route_correlated;
pub use exec::IcebergRowLevelExec;
pub use guard::{install_dml_guard, DmlEmptyInputGuard, DML_GUARD_RULE};
use job::{RowLevelJob, RowLevelOp};
use subquery::inline_predicate_subqueries;

/// `df` (a statement as `SessionContext::sql` planned it, not yet optimized) with the
/// subqueries of its `DELETE`/`UPDATE` made plannable: uncorrelated `IN`/`EXISTS` run once
/// and replaced by their values (module `subquery`), then a statement still holding a
/// correlated subquery planned as a query over the table's row-level scan (module
/// `correlated`); the same inside `EXPLAIN [ANALYZE]`. Any other statement unchanged.
///
/// Errors: planning and execution errors of an uncorrelated subquery, naming the
/// statement and table.
pub(crate) async fn plan_row_level_subqueries(
    df: datafusion::dataframe::DataFrame,
) -> Result<datafusion::dataframe::DataFrame> {
    use datafusion::dataframe::DataFrame;
    use datafusion::logical_expr::{Analyze, Explain, LogicalPlan};
    type Rewrap = Box<dyn FnOnce(LogicalPlan) -> LogicalPlan + Send>;
    let (state, plan) = df.into_parts();
    let (inner, rewrap): (LogicalPlan, Rewrap) = match plan {
        LogicalPlan::Explain(explain) => (
            explain.plan.as_ref().clone(),
            Box::new(move |p| {
                LogicalPlan::Explain(Explain {
                    plan: Arc::new(p),
                    ..explain
                })
            }),
        ),
        LogicalPlan::Analyze(analyze) => (
            analyze.input.as_ref().clone(),
            Box::new(move |p| {
                LogicalPlan::Analyze(Analyze {
                    input: Arc::new(p),
                    ..analyze
                })
            }),
        ),
        other => (other, Box::new(|p| p)),
    };
    let inlined = inline_predicate_subqueries(DataFrame::new(state, inner)).await?;
    let (state, inner) = inlined.into_parts();
    let inner = match route_correlated(&state, &inner)? {
        Some(routed) => routed.into_parts().1,
        None => inner,
    };
    Ok(DataFrame::new(state, rewrap(inner)))
}

/// Table property: how `DELETE` writes (`copy-on-write` or `merge-on-read`).
pub const DELETE_MODE: &str = tp::DELETE_MODE.name;
/// Table property: how `UPDATE` writes.
pub const UPDATE_MODE: &str = tp::UPDATE_MODE.name;
/// Table property: `DELETE`'s isolation level (`serializable` or `snapshot`).
pub const DELETE_ISOLATION_LEVEL: &str = tp::DELETE_ISOLATION_LEVEL.name;
/// Table property: `UPDATE`'s isolation level.
pub const UPDATE_ISOLATION_LEVEL: &str = tp::UPDATE_ISOLATION_LEVEL.name;
/// Table property: how `MERGE` writes.
pub const MERGE_MODE: &str = tp::MERGE_MODE.name;
/// Table property: `MERGE`'s isolation level.
pub const MERGE_ISOLATION_LEVEL: &str = tp::MERGE_ISOLATION_LEVEL.name;

/// How a row-level change is written (`write.*.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowLevelMode {
    /// Rewrite the data files holding changed rows.
    CopyOnWrite,
    /// Write delete files (and new rows) beside the data files.
    MergeOnRead,
}

impl RowLevelMode {
    /// The mode in property `key` of `props` (default copy-on-write).
    ///
    /// Errors: another value, naming the property.
    pub fn from_properties(props: &HashMap<String, String>, key: &str) -> Result<Self> {
        Ok(match known(key)?.choice(props)? {
            Some("merge-on-read") => Self::MergeOnRead,
            _ => Self::CopyOnWrite,
        })
    }
}

fn isolation(props: &HashMap<String, String>, key: &str) -> Result<IsolationLevel> {
    Ok(match known(key)?.choice(props)? {
        Some("snapshot") => IsolationLevel::Snapshot,
        _ => IsolationLevel::Serializable,
    })
}

/// The known property `key` (one of this module's constants).
fn known(key: &str) -> Result<&'static tp::TableProperty> {
    tp::lookup(key)
        .ok_or_else(|| Error::invalid_argument(format!("'{key}' is no row-level table property")))
}

/// Plan `DELETE FROM t [WHERE filters]` (no filters: every row; also `TRUNCATE`).
///
/// Errors: the table is not writable here (opened by location or at a snapshot), its
/// format version is not written yet, a bad `write.delete.*` property, planning errors.
pub(crate) async fn plan_delete(
    provider: &IcebergTableProvider,
    state: &dyn Session,
    filters: Vec<Expr>,
    statement: &'static str,
) -> Result<Arc<dyn ExecutionPlan>> {
    plan(provider, state, filters, RowLevelOpPlan::Delete, statement).await
}

/// Plan `UPDATE t SET assignments [WHERE filters]`.
///
/// Errors: as [`plan_delete`]; an assignment to a column the table does not have.
pub(crate) async fn plan_update(
    provider: &IcebergTableProvider,
    state: &dyn Session,
    assignments: Vec<(String, Expr)>,
    filters: Vec<Expr>,
) -> Result<Arc<dyn ExecutionPlan>> {
    plan(
        provider,
        state,
        filters,
        RowLevelOpPlan::Update(assignments),
        "UPDATE",
    )
    .await
}

/// Plan `MERGE INTO t USING source ON on WHEN …` (see [`merge`]).
///
/// Errors: as [`plan_delete`] (with `write.merge.*`); a clause naming a column the table
/// does not have; clauses breaking the rules of module `merge_clauses` (an unconditional
/// clause before another of its kind, a `NOT MATCHED` clause reading the target or a
/// `NOT MATCHED BY SOURCE` clause reading the source).
pub(crate) async fn plan_merge(
    provider: &IcebergTableProvider,
    state: &dyn Session,
    source: Arc<dyn ExecutionPlan>,
    merge_schema: DFSchemaRef,
    on: Expr,
    clauses: Vec<MergeIntoClause>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let (target, session) = writable(provider, state, "MERGE")?;
    // the target's fields in `merge_schema`: its columns, then any metadata columns
    let target_width =
        provider.arrow_schema().fields().len() + provider.metadata_column_names().len();
    merge_clauses::check_merge_clauses(
        &clauses,
        &merge_schema,
        target_width,
        &target.ident.to_string(),
    )?;
    let clauses =
        subquery::inline_in_merge_clauses(session, clauses, &target.ident.to_string()).await?;
    let table = provider.table();
    let props = &table.metadata().properties;
    let mode = RowLevelMode::from_properties(props, MERGE_MODE)?;
    let level = isolation(props, MERGE_ISOLATION_LEVEL)?;
    // The target rows the statement may change, as filters on the table's columns:
    // without `WHEN NOT MATCHED BY SOURCE` only rows for which `on` can hold, so the
    // conjuncts of `on` over target columns alone (Spark pushes the same ones into the
    // target's scan); with it, every row. They choose the files read (and row groups),
    // and are the conflict detection filter.
    let by_source = clauses
        .iter()
        .any(|c| c.kind == datafusion::logical_expr::dml::MergeIntoClauseKind::NotMatchedBySource);
    let filters = match by_source {
        true => vec![],
        false => {
            merge::target_conjuncts(&on, &merge_schema, provider.arrow_schema().fields().len())
        }
    };
    let (mut job, planned) =
        new_job(provider, target, session, (mode, level), &filters, "MERGE").await?;
    let scan = provider.row_level_exec(state, planned.clone(), &filters)?;
    job.set_plan(planned);
    let (joined, actions) = merge::plan_merge(
        session,
        scan,
        source,
        &merge_schema,
        on,
        merge::with_write_defaults(clauses, provider.arrow_schema(), provider.write_defaults()),
        (
            provider.arrow_schema(),
            target_width,
            &crate::datafusion::struct_defaults::struct_write_defaults(
                provider.iceberg_schema(),
                provider.arrow_schema(),
            )?,
        ),
    )
    .await?;
    job.set_operation(RowLevelOp::Merge(actions), None);
    Ok(Arc::new(IcebergRowLevelExec::new(joined, Arc::new(job))))
}

/// The write target and session of a row-level `statement` on `provider`, after the
/// checks every one of them makes.
fn writable<'a>(
    provider: &IcebergTableProvider,
    state: &'a dyn Session,
    statement: &'static str,
) -> Result<(WriteTarget, &'a SessionState)> {
    let table = provider.table();
    // a provider with metadata columns is written through by the statements that may
    // read them in their conditions (the statement layer's; see
    // `IcebergTableProvider::with_metadata_columns_for_row_level`)
    if provider.has_metadata_columns()
        && (provider.write_target().is_none()
            || !matches!(statement, "DELETE" | "UPDATE" | "MERGE"))
    {
        return Err(super::table_provider::read_only_metadata_view(table));
    }
    let target = provider.check_writable(statement)?;
    // a branch's statement reads and commits at the branch's snapshot (`with_ref`)
    let read_at = match provider.branch() {
        Some(branch) => table.metadata().ref_snapshot_id(branch),
        None => table.metadata().current_snapshot_id,
    };
    if provider.snapshot().map(|s| s.snapshot_id) != read_at {
        return Err(Error::unsupported(format!(
            "{statement} on a snapshot of '{}' other than the current one",
            target.ident
        )));
    }
    check_writable(table).map_err(|e| e.context(format!("{statement} on '{}'", target.ident)))?;
    let options = state
        .config_options()
        .extensions
        .get::<crate::datafusion::options::IcefloeOptions>();
    // staged for write-audit-publish: on main only (the job stages the commit)
    if provider.branch().is_some()
        && crate::datafusion::insert::staged_wap_id(table, options)?.is_some()
    {
        return Err(crate::datafusion::insert::wap_refusal(
            &format!("{statement} of a branch"),
            &target.ident,
        ));
    }
    if table.metadata().format_version >= crate::spec::FormatVersion::V3 {
        // v3 files rewritten here store the row lineage fields beside the columns
        table
            .metadata()
            .current_schema()
            .check_row_lineage_names()
            .map_err(|e| e.context(format!("{statement} on '{}'", target.ident)))?;
    }
    if table.metadata().format_version == crate::spec::FormatVersion::V1 {
        // v1 has no delete files: only copy-on-write changes rows (spec: "Row-level Deletes")
        let key = match statement {
            "UPDATE" => Some(UPDATE_MODE),
            "MERGE" => Some(MERGE_MODE),
            "DELETE" => Some(DELETE_MODE),
            _ => None,
        };
        if let Some(key) = key {
            if RowLevelMode::from_properties(&table.metadata().properties, key)?
                == RowLevelMode::MergeOnRead
            {
                return Err(Error::unsupported(format!(
                    "{statement} in merge-on-read mode on '{}', a format-version 1 table: v1 \
                     has no delete files; set '{key}'='copy-on-write' (or upgrade the table \
                     with 'format-version'='2')",
                    target.ident
                )));
            }
        }
    }
    let Some(session) = state.as_any().downcast_ref::<SessionState>() else {
        return Err(Error::unsupported(format!(
            "{statement} planned outside a DataFusion SessionState"
        )));
    };
    if statement != "MERGE" && statement != "TRUNCATE" && !guard::installed(session) {
        return Err(Error::unsupported(format!(
            "{statement} on '{}' in a session without icefloe's DML guard: DataFusion 55 \
             may hand the table no filter for a condition it rewrote (a subquery, a condition \
             never true), which would change every row; run statements through \
             icefloe::datafusion::sql::execute, or call \
             icefloe::datafusion::dml::install_dml_guard(&ctx) once",
            target.ident
        )));
    }
    Ok((target.clone(), session))
}

/// The job of row-level `statement` on `provider`'s table, and the files planned for the
/// rows `filters` (on the table's columns) may select: they choose the files read, and
/// are the statement's conflict-detection filter (converting drops what it cannot
/// express, which only widens it).
///
/// Errors: planning errors (a manifest or delete file that cannot be read); one whose
/// snapshot a concurrent `expire_snapshots` expired meanwhile is a lost race
/// ([`crate::ErrorKind::ValidationFailed`], see `transaction::expired_base::explain`).
async fn new_job(
    provider: &IcebergTableProvider,
    target: WriteTarget,
    session: &SessionState,
    (mode, level): (RowLevelMode, IsolationLevel),
    filters: &[Expr],
    statement: &'static str,
) -> Result<(RowLevelJob, DeletePlan)> {
    // a condition on a metadata column (`_file`, `_pos`, `_partition.k`, …) says nothing
    // about the rows of files added since: left out, it matches every row of them
    let conflict_filter = FilterConverter::new(provider.iceberg_schema())
        .convert_all(&provider.table_column_filters(filters))
        .unwrap_or(Predicate::AlwaysTrue);
    let options = session
        .config_options()
        .extensions
        .get::<crate::datafusion::options::IcefloeOptions>();
    let wap_id = crate::datafusion::insert::staged_wap_id(provider.table(), options)?;
    crate::failpoint::pause("row-level-loaded");
    let planned = match provider.plan_row_level(filters).await {
        Ok(planned) => planned,
        // a manifest or delete file gone because a concurrent expiry took the snapshot
        // planned on: a lost race, as a failed read while the statement runs is
        Err(e) => {
            let base = provider.snapshot().map(|s| s.snapshot_id);
            return Err(crate::transaction::expired_base::explain(
                target.catalog.as_ref(),
                &target.ident,
                statement,
                base,
                e,
            )
            .await);
        }
    };
    let job = RowLevelJob::new(
        provider.clone(),
        target,
        session.clone(),
        mode,
        level,
        conflict_filter,
        statement,
    )
    .staged(wap_id);
    Ok((job, planned))
}

enum RowLevelOpPlan {
    Delete,
    Update(Vec<(String, Expr)>),
}

async fn plan(
    provider: &IcebergTableProvider,
    state: &dyn Session,
    filters: Vec<Expr>,
    op: RowLevelOpPlan,
    statement: &'static str,
) -> Result<Arc<dyn ExecutionPlan>> {
    let (target, session) = writable(provider, state, statement)?;
    let ident = target.ident.to_string();
    let filters = subquery::inline_scalar_subqueries(session, filters, statement, &ident).await?;
    let op = match op {
        RowLevelOpPlan::Update(assignments) => {
            // each value alone, naming its column: a subquery's result is cast to the
            // column's type as it runs, so a value that does not fit fails here
            let mut inlined = Vec::with_capacity(assignments.len());
            for (column, value) in assignments {
                let value =
                    subquery::inline_scalar_subqueries(session, vec![value], statement, &ident)
                        .await
                        .map_err(|e| {
                            e.context(format!(
                                "UPDATE of '{ident}': computing the value of column '{column}'"
                            ))
                        })?;
                inlined.extend(value.into_iter().map(|v| (column.clone(), v)));
            }
            RowLevelOpPlan::Update(inlined)
        }
        RowLevelOpPlan::Delete => RowLevelOpPlan::Delete,
    };
    let table = provider.table();
    let props = &table.metadata().properties;
    let (mode, level) = match op {
        RowLevelOpPlan::Delete => (
            RowLevelMode::from_properties(props, DELETE_MODE)?,
            isolation(props, DELETE_ISOLATION_LEVEL)?,
        ),
        RowLevelOpPlan::Update(_) => (
            RowLevelMode::from_properties(props, UPDATE_MODE)?,
            isolation(props, UPDATE_ISOLATION_LEVEL)?,
        ),
    };
    let schema = provider.iceberg_schema();
    let converter = FilterConverter::new(schema);
    // A DELETE whose condition identity partition values decide removes whole files
    // (never one reading a metadata column: its rows are read and the condition
    // evaluated on each).
    let whole_files = matches!(op, RowLevelOpPlan::Delete)
        && provider.table_column_filters(&filters).len() == filters.len()
        && filters.iter().all(|f| {
            converter.convert(f).is_some_and(|c| {
                exact_by_identity_partitions(&c, schema, &table.metadata().partition_specs)
            })
        });

    let (mut job, planned) = new_job(
        provider,
        target.clone(),
        session,
        (mode, level),
        &filters,
        statement,
    )
    .await?;
    let mut scanned = planned.clone();
    if whole_files {
        let mut skipped = HashSet::new();
        for f in &planned.files {
            let has_deletes = f.position.is_some()
                || f.equality_sequence_number != super::delete_planning::NO_EQUALITY_DELETES;
            job.remove_whole(
                f.task.entry.spec_id,
                f.task.data_file().clone(),
                has_deletes,
            );
            if !has_deletes {
                skipped.insert(f.task.data_file().file_path.clone());
            }
        }
        // files whose rows are all deleted already hold none of the statement's rows,
        // but stay live until removed
        for task in &planned.fully_deleted {
            job.remove_fully_deleted(task.entry.spec_id, task.data_file().clone());
        }
        // files without deletes are counted from their record counts, never read
        scanned
            .files
            .retain(|f| !skipped.contains(&f.task.data_file().file_path));
    }
    job.set_plan(planned);
    let scan = provider.row_level_exec(state, scanned, &filters)?;
    let scan_schema = scan.schema();
    let df_schema = DFSchema::try_from(Arc::clone(&scan_schema))?;
    let condition = match conjunction(filters) {
        Some(expr) => Some(state.create_physical_expr(expr, &df_schema)?),
        None => None,
    };
    let op = match op {
        RowLevelOpPlan::Delete => RowLevelOp::Delete,
        RowLevelOpPlan::Update(assignments) => {
            let mut out = Vec::with_capacity(assignments.len());
            let mut seen = HashSet::new();
            for (column, _) in &assignments {
                if !seen.insert(column.as_str()) {
                    return Err(Error::invalid_argument(format!(
                        "UPDATE of '{}' assigns column '{column}' more than once",
                        target.ident
                    )));
                }
            }
            for (column, expr) in assignments {
                if provider.metadata_column_names().contains(&column.as_str()) {
                    return Err(Error::invalid_argument(format!(
                        "UPDATE of '{}' assigns metadata column '{column}': metadata \
                         columns (_file, _pos, …) are read-only",
                        target.ident
                    )));
                }
                let schema = provider.arrow_schema();
                let index = schema.index_of(&column).map_err(|_| {
                    let e = Error::invalid_argument(format!(
                        "UPDATE of '{}': no column '{column}'",
                        target.ident
                    ));
                    let columns = schema.fields().iter().map(|f| f.name().as_str());
                    match crate::column_case::other_case_note(&column, columns) {
                        Some(note) => e.with_note(note),
                        None => e,
                    }
                })?;
                // planning folds a constant value (a scalar subquery's, run above) into
                // the column's type: one that does not fit fails here, named as a value
                // computed per row is (`RowLevelJob::updated`)
                let expr = state.create_physical_expr(expr, &df_schema).map_err(|e| {
                    Error::from(e).context(format!(
                        "UPDATE of '{}': computing the value of column '{column}'",
                        target.ident
                    ))
                })?;
                out.push((index, expr));
            }
            RowLevelOp::Update(out)
        }
    };
    job.set_operation(op, condition);
    Ok(Arc::new(IcebergRowLevelExec::new(scan, Arc::new(job))))
}
