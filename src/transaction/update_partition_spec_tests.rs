//! `UpdatePartitionSpec` and `ReplaceSortOrder` over metadata built in memory: ids, names,
//! v1 void fields, spec reuse and the refusals (the SQL and commit paths are tested in
//! `datafusion::sql` and `tests/integration/partition_evolution.rs`).

use super::*;
use crate::error::ErrorKind;
use crate::spec::sort_order::SortOrder;
use crate::spec::{PrimitiveType, TableMetadataBuilder};
use crate::transaction::{NullOrder, ReplaceSortOrder, SortDirection};

fn metadata(version: FormatVersion) -> TableMetadata {
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "s", Type::Primitive(PrimitiveType::String)),
            NestedField::optional(3, "ts", Type::Primitive(PrimitiveType::Timestamp)),
            NestedField::optional(4, "f", Type::Primitive(PrimitiveType::Double)),
        ],
    );
    let spec = PartitionSpec {
        spec_id: 0,
        fields: vec![PartitionField {
            source_id: 3,
            field_id: Some(1000),
            name: "ts_day".into(),
            transform: Transform::Day,
        }],
    };
    let unsorted = SortOrder {
        order_id: 0,
        fields: vec![],
    };
    TableMetadataBuilder::new_table(
        version,
        "file:///t",
        schema,
        spec,
        unsorted,
        Default::default(),
    )
    .unwrap()
    .build()
    .unwrap()
}

fn evolve(m: &TableMetadata, updates: Vec<TableUpdate>) -> TableMetadata {
    let mut b = TableMetadataBuilder::from_base(m.clone(), None);
    b.apply_all(&updates).unwrap();
    b.build().unwrap()
}

fn update(m: &TableMetadata, u: UpdatePartitionSpec) -> TableMetadata {
    evolve(m, u.updates_for(m).unwrap())
}

fn fields(m: &TableMetadata) -> Vec<(i32, String, String)> {
    m.default_partition_spec()
        .unwrap()
        .fields
        .iter()
        .map(|f| (f.field_id.unwrap(), f.name.clone(), f.transform.to_string()))
        .collect()
}

fn term(t: Transform, c: &str) -> PartitionTerm {
    PartitionTerm::new(t, c)
}

fn err(m: &TableMetadata, u: UpdatePartitionSpec) -> (ErrorKind, String) {
    let e = u.updates_for(m).unwrap_err();
    (e.kind(), e.to_string())
}

#[test]
fn adds_with_java_default_names_and_new_ids() {
    let m = metadata(FormatVersion::V2);
    let m = update(
        &m,
        UpdatePartitionSpec::new()
            .add_field(term(Transform::Bucket(16), "id"), None)
            .add_field(term(Transform::Truncate(4), "s"), None)
            .add_field(term(Transform::Identity, "f"), None),
    );
    assert_eq!(m.default_spec_id, 1);
    assert_eq!(m.last_partition_id, 1003);
    assert_eq!(
        fields(&m),
        [
            (1000, "ts_day".into(), "day".into()),
            (1001, "id_bucket_16".into(), "bucket[16]".into()),
            (1002, "s_trunc_4".into(), "truncate[4]".into()),
            (1003, "f".into(), "identity".into()),
        ]
    );
    // the first spec is kept for the files written under it
    assert_eq!(m.partition_specs.len(), 2);
}

#[test]
fn v2_removes_fields_and_never_reuses_ids_for_new_fields() {
    let m = metadata(FormatVersion::V2);
    let m = update(
        &m,
        UpdatePartitionSpec::new()
            .remove_field(PartitionFieldRef::Name("ts_day".into()))
            .add_field(term(Transform::Hour, "ts"), Some("hr".into())),
    );
    assert_eq!(fields(&m), [(1001, "hr".into(), "hour".into())]);
    let m = update(
        &m,
        UpdatePartitionSpec::new()
            .remove_field(PartitionFieldRef::Term(term(Transform::Hour, "ts")))
            .add_field(term(Transform::Month, "ts"), None),
    );
    assert_eq!(fields(&m), [(1002, "ts_month".into(), "month".into())]);
    assert_eq!((m.default_spec_id, m.last_partition_id), (2, 1002));
}

#[test]
fn v2_re_adding_an_earlier_field_reuses_its_spec_and_id() {
    let m0 = metadata(FormatVersion::V2);
    let m1 = update(
        &m0,
        UpdatePartitionSpec::new().remove_field(PartitionFieldRef::Name("ts_day".into())),
    );
    assert_eq!(fields(&m1), []);
    assert_eq!(m1.default_spec_id, 1);
    // day(ts) again: the same field (id 1000, name ts_day), so the same spec 0
    let m2 = update(
        &m1,
        UpdatePartitionSpec::new().add_field(term(Transform::Day, "ts"), None),
    );
    assert_eq!(m2.default_spec_id, 0);
    assert_eq!(fields(&m2), [(1000, "ts_day".into(), "day".into())]);
    assert_eq!(m2.partition_specs.len(), 2);
    assert_eq!(m2.last_partition_id, 1000);
}

#[test]
fn v1_keeps_removed_fields_as_void() {
    let m = metadata(FormatVersion::V1);
    let m = update(
        &m,
        UpdatePartitionSpec::new()
            .remove_field(PartitionFieldRef::Name("ts_day".into()))
            .add_field(term(Transform::Bucket(8), "id"), None),
    );
    assert_eq!(
        fields(&m),
        [
            (1000, "ts_day".into(), "void".into()),
            (1001, "id_bucket_8".into(), "bucket[8]".into()),
        ]
    );
    // a new field taking the void field's name renames the void one
    let m = update(
        &m,
        UpdatePartitionSpec::new()
            .remove_field(PartitionFieldRef::Name("id_bucket_8".into()))
            .add_field(term(Transform::Bucket(4), "id"), Some("id_bucket_8".into())),
    );
    assert_eq!(
        fields(&m),
        [
            (1000, "ts_day".into(), "void".into()),
            (1001, "id_bucket_8_1001".into(), "void".into()),
            (1002, "id_bucket_8".into(), "bucket[4]".into()),
        ]
    );
}

#[test]
fn v1_re_adding_a_dropped_field_renames_the_void_one() {
    // dropped in one commit, added back in the next (Java `BaseUpdatePartitionSpec`)
    let m = metadata(FormatVersion::V1);
    let m = update(
        &m,
        UpdatePartitionSpec::new().remove_field(PartitionFieldRef::Name("ts_day".into())),
    );
    assert_eq!(fields(&m), [(1000, "ts_day".into(), "void".into())]);
    let m = update(
        &m,
        UpdatePartitionSpec::new().add_field(term(Transform::Day, "ts"), None),
    );
    assert_eq!(
        fields(&m),
        [
            (1000, "ts_day_1000".into(), "void".into()),
            (1001, "ts_day".into(), "day".into()),
        ]
    );
    assert_eq!(m.last_partition_id, 1001);
    assert_eq!(m.default_spec_id, 2);
    // the same with an identity field named as its column, and an explicit name
    let m = update(
        &m,
        UpdatePartitionSpec::new()
            .add_field(term(Transform::Identity, "s"), None)
            .remove_field(PartitionFieldRef::Name("ts_day".into())),
    );
    let m = update(
        &m,
        UpdatePartitionSpec::new().remove_field(PartitionFieldRef::Name("s".into())),
    );
    let m = update(
        &m,
        UpdatePartitionSpec::new()
            .add_field(term(Transform::Identity, "s"), None)
            .add_field(term(Transform::Bucket(2), "id"), Some("ts_day".into())),
    );
    assert_eq!(
        fields(&m),
        [
            (1000, "ts_day_1000".into(), "void".into()),
            (1001, "ts_day_1001".into(), "void".into()),
            (1002, "s_1002".into(), "void".into()),
            (1003, "s".into(), "identity".into()),
            (1004, "ts_day".into(), "bucket[2]".into()),
        ]
    );
    // a non-void field's name is still refused
    let (kind, e) = err(
        &m,
        UpdatePartitionSpec::new().add_field(term(Transform::Bucket(4), "id"), Some("s".into())),
    );
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(e.contains("partition field name 's' is used twice"), "{e}");
}

#[test]
fn removing_and_adding_the_same_field_renames_it() {
    let m = metadata(FormatVersion::V2);
    let m = update(
        &m,
        UpdatePartitionSpec::new().replace_field(
            PartitionFieldRef::Name("ts_day".into()),
            term(Transform::Day, "ts"),
            Some("day".into()),
        ),
    );
    assert_eq!(fields(&m), [(1000, "day".into(), "day".into())]);
    assert_eq!(m.last_partition_id, 1000);
}

#[test]
fn no_change_commits_nothing() {
    let m = metadata(FormatVersion::V2);
    let u = UpdatePartitionSpec::new().replace_field(
        PartitionFieldRef::Name("ts_day".into()),
        term(Transform::Day, "ts"),
        None,
    );
    assert!(u.updates_for(&m).unwrap().is_empty());
}

#[test]
fn refusals_name_the_field_and_the_rule() {
    let m = metadata(FormatVersion::V2);
    let cases: Vec<(UpdatePartitionSpec, ErrorKind, &str)> = vec![
        (
            UpdatePartitionSpec::new().add_field(term(Transform::Identity, "nope"), None),
            ErrorKind::NotFound,
            "column 'nope' does not exist",
        ),
        (
            UpdatePartitionSpec::new().add_field(term(Transform::Year, "id"), None),
            ErrorKind::InvalidArgument,
            "transform year cannot apply to column 'id' of type long",
        ),
        (
            UpdatePartitionSpec::new().add_field(term(Transform::Bucket(4), "f"), None),
            ErrorKind::InvalidArgument,
            "transform bucket[4] cannot apply to column 'f' of type double",
        ),
        (
            UpdatePartitionSpec::new().add_field(term(Transform::Day, "ts"), Some("d2".into())),
            ErrorKind::InvalidArgument,
            "the spec already has 'ts_day' (day)",
        ),
        (
            UpdatePartitionSpec::new().add_field(term(Transform::Hour, "ts"), None),
            ErrorKind::InvalidArgument,
            "the spec already has 'ts_day' (day)",
        ),
        (
            UpdatePartitionSpec::new()
                .add_field(term(Transform::Bucket(4), "id"), None)
                .add_field(term(Transform::Bucket(4), "id"), Some("b".into())),
            ErrorKind::InvalidArgument,
            "is added twice",
        ),
        (
            UpdatePartitionSpec::new()
                .add_field(term(Transform::Bucket(4), "id"), Some("x".into()))
                .add_field(term(Transform::Truncate(4), "s"), Some("x".into())),
            ErrorKind::InvalidArgument,
            "partition field name 'x' is used twice",
        ),
        (
            UpdatePartitionSpec::new()
                .add_field(term(Transform::Bucket(4), "id"), Some("s".into())),
            ErrorKind::InvalidArgument,
            "partition field name 's' is the name of a column",
        ),
        (
            UpdatePartitionSpec::new().remove_field(PartitionFieldRef::Name("nope".into())),
            ErrorKind::NotFound,
            "partition field 'nope' is not in the current partition spec 0 (ts_day: day)",
        ),
        (
            UpdatePartitionSpec::new()
                .remove_field(PartitionFieldRef::Term(term(Transform::Bucket(16), "id"))),
            ErrorKind::NotFound,
            "partition field bucket(16, id) is not in the current partition spec",
        ),
        (
            UpdatePartitionSpec::new()
                .add_field(term(Transform::Bucket(4), "id"), None)
                .remove_field(PartitionFieldRef::Name("id_bucket_4".into())),
            ErrorKind::NotFound,
            "partition field 'id_bucket_4' is not in the current partition spec",
        ),
    ];
    for (u, kind, text) in cases {
        let (k, msg) = err(&m, u);
        assert_eq!(k, kind, "{msg}");
        assert!(msg.contains(text), "{msg:?} should contain {text:?}");
    }
}

#[test]
fn sort_orders_get_new_ids_and_reuse_equal_ones() {
    let m = metadata(FormatVersion::V2);
    let order = ReplaceSortOrder::new()
        .sort_by(term(Transform::Identity, "id"), SortDirection::Asc, None)
        .sort_by(term(Transform::Bucket(4), "s"), SortDirection::Desc, None);
    let m = evolve(&m, order.updates_for(&m).unwrap());
    assert_eq!(m.default_sort_order_id, 1);
    let o = m.sort_orders.iter().find(|o| o.order_id == 1).unwrap();
    assert_eq!(
        o.fields
            .iter()
            .map(|f| (
                f.source_id,
                f.transform.to_string(),
                f.direction.as_str(),
                f.null_order.as_str()
            ))
            .collect::<Vec<_>>(),
        [
            (1, "identity".into(), "asc", "nulls-first"),
            (2, "bucket[4]".into(), "desc", "nulls-last"),
        ]
    );
    let unsorted = ReplaceSortOrder::new();
    let m = evolve(&m, unsorted.updates_for(&m).unwrap());
    assert_eq!(m.default_sort_order_id, 0);
    // the same order again: id 1, nothing added
    let m = evolve(&m, order.updates_for(&m).unwrap());
    assert_eq!((m.default_sort_order_id, m.sort_orders.len()), (1, 2));
    assert!(order.updates_for(&m).unwrap().is_empty());
    let other = ReplaceSortOrder::new().sort_by(
        term(Transform::Identity, "id"),
        SortDirection::Asc,
        Some(NullOrder::Last),
    );
    let m = evolve(&m, other.updates_for(&m).unwrap());
    assert_eq!(m.default_sort_order_id, 2);
    for (bad, text) in [
        (
            term(Transform::Identity, "nope"),
            "column 'nope' does not exist",
        ),
        (
            term(Transform::Day, "id"),
            "transform day cannot apply to column 'id'",
        ),
    ] {
        let e = ReplaceSortOrder::new()
            .sort_by(bad, SortDirection::Asc, None)
            .updates_for(&m)
            .unwrap_err();
        assert!(e.to_string().contains(text), "{e}");
    }
}
