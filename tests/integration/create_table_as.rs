//! `CREATE TABLE … AS` (CTAS) as Spark's on Iceberg: a staged create, one commit holding
//! the table and its first snapshot (operation `append`), nothing in the catalog before
//! it, and nothing left after a query that fails — on the SQLite and the filesystem
//! catalog; the v1, v2 and v3 results read by PyIceberg. (The race with a `CREATE TABLE`
//! of the name while the CTAS commits is in `cli_writes`, paused by a failpoint.)

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use icefloe::catalog::{Catalog, FileSystemCatalog, Namespace, TableIdent};

use crate::dml::{lake, ok, run, Lake};
use crate::interop::{pyiceberg_read, python};

/// Every file under `dir`, sorted (none when it does not exist).
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.path().is_dir() {
                true => stack.push(e.path()),
                false => out.push(e.path().to_string_lossy().to_string()),
            }
        }
    }
    out.sort();
    out
}

/// A CTAS of each format version (and a `CREATE OR REPLACE … AS` of a missing table)
/// creates the table in one commit: its first metadata file (`00000-…`, nothing in the
/// metadata log) holds one snapshot, operation `append`, with all the rows; a v3
/// snapshot's `first-row-id` is 0 and `next-row-id` the row count; the partition spec
/// and properties are the statement's. PyIceberg reads each table with its rows,
/// format version and partition values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctas_commits_the_table_with_one_append_snapshot_read_by_pyiceberg() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.src AS SELECT value AS id, CAST(value % 3 AS INT) AS k, \
         concat('s', CAST(value AS VARCHAR)) AS s FROM generate_series(1, 30)",
    )
    .await;
    for (name, verb, version) in [
        ("v1", "CREATE TABLE", 1),
        ("v2", "CREATE TABLE", 2),
        ("v3", "CREATE TABLE", 3),
        ("or_replaced", "CREATE OR REPLACE TABLE", 3),
    ] {
        ok(
            &lake.ctx,
            &format!(
                "{verb} ice.ns.{name} PARTITIONED BY (k) TBLPROPERTIES \
                 ('format-version'='{version}', 'p'='x') AS SELECT id, k, s FROM ice.ns.src \
                 WHERE id > 10"
            ),
        )
        .await;
        let table = lake
            .catalog
            .load_table(&TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("load");
        let m = table.metadata();
        let file = table
            .metadata_location()
            .rsplit('/')
            .next()
            .unwrap_or_default();
        assert!(file.starts_with("00000-"), "{name}: {file}");
        assert!(m.metadata_log.is_empty(), "{name}: {:?}", m.metadata_log);
        assert_eq!(m.format_version as i32, version, "{name}");
        assert_eq!(
            m.properties.get("p").map(String::as_str),
            Some("x"),
            "{name}"
        );
        assert_eq!(m.snapshots.len(), 1, "{name}: {:?}", m.snapshots);
        let s = &m.snapshots[0];
        assert_eq!(m.current_snapshot_id, Some(s.snapshot_id), "{name}");
        assert_eq!(s.parent_snapshot_id, None, "{name}");
        let summary = |key: &str| s.summary.get(key).map(String::as_str);
        assert_eq!(summary("operation"), Some("append"), "{name}");
        assert_eq!(summary("added-records"), Some("20"), "{name}");
        if version == 3 {
            assert_eq!(s.first_row_id, Some(0), "{name}");
            assert_eq!(m.next_row_id, Some(20), "{name}");
        }
        let spec = m.default_partition_spec().expect("spec");
        assert_eq!(spec.fields.len(), 1, "{name}");
        assert_eq!(spec.fields[0].name, "k", "{name}");
        let count = ok(
            &lake.ctx,
            &format!("SELECT count(*) AS n FROM ice.ns.{name}"),
        )
        .await;
        assert!(count.contains("| 20 |"), "{name}: {count}");
        if python().is_none() {
            continue;
        }
        let read = pyiceberg_read(&lake.db, &lake.warehouse, &format!("ns.{name}"));
        assert_eq!(read["format_version"], version, "{name}: {read}");
        assert_eq!(read["count"], 20, "{name}: {read}");
        assert_eq!(
            read["metadata_location"].as_str(),
            Some(table.metadata_location()),
            "{name}"
        );
        let snapshots = read["snapshots"].as_array().expect("snapshots");
        assert_eq!(snapshots.len(), 1, "{name}: {read}");
        assert_eq!(snapshots[0]["operation"], "append", "{name}: {read}");
        let mut ks: Vec<i64> = read["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| f["partition"]["k"].as_i64().expect("k"))
            .collect();
        ks.sort();
        ks.dedup();
        assert_eq!(ks, [0, 1, 2], "{name}: {read}");
    }
}

/// A filesystem catalog over `<lake dir>/fs` (namespace `ns`), attached as `fs` to a
/// session of the lake.
async fn filesystem(lake: &Lake) -> (Arc<dyn Catalog>, std::path::PathBuf) {
    let warehouse = lake.dir.path().join("fs");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let catalog: Arc<dyn Catalog> =
        Arc::new(FileSystemCatalog::new("fs", &warehouse.to_string_lossy()).expect("catalog"));
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("namespace");
    crate::catalog::attach(&lake.ctx, "fs", Arc::clone(&catalog)).await;
    (catalog, warehouse)
}

/// A CTAS whose query fails — a division by zero, or a cast error, in a late row, after
/// the writers wrote files — leaves no table (not loaded, not listed, no namespace of
/// its name in a filesystem catalog) and nothing under the table's location, not even
/// a directory; the name is free for the next statement. (CTAS was create, then insert:
/// the table was visible while the query ran, and a CTAS killed then left it empty.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_ctas_leaves_no_table_and_no_files() {
    let lake = lake().await;
    let (fs, fs_warehouse) = filesystem(&lake).await;
    // the late rows fail once earlier batches reached the writers (small batches, so
    // that they do)
    ok(&lake.ctx, "SET datafusion.execution.batch_size = 100").await;
    for (cat, catalog, warehouse) in [
        ("ice", Arc::clone(&lake.catalog), lake.warehouse.clone()),
        ("fs", Arc::clone(&fs), fs_warehouse.clone()),
    ] {
        for (query, error) in [
            (
                "SELECT value AS id, 10 / (value - 9000) AS q FROM generate_series(1, 10000)",
                "Divide by zero",
            ),
            (
                "SELECT value AS id, CAST(CASE WHEN value < 9000 THEN CAST(value AS VARCHAR) \
                 ELSE 'x' END AS INT) AS q FROM generate_series(1, 10000)",
                "Cannot cast string 'x'",
            ),
        ] {
            let what = format!("{cat}: {query}");
            let e = run(
                &lake.ctx,
                &format!("CREATE TABLE {cat}.ns.t PARTITIONED BY (bucket(4, id)) AS {query}"),
            )
            .await
            .expect_err(&what);
            assert!(e.contains(error), "{what}: {e}");
            assert!(
                e.contains(&format!("CREATE TABLE {cat}.ns.t AS")),
                "{what}: {e}"
            );
            let ident = TableIdent::parse("ns.t");
            assert!(
                !catalog.table_exists(&ident).await.expect("exists"),
                "{what}"
            );
            let ns = Namespace::parse("ns");
            assert_eq!(
                catalog.list_tables(&ns).await.expect("tables"),
                [],
                "{what}"
            );
            assert_eq!(
                catalog.list_namespaces().await.expect("namespaces"),
                [ns],
                "{what}"
            );
            let dir = warehouse.join("ns").join("t");
            assert_eq!(files_under(&dir), Vec::<String>::new(), "{what}");
            assert!(!dir.exists(), "{what}: {} is left", dir.display());
        }
        // the name is free
        ok(
            &lake.ctx,
            &format!("CREATE TABLE {cat}.ns.t AS SELECT 1 AS id"),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT id FROM {cat}.ns.t")).await;
        assert!(rows.contains("| 1  |"), "{cat}: {rows}");
        let e = run(
            &lake.ctx,
            &format!("CREATE TABLE {cat}.ns.t AS SELECT 2 AS id"),
        )
        .await
        .expect_err("taken");
        assert!(e.contains("already exists"), "{cat}: {e}");
        // IF NOT EXISTS: nothing happens
        ok(
            &lake.ctx,
            &format!("CREATE TABLE IF NOT EXISTS {cat}.ns.t AS SELECT 3 AS id"),
        )
        .await;
        let rows = ok(&lake.ctx, &format!("SELECT id FROM {cat}.ns.t")).await;
        assert!(
            rows.contains("| 1  |") && !rows.contains("| 3 "),
            "{cat}: {rows}"
        );
    }
}

/// On a REST catalog (SeaweedFS 4.48) CTAS is the same
/// staged create: `createTable` with `stage-create: true`, then one `updateTable` with
/// `assert-create` holding the table and its one `append` snapshot. While the query
/// runs the table is in no listing; a `CREATE TABLE` of the name meanwhile makes the CTAS
/// fail with `AlreadyExists` naming the table (the other table keeps its rows); a query
/// that fails leaves no table. PyIceberg reads the result through the REST catalog.
#[cfg(feature = "cloud")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rest_ctas_is_a_staged_create() {
    use datafusion::arrow::datatypes::DataType;
    use datafusion::logical_expr::{create_udf, ColumnarValue, Volatility};
    use datafusion::prelude::SessionContext;
    use std::sync::{mpsc, Condvar, Mutex};

    let Some(server) = crate::seaweed::server() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = crate::rest_s3::rest_catalog(server, dir.path());
    let ns = crate::seaweed::unique_namespace("ctas");
    catalog
        .create_namespace(&Namespace::parse(&ns), &HashMap::new())
        .await
        .expect("namespace");
    let config = icefloe::datafusion::register_iceberg_options(
        crate::catalog::context().state().config().clone(),
    );
    let ctx = SessionContext::new_with_config(config);
    icefloe::datafusion::register_iceberg_functions(&ctx);
    crate::catalog::attach(&ctx, "lake", Arc::clone(&catalog)).await;
    ok(
        &ctx,
        &format!(
            "CREATE TABLE lake.{ns}.t PARTITIONED BY (k) TBLPROPERTIES ('format-version'='2') \
             AS SELECT value AS id, CAST(value % 2 AS INT) AS k FROM generate_series(1, 20)"
        ),
    )
    .await;
    let t = catalog
        .load_table(&TableIdent::new(Namespace::parse(&ns), "t"))
        .await
        .expect("load");
    let m = t.metadata();
    assert_eq!(m.snapshots.len(), 1, "{:?}", m.snapshots);
    assert_eq!(
        m.snapshots[0].summary.get("operation").map(String::as_str),
        Some("append")
    );
    assert_eq!(m.current_snapshot_id, Some(m.snapshots[0].snapshot_id));
    assert!(m.metadata_log.is_empty(), "{:?}", m.metadata_log);
    let count = ok(&ctx, &format!("SELECT count(*) AS n FROM lake.{ns}.t")).await;
    assert!(count.contains("| 20 |"), "{count}");
    if python().is_some() {
        let read = crate::rest_s3::engines(server, &["pyiceberg-read", &format!("{ns}.t")]);
        assert_eq!(read["rows"].as_array().map(Vec::len), Some(20), "{read}");
    }
    // a failing query: no table
    let e = run(
        &ctx,
        &format!(
            "CREATE TABLE lake.{ns}.bad AS SELECT value AS id, 10 / (value - 900) AS q \
             FROM generate_series(1, 1000)"
        ),
    )
    .await
    .expect_err("divide by zero");
    assert!(e.contains("Divide by zero"), "{e}");
    let bad = TableIdent::new(Namespace::parse(&ns), "bad");
    assert!(!catalog.table_exists(&bad).await.expect("exists"));
    // the race: `stall(x)` tells the test it runs and waits for its go
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let started_tx = Mutex::new(started_tx);
    let go = Arc::new((Mutex::new(false), Condvar::new()));
    let go_udf = Arc::clone(&go);
    ctx.register_udf(create_udf(
        "stall",
        vec![DataType::Int64],
        DataType::Int64,
        Volatility::Volatile,
        Arc::new(move |args: &[ColumnarValue]| {
            let _ = started_tx.lock().map(|tx| tx.send(()));
            let (lock, cvar) = &*go_udf;
            let mut ready = lock.lock().expect("lock");
            while !*ready {
                ready = cvar.wait(ready).expect("wait");
            }
            Ok(args[0].clone())
        }),
    ));
    let ctas = {
        let ctx = ctx.clone();
        let sql = format!(
            "CREATE TABLE lake.{ns}.c AS SELECT stall(value) AS x FROM generate_series(1, 3)"
        );
        tokio::spawn(async move { run(&ctx, &sql).await })
    };
    tokio::task::spawn_blocking(move || started_rx.recv().expect("stall runs"))
        .await
        .expect("join");
    let c = TableIdent::new(Namespace::parse(&ns), "c");
    assert!(!catalog.table_exists(&c).await.expect("exists"));
    ok(&ctx, &format!("CREATE TABLE lake.{ns}.c (x BIGINT)")).await;
    ok(&ctx, &format!("INSERT INTO lake.{ns}.c VALUES (7)")).await;
    {
        let (lock, cvar) = &*go;
        *lock.lock().expect("lock") = true;
        cvar.notify_all();
    }
    let e = ctas
        .await
        .expect("join")
        .expect_err("the CTAS lost the race");
    assert!(e.contains(&format!("table '{ns}.c' already exists")), "{e}");
    let rows = ok(&ctx, &format!("SELECT x FROM lake.{ns}.c")).await;
    assert!(rows.contains("| 7 |"), "{rows}");
    assert_eq!(
        catalog
            .load_table(&c)
            .await
            .expect("load")
            .metadata()
            .snapshots
            .len(),
        1
    );
}

/// A catalog that cannot stage a create (the `Catalog` trait's default, as a user's own
/// catalog or a REST server refusing `stage-create` has it): every other call goes to
/// `inner`, a SQLite catalog.
struct Unstaging {
    inner: Arc<dyn Catalog>,
}

impl std::fmt::Debug for Unstaging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unstaging").finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Catalog for Unstaging {
    fn name(&self) -> &str {
        "unstaging"
    }
    async fn list_namespaces(&self) -> icefloe::Result<Vec<Namespace>> {
        self.inner.list_namespaces().await
    }
    async fn namespace_exists(&self, namespace: &Namespace) -> icefloe::Result<bool> {
        self.inner.namespace_exists(namespace).await
    }
    async fn list_tables(&self, namespace: &Namespace) -> icefloe::Result<Vec<TableIdent>> {
        self.inner.list_tables(namespace).await
    }
    async fn metadata_location(&self, ident: &TableIdent) -> icefloe::Result<String> {
        self.inner.metadata_location(ident).await
    }
    async fn load_table(&self, ident: &TableIdent) -> icefloe::Result<icefloe::Table> {
        self.inner.load_table(ident).await
    }
    async fn table_exists(&self, ident: &TableIdent) -> icefloe::Result<bool> {
        self.inner.table_exists(ident).await
    }
    async fn create_table(
        &self,
        ident: &TableIdent,
        creation: icefloe::catalog::TableCreation,
    ) -> icefloe::Result<icefloe::Table> {
        self.inner.create_table(ident, creation).await
    }
    async fn commit_table(
        &self,
        ident: &TableIdent,
        commit: &icefloe::spec::TableCommit,
    ) -> icefloe::Result<icefloe::Table> {
        self.inner.commit_table(ident, commit).await
    }
    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> icefloe::Result<()> {
        self.inner.drop_table(ident, purge).await
    }
}

/// On a catalog that cannot stage a create, CTAS is create, then insert (README, "Writing
/// tables"): two metadata files (the create's, then the insert's one `append`
/// snapshot), `CREATE OR REPLACE … AS` of a missing table the same, and a query that fails drops the table it created and its
/// files, leaving the name free. PyIceberg reads the rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctas_on_a_catalog_that_cannot_stage_creates_then_inserts() {
    let lake = lake().await;
    let unstaging: Arc<dyn Catalog> = Arc::new(Unstaging {
        inner: Arc::clone(&lake.catalog),
    });
    crate::catalog::attach(&lake.ctx, "plain", unstaging).await;
    for (name, verb) in [
        ("created", "CREATE TABLE"),
        ("or_replaced", "CREATE OR REPLACE TABLE"),
    ] {
        ok(
            &lake.ctx,
            &format!(
                "{verb} plain.ns.{name} PARTITIONED BY (k) AS SELECT value AS id, \
                 CAST(value % 3 AS INT) AS k FROM generate_series(1, 30) WHERE value > 10"
            ),
        )
        .await;
        let table = lake
            .catalog
            .load_table(&TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("load");
        let m = table.metadata();
        // the create's metadata file, then the insert's
        assert_eq!(m.metadata_log.len(), 1, "{name}: {:?}", m.metadata_log);
        let operations: Vec<_> = m
            .snapshots
            .iter()
            .map(|s| s.summary.get("operation").cloned().unwrap_or_default())
            .collect();
        // `CREATE OR REPLACE` writes its rows as a replacement of the empty table it
        // created: nothing to replace, so an `append` too
        assert_eq!(operations, ["append"], "{name}");
        let sums = ok(
            &lake.ctx,
            &format!("SELECT count(*) AS n, sum(id) AS s FROM plain.ns.{name}"),
        )
        .await;
        // 11 + … + 30 = 410
        assert!(sums.contains("| 20 | 410 |"), "{name}: {sums}");
        if python().is_some() {
            let read = pyiceberg_read(&lake.db, &lake.warehouse, &format!("ns.{name}"));
            assert_eq!(read["count"], 20, "{name}: {read}");
        }
    }
    let e = run(
        &lake.ctx,
        "CREATE TABLE plain.ns.failed AS SELECT value AS id, 10 / (value - 9000) AS q \
         FROM generate_series(1, 10000)",
    )
    .await
    .expect_err("divide by zero");
    assert!(e.contains("Divide by zero"), "{e}");
    assert!(e.contains("inserting the query's rows"), "{e}");
    let ident = TableIdent::parse("ns.failed");
    assert!(!lake.catalog.table_exists(&ident).await.expect("exists"));
    let dir = lake.warehouse.join("ns").join("failed");
    assert_eq!(files_under(&dir), Vec::<String>::new());
    ok(&lake.ctx, "CREATE TABLE plain.ns.failed AS SELECT 1 AS id").await;
    let rows = ok(&lake.ctx, "SELECT id FROM plain.ns.failed").await;
    assert!(rows.contains("| 1  |"), "{rows}");
}
