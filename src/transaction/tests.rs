//! The commit path over real catalogs (SQLite, filesystem) in temp directories: data
//! files are manifest entries only here (no Parquet is read); the DataFusion insert tests
//! read rows back.

use std::collections::HashMap;
use std::sync::Arc;

use super::*;
use crate::catalog::{
    Catalog, FileSystemCatalog, Namespace, SqlCatalog, StaticCatalog, TableCreation, TableIdent,
};
use crate::expr::{BinaryOp, Predicate};
use crate::scan::TableScan;
use crate::spec::{
    DataContentType, DataFile, Literal, ManifestStatus, NestedField, PartitionField, PartitionSpec,
    PrimitiveType, Schema, Transform, Type,
};
use crate::write::empty_data_file;

fn creation() -> TableCreation {
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "p", Type::Primitive(PrimitiveType::Int)),
        ],
    );
    let mut c = TableCreation::new(schema);
    c.partition_spec = PartitionSpec {
        spec_id: 0,
        fields: vec![PartitionField {
            source_id: 2,
            field_id: Some(1000),
            name: "p".into(),
            transform: Transform::Identity,
        }],
    };
    c
}

fn file(table: &crate::table::Table, name: &str, p: i32, rows: i64) -> DataFile {
    let mut f = empty_data_file(
        &format!("{}/data/p={p}/{name}.parquet", table.metadata().location),
        DataContentType::Data,
    );
    f.partition = vec![Some(Literal::Int(p))];
    f.record_count = rows;
    f.file_size_in_bytes = 100;
    f
}

async fn sql_catalog(dir: &std::path::Path) -> Arc<dyn Catalog> {
    let c = SqlCatalog::open_or_create("test", dir.join("catalog.db")).unwrap();
    c.create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .unwrap();
    Arc::new(c)
}

async fn live_files(table: &crate::table::Table) -> Vec<(String, i64)> {
    let scan = TableScan::new(table.clone(), table.metadata().current_snapshot().cloned());
    let mut out: Vec<(String, i64)> = scan
        .plan_files()
        .await
        .unwrap()
        .tasks
        .iter()
        .map(|t| {
            let f = t.data_file();
            (
                f.file_path
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                f.record_count,
            )
        })
        .collect();
    out.sort();
    out
}

async fn append(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    name: &str,
    p: i32,
    rows: i64,
) -> crate::table::Table {
    let base = catalog.load_table(ident).await.unwrap();
    let f = file(&base, name, p, rows);
    Transaction::new(Arc::clone(catalog), ident.clone(), base)
        .add_action(AppendFiles::new(0, vec![f]).unwrap())
        .commit()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_and_overwrites_through_the_sql_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    let created = catalog.create_table(&ident, creation()).await.unwrap();
    assert!(created
        .metadata_location()
        .contains("/ns/t/metadata/00000-"));
    let err = catalog.create_table(&ident, creation()).await.unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::AlreadyExists, "{err}");

    let t1 = append(&catalog, &ident, "a", 1, 10).await;
    let t2 = append(&catalog, &ident, "b", 2, 5).await;
    assert_eq!(
        live_files(&t2).await,
        [("a.parquet".into(), 10), ("b.parquet".into(), 5)]
    );
    let m = t2.metadata();
    assert_eq!(m.last_sequence_number, 2);
    assert_eq!(m.snapshots.len(), 2);
    let s2 = m.current_snapshot().unwrap();
    assert_eq!(s2.parent_snapshot_id, t1.metadata().current_snapshot_id);
    assert_eq!(s2.summary["operation"], "append");
    assert_eq!(s2.summary["total-records"], "15");
    assert_eq!(s2.summary["total-data-files"], "2");
    assert_eq!(m.metadata_log.len(), 2);
    assert!(
        t2.metadata_location().contains("/00002-"),
        "{}",
        t2.metadata_location()
    );

    // overwrite of partition p = 1 by a filter: a.parquet goes, c.parquet comes
    let base = catalog.load_table(&ident).await.unwrap();
    let c = file(&base, "c", 1, 3);
    let t3 = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(
            OverwriteFiles::new(base.metadata().current_snapshot_id)
                .overwrite_by_row_filter(Predicate::col_binary(BinaryOp::Eq, "p", Literal::Int(1)))
                .add_files(0, vec![c])
                .unwrap(),
        )
        .commit()
        .await
        .unwrap();
    assert_eq!(
        live_files(&t3).await,
        [("b.parquet".into(), 5), ("c.parquet".into(), 3)]
    );
    let s3 = t3.metadata().current_snapshot().unwrap();
    assert_eq!(s3.summary["operation"], "overwrite");
    assert_eq!(s3.summary["deleted-records"], "10");
    assert_eq!(s3.summary["total-records"], "8");
    // the removed file is a DELETED entry with its sequence number kept
    let manifests = snapshot_producer::SnapshotProducer::manifests_of(&t3, Some(s3))
        .await
        .unwrap();
    let mut deleted = vec![];
    for mf in &manifests {
        for e in snapshot_producer::SnapshotProducer::entries_of(&t3, mf)
            .await
            .unwrap()
        {
            if e.status == ManifestStatus::Deleted {
                deleted.push((
                    e.data_file.file_path.clone(),
                    e.data_sequence_number,
                    e.snapshot_id,
                ));
            }
        }
    }
    assert_eq!(deleted.len(), 1);
    assert!(deleted[0].0.ends_with("a.parquet"));
    assert_eq!(deleted[0].1, 1);
    assert_eq!(deleted[0].2, s3.snapshot_id);

    // a filter that cuts through a partition's rows is refused, nothing committed
    let base = catalog.load_table(&ident).await.unwrap();
    let err = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(
            OverwriteFiles::new(base.metadata().current_snapshot_id).overwrite_by_row_filter(
                Predicate::col_binary(BinaryOp::Lt, "id", Literal::Long(3)),
            ),
        )
        .commit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::Unsupported, "{err}");
    assert_eq!(
        catalog.metadata_location(&ident).await.unwrap(),
        t3.metadata_location()
    );

    // whole-table overwrite
    let base = catalog.load_table(&ident).await.unwrap();
    let d = file(&base, "d", 7, 1);
    let t4 = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(
            OverwriteFiles::new(base.metadata().current_snapshot_id)
                .overwrite_by_row_filter(Predicate::AlwaysTrue)
                .add_files(0, vec![d])
                .unwrap(),
        )
        .commit()
        .await
        .unwrap();
    assert_eq!(live_files(&t4).await, [("d.parquet".into(), 1)]);
    assert_eq!(
        t4.metadata().current_snapshot().unwrap().summary["total-records"],
        "1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_partitions_and_serializable_conflicts() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    catalog.create_table(&ident, creation()).await.unwrap();
    append(&catalog, &ident, "a1", 1, 1).await;
    append(&catalog, &ident, "a2", 2, 1).await;
    let start = catalog.load_table(&ident).await.unwrap();

    // a concurrent append into partition 2 after the overwrite began
    append(&catalog, &ident, "late2", 2, 1).await;

    // replacing partition 1 does not conflict with it: retried and committed
    let r1 = file(&start, "r1", 1, 4);
    let t = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
        .add_action(
            OverwriteFiles::new(start.metadata().current_snapshot_id)
                .replace_partitions()
                .add_files(0, vec![r1])
                .unwrap(),
        )
        .commit()
        .await
        .unwrap();
    assert_eq!(
        live_files(&t).await,
        [
            ("a2.parquet".into(), 1),
            ("late2.parquet".into(), 1),
            ("r1.parquet".into(), 4)
        ]
    );

    // replacing partition 2 from the old start conflicts with late2: validation fails
    let r2 = file(&start, "r2", 2, 4);
    let err = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
        .add_action(
            OverwriteFiles::new(start.metadata().current_snapshot_id)
                .replace_partitions()
                .add_files(0, vec![r2.clone()])
                .unwrap(),
        )
        .commit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::ValidationFailed, "{err}");
    assert!(err.to_string().contains("late2.parquet"), "{err}");

    // under snapshot isolation it goes through
    let t = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
        .add_action(
            OverwriteFiles::new(start.metadata().current_snapshot_id)
                .replace_partitions()
                .with_isolation_level(IsolationLevel::Snapshot)
                .add_files(0, vec![r2])
                .unwrap(),
        )
        .commit()
        .await
        .unwrap();
    assert_eq!(
        live_files(&t).await,
        [("r1.parquet".into(), 4), ("r2.parquet".into(), 4)]
    );
    // the failed attempt left none of its manifests or manifest lists behind
    let metadata_dir = dir.path().join("ns/t/metadata");
    let referenced: std::collections::HashSet<String> = {
        let mut set = std::collections::HashSet::new();
        for s in &t.metadata().snapshots {
            set.insert(s.manifest_list.clone().unwrap());
            for mf in snapshot_producer::SnapshotProducer::manifests_of(&t, Some(s))
                .await
                .unwrap()
            {
                set.insert(mf.manifest_path);
            }
        }
        set.into_iter()
            .map(|l| l.rsplit('/').next().unwrap().to_string())
            .collect()
    };
    for entry in std::fs::read_dir(&metadata_dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".avro") {
            assert!(
                referenced.contains(&name),
                "orphan {name} left by a failed commit"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appenders_all_land_once() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    let mut props = HashMap::new();
    props.insert("commit.retry.num-retries".to_string(), "50".to_string());
    props.insert("commit.retry.min-wait-ms".to_string(), "5".to_string());
    props.insert("commit.retry.max-wait-ms".to_string(), "50".to_string());
    let mut c = creation();
    c.properties = props;
    catalog.create_table(&ident, c).await.unwrap();
    let writers = 8;
    let mut tasks = vec![];
    for i in 0..writers {
        // each writer has its own connection, as separate processes would
        let db = dir.path().join("catalog.db");
        let ident = ident.clone();
        tasks.push(tokio::spawn(async move {
            let catalog: Arc<dyn Catalog> = Arc::new(SqlCatalog::open("test", db).unwrap());
            append(&catalog, &ident, &format!("w{i}"), i, i64::from(i) + 1).await;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let table = catalog.load_table(&ident).await.unwrap();
    let files = live_files(&table).await;
    assert_eq!(files.len(), writers as usize);
    let m = table.metadata();
    assert_eq!(m.snapshots.len(), writers as usize);
    let expected: i64 = (1..=i64::from(writers)).sum();
    assert_eq!(
        m.current_snapshot().unwrap().summary["total-records"],
        expected.to_string()
    );
    // a linear chain with strictly increasing sequence numbers
    let mut cursor = m.current_snapshot();
    let mut seqs = vec![];
    while let Some(s) = cursor {
        seqs.push(s.sequence_number);
        cursor = s.parent_snapshot_id.and_then(|p| m.snapshot_by_id(p));
    }
    assert_eq!(seqs, (1..=i64::from(writers)).rev().collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_catalog_commits_with_version_files() {
    let dir = tempfile::tempdir().unwrap();
    let catalog: Arc<dyn Catalog> =
        Arc::new(FileSystemCatalog::new("fs", &dir.path().to_string_lossy()).unwrap());
    catalog
        .create_namespace(&Namespace::parse("db"), &HashMap::new())
        .await
        .unwrap();
    let ident = TableIdent::parse("db.t");
    catalog.create_table(&ident, creation()).await.unwrap();
    let t = append(&catalog, &ident, "a", 1, 2).await;
    assert!(t
        .metadata_location()
        .ends_with("/db/t/metadata/v2.metadata.json"));
    let hint = std::fs::read_to_string(dir.path().join("db/t/metadata/version-hint.text")).unwrap();
    assert_eq!(hint, "2");
    // a stale hint still finds the newest version
    std::fs::write(dir.path().join("db/t/metadata/version-hint.text"), "1").unwrap();
    let t = append(&catalog, &ident, "b", 1, 2).await;
    assert!(t.metadata_location().ends_with("/v3.metadata.json"));
    assert_eq!(live_files(&t).await.len(), 2);
    // two writers from the same base: the second one's v3 exists → conflict → retry
    let base = catalog.load_table(&ident).await.unwrap();
    let f1 = file(&base, "c1", 1, 1);
    let f2 = file(&base, "c2", 1, 1);
    Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(AppendFiles::new(0, vec![f1]).unwrap())
        .commit()
        .await
        .unwrap();
    let t = Transaction::new(Arc::clone(&catalog), ident.clone(), base)
        .add_action(AppendFiles::new(0, vec![f2]).unwrap())
        .commit()
        .await
        .unwrap();
    assert!(t.metadata_location().ends_with("/v5.metadata.json"));
    assert_eq!(live_files(&t).await.len(), 4);
    // a hint that cannot be written (here a directory in its place) fails nothing: v6 is
    // the commit, and the table loads at it by listing
    let hint = dir.path().join("db/t/metadata/version-hint.text");
    std::fs::remove_file(&hint).unwrap();
    std::fs::create_dir(&hint).unwrap();
    let t = append(&catalog, &ident, "d", 1, 2).await;
    assert!(t.metadata_location().ends_with("/v6.metadata.json"));
    let loaded = catalog.load_table(&ident).await.unwrap();
    assert_eq!(loaded.metadata_location(), t.metadata_location());
    assert_eq!(live_files(&loaded).await.len(), 5);
    std::fs::remove_dir(&hint).unwrap();
    // no rename: the directory is the name
    let err = catalog
        .rename_table(&ident, &TableIdent::parse("db.u"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::Unsupported);
    assert!(
        err.to_string()
            .contains("filesystem (Hadoop) catalog cannot rename"),
        "{err}"
    );
    catalog.drop_table(&ident, true).await.unwrap();
    assert!(!catalog.table_exists(&ident).await.unwrap());
}

/// A commit that loses its race to a drop and re-create (or a rename and a create) of
/// the table's name is not retried against the new table: its uuid differs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_never_lands_in_another_table_of_the_same_name() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    for replace in ["drop", "rename"] {
        catalog.create_table(&ident, creation()).await.unwrap();
        let base = append(&catalog, &ident, "a", 1, 1).await;
        match replace {
            "drop" => catalog.drop_table(&ident, false).await.unwrap(),
            _ => catalog
                .rename_table(&ident, &TableIdent::parse("ns.old"))
                .await
                .unwrap(),
        }
        // a renamed table keeps its directory, which the catalog refuses to a new table:
        // the new one of the old name gets its own
        let mut again = creation();
        if replace == "rename" {
            again.location = Some(dir.path().join("t-again").to_string_lossy().into_owned());
        }
        let other = catalog.create_table(&ident, again).await.unwrap();
        let f = file(&base, "late", 1, 1);
        let err = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
            .add_action(AppendFiles::new(0, vec![f]).unwrap())
            .commit()
            .await
            .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::ValidationFailed, "{err}");
        let msg = err.to_string();
        assert!(msg.contains("'ns.t'") && msg.contains("replaced"), "{msg}");
        let now = catalog.load_table(&ident).await.unwrap();
        assert_eq!(
            now.metadata_location(),
            other.metadata_location(),
            "{replace}"
        );
        assert!(now.metadata().current_snapshot().is_none(), "{replace}");
        if replace == "rename" {
            // the renamed table keeps its one file
            let old = catalog
                .load_table(&TableIdent::parse("ns.old"))
                .await
                .unwrap();
            assert_eq!(live_files(&old).await, [("a.parquet".to_string(), 1)]);
            catalog
                .drop_table(&TableIdent::parse("ns.old"), false)
                .await
                .unwrap();
        }
        catalog.drop_table(&ident, false).await.unwrap();
    }
}

#[tokio::test]
async fn static_catalogs_refuse_writes() {
    let catalog = StaticCatalog::new("s").with_table(TableIdent::parse("t"), "/nowhere");
    let err = catalog
        .create_table(&TableIdent::parse("u"), creation())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::Unsupported);
    assert!(err.to_string().contains("read-only"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_and_rename_in_the_sql_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    catalog.create_table(&ident, creation()).await.unwrap();
    let t = append(&catalog, &ident, "a", 1, 1).await;
    let to = TableIdent::parse("ns.u");
    catalog.rename_table(&ident, &to).await.unwrap();
    assert!(!catalog.table_exists(&ident).await.unwrap());
    assert_eq!(
        catalog.metadata_location(&to).await.unwrap(),
        t.metadata_location()
    );
    catalog.drop_table(&to, true).await.unwrap();
    assert!(!catalog.table_exists(&to).await.unwrap());
    let list = t
        .metadata()
        .current_snapshot()
        .unwrap()
        .manifest_list
        .clone()
        .unwrap();
    assert!(
        !t.file_io().exists(&list).await.unwrap(),
        "purge removes manifest lists"
    );
    assert!(!t.file_io().exists(t.metadata_location()).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_merge_at_the_min_count() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    let mut c = creation();
    c.properties
        .insert("commit.manifest.min-count-to-merge".into(), "4".into());
    catalog.create_table(&ident, c).await.unwrap();
    let mut t = None;
    for i in 0..6 {
        t = Some(append(&catalog, &ident, &format!("f{i}"), i % 2, 1).await);
    }
    let t = t.unwrap();
    let current = t.metadata().current_snapshot().unwrap();
    let manifests = snapshot_producer::SnapshotProducer::manifests_of(&t, Some(current))
        .await
        .unwrap();
    // appends 1..3 keep one manifest each; the 4th merges the 4 into one; 5 and 6 add one
    // each (3 < 4: no merge)
    assert_eq!(manifests.len(), 3, "{manifests:?}");
    assert_eq!(live_files(&t).await.len(), 6);
    // sequence numbers survive the merge
    let mut seqs = vec![];
    for mf in &manifests {
        for e in snapshot_producer::SnapshotProducer::entries_of(&t, mf)
            .await
            .unwrap()
        {
            seqs.push((
                e.data_file
                    .file_path
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                e.data_sequence_number,
                format!("{:?}", e.status),
            ));
        }
    }
    seqs.sort();
    // f0..f2 were carried into the merged manifest as EXISTING; f3 was added by the
    // merging snapshot, f4 and f5 by the two after it
    let expected: Vec<(String, i64, String)> = (0..6)
        .map(|i| {
            let status = if i >= 3 { "Added" } else { "Existing" };
            (
                format!("f{i}.parquet"),
                i64::from(i) + 1,
                status.to_string(),
            )
        })
        .collect();
    assert_eq!(seqs, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_tables_take_appends_overwrites_no_deletes_v3_tables_append_with_row_lineage() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    // a v1 table: no sequence numbers anywhere, v1 manifests and manifest lists
    let v1 = TableIdent::parse("ns.v1");
    let mut c = creation();
    c.properties.insert("format-version".into(), "1".into());
    let base = catalog.create_table(&v1, c).await.unwrap();
    assert_eq!(
        base.metadata().format_version,
        crate::spec::FormatVersion::V1
    );
    let t = Transaction::new(Arc::clone(&catalog), v1.clone(), base.clone())
        .add_action(AppendFiles::new(0, vec![file(&base, "a", 1, 3)]).unwrap())
        .commit()
        .await
        .unwrap();
    Transaction::new(Arc::clone(&catalog), v1.clone(), t.clone())
        .add_action(AppendFiles::new(0, vec![file(&t, "b", 2, 4)]).unwrap())
        .commit()
        .await
        .unwrap();
    let t = catalog.load_table(&v1).await.unwrap();
    let m = t.metadata();
    assert_eq!(m.format_version, crate::spec::FormatVersion::V1);
    assert_eq!(m.last_sequence_number, 0);
    assert_eq!(m.snapshots.len(), 2);
    assert!(m.snapshots.iter().all(|s| s.sequence_number == 0));
    // the metadata JSON is v1's: `schema` and `partition-spec`, no sequence numbers
    let json: serde_json::Value =
        serde_json::from_slice(&t.file_io().read(t.metadata_location()).await.unwrap()).unwrap();
    assert_eq!(json["format-version"], 1);
    assert_eq!(json["schema"]["fields"][0]["name"], "id");
    assert_eq!(json["partition-spec"][0]["field-id"], 1000);
    assert!(json.get("last-sequence-number").is_none(), "{json}");
    assert!(json["snapshots"][1].get("sequence-number").is_none());
    assert_eq!(
        live_files(&t).await,
        vec![("a.parquet".into(), 3), ("b.parquet".into(), 4)]
    );
    // the manifests read back with the snapshot that added each file
    let current = m.current_snapshot().unwrap();
    let manifests = snapshot_producer::SnapshotProducer::manifests_of(&t, Some(current))
        .await
        .unwrap();
    assert_eq!(manifests.len(), 2);
    let mut added_by = vec![];
    for mf in &manifests {
        assert_eq!(mf.sequence_number, 0);
        assert_eq!(mf.added_files_count, Some(1));
        for e in snapshot_producer::SnapshotProducer::entries_of(&t, mf)
            .await
            .unwrap()
        {
            added_by.push((e.data_file.record_count, e.snapshot_id));
        }
    }
    added_by.sort();
    assert_eq!(
        added_by,
        vec![
            (3, m.snapshots[0].snapshot_id),
            (4, m.snapshots[1].snapshot_id)
        ]
    );
    // an overwrite (copy-on-write) replaces partition 1
    let t = Transaction::new(Arc::clone(&catalog), v1.clone(), t.clone())
        .add_action(
            OverwriteFiles::new(t.metadata().current_snapshot_id)
                .delete_file(file(&t, "a", 1, 3).file_path)
                .add_files(0, vec![file(&t, "c", 1, 2)])
                .unwrap(),
        )
        .commit()
        .await
        .unwrap();
    assert_eq!(
        live_files(&t).await,
        vec![("b.parquet".into(), 4), ("c.parquet".into(), 2)]
    );
    assert_eq!(t.metadata().last_sequence_number, 0);
    // v1 has no delete files: a row delta adding one is refused before anything is written
    let mut deletes = file(&t, "d", 1, 1);
    deletes.content = DataContentType::PositionDeletes;
    let err = Transaction::new(Arc::clone(&catalog), v1.clone(), t.clone())
        .add_action(
            RowDelta::new(t.metadata().current_snapshot_id)
                .add_deletes(0, vec![deletes])
                .unwrap(),
        )
        .commit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::Unsupported, "{err}");
    assert!(err.to_string().contains("format-version 1"), "{err}");
    // a v3 table takes appends: the snapshot gets the first row ids
    let ident = TableIdent::parse("ns.v3");
    let mut c = creation();
    c.properties.insert("format-version".into(), "3".into());
    let base = catalog.create_table(&ident, c).await.unwrap();
    let f = file(&base, "a", 1, 1);
    let t = Transaction::new(Arc::clone(&catalog), ident.clone(), base)
        .add_action(AppendFiles::new(0, vec![f]).unwrap())
        .commit()
        .await
        .unwrap();
    let s = t.metadata().current_snapshot().unwrap();
    assert_eq!((s.first_row_id, s.added_rows), (Some(0), Some(1)));
    assert_eq!(t.metadata().next_row_id, Some(1));
}

/// A catalog whose commits land but whose answer is lost (`lose_answer`), or that fails
/// before committing: the SQLite catalog underneath is real.
#[derive(Debug)]
struct LostAnswer {
    inner: Arc<dyn Catalog>,
    lands: bool,
}

#[async_trait]
impl Catalog for LostAnswer {
    fn name(&self) -> &str {
        self.inner.name()
    }
    async fn list_namespaces(&self) -> Result<Vec<Namespace>> {
        self.inner.list_namespaces().await
    }
    async fn list_tables(&self, namespace: &Namespace) -> Result<Vec<TableIdent>> {
        self.inner.list_tables(namespace).await
    }
    async fn load_table(&self, ident: &TableIdent) -> Result<crate::table::Table> {
        self.inner.load_table(ident).await
    }
    async fn commit_table(
        &self,
        ident: &TableIdent,
        commit: &TableCommit,
    ) -> Result<crate::table::Table> {
        if self.lands {
            self.inner.commit_table(ident, commit).await?;
        }
        Err(Error::new(
            ErrorKind::CommitStateUnknown,
            "the catalog answered 504 Gateway Timeout",
        ))
    }
}

/// An unknown commit outcome is checked by reloading, never retried: a commit that
/// landed is a success (its snapshot appears once), one that did not stays an error
/// and adds nothing.
#[tokio::test]
async fn unknown_commit_state_is_checked_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let sql = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    sql.create_table(&ident, creation()).await.unwrap();
    for lands in [true, false] {
        let catalog: Arc<dyn Catalog> = Arc::new(LostAnswer {
            inner: Arc::clone(&sql),
            lands,
        });
        let base = catalog.load_table(&ident).await.unwrap();
        let before = base.metadata().snapshots.len();
        let name = format!("f{lands}");
        let result = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
            .add_action(AppendFiles::new(0, vec![file(&base, &name, 1, 5)]).unwrap())
            .commit()
            .await;
        let now = sql.load_table(&ident).await.unwrap();
        if lands {
            let table = result.unwrap();
            assert_eq!(table.metadata_location(), now.metadata_location());
            assert_eq!(now.metadata().snapshots.len(), before + 1);
            assert!(live_files(&now)
                .await
                .contains(&(format!("{name}.parquet"), 5)));
        } else {
            let err = result.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::CommitStateUnknown, "{err}");
            assert!(err.to_string().contains("not retried"), "{err}");
            assert_eq!(now.metadata().snapshots.len(), before);
        }
    }
}

/// A data file `name` of an unpartitioned table: 10 rows, with `id` bounds `lo..=hi` when
/// given (`None`: no column metrics at all).
fn ids_file(table: &crate::table::Table, name: &str, ids: Option<(i64, i64)>) -> DataFile {
    let mut f = empty_data_file(
        &format!("{}/data/{name}.parquet", table.metadata().location),
        DataContentType::Data,
    );
    f.record_count = 10;
    f.file_size_in_bytes = 100;
    if let Some((lo, hi)) = ids {
        let bytes = |v| crate::write::bounds::literal_to_bytes(&Literal::Long(v));
        f.value_counts.insert(1, 10);
        f.null_value_counts.insert(1, 0);
        f.lower_bounds.insert(1, bytes(lo));
        f.upper_bounds.insert(1, bytes(hi));
    }
    f
}

/// An unpartitioned table `ns.<name>` holding `a` (ids 1..=2); its state after that
/// append is where the row-level changes below start.
async fn unpartitioned_with_a(
    catalog: &Arc<dyn Catalog>,
    name: &str,
) -> (TableIdent, crate::table::Table) {
    let ident = TableIdent::parse(&format!("ns.{name}"));
    let mut c = creation();
    c.partition_spec = PartitionSpec::unpartitioned();
    let base = catalog.create_table(&ident, c).await.unwrap();
    let a = ids_file(&base, "a", Some((1, 2)));
    let t = Transaction::new(Arc::clone(catalog), ident.clone(), base)
        .add_action(AppendFiles::new(0, vec![a]).unwrap())
        .commit()
        .await
        .unwrap();
    (ident, t)
}

/// What a merge-on-read `UPDATE … WHERE id = 1` read at `start` commits: a position
/// delete of `a`'s row and a data file with its new version.
fn update_id_1(start: &crate::table::Table, level: IsolationLevel) -> RowDelta {
    let a = ids_file(start, "a", Some((1, 2)));
    let mut deletes = empty_data_file(
        &format!("{}/data/a-deletes.parquet", start.metadata().location),
        DataContentType::PositionDeletes,
    );
    deletes.record_count = 1;
    deletes.file_size_in_bytes = 10;
    deletes.referenced_data_file = Some(a.file_path.clone());
    let mut new_rows = ids_file(start, "a-updated", Some((1, 1)));
    new_rows.record_count = 1;
    RowDelta::new(start.metadata().current_snapshot_id)
        .with_isolation_level(level)
        .conflict_detection_filter(Predicate::col_binary(BinaryOp::Eq, "id", Literal::Long(1)))
        .add_rows(0, vec![new_rows])
        .unwrap()
        .add_deletes(0, vec![deletes])
        .unwrap()
        .validate_data_file(0, a)
}

/// A v2 row delta racing an upgrade to v3 (which no requirement asserts): the catalog
/// refuses its snapshot against the v3 table; that is a lost race, so the retry reloads
/// the table and the row delta fails saying another commit upgraded the table while it
/// ran (not the metadata builder's invariant, nor a format version its writer never
/// chose), committing nothing. The same row delta started on the v3 table is refused
/// as adding a position delete file to a v3 table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_delta_racing_an_upgrade_to_v3_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let (ident, start) = unpartitioned_with_a(&catalog, "up").await;
    let upgraded = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
        .add_action(UpdateProperties::new().set("format-version", "3").unwrap())
        .commit()
        .await
        .unwrap();
    let err = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
        .add_action(update_id_1(&start, IsolationLevel::Serializable))
        .commit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ValidationFailed, "{err}");
    assert!(
        err.to_string().contains(
            "the table was upgraded from format version 2 to 3 by another commit while this \
             row delta ran, and its position delete file '"
        ) && err
            .to_string()
            .contains("is of format version 2 (v3 takes deletion vectors) (run the write again)"),
        "{err}"
    );
    let now = catalog.load_table(&ident).await.unwrap();
    assert_eq!(now.metadata_location(), upgraded.metadata_location());
    // started on the v3 table: the caller's mistake, said as such
    let err = Transaction::new(Arc::clone(&catalog), ident.clone(), now.clone())
        .add_action(update_id_1(&now, IsolationLevel::Serializable))
        .commit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    assert!(
        err.to_string().contains("to a format-version 3 table"),
        "{err}"
    );
    assert!(!err.to_string().contains("upgraded"), "{err}");
}

/// Serializable isolation asks a concurrently added data file's column metrics, as Java's
/// `validateAddedDataFiles` does (`ManifestGroup.filterData`): on an unpartitioned table,
/// a file whose `id` bounds exclude `id = 1` is no conflict; one whose bounds include it,
/// or one without metrics, is. Snapshot isolation checks neither. The same holds for a
/// copy-on-write overwrite with a conflict-detection filter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serializable_conflicts_ask_the_added_files_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let cases = [
        ("far", Some((100, 100)), false),
        ("near", Some((0, 5)), true),
        ("bare", None, true),
    ];
    for (i, (added, ids, conflicts)) in cases.into_iter().enumerate() {
        for level in [IsolationLevel::Serializable, IsolationLevel::Snapshot] {
            let name = format!("t{i}_{level:?}").to_lowercase();
            let (ident, start) = unpartitioned_with_a(&catalog, &name).await;
            // an INSERT commits after the UPDATE read the table
            let late = ids_file(&start, added, ids);
            let concurrent = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
                .add_action(AppendFiles::new(0, vec![late]).unwrap())
                .commit()
                .await
                .unwrap();
            let late_id = concurrent.metadata().current_snapshot_id.unwrap();
            let result = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
                .add_action(update_id_1(&start, level))
                .commit()
                .await;
            if conflicts && level == IsolationLevel::Serializable {
                let err = result.unwrap_err();
                assert_eq!(err.kind(), crate::ErrorKind::ValidationFailed, "{err}");
                let text = err.to_string();
                assert!(
                    text.contains(&format!("{added}.parquet"))
                        && text.contains(&format!("snapshot {late_id}"))
                        && text.contains("serializable"),
                    "{name}: {text}"
                );
                // nothing committed
                assert_eq!(
                    catalog.metadata_location(&ident).await.unwrap(),
                    concurrent.metadata_location()
                );
            } else {
                let t = result.unwrap_or_else(|e| panic!("{name}: {e}"));
                let mut expected = vec![
                    ("a-updated.parquet".to_string(), 1),
                    ("a.parquet".to_string(), 10),
                    (format!("{added}.parquet"), 10),
                ];
                expected.sort();
                assert_eq!(live_files(&t).await, expected, "{name}");
                let summary = &t.metadata().current_snapshot().unwrap().summary;
                assert_eq!(summary["added-position-deletes"], "1", "{name}");
                assert_eq!(summary["total-records"], "21", "{name}");
            }

            // copy-on-write: the overwrite of `a` with its rewritten rows
            let (ident, start) = unpartitioned_with_a(&catalog, &format!("{name}_cow")).await;
            let late = ids_file(&start, added, ids);
            let concurrent = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
                .add_action(AppendFiles::new(0, vec![late]).unwrap())
                .commit()
                .await
                .unwrap();
            let late_id = concurrent.metadata().current_snapshot_id.unwrap();
            let rewritten = ids_file(&start, "a-rewritten", Some((1, 2)));
            let result = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
                .add_action(
                    OverwriteFiles::new(start.metadata().current_snapshot_id)
                        .with_isolation_level(level)
                        .conflict_detection_filter(Predicate::col_binary(
                            BinaryOp::Eq,
                            "id",
                            Literal::Long(1),
                        ))
                        .delete_file(ids_file(&start, "a", None).file_path)
                        .add_files(0, vec![rewritten])
                        .unwrap(),
                )
                .commit()
                .await;
            if conflicts && level == IsolationLevel::Serializable {
                let err = result.unwrap_err();
                assert_eq!(err.kind(), crate::ErrorKind::ValidationFailed, "{err}");
                assert!(
                    err.to_string().contains(&format!("snapshot {late_id}")),
                    "{name}: {err}"
                );
            } else {
                let t = result.unwrap_or_else(|e| panic!("{name} (copy-on-write): {e}"));
                let mut expected = vec![
                    ("a-rewritten.parquet".to_string(), 10),
                    (format!("{added}.parquet"), 10),
                ];
                expected.sort();
                assert_eq!(live_files(&t).await, expected, "{name}");
            }
        }
    }
}

/// An equality delete file added concurrently conflicts with a row delta only when its
/// statistics allow a key in a data file the row delta changes (Java
/// `DeleteFileIndex.canContainEqDeletesForFile`), at either isolation level; one without
/// statistics always does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_equality_deletes_conflict_by_their_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    for (i, (ids, conflicts)) in [
        (Some((100, 200)), false),
        (Some((2, 2)), true),
        (None, true),
    ]
    .into_iter()
    .enumerate()
    {
        for level in [IsolationLevel::Serializable, IsolationLevel::Snapshot] {
            let name = format!("eq{i}_{level:?}").to_lowercase();
            let (ident, start) = unpartitioned_with_a(&catalog, &name).await;
            let mut eq = ids_file(&start, "eq-deletes", ids);
            eq.content = DataContentType::EqualityDeletes;
            eq.equality_ids = vec![1];
            eq.record_count = 2;
            let concurrent = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
                .add_action(
                    RowDelta::new(start.metadata().current_snapshot_id)
                        .add_deletes(0, vec![eq])
                        .unwrap(),
                )
                .commit()
                .await
                .unwrap();
            let eq_id = concurrent.metadata().current_snapshot_id.unwrap();
            let result = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
                .add_action(update_id_1(&start, level))
                .commit()
                .await;
            if conflicts {
                let err = result.unwrap_err();
                assert_eq!(err.kind(), crate::ErrorKind::ValidationFailed, "{err}");
                let text = err.to_string();
                assert!(
                    text.contains("conflicting delete file")
                        && text.contains("eq-deletes.parquet")
                        && text.contains(&format!("snapshot {eq_id}")),
                    "{name}: {text}"
                );
            } else {
                let t = result.unwrap_or_else(|e| panic!("{name}: {e}"));
                let summary = &t.metadata().current_snapshot().unwrap().summary;
                assert_eq!(summary["total-equality-deletes"], "2", "{name}");
                assert_eq!(summary["total-position-deletes"], "1", "{name}");
            }
        }
    }
}

/// Tester 6's D3: an append whose files were written before a `REPLACE TABLE` that kept a
/// column's field id under another type would make `main` unreadable; it fails instead,
/// naming the column, and leaves the replaced table as it was. A change the files still
/// read under (a new optional column) is retried and lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_racing_an_incompatible_schema_change_fails_a_compatible_one_lands() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    catalog.create_table(&ident, creation()).await.unwrap();
    let base = append(&catalog, &ident, "a", 1, 1).await;

    // compatible: another writer adds a column after our files were written
    Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(UpdateSchema::new().add_column(
            &[],
            "c",
            Type::Primitive(PrimitiveType::String),
            None,
            None,
        ))
        .commit()
        .await
        .unwrap();
    let landed = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(AppendFiles::new(0, vec![file(&base, "b", 1, 2)]).unwrap())
        .commit()
        .await
        .unwrap();
    assert_eq!(
        live_files(&landed).await,
        [("a.parquet".to_string(), 1), ("b.parquet".to_string(), 2)]
    );

    // incompatible: `id` keeps field id 1 as a string, or becomes required
    let replacements = [
        (
            NestedField::optional(1, "id", Type::Primitive(PrimitiveType::String)),
            "column 'id' (field id 1) is long in the files and string now",
        ),
        (
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            "column 'id' (field id 1) is optional in the files and required now",
        ),
    ];
    for (id, expected) in replacements {
        let before = catalog.load_table(&ident).await.unwrap();
        let schema = Schema::new(
            0,
            vec![
                id,
                NestedField::optional(2, "p", Type::Primitive(PrimitiveType::Int)),
            ],
        );
        let spec = creation().partition_spec;
        let replaced = Transaction::new(Arc::clone(&catalog), ident.clone(), before.clone())
            .add_action(ReplaceTable::new(schema, spec, HashMap::new()))
            .commit()
            .await
            .unwrap();
        for action in ["append", "overwrite"] {
            let late = file(&before, "late", 1, 1);
            let txn = Transaction::new(Arc::clone(&catalog), ident.clone(), before.clone());
            let txn = match action {
                "append" => txn.add_action(AppendFiles::new(0, vec![late]).unwrap()),
                _ => txn.add_action(
                    OverwriteFiles::new(before.metadata().current_snapshot_id)
                        .with_isolation_level(IsolationLevel::Snapshot)
                        .add_files(0, vec![late])
                        .unwrap(),
                ),
            };
            let err = txn.commit().await.unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::ValidationFailed, "{err}");
            assert!(err.to_string().contains(expected), "{action}: {err}");
            let now = catalog.load_table(&ident).await.unwrap();
            assert_eq!(now.metadata_location(), replaced.metadata_location());
        }
    }
}

/// Tester 7's D4: two `add_files` of the same files at once both landed, and every row
/// read twice. With `validate_files_not_present` the append that loses the race sees the
/// other's files at its retry and fails, naming them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_validating_its_files_fails_when_a_concurrent_one_added_them() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    catalog.create_table(&ident, creation()).await.unwrap();
    let base = append(&catalog, &ident, "a", 1, 1).await;
    let same = || {
        AppendFiles::new(0, vec![file(&base, "shared", 1, 5)])
            .unwrap()
            .validate_files_not_present()
    };
    let first = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(same())
        .commit()
        .await
        .unwrap();
    let err = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(same())
        .commit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::ValidationFailed, "{err}");
    assert!(
        err.to_string()
            .contains("1 of the files to add are already in snapshot")
            && err.to_string().contains("shared.parquet"),
        "{err}"
    );
    let now = catalog.load_table(&ident).await.unwrap();
    assert_eq!(now.metadata_location(), first.metadata_location());
    assert_eq!(
        live_files(&now).await,
        [
            ("a.parquet".to_string(), 1),
            ("shared.parquet".to_string(), 5)
        ]
    );
}

/// When the retries run out, the error names what the commit went to: the table for
/// `main` (unchanged), the branch and the table for another branch. A conflict check
/// on a branch names the branch too, and says its snapshot, not the table's current
/// one, lost the starting snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_of_a_branch_commit_name_the_branch() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    let mut c = creation();
    c.properties
        .insert("commit.retry.num-retries".into(), "0".into());
    catalog.create_table(&ident, c).await.unwrap();
    append(&catalog, &ident, "a", 1, 1).await;
    let base = catalog.load_table(&ident).await.unwrap();
    Transaction::new(Arc::clone(&catalog), ident.clone(), base)
        .add_action(ManageSnapshots::new().create_branch(
            "dev",
            None,
            RefRetention::default(),
            RefExists::Fail,
        ))
        .commit()
        .await
        .unwrap();
    for (branch, expected) in [
        (None, "commit to table 'ns.t' gave up after 1 attempt: "),
        (
            Some("dev"),
            "commit to branch 'dev' of table 'ns.t' gave up after 1 attempt: ",
        ),
    ] {
        let base = catalog.load_table(&ident).await.unwrap();
        let mut action = AppendFiles::new(0, vec![file(&base, "late", 1, 1)]).unwrap();
        if let Some(b) = branch {
            action = action.to_branch(b);
        }
        let late = Transaction::new(Arc::clone(&catalog), ident.clone(), base).add_action(action);
        // another writer commits first; no retry is allowed
        append(&catalog, &ident, "first", 1, 1).await;
        let err = late.commit().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::CommitConflict, "{err}");
        assert!(err.to_string().contains(expected), "{branch:?}: {err}");
    }
    // a row delta on `dev` whose starting snapshot is not on the branch (main's)
    let table = catalog.load_table(&ident).await.unwrap();
    let main_head = table.metadata().current_snapshot_id;
    let stale = |branch: Option<&str>| {
        let mut delta = RowDelta::new(main_head)
            .with_isolation_level(IsolationLevel::Serializable)
            .validate_data_file(0, file(&table, "a", 1, 1));
        if let Some(b) = branch {
            delta = delta.to_branch(b);
        }
        Transaction::new(Arc::clone(&catalog), ident.clone(), table.clone()).add_action(delta)
    };
    // on main the same check passes (its head descends from the start)
    stale(None).commit().await.unwrap();
    let err = stale(Some("dev")).commit().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ValidationFailed, "{err}");
    assert!(
        err.to_string().contains(&format!(
            "cannot check the row delta on branch 'dev' for conflicts: starting snapshot {} \
             is no longer an ancestor of the snapshot of branch 'dev'",
            main_head.unwrap_or_default()
        )),
        "{err}"
    );
}

/// A rewrite (compaction) of a v2 table racing an upgrade to v3: its files do not keep
/// row lineage, which v3 rewrites must; the error says the table was upgraded by another
/// commit while it ran, and nothing commits. Started on the v3 table, the same rewrite
/// is refused as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_racing_an_upgrade_to_v3_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let (ident, start) = unpartitioned_with_a(&catalog, "rw").await;
    let rewrite = |table: &crate::table::Table| {
        RewriteFiles::new(table.metadata().current_snapshot_id)
            .delete_data_file(0, ids_file(table, "a", Some((1, 2))))
            .unwrap()
            .add_data_files(0, vec![ids_file(table, "a-compacted", Some((1, 2)))])
            .unwrap()
    };
    let late = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
        .add_action(rewrite(&start));
    let upgraded = Transaction::new(Arc::clone(&catalog), ident.clone(), start.clone())
        .add_action(UpdateProperties::new().set("format-version", "3").unwrap())
        .commit()
        .await
        .unwrap();
    let err = late.commit().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ValidationFailed, "{err}");
    assert!(
        err.to_string().contains(
            "the table was upgraded from format version 2 to 3 by another commit while this \
             rewrite ran, and its files do not keep the rows' _row_id"
        ),
        "{err}"
    );
    let now = catalog.load_table(&ident).await.unwrap();
    assert_eq!(now.metadata_location(), upgraded.metadata_location());
    let err = Transaction::new(Arc::clone(&catalog), ident.clone(), now.clone())
        .add_action(rewrite(&now))
        .commit()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported, "{err}");
    assert!(
        err.to_string()
            .contains("rewriting data files of a format-version 3 table"),
        "{err}"
    );
}

/// The manifests of a snapshot: (added, existing, deleted files, written by `snapshot`).
async fn manifest_counts(
    t: &crate::table::Table,
    snapshot: &crate::spec::Snapshot,
) -> Vec<(i32, i32, i32, bool)> {
    let mut out: Vec<_> = snapshot_producer::SnapshotProducer::manifests_of(t, Some(snapshot))
        .await
        .unwrap()
        .iter()
        .map(|m| {
            (
                m.added_files_count.unwrap_or(-1),
                m.existing_files_count.unwrap_or(-1),
                m.deleted_files_count.unwrap_or(-1),
                m.added_snapshot_id == snapshot.snapshot_id,
            )
        })
        .collect();
    out.sort();
    out
}

/// A manifest holding only deleted entries stays in the snapshot that deleted the files and
/// is left out of the next commit's manifest list (tester 8's D3: it was carried into every
/// later snapshot, outliving the snapshots its entries describe), as Java's
/// `MergingSnapshotProducer` leaves it out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_of_deleted_entries_only_are_dropped_by_the_next_commit() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    let mut c = creation();
    // one manifest per commit: no merging hides what is carried forward
    c.properties
        .insert("commit.manifest-merge.enabled".into(), "false".into());
    catalog.create_table(&ident, c).await.unwrap();
    append(&catalog, &ident, "a", 1, 10).await;
    let base = append(&catalog, &ident, "b", 2, 5).await;
    // a copy-on-write delete of a.parquet: its manifest is rewritten with a deleted entry
    let t = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
        .add_action(
            OverwriteFiles::new(base.metadata().current_snapshot_id)
                .delete_file(file(&base, "a", 1, 10).file_path),
        )
        .commit()
        .await
        .unwrap();
    let deleting = t.metadata().current_snapshot().unwrap().clone();
    assert_eq!(
        manifest_counts(&t, &deleting).await,
        vec![(0, 0, 1, true), (1, 0, 0, false)]
    );
    let t = append(&catalog, &ident, "c", 3, 7).await;
    let next = t.metadata().current_snapshot().unwrap().clone();
    assert_eq!(
        manifest_counts(&t, &next).await,
        vec![(1, 0, 0, false), (1, 0, 0, true)]
    );
    assert_eq!(
        live_files(&t).await,
        vec![("b.parquet".into(), 5), ("c.parquet".into(), 7)]
    );
    // the deleting snapshot still lists its manifest (time travel, incremental reads)
    assert_eq!(
        manifest_counts(&t, &deleting).await,
        vec![(0, 0, 1, true), (1, 0, 0, false)]
    );
}

/// Removing specs or schemas requires the default spec or current schema and every
/// branch but `main` to be where they were (Java `UpdateRequirements`): a writer on
/// another branch could still write with what is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_specs_and_schemas_requires_them_unchanged_and_branches_unmoved() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    catalog.create_table(&ident, creation()).await.unwrap();
    let t = append(&catalog, &ident, "a", 1, 10).await;
    let head = t.metadata().current_snapshot_id;
    let t = Transaction::new(Arc::clone(&catalog), ident.clone(), t)
        .add_action(ManageSnapshots::new().create_branch(
            "dev",
            None,
            RefRetention::default(),
            RefExists::Fail,
        ))
        .commit()
        .await
        .unwrap();
    let m = t.metadata();
    for (update, held) in [
        (
            TableUpdate::RemoveSchemas {
                schema_ids: vec![7],
            },
            TableRequirement::AssertCurrentSchemaId {
                current_schema_id: m.current_schema_id,
            },
        ),
        (
            TableUpdate::RemovePartitionSpecs { spec_ids: vec![7] },
            TableRequirement::AssertDefaultSpecId {
                default_spec_id: m.default_spec_id,
            },
        ),
    ] {
        let required = requirements_for(&t, &[update]);
        assert!(required.contains(&held), "{required:?}");
        assert!(
            required.contains(&TableRequirement::AssertRefSnapshotId {
                reference: "dev".into(),
                snapshot_id: head,
            }),
            "{required:?}"
        );
        assert!(
            !required.iter().any(|r| matches!(
                r,
                TableRequirement::AssertRefSnapshotId { reference, .. } if reference == "main"
            )),
            "{required:?}"
        );
    }
}

/// The caller's own mistakes are refused naming them, before anything is committed:
/// a negative count, a partition value of the wrong type, an equality delete naming no
/// field, a spec the table never had, a path never in the table (Java's
/// `DataFiles.Builder` checks, "Missing required files to delete").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_caller_describes_wrongly_are_refused_naming_the_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    let base = catalog.create_table(&ident, creation()).await.unwrap();
    async fn commit(
        catalog: &Arc<dyn Catalog>,
        ident: &TableIdent,
        action: impl TransactionAction + 'static,
    ) -> crate::Error {
        let base = catalog.load_table(ident).await.unwrap();
        Transaction::new(Arc::clone(catalog), ident.clone(), base)
            .add_action(action)
            .commit()
            .await
            .unwrap_err()
    }

    let mut negative = file(&base, "neg", 1, 5);
    negative.record_count = -5;
    let e = commit(
        &catalog,
        &ident,
        AppendFiles::new(0, vec![negative]).unwrap(),
    )
    .await;
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
    assert!(
        e.to_string().contains("neg.parquet': record_count is -5"),
        "{e}"
    );

    let mut long = file(&base, "long", 1, 5);
    long.partition = vec![Some(Literal::Long(5))];
    let e = commit(&catalog, &ident, AppendFiles::new(0, vec![long]).unwrap()).await;
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
    assert!(
        e.to_string()
            .contains("partition field 'p' of spec 0 is of type int, but the file's value Long(5) is of type long"),
        "{e}"
    );
    assert!(e.to_string().len() < 400, "{e}");

    let e = commit(
        &catalog,
        &ident,
        AppendFiles::new(42, vec![file(&base, "s", 1, 5)]).unwrap(),
    )
    .await;
    assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
    assert!(
        e.to_string()
            .contains("there is no partition spec 42 in the table at")
            && e.to_string().contains("(its specs: 0)"),
        "{e}"
    );
    assert!(!e.to_string().contains("another commit"), "{e}");

    let e = commit(
        &catalog,
        &ident,
        OverwriteFiles::new(None).delete_file("/no/such/file.parquet"),
    )
    .await;
    assert_eq!(e.kind(), crate::ErrorKind::ValidationFailed, "{e}");
    assert!(
        e.to_string().contains(
            "missing required files to delete: '/no/such/file.parquet' is not a live file in the table"
        ),
        "{e}"
    );
    assert!(!e.to_string().contains("concurrent"), "{e}");

    for (ids, needle) in [
        (
            vec![99],
            "names equality field id 99, which no schema of the table",
        ),
        (vec![], "has no equality_ids"),
    ] {
        let mut eq = empty_data_file(
            &format!("{}/data/eq.parquet", base.metadata().location),
            DataContentType::EqualityDeletes,
        );
        eq.partition = vec![Some(Literal::Int(1))];
        eq.record_count = 1;
        eq.file_size_in_bytes = 10;
        eq.equality_ids = ids;
        let e = commit(
            &catalog,
            &ident,
            RowDelta::new(None).add_deletes(0, vec![eq]).unwrap(),
        )
        .await;
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
    // nothing was committed
    let now = catalog.load_table(&ident).await.unwrap();
    assert!(now.metadata().snapshots.is_empty());
}

/// `bucket[0]` / `truncate[0]` through the Rust partition-spec API are refused as the
/// SQL path refuses them (one rule: `Transform::check_argument`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_fields_of_zero_buckets_or_width_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sql_catalog(dir.path()).await;
    let ident = TableIdent::parse("ns.t");
    catalog.create_table(&ident, creation()).await.unwrap();
    for (t, needle) in [
        (
            Transform::Bucket(0),
            "invalid transform bucket[0]: the number of buckets must be above 0",
        ),
        (
            Transform::Truncate(0),
            "invalid transform truncate[0]: the width must be above 0",
        ),
    ] {
        let base = catalog.load_table(&ident).await.unwrap();
        let e = Transaction::new(Arc::clone(&catalog), ident.clone(), base)
            .add_action(UpdatePartitionSpec::new().add_field(PartitionTerm::new(t, "id"), None))
            .commit()
            .await
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains(needle), "{e}");
    }
}

/// The root namespace and empty levels cannot be created, in every catalog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_root_namespace_cannot_be_created() {
    let dir = tempfile::tempdir().unwrap();
    let sql: Arc<dyn Catalog> = sql_catalog(dir.path()).await;
    std::fs::create_dir(dir.path().join("wh")).unwrap();
    let fs: Arc<dyn Catalog> =
        Arc::new(FileSystemCatalog::new("fs", dir.path().join("wh").to_str().unwrap()).unwrap());
    for c in [sql, fs] {
        for ns in [
            Namespace::root(),
            Namespace::new(vec!["a".into(), String::new()]),
        ] {
            let e = c.create_namespace(&ns, &HashMap::new()).await.unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument, "{e}");
            assert!(e.to_string().contains("cannot create"), "{e}");
        }
        let listed = c.list_namespaces().await.unwrap();
        assert!(listed.iter().all(|n| !n.is_root()), "{listed:?}");
    }
}

/// Tester M64's fault 1: a schema change retried after losing a race was applied by name
/// to the refreshed schema, so a `DROP COLUMN id` planned before a concurrent commit
/// renamed `id` to `old_id` and added a new `id` dropped the new column (and its values,
/// for good). The retry now fails naming the column and commits nothing, for schema,
/// partition spec and sort order changes; a retry over a concurrent change to another
/// column still lands on top of it. The filesystem catalog retries every commit that
/// lost a race; the SQL catalog those whose requirements failed.
#[tokio::test]
async fn a_retried_change_whose_column_names_now_mean_other_fields_fails() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn Catalog> =
        Arc::new(FileSystemCatalog::new("fs", &dir.path().join("fs").to_string_lossy()).unwrap());
    fs.create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .unwrap();
    for catalog in [sql_catalog(dir.path()).await, fs] {
        let ident = TableIdent::parse("ns.t");
        catalog.create_table(&ident, creation()).await.unwrap();
        let base = catalog.load_table(&ident).await.unwrap();
        let column = |name: &str| vec![name.to_string()];
        let field_names = |t: &crate::table::Table| -> Vec<(String, i32)> {
            let s = t.metadata().current_schema();
            s.fields
                .fields
                .iter()
                .map(|f| (f.name.clone(), f.id))
                .collect()
        };

        // another commit (planned later, landed first) renames `id` and adds a new `id`
        let other = Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone())
            .add_action(
                UpdateSchema::new()
                    .rename_column(&column("id"), "old_id")
                    .add_column(
                        &[],
                        "id",
                        Type::Primitive(PrimitiveType::String),
                        None,
                        None,
                    ),
            )
            .add_action(
                UpdatePartitionSpec::new()
                    .add_field(PartitionTerm::new(Transform::Bucket(2), "old_id"), None),
            )
            .commit()
            .await
            .unwrap();
        assert_eq!(
            field_names(&other),
            [("old_id".into(), 1), ("p".into(), 2), ("id".into(), 3)]
        );
        let txn = || Transaction::new(Arc::clone(&catalog), ident.clone(), base.clone());
        let id = PartitionTerm::new(Transform::Identity, "id");
        let planned = [
            txn().add_action(UpdateSchema::new().delete_column(&column("id"))),
            txn().add_action(UpdateSchema::new().rename_column(&column("id"), "x")),
            txn().add_action(
                UpdateSchema::new().update_column_doc(&column("id"), Some("the key".into())),
            ),
            txn().add_action(
                UpdateSchema::new().move_column(&column("id"), ColumnPosition::After("p".into())),
            ),
            txn().add_action(
                UpdatePartitionSpec::new()
                    .add_field(PartitionTerm::new(Transform::Bucket(4), "id"), None),
            ),
        ];
        for (i, planned) in planned.into_iter().enumerate() {
            let err = planned.commit().await.unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::ValidationFailed, "{i}: {err}");
            assert!(
                err.to_string()
                    .contains("column 'id' was changed by a concurrent commit since this")
                    && err
                        .to_string()
                        .contains("(it named field id 1, now field id 3)"),
                "{i}: {err}"
            );
            let now = catalog.load_table(&ident).await.unwrap();
            assert_eq!(now.metadata_location(), other.metadata_location());
        }
        // a sort order is retried only by the filesystem catalog (no requirement of the
        // SQL catalog fails): there it fails the same way; on SQL it sorts by field 1
        let sorted = txn()
            .add_action(ReplaceSortOrder::new().sort_by(id.clone(), SortDirection::Asc, None))
            .commit()
            .await;
        match sorted {
            Ok(t) => {
                let m = t.metadata();
                let order = m
                    .sort_orders
                    .iter()
                    .find(|o| o.order_id == m.default_sort_order_id)
                    .expect("order");
                assert_eq!(order.fields[0].source_id, 1, "{}", catalog.name());
            }
            Err(e) => assert!(
                e.to_string().contains(
                    "column 'id' was changed by a concurrent commit since this sort order change"
                ),
                "{e}"
            ),
        }

        // a change to another column is built on: `p` still means field 2
        let landed = txn()
            .add_action(UpdateSchema::new().rename_column(&column("p"), "q"))
            .commit()
            .await
            .unwrap();
        assert_eq!(
            field_names(&landed),
            [("old_id".into(), 1), ("q".into(), 2), ("id".into(), 3)]
        );
    }
}

/// Every `.avro` file (manifest or manifest list) under `dir`, sorted.
fn avro_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "avro") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Tester O64 F1, the whole kind: a `RewriteManifests` whose retry finds its work done by
/// a concurrent rewrite commits nothing of its own and removes the manifests and manifest
/// list its first attempt wrote (they stayed) — alone (the retry has no update at all) and
/// beside an action that still commits (its snapshot is then not in the committed table).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_with_nothing_left_to_do_removes_what_earlier_attempts_wrote() {
    for with_properties in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let catalog = sql_catalog(dir.path()).await;
        let ident = TableIdent::parse("ns.t");
        let mut c = creation();
        c.properties
            .insert("commit.retry.min-wait-ms".into(), "1".into());
        catalog.create_table(&ident, c).await.unwrap();
        for name in ["a", "b", "c"] {
            append(&catalog, &ident, name, 1, 1).await;
        }
        let stale = catalog.load_table(&ident).await.unwrap();
        let mut late = Transaction::new(Arc::clone(&catalog), ident.clone(), stale)
            .add_action(RewriteManifests::new());
        if with_properties {
            late = late.add_action(UpdateProperties::new().set("k", "v").unwrap());
        }
        // another rewrite clusters the three manifests first
        let base = catalog.load_table(&ident).await.unwrap();
        let winner = Transaction::new(Arc::clone(&catalog), ident.clone(), base)
            .add_action(RewriteManifests::new())
            .commit()
            .await
            .unwrap();
        let before = avro_files(dir.path());
        let committed = late.commit().await.unwrap();
        assert_eq!(avro_files(dir.path()), before, "{with_properties}");
        let m = committed.metadata();
        assert_eq!(m.current_snapshot_id, winner.metadata().current_snapshot_id);
        assert_eq!(m.snapshots.len(), 4, "{with_properties}");
        assert_eq!(
            m.properties.get("k").map(String::as_str),
            with_properties.then_some("v")
        );
        assert_eq!(live_files(&committed).await.len(), 3);
    }
}
