//! `x [NOT] IN (subquery)` with SQL's three values wherever its NULL counts, as Spark
//! evaluates it.
//!
//! SQL (and Spark): `x IN (S)` is TRUE when `x` equals a value of `S`; otherwise FALSE
//! when `S` is empty, NULL when `x` is NULL or `S` holds a NULL, FALSE else. DataFusion 55
//! plans an `IN (subquery)` that is not a conjunct of its own in a `WHERE`/`HAVING` as a
//! mark join, whose mark is never NULL: it answers FALSE where SQL answers NULL. Where
//! only TRUE passes a filter (a conjunct, or under `AND`/`OR` alone) the two agree, but
//! under `NOT`, `IS [NOT] NULL`, `CASE`, a comparison or any function they do not: with
//! `S` = {1, NULL, 7}, `WHERE x NOT IN (S) OR id = 4` returned the rows whose `x` is 2 or
//! NULL (SQL: none of them, `NOT NULL` is NULL), and `WHERE (x IN (S)) IS NULL` no row.
//!
//! [`NullAwareInSubquery`] (an analyzer rule) rewrites each such `x IN (S)` in a filter
//! into the same three-valued answer built from tests whose FALSE and NULL agree:
//!
//! ```text
//! CASE WHEN x IN (S)                 THEN TRUE
//!      WHEN NOT EXISTS (S)           THEN FALSE
//!      WHEN x IS NULL                THEN NULL
//!      WHEN EXISTS (S WHERE k IS NULL) THEN NULL
//!      ELSE FALSE END
//! ```
//!
//! (`NOT IN` is `NOT` of it). Correlated subqueries are rewritten the same way (`S`
//! keeps its outer references). An `IN` that is a conjunct of its own (DataFusion's semi
//! join and null-aware anti join, which are right), or not negated and under `AND`/`OR`
//! alone, is left as it is, as is one whose `x` is volatile (`random()`: it would be
//! evaluated more than once); but a correlated `NOT IN` conjunct is rewritten too, as
//! DataFusion 55's null-aware anti join takes a single key and failed to plan it ("only
//! supports single column join key"), in a `SELECT` and so in a `DELETE`/`UPDATE`.
//! `EXISTS` is never NULL and needs nothing.
//!
//! A subquery that is one aggregate row (an aggregate without `GROUP BY`, under
//! projections alone: `SELECT max(k) FROM s WHERE s.g = t.g`) returns exactly one row,
//! on no input too; with a `HAVING` it returns that row or none. DataFusion 55
//! decorrelates `[NOT] EXISTS` and `IN` of such a correlated subquery into joins that
//! find no row where no row of `s` matches (`NOT EXISTS` was TRUE there, `IN (SELECT
//! count(*) …)` never matched its 0; SQL, Spark and DuckDB: FALSE and a match), and failed
//! to plan a correlated `IN` of one whose value is not aliased under `NOT`/`OR`
//! ("Projections require unique expression names"). So `x [NOT] IN (S)` of such an `S` is
//! written `[NOT] (x = (S))`, `[NOT] EXISTS (S)` TRUE (FALSE), and with a `HAVING` `h`
//! `[NOT] ((SELECT h …) IS TRUE AND x = (S without h))` and `[NOT] (SELECT h …) IS TRUE`:
//! scalar subqueries, which DataFusion decorrelates with the aggregates' values on no row.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::{Exists, InSubquery};
use datafusion::logical_expr::utils::{conjunction, split_conjunction};
use datafusion::logical_expr::{
    lit, when, BinaryExpr, Expr, Filter, LogicalPlan, LogicalPlanBuilder, Operator, Subquery,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

/// The rule's name in the session's analyzer.
pub const NULL_AWARE_IN_SUBQUERY_RULE: &str = "icefloe_null_aware_in_subquery";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct NullAwareInSubquery;

/// Add [`NullAwareInSubquery`] to `ctx`'s analyzer (after DataFusion's rules, so after
/// type coercion), once: a second call does nothing.
pub fn install_null_aware_in_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(NullAwareInSubquery));
}

impl AnalyzerRule for NullAwareInSubquery {
    fn name(&self) -> &str {
        NULL_AWARE_IN_SUBQUERY_RULE
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| match node {
            LogicalPlan::Filter(filter) => filter_rewritten(filter),
            other => Ok(Transformed::no(other)),
        })
        .map(|t| t.data)
    }
}

/// Where an expression stands in a filter's predicate.
#[derive(Clone, Copy, PartialEq)]
enum Position {
    /// a conjunct of its own
    Conjunct,
    /// under `AND`/`OR` alone: its FALSE and NULL filter alike
    Monotone,
    /// anywhere else: its NULL counts
    Counts,
}

fn filter_rewritten(filter: Filter) -> DFResult<Transformed<LogicalPlan>> {
    let mut changed = false;
    let conjuncts = split_conjunction(&filter.predicate)
        .into_iter()
        .map(|c| {
            let t = rewritten(c.clone(), Position::Conjunct)?;
            changed |= t.transformed;
            Ok(t.data)
        })
        .collect::<DFResult<Vec<_>>>()?;
    if !changed {
        return Ok(Transformed::no(LogicalPlan::Filter(filter)));
    }
    let predicate = conjunction(conjuncts).unwrap_or_else(|| lit(true));
    let plan = Filter::try_new(predicate, filter.input)?;
    Ok(Transformed::yes(LogicalPlan::Filter(plan)))
}

/// `expr` at `position` with each `IN (subquery)` whose NULL counts made three-valued.
fn rewritten(expr: Expr, position: Position) -> DFResult<Transformed<Expr>> {
    match expr {
        Expr::InSubquery(in_subquery) => {
            if let Some(single) = AggregateRow::of(&in_subquery.subquery)? {
                return Ok(Transformed::yes(single.in_subquery(in_subquery)?));
            }
            in_rewritten(in_subquery, position)
        }
        Expr::Exists(exists) => match AggregateRow::of(&exists.subquery)? {
            Some(single) => Ok(Transformed::yes(single.exists(exists.negated)?)),
            None => Ok(Transformed::no(Expr::Exists(exists))),
        },
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if matches!(op, Operator::And | Operator::Or) =>
        {
            let below = match position {
                Position::Counts => Position::Counts,
                _ => Position::Monotone,
            };
            let l = rewritten(*left, below)?;
            let r = rewritten(*right, below)?;
            let transformed = l.transformed || r.transformed;
            let expr = Expr::BinaryExpr(BinaryExpr::new(Box::new(l.data), op, Box::new(r.data)));
            Ok(Transformed::new_transformed(expr, transformed))
        }
        // a subquery's own filters are rewritten as plans of their own
        Expr::ScalarSubquery(_) => Ok(Transformed::no(expr)),
        other => other.map_children(|child| rewritten(child, Position::Counts)),
    }
}

/// An `IN (subquery)` that is not one aggregate row, at `position`.
fn in_rewritten(in_subquery: InSubquery, position: Position) -> DFResult<Transformed<Expr>> {
    // DataFusion 55 plans a conjunct `NOT IN` as a null-aware anti join, which
    // takes one join key: a correlated one (a second key) failed to plan
    let correlated_not_in =
        in_subquery.negated && !in_subquery.subquery.outer_ref_columns.is_empty();
    let safe = (position == Position::Conjunct && !correlated_not_in)
        || (position == Position::Monotone && !in_subquery.negated)
        || in_subquery.expr.is_volatile();
    if safe {
        return Ok(Transformed::no(Expr::InSubquery(in_subquery)));
    }
    three_valued(in_subquery).map(Transformed::yes)
}

/// A `HAVING` predicate and the aggregate (without grouping) it filters.
type Having = (Expr, LogicalPlan);

/// A subquery that is an aggregate without grouping under projections and aliases
/// alone: one row, or with `HAVING` (a filter right above the aggregate) one row or none.
struct AggregateRow {
    /// The subquery without its `HAVING`: always its one row.
    value: Subquery,
    /// `HAVING` as a one-row subquery: whether the row is there.
    having: Option<Subquery>,
}

impl AggregateRow {
    /// `subquery` as an [`AggregateRow`], if it is one.
    fn of(subquery: &Subquery) -> DFResult<Option<Self>> {
        let Some((value, having)) = Self::without_having(subquery.subquery.as_ref())? else {
            return Ok(None);
        };
        let with = |plan: LogicalPlan| Subquery {
            subquery: Arc::new(plan),
            outer_ref_columns: subquery.outer_ref_columns.clone(),
            spans: subquery.spans.clone(),
        };
        let having = match having {
            Some((predicate, aggregate)) => Some(with(
                LogicalPlanBuilder::from(aggregate)
                    .project(vec![predicate.alias("__icefloe_having")])?
                    .build()?,
            )),
            None => None,
        };
        Ok(Some(Self {
            value: with(value),
            having,
        }))
    }

    /// `plan` without its `HAVING`, and the `HAVING` with the aggregate it filters.
    fn without_having(plan: &LogicalPlan) -> DFResult<Option<(LogicalPlan, Option<Having>)>> {
        let no_grouping =
            |p: &LogicalPlan| matches!(p, LogicalPlan::Aggregate(a) if a.group_expr.is_empty());
        Ok(match plan {
            LogicalPlan::Aggregate(_) if no_grouping(plan) => Some((plan.clone(), None)),
            LogicalPlan::Filter(f) if no_grouping(&f.input) => {
                let aggregate = f.input.as_ref().clone();
                Some((aggregate.clone(), Some((f.predicate.clone(), aggregate))))
            }
            LogicalPlan::Projection(_) | LogicalPlan::SubqueryAlias(_) => {
                let [input] = plan.inputs()[..] else {
                    return Ok(None);
                };
                match Self::without_having(input)? {
                    Some((inner, having)) => Some((
                        plan.with_new_exprs(plan.expressions(), vec![inner])?,
                        having,
                    )),
                    None => None,
                }
            }
            _ => None,
        })
    }

    /// Whether the row is there: TRUE, or `HAVING` is TRUE (never NULL).
    fn present(&self) -> Option<Expr> {
        self.having
            .as_ref()
            .map(|h| Expr::ScalarSubquery(h.clone()).is_true())
    }

    /// `[NOT] EXISTS` of it.
    fn exists(self, negated: bool) -> DFResult<Expr> {
        let present = self.present().unwrap_or_else(|| lit(true));
        Ok(if negated { !present } else { present })
    }

    /// `x [NOT] IN` it: `x = (S)` when the row is there, else FALSE.
    fn in_subquery(self, in_subquery: InSubquery) -> DFResult<Expr> {
        let equal = Expr::BinaryExpr(BinaryExpr::new(
            in_subquery.expr,
            Operator::Eq,
            Box::new(Expr::ScalarSubquery(self.value.clone())),
        ));
        let answer = match self.present() {
            Some(present) => present.and(equal),
            None => equal,
        };
        Ok(if in_subquery.negated { !answer } else { answer })
    }
}

/// The `CASE` of the module docs for `x [NOT] IN (S)`.
fn three_valued(in_subquery: InSubquery) -> DFResult<Expr> {
    let InSubquery {
        expr,
        subquery,
        negated,
    } = in_subquery;
    let plain = Expr::InSubquery(InSubquery::new(expr.clone(), subquery.clone(), false));
    let exists = |s: Subquery, negated: bool| Expr::Exists(Exists::new(s, negated));
    let with_nulls = {
        let schema = subquery.subquery.schema();
        let (qualifier, field) = schema.qualified_field(0);
        let k = Expr::Column(Column::new(qualifier.cloned(), field.name()));
        let plan = LogicalPlanBuilder::from(subquery.subquery.as_ref().clone())
            .filter(k.is_null())?
            .build()?;
        Subquery {
            subquery: Arc::new(plan),
            outer_ref_columns: subquery.outer_ref_columns.clone(),
            spans: subquery.spans.clone(),
        }
    };
    let null = lit(ScalarValue::Boolean(None));
    let answer = when(plain, lit(true))
        .when(exists(subquery, true), lit(false))
        .when(expr.is_null(), null.clone())
        .when(exists(with_nulls, false), null)
        .otherwise(lit(false))?;
    Ok(if negated { !answer } else { answer })
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{AsArray, RecordBatch};
    use datafusion::arrow::datatypes::Int64Type;
    use datafusion::prelude::SessionContext;

    use super::install_null_aware_in_rule;

    /// `t(id, x)` = (1, 1), (2, 2), (3, NULL), (4, 5); `o(k)` = 1, NULL, 7; `e(k)` empty.
    async fn session(rule: bool) -> SessionContext {
        let ctx = SessionContext::new();
        if rule {
            install_null_aware_in_rule(&ctx);
            install_null_aware_in_rule(&ctx);
        }
        for sql in [
            "CREATE VIEW t AS SELECT CAST(column1 AS BIGINT) AS id, CAST(column2 AS BIGINT) AS x \
             FROM (VALUES (1, 1), (2, 2), (3, NULL), (4, 5))",
            "CREATE VIEW o AS SELECT CAST(column1 AS BIGINT) AS k FROM (VALUES (1), (NULL), (7))",
            "CREATE VIEW e AS SELECT k FROM o WHERE k > 100",
        ] {
            ctx.sql(sql)
                .await
                .expect("view")
                .collect()
                .await
                .expect("view");
        }
        ctx
    }

    /// The ids `condition` selects, or the error of planning or running it.
    async fn ids(ctx: &SessionContext, condition: &str) -> Result<Vec<i64>, String> {
        let sql = format!("SELECT id FROM t WHERE {condition} ORDER BY id");
        let df = ctx.sql(&sql).await.map_err(|e| e.to_string())?;
        let batches: Vec<RecordBatch> = df.collect().await.map_err(|e| e.to_string())?;
        Ok(batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect())
    }

    /// Each condition with the ids SQL's three-valued `IN` selects (Spark's and DuckDB's
    /// rows); `wrong` marks the ones DataFusion 55 answered otherwise (or failed to plan)
    /// without the rule.
    const CASES: &[(&str, &[i64], bool)] = &[
        ("x NOT IN (SELECT k FROM o) OR id = 4", &[4], true),
        ("(x IN (SELECT k FROM o)) IS NULL", &[2, 3, 4], true),
        (
            "x NOT IN (SELECT k FROM o WHERE o.k <> t.id OR o.k IS NULL) OR id = 4",
            &[4],
            true,
        ),
        ("x NOT IN (SELECT k FROM e) OR id = 4", &[1, 2, 3, 4], false),
        // a correlated NOT IN conjunct: id 1's S is {1}, id 2's {NULL}, the others' empty
        (
            "x NOT IN (SELECT k FROM o WHERE o.k = t.id OR (o.k IS NULL AND t.id = 2))",
            &[3, 4],
            true,
        ),
        (
            "x NOT IN (SELECT k FROM o WHERE o.k = t.id + 6) AND id > 1",
            &[2, 3, 4],
            true,
        ),
        ("(x IN (SELECT k FROM e)) IS NULL", &[], false),
        (
            "x NOT IN (SELECT k FROM o WHERE k IS NOT NULL) OR id = 1",
            &[1, 2, 4],
            true,
        ),
        // a one-row (aggregate) subquery: id 1's S is {7}, the others' {NULL}; DataFusion
        // 55 found no row for `NOT EXISTS` where no `o` row matched (ids 2-4 passed it)
        (
            "x NOT IN (SELECT max(k) AS m FROM o WHERE o.k = t.x + 6)",
            &[1],
            true,
        ),
        (
            "x NOT IN (SELECT max(k) FROM o WHERE o.k = t.x + 6)",
            &[1],
            true,
        ),
        (
            "NOT EXISTS (SELECT max(k) FROM o WHERE o.k = t.id)",
            &[],
            true,
        ),
        (
            "EXISTS (SELECT count(*) FROM o WHERE o.k = t.id) AND id < 4",
            &[1, 2, 3],
            true,
        ),
        (
            "x IN (SELECT max(k) FROM o WHERE o.k = t.x) OR id = 4",
            &[1, 4],
            true,
        ),
        // the COUNT of no row is 0: id 2's x - 2 (DataFusion 55's semi join found none)
        (
            "x - 2 IN (SELECT count(*) FROM o WHERE o.k = t.x + 6)",
            &[2],
            true,
        ),
        (
            "(x - 2 NOT IN (SELECT count(k) FROM o WHERE o.k = t.x + 6)) IS NULL",
            &[3],
            true,
        ),
        // HAVING: one row or none (S is {7} for id 1, else empty)
        (
            "x NOT IN (SELECT max(k) AS m FROM o WHERE o.k = t.x + 6 HAVING max(k) > 0)",
            &[1, 2, 3, 4],
            true,
        ),
        // S is {0} where no `o` row matches (ids 2-4), empty for id 1
        (
            "NOT EXISTS (SELECT count(*) FROM o WHERE o.k = t.id HAVING count(*) = 0)",
            &[1],
            true,
        ),
        (
            "x - 2 NOT IN (SELECT count(*) FROM o WHERE o.k = t.x + 6 HAVING count(*) = 0)",
            &[1, 4],
            true,
        ),
        (
            "x - 2 IN (SELECT count(*) FROM o WHERE o.k = t.x + 6 HAVING count(*) = 0)",
            &[2],
            true,
        ),
        // right without the rule, and left as they are
        ("x NOT IN (SELECT k FROM o)", &[], false),
        ("x IN (SELECT k FROM o) OR id = 4", &[1, 4], false),
        ("(x IN (SELECT k FROM o)) IS NOT TRUE", &[2, 3, 4], false),
        ("NOT (x IN (SELECT k FROM o) OR id = 9)", &[], false),
        ("x IN (SELECT k FROM o) AND id < 3", &[1], false),
    ];

    #[tokio::test]
    async fn in_subqueries_answer_null_where_sql_does() {
        let ctx = session(true).await;
        for (condition, expected, _) in CASES {
            assert_eq!(
                ids(&ctx, condition).await.as_deref(),
                Ok(*expected),
                "{condition}"
            );
        }
    }

    /// `sql::execute` (and so the CLI) installs the rule.
    #[tokio::test]
    async fn sql_execute_answers_them_as_sql_does() {
        let ctx = session(false).await;
        for (condition, expected, _) in CASES {
            let sql = format!("SELECT id FROM t WHERE {condition} ORDER BY id");
            let batches = crate::datafusion::sql::execute(&ctx, &sql)
                .await
                .expect("plan")
                .collect()
                .await
                .expect("run");
            let got: Vec<i64> = batches
                .iter()
                .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
                .collect();
            assert_eq!(&got, expected, "{condition}");
        }
    }

    /// The rule is what makes the difference (this fails once DataFusion answers these
    /// right by itself: then the rule can go).
    #[tokio::test]
    async fn without_the_rule_datafusion_55_answers_them_wrong() {
        let ctx = session(false).await;
        for (condition, expected, wrong) in CASES {
            let got = ids(&ctx, condition).await;
            assert_eq!(
                got.as_deref() != Ok(*expected),
                *wrong,
                "{condition}: {got:?}"
            );
        }
    }
}
