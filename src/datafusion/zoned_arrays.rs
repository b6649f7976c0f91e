//! Zone-less times read as wall-clock times in a time zone, at any depth of a value: the
//! arrays behind [`ZonedWallClock`](super::zoned_wall_clock::ZonedWallClock).
//!
//! A value of type `from` is read against a target type `to` (the type it is cast to
//! next): each zone-less timestamp, date or string in `from` whose counterpart in `to` is
//! a zoned timestamp (at the top level, or as a struct field, list element, map key or
//! value) becomes the instant of its wall-clock time in the zone, as
//! `java.time.ZonedDateTime.of` resolves it for Spark
//! ([`local_instant`](super::sql::session_zone::local_instant)): a time the zone's clock
//! shows twice is the earlier instant, one it skips is moved later by the gap's length.
//! Strings are read as Spark's casts read them (module
//! [`spark_datetime_text`](crate::spark_datetime_text): `2024-1-5`, `2024`, a zone after
//! the seconds). A string that names its zone (`…+02:00`, `…Z`, `… Asia/Tokyo`) is that
//! instant; a date is its midnight. A string whose counterpart in `to` is a zone-less
//! timestamp that names its zone is its instant's wall-clock time in the zone, as Spark
//! casts a `TIMESTAMP_LTZ` to `TIMESTAMP_NTZ` (`'2024-01-01 10:00:00+05:00'` in
//! `Europe/Paris` is `2024-01-01T06:00:00`); one without is the wall-clock time it
//! writes. A string whose counterpart is a `DATE` (`Date32`) is the date it writes
//! (`'2024-01-01 23:30:00-05:00'` is 2024-01-01). Everything else is left as it is, for
//! the cast that follows. Struct fields are paired as Arrow's cast pairs them (by name when every
//! target field has a source field of its name, else by position).

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use datafusion::arrow::array::timezone::Tz;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Date32Array, FixedSizeListArray, GenericListArray, MapArray,
    PrimitiveArray, StructArray,
};
use datafusion::arrow::compute::{cast, cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{
    ArrowTimestampType, DataType, Field, FieldRef, Fields, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use datafusion::arrow::error::ArrowError;

use super::sql::session_zone::local_instant;
use crate::spark_datetime_text::{
    no_calendar_day, parse_timestamp_string, string_to_date, TimestampText, WrittenZone,
};

/// Units of `unit` in a second.
fn per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The pairs (index in `from`, field of `to`) of the struct fields Arrow's cast pairs.
fn paired_fields(from: &Fields, to: &Fields) -> Vec<(usize, FieldRef)> {
    let by_name = to.iter().all(|t| from.iter().any(|f| f.name() == t.name()));
    let in_order = from.len() == to.len()
        && from
            .iter()
            .zip(to.iter())
            .all(|(f, t)| f.name() == t.name());
    to.iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let index = if by_name && !in_order {
                from.iter().position(|f| f.name() == t.name())?
            } else {
                i
            };
            (index < from.len()).then(|| (index, Arc::clone(t)))
        })
        .collect()
}

/// `from`'s field `field` with its type read against `to`.
fn zoned_field(field: &FieldRef, to: &DataType, zone: &str) -> FieldRef {
    let t = zoned_type(field.data_type(), to, zone);
    if &t == field.data_type() {
        return Arc::clone(field);
    }
    Arc::new(field.as_ref().clone().with_data_type(t))
}

/// The type of a value of type `from` read against `to` in `zone` (see the module docs):
/// `from` with each zone-less timestamp, date or string whose counterpart in `to` is a
/// zoned timestamp replaced by a timestamp of `zone` (of the zone-less timestamp's unit,
/// else of the target's).
pub(crate) fn zoned_type(from: &DataType, to: &DataType, zone: &str) -> DataType {
    use DataType as D;
    let zoned = |unit: &TimeUnit| D::Timestamp(*unit, Some(Arc::from(zone)));
    match (from, to) {
        (D::Timestamp(unit, None), D::Timestamp(_, Some(_))) => zoned(unit),
        (D::Date32 | D::Date64, D::Timestamp(unit, Some(_))) => zoned(unit),
        (s, D::Timestamp(unit, Some(_))) if is_string(s) => zoned(unit),
        (s, D::Timestamp(unit, None)) if is_string(s) => D::Timestamp(*unit, None),
        (s, D::Date32) if is_string(s) => D::Date32,
        (D::Struct(fields), D::Struct(targets)) => {
            let mut out: Vec<FieldRef> = fields.iter().cloned().collect();
            for (i, t) in paired_fields(fields, targets) {
                out[i] = zoned_field(&fields[i], t.data_type(), zone);
            }
            D::Struct(Fields::from(out))
        }
        (
            D::List(f) | D::LargeList(f) | D::FixedSizeList(f, _),
            D::List(t) | D::LargeList(t) | D::FixedSizeList(t, _),
        ) => {
            let field = zoned_field(f, t.data_type(), zone);
            match from {
                D::List(_) => D::List(field),
                D::LargeList(_) => D::LargeList(field),
                D::FixedSizeList(_, n) => D::FixedSizeList(field, *n),
                _ => from.clone(),
            }
        }
        (D::Map(f, sorted), D::Map(t, _)) => D::Map(zoned_field(f, t.data_type(), zone), *sorted),
        _ => from.clone(),
    }
}

/// `array` read against `to` in `tz` (named `zone`; see the module docs), of type
/// [`zoned_type`]`(array's type, to, zone)`: zoned targets get instants
/// ([`text_instant`]), zone-less ones wall-clock times ([`text_wall_clock`]). A string
/// that is no timestamp is an error naming it, or null when `safe` (as `TRY_CAST` reads
/// it).
///
/// Errors: such a string; a value whose instant is out of range.
pub(crate) fn zone_array(
    array: &ArrayRef,
    to: &DataType,
    tz: &Tz,
    zone: &str,
    safe: bool,
) -> Result<ArrayRef, ArrowError> {
    use DataType as D;
    let from = array.data_type();
    if &zoned_type(from, to, zone) == from {
        return Ok(Arc::clone(array));
    }
    match (from, to) {
        (D::Timestamp(unit, None), D::Timestamp(_, Some(_))) => {
            zone_timestamps(array, *unit, tz, zone)
        }
        (D::Date32 | D::Date64, D::Timestamp(unit, Some(_))) => {
            // a date out of the unit's range is an error (null when `safe`), as Arrow's
            // cast of it is (its default options made it null: a plain CAST gave NULL,
            // and wrote it)
            let options = CastOptions {
                safe,
                ..CastOptions::default()
            };
            let wall_clock = cast_with_options(array, &D::Timestamp(*unit, None), &options)?;
            zone_timestamps(&wall_clock, *unit, tz, zone)
        }
        (s, D::Timestamp(unit, Some(_))) if is_string(s) => {
            let strings = cast(array, &D::Utf8)?;
            zone_strings(strings.as_string::<i32>(), *unit, tz, zone, safe)
        }
        (s, D::Timestamp(unit, None)) if is_string(s) => {
            let strings = cast(array, &D::Utf8)?;
            wall_clock_strings(strings.as_string::<i32>(), *unit, tz, safe)
        }
        (s, D::Date32) if is_string(s) => {
            let strings = cast(array, &D::Utf8)?;
            date_strings(strings.as_string::<i32>(), safe)
        }
        (D::Struct(fields), D::Struct(targets)) => {
            let structs = array.as_struct();
            let mut columns: Vec<ArrayRef> = structs.columns().to_vec();
            let mut out: Vec<FieldRef> = fields.iter().cloned().collect();
            for (i, t) in paired_fields(fields, targets) {
                columns[i] = zone_array(&columns[i], t.data_type(), tz, zone, safe)?;
                out[i] = Arc::new(
                    fields[i]
                        .as_ref()
                        .clone()
                        .with_data_type(columns[i].data_type().clone()),
                );
            }
            Ok(Arc::new(StructArray::try_new(
                Fields::from(out),
                columns,
                structs.nulls().cloned(),
            )?))
        }
        (D::List(f), D::List(t) | D::LargeList(t) | D::FixedSizeList(t, _)) => {
            let list = array.as_list::<i32>();
            let values = zone_array(list.values(), t.data_type(), tz, zone, safe)?;
            Ok(Arc::new(GenericListArray::<i32>::try_new(
                element(f, &values),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )?))
        }
        (D::LargeList(f), D::List(t) | D::LargeList(t) | D::FixedSizeList(t, _)) => {
            let list = array.as_list::<i64>();
            let values = zone_array(list.values(), t.data_type(), tz, zone, safe)?;
            Ok(Arc::new(GenericListArray::<i64>::try_new(
                element(f, &values),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
            )?))
        }
        (D::FixedSizeList(f, n), D::List(t) | D::LargeList(t) | D::FixedSizeList(t, _)) => {
            let list = array.as_fixed_size_list();
            let values = zone_array(list.values(), t.data_type(), tz, zone, safe)?;
            Ok(Arc::new(FixedSizeListArray::try_new(
                element(f, &values),
                *n,
                values,
                list.nulls().cloned(),
            )?))
        }
        (D::Map(f, sorted), D::Map(t, _)) => {
            let map = array.as_map();
            let entries: ArrayRef = Arc::new(map.entries().clone());
            let entries = zone_array(&entries, t.data_type(), tz, zone, safe)?;
            Ok(Arc::new(MapArray::try_new(
                element(f, &entries),
                map.offsets().clone(),
                entries.as_struct().clone(),
                map.nulls().cloned(),
                *sorted,
            )?))
        }
        _ => Ok(Arc::clone(array)),
    }
}

/// `field` with the type of `values`.
fn element(field: &FieldRef, values: &ArrayRef) -> FieldRef {
    Arc::new(Field::clone(field).with_data_type(values.data_type().clone()))
}

/// Zone-less timestamps of `unit` as instants of their wall-clock times in `tz`.
fn zone_timestamps(
    array: &ArrayRef,
    unit: TimeUnit,
    tz: &Tz,
    zone: &str,
) -> Result<ArrayRef, ArrowError> {
    match unit {
        TimeUnit::Second => zone_values::<TimestampSecondType>(array, tz, zone),
        TimeUnit::Millisecond => zone_values::<TimestampMillisecondType>(array, tz, zone),
        TimeUnit::Microsecond => zone_values::<TimestampMicrosecondType>(array, tz, zone),
        TimeUnit::Nanosecond => zone_values::<TimestampNanosecondType>(array, tz, zone),
    }
}

/// The instant, in `unit`s, of wall-clock time `local` (in `unit`s, as if in UTC) in `tz`;
/// `None` when out of range.
fn instant_of(local: i64, unit: TimeUnit, tz: &Tz) -> Option<i64> {
    let per_second = per_second(unit);
    let (seconds, fraction) = (local.div_euclid(per_second), local.rem_euclid(per_second));
    let at = DateTime::from_timestamp(seconds, 0)?;
    local_instant(at.naive_utc(), tz)?
        .timestamp()
        .checked_mul(per_second)?
        .checked_add(fraction)
}

/// Each value of `array` moved from its wall clock in `tz` to its instant; the fraction
/// of a second is kept.
fn zone_values<T: ArrowTimestampType>(
    array: &ArrayRef,
    tz: &Tz,
    zone: &str,
) -> Result<ArrayRef, ArrowError> {
    let values = array.as_primitive::<T>();
    let zoned: PrimitiveArray<T> = values.try_unary(|v| {
        instant_of(v, T::UNIT, tz).ok_or_else(|| {
            ArrowError::ComputeError(format!(
                "{v} ({:?}) as a wall-clock time in {zone} is out of range",
                T::UNIT
            ))
        })
    })?;
    Ok(Arc::new(zoned.with_timezone(zone)))
}

/// The instant `written` names: that of its wall-clock time in the zone it names, else
/// in `tz`; `None` when it names a zone that is none, or is out of range.
fn written_instant(written: &TimestampText, tz: &Tz) -> Option<DateTime<Utc>> {
    match &written.zone {
        None => Some(local_instant(written.local, tz)?.with_timezone(&Utc)),
        Some(WrittenZone::Offset(east)) => {
            let utc = written
                .local
                .checked_sub_signed(chrono::Duration::seconds(i64::from(*east)))?;
            Some(utc.and_utc())
        }
        Some(WrittenZone::Named(name)) => {
            let named: Tz = name.parse().ok()?;
            Some(local_instant(written.local, &named)?.with_timezone(&Utc))
        }
    }
}

/// `text` read as Spark reads a timestamp ([`parse_timestamp_string`]); `Err` with the
/// reason when it writes none.
fn timestamp_written(text: &str) -> Result<TimestampText, String> {
    parse_timestamp_string(text).ok_or_else(|| match no_calendar_day(text) {
        Some(why) => format!("it writes no timestamp: {why}"),
        None => "it writes no timestamp (forms: yyyy[-[m]m[-[d]d]], then after ' ' or 'T' \
                 [h]h[:[m]m[:[s]s[.f…]]], then after the seconds a zone: Z, ±hh:mm, ±hh, a \
                 zone id)"
            .to_string(),
    })
}

/// `at` in `unit`s since the epoch, digits below `unit` floored; `None` when out of range.
fn in_units(at: NaiveDateTime, unit: TimeUnit) -> Option<i64> {
    let at = at.and_utc();
    let per_second = per_second(unit);
    let fraction = i64::from(at.timestamp_subsec_nanos()) / (1_000_000_000 / per_second);
    at.timestamp()
        .checked_mul(per_second)
        .and_then(|s| s.checked_add(fraction))
}

/// The instant `text` names, in `unit`s: read as Spark reads it
/// ([`parse_timestamp_string`]), the instant of its wall-clock time in the zone it names
/// (an offset, `Z`, a zone id), else in `tz`. Digits below `unit` are floored. `Err` with
/// the reason when it is no timestamp, names no zone, or is out of range.
pub(crate) fn text_instant(text: &str, unit: TimeUnit, tz: &Tz) -> Result<i64, String> {
    let written = timestamp_written(text)?;
    let out_of_range = || format!("'{text}' is out of range for a timestamp ({unit:?})");
    let instant = written_instant(&written, tz).ok_or_else(|| match &written.zone {
        Some(WrittenZone::Named(name)) if name.parse::<Tz>().is_err() => {
            format!("'{name}' is not a time zone")
        }
        _ => out_of_range(),
    })?;
    in_units(instant.naive_utc(), unit).ok_or_else(out_of_range)
}

/// The wall-clock time `text` names in `tz`, in `unit`s as if in UTC (a zone-less
/// timestamp's value), read as Spark reads it ([`parse_timestamp_string`]): a string
/// naming its zone (`…+05:00`, `…Z`, `… Europe/Paris`) is its instant's wall-clock time in
/// `tz`, as Spark casts a `TIMESTAMP_LTZ` to `TIMESTAMP_NTZ` in its session zone; one
/// without is the time it writes. Digits below `unit` are floored. `Err` with the reason
/// when it is no timestamp, names no zone, or is out of range.
pub(crate) fn text_wall_clock(text: &str, unit: TimeUnit, tz: &Tz) -> Result<i64, String> {
    let written = timestamp_written(text)?;
    let out_of_range = || format!("'{text}' is out of range for a timestamp ({unit:?})");
    let local = match &written.zone {
        None => written.local,
        Some(_) => {
            let instant = written_instant(&written, tz).ok_or_else(|| match &written.zone {
                Some(WrittenZone::Named(name)) if name.parse::<Tz>().is_err() => {
                    format!("'{name}' is not a time zone")
                }
                _ => out_of_range(),
            })?;
            instant.with_timezone(tz).naive_local()
        }
    };
    in_units(local, unit).ok_or_else(out_of_range)
}

/// Strings as the dates they write, read as Spark's cast to `DATE` reads them
/// ([`string_to_date`]); one that writes none is an error naming it, or null when `safe`.
fn date_strings(
    strings: &datafusion::arrow::array::StringArray,
    safe: bool,
) -> Result<ArrayRef, ArrowError> {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)
        .ok_or_else(|| ArrowError::ComputeError("no epoch".to_string()))?;
    let mut values = Vec::with_capacity(strings.len());
    for text in strings.iter() {
        let Some(text) = text else {
            values.push(None);
            continue;
        };
        let days = string_to_date(text)
            .and_then(|date| i32::try_from(date.signed_duration_since(epoch).num_days()).ok());
        match days {
            Some(days) => values.push(Some(days)),
            None if safe => values.push(None),
            None => {
                return Err(ArrowError::CastError(match no_calendar_day(text) {
                    Some(why) => format!("Cannot cast string '{text}' to DATE: {why}"),
                    None => format!(
                        "Cannot cast string '{text}' to DATE: it writes no date (forms: yyyy, \
                         yyyy-[m]m, yyyy-[m]m-[d]d, yyyy-[m]m-[d]d followed by ' ' or 'T' and \
                         anything)"
                    ),
                }))
            }
        }
    }
    Ok(Arc::new(Date32Array::from(values)))
}

/// Strings as the wall-clock times they name in `tz` ([`text_wall_clock`]), as zone-less
/// timestamps of `unit`; one that is no timestamp is an error, or null when `safe`.
fn wall_clock_strings(
    strings: &datafusion::arrow::array::StringArray,
    unit: TimeUnit,
    tz: &Tz,
    safe: bool,
) -> Result<ArrayRef, ArrowError> {
    let mut values = Vec::with_capacity(strings.len());
    for text in strings.iter() {
        let value = match text.map(|t| text_wall_clock(t, unit, tz)) {
            None => None,
            Some(Ok(v)) => Some(v),
            Some(Err(_)) if safe => None,
            Some(Err(reason)) => {
                return Err(ArrowError::CastError(format!(
                    "Cannot cast string '{}' to TIMESTAMP (no zone, {unit:?}): {reason}",
                    text.unwrap_or_default()
                )))
            }
        };
        values.push(value);
    }
    let array: ArrayRef = match unit {
        TimeUnit::Second => Arc::new(PrimitiveArray::<TimestampSecondType>::from(values)),
        TimeUnit::Millisecond => Arc::new(PrimitiveArray::<TimestampMillisecondType>::from(values)),
        TimeUnit::Microsecond => Arc::new(PrimitiveArray::<TimestampMicrosecondType>::from(values)),
        TimeUnit::Nanosecond => Arc::new(PrimitiveArray::<TimestampNanosecondType>::from(values)),
    };
    Ok(array)
}

/// Strings as the instants they name in `tz` ([`text_instant`]), as timestamps of `unit`
/// in `zone`; one that is no timestamp is an error, or null when `safe`.
fn zone_strings(
    strings: &datafusion::arrow::array::StringArray,
    unit: TimeUnit,
    tz: &Tz,
    zone: &str,
    safe: bool,
) -> Result<ArrayRef, ArrowError> {
    let mut values = Vec::with_capacity(strings.len());
    for text in strings.iter() {
        let value = match text.map(|t| text_instant(t, unit, tz)) {
            None => None,
            Some(Ok(v)) => Some(v),
            Some(Err(_)) if safe => None,
            Some(Err(reason)) => {
                return Err(ArrowError::CastError(format!(
                    "Cannot cast string '{}' to TIMESTAMP in {zone} ({unit:?}): {reason}",
                    text.unwrap_or_default()
                )))
            }
        };
        values.push(value);
    }
    let array: ArrayRef = match unit {
        TimeUnit::Second => {
            Arc::new(PrimitiveArray::<TimestampSecondType>::from(values).with_timezone(zone))
        }
        TimeUnit::Millisecond => {
            Arc::new(PrimitiveArray::<TimestampMillisecondType>::from(values).with_timezone(zone))
        }
        TimeUnit::Microsecond => {
            Arc::new(PrimitiveArray::<TimestampMicrosecondType>::from(values).with_timezone(zone))
        }
        TimeUnit::Nanosecond => {
            Arc::new(PrimitiveArray::<TimestampNanosecondType>::from(values).with_timezone(zone))
        }
    };
    Ok(array)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int32Array, ListArray, StringArray};

    fn micros(s: &str) -> i64 {
        chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f")
            .expect("time")
            .and_utc()
            .timestamp_micros()
    }

    fn utc_micros() -> DataType {
        DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from("UTC")))
    }

    #[test]
    fn strings_resolve_as_java_time_does() {
        let tz: Tz = "America/New_York".parse().expect("zone");
        let strings: ArrayRef = Arc::new(StringArray::from(vec![
            Some("2026-03-08 02:30:00.25"),
            Some("2026-11-01 01:30:00"),
            Some("2026-11-01T01:30:00-05:00"),
            None,
            Some("1960-01-01"),
            Some("1969-12-31 23:59:59.9999995"),
        ]));
        let zoned =
            zone_array(&strings, &utc_micros(), &tz, "America/New_York", false).expect("zoned");
        let zoned = zoned.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(zoned.value(0), micros("2026-03-08 07:30:00.25"));
        assert_eq!(zoned.value(1), micros("2026-11-01 05:30:00"));
        assert_eq!(zoned.value(2), micros("2026-11-01 06:30:00"));
        assert!(zoned.is_null(3));
        assert_eq!(zoned.value(4), micros("1960-01-01 05:00:00"));
        // the digit past the microseconds floors, as Arrow's cast does
        assert_eq!(zoned.value(5), micros("1970-01-01 04:59:59.999999"));

        let bad: ArrayRef = Arc::new(StringArray::from(vec!["not a time"]));
        let err = zone_array(&bad, &utc_micros(), &tz, "America/New_York", false)
            .expect_err("no timestamp");
        assert!(err.to_string().contains("'not a time'"), "{err}");
        let safe = zone_array(&bad, &utc_micros(), &tz, "America/New_York", true).expect("safe");
        assert!(safe.is_null(0));
    }

    #[test]
    fn strings_naming_an_offset_are_their_instants_wall_clock_in_the_zone() {
        let tz: Tz = "Europe/Paris".parse().expect("zone");
        let naive = DataType::Timestamp(TimeUnit::Microsecond, None);
        let strings: ArrayRef = Arc::new(StringArray::from(vec![
            // 05:00Z: 06:00 in Paris (+01:00)
            Some("2024-01-01 10:00:00+05:00"),
            // 01:30Z: the second 02:30 of 27 October (+01:00)
            Some("2024-10-27T01:30:00Z"),
            // no offset: the time written, in Paris's skipped hour too
            Some("2024-03-31 02:30:00.25"),
            None,
            Some("1969-12-31T23:59:59.9999995Z"),
        ]));
        let local = zone_array(&strings, &naive, &tz, "Europe/Paris", false).expect("local");
        assert_eq!(local.data_type(), &naive);
        let local = local.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(local.value(0), micros("2024-01-01 06:00:00"));
        assert_eq!(local.value(1), micros("2024-10-27 02:30:00"));
        assert_eq!(local.value(2), micros("2024-03-31 02:30:00.25"));
        assert!(local.is_null(3));
        // floored below the microsecond, then +01:00
        assert_eq!(local.value(4), micros("1970-01-01 00:59:59.999999"));

        let bad: ArrayRef = Arc::new(StringArray::from(vec!["not a time"]));
        let err = zone_array(&bad, &naive, &tz, "Europe/Paris", false).expect_err("no time");
        assert!(err.to_string().contains("'not a time'"), "{err}");
        let safe = zone_array(&bad, &naive, &tz, "Europe/Paris", true).expect("safe");
        assert!(safe.is_null(0));
    }

    #[test]
    fn nested_values_take_the_targets_zone_where_it_has_one() {
        let tz: Tz = "Asia/Kathmandu".parse().expect("zone");
        let ts = PrimitiveArray::<TimestampMicrosecondType>::from(vec![
            Some(micros("2024-01-01 10:00:00")),
            None,
        ]);
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::new(Field::new("item", ts.data_type().clone(), true)),
            datafusion::arrow::buffer::OffsetBuffer::from_lengths([2]),
            Arc::new(ts),
            None,
        ));
        let ids: ArrayRef = Arc::new(Int32Array::from(vec![1]));
        let value: ArrayRef = Arc::new(StructArray::from(vec![
            (Arc::new(Field::new("id", DataType::Int32, true)), ids),
            (
                Arc::new(Field::new("ts", list.data_type().clone(), true)),
                list,
            ),
        ]));
        let target = DataType::Struct(Fields::from(vec![
            Field::new("id", DataType::Int64, true),
            Field::new(
                "ts",
                DataType::List(Arc::new(Field::new("element", utc_micros(), true))),
                true,
            ),
        ]));
        let zoned = zone_array(&value, &target, &tz, "Asia/Kathmandu", false).expect("zoned");
        assert_eq!(
            zoned.data_type(),
            &zoned_type(value.data_type(), &target, "Asia/Kathmandu")
        );
        let st = zoned.as_struct();
        assert_eq!(st.column(0).data_type(), &DataType::Int32);
        let list = st.column(1).as_list::<i32>();
        let values = list.values().as_primitive::<TimestampMicrosecondType>();
        // +05:45
        assert_eq!(values.value(0), micros("2024-01-01 04:15:00"));
        assert!(values.is_null(1));
        assert_eq!(
            values.data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some(Arc::from("Asia/Kathmandu")))
        );
        // a zone-less target leaves the value alone
        let naive = DataType::Struct(Fields::from(vec![Field::new(
            "ts",
            DataType::List(Arc::new(Field::new(
                "element",
                DataType::Timestamp(TimeUnit::Microsecond, None),
                true,
            ))),
            true,
        )]));
        assert_eq!(
            zoned_type(value.data_type(), &naive, "Asia/Kathmandu"),
            value.data_type().clone()
        );
    }
}
