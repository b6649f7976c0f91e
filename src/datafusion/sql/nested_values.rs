//! A `VALUES` list inside the query of an `INSERT` (`INSERT INTO t SELECT b, a FROM
//! (VALUES (7, 2.5)) v(a, b)`, also in a CTE or a subquery) read as a query of its own.
//!
//! DataFusion 55 plans the whole query of an `INSERT` with the target table's columns
//! at hand and plans every `VALUES` in it with them (not only a `VALUES` that is the
//! inserted rows): each value was cast to the type of the table column at its position.
//! Into `t (d DOUBLE, i BIGINT)`, the statement above wrote `d = 2.0` and `i = 7`: `2.5`
//! was cast to `BIGINT` before the `SELECT` moved it into `d`. Where the column counts
//! differ, the statement failed ("Inconsistent data length across values list"). Spark,
//! DuckDB and PostgreSQL type such a `VALUES` by its own rows: `d = 2.5`, `i = 7`.
//!
//! [`plan`] plans each such `VALUES` (the whole query holding it: its `ORDER BY` and
//! `LIMIT` too) on its own, as DataFusion plans a `VALUES` in a `SELECT`, registers the
//! plan as a view in a private catalog of a copy of the session, and plans the `INSERT`
//! reading the views in its place; the views' plans are inlined by DataFusion's
//! analyzer, so the plan runs in the caller's session. A `VALUES` that does not plan on
//! its own (one reading an outer query's columns) leaves the statement to DataFusion.
//! The views are inlined as DataFusion plans the `INSERT` (its plan scans no view).
//!
//! `PREPARE name [(types)] AS INSERT …` is planned the same way (DataFusion kept the
//! `VALUES` typed by the table, so every `EXECUTE` wrote the cast values). A `VALUES`
//! holding a parameter is planned as a prepared query of its own, with the types the
//! statement declares (an undeclared parameter takes the type of the value bound at
//! `EXECUTE`, as in a prepared `SELECT`); its parameters are bound with the statement's.
//! One that does not plan so is refused, rather than typed by the table.

use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::catalog::{MemorySchemaProvider, SchemaProvider};
use datafusion::datasource::ViewTable;
use datafusion::logical_expr::{LogicalPlan, Statement as PlanStatement};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    visit_expressions, Expr, Query, SetExpr, Statement, Value, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::parser::Parser;

use super::metadata_columns::with_private_schema;
use super::tokens::first_word_is;
use crate::error::{Error, Result};

/// The private catalog (and schema) the views are planned from.
const CATALOG: &str = "__icefloe_nested_values";
const SCHEMA: &str = "views";

/// The plan of `sql` when it is an `INSERT` whose query holds a `VALUES` below its top
/// (see the module docs); `None` for any other statement, or when such a `VALUES` does
/// not plan on its own (DataFusion then plans the statement as it is).
///
/// Errors: DataFusion's planning errors of the rewritten `INSERT`.
pub(super) async fn plan(ctx: &SessionContext, sql: &str) -> Result<Option<LogicalPlan>> {
    // a VALUES below the top sits in a query that selects from it (or a CTE of one):
    // a plain `INSERT … VALUES` (as large as it may be) is not parsed again here
    let lower = sql.to_ascii_lowercase();
    if !first_word_is(sql, &["INSERT", "PREPARE"])
        || !lower.contains("values")
        || !lower.contains("select")
    {
        return Ok(None);
    }
    let state = ctx.state();
    let dialect = state.config_options().sql_parser.dialect;
    let Ok(DFStatement::Statement(mut statement)) = state.sql_to_statement(sql, &dialect) else {
        return Ok(None);
    };
    // `PREPARE name [(types)] AS INSERT …` too: its plan is the prepared statement's
    let (insert, prepared) = match statement.as_mut() {
        Statement::Insert(insert) => (insert, None),
        Statement::Prepare {
            statement,
            data_types,
            ..
        } => match statement.as_mut() {
            Statement::Insert(insert) => (insert, Some(data_types.clone())),
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    let Some(source) = insert.source.as_mut() else {
        return Ok(None);
    };
    // the inserted rows themselves (`INSERT … VALUES`) are typed by the table, as meant
    if matches!(source.body.as_ref(), SetExpr::Values(_)) {
        return Ok(None);
    }
    let mut taker = Taker { taken: Vec::new() };
    let _ = source.visit(&mut taker);
    if taker.taken.is_empty() {
        return Ok(None);
    }
    let schema = MemorySchemaProvider::new();
    for (i, query) in taker.taken.into_iter().enumerate() {
        let plan = match &prepared {
            // a parameter of the prepared statement keeps the type the statement
            // declares for it (or none, as in a prepared `SELECT`): the `VALUES` is
            // planned as a prepared query of its own, and its parameters are bound
            // with the statement's at each `EXECUTE`
            Some(data_types) if has_placeholder(&query) => {
                let alone = Statement::Prepare {
                    name: view_name(i).as_str().into(),
                    data_types: data_types.clone(),
                    statement: Box::new(Statement::Query(Box::new(query))),
                };
                match state
                    .statement_to_plan(DFStatement::Statement(Box::new(alone)))
                    .await
                {
                    Ok(LogicalPlan::Statement(PlanStatement::Prepare(p))) => {
                        p.input.as_ref().clone()
                    }
                    _ => return Err(parameter_in_values()),
                }
            }
            _ => {
                let alone = DFStatement::Statement(Box::new(Statement::Query(Box::new(query))));
                let Ok(plan) = state.statement_to_plan(alone).await else {
                    return Ok(None);
                };
                plan
            }
        };
        schema.register_table(view_name(i), Arc::new(ViewTable::new(plan, None)))?;
    }
    let private = with_private_schema(state, CATALOG, SCHEMA, schema)?;
    let planned = private
        .statement_to_plan(DFStatement::Statement(statement.clone()))
        .await;
    match planned {
        Ok(plan) => Ok(Some(plan)),
        // a query whose columns share a name (`SELECT 1, 1 FROM (VALUES (5)) v(x)`):
        // named by position and planned again, as `run_in_datafusion` does without a
        // VALUES
        Err(e) if super::insert_names::is_duplicate_names(&e) => {
            let mut named = statement;
            if !super::insert_names::name_insert_query(ctx, named.as_mut()) {
                return Err(e.into());
            }
            Ok(Some(
                private
                    .statement_to_plan(DFStatement::Statement(named))
                    .await?,
            ))
        }
        Err(e) => Err(e.into()),
    }
}

/// The error for a prepared `INSERT` whose query holds a `VALUES` with a parameter
/// that does not plan as a query of its own: planned with the rest of the statement,
/// DataFusion would type its values by the table's columns at their positions.
fn parameter_in_values() -> Error {
    Error::unsupported(
        "a parameter inside a VALUES list of a prepared INSERT's query, where that VALUES \
         cannot be planned as a query of its own; declare the parameter types \
         (PREPARE name(INT, …) AS …) or select the parameter outside the VALUES",
    )
}

/// Whether `query` holds a parameter (`$1`, `?`).
fn has_placeholder(query: &Query) -> bool {
    visit_expressions(query, |expr| match expr {
        Expr::Value(v) if matches!(v.value, Value::Placeholder(_)) => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

/// The name of the `i`th view.
fn view_name(i: usize) -> String {
    format!("v{i}")
}

/// Takes each query whose body is a `VALUES` (at any depth below the visited query),
/// leaving `SELECT * FROM <its view>` in its place.
struct Taker {
    taken: Vec<Query>,
}

impl VisitorMut for Taker {
    type Break = ();

    fn post_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if !matches!(query.body.as_ref(), SetExpr::Values(_)) {
            return ControlFlow::Continue(());
        }
        let name = view_name(self.taken.len());
        let text = format!("SELECT * FROM \"{CATALOG}\".\"{SCHEMA}\".\"{name}\"");
        let Ok(Statement::Query(reading)) = Parser::new(&GenericDialect {})
            .try_with_sql(&text)
            .and_then(|mut p| p.parse_statement())
        else {
            return ControlFlow::Break(());
        };
        self.taken.push(std::mem::replace(query, *reading));
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use crate::datafusion::sql::tests::{ok, session};

    /// A `VALUES` inside an `INSERT`'s query is typed by its own rows, not by the
    /// table's columns at its positions: in a derived table, a CTE, a subquery, with
    /// fewer columns than the table, under a partition clause; the inserted rows of
    /// `INSERT … VALUES` still take the table's types.
    #[tokio::test]
    async fn values_inside_an_insert_query_are_typed_by_their_rows() {
        let (ctx, _catalog, _dir) = session().await;
        ok(&ctx, "CREATE SCHEMA ns").await;
        ok(&ctx, "CREATE TABLE ns.t (d DOUBLE, i BIGINT)").await;
        // was d = 2.0, i = 7 (2.5 cast to BIGINT first)
        ok(
            &ctx,
            "INSERT INTO ns.t SELECT b, a FROM (VALUES (7, 2.5)) v(a, b)",
        )
        .await;
        ok(
            &ctx,
            "INSERT INTO ns.t WITH w AS (VALUES (8, 3.5)) SELECT column2, column1 FROM w",
        )
        .await;
        ok(
            &ctx,
            "INSERT INTO ns.t SELECT (SELECT max(x) FROM (VALUES (4.5), (1.5)) v(x)), 9",
        )
        .await;
        ok(&ctx, "INSERT INTO ns.t VALUES (1.25, 10)").await;
        assert_eq!(
            ok(&ctx, "SELECT d, i FROM ns.t ORDER BY i").await,
            [["2.5", "7"], ["3.5", "8"], ["4.5", "9"], ["1.25", "10"]]
        );
        ok(
            &ctx,
            "CREATE TABLE ns.p (id INT, s STRING) PARTITIONED BY (s)",
        )
        .await;
        // was 'Inconsistent data length across values list'
        ok(
            &ctx,
            "INSERT INTO ns.p SELECT a, 'x' FROM (VALUES (1), (5)) v(a)",
        )
        .await;
        ok(
            &ctx,
            "INSERT INTO ns.p PARTITION (s = 'y') SELECT * FROM (VALUES (2)) v(a)",
        )
        .await;
        assert_eq!(
            ok(&ctx, "SELECT id, s FROM ns.p ORDER BY id").await,
            [["1", "x"], ["2", "y"], ["5", "x"]]
        );
    }

    /// The same in a prepared `INSERT`: each `EXECUTE` writes the `VALUES` as typed by
    /// its own rows (DataFusion kept it typed by the table: `2.5` written as `2.0`); a
    /// parameter outside the `VALUES` is bound at `EXECUTE`.
    #[tokio::test]
    async fn values_inside_a_prepared_insert_query_are_typed_by_their_rows() {
        let (ctx, _catalog, _dir) = session().await;
        ok(&ctx, "CREATE SCHEMA ns").await;
        ok(&ctx, "CREATE TABLE ns.t (d DOUBLE, i BIGINT)").await;
        ok(
            &ctx,
            "PREPARE p AS INSERT INTO ns.t SELECT b, a FROM (VALUES (7, 2.5)) v(a, b)",
        )
        .await;
        ok(&ctx, "EXECUTE p").await;
        ok(
            &ctx,
            "PREPARE q(BIGINT) AS INSERT INTO ns.t SELECT b, $1 FROM (VALUES (2.75)) v(b)",
        )
        .await;
        ok(&ctx, "EXECUTE q(11)").await;
        ok(&ctx, "EXECUTE p").await;
        assert_eq!(
            ok(&ctx, "SELECT d, i FROM ns.t ORDER BY i, d").await,
            [["2.5", "7"], ["2.5", "7"], ["2.75", "11"]]
        );
    }

    /// A parameter inside such a `VALUES`: the `VALUES` is still typed by its own rows
    /// and the declared parameter types (was: typed by the table's columns at their
    /// positions, `2.5` written as `2` into the `BIGINT` column at its place, so
    /// `b * 2` was 4.0), with the parameters bound at each `EXECUTE`; an undeclared
    /// parameter takes the bound value's type.
    #[tokio::test]
    async fn parameters_inside_values_of_a_prepared_insert_query_keep_their_types() {
        let (ctx, _catalog, _dir) = session().await;
        ok(&ctx, "CREATE SCHEMA ns").await;
        ok(&ctx, "CREATE TABLE ns.t (d DOUBLE, i BIGINT)").await;
        ok(
            &ctx,
            "PREPARE p(BIGINT) AS INSERT INTO ns.t \
             SELECT b * 2, a FROM (VALUES ($1, 2.5), (1, 3.5)) v(a, b)",
        )
        .await;
        ok(&ctx, "EXECUTE p(7)").await;
        ok(
            &ctx,
            "PREPARE q(DOUBLE, BIGINT) AS INSERT INTO ns.t \
             SELECT a + 0.25, $2 FROM (VALUES ($1)) v(a)",
        )
        .await;
        ok(&ctx, "EXECUTE q(2.5, 20)").await;
        ok(
            &ctx,
            "PREPARE r AS INSERT INTO ns.t SELECT b, a FROM (VALUES ($1, $2)) v(a, b)",
        )
        .await;
        ok(&ctx, "EXECUTE r(30, 1.75)").await;
        ok(&ctx, "EXECUTE p(8)").await;
        assert_eq!(
            ok(&ctx, "SELECT d, i FROM ns.t ORDER BY i, d").await,
            [
                ["7.0", "1"],
                ["7.0", "1"],
                ["5.0", "7"],
                ["5.0", "8"],
                ["2.75", "20"],
                ["1.75", "30"]
            ]
        );
    }
}
