//! [`TimeUnitLiterals`]: `WHERE t > TIME '12:00:00'` on an Iceberg `time` column.
//!
//! An Iceberg `time` is an Arrow `Time64(Microsecond)`; DataFusion's `TIME '…'` literal is
//! a `Time64(Nanosecond)`, and DataFusion 55 does not unify two time units in a
//! comparison ("Cannot infer common argument type for comparison operation Time64(µs) >
//! Time64(ns)"). Spark and DuckDB compare times whatever their precision.
//!
//! This expression rewrite, run before DataFusion's type coercion, gives the values one
//! compares (both sides of `=`, `<>`, `<`, `<=`, `>`, `>=`, `IS [NOT] DISTINCT FROM`, `IN`
//! lists, `BETWEEN`) one time unit when their units differ. A literal is restated in the
//! unit of the other values when it is exactly that many whole units (`TIME '12:00:00'`
//! as microseconds), so a column is compared as it is, and its files are still pruned by
//! their bounds; otherwise (`TIME '12:00:00.0000005'` against microseconds, or two
//! columns of different units) every value is cast to the finest unit in the group, which
//! loses nothing. Installed (once) by [`install_time_literal_rule`], which
//! [`register_iceberg_factory`](super::register_iceberg_factory) and
//! [`sql::execute`](super::sql::execute) (and so the CLI) call.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable};
use datafusion::prelude::SessionContext;

use super::compared_groups::{
    install_once, install_planner_once, unify_compared, ComparisonPlanner,
};

/// The rewrite's name (as listed by the session's analyzer).
pub const TIME_UNIT_LITERALS_RULE: &str = "icefloe_time_unit_literals";

/// A [`FunctionRewrite`]: compared time values get one unit (see the module docs).
#[derive(Debug, Default)]
pub struct TimeUnitLiterals;

/// Nanoseconds in one `unit`.
fn nanos(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// The Arrow time type of `unit` (32 bits for seconds and milliseconds, as Arrow has it).
fn time_type(unit: TimeUnit) -> DataType {
    match unit {
        TimeUnit::Second | TimeUnit::Millisecond => DataType::Time32(unit),
        TimeUnit::Microsecond | TimeUnit::Nanosecond => DataType::Time64(unit),
    }
}

/// The time unit of `expr`'s type in `schema`, if it is a time.
fn unit_of(expr: &Expr, schema: &DFSchema) -> Option<TimeUnit> {
    match expr.get_type(schema).ok()? {
        DataType::Time32(u) | DataType::Time64(u) => Some(u),
        _ => None,
    }
}

/// A time literal as (nanoseconds since midnight, unit); `Some(None, unit)` for NULL.
/// `TIME '12:00:00'` is planned as a cast of the string to a time, which counts as the
/// literal it makes.
fn time_literal(expr: &Expr) -> Option<(Option<i64>, TimeUnit)> {
    let folded;
    let value = match expr {
        Expr::Literal(value, _) => value,
        Expr::Cast(cast) => {
            let data_type = cast.field.data_type();
            match cast.expr.as_ref() {
                Expr::Literal(value, _)
                    if matches!(data_type, DataType::Time32(_) | DataType::Time64(_)) =>
                {
                    folded = value.cast_to(data_type).ok()?;
                    &folded
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(match value {
        ScalarValue::Time32Second(v) => (
            v.map(|v| i64::from(v) * nanos(TimeUnit::Second)),
            TimeUnit::Second,
        ),
        ScalarValue::Time32Millisecond(v) => (
            v.map(|v| i64::from(v) * nanos(TimeUnit::Millisecond)),
            TimeUnit::Millisecond,
        ),
        ScalarValue::Time64Microsecond(v) => (
            v.map(|v| v.saturating_mul(nanos(TimeUnit::Microsecond))),
            TimeUnit::Microsecond,
        ),
        ScalarValue::Time64Nanosecond(v) => (*v, TimeUnit::Nanosecond),
        _ => return None,
    })
}

/// `nanos_since_midnight` as a literal of `unit`, if it is a whole number of them.
/// `None` also when it does not fit the unit's type.
fn literal_in(nanos_since_midnight: Option<i64>, unit: TimeUnit) -> Option<ScalarValue> {
    let per = nanos(unit);
    let whole = match nanos_since_midnight {
        Some(n) if n % per != 0 => return None,
        Some(n) => Some(n / per),
        None => None,
    };
    let narrow = |v: Option<i64>| match v {
        Some(v) => i32::try_from(v).ok().map(Some),
        None => Some(None),
    };
    Some(match unit {
        TimeUnit::Second => ScalarValue::Time32Second(narrow(whole)?),
        TimeUnit::Millisecond => ScalarValue::Time32Millisecond(narrow(whole)?),
        TimeUnit::Microsecond => ScalarValue::Time64Microsecond(whole),
        TimeUnit::Nanosecond => ScalarValue::Time64Nanosecond(whole),
    })
}

/// Give the time values of `group` one unit when they have several (see the module
/// docs). Returns whether anything changed.
fn unify(group: &mut [&mut Expr], schema: &DFSchema) -> bool {
    let units: Vec<Option<TimeUnit>> = group.iter().map(|e| unit_of(e, schema)).collect();
    let mut distinct: Vec<TimeUnit> = units.iter().flatten().copied().collect();
    distinct.sort_by_key(|u| std::cmp::Reverse(nanos(*u)));
    distinct.dedup();
    if distinct.len() < 2 {
        return false;
    }
    // the units of the values that are not literals
    let mut others: Vec<TimeUnit> = group
        .iter()
        .zip(&units)
        .filter(|(e, u)| u.is_some() && time_literal(e).is_none())
        .filter_map(|(_, u)| *u)
        .collect();
    others.sort_by_key(|u| nanos(*u));
    others.dedup();
    if let [unit] = others[..] {
        let restated: Option<Vec<Option<ScalarValue>>> = group
            .iter()
            .map(|e| match time_literal(e) {
                Some((n, u)) if u != unit => literal_in(n, unit).map(Some),
                _ => Some(None),
            })
            .collect();
        if let Some(restated) = restated {
            for (expr, value) in group.iter_mut().zip(restated) {
                if let Some(value) = value {
                    **expr = Expr::Literal(value, None);
                }
            }
            return true;
        }
    }
    // the finest unit for all
    let Some(finest) = distinct.last().copied() else {
        return false;
    };
    for (expr, unit) in group.iter_mut().zip(units) {
        if unit.is_some_and(|u| u != finest) {
            let value = std::mem::replace(&mut **expr, Expr::Literal(ScalarValue::Null, None));
            **expr = Expr::Cast(Cast::new(Box::new(value), time_type(finest)));
        }
    }
    true
}

impl FunctionRewrite for TimeUnitLiterals {
    fn name(&self) -> &str {
        TIME_UNIT_LITERALS_RULE
    }

    fn rewrite(
        &self,
        mut expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        let changed = unify_compared(&mut expr, |group| Ok(unify(group, schema)))?.unwrap_or(false);
        Ok(if changed {
            Transformed::yes(expr)
        } else {
            Transformed::no(expr)
        })
    }
}

/// Add [`TimeUnitLiterals`] to `ctx`'s analyzer, and its rewrite of a comparison to the
/// SQL planner ([`ComparisonPlanner`]: `NOT (tm > TIME '11:00:00')`), once (a second call
/// does nothing).
pub fn install_time_literal_rule(ctx: &SessionContext) {
    install_once(ctx, Arc::new(TimeUnitLiterals));
    install_planner_once(
        ctx,
        ComparisonPlanner {
            name: TIME_UNIT_LITERALS_RULE,
            unify: |group, schema| Ok(unify(group, schema)),
        },
    );
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{Int32Array, RecordBatch, Time64MicrosecondArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::prelude::SessionContext;

    use super::install_time_literal_rule;

    /// `t(id int, tm time)` (microseconds, as Iceberg's `time`): 11:59:59.999999,
    /// 12:00:00, 12:00:00.000001, NULL.
    fn session() -> SessionContext {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("tm", DataType::Time64(TimeUnit::Microsecond), true),
        ]));
        let noon = 12 * 3_600_000_000i64;
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
                Arc::new(Time64MicrosecondArray::from(vec![
                    Some(noon - 1),
                    Some(noon),
                    Some(noon + 1),
                    None,
                ])),
            ],
        )
        .unwrap();
        let ctx = SessionContext::new();
        ctx.register_batch("t", batch).unwrap();
        install_time_literal_rule(&ctx);
        install_time_literal_rule(&ctx);
        ctx
    }

    async fn ids(ctx: &SessionContext, condition: &str) -> Vec<i32> {
        let sql = format!("SELECT id FROM t WHERE {condition} ORDER BY id");
        let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        batches
            .iter()
            .flat_map(|b| {
                let col = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
                col.values().to_vec()
            })
            .collect()
    }

    #[tokio::test]
    async fn time_literals_compare_with_microsecond_columns() {
        let ctx = session();
        assert_eq!(ids(&ctx, "tm = TIME '12:00:00'").await, [2]);
        assert_eq!(ids(&ctx, "TIME '12:00:00' < tm").await, [3]);
        assert_eq!(ids(&ctx, "tm >= TIME '12:00:00'").await, [2, 3]);
        assert_eq!(ids(&ctx, "tm <> TIME '12:00:00'").await, [1, 3]);
        // under NOT, which DataFusion's planner types at once
        assert_eq!(ids(&ctx, "NOT (tm > TIME '12:00:00')").await, [1, 2]);
        assert_eq!(ids(&ctx, "NOT (TIME '12:00:00' = tm)").await, [1, 3]);
        assert_eq!(
            ids(&ctx, "tm IS DISTINCT FROM TIME '12:00:00'").await,
            [1, 3, 4]
        );
        assert_eq!(
            ids(
                &ctx,
                "tm IN (TIME '11:59:59.999999', TIME '12:00:00.000001')"
            )
            .await,
            [1, 3]
        );
        assert_eq!(
            ids(
                &ctx,
                "tm BETWEEN TIME '11:59:59.999999' AND TIME '12:00:00'"
            )
            .await,
            [1, 2]
        );
        // finer than the column: compared exactly, in nanoseconds
        assert_eq!(ids(&ctx, "tm > TIME '12:00:00.0000005'").await, [3]);
        assert_eq!(ids(&ctx, "tm < TIME '12:00:00.0000005'").await, [1, 2]);
        assert_eq!(
            ids(&ctx, "tm = TIME '12:00:00.0000005'").await,
            Vec::<i32>::new()
        );
        // coarser literals (seconds, milliseconds)
        assert_eq!(
            ids(&ctx, "tm < arrow_cast(TIME '12:00:00', 'Time32(Second)')").await,
            [1]
        );
        assert_eq!(
            ids(
                &ctx,
                "tm >= arrow_cast(TIME '12:00:00', 'Time32(Millisecond)')"
            )
            .await,
            [2, 3]
        );
        // a literal in the column's unit is left as it is; the column is not cast
        let plan = ctx
            .sql("EXPLAIN SELECT id FROM t WHERE tm > TIME '12:00:00'")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let text = pretty_format_batches(&plan).unwrap().to_string();
        assert!(!text.contains("CAST(t.tm"), "{text}");
        // strings still compare as before (DataFusion casts them to the column's type)
        assert_eq!(ids(&ctx, "tm > '12:00:00'").await, [3]);
    }
}
