//! Unit tests of position delete reading (in-memory Parquet, temp files; the corpus tables
//! are checked end to end in `corpus_tests.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int32Array, Int64Array, LargeStringArray, StringArray};
use datafusion::arrow::datatypes::{Field, Schema as ArrowSchema};
use datafusion::parquet::arrow::ArrowWriter;

use super::*;
use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;
use crate::spec::{DataFile, ManifestStatus};
use crate::ErrorKind;

fn field(name: &str, ty: DataType, id: Option<i32>) -> Field {
    let f = Field::new(name, ty, false);
    match id {
        Some(id) => f.with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )])),
        None => f,
    }
}

fn parquet(fields: Vec<Field>, columns: Vec<ArrayRef>) -> Bytes {
    let schema = Arc::new(ArrowSchema::new(fields));
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).unwrap();
    let mut buf = vec![];
    let mut w = ArrowWriter::try_new(&mut buf, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    Bytes::from(buf)
}

fn delete_file(paths: &[&str], positions: &[i64]) -> Bytes {
    parquet(
        vec![
            field("file_path", DataType::Utf8, Some(DELETE_FILE_PATH_FIELD_ID)),
            field("pos", DataType::Int64, Some(DELETE_FILE_POS_FIELD_ID)),
        ],
        vec![
            Arc::new(StringArray::from(paths.to_vec())),
            Arc::new(Int64Array::from(positions.to_vec())),
        ],
    )
}

fn set(v: &[u64]) -> RoaringTreemap {
    v.iter().copied().collect()
}

#[test]
fn groups_positions_by_data_file() {
    let bytes = delete_file(
        &[
            "file:/t/a.parquet",
            "file:/t/a.parquet",
            "file:/t/b.parquet",
            "file:/t/c.parquet",
        ],
        &[0, 7, 3, 1 << 40],
    );
    let parsed = parse_position_delete_file(bytes, "d.parquet").unwrap();
    assert_eq!(parsed.rows, 4);
    assert_eq!(parsed.positions("file:/t/a.parquet"), Some(&set(&[0, 7])));
    assert_eq!(parsed.positions("file:/t/b.parquet"), Some(&set(&[3])));
    assert_eq!(
        parsed.positions("file:/t/c.parquet"),
        Some(&set(&[1 << 40]))
    );
    // stored paths are compared verbatim
    assert_eq!(parsed.positions("file:///t/a.parquet"), None);
}

#[test]
fn columns_by_field_id_then_by_name() {
    // ids win over names; a `row` column and other order are fine
    let bytes = parquet(
        vec![
            field("p", DataType::Int32, Some(DELETE_FILE_POS_FIELD_ID)),
            field("x", DataType::Int32, Some(2147483544)),
            field("f", DataType::LargeUtf8, Some(DELETE_FILE_PATH_FIELD_ID)),
        ],
        vec![
            Arc::new(Int32Array::from(vec![5, 6])),
            Arc::new(Int32Array::from(vec![0, 0])),
            Arc::new(LargeStringArray::from(vec!["a", "a"])),
        ],
    );
    assert_eq!(
        parse_position_delete_file(bytes, "d")
            .unwrap()
            .positions("a"),
        Some(&set(&[5, 6]))
    );
    // no field ids at all: by name
    let bytes = parquet(
        vec![
            field("file_path", DataType::Utf8, None),
            field("pos", DataType::Int64, None),
        ],
        vec![
            Arc::new(StringArray::from(vec!["a"])),
            Arc::new(Int64Array::from(vec![9])),
        ],
    );
    assert_eq!(
        parse_position_delete_file(bytes, "d")
            .unwrap()
            .positions("a"),
        Some(&set(&[9]))
    );
    // ids present but not the reserved ones: the names are not trusted
    let bytes = parquet(
        vec![
            field("file_path", DataType::Utf8, Some(1)),
            field("pos", DataType::Int64, Some(2)),
        ],
        vec![
            Arc::new(StringArray::from(vec!["a"])),
            Arc::new(Int64Array::from(vec![9])),
        ],
    );
    let err = parse_position_delete_file(bytes, "d.parquet").unwrap_err();
    assert!(
        err.to_string().contains("'d.parquet'") && err.to_string().contains("file_path"),
        "{err}"
    );
}

#[test]
fn rejects_nulls_and_negative_positions() {
    let nullable = |f: Field| f.with_nullable(true);
    let bytes = parquet(
        vec![
            nullable(field(
                "file_path",
                DataType::Utf8,
                Some(DELETE_FILE_PATH_FIELD_ID),
            )),
            nullable(field(
                "pos",
                DataType::Int64,
                Some(DELETE_FILE_POS_FIELD_ID),
            )),
        ],
        vec![
            Arc::new(StringArray::from(vec![Some("a")])),
            Arc::new(Int64Array::from(vec![None::<i64>])),
        ],
    );
    assert!(parse_position_delete_file(bytes, "d")
        .unwrap_err()
        .to_string()
        .contains("null"));
    let err = parse_position_delete_file(delete_file(&["a"], &[-1]), "d").unwrap_err();
    assert!(err.to_string().contains("negative position -1"), "{err}");
}

#[test]
fn truncated_files_are_invalid_data_naming_the_file() {
    let bytes = delete_file(&["a", "b"], &[1, 2]);
    for len in (0..bytes.len()).step_by(7) {
        let err = parse_position_delete_file(bytes.slice(..len), "cut.parquet").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
        assert!(err.to_string().contains("cut.parquet"), "{err}");
    }
}

/// The size of the file at the local `path` as its manifest entry records it (1 when
/// there is none yet).
fn size_on_disk(path: &str) -> i64 {
    std::fs::metadata(path).map_or(1, |m| m.len() as i64)
}

fn entry(path: &str, format: DataFileFormat) -> Arc<ManifestEntry> {
    Arc::new(ManifestEntry {
        status: ManifestStatus::Added,
        snapshot_id: 1,
        data_sequence_number: 1,
        file_sequence_number: 1,
        spec_id: 0,
        data_file: DataFile {
            file_format: format,
            record_count: 1,
            file_size_in_bytes: size_on_disk(path),
            ..crate::write::empty_data_file(path, DataContentType::PositionDeletes)
        },
    })
}

fn dv_entry(
    puffin: &str,
    data: &str,
    offset: i64,
    blob: &[u8],
    cardinality: i64,
) -> Arc<ManifestEntry> {
    let mut e = (*entry(puffin, DataFileFormat::Puffin)).clone();
    e.data_file.referenced_data_file = Some(data.to_string());
    e.data_file.content_offset = Some(offset);
    e.data_file.content_size_in_bytes = Some(blob.len() as i64);
    e.data_file.record_count = cardinality;
    Arc::new(e)
}

#[tokio::test]
async fn loader_unions_files_and_reads_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let loc = |name: &str| dir.path().join(name).to_string_lossy().to_string();
    std::fs::write(
        loc("d1.parquet"),
        delete_file(&["data-a", "data-b"], &[1, 2]),
    )
    .unwrap();
    std::fs::write(
        loc("d2.parquet"),
        delete_file(&["data-a", "data-a"], &[1, 5]),
    )
    .unwrap();
    let loader = PositionDeleteLoader::new(FileIO::default());
    let deletes = [
        entry(&loc("d1.parquet"), DataFileFormat::Parquet),
        entry(&loc("d2.parquet"), DataFileFormat::Parquet),
    ];
    assert_eq!(
        loader.deleted_positions("data-a", &deletes).await.unwrap(),
        set(&[1, 5])
    );
    assert_eq!(
        loader.deleted_positions("data-b", &deletes).await.unwrap(),
        set(&[2])
    );
    assert!(loader
        .deleted_positions("data-c", &deletes)
        .await
        .unwrap()
        .is_empty());
    // cached: still answers after the files are gone
    std::fs::remove_file(loc("d1.parquet")).unwrap();
    assert_eq!(
        loader.deleted_positions("data-b", &deletes).await.unwrap(),
        set(&[2])
    );
    // a fresh loader reports the missing file by name
    let err = PositionDeleteLoader::new(FileIO::default())
        .deleted_positions("data-b", &deletes)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.to_string().contains("d1.parquet"), "{err}");
}

#[tokio::test]
async fn loader_reads_deletion_vectors_by_range() {
    let dir = tempfile::tempdir().unwrap();
    let puffin = dir.path().join("dv.puffin").to_string_lossy().to_string();
    let positions = set(&[0, 3, 4, 1_000_000]);
    let blob = super::super::deletion_vector::serialize_deletion_vector(&positions).unwrap();
    let mut file = b"PFA1".to_vec();
    file.extend_from_slice(&blob);
    file.extend_from_slice(b"footer would follow");
    std::fs::write(&puffin, &file).unwrap();
    let loader = PositionDeleteLoader::new(FileIO::default());
    let dv = dv_entry(&puffin, "data-a", 4, &blob, 4);
    assert_eq!(
        loader
            .deleted_positions("data-a", &[Arc::clone(&dv)])
            .await
            .unwrap(),
        positions
    );
    // a DV for another data file is refused
    let err = loader.deleted_positions("data-b", &[dv]).await.unwrap_err();
    assert!(err.to_string().contains("references"), "{err}");
    // wrong record_count, CRC damage, truncation, missing file: errors naming the file
    let fresh = || PositionDeleteLoader::new(FileIO::default());
    let err = fresh()
        .deleted_positions("data-a", &[dv_entry(&puffin, "data-a", 4, &blob, 5)])
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("cardinality 4 differs from record_count 5"),
        "{err}"
    );
    let mut damaged = file.clone();
    damaged[20] ^= 0x10;
    std::fs::write(&puffin, &damaged).unwrap();
    let err = fresh()
        .deleted_positions("data-a", &[dv_entry(&puffin, "data-a", 4, &blob, 4)])
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("CRC") && err.to_string().contains("dv.puffin"),
        "{err}"
    );
    std::fs::write(&puffin, &file[..20]).unwrap();
    let err = fresh()
        .deleted_positions("data-a", &[dv_entry(&puffin, "data-a", 4, &blob, 4)])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
    assert!(err.to_string().contains("dv.puffin"), "{err}");
    std::fs::remove_file(&puffin).unwrap();
    let err = fresh()
        .deleted_positions("data-a", &[dv_entry(&puffin, "data-a", 4, &blob, 4)])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
}

#[tokio::test]
async fn loaders_sharing_a_cache_read_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let loc = |name: &str| dir.path().join(name).to_string_lossy().to_string();
    let parquet_bytes = delete_file(&["data-a", "data-b"], &[1, 2]);
    std::fs::write(loc("d.parquet"), &parquet_bytes).unwrap();
    let dv_positions = set(&[0, 7]);
    let blob = super::super::deletion_vector::serialize_deletion_vector(&dv_positions).unwrap();
    let mut puffin = b"PFA1".to_vec();
    puffin.extend_from_slice(&blob);
    std::fs::write(loc("dv.puffin"), &puffin).unwrap();
    let deletes = [
        entry(&loc("d.parquet"), DataFileFormat::Parquet),
        dv_entry(&loc("dv.puffin"), "data-a", 4, &blob, 2),
    ];
    let cache = Arc::new(PositionDeleteCache::default());
    let first = PositionDeleteLoader::with_cache(FileIO::default(), Arc::clone(&cache));
    assert_eq!(
        first.deleted_positions("data-a", &deletes).await.unwrap(),
        set(&[0, 1, 7])
    );
    let s = cache.stats();
    assert_eq!((s.entries, s.misses, s.hits), (2, 2, 0));

    // the files are gone: a later scan's loader answers from the cache, with the values
    // the first one decoded
    std::fs::remove_file(loc("d.parquet")).unwrap();
    std::fs::remove_file(loc("dv.puffin")).unwrap();
    let second = PositionDeleteLoader::with_cache(FileIO::default(), Arc::clone(&cache));
    assert_eq!(
        second.deleted_positions("data-a", &deletes).await.unwrap(),
        set(&[0, 1, 7])
    );
    assert_eq!(cache.stats().hits, 2);
    let (a, b) = (
        first.load_position_delete_file(&deletes[0]).await.unwrap(),
        second.load_position_delete_file(&deletes[0]).await.unwrap(),
    );
    assert!(Arc::ptr_eq(&a, &b));
    let (a, b) = (
        first.load_deletion_vector(&deletes[1]).await.unwrap(),
        second.load_deletion_vector(&deletes[1]).await.unwrap(),
    );
    assert!(Arc::ptr_eq(&a, &b));
    // an entry with another record count lists another version of the file
    // (`crate::scan::file_version`): never the cached vector, read again (gone here)
    let err = second
        .load_deletion_vector(&dv_entry(&loc("dv.puffin"), "data-a", 4, &blob, 3))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert!(err.to_string().contains("dv.puffin"), "{err}");
    // an uncached loader reads, and misses the file
    let err = PositionDeleteLoader::new(FileIO::default())
        .deleted_positions("data-a", &deletes)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");

    // a failed load is not kept: once the file reads, the next loader decodes it
    let mut other = (*entry(&loc("other.parquet"), DataFileFormat::Parquet)).clone();
    other.data_file.file_size_in_bytes = parquet_bytes.len() as i64;
    std::fs::write(loc("other.parquet"), &parquet_bytes[..20]).unwrap();
    let err = PositionDeleteLoader::with_cache(FileIO::default(), Arc::clone(&cache))
        .load_position_delete_file(&other)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
    assert_eq!(cache.stats().entries, 2);
    std::fs::write(loc("other.parquet"), &parquet_bytes).unwrap();
    let loaded = PositionDeleteLoader::with_cache(FileIO::default(), Arc::clone(&cache))
        .load_position_delete_file(&other)
        .await
        .unwrap();
    assert_eq!(loaded.positions("data-b"), Some(&set(&[2])));
    assert_eq!(cache.stats().entries, 3);
}

/// A delete file removed and re-added at the same path with other contents (same size,
/// by another commit) is decoded anew: the cache keys the version its entry lists
/// (`crate::scan::file_version`); the entry it cached for the first version still hits.
#[tokio::test]
async fn a_delete_file_re_added_at_its_path_is_decoded_again() {
    let dir = tempfile::tempdir().unwrap();
    let loc = |name: &str| dir.path().join(name).to_string_lossy().to_string();
    let first_bytes = delete_file(&["data-a"], &[1]);
    let second_bytes = delete_file(&["data-a"], &[2]);
    assert_eq!(first_bytes.len(), second_bytes.len());
    std::fs::write(loc("d.parquet"), &first_bytes).unwrap();
    let first = entry(&loc("d.parquet"), DataFileFormat::Parquet);
    let cache = Arc::new(PositionDeleteCache::default());
    let load = |e: Arc<ManifestEntry>| {
        let cache = Arc::clone(&cache);
        async move {
            PositionDeleteLoader::with_cache(FileIO::default(), cache)
                .deleted_positions("data-a", &[e])
                .await
                .unwrap()
        }
    };
    assert_eq!(load(Arc::clone(&first)).await, set(&[1]));
    // the same version again (a later scan of the same snapshot): a hit, not read
    assert_eq!(load(Arc::clone(&first)).await, set(&[1]));
    assert_eq!((cache.stats().hits, cache.stats().misses), (1, 1));
    std::fs::write(loc("d.parquet"), &second_bytes).unwrap();
    // added again by snapshot 2 (v1: sequence numbers 0 would not tell it apart)
    let mut again = (*first).clone();
    again.snapshot_id = 2;
    assert_eq!(load(Arc::new(again)).await, set(&[2]));
    let mut later = (*first).clone();
    later.data_sequence_number = 2;
    later.snapshot_id = 3;
    assert_eq!(load(Arc::new(later)).await, set(&[2]));
    assert_eq!((cache.stats().hits, cache.stats().misses), (1, 3));
}

#[tokio::test]
async fn unsupported_formats_and_equality_entries() {
    let loader = PositionDeleteLoader::new(FileIO::default());
    let err = loader
        .deleted_positions("a", &[entry("/x/d.avro", DataFileFormat::Avro)])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert!(err.to_string().contains("/x/d.avro"), "{err}");
    // equality deletes are not position deletes: ignored here
    let mut eq = (*entry("/x/eq.parquet", DataFileFormat::Parquet)).clone();
    eq.data_file.content = DataContentType::EqualityDeletes;
    assert!(loader
        .deleted_positions("a", &[Arc::new(eq)])
        .await
        .unwrap()
        .is_empty());
}

#[test]
fn row_selection_from_deleted_positions() {
    let sel = |deleted: &[u64], total: u64| -> Vec<(bool, usize)> {
        let selection = row_selection(&set(deleted), total, "d.parquet").unwrap();
        assert_eq!(
            selection.row_count() + selection.skipped_row_count(),
            total as usize
        );
        selection.iter().map(|s| (s.skip, s.row_count)).collect()
    };
    assert_eq!(sel(&[], 10), [(false, 10)]);
    assert_eq!(sel(&[0, 1, 2], 3), [(true, 3)]);
    assert_eq!(
        sel(&[0, 4, 5, 9], 10),
        [(true, 1), (false, 3), (true, 2), (false, 3), (true, 1)]
    );
    assert_eq!(sel(&[3], 10), [(false, 3), (true, 1), (false, 6)]);
    assert_eq!(sel(&[], 0), Vec::<(bool, usize)>::new());
    let err = row_selection(&set(&[10]), 10, "d.parquet").unwrap_err();
    assert!(
        err.to_string()
            .contains("position 10 of data file 'd.parquet'"),
        "{err}"
    );
}

/// A position delete file of another size than its entry's `file_size_in_bytes` (replaced
/// by another, or truncated) is refused naming it and both sizes (report W67 F3), where
/// its positions used to be applied.
#[tokio::test]
async fn a_delete_file_of_another_size_than_the_manifest_says_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("d.parquet").to_string_lossy().to_string();
    std::fs::write(&loc, delete_file(&["data-a"], &[1])).unwrap();
    let recorded = entry(&loc, DataFileFormat::Parquet);
    let size = recorded.data_file.file_size_in_bytes;
    let replacement = delete_file(&["data-a", "data-a"], &[0, 3]);
    assert_ne!(replacement.len() as i64, size);
    std::fs::write(&loc, &replacement).unwrap();
    let err = PositionDeleteLoader::new(FileIO::default())
        .deleted_positions("data-a", &[recorded])
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
    assert!(
        err.to_string().contains(&format!(
            "position delete file '{loc}' is {} bytes, the manifest says {size} \
             (file_size_in_bytes)",
            replacement.len()
        )),
        "{err}"
    );
}
