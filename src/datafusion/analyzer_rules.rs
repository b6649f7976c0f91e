//! Adding icefloe's analyzer rules to a session once: each `install_*` of the rules calls
//! [`add_analyzer_rule_once`], so a session set up twice (or a statement run through
//! `sql::execute` again) does not run a rule twice.

use std::sync::Arc;

use datafusion::common::{DFSchema, Result as DFResult};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::LogicalPlan;
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

use super::written_values::WrittenValueRewrite;

/// Add `rule` at the end of `ctx`'s analyzer (after DataFusion's rules, so after type
/// coercion) unless a rule of its name is there already.
pub(crate) fn add_analyzer_rule_once(
    ctx: &SessionContext,
    rule: Arc<dyn AnalyzerRule + Send + Sync>,
) {
    let present = ctx
        .state_ref()
        .read()
        .analyzer()
        .rules
        .iter()
        .any(|r| r.name() == rule.name());
    if !present {
        ctx.add_analyzer_rule(rule);
    }
}

/// `plan` with `rewrite` applied to every expression of every node, bottom-up and in
/// subqueries (each over its node's inputs' columns, its output name kept), then to
/// every value a `MERGE` writes, which are no expressions of a plan node
/// ([`map_written_values`](super::written_values::map_written_values); the other
/// written values are rewritten already, and a second rewrite changes nothing).
///
/// Errors: `rewrite`'s; DataFusion's.
pub(crate) fn rewrite_every_expression(
    plan: LogicalPlan,
    rewrite: WrittenValueRewrite<'_>,
) -> DFResult<LogicalPlan> {
    let plan = plan
        .transform_up_with_subqueries(|node| {
            let mut schema = DFSchema::empty();
            for input in node.inputs() {
                schema.merge(input.schema());
            }
            let names = NamePreserver::new(&node);
            node.map_expressions(|e| {
                let name = names.save(&e);
                Ok(rewrite(e, &schema)?.update_data(|e| name.restore(e)))
            })
        })?
        .data;
    super::written_values::map_written_values(plan, rewrite)
}
