//! [`SessionZoneTextCasts`]: casts between timestamps and strings in the session's time
//! zone, as Spark and DuckDB cast them in theirs.
//!
//! - A `timestamptz` value cast to a string (`CAST(tz AS VARCHAR)`, `tz::STRING`, and the
//!   casts DataFusion's type coercion puts on it in `'at ' || tz`, `concat('x', tz)`, a
//!   comparison with a string, a value written into a string column) writes its
//!   wall-clock time in the session's zone with that zone's offset, as Arrow writes a
//!   timestamp of a zone (`2024-02-29T22:30:00+01:00` for `2024-02-29T21:30:00Z` with the
//!   session in `Europe/Paris`). Spark writes the same wall-clock time without the offset,
//!   DuckDB with it (`+01`). Arrow's cast wrote the column's zone's time, UTC (`…Z`), for an
//!   Iceberg `timestamptz` (`Timestamp(unit, "UTC")`).
//! - A string cast to a zone-less timestamp that names its zone is its instant's
//!   wall-clock time in the session's zone: read, with every other cast of a string to a
//!   date or timestamp, by [`spark_text_casts`](super::spark_text_casts).
//!
//! The rule runs after DataFusion's type coercion, so it sees the casts coercion adds as
//! well as the written ones, in every plan node and subquery and in a `MERGE`'s values;
//! output names are kept. A filter on such a cast prunes no file wrongly: neither
//! DataFusion's pruning (a cast from a timestamp to a string is not prunable) nor icefloe's
//! Iceberg predicates ([`filter`](super::filter)) invert it. Sessions without a time zone
//! or in UTC (icefloe's default) are unchanged. Installed (once) with
//! [`install_session_zone_rule`](super::install_session_zone_rule).

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result as DFResult};
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, LogicalPlan, TryCast};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

/// The rule's name (as listed by the session's analyzer).
pub const SESSION_ZONE_TEXT_CASTS_RULE: &str = "icefloe_session_zone_text_casts";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct SessionZoneTextCasts;

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The input of a cast of `inner` (over `schema`) to `to` in `zone` (see the module
/// docs); `None` when it does not change.
fn text_cast_input(inner: &Expr, to: &DataType, zone: &str, schema: &DFSchema) -> Option<Expr> {
    match (inner.get_type(schema).ok()?, to) {
        (DataType::Timestamp(unit, Some(own)), to) if is_string(to) && own.as_ref() != zone => {
            let in_zone = DataType::Timestamp(unit, Some(Arc::from(zone)));
            Some(Expr::Cast(Cast::new(Box::new(inner.clone()), in_zone)))
        }
        _ => None,
    }
}

/// `expr` (over `schema`) with its cast's input read in `zone` where
/// [`text_cast_input`] changes it.
fn text_cast(expr: Expr, schema: &DFSchema, zone: &str) -> DFResult<Transformed<Expr>> {
    Ok(match expr {
        Expr::Cast(Cast { expr, field }) => {
            match text_cast_input(&expr, field.data_type(), zone, schema) {
                Some(input) => {
                    Transformed::yes(Expr::Cast(Cast::new_from_field(Box::new(input), field)))
                }
                None => Transformed::no(Expr::Cast(Cast { expr, field })),
            }
        }
        Expr::TryCast(TryCast { expr, field }) => {
            match text_cast_input(&expr, field.data_type(), zone, schema) {
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

/// Every cast in `expr` (over `schema`) rewritten by [`text_cast`].
fn text_casts(expr: Expr, schema: &DFSchema, zone: &str) -> DFResult<Transformed<Expr>> {
    expr.transform_up(|e| text_cast(e, schema, zone))
}

impl AnalyzerRule for SessionZoneTextCasts {
    fn name(&self) -> &str {
        SESSION_ZONE_TEXT_CASTS_RULE
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> DFResult<LogicalPlan> {
        let Some(zone) = super::sql::session_zone::non_utc_zone(config) else {
            return Ok(plan);
        };
        super::analyzer_rules::rewrite_every_expression(plan, &|e, schema| {
            text_casts(e, schema, zone)
        })
    }
}

/// Add [`SessionZoneTextCasts`] to `ctx`'s analyzer, once (a second call does nothing).
pub(crate) fn install_session_zone_text_casts_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(SessionZoneTextCasts));
}
