//! Spark's field functions (`year`, `quarter`, `month`, `day`, `dayofmonth`, `dayofweek`,
//! `weekday`, `dayofyear`, `weekofyear`, `hour`, `minute`, `second`) over an Iceberg
//! table's `date`, `timestamp` and `timestamptz` columns: Spark's values, a `timestamptz`
//! read on the session zone's clock, and filters on them prune files without dropping a
//! row.

use std::sync::Arc;

use crate::dml::{lake, ok, Lake};

/// The rows: `(id, date, timestamp, timestamptz instant)`.
///
/// The expected values below are worked out by hand from the calendar (Spark's
/// definitions: `dayofweek` Sunday = 1 … Saturday = 7, `weekday` Monday = 0 … Sunday = 6,
/// `weekofyear` the ISO 8601 week, `second` whole seconds):
/// 1. 2024-01-07 is a Sunday, day 7 of a leap year, ISO week 1 of 2024 (Monday
///    2024-01-01 starts week 1); 2024-01-07 23:59:58.9.
/// 2. 2021-01-01 is a Friday, ISO week 53 of 2020 (its Thursday, 2020-12-31, is in 2020),
///    day 1; 2021-01-01 00:00:00.
/// 3. 2024-12-31 is a Tuesday, day 366, ISO week 1 of 2025 (that week's Thursday is
///    2025-01-02); 2024-12-31 12:34:56.
const ROWS: &str = "(1, DATE '2024-01-07', TIMESTAMP '2024-01-07 23:59:58.9', \
                    TIMESTAMPTZ '2024-02-29T23:30:00Z'), \
                    (2, DATE '2021-01-01', TIMESTAMP '2021-01-01 00:00:00', \
                    TIMESTAMPTZ '2024-03-31T00:30:00Z'), \
                    (3, DATE '2024-12-31', TIMESTAMP '2024-12-31 12:34:56', \
                    TIMESTAMPTZ '2024-12-31T23:00:00Z'), \
                    (4, NULL, NULL, NULL)";

async fn table(lake: &Lake) {
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.f (id INT, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ)",
    )
    .await;
    ok(&lake.ctx, &format!("INSERT INTO ice.ns.f VALUES {ROWS}")).await;
}

/// The fields of the `date` and zone-less `timestamp` columns are Spark's, `INT`s, NULL
/// for NULL; the session zone does not change them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_of_dates_and_timestamps_are_sparks() {
    let lake = lake().await;
    table(&lake).await;
    let query = "SELECT id, year(d), quarter(d), month(d), day(d), dayofmonth(d), \
                 dayofweek(d), weekday(d), dayofyear(d), weekofyear(d), hour(ts), minute(ts), \
                 second(ts), year(ts), dayofweek(ts) FROM ice.ns.f ORDER BY id";
    let expected = [
        // id, year, quarter, month, day, dayofmonth, dayofweek, weekday, dayofyear,
        // weekofyear, hour, minute, second, year(ts), dayofweek(ts)
        "1|2024|1|1|7|7|1|6|7|1|23|59|58|2024|1",
        "2|2021|1|1|1|1|6|4|1|53|0|0|0|2021|6",
        "3|2024|4|12|31|31|3|1|366|1|12|34|56|2024|3",
        "4||||||||||||||", // NULLs, shown empty
    ];
    for zone in ["UTC", "Europe/Paris"] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        assert_eq!(cells(&lake, query).await, expected, "session zone {zone}");
    }
    let types = ok(
        &lake.ctx,
        "SELECT arrow_typeof(year(d)) a, arrow_typeof(dayofweek(ts)) b, \
         arrow_typeof(weekday(tz)) c FROM ice.ns.f LIMIT 1",
    )
    .await;
    assert!(types.contains("| Int32 | Int32 | Int32 |"), "{types}");
}

/// A `timestamptz` value's fields are those of its wall-clock time in the session zone,
/// as Spark's are in `spark.sql.session.timeZone`:
/// - 2024-02-29T23:30Z is Thursday 2024-02-29 23:30 in UTC, Friday 2024-03-01 00:30 in
///   Paris (+01:00) and Thursday 18:30 in New York (-05:00);
/// - 2024-03-31T00:30Z is Sunday 00:30 in UTC and Sunday 01:30 in Paris (still +01:00:
///   the clocks go forward at 01:00Z), Saturday 2024-03-30 20:30 in New York (-04:00);
/// - 2024-12-31T23:00Z is 2024-12-31 23:00 in UTC (Tuesday, week 1 of 2025), 2025-01-01
///   00:00 in Paris (Wednesday, day 1, week 1), 18:00 in New York.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_of_timestamptz_are_the_session_zones() {
    let lake = lake().await;
    table(&lake).await;
    let query = "SELECT id, year(tz), month(tz), day(tz), hour(tz), minute(tz), \
                 dayofweek(tz), weekday(tz), dayofyear(tz), weekofyear(tz), quarter(tz) \
                 FROM ice.ns.f WHERE tz IS NOT NULL ORDER BY id";
    let cases = [
        (
            "UTC",
            [
                "1|2024|2|29|23|30|5|3|60|9|1",
                "2|2024|3|31|0|30|1|6|91|13|1",
                "3|2024|12|31|23|0|3|1|366|1|4",
            ],
        ),
        (
            "Europe/Paris",
            [
                "1|2024|3|1|0|30|6|4|61|9|1",
                "2|2024|3|31|1|30|1|6|91|13|1",
                "3|2025|1|1|0|0|4|2|1|1|1",
            ],
        ),
        (
            "America/New_York",
            [
                "1|2024|2|29|18|30|5|3|60|9|1",
                "2|2024|3|30|20|30|7|5|90|13|1",
                "3|2024|12|31|18|0|3|1|366|1|4",
            ],
        ),
    ];
    for (zone, want) in cases {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        assert_eq!(cells(&lake, query).await, want, "session zone {zone}");
    }
}

/// A filter on a field function prunes as the same `extract` does and returns the same
/// rows as a session that prunes nothing: one file per year, `year(tz) = 2025` in Paris
/// reads the file of 2024-12-31T23:00Z (2025 there) and skips the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_on_field_functions_prune_without_dropping_rows() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.p (id INT, tz TIMESTAMPTZ)").await;
    for (id, instant) in [
        (1, "2023-06-01T12:00:00Z"),
        (2, "2024-06-01T12:00:00Z"),
        (3, "2024-12-31T23:00:00Z"),
        (4, "2025-06-01T12:00:00Z"),
    ] {
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.p VALUES ({id}, TIMESTAMPTZ '{instant}')"),
        )
        .await;
    }
    ok(
        &lake.ctx,
        "SET datafusion.execution.time_zone = 'Europe/Paris'",
    )
    .await;
    let cases = [
        ("year(tz) = 2025", vec![3, 4], 2),
        ("year(tz) = 2024", vec![2], 3),
        ("year(tz) < 2024", vec![1], 3),
        ("month(tz) = 1", vec![3], 0),
        ("hour(tz) = 0", vec![3], 0),
    ];
    for (filter, want, min_skipped) in cases {
        let sql = format!("SELECT id FROM ice.ns.p WHERE {filter} ORDER BY id");
        let (ids, skipped) = ids_skipping(&lake, &sql).await;
        assert_eq!(ids, want, "{filter}");
        assert!(skipped >= min_skipped, "{filter}: {skipped} files skipped");
        let spelled = filter
            .replace("year(tz)", "extract(year FROM tz)")
            .replace("month(tz)", "extract(month FROM tz)")
            .replace("hour(tz)", "extract(hour FROM tz)");
        let (same, extract_skipped) = ids_skipping(
            &lake,
            &format!("SELECT id FROM ice.ns.p WHERE {spelled} ORDER BY id"),
        )
        .await;
        assert_eq!(
            (same, extract_skipped),
            (want.clone(), skipped),
            "{spelled}"
        );
    }
    // without pruning: the same rows
    ok(
        &lake.ctx,
        "SET datafusion.execution.parquet.pruning = false",
    )
    .await;
    let (ids, _) = ids_skipping(
        &lake,
        "SELECT id FROM ice.ns.p WHERE year(tz) = 2025 ORDER BY id",
    )
    .await;
    assert_eq!(ids, vec![3, 4]);
}

/// A session's own function of one of these names stays the session's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_own_function_of_the_name_is_kept() {
    use datafusion::arrow::datatypes::DataType;
    use datafusion::logical_expr::{create_udf, ColumnarValue, Volatility};
    use datafusion::prelude::SessionContext;
    let ctx = SessionContext::new();
    let own = create_udf(
        "year",
        vec![DataType::Int64],
        DataType::Utf8,
        Volatility::Immutable,
        Arc::new(|_| {
            Ok(ColumnarValue::Scalar(
                datafusion::common::ScalarValue::Utf8(Some("mine".to_string())),
            ))
        }),
    );
    ctx.register_udf(own);
    icefloe::datafusion::register_iceberg_factory(&ctx);
    let batches = ctx
        .sql("SELECT year(1) y, month(DATE '2024-05-01') m")
        .await
        .expect("plan")
        .collect()
        .await
        .expect("run");
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .expect("format")
        .to_string();
    assert!(text.contains("| mine | 5 |"), "{text}");
}

/// The rows of `sql` as `|`-joined cells, in order.
async fn cells(lake: &Lake, sql: &str) -> Vec<String> {
    cells_in(&lake.ctx, sql).await
}

/// The rows of `sql` run in `ctx`, as [`cells`] gives them.
async fn cells_in(ctx: &datafusion::prelude::SessionContext, sql: &str) -> Vec<String> {
    let text = ok(ctx, sql).await;
    text.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| id"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// The ids `sql` returns and the data files its Iceberg scan skipped.
async fn ids_skipping(lake: &Lake, sql: &str) -> (Vec<i32>, usize) {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Int32Type;
    let (batches, skipped) = crate::zoned_pruning::run_skipping(lake, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let ids = batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int32Type>().iter().flatten())
        .collect();
    (ids, skipped)
}

/// An argument without the field is a planning error naming the function (as Spark's
/// "data type mismatch"), not DataFusion's internal error; `hour` of a `TIME` is its hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argument_without_the_field_is_an_error_naming_the_function() {
    let lake = lake().await;
    table(&lake).await;
    let err = crate::dml::run(&lake.ctx, "SELECT year(id) FROM ice.ns.f")
        .await
        .expect_err("year of an INT");
    assert!(
        err.contains("year: the argument must be a date, timestamp or string, not Int32")
            && !err.contains("Internal error"),
        "{err}"
    );
    let err = crate::dml::run(&lake.ctx, "SELECT month(TIME '10:11:12')")
        .await
        .expect_err("month of a TIME");
    assert!(err.contains("month: the argument must be"), "{err}");
    let text = ok(
        &lake.ctx,
        "SELECT hour(TIME '10:11:12') h, second(TIME '10:11:12') s",
    )
    .await;
    assert!(text.contains("| 10 | 12 |"), "{text}");
}

/// Spark's date fields (`year`, `quarter`, `month`, `day`, `dayofweek`, `weekday`,
/// `dayofyear`, `weekofyear`) of a string are those of the date it writes, as Spark
/// casts the string to `DATE` (the `yyyy-[m]m-[d]d` before a `T` or a space; the rest,
/// an offset included, is ignored), in every session zone; `hour`/`minute` read the
/// string as a timestamp, its instant on the session zone's clock. By hand:
/// - `2024-01-01T23:30:00-05:00`: Monday 2024-01-01 (day 1, ISO week 1, quarter 1); the
///   instant 2024-01-02T04:30Z is 04:30 in UTC, 05:30 in Paris (+01:00), 10:15 in
///   Kathmandu (+05:45), 10:00 at +05:30;
/// - `2024-12-31 23:30:00Z`: Tuesday 2024-12-31 (day 366, ISO week 1 of 2025, quarter
///   4); 23:30 in UTC, 00:30 on 1 January in Paris, 05:15 in Kathmandu, 05:00 at +05:30;
/// - `2024-1-5`: Friday 2024-01-05 (day 5, week 1), a date Spark reads with one-digit
///   month and day.
///
/// Before, a string was read as a timestamp at UTC: the first two were 2024-01-02 and,
/// in Paris, 2025-01-01, and `2024-1-5` failed to parse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn date_fields_of_strings_are_those_of_the_date_written() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.s (id INT, s STRING)").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.s VALUES (1, '2024-01-01T23:30:00-05:00'), \
         (2, '2024-12-31 23:30:00Z'), (3, '2024-1-5'), (4, NULL)",
    )
    .await;
    let dates = "SELECT id, year(s), quarter(s), month(s), day(s), dayofmonth(s), \
                 dayofweek(s), weekday(s), dayofyear(s), weekofyear(s) FROM ice.ns.s ORDER BY id";
    let want_dates = [
        "1|2024|1|1|1|1|2|0|1|1",
        "2|2024|4|12|31|31|3|1|366|1",
        "3|2024|1|1|5|5|6|4|5|1",
        "4|||||||||",
    ];
    let hours = "SELECT id, hour(s), minute(s) FROM ice.ns.s WHERE id < 3 ORDER BY id";
    for (zone, want_hours) in [
        ("UTC", ["1|4|30", "2|23|30"]),
        ("Europe/Paris", ["1|5|30", "2|0|30"]),
        ("Asia/Kathmandu", ["1|10|15", "2|5|15"]),
        ("+05:30", ["1|10|0", "2|5|0"]),
    ] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        assert_eq!(cells(&lake, dates).await, want_dates, "session zone {zone}");
        assert_eq!(cells(&lake, hours).await, want_hours, "session zone {zone}");
        // a literal and a filter alike
        let text = ok(
            &lake.ctx,
            "SELECT day('2024-12-31 23:30:00Z') a, year('2024-12-31T23:30:00-05:00') b",
        )
        .await;
        assert!(
            text.contains("| 31 | 2024 |"),
            "session zone {zone}: {text}"
        );
        assert_eq!(
            cells(
                &lake,
                "SELECT id FROM ice.ns.s WHERE day(s) = 1 ORDER BY id"
            )
            .await,
            ["1"],
            "session zone {zone}"
        );
    }
}

/// On in-process distributed workers (which receive plans after the analyzer), Spark's
/// field functions, `timestamptz` text and month `date_bin`s of a Paris session answer
/// what one node answers, and the values by hand: 2024-02-29T23:30Z is Friday
/// 2024-03-01 00:30 in Paris (+01:00; its month bin starts at local midnight of 1 March,
/// 2024-02-29T23:00Z), 2024-12-31T23:00Z is Wednesday 2025-01-01 00:00.
#[cfg(feature = "distributed")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_functions_run_on_distributed_workers() {
    use datafusion::prelude::SessionConfig;
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.d (id INT, tz TIMESTAMPTZ, s STRING) PARTITIONED BY (months(tz))",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.d VALUES (1, TIMESTAMPTZ '2024-02-29T23:30:00Z', \
         '2024-01-01T23:30:00-05:00'), (2, TIMESTAMPTZ '2024-12-31T23:00:00Z', '2024-1-5'), \
         (3, NULL, NULL)",
    )
    .await;
    let distributed = icefloe::datafusion::distributed::in_process_session(
        3,
        SessionConfig::new().with_target_partitions(2),
        1,
    )
    .expect("distributed session");
    crate::catalog::attach(&distributed, "ice", Arc::clone(&lake.catalog)).await;
    let query = "SELECT id, year(tz), month(tz), hour(tz), weekday(tz), day(s), \
                 CAST(tz AS STRING) t, date_bin(INTERVAL '1 month', tz, \
                 TIMESTAMP '2024-01-01 00:00:00') b FROM ice.ns.d \
                 WHERE year(tz) >= 2024 OR tz IS NULL ORDER BY id";
    let want = [
        "1|2024|3|0|4|1|2024-03-01T00:30:00+01:00|2024-02-29T23:00:00Z",
        "2|2025|1|0|2|5|2025-01-01T00:00:00+01:00|2024-12-31T23:00:00Z",
        "3|||||||",
    ];
    for ctx in [&distributed, &lake.ctx] {
        ok(ctx, "SET datafusion.execution.time_zone = 'Europe/Paris'").await;
        assert_eq!(cells_in(ctx, query).await, want);
    }
}

/// The three session zones the cast tests run in.
const ZONES: [&str; 3] = ["UTC", "Europe/Paris", "America/New_York"];

/// Strings cast to `DATE` (a column, a literal, `TRY_CAST`) are the date written, as
/// Spark's `stringToDate` reads it (`yyyy`, `yyyy-[m]m`, `yyyy-[m]m-[d]d`, then after
/// ` ` or `T` anything; spaces around trimmed), in every session zone. By hand:
/// `2024-01-01 23:30:00-05:00` is 2024-01-01 (Arrow read the instant, 2024-01-02T04:30Z,
/// and gave its UTC date), `2024-1-5` 2024-01-05, `2024` 2024-01-01, `2024-02`
/// 2024-02-01, ` 2024-03-04T10:00:00Z ` 2024-03-04. `2024-13-01`, `2024/01/05` and
/// `x2024` write no date: an error naming the string and `DATE` in a `CAST` (Spark 4's
/// ANSI cast raises one), NULL in a `TRY_CAST`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strings_cast_to_dates_are_the_date_written() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.sd (id INT, s STRING)").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.sd VALUES (1, '2024-01-01 23:30:00-05:00'), (2, '2024-1-5'), \
         (3, '2024'), (4, '2024-02'), (5, ' 2024-03-04T10:00:00Z '), (6, NULL), \
         (7, '2024-13-01')",
    )
    .await;
    let want = [
        "1|2024-01-01",
        "2|2024-01-05",
        "3|2024-01-01",
        "4|2024-02-01",
        "5|2024-03-04",
        "6|",
        "7|",
    ];
    for zone in ZONES {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        assert_eq!(
            cells(
                &lake,
                "SELECT id, TRY_CAST(s AS DATE) FROM ice.ns.sd ORDER BY id"
            )
            .await,
            want,
            "session zone {zone}"
        );
        assert_eq!(
            cells(
                &lake,
                "SELECT 0 id, CAST('2024-01-01 23:30:00-05:00' AS DATE), \
                 CAST('2024-1-5' AS DATE), \
                 CAST('2024' AS DATE), CAST('2024-02' AS DATE), \
                 TRY_CAST('2024/01/05' AS DATE), TRY_CAST('x2024' AS DATE)"
            )
            .await,
            ["0|2024-01-01|2024-01-05|2024-01-01|2024-02-01||"],
            "session zone {zone}"
        );
        // a filter on the column, and a string compared with a date (coercion's cast)
        assert_eq!(
            cells(
                &lake,
                "SELECT id FROM ice.ns.sd WHERE TRY_CAST(s AS DATE) = '2024-1-1' \
                 ORDER BY id"
            )
            .await,
            ["1", "3"],
            "session zone {zone}"
        );
        for sql in [
            "SELECT CAST('2024/01/05' AS DATE)",
            "SELECT id, CAST(s AS DATE) FROM ice.ns.sd",
        ] {
            let err = crate::dml::run(&lake.ctx, sql).await.expect_err("no date");
            let bad = if sql.contains("2024/01/05") {
                "'2024/01/05'"
            } else {
                "'2024-13-01'"
            };
            assert!(err.contains(bad) && err.contains("DATE"), "{sql}: {err}");
        }
    }
    // a text of the right form naming no day says so, not which forms are read (a
    // tester's: 2100 is no leap year)
    for (sql, why) in [
        (
            "SELECT CAST('2023-02-30' AS DATE)",
            "year 2023, month 2, day 30 is no day of the calendar",
        ),
        (
            "SELECT TIMESTAMP '2100-02-29 00:00:00'",
            "it writes no timestamp: year 2100, month 2, day 29 is no day of the calendar",
        ),
    ] {
        let err = crate::dml::run(&lake.ctx, sql).await.expect_err("no day");
        assert!(err.contains(why), "{sql}: {err}");
    }
}

/// Strings cast to timestamps are read as Spark's `stringToTimestamp` reads them (its
/// short forms too), by hand:
/// - `2024-1-5` is 2024-01-05 00:00, `2024-1-5 7:5` 07:05, `2024` 2024-01-01 00:00,
///   `2024-01-05T10:30:00.123456789` keeps its microseconds (floored) as a `TIMESTAMP`;
/// - `2024-01-05 10:30:00-05:00` is 15:30Z: a zone-less `TIMESTAMP` of 15:30 in a UTC
///   session, 16:30 in Paris (+01:00), 10:30 in New York (-05:00);
/// - `2024-07-05 10:30:00 Asia/Tokyo` is 01:30Z (+09:00): 01:30 in UTC, 03:30 in Paris
///   (+02:00 in July), 2024-07-04 21:30 in New York (-04:00);
/// - `TIMESTAMPTZ` of `2024-1-5 10:00`, a wall-clock time in the session's zone, is the
///   instant 1704448800 s (2024-01-05T10:00Z: 1704067200 for 2024-01-01 + 4 days + 10 h)
///   in UTC, 1704445200 (09:00Z) in Paris, 1704466800 (15:00Z) in New York.
///
/// `2024-01-05 25:00`, `10:30:00` (a time without a date) and `2024-01-05 10:30:00
/// Mars/Base` are none: an error naming the string and the type, NULL in `TRY_CAST`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strings_cast_to_timestamps_are_read_as_spark_reads_them() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.st (id INT, s STRING)").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.st VALUES (1, '2024-1-5'), (2, '2024-1-5 7:5'), (3, '2024'), \
         (4, '2024-01-05T10:30:00.123456789'), (5, '2024-01-05 10:30:00-05:00'), \
         (6, '2024-07-05 10:30:00 Asia/Tokyo'), (7, NULL), (8, '2024-01-05 25:00')",
    )
    .await;
    for (zone, offset_row, tokyo_row, instant) in [
        (
            "UTC",
            "5|2024-01-05T15:30:00",
            "6|2024-07-05T01:30:00",
            "1704448800",
        ),
        (
            "Europe/Paris",
            "5|2024-01-05T16:30:00",
            "6|2024-07-05T03:30:00",
            "1704445200",
        ),
        (
            "America/New_York",
            "5|2024-01-05T10:30:00",
            "6|2024-07-04T21:30:00",
            "1704466800",
        ),
    ] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        let want = [
            "1|2024-01-05T00:00:00",
            "2|2024-01-05T07:05:00",
            "3|2024-01-01T00:00:00",
            "4|2024-01-05T10:30:00.123456",
            offset_row,
            tokyo_row,
            "7|",
            "8|",
        ];
        assert_eq!(
            cells(
                &lake,
                "SELECT id, TRY_CAST(s AS TIMESTAMP(6)) FROM ice.ns.st ORDER BY id"
            )
            .await,
            want,
            "session zone {zone}"
        );
        // literals fold to the same values
        assert_eq!(
            cells(
                &lake,
                "SELECT 0 id, CAST('2024-1-5' AS TIMESTAMP), \
                 CAST('2024-01-05 10:30:00-05:00' AS TIMESTAMP), \
                 TRY_CAST('10:30:00' AS TIMESTAMP), \
                 to_unixtime(CAST('2024-1-5 10:00' AS TIMESTAMPTZ))"
            )
            .await,
            [format!(
                "0|2024-01-05T00:00:00|{}||{instant}",
                offset_row.trim_start_matches("5|")
            )],
            "session zone {zone}"
        );
        for (sql, bad) in [
            (
                "SELECT CAST('2024-01-05 25:00' AS TIMESTAMP)",
                "'2024-01-05 25:00'",
            ),
            ("SELECT CAST('10:30:00' AS TIMESTAMPTZ)", "'10:30:00'"),
            (
                "SELECT CAST('2024-01-05 10:30:00 Mars/Base' AS TIMESTAMP)",
                "Mars/Base",
            ),
            (
                "SELECT id, CAST(s AS TIMESTAMP) FROM ice.ns.st",
                "'2024-01-05 25:00'",
            ),
        ] {
            let err = crate::dml::run(&lake.ctx, sql)
                .await
                .expect_err("no timestamp");
            assert!(
                err.contains(bad) && err.contains("TIMESTAMP"),
                "{sql}: {err}"
            );
        }
    }
}

/// A filter on a string cast to a date or timestamp still prunes: the cast of a constant
/// folds to a literal before Iceberg's scan planning, so `d = CAST('2024-1-5' AS DATE)`
/// (and `d = '2024-1-5'`, coercion's cast) reads only the file of 2024-01-05 of three,
/// and `ts >= CAST('2024-1-6' AS TIMESTAMP)` only that of 2024-01-06 12:00.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_on_cast_strings_prune_files() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.pd (id INT, d DATE, ts TIMESTAMP)",
    )
    .await;
    for (id, d, ts) in [
        (1, "2024-01-05", "2024-01-05 12:00:00"),
        (2, "2024-01-06", "2024-01-06 12:00:00"),
        (3, "2023-01-05", "2023-01-05 12:00:00"),
    ] {
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.pd VALUES ({id}, DATE '{d}', TIMESTAMP '{ts}')"),
        )
        .await;
    }
    for zone in ZONES {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        for (filter, want) in [
            ("d = CAST('2024-1-5' AS DATE)", vec![1]),
            ("d = '2024-1-5'", vec![1]),
            ("d = CAST('2024-01-05 23:30:00-05:00' AS DATE)", vec![1]),
            ("ts >= CAST('2024-1-6' AS TIMESTAMP)", vec![2]),
        ] {
            let sql = format!("SELECT id FROM ice.ns.pd WHERE {filter} ORDER BY id");
            let (ids, skipped) = ids_skipping(&lake, &sql).await;
            assert_eq!(ids, want, "{zone}: {filter}");
            assert_eq!(skipped, 2, "{zone}: {filter}: files skipped");
        }
    }
}

/// Strings written into `date`, `timestamp` and `timestamptz` columns by `INSERT …
/// VALUES`, `INSERT … SELECT`, `UPDATE … SET` and `MERGE` are read as Spark's cast reads
/// them (Arrow's cast refused `'2024-1-5 7:5'` in `INSERT … VALUES` and `UPDATE … SET`),
/// a zone-less one into a `timestamptz` column on the session zone's clock (Tokyo,
/// +09:00 all year); one that is no date or timestamp is an error naming the table, the
/// column and the string. Values worked out by hand: `2024-1-5 7:5` in Tokyo is
/// 2024-01-04T22:05:00Z = 1704405900 s; `2024-01-05 10:30:00-05:00` is 15:30Z =
/// 1704468600; `2024-07-05 10:30:00 Asia/Tokyo` is 01:30Z = 1720143000;
/// `2026-5-6 7:8:9Z` is 1778051289.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strings_written_into_date_and_timestamp_columns_are_read_as_spark_reads_them() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.w (id INT, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ)",
    )
    .await;
    ok(
        &lake.ctx,
        "SET datafusion.execution.time_zone = 'Asia/Tokyo'",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.w VALUES (1, '2024-1-5', '2024-1-5 7:5', '2024-1-5 7:5'), \
         (2, '2024-01-01 23:30:00-05:00', '2024-02', '2024-01-05 10:30:00-05:00')",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.w SELECT 3, '2024', '2024-1-5 7:5:3.5', \
         '2024-07-05 10:30:00 Asia/Tokyo'",
    )
    .await;
    let read = "SELECT id, d, ts, to_unixtime(tz) FROM ice.ns.w ORDER BY id";
    assert_eq!(
        cells(&lake, read).await,
        [
            "1|2024-01-05|2024-01-05T07:05:00|1704405900",
            "2|2024-01-01|2024-02-01T00:00:00|1704468600",
            "3|2024-01-01|2024-01-05T07:05:03.500|1720143000",
        ]
    );
    ok(
        &lake.ctx,
        "UPDATE ice.ns.w SET d = '2025-2-3', ts = '2025-2-3 4:5' WHERE id = 1",
    )
    .await;
    ok(
        &lake.ctx,
        "MERGE INTO ice.ns.w t USING (SELECT 2 AS id UNION ALL SELECT 4) s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET d = '2026-3-4' \
         WHEN NOT MATCHED THEN INSERT (id, d, ts, tz) \
         VALUES (s.id, '2026-5', '2026-5-6 7:8', '2026-5-6 7:8:9Z')",
    )
    .await;
    let want = [
        "1|2025-02-03|2025-02-03T04:05:00|1704405900",
        "2|2026-03-04|2024-02-01T00:00:00|1704468600",
        "3|2024-01-01|2024-01-05T07:05:03.500|1720143000",
        "4|2026-05-01|2026-05-06T07:08:00|1778051289",
    ];
    assert_eq!(cells(&lake, read).await, want);
    // compared so too: a zone-less string with a `timestamptz` on the session's clock
    for (filter, id) in [
        ("tz = '2024-1-5 7:5'", "1"),
        ("tz = '2024-07-05 10:30:00 Asia/Tokyo'", "3"),
        ("tz > '2026-5-6 16:8'", "4"),
        ("ts = '2025-2-3 4:5'", "1"),
        ("d = '2026-3-4'", "2"),
    ] {
        let sql = format!("SELECT id FROM ice.ns.w WHERE {filter}");
        assert_eq!(cells(&lake, &sql).await, [id], "{filter}");
    }
    for (sql, column, bad) in [
        (
            "INSERT INTO ice.ns.w VALUES (5, '2024-13-01', NULL, NULL)",
            "'d'",
            "'2024-13-01'",
        ),
        (
            "INSERT INTO ice.ns.w VALUES (5, NULL, '10:30:00', NULL)",
            "'ts'",
            "'10:30:00'",
        ),
        (
            "INSERT INTO ice.ns.w SELECT 5, NULL AS d, NULL AS ts, '2024-01-05 25:00'",
            "'tz'",
            "'2024-01-05 25:00'",
        ),
        (
            "UPDATE ice.ns.w SET ts = '2024-01-05 25:00' WHERE id = 1",
            "'ts'",
            "'2024-01-05 25:00'",
        ),
    ] {
        let err = crate::dml::run(&lake.ctx, sql)
            .await
            .expect_err("no date or timestamp");
        assert!(
            err.contains("ns.w") && err.contains(column) && err.contains(bad),
            "{sql}: {err}"
        );
    }
    // nothing of the refused statements was written
    assert_eq!(cells(&lake, read).await, want);
}
