//! Interop: real engines check icefloe. PyIceberg 0.12 writes tables into a SQLite
//! `SqlCatalog`; icefloe reads them through DataFusion SQL, and the rows must equal what the
//! writer wrote, PyIceberg's own read and DuckDB 1.5.5's (`iceberg_scan`).
//!
//! The engines live in a Python venv (`.ci/interop-venv`, pinned in
//! `tests/interop/requirements.txt`) that CI creates and names in `ICEFLOE_PYTHON`; the
//! scripts are in `tests/interop/`. Without the venv the tests print `SKIPPED` and pass,
//! except under CI (`CI` set), where they fail.
//!
//! Rows are compared in one canonical JSON form (`tests/interop/canon.py`, the corpus
//! encoding of `tests/conformance/normalize.rs`): [`canonical_rows`] renders DataFusion batches
//! in it, typed by the Iceberg JSON schema the scripts print.
//!
//! Helpers for other tests: [`python`], [`pyiceberg_write`], [`pyiceberg_read`],
//! [`pyiceberg_read_at`], [`duckdb_read`], [`duckdb_read_at`], [`duckdb_lineage`],
//! [`canonical_rows`], [`iceberg_types`], [`assert_same_rows`], [`icefloe_rows`].

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::prelude::SessionContext;
use icefloe::catalog::SqlCatalog;
use serde_json::Value;

use crate::catalog::{attach, context, query};
use crate::normalize::{self, ExpType};

/// `tests/interop/` in the crate.
fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// The Python of the interop venv: `ICEFLOE_PYTHON`, else `.ci/venv/bin/python` when present.
/// When neither is there: panics under CI (`CI` set: the venv is part of the test run),
/// otherwise prints a loud `SKIPPED` line and returns `None` (the caller returns early).
pub fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ICEFLOE_PYTHON").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        assert!(
            p.exists(),
            "ICEFLOE_PYTHON={} does not exist: run .ci/interop-venv",
            p.display()
        );
        return Some(p);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/venv/bin/python");
    if venv.exists() {
        return Some(venv);
    }
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("interop venv missing: run .ci/run (or .ci/interop-venv and set ICEFLOE_PYTHON)");
    }
    eprintln!(
        "\n*** SKIPPED: interop (no ICEFLOE_PYTHON and no .ci/venv; run .ci/interop-venv) ***\n"
    );
    None
}

/// Runs `tests/interop/<script>` with the venv's Python and parses its stdout as JSON.
/// Panics with the script's stderr when it fails.
pub fn run_script(script: &str, args: &[&OsStr]) -> Value {
    let py = python().expect("interop venv missing: call interop::python() first");
    let out = Command::new(&py)
        .arg(scripts_dir().join(script))
        .args(args)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONHASHSEED", "0")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", py.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script} {args:?} failed ({}):\n{stderr}",
        out.status
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{script}: stdout is not JSON ({e}):\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// PyIceberg writes its test tables (`tests/interop/pyiceberg_write.py`: `types_v2`,
/// `part_v1`, `evolve_v2` in namespace `interop` of catalog `default`) into the SQLite
/// catalog `db` (created) with data under `warehouse`. Returns
/// `{"catalog", "namespace", "tables": {name: {"ident", "format_version",
/// "metadata_location", "schema", "rows", "snapshots": [{"snapshot_id", "operation",
/// "rows"}]}}}` with rows in the canonical form.
pub fn pyiceberg_write(db: &Path, warehouse: &Path) -> Value {
    run_script(
        "pyiceberg_write.py",
        &[db.as_os_str(), warehouse.as_os_str()],
    )
}

/// PyIceberg's read of `ident` (`ns.table`) in catalog `default` of the SQLite catalog `db`:
/// `{"metadata_location", "format_version", "current_snapshot_id", "schema", "rows",
/// "count", "files": [{"file_path", "content", "record_count", "partition"}],
/// "snapshots": [{"snapshot_id", "parent_id", "operation", "sequence_number"}]}`.
pub fn pyiceberg_read(db: &Path, warehouse: &Path, ident: &str) -> Value {
    run_script(
        "pyiceberg_read.py",
        &[db.as_os_str(), warehouse.as_os_str(), OsStr::new(ident)],
    )
}

/// [`pyiceberg_read`] of the snapshot `snapshot_id` (rows and files of that snapshot, in
/// its schema).
pub fn pyiceberg_read_at(db: &Path, warehouse: &Path, ident: &str, snapshot_id: i64) -> Value {
    let id = snapshot_id.to_string();
    run_script(
        "pyiceberg_read.py",
        &[
            db.as_os_str(),
            warehouse.as_os_str(),
            OsStr::new(ident),
            OsStr::new(&id),
        ],
    )
}

/// The sorted `id`s PyIceberg's scan of `ident` returns under each row filter of
/// `filters` (PyIceberg's string syntax, `"c < 10"`): its partition and metrics pruning
/// trust the partition values and bounds the writer wrote, so a wrong one drops rows.
pub fn pyiceberg_filtered(db: &Path, warehouse: &Path, ident: &str, filters: &[String]) -> Value {
    let mut args = vec![db.as_os_str(), warehouse.as_os_str(), OsStr::new(ident)];
    for f in filters {
        args.extend([OsStr::new("--filter"), OsStr::new(f)]);
    }
    run_script("pyiceberg_read.py", &args)["filtered"].clone()
}

/// The sorted `id`s DuckDB's `iceberg_scan` of `metadata_location` returns under each SQL
/// condition of `conditions` (as [`pyiceberg_filtered`], DuckDB's pruning).
pub fn duckdb_filtered(metadata_location: &str, conditions: &[String]) -> Value {
    let mut args = vec![OsStr::new(metadata_location)];
    for c in conditions {
        args.extend([OsStr::new("--where"), OsStr::new(c)]);
    }
    run_script("duckdb_read.py", &args)["filtered"].clone()
}

/// DuckDB's read (`iceberg_scan`) of the table whose metadata file is `metadata_location`
/// (a path or `file://` URI): `{"rows", "count", "snapshots": [{"snapshot_id",
/// "sequence_number"}]}`.
pub fn duckdb_read(metadata_location: &str) -> Value {
    run_script("duckdb_read.py", &[OsStr::new(metadata_location)])
}

/// DuckDB's row lineage of the v3 table whose metadata file is `metadata_location`:
/// `[id, _row_id, _last_updated_sequence_number]` of every row, ordered by `id` (the
/// table's first column must be named `id`).
pub fn duckdb_lineage(metadata_location: &str) -> Vec<Value> {
    run_script("duckdb_lineage.py", &[OsStr::new(metadata_location)])["rows"]
        .as_array()
        .expect("rows")
        .clone()
}

/// [`duckdb_read`] of the snapshot `snapshot_id`.
pub fn duckdb_read_at(metadata_location: &str, snapshot_id: i64) -> Value {
    let id = snapshot_id.to_string();
    run_script(
        "duckdb_read.py",
        &[OsStr::new(metadata_location), OsStr::new(&id)],
    )
}

/// The comparison types of an Iceberg JSON type (`"long"`, `"decimal(12, 3)"`,
/// `{"type": "struct", ...}`).
fn iceberg_type(t: &Value) -> ExpType {
    match t {
        Value::String(s) => {
            let s = s.trim();
            match s {
                "boolean" => ExpType::Boolean,
                "int" => ExpType::Int(32),
                "long" => ExpType::Int(64),
                "float" => ExpType::Float32,
                "double" => ExpType::Float64,
                "date" => ExpType::Date,
                "time" => ExpType::Time,
                "timestamp" | "timestamp_ns" => ExpType::Timestamp { tz: false },
                "timestamptz" | "timestamptz_ns" => ExpType::Timestamp { tz: true },
                "string" => ExpType::String,
                "uuid" => ExpType::Uuid,
                "binary" => ExpType::Binary,
                _ if s.starts_with("fixed") => ExpType::Binary,
                _ => s
                    .strip_prefix("decimal(")
                    .and_then(|r| r.strip_suffix(')'))
                    .and_then(|r| r.split_once(','))
                    .and_then(|(p, sc)| Some((p.trim().parse().ok()?, sc.trim().parse().ok()?)))
                    .map(|(p, sc)| ExpType::Decimal(p, sc))
                    .unwrap_or_else(|| ExpType::Unknown(s.to_string())),
            }
        }
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("struct") => ExpType::Struct(field_types(t)),
            Some("list") => ExpType::List(Box::new(iceberg_type(&o["element"]))),
            Some("map") => ExpType::Map(
                Box::new(iceberg_type(&o["key"])),
                Box::new(iceberg_type(&o["value"])),
            ),
            _ => ExpType::Unknown(t.to_string()),
        },
        _ => ExpType::Unknown(t.to_string()),
    }
}

fn field_types(schema: &Value) -> Vec<(String, ExpType)> {
    schema["fields"]
        .as_array()
        .expect("schema fields")
        .iter()
        .map(|f| {
            (
                f["name"].as_str().expect("field name").to_string(),
                iceberg_type(&f["type"]),
            )
        })
        .collect()
}

/// The column types of an Iceberg JSON schema (`{"type": "struct", "fields": [...]}`), in
/// order, for [`canonical_rows`].
pub fn iceberg_types(schema: &Value) -> Vec<ExpType> {
    field_types(schema).into_iter().map(|(_, t)| t).collect()
}

/// DataFusion batches as canonical rows (the form of `tests/interop/canon.py`), typed by the
/// Iceberg JSON `schema` of the columns, sorted.
pub fn canonical_rows(batches: &[RecordBatch], schema: &Value) -> Vec<Value> {
    let types = iceberg_types(schema);
    if let Some(b) = batches.first() {
        let arrow_schema = b.schema();
        let names: Vec<&str> = arrow_schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        let expected: Vec<String> = field_types(schema).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, expected, "columns differ from the Iceberg schema");
    }
    let mut rows = normalize::batches_to_rows(batches, &types).expect("canonical rows");
    rows.sort_by(normalize::cmp_json);
    rows
}

/// The rows of `expected` and `actual` are the same multiset (floats within 1e-12); the
/// panic names `what`, and the differing rows.
pub fn assert_same_rows(what: &str, expected: &[Value], actual: &[Value]) {
    if let Err(e) = normalize::compare_rows(expected, actual, false) {
        panic!("{what}: {e}");
    }
}

/// `SELECT * FROM <table_sql>` through icefloe, as canonical rows typed by `schema`.
pub async fn icefloe_rows(ctx: &SessionContext, table_sql: &str, schema: &Value) -> Vec<Value> {
    let sql = format!("SELECT * FROM {table_sql}");
    let batches = query(ctx, &sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    canonical_rows(&batches, schema)
}

fn json_rows(v: &Value) -> Vec<Value> {
    v.as_array().expect("rows array").clone()
}

/// PyIceberg writes the tables in a fresh temp dir; icefloe opens the same SQLite catalog.
/// Returns the temp dir (kept alive by the caller), the catalog db, the warehouse, the
/// writer's JSON and a context with the catalog attached as `ice`.
pub(crate) async fn written() -> Option<(tempfile::TempDir, PathBuf, PathBuf, Value, SessionContext)>
{
    python()?;
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("catalog.db");
    let warehouse = tmp.path().join("warehouse");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let written = pyiceberg_write(&db, &warehouse);
    let catalog = SqlCatalog::open("default", &db).expect("icefloe opens PyIceberg's catalog");
    let ctx = context();
    attach(&ctx, "ice", Arc::new(catalog)).await;
    Some((tmp, db, warehouse, written, ctx))
}

fn tables(written: &Value) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = written["tables"]
        .as_object()
        .expect("tables")
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Current rows: icefloe == the writer's rows == PyIceberg's read == DuckDB's read, and
/// `count(*)` agrees.
#[tokio::test]
async fn interop_pyiceberg_tables_read_alike_in_icefloe_pyiceberg_and_duckdb() {
    let Some((_tmp, db, warehouse, written, ctx)) = written().await else {
        return;
    };
    let ns = written["namespace"]
        .as_str()
        .expect("namespace")
        .to_string();
    let tables = tables(&written);
    assert_eq!(tables.len(), 3, "{written}");
    for (name, t) in &tables {
        let ident = t["ident"].as_str().expect("ident");
        let schema = &t["schema"];
        let expected = json_rows(&t["rows"]);
        let ice = icefloe_rows(&ctx, &format!("ice.{ns}.{name}"), schema).await;
        assert_same_rows(&format!("{ident}: icefloe vs writer"), &expected, &ice);

        let pyi = pyiceberg_read(&db, &warehouse, ident);
        assert_eq!(pyi["schema"]["fields"], schema["fields"], "{ident} schema");
        assert_same_rows(
            &format!("{ident}: PyIceberg vs writer"),
            &expected,
            &json_rows(&pyi["rows"]),
        );
        assert_same_rows(
            &format!("{ident}: icefloe vs PyIceberg"),
            &json_rows(&pyi["rows"]),
            &ice,
        );

        let location = t["metadata_location"].as_str().expect("metadata_location");
        assert_eq!(pyi["metadata_location"].as_str(), Some(location));
        let duck = duckdb_read(location);
        assert_same_rows(
            &format!("{ident}: icefloe vs DuckDB"),
            &json_rows(&duck["rows"]),
            &ice,
        );
        let count =
            crate::catalog::scalar_i64(&ctx, &format!("SELECT count(*) FROM ice.{ns}.{name}"))
                .await;
        assert_eq!(Some(count), duck["count"].as_i64(), "{ident}: count(*)");
        assert_eq!(count as usize, expected.len(), "{ident}: count(*)");

        // the same table by its metadata file, without the catalog
        let direct = icefloe_rows(
            &ctx,
            &format!("iceberg_scan('{}')", location.replace('\'', "''")),
            schema,
        )
        .await;
        assert_same_rows(&format!("{ident}: iceberg_scan(file)"), &expected, &direct);
    }
}

/// Time travel: every snapshot reads, in icefloe, as the writer had it then, as PyIceberg
/// reads it, and as DuckDB reads it.
#[tokio::test]
async fn interop_pyiceberg_snapshots_time_travel_alike() {
    let Some((_tmp, db, warehouse, written, ctx)) = written().await else {
        return;
    };
    let ns = written["namespace"]
        .as_str()
        .expect("namespace")
        .to_string();
    for (name, t) in tables(&written) {
        let ident = t["ident"].as_str().expect("ident").to_string();
        let location = t["metadata_location"].as_str().expect("location");
        for snap in t["snapshots"].as_array().expect("snapshots") {
            let id = snap["snapshot_id"].as_i64().expect("snapshot id");
            let what = format!("{ident}@{id} ({})", snap["operation"]);
            let pyi = pyiceberg_read_at(&db, &warehouse, &ident, id);
            let schema = &pyi["schema"];
            let expected = json_rows(&snap["rows"]);
            assert_same_rows(
                &format!("{what}: PyIceberg vs writer"),
                &expected,
                &json_rows(&pyi["rows"]),
            );
            let ice = icefloe_rows(&ctx, &format!("ice.{ns}.\"{name}@{id}\""), schema).await;
            assert_same_rows(&format!("{what}: icefloe vs writer"), &expected, &ice);
            let duck = duckdb_read_at(location, id);
            assert_same_rows(
                &format!("{what}: DuckDB vs writer"),
                &expected,
                &json_rows(&duck["rows"]),
            );
            assert_eq!(
                duck["count"].as_u64(),
                Some(expected.len() as u64),
                "{what}: DuckDB count"
            );
        }
    }
}

/// Metadata: icefloe's `$snapshots` and `$files` name the snapshots (ids, parents,
/// operations) and the live data files (paths, record counts, partitions) PyIceberg does.
#[tokio::test]
async fn interop_pyiceberg_snapshots_and_files_metadata_alike() {
    let Some((_tmp, db, warehouse, written, ctx)) = written().await else {
        return;
    };
    let ns = written["namespace"]
        .as_str()
        .expect("namespace")
        .to_string();
    for (name, t) in tables(&written) {
        let ident = t["ident"].as_str().expect("ident").to_string();
        let pyi = pyiceberg_read(&db, &warehouse, &ident);

        let batches = query(
            &ctx,
            &format!(
                "SELECT snapshot_id, parent_id, operation FROM ice.{ns}.\"{name}$snapshots\" ORDER BY committed_at, snapshot_id"
            ),
        )
        .await
        .expect("$snapshots");
        let snaps = normalize::batches_to_rows(
            &batches,
            &[ExpType::Int(64), ExpType::Int(64), ExpType::String],
        )
        .expect("rows");
        let expected: Vec<Value> = pyi["snapshots"]
            .as_array()
            .expect("snapshots")
            .iter()
            .map(|s| {
                Value::Array(vec![
                    s["snapshot_id"].clone(),
                    s["parent_id"].clone(),
                    s["operation"].clone(),
                ])
            })
            .collect();
        assert_same_rows(&format!("{ident}: $snapshots"), &expected, &snaps);

        // an unpartitioned table's `$files` has no `partition` column (as in Spark)
        let batches = query(&ctx, &format!("SELECT * FROM ice.{ns}.\"{name}$files\""))
            .await
            .expect("$files");
        let mut files = vec![];
        for b in &batches {
            let col = |n: &str| b.column_by_name(n).map(|c| c.as_ref());
            for r in 0..b.num_rows() {
                let cell = |n: &str| {
                    col(n)
                        .map(|c| normalize::cell_to_json(c, r, None).expect("cell"))
                        .unwrap_or(Value::Null)
                };
                files.push(Value::Array(vec![
                    cell("file_path"),
                    cell("record_count"),
                    cell("content"),
                    cell("partition"),
                ]));
            }
        }
        let expected: Vec<Value> = pyi["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| {
                Value::Array(vec![
                    f["file_path"].clone(),
                    f["record_count"].clone(),
                    f["content"].clone(),
                    f["partition"].clone(),
                ])
            })
            .collect();
        let files: Vec<Value> = files.into_iter().map(partition_as_pyiceberg).collect();
        assert_same_rows(&format!("{ident}: $files"), &expected, &files);
    }
}

/// PyIceberg prints partition values as stored (a day transform as days since the epoch);
/// icefloe's `partition` column types them (a date). Dates become day numbers; an
/// unpartitioned table's empty struct becomes `{}`.
fn partition_as_pyiceberg(row: Value) -> Value {
    let Value::Array(mut cells) = row else {
        return row;
    };
    if let Some(p) = cells.get_mut(3) {
        *p = match std::mem::take(p) {
            Value::Object(o) => Value::Object(
                o.into_iter()
                    .map(|(k, v)| {
                        let v = match &v {
                            Value::String(s) if s.len() == 10 && s.as_bytes()[4] == b'-' => {
                                chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                                    .map(|d| {
                                        Value::from(
                                            (d - chrono::NaiveDate::from_ymd_opt(1970, 1, 1)
                                                .expect("epoch"))
                                            .num_days(),
                                        )
                                    })
                                    .unwrap_or(v.clone())
                            }
                            _ => v,
                        };
                        (k, v)
                    })
                    .collect(),
            ),
            Value::Null => Value::Object(Default::default()),
            other => other,
        };
    }
    Value::Array(cells)
}
