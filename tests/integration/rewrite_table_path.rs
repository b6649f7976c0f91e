//! `CALL system.rewrite_table_path` (Spark's procedure, Java's
//! `RewriteTablePathSparkAction`): a table is moved from one directory prefix to another
//! by copying every line of the file list with plain `std::fs`, registered at the target,
//! and read by icefloe, PyIceberg and DuckDB at every snapshot — the same rows as the
//! source; no copied file names the source prefix (Avro and Parquet decoded, other files
//! as bytes); an incremental rewrite (`start_version`) lists only the newer files.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableIdent};
use serde_json::Value;

use crate::catalog::attach;
use crate::dml::{lake, ok, run, Lake};
use crate::interop::{assert_same_rows, canonical_rows, duckdb_read_at, pyiceberg_read_at, python};

/// `SELECT * FROM <table_sql>` through icefloe's SQL (time travel included), as
/// canonical rows.
async fn icefloe_rows(
    ctx: &datafusion::prelude::SessionContext,
    table_sql: &str,
    schema: &Value,
) -> Vec<Value> {
    let sql = format!("SELECT * FROM {table_sql}");
    let batches = run(ctx, &sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    canonical_rows(&batches, schema)
}

fn schema_json() -> Value {
    serde_json::json!({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": false, "type": "long"},
        {"id": 2, "name": "k", "required": false, "type": "int"},
        {"id": 3, "name": "s", "required": false, "type": "string"},
        {"id": 4, "name": "d", "required": false, "type": "double"}
    ]})
}

/// A local path of a location (`file:///x`, `file:/x` or `/x`).
pub(crate) fn local(location: &str) -> PathBuf {
    let p = location
        .strip_prefix("file://")
        .or_else(|| location.strip_prefix("file:"))
        .unwrap_or(location);
    PathBuf::from(p)
}

/// The one row of a `rewrite_table_path` call: (latest_version, file_list_location).
pub(crate) async fn call(lake: &Lake, args: &str) -> Result<(String, String), String> {
    let q = format!("CALL ice.system.rewrite_table_path({args})");
    let batches = run(&lake.ctx, &q).await?;
    let b = &batches[0];
    assert_eq!(b.num_rows(), 1, "{q}");
    let col = |i: usize| {
        b.column(i)
            .as_any()
            .downcast_ref::<datafusion::arrow::array::StringArray>()
            .expect("string")
            .value(0)
            .to_string()
    };
    assert_eq!(b.schema().field(0).name(), "latest_version");
    assert_eq!(b.schema().field(1).name(), "file_list_location");
    Ok((col(0), col(1)))
}

/// The (source, target) lines of the file list at `location`.
pub(crate) fn file_list(location: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(local(location)).expect("file list");
    icefloe::maintenance::rewrite_table_path::parse_file_list(&text).expect("CSV")
}

/// Copy every file of `list` to its target with std::fs.
pub(crate) fn copy_all(list: &BTreeMap<String, String>) {
    for (from, to) in list {
        let to = local(to);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(local(from), &to).unwrap_or_else(|e| panic!("copy {from} -> {to:?}: {e}"));
    }
}

/// [`copy_all`], then the listed target of metadata file `latest` (the end version).
pub(crate) fn copy_all_to_latest(list: &BTreeMap<String, String>, latest: &str) -> String {
    copy_all(list);
    list.values()
        .find(|to| to.ends_with(&format!("/{latest}")))
        .expect("the end version is listed")
        .clone()
}

/// Asserts that no file under `dir` names `old` (a location the rewrite moved).
pub(crate) fn none_names(dir: &Path, old: &str) {
    for f in files_under(dir) {
        let text = decoded_text(&f);
        assert!(!text.contains(old), "{f:?} names the old location {old}");
    }
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The text a file holds: Avro records and Parquet rows decoded (their bytes are
/// compressed), plus the raw bytes (JSON, Puffin footers, Parquet footers).
fn decoded_text(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("read");
    let mut text = String::from_utf8_lossy(&bytes).to_string();
    let name = path.to_string_lossy();
    if name.ends_with(".avro") {
        let reader = apache_avro::Reader::new(&bytes[..]).expect("avro");
        for v in reader {
            text.push_str(&format!("{:?}", v.expect("record")));
        }
    } else if name.ends_with(".parquet") {
        let reader = datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(
            bytes::Bytes::from(bytes),
            1024,
        )
        .expect("parquet");
        let batches: Vec<_> = reader.map(|b| b.expect("batch")).collect();
        text.push_str(
            &datafusion::arrow::util::pretty::pretty_format_batches(&batches)
                .expect("format")
                .to_string(),
        );
    }
    text
}

/// A v2 (position deletes), v3 (deletion vectors) or v1 (copy-on-write) table
/// partitioned by `k` with several snapshots, a tag, a branch and a Puffin statistics
/// file.
pub(crate) async fn build(lake: &Lake, name: &str, version: u8) {
    let modes = match version {
        1 => "",
        _ => ", 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'",
    };
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} (id BIGINT, k INT, s STRING, d DOUBLE) PARTITIONED BY (k) \
             TBLPROPERTIES ('format-version'='{version}'{modes})"
        ),
    )
    .await;
    let t = format!("ice.ns.{name}");
    for b in 0..3 {
        let rows: Vec<String> = (0..6)
            .map(|i| format!("({}, {}, 's{b}{i}', {i}.5)", b * 10 + i, i % 2))
            .collect();
        ok(
            &lake.ctx,
            &format!("INSERT INTO {t} VALUES {}", rows.join(", ")),
        )
        .await;
    }
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id % 3 = 0")).await;
    ok(
        &lake.ctx,
        &format!("ALTER TABLE {t} CREATE TAG before_update"),
    )
    .await;
    ok(&lake.ctx, &format!("UPDATE {t} SET s = 'u' WHERE id = 11")).await;
    ok(&lake.ctx, &format!("ALTER TABLE {t} CREATE BRANCH dev")).await;
    ok(
        &lake.ctx,
        &format!("CALL ice.system.compute_table_stats('ns.{name}')"),
    )
    .await;
}

/// The snapshot ids of a table.
pub(crate) async fn snapshots(catalog: &Arc<dyn Catalog>, ident: &str) -> Vec<i64> {
    catalog
        .load_table(&TableIdent::parse(ident))
        .await
        .expect("load")
        .metadata()
        .snapshots
        .iter()
        .map(|s| s.snapshot_id)
        .collect()
}

/// The target side: a catalog at `dir` where the moved table is registered.
pub(crate) struct Target {
    pub(crate) db: PathBuf,
    pub(crate) warehouse: PathBuf,
    pub(crate) catalog: Arc<dyn Catalog>,
    pub(crate) ctx: datafusion::prelude::SessionContext,
}

pub(crate) async fn target(dir: &Path) -> Target {
    let db = dir.join("catalog.db");
    let warehouse = dir.join("warehouse");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let catalog = SqlCatalog::open_or_create("default", &db)
        .expect("catalog")
        .with_warehouse(&warehouse.to_string_lossy())
        .expect("warehouse");
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("namespace");
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let ctx = crate::catalog::context();
    attach(&ctx, "dr", Arc::clone(&catalog)).await;
    Target {
        db,
        warehouse,
        catalog,
        ctx,
    }
}

/// Every snapshot of source `ice.ns.<name>` reads alike at the target `dr.ns.<name>` in
/// icefloe, PyIceberg and DuckDB; `metadata` is the target metadata file.
pub(crate) async fn same_at_every_snapshot(lake: &Lake, to: &Target, name: &str, metadata: &str) {
    let schema = schema_json();
    let ident = format!("ns.{name}");
    let ids = snapshots(&lake.catalog, &ident).await;
    assert_eq!(ids, snapshots(&to.catalog, &ident).await, "same snapshots");
    for id in ids {
        let source = icefloe_rows(
            &lake.ctx,
            &format!("ice.{ident} VERSION AS OF {id}"),
            &schema,
        )
        .await;
        let moved = icefloe_rows(&to.ctx, &format!("dr.{ident} VERSION AS OF {id}"), &schema).await;
        assert_same_rows(
            &format!("{ident}@{id}: icefloe at the target"),
            &source,
            &moved,
        );
        if python().is_none() {
            continue;
        }
        let pyi = pyiceberg_read_at(&to.db, &to.warehouse, &ident, id);
        assert_same_rows(
            &format!("{ident}@{id}: PyIceberg at the target"),
            &source,
            pyi["rows"].as_array().expect("rows"),
        );
        let duck = duckdb_read_at(metadata, id);
        assert_same_rows(
            &format!("{ident}@{id}: DuckDB at the target"),
            &source,
            duck["rows"].as_array().expect("rows"),
        );
    }
}

/// The lengths the moved metadata records are those of the copied files: every
/// manifest's `manifest_length` (Java keeps the old ones, though the paths in a manifest
/// changed length) and every live delete file's `file_size_in_bytes` (rewritten files).
pub(crate) async fn sizes_are_the_copies(ctx: &datafusion::prelude::SessionContext, name: &str) {
    for (sql, what) in [
        (
            format!(
                "SELECT path || ',' || CAST(length AS VARCHAR) FROM dr.ns.\"{name}$all_manifests\""
            ),
            "manifest_length",
        ),
        (
            format!(
                "SELECT file_path || ',' || CAST(file_size_in_bytes AS VARCHAR) \
                 FROM dr.ns.\"{name}$files\""
            ),
            "file_size_in_bytes",
        ),
    ] {
        let rows = crate::catalog::strings(ctx, &sql).await;
        assert!(!rows.is_empty(), "{sql}");
        for row in rows {
            let (path, size) = row.rsplit_once(',').expect("path,size");
            let actual = std::fs::metadata(local(path))
                .unwrap_or_else(|e| panic!("{what}: {path} not copied: {e}"))
                .len();
            assert_eq!(size.parse::<u64>().ok(), Some(actual), "{what} of {path}");
        }
    }
}

/// Every metadata file the `metadata-log` of the target metadata file `metadata` names
/// was copied, and names no file outside the target.
pub(crate) fn log_is_copied(metadata: &str) {
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(local(metadata)).expect("metadata"))
            .expect("JSON");
    let log = json["metadata-log"].as_array().expect("metadata-log");
    assert!(!log.is_empty(), "{metadata}: a metadata-log");
    for entry in log {
        let file = entry["metadata-file"].as_str().expect("metadata-file");
        assert!(
            local(file).is_file(),
            "{file} (metadata-log of {metadata}) was copied"
        );
    }
}

/// Move table `name` (format `version`) and check it end to end; then an incremental
/// rewrite after more commits.
async fn moves_and_reads_alike(version: u8) {
    let lake = lake().await;
    let name = format!("moved_v{version}");
    build(&lake, &name, version).await;
    let ident = TableIdent::parse(&format!("ns.{name}"));
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let source_prefix = table.metadata().location.clone();
    let before_location = table.metadata_location().to_string();
    let dest = tempfile::tempdir().expect("tempdir");
    let dest_path = dest.path().join("dr").join(&name);
    // the target written as the source is (a path or a file: URI)
    let target_prefix = match source_prefix.strip_prefix("file://") {
        Some(_) => format!("file://{}", dest_path.display()),
        None => dest_path.display().to_string(),
    };
    let (latest, list_location) = call(
        &lake,
        &format!(
            "table => 'ns.{name}', source_prefix => '{source_prefix}', target_prefix => \
             '{target_prefix}'"
        ),
    )
    .await
    .expect("rewrite_table_path");
    let current_name = before_location
        .rsplit('/')
        .next()
        .expect("name")
        .to_string();
    assert_eq!(latest, current_name);
    assert!(
        list_location.contains("/metadata/copy-table-staging-")
            && list_location.ends_with("/file-list"),
        "{list_location}"
    );
    // nothing committed
    let after = lake.catalog.load_table(&ident).await.expect("load");
    assert_eq!(after.metadata_location(), before_location);

    let list = file_list(&list_location);
    let stats = &table.metadata().statistics;
    assert!(!stats.is_empty(), "a statistics file to move");
    for s in stats {
        assert!(
            list.contains_key(&s.statistics_path),
            "{} listed",
            s.statistics_path
        );
    }
    for to in list.values() {
        assert!(
            to.starts_with(&target_prefix),
            "{to} under the target prefix"
        );
    }
    let metadata = copy_all_to_latest(&list, &latest);
    // no copied file names the source prefix
    let source_dir = local(&source_prefix).display().to_string();
    none_names(&dest_path, &source_dir);
    let to = target(dest.path()).await;
    to.catalog
        .register_table(&ident, &metadata)
        .await
        .expect("register the moved table");
    same_at_every_snapshot(&lake, &to, &name, &metadata).await;
    sizes_are_the_copies(&to.ctx, &name).await;
    log_is_copied(&metadata);
    // the branch and tag move with the table
    for r in ["before_update", "dev"] {
        let q = |c: &str| format!("SELECT count(*) FROM {c}.ns.{name} VERSION AS OF '{r}'");
        assert_eq!(
            ok(&lake.ctx, &q("ice")).await,
            ok(&to.ctx, &q("dr")).await,
            "{r}"
        );
    }

    // incremental: more commits, then only what is newer than the copied version
    let t = format!("ice.ns.{name}");
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (100, 0, 'n', 1.0), (101, 1, 'n', 2.0)"),
    )
    .await;
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 1")).await;
    let (latest2, list2_location) = call(
        &lake,
        &format!(
            "table => 'ns.{name}', source_prefix => '{source_prefix}', target_prefix => \
             '{target_prefix}', start_version => '{latest}'"
        ),
    )
    .await
    .expect("incremental rewrite_table_path");
    assert_ne!(latest2, latest);
    let list2 = file_list(&list2_location);
    let copied_before: Vec<&String> = list.values().collect();
    for (from, to) in &list2 {
        if from.contains("/copy-table-staging-") {
            continue; // rewritten metadata: new versions, lists and manifests
        }
        assert!(
            !copied_before.contains(&to),
            "{to} was copied by the first rewrite and is listed again"
        );
    }
    let new_data: Vec<&String> = list2
        .keys()
        .filter(|f| !f.contains("/copy-table-staging-") && f.ends_with(".parquet"))
        .collect();
    assert!(
        !new_data.is_empty(),
        "the new data files are listed: {list2:?}"
    );
    let metadata2 = copy_all_to_latest(&list2, &latest2);
    none_names(&dest_path, &source_dir);
    let to2 = target(&dest.path().join("second")).await;
    to2.catalog
        .register_table(&ident, &metadata2)
        .await
        .expect("register the moved table");
    same_at_every_snapshot(&lake, &to2, &name, &metadata2).await;
    log_is_copied(&metadata2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_v2_position_deletes_read_alike_at_the_target() {
    moves_and_reads_alike(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_v3_deletion_vectors_read_alike_at_the_target() {
    moves_and_reads_alike(3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_v1_read_alike_at_the_target() {
    moves_and_reads_alike(1).await;
}

/// `staging_location` takes the rewritten files; `create_file_list => false` writes no
/// list and answers `N/A`, as Java.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_into_a_given_staging_location_without_a_list() {
    let lake = lake().await;
    build(&lake, "staged", 2).await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.staged"))
        .await
        .expect("load");
    let source = table.metadata().location.clone();
    let staging = tempfile::tempdir().expect("tempdir");
    let (latest, list) = call(
        &lake,
        &format!(
            "table => 'ns.staged', source_prefix => '{source}', target_prefix => '/x/t', \
             staging_location => '{}', create_file_list => false",
            staging.path().display()
        ),
    )
    .await
    .expect("rewrite_table_path");
    assert_eq!(list, "N/A");
    let staged = files_under(staging.path());
    assert!(
        staged
            .iter()
            .any(|f| f.ends_with(format!("metadata/{latest}"))),
        "{staged:?}"
    );
    assert!(
        staged.iter().all(|f| !f.ends_with("file-list")),
        "{staged:?}"
    );
    // the manifests and position delete files are staged at their relative places
    for suffix in [".avro", "-deletes.parquet"] {
        assert!(
            staged.iter().any(|f| f.to_string_lossy().ends_with(suffix)),
            "a {suffix} staged: {staged:?}"
        );
    }
    // an older end version: that version and its log, not the current one
    let older = table
        .metadata()
        .metadata_log
        .last()
        .expect("log")
        .metadata_file
        .clone();
    let older = older.rsplit('/').next().expect("name").to_string();
    let current = table
        .metadata_location()
        .rsplit('/')
        .next()
        .expect("name")
        .to_string();
    let staging = tempfile::tempdir().expect("tempdir");
    let (latest, list) = call(
        &lake,
        &format!(
            "table => 'ns.staged', source_prefix => '{source}', target_prefix => '/x/t', \
             end_version => '{older}', staging_location => '{}'",
            staging.path().display()
        ),
    )
    .await
    .expect("rewrite_table_path to an older version");
    assert_eq!(latest, older);
    let listed = file_list(&list);
    assert!(
        listed.values().any(|t| t.ends_with(&format!("/{older}"))),
        "{listed:?}"
    );
    assert!(
        !listed.values().any(|t| t.ends_with(&format!("/{current}"))),
        "{listed:?}"
    );
}

/// Refusals name their cause, and nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_errors_name_their_cause() {
    let lake = lake().await;
    build(&lake, "bad", 2).await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.bad"))
        .await
        .expect("load");
    let source = table.metadata().location.clone();
    let current = table
        .metadata_location()
        .rsplit('/')
        .next()
        .expect("name")
        .to_string();
    let first = table.metadata().metadata_log[0]
        .metadata_file
        .rsplit('/')
        .next()
        .expect("name")
        .to_string();
    let cases = [
        (
            "source_prefix => '/elsewhere/t', target_prefix => '/x/t'".to_string(),
            "does not match the table location".to_string(),
        ),
        (
            format!("source_prefix => '{source}', target_prefix => '{source}/'"),
            "cannot be the same as target_prefix".to_string(),
        ),
        (
            format!("source_prefix => '{source}', target_prefix => '/x/t', start_version => 'v999.metadata.json'"),
            "cannot find version file 'v999.metadata.json'".to_string(),
        ),
        (
            format!("source_prefix => '{source}', target_prefix => '/x/t', end_version => 'nope.json'"),
            "end_version: cannot find version file 'nope.json'".to_string(),
        ),
        (
            format!(
                "source_prefix => '{source}', target_prefix => '/x/t', start_version => \
                 '{current}', end_version => '{first}'"
            ),
            format!("start_version '{current}' is not older than end_version '{first}'"),
        ),
        (
            "target_prefix => '/x/t'".to_string(),
            "'source_prefix' argument".to_string(),
        ),
    ];
    // Java refuses what lies outside the source prefix, here the table's data path
    let elsewhere = tempfile::tempdir().expect("tempdir");
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.split (id BIGINT) TBLPROPERTIES ('format-version'='2', \
             'write.data.path'='{}')",
            elsewhere.path().display()
        ),
    )
    .await;
    ok(&lake.ctx, "INSERT INTO ice.ns.split VALUES (1)").await;
    let split = lake
        .catalog
        .load_table(&TableIdent::parse("ns.split"))
        .await
        .expect("load");
    let e = call(
        &lake,
        &format!(
            "table => 'ns.split', source_prefix => '{}', target_prefix => '/x/t'",
            split.metadata().location
        ),
    )
    .await
    .expect_err("a data path outside the prefix");
    assert!(
        e.contains("property 'write.data.path'") && e.contains("is not under the source prefix"),
        "{e}"
    );
    for (args, want) in cases {
        let e = call(&lake, &format!("table => 'ns.bad', {args}"))
            .await
            .expect_err(&args);
        assert!(e.contains(&want), "{args}: {e}");
    }
    let staged = crate::fixtures::files_with_suffix(&local(&source), "file-list");
    assert!(staged.is_empty(), "nothing staged: {staged:?}");
}

/// Tables Spark and PyIceberg wrote (the corpus: position deletes, deletion vectors,
/// equality deletes; Spark's paths stored as `file:/x` under a `file:///x` location) are
/// moved by copying the file list: every conformance query (time travel included)
/// answers as before, DuckDB (and PyIceberg, where it reads the deletes) counts the same
/// rows, no copied file names the old location, and the copied manifests hold the
/// metrics of Spark's rewritten position delete files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_moves_corpus_tables_other_engines_wrote() {
    use crate::maintenance::{answers, corpus_lake};
    let tables = [
        ("spark_v2_mor_position_deletes", true),
        ("spark_v3_deletion_vectors", true),
        ("spark_v2_equality_deletes", false),
        ("sidequery_pyiceberg_v2_equality_deletes", false),
        ("spark_v2_cow_time_travel", true),
    ];
    // those the corpus holds (without ../shared/corpus, testdata/corpus has a few)
    let tables: Vec<(&str, bool)> = tables
        .into_iter()
        .filter(|(t, _)| crate::catalog::corpus_dir().join(t).is_dir())
        .collect();
    let names: Vec<&str> = tables.iter().map(|t| t.0).collect();
    let (copies, lake, _catalog) = corpus_lake(&names).await;
    let dest = tempfile::tempdir().expect("tempdir");
    let moved = lake_at(dest.path()).await;
    for (t, pyiceberg) in tables {
        let before = answers(&lake, t).await;
        let stored = format!("/tmp/iceberg-corpus/{t}");
        let target_prefix = dest.path().join("moved").join(t).display().to_string();
        // Spark's own form of the paths it stored
        let q = format!(
            "CALL corpus.system.rewrite_table_path(table => 'ns.{t}', source_prefix => \
             'file:{stored}', target_prefix => '{target_prefix}')"
        );
        let batches = run(&lake.ctx, &q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
        let column = |i: usize| {
            batches[0]
                .column(i)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::StringArray>()
                .expect("string")
                .value(0)
                .to_string()
        };
        let (latest, list_location) = (column(0), column(1));
        let list = file_list(&list_location);
        // the stored sources of data files lie in the copy of the corpus table
        let copy = copies.path().join(t).display().to_string();
        let list: BTreeMap<String, String> = list
            .into_iter()
            .map(|(from, to)| {
                let from = local(&from).display().to_string();
                (from.replacen(&stored, &copy, 1), to)
            })
            .collect();
        let metadata = copy_all_to_latest(&list, &latest);
        none_names(Path::new(&target_prefix), &stored);
        moved
            .catalog
            .register_table(&TableIdent::parse(&format!("ns.{t}")), &metadata)
            .await
            .expect("register");
        let after = answers(&moved, t).await;
        assert_eq!(before, after, "{t}: answers at the target");
        // Spark's position delete files, rewritten: the copied manifests hold their metrics
        let (checked, _) = crate::rewrite_table_path_deletes::delete_metrics_are_the_files(
            moved.catalog.as_ref(),
            &format!("ns.{t}"),
        )
        .await;
        if t == "spark_v2_mor_position_deletes" {
            assert!(checked > 0, "{t}: position delete files checked");
        }
        if python().is_none() {
            continue;
        }
        let count =
            crate::catalog::scalar_i64(&moved.ctx, &format!("SELECT count(*) FROM corpus.ns.{t}"))
                .await;
        let duck = crate::interop::duckdb_read(&metadata);
        assert_eq!(
            duck["count"].as_i64(),
            Some(count),
            "{t}: DuckDB at the target"
        );
        if pyiceberg {
            let pyi =
                crate::interop::pyiceberg_read(&moved.db, &moved.warehouse, &format!("ns.{t}"));
            assert_eq!(
                pyi["count"].as_i64(),
                Some(count),
                "{t}: PyIceberg at the target"
            );
        }
    }
}

/// A fresh lake at `dir` whose catalog is attached as `corpus` (the name the corpus
/// answers use).
async fn lake_at(dir: &Path) -> Lake {
    let to = target(dir).await;
    let ctx = to.ctx.clone();
    attach(&ctx, "corpus", Arc::clone(&to.catalog)).await;
    Lake {
        dir: tempfile::tempdir().expect("tempdir"),
        db: to.db,
        warehouse: to.warehouse,
        catalog: to.catalog,
        ctx,
    }
}

/// An incremental rewrite after a schema change: the manifests the first rewrite copied
/// keep the lengths the new manifest lists record (each manifest is rewritten with its own
/// schema and format version, not the end version's), and the table reads alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_incremental_after_a_schema_change() {
    let lake = lake().await;
    let t = "ice.ns.evolving";
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE {t} (id BIGINT, k INT) PARTITIONED BY (k) \
             TBLPROPERTIES ('format-version'='2')"
        ),
    )
    .await;
    ok(&lake.ctx, &format!("INSERT INTO {t} VALUES (1, 0), (2, 1)")).await;
    ok(&lake.ctx, &format!("INSERT INTO {t} VALUES (3, 0)")).await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.evolving"))
        .await
        .expect("load");
    let source = table.metadata().location.clone();
    let dest = tempfile::tempdir().expect("tempdir");
    let target_prefix = dest.path().join("moved").display().to_string();
    let args = format!(
        "table => 'ns.evolving', source_prefix => '{source}', target_prefix => '{target_prefix}'"
    );
    let (first, list) = call(&lake, &args).await.expect("rewrite_table_path");
    copy_all(&file_list(&list));
    ok(
        &lake.ctx,
        &format!("ALTER TABLE {t} ADD COLUMN note STRING"),
    )
    .await;
    ok(&lake.ctx, &format!("INSERT INTO {t} VALUES (4, 1, 'n')")).await;
    let (latest, list) = call(&lake, &format!("{args}, start_version => '{first}'"))
        .await
        .expect("incremental rewrite_table_path");
    let list = file_list(&list);
    let metadata = copy_all_to_latest(&list, &latest);
    let to = target(dest.path()).await;
    to.catalog
        .register_table(&TableIdent::parse("ns.evolving"), &metadata)
        .await
        .expect("register");
    sizes_are_the_copies(&to.ctx, "evolving").await;
    let q = |c: &str| format!("SELECT * FROM {c}.ns.evolving ORDER BY id");
    assert_eq!(ok(&lake.ctx, &q("ice")).await, ok(&to.ctx, &q("dr")).await);
    if python().is_some() {
        let duck = crate::interop::duckdb_read(&metadata);
        assert_eq!(duck["count"].as_i64(), Some(4), "DuckDB at the target");
    }
}

/// After compacting the position delete files and expiring the snapshots that read the
/// old ones, the current delete manifest still names them in deleted entries, but they
/// are gone: the rewrite moves those entries without reading the files, and the table
/// moves and reads alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrite_table_path_after_compaction_and_expiry() {
    let lake = lake().await;
    build(&lake, "compacted", 2).await;
    let t = "ns.compacted";
    let calls = [
        format!(
            "CALL ice.system.rewrite_position_delete_files(table => '{t}', \
             options => map('rewrite-all', 'true'))"
        ),
        format!(
            "CALL ice.system.expire_snapshots(table => '{t}', \
             older_than => now() + INTERVAL '1' DAY, retain_last => 1)"
        ),
    ];
    for q in &calls {
        ok(&lake.ctx, q).await;
    }
    // the tag and branch keep their snapshots; drop them so the old delete files go
    for q in [
        format!("ALTER TABLE ice.{t} DROP TAG before_update"),
        format!("ALTER TABLE ice.{t} DROP BRANCH dev"),
    ] {
        ok(&lake.ctx, &q).await;
    }
    ok(&lake.ctx, &calls[1]).await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(t))
        .await
        .expect("load");
    let source = table.metadata().location.clone();
    let dest = tempfile::tempdir().expect("tempdir");
    let target_prefix = dest.path().join("moved").display().to_string();
    let (latest, list) = call(
        &lake,
        &format!("table => '{t}', source_prefix => '{source}', target_prefix => '{target_prefix}'"),
    )
    .await
    .expect("rewrite_table_path");
    let list = file_list(&list);
    let metadata = copy_all_to_latest(&list, &latest);
    let to = target(dest.path()).await;
    to.catalog
        .register_table(&TableIdent::parse(t), &metadata)
        .await
        .expect("register");
    log_is_copied(&metadata);
    sizes_are_the_copies(&to.ctx, "compacted").await;
    same_at_every_snapshot(&lake, &to, "compacted", &metadata).await;
}
