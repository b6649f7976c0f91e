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
//! time, so no value is ambiguous. Sessions without a time zone or in UTC (icefloe's
//! default) are unchanged. Installed (once) with
//! [`install_session_zone_rule`](super::install_session_zone_rule).

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result as DFResult};
use datafusion::functions::datetime::expr_fn::to_local_time;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable, TryCast};

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
        let Some(zone) = config.execution.time_zone.as_deref() else {
            return Ok(Transformed::no(expr));
        };
        if zone.eq_ignore_ascii_case("UTC") {
            return Ok(Transformed::no(expr));
        }
        Ok(match expr {
            Expr::Cast(Cast { expr, field }) => {
                match local_in_zone(&expr, field.data_type(), zone, schema) {
                    Some(local) => {
                        Transformed::yes(Expr::Cast(Cast::new_from_field(Box::new(local), field)))
                    }
                    None => Transformed::no(Expr::Cast(Cast { expr, field })),
                }
            }
            Expr::TryCast(TryCast { expr, field }) => {
                match local_in_zone(&expr, field.data_type(), zone, schema) {
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
