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

/// A position delete file naming positions past the end of its data file is corrupt: the
/// query fails naming the data file. (It was once taken as "every row deleted" when such
/// positions outnumbered the file's rows, and the file was skipped silently.)
#[tokio::test]
async fn positions_past_the_end_of_the_data_file_are_an_error() {
    use datafusion::arrow::array::{Array, Int64Array, StringArray};
    use datafusion::arrow::record_batch::RecordBatch;

    use crate::fixtures::{
        copy_table, files_with_suffix, patch_manifest_file_sizes, rewrite_parquet,
    };

    let dir = copy_table("corpus/spark_v2_mor_position_deletes");
    let root = dir.path();
    let delete_files = files_with_suffix(&root.join("data"), "-deletes.parquet");
    assert!(!delete_files.is_empty());
    for delete_file in &delete_files {
        rewrite_parquet(delete_file, |schema, batch| {
            // 1,000 more deleted positions, from 1,000,000 on, for the batch's first data file
            let paths = batch
                .column_by_name("file_path")
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .expect("file_path");
            let first = paths.value(0).to_string();
            let path_column: StringArray = (0..batch.num_rows())
                .map(|i| paths.value(i).to_string())
                .chain((0..1000).map(|_| first.clone()))
                .map(Some)
                .collect();
            let positions = batch
                .column_by_name("pos")
                .and_then(|c| c.as_any().downcast_ref::<Int64Array>())
                .expect("pos");
            let pos_column: Int64Array = positions
                .values()
                .iter()
                .copied()
                .chain(1_000_000..1_001_000)
                .map(Some)
                .collect();
            assert_eq!(schema.fields().len(), 2, "file_path and pos only");
            let schema = Arc::new(schema.clone());
            let batch = RecordBatch::try_new(
                Arc::clone(&schema),
                vec![Arc::new(path_column), Arc::new(pos_column)],
            )
            .expect("batch");
            (schema, batch)
        });
    }
    patch_manifest_file_sizes(root);
    let err = crate::fixtures::run_sql(root.to_str().unwrap(), "SELECT count(*) FROM t")
        .await
        .expect_err("corrupt positions must fail the query");
    assert!(err.contains("is deleted, but the file has"), "{err}");
}
