//! TPC-H side by side: the same SQL on icefloe (`IcebergTableProvider` over Iceberg v2
//! tables) and on DataFusion's `ListingTable` over the very same Parquet files (the
//! floor), interleaved, medians, per-query ratio and total, results compared.
//!
//! ```text
//! cargo bench --bench side_by_side -- --sf 1 [--iterations 5] [--queries 1,6,18]
//!     [--data DIR] [--tpchgen PATH] [--parts 4] [--refresh 5]
//!     [--python PATH | --no-python] [--peers duckdb,pyiceberg] [--peer-iterations N]
//!     [--explain DIR] [--lineitem-by-month]
//! ```
//!
//! Data: `tpchgen-cli` (from `--tpchgen`, `$TPCHGEN_CLI` or `PATH`) writes
//! `DATA/tpch-sfN/parquet/<table>/<table>.<k>.parquet` (`--parts` files per table);
//! icefloe's own writer registers them ("add_files") as Iceberg v2 tables in
//! `DATA/tpch-sfN/iceberg/<table>`. Both are made once and reused.
//!
//! With `--refresh R`, `orders` and `lineitem` are read after R rounds of the TPC-H
//! refresh functions applied as merge-on-read deletes (see `common/tpch_refresh.rs`),
//! against `ListingTable` over the same rows compacted into plain Parquet.
//!
//! Each query runs once on each side as a warm-up (its results are the ones compared),
//! then `--iterations` times per side, interleaved A B, B A, … so drift hits both.
//!
//! Peers (issue 18): with `--python PATH` (or `$ICEFLOE_PYTHON`), the same queries also run
//! on DuckDB's `iceberg_scan` and on PyIceberg scans + DuckDB SQL over the same Iceberg
//! tables (`--peers duckdb,pyiceberg`, default both; `benches/tpch_peers.py`, one process
//! per engine), `--peer-iterations N` times (default and at most `--iterations`); the
//! sides' order rotates every iteration. Their results are compared with icefloe's as
//! numbers within a tolerance (`common/approx_rows.rs`); a peer's failure shows in its cell.
//!
//! With `--lineitem-by-month` (issue 18, item 8), `lineitem` is an Iceberg table
//! partitioned by `month(l_shipdate)` (84 months), written once by icefloe's `INSERT INTO`
//! (`write.distribution-mode` `hash`: one file per month) into a SQLite catalog in
//! `DATA/tpch-sfN-month/` from the Parquet files above; `ListingTable` (and the peers)
//! read the same 84 files, so the floor is DataFusion over the partitioned files without
//! Iceberg's partition pruning.
//!
//! With `--explain DIR`, after its timed runs each query runs once more per side under
//! `EXPLAIN ANALYZE`, written to `DIR/qNN-icefloe.txt` and `DIR/qNN-listing.txt`, to
//! compare where the two spend their time (the scans' `time_elapsed_opening`, …).

#[path = "common/approx_rows.rs"]
mod approx_rows;
mod common;
#[path = "common/peer.rs"]
mod peer;
#[path = "common/tpch.rs"]
mod tpch;
#[path = "common/tpch_refresh.rs"]
mod tpch_refresh;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::{canonical_rows, machine, median, ms, parquet_files, timed, Args, BoxError};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableCreation, TableIdent};
use icefloe::datafusion::{register_iceberg_options, sql, IcebergCatalogProvider};
use icefloe::write::schema_from_parquet;
use icefloe::IcebergTableProvider;
use peer::Peer;

/// Where one table is read from: the Iceberg table (a table directory or metadata file)
/// and the directory of its Parquet data files (for `ListingTable`, listed recursively).
#[derive(Clone)]
struct TableFiles {
    iceberg: String,
    parquet: PathBuf,
}

impl TableFiles {
    /// `root/iceberg/table` and `root/parquet/table`.
    fn under(root: &Path, table: &str) -> Self {
        Self {
            iceberg: root
                .join("iceberg")
                .join(table)
                .to_string_lossy()
                .into_owned(),
            parquet: root.join("parquet").join(table),
        }
    }
}

/// The two sessions, and each table's current metadata file (for the peers).
async fn contexts(
    files_of: impl Fn(&str) -> TableFiles,
) -> Result<(SessionContext, SessionContext, Vec<(String, String)>), BoxError> {
    let config = || SessionConfig::new();
    let iceberg = SessionContext::new_with_config(config());
    let listing = SessionContext::new_with_config(config());
    let mut metadata = vec![];
    for t in tpch::TABLES {
        let files = files_of(t);
        let provider = IcebergTableProvider::open(&files.iceberg).await?;
        metadata.push((
            t.to_string(),
            provider.table().metadata_location().to_string(),
        ));
        iceberg.register_table(t, Arc::new(provider))?;
        let dir = format!("{}/", files.parquet.display());
        listing
            .register_parquet(t, &dir, ParquetReadOptions::default())
            .await?;
    }
    Ok((iceberg, listing, metadata))
}

/// `lineitem` partitioned by `month(l_shipdate)`, written once from the Parquet files
/// under `root` by icefloe's `INSERT INTO` into the SQLite catalog `DIR/catalog.db`
/// (`DIR` = `root`'s sibling `tpch-sfN-month`); reused when it holds rows.
async fn lineitem_by_month(root: &Path, sf: &str) -> Result<TableFiles, BoxError> {
    let dir = root.with_file_name(format!("tpch-sf{sf}-month"));
    let catalog = Arc::new(SqlCatalog::open_or_create("cat", dir.join("catalog.db"))?);
    let ident = TableIdent::parse("ns.lineitem");
    let table = match catalog.load_table(&ident).await {
        Ok(table) if table.metadata().current_snapshot().is_some() => table,
        _ => {
            let _ = catalog.drop_table(&ident, true).await;
            // the namespace may exist from an earlier, interrupted run
            let _ = catalog
                .create_namespace(&Namespace::parse("ns"), &HashMap::new())
                .await;
            let source = root.join("parquet").join("lineitem");
            let schema = schema_from_parquet(&parquet_files(&source)?[0])?;
            let mut creation = TableCreation::new(schema.clone());
            creation.partition_spec = common::lineitem_month_spec(&schema)?;
            creation
                .properties
                .insert("write.distribution-mode".into(), "hash".into());
            catalog.create_table(&ident, creation).await?;
            eprintln!(
                "writing lineitem partitioned by month(l_shipdate) into {} …",
                dir.display()
            );
            let ctx =
                SessionContext::new_with_config(register_iceberg_options(SessionConfig::new()));
            ctx.register_parquet(
                "lineitem",
                &format!("{}/", source.display()),
                ParquetReadOptions::default(),
            )
            .await?;
            let provider =
                IcebergCatalogProvider::try_new(Arc::clone(&catalog) as Arc<dyn Catalog>).await?;
            ctx.register_catalog("cat", Arc::new(provider));
            sql::execute(&ctx, "INSERT INTO cat.ns.lineitem SELECT * FROM lineitem")
                .await?
                .collect()
                .await?;
            catalog.load_table(&ident).await?
        }
    };
    let location = table.metadata().location.trim_start_matches("file://");
    Ok(TableFiles {
        iceberg: table.metadata_location().to_string(),
        parquet: Path::new(location).join("data"),
    })
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<(Vec<RecordBatch>, Duration), BoxError> {
    let (res, took) = timed(async { ctx.sql(sql).await?.collect().await }).await;
    Ok((res?, took))
}

/// A side of the table: the two DataFusion sessions, then the peers by index.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Icefloe,
    Listing,
    Peer(usize),
}

/// One peer's column for one query: its median, or the error it gave.
struct PeerCell {
    times: Vec<Duration>,
    error: Option<String>,
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::from_env();
    let sf = args.get("sf").unwrap_or_else(|| "1".into());
    let iterations: usize = args.num("iterations", 5);
    let peer_iterations: usize = args.num("peer-iterations", iterations).min(iterations);
    let queries = tpch::queries(&args);
    let query_dir = tpch::query_dir(&args);
    let root = common::data_dir(&args).join(format!("tpch-sf{sf}"));
    tpch::prepare(&args, &root, &sf)?;
    let rounds: usize = args.num("refresh", 0);
    let (iceberg, listing, metadata) = if args.has("lineitem-by-month") {
        println!(
            "# TPC-H SF{sf}, lineitem partitioned by month(l_shipdate): icefloe (Iceberg v2) \
             vs DataFusion ListingTable over the same Parquet files"
        );
        let by_month = lineitem_by_month(&root, &sf).await?;
        contexts(|t| match t {
            "lineitem" => by_month.clone(),
            _ => TableFiles::under(&root, t),
        })
        .await?
    } else if rounds == 0 {
        println!("# TPC-H SF{sf}: icefloe (Iceberg v2) vs DataFusion ListingTable over the same Parquet files");
        contexts(|t| TableFiles::under(&root, t)).await?
    } else {
        let refreshed = root.with_file_name(format!("tpch-sf{sf}-rf{rounds}"));
        let per_round = tpch_refresh::prepare_refresh(&root, &refreshed, rounds)?;
        println!(
            "# TPC-H SF{sf} after {rounds} merge-on-read refresh rounds ({per_round} orders \
             inserted and deleted per round: position deletes on orders, equality deletes \
             on lineitem): icefloe vs DataFusion ListingTable over the compacted rows"
        );
        contexts(|t| {
            if t == "orders" || t == "lineitem" {
                TableFiles::under(&refreshed, t)
            } else {
                TableFiles::under(&root, t)
            }
        })
        .await?
    };
    let (python, kinds) = peer::peers_from_args(&args)?;
    let mut peers = vec![];
    for kind in kinds {
        let mut p = Peer::start(python.as_deref().unwrap_or("python3"), kind)?;
        p.tables(&metadata)
            .map_err(|e| format!("{}: {e}", kind.label()))?;
        peers.push(p);
    }
    let results_dir = tempfile::tempdir()?;
    println!(
        "machine: {}; iterations: {iterations} per side, interleaved; medians in ms",
        machine()
    );
    if !peers.is_empty() {
        println!(
            "peers: {}; python: {}; {peer_iterations} iterations per peer, in the same rotation",
            peers
                .iter()
                .map(|p| format!("{} ({})", p.kind.label(), p.versions))
                .collect::<Vec<_>>()
                .join(", "),
            python.as_deref().unwrap_or(""),
        );
    }
    println!();
    let mut header = "| query | icefloe ms | ListingTable ms | ratio |".to_string();
    let mut rule = "|---|---:|---:|---:|".to_string();
    for p in &peers {
        let l = p.kind.label();
        header += &format!(" {l} ms | icefloe/{l} |");
        rule += "---:|---:|";
    }
    println!("{header} rows | same results |");
    println!("{rule}---:|---|");
    let mut sides = vec![Side::Icefloe, Side::Listing];
    sides.extend((0..peers.len()).map(Side::Peer));
    let (mut total_a, mut total_b) = (Duration::ZERO, Duration::ZERO);
    // Per peer: (its total, icefloe's total over the same queries, queries answered).
    let mut peer_totals = vec![(Duration::ZERO, Duration::ZERO, 0usize); peers.len()];
    let mut mismatches = vec![];
    for q in &queries {
        let sql = std::fs::read_to_string(query_dir.join(format!("q{q:02}.sql")))?;
        let (mut rows_a, mut rows_b) = (None, None);
        let mut cells: Vec<PeerCell> = (0..peers.len())
            .map(|_| PeerCell {
                times: vec![],
                error: None,
            })
            .collect();
        let mut peer_rows: Vec<Option<Vec<RecordBatch>>> = vec![None; peers.len()];
        for side in &sides {
            match *side {
                Side::Icefloe => rows_a = Some(run(&iceberg, &sql).await?.0),
                Side::Listing => rows_b = Some(run(&listing, &sql).await?.0),
                Side::Peer(k) => {
                    let out = peer::result_file(results_dir.path(), peers[k].kind, *q);
                    match peers[k].query(&sql, Some(&out)) {
                        Ok(r) => peer_rows[k] = r.batches,
                        Err(e) => cells[k].error = Some(e),
                    }
                }
            }
        }
        let rows_a = rows_a.unwrap_or_default();
        let canonical_a = canonical_rows(&rows_a);
        let mut differ = vec![];
        if canonical_a != canonical_rows(&rows_b.unwrap_or_default()) {
            differ.push("ListingTable".to_string());
        }
        if !peers.is_empty() {
            let cells_a = approx_rows::rows(&rows_a)?;
            for (k, batches) in peer_rows.iter().enumerate() {
                let Some(batches) = batches else { continue };
                let label = peers[k].kind.label();
                let verdict = approx_rows::rows(batches)
                    .map_err(|e| e.to_string())
                    .and_then(|cells_p| approx_rows::same_rows(&cells_a, &cells_p));
                if let Err(e) = verdict {
                    eprintln!("q{q:02}: {label} differs from icefloe: {e}");
                    differ.push(label.to_string());
                }
            }
        }
        if !differ.is_empty() {
            mismatches.push(*q);
        }
        let (mut ta, mut tb) = (vec![], vec![]);
        for i in 0..iterations {
            for j in 0..sides.len() {
                match sides[(i + j) % sides.len()] {
                    Side::Icefloe => ta.push(run(&iceberg, &sql).await?.1),
                    Side::Listing => tb.push(run(&listing, &sql).await?.1),
                    Side::Peer(k) => {
                        if i >= peer_iterations || cells[k].error.is_some() {
                            continue;
                        }
                        match peers[k].query(&sql, None) {
                            Ok(r) => cells[k].times.push(r.time),
                            Err(e) => cells[k].error = Some(e),
                        }
                    }
                }
            }
        }
        if let Some(dir) = args.get("explain") {
            let dir = PathBuf::from(dir);
            std::fs::create_dir_all(&dir)?;
            for (ctx, name) in [(&iceberg, "icefloe"), (&listing, "listing")] {
                let (batches, _) = run(ctx, &format!("EXPLAIN ANALYZE {sql}")).await?;
                let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?;
                std::fs::write(dir.join(format!("q{q:02}-{name}.txt")), text.to_string())?;
            }
        }
        let (ma, mb) = (median(ta), median(tb));
        total_a += ma;
        total_b += mb;
        let mut line = format!(
            "| q{q:02} | {:.1} | {:.1} | {:.3} |",
            ms(ma),
            ms(mb),
            ms(ma) / ms(mb)
        );
        for (k, cell) in cells.into_iter().enumerate() {
            match cell.error {
                Some(e) => line += &format!(" {} | |", peer::error_cell(&e)),
                None => {
                    let mp = median(cell.times);
                    let t = &mut peer_totals[k];
                    t.0 += mp;
                    t.1 += ma;
                    t.2 += 1;
                    line += &format!(" {:.1} | {:.3} |", ms(mp), ms(ma) / ms(mp));
                }
            }
        }
        let same = if differ.is_empty() {
            "yes".to_string()
        } else if peers.is_empty() {
            "NO".to_string()
        } else {
            format!("NO: {}", differ.join(", "))
        };
        println!("{line} {} | {same} |", canonical_a.len());
    }
    let mut line = format!(
        "| total | {:.1} | {:.1} | {:.3} |",
        ms(total_a),
        ms(total_b),
        ms(total_a) / ms(total_b)
    );
    for (peer_total, icefloe_total, answered) in &peer_totals {
        let of = if *answered == queries.len() {
            String::new()
        } else {
            format!(" ({answered} of {} queries)", queries.len())
        };
        line += &format!(
            " {:.1}{of} | {:.3} |",
            ms(*peer_total),
            ms(*icefloe_total) / ms(*peer_total)
        );
    }
    println!("{line} | {} |", common::same_results_cell(&mismatches));
    drop(peers);
    common::finish_query_run(&mismatches)
}
