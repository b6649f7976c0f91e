//! Float sort keys as Spark orders them: `-0.0` and `0.0` are peers, and every NaN (any
//! sign, any payload) is one value above `+∞`, in `ORDER BY` (`ASC`/`DESC`, `NULLS
//! FIRST/LAST`, with `LIMIT`: DataFusion's TopK), in a window's `ORDER BY` (so `rank()`,
//! `dense_rank()`, `RANGE` frames and later sort keys see the zeros as one value) and in
//! the `ORDER BY` within an aggregate function, also inside structs and lists.
//!
//! Spark sorts floats with `SQLOrderingUtil.compareDoubles` / `compareFloats` (`x == y` →
//! equal, else `Double.compare`): the zeros compare equal, all NaNs are equal and above
//! every number. DataFusion 55 sorts floats in IEEE 754 total order: `-0.0` before `0.0`
//! (two ranks, a secondary key ignored between them) and a NaN whose sign bit is set (x86
//! computes it for `0.0 / 0.0`) before every number. Scans make every NaN they read the
//! canonical one ([`crate::nan`]), but not a NaN the query computes.
//!
//! [`SparkFloatOrdering`] is an optimizer rule, run after DataFusion's own, that wraps
//! every sort key holding a float at any depth (of a `Sort`, of a window function's `ORDER
//! BY`, of an aggregate function's `ORDER BY`) in [`NORMALIZE_NAN_AND_ZERO`]: total order
//! over the normalized values is Spark's order. Only the key is normalized: the rows keep
//! their values (a `-0.0` row still reads `-0.0`). Filters are not touched, so the scan's
//! pruning is as before. The NULL ordering stays DataFusion's (`ASC NULLS LAST`, `DESC
//! NULLS FIRST` unless the query says otherwise). Installed by
//! [`install_float_key_rule`](super::install_float_key_rule).

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNodeIterator};
use datafusion::common::{DFSchema, Result as DFResult};
use datafusion::logical_expr::expr::{AggregateFunction, WindowFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{
    Aggregate, Expr, ExprSchemable, LogicalPlan, Sort, SortExpr, Window,
};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};

use super::float_keys::{is_normalized, normalize};
use crate::nan::holds_floats;

/// The rule's name (as listed by the session's optimizer).
pub const SPARK_FLOAT_ORDERING_RULE: &str = "icefloe_spark_float_ordering";

/// Spark's order of float sort keys as a DataFusion optimizer rule (see the module docs).
#[derive(Debug, Default)]
pub struct SparkFloatOrdering;

/// `sorts` with each key over `schema` holding a float normalized (once).
fn ordered_keys(sorts: Vec<SortExpr>, schema: &DFSchema) -> DFResult<Transformed<Vec<SortExpr>>> {
    let mut changed = false;
    let sorts = sorts
        .into_iter()
        .map(|sort| {
            if is_normalized(&sort.expr) || !holds_floats(&sort.expr.get_type(schema)?) {
                return Ok(sort);
            }
            changed = true;
            Ok(SortExpr::new(
                normalize(sort.expr),
                sort.asc,
                sort.nulls_first,
            ))
        })
        .collect::<DFResult<Vec<_>>>()?;
    Ok(Transformed::new_transformed(sorts, changed))
}

/// A window or aggregate expression (under its aliases) whose `ORDER BY` keys are
/// normalized; its name (the plan's schema) is kept.
fn ordered_call(
    expr: Expr,
    schema: &DFSchema,
    names: &NamePreserver,
) -> DFResult<Transformed<Expr>> {
    let saved = names.save(&expr);
    let mut inner = &expr;
    while let Expr::Alias(alias) = inner {
        inner = alias.expr.as_ref();
    }
    let call = match inner {
        Expr::WindowFunction(window) => {
            let order_by = ordered_keys(window.params.order_by.clone(), schema)?;
            if !order_by.transformed {
                return Ok(Transformed::no(expr));
            }
            let mut window: WindowFunction = window.as_ref().clone();
            window.params.order_by = order_by.data;
            Expr::WindowFunction(Box::new(window))
        }
        Expr::AggregateFunction(AggregateFunction { func, params }) => {
            let order_by = ordered_keys(params.order_by.clone(), schema)?;
            if !order_by.transformed {
                return Ok(Transformed::no(expr));
            }
            let mut params = params.clone();
            params.order_by = order_by.data;
            Expr::AggregateFunction(AggregateFunction {
                func: Arc::clone(func),
                params,
            })
        }
        _ => return Ok(Transformed::no(expr)),
    };
    Ok(Transformed::yes(saved.restore(call)))
}

/// Each of `exprs` through [`ordered_call`], whether any changed.
fn ordered_calls(
    exprs: &[Expr],
    schema: &DFSchema,
    names: &NamePreserver,
) -> DFResult<Transformed<Vec<Expr>>> {
    exprs
        .iter()
        .cloned()
        .map_until_stop_and_collect(|e| ordered_call(e, schema, names))
}

impl OptimizerRule for SparkFloatOrdering {
    fn name(&self) -> &str {
        SPARK_FLOAT_ORDERING_RULE
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> DFResult<Transformed<LogicalPlan>> {
        let names = NamePreserver::new(&plan);
        match plan {
            LogicalPlan::Sort(sort) => {
                let keys = ordered_keys(sort.expr.clone(), sort.input.schema())?;
                if !keys.transformed {
                    return Ok(Transformed::no(LogicalPlan::Sort(sort)));
                }
                // the schema is the input's whatever the keys
                Ok(Transformed::yes(LogicalPlan::Sort(Sort {
                    expr: keys.data,
                    ..sort
                })))
            }
            LogicalPlan::Window(window) => {
                let exprs = ordered_calls(&window.window_expr, window.input.schema(), &names)?;
                if !exprs.transformed {
                    return Ok(Transformed::no(LogicalPlan::Window(window)));
                }
                let new = Window::try_new(exprs.data, window.input)?;
                Ok(Transformed::yes(LogicalPlan::Window(new)))
            }
            LogicalPlan::Aggregate(aggregate) => {
                let exprs = ordered_calls(&aggregate.aggr_expr, aggregate.input.schema(), &names)?;
                if !exprs.transformed {
                    return Ok(Transformed::no(LogicalPlan::Aggregate(aggregate)));
                }
                let new = Aggregate::try_new(aggregate.input, aggregate.group_expr, exprs.data)?;
                Ok(Transformed::yes(LogicalPlan::Aggregate(new)))
            }
            other => Ok(Transformed::no(other)),
        }
    }
}

/// The rule, for [`install_float_key_rule`](super::install_float_key_rule).
pub(crate) fn rule() -> Arc<dyn OptimizerRule + Send + Sync> {
    Arc::new(SparkFloatOrdering)
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Float64Array, Int32Array, RecordBatch};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::prelude::SessionContext;

    use super::*;
    use crate::datafusion::float_keys::NORMALIZE_NAN_AND_ZERO;

    /// `t(id, d)`: a NaN with its sign bit set (as Arrow holds it, not made canonical by a
    /// scan), 1.0, -0.0, 0.0, -inf, NaN, NULL for ids 1 to 7.
    fn session() -> SessionContext {
        let ctx = SessionContext::new();
        crate::datafusion::install_float_key_rule(&ctx);
        let neg_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("d", DataType::Float64, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5, 6, 7])),
                Arc::new(Float64Array::from(vec![
                    Some(neg_nan),
                    Some(1.0),
                    Some(-0.0),
                    Some(0.0),
                    Some(f64::NEG_INFINITY),
                    Some(f64::NAN),
                    None,
                ])),
            ],
        )
        .expect("batch");
        ctx.register_batch("t", batch).expect("register");
        ctx
    }

    async fn text(ctx: &SessionContext, sql: &str) -> String {
        let batches = ctx.sql(sql).await.expect(sql).collect().await.expect(sql);
        pretty_format_batches(&batches)
            .expect("format")
            .to_string()
            .replace(' ', "")
    }

    /// Sorts, window orders and an aggregate's `ORDER BY` put the zeros together and every
    /// NaN (the negative one too) above `+inf`; filters stay on the bare column; the
    /// rewrite is stable over the optimizer's passes.
    #[tokio::test]
    async fn float_sort_keys_are_normalized_and_nothing_else() {
        let ctx = session();
        let order = "|id|\n+----+\n|5|\n|4|\n|3|\n|2|\n|6|\n|1|\n|7|";
        let got = text(&ctx, "SELECT id FROM t ORDER BY d, id DESC").await;
        assert!(got.contains(order), "{got}");
        let got = text(
            &ctx,
            "SELECT array_agg(id ORDER BY d, id DESC) AS a, \
             array_agg(id ORDER BY d DESC NULLS LAST, id) AS b FROM t",
        )
        .await;
        assert!(got.contains("|[5,4,3,2,6,1,7]|[1,6,2,3,4,5,7]|"), "{got}");
        let got = text(
            &ctx,
            "SELECT id, dense_rank() OVER (ORDER BY d) AS r FROM t ORDER BY id",
        )
        .await;
        assert!(
            got.contains("|1|4|\n|2|3|\n|3|2|\n|4|2|\n|5|1|\n|6|4|\n|7|5|"),
            "{got}"
        );
        let plan = ctx
            .sql("SELECT id FROM t WHERE d > 0.5 ORDER BY d")
            .await
            .expect("sql")
            .into_optimized_plan()
            .expect("plan")
            .display_indent()
            .to_string();
        assert_eq!(plan.matches(NORMALIZE_NAN_AND_ZERO).count(), 1, "{plan}");
        assert!(
            plan.contains(&format!("Sort: {NORMALIZE_NAN_AND_ZERO}(t.d) ASC")),
            "{plan}"
        );
        assert!(plan.contains("t.d > Float64(0.5)"), "{plan}");
    }
}
