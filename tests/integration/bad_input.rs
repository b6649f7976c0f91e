//! Bad input gives a clear error naming the file, never a panic or rows.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::prelude::SessionContext;
use icefloe::{ErrorKind, IcebergTableProvider, Table};

use crate::fixtures::{copy_table, files_with_suffix, run_sql, testdata};

fn sample_table() -> PathBuf {
    testdata("sample_table")
}

/// A private copy of the sample table to break.
fn copy_sample() -> tempfile::TempDir {
    copy_table("sample_table")
}

async fn count_rows(location: &str) -> Result<i64, String> {
    scalar_i64(location, "SELECT count(*) FROM t").await
}

/// Run `sql` (one Int64 value) on the table at `location` registered as `t`.
async fn scalar_i64(location: &str, sql: &str) -> Result<i64, String> {
    let batches = run_sql(location, sql).await?;
    let col = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<datafusion::arrow::array::Int64Array>()
        .expect("an Int64 result");
    Ok(col.value(0))
}

#[tokio::test]
async fn sample_table_reads() {
    assert_eq!(count_rows(sample_table().to_str().unwrap()).await, Ok(61));
}

#[tokio::test]
async fn moved_table_reads_through_remap() {
    // the copy lives at a temp path; its metadata records /tmp/iceberg-corpus/...
    let dir = copy_sample();
    assert_eq!(count_rows(dir.path().to_str().unwrap()).await, Ok(61));
}

/// A table moved into a directory under its old location (`t` → `t/moved`): the
/// moved-table rule maps `t/…` to `t/moved/…`, whose result starts with the rule's
/// prefix again, so a location must be remapped exactly once (data files were remapped
/// when planned and once more when opened, and read from `t/moved/moved/…`).
#[tokio::test]
async fn table_moved_under_its_old_location_reads_each_file_once_remapped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let location = table_moved_under_its_old_location(dir.path());
    assert_eq!(
        scalar_i64(&location, "SELECT sum(id) FROM t").await,
        Ok(55),
        "every row read from the moved copy"
    );
}

/// Orphan files of a table moved under its old location: a listed file is where the
/// file is (remapped already), so it is compared with the referenced files and
/// deleted without remapping it again (every live file was an orphan, at
/// `t/moved/moved/…`, and the real orphan was never deleted).
#[tokio::test]
async fn orphan_files_of_a_table_moved_under_its_old_location() {
    use icefloe::maintenance::{remove_orphan_files, RemoveOrphanFiles};

    let dir = tempfile::tempdir().expect("tempdir");
    let location = table_moved_under_its_old_location(dir.path());
    let stray = std::path::Path::new(&location).join("stray.parquet");
    std::fs::write(&stray, b"not referenced").expect("write");
    let ident = icefloe::catalog::TableIdent::parse("moved.t");
    let catalog =
        icefloe::catalog::StaticCatalog::new("moved").with_table(ident.clone(), &location);
    let options = RemoveOrphanFiles::new()
        .older_than(chrono::Utc::now().timestamp_millis() + 60_000)
        .allow_recent(true);
    let stray_location = format!("file://{}", stray.display());
    let dry = remove_orphan_files(&catalog, &ident, &options.clone().dry_run(true))
        .await
        .expect("dry run");
    // the stray file, and v1.metadata.json (LocalTableWriter keeps no metadata log, so
    // the current v2 does not reference it); no file the table reads
    assert!(dry.contains(&stray_location), "{dry:?}");
    assert!(
        dry.iter()
            .all(|o| *o == stray_location || o.ends_with("/metadata/v1.metadata.json")),
        "{dry:?}"
    );
    let removed = remove_orphan_files(&catalog, &ident, &options)
        .await
        .expect("remove orphans");
    assert_eq!(removed, dry);
    assert!(!stray.exists(), "the orphan is deleted");
    assert_eq!(
        scalar_i64(&location, "SELECT sum(id) FROM t").await,
        Ok(55),
        "no live file deleted"
    );
}

/// A table of one file (ids 1 to 10) written at `<dir>/t`, then moved to
/// `<dir>/t/moved`, a directory under its old location; the moved table's location.
fn table_moved_under_its_old_location(dir: &std::path::Path) -> String {
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
    use datafusion::arrow::record_batch::RecordBatch;
    use icefloe::spec::{NestedField, PartitionSpec, PrimitiveType, Schema, Type};
    use icefloe::write::LocalTableWriter;

    use crate::deletes::{field_with_id, write_parquet_file};

    let table = dir.join("t");
    std::fs::create_dir_all(&table).expect("mkdir");
    let data = RecordBatch::try_new(
        Arc::new(ArrowSchema::new(vec![field_with_id(
            "id",
            DataType::Int64,
            1,
        )])),
        vec![Arc::new(Int64Array::from_iter_values(1..=10))],
    )
    .expect("batch");
    let data_path = table.join("data.parquet");
    write_parquet_file(&data_path, &data, 1024);
    let schema = Schema::new(
        0,
        vec![NestedField::required(
            1,
            "id",
            Type::Primitive(PrimitiveType::Long),
        )],
    );
    let mut w = LocalTableWriter::create(
        &table,
        schema,
        PartitionSpec::unpartitioned(),
        Default::default(),
    )
    .expect("create");
    w.add_parquet_files(&[data_path]).expect("add");
    drop(w);
    let aside = dir.join("aside");
    std::fs::rename(&table, &aside).expect("move aside");
    std::fs::create_dir_all(&table).expect("mkdir");
    let moved = table.join("moved");
    std::fs::rename(&aside, &moved).expect("move under");
    moved.to_str().expect("utf-8").to_string()
}

/// Point the copy's metadata JSON files at a recorded location inside the copy's own
/// temp dir that is never created, so a test of the recorded paths does not depend on
/// whether `/tmp/iceberg-corpus/<table>` happens to exist on this machine.
fn record_absent_location(dir: &std::path::Path) -> String {
    let absent = format!("{}/never-created/spark_v2_day_partitioned", dir.display());
    for file in files_with_suffix(&dir.join("metadata"), ".metadata.json") {
        let text = std::fs::read_to_string(&file).unwrap();
        let text = text
            .replace(
                "file:///tmp/iceberg-corpus/spark_v2_day_partitioned",
                &absent,
            )
            .replace("file:/tmp/iceberg-corpus/spark_v2_day_partitioned", &absent);
        std::fs::write(&file, text).unwrap();
    }
    absent
}

#[tokio::test]
async fn moved_paths_can_be_disabled() {
    let dir = copy_sample();
    let recorded = record_absent_location(dir.path());
    let options = icefloe::OpenOptions {
        allow_moved_paths: false,
        ..Default::default()
    };
    let table = Table::open_with(dir.path().to_str().unwrap(), options)
        .await
        .unwrap();
    // the manifest list is looked up at the recorded location, which does not exist
    let provider = IcebergTableProvider::try_new(table).unwrap();
    let err = provider.table_scan().plan_files().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(
        err.to_string()
            .contains(&format!("{recorded}/metadata/snap-")),
        "{err}"
    );
}

#[tokio::test]
async fn explicit_remap_option() {
    let dir = copy_sample();
    let options = icefloe::OpenOptions {
        allow_moved_paths: false,
        remap: vec![(
            "file:/tmp/iceberg-corpus/spark_v2_day_partitioned".into(),
            dir.path().to_str().unwrap().into(),
        )],
        ..Default::default()
    };
    let table = Table::open_with(dir.path().to_str().unwrap(), options)
        .await
        .unwrap();
    let plan = IcebergTableProvider::try_new(table)
        .unwrap()
        .table_scan()
        .plan_files()
        .await
        .unwrap();
    assert_eq!(plan.tasks.len(), 5);
}

#[tokio::test]
async fn truncated_metadata_json_names_the_file() {
    let dir = copy_sample();
    let file = dir.path().join("metadata/v4.metadata.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, &text[..text.len() / 2]).unwrap();
    let err = Table::open(file.to_str().unwrap()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    assert!(err.to_string().contains("v4.metadata.json"), "{err}");
    assert!(
        err.to_string().contains("malformed table metadata JSON"),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_format_version_is_unsupported() {
    let dir = copy_sample();
    let file = dir.path().join("metadata/v4.metadata.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("\"format-version\":2", "\"format-version\":4"),
    )
    .unwrap();
    let err = Table::open(dir.path().to_str().unwrap()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert!(err.to_string().contains("format version 4"), "{err}");
    assert!(err.to_string().contains("v4.metadata.json"), "{err}");
}

#[tokio::test]
async fn missing_manifest_names_it() {
    let dir = copy_sample();
    let manifests: Vec<_> = std::fs::read_dir(dir.path().join("metadata"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.ends_with("-m0.avro") || n.ends_with("-m1.avro")
        })
        .collect();
    assert!(!manifests.is_empty());
    for m in &manifests {
        std::fs::remove_file(m.path()).unwrap();
    }
    // (an unfiltered COUNT(*) is answered from the manifest list: the bounds of `id`
    // are in the manifests)
    let err = scalar_i64(dir.path().to_str().unwrap(), "SELECT max(id) FROM t")
        .await
        .unwrap_err();
    // the missing manifest, and the manifest list naming it (the recorded path may be
    // what is wrong)
    assert!(
        err.contains("does not exist") && err.contains("-m"),
        "{err}"
    );
    assert!(
        err.contains("manifest listed in '") && err.contains("/metadata/snap-"),
        "{err}"
    );
}

#[tokio::test]
async fn missing_manifest_list_names_it_and_the_metadata_file() {
    let dir = copy_sample();
    let lists: Vec<_> = std::fs::read_dir(dir.path().join("metadata"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("snap-"))
        .collect();
    assert!(!lists.is_empty());
    for l in &lists {
        std::fs::remove_file(l.path()).unwrap();
    }
    let location = dir.path().to_str().unwrap();
    let table = Table::open(location).await.unwrap();
    let metadata_file = table
        .metadata_location()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let err = IcebergTableProvider::try_new(table)
        .unwrap()
        .table_scan()
        .plan_files()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let err = err.to_string();
    assert!(
        err.contains("does not exist") && err.contains("/metadata/snap-"),
        "{err}"
    );
    assert!(
        err.contains("manifest list recorded in table metadata '") && err.contains(&metadata_file),
        "{err}"
    );
    // the same through SQL (COUNT(*) is answered from the manifest list)
    let err = count_rows(location).await.unwrap_err();
    assert!(
        err.contains("/metadata/snap-") && err.contains(&metadata_file),
        "{err}"
    );
}

#[tokio::test]
async fn corrupt_manifest_list_names_it() {
    let dir = copy_sample();
    for e in std::fs::read_dir(dir.path().join("metadata"))
        .unwrap()
        .filter_map(|e| e.ok())
    {
        if e.file_name().to_string_lossy().starts_with("snap-") {
            std::fs::write(e.path(), b"Obj\x01garbage").unwrap();
        }
    }
    let err = count_rows(dir.path().to_str().unwrap()).await.unwrap_err();
    assert!(err.contains("snap-") && err.contains("Avro"), "{err}");
}

#[tokio::test]
async fn missing_data_file_fails_the_query() {
    let dir = copy_sample();
    let data = dir.path().join("data/ts_day=2024-03-02");
    std::fs::remove_dir_all(&data).unwrap();
    let location = dir.path().to_str().unwrap();
    // COUNT(*) is answered from the manifests' record counts without opening files ...
    assert_eq!(count_rows(location).await, Ok(61));
    // ... but reading values opens every file and names the one that is gone
    let err = scalar_i64(location, "SELECT sum(id) FROM t")
        .await
        .unwrap_err();
    assert!(err.contains("ts_day=2024-03-02"), "{err}");
}

#[tokio::test]
async fn table_without_snapshot_is_empty_with_schema() {
    // v1.metadata.json is the table as created, before any insert
    let file = sample_table().join("metadata/v1.metadata.json");
    let provider = IcebergTableProvider::open(file.to_str().unwrap())
        .await
        .unwrap();
    assert!(provider.snapshot().is_none());
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(provider)).unwrap();
    let df = ctx.sql("SELECT id, ts, v FROM t").await.unwrap();
    assert_eq!(df.schema().fields().len(), 3);
    let batches = df.collect().await.unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 0);
}

/// gzip a file in place under a new name (`write.metadata.compression-codec=gzip`).
fn gzip_to(from: &std::path::Path, to: &std::path::Path) {
    use std::io::Write;
    let bytes = std::fs::read(from).expect("read");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&bytes).expect("gzip");
    std::fs::write(to, enc.finish().expect("gzip")).expect("write");
    std::fs::remove_file(from).expect("remove");
}

#[tokio::test]
async fn gzip_metadata_opens_by_path_and_by_directory() {
    let dir = copy_sample();
    let meta = dir.path().join("metadata");
    // Hadoop naming with the codec in the name: found through the hint
    gzip_to(
        &meta.join("v4.metadata.json"),
        &meta.join("v4.gz.metadata.json"),
    );
    let root = dir.path().to_str().unwrap();
    assert_eq!(count_rows(root).await, Ok(61));
    let by_path = meta.join("v4.gz.metadata.json");
    assert_eq!(count_rows(by_path.to_str().unwrap()).await, Ok(61));
    // the older `*.metadata.json.gz` form, by path and as the newest file without a hint
    let old_form = meta.join("v4.metadata.json.gz");
    std::fs::rename(&by_path, &old_form).expect("rename");
    assert_eq!(count_rows(old_form.to_str().unwrap()).await, Ok(61));
    std::fs::remove_file(meta.join("version-hint.text")).expect("remove hint");
    assert_eq!(count_rows(root).await, Ok(61));
}

/// Tester T69 F8: a metadata file that the hint names (or a newer `v<N>` one, probed past
/// a stale hint) replaced by a directory is named a directory, not a missing file ("names
/// version '4', but its metadata file is missing"); InvalidData, as the table exists.
#[tokio::test]
async fn a_hinted_metadata_file_replaced_by_a_directory_is_named_a_directory() {
    for (hint, directory) in [("4", "v4.metadata.json"), ("3", "v4.metadata.json")] {
        let dir = copy_sample();
        let meta = dir.path().join("metadata");
        std::fs::write(meta.join("version-hint.text"), hint).expect("hint");
        let path = meta.join(directory);
        std::fs::remove_file(&path).expect("remove the metadata");
        std::fs::create_dir(&path).expect("a directory in its place");
        let err = Table::open(dir.path().to_str().unwrap())
            .await
            .expect_err("a directory is no metadata file");
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
        let text = err.to_string();
        assert!(
            text.contains(&format!("names version '{hint}')"))
                && text.contains(&format!("{directory}' is a directory, not a file")),
            "{text}"
        );
        assert!(!text.contains("missing"), "{text}");
    }
}

/// An empty or garbage `version-hint.text` (or version 0) is passed over for a listing of
/// `metadata/` (as Iceberg Java's `HadoopTableOperations`); with no metadata file there
/// either, the error names the hint and what it held. A hint naming a version whose file
/// is missing is an error, not a fallback to an older version (Java: "Metadata file for
/// version … is missing"): reading the older one would answer with its rows, and the next
/// commit would write the lost version's file again. With no version at all there, it is
/// the same not-found as any directory without metadata.
#[tokio::test]
async fn an_unusable_hint_falls_back_to_listing_the_metadata_directory() {
    let dir = copy_sample();
    let meta = dir.path().join("metadata");
    let root = dir.path().to_str().unwrap();
    for hint in ["", "\n", "garbage", "0"] {
        std::fs::write(meta.join("version-hint.text"), hint).expect("hint");
        assert_eq!(count_rows(root).await, Ok(61), "hint {hint:?}");
    }
    for hint in ["9", "v9.metadata.json"] {
        std::fs::write(meta.join("version-hint.text"), hint).expect("hint");
        let err = Table::open(root)
            .await
            .expect_err("a lost version is an error");
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
        let text = err.to_string();
        assert!(
            text.contains("version-hint.text")
                && text.contains(&format!("names version '{hint}'"))
                && text.contains("metadata file is missing"),
            "{text}"
        );
    }
    for entry in std::fs::read_dir(&meta).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".metadata.json") {
            std::fs::remove_file(path).unwrap();
        }
    }
    for (hint, why) in [
        ("", "is empty"),
        ("garbage", "holds 'garbage', not a version number"),
        ("0", "names version 0"),
        ("9", "names version '9'"),
    ] {
        std::fs::write(meta.join("version-hint.text"), hint).expect("hint");
        let err = Table::open(root).await.expect_err("no metadata");
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
        let text = err.to_string();
        assert!(
            text.contains("version-hint.text") && text.contains(why),
            "{text}"
        );
    }
}

/// Rewrite the copy's current metadata JSON (`v4.metadata.json`) with `edit`.
fn edit_metadata(dir: &std::path::Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let file = dir.join("metadata/v4.metadata.json");
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    edit(&mut j);
    std::fs::write(&file, j.to_string()).unwrap();
}

#[tokio::test]
async fn metadata_naming_nothing_is_rejected_on_open_naming_file_and_field() {
    type Edit = fn(&mut serde_json::Value);
    let cases: [(Edit, &str); 5] = [
        (|j| j["default-spec-id"] = 77.into(), "'default-spec-id' 77"),
        (
            |j| j["partition-specs"][0]["fields"][0]["source-id"] = 4242.into(),
            "'source-id' 4242",
        ),
        (
            |j| j["refs"]["main"]["snapshot-id"] = 1.into(),
            "'snapshot-id' 1 ",
        ),
        (
            |j| j["schemas"][0]["fields"][1]["id"] = 1.into(),
            "field id 1 is used by both",
        ),
        (
            |j| j["default-sort-order-id"] = 5.into(),
            "'default-sort-order-id' 5",
        ),
    ];
    for (edit, needle) in cases {
        let dir = copy_sample();
        edit_metadata(dir.path(), edit);
        // by directory (through the hint) and by the file's path
        let by_path = dir.path().join("metadata/v4.metadata.json");
        for location in [dir.path(), by_path.as_path()] {
            let err = Table::open(location.to_str().unwrap())
                .await
                .expect_err(needle);
            assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
            let text = err.to_string();
            assert!(
                text.contains(needle) && text.contains("v4.metadata.json"),
                "{needle}: {text}"
            );
        }
    }
}

/// Metadata whose fields contradict each other is refused on open, naming the file and
/// the fields (Iceberg Java's `TableMetadata` refuses each): reads and writes would
/// otherwise disagree on the current snapshot, or a commit would reuse a sequence number
/// (an older equality delete then deleting the rows it wrote) or row ids.
#[tokio::test]
async fn metadata_contradicting_itself_is_rejected_on_open_naming_file_and_fields() {
    type Edit = fn(&mut serde_json::Value);
    let cases: [(Edit, &str); 8] = [
        (
            |j| j["current-snapshot-id"] = (-1).into(),
            "'current-snapshot-id' is not set, but the 'main' branch",
        ),
        (
            |j| j["current-snapshot-id"] = j["snapshots"][0]["snapshot-id"].clone(),
            "'current-snapshot-id' 3378843091875528318 does not match the 'main' branch's",
        ),
        (
            |j| j["last-sequence-number"] = 1.into(),
            "'sequence-number' 2, outside 0..='last-sequence-number' 1",
        ),
        (
            |j| j["snapshots"][1]["sequence-number"] = (-4).into(),
            "'sequence-number' -4",
        ),
        (
            |j| {
                let dup = j["snapshots"][0].clone();
                j["snapshots"].as_array_mut().unwrap().push(dup);
            },
            "snapshot-id 3378843091875528318 appears twice",
        ),
        (
            |j| {
                let mut dup = j["schemas"][0].clone();
                dup["fields"].as_array_mut().unwrap().pop();
                j["schemas"].as_array_mut().unwrap().push(dup);
            },
            "schema-id 0 appears twice",
        ),
        (
            |j| j["refs"]["main"]["type"] = "banana".into(),
            "'main' has type 'banana'",
        ),
        (
            |j| j["partition-specs"][0]["fields"][0]["transform"] = "bucket[0]".into(),
            "partition spec 0: invalid transform bucket[0]",
        ),
    ];
    for (edit, needle) in cases {
        let dir = copy_sample();
        edit_metadata(dir.path(), edit);
        let by_path = dir.path().join("metadata/v4.metadata.json");
        for location in [dir.path(), by_path.as_path()] {
            let err = Table::open(location.to_str().unwrap())
                .await
                .expect_err(needle);
            assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
            let text = err.to_string();
            assert!(
                text.contains(needle) && text.contains("v4.metadata.json"),
                "{needle}: {text}"
            );
        }
    }
    // a snapshot's `schema-id` naming no schema: the table opens (its current state is
    // sound), time travel to that snapshot is refused (Java's `SnapshotUtil.schemaFor`)
    let dir = copy_sample();
    edit_metadata(dir.path(), |j| j["snapshots"][0]["schema-id"] = 44.into());
    let table = Table::open(dir.path().to_str().unwrap())
        .await
        .expect("opens");
    let err = IcebergTableProvider::try_new(table)
        .expect("provider")
        .with_snapshot_id(3378843091875528318)
        .expect_err("schema 44");
    assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
    assert!(
        err.to_string()
            .contains("'schema-id' 44, which names no schema"),
        "{err}"
    );
    // v3: `next-row-id` below the row ids the snapshots assigned, or negative
    for (next, needle) in [
        (
            94,
            "'first-row-id' 94 for 'added-rows' 1, beyond 'next-row-id' 94",
        ),
        (-10, "'next-row-id' -10 is negative"),
    ] {
        let dir = copy_table("corpus/spark_v3_deletion_vectors");
        let file = dir.path().join("metadata/v9.metadata.json");
        let mut j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        j["next-row-id"] = next.into();
        std::fs::write(&file, j.to_string()).unwrap();
        let err = Table::open(file.to_str().unwrap()).await.expect_err(needle);
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
        assert!(err.to_string().contains(needle), "{needle}: {err}");
    }
}

/// Replace `file` by a FIFO (a named pipe: opening it to read waits for a writer).
#[cfg(unix)]
fn replace_with_fifo(file: &std::path::Path) {
    std::fs::remove_file(file).expect("remove");
    let made = std::process::Command::new("mkfifo")
        .arg(file)
        .status()
        .expect("mkfifo");
    assert!(made.success(), "mkfifo {}", file.display());
}

#[cfg(unix)]
#[tokio::test]
async fn a_fifo_where_a_table_file_should_be_is_an_error_not_a_hang() {
    // (file to replace, SQL that reads it)
    let data_file =
        |dir: &std::path::Path| files_with_suffix(&dir.join("data"), ".parquet")[0].clone();
    let manifest =
        |dir: &std::path::Path| files_with_suffix(&dir.join("metadata"), "-m0.avro")[0].clone();
    let metadata = |dir: &std::path::Path| dir.join("metadata/v4.metadata.json");
    type Pick = fn(&std::path::Path) -> PathBuf;
    let cases: [(Pick, &str); 3] = [
        (metadata, "SELECT count(*) FROM t"),
        (manifest, "SELECT max(id) FROM t"),
        (data_file, "SELECT sum(id) FROM t"),
    ];
    for (pick, sql) in cases {
        let dir = copy_sample();
        let fifo = pick(dir.path());
        replace_with_fifo(&fifo);
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            scalar_i64(dir.path().to_str().unwrap(), sql),
        )
        .await;
        let Ok(result) = read else {
            // unblock the reader (a writer opens and closes the FIFO) before failing
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
            panic!("reading {} blocked", fifo.display());
        };
        let err = result.expect_err("a FIFO is no table file");
        let name = fifo.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            err.contains(&name) && err.contains("a FIFO"),
            "{}: {err}",
            fifo.display()
        );
    }
}

/// Flip the last bytes of every column chunk of `file` (the end of each chunk's last page:
/// compressed page data), keeping its size and footer.
fn corrupt_page_data(file: &std::path::Path) {
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    let mut bytes = std::fs::read(file).expect("read");
    let reader =
        SerializedFileReader::new(std::fs::File::open(file).expect("open")).expect("footer");
    for row_group in reader.metadata().row_groups() {
        for column in row_group.columns() {
            let (start, len) = column.byte_range();
            let end = (start + len) as usize;
            for b in &mut bytes[end - 6..end - 1] {
                *b ^= 0x5a;
            }
        }
    }
    std::fs::write(file, bytes).expect("write");
}

#[tokio::test]
async fn corrupt_pages_are_errors_naming_the_data_file_once_prefixed() {
    let dir = copy_sample();
    let data = files_with_suffix(&dir.path().join("data/ts_day=2024-03-03"), ".parquet");
    assert_eq!(data.len(), 1);
    corrupt_page_data(&data[0]);
    let name = data[0].file_name().unwrap().to_string_lossy().to_string();
    let location = dir.path().to_str().unwrap();
    for sql in [
        "SELECT sum(id) FROM t",
        "SELECT * FROM t",
        "SELECT sum(length(v)) FROM t",
    ] {
        let err = run_sql(location, sql).await.expect_err("corrupt pages");
        // named once, as the manifest records it, and where the moved copy was read
        let file = format!(
            "cannot read data file 'file:/tmp/iceberg-corpus/spark_v2_day_partitioned/data/\
             ts_day=2024-03-03/{name}' (read from '{}/data/ts_day=2024-03-03/{name}'): ",
            dir.path().display()
        );
        assert!(err.contains(&file), "{sql}: {err}");
        assert_eq!(err.matches("read from").count(), 1, "{sql}: {err}");
        assert!(err.matches("Parquet error:").count() <= 1, "{sql}: {err}");
    }
}

/// A TCP server on loopback that accepts connections and never answers (a hung store, a
/// load balancer without a backend): its `127.0.0.1:PORT`. The connections stay open
/// as long as the test process.
fn silent_server() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let addr = listener.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    addr
}

/// An S3 endpoint where nothing listens (a wrong port or host) fails reads and writes
/// saying why, not only object_store's "error sending request": the connection's reason,
/// with the file and the endpoint, and never the secret.
#[tokio::test]
async fn a_closed_s3_endpoint_says_why() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let secret = "not-to-be-shown-c10sed";
    let storage_properties: std::collections::HashMap<String, String> = [
        ("s3.endpoint", endpoint.clone()),
        ("s3.region", "us-east-1".to_string()),
        ("s3.path-style-access", "true".to_string()),
        ("s3.access-key-id", "AKIDCLOSED".to_string()),
        ("s3.secret-access-key", secret.to_string()),
        ("s3.retry.num-retries", "1".to_string()),
        ("s3.retry.min-wait-ms", "10".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let location = "s3://closed-bucket/db/t/metadata/v1.metadata.json";
    let err = Table::open_with(
        location,
        icefloe::OpenOptions {
            storage_properties: storage_properties.clone(),
            ..Default::default()
        },
    )
    .await
    .expect_err("nothing listens");
    let io = icefloe::io::FileIO::new(storage_properties);
    let written = "s3://closed-bucket/db/t/data/a.parquet";
    let write_err = io
        .write(written, bytes::Bytes::from_static(b"x"))
        .await
        .expect_err("nothing listens");
    for (err, file) in [(err, location), (write_err, written)] {
        let message = err.to_string();
        assert_eq!(err.kind(), ErrorKind::Io, "{message}");
        assert!(message.contains(file), "{message}");
        assert!(message.contains(&endpoint), "{message}");
        assert!(message.contains("Connection refused"), "{message}");
        assert!(!message.contains(secret), "{message}");
    }
}

/// An S3 endpoint that accepts connections and never answers fails the read within the
/// request timeout and retries (`s3.request-timeout`, `s3.retry.num-retries`), naming
/// the file and the endpoint and never the secret; it does not hang.
#[tokio::test]
async fn a_silent_s3_endpoint_times_out_naming_it() {
    let addr = silent_server();
    let secret = "not-to-be-shown-7f3a";
    let storage_properties = [
        ("s3.endpoint", format!("http://{addr}")),
        ("s3.region", "us-east-1".to_string()),
        ("s3.path-style-access", "true".to_string()),
        ("s3.access-key-id", "AKIDSILENT".to_string()),
        ("s3.secret-access-key", secret.to_string()),
        ("s3.request-timeout", "0.5".to_string()),
        ("s3.retry.num-retries", "1".to_string()),
        ("s3.retry.min-wait-ms", "10".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let location = "s3://silent-bucket/db/t/metadata/v1.metadata.json";
    let started = std::time::Instant::now();
    let opened = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        Table::open_with(
            location,
            icefloe::OpenOptions {
                storage_properties,
                ..Default::default()
            },
        ),
    )
    .await
    .expect("the read timed out instead of hanging");
    let elapsed = started.elapsed();
    let err = opened.expect_err("nothing answers");
    let message = err.to_string();
    assert_eq!(err.kind(), ErrorKind::Io, "{message}");
    // two attempts of 0.5 s and a short wait: well under 10 s (object_store's defaults
    // would take minutes)
    assert!(
        elapsed >= std::time::Duration::from_millis(900)
            && elapsed < std::time::Duration::from_secs(10),
        "{elapsed:?}: {message}"
    );
    assert!(message.contains(location), "{message}");
    assert!(message.contains(&addr), "{message}");
    assert!(!message.contains(secret), "{message}");
    // a bad timeout value is refused naming the property
    let err = Table::open_with(
        location,
        icefloe::OpenOptions {
            storage_properties: [("s3.request-timeout".to_string(), "soon".to_string())]
                .into_iter()
                .collect(),
            ..Default::default()
        },
    )
    .await
    .expect_err("not a number");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert!(err.to_string().contains("s3.request-timeout"), "{err}");
}

/// A REST catalog endpoint that accepts connections and never answers fails each call
/// within `rest.client.socket-timeout-ms`, naming the URL; the read does not hang.
#[tokio::test]
async fn a_silent_rest_catalog_times_out_naming_the_url() {
    let addr = silent_server();
    let url = format!("http://{addr}");
    let catalog = icefloe::catalog::load_catalog(&format!(
        "rest:{url}?warehouse=s3://warehouse&rest.client.socket-timeout-ms=500"
    ))
    .expect("URI parses");
    let started = std::time::Instant::now();
    let listed = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        catalog.list_namespaces(),
    )
    .await
    .expect("the call timed out instead of hanging");
    let elapsed = started.elapsed();
    let err = listed.expect_err("nothing answers");
    assert_eq!(err.kind(), ErrorKind::Io, "{err}");
    assert!(err.to_string().contains(&url), "{err}");
    assert!(err.to_string().contains("timed out"), "{err}");
    assert!(
        elapsed < std::time::Duration::from_secs(10),
        "{elapsed:?}: {err}"
    );
}

/// A data file whose footer gives a column chunk a negative size (found by
/// `fuzz_parsers`: one flipped byte of a PyIceberg file) is an error naming the file and
/// the column, where the `parquet` crate would panic computing the chunk's byte range.
#[tokio::test]
async fn a_footer_with_a_negative_column_chunk_size_is_an_error_naming_the_file() {
    use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
    let dir = copy_table("corpus/pyiceberg_v2_types_uuid_time");
    let file = dir
        .path()
        .join("data/u_bucket=0/00000-4-cbae6a15-2f12-4dd9-939d-c4daa09c988e.parquet");
    let mut bytes = std::fs::read(&file).expect("read");
    bytes[1994] ^= 73;
    std::fs::write(&file, &bytes).expect("write");
    // the flip makes column `ts` of row group 0 -85 bytes long
    let reader = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let ts = reader.metadata().row_group(0).column(4);
    assert_eq!(
        (ts.column_path().string(), ts.compressed_size()),
        ("ts".to_string(), -85)
    );
    let err = run_sql(dir.path().to_str().unwrap(), "SELECT * FROM t")
        .await
        .unwrap_err();
    assert!(
        err.contains("00000-4-cbae6a15-2f12-4dd9-939d-c4daa09c988e.parquet")
            && err.contains("row group 0, column 'ts': bytes 418 + -85 of a 5219-byte file"),
        "{err}"
    );
}
