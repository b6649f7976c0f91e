//! Row-level deletes (issue 4): scan throughput with and without position deletes, and
//! equality deletes at scale (an upsert chain of ~300 commits).
//!
//! ```text
//! cargo bench --bench deletes -- [--sf 1] [--commits 300] [--keys 1000]
//!     [--iterations 5] [--data DIR] [--corpus ../shared/corpus] [--only TEXT]
//! ```
//!
//! `--only TEXT` runs only the position-delete rows whose table, way and query (as
//! printed: `10% random, v3 deletion vectors, per batch (auto) | count, sum`) contain
//! TEXT (and the table without deletes for the queries TEXT names), and skips the
//! equality-delete part (to profile one case).
//!
//! * **Position deletes and deletion vectors**: TPC-H `lineitem` (the files under
//!   `DATA/tpch-sfN/parquet/lineitem`, made by `tpchgen-cli` when missing) as an Iceberg
//!   table five times: plain (v2), with one Parquet position delete file per data file
//!   (v2) deleting every 10th row or 10 % of the rows at random (a fixed LCG), and as v3
//!   tables with one deletion vector per data file deleting the same rows. Each is read
//!   with `SELECT count(*), sum(l_quantity)` and TPC-H Q6 (a filtered scan); the deleted
//!   tables are read three times: with icefloe's default (`icefloe.position_deletes =
//!   auto`: these fragmented deletes applied per batch after decoding), and with the
//!   deletes given to the Parquet decoder as a row selection (`selection`), under the
//!   reader's default selection policy (`Auto`: a boolean mask when the selection's runs
//!   are short) and with selectors forced
//!   (`datafusion.execution.parquet.force_filter_selections`). Tables deleting the same
//!   rows must give the same answers (issue 18, item 4).
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
    field, local_data_file, location, machine, median, ms, parquet_files, position_delete_batch,
    prepare_lineitem, timed, write_parquet, Args, BoxError,
};
use datafusion::arrow::array::{Int32Array, Int64Array};
use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;
use icefloe::catalog::{Catalog, FileSystemCatalog, TableCreation, TableIdent};
use icefloe::spec::{DataContentType, NestedField, PartitionSpec, PrimitiveType, Schema, Type};
use icefloe::transaction::{AppendFiles, RowDelta, Transaction};
use icefloe::write::{schema_from_parquet, write_deletion_vectors, LocalTableWriter};
use icefloe::IcebergTableProvider;
use roaring::RoaringTreemap;

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

/// `DATA/tpch-sfN/parquet/lineitem`'s files (made by `tpchgen-cli` when missing).
fn lineitem_files(args: &Args, sf_root: &Path, sf: &str) -> Result<Vec<PathBuf>, BoxError> {
    let files = parquet_files(&prepare_lineitem(args, sf_root, sf)?)?;
    if files.is_empty() {
        return Err("no lineitem files".into());
    }
    Ok(files)
}

/// The positions of data file `i` (of `rows` rows) that the bench deletes.
fn deleted_positions(i: usize, rows: i64, random: bool) -> RoaringTreemap {
    (0..rows)
        .filter(|p| deleted_position(i, *p, random))
        .map(|p| p as u64)
        .collect()
}

/// lineitem as a plain Iceberg v2 table (the side-by-side harness's table, made here
/// when that harness has not run).
fn build_plain_table(files: &[PathBuf], root: &Path) -> Result<(), BoxError> {
    if root.join("metadata/version-hint.text").exists() {
        return Ok(());
    }
    let schema = schema_from_parquet(&files[0])?;
    let mut w = LocalTableWriter::create(
        root,
        schema,
        PartitionSpec::unpartitioned(),
        Default::default(),
    )?;
    w.add_parquet_files(files)?;
    Ok(())
}

/// lineitem (v2) with one position delete file per data file deleting every 10th row,
/// or 10 % of the rows at random (`random`).
fn build_position_delete_table(
    files: &[PathBuf],
    root: &Path,
    random: bool,
) -> Result<(), BoxError> {
    if root.join("metadata/version-hint.text").exists() {
        return Ok(());
    }
    let schema = schema_from_parquet(&files[0])?;
    let mut w = LocalTableWriter::create(
        root,
        schema.clone(),
        PartitionSpec::unpartitioned(),
        Default::default(),
    )?;
    w.add_parquet_files(files)?;
    let delete_dir = root.join("deletes");
    std::fs::create_dir_all(&delete_dir)?;
    let mut deletes = vec![];
    for (i, f) in files.iter().enumerate() {
        let rows = local_data_file(f, &schema, DataContentType::Data, vec![])?.record_count;
        let file_location = location(f)?;
        let positions: Vec<(String, i64)> = deleted_positions(i, rows, random)
            .iter()
            .map(|p| (file_location.clone(), p as i64))
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

/// lineitem as a v3 table (in a filesystem catalog under `warehouse`, as `d.<name>`)
/// with one deletion vector per data file (all in one Puffin file) deleting the same
/// rows as [`build_position_delete_table`]. Returns the table's directory.
async fn build_deletion_vector_table(
    files: &[PathBuf],
    warehouse: &Path,
    name: &str,
    random: bool,
) -> Result<PathBuf, BoxError> {
    let root = warehouse.join("d").join(name);
    if root.join("metadata/version-hint.text").exists() {
        return Ok(root);
    }
    std::fs::create_dir_all(warehouse.join("d"))?;
    let catalog: Arc<dyn Catalog> = Arc::new(FileSystemCatalog::new(
        "bench",
        &warehouse.to_string_lossy(),
    )?);
    let ident = TableIdent::parse(&format!("d.{name}"));
    let mut creation = TableCreation::new(schema_from_parquet(&files[0])?);
    creation
        .properties
        .insert("format-version".into(), "3".into());
    let table = catalog.create_table(&ident, creation).await?;
    let schema = table.metadata().current_schema().clone();
    let spec_id = table.metadata().default_spec_id;
    let data_files = files
        .iter()
        .map(|f| local_data_file(f, &schema, DataContentType::Data, vec![]))
        .collect::<Result<Vec<_>, _>>()?;
    let table = Transaction::new(Arc::clone(&catalog), ident.clone(), table)
        .add_action(AppendFiles::new(spec_id, data_files.clone())?)
        .commit()
        .await?;
    let vectors = files
        .iter()
        .zip(&data_files)
        .enumerate()
        .map(|(i, (f, d))| Ok((location(f)?, deleted_positions(i, d.record_count, random))))
        .collect::<Result<Vec<_>, BoxError>>()?;
    let deletes = write_deletion_vectors(
        table.file_io(),
        &format!("{}/data", table.metadata().location),
        &PartitionSpec::unpartitioned(),
        vec![],
        vectors,
    )
    .await?;
    let delta =
        RowDelta::new(table.metadata().current_snapshot_id).add_deletes(spec_id, deletes)?;
    Transaction::new(catalog, ident, table)
        .add_action(delta)
        .commit()
        .await?;
    Ok(root)
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
    register_with(location, "auto", false).await
}

/// A session reading `location` as `t`; `position_deletes` is
/// `icefloe.position_deletes` (`auto`, `selection`, `filter`), `force_selectors` sets
/// `datafusion.execution.parquet.force_filter_selections` (row selections applied as
/// selectors, never as a boolean mask).
async fn register_with(
    location: &Path,
    position_deletes: &str,
    force_selectors: bool,
) -> Result<SessionContext, BoxError> {
    let mut options = icefloe::datafusion::IcefloeOptions::default();
    options
        .position_deletes
        .set_word(position_deletes)
        .expect("policy");
    let mut config = datafusion::prelude::SessionConfig::new().with_option_extension(options);
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

/// `SELECT count(*), sum(l_quantity)`: a full scan of two columns.
const COUNT_SUM: &str = "SELECT count(*), sum(l_quantity) FROM t";

/// TPC-H Q6: a scan with a selective filter (row-group and page pruning, pushed filters).
const Q6: &str = "SELECT sum(l_extendedprice * l_discount) AS revenue FROM t \
    WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
    AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

/// The table's live rows (`count(*)`).
async fn live_rows(ctx: &SessionContext) -> Result<i64, BoxError> {
    let rows = common::canonical_rows(&ctx.sql("SELECT count(*) FROM t").await?.collect().await?);
    first_i64(&rows, 0).ok_or_else(|| format!("count(*): {rows:?}").into())
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
    println!(
        "| table | query | live rows | cold ms | median ms | rows/s scanned | vs no deletes |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");

    // Position deletes and deletion vectors on TPC-H lineitem.
    let sf_root = data.join(format!("tpch-sf{sf}"));
    let files = lineitem_files(&args, &sf_root, &sf)?;
    let plain = sf_root.join("iceberg/lineitem");
    build_plain_table(&files, &plain)?;
    let pos = data.join(format!("deletes/lineitem-sf{sf}-pos10"));
    let random = data.join(format!("deletes/lineitem-sf{sf}-pos10-random"));
    build_position_delete_table(&files, &pos, false)?;
    build_position_delete_table(&files, &random, true)?;
    let warehouse = data.join(format!("deletes/dv-sf{sf}"));
    let dv = build_deletion_vector_table(&files, &warehouse, "every10", false).await?;
    let dv_random = build_deletion_vector_table(&files, &warehouse, "random10", true).await?;
    let tables: [(&str, &Path); 5] = [
        ("lineitem (no deletes)", &plain),
        ("every 10th row, v2 position deletes", &pos),
        ("10% random, v2 position deletes", &random),
        ("every 10th row, v3 deletion vectors", &dv),
        ("10% random, v3 deletion vectors", &dv_random),
    ];
    for (query, sql) in [("count, sum", COUNT_SUM), ("Q6", Q6)] {
        // rows/s of the table without deletes, for the ratio
        let mut base_rate = 0.0;
        let mut by_rows: HashMap<i64, Vec<String>> = HashMap::new();
        let mut scanned = 0i64;
        for (label, loc) in tables {
            let policies: &[(&str, &str, bool)] = if loc == plain.as_path() {
                &[("", "auto", false)]
            } else {
                &[
                    ("per batch (auto)", "auto", false),
                    ("selection, mask (Auto)", "selection", false),
                    ("selection, selectors", "selection", true),
                ]
            };
            for (policy, position_deletes, force_selectors) in policies {
                if let Some(only) = args.get("only") {
                    let row = format!("{label}, {policy} | {query}");
                    // the table without deletes runs for the ratio, for the queries asked
                    let base = loc == plain.as_path() && only.contains(query);
                    if !row.contains(&only) && !base {
                        continue;
                    }
                }
                let ctx = register_with(loc, position_deletes, *force_selectors).await?;
                let (cold, med, rows) = time_query(&ctx, sql, iterations).await?;
                let live = live_rows(&ctx).await?;
                if scanned == 0 {
                    scanned = live;
                }
                // the v2 and v3 tables deleting the same rows, under either policy,
                // give the same answer
                if let Some(before) = by_rows.insert(live, rows.clone()) {
                    if before != rows {
                        return Err(format!(
                            "{label} {policy}: {rows:?}, the same rows elsewhere gave {before:?}"
                        )
                        .into());
                    }
                }
                let rate = scanned as f64 / med.as_secs_f64() / 1e6;
                if base_rate == 0.0 {
                    base_rate = rate;
                }
                println!(
                    "| {label}{} | {query} | {live} | {:.1} | {:.1} | {rate:.2} M | {:.2} |",
                    if policy.is_empty() {
                        String::new()
                    } else {
                        format!(", {policy}")
                    },
                    ms(cold),
                    ms(med),
                    rate / base_rate
                );
            }
        }
    }

    if args.has("only") {
        return Ok(());
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
