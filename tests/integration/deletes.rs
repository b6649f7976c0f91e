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
pub(crate) fn field_with_id(
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
pub(crate) fn write_parquet_file(
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
    use icefloe::spec::{NestedField, PartitionSpec, PrimitiveType, Schema, Type};
    use icefloe::write::LocalTableWriter;

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
    commit_position_deletes(
        &mut w,
        &schema,
        &dir.path().join("pos.parquet"),
        &location,
        &deleted,
    );

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

/// Rows of the fragmented-delete tables: `id` 0..ROWS in order (so row groups and pages
/// have disjoint `id` ranges and a range filter prunes both), `g` = `id % 7`.
const FRAGMENTED_ROWS: i64 = 60_000;

/// The values of BIGINT column `col` over `batches`, in order.
fn ints(batches: &[datafusion::arrow::record_batch::RecordBatch], col: usize) -> Vec<i64> {
    use datafusion::arrow::array::{Array, Int64Array};
    batches
        .iter()
        .flat_map(|b| {
            let a = b
                .column(col)
                .as_any()
                .downcast_ref::<Int64Array>()
                .expect("bigint")
                .clone();
            (0..a.len()).map(move |i| a.value(i))
        })
        .collect()
}

/// The positions the fragmented tables delete: each row with probability 1/10 (fixed
/// LCG), plus every row of 20,000..20,500 (one long run beside the short ones).
fn fragmented_deleted_positions() -> Vec<i64> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..FRAGMENTED_ROWS)
        .filter(|p| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33).is_multiple_of(10) || (20_000..20_500).contains(p)
        })
        .collect()
}

/// A table of one data file of [`FRAGMENTED_ROWS`] rows (row groups of 8,192 rows,
/// pages of 1,024, so page-index pruning applies) with [`fragmented_deleted_positions`]
/// deleted: as a v2 Parquet position delete file (`dv` false) or as a v3 deletion
/// vector; with `equality`, then an equality delete file on `g` deleting `g = 3` (a
/// later commit, so it applies to the data file). Returns the table's directory.
async fn fragmented_table(dir: &std::path::Path, dv: bool, equality: bool) -> std::path::PathBuf {
    use datafusion::arrow::array::{Int32Array, Int64Array};
    use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
    use datafusion::arrow::record_batch::RecordBatch;
    use datafusion::parquet::arrow::ArrowWriter;
    use datafusion::parquet::file::properties::WriterProperties;
    use icefloe::catalog::{Catalog, FileSystemCatalog, TableCreation, TableIdent};
    use icefloe::spec::{DataContentType, NestedField, PartitionSpec, PrimitiveType, Schema, Type};
    use icefloe::transaction::{AppendFiles, RowDelta, Transaction};
    use icefloe::write::{data_file_from_parquet, write_deletion_vectors, LocalTableWriter};

    let data_path = dir.join("data.parquet");
    let data = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            field_with_id("id", DataType::Int64, 1),
            field_with_id("g", DataType::Int32, 2),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(0..FRAGMENTED_ROWS)),
            Arc::new(Int32Array::from_iter_values(
                (0..FRAGMENTED_ROWS).map(|i| (i % 7) as i32),
            )),
        ],
    )
    .expect("batch");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(8192))
        .set_data_page_row_count_limit(1024)
        .set_write_batch_size(1024)
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(&data_path).expect("create"),
        data.schema(),
        Some(props),
    )
    .expect("writer");
    w.write(&data).expect("write");
    w.close().expect("close");
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::required(2, "g", Type::Primitive(PrimitiveType::Int)),
        ],
    );
    let location = icefloe::io::normalize_location(&data_path.to_string_lossy()).expect("loc");
    let data_file = data_file_from_parquet(
        &data_path,
        &location,
        &schema,
        vec![],
        DataContentType::Data,
        vec![],
    )
    .expect("data file");
    let deleted = fragmented_deleted_positions();
    if !dv {
        let table = dir.join("table");
        let mut w = LocalTableWriter::create(
            &table,
            schema.clone(),
            PartitionSpec::unpartitioned(),
            Default::default(),
        )
        .expect("create");
        w.append(vec![data_file]).expect("append");
        commit_position_deletes(
            &mut w,
            &schema,
            &dir.join("pos.parquet"),
            &location,
            &deleted,
        );
        if equality {
            let eq = equality_delete_on_g(dir, &schema);
            w.row_delta(vec![], vec![eq]).expect("equality row delta");
        }
        return table;
    }
    let warehouse = dir.join("warehouse");
    std::fs::create_dir_all(warehouse.join("d")).expect("mkdir");
    let catalog: Arc<dyn Catalog> =
        Arc::new(FileSystemCatalog::new("w", warehouse.to_str().expect("utf-8")).expect("catalog"));
    let ident = TableIdent::parse("d.t");
    let mut creation = TableCreation::new(schema);
    creation
        .properties
        .insert("format-version".into(), "3".into());
    let table = catalog
        .create_table(&ident, creation)
        .await
        .expect("create");
    let spec_id = table.metadata().default_spec_id;
    let table = Transaction::new(Arc::clone(&catalog), ident.clone(), table)
        .add_action(AppendFiles::new(spec_id, vec![data_file]).expect("append"))
        .commit()
        .await
        .expect("commit append");
    let vector = deleted.iter().map(|p| *p as u64).collect();
    let deletes = write_deletion_vectors(
        table.file_io(),
        &format!("{}/data", table.metadata().location),
        &PartitionSpec::unpartitioned(),
        vec![],
        vec![(location, vector)],
    )
    .await
    .expect("deletion vector");
    let delta = RowDelta::new(table.metadata().current_snapshot_id)
        .add_deletes(spec_id, deletes)
        .expect("deletes");
    let table = Transaction::new(Arc::clone(&catalog), ident.clone(), table)
        .add_action(delta)
        .commit()
        .await
        .expect("commit deletes");
    if equality {
        let eq = equality_delete_on_g(dir, table.metadata().current_schema());
        let delta = RowDelta::new(table.metadata().current_snapshot_id)
            .add_deletes(spec_id, vec![eq])
            .expect("equality deletes");
        Transaction::new(catalog, ident, table)
            .add_action(delta)
            .commit()
            .await
            .expect("commit equality deletes");
    }
    warehouse.join("d").join("t")
}

/// An equality delete file on `g` (field id 2) deleting `g = 3`, in `dir`.
fn equality_delete_on_g(
    dir: &std::path::Path,
    schema: &icefloe::spec::Schema,
) -> icefloe::spec::DataFile {
    use datafusion::arrow::array::Int32Array;
    use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
    use datafusion::arrow::record_batch::RecordBatch;
    use icefloe::spec::DataContentType;
    use icefloe::write::data_file_from_parquet;

    let path = dir.join("eq-g3.parquet");
    let batch = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![field_with_id(
            "g",
            DataType::Int32,
            2,
        )])),
        vec![Arc::new(Int32Array::from(vec![3]))],
    )
    .expect("batch");
    write_parquet_file(&path, &batch, 1 << 20);
    let location = icefloe::io::normalize_location(&path.to_string_lossy()).expect("loc");
    data_file_from_parquet(
        &path,
        &location,
        schema,
        vec![],
        DataContentType::EqualityDeletes,
        vec![2],
    )
    .expect("equality delete file")
}

/// Fragmented deletes (10 % random and one long run, across 8 row groups) as v2
/// position deletes and as a v3 deletion vector give exactly the surviving rows with
/// row-group and page pruning by a range filter, with the filter pushed into the Parquet
/// reader or not, under `LIMIT` (with and without `ORDER BY`), and whether the reader
/// applies the selection as a mask or as selectors (issue 18, item 4).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fragmented_deletes_are_exact_with_pruning_pushed_filters_and_limit() {
    let gone: std::collections::HashSet<i64> = fragmented_deleted_positions().into_iter().collect();
    let kept: Vec<i64> = (0..FRAGMENTED_ROWS).filter(|i| !gone.contains(i)).collect();
    let expect = |keep: &dyn Fn(i64) -> bool| {
        let rows: Vec<i64> = kept.iter().copied().filter(|i| keep(*i)).collect();
        (rows.len() as i64, rows.iter().sum::<i64>())
    };
    for dv in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let table = fragmented_table(dir.path(), dv, false).await;
        for pushdown in [false, true] {
            // icefloe's policy, and the Parquet reader's for selections
            for (policy, force_selectors) in [
                ("auto", false),
                ("filter", false),
                ("selection", false),
                ("selection", true),
            ] {
                let case = format!(
                    "dv = {dv}, pushdown_filters = {pushdown}, position_deletes = {policy}, \
                     force_filter_selections = {force_selectors}"
                );
                let ctx = fragmented_session(policy, pushdown, force_selectors);
                let provider = IcebergTableProvider::open(table.to_str().expect("utf-8"))
                    .await
                    .expect("open");
                ctx.register_table("t", Arc::new(provider.clone()))
                    .expect("register");
                let sql = |q: &'static str| {
                    let ctx = ctx.clone();
                    async move { ctx.sql(q).await.expect("sql").collect().await.expect("run") }
                };
                // whole table
                let b = sql("SELECT count(*) AS n, sum(id) AS s FROM t").await;
                assert_eq!(
                    (ints(&b, 0)[0], ints(&b, 1)[0]),
                    expect(&|_| true),
                    "{case}"
                );
                let m = provider.last_delete_metrics().expect("scanned");
                assert_eq!(m.rows_deleted_by_position, gone.len() as u64, "{case}");
                // no column read: the scan returns positions only
                let b = sql("SELECT count(*) AS n FROM t").await;
                assert_eq!(ints(&b, 0), vec![kept.len() as i64], "{case}");
                // the deletes are fragmented: applied per batch unless selections are
                // asked for
                let plan = explain_analyze(
                    &ctx,
                    "SELECT count(*) AS n, sum(id) AS s FROM t WHERE id >= 12345 AND id < 30001",
                )
                .await;
                let per_batch = policy != "selection";
                assert_eq!(
                    plan.contains("PositionDeleteExec"),
                    per_batch,
                    "{case}: {plan}"
                );
                if per_batch {
                    // row groups pruned by the filter given to the scan; rows deleted per batch
                    assert!(
                        plan.contains("row_groups_pruned_statistics=8 total \u{2192} 3 matched"),
                        "{case}: {plan}"
                    );
                    assert!(plan.contains("rows_deleted_by_position="), "{case}: {plan}");
                    assert!(
                        !plan.contains("rows_deleted_by_position=0"),
                        "{case}: {plan}"
                    );
                }
                // a range that prunes row groups (8,192 rows each) and pages (1,024), with
                // the long deleted run inside it
                let b = sql(
                    "SELECT count(*) AS n, sum(id) AS s FROM t WHERE id >= 12345 AND id < 30001",
                )
                .await;
                assert_eq!(
                    (ints(&b, 0)[0], ints(&b, 1)[0]),
                    expect(&|i| (12345..30001).contains(&i)),
                    "{case}"
                );
                // a filter on a column not projected, and one that prunes nothing
                let b = sql("SELECT count(*) AS n, sum(id) AS s FROM t WHERE g = 3 AND id > 19990")
                    .await;
                assert_eq!(
                    (ints(&b, 0)[0], ints(&b, 1)[0]),
                    expect(&|i| i % 7 == 3 && i > 19990),
                    "{case}"
                );
                // LIMIT without order: any surviving rows that match, as many as asked
                let b = sql("SELECT id FROM t WHERE id >= 19995 AND id < 20600 LIMIT 25").await;
                let got = ints(&b, 0);
                assert_eq!(got.len(), 25, "{case}: {got:?}");
                assert!(
                    got.iter()
                        .all(|i| !gone.contains(i) && (19995..20600).contains(i)),
                    "{case}: deleted or unmatched rows in {got:?}"
                );
                let b = sql("SELECT id FROM t LIMIT 1000").await;
                let got = ints(&b, 0);
                assert_eq!(got.len(), 1000, "{case}");
                assert!(got.iter().all(|i| !gone.contains(i)), "{case}: {got:?}");
                // LIMIT with order (TopK, whose dynamic filter prunes at run time)
                let b = sql("SELECT id FROM t WHERE id > 19000 ORDER BY id DESC LIMIT 7").await;
                let want: Vec<i64> = kept.iter().rev().take(7).copied().collect();
                assert_eq!(ints(&b, 0), want, "{case}");
                let b = sql("SELECT id FROM t WHERE id >= 19990 ORDER BY id LIMIT 12").await;
                let want: Vec<i64> = kept
                    .iter()
                    .copied()
                    .filter(|i| *i >= 19990)
                    .take(12)
                    .collect();
                assert_eq!(ints(&b, 0), want, "{case}");
            }
        }
    }
}

/// A session for the fragmented tables: `icefloe.position_deletes = policy`, filters
/// pushed into the Parquet reader or not, selections forced to selectors or not, two
/// partitions.
fn fragmented_session(policy: &str, pushdown: bool, force_selectors: bool) -> SessionContext {
    let mut options = icefloe::datafusion::IcefloeOptions::default();
    options.position_deletes.set_word(policy).expect("policy");
    let mut config = datafusion::prelude::SessionConfig::new()
        .with_target_partitions(2)
        .with_option_extension(options);
    let parquet = &mut config.options_mut().execution.parquet;
    parquet.pushdown_filters = pushdown;
    parquet.reorder_filters = pushdown;
    parquet.force_filter_selections = force_selectors;
    SessionContext::new_with_config(config)
}

/// The `EXPLAIN ANALYZE` text of `sql` (the plan with its metrics).
async fn explain_analyze(ctx: &SessionContext, sql: &str) -> String {
    let batches = ctx
        .sql(&format!("EXPLAIN ANALYZE {sql}"))
        .await
        .expect("explain")
        .collect()
        .await
        .expect("run");
    datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .expect("format")
        .to_string()
}

/// A data file with fragmented position deletes (v2 file or v3 deletion vector) and a
/// later equality delete (`g = 3`): both apply, per batch or through selections, with
/// pruning filters and `LIMIT`, and `count(*)` counts neither; equality deletes probed
/// per batch, or resolved to positions by the first scan (`auto`; `resolve` under
/// `LIMIT` too) and merged with the position deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fragmented_position_deletes_compose_with_equality_deletes() {
    let gone: std::collections::HashSet<i64> = fragmented_deleted_positions().into_iter().collect();
    let kept: Vec<i64> = (0..FRAGMENTED_ROWS)
        .filter(|i| !gone.contains(i) && i % 7 != 3)
        .collect();
    let expect = |keep: &dyn Fn(i64) -> bool| {
        let rows: Vec<i64> = kept.iter().copied().filter(|i| keep(*i)).collect();
        (rows.len() as i64, rows.iter().sum::<i64>())
    };
    for dv in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let table = fragmented_table(dir.path(), dv, true).await;
        for (policy, pushdown, equality) in [
            ("auto", false, "probe"),
            ("auto", true, "probe"),
            ("selection", false, "probe"),
            ("auto", false, "auto"),
            ("auto", true, "auto"),
            ("selection", false, "resolve"),
        ] {
            let case = format!(
                "dv = {dv}, position_deletes = {policy}, pushdown = {pushdown}, \
                 equality_deletes = {equality}"
            );
            let ctx = fragmented_session(policy, pushdown, false);
            ctx.sql(&format!("SET icefloe.equality_deletes = '{equality}'"))
                .await
                .expect("set");
            let provider = IcebergTableProvider::open(table.to_str().expect("utf-8"))
                .await
                .expect("open");
            ctx.register_table("t", Arc::new(provider))
                .expect("register");
            let sql = |q: &'static str| {
                let ctx = ctx.clone();
                async move { ctx.sql(q).await.expect("sql").collect().await.expect("run") }
            };
            let b = sql("SELECT count(*) AS n, sum(id) AS s FROM t").await;
            assert_eq!(
                (ints(&b, 0)[0], ints(&b, 1)[0]),
                expect(&|_| true),
                "{case}"
            );
            let b =
                sql("SELECT count(*) AS n, sum(id) AS s FROM t WHERE id >= 12345 AND id < 30001")
                    .await;
            assert_eq!(
                (ints(&b, 0)[0], ints(&b, 1)[0]),
                expect(&|i| (12345..30001).contains(&i)),
                "{case}"
            );
            let b = sql("SELECT id FROM t WHERE id >= 19995 AND id < 20600 LIMIT 25").await;
            let got = ints(&b, 0);
            assert_eq!(got.len(), 25, "{case}: {got:?}");
            assert!(
                got.iter()
                    .all(|i| !gone.contains(i) && i % 7 != 3 && (19995..20600).contains(i)),
                "{case}: deleted or unmatched rows in {got:?}"
            );
            let b = sql("SELECT id FROM t WHERE id >= 19990 ORDER BY id LIMIT 12").await;
            let want: Vec<i64> = kept
                .iter()
                .copied()
                .filter(|i| *i >= 19990)
                .take(12)
                .collect();
            assert_eq!(ints(&b, 0), want, "{case}");
            let plan =
                explain_analyze(&ctx, "SELECT count(*) FROM t WHERE g = 3 OR id < 100").await;
            // resolved (by the first query, kept in the provider's cache), the equality
            // deletes are positions: no probe, and the file is counted as resolved
            assert_eq!(
                plan.contains("EqualityDeleteExec"),
                equality == "probe",
                "{case}: {plan}"
            );
            assert_eq!(
                plan.contains("iceberg_data_files_equality_resolved=1"),
                equality != "probe",
                "{case}: {plan}"
            );
            assert_eq!(
                plan.contains("PositionDeleteExec"),
                policy == "auto",
                "{case}: {plan}"
            );
        }
    }
}

/// A filter above per-batch deletes is taken over by `PositionDeleteExec` (no
/// `FilterExec` left; one batch copy) unless the reader applies it while decoding
/// (`pushdown_filters`); either way the rows are exact. Taken over, a filter that fails
/// only on a deleted row does not fail the query, where one failing on a live row does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_above_per_batch_deletes_are_taken_over_exactly() {
    let deleted = fragmented_deleted_positions();
    let gone: std::collections::HashSet<i64> = deleted.iter().copied().collect();
    let kept: Vec<i64> = (0..FRAGMENTED_ROWS).filter(|i| !gone.contains(i)).collect();
    // a deleted row with a live row 10 before it, and a live row
    let d = *deleted
        .iter()
        .find(|d| **d > 100 && !gone.contains(&(**d - 10)))
        .expect("a deleted row");
    let live = kept[kept.len() / 2];
    for dv in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let table = fragmented_table(dir.path(), dv, false).await;
        for pushdown in [false, true] {
            let case = format!("dv = {dv}, pushdown = {pushdown}");
            let ctx = fragmented_session("filter", pushdown, false);
            let provider = IcebergTableProvider::open(table.to_str().expect("utf-8"))
                .await
                .expect("open");
            ctx.register_table("t", Arc::new(provider))
                .expect("register");
            let sql = "SELECT count(*) AS n, sum(id) AS s FROM t WHERE id % 3 = 1 AND id < 30000";
            let b = ctx
                .sql(sql)
                .await
                .expect("sql")
                .collect()
                .await
                .expect("run");
            let want: Vec<i64> = kept
                .iter()
                .copied()
                .filter(|i| i % 3 == 1 && *i < 30000)
                .collect();
            assert_eq!(
                (ints(&b, 0)[0], ints(&b, 1)[0]),
                (want.len() as i64, want.iter().sum::<i64>()),
                "{case}"
            );
            // per batch, the filter taken over; under pushdown_filters, the reader
            // applies it
            let plan = explain_analyze(&ctx, sql).await;
            assert!(!plan.contains("FilterExec"), "{case}: {plan}");
            assert!(plan.contains("PositionDeleteExec"), "{case}: {plan}");
            let taken = plan
                .lines()
                .any(|l| l.contains("PositionDeleteExec") && l.contains("predicate="));
            assert_eq!(taken, !pushdown, "{case}: {plan}");
            if pushdown {
                // the reader evaluates filters on every decoded row, deleted ones too
                // (README, "Position deletes and deletion vectors")
                continue;
            }
            // 10 / (id - d) divides by zero only on the deleted row d; it is negative
            // (so the row fails `>= 0`) for the ten rows before d
            let sql = format!("SELECT count(*) AS n FROM t WHERE 10 / (id - {d}) >= 0");
            let b = ctx.sql(&sql).await.expect("sql").collect().await;
            let b = b.unwrap_or_else(|e| panic!("{case}: {e}"));
            let want = kept.iter().filter(|i| !(d - 10..d).contains(*i)).count();
            assert_eq!(ints(&b, 0)[0], want as i64, "{case}");
            let sql = format!("SELECT count(*) AS n FROM t WHERE 10 / (id - {live}) >= 0");
            let err = match ctx.sql(&sql).await.expect("sql").collect().await {
                Ok(_) => panic!("{case}: dividing by zero on live row {live} did not fail"),
                Err(e) => e.to_string(),
            };
            assert!(
                err.to_lowercase().contains("divide by zero"),
                "{case}: {err}"
            );
        }
    }
}

/// A scan applying deletes per batch over more than 256 data files (300 partitions of 4
/// rows each, a merge-on-read `DELETE` in each of v2 and v3): each file's index takes two
/// bytes then, and every row still finds its own file's deletes. The deleted rows sit at
/// different positions in different files, so a row given another file's deletes would
/// change the sums.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_batch_deletes_over_more_than_256_files_find_each_files_deletes() {
    use crate::dml::{lake, ok};
    let lake = lake().await;
    let ids = 0..1200i64;
    let live: Vec<i64> = ids.clone().filter(|id| id % 7 != 3).collect();
    let expected = format!(
        "{} {} {}",
        live.len(),
        live.iter().sum::<i64>(),
        live.iter().map(|id| id * id % 1009).sum::<i64>()
    );
    for version in [2, 3] {
        let t = format!("ice.ns.wide_v{version}");
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE {t} (id BIGINT, p INT) PARTITIONED BY (p) TBLPROPERTIES \
                 ('format-version'='{version}', 'write.delete.mode'='merge-on-read')"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO {t} SELECT value, CAST(value % 300 AS INT) \
                 FROM generate_series(0, 1199) ORDER BY value"
            ),
        )
        .await;
        ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id % 7 = 3")).await;
        for policy in ["filter", "auto", "selection"] {
            ok(
                &lake.ctx,
                &format!("SET icefloe.position_deletes = '{policy}'"),
            )
            .await;
            let sql =
                format!("SELECT count(*) AS n, sum(id) AS s, sum(id * id % 1009) AS q FROM {t}");
            let batches = crate::dml::run(&lake.ctx, &sql).await.expect("scan");
            let got = {
                use datafusion::arrow::array::AsArray;
                use datafusion::arrow::datatypes::Int64Type;
                let b = &batches[0];
                let v = |c: usize| b.column(c).as_primitive::<Int64Type>().value(0);
                format!("{} {} {}", v(0), v(1), v(2))
            };
            assert_eq!(got, expected, "v{version}, position_deletes = {policy}");
            if policy == "filter" {
                let plan = ok(&lake.ctx, &format!("EXPLAIN {sql}")).await;
                assert!(plan.contains("PositionDeleteExec: files="), "{plan}");
                let files = crate::dml::count(
                    &lake.ctx,
                    &format!("SELECT count(*) FROM ice.ns.\"wide_v{version}$files\""),
                )
                .await;
                assert!(files > 256, "{files} data files");
            }
        }
    }
}

/// Write a position delete file at `delete_path` deleting rows `deleted` of the data
/// file at `location`, and commit it to the table `w` writes (one `RowDelta`).
pub(crate) fn commit_position_deletes(
    w: &mut icefloe::write::LocalTableWriter,
    schema: &icefloe::spec::Schema,
    delete_path: &std::path::Path,
    location: &str,
    deleted: &[i64],
) {
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
    use datafusion::arrow::record_batch::RecordBatch;
    use icefloe::spec::DataContentType;
    use icefloe::write::data_file_from_parquet;

    let deletes = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![
            field_with_id("file_path", DataType::Utf8, 2147483546),
            field_with_id("pos", DataType::Int64, 2147483545),
        ])),
        vec![
            Arc::new(datafusion::arrow::array::StringArray::from_iter_values(
                deleted.iter().map(|_| location),
            )),
            Arc::new(Int64Array::from(deleted.to_vec())),
        ],
    )
    .expect("batch");
    write_parquet_file(delete_path, &deletes, 1 << 20);
    let delete_location =
        icefloe::io::normalize_location(&delete_path.to_string_lossy()).expect("loc");
    let delete_file = data_file_from_parquet(
        delete_path,
        &delete_location,
        schema,
        vec![],
        DataContentType::PositionDeletes,
        vec![],
    )
    .expect("delete file");
    w.row_delta(vec![], vec![delete_file]).expect("row delta");
}
