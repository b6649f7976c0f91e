//! [`ZonedWallClock`]: zone-less times (a column, any expression) read as wall-clock
//! times in a time zone, resolved as `java.time.ZonedDateTime.of` resolves them for
//! Spark ([`local_instant`](super::sql::session_zone::local_instant)): a time the zone's
//! clock shows twice is the earlier instant, one it skips is moved later by the gap's
//! length. Strings are read so too (one naming its offset is that instant), and values
//! inside structs, lists and maps (module [`zoned_arrays`](super::zoned_arrays)).
//!
//! Arrow's cast of a zone-less timestamp (or a string) to a zoned one reads it in the
//! target's zone too, but fails on a time the clock shows twice or skips ("Cannot cast
//! timezone to different timezone"; a string: "error computing timezone offset"), so an `INSERT … SELECT` of a zone-less column (or of
//! a date, at midnight in a zone whose clocks moved at midnight) into a `timestamptz`
//! column failed where Spark writes the instant java.time resolves and a constant of the
//! same time (module [`zoned_writes`](super::zoned_writes)) was written; and it reads
//! values inside structs, lists and maps in the target's zone (UTC for Iceberg's
//! `timestamptz`) whatever the session's.

use std::sync::Arc;

use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_datafusion_err, exec_err, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use super::zoned_arrays::{zone_array, zoned_type};

/// The function's name.
pub const ZONED_WALL_CLOCK: &str = "icefloe_zoned_wall_clock";

/// The name of its `TRY_CAST` form: a string that is no timestamp is null.
pub const TRY_ZONED_WALL_CLOCK: &str = "icefloe_try_zoned_wall_clock";

/// `icefloe_zoned_wall_clock(value, zone[, target])`: `value` read against the type of
/// `target` (a typed `NULL`; without one, `value`'s type with `zone`) as wall-clock times
/// in `zone` (a string constant, an IANA region id or an offset): each zone-less
/// timestamp (`Timestamp(unit, None)`), date or string in `value` whose counterpart in
/// `target` is a zoned timestamp, at any depth, becomes a `Timestamp(unit, zone)` (the
/// zone-less timestamp's unit, else the target's) of the instant java.time resolves
/// ([`zoned_arrays`](super::zoned_arrays)); the rest of `value` is unchanged. Errors: a
/// `zone` that is no time zone or no constant; a value whose instant is out of range; a
/// string that is no timestamp (null in [`TRY_ZONED_WALL_CLOCK`]).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ZonedWallClock {
    signature: Signature,
    /// Whether a string that is no timestamp is null (`TRY_CAST`) rather than an error.
    safe: bool,
}

impl ZonedWallClock {
    /// The function; `safe` for [`TRY_ZONED_WALL_CLOCK`].
    pub fn new(safe: bool) -> Self {
        Self {
            signature: Signature::variadic_any(Volatility::Immutable),
            safe,
        }
    }
}

/// The [`ZonedWallClock`] function of that name, if it is one of them.
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub fn zoned_wall_clock_udf(name: &str) -> Option<Arc<ScalarUDF>> {
    let safe = match name {
        ZONED_WALL_CLOCK => false,
        TRY_ZONED_WALL_CLOCK => true,
        _ => return None,
    };
    Some(Arc::new(ScalarUDF::new_from_impl(ZonedWallClock::new(
        safe,
    ))))
}

fn zone_literal(zone: &str) -> Expr {
    Expr::Literal(ScalarValue::Utf8(Some(zone.to_string())), None)
}

/// `value` (zone-less timestamps of `unit`) read as wall-clock times in `zone`
/// ([`ZonedWallClock`]), of type `Timestamp(unit, zone)`.
pub(crate) fn zoned_wall_clock(value: Expr, zone: &str) -> Expr {
    let udf = Arc::new(ScalarUDF::new_from_impl(ZonedWallClock::new(false)));
    Expr::ScalarFunction(ScalarFunction::new_udf(
        udf,
        vec![value, zone_literal(zone)],
    ))
}

/// `value` read against `target` in `zone` ([`ZonedWallClock`]); `safe` reads a string
/// that is no timestamp as null.
///
/// Errors: DataFusion's, when `target` has no typed `NULL`.
pub(crate) fn zoned_wall_clock_as(
    value: Expr,
    zone: &str,
    target: &DataType,
    safe: bool,
) -> DFResult<Expr> {
    let udf = Arc::new(ScalarUDF::new_from_impl(ZonedWallClock::new(safe)));
    let target = Expr::Literal(ScalarValue::try_from(target)?, None);
    Ok(Expr::ScalarFunction(ScalarFunction::new_udf(
        udf,
        vec![value, zone_literal(zone), target],
    )))
}

/// The target type of a call with arguments of types `value` and `target` (`None`
/// without one): `target`'s, or `value`'s with `zone`.
fn target_type(value: &DataType, target: Option<&DataType>, zone: &str) -> DFResult<DataType> {
    match (target, value) {
        (Some(t), _) => Ok(t.clone()),
        (None, DataType::Timestamp(unit, None)) => {
            Ok(DataType::Timestamp(*unit, Some(Arc::from(zone))))
        }
        (None, other) => exec_err!("{ZONED_WALL_CLOCK} takes a zone-less timestamp, not {other}"),
    }
}

impl ScalarUDFImpl for ZonedWallClock {
    fn name(&self) -> &str {
        if self.safe {
            TRY_ZONED_WALL_CLOCK
        } else {
            ZONED_WALL_CLOCK
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DFResult<DataType> {
        exec_err!("{ZONED_WALL_CLOCK}: its type comes from its arguments")
    }

    fn return_field_from_args(
        &self,
        args: datafusion::logical_expr::ReturnFieldArgs,
    ) -> DFResult<datafusion::arrow::datatypes::FieldRef> {
        let (Some(value), Some(Some(ScalarValue::Utf8(Some(zone))))) =
            (args.arg_fields.first(), args.scalar_arguments.get(1))
        else {
            return exec_err!("{ZONED_WALL_CLOCK} takes a value and a zone name (a constant)");
        };
        let target = args.arg_fields.get(2).map(|f| f.data_type());
        let target = target_type(value.data_type(), target, zone)?;
        Ok(Arc::new(datafusion::arrow::datatypes::Field::new(
            self.name(),
            zoned_type(value.data_type(), &target, zone),
            value.is_nullable(),
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let (Some(value), Some(zone)) = (args.args.first(), args.args.get(1)) else {
            return exec_err!("{ZONED_WALL_CLOCK} takes a value and a zone name");
        };
        let ColumnarValue::Scalar(ScalarValue::Utf8(Some(name))) = zone else {
            return exec_err!("{ZONED_WALL_CLOCK}: the zone must be a string constant");
        };
        let tz: Tz = name.parse().map_err(|e| {
            exec_datafusion_err!("{ZONED_WALL_CLOCK}: '{name}' is not a time zone: {e}")
        })?;
        let target = args.arg_fields.get(2).map(|f| f.data_type());
        let array = value.to_array(args.number_rows)?;
        let target = target_type(array.data_type(), target, name)?;
        let zoned = zone_array(&array, &target, &tz, name, self.safe)?;
        Ok(match value {
            ColumnarValue::Scalar(_) => {
                ColumnarValue::Scalar(ScalarValue::try_from_array(&zoned, 0)?)
            }
            ColumnarValue::Array(_) => ColumnarValue::Array(zoned),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
    use datafusion::arrow::datatypes::{TimeUnit, TimestampMicrosecondType};

    #[test]
    fn wall_clock_times_resolve_as_java_time_does() {
        // New York, 2026: 02:30 on 8 March is skipped (→ 03:30 EDT), 01:30 on 1 November
        // is shown twice (→ the earlier, EDT)
        let micros = |s: &str| {
            chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f")
                .expect("time")
                .and_utc()
                .timestamp_micros()
        };
        let array: ArrayRef = Arc::new(PrimitiveArray::<TimestampMicrosecondType>::from(vec![
            Some(micros("2026-03-08 02:30:00.25")),
            Some(micros("2026-11-01 01:30:00")),
            None,
            Some(micros("1960-01-01 00:00:00")),
        ]));
        let tz: Tz = "America/New_York".parse().expect("zone");
        let target = target_type(array.data_type(), None, "America/New_York").expect("target");
        let zoned = zone_array(&array, &target, &tz, "America/New_York", false).expect("zoned");
        let zoned = zoned.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(zoned.value(0), micros("2026-03-08 07:30:00.25"));
        assert_eq!(zoned.value(1), micros("2026-11-01 05:30:00"));
        assert!(zoned.is_null(2));
        assert_eq!(zoned.value(3), micros("1960-01-01 05:00:00"));
        assert_eq!(
            zoned.data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from("America/New_York")))
        );
    }
}
