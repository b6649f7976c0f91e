//! Row-level deletes (issue 4): scan throughput with and without position deletes, and
//! equality deletes at scale (an upsert chain of ~300 commits).
//!
//! ```text
//! cargo bench --bench deletes -- [--sf 1] [--commits 300] [--keys 1000]
//!     [--iterations 5] [--data DIR] [--corpus ../shared/corpus]
//! ```
//!
//! * **Position deletes**: TPC-H `lineitem` (the side-by-side harness's files, run it
//!   first) as an Iceberg table three times: plain, with one Parquet position delete file
//!   per data file deleting every 10th row, and deleting 10 % of the rows at random (a
//!   fixed LCG). `SELECT count(*), sum(l_quantity)` on each; the deleted tables are read
//!   twice, with the Parquet reader's default selection policy (`Auto`: a boolean mask
//!   when the selection's runs are short, as here) and with selectors forced
//!   (`datafusion.execution.parquet.force_filter_selections`), whose results must match
//!   (issue 18, item 4).
//! * **Equality deletes**: `--commits` upsert commits (Flink pattern), each adding a
//!   data file of `--keys` rows `(id, v, c)` and an equality delete file on `[id]` with
//!   the same keys, keys drawn from `[0, 20 × keys)` by a fixed LCG, so every commit's
//!   deletes apply to every older data file (no pruning by bounds). COUNT(*) and sum(v)
//!   are checked against an independent computation (the last version of each key).
//! * The Spark-written corpus table `eq_delete_upsert_chain_small` (200 commits), when
//!   the corpus is present.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::{
    field, local_data_file, location, machine, median, ms, position_delete_batch, timed,
    write_parquet, Args, BoxError,
};
use datafusion::arrow::array::{Int32Array, Int64Array};
use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;
use icefloe::spec::{DataContentType, NestedField, PartitionSpec, PrimitiveType, Schema, Type};
use icefloe::write::{schema_from_parquet, LocalTableWriter};
use icefloe::IcebergTableProvider;

/// Whether row `p` of data file `file` is deleted: every 10th row, or (`random`) each
/// row with probability 1/10 from a fixed LCG over (file, position).
fn deleted_position(file: usize, p: i64, random: bool) -> bool {
    if !random {
        return p % 10 == 0;
    }
    let x = (p as u64 ^ ((file as u64) << 40))
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (x >> 33).is_multiple_of(10)
}

/// lineitem with one position delete file per data file deleting every 10th row, or 10 %
/// of the rows at random (`random`).
fn build_position_delete_table(sf_root: &Path, root: &Path, random: bool) -> Result<(), BoxError> {
    if root.join("metadata/version-hint.text").exists() {
        return Ok(());
    }
    let dir = sf_root.join("parquet/lineitem");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e} (run the side_by_side bench first)", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    let schema = schema_from_parquet(files.first().ok_or("no lineitem files")?)?;
    let mut w = LocalTableWriter::create(
        root,
        schema.clone(),
        PartitionSpec::unpartitioned(),
        Default::default(),
    )?;
    w.add_parquet_files(&files)?;
    let delete_dir = root.join("deletes");
    std::fs::create_dir_all(&delete_dir)?;
    let mut deletes = vec![];
    for (i, f) in files.iter().enumerate() {
        let rows = local_data_file(f, &schema, DataContentType::Data, vec![])?.record_count;
        let file_location = location(f)?;
        let positions: Vec<(String, i64)> = (0..rows)
            .filter(|p| deleted_position(i, *p, random))
            .map(|p| (file_location.clone(), p))
            .collect();
        let batch = position_delete_batch(&positions)?;
        let path = delete_dir.join(format!("pos-{i}.parquet"));
        write_parquet(&path, &batch, None)?;
        deletes.push(local_data_file(
            &path,
            &schema,
            DataContentType::PositionDeletes,
            vec![],
        )?);
    }
    w.row_delta(vec![], deletes)?;
    Ok(())
}

/// Keys of commit `c` (distinct within the commit), from a fixed LCG.
fn commit_keys(c: usize, keys: usize) -> Vec<i64> {
    let space = (keys * 20) as u64;
    let mut state = 0x2545_f491_4f6c_dd1du64 ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut seen = HashSet::with_capacity(keys);
    let mut out = Vec::with_capacity(keys);
    while out.len() < keys {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let k = ((state >> 33) % space) as i64;
        if seen.insert(k) {
            out.push(k);
        }
    }
    out
}

fn value(c: usize, k: i64) -> i64 {
    (c as i64) * 1_000_000 + k
}

/// The upsert chain; returns the expected (count, sum(v)).
fn build_upsert_chain(root: &Path, commits: usize, keys: usize) -> Result<(i64, i64), BoxError> {
    // Independent answer: the last version of each key survives.
    let mut last: HashMap<i64, usize> = HashMap::new();
    for c in 0..commits {
        for k in commit_keys(c, keys) {
            last.insert(k, c);
        }
    }
    let expected = (
        last.len() as i64,
        last.iter().map(|(k, c)| value(*c, *k)).sum::<i64>(),
    );
    if root.join("metadata/version-hint.text").exists() {
        return Ok(expected);
    }
    let schema = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::required(2, "v", Type::Primitive(PrimitiveType::Long)),
            NestedField::required(3, "c", Type::Primitive(PrimitiveType::Int)),
        ],
    );
    let mut w = LocalTableWriter::create(
        root,
        schema.clone(),
        PartitionSpec::unpartitioned(),
        Default::default(),
    )?;
    let data_schema = Arc::new(ArrowSchema::new(vec![
        field("id", DataType::Int64, 1),
        field("v", DataType::Int64, 2),
        field("c", DataType::Int32, 3),
    ]));
    let delete_schema = Arc::new(ArrowSchema::new(vec![field("id", DataType::Int64, 1)]));
    let dir = root.join("data");
    std::fs::create_dir_all(&dir)?;
    for c in 0..commits {
        let ks = commit_keys(c, keys);
        let data = RecordBatch::try_new(
            data_schema.clone(),
            vec![
                Arc::new(Int64Array::from(ks.clone())),
                Arc::new(Int64Array::from(
                    ks.iter().map(|k| value(c, *k)).collect::<Vec<_>>(),
                )),
                Arc::new(Int32Array::from(vec![c as i32; ks.len()])),
            ],
        )?;
        let deletes =
            RecordBatch::try_new(delete_schema.clone(), vec![Arc::new(Int64Array::from(ks))])?;
        let data_path = dir.join(format!("data-{c:04}.parquet"));
        let delete_path = dir.join(format!("eqdel-{c:04}.parquet"));
        write_parquet(&data_path, &data, None)?;
        write_parquet(&delete_path, &deletes, None)?;
        let d = local_data_file(&data_path, &schema, DataContentType::Data, vec![])?;
        let e = local_data_file(
            &delete_path,
            &schema,
            DataContentType::EqualityDeletes,
            vec![1],
        )?;
        w.row_delta(vec![d], vec![e])?;
    }
    Ok(expected)
}

/// Median time of `sql` over `iterations` runs (after one warm-up) and its first row.
async fn time_query(
    ctx: &SessionContext,
    sql: &str,
    iterations: usize,
) -> Result<(Duration, Duration, Vec<String>), BoxError> {
    let (first, cold) = timed(async { ctx.sql(sql).await?.collect().await }).await;
    let rows = common::canonical_rows(&first?);
    let mut times = vec![];
    for _ in 0..iterations {
        let (r, t) = timed(async { ctx.sql(sql).await?.collect().await }).await;
        r?;
        times.push(t);
    }
    Ok((cold, median(times), rows))
}

async fn register(location: &Path) -> Result<SessionContext, BoxError> {
    register_with(location, false).await
}

/// A session reading `location` as `t`; `force_selectors` sets
/// `datafusion.execution.parquet.force_filter_selections` (row selections applied as
/// selectors, never as a boolean mask).
async fn register_with(location: &Path, force_selectors: bool) -> Result<SessionContext, BoxError> {
    let mut config = datafusion::prelude::SessionConfig::new();
    config
        .options_mut()
        .execution
        .parquet
        .force_filter_selections = force_selectors;
    let ctx = SessionContext::new_with_config(config);
    let provider = IcebergTableProvider::open(&location.to_string_lossy()).await?;
    ctx.register_table("t", Arc::new(provider))?;
    Ok(ctx)
}

fn first_i64(rows: &[String], col: usize) -> Option<i64> {
    rows.first()?.split('|').nth(col)?.parse().ok()
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::from_env();
    let sf = args.get("sf").unwrap_or_else(|| "1".into());
    let commits: usize = args.num("commits", 300);
    let keys: usize = args.num("keys", 1000);
    let iterations: usize = args.num("iterations", 5);
    let data = common::data_dir(&args);
    println!("# Row-level deletes");
    println!(
        "machine: {}; cold = first run, then median of {iterations}",
        machine()
    );
    println!();
    println!("| table | query | rows out | cold ms | median ms | rows/s scanned |");
    println!("|---|---|---:|---:|---:|---:|");

    // Position deletes on TPC-H lineitem.
    let sf_root = data.join(format!("tpch-sf{sf}"));
    let plain = sf_root.join("iceberg/lineitem");
    let pos = data.join(format!("deletes/lineitem-sf{sf}-pos10"));
    let random = data.join(format!("deletes/lineitem-sf{sf}-pos10-random"));
    if plain.join("metadata/version-hint.text").exists() {
        build_position_delete_table(&sf_root, &pos, false)?;
        build_position_delete_table(&sf_root, &random, true)?;
        let sql = "SELECT count(*), sum(l_quantity) FROM t";
        let mut scanned = 0i64;
        let mut by_table: HashMap<&Path, Vec<String>> = HashMap::new();
        for (label, loc, force_selectors) in [
            ("lineitem (no deletes)", &plain, false),
            (
                "lineitem, every 10th row position-deleted, mask (Auto)",
                &pos,
                false,
            ),
            (
                "lineitem, every 10th row position-deleted, selectors",
                &pos,
                true,
            ),
            (
                "lineitem, 10% random position-deleted, mask (Auto)",
                &random,
                false,
            ),
            (
                "lineitem, 10% random position-deleted, selectors",
                &random,
                true,
            ),
        ] {
            let ctx = register_with(loc, force_selectors).await?;
            let (cold, med, rows) = time_query(&ctx, sql, iterations).await?;
            if let Some(before) = by_table.insert(loc.as_path(), rows.clone()) {
                if before != rows {
                    return Err(
                        format!("{label}: {rows:?}, the other policy gave {before:?}").into(),
                    );
                }
            }
            let n = first_i64(&rows, 0).unwrap_or(0);
            if scanned == 0 {
                scanned = n;
            }
            println!(
                "| {label} | `{sql}` | {n} | {:.1} | {:.1} | {:.2} M |",
                ms(cold),
                ms(med),
                scanned as f64 / med.as_secs_f64() / 1e6
            );
        }
    } else {
        println!("| lineitem | skipped: run `cargo bench --bench side_by_side -- --sf {sf}` first | | | | |");
    }

    // Equality deletes: the upsert chain.
    let chain = data.join(format!("deletes/upsert-chain-{commits}x{keys}"));
    let (want_count, want_sum) = build_upsert_chain(&chain, commits, keys)?;
    let ctx = register(&chain).await?;
    let scanned = (commits * keys) as f64;
    for sql in ["SELECT count(*) FROM t", "SELECT count(*), sum(v) FROM t"] {
        let (cold, med, rows) = time_query(&ctx, sql, iterations).await?;
        let count = first_i64(&rows, 0);
        if count != Some(want_count) {
            return Err(format!("{sql}: got {rows:?}, expected count {want_count}").into());
        }
        if sql.contains("sum") && first_i64(&rows, 1) != Some(want_sum) {
            return Err(format!("{sql}: got {rows:?}, expected sum {want_sum}").into());
        }
        println!(
            "| upsert chain: {commits} commits x {keys} keys (data + equality delete each) | `{sql}` | {want_count} (checked) | {:.1} | {:.1} | {:.2} M |",
            ms(cold),
            ms(med),
            scanned / med.as_secs_f64() / 1e6
        );
    }

    // The Spark-written reference table.
    let corpus = args
        .get("corpus")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let spark = corpus.join("eq_delete_upsert_chain_small");
    if spark.join("metadata").is_dir() {
        let ctx = register(&spark).await?;
        let sql = "SELECT count(*) FROM t";
        let (cold, med, rows) = time_query(&ctx, sql, iterations).await?;
        println!(
            "| corpus `eq_delete_upsert_chain_small` (Spark, 200 commits) | `{sql}` | {} | {:.1} | {:.1} | |",
            first_i64(&rows, 0).unwrap_or(-1),
            ms(cold),
            ms(med)
        );
    }
    if let Some(peak) = common::peak_rss_bytes() {
        println!("\npeak RSS: {:.0} MiB", peak as f64 / (1 << 20) as f64);
    }
    Ok(())
}
