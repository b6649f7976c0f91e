//! Round trips: what the writer writes, the reader reads back.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{Int32Array, Int64Array, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::SessionContext;

use super::*;
use crate::spec::{
    DataContentType, Literal, ManifestContent, PartitionField, PartitionSpec, PrimitiveType,
    TableMetadata, Transform,
};
use crate::{IcebergTableProvider, Table};

fn field(name: &str, dt: DataType, id: i32, nullable: bool) -> Field {
    Field::new(name, dt, nullable).with_metadata(HashMap::from([(
        "PARQUET:field_id".to_string(),
        id.to_string(),
    )]))
}

fn write_parquet(path: &Path, ids: Vec<i64>, names: Vec<Option<&str>>, p: Vec<i32>) {
    let schema = Arc::new(ArrowSchema::new(vec![
        field("id", DataType::Int64, 1, false),
        field("name", DataType::Utf8, 2, true),
        field("p", DataType::Int32, 3, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(names)),
            Arc::new(Int32Array::from(p)),
        ],
    )
    .expect("batch");
    let file = std::fs::File::create(path).expect("create");
    let mut w = ArrowWriter::try_new(file, schema, None).expect("writer");
    w.write(&batch).expect("write");
    w.close().expect("close");
}

#[tokio::test]
async fn add_files_round_trips_through_the_reader() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a.parquet");
    let b = dir.path().join("b.parquet");
    write_parquet(
        &a,
        vec![1, 2, 3],
        vec![Some("x"), None, Some("z")],
        vec![1, 1, 1],
    );
    write_parquet(&b, vec![10, 20], vec![Some("m"), Some("n")], vec![2, 2]);
    let schema = schema_from_parquet(&a).expect("schema");
    assert_eq!(schema.primitive_type(1), Some(PrimitiveType::Long));
    assert!(schema.field_by_id(1).is_some_and(|f| f.required));
    let root = dir.path().join("table");
    let mut w = LocalTableWriter::create(
        &root,
        schema,
        PartitionSpec::unpartitioned(),
        HashMap::new(),
    )
    .expect("create");
    w.add_parquet_files(std::slice::from_ref(&a))
        .expect("first commit");
    w.add_parquet_files(std::slice::from_ref(&b))
        .expect("second commit");

    let table = Table::open(&root.to_string_lossy()).await.expect("open");
    assert_eq!(table.metadata().last_sequence_number, 2);
    let plan =
        crate::scan::TableScan::new(table.clone(), table.metadata().current_snapshot().cloned())
            .plan_files()
            .await
            .expect("plan");
    assert_eq!(plan.tasks.len(), 2);
    let first = plan
        .tasks
        .iter()
        .find(|t| t.location.ends_with("a.parquet"))
        .expect("a.parquet planned");
    let f = first.data_file();
    assert_eq!(f.record_count, 3);
    assert_eq!(f.null_value_counts.get(&2), Some(&1));
    assert_eq!(f.value_counts.get(&1), Some(&3));
    let lo = Literal::from_bytes(&f.lower_bounds[&1], &PrimitiveType::Long).expect("lower");
    let hi = Literal::from_bytes(&f.upper_bounds[&2], &PrimitiveType::String).expect("upper");
    assert_eq!((lo, hi), (Literal::Long(1), Literal::String("z".into())));
    assert_eq!(first.entry.data_sequence_number, 1);

    let ctx = SessionContext::new();
    let provider = IcebergTableProvider::try_new(table).expect("provider");
    ctx.register_table("t", Arc::new(provider))
        .expect("register");
    let batches = ctx
        .sql("SELECT count(*), sum(id), count(name) FROM t WHERE id > 2")
        .await
        .expect("sql")
        .collect()
        .await
        .expect("collect");
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .expect("format")
        .to_string();
    assert!(
        text.contains("| 3        | 33        | 3             |"),
        "{text}"
    );
}

#[test]
fn partitioned_manifest_and_list_round_trip() {
    let schema = crate::spec::Schema::new(
        0,
        vec![
            crate::spec::NestedField::required(
                1,
                "id",
                crate::spec::Type::Primitive(PrimitiveType::Long),
            ),
            crate::spec::NestedField::required(
                2,
                "p",
                crate::spec::Type::Primitive(PrimitiveType::Int),
            ),
        ],
    );
    let spec = PartitionSpec {
        spec_id: 0,
        fields: vec![PartitionField {
            source_id: 2,
            field_id: Some(1000),
            name: "p".into(),
            transform: Transform::Identity,
        }],
    };
    let mut w =
        ManifestWriter::new(&[&schema], &spec, ManifestContent::Data, 7, 3).expect("writer");
    for p in [5, 2, 9] {
        let mut f = empty_data_file(&format!("f{p}.parquet"), DataContentType::Data);
        f.partition = vec![Some(Literal::Int(p))];
        f.record_count = 10;
        w.add(&NewEntry::added(f)).expect("add");
    }
    let (bytes, mf) = w.finish("m.avro").expect("finish");
    assert_eq!(mf.added_files_count, Some(3));
    assert_eq!(mf.added_rows_count, Some(30));
    let summary = &mf.partitions.as_ref().expect("summaries")[0];
    assert_eq!(
        summary.lower_bound.as_deref(),
        Some(&2i32.to_le_bytes()[..])
    );
    assert_eq!(
        summary.upper_bound.as_deref(),
        Some(&9i32.to_le_bytes()[..])
    );

    let list = write_manifest_list(std::slice::from_ref(&mf), 7, None, 3).expect("list");
    let read_list =
        crate::spec::manifest_list::parse_manifest_list(&list, "list").expect("read list");
    assert_eq!(read_list, vec![mf.clone()]);
    let entries = crate::spec::manifest::parse_manifest(&bytes, "m.avro", &mf, &spec, &[&schema])
        .expect("read");
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[1].data_file.partition, vec![Some(Literal::Int(2))]);
    assert_eq!(
        (entries[1].data_sequence_number, entries[1].snapshot_id),
        (3, 7)
    );
    assert_eq!(entries[0].data_file.content, DataContentType::Data);
}

#[test]
fn metadata_json_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let schema = crate::spec::Schema::new(
        0,
        vec![crate::spec::NestedField::optional(
            1,
            "x",
            crate::spec::Type::Primitive(PrimitiveType::Date),
        )],
    );
    let mut w = LocalTableWriter::create(
        dir.path(),
        schema,
        PartitionSpec::unpartitioned(),
        HashMap::new(),
    )
    .expect("create");
    w.append(vec![]).expect("empty append");
    let json = table_metadata_to_json(w.metadata()).expect("json");
    let back = TableMetadata::from_json(&json).expect("parse");
    assert_eq!(&back, w.metadata());
}

#[test]
fn partition_values_of_every_identity_type_round_trip() {
    use crate::spec::{NestedField, Schema, Type};
    let types = [
        (
            PrimitiveType::Decimal {
                precision: 9,
                scale: 2,
            },
            Literal::Decimal {
                unscaled: -12345,
                precision: 9,
                scale: 2,
            },
        ),
        (
            PrimitiveType::Decimal {
                precision: 38,
                scale: 10,
            },
            Literal::Decimal {
                unscaled: 10i128.pow(37) + 7,
                precision: 38,
                scale: 10,
            },
        ),
        (PrimitiveType::Uuid, Literal::Uuid([7; 16])),
        (PrimitiveType::Fixed(3), Literal::Fixed(vec![1, 2, 3])),
        (
            PrimitiveType::TimestampNs,
            Literal::TimestampNs(-1_000_000_001),
        ),
        (
            PrimitiveType::TimestamptzNs,
            Literal::TimestamptzNs(1_700_000_000_123_456_789),
        ),
    ];
    let schema = Schema::new(
        0,
        types
            .iter()
            .enumerate()
            .map(|(i, (t, _))| {
                NestedField::optional(i as i32 + 1, format!("c{i}"), Type::Primitive(*t))
            })
            .collect(),
    );
    let spec = identity_spec(types.len());
    let mut w =
        ManifestWriter::new(&[&schema], &spec, ManifestContent::Data, 1, 1).expect("writer");
    let mut f = empty_data_file("f.parquet", DataContentType::Data);
    f.partition = types.iter().map(|(_, v)| Some(v.clone())).collect();
    w.add(&NewEntry::added(f.clone())).expect("add");
    let mut nulls = empty_data_file("g.parquet", DataContentType::Data);
    nulls.partition = vec![None; types.len()];
    w.add(&NewEntry::added(nulls)).expect("add nulls");
    let (bytes, mf) = w.finish("m.avro").expect("finish");
    let entries = crate::spec::manifest::parse_manifest(&bytes, "m.avro", &mf, &spec, &[&schema])
        .expect("read");
    assert_eq!(entries[0].data_file.partition, f.partition);
    assert_eq!(entries[1].data_file.partition, vec![None; types.len()]);
    assert_eq!(super::manifest::decimal_required_bytes(9), 4);
    assert_eq!(super::manifest::decimal_required_bytes(38), 16);
    assert_eq!(super::manifest::decimal_required_bytes(18), 8);
}

/// Spec 0 of `n` identity fields `c0`…, field ids 1000…, over source ids 1….
fn identity_spec(n: usize) -> PartitionSpec {
    PartitionSpec {
        spec_id: 0,
        fields: (0..n)
            .map(|i| PartitionField {
                source_id: i as i32 + 1,
                field_id: Some(1000 + i as i32),
                name: format!("c{i}"),
                transform: Transform::Identity,
            })
            .collect(),
    }
}

/// The `avro.schema` a manifest's header states types its partition values as the spec's
/// Avro mapping and Java's `TypeToSchema` do: `timestamptz` (and `timestamptz_ns`) with
/// `adjust-to-utc: true`, `timestamp` with `false`, a decimal's `logicalType`,
/// `precision` and `scale` once each. apache-avro's schema serialization had dropped
/// `adjust-to-utc` (a `timestamptz` field read as `timestamp`) and repeated the decimal
/// attributes (a JSON object with duplicate keys).
#[test]
fn manifest_headers_state_partition_types_as_the_spec_maps_them() {
    use crate::spec::{FormatVersion, NestedField, Schema, Type};
    let types = [
        PrimitiveType::Timestamptz,
        PrimitiveType::Timestamp,
        PrimitiveType::TimestamptzNs,
        PrimitiveType::Decimal {
            precision: 9,
            scale: 2,
        },
    ];
    let schema = Schema::new(
        0,
        types
            .iter()
            .enumerate()
            .map(|(i, t)| NestedField::optional(i as i32 + 1, format!("c{i}"), Type::Primitive(*t)))
            .collect(),
    );
    let spec = identity_spec(types.len());
    for version in [FormatVersion::V1, FormatVersion::V2, FormatVersion::V3] {
        let mut w = ManifestWriter::new(&[&schema], &spec, ManifestContent::Data, 1, 1)
            .expect("writer")
            .with_format_version(version)
            .expect("version");
        let mut f = empty_data_file("f.parquet", DataContentType::Data);
        f.partition = vec![
            Some(Literal::Timestamptz(-1)),
            Some(Literal::Timestamp(-1)),
            Some(Literal::TimestamptzNs(-1)),
            Some(Literal::Decimal {
                unscaled: -5,
                precision: 9,
                scale: 2,
            }),
        ];
        w.add(&NewEntry::added(f.clone())).expect("add");
        let (bytes, mf) = w.finish("m.avro").expect("finish");
        let header = arrow_avro::reader::read_header_info(bytes.as_slice()).expect("header");
        let json = header.writer_schema().expect("schema").json_string;
        assert_eq!(
            json.matches("\"precision\"").count(),
            1,
            "{version:?}: {json}"
        );
        assert_eq!(
            json.matches("\"logicalType\":\"decimal\"").count(),
            1,
            "{json}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        let data_file = parsed["fields"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["name"] == "data_file"))
            .expect("data_file");
        let partition = data_file["type"]["fields"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["name"] == "partition"))
            .expect("partition");
        let types: Vec<&serde_json::Value> = partition["type"]["fields"]
            .as_array()
            .expect("fields")
            .iter()
            .map(|f| &f["type"][1])
            .collect();
        assert_eq!(
            types,
            [
                &serde_json::json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true}),
                &serde_json::json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false}),
                &serde_json::json!({"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": true}),
                &serde_json::json!({"type": "fixed", "name": "decimal_1003", "size": 4,
                    "logicalType": "decimal", "precision": 9, "scale": 2}),
            ],
            "{version:?}"
        );
        // the records are unchanged: they read back
        let entries =
            crate::spec::manifest::parse_manifest(&bytes, "m.avro", &mf, &spec, &[&schema])
                .expect("read");
        assert_eq!(entries[0].data_file.partition, f.partition, "{version:?}");
    }
}

/// A manifest of an old spec whose source columns the current schema dropped (written
/// when a row-level change rewrites it or adds delete files under that spec): its
/// partition values are written with the type of the newest schema that still has the
/// column, and read back equal, in v2 and v3 layouts. Without any schema holding an
/// identity field's column, the writer refuses, naming the field, spec and column id.
#[test]
fn manifests_of_a_spec_whose_source_columns_were_dropped_keep_their_values() {
    use crate::spec::{FormatVersion, NestedField, Schema, Type};
    let prim = |p: PrimitiveType| Type::Primitive(p);
    let old = Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", prim(PrimitiveType::Long)),
            NestedField::optional(2, "p", prim(PrimitiveType::Int)),
            NestedField::optional(3, "d", prim(PrimitiveType::Date)),
            NestedField::optional(4, "s", prim(PrimitiveType::String)),
        ],
    );
    let current = Schema::new(
        1,
        vec![
            NestedField::optional(1, "id", prim(PrimitiveType::Long)),
            NestedField::optional(4, "s", prim(PrimitiveType::String)),
        ],
    );
    let field = |source_id, id, name: &str, transform| PartitionField {
        source_id,
        field_id: Some(id),
        name: name.into(),
        transform,
    };
    let spec = PartitionSpec {
        spec_id: 0,
        fields: vec![
            field(2, 1000, "p", Transform::Identity),
            field(2, 1001, "p_bucket", Transform::Bucket(4)),
            field(3, 1002, "d_month", Transform::Month),
            field(3, 1003, "d", Transform::Identity),
        ],
    };
    // as `TableMetadata::schemas_newest_first` lists them
    let schemas = [&current, &current, &old];
    let values = vec![
        Some(Literal::Int(7)),
        Some(Literal::Int(3)),
        Some(Literal::Int(665)),
        Some(Literal::Date(20_250)),
    ];
    for version in [FormatVersion::V2, FormatVersion::V3] {
        for content in [ManifestContent::Data, ManifestContent::Deletes] {
            let mut w = ManifestWriter::new(&schemas, &spec, content, 5, 2)
                .and_then(|w| w.with_format_version(version))
                .expect("writer");
            let kind = match content {
                ManifestContent::Data => DataContentType::Data,
                ManifestContent::Deletes => DataContentType::PositionDeletes,
            };
            let mut f = empty_data_file("f.parquet", kind);
            f.partition = values.clone();
            w.add(&NewEntry::added(f)).expect("add");
            let mut nulls = empty_data_file("g.parquet", kind);
            nulls.partition = vec![None; 4];
            w.add(&NewEntry::added(nulls)).expect("add nulls");
            let (bytes, mf) = w.finish("m.avro").expect("finish");
            let read =
                crate::spec::manifest::parse_manifest(&bytes, "m.avro", &mf, &spec, &schemas)
                    .expect("read");
            let partitions: Vec<_> = read.iter().map(|e| e.data_file.partition.clone()).collect();
            assert_eq!(
                partitions,
                [values.clone(), vec![None; 4]],
                "{version:?} {content:?}"
            );
            // the manifest records the current schema
            let reader = apache_avro::Reader::new(&bytes[..]).expect("avro");
            let recorded = reader.user_metadata().get("schema-id").cloned();
            assert_eq!(recorded.as_deref(), Some(&b"1"[..]), "{version:?}");
        }
    }
    let e = ManifestWriter::new(&[&current], &spec, ManifestContent::Data, 5, 2)
        .err()
        .expect("no schema types 'p'");
    assert_eq!(e.kind(), crate::ErrorKind::Unsupported, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("partition field 'p' of spec 0") && msg.contains("field id 2"),
        "{msg}"
    );
}

/// Deleted entries count in a manifest's partition summaries, as Java's
/// `ManifestWriter.addEntry` counts every entry (a tester's: the manifest of a `DELETE`
/// of partition `a` summarized `b..b` where Java gives `a..b`); the minimum sequence
/// number is of live entries only.
#[test]
fn deleted_entries_count_in_partition_summaries() {
    use crate::spec::{NestedField, Schema, Type};
    let schema = Schema::new(
        0,
        vec![NestedField::optional(
            1,
            "c0",
            Type::Primitive(PrimitiveType::Int),
        )],
    );
    let spec = identity_spec(1);
    let mut w =
        ManifestWriter::new(&[&schema], &spec, ManifestContent::Data, 9, 5).expect("writer");
    let mut live = empty_data_file("b.parquet", DataContentType::Data);
    live.partition = vec![Some(Literal::Int(2))];
    w.add(&NewEntry::added(live)).expect("add");
    let mut gone = empty_data_file("a.parquet", DataContentType::Data);
    gone.partition = vec![Some(Literal::Int(1))];
    w.add(&NewEntry {
        status: crate::spec::ManifestStatus::Deleted,
        data_sequence_number: Some(1),
        file_sequence_number: Some(1),
        snapshot_id: None,
        data_file: gone,
    })
    .expect("delete");
    let (_, mf) = w.finish("m.avro").expect("finish");
    let summary = &mf.partitions.expect("summaries")[0];
    assert_eq!(
        summary.lower_bound.as_deref(),
        Some(&1i32.to_le_bytes()[..])
    );
    assert_eq!(
        summary.upper_bound.as_deref(),
        Some(&2i32.to_le_bytes()[..])
    );
    assert!(!summary.contains_null);
    // the deleted entry's sequence number 1 is not the minimum: the added one's (5) is
    assert_eq!(mf.min_sequence_number, 5);
}
