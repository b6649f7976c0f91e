//! Typed single values: partition values, column bounds and defaults.
//!
//! Source: Iceberg spec, Appendix D ("Single-value serialization": the binary form used
//! for `lower_bounds` / `upper_bounds`) and Appendix C ("JSON single-value
//! serialization": the form of `initial-default` / `write-default`).

use std::fmt;

use serde_json::Value as JsonValue;

use super::types::PrimitiveType;
use crate::error::{Error, Result};

/// A primitive value, tagged by its Iceberg type.
///
/// Units: dates are days since 1970-01-01; times µs since midnight; `Timestamp` /
/// `Timestamptz` µs since epoch; `TimestampNs` / `TimestamptzNs` ns since epoch; decimals
/// hold the unscaled value (the scale is the column type's).
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// boolean
    Boolean(bool),
    /// int
    Int(i32),
    /// long
    Long(i64),
    /// float
    Float(f32),
    /// double
    Double(f64),
    /// decimal: unscaled value, precision and scale
    Decimal {
        /// The unscaled value.
        unscaled: i128,
        /// Precision of the type.
        precision: u32,
        /// Scale of the type.
        scale: u32,
    },
    /// date, days since epoch
    Date(i32),
    /// time, µs since midnight
    Time(i64),
    /// timestamp without zone, µs
    Timestamp(i64),
    /// timestamp with zone (UTC), µs
    Timestamptz(i64),
    /// timestamp_ns without zone, ns
    TimestampNs(i64),
    /// timestamptz_ns (UTC), ns
    TimestamptzNs(i64),
    /// string
    String(String),
    /// uuid, 16 bytes big-endian
    Uuid([u8; 16]),
    /// fixed(L)
    Fixed(Vec<u8>),
    /// binary
    Binary(Vec<u8>),
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Boolean(v) => write!(f, "{v}"),
            Literal::Int(v) | Literal::Date(v) => write!(f, "{v}"),
            Literal::Long(v)
            | Literal::Time(v)
            | Literal::Timestamp(v)
            | Literal::Timestamptz(v)
            | Literal::TimestampNs(v)
            | Literal::TimestamptzNs(v) => write!(f, "{v}"),
            Literal::Float(v) => write!(f, "{v}"),
            Literal::Double(v) => write!(f, "{v}"),
            Literal::Decimal {
                unscaled, scale, ..
            } => write!(f, "{unscaled}e-{scale}"),
            Literal::String(s) => write!(f, "'{s}'"),
            Literal::Uuid(b) => write!(f, "{}", uuid::Uuid::from_bytes(*b)),
            Literal::Fixed(b) | Literal::Binary(b) => {
                f.write_str("X'")?;
                for byte in b {
                    write!(f, "{byte:02x}")?;
                }
                f.write_str("'")
            }
        }
    }
}

fn bytes_to_array<const N: usize>(bytes: &[u8], ty: &PrimitiveType) -> Result<[u8; N]> {
    bytes.try_into().map_err(|_| {
        Error::invalid_data(format!(
            "a {ty} value needs {N} bytes, found {}",
            bytes.len()
        ))
    })
}

/// A 4-byte date (days since epoch) as a timestamp of `per_day` units per day; an error
/// when it does not fit in an int64.
fn days_to(bytes: &[u8], ty: &PrimitiveType, per_day: i64) -> Result<i64> {
    let days = i32::from_le_bytes(bytes_to_array(bytes, ty)?);
    i64::from(days)
        .checked_mul(per_day)
        .ok_or_else(|| Error::invalid_data(format!("date {days} (days) out of range for {ty}")))
}

/// A decimal's unscaled value as text with `scale` digits after the point
/// (`-1_000_000_000`, 2 → `-10000000.00`), all its digits whatever its precision.
pub(crate) fn decimal_text(unscaled: i128, scale: u32) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// The decimal unscaled value of big-endian two's-complement bytes.
pub fn decimal_from_be_bytes(bytes: &[u8]) -> Result<i128> {
    if bytes.len() > 16 {
        return Err(Error::invalid_data(format!(
            "decimal of {} bytes exceeds 16",
            bytes.len()
        )));
    }
    if bytes.is_empty() {
        return Ok(0);
    }
    let negative = bytes[0] & 0x80 != 0;
    let mut buf = if negative { [0xffu8; 16] } else { [0u8; 16] };
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(buf))
}

impl Literal {
    /// Bytes the value owns on the heap (a string's or byte array's capacity; 0 for
    /// the fixed-size kinds).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Literal::String(s) => s.capacity(),
            Literal::Fixed(b) | Literal::Binary(b) => b.capacity(),
            _ => 0,
        }
    }

    /// Decode the spec's single-value binary form (Appendix D) as type `ty`.
    ///
    /// `int` bytes are accepted for `long`, and `float` bytes for `double`, because
    /// bounds written before a type promotion keep their old width.
    pub fn from_bytes(bytes: &[u8], ty: &PrimitiveType) -> Result<Literal> {
        Ok(match ty {
            PrimitiveType::Boolean => Literal::Boolean(bytes.first().is_some_and(|b| *b != 0)),
            PrimitiveType::Int => Literal::Int(i32::from_le_bytes(bytes_to_array(bytes, ty)?)),
            PrimitiveType::Date => Literal::Date(i32::from_le_bytes(bytes_to_array(bytes, ty)?)),
            PrimitiveType::Long => Literal::Long(if bytes.len() == 4 {
                i64::from(i32::from_le_bytes(bytes_to_array(bytes, ty)?))
            } else {
                i64::from_le_bytes(bytes_to_array(bytes, ty)?)
            }),
            PrimitiveType::Float => Literal::Float(f32::from_le_bytes(bytes_to_array(bytes, ty)?)),
            PrimitiveType::Double => Literal::Double(if bytes.len() == 4 {
                f64::from(f32::from_le_bytes(bytes_to_array(bytes, ty)?))
            } else {
                f64::from_le_bytes(bytes_to_array(bytes, ty)?)
            }),
            PrimitiveType::Time => Literal::Time(i64::from_le_bytes(bytes_to_array(bytes, ty)?)),
            // 4 bytes: a date bound written before a v3 date → timestamp promotion
            PrimitiveType::Timestamp if bytes.len() == 4 => {
                Literal::Timestamp(days_to(bytes, ty, 86_400_000_000)?)
            }
            PrimitiveType::TimestampNs if bytes.len() == 4 => {
                Literal::TimestampNs(days_to(bytes, ty, 86_400_000_000_000)?)
            }
            PrimitiveType::Timestamp => {
                Literal::Timestamp(i64::from_le_bytes(bytes_to_array(bytes, ty)?))
            }
            PrimitiveType::Timestamptz => {
                Literal::Timestamptz(i64::from_le_bytes(bytes_to_array(bytes, ty)?))
            }
            PrimitiveType::TimestampNs => {
                Literal::TimestampNs(i64::from_le_bytes(bytes_to_array(bytes, ty)?))
            }
            PrimitiveType::TimestamptzNs => {
                Literal::TimestamptzNs(i64::from_le_bytes(bytes_to_array(bytes, ty)?))
            }
            PrimitiveType::Decimal { precision, scale } => Literal::Decimal {
                unscaled: decimal_from_be_bytes(bytes)?,
                precision: *precision,
                scale: *scale,
            },
            PrimitiveType::String => Literal::String(
                String::from_utf8(bytes.to_vec())
                    .map_err(|e| Error::invalid_data("string bound is not UTF-8").with_source(e))?,
            ),
            PrimitiveType::Uuid => Literal::Uuid(bytes_to_array(bytes, ty)?),
            PrimitiveType::Fixed(_) => Literal::Fixed(bytes.to_vec()),
            PrimitiveType::Binary => Literal::Binary(bytes.to_vec()),
            PrimitiveType::Unknown
            | PrimitiveType::Variant
            | PrimitiveType::Geometry
            | PrimitiveType::Geography => {
                return Err(Error::unsupported(format!("single values of type {ty}")))
            }
        })
    }

    /// Decode the spec's JSON single-value form (Appendix C), as used by
    /// `initial-default` and `write-default`.
    pub fn from_json(v: &JsonValue, ty: &PrimitiveType) -> Result<Literal> {
        let bad = || Error::invalid_data(format!("JSON value {v} is not a valid {ty}"));
        let int = || v.as_i64().ok_or_else(bad);
        let text = || v.as_str().ok_or_else(bad);
        Ok(match ty {
            PrimitiveType::Boolean => Literal::Boolean(v.as_bool().ok_or_else(bad)?),
            PrimitiveType::Int => Literal::Int(i32::try_from(int()?).map_err(|_| bad())?),
            PrimitiveType::Long => Literal::Long(int()?),
            PrimitiveType::Float => Literal::Float(v.as_f64().ok_or_else(bad)? as f32),
            PrimitiveType::Double => Literal::Double(v.as_f64().ok_or_else(bad)?),
            PrimitiveType::Decimal { precision, scale } => {
                let s = text()?;
                Literal::Decimal {
                    unscaled: parse_decimal(s, *scale).ok_or_else(bad)?,
                    precision: *precision,
                    scale: *scale,
                }
            }
            PrimitiveType::Date => {
                let d =
                    chrono::NaiveDate::parse_from_str(text()?, "%Y-%m-%d").map_err(|_| bad())?;
                Literal::Date((d - epoch_date()).num_days() as i32)
            }
            PrimitiveType::Time => {
                let t =
                    chrono::NaiveTime::parse_from_str(text()?, "%H:%M:%S%.f").map_err(|_| bad())?;
                let since = t - chrono::NaiveTime::MIN;
                Literal::Time(since.num_microseconds().ok_or_else(bad)?)
            }
            PrimitiveType::Timestamp | PrimitiveType::TimestampNs => {
                let ts = chrono::NaiveDateTime::parse_from_str(text()?, "%Y-%m-%dT%H:%M:%S%.f")
                    .map_err(|_| bad())?
                    .and_utc();
                if *ty == PrimitiveType::Timestamp {
                    Literal::Timestamp(ts.timestamp_micros())
                } else {
                    Literal::TimestampNs(ts.timestamp_nanos_opt().ok_or_else(bad)?)
                }
            }
            PrimitiveType::Timestamptz | PrimitiveType::TimestamptzNs => {
                let ts = chrono::DateTime::parse_from_rfc3339(text()?).map_err(|_| bad())?;
                if *ty == PrimitiveType::Timestamptz {
                    Literal::Timestamptz(ts.timestamp_micros())
                } else {
                    Literal::TimestamptzNs(ts.timestamp_nanos_opt().ok_or_else(bad)?)
                }
            }
            PrimitiveType::String => Literal::String(text()?.to_string()),
            PrimitiveType::Uuid => Literal::Uuid(
                *uuid::Uuid::parse_str(text()?)
                    .map_err(|_| bad())?
                    .as_bytes(),
            ),
            PrimitiveType::Fixed(_) | PrimitiveType::Binary => {
                let s = text()?;
                let bytes = (0..s.len())
                    .step_by(2)
                    .map(|i| s.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(bad)?;
                if matches!(ty, PrimitiveType::Fixed(_)) {
                    Literal::Fixed(bytes)
                } else {
                    Literal::Binary(bytes)
                }
            }
            PrimitiveType::Unknown
            | PrimitiveType::Variant
            | PrimitiveType::Geometry
            | PrimitiveType::Geography => {
                return Err(Error::unsupported(format!("default values of type {ty}")))
            }
        })
    }
}

impl Literal {
    /// The spec's JSON single-value form (Appendix C) of this value as a value of `ty`,
    /// for `initial-default` / `write-default`: booleans, ints, longs, floats and
    /// doubles as JSON numbers; decimals as a string with `scale` digits after the point
    /// (`"-14.20"`); dates `"2017-11-16"`; times `"22:31:08.123456"`; timestamps
    /// `"2017-11-16T22:31:08.123456"` (nanosecond types: 9 fraction digits), with
    /// `+00:00` appended for the `tz` types; strings as strings; UUIDs in their
    /// hyphenated form; fixed and binary as lowercase hex.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`]): the value is not one of `ty`
    /// (a decimal of another scale or too many digits for the precision, a fixed of
    /// another length), a float that is NaN or infinite (JSON has no such number), or
    /// `ty` has no single values (`unknown`, `variant`, `geometry`, `geography`).
    pub fn to_json(&self, ty: &PrimitiveType) -> Result<JsonValue> {
        let bad = || Error::invalid_argument(format!("value {self} is not a {ty}"));
        let number = |v: f64| {
            serde_json::Number::from_f64(v)
                .map(JsonValue::Number)
                .ok_or_else(|| Error::invalid_argument(format!("{ty} value {v} has no JSON form")))
        };
        let timestamp = |units: i64, per_second: i64, zone: &str| -> Result<JsonValue> {
            let seconds = units.div_euclid(per_second);
            let fraction = units.rem_euclid(per_second);
            let nanos =
                u32::try_from(fraction * (1_000_000_000 / per_second)).map_err(|_| bad())?;
            let t = chrono::DateTime::from_timestamp(seconds, nanos).ok_or_else(bad)?;
            let digits = if per_second == 1_000_000 { 6 } else { 9 };
            Ok(JsonValue::String(format!(
                "{}.{fraction:0digits$}{zone}",
                t.naive_utc().format("%Y-%m-%dT%H:%M:%S")
            )))
        };
        let hex = |b: &[u8]| JsonValue::String(b.iter().map(|x| format!("{x:02x}")).collect());
        let value = match (self, ty) {
            (Literal::Boolean(v), PrimitiveType::Boolean) => JsonValue::Bool(*v),
            (Literal::Int(v), PrimitiveType::Int) => JsonValue::from(*v),
            (Literal::Long(v), PrimitiveType::Long) => JsonValue::from(*v),
            // the shortest decimal that reads back as this float (1.1, not 1.100000023841858)
            (Literal::Float(v), PrimitiveType::Float) => {
                number(v.to_string().parse().unwrap_or(f64::from(*v)))?
            }
            (Literal::Double(v), PrimitiveType::Double) => number(*v)?,
            (
                Literal::Decimal {
                    unscaled, scale, ..
                },
                PrimitiveType::Decimal {
                    precision: p,
                    scale: s,
                },
            ) => {
                let digits = unscaled.unsigned_abs().to_string();
                if scale != s || digits.len() as u32 > *p {
                    return Err(bad());
                }
                let scale = *scale as usize;
                let padded = format!("{digits:0>width$}", width = scale + 1);
                let (int, frac) = padded.split_at(padded.len() - scale);
                let sign = if *unscaled < 0 { "-" } else { "" };
                JsonValue::String(if scale == 0 {
                    format!("{sign}{int}")
                } else {
                    format!("{sign}{int}.{frac}")
                })
            }
            (Literal::Date(d), PrimitiveType::Date) => {
                let date = epoch_date()
                    .checked_add_signed(chrono::TimeDelta::days(i64::from(*d)))
                    .ok_or_else(bad)?;
                JsonValue::String(date.format("%Y-%m-%d").to_string())
            }
            (Literal::Time(us), PrimitiveType::Time) => {
                let secs = u32::try_from(us.div_euclid(1_000_000)).map_err(|_| bad())?;
                let micros = us.rem_euclid(1_000_000);
                let t = chrono::NaiveTime::from_num_seconds_from_midnight_opt(secs, 0)
                    .ok_or_else(bad)?;
                JsonValue::String(format!("{}.{micros:06}", t.format("%H:%M:%S")))
            }
            (Literal::Timestamp(v), PrimitiveType::Timestamp) => timestamp(*v, 1_000_000, "")?,
            (Literal::Timestamptz(v), PrimitiveType::Timestamptz) => {
                timestamp(*v, 1_000_000, "+00:00")?
            }
            (Literal::TimestampNs(v), PrimitiveType::TimestampNs) => {
                timestamp(*v, 1_000_000_000, "")?
            }
            (Literal::TimestamptzNs(v), PrimitiveType::TimestamptzNs) => {
                timestamp(*v, 1_000_000_000, "+00:00")?
            }
            (Literal::String(s), PrimitiveType::String) => JsonValue::String(s.clone()),
            (Literal::Uuid(b), PrimitiveType::Uuid) => {
                JsonValue::String(uuid::Uuid::from_bytes(*b).hyphenated().to_string())
            }
            (Literal::Fixed(b), PrimitiveType::Fixed(n)) if b.len() as u64 == *n => hex(b),
            (Literal::Binary(b), PrimitiveType::Binary) => hex(b),
            (
                _,
                PrimitiveType::Unknown
                | PrimitiveType::Variant
                | PrimitiveType::Geometry
                | PrimitiveType::Geography,
            ) => {
                return Err(Error::invalid_argument(format!(
                    "a {ty} column has no default values (spec \"Default values\": they \
                     default to null)"
                )))
            }
            _ => return Err(bad()),
        };
        Ok(value)
    }
}

/// 1970-01-01.
pub fn epoch_date() -> chrono::NaiveDate {
    chrono::DateTime::UNIX_EPOCH.date_naive()
}

/// Parse a decimal string such as `"-12.30"` into its unscaled value at `scale`.
/// Returns `None` if the text has more fractional digits than `scale` or is malformed.
pub fn parse_decimal(s: &str, scale: u32) -> Option<i128> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if frac_part.len() > scale as usize
        || int_part.is_empty() && frac_part.is_empty()
        || !int_part
            .chars()
            .chain(frac_part.chars())
            .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut unscaled: i128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().ok()?
    };
    for _ in 0..scale {
        unscaled = unscaled.checked_mul(10)?;
    }
    if !frac_part.is_empty() {
        let frac: i128 = frac_part.parse().ok()?;
        let pad = 10i128.checked_pow(scale - frac_part.len() as u32)?;
        unscaled = unscaled.checked_add(frac.checked_mul(pad)?)?;
    }
    Some(if negative { -unscaled } else { unscaled })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_bounds() {
        assert_eq!(
            Literal::from_bytes(&[1, 0, 0, 0], &PrimitiveType::Int).unwrap(),
            Literal::Int(1)
        );
        // int bound under a promoted long column
        assert_eq!(
            Literal::from_bytes(&(-5i32).to_le_bytes(), &PrimitiveType::Long).unwrap(),
            Literal::Long(-5)
        );
        assert_eq!(
            Literal::from_bytes(&1.5f32.to_le_bytes(), &PrimitiveType::Double).unwrap(),
            Literal::Double(1.5)
        );
        // date bound under a column promoted to timestamp / timestamp_ns (v3)
        assert_eq!(
            Literal::from_bytes(&(-2i32).to_le_bytes(), &PrimitiveType::Timestamp).unwrap(),
            Literal::Timestamp(-2 * 86_400_000_000)
        );
        assert_eq!(
            Literal::from_bytes(&19_000i32.to_le_bytes(), &PrimitiveType::TimestampNs).unwrap(),
            Literal::TimestampNs(19_000 * 86_400_000_000_000)
        );
        // a date whose nanoseconds do not fit an int64 is an error, not a wrapped value
        assert!(Literal::from_bytes(&i32::MAX.to_le_bytes(), &PrimitiveType::TimestampNs).is_err());
        // 3 bytes are no value of a 4- or 8-byte type
        for ty in [
            PrimitiveType::Int,
            PrimitiveType::Long,
            PrimitiveType::Timestamp,
        ] {
            assert!(Literal::from_bytes(&[1, 2, 3], &ty).is_err(), "{ty}");
        }
        let dec = PrimitiveType::Decimal {
            precision: 9,
            scale: 2,
        };
        assert_eq!(
            Literal::from_bytes(&[0xff, 0x85], &dec).unwrap(),
            Literal::Decimal {
                unscaled: -123,
                precision: 9,
                scale: 2
            }
        );
        assert!(Literal::from_bytes(&[1, 2, 3], &PrimitiveType::Long).is_err());
    }

    #[test]
    fn json_defaults() {
        let ts = Literal::from_json(
            &"2017-11-16T22:31:08.000001+00:00".into(),
            &PrimitiveType::Timestamptz,
        )
        .unwrap();
        assert_eq!(ts, Literal::Timestamptz(1510871468000001));
        let d = Literal::from_json(&"2017-11-16".into(), &PrimitiveType::Date).unwrap();
        assert_eq!(d, Literal::Date(17486));
        let dec = PrimitiveType::Decimal {
            precision: 9,
            scale: 2,
        };
        assert_eq!(
            Literal::from_json(&"-14.2".into(), &dec).unwrap(),
            Literal::Decimal {
                unscaled: -1420,
                precision: 9,
                scale: 2
            }
        );
        assert_eq!(
            Literal::from_json(&7.into(), &PrimitiveType::Int).unwrap(),
            Literal::Int(7)
        );
        assert_eq!(
            Literal::from_json(&"f00d".into(), &PrimitiveType::Binary).unwrap(),
            Literal::Binary(vec![0xf0, 0x0d])
        );
    }

    #[test]
    fn json_defaults_round_trip() {
        let dec = |precision, scale| PrimitiveType::Decimal { precision, scale };
        let cases: Vec<(Literal, PrimitiveType, JsonValue)> = vec![
            (Literal::Boolean(true), PrimitiveType::Boolean, true.into()),
            (Literal::Int(-7), PrimitiveType::Int, (-7).into()),
            (
                Literal::Long(1 << 40),
                PrimitiveType::Long,
                (1i64 << 40).into(),
            ),
            (Literal::Float(1.5), PrimitiveType::Float, 1.5.into()),
            (
                Literal::Double(-0.25),
                PrimitiveType::Double,
                (-0.25).into(),
            ),
            (
                Literal::Decimal {
                    unscaled: -1420,
                    precision: 9,
                    scale: 2,
                },
                dec(9, 2),
                "-14.20".into(),
            ),
            (
                Literal::Decimal {
                    unscaled: 5,
                    precision: 4,
                    scale: 3,
                },
                dec(4, 3),
                "0.005".into(),
            ),
            (
                Literal::Decimal {
                    unscaled: 12,
                    precision: 5,
                    scale: 0,
                },
                dec(5, 0),
                "12".into(),
            ),
            (
                Literal::Date(17486),
                PrimitiveType::Date,
                "2017-11-16".into(),
            ),
            (Literal::Date(-1), PrimitiveType::Date, "1969-12-31".into()),
            (
                Literal::Time(81_068_123_456),
                PrimitiveType::Time,
                "22:31:08.123456".into(),
            ),
            (
                Literal::Timestamp(1510871468000001),
                PrimitiveType::Timestamp,
                "2017-11-16T22:31:08.000001".into(),
            ),
            (
                Literal::Timestamp(-1),
                PrimitiveType::Timestamp,
                "1969-12-31T23:59:59.999999".into(),
            ),
            (
                Literal::Timestamptz(1510871468000001),
                PrimitiveType::Timestamptz,
                "2017-11-16T22:31:08.000001+00:00".into(),
            ),
            (
                Literal::TimestampNs(1510871468000001001),
                PrimitiveType::TimestampNs,
                "2017-11-16T22:31:08.000001001".into(),
            ),
            (
                Literal::TimestamptzNs(1510871468000001001),
                PrimitiveType::TimestamptzNs,
                "2017-11-16T22:31:08.000001001+00:00".into(),
            ),
            (
                Literal::String("a'b".into()),
                PrimitiveType::String,
                "a'b".into(),
            ),
            (
                Literal::Uuid(
                    *uuid::Uuid::from_u128(0xf79c3e09_677c_4bbd_a479_3f349cb785e7).as_bytes(),
                ),
                PrimitiveType::Uuid,
                "f79c3e09-677c-4bbd-a479-3f349cb785e7".into(),
            ),
            (
                Literal::Fixed(vec![0, 1, 0xff]),
                PrimitiveType::Fixed(3),
                "0001ff".into(),
            ),
            (
                Literal::Binary(vec![0xf0, 0x0d]),
                PrimitiveType::Binary,
                "f00d".into(),
            ),
        ];
        for (lit, ty, json) in cases {
            assert_eq!(lit.to_json(&ty).unwrap(), json, "{ty}");
            assert_eq!(Literal::from_json(&json, &ty).unwrap(), lit, "{ty}");
        }
        // values that are not of the type, or have no JSON form
        assert!(Literal::Int(1).to_json(&PrimitiveType::Long).is_err());
        assert!(Literal::Fixed(vec![1])
            .to_json(&PrimitiveType::Fixed(2))
            .is_err());
        assert!(Literal::Double(f64::NAN)
            .to_json(&PrimitiveType::Double)
            .is_err());
        let wide = Literal::Decimal {
            unscaled: 12345,
            precision: 9,
            scale: 2,
        };
        assert!(wide.to_json(&dec(4, 2)).is_err());
        assert!(wide.to_json(&dec(9, 3)).is_err());
        let err = Literal::Int(1)
            .to_json(&PrimitiveType::Unknown)
            .unwrap_err();
        assert!(err.message().contains("has no default values"), "{err}");
    }

    #[test]
    fn decimals_parse() {
        assert_eq!(parse_decimal("12.30", 2), Some(1230));
        assert_eq!(parse_decimal("-0.5", 3), Some(-500));
        assert_eq!(parse_decimal("1.234", 2), None);
        assert_eq!(parse_decimal("abc", 2), None);
    }
}
