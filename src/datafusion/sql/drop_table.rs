//! `DROP TABLE [IF EXISTS] t[, …] [PURGE]` on Iceberg tables.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::super::catalog::schema_name;
use super::resolve::message_name;
use super::tokens::Cursor;
use super::{empty, not_a_table, resolve_table};
use crate::error::{Error, Result};

/// `DROP TABLE`, after those keywords.
pub(super) async fn drop_table(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let if_exists = c.eat_keywords(&["IF", "EXISTS"]);
    let mut names = Vec::new();
    loop {
        let Ok(name) = c.object_name() else {
            return Ok(None);
        };
        names.push(name);
        if !c.eat(&Token::Comma) {
            break;
        }
    }
    let mut tables = Vec::new();
    for name in &names {
        match resolve_table(ctx, name)? {
            Some(t) => tables.push(t),
            // not (all) Iceberg: DataFusion's DROP TABLE
            None => return Ok(None),
        }
    }
    let purge = c.eat_keyword("PURGE");
    c.expect_end().map_err(|e| {
        let name = message_name(names[0].iter().map(String::as_str));
        e.context(format!("DROP TABLE {name}"))
    })?;
    for t in &tables {
        not_a_table::check_not_a_version(t, "DROP TABLE").await?;
        // a session view of the namespace (and no table of its name): DROP VIEW drops it,
        // as Spark says ("Cannot drop a view with DROP TABLE")
        if not_a_table::is_session_view(t).await? {
            return Err(Error::invalid_argument(format!(
                "DROP TABLE {0}: {0} is a view of this session, not a table; DROP VIEW {0} \
                 drops it",
                t.display()
            )));
        }
    }
    if purge {
        // before any table is dropped: Spark's `purgeTable` refuses a table whose
        // gc.enabled is false (its files may be other tables' too), dropping nothing
        for t in &tables {
            let catalog = t.target.catalog();
            if if_exists && !catalog.table_exists(&t.ident).await? {
                continue;
            }
            let what = format!("DROP TABLE {} PURGE", t.display());
            let table = catalog
                .load_table(&t.ident)
                .await
                .map_err(|e| e.context(&what))?;
            crate::table_properties::check_gc_enabled(
                &table.metadata().properties,
                &format!("purge table '{}'", t.ident),
            )
            .map_err(|e| e.context(&what))?;
        }
    }
    for t in tables {
        let what = format!("DROP TABLE {}", t.display());
        let catalog = t.target.catalog();
        if if_exists && !catalog.table_exists(&t.ident).await? {
            continue;
        }
        catalog
            .drop_table(&t.ident, purge)
            .await
            .map_err(|e| e.context(&what))?;
        if let Some(s) = t
            .target
            .iceberg()
            .namespace_schema(&schema_name(&t.ident.namespace))
        {
            s.remove_table_name(&t.ident.name);
        }
    }
    empty(ctx).map(Some)
}
