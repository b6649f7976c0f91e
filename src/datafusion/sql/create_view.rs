//! `CREATE [OR REPLACE] [TEMP|TEMPORARY] VIEW name [(cols)] AS query` over Iceberg
//! tables: planned by DataFusion, registered as a [`FreshView`], which resolves the
//! Iceberg tables again whenever the view is read (DataFusion's own view would read them
//! as they were when it was created). Views of no Iceberg table stay DataFusion's.
//!
//! Every view is a session view, so Spark's temporary view (`CREATE [OR REPLACE] TEMP
//! VIEW src AS …`, the usual source of a Spark `MERGE`) is one: [`without_temporary`]
//! drops the `TEMP`/`TEMPORARY`, which DataFusion 55 refuses ("Temporary views not
//! supported"), and the view is made as `CREATE VIEW` makes it (same lifetime, same
//! `DROP VIEW`). Spark's `GLOBAL TEMPORARY` view (in database `global_temp`, shared by
//! the application's sessions) is refused naming what to write.

use std::sync::Arc;

use datafusion::dataframe::DataFrame;
use datafusion::datasource::TableType;
use datafusion::logical_expr::{DdlStatement, LogicalPlan};
use datafusion::prelude::SessionContext;

use super::empty;
use super::tokens::{is_keyword, Cursor};
use crate::datafusion::fresh_view::FreshView;
use crate::error::{Error, ErrorKind, Result};

/// Run `statement` if it creates a view of an Iceberg table; `None` otherwise (or when
/// DataFusion cannot plan it: DataFusion then runs it and reports the error).
///
/// Errors: a view (or table) of that name exists and the statement has no `OR REPLACE`
/// ([`ErrorKind::AlreadyExists`], naming which); a table of an Iceberg namespace of that
/// name, even with `OR REPLACE`; the catalog's errors registering it.
pub(super) async fn create_view(
    ctx: &SessionContext,
    statement: &str,
) -> Result<Option<DataFrame>> {
    let Ok(LogicalPlan::Ddl(DdlStatement::CreateView(view))) =
        ctx.state().create_logical_plan(statement).await
    else {
        return Ok(None);
    };
    // the name as the catalog has it now, for the check below and DataFusion's own
    // (another process may have dropped or created the table since the session listed
    // the names: module `listed_names`)
    super::listed_names::recheck_table_name(ctx, &view.name).await;
    let name = view.name;
    // before DataFusion's own views too: its error ("Table '…' already exists") names a
    // view a table
    if ctx.table_exist(name.clone())? {
        let kind = match ctx.table_provider(name.clone()).await {
            Ok(p) if p.table_type() == TableType::View => "a view",
            _ => "a table",
        };
        // a view replaces a view; a table is kept (refused where the view would be
        // registered, an Iceberg namespace's schema, naming both)
        if !view.or_replace {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "CREATE VIEW {name}: {name} already exists as {kind} (CREATE OR REPLACE \
                     VIEW replaces a view)"
                ),
            ));
        }
    }
    let input = Arc::unwrap_or_clone(view.input);
    if !FreshView::reads_iceberg(&input) {
        return Ok(None);
    }
    if ctx.table_exist(name.clone())? {
        ctx.deregister_table(name.clone())?;
    }
    let fresh = FreshView::new(name.to_string(), input, view.definition);
    ctx.register_table(name, Arc::new(fresh))?;
    empty(ctx).map(Some)
}

/// The text of `c`'s statement without its `TEMP`/`TEMPORARY` when it is `CREATE [OR
/// REPLACE] TEMP|TEMPORARY VIEW …` (see the module docs); `None` for any other statement.
///
/// Errors: [`ErrorKind::Unsupported`] for `CREATE [OR REPLACE] GLOBAL TEMP|TEMPORARY
/// VIEW`, naming the session view to make instead.
pub(super) fn without_temporary(mut c: Cursor<'_>) -> Result<Option<String>> {
    if !c.eat_keyword("CREATE") {
        return Ok(None);
    }
    let _ = c.eat_keywords(&["OR", "REPLACE"]);
    let global = c.eat_keyword("GLOBAL");
    let Some(temporary) = c
        .peek()
        .filter(|t| {
            ["TEMP", "TEMPORARY"]
                .iter()
                .any(|kw| is_keyword(&t.token, kw))
        })
        .map(|t| t.start..t.end)
    else {
        return Ok(None);
    };
    c.advance();
    if !c.peek_keyword("VIEW") {
        return Ok(None);
    }
    if global {
        return Err(Error::unsupported(
            "CREATE GLOBAL TEMPORARY VIEW: icefloe has no global_temp database shared by \
             sessions; CREATE [OR REPLACE] TEMPORARY VIEW name AS … makes a view of this \
             session",
        ));
    }
    let text = c.text();
    Ok(Some(format!(
        "{}{}",
        &text[..temporary.start],
        text[temporary.end..].trim_start()
    )))
}
