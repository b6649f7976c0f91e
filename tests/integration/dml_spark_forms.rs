//! Spark SQL forms of row-level statements beyond DataFusion 55's: `MERGE … UPDATE SET *`
//! / `INSERT *`, the `DEFAULT` keyword, a `WITH` before `INSERT`/`MERGE`/`UPDATE`/`DELETE`,
//! uncorrelated scalar subqueries in `MERGE` clauses, `INSERT … PARTITION (p = v)`; and the errors for what a
//! row-level statement cannot do (aggregate and window functions, values that do not fit
//! their column), naming the column or function. Each refused statement commits nothing.

use crate::dml::{lake, mode_table as table, ok, run, snapshot_count as snapshots, Lake};

const MODES: [&str; 2] = ["copy-on-write", "merge-on-read"];

/// `statement` fails with a message holding each of `expected`; the table is unchanged.
async fn refused(lake: &Lake, name: &str, statement: &str, expected: &[&str]) {
    let before = snapshots(lake, name).await;
    let e = run(&lake.ctx, statement).await.expect_err(statement);
    for part in expected {
        assert!(e.contains(part), "{statement}: {e}");
    }
    assert!(e.len() < 600, "{statement}: a long message: {e}");
    assert_eq!(snapshots(lake, name).await, before, "{statement}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_update_set_star_and_insert_star_take_the_source_columns_by_name() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(
            &lake,
            &name,
            "id INT, v INT, w STRING",
            "(1, 1, 'a'), (2, 2, 'b')",
            mode,
            2,
        )
        .await;
        // the source's columns in another order, and one more
        let source = "(SELECT * FROM (VALUES ('x', 10, 1, 0), ('z', 30, 3, 0)) \
                      v(w, v, id, extra)) s";
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING {source} ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+----+---+\n| id | v  | w |\n+----+----+---+\n| 1  | 10 | x |\n\
             | 2  | 2  | b |\n| 3  | 30 | z |\n+----+----+---+",
            "{mode}"
        );
        refused(
            &lake,
            &name,
            &format!(
                "MERGE INTO {t} t USING (SELECT 1 AS id, 5 AS v) s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET *"
            ),
            &[&format!(
                "MERGE into '{t}': UPDATE SET * / INSERT * assign every target column from \
                 the source column of its name, and the source (s) has no column 'w'"
            )],
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_default_keyword_writes_the_columns_default() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(
            &lake,
            &name,
            "id INT, v INT DEFAULT 7, w STRING, st STRUCT<a: INT>",
            "(1, 1, 'a', named_struct('a', 1)), (2, 2, 'b', NULL)",
            mode,
            3,
        )
        .await;
        // a column with a write-default takes it, one without NULL
        ok(
            &lake.ctx,
            &format!("UPDATE {t} SET v = DEFAULT, w = default WHERE id = 1"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (3, DEFAULT, 'c', NULL), (4, 4, DEFAULT, NULL)"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING (SELECT 2 AS id UNION ALL SELECT 5) s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET v = DEFAULT \
                 WHEN NOT MATCHED THEN INSERT (w, id, v) VALUES ('e', s.id, DEFAULT)"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT id, v, w FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+---+---+\n| id | v | w |\n+----+---+---+\n| 1  | 7 |   |\n| 2  | 7 | b |\n\
             | 3  | 7 | c |\n| 4  | 4 |   |\n| 5  | 7 | e |\n+----+---+---+",
            "{mode}"
        );
        let nulls = ok(
            &lake.ctx,
            &format!("SELECT id FROM {t} WHERE w IS NULL ORDER BY id"),
        )
        .await;
        assert_eq!(
            nulls, "+----+\n| id |\n+----+\n| 1  |\n| 4  |\n+----+",
            "{mode}"
        );
        // a struct field's own write-default (v3), NULL for one without: in UPDATE and
        // MERGE, also setting a field of a NULL struct (id 3)
        ok(
            &lake.ctx,
            &format!("ALTER TABLE {t} ADD COLUMN st.c INT DEFAULT 5"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("ALTER TABLE {t} ALTER COLUMN st.c SET DEFAULT 8"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("UPDATE {t} SET st.c = DEFAULT, st.a = DEFAULT WHERE id = 1"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING (SELECT 3 AS id) s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET st.c = DEFAULT"
            ),
        )
        .await;
        assert_eq!(
            ok(
                &lake.ctx,
                &format!(
                    "SELECT id, st.a IS NULL AS a_null, st.c AS c FROM {t} \
                     WHERE id IN (1, 3, 4) ORDER BY id"
                ),
            )
            .await,
            ok(
                &lake.ctx,
                "SELECT * FROM (VALUES (1, true, 8), (3, true, 8), (4, true, NULL)) \
                 AS v(id, a_null, c)"
            )
            .await,
            "{mode}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_with_before_merge_update_and_delete() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(
            &lake,
            &name,
            "id INT, v INT",
            "(1, 10), (2, 20), (3, 30), (4, 40)",
            mode,
            2,
        )
        .await;
        // a CTE as the source, one CTE reading another, CTEs in scalar subqueries
        ok(
            &lake.ctx,
            &format!(
                "WITH a AS (SELECT 1 AS id, 11 AS v), b AS (SELECT id + 4 AS id, v FROM a) \
                 MERGE INTO {t} t USING (SELECT * FROM a UNION ALL SELECT * FROM b) s \
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v \
                 WHEN NOT MATCHED THEN INSERT VALUES (s.id, (SELECT max(v) FROM b))"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "WITH s AS (SELECT 2 AS id) MERGE INTO {t} t USING s ON t.id = s.id \
                 WHEN MATCHED THEN DELETE"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "WITH m AS (SELECT max(id) AS id FROM {t}) \
                 UPDATE {t} SET v = 0 WHERE id = (SELECT id FROM m)"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "WITH m AS (SELECT min(id) + 2 AS id FROM {t}) \
                 DELETE FROM {t} AS x WHERE x.id = (SELECT id FROM m)"
            ),
        )
        .await;
        // Spark's `UPDATE SET *` / `INSERT *` after a `WITH` (a raw parser error before:
        // the stars were marked only in a statement starting with MERGE; tester Y66)
        ok(
            &lake.ctx,
            &format!(
                "WITH s AS (SELECT 4 AS id, 44 AS v UNION ALL SELECT 6, 66) \
                 MERGE INTO {t} t USING s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+----+\n| id | v  |\n+----+----+\n| 1  | 11 |\n| 4  | 44 |\n| 5  | 0  |\n\
             | 6  | 66 |\n+----+----+",
            "{mode}"
        );
        refused(
            &lake,
            &name,
            &format!("WITH RECURSIVE m AS (SELECT 1 AS id) DELETE FROM {t} WHERE id = 1"),
            &["WITH RECURSIVE before DELETE is not supported"],
        )
        .await;
        refused(
            &lake,
            &name,
            "WITH m AS (SELECT 1 AS id) DELETE FROM m",
            &["DELETE of 'm': it is a common table expression"],
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_runs_uncorrelated_scalar_subqueries_once() {
    let lake = lake().await;
    for mode in MODES {
        let name = mode.replace('-', "_");
        let t = format!("ice.ns.{name}");
        table(&lake, &name, "id INT, v INT", "(1, 10), (2, 20)", mode, 2).await;
        ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING (SELECT 1 AS id UNION ALL SELECT 3) s ON t.id = s.id \
                 WHEN MATCHED AND t.v < (SELECT max(v) FROM {t}) \
                 THEN UPDATE SET v = (SELECT sum(v) FROM {t}) \
                 WHEN NOT MATCHED THEN INSERT VALUES (s.id, (SELECT count(*) FROM {t})) \
                 WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = (SELECT min(v) FROM {t})"
            ),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+----+\n| id | v  |\n+----+----+\n| 1  | 30 |\n| 2  | 10 |\n| 3  | 2  |\n\
             +----+----+",
            "{mode}"
        );
        for (clauses, expected) in [
            (
                format!("WHEN MATCHED AND t.id IN (SELECT id FROM {t}) THEN DELETE"),
                "a correlated subquery, IN (SELECT …) or EXISTS in a WHEN clause is not \
                 supported",
            ),
            (
                format!("WHEN MATCHED THEN UPDATE SET v = (SELECT id FROM {t})"),
                "a scalar subquery returned 3 rows",
            ),
        ] {
            refused(
                &lake,
                &name,
                &format!("MERGE INTO {t} t USING (SELECT 1 AS id) s ON t.id = s.id {clauses}"),
                &["MERGE", expected],
            )
            .await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_errors_name_the_column_or_function() {
    let lake = lake().await;
    let t = "ice.ns.t";
    table(
        &lake,
        "t",
        "id INT, i INT, l BIGINT, d DOUBLE, s STRING, dt DATE",
        "(1, 1, 1, 1.0, 'xx', DATE '2024-01-01')",
        "copy-on-write",
        2,
    )
    .await;
    for (statement, expected) in [
        (
            format!("UPDATE {t} SET l = 1, i = 3000000000"),
            vec![
                "UPDATE SET of 'ice.ns.t': cannot set column 'i' (Int32)",
                "Can't cast value 3000000000 to type Int32",
            ],
        ),
        (
            format!("UPDATE {t} SET dt = '2024-02-30'"),
            vec!["cannot set column 'dt' (Date32)", "'2024-02-30'"],
        ),
        (
            format!("UPDATE {t} SET i = l + 2147483647"),
            vec!["UPDATE of 'ns.t': computing the value of column 'i'"],
        ),
        (
            format!("UPDATE {t} SET d = s || s"),
            vec!["computing the value of column 'd'"],
        ),
        (
            format!(
                "MERGE INTO {t} t USING (SELECT 1 AS id, 3000000000 AS big) s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET i = s.big"
            ),
            vec!["MERGE into 'ns.t': computing the value of column 'i'"],
        ),
        (
            format!("UPDATE {t} SET i = sum(i)"),
            vec!["aggregate function 'sum' in UPDATE SET or WHERE of 'ice.ns.t'"],
        ),
        (
            format!("DELETE FROM {t} x WHERE x.d > AVG(x.d)"),
            vec!["aggregate function 'avg' in DELETE … WHERE of 'ice.ns.t'"],
        ),
        (
            format!("UPDATE {t} SET i = row_number() OVER (ORDER BY id)"),
            vec!["window function 'row_number' in UPDATE SET or WHERE"],
        ),
        (
            format!(
                "MERGE INTO {t} t USING (SELECT 1 AS id) s ON t.id = s.id \
                 WHEN MATCHED AND sum(t.i) > 0 THEN DELETE"
            ),
            vec!["aggregate function 'sum' in MERGE into 'ice.ns.t'"],
        ),
    ] {
        refused(&lake, "t", &statement, &expected).await;
    }
    // inside a subquery an aggregate is the subquery's own
    ok(
        &lake.ctx,
        &format!("UPDATE {t} SET i = (SELECT sum(i) + 1 FROM {t})"),
    )
    .await;
    let rows = ok(&lake.ctx, &format!("SELECT i FROM {t}")).await;
    assert_eq!(rows, "+---+\n| i |\n+---+\n| 2 |\n+---+");
}

/// The rows of `ice.ns.<name>` as `id|s|p|d` lines ordered by id.
/// Spark's `WITH … INSERT INTO|OVERWRITE …`: the CTEs are in scope of the whole query
/// written (its subqueries and `VALUES` too), a name the query defines again shadows the
/// outer one, and a partition clause and `INSERT OVERWRITE` keep their meaning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_with_before_insert() {
    let lake = lake().await;
    table(&lake, "wi", "id INT, v INT", "(1, 10)", "merge-on-read", 2).await;
    let t = "ice.ns.wi";
    for statement in [
        // one CTE reading another, in a set operation
        format!(
            "WITH a AS (SELECT 2 AS id, 20 AS v), b AS (SELECT id + 1 AS id, v + 10 AS v FROM a) \
             INSERT INTO {t} SELECT * FROM a UNION ALL SELECT * FROM b"
        ),
        // in a scalar subquery of `VALUES`, with a column list
        format!(
            "WITH m AS (SELECT max(id) AS id FROM {t}) \
             INSERT INTO {t} (v, id) VALUES (40, (SELECT id FROM m) + 1)"
        ),
        format!("WITH m AS (SELECT 0 AS z) INSERT INTO {t} VALUES (4, 40)"),
        // the query's own WITH shadows the outer name and can read the outer CTEs
        format!(
            "WITH a AS (SELECT 99 AS id, 0 AS v), c AS (SELECT 6 AS id) \
             INSERT INTO TABLE {t} WITH a AS (SELECT id - 1 AS id, 50 AS v FROM c) \
             SELECT * FROM a"
        ),
    ] {
        ok(&lake.ctx, &statement).await;
    }
    let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY id")).await;
    assert_eq!(
        rows,
        "+----+----+\n| id | v  |\n+----+----+\n| 1  | 10 |\n| 2  | 20 |\n| 3  | 30 |\n\
         | 4  | 40 |\n| 4  | 40 |\n| 5  | 50 |\n+----+----+"
    );
    // with a partition clause: a static overwrite replaces only the rows of its value
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.wp (id INT, p STRING) PARTITIONED BY (p) \
         TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.wp VALUES (1, 'x'), (2, 'x'), (3, 'y')",
    )
    .await;
    ok(
        &lake.ctx,
        "WITH q AS (SELECT 7 AS id) INSERT OVERWRITE ice.ns.wp PARTITION (p = 'x') \
         SELECT id FROM q",
    )
    .await;
    let rows = ok(&lake.ctx, "SELECT * FROM ice.ns.wp ORDER BY id").await;
    assert_eq!(
        rows,
        "+----+---+\n| id | p |\n+----+---+\n| 3  | y |\n| 7  | x |\n+----+---+"
    );
    // Spark's order, the column list after the clause, after a WITH too (tester N64's
    // fault 3: a parser error)
    for verb in ["INSERT OVERWRITE", "INSERT INTO"] {
        ok(
            &lake.ctx,
            &format!(
                "WITH q AS (SELECT 'z' AS p, 8 AS id) {verb} ice.ns.wp PARTITION (p = 'y') (id) \
                 SELECT id FROM q"
            ),
        )
        .await;
    }
    let rows = ok(&lake.ctx, "SELECT * FROM ice.ns.wp ORDER BY id").await;
    assert_eq!(
        rows,
        "+----+---+\n| id | p |\n+----+---+\n| 7  | x |\n| 8  | y |\n| 8  | y |\n+----+---+"
    );
    refused(
        &lake,
        "wi",
        &format!("WITH RECURSIVE m AS (SELECT 1 AS id) INSERT INTO {t} SELECT id, 0 FROM m"),
        &["WITH RECURSIVE before INSERT is not supported"],
    )
    .await;
    refused(
        &lake,
        "wi",
        "WITH m AS (SELECT 1 AS id) INSERT INTO m VALUES (2)",
        &["INSERT of 'm': it is a common table expression"],
    )
    .await;
}

/// An `INSERT`'s query fills the columns by position, as in Spark and DuckDB: columns
/// sharing a name (DataFusion 55 refused them: "Projections require unique expression
/// names") and a `UNION` DataFusion types wider than the column (its insert cast was
/// dropped: "Arrow type Int64 does not cast losslessly") are written; a value out of the
/// column's range is refused, naming the column, and commits nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_select_fills_columns_by_position_whatever_their_names() {
    let lake = lake().await;
    table(&lake, "ip", "a INT, b INT", "(0, 0)", "copy-on-write", 2).await;
    table(&lake, "src", "a INT", "(7)", "copy-on-write", 2).await;
    let t = "ice.ns.ip";
    for statement in [
        format!("INSERT INTO {t} SELECT 1, 1"),
        format!("INSERT INTO {t} (b, a) SELECT 2, 3"),
        format!("INSERT INTO {t} SELECT a, a FROM ice.ns.src"),
        format!("INSERT INTO {t} SELECT s.a, a + 1 FROM ice.ns.src s UNION ALL SELECT 5, 5"),
        format!("INSERT INTO {t} SELECT 10 AS column2, 11"),
        format!("INSERT INTO {t} SELECT a, 30 FROM ice.ns.src UNION ALL SELECT 20, 21"),
    ] {
        ok(&lake.ctx, &statement).await;
    }
    let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY a, b")).await;
    assert_eq!(
        rows,
        "+----+----+\n| a  | b  |\n+----+----+\n| 0  | 0  |\n| 1  | 1  |\n| 3  | 2  |\n\
         | 5  | 5  |\n| 7  | 7  |\n| 7  | 8  |\n| 7  | 30 |\n| 10 | 11 |\n| 20 | 21 |\n\
         +----+----+"
    );
    refused(
        &lake,
        "ip",
        &format!("INSERT INTO {t} SELECT a, a FROM ice.ns.src UNION ALL SELECT 1, 3000000000"),
        &["column 'b'"],
    )
    .await;
    // the first of the repeated columns keeps its name, so `ORDER BY`, `HAVING` and a
    // `UNION`'s names read what they read in the query (a tester's: renaming `b` after
    // the column it fills, `a`, made `ORDER BY a … LIMIT 1` pick other rows); expected
    // rows as DuckDB gives them
    table(
        &lake,
        "s2",
        "a INT, b INT",
        "(1, 9), (2, 8)",
        "copy-on-write",
        2,
    )
    .await;
    table(
        &lake,
        "g",
        "a INT, b INT, d BIGINT",
        "(0, 0, 0)",
        "copy-on-write",
        2,
    )
    .await;
    for statement in [
        "INSERT INTO ice.ns.g (a, b, d) SELECT b, b, a FROM ice.ns.s2 ORDER BY a DESC LIMIT 1",
        "INSERT INTO ice.ns.g (a, b, d) SELECT b, b, a FROM ice.ns.s2 \
         UNION ALL SELECT a, a, b FROM ice.ns.s2 ORDER BY a DESC LIMIT 1",
        "INSERT INTO ice.ns.g (a, b, d) SELECT max(b), max(b), a FROM ice.ns.s2 GROUP BY a \
         HAVING max(b) > 0 ORDER BY a LIMIT 1",
        "INSERT INTO ice.ns.g SELECT b, b, a FROM ice.ns.s2 \
         UNION ALL SELECT a, a, b FROM ice.ns.s2 ORDER BY a DESC LIMIT 1",
    ] {
        ok(&lake.ctx, statement).await;
    }
    let rows = ok(&lake.ctx, "SELECT * FROM ice.ns.g ORDER BY a, b, d").await;
    assert_eq!(
        rows,
        "+---+---+---+\n| a | b | d |\n+---+---+---+\n| 0 | 0 | 0 |\n| 1 | 1 | 9 |\n\
         | 1 | 1 | 9 |\n| 8 | 8 | 2 |\n| 9 | 9 | 1 |\n+---+---+---+"
    );
}

/// An `INSERT` whose query selects from an inline `VALUES` fills the columns by position
/// too: `SELECT 1, 1 FROM (VALUES (5)) v(x)` was refused ("Projections require unique
/// expression names") where `SELECT 1, 1` and `SELECT 1, 1 FROM t` ran (a tester's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_select_from_inline_values_fills_columns_by_position() {
    let lake = lake().await;
    table(&lake, "two", "a INT, b INT", "(0, 0)", "copy-on-write", 2).await;
    let t = "ice.ns.two";
    for statement in [
        format!("INSERT INTO {t} SELECT 1, 1 FROM (VALUES (5)) v(x)"),
        format!("INSERT INTO {t} SELECT x, x FROM (VALUES (2), (3)) v(x) WHERE x > 2"),
        format!("INSERT INTO {t} (b, a) SELECT 4, 4 FROM (VALUES (5)) v(x)"),
    ] {
        ok(&lake.ctx, &statement).await;
    }
    let rows = ok(&lake.ctx, &format!("SELECT * FROM {t} ORDER BY a, b")).await;
    assert_eq!(
        rows,
        "+---+---+\n| a | b |\n+---+---+\n| 0 | 0 |\n| 1 | 1 |\n| 3 | 3 |\n| 4 | 4 |\n\
         +---+---+"
    );
}

/// A value an `INSERT … SELECT` reads from a table that its column cannot hold is
/// refused naming the target table and column, as the `VALUES` form names them, not
/// blamed on the source table's data file ("invalid data: cannot read data file …", a
/// tester's): a `BIGINT` out of an `INT`'s range (Spark's ANSI store assignment), a
/// decimal too large for the column's precision, at the top level and in a struct.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_select_values_that_do_not_fit_name_the_target_column() {
    let lake = lake().await;
    table(
        &lake,
        "src",
        "id INT, x BIGINT, dd DECIMAL(10,3)",
        "(1, 3000000000, 12345.678)",
        "copy-on-write",
        2,
    )
    .await;
    table(
        &lake,
        "dst",
        "i INT, d DECIMAL(5,2), st STRUCT<d: DECIMAL(5,2)>",
        "(0, 0, NULL)",
        "copy-on-write",
        2,
    )
    .await;
    for (statement, expected) in [
        (
            "INSERT INTO ice.ns.dst SELECT x, 1, NULL FROM ice.ns.src",
            vec![
                "INSERT INTO 'ice.ns.dst': cannot set column 'i' (Int32): ",
                "Can't cast value 3000000000 to type Int32",
            ],
        ),
        (
            "INSERT INTO ice.ns.dst VALUES (3000000000, 1, NULL)",
            vec!["INSERT INTO 'ice.ns.dst': cannot set column 'i' (Int32): "],
        ),
        (
            "INSERT INTO ice.ns.dst SELECT 1, dd, NULL FROM ice.ns.src",
            vec![
                "INSERT INTO 'ice.ns.dst': cannot set column 'd' (Decimal128(5, 2)): ",
                "12345.68 is too large to store in a Decimal128 of precision 5",
            ],
        ),
        (
            "INSERT INTO ice.ns.dst SELECT 1, 1, named_struct('d', dd) FROM ice.ns.src",
            vec![
                "INSERT INTO 'ice.ns.dst': cannot set column 'st'",
                "12345.68 is too large to store in a Decimal128 of precision 5",
            ],
        ),
    ] {
        refused(&lake, "dst", statement, &expected).await;
        let e = run(&lake.ctx, statement).await.expect_err(statement);
        assert!(
            !e.contains("cannot read data file") && !e.contains("invalid data"),
            "{statement}: {e}"
        );
    }
    // values that fit are written, cast as before
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.dst SELECT id, dd / 100, named_struct('d', dd / 1000) \
         FROM ice.ns.src",
    )
    .await;
    let rows = ok(&lake.ctx, "SELECT * FROM ice.ns.dst ORDER BY i").await;
    assert_eq!(
        rows,
        "+---+--------+------------+\n| i | d      | st         |\n+---+--------+------------+\n\
         | 0 | 0.00   |            |\n| 1 | 123.46 | {d: 12.35} |\n+---+--------+------------+"
    );
}

async fn rows_of(lake: &Lake, name: &str) -> Vec<String> {
    let text = ok(
        &lake.ctx,
        &format!(
            "SELECT concat_ws('|', CAST(id AS STRING), coalesce(s, 'NULL'), \
             coalesce(p, 'NULL'), coalesce(CAST(d AS STRING), 'NULL')) AS r \
             FROM ice.ns.{name} ORDER BY id"
        ),
    )
    .await;
    text.lines()
        .filter(|l| l.starts_with("| ") && !l.contains(" r "))
        .map(|l| l.trim_matches(|c| c == '|' || c == ' ').to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_partition_clause_writes_static_values_and_overwrites_only_their_rows() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.sp (id BIGINT, s STRING, p STRING, d DATE) \
         PARTITIONED BY (p, d) TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    // static values fill their columns; the query gives the others in table order, a
    // dynamic partition column among them; a column list names what the query gives
    for statement in [
        "INSERT INTO ice.ns.sp PARTITION (p = 'x', d = '2024-01-01') VALUES (1, 'a'), (2, 'b')",
        "INSERT INTO TABLE ice.ns.sp PARTITION (p = 'y', d) SELECT 3, 'c', DATE '2024-01-02'",
        "INSERT INTO ice.ns.sp PARTITION (P = 'x', d = DATE '2024-01-02') \
         SELECT 4, 'd' UNION ALL SELECT 5, 'e'",
        "INSERT INTO ice.ns.sp (id) PARTITION (p = NULL) VALUES (6)",
        "INSERT INTO ice.ns.sp (d, id) PARTITION (p = 'z') VALUES (DATE '2024-01-03', 7)",
        // Spark's order: the column list after the clause
        "INSERT INTO ice.ns.sp PARTITION (p = 'z', d) (d, id) VALUES (DATE '2024-01-04', 9)",
        "INSERT INTO TABLE ice.ns.sp PARTITION (p = 'w') (id, s) \
         SELECT 10, 'j' UNION ALL (SELECT 11, 'k')",
        // VALUES with ORDER BY / LIMIT, in set operations, in parentheses
        "INSERT INTO ice.ns.sp PARTITION (p = 'v', d = '2024-01-05') \
         VALUES (13, 'm'), (12, 'l') ORDER BY 1 LIMIT 1",
        "INSERT INTO ice.ns.sp PARTITION (p = 'v', d = '2024-01-05') \
         VALUES (14, 'n') UNION ALL (VALUES (15, 'o')) EXCEPT SELECT 15, 'o'",
    ] {
        ok(&lake.ctx, statement).await;
    }
    assert_eq!(
        rows_of(&lake, "sp").await,
        [
            "1|a|x|2024-01-01",
            "2|b|x|2024-01-01",
            "3|c|y|2024-01-02",
            "4|d|x|2024-01-02",
            "5|e|x|2024-01-02",
            "6|NULL|NULL|NULL",
            "7|NULL|z|2024-01-03",
            "9|NULL|z|2024-01-04",
            "10|j|w|NULL",
            "11|k|w|NULL",
            "12|l|v|2024-01-05",
            "14|n|v|2024-01-05",
        ]
    );
    ok(&lake.ctx, "DELETE FROM ice.ns.sp WHERE id >= 9").await;
    // a static overwrite replaces the rows where every static column has its value, and
    // no other partition (Spark's `OverwriteByExpression`); NULL is matched by IS NULL
    ok(
        &lake.ctx,
        "INSERT OVERWRITE TABLE ice.ns.sp PARTITION (p = 'x', d = '2024-01-01') \
         SELECT id * 10, s FROM ice.ns.sp WHERE p = 'y'",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.sp PARTITION (p = NULL) VALUES (60, 'n', NULL)",
    )
    .await;
    assert_eq!(
        rows_of(&lake, "sp").await,
        [
            "3|c|y|2024-01-02",
            "4|d|x|2024-01-02",
            "5|e|x|2024-01-02",
            "7|NULL|z|2024-01-03",
            "30|c|x|2024-01-01",
            "60|n|NULL|NULL",
        ]
    );
    let removed = ok(
        &lake.ctx,
        "SELECT operation, summary['deleted-data-files'] AS removed, \
         summary['added-data-files'] AS added FROM ice.ns.\"sp$snapshots\" \
         WHERE operation <> 'append'",
    )
    .await;
    // each overwrite removed its one file and added one
    assert_eq!(
        removed.matches("| overwrite | 1       | 1     |").count(),
        2,
        "{removed}"
    );
    // one static column of two: every day of partition p = 'x' is replaced; an empty
    // query still removes them (static overwrite)
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.sp PARTITION (p = 'x') SELECT id, s, d FROM ice.ns.sp WHERE false",
    )
    .await;
    assert_eq!(
        rows_of(&lake, "sp").await,
        ["3|c|y|2024-01-02", "7|NULL|z|2024-01-03", "60|n|NULL|NULL"]
    );
    // dynamic mode: the partitions the rows fall in, as without the clause
    ok(
        &lake.ctx,
        "SET icefloe.partition_overwrite_mode = 'dynamic'",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.sp PARTITION (p = 'y') VALUES (8, 'h', DATE '2024-01-09')",
    )
    .await;
    ok(&lake.ctx, "SET icefloe.partition_overwrite_mode = 'static'").await;
    assert_eq!(
        rows_of(&lake, "sp").await,
        [
            "3|c|y|2024-01-02",
            "7|NULL|z|2024-01-03",
            "8|h|y|2024-01-09",
            "60|n|NULL|NULL",
        ]
    );

    // refused, naming the column, committing nothing
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.hidden (id BIGINT, s STRING, ts TIMESTAMP) \
         PARTITIONED BY (days(ts))",
    )
    .await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.flat (id BIGINT, s STRING)").await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.np (id INT, st STRUCT<a INT>) PARTITIONED BY (st.a)",
    )
    .await;
    let nested = "'st.a' is not an identity partition column of the table (its identity \
                  partition columns: none); its identity partitions of nested fields (st.a) \
                  cannot be named in a PARTITION clause, as in Spark";
    for (name, statement, expected) in [
        (
            "np",
            "INSERT OVERWRITE ice.ns.np PARTITION (`st.a` = 6) SELECT 1, named_struct('a', 6)",
            &[nested][..],
        ),
        (
            "np",
            "INSERT OVERWRITE ice.ns.np PARTITION (st.a = 6) SELECT 1, named_struct('a', 6)",
            &[nested][..],
        ),
        (
            "np",
            "INSERT INTO ice.ns.np PARTITION (st.a) SELECT 1, named_struct('a', 6)",
            &[nested][..],
        ),
        (
            "sp",
            "INSERT INTO ice.ns.sp PARTITION (s = 'a') VALUES (1, 'x', NULL)",
            &["'s' is not an identity partition column", "p, d"][..],
        ),
        (
            "sp",
            "INSERT INTO ice.ns.sp PARTITION (nope = 'a') VALUES (1, 'x', NULL)",
            &["'nope' is not an identity partition column"][..],
        ),
        (
            "hidden",
            "INSERT INTO ice.ns.hidden PARTITION (ts = '2024-01-01') VALUES (1, 'a')",
            &["'ts' is not an identity partition column", "none"][..],
        ),
        (
            "flat",
            "INSERT INTO ice.ns.flat PARTITION (s = 'a') VALUES (1)",
            &["'s' is not an identity partition column", "none"][..],
        ),
        (
            "sp",
            "INSERT INTO ice.ns.sp PARTITION (p = 'x', p = 'y') VALUES (1, 'a', NULL)",
            &["'p' is given twice"][..],
        ),
        (
            "sp",
            "INSERT INTO ice.ns.sp PARTITION (p = lower('X')) VALUES (1, 'a', NULL)",
            &["partition column 'p' must be a literal"][..],
        ),
        (
            "sp",
            "INSERT INTO ice.ns.sp (id, p) PARTITION (p = 'x') VALUES (1, 'a')",
            &["static partition column 'p' is also in the column list"][..],
        ),
        (
            "sp",
            "INSERT OVERWRITE ice.ns.sp PARTITION (d = 'not a date') VALUES (1, 'a', 'x')",
            &["partition column 'd'"][..],
        ),
    ] {
        refused(&lake, name, statement, expected).await;
    }
    // a file written before `s` was a partition column matches `s = 'a'` only in part:
    // Java's `overwriteByRowFilter` fails the commit, and so does this
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.flat VALUES (1, 'a'), (2, 'b')",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.flat VALUES (5, 'z'), (6, 'z')",
    )
    .await;
    ok(&lake.ctx, "ALTER TABLE ice.ns.flat ADD PARTITION FIELD s").await;
    refused(
        &lake,
        "flat",
        "INSERT OVERWRITE ice.ns.flat PARTITION (s = 'a') VALUES (3)",
        &["may match only in part: neither its partition values nor its column metrics"],
    )
    .await;
    let ids = |ids: &[i64]| {
        let mut t = "+----+\n| id |\n+----+\n".to_string();
        for id in ids {
            t += &format!("| {id:<2} |\n");
        }
        t + "+----+"
    };
    let read = "SELECT id FROM ice.ns.flat ORDER BY id";
    assert_eq!(ok(&lake.ctx, read).await, ids(&[1, 2, 5, 6]));
    // but where those files' column metrics decide, they decide, as Java's
    // `ManifestFilterManager` asks `InclusiveMetricsEvaluator` and
    // `StrictMetricsEvaluator` (a tester's): no row of either old file has `s = 'q'`, and
    // every row of the second has `s = 'z'`
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.flat PARTITION (s = 'q') VALUES (7)",
    )
    .await;
    assert_eq!(ok(&lake.ctx, read).await, ids(&[1, 2, 5, 6, 7]));
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.flat PARTITION (s = 'z') VALUES (8)",
    )
    .await;
    assert_eq!(ok(&lake.ctx, read).await, ids(&[1, 2, 7, 8]));
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT summary['deleted-data-files'] AS d FROM ice.ns.\"flat$snapshots\" \
             ORDER BY committed_at DESC LIMIT 1"
        )
        .await,
        "+---+\n| d |\n+---+\n| 1 |\n+---+"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_partition_clause_takes_uuid_text_for_static_and_query_columns() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.up (k UUID, id BIGINT, u UUID) PARTITIONED BY (k)",
    )
    .await;
    let (k1, k2) = (
        "f79c3e09-677c-4bbd-a479-3f349cb785e7",
        "a79c3e09-677c-4bbd-a479-3f349cb785e7",
    );
    let u = "0e8400e2-9b41-4d4a-8716-446655440000";
    // the static value is the uuid's text, as Spark shows a uuid; the query's text
    // values are written to the columns after the static one (`u`, not `k`)
    for statement in [
        format!("INSERT INTO ice.ns.up PARTITION (k = '{k1}') VALUES (1, '{u}'), (2, NULL)"),
        format!("INSERT INTO ice.ns.up PARTITION (K = '{k2}') SELECT 3, '{u}'"),
        format!("INSERT INTO ice.ns.up (u, id) PARTITION (k = '{k2}') VALUES ('{u}', 4)"),
    ] {
        ok(&lake.ctx, &statement).await;
    }
    let rows = || async {
        ok(
            &lake.ctx,
            "SELECT id, CAST(k AS STRING) AS k, coalesce(CAST(u AS STRING), 'NULL') AS u \
             FROM ice.ns.up ORDER BY id",
        )
        .await
    };
    let before = rows().await;
    for (id, k, value) in [(1, k1, u), (2, k1, "NULL"), (3, k2, u), (4, k2, u)] {
        assert!(
            before.contains(&format!("| {id}  | {k} | {value}")),
            "{id}: {before}"
        );
    }
    // a static overwrite replaces the rows of that uuid alone
    ok(
        &lake.ctx,
        &format!("INSERT OVERWRITE ice.ns.up PARTITION (k = '{k1}') SELECT 5, NULL"),
    )
    .await;
    let after = rows().await;
    assert_eq!(after.matches(k1).count(), 1, "{after}");
    assert!(after.contains(&format!("| 5  | {k1} |")), "{after}");
    assert_eq!(after.matches(k2).count(), 2, "{after}");
    assert!(
        !after.contains("| 1 ") && !after.contains("| 2 "),
        "{after}"
    );
    // a text that is no uuid is refused naming the column
    refused(
        &lake,
        "up",
        "INSERT OVERWRITE ice.ns.up PARTITION (k = 'nope') SELECT 6, NULL",
        &["'nope' is not a UUID", "uuid column 'k'"],
    )
    .await;
}

/// Tester N64's fault 1: a static `INSERT OVERWRITE … PARTITION (c = v)` converted `v`
/// for the rows it replaces with Arrow's cast, and for the rows it writes as the `INSERT`
/// does (the session zone for `timestamptz`, Spark's reading of date text, nanoseconds
/// floored): it replaced another partition's rows and kept those it was meant to replace.
/// Both now take the written value; a value only the write path reads (`'2024'` into a
/// date) no longer fails either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_overwrite_partition_replaces_the_partition_its_rows_are_written_to() {
    let lake = lake().await;
    let ids = |text: String| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("| ") && !l.contains(" id "))
            .map(|l| l.trim_matches(|c| c == '|' || c == ' ').to_string())
            .collect()
    };
    let cases = [
        (
            "tz TIMESTAMPTZ",
            "(1, TIMESTAMPTZ '2024-01-01 00:00:00Z'), (2, TIMESTAMPTZ '2024-01-01 01:00:00Z')",
            "Europe/Paris",
            // Paris 01:00 is 00:00Z: row 1's partition
            vec![
                "tz = '2024-01-01 01:00:00'",
                "tz = TIMESTAMP '2024-01-01 01:00:00'",
            ],
            vec!["2 | 2024-01-01T01:00:00Z", "100 | 2024-01-01T00:00:00Z"],
        ),
        (
            "ts TIMESTAMP_NTZ",
            "(1, TIMESTAMP '2024-01-01 00:00:00'), (2, TIMESTAMP '2024-01-01 01:00:00')",
            "Europe/Paris",
            // 00:00Z is 01:00 on a Paris wall clock: row 2's partition
            vec!["ts = TIMESTAMPTZ '2024-01-01 00:00:00Z'"],
            vec!["1 | 2024-01-01T00:00:00", "100 | 2024-01-01T01:00:00"],
        ),
        (
            "dt DATE",
            "(1, DATE '2024-01-05'), (2, DATE '2024-01-06')",
            "UTC",
            // the date written, not the instant's UTC date (2024-01-06)
            vec!["dt = '2024-01-05 23:30:00-05:00'"],
            vec!["2 | 2024-01-06", "100 | 2024-01-05"],
        ),
        (
            "dt DATE",
            "(1, DATE '2024-01-01'), (2, DATE '2024-01-06')",
            "UTC",
            vec!["dt = '2024'"],
            vec!["2 | 2024-01-06", "100 | 2024-01-01"],
        ),
        (
            "ts TIMESTAMP_NTZ",
            "(1, TIMESTAMP '1969-12-31 23:59:59.999999'), (2, TIMESTAMP '1970-01-01 00:00:00')",
            "UTC",
            // floored to …59.999999, as written
            vec!["ts = TIMESTAMP '1969-12-31 23:59:59.9999995'"],
            vec![
                "2 | 1970-01-01T00:00:00",
                "100 | 1969-12-31T23:59:59.999999",
            ],
        ),
    ];
    for (i, (column, rows, zone, clauses, want)) in cases.into_iter().enumerate() {
        let c = column.split(' ').next().unwrap_or_default();
        for clause in clauses {
            let t = format!("ice.ns.zp{i}");
            ok(&lake.ctx, &format!("DROP TABLE IF EXISTS {t}")).await;
            ok(
                &lake.ctx,
                &format!("CREATE TABLE {t} (id INT, {column}) PARTITIONED BY ({c})"),
            )
            .await;
            ok(&lake.ctx, &format!("INSERT INTO {t} VALUES {rows}")).await;
            ok(
                &lake.ctx,
                &format!("SET datafusion.execution.time_zone = '{zone}'"),
            )
            .await;
            let written = run(
                &lake.ctx,
                &format!("INSERT OVERWRITE {t} PARTITION ({clause}) SELECT 100"),
            )
            .await;
            ok(&lake.ctx, "SET datafusion.execution.time_zone = 'UTC'").await;
            written.unwrap_or_else(|e| panic!("{clause}: {e}"));
            let got = ids(ok(&lake.ctx, &format!("SELECT id, {c} FROM {t} ORDER BY id")).await);
            let got: Vec<String> = got
                .iter()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect();
            assert_eq!(got, want, "{column} {clause} in {zone}");
        }
    }
}
