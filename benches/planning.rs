//! Planning at scale: a synthetic v2 table with 10,000 manifests and 1,000,000 data-file
//! entries (real Avro manifests with partition summaries and column metrics),
//! partitioned by identity(p), generated once by this program with icefloe's writer.
//!
//! ```text
//! cargo bench --bench planning -- [--manifests 10000] [--files-per-manifest 100]
//!     [--iterations 5] [--data DIR]
//! ```
//!
//! Manifest `i` holds files of partition `p = i / 10` (1,000 partitions, 10 manifests
//! each), so `p = 17` matches 10 manifests and 1,000 files. The data files do not exist:
//! only planning is measured (`create_physical_plan` through DataFusion, and
//! `TableScan::plan_files` directly). Reported: the first (cold, nothing cached in the
//! process) and the median of `--iterations` runs, the manifests opened, and the peak
//! resident memory (`VmHWM`).

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use common::{machine, median, ms, peak_rss_bytes, schema, spec, Args};
use datafusion::prelude::SessionContext;
use icefloe::scan::{ScanMetrics, TableScan};
use icefloe::spec::{DataContentType, Literal, ManifestContent};
use icefloe::write::bounds::literal_to_bytes;
use icefloe::write::{empty_data_file, LocalTableWriter, ManifestWriter, NewEntry};
use icefloe::{IcebergTableProvider, Table};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const ROWS_PER_FILE: i64 = 1_000;

/// Manifest `m` of the synthetic table, encoded.
fn manifest(
    m: usize,
    files: usize,
    location: &str,
    snapshot_id: i64,
    seq: i64,
) -> Result<(String, Vec<u8>, icefloe::spec::ManifestFile), BoxError> {
    let p = (m / 10) as i32;
    let mut w = ManifestWriter::new(&schema(), &spec(), ManifestContent::Data, snapshot_id, seq)?;
    for j in 0..files {
        let n = (m * files + j) as i64;
        let mut f = empty_data_file(
            &format!("{location}/data/p={p}/{n:08}.parquet"),
            DataContentType::Data,
        );
        f.partition = vec![Some(Literal::Int(p))];
        f.record_count = ROWS_PER_FILE;
        f.file_size_in_bytes = 4_000_000 + n % 1000;
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

/// Write the table (one snapshot holding every manifest) unless it exists.
fn generate(root: &Path, manifests: usize, files: usize) -> Result<(), BoxError> {
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
    let root = common::data_dir(&args).join(format!("planning-{manifests}x{files}"));
    generate(&root, manifests, files)?;
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

    let provider = IcebergTableProvider::try_new(table.clone())?;
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(provider.clone()))?;
    let cases = [
        // first, so that its first run reads the manifest list cold (issue 18, item 5)
        ("unfiltered `count(*)`", "SELECT count(*) FROM t"),
        (
            "`WHERE p = 17` (selective)",
            "SELECT id FROM t WHERE p = 17",
        ),
        ("`LIMIT 10` (unfiltered)", "SELECT * FROM t LIMIT 10"),
        ("`SELECT *` (full plan)", "SELECT * FROM t"),
    ];
    for (label, sql) in cases {
        let (first, metrics) = plan_sql(&ctx, &provider, sql).await?;
        let mut times = vec![];
        for _ in 0..iterations {
            let start = Instant::now();
            plan_sql(&ctx, &provider, sql).await?;
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
    }

    // The planner alone (no DataFusion): entries per second.
    let scan = TableScan::new(table.clone(), table.metadata().current_snapshot().cloned());
    let mut times = vec![];
    let mut planned = 0;
    for _ in 0..iterations.max(1) {
        let start = Instant::now();
        let plan = scan.plan_files().await?;
        times.push(start.elapsed());
        planned = plan.tasks.len();
    }
    let t = median(times);
    println!(
        "| `TableScan::plan_files` (full, no DataFusion) | | {:.1} | {manifests} / {manifests} | {planned} | {} |",
        ms(t),
        mib(peak_rss_bytes())
    );
    println!();
    println!(
        "full-plan rate: {:.0} entries/s ({planned} entries in {:.2} s, median)",
        planned as f64 / t.as_secs_f64(),
        t.as_secs_f64()
    );
    Ok(())
}
