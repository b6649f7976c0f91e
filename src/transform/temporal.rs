//! `year`, `month`, `day`, `hour`: whole periods since 1970-01-01T00:00 UTC, floored (so
//! values before 1970 are negative: 1969-12-31 is day -1, month -1 and year -1).
//!
//! Sources: `date` (days), `timestamp` / `timestamptz` (µs), `timestamp_ns` /
//! `timestamptz_ns` (ns). `hour` does not apply to dates.

use chrono::Datelike;

use crate::expr::literal::{MICROS_PER_DAY, NANOS_PER_DAY};
use crate::spec::values::epoch_date;
use crate::spec::Literal;

const MICROS_PER_HOUR: i64 = 3_600_000_000;
const NANOS_PER_HOUR: i64 = 3_600_000_000_000;

/// Days since epoch of a date or timestamp value (floored).
pub fn day(value: &Literal) -> Option<i32> {
    let days = match value {
        Literal::Date(d) => i64::from(*d),
        Literal::Timestamp(us) | Literal::Timestamptz(us) => us.div_euclid(MICROS_PER_DAY),
        Literal::TimestampNs(ns) | Literal::TimestamptzNs(ns) => ns.div_euclid(NANOS_PER_DAY),
        _ => return None,
    };
    i32::try_from(days).ok()
}

fn civil(value: &Literal) -> Option<chrono::NaiveDate> {
    epoch_date().checked_add_signed(chrono::Duration::days(i64::from(day(value)?)))
}

/// Years since 1970 of a date or timestamp value.
pub fn year(value: &Literal) -> Option<i32> {
    Some(civil(value)?.year() - 1970)
}

/// Months since 1970-01 of a date or timestamp value.
pub fn month(value: &Literal) -> Option<i32> {
    let d = civil(value)?;
    Some((d.year() - 1970) * 12 + d.month0() as i32)
}

/// Hours since epoch of a timestamp value (not a date).
pub fn hour(value: &Literal) -> Option<i32> {
    let hours = match value {
        Literal::Timestamp(us) | Literal::Timestamptz(us) => us.div_euclid(MICROS_PER_HOUR),
        Literal::TimestampNs(ns) | Literal::TimestamptzNs(ns) => ns.div_euclid(NANOS_PER_HOUR),
        _ => return None,
    };
    i32::try_from(hours).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Literal {
        let t = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").unwrap();
        Literal::Timestamp(t.and_utc().timestamp_micros())
    }

    fn date(s: &str) -> Literal {
        let d = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        Literal::Date((d - epoch_date()).num_days() as i32)
    }

    /// Cases from Java `TestDates` / `TestTimestamps` (incl. negative, pre-1970 values).
    #[test]
    fn temporal_cases() {
        // (value, year, month, day, hour)
        let cases: Vec<(Literal, i32, i32, i32, Option<i32>)> = vec![
            (date("2017-12-01"), 47, 575, 17501, None),
            (date("1970-01-01"), 0, 0, 0, None),
            (date("1969-12-31"), -1, -1, -1, None),
            (date("1969-01-01"), -1, -12, -365, None),
            (date("1968-12-31"), -2, -13, -366, None),
            (
                ts("2017-12-01T10:12:55.038194"),
                47,
                575,
                17501,
                Some(420034),
            ),
            (ts("1970-01-01T00:00:00"), 0, 0, 0, Some(0)),
            (ts("1969-12-31T23:59:59.999999"), -1, -1, -1, Some(-1)),
            (ts("1969-12-31T00:00:00"), -1, -1, -1, Some(-24)),
            (ts("1969-01-01T00:00:00"), -1, -12, -365, Some(-8760)),
            (ts("1900-01-01T00:00:00"), -70, -840, -25567, Some(-613608)),
        ];
        for (v, y, m, d, h) in cases {
            assert_eq!(year(&v), Some(y), "year({v})");
            assert_eq!(month(&v), Some(m), "month({v})");
            assert_eq!(day(&v), Some(d), "day({v})");
            assert_eq!(hour(&v), h, "hour({v})");
        }
        // nanoseconds floor too
        assert_eq!(day(&Literal::TimestampNs(-1)), Some(-1));
        assert_eq!(hour(&Literal::TimestamptzNs(3_600_000_000_000)), Some(1));
    }
}
