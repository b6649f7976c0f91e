//! TPC-H on datafusion-distributed (issue 15): the same SQL over the same icefloe Iceberg
//! tables on one node and on in-process workers (feature `distributed`), interleaved,
//! medians, per-query ratio to single node, results compared.
//!
//! ```text
//! cargo bench --features distributed --bench distributed -- --sf 1 [--workers 2,4]
//!     [--iterations 5] [--queries 1,6,18] [--data DIR] [--tpchgen PATH]
//!     [--bytes-per-partition 16777216]
//! ```
//!
//! The workers run in this process behind datafusion-distributed's in-memory gRPC
//! channel: every task's plan is encoded with icefloe's codec, sent, decoded and run by a
//! worker, and its rows come back as Arrow Flight messages, as between machines. On one
//! machine the workers share its cores, so the ratio is what distribution costs here
//! (planning into stages, plan serialization, shuffles through Flight), not a speed-up.
//! Data: as `side_by_side` (`DATA/tpch-sfN/iceberg/<table>`, made once).

mod common;
#[path = "common/tpch.rs"]
mod tpch;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::{canonical_rows, machine, median, ms, timed, Args, BoxError};
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::datafusion::distributed::in_process_session;
use icefloe::IcebergTableProvider;

async fn register(ctx: &SessionContext, root: &Path) -> Result<(), BoxError> {
    for t in tpch::TABLES {
        let location = root.join("iceberg").join(t);
        let provider = IcebergTableProvider::open(&location.to_string_lossy()).await?;
        ctx.register_table(t, Arc::new(provider))?;
    }
    Ok(())
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
    let bytes_per_partition: usize = args.num("bytes-per-partition", 16 * 1024 * 1024);
    let workers: Vec<usize> = args
        .get("workers")
        .unwrap_or_else(|| "2,4".into())
        .split(',')
        .filter_map(|w| w.trim().parse().ok())
        .filter(|w| *w > 0)
        .collect();
    let queries = tpch::queries(&args);
    let query_dir = tpch::query_dir(&args);
    let root = common::data_dir(&args).join(format!("tpch-sf{sf}"));
    tpch::prepare(&args, &root, &sf)?;

    // Side 0 is the single node; side k is `workers[k - 1]` in-process workers.
    let config = SessionConfig::new();
    let mut sides = vec![SessionContext::new_with_config(config.clone())];
    for w in &workers {
        sides.push(in_process_session(*w, config.clone(), bytes_per_partition)?);
    }
    for ctx in &sides {
        register(ctx, &root).await?;
    }
    let names: Vec<String> = std::iter::once("single node".to_string())
        .chain(workers.iter().map(|w| format!("{w} workers")))
        .collect();

    println!("# TPC-H SF{sf}: icefloe on one node vs on in-process datafusion-distributed workers");
    println!(
        "machine: {}; target_partitions {}; {bytes_per_partition} bytes per task partition; \
         iterations: {iterations} per side, rotated; medians in ms",
        machine(),
        config.target_partitions()
    );
    println!();
    let mut header = "| query |".to_string();
    let mut rule = "|---|".to_string();
    for (k, name) in names.iter().enumerate() {
        header.push_str(&format!(" {name} ms |"));
        rule.push_str("---:|");
        if k > 0 {
            header.push_str(&format!(" {name} / single |"));
            rule.push_str("---:|");
        }
    }
    println!("{header} rows | same results |\n{rule}---:|---|");
    let mut totals = vec![Duration::ZERO; sides.len()];
    let mut mismatches = vec![];
    for q in &queries {
        let sql = std::fs::read_to_string(query_dir.join(format!("q{q:02}.sql")))?;
        // Warm-up: the results compared.
        let (expected, _) = run(&sides[0], &sql).await?;
        let mut same = true;
        for ctx in &sides[1..] {
            same &= run(ctx, &sql).await?.0 == expected;
        }
        if !same {
            mismatches.push(*q);
        }
        let mut times = vec![vec![]; sides.len()];
        for i in 0..iterations {
            for k in 0..sides.len() {
                let side = (i + k) % sides.len();
                times[side].push(run(&sides[side], &sql).await?.1);
            }
        }
        let medians: Vec<Duration> = times.into_iter().map(median).collect();
        let mut line = format!("| q{q:02} |");
        for (k, m) in medians.iter().enumerate() {
            totals[k] += *m;
            line.push_str(&format!(" {:.1} |", ms(*m)));
            if k > 0 {
                line.push_str(&format!(" {:.3} |", ms(*m) / ms(medians[0])));
            }
        }
        println!(
            "{line} {} | {} |",
            expected.len(),
            if same { "yes" } else { "NO" }
        );
    }
    let mut line = "| total |".to_string();
    for (k, t) in totals.iter().enumerate() {
        line.push_str(&format!(" {:.1} |", ms(*t)));
        if k > 0 {
            line.push_str(&format!(" {:.3} |", ms(*t) / ms(totals[0])));
        }
    }
    println!("{line} | {} |", common::same_results_cell(&mismatches));
    common::finish_query_run(&mismatches)
}
