//! Planning at scale: a synthetic v2 table with 10,000 manifests and 1,000,000 data-file
//! entries (real Avro manifests with partition summaries and column metrics),
//! partitioned by identity(p), generated once by this program with icefloe's writer.
//!
//! ```text
//! cargo bench --bench planning -- [--manifests 10000] [--files-per-manifest 100]
//!     [--iterations 5] [--data DIR] [--plan-files-only]
//! ```
//!
//! Manifest `i` holds files of partition `p = i / 10` (1,000 partitions, 10 manifests
//! each), so `p = 17` matches 10 manifests and 1,000 files. The data files do not exist:
//! only planning is measured (`create_physical_plan` through DataFusion, and
//! `TableScan::plan_files` directly). Reported: the first (cold, nothing cached in the
//! process) and the median of `--iterations` runs, the manifests opened, and the peak
//! resident memory (`VmHWM`). `--plan-files-only` measures `TableScan::plan_files` alone,
//! with no DataFusion plan before it, and beside it the decoder floor: every manifest
//! decoded by arrow-avro into Arrow batches, kept, with no entry materialized (what a
//! plan kept as rows of the decoded manifests could at best reach).
//!
//! Peers (issue 18): with `--python PATH` (or `$ICEFLOE_PYTHON`; `--peers duckdb,pyiceberg`,
//! default both), the unfiltered `count(*)`, `p = 17` and `LIMIT 10` cases also run on
//! PyIceberg (`scan(…).plan_files()`, and `scan().count()` for `count(*)`: planning only)
//! and on DuckDB's `iceberg_scan` (the SQL itself: DuckDB cannot plan without running the
//! query, so the data files of partitions 0 and 17, the only ones those queries read, are
//! made to exist as symbolic links to one real 1,000-row Parquet file per partition; its
//! `count(*)` reads no data file). First run, then the median of `--peer-iterations`
//! (default 1: PyIceberg plans every file of the table for `LIMIT 10` and `count(*)`).
//!
//! `--scan-all icefloe|listing` (issue 18, item 7) instead reads every file of the table
//! (`SELECT *`, each data file a link to one real file of 1,000 rows) and reports the
//! resident memory as the scan goes, for icefloe or `ListingTable` over the same files;
//! see `common/scan_all.rs`.

mod common;
#[path = "common/peer.rs"]
mod peer;
#[path = "common/scan_all.rs"]
mod scan_all;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use common::{machine, median, ms, peak_rss_bytes, schema, spec, Args};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::datafusion::register_iceberg_options;
use icefloe::scan::{ScanMetrics, TableScan};
use icefloe::spec::{ColumnStats, DataContentType, Literal, ManifestContent};
use icefloe::write::bounds::literal_to_bytes;
use icefloe::write::{empty_data_file, LocalTableWriter, ManifestWriter, NewEntry};
use icefloe::{IcebergTableProvider, Table};
use peer::{Peer, PeerKind};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const ROWS_PER_FILE: i64 = 1_000;

/// Manifest `m` of the synthetic table, encoded. `file_size`: every file's
/// `file_size_in_bytes` (`None`: 4,000,000 and a bit, the files do not exist).
fn manifest(
    m: usize,
    files: usize,
    file_size: Option<i64>,
    location: &str,
    snapshot_id: i64,
    seq: i64,
) -> Result<(String, Vec<u8>, icefloe::spec::ManifestFile), BoxError> {
    let p = (m / 10) as i32;
    let mut w = ManifestWriter::new(
        &[&schema()],
        &spec(),
        ManifestContent::Data,
        snapshot_id,
        seq,
    )?;
    for j in 0..files {
        let n = (m * files + j) as i64;
        let mut f = empty_data_file(
            &format!("{location}/data/p={p}/{n:08}.parquet"),
            DataContentType::Data,
        );
        f.partition = vec![Some(Literal::Int(p))];
        f.record_count = ROWS_PER_FILE;
        f.file_size_in_bytes = file_size.unwrap_or(4_000_000 + n % 1000);
        for id in 1..=3 {
            f.column_sizes.insert(id, 1_000_000);
            f.value_counts.insert(id, ROWS_PER_FILE);
            f.null_value_counts.insert(id, 0);
        }
        let lo = n * ROWS_PER_FILE;
        f.lower_bounds
            .insert(1, literal_to_bytes(&Literal::Long(lo)));
        f.upper_bounds
            .insert(1, literal_to_bytes(&Literal::Long(lo + ROWS_PER_FILE - 1)));
        f.lower_bounds.insert(2, literal_to_bytes(&Literal::Int(p)));
        f.upper_bounds.insert(2, literal_to_bytes(&Literal::Int(p)));
        f.lower_bounds.insert(3, b"aaaa".to_vec());
        f.upper_bounds.insert(3, b"zzzz".to_vec());
        f.split_offsets = vec![4];
        w.add(&NewEntry::added(f))?;
    }
    let name = format!("gen-m{m:05}.avro");
    let (bytes, file) = w.finish(&format!("{location}/metadata/{name}"))?;
    Ok((name, bytes, file))
}

/// Write the table (one snapshot holding every manifest) unless it exists; `file_size` as
/// in [`manifest`].
fn generate(
    root: &Path,
    manifests: usize,
    files: usize,
    file_size: Option<i64>,
) -> Result<(), BoxError> {
    if root.join("metadata/version-hint.text").exists() {
        return Ok(());
    }
    let start = Instant::now();
    let mut w = LocalTableWriter::create(root, schema(), spec(), Default::default())?;
    let snap = w.begin();
    let location = icefloe::io::normalize_location(&root.to_string_lossy())?;
    let meta_dir = root.join("metadata");
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut results: Vec<Vec<(usize, icefloe::spec::ManifestFile)>> = vec![];
    std::thread::scope(|s| -> Result<(), BoxError> {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (location, meta_dir) = (&location, &meta_dir);
                s.spawn(
                    move || -> Result<Vec<(usize, icefloe::spec::ManifestFile)>, BoxError> {
                        let mut out = vec![];
                        for m in (t..manifests).step_by(threads) {
                            let (name, bytes, file) = manifest(
                                m,
                                files,
                                file_size,
                                location,
                                snap.snapshot_id,
                                snap.sequence_number,
                            )?;
                            std::fs::write(meta_dir.join(name), bytes)?;
                            out.push((m, file));
                        }
                        Ok(out)
                    },
                )
            })
            .collect();
        for h in handles {
            results.push(h.join().map_err(|_| "generator thread panicked")??);
        }
        Ok(())
    })?;
    let mut all: Vec<_> = results.into_iter().flatten().collect();
    all.sort_by_key(|(m, _)| *m);
    w.commit(snap, all.into_iter().map(|(_, f)| f).collect(), "append")?;
    eprintln!(
        "generated {manifests} manifests x {files} files in {:.1} s at {}",
        start.elapsed().as_secs_f64(),
        root.display()
    );
    Ok(())
}

/// For DuckDB, which reads the data files of the queries it plans: the files of partitions
/// 0 and 17 (manifests 0–9 and 170–179) as symbolic links to one real Parquet file per
/// partition, of `ROWS_PER_FILE` rows (`id` 0…, `p`, `v` = "x"; the manifests' `id` bounds
/// do not hold for them, which no case here relies on). Made once, kept with the table.
fn peer_data_files(root: &Path, manifests: usize, files: usize) -> Result<(), BoxError> {
    for p in [0usize, 17] {
        if p * 10 >= manifests {
            continue;
        }
        let dir = root.join("data").join(format!("p={p}"));
        std::fs::create_dir_all(&dir)?;
        let real = root.join("data").join(format!("real-p{p}.parquet"));
        if !real.exists() {
            scan_all::write_real_file(&real, ROWS_PER_FILE, p as i32)?;
        }
        for m in p * 10..(p * 10 + 10).min(manifests) {
            for j in 0..files {
                let link = dir.join(format!("{:08}.parquet", m * files + j));
                if link.symlink_metadata().is_err() {
                    std::os::unix::fs::symlink(&real, &link)?;
                }
            }
        }
    }
    Ok(())
}

/// One peer's first and median time of a case (`Err`: its error), and its answer (rows,
/// files planned or the count).
fn run_peer_case(
    p: &mut Peer,
    sql: &str,
    row_filter: Option<&str>,
    limit: Option<usize>,
    count: bool,
    iterations: usize,
    out: &Path,
) -> Result<(std::time::Duration, std::time::Duration, String), String> {
    let once =
        |p: &mut Peer, out: Option<&Path>| -> Result<(std::time::Duration, String), String> {
            match p.kind {
                PeerKind::DuckDb => {
                    let r = p.query(sql, out)?;
                    Ok((r.time, duckdb_answer(r.rows, r.batches.as_deref())))
                }
                PeerKind::PyIceberg => {
                    let (t, n) = p.plan("t", row_filter, limit, count)?;
                    Ok((
                        t,
                        if count {
                            format!("count {n}")
                        } else {
                            format!("{n} files")
                        },
                    ))
                }
            }
        };
    let (first, answer) = once(p, Some(out))?;
    let mut times = vec![];
    for _ in 0..iterations {
        times.push(once(p, None)?.0);
    }
    let med = if times.is_empty() {
        first
    } else {
        median(times)
    };
    Ok((first, med, answer))
}

/// DuckDB's answer: the value of a one-value result (`count(*)`), else the row count.
fn duckdb_answer(rows: u64, batches: Option<&[RecordBatch]>) -> String {
    let one = batches
        .and_then(|b| b.iter().find(|b| b.num_rows() > 0))
        .filter(|b| rows == 1 && b.num_columns() == 1)
        .and_then(|b| datafusion::arrow::util::display::array_value_to_string(b.column(0), 0).ok());
    match one {
        Some(v) => format!("count {v}"),
        None => format!("{rows} rows"),
    }
}

/// Physical planning of `sql`: (ms, scan metrics of the latest scan).
async fn plan_sql(
    ctx: &SessionContext,
    provider: &IcebergTableProvider,
    sql: &str,
) -> Result<(f64, Option<ScanMetrics>), BoxError> {
    let start = Instant::now();
    let df = ctx.sql(sql).await?;
    let _plan = df.create_physical_plan().await?;
    Ok((ms(start.elapsed()), provider.last_scan_metrics()))
}

fn mib(b: Option<u64>) -> String {
    b.map(|b| format!("{:.0} MiB", b as f64 / (1 << 20) as f64))
        .unwrap_or_else(|| "?".into())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::from_env();
    let manifests: usize = args.num("manifests", 10_000);
    let files: usize = args.num("files-per-manifest", 100);
    let iterations: usize = args.num("iterations", 5);
    if let Some(engine) = args.get("scan-all") {
        // a table of its own, whose manifests give the real file's size
        let root = common::data_dir(&args).join(format!("planning-scan-{manifests}x{files}"));
        let size = scan_all::real_file(&root, ROWS_PER_FILE)?;
        generate(&root, manifests, files, Some(size))?;
        return scan_all::run(&engine, &root, manifests, files, ROWS_PER_FILE).await;
    }
    let root = common::data_dir(&args).join(format!("planning-{manifests}x{files}"));
    generate(&root, manifests, files, None)?;
    println!("# Planning: {manifests} manifests x {files} data files, identity(p)");
    println!(
        "machine: {}; first run, then median of {iterations}",
        machine()
    );
    println!("peak RSS before planning: {}", mib(peak_rss_bytes()));
    println!();
    println!(
        "| what | first ms | median ms | manifests opened | data files planned | peak RSS after |"
    );
    println!("|---|---:|---:|---:|---:|---:|");

    let start = Instant::now();
    let table = Table::open(&root.to_string_lossy()).await?;
    println!(
        "| open table (metadata JSON) | {:.1} | | | | {} |",
        ms(start.elapsed()),
        mib(peak_rss_bytes())
    );
    if args.has("plan-files-only") {
        return plan_files_rate(&table, manifests, iterations).await;
    }

    let provider = IcebergTableProvider::try_new(table.clone())?;
    // icefloe's defaults: a scan of 100,000 files or more is deferred (each manifest
    // planned as the scan reads it); `up_front` plans every file first, as before
    let ctx = SessionContext::new_with_config(register_iceberg_options(SessionConfig::new()));
    ctx.register_table("t", Arc::new(provider.clone()))?;
    let up_front = SessionContext::new_with_config(register_iceberg_options(SessionConfig::new()));
    up_front
        .sql("SET icefloe.deferred_planning_min_files = 0")
        .await?
        .collect()
        .await?;
    up_front.register_table("t", Arc::new(provider.clone()))?;
    let cases = [
        // first, so that its first run reads the manifest list cold (issue 18, item 5)
        ("unfiltered `count(*)`", "SELECT count(*) FROM t"),
        (
            "`WHERE p = 17` (selective)",
            "SELECT id FROM t WHERE p = 17",
        ),
        ("`LIMIT 10` (unfiltered)", "SELECT * FROM t LIMIT 10"),
        ("`SELECT *` (full plan; deferred)", "SELECT * FROM t"),
    ];
    let mut icefloe_times = vec![];
    for (label, sql) in cases {
        let (first, metrics) = plan_sql(&ctx, &provider, sql).await?;
        let mut times = vec![];
        for _ in 0..iterations {
            let start = Instant::now();
            plan_sql(&ctx, &provider, sql).await?;
            times.push(start.elapsed());
        }
        let m = metrics.unwrap_or_default();
        let med = ms(median(times));
        icefloe_times.push((first, med));
        println!(
            "| {label} | {first:.1} | {med:.1} | {} / {} | {} | {} |",
            m.manifests_scanned,
            m.manifests_total,
            m.data_files_planned,
            mib(peak_rss_bytes())
        );
    }

    // A deferred scan plans every manifest while it runs: a filter no file's metrics
    // allow (`id < 0`; the partition summaries of `p` cannot prune it) reads and prunes
    // all 1,000,000 entries and opens no data file. Then the same plans up front.
    let none = "SELECT id FROM t WHERE id < 0";
    for (label, session) in [
        (
            "every entry planned and pruned while running (deferred)",
            &ctx,
        ),
        (
            "every entry planned and pruned up front, then run",
            &up_front,
        ),
    ] {
        let run = || async {
            let start = Instant::now();
            session.sql(none).await?.collect().await?;
            Ok::<_, BoxError>(ms(start.elapsed()))
        };
        let first = run().await?;
        let mut times = vec![];
        for _ in 0..iterations {
            times.push(run().await?);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "| {label}: `{none}` | {first:.1} | {:.1} | {manifests} / {manifests} | 0 | {} |",
            times[times.len() / 2],
            mib(peak_rss_bytes())
        );
    }
    // Planned up front (the largest memory; last but the planner alone)
    let label = "`SELECT *` (full plan; planned up front)";
    let (first, metrics) = plan_sql(&up_front, &provider, "SELECT * FROM t").await?;
    let mut times = vec![];
    for _ in 0..iterations {
        let start = Instant::now();
        plan_sql(&up_front, &provider, "SELECT * FROM t").await?;
        times.push(start.elapsed());
    }
    let m = metrics.unwrap_or_default();
    println!(
        "| {label} | {first:.1} | {:.1} | {} / {} | {} | {} |",
        ms(median(times)),
        m.manifests_scanned,
        m.manifests_total,
        m.data_files_planned,
        mib(peak_rss_bytes())
    );

    plan_files_rate(&table, manifests, iterations).await?;
    peers(
        &args,
        &table,
        &root,
        manifests,
        files,
        &cases,
        &icefloe_times,
    )
}

/// The planner alone (no DataFusion, no manifest cache): `TableScan::plan_files` of the
/// whole table, median of `iterations`, as a row of the table and the full-plan rate in
/// entries/s, keeping no column's metrics (`with_column_stats(ColumnStats::none())`, as
/// Iceberg Java's scans do unless asked) and every column's (the default), run
/// alternately; the peak resident memory is the run's (both).
/// Alone with `--plan-files-only` (no DataFusion plan before it).
async fn plan_files_rate(
    table: &Table,
    manifests: usize,
    iterations: usize,
) -> Result<(), BoxError> {
    let cases = [
        ("no column's metrics", ColumnStats::none()),
        ("every column's metrics", ColumnStats::All),
    ];
    // The two run alternately, so that neither always meets the memory the other freed.
    let mut times = vec![vec![]; cases.len()];
    let mut planned = 0;
    for _ in 0..iterations.max(1) {
        for ((_, stats), times) in cases.iter().zip(&mut times) {
            let scan = TableScan::new(table.clone(), table.metadata().current_snapshot().cloned())
                .with_column_stats(stats.clone());
            let start = Instant::now();
            let plan = scan.plan_files().await?;
            times.push(start.elapsed());
            planned = plan.tasks.len();
        }
    }
    let mut floor_times = vec![];
    let mut floor_rows = 0;
    for _ in 0..iterations.max(1) {
        let start = Instant::now();
        let batches = decode_all_manifests(table).await?;
        floor_times.push(start.elapsed());
        floor_rows = batches.iter().map(RecordBatch::num_rows).sum();
    }
    for ((label, _), times) in cases.iter().zip(times) {
        let t = median(times);
        println!(
            "| `TableScan::plan_files` (full, no DataFusion, {label}) | | {:.1} | {manifests} / {manifests} | {planned} | {} |",
            ms(t),
            mib(peak_rss_bytes())
        );
        println!();
        println!(
            "full-plan rate, {label}: {:.0} entries/s ({planned} entries in {:.2} s, median)",
            planned as f64 / t.as_secs_f64(),
            t.as_secs_f64()
        );
    }
    let t = median(floor_times);
    println!(
        "| decoder floor: every manifest to Arrow batches with arrow-avro, kept (no entries) | | {:.1} | {manifests} / {manifests} | {floor_rows} rows | {} |",
        ms(t),
        mib(peak_rss_bytes())
    );
    println!();
    println!(
        "decoder floor: {:.0} entries/s ({floor_rows} entries in {:.2} s, median)",
        floor_rows as f64 / t.as_secs_f64(),
        t.as_secs_f64()
    );
    Ok(())
}

/// What a plan kept as rows of the decoded manifests could at best reach (issue 18, item
/// 1): every manifest of the current snapshot read through the table's `FileIO` and
/// decoded by arrow-avro into Arrow record batches on tokio's blocking pool, 16 at a time
/// as `plan_files` reads them, each manifest's batches copied into one right-sized batch
/// and kept until all are decoded; no entry is materialized and nothing is pruned.
async fn decode_all_manifests(table: &Table) -> Result<Vec<RecordBatch>, BoxError> {
    use futures::{StreamExt, TryStreamExt};
    let scan = TableScan::new(table.clone(), table.metadata().current_snapshot().cloned());
    let manifests = scan.manifest_list().await?;
    let per_manifest: Vec<Vec<RecordBatch>> = futures::stream::iter(manifests)
        .map(|m| {
            let table = table.clone();
            async move {
                let bytes = table.file_io().read(&m.manifest_path).await?;
                let batches = tokio::task::spawn_blocking(move || {
                    let reader = arrow_avro::reader::ReaderBuilder::new()
                        .with_batch_size(8192)
                        .build(std::io::Cursor::new(&bytes[..]))?;
                    let schema = reader.schema();
                    let decoded = reader.collect::<Result<Vec<_>, _>>()?;
                    // kept right-sized: arrow-avro 59 gives every column of a batch a
                    // buffer of at least 1,024 rows (its builders' `DEFAULT_CAPACITY`),
                    // so 100-entry batches kept as decoded would hold ~10x their size
                    datafusion::arrow::compute::concat_batches(&schema, &decoded)
                })
                .await??;
                Ok::<_, BoxError>(vec![batches])
            }
        })
        .buffered(16)
        .try_collect()
        .await?;
    Ok(per_manifest.into_iter().flatten().collect())
}

/// The peers' table: the `count(*)`, `p = 17` and `LIMIT 10` cases on each peer, beside
/// icefloe's figures (`icefloe_times`, ms, in the order of `cases`).
fn peers(
    args: &Args,
    table: &Table,
    root: &Path,
    manifests: usize,
    files: usize,
    cases: &[(&str, &str)],
    icefloe_times: &[(f64, f64)],
) -> Result<(), BoxError> {
    let (python, kinds) = peer::peers_from_args(args).map_err(|e| e.to_string())?;
    let Some(python) = python else {
        return Ok(());
    };
    let iterations: usize = args.num("peer-iterations", 1);
    if kinds.contains(&PeerKind::DuckDb) {
        peer_data_files(root, manifests, files)?;
    }
    let results = tempfile::tempdir()?;
    let mut peers = vec![];
    for kind in kinds {
        let mut p = Peer::start(&python, kind).map_err(|e| e.to_string())?;
        p.tables(&[("t".to_string(), table.metadata_location().to_string())])?;
        peers.push(p);
    }
    println!();
    println!(
        "peers: {}; python: {python}; first run, then {}. PyIceberg: \
         planning only; DuckDB: the query itself (reading the files of partition 17 for \
         `p = 17`, one or more of partition 0 for `LIMIT 10`, none for `count(*)`)",
        peers
            .iter()
            .map(|p| format!("{} ({})", p.kind.label(), p.versions))
            .collect::<Vec<_>>()
            .join(", "),
        if iterations == 0 {
            "no more (the median column repeats the first)".to_string()
        } else {
            format!("median of {iterations}")
        }
    );
    println!();
    let mut header = "| what | icefloe first ms | icefloe median ms |".to_string();
    let mut rule = "|---|---:|---:|".to_string();
    for p in &peers {
        let l = p.kind.label();
        header += &format!(" {l} first ms | {l} median ms | icefloe/{l} |");
        rule += "---:|---:|---:|";
    }
    println!("{header} peers' answers |");
    println!("{rule}---|");
    // (case label, PyIceberg row filter, limit, count)
    let peer_cases = [
        (cases[0], None, None, true),
        (cases[1], Some("p = 17"), None, false),
        (cases[2], None, Some(10), false),
    ];
    for (i, ((label, sql), row_filter, limit, count)) in peer_cases.into_iter().enumerate() {
        let (first, med) = icefloe_times[i];
        let mut line = format!("| {label} | {first:.1} | {med:.1} |");
        let mut answers = vec![];
        for p in &mut peers {
            let out = results.path().join(format!("{}-{i}.arrow", p.kind.name()));
            match run_peer_case(p, sql, row_filter, limit, count, iterations, &out) {
                Ok((f, m, answer)) => {
                    line += &format!(" {:.1} | {:.1} | {:.4} |", ms(f), ms(m), med / ms(m));
                    answers.push(format!("{}: {answer}", p.kind.label()));
                }
                Err(e) => line += &format!(" {} | | |", peer::error_cell(&e)),
            }
        }
        println!("{line} {} |", answers.join("; "));
    }
    Ok(())
}
