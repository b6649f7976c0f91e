//! `SELECT d, CAST(d AS DOUBLE) FROM t`: a cast beside what it casts.
//!
//! DataFusion 55 names an unaliased `CAST`/`TRY_CAST`/`::` after its input
//! (`datafusion_expr::expr::SchemaDisplay`: "Cast expr is not shown to be consistent
//! with Postgres and Spark"), so `SELECT d, CAST(d AS DOUBLE)`, `SELECT *, TRY_CAST(d AS
//! INT)`, `SELECT CAST(d AS INT), CAST(d AS DOUBLE)` and `SELECT 1, CAST(1 AS DOUBLE)`
//! name two columns alike, and it refuses the projection ("Projections require unique
//! expression names"). Spark runs them: its analyzer (`ResolveAliases`) names a cast of
//! a column after the column too, but a query's columns may share a name there, and it
//! names a cast of anything else by its SQL text (`toPrettySQL`: `CAST(1 AS DOUBLE)`,
//! `CAST(CAST(d AS INT) AS DOUBLE)`).
//!
//! When a statement fails with that refusal, [`named`] gives each unaliased cast of a
//! `SELECT` that shares its DataFusion name with another item of that `SELECT` (or that
//! casts a column beside a `*`, which may hold the column) the name Spark prints for a
//! cast: `CAST(d AS DOUBLE)`, `TRY_CAST(d AS INT)` (see [`spark_text`]), and the
//! statement is run again. Every `SELECT` of the statement is named so: `UNION`
//! branches, subqueries, CTEs, the query of an `INSERT`, a CTAS or a view. A column
//! (`d` of `SELECT d, d`) keeps its name, so the statement is still refused. A statement
//! DataFusion accepts is never rewritten: `SELECT CAST(d AS DOUBLE) FROM t` alone keeps
//! DataFusion's name, its input's as DataFusion prints it (`t.d`; Spark's is `d`).
//! Statements of every kind are named again from `sql::execute` when they parse in the
//! session's dialect, and the statements DataFusion plans after icefloe's rewrites (a
//! CTAS's query, a Spark `100L`) where they are planned.

use std::collections::HashSet;
use std::future::Future;
use std::ops::ControlFlow;

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    CastKind, DataType, Expr, Ident, Query, Select, SelectItem, SetExpr, VisitMut, VisitorMut,
};

use super::insert_names::{ident_name, is_duplicate_names};
use crate::error::Result;

/// `plan(statement)`; when DataFusion refuses it for columns of one name, `plan` of the
/// statement [`named`] (when a cast was): for the planners icefloe calls with text it
/// rewrote (`sql::execute` names the statement as written too). A named statement
/// refused so again reports the first refusal, which quotes the statement as written.
///
/// Errors: `plan`'s.
pub(super) async fn planned<T, Fut>(
    ctx: &SessionContext,
    statement: &str,
    plan: impl Fn(String) -> Fut,
) -> Result<T>
where
    Fut: Future<Output = Result<T>>,
{
    match plan(statement.to_string()).await {
        Err(e) if is_duplicate_names(&e) => match named(ctx, statement) {
            Some(text) => match plan(text).await {
                Err(again) if is_duplicate_names(&again) => Err(e),
                other => other,
            },
            None => Err(e),
        },
        other => other,
    }
}

/// `statement` with each unaliased cast of its `SELECT`s whose DataFusion name repeats
/// in its `SELECT` named as Spark prints it (see the module docs); `None` when it does
/// not parse in the session's dialect or no cast needs a name.
pub(super) fn named(ctx: &SessionContext, statement: &str) -> Option<String> {
    let mut parsed = super::parse_statement(ctx, statement)?;
    let mut namer = Namer {
        quote: super::quote_of(super::session_dialect(ctx).as_ref()),
        taken: identifiers(&parsed),
        changed: false,
    };
    let _ = parsed.visit(&mut namer);
    namer.changed.then(|| parsed.to_string())
}

/// Names the casts of every query it visits (each nested query is visited itself).
struct Namer {
    quote: char,
    /// Every identifier the statement names, lowercased (see [`identifiers`]).
    taken: HashSet<String>,
    changed: bool,
}

impl VisitorMut for Namer {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        self.changed |= name_set_expr(&mut query.body, self.quote, &self.taken);
        ControlFlow::Continue(())
    }
}

/// Name the casts of the `SELECT`s of `body` (both sides of a set operation); whether
/// one was. A parenthesized query is a query of its own, visited by [`Namer`].
fn name_set_expr(body: &mut SetExpr, quote: char, taken: &HashSet<String>) -> bool {
    match body {
        SetExpr::Select(select) => name_select(select, quote, taken),
        // both sides (`|`, not `||`, which would skip the right one)
        SetExpr::SetOperation { left, right, .. } => {
            name_set_expr(left, quote, taken) | name_set_expr(right, quote, taken)
        }
        _ => false,
    }
}

/// `expr` without the casts and parentheses around what it casts: the expression
/// DataFusion names an unaliased cast after.
fn cast_input(mut expr: &Expr) -> &Expr {
    loop {
        match expr {
            Expr::Cast { expr: inner, .. } | Expr::Nested(inner) => expr = inner,
            _ => return expr,
        }
    }
}

/// The name DataFusion gives a select item, as far as telling repeats apart needs: an
/// alias, a column's last name part, else the expression's text, each of a cast's input;
/// `None` for a wildcard.
fn item_name(item: &SelectItem) -> Option<String> {
    match item {
        SelectItem::ExprWithAlias { alias, .. } => Some(ident_name(alias)),
        SelectItem::UnnamedExpr(expr) => Some(match cast_input(expr) {
            Expr::Identifier(ident) => ident_name(ident),
            Expr::CompoundIdentifier(parts) => parts.last().map(ident_name).unwrap_or_default(),
            other => other.to_string(),
        }),
        _ => None,
    }
}

/// Every identifier (each part of a qualified one) `statement` names, lowercased. A cast
/// is not given a name the statement names elsewhere: `ORDER BY "CAST(id AS BIGINT)"`
/// may mean a table's column of that name (a column CTAS of such a query makes), which
/// the new name would hide from it, changing the rows' order (report T69 F11); such a
/// statement stays refused.
fn identifiers(statement: &datafusion::sql::sqlparser::ast::Statement) -> HashSet<String> {
    let mut taken = HashSet::new();
    let _ = datafusion::sql::sqlparser::ast::visit_expressions(statement, |e| {
        match e {
            Expr::Identifier(ident) => {
                taken.insert(ident.value.to_lowercase());
            }
            Expr::CompoundIdentifier(parts) => {
                taken.extend(parts.iter().map(|p| p.value.to_lowercase()));
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    taken
}

fn name_select(select: &mut Select, quote: char, taken: &HashSet<String>) -> bool {
    let names: Vec<Option<String>> = select.projection.iter().map(item_name).collect();
    let wildcard = names.iter().any(Option::is_none);
    let mut changed = false;
    for (position, item) in select.projection.iter_mut().enumerate() {
        let SelectItem::UnnamedExpr(expr @ Expr::Cast { .. }) = item else {
            continue;
        };
        let repeated = names
            .iter()
            .enumerate()
            .any(|(other, name)| other != position && name.is_some() && *name == names[position]);
        let of_a_column = matches!(
            cast_input(expr),
            Expr::Identifier(_) | Expr::CompoundIdentifier(_)
        );
        if !(repeated || (wildcard && of_a_column)) {
            continue;
        }
        let name = spark_text(expr);
        if taken.contains(&name.to_lowercase()) {
            continue;
        }
        *item = SelectItem::ExprWithAlias {
            expr: expr.clone(),
            alias: Ident::with_quote(quote, name),
        };
        changed = true;
    }
    changed
}

/// `expr` as Spark prints an expression in a column's name (`toPrettySQL`): a column by
/// its name without qualifier, a cast as `CAST(<input> AS <type>)` (`TRY_CAST` for
/// `TRY_CAST` and `SAFE_CAST`; `::` is a `CAST`) with Spark's type name
/// ([`spark_type`]); any other expression by its SQL text, its columns unqualified.
pub(super) fn spark_text(expr: &Expr) -> String {
    match expr {
        Expr::Cast {
            kind,
            expr,
            data_type,
            ..
        } => {
            let keyword = match kind {
                CastKind::TryCast | CastKind::SafeCast => "TRY_CAST",
                CastKind::Cast | CastKind::DoubleColon => "CAST",
            };
            format!(
                "{keyword}({} AS {})",
                spark_text(expr),
                spark_type(data_type)
            )
        }
        Expr::Nested(inner) => spark_text(inner),
        Expr::Identifier(ident) => ident_name(ident),
        Expr::CompoundIdentifier(parts) => parts.last().map(ident_name).unwrap_or_default(),
        other => {
            let mut unqualified = other.clone();
            let _ = datafusion::sql::sqlparser::ast::visit_expressions_mut(&mut unqualified, |e| {
                if let Expr::CompoundIdentifier(parts) = e {
                    if let Some(last) = parts.last() {
                        *e = Expr::Identifier(last.clone());
                    }
                }
                ControlFlow::<()>::Continue(())
            });
            unqualified.to_string()
        }
    }
}

/// Spark's name of a type (`DataType.sql`) for the SQL names DataFusion takes for it:
/// `INT` for `INTEGER`, `BIGINT`, `SMALLINT`, `TINYINT`, `FLOAT` for `REAL`, `DOUBLE`
/// for `DOUBLE PRECISION`, `STRING` for `VARCHAR`/`CHAR`/`TEXT`, `BOOLEAN`, `BINARY` for
/// `BYTEA`/`VARBINARY`, `DECIMAL(p,s)`; any other type as written.
fn spark_type(data_type: &DataType) -> String {
    match data_type {
        DataType::Int(_)
        | DataType::Integer(_)
        | DataType::Int4(_)
        | DataType::Int32
        | DataType::Signed
        | DataType::SignedInteger => "INT".to_string(),
        DataType::BigInt(_) | DataType::Int8(_) | DataType::Int64 => "BIGINT".to_string(),
        DataType::SmallInt(_) | DataType::Int2(_) | DataType::Int16 => "SMALLINT".to_string(),
        DataType::TinyInt(_) => "TINYINT".to_string(),
        DataType::Real | DataType::Float4 | DataType::Float32 | DataType::Float(_) => {
            "FLOAT".to_string()
        }
        DataType::Double(_) | DataType::DoublePrecision | DataType::Float8 | DataType::Float64 => {
            "DOUBLE".to_string()
        }
        DataType::Varchar(_)
        | DataType::Nvarchar(_)
        | DataType::Char(_)
        | DataType::Character(_)
        | DataType::CharacterVarying(_)
        | DataType::CharVarying(_)
        | DataType::Text
        | DataType::String(_) => "STRING".to_string(),
        DataType::Bool | DataType::Boolean => "BOOLEAN".to_string(),
        DataType::Bytea | DataType::Binary(_) | DataType::Varbinary(_) | DataType::Blob(_) => {
            "BINARY".to_string()
        }
        DataType::Decimal(info) | DataType::Numeric(info) | DataType::Dec(info) => {
            format!("DECIMAL{info}")
        }
        other => other.to_string().to_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use datafusion::prelude::SessionContext;

    use super::named;

    /// The statement each cast is named in (the session's dialect, generic, quotes with
    /// `"`), and `None` where nothing repeats.
    #[test]
    fn casts_beside_what_they_cast_are_named_as_spark_prints_them() {
        let ctx = SessionContext::new();
        for (statement, expected) in [
            (
                "SELECT d, CAST(d AS DOUBLE) FROM t",
                Some("SELECT d, CAST(d AS DOUBLE) AS \"CAST(d AS DOUBLE)\" FROM t"),
            ),
            (
                "SELECT t.d, TRY_CAST(t.d AS INTEGER), d::varchar FROM t",
                Some(
                    "SELECT t.d, TRY_CAST(t.d AS INTEGER) AS \"TRY_CAST(d AS INT)\", \
                     d::VARCHAR AS \"CAST(d AS STRING)\" FROM t",
                ),
            ),
            (
                "SELECT CAST(CAST(d AS INT) AS DECIMAL(10,2)), CAST(d AS REAL) FROM t",
                Some(
                    "SELECT CAST(CAST(d AS INT) AS DECIMAL(10,2)) AS \
                     \"CAST(CAST(d AS INT) AS DECIMAL(10,2))\", CAST(d AS REAL) AS \
                     \"CAST(d AS FLOAT)\" FROM t",
                ),
            ),
            (
                "SELECT 1, CAST(1 AS BIGINT)",
                Some("SELECT 1, CAST(1 AS BIGINT) AS \"CAST(1 AS BIGINT)\""),
            ),
            (
                "SELECT *, CAST(d AS DATE) FROM t",
                Some("SELECT *, CAST(d AS DATE) AS \"CAST(d AS DATE)\" FROM t"),
            ),
            (
                "INSERT INTO u SELECT d FROM (SELECT d, CAST(d AS DOUBLE) FROM t) s \
                 UNION ALL SELECT CAST(e AS DOUBLE) FROM t",
                Some(
                    "INSERT INTO u SELECT d FROM (SELECT d, CAST(d AS DOUBLE) AS \
                     \"CAST(d AS DOUBLE)\" FROM t) s UNION ALL SELECT CAST(e AS DOUBLE) \
                     FROM t",
                ),
            ),
            ("SELECT CAST(d AS DOUBLE), e FROM t", None),
            ("SELECT d, d FROM t", None),
            ("SELECT d, CAST(d AS DOUBLE) AS dd FROM t", None),
        ] {
            assert_eq!(named(&ctx, statement).as_deref(), expected, "{statement}");
        }
    }
}
