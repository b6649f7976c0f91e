//! [`TimestampRangeLiterals`]: timestamp literals of years 0001 to 9999, as Spark and
//! Iceberg hold them (`WHERE ts < TIMESTAMP '1500-01-01 00:00:00'`).
//!
//! Iceberg's `timestamp` and `timestamptz` hold microseconds since the epoch (spec
//! "Primitive Types"), Spark's `TIMESTAMP` literals range over years 0001 to 9999, and
//! icefloe writes and reads such values. DataFusion 55 plans every `TIMESTAMP '…'`
//! literal (and `TIMESTAMPTZ '…'`, `CAST('…' AS TIMESTAMP)`, a `DATE` cast to a
//! timestamp) as a cast to `Timestamp(Nanosecond)`, whose `i64` holds only 1677-09-21 to
//! 2262-04-11, and its type coercion compares a string or a date with a timestamp
//! column in nanoseconds too: `TIMESTAMP '0001-01-01 00:00:00'`, `ts < '1500-01-01'`,
//! `ts < DATE '1500-01-01'` failed ("Overflow converting 1500-01-01 00:00:00 to
//! Nanosecond", "Cannot cast Date32 value -171664 to Timestamp(ns)").
//!
//! This expression rewrite, run before DataFusion's type coercion, restates such a
//! constant in microseconds when nanoseconds cannot hold it and microseconds can:
//! - a cast (or `TRY_CAST`) of a constant (a literal, or a cast of one) to
//!   `Timestamp(Nanosecond, zone)` becomes a cast to `Timestamp(Microsecond, zone)`;
//! - a string or date constant compared (`=`, `<>`, `<`, `<=`, `>`, `>=`,
//!   `IS [NOT] DISTINCT FROM`, `IN` lists, `BETWEEN`) with a timestamp of microseconds
//!   (or a coarser unit) is cast to `Timestamp(Microsecond, zone)`, `zone` that
//!   timestamp's, so the column is compared as it is (and its files are pruned by their
//!   bounds and partition values); the other string, date and nanosecond timestamp
//!   constants of that comparison, `IN` list or `BETWEEN` too (nanoseconds floored), or
//!   DataFusion would compare them all in nanoseconds;
//! - a date that is no constant (a `date` column) compared with a timestamp is compared
//!   as a microsecond timestamp, with every timestamp, date and string of its group, for
//!   any literal (the column's own dates may lie outside nanoseconds' range; see
//!   `unify_dates`).
//!
//! A string is read as DataFusion reads it in nanoseconds (without an offset, a wall-clock
//! time in the zone of the type it is cast to); digits below the microsecond are floored,
//! as Spark's and Iceberg Java's microsecond timestamps floor them. Constants nanoseconds
//! hold, and a value that is no timestamp, are left to DataFusion (and its errors). Not
//! covered: arithmetic whose result leaves the range (`TIMESTAMP '2000-01-01' - INTERVAL
//! '1000' YEAR`: the literal itself is nanoseconds), and casts of columns
//! (`CAST(date_column AS TIMESTAMP)` of a year-0001 date). Installed (once) by
//! [`install_timestamp_literal_rule`], which
//! [`register_iceberg_factory`](super::register_iceberg_factory) and
//! [`sql::execute`](super::sql::execute) (and so the CLI) call.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, TryCast};
use datafusion::prelude::SessionContext;

use super::compared_groups::{constant, install_once, unify_compared};

/// The rewrite's name (as listed by the session's analyzer).
pub const TIMESTAMP_RANGE_LITERALS_RULE: &str = "icefloe_timestamp_range_literals";

/// A [`FunctionRewrite`]: timestamp constants outside the range of nanoseconds are
/// restated in microseconds (see the module docs).
#[derive(Debug, Default)]
pub struct TimestampRangeLiterals;

/// Whether `value` (not NULL) fails to become `Timestamp(Nanosecond, zone)` but becomes
/// `Timestamp(Microsecond, zone)`: a timestamp only microseconds hold.
fn only_microseconds_hold(value: &ScalarValue, zone: &Option<Arc<str>>) -> bool {
    if value.is_null() {
        return false;
    }
    let in_unit = |unit| value.cast_to(&DataType::Timestamp(unit, zone.clone()));
    in_unit(TimeUnit::Nanosecond).is_err() && in_unit(TimeUnit::Microsecond).is_ok()
}

/// `expr` retargeted to microseconds when it casts a constant that only microseconds
/// hold to `Timestamp(Nanosecond, zone)`.
fn retarget_cast(expr: Expr) -> Transformed<Expr> {
    let (inner, zone, try_cast) = match &expr {
        Expr::Cast(Cast { expr: inner, field }) | Expr::TryCast(TryCast { expr: inner, field }) => {
            match field.data_type() {
                DataType::Timestamp(TimeUnit::Nanosecond, zone) => {
                    (inner, zone.clone(), matches!(expr, Expr::TryCast(_)))
                }
                _ => return Transformed::no(expr),
            }
        }
        _ => return Transformed::no(expr),
    };
    if !constant(inner).is_some_and(|v| only_microseconds_hold(&v, &zone)) {
        return Transformed::no(expr);
    }
    let target = DataType::Timestamp(TimeUnit::Microsecond, zone);
    let inner = inner.clone();
    Transformed::yes(if try_cast {
        Expr::TryCast(TryCast::new(inner, target))
    } else {
        Expr::Cast(Cast::new(inner, target))
    })
}

/// `value` as a constant of `Timestamp(Microsecond, _)` to cast to the group's type:
/// a string or a date as it is (the cast reads it), a nanosecond timestamp floored to
/// microseconds (as Iceberg Java's `DateTimeUtil.nanosToMicros`); `None` for other values.
fn to_restate(value: ScalarValue) -> Option<ScalarValue> {
    match value {
        ScalarValue::Utf8(_)
        | ScalarValue::LargeUtf8(_)
        | ScalarValue::Utf8View(_)
        | ScalarValue::Date32(_)
        | ScalarValue::Date64(_) => Some(value),
        ScalarValue::TimestampNanosecond(v, zone) => Some(ScalarValue::TimestampMicrosecond(
            v.map(|v| v.div_euclid(1_000)),
            zone,
        )),
        _ => None,
    }
}

/// When a constant of `group` is a timestamp only microseconds hold (a string, a date, or
/// a literal [`retarget_cast`] restated), the group's string, date and nanosecond
/// timestamp constants cast to the microsecond timestamp type of its first timestamp that
/// is no constant (when its unit is microseconds or coarser): all of them, since
/// DataFusion would compare the others, and with them the group, in nanoseconds. Returns
/// whether anything changed.
fn unify(group: &mut [&mut Expr], schema: &DFSchema, session_zone: Option<&str>) -> bool {
    if let Some(changed) = unify_dates(group, schema, session_zone) {
        return changed;
    }
    let zone = group.iter().find_map(|e| {
        if constant(e).is_some() {
            return None;
        }
        match e.get_type(schema).ok()? {
            DataType::Timestamp(TimeUnit::Nanosecond, _) => None,
            DataType::Timestamp(_, zone) => Some(zone),
            _ => None,
        }
    });
    let Some(zone) = zone else {
        return false;
    };
    let needed = group
        .iter()
        .any(|expr| constant(expr).is_some_and(|value| only_microseconds_hold(&value, &zone)));
    if !needed {
        return false;
    }
    let target = DataType::Timestamp(TimeUnit::Microsecond, zone);
    let mut changed = false;
    for expr in group.iter_mut() {
        if let Some(value) = constant(expr).and_then(to_restate) {
            **expr = Expr::Cast(Cast::new(
                Box::new(Expr::Literal(value, None)),
                target.clone(),
            ));
            changed = true;
        }
    }
    changed
}

/// A date that is no constant (a `date` column) compared with a timestamp: every value of
/// the group as `Timestamp(Microsecond, None)`. DataFusion 55 compares a `Date32` with a
/// `Timestamp(_, any zone)` as `Timestamp(Nanosecond, None)` (`temporal_coercion`), so a
/// date outside 1677-09-21 to 2262-04-11 in the column (Iceberg's and Spark's dates range
/// over years 0001 to 9999) failed the query whichever rows the rest of the filter kept
/// ("Overflow happened on: -719162 * 86400000000000"), and so did a literal after 2262.
/// Spark casts the date to its microsecond timestamp (midnight) and compares that
/// (`TypeCoercion.findCommonTypeForBinaryComparison`): here the same type as DataFusion's
/// in microseconds, so the rows that compared before compare alike (a zoned timestamp is
/// seen as its wall-clock time, as DataFusion's cast to `Timestamp(_, None)` sees it),
/// nanosecond constants floored to microseconds as Spark's literals are. The date column
/// stays a column under a cast, which [`super::filter`] prunes by (its bounds and
/// partition values).
///
/// `None` when the group holds no such date and timestamp, or a timestamp of nanoseconds
/// that is no constant (a `timestamp_ns` column: microseconds would lose its digits), or
/// a zoned timestamp while the session's zone (`session_zone`) is not UTC: there
/// [`zoned_literals`](super::zoned_literals) reads the date as a wall-clock time in that
/// zone, in microseconds, as Spark does.
fn unify_dates(
    group: &mut [&mut Expr],
    schema: &DFSchema,
    session_zone: Option<&str>,
) -> Option<bool> {
    let types: Vec<Option<DataType>> = group.iter().map(|e| e.get_type(schema).ok()).collect();
    let is_constant: Vec<bool> = group.iter().map(|e| constant(e).is_some()).collect();
    let date_value = types
        .iter()
        .zip(&is_constant)
        .any(|(t, c)| !c && matches!(t, Some(DataType::Date32 | DataType::Date64)));
    let timestamp = types
        .iter()
        .any(|t| matches!(t, Some(DataType::Timestamp(_, _))));
    let nanosecond_value = types
        .iter()
        .zip(&is_constant)
        .any(|(t, c)| !c && matches!(t, Some(DataType::Timestamp(TimeUnit::Nanosecond, _))));
    let zoned = types
        .iter()
        .any(|t| matches!(t, Some(DataType::Timestamp(_, Some(_)))));
    let zoned_elsewhere = session_zone.is_some_and(|z| !z.eq_ignore_ascii_case("UTC"));
    if !date_value || !timestamp || nanosecond_value || (zoned && zoned_elsewhere) {
        return None;
    }
    let target = DataType::Timestamp(TimeUnit::Microsecond, None);
    let mut changed = false;
    for (expr, (ty, is_constant)) in group.iter_mut().zip(types.into_iter().zip(is_constant)) {
        let restated = if is_constant {
            let value = constant(expr).and_then(|v| match v {
                ScalarValue::TimestampSecond(..)
                | ScalarValue::TimestampMillisecond(..)
                | ScalarValue::TimestampMicrosecond(..) => Some(v),
                v => to_restate(v),
            });
            match value {
                Some(value) => Expr::Literal(value, None),
                // a constant of another type (a number): DataFusion's coercion decides
                None => continue,
            }
        } else {
            match ty {
                Some(DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, _)) => {
                    expr.clone()
                }
                _ => continue,
            }
        };
        **expr = Expr::Cast(Cast::new(Box::new(restated), target.clone()));
        changed = true;
    }
    Some(changed)
}

impl FunctionRewrite for TimestampRangeLiterals {
    fn name(&self) -> &str {
        TIMESTAMP_RANGE_LITERALS_RULE
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        let session_zone = config.execution.time_zone.as_deref();
        let retargeted = retarget_cast(expr);
        if retargeted.transformed {
            return Ok(retargeted);
        }
        let mut expr = retargeted.data;
        let changed = unify_compared(&mut expr, |group| Ok(unify(group, schema, session_zone)))?
            .unwrap_or(false);
        Ok(if changed {
            Transformed::yes(expr)
        } else {
            Transformed::no(expr)
        })
    }
}

/// Add [`TimestampRangeLiterals`] to `ctx`'s analyzer, once (a second call does nothing).
pub fn install_timestamp_literal_rule(ctx: &SessionContext) {
    install_once(ctx, Arc::new(TimestampRangeLiterals));
}
