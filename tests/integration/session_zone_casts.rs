//! Casts between timestamps and strings, and `date_bin` by months, in the session's time
//! zone, as Spark and DuckDB users expect with `SET datafusion.execution.time_zone =
//! 'Europe/Paris'`: a `timestamptz` cast to a string writes the session zone's wall-clock
//! time with its offset, a month `date_bin` bins the session zone's calendar, and a string
//! naming its offset cast to a zone-less timestamp is its instant's wall-clock time in the
//! session zone. Expected values are worked out by hand in the comments (Paris is +01:00 in
//! winter, +02:00 in summer; in 2024 its clocks went 02:00 -> 03:00 on 31 March, 01:00Z,
//! and 03:00 -> 02:00 on 27 October, 01:00Z, so 02:30 was 00:30Z and again 01:30Z), and
//! checked with Python's zoneinfo. Filters on them answer the rows a `MemTable` copy of the
//! table answers (nothing pruned), and PyIceberg reads what was written.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::datasource::MemTable;

use crate::dml::{lake, ok, run, Lake};
use crate::interop::{pyiceberg_read, python};
use crate::zoned_pruning::ids;

/// The first column of `sql`'s answer, as strings (`-` for NULL).
async fn column(lake: &Lake, sql: &str) -> Vec<String> {
    let batches = run(&lake.ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let mut out = vec![];
    for b in &batches {
        let c = cast(b.column(0), &DataType::Utf8).expect("cast");
        let c = c.as_string::<i32>();
        out.extend((0..b.num_rows()).map(|i| {
            if c.is_null(i) {
                "-".to_string()
            } else {
                c.value(i).to_string()
            }
        }));
    }
    out
}

/// The ids `filter` selects from Iceberg table `ice.ns.<table>` (of an `id INT` column),
/// checked against the same filter over a `MemTable` copy of its rows in the same session
/// (read whole, so nothing is pruned).
async fn filtered(lake: &Lake, table: &str, filter: &str) -> Vec<i32> {
    let ctx = &lake.ctx;
    let all = run(ctx, &format!("SELECT * FROM ice.ns.{table}"))
        .await
        .expect("rows");
    let schema = all.first().expect("a batch").schema();
    let copy = MemTable::try_new(schema, vec![all]).expect("memtable");
    let name = format!("mem_{table}");
    ctx.deregister_table(name.as_str()).expect("deregister");
    ctx.register_table(name.as_str(), Arc::new(copy))
        .expect("register");
    let sql = |from: &str| format!("SELECT id FROM {from} WHERE {filter}");
    let iceberg = ids(&run(ctx, &sql(&format!("ice.ns.{table}")))
        .await
        .unwrap_or_else(|e| panic!("{filter}: {e}")));
    let unpruned = ids(&run(ctx, &sql(&name))
        .await
        .unwrap_or_else(|e| panic!("{filter}: {e}")));
    assert_eq!(iceberg, unpruned, "{filter}: pruned rows differ");
    iceberg
}

async fn set_zone(lake: &Lake, zone: &str) {
    ok(
        &lake.ctx,
        &format!("SET datafusion.execution.time_zone = '{zone}'"),
    )
    .await;
}

/// A `timestamptz` cast to a string, explicitly or by type coercion, writes the session
/// zone's wall-clock time with its offset (Arrow's form of a zoned timestamp; DuckDB's
/// value, Spark's without the offset); it wrote the UTC time (`…Z`), which it still does
/// with the session in UTC.
#[tokio::test]
async fn timestamptz_cast_to_string_is_the_session_zones_wall_clock() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.t (id INT, tz TIMESTAMPTZ) PARTITIONED BY (day(tz)) \
         TBLPROPERTIES ('write.parquet.row-group-size-bytes'='1')",
    )
    .await;
    for rows in [
        "(1, '2024-02-29T21:30:00Z'), (2, '2024-10-27T00:30:00Z')",
        "(3, '2024-10-27T01:30:00Z'), (4, '2024-03-31T00:59:59Z')",
        "(5, '2024-03-31T01:00:00Z'), (6, '1969-12-31T23:30:00.123456Z'), (7, NULL)",
    ] {
        ok(ctx, &format!("INSERT INTO ice.ns.t VALUES {rows}")).await;
    }
    let paris = [
        "2024-02-29T22:30:00+01:00",
        // 02:30 twice: summer time (+02:00), then winter time (+01:00)
        "2024-10-27T02:30:00+02:00",
        "2024-10-27T02:30:00+01:00",
        // the last second before the gap, and the first after it
        "2024-03-31T01:59:59+01:00",
        "2024-03-31T03:00:00+02:00",
        "1970-01-01T00:30:00.123456+01:00",
        "-",
    ];
    let utc = [
        "2024-02-29T21:30:00Z",
        "2024-10-27T00:30:00Z",
        "2024-10-27T01:30:00Z",
        "2024-03-31T00:59:59Z",
        "2024-03-31T01:00:00Z",
        "1969-12-31T23:30:00.123456Z",
        "-",
    ];
    for (zone, want) in [("Europe/Paris", paris), ("UTC", utc)] {
        set_zone(&lake, zone).await;
        for expr in [
            "CAST(tz AS VARCHAR)",
            "tz::STRING",
            "CAST(tz AS TEXT)",
            "TRY_CAST(tz AS STRING)",
        ] {
            let got = column(&lake, &format!("SELECT {expr} FROM ice.ns.t ORDER BY id")).await;
            assert_eq!(got, want, "{zone} {expr}");
        }
        // implicit casts: `||` and concat (which skips NULL)
        let at: Vec<String> = want
            .iter()
            .map(|w| match *w {
                "-" => "-".to_string(),
                w => format!("at {w}"),
            })
            .collect();
        assert_eq!(
            column(&lake, "SELECT 'at ' || tz FROM ice.ns.t ORDER BY id").await,
            at,
            "{zone} ||"
        );
        let x: Vec<String> = want
            .iter()
            .map(|w| match *w {
                "-" => "x".to_string(),
                w => format!("x{w}"),
            })
            .collect();
        assert_eq!(
            column(&lake, "SELECT concat('x', tz) FROM ice.ns.t ORDER BY id").await,
            x,
            "{zone} concat"
        );
        // over a literal of the column's type
        assert_eq!(
            column(
                &lake,
                "SELECT CAST(arrow_cast('2024-10-27T01:30:00Z', \
                 'Timestamp(Microsecond, Some(\"UTC\"))') AS VARCHAR)"
            )
            .await,
            [want[2]],
            "{zone} literal"
        );
    }

    // filters match the session zone's text, prune no row, and group by it
    set_zone(&lake, "Europe/Paris").await;
    for (filter, want) in [
        ("CAST(tz AS VARCHAR) LIKE '2024-10-27T02:30%'", vec![2, 3]),
        ("CAST(tz AS VARCHAR) LIKE '%+01:00'", vec![1, 3, 4, 6]),
        ("CAST(tz AS VARCHAR) = '2024-03-31T03:00:00+02:00'", vec![5]),
        ("CAST(tz AS VARCHAR) >= '2024-03-31T02'", vec![2, 3, 5]),
        ("tz::STRING LIKE '1970%'", vec![6]),
        ("'at ' || tz LIKE 'at 2024-02-29T22%'", vec![1]),
        ("concat('x', tz) LIKE 'x2024-03-31T01%'", vec![4]),
        ("CAST(tz AS VARCHAR) IS NULL", vec![7]),
    ] {
        assert_eq!(filtered(&lake, "t", filter).await, want, "Paris {filter}");
    }
    assert_eq!(
        column(
            &lake,
            "SELECT count(*) FROM ice.ns.t GROUP BY substr(CAST(tz AS VARCHAR), 1, 16) \
             HAVING count(*) > 1"
        )
        .await,
        ["2"]
    );
    set_zone(&lake, "UTC").await;
    assert_eq!(
        filtered(&lake, "t", "CAST(tz AS VARCHAR) LIKE '2024-10-27T02:30%'").await,
        Vec::<i32>::new()
    );
    assert_eq!(
        filtered(&lake, "t", "CAST(tz AS VARCHAR) LIKE '2024-10-27T01:30%'").await,
        [3]
    );

    // written into a string column: INSERT … SELECT, INSERT … VALUES, UPDATE, MERGE
    ok(ctx, "CREATE TABLE ice.ns.s (id INT, s STRING)").await;
    set_zone(&lake, "Europe/Paris").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.s SELECT id, tz FROM ice.ns.t WHERE id <= 3",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.s VALUES (4, arrow_cast('2024-03-31T00:59:59Z', \
         'Timestamp(Microsecond, Some(\"UTC\"))'))",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.s VALUES (5, 'x'), (6, 'x')").await;
    ok(
        ctx,
        "UPDATE ice.ns.s SET s = arrow_cast('2024-03-31T01:00:00Z', \
         'Timestamp(Microsecond, Some(\"UTC\"))') WHERE id = 5",
    )
    .await;
    ok(
        ctx,
        "MERGE INTO ice.ns.s USING (SELECT id, tz FROM ice.ns.t WHERE id = 6) src \
         ON ice.ns.s.id = src.id WHEN MATCHED THEN UPDATE SET s = src.tz",
    )
    .await;
    set_zone(&lake, "UTC").await;
    let stored = column(&lake, "SELECT s FROM ice.ns.s ORDER BY id").await;
    assert_eq!(stored, paris[..6]);
    if python().is_none() {
        return;
    }
    let (pyi, texts) = pyiceberg_texts(&lake, "ns.s");
    assert_eq!(texts, paris[..6], "{pyi}");
}

/// `date_bin` by whole months (or years) of a `timestamptz` bins the session zone's
/// calendar: each bin starts at the origin's wall-clock time in the session zone (local
/// midnight of the 1st for `TIMESTAMP '2024-01-01 00:00:00'`), that wall-clock time read
/// as java.time reads it (a time shown twice is the earlier instant, a skipped one moves
/// later by the gap). DataFusion binned the UTC calendar, as it still does with the
/// session in UTC; fixed lengths of time keep binning instants from the origin.
#[tokio::test]
async fn month_date_bin_of_timestamptz_bins_the_session_zones_calendar() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.b (id INT, tz TIMESTAMPTZ) PARTITIONED BY (month(tz)) \
         TBLPROPERTIES ('write.parquet.row-group-size-bytes'='1')",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.b VALUES (1, '2024-02-29T23:30:00Z'), (2, '2024-02-29T22:59:59Z'), \
         (3, '2024-10-27T01:45:00Z'), (4, '2024-10-27T00:45:00Z'), (5, '2024-10-27T00:15:00Z'), \
         (6, '2024-03-31T01:45:00Z'), (7, '2024-12-31T23:00:00Z'), (8, '1969-12-31T23:30:00Z'), \
         (9, NULL)",
    )
    .await;
    let bins = |stride: &str, origin: &str| {
        format!("SELECT date_bin(INTERVAL '{stride}', tz{origin}) FROM ice.ns.b ORDER BY id")
    };
    set_zone(&lake, "Europe/Paris").await;
    // Paris wall clocks: 1 2024-03-01 00:30, 2 02-29 23:59:59, 3 10-27 02:45 (CET, the
    // second), 4 02:45 (CEST, the first), 5 02:15 (CEST), 6 03-31 03:45 (CEST), 7 2025-01-01
    // 00:00, 8 1970-01-01 00:30; local midnight of the 1st is 23:00Z the day before in
    // winter, 22:00Z in summer
    let monthly = [
        "2024-02-29T23:00:00Z",
        "2024-01-31T23:00:00Z",
        "2024-09-30T22:00:00Z",
        "2024-09-30T22:00:00Z",
        "2024-09-30T22:00:00Z",
        "2024-02-29T23:00:00Z",
        "2024-12-31T23:00:00Z",
        "1969-12-31T23:00:00Z",
        "-",
    ];
    let origin = ", TIMESTAMP '2024-01-01 00:00:00'";
    assert_eq!(column(&lake, &bins("1 month", origin)).await, monthly);
    // a date and a string origin are wall-clock times too; without one, local 1970-01-01
    assert_eq!(
        column(&lake, &bins("1 month", ", DATE '2024-01-01'")).await,
        monthly
    );
    assert_eq!(
        column(&lake, &bins("1 month", ", '2000-01-01 00:00:00'")).await,
        monthly
    );
    assert_eq!(column(&lake, &bins("1 month", "")).await, monthly);
    // an origin naming its offset: 2023-12-31T23:00:00Z is local midnight of 1 January
    assert_eq!(
        column(&lake, &bins("1 month", ", '2023-12-31T23:00:00Z'")).await,
        monthly
    );
    // quarters and years from January: 1, 2, 6 in Q1 (2024-01-01 00:00 = 2023-12-31T23:00Z)
    assert_eq!(
        column(&lake, &bins("3 months", origin)).await,
        [
            "2023-12-31T23:00:00Z",
            "2023-12-31T23:00:00Z",
            "2024-09-30T22:00:00Z",
            "2024-09-30T22:00:00Z",
            "2024-09-30T22:00:00Z",
            "2023-12-31T23:00:00Z",
            "2024-12-31T23:00:00Z",
            "1969-12-31T23:00:00Z",
            "-",
        ]
    );
    assert_eq!(
        column(&lake, &bins("1 year", origin)).await,
        [
            "2023-12-31T23:00:00Z",
            "2023-12-31T23:00:00Z",
            "2023-12-31T23:00:00Z",
            "2023-12-31T23:00:00Z",
            "2023-12-31T23:00:00Z",
            "2023-12-31T23:00:00Z",
            "2024-12-31T23:00:00Z",
            "1969-12-31T23:00:00Z",
            "-",
        ]
    );
    // bins starting at 02:30 on the 27th: on 2024-10-27 02:30 is shown twice, the bin
    // starts at the first (00:30Z), so 3 (02:45 CET) and 4 (02:45 CEST) are in it and 5
    // (02:15 CEST) in September's (2024-09-27 02:30 CEST = 00:30Z)
    let at_0230 = column(&lake, &bins("1 month", ", TIMESTAMP '2024-01-27 02:30:00'")).await;
    assert_eq!(
        &at_0230[2..5],
        [
            "2024-10-27T00:30:00Z",
            "2024-10-27T00:30:00Z",
            "2024-09-27T00:30:00Z"
        ]
    );
    // bins starting at 02:30 on the 31st: on 2024-03-31 02:30 is skipped, the bin starts an
    // hour later, 03:30 CEST = 01:30Z, and holds 6 (03:45 CEST)
    let at_gap = column(&lake, &bins("1 month", ", TIMESTAMP '2024-01-31 02:30:00'")).await;
    assert_eq!(at_gap[5], "2024-03-31T01:30:00Z");
    // fixed lengths of time: instants from the origin's (2023-12-31T23:00Z), as before
    assert_eq!(
        column(&lake, &bins("1 day", origin)).await[..3],
        [
            "2024-02-29T23:00:00Z",
            "2024-02-28T23:00:00Z",
            "2024-10-26T23:00:00Z"
        ]
    );
    // over a literal
    assert_eq!(
        column(
            &lake,
            "SELECT date_bin(INTERVAL '1 month', arrow_cast('2024-02-29T23:30:00Z', \
             'Timestamp(Microsecond, Some(\"UTC\"))'), TIMESTAMP '2024-01-01 00:00:00')"
        )
        .await,
        ["2024-02-29T23:00:00Z"]
    );
    // filters: the same rows as unpruned
    for (filter, want) in [
        (
            "date_bin(INTERVAL '1 month', tz, TIMESTAMP '2024-01-01 00:00:00') \
             = TIMESTAMP '2024-03-01 00:00:00'",
            vec![1, 6],
        ),
        (
            "date_bin(INTERVAL '1 month', tz) = TIMESTAMP '2024-10-01 00:00:00'",
            vec![3, 4, 5],
        ),
        (
            "date_bin(INTERVAL '1 year', tz, TIMESTAMP '2024-01-01 00:00:00') \
             >= TIMESTAMP '2024-01-01 00:00:00'",
            vec![1, 2, 3, 4, 5, 6, 7],
        ),
        (
            "date_bin(INTERVAL '1 month', tz, TIMESTAMP '2024-01-27 02:30:00') \
             = TIMESTAMP '2024-10-27 02:30:00'",
            vec![3, 4],
        ),
    ] {
        assert_eq!(filtered(&lake, "b", filter).await, want, "Paris {filter}");
    }

    // UTC: the UTC calendar, as before
    set_zone(&lake, "UTC").await;
    assert_eq!(
        column(&lake, &bins("1 month", origin)).await,
        [
            "2024-02-01T00:00:00Z",
            "2024-02-01T00:00:00Z",
            "2024-10-01T00:00:00Z",
            "2024-10-01T00:00:00Z",
            "2024-10-01T00:00:00Z",
            "2024-03-01T00:00:00Z",
            "2024-12-01T00:00:00Z",
            "1969-12-01T00:00:00Z",
            "-",
        ]
    );
    assert_eq!(
        filtered(
            &lake,
            "b",
            "date_bin(INTERVAL '1 month', tz) = TIMESTAMP '2024-02-01 00:00:00'"
        )
        .await,
        [1, 2]
    );
}

/// A string naming its offset cast to a zone-less timestamp (`CAST(s AS TIMESTAMP)`,
/// `TIMESTAMP '…'`, compared with or written into a `timestamp` column) is its instant's
/// wall-clock time in the session zone, as a `timestamptz` cast to `TIMESTAMP` is:
/// `'2024-01-01 10:00:00+05:00'` is 06:00 in Paris, 05:00 in UTC (DuckDB's answer). It was
/// the UTC wall clock in any zone. A string without an offset is unchanged.
#[tokio::test]
async fn strings_naming_their_offset_cast_to_timestamp_are_the_session_zones_wall_clock() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.src (id INT, s STRING)").await;
    ok(
        ctx,
        "CREATE TABLE ice.ns.w (id INT, ts TIMESTAMP) PARTITIONED BY (day(ts)) \
         TBLPROPERTIES ('write.parquet.row-group-size-bytes'='1')",
    )
    .await;
    let strings = [
        "2024-01-01 10:00:00+05:00",
        // 01:30Z is the second 02:30 of Paris's 27 October
        "2024-10-27T01:30:00Z",
        // 01:30Z is 03:30 CEST, just after Paris's skipped hour
        "2024-03-31 01:30:00+00:00",
        // no offset: the time written, also in the skipped hour
        "2024-03-31 02:30:00",
        "2024-01-01T10:00:00.123456-08:00",
    ];
    let values: Vec<String> = strings
        .iter()
        .enumerate()
        .map(|(i, s)| format!("({}, '{s}')", i + 1))
        .collect();
    ok(
        ctx,
        &format!(
            "INSERT INTO ice.ns.src VALUES {}, (6, NULL)",
            values.join(", ")
        ),
    )
    .await;
    let paris = [
        "2024-01-01T06:00:00",
        "2024-10-27T02:30:00",
        "2024-03-31T03:30:00",
        "2024-03-31T02:30:00",
        "2024-01-01T19:00:00.123456",
        "-",
    ];
    let utc = [
        "2024-01-01T05:00:00",
        "2024-10-27T01:30:00",
        "2024-03-31T01:30:00",
        "2024-03-31T02:30:00",
        "2024-01-01T18:00:00.123456",
        "-",
    ];
    for (zone, want) in [("Europe/Paris", paris), ("UTC", utc)] {
        set_zone(&lake, zone).await;
        for expr in [
            "CAST(s AS TIMESTAMP)",
            "s::TIMESTAMP_NTZ",
            "TRY_CAST(s AS TIMESTAMP)",
        ] {
            assert_eq!(
                column(&lake, &format!("SELECT {expr} FROM ice.ns.src ORDER BY id")).await,
                want,
                "{zone} {expr}"
            );
        }
        for (i, s) in strings.iter().enumerate() {
            for literal in [
                format!("CAST('{s}' AS TIMESTAMP)"),
                format!("TIMESTAMP '{s}'"),
            ] {
                assert_eq!(
                    column(&lake, &format!("SELECT {literal}")).await,
                    [want[i]],
                    "{zone} {literal}"
                );
            }
        }
        assert_eq!(
            column(&lake, "SELECT TRY_CAST('no time' AS TIMESTAMP)").await,
            ["-"]
        );
    }
    assert!(run(
        ctx,
        "SELECT CAST(s || 'x' AS TIMESTAMP) FROM ice.ns.src WHERE id = 1"
    )
    .await
    .is_err());

    // written into a `timestamp` column: INSERT … SELECT, INSERT … VALUES, UPDATE, MERGE
    set_zone(&lake, "Europe/Paris").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.w SELECT id, s FROM ice.ns.src WHERE id <= 2",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.w VALUES (3, '2024-03-31 01:30:00+00:00'), (4, NULL), (5, NULL)",
    )
    .await;
    ok(
        ctx,
        "UPDATE ice.ns.w SET ts = '2024-03-31 02:30:00' WHERE id = 4",
    )
    .await;
    ok(
        ctx,
        "MERGE INTO ice.ns.w USING (SELECT id, s FROM ice.ns.src WHERE id = 5) src \
         ON ice.ns.w.id = src.id WHEN MATCHED THEN UPDATE SET ts = src.s",
    )
    .await;
    // filters compare in the session zone's wall clock and prune no row
    for (filter, want) in [
        ("ts = '2024-01-01 10:00:00+05:00'", vec![1]),
        ("ts = TIMESTAMP '2024-10-27T01:30:00Z'", vec![2]),
        ("ts = CAST('2024-03-31 01:30:00Z' AS TIMESTAMP)", vec![3]),
        ("ts < '2024-03-31 03:00:00+02:00'", vec![1, 4, 5]),
        (
            "ts IN ('2024-01-01 06:00:00', '2024-03-31 02:30:00')",
            vec![1, 4],
        ),
    ] {
        assert_eq!(filtered(&lake, "w", filter).await, want, "Paris {filter}");
    }
    set_zone(&lake, "UTC").await;
    assert_eq!(
        filtered(&lake, "w", "ts = '2024-01-01 11:00:00+05:00'").await,
        [1]
    );
    let stored = column(&lake, "SELECT ts FROM ice.ns.w ORDER BY id").await;
    assert_eq!(stored, paris[..5]);
    if python().is_none() {
        return;
    }
    let (pyi, texts) = pyiceberg_texts(&lake, "ns.w");
    assert_eq!(
        texts,
        [
            "2024-01-01T06:00:00.000000",
            "2024-10-27T02:30:00.000000",
            "2024-03-31T03:30:00.000000",
            "2024-03-31T02:30:00.000000",
            "2024-01-01T19:00:00.123456",
        ],
        "{pyi}"
    );
}

/// A zone-less timestamp (constant or column) or a date cast to `TIMESTAMPTZ` is read as
/// the session zone's wall-clock time as java.time resolves it for Spark (DuckDB answers
/// the same): a time the clock skips moves later by the gap, one it shows twice is the
/// earlier instant. Arrow's cast failed on both with "Cannot cast timezone to different
/// timezone". Instants (`to_unixtime`, seconds) worked out by hand (see the module docs;
/// Havana's clocks went 00:00 -> 01:00 (-05:00 -> -04:00) on 10 March 2024, so that
/// midnight is 05:00Z) and checked with Python's zoneinfo.
#[tokio::test]
async fn zone_less_timestamps_and_dates_cast_to_timestamptz_resolve_skipped_and_repeated_times() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    set_zone(&lake, "Europe/Paris").await;
    // 2024-03-31T01:30Z (03:30+02:00), 2024-10-27T00:30Z (the first 02:30),
    // 2024-07-01T10:00Z (12:00+02:00, no transition)
    let expected = ["1711848600", "1729989000", "1719828000"];
    let times = [
        "2024-03-31 02:30:00",
        "2024-10-27 02:30:00",
        "2024-07-01 12:00:00",
    ];
    for (time, want) in times.iter().zip(expected) {
        for cast in ["CAST", "TRY_CAST"] {
            let sql = format!("SELECT to_unixtime({cast}(TIMESTAMP '{time}' AS TIMESTAMPTZ))");
            assert_eq!(column(&lake, &sql).await, [want], "{sql}");
        }
    }
    ok(ctx, "CREATE TABLE ice.ns.naive (id INT, ts TIMESTAMP)").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.naive VALUES (1, TIMESTAMP '2024-03-31 02:30:00'), \
         (2, TIMESTAMP '2024-10-27 02:30:00'), (3, TIMESTAMP '2024-07-01 12:00:00'), (4, NULL)",
    )
    .await;
    assert_eq!(
        column(
            &lake,
            "SELECT to_unixtime(CAST(ts AS TIMESTAMPTZ)) FROM ice.ns.naive ORDER BY id"
        )
        .await,
        [expected[0], expected[1], expected[2], "-"]
    );
    // inside a list too (it failed as the top-level cast did)
    assert_eq!(
        column(
            &lake,
            "SELECT to_unixtime(CAST([TIMESTAMP '2024-03-31 02:30:00', NULL] AS \
             ARRAY<TIMESTAMPTZ>)[1])"
        )
        .await,
        [expected[0]]
    );
    // a date out of the nanosecond range: an error (as in UTC), NULL for TRY_CAST; the
    // rewrite first gave NULL for a plain CAST, and wrote it (a tester's)
    ok(ctx, "CREATE TABLE ice.ns.far (id INT, d DATE)").await;
    ok(ctx, "INSERT INTO ice.ns.far VALUES (1, DATE '1500-06-01')").await;
    let e = run(ctx, "SELECT CAST(d AS TIMESTAMPTZ) FROM ice.ns.far")
        .await
        .expect_err("out of range");
    assert!(e.contains("Overflow"), "{e}");
    assert_eq!(
        column(&lake, "SELECT TRY_CAST(d AS TIMESTAMPTZ) FROM ice.ns.far").await,
        ["-"]
    );
    set_zone(&lake, "America/Havana").await;
    assert_eq!(
        column(
            &lake,
            "SELECT to_unixtime(CAST(DATE '2024-03-10' AS TIMESTAMPTZ))"
        )
        .await,
        ["1710046800"]
    );
}

/// PyIceberg's read of `table` (`ns.t`) in `lake`, and its second column's texts in the
/// order of the first (an id).
fn pyiceberg_texts(lake: &Lake, table: &str) -> (serde_json::Value, Vec<String>) {
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, table);
    let mut rows: Vec<(i64, String)> = pyi["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r[0].as_i64().expect("id"),
                r[1].as_str().expect("text").to_string(),
            )
        })
        .collect();
    rows.sort();
    let texts = rows.into_iter().map(|(_, s)| s).collect();
    (pyi, texts)
}
