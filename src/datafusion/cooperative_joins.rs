//! Joins that yield to the Tokio scheduler, so that a cancelled query stops computing.
//!
//! A query is cancelled by dropping its stream; the tasks DataFusion spawned for it are
//! aborted, and a Tokio task only notices that when it next returns `Pending`. DataFusion
//! 55 makes its leaves (scans, generators) spend Tokio's cooperative budget per batch,
//! but a join can emit any number of batches for one input batch (a cross join emits one
//! per row of its build side), and the operators that drain their input in a loop
//! (aggregates, sorts) then never see `Pending`: the cancelled query goes on until its
//! input ends. In the CLI a cross join of two 10^6-row series went on for ~40 s after
//! Ctrl-C, holding both runtime threads, so the next statement waited for it
//! (apache/datafusion#19358, open in DataFusion 55).
//!
//! [`CooperativeJoins`] wraps every join in DataFusion's own [`CooperativeExec`], which
//! spends one unit of the task's budget per batch the join emits and returns `Pending`
//! when the budget (128 units) is spent. Rows, order and partitioning are unchanged; the
//! cost is one budget check per batch.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::config::ConfigOptions;
use datafusion::error::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::joins::{
    CrossJoinExec, HashJoinExec, NestedLoopJoinExec, PiecewiseMergeJoinExec, SortMergeJoinExec,
    SymmetricHashJoinExec,
};
use datafusion::physical_plan::ExecutionPlan;

/// The name [`CooperativeJoins`] reports as a physical optimizer rule.
pub const COOPERATIVE_JOINS_RULE: &str = "icefloe_cooperative_joins";

/// A physical optimizer rule, to run after DataFusion's own: every join operator
/// (`HashJoinExec`, `CrossJoinExec`, `NestedLoopJoinExec`, `SortMergeJoinExec`,
/// `SymmetricHashJoinExec`, `PiecewiseMergeJoinExec`) under a [`CooperativeExec`], once
/// (see the module docs). Add it with
/// `SessionStateBuilder::with_physical_optimizer_rule`; the icefloe CLI does.
#[derive(Debug, Default, Clone, Copy)]
pub struct CooperativeJoins;

impl PhysicalOptimizerRule for CooperativeJoins {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            if is_join(node.as_ref()) {
                return Ok(Transformed::yes(Arc::new(CooperativeExec::new(node))));
            }
            // a join this rule (or anything else) already wrapped is wrapped once
            if let Some(outer) = node.downcast_ref::<CooperativeExec>() {
                if outer.input().is::<CooperativeExec>() {
                    return Ok(Transformed::yes(Arc::clone(outer.input())));
                }
            }
            Ok(Transformed::no(node))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        COOPERATIVE_JOINS_RULE
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Whether `plan` is one of DataFusion's join operators.
fn is_join(plan: &dyn ExecutionPlan) -> bool {
    plan.is::<HashJoinExec>()
        || plan.is::<CrossJoinExec>()
        || plan.is::<NestedLoopJoinExec>()
        || plan.is::<SortMergeJoinExec>()
        || plan.is::<SymmetricHashJoinExec>()
        || plan.is::<PiecewiseMergeJoinExec>()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use datafusion::execution::SessionStateBuilder;
    use datafusion::physical_plan::displayable;
    use datafusion::prelude::{SessionConfig, SessionContext};
    use futures::StreamExt;

    use super::*;

    fn session(target_partitions: usize) -> SessionContext {
        let state = SessionStateBuilder::new()
            .with_config(SessionConfig::new().with_target_partitions(target_partitions))
            .with_default_features()
            .with_physical_optimizer_rule(Arc::new(CooperativeJoins))
            .build();
        SessionContext::new_with_state(state)
    }

    async fn physical_plan(ctx: &SessionContext, sql: &str) -> Arc<dyn ExecutionPlan> {
        let df = ctx.sql(sql).await.unwrap();
        df.create_physical_plan().await.unwrap()
    }

    fn text(plan: &Arc<dyn ExecutionPlan>) -> String {
        displayable(plan.as_ref()).indent(false).to_string()
    }

    /// Each join is wrapped once, directly above it; the rows are those of a session
    /// without the rule.
    #[tokio::test]
    async fn every_join_is_wrapped_once_and_rows_are_unchanged() {
        let ctx = session(2);
        let sqls = [
            // cross join
            "SELECT count(*) FROM generate_series(1, 300) a(x) \
             CROSS JOIN generate_series(1, 70) b(y)",
            // hash join
            "SELECT a.x, b.y FROM generate_series(1, 50) a(x) JOIN generate_series(1, 50) b(y) \
             ON a.x = b.y * 2 ORDER BY a.x",
            // nested loop join (a non-equality condition)
            "SELECT count(*) FROM generate_series(1, 100) a(x) JOIN generate_series(1, 100) b(y) \
             ON a.x < b.y",
        ];
        for (sql, join) in sqls
            .iter()
            .zip(["CrossJoinExec", "HashJoinExec", "NestedLoopJoinExec"])
        {
            let shown = text(&physical_plan(&ctx, sql).await);
            let lines: Vec<&str> = shown.lines().map(str::trim_start).collect();
            let at = lines
                .iter()
                .position(|l| l.starts_with(join))
                .unwrap_or_else(|| panic!("no {join} in\n{shown}"));
            assert!(at > 0 && lines[at - 1] == "CooperativeExec", "{shown}");
            assert!(
                !lines
                    .windows(2)
                    .any(|w| w == ["CooperativeExec", "CooperativeExec"]),
                "{shown}"
            );
            let plain =
                SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
            let want = plain.sql(sql).await.unwrap().collect().await.unwrap();
            let got = ctx.sql(sql).await.unwrap().collect().await.unwrap();
            assert_eq!(
                datafusion::arrow::util::pretty::pretty_format_batches(&got)
                    .unwrap()
                    .to_string(),
                datafusion::arrow::util::pretty::pretty_format_batches(&want)
                    .unwrap()
                    .to_string(),
                "{sql}"
            );
        }
        // the rule run again changes nothing
        let plan = physical_plan(&ctx, sqls[0]).await;
        let again = CooperativeJoins
            .optimize(Arc::clone(&plan), &ConfigOptions::default())
            .unwrap();
        assert_eq!(text(&again), text(&plan));
    }

    /// An aggregate over a cross join of two 10^6-row series (10^12 rows), on one
    /// partition and one runtime thread: the first poll of its stream returns `Pending`
    /// once the task's budget is spent, so the task polling it can be cancelled. Without
    /// the rule that poll does not return until the join's input ends; the test then
    /// fails after 120 s (its thread left running until the process exits).
    #[test]
    fn an_aggregate_over_an_endless_cross_join_yields() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let first_poll = runtime.block_on(async {
                let df = session(1)
                    .sql(
                        "SELECT count(*) FROM generate_series(1, 1000000) a(x) \
                         CROSS JOIN generate_series(1, 1000000) b(y)",
                    )
                    .await
                    .unwrap();
                let mut stream = df.execute_stream().await.unwrap();
                futures::poll!(stream.next()).is_pending()
            });
            let _ = tx.send(first_poll);
        });
        let pending = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the first poll of the aggregate did not return: the join does not yield");
        assert!(pending, "a 10^12-row count finished in one poll");
    }
}
