//! Spark's functions that DataFusion lacks, from the `datafusion-spark` crate, over an
//! Iceberg table: Spark's values (worked out by hand from the calendar, the CRC-32 and
//! SHA-256 of `abc` from their standards' test vectors), integer literals taken as
//! Spark's `INT`, a `timestamptz` argument taken as the session zone's date, and a
//! session's own function of the same name kept.

use std::sync::Arc;

use crate::dml::{lake, ok, run, Lake};

async fn table(lake: &Lake) {
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.g (id INT, d DATE, tz TIMESTAMPTZ, n INT, s STRING)",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.g VALUES \
         (1, DATE '2024-01-31', TIMESTAMPTZ '2024-01-31T23:30:00Z', 2, 'abc'), \
         (2, DATE '2023-02-28', TIMESTAMPTZ '2024-02-29T12:00:00Z', -1, 'b'), \
         (3, NULL, NULL, NULL, NULL)",
    )
    .await;
}

/// The rows of `sql` as `|`-joined cells, in order (the header row left out).
async fn cells(lake: &Lake, sql: &str) -> Vec<String> {
    ok(&lake.ctx, sql)
        .await
        .lines()
        .skip(3)
        .filter(|l| l.starts_with("| "))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// `date_add`, `date_sub`, `datediff`, `add_months`, `last_day` and `next_day` of a
/// `DATE` column with literal and column day counts: Spark 3's values (2024-01-31 is a
/// Wednesday, 2023-02-28 a Tuesday; `add_months` keeps the day unless the month is
/// shorter), NULL for NULL, the same in any session zone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn date_functions_of_dates_are_sparks() {
    let lake = lake().await;
    table(&lake).await;
    let query = "SELECT id, date_add(d, 1), date_add(d, n), dateadd(d, 1), date_sub(d, 1), \
                 datediff(d, DATE '2023-12-25'), add_months(d, 1), last_day(d), \
                 next_day(d, 'Mon') FROM ice.ns.g ORDER BY id";
    for zone in ["UTC", "Asia/Tokyo"] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        assert_eq!(
            cells(&lake, query).await,
            [
                "1|2024-02-01|2024-02-02|2024-02-01|2024-01-30|37|2024-02-29|2024-01-31|2024-02-05",
                "2|2023-03-01|2023-02-27|2023-03-01|2023-02-27|-300|2023-03-28|2023-02-28|2023-03-06",
                "3||||||||",
            ],
            "{zone}"
        );
    }
}

/// A `timestamptz` or string argument of a function that takes a `DATE` is cast to one
/// as Spark casts it: the session zone's date of the instant (2024-01-31T23:30Z is
/// 2024-02-01 in Tokyo, 2024-01-31 in UTC and New York), the date a string writes; and
/// a filter on such a call keeps exactly the rows whose value matches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamptz_arguments_are_the_session_zones_dates() {
    let lake = lake().await;
    table(&lake).await;
    let query = "SELECT id, date_add(tz, 1), last_day(tz), datediff(tz, DATE '2024-01-31'), \
                 next_day(tz, 'FRI'), date_add('2024-02-28', 1) FROM ice.ns.g ORDER BY id";
    for (zone, expected) in [
        (
            "UTC",
            [
                "1|2024-02-01|2024-01-31|0|2024-02-02|2024-02-29",
                "2|2024-03-01|2024-02-29|29|2024-03-01|2024-02-29",
            ],
        ),
        (
            "Asia/Tokyo",
            [
                "1|2024-02-02|2024-02-29|1|2024-02-02|2024-02-29",
                "2|2024-03-01|2024-02-29|29|2024-03-01|2024-02-29",
            ],
        ),
        (
            "America/New_York",
            [
                "1|2024-02-01|2024-01-31|0|2024-02-02|2024-02-29",
                "2|2024-03-01|2024-02-29|29|2024-03-01|2024-02-29",
            ],
        ),
    ] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.time_zone = '{zone}'"),
        )
        .await;
        let rows = cells(&lake, query).await;
        assert_eq!(rows[..2], expected, "{zone}");
        assert_eq!(rows[2], "3|||||2024-02-29", "{zone}");
        let ids = cells(
            &lake,
            "SELECT id FROM ice.ns.g WHERE date_add(tz, 1) = DATE '2024-02-02' ORDER BY id",
        )
        .await;
        let want: &[&str] = if zone == "Asia/Tokyo" { &["1"] } else { &[] };
        assert_eq!(ids, want, "{zone}");
    }
}

/// Functions of other kinds: `if`, `size`, `pmod`, `sha2`, `crc32`, `hex`, and the
/// aggregates `collect_list` / `collect_set` (NULLs left out, as in Spark).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_spark_functions_give_sparks_values() {
    let lake = lake().await;
    table(&lake).await;
    assert_eq!(
        cells(
            &lake,
            "SELECT id, if(n > 0, 'pos', 'neg'), size(make_array(1, 2, 3)), pmod(-7, 3), \
             sha2(s, 256), crc32(s), hex(255) FROM ice.ns.g WHERE id = 1",
        )
        .await,
        ["1|pos|3|2|ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad|891568578|FF"]
    );
    assert_eq!(
        cells(
            &lake,
            "SELECT array_sort(collect_list(s)), size(collect_set(n)) FROM ice.ns.g",
        )
        .await,
        ["[abc, b]|2"]
    );
}

/// A day count that no `INT` holds is an error naming it (Spark: a `BIGINT` literal,
/// which `date_add` refuses); an argument of no type the function takes is a planning
/// error naming the function and the forms it takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_spark_refuses_are_errors() {
    let lake = lake().await;
    table(&lake).await;
    let e = run(&lake.ctx, "SELECT date_add(d, 3000000000) FROM ice.ns.g")
        .await
        .expect_err("out of INT's range");
    assert!(e.contains("3000000000"), "{e}");
    let e = run(&lake.ctx, "SELECT date_add(d, 1.5) FROM ice.ns.g")
        .await
        .expect_err("a fraction");
    assert!(
        e.contains("date_add(Date32, Decimal128(2, 1))") && e.contains("date_add(Date32, Int32)"),
        "{e}"
    );
}

/// A session's own function named as one of `datafusion-spark`'s stays the session's,
/// and DataFusion's own functions of Spark's names (`concat`) keep DataFusion's meaning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_own_function_of_the_name_is_kept() {
    use datafusion::arrow::datatypes::DataType;
    use datafusion::logical_expr::{create_udf, ColumnarValue, Volatility};
    use datafusion::prelude::SessionContext;
    let ctx = SessionContext::new();
    let own = create_udf(
        "date_add",
        vec![DataType::Int64, DataType::Int64],
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
        .sql("SELECT date_add(1, 2) a, date_sub(DATE '2024-03-01', 1) b, concat('x', NULL) c")
        .await
        .expect("plan")
        .collect()
        .await
        .expect("run");
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .expect("format")
        .to_string();
    assert!(text.contains("| mine | 2024-02-29 | x |"), "{text}");
}

/// On datafusion-distributed workers, the `datafusion-spark` functions (a scalar one over
/// a `timestamptz` in Tokyo, an aggregate) answer what one node answers, and the values
/// by hand (as in [`timestamptz_arguments_are_the_session_zones_dates`]).
#[cfg(feature = "distributed")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spark_functions_run_on_distributed_workers() {
    use datafusion::prelude::SessionConfig;
    let lake = lake().await;
    table(&lake).await;
    let distributed = icefloe::datafusion::distributed::in_process_session(
        3,
        SessionConfig::new().with_target_partitions(2),
        1,
    )
    .expect("distributed session");
    crate::catalog::attach(&distributed, "ice", Arc::clone(&lake.catalog)).await;
    for ctx in [&distributed, &lake.ctx] {
        ok(ctx, "SET datafusion.execution.time_zone = 'Asia/Tokyo'").await;
        let text = ok(
            ctx,
            "SELECT id, date_add(tz, 1) a, last_day(tz) l, crc32(s) c FROM ice.ns.g \
             WHERE datediff(tz, DATE '2024-01-31') >= 1 ORDER BY id",
        )
        .await;
        for row in [
            "| 1  | 2024-02-02 | 2024-02-29 | 891568578  |",
            "| 2  | 2024-03-01 | 2024-02-29 | 1908338681 |",
        ] {
            assert!(text.contains(row), "{text}");
        }
        let text = ok(
            ctx,
            "SELECT array_sort(collect_list(s)) l FROM ice.ns.g WHERE id > 0",
        )
        .await;
        assert!(text.contains("[abc, b]"), "{text}");
    }
}
