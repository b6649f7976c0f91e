//! Concurrent writers on one table: several `SessionContext`s, each over its own catalog
//! instance (as separate processes would be), commit at once through the SQLite catalog,
//! the filesystem catalog and (feature `cloud`) the REST catalog on SeaweedFS S3.
//!
//! The races are real (tasks released together by a barrier), so which writer wins is
//! not fixed: the tests assert invariants that hold on every interleaving. Every
//! statement that returned success is in the table exactly once, every failed one left
//! nothing (no row, no file), the snapshot chain is linear with strictly increasing
//! sequence numbers, each snapshot's summary totals equal the files and rows it holds,
//! v3 row-id ranges do not overlap, a data file has at most one deletion vector, and
//! PyIceberg and DuckDB read the same rows.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::SessionContext;
use icefloe::catalog::{Catalog, FileSystemCatalog, Namespace, SqlCatalog, TableIdent};
use icefloe::maintenance::{remove_orphan_files, RemoveOrphanFiles};
use icefloe::scan::TableScan;
use icefloe::spec::DataContentType;
use icefloe::{ErrorKind, Table};
use tokio::sync::Barrier;

use crate::catalog::{attach, context};
use crate::interop::{duckdb_read, pyiceberg_read, python};

/// Retries enough for every racing writer to land (and quick waits).
pub(crate) const PATIENT: &str = "'commit.retry.num-retries'='40', \
     'commit.retry.min-wait-ms'='5', 'commit.retry.max-wait-ms'='80'";

/// Where the racing writers' catalogs live.
pub(crate) enum Store {
    /// A SQLite catalog file.
    Sql(PathBuf),
    /// A filesystem (Hadoop) catalog.
    Fs,
    /// The REST catalog of the SeaweedFS test server, configured by a properties file
    /// in the temp dir.
    #[cfg(feature = "cloud")]
    Rest(&'static crate::seaweed::Seaweed),
}

/// A warehouse in a temp dir and a way to open catalog instances over it, each new.
pub(crate) struct Lake {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) warehouse: PathBuf,
    pub(crate) store: Store,
    /// The namespace tables go into.
    pub(crate) ns: String,
}

impl Lake {
    pub(crate) async fn sql() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("catalog.db");
        let lake = Self::at(dir, Store::Sql(db), "ns".to_string());
        lake.create_namespace().await;
        lake
    }

    pub(crate) async fn fs() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let lake = Self::at(dir, Store::Fs, "ns".to_string());
        lake.create_namespace().await;
        lake
    }

    #[cfg(feature = "cloud")]
    pub(crate) async fn rest(server: &'static crate::seaweed::Seaweed) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let ns = crate::seaweed::unique_namespace("race");
        let lake = Self::at(dir, Store::Rest(server), ns);
        lake.create_namespace().await;
        lake
    }

    fn at(dir: tempfile::TempDir, store: Store, ns: String) -> Self {
        let warehouse = dir.path().join("warehouse");
        std::fs::create_dir_all(&warehouse).expect("warehouse");
        Self {
            dir,
            warehouse,
            store,
            ns,
        }
    }

    async fn create_namespace(&self) {
        self.catalog()
            .create_namespace(&Namespace::parse(&self.ns), &HashMap::new())
            .await
            .expect("namespace");
    }

    /// A new catalog instance (its own connection, nothing cached).
    pub(crate) fn catalog(&self) -> Arc<dyn Catalog> {
        let warehouse = self.warehouse.to_string_lossy().to_string();
        match &self.store {
            Store::Sql(db) => Arc::new(
                SqlCatalog::open_or_create("default", db)
                    .expect("catalog")
                    .with_warehouse(&warehouse)
                    .expect("warehouse"),
            ),
            Store::Fs => Arc::new(FileSystemCatalog::new("fs", &warehouse).expect("catalog")),
            #[cfg(feature = "cloud")]
            Store::Rest(server) => crate::rest_s3::rest_catalog(server, self.dir.path()),
        }
    }

    /// A new session over a new catalog instance, attached as `ice`.
    pub(crate) async fn session(&self) -> SessionContext {
        let config =
            icefloe::datafusion::register_iceberg_options(context().state().config().clone());
        let ctx = SessionContext::new_with_config(config);
        icefloe::datafusion::register_iceberg_functions(&ctx);
        attach(&ctx, "ice", self.catalog()).await;
        ctx
    }

    /// `ice.<ns>.<name>`.
    pub(crate) fn sql_name(&self, name: &str) -> String {
        format!("ice.{}.{name}", self.ns)
    }

    pub(crate) fn ident(&self, name: &str) -> TableIdent {
        TableIdent::new(Namespace::parse(&self.ns), name)
    }

    pub(crate) async fn load(&self, name: &str) -> Table {
        self.catalog()
            .load_table(&self.ident(name))
            .await
            .expect("load")
    }
}

/// Run `statement` through `sql::execute` and collect it.
pub(crate) async fn exec(
    ctx: &SessionContext,
    statement: &str,
) -> Result<Vec<RecordBatch>, icefloe::Error> {
    let df = icefloe::datafusion::sql::execute(ctx, statement).await?;
    df.collect().await.map_err(icefloe::Error::from)
}

pub(crate) async fn ok(ctx: &SessionContext, statement: &str) -> Vec<RecordBatch> {
    exec(ctx, statement)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"))
}

/// The first column of `query`'s rows as i64s (NULL as `i64::MIN`), in order.
pub(crate) async fn longs(ctx: &SessionContext, query: &str) -> Vec<i64> {
    let mut out = vec![];
    for b in ok(ctx, query).await {
        let col = datafusion::arrow::compute::cast(
            b.column(0),
            &datafusion::arrow::datatypes::DataType::Int64,
        )
        .expect("cast");
        let col = col.as_primitive::<Int64Type>();
        for i in 0..col.len() {
            out.push(if col.is_null(i) {
                i64::MIN
            } else {
                col.value(i)
            });
        }
    }
    out
}

/// Whether a failed concurrent statement failed as a lost race may: a conflict check
/// (`ValidationFailed`) or retries run out (`CommitConflict`, saying so).
pub(crate) fn lost_race(statement: &str, e: &icefloe::Error) {
    match e.kind() {
        ErrorKind::ValidationFailed => {}
        ErrorKind::CommitConflict => assert!(
            e.to_string().contains("gave up after"),
            "{statement}: a conflict that does not say the retries ran out: {e}"
        ),
        _ => panic!("{statement}: not a lost race: {e:?}"),
    }
}

/// Run `statements[i]` on `sessions[i]`, all released at once; the results in order.
pub(crate) async fn race(
    sessions: &[Arc<SessionContext>],
    statements: &[String],
) -> Vec<Result<Vec<RecordBatch>, icefloe::Error>> {
    let barrier = Arc::new(Barrier::new(statements.len()));
    let mut tasks = vec![];
    for (i, statement) in statements.iter().enumerate() {
        let ctx = Arc::clone(&sessions[i % sessions.len()]);
        let barrier = Arc::clone(&barrier);
        let statement = statement.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            exec(&ctx, &statement).await
        }));
    }
    let mut out = vec![];
    for t in tasks {
        out.push(t.await.expect("writer task"));
    }
    out
}

pub(crate) async fn sessions(lake: &Lake, n: usize) -> Vec<Arc<SessionContext>> {
    let mut out = vec![];
    for _ in 0..n {
        out.push(Arc::new(lake.session().await));
    }
    out
}

/// The invariants of a table's history after racing commits to `main` (and branches,
/// when `linear` is false: then only each branch's own chain is checked):
/// - the snapshots form one chain from `main`'s head (`linear`), sequence numbers
///   strictly increasing along every ref's chain, the table's last sequence number the
///   highest;
/// - every snapshot's summary totals equal its live files and rows;
/// - at most one deletion vector per data file in every snapshot;
/// - v3: the snapshots' row-id ranges do not overlap and end at `next-row-id`.
pub(crate) async fn check_history(table: &Table, linear: bool) {
    let m = table.metadata();
    let mut on_chains = BTreeSet::new();
    for (name, r) in &m.refs {
        let mut chain = vec![];
        let mut cursor = m.snapshot_by_id(r.snapshot_id);
        while let Some(s) = cursor {
            chain.push(s);
            cursor = s.parent_snapshot_id.and_then(|p| m.snapshot_by_id(p));
        }
        for w in chain.windows(2) {
            assert!(
                w[0].sequence_number > w[1].sequence_number,
                "ref {name}: snapshot {} (sequence number {}) after {} ({})",
                w[0].snapshot_id,
                w[0].sequence_number,
                w[1].snapshot_id,
                w[1].sequence_number
            );
        }
        on_chains.extend(chain.iter().map(|s| s.snapshot_id));
    }
    if linear {
        let ids: BTreeSet<i64> = m.snapshots.iter().map(|s| s.snapshot_id).collect();
        assert_eq!(ids, on_chains, "snapshots off main's chain");
    }
    let max_seq = m.snapshots.iter().map(|s| s.sequence_number).max();
    assert_eq!(Some(m.last_sequence_number), max_seq.or(Some(0)));
    let mut seqs: Vec<i64> = m.snapshots.iter().map(|s| s.sequence_number).collect();
    seqs.sort();
    seqs.dedup();
    assert_eq!(
        seqs.len(),
        m.snapshots.len(),
        "two snapshots share a sequence number"
    );

    for s in &m.snapshots {
        let plan = TableScan::new(table.clone(), Some(s.clone()))
            .plan_files()
            .await
            .expect("plan");
        let data: Vec<_> = plan.tasks.iter().map(|t| t.data_file()).collect();
        let deletes: Vec<_> = plan.delete_entries.iter().map(|e| &e.data_file).collect();
        let total = |k: &str| s.summary.get(k).map(|v| v.parse::<i64>().expect("number"));
        let expected = [
            ("total-data-files", data.len() as i64),
            ("total-records", data.iter().map(|f| f.record_count).sum()),
            ("total-delete-files", deletes.len() as i64),
            (
                "total-position-deletes",
                deletes
                    .iter()
                    .filter(|f| f.content == DataContentType::PositionDeletes)
                    .map(|f| f.record_count)
                    .sum(),
            ),
            (
                "total-equality-deletes",
                deletes
                    .iter()
                    .filter(|f| f.content == DataContentType::EqualityDeletes)
                    .map(|f| f.record_count)
                    .sum(),
            ),
        ];
        for (k, v) in expected {
            assert_eq!(
                total(k),
                Some(v),
                "snapshot {} ({:?}): {k}",
                s.snapshot_id,
                s.summary.get("operation")
            );
        }
        let mut dvs: BTreeMap<&str, usize> = BTreeMap::new();
        for f in &deletes {
            if icefloe::delete::is_deletion_vector(f) {
                let target = f
                    .referenced_data_file
                    .as_deref()
                    .expect("a DV names its file");
                *dvs.entry(target).or_default() += 1;
            }
        }
        if let Some((file, n)) = dvs.iter().find(|(_, n)| **n > 1) {
            panic!(
                "snapshot {}: {n} deletion vectors for data file {file}",
                s.snapshot_id
            );
        }
    }
    if m.format_version as i32 >= 3 {
        // snapshots committed before an upgrade to v3 have no row ids
        let mut ranges: Vec<(i64, i64)> = m
            .snapshots
            .iter()
            .filter_map(|s| {
                let first = s.first_row_id?;
                Some((first, first + s.added_rows.expect("v3 snapshot added-rows")))
            })
            .collect();
        ranges.sort();
        for w in ranges.windows(2) {
            assert!(w[0].1 <= w[1].0, "row-id ranges overlap: {ranges:?}");
        }
        if let Some(last) = ranges.last() {
            assert_eq!(m.next_row_id, Some(last.1), "next-row-id");
        }
    }
}

/// A catalog of `table` alone, as loaded (with its store's credentials), named
/// `unreferenced.t`.
#[derive(Debug)]
struct OneTable(Table);

impl OneTable {
    fn ident() -> TableIdent {
        TableIdent::parse("unreferenced.t")
    }
}

#[async_trait::async_trait]
impl Catalog for OneTable {
    fn name(&self) -> &str {
        "unreferenced"
    }

    async fn list_namespaces(&self) -> icefloe::Result<Vec<Namespace>> {
        Ok(vec![Self::ident().namespace])
    }

    async fn list_tables(&self, _: &Namespace) -> icefloe::Result<Vec<TableIdent>> {
        Ok(vec![Self::ident()])
    }

    async fn load_table(&self, _: &TableIdent) -> icefloe::Result<Table> {
        Ok(self.0.clone())
    }
}

/// Files under the table's location that nothing in its metadata references (what
/// failed writers would leave behind).
pub(crate) async fn unreferenced(table: &Table) -> Vec<String> {
    let catalog = OneTable(table.clone());
    remove_orphan_files(
        &catalog,
        &OneTable::ident(),
        &RemoveOrphanFiles::new()
            .older_than(chrono::Utc::now().timestamp_millis() + 60_000)
            .allow_recent(true)
            .dry_run(true),
    )
    .await
    .expect("list unreferenced files")
}

/// PyIceberg (SQLite catalogs) and DuckDB read `name`'s current snapshot with the ids
/// `expected` (sorted) in column `id`.
pub(crate) fn engines_read(lake: &Lake, table: &Table, name: &str, expected: &[i64]) {
    if python().is_none() {
        return;
    }
    let ids = |v: &serde_json::Value| -> Vec<i64> {
        let mut ids: Vec<i64> = v["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| r["id"].as_i64().or_else(|| r[0].as_i64()).expect("id"))
            .collect();
        ids.sort();
        ids
    };
    let ident = format!("{}.{name}", lake.ns);
    match &lake.store {
        Store::Sql(db) => {
            let pyi = pyiceberg_read(db, &lake.warehouse, &ident);
            assert_eq!(ids(&pyi), expected, "PyIceberg");
        }
        Store::Fs => {}
        #[cfg(feature = "cloud")]
        Store::Rest(server) => {
            let pyi = crate::rest_s3::engines(server, &["pyiceberg-read", &ident]);
            assert_eq!(ids(&pyi), expected, "PyIceberg");
            let duck = crate::rest_s3::engines(server, &["duckdb-read", &ident]);
            assert_eq!(ids(&duck), expected, "DuckDB");
            return;
        }
    }
    let duck = duckdb_read(table.metadata_location());
    assert_eq!(ids(&duck), expected, "DuckDB");
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort();
    v
}

/// `writers` sessions insert at once, `rounds` times; each INSERT three new ids.
/// Returns the ids of the INSERTs that succeeded; failures must be lost races.
async fn insert_rounds(
    lake: &Lake,
    name: &str,
    writers: usize,
    rounds: usize,
    sessions: &[Arc<SessionContext>],
) -> Vec<i64> {
    let t = lake.sql_name(name);
    let mut landed = vec![];
    for round in 0..rounds {
        let batch: Vec<Vec<i64>> = (0..writers)
            .map(|w| {
                let base = 100_000 + (round * 100 + w) as i64 * 10;
                vec![base, base + 1, base + 2]
            })
            .collect();
        let statements: Vec<String> = batch
            .iter()
            .map(|ids| {
                format!(
                    "INSERT INTO {t} VALUES ({}, 'w'), ({}, 'w'), ({}, 'w')",
                    ids[0], ids[1], ids[2]
                )
            })
            .collect();
        for ((statement, ids), result) in statements
            .iter()
            .zip(&batch)
            .zip(race(sessions, &statements).await)
        {
            match result {
                Ok(_) => landed.extend(ids),
                Err(e) => lost_race(statement, &e),
            }
        }
    }
    sorted(landed)
}

/// Six sessions insert at once, three rounds, into a v2 and a v3 table with
/// `properties` (after a comma).
async fn inserts_land_once(lake: &Lake, what: &str, properties: &str) {
    for version in [2, 3] {
        let name = format!("ins_v{version}");
        let t = lake.sql_name(&name);
        let setup = lake.session().await;
        ok(
            &setup,
            &format!(
                "CREATE TABLE {t} (id BIGINT, s STRING) TBLPROPERTIES \
                 ('format-version'='{version}', {PATIENT}{properties})"
            ),
        )
        .await;
        let writers = sessions(lake, 6).await;
        let landed = insert_rounds(lake, &name, 6, 3, &writers).await;
        assert_eq!(
            landed.len(),
            6 * 3 * 3,
            "{what} v{version}: every INSERT lands"
        );
        let fresh = lake.session().await;
        let ids = longs(&fresh, &format!("SELECT id FROM {t} ORDER BY id")).await;
        assert_eq!(ids, landed, "{what} v{version}: each landed row once");
        let table = lake.load(&name).await;
        assert_eq!(table.metadata().snapshots.len(), 18, "{what} v{version}");
        check_history(&table, true).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{what}");
        if version == 3 {
            // every row its own id
            let row_ids = longs(
                &fresh,
                &format!("SELECT count(DISTINCT _row_id) FROM {t} WHERE _row_id IS NOT NULL"),
            )
            .await;
            assert_eq!(row_ids, vec![landed.len() as i64], "{what}: row ids");
        }
        engines_read(lake, &table, &name, &landed);
    }
}

/// Six sessions insert at once, three rounds, v2 and v3: with retries enough, every
/// INSERT lands exactly once in a linear history whose totals add up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_land_once_sql_catalog() {
    inserts_land_once(&Lake::sql().await, "sql", "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_land_once_filesystem_catalog() {
    // old metadata files deleted by each commit while the others load and retry
    inserts_land_once(
        &Lake::fs().await,
        "filesystem",
        ", 'write.metadata.delete-after-commit.enabled'='true', \
         'write.metadata.previous-versions-max'='2'",
    )
    .await;
}

#[cfg(feature = "cloud")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_land_once_rest_catalog() {
    let Some(server) = crate::seaweed::server() else {
        return;
    };
    inserts_land_once(&Lake::rest(server).await, "rest", "").await;
}

/// Without retries, racing INSERTs lose: a loser says its retries ran out and leaves
/// no row and no file; the winners' rows are there once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhausted_retries_leave_nothing() {
    for lake in [Lake::sql().await, Lake::fs().await] {
        let name = "impatient";
        let t = lake.sql_name(name);
        ok(
            &lake.session().await,
            &format!(
                "CREATE TABLE {t} (id BIGINT, s STRING) TBLPROPERTIES \
                 ('commit.retry.num-retries'='0')"
            ),
        )
        .await;
        let writers = sessions(&lake, 6).await;
        let landed = insert_rounds(&lake, name, 6, 3, &writers).await;
        assert!(!landed.is_empty());
        let ids = longs(
            &lake.session().await,
            &format!("SELECT id FROM {t} ORDER BY id"),
        )
        .await;
        assert_eq!(ids, landed);
        let table = lake.load(name).await;
        check_history(&table, true).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new());
    }
}

/// A model of a table `(id BIGINT, k INT, d BIGINT)`: id → (k, d).
type Model = BTreeMap<i64, (i64, i64)>;

/// The table's rows `id, k, d` (ordered by id) as a model.
pub(crate) async fn rows_of(ctx: &SessionContext, t: &str) -> Model {
    let ids = longs(ctx, &format!("SELECT id FROM {t} ORDER BY id")).await;
    let ks = longs(ctx, &format!("SELECT k FROM {t} ORDER BY id")).await;
    let ds = longs(ctx, &format!("SELECT d FROM {t} ORDER BY id")).await;
    let mut out = Model::new();
    for ((id, k), d) in ids.into_iter().zip(ks).zip(ds) {
        assert!(out.insert(id, (k, d)).is_none(), "{t}: id {id} twice");
    }
    out
}

fn in_list(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn values(ids: &[i64]) -> String {
    ids.iter()
        .map(|id| format!("({id}, {}, 0)", id % 2))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One racing row-level change and what it does to the model when it commits.
enum Change {
    Delete(Vec<i64>),
    Update(Vec<i64>),
    Insert(Vec<i64>),
    /// `MERGE`: matched ids get `d + 100`, the others are inserted.
    Merge(Vec<i64>, Vec<i64>),
}

impl Change {
    fn statement(&self, t: &str) -> String {
        match self {
            Change::Delete(ids) => format!("DELETE FROM {t} WHERE id IN ({})", in_list(ids)),
            Change::Update(ids) => {
                format!("UPDATE {t} SET d = d + 1 WHERE id IN ({})", in_list(ids))
            }
            Change::Insert(ids) => format!("INSERT INTO {t} VALUES {}", values(ids)),
            Change::Merge(matched, new) => {
                let all: Vec<i64> = matched.iter().chain(new).copied().collect();
                format!(
                    "MERGE INTO {t} AS tgt USING (SELECT * FROM (VALUES {}) AS v(id, k, d)) s \
                     ON tgt.id = s.id WHEN MATCHED THEN UPDATE SET d = tgt.d + 100 \
                     WHEN NOT MATCHED THEN INSERT (id, k, d) VALUES (s.id, s.k, s.d)",
                    values(&all)
                )
            }
        }
    }

    fn apply(&self, model: &mut Model) {
        match self {
            Change::Delete(ids) => ids.iter().for_each(|id| {
                model.remove(id);
            }),
            Change::Update(ids) => ids.iter().for_each(|id| {
                if let Some(r) = model.get_mut(id) {
                    r.1 += 1;
                }
            }),
            Change::Insert(ids) => ids.iter().for_each(|id| {
                model.insert(*id, (id % 2, 0));
            }),
            Change::Merge(matched, new) => {
                for id in matched {
                    if let Some(r) = model.get_mut(id) {
                        r.1 += 100;
                    }
                }
                for id in new {
                    model.insert(*id, (id % 2, 0));
                }
            }
        }
    }
}

/// `CREATE TABLE t (id BIGINT, k BIGINT, d BIGINT)` with `properties` (after a comma)
/// and four INSERTs of ten rows (ids 1–40, `k = id % 2`, `d = 0`); returns the model.
pub(crate) async fn seeded(
    ctx: &SessionContext,
    t: &str,
    partitioning: &str,
    properties: &str,
) -> Model {
    ok(
        ctx,
        &format!(
            "CREATE TABLE {t} (id BIGINT, k BIGINT, d BIGINT) {partitioning} TBLPROPERTIES \
             ({PATIENT}{properties})"
        ),
    )
    .await;
    let mut model = Model::new();
    for file in 0..4 {
        let ids: Vec<i64> = (1..=10).map(|i| file * 10 + i).collect();
        let insert = Change::Insert(ids);
        ok(ctx, &insert.statement(t)).await;
        insert.apply(&mut model);
    }
    model
}

/// Race `changes` on `t` (one session each); apply the committed ones to `model` and
/// check the table holds it. Returns how many committed.
async fn race_changes(
    lake: &Lake,
    writers: &[Arc<SessionContext>],
    t: &str,
    changes: &[Change],
    model: &mut Model,
    what: &str,
) -> usize {
    let statements: Vec<String> = changes.iter().map(|c| c.statement(t)).collect();
    let results = race(writers, &statements).await;
    let mut landed = 0;
    for ((change, statement), result) in changes.iter().zip(&statements).zip(results) {
        match result {
            Ok(_) => {
                landed += 1;
                change.apply(model);
            }
            Err(e) => lost_race(statement, &e),
        }
    }
    let fresh = lake.session().await;
    assert_eq!(&rows_of(&fresh, t).await, model, "{what}");
    landed
}

/// The racing row-level changes of round `r`: two DELETEs sharing a data file, an
/// UPDATE, two INSERTs and a MERGE, of disjoint rows.
fn dml_round(r: i64) -> Vec<Change> {
    vec![
        Change::Delete(vec![3 + r, 13 + r]),
        Change::Delete(vec![7 + r, 33 + r]),
        Change::Update(vec![25 + r, 36 + r]),
        Change::Insert(vec![1000 + 10 * r, 1001 + 10 * r]),
        Change::Insert(vec![1100 + 10 * r]),
        Change::Merge(vec![18 + r], vec![2000 + r]),
    ]
}

async fn dml_race(
    lake: &Lake,
    name: &str,
    version: u8,
    mode: &str,
    level: &str,
    partitioned: bool,
    engines: bool,
) {
    let writers = sessions(lake, 6).await;
    let t = lake.sql_name(name);
    let setup = lake.session().await;
    let mut model = seeded(
        &setup,
        &t,
        if partitioned {
            "PARTITIONED BY (k)"
        } else {
            ""
        },
        &format!(
            ", 'format-version'='{version}', 'write.delete.mode'='{mode}', \
             'write.update.mode'='{mode}', 'write.merge.mode'='{mode}', \
             'write.delete.isolation-level'='{level}', \
             'write.update.isolation-level'='{level}', 'write.merge.isolation-level'='{level}'"
        ),
    )
    .await;
    for round in 0..2 {
        let what = format!("{name} (v{version}, {mode}, {level}) round {round}");
        let landed = race_changes(lake, &writers, &t, &dml_round(round), &mut model, &what).await;
        assert!(landed > 0, "{what}: nothing landed");
    }
    let table = lake.load(name).await;
    check_history(&table, true).await;
    assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{name}");
    if engines {
        let ids: Vec<i64> = model.keys().copied().collect();
        engines_read(lake, &table, name, &ids);
    }
}

/// `DELETE`, `UPDATE`, `MERGE` and `INSERT`s of disjoint rows race on one table (v2
/// and v3, copy-on-write and merge-on-read, both isolation levels, partitioned and
/// not), two rounds. Which statements lose depends on the interleaving (two changes
/// of one data file: the later one fails, as Java's `validateNoConflictingDeleteFiles`
/// / `validateDataFilesExist` fail it); whatever the outcome, the rows are the initial
/// ones with exactly the committed statements applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_level_changes_race_inserts_and_each_other() {
    let lake = Lake::sql().await;
    let mut n = 0;
    for version in [2, 3] {
        for mode in ["copy-on-write", "merge-on-read"] {
            for level in ["serializable", "snapshot"] {
                n += 1;
                // PyIceberg and DuckDB read the partitioned merge-on-read table of each
                // version (the subprocesses are most of this test's time; the other
                // tests of this module have them read copy-on-write tables)
                let partitioned = n % 2 == 0;
                let engines = partitioned && mode == "merge-on-read";
                dml_race(
                    &lake,
                    &format!("dml_{n}"),
                    version,
                    mode,
                    level,
                    partitioned,
                    engines,
                )
                .await;
            }
        }
    }
}

/// The same races through the REST catalog on S3 and the filesystem catalog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_level_changes_race_on_the_filesystem_catalog() {
    let lake = Lake::fs().await;
    dml_race(
        &lake,
        "dml_cow",
        2,
        "copy-on-write",
        "serializable",
        false,
        true,
    )
    .await;
    dml_race(&lake, "dml_mor", 3, "merge-on-read", "snapshot", true, true).await;
}

#[cfg(feature = "cloud")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_level_changes_race_on_the_rest_catalog() {
    let Some(server) = crate::seaweed::server() else {
        return;
    };
    let lake = Lake::rest(server).await;
    // v2 merge-on-read and v3 copy-on-write: SeaweedFS's table buckets refuse objects
    // that are not Parquet, Avro or JSON (a v3 deletion vector's `.puffin`: 403)
    dml_race(
        &lake,
        "dml_v2",
        2,
        "merge-on-read",
        "serializable",
        false,
        true,
    )
    .await;
    dml_race(&lake, "dml_v3", 3, "copy-on-write", "snapshot", true, true).await;
}

/// Run `call` (a `CALL`) racing `changes`; the call may lose (a conflict check), the
/// rows must be the model's either way.
async fn race_call(
    lake: &Lake,
    writers: &[Arc<SessionContext>],
    t: &str,
    call: &str,
    changes: &[Change],
    model: &mut Model,
    what: &str,
) {
    let mut statements = vec![call.to_string()];
    statements.extend(changes.iter().map(|c| c.statement(t)));
    let results = race(writers, &statements).await;
    let mut results = results.into_iter();
    if let Some(Err(e)) = results.next() {
        lost_race(call, &e);
    }
    for ((change, statement), result) in changes.iter().zip(&statements[1..]).zip(results) {
        match result {
            Ok(_) => change.apply(model),
            Err(e) => lost_race(statement, &e),
        }
    }
    let fresh = lake.session().await;
    assert_eq!(&rows_of(&fresh, t).await, model, "{what}: {call}");
}

/// Compaction, delete-file compaction, manifest rewrites and snapshot expiry race
/// row-level changes and INSERTs (v2 and v3 merge-on-read, v2 copy-on-write): a
/// maintenance call commits or fails cleanly, and never loses a row or brings back a
/// deleted one (Java fails a rewrite whose files got new deletes meanwhile).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_races_writes() {
    let lake = Lake::sql().await;
    let writers = sessions(&lake, 4).await;
    for (name, properties) in [
        ("m_v2_mor", ", 'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'"),
        ("m_v3_mor", ", 'format-version'='3', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'"),
        ("m_v2_cow", ", 'format-version'='2'"),
    ] {
        let t = lake.sql_name(name);
        let setup = lake.session().await;
        let mut model = seeded(&setup, &t, "PARTITIONED BY (k)", properties).await;
        // delete files to compact
        for ids in [[1, 11], [21, 31]] {
            let delete = Change::Delete(ids.to_vec());
            ok(&setup, &delete.statement(&t)).await;
            delete.apply(&mut model);
        }
        let table = format!("'{}.{name}'", lake.ns);
        let rounds: Vec<(String, Vec<Change>)> = vec![
            (
                format!("CALL ice.system.rewrite_data_files(table => {table}, options => map('min-input-files', '2'))"),
                vec![Change::Delete(vec![2, 12]), Change::Insert(vec![500]), Change::Update(vec![22])],
            ),
            (
                format!("CALL ice.system.rewrite_position_delete_files(table => {table}, options => map('rewrite-all', 'true'))"),
                vec![Change::Delete(vec![4, 14]), Change::Insert(vec![501]), Change::Update(vec![24])],
            ),
            (
                format!("CALL ice.system.rewrite_manifests({table})"),
                vec![Change::Delete(vec![5]), Change::Insert(vec![502]), Change::Update(vec![26])],
            ),
            (
                format!("CALL ice.system.expire_snapshots(table => {table}, older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 2)"),
                vec![Change::Delete(vec![6, 16]), Change::Insert(vec![503]), Change::Update(vec![28])],
            ),
            (
                // the default older_than (3 days ago) spares the files of commits in flight
                format!("CALL ice.system.remove_orphan_files(table => {table})"),
                vec![Change::Delete(vec![9]), Change::Insert(vec![505]), Change::Update(vec![30])],
            ),
            (
                format!("CALL ice.system.rewrite_data_files(table => {table}, options => map('min-input-files', '2', 'rewrite-all', 'true'))"),
                vec![Change::Delete(vec![8, 17]), Change::Insert(vec![504]), Change::Update(vec![29])],
            ),
        ];
        for (i, (call, changes)) in rounds.iter().enumerate() {
            race_call(&lake, &writers, &t, call, changes, &mut model, &format!("{name} round {i}")).await;
        }
        let table = lake.load(name).await;
        check_history(&table, true).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{name}");
        let ids: Vec<i64> = model.keys().copied().collect();
        engines_read(&lake, &table, name, &ids);
    }
}

/// Schema changes and partition evolution race INSERTs (with column lists, valid before
/// and after the change): an INSERT committed under the new schema or spec reads
/// correctly (its files keep the spec they were written for), or fails cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_and_spec_changes_race_inserts() {
    let lake = Lake::sql().await;
    let writers = sessions(&lake, 4).await;
    for version in [2, 3] {
        let name = format!("evolve_v{version}");
        let t = lake.sql_name(&name);
        let setup = lake.session().await;
        let mut model = seeded(&setup, &t, "", &format!(", 'format-version'='{version}'")).await;
        let mut next = 3000;
        let alters = [
            format!("ALTER TABLE {t} ADD COLUMN x BIGINT"),
            format!("ALTER TABLE {t} ADD PARTITION FIELD k"),
            format!("ALTER TABLE {t} RENAME COLUMN x TO y"),
            format!("ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id)"),
            format!("ALTER TABLE {t} DROP PARTITION FIELD k"),
            format!("ALTER TABLE {t} DROP COLUMN y"),
        ];
        for (round, alter) in alters.iter().enumerate() {
            let mut statements = vec![alter.clone()];
            let mut inserted = vec![];
            for _ in 0..3 {
                next += 1;
                inserted.push(next);
                statements.push(format!(
                    "INSERT INTO {t} (id, k, d) VALUES ({next}, {}, 0)",
                    next % 2
                ));
            }
            let results = race(&writers, &statements).await;
            let what = format!("{name} round {round}: {alter}");
            for ((statement, result), id) in statements
                .iter()
                .zip(results)
                .zip(std::iter::once(None).chain(inserted.iter().map(Some)))
            {
                match (result, id) {
                    (Ok(_), Some(id)) => {
                        model.insert(*id, (id % 2, 0));
                    }
                    (Ok(_), None) => {}
                    (Err(e), None) => panic!("{what}: the ALTER failed: {e}"),
                    (Err(e), Some(_)) => lost_race(statement, &e),
                }
            }
            let fresh = lake.session().await;
            assert_eq!(rows_of(&fresh, &t).await, model, "{what}");
            // partition pruning by every spec finds the rows of each
            let odd: Vec<i64> = model
                .iter()
                .filter(|(_, r)| r.0 == 1)
                .map(|(id, _)| *id)
                .collect();
            assert_eq!(
                longs(
                    &fresh,
                    &format!("SELECT id FROM {t} WHERE k = 1 ORDER BY id")
                )
                .await,
                odd,
                "{what}"
            );
        }
        let table = lake.load(&name).await;
        check_history(&table, true).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{name}");
        let ids: Vec<i64> = model.keys().copied().collect();
        engines_read(&lake, &table, &name, &ids);
    }
}

/// Writes to a branch race writes to `main` (and each other): each ref's rows are its
/// own model's, `main`'s untouched by the branch's statements and the other way round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn branch_writes_race_main() {
    let lake = Lake::sql().await;
    let writers = sessions(&lake, 6).await;
    for (name, mode) in [("br_cow", "copy-on-write"), ("br_mor", "merge-on-read")] {
        let t = lake.sql_name(name);
        let b = format!("{t}.branch_dev");
        let setup = lake.session().await;
        let mut main = seeded(
            &setup,
            &t,
            "",
            &format!(", 'format-version'='3', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}'"),
        )
        .await;
        ok(&setup, &format!("ALTER TABLE {t} CREATE BRANCH dev")).await;
        let mut dev = main.clone();
        for r in 0..2i64 {
            let changes = [
                (true, Change::Delete(vec![3 + r, 13 + r])),
                (false, Change::Delete(vec![3 + r, 13 + r])),
                (true, Change::Insert(vec![1000 + r])),
                (false, Change::Insert(vec![1000 + r, 5000 + r])),
                (false, Change::Update(vec![25 + r])),
                (true, Change::Update(vec![25 + r, 26 + r])),
            ];
            let statements: Vec<String> = changes
                .iter()
                .map(|(on_main, c)| c.statement(if *on_main { &t } else { &b }))
                .collect();
            for (((on_main, change), statement), result) in changes
                .iter()
                .zip(&statements)
                .zip(race(&writers, &statements).await)
            {
                match result {
                    Ok(_) => change.apply(if *on_main { &mut main } else { &mut dev }),
                    Err(e) => lost_race(statement, &e),
                }
            }
            let fresh = lake.session().await;
            assert_eq!(rows_of(&fresh, &t).await, main, "{name} main round {r}");
            assert_eq!(rows_of(&fresh, &b).await, dev, "{name} dev round {r}");
        }
        let table = lake.load(name).await;
        check_history(&table, false).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{name}");
    }
}

/// An INSERT planned under partition spec 0 commits after another writer made spec 1
/// the default and an `expire_snapshots(clean_expired_metadata => true)` removed spec 0
/// as unused: the INSERT's files were written for a spec the table no longer has.
/// Committed, they made every read of the table fail ("manifest … names partition spec
/// 0 which the table does not have"); the INSERT fails instead, naming the spec, and
/// leaves nothing behind. With `main` moved meanwhile (the retry checks the spec) and
/// without (only the spec changed: the commit requires the default spec it wrote for).
/// Deterministic: the INSERT is planned, the other commits land, then it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_whose_spec_was_removed_meanwhile_fails() {
    for lake in [Lake::sql().await, Lake::fs().await] {
        for main_moved in [true, false] {
            let name = format!("spec_gone_{main_moved}");
            let t = lake.sql_name(&name);
            let writer = lake.session().await;
            ok(
                &writer,
                &format!("CREATE TABLE {t} (id BIGINT, k BIGINT, d BIGINT)"),
            )
            .await;
            let insert =
                crate::dml::planned(&writer, &format!("INSERT INTO {t} VALUES (1, 1, 0)")).await;
            let other = lake.session().await;
            ok(&other, &format!("ALTER TABLE {t} ADD PARTITION FIELD k")).await;
            let mut expected = vec![];
            if main_moved {
                ok(&other, &format!("INSERT INTO {t} VALUES (2, 0, 0)")).await;
                expected.push(2);
            }
            ok(
                &other,
                &format!(
                    "CALL ice.system.expire_snapshots(table => '{}.{name}', \
                     older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1, \
                     clean_expired_metadata => true)",
                    lake.ns
                ),
            )
            .await;
            let specs: Vec<i32> = lake
                .load(&name)
                .await
                .metadata()
                .partition_specs
                .iter()
                .map(|s| s.spec_id)
                .collect();
            assert_eq!(specs, vec![1], "spec 0 removed as unused");
            let e = crate::dml::execute_planned(&writer, insert)
                .await
                .expect_err("files of a removed spec are not committed");
            assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{e}");
            assert!(e.to_string().contains("partition spec 0"), "{e}");
            let fresh = lake.session().await;
            assert_eq!(
                longs(&fresh, &format!("SELECT id FROM {t} ORDER BY id")).await,
                expected
            );
            let table = lake.load(&name).await;
            check_history(&table, true).await;
            assert_eq!(unreferenced(&table).await, Vec::<String>::new());
        }
    }
}

/// A PyIceberg appender (a subprocess, through the REST catalog) races icefloe's
/// merge-on-read DELETEs and INSERTs on one table: PyIceberg's appends carry icefloe's
/// delete files forward, icefloe's deletes re-validate over PyIceberg's snapshots, and
/// every committed row and delete is there once.
#[cfg(feature = "cloud")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyiceberg_appends_race_icefloe_deletes() {
    let Some(server) = crate::seaweed::server() else {
        return;
    };
    let lake = Lake::rest(server).await;
    let name = "py";
    let t = lake.sql_name(name);
    let setup = lake.session().await;
    ok(
        &setup,
        &format!(
            "CREATE TABLE {t} (id BIGINT) TBLPROPERTIES ({PATIENT}, \
             'write.delete.mode'='merge-on-read')"
        ),
    )
    .await;
    let mut model: BTreeSet<i64> = BTreeSet::new();
    for file in 0..2 {
        let ids: Vec<i64> = (1..=10).map(|i| file * 10 + i).collect();
        ok(
            &setup,
            &format!(
                "INSERT INTO {t} VALUES ({})",
                ids.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join("), (")
            ),
        )
        .await;
        model.extend(ids);
    }
    const N: i64 = 8;
    let ident = format!("{}.{name}", lake.ns);
    let python = {
        let ident = ident.clone();
        std::thread::spawn(move || {
            crate::rest_s3::engines(
                server,
                &["pyiceberg-append", &ident, "1000", &N.to_string()],
            )
        })
    };
    let writers = sessions(&lake, 3).await;
    for r in 0..4i64 {
        let statements = vec![
            format!("DELETE FROM {t} WHERE id = {}", 1 + r),
            format!("DELETE FROM {t} WHERE id = {}", 11 + r),
            format!("INSERT INTO {t} VALUES ({})", 500 + r),
        ];
        for (i, result) in race(&writers, &statements).await.into_iter().enumerate() {
            match (i, result) {
                (0, Ok(_)) => assert!(model.remove(&(1 + r))),
                (1, Ok(_)) => assert!(model.remove(&(11 + r))),
                (_, Ok(_)) => assert!(model.insert(500 + r)),
                (_, Err(e)) => lost_race(&statements[i], &e),
            }
        }
    }
    let py = python.join().expect("PyIceberg appender");
    assert_eq!(py["appended"], N);
    model.extend(1000..1000 + N);
    let expected: Vec<i64> = model.into_iter().collect();
    let fresh = lake.session().await;
    assert_eq!(
        longs(&fresh, &format!("SELECT id FROM {t} ORDER BY id")).await,
        expected
    );
    let table = lake.load(name).await;
    check_history(&table, true).await;
    engines_read(&lake, &table, name, &expected);
}

/// Schema changes race each other: two `ADD COLUMN`s of one name (one lands, the other
/// fails naming the column or loses the race), other columns added and renamed at the
/// same time all land with distinct field ids, and the table takes and reads rows after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_changes_race_each_other() {
    let lake = Lake::sql().await;
    let writers = sessions(&lake, 5).await;
    let name = "schemas";
    let t = lake.sql_name(name);
    let setup = lake.session().await;
    let model = seeded(&setup, &t, "", "").await;
    let statements = vec![
        format!("ALTER TABLE {t} ADD COLUMN a BIGINT"),
        format!("ALTER TABLE {t} ADD COLUMN a BIGINT"),
        format!("ALTER TABLE {t} ADD COLUMN b STRING"),
        format!("ALTER TABLE {t} RENAME COLUMN d TO e"),
        format!("ALTER TABLE {t} SET TBLPROPERTIES ('x.one'='1')"),
    ];
    let results = race(&writers, &statements).await;
    let added_a = results[..2].iter().filter(|r| r.is_ok()).count();
    assert_eq!(added_a, 1, "exactly one ADD COLUMN a lands: {results:?}");
    for (statement, result) in statements.iter().zip(&results).skip(2) {
        if let Err(e) = result {
            lost_race(statement, e);
        }
    }
    for (statement, result) in statements.iter().zip(&results).take(2) {
        if let Err(e) = result {
            assert!(
                e.to_string().contains("'a'")
                    || e.kind() == ErrorKind::ValidationFailed
                    || e.kind() == ErrorKind::CommitConflict,
                "{statement}: {e}"
            );
        }
    }
    let table = lake.load(name).await;
    let schema = table.metadata().current_schema();
    let mut names: Vec<String> = schema
        .fields
        .fields
        .iter()
        .map(|f| f.name.clone())
        .collect();
    names.sort();
    let mut expected = vec!["a", "id", "k"];
    expected.push(if results[2].is_ok() { "b" } else { "" });
    expected.push(if results[3].is_ok() { "e" } else { "d" });
    expected.retain(|n| !n.is_empty());
    expected.sort();
    assert_eq!(names, expected);
    let mut ids: Vec<i32> = schema.fields.fields.iter().map(|f| f.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), names.len(), "distinct field ids");
    if results[4].is_ok() {
        assert_eq!(
            table.metadata().properties.get("x.one").map(String::as_str),
            Some("1")
        );
    }
    let fresh = lake.session().await;
    ok(
        &fresh,
        &format!("INSERT INTO {t} (id, k, a) VALUES (99, 1, 7)"),
    )
    .await;
    let ids = longs(&fresh, &format!("SELECT id FROM {t} ORDER BY id")).await;
    let mut want: Vec<i64> = model.keys().copied().collect();
    want.push(99);
    assert_eq!(ids, want);
    assert_eq!(
        longs(&fresh, &format!("SELECT a FROM {t} WHERE id = 99")).await,
        vec![7]
    );
}

/// The sequence number of the snapshot of `table` since `after` (a sequence number)
/// whose operation is `operation` and that added `records` rows, if one landed.
fn landed_at(table: &Table, after: i64, operation: &str, records: i64) -> Option<i64> {
    table
        .metadata()
        .snapshots
        .iter()
        .filter(|s| s.sequence_number > after)
        .find(|s| {
            s.summary.get("operation").map(String::as_str) == Some(operation)
                && s.summary.get("added-records") == Some(&records.to_string())
        })
        .map(|s| s.sequence_number)
}

/// `INSERT OVERWRITE` (dynamic: partition `k = 1`; static: the whole table) races
/// INSERTs into the replaced and another partition and a DELETE (serializable, the
/// default for overwrites). When the overwrite commits, every row of what it replaces
/// that committed before it is gone and every row committed after it is there; the
/// other partition keeps all its rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_overwrite_races_inserts() {
    let lake = Lake::sql().await;
    let writers = sessions(&lake, 4).await;
    for mode in ["dynamic", "static"] {
        let name = format!("ow_{mode}");
        let t = lake.sql_name(&name);
        let setup = lake.session().await;
        let initial = seeded(
            &setup,
            &t,
            "PARTITIONED BY (k)",
            ", 'write.delete.mode'='merge-on-read'",
        )
        .await;
        let before = lake.load(&name).await.metadata().last_sequence_number;
        ok(
            &writers[0],
            &format!("SET icefloe.partition_overwrite_mode = '{mode}'"),
        )
        .await;
        let statements = vec![
            format!(
                "INSERT OVERWRITE {t} VALUES (700, 1, 0), (701, 1, 0), (702, 1, 0), (703, 1, 0)"
            ),
            format!("INSERT INTO {t} VALUES (800, 1, 0), (801, 1, 0)"),
            format!("INSERT INTO {t} VALUES (900, 0, 0), (901, 0, 0), (902, 0, 0)"),
            format!("DELETE FROM {t} WHERE id = 2"),
        ];
        let results = race(&writers, &statements).await;
        for (statement, result) in statements.iter().zip(&results) {
            if let Err(e) = result {
                lost_race(statement, e);
            }
        }
        let table = lake.load(&name).await;
        let overwrite = landed_at(&table, before, "overwrite", 4);
        let into_1 = landed_at(&table, before, "append", 2);
        let into_0 = landed_at(&table, before, "append", 3);
        let delete = landed_at(&table, before, "delete", 0)
            .or_else(|| results[3].is_ok().then_some(i64::MAX));
        assert_eq!(overwrite.is_some(), results[0].is_ok(), "{name}");
        assert_eq!(into_1.is_some(), results[1].is_ok(), "{name}");
        assert_eq!(into_0.is_some(), results[2].is_ok(), "{name}");
        // the model: replay the committed statements in commit order
        let mut model: BTreeSet<i64> = initial.keys().copied().collect();
        let mut order: Vec<(i64, usize)> = [overwrite, into_1, into_0]
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.map(|s| (s, i)))
            .collect();
        order.sort();
        for (_, i) in order {
            match i {
                0 => {
                    model.retain(|id| mode == "dynamic" && id % 2 == 0);
                    model.extend(700..704);
                }
                1 => model.extend([800, 801]),
                _ => model.extend([900, 901, 902]),
            }
        }
        let fresh = lake.session().await;
        let ids: BTreeSet<i64> = longs(&fresh, &format!("SELECT id FROM {t}"))
            .await
            .into_iter()
            .collect();
        // the DELETE removes id 2 when it lands and no overwrite replaced it later
        let mut with_delete = model.clone();
        with_delete.remove(&2);
        if delete.is_some() {
            assert_eq!(ids, with_delete, "{name}: {results:?}");
        } else {
            assert_eq!(ids, model, "{name}: {results:?}");
        }
        check_history(&table, true).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{name}");
    }
}

/// Write-audit-publish: a staged INSERT is published twice at once (`publish_changes`
/// and `cherrypick_snapshot` of its snapshot) while INSERTs land on `main`: the staged
/// rows are published exactly once (the later publish fails naming the WAP id or the
/// snapshot, as Java's `validateWapPublish`), every INSERT's rows are there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishing_a_staged_write_races_inserts() {
    let lake = Lake::sql().await;
    let writers = sessions(&lake, 4).await;
    let name = "wap";
    let t = lake.sql_name(name);
    let setup = lake.session().await;
    let model = seeded(&setup, &t, "", ", 'write.wap.enabled'='true'").await;
    let mut expected: BTreeSet<i64> = model.keys().copied().collect();
    ok(&setup, "SET icefloe.wap_id = 'w1'").await;
    ok(
        &setup,
        &format!("INSERT INTO {t} VALUES (600, 0, 0), (601, 1, 0)"),
    )
    .await;
    let staged = lake
        .load(name)
        .await
        .metadata()
        .snapshots
        .iter()
        .find(|s| s.summary.get("wap.id").map(String::as_str) == Some("w1"))
        .map(|s| s.snapshot_id)
        .expect("staged snapshot");
    let table = format!("'{}.{name}'", lake.ns);
    let statements = vec![
        format!("CALL ice.system.publish_changes({table}, 'w1')"),
        format!("CALL ice.system.cherrypick_snapshot({table}, {staged})"),
        format!("INSERT INTO {t} VALUES (700, 0, 0)"),
        format!("INSERT INTO {t} VALUES (701, 1, 0)"),
    ];
    let results = race(&writers, &statements).await;
    let published = results[..2].iter().filter(|r| r.is_ok()).count();
    assert_eq!(published, 1, "published exactly once: {results:?}");
    for (statement, result) in statements.iter().zip(&results) {
        match result {
            Err(e) if statement.contains("CALL") => {
                let text = e.to_string();
                assert!(
                    text.contains("w1")
                        || text.contains(&staged.to_string())
                        || e.kind() == ErrorKind::CommitConflict,
                    "{statement}: {e}"
                );
            }
            Err(e) => lost_race(statement, e),
            Ok(_) => {}
        }
    }
    expected.extend([600, 601]);
    for (i, id) in [(2, 700), (3, 701)] {
        if results[i].is_ok() {
            expected.insert(id);
        }
    }
    let fresh = lake.session().await;
    let ids = longs(&fresh, &format!("SELECT id FROM {t} ORDER BY id")).await;
    assert_eq!(ids, expected.into_iter().collect::<Vec<_>>());
    let table = lake.load(name).await;
    check_history(&table, false).await;
    assert_eq!(unreferenced(&table).await, Vec::<String>::new());
}

/// An upgrade to format version 3 races merge-on-read DELETEs and UPDATEs (v2 position
/// deletes) and INSERTs: a row-level change either lands before the upgrade or fails
/// cleanly (v3 takes deletion vectors), rows are the model's, and after it the table
/// takes v3 deletes with one deletion vector per data file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn format_upgrade_races_row_level_changes() {
    let lake = Lake::sql().await;
    let writers = sessions(&lake, 5).await;
    let name = "upgrade";
    let t = lake.sql_name(name);
    let setup = lake.session().await;
    let mut model = seeded(
        &setup,
        &t,
        "",
        ", 'format-version'='2', 'write.delete.mode'='merge-on-read', \
         'write.update.mode'='merge-on-read'",
    )
    .await;
    let upgrade = format!("ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')");
    let changes = [
        Change::Delete(vec![3, 13]),
        Change::Update(vec![25]),
        Change::Delete(vec![36]),
        Change::Insert(vec![900]),
    ];
    let mut statements = vec![upgrade.clone()];
    statements.extend(changes.iter().map(|c| c.statement(&t)));
    let results = race(&writers, &statements).await;
    let mut results = results.into_iter();
    if let Some(Err(e)) = results.next() {
        panic!("{upgrade}: {e}");
    }
    for ((change, statement), result) in changes.iter().zip(&statements[1..]).zip(results) {
        match result {
            Ok(_) => change.apply(&mut model),
            Err(e) => {
                let text = e.to_string();
                assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::ValidationFailed
                            | ErrorKind::CommitConflict
                            | ErrorKind::Unsupported
                    ) && (text.contains("version")
                        || text.contains("conflict")
                        || text.contains("gave up")),
                    "{statement}: {e:?}"
                );
            }
        }
    }
    let fresh = lake.session().await;
    assert_eq!(rows_of(&fresh, &t).await, model);
    // v3 deletes after the upgrade, on files that may hold v2 position deletes
    for change in [
        Change::Delete(vec![4, 14, 26]),
        Change::Update(vec![27, 37]),
    ] {
        ok(&fresh, &change.statement(&t)).await;
        change.apply(&mut model);
    }
    assert_eq!(rows_of(&lake.session().await, &t).await, model);
    let table = lake.load(name).await;
    check_history(&table, true).await;
    assert_eq!(unreferenced(&table).await, Vec::<String>::new());
    let ids: Vec<i64> = model.keys().copied().collect();
    engines_read(&lake, &table, name, &ids);
}

/// Sessions create one table name at once (three schemas): exactly one CREATE lands,
/// the others fail saying the table exists, and the table is the winner's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_of_one_name_race() {
    for lake in [Lake::sql().await, Lake::fs().await] {
        let writers = sessions(&lake, 3).await;
        let t = lake.sql_name("created");
        let columns = ["a BIGINT", "b STRING", "c DOUBLE"];
        let statements: Vec<String> = columns
            .iter()
            .map(|c| format!("CREATE TABLE {t} ({c})"))
            .collect();
        let results = race(&writers, &statements).await;
        let winners: Vec<usize> = (0..3).filter(|i| results[*i].is_ok()).collect();
        assert_eq!(winners.len(), 1, "{results:?}");
        for r in results.iter().filter_map(|r| r.as_ref().err()) {
            assert!(
                r.kind() == ErrorKind::AlreadyExists || r.to_string().contains("already exists"),
                "{r:?}"
            );
        }
        let table = lake.load("created").await;
        let names: Vec<&str> = table
            .metadata()
            .current_schema()
            .fields
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        let winner = columns[winners[0]].split(' ').next().unwrap_or_default();
        assert_eq!(names, vec![winner]);
        let fresh = lake.session().await;
        ok(&fresh, &format!("INSERT INTO {t} VALUES (NULL)")).await;
        assert_eq!(
            longs(&fresh, &format!("SELECT count(*) FROM {t}")).await,
            vec![1]
        );
        let table = lake.load("created").await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new());
        if matches!(lake.store, Store::Fs) {
            continue; // a filesystem catalog renames nothing
        }
        // two renames to one name and a CREATE of it: one lands
        let setup = lake.session().await;
        for from in ["r1", "r2"] {
            ok(
                &setup,
                &format!("CREATE TABLE {} (id BIGINT)", lake.sql_name(from)),
            )
            .await;
        }
        let moved = lake.sql_name("moved");
        let statements = vec![
            format!("ALTER TABLE {} RENAME TO {moved}", lake.sql_name("r1")),
            format!("ALTER TABLE {} RENAME TO {moved}", lake.sql_name("r2")),
            format!("CREATE TABLE {moved} (z INT)"),
        ];
        let results = race(&writers, &statements).await;
        assert_eq!(
            results.iter().filter(|r| r.is_ok()).count(),
            1,
            "{results:?}"
        );
        for r in results.iter().filter_map(|r| r.as_ref().err()) {
            assert!(
                r.kind() == ErrorKind::AlreadyExists || r.to_string().contains("already exists"),
                "{r:?}"
            );
        }
        let catalog = lake.catalog();
        let listed = catalog
            .list_tables(&Namespace::parse(&lake.ns))
            .await
            .expect("list");
        let mut names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        // a rename that wins takes its source away; a CREATE that wins leaves both
        let expected = match results.iter().position(Result::is_ok) {
            Some(0) => vec!["created", "moved", "r2"],
            Some(1) => vec!["created", "moved", "r1"],
            _ => vec!["created", "moved", "r1", "r2"],
        };
        assert_eq!(names, expected, "{results:?}");
    }
}

/// Catalog instances create one namespace at once, each with its own properties: one
/// lands with its properties, the others fail saying it exists (the SQLite catalog
/// replaced rows before: every create succeeded and the properties were a mix).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_of_one_namespace_race() {
    let lake = Lake::sql().await;
    let Store::Sql(db) = &lake.store else {
        unreachable!("a SQLite lake")
    };
    let barrier = Arc::new(Barrier::new(4));
    let mut tasks = vec![];
    for i in 0..4 {
        let catalog = lake.catalog();
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            let props = HashMap::from([
                ("owner".to_string(), format!("w{i}")),
                (format!("w{i}"), "yes".to_string()),
            ]);
            barrier.wait().await;
            catalog
                .create_namespace(&Namespace::parse("shared"), &props)
                .await
        }));
    }
    let mut results = vec![];
    for t in tasks {
        results.push(t.await.expect("task"));
    }
    let winners: Vec<usize> = (0..4).filter(|i| results[*i].is_ok()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e:?}");
        assert!(e.to_string().contains("'shared' already exists"), "{e}");
    }
    let conn = rusqlite::Connection::open(db).expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT property_key, property_value FROM iceberg_namespace_properties \
             WHERE namespace = 'shared' ORDER BY property_key",
        )
        .expect("prepare");
    let props: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let w = winners[0];
    assert_eq!(
        props,
        vec![
            ("exists".to_string(), "true".to_string()),
            ("owner".to_string(), format!("w{w}")),
            (format!("w{w}"), "yes".to_string()),
        ]
    );
}

/// A DROP TABLE races INSERTs into the table (SQLite catalog): the table is gone
/// afterwards, an INSERT that did not land before the drop fails saying the table is not
/// there, and nothing of the table lists as a namespace or table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_table_races_inserts() {
    let lake = Lake::sql().await;
    let writers = sessions(&lake, 4).await;
    let t = lake.sql_name("dropped");
    let setup = lake.session().await;
    seeded(&setup, &t, "", "").await;
    let mut statements = vec![format!("DROP TABLE {t}")];
    statements.extend((0..3).map(|i| format!("INSERT INTO {t} VALUES ({}, 0, 0)", 900 + i)));
    let results = race(&writers, &statements).await;
    assert!(results[0].is_ok(), "{:?}", results[0]);
    for (s, r) in statements.iter().zip(&results).skip(1) {
        if let Err(e) = r {
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::NotFound | ErrorKind::CommitConflict | ErrorKind::ValidationFailed
                ) || e.to_string().contains("dropped")
                    || e.to_string().contains("not found")
                    || e.to_string().contains("does not exist"),
                "{s}: {e:?}"
            );
        }
    }
    let catalog = lake.catalog();
    assert!(!catalog
        .table_exists(&lake.ident("dropped"))
        .await
        .expect("exists"));
    let namespaces = catalog.list_namespaces().await.expect("namespaces");
    assert_eq!(
        namespaces.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
        vec![lake.ns.clone()],
        "{results:?}"
    );
    assert_eq!(
        catalog
            .list_tables(&Namespace::parse(&lake.ns))
            .await
            .expect("tables"),
        vec![]
    );
}

/// A reader holds the table at an old state while another session compacts and expires
/// every older snapshot, deleting the files that state reads: a query planned before
/// (its physical plan made, data files and deletes listed) and a time-travel query to
/// the expired snapshot afterwards both fail naming what is gone, never answering with
/// fewer rows or with deleted rows back (merge-on-read with position deletes and
/// deletion vectors). A query planned afterwards reads the rows as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_of_expired_files_fails_naming_them() {
    let lake = Lake::sql().await;
    for version in [2, 3] {
        let name = format!("held_v{version}");
        let t = lake.sql_name(&name);
        let reader = lake.session().await;
        let mut model = seeded(
            &reader,
            &t,
            "",
            &format!(", 'format-version'='{version}', 'write.delete.mode'='merge-on-read'"),
        )
        .await;
        let delete = Change::Delete(vec![3, 14, 25]);
        ok(&reader, &delete.statement(&t)).await;
        delete.apply(&mut model);
        let old = lake
            .load(&name)
            .await
            .metadata()
            .current_snapshot_id
            .expect("snapshot");
        let held = reader
            .sql(&format!("SELECT id FROM {t} ORDER BY id"))
            .await
            .expect("plan")
            .create_physical_plan()
            .await
            .expect("physical plan");
        let other = lake.session().await;
        let table = format!("'{}.{name}'", lake.ns);
        ok(&other, &format!("CALL ice.system.rewrite_data_files(table => {table}, options => map('rewrite-all', 'true'))")).await;
        ok(
            &other,
            &format!(
                "CALL ice.system.expire_snapshots(table => {table}, \
                 older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
            ),
        )
        .await;
        let err = datafusion::physical_plan::collect(held, reader.task_ctx())
            .await
            .expect_err("the planned files were deleted");
        // "data file … does not exist", or "reading bytes … of data file …: … not found"
        // when the reader had the footer already (a cache) and a byte range read failed;
        // the file named may also be a delete file the scan reads as it runs (a v2
        // position delete file, a v3 deletion vector's Puffin file) when the session's
        // delete cache does not hold it
        let text = err.to_string().to_lowercase();
        assert!(
            (text.contains("does not exist")
                || text.contains("not found")
                || text.contains("no such file"))
                && (text.contains(".parquet") || text.contains(".puffin")),
            "{name}: {text}"
        );
        let err = exec(&reader, &format!("SELECT id FROM {t} VERSION AS OF {old}"))
            .await
            .expect_err("the snapshot expired");
        assert!(err.to_string().contains(&old.to_string()), "{name}: {err}");
        let want: Vec<i64> = model.keys().copied().collect();
        assert_eq!(
            longs(&reader, &format!("SELECT id FROM {t} ORDER BY id")).await,
            want,
            "{name}"
        );
        let table = lake.load(&name).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{name}");
    }
}

/// A `DELETE`/`UPDATE`/`MERGE` planned on a snapshot that a concurrent
/// `expire_snapshots` (retention shorter than the statement's run) expires before the
/// statement reads its files fails as a lost race (`ValidationFailed`, naming the
/// snapshot and the file read), commits nothing and leaves no file behind; run again,
/// it commits. Copy-on-write and merge-on-read, v2 and v3 (it said only "data file …
/// does not exist", which `maintenance_races_writes` took for no lost race under load).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_level_changes_whose_snapshot_expired_meanwhile_fail_as_lost_races() {
    let lake = Lake::sql().await;
    let cases = [
        (
            "exp_v2_cow",
            2,
            "copy-on-write",
            "UPDATE {t} SET d = d + 1 WHERE id = 28",
        ),
        (
            "exp_v2_cow_d",
            2,
            "copy-on-write",
            "DELETE FROM {t} WHERE id IN (3, 28)",
        ),
        (
            "exp_v2_mor",
            2,
            "merge-on-read",
            "DELETE FROM {t} WHERE id IN (3, 28)",
        ),
        (
            "exp_v3_mor",
            3,
            "merge-on-read",
            "MERGE INTO {t} USING (SELECT 28 AS id) s ON {t}.id = s.id \
             WHEN MATCHED THEN UPDATE SET d = 7",
        ),
    ];
    for (name, version, mode, statement) in cases {
        let t = lake.sql_name(name);
        let statement = statement.replace("{t}", &t);
        let writer = lake.session().await;
        let mut model = seeded(
            &writer,
            &t,
            "",
            &format!(
                ", 'format-version'='{version}', 'write.delete.mode'='{mode}', \
                 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}'"
            ),
        )
        .await;
        let old = lake
            .load(name)
            .await
            .metadata()
            .current_snapshot_id
            .expect("snapshot");
        let held = crate::dml::planned(&writer, &statement).await;
        let other = lake.session().await;
        let table = format!("'{}.{name}'", lake.ns);
        ok(&other, &format!("CALL ice.system.rewrite_data_files(table => {table}, options => map('rewrite-all', 'true'))")).await;
        ok(
            &other,
            &format!(
                "CALL ice.system.expire_snapshots(table => {table}, \
                 older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
            ),
        )
        .await;
        let err = crate::dml::execute_planned(&writer, held)
            .await
            .expect_err("the statement's files were deleted");
        assert_eq!(err.kind(), ErrorKind::ValidationFailed, "{name}: {err}");
        let text = err.to_string();
        assert!(
            text.contains(&format!(
                "snapshot {old} of '{}.{name}', which the {} read, was expired",
                lake.ns,
                statement.split(' ').next().unwrap_or_default()
            )) && (text.contains(".parquet") || text.contains(".puffin")),
            "{name}: {text}"
        );
        assert_eq!(
            rows_of(&writer, &t).await,
            model,
            "{name}: nothing committed"
        );
        let table = lake.load(name).await;
        check_history(&table, true).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{name}");
        // run again, on the table as it is now, it commits
        ok(&writer, &statement).await;
        if statement.starts_with("DELETE") {
            model.remove(&3);
            model.remove(&28);
        } else {
            let row = model.get_mut(&28).expect("row 28");
            row.1 = if statement.starts_with("UPDATE") {
                row.1 + 1
            } else {
                7
            };
        }
        assert_eq!(rows_of(&writer, &t).await, model, "{name}: run again");
    }
}

/// A `SELECT`, an `INSERT … SELECT` of the table into itself and one into another table,
/// planned (their scans hold the snapshot's files) while another session rewrites every
/// data file and expires the older snapshots: run then, the `SELECT` fails with the file
/// error's kind saying the snapshot of the table was expired meanwhile and the query can
/// be run again; the `INSERT`s fail as lost races (`ValidationFailed`) naming the source
/// table and snapshot. They said only "data file '…' does not exist" (tester O64 F2).
/// Nothing is committed and no file left; run again, each succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_whose_snapshot_expired_meanwhile_say_so() {
    let lake = Lake::sql().await;
    let t = lake.sql_name("exp_read");
    let u = lake.sql_name("exp_read_into");
    let reader = lake.session().await;
    let model = seeded(&reader, &t, "", "").await;
    ok(
        &reader,
        &format!("CREATE TABLE {u} (id BIGINT, k BIGINT, d BIGINT)"),
    )
    .await;
    let old = lake
        .load("exp_read")
        .await
        .metadata()
        .current_snapshot_id
        .expect("snapshot");
    let select = format!("SELECT id, k, d FROM {t}");
    let into_itself = format!("INSERT INTO {t} SELECT id + 100, k, d FROM {t}");
    let into_other = format!("INSERT INTO {u} SELECT id, k, d FROM {t}");
    let mut held = vec![];
    for statement in [&select, &into_itself, &into_other] {
        held.push(crate::dml::planned(&reader, statement).await);
    }
    let other = lake.session().await;
    let table = format!("'{}.exp_read'", lake.ns);
    ok(&other, &format!("CALL ice.system.rewrite_data_files(table => {table}, options => map('rewrite-all', 'true'))")).await;
    ok(
        &other,
        &format!(
            "CALL ice.system.expire_snapshots(table => {table}, \
             older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
        ),
    )
    .await;
    let expired = format!("snapshot {old} of '{}.exp_read'", lake.ns);
    for (statement, plan) in [&select, &into_itself, &into_other].into_iter().zip(held) {
        let err = crate::dml::execute_planned(&reader, plan)
            .await
            .expect_err("the snapshot's files were deleted");
        let text = err.to_string();
        if statement.starts_with("SELECT") {
            assert!(
                matches!(err.kind(), ErrorKind::InvalidData | ErrorKind::NotFound),
                "{statement}: {text}"
            );
            assert!(
                text.contains(&format!(
                    "{expired}, which the query read, was expired by a concurrent commit \
                     while it ran and a file it read is gone; the query can be run again"
                )),
                "{statement}: {text}"
            );
        } else {
            assert_eq!(
                err.kind(),
                ErrorKind::ValidationFailed,
                "{statement}: {text}"
            );
            assert!(
                text.contains(&format!(
                    "{expired}, which the INSERT INTO read, was expired by a concurrent \
                     commit while it ran and a file it read is gone; nothing was committed"
                )),
                "{statement}: {text}"
            );
        }
        assert!(
            text.contains(".parquet' does not exist"),
            "{statement}: {text}"
        );
    }
    assert_eq!(rows_of(&reader, &t).await, model, "nothing committed");
    assert_eq!(
        rows_of(&reader, &u).await,
        Model::new(),
        "nothing committed"
    );
    for name in ["exp_read", "exp_read_into"] {
        let table = lake.load(name).await;
        check_history(&table, true).await;
        assert_eq!(unreferenced(&table).await, Vec::<String>::new(), "{name}");
    }
    // run again, on the table as it is now
    assert_eq!(
        longs(&reader, &format!("SELECT count(*) FROM ({select})")).await,
        vec![40]
    );
    ok(&reader, &into_other).await;
    assert_eq!(rows_of(&reader, &u).await, model);
}

/// Tester/helper fault (stop 67, B67 task 1): `iceberg_scan('DIR')` of a table directory
/// is read at the directory's current version and follows it as a table registered by
/// its directory (`CREATE EXTERNAL TABLE … LOCATION 'DIR'`, `--table NAME=DIR`) does: a
/// read planned on it whose snapshot another session expires meanwhile says the snapshot
/// of the table was expired and the query can be run again, as the registered table's
/// does (it said the table was "pinned at metadata file", the words for a metadata file);
/// `iceberg_scan` of the metadata file itself still says it is pinned there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iceberg_scan_of_a_directory_expired_meanwhile_says_what_a_registered_directory_says() {
    let lake = Lake::fs().await;
    let t = lake.sql_name("exp_dir");
    let reader = lake.session().await;
    icefloe::datafusion::register_iceberg_factory(&reader);
    seeded(&reader, &t, "", "").await;
    let dir = lake.warehouse.join(&lake.ns).join("exp_dir");
    let dir = dir.display().to_string();
    let table = lake.load("exp_dir").await;
    let old = table.metadata().current_snapshot_id.expect("snapshot");
    let pinned = table.metadata_location().to_string();
    ok(
        &reader,
        &format!("CREATE EXTERNAL TABLE ex STORED AS ICEBERG LOCATION '{dir}'"),
    )
    .await;
    let by_dir = format!("SELECT id FROM iceberg_scan('{dir}')");
    let registered = "SELECT id FROM ex".to_string();
    let by_file = format!("SELECT id FROM iceberg_scan('{pinned}')");
    let mut held = vec![];
    for statement in [&by_dir, &registered, &by_file] {
        held.push(crate::dml::planned(&reader, statement).await);
    }
    let other = lake.session().await;
    let name = format!("'{}.exp_dir'", lake.ns);
    ok(&other, &format!("CALL ice.system.rewrite_data_files(table => {name}, options => map('rewrite-all', 'true'))")).await;
    ok(
        &other,
        &format!(
            "CALL ice.system.expire_snapshots(table => {name}, \
             older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
        ),
    )
    .await;
    let followed = |table: &str| {
        format!(
            "snapshot {old} of '{table}', which the query read, was expired by a concurrent \
             commit while it ran and a file it read is gone; the query can be run again"
        )
    };
    for (statement, plan) in [&by_dir, &registered, &by_file].into_iter().zip(held) {
        let err = crate::dml::execute_planned(&reader, plan)
            .await
            .expect_err("the snapshot's files were deleted");
        let text = err.to_string();
        assert!(
            matches!(err.kind(), ErrorKind::InvalidData | ErrorKind::NotFound),
            "{statement}: {text}"
        );
        let expected = if statement == &by_dir {
            followed(&dir)
        } else if statement == &registered {
            followed("ex")
        } else {
            format!("is pinned at metadata file '{pinned}' (snapshot {old}), which a later commit expired")
        };
        assert!(text.contains(&expected), "{statement}: {text}");
        assert!(
            statement == &by_file || !text.contains("pinned"),
            "{statement}: {text}"
        );
        assert!(
            text.contains(".parquet' does not exist"),
            "{statement}: {text}"
        );
    }
    // run again, the directory is read at its current version
    assert_eq!(
        longs(&reader, &format!("SELECT count(*) FROM ({by_dir})")).await,
        vec![40]
    );
}

/// A session holds table `t` (queried it, and has a DELETE planned and an INSERT's
/// DataFrame built) while another session drops `t` and creates a new `t` of another
/// schema under the name (SQLite and filesystem catalogs): the held DELETE fails saying
/// the table was replaced (or, on the filesystem catalog, that its files are gone),
/// committing nothing to the new table; the session's next
/// statements read and write the new table; the new table holds only its own rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_dropped_and_created_again_under_a_holding_session() {
    for lake in [Lake::sql().await, Lake::fs().await] {
        let t = lake.sql_name("again");
        let holder = lake.session().await;
        let model = seeded(&holder, &t, "", "").await;
        assert_eq!(rows_of(&holder, &t).await, model);
        let delete = crate::dml::planned(&holder, &format!("DELETE FROM {t} WHERE id = 3")).await;
        let other = lake.session().await;
        ok(&other, &format!("DROP TABLE {t}")).await;
        ok(&other, &format!("CREATE TABLE {t} (id BIGINT, s STRING)")).await;
        ok(
            &other,
            &format!("INSERT INTO {t} VALUES (3, 'new'), (4, 'new')"),
        )
        .await;
        let err = crate::dml::execute_planned(&holder, delete)
            .await
            .expect_err("the table was replaced");
        let text = err.to_string();
        // the SQLite catalog keeps the old files (the commit finds the table replaced);
        // the filesystem catalog's drop took them away (the scan finds them gone)
        assert!(
            text.contains("replaced") || text.contains("not found"),
            "{text}"
        );
        assert_eq!(
            longs(&holder, &format!("SELECT id FROM {t} ORDER BY id")).await,
            vec![3, 4]
        );
        ok(&holder, &format!("INSERT INTO {t} VALUES (5, 'held')")).await;
        ok(&holder, &format!("DELETE FROM {t} WHERE id = 3")).await;
        let fresh = lake.session().await;
        let batches = ok(&fresh, &format!("SELECT id, s FROM {t} ORDER BY id")).await;
        let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
            .expect("format")
            .to_string();
        assert_eq!(
            text,
            "+----+------+\n| id | s    |\n+----+------+\n| 4  | new  |\n| 5  | held |\n+----+------+"
        );
        let table = lake.load("again").await;
        check_history(&table, true).await;
        // a SQL catalog's DROP TABLE without PURGE keeps the old table's files (as Java's
        // JdbcCatalog): under the same location they are the new table's orphans
        if matches!(lake.store, Store::Fs) {
            assert_eq!(unreferenced(&table).await, Vec::<String>::new());
        }
    }
}
