//! Print the pruning funnel of queries: for one table and SQL, or for every case of a
//! corpus folder (tables with a `cases.json`), comparing the data files icefloe plans
//! with Iceberg Java's count (`iceberg_java_scan.data_files`).
//!
//! ```text
//! cargo run --example explain_pruning -- <table dir> "SELECT * FROM t WHERE id = 5"
//! cargo run --example explain_pruning -- --corpus ../shared/corpus
//! ```

use std::sync::Arc;

use datafusion::prelude::SessionContext;
use icefloe::IcebergTableProvider;

async fn run(
    location: &str,
    sql: &str,
    snapshot: Option<i64>,
    tag: Option<&str>,
) -> Result<icefloe::scan::ScanMetrics, Box<dyn std::error::Error>> {
    let mut provider = IcebergTableProvider::open(location).await?;
    if let Some(id) = snapshot {
        provider = provider.with_snapshot_id(id)?;
    }
    if let Some(tag) = tag {
        provider = provider.with_ref(tag)?;
    }
    let provider = Arc::new(provider);
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::clone(&provider) as _)?;
    ctx.sql(sql).await?.collect().await?;
    Ok(provider.last_scan_metrics().unwrap_or_default())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--corpus") {
        let dir = args.get(1).ok_or("usage: --corpus <dir>")?;
        // DataFusion spellings of Spark SQL, kept by the conformance runner
        let rewrites: serde_json::Value =
            std::fs::read_to_string("tests/conformance/sql_rewrites.json")
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
        let (mut ours_total, mut java_total) = (0usize, 0usize);
        let mut entries: Vec<_> = std::fs::read_dir(dir)?
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for table in entries {
            let Ok(text) = std::fs::read_to_string(table.join("cases.json")) else {
                continue;
            };
            let cases: serde_json::Value = serde_json::from_str(&text)?;
            let location = table.to_string_lossy().to_string();
            let name = table
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            for case in cases["cases"].as_array().into_iter().flatten() {
                let key = format!("{name}/{}", case["name"].as_str().unwrap_or("?"));
                let sql = rewrites[&key]
                    .as_str()
                    .or(case["sql"].as_str())
                    .unwrap_or_default()
                    .replace("{t}", "t");
                let java = case["iceberg_java_scan"]["data_files"]
                    .as_u64()
                    .map(|v| v as usize);
                // the DuckDB-oracle table has PyIceberg's planner count instead
                let pyiceberg = case["pyiceberg_scan"]["data_files"].as_u64();
                let result = run(
                    &location,
                    &sql,
                    case["snapshot_id"].as_i64(),
                    case["ref"].as_str(),
                )
                .await;
                let label = format!("{name}/{}", case["name"].as_str().unwrap_or("?"));
                match result {
                    Ok(m) => {
                        let flag = match java {
                            Some(j) if m.data_files_planned > j => " MORE THAN JAVA",
                            _ => "",
                        };
                        if let Some(j) = java {
                            ours_total += m.data_files_planned;
                            java_total += j;
                        }
                        println!(
                            "{label}: files={} java={} (manifests {}/{} skipped, partition-skipped {}, metrics-skipped {}){flag}",
                            m.data_files_planned,
                            java.map_or_else(
                                || pyiceberg.map_or("-".into(), |p| format!("- pyiceberg={p}")),
                                |j| j.to_string()
                            ),
                            m.manifests_skipped,
                            m.manifests_total,
                            m.data_files_skipped_by_partition,
                            m.data_files_skipped_by_metrics,
                        );
                    }
                    Err(e) => println!("{label}: error: {e}"),
                }
            }
        }
        println!("total files={ours_total} java={java_total}");
        return Ok(());
    }
    let location = args
        .first()
        .ok_or("usage: explain_pruning <table> <SQL> | --corpus <dir>")?;
    let sql = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "SELECT count(*) FROM t".into());
    let m = run(location, &sql, None, None).await?;
    println!("{m:#?}");
    Ok(())
}
