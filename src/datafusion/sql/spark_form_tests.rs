//! Spark scripts' forms through [`execute`](super::execute) on a SQLite catalog:
//! `TABLESAMPLE` refused, `CREATE TEMPORARY VIEW` as a session view, `SET`/`RESET
//! spark.*` keys, Spark's type names in column lists, suffixed literals in `SET` values and
//! `CALL` arguments, a subquery `SET` value out of its column's range (a tester's report
//! of a Spark user's scripts).

use std::sync::Arc;

use datafusion::catalog::{CatalogProvider, MemorySchemaProvider};
use datafusion::prelude::{SessionConfig, SessionContext};
use tempfile::TempDir;

use super::tests::{fails, ident, ok, run};
use crate::catalog::{Catalog, SqlCatalog};
use crate::datafusion::{register_iceberg_options, IcebergCatalogProvider, IcefloeOptions};
use crate::ErrorKind;

/// The session of [`super::tests::session`] with icefloe's options registered, as the
/// CLI sets it up.
async fn session() -> (SessionContext, Arc<dyn Catalog>, TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let catalog: Arc<dyn Catalog> =
        Arc::new(SqlCatalog::open_or_create("cat", dir.path().join("cat.db")).expect("catalog"));
    let ctx = SessionContext::new_with_config(register_iceberg_options(
        SessionConfig::new()
            .with_information_schema(true)
            .with_default_catalog_and_schema("cat", "public")
            .with_target_partitions(2),
    ));
    let provider = IcebergCatalogProvider::try_new(Arc::clone(&catalog))
        .await
        .expect("provider");
    provider
        .register_schema("public", Arc::new(MemorySchemaProvider::new()))
        .expect("public");
    ctx.register_catalog("cat", Arc::new(provider));
    (ctx, catalog, dir)
}

fn count(rows: Vec<Vec<String>>) -> String {
    rows[0][0].clone()
}

/// `TABLESAMPLE` was parsed and dropped: the whole table was returned or copied. It is
/// refused in every statement and at any depth, and nothing is written.
#[tokio::test]
async fn tablesample_is_refused_in_every_statement() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.big AS SELECT CAST(value AS INT) AS id \
         FROM generate_series(1, 100) AS g(value)",
    )
    .await;
    for sql in [
        "SELECT count(*) AS n FROM ns.big TABLESAMPLE (1 PERCENT)",
        "SELECT count(*) AS n FROM ns.big TABLESAMPLE (10 ROWS)",
        "SELECT count(*) FROM ns.big AS b TABLESAMPLE BERNOULLI (5)",
        "SELECT count(*) FROM ns.big TABLESAMPLE (BUCKET 1 OUT OF 10)",
        "SELECT * FROM ns.big WHERE id IN (SELECT id FROM ns.big TABLESAMPLE (10 ROWS))",
        "WITH s AS (SELECT * FROM ns.big TABLESAMPLE (10 ROWS)) SELECT count(*) FROM s",
        "CREATE TABLE ns.sample AS SELECT * FROM ns.big TABLESAMPLE (10 ROWS)",
        "CREATE TABLE ns.sample USING iceberg PARTITIONED BY (bucket(2, id)) \
         AS SELECT * FROM ns.big TABLESAMPLE (10 ROWS)",
        "INSERT INTO ns.big SELECT * FROM ns.big TABLESAMPLE (10 ROWS)",
        "DELETE FROM ns.big WHERE id IN (SELECT id FROM ns.big TABLESAMPLE (10 ROWS))",
        "UPDATE ns.big SET id = 0 WHERE id IN (SELECT id FROM ns.big TABLESAMPLE (10 ROWS))",
        "MERGE INTO ns.big t USING (SELECT * FROM ns.big TABLESAMPLE (10 ROWS)) s \
         ON t.id = s.id WHEN MATCHED THEN DELETE",
        "CREATE VIEW ns.v AS SELECT * FROM ns.big TABLESAMPLE (10 ROWS)",
    ] {
        fails(&ctx, sql, ErrorKind::Unsupported, "TABLESAMPLE").await;
    }
    assert_eq!(count(ok(&ctx, "SELECT count(*) FROM ns.big").await), "100");
    assert!(!catalog
        .table_exists(&ident("ns.sample"))
        .await
        .expect("exists"));
    let snapshots = ok(&ctx, "SELECT count(*) FROM ns.big.snapshots").await;
    assert_eq!(count(snapshots), "1");
    // a column of that name is no clause
    ok(&ctx, "SELECT id AS \"tablesample\" FROM ns.big").await;
}

/// Spark's temporary view (refused: "Temporary views not supported") is a session view,
/// made as `CREATE VIEW` makes it: over an Iceberg table it reads the table as it is
/// when queried; `OR REPLACE` replaces it, `DROP VIEW` drops it; the usual Spark MERGE
/// script runs.
#[tokio::test]
async fn temporary_views_are_session_views() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT, v STRING)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a')").await;
    ok(
        &ctx,
        "CREATE OR REPLACE TEMPORARY VIEW updates AS SELECT CAST(2 AS INT) AS id, 'b' AS v",
    )
    .await;
    assert_eq!(ok(&ctx, "SELECT id, v FROM updates").await, [["2", "b"]]);
    ok(
        &ctx,
        "MERGE INTO ns.t t USING updates s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    )
    .await;
    ok(&ctx, "CREATE TEMP VIEW ids (n) AS SELECT id FROM ns.t").await;
    assert_eq!(
        ok(&ctx, "SELECT n FROM ids ORDER BY n").await,
        [["1"], ["2"]]
    );
    // read as the table is now
    ok(&ctx, "INSERT INTO ns.t VALUES (3, 'c')").await;
    assert_eq!(
        ok(&ctx, "SELECT n FROM ids ORDER BY n").await,
        [["1"], ["2"], ["3"]]
    );
    fails(
        &ctx,
        "CREATE TEMPORARY VIEW ids AS SELECT id FROM ns.t",
        ErrorKind::AlreadyExists,
        "ids",
    )
    .await;
    ok(
        &ctx,
        "create or replace temp view ids AS SELECT id * 10 AS n FROM ns.t WHERE id = 1",
    )
    .await;
    assert_eq!(ok(&ctx, "SELECT n FROM ids").await, [["10"]]);
    ok(&ctx, "DROP VIEW ids").await;
    assert!(run(&ctx, "SELECT * FROM ids").await.is_err());
    ok(&ctx, "DROP VIEW updates").await;
    fails(
        &ctx,
        "CREATE GLOBAL TEMPORARY VIEW g AS SELECT 1",
        ErrorKind::Unsupported,
        "CREATE [OR REPLACE] TEMPORARY VIEW",
    )
    .await;
}

/// Spark's session keys with an icefloe equivalent set it, with its checks; any other
/// `spark.*` key is refused naming it and the keys icefloe reads (DataFusion's "Could not
/// find config namespace \"spark\"" named none).
#[tokio::test]
async fn set_spark_keys_set_their_equivalents() {
    let (ctx, _catalog, _dir) = session().await;
    let options = || {
        ctx.state()
            .config_options()
            .extensions
            .get::<IcefloeOptions>()
            .cloned()
            .expect("icefloe options")
    };
    let zone = || ctx.state().config_options().execution.time_zone.clone();
    ok(
        &ctx,
        "SET spark.sql.sources.partitionOverwriteMode = DYNAMIC",
    )
    .await;
    assert_eq!(options().partition_overwrite_mode.to_string(), "dynamic");
    ok(&ctx, "SET spark.sql.sources.partitionOverwriteMode=static").await;
    assert_eq!(options().partition_overwrite_mode.to_string(), "static");
    ok(&ctx, "SET spark.wap.id = nightly-42").await;
    assert_eq!(options().wap_id, "nightly-42");
    ok(&ctx, "SET spark.wap.id = 'run 7'").await;
    assert_eq!(options().wap_id, "run 7");
    ok(&ctx, "SET spark.sql.session.timeZone = America/Los_Angeles").await;
    assert_eq!(zone().as_deref(), Some("America/Los_Angeles"));
    ok(&ctx, "SET spark.sql.session.timeZone='+02:00'").await;
    assert_eq!(zone().as_deref(), Some("+02:00"));
    // without a value: the equivalent's value
    let shown = ok(&ctx, "SET spark.wap.id").await;
    assert!(shown[0].contains(&"run 7".to_string()), "{shown:?}");
    // the equivalent's checks, naming the Spark key
    let err = run(
        &ctx,
        "SET spark.sql.sources.partitionOverwriteMode = sometimes",
    )
    .await
    .expect_err("refused");
    let message = err.to_string();
    assert!(
        message.contains("spark.sql.sources.partitionOverwriteMode")
            && message.contains("static or dynamic"),
        "{message}"
    );
    assert_eq!(options().partition_overwrite_mode.to_string(), "static");
    fails(
        &ctx,
        "SET spark.sql.session.timeZone = Mars/Olympus",
        ErrorKind::InvalidArgument,
        "SET spark.sql.session.timeZone 'Mars/Olympus': not a time zone",
    )
    .await;
    assert_eq!(zone().as_deref(), Some("+02:00"));
    // any other spark.* key: refused, naming it and the keys read
    for key in [
        "spark.sql.shuffle.partitions",
        "spark.sql.iceberg.vectorization.enabled",
        "spark.sql.parser.escapedStringLiterals",
    ] {
        for sql in [format!("SET {key} = 4"), format!("SET {key}")] {
            fails(&ctx, &sql, ErrorKind::Unsupported, key).await;
            fails(&ctx, &sql, ErrorKind::Unsupported, "icefloe does not read").await;
            fails(
                &ctx,
                &sql,
                ErrorKind::Unsupported,
                "spark.sql.sources.partitionOverwriteMode (icefloe.partition_overwrite_mode), \
                 spark.sql.session.timeZone (SET TIME ZONE), spark.wap.id (icefloe.wap_id)",
            )
            .await;
        }
    }
}

/// In column lists, Spark's bare `DECIMAL` (and `DEC`, `NUMERIC`) is `decimal(10,0)` (it
/// was DataFusion's `decimal(38,10)`), `DEC(p,s)` is `decimal(p,s)`, and `SHORT`, `BYTE`
/// are accepted as Iceberg `int` (they were "Unsupported SQL type"), at any depth; a
/// cast in a query keeps DataFusion's meaning.
#[tokio::test]
async fn spark_type_names_in_column_lists() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.d (a DECIMAL, b DEC NOT NULL, c NUMERIC COMMENT 'c', d DEC(5, 2), \
         e SHORT, f BYTE, s SMALLINT, t TINYINT, g ARRAY<DECIMAL>, \
         h STRUCT<dec: DEC, short: SHORT, byte BYTE>) USING iceberg",
    )
    .await;
    let types = |m: &crate::spec::TableMetadata| -> Vec<String> {
        m.current_schema()
            .columns()
            .iter()
            .map(|f| f.field_type.to_string())
            .collect()
    };
    let m = catalog.load_table(&ident("ns.d")).await.expect("table");
    let got = types(m.metadata());
    assert_eq!(
        got[..8],
        [
            "decimal(10, 0)",
            "decimal(10, 0)",
            "decimal(10, 0)",
            "decimal(5, 2)",
            "int",
            "int",
            "int",
            "int"
        ],
        "{got:?}"
    );
    assert!(got[8].contains("decimal(10, 0)"), "{got:?}");
    assert!(
        got[9].contains("dec") && got[9].contains("decimal(10, 0)") && !got[9].contains("38"),
        "{got:?}"
    );
    // 1.5 is stored rounded to the column's scale 0, as Spark stores it
    ok(&ctx, "INSERT INTO ns.d (a, b) VALUES (1.5, 2)").await;
    assert_eq!(ok(&ctx, "SELECT a FROM ns.d").await, [["2"]]);
    // ALTER TABLE reads column types alike
    ok(&ctx, "ALTER TABLE ns.d ADD COLUMN i DECIMAL").await;
    ok(&ctx, "ALTER TABLE ns.d ADD COLUMN j SHORT").await;
    ok(&ctx, "ALTER TABLE ns.d ALTER COLUMN d TYPE DEC(7, 2)").await;
    let m = catalog.load_table(&ident("ns.d")).await.expect("table");
    let got = types(m.metadata());
    assert_eq!(got[3], "decimal(7, 2)", "{got:?}");
    assert_eq!(got[10..], ["decimal(10, 0)", "int"], "{got:?}");
    // in a query, DataFusion's meaning
    assert_eq!(
        ok(&ctx, "SELECT arrow_typeof(CAST(1 AS DECIMAL))").await,
        [["Decimal128(38, 10)"]]
    );
}

/// `RESET spark.<key>` resets the equivalent `SET spark.<key>` sets (it failed, "Could not
/// find config namespace \"spark\""); a key icefloe does not read is refused as by `SET`.
#[tokio::test]
async fn reset_spark_keys_reset_their_equivalents() {
    let (ctx, _catalog, _dir) = session().await;
    let options = || {
        ctx.state()
            .config_options()
            .extensions
            .get::<IcefloeOptions>()
            .cloned()
            .expect("icefloe options")
    };
    let zone = || ctx.state().config_options().execution.time_zone.clone();
    // icefloe's sessions start in UTC, and RESET goes back to it
    assert_eq!(zone().as_deref(), Some("UTC"));
    ok(&ctx, "SET spark.wap.id = nightly-42").await;
    ok(
        &ctx,
        "SET spark.sql.sources.partitionOverwriteMode = dynamic",
    )
    .await;
    ok(&ctx, "SET spark.sql.session.timeZone = '+02:00'").await;
    assert_eq!(zone().as_deref(), Some("+02:00"));
    ok(&ctx, "RESET spark.wap.id").await;
    assert_eq!(options().wap_id, "");
    ok(&ctx, "RESET spark.SQL.sources.partitionOverwriteMode").await;
    assert_eq!(options().partition_overwrite_mode.to_string(), "static");
    ok(&ctx, "RESET spark.sql.session.timeZone").await;
    assert_eq!(zone().as_deref(), Some("UTC"));
    fails(
        &ctx,
        "RESET spark.sql.shuffle.partitions",
        ErrorKind::Unsupported,
        "RESET spark.sql.shuffle.partitions: icefloe does not read this Spark setting",
    )
    .await;
}

/// Spark's suffixed number literals in `SET` values and `CALL` arguments are read as a
/// query reads them: a `SET` value is the number (`2Y` was a parse error, `100L` kept
/// its suffix for a Spark key), range-checked; a `CALL` argument expression is typed
/// as in a query (`300Y` was `300 AS Y`, taken as 300).
#[tokio::test]
async fn suffixed_literals_in_set_values_and_call_arguments() {
    let (ctx, _catalog, _dir) = session().await;
    let batch_size = || ctx.state().config_options().execution.batch_size.get();
    let wap_id = || {
        ctx.state()
            .config_options()
            .extensions
            .get::<IcefloeOptions>()
            .expect("icefloe options")
            .wap_id
            .clone()
    };
    for (sql, want) in [
        ("SET datafusion.execution.batch_size = 100L", 100),
        ("SET datafusion.execution.batch_size = 3S", 3),
        ("SET datafusion.execution.batch_size = 2Y", 2),
        ("SET datafusion.execution.batch_size = 7l", 7),
    ] {
        ok(&ctx, sql).await;
        assert_eq!(batch_size(), want, "{sql}");
    }
    for (sql, want) in [
        ("SET spark.wap.id = 100L", "100"),
        ("SET spark.wap.id = 1.5D", "1.5"),
        ("SET spark.wap.id = 1.0BD", "1.0"),
        ("SET spark.wap.id = -2Y", "-2"),
    ] {
        ok(&ctx, sql).await;
        assert_eq!(wap_id(), want, "{sql}");
    }
    fails(
        &ctx,
        "SET datafusion.execution.batch_size = 300Y",
        ErrorKind::InvalidArgument,
        "number literal 300Y is outside the range of a TINYINT",
    )
    .await;
    assert_eq!(batch_size(), 7);

    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (2)").await;
    for arg in ["2Y", "2S", "2L", "2l"] {
        ok(
            &ctx,
            &format!("CALL cat.system.expire_snapshots(table => 'ns.t', retain_last => {arg})"),
        )
        .await;
    }
    fails(
        &ctx,
        "CALL cat.system.expire_snapshots(table => 'ns.t', retain_last => 300Y)",
        ErrorKind::InvalidArgument,
        "outside the range of a TINYINT",
    )
    .await;
}

/// A `SET` value from a scalar subquery that does not fit the column names the column,
/// as a value computed per row does (it named the table only: "UPDATE operation on table
/// … Can't cast value 3000000000 to type Int32"); in `MERGE`'s `UPDATE SET` and `INSERT`
/// too.
#[tokio::test]
async fn a_subquery_value_out_of_its_columns_range_names_the_column() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (k INT, c INT)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1, 1)").await;
    ok(&ctx, "CREATE TABLE ns.s (v BIGINT)").await;
    ok(&ctx, "INSERT INTO ns.s VALUES (3000000000)").await;
    for (sql, needle) in [
        (
            "UPDATE ns.t SET c = (SELECT max(v) FROM ns.s)",
            "UPDATE of 'ns.t': computing the value of column 'c'",
        ),
        (
            "MERGE INTO ns.t t USING (SELECT 1 AS k) s ON t.k = s.k \
             WHEN MATCHED THEN UPDATE SET c = (SELECT max(v) FROM ns.s)",
            "MERGE UPDATE SET: computing the value of column 'c'",
        ),
        (
            "MERGE INTO ns.t t USING (SELECT 9 AS k) s ON t.k = s.k \
             WHEN NOT MATCHED THEN INSERT (k, c) VALUES (s.k, (SELECT max(v) FROM ns.s))",
            "MERGE INSERT: computing the value of column 'c'",
        ),
    ] {
        let err = run(&ctx, sql).await.expect_err(sql);
        let message = err.to_string();
        assert!(
            message.contains(needle) && message.contains("3000000000"),
            "{sql}: {message}"
        );
    }
    assert_eq!(
        ok(&ctx, "SELECT k, c FROM ns.t").await,
        vec![vec!["1", "1"]]
    );
}
