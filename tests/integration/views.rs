//! Views over Iceberg tables read the tables as they are when queried (Spark's views
//! are their query, resolved at each use): after the session writes to a table, a view
//! of it shows the new rows; a view of a snapshot stays at that snapshot; a column the
//! view reads that the table lost is an error naming the view.

use crate::dml::{count, lake, ok, run};

/// The id of the first snapshot of `ice.ns.<table>`.
async fn first_snapshot(ctx: &datafusion::prelude::SessionContext, table: &str) -> String {
    let text = ok(
        ctx,
        &format!(
            "SELECT snapshot_id FROM ice.ns.\"{table}$snapshots\" ORDER BY committed_at LIMIT 1"
        ),
    )
    .await;
    text.lines()
        .nth(3)
        .unwrap_or_default()
        .trim_matches(['|', ' '])
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_read_iceberg_tables_as_they_are_when_queried() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, s STRING) TBLPROPERTIES ('format-version'='2', \
         'write.delete.mode'='merge-on-read')",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (1, 'a'), (2, 'b')").await;
    let first = first_snapshot(ctx, "t").await;
    ok(
        ctx,
        "CREATE VIEW v AS SELECT id, s FROM ice.ns.t WHERE id > 0",
    )
    .await;
    ok(
        ctx,
        "CREATE VIEW w AS SELECT count(*) AS n FROM ice.ns.t \
         WHERE id IN (SELECT id FROM ice.ns.t WHERE s <> 'x')",
    )
    .await;
    ok(
        ctx,
        &format!("CREATE VIEW old AS SELECT id FROM ice.ns.\"t@{first}\""),
    )
    .await;
    // a view of no Iceberg table stays DataFusion's
    ok(ctx, "CREATE VIEW plain AS SELECT 1 AS one").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (3, 'c')").await;
    ok(ctx, "DELETE FROM ice.ns.t WHERE id = 1").await;
    assert_eq!(
        ok(ctx, "SELECT * FROM v ORDER BY id").await,
        "+----+---+\n| id | s |\n+----+---+\n| 2  | b |\n| 3  | c |\n+----+---+"
    );
    assert_eq!(
        ok(ctx, "SELECT count(*) AS n FROM v").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    assert_eq!(
        ok(ctx, "SELECT s FROM v WHERE id = 3").await,
        "+---+\n| s |\n+---+\n| c |\n+---+"
    );
    assert_eq!(
        ok(ctx, "SELECT n FROM w").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    // the view of a snapshot reads that snapshot
    assert_eq!(
        ok(ctx, "SELECT id FROM old ORDER BY id").await,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n+----+"
    );
    assert_eq!(
        ok(ctx, "SELECT * FROM plain").await,
        "+-----+\n| one |\n+-----+\n| 1   |\n+-----+"
    );
    // a column added is no business of the view; one it reads dropped is an error
    ok(ctx, "ALTER TABLE ice.ns.t ADD COLUMN z INT").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (4, 'd', 1)").await;
    assert_eq!(
        ok(ctx, "SELECT count(*) AS n FROM v").await,
        "+---+\n| n |\n+---+\n| 3 |\n+---+"
    );
    ok(
        ctx,
        "CREATE OR REPLACE VIEW v AS SELECT id, z FROM ice.ns.t WHERE z IS NOT NULL",
    )
    .await;
    assert_eq!(
        ok(ctx, "SELECT * FROM v").await,
        "+----+---+\n| id | z |\n+----+---+\n| 4  | 1 |\n+----+---+"
    );
    let e = run(ctx, "CREATE VIEW v AS SELECT id FROM ice.ns.t")
        .await
        .expect_err("exists");
    assert!(
        e.contains("CREATE VIEW v: v already exists as a view"),
        "{e}"
    );
    ok(ctx, "ALTER TABLE ice.ns.t DROP COLUMN z").await;
    let e = run(ctx, "SELECT * FROM v").await.expect_err("z is gone");
    assert!(
        e.contains("view v: column 'z' of ice.ns.t no longer exists"),
        "{e}"
    );
    ok(ctx, "ALTER TABLE ice.ns.t ALTER COLUMN id TYPE BIGINT").await;
    ok(ctx, "CREATE TABLE ice.ns.u (id INT)").await;
    ok(ctx, "CREATE VIEW vu AS SELECT id FROM ice.ns.u").await;
    ok(ctx, "ALTER TABLE ice.ns.u ALTER COLUMN id TYPE BIGINT").await;
    let e = run(ctx, "SELECT * FROM vu").await.expect_err("id widened");
    assert!(
        e.contains("view vu: the columns of the tables it reads changed"),
        "{e}"
    );
}

/// `PREPARE` of a query over Iceberg tables: each `EXECUTE` reads the tables as they are
/// then (DataFusion kept the providers resolved at `PREPARE`, so `EXECUTE` returned the
/// snapshot of that time), parameters, subqueries and joins included; a prepared query
/// of a snapshot stays at it; a table that lost a column is an error naming the
/// statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_read_iceberg_tables_as_they_are_when_executed() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.p (id BIGINT, s STRING)").await;
    ok(ctx, "CREATE TABLE ice.ns.q (id BIGINT)").await;
    ok(ctx, "INSERT INTO ice.ns.p VALUES (1, 'a'), (2, 'b')").await;
    ok(ctx, "INSERT INTO ice.ns.q VALUES (2)").await;
    let first = first_snapshot(ctx, "p").await;
    ok(ctx, "PREPARE n AS SELECT count(*) AS n FROM ice.ns.p").await;
    // a metadata table too (a tester's D1: it kept the snapshots of the PREPARE)
    ok(
        ctx,
        "PREPARE snaps AS SELECT count(*) AS n FROM ice.ns.\"p$snapshots\"",
    )
    .await;
    ok(
        ctx,
        "CREATE VIEW files_of_p AS SELECT count(*) AS n FROM ice.ns.\"p$files\"",
    )
    .await;
    ok(
        ctx,
        "PREPARE ge(BIGINT) AS SELECT id, s FROM ice.ns.p WHERE id >= $1 ORDER BY id",
    )
    .await;
    ok(
        ctx,
        "PREPARE j AS SELECT p.id FROM ice.ns.p p JOIN ice.ns.q q ON p.id = q.id \
         WHERE p.s IN (SELECT s FROM ice.ns.p WHERE id > 0) ORDER BY p.id",
    )
    .await;
    ok(
        ctx,
        &format!("PREPARE old AS SELECT count(*) AS n FROM ice.ns.\"p@{first}\""),
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.p VALUES (3, 'c')").await;
    ok(ctx, "INSERT INTO ice.ns.q VALUES (3)").await;
    ok(ctx, "DELETE FROM ice.ns.p WHERE id = 2").await;
    assert_eq!(
        ok(ctx, "EXECUTE n").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    assert_eq!(
        ok(ctx, "EXECUTE snaps").await,
        "+---+\n| n |\n+---+\n| 3 |\n+---+"
    );
    // one file when the view was made; now the (3, 'c') file and the delete's rewrite
    assert_eq!(
        ok(ctx, "SELECT n FROM files_of_p").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    assert_eq!(
        ok(ctx, "EXECUTE ge(2)").await,
        "+----+---+\n| id | s |\n+----+---+\n| 3  | c |\n+----+---+"
    );
    assert_eq!(
        ok(ctx, "EXECUTE j").await,
        "+----+\n| id |\n+----+\n| 3  |\n+----+"
    );
    assert_eq!(
        ok(ctx, "EXECUTE old").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    ok(ctx, "ALTER TABLE ice.ns.p DROP COLUMN s").await;
    // planned again against the table's columns now: one that reads `s` no longer
    // plans, and stays prepared as it was (each EXECUTE says so); the others read on
    for _ in 0..2 {
        let e = run(ctx, "EXECUTE ge(1)").await.expect_err("s is gone");
        assert!(
            e.contains(
                "EXECUTE ge: the columns of table ice.ns.p changed since PREPARE ge (now (id \
                 Int64), then (id Int64, s Utf8View)), and the statement no longer plans \
                 against them; change it and prepare it again"
            ) && e.contains("No field named s"),
            "{e}"
        );
    }
    assert_eq!(
        ok(ctx, "EXECUTE n").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    // a snapshot keeps its columns
    assert_eq!(
        ok(ctx, "EXECUTE old").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
}

/// A prepared `SELECT *` lists the columns of the table when it is executed: a column
/// added since is listed, as DuckDB re-binds a prepared statement and Trino plans one at
/// each `EXECUTE` (a tester's D8: `EXECUTE` silently left the new column out). A
/// statement naming its columns, or counting rows, reads on as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_select_star_lists_columns_added_since() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.a (id BIGINT, s STRING)").await;
    ok(ctx, "INSERT INTO ice.ns.a VALUES (1, 'a')").await;
    ok(ctx, "PREPARE star AS SELECT * FROM ice.ns.a").await;
    ok(
        ctx,
        "PREPARE qualified AS SELECT x.* FROM ice.ns.a x JOIN ice.ns.a y ON x.id = y.id",
    )
    .await;
    ok(
        ctx,
        "PREPARE in_union AS SELECT id FROM ice.ns.a UNION ALL SELECT * FROM (SELECT id FROM ice.ns.a)",
    )
    .await;
    ok(
        ctx,
        "PREPARE cols AS SELECT id, s FROM ice.ns.a ORDER BY id",
    )
    .await;
    ok(ctx, "PREPARE n AS SELECT count(*) AS n FROM ice.ns.a").await;
    // before any change, `*` reads as it was prepared
    assert_eq!(
        ok(ctx, "EXECUTE star").await,
        "+----+---+\n| id | s |\n+----+---+\n| 1  | a |\n+----+---+"
    );
    ok(ctx, "ALTER TABLE ice.ns.a ADD COLUMN extra STRING").await;
    ok(ctx, "INSERT INTO ice.ns.a VALUES (2, 'b', 'x')").await;
    let all = "+----+---+-------+\n| id | s | extra |\n+----+---+-------+\n| 1  | a |       |\n\
               | 2  | b | x     |\n+----+---+-------+";
    // the table's data rows (between the header's and the last rule) in order
    let sorted = |text: String| {
        let mut lines: Vec<&str> = text.lines().collect();
        let end = lines.len().saturating_sub(1);
        lines[3.min(end)..end].sort();
        lines.join("\n")
    };
    for statement in ["star", "qualified"] {
        let rows = sorted(ok(ctx, &format!("EXECUTE {statement}")).await);
        assert_eq!(rows, all, "{statement}");
    }
    assert_eq!(
        sorted(ok(ctx, "EXECUTE in_union").await),
        "+----+\n| id |\n+----+\n| 1  |\n| 1  |\n| 2  |\n| 2  |\n+----+"
    );
    assert_eq!(
        ok(ctx, "EXECUTE cols").await,
        "+----+---+\n| id | s |\n+----+---+\n| 1  | a |\n| 2  | b |\n+----+---+"
    );
    assert_eq!(
        ok(ctx, "EXECUTE n").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    // a column dropped since: `*` lists the columns left
    ok(ctx, "ALTER TABLE ice.ns.a DROP COLUMN s").await;
    ok(ctx, "DEALLOCATE star").await;
    ok(ctx, "PREPARE star AS SELECT * FROM ice.ns.a ORDER BY id").await;
    ok(ctx, "ALTER TABLE ice.ns.a RENAME COLUMN extra TO e").await;
    assert_eq!(
        ok(ctx, "EXECUTE star").await,
        "+----+---+\n| id | e |\n+----+---+\n| 1  |   |\n| 2  | x |\n+----+---+"
    );
}

/// A value its parameter's type cannot hold exactly is refused at `EXECUTE`, not cut to
/// fit (a new-user tester's D1: `id < $1` with 2.5 on an `int` column returned only
/// id 1, `id = $1` with 2.7 returned id 2, and a prepared DELETE would delete it). Values
/// that fit, in range and without a fraction, run as before; the checks follow a
/// statement deallocated and prepared again.
#[tokio::test]
async fn execute_refuses_parameter_values_their_type_cannot_hold() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.pp (id INT)").await;
    ok(ctx, "INSERT INTO ice.ns.pp VALUES (1), (2), (3)").await;
    ok(
        ctx,
        "PREPARE lt AS SELECT id FROM ice.ns.pp WHERE id < $1 ORDER BY id",
    )
    .await;
    ok(ctx, "PREPARE del AS DELETE FROM ice.ns.pp WHERE id = $1").await;
    ok(
        ctx,
        "PREPARE typed(INT) AS SELECT id FROM ice.ns.pp WHERE id = $1",
    )
    .await;
    for (statement, why) in [
        (
            "EXECUTE lt(2.5)",
            "$1 = 2.5 is not exactly a value of Int32",
        ),
        (
            "EXECUTE del(2.7)",
            "$1 = 2.7 is not exactly a value of Int32",
        ),
        (
            "EXECUTE typed(1.5)",
            "$1 = 1.5 is not exactly a value of Int32",
        ),
        (
            "EXECUTE lt(4000000000)",
            "$1 = 4000000000 is out of the range of Int32",
        ),
    ] {
        let e = run(ctx, statement).await.expect_err(statement);
        assert!(e.contains(why), "{statement}: {e}");
    }
    // nothing was deleted by the refused DELETE
    assert_eq!(
        ok(ctx, "SELECT count(*) AS n FROM ice.ns.pp").await,
        "+---+\n| n |\n+---+\n| 3 |\n+---+"
    );
    // values that fit run
    assert_eq!(
        ok(ctx, "EXECUTE lt(3.0)").await,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n+----+"
    );
    ok(ctx, "EXECUTE del(2)").await;
    assert_eq!(
        ok(ctx, "EXECUTE lt(10)").await,
        "+----+\n| id |\n+----+\n| 1  |\n| 3  |\n+----+"
    );
    // prepared again with a double parameter, 2.5 fits
    ok(ctx, "DEALLOCATE lt").await;
    ok(
        ctx,
        "PREPARE lt AS SELECT id FROM ice.ns.pp WHERE id < CAST($1 AS DOUBLE) ORDER BY id",
    )
    .await;
    assert_eq!(
        ok(ctx, "EXECUTE lt(2.5)").await,
        "+----+\n| id |\n+----+\n| 1  |\n+----+"
    );
}

/// A tester's D6: `CREATE VIEW ns.v AS …` (a namespace of an Iceberg catalog) failed with
/// "schema provider does not support registering tables". A namespace takes session
/// views (Iceberg views of its own, and DataFusion's of no Iceberg table): read fresh,
/// listed as `VIEW`, replaced, dropped, never over a table; the catalog does not hold
/// them (another session does not see them), and a table registered by name is refused
/// naming what the namespace holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_qualified_views_are_session_views() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT)").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (1), (2)").await;
    ok(
        ctx,
        "CREATE VIEW ice.ns.v AS SELECT id FROM ice.ns.t WHERE id > 1",
    )
    .await;
    ok(ctx, "CREATE VIEW ice.ns.c AS SELECT 1 AS one").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (3)").await;
    assert_eq!(
        ok(ctx, "SELECT * FROM ice.ns.v ORDER BY id").await,
        "+----+\n| id |\n+----+\n| 2  |\n| 3  |\n+----+"
    );
    assert_eq!(
        ok(ctx, "SELECT * FROM ice.ns.c").await,
        "+-----+\n| one |\n+-----+\n| 1   |\n+-----+"
    );
    let listed = "+---------------+--------------+------------+------------+\n\
                  | table_catalog | table_schema | table_name | table_type |\n\
                  +---------------+--------------+------------+------------+\n\
                  | ice           | ns           | c          | VIEW       |\n\
                  | ice           | ns           | t          | BASE TABLE |\n\
                  | ice           | ns           | v          | VIEW       |\n\
                  +---------------+--------------+------------+------------+";
    assert_eq!(ok(ctx, "SHOW TABLES FROM ice.ns").await, listed);
    // the views outlive the catalog lists read again (SHOW TABLES reads them)
    assert_eq!(
        ok(ctx, "SELECT count(*) AS n FROM ice.ns.v").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    for (statement, why) in [
        (
            "CREATE VIEW ice.ns.v AS SELECT id FROM ice.ns.t",
            "ice.ns.v already exists as a view",
        ),
        (
            "CREATE VIEW ice.ns.t AS SELECT id FROM ice.ns.t",
            "ice.ns.t already exists as a table",
        ),
    ] {
        let e = run(ctx, statement).await.expect_err(statement);
        assert!(e.contains(why), "{statement}: {e}");
    }
    ok(
        ctx,
        "CREATE OR REPLACE VIEW ice.ns.v AS SELECT id * 10 AS x FROM ice.ns.t WHERE id = 1",
    )
    .await;
    assert_eq!(
        ok(ctx, "SELECT * FROM ice.ns.v").await,
        "+----+\n| x  |\n+----+\n| 10 |\n+----+"
    );
    // a session's views: another session over the same catalog has none
    let other = crate::dml::session_over(&lake).await;
    let e = run(&other, "SELECT * FROM ice.ns.v")
        .await
        .expect_err("another session");
    assert!(e.contains("not found"), "{e}");
    // DROP TABLE of a view drops nothing and names DROP VIEW
    for drop in ["DROP TABLE ice.ns.v", "DROP TABLE IF EXISTS ice.ns.v"] {
        let e = run(ctx, drop).await.expect_err("a view");
        assert!(
            e.contains(
                "DROP TABLE ice.ns.v: ice.ns.v is a view of this session, not a table; \
                 DROP VIEW ice.ns.v drops it"
            ),
            "{drop}: {e}"
        );
    }
    ok(ctx, "DROP VIEW ice.ns.v").await;
    ok(ctx, "DROP VIEW ice.ns.c").await;
    assert_eq!(
        ok(ctx, "SHOW TABLES FROM ice.ns").await,
        "+---------------+--------------+------------+------------+\n\
         | table_catalog | table_schema | table_name | table_type |\n\
         +---------------+--------------+------------+------------+\n\
         | ice           | ns           | t          | BASE TABLE |\n\
         +---------------+--------------+------------+------------+"
    );
    // a table by name is no view: the namespace's tables are the catalog's
    let csv = lake.dir.path().join("x.csv");
    std::fs::write(&csv, "a\n1\n").expect("csv");
    let statement = format!(
        "CREATE EXTERNAL TABLE ice.ns.x STORED AS CSV LOCATION '{}' OPTIONS ('has_header' 'true')",
        csv.display()
    );
    let e = run(ctx, &statement).await.expect_err(&statement);
    assert!(
        e.contains("cannot register table 'ns.x'") && e.contains("CREATE TABLE creates one"),
        "{e}"
    );
}

/// A tester's D9: `PREPARE p AS INSERT INTO ns.t VALUES ($1)`, then `DROP TABLE ns.t`
/// and `CREATE TABLE ns.t …`: `EXECUTE p(1)` wrote for the dropped table and failed with
/// "the table was replaced while the commit ran". The target is resolved at each
/// `EXECUTE`: the rows go to the table the name holds then; a table of other columns, or
/// none, is an error asking to prepare it again, and no file is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_insert_writes_to_the_table_its_name_holds_when_executed() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let data_files = || {
        fn walk(dir: &std::path::Path, n: &mut usize) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, n);
                } else if path.extension().is_some_and(|e| e == "parquet") {
                    *n += 1;
                }
            }
        }
        let mut n = 0;
        walk(&lake.warehouse, &mut n);
        n
    };
    ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT)").await;
    ok(ctx, "PREPARE p AS INSERT INTO ice.ns.t VALUES ($1)").await;
    ok(
        ctx,
        "PREPARE q AS INSERT INTO ice.ns.t SELECT id + 100 FROM ice.ns.t",
    )
    .await;
    ok(ctx, "EXECUTE p(1)").await;
    ok(ctx, "DROP TABLE ice.ns.t PURGE").await;
    assert_eq!(data_files(), 0);
    ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT)").await;
    ok(ctx, "EXECUTE p(2)").await;
    ok(ctx, "EXECUTE q").await;
    assert_eq!(
        ok(ctx, "SELECT id FROM ice.ns.t ORDER BY id").await,
        "+-----+\n| id  |\n+-----+\n| 2   |\n| 102 |\n+-----+"
    );
    ok(ctx, "DROP TABLE ice.ns.t PURGE").await;
    let e = run(ctx, "EXECUTE p(3)").await.expect_err("dropped");
    assert!(
        e.contains("prepared statement p: table ice.ns.t no longer exists; nothing was written"),
        "{e}"
    );
    // other columns: planned again against them (as DuckDB re-binds); a statement that
    // no longer fits them fails naming the change and writes nothing
    ok(ctx, "CREATE TABLE ice.ns.t (id INT, s STRING)").await;
    for (statement, name) in [("EXECUTE p(3)", "p"), ("EXECUTE q", "q")] {
        let e = run(ctx, statement).await.expect_err("other columns");
        assert!(
            e.contains(&format!(
                "EXECUTE {name}: the columns of table ice.ns.t changed since PREPARE {name} \
                 (now (id Int32, s Utf8View), then (id Int64)), and the statement no longer \
                 plans against them"
            )),
            "{e}"
        );
    }
    assert_eq!(data_files(), 0);
    assert_eq!(
        ok(ctx, "SELECT count(*) AS n FROM ice.ns.t").await,
        "+---+\n| n |\n+---+\n| 0 |\n+---+"
    );
    // columns the statement fits: its rows, in the table's types
    ok(ctx, "DROP TABLE ice.ns.t PURGE").await;
    ok(ctx, "CREATE TABLE ice.ns.t (id INT)").await;
    ok(ctx, "EXECUTE p(3)").await;
    ok(ctx, "EXECUTE q").await;
    assert_eq!(
        ok(ctx, "SELECT id, arrow_typeof(id) AS t FROM ice.ns.t ORDER BY id").await,
        "+-----+-------+\n| id  | t     |\n+-----+-------+\n| 3   | Int32 |\n| 103 | Int32 |\n+-----+-------+"
    );
}

/// A prepared `DELETE`, `UPDATE`, `MERGE INTO` and `TRUNCATE` change the table the name
/// holds when they are executed, at its current snapshot: rows inserted since the
/// `PREPARE` are changed too, and after `DROP TABLE` and `CREATE TABLE` the new table's
/// rows are (DataFusion alone kept the `PREPARE`'s table and snapshot: `EXECUTE d(1)`
/// answered count 0 and left the row). With no table, `EXECUTE` fails and changes
/// nothing. A prepared `INSERT` into a table of
/// another catalog reads the Iceberg table as it is then too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_row_level_dml_changes_the_table_its_name_holds_when_executed() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let rows = "SELECT id, v FROM ice.ns.t ORDER BY id";
    ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT, v STRING)").await;
    ok(ctx, "CREATE TABLE ice.ns.src (id BIGINT, v STRING)").await;
    ok(ctx, "CREATE TABLE mem (id BIGINT)").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (1, 'a')").await;
    ok(ctx, "PREPARE d AS DELETE FROM ice.ns.t WHERE id = $1").await;
    ok(
        ctx,
        "PREPARE u AS UPDATE ice.ns.t SET v = 'z' WHERE id = $1",
    )
    .await;
    ok(
        ctx,
        "PREPARE m AS MERGE INTO ice.ns.t t USING ice.ns.src s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)",
    )
    .await;
    ok(
        ctx,
        "PREPARE md AS MERGE INTO ice.ns.t t USING (SELECT $1 AS id) s ON t.id = s.id \
         WHEN MATCHED THEN DELETE",
    )
    .await;
    ok(ctx, "PREPARE tr AS TRUNCATE TABLE ice.ns.t").await;
    ok(ctx, "PREPARE s AS SELECT id, v FROM ice.ns.t ORDER BY id").await;
    ok(ctx, "PREPARE cp AS INSERT INTO mem SELECT id FROM ice.ns.t").await;
    // rows written after the PREPARE
    ok(ctx, "INSERT INTO ice.ns.t VALUES (2, 'b'), (3, 'c')").await;
    ok(ctx, "INSERT INTO ice.ns.src VALUES (1, 'x'), (5, 'y')").await;
    assert_eq!(count(ctx, "EXECUTE u(2)").await, 1);
    assert_eq!(count(ctx, "EXECUTE d(3)").await, 1);
    assert_eq!(count(ctx, "EXECUTE m").await, 2);
    let now = "+----+---+\n| id | v |\n+----+---+\n| 1  | x |\n| 2  | z |\n| 5  | y |\n+----+---+";
    assert_eq!(ok(ctx, rows).await, now);
    assert_eq!(ok(ctx, "EXECUTE s").await, now);
    assert_eq!(count(ctx, "EXECUTE cp").await, 3);
    assert_eq!(
        ok(ctx, "SELECT id FROM mem ORDER BY id").await,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 5  |\n+----+"
    );
    // the table dropped and created again: the new table's rows
    ok(ctx, "DROP TABLE ice.ns.t PURGE").await;
    ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT, v STRING)").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.t VALUES (1, 'n'), (2, 'o'), (3, 'p'), (4, 'q')",
    )
    .await;
    assert_eq!(count(ctx, "EXECUTE d(1)").await, 1);
    assert_eq!(count(ctx, "EXECUTE u(2)").await, 1);
    assert_eq!(count(ctx, "EXECUTE md(3)").await, 1);
    let now = "+----+---+\n| id | v |\n+----+---+\n| 2  | z |\n| 4  | q |\n+----+---+";
    assert_eq!(ok(ctx, rows).await, now);
    assert_eq!(ok(ctx, "EXECUTE s").await, now);
    assert_eq!(count(ctx, "EXECUTE tr").await, 2);
    assert_eq!(count(ctx, "SELECT count(*) FROM ice.ns.t").await, 0);
    // no table: an error, not a change to the dropped one
    ok(ctx, "DROP TABLE ice.ns.t PURGE").await;
    for (statement, name) in [
        ("EXECUTE d(1)", "d"),
        ("EXECUTE u(1)", "u"),
        ("EXECUTE m", "m"),
        ("EXECUTE md(1)", "md"),
        ("EXECUTE tr", "tr"),
        ("EXECUTE s", "s"),
    ] {
        let e = run(ctx, statement).await.expect_err(statement);
        assert!(
            e.contains(&format!(
                "prepared statement {name}: table ice.ns.t no longer exists"
            )),
            "{statement}: {e}"
        );
    }
    // other columns: planned again (`prepared_statements_are_planned_again_for_changed_columns`)
    ok(ctx, "CREATE TABLE ice.ns.t (id INT, v STRING)").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (1, 'k')").await;
    // a table named at a branch: the branch's head when executed, the main branch kept
    ok(ctx, "ALTER TABLE ice.ns.t CREATE BRANCH dev").await;
    ok(
        ctx,
        "PREPARE db AS DELETE FROM ice.ns.\"t@dev\" WHERE id = $1",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.\"t@dev\" VALUES (2, 'l')").await;
    assert_eq!(count(ctx, "EXECUTE db(2)").await, 1);
    assert_eq!(count(ctx, "EXECUTE db(1)").await, 1);
    assert_eq!(count(ctx, "SELECT count(*) FROM ice.ns.\"t@dev\"").await, 0);
    assert_eq!(
        ok(ctx, rows).await,
        "+----+---+\n| id | v |\n+----+---+\n| 1  | k |\n+----+---+"
    );
}

/// A prepared statement holding a `VALUES` of several rows where a value is a scalar
/// subquery over an Iceberg column (whose value carries the column's field id) runs at
/// each `EXECUTE` as the statement run directly does: DataFusion planned it at `PREPARE`
/// but planned the `VALUES` again with the parameters' values at `EXECUTE` and refused it
/// there ("Inconsistent metadata across values list"), in an `INSERT … VALUES`, a query,
/// an `INSERT … SELECT` and a `MERGE`'s source. Planned again after `ADD COLUMN`, it
/// still runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_values_rows_with_a_subquery_over_an_iceberg_column_run() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let rows = "SELECT x, s FROM ice.ns.t ORDER BY x, s";
    ok(ctx, "CREATE TABLE ice.ns.t (x INT, s STRING)").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (1, 'z')").await;
    ok(
        ctx,
        "PREPARE ins AS INSERT INTO ice.ns.t VALUES ((SELECT max(x) FROM ice.ns.t) + $1, 'a'), \
         (2, 'b')",
    )
    .await;
    ok(
        ctx,
        "PREPARE bare AS INSERT INTO ice.ns.t VALUES ((SELECT max(x) FROM ice.ns.t), 'c'), \
         ($1, (SELECT min(s) FROM ice.ns.t))",
    )
    .await;
    ok(
        ctx,
        "PREPARE q AS SELECT a FROM (VALUES ((SELECT max(x) FROM ice.ns.t)), ($1)) v(a) \
         ORDER BY a",
    )
    .await;
    ok(
        ctx,
        "PREPARE sel AS INSERT INTO ice.ns.t SELECT * FROM \
         (VALUES ((SELECT max(x) FROM ice.ns.t) + 1, 'd'), ($1, 'e'))",
    )
    .await;
    ok(
        ctx,
        "PREPARE m AS MERGE INTO ice.ns.t t USING (VALUES ((SELECT min(x) FROM ice.ns.t), \
         'm'), ($1, 'n')) AS src(x, s) ON t.x = src.x \
         WHEN MATCHED THEN UPDATE SET s = src.s WHEN NOT MATCHED THEN INSERT *",
    )
    .await;
    // the same rows as the statements run directly: max(x) + 10 = 11
    assert_eq!(count(ctx, "EXECUTE ins(10)").await, 2);
    assert_eq!(
        ok(ctx, rows).await,
        "+----+---+\n| x  | s |\n+----+---+\n| 1  | z |\n| 2  | b |\n| 11 | a |\n+----+---+"
    );
    // max(x) = 11, min(s) = 'a'
    assert_eq!(count(ctx, "EXECUTE bare(5)").await, 2);
    assert_eq!(
        ok(ctx, "EXECUTE q(3)").await,
        "+----+\n| a  |\n+----+\n| 3  |\n| 11 |\n+----+"
    );
    // max(x) + 1 = 12
    assert_eq!(count(ctx, "EXECUTE sel(7)").await, 2);
    // min(x) = 1 matched, 20 inserted
    assert_eq!(count(ctx, "EXECUTE m(20)").await, 2);
    assert_eq!(
        ok(ctx, rows).await,
        "+----+---+\n| x  | s |\n+----+---+\n| 1  | m |\n| 2  | b |\n| 5  | a |\n| 7  | e |\n\
         | 11 | a |\n| 11 | c |\n| 12 | d |\n| 20 | n |\n+----+---+"
    );
    // planned again from its text for the new column: still runs
    ok(ctx, "ALTER TABLE ice.ns.t ADD COLUMN n INT").await;
    assert_eq!(
        ok(ctx, "EXECUTE q(3)").await,
        "+----+\n| a  |\n+----+\n| 3  |\n| 20 |\n+----+"
    );
}

/// A prepared statement whose table has other columns at `EXECUTE` than at `PREPARE`
/// (`ADD`, `DROP`, `RENAME COLUMN`, in this session or committed by another) is planned
/// again against them, as DuckDB re-binds one: its rows and writes are the statement's
/// over the table as it is (an `UPDATE` after `ADD COLUMN` was refused, "prepare it
/// again"); one that no longer plans (a column it names is gone) fails naming the
/// change, writes nothing, and stays prepared as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_are_planned_again_for_changed_columns() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    let rows = "SELECT * FROM ice.ns.t ORDER BY id";
    ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT, v STRING)").await;
    ok(
        ctx,
        "INSERT INTO ice.ns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    )
    .await;
    ok(ctx, "PREPARE u AS UPDATE ice.ns.t SET v = $2 WHERE id = $1").await;
    ok(ctx, "PREPARE d AS DELETE FROM ice.ns.t WHERE id = $1").await;
    ok(
        ctx,
        "PREPARE i AS INSERT INTO ice.ns.t (id, v) VALUES ($1, $2)",
    )
    .await;
    ok(
        ctx,
        "PREPARE m AS MERGE INTO ice.ns.t t USING (SELECT $1 AS id, $2 AS v) s \
         ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v \
         WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)",
    )
    .await;
    ok(
        ctx,
        "PREPARE s AS SELECT * FROM ice.ns.t WHERE id <= $1 ORDER BY id",
    )
    .await;
    // ADD COLUMN: every statement runs against the new columns
    ok(ctx, "ALTER TABLE ice.ns.t ADD COLUMN n INT").await;
    ok(ctx, "UPDATE ice.ns.t SET n = id * 10").await;
    assert_eq!(count(ctx, "EXECUTE u(1, 'x')").await, 1);
    assert_eq!(count(ctx, "EXECUTE d(2)").await, 1);
    assert_eq!(count(ctx, "EXECUTE i(4, 'd')").await, 1);
    assert_eq!(count(ctx, "EXECUTE m(3, 'y')").await, 1);
    assert_eq!(count(ctx, "EXECUTE m(5, 'e')").await, 1);
    let after_add = "+----+---+----+\n| id | v | n  |\n+----+---+----+\n| 1  | x | 10 |\n\
                     | 3  | y | 30 |\n| 4  | d |    |\n| 5  | e |    |\n+----+---+----+";
    assert_eq!(ok(ctx, rows).await, after_add);
    // the UPDATE and MERGE kept the new column's values of the rows they rewrote
    assert_eq!(
        ok(ctx, "EXECUTE s(3)").await,
        "+----+---+----+\n| id | v | n  |\n+----+---+----+\n| 1  | x | 10 |\n\
         | 3  | y | 30 |\n+----+---+----+"
    );
    // DROP COLUMN of a column none of them names: they run on
    ok(ctx, "ALTER TABLE ice.ns.t DROP COLUMN n").await;
    assert_eq!(count(ctx, "EXECUTE u(4, 'z')").await, 1);
    assert_eq!(
        ok(ctx, "EXECUTE s(4)").await,
        "+----+---+\n| id | v |\n+----+---+\n| 1  | x |\n| 3  | y |\n| 4  | z |\n+----+---+"
    );
    // RENAME COLUMN of one they name: each fails naming the change and writes nothing,
    // twice (still prepared); a statement not naming it (DELETE) runs
    ok(ctx, "ALTER TABLE ice.ns.t RENAME COLUMN v TO w").await;
    let before = ok(ctx, rows).await;
    for _ in 0..2 {
        // `then`: the columns of its last planning (u's after the DROP COLUMN)
        for (statement, name, then) in [
            ("EXECUTE u(1, 'q')", "u", "id Int64, v Utf8View"),
            ("EXECUTE i(6, 'q')", "i", "id Int64, v Utf8View, n Int32"),
            ("EXECUTE m(1, 'q')", "m", "id Int64, v Utf8View, n Int32"),
        ] {
            let e = run(ctx, statement).await.expect_err(statement);
            assert!(
                e.contains(&format!(
                    "EXECUTE {name}: the columns of table ice.ns.t changed since PREPARE \
                     {name} (now (id Int64, w Utf8View), then ({then})), and the statement no longer plans against them; change it and prepare it \
                     again"
                )),
                "{statement}: {e}"
            );
        }
    }
    assert_eq!(ok(ctx, rows).await, before);
    assert_eq!(count(ctx, "EXECUTE d(5)").await, 1);
    // a column added by another session (a concurrent commit): planned again here too
    ok(ctx, "ALTER TABLE ice.ns.t RENAME COLUMN w TO v").await;
    let other = crate::dml::session_over(&lake).await;
    ok(&other, "ALTER TABLE ice.ns.t ADD COLUMN k STRING").await;
    ok(&other, "UPDATE ice.ns.t SET k = 'other'").await;
    assert_eq!(count(ctx, "EXECUTE u(3, 'w')").await, 1);
    assert_eq!(count(ctx, "EXECUTE i(7, 'g')").await, 1);
    assert_eq!(
        ok(ctx, "EXECUTE s(9)").await,
        "+----+---+-------+\n| id | v | k     |\n+----+---+-------+\n| 1  | x | other |\n\
         | 3  | w | other |\n| 4  | z | other |\n| 7  | g |       |\n+----+---+-------+"
    );
    // the other session reads the same rows
    assert_eq!(ok(&other, rows).await, ok(ctx, "EXECUTE s(9)").await);
}

/// A prepared `UPDATE` or `MERGE` reads its names as the same statement run directly does
/// (`dml_rewrite`): `SET st.a` sets the struct field, not the top-level column `a`; an
/// unqualified name of a `NOT MATCHED` clause is the source's; Spark's `UPDATE SET *` and
/// `INSERT *` are read. DataFusion alone wrote the column `a`, found `id` ambiguous and
/// could not parse `*`.
#[tokio::test]
async fn prepared_update_and_merge_read_names_as_run_directly() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(
        ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, a BIGINT, st STRUCT<a: BIGINT, b: BIGINT>)",
    )
    .await;
    ok(
        ctx,
        "INSERT INTO ice.ns.t VALUES (1, 10, named_struct('a', 100, 'b', 200))",
    )
    .await;
    ok(
        ctx,
        "PREPARE u AS UPDATE ice.ns.t SET st.a = $1 WHERE id = 1",
    )
    .await;
    assert_eq!(count(ctx, "EXECUTE u(5)").await, 1);
    assert_eq!(
        ok(ctx, "SELECT id, a, st FROM ice.ns.t").await,
        "+----+----+----------------+\n| id | a  | st             |\n+----+----+----------------+\n\
         | 1  | 10 | {a: 5, b: 200} |\n+----+----+----------------+"
    );
    ok(ctx, "CREATE TABLE ice.ns.s (id BIGINT, v STRING)").await;
    ok(ctx, "CREATE TABLE ice.ns.u (id BIGINT, v STRING)").await;
    ok(ctx, "INSERT INTO ice.ns.u VALUES (1, 'a')").await;
    ok(
        ctx,
        "PREPARE m AS MERGE INTO ice.ns.u t USING ice.ns.s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT VALUES (id, v)",
    )
    .await;
    ok(ctx, "INSERT INTO ice.ns.s VALUES (1, 'x'), (2, 'y')").await;
    assert_eq!(count(ctx, "EXECUTE m").await, 2);
    assert_eq!(
        ok(ctx, "SELECT id, v FROM ice.ns.u ORDER BY id").await,
        "+----+---+\n| id | v |\n+----+---+\n| 1  | x |\n| 2  | y |\n+----+---+"
    );
    // a rewrite's error is the PREPARE's, as it is the statement's run directly
    let e = run(ctx, "PREPARE bad AS UPDATE ice.ns.t SET nope.a = 1")
        .await
        .expect_err("unknown qualifier");
    let direct = run(ctx, "UPDATE ice.ns.t SET nope.a = 1")
        .await
        .expect_err("unknown qualifier");
    assert_eq!(e, direct);
}

/// Helper B67, task 2: a table and a session view share one set of names, as in Spark
/// (`TABLE_OR_VIEW_ALREADY_EXISTS`) and Iceberg Java's view catalogs ("View with same
/// name already exists"). `CREATE TABLE ns.e` beside a session view `ns.e` succeeded, and
/// `SHOW TABLES` listed `e` twice: every create form (`CREATE TABLE`, CTAS, `CREATE OR
/// REPLACE`, `REPLACE TABLE`) and a rename to the name are refused naming the view and
/// its kind, creating nothing; `IF NOT EXISTS` finds the name taken and does nothing, as
/// Spark's `CreateTableExec` (which ignores the catalog's "already exists" under it). The
/// other way round, `CREATE [OR REPLACE] VIEW` over a table is refused naming the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_and_session_views_share_their_names() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT)").await;
    ok(ctx, "INSERT INTO ice.ns.t VALUES (1)").await;
    ok(ctx, "CREATE VIEW ice.ns.e AS SELECT id FROM ice.ns.t").await;
    ok(ctx, "CREATE VIEW ice.ns.f AS SELECT 2 AS two").await;
    let listed = "+---------------+--------------+------------+------------+\n\
                  | table_catalog | table_schema | table_name | table_type |\n\
                  +---------------+--------------+------------+------------+\n\
                  | ice           | ns           | e          | VIEW       |\n\
                  | ice           | ns           | f          | VIEW       |\n\
                  | ice           | ns           | t          | BASE TABLE |\n\
                  +---------------+--------------+------------+------------+";
    for view in ["e", "f"] {
        for statement in [
            format!("CREATE TABLE ice.ns.{view} (id BIGINT)"),
            format!("CREATE TABLE ice.ns.{view} AS SELECT 1 AS id"),
            format!("CREATE OR REPLACE TABLE ice.ns.{view} (id BIGINT)"),
            format!("CREATE OR REPLACE TABLE ice.ns.{view} AS SELECT 1 AS id"),
            format!("REPLACE TABLE ice.ns.{view} (id BIGINT)"),
            format!("ALTER TABLE ice.ns.t RENAME TO ice.ns.{view}"),
        ] {
            let e = run(ctx, &statement).await.expect_err(&statement);
            assert!(
                e.contains(&format!(
                    "ice.ns.{view} already exists as a view of this session"
                )),
                "{statement}: {e}"
            );
        }
        for statement in [
            format!("CREATE TABLE IF NOT EXISTS ice.ns.{view} (id BIGINT)"),
            format!("CREATE TABLE IF NOT EXISTS ice.ns.{view} AS SELECT 1 AS id"),
        ] {
            ok(ctx, &statement).await;
        }
    }
    assert_eq!(ok(ctx, "SHOW TABLES FROM ice.ns").await, listed);
    assert_eq!(
        ok(ctx, "SELECT * FROM ice.ns.e").await,
        "+----+\n| id |\n+----+\n| 1  |\n+----+"
    );
    // a view over a table: refused, the table kept
    for (statement, why) in [
        (
            "CREATE VIEW ice.ns.t AS SELECT 1 AS one",
            "ice.ns.t already exists as a table",
        ),
        (
            "CREATE OR REPLACE VIEW ice.ns.t AS SELECT id FROM ice.ns.t",
            "'ns.t' already exists as a table of the catalog",
        ),
        (
            "CREATE OR REPLACE VIEW ice.ns.t AS SELECT 1 AS one",
            "'ns.t' already exists as a table of the catalog",
        ),
        (
            "CREATE VIEW ice.ns.f AS SELECT 3 AS three",
            "ice.ns.f already exists as a view",
        ),
    ] {
        let e = run(ctx, statement).await.expect_err(statement);
        assert!(e.contains(why), "{statement}: {e}");
    }
    assert_eq!(ok(ctx, "SHOW TABLES FROM ice.ns").await, listed);
    assert_eq!(count(ctx, "SELECT count(*) FROM ice.ns.t").await, 1);
}
