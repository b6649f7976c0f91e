//! Tables whose `gc.enabled` is false (files possibly shared with other tables, as
//! Java's `snapshot` and `migrate` leave them): every operation that deletes files
//! refuses, as in Iceberg Java — `expire_snapshots` (core `RemoveSnapshots`: the
//! metadata change too), `remove_orphan_files`, SQL `DROP TABLE … PURGE` (Spark's
//! `purgeTable`) — and the Catalog API's purge keeps the data files (Java's
//! `CatalogUtil.dropTableData`). Each test checks every file under the table location
//! is still there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use icefloe::catalog::{Catalog, FileSystemCatalog, Namespace, TableIdent};
use icefloe::maintenance::{
    expire_snapshots, remove_orphan_files, ExpireOptions, RemoveOrphanFiles,
};
use icefloe::transaction::{ExpireSnapshots, Transaction};
use icefloe::ErrorKind;

use crate::catalog::{attach, scalar_i64};
use crate::dml::{create, lake, ok, run};

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let path = e.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path);
            }
        }
    }
    out
}

/// A file no metadata names, last modified 4 days ago (an orphan by default).
fn old_orphan(path: &Path) {
    std::fs::write(path, b"not referenced").expect("write");
    crate::fixtures::set_mtime(path, crate::fixtures::days_ago(4));
}

fn assert_gc_refusal(err: &str, operation: &str) {
    for part in [operation, "GC is disabled", "gc.enabled"] {
        assert!(err.contains(part), "{part:?} not in: {err}");
    }
}

#[tokio::test]
async fn gc_disabled_refuses_expire_orphan_removal_and_purge() {
    let lake = lake().await;
    create(&lake, "g", "", ", 'gc.enabled'='false'").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.g VALUES (1, 1, 'a', 1.0)").await;
    ok(&lake.ctx, "INSERT INTO ice.ns.g VALUES (2, 2, 'b', 2.0)").await;
    // copy-on-write: the first file is replaced, reachable only from older snapshots
    ok(&lake.ctx, "DELETE FROM ice.ns.g WHERE id = 1").await;
    let dir = lake.warehouse.join("ns").join("g");
    let orphan = dir.join("data").join("stray.parquet");
    old_orphan(&orphan);
    let files = files_under(&dir);
    let ident = TableIdent::parse("ns.g");
    let location = lake
        .catalog
        .load_table(&ident)
        .await
        .expect("load")
        .metadata_location()
        .to_string();
    let snapshots = "SELECT count(*) FROM ice.ns.\"g$snapshots\"";
    assert_eq!(scalar_i64(&lake.ctx, snapshots).await, 3);

    let expire = "CALL ice.system.expire_snapshots(table => 'ns.g', \
                  older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1";
    for (q, operation) in [
        (format!("{expire})"), "expire snapshots of table 'ns.g'"),
        (
            format!("{expire}, dry_run => true)"),
            "expire snapshots of table 'ns.g'",
        ),
        (
            "CALL ice.system.remove_orphan_files(table => 'ns.g')".to_string(),
            "remove orphan files",
        ),
        (
            "CALL ice.system.remove_orphan_files(table => 'ns.g', dry_run => true)".to_string(),
            "remove orphan files",
        ),
        (
            "DROP TABLE ice.ns.g PURGE".to_string(),
            "purge table 'ns.g'",
        ),
        // several tables: refused before any is dropped
        (
            "DROP TABLE IF EXISTS ice.ns.nope, ice.ns.g PURGE".to_string(),
            "purge table 'ns.g'",
        ),
    ] {
        let err = run(&lake.ctx, &q).await.expect_err(&q);
        assert_gc_refusal(&err, operation);
        assert_eq!(files_under(&dir), files, "{q} deleted files");
        let table = lake.catalog.load_table(&ident).await.expect(&q);
        assert_eq!(table.metadata_location(), location, "{q} committed");
    }
    assert_eq!(scalar_i64(&lake.ctx, snapshots).await, 3);

    // the Rust API refuses alike, with the kind
    let far = 32_503_680_000_000; // 3000-01-01
    let err = expire_snapshots(
        &lake.catalog,
        &ident,
        ExpireSnapshots::new().expire_older_than(far).retain_last(1),
        ExpireOptions::default(),
    )
    .await
    .expect_err("expire");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert_gc_refusal(&err.to_string(), "expire snapshots of table 'ns.g'");
    // the metadata-only action too (Java's RemoveSnapshots refuses in core)
    let table = lake.catalog.load_table(&ident).await.expect("load");
    let err = Transaction::new(Arc::clone(&lake.catalog), ident.clone(), table.clone())
        .add_action(ExpireSnapshots::new().expire_older_than(far).retain_last(1))
        .commit()
        .await
        .expect_err("transaction");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert_gc_refusal(&err.to_string(), "expire snapshots");
    let err = remove_orphan_files(lake.catalog.as_ref(), &ident, &RemoveOrphanFiles::new())
        .await
        .expect_err("orphans");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert_gc_refusal(&err.to_string(), "remove orphan files");
    assert_eq!(files_under(&dir), files, "the Rust API deleted files");
    assert_eq!(
        ok(&lake.ctx, "SELECT id FROM ice.ns.g").await,
        ok(&lake.ctx, "SELECT 2::BIGINT AS id").await
    );

    // only a boolean is taken (Java reads any other word as false)
    let err = run(
        &lake.ctx,
        "ALTER TABLE ice.ns.g SET TBLPROPERTIES ('gc.enabled'='nope')",
    )
    .await
    .expect_err("not a boolean");
    assert!(
        err.contains("gc.enabled") && err.contains("true or false"),
        "{err}"
    );

    // with GC enabled the same calls delete: the gate is the property
    ok(
        &lake.ctx,
        "ALTER TABLE ice.ns.g SET TBLPROPERTIES ('gc.enabled'='TRUE')",
    )
    .await;
    let out = ok(&lake.ctx, &format!("{expire})")).await;
    assert_eq!(scalar_i64(&lake.ctx, snapshots).await, 1, "{out}");
    let kept = files_under(&dir);
    assert!(
        files
            .difference(&kept)
            .any(|f| f.extension().is_some_and(|e| e == "parquet")),
        "the replaced data file is deleted: {out}"
    );
    ok(
        &lake.ctx,
        "CALL ice.system.remove_orphan_files(table => 'ns.g')",
    )
    .await;
    assert!(!orphan.exists());
    ok(&lake.ctx, "DROP TABLE ice.ns.g PURGE").await;
    assert!(!lake.catalog.table_exists(&ident).await.expect("exists"));
    assert!(
        !files_under(&dir)
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "parquet")),
        "purged"
    );
}

/// `Catalog::drop_table(ident, true)` on a table whose `gc.enabled` is false drops it
/// and deletes its manifests, manifest lists and metadata files, keeping the data and
/// delete files (Java's `dropTableData`); with GC enabled everything goes. SQL and
/// filesystem catalogs.
#[tokio::test]
async fn catalog_purge_keeps_data_files_of_gc_disabled_tables() {
    let lake = lake().await;
    let fs_dir = tempfile::tempdir().expect("tempdir");
    let fs: Arc<dyn Catalog> = Arc::new(
        FileSystemCatalog::new("fs", fs_dir.path().to_str().expect("utf-8")).expect("catalog"),
    );
    fs.create_namespace(&Namespace::parse("ns"), &Default::default())
        .await
        .expect("namespace");
    attach(&lake.ctx, "fs", Arc::clone(&fs)).await;
    for (catalog, cat, table_dir) in [
        (&lake.catalog, "ice", lake.warehouse.join("ns")),
        (&fs, "fs", fs_dir.path().join("ns")),
    ] {
        for gc in [false, true] {
            let name = format!("p_{gc}");
            ok(
                &lake.ctx,
                &format!(
                    "CREATE TABLE {cat}.ns.{name} (id BIGINT) \
                     TBLPROPERTIES ('gc.enabled'='{gc}', 'write.delete.mode'='merge-on-read')"
                ),
            )
            .await;
            ok(
                &lake.ctx,
                &format!("INSERT INTO {cat}.ns.{name} VALUES (1), (2)"),
            )
            .await;
            ok(
                &lake.ctx,
                &format!("DELETE FROM {cat}.ns.{name} WHERE id = 1"),
            )
            .await;
            let dir = table_dir.join(&name);
            let before = files_under(&dir);
            let is = |f: &PathBuf, ext: &str| f.extension().is_some_and(|e| e == ext);
            let content: BTreeSet<_> = before.iter().filter(|f| is(f, "parquet")).collect();
            // a data file and a position delete file
            assert_eq!(content.len(), 2, "{cat}: {before:?}");
            assert!(before.iter().any(|f| is(f, "avro")), "{cat}: {before:?}");
            let ident = TableIdent::parse(&format!("ns.{name}"));
            catalog.drop_table(&ident, true).await.expect("purge");
            assert!(
                !catalog.table_exists(&ident).await.expect("exists"),
                "{cat}"
            );
            let after = files_under(&dir);
            if gc {
                assert!(after.is_empty(), "{cat}: {after:?}");
            } else {
                assert_eq!(
                    after.iter().collect::<BTreeSet<_>>(),
                    content,
                    "{cat}: only the data and delete files stay"
                );
            }
        }
    }
}

/// `DROP TABLE … PURGE` also deletes the statistics and partition statistics files the
/// table's metadata lists (Java's `dropTableData`), with or without `gc.enabled`.
#[tokio::test]
async fn catalog_purge_deletes_statistics_files() {
    let lake = lake().await;
    let sql = icefloe::catalog::SqlCatalog::open_or_create("default", &lake.db).expect("catalog");
    for gc in [false, true] {
        let name = format!("s_{gc}");
        ok(
            &lake.ctx,
            &format!("CREATE TABLE ice.ns.{name} (id BIGINT) TBLPROPERTIES ('gc.enabled'='{gc}')"),
        )
        .await;
        ok(&lake.ctx, &format!("INSERT INTO ice.ns.{name} VALUES (1)")).await;
        let ident = TableIdent::parse(&format!("ns.{name}"));
        let table = lake.catalog.load_table(&ident).await.expect("load");
        let snapshot = table.metadata().current_snapshot_id.expect("snapshot");
        // a table whose metadata lists a statistics and a partition statistics file (as
        // Spark's `compute_table_stats` and `compute_partition_stats` leave it)
        let dir = lake.warehouse.join("ns").join(&name).join("metadata");
        let stats = dir.join("stats.puffin");
        let partition_stats = dir.join("partition-stats.parquet");
        std::fs::write(&stats, b"PFA1").expect("stats");
        std::fs::write(&partition_stats, b"PAR1").expect("partition stats");
        let location = table.metadata_location().trim_start_matches("file://");
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(location).expect("metadata")).expect("json");
        json["statistics"] = serde_json::json!([{
            "snapshot-id": snapshot,
            "statistics-path": format!("file://{}", stats.display()),
            "file-size-in-bytes": 4,
            "file-footer-size-in-bytes": 4,
            "blob-metadata": []
        }]);
        json["partition-statistics"] = serde_json::json!([{
            "snapshot-id": snapshot,
            "statistics-path": format!("file://{}", partition_stats.display()),
            "file-size-in-bytes": 4
        }]);
        let with_stats = dir.join("00009-with-stats.metadata.json");
        std::fs::write(&with_stats, serde_json::to_vec(&json).expect("json")).expect("write");
        lake.catalog.drop_table(&ident, false).await.expect("drop");
        sql.register_table(&ident, &format!("file://{}", with_stats.display()))
            .await
            .expect("register");
        let loaded = lake.catalog.load_table(&ident).await.expect("load");
        assert_eq!(loaded.metadata().statistics.len(), 1);
        lake.catalog.drop_table(&ident, true).await.expect("purge");
        assert!(!stats.exists(), "gc.enabled={gc}: statistics file left");
        assert!(
            !partition_stats.exists(),
            "gc.enabled={gc}: partition statistics file left"
        );
    }
}

/// A filesystem catalog's `DROP TABLE` without `PURGE` removes the table's directory, as
/// Java's `HadoopCatalog.dropTable` does (the directory is the table): the data directory
/// left behind listed as namespaces (`ns.t.data`, `ns.t.data.id=1`) and kept `DROP
/// SCHEMA ns` from running. A table whose `gc.enabled` is false keeps its data files.
#[tokio::test]
async fn filesystem_catalog_drop_removes_the_table_directory() {
    let lake = lake().await;
    let fs_dir = tempfile::tempdir().expect("tempdir");
    let fs: Arc<dyn Catalog> = Arc::new(
        FileSystemCatalog::new("fs", fs_dir.path().to_str().expect("utf-8")).expect("catalog"),
    );
    fs.create_namespace(&Namespace::parse("ns"), &Default::default())
        .await
        .expect("namespace");
    attach(&lake.ctx, "fs", Arc::clone(&fs)).await;
    for gc in [true, false] {
        ok(
            &lake.ctx,
            &format!(
                "CREATE TABLE fs.ns.t_{gc} (id BIGINT) PARTITIONED BY (id) \
                 TBLPROPERTIES ('gc.enabled'='{gc}')"
            ),
        )
        .await;
        ok(
            &lake.ctx,
            &format!("INSERT INTO fs.ns.t_{gc} VALUES (1), (2)"),
        )
        .await;
    }
    ok(&lake.ctx, "DROP TABLE fs.ns.t_true").await;
    assert!(!fs_dir.path().join("ns/t_true").exists());
    let namespaces: Vec<String> = fs
        .list_namespaces()
        .await
        .expect("list")
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert!(
        !namespaces.iter().any(|n| n.starts_with("ns.t_true")),
        "{namespaces:?}"
    );
    ok(&lake.ctx, "DROP TABLE fs.ns.t_false").await;
    let kept = files_under(&fs_dir.path().join("ns/t_false"));
    assert_eq!(
        kept.iter()
            .filter(|f| f.extension().is_some_and(|e| e == "parquet"))
            .count(),
        2,
        "{kept:?}"
    );
    assert!(
        kept.iter()
            .all(|f| !f.to_string_lossy().contains("/metadata/")),
        "{kept:?}"
    );
}
