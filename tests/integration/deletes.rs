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

/// An Arrow field carrying its Iceberg field id for the Parquet writer.
fn field_with_id(
    name: &str,
    data_type: datafusion::arrow::datatypes::DataType,
    id: i32,
) -> datafusion::arrow::datatypes::Field {
    datafusion::arrow::datatypes::Field::new(name, data_type, false).with_metadata(
        [("PARQUET:field_id".to_string(), id.to_string())]
            .into_iter()
            .collect(),
    )
}

/// Write `batch` as a Parquet file with row groups of `row_group_rows`.
fn write_parquet_file(
    path: &std::path::Path,
    batch: &datafusion::arrow::record_batch::RecordBatch,
    row_group_rows: usize,
) {
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::file::properties::WriterProperties;
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(row_group_rows))
        .build();
    let file = std::fs::File::create(path).expect("create");
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).expect("writer");
    w.write(batch).expect("write");
    w.close().expect("close");
}

/// 10 % of the rows position-deleted at random (a fragmented selection: runs of about 9
/// kept rows, across row groups): the same, right rows whether the Parquet reader applies
/// the selection as a boolean mask (its `Auto` policy's choice for short runs, the
/// default) or as a queue of selectors (`force_filter_selections`; issue 18, item 4).
#[tokio::test]
async fn fragmented_position_deletes_are_exact_as_mask_and_as_selectors() {
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
    use datafusion::arrow::record_batch::RecordBatch;
    use datafusion::prelude::SessionConfig;
    use icefloe::spec::{DataContentType, NestedField, PartitionSpec, PrimitiveType, Schema, Type};
    use icefloe::write::{data_file_from_parquet, LocalTableWriter};

    const ROWS: i64 = 50_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let data_path = dir.path().join("data.parquet");
    let ids = Int64Array::from_iter_values(0..ROWS);
    let data = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![field_with_id(
            "id",
            DataType::Int64,
            1,
        )])),
        vec![Arc::new(ids)],
    )
    .expect("batch");
    write_parquet_file(&data_path, &data, 8192);
    let schema = Schema::new(
        0,
        vec![NestedField::required(
            1,
            "id",
            Type::Primitive(PrimitiveType::Long),
        )],
    );
    let table = dir.path().join("table");
    let mut w = LocalTableWriter::create(
        &table,
        schema.clone(),
        PartitionSpec::unpartitioned(),
        Default::default(),
    )
    .expect("create");
    w.add_parquet_files(std::slice::from_ref(&data_path))
        .expect("add");

    // positions drawn by a fixed LCG, each row with probability 1/10
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let deleted: Vec<i64> = (0..ROWS)
        .filter(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33).is_multiple_of(10)
        })
        .collect();
    let location = icefloe::io::normalize_location(&data_path.to_string_lossy()).expect("loc");
    let delete_path = dir.path().join("pos.parquet");
    let deletes = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            field_with_id("file_path", DataType::Utf8, 2147483546),
            field_with_id("pos", DataType::Int64, 2147483545),
        ])),
        vec![
            Arc::new(datafusion::arrow::array::StringArray::from_iter_values(
                deleted.iter().map(|_| location.as_str()),
            )),
            Arc::new(Int64Array::from(deleted.clone())),
        ],
    )
    .expect("batch");
    write_parquet_file(&delete_path, &deletes, 1 << 20);
    let delete_location =
        icefloe::io::normalize_location(&delete_path.to_string_lossy()).expect("loc");
    let delete_file = data_file_from_parquet(
        &delete_path,
        &delete_location,
        &schema,
        vec![],
        DataContentType::PositionDeletes,
        vec![],
    )
    .expect("delete file");
    w.row_delta(vec![], vec![delete_file]).expect("row delta");

    let gone: std::collections::HashSet<i64> = deleted.iter().copied().collect();
    let kept: Vec<i64> = (0..ROWS).filter(|i| !gone.contains(i)).collect();
    assert!(
        (4_000..6_000).contains(&deleted.len()),
        "{} deleted",
        deleted.len()
    );
    let want = format!("{} {}", kept.len(), kept.iter().sum::<i64>());
    for force_selectors in [false, true] {
        let mut config = SessionConfig::new().with_target_partitions(2);
        config
            .options_mut()
            .execution
            .parquet
            .force_filter_selections = force_selectors;
        let ctx = SessionContext::new_with_config(config);
        let provider = IcebergTableProvider::open(table.to_str().expect("utf-8"))
            .await
            .expect("open");
        ctx.register_table("t", Arc::new(provider.clone()))
            .expect("register");
        let batches = ctx
            .sql("SELECT count(*) AS n, sum(id) AS s FROM t")
            .await
            .expect("sql")
            .collect()
            .await
            .expect("run");
        let n = batches[0]
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("n");
        let s = batches[0]
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("s");
        assert_eq!(
            format!("{} {}", n.value(0), s.value(0)),
            want,
            "force_filter_selections = {force_selectors}"
        );
        let m = provider.last_delete_metrics().expect("scanned");
        assert_eq!(m.rows_deleted_by_position, deleted.len() as u64);
    }
}
