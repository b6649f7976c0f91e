//! The TPC-H tables the query benches share: `tpchgen-cli` Parquet files and the Iceberg
//! v2 tables icefloe's writer registers over them ("add_files"), both made once under
//! `DATA/tpch-sfN/` and reused.

use std::path::{Path, PathBuf};
use std::process::Command;

use icefloe::spec::PartitionSpec;
use icefloe::write::{schema_from_parquet, LocalTableWriter};

use crate::common::{parquet_files, Args, BoxError};

/// The eight TPC-H tables.
pub const TABLES: [&str; 8] = [
    "customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier",
];

/// Generate the Parquet files (if missing) and the Iceberg tables over them (if missing).
pub fn prepare(args: &Args, root: &Path, sf: &str) -> Result<(), BoxError> {
    let parquet = root.join("parquet");
    let parts = args.get("parts").unwrap_or_else(|| "4".into());
    if !TABLES.iter().all(|t| parquet.join(t).is_dir()) {
        let bin = crate::common::tpchgen_binary(args);
        eprintln!("generating TPC-H SF{sf} Parquet with {bin} ({parts} files per table) …");
        let status = Command::new(&bin)
            .args(["parquet", "-s", sf, "--parts", &parts, "--output-dir"])
            .arg(&parquet)
            .status()
            .map_err(|e| format!("cannot run '{bin}' (install: pip install tpchgen-cli): {e}"))?;
        if !status.success() {
            return Err(format!("{bin} failed: {status}").into());
        }
    }
    for t in TABLES {
        let table_dir = root.join("iceberg").join(t);
        if table_dir.join("metadata/version-hint.text").exists() {
            continue;
        }
        let files = parquet_files(&parquet.join(t))?;
        let first = files
            .first()
            .ok_or_else(|| format!("no Parquet files for {t}"))?;
        let schema = schema_from_parquet(first)?;
        let mut w = LocalTableWriter::create(
            &table_dir,
            schema,
            PartitionSpec::unpartitioned(),
            Default::default(),
        )?;
        w.add_parquet_files(&files)?;
        eprintln!(
            "registered {} files as Iceberg table {}",
            files.len(),
            table_dir.display()
        );
    }
    Ok(())
}

/// The TPC-H query numbers to run: `--queries 1,6,18`, else all 22.
pub fn queries(args: &Args) -> Vec<usize> {
    match args.get("queries") {
        Some(list) => list
            .split(',')
            .filter_map(|q| q.trim().parse().ok())
            .collect(),
        None => (1..=22).collect(),
    }
}

/// The directory of the query texts (`qNN.sql`): `--query-dir DIR`, else
/// `../shared/bench/tpch-queries`.
pub fn query_dir(args: &Args) -> PathBuf {
    args.get("query-dir").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/tpch-queries")
    })
}
