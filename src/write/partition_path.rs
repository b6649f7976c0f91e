//! Partition paths of data files as Iceberg Java builds them (`PartitionSpec.partitionToPath`):
//! `name=value` segments joined by `/`, names and values URL-encoded as Java's
//! `URLEncoder.encode(s, UTF-8)` does, values in the transform's human form
//! (`Transform.toHumanString`, `TransformUtil`):
//!
//! - null: `null`;
//! - `year`: `yyyy`; `month`: `yyyy-MM`; `day` (a date): `yyyy-MM-dd`; `hour`:
//!   `yyyy-MM-dd-HH`;
//! - `identity` / `truncate` of a date `yyyy-MM-dd`, a time `HH:mm[:ss[.fff…]]`, a
//!   timestamp `yyyy-MM-ddTHH:mm[:ss[.fff…]]` (with `Z` when it has a zone), binary and
//!   fixed as base64, decimals as Java's `BigDecimal.toString`, floats as Java's
//!   `Float/Double.toString`, everything else in its natural text form;
//! - `bucket`: the bucket number.
//!
//! Months before 1970 use floor division (Java's `humanMonth` truncates, which prints
//! month `00` for December 1969); paths are opaque to readers, so only the layout matters.

use chrono::{Datelike, NaiveDate, Timelike};

use crate::spec::values::epoch_date;
use crate::spec::{Literal, PartitionSpec, Transform};

/// The partition path of `values` (one per field of `spec`, in order), e.g.
/// `ts_day=2024-06-01/id_bucket=3`; empty for an unpartitioned spec.
pub fn partition_path(spec: &PartitionSpec, values: &[Option<Literal>]) -> String {
    spec.fields
        .iter()
        .zip(values)
        .map(|(f, v)| {
            let human = match v {
                None => "null".to_string(),
                Some(v) => human_string(&f.transform, v),
            };
            format!("{}={}", url_encode(&f.name), url_encode(&human))
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Java's `URLEncoder.encode(s, UTF-8)`: ASCII letters, digits and `.-*_` kept, space
/// as `+`, every other byte of the UTF-8 form as `%XX` (upper-case hex).
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The human form of a partition value produced by `transform`.
pub fn human_string(transform: &Transform, value: &Literal) -> String {
    match (transform, value) {
        (Transform::Year, Literal::Int(y)) => format!("{:04}", 1970 + i64::from(*y)),
        (Transform::Month, Literal::Int(m)) => {
            let m = i64::from(*m);
            format!("{:04}-{:02}", 1970 + m.div_euclid(12), m.rem_euclid(12) + 1)
        }
        (Transform::Hour, Literal::Int(h)) => {
            match chrono::DateTime::UNIX_EPOCH
                .naive_utc()
                .checked_add_signed(chrono::Duration::hours(i64::from(*h)))
            {
                Some(t) => format!(
                    "{:04}-{:02}-{:02}-{:02}",
                    t.year(),
                    t.month(),
                    t.day(),
                    t.hour()
                ),
                None => h.to_string(),
            }
        }
        _ => value_string(value),
    }
}

/// The natural text form of a value (identity/truncate/day partitions).
fn value_string(value: &Literal) -> String {
    match value {
        Literal::Boolean(b) => b.to_string(),
        Literal::Int(v) => v.to_string(),
        Literal::Long(v) => v.to_string(),
        Literal::Float(v) => java_float_string(f64::from(*v), &format!("{v:e}")),
        Literal::Double(v) => java_float_string(*v, &format!("{v:e}")),
        Literal::Decimal {
            unscaled, scale, ..
        } => java_big_decimal(*unscaled, *scale),
        Literal::Date(d) => date_string(i64::from(*d)),
        Literal::Time(us) => time_string(us.rem_euclid(86_400_000_000) * 1000),
        Literal::Timestamp(us) => timestamp_string(*us, 1_000, false),
        Literal::Timestamptz(us) => timestamp_string(*us, 1_000, true),
        Literal::TimestampNs(ns) => timestamp_string(*ns, 1, false),
        Literal::TimestamptzNs(ns) => timestamp_string(*ns, 1, true),
        Literal::String(s) => s.clone(),
        Literal::Uuid(u) => uuid::Uuid::from_bytes(*u).to_string(),
        Literal::Fixed(b) | Literal::Binary(b) => base64(b),
    }
}

/// Java `LocalDate.toString`: `yyyy-MM-dd`, years beyond 9999 with a `+`.
fn date_string(days: i64) -> String {
    match epoch_date().checked_add_signed(chrono::Duration::days(days)) {
        Some(d) => naive_date_string(d),
        None => days.to_string(),
    }
}

fn naive_date_string(d: NaiveDate) -> String {
    let y = d.year();
    let year = if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -i64::from(y))
    } else {
        format!("{y:04}")
    };
    format!("{year}-{:02}-{:02}", d.month(), d.day())
}

/// Java `LocalTime.toString` of nanoseconds since midnight: `HH:mm`, then `:ss` unless
/// seconds and fraction are zero, then the fraction in groups of 3 digits.
fn time_string(nanos_of_day: i64) -> String {
    let secs = nanos_of_day.div_euclid(1_000_000_000);
    let nanos = nanos_of_day.rem_euclid(1_000_000_000);
    let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
    let mut out = format!("{h:02}:{m:02}");
    if s > 0 || nanos > 0 {
        out.push_str(&format!(":{s:02}"));
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

/// Java `LocalDateTime.toString` (and `OffsetDateTime.toString` with `Z`) of a
/// timestamp in units of `nanos_per_unit` nanoseconds.
fn timestamp_string(v: i64, nanos_per_unit: i64, zoned: bool) -> String {
    let nanos = i128::from(v) * i128::from(nanos_per_unit);
    let day_nanos: i128 = 86_400_000_000_000;
    let days = nanos.div_euclid(day_nanos);
    let of_day = nanos.rem_euclid(day_nanos);
    let (Ok(days), Ok(of_day)) = (i64::try_from(days), i64::try_from(of_day)) else {
        return v.to_string();
    };
    let mut out = format!("{}T{}", date_string(days), time_string(of_day));
    if zoned {
        out.push('Z');
    }
    out
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

/// Java `Double.toString` / `Float.toString` from the shortest round-trip digits in
/// Rust's `{:e}` form (`d.ddde±x`): plain with at least one fraction digit for
/// 10^-3 ≤ |v| < 10^7, else `d.dddE±x`.
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
pub(crate) fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The location of a file named `name` in partition directory `partition_dir` (a
/// [`partition_path`], empty for an unpartitioned spec) under `data_location`.
pub fn file_location(data_location: &str, partition_dir: &str, name: &str) -> String {
    let root = data_location.trim_end_matches('/');
    if partition_dir.is_empty() {
        format!("{root}/{name}")
    } else {
        format!("{root}/{partition_dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PartitionField;

    fn field(name: &str, transform: Transform) -> PartitionField {
        PartitionField {
            source_id: 1,
            field_id: None,
            name: name.into(),
            transform,
        }
    }

    #[test]
    fn java_partition_paths() {
        let spec = PartitionSpec {
            spec_id: 1,
            fields: vec![
                field("ts_day", Transform::Day),
                field("id_bucket", Transform::Bucket(4)),
                field("name", Transform::Identity),
                field("n_trunc", Transform::Truncate(3)),
            ],
        };
        let path = partition_path(
            &spec,
            &[
                Some(Literal::Date(19875)),
                Some(Literal::Int(3)),
                Some(Literal::String("a b/c=é".into())),
                None,
            ],
        );
        assert_eq!(
            path,
            "ts_day=2024-06-01/id_bucket=3/name=a+b%2Fc%3D%C3%A9/n_trunc=null"
        );
    }

    #[test]
    fn human_strings() {
        let h = |t: Transform, v: Literal| human_string(&t, &v);
        assert_eq!(h(Transform::Year, Literal::Int(54)), "2024");
        assert_eq!(h(Transform::Month, Literal::Int(653)), "2024-06");
        assert_eq!(h(Transform::Month, Literal::Int(-1)), "1969-12");
        assert_eq!(h(Transform::Hour, Literal::Int(477_001)), "2024-06-01-01");
        assert_eq!(h(Transform::Day, Literal::Date(-1)), "1969-12-31");
        let id = Transform::Identity;
        assert_eq!(h(id, Literal::Timestamp(0)), "1970-01-01T00:00");
        assert_eq!(
            h(id, Literal::Timestamptz(1_500_000)),
            "1970-01-01T00:00:01.500Z"
        );
        assert_eq!(h(id, Literal::Timestamp(-1)), "1969-12-31T23:59:59.999999");
        assert_eq!(
            h(id, Literal::TimestampNs(1)),
            "1970-01-01T00:00:00.000000001"
        );
        assert_eq!(h(id, Literal::Time(3_723_000_000)), "01:02:03");
        assert_eq!(h(id, Literal::Binary(b"hello".to_vec())), "aGVsbG8=");
        assert_eq!(h(id, Literal::Fixed(vec![0xff, 0xfe])), "//4=");
        assert_eq!(h(id, Literal::Boolean(true)), "true");
        let dec = |unscaled, scale| Literal::Decimal {
            unscaled,
            precision: 38,
            scale,
        };
        assert_eq!(h(id, dec(-1234, 2)), "-12.34");
        assert_eq!(h(id, dec(5, 3)), "0.005");
        assert_eq!(h(id, dec(12, 0)), "12");
        assert_eq!(h(id, dec(123, 10)), "1.23E-8");
        assert_eq!(h(id, Literal::Double(1.0)), "1.0");
        assert_eq!(h(id, Literal::Double(1.5e7)), "1.5E7");
        assert_eq!(h(id, Literal::Double(0.001)), "0.001");
        assert_eq!(h(id, Literal::Double(-1.0e-4)), "-1.0E-4");
        assert_eq!(h(id, Literal::Double(123.25)), "123.25");
        assert_eq!(h(id, Literal::Float(0.1)), "0.1");
        assert_eq!(h(id, Literal::Double(f64::NAN)), "NaN");
    }
}
