//! [`ZonedWallClock`]: zone-less times (a column, any expression) read as wall-clock
//! times in a time zone, resolved as `java.time.ZonedDateTime.of` resolves them for
//! Spark ([`local_instant`]): a time the zone's clock shows twice is the earlier
//! instant, one it skips is moved later by the gap's length.
//!
//! Arrow's cast of a zone-less timestamp to a zoned one reads it in the target's zone
//! too, but fails on a time the clock shows twice or skips ("Cannot cast timezone to
//! different timezone"), so an `INSERT … SELECT` of a zone-less column (or of a date, at
//! midnight in a zone whose clocks moved at midnight) into a `timestamptz` column failed
//! where Spark writes the instant java.time resolves and a constant of the same time
//! (module [`zoned_writes`](super::zoned_writes)) was written.

use std::sync::Arc;

use chrono::DateTime;
use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use datafusion::arrow::datatypes::{
    ArrowTimestampType, DataType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::{exec_datafusion_err, exec_err, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use super::sql::session_zone::local_instant;

/// The function's name.
pub const ZONED_WALL_CLOCK: &str = "icefloe_zoned_wall_clock";

/// `icefloe_zoned_wall_clock(value, zone)`: zone-less timestamps `value`
/// (`Timestamp(unit, None)`) read as wall-clock times in `zone` (a string constant, an
/// IANA region id or an offset), of type `Timestamp(unit, zone)` (the same instants a
/// cast to that type gives where the clock shows the time once). Errors: a `zone` that is
/// no time zone or no constant; a value whose instant is out of range.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ZonedWallClock {
    signature: Signature,
}

impl Default for ZonedWallClock {
    fn default() -> Self {
        Self {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

/// `value` (zone-less timestamps of `unit`) read as wall-clock times in `zone`
/// ([`ZonedWallClock`]), of type `Timestamp(unit, zone)`.
pub(crate) fn zoned_wall_clock(value: Expr, zone: &str) -> Expr {
    let udf = Arc::new(ScalarUDF::new_from_impl(ZonedWallClock::default()));
    let zone = Expr::Literal(ScalarValue::Utf8(Some(zone.to_string())), None);
    Expr::ScalarFunction(ScalarFunction::new_udf(udf, vec![value, zone]))
}

impl ScalarUDFImpl for ZonedWallClock {
    fn name(&self) -> &str {
        ZONED_WALL_CLOCK
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
        let DataType::Timestamp(unit, None) = value.data_type() else {
            return exec_err!(
                "{ZONED_WALL_CLOCK} takes a zone-less timestamp, not {}",
                value.data_type()
            );
        };
        Ok(Arc::new(datafusion::arrow::datatypes::Field::new(
            self.name(),
            DataType::Timestamp(*unit, Some(Arc::from(zone.as_str()))),
            value.is_nullable(),
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let [value, zone] = args.args.as_slice() else {
            return exec_err!("{ZONED_WALL_CLOCK} takes a value and a zone name");
        };
        let ColumnarValue::Scalar(ScalarValue::Utf8(Some(name))) = zone else {
            return exec_err!("{ZONED_WALL_CLOCK}: the zone must be a string constant");
        };
        let tz: Tz = name.parse().map_err(|e| {
            exec_datafusion_err!("{ZONED_WALL_CLOCK}: '{name}' is not a time zone: {e}")
        })?;
        let array = value.to_array(args.number_rows)?;
        let zoned = zone_array(&array, &tz, name)?;
        Ok(match value {
            ColumnarValue::Scalar(_) => {
                ColumnarValue::Scalar(ScalarValue::try_from_array(&zoned, 0)?)
            }
            ColumnarValue::Array(_) => ColumnarValue::Array(zoned),
        })
    }
}

/// `array` (zone-less timestamps) as instants of wall-clock times in `tz` (named `name`).
fn zone_array(array: &ArrayRef, tz: &Tz, name: &str) -> DFResult<ArrayRef> {
    match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, None) => {
            zone_values::<TimestampSecondType>(array, tz, name, 1)
        }
        DataType::Timestamp(TimeUnit::Millisecond, None) => {
            zone_values::<TimestampMillisecondType>(array, tz, name, 1_000)
        }
        DataType::Timestamp(TimeUnit::Microsecond, None) => {
            zone_values::<TimestampMicrosecondType>(array, tz, name, 1_000_000)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, None) => {
            zone_values::<TimestampNanosecondType>(array, tz, name, 1_000_000_000)
        }
        other => exec_err!("{ZONED_WALL_CLOCK} takes a zone-less timestamp, not {other}"),
    }
}

/// Each value of `array` (`per_second` units a second) moved from its wall clock in `tz`
/// to its instant; the fraction of a second is kept.
fn zone_values<T: ArrowTimestampType>(
    array: &ArrayRef,
    tz: &Tz,
    name: &str,
    per_second: i64,
) -> DFResult<ArrayRef> {
    let values = array.as_primitive::<T>();
    let zoned: PrimitiveArray<T> = values.try_unary(|v| {
        let (seconds, fraction) = (v.div_euclid(per_second), v.rem_euclid(per_second));
        DateTime::from_timestamp(seconds, 0)
            .and_then(|at| local_instant(at.naive_utc(), tz))
            .and_then(|at| at.timestamp().checked_mul(per_second))
            .and_then(|at| at.checked_add(fraction))
            .ok_or_else(|| {
                datafusion::arrow::error::ArrowError::ComputeError(format!(
                    "{ZONED_WALL_CLOCK}: {v} as a wall-clock time in {name} is out of range"
                ))
            })
    })?;
    Ok(Arc::new(zoned.with_timezone(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let zoned = zone_array(&array, &tz, "America/New_York").expect("zoned");
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
