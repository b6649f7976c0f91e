//! Helpers shared by the benchmark programs: arguments, data locations, timing,
//! canonical result text and peak memory.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use datafusion::arrow::array::{Array, ArrayRef, Float32Array, Float64Array};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::file::properties::WriterProperties;
use icefloe::spec::{
    NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, Transform, Type,
};

pub type BoxError = Box<dyn std::error::Error>;

/// The bench programs allocate as the CLI does (feature `mimalloc`, default); each
/// program's header ([`machine`]) names the allocator it was built with.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The global allocator this program was built with.
pub const ALLOCATOR: &str = if cfg!(feature = "mimalloc") {
    "mimalloc"
} else {
    "the system's (glibc)"
};

/// The `tpchgen-cli` program: `--tpchgen PATH`, else `TPCHGEN_CLI`, else on `PATH`.
pub fn tpchgen_binary(args: &Args) -> String {
    args.get("tpchgen")
        .or_else(|| std::env::var("TPCHGEN_CLI").ok())
        .unwrap_or_else(|| "tpchgen-cli".to_string())
}

/// `DATA/tpch-sfN/parquet/lineitem` (`root` = `DATA/tpch-sfN`), generated (lineitem only,
/// `--parts` files, default 4) by `tpchgen-cli` when missing, and reused after.
pub fn prepare_lineitem(args: &Args, root: &Path, sf: &str) -> Result<PathBuf, BoxError> {
    let parquet = root.join("parquet");
    let dir = parquet.join("lineitem");
    if dir.is_dir() && !parquet_files(&dir)?.is_empty() {
        return Ok(dir);
    }
    let parts = args.get("parts").unwrap_or_else(|| "4".into());
    let bin = tpchgen_binary(args);
    eprintln!("generating TPC-H SF{sf} lineitem Parquet with {bin} ({parts} files) …");
    let status = std::process::Command::new(&bin)
        .args([
            "parquet",
            "-s",
            sf,
            "--tables",
            "lineitem",
            "--parts",
            &parts,
            "--output-dir",
        ])
        .arg(&parquet)
        .status()
        .map_err(|e| format!("cannot run '{bin}' (install: pip install tpchgen-cli): {e}"))?;
    if !status.success() {
        return Err(format!("{bin} failed: {status}").into());
    }
    Ok(dir)
}

/// A non-null Arrow field carrying Iceberg field id `id` (`PARQUET:field_id`).
pub fn field(name: &str, dt: DataType, id: i32) -> Field {
    Field::new(name, dt, false).with_metadata(
        [("PARQUET:field_id".to_string(), id.to_string())]
            .into_iter()
            .collect(),
    )
}

/// Write `batches` (all of `schema`) as one Parquet file (`props`: writer defaults if
/// `None`).
pub fn write_parquet_batches(
    path: &Path,
    schema: datafusion::arrow::datatypes::SchemaRef,
    batches: &[RecordBatch],
    props: Option<WriterProperties>,
) -> Result<(), BoxError> {
    let file = std::fs::File::create(path)?;
    let mut w = ArrowWriter::try_new(file, schema, props)?;
    for b in batches {
        w.write(b)?;
    }
    w.close()?;
    Ok(())
}

/// Write one batch as a Parquet file.
pub fn write_parquet(
    path: &Path,
    batch: &RecordBatch,
    props: Option<WriterProperties>,
) -> Result<(), BoxError> {
    write_parquet_batches(path, batch.schema(), std::slice::from_ref(batch), props)
}

/// The manifest entry of a local Parquet file (data or delete, `equality_ids` for an
/// equality delete file), unpartitioned, with metrics from its footer.
pub fn local_data_file(
    path: &Path,
    schema: &icefloe::spec::Schema,
    content: icefloe::spec::DataContentType,
    equality_ids: Vec<i32>,
) -> Result<icefloe::spec::DataFile, BoxError> {
    Ok(icefloe::write::data_file_from_parquet(
        path,
        &location(path)?,
        schema,
        vec![],
        content,
        equality_ids,
    )?)
}

/// A position delete file's rows (`file_path`, `pos`, with the spec's reserved field ids),
/// in the order given (the spec wants them sorted by path, then position).
pub fn position_delete_batch(deletes: &[(String, i64)]) -> Result<RecordBatch, BoxError> {
    let schema = std::sync::Arc::new(datafusion::arrow::datatypes::Schema::new(vec![
        field("file_path", DataType::Utf8, 2147483546),
        field("pos", DataType::Int64, 2147483545),
    ]));
    Ok(RecordBatch::try_new(
        schema,
        vec![
            std::sync::Arc::new(datafusion::arrow::array::StringArray::from_iter_values(
                deletes.iter().map(|d| &d.0),
            )),
            std::sync::Arc::new(datafusion::arrow::array::Int64Array::from_iter_values(
                deletes.iter().map(|d| d.1),
            )),
        ],
    )?)
}

/// The Iceberg location (`file:/…`) of a local path.
pub fn location(p: &Path) -> Result<String, BoxError> {
    Ok(icefloe::io::normalize_location(&p.to_string_lossy())?)
}

/// The Parquet files of a directory, sorted.
pub fn parquet_files(dir: &Path) -> Result<Vec<PathBuf>, BoxError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    Ok(files)
}

/// `--name value` arguments (cargo bench adds `--bench`, which is ignored).
pub struct Args(Vec<String>);

impl Args {
    pub fn from_env() -> Self {
        Self(
            std::env::args()
                .skip(1)
                .filter(|a| a != "--bench")
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> Option<String> {
        let flag = format!("--{name}");
        let mut it = self.0.iter();
        while let Some(a) = it.next() {
            if *a == flag {
                return it.next().cloned();
            }
            if let Some(v) = a.strip_prefix(&format!("{flag}=")) {
                return Some(v.to_string());
            }
        }
        None
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|a| *a == format!("--{name}"))
    }

    pub fn num<T: std::str::FromStr>(&self, name: &str, default: T) -> T {
        self.get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }
}

/// Where generated data lives: `--data DIR`, else `$ICEFLOE_BENCH_DATA`, else
/// `target/bench-data` of this crate (git-ignored).
pub fn data_dir(args: &Args) -> PathBuf {
    args.get("data")
        .or_else(|| std::env::var("ICEFLOE_BENCH_DATA").ok())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data"))
}

/// Median of durations (the mean of the two middle ones for an even count).
pub fn median(mut v: Vec<Duration>) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Time an async block.
pub async fn timed<T, F: std::future::Future<Output = T>>(f: F) -> (T, Duration) {
    let start = Instant::now();
    let out = f.await;
    (out, start.elapsed())
}

/// Peak resident memory of this process so far (`VmHWM` of /proc/self/status), bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Current resident memory (`VmRSS`), bytes.
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn float_cell(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == 0.0 {
        "0".into()
    } else {
        // 9 significant digits: parallel aggregation may sum in a different order.
        format!("{v:.8e}")
    }
}

/// The rows of `batches` as sorted canonical text (floats to 9 significant digits), so
/// two engines' results compare equal regardless of row order and summation order.
pub fn canonical_rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut rows = vec![];
    let options = FormatOptions::default().with_null("NULL");
    for b in batches {
        let columns: Vec<&ArrayRef> = b.columns().iter().collect();
        let formatters: Vec<Option<ArrayFormatter>> = columns
            .iter()
            .map(|c| match c.data_type() {
                DataType::Float32 | DataType::Float64 => None,
                _ => ArrayFormatter::try_new(c.as_ref(), &options).ok(),
            })
            .collect();
        for r in 0..b.num_rows() {
            let cells: Vec<String> = columns
                .iter()
                .zip(&formatters)
                .map(|(c, f)| {
                    if c.is_null(r) {
                        return "NULL".to_string();
                    }
                    if let Some(a) = c.as_any().downcast_ref::<Float64Array>() {
                        return float_cell(a.value(r));
                    }
                    if let Some(a) = c.as_any().downcast_ref::<Float32Array>() {
                        return float_cell(f64::from(a.value(r)));
                    }
                    f.as_ref()
                        .map(|f| f.value(r).to_string())
                        .unwrap_or_else(|| "?".into())
                })
                .collect();
            rows.push(cells.join("|"));
        }
    }
    rows.sort();
    rows
}

/// The machine: core count and CPU model, and the allocator ([`ALLOCATOR`]).
pub fn machine() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cores} cores, {model}; allocator {ALLOCATOR}")
}

/// The schema of the synthetic tables: `id` long, `p` int (the partition source), `v` string.
pub fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::required(2, "p", Type::Primitive(PrimitiveType::Int)),
            NestedField::optional(3, "v", Type::Primitive(PrimitiveType::String)),
        ],
    )
}

/// `month(l_shipdate)` of a `lineitem` schema, partition field `l_shipdate_month` (id 1000).
pub fn lineitem_month_spec(schema: &Schema) -> Result<PartitionSpec, BoxError> {
    let shipdate = schema
        .columns()
        .iter()
        .find(|c| c.name == "l_shipdate")
        .ok_or("no l_shipdate")?;
    Ok(PartitionSpec {
        spec_id: 0,
        fields: vec![PartitionField {
            source_id: shipdate.id,
            field_id: Some(1000),
            name: "l_shipdate_month".into(),
            transform: Transform::Month,
        }],
    })
}

/// identity(p), partition field id 1000.
pub fn spec() -> PartitionSpec {
    PartitionSpec {
        spec_id: 0,
        fields: vec![PartitionField {
            source_id: 2,
            field_id: Some(1000),
            name: "p".into(),
            transform: Transform::Identity,
        }],
    }
}

/// The checkout's `HEAD` commit (short), or `unknown`.
pub fn git_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// The "same results" cell of a query table's total row: `all`, or the queries whose
/// results differed.
pub fn same_results_cell(mismatches: &[usize]) -> String {
    if mismatches.is_empty() {
        "all".to_string()
    } else {
        format!("differ: {mismatches:?}")
    }
}

/// The end of a query bench: print the peak RSS, and fail when any query's results
/// differed between the sides (`mismatches`).
pub fn finish_query_run(mismatches: &[usize]) -> Result<(), BoxError> {
    if let Some(peak) = peak_rss_bytes() {
        println!("\npeak RSS: {:.0} MiB", peak as f64 / (1 << 20) as f64);
    }
    if !mismatches.is_empty() {
        return Err(format!("results differ for queries {mismatches:?}").into());
    }
    Ok(())
}
