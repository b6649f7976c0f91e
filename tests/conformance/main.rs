//! Conformance run: every case of every table in the Iceberg reader corpus, through icefloe's
//! `IcebergTableProvider` in DataFusion, compared with the rows Spark/Iceberg Java (or DuckDB
//! for one table) returned.
//!
//! Run: `cargo test --test conformance`. Environment:
//! - `ICEFLOE_CORPUS=<dir>`: corpus folder (default `../shared/corpus` next to the crate; when it
//!   is absent the small tables committed in `testdata/corpus/` are used).
//! - `ICEFLOE_CONFORMANCE_FILTER=<substring>`: run only cases whose `table/case` contains it
//!   (a positional argument, `cargo test --test conformance -- <substring>`, does the same).
//! - `ICEFLOE_CONFORMANCE_STRICT=1`: cases listed in `expected_skips.json` count as failures
//!   when they fail, and as failures ("remove it") when they pass.
//! - `ICEFLOE_CONFORMANCE_NO_REWRITES=1`: ignore `sql_rewrites.json` (to see which rewrites a
//!   newer DataFusion no longer needs).
//! - `ICEFLOE_CONFORMANCE_TIMEOUT=<seconds>`: abort the run when one case takes longer (300).
//!
//! Output: one `PASS|FAIL|SKIP table/case[: reason] files=<N> java=<M>` line per case, a summary
//! per table, file-count totals, and finally `N passed, N failed, N skipped`.

mod normalize;
mod selfcheck;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use datafusion::arrow::array::RecordBatch;
use datafusion::physical_plan::collect;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::FutureExt;
use icefloe::{IcebergTableProvider, Table};
use serde_json::Value;

use normalize::{
    batches_to_rows, canon_expected, check_type, compare_rows, parse_type, Dialect, ExpType,
};

const CRATE_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Number of data files the latest scan of the table registered as `name` planned (after
/// pruning), from `IcebergTableProvider::last_scan_metrics`.
fn scanned_data_files(ctx: &SessionContext, name: &str) -> Option<usize> {
    let provider = futures::executor::block_on(ctx.table_provider(name)).ok()?;
    let iceberg = provider.downcast_ref::<IcebergTableProvider>()?;
    iceberg.last_scan_metrics().map(|m| m.data_files_planned)
}

fn session_context() -> SessionContext {
    // Spark's semantics where DataFusion's differ only by a setting: NULLs sort first in
    // ascending order (Spark's default), the session time zone is UTC like the oracle's,
    // and `1.25` is an exact decimal literal (icefloe's session setup, as the CLI's).
    let config = SessionConfig::new()
        .with_target_partitions(4)
        .set_str("datafusion.sql_parser.default_null_ordering", "nulls_min")
        .set_str("datafusion.execution.time_zone", "+00:00");
    let ctx = SessionContext::new_with_config(config);
    icefloe::datafusion::use_decimal_literals(&ctx);
    ctx
}

struct Case {
    name: String,
    sql: String,
    ordered: bool,
    snapshot_id: Option<i64>,
    reference: Option<String>,
    types: Vec<ExpType>,
    rows: Vec<Value>,
    java_files: Option<u64>,
}

struct TableCases {
    cases: Vec<Case>,
}

#[derive(Clone)]
struct SkipEntry {
    reason: String,
    feature: String,
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    /// Cases where both our count and Java's are known: (ours, java).
    files: Vec<(usize, u64)>,
    /// Cases where our count is not known.
    ours_unknown: usize,
    /// Sum and number of all known Java counts.
    java_total: u64,
    java_cases: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.files.extend_from_slice(&other.files);
        self.ours_unknown += other.ours_unknown;
        self.java_total += other.java_total;
        self.java_cases += other.java_cases;
    }
    fn count_files(&mut self, ours: Option<usize>, java: Option<u64>) {
        if let Some(j) = java {
            self.java_total += j;
            self.java_cases += 1;
        }
        match (ours, java) {
            (Some(n), Some(j)) => self.files.push((n, j)),
            (None, _) => self.ours_unknown += 1,
            _ => {}
        }
    }
    fn files_summary(&self) -> String {
        let ours: usize = self.files.iter().map(|f| f.0).sum();
        let java: u64 = self.files.iter().map(|f| f.1).sum();
        let fewer = self.files.iter().filter(|f| (f.0 as u64) < f.1).count();
        let same = self.files.iter().filter(|f| f.0 as u64 == f.1).count();
        let more = self.files.len() - fewer - same;
        format!(
            "data files: ours={ours} java={java} over {} cases with both counts (ours fewer {fewer}, equal {same}, more {more}); \
             java total={} over {} cases; our count unknown for {} cases",
            self.files.len(),
            self.java_total,
            self.java_cases,
            self.ours_unknown
        )
    }
}

fn main() {
    selfcheck::run();
    println!("normaliser self-checks passed");

    let corpus = resolve_corpus();
    let conf_dir = Path::new(CRATE_DIR).join("tests/conformance");
    let skips = load_skips(&conf_dir.join("expected_skips.json")).unwrap_or_else(|e| fatal(&e));
    let mut rewrites =
        load_rewrites(&conf_dir.join("sql_rewrites.json")).unwrap_or_else(|e| fatal(&e));
    if std::env::var("ICEFLOE_CONFORMANCE_NO_REWRITES").is_ok_and(|v| v == "1") {
        println!("sql_rewrites.json ignored: running every case's original SQL");
        rewrites.clear();
    }
    // `cargo test --test conformance -- <substring>` works like the env filter (libtest habit).
    let filter = std::env::var("ICEFLOE_CONFORMANCE_FILTER")
        .ok()
        .filter(|f| !f.is_empty())
        .or_else(|| std::env::args().skip(1).find(|a| !a.starts_with('-')));
    let strict = std::env::var("ICEFLOE_CONFORMANCE_STRICT").is_ok_and(|v| v == "1");
    let timeout = std::env::var("ICEFLOE_CONFORMANCE_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300u64);
    if strict {
        println!("strict mode: expected skips count as failures");
    }
    if let Some(f) = &filter {
        println!("filter: only cases whose table/case contains {f:?}");
    }
    let current = start_watchdog(timeout);

    let runtime =
        tokio::runtime::Runtime::new().unwrap_or_else(|e| fatal(&format!("tokio runtime: {e}")));
    let mut total = Tally::default();
    let mut seen_keys: Vec<String> = Vec::new();
    for dir in table_dirs(&corpus) {
        let table = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut tally = Tally::default();
        match load_cases(&dir.join("cases.json")) {
            Err(e) => {
                println!("FAIL {table}/*: cannot read cases.json: {e} files=? java=-");
                tally.failed += 1;
            }
            Ok(tc) => {
                let runner = TableRunner::new(&table, &dir);
                for case in &tc.cases {
                    let key = format!("{table}/{}", case.name);
                    seen_keys.push(key.clone());
                    if filter.as_ref().is_some_and(|f| !key.contains(f.as_str())) {
                        continue;
                    }
                    *current.lock().unwrap_or_else(|p| p.into_inner()) = key.clone();
                    let rewrite = rewrites.get(&key);
                    let outcome = runtime.block_on(
                        std::panic::AssertUnwindSafe(runner.run(case, rewrite.map(String::as_str)))
                            .catch_unwind(),
                    );
                    let (result, files) = match outcome {
                        Ok(r) => r,
                        Err(p) => (Err(format!("panic: {}", panic_message(&p))), None),
                    };
                    let listed = lookup_skip(&skips, &table, &case.name);
                    report(
                        &key,
                        case,
                        rewrite.is_some(),
                        result,
                        files,
                        listed,
                        strict,
                        &mut tally,
                    );
                }
            }
        }
        if tally.passed + tally.failed + tally.skipped == 0 {
            continue; // every case filtered out
        }
        println!(
            "TABLE {table}: {} passed, {} failed, {} skipped; {}",
            tally.passed,
            tally.failed,
            tally.skipped,
            tally.files_summary()
        );
        total.add(&tally);
    }
    current.lock().unwrap_or_else(|p| p.into_inner()).clear();
    if filter.is_none() {
        warn_stale("expected_skips.json", skips.keys(), &seen_keys);
        warn_stale("sql_rewrites.json", rewrites.keys(), &seen_keys);
    }
    println!("TOTAL {}", total.files_summary());
    println!(
        "{} passed, {} failed, {} skipped",
        total.passed, total.failed, total.skipped
    );
    if total.failed > 0 {
        std::process::exit(1);
    }
}

/// Prints the case line and counts it.
#[allow(clippy::too_many_arguments)]
fn report(
    key: &str,
    case: &Case,
    rewritten: bool,
    result: Result<(), String>,
    files: Option<usize>,
    listed: Option<SkipEntry>,
    strict: bool,
    tally: &mut Tally,
) {
    let java = case
        .java_files
        .map(|j| j.to_string())
        .unwrap_or_else(|| "-".into());
    tally.count_files(files, case.java_files);
    let tail = format!(
        " files={} java={java}",
        files.map(|n| n.to_string()).unwrap_or_else(|| "?".into())
    );
    let rw = if rewritten { " (rewritten)" } else { "" };
    match (result, listed) {
        (Ok(()), None) => {
            tally.passed += 1;
            println!("PASS {key}{rw}{tail}");
        }
        (Ok(()), Some(_)) if strict => {
            tally.failed += 1;
            println!("FAIL {key}{rw}: listed in expected_skips but passes; remove it{tail}");
        }
        (Ok(()), Some(_)) => {
            tally.passed += 1;
            println!("PASS {key}{rw} (listed as expected skip: remove from list){tail}");
        }
        (Err(e), None) => {
            tally.failed += 1;
            println!("FAIL {key}{rw}: {}{tail}", one_line(&e, 400));
        }
        (Err(e), Some(s)) if strict => {
            tally.failed += 1;
            println!(
                "FAIL {key}{rw}: {} [expected skip: {}]{tail}",
                one_line(&e, 400),
                s.feature
            );
        }
        (Err(e), Some(s)) => {
            tally.skipped += 1;
            println!(
                "SKIP {key}{rw}: {}: {} [got: {}]{tail}",
                s.feature,
                s.reason,
                one_line(&e, 120)
            );
        }
    }
}

/// Opens the table's providers (current, per snapshot, per ref) lazily and runs cases.
struct TableRunner {
    table: String,
    location: String,
    ctx: SessionContext,
    /// provider key -> registered name, or the error building it.
    registered: Mutex<HashMap<String, Result<String, String>>>,
}

impl TableRunner {
    fn new(table: &str, dir: &Path) -> Self {
        let location = dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .to_string_lossy()
            .to_string();
        Self {
            table: table.to_string(),
            location,
            ctx: session_context(),
            registered: Mutex::new(HashMap::new()),
        }
    }

    async fn provider_name(&self, case: &Case) -> Result<String, String> {
        let (key, name) = match (&case.snapshot_id, &case.reference) {
            (Some(id), _) => (
                format!("snapshot {id}"),
                format!("{}__snap_{}", self.table, id.unsigned_abs()),
            ),
            (None, Some(r)) => (
                format!("ref {r}"),
                format!("{}__ref_{}", self.table, sanitize(r)),
            ),
            (None, None) => ("current".to_string(), self.table.clone()),
        };
        if let Some(r) = self
            .registered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return r.clone();
        }
        let result = self
            .register(case, &name)
            .await
            .map(|_| name)
            .map_err(|e| format!("{key}: {e}"));
        self.registered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, result.clone());
        result
    }

    async fn register(&self, case: &Case, name: &str) -> Result<(), String> {
        let table = Table::open(&self.location)
            .await
            .map_err(|e| format!("Table::open({}): {e}", self.location))?;
        let mut provider =
            IcebergTableProvider::try_new(table).map_err(|e| format!("try_new: {e}"))?;
        if let Some(id) = case.snapshot_id {
            provider = provider
                .with_snapshot_id(id)
                .map_err(|e| format!("with_snapshot_id({id}): {e}"))?;
        } else if let Some(r) = &case.reference {
            provider = provider
                .with_ref(r)
                .map_err(|e| format!("with_ref({r}): {e}"))?;
        }
        self.ctx
            .register_table(name, Arc::new(provider))
            .map_err(|e| format!("register_table: {e}"))?;
        Ok(())
    }

    /// Runs one case: the result, and the planned data-file count when known.
    async fn run(&self, case: &Case, rewrite: Option<&str>) -> (Result<(), String>, Option<usize>) {
        let name = match self.provider_name(case).await {
            Ok(n) => n,
            Err(e) => return (Err(e), None),
        };
        let sql = rewrite.unwrap_or(&case.sql).replace("{t}", &name);
        let (batches, schema) = match self.query(&sql).await {
            Ok(r) => r,
            Err(e) => return (Err(e), None),
        };
        (
            check_result(case, &batches, &schema),
            scanned_data_files(&self.ctx, &name),
        )
    }

    async fn query(
        &self,
        sql: &str,
    ) -> Result<(Vec<RecordBatch>, datafusion::arrow::datatypes::SchemaRef), String> {
        let df = self
            .ctx
            .sql(sql)
            .await
            .map_err(|e| format!("planning: {e}"))?;
        let plan = df
            .create_physical_plan()
            .await
            .map_err(|e| format!("physical planning: {e}"))?;
        let schema = plan.schema();
        let batches = collect(plan.clone(), self.ctx.task_ctx())
            .await
            .map_err(|e| format!("execution: {e}"))?;
        Ok((batches, schema))
    }
}

/// Column count, column types, then values.
fn check_result(
    case: &Case,
    batches: &[RecordBatch],
    schema: &datafusion::arrow::datatypes::Schema,
) -> Result<(), String> {
    if schema.fields().len() != case.types.len() {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        return Err(format!(
            "expected {} columns, got {} {names:?}",
            case.types.len(),
            names.len()
        ));
    }
    let mut problems = Vec::new();
    for (i, (field, ty)) in schema.fields().iter().zip(&case.types).enumerate() {
        if let Err(e) = check_type(ty, field.data_type()) {
            problems.push(format!("type of column {i} ({}): {e}", field.name()));
        }
    }
    let expected =
        canon_expected(&case.rows, &case.types).map_err(|e| format!("bad cases.json: {e}"))?;
    match batches_to_rows(batches, &case.types) {
        Ok(actual) => {
            if let Err(e) = compare_rows(&expected, &actual, case.ordered) {
                problems.push(e);
            }
        }
        Err(e) => problems.push(format!("cannot convert result: {e}")),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

fn resolve_corpus() -> PathBuf {
    let (path, from_env) = match std::env::var("ICEFLOE_CORPUS") {
        Ok(p) if !p.is_empty() => (PathBuf::from(p), true),
        _ => (Path::new(CRATE_DIR).join("../shared/corpus"), false),
    };
    if path.is_dir() {
        println!("corpus: {}", path.display());
        return path;
    }
    let fallback = Path::new(CRATE_DIR).join("testdata/corpus");
    println!(
        "the shared corpus is absent ({} {} not found); running over the small corpus tables committed in the repo at {} instead",
        if from_env { "ICEFLOE_CORPUS =" } else { "default" },
        path.display(),
        fallback.display()
    );
    fallback
}

/// Table folders (those with a cases.json), sorted by name.
fn table_dirs(corpus: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(corpus) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.join("cases.json").is_file())
            .collect(),
        Err(e) => fatal(&format!("cannot list corpus {}: {e}", corpus.display())),
    };
    dirs.sort();
    if dirs.is_empty() {
        fatal(&format!(
            "no table folders with cases.json in {}",
            corpus.display()
        ));
    }
    dirs
}

fn load_cases(path: &Path) -> Result<TableCases, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let dialect = match doc.get("oracle_note").and_then(Value::as_str) {
        Some(n) if n.contains("DuckDB") => Dialect::DuckDb,
        _ => Dialect::Spark,
    };
    let list = doc
        .get("cases")
        .and_then(Value::as_array)
        .ok_or("no \"cases\" array")?;
    let mut cases = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let field = |k: &str| c.get(k).filter(|v| !v.is_null());
        let name = field("name")
            .and_then(Value::as_str)
            .ok_or(format!("case {i}: no name"))?
            .to_string();
        let bad = |what: &str| format!("case {name}: {what}");
        let sql = field("sql")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no sql"))?
            .to_string();
        let ordered = field("ordered").and_then(Value::as_bool).unwrap_or(false);
        let snapshot_id = match field("snapshot_id") {
            None => None,
            Some(v) => Some(
                v.as_i64()
                    .ok_or_else(|| bad("snapshot_id is not an integer"))?,
            ),
        };
        let reference = field("ref").and_then(Value::as_str).map(str::to_string);
        let columns = field("columns")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no columns"))?;
        let types = columns
            .iter()
            .map(|col| {
                col.get("type")
                    .and_then(Value::as_str)
                    .map(|t| parse_type(t, dialect))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("column without type"))?;
        let rows = field("rows")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no rows"))?
            .clone();
        let java_files = ["iceberg_java_scan", "pyiceberg_scan"]
            .iter()
            .find_map(|k| {
                c.get(*k)
                    .and_then(|s| s.get("data_files"))
                    .and_then(Value::as_u64)
            });
        cases.push(Case {
            name,
            sql,
            ordered,
            snapshot_id,
            reference,
            types,
            rows,
            java_files,
        });
    }
    Ok(TableCases { cases })
}

/// `expected_skips.json`: `{ "table/case": {"reason": "...", "feature": "..."}, ... }`;
/// `table/*` covers every case of a table; keys starting with `_` are comments.
fn load_skips(path: &Path) -> Result<BTreeMap<String, SkipEntry>, String> {
    let doc = read_json_object(path)?;
    let mut out = BTreeMap::new();
    for (k, v) in doc {
        if k.starts_with('_') {
            continue;
        }
        let get = |f: &str| v.get(f).and_then(Value::as_str).map(str::to_string);
        match (get("reason"), get("feature")) {
            (Some(reason), Some(feature)) => {
                out.insert(k, SkipEntry { reason, feature });
            }
            _ => {
                return Err(format!(
                    "{}: entry {k:?} needs string fields reason and feature",
                    path.display()
                ))
            }
        }
    }
    Ok(out)
}

/// `sql_rewrites.json`: `{ "table/case": "DataFusion SQL with {t}", ... }`; `_` keys are comments.
fn load_rewrites(path: &Path) -> Result<BTreeMap<String, String>, String> {
    let doc = read_json_object(path)?;
    let mut out = BTreeMap::new();
    for (k, v) in doc {
        if k.starts_with('_') {
            continue;
        }
        match v.as_str() {
            Some(sql) if sql.contains("{t}") => {
                out.insert(k, sql.to_string());
            }
            _ => {
                return Err(format!(
                    "{}: rewrite {k:?} must be a SQL string containing {{t}}",
                    path.display()
                ))
            }
        }
    }
    Ok(out)
}

fn read_json_object(path: &Path) -> Result<serde_json::Map<String, Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match serde_json::from_str(&text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(format!("{}: not a JSON object", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn lookup_skip(skips: &BTreeMap<String, SkipEntry>, table: &str, case: &str) -> Option<SkipEntry> {
    skips
        .get(&format!("{table}/{case}"))
        .or_else(|| skips.get(&format!("{table}/*")))
        .cloned()
}

/// Warns about list entries naming a case that does not exist in a table that was run.
fn warn_stale<'a>(file: &str, keys: impl Iterator<Item = &'a String>, seen: &[String]) {
    for k in keys {
        let table = k.split('/').next().unwrap_or("");
        let table_ran = seen.iter().any(|s| s.split('/').next() == Some(table));
        let matched = if k.ends_with("/*") {
            table_ran
        } else {
            seen.contains(k)
        };
        if table_ran && !matched {
            println!("WARN {file}: {k} names no case in the corpus");
        }
    }
}

/// Aborts the whole run when one case exceeds `secs` (a hung scan must not hang CI).
fn start_watchdog(secs: u64) -> Arc<Mutex<String>> {
    let current = Arc::new(Mutex::new(String::new()));
    let started = Arc::new(AtomicU64::new(0));
    let (cur, st) = (current.clone(), started.clone());
    let t0 = Instant::now();
    std::thread::spawn(move || {
        let mut last = String::new();
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = t0.elapsed().as_secs();
            let key = cur.lock().unwrap_or_else(|p| p.into_inner()).clone();
            if key != last {
                st.store(now, Ordering::Relaxed);
                last = key;
            } else if !key.is_empty() && now - st.load(Ordering::Relaxed) > secs {
                println!("FAIL {key}: timed out after {secs}s (ICEFLOE_CONFORMANCE_TIMEOUT); aborting run files=? java=?");
                std::process::exit(2);
            }
        }
    });
    current
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}...", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn fatal(msg: &str) -> ! {
    eprintln!("conformance: {msg}");
    println!("0 passed, 1 failed, 0 skipped");
    std::process::exit(1);
}
