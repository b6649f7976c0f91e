//! TPC-H side by side: the same SQL on icefloe (`IcebergTableProvider` over Iceberg v2
//! tables) and on DataFusion's `ListingTable` over the very same Parquet files (the
//! floor), interleaved, medians, per-query ratio and total, results compared.
//!
//! ```text
//! cargo bench --bench side_by_side -- --sf 1 [--iterations 5] [--queries 1,6,18]
//!     [--data DIR] [--tpchgen PATH] [--parts 4] [--refresh 5]
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

mod common;
#[path = "common/tpch.rs"]
mod tpch;
#[path = "common/tpch_refresh.rs"]
mod tpch_refresh;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use common::{canonical_rows, machine, median, ms, timed, Args, BoxError};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use icefloe::IcebergTableProvider;

/// The two sessions; each table is read from `root_of(table)/{iceberg,parquet}/table`.
async fn contexts(
    root_of: impl Fn(&str) -> PathBuf,
) -> Result<(SessionContext, SessionContext), BoxError> {
    let config = || SessionConfig::new();
    let iceberg = SessionContext::new_with_config(config());
    let listing = SessionContext::new_with_config(config());
    for t in tpch::TABLES {
        let root = root_of(t);
        let provider =
            IcebergTableProvider::open(&root.join("iceberg").join(t).to_string_lossy()).await?;
        iceberg.register_table(t, Arc::new(provider))?;
        let dir = format!("{}/", root.join("parquet").join(t).display());
        listing
            .register_parquet(t, &dir, ParquetReadOptions::default())
            .await?;
    }
    Ok((iceberg, listing))
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<(Vec<String>, Duration), BoxError> {
    let (res, took) = timed(async { ctx.sql(sql).await?.collect().await }).await;
    Ok((canonical_rows(&res?), took))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::from_env();
    let sf = args.get("sf").unwrap_or_else(|| "1".into());
    let iterations: usize = args.num("iterations", 5);
    let queries = tpch::queries(&args);
    let query_dir = tpch::query_dir(&args);
    let root = common::data_dir(&args).join(format!("tpch-sf{sf}"));
    tpch::prepare(&args, &root, &sf)?;
    let rounds: usize = args.num("refresh", 0);
    let (iceberg, listing) = if rounds == 0 {
        println!("# TPC-H SF{sf}: icefloe (Iceberg v2) vs DataFusion ListingTable over the same Parquet files");
        contexts(|_| root.clone()).await?
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
                refreshed.clone()
            } else {
                root.clone()
            }
        })
        .await?
    };
    println!(
        "machine: {}; iterations: {iterations} per side, interleaved; medians in ms",
        machine()
    );
    println!();
    println!("| query | icefloe ms | ListingTable ms | ratio | rows | same results |");
    println!("|---|---:|---:|---:|---:|---|");
    let (mut total_a, mut total_b) = (Duration::ZERO, Duration::ZERO);
    let mut mismatches = vec![];
    for q in &queries {
        let sql = std::fs::read_to_string(query_dir.join(format!("q{q:02}.sql")))?;
        let (rows_a, _) = run(&iceberg, &sql).await?;
        let (rows_b, _) = run(&listing, &sql).await?;
        let same = rows_a == rows_b;
        if !same {
            mismatches.push(*q);
        }
        let (mut ta, mut tb) = (vec![], vec![]);
        for i in 0..iterations {
            if i % 2 == 0 {
                ta.push(run(&iceberg, &sql).await?.1);
                tb.push(run(&listing, &sql).await?.1);
            } else {
                tb.push(run(&listing, &sql).await?.1);
                ta.push(run(&iceberg, &sql).await?.1);
            }
        }
        let (ma, mb) = (median(ta), median(tb));
        total_a += ma;
        total_b += mb;
        println!(
            "| q{q:02} | {:.1} | {:.1} | {:.3} | {} | {} |",
            ms(ma),
            ms(mb),
            ms(ma) / ms(mb),
            rows_a.len(),
            if same { "yes" } else { "NO" }
        );
    }
    println!(
        "| total | {:.1} | {:.1} | {:.3} | | {} |",
        ms(total_a),
        ms(total_b),
        ms(total_a) / ms(total_b),
        common::same_results_cell(&mismatches)
    );
    common::finish_query_run(&mismatches)
}
