//! Float keys as Spark has them: `-0.0` and `0.0` are one key, and so is every NaN, in
//! `GROUP BY`, `DISTINCT`, `count(DISTINCT …)`, join keys (`JOIN … ON a.d = b.d`,
//! `IN (subquery)`, `EXISTS`), set operations (`UNION`, `INTERSECT`, `EXCEPT`) and window
//! partitions, also inside structs, lists and maps.
//!
//! Spark's optimizer rule `NormalizeFloatingNumbers` wraps every grouping, join and window
//! partition key holding a float in `NormalizeNaNAndZero` (`-0.0` → `0.0`, every NaN the
//! one NaN), through struct fields and array elements; `DISTINCT` and the set operations
//! become aggregates and joins first, and `count(DISTINCT d)` groups by `d`. So `SELECT
//! DISTINCT d` of {0.0, -0.0} is one row holding `0.0`, and `GROUP BY s` merges
//! `{a: 1, b: -0.0}` with `{a: 1, b: 0.0}`. DataFusion 55 folds `-0.0` into `0.0` for a
//! single float `GROUP BY` column only (its hash of floats does so everywhere, its
//! equality does not): `count(DISTINCT d)` counted both zeros, a struct or a second key
//! column kept two groups, a window partitioned by `d` had two partitions.
//!
//! [`NormalizeFloatingNumbers`] is the same rewrite as a DataFusion optimizer rule, run
//! after DataFusion's own (so `DISTINCT`, `INTERSECT` and `IN (subquery)` are aggregates and
//! joins by then): it wraps, in [`NORMALIZE_NAN_AND_ZERO`], the grouping expressions of
//! every aggregate (grouping sets too), the arguments of its `DISTINCT` aggregate functions
//! (not of `min`/`max`, where `DISTINCT` changes nothing: Spark drops it before
//! normalizing), the keys of every equi-join and the partition keys of every window
//! function, when they hold a float at any depth. Names stay as they were (aliases), so the
//! plan's schema does not change; a grouped column reads back normalized, as in Spark.
//! Installed by [`install_float_key_rule`] (called by `sql::execute`, and so the CLI,
//! [`register_iceberg_factory`](super::register_iceberg_factory) and
//! [`register_iceberg_functions`](super::register_iceberg_functions)).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::tree_node::{Transformed, TreeNodeIterator};
use datafusion::common::{exec_err, DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::{
    AggregateFunction, AggregateFunctionParams, ScalarFunction, WindowFunction,
};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{
    Aggregate, ColumnarValue, Expr, ExprSchemable, GroupingSet, Join, LogicalPlan, ReturnFieldArgs,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, SortExpr, Volatility, Window,
};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};
use datafusion::prelude::SessionContext;

use crate::nan::{holds_floats, normalized_floats};

/// The name of the scalar function (also how plan codecs send it).
pub const NORMALIZE_NAN_AND_ZERO: &str = "icefloe_normalize_nan_and_zero";

/// The rule's name (as listed by the session's optimizer).
pub const NORMALIZE_FLOATING_NUMBERS_RULE: &str = "icefloe_normalize_floating_numbers";

/// `icefloe_normalize_nan_and_zero(value)`: `value` with every `-0.0` made `0.0` and every
/// NaN the canonical one, at any depth ([`crate::nan::normalized_floats`]); of the
/// value's type, nullability and field metadata. Values without floats pass unchanged.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct NormalizeNanAndZero {
    signature: Signature,
}

impl Default for NormalizeNanAndZero {
    fn default() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

/// The [`NormalizeNanAndZero`] function.
pub fn normalize_nan_and_zero_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(NormalizeNanAndZero::default()))
}

impl ScalarUDFImpl for NormalizeNanAndZero {
    fn name(&self) -> &str {
        NORMALIZE_NAN_AND_ZERO
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> DFResult<DataType> {
        match arg_types {
            [value] => Ok(value.clone()),
            _ => exec_err!("{NORMALIZE_NAN_AND_ZERO} takes one value, not {arg_types:?}"),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DFResult<FieldRef> {
        match args.arg_fields {
            [value] => Ok(Arc::new(value.as_ref().clone().with_name(self.name()))),
            _ => exec_err!("{NORMALIZE_NAN_AND_ZERO} takes one value"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        match args.args.as_slice() {
            [ColumnarValue::Array(array)] => Ok(ColumnarValue::Array(
                normalized_floats(array)?.unwrap_or_else(|| Arc::clone(array)),
            )),
            [ColumnarValue::Scalar(scalar)] => match normalized_floats(&scalar.to_array()?)? {
                Some(array) => Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                    &array, 0,
                )?)),
                None => Ok(ColumnarValue::Scalar(scalar.clone())),
            },
            _ => exec_err!("{NORMALIZE_NAN_AND_ZERO} takes one value"),
        }
    }
}

/// Spark's `NormalizeFloatingNumbers` as a DataFusion optimizer rule (see the module docs).
#[derive(Debug, Default)]
pub struct NormalizeFloatingNumbers;

/// Whether `expr` (under its aliases) is a call of [`NORMALIZE_NAN_AND_ZERO`] already.
pub(crate) fn is_normalized(expr: &Expr) -> bool {
    match expr {
        Expr::Alias(alias) => is_normalized(&alias.expr),
        Expr::ScalarFunction(f) => f.func.name() == NORMALIZE_NAN_AND_ZERO,
        _ => false,
    }
}

/// `expr` (a key over `schema`) normalized, when it holds a float and is not normalized
/// yet; its name is kept by `names` (an alias where the plan's schema shows it; none
/// for the arguments of a function).
fn normalized_key(
    expr: Expr,
    schema: &DFSchema,
    names: Option<&NamePreserver>,
) -> DFResult<Transformed<Expr>> {
    if is_normalized(&expr) || !holds_floats(&expr.get_type(schema)?) {
        return Ok(Transformed::no(expr));
    }
    let saved = names.map(|n| n.save(&expr));
    let call = normalize(expr);
    Ok(Transformed::yes(match saved {
        Some(saved) => saved.restore(call),
        None => call,
    }))
}

/// `icefloe_normalize_nan_and_zero(expr)`.
pub(crate) fn normalize(expr: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(
        normalize_nan_and_zero_udf(),
        vec![expr],
    ))
}

/// Each of `exprs` through [`normalized_key`].
fn normalized_keys(
    exprs: Vec<Expr>,
    schema: &DFSchema,
    names: Option<&NamePreserver>,
) -> DFResult<Transformed<Vec<Expr>>> {
    exprs
        .into_iter()
        .map_until_stop_and_collect(|e| normalized_key(e, schema, names))
}

/// A grouping expression normalized: each expression of a grouping set, or the
/// expression itself.
fn normalized_group(
    expr: Expr,
    schema: &DFSchema,
    names: &NamePreserver,
) -> DFResult<Transformed<Expr>> {
    let names = Some(names);
    let set = match expr {
        Expr::GroupingSet(set) => set,
        other => return normalized_key(other, schema, names),
    };
    Ok(match set {
        GroupingSet::Rollup(exprs) => {
            normalized_keys(exprs, schema, names)?.update_data(GroupingSet::Rollup)
        }
        GroupingSet::Cube(exprs) => {
            normalized_keys(exprs, schema, names)?.update_data(GroupingSet::Cube)
        }
        GroupingSet::GroupingSets(sets) => sets
            .into_iter()
            .map_until_stop_and_collect(|exprs| normalized_keys(exprs, schema, names))?
            .update_data(GroupingSet::GroupingSets),
    }
    .update_data(Expr::GroupingSet))
}

/// An aggregate expression whose `DISTINCT` arguments (and the `ORDER BY` within it)
/// are normalized; `min`/`max` and aggregates without `DISTINCT` stay as they are.
fn normalized_distinct(
    expr: Expr,
    schema: &DFSchema,
    names: &NamePreserver,
) -> DFResult<Transformed<Expr>> {
    let saved = names.save(&expr);
    let mut inner = &expr;
    while let Expr::Alias(alias) = inner {
        inner = alias.expr.as_ref();
    }
    let Expr::AggregateFunction(AggregateFunction { func, params }) = inner else {
        return Ok(Transformed::no(expr));
    };
    if !params.distinct || matches!(func.name(), "min" | "max") {
        return Ok(Transformed::no(expr));
    }
    let args = normalized_keys(params.args.clone(), schema, None)?;
    let mut changed = args.transformed;
    let order_by = params
        .order_by
        .iter()
        .map(|sort| {
            let t = normalized_key(sort.expr.clone(), schema, None)?;
            changed |= t.transformed;
            Ok(SortExpr::new(t.data, sort.asc, sort.nulls_first))
        })
        .collect::<DFResult<Vec<_>>>()?;
    if !changed {
        return Ok(Transformed::no(expr));
    }
    let call = Expr::AggregateFunction(AggregateFunction {
        func: Arc::clone(func),
        params: AggregateFunctionParams {
            args: args.data,
            order_by,
            ..params.clone()
        },
    });
    Ok(Transformed::yes(saved.restore(call)))
}

/// A window expression whose `PARTITION BY` keys are normalized.
fn normalized_partitions(
    expr: Expr,
    schema: &DFSchema,
    names: &NamePreserver,
) -> DFResult<Transformed<Expr>> {
    let saved = names.save(&expr);
    let mut inner = &expr;
    while let Expr::Alias(alias) = inner {
        inner = alias.expr.as_ref();
    }
    let Expr::WindowFunction(window) = inner else {
        return Ok(Transformed::no(expr));
    };
    let partition_by = normalized_keys(window.params.partition_by.clone(), schema, None)?;
    if !partition_by.transformed {
        return Ok(Transformed::no(expr));
    }
    let mut window: WindowFunction = window.as_ref().clone();
    window.params.partition_by = partition_by.data;
    let call = Expr::WindowFunction(Box::new(window));
    Ok(Transformed::yes(saved.restore(call)))
}

impl OptimizerRule for NormalizeFloatingNumbers {
    fn name(&self) -> &str {
        NORMALIZE_FLOATING_NUMBERS_RULE
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
            LogicalPlan::Aggregate(aggregate) => {
                let schema = Arc::clone(aggregate.input.schema());
                let groups = aggregate
                    .group_expr
                    .clone()
                    .into_iter()
                    .map_until_stop_and_collect(|e| normalized_group(e, &schema, &names))?;
                let aggrs = aggregate
                    .aggr_expr
                    .clone()
                    .into_iter()
                    .map_until_stop_and_collect(|e| normalized_distinct(e, &schema, &names))?;
                if !groups.transformed && !aggrs.transformed {
                    return Ok(Transformed::no(LogicalPlan::Aggregate(aggregate)));
                }
                let new = Aggregate::try_new(aggregate.input, groups.data, aggrs.data)?;
                Ok(Transformed::yes(LogicalPlan::Aggregate(new)))
            }
            LogicalPlan::Join(join) => {
                let (left, right) = (join.left.schema(), join.right.schema());
                let mut changed = false;
                let mut on = Vec::with_capacity(join.on.len());
                for (l, r) in &join.on {
                    let floats =
                        holds_floats(&l.get_type(left)?) || holds_floats(&r.get_type(right)?);
                    if !floats || (is_normalized(l) && is_normalized(r)) {
                        on.push((l.clone(), r.clone()));
                        continue;
                    }
                    changed = true;
                    let wrap = |e: &Expr| match is_normalized(e) {
                        true => e.clone(),
                        false => normalize(e.clone()),
                    };
                    on.push((wrap(l), wrap(r)));
                }
                if !changed {
                    return Ok(Transformed::no(LogicalPlan::Join(join)));
                }
                // the schema does not depend on the keys
                Ok(Transformed::yes(LogicalPlan::Join(Join { on, ..join })))
            }
            LogicalPlan::Window(window) => {
                let schema = Arc::clone(window.input.schema());
                let exprs = window
                    .window_expr
                    .clone()
                    .into_iter()
                    .map_until_stop_and_collect(|e| normalized_partitions(e, &schema, &names))?;
                if !exprs.transformed {
                    return Ok(Transformed::no(LogicalPlan::Window(window)));
                }
                let new = Window::try_new(exprs.data, window.input)?;
                Ok(Transformed::yes(LogicalPlan::Window(new)))
            }
            other => Ok(Transformed::no(other)),
        }
    }
}

/// Add [`NormalizeFloatingNumbers`] and, after it, Spark's float comparisons
/// ([`SparkFloatComparisons`](super::float_comparisons::SparkFloatComparisons)) and
/// ordering ([`SparkFloatOrdering`](super::float_order::SparkFloatOrdering)) at the end of
/// `ctx`'s optimizer, each once (a second call does nothing), and Spark's `greatest` /
/// `least` of floats ([`super::greatest_least`]) in its functions; and, in its analyzer,
/// Spark's three-valued `IN (subquery)` ([`super::null_aware_in`]) and `IN` list pairs
/// ([`super::in_list_pairs`]) and Spark's `isnan` of NULL ([`super::spark_isnan`]), which
/// the same
/// sessions (every one icefloe sets up for Spark's rows) need; and Parquet files read by
/// path keep their NaN rows ([`super::nan_safe_parquet`]).
pub fn install_float_key_rule(ctx: &SessionContext) {
    super::null_aware_in::install_null_aware_in_rule(ctx);
    super::in_list_pairs::install_in_list_pairs_rule(ctx);
    super::spark_isnan::install_spark_isnan_rule(ctx);
    let present = |name: &str| {
        ctx.state_ref()
            .read()
            .optimizers()
            .iter()
            .any(|r| r.name() == name)
    };
    if !present(NORMALIZE_FLOATING_NUMBERS_RULE) {
        ctx.add_optimizer_rule(Arc::new(NormalizeFloatingNumbers));
    }
    if !present(super::float_comparisons::SPARK_FLOAT_COMPARISONS_RULE) {
        ctx.add_optimizer_rule(super::float_comparisons::rule());
    }
    if !present(super::float_order::SPARK_FLOAT_ORDERING_RULE) {
        ctx.add_optimizer_rule(super::float_order::rule());
    }
    super::greatest_least::register_greatest_least(ctx);
    super::nan_safe_parquet::install_nan_safe_parquet(ctx);
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array};
    use datafusion::arrow::datatypes::Float64Type;

    use super::*;

    async fn optimized(ctx: &SessionContext, sql: &str) -> String {
        let df = ctx.sql(sql).await.expect(sql);
        df.into_optimized_plan()
            .expect(sql)
            .display_indent()
            .to_string()
    }

    async fn one_number(ctx: &SessionContext, sql: &str) -> i64 {
        let batches = ctx.sql(sql).await.expect(sql).collect().await.expect(sql);
        let column = batches[0].column(0);
        datafusion::arrow::compute::cast(column, &DataType::Int64)
            .expect("cast")
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0)
    }

    #[test]
    fn the_function_folds_zeros_and_nans_of_scalars_and_arrays() {
        let udf = normalize_nan_and_zero_udf();
        let neg_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
        let array: ArrayRef = Arc::new(Float64Array::from(vec![Some(-0.0), None, Some(neg_nan)]));
        let field = Arc::new(datafusion::arrow::datatypes::Field::new(
            "d",
            DataType::Float64,
            true,
        ));
        let call = |args: Vec<ColumnarValue>, rows: usize| {
            udf.invoke_with_args(ScalarFunctionArgs {
                args,
                arg_fields: vec![Arc::clone(&field)],
                number_rows: rows,
                return_field: Arc::clone(&field),
                config_options: Arc::default(),
            })
            .expect("invoke")
        };
        let ColumnarValue::Array(out) = call(vec![ColumnarValue::Array(array)], 3) else {
            panic!("not an array")
        };
        let out = out.as_primitive::<Float64Type>();
        assert_eq!(out.value(0).to_bits(), 0);
        assert!(out.is_null(1));
        assert_eq!(out.value(2).to_bits(), f64::NAN.to_bits());
        let scalar = ColumnarValue::Scalar(ScalarValue::Float64(Some(-0.0)));
        let ColumnarValue::Scalar(ScalarValue::Float64(Some(v))) = call(vec![scalar], 1) else {
            panic!("not a double")
        };
        assert_eq!(v.to_bits(), 0);
    }

    /// The rule is installed once, normalizes float keys and `DISTINCT` arguments, and
    /// leaves other keys, `min`/`max` and aggregates without `DISTINCT` alone.
    #[tokio::test]
    async fn float_keys_are_normalized_and_nothing_else() {
        let ctx = SessionContext::new();
        crate::datafusion::register_min_max(&ctx);
        install_float_key_rule(&ctx);
        install_float_key_rule(&ctx);
        let rules = ctx
            .state()
            .optimizers()
            .iter()
            .filter(|r| r.name() == NORMALIZE_FLOATING_NUMBERS_RULE)
            .count();
        assert_eq!(rules, 1);
        let rows = "(VALUES (CAST('-0.0' AS DOUBLE), 1, CAST('0.5' AS DOUBLE)), \
                    (CAST('0.0' AS DOUBLE), 2, CAST('-0.0' AS DOUBLE)))";
        let values = format!("{rows} AS t(d, i, e)");
        for sql in [
            format!("SELECT i, count(*) FROM {values} GROUP BY i"),
            format!("SELECT sum(e), min(DISTINCT e), max(d) FROM {values}"),
            format!("SELECT count(*) OVER (PARTITION BY i ORDER BY i) FROM {values}"),
        ] {
            let plan = optimized(&ctx, &sql).await;
            assert!(!plan.contains(NORMALIZE_NAN_AND_ZERO), "{sql}: {plan}");
        }
        for (sql, expected) in [
            (format!("SELECT count(DISTINCT d) FROM {values}"), 1),
            (
                format!("SELECT count(*) FROM (SELECT DISTINCT d FROM {values})"),
                1,
            ),
            (
                format!("SELECT count(*) FROM (SELECT DISTINCT d, e FROM {values})"),
                2,
            ),
            (
                format!("SELECT count(*) FROM {values} GROUP BY d, i HAVING count(DISTINCT e) = 1"),
                1,
            ),
            (
                format!("SELECT count(*) FROM {values} JOIN {rows} AS u(x, y, z) ON t.d = u.x"),
                4,
            ),
            (
                format!(
                    "SELECT max(n) FROM (SELECT count(*) OVER (PARTITION BY d) AS n FROM {values})"
                ),
                2,
            ),
            // `min(DISTINCT e)` is `min(e)`: -0.0, whose sign the division shows
            (
                format!("SELECT CASE WHEN 1 / min(DISTINCT e) < 0 THEN 1 ELSE 0 END FROM {values}"),
                1,
            ),
        ] {
            assert_eq!(one_number(&ctx, &sql).await, expected, "{sql}");
        }
    }
}
