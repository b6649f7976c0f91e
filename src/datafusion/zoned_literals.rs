//! [`SessionZoneLiterals`]: a zone-less time compared with a `timestamptz` value is a
//! wall-clock time in the session's time zone, as Spark reads it in
//! `spark.sql.session.timeZone` (`WHERE tz = '2024-02-29 22:30:00'` with the session in
//! `Europe/Paris` is `2024-02-29T21:30:00Z`).
//!
//! DataFusion 55 casts a zone-less timestamp to the zoned type of the value it is compared
//! with, and Arrow reads it as a wall-clock time in that type's zone: an Iceberg
//! `timestamptz` column is `Timestamp(µs, "UTC")`, so `TIMESTAMP '…'`, a string or a date
//! compared with it was read in UTC whatever the session's zone (Spark, and DuckDB in its
//! `TimeZone`, read it in the session's).
//!
//! This expression rewrite, run before DataFusion's type coercion, casts each such
//! constant of a comparison (`=`, `<>`, `<`, `<=`, `>`, `>=`, `IS [NOT] DISTINCT FROM`,
//! `IN` lists, `BETWEEN`) whose other values include a zoned timestamp that is no
//! constant (a `timestamptz` column) to a timestamp in the session's zone first: a string
//! or a zone-less `TIMESTAMP` literal (a date through its midnight) is then that
//! wall-clock time there. A string that names its offset (`'…+02:00'`) is that instant
//! still. Sessions without a time zone (`RESET datafusion.execution.time_zone`) keep
//! DataFusion's reading (UTC); icefloe's start in UTC
//! ([`register_iceberg_options`](super::register_iceberg_options)), where nothing
//! changes. A zone-less column (any zone-less timestamp or date that is no constant)
//! compared with a `timestamptz` value is read as wall-clock times in the session's zone
//! too, row by row ([`zoned_wall_clock`](super::zoned_wall_clock), java.time's rules), as
//! Spark casts a `TIMESTAMP_NTZ` or `DATE` to `TIMESTAMP`; DataFusion read it in UTC. So
//! is a string column, each string as the same constant string is (Spark casts it to
//! `TIMESTAMP` in the session's zone).
//! Installed (once) by [`install_session_zone_rule`], which
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

use datafusion::arrow::array::timezone::Tz;

use super::compared_groups::{constant, install_once, unify_compared};
use super::sql::session_zone::local_instant;
use super::zoned_arrays::text_instant;
use super::zoned_wall_clock::{zoned_wall_clock, zoned_wall_clock_as};

/// The rewrite's name (as listed by the session's analyzer).
pub const SESSION_ZONE_LITERALS_RULE: &str = "icefloe_session_zone_literals";

/// A [`FunctionRewrite`]: zone-less constants compared with zoned timestamps are read in
/// the session's time zone (see the module docs).
#[derive(Debug, Default)]
pub struct SessionZoneLiterals;

/// The string literal `expr` is, or casts to zone-less timestamps (`TIMESTAMP '…'`).
fn string_source(expr: &Expr) -> Option<ScalarValue> {
    match expr {
        Expr::Literal(v, _)
            if matches!(
                v.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            ) =>
        {
            Some(v.clone())
        }
        Expr::Cast(Cast { expr: inner, field }) | Expr::TryCast(TryCast { expr: inner, field })
            if matches!(field.data_type(), DataType::Timestamp(_, None)) =>
        {
            string_source(inner)
        }
        _ => None,
    }
}

/// `value` as `Timestamp(unit, zone)` (`None` when it does not become one).
fn timestamp_in(value: &ScalarValue, unit: TimeUnit, zone: Option<&str>) -> Option<i64> {
    let t = DataType::Timestamp(unit, zone.map(Arc::from));
    match value.cast_to(&t).ok()? {
        ScalarValue::TimestampNanosecond(v, _) | ScalarValue::TimestampMicrosecond(v, _) => v,
        _ => None,
    }
}

/// The literal of zone-less constant `expr` (of value `value`) read in `zone`, in
/// nanoseconds when they hold it, else microseconds: a string (also under a `TIMESTAMP
/// '…'` cast), read as Spark's cast reads it
/// ([`text_instant`](super::zoned_arrays::text_instant): `2024-1-5 7:5`, `… Asia/Tokyo`),
/// that names its zone is that instant, one that does not (and a date, at
/// its midnight, and a zone-less timestamp) a wall-clock time in `zone`, resolved as
/// java.time resolves it for Spark (a time shown twice is the earlier instant, one
/// skipped moves later by the gap). `None` for other values, or when it is no timestamp.
pub(super) fn in_zone(expr: &Expr, value: &ScalarValue, zone: &str) -> Option<Expr> {
    let tz: Tz = zone.parse().ok()?;
    let source = match value.data_type() {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Timestamp(_, None) => string_source(expr).unwrap_or_else(|| value.clone()),
        DataType::Date32 => value.clone(),
        _ => return None,
    };
    if let Some(text) = source.try_as_str().flatten() {
        // read as Spark's cast reads it (`2024-1-5 7:5`, `… Asia/Tokyo`)
        let zone: Option<Arc<str>> = Some(Arc::from(zone));
        let literal = match text_instant(text, TimeUnit::Nanosecond, &tz) {
            Ok(ns) => ScalarValue::TimestampNanosecond(Some(ns), zone),
            Err(_) => ScalarValue::TimestampMicrosecond(
                Some(text_instant(text, TimeUnit::Microsecond, &tz).ok()?),
                zone,
            ),
        };
        return Some(Expr::Literal(literal, None));
    }
    let unit = if timestamp_in(&source, TimeUnit::Nanosecond, None).is_some() {
        TimeUnit::Nanosecond
    } else {
        TimeUnit::Microsecond
    };
    let per_second: i64 = match unit {
        TimeUnit::Nanosecond => 1_000_000_000,
        _ => 1_000_000,
    };
    // a date or zone-less timestamp: its wall clock (as if in UTC) resolved in `zone`
    let naive = timestamp_in(&source, unit, None)?;
    let seconds = naive.div_euclid(per_second);
    let fraction = naive.rem_euclid(per_second);
    let local = chrono::DateTime::from_timestamp(seconds, 0)?.naive_utc();
    let resolved = local_instant(local, &tz)?.timestamp();
    let instant = resolved.checked_mul(per_second)?.checked_add(fraction)?;
    let zone: Option<Arc<str>> = Some(Arc::from(zone));
    let literal = match unit {
        TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(Some(instant), zone),
        _ => ScalarValue::TimestampMicrosecond(Some(instant), zone),
    };
    Some(Expr::Literal(literal, None))
}

/// `literal` (a timestamp literal of a zone) labelled with `zone` instead: the same
/// instant.
fn relabel(literal: Expr, zone: &Arc<str>) -> Expr {
    let z = Some(Arc::clone(zone));
    match literal {
        Expr::Literal(ScalarValue::TimestampNanosecond(v, Some(_)), m) => {
            Expr::Literal(ScalarValue::TimestampNanosecond(v, z), m)
        }
        Expr::Literal(ScalarValue::TimestampMicrosecond(v, Some(_)), m) => {
            Expr::Literal(ScalarValue::TimestampMicrosecond(v, z), m)
        }
        other => other,
    }
}

/// Read the zone-less constants of `group` in `zone` when the group compares them with a
/// zoned timestamp that is no constant, and its zone-less values that are no constants
/// when it compares them with any zoned timestamp, labelled with that timestamp's zone (the same
/// instants; values of two zones would be compared in nanoseconds, which do not hold
/// years outside 1677..2262). Returns whether anything changed.
///
/// Errors: DataFusion's, building the reading of a string column.
fn unify(group: &mut [&mut Expr], schema: &DFSchema, zone: &str) -> DFResult<bool> {
    // the zoned value compared: one that is no constant (a `timestamptz` column), else a
    // constant (`TIMESTAMPTZ '…'`), which only the values that are no constants follow
    let zoned_of = |constants: bool| {
        group.iter().find_map(|e| match e.get_type(schema) {
            Ok(DataType::Timestamp(unit, Some(z))) if constants || constant(e).is_none() => {
                Some((unit, z))
            }
            _ => None,
        })
    };
    let column = zoned_of(false);
    let Some((zoned_unit, zoned_zone)) = column.clone().or_else(|| zoned_of(true)) else {
        return Ok(false);
    };
    let labelled = |e: Expr, unit: TimeUnit| {
        Expr::Cast(Cast::new(
            Box::new(e),
            DataType::Timestamp(unit, Some(Arc::clone(&zoned_zone))),
        ))
    };
    let mut changed = false;
    for expr in group.iter_mut() {
        let Some(value) = constant(expr) else {
            // a zone-less column (or expression), a date or a string one: its wall clock
            // in the session's zone too, per row (module `zoned_wall_clock`); in UTC that
            // is DataFusion's reading already
            if zone.eq_ignore_ascii_case("UTC") {
                continue;
            }
            **expr = match expr.get_type(schema) {
                Ok(DataType::Timestamp(unit, None)) => {
                    labelled(zoned_wall_clock((*expr).clone(), zone), unit)
                }
                Ok(DataType::Date32 | DataType::Date64) => {
                    let midnight = Expr::Cast(Cast::new(
                        Box::new((*expr).clone()),
                        DataType::Timestamp(TimeUnit::Microsecond, None),
                    ));
                    labelled(zoned_wall_clock(midnight, zone), TimeUnit::Microsecond)
                }
                // a string column: each string read as a constant string is
                Ok(DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => {
                    let to = DataType::Timestamp(zoned_unit, Some(Arc::from(zone)));
                    let read = zoned_wall_clock_as((*expr).clone(), zone, &to, false)?;
                    labelled(read, zoned_unit)
                }
                _ => continue,
            };
            changed = true;
            continue;
        };
        if value.is_null() || column.is_none() {
            continue;
        }
        if let Some(cast) = in_zone(expr, &value, zone) {
            **expr = relabel(cast, &zoned_zone);
            changed = true;
        }
    }
    Ok(changed)
}

impl FunctionRewrite for SessionZoneLiterals {
    fn name(&self) -> &str {
        SESSION_ZONE_LITERALS_RULE
    }

    fn rewrite(
        &self,
        mut expr: Expr,
        schema: &DFSchema,
        config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        let Some(zone) = config.execution.time_zone.as_deref() else {
            return Ok(Transformed::no(expr));
        };
        let changed =
            unify_compared(&mut expr, |group| unify(group, schema, zone))?.unwrap_or(false);
        Ok(if changed {
            Transformed::yes(expr)
        } else {
            Transformed::no(expr)
        })
    }
}

/// Add [`SessionZoneLiterals`] (comparisons),
/// [`SessionZoneCasts`](super::zoned_casts::SessionZoneCasts) (zoned values cast to
/// zone-less ones) and [`SessionZoneWrites`](super::zoned_writes::SessionZoneWrites)
/// (values written into `timestamptz` columns) and
/// [`SessionZoneFunctions`](super::zoned_functions::SessionZoneFunctions) (`extract`,
/// `date_trunc`, `to_char`, `date_bin` of zoned values) and
/// [`SessionZoneTextCasts`](super::zoned_text_casts::SessionZoneTextCasts) (casts between
/// timestamps and strings) and [`SparkTextCasts`](super::spark_text_casts::SparkTextCasts)
/// (strings cast to dates and timestamps as Spark reads them, in every session zone) to
/// `ctx`'s analyzer, once (a second call does nothing), after
/// registering Spark's `year`, `hour`, … functions
/// ([`install_spark_datetime_functions`](super::spark_datetime::install_spark_datetime_functions)).
pub fn install_session_zone_rule(ctx: &SessionContext) {
    // Spark's `year`, `hour`, … become `date_part`s, which the rules below see
    super::spark_datetime::install_spark_datetime_functions(ctx);
    // then the rest of Spark's functions, under the names still free
    super::spark_functions::install_spark_functions(ctx);
    install_once(ctx, Arc::new(SessionZoneLiterals));
    install_once(ctx, Arc::new(super::zoned_casts::SessionZoneCasts));
    install_once(ctx, Arc::new(super::zoned_functions::SessionZoneFunctions));
    super::zoned_writes::install_session_zone_writes_rule(ctx);
    super::zoned_text_casts::install_session_zone_text_casts_rule(ctx);
    super::spark_text_casts::install_spark_text_casts_rule(ctx);
}
