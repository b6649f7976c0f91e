//! `CALL [cat.]system.create_changelog_view(table, changelog_view, options, net_changes,
//! compute_updates, identifier_columns)`: Spark's procedure (Java's
//! `CreateChangelogViewProcedure`). It registers a session view (as Spark's temporary
//! view: replacing a view of that name, gone with the session) of the table's changes
//! over a snapshot range ([`crate::datafusion::changelog`]) and returns one row,
//! `changelog_view` (the view's name).
//!
//! - `changelog_view`: the view's name (default `<table>_changes`).
//! - `options`: `map('start-snapshot-id', '…', 'end-snapshot-id', '…',
//!   'start-timestamp', '…', 'end-timestamp', '…')` (ids and ms since the epoch as
//!   strings; the start is exclusive, the end inclusive; default: every snapshot of the
//!   current one's history). Other keys are refused.
//! - `net_changes`: only the net change of each row over the range (default false).
//! - `compute_updates`: a delete and an insert of equal identifier values in one snapshot
//!   become `UPDATE_BEFORE` / `UPDATE_AFTER` (default: whether `identifier_columns` is
//!   given); it cannot be combined with `net_changes`.
//! - `identifier_columns`: `array('id', …)` (default: the table's identifier fields).

use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::catalog::view::ViewTable;
use datafusion::common::TableReference;
use datafusion::dataframe::DataFrame;
use datafusion::datasource::TableType;
use datafusion::prelude::SessionContext;

use super::call_args::Value;
use super::procedures::{flag, Args};
use super::{cursor, ResolvedTable};
use crate::datafusion::changelog::{changelog, ChangelogMode, ChangelogRange};
use crate::error::{Error, ErrorKind, Result};

/// Run `create_changelog_view` of `table` with `args`.
///
/// Errors: a bad argument or option ([`ErrorKind::InvalidArgument`]), `net_changes`
/// with `compute_updates`, no identifier columns to compute updates by, a name taken by
/// a table (not a view), and the changelog's own errors; on error nothing is registered.
pub(super) async fn create_changelog_view(
    ctx: &SessionContext,
    table: &ResolvedTable,
    args: &Args,
) -> Result<DataFrame> {
    let loaded = table.target.catalog().load_table(&table.ident).await?;
    let range = range(args.get("options"))?;
    let net = flag(args, "net_changes")?.unwrap_or(false);
    let ids = match args.get("identifier_columns") {
        None => None,
        Some(Value::Array(items)) => Some(
            items
                .into_iter()
                .map(|v| match v {
                    Value::Text(t) => Ok(t),
                    other => Err(Error::invalid_argument(format!(
                        "identifier_columns must hold column names, got {other}"
                    ))),
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        Some(Value::Text(t)) => Some(vec![t]),
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "identifier_columns must be array('column', …), got {other}"
            )))
        }
    };
    let compute_updates = flag(args, "compute_updates")?.unwrap_or(ids.is_some());
    let mode = if compute_updates {
        if net {
            return Err(Error::invalid_argument(
                "Not support net changes with update images (net_changes and \
                 compute_updates cannot both be true)",
            ));
        }
        let ids = match ids {
            Some(ids) => ids,
            None => {
                let schema = loaded.metadata().current_schema();
                schema
                    .identifier_field_ids
                    .iter()
                    .map(|id| {
                        // Java's `rowType.fieldIndex`: top-level fields only
                        schema
                            .fields
                            .fields
                            .iter()
                            .find(|f| f.id == *id)
                            .map(|f| f.name.clone())
                            .ok_or_else(|| {
                                Error::unsupported(format!(
                                    "update images by identifier field {} (id {id}): not a \
                                     top-level column",
                                    schema.field_by_id(*id).map_or("?", |f| f.name.as_str())
                                ))
                            })
                    })
                    .collect::<Result<Vec<_>>>()?
            }
        };
        ChangelogMode::UpdateImages(ids)
    } else if net {
        ChangelogMode::NetChanges
    } else {
        ChangelogMode::Changes
    };
    // Spark's default, `<table>_changes`, is the name as it is (quoted)
    let reference = match args.get("changelog_view") {
        None => TableReference::bare(format!("{}_changes", table.ident.name)),
        Some(Value::Text(name)) => view_name(ctx, &name)?,
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "changelog_view must be a view name string, got {other}"
            )))
        }
    };
    let view = changelog(ctx, &loaded, &range, &mode).await?;
    if let Ok(existing) = ctx.table_provider(reference.clone()).await {
        // a view is replaced, as Spark's `createOrReplaceTempView`; a table never
        if existing.table_type() != TableType::View {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!("changelog_view '{reference}': a table of that name exists (not a view)"),
            ));
        }
        ctx.deregister_table(reference.clone())?;
    }
    let plan = view.into_unoptimized_plan();
    ctx.register_table(reference.clone(), Arc::new(ViewTable::new(plan, None)))?;
    let schema = Arc::new(ArrowSchema::new(vec![Field::new(
        "changelog_view",
        DataType::Utf8,
        false,
    )]));
    let batch = RecordBatch::try_new(
        schema,
        vec![Arc::new(StringArray::from(vec![
            reference.to_quoted_string()
        ]))],
    )
    .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}

/// The `changelog_view` argument, a SQL name (`v`, `schema.v`, `catalog.schema.v`;
/// unquoted parts normalized as in queries).
fn view_name(ctx: &SessionContext, name: &str) -> Result<TableReference> {
    let parts = cursor(ctx, name)
        .and_then(|mut c| c.object_name().ok().filter(|_| c.at_end()))
        .ok_or_else(|| {
            Error::invalid_argument(format!("changelog_view '{name}' is not a view name"))
        })?;
    super::dml_rewrite::reference(&parts).ok_or_else(|| {
        Error::invalid_argument(format!("changelog_view '{name}' has more than three parts"))
    })
}

/// The changelog range of the `options` map (Spark's read options).
fn range(options: Option<Value>) -> Result<ChangelogRange> {
    let pairs = match options {
        None => vec![],
        Some(Value::Map(pairs)) => pairs,
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "options must be map('key', 'value', …), got {other}"
            )))
        }
    };
    let mut range = ChangelogRange::default();
    for (key, value) in pairs {
        let slot = match key.as_str() {
            "start-snapshot-id" => &mut range.start_snapshot_id,
            "end-snapshot-id" => &mut range.end_snapshot_id,
            "start-timestamp" => &mut range.start_timestamp_ms,
            "end-timestamp" => &mut range.end_timestamp_ms,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "unknown option '{key}' (create_changelog_view takes start-snapshot-id, \
                     end-snapshot-id, start-timestamp, end-timestamp)"
                )))
            }
        };
        let n = value.trim().parse::<i64>().map_err(|_| {
            Error::invalid_argument(format!(
                "option '{key}' must be a whole number (a snapshot id, or ms since the \
                 epoch), got '{value}'"
            ))
        })?;
        *slot = Some(n);
    }
    Ok(range)
}
