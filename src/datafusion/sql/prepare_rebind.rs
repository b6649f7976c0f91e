//! A prepared statement over Iceberg tables planned again at `EXECUTE` when a table it
//! reads or writes has other columns than at `PREPARE` (`ALTER TABLE … ADD`, `DROP`,
//! `RENAME COLUMN`, a type promotion, a column dropped and added again under its name,
//! in this session or another) or another write-default for a column, as DuckDB re-binds a
//! prepared statement after the catalog changed and Trino analyzes its text at each
//! `EXECUTE`.
//!
//! DataFusion keeps the plan made at `PREPARE`: its `VALUES`, conditions, `SET` values
//! and `*` were planned and cast for the columns then, so an `EXECUTE` after `ALTER
//! TABLE ns.t ADD COLUMN c` of `PREPARE p AS UPDATE ns.t SET …` could only fail ("prepare
//! it again"). Here the text of each `PREPARE` that [`super::prepare`] registers is kept
//! per session with the columns of its Iceberg tables ([`PreparedStatements`], a
//! `SessionConfig` extension that `register_iceberg_options` installs); an `EXECUTE`
//! compares them with the tables' columns now and, when one differs, prepares the text
//! again under the same name before it runs: `SELECT *` then lists the new column, an
//! `UPDATE` of other columns runs, a statement naming a column dropped or renamed since
//! fails naming it. The new plan is made first under a scratch name, so a statement that
//! no longer plans stays prepared as it was (each `EXECUTE` fails the same way).
//!
//! A change committed after this check (while the `EXECUTE` is planned) is still caught
//! where the statement reads or writes the table (`FreshView`, `FreshTarget`): an error,
//! never rows of other columns.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use datafusion::common::TableReference;
use datafusion::datasource::TableProvider;
use datafusion::prelude::SessionContext;

use crate::datafusion::fresh_target::{changed_default, column_lists, resolve_now, same_columns};
use crate::error::{Error, ErrorKind, Result};

/// One prepared statement: the text of its `PREPARE` and each Iceberg table it reads or
/// writes, as it was then (its columns and their write-defaults).
#[derive(Debug, Clone)]
struct Prepared {
    text: String,
    tables: Vec<(TableReference, Arc<dyn TableProvider>)>,
}

/// The session's prepared statements over Iceberg tables, by name (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct PreparedStatements(Mutex<HashMap<String, Prepared>>);

impl PreparedStatements {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Prepared>> {
        // a poisoned lock only means a panic elsewhere: the map itself is whole
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn registry(ctx: &SessionContext) -> Option<Arc<PreparedStatements>> {
    ctx.state().config().get_extension::<PreparedStatements>()
}

/// Keep `text`, the `PREPARE` of statement `name` just registered, with the Iceberg
/// `tables` it reads or writes (name, provider at `PREPARE`). Does nothing in a session
/// without the registry.
pub(super) fn remember(
    ctx: &SessionContext,
    name: &str,
    text: &str,
    tables: Vec<(TableReference, Arc<dyn TableProvider>)>,
) {
    if let Some(registry) = registry(ctx) {
        let text = text.to_string();
        registry
            .lock()
            .insert(name.to_string(), Prepared { text, tables });
    }
}

/// Forget prepared statement `name` (`DEALLOCATE` removed it).
pub(super) fn forget(ctx: &SessionContext, name: &str) {
    if let Some(registry) = registry(ctx) {
        registry.lock().remove(name);
    }
}

/// Before `statement`, an `EXECUTE`, runs: prepare its statement again when a table it
/// reads or writes has other columns than at `PREPARE` (names, types or field ids: a
/// column dropped and added again under its name is another column), or a column of it
/// another write-default (`ALTER COLUMN … SET DEFAULT` / `DROP DEFAULT`: a prepared
/// `INSERT` not listing the column, or writing `DEFAULT`, was planned with the old one)
/// (see the module docs). Statements the session did not keep, and tables that no
/// longer exist (the statement's own error names them), are left as they are.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the statement, the table, its columns
/// now and then, and why the statement no longer plans (e.g. a column dropped or renamed
/// since); the statement then stays prepared as it was.
pub(super) async fn rebind(ctx: &SessionContext, statement: &str) -> Result<()> {
    let Some(registry) = registry(ctx) else {
        return Ok(());
    };
    let Some(execute) = super::prepare::executed(ctx, statement).await else {
        return Ok(());
    };
    let Some(prepared) = registry.lock().get(&execute.name).cloned() else {
        return Ok(());
    };
    let state = ctx.state();
    let name = &execute.name;
    let mut changed = None;
    for (table, then) in &prepared.tables {
        let Some(now) = resolve_now(&state, table).await? else {
            continue;
        };
        let (now_schema, then_schema) = (now.schema(), then.schema());
        if !same_columns(now_schema.fields(), then_schema.fields()) {
            let (now, then) = column_lists(now_schema.fields(), then_schema.fields());
            changed = Some((
                format!(
                    "the columns of table {table} changed since PREPARE {name} (now \
                     ({now}), then ({then}))"
                ),
                "them",
            ));
            break;
        }
        if let Some(column) = changed_default(now.as_ref(), then.as_ref()) {
            changed = Some((
                format!(
                    "the write-default of column '{column}' of table {table} changed \
                     since PREPARE {name}"
                ),
                "it",
            ));
            break;
        }
    }
    let Some((changed, them)) = changed else {
        return Ok(());
    };
    let Some(scratch) = renamed(ctx, &prepared.text, "icefloe_rebind") else {
        return Ok(());
    };
    let quote = super::quote_of(super::session_dialect(ctx).as_ref());
    let quoted = |n: &str| {
        let doubled = format!("{quote}{quote}");
        format!("{quote}{}{quote}", n.replace(quote, &doubled))
    };
    // planned first under a scratch name: one that fails leaves the statement as it was
    if let Err(e) = run_apart(ctx, &scratch.1).await {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "EXECUTE {name}: {changed}, and the statement no longer plans against \
                 {them}; change it and prepare it again"
            ),
        )
        .with_source(e));
    }
    run_apart(ctx, &format!("DEALLOCATE {}", quoted(&scratch.0))).await?;
    run_apart(ctx, &format!("DEALLOCATE {}", quoted(name))).await?;
    run_apart(ctx, &prepared.text).await
}

/// `statement` run through [`super::execute`] on a task of its own when there is a
/// Tokio runtime: a whole `PREPARE` planned from inside an `EXECUTE` then starts on a
/// fresh stack (nested, a `MERGE`'s overflowed a 2 MiB thread stack in debug builds).
///
/// Errors: the statement's; [`ErrorKind::Io`] when its task failed (panicked).
fn run_apart(
    ctx: &SessionContext,
    statement: &str,
) -> Pin<Box<dyn Future<Output = Result<()>> + Send>> {
    let (ctx, text) = (ctx.clone(), statement.to_string());
    // a named `Send` future type: `execute` runs this one, which runs `execute`
    let task: Pin<Box<dyn Future<Output = Result<()>> + Send>> =
        Box::pin(async move { super::execute(&ctx, &text).await.map(|_| ()) });
    Box::pin(async move {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime.spawn(task).await.map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    "the task preparing a statement again at EXECUTE failed",
                )
                .with_source(e)
            })?,
            Err(_) => task.await,
        }
    })
}

/// The `PREPARE` statement `text` with its statement's name replaced by `scratch` (with a
/// suffix that no other prepared statement of the session has): the name used and the
/// text; `None` when the name cannot be found.
fn renamed(ctx: &SessionContext, text: &str, scratch: &str) -> Option<(String, String)> {
    let toks = super::tokenize(ctx, text)?;
    let name = toks.get(1)?;
    let taken = registry(ctx).map(|r| r.lock().keys().cloned().collect::<Vec<_>>());
    let taken = taken.unwrap_or_default();
    let scratch = (0..)
        .map(|i| format!("{scratch}_{i}"))
        .find(|n| !taken.contains(n))?;
    let renamed = format!("{}{scratch}{}", &text[..name.start], &text[name.end..]);
    Some((scratch, renamed))
}
