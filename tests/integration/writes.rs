//! `INSERT INTO` / `INSERT OVERWRITE` through DataFusion into tables of a SQLite catalog:
//! rows read back, files and snapshots as the spec says.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableCreation, TableIdent};
use icefloe::datafusion::{register_iceberg_options, IcebergCatalogProvider};
use icefloe::spec::{
    NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, Transform, Type,
};

pub struct Warehouse {
    pub dir: tempfile::TempDir,
    pub catalog: Arc<dyn Catalog>,
    pub ctx: SessionContext,
}

/// A SQLite catalog `cat` with namespace `ns` in a fresh temp dir, registered as the
/// session's default catalog.
pub async fn warehouse() -> Warehouse {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = SqlCatalog::open_or_create("cat", dir.path().join("catalog.db")).expect("db");
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("namespace");
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let config = register_iceberg_options(
        SessionConfig::new()
            .with_information_schema(true)
            .with_default_catalog_and_schema("cat", "ns"),
    );
    let ctx = SessionContext::new_with_config(config);
    let provider = IcebergCatalogProvider::try_new(Arc::clone(&catalog))
        .await
        .expect("provider");
    ctx.register_catalog("cat", Arc::new(provider));
    Warehouse { dir, catalog, ctx }
}

fn events_schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "s", Type::Primitive(PrimitiveType::String)),
            NestedField::optional(3, "ts", Type::Primitive(PrimitiveType::Timestamp)),
            NestedField::optional(4, "x", Type::Primitive(PrimitiveType::Double)),
        ],
    )
}

fn by_day() -> PartitionSpec {
    PartitionSpec {
        spec_id: 0,
        fields: vec![PartitionField {
            source_id: 3,
            field_id: Some(1000),
            name: "ts_day".into(),
            transform: Transform::Day,
        }],
    }
}

async fn sql(ctx: &SessionContext, q: &str) -> Vec<RecordBatch> {
    ctx.sql(q)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"))
}

fn text(batches: &[RecordBatch]) -> String {
    pretty_format_batches(batches).expect("format").to_string()
}

async fn create(w: &Warehouse, name: &str, spec: PartitionSpec) {
    let mut c = TableCreation::new(events_schema());
    c.partition_spec = spec;
    w.catalog
        .create_table(&TableIdent::parse(name), c)
        .await
        .expect("create");
}

const ROWS: &str = "(1, 'a', TIMESTAMP '2026-01-01 10:00:00', 1.5), \
                    (2, 'b', TIMESTAMP '2026-01-02 11:00:00', 'NaN'), \
                    (3, NULL, TIMESTAMP '2026-01-02 12:00:00', NULL), \
                    (4, 'd', NULL, '-0.0')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_reads_back_with_partitions_and_metrics() {
    let w = warehouse().await;
    create(&w, "ns.t", by_day()).await;
    let count = sql(&w.ctx, &format!("INSERT INTO ns.t VALUES {ROWS}")).await;
    assert_eq!(
        text(&count),
        "+-------+\n| count |\n+-------+\n| 4     |\n+-------+"
    );
    let rows = sql(&w.ctx, "SELECT id, s, ts, x FROM ns.t ORDER BY id").await;
    assert_eq!(
        text(&rows),
        "+----+---+---------------------+------+\n\
         | id | s | ts                  | x    |\n\
         +----+---+---------------------+------+\n\
         | 1  | a | 2026-01-01T10:00:00 | 1.5  |\n\
         | 2  | b | 2026-01-02T11:00:00 | NaN  |\n\
         | 3  |   | 2026-01-02T12:00:00 |      |\n\
         | 4  | d |                     | -0.0 |\n\
         +----+---+---------------------+------+"
    );
    // one file per day partition (and one for the NULL day)
    let files = sql(
        &w.ctx,
        "SELECT partition['ts_day'] AS day, record_count, \
         null_value_counts[arrow_cast(2, 'Int32')] AS s_nulls, \
         nan_value_counts[arrow_cast(4, 'Int32')] AS x_nans \
         FROM ns.\"t$files\" ORDER BY day NULLS FIRST",
    )
    .await;
    assert_eq!(
        text(&files),
        "+------------+--------------+---------+--------+\n\
         | day        | record_count | s_nulls | x_nans |\n\
         +------------+--------------+---------+--------+\n\
         |            | 1            | 0       | 0      |\n\
         | 2026-01-01 | 1            | 0       | 0      |\n\
         | 2026-01-02 | 2            | 1       | 1      |\n\
         +------------+--------------+---------+--------+"
    );
    // pruning by partition uses what we wrote
    let pruned = sql(
        &w.ctx,
        "SELECT count(*) AS n FROM ns.t WHERE ts >= TIMESTAMP '2026-01-02 00:00:00'",
    )
    .await;
    assert_eq!(text(&pruned), "+---+\n| n |\n+---+\n| 2 |\n+---+");
    let snaps = sql(
        &w.ctx,
        "SELECT operation, summary['added-records'] AS added, summary['total-records'] AS total \
         FROM ns.\"t$snapshots\"",
    )
    .await;
    assert_eq!(
        text(&snaps),
        "+-----------+-------+-------+\n\
         | operation | added | total |\n\
         +-----------+-------+-------+\n\
         | append    | 4     | 4     |\n\
         +-----------+-------+-------+"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_overwrite_static_and_dynamic() {
    let w = warehouse().await;
    create(&w, "ns.t", by_day()).await;
    sql(&w.ctx, &format!("INSERT INTO ns.t VALUES {ROWS}")).await;
    // dynamic: only the 2026-01-02 partition is replaced
    sql(&w.ctx, "SET icefloe.partition_overwrite_mode = 'dynamic'").await;
    sql(
        &w.ctx,
        "INSERT OVERWRITE ns.t VALUES (9, 'z', TIMESTAMP '2026-01-02 09:00:00', 0.0)",
    )
    .await;
    let ids = sql(&w.ctx, "SELECT id FROM ns.t ORDER BY id").await;
    assert_eq!(
        text(&ids),
        "+----+\n| id |\n+----+\n| 1  |\n| 4  |\n| 9  |\n+----+"
    );
    // a dynamic overwrite of no rows replaces no partition: nothing is committed (Spark
    // skips the empty commit; was a `delete` snapshot changing nothing)
    let count = sql(
        &w.ctx,
        "INSERT OVERWRITE ns.t SELECT id, s, ts, x FROM ns.t WHERE false",
    )
    .await;
    assert_eq!(
        text(&count),
        "+-------+\n| count |\n+-------+\n| 0     |\n+-------+"
    );
    // the partition replace is an `overwrite` marked `replace-partitions` (Java
    // `BaseReplacePartitions`)
    let replace = sql(
        &w.ctx,
        "SELECT operation, summary['replace-partitions'] AS r FROM ns.\"t$snapshots\" \
         ORDER BY committed_at",
    )
    .await;
    assert_eq!(
        text(&replace),
        "+-----------+------+\n\
         | operation | r    |\n\
         +-----------+------+\n\
         | append    |      |\n\
         | overwrite | true |\n\
         +-----------+------+"
    );
    // static (default): the whole table
    sql(&w.ctx, "SET icefloe.partition_overwrite_mode = 'static'").await;
    sql(
        &w.ctx,
        "INSERT OVERWRITE ns.t SELECT id + 100, s, ts, x FROM ns.t WHERE id < 5",
    )
    .await;
    let ids = sql(&w.ctx, "SELECT id FROM ns.t ORDER BY id").await;
    assert_eq!(
        text(&ids),
        "+-----+\n| id  |\n+-----+\n| 101 |\n| 104 |\n+-----+"
    );
    let ops = sql(
        &w.ctx,
        "SELECT operation FROM ns.\"t$snapshots\" ORDER BY committed_at",
    )
    .await;
    assert_eq!(
        text(&ops),
        "+-----------+\n| operation |\n+-----------+\n| append    |\n| overwrite |\n| overwrite |\n+-----------+"
    );
    // time travel to the first snapshot still reads the first rows
    let first = sql(
        &w.ctx,
        "SELECT snapshot_id FROM ns.\"t$snapshots\" ORDER BY committed_at LIMIT 1",
    )
    .await;
    let id = first[0].column(0).as_primitive::<Int64Type>().value(0);
    let old = sql(&w.ctx, &format!("SELECT count(*) AS n FROM ns.\"t@{id}\"")).await;
    assert_eq!(text(&old), "+---+\n| n |\n+---+\n| 4 |\n+---+");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_inserts_fail_before_committing() {
    let w = warehouse().await;
    create(&w, "ns.t", PartitionSpec::unpartitioned()).await;
    // id is required
    let err = w
        .ctx
        .sql("INSERT INTO ns.t VALUES (NULL, 'a', NULL, NULL)")
        .await;
    let err = match err {
        Ok(df) => df.collect().await.expect_err("null in a required column"),
        Err(e) => e,
    };
    assert!(err.to_string().contains("id"), "{err}");
    let table = w
        .catalog
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .unwrap();
    assert!(table.metadata().current_snapshot().is_none());
    // no data file was left behind
    let data = w.dir.path().join("ns/t/data");
    let left = std::fs::read_dir(&data).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "files left in {}", data.display());
    // a table opened by location is read-only
    let ctx = SessionContext::new();
    ctx.register_table(
        "r",
        Arc::new(icefloe::IcebergTableProvider::try_new(table).unwrap()),
    )
    .unwrap();
    let err = match ctx.sql("INSERT INTO r VALUES (1, 'a', NULL, NULL)").await {
        Ok(df) => df.collect().await.map(|_| ()).expect_err("read-only"),
        Err(e) => e,
    };
    assert!(err.to_string().contains("catalog"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_are_written_in_the_tables_sort_order() {
    let w = warehouse().await;
    icefloe::datafusion::dml::install_dml_guard(&w.ctx);
    let mut c = TableCreation::new(events_schema());
    c.sort_order = icefloe::spec::sort_order::SortOrder {
        order_id: 1,
        fields: vec![icefloe::spec::sort_order::SortField {
            transform: Transform::Identity,
            source_id: 1,
            direction: icefloe::spec::SortDirection::Desc,
            null_order: icefloe::spec::NullOrder::Last,
        }],
    };
    w.catalog
        .create_table(&TableIdent::parse("ns.sorted"), c)
        .await
        .expect("create");
    sql(
        &w.ctx,
        "INSERT INTO ns.sorted VALUES (2, 'b', NULL, NULL), (5, 'e', NULL, NULL), \
         (1, 'a', NULL, NULL), (4, 'd', NULL, NULL)",
    )
    .await;
    // one data file, its rows in descending id order as written
    let files = sql(&w.ctx, "SELECT file_path FROM ns.\"sorted$files\"").await;
    assert_eq!(files.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    let path = files[0]
        .column(0)
        .as_string::<i32>()
        .value(0)
        .trim_start_matches("file://")
        .to_string();
    let reader =
        datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
            std::fs::File::open(&path).expect("data file"),
        )
        .expect("parquet")
        .build()
        .expect("reader");
    let mut ids: Vec<i64> = vec![];
    for batch in reader {
        let batch = batch.expect("batch");
        ids.extend(batch.column(0).as_primitive::<Int64Type>().values().iter());
    }
    assert_eq!(ids, [5, 4, 2, 1]);
}

/// A partitioned table's rows are hash-distributed by their partition values before
/// the writers (`write.distribution-mode`: `hash`, Spark's default for a partitioned
/// table), so each day is written by one writer into one file even when every input
/// partition holds every day; under `none` each writer writes each day it sees; an
/// unknown mode fails the write, naming the property, before anything is committed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitioned_writes_are_distributed_by_partition_per_write_distribution_mode() {
    let w = warehouse().await;
    sql(&w.ctx, "SET datafusion.execution.target_partitions = 2").await;
    sql(
        &w.ctx,
        "SET datafusion.execution.enable_file_stream_work_stealing = false",
    )
    .await;
    create(&w, "ns.src", PartitionSpec::unpartitioned()).await;
    // two source files (two input partitions), each with rows of all four days
    for lo in [0, 1000] {
        sql(
            &w.ctx,
            &format!(
                "INSERT INTO ns.src SELECT value, NULL AS s, \
                 to_timestamp_seconds(1767225600 + (value % 4) * 86400) AS ts, \
                 NULL AS x FROM generate_series({lo}, {lo} + 999)"
            ),
        )
        .await;
    }
    let files_per_day = |table: &str| {
        format!(
            "SELECT count(*) AS files, count(DISTINCT partition) AS days, \
             sum(record_count) AS n FROM ns.\"{table}$files\""
        )
    };
    for (mode, expected_files) in [(None, 4), (Some("hash"), 4), (Some("none"), 8)] {
        let name = format!("ns.t_{}", mode.unwrap_or("default"));
        let mut c = TableCreation::new(events_schema());
        c.partition_spec = by_day();
        if let Some(mode) = mode {
            c.properties
                .insert("write.distribution-mode".into(), mode.into());
        }
        w.catalog
            .create_table(&TableIdent::parse(&name), c)
            .await
            .expect("create");
        let plan = text(
            &sql(
                &w.ctx,
                &format!("EXPLAIN INSERT INTO {name} SELECT * FROM ns.src"),
            )
            .await,
        );
        let hashed = plan.contains("Hash([date_trunc(day, ts");
        assert_eq!(hashed, mode != Some("none"), "{mode:?}\n{plan}");
        sql(&w.ctx, &format!("INSERT INTO {name} SELECT * FROM ns.src")).await;
        let short = name.trim_start_matches("ns.");
        assert_eq!(
            text(&sql(&w.ctx, &files_per_day(short)).await),
            format!(
                "+-------+------+------+\n\
                 | files | days | n    |\n\
                 +-------+------+------+\n\
                 | {expected_files:<5} | 4    | 2000 |\n\
                 +-------+------+------+"
            ),
            "{mode:?}"
        );
        assert_eq!(
            text(&sql(&w.ctx, &format!("SELECT count(*) AS n, sum(id) AS s FROM {name}")).await),
            "+------+---------+\n| n    | s       |\n+------+---------+\n| 2000 | 1999000 |\n+------+---------+"
        );
    }
    // an unknown mode is refused when the table is created, naming the property (a
    // value another engine wrote fails the write instead: `table_properties.rs`)
    let mut c = TableCreation::new(events_schema());
    c.partition_spec = by_day();
    c.properties
        .insert("write.distribution-mode".into(), "random".into());
    let err = w
        .catalog
        .create_table(&TableIdent::parse("ns.t_bad"), c)
        .await
        .expect_err("an unknown mode");
    assert!(
        err.to_string()
            .contains("table property 'write.distribution-mode' is 'random'"),
        "{err}"
    );
    assert!(!w
        .catalog
        .table_exists(&TableIdent::parse("ns.t_bad"))
        .await
        .expect("exists"));
}

/// The hash keys of `years`/`months` fields read every timestamp and date a table takes:
/// a tester's `INSERT … SELECT` of `TIMESTAMP '1500-06-01 00:00:00'` into a `years(ts)`
/// table failed with "Timestamp … out of range" (DataFusion's `date_trunc` to a year goes
/// through nanoseconds), also for dates and `timestamptz` beyond 2262. From two input
/// partitions each partition is written once, as by any other key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn years_and_months_far_from_1970_are_distributed_by_partition() {
    let lake = crate::dml::lake().await;
    let ok = |sql: String| {
        let ctx = lake.ctx.clone();
        async move { crate::dml::ok(&ctx, &sql).await }
    };
    ok("SET datafusion.execution.target_partitions = 2".into()).await;
    ok("SET datafusion.execution.enable_file_stream_work_stealing = false".into()).await;
    ok(
        "CREATE TABLE ice.ns.far (id INT, ts TIMESTAMP, d DATE, tz TIMESTAMPTZ) \
        PARTITIONED BY (years(ts), months(d), months(tz))"
            .into(),
    )
    .await;
    // two data files (two input partitions), each holding both partitions
    for lo in [0, 10] {
        ok(format!(
            "INSERT INTO ice.ns.far VALUES \
             ({lo}, TIMESTAMP '2000-01-01 00:00:00', DATE '2000-01-01', \
              TIMESTAMP '2000-01-01 00:00:00'), \
             ({lo} + 1, TIMESTAMP '1500-06-01 00:00:00', DATE '2500-06-01', \
              TIMESTAMP '9999-12-31 23:00:00')"
        ))
        .await;
    }
    ok(
        "CREATE TABLE ice.ns.far2 (id INT, ts TIMESTAMP, d DATE, tz TIMESTAMPTZ) \
        PARTITIONED BY (years(ts), months(d), months(tz))"
            .into(),
    )
    .await;
    let plan = crate::dml::ok(
        &lake.ctx,
        "EXPLAIN INSERT INTO ice.ns.far2 SELECT * FROM ice.ns.far",
    )
    .await;
    assert!(plan.contains("Hash([date_part(year, ts"), "{plan}");
    ok("INSERT INTO ice.ns.far2 SELECT * FROM ice.ns.far".into()).await;
    let files = crate::dml::ok(
        &lake.ctx,
        "SELECT partition.ts_year AS y, partition.d_month AS dm, partition.tz_month AS tm, \
         record_count AS n FROM ice.ns.\"far2$files\" ORDER BY y",
    )
    .await;
    // one file per partition: years since 1970 (1500: -470), months since 1970-01
    // (2500-06: 530 * 12 + 5; 9999-12: 8029 * 12 + 11)
    assert_eq!(
        files,
        "+------+------+-------+---+\n\
         | y    | dm   | tm    | n |\n\
         +------+------+-------+---+\n\
         | -470 | 6365 | 96359 | 2 |\n\
         | 30   | 360  | 360   | 2 |\n\
         +------+------+-------+---+"
    );
    let rows = crate::dml::ok(
        &lake.ctx,
        "SELECT id, ts, d, tz FROM ice.ns.far2 ORDER BY id",
    )
    .await;
    assert_eq!(
        rows,
        "+----+---------------------+------------+----------------------+\n\
         | id | ts                  | d          | tz                   |\n\
         +----+---------------------+------------+----------------------+\n\
         | 0  | 2000-01-01T00:00:00 | 2000-01-01 | 2000-01-01T00:00:00Z |\n\
         | 1  | 1500-06-01T00:00:00 | 2500-06-01 | 9999-12-31T23:00:00Z |\n\
         | 10 | 2000-01-01T00:00:00 | 2000-01-01 | 2000-01-01T00:00:00Z |\n\
         | 11 | 1500-06-01T00:00:00 | 2500-06-01 | 9999-12-31T23:00:00Z |\n\
         +----+---------------------+------------+----------------------+"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_partitions_are_written_in_parallel_into_one_commit() {
    let w = warehouse().await;
    // two partitions whatever the machine's core count (CI may have one), and no file
    // stealing between them: DataFusion 55's file streams let an idle partition take a
    // sibling's files, so on one core partition 0 may read both and partition 1 none
    sql(&w.ctx, "SET datafusion.execution.target_partitions = 2").await;
    sql(
        &w.ctx,
        "SET datafusion.execution.enable_file_stream_work_stealing = false",
    )
    .await;
    create(&w, "ns.wide", PartitionSpec::unpartitioned()).await;
    create(&w, "ns.src", PartitionSpec::unpartitioned()).await;
    // a source of two files, scanned as two partitions
    for lo in [0, 1000] {
        sql(
            &w.ctx,
            &format!(
                "INSERT INTO ns.src SELECT value, NULL AS s, NULL AS ts, NULL AS x \
                 FROM generate_series({lo}, {lo} + 999)"
            ),
        )
        .await;
    }
    let plan = sql(&w.ctx, "EXPLAIN INSERT INTO ns.wide SELECT * FROM ns.src").await;
    let plan = text(&plan);
    assert!(plan.contains("IcebergWriteExec"), "{plan}");
    // the rows reach the writers in their partitions: only the written files are
    // coalesced, into the commit
    let (_, below_writer) = plan
        .split_once("IcebergDataFileWriterExec")
        .unwrap_or_else(|| panic!("{plan}"));
    assert!(!below_writer.contains("CoalescePartitionsExec"), "{plan}");
    let count = sql(&w.ctx, "INSERT INTO ns.wide SELECT * FROM ns.src").await;
    assert!(text(&count).contains("| 2000  |"), "{}", text(&count));
    let files = sql(
        &w.ctx,
        "SELECT count(*) AS files, sum(record_count) AS rows FROM ns.\"wide$files\"",
    )
    .await;
    // one file per input partition (two writers), one snapshot
    assert_eq!(
        text(&files),
        "+-------+------+\n| files | rows |\n+-------+------+\n| 2     | 2000 |\n+-------+------+"
    );
    let snapshots = sql(&w.ctx, "SELECT count(*) AS n FROM ns.\"wide$snapshots\"").await;
    assert_eq!(text(&snapshots), "+---+\n| n |\n+---+\n| 1 |\n+---+");
    let sum = sql(&w.ctx, "SELECT sum(id) AS s FROM ns.wide").await;
    assert_eq!(
        text(&sum),
        "+---------+\n| s       |\n+---------+\n| 1999000 |\n+---------+"
    );
}

/// `EXPLAIN ANALYZE` of a write shows the id of the snapshot it committed in full (a
/// gauge showed 6519876391283712345 as "6.5 E"), for `INSERT` and for `DELETE`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_analyze_of_a_write_shows_the_committed_snapshot_id() {
    let w = warehouse().await;
    icefloe::datafusion::dml::install_dml_guard(&w.ctx);
    let mut c = TableCreation::new(events_schema());
    c.properties
        .insert("write.delete.mode".into(), "merge-on-read".into());
    w.catalog
        .create_table(&TableIdent::parse("ns.t"), c)
        .await
        .expect("create");
    for statement in [
        format!("INSERT INTO ns.t VALUES {ROWS}"),
        "DELETE FROM ns.t WHERE id = 2".to_string(),
    ] {
        let plan = text(&sql(&w.ctx, &format!("EXPLAIN ANALYZE {statement}")).await);
        let table = w
            .catalog
            .load_table(&TableIdent::parse("ns.t"))
            .await
            .expect("load");
        let current = table.metadata().current_snapshot_id.expect("a snapshot");
        assert!(
            plan.contains(&format!("committed_snapshot_id={current}")),
            "{statement}: snapshot {current} not in\n{plan}"
        );
    }
    let rows = sql(&w.ctx, "SELECT count(*) AS n FROM ns.t").await;
    assert_eq!(text(&rows), "+---+\n| n |\n+---+\n| 3 |\n+---+");
}
