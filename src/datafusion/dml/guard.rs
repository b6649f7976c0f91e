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
//!   with an error naming the feature, rather than let it change every row (the
//!   statement layer runs an uncorrelated one first, see module `subquery`, and plans a
//!   statement with a correlated one as a query, see module `correlated`, so only one
//!   planned without it, or a prepared one, gets here). A correlated scalar subquery
//!   left in a condition or `SET` value is refused too (an uncorrelated one is run once
//!   when the table plans the statement, see module `subquery`).
//!
//! It also rewrites the statement's input into the one shape the planner reads, with
//! every condition and `SET` value in terms of the target's own columns: DataFusion's
//! optimizer moves parts of them into projections under the filter, named by aliases
//! the table does not have (common subexpressions, `WHERE id % 3 = 1 OR id % 3 = 0`,
//! as `__common_expr_N`; struct field accesses, `WHERE st.a = 1` or `SET id = st.a`,
//! as `__datafusion_extracted_N`), and the table would look for those names among its
//! columns and fail.
//!
//! Installed by [`install_dml_guard`]; the statement layer and the CLI install it, and
//! the Iceberg table provider refuses `DELETE`/`UPDATE` in a session without it.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{plan_err, DFSchema, DataFusionError, Result as DFResult};
use datafusion::logical_expr::dml::WriteOp;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{
    lit, DmlStatement, Expr, Filter, LogicalPlan, LogicalPlanBuilder, Projection,
};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use datafusion::prelude::SessionContext;

/// The rule's name (as listed by the session's optimizer).
pub const DML_GUARD_RULE: &str = "icefloe_dml_empty_input_guard";

/// An optimizer rule: a `DELETE`/`UPDATE` whose input DataFusion emptied (a `WHERE` never
/// true) gets a scan of its target with the filter `false` back, so the table provider
/// changes no row instead of every row; one whose condition is a subquery is refused;
/// and the conditions and `SET` values are put back in terms of the target's columns
/// (see the module docs). Run it after DataFusion's own rules ([`install_dml_guard`]
/// appends it), so no later rule moves them into projections again.
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
        let verb = if op == WriteOp::Delete {
            "DELETE"
        } else {
            "UPDATE"
        };
        // a correlated scalar subquery that DataFusion left in a condition or `SET` value
        // (an uncorrelated one is run once when the table plans the statement)
        let mut correlated = false;
        input.apply(|node| {
            for expr in node.expressions() {
                expr.apply(|e| {
                    if matches!(e, Expr::ScalarSubquery(sq) if !sq.outer_ref_columns.is_empty()) {
                        correlated = true;
                        return Ok(TreeNodeRecursion::Stop);
                    }
                    Ok(TreeNodeRecursion::Continue)
                })?;
            }
            Ok(if correlated {
                TreeNodeRecursion::Stop
            } else {
                TreeNodeRecursion::Continue
            })
        })?;
        if correlated {
            return plan_err!(
                "{verb} on '{table_name}' with a correlated scalar subquery (one reading the \
                 target row's columns) is not supported here: DataFusion 55 cannot evaluate \
                 it in the table's row-level plan (run the statement through \
                 icefloe::datafusion::sql::execute, as the CLI does, which plans it as a \
                 query; not in a prepared statement)"
            );
        }
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
                 correlated IN (SELECT …) or EXISTS, one reading the target row's columns, or \
                 any in a prepared statement) is not supported: DataFusion 55 would hand the \
                 table no filter for it (run directly through icefloe::datafusion::sql::execute, \
                 as the CLI does, a subquery works; or write the statement as a MERGE INTO … \
                 USING the subquery)",
                verb
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
        let mut changed = input.transformed;
        let input = if changed {
            // parents of a replaced node take the scan's schema
            input
                .data
                .transform_up(|node| Ok(Transformed::yes(node.recompute_schema()?)))?
                .data
        } else {
            input.data
        };
        // the conditions and assignments are handed to the table in terms of its own
        // columns, whatever projections DataFusion's optimizer put under them
        let input = in_table_columns(input, op == WriteOp::Update)?;
        changed |= input.transformed;
        let input = input.data;
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

/// `input` of a `DELETE` (`update` false) or `UPDATE` rewritten to the shape DataFusion's
/// physical planner reads it in, with every expression in terms of the target scan's
/// columns: `[Projection: <SET values> AS <column>, …]` over `[Filter: <conditions>]` over
/// the target's `TableScan` (kept as it is, with the filters pushed into it).
///
/// The planner hands the table the predicates of every `Filter` and the aliased
/// expressions of the topmost `Projection` as they stand, and the table resolves them
/// against its own columns. DataFusion's optimizer, though, moves parts of them into
/// projections below (`__common_expr_N` for common subexpressions,
/// `__datafusion_extracted_N` for struct field accesses: `WHERE st.a = 1` becomes a
/// filter on `__datafusion_extracted_1` over a projection defining it as
/// `get_field(st, 'a')`), possibly several levels down and with recovery projections
/// between. Here each column a node reads is replaced by the expression its input
/// defines it as, down to the scan, so no such name is left. Unchanged when the input
/// already has that shape, or holds a node other than a filter, projection, alias or
/// scan (the guard refuses those before).
///
/// Errors: a column a node reads that its input does not produce (an inconsistent plan).
fn in_table_columns(input: LogicalPlan, update: bool) -> DFResult<Transformed<LogicalPlan>> {
    let Some(resolved) = resolve(&input)? else {
        return Ok(Transformed::no(input));
    };
    let mut plan = resolved.scan;
    if let Some(condition) = conjunction(resolved.conditions) {
        plan = LogicalPlan::Filter(Filter::try_new(condition, Arc::new(plan))?);
    }
    if update {
        // the `SET` values (and the unchanged columns) under the names of the columns
        // they are written to, as the SQL planner names them
        let values = resolved
            .outputs
            .into_iter()
            .zip(input.schema().fields())
            .map(|(value, field)| value.alias(field.name()))
            .collect();
        plan = LogicalPlan::Projection(Projection::try_new(values, Arc::new(plan))?);
    }
    Ok(if plan == input {
        Transformed::no(input)
    } else {
        Transformed::yes(plan)
    })
}

/// A node of a `DELETE`/`UPDATE` input in terms of the target scan's columns.
struct Resolved {
    /// Per output column of the node, the expression it is over the scan's columns.
    outputs: Vec<Expr>,
    /// The conditions of the filters at and under the node, over the scan's columns.
    conditions: Vec<Expr>,
    /// The target's scan.
    scan: LogicalPlan,
}

/// `plan` resolved down to its scan (see [`in_table_columns`]); `None` when it holds a
/// node other than a filter, projection, subquery alias or table scan.
fn resolve(plan: &LogicalPlan) -> DFResult<Option<Resolved>> {
    Ok(match plan {
        LogicalPlan::TableScan(scan) => Some(Resolved {
            outputs: scan
                .projected_schema
                .columns()
                .into_iter()
                .map(Expr::Column)
                .collect(),
            conditions: vec![],
            scan: plan.clone(),
        }),
        LogicalPlan::Filter(filter) => resolve(&filter.input)?
            .map(|mut r| {
                let condition = substitute(&filter.predicate, filter.input.schema(), &r.outputs)?;
                r.conditions.push(condition);
                Ok::<_, DataFusionError>(r)
            })
            .transpose()?,
        LogicalPlan::Projection(projection) => resolve(&projection.input)?
            .map(|mut r| {
                r.outputs = projection
                    .expr
                    .iter()
                    .map(|e| {
                        let e = substitute(e, projection.input.schema(), &r.outputs)?;
                        Ok(e.unalias_nested().data)
                    })
                    .collect::<DFResult<_>>()?;
                Ok::<_, DataFusionError>(r)
            })
            .transpose()?,
        // the same columns, qualified by the alias
        LogicalPlan::SubqueryAlias(alias) => resolve(&alias.input)?,
        _ => None,
    })
}

/// `expr` with each column of `schema` it reads replaced by that column's expression
/// in `outputs` (one per field of `schema`).
fn substitute(expr: &Expr, schema: &DFSchema, outputs: &[Expr]) -> DFResult<Expr> {
    Ok(expr
        .clone()
        .transform(|e| match &e {
            Expr::Column(c) => {
                let index = schema.index_of_column(c)?;
                match outputs.get(index) {
                    Some(defined) => Ok(Transformed::yes(defined.clone())),
                    None => plan_err!(
                        "DELETE/UPDATE condition or SET value reads column '{c}' (number \
                         {index}), which the plan under it does not define (it defines {})",
                        outputs.len()
                    ),
                }
            }
            _ => Ok(Transformed::no(e)),
        })?
        .data)
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
