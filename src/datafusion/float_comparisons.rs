//! Float comparisons as Spark has them: `-0.0 = 0.0`, and every NaN equal to every other
//! and greater than every number, in every form a comparison takes.
//!
//! Spark compares `float`/`double` values with `SQLOrderingUtil.compareDoubles` (`x == y`
//! → equal, else `Double.compare`): the two zeros are equal, and all NaNs are one value
//! above `+∞`. DataFusion 55 folds `-0.0` into `0.0` for its binary comparisons (`=`, `<>`,
//! `<`, `<=`, `>`, `>=`, `IS [NOT] DISTINCT FROM`: `apply_cmp`), and icefloe's scan makes
//! every NaN it reads the canonical one (`canonical_nan`), so with a column or a literal on
//! each side Arrow's total order is Spark's. Four forms fell outside:
//!
//! - `x IN (v1, v2, v3, …)`: DataFusion's list filter compares bit patterns, so
//!   `d IN (0.0, 5.0, 6.0)` missed the `-0.0` row. A list of literals gets the other zero
//!   next to each zero (bounds and Parquet pruning still apply); a list with other values
//!   becomes `x = v1 OR x = v2 …` (`NOT IN`: `x <> v1 AND …`), which is what SQL defines
//!   `IN` as, NULLs included.
//! - `CASE x WHEN v …`: compared with Arrow's `eq`; its operand and `WHEN` values go
//!   through [`NORMALIZE_NAN_AND_ZERO`].
//! - `nullif(a, b)`: compared with Arrow's `eq`; it becomes `CASE WHEN a = b THEN NULL
//!   ELSE a END` (Spark's own definition of `nullif`), when `a` is not volatile.
//! - A NaN the query computes (`'inf' - 'inf'`, `d - d` of an infinite `d`: its sign bit
//!   is set on x86) compared below every number and unequal to `'NaN'`. Every compared
//!   float operand that is not a column (through casts and struct field accesses: values
//!   the scan made canonical) or a literal goes through [`NORMALIZE_NAN_AND_ZERO`]; a NaN
//!   literal becomes the canonical NaN. Columns stay bare, so filters on them prune.
//!
//! A column of a subquery that computes a NaN (`SELECT d - d AS x …` read above a
//! projection DataFusion did not merge) still compares by its bits.
//!
//! [`SparkFloatComparisons`] is this rewrite as an optimizer rule, run after DataFusion's
//! own (so `BETWEEN` is two comparisons and pushed filters sit in their scans), over the
//! expressions of filters, projections, joins, scans, aggregates and windows. Installed
//! by [`install_float_key_rule`](super::install_float_key_rule), with the float key rule.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::{Case, InList, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, ExprSchemable, LogicalPlan, Operator};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};

use super::compared_groups::is_comparison;
use super::float_keys::{normalize_nan_and_zero_udf, NORMALIZE_NAN_AND_ZERO};

/// The rule's name (as listed by the session's optimizer).
pub const SPARK_FLOAT_COMPARISONS_RULE: &str = "icefloe_spark_float_comparisons";

/// Spark's float comparisons as a DataFusion optimizer rule (see the module docs).
#[derive(Debug, Default)]
pub struct SparkFloatComparisons;

impl OptimizerRule for SparkFloatComparisons {
    fn name(&self) -> &str {
        SPARK_FLOAT_COMPARISONS_RULE
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
        let schema = match &plan {
            LogicalPlan::TableScan(scan) => {
                DFSchema::try_from_qualified_schema(scan.table_name.clone(), &scan.source.schema())?
            }
            LogicalPlan::Filter(_)
            | LogicalPlan::Projection(_)
            | LogicalPlan::Join(_)
            | LogicalPlan::Aggregate(_)
            | LogicalPlan::Window(_) => merge_schema(&plan.inputs()),
            _ => return Ok(Transformed::no(plan)),
        };
        let names = NamePreserver::new(&plan);
        plan.map_expressions(|expr| {
            let saved = names.save(&expr);
            let rewritten = expr.transform_up(|e| compared(e, &schema))?;
            Ok(match rewritten.transformed {
                true => Transformed::yes(saved.restore(rewritten.data)),
                false => rewritten,
            })
        })
    }
}

/// Whether `t` is a float type (compared by these rules).
fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

/// The type of `e` over `schema` when it is a float type.
fn float_type(e: &Expr, schema: &DFSchema) -> Option<DataType> {
    e.get_type(schema).ok().filter(is_float)
}

/// Whether `e` holds the values a scan read (NaNs canonical): a column, through casts,
/// aliases and struct field accesses, or a call of [`NORMALIZE_NAN_AND_ZERO`].
fn canonical_operand(e: &Expr) -> bool {
    match e {
        Expr::Column(_) => true,
        Expr::Alias(a) => canonical_operand(&a.expr),
        Expr::Cast(c) => canonical_operand(&c.expr),
        Expr::TryCast(c) => canonical_operand(&c.expr),
        Expr::ScalarFunction(f) => {
            f.func.name() == NORMALIZE_NAN_AND_ZERO
                || (f.func.name() == "get_field" && f.args.first().is_some_and(canonical_operand))
        }
        _ => false,
    }
}

/// A float literal's value with the canonical NaN for any NaN; `None` when `e` is not a
/// float literal.
fn canonical_literal(e: &Expr) -> Option<(ScalarValue, bool)> {
    let Expr::Literal(value, _) = e else {
        return None;
    };
    Some(match value {
        ScalarValue::Float64(Some(v)) if v.is_nan() && v.to_bits() != f64::NAN.to_bits() => {
            (ScalarValue::Float64(Some(f64::NAN)), true)
        }
        ScalarValue::Float32(Some(v)) if v.is_nan() && v.to_bits() != f32::NAN.to_bits() => {
            (ScalarValue::Float32(Some(f32::NAN)), true)
        }
        ScalarValue::Float64(_) | ScalarValue::Float32(_) | ScalarValue::Float16(_) => {
            (value.clone(), false)
        }
        _ => return None,
    })
}

/// `icefloe_normalize_nan_and_zero(e)`.
fn normalize(e: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(
        normalize_nan_and_zero_udf(),
        vec![e],
    ))
}

/// One compared float operand as Spark compares it: a NaN literal canonical, a computed
/// value normalized, a column or another literal as it is.
fn operand(e: Expr) -> Transformed<Expr> {
    if let Some((value, changed)) = canonical_literal(&e) {
        return match changed {
            true => Transformed::yes(Expr::Literal(value, None)),
            false => Transformed::no(e),
        };
    }
    match canonical_operand(&e) {
        true => Transformed::no(e),
        false => Transformed::yes(normalize(e)),
    }
}

/// `l op r` with both operands through [`operand`].
fn comparison(l: Expr, op: Operator, r: Expr) -> Transformed<Expr> {
    let (l, r) = (operand(l), operand(r));
    let changed = l.transformed || r.transformed;
    let e = Expr::BinaryExpr(BinaryExpr::new(Box::new(l.data), op, Box::new(r.data)));
    Transformed::new_transformed(e, changed)
}

/// `e` (whose children are rewritten already) as Spark compares floats.
fn compared(e: Expr, schema: &DFSchema) -> DFResult<Transformed<Expr>> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if is_comparison(op)
                && (float_type(&left, schema).is_some()
                    || float_type(&right, schema).is_some()) =>
        {
            Ok(comparison(*left, op, *right))
        }
        Expr::InList(list) if float_type(&list.expr, schema).is_some() => Ok(in_list(list)),
        Expr::Between(b) if float_type(&b.expr, schema).is_some() => {
            let (expr, low, high) = (operand(*b.expr), operand(*b.low), operand(*b.high));
            let changed = expr.transformed || low.transformed || high.transformed;
            let e = Expr::Between(Between::new(
                Box::new(expr.data),
                b.negated,
                Box::new(low.data),
                Box::new(high.data),
            ));
            Ok(Transformed::new_transformed(e, changed))
        }
        Expr::Case(case)
            if case
                .expr
                .as_deref()
                .is_some_and(|x| float_type(x, schema).is_some()) =>
        {
            Ok(case_operand(case))
        }
        Expr::ScalarFunction(f)
            if f.func.name() == "nullif"
                && f.args.len() == 2
                && float_type(&f.args[0], schema).is_some()
                && !f.args[0].is_volatile() =>
        {
            let ty = f.args[0].get_type(schema)?;
            let (a, b) = (f.args[0].clone(), f.args[1].clone());
            let equal = comparison(a.clone(), Operator::Eq, b).data;
            let null = Expr::Literal(ScalarValue::try_new_null(&ty)?, None);
            let case = Case::new(
                None,
                vec![(Box::new(equal), Box::new(null))],
                Some(Box::new(a)),
            );
            Ok(Transformed::yes(Expr::Case(case)))
        }
        other => Ok(Transformed::no(other)),
    }
}

/// `x [NOT] IN (…)` over a float `x` (see the module docs).
fn in_list(list: InList) -> Transformed<Expr> {
    let InList {
        expr,
        list: values,
        negated,
    } = list;
    if !values.iter().all(|v| canonical_literal(v).is_some()) {
        // `x IN (a, b)` is `x = a OR x = b` (`NOT IN`: `x <> a AND x <> b`)
        let (op, join) = match negated {
            false => (Operator::Eq, Operator::Or),
            true => (Operator::NotEq, Operator::And),
        };
        let folded = values
            .into_iter()
            .map(|v| comparison((*expr).clone(), op, v).data)
            .reduce(|a, b| Expr::BinaryExpr(BinaryExpr::new(Box::new(a), join, Box::new(b))));
        return match folded {
            Some(e) => Transformed::yes(e),
            None => Transformed::no(Expr::InList(InList::new(expr, vec![], negated))),
        };
    }
    let x = operand(*expr);
    let mut changed = x.transformed;
    let mut out: Vec<Expr> = Vec::with_capacity(values.len() + 1);
    let present = |out: &[Expr], v: &ScalarValue| {
        out.iter()
            .any(|e| matches!(e, Expr::Literal(w, _) if same_bits(w, v)))
    };
    for v in values {
        let Some((value, canonicalized)) = canonical_literal(&v) else {
            out.push(v);
            continue;
        };
        changed |= canonicalized;
        if let Some(other) = other_zero(&value) {
            if !present(&out, &other) {
                changed = true;
                out.push(Expr::Literal(other, None));
            }
        }
        if !present(&out, &value) {
            out.push(Expr::Literal(value, None));
        } else {
            changed = true;
        }
    }
    let e = Expr::InList(InList::new(Box::new(x.data), out, negated));
    Transformed::new_transformed(e, changed)
}

/// Whether two float scalars hold the same bits (NULLs alike).
fn same_bits(a: &ScalarValue, b: &ScalarValue) -> bool {
    match (a, b) {
        (ScalarValue::Float64(x), ScalarValue::Float64(y)) => {
            x.map(f64::to_bits) == y.map(f64::to_bits)
        }
        (ScalarValue::Float32(x), ScalarValue::Float32(y)) => {
            x.map(f32::to_bits) == y.map(f32::to_bits)
        }
        (ScalarValue::Float16(x), ScalarValue::Float16(y)) => {
            x.map(|v| v.to_bits()) == y.map(|v| v.to_bits())
        }
        _ => false,
    }
}

/// `0.0` for `-0.0` and `-0.0` for `0.0`; `None` for other values.
fn other_zero(v: &ScalarValue) -> Option<ScalarValue> {
    match v {
        ScalarValue::Float64(Some(x)) if *x == 0.0 => Some(ScalarValue::Float64(Some(-*x))),
        ScalarValue::Float32(Some(x)) if *x == 0.0 => Some(ScalarValue::Float32(Some(-*x))),
        ScalarValue::Float16(Some(x)) if x.to_f32() == 0.0 => Some(ScalarValue::Float16(Some(-*x))),
        _ => None,
    }
}

/// `CASE x WHEN v …` over a float `x`: `x` and every `v` normalized.
fn case_operand(case: Case) -> Transformed<Expr> {
    let wrap = |e: Box<Expr>| match canonical_literal(&e) {
        // a literal: its normalized value, computed now
        Some(_) => {
            let Expr::Literal(v, _) = *e else {
                return (e, false);
            };
            match normalized_scalar(&v) {
                Some(n) if !same_bits(&n, &v) => (Box::new(Expr::Literal(n, None)), true),
                _ => (Box::new(Expr::Literal(v, None)), false),
            }
        }
        None if is_normalized(&e) => (e, false),
        None => (Box::new(normalize(*e)), true),
    };
    let mut changed = false;
    let expr = case.expr.map(|x| {
        let (x, c) = wrap(x);
        changed |= c;
        x
    });
    let when_then_expr = case
        .when_then_expr
        .into_iter()
        .map(|(when, then)| {
            let (when, c) = wrap(when);
            changed |= c;
            (when, then)
        })
        .collect();
    let e = Expr::Case(Case::new(expr, when_then_expr, case.else_expr));
    Transformed::new_transformed(e, changed)
}

/// Whether `e` is a call of [`NORMALIZE_NAN_AND_ZERO`].
fn is_normalized(e: &Expr) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.func.name() == NORMALIZE_NAN_AND_ZERO)
}

/// A float scalar with `-0.0` made `0.0` and any NaN the canonical one.
fn normalized_scalar(v: &ScalarValue) -> Option<ScalarValue> {
    Some(match v {
        ScalarValue::Float64(Some(x)) if x.is_nan() => ScalarValue::Float64(Some(f64::NAN)),
        ScalarValue::Float64(Some(x)) if *x == 0.0 => ScalarValue::Float64(Some(0.0)),
        ScalarValue::Float32(Some(x)) if x.is_nan() => ScalarValue::Float32(Some(f32::NAN)),
        ScalarValue::Float32(Some(x)) if *x == 0.0 => ScalarValue::Float32(Some(0.0)),
        ScalarValue::Float64(_) | ScalarValue::Float32(_) => v.clone(),
        _ => return None,
    })
}

/// The rule, for [`install_float_key_rule`](super::install_float_key_rule).
pub(crate) fn rule() -> Arc<dyn OptimizerRule + Send + Sync> {
    Arc::new(SparkFloatComparisons)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Float64Array, RecordBatch};
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::prelude::SessionContext;

    async fn session() -> SessionContext {
        let ctx = SessionContext::new();
        crate::datafusion::install_float_key_rule(&ctx);
        let schema = Arc::new(Schema::new(vec![
            Field::new("d", DataType::Float64, true),
            Field::new("e", DataType::Float64, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Float64Array::from(vec![-0.0, 0.0, f64::INFINITY])),
                Arc::new(Float64Array::from(vec![0.0, -0.0, 1.0])),
            ],
        )
        .expect("batch");
        ctx.register_batch("t", batch).expect("register");
        ctx
    }

    async fn optimized(ctx: &SessionContext, sql: &str) -> String {
        let df = ctx.sql(sql).await.expect(sql);
        let plan = df.into_optimized_plan().expect(sql);
        let text = plan.display_indent().to_string();
        text
    }

    /// Lists of literals keep both zeros once (however often the optimizer runs), bare
    /// columns and literals stay unwrapped (so filters prune), computed operands and
    /// `CASE x WHEN` go through the normalization, `nullif` becomes a `CASE`.
    #[tokio::test]
    async fn the_rewrite_keeps_columns_bare_and_is_stable() {
        let ctx = session().await;
        let plan = optimized(
            &ctx,
            "SELECT d FROM t WHERE d IN (0.0, -0.0, 0.0, 5.0, 6.0) AND d > e AND d < 1.0",
        )
        .await;
        assert!(
            plan.contains("t.d IN ([Float64(0), Float64(-0), Float64(5), Float64(6)])")
                || plan.contains("t.d IN ([Float64(-0), Float64(0), Float64(5), Float64(6)])"),
            "{plan}"
        );
        assert!(!plan.contains(NORMALIZE_NAN_AND_ZERO), "{plan}");
        let plan = optimized(
            &ctx,
            "SELECT CASE d WHEN 0.0 THEN 1 END AS c, nullif(d, e) AS n FROM t WHERE d - d > 1.0",
        )
        .await;
        assert!(
            plan.contains(&format!("{NORMALIZE_NAN_AND_ZERO}(t.d - t.d) > Float64(1)")),
            "{plan}"
        );
        assert!(
            plan.contains(&format!(
                "CASE {NORMALIZE_NAN_AND_ZERO}(t.d) WHEN Float64(0)"
            )),
            "{plan}"
        );
        assert!(
            plan.contains("CASE WHEN t.d = t.e THEN") || plan.contains("CASE WHEN t.e = t.d THEN"),
            "{plan}"
        );
        let rows = ctx
            .sql("SELECT count(*) FROM t WHERE d IN (0.0, 5.0, 6.0) AND d - d > 1.0")
            .await
            .expect("sql")
            .collect()
            .await
            .expect("collect");
        // -0.0 and 0.0 are in the list but 0 - 0 is not above 1: no row; inf - inf is NaN
        let total: usize = rows.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(total, 1);
    }
}
