//! Adding icefloe's analyzer rules to a session once: each `install_*` of the rules calls
//! [`add_analyzer_rule_once`], so a session set up twice (or a statement run through
//! `sql::execute` again) does not run a rule twice.

use std::sync::Arc;

use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

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
