//! Spark statement forms icefloe does not run, each refused naming the form and the way
//! to write it here (DataFusion's parser errors named neither), on a SQLite catalog in a
//! temporary directory.

use super::tests::{fails, ok, session};
use crate::ErrorKind;

#[tokio::test]
async fn spark_forms_are_refused_naming_the_form_and_the_icefloe_way() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA db").await;
    ok(&ctx, "CREATE TABLE db.t (id INT, s STRING)").await;
    ok(&ctx, "CREATE TABLE db.src (id INT, s STRING)").await;
    ok(&ctx, "INSERT INTO db.src VALUES (1, 'a')").await;
    let cases = [
        (
            "INSERT INTO db.t BY NAME SELECT 'a' AS s, 1 AS id",
            ErrorKind::Unsupported,
            "INSERT INTO db.t BY NAME: the columns of an INSERT's query are matched to the \
             table's by position; list the columns to match them by name: INSERT INTO db.t \
             (a, b, …) SELECT a, b, …",
        ),
        (
            "INSERT OVERWRITE TABLE db.t BY NAME SELECT 'a' AS s, 1 AS id",
            ErrorKind::Unsupported,
            "INSERT OVERWRITE db.t BY NAME",
        ),
        (
            "INSERT INTO db.t TABLE db.src",
            ErrorKind::Unsupported,
            "INSERT INTO db.t … TABLE db.src: a TABLE query is not run here; write INSERT \
             INTO db.t … SELECT * FROM db.src",
        ),
        (
            "INSERT INTO db.t (id, s) TABLE db.src",
            ErrorKind::Unsupported,
            "SELECT * FROM db.src",
        ),
        (
            "CREATE TABLE db.o (id INT) USING iceberg OPTIONS ('k'='v')",
            ErrorKind::Unsupported,
            "OPTIONS (…): an Iceberg table's settings are table properties, write \
             TBLPROPERTIES ('key'='value', …)",
        ),
        (
            "CREATE TABLE db.c (id INT) USING iceberg CLUSTERED BY (id) INTO 4 BUCKETS",
            ErrorKind::Unsupported,
            "CLUSTERED BY (col, …) INTO n BUCKETS: an Iceberg table is bucketed by its \
             partition spec, write PARTITIONED BY (bucket(n, col), …)",
        ),
        (
            "CALL spark_catalog.system.rewrite_manifests('db.t')",
            ErrorKind::NotFound,
            "catalog 'spark_catalog' does not exist ('spark_catalog' is Spark's session \
             catalog); CALL system.rewrite_manifests(…) runs in the current catalog 'cat' \
             (catalogs: cat)",
        ),
    ];
    for (sql, kind, needle) in cases {
        fails(&ctx, sql, kind, needle).await;
    }
    // nothing was written or created; the ways the errors name run
    assert!(ok(&ctx, "SELECT * FROM db.t").await.is_empty());
    ok(&ctx, "INSERT INTO db.t (s, id) SELECT s, id FROM db.src").await;
    ok(&ctx, "INSERT INTO db.t SELECT * FROM db.src").await;
    assert_eq!(
        ok(&ctx, "SELECT id, s FROM db.t").await,
        vec![vec!["1".to_string(), "a".to_string()]; 2]
    );
    ok(
        &ctx,
        "CREATE TABLE db.c (id INT) PARTITIONED BY (bucket(4, id))",
    )
    .await;
    ok(&ctx, "CREATE TABLE db.o (id INT) TBLPROPERTIES ('k'='v')").await;
    // the current catalog's name as the prefix runs, as Spark's does
    ok(&ctx, "CALL cat.system.rewrite_manifests('db.t')").await;
}
