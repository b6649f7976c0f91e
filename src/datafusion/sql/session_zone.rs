//! The session's time zone for reading a timestamp that names none in a time-travel
//! clause: `TIMESTAMP AS OF '2026-01-01 10:00:00'` (or a `TIMESTAMP '…'` literal, a
//! date, a zone-less timestamp expression) is that wall-clock time in
//! `datafusion.execution.time_zone`, as Spark reads it in `spark.sql.session.timeZone`.
//! Without a session time zone (DataFusion's default) it is UTC. A timestamp that names
//! its zone (`…+02:00`, `…Z`, `… UTC`, or after a space a region id or an offset,
//! `2026-01-01 10:00:00 Asia/Tokyo`) is that instant whatever the session's zone.
//!
//! A wall-clock time a zone's clock shows twice (the hour repeated when clocks go back) is
//! the earlier instant, and one it skips (clocks going forward) is moved later by the
//! gap's length, as `java.time.ZonedDateTime.of` resolves them for Spark.

use chrono::{Duration, NaiveDateTime, TimeZone};
use datafusion::arrow::array::timezone::Tz;
use datafusion::common::config::ConfigOptions;
use datafusion::common::ScalarValue;
use datafusion::prelude::SessionContext;

use crate::catalog::{parse_local_timestamp, parse_zoned_timestamp_ms};
use crate::error::{Error, Result};

/// The session's time zone as `config` names it (`datafusion.execution.time_zone`), when
/// it has one other than UTC: what the rewrites reading zone-less times in the session's
/// zone act on (in UTC DataFusion's own reading is already the session's).
pub(crate) fn non_utc_zone(config: &ConfigOptions) -> Option<&str> {
    config
        .execution
        .time_zone
        .as_deref()
        .filter(|zone| !zone.eq_ignore_ascii_case("UTC"))
}

/// The session's time zone; `None` when it has none (read as UTC).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming a zone that does not parse.
pub(super) fn session_zone(ctx: &SessionContext) -> Result<Option<Tz>> {
    let state = ctx.state();
    let Some(name) = state.config_options().execution.time_zone.as_deref() else {
        return Ok(None);
    };
    name.parse::<Tz>().map(Some).map_err(|e| {
        Error::invalid_argument(format!(
            "datafusion.execution.time_zone '{name}' is not a time zone: {e}"
        ))
    })
}

/// Milliseconds since the Unix epoch of wall-clock time `local` in `zone` (UTC when
/// `None`); `None` when out of range.
pub(super) fn local_ms(local: NaiveDateTime, zone: Option<&Tz>) -> Option<i64> {
    let Some(zone) = zone else {
        return Some(local.and_utc().timestamp_millis());
    };
    Some(local_instant(local, zone)?.timestamp_millis())
}

/// The instant of wall-clock time `local` in `zone`, as `java.time.ZonedDateTime.of`
/// resolves it for Spark: a time the zone's clock shows twice is the earlier instant, one
/// it skips is moved later by the gap's length; `None` when out of range.
pub(crate) fn local_instant(local: NaiveDateTime, zone: &Tz) -> Option<chrono::DateTime<Tz>> {
    zone.from_local_datetime(&local).earliest().or_else(|| {
        // skipped by the zone's clock: moved later by the gap (one hour, or the
        // transition's length, found by the offset on each side)
        let before = zone.offset_from_utc_datetime(&(local - Duration::days(1)));
        let after = zone.offset_from_utc_datetime(&(local + Duration::days(1)));
        let gap = chrono::Offset::fix(&after).local_minus_utc()
            - chrono::Offset::fix(&before).local_minus_utc();
        zone.from_local_datetime(&(local + Duration::seconds(i64::from(gap))))
            .earliest()
    })
}

/// A timestamp string as ms since the epoch: one naming its zone is that instant (an
/// offset or `Z` joined to the time, `UTC`, or after a space a region id or an offset,
/// `2026-01-01 10:00:00 Europe/Paris`, `… +01:00`, as Spark's `stringToTimestamp` reads a
/// zone id), one without a wall-clock time in `zone` (UTC when `None`); `None` when it is
/// no timestamp (or names a zone that is none).
pub(super) fn timestamp_text_ms(text: &str, zone: Option<&Tz>) -> Option<i64> {
    parse_zoned_timestamp_ms(text)
        .or_else(|| local_ms(parse_local_timestamp(text)?, zone))
        .or_else(|| {
            let (local, named) = text.trim().rsplit_once(' ')?;
            let named: Tz = named.parse().ok()?;
            local_ms(parse_local_timestamp(local)?, Some(&named))
        })
}

/// `ms`, the value of timestamp or date `scalar` read as UTC ([`constant::timestamp_ms`]):
/// a zone-less timestamp or a date is a wall-clock time, so it is read in `zone`; a
/// timestamp with a zone stays. `None` when out of range.
///
/// [`constant::timestamp_ms`]: super::constant::timestamp_ms
pub(super) fn scalar_ms(scalar: &ScalarValue, ms: i64, zone: Option<&Tz>) -> Option<i64> {
    let local = matches!(
        scalar,
        ScalarValue::TimestampSecond(_, None)
            | ScalarValue::TimestampMillisecond(_, None)
            | ScalarValue::TimestampMicrosecond(_, None)
            | ScalarValue::TimestampNanosecond(_, None)
            | ScalarValue::Date32(_)
            | ScalarValue::Date64(_)
    );
    if !local {
        return Some(ms);
    }
    local_ms(
        chrono::DateTime::from_timestamp_millis(ms)?.naive_utc(),
        zone,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    fn utc_ms(text: &str) -> i64 {
        at(text).and_utc().timestamp_millis()
    }

    #[test]
    fn wall_clock_times_in_a_zone() {
        let ny: Tz = "America/New_York".parse().unwrap();
        let plus2: Tz = "+02:00".parse().unwrap();
        assert_eq!(
            local_ms(at("2026-01-01 10:00:00"), None),
            Some(utc_ms("2026-01-01 10:00:00"))
        );
        assert_eq!(
            local_ms(at("2026-01-01 10:00:00"), Some(&plus2)),
            Some(utc_ms("2026-01-01 08:00:00"))
        );
        // winter (-05:00) and summer (-04:00)
        assert_eq!(
            local_ms(at("2026-01-01 10:00:00"), Some(&ny)),
            Some(utc_ms("2026-01-01 15:00:00"))
        );
        assert_eq!(
            local_ms(at("2026-07-01 10:00:00"), Some(&ny)),
            Some(utc_ms("2026-07-01 14:00:00"))
        );
        // 01:30 on 2026-11-01 happens twice: the earlier instant (still -04:00)
        assert_eq!(
            local_ms(at("2026-11-01 01:30:00"), Some(&ny)),
            Some(utc_ms("2026-11-01 05:30:00"))
        );
        // 02:30 on 2026-03-08 never happens: moved an hour later, 03:30 -04:00
        assert_eq!(
            local_ms(at("2026-03-08 02:30:00"), Some(&ny)),
            Some(utc_ms("2026-03-08 07:30:00"))
        );
    }

    #[test]
    fn a_zone_named_after_the_time() {
        let plus2: Tz = "+02:00".parse().unwrap();
        for zone in [None, Some(&plus2)] {
            assert_eq!(
                timestamp_text_ms("2026-01-01 10:00:00 Asia/Tokyo", zone),
                Some(utc_ms("2026-01-01 01:00:00"))
            );
            assert_eq!(
                timestamp_text_ms("2026-01-01 10:00:00.5 -03:30", zone),
                Some(utc_ms("2026-01-01 13:30:00") + 500)
            );
            // a skipped wall-clock time in the named zone: moved later by the gap
            assert_eq!(
                timestamp_text_ms("2026-03-08 02:30:00 America/New_York", zone),
                Some(utc_ms("2026-03-08 07:30:00"))
            );
            assert_eq!(
                timestamp_text_ms("2026-01-01 10:00:00 Mars/Olympus", zone),
                None
            );
            assert_eq!(timestamp_text_ms("2026-01-01 Asia/Tokyo x", zone), None);
        }
    }
}
