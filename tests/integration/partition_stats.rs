//! Spark's `compute_partition_stats` (spec: "Partition Statistics File"): every row of
//! the written file, read back with pyarrow, equals the answer PyIceberg's own manifest
//! reading gives (`tests/interop/partition_stats.py`), the file's Parquet schema carries
//! the spec's field ids, PyIceberg loads the metadata after the commit, and icefloe reads
//! the file back with the totals of its `$partitions` table. Also the Spark/Java cases:
//! an unpartitioned or empty table, a second call, an explicit snapshot, and the files'
//! life under `expire_snapshots` and `remove_orphan_files`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::Int64Type;
use datafusion::prelude::ParquetReadOptions;
use icefloe::catalog::TableIdent;
use icefloe::spec::{TableCommit, TableUpdate};
use serde_json::{json, Value};

use crate::dml::{create, lake, ok, run, Lake};
use crate::maintenance::call;

/// The one location a `compute_partition_stats` call of catalog `ice` answers (`None`:
/// no row).
pub(crate) async fn compute(lake: &Lake, args: &str) -> Option<String> {
    compute_in(lake, "ice", args).await
}

async fn compute_in(lake: &Lake, catalog: &str, args: &str) -> Option<String> {
    let q = format!("CALL {catalog}.system.compute_partition_stats({args})");
    let batches = run(&lake.ctx, &q)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut out = vec![];
    for b in &batches {
        assert_eq!(b.schema().field(0).name(), "partition_statistics_file");
        let c = b.column(0).as_string::<i32>();
        out.extend(c.iter().map(|v| v.expect("location").to_string()));
    }
    assert!(out.len() <= 1, "{q}: {out:?}");
    out.pop()
}

/// `(snapshot id, path, size)` of each partition statistics file of `ns.name`.
async fn stats_files(lake: &Lake, name: &str) -> Vec<(i64, String, i64)> {
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    statistics_files(&table)
}

/// The partition statistics files `table`'s metadata lists, as `(snapshot id, path,
/// size in bytes)`, sorted.
pub(crate) fn statistics_files(table: &icefloe::Table) -> Vec<(i64, String, i64)> {
    let mut files: Vec<(i64, String, i64)> = table
        .metadata()
        .partition_statistics
        .iter()
        .map(|f| {
            (
                f.snapshot_id,
                f.statistics_path.clone(),
                f.file_size_in_bytes,
            )
        })
        .collect();
    files.sort();
    files
}

async fn snapshot_ids(lake: &Lake, name: &str) -> Vec<i64> {
    let batches = run(
        &lake.ctx,
        &format!("SELECT snapshot_id FROM ice.ns.\"{name}$snapshots\" ORDER BY committed_at"),
    )
    .await
    .expect("snapshots");
    batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.expect("id"))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn local(path: &str) -> PathBuf {
    PathBuf::from(path.trim_start_matches("file://"))
}

/// The spec's columns (id, name, nullable) of a file of a table of `format_version`
/// ("Partition Statistics File": delete counts optional before v3, `dv_count` in v3).
fn spec_columns(format_version: u8) -> Vec<Value> {
    let v3 = format_version >= 3;
    let mut cols = vec![
        (1, "partition", false),
        (2, "spec_id", false),
        (3, "data_record_count", false),
        (4, "data_file_count", false),
        (5, "total_data_file_size_in_bytes", false),
        (6, "position_delete_record_count", !v3),
        (7, "position_delete_file_count", !v3),
        (8, "equality_delete_record_count", !v3),
        (9, "equality_delete_file_count", !v3),
        (10, "total_record_count", true),
        (11, "last_updated_at", true),
        (12, "last_updated_snapshot_id", true),
    ];
    if v3 {
        cols.push((13, "dv_count", false));
    }
    cols.into_iter()
        .map(|(id, name, nullable)| json!({"id": id, "name": name, "nullable": nullable}))
        .collect()
}

/// Every partition statistics file of `ns.name` equals PyIceberg's independent answer,
/// row by row in order, with the spec's schema and `partition` fields `partition_fields`
/// (`(field id, name)`, ascending ids); the registered size is the file's. Returns the
/// files' rows by snapshot id.
fn pyiceberg_agrees(
    lake: &Lake,
    name: &str,
    format_version: u8,
    partition_fields: &[(i64, &str)],
) -> HashMap<i64, Vec<Value>> {
    let ident = format!("ns.{name}");
    let args = [
        lake.db.as_os_str(),
        lake.warehouse.as_os_str(),
        std::ffi::OsStr::new(&ident),
    ];
    files_agree(name, &args, format_version, Some(partition_fields))
}

/// [`pyiceberg_agrees`] with the script's arguments `args`; `partition_fields` `None`:
/// any fields of ascending ids.
pub(crate) fn files_agree(
    name: &str,
    args: &[&std::ffi::OsStr],
    format_version: u8,
    partition_fields: Option<&[(i64, &str)]>,
) -> HashMap<i64, Vec<Value>> {
    let out = crate::interop::run_script("partition_stats.py", args);
    let mut by_snapshot = HashMap::new();
    for file in out["files"].as_array().expect("files") {
        assert_eq!(file["file_size_in_bytes"], file["actual_size"], "{file}");
        let schema = file["schema"].as_array().expect("schema");
        let columns: Vec<Value> = schema
            .iter()
            .map(|c| json!({"id": c["id"], "name": c["name"], "nullable": c["nullable"]}))
            .collect();
        assert_eq!(columns, spec_columns(format_version), "{name}");
        let fields: Vec<(i64, String, bool)> = schema[0]["fields"]
            .as_array()
            .expect("partition fields")
            .iter()
            .map(|f| {
                (
                    f["id"].as_i64().expect("id"),
                    f["name"].as_str().expect("name").to_string(),
                    f["nullable"].as_bool().expect("nullable"),
                )
            })
            .collect();
        match partition_fields {
            Some(expected) => {
                let expected: Vec<(i64, String, bool)> = expected
                    .iter()
                    .map(|(id, n)| (*id, n.to_string(), true))
                    .collect();
                assert_eq!(fields, expected, "{name}");
            }
            None => {
                assert!(!fields.is_empty(), "{name}");
                assert!(
                    fields.windows(2).all(|w| w[0].0 < w[1].0),
                    "{name}: {fields:?}"
                );
                assert!(fields.iter().all(|f| f.2), "{name}: {fields:?}");
            }
        }
        assert!(!file["rows"].as_array().expect("rows").is_empty(), "{name}");
        assert_eq!(file["rows"], file["expected"], "{name}: {file}");
        by_snapshot.insert(
            file["snapshot_id"].as_i64().expect("snapshot"),
            file["rows"].as_array().expect("rows").clone(),
        );
    }
    by_snapshot
}

/// icefloe reads the file back (of the current snapshot): its totals are those of the
/// table's `$partitions` (which counts live files only, so a partition of no live files
/// adds 0).
async fn icefloe_reads_back(lake: &Lake, name: &str, path: &str) {
    let df = lake
        .ctx
        .read_parquet(
            local(path).to_string_lossy().to_string(),
            ParquetReadOptions::default(),
        )
        .await
        .expect("read stats file");
    lake.ctx
        .register_table("stats_back", df.into_view())
        .expect("register");
    let sums = |table: &str, records: &str, files: &str| {
        format!(
            "SELECT CAST(sum({records}) AS BIGINT) AS r, CAST(sum({files}) AS BIGINT) AS f, \
             CAST(sum(total_data_file_size_in_bytes) AS BIGINT) AS b, \
             CAST(sum(position_delete_record_count) AS BIGINT) AS p, \
             CAST(sum(equality_delete_record_count) AS BIGINT) AS e, \
             CAST(sum(equality_delete_file_count) AS BIGINT) AS ef FROM {table}"
        )
    };
    let from_file = ok(
        &lake.ctx,
        &sums("stats_back", "data_record_count", "data_file_count"),
    )
    .await;
    let from_partitions = ok(
        &lake.ctx,
        &sums(
            &format!("ice.ns.\"{name}$partitions\""),
            "record_count",
            "file_count",
        ),
    )
    .await;
    assert_eq!(from_file, from_partitions, "{name}");
    lake.ctx.deregister_table("stats_back").expect("deregister");
}

/// Partition evolution (identity(k); + bucket(4, id); − k, + identity(s)), merge-on-read
/// position deletes, a delete of a whole partition and several snapshots on a v2 table:
/// each row of the current snapshot's file and of an older snapshot's file (`snapshot_id`)
/// is PyIceberg's answer; a second call on a snapshot returns its file unchanged; PyIceberg
/// loads the metadata; icefloe reads the file back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_of_evolved_merge_on_read_table_match_pyiceberg() {
    if crate::interop::python().is_none() {
        return;
    }
    let lake = lake().await;
    let name = "ps";
    let t = format!("ice.ns.{name}");
    create(
        &lake,
        name,
        "PARTITIONED BY (k)",
        ", 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'",
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (1, 10, 'a', 0.5), (2, 20, 'b', 1.5), (3, 10, 'c', NULL)"),
    )
    .await;
    let first = snapshot_ids(&lake, name).await[0];
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (4, NULL, 'a', 2.5)"),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("ALTER TABLE {t} ADD PARTITION FIELD bucket(4, id)"),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (5, 10, 'a', 1.0), (6, 30, 'b', 2.0), (7, 30, NULL, 3.0)"),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("ALTER TABLE {t} DROP PARTITION FIELD k"),
    )
    .await;
    ok(&lake.ctx, &format!("ALTER TABLE {t} ADD PARTITION FIELD s")).await;
    ok(
        &lake.ctx,
        &format!(
            "INSERT INTO {t} VALUES (8, 10, 'a', 1.0), (9, 40, 'z', 2.0), (10, 40, 'é', NULL)"
        ),
    )
    .await;
    // position deletes in several partitions, an update, then a whole partition
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id IN (3, 6, 9)")).await;
    ok(&lake.ctx, &format!("UPDATE {t} SET d = 9.0 WHERE id = 5")).await;
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 2")).await;
    let current = *snapshot_ids(&lake, name).await.last().expect("current");

    let path = compute(&lake, &format!("table => 'ns.{name}'"))
        .await
        .expect("a file");
    assert!(
        path.contains(&format!("/metadata/partition-stats-{current}-"))
            && path.ends_with(".parquet"),
        "{path}"
    );
    let older = compute(&lake, &format!("'ns.{name}', {first}"))
        .await
        .expect("a file");
    assert!(
        older.contains(&format!("partition-stats-{first}-")),
        "{older}"
    );
    let files = stats_files(&lake, name).await;
    assert_eq!(
        files.iter().map(|f| (f.0, f.1.clone())).collect::<Vec<_>>(),
        {
            let mut v = vec![(first, older.clone()), (current, path.clone())];
            v.sort();
            v
        }
    );
    // fields: k (1000), id_bucket_4 (1001), s (1002)
    let rows = pyiceberg_agrees(
        &lake,
        name,
        2,
        &[(1000, "k"), (1001, "id_bucket_4"), (1002, "s")],
    );
    // the first snapshot: k = 10 (2 rows) and k = 20 (1 row), both by that snapshot
    let at_first = &rows[&first];
    assert_eq!(at_first.len(), 2, "{at_first:?}");
    assert_eq!(
        at_first[0]["partition"],
        json!({"1000": 10, "1001": null, "1002": null})
    );
    assert_eq!(at_first[0]["data_record_count"], 2);
    assert_eq!(at_first[0]["last_updated_snapshot_id"], first);
    // the current one: deletes were counted, and every spec that has files shows up (spec
    // 2, k dropped, was replaced by 3, s added, before any write)
    let at_current = &rows[&current];
    let specs: std::collections::BTreeSet<i64> = at_current
        .iter()
        .map(|r| r["spec_id"].as_i64().expect("spec"))
        .collect();
    assert_eq!(specs.into_iter().collect::<Vec<_>>(), [0, 1, 3]);
    let deletes: i64 = at_current
        .iter()
        .map(|r| r["position_delete_record_count"].as_i64().expect("count"))
        .sum();
    assert!(deletes >= 4, "{at_current:?}");
    assert!(at_current.iter().all(|r| r["total_record_count"].is_null()));
    // a second call on the snapshot: its file, nothing written
    let again = compute(
        &lake,
        &format!("table => 'ns.{name}', snapshot_id => {current}"),
    )
    .await;
    assert_eq!(again.as_deref(), Some(path.as_str()));
    assert_eq!(stats_files(&lake, name).await, files);
    icefloe_reads_back(&lake, name, &path).await;
    // the table still reads the same in PyIceberg and DuckDB
    crate::dml::other_engines_agree(&lake, name).await;
}

/// v3: deletion vectors count in `position_delete_record_count` (their cardinality) and
/// `dv_count`, not in `position_delete_file_count`; a DV replaced by a later delete is
/// counted once; the delete counts are required columns and `dv_count` is the last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_count_deletion_vectors_on_v3() {
    if crate::interop::python().is_none() {
        return;
    }
    let lake = lake().await;
    let name = "dv";
    let t = format!("ice.ns.{name}");
    create(
        &lake,
        name,
        "PARTITIONED BY (k)",
        ", 'format-version'='3', 'write.delete.mode'='merge-on-read'",
    )
    .await;
    ok(
        &lake.ctx,
        &format!(
            "INSERT INTO {t} VALUES (1, 1, 'a', 0.5), (2, 1, 'b', 1.5), (3, 1, 'c', NULL), \
             (4, 2, 'd', 1.0), (5, 2, 'e', 2.0)"
        ),
    )
    .await;
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 1")).await;
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id IN (2, 4)")).await;
    let path = compute(&lake, &format!("'ns.{name}'"))
        .await
        .expect("a file");
    let current = *snapshot_ids(&lake, name).await.last().expect("current");
    let rows = pyiceberg_agrees(&lake, name, 3, &[(1000, "k")]);
    let rows = &rows[&current];
    assert_eq!(rows.len(), 2, "{rows:?}");
    // k = 1: one DV of 2 positions (the first DV, of 1, was replaced)
    assert_eq!(rows[0]["partition"], json!({"1000": 1}));
    assert_eq!(
        (
            &rows[0]["dv_count"],
            &rows[0]["position_delete_record_count"],
            &rows[0]["position_delete_file_count"]
        ),
        (&json!(1), &json!(2), &json!(0))
    );
    assert_eq!(rows[1]["dv_count"], 1);
    assert_eq!(rows[1]["position_delete_record_count"], 1);
    icefloe_reads_back(&lake, name, &path).await;
}

/// Copy-on-write: a rewritten file counts once (its replacement), a partition whose files
/// the snapshot deleted keeps a row of zero counts last updated by that snapshot (Java's
/// full computation); the expiry of a snapshot deletes its partition statistics file and
/// `remove_orphan_files` keeps the current one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_of_copy_on_write_and_file_life() {
    if crate::interop::python().is_none() {
        return;
    }
    let lake = lake().await;
    let name = "cow";
    let t = format!("ice.ns.{name}");
    create(&lake, name, "PARTITIONED BY (s)", "").await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO {t} VALUES (1, 1, 'a', 0.5), (2, 1, 'a', 1.5), (3, 2, 'b', NULL)"),
    )
    .await;
    let first = compute(&lake, &format!("'ns.{name}'"))
        .await
        .expect("a file");
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE id = 1")).await;
    ok(&lake.ctx, &format!("DELETE FROM {t} WHERE s = 'b'")).await;
    let ids = snapshot_ids(&lake, name).await;
    let current = *ids.last().expect("current");
    let path = compute(&lake, &format!("'ns.{name}'"))
        .await
        .expect("a file");
    let rows = pyiceberg_agrees(&lake, name, 2, &[(1000, "s")]);
    let rows = &rows[&current];
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["partition"], json!({"1000": "a"}));
    assert_eq!(
        (&rows[0]["data_record_count"], &rows[0]["data_file_count"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(rows[1]["partition"], json!({"1000": "b"}));
    assert_eq!(
        (&rows[1]["data_record_count"], &rows[1]["data_file_count"]),
        (&json!(0), &json!(0))
    );
    assert_eq!(rows[1]["last_updated_snapshot_id"], current);
    icefloe_reads_back(&lake, name, &path).await;

    // expiring the first snapshot deletes its file and its entry
    let r = call(
        &lake,
        &format!(
            "CALL ice.system.expire_snapshots(table => 'ns.{name}', snapshot_ids => array({}))",
            ids[0]
        ),
    )
    .await;
    assert_eq!(r["deleted_statistics_files_count"], 1, "{r:?}");
    assert!(!local(&first).exists(), "{first}");
    let files = stats_files(&lake, name).await;
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].1, path);
    // every file of the table aged: the registered statistics file is no orphan
    let dir = lake.warehouse.join("ns").join(name);
    age_files(&dir);
    let orphans = run(
        &lake.ctx,
        &format!("CALL ice.system.remove_orphan_files(table => 'ns.{name}', dry_run => true)"),
    )
    .await
    .expect("orphans");
    let listed: Vec<String> = orphans
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_string::<i32>()
                .iter()
                .map(|v| v.unwrap_or_default().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        listed.iter().all(|p| !p.contains("partition-stats")),
        "{listed:?}"
    );
    assert!(local(&path).exists());
}

fn age_files(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("dir") {
        let p = entry.expect("entry").path();
        if p.is_dir() {
            age_files(&p);
        } else {
            crate::fixtures::set_mtime(&p, crate::fixtures::days_ago(5));
        }
    }
}

/// As in Java: a table without snapshots gives no row; a non-empty unpartitioned table
/// is refused and nothing is committed; a snapshot the table does not have is refused. A
/// table whose files are to be Avro is refused (icefloe writes Parquet only), no file left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_refusals_and_empty_tables() {
    let lake = lake().await;
    create(&lake, "empty", "PARTITIONED BY (k)", "").await;
    assert_eq!(compute(&lake, "'ns.empty'").await, None);
    create(&lake, "flat", "", "").await;
    assert_eq!(compute(&lake, "'ns.flat'").await, None);
    ok(&lake.ctx, "INSERT INTO ice.ns.flat VALUES (1, 1, 'a', 0.5)").await;
    let e = run(
        &lake.ctx,
        "CALL ice.system.compute_partition_stats('ns.flat')",
    )
    .await
    .expect_err("unpartitioned");
    assert!(e.contains("Table must be partitioned"), "{e}");
    assert!(e.contains("ns.flat"), "{e}");
    assert!(stats_files(&lake, "flat").await.is_empty());
    ok(
        &lake.ctx,
        "INSERT INTO ice.ns.empty VALUES (1, 1, 'a', 0.5)",
    )
    .await;
    let e = run(
        &lake.ctx,
        "CALL ice.system.compute_partition_stats('ns.empty', 42)",
    )
    .await
    .expect_err("no snapshot");
    assert!(e.contains("Snapshot not found: 42"), "{e}");
    assert!(stats_files(&lake, "empty").await.is_empty());
    // the file is Parquet: a table another engine set to Avro files is refused, naming the
    // property (icefloe's own SET TBLPROPERTIES refuses the value, so committed directly)
    lake.catalog
        .commit_table(
            &TableIdent::parse("ns.empty"),
            &TableCommit {
                requirements: vec![],
                updates: vec![TableUpdate::SetProperties {
                    updates: HashMap::from([("write.format.default".into(), "avro".into())]),
                }],
            },
        )
        .await
        .expect("commit");
    let e = run(
        &lake.ctx,
        "CALL ice.system.compute_partition_stats('ns.empty')",
    )
    .await
    .expect_err("avro");
    assert!(e.contains("write.format.default"), "{e}");
    assert!(stats_files(&lake, "empty").await.is_empty());
    let metadata = lake.warehouse.join("ns").join("empty").join("metadata");
    let written: Vec<_> = std::fs::read_dir(&metadata)
        .expect("metadata dir")
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("partition-stats")
        })
        .collect();
    assert!(written.is_empty(), "{written:?}");
}

/// Tables Spark (Iceberg Java 1.10) wrote: equality deletes (v2), a v1 partition evolved
/// into `void`, deletion vectors (v3), position delete files (v2), bucket specs evolved
/// (v2). Each file's rows equal PyIceberg's answer from the same manifests, and the totals
/// are the corpus' recorded live files (`cases.json`: `live_files`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_stats_of_corpus_tables_match_pyiceberg() {
    if crate::interop::python().is_none() {
        return;
    }
    let tables = [
        ("spark_v2_equality_deletes_partitioned", 2),
        ("spark_v1_partition_evolution_void", 1),
        ("spark_v3_deletion_vectors", 3),
        ("spark_v2_mor_position_deletes", 2),
        ("spark_v2_bucket_types_evolution", 2),
    ];
    // those the corpus holds (without ../shared/corpus, testdata/corpus has a few)
    let tables: Vec<(&str, u8)> = tables
        .into_iter()
        .filter(|(t, _)| crate::catalog::corpus_dir().join(t).is_dir())
        .collect();
    let names: Vec<&str> = tables.iter().map(|t| t.0).collect();
    let (copies, lake, catalog) = crate::maintenance::corpus_lake(&names).await;
    for (t, format_version) in tables {
        let path = compute_in(&lake, "corpus", &format!("table => 'ns.{t}'"))
            .await
            .expect("a file");
        let table = catalog
            .load_table(&TableIdent::parse(&format!("ns.{t}")))
            .await
            .expect("load");
        let current = table
            .metadata()
            .current_snapshot()
            .expect("snapshot")
            .snapshot_id;
        let metadata = table
            .file_io()
            .remap(table.metadata_location())
            .expect("remap");
        let from = format!("/tmp/iceberg-corpus/{t}");
        let to = copies.path().join(t);
        let args = [
            std::ffi::OsStr::new("--metadata"),
            std::ffi::OsStr::new(&metadata),
            std::ffi::OsStr::new("--remap"),
            std::ffi::OsStr::new(&from),
            to.as_os_str(),
        ];
        let rows = files_agree(t, &args, format_version, None);
        assert_eq!(rows.len(), 1, "{t}");
        let rows = &rows[&current];
        let sum = |column: &str| -> i64 {
            rows.iter()
                .map(|r| r[column].as_i64().unwrap_or_else(|| panic!("{t}.{column}")))
                .sum()
        };
        let cases: Value = serde_json::from_slice(
            &std::fs::read(crate::catalog::corpus_dir().join(t).join("cases.json")).expect("cases"),
        )
        .expect("json");
        for live in cases["live_files"].as_array().expect("live files") {
            let (files, records) = (live["files"].as_i64(), live["records"].as_i64());
            let (file_column, record_column) =
                match (live["content"].as_str(), live["format"].as_str()) {
                    (Some("data"), _) => ("data_file_count", "data_record_count"),
                    (Some("position_deletes"), Some("PUFFIN")) => {
                        ("dv_count", "position_delete_record_count")
                    }
                    (Some("position_deletes"), _) => {
                        ("position_delete_file_count", "position_delete_record_count")
                    }
                    _ => ("equality_delete_file_count", "equality_delete_record_count"),
                };
            assert_eq!(Some(sum(file_column)), files, "{t}: {live}");
            assert_eq!(Some(sum(record_column)), records, "{t}: {live}");
        }
        assert!(path.contains("partition-stats-"), "{path}");
    }
    drop(copies);
}
