//! Scalar subqueries in `VALUES` rows (`INSERT INTO t VALUES (1, (SELECT max(id) FROM
//! s))`, `SELECT * FROM (VALUES ((SELECT 2)))`), which Spark, DuckDB and PostgreSQL
//! evaluate and DataFusion 55 cannot run: its optimizer turns scalar subqueries into joins
//! only in projections and filters, so one left in a `VALUES` row reached execution and
//! failed with an internal error ("ScalarSubqueryExpr evaluated before the subquery was
//! executed").
//!
//! [`ValuesScalarSubqueries`] (an analyzer rule) writes such a `VALUES` as the rows it
//! means: each row a projection of one row (`SELECT e1 AS column1, e2 AS column2`), the
//! rows a `UNION ALL` in their order, each value cast to the type `VALUES` gave its
//! column. The optimizer then plans each subquery as it plans one in a `SELECT` list. A
//! `VALUES` without a subquery is left as it is.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::Result as DFResult;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, LogicalPlanBuilder, Values};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

/// The rule's name in the session's analyzer.
pub const VALUES_SCALAR_SUBQUERIES_RULE: &str = "icefloe_values_scalar_subqueries";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct ValuesScalarSubqueries;

/// Add [`ValuesScalarSubqueries`] to `ctx`'s analyzer (after DataFusion's rules, so after
/// type coercion), once: a second call does nothing.
pub fn install_values_subqueries_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(ValuesScalarSubqueries));
}

impl AnalyzerRule for ValuesScalarSubqueries {
    fn name(&self) -> &str {
        VALUES_SCALAR_SUBQUERIES_RULE
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Values(values) if holds_subquery(&values) => {
                Ok(Transformed::yes(as_projections(values)?))
            }
            other => Ok(Transformed::no(other)),
        })
        .map(|t| t.data)
    }
}

/// Whether a value of `values` holds a scalar subquery.
fn holds_subquery(values: &Values) -> bool {
    values.values.iter().flatten().any(|e| {
        let mut found = false;
        let _ = e.apply(|e| {
            found = matches!(e, Expr::ScalarSubquery(_));
            Ok(match found {
                true => TreeNodeRecursion::Stop,
                false => TreeNodeRecursion::Continue,
            })
        });
        found
    })
}

/// `values` as a `UNION ALL` of one-row projections, each value cast to its column's type
/// and named as its column.
fn as_projections(values: Values) -> DFResult<LogicalPlan> {
    let Values { schema, values } = values;
    let mut rows = values.into_iter().map(|row| {
        let empty = LogicalPlanBuilder::empty(true).build()?;
        let exprs = row
            .into_iter()
            .zip(schema.fields())
            .map(|(e, field)| {
                let typed = match e.get_type(empty.schema())? == *field.data_type() {
                    true => e,
                    false => e.cast_to(field.data_type(), empty.schema())?,
                };
                Ok(typed.alias(field.name()))
            })
            .collect::<DFResult<Vec<_>>>()?;
        LogicalPlanBuilder::from(empty).project(exprs)
    });
    let mut plan = match rows.next() {
        Some(first) => first?,
        None => return LogicalPlanBuilder::empty(false).build(),
    };
    for row in rows {
        plan = plan.union(row?.build()?)?;
    }
    plan.build()
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::prelude::SessionContext;

    use super::*;

    async fn run(ctx: &SessionContext, sql: &str) -> Result<String, String> {
        let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
        let batches = df.collect().await.map_err(|e| e.to_string())?;
        Ok(pretty_format_batches(&batches)
            .map_err(|e| e.to_string())?
            .to_string())
    }

    /// Scalar subqueries in `VALUES` rows give their values, in the columns' types, rows
    /// in order; one of more than one row is an error, as in a `SELECT` list; a `VALUES`
    /// without one is not rewritten.
    #[tokio::test]
    async fn values_rows_run_their_scalar_subqueries() {
        let ctx = SessionContext::new();
        install_values_subqueries_rule(&ctx);
        run(&ctx, "CREATE TABLE s (k INT) AS VALUES (1), (5), (3)")
            .await
            .expect("table");
        let rows = run(
            &ctx,
            "SELECT column1, column2, arrow_typeof(column2) AS t FROM (VALUES \
             (1, (SELECT max(k) FROM s)), (2, (SELECT min(k) FROM s) + 0.5), (3, NULL))",
        )
        .await
        .expect("values");
        assert_eq!(
            rows,
            "+---------+---------+---------+\n\
             | column1 | column2 | t       |\n\
             +---------+---------+---------+\n\
             | 1       | 5.0     | Float64 |\n\
             | 2       | 1.5     | Float64 |\n\
             | 3       |         | Float64 |\n\
             +---------+---------+---------+"
        );
        let e = run(&ctx, "SELECT * FROM (VALUES ((SELECT k FROM s)))")
            .await
            .expect_err("three rows");
        assert!(e.contains("more than one row"), "{e}");
        let plan = ctx
            .sql("SELECT * FROM (VALUES (1), (2))")
            .await
            .expect("plain")
            .into_optimized_plan()
            .expect("plan");
        assert!(
            format!("{plan}").contains("Values: (Int64(1)), (Int64(2))"),
            "{plan}"
        );
    }
}
