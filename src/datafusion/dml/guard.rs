//! [`DmlEmptyInputGuard`]: keeps DataFusion 55 from turning `DELETE … WHERE <never true>`
//! into a `DELETE` of every row.
//!
//! DataFusion's optimizer replaces a filter it proves never true (`WHERE false`,
//! `WHERE NULL`, `WHERE 1 = 2`, a contradiction) with an empty relation; its physical
//! planner then finds no filter in the `DELETE`/`UPDATE` input and calls
//! `TableProvider::delete_from` / `update` with none, which means "every row". This rule,
//! run after the others, puts back a scan of the target table with the filter `false`,
//! so the provider is told that no row matches. Installed by [`install_dml_guard`]
//! (the statement layer and the CLI install it in their session).

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result as DFResult;
use datafusion::logical_expr::dml::WriteOp;
use datafusion::logical_expr::{lit, DmlStatement, LogicalPlan, LogicalPlanBuilder};
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
            other if other.inputs().is_empty() => Ok(Transformed::no(other)),
            other => Ok(Transformed::no(other)),
        })?;
        let changed = input.transformed;
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
}
