//! A clear error for `x IN (subquery)` and `EXISTS (subquery)` used as a value.
//!
//! DataFusion 55 turns these into joins only where they are conditions: a `WHERE` or
//! `HAVING` (and what its optimizer moves into one, such as an inner join's `ON`). Used
//! as a value (`SELECT k, k IN (SELECT …) AS f`, `count(*) FILTER (WHERE EXISTS …)`, an
//! outer join's `ON`, an `INSERT … SELECT` of one) they stay in the optimized plan, and
//! physical planning then failed with "Physical plan does not support logical expression
//! InSubquery(InSubquery { expr: Column(…) … })", a dump of DataFusion's structures.
//! [`check`] finds such a statement before it runs and refuses it, naming what is not
//! supported and how to write it. (`UPDATE … SET` values and `DELETE` conditions are
//! planned by icefloe's row-level path, which computes them; see `dml`.)

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{Expr, LogicalPlan, WriteOp};
use datafusion::prelude::SessionContext;

use crate::error::{Error, Result};

/// Whether `expr` holds an `IN (subquery)` or `EXISTS` (not inside a subquery of its own).
fn holds_subquery_test(expr: &Expr) -> bool {
    expr.exists(|e| Ok(matches!(e, Expr::InSubquery(_) | Expr::Exists(_))))
        .unwrap_or(false)
}

/// Whether a node of `plan` or of its subqueries, other than a `Filter` when
/// `except_filters`, holds an `IN (subquery)` or `EXISTS`. A table scan's filters are
/// not looked at: they are copies pushed down for pruning (DataFusion keeps the condition
/// above the scan, where it is turned into a join), which the scan may ignore.
fn found(plan: &LogicalPlan, except_filters: bool) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        if matches!(node, LogicalPlan::TableScan(_))
            || (except_filters && matches!(node, LogicalPlan::Filter(_)))
        {
            return Ok(TreeNodeRecursion::Continue);
        }
        node.apply_expressions(|e| {
            found |= holds_subquery_test(e);
            Ok(match found {
                true => TreeNodeRecursion::Stop,
                false => TreeNodeRecursion::Continue,
            })
        })?;
        Ok(match found {
            true => TreeNodeRecursion::Stop,
            false => TreeNodeRecursion::Continue,
        })
    });
    found
}

/// Refuse `plan` (a query, or an `INSERT`/`CTAS` of one) when DataFusion's optimizer
/// leaves an `IN (subquery)` or `EXISTS` in it, which it cannot run. Plans that hold
/// them in filters only (nearly all) are not optimized here; others are, once more than
/// when they run.
///
/// Errors: [`crate::ErrorKind::Unsupported`]: "IN (subquery) and EXISTS (subquery) are
/// supported as conditions …"; the optimizer's own error when it fails.
pub(super) fn check(ctx: &SessionContext, plan: &LogicalPlan) -> Result<()> {
    // UPDATE, DELETE and MERGE are planned by icefloe's row-level path (its own
    // subqueries, and its own errors)
    if let LogicalPlan::Dml(dml) = plan {
        if !matches!(dml.op, WriteOp::Insert(_) | WriteOp::Ctas) {
            return Ok(());
        }
    }
    if !found(plan, true) {
        return Ok(());
    }
    let optimized = ctx.state().optimize(plan)?;
    if !found(&optimized, false) {
        return Ok(());
    }
    Err(Error::unsupported(
        "IN (subquery) and EXISTS (subquery) are supported as conditions DataFusion 55 turns \
         into joins (WHERE and HAVING; an uncorrelated one in an inner join's ON), not as \
         values (a SELECT list, an aggregate's FILTER, an outer join's ON, a CASE or function \
         outside a condition) nor correlated in a join's ON: DataFusion 55 cannot compute \
         them there; write the test as a join, or as a scalar subquery such as \
         (SELECT count(*) FROM … WHERE v = x) > 0",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn checked(sql: &str) -> Result<()> {
        let ctx = SessionContext::new();
        let df = ctx.sql(sql).await?;
        check(&ctx, df.logical_plan())
    }

    /// Values are refused by name; conditions, which DataFusion runs, are not.
    #[tokio::test]
    async fn values_are_refused_and_conditions_kept() {
        let t = "(VALUES (1), (2)) t(k)";
        for sql in [
            format!("SELECT k, k IN (SELECT 1) AS f FROM {t}"),
            format!("SELECT k, EXISTS (SELECT 1) AS e FROM {t}"),
            format!("SELECT count(*) FILTER (WHERE k IN (SELECT 1)) FROM {t}"),
            format!("SELECT * FROM {t} LEFT JOIN (VALUES (1)) u(j) ON k = j AND k IN (SELECT 1)"),
        ] {
            let e = checked(&sql).await.expect_err(&sql);
            assert_eq!(e.kind(), crate::ErrorKind::Unsupported, "{sql}");
            assert!(e.message().contains("not as values"), "{sql}: {e}");
            // which DataFusion cannot run
            let ctx = SessionContext::new();
            let df = ctx.sql(&sql).await.expect(&sql);
            let e = df.collect().await.expect_err(&sql).to_string();
            assert!(
                e.contains("does not support logical expression"),
                "{sql}: {e}"
            );
        }
        for sql in [
            format!("SELECT k FROM {t} WHERE k IN (SELECT 1)"),
            format!("SELECT k FROM {t} WHERE EXISTS (SELECT 1) OR k = 2"),
            format!("SELECT k FROM {t} GROUP BY k HAVING k IN (SELECT 1)"),
            format!("SELECT * FROM {t} JOIN (VALUES (1)) u(j) ON k = j AND k IN (SELECT 1)"),
            format!("SELECT k, (SELECT count(*) FROM (VALUES (1)) u(j) WHERE j = k) FROM {t}"),
        ] {
            checked(&sql).await.expect(&sql);
            // and they run
            let ctx = SessionContext::new();
            ctx.sql(&sql)
                .await
                .expect(&sql)
                .collect()
                .await
                .expect(&sql);
        }
    }
}
