//! Spark's `isnan`: FALSE for NULL.
//!
//! Spark's `isnan(x)` is FALSE when `x` is NULL (and so is Iceberg's `isNaN` predicate:
//! `notNaN` holds for NULL); DataFusion 55's `isnan` answers NULL there, so `WHERE NOT
//! isnan(d)` dropped the rows whose `d` is NULL, and a `DELETE … WHERE NOT isnan(d)` kept
//! them. [`SparkIsNan`] (an analyzer rule) rewrites each `isnan(x)` into `isnan(x) IS TRUE`,
//! which is Spark's answer for every `x` and a plain expression every engine node decodes
//! (no function of icefloe's to send to distributed workers). The filter pushdown
//! ([`super::filter`]) reads `isnan(c) IS TRUE` as Iceberg's `isNaN(c)`, and its negation
//! (`isnan(c) IS NOT TRUE`) as `not_nan(c) OR is_null(c)`: icefloe's `not_nan` is false for
//! NULL, and without the `is_null` half a scan pruned the files and partitions of NULL
//! `c` that the filter keeps. A procedure's `where` string gets the same rewrite
//! ([`spark_isnan`]) in a session that has the rule.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::Result as DFResult;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

/// The rule's name in the session's analyzer.
pub const SPARK_ISNAN_RULE: &str = "icefloe_spark_isnan";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct SparkIsNan;

/// Add [`SparkIsNan`] to `ctx`'s analyzer, once.
pub fn install_spark_isnan_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(SparkIsNan));
}

/// `e` is DataFusion's one-argument `isnan`.
pub(crate) fn is_isnan(e: &Expr) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.func.name() == "isnan" && f.args.len() == 1)
}

/// Whether `ctx`'s analyzer has [`SparkIsNan`] (so its `isnan` is Spark's).
pub(crate) fn installed(ctx: &SessionContext) -> bool {
    ctx.state_ref()
        .read()
        .analyzer()
        .rules
        .iter()
        .any(|r| r.name() == SPARK_ISNAN_RULE)
}

/// `e` with each `isnan(x)` in it made `isnan(x) IS TRUE` (one already so is kept): the
/// rewrite of [`SparkIsNan`], for expressions planned outside a plan (a procedure's
/// `where` string).
///
/// Errors: none of its own (DataFusion's tree walk).
pub(crate) fn spark_isnan(e: Expr) -> DFResult<Transformed<Expr>> {
    e.transform_down(|e| match e {
        // rewritten already (a plan analyzed twice)
        Expr::IsTrue(inner) if is_isnan(&inner) => Ok(Transformed::new(
            Expr::IsTrue(inner),
            false,
            TreeNodeRecursion::Jump,
        )),
        e if is_isnan(&e) => Ok(Transformed::new(
            Expr::IsTrue(Box::new(e)),
            true,
            TreeNodeRecursion::Jump,
        )),
        e => Ok(Transformed::no(e)),
    })
}

impl AnalyzerRule for SparkIsNan {
    fn name(&self) -> &str {
        SPARK_ISNAN_RULE
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        super::analyzer_rules::rewrite_every_expression(plan, &|e, _schema| spark_isnan(e))
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{AsArray, RecordBatch};
    use datafusion::arrow::datatypes::Int64Type;
    use datafusion::prelude::SessionContext;

    /// `t(id, d)` = (1, 1.5), (2, NaN), (3, NULL).
    async fn ids(ctx: &SessionContext, condition: &str) -> Vec<i64> {
        let sql = format!(
            "SELECT id FROM (VALUES (1, CAST(1.5 AS DOUBLE)), (2, CAST('NaN' AS DOUBLE)), \
             (3, CAST(NULL AS DOUBLE))) t(id, d) WHERE {condition} ORDER BY id"
        );
        let batches: Vec<RecordBatch> = crate::datafusion::sql::execute(ctx, &sql)
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

    #[tokio::test]
    async fn isnan_of_null_is_false_as_in_spark() {
        let ctx = SessionContext::new();
        for (condition, want) in [
            ("isnan(d)", vec![2]),
            ("NOT isnan(d)", vec![1, 3]),
            ("isnan(d) IS NULL", vec![]),
            ("isnan(d) = false", vec![1, 3]),
            ("NOT isnan(d) OR id = 2", vec![1, 2, 3]),
            ("isnan(d) IS TRUE", vec![2]),
        ] {
            assert_eq!(ids(&ctx, condition).await, want, "{condition}");
        }
    }
}
