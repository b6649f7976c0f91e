//! Iceberg plans that cross processes (feature `distributed`, issue 15): every icefloe
//! plan node through `IcebergPhysicalCodec` (encode → bytes → decode in a fresh
//! session) shows the same `EXPLAIN` and returns the same rows, on Spark-written tables
//! with position deletes, equality deletes and deletion vectors; nodes that cannot be
//! sent yet are refused with an error naming them.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
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
pub(crate) fn sorted_rows(batches: &[RecordBatch]) -> Vec<String> {
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
    session_with(location, &[]).await
}

/// [`session_at`] with `icefloe.position_deletes = position_deletes`.
/// A session of 8 partitions over the table at `location` as `t`, with the icefloe
/// options `settings` (name without prefix, value).
async fn session_with(location: &str, settings: &[(&str, &str)]) -> SessionContext {
    use datafusion::common::config::ExtensionOptions;
    // more partitions than files, and files split into ranges: each range keeps its
    // file's row selection (or its per-batch deletes) through the codec
    let mut options = icefloe::datafusion::IcefloeOptions::default();
    for (key, value) in settings {
        options.set(key, value).unwrap();
    }
    let mut config = SessionConfig::new()
        .with_target_partitions(8)
        .with_option_extension(options);
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
    round_trip_with(table, sql, &[]).await
}

async fn round_trip_with(table: &str, sql: &str, settings: &[(&str, &str)]) -> (String, usize) {
    let ctx = session_with(table, settings).await;
    round_trip_in(&ctx, sql, table).await
}

/// `sql` planned in `ctx`, encoded, decoded in a fresh worker session: the same plan
/// text and rows as run locally. Returns the plan text and the row count; `what` names
/// the case in failures.
async fn round_trip_in(ctx: &SessionContext, sql: &str, what: &str) -> (String, usize) {
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
            .unwrap_or_else(|e| panic!("{what}: {sql}: encoding failed: {e}\n{before}"));
    let worker = SessionContext::new();
    let decoded = physical_plan_from_bytes_with_extension_codec(
        &bytes,
        &worker.task_ctx(),
        &IcebergPhysicalCodec,
    )
    .unwrap_or_else(|e| panic!("{what}: {sql}: decoding failed: {e}"));
    assert_eq!(explain(&decoded), before, "{what}: {sql}");
    let local = collect(plan, ctx.task_ctx()).await.unwrap();
    let remote = collect(decoded, worker.task_ctx()).await.unwrap();
    assert_eq!(sorted_rows(&remote), sorted_rows(&local), "{what}: {sql}");
    let rows = local.iter().map(|b| b.num_rows()).sum();
    (before, rows)
}

#[tokio::test]
async fn scan_with_position_deletes_round_trips() {
    let table = testdata("corpus/spark_v2_mor_position_deletes");
    let table = table.to_str().unwrap();
    // fragmented deletes applied per batch (the positions cross in PositionDeleteExec,
    // the scan's row-number column with the scan), and as row selections
    for (policy, node) in [
        ("auto", "PositionDeleteExec"),
        ("selection", "DataSourceExec"),
    ] {
        let (plan, rows) =
            round_trip_with(table, "SELECT * FROM t", &[("position_deletes", policy)]).await;
        // 69 rows written, 26 deleted by position (tests/integration/deletes.rs)
        assert_eq!(rows, 43, "{policy}");
        assert!(plan.contains(node), "{policy}: {plan}");
        assert_eq!(
            plan.contains("PositionDeleteExec"),
            policy == "auto",
            "{policy}: {plan}"
        );
    }
    // a filter above per-batch deletes is taken over by PositionDeleteExec and crosses
    // the codec with it
    let (plan, rows) = round_trip_with(
        table,
        "SELECT * FROM t WHERE id % 2 = 0",
        &[("position_deletes", "filter")],
    )
    .await;
    assert!(
        plan.lines()
            .any(|l| l.contains("PositionDeleteExec") && l.contains("predicate=")),
        "{plan}"
    );
    assert!(!plan.contains("FilterExec"), "{plan}");
    let (_, unfiltered) = round_trip_with(
        table,
        "SELECT * FROM t WHERE id % 2 = 0",
        &[("position_deletes", "selection")],
    )
    .await;
    assert_eq!(rows, unfiltered);
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
    let (plan, rows) = round_trip("corpus/spark_v3_deletion_vectors", "SELECT * FROM t").await;
    assert_eq!(rows, 50);
    assert!(plan.contains("PositionDeleteExec"), "{plan}");
}

/// Per-batch deletes over 257 data files (a v2 position delete and a v3 DV in each):
/// the file-index column is `UInt16` then, and its per-file values cross the codec with
/// the scan; the decoded plan answers the same rows, which are the live ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_batch_deletes_over_257_files_round_trip() {
    use crate::dml::{lake, ok};
    let lake = lake().await;
    for version in [2, 3] {
        let name = format!("wide_v{version}");
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE ice.ns.{name} (id BIGINT, p INT) PARTITIONED BY (p) TBLPROPERTIES \
                 ('format-version'='{version}', 'write.delete.mode'='merge-on-read')"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO ice.ns.{name} SELECT value, CAST(value % 257 AS INT) \
                 FROM generate_series(0, 770) ORDER BY value"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("DELETE FROM ice.ns.{name} WHERE id % 5 = 1"),
        )
        .await;
        let location = lake
            .catalog
            .load_table(&icefloe::catalog::TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("load")
            .metadata_location()
            .to_string();
        let live: Vec<i64> = (0..771).filter(|id| id % 5 != 1).collect();
        for sql in [
            "SELECT id FROM t",
            "SELECT id FROM t WHERE p >= 250 OR id % 3 = 0",
        ] {
            let (plan, rows) =
                round_trip_with(&location, sql, &[("position_deletes", "filter")]).await;
            assert!(plan.contains("PositionDeleteExec"), "v{version}: {plan}");
            let want = if sql.contains("WHERE") {
                live.iter()
                    .filter(|id| *id % 257 >= 250 || *id % 3 == 0)
                    .count()
            } else {
                live.len()
            };
            assert_eq!(rows, want, "v{version}: {sql}");
        }
    }
}

/// The equality delete table, probed per batch (`EqualityDeleteExec` through the
/// codec).
async fn probed_round_trip(sql: &str) -> (String, usize) {
    let table = testdata("corpus/spark_v2_equality_deletes_partitioned");
    let probe = [("equality_deletes", "probe")];
    round_trip_with(table.to_str().unwrap(), sql, &probe).await
}

#[tokio::test]
async fn equality_delete_exec_round_trips() {
    let (plan, rows) = probed_round_trip("SELECT * FROM t").await;
    assert!(plan.contains("EqualityDeleteExec"), "{plan}");
    // 26 rows survive the partition-scoped deletes (corpus README)
    assert_eq!(rows, 26);
}

/// Equality deletes resolved to positions (the default) travel as position deletes.
#[tokio::test]
async fn resolved_equality_deletes_round_trip() {
    let (plan, rows) = round_trip(
        "corpus/spark_v2_equality_deletes_partitioned",
        "SELECT * FROM t",
    )
    .await;
    assert!(!plan.contains("EqualityDeleteExec"), "{plan}");
    assert_eq!(rows, 26);
}

#[tokio::test]
async fn equality_delete_exec_with_predicate_round_trips() {
    let (plan, rows) = probed_round_trip("SELECT id FROM t WHERE region = 'us'").await;
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

/// What of a write cannot cross is refused naming it: the commit of an `INSERT`
/// (`IcebergWriteExec`, which stays on the coordinator: its writers,
/// `IcebergDataFileWriterExec`, round-trip), and `DELETE` / `UPDATE` (the row-level scan
/// with its `_pos` column under `IcebergRowLevelExec`), which run and commit on one node.
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
    // the writing half of the INSERT round-trips, with its sort
    crate::dml::ok(
        ctx,
        "ALTER TABLE ice.ns.t WRITE ORDERED BY id DESC NULLS LAST",
    )
    .await;
    let plan = ctx
        .sql("INSERT INTO ice.ns.t VALUES (3, 'c')")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    fn find(plan: &Arc<dyn ExecutionPlan>, name: &str) -> Option<Arc<dyn ExecutionPlan>> {
        if plan.name() == name {
            return Some(Arc::clone(plan));
        }
        plan.children().into_iter().find_map(|c| find(c, name))
    }
    let writer = find(&plan, "IcebergDataFileWriterExec").expect("the writer");
    let bytes =
        physical_plan_to_bytes_with_extension_codec(Arc::clone(&writer), &IcebergPhysicalCodec)
            .unwrap();
    let worker = SessionContext::new();
    let decoded = physical_plan_from_bytes_with_extension_codec(
        &bytes,
        &worker.task_ctx(),
        &IcebergPhysicalCodec,
    )
    .unwrap();
    assert_eq!(explain(&decoded), explain(&writer));
    assert_eq!(
        format!("{:?}", decoded.required_input_ordering()),
        format!("{:?}", writer.required_input_ordering())
    );
    assert!(writer.required_input_ordering()[0].is_some());
    // a sort by a transform: the writer and the sort below it (both holding a call of
    // `icefloe_partition_transform`) round-trip through the codec, the function by name
    crate::dml::ok(ctx, "ALTER TABLE ice.ns.t WRITE ORDERED BY bucket(4, id)").await;
    let plan = ctx
        .sql("INSERT INTO ice.ns.t VALUES (3, 'c')")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let writer = find(&plan, "IcebergDataFileWriterExec").expect("the writer");
    assert!(
        explain(&writer).contains("icefloe_partition_transform(id@0, bucket[4], int)"),
        "{}",
        explain(&writer)
    );
    let bytes =
        physical_plan_to_bytes_with_extension_codec(Arc::clone(&writer), &IcebergPhysicalCodec)
            .unwrap();
    let decoded = physical_plan_from_bytes_with_extension_codec(
        &bytes,
        &worker.task_ctx(),
        &IcebergPhysicalCodec,
    )
    .unwrap();
    assert_eq!(explain(&decoded), explain(&writer));
    assert_eq!(
        format!("{:?}", decoded.required_input_ordering()),
        format!("{:?}", writer.required_input_ordering())
    );
    // nothing was written by planning
    let rows = crate::dml::ok(ctx, "SELECT count(*) FROM ice.ns.t").await;
    assert!(rows.contains("| 2 "), "{rows}");
}

/// A writer whose input floors nanoseconds into a microsecond column (icefloe's
/// `icefloe_floor_time_units` under the cast to the table's type) crosses to a worker
/// that does not register the function: the codec decodes it by its name.
#[tokio::test]
async fn a_writer_flooring_nanoseconds_round_trips() {
    let lake = crate::dml::lake().await;
    let ctx = &lake.ctx;
    crate::dml::ok(
        ctx,
        "CREATE TABLE ice.ns.src (id BIGINT, t TIMESTAMP(9)) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    crate::dml::ok(
        ctx,
        "INSERT INTO ice.ns.src VALUES (1, TIMESTAMP '1969-12-31 23:59:59.9999995')",
    )
    .await;
    crate::dml::ok(ctx, "CREATE TABLE ice.ns.t (id BIGINT, ts TIMESTAMP)").await;
    let plan = ctx
        .sql("INSERT INTO ice.ns.t SELECT id, t FROM ice.ns.src")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    fn writer_of(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
        if plan.name() == "IcebergDataFileWriterExec" {
            return Some(Arc::clone(plan));
        }
        plan.children().into_iter().find_map(writer_of)
    }
    let writer = writer_of(&plan).expect("the writer");
    assert!(
        explain(&writer).contains("icefloe_floor_time_units(t@1"),
        "{}",
        explain(&writer)
    );
    let bytes =
        physical_plan_to_bytes_with_extension_codec(Arc::clone(&writer), &IcebergPhysicalCodec)
            .unwrap();
    let worker = SessionContext::new();
    let decoded = physical_plan_from_bytes_with_extension_codec(
        &bytes,
        &worker.task_ctx(),
        &IcebergPhysicalCodec,
    )
    .unwrap();
    assert_eq!(explain(&decoded), explain(&writer));
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

/// Run `sql` on the distributed session: its sorted rows and its plan as
/// datafusion-distributed shows it (with its stages).
async fn run_on_workers(distributed: &SessionContext, sql: &str) -> (Vec<String>, String) {
    let df = distributed
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let plan = df.create_physical_plan().await.unwrap();
    let shown = display_plan_ascii(plan.as_ref(), false);
    let remote = collect(plan, distributed.task_ctx())
        .await
        .unwrap_or_else(|e| panic!("{sql}: distributed: {e}\n{shown}"));
    (sorted_rows(&remote), shown)
}

/// Run `sql` on both sessions; the rows must be equal. Returns the distributed plan as
/// datafusion-distributed shows it (with its stages).
async fn same_rows(distributed: &SessionContext, single: &SessionContext, sql: &str) -> String {
    let (remote, shown) = run_on_workers(distributed, sql).await;
    let local = single.sql(sql).await.unwrap().collect().await.unwrap();
    assert_eq!(remote, sorted_rows(&local), "{sql}\n{shown}");
    assert!(
        !local.is_empty() || sql.contains("LIMIT 0"),
        "{sql}: no rows"
    );
    shown
}

/// Spark-written tables with position deletes, deletion vectors (v3) and equality
/// deletes (`testdata/corpus`), and queries over each (as table `t`).
pub(crate) const DELETE_TABLE_QUERIES: [(&str, &[&str]); 3] = [
    (
        "corpus/spark_v2_mor_position_deletes",
        &[
            "SELECT * FROM t",
            "SELECT count(*), sum(id) FROM t WHERE id > 5",
        ],
    ),
    (
        "corpus/spark_v3_deletion_vectors",
        &["SELECT * FROM t", "SELECT count(*) FROM t"],
    ),
    (
        "corpus/spark_v2_equality_deletes_partitioned",
        &[
            "SELECT * FROM t",
            "SELECT region, count(*) FROM t GROUP BY region",
            "SELECT id, name FROM t WHERE region = 'us'",
        ],
    ),
];

#[tokio::test]
async fn delete_tables_on_three_workers_equal_one_node() {
    let (distributed, single) = sessions();
    for (table, queries) in DELETE_TABLE_QUERIES {
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

/// `../shared/bench/tpch-queries` and TPC-H SF0.1 Parquet (`tpchgen-cli`, 2 files per
/// table) in `dir/parquet/<table>/`; `None` (the test named `test` is skipped, saying so)
/// outside CI when the queries or a runnable `tpchgen-cli` are missing. CI installs
/// tpchgen-cli and has ../shared.
fn tpch_sf01_parquet(dir: &Path, test: &str) -> Option<(PathBuf, PathBuf)> {
    let queries = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/tpch-queries");
    let bin = tpchgen_cli();
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    let runnable = std::process::Command::new(&bin)
        .arg("--version")
        .output()
        .is_ok();
    if !ci && (!queries.is_dir() || !runnable) {
        eprintln!(
            "\n*** SKIPPED: {test} (needs {} and a runnable tpchgen-cli: set TPCHGEN_CLI) ***\n",
            queries.display()
        );
        return None;
    }
    let parquet = dir.join("parquet");
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
    Some((queries, parquet))
}

/// TPC-H SF0.1 as Iceberg tables: `tpchgen-cli`'s Parquet files (two per table) under
/// `dir`, added to one unpartitioned Iceberg table per TPC-H table. Returns the query
/// directory (`qNN.sql`) and each table's name and directory; `None` when the inputs are
/// missing outside CI (see [`tpch_sf01_parquet`]).
pub(crate) fn tpch_sf01_tables(
    dir: &Path,
    test: &str,
) -> Option<(PathBuf, Vec<(&'static str, PathBuf)>)> {
    use icefloe::spec::PartitionSpec;
    use icefloe::write::{schema_from_parquet, LocalTableWriter};

    let (queries, parquet) = tpch_sf01_parquet(dir, test)?;
    let mut tables = vec![];
    for t in TPCH_TABLES {
        let mut files: Vec<_> = std::fs::read_dir(parquet.join(t))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let table_dir = dir.join("iceberg").join(t);
        let schema = schema_from_parquet(&files[0]).unwrap();
        let mut writer = LocalTableWriter::create(
            &table_dir,
            schema,
            PartitionSpec::unpartitioned(),
            Default::default(),
        )
        .unwrap();
        writer.add_parquet_files(&files).unwrap();
        tables.push((t, table_dir));
    }
    Some((queries, tables))
}

/// TPC-H SF0.1 in a SQLite-catalog lake after merge-on-read changes made through SQL and
/// the `RowDelta` API: `orders` (v2) with position deletes, `lineitem` (v3) with deletion
/// vectors and an equality delete file on `l_orderkey`, `customer` (v2) and `part` (v3)
/// updated in merge-on-read mode (deletes plus new data files); checked to hold each kind
/// of delete file. Returns the lake, the query directory and the eight tables as loaded
/// from the catalog; `None` when the inputs are missing outside CI.
pub(crate) async fn tpch_sf01_merge_on_read(
    test: &str,
) -> Option<(Lake, PathBuf, Vec<(&'static str, icefloe::Table)>)> {
    use datafusion::prelude::ParquetReadOptions;
    use icefloe::catalog::TableIdent;

    let lake = crate::dml::lake().await;
    let (queries, parquet) = tpch_sf01_parquet(lake.dir.path(), test)?;
    for t in TPCH_TABLES {
        let source = format!("{}/", parquet.join(t).display());
        lake.ctx
            .register_parquet(format!("src_{t}"), &source, ParquetReadOptions::default())
            .await
            .unwrap();
        let version = if matches!(t, "lineitem" | "part") {
            3
        } else {
            2
        };
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE ice.ns.{t} TBLPROPERTIES ('format-version'='{version}', \
                 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read') \
                 AS SELECT * FROM src_{t}"
            ),
        )
        .await;
    }
    for change in [
        "DELETE FROM ice.ns.orders WHERE o_orderkey % 13 = 0",
        "DELETE FROM ice.ns.lineitem WHERE l_orderkey % 13 = 0",
        "UPDATE ice.ns.customer SET c_acctbal = c_acctbal + 1 WHERE c_custkey % 10 = 0",
        "UPDATE ice.ns.part SET p_retailprice = p_retailprice * 2 WHERE p_partkey % 9 = 0",
    ] {
        ok(&lake.ctx, change).await;
    }
    let keys = crate::dml::run(
        &lake.ctx,
        "SELECT DISTINCT l_orderkey FROM ice.ns.lineitem WHERE l_orderkey % 17 = 1",
    )
    .await
    .unwrap();
    let keys: Vec<i64> = keys
        .iter()
        .flat_map(|b| {
            let a = b.column(0).as_any();
            let a = a
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .expect("l_orderkey is a BIGINT");
            a.values().to_vec()
        })
        .collect();
    assert!(keys.len() > 1000, "{} keys", keys.len());
    crate::dml::equality_delete_on(&lake, "lineitem", "l_orderkey", &keys).await;
    // every kind of delete file is there
    for (t, expected) in [
        ("orders", ["1", "PARQUET"]),
        ("customer", ["1", "PARQUET"]),
        ("lineitem", ["1", "PUFFIN"]),
        ("lineitem", ["2", "PARQUET"]),
        ("part", ["1", "PUFFIN"]),
    ] {
        let kinds = ok(
            &lake.ctx,
            &format!(
                "SELECT DISTINCT content, file_format FROM ice.ns.\"{t}$delete_files\" \
                 ORDER BY content"
            ),
        )
        .await;
        let found = kinds.lines().any(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            cells.len() == 4 && cells[1..3] == expected
        });
        assert!(found, "{t}: {expected:?} not in\n{kinds}");
    }
    let mut tables = vec![];
    for t in TPCH_TABLES {
        let table = lake
            .catalog
            .load_table(&TableIdent::parse(&format!("ns.{t}")))
            .await
            .unwrap();
        tables.push((t, table));
    }
    Some((lake, queries, tables))
}

/// TPC-H query `q` (1..=22) of `queries`.
pub(crate) fn tpch_query(queries: &Path, q: usize) -> String {
    let path = queries.join(format!("q{q:02}.sql"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("TPC-H query '{}': {e}", path.display()))
}

/// Each TPC-H query of `queries` (1..=22) with its sorted rows on `single`, which
/// must have some: the answers every distributed engine is compared with.
pub(crate) async fn tpch_answers(
    single: &SessionContext,
    queries: &Path,
) -> Vec<(String, Vec<String>)> {
    let mut answers = vec![];
    for q in 1..=22 {
        let sql = tpch_query(queries, q);
        let rows = single
            .sql(&sql)
            .await
            .unwrap_or_else(|e| panic!("q{q:02}: {e}"))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("q{q:02} on one node: {e}"));
        assert!(!rows.is_empty(), "q{q:02}: no rows");
        answers.push((sql, sorted_rows(&rows)));
    }
    answers
}

/// The TPC-H `answers` ([`tpch_answers`]) on three in-process workers: the same rows,
/// and q01 runs in stages.
async fn tpch_same_rows_on_workers(
    distributed: &SessionContext,
    answers: &[(String, Vec<String>)],
) {
    for (i, (sql, want)) in answers.iter().enumerate() {
        let (remote, shown) = run_on_workers(distributed, sql).await;
        assert_eq!(&remote, want, "{sql}\n{shown}");
        if i == 0 {
            assert!(shown.contains("Stage"), "q01 is not distributed\n{shown}");
        }
    }
}

/// TPC-H SF0.1 (all 22 queries, `../shared/bench/tpch-queries`) on Iceberg tables
/// over `tpchgen-cli`'s files: the same rows on three in-process datafusion-distributed
/// workers and (feature `ballista`) through Ballista standalone as on one node. One
/// test for both engines, so the tables are made and the answers computed once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpch_sf01_on_distributed_engines_equals_one_node() {
    let dir = tempfile::tempdir().unwrap();
    let Some((queries, tables)) = tpch_sf01_tables(
        dir.path(),
        "tpch_sf01_on_distributed_engines_equals_one_node",
    ) else {
        return;
    };
    let (distributed, single) = sessions();
    let open = |table_dir: &PathBuf| {
        let location = table_dir.to_str().unwrap().to_string();
        async move {
            Arc::new(IcebergTableProvider::open(&location).await.unwrap())
                as Arc<dyn datafusion::catalog::TableProvider>
        }
    };
    for (t, table_dir) in &tables {
        for ctx in [&distributed, &single] {
            ctx.register_table(*t, open(table_dir).await).unwrap();
        }
    }
    let answers = tpch_answers(&single, &queries).await;
    tpch_same_rows_on_workers(&distributed, &answers).await;
    #[cfg(feature = "ballista")]
    {
        let mut providers = vec![];
        for (t, table_dir) in &tables {
            providers.push((*t, open(table_dir).await));
        }
        crate::ballista_standalone::tpch_same_rows_on_ballista(providers, &answers).await;
    }
}

/// TPC-H SF0.1 after merge-on-read changes (see [`tpch_sf01_merge_on_read`]): all 22
/// queries give the same rows on three in-process workers and (feature `ballista`)
/// through Ballista standalone as on one node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpch_sf01_after_merge_on_read_changes_on_distributed_engines_equals_one_node() {
    let Some((_lake, queries, tables)) = tpch_sf01_merge_on_read(
        "tpch_sf01_after_merge_on_read_changes_on_distributed_engines_equals_one_node",
    )
    .await
    else {
        return;
    };
    let (distributed, single) = sessions();
    for (t, table) in &tables {
        for ctx in [&distributed, &single] {
            let provider = IcebergTableProvider::try_new(table.clone()).unwrap();
            ctx.register_table(*t, Arc::new(provider)).unwrap();
        }
    }
    let answers = tpch_answers(&single, &queries).await;
    tpch_same_rows_on_workers(&distributed, &answers).await;
    #[cfg(feature = "ballista")]
    {
        let providers = tables
            .iter()
            .map(|(t, table)| {
                let provider = IcebergTableProvider::try_new(table.clone()).unwrap();
                (
                    *t,
                    Arc::new(provider) as Arc<dyn datafusion::catalog::TableProvider>,
                )
            })
            .collect();
        crate::ballista_standalone::tpch_same_rows_on_ballista(providers, &answers).await;
    }
}

// ---- INSERT on datafusion-distributed's in-process workers ----

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use datafusion::common::Result as DFResult;
use datafusion::execution::{SessionState, TaskContext};
use datafusion_distributed::{DistributedExt, WorkerQueryContext, WorkerSessionBuilder};
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use icefloe::datafusion::distributed::in_process_session_with;

use crate::dml::{ok, Lake};

/// What the in-process workers saw: the writers they decoded (one per task that writes),
/// and a data file to remove when the first task of a query reaches a worker (a read
/// that then fails on that worker, mid-query).
#[derive(Debug, Default)]
struct Observed {
    writers_decoded: AtomicUsize,
    remove_on_first_task: Mutex<Option<PathBuf>>,
}

/// [`IcebergPhysicalCodec`], counting the writers it decodes.
#[derive(Debug)]
struct ObservingCodec(Arc<Observed>);

impl PhysicalExtensionCodec for ObservingCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let plan = IcebergPhysicalCodec.try_decode(buf, inputs, ctx, proto_converter)?;
        if plan.name() == "IcebergDataFileWriterExec" {
            self.0.writers_decoded.fetch_add(1, Ordering::SeqCst);
        }
        Ok(plan)
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<()> {
        IcebergPhysicalCodec.try_encode(node, buf, proto_converter)
    }

    fn try_decode_udf(
        &self,
        name: &str,
        buf: &[u8],
    ) -> DFResult<Arc<datafusion::logical_expr::ScalarUDF>> {
        IcebergPhysicalCodec.try_decode_udf(name, buf)
    }
}

/// Worker sessions decoding with [`ObservingCodec`].
#[derive(Debug, Clone)]
struct ObservedWorkers(Arc<Observed>);

#[async_trait::async_trait]
impl WorkerSessionBuilder for ObservedWorkers {
    async fn build_session_state(&self, ctx: WorkerQueryContext) -> DFResult<SessionState> {
        let remove = self.0.remove_on_first_task.lock().unwrap().take();
        if let Some(path) = remove {
            std::fs::remove_file(&path).unwrap();
        }
        let mut state = ctx
            .builder
            .with_distributed_user_codec(ObservingCodec(Arc::clone(&self.0)))
            .build();
        icefloe::datafusion::distributed::register_worker_functions(&mut state)?;
        Ok(state)
    }
}

/// A coordinator over `WORKERS` in-process workers (tiny scan partitions, so every scan
/// is split across them) with the lake's catalog attached as `ice`.
async fn distributed_lake(lake: &Lake, observed: &Arc<Observed>) -> SessionContext {
    let config = icefloe::datafusion::register_iceberg_options(
        SessionConfig::new().with_target_partitions(2),
    );
    let ctx =
        in_process_session_with(WORKERS, config, 1, ObservedWorkers(Arc::clone(observed))).unwrap();
    icefloe::datafusion::register_iceberg_functions(&ctx);
    crate::catalog::attach(&ctx, "ice", Arc::clone(&lake.catalog)).await;
    ctx
}

/// The physical plan of `sql` on a distributed session, and its stages as
/// datafusion-distributed shows them.
async fn distributed_plan(ctx: &SessionContext, sql: &str) -> (Arc<dyn ExecutionPlan>, String) {
    let plan = ctx
        .sql(sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let shown = display_plan_ascii(plan.as_ref(), false);
    (plan, shown)
}

/// `ice.ns.big_source`: 6,000 rows in six data files (one `INSERT` each).
async fn big_source(lake: &Lake) {
    crate::dml::create(lake, "big_source", "", "").await;
    for lo in (0..6000).step_by(1000) {
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO ice.ns.big_source SELECT value AS id, CAST(value % 5 AS INT) AS k, \
                 concat('s', CAST(value % 7 AS VARCHAR)) AS s, value / 4.0 AS d \
                 FROM generate_series({lo}, {lo} + 999)"
            ),
        )
        .await;
    }
}

/// The data files of `ice.ns.<table>`'s current snapshot.
async fn data_files(ctx: &SessionContext, table: &str) -> Vec<String> {
    let batches = ctx
        .sql(&format!(
            "SELECT file_path FROM ice.ns.\"{table}$files\" ORDER BY file_path"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let mut out = vec![];
    for b in &batches {
        let column = datafusion::arrow::compute::cast(
            b.column(0),
            &datafusion::arrow::datatypes::DataType::Utf8,
        )
        .unwrap();
        let column = column
            .as_any()
            .downcast_ref::<datafusion::arrow::array::StringArray>()
            .unwrap();
        out.extend(column.iter().flatten().map(str::to_string));
    }
    out
}

/// The Parquet files under the directory of table `table` in the lake's warehouse.
fn parquet_files_of(lake: &Lake, table: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                out.push(path);
            }
        }
    }
    let mut out = vec![];
    walk(&lake.warehouse, &mut out);
    out.retain(|p| p.components().any(|c| c.as_os_str() == table));
    out.sort();
    out
}

async fn snapshot_count(ctx: &SessionContext, table: &str) -> String {
    ok(
        ctx,
        &format!("SELECT count(*) AS n FROM ice.ns.\"{table}$snapshots\""),
    )
    .await
}

async fn all_rows(ctx: &SessionContext, table: &str) -> Vec<String> {
    let batches = ctx
        .sql(&format!("SELECT * FROM ice.ns.{table}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    sorted_rows(&batches)
}

/// `INSERT INTO t SELECT … FROM big_source` on three in-process workers: the writers run
/// in the workers' tasks (each task decodes its own), the coordinator commits once (one
/// snapshot, files from every task's writers), and the rows equal the same `INSERT` on
/// one node; then an `INSERT OVERWRITE` the same way, and PyIceberg reads the rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_select_on_three_workers_commits_once() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    // a partitioned target: each writer fans its rows out by `k`
    crate::dml::create(&lake, "t", "PARTITIONED BY (k)", "").await;
    crate::dml::create(&lake, "t_single", "PARTITIONED BY (k)", "").await;
    let observed = Arc::new(Observed::default());
    let distributed = distributed_lake(&lake, &observed).await;

    let sql = "INSERT INTO ice.ns.t SELECT * FROM ice.ns.big_source";
    let (plan, shown) = distributed_plan(&distributed, sql).await;
    // the commit in the head stage (the coordinator), the writers in a stage of
    // `WORKERS` tasks with the scan
    let (head, stages) = shown.split_once("Stage").expect("a distributed plan");
    assert!(head.contains("IcebergWriteExec"), "{shown}");
    assert!(!head.contains("IcebergDataFileWriterExec"), "{shown}");
    assert!(stages.contains("IcebergDataFileWriterExec"), "{shown}");
    assert!(
        stages.contains(&format!("tasks={WORKERS}")),
        "the writers' stage does not run on {WORKERS} tasks\n{shown}"
    );
    let count = collect(plan, distributed.task_ctx()).await.unwrap();
    assert!(
        pretty_format_batches(&count)
            .unwrap()
            .to_string()
            .contains("| 6000  |"),
        "{}",
        pretty_format_batches(&count).unwrap()
    );
    // every task decoded a writer on a worker
    assert!(
        observed.writers_decoded.load(Ordering::SeqCst) >= WORKERS,
        "writers decoded on workers: {}",
        observed.writers_decoded.load(Ordering::SeqCst)
    );
    // one commit; files from more writers than one task has (2 partitions each)
    assert_eq!(
        snapshot_count(&distributed, "t").await,
        "+---+\n| n |\n+---+\n| 1 |\n+---+"
    );
    let files = data_files(&distributed, "t").await;
    let writers: HashSet<&str> = files
        .iter()
        .filter_map(|f| f.rsplit('/').next()?.splitn(3, '-').nth(2))
        .collect();
    assert!(writers.len() > 2, "{files:?}");
    // every file the commit references exists; nothing else was left in the table
    let on_disk: Vec<String> = parquet_files_of(&lake, "t")
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    let mut referenced: Vec<String> = files
        .iter()
        .map(|f| f.rsplit('/').next().unwrap().to_string())
        .collect();
    referenced.sort();
    let mut on_disk_sorted = on_disk.clone();
    on_disk_sorted.sort();
    assert_eq!(on_disk_sorted, referenced);

    // the same INSERT on one node
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.t_single SELECT * FROM ice.ns.big_source",
    )
    .await;
    let rows = all_rows(&lake.ctx, "t").await;
    assert_eq!(rows.len(), 6000);
    assert_eq!(rows, all_rows(&lake.ctx, "t_single").await);
    assert_eq!(rows, all_rows(&lake.ctx, "big_source").await);

    // INSERT OVERWRITE the same way: one more snapshot, the new rows only
    let count = distributed
        .sql("INSERT OVERWRITE ice.ns.t SELECT * FROM ice.ns.big_source WHERE id < 2500")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(
        pretty_format_batches(&count)
            .unwrap()
            .to_string()
            .contains("| 2500  |"),
        "{}",
        pretty_format_batches(&count).unwrap()
    );
    assert_eq!(
        snapshot_count(&distributed, "t").await,
        "+---+\n| n |\n+---+\n| 2 |\n+---+"
    );
    ok(
        &lake.ctx,
        "INSERT OVERWRITE ice.ns.t_single SELECT * FROM ice.ns.big_source WHERE id < 2500",
    )
    .await;
    let rows = all_rows(&lake.ctx, "t").await;
    assert_eq!(rows.len(), 2500);
    assert_eq!(rows, all_rows(&lake.ctx, "t_single").await);

    // PyIceberg reads the same rows
    if crate::interop::python().is_some() {
        let pyi = crate::interop::pyiceberg_read(&lake.db, &lake.warehouse, "ns.t");
        let ours = crate::interop::icefloe_rows(&lake.ctx, "ice.ns.t", &pyi["schema"]).await;
        assert_eq!(ours.len(), 2500);
        crate::interop::assert_same_rows(
            "ns.t: icefloe vs PyIceberg",
            pyi["rows"].as_array().expect("rows"),
            &ours,
        );
    }
}

/// `INSERT … SELECT` into a table partitioned by `truncate(1000, id)` and `k` on three
/// workers: the rows are shuffled by their partition values (`write.distribution-mode`
/// `hash`, Spark's default for a partitioned table) before the writers, so each
/// partition is written by one writer — one file per partition — and the rows equal
/// the source's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_into_a_partitioned_table_on_workers_shuffles_by_partition() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    crate::dml::create(&lake, "b", "PARTITIONED BY (truncate(1000, id), k)", "").await;
    let observed = Arc::new(Observed::default());
    let distributed = distributed_lake(&lake, &observed).await;
    let sql = "INSERT INTO ice.ns.b SELECT * FROM ice.ns.big_source";
    let (plan, shown) = distributed_plan(&distributed, sql).await;
    // the shuffle's key: the spec's formula of truncate(1000, id), and k
    assert!(
        shown.contains("Hash([id@0 - (id@0 % 1000 + 1000) % 1000, k@1]"),
        "{shown}"
    );
    assert!(shown.contains("IcebergDataFileWriterExec"), "{shown}");
    let count = collect(plan, distributed.task_ctx()).await.unwrap();
    assert!(
        pretty_format_batches(&count)
            .unwrap()
            .to_string()
            .contains("| 6000  |"),
        "{}",
        pretty_format_batches(&count).unwrap()
    );
    assert!(observed.writers_decoded.load(Ordering::SeqCst) >= WORKERS);
    // one file per partition (6 × 5): each partition's rows reached one writer
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT count(*) AS files, count(DISTINCT partition) AS partitions, \
             sum(record_count) AS n FROM ice.ns.\"b$files\""
        )
        .await,
        "+-------+------------+------+\n\
         | files | partitions | n    |\n\
         +-------+------------+------+\n\
         | 30    | 30         | 6000 |\n\
         +-------+------------+------+"
    );
    assert_eq!(
        all_rows(&lake.ctx, "b").await,
        all_rows(&lake.ctx, "big_source").await
    );
}

/// One data file of `ice.ns.big_source`, as a local path.
async fn one_source_file(ctx: &SessionContext) -> PathBuf {
    let files = data_files(ctx, "big_source").await;
    let file = &files[files.len() / 2];
    PathBuf::from(file.strip_prefix("file://").unwrap_or(file))
}

/// A worker whose read fails mid-query (a data file of the scan removed once the first
/// task reached a worker): the query returns the worker's error naming the file, never
/// partial rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_failing_mid_query_fails_the_query() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    let observed = Arc::new(Observed::default());
    let distributed = distributed_lake(&lake, &observed).await;
    let file = one_source_file(&distributed).await;
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    *observed.remove_on_first_task.lock().unwrap() = Some(file.clone());
    let sql = "SELECT * FROM ice.ns.big_source";
    let (plan, shown) = distributed_plan(&distributed, sql).await;
    assert!(shown.contains(&format!("tasks={WORKERS}")), "{shown}");
    let err = collect(plan, distributed.task_ctx())
        .await
        .expect_err("a query whose worker failed returned rows")
        .to_string();
    assert!(err.contains(&name), "{err}");
    assert!(!file.exists());
    // later queries fail the same way (never rows without the file's)
    for sql in [
        "SELECT count(*), sum(id) FROM ice.ns.big_source",
        "SELECT k, count(*) FROM ice.ns.big_source GROUP BY k",
    ] {
        let err = distributed
            .sql(sql)
            .await
            .unwrap()
            .collect()
            .await
            .expect_err(sql)
            .to_string();
        assert!(err.contains(&name), "{sql}: {err}");
    }
}

/// An `INSERT … SELECT` whose worker fails mid-query commits nothing: no new snapshot,
/// the table's rows unchanged, and the files the other writers wrote are not referenced
/// (and are removed: see the README's distributed section).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_whose_worker_fails_mid_query_commits_nothing() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    crate::dml::create(&lake, "t", "PARTITIONED BY (k)", "").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.0), (2, 2, 'b', 2.0)",
    )
    .await;
    let observed = Arc::new(Observed::default());
    let distributed = distributed_lake(&lake, &observed).await;
    let before_rows = all_rows(&distributed, "t").await;
    let before_files = parquet_files_of(&lake, "t");
    assert_eq!(before_files.len(), 2);
    let file = one_source_file(&distributed).await;
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    *observed.remove_on_first_task.lock().unwrap() = Some(file);
    let err = distributed
        .sql("INSERT INTO ice.ns.t SELECT * FROM ice.ns.big_source")
        .await
        .unwrap()
        .collect()
        .await
        .expect_err("an INSERT whose worker failed committed")
        .to_string();
    assert!(err.contains(&name), "{err}");
    assert!(observed.writers_decoded.load(Ordering::SeqCst) >= 1);
    assert_eq!(
        snapshot_count(&distributed, "t").await,
        "+---+\n| n |\n+---+\n| 1 |\n+---+"
    );
    assert_eq!(all_rows(&distributed, "t").await, before_rows);
    assert_eq!(all_rows(&lake.ctx, "t").await, before_rows);
    // the writers remove what they wrote (the ones cancelled in the background)
    let mut left = parquet_files_of(&lake, "t");
    for _ in 0..100 {
        if left == before_files {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        left = parquet_files_of(&lake, "t");
    }
    assert_eq!(left, before_files, "files of the failed INSERT were left");
}

/// A scan planned from the session's cached planned position deletes (the second scan
/// of a session, its live-row bits built by the first) crosses the codec as the first
/// did, with `icefloe.position_deletes` switched within the session.
#[tokio::test]
async fn scan_with_cached_planned_position_deletes_round_trips() {
    let table = testdata("corpus/spark_v2_mor_position_deletes");
    let ctx = session_with(table.to_str().unwrap(), &[]).await;
    for policy in ["auto", "filter", "selection", "auto", "filter", "auto"] {
        ctx.sql(&format!("SET icefloe.position_deletes = '{policy}'"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        for sql in ["SELECT * FROM t", "SELECT * FROM t WHERE id % 2 = 0"] {
            let (_, rows) = round_trip_in(&ctx, sql, policy).await;
            if sql == "SELECT * FROM t" {
                // 69 rows written, 26 deleted by position (tests/integration/deletes.rs)
                assert_eq!(rows, 43, "{policy}");
            }
        }
    }
}

/// A scan planning each manifest as it reads it (`icefloe.deferred_planning_min_files`)
/// has no planned files to send: the codec refuses it naming the option.
#[tokio::test]
async fn a_deferred_scan_is_refused_naming_the_option() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    ok(&lake.ctx, "SET icefloe.deferred_planning_min_files = 1").await;
    let plan = lake
        .ctx
        .sql("SELECT * FROM ice.ns.big_source")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let shown = explain(&plan);
    assert!(shown.contains(".avro"), "not deferred: {shown}");
    let err = physical_plan_to_bytes_with_extension_codec(plan, &IcebergPhysicalCodec)
        .expect_err("a deferred scan")
        .to_string();
    assert!(
        err.contains("IcebergPhysicalCodec cannot send")
            && err.contains("icefloe.deferred_planning_min_files = 0"),
        "{err}"
    );
}

/// A distributed session plans every file first whatever the option says, so its scans
/// can be sent to workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distributed_sessions_do_not_defer_planning() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    let mut config = icefloe::datafusion::register_iceberg_options(
        SessionConfig::new().with_target_partitions(2),
    );
    if let Some(options) = config
        .options_mut()
        .extensions
        .get_mut::<icefloe::datafusion::IcefloeOptions>()
    {
        options.deferred_planning_min_files = 1;
    }
    let observed = Arc::new(Observed::default());
    let distributed =
        in_process_session_with(WORKERS, config, 1, ObservedWorkers(Arc::clone(&observed)))
            .unwrap();
    crate::catalog::attach(&distributed, "ice", Arc::clone(&lake.catalog)).await;
    let sql = "SELECT k, count(*) AS n, sum(id) AS s FROM ice.ns.big_source GROUP BY k ORDER BY k";
    let (plan, shown) = distributed_plan(&distributed, sql).await;
    assert!(!shown.contains(".avro"), "{shown}");
    let rows = collect(plan, distributed.task_ctx()).await.unwrap();
    let text = pretty_format_batches(&rows).unwrap().to_string();
    assert_eq!(text, crate::dml::ok(&lake.ctx, sql).await);
}

/// Grouped `min`/`max` over NaNs on three in-process workers give Spark's answers: the
/// workers resolve `min`/`max` by name, and `IcebergWorkerSessionBuilder` makes them
/// icefloe's there (DataFusion's grouped accumulator answered by row order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouped_min_max_over_nan_on_three_workers_are_sparks() {
    let lake = crate::dml::lake().await;
    crate::nan_semantics::nan_groups(&lake, "nan_groups").await;
    let config = icefloe::datafusion::register_iceberg_options(
        SessionConfig::new().with_target_partitions(2),
    );
    let distributed = in_process_session(WORKERS, config, 1).unwrap();
    crate::catalog::attach(&distributed, "ice", Arc::clone(&lake.catalog)).await;
    let (sql, expected) = crate::nan_semantics::nan_groups_query("ice.ns.nan_groups");
    let (plan, shown) = distributed_plan(&distributed, &sql).await;
    // the partial aggregation runs in the workers' tasks
    let (_, stages) = shown.split_once("Stage").expect("a distributed plan");
    assert!(stages.contains("mode=Partial"), "{shown}");
    let rows = collect(plan, distributed.task_ctx()).await.unwrap();
    assert_eq!(
        pretty_format_batches(&rows).unwrap().to_string(),
        expected,
        "{shown}"
    );
}

/// Grouped `min`/`max` of structs with NULL fields and lists with NULL elements on three
/// in-process workers: NULL fields and elements first (Spark's order) and the list
/// column's element field id kept, as a single session answers. The workers' accumulators
/// are icefloe's, whose states (the values themselves) cross the shuffle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouped_struct_and_list_min_max_on_three_workers_put_nulls_first() {
    let lake = crate::dml::lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.nested (k INT, s STRUCT<a: INT, b: INT>, l ARRAY<INT>)",
    )
    .await;
    for values in [
        "(1, named_struct('a', CAST(NULL AS INT), 'b', 1), [CAST(NULL AS INT)]), \
         (2, named_struct('a', 1, 'b', 7), [4])",
        "(1, named_struct('a', 2, 'b', 1), [2]), (2, named_struct('a', CAST(NULL AS INT), 'b', 9), [4, 1])",
        "(1, named_struct('a', 1, 'b', 1), [1]), (2, named_struct('a', 1, 'b', 2), [3])",
    ] {
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.nested VALUES {values}")).await;
    }
    let config = icefloe::datafusion::register_iceberg_options(
        SessionConfig::new().with_target_partitions(2),
    );
    let distributed = in_process_session(WORKERS, config, 1).unwrap();
    crate::catalog::attach(&distributed, "ice", Arc::clone(&lake.catalog)).await;
    let sql = "SELECT k, max(s) AS smax, min(s) AS smin, max(l) AS lmax, min(l) AS lmin \
               FROM ice.ns.nested GROUP BY k ORDER BY k";
    let (plan, shown) = distributed_plan(&distributed, sql).await;
    let rows = collect(plan, distributed.task_ctx()).await.unwrap();
    let options = datafusion::arrow::util::display::FormatOptions::default().with_null("NULL");
    let text = datafusion::arrow::util::pretty::pretty_format_batches_with_options(&rows, &options)
        .unwrap()
        .to_string()
        .replace(' ', "");
    assert!(
        text.contains(
            "|1|{a:2,b:1}|{a:NULL,b:1}|[2]|[NULL]|\n|2|{a:1,b:7}|{a:NULL,b:9}|[4,1]|[3]|"
        ),
        "{text}\n{shown}"
    );
}

/// A double column holding NaN, the NaN with its sign bit set that x86 computes for
/// `0.0 / 0.0`, `0.0`, `-0.0`, numbers and NULL, in two data files whose
/// `nan_value_counts` are not 0: on three in-process workers the scan's canonical NaN
/// crosses to the workers (it used to fail: "Unsupported physical expr …
/// CanonicalNanExpr"), and filters, `ORDER BY` and `GROUP BY` give Spark's answers (one
/// NaN, above every number), as a single session does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nan_columns_on_three_workers_are_sparks() {
    let lake = crate::dml::lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.nans (id INT, d DOUBLE) PARTITIONED BY (bucket(2, id)) \
         TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')",
    )
    .await;
    let neg_nan = "CAST(0 AS DOUBLE) / CAST(0 AS DOUBLE)";
    ok(
        &lake.ctx,
        &format!(
            "INSERT INTO ice.ns.nans VALUES (1, 1.5), (2, 'NaN'::double), (3, {neg_nan}), \
             (4, 0.0)"
        ),
    )
    .await;
    ok(
        &lake.ctx,
        &format!(
            "INSERT INTO ice.ns.nans VALUES (5, -0.0), (6, -2.0), (7, {neg_nan}), (8, NULL), \
             (9, 100.0)"
        ),
    )
    .await;
    // a position delete: the scans below apply it as a row selection, then per batch
    ok(&lake.ctx, "DELETE FROM ice.ns.nans WHERE id = 9").await;
    let config = icefloe::datafusion::register_iceberg_options(
        SessionConfig::new().with_target_partitions(2),
    );
    let distributed = in_process_session(WORKERS, config, 1).unwrap();
    crate::catalog::attach(&distributed, "ice", Arc::clone(&lake.catalog)).await;
    // by hand, Spark's semantics: every NaN equals 'NaN' and is above every number;
    // -0.0 and 0.0 are one group key (read 0.0) and peers in a sort
    let queries = [
        (
            "SELECT id, d FROM ice.ns.nans WHERE d > 1.0 ORDER BY d, id",
            "+----+-----+\n| id | d   |\n+----+-----+\n| 1  | 1.5 |\n| 2  | NaN |\n\
             | 3  | NaN |\n| 7  | NaN |\n+----+-----+",
        ),
        (
            // a scan of fewer partitions than the session's: the canonical NaN
            // projection stays above it (under a round-robin repartition)
            "SELECT d FROM ice.ns.nans WHERE id = 3",
            "+-----+\n| d   |\n+-----+\n| NaN |\n+-----+",
        ),
        (
            "SELECT id FROM ice.ns.nans WHERE d < 0.0 ORDER BY id",
            "+----+\n| id |\n+----+\n| 6  |\n+----+",
        ),
        (
            "SELECT count(*) AS n FROM ice.ns.nans WHERE d = 'NaN'::double",
            "+---+\n| n |\n+---+\n| 3 |\n+---+",
        ),
        (
            "SELECT id FROM ice.ns.nans ORDER BY d DESC NULLS LAST, id",
            "+----+\n| id |\n+----+\n| 2  |\n| 3  |\n| 7  |\n| 1  |\n| 4  |\n| 5  |\n\
             | 6  |\n| 8  |\n+----+",
        ),
        (
            // Spark's `greatest` (icefloe's, by name on the workers): the first of equal
            // arguments (`-d` is -0.0, `d` 0.0: Spark's `-0.0` literal is a decimal, so
            // id 5 holds 0.0), a NaN the query computes (`d / d`, sign bit set on x86)
            // above every number; DataFusion's gave 0.0 and 1.0
            "SELECT id, greatest(-d, d) AS g, greatest(d / d, 1.0) AS h FROM ice.ns.nans \
             WHERE id IN (4, 5) ORDER BY id",
            "+----+------+-----+\n| id | g    | h   |\n+----+------+-----+\n\
             | 4  | -0.0 | NaN |\n| 5  | -0.0 | NaN |\n+----+------+-----+",
        ),
        (
            "SELECT d, count(*) AS n FROM ice.ns.nans GROUP BY d ORDER BY d NULLS LAST",
            "+------+---+\n| d    | n |\n+------+---+\n| -2.0 | 1 |\n| 0.0  | 2 |\n\
             | 1.5  | 1 |\n| NaN  | 3 |\n|      | 1 |\n+------+---+",
        ),
    ];
    for ((sql, expected), deletes) in queries
        .iter()
        .flat_map(|q| [(q, "selection"), (q, "filter")])
    {
        let set = format!("SET icefloe.position_deletes = '{deletes}'");
        ok(&distributed, &set).await;
        ok(&lake.ctx, &set).await;
        let sql = *sql;
        let expected = *expected;
        // planned as icefloe's SQL entry point does (Spark's float literals)
        let plan = icefloe::datafusion::sql::execute(&distributed, sql)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let shown = display_plan_ascii(plan.as_ref(), false);
        assert!(shown.contains("Stage"), "{sql}: not distributed\n{shown}");
        let rows = collect(plan, distributed.task_ctx())
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}\n{shown}"));
        let text = pretty_format_batches(&rows).unwrap().to_string();
        assert_eq!(text, expected, "{sql} ({deletes})\n{shown}");
        assert_eq!(ok(&lake.ctx, sql).await, expected, "{sql}: one node");
    }
}

/// `INSERT … SELECT` into a table sorted by `truncate(10, id)` on three in-process
/// workers: the sort by the partition transform runs before the writers on the workers
/// (the coordinator used to fail to send it: datafusion-proto's composed codec passes
/// no extension expression to icefloe's), every data file records the order and holds
/// its rows in it, and the rows equal the source's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_sorted_by_a_transform_on_workers_sorts_each_file() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    crate::dml::create(&lake, "sorted", "", "").await;
    ok(
        &lake.ctx,
        "ALTER TABLE ice.ns.sorted WRITE ORDERED BY truncate(10, id) DESC, k",
    )
    .await;
    let observed = Arc::new(Observed::default());
    let distributed = distributed_lake(&lake, &observed).await;
    let sql = "INSERT INTO ice.ns.sorted SELECT * FROM ice.ns.big_source";
    let (plan, shown) = distributed_plan(&distributed, sql).await;
    let (_, stages) = shown.split_once("Stage").expect("a distributed plan");
    assert!(stages.contains("IcebergDataFileWriterExec"), "{shown}");
    let count = collect(plan, distributed.task_ctx())
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}\n{shown}"));
    assert!(
        pretty_format_batches(&count)
            .unwrap()
            .to_string()
            .contains("| 6000  |"),
        "{}",
        pretty_format_batches(&count).unwrap()
    );
    assert!(observed.writers_decoded.load(Ordering::SeqCst) >= WORKERS);
    assert_eq!(
        all_rows(&lake.ctx, "sorted").await,
        all_rows(&lake.ctx, "big_source").await
    );
    // every file records order 1 and holds its rows by truncate(10, id) (id - id % 10
    // for these non-negative ids) descending, then k ascending
    assert_eq!(
        ok(
            &lake.ctx,
            "SELECT DISTINCT sort_order_id FROM ice.ns.\"sorted$files\""
        )
        .await,
        "+---------------+\n| sort_order_id |\n+---------------+\n| 1             |\n\
         +---------------+"
    );
    let files = parquet_files_of(&lake, "sorted");
    assert!(files.len() > 1, "{files:?}");
    for file in files {
        let reader =
            SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1));
        let batches = reader
            .read_parquet(file.to_str().unwrap(), Default::default())
            .await
            .unwrap()
            .select_columns(&["id", "k"])
            .unwrap()
            .collect()
            .await
            .unwrap();
        let mut keys = vec![];
        for b in &batches {
            let ids = datafusion::arrow::compute::cast(
                b.column(0),
                &datafusion::arrow::datatypes::DataType::Int64,
            )
            .unwrap();
            let ks = datafusion::arrow::compute::cast(
                b.column(1),
                &datafusion::arrow::datatypes::DataType::Int64,
            )
            .unwrap();
            let ids = ids
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap();
            let ks = ks
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap();
            for i in 0..b.num_rows() {
                keys.push((-(ids.value(i) - ids.value(i) % 10), ks.value(i)));
            }
        }
        assert!(!keys.is_empty(), "{file:?}");
        assert!(
            keys.windows(2).all(|w| w[0] <= w[1]),
            "{file:?} is not sorted by truncate(10, id) DESC, k"
        );
    }
}

/// `MERGE` on a distributed session whose source has several partitions (a `UNION ALL`,
/// a scan of a six-file Iceberg table) commits what it commits on one node: the join
/// is planned by DataFusion's planner under `IcebergRowLevelExec`, which reads all its
/// partitions (datafusion-distributed's planner made it a `DistributedExec`, which runs
/// partition 0 only: "DistributedExec must only have 1 partition").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_with_a_source_of_several_partitions_on_workers_commits_as_one_node() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    let observed = Arc::new(Observed::default());
    let distributed = distributed_lake(&lake, &observed).await;
    let merges = [
        "MERGE INTO ice.ns.{t} t USING (SELECT 1 AS id, 7.0 AS d UNION ALL SELECT 4, 4.0 \
         UNION ALL SELECT 9000, 9.0) s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET d = s.d \
         WHEN NOT MATCHED THEN INSERT (id, k, s, d) VALUES (s.id, 0, 'new', s.d)",
        "MERGE INTO ice.ns.{t} t USING (SELECT id, k, s, d * 2 AS d FROM ice.ns.big_source \
         WHERE id % 100 = 3) s ON t.id = s.id \
         WHEN MATCHED AND t.k = 3 THEN DELETE \
         WHEN MATCHED THEN UPDATE SET d = s.d \
         WHEN NOT MATCHED THEN INSERT *",
    ];
    for (table, ctx) in [("on_one", &lake.ctx), ("on_workers", &distributed)] {
        crate::dml::create(&lake, table, "", "").await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{table} SELECT * FROM ice.ns.big_source WHERE id % 2 = 1"),
        )
        .await;
        for merge in merges {
            let sql = merge.replace("{t}", table);
            crate::dml::ok(ctx, &sql).await;
        }
    }
    let one = all_rows(&lake.ctx, "on_one").await;
    assert!(one.len() > 2900, "{} rows", one.len());
    assert_eq!(all_rows(&lake.ctx, "on_workers").await, one);
    assert_eq!(
        snapshot_count(&lake.ctx, "on_workers").await,
        snapshot_count(&lake.ctx, "on_one").await
    );
}

/// A distributed session on which `icefloe.deferred_planning_min_files` is set back on
/// refuses a deferred scan when the query is planned, with the codec's error naming the
/// option, at once (it failed after 10 s with a worker's timeout waiting for a plan the
/// codec could not send).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferred_planning_set_on_a_distributed_session_is_refused_at_once() {
    let lake = crate::dml::lake().await;
    big_source(&lake).await;
    let observed = Arc::new(Observed::default());
    let distributed = distributed_lake(&lake, &observed).await;
    ok(&distributed, "SET icefloe.deferred_planning_min_files = 1").await;
    let started = std::time::Instant::now();
    let sql = "SELECT count(*), sum(id) FROM ice.ns.big_source WHERE id > 3";
    let err = crate::dml::run(&distributed, sql).await.expect_err(sql);
    assert!(
        err.contains("icefloe.deferred_planning_min_files = 0")
            && err.contains("planning each manifest as it reads it"),
        "{err}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    ok(&distributed, "SET icefloe.deferred_planning_min_files = 0").await;
    assert_eq!(
        crate::dml::ok(&distributed, sql).await,
        crate::dml::ok(&lake.ctx, sql).await
    );
}

/// Every scalar function of icefloe's a plan may hold
/// (`icefloe::datafusion::plan_scalar_functions`) is a function of the worker sessions
/// `IcebergWorkerSessionBuilder` builds (`register_worker_functions`), under its name:
/// datafusion-distributed's composed codec sends every function by name, which a worker
/// resolves in its own session.
#[test]
fn every_icefloe_scalar_function_is_a_worker_function() {
    use datafusion::execution::SessionStateBuilder;
    let datafusion = SessionStateBuilder::new().with_default_features().build();
    let mut state = datafusion.clone();
    icefloe::datafusion::distributed::register_worker_functions(&mut state).unwrap();
    let udfs = icefloe::datafusion::plan_scalar_functions(|name| {
        datafusion.scalar_functions().get(name).cloned()
    });
    assert!(udfs.len() > 8, "{} functions", udfs.len());
    for udf in udfs {
        let registered = state
            .scalar_functions()
            .get(udf.name())
            .unwrap_or_else(|| panic!("{} is not a worker function", udf.name()));
        assert!(
            registered.as_ref() == udf.as_ref(),
            "{}: the worker's is another function",
            udf.name()
        );
    }
}
