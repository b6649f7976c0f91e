//! `DELETE`, `UPDATE` and `TRUNCATE` on Iceberg tables of a SQLite catalog: a model check
//! against DataFusion's own in-memory table over random statements (copy-on-write and
//! merge-on-read, three partitionings, time travel to every step), PyIceberg and DuckDB
//! reading what they leave, conflicts between concurrent statements, and refusals.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableIdent};
use icefloe::ErrorKind;
use serde_json::Value;

use crate::catalog::{attach, context};
use crate::interop::{assert_same_rows, duckdb_read, icefloe_rows, pyiceberg_read, python};

/// A SQLite catalog `default` (attached as `ice`) with namespace `ns`, in a temp dir.
pub(crate) struct Lake {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) db: PathBuf,
    pub(crate) warehouse: PathBuf,
    pub(crate) catalog: Arc<dyn Catalog>,
    pub(crate) ctx: SessionContext,
}

pub(crate) async fn lake() -> Lake {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("catalog.db");
    let warehouse = dir.path().join("warehouse");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let catalog = SqlCatalog::open_or_create("default", &db)
        .expect("catalog")
        .with_warehouse(&warehouse.to_string_lossy())
        .expect("warehouse");
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("namespace");
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let mut lake = Lake {
        dir,
        db,
        warehouse,
        catalog,
        ctx: SessionContext::new(),
    };
    // `SET icefloe.…` needs the options registered
    lake.ctx = session_over(&lake).await;
    lake
}

/// A new session over `lake`'s catalog (nothing cached), set up as [`lake`]'s.
pub(crate) async fn session_over(lake: &Lake) -> SessionContext {
    let config = icefloe::datafusion::register_iceberg_options(context().state().config().clone());
    let ctx = SessionContext::new_with_config(config);
    icefloe::datafusion::register_iceberg_functions(&ctx);
    attach(&ctx, "ice", Arc::clone(&lake.catalog)).await;
    ctx
}

pub(crate) async fn run(ctx: &SessionContext, q: &str) -> Result<Vec<RecordBatch>, String> {
    let df = icefloe::datafusion::sql::execute(ctx, q)
        .await
        .map_err(|e| e.to_string())?;
    df.collect().await.map_err(|e| e.to_string())
}

/// The one number a statement answers (a DML `count`, a `SELECT count(*)`).
pub(crate) async fn count(ctx: &SessionContext, q: &str) -> i64 {
    let text = ok(ctx, q).await;
    text.lines()
        .filter_map(|l| l.trim_matches(|c| c == '|' || c == ' ').parse().ok())
        .next()
        .unwrap_or_else(|| panic!("{q}: no count in {text}"))
}

pub(crate) async fn ok(ctx: &SessionContext, q: &str) -> String {
    let batches = run(ctx, q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    pretty_format_batches(&batches).expect("format").to_string()
}

/// Deterministic pseudo-random numbers (xorshift64*), so a failing seed reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const COLUMNS: &str = "id, k, s, d";
const ORDER: &str = "ORDER BY id, k, s, d";

fn rows(rng: &mut Rng, next_id: &mut i64) -> String {
    let n = 1 + rng.below(12);
    let mut out = vec![];
    for _ in 0..n {
        *next_id += 1;
        let k = rng.pick(&["0", "1", "2", "3", "NULL"]);
        let s = rng.pick(&["'a'", "'ab'", "'b'", "'c'", "NULL"]);
        let d = rng.pick(&["-1.5", "0.0", "2.5", "10.0", "NULL"]);
        out.push(format!("({next_id}, {k}, {s}, {d})"));
    }
    out.join(", ")
}

fn condition(rng: &mut Rng, max_id: i64) -> String {
    let atom = |rng: &mut Rng| -> String {
        match rng.below(9) {
            0 => format!("id < {}", rng.below(max_id.max(1) as u64 + 2)),
            1 => format!("id % 3 = {}", rng.below(3)),
            2 => format!("k = {}", rng.below(4)),
            3 => format!("k <> {}", rng.below(4)),
            4 => "k IS NULL".to_string(),
            5 => "s IS NULL".to_string(),
            6 => "s LIKE 'a%'".to_string(),
            7 => format!("d > {}", rng.pick(&["-2", "0", "1", "5"])),
            _ => "k IN (1, 2)".to_string(),
        }
    };
    match rng.below(4) {
        0 => format!("{} AND {}", atom(rng), atom(rng)),
        1 => format!("({} OR {})", atom(rng), atom(rng)),
        _ => atom(rng),
    }
}

fn assignments(rng: &mut Rng) -> String {
    let all = [
        "d = d + 1",
        "s = 'u'",
        "k = 3",
        "k = k + 1",
        "s = NULL",
        "d = CASE WHEN k IS NULL THEN 0.5 ELSE d END",
    ];
    let first = rng.below(all.len() as u64) as usize;
    let second = rng.below(all.len() as u64) as usize;
    let column = |a: &str| a.split(' ').next().unwrap_or_default().to_string();
    if second != first && column(all[first]) != column(all[second]) && rng.below(2) == 0 {
        format!("{}, {}", all[first], all[second])
    } else {
        all[first].to_string()
    }
}

async fn current_snapshot(catalog: &Arc<dyn Catalog>, ident: &str) -> Option<i64> {
    catalog
        .load_table(&TableIdent::parse(ident))
        .await
        .expect("load")
        .metadata()
        .current_snapshot_id
}

/// The ids `q` returns from `ctx`.
async fn ids(ctx: &SessionContext, q: &str) -> HashSet<i64> {
    use datafusion::arrow::array::AsArray;
    use datafusion::arrow::datatypes::Int64Type;
    let mut out = HashSet::new();
    for b in run(ctx, q).await.unwrap_or_else(|e| panic!("{q}: {e}")) {
        out.extend(b.column(0).as_primitive::<Int64Type>().iter().flatten());
    }
    out
}

/// Row lineage across one statement on the v3 table `ice.ns.<name>` (spec: "Row
/// Lineage"), given each row's (`_row_id`, `_last_updated_sequence_number`) by id and
/// the table's `next-row-id` before it, and the ids of the rows it updated: every row
/// that stays keeps its `_row_id`; an updated row takes the current snapshot's sequence
/// number, another keeps its own; a new row (an insert) has a row id from the range
/// this statement took and the current sequence number; row ids are unique. Returns
/// the state after.
async fn check_lineage(
    lake: &Lake,
    name: &str,
    (before, next_before): &(HashMap<i64, (i64, i64)>, i64),
    updated: &HashSet<i64>,
    what: &str,
) -> (HashMap<i64, (i64, i64)>, i64) {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::datatypes::Int64Type;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let m = table.metadata();
    let next = m.next_row_id.unwrap_or(0);
    let seq = m.current_snapshot().map_or(0, |s| s.sequence_number);
    let q = format!("SELECT id, _row_id, _last_updated_sequence_number FROM ice.ns.{name}");
    let mut after = HashMap::new();
    let mut row_ids = HashSet::new();
    for b in run(&lake.ctx, &q)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"))
    {
        let c = |i: usize| b.column(i).as_primitive::<Int64Type>().clone();
        let (id, row_id, last) = (c(0), c(1), c(2));
        for r in 0..b.num_rows() {
            assert!(
                row_id.is_valid(r) && last.is_valid(r),
                "{what}: null lineage"
            );
            let (id, row_id, last) = (id.value(r), row_id.value(r), last.value(r));
            assert!(row_ids.insert(row_id), "{what}: row id {row_id} twice");
            assert!(
                row_id < next,
                "{what}: row id {row_id} >= next-row-id {next}"
            );
            match before.get(&id) {
                Some((old_id, old_seq)) => {
                    assert_eq!(row_id, *old_id, "{what}: _row_id of id {id}");
                    let want = if updated.contains(&id) { seq } else { *old_seq };
                    assert_eq!(last, want, "{what}: _last_updated_sequence_number of {id}");
                }
                None => {
                    assert!(
                        row_id >= *next_before,
                        "{what}: new row {id} has row id {row_id} < {next_before}"
                    );
                    assert_eq!(last, seq, "{what}: sequence number of new row {id}");
                }
            }
            after.insert(id, (row_id, last));
        }
    }
    (after, next)
}

/// A random `MERGE INTO {t}` from 1–4 source rows with distinct ids (some of rows that
/// may exist, some new): matched rows with `k = x` are deleted, other matched rows take
/// the source's `s` and `d`, unmatched source rows are inserted. Returns the statement,
/// `x` and the source rows.
fn merge(rng: &mut Rng, next_id: &mut i64, t: &str) -> (String, u64, Vec<[String; 4]>) {
    let mut rows: Vec<[String; 4]> = vec![];
    for _ in 0..1 + rng.below(4) {
        let id = if rng.below(2) == 0 && *next_id > 0 {
            1 + rng.below(*next_id as u64) as i64
        } else {
            *next_id += 1;
            *next_id
        };
        if rows.iter().any(|r| r[0] == id.to_string()) {
            continue;
        }
        rows.push([
            id.to_string(),
            rng.pick(&["0", "1", "2", "3", "NULL"]).to_string(),
            rng.pick(&["'a'", "'m'", "NULL"]).to_string(),
            rng.pick(&["-1.5", "7.0", "NULL"]).to_string(),
        ]);
    }
    let values: Vec<String> = rows.iter().map(|r| format!("({})", r.join(", "))).collect();
    let x = rng.below(4);
    (
        format!(
            "MERGE INTO {t} t USING (SELECT CAST(id AS BIGINT) AS id, CAST(k AS INT) AS k,              CAST(s AS VARCHAR) AS s, CAST(d AS DOUBLE) AS d FROM (VALUES {}) AS v(id, k, s, d))              s ON t.id = s.id \
             WHEN MATCHED AND t.k = {x} THEN DELETE \
             WHEN MATCHED THEN UPDATE SET s = s.s, d = s.d \
             WHEN NOT MATCHED THEN INSERT (id, k, s, d) VALUES (s.id, s.k, s.s, s.d)",
            values.join(", ")
        ),
        x,
        rows,
    )
}

/// The model's side of [`merge`]: statements on the memory table `m` (ids are unique
/// there), one source row at a time. Returns the rows changed.
async fn merge_model(model: &SessionContext, x: u64, rows: &[[String; 4]]) -> i64 {
    let mut changed = 0;
    for [id, k, s, d] in rows {
        if count(model, &format!("SELECT count(*) FROM m WHERE id = {id}")).await > 0 {
            changed += count(model, &format!("DELETE FROM m WHERE id = {id} AND k = {x}")).await;
            changed += count(
                model,
                &format!("UPDATE m SET s = {s}, d = {d} WHERE id = {id}"),
            )
            .await;
        } else {
            changed += count(
                model,
                &format!(
                    "INSERT INTO m VALUES (CAST({id} AS BIGINT), CAST({k} AS INT),                      CAST({s} AS VARCHAR), CAST({d} AS DOUBLE))"
                ),
            )
            .await;
        }
    }
    changed
}

/// Random INSERT / DELETE / UPDATE / MERGE / TRUNCATE on `ice.ns.<name>` and on a
/// DataFusion memory table (`MERGE` there as the statements it amounts to, see
/// [`merge_model`]); after every statement both hold the same rows and the counts agree.
/// Returns the snapshots with the rows each should show.
async fn model_check(lake: &Lake, name: &str, seed: u64, steps: usize) -> Vec<(i64, String)> {
    let model = SessionContext::new();
    ok(
        &model,
        "CREATE TABLE m (id BIGINT, k INT, s VARCHAR, d DOUBLE)",
    )
    .await;
    let t = format!("ice.ns.{name}");
    let mut rng = Rng(seed);
    let mut next_id = 0i64;
    let mut history = vec![];
    let v3 = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load")
        .metadata()
        .format_version as i32
        >= 3;
    // v3: each row's (`_row_id`, `_last_updated_sequence_number`) and `next-row-id`
    let mut lineage = v3.then(|| (HashMap::new(), 0i64));
    for step in 0..steps {
        let kind = if step < 2 { 0 } else { rng.below(12) };
        // the ids of the rows an UPDATE or MERGE updates (for the v3 lineage check)
        let mut updated = HashSet::new();
        let (ours, theirs) = match kind {
            0..=2 => {
                let values = rows(&mut rng, &mut next_id);
                (
                    format!("INSERT INTO {t} VALUES {values}"),
                    format!("INSERT INTO m VALUES {values}"),
                )
            }
            3..=5 => {
                let c = condition(&mut rng, next_id);
                (
                    format!("DELETE FROM {t} WHERE {c}"),
                    format!("DELETE FROM m WHERE {c}"),
                )
            }
            6..=8 => {
                let (a, c) = (assignments(&mut rng), condition(&mut rng, next_id));
                updated = ids(&model, &format!("SELECT id FROM m WHERE {c}")).await;
                (
                    format!("UPDATE {t} SET {a} WHERE {c}"),
                    format!("UPDATE m SET {a} WHERE {c}"),
                )
            }
            10 | 11 => {
                let (statement, x, rows) = merge(&mut rng, &mut next_id, &t);
                let source: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
                updated = ids(
                    &model,
                    &format!(
                        "SELECT id FROM m WHERE id IN ({}) AND (k <> {x} OR k IS NULL)",
                        source.join(", ")
                    ),
                )
                .await;
                let what = format!("{name} seed {seed} step {step}: {statement}");
                let count_ours = count(&lake.ctx, &statement).await;
                assert_eq!(
                    count_ours,
                    merge_model(&model, x, &rows).await,
                    "{what}: count"
                );
                (statement, String::new())
            }
            _ if rng.below(3) == 0 => (format!("TRUNCATE TABLE {t}"), "DELETE FROM m".into()),
            _ => {
                let a = assignments(&mut rng);
                updated = ids(&model, "SELECT id FROM m").await;
                (format!("UPDATE {t} SET {a}"), format!("UPDATE m SET {a}"))
            }
        };
        let what = format!("{name} seed {seed} step {step}: {ours}");
        if !theirs.is_empty() {
            let count_ours = ok(&lake.ctx, &ours).await;
            let count_theirs = ok(&model, &theirs).await;
            assert_eq!(count_ours, count_theirs, "{what}: count");
        }
        let expected = ok(&model, &format!("SELECT {COLUMNS} FROM m {ORDER}")).await;
        let actual = ok(&lake.ctx, &format!("SELECT {COLUMNS} FROM {t} {ORDER}")).await;
        assert_eq!(actual, expected, "{what}: rows");
        if let Some(id) = current_snapshot(&lake.catalog, &format!("ns.{name}")).await {
            history.retain(|(s, _)| *s != id);
            history.push((id, expected));
        }
        if let Some(before) = &lineage {
            let after = check_lineage(lake, name, before, &updated, &what).await;
            lineage = Some(after);
        }
    }
    // every snapshot still reads as the model did then
    for (id, expected) in &history {
        let actual = ok(
            &lake.ctx,
            &format!("SELECT {COLUMNS} FROM ice.ns.\"{name}@{id}\" {ORDER}"),
        )
        .await;
        assert_eq!(&actual, expected, "{name} seed {seed}: time travel to {id}");
    }
    history
}

fn schema_json() -> Value {
    serde_json::json!({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": false, "type": "long"},
        {"id": 2, "name": "k", "required": false, "type": "int"},
        {"id": 3, "name": "s", "required": false, "type": "string"},
        {"id": 4, "name": "d", "required": false, "type": "double"}
    ]})
}

/// PyIceberg (through the catalog) and DuckDB (`iceberg_scan` of the metadata file)
/// read `ns.<name>` as icefloe does.
pub(crate) async fn other_engines_agree(lake: &Lake, name: &str) {
    engines_agree(lake, name, true).await
}

/// As [`other_engines_agree`]; `pyiceberg` false: DuckDB only (PyIceberg 0.12 refuses
/// to read equality deletes).
async fn engines_agree(lake: &Lake, name: &str, pyiceberg: bool) {
    if python().is_none() {
        return;
    }
    let ident = format!("ns.{name}");
    let schema = schema_json();
    let ours = icefloe_rows(&lake.ctx, &format!("ice.{ident}"), &schema).await;
    let location = match pyiceberg {
        true => {
            let pyi = pyiceberg_read(&lake.db, &lake.warehouse, &ident);
            assert_same_rows(
                &format!("{ident}: icefloe vs PyIceberg"),
                pyi["rows"].as_array().expect("rows"),
                &ours,
            );
            pyi["metadata_location"]
                .as_str()
                .expect("location")
                .to_string()
        }
        false => lake
            .catalog
            .load_table(&TableIdent::parse(&ident))
            .await
            .expect("load")
            .metadata_location()
            .to_string(),
    };
    let duck = duckdb_read(&location);
    assert_same_rows(
        &format!("{ident}: icefloe vs DuckDB"),
        duck["rows"].as_array().expect("rows"),
        &ours,
    );
}

const PARTITIONINGS: [(&str, &str); 3] = [
    ("plain", ""),
    ("by_k", "PARTITIONED BY (k)"),
    (
        "by_bucket",
        "PARTITIONED BY (bucket(4, id), truncate(1, s))",
    ),
];

/// `ice.ns.<name>`, format version 2 unless `properties` (appended to the table
/// properties, starting with a comma) sets another (a key given twice is refused, as in
/// Spark).
pub(crate) async fn create(lake: &Lake, name: &str, partitioning: &str, properties: &str) {
    let version = match properties.contains("'format-version'") {
        true => "",
        false => ", 'format-version'='2'",
    };
    let properties = format!("{version}{properties}");
    let properties = properties.trim_start_matches(", ");
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} (id BIGINT, k INT, s STRING, d DOUBLE) {partitioning} \
             TBLPROPERTIES ({properties})"
        ),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_model_check_copy_on_write() {
    let lake = lake().await;
    for (i, (name, partitioning)) in PARTITIONINGS.iter().enumerate() {
        let name = format!("cow_{name}");
        create(&lake, &name, partitioning, "").await;
        model_check(&lake, &name, 0x9E37_79B9 + i as u64, 24).await;
        other_engines_agree(&lake, &name).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_model_check_merge_on_read() {
    let lake = lake().await;
    for (i, (name, partitioning)) in PARTITIONINGS.iter().enumerate() {
        let name = format!("mor_{name}");
        // the bucketed table writes one delete file per partition
        let granularity = if i == 2 {
            ", 'write.delete.granularity'='partition'"
        } else {
            ""
        };
        create(
            &lake,
            &name,
            partitioning,
            &format!(
                ", 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', \
                 'write.merge.mode'='merge-on-read'{granularity}"
            ),
        )
        .await;
        let history = model_check(&lake, &name, 0x51ED_270B + i as u64, 24).await;
        assert!(history.len() > 5, "{name}: {history:?}");
        other_engines_agree(&lake, &name).await;
    }
    // merge-on-read wrote position delete files, each naming its data file
    let deletes = ok(
        &lake.ctx,
        "SELECT count(*) > 0 AS any FROM ice.ns.\"mor_plain$files\" WHERE content = 1",
    )
    .await;
    assert!(deletes.contains("true"), "{deletes}");
}

/// The model check on format-version 3 tables, copy-on-write: rows as the model's, and
/// row lineage as the spec says after every statement (see [`check_lineage`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_model_check_v3_copy_on_write() {
    let lake = lake().await;
    for (i, (name, partitioning)) in PARTITIONINGS.iter().enumerate() {
        let name = format!("v3_cow_{name}");
        create(&lake, &name, partitioning, ", 'format-version'='3'").await;
        model_check(&lake, &name, 0x3C6E_F372 + i as u64, 24).await;
        other_engines_agree(&lake, &name).await;
    }
}

/// The model check on format-version 3 tables, merge-on-read (deletion vectors): rows
/// and row lineage as in [`dml_model_check_v3_copy_on_write`], one deletion vector per
/// data file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_model_check_v3_merge_on_read() {
    let lake = lake().await;
    for (i, (name, partitioning)) in PARTITIONINGS.iter().enumerate() {
        let name = format!("v3_mor_{name}");
        create(
            &lake,
            &name,
            partitioning,
            ", 'format-version'='3', 'write.delete.mode'='merge-on-read', \
             'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'",
        )
        .await;
        let history = model_check(&lake, &name, 0xA54F_F53A + i as u64, 24).await;
        assert!(history.len() > 5, "{name}: {history:?}");
        let dvs = ok(
            &lake.ctx,
            &format!(
                "SELECT count(*) = count(DISTINCT referenced_data_file) AS one_each, \
                 count(*) > 0 AS any FROM ice.ns.\"{name}$files\" WHERE content = 1"
            ),
        )
        .await;
        assert!(!dvs.contains("false"), "{name}: {dvs}");
        other_engines_agree(&lake, &name).await;
    }
}

/// Files under the warehouse directory (data, delete and metadata files).
fn files_under(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                n += 1;
            }
        }
    }
    n
}

/// Plan `statement` now, run it later: the statement read the table as it was planned.
pub(crate) async fn planned(
    ctx: &SessionContext,
    statement: &str,
) -> Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    ctx.sql(statement)
        .await
        .expect("plan")
        .create_physical_plan()
        .await
        .expect("physical plan")
}

pub(crate) async fn execute_planned(
    ctx: &SessionContext,
    plan: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) -> Result<Vec<RecordBatch>, icefloe::Error> {
    collect(plan, ctx.task_ctx())
        .await
        .map_err(icefloe::Error::from)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_conflicts_follow_the_isolation_level() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        for level in ["serializable", "snapshot"] {
            let name = format!("{}_{level}", mode.replace('-', "_"));
            let t = format!("ice.ns.{name}");
            create(
                &lake,
                &name,
                "PARTITIONED BY (k)",
                &format!(
                    ", 'write.delete.mode'='{mode}', 'write.delete.isolation-level'='{level}'"
                ),
            )
            .await;
            ok(
                &lake.ctx,
                &format!(
                    "INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', -1.0), (3, 2, 'c', 1.0)"
                ),
            )
            .await;
            // a DELETE planned, then an INSERT into the partition it reads commits first
            let delete =
                planned(&lake.ctx, &format!("DELETE FROM {t} WHERE k = 1 AND d > 0")).await;
            ok(
                &lake.ctx,
                &format!("INSERT INTO {t} VALUES (4, 1, 'd', 5.0)"),
            )
            .await;
            let before = files_under(&lake.warehouse);
            let result = execute_planned(&lake.ctx, delete).await;
            let rows = ok(&lake.ctx, &format!("SELECT id FROM {t} ORDER BY id")).await;
            match level {
                "serializable" => {
                    let e = result.expect_err("a conflicting data file fails serializable");
                    assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{name}: {e}");
                    assert!(
                        e.to_string().contains("conflicting data file"),
                        "{name}: {e}"
                    );
                    // nothing of the failed statement stays
                    assert_eq!(files_under(&lake.warehouse), before, "{name}: files left");
                    assert!(rows.contains("| 1  |") && rows.contains("| 4  |"), "{rows}");
                }
                _ => {
                    result.unwrap_or_else(|e| panic!("{name}: snapshot isolation: {e}"));
                    // the DELETE's rows are gone; the concurrent INSERT's row stays
                    assert!(!rows.contains("| 1  |"), "{name}: {rows}");
                    assert!(
                        rows.contains("| 4  |") && rows.contains("| 2  |"),
                        "{name}: {rows}"
                    );
                }
            }
        }
    }
    // two DELETEs of overlapping rows: the second to commit fails, at either level
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = format!("twice_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "",
            &format!(", 'write.delete.mode'='{mode}', 'write.delete.isolation-level'='snapshot'"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 1, 'c', 3.0)"),
        )
        .await;
        let first = planned(&lake.ctx, &format!("DELETE FROM {t} WHERE id <= 2")).await;
        let second = planned(&lake.ctx, &format!("DELETE FROM {t} WHERE id >= 2")).await;
        execute_planned(&lake.ctx, first)
            .await
            .expect("first DELETE");
        let before = files_under(&lake.warehouse);
        let e = execute_planned(&lake.ctx, second)
            .await
            .expect_err("the second DELETE conflicts");
        assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{name}: {e}");
        assert_eq!(files_under(&lake.warehouse), before, "{name}: files left");
        let rows = ok(&lake.ctx, &format!("SELECT id FROM {t} ORDER BY id")).await;
        assert_eq!(rows, "+----+\n| id |\n+----+\n| 3  |\n+----+", "{name}");
    }
}

/// Serializable isolation on an unpartitioned table: a concurrent INSERT whose file's
/// column bounds exclude the statement's condition is no conflict (Java's
/// `validateAddedDataFiles` asks the file's metrics); one whose bounds include it fails
/// the statement, naming the INSERT's snapshot. Snapshot isolation takes both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_conflicts_ask_the_added_files_metrics() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        for level in ["serializable", "snapshot"] {
            let name = format!("metrics_{}_{level}", mode.replace('-', "_"));
            let t = format!("ice.ns.{name}");
            create(
                &lake,
                &name,
                "",
                &format!(
                    ", 'write.update.mode'='{mode}', 'write.update.isolation-level'='{level}'"
                ),
            )
            .await;
            ok(
                &lake.ctx,
                &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0)"),
            )
            .await;
            let select = format!("SELECT id, s, d FROM {t} ORDER BY id, s");

            // the INSERT's file holds id 100 only: it cannot match `id = 1`
            let update =
                planned(&lake.ctx, &format!("UPDATE {t} SET d = d + 1 WHERE id = 1")).await;
            ok(
                &lake.ctx,
                &format!("INSERT INTO {t} VALUES (100, 1, 'far', 0.0)"),
            )
            .await;
            execute_planned(&lake.ctx, update)
                .await
                .unwrap_or_else(|e| panic!("{name}: a file that cannot match conflicts: {e}"));
            assert_eq!(
                ok(&lake.ctx, &select).await,
                "+-----+-----+-----+\n| id  | s   | d   |\n+-----+-----+-----+\n\
                 | 1   | a   | 2.0 |\n| 2   | b   | 2.0 |\n| 100 | far | 0.0 |\n\
                 +-----+-----+-----+",
                "{name}"
            );

            // the INSERT's file holds id 1: under serializable isolation it conflicts
            let update = planned(
                &lake.ctx,
                &format!("UPDATE {t} SET d = d + 10 WHERE id = 1"),
            )
            .await;
            ok(
                &lake.ctx,
                &format!("INSERT INTO {t} VALUES (1, 1, 'near', 0.0)"),
            )
            .await;
            let inserted = current_snapshot(&lake.catalog, &format!("ns.{name}"))
                .await
                .expect("snapshot");
            let before = files_under(&lake.warehouse);
            let result = execute_planned(&lake.ctx, update).await;
            let rows = ok(&lake.ctx, &select).await;
            if level == "serializable" {
                let e = result.expect_err("a file that may match conflicts");
                assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{name}: {e}");
                assert!(
                    e.to_string().contains("conflicting data file")
                        && e.to_string().contains(&format!("snapshot {inserted}")),
                    "{name}: {e}"
                );
                assert_eq!(files_under(&lake.warehouse), before, "{name}: files left");
                assert_eq!(
                    current_snapshot(&lake.catalog, &format!("ns.{name}")).await,
                    Some(inserted),
                    "{name}"
                );
                assert!(rows.contains("| 1   | a    | 2.0 |"), "{name}: {rows}");
            } else {
                result.unwrap_or_else(|e| panic!("{name}: snapshot isolation: {e}"));
                // the row the UPDATE read is updated; the concurrent INSERT's row is not
                assert!(rows.contains("| 1   | a    | 12.0 |"), "{name}: {rows}");
            }
            assert!(rows.contains("| 1   | near | 0.0"), "{name}: {rows}");
            assert!(rows.contains("| 100 | far  | 0.0"), "{name}: {rows}");
        }
    }
}

/// Plan `statement` through `sql::execute` (so a correlated `DELETE`/`UPDATE` is planned
/// as its query, with its files) now, run it later with [`execute_planned`].
async fn planned_statement(
    ctx: &SessionContext,
    statement: &str,
) -> Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    icefloe::datafusion::sql::execute(ctx, statement)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"))
        .create_physical_plan()
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"))
}

/// The one count a statement's batches hold.
fn count_of(batches: &[RecordBatch]) -> String {
    pretty_format_batches(batches).expect("format").to_string()
}

/// A compaction committed while a statement runs (a `replace` snapshot) adds no rows and
/// deletes none: as Java's `validateAddedDataFiles` (operations `append`, `overwrite`)
/// and `validateNoNewDeletesForDataFiles` (`overwrite`, `delete`), its files are no
/// conflict, at either isolation level, unless it removed a file the statement changes,
/// or (v3) added a deletion vector for one: a data file has at most one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_conflicts_skip_compactions() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.o (id BIGINT)").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.o VALUES (3)").await;
    let name = "compacted";
    let t = format!("ice.ns.{name}");
    create(
        &lake,
        name,
        "PARTITIONED BY (k)",
        ", 'write.delete.mode'='merge-on-read'",
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (3, 2, 'c', 3.0), (4, 2, 'd', 4.0)"),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (9, 2, 'i', 9.0)"),
    )
    .await;
    let select = format!("SELECT id FROM {t} ORDER BY id");

    // a correlated DELETE reading k = 2 (serializable), then the file of id 9 in k = 2
    // compacted: a new data file in the partition the statement reads
    let delete = planned_statement(
        &lake.ctx,
        &format!(
            "DELETE FROM {t} WHERE k = 2 AND EXISTS (SELECT 1 FROM ice.ns.o WHERE o.id = {t}.id)"
        ),
    )
    .await;
    let rewrite = ok(
        &lake.ctx,
        &format!(
            "CALL ice.system.rewrite_data_files(table => 'ns.{name}', where => 'id = 9', \
             options => map('rewrite-all', 'true'))"
        ),
    )
    .await;
    assert!(
        rewrite.contains("| 1                          | 1 "),
        "{rewrite}"
    );
    let batches = execute_planned(&lake.ctx, delete)
        .await
        .unwrap_or_else(|e| panic!("a compaction conflicts: {e}"));
    assert_eq!(
        count_of(&batches),
        "+-------+\n| count |\n+-------+\n| 1     |\n+-------+"
    );
    assert_eq!(
        ok(&lake.ctx, &select).await,
        "+----+\n| id |\n+----+\n| 1  |\n| 4  |\n| 9  |\n+----+"
    );

    // a DELETE of id 4, then the position delete file of id 3 (same data file) rewritten
    let delete = planned(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 4")).await;
    let rewrite = ok(
        &lake.ctx,
        &format!(
            "CALL ice.system.rewrite_position_delete_files(table => 'ns.{name}', \
             options => map('rewrite-all', 'true'))"
        ),
    )
    .await;
    assert!(
        rewrite.contains("| 1                            | 1 "),
        "{rewrite}"
    );
    execute_planned(&lake.ctx, delete)
        .await
        .unwrap_or_else(|e| panic!("a rewrite of position deletes conflicts: {e}"));
    assert_eq!(
        ok(&lake.ctx, &select).await,
        "+----+\n| id |\n+----+\n| 1  |\n| 9  |\n+----+"
    );
    other_engines_agree(&lake, name).await;

    // v3: a compaction that folds a v2 position delete file into a deletion vector for
    // the file a DELETE gives one too conflicts (two vectors for one data file)
    let name = "folded";
    let t = format!("ice.ns.{name}");
    create(&lake, name, "", ", 'write.delete.mode'='merge-on-read'").await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 1, 'c', 3.0)"),
    )
    .await;
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 1")).await;
    ok(
        &lake.ctx,
        &format!("ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')"),
    )
    .await;
    let delete = planned(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 2")).await;
    ok(
        &lake.ctx,
        &format!(
            "CALL ice.system.rewrite_position_delete_files(table => 'ns.{name}', \
             options => map('rewrite-all', 'true'))"
        ),
    )
    .await;
    let folded = current_snapshot(&lake.catalog, &format!("ns.{name}"))
        .await
        .expect("snapshot");
    let e = execute_planned(&lake.ctx, delete)
        .await
        .expect_err("a deletion vector a compaction added conflicts");
    assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{e}");
    assert!(
        e.to_string().contains("conflicting delete file")
            && e.to_string().contains(&format!("snapshot {folded}")),
        "{e}"
    );
    assert_eq!(
        ok(&lake.ctx, &format!("SELECT id FROM {t} ORDER BY id")).await,
        "+----+\n| id |\n+----+\n| 2  |\n| 3  |\n+----+"
    );
}

/// `expire_snapshots` may remove the snapshot a statement started from while it runs:
/// the statement still commits when the snapshots since then are all there (Java
/// `validationHistory`: the oldest one's parent is the starting snapshot), checked
/// against them, and fails naming the starting snapshot when some were expired too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_commits_after_its_starting_snapshot_expired() {
    let lake = lake().await;
    ok(&lake.ctx, "CREATE TABLE ice.ns.o (id BIGINT)").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.o VALUES (1), (3)").await;
    let expire = |name: &str| {
        format!(
            "CALL ice.system.expire_snapshots(table => 'ns.{name}', \
             older_than => TIMESTAMP '2100-01-01 00:00:00', retain_last => 1)"
        )
    };
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = format!("expired_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "PARTITIONED BY (k)",
            &format!(", 'write.delete.mode'='{mode}'"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0)"),
        )
        .await;
        let started = current_snapshot(&lake.catalog, &format!("ns.{name}")).await;
        let delete = |t: &str| {
            format!(
                "DELETE FROM {t} WHERE k = 1 AND EXISTS (SELECT 1 FROM ice.ns.o WHERE o.id = {t}.id)"
            )
        };
        // one INSERT (into k = 2: no conflict), then the starting snapshot expired
        let plan = planned_statement(&lake.ctx, &delete(&t)).await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (4, 2, 'd', 4.0)"),
        )
        .await;
        ok(&lake.ctx, &expire(&name)).await;
        let batches = execute_planned(&lake.ctx, plan)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            count_of(&batches),
            "+-------+\n| count |\n+-------+\n| 1     |\n+-------+",
            "{name}"
        );
        assert_eq!(
            ok(&lake.ctx, &format!("SELECT id FROM {t} ORDER BY id")).await,
            "+----+\n| id |\n+----+\n| 2  |\n| 3  |\n| 4  |\n+----+",
            "{name}"
        );
        assert_ne!(
            current_snapshot(&lake.catalog, &format!("ns.{name}")).await,
            started
        );

        // two INSERTs, the older of them expired with the starting snapshot: the history
        // between them is unknown
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (1, 1, 'again', 1.0)"),
        )
        .await;
        let started = current_snapshot(&lake.catalog, &format!("ns.{name}"))
            .await
            .expect("snapshot");
        let plan = planned_statement(&lake.ctx, &delete(&t)).await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (5, 2, 'e', 5.0)"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (6, 2, 'f', 6.0)"),
        )
        .await;
        ok(&lake.ctx, &expire(&name)).await;
        let e = execute_planned(&lake.ctx, plan)
            .await
            .expect_err("unknown history");
        assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{name}: {e}");
        assert!(
            e.to_string().contains(&format!(
                "starting snapshot {started} is no longer an ancestor"
            )),
            "{name}: {e}"
        );
        assert_eq!(
            ok(&lake.ctx, &format!("SELECT id FROM {t} ORDER BY id")).await,
            "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 3  |\n| 4  |\n| 5  |\n| 6  |\n+----+",
            "{name}"
        );
        other_engines_agree(&lake, &name).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_refusals_leave_the_table_unchanged() {
    let lake = lake().await;
    create(
        &lake,
        "t",
        "PARTITIONED BY (k)",
        ", 'write.delete.mode'='merge-on-read'",
    )
    .await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.0), (2, 2, 'b', 2.0)",
    )
    .await;
    let before = current_snapshot(&lake.catalog, "ns.t").await;
    // a value of the wrong type
    let e = run(
        &lake.ctx,
        "UPDATE ice.ns.t SET k = 'not a number' WHERE id = 1",
    )
    .await
    .expect_err("wrong type");
    assert!(
        e.to_lowercase().contains("cast") || e.contains("not a number"),
        "{e}"
    );
    // an unknown column
    let e = run(&lake.ctx, "UPDATE ice.ns.t SET nope = 1")
        .await
        .expect_err("no column");
    assert!(e.contains("nope"), "{e}");
    assert_eq!(current_snapshot(&lake.catalog, "ns.t").await, before);
    // a table read at a snapshot is not written
    let e = run(
        &lake.ctx,
        &format!(
            "DELETE FROM ice.ns.\"t@{}\" WHERE id = 1",
            before.expect("snapshot")
        ),
    )
    .await
    .expect_err("snapshot");
    assert!(e.contains("snapshot"), "{e}");
    // conditions never true change nothing (DataFusion 55 alone would hand the table no
    // filter at all, i.e. every row: see dml::guard)
    for q in [
        "DELETE FROM ice.ns.t WHERE false",
        "DELETE FROM ice.ns.t WHERE NULL",
        "DELETE FROM ice.ns.t WHERE id = 1 AND id = 2",
        "UPDATE ice.ns.t SET d = 0 WHERE 1 = 2",
    ] {
        assert_eq!(
            ok(&lake.ctx, q).await,
            "+-------+\n| count |\n+-------+\n| 0     |\n+-------+",
            "{q}"
        );
    }
    assert_eq!(current_snapshot(&lake.catalog, "ns.t").await, before);
    let rows = ok(&lake.ctx, "SELECT id, k FROM ice.ns.t ORDER BY id").await;
    assert_eq!(
        rows,
        "+----+---+\n| id | k |\n+----+---+\n| 1  | 1 |\n| 2  | 2 |\n+----+---+"
    );
    drop(lake.dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_whole_partitions_are_dropped_without_reading() {
    let lake = lake().await;
    create(
        &lake,
        "t",
        "PARTITIONED BY (k)",
        ", 'write.delete.mode'='merge-on-read'",
    )
    .await;
    ok(&lake.ctx, "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', NULL), (4, NULL, 'd', 4.0)").await;
    // k <> 1 keeps the NULL partition (NULL <> 1 is not true)
    let count = ok(&lake.ctx, "DELETE FROM ice.ns.t WHERE k <> 1").await;
    assert!(count.contains("| 1     |"), "{count}");
    let rows = ok(&lake.ctx, "SELECT id FROM ice.ns.t ORDER BY id").await;
    assert_eq!(
        rows,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 4  |\n+----+"
    );
    // an identity-partition condition removes files in metadata: no delete file written
    let files = ok(
        &lake.ctx,
        "SELECT content, count(*) AS n FROM ice.ns.\"t$files\" GROUP BY content ORDER BY content",
    )
    .await;
    assert_eq!(
        files,
        "+---------+---+\n| content | n |\n+---------+---+\n| 0       | 2 |\n+---------+---+"
    );
    let op = ok(
        &lake.ctx,
        "SELECT operation FROM ice.ns.\"t$snapshots\" ORDER BY committed_at DESC LIMIT 1",
    )
    .await;
    assert!(op.contains("delete"), "{op}");
}

/// Commit an equality delete file on `id` (field id 1) deleting `ids` from `ns.<name>`,
/// through the `RowDelta` API (as an upsert-style writer would).
async fn equality_delete(lake: &Lake, name: &str, ids: &[i64]) {
    equality_delete_on(lake, name, "id", ids).await;
}

/// Commit an equality delete file on `column` (a `BIGINT`, field id 1) deleting `ids`
/// from `ns.<name>`, through the `RowDelta` API.
pub(crate) async fn equality_delete_on(lake: &Lake, name: &str, column: &str, ids: &[i64]) {
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
    use datafusion::parquet::arrow::ArrowWriter;
    use icefloe::spec::DataContentType;
    use icefloe::transaction::{RowDelta, Transaction};

    let ident = TableIdent::parse(&format!("ns.{name}"));
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let m = table.metadata();
    let dir = lake.dir.path().join("eq-deletes");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("{name}-{}.parquet", ids.len()));
    let schema = Arc::new(ArrowSchema::new(vec![Field::new(
        column,
        DataType::Int64,
        false,
    )
    .with_metadata(HashMap::from([(
        "PARQUET:field_id".to_string(),
        "1".to_string(),
    )]))]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![Arc::new(Int64Array::from(ids.to_vec()))],
    )
    .expect("batch");
    let mut w = ArrowWriter::try_new(std::fs::File::create(&path).expect("file"), schema, None)
        .expect("writer");
    w.write(&batch).expect("write");
    w.close().expect("close");
    let location = format!("file://{}", path.display());
    let file = icefloe::write::data_file_from_parquet(
        &path,
        &location,
        m.current_schema(),
        vec![],
        DataContentType::EqualityDeletes,
        vec![1],
    )
    .expect("delete file");
    let delta = RowDelta::new(m.current_snapshot_id)
        .add_deletes(m.default_spec_id, vec![file])
        .expect("deletes");
    Transaction::new(Arc::clone(&lake.catalog), ident, table.clone())
        .add_action(delta)
        .commit()
        .await
        .expect("commit equality deletes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_on_tables_with_equality_deletes() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = format!("eq_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "",
            &format!(", 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}'"),
        )
        .await;
        ok(&lake.ctx, &format!("INSERT INTO {t} SELECT value, CAST(value % 3 AS INT), NULL, value * 1.0 FROM generate_series(1, 10)")).await;
        equality_delete(&lake, &name, &[2, 5]).await;
        let rows = ok(
            &lake.ctx,
            &format!("SELECT count(*) AS n, sum(id) AS s FROM {t}"),
        )
        .await;
        assert!(rows.contains("| 8 | 48 |"), "{name}: {rows}");
        // rows the equality deletes removed are neither counted nor brought back
        let count = ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id <= 3")).await;
        assert!(count.contains("| 2     |"), "{name}: {count}");
        let count = ok(&lake.ctx, &format!("UPDATE {t} SET d = -d WHERE k = 2")).await;
        // k = id % 3 = 2 for ids 8 (5 and 2 are deleted)
        assert!(count.contains("| 1     |"), "{name}: {count}");
        let rows = ok(&lake.ctx, &format!("SELECT id, d FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+------+\n| id | d    |\n+----+------+\n| 4  | 4.0  |\n| 6  | 6.0  |\n\
             | 7  | 7.0  |\n| 8  | -8.0 |\n| 9  | 9.0  |\n| 10 | 10.0 |\n+----+------+",
            "{name}"
        );
        // the copy-on-write rewrite leaves no data file the equality deletes apply to
        engines_agree(&lake, &name, mode == "copy-on-write").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_into_both_modes() {
    let lake = lake().await;
    for (mode, partitioning) in [
        ("copy-on-write", ""),
        ("merge-on-read", ""),
        ("copy-on-write", "PARTITIONED BY (k)"),
        ("merge-on-read", "PARTITIONED BY (k)"),
    ] {
        let name = format!(
            "merge_{}_{}",
            mode.replace('-', "_"),
            if partitioning.is_empty() {
                "plain"
            } else {
                "by_k"
            }
        );
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            partitioning,
            &format!(", 'write.merge.mode'='{mode}'"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 1, 'b', 2.0), (3, 2, 'c', 3.0), \
                 (4, 2, 'd', 4.0), (5, NULL, 'e', 5.0)"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (6, 3, 'f', 6.0)"),
        )
        .await;
        // matched: 1 updated (moving partitions), 2 deleted by its AND condition, 3
        // matched by a clause-less row that no clause takes; not matched: 7 inserted;
        // not matched by source: 4 and 5 updated, 6 deleted
        let count = ok(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING (VALUES (1, 'x', 10.0), (2, 'y', -1.0), (3, 'z', NULL), \
                 (7, 'w', 70.0)) AS s(id, s, d) ON t.id = s.id \
                 WHEN MATCHED AND s.d < 0 THEN DELETE \
                 WHEN MATCHED AND s.d > 0 THEN UPDATE SET d = s.d, s = s.s, k = 9 \
                 WHEN NOT MATCHED THEN INSERT (id, s, d) VALUES (s.id, s.s, s.d) \
                 WHEN NOT MATCHED BY SOURCE AND t.id = 6 THEN DELETE \
                 WHEN NOT MATCHED BY SOURCE THEN UPDATE SET d = -t.d"
            ),
        )
        .await;
        assert!(count.contains("| 6     |"), "{name}: {count}");
        let rows = ok(
            &lake.ctx,
            &format!("SELECT id, k, s, d FROM {t} ORDER BY id"),
        )
        .await;
        assert_eq!(
            rows,
            "+----+---+---+------+\n\
             | id | k | s | d    |\n\
             +----+---+---+------+\n\
             | 1  | 9 | x | 10.0 |\n\
             | 3  | 2 | c | 3.0  |\n\
             | 4  | 2 | d | -4.0 |\n\
             | 5  |   | e | -5.0 |\n\
             | 7  |   | w | 70.0 |\n\
             +----+---+---+------+",
            "{name}"
        );
        // a target row matched twice is an error, and nothing is committed
        let before = current_snapshot(&lake.catalog, &format!("ns.{name}")).await;
        let e = run(
            &lake.ctx,
            &format!(
                "MERGE INTO {t} t USING (VALUES (1, 1.0), (1, 2.0)) AS s(id, d) ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET d = s.d"
            ),
        )
        .await
        .expect_err("two source rows for one target row");
        assert!(e.contains("more than one row of the source"), "{name}: {e}");
        assert_eq!(
            current_snapshot(&lake.catalog, &format!("ns.{name}")).await,
            before
        );
        other_engines_agree(&lake, &name).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_refuses_what_datafusion_would_plan_as_every_row() {
    let lake = lake().await;
    create(&lake, "t", "", ", 'write.delete.mode'='merge-on-read'").await;
    create(&lake, "o", "", "").await;
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.t VALUES (1, 1, 'a', 1.0), (2, 2, 'b', NULL), (3, 3, 'c', 2.0)",
    )
    .await;
    ok(&lake.ctx, "INSERT INTO ice.ns.o VALUES (1, 1, 'x', 0.0)").await;
    let before = current_snapshot(&lake.catalog, "ns.t").await;
    // DataFusion 55 turns these correlated subqueries into joins and then hands the
    // table no filter: planned by DataFusion alone (`ctx.sql`, the guard installed), they
    // are refused (`sql::execute` runs uncorrelated ones first and plans correlated ones
    // as queries: dml_statements, and below)
    for q in [
        "DELETE FROM ice.ns.t WHERE id IN (SELECT id FROM ice.ns.o WHERE o.k = t.k)",
        "DELETE FROM ice.ns.t WHERE id NOT IN (SELECT id FROM ice.ns.o WHERE o.s = t.s)",
        "UPDATE ice.ns.t SET d = 0 WHERE EXISTS (SELECT 1 FROM ice.ns.o WHERE o.id = t.id)",
        "DELETE FROM ice.ns.t WHERE id IN (SELECT id FROM ice.ns.o)",
    ] {
        let e = match lake.ctx.sql(q).await {
            Ok(df) => df.collect().await.expect_err(q),
            Err(e) => e,
        };
        assert!(e.to_string().contains("not supported"), "{q}: {e}");
    }
    assert_eq!(current_snapshot(&lake.catalog, "ns.t").await, before);
    // a session without the guard is refused instead of trusted
    let plain = context();
    attach(&plain, "ice", Arc::clone(&lake.catalog)).await;
    let e = plain
        .sql("DELETE FROM ice.ns.t WHERE id = 1")
        .await
        .expect("logical plan")
        .collect()
        .await
        .expect_err("no guard");
    assert!(e.to_string().contains("install_dml_guard"), "{e}");
    // metadata tables are read-only
    for q in [
        "DELETE FROM ice.ns.\"t$files\"",
        "UPDATE ice.ns.\"t$snapshots\" SET operation = 'x'",
    ] {
        let e = run(&lake.ctx, q).await.expect_err(q);
        assert!(e.contains("read-only"), "{q}: {e}");
    }
    assert_eq!(current_snapshot(&lake.catalog, "ns.t").await, before);
    let rows = ok(&lake.ctx, "SELECT id FROM ice.ns.t ORDER BY id").await;
    assert_eq!(
        rows,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 3  |\n+----+"
    );
    // through `sql::execute` the correlated one changes the rows it matches
    let q = "DELETE FROM ice.ns.t WHERE id IN (SELECT id FROM ice.ns.o WHERE o.k = t.k)";
    assert_eq!(count(&lake.ctx, q).await, 1, "{q}");
    let rows = ok(&lake.ctx, "SELECT id FROM ice.ns.t ORDER BY id").await;
    assert_eq!(rows, "+----+\n| id |\n+----+\n| 2  |\n| 3  |\n+----+");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_counts_the_rows_it_changes_even_for_volatile_conditions() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = format!("vol_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "",
            &format!(", 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}'"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} SELECT value, 0, NULL, 0.0 FROM generate_series(1, 2000)"),
        )
        .await;
        let deleted = count(&lake.ctx, &format!("DELETE FROM {t} WHERE random() < 0.5")).await;
        let left = count(&lake.ctx, &format!("SELECT count(*) FROM {t}")).await;
        assert_eq!(deleted + left, 2000, "{name}");
        let updated = count(
            &lake.ctx,
            &format!("UPDATE {t} SET k = 1 WHERE random() < 0.5"),
        )
        .await;
        let ones = count(&lake.ctx, &format!("SELECT count(*) FROM {t} WHERE k = 1")).await;
        assert_eq!(updated, ones, "{name}");
    }
    // a column named like a hidden one is an error, not a crash
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.odd (id BIGINT, __icefloe_pos BIGINT) TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    ok(&lake.ctx, "INSERT INTO ice.ns.odd VALUES (1, 100)").await;
    let e = run(&lake.ctx, "DELETE FROM ice.ns.odd WHERE id = 1")
        .await
        .expect_err("reserved");
    assert!(e.contains("__icefloe_pos") && e.contains("reserves"), "{e}");
}

/// DELETE and UPDATE on tables PyIceberg wrote (one evolved: renamed column, int → long,
/// added column, an earlier copy-on-write delete), in both modes set with `ALTER TABLE`;
/// PyIceberg and DuckDB read the results as icefloe does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_on_tables_pyiceberg_wrote() {
    let Some((_tmp, db, warehouse, written, ctx)) = crate::interop::written().await else {
        return;
    };
    let ns = written["namespace"]
        .as_str()
        .expect("namespace")
        .to_string();
    for (table, mode, column, condition) in [
        ("types_v2", "merge-on-read", "s", "id % 2 = 0"),
        ("evolve_v2", "copy-on-write", "note", "id % 2 = 0"),
        // the same table again, over the copy-on-write change
        ("evolve_v2", "merge-on-read", "note", "id % 2 = 1"),
    ] {
        let t = format!("ice.{ns}.{table}");
        let what = format!("{table} ({mode})");
        ok(
            &ctx,
            &format!(
                "ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode'='{mode}', \
                 'write.update.mode'='{mode}')"
            ),
        )
        .await;
        let before = count(&ctx, &format!("SELECT count(*) FROM {t}")).await;
        let deleted = count(&ctx, &format!("DELETE FROM {t} WHERE {condition}")).await;
        let after = count(&ctx, &format!("SELECT count(*) FROM {t}")).await;
        assert!(deleted > 0, "{what}: nothing deleted");
        assert_eq!(after, before - deleted, "{what}");
        let updated = count(
            &ctx,
            &format!("UPDATE {t} SET {column} = 'changed' WHERE id % 3 = 0"),
        )
        .await;
        let changed = count(
            &ctx,
            &format!("SELECT count(*) FROM {t} WHERE {column} = 'changed'"),
        )
        .await;
        assert_eq!(updated, changed, "{what}");
        let ident = format!("{ns}.{table}");
        let pyi = pyiceberg_read(&db, &warehouse, &ident);
        let ours = icefloe_rows(&ctx, &t, &pyi["schema"]).await;
        assert_eq!(ours.len() as i64, after, "{what}");
        assert_same_rows(
            &format!("{what}: icefloe vs PyIceberg"),
            pyi["rows"].as_array().expect("rows"),
            &ours,
        );
        let duck = duckdb_read(pyi["metadata_location"].as_str().expect("location"));
        assert_same_rows(
            &format!("{what}: icefloe vs DuckDB"),
            duck["rows"].as_array().expect("rows"),
            &ours,
        );
    }
}

/// A condition repeating a subexpression (`id % 3` twice): DataFusion's optimizer moves
/// it into a projection (`__common_expr_N`) the table's filters cannot name; the DML
/// guard puts it back, and the statements change exactly the matching rows (in both
/// modes, v2 and v3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_conditions_with_common_subexpressions() {
    let lake = lake().await;
    for (name, properties) in [
        ("cse_cow", ""),
        (
            "cse_mor_v3",
            ", 'format-version'='3', 'write.delete.mode'='merge-on-read', \
             'write.update.mode'='merge-on-read'",
        ),
    ] {
        create(&lake, name, "", properties).await;
        let t = format!("ice.ns.{name}");
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} SELECT value, 1, 'a', 0.0 FROM generate_series(1, 9)"),
        )
        .await;
        let n = count(
            &lake.ctx,
            &format!("UPDATE {t} SET d = d + 1 WHERE (id % 3 = 1 OR id % 3 = 2) AND id % 3 <> 2"),
        )
        .await;
        assert_eq!(n, 3, "{name}: ids 1, 4, 7");
        let n = count(
            &lake.ctx,
            &format!("DELETE FROM {t} WHERE (id % 3 = 1 OR id % 3 = 0)"),
        )
        .await;
        assert_eq!(n, 6, "{name}");
        let rows = ok(&lake.ctx, &format!("SELECT id, d FROM {t} ORDER BY id")).await;
        assert_eq!(
            rows,
            "+----+-----+\n| id | d   |\n+----+-----+\n| 2  | 0.0 |\n| 5  | 0.0 |\n| 8  | 0.0 |\n+----+-----+",
            "{name}"
        );
    }
}

/// Conditions and `SET` values reading struct fields (`st.a`, `st['b']`, `st.inner.x`),
/// alone and mixed with top-level columns: DataFusion's optimizer moves the field
/// accesses into a projection (`__datafusion_extracted_N`) under the filter, a name the
/// table does not have; the DML guard puts them back, and `DELETE`, `UPDATE` and
/// `MERGE` change exactly the rows Spark would (both modes, v2 and v3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_conditions_and_values_reading_struct_fields() {
    let lake = lake().await;
    for (version, mode) in [
        (2, "copy-on-write"),
        (2, "merge-on-read"),
        (3, "copy-on-write"),
        (3, "merge-on-read"),
    ] {
        let name = format!("struct_v{version}_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE {t} (id INT, st STRUCT<a INT, b STRING, inner STRUCT<x INT>>) \
                 TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='{mode}', \
                 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
            ),
        )
        .await;
        let values: Vec<String> = (1..=6)
            .map(|i| {
                let b = char::from(b'a' + i as u8 - 1);
                format!(
                    "({i}, named_struct('a', {i}, 'b', '{b}', 'inner', named_struct('x', {})))",
                    i * 10
                )
            })
            .collect();
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES {}", values.join(", ")),
        )
        .await;
        for (statement, changed) in [
            ("DELETE FROM {t} WHERE st.a = 1", 1),
            ("DELETE FROM {t} WHERE st['b'] = 'f'", 1),
            ("UPDATE {t} SET id = 0 WHERE st.b = 'b'", 1),
            ("UPDATE {t} SET id = st.a + 10 WHERE id = 3", 1),
            (
                "UPDATE {t} SET id = st.inner.x + st.a WHERE st.inner.x = 40 AND id = 4",
                1,
            ),
            ("DELETE FROM {t} WHERE st.inner.x > 35 AND id > 100", 0),
            (
                "UPDATE {t} SET st = named_struct('a', st.a * 2, 'b', upper(st.b), 'inner', \
                 st.inner) WHERE st.a = 3 OR st.inner.x = 50",
                2,
            ),
            // 0 (a = 2) updated, 44 (a = 4) deleted, 9 inserted, 5 updated by source
            (
                "MERGE INTO {t} t USING (VALUES (2, 100), (4, 200), (9, 900)) AS s(k, v) \
                 ON t.st.a = s.k \
                 WHEN MATCHED AND t.st.inner.x = 40 THEN DELETE \
                 WHEN MATCHED THEN UPDATE SET id = s.v + t.st.inner.x \
                 WHEN NOT MATCHED THEN INSERT (id, st) VALUES (s.k, named_struct('a', s.v, \
                 'b', 'n', 'inner', named_struct('x', 0))) \
                 WHEN NOT MATCHED BY SOURCE AND t.st.b = 'E' THEN UPDATE SET \
                 st = named_struct('a', t.st.a + 1, 'b', t.st.b, 'inner', t.st.inner)",
                4,
            ),
        ] {
            let statement = statement.replace("{t}", &t);
            let n = count(&lake.ctx, &statement).await;
            assert_eq!(n, changed, "{name}: {statement}");
        }
        let rows = ok(
            &lake.ctx,
            &format!("SELECT id, st.a AS a, st.b AS b, st.inner.x AS x FROM {t} ORDER BY id"),
        )
        .await;
        assert_eq!(
            rows,
            "+-----+-----+---+----+\n\
             | id  | a   | b | x  |\n\
             +-----+-----+---+----+\n\
             | 5   | 11  | E | 50 |\n\
             | 9   | 900 | n | 0  |\n\
             | 13  | 6   | C | 30 |\n\
             | 120 | 2   | b | 20 |\n\
             +-----+-----+---+----+",
            "{name}"
        );
    }
}

/// A `MERGE` without `WHEN NOT MATCHED BY SOURCE` reads, and checks conflicts by, the
/// conjuncts of its `ON` condition over target columns alone (`t.k = 1` here), as Spark
/// pushes them into the target's scan: the files of partition `k = 2` are not read, and
/// under serializable isolation a concurrent `INSERT` into `k = 2` no longer fails it,
/// while one into `k = 1` still does. With `WHEN NOT MATCHED BY SOURCE` every target row
/// may change: the whole table is read and any concurrent file conflicts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_merge_reads_and_conflicts_by_its_target_conditions() {
    let lake = lake().await;
    for mode in ["copy-on-write", "merge-on-read"] {
        let name = format!("merge_on_{}", mode.replace('-', "_"));
        let t = format!("ice.ns.{name}");
        create(
            &lake,
            &name,
            "PARTITIONED BY (k)",
            &format!(", 'write.merge.mode'='{mode}'"),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (1, 1, 'a', 1.0), (2, 2, 'b', 2.0), (3, 1, 'c', 3.0)"),
        )
        .await;
        let select = format!("SELECT id, k, s, d FROM {t} ORDER BY id, s");
        let merge = |d: f64| {
            format!(
                "MERGE INTO {t} t USING (SELECT * FROM (VALUES (1, 'x'), (2, 'y'), (4, 'z')) \
                 AS v(id, s)) src ON t.id = src.id AND t.k = 1 \
                 WHEN MATCHED THEN UPDATE SET d = {d} \
                 WHEN NOT MATCHED THEN INSERT (id, k, s, d) VALUES (src.id, 1, src.s, 0.0)"
            )
        };
        // id 2 is in k = 2: not matched, so inserted into k = 1; id 1 updated; id 4 inserted
        let plan = planned(&lake.ctx, &merge(10.0)).await;
        let text = datafusion::physical_plan::displayable(plan.as_ref())
            .indent(true)
            .to_string();
        assert!(
            !text.contains("k=2"),
            "{name}: the k = 2 file is read:\n{text}"
        );
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (5, 2, 'far', 0.0)"),
        )
        .await;
        execute_planned(&lake.ctx, plan)
            .await
            .unwrap_or_else(|e| panic!("{name}: an INSERT into k = 2 conflicts: {e}"));
        assert_eq!(
            ok(&lake.ctx, &select).await,
            "+----+---+-----+------+\n| id | k | s   | d    |\n+----+---+-----+------+\n\
             | 1  | 1 | a   | 10.0 |\n| 2  | 2 | b   | 2.0  |\n| 2  | 1 | y   | 0.0  |\n\
             | 3  | 1 | c   | 3.0  |\n| 4  | 1 | z   | 0.0  |\n| 5  | 2 | far | 0.0  |\n\
             +----+---+-----+------+",
            "{name}"
        );
        // a concurrent INSERT into k = 1 may hold matching rows: it conflicts
        let plan = planned(&lake.ctx, &merge(20.0)).await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (6, 1, 'near', 0.0)"),
        )
        .await;
        let e = execute_planned(&lake.ctx, plan)
            .await
            .expect_err("an INSERT into k = 1 conflicts");
        assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{name}: {e}");
        // with NOT MATCHED BY SOURCE every target row may change
        let by_source = format!(
            "MERGE INTO {t} t USING (SELECT 1 AS id) src ON t.id = src.id AND t.k = 1 \
             WHEN NOT MATCHED BY SOURCE AND t.k = 2 THEN DELETE"
        );
        let plan = planned(&lake.ctx, &by_source).await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES (7, 2, 'late', 0.0)"),
        )
        .await;
        let e = execute_planned(&lake.ctx, plan)
            .await
            .expect_err("NOT MATCHED BY SOURCE conflicts with any file");
        assert_eq!(e.kind(), ErrorKind::ValidationFailed, "{name}: {e}");
        ok(&lake.ctx, &by_source).await;
        assert_eq!(
            ok(
                &lake.ctx,
                &format!("SELECT count(*) AS n FROM {t} WHERE k = 2")
            )
            .await,
            "+---+\n| n |\n+---+\n| 0 |\n+---+",
            "{name}"
        );
    }
}

/// `ice.ns.<name>` (`columns`) holding `rows` (a `VALUES` list), format `version`, in
/// `mode` for every row-level statement.
pub(crate) async fn mode_table(
    lake: &Lake,
    name: &str,
    columns: &str,
    rows: &str,
    mode: &str,
    version: u8,
) {
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} ({columns}) TBLPROPERTIES ('format-version'='{version}', \
             'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', \
             'write.merge.mode'='{mode}')"
        ),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO ice.ns.{name} VALUES {rows}"),
    )
    .await;
}

/// The count of `ice.ns.<name>`'s snapshots, as a printed table.
pub(crate) async fn snapshot_count(lake: &Lake, name: &str) -> String {
    ok(
        &lake.ctx,
        &format!("SELECT count(*) FROM ice.ns.\"{name}$snapshots\""),
    )
    .await
}
