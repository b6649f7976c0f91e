//! `min`/`max` on Iceberg tables where DataFusion 55's got them wrong
//! (`src/datafusion/min_max.rs`): its name-based optimizations over exact per-file
//! statistics (icefloe turns both off where it puts in its `min`/`max`), its order of
//! structs and lists, its types (a `uuid`, a list's element field id), `DISTINCT` over
//! `-0.0`, and maps. And the other functions that return a nested column's values
//! (`first_value`, `last_value`, `any_value`, `array_agg … ORDER BY`, `lag`, `lead`,
//! `nth_value`, `greatest`), which failed on the nested field ids of a scan's types.

use datafusion::arrow::util::display::FormatOptions;
use datafusion::arrow::util::pretty::pretty_format_batches_with_options;
use datafusion::prelude::SessionContext;

use icefloe::catalog::TableIdent;

use crate::dml::{lake, ok, run, session_over, Lake};

/// `ns.<name>` (a, b, x, pad) in three files: the true minima in a one-row file, a file
/// of 200 rows, and a large file where `a` and `x` are all NULL, so that a scan partition
/// may read the NULLs first.
async fn null_file_last(lake: &Lake, name: &str) {
    ok(
        &lake.ctx,
        &format!("CREATE TABLE ice.ns.{name} (a INT, b INT, x INT, pad STRING)"),
    )
    .await;
    for insert in [
        "VALUES (1, 9, 1, 'x')".to_string(),
        "SELECT 10, 1, 2, repeat('y', 50) || CAST(value AS VARCHAR) FROM generate_series(1, 200)"
            .to_string(),
        "SELECT NULL AS a, 5 AS b, NULL AS x, repeat('z', 100) || CAST(value AS VARCHAR) \
         FROM generate_series(1, 1000)"
            .to_string(),
    ] {
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.{name} {insert}")).await;
    }
}

/// What `q` answers, NULLs at any depth printed `NULL` (`[NULL]`, not `[]`).
async fn shown(ctx: &SessionContext, q: &str) -> String {
    let batches = run(ctx, q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    let options = FormatOptions::default().with_null("NULL");
    pretty_format_batches_with_options(&batches, &options)
        .expect("format")
        .to_string()
}

/// `text` without spaces.
fn squeezed(text: &str) -> String {
    text.replace(' ', "")
}

async fn session(lake: &Lake, partitions: usize, deferred: bool) -> SessionContext {
    let ctx = session_over(lake).await;
    ok(
        &ctx,
        &format!("SET datafusion.execution.target_partitions = {partitions}"),
    )
    .await;
    if deferred {
        ok(&ctx, "SET icefloe.deferred_planning_min_files = 1").await;
    }
    ctx
}

/// An ungrouped `min`/`max` reads every file that may hold the answer: DataFusion's
/// dynamic filter left out an aggregate whose bound was still NULL (`a < 1 OR b < 5`
/// became `b < 5`) and pruned the file holding `min(a)`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ungrouped_min_max_read_every_file_that_may_answer() {
    let lake = lake().await;
    null_file_last(&lake, "ab").await;
    for partitions in [1, 2, 4] {
        for deferred in [false, true] {
            let ctx = session(&lake, partitions, deferred).await;
            // repeated: which partition reads which file first varies between runs
            for _ in 0..4 {
                let got = ok(&ctx, "SELECT min(a) AS a, min(b) AS b FROM ice.ns.ab").await;
                assert!(got.contains("| 1 | 1 |"), "{partitions} {deferred}: {got}");
                let got = ok(&ctx, "SELECT min(x) AS lo, max(x) AS hi FROM ice.ns.ab").await;
                assert!(
                    got.contains("| 1  | 2  |"),
                    "{partitions} {deferred}: {got}"
                );
            }
        }
    }
}

/// `GROUP BY … ORDER BY max(x) DESC LIMIT n` and `ORDER BY min(x) LIMIT n` over NaN give
/// the groups and values of the full aggregate, sorted: DataFusion's TopK over groups
/// compared NaN by IEEE rules, evicted the better group and lost its earlier values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_groups_by_min_or_max_over_nan_are_the_sorted_aggregate() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.g (g INT, x DOUBLE)").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.g VALUES (1, -1.0::double), (2, 'NaN'::double), (1, 5.0::double), \
         (3, 2.0::double)",
    )
    .await;
    for partitions in [1, 2] {
        let ctx = session(&lake, partitions, false).await;
        for (sql, expected) in [
            (
                "SELECT g, min(x) AS m FROM ice.ns.g GROUP BY g ORDER BY min(x) LIMIT 1",
                "|1|-1.0|",
            ),
            (
                "SELECT g, max(x) AS m FROM ice.ns.g GROUP BY g ORDER BY max(x) DESC LIMIT 1",
                "|2|NaN|",
            ),
            (
                "SELECT g, min(x) AS m FROM ice.ns.g GROUP BY g ORDER BY min(x) LIMIT 2",
                "|1|-1.0|\n|3|2.0|",
            ),
        ] {
            let got = ok(&ctx, sql).await;
            assert!(
                squeezed(&got).contains(expected),
                "{partitions}: {sql}: {got}"
            );
        }
    }
}

/// `max`/`min` of a struct with a NULL field, over an Iceberg table written in several
/// files: NULL fields first (Spark's order), whatever the scan's partitions, grouped or
/// not, in windows. DataFusion's struct comparison kept whichever struct came first once
/// a field was NULL (both answers were `{a: NULL, b: 1}` when that row came first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn struct_min_max_put_a_null_field_first_whatever_the_files_order() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.s (g INT, i INT, s STRUCT<a: INT, b: INT>)",
    )
    .await;
    for values in [
        "(1, 1, named_struct('a', CAST(NULL AS INT), 'b', 1))",
        "(1, 2, named_struct('a', 2, 'b', 1)), (1, 3, named_struct('a', 1, 'b', 1))",
        "(1, 4, CAST(NULL AS STRUCT<a INT, b INT>)), (2, 5, named_struct('a', 1, 'b', 7))",
        "(2, 6, named_struct('a', CAST(NULL AS INT), 'b', 9)), (2, 7, named_struct('a', 1, 'b', 2))",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.s VALUES {values}")).await;
    }
    for partitions in [1, 2, 4] {
        let ctx = session(&lake, partitions, false).await;
        // repeated: which partition reads which file first varies between runs
        for _ in 0..3 {
            let got = shown(&ctx, "SELECT max(s) AS mx, min(s) AS mn FROM ice.ns.s").await;
            assert!(
                squeezed(&got).contains("|{a:2,b:1}|{a:NULL,b:1}|"),
                "{partitions}: {got}"
            );
            let got = shown(
                &ctx,
                "SELECT g, max(s) AS mx, min(s) AS mn FROM ice.ns.s GROUP BY g ORDER BY g",
            )
            .await;
            assert!(
                squeezed(&got).contains("|1|{a:2,b:1}|{a:NULL,b:1}|\n|2|{a:1,b:7}|{a:NULL,b:9}|"),
                "{partitions}: {got}"
            );
            let got = shown(
                &ctx,
                "SELECT i, max(s) OVER (PARTITION BY g) AS mx, min(s) OVER (ORDER BY i ROWS \
                 BETWEEN 1 PRECEDING AND CURRENT ROW) AS mn FROM ice.ns.s ORDER BY i",
            )
            .await;
            let expected = [
                "|1|{a:2,b:1}|{a:NULL,b:1}|",
                "|2|{a:2,b:1}|{a:NULL,b:1}|",
                "|3|{a:2,b:1}|{a:1,b:1}|",
                "|4|{a:2,b:1}|{a:1,b:1}|",
                "|5|{a:1,b:7}|{a:1,b:7}|",
                "|6|{a:1,b:7}|{a:NULL,b:9}|",
                "|7|{a:1,b:7}|{a:NULL,b:9}|",
            ]
            .join("\n");
            assert!(squeezed(&got).contains(&expected), "{partitions}: {got}");
        }
    }
}

/// `min`/`max` of the list columns of an Iceberg table (lists of ints, doubles and
/// structs, a list in a struct), ungrouped, grouped and in windows: the list's element
/// field carries its field id, which DataFusion's list scalars dropped ("column types
/// must match schema types … PARQUET:field_id"). Lists compare element by element, NULL
/// elements first, a prefix below the longer list; NaN above every number.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_min_max_of_an_iceberg_table_ungrouped_grouped_and_windowed() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.l (g INT, li ARRAY<INT>, lf ARRAY<DOUBLE>, \
         ls ARRAY<STRUCT<x: INT, y: DOUBLE>>, sl STRUCT<xs: ARRAY<INT>>)",
    )
    .await;
    for values in [
        "(1, [1, 2], [1.5::double], [named_struct('x', 1, 'y', 1.5::double)], \
         named_struct('xs', [1, 2]))",
        "(1, [0], ['NaN'::double], [named_struct('x', 1, 'y', 'NaN'::double)], \
         named_struct('xs', [1]))",
        "(2, [NULL], [-1.0::double], [named_struct('x', CAST(NULL AS INT), 'y', 9.0::double)], \
         named_struct('xs', [CAST(NULL AS INT), 5]))",
        "(2, [3], [-1.0::double, 0.5::double], [named_struct('x', 0, 'y', 1.0::double)], \
         named_struct('xs', CAST([] AS INT[])))",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.l VALUES {values}")).await;
    }
    for partitions in [1, 2, 4] {
        let ctx = session(&lake, partitions, false).await;
        let got = shown(
            &ctx,
            "SELECT min(li) AS a, max(li) AS b, min(lf) AS c, max(lf) AS d, min(ls) AS e, \
             max(ls) AS f, min(sl) AS g, max(sl) AS h FROM ice.ns.l",
        )
        .await;
        assert!(
            squeezed(&got).contains(
                "|[NULL]|[3]|[-1.0]|[NaN]|[{x:NULL,y:9.0}]|[{x:1,y:NaN}]|{xs:[]}|{xs:[1,2]}|"
            ),
            "{partitions}: {got}"
        );
        let got = shown(
            &ctx,
            "SELECT g, min(li) AS a, max(li) AS b, min(lf) AS c, max(lf) AS d, max(ls) AS f, \
             min(sl) AS g2 FROM ice.ns.l GROUP BY g ORDER BY g",
        )
        .await;
        assert!(
            squeezed(&got).contains(
                "|1|[0]|[1,2]|[1.5]|[NaN]|[{x:1,y:NaN}]|{xs:[1]}|\n\
                 |2|[NULL]|[3]|[-1.0]|[-1.0,0.5]|[{x:0,y:1.0}]|{xs:[]}|"
            ),
            "{partitions}: {got}"
        );
        let got = shown(
            &ctx,
            "SELECT g, max(li) OVER (PARTITION BY g) AS a, min(lf) OVER (PARTITION BY g ORDER BY \
             lf ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS b FROM ice.ns.l ORDER BY g, b",
        )
        .await;
        assert!(
            squeezed(&got)
                .contains("|1|[1,2]|[1.5]|\n|1|[1,2]|[NaN]|\n|2|[3]|[-1.0]|\n|2|[3]|[-1.0,0.5]|"),
            "{partitions}: {got}"
        );
    }
}

/// `min`/`max` of a `uuid` column are uuids: tagged `arrow.uuid` (printed 8-4-4-4-12 by
/// the CLI), and a table made from them has a `uuid` column. DataFusion's field of the
/// result had no metadata: the CLI printed 32 hex digits, CTAS made a `fixed[16]` column
/// and `SHOW CREATE TABLE` of it failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uuid_min_max_stay_uuids() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.u (g INT, u UUID)").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.u VALUES (1, '123e4567-e89b-12d3-a456-426614174000'), \
         (1, 'ffffffff-ffff-ffff-ffff-ffffffffffff'), (2, NULL)",
    )
    .await;
    for sql in [
        "SELECT max(u) AS hi, min(u) AS lo FROM ice.ns.u",
        "SELECT g, max(u) AS hi, min(u) AS lo FROM ice.ns.u GROUP BY g",
        "SELECT max(u) OVER (PARTITION BY g) AS hi, min(u) OVER (ORDER BY g ROWS BETWEEN \
         1 PRECEDING AND CURRENT ROW) AS lo FROM ice.ns.u",
    ] {
        let batches = run(&lake.ctx, sql).await.expect(sql);
        let schema = batches[0].schema();
        for name in ["hi", "lo"] {
            let field = schema.field_with_name(name).expect(name);
            assert!(
                icefloe::spec::arrow::is_uuid_field(field),
                "{sql}: {name}: {field:?}"
            );
        }
    }
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.c AS SELECT g, max(u) AS m FROM ice.ns.u GROUP BY g",
    )
    .await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.c"))
        .await
        .expect("load");
    let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema");
    let m = &schema["fields"][1];
    assert_eq!(
        (m["name"].as_str(), m["type"].as_str()),
        (Some("m"), Some("uuid")),
        "{schema}"
    );
    let shown = ok(&lake.ctx, "SHOW CREATE TABLE ice.ns.c").await;
    assert!(shown.contains("m UUID"), "{shown}");
    let got = ok(
        &lake.ctx,
        "SELECT max(m) = min(m) AS one FROM ice.ns.c WHERE g = 1",
    )
    .await;
    assert!(got.contains("| true |"), "{got}");

    // the CLI prints them as it prints the column
    let out = crate::cli::run(&[
        "--catalog",
        &format!("sqlite:{}", lake.db.display()),
        "--format",
        "csv",
        "-c",
        "SELECT g, max(u) AS hi, min(u) AS lo FROM ns.u GROUP BY g ORDER BY g",
    ]);
    crate::cli::assert_success(&out);
    assert_eq!(
        crate::cli::stdout(&out),
        "g,hi,lo\n1,ffffffff-ffff-ffff-ffff-ffffffffffff,123e4567-e89b-12d3-a456-426614174000\n2,,\n"
    );
}

/// `min(DISTINCT x)` is `min(x)`, as Spark's optimizer makes it: `-0.0` below `0.0`,
/// grouped or not, whichever file holds which. DataFusion's plan of `DISTINCT` grouped by
/// the value first, where `-0.0` and `0.0` are one value, and answered `0.0` (grouped) or
/// `-0.0` (ungrouped, on an Iceberg table).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_distinct_is_min_with_negative_zero() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.z (g INT, d DOUBLE)").await;
    for values in [
        "(1, CAST('0.0' AS DOUBLE)), (2, CAST('-0.0' AS DOUBLE))",
        "(1, CAST('-0.0' AS DOUBLE)), (2, CAST('0.0' AS DOUBLE)), (2, CAST(3 AS DOUBLE))",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.z VALUES {values}")).await;
    }
    for partitions in [1, 2, 4] {
        let ctx = session(&lake, partitions, false).await;
        let got = ok(
            &ctx,
            "SELECT min(d) AS a, min(DISTINCT d) AS b, max(DISTINCT d) AS c FROM ice.ns.z",
        )
        .await;
        assert!(
            squeezed(&got).contains("|-0.0|-0.0|3.0|"),
            "{partitions}: {got}"
        );
        let got = ok(
            &ctx,
            "SELECT g, min(d) AS a, min(DISTINCT d) AS b, max(DISTINCT d) AS c FROM ice.ns.z \
             GROUP BY g ORDER BY g",
        )
        .await;
        assert!(
            squeezed(&got).contains("|1|-0.0|-0.0|0.0|\n|2|-0.0|-0.0|3.0|"),
            "{partitions}: {got}"
        );
    }
}

/// An identity-partitioned double holding `-0.0` and `0.0` (a file each): `min` is
/// `-0.0` in every run. DataFusion's dynamic filter of an ungrouped `min` (`d < 0.0` once
/// a partition had seen `0.0`) pruned the `-0.0` file in some runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_of_negative_and_positive_zero_partitions_is_negative_zero() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.p (k INT, d DOUBLE) PARTITIONED BY (d)",
    )
    .await;
    for values in [
        "(1, CAST('-0.0' AS DOUBLE)), (2, CAST('0.0' AS DOUBLE))",
        "(3, CAST('NaN' AS DOUBLE)), (5, CAST(1.5 AS DOUBLE))",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.p VALUES {values}")).await;
    }
    for partitions in [1, 2, 4] {
        for deferred in [false, true] {
            let ctx = session(&lake, partitions, deferred).await;
            for _ in 0..4 {
                let got = ok(&ctx, "SELECT min(d) AS lo, max(d) AS hi FROM ice.ns.p").await;
                assert!(
                    squeezed(&got).contains("|-0.0|NaN|"),
                    "{partitions} {deferred}: {got}"
                );
            }
        }
    }
}

/// `min`/`max` of a map, or of a list or struct holding one, is refused when planning,
/// naming the argument: maps have no order (Spark refuses them too). DataFusion's
/// accumulator failed while running with "Internal error … please file a bug report".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn min_max_of_a_map_is_a_planning_error() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.m (m MAP<STRING, INT>, lm ARRAY<MAP<STRING, INT>>)",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.m VALUES (MAP(['x'], [1]), [MAP(['y'], [2])])",
    )
    .await;
    for (sql, call) in [
        ("SELECT min(m) FROM ice.ns.m", "min(m)"),
        ("SELECT max(lm) FROM ice.ns.m", "max(lm)"),
        ("SELECT max(m) OVER () FROM ice.ns.m", "max(m)"),
    ] {
        let err = run(&lake.ctx, sql).await.expect_err(sql);
        assert!(
            err.contains(&format!(
                "Error during planning: {call}: a map has no order"
            )),
            "{sql}: {err}"
        );
    }
    // a map's values have an order
    let got = ok(
        &lake.ctx,
        "SELECT max(m['x']) AS x, min(map_values(m)) AS v FROM ice.ns.m",
    )
    .await;
    assert!(squeezed(&got).contains("|1|[1]|"), "{got}");
}

/// `ns.nt` (id, l, s, m, ls) in two files and `ns.nu` (pad, pad2, id, l, s): the same
/// nested columns under other field ids.
async fn nested_tables(lake: &Lake) {
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.nt (id INT, l ARRAY<INT>, s STRUCT<a: INT, xs: ARRAY<INT>>, \
         m MAP<STRING, INT>, ls ARRAY<STRUCT<x: INT>>)",
    )
    .await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.nu (pad INT, pad2 STRING, id INT, l ARRAY<INT>, \
         s STRUCT<a: INT, xs: ARRAY<INT>>)",
    )
    .await;
    for values in [
        "(1, [1, 2], named_struct('a', 1, 'xs', [10]), MAP {'x': 1}, [named_struct('x', 1)])",
        "(2, [3], named_struct('a', 2, 'xs', CAST([] AS INT[])), MAP {'y': 2}, \
         [named_struct('x', 2), named_struct('x', 3)]), (3, NULL, NULL, NULL, NULL)",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.nt VALUES {values}")).await;
    }
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.nu VALUES (0, 'p', 1, [7], named_struct('a', 7, 'xs', [70])), \
         (0, 'p', 4, [8, 9], NULL)",
    )
    .await;
}

/// Aggregate and window functions returning the values of list, struct and map columns
/// of Iceberg tables answer as Spark's `first`, `last`, `any_value`, `collect_list`,
/// `lag`, `lead`, `nth_value` and `greatest` do. The scan's nested fields carried their
/// Iceberg field ids, which DataFusion's list values lose: these failed with "column
/// types must match schema types" or "It is not possible to concatenate arrays of
/// different data types", `array_agg(l ORDER BY id)` panicked, and `greatest(l, [2])`
/// failed with "arguments need to have the same data type".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_values_through_value_functions_and_windows() {
    let lake = lake().await;
    nested_tables(&lake).await;
    for partitions in [1, 3] {
        let ctx = session(&lake, partitions, false).await;
        let got = shown(
            &ctx,
            "SELECT first_value(l ORDER BY id) AS f, last_value(l ORDER BY id) AS la, \
             first_value(s ORDER BY id) AS fs, last_value(ls ORDER BY id DESC) AS lls, \
             first_value(m ORDER BY id DESC) AS fm FROM ice.ns.nt",
        )
        .await;
        assert!(
            squeezed(&got).contains("|[1,2]|NULL|{a:1,xs:[10]}|[{x:1}]|NULL|"),
            "{partitions}: {got}"
        );
        let got = shown(
            &ctx,
            "SELECT id, any_value(l) AS a, first_value(m ORDER BY id) AS m1, \
             any_value(s) AS s1, last_value(ls) AS l1 FROM ice.ns.nt GROUP BY id ORDER BY id",
        )
        .await;
        assert!(
            squeezed(&got).contains(
                "|1|[1,2]|{x:1}|{a:1,xs:[10]}|[{x:1}]|\n\
                 |2|[3]|{y:2}|{a:2,xs:[]}|[{x:2},{x:3}]|\n\
                 |3|NULL|NULL|NULL|NULL|"
            ),
            "{partitions}: {got}"
        );
        let got = shown(
            &ctx,
            "SELECT array_agg(l ORDER BY id) AS al, array_agg(ls ORDER BY id DESC) AS als \
             FROM ice.ns.nt WHERE id <= 2",
        )
        .await;
        assert!(
            squeezed(&got).contains("|[[1,2],[3]]|[[{x:2},{x:3}],[{x:1}]]|"),
            "{partitions}: {got}"
        );
        let got = shown(
            &ctx,
            "SELECT id, first_value(l) OVER (ORDER BY id) AS f, lag(l) OVER (ORDER BY id) AS p, \
             lead(s) OVER (ORDER BY id) AS n, nth_value(m, 2) OVER (ORDER BY id) AS nth, \
             last_value(ls) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING) \
             AS lv, lead(s.xs) OVER (ORDER BY id) AS nx FROM ice.ns.nt ORDER BY id",
        )
        .await;
        assert!(
            squeezed(&got).contains(
                "|1|[1,2]|NULL|{a:2,xs:[]}|NULL|[{x:2},{x:3}]|[]|\n\
                 |2|[1,2]|[1,2]|NULL|{y:2}|NULL|NULL|\n\
                 |3|[1,2]|[3]|NULL|{y:2}|NULL|NULL|"
            ),
            "{partitions}: {got}"
        );
        // Spark's greatest skips NULLs and orders arrays element by element
        let got = shown(
            &ctx,
            "SELECT id, greatest(l, [2]) AS g FROM ice.ns.nt ORDER BY id",
        )
        .await;
        assert!(
            squeezed(&got).contains("|1|[2]|\n|2|[3]|\n|3|[2]|"),
            "{partitions}: {got}"
        );
    }
}

/// Nested columns of two tables, whose fields have other ids, combine and are written
/// across: `coalesce`/`CASE` over both, `UNION`, `INTERSECT`, `IN (subquery)` and a join
/// on a list, and `INSERT … SELECT` from one into the other reads back (the reader
/// matches nested fields by the target table's own ids, so the files carry those).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_columns_of_two_tables_combine() {
    let lake = lake().await;
    nested_tables(&lake).await;
    let got = shown(
        &lake.ctx,
        "SELECT t.id, coalesce(u.l, t.l) AS c, CASE WHEN t.id = 1 THEN u.s ELSE t.s END AS w, \
         first_value(u.l) OVER (ORDER BY t.id DESC) AS f FROM ice.ns.nt t \
         LEFT JOIN ice.ns.nu u ON t.id = u.id ORDER BY t.id",
    )
    .await;
    assert!(
        squeezed(&got)
            .contains("|1|[7]|{a:7,xs:[70]}|NULL|\n|2|[3]|{a:2,xs:[]}|NULL|\n|3|NULL|NULL|NULL|"),
        "{got}"
    );
    let got = shown(
        &lake.ctx,
        "SELECT l FROM ice.ns.nt UNION SELECT l FROM ice.ns.nu ORDER BY l",
    )
    .await;
    assert!(
        squeezed(&got).contains("|[1,2]|\n|[3]|\n|[7]|\n|[8,9]|\n|NULL|"),
        "{got}"
    );
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.nu SELECT 0, 'q', id, l, s FROM ice.ns.nt WHERE id <= 2",
    )
    .await;
    let got = shown(
        &lake.ctx,
        "SELECT id, l, s FROM ice.ns.nu WHERE pad2 = 'q' ORDER BY id",
    )
    .await;
    assert!(
        squeezed(&got).contains("|1|[1,2]|{a:1,xs:[10]}|\n|2|[3]|{a:2,xs:[]}|"),
        "{got}"
    );
    for (sql, expected) in [
        (
            "SELECT l FROM ice.ns.nt INTERSECT SELECT l FROM ice.ns.nu ORDER BY l",
            "|[1,2]|\n|[3]|\n+",
        ),
        (
            "SELECT id FROM ice.ns.nt WHERE l IN (SELECT l FROM ice.ns.nu) ORDER BY id",
            "|1|\n|2|\n+",
        ),
        (
            "SELECT t.id, u.s FROM ice.ns.nt t JOIN ice.ns.nu u ON t.l = u.l ORDER BY t.id",
            "|1|{a:1,xs:[10]}|\n|2|{a:2,xs:[]}|\n+",
        ),
        (
            "SELECT l FROM ice.ns.nu EXCEPT SELECT l FROM ice.ns.nt ORDER BY l",
            "|[7]|\n|[8,9]|\n+",
        ),
    ] {
        let got = shown(&lake.ctx, sql).await;
        assert!(squeezed(&got).contains(expected), "{sql}: {got}");
    }
}
