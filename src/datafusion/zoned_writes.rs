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
//! gap, as java.time resolves them). A zone-less timestamp, a date or a string that is
//! no constant (a column of an `INSERT … SELECT`, a prepared statement's parameter) is
//! read in the session's zone by [`zoned_wall_clock`](super::zoned_wall_clock), with the
//! same rules, row by row (a string naming its offset is that instant). So are the
//! zone-less times, dates and strings inside structs, lists and maps written into
//! `timestamptz` fields, at any depth (`named_struct('ts', TIMESTAMP '…')`, `[TIMESTAMP
//! '…']`, `map(…)`, a nested column of an `INSERT … SELECT`), which DataFusion's cast read
//! as UTC wall-clock times. Sessions without a time zone, or in UTC (icefloe's
//! default), are unchanged. Installed (once) with
//! [`install_session_zone_rule`](super::install_session_zone_rule).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::config::ConfigOptions;
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

use super::compared_groups::constant;
use super::time_narrowing::FLOOR_TIME_UNITS;
use super::zoned_arrays::zoned_type;
use super::zoned_literals::in_zone;
use super::zoned_wall_clock::{zoned_wall_clock, zoned_wall_clock_as};

/// The rule's name (as listed by the session's analyzer).
pub const SESSION_ZONE_WRITES_RULE: &str = "icefloe_session_zone_writes";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct SessionZoneWrites;

/// `inner`, cast to `to`, read in `zone` when it is a zone-less time (over `schema`) and
/// `to` a timestamp of another zone, or when it holds zone-less times (or strings) whose
/// counterparts in `to` are zoned, inside structs, lists and maps; `None` otherwise.
///
/// Errors: DataFusion's, when `to` has no typed `NULL`.
fn zoned_source(
    inner: &Expr,
    to: &DataType,
    zone: &str,
    schema: &DFSchema,
) -> DFResult<Option<Expr>> {
    let DataType::Timestamp(unit, Some(column_zone)) = to else {
        // nested: the values whose counterparts are zoned, at any depth
        let Ok(from) = inner.get_type(schema) else {
            return Ok(None);
        };
        if zoned_type(&from, to, zone) == from {
            return Ok(None);
        }
        return zoned_wall_clock_as(inner.clone(), zone, to, false).map(Some);
    };
    if column_zone.as_ref() == zone {
        return Ok(None);
    }
    // a constant, also under the floor `time_narrowing` puts under a narrowing cast
    let source = match inner {
        Expr::ScalarFunction(f) if f.name() == FLOOR_TIME_UNITS => match f.args.first() {
            Some(source) => source,
            None => return Ok(None),
        },
        other => other,
    };
    if let Some(value) = constant(source) {
        if value.is_null() {
            return Ok(None);
        }
        return Ok(match (in_zone(source, &value, zone), unit) {
            // floored into the column's microseconds, as every narrowed write is
            // (`time_narrowing`), where the cast above would divide
            (
                Some(Expr::Literal(ScalarValue::TimestampNanosecond(Some(ns), z), m)),
                TimeUnit::Microsecond,
            ) => Some(Expr::Literal(
                ScalarValue::TimestampMicrosecond(Some(ns.div_euclid(1000)), z),
                m,
            )),
            (zoned, _) => zoned,
        });
    }
    // any other zone-less time, date or string: its wall clock in the session's zone,
    // resolved as a constant's is (a string naming its offset is that instant)
    let Ok(from) = inner.get_type(schema) else {
        return Ok(None);
    };
    match from {
        DataType::Timestamp(_, None) => Ok(Some(zoned_wall_clock(inner.clone(), zone))),
        DataType::Date32
        | DataType::Date64
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View => zoned_wall_clock_as(inner.clone(), zone, to, false).map(Some),
        _ => Ok(None),
    }
}

impl AnalyzerRule for SessionZoneWrites {
    fn name(&self) -> &str {
        SESSION_ZONE_WRITES_RULE
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> DFResult<LogicalPlan> {
        let Some(zone) = super::sql::session_zone::non_utc_zone(config) else {
            return Ok(plan);
        };
        let rewrite = |e: Expr, schema: &DFSchema| {
            super::written_values::replace_cast_input(e, &|input, to| {
                zoned_source(input, to, zone, schema)
            })
        };
        super::written_values::map_written_values(plan, &rewrite)
    }
}

/// Add [`SessionZoneWrites`] to `ctx`'s analyzer, once (a second call does nothing).
pub(crate) fn install_session_zone_writes_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(SessionZoneWrites));
}
