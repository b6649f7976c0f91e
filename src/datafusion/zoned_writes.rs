//! [`SessionZoneWrites`]: a zone-less time written into a `timestamptz` column is a
//! wall-clock time in the session's time zone, as Spark writes it in
//! `spark.sql.session.timeZone`: with the session in `Europe/Paris`, `INSERT INTO t (tz)
//! VALUES ('2024-02-29 22:30:00')` (or `TIMESTAMP '…'`, or `UPDATE t SET tz = …`, or a
//! `MERGE`'s values) writes `2024-02-29T21:30:00Z`, and a date its midnight there.
//!
//! DataFusion 55 casts each written value to its column's type, and Arrow reads a
//! zone-less time cast to an Iceberg `timestamptz` (`Timestamp(µs, "UTC")`) as a
//! wall-clock time in UTC whatever the session's zone. This analyzer rule replaces each
//! zone-less constant so cast (a string, a `TIMESTAMP '…'` literal, a date) by the
//! instant it names in the session's zone, read as the comparisons of
//! [`zoned_literals`](super::zoned_literals) read it (a string naming its offset is that
//! instant; a time shown twice is the earlier instant, one skipped moves later by the
//! gap, as java.time resolves them). A zone-less timestamp or a date that is no constant
//! (a column of an `INSERT … SELECT`, a prepared statement's parameter) is read in the
//! session's zone by [`zoned_wall_clock`](super::zoned_wall_clock), with the same rules;
//! a string that is no constant is cast to a timestamp in the session's zone, which Arrow
//! reads as a wall-clock time there (one at a time the session's clock shows twice or
//! skips fails the statement: "Cannot cast timezone to different timezone"). Values inside structs, lists and maps
//! are left to DataFusion's cast (UTC). Sessions without a time zone, or in UTC (icefloe's
//! default), are unchanged. Installed (once) with
//! [`install_session_zone_rule`](super::install_session_zone_rule).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

use super::compared_groups::constant;
use super::time_narrowing::FLOOR_TIME_UNITS;
use super::zoned_literals::in_zone;
use super::zoned_wall_clock::zoned_wall_clock;

/// The rule's name (as listed by the session's analyzer).
pub const SESSION_ZONE_WRITES_RULE: &str = "icefloe_session_zone_writes";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct SessionZoneWrites;

/// `inner`, cast to `to`, read in `zone` when it is a zone-less time (over `schema`) and
/// `to` a timestamp of another zone; `None` otherwise.
fn zoned_source(inner: &Expr, to: &DataType, zone: &str, schema: &DFSchema) -> Option<Expr> {
    let DataType::Timestamp(unit, Some(column_zone)) = to else {
        return None;
    };
    if column_zone.as_ref() == zone {
        return None;
    }
    // a constant, also under the floor `time_narrowing` puts under a narrowing cast
    let source = match inner {
        Expr::ScalarFunction(f) if f.name() == FLOOR_TIME_UNITS => f.args.first()?,
        other => other,
    };
    if let Some(value) = constant(source) {
        if value.is_null() {
            return None;
        }
        return match (in_zone(source, &value, zone)?, unit) {
            // floored into the column's microseconds, as every narrowed write is
            // (`time_narrowing`), where the cast above would divide
            (
                Expr::Literal(ScalarValue::TimestampNanosecond(Some(ns), z), m),
                TimeUnit::Microsecond,
            ) => Some(Expr::Literal(
                ScalarValue::TimestampMicrosecond(Some(ns.div_euclid(1000)), z),
                m,
            )),
            (zoned, _) => Some(zoned),
        };
    }
    // any other zone-less time or date: its wall clock in the session's zone, resolved as
    // a constant's is; a string through Arrow's cast to the zone, which reads it so
    let cast = |e: Expr, t: DataType| Expr::Cast(Cast::new(Box::new(e), t));
    match inner.get_type(schema).ok()? {
        DataType::Timestamp(_, None) => Some(zoned_wall_clock(inner.clone(), zone)),
        DataType::Date32 | DataType::Date64 => Some(zoned_wall_clock(
            cast(inner.clone(), DataType::Timestamp(*unit, None)),
            zone,
        )),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(cast(
            inner.clone(),
            DataType::Timestamp(*unit, Some(Arc::from(zone))),
        )),
        _ => None,
    }
}

impl AnalyzerRule for SessionZoneWrites {
    fn name(&self) -> &str {
        SESSION_ZONE_WRITES_RULE
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> DFResult<LogicalPlan> {
        let Some(zone) = config.execution.time_zone.as_deref() else {
            return Ok(plan);
        };
        if zone.eq_ignore_ascii_case("UTC") {
            return Ok(plan);
        }
        let rewrite = |e: Expr, schema: &DFSchema| {
            super::written_values::replace_cast_input(e, &|input, to| {
                Ok(zoned_source(input, to, zone, schema))
            })
        };
        super::written_values::map_written_values(plan, &rewrite)
    }
}

/// Add [`SessionZoneWrites`] to `ctx`'s analyzer, once (a second call does nothing).
pub(crate) fn install_session_zone_writes_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(SessionZoneWrites));
}
