//! Row-level deletes on Spark-written tables (copies in testdata/corpus): the planning
//! counts that `EXPLAIN ANALYZE` and the CLI show.

use std::sync::Arc;

use datafusion::prelude::SessionContext;
use icefloe::IcebergTableProvider;

use crate::fixtures::testdata;

async fn run(table: &str, sql: &str) -> (IcebergTableProvider, usize) {
    let provider = IcebergTableProvider::open(testdata(table).to_str().unwrap())
        .await
        .unwrap();
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(provider.clone())).unwrap();
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    (provider, batches.iter().map(|b| b.num_rows()).sum())
}

#[tokio::test]
async fn position_deletes_are_counted() {
    let (provider, rows) = run("corpus/spark_v2_mor_position_deletes", "SELECT * FROM t").await;
    assert_eq!(rows, 43);
    let m = provider.last_delete_metrics().expect("scanned");
    assert_eq!(m.position_delete_files, 3);
    assert_eq!(m.deletion_vectors, 0);
    assert_eq!(m.equality_delete_files, 0);
    // 69 rows written, 43 live
    assert_eq!(m.rows_deleted_by_position, 26);
}

#[tokio::test]
async fn deletion_vectors_are_counted() {
    let (provider, rows) = run("corpus/spark_v3_deletion_vectors", "SELECT * FROM t").await;
    assert_eq!(rows, 50);
    let m = provider.last_delete_metrics().expect("scanned");
    assert_eq!(m.deletion_vectors, 3);
    assert_eq!(m.position_delete_files, 0);
    assert_eq!(m.rows_deleted_by_position, 45);
}

#[tokio::test]
async fn equality_deletes_are_counted_and_filters_still_apply() {
    let (provider, rows) = run(
        "corpus/spark_v2_equality_deletes_partitioned",
        "SELECT id FROM t WHERE region = 'us'",
    )
    .await;
    assert_eq!(rows, 12);
    let m = provider.last_delete_metrics().expect("scanned");
    assert!(m.equality_delete_files >= 1, "{m:?}");
    assert_eq!(m.rows_deleted_by_position, 0);
}

/// Position deletes stay exact when DataFusion splits files into byte ranges over more
/// partitions than files (each range keeps the file-level row selection).
#[tokio::test]
async fn position_deletes_with_files_split_into_ranges() {
    use datafusion::prelude::SessionConfig;
    let mut config = SessionConfig::new().with_target_partitions(16);
    config.options_mut().optimizer.repartition_file_min_size = 1;
    config.options_mut().optimizer.repartition_file_scans = true;
    let ctx = SessionContext::new_with_config(config);
    for (table, expected) in [
        ("corpus/spark_v2_mor_position_deletes", 43),
        ("corpus/spark_v3_deletion_vectors", 50),
    ] {
        let provider = IcebergTableProvider::open(testdata(table).to_str().unwrap())
            .await
            .unwrap();
        ctx.register_table("t", Arc::new(provider)).unwrap();
        let batches = ctx
            .sql("SELECT id FROM t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, expected, "{table}");
        ctx.deregister_table("t").unwrap();
    }
}
