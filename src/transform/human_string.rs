//! Partition values as human-readable text: Iceberg Java's `Transform.toHumanString(type,
//! value)` (`Transform.java`, `TransformUtil`, `DateTimeUtil`), the one form both the
//! partition directories of written files (`PartitionSpec.partitionToPath`, see
//! [`crate::write::partition_path`]) and the `partition_summaries` bounds of the
//! `manifests` metadata tables (`ManifestsTable.partitionSummariesToRows`) show:
//!
//! - `year`: `yyyy`; `month`: `yyyy-MM`; `hour`: `yyyy-MM-dd-HH` (`TransformUtil.humanYear`,
//!   `humanMonth`, `humanHour`: `String.format("%04d…")`, months and hours before 1970
//!   floored);
//! - a `date` (a `day` result or a date value): `yyyy-MM-dd` (`humanDay`, `%04d-%02d-%02d`);
//! - a `time`: `LocalTime.toString` (`humanTime`): `HH:mm`, then `:ss` unless seconds and
//!   fraction are zero, then the fraction in groups of 3 digits (`10:00`, `10:30:15.250`,
//!   `00:00:00.000001`);
//! - a `timestamp` / `timestamp_ns`: `DateTimeFormatter.ISO_LOCAL_DATE_TIME`
//!   (`DateTimeUtil.microsToIsoTimestamp` / `nanosToIsoTimestamp`): seconds always, the
//!   fraction only when non-zero, with as few digits as it needs (`2026-01-01T10:00:00`,
//!   `…T10:00:01.5`); `timestamptz` / `timestamptz_ns` the same plus `+00:00`
//!   (`microsToIsoTimestamptz`); years past 9999 with a `+`, as `ISO_LOCAL_DATE` gives them;
//! - `binary` / `fixed`: standard base64 with padding (`TransformUtil.base64encode`);
//! - every other value `value.toString()`: a `float` / `double` as Java's
//!   `Float.toString` / `Double.toString` (`0.0`, `-0.0`, `1.5`, `1.0E10`, `1.0E-4`,
//!   `NaN`, `Infinity`), a `decimal` as `BigDecimal.toString` (`12.30`, `1.23E-8`), a
//!   `uuid` as `UUID.toString` (8-4-4-4-12), a `bucket` number, a boolean, a string as it is.

use chrono::Datelike;

use crate::spec::values::epoch_date;
use crate::spec::{Literal, Transform};

/// The human form of `value`, a partition value produced by `transform` (see the module
/// docs for each type's form). Total: a value out of the range of dates prints its
/// ordinal.
pub fn human_string(transform: &Transform, value: &Literal) -> String {
    match (transform, value) {
        (Transform::Year, Literal::Int(y)) => format!("{:04}", 1970 + i64::from(*y)),
        (Transform::Month, Literal::Int(m)) => {
            let m = i64::from(*m);
            format!("{:04}-{:02}", 1970 + m.div_euclid(12), m.rem_euclid(12) + 1)
        }
        (Transform::Hour, Literal::Int(h)) => {
            let h = i64::from(*h);
            match day_text(h.div_euclid(24)) {
                Some(day) => format!("{day}-{:02}", h.rem_euclid(24)),
                None => h.to_string(),
            }
        }
        _ => value_string(value),
    }
}

/// The `toString` form of a value of an `identity`, `truncate`, `day` or `bucket` field.
fn value_string(value: &Literal) -> String {
    match value {
        Literal::Boolean(b) => b.to_string(),
        Literal::Int(v) => v.to_string(),
        Literal::Long(v) => v.to_string(),
        Literal::Float(v) => java_float_string(f64::from(*v), &two_digits_at_least(*v)),
        Literal::Double(v) => java_float_string(*v, &two_digits_at_least(*v)),
        Literal::Decimal {
            unscaled, scale, ..
        } => java_big_decimal(*unscaled, *scale),
        Literal::Date(d) => day_text(i64::from(*d)).unwrap_or_else(|| d.to_string()),
        Literal::Time(us) => local_time_string(us.rem_euclid(86_400_000_000) * 1000),
        Literal::Timestamp(us) => iso_timestamp(*us, 1_000, false),
        Literal::Timestamptz(us) => iso_timestamp(*us, 1_000, true),
        Literal::TimestampNs(ns) => iso_timestamp(*ns, 1, false),
        Literal::TimestamptzNs(ns) => iso_timestamp(*ns, 1, true),
        Literal::String(s) => s.clone(),
        Literal::Uuid(u) => uuid::Uuid::from_bytes(*u).hyphenated().to_string(),
        Literal::Fixed(b) | Literal::Binary(b) => base64(b),
    }
}

/// `TransformUtil.humanDay`: `String.format("%04d-%02d-%02d", year, month, day)` of the
/// day `days` after 1970-01-01; `None` out of chrono's range.
fn day_text(days: i64) -> Option<String> {
    let d = epoch_date().checked_add_signed(chrono::Duration::try_days(days)?)?;
    Some(format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day()))
}

/// `DateTimeFormatter.ISO_LOCAL_DATE` of the day `days` after 1970-01-01: `yyyy-MM-dd`,
/// a year past 9999 with a `+`, a negative one as `-` and 4 digits; `None` out of
/// chrono's range.
fn iso_date(days: i64) -> Option<String> {
    let d = epoch_date().checked_add_signed(chrono::Duration::try_days(days)?)?;
    let y = d.year();
    let year = if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -i64::from(y))
    } else {
        format!("{y:04}")
    };
    Some(format!("{year}-{:02}-{:02}", d.month(), d.day()))
}

/// Java `LocalTime.toString` of nanoseconds since midnight: `HH:mm`, then `:ss` unless
/// seconds and fraction are zero, then the fraction in groups of 3 digits.
fn local_time_string(nanos_of_day: i64) -> String {
    let (secs, nanos) = split_seconds(nanos_of_day);
    let mut out = format!("{:02}:{:02}", secs / 3600, (secs / 60) % 60);
    if secs % 60 > 0 || nanos > 0 {
        out.push_str(&format!(":{:02}", secs % 60));
        if nanos > 0 {
            if nanos % 1_000_000 == 0 {
                out.push_str(&format!(".{:03}", nanos / 1_000_000));
            } else if nanos % 1_000 == 0 {
                out.push_str(&format!(".{:06}", nanos / 1_000));
            } else {
                out.push_str(&format!(".{nanos:09}"));
            }
        }
    }
    out
}

/// `DateTimeFormatter.ISO_LOCAL_TIME` of nanoseconds since midnight: `HH:mm:ss`, then
/// the fraction only when non-zero, without trailing zeros.
fn iso_time(nanos_of_day: i64) -> String {
    let (secs, nanos) = split_seconds(nanos_of_day);
    let mut out = format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if nanos > 0 {
        let fraction = format!("{nanos:09}");
        out.push('.');
        out.push_str(fraction.trim_end_matches('0'));
    }
    out
}

/// Whole seconds and the nanoseconds left of nanoseconds since midnight.
fn split_seconds(nanos_of_day: i64) -> (i64, i64) {
    (
        nanos_of_day.div_euclid(1_000_000_000),
        nanos_of_day.rem_euclid(1_000_000_000),
    )
}

/// `ISO_LOCAL_DATE_TIME` of a timestamp in units of `nanos_per_unit` nanoseconds since
/// the epoch, with `+00:00` when `zoned` (`DateTimeUtil.microsToIsoTimestamptz`'s
/// `appendOffset("+HH:MM:ss", "+00:00")`); the number itself out of chrono's range.
fn iso_timestamp(v: i64, nanos_per_unit: i64, zoned: bool) -> String {
    let nanos = i128::from(v) * i128::from(nanos_per_unit);
    let day_nanos: i128 = 86_400_000_000_000;
    let (Ok(days), Ok(of_day)) = (
        i64::try_from(nanos.div_euclid(day_nanos)),
        i64::try_from(nanos.rem_euclid(day_nanos)),
    ) else {
        return v.to_string();
    };
    let Some(date) = iso_date(days) else {
        return v.to_string();
    };
    let zone = if zoned { "+00:00" } else { "" };
    format!("{date}T{}{zone}", iso_time(of_day))
}

/// Java `BigDecimal.toString` of `unscaled × 10^-scale`: plain when the adjusted
/// exponent is ≥ -6, else scientific (`1.23E-8`).
fn java_big_decimal(unscaled: i128, scale: u32) -> String {
    let negative = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let scale = i64::from(scale);
    let adjusted = digits.len() as i64 - 1 - scale;
    let body = if adjusted >= -6 {
        if scale == 0 {
            digits
        } else if (digits.len() as i64) > scale {
            let split = digits.len() - scale as usize;
            format!("{}.{}", &digits[..split], &digits[split..])
        } else {
            let zeros = "0".repeat((scale - digits.len() as i64) as usize);
            format!("0.{zeros}{digits}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let mantissa = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        format!("{mantissa}E{adjusted}")
    };
    if negative {
        format!("-{body}")
    } else {
        body
    }
}

/// The digits Java's `Double.toString` / `Float.toString` choose, in Rust's `{:e}` form:
/// the shortest that read back as `v`, but at least two (Java always prints a digit
/// after the point), and of those the closest to `v` (JDK 19's specification of
/// `Double.toString`). Only a subnormal value's shortest digits can be one digit whose
/// two-digit neighbour is closer: Java prints `Double.MIN_VALUE` as `4.9E-324` and
/// `Float.MIN_VALUE` as `1.4E-45`, where the shortest digits are `5e-324` and `1e-45`.
fn two_digits_at_least<T: std::fmt::LowerExp>(v: T) -> String {
    let shortest = format!("{v:e}");
    let mantissa = shortest.split('e').next().unwrap_or_default();
    if mantissa.chars().filter(char::is_ascii_digit).count() > 1 {
        return shortest;
    }
    // the closest two-digit decimal; when its second digit is 0 it is the shortest
    let two = format!("{v:.1e}");
    if two.split('e').next().is_some_and(|m| m.ends_with('0')) {
        shortest
    } else {
        two
    }
}

/// Java `Double.toString` / `Float.toString` from the shortest round-trip digits in
/// Rust's `{:e}` form (`d.ddde±x`): plain with at least one fraction digit for
/// 10^-3 ≤ |v| < 10^7, else `d.dddE±x`; `NaN`, `Infinity`, `-Infinity`, `0.0`, `-0.0`.
fn java_float_string(v: f64, sci: &str) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let body = if (-3..7).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            let padded = format!("{digits:0<int_len$}");
            let (int, frac) = padded.split_at(int_len);
            format!("{int}.{}", if frac.is_empty() { "0" } else { frac })
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        format!("{first}.{}E{exp}", if rest.is_empty() { "0" } else { rest })
    };
    if negative {
        format!("-{body}")
    } else {
        body
    }
}

/// Standard base64 with padding (Java `Base64.getEncoder()`, as `TransformUtil.base64encode`
/// shows binary and fixed values).
fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(t: Transform, v: Literal) -> String {
        human_string(&t, &v)
    }
    const ID: Transform = Transform::Identity;

    #[test]
    fn date_transforms_and_dates() {
        assert_eq!(h(Transform::Year, Literal::Int(54)), "2024");
        assert_eq!(h(Transform::Year, Literal::Int(-1)), "1969");
        assert_eq!(h(Transform::Month, Literal::Int(653)), "2024-06");
        assert_eq!(h(Transform::Month, Literal::Int(614)), "2021-03");
        assert_eq!(h(Transform::Month, Literal::Int(-1)), "1969-12");
        assert_eq!(h(Transform::Hour, Literal::Int(477_001)), "2024-06-01-01");
        assert_eq!(h(Transform::Hour, Literal::Int(25)), "1970-01-02-01");
        assert_eq!(h(Transform::Hour, Literal::Int(-1)), "1969-12-31-23");
        assert_eq!(h(Transform::Day, Literal::Date(-1)), "1969-12-31");
        assert_eq!(h(ID, Literal::Date(19875)), "2024-06-01");
        // `%04d` of years past 9999: no `+` (humanDay), unlike ISO_LOCAL_DATE
        assert_eq!(h(ID, Literal::Date(2_932_897)), "10000-01-01");
        assert_eq!(h(Transform::Bucket(4), Literal::Int(3)), "3");
    }

    #[test]
    fn times_as_local_time_to_string() {
        // the tester's bounds: Java 1.10 gives `10:00` / `10:30:15.250`
        assert_eq!(h(ID, Literal::Time(36_000_000_000)), "10:00");
        assert_eq!(h(ID, Literal::Time(37_815_250_000)), "10:30:15.250");
        assert_eq!(h(ID, Literal::Time(3_723_000_000)), "01:02:03");
        assert_eq!(h(ID, Literal::Time(0)), "00:00");
        assert_eq!(h(ID, Literal::Time(1)), "00:00:00.000001");
        assert_eq!(h(ID, Literal::Time(1_000)), "00:00:00.001");
        assert_eq!(h(ID, Literal::Time(86_399_999_999)), "23:59:59.999999");
    }

    #[test]
    fn timestamps_as_iso_local_date_time() {
        // the tester's bounds (Java 1.10)
        assert_eq!(
            h(ID, Literal::Timestamp(-315_619_200_000_000)),
            "1960-01-01T00:00:00"
        );
        assert_eq!(
            h(ID, Literal::Timestamp(1_767_261_600_000_000)),
            "2026-01-01T10:00:00"
        );
        assert_eq!(
            h(ID, Literal::Timestamptz(1_767_261_601_500_000)),
            "2026-01-01T10:00:01.5+00:00"
        );
        assert_eq!(
            h(ID, Literal::Timestamptz(1_767_261_600_000_000)),
            "2026-01-01T10:00:00+00:00"
        );
        // seconds always, the fraction without trailing zeros
        assert_eq!(h(ID, Literal::Timestamp(0)), "1970-01-01T00:00:00");
        assert_eq!(h(ID, Literal::Timestamp(250_000)), "1970-01-01T00:00:00.25");
        assert_eq!(h(ID, Literal::Timestamp(-1)), "1969-12-31T23:59:59.999999");
        assert_eq!(h(ID, Literal::Timestamp(1)), "1970-01-01T00:00:00.000001");
        assert_eq!(
            h(ID, Literal::TimestampNs(1)),
            "1970-01-01T00:00:00.000000001"
        );
        assert_eq!(
            h(ID, Literal::TimestamptzNs(1_500_000_000)),
            "1970-01-01T00:00:01.5+00:00"
        );
        // ISO_LOCAL_DATE's year past 9999
        assert_eq!(
            h(ID, Literal::Timestamp(253_402_300_800_000_000)),
            "+10000-01-01T00:00:00"
        );
        // beyond chrono's dates: the number
        assert_eq!(h(ID, Literal::Timestamp(i64::MAX)), i64::MAX.to_string());
    }

    #[test]
    fn floats_as_java_to_string() {
        let d = |v: f64| h(ID, Literal::Double(v));
        let f = |v: f32| h(ID, Literal::Float(v));
        // the tester's bounds (Java 1.10)
        assert_eq!(f(1e10), "1.0E10");
        assert_eq!(f(1.5), "1.5");
        assert_eq!(d(0.0), "0.0");
        assert_eq!(d(12345678.9), "1.23456789E7");
        assert_eq!(d(-0.0), "-0.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(d(f64::NAN), "NaN");
        assert_eq!(f(f32::NAN), "NaN");
        assert_eq!(d(f64::INFINITY), "Infinity");
        assert_eq!(d(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(f(f32::NEG_INFINITY), "-Infinity");
        // plain for 10^-3 <= |v| < 10^7, else scientific
        assert_eq!(d(1.0), "1.0");
        assert_eq!(d(123.25), "123.25");
        assert_eq!(d(9_999_999.0), "9999999.0");
        assert_eq!(d(1.0e7), "1.0E7");
        assert_eq!(d(1.5e7), "1.5E7");
        assert_eq!(d(0.001), "0.001");
        assert_eq!(d(-1.0e-4), "-1.0E-4");
        assert_eq!(d(-123.5), "-123.5");
        assert_eq!(d(1e300), "1.0E300");
        assert_eq!(d(f64::MIN_POSITIVE), "2.2250738585072014E-308");
        assert_eq!(d(f64::MAX), "1.7976931348623157E308");
        // a float's own shortest digits, not the double's
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(f32::MAX), "3.4028235E38");
        assert_eq!(f(1.0e-5), "1.0E-5");
        // subnormals whose shortest digits are one digit: Java's closest two digits
        assert_eq!(d(5e-324), "4.9E-324");
        assert_eq!(d(-5e-324), "-4.9E-324");
        assert_eq!(d(1e-323), "9.9E-324");
        assert_eq!(f(1e-45), "1.4E-45");
        assert_eq!(f(3e-45), "2.8E-45");
        assert_eq!(d(2e-1), "0.2");
        assert_eq!(d(3e-310), "3.0E-310");
    }

    #[test]
    fn other_values() {
        assert_eq!(h(ID, Literal::Binary(b"hello".to_vec())), "aGVsbG8=");
        assert_eq!(h(ID, Literal::Binary(vec![0x0a])), "Cg==");
        assert_eq!(h(ID, Literal::Binary(vec![])), "");
        assert_eq!(
            h(Transform::Truncate(2), Literal::Fixed(vec![1, 2, 3])),
            "AQID"
        );
        assert_eq!(h(ID, Literal::Boolean(true)), "true");
        assert_eq!(h(ID, Literal::Long(-7)), "-7");
        assert_eq!(h(Transform::Truncate(2), Literal::String("a".into())), "a");
        assert_eq!(
            h(
                ID,
                Literal::Uuid(
                    *uuid::Uuid::parse_str("550e8400-e29b-41d4-a716-446655440000")
                        .expect("uuid")
                        .as_bytes()
                )
            ),
            "550e8400-e29b-41d4-a716-446655440000"
        );
        let dec = |unscaled, scale| Literal::Decimal {
            unscaled,
            precision: 38,
            scale,
        };
        assert_eq!(h(ID, dec(-1234, 2)), "-12.34");
        assert_eq!(h(ID, dec(1230, 2)), "12.30");
        assert_eq!(h(ID, dec(-5, 2)), "-0.05");
        assert_eq!(h(ID, dec(5, 3)), "0.005");
        assert_eq!(h(ID, dec(12, 0)), "12");
        assert_eq!(h(ID, dec(123, 10)), "1.23E-8");
    }
}
