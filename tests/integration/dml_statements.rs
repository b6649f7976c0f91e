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
