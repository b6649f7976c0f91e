//! [`SessionZoneFunctions`]: the calendar functions of a `timestamptz` value work in the
//! session's time zone, as Spark computes them in `spark.sql.session.timeZone` (and
//! DuckDB in its `TimeZone`): with the session in `America/New_York`,
//! `extract(hour FROM tz)` of `2026-07-01T02:00:00Z` is `22`, `date_trunc('day', tz)` is
//! `2026-06-30T04:00:00Z` (the start of the local day, still an instant), and
//! `to_char(tz, '%Y-%m-%d %H:%M')` is `2026-06-30 22:00`.
//!
//! DataFusion 55's `date_part` (`extract`, `datepart`), `date_trunc` (`datetrunc`) and
//! `to_char` (`date_format`) compute in the zone of their value's type, and an Iceberg
//! `timestamptz` column is `Timestamp(µs, "UTC")`, so they worked in UTC whatever the
//! session's zone. This expression rewrite (before DataFusion's type coercion) casts such
//! a value to the same instants in the session's zone first (`Timestamp(unit, zone)`), and
//! a `date_trunc`'s result back to the value's type, so the result's type is unchanged.
//! `date_trunc` resolves a local start of a unit the zone's clock skips or shows twice as
//! DataFusion does (the start moves later by the gap; of two, the one of the value's
//! offset, as `java.time.ZonedDateTime.truncatedTo` keeps it); its minutes are the local
//! clock's also where the zone's offset is no whole number of minutes (local mean time,
//! Paris before 1911: +00:09:21), where DataFusion truncates the UTC minute (in any
//! session zone but UTC, a value of the session's zone too). A `date_bin`'s bins are
//! fixed lengths of time from its origin, as in PostgreSQL, so only a zone-less origin
//! (`date_bin(INTERVAL '1 day', tz, TIMESTAMP '2024-01-01 00:00:00')`, a string, a date)
//! changes: it is a wall-clock time in the session's zone, as a zone-less time compared
//! with a `timestamptz` is ([`zoned_literals`](super::zoned_literals)), where DataFusion
//! read it in UTC. A `date_bin` by whole months or years bins the session zone's calendar
//! instead ([`local_month_bins`]), where DataFusion binned the UTC calendar: with the
//! session in `Europe/Paris`, `date_bin(INTERVAL '1 month', tz, TIMESTAMP '2024-01-01
//! 00:00:00')` of `2024-02-29T23:30:00Z` is `2024-02-29T23:00:00Z`, local midnight of
//! 1 March. A filter on such a function is never turned into an Iceberg
//! predicate in another zone: DataFusion's preimage of `date_part('year', …) = y` is a
//! range of instants of the session zone's years. Sessions without a time zone or in UTC
//! (icefloe's default) are unchanged. Installed (once) with
//! [`install_session_zone_rule`](super::install_session_zone_rule).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::functions::datetime::expr_fn::{date_part, to_local_time};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable};

use super::compared_groups::constant;
use super::zoned_literals::in_zone;
use super::zoned_wall_clock::{zoned_wall_clock, zoned_wall_clock_as};

/// The rewrite's name (as listed by the session's analyzer).
pub const SESSION_ZONE_FUNCTIONS_RULE: &str = "icefloe_session_zone_functions";

/// A [`FunctionRewrite`]: calendar functions of zoned timestamps work in the session's
/// time zone (see the module docs).
#[derive(Debug, Default)]
pub struct SessionZoneFunctions;

/// `arg` (over `schema`) as the same instants in `zone` when it is a timestamp of another
/// zone, with its type before; `None` otherwise.
fn in_session_zone(arg: &Expr, zone: &str, schema: &DFSchema) -> Option<(Expr, DataType)> {
    let from = arg.get_type(schema).ok()?;
    let DataType::Timestamp(unit, Some(own)) = &from else {
        return None;
    };
    if own.as_ref() == zone {
        return None;
    }
    let to = DataType::Timestamp(*unit, Some(Arc::from(zone)));
    Some((Expr::Cast(Cast::new(Box::new(arg.clone()), to)), from))
}

/// `origin`, a `date_bin` origin next to a zoned `source`, read in `zone` when it is a
/// zone-less time, a date or a string; `None` otherwise.
fn zoned_origin(
    source: &Expr,
    origin: &Expr,
    zone: &str,
    schema: &DFSchema,
) -> DFResult<Option<Expr>> {
    let Ok(DataType::Timestamp(_, Some(_))) = source.get_type(schema) else {
        return Ok(None);
    };
    let Ok(from) = origin.get_type(schema) else {
        return Ok(None);
    };
    if !matches!(
        from,
        DataType::Timestamp(_, None)
            | DataType::Date32
            | DataType::Date64
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
    ) {
        return Ok(None);
    }
    if let Some(value) = constant(origin) {
        if value.is_null() {
            return Ok(None);
        }
        return Ok(in_zone(origin, &value, zone));
    }
    // date_bin's origin is in nanoseconds
    let to = DataType::Timestamp(TimeUnit::Nanosecond, Some(Arc::from(zone)));
    zoned_wall_clock_as(origin.clone(), zone, &to, false).map(Some)
}

/// Whether `stride`, a `date_bin` stride, is a constant of whole months (or years) and
/// nothing shorter: DataFusion bins those on a calendar.
fn month_stride(stride: &Expr) -> bool {
    match constant(stride) {
        Some(ScalarValue::IntervalMonthDayNano(Some(v))) => {
            v.months != 0 && v.days == 0 && v.nanoseconds == 0
        }
        Some(ScalarValue::IntervalYearMonth(Some(months))) => months != 0,
        _ => false,
    }
}

/// `f`, a `date_bin` of a zoned source (over `schema`) by whole months, binned on the
/// calendar of `zone`: the source's and the origin's wall-clock times there (a zone-less
/// origin or a date is one already; a string is read as [`zoned_origin`] reads it; without
/// an origin, local midnight of 1970-01-01) binned by DataFusion's calendar months, and
/// each bin's start read back as the instant of that wall-clock time in `zone` (java.time's
/// rules: a time the clock shows twice is the earlier instant, one it skips moves later by
/// the gap), of the source's type. `date_bin(INTERVAL '1 month', tz, TIMESTAMP '2024-01-01
/// 00:00:00')` in `Europe/Paris` of `2024-02-29T23:30:00Z` (00:30 on 1 March there) is
/// `2024-02-29T23:00:00Z`, where DataFusion binned the UTC calendar (`2024-02-01T00:00:00Z`).
/// `None` for other calls (fixed lengths of time keep their instants).
///
/// Errors: DataFusion's, building the reading of a string origin.
fn local_month_bins(f: &ScalarFunction, zone: &str, schema: &DFSchema) -> DFResult<Option<Expr>> {
    let (Some(stride), Some(source)) = (f.args.first(), f.args.get(1)) else {
        return Ok(None);
    };
    if !month_stride(stride) {
        return Ok(None);
    }
    let Ok(from) = source.get_type(schema) else {
        return Ok(None);
    };
    let DataType::Timestamp(unit, Some(_)) = &from else {
        return Ok(None);
    };
    let local = |value: &Expr, unit: TimeUnit| {
        let in_zone = DataType::Timestamp(unit, Some(Arc::from(zone)));
        to_local_time(vec![Expr::Cast(Cast::new(
            Box::new(value.clone()),
            in_zone,
        ))])
    };
    let mut args = vec![stride.clone(), local(source, *unit)];
    if let Some(origin) = f.args.get(2) {
        let local_origin = match origin.get_type(schema) {
            Ok(DataType::Timestamp(_, None)) => origin.clone(),
            Ok(DataType::Date32 | DataType::Date64) => origin.clone(),
            Ok(DataType::Timestamp(origin_unit, Some(_))) => local(origin, origin_unit),
            Ok(_) => match zoned_origin(source, origin, zone, schema)? {
                Some(zoned) => to_local_time(vec![zoned]),
                None => return Ok(None),
            },
            Err(_) => return Ok(None),
        };
        // date_bin's origin is in nanoseconds
        let naive = DataType::Timestamp(TimeUnit::Nanosecond, None);
        args.push(Expr::Cast(Cast::new(Box::new(local_origin), naive)));
    }
    let bins = Expr::ScalarFunction(ScalarFunction::new_udf(Arc::clone(&f.func), args));
    Ok(Some(Expr::Cast(Cast::new(
        Box::new(zoned_wall_clock(bins, zone)),
        from,
    ))))
}

/// `date_trunc('minute', value)` of a zoned `value` (over `schema`) in `zone`: the
/// instant the local minute starts, `value` floored to its second less the local clock's
/// seconds, so that a zone whose offset is no whole number of minutes (local mean time:
/// Paris before 1911 was +00:09:21) truncates as Spark's `truncatedTo(MINUTES)` does,
/// where DataFusion truncates the UTC minute; of `value`'s type. `None` for other values.
fn local_minute_start(value: &Expr, zone: &str, schema: &DFSchema) -> Option<Expr> {
    let from = value.get_type(schema).ok()?;
    let DataType::Timestamp(unit, Some(own)) = &from else {
        return None;
    };
    let zoned = if own.as_ref() == zone {
        value.clone()
    } else {
        let to = DataType::Timestamp(*unit, Some(Arc::from(zone)));
        Expr::Cast(Cast::new(Box::new(value.clone()), to))
    };
    let per_second = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let int = |n: i64| Expr::Literal(ScalarValue::Int64(Some(n)), None);
    let raw = Expr::Cast(Cast::new(Box::new(value.clone()), DataType::Int64));
    let floored = raw.clone() - ((raw % int(per_second)) + int(per_second)) % int(per_second);
    let part = Expr::Literal(ScalarValue::Utf8(Some("second".to_string())), None);
    let seconds = Expr::Cast(Cast::new(Box::new(date_part(part, zoned)), DataType::Int64));
    let start = floored - seconds * int(per_second);
    Some(Expr::Cast(Cast::new(Box::new(start), from)))
}

/// `f` working in `zone` (see the module docs); `Err(f)` when it does not change.
///
/// Errors: DataFusion's, building the reading of a `date_bin` origin column.
fn in_zone_call(
    mut f: ScalarFunction,
    zone: &str,
    schema: &DFSchema,
) -> DFResult<Result<Expr, ScalarFunction>> {
    let name = f.func.name().to_string();
    if name == "date_trunc" {
        let minute = match f.args.first().and_then(constant) {
            Some(ScalarValue::Utf8(Some(g)) | ScalarValue::Utf8View(Some(g))) => {
                g.trim().eq_ignore_ascii_case("minute")
            }
            _ => false,
        };
        if let Some(start) = f
            .args
            .get(1)
            .filter(|_| minute)
            .and_then(|value| local_minute_start(value, zone, schema))
        {
            return Ok(Ok(start));
        }
    }
    let value_at = match name.as_str() {
        "date_part" | "date_trunc" => 1,
        "to_char" => 0,
        "date_bin" => {
            if let Some(bins) = local_month_bins(&f, zone, schema)? {
                return Ok(Ok(bins));
            }
            let (Some(source), Some(origin)) = (f.args.get(1), f.args.get(2)) else {
                return Ok(Err(f));
            };
            return Ok(match zoned_origin(source, origin, zone, schema)? {
                Some(origin) => {
                    f.args[2] = origin;
                    Ok(Expr::ScalarFunction(f))
                }
                None => Err(f),
            });
        }
        _ => return Ok(Err(f)),
    };
    let Some((zoned, from)) = f
        .args
        .get(value_at)
        .and_then(|arg| in_session_zone(arg, zone, schema))
    else {
        return Ok(Err(f));
    };
    f.args[value_at] = zoned;
    let call = Expr::ScalarFunction(f);
    Ok(Ok(if name == "date_trunc" {
        // the start of the local unit, as an instant of the value's type
        Expr::Cast(Cast::new(Box::new(call), from))
    } else {
        call
    }))
}

impl FunctionRewrite for SessionZoneFunctions {
    fn name(&self) -> &str {
        SESSION_ZONE_FUNCTIONS_RULE
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        let Some(zone) = super::sql::session_zone::non_utc_zone(config) else {
            return Ok(Transformed::no(expr));
        };
        let Expr::ScalarFunction(f) = expr else {
            return Ok(Transformed::no(expr));
        };
        Ok(match in_zone_call(f, zone, schema)? {
            Ok(rewritten) => Transformed::yes(rewritten),
            Err(f) => Transformed::no(Expr::ScalarFunction(f)),
        })
    }
}
