//! [`SessionZoneCasts`]: a `timestamptz` value cast to a zone-less timestamp is its
//! wall-clock time in the session's time zone, as Spark casts a `TIMESTAMP_LTZ` to
//! `TIMESTAMP_NTZ` in `spark.sql.session.timeZone` (and as DuckDB and PostgreSQL cast to
//! `TIMESTAMP` in their session's zone): with the session in `Europe/Paris`,
//! `CAST(tz AS TIMESTAMP)` of `2024-02-29T21:30:00Z` is `2024-02-29T22:30:00`. A cast to
//! a `DATE` is that wall-clock time's date, as Spark casts a `TIMESTAMP` to `DATE`
//! (`CAST(tz AS DATE)` of `2026-07-01T02:00:00Z` in `America/New_York` is `2026-06-30`;
//! Arrow's cast gave the UTC date), in a query and written into a `date` column.
//!
//! Arrow's cast from `Timestamp(unit, zone)` to `Timestamp(unit, None)` keeps the stored
//! value, the UTC wall-clock time, whatever the session's zone. This expression rewrite
//! (before DataFusion's type coercion) puts DataFusion's `to_local_time` of the value in
//! the session's zone under each such cast (to a zone-less timestamp or a date): explicit casts (`CAST(…)`, `::TIMESTAMP`,
//! Spark's `TIMESTAMP_NTZ`), and the casts DataFusion's `INSERT` and `UPDATE` planners put
//! on a zoned value written into a `timestamp` column. Every instant has one wall-clock
//! time, so no value is ambiguous. A string cast to a timestamp of a zone with daylight
//! saving time (`CAST(s AS TIMESTAMPTZ)`, `TIMESTAMPTZ '…'`, in the session's zone) is
//! read there row by row as java.time reads it for Spark
//! ([`zoned_wall_clock`](super::zoned_wall_clock)): a time the clock shows twice is the
//! earlier instant, one it skips moves later by the gap, where Arrow's cast failed
//! ("Error parsing timestamp from '…': error computing timezone offset"); so is a
//! zone-less timestamp or a date cast so (`CAST(ts AS TIMESTAMPTZ)`), where Arrow's cast
//! failed with "Cannot cast timezone to different timezone". Sessions without a time zone or in UTC (icefloe's
//! default) are unchanged. Installed (once) with
//! [`install_session_zone_rule`](super::install_session_zone_rule).

use std::sync::Arc;

use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::functions::datetime::expr_fn::to_local_time;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, TryCast};

use super::compared_groups::constant;
use super::zoned_arrays::{text_instant, zoned_type};
use super::zoned_wall_clock::zoned_wall_clock_as;

/// The rewrite's name (as listed by the session's analyzer).
pub const SESSION_ZONE_CASTS_RULE: &str = "icefloe_session_zone_casts";

/// A [`FunctionRewrite`]: zoned timestamps cast to zone-less ones take the session
/// zone's wall-clock time (see the module docs).
#[derive(Debug, Default)]
pub struct SessionZoneCasts;

/// `inner` (over `schema`) as its wall-clock time in `zone` when it is a zoned
/// timestamp and `to` a zone-less one or a date; `None` otherwise.
fn local_in_zone(inner: &Expr, to: &DataType, zone: &str, schema: &DFSchema) -> Option<Expr> {
    if !matches!(
        to,
        DataType::Timestamp(_, None) | DataType::Date32 | DataType::Date64
    ) {
        return None;
    }
    let DataType::Timestamp(unit, Some(_)) = inner.get_type(schema).ok()? else {
        return None;
    };
    let in_zone = Expr::Cast(Cast::new(
        Box::new(inner.clone()),
        DataType::Timestamp(unit, Some(Arc::from(zone))),
    ));
    Some(to_local_time(vec![in_zone]))
}

/// `inner` (over `schema`) read as wall-clock times in `to`'s zone by
/// [`zoned_wall_clock`](super::zoned_wall_clock) when it is a string, a zone-less
/// timestamp or a date and `to` a timestamp of a zone with daylight saving time (a
/// region), so that a time the zone's clock shows twice or skips resolves as java.time
/// resolves it for Spark, where Arrow's cast failed (a string: "error computing timezone
/// offset"; a timestamp, a date at midnight in a zone whose clocks move at midnight:
/// "Cannot cast timezone to different timezone"); `safe` for `TRY_CAST`. `None`
/// otherwise. Values inside structs, lists and maps are read so too, when `to` holds such
/// a timestamp there (`CAST([ts] AS ARRAY<TIMESTAMPTZ>)` failed as the top-level cast did).
fn wall_clock_in_zone(
    inner: &Expr,
    to: &DataType,
    schema: &DFSchema,
    safe: bool,
) -> DFResult<Option<Expr>> {
    let Some(zone) = region_zone(to) else {
        return Ok(None);
    };
    let Ok(from) = inner.get_type(schema) else {
        return Ok(None);
    };
    let top_level = matches!(to, DataType::Timestamp(_, Some(_)))
        && matches!(
            from,
            DataType::Utf8
                | DataType::LargeUtf8
                | DataType::Utf8View
                | DataType::Timestamp(_, None)
                | DataType::Date32
                | DataType::Date64
        );
    // inside structs, lists and maps: when a value there becomes a zoned timestamp
    let nested = matches!(
        from,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
    ) && zoned_type(&from, to, zone) != from;
    match top_level || nested {
        true => zoned_wall_clock_as(inner.clone(), zone, to, safe).map(Some),
        false => Ok(None),
    }
}

/// The zone of the first zoned timestamp in `to` (itself, or inside its structs, lists
/// and maps) when it is a region, whose clock may skip or repeat times; `None` for UTC
/// and fixed offsets, which show every time once, and for types without one.
fn region_zone(to: &DataType) -> Option<&str> {
    match to {
        DataType::Timestamp(_, Some(zone)) => {
            let fixed = zone.eq_ignore_ascii_case("UTC") || zone.starts_with(['+', '-']);
            (!fixed).then_some(zone.as_ref())
        }
        DataType::Struct(fields) => fields.iter().find_map(|f| region_zone(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => region_zone(f.data_type()),
        _ => None,
    }
}

/// The literal of constant string `inner` cast to `to`, a timestamp of a zone with
/// daylight saving time, read there as [`wall_clock_in_zone`] reads a string; in microseconds
/// when nanoseconds do not hold it (years outside 1677..2262, as
/// [`timestamp_literals`](super::timestamp_literals) restates such a constant). `None`
/// when `inner` is no constant string, or no timestamp (left to DataFusion's cast and its
/// error).
fn constant_string_in_zone(inner: &Expr, to: &DataType) -> Option<Expr> {
    let DataType::Timestamp(unit, Some(zone)) = to else {
        return None;
    };
    if zone.eq_ignore_ascii_case("UTC") || zone.starts_with(['+', '-']) {
        return None;
    }
    let (ScalarValue::Utf8(Some(text))
    | ScalarValue::LargeUtf8(Some(text))
    | ScalarValue::Utf8View(Some(text))) = constant(inner)?
    else {
        return None;
    };
    let tz: Tz = zone.parse().ok()?;
    let zone = Some(Arc::clone(zone));
    let value = match text_instant(&text, *unit, &tz) {
        Ok(v) => match unit {
            TimeUnit::Second => ScalarValue::TimestampSecond(Some(v), zone),
            TimeUnit::Millisecond => ScalarValue::TimestampMillisecond(Some(v), zone),
            TimeUnit::Microsecond => ScalarValue::TimestampMicrosecond(Some(v), zone),
            TimeUnit::Nanosecond => ScalarValue::TimestampNanosecond(Some(v), zone),
        },
        Err(_) if *unit == TimeUnit::Nanosecond => {
            let v = text_instant(&text, TimeUnit::Microsecond, &tz).ok()?;
            ScalarValue::TimestampMicrosecond(Some(v), zone)
        }
        Err(_) => return None,
    };
    Some(Expr::Literal(value, None))
}

impl FunctionRewrite for SessionZoneCasts {
    fn name(&self) -> &str {
        SESSION_ZONE_CASTS_RULE
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
        if let Expr::Cast(Cast { expr: inner, field })
        | Expr::TryCast(TryCast { expr: inner, field }) = &expr
        {
            if let Some(literal) = constant_string_in_zone(inner, field.data_type()) {
                return Ok(Transformed::yes(literal));
            }
        }
        Ok(match expr {
            Expr::Cast(Cast { expr, field }) => {
                let to = field.data_type();
                let local = match local_in_zone(&expr, to, zone, schema) {
                    Some(local) => Some(local),
                    None => wall_clock_in_zone(&expr, to, schema, false)?,
                };
                match local {
                    Some(local) => {
                        Transformed::yes(Expr::Cast(Cast::new_from_field(Box::new(local), field)))
                    }
                    None => Transformed::no(Expr::Cast(Cast { expr, field })),
                }
            }
            Expr::TryCast(TryCast { expr, field }) => {
                let to = field.data_type();
                let local = match local_in_zone(&expr, to, zone, schema) {
                    Some(local) => Some(local),
                    None => wall_clock_in_zone(&expr, to, schema, true)?,
                };
                match local {
                    Some(local) => Transformed::yes(Expr::TryCast(TryCast {
                        expr: Box::new(local),
                        field,
                    })),
                    None => Transformed::no(Expr::TryCast(TryCast { expr, field })),
                }
            }
            other => Transformed::no(other),
        })
    }
}
