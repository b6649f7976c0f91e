//! Deferred planning (`icefloe.deferred_planning_min_files`, issue 18): a scan of a
//! snapshot of many files plans each manifest's files as it reads the manifest. It must
//! return exactly what the scan planned up front returns, for every kind of query, and
//! fall back to planning up front where it cannot defer (deletes, an unfiltered LIMIT).

use datafusion::prelude::SessionContext;

use crate::dml::{lake, ok, run, session_over, Lake};

/// A session over `lake` deferring scans of at least `min_files` files (0: never).
async fn session(lake: &Lake, min_files: usize) -> SessionContext {
    let ctx = session_over(lake).await;
    // at most as many scan partitions as the tables have manifests, on any machine
    ok(&ctx, "SET datafusion.execution.target_partitions = 2").await;
    ok(
        &ctx,
        &format!("SET icefloe.deferred_planning_min_files = {min_files}"),
    )
    .await;
    ctx
}

/// The `EXPLAIN` text of `sql`.
async fn explain(ctx: &SessionContext, sql: &str) -> String {
    ok(ctx, &format!("EXPLAIN {sql}")).await
}

/// The value of the metric `name` on the scan in `EXPLAIN ANALYZE sql`.
async fn metric(ctx: &SessionContext, sql: &str, name: &str) -> u64 {
    metrics(ctx, sql, &[name]).await[0]
}

/// The values of the metrics `names` on the scan in one run of `EXPLAIN ANALYZE sql`.
async fn metrics(ctx: &SessionContext, sql: &str, names: &[&str]) -> Vec<u64> {
    let text = ok(ctx, &format!("EXPLAIN ANALYZE {sql}")).await;
    names
        .iter()
        .map(|name| {
            let at = text
                .find(&format!("{name}="))
                .unwrap_or_else(|| panic!("no {name} in {text}"));
            text[at + name.len() + 1..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap_or_else(|_| panic!("{name} in {text}"))
        })
        .collect()
}

/// `ns.t` (id, k, f, d) partitioned by `k`: six appends (six manifests) of 3 files each,
/// with NaNs of both signs, infinities, -0.0 and nulls in `f`.
async fn six_appends(lake: &Lake, properties: &str) {
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.t (id BIGINT, k STRING, f DOUBLE, d DATE) \
             PARTITIONED BY (k) TBLPROPERTIES ('format-version'='2'{properties})"
        ),
    )
    .await;
    let specials = [
        "'NaN'::double",
        "CAST(0 AS DOUBLE) / CAST(0 AS DOUBLE)",
        "'-Infinity'::double",
        "-0.0",
        "NULL",
        "'Infinity'::double",
    ];
    for (round, special) in specials.iter().enumerate() {
        let mut rows = vec![];
        for i in 0..9i64 {
            let id = round as i64 * 10 + i;
            let k = ["a", "b", "c"][(i % 3) as usize];
            let f = if i == 4 {
                special.to_string()
            } else {
                format!("{}.5", id - 20)
            };
            rows.push(format!("({id}, '{k}', {f}, DATE '2026-01-01' + {id})"));
        }
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.t VALUES {}", rows.join(", ")),
        )
        .await;
    }
}

const QUERIES: &[&str] = &[
    "SELECT * FROM ice.ns.t ORDER BY id",
    "SELECT id, f FROM ice.ns.t WHERE k = 'b' ORDER BY id",
    "SELECT id FROM ice.ns.t WHERE id >= 41 ORDER BY id",
    "SELECT id FROM ice.ns.t WHERE id BETWEEN 12 AND 14 OR id = 55 ORDER BY id",
    "SELECT id FROM ice.ns.t WHERE f > 0.5 ORDER BY id",
    "SELECT id FROM ice.ns.t WHERE f < -100 ORDER BY id",
    "SELECT id FROM ice.ns.t WHERE isnan(f) ORDER BY id",
    "SELECT id FROM ice.ns.t WHERE f = 'NaN'::double ORDER BY id",
    "SELECT count(DISTINCT f) AS n FROM ice.ns.t WHERE isnan(f)",
    "SELECT id, f FROM ice.ns.t ORDER BY f DESC NULLS LAST, id LIMIT 4",
    "SELECT id FROM ice.ns.t WHERE d > DATE '2026-02-10' ORDER BY id",
    "SELECT count(*) AS n FROM ice.ns.t WHERE k = 'c'",
    "SELECT count(*) AS n FROM ice.ns.t",
    "SELECT k, sum(id) AS s, count(f) AS n, min(d) AS lo, max(d) AS hi FROM ice.ns.t GROUP BY k ORDER BY k",
    "SELECT min(f) AS lo, max(f) AS hi FROM ice.ns.t WHERE NOT isnan(f)",
    "SELECT k, min(f) AS lo, max(f) AS hi FROM ice.ns.t GROUP BY k ORDER BY k",
    "SELECT count(*) AS n FROM (SELECT id FROM ice.ns.t WHERE k <> 'a' LIMIT 5)",
    "SELECT count(*) AS n FROM ice.ns.t WHERE id = 1000",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferred_scans_return_what_scans_planned_up_front_return() {
    let lake = lake().await;
    six_appends(&lake, "").await;
    let eager = session(&lake, 0).await;
    let deferred = session(&lake, 1).await;
    let all = "SELECT * FROM ice.ns.t";
    // the deferred scan's file groups hold the six manifests, the eager one's the files
    let plan = explain(&deferred, all).await;
    assert_eq!(plan.matches(".avro").count(), 6, "{plan}");
    assert!(!plan.contains(".parquet"), "{plan}");
    assert!(explain(&eager, all).await.contains(".parquet"));
    // above the threshold it is not deferred
    let above = session(&lake, 19).await;
    assert!(explain(&above, all).await.contains(".parquet"));
    let at = session(&lake, 18).await;
    assert!(explain(&at, all).await.contains(".avro"));
    for q in QUERIES {
        assert_eq!(ok(&deferred, q).await, ok(&eager, q).await, "{q}");
    }
    // the same files pruned, counted as manifests are read
    for q in [
        "SELECT id FROM ice.ns.t WHERE k = 'b'",
        "SELECT id FROM ice.ns.t WHERE id >= 41",
    ] {
        for name in [
            "iceberg_data_files_total",
            "iceberg_data_files_skipped_by_partition",
            "iceberg_data_files_skipped_by_metrics",
            "iceberg_data_files_planned",
        ] {
            assert_eq!(
                metric(&deferred, q, name).await,
                metric(&eager, q, name).await,
                "{q}: {name}"
            );
        }
    }
    assert_eq!(
        metric(
            &deferred,
            "SELECT id FROM ice.ns.t WHERE k = 'b'",
            "iceberg_data_files_planned"
        )
        .await,
        6
    );
    // the manifests are read while the query runs: counted with its reads (fresh
    // sessions, nothing cached)
    let q = "SELECT id FROM ice.ns.t WHERE k = 'b'";
    let (fresh_deferred, fresh_eager) = (session(&lake, 1).await, session(&lake, 0).await);
    let counters = [
        "iceberg_planning_get_requests",
        "iceberg_store_get_requests",
    ];
    let deferred_counts = metrics(&fresh_deferred, q, &counters).await;
    let (deferred_planning, deferred_store) = (deferred_counts[0], deferred_counts[1]);
    let eager_counts = metrics(&fresh_eager, q, &counters).await;
    let (eager_planning, eager_store) = (eager_counts[0], eager_counts[1]);
    assert_eq!(eager_planning, 1 + 6, "the list and the six manifests");
    assert_eq!(deferred_planning, 1, "the list");
    assert_eq!(
        deferred_store,
        eager_store + 6,
        "the manifests with the data files"
    );
    // an unfiltered LIMIT opens only the manifests it needs, planned up front
    let plan = explain(&deferred, "SELECT id FROM ice.ns.t LIMIT 3").await;
    assert!(plan.contains(".parquet"), "{plan}");
    let text = ok(
        &deferred,
        "SELECT count(*) AS n FROM (SELECT id FROM ice.ns.t LIMIT 3)",
    )
    .await;
    assert!(text.contains("| 3 "), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_with_deletes_are_planned_up_front() {
    let lake = lake().await;
    six_appends(&lake, ", 'write.delete.mode'='merge-on-read'").await;
    let eager = session(&lake, 0).await;
    let deferred = session(&lake, 1).await;
    ok(&eager, "DELETE FROM ice.ns.t WHERE id % 4 = 1").await;
    let plan = explain(&deferred, "SELECT * FROM ice.ns.t").await;
    assert!(
        plan.contains(".parquet") && !plan.contains(".avro"),
        "{plan}"
    );
    for q in QUERIES {
        assert_eq!(ok(&deferred, q).await, ok(&eager, q).await, "{q}");
    }
    // an earlier snapshot, without the deletes, is deferred
    let first: String = ok(
        &eager,
        "SELECT snapshot_id FROM ice.ns.\"t$snapshots\" ORDER BY committed_at DESC LIMIT 1 OFFSET 1",
    )
    .await
    .lines()
    .filter_map(|l| l.trim_matches(|c| c == '|' || c == ' ').parse::<i64>().ok())
    .map(|id| id.to_string())
    .next()
    .expect("a snapshot id");
    let at = format!("SELECT id FROM ice.ns.\"t@{first}\" WHERE k = 'a' ORDER BY id");
    let plan = explain(&deferred, &at).await;
    assert!(plan.contains(".avro"), "{plan}");
    assert_eq!(ok(&deferred, &at).await, ok(&eager, &at).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_manifest_is_named_when_the_scan_reaches_it() {
    let lake = lake().await;
    six_appends(&lake, "").await;
    let deferred = session(&lake, 1).await;
    let manifests: Vec<String> = ok(
        &deferred,
        "SELECT path FROM ice.ns.\"t$manifests\" ORDER BY path",
    )
    .await
    .lines()
    .filter_map(|l| {
        let cell = l.trim_matches(|c| c == '|' || c == ' ');
        cell.ends_with(".avro").then(|| cell.to_string())
    })
    .collect();
    assert_eq!(manifests.len(), 6);
    let gone = manifests[2].trim_start_matches("file://").to_string();
    std::fs::remove_file(&gone).expect("remove a manifest");
    // planning succeeds (only the manifest list is read); reading fails naming the file
    let plan = explain(&deferred, "SELECT * FROM ice.ns.t").await;
    assert!(plan.contains(".avro"), "{plan}");
    let err = run(&deferred, "SELECT * FROM ice.ns.t")
        .await
        .expect_err("a manifest is missing");
    let name = std::path::Path::new(&gone)
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name");
    assert!(
        err.contains(name) && err.contains("manifest listed in"),
        "{err}"
    );
}

/// Data files lacking their identity-partition column (as migrated files do) read the
/// partition value in a deferred scan too: each planned file gets the statistics a scan
/// planned up front gives it, from which DataFusion fills the column.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrated_files_read_their_partition_values_when_deferred() {
    use crate::fixtures::{
        drop_column, files_with_suffix, patch_manifest_file_sizes, rewrite_parquet,
    };
    let lake = lake().await;
    six_appends(&lake, "").await;
    let queries = [
        "SELECT k, count(*) AS n, sum(id) AS s FROM ice.ns.t GROUP BY k ORDER BY k",
        "SELECT id, k FROM ice.ns.t WHERE k = 'b' ORDER BY id",
        "SELECT id, k FROM ice.ns.t WHERE id > 50 ORDER BY id",
    ];
    let mut before = vec![];
    for q in queries {
        before.push(ok(&lake.ctx, q).await);
    }
    let table_dir = lake.warehouse.join("ns").join("t");
    for file in files_with_suffix(&table_dir.join("data"), ".parquet") {
        rewrite_parquet(&file, drop_column("k"));
    }
    patch_manifest_file_sizes(&table_dir);
    let deferred = session(&lake, 1).await;
    let eager = session(&lake, 0).await;
    assert!(explain(&deferred, queries[0]).await.contains(".avro"));
    for (q, expected) in queries.iter().zip(&before) {
        assert_eq!(&ok(&deferred, q).await, expected, "deferred: {q}");
        assert_eq!(&ok(&eager, q).await, expected, "up front: {q}");
    }
}

/// Fewer manifests than the scan has partitions: planned up front (each manifest's files
/// are read by one partition, so deferring would read them on fewer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fewer_manifests_than_partitions_are_planned_up_front() {
    let lake = lake().await;
    six_appends(&lake, "").await;
    let ctx = session(&lake, 1).await;
    let all = "SELECT * FROM ice.ns.t";
    ok(&ctx, "SET datafusion.execution.target_partitions = 6").await;
    assert!(explain(&ctx, all).await.contains(".avro"));
    ok(&ctx, "SET datafusion.execution.target_partitions = 7").await;
    assert!(explain(&ctx, all).await.contains(".parquet"));
    // a scan of no column (COUNT(*) with an exact, identity-partition filter) is
    // answered from the planned files' row counts
    ok(&ctx, "SET datafusion.execution.target_partitions = 2").await;
    let count = "SELECT count(*) AS n FROM ice.ns.t WHERE k = 'b'";
    let plan = explain(&ctx, count).await;
    assert!(!plan.contains(".avro"), "{plan}");
    assert!(ok(&ctx, count).await.contains("| 18 "));
}

/// Tables PyIceberg wrote (every primitive type with NaN/inf/-0.0; a v1 table with
/// identity, day and bucket partitions; schema evolution and a copy-on-write delete) read
/// the rows PyIceberg wrote when their scans are deferred.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyiceberg_tables_read_alike_when_deferred() {
    use std::sync::Arc;

    use icefloe::catalog::SqlCatalog;

    use crate::interop::{assert_same_rows, icefloe_rows, written};

    let Some((_tmp, db, _warehouse, written, _)) = written().await else {
        return;
    };
    let config = icefloe::datafusion::register_iceberg_options(
        crate::catalog::context().state().config().clone(),
    );
    let ctx = SessionContext::new_with_config(config);
    icefloe::datafusion::register_iceberg_functions(&ctx);
    let catalog = SqlCatalog::open("default", &db).expect("catalog");
    crate::catalog::attach(&ctx, "ice", Arc::new(catalog)).await;
    ok(&ctx, "SET datafusion.execution.target_partitions = 2").await;
    ok(&ctx, "SET icefloe.deferred_planning_min_files = 1").await;
    let ns = written["namespace"].as_str().expect("namespace");
    let mut deferred_tables = 0;
    for (name, t) in written["tables"].as_object().expect("tables") {
        let table = format!("ice.{ns}.{name}");
        if explain(&ctx, &format!("SELECT * FROM {table}"))
            .await
            .contains(".avro")
        {
            deferred_tables += 1;
        }
        let expected = t["rows"].as_array().expect("rows").clone();
        let got = icefloe_rows(&ctx, &table, &t["schema"]).await;
        assert_same_rows(&format!("{name}, deferred"), &expected, &got);
    }
    // each has at least two manifests (two appends)
    assert_eq!(deferred_tables, 3, "{written}");
}
