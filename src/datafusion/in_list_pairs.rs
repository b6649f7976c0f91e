//! Two `IN` lists of one value joined by `AND` / `OR`, with SQL's three values kept.
//!
//! DataFusion 55's expression simplifier merges `x [NOT] IN (A) AND x [NOT] IN (B)` and
//! `x NOT IN (A) OR x NOT IN (B)` by set algebra on the lists' expressions: the
//! intersection, union or difference of `A` and `B`. Two of its answers are wrong in SQL
//! (and Spark):
//!
//! - when the merged list is empty it answers the constant FALSE (`x IN (1, 2) AND x IN
//!   (3)`, `x IN (1) AND x NOT IN (1, 2)`) or TRUE (`x NOT IN (1) OR x NOT IN (2, 3)`), but
//!   for a NULL `x` both sides are NULL, and so is the answer: `WHERE x NOT IN (1) OR x NOT
//!   IN (2, 3)` returned the rows whose `x` is NULL, and a `DELETE` with it deleted them;
//! - it compares list elements as expressions, not values: `x IN (y) AND x IN (z)` was
//!   FALSE even where `x = y = z`, and a NULL element (`x IN (1, NULL) AND x IN (2)`) was
//!   taken for a value.
//!
//! [`NullSafeInListPairs`] (an analyzer rule, so before the optimizer's simplifier) finds
//! each such pair on one non-volatile value — as `IN` lists, `NOT` of them, or the `x = 1
//! OR x = 2` chains the simplifier folds into lists — and leaves the simplifier nothing it
//! would merge wrongly:
//!
//! - lists of non-NULL literals whose merge is empty become `x IS NULL AND NULL` (for
//!   FALSE: NULL when `x` is NULL, else FALSE) or `x IS NOT NULL OR NULL` (for TRUE);
//!   a non-empty merge is right and is left to the simplifier;
//! - a list holding any other element (a column, an expression, a NULL) becomes the
//!   comparisons it stands for: `x = e1 OR x = e2 …`, or `x <> e1 AND x <> e2 …` for `NOT
//!   IN`, which SQL defines it as, and which the simplifier does not fold back into a list
//!   (it folds only comparisons of a column with a literal).
//!
//! Upstream: apache/datafusion#24258 ("preserve null semantics in expression
//! simplification") fixes the first; remove this rule with it.

use std::collections::HashSet;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::{BinaryExpr, Expr, LogicalPlan, Operator};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

/// The rule's name in the session's analyzer.
pub const IN_LIST_PAIRS_RULE: &str = "icefloe_null_safe_in_list_pairs";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct NullSafeInListPairs;

/// Add [`NullSafeInListPairs`] to `ctx`'s analyzer (after DataFusion's rules, so after
/// type coercion: the lists' literals have the value's type), once.
pub fn install_in_list_pairs_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(NullSafeInListPairs));
}

impl AnalyzerRule for NullSafeInListPairs {
    fn name(&self) -> &str {
        IN_LIST_PAIRS_RULE
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        super::analyzer_rules::rewrite_every_expression(plan, &|e, _schema| {
            e.transform_up(pair_rewritten)
        })
    }
}

/// An `IN` list as the simplifier will see it: `expr [NOT] IN (list)`.
struct ListView {
    expr: Expr,
    list: Vec<Expr>,
    negated: bool,
}

/// `e` as the simplifier's `IN` list: a list, `NOT` of one, or an `OR` chain of a column's
/// comparisons with literals (which it folds into a list before it sees their parent).
fn as_list(e: &Expr) -> Option<ListView> {
    match e {
        Expr::InList(l) => Some(ListView {
            expr: l.expr.as_ref().clone(),
            list: l.list.clone(),
            negated: l.negated,
        }),
        Expr::Not(inner) => as_list(inner).map(|v| ListView {
            negated: !v.negated,
            ..v
        }),
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Or,
            right,
        }) => {
            let (l, r) = (as_list(left)?, as_list(right)?);
            let column = matches!(l.expr, Expr::Column(_));
            (column && l.expr == r.expr && !l.negated && !r.negated).then(|| ListView {
                list: l.list.into_iter().chain(r.list).collect(),
                ..l
            })
        }
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Eq,
            right,
        }) => match (left.as_ref(), right.as_ref()) {
            (c @ Expr::Column(_), v @ Expr::Literal(..))
            | (v @ Expr::Literal(..), c @ Expr::Column(_)) => Some(ListView {
                expr: c.clone(),
                list: vec![v.clone()],
                negated: false,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// Whether every element of `list` is a literal other than NULL.
fn non_null_literals(list: &[Expr]) -> bool {
    list.iter()
        .all(|e| matches!(e, Expr::Literal(v, _) if !v.is_null()))
}

/// `e` rewritten as the module docs say when it is a pair the simplifier would merge.
fn pair_rewritten(e: Expr) -> DFResult<Transformed<Expr>> {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = &e else {
        return Ok(Transformed::no(e));
    };
    if !matches!(op, Operator::And | Operator::Or) {
        return Ok(Transformed::no(e));
    }
    let (Some(l), Some(r)) = (as_list(left), as_list(right)) else {
        return Ok(Transformed::no(e));
    };
    // the simplifier merges every `AND` pair, and `OR` pairs of two `NOT IN`s (two `IN`s
    // it unites, which is right)
    let merged = l.expr == r.expr && (*op == Operator::And || (l.negated && r.negated));
    if !merged || l.expr.is_volatile() {
        return Ok(Transformed::no(e));
    }
    if !(non_null_literals(&l.list) && non_null_literals(&r.list)) {
        let (left, right) = (comparisons(*left.clone()), comparisons(*right.clone()));
        return Ok(Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
            Box::new(left),
            *op,
            Box::new(right),
        ))));
    }
    #[allow(clippy::mutable_key_type)] // literals: no interior mutability
    let (a, b): (HashSet<&Expr>, HashSet<&Expr>) =
        (l.list.iter().collect(), r.list.iter().collect());
    let empty = match (op, l.negated, r.negated) {
        // intersection
        (Operator::And, false, false) | (Operator::Or, true, true) => a.is_disjoint(&b),
        // difference: the `IN` list less the `NOT IN` one
        (Operator::And, false, true) => a.is_subset(&b),
        (Operator::And, true, false) => b.is_subset(&a),
        // union of two non-empty lists
        _ => false,
    };
    if !empty {
        return Ok(Transformed::no(e));
    }
    let null = Expr::Literal(ScalarValue::Boolean(None), None);
    let x = l.expr;
    Ok(Transformed::yes(if *op == Operator::And {
        // FALSE, NULL for a NULL value
        x.is_null().and(null)
    } else {
        // TRUE, NULL for a NULL value
        x.is_not_null().or(null)
    }))
}

/// `e` with each `IN` list in it (under `NOT` too) as the comparisons it stands for.
fn comparisons(e: Expr) -> Expr {
    match e {
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) => {
            let (op, join) = if negated {
                (Operator::NotEq, Operator::And)
            } else {
                (Operator::Eq, Operator::Or)
            };
            list.into_iter()
                .map(|v| Expr::BinaryExpr(BinaryExpr::new(expr.clone(), op, Box::new(v))))
                .reduce(|a, b| Expr::BinaryExpr(BinaryExpr::new(Box::new(a), join, Box::new(b))))
                // an empty list (SQL has none): the simplifier's own answer
                .unwrap_or(Expr::Literal(ScalarValue::Boolean(Some(negated)), None))
        }
        Expr::Not(inner) => Expr::Not(Box::new(comparisons(*inner))),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{AsArray, RecordBatch};
    use datafusion::arrow::datatypes::Int64Type;
    use datafusion::prelude::SessionContext;

    use super::install_in_list_pairs_rule;

    /// `t(id, x, y)` = (1, 1, 1), (2, 2, 2), (3, NULL, 3), (4, 5, NULL).
    async fn session(rule: bool) -> SessionContext {
        let ctx = SessionContext::new();
        if rule {
            install_in_list_pairs_rule(&ctx);
            install_in_list_pairs_rule(&ctx);
        }
        let sql = "CREATE VIEW t AS SELECT CAST(column1 AS BIGINT) AS id, \
                   CAST(column2 AS BIGINT) AS x, CAST(column3 AS BIGINT) AS y \
                   FROM (VALUES (1, 1, 1), (2, 2, 2), (3, NULL, 3), (4, 5, NULL))";
        ctx.sql(sql)
            .await
            .expect("view")
            .collect()
            .await
            .expect("view");
        ctx
    }

    /// The ids `condition` selects.
    async fn ids(ctx: &SessionContext, condition: &str) -> Vec<i64> {
        let sql = format!("SELECT id FROM t WHERE {condition} ORDER BY id");
        let batches: Vec<RecordBatch> = ctx
            .sql(&sql)
            .await
            .expect("plan")
            .collect()
            .await
            .expect("run");
        batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect()
    }

    /// Each condition with the ids SQL's three values select (Spark's and DuckDB's rows;
    /// a NULL `x` makes every `IN` of it NULL); `wrong` marks the ones DataFusion 55
    /// answered otherwise without the rule.
    const CASES: &[(&str, &[i64], bool)] = &[
        ("x NOT IN (1) OR x NOT IN (2, 3)", &[1, 2, 4], true),
        ("NOT (x IN (1, 2) AND x IN (3))", &[1, 2, 4], true),
        ("NOT (x IN (1) AND x NOT IN (1, 2))", &[1, 2, 4], true),
        ("NOT (x NOT IN (1, 2) AND x IN (1))", &[1, 2, 4], true),
        (
            "NOT ((x = 1 OR x = 2) AND (x = 3 OR x = 5))",
            &[1, 2, 4],
            true,
        ),
        ("(x IN (1, 2) AND x IN (3)) IS NULL", &[3], true),
        // elements compared as values, not expressions: x = y for ids 1 and 2
        ("x IN (y) AND x IN (id)", &[1, 2], true),
        ("NOT (x IN (y) AND x IN (5))", &[1, 2], true),
        ("x IN (1, NULL) AND x IN (2)", &[], false),
        ("NOT (x IN (1, NULL) AND x IN (2))", &[1, 4], true),
        // right without the rule, and left as they are
        ("x IN (1, 2) AND x IN (2, 5)", &[2], false),
        ("x NOT IN (1) AND x NOT IN (2)", &[4], false),
        ("x IN (1) OR x IN (5)", &[1, 4], false),
        ("x NOT IN (1, 2) OR x NOT IN (2, 5)", &[1, 4], false),
    ];

    #[tokio::test]
    async fn in_list_pairs_answer_null_where_sql_does() {
        let ctx = session(true).await;
        for (condition, expected, _) in CASES {
            assert_eq!(ids(&ctx, condition).await, *expected, "{condition}");
        }
    }

    /// `sql::execute` (and so the CLI and DML) installs the rule.
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
            assert_eq!(got != *expected, *wrong, "{condition}: {got:?}");
        }
    }
}
