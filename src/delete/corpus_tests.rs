//! End-to-end checks of the delete module on the shared corpus: for every unfiltered
//! row-count case of the delete tables (current snapshot and time travel), plan the
//! snapshot, assign delete files with [`DeleteFileIndex`], apply position deletes,
//! deletion vectors and equality deletes row by row, and compare the surviving row count
//! with the oracle's; the number of delete files attached to tasks is compared with
//! Iceberg Java's `delete_files` scan metric. Skipped when the corpus is absent.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::row::{OwnedRow, RowConverter, SortField};
use serde_json::Value;

use super::*;
use crate::scan::TableScan;
use crate::spec::{DataContentType, ManifestEntry};
use crate::Table;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");

/// An unfiltered case: snapshot (None = current), expected rows, Java's delete file count.
struct Expected {
    name: String,
    snapshot_id: Option<i64>,
    rows: u64,
    java_delete_files: Option<u64>,
}

fn expectations(cases: &Value) -> Vec<Expected> {
    let mut out = vec![];
    for case in cases["cases"].as_array().into_iter().flatten() {
        let sql = case["sql"].as_str().unwrap_or_default();
        if case.get("ref").is_some() || sql.contains("WHERE") || sql.contains("GROUP BY") {
            continue;
        }
        let rows = if sql.starts_with("SELECT * FROM {t}") {
            case["rows"].as_array().map(|r| r.len() as u64)
        } else if sql.starts_with("SELECT count(*) AS n") {
            case["rows"][0][0].as_u64()
        } else {
            None
        };
        let Some(rows) = rows else { continue };
        out.push(Expected {
            name: case["name"].as_str().unwrap_or_default().to_string(),
            snapshot_id: case["snapshot_id"].as_i64(),
            rows,
            java_delete_files: case["iceberg_java_scan"]["delete_files"].as_u64(),
        });
    }
    out
}

/// Rows surviving the deletes of one snapshot, and the delete files attached to tasks.
async fn live_rows(table: &Table, snapshot_id: Option<i64>) -> (u64, u64) {
    let metadata = table.metadata();
    let snapshot = match snapshot_id {
        Some(id) => metadata.snapshot_by_id(id).cloned(),
        None => metadata.current_snapshot().cloned(),
    };
    let plan = TableScan::new(table.clone(), snapshot)
        .plan_files()
        .await
        .unwrap();
    let index = DeleteFileIndex::for_table(metadata, plan.delete_entries.iter().cloned()).unwrap();
    let schemas = metadata.schemas_newest_first();
    let positions_loader = PositionDeleteLoader::new(table.file_io().clone());
    let eq_loader = EqualityDeleteLoader::new(table.file_io().clone());
    let (mut live, mut attached) = (0u64, 0u64);
    for task in &plan.tasks {
        let data = &task.entry.data_file;
        let deletes = index.for_data_file(&task.entry).unwrap();
        attached += deletes.len() as u64;
        let positions = positions_loader
            .deleted_positions(&data.file_path, &deletes)
            .await
            .unwrap();
        let selection =
            row_selection(&positions, data.record_count as u64, &data.file_path).unwrap();
        assert_eq!(
            selection.row_count() as u64,
            data.record_count as u64 - positions.len()
        );
        // equality delete files grouped by their equality id set
        let mut groups: BTreeMap<Vec<i32>, Vec<&Arc<ManifestEntry>>> = BTreeMap::new();
        for d in deletes
            .iter()
            .filter(|d| d.data_file.content == DataContentType::EqualityDeletes)
        {
            groups
                .entry(d.data_file.equality_ids.clone())
                .or_default()
                .push(d);
        }
        if groups.is_empty() {
            live += data.record_count as u64 - positions.len();
            continue;
        }
        let mut deleted = vec![false; data.record_count as usize];
        for p in positions.iter() {
            deleted[p as usize] = true;
        }
        let bytes = table.file_io().read(&data.file_path).await.unwrap();
        for (ids, files) in groups {
            let target = equality_delete_schema(&schemas, &ids).unwrap();
            let sort_fields = target
                .fields()
                .iter()
                .map(|f| SortField::new(f.data_type().clone()))
                .collect();
            let converter = RowConverter::new(sort_fields).unwrap();
            let mut keys: HashSet<OwnedRow> = HashSet::new();
            for f in files {
                let batches = eq_loader.load(f, &target).await.unwrap();
                keys.extend(build_key_rows(&batches.batches, &converter).unwrap());
            }
            // the data file's key columns, read with the same by-field-id reader
            let rows = equality_delete::parse_equality_delete_file(
                bytes.clone(),
                &data.file_path,
                &target,
            )
            .unwrap();
            let mut r = 0;
            for batch in rows {
                for row in converter.convert_columns(batch.columns()).unwrap().iter() {
                    deleted[r] |= keys.contains(&row.owned());
                    r += 1;
                }
            }
            assert_eq!(r as i64, data.record_count, "{}", data.file_path);
        }
        live += deleted.iter().filter(|d| !**d).count() as u64;
    }
    (live, attached)
}

async fn check_table(name: &str) {
    let dir = format!("{CORPUS}/{name}");
    let Ok(text) = std::fs::read_to_string(format!("{dir}/cases.json")) else {
        eprintln!("corpus table {name} not found under {CORPUS}: skipped");
        return;
    };
    let cases: Value = serde_json::from_str(&text).unwrap();
    let table = Table::open(&dir).await.unwrap();
    let expected = expectations(&cases);
    assert!(!expected.is_empty(), "{name}: no unfiltered count cases");
    for e in expected {
        let (live, attached) = live_rows(&table, e.snapshot_id).await;
        eprintln!(
            "{name} / {}: live {live} (expected {}), delete files {attached} (java {:?})",
            e.name, e.rows, e.java_delete_files
        );
        assert_eq!(live, e.rows, "{name} / {}: surviving rows", e.name);
        if let Some(java) = e.java_delete_files {
            assert_eq!(
                attached, java,
                "{name} / {}: delete files attached to tasks (Iceberg Java)",
                e.name
            );
        }
    }
}

#[tokio::test]
async fn spark_v2_mor_position_deletes() {
    check_table("spark_v2_mor_position_deletes").await;
}

#[tokio::test]
async fn spark_v3_deletion_vectors() {
    check_table("spark_v3_deletion_vectors").await;
}

#[tokio::test]
async fn spark_v2_equality_deletes() {
    check_table("spark_v2_equality_deletes").await;
}

#[tokio::test]
async fn spark_v2_equality_deletes_partitioned() {
    check_table("spark_v2_equality_deletes_partitioned").await;
}

#[tokio::test]
async fn sidequery_pyiceberg_v2_equality_deletes() {
    check_table("sidequery_pyiceberg_v2_equality_deletes").await;
}

/// Per data file of the MoR table's current snapshot: the deleted positions agree with
/// the Parquet position delete files, and the Puffin DVs match their footers.
#[tokio::test]
async fn deletion_vectors_match_puffin_footers() {
    let dir = format!("{CORPUS}/spark_v3_deletion_vectors");
    if !std::path::Path::new(&dir).exists() {
        eprintln!("corpus not found: skipped");
        return;
    }
    let table = Table::open(&dir).await.unwrap();
    let snapshot = table.metadata().current_snapshot().cloned();
    let plan = TableScan::new(table.clone(), snapshot)
        .plan_files()
        .await
        .unwrap();
    assert!(!plan.delete_entries.is_empty());
    for dv in &plan.delete_entries {
        let f = &dv.data_file;
        assert!(is_deletion_vector(f));
        let footer = puffin::read_file_metadata(table.file_io(), &f.file_path)
            .await
            .unwrap();
        let blob = footer
            .blobs
            .iter()
            .find(|b| Some(b.offset) == f.content_offset)
            .expect("a footer blob at content_offset");
        assert_eq!(blob.blob_type, "deletion-vector-v1");
        assert_eq!(Some(blob.length), f.content_size_in_bytes);
        assert_eq!(
            blob.properties.get("referenced-data-file"),
            f.referenced_data_file.as_ref()
        );
        assert_eq!(
            blob.properties.get("cardinality"),
            Some(&f.record_count.to_string())
        );
    }
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A copied table and its first delete entry of content `want`.
async fn first_delete(dir: &std::path::Path, want: DataContentType) -> (Table, Arc<ManifestEntry>) {
    let table = Table::open(&dir.to_string_lossy()).await.unwrap();
    let snapshot = table.metadata().current_snapshot().cloned();
    let plan = TableScan::new(table.clone(), snapshot)
        .plan_files()
        .await
        .unwrap();
    let first = plan
        .delete_entries
        .iter()
        .find(|e| e.data_file.content == want)
        .cloned()
        .unwrap();
    (table, first)
}

/// Missing, truncated and corrupted delete files of a (copied) corpus table give errors
/// naming the stored path and where it was read.
#[tokio::test]
async fn bad_delete_files_in_a_copied_table() {
    let tables = [
        (
            "spark_v2_mor_position_deletes",
            DataContentType::PositionDeletes,
        ),
        (
            "spark_v3_deletion_vectors",
            DataContentType::PositionDeletes,
        ),
        (
            "spark_v2_equality_deletes",
            DataContentType::EqualityDeletes,
        ),
    ];
    for (name, want) in tables {
        let src = std::path::PathBuf::from(format!("{CORPUS}/{name}"));
        if !src.exists() {
            eprintln!("corpus table {name} not found: skipped");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(name);
        copy_dir(&src, &dir);
        let (table, delete) = first_delete(&dir, want).await;
        let stored = delete.data_file.file_path.clone();
        let file_name = stored.rsplit('/').next().unwrap().to_string();
        let actual = table.file_io().remap(&stored).unwrap();
        let local = actual.strip_prefix("file://").unwrap().to_string();
        let load = || async {
            let f = &delete.data_file;
            match f.content {
                DataContentType::EqualityDeletes => {
                    let schemas = [table.metadata().current_schema()];
                    let target = equality_delete_schema(&schemas, &f.equality_ids).unwrap();
                    EqualityDeleteLoader::new(table.file_io().clone())
                        .load(&delete, &target)
                        .await
                        .map(|_| ())
                }
                _ => PositionDeleteLoader::new(table.file_io().clone())
                    .deleted_positions(
                        f.referenced_data_file.as_deref().unwrap_or("x"),
                        &[Arc::clone(&delete)],
                    )
                    .await
                    .map(|_| ()),
            }
        };
        load().await.unwrap();
        let bytes = std::fs::read(&local).unwrap();
        // truncated (for a DV: inside its blob)
        let f = &delete.data_file;
        let cut = match (f.content_offset, f.content_size_in_bytes) {
            (Some(o), Some(l)) => (o + l - 1) as usize,
            _ => bytes.len() / 2,
        };
        std::fs::write(&local, &bytes[..cut]).unwrap();
        let err = load().await.unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidData, "{name}: {err}");
        assert!(err.to_string().contains(&file_name), "{name}: {err}");
        // missing
        std::fs::remove_file(&local).unwrap();
        let err = load().await.unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::NotFound, "{name}: {err}");
        assert!(
            err.to_string().contains(&stored) && err.to_string().contains(&actual),
            "{name}: {err}"
        );
        // a flipped byte inside a deletion vector fails its CRC
        if is_deletion_vector(&delete.data_file) {
            let mut damaged = bytes.clone();
            let at = delete.data_file.content_offset.unwrap() as usize + 12;
            damaged[at] ^= 0x01;
            std::fs::write(&local, &damaged).unwrap();
            let err = load().await.unwrap_err();
            assert!(
                err.to_string().contains("CRC mismatch") && err.to_string().contains(&file_name),
                "{name}: {err}"
            );
        }
    }
}
