//! [`DmlEmptyInputGuard`]: keeps DataFusion 55 from turning a `DELETE`/`UPDATE` whose
//! condition it rewrote into one of every row.
//!
//! DataFusion's physical planner hands `TableProvider::delete_from` / `update` the
//! conditions it finds in `Filter` nodes and the target's `TableScan` of the statement's
//! input, and no filter means "every row". Two rewrites of its optimizer leave it none:
//! - a condition proven never true (`WHERE false`, `WHERE NULL`, `WHERE 1 = 2`, a
//!   contradiction) becomes an empty relation: this rule, run after the others, puts
//!   back a scan of the target with the filter `false`, so no row changes;
//! - a subquery (`WHERE id IN (SELECT …)`, `EXISTS`, `NOT IN`) becomes a semi or anti
//!   join, which the planner does not look into: this rule refuses such a statement
//!   with an error naming the feature, rather than let it change every row.
//!
//!
//! It also puts back into the condition the common subexpressions the optimizer moved
//! into a projection under it (`WHERE id % 3 = 1 OR id % 3 = 0`), which the planner
//! would look for among the table's columns and fail on.
//!
//! Installed by [`install_dml_guard`]; the statement layer and the CLI install it, and
//! the Iceberg table provider refuses `DELETE`/`UPDATE` in a session without it.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{plan_err, Result as DFResult};
use datafusion::logical_expr::dml::WriteOp;
use datafusion::logical_expr::{lit, DmlStatement, Expr, Filter, LogicalPlan, LogicalPlanBuilder};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use datafusion::prelude::SessionContext;

/// The rule's name (as listed by the session's optimizer).
pub const DML_GUARD_RULE: &str = "icefloe_dml_empty_input_guard";

/// An optimizer rule: a `DELETE`/`UPDATE` whose input DataFusion emptied (a `WHERE` never
/// true) gets a scan of its target with the filter `false` back, so the table provider
/// changes no row instead of every row. Run it after DataFusion's own rules
/// ([`install_dml_guard`] appends it).
#[derive(Debug, Default)]
pub struct DmlEmptyInputGuard;

impl OptimizerRule for DmlEmptyInputGuard {
    fn name(&self) -> &str {
        DML_GUARD_RULE
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> DFResult<Transformed<LogicalPlan>> {
        let LogicalPlan::Dml(dml) = plan else {
            return Ok(Transformed::no(plan));
        };
        if !matches!(dml.op, WriteOp::Delete | WriteOp::Update) {
            return Ok(Transformed::no(LogicalPlan::Dml(dml)));
        }
        let DmlStatement {
            table_name,
            target,
            op,
            input,
            output_schema,
        } = dml;
        let mut unsupported = None;
        input.apply(|node| {
            if !matches!(
                node,
                LogicalPlan::Filter(_)
                    | LogicalPlan::TableScan(_)
                    | LogicalPlan::Projection(_)
                    | LogicalPlan::SubqueryAlias(_)
                    | LogicalPlan::EmptyRelation(_)
            ) {
                unsupported = Some(node.display().to_string());
                return Ok(TreeNodeRecursion::Stop);
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        if let Some(node) = unsupported {
            return plan_err!(
                "{} on '{table_name}' with a condition DataFusion plans as '{node}' (e.g. a \
                 subquery in WHERE) is not supported: DataFusion 55 would hand the table no \
                 filter for it",
                if op == WriteOp::Delete {
                    "DELETE"
                } else {
                    "UPDATE"
                }
            );
        }
        let scan_name = table_name.clone();
        let scan_target = Arc::clone(&target);
        let input = Arc::unwrap_or_clone(input).transform_up(|node| match node {
            LogicalPlan::EmptyRelation(e) if !e.produce_one_row => {
                let scan = LogicalPlanBuilder::scan_with_filters(
                    scan_name.clone(),
                    Arc::clone(&scan_target),
                    None,
                    vec![lit(false)],
                )?
                .build()?;
                Ok(Transformed::yes(scan))
            }
            other => Ok(Transformed::no(other)),
        })?;
        let changed = input.transformed;
        // common subexpressions DataFusion's optimizer moved into a projection under
        // the filter are put back into the condition, which the planner checks against
        // the table's own columns
        let input = inline_common_subexpressions(input.data)?;
        let changed = changed || input.transformed;
        let input = if changed {
            // parents of a replaced node take the scan's schema
            input
                .data
                .transform_up(|node| Ok(Transformed::yes(node.recompute_schema()?)))?
                .data
        } else {
            input.data
        };
        let dml = LogicalPlan::Dml(DmlStatement {
            table_name,
            target,
            op,
            input: Arc::new(input),
            output_schema,
        });
        Ok(if changed {
            Transformed::yes(dml)
        } else {
            Transformed::no(dml)
        })
    }
}

/// The `Filter`s of `plan` with the columns a `Projection` right under them defines
/// (`__common_expr_N`, from DataFusion's common subexpression elimination: `WHERE id % 3
/// = 1 OR id % 3 = 0` filters on `__common_expr_3`) replaced by their expressions, so
/// the condition names the table's columns only.
fn inline_common_subexpressions(plan: LogicalPlan) -> DFResult<Transformed<LogicalPlan>> {
    plan.transform_up(|node| {
        let LogicalPlan::Filter(filter) = node else {
            return Ok(Transformed::no(node));
        };
        let LogicalPlan::Projection(projection) = filter.input.as_ref() else {
            return Ok(Transformed::no(LogicalPlan::Filter(filter)));
        };
        let defined: HashMap<String, Expr> = projection
            .expr
            .iter()
            .filter_map(|e| match e {
                Expr::Alias(a) if a.name.starts_with("__common_expr") => {
                    Some((a.name.clone(), a.expr.as_ref().clone()))
                }
                _ => None,
            })
            .collect();
        if defined.is_empty() {
            return Ok(Transformed::no(LogicalPlan::Filter(filter)));
        }
        let predicate = filter.predicate.clone().transform(|e| match &e {
            Expr::Column(c) if c.relation.is_none() && defined.contains_key(&c.name) => {
                Ok(Transformed::yes(defined[&c.name].clone()))
            }
            _ => Ok(Transformed::no(e)),
        })?;
        if !predicate.transformed {
            return Ok(Transformed::no(LogicalPlan::Filter(filter)));
        }
        Ok(Transformed::yes(LogicalPlan::Filter(Filter::try_new(
            predicate.data,
            Arc::clone(&filter.input),
        )?)))
    })
}

/// Whether `state`'s optimizer runs [`DmlEmptyInputGuard`].
pub(crate) fn installed(state: &datafusion::execution::SessionState) -> bool {
    state
        .optimizers()
        .iter()
        .any(|r| r.name() == DML_GUARD_RULE)
}

/// Add [`DmlEmptyInputGuard`] to `ctx`'s optimizer, once (a second call does nothing).
/// Sessions that run `DELETE`/`UPDATE` on Iceberg tables through `ctx.sql` directly
/// should call it; [`execute`](crate::datafusion::sql::execute) does.
pub fn install_dml_guard(ctx: &SessionContext) {
    let present = ctx
        .state()
        .optimizers()
        .iter()
        .any(|r| r.name() == DML_GUARD_RULE);
    if !present {
        ctx.add_optimizer_rule(Arc::new(DmlEmptyInputGuard));
    }
    // the sessions that write through `ctx.sql` need nested `INSERT … VALUES` too
    crate::datafusion::install_values_rule(ctx);
}
