//! How `UPDATE`, `DELETE` and `MERGE` statements are read: assignments, aliases, the
//! source's cardinality, subqueries, and the errors for what is refused.

use crate::dml::{
    count, create, lake, mode_table, ok, other_engines_agree, run, snapshot_count as snapshots,
    Lake,
};

/// `ns.<name>` (`id BIGINT NOT NULL, x INT`), rows (1, 0) and (2, 0), in `mode` for
/// every row-level statement.
async fn table(lake: &Lake, name: &str, mode: &str) {
    mode_table(
        lake,
        name,
        "id BIGINT NOT NULL, x INT",
        "(1, 0), (2, 0)",
        mode,
        2,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_update_refuses_a_column_assigned_twice() {
    let lake = lake().await;
    table(&lake, "t", "copy-on-write").await;
    let before = snapshots(&lake, "t").await;
    for (statement, clause) in [
        ("UPDATE ice.ns.t SET x = 1, x = 2", "UPDATE SET"),
        (
            "UPDATE ice.ns.t AS a SET a.x = 1, X = 2 WHERE id = 1",
            "UPDATE SET",
        ),
        ("UPDATE ice.ns.t SET (x, x) = (1, 2)", "UPDATE SET"),
        (
            "MERGE INTO ice.ns.t t USING (SELECT 1 AS id) s ON t.id = s.id \
             WHEN MATCHED THEN UPDATE SET x = 1, t.x = 2",
            "MERGE UPDATE SET",
        ),
    ] {
        let e = run(&lake.ctx, statement).await.expect_err(statement);
        assert!(
            e.contains(&format!("Duplicate column 'x' in {clause} of 'ice.ns.t'")),
            "{statement}: {e}"
        );
    }
    assert_eq!(snapshots(&lake, "t").await, before);
    // distinct columns still work
    ok(&lake.ctx, "UPDATE ice.ns.t SET id = 3, x = 4 WHERE id = 1").await;
    let rows = ok(&lake.ctx, "SELECT id, x FROM ice.ns.t ORDER BY id").await;
    assert_eq!(
        rows,
        "+----+---+\n| id | x |\n+----+---+\n| 2  | 0 |\n| 3  | 4 |\n+----+---+"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_unconditional_delete_takes_a_row_matched_twice() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = mode.replace('-', "_");
        table(&lake, &name, mode).await;
        // the only MATCHED clause is an unconditional DELETE: no cardinality check
        let count = ok(
            &lake.ctx,
            &format!(
                "MERGE INTO ice.ns.{name} t USING (SELECT * FROM (VALUES (2), (2), (7)) v(id)) s \
                 ON t.id = s.id WHEN MATCHED THEN DELETE \
                 WHEN NOT MATCHED THEN INSERT VALUES (s.id, 9)"
            ),
        )
        .await;
        // row 2 deleted once, row 7 inserted
        assert!(count.contains("| 2     |"), "{mode}: {count}");
        let rows = ok(
            &lake.ctx,
            &format!("SELECT id, x FROM ice.ns.{name} ORDER BY id"),
        )
        .await;
        assert_eq!(
            rows, "+----+---+\n| id | x |\n+----+---+\n| 1  | 0 |\n| 7  | 9 |\n+----+---+",
            "{mode}"
        );
        // a conditional DELETE (or another MATCHED clause) still checks
        let e = run(
            &lake.ctx,
            &format!(
                "MERGE INTO ice.ns.{name} t USING (SELECT * FROM (VALUES (1), (1)) v(id)) s \
                 ON t.id = s.id WHEN MATCHED AND t.x = 0 THEN DELETE"
            ),
        )
        .await
        .expect_err("conditional delete");
        assert!(e.contains("matched more than one row of the source"), "{e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_null_into_a_required_column_names_the_column_and_table() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = mode.replace('-', "_");
        table(&lake, &name, mode).await;
        let before = snapshots(&lake, &name).await;
        for (statement, context, clause) in [
            (
                format!("UPDATE ice.ns.{name} SET id = NULL WHERE id = 1"),
                "UPDATE of",
                "UPDATE SET",
            ),
            (
                format!("UPDATE ice.ns.{name} SET id = CASE WHEN x = 0 THEN NULL ELSE id END"),
                "UPDATE of",
                "UPDATE SET",
            ),
            (
                format!(
                    "MERGE INTO ice.ns.{name} t USING (SELECT 1 AS id) s ON t.id = s.id \
                     WHEN MATCHED THEN UPDATE SET id = NULL"
                ),
                "MERGE into",
                "MERGE UPDATE",
            ),
            (
                format!(
                    "MERGE INTO ice.ns.{name} t USING (SELECT 5 AS id, CAST(NULL AS BIGINT) \
                     AS n) s ON t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.n, 1)"
                ),
                "MERGE into",
                "MERGE INSERT",
            ),
        ] {
            let e = run(&lake.ctx, &statement).await.expect_err(&statement);
            assert!(
                e.contains(&format!(
                    "{context} 'ns.{name}': column 'id' is required (NOT NULL) but a row to \
                     write holds null for it ({clause} gives it null)"
                )),
                "{statement}: {e}"
            );
            assert_eq!(snapshots(&lake, &name).await, before, "{statement}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_delete_takes_the_table_alias() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = mode.replace('-', "_");
        table(&lake, &name, mode).await;
        for statement in [
            format!("DELETE FROM ice.ns.{name} AS a WHERE a.id = 2"),
            format!("DELETE FROM ice.ns.{name} b WHERE B.id = 3 OR (b.x = 5 AND id = 1)"),
        ] {
            ok(&lake.ctx, &statement).await;
        }
        let rows = ok(&lake.ctx, &format!("SELECT id FROM ice.ns.{name}")).await;
        assert_eq!(rows, "+----+\n| id |\n+----+\n| 1  |\n+----+", "{mode}");
    }
}

/// `SET` values are computed for the rows the condition matches only, as Spark, Trino and
/// DuckDB compute them: copy-on-write computed them for every row of each rewritten file,
/// so `SET k = 10 / k WHERE k <> 0` over a file holding a `k = 0` row failed with
/// "Divide by zero", and `SET k = CAST(s AS INT) WHERE id = 2` with a cast error from
/// another row's `s` (merge-on-read computed them for the matched rows alone). The rows
/// are DuckDB's for the same statements on a plain table; PyIceberg and DuckDB read them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_update_values_are_computed_for_matched_rows_only() {
    let lake = lake().await;
    for (version, mode) in [
        ("2", "copy-on-write"),
        ("2", "merge-on-read"),
        ("3", "copy-on-write"),
        ("3", "merge-on-read"),
    ] {
        let name = format!("v{version}_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "",
            &format!(
                ", 'format-version'='{version}', 'write.update.mode'='{mode}', \
                 'write.merge.mode'='{mode}'"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO {t} VALUES (1, 0, 'a', 1e300), (2, 2, '5', 2.5), (3, NULL, 'x', NULL), \
                 (4, 4, NULL, -1.0)"
            ),
        )
        .await;
        let what = format!("v{version} {mode}");
        assert_eq!(
            count(
                &lake.ctx,
                &format!("UPDATE {t} SET k = 10 / k WHERE k <> 0")
            )
            .await,
            2,
            "{what}"
        );
        assert_eq!(
            count(
                &lake.ctx,
                &format!("UPDATE {t} SET k = CAST(s AS INT) + k WHERE id = 2")
            )
            .await,
            1,
            "{what}"
        );
        // a decimal product that overflows DECIMAL(38, …) on the unmatched 1e300 row
        assert_eq!(
            count(
                &lake.ctx,
                &format!(
                    "UPDATE {t} SET d = CAST(CAST(d AS DECIMAL(20, 2)) * 2 AS DOUBLE) \
                     WHERE d < 100"
                )
            )
            .await,
            2,
            "{what}"
        );
        let rows = ok(
            &lake.ctx,
            &format!("SELECT id, k, s, d FROM {t} ORDER BY id"),
        )
        .await;
        assert_eq!(
            rows,
            "+----+----+---+-------+\n\
             | id | k  | s | d     |\n\
             +----+----+---+-------+\n\
             | 1  | 0  | a | 1e300 |\n\
             | 2  | 10 | 5 | 5.0   |\n\
             | 3  |    | x |       |\n\
             | 4  | 2  |   | -2.0  |\n\
             +----+----+---+-------+",
            "{what}"
        );
        other_engines_agree(&lake, &name).await;
    }
}

/// The rows of `t` (`id, k, s, d`) by `id`, each as `id k s d` (`NULL` for nulls), joined
/// by `|`.
async fn rows_text(lake: &Lake, t: &str) -> String {
    let rows = ok(
        &lake.ctx,
        &format!(
            "SELECT string_agg(concat_ws(' ', id, coalesce(CAST(k AS STRING), 'NULL'), \
             coalesce(s, 'NULL'), coalesce(CAST(d AS STRING), 'NULL')), '|' ORDER BY id) \
             AS r FROM {t}"
        ),
    )
    .await;
    rows.lines()
        .nth(3)
        .unwrap_or_default()
        .trim_matches(|c| c == '|' || c == ' ')
        .to_string()
}

/// SQL's three-valued logic in `MERGE` and `DELETE`/`UPDATE`, both modes, v2 and v3: NULL
/// keys in `ON` match nothing (a NULL-keyed source row is inserted, a NULL-keyed target row
/// is `NOT MATCHED BY SOURCE`), a clause whose condition is NULL is skipped for the next
/// one (first true wins), `NOT (NULL)` is not true, and `k NOT IN (SELECT …)` over a NULL
/// matches no row (count 0), correlated too. Rows and counts are DuckDB's for the same
/// statements on a plain table; PyIceberg and DuckDB read the Iceberg table so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_and_conditions_follow_three_valued_logic() {
    let lake = lake().await;
    let source = "(SELECT CAST(id AS BIGINT) AS id, CAST(k AS INT) AS k, CAST(s AS STRING) AS s \
                  FROM (VALUES (10, 1, 'x'), (20, NULL, 'y'), (30, 3, NULL), (60, NULL, NULL), \
                  (70, 7, 'w'), (50, 5, 'q')) v(id, k, s))";
    for (version, mode) in [
        ("2", "copy-on-write"),
        ("2", "merge-on-read"),
        ("3", "copy-on-write"),
        ("3", "merge-on-read"),
    ] {
        let name = format!("v{version}_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "PARTITIONED BY (bucket(2, k))",
            &format!(
                ", 'format-version'='{version}', 'write.delete.mode'='{mode}', \
                 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}'"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, NULL, 'b', 2.0), (3, 3, NULL, 3.0), \
                 (4, NULL, NULL, NULL), (5, 5, 'e', 5.0), (6, 6, 'f', NULL)"
            ),
        )
        .await;
        let what = format!("v{version} {mode}");
        let updated = "3 3 ok 3.0|5 5 ok 5.0|6 6 ok NULL|20 NULL y NULL|70 7 w NULL";
        for (statement, changed, expected) in [
            (
                format!(
                    "MERGE INTO {t} t USING {source} s ON t.k = s.k \
                     WHEN MATCHED AND s.s = t.s THEN DELETE \
                     WHEN MATCHED AND s.s IS NULL THEN UPDATE SET s = 'src-null' \
                     WHEN MATCHED AND NOT (t.s > 'b') THEN UPDATE SET d = -t.d \
                     WHEN NOT MATCHED AND s.k > 5 THEN INSERT (id, k, s) VALUES (s.id, s.k, s.s) \
                     WHEN NOT MATCHED AND s.s IS NOT NULL THEN INSERT (id, s) VALUES (s.id, s.s) \
                     WHEN NOT MATCHED BY SOURCE AND t.s IS NULL THEN DELETE \
                     WHEN NOT MATCHED BY SOURCE AND t.d > 1 THEN UPDATE SET k = 0"
                ),
                6,
                "1 1 a -1.0|2 0 b 2.0|3 3 src-null 3.0|5 5 e 5.0|6 6 f NULL|20 NULL y NULL|\
                 70 7 w NULL",
            ),
            (
                format!("DELETE FROM {t} WHERE NOT (k > 2)"),
                2,
                "3 3 src-null 3.0|5 5 e 5.0|6 6 f NULL|20 NULL y NULL|70 7 w NULL",
            ),
            (
                format!("UPDATE {t} SET s = 'ok' WHERE k NOT IN (SELECT k FROM {t} WHERE id = 70)"),
                3,
                updated,
            ),
            (
                format!(
                    "UPDATE {t} SET s = 'in' WHERE k NOT IN (SELECT k FROM {t} WHERE id >= 20)"
                ),
                0,
                updated,
            ),
            (
                format!(
                    "DELETE FROM {t} AS x \
                     WHERE k NOT IN (SELECT k FROM {t} t2 WHERE t2.id = x.id * 10 - 30)"
                ),
                4,
                "5 5 ok 5.0",
            ),
        ] {
            assert_eq!(
                count(&lake.ctx, &statement).await,
                changed,
                "{what}: {statement}"
            );
            assert_eq!(rows_text(&lake, &t).await, expected, "{what}: {statement}");
        }
        other_engines_agree(&lake, &name).await;
    }
}

/// A `MERGE` clause's `AND` condition is computed only for the rows still open to it (of
/// its kind, not taken by an earlier clause), as in Spark: every condition was computed
/// for every joined row, so `WHEN MATCHED AND t.k = 0 THEN DELETE WHEN MATCHED AND 10 /
/// t.k > 3 …` failed with "Divide by zero" on the row the first clause took, and so did a
/// `NOT MATCHED BY SOURCE` condition on rows of other kinds. The rows and counts are
/// DuckDB's for the same statements on a plain table (`//` for integer division there);
/// PyIceberg and DuckDB read the Iceberg table so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_conditions_are_computed_for_the_rows_their_clause_may_take() {
    let lake = lake().await;
    let source = "(SELECT CAST(id AS BIGINT) AS id, CAST(k AS INT) AS k \
                  FROM (VALUES (1, 5), (2, 0), (4, 2), (7, 0), (8, 4)) v(id, k))";
    for (version, mode) in [
        ("2", "copy-on-write"),
        ("2", "merge-on-read"),
        ("3", "copy-on-write"),
        ("3", "merge-on-read"),
    ] {
        let name = format!("v{version}_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "",
            &format!(", 'format-version'='{version}', 'write.merge.mode'='{mode}'"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO {t} VALUES (1, 0, 'a', 0.0), (2, 2, '5', 2.5), (3, NULL, 'x', NULL), \
                 (4, 4, NULL, -1.0), (5, 0, 'e', 0.0), (6, -4, 'f', 6.0)"
            ),
        )
        .await;
        let what = format!("v{version} {mode}");
        for (statement, changed, expected) in [
            (
                format!(
                    "MERGE INTO {t} t USING {source} s ON t.id = s.id \
                     WHEN MATCHED AND t.k = 0 THEN DELETE \
                     WHEN MATCHED AND 10 / t.k > 3 THEN UPDATE SET s = 'big' \
                     WHEN NOT MATCHED AND s.k <> 0 THEN INSERT VALUES (s.id, 12 / s.k, 'new', NULL)"
                ),
                3,
                "2 2 big 2.5|3 NULL x NULL|4 4 NULL -1.0|5 0 e 0.0|6 -4 f 6.0|8 3 new NULL",
            ),
            (
                format!(
                    "MERGE INTO {t} t USING {source} s ON t.id = s.id \
                     WHEN MATCHED AND s.k = 0 THEN UPDATE SET s = 'zero' \
                     WHEN MATCHED THEN UPDATE SET k = 100 / s.k \
                     WHEN NOT MATCHED AND s.k = 0 THEN INSERT VALUES (s.id, NULL, 'z', NULL) \
                     WHEN NOT MATCHED THEN INSERT VALUES (s.id, 100 / s.k, 'nz', NULL)"
                ),
                5,
                "1 20 nz NULL|2 2 zero 2.5|3 NULL x NULL|4 50 NULL -1.0|5 0 e 0.0|6 -4 f 6.0|\
                 7 NULL z NULL|8 25 new NULL",
            ),
            (
                format!(
                    "MERGE INTO {t} t USING {source} s ON t.id = s.id \
                     WHEN NOT MATCHED BY SOURCE AND t.k = 0 THEN DELETE \
                     WHEN NOT MATCHED BY SOURCE AND 100 / t.k < 0 THEN UPDATE SET s = 'neg' \
                     WHEN NOT MATCHED BY SOURCE THEN UPDATE SET k = -1"
                ),
                3,
                "1 20 nz NULL|2 2 zero 2.5|3 -1 x NULL|4 50 NULL -1.0|6 -4 neg 6.0|7 NULL z NULL|\
                 8 25 new NULL",
            ),
        ] {
            assert_eq!(
                count(&lake.ctx, &statement).await,
                changed,
                "{what}: {statement}"
            );
            assert_eq!(rows_text(&lake, &t).await, expected, "{what}: {statement}");
        }
        other_engines_agree(&lake, &name).await;
    }
}
/// `a IS [NOT] DISTINCT FROM b AND|OR c` is `(a IS DISTINCT FROM b) AND|OR c`, as Spark
/// reads it, in conditions, `MERGE` clauses and queries (sqlparser read `a IS DISTINCT
/// FROM (b AND c)`: the `DELETE` below deleted row 1 too, the `UPDATE` row 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_is_distinct_from_before_and_or_reads_as_spark() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = format!("d_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        mode_table(
            &lake,
            &name,
            "id BIGINT, b BOOLEAN, x INT",
            "(1, true, 0), (2, false, 0), (3, NULL, 0), (4, NULL, 0)",
            mode,
            2,
        )
        .await;
        let selected = ok(
            &lake.ctx,
            &format!("SELECT id FROM {t} WHERE b IS DISTINCT FROM true AND id = 3"),
        )
        .await;
        assert_eq!(selected, "+----+\n| id |\n+----+\n| 3  |\n+----+", "{mode}");
        ok(
            &lake.ctx,
            &format!("DELETE FROM {t} WHERE b IS DISTINCT FROM true AND id = 3"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("UPDATE {t} SET x = 1 WHERE b IS NOT DISTINCT FROM false OR id = 1"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING (VALUES (1, true), (2, true), (4, true)) AS s(id, b) \
                 ON t.id = s.id \
                 WHEN MATCHED AND t.b IS DISTINCT FROM s.b AND s.id > 2 THEN UPDATE SET x = 2 \
                 WHEN MATCHED AND t.b IS NOT DISTINCT FROM s.b OR s.id = 2 THEN UPDATE SET x = 3"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT id, b, x FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+-------+---+\n\
             | id | b     | x |\n\
             +----+-------+---+\n\
             | 1  | true  | 3 |\n\
             | 2  | false | 3 |\n\
             | 4  |       | 2 |\n\
             +----+-------+---+",
            "{mode}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_scalar_subqueries_run_once_and_correlated_ones_per_row() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = mode.replace('-', "_");
        table(&lake, &name, mode).await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{name} VALUES (3, 0)"),
        )
        .await;
        let t = format!("ice.ns.{name}");
        ok(
            &lake.ctx,
            &format!("DELETE FROM {t} WHERE id = (SELECT max(id) FROM {t})"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "UPDATE {t} SET x = (SELECT count(*) FROM {t}) WHERE id > (SELECT min(id) FROM {t})"
            ),
        )
        .await;
        // no row: NULL, which matches nothing
        ok(
            &lake.ctx,
            &format!("DELETE FROM {t} WHERE id = (SELECT id FROM {t} WHERE id > 10)"),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT id, x FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows, "+----+---+\n| id | x |\n+----+---+\n| 1  | 0 |\n| 2  | 2 |\n+----+---+",
            "{mode}"
        );
        let before = snapshots(&lake, &name).await;
        let e = run(
            &lake.ctx,
            &format!("UPDATE {t} SET x = (SELECT id FROM {t})"),
        )
        .await
        .expect_err("two rows");
        assert!(
            e.contains(&format!(
                "UPDATE on 'ns.{name}': a scalar subquery returned 2 rows (at most one is allowed)"
            )),
            "{e}"
        );
        assert_eq!(snapshots(&lake, &name).await, before, "{mode}");
        // correlated: evaluated per row, over the table as it was before the statement
        let updated = count(
            &lake.ctx,
            &format!("UPDATE {t} SET x = (SELECT max(u.id) FROM {t} u WHERE u.x = {t}.id)"),
        )
        .await;
        assert_eq!(updated, 2, "{mode}");
        let rows = ok(&lake.ctx, &format!("SELECT id, x FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows, "+----+---+\n| id | x |\n+----+---+\n| 1  |   |\n| 2  | 2 |\n+----+---+",
            "{mode}"
        );
        let deleted = count(
            &lake.ctx,
            &format!("DELETE FROM {t} WHERE x = (SELECT max(u.id) FROM {t} u WHERE u.x = {t}.x)"),
        )
        .await;
        assert_eq!(deleted, 1, "{mode}");
        let rows = ok(&lake.ctx, &format!("SELECT id, x FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows, "+----+---+\n| id | x |\n+----+---+\n| 1  |   |\n+----+---+",
            "{mode}"
        );
    }
}

/// Rows (1, 1, 'a', 1.0), (2, NULL, 'a', 2.0), (3, 2, NULL, NULL) in one data file and
/// (4, 7, 'b', 0.5), (5, NULL, NULL, 1.5), (6, 3, 'b', NULL) in another.
const SIX_ROWS: &[&str] = &[
    "(1, 1, 'a', 1.0), (2, NULL, 'a', 2.0), (3, 2, NULL, NULL)",
    "(4, 7, 'b', 0.5), (5, NULL, NULL, 1.5), (6, 3, 'b', NULL)",
];

/// `ice.ns.<name>` (`id, k, s, d`), partitioned by `s`, format `version`, in `mode` for
/// `DELETE` and `UPDATE`, with `files` (each the `VALUES` of one `INSERT`).
async fn subquery_table(lake: &Lake, name: &str, version: u8, mode: &str, files: &[&str]) {
    create(
        lake,
        name,
        "PARTITIONED BY (s)",
        &format!(
            ", 'format-version'='{version}', 'write.delete.mode'='{mode}', \
             'write.update.mode'='{mode}'"
        ),
    )
    .await;
    for rows in files {
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{name} VALUES {rows}"),
        )
        .await;
    }
}

/// An uncorrelated `IN (SELECT …)` / `EXISTS (…)` in a `DELETE` or `UPDATE` is run once
/// and gives the rows Spark and DuckDB give (three-valued: a NULL the subquery returns
/// makes `NOT IN` match nothing it does not list, an empty one makes `NOT IN` true for a
/// NULL key too), in both modes on v2 and v3, over NULL keys and a NULL partition; in
/// a prepared statement it is refused and commits nothing. DataFusion 55 alone planned
/// them as a join and the statement was refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_uncorrelated_in_and_exists_subqueries_run_once() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.o (k BIGINT)").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.o VALUES (1), (NULL), (7)").await;
    for version in [2, 3] {
        for mode in ["copy-on-write", "merge-on-read"] {
            let name = format!("in_v{version}_{}", mode.replace('-', "_"));
            let t = format!("ice.ns.{name}");
            subquery_table(&lake, &name, version, mode, SIX_ROWS).await;
            for (statement, changed) in [
                // NOT IN (1, NULL, 7): false or NULL for every row
                (format!("DELETE FROM {t} WHERE k NOT IN (SELECT k FROM ice.ns.o)"), 0),
                // NOT IN (1, 7): k 2 and 3, not the NULL keys
                (
                    format!(
                        "DELETE FROM {t} WHERE k NOT IN (SELECT k FROM ice.ns.o WHERE k IS NOT NULL)"
                    ),
                    2,
                ),
                (
                    format!("UPDATE {t} SET d = -1 WHERE k IN (SELECT k FROM ice.ns.o)"),
                    2,
                ),
                (
                    format!(
                        "DELETE FROM {t} WHERE EXISTS (SELECT 1 FROM ice.ns.o WHERE k = 7) AND s IS NULL"
                    ),
                    1,
                ),
                // NOT IN of no row is true, for the NULL key of id 2 too
                (
                    format!(
                        "DELETE FROM {t} WHERE k NOT IN (SELECT k FROM ice.ns.o WHERE k > 100) AND id = 2"
                    ),
                    1,
                ),
                (
                    format!("DELETE FROM {t} WHERE NOT EXISTS (SELECT 1 FROM ice.ns.o WHERE k = 7)"),
                    0,
                ),
            ] {
                assert_eq!(count(&lake.ctx, &statement).await, changed, "{statement}");
            }
            let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
            assert_eq!(
                rows,
                "+----+---+---+------+\n\
                 | id | k | s | d    |\n\
                 +----+---+---+------+\n\
                 | 1  | 1 | a | -1.0 |\n\
                 | 4  | 7 | b | -1.0 |\n\
                 +----+---+---+------+",
                "{name}"
            );
            other_engines_agree(&lake, &name).await;
            let before = snapshots(&lake, &name).await;
            // not run once in a prepared statement (DataFusion plans it at PREPARE)
            let statement =
                format!("PREPARE q AS DELETE FROM {t} WHERE k IN (SELECT k FROM ice.ns.o)");
            let e = run(&lake.ctx, &statement).await.expect_err(&statement);
            assert!(
                e.contains("not supported")
                    && e.contains("correlated IN (SELECT …) or EXISTS")
                    && e.contains("prepared statement"),
                "{statement}: {e}"
            );
            assert_eq!(snapshots(&lake, &name).await, before, "{name}");
        }
    }
}

/// `DELETE`/`UPDATE` with correlated `EXISTS`, `IN`, `NOT IN` and scalar subqueries (in
/// the condition and in `SET` values, with and without `WHERE`, reading the target
/// itself) change the rows SQL and Spark change, in both modes on v2 and v3: the
/// statement is planned as a query over the table's row-level scan. Before, each was
/// refused (DataFusion 55 decorrelates them into joins the table is never handed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_correlated_subqueries_change_the_rows_sql_changes() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.o2 (k BIGINT, v DOUBLE)").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.o2 VALUES (1, 10.0), (2, 20.0), (2, 21.0), (7, NULL), (NULL, 5.0)",
    )
    .await;
    for version in [2, 3] {
        for mode in ["copy-on-write", "merge-on-read"] {
            let name = format!("corr_v{version}_{}", mode.replace('-', "_"));
            let t = format!("ice.ns.{name}");
            subquery_table(&lake, &name, version, mode, SIX_ROWS).await;
            // EXPLAIN plans them (the subqueries run, the statement does not)
            let before = snapshots(&lake, &name).await;
            for statement in [
                format!(
                    "EXPLAIN DELETE FROM {t} WHERE EXISTS (SELECT 1 FROM ice.ns.o2 WHERE o2.k = {t}.k)"
                ),
                format!("EXPLAIN UPDATE {t} SET d = 0 WHERE k IN (SELECT k FROM ice.ns.o2)"),
            ] {
                let plan = ok(&lake.ctx, &statement).await;
                assert!(plan.contains("IcebergRowLevelExec: "), "{statement}: {plan}");
            }
            assert_eq!(snapshots(&lake, &name).await, before, "{name}");
            for (statement, changed) in [
                // k = 2 has values over 15
                (
                    format!(
                        "DELETE FROM {t} WHERE EXISTS \
                         (SELECT 1 FROM ice.ns.o2 WHERE o2.k = {t}.k AND o2.v > 15)"
                    ),
                    1,
                ),
                // id 1: 10.0; ids 2 and 5 (NULL k): no row, NULL
                (
                    format!(
                        "UPDATE {t} SET d = (SELECT max(v) FROM ice.ns.o2 WHERE o2.k = {t}.k) \
                         WHERE s = 'a' OR s IS NULL"
                    ),
                    3,
                ),
                // NOT IN of no row is true (ids 2, 5, 6, NULL d too); of {NULL} NULL (id 4)
                (
                    format!(
                        "DELETE FROM {t} AS x WHERE x.d NOT IN \
                         (SELECT v FROM ice.ns.o2 WHERE o2.k = x.k)"
                    ),
                    3,
                ),
                (format!("INSERT INTO {t} VALUES (7, 99, 'c', 1.0)"), 1),
                // no WHERE; a count of no row is 0, not NULL (id 7)
                (
                    format!(
                        "UPDATE {t} SET k = k + (SELECT count(*) FROM ice.ns.o2 WHERE o2.k = {t}.k)"
                    ),
                    3,
                ),
                // the target read again: id 7's 1.0 is over id 4's 0.5, id 4's 0.5 not
                // over id 1's 10.0
                (
                    format!(
                        "DELETE FROM {t} WHERE d > (SELECT min(u.d) FROM {t} u WHERE u.id = {t}.id - 3)"
                    ),
                    1,
                ),
                // IN with a correlated condition: id 1's k 2 is in {o2.k + 1 | o2.k <= 1};
                // id 4's 8 is not in {2, 3, 3}
                (
                    format!(
                        "UPDATE {t} SET s = 'z' WHERE k IN \
                         (SELECT o2.k + 1 FROM ice.ns.o2 WHERE o2.k <= {t}.id)"
                    ),
                    1,
                ),
                // both keys (2, 8) are some o2.k + 1
                (
                    format!(
                        "DELETE FROM {t} AS x WHERE NOT EXISTS \
                         (SELECT 1 FROM ice.ns.o2 WHERE o2.k + 1 = x.k)"
                    ),
                    0,
                ),
            ] {
                assert_eq!(count(&lake.ctx, &statement).await, changed, "{name}: {statement}");
            }
            let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
            assert_eq!(
                rows,
                "+----+---+---+------+\n\
                 | id | k | s | d    |\n\
                 +----+---+---+------+\n\
                 | 1  | 2 | z | 10.0 |\n\
                 | 4  | 8 | b | 0.5  |\n\
                 +----+---+---+------+",
                "{name}"
            );
            other_engines_agree(&lake, &name).await;
            // a required column set to NULL through a correlated subquery: named, nothing
            // committed
            if version == 3 && mode == "merge-on-read" {
                ok(
                    &lake.ctx,
                    &format!("CREATE TABLE ice.ns.req_{name} (id BIGINT NOT NULL, x INT)"),
                )
                .await;
                ok(
                    &lake.ctx,
                    &format!("INSERT INTO ice.ns.req_{name} VALUES (1, 0)"),
                )
                .await;
                let statement = format!(
                    "UPDATE ice.ns.req_{name} SET id = (SELECT max(o2.k) FROM ice.ns.o2 \
                     WHERE o2.k = req_{name}.id + 100)"
                );
                let e = run(&lake.ctx, &statement).await.expect_err(&statement);
                assert!(
                    e.contains(&format!("UPDATE of 'ns.req_{name}'"))
                        && e.contains("column 'id' is required (NOT NULL)")
                        && e.contains("UPDATE SET gives it null"),
                    "{e}"
                );
                let rows = ok(&lake.ctx, &format!("SELECT * FROM ice.ns.req_{name}")).await;
                assert!(rows.contains("| 1  | 0 |"), "{rows}");
            }
            // what DataFusion 55 cannot plan as a query either (a scalar subquery
            // correlated by an inequality) fails clearly, committing nothing
            let before = snapshots(&lake, &name).await;
            for statement in [
                format!("UPDATE {t} SET d = (SELECT max(u.d) FROM {t} u WHERE u.id < {t}.id)"),
                format!(
                    "DELETE FROM {t} WHERE d = (SELECT max(u.d) FROM {t} u WHERE u.id < {t}.id)"
                ),
            ] {
                let e = run(&lake.ctx, &statement).await.expect_err(&statement);
                assert!(
                    e.contains(&format!("'ns.{name}'"))
                        && e.contains("correlated subquery")
                        && e.contains("DataFusion 55"),
                    "{statement}: {e}"
                );
            }
            assert_eq!(snapshots(&lake, &name).await, before, "{name}");
        }
    }
}

/// A correlated subquery that is one aggregate row (no `GROUP BY`: one row, on no input
/// too) in a `DELETE`/`UPDATE` condition changes the rows SQL changes: `NOT EXISTS` of it
/// is FALSE, a `COUNT` of no row is 0 (also under `HAVING`), and `NOT IN` of it plans.
/// Before, DataFusion 55's decorrelation found no row for it where no source row matched:
/// the `NOT EXISTS` `DELETE`s deleted ids 2 and 5, the `IN (SELECT count(*) …)` `UPDATE`
/// changed nothing, and the `NOT IN` failed to plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_correlated_one_row_aggregate_subqueries_change_the_rows_sql_changes() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.o1 (k BIGINT, v DOUBLE)").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.o1 VALUES (1, 10.0), (2, NULL), (7, 0.5)",
    )
    .await;
    for (version, mode) in [(2, "copy-on-write"), (3, "merge-on-read")] {
        let name = format!("agg_v{version}");
        let t = format!("ice.ns.{name}");
        subquery_table(
            &lake,
            &name,
            version,
            mode,
            &[
                "(1, 1, 'a', 1.0), (2, NULL, 'a', 2.0), (3, 2, NULL, NULL), (4, 7, 'b', 0.5), \
               (5, 9, 'b', 1.5)",
            ],
        )
        .await;
        for (statement, changed) in [
            // max of no row is one NULL row: it exists for every row
            (
                format!(
                    "DELETE FROM {t} WHERE NOT EXISTS \
                     (SELECT max(v) FROM ice.ns.o1 WHERE o1.k = {t}.k)"
                ),
                0,
            ),
            // id 5: k 9 has no o1 row, a count of 0
            (
                format!(
                    "UPDATE {t} SET s = 'z' WHERE k - 9 IN \
                     (SELECT count(*) FROM ice.ns.o1 WHERE o1.k = {t}.k)"
                ),
                1,
            ),
            // id 1: 1.0 is not 10.0; id 4's 0.5 is; ids 2, 3 and 5 compare with NULL
            (
                format!(
                    "DELETE FROM {t} WHERE d NOT IN \
                     (SELECT max(v) FROM ice.ns.o1 WHERE o1.k = {t}.k)"
                ),
                1,
            ),
            // HAVING: the row is there (count 0) for ids 2 and 5 alone
            (
                format!(
                    "DELETE FROM {t} WHERE NOT EXISTS (SELECT count(*) FROM ice.ns.o1 \
                     WHERE o1.k = {t}.k HAVING count(*) = 0)"
                ),
                2,
            ),
        ] {
            assert_eq!(
                count(&lake.ctx, &statement).await,
                changed,
                "{name}: {statement}"
            );
        }
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+---+---+-----+\n\
             | id | k | s | d   |\n\
             +----+---+---+-----+\n\
             | 2  |   | a | 2.0 |\n\
             | 5  | 9 | z | 1.5 |\n\
             +----+---+---+-----+",
            "{name}"
        );
        other_engines_agree(&lake, &name).await;
    }
}

/// One changelog row: `id`, `s`, `_change_type`, `_change_ordinal`, `_commit_snapshot_id`.
type Change = (i64, String, String, i64, i64);

/// The rows of `q` (columns `id`, `s`, `_change_type`, `_change_ordinal`,
/// `_commit_snapshot_id`), sorted.
async fn changes(lake: &Lake, q: &str) -> Vec<Change> {
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::DataType;
    let batches = run(&lake.ctx, q)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut out = vec![];
    for b in batches {
        let long = |i: usize| cast(b.column(i), &DataType::Int64).expect("cast");
        let text = |i: usize| cast(b.column(i), &DataType::Utf8).expect("cast");
        let (id, s, t, o, sid) = (long(0), text(1), text(2), long(3), long(4));
        let l = |a: &std::sync::Arc<dyn datafusion::arrow::array::Array>, r: usize| {
            a.as_any()
                .downcast_ref::<Int64Array>()
                .expect("long")
                .value(r)
        };
        let st = |a: &std::sync::Arc<dyn datafusion::arrow::array::Array>, r: usize| {
            a.as_any()
                .downcast_ref::<StringArray>()
                .expect("string")
                .value(r)
                .to_string()
        };
        for r in 0..b.num_rows() {
            out.push((l(&id, r), st(&s, r), st(&t, r), l(&o, r), l(&sid, r)));
        }
    }
    out.sort();
    out
}

/// The table's snapshots, oldest first: (id, operation, timestamp ms).
async fn snapshot_list(lake: &Lake, name: &str) -> Vec<(i64, String, i64)> {
    let table = lake
        .catalog
        .load_table(&icefloe::catalog::TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let mut out: Vec<(i64, String, i64)> =
        icefloe::catalog::ancestors(table.metadata(), table.metadata().current_snapshot_id)
            .iter()
            .map(|s| {
                (
                    s.snapshot_id,
                    s.operation().unwrap_or_default().to_string(),
                    s.timestamp_ms,
                )
            })
            .collect();
    out.reverse();
    out
}

type Row = (i64, String);

/// What one snapshot of the model did: the rows of the data files it removed and of
/// those it added (a copy-on-write rewrite carries the unchanged rows of a file over:
/// they are in both); `replace` for a compaction.
#[derive(Debug, Clone)]
struct Step {
    removed: Vec<Row>,
    added: Vec<Row>,
    replace: bool,
}

/// The model table: the rows of each of its data files.
#[derive(Default)]
struct Files(Vec<Vec<Row>>);

impl Files {
    /// An append of one file.
    fn insert(&mut self, rows: &[Row]) -> Step {
        self.0.push(rows.to_vec());
        Step {
            removed: vec![],
            added: rows.to_vec(),
            replace: false,
        }
    }

    /// A copy-on-write `UPDATE`/`DELETE` of the rows with id `id`: every file holding one
    /// is rewritten, that row changed to `to` (`None`: deleted), the others carried over.
    fn rewrite(&mut self, id: i64, to: Option<&str>) -> Step {
        let (hit, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.0)
            .into_iter()
            .partition(|f| f.iter().any(|r| r.0 == id));
        self.0 = kept;
        let removed: Vec<Row> = hit.into_iter().flatten().collect();
        let added: Vec<Row> = removed
            .iter()
            .filter_map(|r| match (r.0 == id, to) {
                (false, _) => Some(r.clone()),
                (true, Some(s)) => Some((id, s.to_string())),
                (true, None) => None,
            })
            .collect();
        self.0.push(added.clone());
        Step {
            removed,
            added,
            replace: false,
        }
    }

    /// A compaction: every file rewritten as one.
    fn compact(&mut self) -> Step {
        let rows: Vec<Row> = std::mem::take(&mut self.0).into_iter().flatten().collect();
        self.0.push(rows.clone());
        Step {
            removed: rows.clone(),
            added: rows,
            replace: true,
        }
    }
}

/// `a` minus `b`, as multisets.
fn minus(a: &[Row], b: &[Row]) -> Vec<Row> {
    let mut left = b.to_vec();
    let mut out = vec![];
    for r in a {
        match left.iter().position(|x| x == r) {
            Some(i) => {
                left.remove(i);
            }
            None => out.push(r.clone()),
        }
    }
    out
}

/// The model of a changelog over snapshots `snaps` made by `steps`: the snapshots after
/// index `from` (exclusive; `None`: from the first) up to index `to`, compactions left
/// out. Each changelog snapshot inserts the rows it added but did not remove (carried
/// over rows are no change) and deletes the reverse; `net` keeps the difference between
/// the range's first and last table states, each row with the last snapshot that wrote
/// it (for an insert; a carry-over rewrite counts, as in Java) or removed it (for a
/// delete); `ids_update` pairs a delete and an insert of one id in one snapshot as an
/// update.
fn model(
    steps: &[Step],
    snaps: &[(i64, String, i64)],
    from: Option<usize>,
    to: usize,
    net: bool,
    ids_update: bool,
) -> Vec<Change> {
    let state = |k: Option<usize>| {
        let mut rows: Vec<Row> = vec![];
        for step in steps.iter().take(k.map_or(0, |k| k + 1)) {
            rows = minus(&rows, &step.removed);
            rows.extend(step.added.iter().cloned());
        }
        rows
    };
    let mut ordinal = 0;
    let mut range = vec![];
    for k in from.map_or(0, |f| f + 1)..=to {
        if !steps[k].replace {
            range.push((ordinal, snaps[k].0, &steps[k]));
            ordinal += 1;
        }
    }
    let mut out = vec![];
    if net {
        let (start, end) = (state(from), state(Some(to)));
        for (rows, kind) in [
            (minus(&end, &start), "INSERT"),
            (minus(&start, &end), "DELETE"),
        ] {
            for r in rows {
                let (o, sid) = range
                    .iter()
                    .rev()
                    .find(|(_, _, step)| {
                        if kind == "INSERT" {
                            &step.added
                        } else {
                            &step.removed
                        }
                        .contains(&r)
                    })
                    .map(|(o, sid, _)| (*o, *sid))
                    .expect("a change");
                out.push((r.0, r.1.clone(), kind.to_string(), o, sid));
            }
        }
    } else {
        for (o, sid, step) in &range {
            let ins = minus(&step.added, &step.removed);
            let del = minus(&step.removed, &step.added);
            for r in &ins {
                let updated = ids_update && del.iter().any(|d| d.0 == r.0);
                let kind = if updated { "UPDATE_AFTER" } else { "INSERT" };
                out.push((r.0, r.1.clone(), kind.to_string(), *o, *sid));
            }
            for r in &del {
                let updated = ids_update && ins.iter().any(|i| i.0 == r.0);
                let kind = if updated { "UPDATE_BEFORE" } else { "DELETE" };
                out.push((r.0, r.1.clone(), kind.to_string(), *o, *sid));
            }
        }
    }
    out.sort();
    out
}

/// `create_changelog_view` over copy-on-write inserts, updates and deletes (whose
/// rewritten files carry unchanged rows over) and a compaction: every change, the net
/// changes, update images, and snapshot and timestamp ranges, each against a model of
/// the table's data files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_changelog_view_matches_a_model_of_the_snapshots() {
    let lake = lake().await;
    mode_table(
        &lake,
        "t",
        "id BIGINT NOT NULL, s STRING",
        "(1, 'a'), (2, 'b')",
        "copy-on-write",
        2,
    )
    .await;
    let row = |id: i64, s: &str| (id, s.to_string());
    let mut files = Files::default();
    let mut steps = vec![files.insert(&[row(1, "a"), row(2, "b")])];
    for statement in [
        "INSERT INTO ice.ns.t VALUES (3, 'c'), (4, 'd')",
        "UPDATE ice.ns.t SET s = 'bb' WHERE id = 2",
        "DELETE FROM ice.ns.t WHERE id = 3",
        "INSERT INTO ice.ns.t VALUES (3, 'c')",
        "DELETE FROM ice.ns.t WHERE id = 1",
        "UPDATE ice.ns.t SET s = 'cc' WHERE id = 3",
        "CALL ice.system.rewrite_data_files(table => 'ns.t', \
         options => map('rewrite-all', 'true'))",
        "INSERT INTO ice.ns.t VALUES (5, 'e')",
    ] {
        ok(&lake.ctx, statement).await;
        // distinct commit times, so timestamp ranges select whole snapshots
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    steps.push(files.insert(&[row(3, "c"), row(4, "d")]));
    steps.push(files.rewrite(2, Some("bb")));
    steps.push(files.rewrite(3, None));
    steps.push(files.insert(&[row(3, "c")]));
    steps.push(files.rewrite(1, None));
    steps.push(files.rewrite(3, Some("cc")));
    steps.push(files.compact());
    steps.push(files.insert(&[row(5, "e")]));
    let snaps = snapshot_list(&lake, "t").await;
    assert_eq!(snaps.len(), steps.len());
    assert_eq!(snaps[7].1, "replace", "{snaps:?}");
    let last = snaps.len() - 1;
    let model = |from, to, net, ids| model(&steps, &snaps, from, to, net, ids);
    let view = "SELECT id, s, _change_type, _change_ordinal, _commit_snapshot_id FROM";

    // every change (default view name), carry-over rows removed
    let result = ok(&lake.ctx, "CALL ice.system.create_changelog_view('ns.t')").await;
    assert!(result.contains("t_changes"), "{result}");
    let all = changes(&lake, &format!("{view} t_changes")).await;
    assert_eq!(all, model(None, last, false, false));
    // the view's columns: the table's, then the three change columns
    let schema = lake
        .ctx
        .table("t_changes")
        .await
        .expect("view")
        .schema()
        .clone();
    let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        columns,
        [
            "id",
            "s",
            "_change_type",
            "_change_ordinal",
            "_commit_snapshot_id"
        ]
    );

    // the changes of view `name` made by the procedure with `args` after the table
    let changelog = |name: &'static str, args: String| {
        let lake = &lake;
        async move {
            ok(
                &lake.ctx,
                &format!(
                    "CALL ice.system.create_changelog_view(table => 'ns.t', \
                     changelog_view => '{name}'{args})"
                ),
            )
            .await;
            changes(lake, &format!("{view} {name}")).await
        }
    };
    let range = |pairs: &[(&str, i64)]| {
        let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("'{k}', '{v}'")).collect();
        format!(", options => map({})", pairs.join(", "))
    };

    // snapshot range: after snapshot 1, up to snapshot 5 (named view, replaced)
    let r = [
        ("start-snapshot-id", snaps[1].0),
        ("end-snapshot-id", snaps[5].0),
    ];
    changelog("r", range(&r)).await;
    assert_eq!(
        changelog("r", range(&r)).await,
        model(Some(1), 5, false, false)
    );
    // end only
    assert_eq!(
        changelog("e", range(&[("end-snapshot-id", snaps[2].0)])).await,
        model(None, 2, false, false)
    );

    // timestamp range: a snapshot committed at the start is out, one at the end is in
    assert_eq!(
        changelog(
            "ts",
            range(&[
                ("start-timestamp", snaps[2].2),
                ("end-timestamp", snaps[6].2)
            ])
        )
        .await,
        model(Some(2), 6, false, false)
    );
    // a start before the first snapshot reads from the beginning
    assert_eq!(
        changelog("ts0", range(&[("start-timestamp", snaps[0].2 - 1000)])).await,
        all
    );
    // a start after the last snapshot: no change
    assert_eq!(
        changelog("ts1", range(&[("start-timestamp", snaps[last].2 + 1000)])).await,
        vec![]
    );

    // net changes over everything and over a range
    assert_eq!(
        changelog("net", ", net_changes => true".to_string()).await,
        model(None, last, true, false)
    );
    let net2 = range(&[
        ("start-snapshot-id", snaps[2].0),
        ("end-snapshot-id", snaps[6].0),
    ]);
    assert_eq!(
        changelog("net2", format!(", net_changes => true{net2}")).await,
        model(Some(2), 6, true, false)
    );

    // update images by the given identifier column, then by the table's identifier field
    let updates = model(None, last, false, true);
    assert_eq!(
        changelog("u", ", identifier_columns => array('id')".to_string()).await,
        updates
    );
    assert!(
        updates.iter().any(|c| c.2 == "UPDATE_BEFORE"),
        "{updates:?}"
    );
    ok(&lake.ctx, "ALTER TABLE ice.ns.t SET IDENTIFIER FIELDS id").await;
    assert_eq!(
        changelog("u2", ", compute_updates => true".to_string()).await,
        updates
    );
}

/// Carry-over removal and net changes compare float and double values as Spark's
/// `ChangelogIterator` (`Objects.equals` of boxed values): a NaN rewritten unchanged is a
/// carry-over, an update from `0.0` to `-0.0` is a change (DataFusion's partitions
/// take the two zeros as one value, which dropped the update).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_changelog_view_float_zeros_and_nan() {
    use datafusion::arrow::array::{Float32Array, Float64Array};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::DataType;
    let lake = lake().await;
    mode_table(
        &lake,
        "fl",
        "id BIGINT NOT NULL, f DOUBLE, g FLOAT",
        "(1, 0.0, 0.0), (2, CAST('NaN' AS DOUBLE), CAST('NaN' AS FLOAT)), (3, 5.0, 5.0)",
        "copy-on-write",
        2,
    )
    .await;
    for statement in [
        "UPDATE ice.ns.fl SET f = CAST('-0.0' AS DOUBLE) WHERE id = 1",
        "UPDATE ice.ns.fl SET g = CAST('-0.0' AS FLOAT) WHERE id = 1",
        "UPDATE ice.ns.fl SET f = CAST('NaN' AS DOUBLE), g = CAST('NaN' AS FLOAT) WHERE id = 2",
    ] {
        ok(&lake.ctx, statement).await;
    }
    let snaps: Vec<i64> = snapshot_list(&lake, "fl")
        .await
        .iter()
        .map(|s| s.0)
        .collect();
    assert_eq!(snaps.len(), 4);
    // the text `changes` reads a double (and a float: the same for these values) as
    let text = |v: f64| {
        let a = cast(&Float64Array::from(vec![v]), &DataType::Utf8).expect("cast");
        let b = cast(&Float32Array::from(vec![v as f32]), &DataType::Utf8).expect("cast");
        assert_eq!(a.as_ref(), b.as_ref());
        a.as_any()
            .downcast_ref::<datafusion::arrow::array::StringArray>()
            .expect("string")
            .value(0)
            .to_string()
    };
    let (zero, neg, nan, five) = (text(0.0), text(-0.0), text(f64::NAN), text(5.0));
    assert_ne!(zero, neg);
    let c = |id: i64, v: &str, t: &str, o: usize| {
        (id, v.to_string(), t.to_string(), o as i64, snaps[o])
    };
    let sorted = |mut v: Vec<Change>| {
        v.sort();
        v
    };
    let view = |col: &str, name: &str| {
        format!("SELECT id, {col}, _change_type, _change_ordinal, _commit_snapshot_id FROM {name}")
    };

    ok(&lake.ctx, "CALL ice.system.create_changelog_view('ns.fl')").await;
    let inserted = || {
        vec![
            c(1, &zero, "INSERT", 0),
            c(2, &nan, "INSERT", 0),
            c(3, &five, "INSERT", 0),
        ]
    };
    // f: 0.0 → -0.0 at 1; the row changes again at 2 (in g); the NaN rewrite at 3 carries over
    let mut f = inserted();
    f.extend([
        c(1, &zero, "DELETE", 1),
        c(1, &neg, "INSERT", 1),
        c(1, &neg, "DELETE", 2),
        c(1, &neg, "INSERT", 2),
    ]);
    assert_eq!(changes(&lake, &view("f", "fl_changes")).await, sorted(f));
    let mut g = inserted();
    g.extend([
        c(1, &zero, "DELETE", 1),
        c(1, &zero, "INSERT", 1),
        c(1, &zero, "DELETE", 2),
        c(1, &neg, "INSERT", 2),
    ]);
    assert_eq!(changes(&lake, &view("g", "fl_changes")).await, sorted(g));

    // update images: the zero changes are updates
    ok(
        &lake.ctx,
        "CALL ice.system.create_changelog_view(table => 'ns.fl', changelog_view => 'u', \
         identifier_columns => array('id'))",
    )
    .await;
    let mut u = inserted();
    u.extend([
        c(1, &zero, "UPDATE_BEFORE", 1),
        c(1, &neg, "UPDATE_AFTER", 1),
        c(1, &neg, "UPDATE_BEFORE", 2),
        c(1, &neg, "UPDATE_AFTER", 2),
    ]);
    assert_eq!(changes(&lake, &view("f", "u")).await, sorted(u));

    // net changes: each row inserted once, last written (carried over) at 3; the row
    // of zeros inserted at 0 is deleted again
    ok(
        &lake.ctx,
        "CALL ice.system.create_changelog_view(table => 'ns.fl', changelog_view => 'n', \
         net_changes => true)",
    )
    .await;
    let net = vec![
        c(1, &neg, "INSERT", 3),
        c(2, &nan, "INSERT", 3),
        c(3, &five, "INSERT", 3),
    ];
    assert_eq!(changes(&lake, &view("g", "n")).await, sorted(net));
}

/// `create_changelog_view`'s refusals: a bad range, conflicting arguments, delete files
/// in the range (merge-on-read), two deleted rows of one identifier when computing
/// updates; none registers a view or commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_changelog_view_refusals() {
    let lake = lake().await;
    mode_table(
        &lake,
        "m",
        "id BIGINT NOT NULL, s STRING",
        "(1, 'a'), (2, 'b')",
        "merge-on-read",
        2,
    )
    .await;
    ok(&lake.ctx, "INSERT INTO ice.ns.m VALUES (3, 'c')").await;
    ok(&lake.ctx, "DELETE FROM ice.ns.m WHERE id = 2").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.m VALUES (4, 'd')").await;
    let snaps = snapshot_list(&lake, "m").await;
    assert_eq!(snaps.len(), 4);
    let before = snapshots(&lake, "m").await;
    let call = |args: String| {
        format!(
            "CALL ice.system.create_changelog_view(table => 'ns.m', changelog_view => 'v'{args})"
        )
    };
    let range = |k: &str, v: String| format!(", options => map('{k}', '{v}')");
    for (args, expected) in [
        // the delete snapshot; also a later one (the delete manifest stays listed)
        (String::new(), format!("snapshot {}", snaps[2].0)),
        (
            range("start-snapshot-id", snaps[2].0.to_string()),
            format!("snapshot {}", snaps[3].0),
        ),
        (
            range("end-snapshot-id", "42".to_string()),
            "Cannot find the end snapshot: 42".to_string(),
        ),
        (
            range("start-snapshot-id", "42".to_string()),
            "42 is not a parent ancestor".to_string(),
        ),
        (
            format!(
                ", options => map('start-snapshot-id', '{}', 'end-snapshot-id', '{}')",
                snaps[1].0, snaps[0].0
            ),
            format!(
                "{} is not a parent ancestor of end snapshot {}",
                snaps[1].0, snaps[0].0
            ),
        ),
        (
            format!(
                ", options => map('start-snapshot-id', '{}', 'start-timestamp', '{}')",
                snaps[0].0, snaps[0].2
            ),
            "Cannot set both start-snapshot-id and start-timestamp".to_string(),
        ),
        (
            format!(
                ", options => map('start-timestamp', '{}', 'end-timestamp', '{}')",
                snaps[1].2, snaps[0].2
            ),
            "start-timestamp".to_string(),
        ),
        (
            range("start-snapshot-id", "x".to_string()),
            "must be a whole number".to_string(),
        ),
        (
            range("branch", "main".to_string()),
            "unknown option 'branch'".to_string(),
        ),
        (
            ", identifier_columns => array('id'), net_changes => true".to_string(),
            "net changes with update images".to_string(),
        ),
        (
            ", compute_updates => true".to_string(),
            "identifier columns are not set".to_string(),
        ),
        (
            ", identifier_columns => array('nope')".to_string(),
            "'nope' is not a top-level column".to_string(),
        ),
    ] {
        let q = call(args);
        let err = run(&lake.ctx, &q).await.expect_err(&q);
        assert!(err.contains(&expected), "{q}: {err}");
        assert!(run(&lake.ctx, "SELECT * FROM v").await.is_err(), "{q}");
    }
    assert_eq!(snapshots(&lake, "m").await, before);
    // a range before the delete snapshot reads
    ok(
        &lake.ctx,
        &call(range("end-snapshot-id", snaps[1].0.to_string())),
    )
    .await;
    assert_eq!(count(&lake.ctx, "SELECT count(*) FROM v").await, 3);

    // one snapshot deleting two rows of one identifier: the update images fail to read
    mode_table(
        &lake,
        "d",
        "id BIGINT NOT NULL, s STRING",
        "(5, 'x'), (5, 'y'), (6, 'z')",
        "copy-on-write",
        2,
    )
    .await;
    ok(&lake.ctx, "DELETE FROM ice.ns.d WHERE id = 5").await;
    ok(
        &lake.ctx,
        "CALL ice.system.create_changelog_view(table => 'ns.d', identifier_columns => array('id'))",
    )
    .await;
    let err = run(&lake.ctx, "SELECT * FROM d_changes")
        .await
        .expect_err("duplicate identifiers");
    assert!(
        err.contains("multiple rows with the same identifier fields([id])"),
        "{err}"
    );
    // without update images the same changes read: 3 inserts, 2 deletes (6 carried over)
    ok(
        &lake.ctx,
        "CALL ice.system.create_changelog_view(table => 'ns.d')",
    )
    .await;
    assert_eq!(
        count(
            &lake.ctx,
            "SELECT count(*) FROM d_changes WHERE _change_type = 'DELETE' AND id = 5"
        )
        .await,
        2
    );
    assert_eq!(count(&lake.ctx, "SELECT count(*) FROM d_changes").await, 5);
    // a table's name is not replaced by a view
    let err = run(
        &lake.ctx,
        "CALL ice.system.create_changelog_view(table => 'ns.d', changelog_view => 'ice.ns.m')",
    )
    .await
    .expect_err("a table's name");
    assert!(err.contains("a table of that name exists"), "{err}");
    assert_eq!(count(&lake.ctx, "SELECT count(*) FROM ice.ns.m").await, 3);

    // rows with a map cannot be compared: refused, naming the column
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.mp (id BIGINT, m MAP<STRING, INT>) \
         TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    let err = run(
        &lake.ctx,
        "CALL ice.system.create_changelog_view(table => 'ns.mp')",
    )
    .await
    .expect_err("a map column");
    assert!(err.contains("map column 'm'"), "{err}");
    assert!(run(&lake.ctx, "SELECT * FROM mp_changes").await.is_err());

    // rows are read in the current schema: a column added later is null in older files
    ok(&lake.ctx, "ALTER TABLE ice.ns.d ADD COLUMN x INT").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.d VALUES (7, 'w', 70)").await;
    ok(
        &lake.ctx,
        "CALL ice.system.create_changelog_view(table => 'ns.d')",
    )
    .await;
    assert_eq!(
        count(
            &lake.ctx,
            "SELECT count(*) FROM d_changes WHERE x IS NULL AND id < 7"
        )
        .await,
        5
    );
    assert_eq!(
        count(
            &lake.ctx,
            "SELECT sum(x) FROM d_changes WHERE id = 7 AND _change_type = 'INSERT' \
             AND _change_ordinal = 2"
        )
        .await,
        70
    );
}

/// `SET` values whose parts have different types (`[1, 2.5]`, `map([...], [1, 2.5])`,
/// `coalesce(1, 2.5)`) are typed as DataFusion types them in a `SELECT` before the
/// column's cast: the check of constant values folded them before type coercion, which
/// panicked in Arrow ("Arrays with inconsistent types passed to MutableArrayData") for the
/// lists, maps and structs, and refused `coalesce` naming a `CASE` the statement did not
/// hold. The values written are the ones `SELECT` computes (and Spark writes): 1.0 and 2.5.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_update_values_of_mixed_types_are_coerced_before_they_are_checked() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = format!("mixed_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        mode_table(
            &lake,
            &name,
            "id INT, d DOUBLE, l ARRAY<DOUBLE>, m MAP<STRING, DOUBLE>, \
             st STRUCT<a: DOUBLE, b: ARRAY<DOUBLE>>",
            "(1, 0.0, NULL, NULL, NULL), (2, 0.0, NULL, NULL, NULL)",
            mode,
            2,
        )
        .await;
        for set in [
            "l = [1, 2.5]",
            "l = make_array(NULL, 2.5, 1)",
            "l = array_concat([1], [2.5])",
            "m = map(['a', 'b'], [1, 2.5])",
            "m = MAP {'a': 1, 'b': 2.5}",
            "st = named_struct('a', 1, 'b', [1, 2.5])",
            "d = coalesce(1, 2.5)",
        ] {
            let statement = format!("UPDATE {t} SET {set} WHERE id = 1");
            assert_eq!(count(&lake.ctx, &statement).await, 1, "{mode}: {statement}");
        }
        // matching no row, the value is still checked and typed, not refused
        assert_eq!(
            count(
                &lake.ctx,
                &format!("UPDATE {t} SET l = [1, 2.5] WHERE id = 9")
            )
            .await,
            0,
            "{mode}"
        );
        let rows = ok(
            &lake.ctx,
            &format!(
                "SELECT id, d, l, m['a'] AS ma, m['b'] AS mb, st.a AS sa, st.b AS sb \
                 FROM {t} ORDER BY id"
            ),
        )
        .await;
        assert_eq!(
            rows,
            "+----+-----+------------+-----+-----+-----+------------+\n\
             | id | d   | l          | ma  | mb  | sa  | sb         |\n\
             +----+-----+------------+-----+-----+-----+------------+\n\
             | 1  | 1.0 | [1.0, 2.5] | 1.0 | 2.5 | 1.0 | [1.0, 2.5] |\n\
             | 2  | 0.0 |            |     |     |     |            |\n\
             +----+-----+------------+-----+-----+-----+------------+",
            "{mode}"
        );
    }
    // a prepared statement's parameter value is checked the same way
    let name = "mixed_prepared";
    mode_table(
        &lake,
        name,
        "id INT, l ARRAY<DOUBLE>",
        "(1, NULL)",
        "merge-on-read",
        2,
    )
    .await;
    ok(
        &lake.ctx,
        &format!("PREPARE p(ARRAY<DOUBLE>) AS UPDATE ice.ns.{name} SET l = $1 WHERE id = 1"),
    )
    .await;
    ok(&lake.ctx, "EXECUTE p([1, 2.5])").await;
    assert_eq!(
        ok(&lake.ctx, &format!("SELECT l FROM ice.ns.{name}")).await,
        "+------------+\n| l          |\n+------------+\n| [1.0, 2.5] |\n+------------+"
    );
}
