//! `CALL [cat.]system.<procedure>(…)`: Spark's Iceberg procedures that move the current
//! snapshot, `register_table` and `ancestors_of`, with Spark's names, arguments and result columns (see the parent module's
//! docs). Arguments are positional or named (`table => 'ns.t', snapshot_id => 1`); the
//! table is a name string resolved in the procedure's catalog (`cat` when given, else
//! the session's default catalog).

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::alter_table::commit_from;
use super::call_args::{arguments, evaluate, timestamp_argument, Value};
use super::tokens::Cursor;
use super::{cursor, defaults, resolve_table, IcebergTarget};
use crate::error::{Error, ErrorKind, Result};
use crate::transaction::{CherryPickSnapshot, ManageSnapshots, STAGED_WAP_ID};

/// The procedures that move the current snapshot (run here) and their parameters, in
/// Spark's order.
const SNAPSHOT_PROCEDURES: &[(&str, &[&str])] = &[
    ("rollback_to_snapshot", &["table", "snapshot_id"]),
    ("rollback_to_timestamp", &["table", "timestamp"]),
    ("set_current_snapshot", &["table", "snapshot_id", "ref"]),
    ("fast_forward", &["table", "branch", "to"]),
    ("cherrypick_snapshot", &["table", "snapshot_id"]),
    ("publish_changes", &["table", "wap_id"]),
    // not snapshot moves, but named and resolved alike (for `register_table` the table
    // need not exist)
    ("register_table", &["table", "metadata_file"]),
    ("ancestors_of", &["table", "snapshot_id"]),
];

/// Every procedure `CALL` runs, with its parameters: the ones that move the current
/// snapshot, then the maintenance ones ([`super::procedures::PROCEDURES`]). The
/// dispatcher finds procedures here, and the "unknown procedure" error lists them.
fn registry() -> impl Iterator<Item = &'static (&'static str, &'static [&'static str])> {
    SNAPSHOT_PROCEDURES
        .iter()
        .chain(super::procedures::PROCEDURES.iter())
}

/// What to write instead of `CALL <catalog>.system.<procedure>` for a catalog the session
/// does not have: the session's catalogs, and the unqualified form that runs in the current
/// one. Spark's session catalog is `spark_catalog`, which Spark users of it write in every
/// `CALL`; here it is named so.
fn missing_catalog_hint(ctx: &SessionContext, catalog: &str, procedure: &str) -> String {
    let current = defaults(ctx).0;
    let mut names = ctx.catalog_names();
    names.sort();
    let spark = match catalog {
        "spark_catalog" => " ('spark_catalog' is Spark's session catalog)",
        _ => "",
    };
    format!(
        "{spark}; CALL system.{procedure}(…) runs in the current catalog '{current}' \
         (catalogs: {})",
        names.join(", ")
    )
}

/// `CALL`, after that keyword; `None` when what follows is no procedure name.
///
/// Errors: a name outside `[catalog.]system.<procedure>`, a catalog the session does not
/// have or that is not an Iceberg catalog, an unknown procedure (listing the ones
/// icefloe runs), and the procedure's own errors.
pub(super) async fn call(ctx: &SessionContext, mut c: Cursor<'_>) -> Result<Option<DataFrame>> {
    let Ok(name) = c.object_name() else {
        return Ok(None);
    };
    let (catalog, procedure) = match name.as_slice() {
        [system, p] if system == "system" => (defaults(ctx).0, p.clone()),
        [cat, system, p] if system == "system" => (cat.clone(), p.clone()),
        _ => {
            return Err(Error::invalid_argument(format!(
                "CALL {}: procedures are named [catalog.]system.<procedure> (icefloe runs {})",
                name.join("."),
                procedure_names()
            )))
        }
    };
    let Some(target) = IcebergTarget::find(ctx, &catalog) else {
        return Err(if ctx.catalog(&catalog).is_none() {
            Error::not_found(format!(
                "CALL {catalog}.system.{procedure}: catalog '{catalog}' does not exist{}",
                missing_catalog_hint(ctx, &catalog, &procedure)
            ))
        } else {
            Error::unsupported(format!(
                "CALL {catalog}.system.{procedure}: catalog '{catalog}' is not an Iceberg \
                 catalog"
            ))
        });
    };
    let what = format!("CALL {catalog}.system.{procedure}");
    let Some((_, params)) = registry().find(|(p, _)| *p == procedure) else {
        return Err(Error::unsupported(format!(
            "{what}: unknown procedure (icefloe runs {})",
            procedure_names()
        )));
    };
    if super::procedures::PROCEDURES
        .iter()
        .any(|(p, _)| *p == procedure)
    {
        return super::procedures::call(ctx, &target, &what, &procedure, c)
            .await
            .map(Some);
    }
    let zone = super::session_zone::session_zone(ctx)?;
    let mut args = arguments(&mut c, params, zone.as_ref()).map_err(|e| e.context(&what))?;
    evaluate(ctx, params, &mut args, zone.as_ref())
        .await
        .map_err(|e| e.context(&what))?;
    let get = |param: &str| {
        params
            .iter()
            .position(|p| *p == param)
            .and_then(|i| args.get(i).cloned().flatten())
    };
    let table_name = match get("table") {
        Some(Value::Text(t)) => t,
        _ => {
            return Err(Error::invalid_argument(format!(
                "{what}: the 'table' argument (a name string such as 'ns.t') is missing"
            )))
        }
    };
    let mut parts = cursor(ctx, &table_name)
        .and_then(|mut tc| tc.object_name().ok().filter(|_| tc.at_end()))
        .ok_or_else(|| {
            Error::invalid_argument(format!("{what}: '{table_name}' is not a table name"))
        })?;
    // in the procedure's catalog: `t` in its default namespace, `ns.t`, or `cat.ns.t`
    if parts.len() == 1 {
        parts.insert(0, defaults(ctx).1);
        parts.insert(0, target.name.clone());
    } else if ctx.catalog(&parts[0]).is_none() {
        parts.insert(0, target.name.clone());
    }
    let table = resolve_table(ctx, &parts)?
        .filter(|t| t.target.name == target.name)
        .ok_or_else(|| {
            Error::not_found(format!(
                "{what}: '{table_name}' is not a table of Iceberg catalog '{catalog}'"
            ))
        })?;
    let what = format!("{what}('{}')", table.ident);
    if procedure == "register_table" {
        return register_table(ctx, &table, get("metadata_file"))
            .await
            .map_err(|e| e.context(&what))
            .map(Some);
    }
    if procedure == "ancestors_of" {
        let start = match get("snapshot_id") {
            Some(_) => Some(snapshot_id(&get, &what)?),
            None => None,
        };
        return ancestors_of(ctx, &table, start)
            .await
            .map_err(|e| e.context(&what))
            .map(Some);
    }
    let action = match procedure.as_str() {
        "rollback_to_snapshot" => ManageSnapshots::new().rollback_to(snapshot_id(&get, &what)?),
        "set_current_snapshot" => {
            let id = match (get("snapshot_id"), get("ref")) {
                (Some(_), Some(_)) => {
                    return Err(Error::invalid_argument(format!(
                        "{what}: give snapshot_id or ref, not both"
                    )))
                }
                (None, Some(Value::Text(r))) => {
                    let current = table.target.catalog().load_table(&table.ident).await?;
                    current
                        .metadata()
                        .refs
                        .get(&r)
                        .map(|r| r.snapshot_id)
                        .ok_or_else(|| {
                            Error::not_found(format!("{what}: branch or tag '{r}' does not exist"))
                        })?
                }
                _ => snapshot_id(&get, &what)?,
            };
            ManageSnapshots::new().set_current_snapshot(id)
        }
        "cherrypick_snapshot" => {
            let id = snapshot_id(&get, &what)?;
            let (before, after) = commit_from(&table, &what, CherryPickSnapshot::new(id)).await?;
            let df = cherrypick_result(ctx, id, after.metadata().current_snapshot_id)?;
            return with_new_snapshots(ctx, df, &before, &after).await.map(Some);
        }
        "publish_changes" => {
            let Some(Value::Text(wap)) = get("wap_id") else {
                return Err(Error::invalid_argument(format!(
                    "{what}: the 'wap_id' argument (a string) is needed"
                )));
            };
            // the first staged snapshot of that id, as Java's `PublishChangesProcedure`
            let current = table.target.catalog().load_table(&table.ident).await?;
            let id = current
                .metadata()
                .snapshots
                .iter()
                .find(|s| s.summary.get(STAGED_WAP_ID) == Some(&wap))
                .map(|s| s.snapshot_id)
                .ok_or_else(|| {
                    Error::not_found(format!(
                        "{what}: no snapshot was staged with write-audit-publish id '{wap}'"
                    ))
                })?;
            let (before, after) = commit_from(&table, &what, CherryPickSnapshot::new(id)).await?;
            let df = cherrypick_result(ctx, id, after.metadata().current_snapshot_id)?;
            return with_new_snapshots(ctx, df, &before, &after).await.map(Some);
        }
        "fast_forward" => {
            let (Some(Value::Text(branch)), Some(Value::Text(to))) = (get("branch"), get("to"))
            else {
                return Err(Error::invalid_argument(format!(
                    "{what}: the 'branch' and 'to' arguments (ref names) are needed"
                )));
            };
            let (before, after) = commit_from(
                &table,
                &what,
                ManageSnapshots::new().fast_forward_branch(&branch, &to),
            )
            .await?;
            return fast_forward_result(
                ctx,
                &branch,
                before.metadata().ref_snapshot_id(&branch),
                after.metadata().ref_snapshot_id(&branch),
            )
            .map(Some);
        }
        _ => {
            let ms = match get("timestamp") {
                Some(value) => timestamp_argument("timestamp", &value, zone.as_ref())
                    .map_err(|e| e.context(&what))?,
                None => {
                    return Err(Error::invalid_argument(format!(
                        "{what}: the 'timestamp' argument is missing"
                    )))
                }
            };
            ManageSnapshots::new().rollback_to_time(ms)
        }
    };
    let (before, after) = commit_from(&table, &what, action).await?;
    result(
        ctx,
        before.metadata().current_snapshot_id,
        after.metadata().current_snapshot_id,
    )
    .map(Some)
}

/// `df` carrying the snapshots `after` has and `before` had not (a cherry-pick's new
/// snapshot; none when it fast-forwarded `main`), for the CLI's `committed snapshot <id>`
/// (module `committed_result`).
async fn with_new_snapshots(
    ctx: &SessionContext,
    df: DataFrame,
    before: &crate::table::Table,
    after: &crate::table::Table,
) -> Result<DataFrame> {
    let had: std::collections::HashSet<i64> = before
        .metadata()
        .snapshots
        .iter()
        .map(|s| s.snapshot_id)
        .collect();
    let added = after
        .metadata()
        .snapshots
        .iter()
        .filter(|s| !had.contains(&s.snapshot_id))
        .map(|s| s.snapshot_id)
        .collect();
    super::committed_result::with_committed(ctx, df, added).await
}

/// The names of [`registry`], for messages.
fn procedure_names() -> String {
    registry().map(|(p, _)| *p).collect::<Vec<_>>().join(", ")
}

fn snapshot_id(get: &dyn Fn(&str) -> Option<Value>, what: &str) -> Result<i64> {
    match get("snapshot_id") {
        Some(Value::Number(id)) => Ok(id),
        Some(other) => Err(Error::invalid_argument(format!(
            "{what}: snapshot_id must be a number, got {other}"
        ))),
        None => Err(Error::invalid_argument(format!(
            "{what}: the 'snapshot_id' argument is missing"
        ))),
    }
}

/// Spark's `fast_forward` result row: `branch_updated`, `previous_ref`, `updated_ref`.
fn fast_forward_result(
    ctx: &SessionContext,
    branch: &str,
    previous: Option<i64>,
    updated: Option<i64>,
) -> Result<DataFrame> {
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("branch_updated", DataType::Utf8, false),
        Field::new("previous_ref", DataType::Int64, true),
        Field::new("updated_ref", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![branch])),
        Arc::new(Int64Array::from(vec![previous])),
        Arc::new(Int64Array::from(vec![updated])),
    ];
    let batch = RecordBatch::try_new(schema, columns)
        .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}

/// Spark's result row: `previous_snapshot_id`, `current_snapshot_id`.
fn result(ctx: &SessionContext, previous: Option<i64>, current: Option<i64>) -> Result<DataFrame> {
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("previous_snapshot_id", DataType::Int64, true),
        Field::new("current_snapshot_id", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![previous])),
        Arc::new(Int64Array::from(vec![current])),
    ];
    let batch = RecordBatch::try_new(schema, columns)
        .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}

/// Spark's `cherrypick_snapshot` (and `publish_changes`) result row: `source_snapshot_id`,
/// `current_snapshot_id`.
fn cherrypick_result(ctx: &SessionContext, source: i64, current: Option<i64>) -> Result<DataFrame> {
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("source_snapshot_id", DataType::Int64, false),
        Field::new("current_snapshot_id", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![source])),
        Arc::new(Int64Array::from(vec![current])),
    ];
    let batch = RecordBatch::try_new(schema, columns)
        .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}

/// Spark's `ancestors_of`: one row per snapshot from `start` (default: the current one;
/// none for a table without snapshots) back through its parents while the table still
/// holds them (expired ones end the list), newest first: `snapshot_id`, `timestamp` (ms
/// since the epoch, the snapshot's `timestamp-ms`), as Java's `SnapshotUtil.ancestorsOf`.
///
/// Errors: a `start` the table does not hold ([`ErrorKind::NotFound`]).
async fn ancestors_of(
    ctx: &SessionContext,
    table: &super::ResolvedTable,
    start: Option<i64>,
) -> Result<DataFrame> {
    let current = table.target.catalog().load_table(&table.ident).await?;
    let metadata = current.metadata();
    if let Some(id) = start {
        if metadata.snapshot_by_id(id).is_none() {
            return Err(Error::not_found(format!("snapshot {id} does not exist")));
        }
    }
    let snapshots = crate::catalog::ancestors(metadata, start.or(metadata.current_snapshot_id));
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("snapshot_id", DataType::Int64, false),
        Field::new("timestamp", DataType::Int64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(
            snapshots.iter().map(|s| s.snapshot_id),
        )),
        Arc::new(Int64Array::from_iter_values(
            snapshots.iter().map(|s| s.timestamp_ms),
        )),
    ];
    let batch = RecordBatch::try_new(schema, columns)
        .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}

/// Spark's `register_table`: `table` (which must not exist) points at `metadata_file`;
/// the result row is `current_snapshot_id`, `total_records_count`,
/// `total_data_files_count` of the registered table (from its current snapshot's summary;
/// null without one).
async fn register_table(
    ctx: &SessionContext,
    table: &super::ResolvedTable,
    metadata_file: Option<Value>,
) -> Result<DataFrame> {
    let Some(Value::Text(location)) = metadata_file else {
        return Err(Error::invalid_argument(
            "the 'metadata_file' argument (the location of a metadata JSON file) is missing",
        ));
    };
    let registered = table
        .target
        .catalog()
        .register_table(&table.ident, &location)
        .await?;
    let current = registered.metadata().current_snapshot();
    let total = |key: &str| {
        current
            .and_then(|s| s.summary.get(key))
            .and_then(|n| n.parse::<i64>().ok())
    };
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("current_snapshot_id", DataType::Int64, true),
        Field::new("total_records_count", DataType::Int64, true),
        Field::new("total_data_files_count", DataType::Int64, true),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![current.map(|s| s.snapshot_id)])),
        Arc::new(Int64Array::from(vec![total("total-records")])),
        Arc::new(Int64Array::from(vec![total("total-data-files")])),
    ];
    let batch = RecordBatch::try_new(schema, columns)
        .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}
