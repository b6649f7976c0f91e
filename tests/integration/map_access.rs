//! `m[1]` on maps with `int` keys: the metadata tables' `column_sizes`, `value_counts`,
//! `null_value_counts`, `lower_bounds`, `upper_bounds` (Spark's `map<int, …>`, in
//! `"t$files"` and in `"t$entries"`' `data_file`) and a table's own `map<int, …>`
//! column, read with integer literal keys through `sql::execute`. DataFusion 55 compares
//! the literal (`Int64`) with the `Int32` keys as it is and failed ("Invalid comparison
//! operation: Int64 == Int32").

use crate::dml::{lake, ok};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn int_keyed_maps_take_integer_literal_keys() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.t (id INT, s STRING, m MAP<INT, STRING>)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.t VALUES (3, 'a', MAP {1: 'one', 2: 'two'}), \
         (1, NULL, MAP {2: 'deux'}), (2, 'c', NULL)",
    )
    .await;

    // the table's own map<int, string>
    let rows = ok(ctx, "SELECT id, m[1], m[2] FROM ice.ns.t ORDER BY id").await;
    let cells: Vec<Vec<String>> = rows
        .lines()
        .skip(3)
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert_eq!(
        cells,
        [["1", "", "deux"], ["2", "", ""], ["3", "one", "two"],],
        "{rows}"
    );
    assert_eq!(
        ok(ctx, "SELECT id FROM ice.ns.t WHERE m[2] = 'two'").await,
        ok(ctx, "SELECT 3 AS id").await
    );

    // $files: one data file of the three rows; ids 1..3 (field 1) with no null, one
    // null s (field 2); bounds in the spec's single-value binary form (int: 4 bytes LE)
    let files = "SELECT record_count, value_counts[1] AS ids, null_value_counts[2] AS null_s, \
                 lower_bounds[1] AS lo, upper_bounds[1] AS hi, column_sizes[1] > 0 AS sized \
                 FROM ice.ns.\"t$files\"";
    let expected = "SELECT CAST(3 AS BIGINT) AS record_count, CAST(3 AS BIGINT) AS ids, \
                    CAST(1 AS BIGINT) AS null_s, X'01000000' AS lo, X'03000000' AS hi, \
                    true AS sized";
    assert_eq!(ok(ctx, files).await, ok(ctx, expected).await);
    // the same value as map_extract (which coerces its key) finds
    assert_eq!(
        ok(
            ctx,
            "SELECT column_sizes[1] = map_extract(column_sizes, 1)[1] AS same, \
             column_sizes[4] = map_extract(column_sizes, 4)[1] AS map_key, \
             column_sizes[99] IS NULL AS absent FROM ice.ns.\"t$files\""
        )
        .await,
        ok(ctx, "SELECT true AS same, true AS map_key, true AS absent").await
    );
    // in a filter too
    assert_eq!(
        ok(
            ctx,
            "SELECT count(*) AS n FROM ice.ns.\"t$files\" WHERE value_counts[1] = 3"
        )
        .await,
        ok(ctx, "SELECT count(*) AS n FROM (VALUES (1)) v").await
    );

    // $entries: the same maps inside data_file
    assert_eq!(
        ok(
            ctx,
            "SELECT data_file.column_sizes[1] AS c, data_file.value_counts[1] AS v, \
             data_file.null_value_counts[2] AS n, data_file.lower_bounds[1] AS lo \
             FROM ice.ns.\"t$entries\""
        )
        .await,
        ok(
            ctx,
            "SELECT column_sizes[1] AS c, value_counts[1] AS v, null_value_counts[2] AS n, \
             lower_bounds[1] AS lo FROM ice.ns.\"t$files\""
        )
        .await
    );
}

/// A lookup in a map with struct keys that DataFusion 55's `get_field` cannot do (it
/// panics on a map of two or more entries, or fails comparing keys of other types) is
/// an error about the expression, not about the healthy data file the scan it was
/// pushed into reads: it was "cannot read data file '…': the Parquet decoder failed on
/// it" and "… Can't compare arrays of different types" (a tester's). The file reads
/// without the lookup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn struct_keyed_map_lookups_that_fail_do_not_blame_the_data_file() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.mk (id INT, m MAP<STRUCT<a: INT>, INT>)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.mk VALUES (1, MAP {named_struct('a', 1): 10}), \
         (2, MAP {named_struct('a', 2): 20, named_struct('a', 3): 30})",
    )
    .await;
    for sql in [
        "SELECT id, m[named_struct('a', CAST(2 AS INT))] FROM ice.ns.mk",
        "SELECT id, m[named_struct('a', 2)] FROM ice.ns.mk",
    ] {
        let Err(e) = crate::dml::run(ctx, sql).await else {
            // DataFusion answering the lookup is fine too
            continue;
        };
        assert!(
            !e.contains("cannot read data file") && !e.contains("invalid data"),
            "{sql}: {e}"
        );
        assert!(
            !e.contains("the Parquet decoder failed on it"),
            "{sql}: {e}"
        );
    }
    let rows = ok(ctx, "SELECT sum(cardinality(m)) AS n FROM ice.ns.mk").await;
    assert_eq!(rows, "+---+\n| n |\n+---+\n| 3 |\n+---+");
}

/// Helper B67, task 4: a map column with struct keys read by subscript
/// (`m[named_struct(…)]`, DataFusion's `get_field`) panicked in DataFusion 55 ("task
/// panicked"), in a `SELECT` and in a `DELETE`/`UPDATE … WHERE`; each is refused at
/// planning naming the column and its key type, changing nothing. `element_at(m, k)[1]`
/// reads the value, and a `DELETE` by it deletes the row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn struct_keyed_maps_read_by_subscript_are_refused_at_planning() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.sk (id INT, m MAP<STRUCT<a: INT, b: STRING>, STRING>)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.sk VALUES (1, MAP {named_struct('a', 1, 'b', 'x'): 'one'}), \
         (2, MAP {named_struct('a', 2, 'b', 'y'): 'two'})",
    )
    .await;
    let key = "named_struct('a', CAST(1 AS INT), 'b', 'x')";
    for statement in [
        format!("SELECT m[{key}] FROM ice.ns.sk"),
        format!("SELECT id FROM ice.ns.sk WHERE m[{key}] = 'one'"),
        format!("DELETE FROM ice.ns.sk WHERE m[{key}] = 'one'"),
        format!("UPDATE ice.ns.sk SET id = 5 WHERE m[{key}] = 'one'"),
        "DELETE FROM ice.ns.sk WHERE m[named_struct('a', 1, 'b', 'x')] = 'one'".to_string(),
    ] {
        let err = crate::dml::run(ctx, &statement)
            .await
            .expect_err(&statement);
        assert!(
            err.contains("m' has struct keys (Struct(")
                && err.contains("cannot be looked up by subscript")
                && !err.contains("panicked"),
            "{statement}: {err}"
        );
    }
    assert_eq!(
        ok(ctx, "SELECT id FROM ice.ns.sk ORDER BY id").await,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n+----+"
    );
    ok(
        ctx,
        &format!("DELETE FROM ice.ns.sk WHERE element_at(m, {key})[1] = 'one'"),
    )
    .await;
    assert_eq!(
        ok(ctx, "SELECT id FROM ice.ns.sk").await,
        "+----+\n| id |\n+----+\n| 2  |\n+----+"
    );
}
