//! A write to a time-travel name (`"t@v1"`, `"t@<snapshot id>"`, `"t@<timestamp>"`, and
//! Spark's `t.tag_v1`, `t.snapshot_id_<id>`, `t.at_timestamp_<ms>`, which become them) is
//! refused before DataFusion plans it.
//!
//! The table provider refuses such a write when the plan is executed
//! ([`IcebergTableProvider::check_writable`]), but DataFusion plans the statement first,
//! against the schema of the snapshot the name reads: once a column was added since,
//! `INSERT INTO t.tag_v1 VALUES (…)` with the table's current columns failed with "got 4
//! values in row 0 but expected 3", and `UPDATE t.tag_v1 SET new_col = …` with "no column
//! 'new_col'", never saying that a tag cannot be written. [`check`] makes the provider's
//! refusal the statement's error. A branch (`"t@dev"`) is writable and passes.

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{FromTable, ObjectName, Statement, TableFactor, TableObject};

use super::dml_rewrite::Names;
use super::tokens::first_word_is;
use crate::datafusion::catalog::TableNameParts;
use crate::datafusion::IcebergTableProvider;
use crate::error::Result;

/// `Err` when `statement` is an `INSERT`, `UPDATE`, `DELETE`, `MERGE` or `TRUNCATE`
/// whose target is an Iceberg table read at a tag, snapshot id or timestamp (a `"t@…"`
/// name that is not a branch). Statements without `@` are not parsed; a target that is
/// not found or not an Iceberg table is left to DataFusion.
///
/// Errors: [`crate::ErrorKind::Unsupported`], as [`IcebergTableProvider::check_writable`]
/// ("cannot write to tag 'v1' of table 'ns.t': …", "INSERT INTO on table 'ns.t': it was
/// opened by location or at a snapshot; …").
pub(super) async fn check(ctx: &SessionContext, statement: &str) -> Result<()> {
    if !statement.contains('@')
        || !first_word_is(
            statement,
            &["INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE"],
        )
    {
        return Ok(());
    }
    let Some(parsed) = super::parse_statement(ctx, statement) else {
        return Ok(());
    };
    let Some((verb, name)) = target(&parsed) else {
        return Ok(());
    };
    let state = ctx.state();
    let names = Names {
        normalize: state
            .config()
            .options()
            .sql_parser
            .enable_ident_normalization,
    };
    let Some(parts) = names.parts(name) else {
        return Ok(());
    };
    let versioned = parts
        .last()
        .is_some_and(|t| TableNameParts::parse(t).version.is_some());
    if !versioned {
        return Ok(());
    }
    let Some(reference) = super::dml_rewrite::reference(&parts) else {
        return Ok(());
    };
    let Ok(provider) = ctx.table_provider(reference).await else {
        return Ok(());
    };
    match provider.downcast_ref::<IcebergTableProvider>() {
        Some(iceberg) => iceberg.check_writable(verb).map(|_| ()),
        None => Ok(()),
    }
}

/// The statement's verb as the write refusals name it, and its target table.
fn target(statement: &Statement) -> Option<(&'static str, &ObjectName)> {
    match statement {
        Statement::Insert(insert) => {
            let verb = match insert.overwrite {
                true => "INSERT OVERWRITE",
                false => "INSERT INTO",
            };
            match &insert.table {
                TableObject::TableName(name) => Some((verb, name)),
                _ => None,
            }
        }
        Statement::Update(update) => Some(("UPDATE", table_name(&update.table.relation)?)),
        Statement::Delete(delete) => {
            let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) =
                &delete.from;
            Some(("DELETE", table_name(&tables.first()?.relation)?))
        }
        Statement::Merge(merge) => Some(("MERGE", table_name(&merge.table)?)),
        Statement::Truncate(truncate) => Some(("TRUNCATE", &truncate.table_names.first()?.name)),
        _ => None,
    }
}

/// The table a relation names; `None` for a subquery, function or join.
fn table_name(factor: &TableFactor) -> Option<&ObjectName> {
    match factor {
        TableFactor::Table { name, .. } => Some(name),
        _ => None,
    }
}
