//! A cast beside what it casts (`SELECT d, CAST(d AS DOUBLE) FROM t`), which DataFusion
//! 55 refused ("Projections require unique expression names": it names a cast after its
//! input), runs as in Spark: the cast is named as Spark prints it, `CAST(d AS DOUBLE)`
//! (module `datafusion::sql::cast_names`), in a query, over a `VALUES`, in a CTAS and in
//! an `INSERT … SELECT`.

use crate::dml::{lake, ok, run};

/// Each type's column beside its cast: the rows, and the names Spark prints for the
/// casts (a cast alone keeps DataFusion's name).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cast_beside_its_input_is_named_as_spark_prints_it() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.t (i INT, l BIGINT, f FLOAT, d DOUBLE, m DECIMAL(10,2), \
         s STRING, b BOOLEAN, dt DATE, ts TIMESTAMP, bin BINARY) USING iceberg",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.t VALUES (7, 8, 1.5, 2.5, 3.25, '42', true, DATE '2024-02-29', \
         TIMESTAMP '2024-02-29 10:00:00', X'6869')",
    )
    .await;
    for (query, expected) in [
        (
            "SELECT d, CAST(d AS DOUBLE), CAST(d AS INT) FROM ice.ns.t",
            "+-----+-------------------+----------------+\n\
             | d   | CAST(d AS DOUBLE) | CAST(d AS INT) |\n\
             +-----+-------------------+----------------+\n\
             | 2.5 | 2.5               | 2              |\n\
             +-----+-------------------+----------------+",
        ),
        (
            "SELECT i, CAST(i AS BIGINT), l, CAST(l AS SMALLINT), f, CAST(f AS DOUBLE) \
             FROM ice.ns.t",
            "+---+-------------------+---+---------------------+-----+-------------------+\n\
             | i | CAST(i AS BIGINT) | l | CAST(l AS SMALLINT) | f   | CAST(f AS DOUBLE) |\n\
             +---+-------------------+---+---------------------+-----+-------------------+\n\
             | 7 | 7                 | 8 | 8                   | 1.5 | 1.5               |\n\
             +---+-------------------+---+---------------------+-----+-------------------+",
        ),
        (
            "SELECT m, CAST(m AS DECIMAL(5,1)), s, TRY_CAST(s AS INT), t.b, \
             CAST(t.b AS STRING) FROM ice.ns.t t",
            "+------+-------------------------+----+--------------------+------+-------------------+\n\
             | m    | CAST(m AS DECIMAL(5,1)) | s  | TRY_CAST(s AS INT) | b    | CAST(b AS STRING) |\n\
             +------+-------------------------+----+--------------------+------+-------------------+\n\
             | 3.25 | 3.3                     | 42 | 42                 | true | true              |\n\
             +------+-------------------------+----+--------------------+------+-------------------+",
        ),
        (
            "SELECT dt, CAST(dt AS STRING), bin, CAST(bin AS STRING), \
             CAST(CAST(d AS INT) AS STRING), d::INT FROM ice.ns.t",
            "+------------+--------------------+------+---------------------+--------------------------------+----------------+\n\
             | dt         | CAST(dt AS STRING) | bin  | CAST(bin AS STRING) | CAST(CAST(d AS INT) AS STRING) | CAST(d AS INT) |\n\
             +------------+--------------------+------+---------------------+--------------------------------+----------------+\n\
             | 2024-02-29 | 2024-02-29         | 6869 | hi                  | 2                              | 2              |\n\
             +------------+--------------------+------+---------------------+--------------------------------+----------------+",
        ),
        (
            "SELECT *, CAST(i AS STRING) FROM ice.ns.t WHERE CAST(i AS STRING) = '7' \
             ORDER BY CAST(i AS STRING)",
            "CAST(i AS STRING) |",
        ),
        (
            "SELECT 1, CAST(1 AS DOUBLE)",
            "+----------+-------------------+\n\
             | Int64(1) | CAST(1 AS DOUBLE) |\n\
             +----------+-------------------+\n\
             | 1        | 1.0               |\n\
             +----------+-------------------+",
        ),
        (
            "SELECT x, CAST(x AS DOUBLE) FROM (VALUES (1.5), (2.5)) v(x) ORDER BY x",
            "+-----+-------------------+\n\
             | x   | CAST(x AS DOUBLE) |\n\
             +-----+-------------------+\n\
             | 1.5 | 1.5               |\n\
             | 2.5 | 2.5               |\n\
             +-----+-------------------+",
        ),
        (
            "SELECT ts, CAST(ts AS DATE) FROM ice.ns.t UNION ALL \
             SELECT ts, CAST(ts AS DATE) FROM ice.ns.t",
            "| ts                  | CAST(ts AS DATE) |",
        ),
        // alone, a cast keeps DataFusion's name (its input's as DataFusion prints it)
        (
            "SELECT CAST(d AS INT) FROM ice.ns.t",
            "+------------+\n| ice.ns.t.d |\n+------------+\n| 2          |\n+------------+",
        ),
        // a Spark literal (`100L`, rewritten before DataFusion plans), a view
        (
            "SELECT d, CAST(d AS INT), 100L FROM ice.ns.t",
            "| d   | CAST(d AS INT) |",
        ),
    ] {
        let text = ok(&lake.ctx, query).await;
        assert!(text.contains(expected), "{query}\n{text}");
    }
    // a view of such a query
    ok(
        &lake.ctx,
        "CREATE VIEW v AS SELECT d, CAST(d AS INT) FROM ice.ns.t",
    )
    .await;
    let text = ok(&lake.ctx, "SELECT * FROM v").await;
    assert!(text.contains("| d   | CAST(d AS INT) |"), "{text}");
    // a column twice is still refused (DataFusion's message)
    let e = run(&lake.ctx, "SELECT d, d FROM ice.ns.t")
        .await
        .expect_err("two columns of one name");
    assert!(
        e.contains("Projections require unique expression names"),
        "{e}"
    );

    // a CTAS (Spark's syntax and DataFusion's) makes columns of those names
    for ctas in [
        "CREATE TABLE ice.ns.c1 USING iceberg AS SELECT d, CAST(d AS INT) FROM ice.ns.t",
        "CREATE TABLE ice.ns.c2 AS SELECT d, CAST(d AS INT) FROM ice.ns.t",
    ] {
        ok(&lake.ctx, ctas).await;
    }
    for table in ["c1", "c2"] {
        let text = ok(&lake.ctx, &format!("SELECT * FROM ice.ns.{table}")).await;
        assert_eq!(
            text,
            "+-----+----------------+\n| d   | CAST(d AS INT) |\n+-----+----------------+\n\
             | 2.5 | 2              |\n+-----+----------------+",
            "{table}"
        );
    }
    // an INSERT … SELECT fills the columns by position
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.c1 SELECT d + 1, CAST(d + 1 AS INT) FROM ice.ns.t",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.c1 SELECT x, CAST(x AS INT) FROM (VALUES (9.5)) v(x)",
    )
    .await;
    let text = ok(&lake.ctx, "SELECT * FROM ice.ns.c1 ORDER BY d").await;
    assert_eq!(
        text,
        "+-----+----------------+\n| d   | CAST(d AS INT) |\n+-----+----------------+\n\
         | 2.5 | 2              |\n| 3.5 | 3              |\n| 9.5 | 9              |\n\
         +-----+----------------+"
    );

    // a name the statement names elsewhere is not given to a cast: here ORDER BY means
    // the table's column `CAST(id AS BIGINT)` (Spark sorts by it: row 1), which the name
    // would hide, sorting by the cast (row 3; report T69 F11). The statement stays refused.
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.amb (id INT, \"CAST(id AS BIGINT)\" BIGINT) USING iceberg",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.amb VALUES (1, 30), (2, 20), (3, 10)",
    )
    .await;
    let e = run(
        &lake.ctx,
        "SELECT id, CAST(id AS BIGINT) FROM ice.ns.amb ORDER BY \"CAST(id AS BIGINT)\" DESC LIMIT 1",
    )
    .await
    .expect_err("a cast named as a column the statement names");
    assert!(
        e.contains("Projections require unique expression names"),
        "{e}"
    );
    // without that reference it is named, and the table's column stays its own
    let text = ok(
        &lake.ctx,
        "SELECT id, CAST(id AS BIGINT) FROM ice.ns.amb ORDER BY id DESC LIMIT 1",
    )
    .await;
    assert!(text.contains("| 3  | 3                  |"), "{text}");
}
