//! Iceberg tables on Ballista standalone (feature `ballista`, issue 15): the client ships
//! the logical plan with each table as its identity (`IcebergLogicalCodec`), the
//! in-process scheduler reloads the table and plans, and the in-process executor runs
//! each stage's plan decoded with `IcebergBallistaPhysicalCodec`; the rows equal a
//! single-node session's. The TPC-H tables and the delete tables are those of the
//! datafusion-distributed tests (`crate::distributed`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider;
use datafusion::common::{Result as DFResult, TableReference};
use datafusion::execution::{SessionStateBuilder, TaskContext};
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use icefloe::datafusion::ballista::{ballista_logical_codec, IcebergBallistaPhysicalCodec};
use icefloe::datafusion::IcebergLogicalCodec;
use icefloe::IcebergTableProvider;

use crate::distributed::{sorted_rows, DELETE_TABLE_QUERIES};
use crate::fixtures::testdata;

/// What crossed: tables the scheduler reloaded, icefloe plan nodes executors decoded.
#[derive(Debug, Default)]
struct Observed {
    tables_decoded: AtomicUsize,
    iceberg_nodes_decoded: AtomicUsize,
}

/// [`ballista_logical_codec`], counting the Iceberg tables it decodes.
#[derive(Debug)]
struct ObservingLogical(IcebergLogicalCodec, Arc<Observed>);

impl LogicalExtensionCodec for ObservingLogical {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> DFResult<Extension> {
        self.0.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> DFResult<()> {
        self.0.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> DFResult<Arc<dyn TableProvider>> {
        let table = self
            .0
            .try_decode_table_provider(buf, table_ref, schema, ctx)?;
        if table.downcast_ref::<IcebergTableProvider>().is_some() {
            self.1.tables_decoded.fetch_add(1, Ordering::SeqCst);
        }
        Ok(table)
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> DFResult<()> {
        self.0.try_encode_table_provider(table_ref, node, buf)
    }
}

/// [`IcebergBallistaPhysicalCodec`], counting the icefloe nodes it decodes (Iceberg
/// scans and `EqualityDeleteExec`).
#[derive(Debug)]
struct ObservingPhysical(IcebergBallistaPhysicalCodec, Arc<Observed>);

impl PhysicalExtensionCodec for ObservingPhysical {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let plan = self.0.try_decode(buf, inputs, ctx, proto_converter)?;
        if matches!(plan.name(), "DataSourceExec" | "EqualityDeleteExec") {
            self.1.iceberg_nodes_decoded.fetch_add(1, Ordering::SeqCst);
        }
        Ok(plan)
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<()> {
        self.0.try_encode(node, buf, proto_converter)
    }
}

/// A client of an in-process Ballista cluster (scheduler + one executor with two task
/// slots) whose codecs are icefloe's, observed; two partitions per stage, so scans are
/// split into several tasks.
async fn ballista_session(observed: &Arc<Observed>) -> SessionContext {
    let config = SessionConfig::new_with_ballista()
        .with_target_partitions(2)
        .with_ballista_standalone_parallelism(2)
        .with_ballista_logical_extension_codec(Arc::new(ObservingLogical(
            ballista_logical_codec(),
            Arc::clone(observed),
        )))
        .with_ballista_physical_extension_codec(Arc::new(ObservingPhysical(
            IcebergBallistaPhysicalCodec::default(),
            Arc::clone(observed),
        )));
    let state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(config)
        .build();
    SessionContext::standalone_with_state(state).await.unwrap()
}

/// The sorted rows of `sql` run through the Ballista client.
async fn run_on_ballista(ballista: &SessionContext, sql: &str) -> Vec<String> {
    let remote = ballista
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: on Ballista: {e}"));
    sorted_rows(&remote)
}

/// Run `sql` on the Ballista client and on `single`; the rows must be equal (and there
/// must be some).
async fn same_rows(ballista: &SessionContext, single: &SessionContext, sql: &str) {
    let remote = run_on_ballista(ballista, sql).await;
    let local = single.sql(sql).await.unwrap().collect().await.unwrap();
    assert!(!local.is_empty(), "{sql}: no rows");
    assert_eq!(remote, sorted_rows(&local), "{sql}");
}

/// An Iceberg table through the logical codec (bytes, then decoded in a fresh session,
/// no table or object store registered): the decoded plan shows the same plan and
/// returns the same rows; the provider is rebuilt from its identity (the same metadata
/// file, snapshot and schema), including a time-travelled snapshot.
/// `sql`'s optimized logical plan on `client`, encoded with `codec`, decoded in a fresh
/// session (the scheduler's: no table registered) and run there: the plan, the decoded
/// plan and the decoded plan's rows.
async fn through_the_codec(
    client: &SessionContext,
    sql: &str,
    codec: &dyn LogicalExtensionCodec,
) -> (LogicalPlan, LogicalPlan, Vec<RecordBatch>) {
    let plan = client
        .sql(sql)
        .await
        .unwrap()
        .into_optimized_plan()
        .unwrap();
    let bytes = logical_plan_to_bytes_with_extension_codec(&plan, codec).unwrap();
    let scheduler = SessionContext::new();
    let decoded =
        logical_plan_from_bytes_with_extension_codec(&bytes, &scheduler.task_ctx(), codec)
            .unwrap_or_else(|e| panic!("{sql}: decoding failed: {e}"));
    let rows = scheduler
        .execute_logical_plan(decoded.clone())
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    (plan, decoded, rows)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logical_plan_with_iceberg_tables_round_trips() {
    let codec = ballista_logical_codec();
    for (table, sql) in [
        ("corpus/spark_v2_mor_position_deletes", "SELECT * FROM t"),
        (
            "corpus/spark_v2_equality_deletes_partitioned",
            "SELECT region, count(*) FROM t GROUP BY region",
        ),
        ("corpus/spark_v3_deletion_vectors", "SELECT * FROM t"),
        ("corpus/spark_v2_nested", "SELECT * FROM t"),
    ] {
        let location = testdata(table);
        let client = SessionContext::new();
        let provider = IcebergTableProvider::open(location.to_str().unwrap())
            .await
            .unwrap();
        let snapshots: Vec<i64> = provider
            .table()
            .metadata()
            .snapshots
            .iter()
            .map(|s| s.snapshot_id)
            .collect();
        client.register_table("t", Arc::new(provider)).unwrap();
        let (plan, decoded, remote) = through_the_codec(&client, sql, &codec).await;
        assert_eq!(
            decoded.display_indent_schema().to_string(),
            plan.display_indent_schema().to_string(),
            "{table}"
        );
        let local = client.sql(sql).await.unwrap().collect().await.unwrap();
        assert_eq!(sorted_rows(&remote), sorted_rows(&local), "{table}");
        assert!(!local.is_empty(), "{table}");

        // every older snapshot: the decoded table reads that snapshot, not the current
        for &id in &snapshots {
            let old = IcebergTableProvider::open(location.to_str().unwrap())
                .await
                .unwrap()
                .with_snapshot_id(id)
                .unwrap();
            let client = SessionContext::new();
            client.register_table("t", Arc::new(old)).unwrap();
            let (_, _, remote) = through_the_codec(&client, "SELECT * FROM t", &codec).await;
            let local = client
                .sql("SELECT * FROM t")
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            assert_eq!(
                sorted_rows(&remote),
                sorted_rows(&local),
                "{table} at snapshot {id}"
            );
        }
    }
}

/// The encoded table is its identity, not its metadata: a table whose metadata file
/// is gone cannot be decoded (the error names the file), and the bytes do not grow
/// with the table's metadata.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_crosses_as_its_identity() {
    let dir = tempfile::tempdir().unwrap();
    let src = testdata("corpus/spark_v2_mor_position_deletes");
    let copy = dir.path().join("t");
    crate::fixtures::copy_dir(&src, &copy);
    let provider = IcebergTableProvider::open(copy.to_str().unwrap())
        .await
        .unwrap();
    let metadata_location = provider.table().metadata_location().to_string();
    let metadata_len = std::fs::metadata(metadata_location.trim_start_matches("file://"))
        .unwrap()
        .len();
    let codec = ballista_logical_codec();
    let mut bytes = vec![];
    codec
        .try_encode_table_provider(&TableReference::bare("t"), Arc::new(provider), &mut bytes)
        .unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains(&metadata_location), "{text}");
    assert!(!text.contains("\"schemas\""), "{text}");
    assert!((bytes.len() as u64) < metadata_len, "{} bytes", bytes.len());

    std::fs::remove_file(metadata_location.trim_start_matches("file://")).unwrap();
    let provider_schema = IcebergTableProvider::open(src.to_str().unwrap())
        .await
        .unwrap()
        .schema();
    let err = codec
        .try_decode_table_provider(
            &bytes,
            &TableReference::bare("t"),
            provider_schema,
            &SessionContext::new().task_ctx(),
        )
        .expect_err("decoded a table whose metadata file is gone")
        .to_string();
    let file = metadata_location.rsplit('/').next().unwrap();
    assert!(err.contains(file), "{err}");
}

/// Spark-written tables with position deletes, deletion vectors (v3) and equality
/// deletes: the same rows through Ballista standalone as on one node; the scheduler
/// reloaded each table and the executor decoded icefloe's scans.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_tables_on_ballista_standalone_equal_one_node() {
    let observed = Arc::new(Observed::default());
    let ballista = ballista_session(&observed).await;
    let single = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    for (table, queries) in DELETE_TABLE_QUERIES {
        for ctx in [&ballista, &single] {
            let provider = IcebergTableProvider::open(testdata(table).to_str().unwrap())
                .await
                .unwrap();
            ctx.register_table("t", Arc::new(provider)).unwrap();
        }
        for sql in queries {
            let tables = observed.tables_decoded.load(Ordering::SeqCst);
            let nodes = observed.iceberg_nodes_decoded.load(Ordering::SeqCst);
            same_rows(&ballista, &single, sql).await;
            assert!(
                observed.tables_decoded.load(Ordering::SeqCst) > tables,
                "{table}: {sql}: the scheduler did not decode the table"
            );
            assert!(
                observed.iceberg_nodes_decoded.load(Ordering::SeqCst) > nodes,
                "{table}: {sql}: no icefloe plan node was decoded by the executor"
            );
        }
        for ctx in [&ballista, &single] {
            ctx.deregister_table("t").unwrap();
        }
    }
}

/// TPC-H SF0.1 through Ballista standalone: `tables` registered on a Ballista client,
/// each query of `answers` ([`crate::distributed::tpch_answers`], a single node's) gives
/// the same rows, the scheduler decoded the tables and the executor icefloe's scans.
/// Called by the `distributed::tpch_sf01_*` tests, which make the tables and the
/// answers once for both engines.
pub(crate) async fn tpch_same_rows_on_ballista(
    tables: Vec<(&'static str, Arc<dyn TableProvider>)>,
    answers: &[(String, Vec<String>)],
) {
    let observed = Arc::new(Observed::default());
    let ballista = ballista_session(&observed).await;
    for (t, provider) in tables {
        ballista.register_table(t, provider).unwrap();
    }
    for (sql, want) in answers {
        assert_eq!(
            &run_on_ballista(&ballista, sql).await,
            want,
            "{sql} on Ballista"
        );
    }
    assert!(observed.tables_decoded.load(Ordering::SeqCst) >= answers.len());
    assert!(observed.iceberg_nodes_decoded.load(Ordering::SeqCst) >= answers.len());
}

/// An `INSERT` through a Ballista client is refused, not half-done: the table crosses to
/// the scheduler as its identity and comes back read-only, so the statement fails with
/// an error and the table keeps its snapshot and rows (the same `INSERT` on one node
/// commits). Distributed `INSERT` runs on datafusion-distributed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_through_ballista_fails_and_leaves_the_table_as_it_was() {
    let lake = crate::dml::lake().await;
    crate::dml::create(&lake, "t", "", "").await;
    crate::dml::ok(&lake.ctx, "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.0)").await;
    let observed = Arc::new(Observed::default());
    let ballista = ballista_session(&observed).await;
    crate::catalog::attach(&ballista, "ice", Arc::clone(&lake.catalog)).await;
    let sql = "INSERT INTO ice.ns.t VALUES (2, 2, 'b', 2.0)";
    let err = match ballista.sql(sql).await {
        Ok(df) => match df.collect().await {
            Ok(rows) => panic!(
                "{sql} succeeded through Ballista: {}",
                sorted_rows(&rows).join("\n")
            ),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    };
    // the scheduler's reloaded table refuses the write, naming the statement and the
    // table (by name, or by its metadata file when the scheduler opened it by location)
    assert!(
        err.contains("INSERT INTO on table")
            && err.contains("opened by location or at a snapshot")
            && (err.contains("'ns.t'") || err.contains("ns/t/metadata/")),
        "{err}"
    );
    let state = "SELECT (SELECT count(*) FROM ice.ns.\"t$snapshots\") AS snapshots, \
                 (SELECT count(*) FROM ice.ns.t) AS n";
    assert_eq!(
        crate::dml::ok(&lake.ctx, state).await,
        "+-----------+---+\n| snapshots | n |\n+-----------+---+\n| 1         | 1 |\n+-----------+---+",
        "after: {err}"
    );
    // no data file beyond the first INSERT's was left in the table's directory
    let mut files = vec![];
    let mut dirs = vec![lake.warehouse.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                files.push(p);
            }
        }
    }
    assert_eq!(files.len(), 1, "{files:?} (error: {err})");
}

/// Grouped `min`/`max` over NaNs through Ballista give Spark's answers. A scheduler and
/// an executor of their own resolve `min`/`max` by name to DataFusion's (whose grouped
/// accumulator answers by row order), so icefloe's cross as themselves: in the logical
/// plan (`IcebergLogicalCodec`) and in each stage's plan (`IcebergBallistaPhysicalCodec`),
/// each decoded here in a fresh session; and end to end on the standalone cluster of
/// `standalone_session`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouped_min_max_over_nan_through_ballista_are_sparks() {
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::physical_plan::collect;
    use datafusion_proto::bytes::{
        physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
    };
    use icefloe::catalog::TableIdent;

    let lake = crate::dml::lake().await;
    crate::nan_semantics::nan_groups(&lake, "nan_groups").await;
    let location = lake
        .catalog
        .load_table(&TableIdent::parse("ns.nan_groups"))
        .await
        .unwrap()
        .metadata_location()
        .to_string();
    let client = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    icefloe::datafusion::register_min_max(&client);
    let provider = IcebergTableProvider::open(&location).await.unwrap();
    client.register_table("t", Arc::new(provider)).unwrap();
    let (sql, expected) = crate::nan_semantics::nan_groups_query("t");

    let (_, _, rows) = through_the_codec(&client, &sql, &ballista_logical_codec()).await;
    let text = pretty_format_batches(&rows).unwrap().to_string();
    assert_eq!(text, expected, "the logical plan decoded");

    let plan = client
        .sql(&sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let codec = IcebergBallistaPhysicalCodec::default();
    let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec).unwrap();
    let executor = SessionContext::new();
    let decoded =
        physical_plan_from_bytes_with_extension_codec(&bytes, &executor.task_ctx(), &codec)
            .unwrap();
    let rows = collect(decoded, executor.task_ctx()).await.unwrap();
    let text = pretty_format_batches(&rows).unwrap().to_string();
    assert_eq!(text, expected, "the physical plan decoded");

    let config = SessionConfig::new_with_ballista()
        .with_target_partitions(2)
        .with_ballista_standalone_parallelism(2);
    let ballista = icefloe::datafusion::ballista::standalone_session(config)
        .await
        .unwrap();
    crate::catalog::attach(&ballista, "ice", Arc::clone(&lake.catalog)).await;
    let (sql, expected) = crate::nan_semantics::nan_groups_query("ice.ns.nan_groups");
    let rows = ballista
        .sql(&sql)
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let text = pretty_format_batches(&rows).unwrap().to_string();
    assert_eq!(text, expected, "on Ballista standalone");
}

/// Every scalar function of icefloe's that a plan may hold
/// (`icefloe::datafusion::plan_scalar_functions`) crosses to an executor that has none
/// registered, in a DataFusion node (a projection: `IcebergBallistaPhysicalCodec`
/// decodes it) and in a Ballista node (a sort shuffle's hash keys: Ballista's codec
/// decodes those, resolving functions by name only), as the same function.
#[test]
fn every_icefloe_scalar_function_crosses_to_a_bare_executor() {
    use ballista_core::execution_plans::sort_shuffle::{SortShuffleConfig, SortShuffleWriterExec};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::config::ConfigOptions;
    use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
    use datafusion::physical_plan::empty::EmptyExec;
    use datafusion::physical_plan::expressions::Column;
    use datafusion::physical_plan::projection::ProjectionExec;
    use datafusion::physical_plan::Partitioning;
    use datafusion_proto::bytes::{
        physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
    };

    // icefloe's functions: those a session of DataFusion's own lacks or has as
    // DataFusion's (`greatest`, `least`)
    let datafusion = SessionStateBuilder::new().with_default_features().build();
    let udfs = icefloe::datafusion::plan_scalar_functions(|name| {
        datafusion.scalar_functions().get(name).cloned()
    });
    let names: Vec<&str> = udfs.iter().map(|f| f.name()).collect();
    for expected in [
        "icefloe_normalize_nan_and_zero",
        "icefloe_canonical_nan",
        "icefloe_partition_transform",
        "icefloe_floor_time_units",
        "greatest",
        "least",
    ] {
        assert!(names.contains(&expected), "{expected} not in {names:?}");
    }
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Float64, true)]));
    let codec = IcebergBallistaPhysicalCodec::default();
    for udf in udfs {
        let call = || -> Arc<dyn PhysicalExpr> {
            Arc::new(ScalarFunctionExpr::new(
                udf.name(),
                Arc::clone(&udf),
                vec![Arc::new(Column::new("v", 0))],
                Arc::new(Field::new("x", DataType::Float64, true)),
                Arc::new(ConfigOptions::default()),
            ))
        };
        let input = Arc::new(EmptyExec::new(Arc::clone(&schema)));
        let projection =
            Arc::new(ProjectionExec::try_new(vec![(call(), "x".to_string())], input).unwrap());
        let shuffle = SortShuffleWriterExec::try_new(
            "job".to_string().into(),
            1,
            projection,
            String::new(),
            Partitioning::Hash(vec![call()], 2),
            SortShuffleConfig::new(true, 8192),
        )
        .unwrap();
        let bytes = physical_plan_to_bytes_with_extension_codec(Arc::new(shuffle), &codec)
            .unwrap_or_else(|e| panic!("{}: encoding: {e}", udf.name()));
        let decoded =
            physical_plan_from_bytes_with_extension_codec(&bytes, &TaskContext::default(), &codec)
                .unwrap_or_else(|e| panic!("{}: decoding: {e}", udf.name()));
        let shuffle = decoded.downcast_ref::<SortShuffleWriterExec>().unwrap();
        let Partitioning::Hash(keys, _) = shuffle.shuffle_output_partitioning() else {
            panic!("{}: not a hash shuffle", udf.name())
        };
        let projection = decoded.children()[0]
            .downcast_ref::<ProjectionExec>()
            .unwrap();
        let decoded_calls = [Arc::clone(&keys[0]), Arc::clone(&projection.expr()[0].expr)];
        for (node, expr) in ["shuffle key", "projection"].iter().zip(decoded_calls) {
            let call = expr.downcast_ref::<ScalarFunctionExpr>().unwrap();
            assert!(
                call.fun() == udf.as_ref(),
                "{} in a {node} decoded as another function",
                udf.name()
            );
        }
    }
}

/// `ORDER BY` a double and a struct holding one, over a table of three data files (so
/// the scan has several partitions and Ballista sorts through a range shuffle, whose
/// merge order holds `icefloe_normalize_nan_and_zero`), on `standalone_session` (whose
/// optimizer puts that function in) and on one node: the same rows in the same order,
/// `-0.0` and `0.0` peers and NaN last. The other tests here run on a session without
/// icefloe's float rules, or on one-file tables, so no sort key held the function.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn order_by_floats_over_several_files_on_ballista_is_sparks() {
    let lake = crate::dml::lake().await;
    crate::dml::create(&lake, "f", "", "").await;
    for values in [
        "(1, 1, 'a', 2.5), (2, 2, 'b', CAST('NaN' AS DOUBLE))",
        "(3, 3, 'c', -0.0), (4, 4, 'd', 0.5)",
        "(5, 5, 'e', 0.0), (6, 6, 'f', -1.0)",
    ] {
        crate::dml::ok(&lake.ctx, &format!("INSERT INTO ice.ns.f VALUES {values}")).await;
    }
    let config = SessionConfig::new_with_ballista()
        .with_target_partitions(2)
        .with_ballista_standalone_parallelism(2);
    let ballista = icefloe::datafusion::ballista::standalone_session(config)
        .await
        .unwrap();
    crate::catalog::attach(&ballista, "ice", Arc::clone(&lake.catalog)).await;
    let files = crate::dml::count(&lake.ctx, "SELECT count(*) FROM ice.ns.\"f$files\"").await;
    assert_eq!(files, 3, "data files");
    for (sql, expected) in [
        (
            "SELECT id, d FROM ice.ns.f ORDER BY d, id",
            "6 -1.0|3 0.0|5 0.0|4 0.5|1 2.5|2 NaN",
        ),
        (
            "SELECT id FROM ice.ns.f ORDER BY named_struct('x', d) DESC, id",
            "2|1|4|3|5|6",
        ),
    ] {
        for (engine, ctx) in [("one node", &lake.ctx), ("Ballista", &ballista)] {
            let rows = ctx
                .sql(sql)
                .await
                .unwrap()
                .collect()
                .await
                .unwrap_or_else(|e| panic!("{sql} on {engine}: {e}"));
            let text = rows_in_order(&rows);
            assert_eq!(text, expected, "{sql} on {engine}");
        }
    }
}

/// The rows of `batches` in their order, columns separated by spaces, rows by `|`.
fn rows_in_order(batches: &[RecordBatch]) -> String {
    use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
    let mut rows = vec![];
    for batch in batches {
        let formatters: Vec<_> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &FormatOptions::default()).unwrap())
            .collect();
        for r in 0..batch.num_rows() {
            let cells: Vec<String> = formatters.iter().map(|f| f.value(r).to_string()).collect();
            rows.push(cells.join(" "));
        }
    }
    rows.join("|")
}

/// On `standalone_session`, a write to a catalog table is refused on the client, saying
/// writes are not supported on a Ballista session (the scheduler's reloaded table said
/// it "was opened by location", which it was not), and a metadata table is refused
/// naming "metadata tables on Ballista" (serializing the plan failed with an internal
/// error of DataFusion's); nothing is committed. The table's own rows still read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_and_metadata_tables_on_ballista_are_refused_by_name() {
    let lake = crate::dml::lake().await;
    crate::dml::create(&lake, "w", "", "").await;
    crate::dml::ok(&lake.ctx, "INSERT INTO ice.ns.w VALUES (1, 1, 'a', 1.0)").await;
    let config = SessionConfig::new_with_ballista()
        .with_target_partitions(2)
        .with_ballista_standalone_parallelism(2);
    let ballista = icefloe::datafusion::ballista::standalone_session(config)
        .await
        .unwrap();
    crate::catalog::attach(&ballista, "ice", Arc::clone(&lake.catalog)).await;
    let refused = |sql: &'static str| {
        let ballista = ballista.clone();
        async move {
            let result = match icefloe::datafusion::sql::execute(&ballista, sql).await {
                Ok(df) => df.collect().await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            match result {
                Ok(rows) => panic!("{sql} ran on Ballista: {}", sorted_rows(&rows).join("\n")),
                Err(e) => e,
            }
        }
    };
    for sql in [
        "INSERT INTO ice.ns.w VALUES (2, 2, 'b', 2.0)",
        "DELETE FROM ice.ns.w WHERE id = 1",
    ] {
        let err = refused(sql).await;
        assert!(
            err.contains("writes are not supported on a Ballista session")
                && err.contains("ns.w")
                && !err.contains("opened by location"),
            "{sql}: {err}"
        );
    }
    for sql in [
        "SELECT count(*) FROM ice.ns.\"w$files\"",
        "SELECT snapshot_id FROM ice.ns.\"w$snapshots\"",
    ] {
        let err = refused(sql).await;
        assert!(
            err.contains("metadata tables on Ballista are not supported")
                && !err.contains("bug in DataFusion"),
            "{sql}: {err}"
        );
    }
    let snapshots = "SELECT count(*) FROM ice.ns.\"w$snapshots\"";
    assert_eq!(
        crate::dml::count(&lake.ctx, snapshots).await,
        1,
        "nothing committed"
    );
    assert_eq!(
        run_on_ballista(&ballista, "SELECT id FROM ice.ns.w").await,
        ["| 1  |"]
    );
}
