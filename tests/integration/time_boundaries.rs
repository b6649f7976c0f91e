//! Snapshot times at their exact millisecond, as Iceberg Java and Spark bound them: time
//! travel reads the snapshot current at a time (a snapshot's own `timestamp-ms`
//! included), `expire_snapshots(older_than)` expires snapshots strictly older than it,
//! `rollback_to_timestamp` goes to the latest ancestor strictly older; a timestamp is cut
//! to the millisecond by flooring (Spark's `DateTimeUtils.toMillis`), and one without a
//! zone is a wall-clock time in the session's time zone. PyIceberg reads the result. And
//! zoned timestamps make `timestamptz` columns in a CTAS, as in Spark.

use chrono::{DateTime, FixedOffset};
use icefloe::catalog::TableIdent;

use datafusion::arrow::array::AsArray;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;

use crate::dml::{lake, ok, run, Lake};
use crate::interop::{duckdb_read, pyiceberg_read, python};

/// `ms` as a wall-clock time in Tokyo (UTC+9, no daylight saving time), with `extra`
/// digits after the milliseconds.
fn tokyo(ms: i64, extra: &str) -> String {
    let zone = FixedOffset::east_opt(9 * 3600).expect("offset");
    let at = DateTime::from_timestamp_millis(ms)
        .expect("ms")
        .with_timezone(&zone);
    format!("{}{extra}", at.format("%Y-%m-%d %H:%M:%S%.3f"))
}

/// The first row of `sql`'s answer, each cell as a string.
async fn first_row(lake: &Lake, sql: &str) -> Vec<String> {
    let batches = run(&lake.ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let batch = batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .unwrap_or_else(|| panic!("{sql}: no row"));
    batch
        .columns()
        .iter()
        .map(|c| {
            let c = cast(c, &DataType::Utf8).expect("cast");
            c.as_string::<i32>().value(0).to_string()
        })
        .collect()
}

/// The first column of `sql`'s answer, as strings.
async fn column(lake: &Lake, sql: &str) -> Vec<String> {
    let batches = run(&lake.ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = vec![];
    for b in &batches {
        let c = cast(b.column(0), &DataType::Utf8).expect("cast");
        let c = c.as_string::<i32>();
        out.extend((0..b.num_rows()).map(|i| c.value(i).to_string()));
    }
    out
}

async fn count(lake: &Lake, from: &str) -> String {
    ok(&lake.ctx, &format!("SELECT count(*) AS n FROM {from}")).await
}

fn n(rows: i64) -> String {
    format!("+---+\n| n |\n+---+\n| {rows} |\n+---+")
}

#[tokio::test]
async fn snapshot_times_bound_time_travel_expiry_and_rollback_at_the_millisecond() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.h (id INT)").await;
    for id in 1..=3 {
        ok(ctx, &format!("INSERT INTO ice.ns.h VALUES ({id})")).await;
        // snapshots a few milliseconds apart
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.h"))
        .await
        .expect("load");
    let mut snapshots: Vec<(i64, i64)> = table
        .metadata()
        .snapshots
        .iter()
        .map(|s| (s.timestamp_ms, s.snapshot_id))
        .collect();
    snapshots.sort();
    let [(t1, _), (t2, s2), (t3, s3)] = snapshots[..] else {
        panic!("three snapshots: {snapshots:?}");
    };
    assert!(t1 < t2 && t2 < t3, "{snapshots:?}");
    ok(ctx, "SET datafusion.execution.time_zone = 'Asia/Tokyo'").await;

    // time travel: the snapshot current then, its own millisecond included
    for (ms, extra, rows) in [
        (t1, "", 1),
        (t2 - 1, "999", 1),
        (t2, "", 2),
        (t2, "999", 2),
        (t3 - 1, "", 2),
        (t3, "", 3),
    ] {
        let at = tokyo(ms, extra);
        assert_eq!(
            count(&lake, &format!("ice.ns.h TIMESTAMP AS OF '{at}'")).await,
            n(rows),
            "AS OF '{at}'"
        );
        assert_eq!(
            count(
                &lake,
                &format!("ice.ns.h FOR SYSTEM_TIME AS OF TIMESTAMP '{at}'")
            )
            .await,
            n(rows),
            "FOR SYSTEM_TIME AS OF TIMESTAMP '{at}'"
        );
    }

    // expire: strictly older than the time (t2 itself and t2 + 999 µs keep s2)
    let expire = |at: String| {
        format!(
            "CALL ice.system.expire_snapshots(table => 'ns.h', older_than => TIMESTAMP '{at}', \
             retain_last => 1)"
        )
    };
    ok(ctx, &expire(tokyo(t2, "999"))).await;
    assert_eq!(
        ok(ctx, "SELECT count(*) AS n FROM ice.ns.h.snapshots").await,
        n(2),
        "expire_snapshots(older_than => t2) keeps s2 and s3"
    );

    // rollback: the latest ancestor strictly older than the time (t3 itself: s2)
    let rollback = format!(
        "CALL ice.system.rollback_to_timestamp('ns.h', TIMESTAMP '{}')",
        tokyo(t3, "")
    );
    assert_eq!(
        first_row(&lake, &rollback).await,
        [s3.to_string(), s2.to_string()]
    );
    assert_eq!(count(&lake, "ice.ns.h").await, n(2));
    if python().is_none() {
        return;
    }
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.h");
    assert_eq!(pyi["current_snapshot_id"], serde_json::json!(s2));
    assert_eq!(pyi["count"], serde_json::json!(2));
    let mut ids: Vec<i64> = pyi["snapshots"]
        .as_array()
        .expect("snapshots")
        .iter()
        .map(|s| s["snapshot_id"].as_i64().expect("id"))
        .collect();
    ids.sort();
    let mut kept = vec![s2, s3];
    kept.sort();
    assert_eq!(ids, kept);
}

/// A CTAS of zoned timestamps (`CAST(… AS TIMESTAMPTZ)`, Spark's `TIMESTAMP_LTZ '…'`,
/// `now()`) makes `timestamptz` columns, as Spark's CTAS makes them; a zone-less
/// `TIMESTAMP '…'` a `timestamp` column. Without a session time zone DataFusion 55 gave
/// the zoned ones no zone, and the table `timestamp` columns. PyIceberg reads the types
/// and instants.
#[tokio::test]
async fn ctas_of_zoned_timestamps_makes_timestamptz_columns() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.z AS SELECT 1 AS id, \
         CAST('2024-01-01 00:00:00+02:00' AS TIMESTAMPTZ) AS z, \
         TIMESTAMP_LTZ '2024-01-01 00:00:00' AS l, now() AS n, \
         TIMESTAMP '2024-01-01 00:00:00' AS t",
    )
    .await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.z"))
        .await
        .expect("load");
    let types: Vec<String> = table
        .metadata()
        .current_schema()
        .fields
        .fields
        .iter()
        .map(|f| format!("{} {}", f.name, f.field_type))
        .collect();
    assert_eq!(
        types,
        [
            "id int",
            "z timestamptz",
            "l timestamptz",
            "n timestamptz",
            "t timestamp"
        ]
    );
    assert_eq!(
        first_row(&lake, "SELECT z, l, t FROM ice.ns.z").await,
        [
            "2023-12-31T22:00:00Z",
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00"
        ]
    );
    if python().is_none() {
        return;
    }
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.z");
    let fields: Vec<String> = pyi["schema"]["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|f| format!("{} {}", f["name"].as_str().expect("name"), f["type"]))
        .collect();
    assert_eq!(
        fields,
        [
            "id \"int\"",
            "z \"timestamptz\"",
            "l \"timestamptz\"",
            "n \"timestamptz\"",
            "t \"timestamp\""
        ]
    );
    let row = &pyi["rows"][0];
    assert_eq!(row[1], "2023-12-31T22:00:00.000000Z", "{row}");
    assert_eq!(row[2], "2024-01-01T00:00:00.000000Z", "{row}");
    assert_eq!(row[4], "2024-01-01T00:00:00.000000", "{row}");
}

/// A `timestamptz` value cast to a zone-less timestamp is its wall-clock time in the
/// session's zone, as Spark casts `TIMESTAMP_LTZ` to `TIMESTAMP_NTZ` (and DuckDB casts to
/// `TIMESTAMP`): `CAST(tz AS TIMESTAMP)`, `tz::TIMESTAMP_NTZ`, and a zoned value written
/// into a `timestamp` column by `UPDATE … SET` or `INSERT … SELECT`, were the UTC
/// wall-clock time whatever `datafusion.execution.time_zone` said. Each instant has one
/// wall-clock time, at daylight-saving changes too.
#[tokio::test]
async fn timestamptz_cast_to_timestamp_is_the_session_zones_wall_clock() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.c (id INT, tz TIMESTAMPTZ, ts TIMESTAMP)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.c VALUES (1, '2024-02-29T21:30:00Z', NULL), \
         (2, '2024-10-27T00:30:00Z', NULL), (3, '2024-10-27T01:30:00Z', NULL), \
         (4, '1969-12-31T23:30:00.5Z', NULL)",
    )
    .await;
    ok(ctx, "SET datafusion.execution.time_zone = 'Europe/Paris'").await;
    let expected = [
        "2024-02-29T22:30:00",
        // 02:30 twice: first CEST (+02:00), then CET (+01:00)
        "2024-10-27T02:30:00",
        "2024-10-27T02:30:00",
        "1970-01-01T00:30:00.500",
    ];
    for expr in [
        "CAST(tz AS TIMESTAMP)",
        "tz::TIMESTAMP_NTZ",
        "TRY_CAST(tz AS TIMESTAMP(9))",
    ] {
        let got = column(
            &lake,
            &format!("SELECT CAST({expr} AS STRING) FROM ice.ns.c ORDER BY id"),
        )
        .await;
        assert_eq!(got, expected, "{expr}");
    }
    ok(ctx, "UPDATE ice.ns.c SET ts = tz").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.c (id, ts) SELECT id + 10, tz FROM ice.ns.c WHERE id = 1",
    )
    .await;
    // the stored values, read in UTC
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    let stored = column(&lake, "SELECT CAST(ts AS STRING) FROM ice.ns.c ORDER BY id").await;
    assert_eq!(
        stored,
        [
            "2024-02-29T22:30:00",
            "2024-10-27T02:30:00",
            "2024-10-27T02:30:00",
            "1970-01-01T00:30:00.500",
            "2024-02-29T22:30:00",
        ]
    );
    let utc = column(
        &lake,
        "SELECT CAST(CAST(tz AS TIMESTAMP) AS STRING) FROM ice.ns.c WHERE id = 1",
    )
    .await;
    assert_eq!(utc, ["2024-02-29T21:30:00"]);
}

/// A zone-less time written into a `timestamptz` column is a wall-clock time in the
/// session's zone, as Spark writes it: `INSERT … VALUES`, `INSERT … SELECT` of a
/// zone-less column or a date, `UPDATE … SET` and `MERGE … INSERT` all wrote it as a UTC
/// wall-clock time whatever `datafusion.execution.time_zone` said. Constants at a time
/// the clock shows twice or skips resolve as java.time does for Spark; a string naming
/// its offset is that instant; sub-microsecond digits floor.
#[tokio::test]
async fn zone_less_times_written_into_timestamptz_are_read_in_the_session_zone() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.w (id INT, tz TIMESTAMPTZ, ts TIMESTAMP, d DATE)",
    )
    .await;
    ok(ctx, "SET datafusion.execution.time_zone = 'Europe/Paris'").await;
    for sql in [
        "INSERT INTO ice.ns.w VALUES \
         (1, '2024-02-29 22:30:00', TIMESTAMP '2024-07-01 12:00:00', DATE '2024-01-01'), \
         (2, TIMESTAMP '2024-07-01 12:00:00', NULL, NULL), \
         (3, '2024-07-01T12:00:00Z', NULL, NULL), \
         (4, '2024-10-27 02:30:00', NULL, NULL), \
         (5, '2024-03-31 02:30:00', NULL, NULL), \
         (6, DATE '2024-01-01', NULL, NULL), \
         (7, '1969-12-31 23:59:59.9999995', NULL, NULL)",
        "INSERT INTO ice.ns.w (id, tz) SELECT 8, ts FROM ice.ns.w WHERE id = 1",
        "INSERT INTO ice.ns.w (id, tz) SELECT 9, d FROM ice.ns.w WHERE id = 1",
        "UPDATE ice.ns.w SET tz = '2024-12-24 18:00:00' WHERE id = 3",
        "MERGE INTO ice.ns.w USING (SELECT 10 AS id) s ON w.id = s.id \
         WHEN NOT MATCHED THEN INSERT (id, tz) VALUES (s.id, '2024-08-15 08:00:00')",
    ] {
        ok(ctx, sql).await;
    }
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.w (id, tz) VALUES (11, '2024-02-29 22:30:00')",
    )
    .await;
    let rows = column(
        &lake,
        "SELECT concat(CAST(id AS STRING), ' ', CAST(tz AS STRING)) FROM ice.ns.w ORDER BY id",
    )
    .await;
    assert_eq!(
        rows,
        [
            "1 2024-02-29T21:30:00Z",
            "2 2024-07-01T10:00:00Z",
            "3 2024-12-24T17:00:00Z",
            // shown twice: the earlier (CEST); skipped: moved later by the gap
            "4 2024-10-27T00:30:00Z",
            "5 2024-03-31T01:30:00Z",
            "6 2023-12-31T23:00:00Z",
            "7 1969-12-31T22:59:59.999999Z",
            "8 2024-07-01T10:00:00Z",
            "9 2023-12-31T23:00:00Z",
            "10 2024-08-15T06:00:00Z",
            // in UTC, UTC
            "11 2024-02-29T22:30:00Z",
        ]
    );
}

/// A string, `TIMESTAMP '…'` literal or date compared with a `timestamptz` column is a
/// wall-clock time in the session's time zone, as Spark reads it (DataFusion read it in
/// UTC, the column's zone), resolved as java.time resolves it for Spark around daylight
/// saving time: a time the clock shows twice is the earlier instant, one it skips moves
/// later by the gap. A string naming its offset is that instant. Files are pruned by
/// their `hours(tz)` partitions: the rows are those of an unpartitioned copy.
#[tokio::test]
async fn zone_less_times_compared_with_timestamptz_are_read_in_the_session_zone() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let rows = "(1, '2024-03-31T00:30:00Z'), (2, '2024-03-31T01:30:00Z'), \
                (3, '2024-10-27T00:30:00Z'), (4, '2024-10-27T01:30:00Z'), \
                (5, '1969-12-31T23:30:00Z')";
    ok(
        ctx,
        "CREATE TABLE ice.ns.dst (id INT, tz TIMESTAMPTZ) PARTITIONED BY (hours(tz))",
    )
    .await;
    ok(ctx, "CREATE TABLE ice.ns.flat (id INT, tz TIMESTAMPTZ)").await;
    for t in ["dst", "flat"] {
        ok(ctx, &format!("INSERT INTO ice.ns.{t} VALUES {rows}")).await;
    }
    // Europe/Paris: CET (+01:00) until 2024-03-31 02:00, CEST (+02:00) until 2024-10-27 03:00
    let cases: &[(&str, &[&str])] = &[
        // 02:30 does not exist on 2024-03-31: 03:30 CEST, 01:30Z
        ("tz >= '2024-03-31 02:30:00'", &["2", "3", "4"]),
        ("tz < TIMESTAMP '2024-03-31 02:30:00'", &["1", "5"]),
        // 02:30 is shown twice on 2024-10-27: the earlier, 02:30 CEST, 00:30Z
        ("tz = '2024-10-27 02:30:00'", &["3"]),
        ("tz = TIMESTAMP '2024-10-27 02:30:00'", &["3"]),
        ("tz = TIMESTAMP '2024-10-27 02:30:00+01:00'", &["4"]),
        ("tz = '2024-10-27T01:30:00Z'", &["4"]),
        (
            "tz IN ('2024-03-31 01:30:00', TIMESTAMP '2024-03-31 03:30:00')",
            &["1", "2"],
        ),
        (
            "tz BETWEEN '2024-10-27 02:00:00' AND '2024-10-27 02:59:59'",
            &["3"],
        ),
        // midnight in Paris: 1969-12-31T23:00Z
        ("tz < DATE '1970-01-01'", &[]),
        ("tz < DATE '1970-01-02'", &["5"]),
        ("tz < '1970-01-01 00:30:00'", &[]),
        ("tz <= '1970-01-01 00:30:00'", &["5"]),
    ];
    ok(ctx, "SET datafusion.execution.time_zone = 'Europe/Paris'").await;
    for (condition, expected) in cases {
        for t in ["dst", "flat"] {
            let mut ids = column(
                &lake,
                &format!("SELECT CAST(id AS STRING) FROM ice.ns.{t} WHERE {condition}"),
            )
            .await;
            ids.sort();
            assert_eq!(ids, *expected, "{t}: {condition} (Europe/Paris)");
        }
    }
    // in UTC, the same strings are UTC times
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    let mut ids = column(
        &lake,
        "SELECT CAST(id AS STRING) FROM ice.ns.dst WHERE tz >= '2024-03-31 01:30:00' \
         AND tz <= TIMESTAMP '2024-10-27 00:30:00'",
    )
    .await;
    ids.sort();
    assert_eq!(ids, ["2", "3"]);
}

/// A zone-less column, a date column or a prepared statement's `TIMESTAMP` parameter
/// written into a `timestamptz` column is a wall-clock time in the session's zone,
/// resolved as a constant of the same time is (java.time's rules, as Spark): a time the
/// clock shows twice is the earlier instant, one it skips moves later by the gap. An
/// `INSERT … SELECT` of such a column failed ("Cannot cast timezone to different
/// timezone"); a parameter declared `TIMESTAMP` (nanoseconds) was refused in a
/// microsecond column ("does not cast losslessly") and written into a `timestamptz` as a
/// UTC wall-clock time whatever the session's zone.
#[tokio::test]
async fn non_constant_zone_less_times_written_into_timestamptz_resolve_as_constants() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.z (id INT, tz TIMESTAMPTZ, ts TIMESTAMP, d DATE)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.z VALUES (1, NULL, '2026-03-08 02:30:00.25', NULL), \
         (2, NULL, '2026-11-01 01:30:00', NULL), (3, NULL, '1960-01-01 00:00:00', NULL), \
         (4, NULL, NULL, DATE '2026-03-08')",
    )
    .await;
    ok(
        ctx,
        "SET datafusion.execution.time_zone = 'America/New_York'",
    )
    .await;
    for sql in [
        "INSERT INTO ice.ns.z (id, tz) SELECT id + 10, ts FROM ice.ns.z WHERE id <= 3",
        "PREPARE i(INT, TIMESTAMP) AS INSERT INTO ice.ns.z VALUES ($1, $2, $2, NULL)",
        "EXECUTE i(21, '2026-03-08 02:30:00.0000009')",
        "EXECUTE i(22, '1969-12-31 23:59:59.9999995')",
        "PREPARE u(TIMESTAMP) AS UPDATE ice.ns.z SET tz = $1 WHERE id = 2",
        "EXECUTE u('2026-11-01 01:30:00')",
        // one parameter written into columns of two types: each its own cast
        "PREPARE x(TIMESTAMPTZ) AS INSERT INTO ice.ns.z (id, ts, d) VALUES (23, $1, $1)",
        "EXECUTE x('2026-07-01T02:00:00Z')",
        // Havana's clocks skip midnight on 8 March 2026 (to 01:00, UTC-4)
        "SET datafusion.execution.time_zone = 'America/Havana'",
        "INSERT INTO ice.ns.z (id, tz) SELECT 14, d FROM ice.ns.z WHERE id = 4",
    ] {
        ok(ctx, sql).await;
    }
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    let rows = column(
        &lake,
        "SELECT concat(CAST(id AS STRING), ' ', coalesce(CAST(tz AS STRING), '-'), ' ', \
         coalesce(CAST(ts AS STRING), '-')) FROM ice.ns.z WHERE id <> 1 AND id <> 3 \
         AND id <> 4 ORDER BY id",
    )
    .await;
    assert_eq!(
        rows,
        [
            "2 2026-11-01T05:30:00Z 2026-11-01T01:30:00",
            // skipped: later by the gap; shown twice: the earlier (EDT)
            "11 2026-03-08T07:30:00.250Z -",
            "12 2026-11-01T05:30:00Z -",
            "13 1960-01-01T05:00:00Z -",
            "14 2026-03-08T05:00:00Z -",
            // sub-microsecond digits floor, as a literal's
            "21 2026-03-08T07:30:00Z 2026-03-08T02:30:00",
            "22 1970-01-01T04:59:59.999999Z 1969-12-31T23:59:59.999999",
            "23 - 2026-06-30T22:00:00",
        ]
    );
    assert_eq!(
        column(&lake, "SELECT d FROM ice.ns.z WHERE id = 23").await,
        ["2026-06-30"]
    );
    if python().is_none() {
        return;
    }
    // PyIceberg reads the same instants
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.z");
    let rows = pyi["rows"].as_array().expect("rows");
    let tz_of = |id: i64| rows.iter().find(|r| r[0] == id).map(|r| r[1].clone());
    for (id, want) in [
        (2, "2026-11-01T05:30:00.000000Z"),
        (11, "2026-03-08T07:30:00.250000Z"),
        (12, "2026-11-01T05:30:00.000000Z"),
        (14, "2026-03-08T05:00:00.000000Z"),
        (22, "1970-01-01T04:59:59.999999Z"),
    ] {
        assert_eq!(tz_of(id), Some(serde_json::json!(want)), "{id}: {pyi}");
    }
}

/// A zone-less timestamp column or a date column compared with a `timestamptz` value is
/// read as wall-clock times in the session's zone, as Spark casts `TIMESTAMP_NTZ` and
/// `DATE` to `TIMESTAMP` (java.time's rules: a time shown twice is the earlier instant);
/// DataFusion compared them as UTC wall-clock times, so `tz = n` was false for a row whose
/// `n` is `tz`'s wall clock in the session's zone.
#[tokio::test]
async fn zone_less_columns_compared_with_timestamptz_are_read_in_the_session_zone() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.c (id INT, tz TIMESTAMPTZ, n TIMESTAMP, d DATE)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.c VALUES \
         (1, '2026-07-01T16:00:00Z', '2026-07-01 12:00:00', DATE '2026-07-01'), \
         (2, '2026-11-01T05:30:00Z', '2026-11-01 01:30:00', DATE '2026-11-01'), \
         (3, '2026-07-01T04:00:00Z', '2026-07-01 04:00:00', DATE '2026-07-01')",
    )
    .await;
    ok(
        ctx,
        "SET datafusion.execution.time_zone = 'America/New_York'",
    )
    .await;
    let ids = |sql: &'static str| {
        let lake = &lake;
        async move { column(lake, sql).await }
    };
    // row 3: equal only as UTC wall clocks; its date's midnight in New York is tz
    assert_eq!(
        ids("SELECT id FROM ice.ns.c WHERE tz = n ORDER BY id").await,
        ["1", "2"]
    );
    assert_eq!(
        ids("SELECT id FROM ice.ns.c WHERE n IN (tz) ORDER BY id").await,
        ["1", "2"]
    );
    assert_eq!(
        ids("SELECT id FROM ice.ns.c WHERE tz = d ORDER BY id").await,
        ["3"]
    );
    // compared with a zoned constant: 01:30 is shown twice, the earlier (EDT) both sides
    assert_eq!(
        ids("SELECT id FROM ice.ns.c WHERE n = TIMESTAMPTZ '2026-11-01 01:30:00' ORDER BY id")
            .await,
        ["2"]
    );
    assert_eq!(
        ids("SELECT id FROM ice.ns.c \
             WHERE tz BETWEEN n AND n + INTERVAL '1' SECOND ORDER BY id")
        .await,
        ["1", "2"]
    );
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    assert_eq!(
        ids("SELECT id FROM ice.ns.c WHERE tz = n ORDER BY id").await,
        ["3"]
    );
}

/// A `timestamptz` value cast to a `DATE`, or written into a `date` column, is the date of
/// its wall-clock time in the session's zone, as Spark casts `TIMESTAMP` to `DATE`: Arrow's
/// cast gave the UTC date (`2026-07-01` for `2026-07-01T02:00:00Z` in New York, where it
/// is 22:00 on 30 June).
#[tokio::test]
async fn timestamptz_cast_to_date_is_the_session_zones_date() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.dd (id INT, tz TIMESTAMPTZ, d DATE)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.dd VALUES (1, '2026-07-01T02:00:00Z', NULL), \
         (2, '2026-07-01T20:00:00Z', NULL)",
    )
    .await;
    ok(
        ctx,
        "SET datafusion.execution.time_zone = 'America/New_York'",
    )
    .await;
    let dates = column(
        &lake,
        "SELECT concat(CAST(CAST(tz AS DATE) AS STRING), ' ', \
         CAST(TRY_CAST(tz AS DATE) AS STRING)) FROM ice.ns.dd ORDER BY id",
    )
    .await;
    assert_eq!(dates, ["2026-06-30 2026-06-30", "2026-07-01 2026-07-01"]);
    ok(
        ctx,
        "INSERT INTO ice.ns.dd (id, d) SELECT id + 10, tz AS d FROM ice.ns.dd WHERE id <= 2",
    )
    .await;
    ok(ctx, "SET datafusion.execution.time_zone = '+05:30'").await;
    assert_eq!(
        column(&lake, "SELECT CAST(tz AS DATE) FROM ice.ns.dd WHERE id = 2").await,
        ["2026-07-02"]
    );
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    assert_eq!(
        column(&lake, "SELECT d FROM ice.ns.dd WHERE id > 10 ORDER BY id").await,
        ["2026-06-30", "2026-07-01"]
    );
    assert_eq!(
        column(&lake, "SELECT CAST(tz AS DATE) FROM ice.ns.dd WHERE id = 1").await,
        ["2026-07-01"]
    );
}

/// A zone-less string that is no constant (a string column of an `INSERT … SELECT`, of
/// an `UPDATE … SET` or a `MERGE`, `CAST(s AS TIMESTAMPTZ)`) written into a
/// `timestamptz` column, or compared with one, is a wall-clock time in the session's zone
/// resolved per row as a constant of the same time is (java.time's rules, as Spark): a
/// time the clock skips moves later by the gap, one shown twice is the earlier instant; a
/// string naming its offset is that instant. Arrow's cast failed the statement at a
/// skipped or repeated time ("error computing timezone offset"), and a string
/// column compared with a `timestamptz` was read in UTC. PyIceberg and DuckDB read the
/// instants written.
#[tokio::test]
async fn zone_less_string_columns_resolve_as_constants_per_row() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.src (id INT, s STRING)").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.src VALUES (1, '2024-03-31 02:30:00'), (2, '2024-10-27 02:30:00'), \
         (3, '2024-07-01T12:00:00+05:00'), (4, '1969-12-31 23:59:59.9999995'), (5, NULL), \
         (6, '2024-01-15')",
    )
    .await;
    ok(
        ctx,
        "CREATE TABLE ice.ns.t (id INT, tz TIMESTAMPTZ, s STRING)",
    )
    .await;
    ok(ctx, "SET datafusion.execution.time_zone = 'Europe/Paris'").await;
    for sql in [
        "INSERT INTO ice.ns.t SELECT id, s AS tz, s FROM ice.ns.src",
        "INSERT INTO ice.ns.t (id, tz) SELECT id + 10, CAST(s AS TIMESTAMPTZ) FROM ice.ns.src",
        "INSERT INTO ice.ns.t (id, tz) SELECT id + 20, CAST(s AS TIMESTAMP) FROM ice.ns.src",
        "INSERT INTO ice.ns.t (id, tz) SELECT id + 30, TRY_CAST(s AS TIMESTAMPTZ) FROM ice.ns.src",
        "INSERT INTO ice.ns.t (id, s) VALUES (41, '2024-03-31 02:15:00')",
        "UPDATE ice.ns.t SET tz = s WHERE id = 41",
        // constants at such times, and one nanoseconds do not hold (Paris's 1500 LMT)
        "INSERT INTO ice.ns.t (id, tz) VALUES (44, TIMESTAMPTZ '2024-03-31 02:30:00'), \
         (45, CAST('1500-01-01 00:00:00' AS TIMESTAMPTZ))",
        "PREPARE q(INT, VARCHAR) AS INSERT INTO ice.ns.t (id, tz) VALUES ($1, $2)",
        "EXECUTE q(46, '2024-10-27 02:30:00')",
        "CREATE TABLE ice.ns.c AS SELECT id, CAST(s AS TIMESTAMPTZ) AS tz FROM ice.ns.src \
         WHERE id = 1",
        "MERGE INTO ice.ns.t USING ice.ns.src s ON t.id = s.id + 50 \
         WHEN NOT MATCHED AND s.id = 2 THEN INSERT (id, tz) VALUES (s.id + 50, s.s)",
    ] {
        ok(ctx, sql).await;
    }
    // Kathmandu's clocks skipped 00:00–00:15 on 1 January 1986 (+05:30 → +05:45)
    ok(ctx, "SET datafusion.execution.time_zone = 'Asia/Kathmandu'").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.t (id, tz) SELECT 60, s FROM (VALUES ('1986-01-01 00:10:00')) v(s)",
    )
    .await;
    // a string that is no time fails the statement naming it (TRY_CAST: null)
    let err = run(
        ctx,
        "INSERT INTO ice.ns.t (id, tz) SELECT 43, s FROM (VALUES ('not a time')) v(s)",
    )
    .await
    .expect_err("no time");
    assert!(err.to_string().contains("'not a time'"), "{err}");
    assert_eq!(
        column(
            &lake,
            "SELECT CAST(TRY_CAST(s AS TIMESTAMPTZ) IS NULL AS STRING) \
             FROM (VALUES ('not a time')) v(s)"
        )
        .await,
        ["true"]
    );

    // a string column compared with a timestamptz: read in the session's zone, per row
    ok(ctx, "SET datafusion.execution.time_zone = 'Europe/Paris'").await;
    assert_eq!(
        column(&lake, "SELECT id FROM ice.ns.t WHERE tz = s ORDER BY id").await,
        ["1", "2", "3", "4", "6", "41"]
    );
    // and compared with a zoned constant (DataFusion's cast of the column failed at 02:30)
    assert_eq!(
        column(
            &lake,
            "SELECT id FROM ice.ns.t WHERE s = TIMESTAMPTZ '2024-03-31 03:30:00' ORDER BY id"
        )
        .await,
        ["1"]
    );
    assert_eq!(
        column(
            &lake,
            "SELECT id FROM ice.ns.t WHERE tz = TIMESTAMP '1500-01-01 00:00:00' \
             OR tz = '1500-01-01 00:00:00' ORDER BY id"
        )
        .await,
        ["45"]
    );
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    let rows = column(
        &lake,
        "SELECT concat(CAST(id AS STRING), ' ', coalesce(CAST(tz AS STRING), '-')) \
         FROM ice.ns.t WHERE id <> 23 ORDER BY id",
    )
    .await;
    // CEST from 2024-03-31 02:00 (skipped to 03:00) until 2024-10-27 03:00 (02:00–03:00 twice)
    let per_source = [
        "2024-03-31T01:30:00Z",
        "2024-10-27T00:30:00Z",
        "2024-07-01T07:00:00Z",
        "1969-12-31T22:59:59.999999Z",
        "-",
        "2024-01-14T23:00:00Z",
    ];
    let mut expected = vec![];
    for base in [0, 10, 20, 30] {
        for (i, want) in per_source.iter().enumerate() {
            // (23: CAST('…+05:00' AS TIMESTAMP) is DataFusion's UTC wall clock, not
            // Spark's, which drops the offset: left out)
            if base + i + 1 != 23 {
                expected.push(format!("{} {want}", base + i + 1));
            }
        }
    }
    expected.extend([
        "41 2024-03-31T01:15:00Z".to_string(),
        "44 2024-03-31T01:30:00Z".to_string(),
        "45 1499-12-31T23:50:39Z".to_string(),
        "46 2024-10-27T00:30:00Z".to_string(),
        "52 2024-10-27T00:30:00Z".to_string(),
        // 00:10 skipped: 00:25 +05:45
        "60 1985-12-31T18:40:00Z".to_string(),
    ]);
    assert_eq!(rows, expected);
    // in UTC the strings are UTC wall-clock times: only the one naming its offset matches
    // (without the year 1500, which DataFusion's own comparison of a string column with a
    // timestamp, in nanoseconds, does not hold)
    ok(ctx, "DELETE FROM ice.ns.t WHERE id = 45").await;
    assert_eq!(
        column(&lake, "SELECT id FROM ice.ns.t WHERE tz = s ORDER BY id").await,
        ["3"]
    );
    assert_eq!(
        column(&lake, "SELECT CAST(tz AS STRING) FROM ice.ns.c").await,
        ["2024-03-31T01:30:00Z"]
    );
    if python().is_none() {
        return;
    }
    let want = [
        (1, "2024-03-31T01:30:00.000000Z"),
        (2, "2024-10-27T00:30:00.000000Z"),
        (4, "1969-12-31T22:59:59.999999Z"),
        (11, "2024-03-31T01:30:00.000000Z"),
        (60, "1985-12-31T18:40:00.000000Z"),
    ];
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.t");
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .expect("load");
    let duck = duckdb_read(table.metadata_location());
    for (engine, read) in [("pyiceberg", &pyi), ("duckdb", &duck)] {
        let rows = read["rows"].as_array().expect("rows");
        for (id, at) in want {
            let got = rows.iter().find(|r| r[0] == id).map(|r| r[1].clone());
            assert_eq!(got, Some(serde_json::json!(at)), "{engine} {id}: {read}");
        }
    }
}

/// Zone-less times (and strings, dates) inside structs, lists and maps written into
/// `timestamptz` fields are wall-clock times in the session's zone, as Spark writes them
/// and as a top-level value is: `INSERT … VALUES` of `named_struct(…)`, `[…]`, `MAP {…}`,
/// `INSERT … SELECT` of nested zone-less columns, `UPDATE … SET` and `MERGE` values. They
/// were written as UTC wall-clock times whatever the session's zone. Times the clock
/// skips or shows twice resolve as java.time does; nulls stay null at every depth.
/// PyIceberg and DuckDB read the instants written.
#[tokio::test]
async fn zone_less_times_inside_structs_lists_and_maps_are_read_in_the_session_zone() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    // maps: DataFusion's CREATE TABLE has no MAP type; a CTAS in UTC makes one
    for sql in [
        "CREATE TABLE ice.ns.n (id INT, st STRUCT<ts: TIMESTAMPTZ, k: INT>, \
         l ARRAY<TIMESTAMPTZ>)",
        "CREATE TABLE ice.ns.m AS SELECT 0 AS id, MAP {'a': TIMESTAMPTZ '2000-01-01 00:00:00'} AS m",
        "CREATE TABLE ice.ns.src (id INT, st STRUCT<ts: TIMESTAMP, k: INT>, l ARRAY<TIMESTAMP>)",
        "INSERT INTO ice.ns.src VALUES \
         (1, named_struct('ts', TIMESTAMP '2026-03-08 02:30:00', 'k', 1), \
         [TIMESTAMP '2026-11-01 01:30:00', NULL]), (2, NULL, NULL), \
         (3, named_struct('ts', NULL, 'k', 3), [TIMESTAMP '1960-01-01 00:00:00.5'])",
        "SET datafusion.execution.time_zone = 'America/New_York'",
        "INSERT INTO ice.ns.n VALUES \
         (1, named_struct('ts', TIMESTAMP '2026-07-01 12:00:00', 'k', 1), \
         [TIMESTAMP '2026-03-08 02:30:00', TIMESTAMP '2026-11-01 01:30:00']), \
         (2, named_struct('ts', '2026-01-01 00:00:00', 'k', 2), ['1960-01-01 00:00:00', NULL]), \
         (3, named_struct('ts', DATE '2026-07-04', 'k', 3), NULL)",
        "INSERT INTO ice.ns.n SELECT id + 10, st, l FROM ice.ns.src",
        "INSERT INTO ice.ns.m VALUES (1, MAP {'a': TIMESTAMP '2026-07-01 12:00:00', 'b': NULL})",
        "INSERT INTO ice.ns.n (id) VALUES (21), (22)",
        "UPDATE ice.ns.n SET st = named_struct('ts', TIMESTAMP '2026-12-24 18:00:00', 'k', 21) \
         WHERE id = 21",
        "MERGE INTO ice.ns.n USING (SELECT 22 AS id) s ON n.id = s.id \
         WHEN MATCHED THEN UPDATE SET l = [TIMESTAMP '2026-08-15 08:00:00']",
        "SET datafusion.execution.time_zone = 'Asia/Kathmandu'",
        "INSERT INTO ice.ns.n VALUES \
         (31, named_struct('ts', TIMESTAMP '2024-01-01 10:00:00', 'k', 31), NULL)",
        "SET datafusion.execution.time_zone = 'UTC'",
        "INSERT INTO ice.ns.n VALUES \
         (41, named_struct('ts', TIMESTAMP '2024-01-01 10:00:00', 'k', 41), NULL)",
    ] {
        ok(ctx, sql).await;
    }
    let rows = column(
        &lake,
        "SELECT concat(CAST(id AS STRING), ' ', coalesce(CAST(st.ts AS STRING), '-'), ' ', \
         coalesce(CAST(st.k AS STRING), '-'), ' ', coalesce(array_to_string(l, ',', 'null'), '-')) \
         FROM ice.ns.n ORDER BY id",
    )
    .await;
    assert_eq!(
        rows,
        [
            "1 2026-07-01T16:00:00Z 1 2026-03-08T07:30:00Z,2026-11-01T05:30:00Z",
            "2 2026-01-01T05:00:00Z 2 1960-01-01T05:00:00Z,null",
            "3 2026-07-04T04:00:00Z 3 -",
            "11 2026-03-08T07:30:00Z 1 2026-11-01T05:30:00Z,null",
            "12 - - -",
            "13 - 3 1960-01-01T05:00:00.500Z",
            "21 2026-12-24T23:00:00Z 21 -",
            "22 - - 2026-08-15T12:00:00Z",
            // +05:45
            "31 2024-01-01T04:15:00Z 31 -",
            "41 2024-01-01T10:00:00Z 41 -",
        ]
    );
    assert_eq!(
        column(
            &lake,
            "SELECT concat(CAST(m['a'] AS STRING), ' ', coalesce(CAST(m['b'] AS STRING), '-')) \
             FROM ice.ns.m WHERE id = 1"
        )
        .await,
        ["2026-07-01T16:00:00Z -"]
    );
    if python().is_none() {
        return;
    }
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.n"))
        .await
        .expect("load");
    let duck = duckdb_read(table.metadata_location());
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.n");
    for (engine, read) in [("pyiceberg", &pyi), ("duckdb", &duck)] {
        let rows = read["rows"].as_array().expect("rows");
        let row = |id: i64| rows.iter().find(|r| r[0] == id).cloned();
        let one = row(1).expect("row 1");
        assert_eq!(
            one[1]["ts"], "2026-07-01T16:00:00.000000Z",
            "{engine}: {one}"
        );
        assert_eq!(
            one[2],
            serde_json::json!(["2026-03-08T07:30:00.000000Z", "2026-11-01T05:30:00.000000Z"]),
            "{engine}: {one}"
        );
        let thirteen = row(13).expect("row 13");
        assert_eq!(
            thirteen[2],
            serde_json::json!(["1960-01-01T05:00:00.500000Z"]),
            "{engine}: {thirteen}"
        );
    }
}

/// `extract`/`date_part`, `date_trunc`, `to_char` of a `timestamptz` column work in the
/// session's zone, as Spark computes them (DataFusion computed them in UTC, the column's
/// zone), in `SELECT`, `GROUP BY`, `WHERE` (files pruned by `day(tz)` partitions keep every
/// row an unpartitioned copy has), a prepared statement, a view and a CTAS; `date_trunc`
/// gives the instant the local unit starts. A `date_bin`'s zone-less origin is a
/// wall-clock time in the session's zone. Nothing changes in a UTC session.
#[tokio::test]
async fn calendar_functions_of_timestamptz_work_in_the_session_zone() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let rows = "(1, '2026-07-01T02:00:00Z'), (2, '2026-01-01T03:00:00Z'), \
                (3, '2026-11-01T05:30:00Z'), (4, '2026-11-01T06:30:00Z'), \
                (5, '1960-01-01T03:00:00Z'), (6, '2027-01-01T02:00:00Z')";
    ok(
        ctx,
        "CREATE TABLE ice.ns.f (id INT, tz TIMESTAMPTZ) PARTITIONED BY (day(tz))",
    )
    .await;
    ok(ctx, "CREATE TABLE ice.ns.flat (id INT, tz TIMESTAMPTZ)").await;
    for t in ["f", "flat"] {
        ok(ctx, &format!("INSERT INTO ice.ns.{t} VALUES {rows}")).await;
    }
    let each = "concat(CAST(id AS STRING), ' ', CAST(extract(hour FROM tz) AS STRING), ' ', \
                CAST(date_part('day', tz) AS STRING), ' ', CAST(extract(year FROM tz) AS STRING), \
                ' ', CAST(date_trunc('day', tz) AS STRING), ' ', \
                CAST(date_trunc('hour', tz) AS STRING), ' ', to_char(tz, '%Y-%m-%d %H:%M'))";
    ok(
        ctx,
        "SET datafusion.execution.time_zone = 'America/New_York'",
    )
    .await;
    // the instants date_trunc gives are written as the session zone's wall clock
    // (2026-06-30T04:00:00Z is 00:00 EDT)
    let ny = [
        "1 22 30 2026 2026-06-30T00:00:00-04:00 2026-06-30T22:00:00-04:00 2026-06-30 22:00",
        "2 22 31 2025 2025-12-31T00:00:00-05:00 2025-12-31T22:00:00-05:00 2025-12-31 22:00",
        // 01:30 twice: first EDT, then EST; each truncates to its own 01:00
        "3 1 1 2026 2026-11-01T00:00:00-04:00 2026-11-01T01:00:00-04:00 2026-11-01 01:30",
        "4 1 1 2026 2026-11-01T00:00:00-04:00 2026-11-01T01:00:00-05:00 2026-11-01 01:30",
        "5 22 31 1959 1959-12-31T00:00:00-05:00 1959-12-31T22:00:00-05:00 1959-12-31 22:00",
        "6 21 31 2026 2026-12-31T00:00:00-05:00 2026-12-31T21:00:00-05:00 2026-12-31 21:00",
    ];
    assert_eq!(
        column(&lake, &format!("SELECT {each} FROM ice.ns.f ORDER BY id")).await,
        ny
    );
    // the result of date_trunc keeps the column's type: a timestamptz in a CTAS
    ok(
        ctx,
        "CREATE TABLE ice.ns.days AS SELECT id, date_trunc('day', tz) AS d, \
         extract(hour FROM tz) AS h FROM ice.ns.f",
    )
    .await;
    ok(
        ctx,
        "CREATE VIEW ice.ns.hours AS SELECT id, extract(hour FROM tz) AS h FROM ice.ns.f",
    )
    .await;
    ok(
        ctx,
        "PREPARE p(INT) AS SELECT CAST(extract(hour FROM tz) AS STRING) FROM ice.ns.f WHERE id = $1",
    )
    .await;
    assert_eq!(column(&lake, "EXECUTE p(1)").await, ["22"]);
    assert_eq!(
        column(
            &lake,
            "SELECT CAST(h AS STRING) FROM ice.ns.hours WHERE id = 6"
        )
        .await,
        ["21"]
    );
    let groups = "SELECT concat(CAST(d AS STRING), ' ', CAST(n AS STRING)) FROM \
                  (SELECT date_trunc('day', tz) AS d, count(*) AS n FROM ice.ns.f \
                  GROUP BY date_trunc('day', tz)) g ORDER BY d";
    assert_eq!(
        column(&lake, groups).await,
        [
            "1959-12-31T00:00:00-05:00 1",
            "2025-12-31T00:00:00-05:00 1",
            "2026-06-30T00:00:00-04:00 1",
            "2026-11-01T00:00:00-04:00 2",
            "2026-12-31T00:00:00-05:00 1",
        ]
    );
    let filters: &[(&str, &[&str])] = &[
        ("extract(year FROM tz) = 2026", &["1", "3", "4", "6"]),
        ("date_part('year', tz) < 2026", &["2", "5"]),
        ("extract(hour FROM tz) = 22", &["1", "2", "5"]),
        (
            "date_trunc('day', tz) = TIMESTAMP '2026-11-01 00:00:00'",
            &["3", "4"],
        ),
        ("to_char(tz, '%Y-%m-%d') = '2026-06-30'", &["1"]),
    ];
    for (condition, expected) in filters {
        for t in ["f", "flat"] {
            let ids = column(
                &lake,
                &format!("SELECT id FROM ice.ns.{t} WHERE {condition} ORDER BY id"),
            )
            .await;
            assert_eq!(ids, *expected, "{t}: {condition} (America/New_York)");
        }
    }
    // date_bin: fixed days from the origin, local midnight of 2026-01-01 (05:00Z), so
    // 01:00 in summer time (05:00Z, written in the session's zone)
    assert_eq!(
        column(
            &lake,
            "SELECT CAST(date_bin(INTERVAL '1 day', tz, TIMESTAMP '2026-01-01 00:00:00') AS STRING) \
             FROM ice.ns.f WHERE id IN (1, 2) ORDER BY id"
        )
        .await,
        ["2026-06-30T01:00:00-04:00", "2025-12-31T00:00:00-05:00"]
    );
    ok(
        ctx,
        "UPDATE ice.ns.flat SET tz = date_trunc('day', tz) WHERE extract(hour FROM tz) = 22 \
         AND id = 1",
    )
    .await;
    // Kathmandu, +05:45: the local hour starts at :15 UTC
    ok(ctx, "SET datafusion.execution.time_zone = 'Asia/Kathmandu'").await;
    assert_eq!(
        column(
            &lake,
            "SELECT concat(CAST(date_trunc('hour', tz) AS STRING), ' ', \
             CAST(extract(minute FROM tz) AS STRING)) FROM ice.ns.f WHERE id = 1"
        )
        .await,
        // 01:15Z, 07:00 there
        ["2026-07-01T07:00:00+05:45 45"]
    );
    // Paris kept local mean time (+00:09:21) until 1911: its minutes start 21 s past the
    // UTC minute, as Spark's date_trunc('MINUTE') and DuckDB's start them
    ok(ctx, "SET datafusion.execution.time_zone = 'Europe/Paris'").await;
    ok(
        ctx,
        "CREATE TABLE ice.ns.lmt AS SELECT 1 AS id, \
         CAST('1890-06-01T12:00:30.5Z' AS TIMESTAMPTZ) AS tz",
    )
    .await;
    assert_eq!(
        column(
            &lake,
            "SELECT concat(CAST(date_trunc('minute', tz) AS STRING), ' ', \
             CAST(date_trunc('MINUTE', CAST(tz AS TIMESTAMP(9) WITH TIME ZONE)) AS STRING), ' ', \
             CAST(extract(second FROM tz) AS STRING)) FROM ice.ns.lmt"
        )
        .await,
        // 11:59:39Z, 12:09:00 local (Arrow writes the offset's hours and minutes)
        ["1890-06-01T12:09:00+00:09 1890-06-01T12:09:00+00:09 51"]
    );
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    assert_eq!(
        column(&lake, &format!("SELECT {each} FROM ice.ns.f WHERE id = 1")).await,
        ["1 2 1 2026 2026-07-01T00:00:00Z 2026-07-01T02:00:00Z 2026-07-01 02:00"]
    );
    assert_eq!(
        column(
            &lake,
            "SELECT id FROM ice.ns.f WHERE extract(year FROM tz) = 2026 ORDER BY id"
        )
        .await,
        ["1", "2", "3", "4"]
    );
    assert_eq!(
        column(
            &lake,
            "SELECT CAST(tz AS STRING) FROM ice.ns.flat WHERE id = 1"
        )
        .await,
        ["2026-06-30T04:00:00Z"]
    );
    // the CTAS wrote New York's days and hours
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.days"))
        .await
        .expect("load");
    let d = table
        .metadata()
        .current_schema()
        .fields
        .fields
        .iter()
        .find(|f| f.name == "d")
        .map(|f| f.field_type.to_string());
    assert_eq!(d.as_deref(), Some("timestamptz"));
    assert_eq!(
        column(
            &lake,
            "SELECT concat(CAST(d AS STRING), ' ', CAST(h AS STRING)) FROM ice.ns.days WHERE id = 1"
        )
        .await,
        ["2026-06-30T04:00:00Z 22"]
    );
}

/// The session zone at nanoseconds (v3 `timestamptz_ns`): a string column at a skipped
/// time written into a `timestamptz_ns` column and into one inside a struct, and the
/// calendar functions of it, as for microseconds, with every digit kept.
#[tokio::test]
async fn the_session_zone_holds_for_timestamptz_ns_columns() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for sql in [
        "CREATE TABLE ice.ns.v3 (id INT, tz TIMESTAMP(9) WITH TIME ZONE, \
         st STRUCT<ts: TIMESTAMP(9) WITH TIME ZONE>, s STRING) \
         TBLPROPERTIES ('format-version'='3')",
        "SET datafusion.execution.time_zone = 'Europe/Paris'",
        "INSERT INTO ice.ns.v3 (id, s) VALUES (1, '2024-03-31 02:30:00.123456789'), \
         (2, '1969-12-31 23:59:59.999999999')",
        "UPDATE ice.ns.v3 SET tz = s, st = named_struct('ts', s)",
    ] {
        ok(ctx, sql).await;
    }
    let each = "concat(CAST(id AS STRING), ' ', CAST(extract(hour FROM tz) AS STRING), ' ', \
                CAST(date_trunc('day', tz) AS STRING), ' ', CAST(st.ts AS STRING))";
    assert_eq!(
        column(&lake, &format!("SELECT {each} FROM ice.ns.v3 ORDER BY id")).await,
        // Paris's wall clock: 01:30Z is 03:30 CEST; 22:59Z 23:59 CET
        [
            "1 3 2024-03-31T00:00:00+01:00 2024-03-31T03:30:00.123456789+02:00",
            "2 23 1969-12-31T00:00:00+01:00 1969-12-31T23:59:59.999999999+01:00",
        ]
    );
    ok(ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
    assert_eq!(
        column(
            &lake,
            "SELECT CAST(tz AS STRING) FROM ice.ns.v3 ORDER BY id"
        )
        .await,
        [
            "2024-03-31T01:30:00.123456789Z",
            "1969-12-31T22:59:59.999999999Z"
        ]
    );
}
