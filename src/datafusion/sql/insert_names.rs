//! `INSERT INTO t SELECT 1, 1` written as Spark and DuckDB take it.
//!
//! An `INSERT`'s query fills the table's columns by position, so the names of its
//! columns do not matter. DataFusion 55 still plans the query as a query of its own and
//! refuses a projection whose columns would share a name ("Projections require unique
//! expression names": `SELECT 1, 1`, `SELECT a, a FROM s`, `SELECT s.a, a FROM s`). When
//! an `INSERT` fails with that error, [`aliased`] names each unnamed column of its query
//! (every `SELECT` of it, the branches of a `UNION` too) after the column it fills and it
//! is planned again. A statement DataFusion accepts is never rewritten.

use datafusion::common::DataFusionError;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    Ident, ObjectNamePart, Query, SelectItem, SetExpr, Statement,
};

/// The start of DataFusion's error for a projection whose columns share a name
/// (`datafusion_expr::utils::validate_unique_names`).
const DUPLICATE_NAMES: &str = "Projections require unique expression names";

/// Whether `e` is DataFusion's refusal of a projection whose columns share a name.
pub(super) fn is_duplicate_names(e: &DataFusionError) -> bool {
    e.to_string().contains(DUPLICATE_NAMES)
}

/// `statement` (an `INSERT … SELECT`) with each unnamed column of its query's `SELECT`s
/// given a name: the column it fills when the statement lists them, else `column<N>`
/// (DataFusion's name of a `VALUES` column, N counting from 1), made unique against the
/// names the `SELECT` gives itself. `None` when `statement` is no `INSERT` of a query,
/// or nothing was unnamed.
pub(super) fn aliased(ctx: &SessionContext, statement: &str) -> Option<String> {
    let Some(Statement::Insert(mut insert)) = super::parse_statement(ctx, statement) else {
        return None;
    };
    let quote = super::quote_of(super::session_dialect(ctx).as_ref());
    let columns = Columns {
        listed: insert
            .columns
            .iter()
            .map(|c| match c.0.last() {
                Some(ObjectNamePart::Identifier(ident)) => ident.value.clone(),
                _ => c.to_string(),
            })
            .collect(),
        quote,
    };
    let source = insert.source.as_mut()?;
    name_query(source, &columns).then(|| Statement::Insert(insert).to_string())
}

/// The names given: the statement's column list, and how the dialect quotes a name.
struct Columns {
    listed: Vec<String>,
    quote: char,
}

/// Name the unnamed columns of `query`'s `SELECT`s; whether one was.
fn name_query(query: &mut Query, columns: &Columns) -> bool {
    name_set_expr(&mut query.body, columns)
}

fn name_set_expr(body: &mut SetExpr, columns: &Columns) -> bool {
    match body {
        SetExpr::Select(select) => {
            let taken: Vec<String> = select
                .projection
                .iter()
                .filter_map(|item| match item {
                    SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_lowercase()),
                    _ => None,
                })
                .collect();
            let mut changed = false;
            for (position, item) in select.projection.iter_mut().enumerate() {
                let SelectItem::UnnamedExpr(expr) = item else {
                    continue;
                };
                let mut name = columns
                    .listed
                    .get(position)
                    .map_or_else(|| format!("column{}", position + 1), String::clone);
                while taken.contains(&name.to_lowercase()) {
                    name.push('_');
                }
                *item = SelectItem::ExprWithAlias {
                    expr: expr.clone(),
                    alias: Ident::with_quote(columns.quote, name),
                };
                changed = true;
            }
            changed
        }
        // both sides (`|`, not `||`, which would skip the right one)
        SetExpr::SetOperation { left, right, .. } => {
            name_set_expr(left, columns) | name_set_expr(right, columns)
        }
        SetExpr::Query(query) => name_query(query, columns),
        _ => false,
    }
}
