//! Unit tests of [`DeleteFileIndex`]: the cases of Java's `DeleteFileIndexTestBase`
//! (re-expressed as tables of sequence numbers and expected files), plus statistics and
//! validation cases.

use std::sync::Arc;

use super::*;
use crate::spec::{DataFileFormat, ManifestStatus, NestedField, PartitionField, Transform, Type};

const P: i32 = 0; // bucket[16](data) spec
const U: i32 = 1; // unpartitioned spec

fn specs() -> Vec<PartitionSpec> {
    vec![
        PartitionSpec {
            spec_id: P,
            fields: vec![PartitionField {
                source_id: 2,
                field_id: Some(1000),
                name: "data_bucket".into(),
                transform: Transform::Bucket(16),
            }],
        },
        PartitionSpec {
            spec_id: U,
            fields: vec![],
        },
    ]
}

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Int)),
            NestedField::optional(2, "data", Type::Primitive(PrimitiveType::String)),
            NestedField::optional(3, "d", Type::Primitive(PrimitiveType::Double)),
        ],
    )
}

fn file(content: DataContentType, path: &str, partition: Vec<Option<Literal>>) -> DataFile {
    let mut f = crate::write::empty_data_file(path, content);
    f.partition = partition;
    f.record_count = 1;
    f.file_size_in_bytes = 10;
    if content == DataContentType::EqualityDeletes {
        f.equality_ids = vec![1];
    }
    f
}

fn entry(spec_id: i32, seq: i64, data_file: DataFile) -> Arc<ManifestEntry> {
    Arc::new(ManifestEntry {
        status: ManifestStatus::Added,
        snapshot_id: 1,
        data_sequence_number: seq,
        file_sequence_number: seq,
        spec_id,
        data_file,
    })
}

fn bucket(b: i32) -> Vec<Option<Literal>> {
    vec![Some(Literal::Int(b))]
}

/// FILE_A .. FILE_D of the Java tests: data files in buckets 0..3 of spec P.
fn data_file(name: &str, spec_id: i32, seq: i64) -> Arc<ManifestEntry> {
    let b = match name {
        "a" => 0,
        "b" => 1,
        "c" => 2,
        _ => 3,
    };
    let partition = if spec_id == U { vec![] } else { bucket(b) };
    entry(
        spec_id,
        seq,
        file(
            DataContentType::Data,
            &format!("/path/to/data-{name}.parquet"),
            partition,
        ),
    )
}

fn eq(spec_id: i32, partition: Vec<Option<Literal>>, seq: i64, name: &str) -> Arc<ManifestEntry> {
    entry(
        spec_id,
        seq,
        file(
            DataContentType::EqualityDeletes,
            &format!("/eq-{name}.parquet"),
            partition,
        ),
    )
}

fn pos(spec_id: i32, partition: Vec<Option<Literal>>, seq: i64, name: &str) -> Arc<ManifestEntry> {
    entry(
        spec_id,
        seq,
        file(
            DataContentType::PositionDeletes,
            &format!("/pos-{name}.parquet"),
            partition,
        ),
    )
}

fn dv(data: &ManifestEntry, seq: i64, name: &str) -> Arc<ManifestEntry> {
    let mut f = file(
        DataContentType::PositionDeletes,
        &format!("/dv-{name}.puffin"),
        data.data_file.partition.clone(),
    );
    f.file_format = DataFileFormat::Puffin;
    f.referenced_data_file = Some(data.data_file.file_path.clone());
    f.content_offset = Some(4);
    f.content_size_in_bytes = Some(40);
    entry(data.spec_id, seq, f)
}

fn build(deletes: &[Arc<ManifestEntry>]) -> DeleteFileIndex {
    let schema = schema();
    DeleteFileIndex::new(deletes.iter().cloned(), &specs(), &[&schema]).expect("index builds")
}

fn with_seq(data: &ManifestEntry, seq: i64) -> ManifestEntry {
    ManifestEntry {
        data_sequence_number: seq,
        ..data.clone()
    }
}

fn paths(files: &[Arc<ManifestEntry>]) -> Vec<&str> {
    files
        .iter()
        .map(|f| f.data_file.file_path.as_str())
        .collect()
}

/// For each data sequence number, which of `deletes` (by index) apply, in order.
fn check_table(
    index: &DeleteFileIndex,
    data: &ManifestEntry,
    deletes: &[Arc<ManifestEntry>],
    table: &[(i64, &[usize])],
) {
    for (seq, expected) in table {
        let got = index.for_data_file(&with_seq(data, *seq)).unwrap();
        let want: Vec<_> = expected.iter().map(|i| Arc::clone(&deletes[*i])).collect();
        assert_eq!(paths(&got), paths(&want), "data seq {seq}");
    }
}

/// Java: the two-column table of sequence numbers shared by testUnpartitionedDeletes and
/// testPartitionedDeleteIndex; deletes are [eq@4, eq@6, pos@5, pos@6].
const SEQ_TABLE: &[(i64, &[usize])] = &[
    (0, &[0, 1, 2, 3]),
    (3, &[0, 1, 2, 3]),
    (4, &[1, 2, 3]),
    (5, &[1, 2, 3]),
    (6, &[3]),
    (7, &[]),
    (10, &[]),
];

#[test]
fn unpartitioned_deletes() {
    let deletes = [
        eq(U, vec![], 4, "1"),
        eq(U, vec![], 6, "2"),
        pos(U, vec![], 5, "3"),
        pos(U, vec![], 6, "4"),
    ];
    let index = build(&deletes);
    assert!(index.has_equality_deletes() && index.has_position_deletes());
    check_table(&index, &data_file("u", U, 0), &deletes, SEQ_TABLE);
    // global equality deletes, but not the unpartitioned position deletes, apply to a
    // file of another (partitioned) spec
    check_table(&index, &data_file("a", P, 0), &deletes, &[(0, &[0, 1])]);
}

#[test]
fn partitioned_delete_index() {
    let deletes = [
        eq(P, bucket(0), 4, "1"),
        eq(P, bucket(0), 6, "2"),
        pos(P, bucket(0), 5, "3"),
        pos(P, bucket(0), 6, "4"),
    ];
    let index = build(&deletes);
    check_table(&index, &data_file("a", P, 0), &deletes, SEQ_TABLE);
    // other partition, partition without deletes
    check_table(&index, &data_file("b", P, 0), &deletes, &[(0, &[])]);
    check_table(&index, &data_file("c", P, 0), &deletes, &[(0, &[])]);
    // same partition tuple under another spec id
    let mut other_spec = with_seq(&data_file("a", P, 0), 0);
    other_spec.spec_id = 2;
    assert!(index.for_data_file(&other_spec).unwrap().is_empty());
}

#[test]
fn min_sequence_number_filtering() {
    // Java filters with `afterSequenceNumber(4)`; here the caller drops older entries
    let all = [eq(U, vec![], 4, "1"), eq(U, vec![], 6, "2")];
    let kept: Vec<_> = all
        .iter()
        .filter(|e| e.data_sequence_number > 4)
        .cloned()
        .collect();
    let index = build(&kept);
    assert!(index.has_equality_deletes() && !index.has_position_deletes());
    assert_eq!(index.for_data_file(&data_file("u", U, 0)).unwrap().len(), 1);
}

/// Java's scan-level cases, as (data file, deletes, expected deletes by index).
#[test]
fn scan_cases() {
    struct Case {
        name: &'static str,
        data: Arc<ManifestEntry>,
        deletes: Vec<Arc<ManifestEntry>>,
        expected: &'static [usize],
    }
    let cases = [
        Case {
            name: "unpartitioned table: pos then eq deletes",
            data: data_file("u", U, 1),
            deletes: vec![pos(U, vec![], 2, "p"), eq(U, vec![], 3, "e")],
            expected: &[1, 0], // equality deletes are listed first
        },
        Case {
            name: "partition position deletes",
            data: data_file("a", P, 1),
            deletes: vec![pos(P, bucket(0), 2, "p")],
            expected: &[0],
        },
        Case {
            name: "partition equality deletes",
            data: data_file("a", P, 1),
            deletes: vec![eq(P, bucket(0), 2, "e")],
            expected: &[0],
        },
        Case {
            name: "unrelated partition deletes",
            data: data_file("b", P, 1),
            deletes: vec![pos(P, bucket(0), 2, "p"), eq(P, bucket(0), 2, "e")],
            expected: &[],
        },
        Case {
            name: "older partition deletes",
            data: data_file("a", P, 2),
            deletes: vec![pos(P, bucket(0), 1, "p"), eq(P, bucket(0), 1, "e")],
            expected: &[],
        },
        Case {
            name: "global deletes after spec change: only equality deletes are global",
            data: data_file("a", P, 1),
            deletes: vec![pos(U, vec![], 2, "p"), eq(U, vec![], 2, "e")],
            expected: &[1],
        },
        Case {
            name: "global and partition deletes",
            data: data_file("a", P, 1),
            deletes: vec![
                eq(P, bucket(0), 2, "ea"),
                pos(U, vec![], 3, "p"),
                eq(U, vec![], 3, "eu"),
            ],
            expected: &[2, 0],
        },
        Case {
            name: "partitioned: data, eq and pos deletes in one commit",
            data: data_file("a", P, 1),
            deletes: vec![eq(P, bucket(0), 1, "e"), pos(P, bucket(0), 1, "p")],
            expected: &[1],
        },
        Case {
            name: "unpartitioned: data, eq and pos deletes in one commit",
            data: data_file("u", U, 1),
            deletes: vec![pos(U, vec![], 1, "p"), eq(U, vec![], 1, "e")],
            expected: &[0],
        },
    ];
    for case in cases {
        let index = build(&case.deletes);
        let got = index.for_data_file(&case.data).unwrap();
        let want: Vec<_> = case
            .expected
            .iter()
            .map(|i| Arc::clone(&case.deletes[*i]))
            .collect();
        assert_eq!(paths(&got), paths(&want), "{}", case.name);
    }
}

#[test]
fn existing_delete_entries_apply_like_added_ones() {
    // Java testPartitionedTableWithExistingDeleteFile: merged delete manifests rewrite the
    // entries as EXISTING with their original sequence numbers
    let data = data_file("a", P, 1);
    let mut e = (*eq(P, bucket(0), 2, "e")).clone();
    e.status = ManifestStatus::Existing;
    let mut p = (*pos(P, bucket(0), 3, "p")).clone();
    p.status = ManifestStatus::Existing;
    let index = build(&[Arc::new(e), Arc::new(p)]);
    assert_eq!(
        paths(&index.for_data_file(&data).unwrap()),
        ["/eq-e.parquet", "/pos-p.parquet"]
    );
}

#[test]
fn position_delete_scoped_by_file_path_bounds() {
    // Java testPositionDeleteDiscardMetrics: equal file_path bounds make the delete file
    // apply to that one data file only
    let a = data_file("a", U, 1);
    let other = data_file("b", U, 1);
    let mut f = file(DataContentType::PositionDeletes, "/pos-a.parquet", vec![]);
    let path = a.data_file.file_path.as_bytes().to_vec();
    f.lower_bounds
        .insert(DELETE_FILE_PATH_FIELD_ID, path.clone());
    f.upper_bounds.insert(DELETE_FILE_PATH_FIELD_ID, path);
    let by_bounds = entry(U, 2, f);
    let mut g = file(
        DataContentType::PositionDeletes,
        "/pos-ref-a.parquet",
        vec![],
    );
    g.referenced_data_file = Some(a.data_file.file_path.clone());
    let by_ref = entry(U, 3, g);
    let index = build(&[by_bounds, by_ref]);
    assert_eq!(
        paths(&index.for_data_file(&a).unwrap()),
        ["/pos-a.parquet", "/pos-ref-a.parquet"]
    );
    assert!(index.for_data_file(&other).unwrap().is_empty());
    // unequal bounds: partition-scoped
    let mut h = file(
        DataContentType::PositionDeletes,
        "/pos-many.parquet",
        vec![],
    );
    h.lower_bounds
        .insert(DELETE_FILE_PATH_FIELD_ID, b"/path/a".to_vec());
    h.upper_bounds
        .insert(DELETE_FILE_PATH_FIELD_ID, b"/path/z".to_vec());
    assert_eq!(referenced_data_file(&h), None);
    let index = build(&[entry(U, 2, h)]);
    assert_eq!(index.for_data_file(&other).unwrap().len(), 1);
}

#[test]
fn position_deletes_group() {
    let files: Vec<_> = (1..=4)
        .map(|s| pos(P, bucket(0), s, &s.to_string()))
        .collect();
    let mut group = PositionDeletes::default();
    for i in [3, 1, 0, 2] {
        group.files.push(Arc::clone(&files[i]));
    }
    group.index();
    let table: &[(i64, &[usize])] = &[
        (0, &[0, 1, 2, 3]),
        (1, &[0, 1, 2, 3]),
        (2, &[1, 2, 3]),
        (3, &[2, 3]),
        (4, &[3]),
        (5, &[]),
    ];
    for (seq, expected) in table {
        let want: Vec<_> = expected.iter().map(|i| Arc::clone(&files[*i])).collect();
        assert_eq!(paths(group.filter(*seq)), paths(&want), "seq {seq}");
    }
}

#[test]
fn equality_deletes_group() {
    let schema = schema();
    let files: Vec<_> = (1..=4)
        .map(|s| eq(P, bucket(0), s, &s.to_string()))
        .collect();
    let mut group = EqualityDeletes::default();
    for i in [3, 1, 0, 2] {
        group
            .files
            .push(equality_delete_file(Arc::clone(&files[i]), &[&schema]));
    }
    group.index();
    let data = data_file("a", P, 0);
    // indexed by data sequence number - 1, so they apply to later data only
    let table: &[(i64, &[usize])] = &[
        (0, &[0, 1, 2, 3]),
        (1, &[1, 2, 3]),
        (2, &[2, 3]),
        (3, &[3]),
        (4, &[]),
    ];
    for (seq, expected) in table {
        let mut got = vec![];
        group.filter(*seq, &data.data_file, &mut got);
        let want: Vec<_> = expected.iter().map(|i| Arc::clone(&files[*i])).collect();
        assert_eq!(paths(&got), paths(&want), "seq {seq}");
    }
}

#[test]
fn mix_delete_files_and_dvs() {
    let a = data_file("a", P, 0);
    let b = data_file("b", P, 0);
    let deletes = [
        pos(P, bucket(0), 1, "a1"),
        dv(&a, 2, "a"),
        pos(P, bucket(1), 1, "b1"),
        pos(P, bucket(1), 2, "b2"),
    ];
    let index = build(&deletes);
    let for_a = index.for_data_file(&a).unwrap();
    assert_eq!(
        paths(&for_a),
        ["/dv-a.puffin"],
        "only the DV applies to FILE_A"
    );
    assert_eq!(
        for_a[0].data_file.referenced_data_file.as_deref(),
        Some(a.data_file.file_path.as_str())
    );
    let for_b = index.for_data_file(&b).unwrap();
    assert_eq!(paths(&for_b), ["/pos-b1.parquet", "/pos-b2.parquet"]);
    assert!(for_b.iter().all(|d| !is_deletion_vector(&d.data_file)));
}

#[test]
fn dv_with_equality_deletes() {
    let a = data_file("a", P, 1);
    let deletes = [
        eq(P, bucket(0), 3, "e"),
        dv(&a, 2, "a"),
        pos(P, bucket(0), 2, "old"),
    ];
    let index = build(&deletes);
    assert_eq!(
        paths(&index.for_data_file(&a).unwrap()),
        ["/eq-e.parquet", "/dv-a.puffin"]
    );
}

#[test]
fn multiple_dvs_are_an_error() {
    let a = data_file("a", P, 0);
    let schema = schema();
    let err =
        DeleteFileIndex::new([dv(&a, 1, "1"), dv(&a, 2, "2")], &specs(), &[&schema]).unwrap_err();
    assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
    assert!(
        err.to_string()
            .contains("two deletion vectors for data file '/path/to/data-a.parquet'"),
        "{err}"
    );
}

#[test]
fn invalid_dv_sequence_number() {
    let a = data_file("a", P, 0);
    let index = build(&[dv(&a, 1, "1")]);
    let err = index.for_data_file(&with_seq(&a, 2)).unwrap_err();
    assert!(err.to_string().contains("lower than 2"), "{err}");
    assert_eq!(index.for_data_file(&with_seq(&a, 1)).unwrap().len(), 1);
}

#[test]
fn file_scoped_delete_with_mismatched_partition_is_an_error() {
    let a = data_file("a", P, 1);
    let mut f = file(
        DataContentType::PositionDeletes,
        "/pos-wrong.parquet",
        bucket(5),
    );
    f.referenced_data_file = Some(a.data_file.file_path.clone());
    let index = build(&[entry(P, 2, f)]);
    let err = index.for_data_file(&a).unwrap_err();
    assert!(
        err.to_string().contains("/pos-wrong.parquet") && err.to_string().contains("corrupted"),
        "{err}"
    );
}

#[test]
fn partition_tuples_compare_nan_and_null() {
    let spec = PartitionSpec {
        spec_id: 7,
        fields: vec![
            PartitionField {
                source_id: 3,
                field_id: Some(1000),
                name: "d".into(),
                transform: Transform::Identity,
            },
            PartitionField {
                source_id: 2,
                field_id: Some(1001),
                name: "data".into(),
                transform: Transform::Identity,
            },
        ],
    };
    let part = |d: f64, s: Option<&str>| {
        vec![
            Some(Literal::Double(d)),
            s.map(|s| Literal::String(s.into())),
        ]
    };
    let other_nan = f64::from_bits(f64::NAN.to_bits() | 1);
    let data = entry(
        7,
        1,
        file(DataContentType::Data, "/d.parquet", part(f64::NAN, None)),
    );
    let deletes = [
        pos(7, part(other_nan, None), 2, "nan-null"),
        pos(7, part(f64::NAN, Some("x")), 2, "nan-x"),
        pos(7, part(0.0, None), 2, "zero"),
    ];
    let schema = schema();
    let index = DeleteFileIndex::new(deletes.iter().cloned(), &[spec], &[&schema]).unwrap();
    assert_eq!(
        paths(&index.for_data_file(&data).unwrap()),
        ["/pos-nan-null.parquet"]
    );
}

fn stats(f: &mut DataFile, id: i32, values: i64, nulls: i64, bounds: Option<(Literal, Literal)>) {
    f.value_counts.insert(id, values);
    f.null_value_counts.insert(id, nulls);
    if let Some((lo, hi)) = bounds {
        let enc = |l: &Literal| match l {
            Literal::Int(v) => v.to_le_bytes().to_vec(),
            Literal::Double(v) => v.to_le_bytes().to_vec(),
            Literal::String(s) => s.as_bytes().to_vec(),
            other => panic!("no encoder for {other}"),
        };
        f.lower_bounds.insert(id, enc(&lo));
        f.upper_bounds.insert(id, enc(&hi));
    }
}

#[test]
fn equality_deletes_skipped_by_statistics() {
    type Stats = (i64, i64, Option<(Literal, Literal)>);
    let s = |lo: &str, hi: &str| Some((Literal::String(lo.into()), Literal::String(hi.into())));
    let i = |lo: i32, hi: i32| Some((Literal::Int(lo), Literal::Int(hi)));
    let d = |lo: f64, hi: f64| Some((Literal::Double(lo), Literal::Double(hi)));
    // (name, equality field id, data stats, delete stats, applies)
    let cases: Vec<(&str, i32, Stats, Stats, bool)> = vec![
        (
            "ranges overlap",
            2,
            (10, 0, s("a", "m")),
            (2, 0, s("k", "z")),
            true,
        ),
        (
            "data below deletes",
            2,
            (10, 0, s("a", "c")),
            (2, 0, s("k", "z")),
            false,
        ),
        (
            "data above deletes",
            2,
            (10, 0, s("x", "z")),
            (2, 0, s("a", "c")),
            false,
        ),
        (
            "touching bounds",
            2,
            (10, 0, s("a", "k")),
            (2, 0, s("k", "z")),
            true,
        ),
        (
            "both have nulls",
            2,
            (10, 3, s("x", "z")),
            (2, 1, s("a", "c")),
            true,
        ),
        (
            "all-null data, non-null deletes",
            2,
            (10, 10, None),
            (2, 0, s("a", "c")),
            false,
        ),
        (
            "null-only deletes, data without nulls",
            2,
            (10, 0, s("a", "c")),
            (2, 2, None),
            false,
        ),
        (
            "null-only deletes, data with nulls",
            2,
            (10, 1, s("a", "c")),
            (2, 2, None),
            true,
        ),
        (
            "required int disjoint",
            1,
            (10, 0, i(1, 5)),
            (2, 0, i(10, 20)),
            false,
        ),
        (
            "required int overlap",
            1,
            (10, 0, i(1, 15)),
            (2, 0, i(10, 20)),
            true,
        ),
        (
            "doubles never skip by bounds (NaN)",
            3,
            (10, 0, d(1.0, 2.0)),
            (2, 0, d(5.0, 6.0)),
            true,
        ),
        (
            "no data bounds",
            2,
            (10, 0, None),
            (2, 0, s("k", "z")),
            true,
        ),
    ];
    for (name, id, (dv, dn, db), (ev, en, eb), applies) in cases {
        let mut data = file(DataContentType::Data, "/d.parquet", vec![]);
        stats(&mut data, id, dv, dn, db);
        let mut del = file(DataContentType::EqualityDeletes, "/e.parquet", vec![]);
        del.equality_ids = vec![id];
        stats(&mut del, id, ev, en, eb);
        let index = build(&[entry(U, 2, del)]);
        let got = index.for_data_file(&entry(U, 1, data)).unwrap();
        assert_eq!(got.len() == 1, applies, "{name}");
    }
}

#[test]
fn rejects_data_files_and_unknown_specs() {
    let schema = schema();
    let err = DeleteFileIndex::new([data_file("a", P, 1)], &specs(), &[&schema]).unwrap_err();
    assert!(err.to_string().contains("is a data file"), "{err}");
    let err = DeleteFileIndex::new([eq(9, vec![], 1, "x")], &specs(), &[&schema]).unwrap_err();
    assert!(err.to_string().contains("partition spec 9"), "{err}");
}
