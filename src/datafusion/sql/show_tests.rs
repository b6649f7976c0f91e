//! `SHOW TBLPROPERTIES` and `SHOW CREATE TABLE` on a SQLite catalog in a temporary
//! directory.

use std::sync::Arc;

use super::tests::{fails, ident, ok, session};
use crate::catalog::Catalog;
use crate::ErrorKind;

async fn current_snapshot_id(catalog: &Arc<dyn Catalog>, name: &str) -> String {
    catalog
        .load_table(&ident(name))
        .await
        .expect("table")
        .metadata()
        .current_snapshot_id
        .expect("a snapshot")
        .to_string()
}

fn pairs(rows: &[(&str, &str)]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|(k, v)| vec![k.to_string(), v.to_string()])
        .collect()
}

#[tokio::test]
async fn show_tblproperties_lists_what_spark_lists_sorted_by_key() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id BIGINT NOT NULL, s STRING) COMMENT 'a comment' \
         TBLPROPERTIES ('write.delete.mode'='merge-on-read', 'owner'='me', \
         's3.secret-access-key'='hunter2', 'write.metadata.metrics.column.key'='full', \
         'a.first'='1')",
    )
    .await;
    // no snapshot yet; comment and owner are Spark's reserved keys (DESCRIBE's), not shown
    assert_eq!(
        ok(&ctx, "SHOW TBLPROPERTIES ns.t").await,
        pairs(&[
            ("a.first", "1"),
            ("current-snapshot-id", "none"),
            ("format", "iceberg/parquet"),
            ("format-version", "2"),
            ("s3.secret-access-key", "***"),
            ("write.delete.mode", "merge-on-read"),
            ("write.metadata.metrics.column.key", "full"),
        ])
    );

    ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')").await;
    ok(
        &ctx,
        "ALTER TABLE ns.t WRITE ORDERED BY id DESC NULLS LAST, bucket(4, s), truncate(2, s)",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t SET IDENTIFIER FIELDS id").await;
    let snapshot = current_snapshot_id(&catalog, "ns.t").await;
    assert_eq!(
        ok(&ctx, "show tblproperties cat.ns.t").await,
        pairs(&[
            ("a.first", "1"),
            ("current-snapshot-id", &snapshot),
            ("format", "iceberg/parquet"),
            ("format-version", "2"),
            ("identifier-fields", "[id]"),
            ("s3.secret-access-key", "***"),
            (
                "sort-order",
                "id DESC NULLS LAST, bucket(4, s) ASC NULLS FIRST, truncate(s, 2) ASC NULLS FIRST",
            ),
            ("write.delete.mode", "merge-on-read"),
            ("write.distribution-mode", "range"),
            ("write.metadata.metrics.column.key", "full"),
        ])
    );
}

#[tokio::test]
async fn show_tblproperties_of_one_key() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT) TBLPROPERTIES ('format-version'='3', \
         'write.delete.mode'='merge-on-read')",
    )
    .await;
    let row = |k: &str, v: &str| vec![vec![k.to_string(), v.to_string()]];
    for sql in [
        "SHOW TBLPROPERTIES ns.t ('write.delete.mode')",
        "SHOW TBLPROPERTIES ns.t (write.delete.mode)",
    ] {
        assert_eq!(
            ok(&ctx, sql).await,
            row("write.delete.mode", "merge-on-read"),
            "{sql}"
        );
    }
    assert_eq!(
        ok(&ctx, "SHOW TBLPROPERTIES ns.t ('format-version')").await,
        row("format-version", "3")
    );
    // as Spark: a row saying the table does not have it (reserved keys too)
    for key in ["nope", "location"] {
        assert_eq!(
            ok(&ctx, &format!("SHOW TBLPROPERTIES ns.t ('{key}')")).await,
            row(
                key,
                &format!("Table cat.ns.t does not have property: {key}")
            ),
        );
    }
}

#[tokio::test]
async fn show_tblproperties_refusals() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT)").await;
    ok(&ctx, "CREATE TABLE public.mem (id INT)").await;
    fails(
        &ctx,
        "SHOW TBLPROPERTIES public.mem",
        ErrorKind::Unsupported,
        "SHOW TBLPROPERTIES public.mem: not an Iceberg table",
    )
    .await;
    fails(
        &ctx,
        "SHOW TBLPROPERTIES ns.missing",
        ErrorKind::NotFound,
        "table 'cat.ns.missing' not found",
    )
    .await;
    fails(
        &ctx,
        "SHOW TBLPROPERTIES ns.t ('a', 'b')",
        ErrorKind::InvalidArgument,
        "SHOW TBLPROPERTIES: expected end of statement",
    )
    .await;
    fails(
        &ctx,
        "SHOW TBLPROPERTIES ns.t 'a'",
        ErrorKind::InvalidArgument,
        "SHOW TBLPROPERTIES: expected end of statement",
    )
    .await;
}
