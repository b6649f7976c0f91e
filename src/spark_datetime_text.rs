//! Dates and timestamps written in strings, read as Spark's casts read them
//! (`DateTimeUtils.stringToDate` and `parseTimestampString` / `stringToTimestamp`):
//! the one reading behind icefloe's `CAST(s AS DATE)`, `CAST(s AS TIMESTAMP)` and
//! `CAST(s AS TIMESTAMPTZ)` of a string (module
//! [`spark_text_casts`](crate::datafusion::spark_text_casts)) and the date fields of a
//! string (`year('2024-1-5')`, module [`spark_datetime`](crate::datafusion::spark_datetime)).
//!
//! Leading and trailing whitespace and ISO control characters are trimmed first. A year
//! has 4 to 6 digits (optionally signed, `-0044`); a month, day, hour, minute and second
//! 1 or 2 digits; a fraction of a second any number (digits past the nanosecond are
//! dropped, then the caller floors to its unit).
//!
//! [`string_to_date`] reads `yyyy`, `yyyy-[m]m`, `yyyy-[m]m-[d]d`, and `yyyy-[m]m-[d]d`
//! followed by ` ` or `T` and anything: only the date written, so
//! `2024-01-01 23:30:00-05:00` is 2024-01-01 (not the instant's UTC date), `2024` is
//! 2024-01-01 and `2024-02` 2024-02-01.
//!
//! [`parse_timestamp_string`] reads the same dates, then optionally after ` ` or `T` a
//! time `[h]h`, `[h]h:[m]m`, `[h]h:[m]m:[s]s` or `[h]h:[m]m:[s]s.[f…]`; after the
//! seconds (or their fraction) a zone: `Z`, an offset `±h[h]`, `±hh[:]mm`, `±hh:mm:ss`,
//! `±hhmmss` (Spark's `getZoneId` also takes `±h:mm`), `UTC`/`GMT`/`UT` alone or followed
//! by such an offset, or a region id (`Europe/Paris`), joined to the time or after a
//! space. A zone needs the seconds, as in Spark (`10:30+05:00` is no timestamp).
//!
//! Decisions where icefloe differs from Spark, each written here:
//! - Spark reads a time without a date (`10:30:00`, `T10:30:00`) on the current date;
//!   icefloe rejects it (a query's rows would change with the day it runs).
//! - Java's three-letter `SHORT_IDS` (`PST`, `EST`, …) are names a caller resolves in
//!   the IANA database ([`WrittenZone::Named`]): `EST` is a zone there, `PST` is not.
//! - Spark's special values (`epoch`, `now`, `today`, …) were removed from casts in
//!   Spark 3.2 and are not read.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

/// The zone a timestamp string names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WrittenZone {
    /// A fixed offset from UTC, in seconds east (`Z`, `+05:30`, `GMT-8`).
    Offset(i32),
    /// A zone id to resolve (a region such as `Europe/Paris`), as written.
    Named(String),
}

/// A timestamp string read by [`parse_timestamp_string`]: the wall-clock time written,
/// and the zone it names, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimestampText {
    /// The date and time written (nanosecond precision).
    pub local: NaiveDateTime,
    /// The zone written after the time; `None` when the string names none.
    pub zone: Option<WrittenZone>,
}

/// `text` without the whitespace and ISO control characters around it (Spark's
/// `UTF8String.trimAll`).
fn trimmed(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c.is_control())
}

/// The leading ASCII digits of `text` (at most `max` of them, at least `min`) as a
/// number, and the rest; `None` when there are fewer than `min` or more than `max`.
fn digits(text: &str, min: usize, max: usize) -> Option<(u32, &str)> {
    let n = text.bytes().take_while(u8::is_ascii_digit).count();
    if n < min || n > max {
        return None;
    }
    let value = text[..n].parse().ok()?;
    Some((value, &text[n..]))
}

/// The date at the start of (trimmed) `text`, and what follows it: `None` when `text`
/// starts with no `[±]yyyy[-[m]m[-[d]d]]`, or the year or year-month is followed by
/// anything, or the day by anything but ` ` or `T`.
fn leading_date(text: &str) -> Option<(NaiveDate, &str)> {
    let ((year, month, day), rest) = leading_fields(text)?;
    Some((NaiveDate::from_ymd_opt(year, month, day)?, rest))
}

/// Why `text`, which has the form of a date (`[±]yyyy[-[m]m[-[d]d]]`, as
/// [`string_to_date`] and [`parse_timestamp_string`] read it), writes none: its year,
/// month and day are no day of the calendar (`2023-02-30`, `2100-02-29`, month 13). `None`
/// when the text has no such form, or names a real day.
pub fn no_calendar_day(text: &str) -> Option<String> {
    let ((year, month, day), _) = leading_fields(trimmed(text))?;
    NaiveDate::from_ymd_opt(year, month, day)
        .is_none()
        .then(|| format!("year {year}, month {month}, day {day} is no day of the calendar"))
}

/// The year, month and day at the start of (trimmed) `text` as numbers, valid or not,
/// and what follows (see [`leading_date`]).
fn leading_fields(text: &str) -> Option<((i32, u32, u32), &str)> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'-' => (-1, &text[1..]),
        b'+' => (1, &text[1..]),
        _ => (1, text),
    };
    let (year, rest) = digits(rest, 4, 6)?;
    let year = sign * i32::try_from(year).ok()?;
    let (month, rest) = match rest.strip_prefix('-') {
        Some(after) => digits(after, 1, 2)?,
        None if rest.is_empty() => (1, rest),
        None => return None,
    };
    let (day, rest) = match rest.strip_prefix('-') {
        Some(after) => digits(after, 1, 2)?,
        None if rest.is_empty() => (1, rest),
        None => return None,
    };
    if !(rest.is_empty() || rest.starts_with([' ', 'T'])) {
        return None;
    }
    Some(((year, month, day), rest))
}

/// The date `text` writes, as Spark's `CAST(text AS DATE)` reads it (see the module
/// docs); `None` when it writes none (Spark: an error under ANSI mode, `NULL` in
/// `TRY_CAST`).
pub fn string_to_date(text: &str) -> Option<NaiveDate> {
    leading_date(trimmed(text)).map(|(date, _)| date)
}

/// The seconds east of UTC of an offset `±h[h]`, `±h[h]:mm`, `±hhmm`, `±hh:mm:ss` or
/// `±hhmmss`; `None` when `text` is none or out of ±18 hours.
fn offset_seconds(text: &str) -> Option<i32> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let body = &text[1..];
    let fields: Vec<&str> = if body.contains(':') {
        body.split(':').collect()
    } else if body.len() <= 2 {
        vec![body]
    } else {
        // hhmm or hhmmss
        if !body.bytes().all(|b| b.is_ascii_digit())
            || !body.len().is_multiple_of(2)
            || body.len() > 6
        {
            return None;
        }
        (0..body.len())
            .step_by(2)
            .map(|i| &body[i..i + 2])
            .collect()
    };
    let (hours, minutes, seconds) = match fields.as_slice() {
        [h] => (*h, "0", "0"),
        [h, m] => (*h, *m, "0"),
        [h, m, s] => (*h, *m, *s),
        _ => return None,
    };
    let field = |f: &str, min: usize, max: u32| {
        let (v, rest) = digits(f, min, 2)?;
        (rest.is_empty() && v <= max).then_some(v)
    };
    let hours = field(hours, 1, 18)?;
    let minutes = field(minutes, 1, 59)?;
    let seconds = field(seconds, 1, 59)?;
    let total = i32::try_from(hours * 3600 + minutes * 60 + seconds).ok()?;
    (total <= 18 * 3600).then_some(sign * total)
}

/// The zone `text` (trimmed) names; `None` when it is empty or an offset that does not
/// parse. A name is returned as written for the caller to resolve.
fn written_zone(text: &str) -> Option<WrittenZone> {
    let text = trimmed(text);
    if text.is_empty() {
        return None;
    }
    if text == "Z" {
        return Some(WrittenZone::Offset(0));
    }
    if text.starts_with(['+', '-']) {
        return offset_seconds(text).map(WrittenZone::Offset);
    }
    for prefix in ["UTC", "GMT", "UT"] {
        if let Some(offset) = text.strip_prefix(prefix) {
            if offset.is_empty() {
                return Some(WrittenZone::Offset(0));
            }
            if offset.starts_with(['+', '-']) {
                return offset_seconds(offset).map(WrittenZone::Offset);
            }
        }
    }
    Some(WrittenZone::Named(text.to_string()))
}

/// The time of day at the start of `text` and the zone after it (see the module docs);
/// `None` when `text` is no such time.
fn time_and_zone(text: &str) -> Option<(NaiveTime, Option<WrittenZone>)> {
    let (hour, rest) = digits(text, 1, 2)?;
    let Some(rest) = rest.strip_prefix(':') else {
        return rest
            .is_empty()
            .then(|| Some((NaiveTime::from_hms_opt(hour, 0, 0)?, None)))?;
    };
    let (minute, rest) = digits(rest, 1, 2)?;
    let Some(rest) = rest.strip_prefix(':') else {
        return rest
            .is_empty()
            .then(|| Some((NaiveTime::from_hms_opt(hour, minute, 0)?, None)))?;
    };
    let (second, mut rest) = digits(rest, 1, 2)?;
    let mut nanos = 0;
    if let Some(after) = rest.strip_prefix('.') {
        let n = after.bytes().take_while(u8::is_ascii_digit).count();
        let kept = &after[..n.min(9)];
        let value: u32 = if kept.is_empty() {
            0
        } else {
            kept.parse().ok()?
        };
        nanos = value * 10u32.pow(9 - u32::try_from(kept.len()).ok()?);
        rest = &after[n..];
    }
    let zone = if rest.is_empty() {
        None
    } else {
        Some(written_zone(rest)?)
    };
    Some((
        NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?,
        zone,
    ))
}

/// The wall-clock time and zone `text` writes, as Spark's `CAST(text AS TIMESTAMP)`
/// reads it (see the module docs); `None` when it writes none.
pub fn parse_timestamp_string(text: &str) -> Option<TimestampText> {
    let (date, rest) = leading_date(trimmed(text))?;
    // `rest` is empty or starts with ` ` or `T`
    let rest = rest.get(1..).unwrap_or_default();
    if rest.is_empty() {
        return Some(TimestampText {
            local: date.and_time(NaiveTime::MIN),
            zone: None,
        });
    }
    let (time, zone) = time_and_zone(rest)?;
    Some(TimestampText {
        local: date.and_time(time),
        zone,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).expect("date")
    }

    fn at(y: i32, m: u32, d: u32, h: u32, mi: u32, s: u32, nanos: u32) -> NaiveDateTime {
        date(y, m, d)
            .and_hms_nano_opt(h, mi, s, nanos)
            .expect("time")
    }

    #[test]
    fn dates_are_the_date_written() {
        for (text, want) in [
            ("2024", date(2024, 1, 1)),
            ("2024-02", date(2024, 2, 1)),
            ("2024-1-5", date(2024, 1, 5)),
            ("2024-01-05", date(2024, 1, 5)),
            ("  2024-01-05\t\n", date(2024, 1, 5)),
            ("2024-01-01 23:30:00-05:00", date(2024, 1, 1)),
            ("2024-01-01T23:30:00Z", date(2024, 1, 1)),
            ("2024-01-01Tanything", date(2024, 1, 1)),
            ("2024-01-01 ", date(2024, 1, 1)),
            ("+2024-03-04", date(2024, 3, 4)),
            ("-0044-03-15", date(-44, 3, 15)),
            ("123456-01-01", date(123_456, 1, 1)),
            ("2024-02-29", date(2024, 2, 29)),
        ] {
            assert_eq!(string_to_date(text), Some(want), "{text:?}");
        }
        for text in [
            "",
            "   ",
            "24-01-01",
            "1234567-01-01",
            "2024-001-01",
            "2024-01-001",
            "2024-13-01",
            "2023-02-29",
            "2024-01-01x",
            "2024 10:00",
            "2024-01T10:00",
            "2024/01/01",
            "2024-",
            "2024-01-",
            "not a date",
        ] {
            assert_eq!(string_to_date(text), None, "{text:?}");
        }
    }

    #[test]
    fn timestamps_are_the_wall_clock_and_zone_written() {
        let offset = |s| Some(WrittenZone::Offset(s));
        for (text, local, zone) in [
            ("2024", at(2024, 1, 1, 0, 0, 0, 0), None),
            ("2024-02", at(2024, 2, 1, 0, 0, 0, 0), None),
            ("2024-1-5", at(2024, 1, 5, 0, 0, 0, 0), None),
            ("2024-1-5T", at(2024, 1, 5, 0, 0, 0, 0), None),
            ("2024-1-5 7", at(2024, 1, 5, 7, 0, 0, 0), None),
            ("2024-1-5 7:5", at(2024, 1, 5, 7, 5, 0, 0), None),
            ("2024-1-5T7:5:3", at(2024, 1, 5, 7, 5, 3, 0), None),
            (
                " 2024-01-05 10:30:00.25 ",
                at(2024, 1, 5, 10, 30, 0, 250_000_000),
                None,
            ),
            (
                "2024-01-05 10:30:00.1234567891",
                at(2024, 1, 5, 10, 30, 0, 123_456_789),
                None,
            ),
            ("2024-01-05 10:30:00.", at(2024, 1, 5, 10, 30, 0, 0), None),
            (
                "2024-01-05T10:30:00Z",
                at(2024, 1, 5, 10, 30, 0, 0),
                offset(0),
            ),
            (
                "2024-01-05 10:30:00-05:00",
                at(2024, 1, 5, 10, 30, 0, 0),
                offset(-5 * 3600),
            ),
            (
                "2024-01-05 10:30:00+0530",
                at(2024, 1, 5, 10, 30, 0, 0),
                offset(5 * 3600 + 1800),
            ),
            (
                "2024-01-05 10:30:00-5:00",
                at(2024, 1, 5, 10, 30, 0, 0),
                offset(-5 * 3600),
            ),
            (
                "2024-01-05 10:30:00+05",
                at(2024, 1, 5, 10, 30, 0, 0),
                offset(5 * 3600),
            ),
            (
                "2024-01-05 10:30:00.5 +01:00",
                at(2024, 1, 5, 10, 30, 0, 500_000_000),
                offset(3600),
            ),
            (
                "2024-01-05 10:30:00 UTC",
                at(2024, 1, 5, 10, 30, 0, 0),
                offset(0),
            ),
            (
                "2024-01-05 10:30:00GMT+8",
                at(2024, 1, 5, 10, 30, 0, 0),
                offset(8 * 3600),
            ),
            (
                "2024-01-05 10:30:00 Europe/Paris",
                at(2024, 1, 5, 10, 30, 0, 0),
                Some(WrittenZone::Named("Europe/Paris".into())),
            ),
        ] {
            assert_eq!(
                parse_timestamp_string(text),
                Some(TimestampText { local, zone }),
                "{text:?}"
            );
        }
        for text in [
            "",
            "10:30:00",
            "T10:30:00",
            "2024-01-05 24:00:00",
            "2024-01-05 10:60",
            "2024-01-05 10:30:60",
            "2024-01-05 100:30",
            "2024-01-05 10:30+05:00",
            "2024-01-05 10:30:00+19:00",
            "2024-01-05 10:30:00+05:60",
            "2024-01-05 10:30:00 +",
            "2024-01-05  10:30:00",
            "2024 10:30:00",
            "2024-01-05 10:",
            "2024-02-30 10:30:00",
        ] {
            assert_eq!(parse_timestamp_string(text), None, "{text:?}");
        }
    }
}
