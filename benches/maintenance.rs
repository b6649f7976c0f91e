//! Maintenance (issue 13): a table after many small appends (one data file and, with
//! manifest merging off, one manifest each), its planning and query times before and
//! after `rewrite_data_files` + `rewrite_manifests` + `expire_snapshots`, and the time
//! each procedure takes.
//!
//! ```text
//! cargo bench --bench maintenance -- [--appends 1000] [--rows 100] [--reads 5]
//! ```
//!
//! Setup (timed as a whole, reported): a SQLite catalog in a temp dir, table
//! `ice.ns.t (id BIGINT, k INT, v DOUBLE)` partitioned by `k` with 4 values spread
//! over the appends (`commit.manifest-merge.enabled` = false), then `--appends`
//! statements `INSERT INTO ice.ns.t VALUES …` of `--rows` rows each, all in one `k`.
//!
//! Measured, `--reads` times each, medians: planning (`TableScan::plan_files` of the
//! current snapshot), `SELECT count(*)`, and `SELECT sum(v) FROM t WHERE k = 1 AND id
//! % 7 = 0`; then once each `CALL system.rewrite_data_files('ns.t')`,
//! `rewrite_manifests`, `expire_snapshots(older_than => now, retain_last => 1)`; then
//! the three reads again. Results before and after are compared.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{canonical_rows, machine, median, ms, Args, BoxError};
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableIdent};
use icefloe::datafusion::IcebergCatalogProvider;

async fn sql(ctx: &SessionContext, q: &str) -> Result<Vec<String>, BoxError> {
    let batches = icefloe::datafusion::sql::execute(ctx, q)
        .await?
        .collect()
        .await?;
    Ok(canonical_rows(&batches))
}

struct Reads {
    plan: Duration,
    count: Duration,
    filtered: Duration,
    answers: Vec<Vec<String>>,
}

async fn reads(
    ctx: &SessionContext,
    catalog: &Arc<dyn Catalog>,
    n: usize,
) -> Result<Reads, BoxError> {
    let ident = TableIdent::parse("ns.t");
    let (mut plan, mut count, mut filtered) = (vec![], vec![], vec![]);
    let mut answers = vec![];
    for _ in 0..n {
        let table = catalog.load_table(&ident).await?;
        let snapshot = table.metadata().current_snapshot().cloned();
        let started = Instant::now();
        icefloe::scan::TableScan::new(table, snapshot)
            .plan_files()
            .await?;
        plan.push(started.elapsed());
        let started = Instant::now();
        let c = sql(ctx, "SELECT count(*) FROM ice.ns.t").await?;
        count.push(started.elapsed());
        let started = Instant::now();
        let f = sql(
            ctx,
            "SELECT sum(v) FROM ice.ns.t WHERE k = 1 AND id % 7 = 0",
        )
        .await?;
        filtered.push(started.elapsed());
        answers = vec![c, f];
    }
    Ok(Reads {
        plan: median(plan),
        count: median(count),
        filtered: median(filtered),
        answers,
    })
}

async fn timed(ctx: &SessionContext, q: &str) -> Result<(Duration, Vec<String>), BoxError> {
    let started = Instant::now();
    let rows = sql(ctx, q).await?;
    Ok((started.elapsed(), rows))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::from_env();
    let appends: usize = args.num("--appends", 1000);
    let rows: usize = args.num("--rows", 100);
    let n: usize = args.num("--reads", 5);
    println!("machine: {}", machine());
    let dir = tempfile::tempdir()?;
    let catalog = SqlCatalog::open_or_create("bench", dir.path().join("catalog.db"))?
        .with_warehouse(&dir.path().join("warehouse").to_string_lossy())?;
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await?;
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    ctx.register_catalog(
        "ice",
        Arc::new(IcebergCatalogProvider::try_new(Arc::clone(&catalog)).await?),
    );
    sql(
        &ctx,
        "CREATE TABLE ice.ns.t (id BIGINT, k INT, v DOUBLE) PARTITIONED BY (k) \
         TBLPROPERTIES ('commit.manifest-merge.enabled'='false')",
    )
    .await?;
    let started = Instant::now();
    for a in 0..appends {
        let values: Vec<String> = (0..rows)
            .map(|r| {
                let id = a * rows + r;
                format!("({id}, {}, {}.5)", a % 4, id % 1000)
            })
            .collect();
        sql(
            &ctx,
            &format!("INSERT INTO ice.ns.t VALUES {}", values.join(", ")),
        )
        .await?;
    }
    println!(
        "setup: {appends} appends of {rows} rows in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let before = reads(&ctx, &catalog, n).await?;
    let mut procedures = vec![];
    for q in [
        "CALL ice.system.rewrite_data_files('ns.t')",
        "CALL ice.system.rewrite_manifests('ns.t')",
        &format!(
            "CALL ice.system.expire_snapshots(table => 'ns.t', older_than => {}, \
             retain_last => 1)",
            // seconds since the epoch, as Spark casts a BIGINT to TIMESTAMP
            chrono::Utc::now().timestamp() + 1
        ),
    ] {
        let (took, result) = timed(&ctx, q).await?;
        procedures.push((q.to_string(), took, result));
    }
    let after = reads(&ctx, &catalog, n).await?;
    println!("| read | before (ms) | after (ms) |\n|---|---|---|");
    for (name, b, a) in [
        ("plan_files", before.plan, after.plan),
        ("count(*)", before.count, after.count),
        ("filtered sum", before.filtered, after.filtered),
    ] {
        println!("| {name} | {:.1} | {:.1} |", ms(b), ms(a));
    }
    println!("| procedure | time (ms) | result |\n|---|---|---|");
    for (q, took, result) in &procedures {
        println!("| `{q}` | {:.1} | {} |", ms(*took), result.join("; "));
    }
    if before.answers != after.answers {
        return Err(format!(
            "answers differ: before {:?}, after {:?}",
            before.answers, after.answers
        )
        .into());
    }
    println!("answers equal before and after: {:?}", after.answers);
    Ok(())
}
