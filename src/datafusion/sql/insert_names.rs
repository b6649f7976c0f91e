//! `INSERT INTO t SELECT 1, 1` written as Spark and DuckDB take it.
//!
//! An `INSERT`'s query fills the table's columns by position, so the names of its
//! columns do not matter. DataFusion 55 still plans the query as a query of its own and
//! refuses a projection whose columns would share a name ("Projections require unique
//! expression names": `SELECT 1, 1`, `SELECT a, a FROM s`, `SELECT s.a, a FROM s`). When
//! an `INSERT` fails with that error, [`aliased`] gives each column that repeats a name
//! in a `SELECT` of its query (the branches of a `UNION` too) a name of its own, and it is
//! planned again. A statement DataFusion accepts is never rewritten.

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{Expr, Ident, Query, SelectItem, SetExpr, Statement};

/// The start of DataFusion's error for a projection whose columns share a name
/// (`datafusion_expr::utils::validate_unique_names`).
const DUPLICATE_NAMES: &str = "Projections require unique expression names";

/// Whether `e` (DataFusion's error, or icefloe's holding it) is DataFusion's refusal of
/// a projection whose columns share a name.
pub(super) fn is_duplicate_names(e: &dyn std::fmt::Display) -> bool {
    e.to_string().contains(DUPLICATE_NAMES)
}

/// `statement` (an `INSERT … SELECT`) with each column of its query's `SELECT`s that
/// repeats the name of an earlier one (the same column, `a` and `s.a`; the same
/// expression, `1` and `1`) named `icefloe_insert_column_<N>` (N its position from 1), a
/// name no clause of the query means: the first of the columns keeps its name, so an
/// `ORDER BY`/`HAVING` of the query, or of a `UNION` named by its first branch, reads
/// what it read. `None` when `statement` is no `INSERT` of a query, or nothing repeats.
pub(super) fn aliased(ctx: &SessionContext, statement: &str) -> Option<String> {
    let mut parsed = super::parse_statement(ctx, statement)?;
    name_insert_query(ctx, &mut parsed).then(|| parsed.to_string())
}

/// `statement` (parsed: an `INSERT` of a query, or a `PREPARE` of one) with its query's
/// repeated columns named as [`aliased`] names them; whether one was. The planner of an
/// `INSERT` whose query selects from a `VALUES` (`nested_values`) names them so too:
/// `INSERT INTO t SELECT 1, 1 FROM (VALUES (5)) v(x)` runs as `SELECT 1, 1` does.
pub(super) fn name_insert_query(ctx: &SessionContext, statement: &mut Statement) -> bool {
    let quote = super::quote_of(super::session_dialect(ctx).as_ref());
    let insert = match statement {
        Statement::Insert(insert) => insert,
        Statement::Prepare { statement, .. } => match statement.as_mut() {
            Statement::Insert(insert) => insert,
            _ => return false,
        },
        _ => return false,
    };
    insert
        .source
        .as_mut()
        .is_some_and(|source| name_query(source, quote))
}

/// Name the repeated columns of `query`'s `SELECT`s; whether one was.
fn name_query(query: &mut Query, quote: char) -> bool {
    name_set_expr(&mut query.body, quote)
}

/// The name DataFusion gives `ident` as a column (unquoted names lowercased).
pub(super) fn ident_name(ident: &Ident) -> String {
    match ident.quote_style {
        None => ident.value.to_lowercase(),
        Some(_) => ident.value.clone(),
    }
}

/// The name a `SELECT` item's column gets, as far as it matters here: an alias, a
/// column's last name part, else the expression's text; `None` for a wildcard.
fn item_name(item: &SelectItem) -> Option<String> {
    match item {
        SelectItem::ExprWithAlias { alias, .. } => Some(ident_name(alias)),
        SelectItem::UnnamedExpr(Expr::Identifier(ident)) => Some(ident_name(ident)),
        SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => parts.last().map(ident_name),
        SelectItem::UnnamedExpr(expr) => Some(expr.to_string()),
        _ => None,
    }
}

fn name_set_expr(body: &mut SetExpr, quote: char) -> bool {
    match body {
        SetExpr::Select(select) => {
            let names: Vec<Option<String>> = select.projection.iter().map(item_name).collect();
            let mut changed = false;
            for (position, item) in select.projection.iter_mut().enumerate() {
                let SelectItem::UnnamedExpr(expr) = item else {
                    continue;
                };
                let repeated = names[position]
                    .as_ref()
                    .is_some_and(|n| names[..position].contains(&Some(n.clone())));
                if !repeated {
                    continue;
                }
                let mut name = format!("icefloe_insert_column_{}", position + 1);
                while names.contains(&Some(name.clone())) {
                    name.push('_');
                }
                *item = SelectItem::ExprWithAlias {
                    expr: expr.clone(),
                    alias: Ident::with_quote(quote, name),
                };
                changed = true;
            }
            changed
        }
        // both sides (`|`, not `||`, which would skip the right one)
        SetExpr::SetOperation { left, right, .. } => {
            name_set_expr(left, quote) | name_set_expr(right, quote)
        }
        SetExpr::Query(query) => name_query(query, quote),
        _ => false,
    }
}
