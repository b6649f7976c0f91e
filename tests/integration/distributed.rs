//! Iceberg plans that cross processes (feature `distributed`, issue 15): every icefloe
//! plan node through `IcebergPhysicalCodec` (encode → bytes → decode in a fresh
//! session) shows the same `EXPLAIN` and returns the same rows, on Spark-written tables
//! with position deletes, equality deletes and deletion vectors; nodes that cannot be
//! sent yet are refused with an error naming them.

use std::sync::Arc;

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes,
    physical_plan_to_bytes_with_extension_codec,
};
use icefloe::datafusion::IcebergPhysicalCodec;
use icefloe::IcebergTableProvider;

use crate::fixtures::testdata;

/// The rows of `batches` as sorted lines (a multiset comparison).
fn sorted_rows(batches: &[RecordBatch]) -> Vec<String> {
    let text = pretty_format_batches(batches).expect("format").to_string();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(1) // the header
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

fn explain(plan: &Arc<dyn ExecutionPlan>) -> String {
    displayable(plan.as_ref()).indent(true).to_string()
}

async fn session(table: &str) -> SessionContext {
    session_at(testdata(table).to_str().unwrap()).await
}

async fn session_at(location: &str) -> SessionContext {
    // more partitions than files, and files split into ranges: each range keeps its
    // file's row selection through the codec
    let mut config = SessionConfig::new().with_target_partitions(8);
    config.options_mut().optimizer.repartition_file_min_size = 1;
    let ctx = SessionContext::new_with_config(config);
    let provider = IcebergTableProvider::open(location).await.unwrap();
    ctx.register_table("t", Arc::new(provider)).unwrap();
    ctx
}

/// Plan `sql` on `table`, send the plan through the codec into a fresh session (no
/// table, no object store registered), and check that the decoded plan shows the same
/// EXPLAIN and returns the same rows. Returns the EXPLAIN and the number of rows.
async fn round_trip(table: &str, sql: &str) -> (String, usize) {
    round_trip_at(testdata(table).to_str().unwrap(), sql).await
}

async fn round_trip_at(table: &str, sql: &str) -> (String, usize) {
    let ctx = session_at(table).await;
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let before = explain(&plan);
    let bytes =
        physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), &IcebergPhysicalCodec)
            .unwrap_or_else(|e| panic!("{table}: {sql}: encoding failed: {e}\n{before}"));
    let worker = SessionContext::new();
    let decoded = physical_plan_from_bytes_with_extension_codec(
        &bytes,
        &worker.task_ctx(),
        &IcebergPhysicalCodec,
    )
    .unwrap_or_else(|e| panic!("{table}: {sql}: decoding failed: {e}"));
    assert_eq!(explain(&decoded), before, "{table}: {sql}");
    let local = collect(plan, ctx.task_ctx()).await.unwrap();
    let remote = collect(decoded, worker.task_ctx()).await.unwrap();
    assert_eq!(sorted_rows(&remote), sorted_rows(&local), "{table}: {sql}");
    let rows = local.iter().map(|b| b.num_rows()).sum();
    (before, rows)
}

#[tokio::test]
async fn scan_with_position_deletes_round_trips() {
    let (plan, rows) = round_trip("corpus/spark_v2_mor_position_deletes", "SELECT * FROM t").await;
    // 69 rows written, 26 deleted by position (tests/integration/deletes.rs)
    assert_eq!(rows, 43);
    assert!(plan.contains("DataSourceExec"), "{plan}");
}

#[tokio::test]
async fn scan_with_position_deletes_and_filter_round_trips() {
    let (_, rows) = round_trip(
        "corpus/spark_v2_mor_position_deletes",
        "SELECT id, count(*) FROM t WHERE id > 10 GROUP BY id",
    )
    .await;
    assert!(rows > 0);
}

#[tokio::test]
async fn scan_with_deletion_vectors_and_initial_defaults_round_trips() {
    // v3: deletion vectors (Puffin) and columns with `initial-default`s
    let (_, rows) = round_trip("corpus/spark_v3_deletion_vectors", "SELECT * FROM t").await;
    assert_eq!(rows, 50);
}

#[tokio::test]
async fn equality_delete_exec_round_trips() {
    let (plan, rows) = round_trip(
        "corpus/spark_v2_equality_deletes_partitioned",
        "SELECT * FROM t",
    )
    .await;
    assert!(plan.contains("EqualityDeleteExec"), "{plan}");
    // 26 rows survive the partition-scoped deletes (corpus README)
    assert_eq!(rows, 26);
}

#[tokio::test]
async fn equality_delete_exec_with_predicate_round_trips() {
    let (plan, rows) = round_trip(
        "corpus/spark_v2_equality_deletes_partitioned",
        "SELECT id FROM t WHERE region = 'us'",
    )
    .await;
    assert!(plan.contains("EqualityDeleteExec"), "{plan}");
    assert!(plan.contains("predicate="), "{plan}");
    assert_eq!(rows, 12);
}

#[tokio::test]
async fn nested_and_typed_scans_round_trip() {
    for table in [
        "corpus/spark_v2_nested",
        "corpus/spark_v1_types_identity",
        "corpus/pyiceberg_v2_types_uuid_time",
        "corpus/spark_v2_day_partitioned",
    ] {
        let (_, rows) = round_trip(table, "SELECT * FROM t").await;
        assert!(rows > 0, "{table}");
    }
}

/// A table whose files have no field ids (registered with `add_files`): columns come from
/// the table's name mapping, which the codec carries (and INT96 timestamps).
#[tokio::test]
async fn scan_through_the_name_mapping_round_trips() {
    let corpus = match std::env::var_os("ICEFLOE_CORPUS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    };
    let table = corpus.join("int96_migrated_timestamps");
    if !table.is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is missing",
            table.display()
        );
        println!("SKIPPED: {} is missing", table.display());
        return;
    }
    let (_, rows) = round_trip_at(table.to_str().unwrap(), "SELECT id, ts FROM t").await;
    // the corpus answer: 14 rows (cases.json)
    assert_eq!(rows, 14);
    let (_, rows) = round_trip_at(
        table.to_str().unwrap(),
        "SELECT id FROM t WHERE ts > TIMESTAMP '2100-01-01 00:00:00'",
    )
    .await;
    assert_eq!(rows, 2);
}

/// Without icefloe's codec, `datafusion-proto` refuses the scan (it reaches the
/// extension codec) instead of sending it without its row selections and column
/// mapping.
#[tokio::test]
async fn scan_without_the_codec_is_refused() {
    let ctx = session("corpus/spark_v2_mor_position_deletes").await;
    let plan = ctx
        .sql("SELECT * FROM t")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let err = physical_plan_to_bytes(plan).expect_err("must not encode");
    assert!(err.to_string().contains("DataSourceExec"), "{err}");
}

/// Plans that write (`INSERT`: `IcebergWriteExec`; `DELETE` / `UPDATE`: the row-level
/// scan with its `_pos` column under `IcebergRowLevelExec`) are refused naming what cannot
/// be sent: they run and commit on one node.
#[tokio::test]
async fn writes_and_row_level_changes_are_refused_naming_the_node() {
    let lake = crate::dml::lake().await;
    let ctx = &lake.ctx;
    crate::dml::ok(
        ctx,
        "CREATE TABLE ice.ns.t (id INT, name STRING) \
         TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
    )
    .await;
    crate::dml::ok(ctx, "INSERT INTO ice.ns.t VALUES (1, 'a'), (2, 'b')").await;
    for (sql, names) in [
        (
            "INSERT INTO ice.ns.t VALUES (3, 'c')",
            &["IcebergWriteExec"][..],
        ),
        (
            "DELETE FROM ice.ns.t WHERE id = 1",
            &["IcebergRowLevelExec", "row-level scan"][..],
        ),
        (
            "UPDATE ice.ns.t SET name = 'z' WHERE id = 2",
            &["IcebergRowLevelExec", "row-level scan"][..],
        ),
    ] {
        let plan = ctx
            .sql(sql)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let err = physical_plan_to_bytes_with_extension_codec(plan, &IcebergPhysicalCodec)
            .expect_err(sql)
            .to_string();
        assert!(names.iter().any(|n| err.contains(n)), "{sql}: {err}");
        assert!(
            err.contains("IcebergPhysicalCodec cannot send"),
            "{sql}: {err}"
        );
    }
    // nothing was written by planning
    let rows = crate::dml::ok(ctx, "SELECT count(*) FROM ice.ns.t").await;
    assert!(rows.contains("| 2 "), "{rows}");
}

// ---- on datafusion-distributed's in-process workers ----

use datafusion_distributed::display_plan_ascii;
use icefloe::datafusion::distributed::in_process_session;

/// In-process workers for the tests: more than two, so that scans are split.
const WORKERS: usize = 3;

/// A distributed session (`WORKERS` in-process workers, tiny scan partitions so that
/// even small tables are split across tasks) and a single-node session.
fn sessions() -> (SessionContext, SessionContext) {
    let config = SessionConfig::new().with_target_partitions(2);
    let distributed = in_process_session(WORKERS, config.clone(), 1).unwrap();
    (distributed, SessionContext::new_with_config(config))
}

/// Run `sql` on both sessions; the rows must be equal. Returns the distributed plan as
/// datafusion-distributed shows it (with its stages).
async fn same_rows(distributed: &SessionContext, single: &SessionContext, sql: &str) -> String {
    let df = distributed
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let plan = df.create_physical_plan().await.unwrap();
    let shown = display_plan_ascii(plan.as_ref(), false);
    let remote = collect(plan, distributed.task_ctx())
        .await
        .unwrap_or_else(|e| panic!("{sql}: distributed: {e}\n{shown}"));
    let local = single.sql(sql).await.unwrap().collect().await.unwrap();
    assert_eq!(sorted_rows(&remote), sorted_rows(&local), "{sql}\n{shown}");
    assert!(
        !local.is_empty() || sql.contains("LIMIT 0"),
        "{sql}: no rows"
    );
    shown
}

#[tokio::test]
async fn delete_tables_on_three_workers_equal_one_node() {
    let (distributed, single) = sessions();
    for (table, queries) in [
        (
            "corpus/spark_v2_mor_position_deletes",
            &[
                "SELECT * FROM t",
                "SELECT count(*), sum(id) FROM t WHERE id > 5",
            ][..],
        ),
        (
            "corpus/spark_v3_deletion_vectors",
            &["SELECT * FROM t", "SELECT count(*) FROM t"][..],
        ),
        (
            "corpus/spark_v2_equality_deletes_partitioned",
            &[
                "SELECT * FROM t",
                "SELECT region, count(*) FROM t GROUP BY region",
                "SELECT id, name FROM t WHERE region = 'us'",
            ][..],
        ),
    ] {
        for ctx in [&distributed, &single] {
            let provider = IcebergTableProvider::open(testdata(table).to_str().unwrap())
                .await
                .unwrap();
            ctx.register_table("t", Arc::new(provider)).unwrap();
        }
        for sql in queries {
            let shown = same_rows(&distributed, &single, sql).await;
            // the scan really ran as several tasks on the workers
            assert!(
                shown.contains("Stage"),
                "{table}: {sql}: not distributed\n{shown}"
            );
            assert!(
                shown.contains("t0:") && shown.contains("t1:"),
                "{table}: {sql}: the scan is not split across tasks\n{shown}"
            );
        }
        for ctx in [&distributed, &single] {
            ctx.deregister_table("t").unwrap();
        }
    }
}

/// `tpchgen-cli`: `$TPCHGEN_CLI`, else `/opt/tpchgen/bin/tpchgen-cli`, else on `PATH`.
fn tpchgen_cli() -> std::path::PathBuf {
    if let Some(path) = std::env::var_os("TPCHGEN_CLI") {
        return path.into();
    }
    let opt = std::path::Path::new("/opt/tpchgen/bin/tpchgen-cli");
    if opt.exists() {
        return opt.into();
    }
    "tpchgen-cli".into()
}

const TPCH_TABLES: [&str; 8] = [
    "customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier",
];

/// TPC-H SF0.1 (all 22 queries, `../shared/bench/tpch-queries`) on Iceberg tables
/// over `tpchgen-cli`'s files: the same rows on three in-process workers as on one node.
#[tokio::test]
async fn tpch_sf01_on_three_workers_equals_one_node() {
    use icefloe::spec::PartitionSpec;
    use icefloe::write::{schema_from_parquet, LocalTableWriter};

    let dir = tempfile::tempdir().unwrap();
    let parquet = dir.path().join("parquet");
    let bin = tpchgen_cli();
    let status = std::process::Command::new(&bin)
        .args(["parquet", "-s", "0.1", "--parts", "2", "--output-dir"])
        .arg(&parquet)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run '{}' (set TPCHGEN_CLI, or pip install tpchgen-cli): {e}",
                bin.display()
            )
        });
    assert!(status.success(), "tpchgen-cli: {status}");
    let (distributed, single) = sessions();
    for t in TPCH_TABLES {
        let mut files: Vec<_> = std::fs::read_dir(parquet.join(t))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let table_dir = dir.path().join("iceberg").join(t);
        let schema = schema_from_parquet(&files[0]).unwrap();
        let mut writer = LocalTableWriter::create(
            &table_dir,
            schema,
            PartitionSpec::unpartitioned(),
            Default::default(),
        )
        .unwrap();
        writer.add_parquet_files(&files).unwrap();
        for ctx in [&distributed, &single] {
            let provider = IcebergTableProvider::open(table_dir.to_str().unwrap())
                .await
                .unwrap();
            ctx.register_table(t, Arc::new(provider)).unwrap();
        }
    }
    let queries =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/tpch-queries");
    for q in 1..=22 {
        let path = queries.join(format!("q{q:02}.sql"));
        let sql = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("TPC-H query '{}': {e}", path.display()));
        let shown = same_rows(&distributed, &single, &sql).await;
        if q == 1 {
            assert!(shown.contains("Stage"), "q01 is not distributed\n{shown}");
        }
    }
}
