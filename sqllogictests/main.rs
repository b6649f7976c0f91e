//! sqllogictest runner: every `test_files/*.slt` against a fresh DataFusion session with
//! icefloe's `STORED AS ICEBERG` factory registered.
//!
//! Run: `cargo test --test sqllogictests` (optionally with a file-name filter as the first
//! argument). Paths in the `.slt` files are relative to the crate root.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::DataFusionError;
use datafusion::prelude::{SessionConfig, SessionContext};
use sqllogictest::{DBOutput, DefaultColumnType};

/// A DataFusion session as a sqllogictest database.
struct IcefloeDb {
    ctx: SessionContext,
}

#[derive(Debug)]
struct DbError(DataFusionError);

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for DbError {}

fn column_type(dt: &DataType) -> DefaultColumnType {
    match dt {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => DefaultColumnType::Integer,
        DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _) => DefaultColumnType::FloatingPoint,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DefaultColumnType::Text,
        _ => DefaultColumnType::Any,
    }
}

fn format_rows(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>, DataFusionError> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = vec![];
    for batch in batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            rows.push(
                formatters
                    .iter()
                    .map(|f| {
                        let s = f.value(row).to_string();
                        if s.is_empty() {
                            "(empty)".to_string()
                        } else {
                            s
                        }
                    })
                    .collect(),
            );
        }
    }
    Ok(rows)
}

/// EXPLAIN output as DataFusion's own sqllogictests write it: the plan type on a line of
/// its own, then one numbered line per plan line, indentation shown as `--`.
fn explain_rows(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    let mut out = vec![];
    for row in rows {
        let [plan_type, plan] = row.as_slice() else {
            out.push(row);
            continue;
        };
        out.push(vec![plan_type.clone()]);
        for (i, line) in plan.lines().filter(|l| !l.trim().is_empty()).enumerate() {
            let trimmed = line.trim_start();
            let indent = "-".repeat(line.len() - trimmed.len());
            // paths under the crate root differ between checkouts
            let root = env!("CARGO_MANIFEST_DIR").trim_start_matches('/');
            let trimmed = trimmed.replace(root, "$ROOT");
            out.push(vec![format!("{:02}){indent}{trimmed}", i + 1)]);
        }
    }
    out
}

#[async_trait]
impl sqllogictest::AsyncDB for IcefloeDb {
    type Error = DbError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<Self::ColumnType>, Self::Error> {
        let df = icefloe::datafusion::sql::execute(&self.ctx, sql)
            .await
            .map_err(|e| DbError(e.into()))?;
        let schema = df.schema().as_arrow().clone();
        let batches = df.collect().await.map_err(DbError)?;
        if schema.fields().is_empty() {
            return Ok(DBOutput::StatementComplete(0));
        }
        let types = schema
            .fields()
            .iter()
            .map(|f| column_type(f.data_type()))
            .collect();
        let mut rows = format_rows(&batches).map_err(DbError)?;
        if schema.fields().len() == 2 && schema.field(0).name() == "plan_type" {
            rows = explain_rows(rows);
        }
        Ok(DBOutput::Rows { types, rows })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "icefloe"
    }

    async fn sleep(dur: std::time::Duration) {
        tokio::time::sleep(dur).await;
    }
}

fn test_files(filter: Option<&str>) -> std::io::Result<Vec<PathBuf>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sqllogictests/test_files");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .filter(|p| filter.is_none_or(|f| p.to_string_lossy().contains(f)))
        .collect();
    files.sort();
    Ok(files)
}

async fn new_db() -> Result<IcefloeDb, DbError> {
    // icefloe's options (SET icefloe.…), without the rest of register_iceberg_options
    let config = SessionConfig::new()
        .with_target_partitions(4)
        .with_information_schema(true)
        .with_option_extension(icefloe::datafusion::IcefloeOptions::default());
    let ctx = SessionContext::new_with_config(config);
    icefloe::register_iceberg_factory(&ctx);
    icefloe::datafusion::register_iceberg_functions(&ctx);
    Ok(IcefloeDb { ctx })
}

#[tokio::main]
async fn main() {
    // The crate root, so LOCATION paths in .slt files are relative to it.
    if let Err(e) = std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")) {
        eprintln!("cannot enter the crate root: {e}");
        std::process::exit(2);
    }
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let files = match test_files(filter.as_deref()) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cannot list sqllogictests/test_files: {e}");
            std::process::exit(2);
        }
    };
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut runner = sqllogictest::Runner::new(new_db);
        match runner.run_file_async(file).await {
            Ok(()) => {
                passed += 1;
                println!("PASS {name}");
            }
            Err(e) => {
                failed += 1;
                println!("FAIL {name}\n{e}");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 || files.is_empty() {
        std::process::exit(1);
    }
}
