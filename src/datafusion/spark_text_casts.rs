//! [`SparkTextCasts`]: strings cast to `DATE` and `TIMESTAMP` read as Spark reads them.
//!
//! Arrow's cast read a string as an instant (`CAST('2024-01-01 23:30:00-05:00' AS DATE)`
//! was the instant's UTC date, 2024-01-02) and rejected Spark's short forms
//! (`CAST('2024-1-5' AS TIMESTAMP)`, `'2024' AS DATE`). This analyzer rule replaces the
//! input of each cast (and `TRY_CAST`) of a string (`Utf8`, `LargeUtf8`, `Utf8View`) to
//! `Date32` or to a timestamp of any unit, with or without a zone, by its reading by
//! [`zoned_wall_clock`](super::zoned_wall_clock), which reads each string with
//! [`spark_datetime_text`](crate::spark_datetime_text) (the forms and decisions are
//! listed there):
//! - to `DATE`: the date written (`2024-01-01 23:30:00-05:00` is 2024-01-01, `2024-1-5`
//!   2024-01-05, `2024` 2024-01-01, `2024-02` 2024-02-01), in every session zone;
//! - to a zone-less `TIMESTAMP`: the wall-clock time written; one naming its zone
//!   (`…-05:00`, `…Z`, `… Asia/Tokyo`) is its instant's wall-clock time in the session's
//!   zone (UTC without one), as a `timestamptz` cast to a zone-less timestamp is
//!   ([`zoned_casts`](super::zoned_casts));
//! - to a timestamp of a zone (`TIMESTAMPTZ`, in the session's zone; `Timestamp(us,
//!   "UTC")` where a string meets an Iceberg `timestamptz` column): the instant of the
//!   wall-clock time written in that zone, or of the zone the string names (a time that
//!   zone's clock shows twice is the earlier instant, one it skips moves later by the gap,
//!   as java.time resolves it for Spark).
//!
//! A string that is none of these is an error naming it and the target type in a `CAST`
//! (as Spark 4's ANSI mode raises one), `NULL` in a `TRY_CAST`. The rule runs after
//! DataFusion's type coercion, so it sees the casts coercion adds (`d = '2024-1-5'`,
//! `INSERT` of a string into a `date` column) as well as the written ones, in every plan
//! node and subquery and in a `MERGE`'s values; output names are kept. A constant
//! (`CAST('2024-1-5' AS DATE)`) is folded by DataFusion's simplifier before any pruning,
//! so a filter on it prunes files and row groups as a `DATE '2024-01-05'` literal does.
//! Installed (once) with [`install_session_zone_rule`](super::install_session_zone_rule).

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan, TryCast};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

use super::zoned_wall_clock::zoned_wall_clock_as;
use crate::spark_datetime_text::{parse_timestamp_string, string_to_date};

/// The rule's name (as listed by the session's analyzer).
pub const SPARK_TEXT_CASTS_RULE: &str = "icefloe_spark_text_casts";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct SparkTextCasts;

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The input of a cast of `inner` (over `schema`) to `to`, the session's zone `session`
/// (UTC when `None`), read as Spark reads a string (see the module docs); `safe` for
/// `TRY_CAST`. `None` when `inner` is no string or `to` no date or timestamp.
///
/// Errors: DataFusion's, building the reading.
fn text_cast_input(
    inner: &Expr,
    to: &DataType,
    session: Option<&str>,
    schema: &DFSchema,
    safe: bool,
) -> DFResult<Option<Expr>> {
    match inner.get_type(schema) {
        Ok(from) if is_string(&from) => {}
        _ => return Ok(None),
    }
    let zone = match to {
        DataType::Date32 => "UTC",
        DataType::Timestamp(_, Some(zone)) => zone.as_ref(),
        DataType::Timestamp(_, None) => session.unwrap_or("UTC"),
        _ => return Ok(None),
    };
    zoned_wall_clock_as(inner.clone(), zone, to, safe).map(Some)
}

/// Whether a cast from `from` to `to` is a string read as a date or timestamp, which this
/// rule reads as Spark does rather than by Arrow's cast.
pub(crate) fn spark_reads(from: &DataType, to: &DataType) -> bool {
    is_string(from) && matches!(to, DataType::Date32 | DataType::Timestamp(_, _))
}

/// Why the string `value` cast to `to` is no value of it as Spark's cast reads it
/// ([`crate::spark_datetime_text`]): "'2024-13-01' is not a date (as Spark's CAST reads
/// one)"; `None` when it is one (a zone it names is resolved, and may fail, when the
/// statement runs), or is null or no string, or `to` is no date or timestamp. The checks of
/// written constants (`INSERT`, `UPDATE … SET`) name their column with it before the
/// statement runs.
pub(crate) fn unread_text(value: &ScalarValue, to: &DataType) -> Option<String> {
    let text = value.try_as_str().flatten()?;
    let (read, what) = match to {
        DataType::Date32 => (string_to_date(text).is_some(), "date"),
        DataType::Timestamp(_, _) => (parse_timestamp_string(text).is_some(), "timestamp"),
        _ => return None,
    };
    (!read).then(|| format!("'{text}' is not a {what} (as Spark's CAST reads one)"))
}

/// `expr` (over `schema`) with its cast's input read as [`text_cast_input`] reads it.
///
/// Errors: [`text_cast_input`]'s.
fn text_cast(expr: Expr, schema: &DFSchema, session: Option<&str>) -> DFResult<Transformed<Expr>> {
    Ok(match expr {
        Expr::Cast(Cast { expr, field }) => {
            match text_cast_input(&expr, field.data_type(), session, schema, false)? {
                Some(input) => {
                    Transformed::yes(Expr::Cast(Cast::new_from_field(Box::new(input), field)))
                }
                None => Transformed::no(Expr::Cast(Cast { expr, field })),
            }
        }
        Expr::TryCast(TryCast { expr, field }) => {
            match text_cast_input(&expr, field.data_type(), session, schema, true)? {
                Some(input) => Transformed::yes(Expr::TryCast(TryCast {
                    expr: Box::new(input),
                    field,
                })),
                None => Transformed::no(Expr::TryCast(TryCast { expr, field })),
            }
        }
        other => Transformed::no(other),
    })
}

/// Every cast in `expr` (over `schema`) rewritten by [`text_cast`], in a session of
/// zone `session` (`None` for UTC). Also used by the check of an `UPDATE`'s constant
/// values ([`update_values`](super::sql::update_values)), which folds them before the
/// analyzer runs.
///
/// Errors: [`text_cast_input`]'s.
pub(crate) fn text_casts(
    expr: Expr,
    schema: &DFSchema,
    session: Option<&str>,
) -> DFResult<Transformed<Expr>> {
    expr.transform_up(|e| text_cast(e, schema, session))
}

impl AnalyzerRule for SparkTextCasts {
    fn name(&self) -> &str {
        SPARK_TEXT_CASTS_RULE
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> DFResult<LogicalPlan> {
        let session = super::sql::session_zone::non_utc_zone(config);
        super::analyzer_rules::rewrite_every_expression(plan, &|e, schema| {
            text_casts(e, schema, session)
        })
    }
}

/// Add [`SparkTextCasts`] to `ctx`'s analyzer, once (a second call does nothing).
pub(crate) fn install_spark_text_casts_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(SparkTextCasts));
}
