//! Row-level changes (issue 12): `DELETE` and `MERGE INTO` on TPC-H `lineitem` in an
//! icefloe table of a SQLite catalog, copy-on-write against merge-on-read, and the read
//! cost of the merge-on-read results against the same rows compacted.
//!
//! ```text
//! cargo bench --bench dml -- --sf 1 [--iterations 3] [--reads 5]
//!     [--data DIR] [--tpchgen PATH] [--parts 4]
//! ```
//!
//! Data: `tpchgen-cli` writes `DATA/tpch-sfN/parquet/lineitem/lineitem.<k>.parquet`
//! (`--parts` files, the layout and cache of `insert.rs`), made once and reused. Every
//! table lives in a temp dir under `DATA/tmp`, removed afterwards.
//!
//! Setup (not timed): for each mode, one "template" table is loaded with
//! `INSERT INTO cat.ns.t SELECT * FROM lineitem` (unpartitioned), created with
//! `write.delete.mode`, `write.update.mode` and `write.merge.mode` set to
//! `copy-on-write` or `merge-on-read`. Three modes: copy-on-write on format v2,
//! merge-on-read on v2 (position delete files) and merge-on-read on v3 (deletion
//! vectors in Puffin files). Each measured statement then runs on a fresh
//! copy of it: a new SQLite catalog in a new temp dir, the template's current metadata
//! file registered there (`SqlCatalog::register_table`), and a new `SessionContext`.
//! Iceberg files are immutable, so the statement only adds files (under the
//! template's location) and commits to the new catalog; the files it added are deleted
//! afterwards, leaving the template as loaded.
//!
//! Statements, each timed from SQL text to the collected `count` through
//! `icefloe::datafusion::sql::execute` (which installs the DML guard):
//!
//! * `DELETE FROM cat.ns.t WHERE l_partkey % 100 = 0` (1 %, random) and `% 10 = 0`
//!   (10 %, random);
//! * `DELETE FROM cat.ns.t WHERE l_orderkey < q` with `q` the 1 % and the 10 % quantile
//!   of `l_orderkey` (clustered: `lineitem` is ordered by `l_orderkey`);
//! * `MERGE INTO cat.ns.t t USING (…) s ON t.l_orderkey = s.l_orderkey AND
//!   t.l_linenumber = s.l_linenumber WHEN MATCHED THEN UPDATE SET l_quantity =
//!   s.l_quantity WHEN NOT MATCHED THEN INSERT (…) VALUES (s.…)`, the source being the
//!   rows with `l_partkey % 100 = 1` (1 %) with `l_quantity + 1`, and the rows with
//!   `l_partkey % 1000 = 2` (0.1 %) as new rows (`l_linenumber + 100`);
//! * the same `MERGE` with the 1 % changed rows only and `WHEN MATCHED` only.
//!
//! The eighteen sides (6 statements × 3 modes) run in a rotated order each iteration; the
//! figures are medians. Each run checks the returned count against the expected one
//! (computed on `lineitem` beforehand) and against `SELECT count(*)` before and after.
//! A statement that fails is reported (with its error) and the other sides go on.
//!
//! Reads (first iteration, merge-on-read sides): after the statement, the changed table
//! is copied into a compacted one (`CREATE TABLE cat.ns.c AS SELECT * FROM cat.ns.t`,
//! icefloe's writer again, no delete files), then a full scan (`SELECT
//! sum(l_extendedprice), count(*)`) and TPC-H Q6 run `--reads` times on each,
//! alternating which goes first; results are compared, the figures are medians.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{
    canonical_rows, machine, median, ms, parquet_files, prepare_lineitem, Args, BoxError,
};
use datafusion::arrow::array::{Array, Int64Array, RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::DataType;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableCreation, TableIdent};
use icefloe::datafusion::{register_iceberg_options, sql, IcebergCatalogProvider};
use icefloe::write::schema_from_parquet;

/// A session with `lineitem` (Parquet) and, if given, the catalog as `cat`.
async fn session(
    lineitem: &Path,
    catalog: Option<Arc<dyn Catalog>>,
) -> Result<SessionContext, BoxError> {
    let config = register_iceberg_options(SessionConfig::new());
    let ctx = SessionContext::new_with_config(config);
    ctx.register_parquet(
        "lineitem",
        &format!("{}/", lineitem.display()),
        ParquetReadOptions::default(),
    )
    .await?;
    if let Some(catalog) = catalog {
        let provider = IcebergCatalogProvider::try_new(catalog).await?;
        ctx.register_catalog("cat", Arc::new(provider));
    }
    Ok(ctx)
}

async fn run_sql(ctx: &SessionContext, statement: &str) -> Result<Vec<RecordBatch>, BoxError> {
    Ok(sql::execute(ctx, statement).await?.collect().await?)
}

/// The first column of the first row, as an integer (`count` of a DML statement, or a
/// `count(*)`).
fn first_u64(batches: &[RecordBatch]) -> Result<u64, BoxError> {
    let b = batches.iter().find(|b| b.num_rows() > 0).ok_or("no rows")?;
    let c = b.column(0);
    if let Some(a) = c.as_any().downcast_ref::<UInt64Array>() {
        return Ok(a.value(0));
    }
    if let Some(a) = c.as_any().downcast_ref::<Int64Array>() {
        return Ok(a.value(0) as u64);
    }
    Err(format!("not an integer: {:?}", c.data_type()).into())
}

async fn count(ctx: &SessionContext, from: &str) -> Result<u64, BoxError> {
    first_u64(&run_sql(ctx, &format!("SELECT count(*) FROM {from}")).await?)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Mode {
    /// v2, `copy-on-write`.
    CopyOnWrite,
    /// v2, `merge-on-read`: position delete files.
    MergeOnRead,
    /// v3, `merge-on-read`: deletion vectors.
    MergeOnReadDv,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::CopyOnWrite, Mode::MergeOnRead, Mode::MergeOnReadDv];

    /// The value of `write.delete.mode`, `write.update.mode` and `write.merge.mode`.
    fn property(self) -> &'static str {
        match self {
            Mode::CopyOnWrite => "copy-on-write",
            Mode::MergeOnRead | Mode::MergeOnReadDv => "merge-on-read",
        }
    }

    fn format_version(self) -> &'static str {
        match self {
            Mode::CopyOnWrite | Mode::MergeOnRead => "2",
            Mode::MergeOnReadDv => "3",
        }
    }

    /// How the mode is named in the output.
    fn label(self) -> &'static str {
        match self {
            Mode::CopyOnWrite => "copy-on-write (v2)",
            Mode::MergeOnRead => "merge-on-read (v2, position deletes)",
            Mode::MergeOnReadDv => "merge-on-read (v3, deletion vectors)",
        }
    }

    fn writes_deletes(self) -> bool {
        self != Mode::CopyOnWrite
    }
}

/// One measured statement.
#[derive(Debug, Clone)]
struct Change {
    label: String,
    sql: String,
    /// The `count` the statement must return.
    expected: u64,
    /// `count(*)` after minus before.
    expected_delta: i64,
}

/// A loaded table whose metadata file each run registers in a fresh catalog.
struct Template {
    metadata_location: String,
    /// The table's directory and the files in it after loading.
    dir: PathBuf,
    files: HashSet<PathBuf>,
}

fn files_under(dir: &Path) -> HashSet<PathBuf> {
    let mut out = HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(entries) = std::fs::read_dir(&d) {
            for e in entries.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.insert(p);
                }
            }
        }
    }
    out
}

fn local_path(location: &str) -> Result<PathBuf, BoxError> {
    url::Url::parse(location)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(|| format!("not a local location: {location}").into())
}

async fn load_template(lineitem: &Path, dir: &Path, mode: Mode) -> Result<Template, BoxError> {
    let catalog = SqlCatalog::open_or_create("cat", dir.join("catalog.db"))?;
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await?;
    let mut creation = TableCreation::new(schema_from_parquet(&parquet_files(lineitem)?[0])?);
    creation
        .properties
        .insert("format-version".into(), mode.format_version().into());
    for key in ["write.delete.mode", "write.update.mode", "write.merge.mode"] {
        creation
            .properties
            .insert(key.into(), mode.property().into());
    }
    let ident = TableIdent::parse("ns.t");
    catalog.create_table(&ident, creation).await?;
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let ctx = session(lineitem, Some(Arc::clone(&catalog))).await?;
    let start = Instant::now();
    let rows = first_u64(&run_sql(&ctx, "INSERT INTO cat.ns.t SELECT * FROM lineitem").await?)?;
    let time = start.elapsed();
    let table = catalog.load_table(&ident).await?;
    let summary = &table
        .metadata()
        .current_snapshot()
        .ok_or("no snapshot after INSERT")?
        .summary;
    eprintln!(
        "loaded the {} template: {rows} rows, {} data files, {:.1} MB, in {:.2} s",
        mode.label(),
        summary.get("total-data-files").map_or("?", |s| s.as_str()),
        summary
            .get("total-files-size")
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 1e6,
        time.as_secs_f64()
    );
    let table_dir = local_path(&table.metadata().location)?;
    Ok(Template {
        metadata_location: catalog.metadata_location(&ident).await?,
        files: files_under(&table_dir),
        dir: table_dir,
    })
}

/// What one run of a statement did.
#[derive(Debug, Clone)]
struct Run {
    time: Duration,
    count: u64,
    /// Snapshot summary: data files added / removed, delete files added, bytes added.
    added_data_files: u64,
    removed_data_files: u64,
    added_delete_files: u64,
    added_bytes: u64,
}

/// Read-side figures for one merge-on-read result: per query, median ms on the changed
/// table and on the compacted copy.
#[derive(Debug, Clone)]
struct Reads {
    queries: Vec<(String, f64, f64)>,
    delete_files: u64,
    data_files: u64,
}

const READ_QUERIES: [(&str, &str); 2] = [
    (
        "full scan",
        "SELECT sum(l_extendedprice), count(*) FROM {t}",
    ),
    (
        "Q6",
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM {t} \
         WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01' \
         AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    ),
];

async fn measure_reads(
    ctx: &SessionContext,
    reads: usize,
) -> Result<Vec<(String, f64, f64)>, BoxError> {
    let mut out = vec![];
    for (name, q) in READ_QUERIES {
        let changed = q.replace("{t}", "cat.ns.t");
        let compacted = q.replace("{t}", "cat.ns.c");
        let (mut a, mut b) = (vec![], vec![]);
        let mut results: Vec<Vec<String>> = vec![];
        for r in 0..reads {
            for side in 0..2 {
                let first_changed = r % 2 == 0;
                let on_changed = (side == 0) == first_changed;
                let text = if on_changed { &changed } else { &compacted };
                let start = Instant::now();
                let batches = run_sql(ctx, text).await?;
                let t = start.elapsed();
                if on_changed {
                    a.push(t);
                } else {
                    b.push(t);
                }
                results.push(canonical_rows(&batches));
            }
        }
        if results.windows(2).any(|w| w[0] != w[1]) {
            return Err(format!("{name}: the changed and the compacted table differ").into());
        }
        out.push((name.to_string(), ms(median(a)), ms(median(b))));
    }
    Ok(out)
}

fn summary_num(summary: &HashMap<String, String>, key: &str) -> u64 {
    summary.get(key).and_then(|v| v.parse().ok()).unwrap_or(0)
}

async fn run_change(
    lineitem: &Path,
    tmp: &Path,
    template: &Template,
    change: &Change,
    reads: Option<usize>,
) -> Result<(Run, Option<Reads>), BoxError> {
    let dir = tempfile::tempdir_in(tmp)?;
    let result = async {
        let catalog = SqlCatalog::open_or_create("cat", dir.path().join("catalog.db"))?;
        catalog
            .create_namespace(&Namespace::parse("ns"), &HashMap::new())
            .await?;
        let ident = TableIdent::parse("ns.t");
        catalog
            .register_table(&ident, &template.metadata_location)
            .await?;
        let catalog: Arc<dyn Catalog> = Arc::new(catalog);
        let ctx = session(lineitem, Some(Arc::clone(&catalog))).await?;
        let before = count(&ctx, "cat.ns.t").await?;
        let start = Instant::now();
        let returned = first_u64(&run_sql(&ctx, &change.sql).await?)?;
        let time = start.elapsed();
        let after = count(&ctx, "cat.ns.t").await?;
        let delta = after as i64 - before as i64;
        if returned != change.expected || delta != change.expected_delta {
            return Err(format!(
                "{}: returned {returned} (expected {}), count(*) {before} -> {after} \
                 ({delta:+}, expected {:+})",
                change.label, change.expected, change.expected_delta
            )
            .into());
        }
        let table = catalog.load_table(&ident).await?;
        let snapshot = table.metadata().current_snapshot().ok_or("no snapshot")?;
        let s = &snapshot.summary;
        let run = Run {
            time,
            count: returned,
            added_data_files: summary_num(s, "added-data-files"),
            removed_data_files: summary_num(s, "deleted-data-files"),
            added_delete_files: summary_num(s, "added-delete-files"),
            added_bytes: summary_num(s, "added-files-size"),
        };
        let reads = match reads {
            None => None,
            Some(n) => {
                run_sql(&ctx, "CREATE TABLE cat.ns.c AS SELECT * FROM cat.ns.t").await?;
                Some(Reads {
                    queries: measure_reads(&ctx, n).await?,
                    delete_files: summary_num(s, "total-delete-files"),
                    data_files: summary_num(s, "total-data-files"),
                })
            }
        };
        Ok::<_, BoxError>((run, reads))
    }
    .await;
    // leave the template as loaded: remove what the statement added under its location
    for f in files_under(&template.dir) {
        if !template.files.contains(&f) {
            std::fs::remove_file(&f)?;
        }
    }
    result
}

/// The `l_orderkey` below which `fraction` of the rows lie.
async fn orderkey_quantile(
    ctx: &SessionContext,
    rows: u64,
    fraction: f64,
) -> Result<u64, BoxError> {
    let offset = (rows as f64 * fraction) as u64;
    first_u64(
        &run_sql(
            ctx,
            &format!("SELECT l_orderkey FROM lineitem ORDER BY l_orderkey LIMIT 1 OFFSET {offset}"),
        )
        .await?,
    )
}

async fn changes(ctx: &SessionContext, rows: u64) -> Result<Vec<Change>, BoxError> {
    let mut out = vec![];
    let q1 = orderkey_quantile(ctx, rows, 0.01).await?;
    let q10 = orderkey_quantile(ctx, rows, 0.10).await?;
    for (label, predicate) in [
        ("DELETE 1 %, random", "l_partkey % 100 = 0".to_string()),
        ("DELETE 10 %, random", "l_partkey % 10 = 0".to_string()),
        ("DELETE 1 %, clustered", format!("l_orderkey < {q1}")),
        ("DELETE 10 %, clustered", format!("l_orderkey < {q10}")),
    ] {
        let n = count(ctx, &format!("lineitem WHERE {predicate}")).await?;
        out.push(Change {
            label: format!("{label} (`{predicate}`)"),
            sql: format!("DELETE FROM cat.ns.t WHERE {predicate}"),
            expected: n,
            expected_delta: -(n as i64),
        });
    }
    // MERGE: 1 % of the rows with a changed l_quantity, 0.1 % new rows
    let schema = ctx.table("lineitem").await?.schema().as_arrow().clone();
    let quantity_type = schema.field_with_name("l_quantity")?.data_type().clone();
    let quantity = match quantity_type {
        DataType::Decimal128(p, s) => format!("CAST(l_quantity + 1 AS DECIMAL({p}, {s}))"),
        _ => "l_quantity + 1".to_string(),
    };
    let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let select = |replace: &str, with: &str| -> String {
        columns
            .iter()
            .map(|c| {
                if c == replace {
                    format!("{with} AS {c}")
                } else {
                    c.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let matched = count(ctx, "lineitem WHERE l_partkey % 100 = 1").await?;
    let inserted = count(ctx, "lineitem WHERE l_partkey % 1000 = 2").await?;
    let sql = format!(
        "MERGE INTO cat.ns.t t USING (\
         SELECT {} FROM lineitem WHERE l_partkey % 100 = 1 \
         UNION ALL SELECT {} FROM lineitem WHERE l_partkey % 1000 = 2) s \
         ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber \
         WHEN MATCHED THEN UPDATE SET l_quantity = s.l_quantity \
         WHEN NOT MATCHED THEN INSERT ({}) VALUES ({})",
        select("l_quantity", &quantity),
        select("l_linenumber", "CAST(l_linenumber + 100 AS INT)"),
        columns.join(", "),
        columns
            .iter()
            .map(|c| format!("s.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out.push(Change {
        label: "MERGE 1 % updated + 0.1 % inserted".into(),
        sql,
        expected: matched + inserted,
        expected_delta: inserted as i64,
    });
    // the same without `WHEN NOT MATCHED` (an inner join: no unmatched rows)
    out.push(Change {
        label: "MERGE 1 % updated (`WHEN MATCHED` only)".into(),
        sql: format!(
            "MERGE INTO cat.ns.t t USING (\
             SELECT {} FROM lineitem WHERE l_partkey % 100 = 1) s \
             ON t.l_orderkey = s.l_orderkey AND t.l_linenumber = s.l_linenumber \
             WHEN MATCHED THEN UPDATE SET l_quantity = s.l_quantity",
            select("l_quantity", &quantity),
        ),
        expected: matched,
        expected_delta: 0,
    });
    Ok(out)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args = Args::from_env();
    let sf = args.get("sf").unwrap_or_else(|| "1".into());
    let iterations: usize = args.num("iterations", 3);
    let reads: usize = args.num("reads", 5);
    let data = common::data_dir(&args);
    let tmp = data.join("tmp");
    std::fs::create_dir_all(&tmp)?;
    let lineitem = prepare_lineitem(&args, &data.join(format!("tpch-sf{sf}")), &sf)?;
    println!(
        "# Row-level changes (issue 12): machine: {}; commit {}",
        machine(),
        common::git_commit()
    );
    let started = Instant::now();
    let ctx = session(&lineitem, None).await?;
    let rows = count(&ctx, "lineitem").await?;
    let changes = changes(&ctx, rows).await?;
    drop(ctx);
    println!(
        "\nTPC-H SF{sf} lineitem ({rows} rows, {}), {iterations} iterations per side, rotated \
         order, medians; each statement on a fresh copy of the loaded table",
        lineitem.display()
    );
    for c in &changes {
        eprintln!("{}: {}", c.label, c.sql);
    }
    let work = tempfile::tempdir_in(&tmp)?;
    let mut templates = HashMap::new();
    for mode in Mode::ALL {
        let dir = work
            .path()
            .join(format!("{}-v{}", mode.property(), mode.format_version()));
        templates.insert(mode, load_template(&lineitem, &dir, mode).await?);
    }
    let mut sides = vec![];
    for (c, _) in changes.iter().enumerate() {
        for mode in Mode::ALL {
            sides.push((c, mode));
        }
    }
    let mut runs: HashMap<usize, Vec<Run>> = HashMap::new();
    let mut reads_after: HashMap<usize, Reads> = HashMap::new();
    let mut failures: HashMap<usize, String> = HashMap::new();
    for i in 0..iterations {
        for k in 0..sides.len() {
            let s = (i + k) % sides.len();
            let (c, mode) = sides[s];
            let change = &changes[c];
            let measure = (i == 0 && mode.writes_deletes() && reads > 0).then_some(reads);
            let (run, r) =
                match run_change(&lineitem, &tmp, &templates[&mode], change, measure).await {
                    Ok(x) => x,
                    Err(e) => {
                        // reported, and the other sides still measured
                        let e = e.to_string().replace('\n', " ");
                        eprintln!(
                            "iteration {i}: {} [{}]: FAILED: {e}",
                            change.label,
                            mode.label()
                        );
                        failures.entry(s).or_insert(e);
                        continue;
                    }
                };
            eprintln!(
                "iteration {i}: {} [{}]: {:.2} s, count {} (checked), +{} data files, \
                 -{} data files, +{} delete files, {:.1} MB written",
                change.label,
                mode.label(),
                run.time.as_secs_f64(),
                run.count,
                run.added_data_files,
                run.removed_data_files,
                run.added_delete_files,
                run.added_bytes as f64 / 1e6
            );
            if let Some(r) = r {
                for (q, a, b) in &r.queries {
                    eprintln!(
                        "  read {q}: {a:.1} ms vs compacted {b:.1} ms ({:.3}x)",
                        a / b
                    );
                }
                reads_after.insert(s, r);
            }
            runs.entry(s).or_default().push(run);
        }
    }
    println!();
    println!(
        "| statement | mode | median s | runs (s) | count (checked) | data files +/- | delete files + | MB written |"
    );
    println!("|---|---|---:|---|---:|---:|---:|---:|");
    for (s, (c, mode)) in sides.iter().enumerate() {
        let Some(r) = runs.get(&s) else {
            println!(
                "| {} | {} | failed | | | | | |",
                changes[*c].label,
                mode.label()
            );
            continue;
        };
        let last = &r[r.len() - 1];
        let times: Vec<String> = r
            .iter()
            .map(|x| format!("{:.2}", x.time.as_secs_f64()))
            .collect();
        println!(
            "| {} | {} | {:.2} | {} | {} | +{} / -{} | {} | {:.1} |",
            changes[*c].label,
            mode.label(),
            median(r.iter().map(|x| x.time).collect()).as_secs_f64(),
            times.join(", "),
            last.count,
            last.added_data_files,
            last.removed_data_files,
            last.added_delete_files,
            last.added_bytes as f64 / 1e6
        );
    }
    for (s, e) in &failures {
        let (c, mode) = sides[*s];
        println!(
            "\n{} [{}] failed ({} of {iterations} runs): {e}",
            changes[c].label,
            mode.label(),
            iterations - runs.get(s).map_or(0, Vec::len)
        );
    }
    if !reads_after.is_empty() {
        println!(
            "\nReads after each merge-on-read statement (first iteration), {reads} runs per \
             side alternating, medians; compacted = `CREATE TABLE … AS SELECT * FROM t`"
        );
        println!();
        println!(
            "| after | mode | query | MoR table ms | compacted ms | ratio | data / delete files |"
        );
        println!("|---|---|---|---:|---:|---:|---:|");
        for (s, (c, mode)) in sides.iter().enumerate() {
            if let Some(r) = reads_after.get(&s) {
                for (q, a, b) in &r.queries {
                    println!(
                        "| {} | {} | {q} | {a:.1} | {b:.1} | {:.3} | {} / {} |",
                        changes[*c].label,
                        mode.label(),
                        a / b,
                        r.data_files,
                        r.delete_files
                    );
                }
            }
        }
    }
    println!(
        "\nwall time of the whole run: {:.0} s",
        started.elapsed().as_secs_f64()
    );
    if let Some(peak) = common::peak_rss_bytes() {
        println!("peak RSS: {:.0} MiB", peak as f64 / (1 << 20) as f64);
    }
    Ok(())
}
