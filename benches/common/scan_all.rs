//! `planning --scan-all icefloe|listing` (issue 18, item 7): the memory of reading every
//! file of the planning table, `SELECT *` streamed to the end, against `ListingTable` over
//! the same files. Each data file of the table is made to exist as a symbolic link to one
//! real Parquet file of `ROWS_PER_FILE` rows (made once, kept with the table), so the
//! scan opens and decodes every one of the table's files. One engine per process: the
//! resident memory (`VmRSS`) is sampled after planning and after each twentieth of the
//! rows, and the peak (`VmHWM`) is reported, so growth with the files already read shows
//! as a rising column.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use datafusion::arrow::array::{Int32Array, Int64Array, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::physical_plan::execute_stream;
use datafusion::prelude::SessionContext;
use futures::StreamExt;
use icefloe::{IcebergTableProvider, Table};

use super::common::{field, machine, peak_rss_bytes, rss_bytes, write_parquet};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn mib(b: Option<u64>) -> String {
    b.map(|b| format!("{:.0} MiB", b as f64 / (1 << 20) as f64))
        .unwrap_or_else(|| "?".into())
}

/// The one real data file, `real-all.parquet` beside the table's `data/` (kept out of it,
/// so `ListingTable` lists only the table's files), made unless it exists
/// ([`write_real_file`], `p` 0). Its size in bytes.
pub fn real_file(root: &Path, rows: i64) -> Result<i64, BoxError> {
    let real = root.join("real-all.parquet");
    if !real.exists() {
        std::fs::create_dir_all(root)?;
        write_real_file(&real, rows, 0)?;
    }
    Ok(i64::try_from(std::fs::metadata(&real)?.len())?)
}

/// Write a Parquet file of `rows` rows of the planning schema at `path`: `id` 0…, `p` =
/// `p`, `v` = "x" (the manifests' `id` bounds do not hold for it, which no case relies on).
pub fn write_real_file(path: &Path, rows: i64, p: i32) -> Result<(), BoxError> {
    let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(vec![
        field("id", DataType::Int64, 1),
        field("p", DataType::Int32, 2),
        field("v", DataType::Utf8, 3),
    ]));
    let n = usize::try_from(rows)?;
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows)),
            Arc::new(Int32Array::from(vec![p; n])),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n("x", n))),
        ],
    )?;
    write_parquet(path, &batch, None).map_err(|e| e.to_string())?;
    Ok(())
}

/// Make every data file of the table (`manifests` × `files`, the layout of the planning
/// table: `data/p={m / 10}/{m * files + j:08}.parquet`) a link to [`real_file`]. Existing
/// paths are left as they are.
fn link_every_file(root: &Path, manifests: usize, files: usize) -> Result<(), BoxError> {
    let real = root.join("real-all.parquet");
    let start = Instant::now();
    let mut made = 0usize;
    for m in 0..manifests {
        let dir = root.join("data").join(format!("p={}", m / 10));
        std::fs::create_dir_all(&dir)?;
        for j in 0..files {
            let link = dir.join(format!("{:08}.parquet", m * files + j));
            if link.symlink_metadata().is_err() {
                std::os::unix::fs::symlink(&real, &link)?;
                made += 1;
            }
        }
    }
    if made > 0 {
        eprintln!(
            "linked {made} data files in {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// Run the scan of `engine` (`icefloe` or `listing`) over the planning table at `root`.
pub async fn run(
    engine: &str,
    root: &Path,
    manifests: usize,
    files: usize,
    rows_per_file: i64,
) -> Result<(), BoxError> {
    link_every_file(root, manifests, files)?;
    let ctx = SessionContext::new();
    match engine {
        "icefloe" => {
            let table = Table::open(&root.to_string_lossy()).await?;
            ctx.register_table("t", Arc::new(IcebergTableProvider::try_new(table)?))?;
        }
        "listing" => {
            let url = ListingTableUrl::parse(format!("{}/", root.join("data").to_string_lossy()))?;
            // `p` is read from the files (no partition columns from the paths)
            let options = ListingOptions::new(Arc::new(ParquetFormat::default()))
                .with_file_extension(".parquet");
            let schema = options.infer_schema(&ctx.state(), &url).await?;
            let config = ListingTableConfig::new(url)
                .with_listing_options(options)
                .with_schema(schema);
            ctx.register_table("t", Arc::new(ListingTable::try_new(config)?))?;
        }
        other => return Err(format!("--scan-all {other}: expected icefloe or listing").into()),
    }
    let total = (manifests * files) as u64 * rows_per_file as u64;
    println!("# Scanning every file: {manifests} manifests x {files} files x {rows_per_file} rows, {engine}");
    println!("machine: {}", machine());
    println!();
    println!("| rows read | share | elapsed s | RSS | peak RSS |");
    println!("|---:|---:|---:|---:|---:|");
    let start = Instant::now();
    let df = ctx.sql("SELECT * FROM t").await?;
    let task = Arc::new(df.task_ctx());
    let plan = df.create_physical_plan().await?;
    let mut stream = execute_stream(Arc::clone(&plan), task)?;
    let row = |rows: u64| {
        println!(
            "| {rows} | {:.0} % | {:.1} | {} | {} |",
            100.0 * rows as f64 / total.max(1) as f64,
            start.elapsed().as_secs_f64(),
            mib(rss_bytes()),
            mib(peak_rss_bytes())
        )
    };
    row(0);
    let (mut rows, mut next) = (0u64, total / 20);
    while let Some(batch) = stream.next().await {
        rows += batch?.num_rows() as u64;
        if rows >= next {
            row(rows);
            next += total / 20;
        }
    }
    if rows != total {
        return Err(format!("read {rows} rows, the table holds {total}").into());
    }
    drop(stream);
    // what the plan's nodes registered in their metrics sets while running (DataFusion's
    // Parquet opener registers its per-file metrics, labelled with the file's name, in
    // the scan's set, which lives as long as the plan)
    let mut metrics = 0usize;
    let mut nodes = vec![plan];
    while let Some(node) = nodes.pop() {
        metrics += node.metrics().map_or(0, |m| m.iter().count());
        nodes.extend(node.children().into_iter().cloned());
    }
    let files = manifests * files;
    println!();
    println!(
        "metrics registered in the plan after the scan: {metrics} ({:.1} per file)",
        metrics as f64 / files.max(1) as f64
    );
    println!(
        "{engine}: {rows} rows in {:.1} s, peak RSS {}",
        start.elapsed().as_secs_f64(),
        mib(peak_rss_bytes())
    );
    Ok(())
}
