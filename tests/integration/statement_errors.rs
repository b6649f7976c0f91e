//! Errors of DDL, INSERT and procedure calls name what the user wrote (the column, the
//! argument as SQL text, the catalog), say what is allowed, and change nothing; and
//! `remove_orphan_files` never looks outside its table.

use icefloe::catalog::TableIdent;

use crate::dml::{lake, run, Lake};

async fn metadata_location(lake: &Lake, table: &str) -> String {
    lake.catalog
        .load_table(&TableIdent::parse(table))
        .await
        .expect("table")
        .metadata_location()
        .to_string()
}

/// `sql` fails with an error holding `expected`, no Rust debug text, and `table` unchanged.
async fn fails(lake: &Lake, table: &str, sql: &str, expected: &str) -> String {
    let before = metadata_location(lake, table).await;
    let err = run(&lake.ctx, sql).await.unwrap_err();
    assert!(
        err.contains(expected),
        "{sql}:\n{err}\nexpected: {expected}"
    );
    for debug in ["Text(", "Number(", "Bool(", "Timestamp(", "Some("] {
        assert!(!err.contains(debug), "{sql}: Rust debug text in {err}");
    }
    assert_eq!(metadata_location(lake, table).await, before, "{sql}");
    err
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_type_without_an_iceberg_type_names_its_column() {
    let lake = lake().await;
    run(&lake.ctx, "CREATE TABLE ice.ns.b (c INT, d DECIMAL(10, 2))")
        .await
        .unwrap();
    let err = fails(
        &lake,
        "ns.b",
        "ALTER TABLE ice.ns.b ALTER COLUMN d TYPE DECIMAL(40,2)",
        "column 'd': type DECIMAL(40, 2) has no Iceberg type (Iceberg decimals have a \
         precision of at most 38 and a scale of at least 0)",
    )
    .await;
    assert!(!err.contains("column 'c'"), "{err}");
    fails(
        &lake,
        "ns.b",
        "ALTER TABLE ice.ns.b ADD COLUMN e DECIMAL(40,2)",
        "column 'e': type DECIMAL(40, 2) has no Iceberg type",
    )
    .await;
    fails(
        &lake,
        "ns.b",
        "ALTER TABLE ice.ns.b ADD COLUMN \"we\"\"ird\" DECIMAL(40,2)",
        "column 'we\"ird': type DECIMAL(40, 2)",
    )
    .await;
    // a valid one is planned under the column's own name as before
    run(
        &lake.ctx,
        "ALTER TABLE ice.ns.b ALTER COLUMN d TYPE DECIMAL(12,2)",
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_for_a_required_column_names_it() {
    let lake = lake().await;
    for sql in [
        "CREATE TABLE ice.ns.e3 (id INT, s VARCHAR) TBLPROPERTIES ('format-version'='3')",
        "ALTER TABLE ice.ns.e3 ADD COLUMN n INT NOT NULL DEFAULT 5",
        "ALTER TABLE ice.ns.e3 ALTER COLUMN n DROP DEFAULT",
    ] {
        run(&lake.ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    fails(
        &lake,
        "ns.e3",
        "INSERT INTO ice.ns.e3 (id) VALUES (1)",
        "column 'n' is required (NOT NULL) but a row to write holds null for it (it has no \
         write-default, so an INSERT must give it a value)",
    )
    .await;
    run(
        &lake.ctx,
        "ALTER TABLE ice.ns.e3 ALTER COLUMN n SET DEFAULT 6",
    )
    .await
    .unwrap();
    let err = fails(
        &lake,
        "ns.e3",
        "INSERT INTO ice.ns.e3 SELECT 1, 'a', CAST(NULL AS INT)",
        "column 'n' is required (NOT NULL) but a row to write holds null for it",
    )
    .await;
    assert!(!err.contains("write-default"), "{err}");
    run(&lake.ctx, "INSERT INTO ice.ns.e3 (id) VALUES (1)")
        .await
        .unwrap();
}
