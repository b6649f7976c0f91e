//! Writes (issue 11): `INSERT INTO` throughput of TPC-H `lineitem` into icefloe tables
//! of a SQLite catalog against DataFusion writing the same rows as plain Parquet, and
//! PyIceberg's `append`; then commit latency and retries with concurrent appenders.
//!
//! ```text
//! cargo bench --bench insert -- --sf 1 [--iterations 3] [--python PATH | --no-python]
//!     [--writers 8] [--commits 100] [--retries 20] [--no-throughput] [--no-commits]
//!     [--data DIR] [--tpchgen PATH] [--parts 4]
//!     [--sides copy,insert,insert-month,insert-month-none,copy-month,pyiceberg,pyiceberg-month]
//! ```
//!
//! `--sides` runs only the sides named (`copy`, the floor, always among them), e.g. to
//! profile one of them.
//!
//! Data: `tpchgen-cli` writes `DATA/tpch-sfN/parquet/lineitem/lineitem.<k>.parquet`
//! (`--parts` files, the layout and cache of `side_by_side.rs`), made once and reused.
//! Every run writes into a fresh temp dir under `DATA/tmp` (same file system), removed
//! afterwards.
//!
//! Throughput: one `SessionContext` per run with `lineitem` registered as a DataFusion
//! Parquet table over those files (`datafusion.public.lineitem`) and the catalog
//! registered as `cat` (`IcebergCatalogProvider`). The sides, each timed from SQL text
//! to the collected result (planning, writing, committing):
//!
//! * icefloe, unpartitioned: `INSERT INTO cat.ns.t SELECT * FROM lineitem`;
//! * icefloe, `month(l_shipdate)`: the same into a table partitioned by month (rows
//!   hash-distributed by month before the writers, `write.distribution-mode` `hash`,
//!   the default for a partitioned table);
//! * icefloe, `month(l_shipdate)`, `write.distribution-mode` `none`: no shuffle, each
//!   writer fans out to every month it sees;
//! * DataFusion, the floor: `COPY (SELECT * FROM lineitem) TO '<dir>/' STORED AS PARQUET`
//!   with `datafusion.execution.parquet.compression = 'zstd(3)'`, icefloe's default codec
//!   (`write.parquet.compression-codec` zstd, level 3 as parquet-mr);
//! * DataFusion, partitioned (a reference): `COPY (SELECT *, <yyyymm> AS ship_month …)
//!   TO '<dir>/' STORED AS PARQUET PARTITIONED BY (ship_month)`;
//! * PyIceberg 0.12 (`benches/pyiceberg_append.py`, one process per iteration): only
//!   `table.append(pa_table)` is timed, unpartitioned and by month.
//!
//! The sides run in a rotated order each iteration (A B C …, B C … A, …) so drift hits
//! all of them; the figures are medians.
//!
//! Commits: `--writers` tokio tasks, each with its own `SqlCatalog::open` connection,
//! append `--commits` snapshots in total to one table through `Transaction` +
//! `AppendFiles` (one tiny `DataFile` each, not written to storage). The catalog
//! connection is wrapped to count `commit_table` calls (attempts) and conflicts; each
//! `Transaction::commit` call is timed (its retries and back-off included).

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use common::{machine, median, parquet_files, prepare_lineitem, Args, BoxError};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableCreation, TableIdent};
use icefloe::datafusion::{register_iceberg_options, IcebergCatalogProvider};
use icefloe::spec::{DataContentType, TableCommit};
use icefloe::table::Table;
use icefloe::transaction::{AppendFiles, Transaction};
use icefloe::write::{empty_data_file, schema_from_parquet};

/// Total size of the files under `dir` (recursively), and their count.
fn dir_size(dir: &Path) -> (u64, usize) {
    let mut total = (0, 0);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                let (b, n) = dir_size(&p);
                total.0 += b;
                total.1 += n;
            } else if let Ok(m) = e.metadata() {
                total.0 += m.len();
                total.1 += 1;
            }
        }
    }
    total
}

/// One timed write.
#[derive(Debug, Clone, Copy)]
struct Run {
    time: Duration,
    rows: u64,
    bytes: u64,
    files: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    IcefloeUnpartitioned,
    IcefloeMonth,
    IcefloeMonthNone,
    DataFusionCopy,
    DataFusionCopyMonth,
    PyIcebergUnpartitioned,
    PyIcebergMonth,
}

impl Side {
    /// The side's name for `--sides`.
    fn name(self) -> &'static str {
        match self {
            Side::IcefloeUnpartitioned => "insert",
            Side::IcefloeMonth => "insert-month",
            Side::IcefloeMonthNone => "insert-month-none",
            Side::DataFusionCopy => "copy",
            Side::DataFusionCopyMonth => "copy-month",
            Side::PyIcebergUnpartitioned => "pyiceberg",
            Side::PyIcebergMonth => "pyiceberg-month",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Side::IcefloeUnpartitioned => "icefloe `INSERT INTO`, unpartitioned",
            Side::IcefloeMonth => "icefloe `INSERT INTO`, `month(l_shipdate)`",
            Side::IcefloeMonthNone => {
                "icefloe `INSERT INTO`, `month(l_shipdate)`, distribution `none`"
            }
            Side::DataFusionCopy => "DataFusion `COPY … STORED AS PARQUET` (floor)",
            Side::DataFusionCopyMonth => {
                "DataFusion `COPY … PARTITIONED BY (ship_month)` (reference)"
            }
            Side::PyIcebergUnpartitioned => "PyIceberg `append`, unpartitioned",
            Side::PyIcebergMonth => "PyIceberg `append`, `month(l_shipdate)`",
        }
    }
}

/// A session with `lineitem` over the generated files (and, when given, the catalog as
/// `cat`), writing Parquet with zstd(3) as icefloe does by default.
async fn session(
    lineitem: &Path,
    catalog: Option<Arc<dyn Catalog>>,
) -> Result<SessionContext, BoxError> {
    let mut config = register_iceberg_options(SessionConfig::new());
    config.options_mut().execution.parquet.compression = Some("zstd(3)".to_string());
    let ctx = SessionContext::new_with_config(config);
    ctx.register_parquet(
        "lineitem",
        &format!("{}/", lineitem.display()),
        ParquetReadOptions::default(),
    )
    .await?;
    if let Some(catalog) = catalog {
        let provider = IcebergCatalogProvider::try_new(catalog).await?;
        ctx.register_catalog("cat", Arc::new(provider));
    }
    Ok(ctx)
}

async fn collect(
    ctx: &SessionContext,
    sql: &str,
) -> Result<Vec<datafusion::arrow::array::RecordBatch>, BoxError> {
    Ok(ctx.sql(sql).await?.collect().await?)
}

/// The single `count` (u64) of a DML statement's result.
fn count_of(batches: &[datafusion::arrow::array::RecordBatch]) -> u64 {
    use datafusion::arrow::array::{Array, UInt64Array};
    batches
        .iter()
        .filter_map(|b| b.column(0).as_any().downcast_ref::<UInt64Array>())
        .filter(|a| !a.is_empty())
        .map(|a| a.value(0))
        .sum()
}

/// `INSERT INTO` a new table, partitioned by `month(l_shipdate)` when `month`, with
/// `write.distribution-mode` = `distribution` when given.
async fn icefloe_insert(
    lineitem: &Path,
    tmp: &Path,
    month: bool,
    distribution: Option<&str>,
) -> Result<Run, BoxError> {
    let dir = tempfile::tempdir_in(tmp)?;
    let catalog = SqlCatalog::open_or_create("cat", dir.path().join("catalog.db"))?;
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await?;
    let schema = schema_from_parquet(&parquet_files(lineitem)?[0])?;
    let mut creation = TableCreation::new(schema.clone());
    if month {
        creation.partition_spec = common::lineitem_month_spec(&schema)?;
    }
    if let Some(mode) = distribution {
        creation
            .properties
            .insert("write.distribution-mode".into(), mode.into());
    }
    catalog
        .create_table(&TableIdent::parse("ns.t"), creation)
        .await?;
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let ctx = session(lineitem, Some(Arc::clone(&catalog))).await?;
    let start = Instant::now();
    let result = collect(&ctx, "INSERT INTO cat.ns.t SELECT * FROM lineitem").await?;
    let time = start.elapsed();
    let rows = count_of(&result);
    let table = catalog.load_table(&TableIdent::parse("ns.t")).await?;
    let summary = &table
        .metadata()
        .current_snapshot()
        .ok_or("no snapshot after INSERT")?
        .summary;
    let num = |k: &str| -> u64 { summary.get(k).and_then(|v| v.parse().ok()).unwrap_or(0) };
    if num("total-records") != rows {
        return Err(format!(
            "INSERT said {rows} rows, the snapshot has {}",
            num("total-records")
        )
        .into());
    }
    Ok(Run {
        time,
        rows,
        bytes: num("total-files-size"),
        files: num("total-data-files") as usize,
    })
}

async fn datafusion_copy(lineitem: &Path, tmp: &Path, month: bool) -> Result<Run, BoxError> {
    let dir = tempfile::tempdir_in(tmp)?;
    let out = dir.path().join("out");
    let ctx = session(lineitem, None).await?;
    let sql = if month {
        format!(
            "COPY (SELECT *, date_part('year', l_shipdate) * 100 + date_part('month', l_shipdate) \
             AS ship_month FROM lineitem) TO '{}/' STORED AS PARQUET PARTITIONED BY (ship_month)",
            out.display()
        )
    } else {
        format!(
            "COPY (SELECT * FROM lineitem) TO '{}/' STORED AS PARQUET",
            out.display()
        )
    };
    let start = Instant::now();
    let result = collect(&ctx, &sql).await?;
    let time = start.elapsed();
    let (bytes, files) = dir_size(&out);
    Ok(Run {
        time,
        rows: count_of(&result),
        bytes,
        files,
    })
}

fn pyiceberg_append(
    python: &str,
    lineitem: &Path,
    tmp: &Path,
    month: bool,
) -> Result<Run, BoxError> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/pyiceberg_append.py");
    let mut cmd = Command::new(python);
    cmd.arg(&script)
        .arg("--parquet")
        .arg(lineitem)
        .env("TMPDIR", tmp);
    if month {
        cmd.arg("--partitioned");
    }
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!(
            "{python} {}: {}\n{}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| format!("no result from {}: {text}", script.display()))?;
    let v: serde_json::Value = serde_json::from_str(line)?;
    Ok(Run {
        time: Duration::from_secs_f64(v["seconds"].as_f64().unwrap_or(0.0)),
        rows: v["rows"].as_u64().unwrap_or(0),
        bytes: v["bytes"].as_u64().unwrap_or(0),
        files: v["files"].as_u64().unwrap_or(0) as usize,
    })
}

async fn run_side(
    side: Side,
    lineitem: &Path,
    tmp: &Path,
    python: Option<&str>,
) -> Result<Run, BoxError> {
    match side {
        Side::IcefloeUnpartitioned => icefloe_insert(lineitem, tmp, false, None).await,
        Side::IcefloeMonth => icefloe_insert(lineitem, tmp, true, None).await,
        Side::IcefloeMonthNone => icefloe_insert(lineitem, tmp, true, Some("none")).await,
        Side::DataFusionCopy => datafusion_copy(lineitem, tmp, false).await,
        Side::DataFusionCopyMonth => datafusion_copy(lineitem, tmp, true).await,
        Side::PyIcebergUnpartitioned => {
            pyiceberg_append(python.unwrap_or("python3"), lineitem, tmp, false)
        }
        Side::PyIcebergMonth => pyiceberg_append(python.unwrap_or("python3"), lineitem, tmp, true),
    }
}

async fn throughput(
    args: &Args,
    lineitem: &Path,
    tmp: &Path,
    iterations: usize,
) -> Result<(), BoxError> {
    let python = if args.has("no-python") {
        None
    } else {
        args.get("python").or_else(|| {
            let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../main/.ci/venv/bin/python");
            venv.exists().then(|| venv.to_string_lossy().into_owned())
        })
    };
    let mut sides = vec![
        Side::IcefloeUnpartitioned,
        Side::DataFusionCopy,
        Side::IcefloeMonth,
        Side::IcefloeMonthNone,
        Side::DataFusionCopyMonth,
    ];
    if python.is_some() {
        sides.push(Side::PyIcebergUnpartitioned);
        sides.push(Side::PyIcebergMonth);
    }
    if let Some(only) = args.get("sides") {
        let wanted: Vec<&str> = only.split(',').map(str::trim).collect();
        sides.retain(|s| wanted.contains(&s.name()));
        if !sides.contains(&Side::DataFusionCopy) {
            return Err("--sides must include copy (the floor of the ratios)".into());
        }
    }
    let mut runs: HashMap<usize, Vec<Run>> = HashMap::new();
    for i in 0..iterations {
        for k in 0..sides.len() {
            let s = (i + k) % sides.len();
            let run = run_side(sides[s], lineitem, tmp, python.as_deref()).await?;
            eprintln!(
                "iteration {i}: {}: {:.2} s, {} rows, {} files, {} bytes",
                sides[s].label(),
                run.time.as_secs_f64(),
                run.rows,
                run.files,
                run.bytes
            );
            runs.entry(s).or_default().push(run);
        }
    }
    let floor_side = sides
        .iter()
        .position(|s| *s == Side::DataFusionCopy)
        .ok_or("no COPY side")?;
    let floor = median(runs[&floor_side].iter().map(|r| r.time).collect());
    println!(
        "python: {}",
        python
            .as_deref()
            .unwrap_or("(none: PyIceberg not measured)")
    );
    println!();
    println!(
        "| side | median s | ratio to COPY | rows | rows/s | MB/s written | files | MB written |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (s, side) in sides.iter().enumerate() {
        let r = &runs[&s];
        let t = median(r.iter().map(|r| r.time).collect());
        let last = r[r.len() - 1];
        let rows = last.rows;
        let mb = last.bytes as f64 / 1e6;
        println!(
            "| {} | {:.2} | {:.3} | {} | {:.2} M | {:.1} | {} | {:.1} |",
            side.label(),
            t.as_secs_f64(),
            t.as_secs_f64() / floor.as_secs_f64(),
            rows,
            rows as f64 / t.as_secs_f64() / 1e6,
            mb / t.as_secs_f64(),
            last.files,
            mb
        );
        if r.iter().any(|x| x.rows != rows) {
            return Err(format!("{}: row counts differ between runs", side.label()).into());
        }
    }
    let all: Vec<String> = sides
        .iter()
        .enumerate()
        .map(|(s, side)| {
            let times: Vec<String> = runs[&s]
                .iter()
                .map(|r| format!("{:.2}", r.time.as_secs_f64()))
                .collect();
            format!("{}: {}", side.label(), times.join(", "))
        })
        .collect();
    println!("\nall runs (s, in order): {}", all.join("; "));
    Ok(())
}

/// A catalog that counts `commit_table` calls and the conflicts among them.
#[derive(Debug)]
struct CountingCatalog {
    inner: SqlCatalog,
    attempts: Arc<AtomicU64>,
    conflicts: Arc<AtomicU64>,
}

#[async_trait]
impl Catalog for CountingCatalog {
    fn name(&self) -> &str {
        self.inner.name()
    }
    async fn list_namespaces(&self) -> icefloe::Result<Vec<Namespace>> {
        self.inner.list_namespaces().await
    }
    async fn list_tables(&self, namespace: &Namespace) -> icefloe::Result<Vec<TableIdent>> {
        self.inner.list_tables(namespace).await
    }
    async fn metadata_location(&self, ident: &TableIdent) -> icefloe::Result<String> {
        self.inner.metadata_location(ident).await
    }
    async fn load_table(&self, ident: &TableIdent) -> icefloe::Result<Table> {
        self.inner.load_table(ident).await
    }
    async fn commit_table(
        &self,
        ident: &TableIdent,
        commit: &TableCommit,
    ) -> icefloe::Result<Table> {
        self.attempts.fetch_add(1, Ordering::Relaxed);
        let r = self.inner.commit_table(ident, commit).await;
        if matches!(&r, Err(e) if e.kind() == icefloe::ErrorKind::CommitConflict) {
            self.conflicts.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

async fn commits(args: &Args, tmp: &Path) -> Result<(), BoxError> {
    let writers: usize = args.num("writers", 8);
    let total: usize = args.num("commits", 100);
    let retries: u32 = args.num("retries", 20);
    let dir = tempfile::tempdir_in(tmp)?;
    let db = dir.path().join("catalog.db");
    let ident = TableIdent::parse("ns.t");
    {
        let catalog = SqlCatalog::open_or_create("cat", &db)?;
        catalog
            .create_namespace(&Namespace::parse("ns"), &HashMap::new())
            .await?;
        let mut creation = TableCreation::new(common::schema());
        creation
            .properties
            .insert("commit.retry.num-retries".into(), retries.to_string());
        catalog.create_table(&ident, creation).await?;
    }
    let attempts = Arc::new(AtomicU64::new(0));
    let conflicts = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = vec![];
    for w in 0..writers {
        let n = total / writers + usize::from(w < total % writers);
        let catalog: Arc<dyn Catalog> = Arc::new(CountingCatalog {
            inner: SqlCatalog::open("cat", &db)?,
            attempts: Arc::clone(&attempts),
            conflicts: Arc::clone(&conflicts),
        });
        let ident = ident.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = vec![];
            let mut failures = vec![];
            for k in 0..n {
                let table = catalog.load_table(&ident).await?;
                let mut file = empty_data_file(
                    &format!("{}/data/w{w}-{k}.parquet", table.metadata().location),
                    DataContentType::Data,
                );
                file.record_count = 10;
                file.file_size_in_bytes = 1000;
                let txn = Transaction::new(Arc::clone(&catalog), ident.clone(), table)
                    .add_action(AppendFiles::new(0, vec![file])?);
                let start = Instant::now();
                let r = txn.commit().await;
                latencies.push(start.elapsed());
                if let Err(e) = r {
                    failures.push(e.to_string());
                }
            }
            Ok::<_, icefloe::Error>((latencies, failures))
        }));
    }
    let mut latencies = vec![];
    let mut failures = vec![];
    for t in tasks {
        let (l, f) = t.await??;
        latencies.extend(l);
        failures.extend(f);
    }
    let wall = started.elapsed();
    latencies.sort();
    let table = SqlCatalog::open("cat", &db)?.load_table(&ident).await?;
    let m = table.metadata();
    let snapshots = m.snapshots.len();
    let data_files: usize = m
        .current_snapshot()
        .and_then(|s| s.summary.get("total-data-files"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let landed = total - failures.len();
    println!(
        "{writers} writers (tokio tasks, one `SqlCatalog::open` connection each), {total} \
         commits in total, one tiny data file each; `commit.retry.num-retries` = {retries}, \
         other retry settings default (min wait 100 ms, doubling)"
    );
    println!();
    println!("| commits | wall s | commits/s | p50 ms | p95 ms | max ms | attempts | conflicts (retries) | failed | snapshots | data files |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {total} | {:.2} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {} | {snapshots} | {data_files} |",
        wall.as_secs_f64(),
        landed as f64 / wall.as_secs_f64(),
        common::ms(percentile(&latencies, 50.0)),
        common::ms(percentile(&latencies, 95.0)),
        common::ms(percentile(&latencies, 100.0)),
        attempts.load(Ordering::Relaxed),
        conflicts.load(Ordering::Relaxed),
        failures.len(),
    );
    if let Some(f) = failures.first() {
        println!("\nfirst failure: {f}");
    }
    if snapshots != landed || data_files != landed {
        return Err(format!(
            "{landed} commits succeeded but the table has {snapshots} snapshots and \
             {data_files} data files"
        )
        .into());
    }
    println!(
        "\nall {landed} successful commits landed ({snapshots} snapshots, {data_files} data files)"
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::from_env();
    let sf = args.get("sf").unwrap_or_else(|| "1".into());
    let iterations: usize = args.num("iterations", 3);
    let data = common::data_dir(&args);
    let tmp = data.join("tmp");
    std::fs::create_dir_all(&tmp)?;
    println!(
        "# Writes (issue 11): machine: {}; commit {}",
        machine(),
        common::git_commit()
    );
    if !args.has("no-throughput") {
        let lineitem = prepare_lineitem(&args, &data.join(format!("tpch-sf{sf}")), &sf)?;
        println!(
            "\n## INSERT throughput: TPC-H SF{sf} lineitem ({}), {iterations} iterations per \
             side, rotated order, medians; Parquet zstd(3) on every side",
            lineitem.display()
        );
        throughput(&args, &lineitem, &tmp, iterations).await?;
    }
    if !args.has("no-commits") {
        println!("\n## Concurrent appends");
        commits(&args, &tmp).await?;
    }
    if let Some(peak) = common::peak_rss_bytes() {
        println!("\npeak RSS: {:.0} MiB", peak as f64 / (1 << 20) as f64);
    }
    Ok(())
}
