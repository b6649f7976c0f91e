//! Round trips of [`PartitionedDataFileWriter`]: batches in, Parquet files and
//! [`DataFile`]s out, read back with the parquet crate.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    StringViewArray, StructArray, TimestampMicrosecondArray,
};
use datafusion::arrow::compute::concat_batches;
use datafusion::arrow::datatypes::{
    DataType, Field, Fields, Float64Type, Int32Type, Int64Type, Schema as ArrowSchema,
    TimestampMicrosecondType,
};
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::data_file_writer::ICEBERG_SCHEMA_KEY;
use super::*;
use crate::io::FileIO;
use crate::spec::arrow::arrow_field_id;
use crate::spec::{
    DataContentType, DataFile, DataFileFormat, IntMap, ListType, Literal, NestedField,
    PartitionField, PartitionSpec, PrimitiveType, Schema, StructType, Transform, Type,
};
use crate::ErrorKind;

pub(super) const DAY_US: i64 = 86_400_000_000;

pub(super) fn schema() -> Schema {
    let p = |t| Type::Primitive(t);
    Schema::new(
        1,
        vec![
            NestedField::required(1, "id", p(PrimitiveType::Long)),
            NestedField::optional(2, "name", p(PrimitiveType::String)),
            NestedField::optional(3, "score", p(PrimitiveType::Double)),
            NestedField::optional(4, "ts", p(PrimitiveType::Timestamptz)),
            NestedField::optional(
                5,
                "s",
                Type::Struct(StructType::new(vec![NestedField::optional(
                    6,
                    "a",
                    p(PrimitiveType::Int),
                )])),
            ),
            NestedField::optional(
                7,
                "tags",
                Type::List(ListType {
                    element_field: NestedField::optional(8, "element", p(PrimitiveType::String)),
                }),
            ),
        ],
    )
}

/// One row of the test table (NaN scores equal each other).
#[derive(Debug, Clone)]
pub(super) struct Row {
    id: i64,
    name: Option<String>,
    score: Option<f64>,
    ts: Option<i64>,
    a: Option<i32>,
    tags: Option<Vec<String>>,
}

impl PartialEq for Row {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id
            && self.name == o.name
            && self.score.map(f64::to_bits) == o.score.map(f64::to_bits)
            && self.ts == o.ts
            && self.a == o.a
            && self.tags == o.tags
    }
}

pub(super) fn row(
    id: i64,
    name: Option<&str>,
    score: Option<f64>,
    ts: Option<i64>,
    a: Option<i32>,
) -> Row {
    Row {
        id,
        name: name.map(str::to_string),
        score,
        ts,
        a,
        tags: Some(vec![format!("t{id}")]),
    }
}

/// A batch of `rows` as a caller would pass it: no field ids, `name` as Utf8View.
pub(super) fn batch(rows: &[Row]) -> RecordBatch {
    let a_field = Arc::new(Field::new("a", DataType::Int32, true));
    let struct_array = StructArray::new(
        Fields::from(vec![a_field]),
        vec![Arc::new(Int32Array::from(
            rows.iter().map(|r| r.a).collect::<Vec<_>>(),
        )) as ArrayRef],
        None,
    );
    let mut tag_builder =
        datafusion::arrow::array::ListBuilder::new(datafusion::arrow::array::StringBuilder::new());
    for r in rows {
        match &r.tags {
            None => tag_builder.append_null(),
            Some(ts) => {
                for t in ts {
                    tag_builder.values().append_value(t);
                }
                tag_builder.append(true);
            }
        }
    }
    let tags: ArrayRef = Arc::new(tag_builder.finish());
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(
            rows.iter().map(|r| r.id).collect::<Vec<_>>(),
        )),
        Arc::new(StringViewArray::from(
            rows.iter().map(|r| r.name.as_deref()).collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from(
            rows.iter().map(|r| r.score).collect::<Vec<_>>(),
        )),
        Arc::new(
            TimestampMicrosecondArray::from(rows.iter().map(|r| r.ts).collect::<Vec<_>>())
                .with_timezone("UTC"),
        ),
        Arc::new(struct_array),
        tags,
    ];
    let fields: Vec<Field> = columns
        .iter()
        .zip(["id", "name", "score", "ts", "s", "tags"])
        .map(|(c, n)| Field::new(n, c.data_type().clone(), n != "id"))
        .collect();
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).expect("batch")
}

fn rows_of(batch: &RecordBatch) -> Vec<Row> {
    let ids = batch.column(0).as_primitive::<Int64Type>();
    let names = batch.column(1).as_string::<i32>();
    let scores = batch.column(2).as_primitive::<Float64Type>();
    let ts = batch.column(3).as_primitive::<TimestampMicrosecondType>();
    let s = batch.column(4).as_struct();
    let a = s.column(0).as_primitive::<Int32Type>();
    let tags = batch.column(5).as_list::<i32>();
    let opt = |arr: &dyn Array, i: usize| arr.is_valid(i);
    (0..batch.num_rows())
        .map(|i| Row {
            id: ids.value(i),
            name: opt(names, i).then(|| names.value(i).to_string()),
            score: opt(scores, i).then(|| scores.value(i)),
            ts: opt(ts, i).then(|| ts.value(i)),
            a: opt(a, i).then(|| a.value(i)),
            tags: opt(tags, i).then(|| {
                let v = tags.value(i);
                let v = v.as_string::<i32>();
                (0..v.len()).map(|j| v.value(j).to_string()).collect()
            }),
        })
        .collect()
}

/// The rows of a written file, checking field ids and the `iceberg.schema` metadata.
pub(super) async fn read_back(io: &FileIO, file: &DataFile) -> Vec<Row> {
    let bytes = io.read(&file.file_path).await.expect("read data file");
    assert_eq!(bytes.len() as i64, file.file_size_in_bytes, "file size");
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).expect("parquet");
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .cloned()
        .unwrap_or_default();
    let json = kv
        .iter()
        .find(|k| k.key == ICEBERG_SCHEMA_KEY)
        .and_then(|k| k.value.clone())
        .expect("iceberg.schema");
    let written = Schema::from_json(&serde_json::from_str(&json).expect("json")).expect("schema");
    assert_eq!(written, schema());
    let arrow = builder.schema().clone();
    let ids: Vec<Option<i32>> = arrow.fields().iter().map(|f| arrow_field_id(f)).collect();
    assert_eq!(
        ids,
        vec![Some(1), Some(2), Some(3), Some(4), Some(5), Some(7)]
    );
    let DataType::Struct(children) = arrow.field(4).data_type() else {
        panic!("s is not a struct")
    };
    assert_eq!(arrow_field_id(&children[0]), Some(6));
    let DataType::List(element) = arrow.field(5).data_type() else {
        panic!("tags is not a list")
    };
    assert_eq!(arrow_field_id(element), Some(8));
    let batches: Vec<RecordBatch> = builder
        .build()
        .expect("reader")
        .collect::<Result<_, _>>()
        .expect("batches");
    let all = concat_batches(&arrow, &batches).expect("concat");
    assert_eq!(all.num_rows() as i64, file.record_count);
    rows_of(&all)
}

pub(super) fn temp_location() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let loc = format!("{}/data", dir.path().display());
    (dir, loc)
}

pub(super) fn config(props: &[(&str, &str)]) -> DataFileWriterConfig {
    let props: HashMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    DataFileWriterConfig::from_properties(&props).expect("config")
}

pub(super) fn sample_rows() -> Vec<Row> {
    vec![
        row(1, Some("apple"), Some(1.5), Some(DAY_US + 5), Some(10)),
        row(2, None, Some(f64::NAN), Some(3 * DAY_US), None),
        row(3, Some("banana"), None, None, Some(-4)),
        row(4, Some("apricot"), Some(-2.25), Some(DAY_US + 7), Some(8)),
        row(5, Some("cherry"), Some(0.5), Some(2 * DAY_US), Some(1)),
    ]
}

pub(super) fn bound(file: &DataFile, id: i32, ty: PrimitiveType, lower: bool) -> Option<Literal> {
    let map = if lower {
        &file.lower_bounds
    } else {
        &file.upper_bounds
    };
    map.get(&id)
        .map(|b| Literal::from_bytes(b, &ty).expect("bound decodes"))
}

#[tokio::test]
async fn unpartitioned_round_trip_with_metrics() {
    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    let rows = sample_rows();
    w.write(&batch(&rows[..2])).await.expect("write");
    w.write(&batch(&rows[2..])).await.expect("write");
    let files = w.close().await.expect("close");
    assert_eq!(files.len(), 1);
    let f = &files[0];
    let name = f
        .file_path
        .strip_prefix(&format!("{loc}/"))
        .expect("under data");
    assert!(
        name.starts_with("00000-") && name.ends_with(".parquet") && !name.contains('/'),
        "{name}"
    );
    assert_eq!(f.content, DataContentType::Data);
    assert_eq!(f.file_format, DataFileFormat::Parquet);
    assert!(f.partition.is_empty());
    assert_eq!(f.record_count, 5);
    // the unsorted order, as Iceberg Java's DataFiles.Builder records it
    assert_eq!(f.sort_order_id, Some(0));
    assert_eq!(f.split_offsets.first(), Some(&4));
    assert_eq!(read_back(&io, f).await, rows);

    // counts: every leaf has a size; lists only that
    for id in [1, 2, 3, 4, 6, 8] {
        assert!(f.column_sizes.get(&id).is_some_and(|s| *s > 0), "size {id}");
    }
    for id in [1, 2, 3, 4, 6] {
        assert_eq!(f.value_counts.get(&id), Some(&5), "values {id}");
    }
    assert_eq!(f.value_counts.get(&8), None);
    let nulls: IntMap<i64> = IntMap::from([(1, 0), (2, 1), (3, 1), (4, 1), (6, 1)]);
    for (id, n) in nulls {
        assert_eq!(f.null_value_counts.get(&id), Some(&n), "nulls {id}");
    }
    assert_eq!(f.nan_value_counts, IntMap::from([(3, 1)]));
    // bounds (default truncate(16): nothing here is longer)
    let b = |id, ty, lower| bound(f, id, ty, lower);
    assert_eq!(b(1, PrimitiveType::Long, true), Some(Literal::Long(1)));
    assert_eq!(b(1, PrimitiveType::Long, false), Some(Literal::Long(5)));
    assert_eq!(
        b(2, PrimitiveType::String, true),
        Some(Literal::String("apple".into()))
    );
    assert_eq!(
        b(2, PrimitiveType::String, false),
        Some(Literal::String("cherry".into()))
    );
    assert_eq!(
        b(3, PrimitiveType::Double, true),
        Some(Literal::Double(-2.25))
    );
    assert_eq!(
        b(3, PrimitiveType::Double, false),
        Some(Literal::Double(1.5))
    );
    assert_eq!(
        b(4, PrimitiveType::Timestamptz, true),
        Some(Literal::Timestamptz(DAY_US + 5))
    );
    assert_eq!(
        b(4, PrimitiveType::Timestamptz, false),
        Some(Literal::Timestamptz(3 * DAY_US))
    );
    assert_eq!(b(6, PrimitiveType::Int, true), Some(Literal::Int(-4)));
    assert_eq!(b(6, PrimitiveType::Int, false), Some(Literal::Int(10)));
    assert_eq!(b(8, PrimitiveType::String, true), None);
}

#[tokio::test]
async fn partitioned_files_hold_their_rows_and_partition_values() {
    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let field = |source_id, field_id, name: &str, transform| PartitionField {
        source_id,
        field_id: Some(field_id),
        name: name.into(),
        transform,
    };
    let spec = PartitionSpec {
        spec_id: 3,
        fields: vec![
            field(2, 1000, "name", Transform::Identity),
            field(1, 1001, "id_bucket", Transform::Bucket(4)),
            field(2, 1002, "name_trunc", Transform::Truncate(2)),
            field(4, 1003, "ts_day", Transform::Day),
            field(6, 1004, "a_trunc", Transform::Truncate(10)),
        ],
    };
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &format!("{loc}/"),
        &schema(),
        &spec,
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    let rows: Vec<Row> = (0..40)
        .map(|i| {
            let name = ["ab c", "ab/d", "xy"][i as usize % 3];
            row(
                i,
                (i % 7 != 0).then_some(name),
                Some(i as f64),
                (i % 5 != 0).then_some((i % 3) * DAY_US + i),
                Some(i as i32 - 20),
            )
        })
        .collect();
    w.write(&batch(&rows[..25])).await.expect("write");
    w.write(&batch(&rows[25..])).await.expect("write");
    let files = w.close().await.expect("close");
    assert!(files.len() > 4, "{} files", files.len());
    let mut seen = Vec::new();
    let mut keys = Vec::new();
    for f in &files {
        let got = read_back(&io, f).await;
        assert!(!got.is_empty());
        let src = |r: &Row| {
            vec![
                r.name.clone().map(Literal::String),
                Some(Literal::Long(r.id)),
                r.name.clone().map(Literal::String),
                r.ts.map(Literal::Timestamptz),
                r.a.map(Literal::Int),
            ]
        };
        for r in &got {
            let expected: Vec<Option<Literal>> = spec
                .fields
                .iter()
                .zip(src(r))
                .map(|(pf, v)| crate::transform::apply_opt(&pf.transform, v.as_ref()).unwrap())
                .collect();
            assert_eq!(f.partition, expected, "row {}", r.id);
        }
        // the path is the Java partition path of the tuple
        let dir = partition_path::partition_path(&spec, &f.partition);
        assert!(
            f.file_path.starts_with(&format!("{loc}/{dir}/00000-")),
            "{} vs {dir}",
            f.file_path
        );
        assert_eq!(f.null_value_counts.get(&1), Some(&0));
        keys.push(f.partition.clone());
        seen.extend(got);
    }
    // one file per partition, every row written once
    let distinct: std::collections::HashSet<String> =
        keys.iter().map(|k| format!("{k:?}")).collect();
    assert_eq!(distinct.len(), files.len());
    seen.sort_by_key(|r| r.id);
    let expected = rows.clone();
    assert_eq!(seen.len(), expected.len());
    for (a, b) in seen.iter().zip(&expected) {
        assert_eq!(a.id, b.id);
        assert_eq!(a.name, b.name);
        assert_eq!(a.ts, b.ts);
    }
    // a path example: identity of "ab c" encodes the space as '+'
    assert!(files
        .iter()
        .any(|f| f.file_path.contains("/name=ab+c/") && f.file_path.contains("/ts_day=")));
    assert!(files.iter().any(|f| f.file_path.contains("/name=ab%2Fd/")));
    assert!(files.iter().any(|f| f.file_path.contains("/name=null/")));
}

#[tokio::test]
async fn rolls_files_at_the_target_size() {
    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let cfg = config(&[
        ("write.target-file-size-bytes", "2048"),
        ("write.parquet.row-group-size-bytes", "1024"),
    ]);
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        cfg,
    )
    .expect("writer");
    let rows: Vec<Row> = (0..3500)
        .map(|i| {
            row(
                i,
                Some(&format!("name-{i}")),
                Some(i as f64),
                Some(i),
                Some(1),
            )
        })
        .collect();
    w.write(&batch(&rows)).await.expect("write");
    let files = w.close().await.expect("close");
    assert!(files.len() > 1, "{} files", files.len());
    let mut seen = Vec::new();
    for f in &files {
        seen.extend(read_back(&io, f).await);
        assert!(!f.split_offsets.is_empty());
    }
    assert_eq!(files.iter().map(|f| f.record_count).sum::<i64>(), 3500);
    seen.sort_by_key(|r| r.id);
    assert_eq!(seen, rows);
    let paths: std::collections::HashSet<&str> =
        files.iter().map(|f| f.file_path.as_str()).collect();
    assert_eq!(paths.len(), files.len());
}

#[tokio::test]
async fn null_in_required_column_errors_before_writing() {
    let (dir, loc) = temp_location();
    let mut w = PartitionedDataFileWriter::new(
        FileIO::default(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    let good = batch(&[
        row(1, None, None, None, None),
        row(2, None, None, None, None),
    ]);
    let mut columns = good.columns().to_vec();
    columns[0] = Arc::new(Int64Array::from(vec![Some(1), None]));
    let fields: Vec<Field> = good
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    let bad = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).expect("batch");
    let err = w.write(&bad).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("'id'"), "{err}");
    assert!(!dir.path().join("data").exists(), "nothing written");

    // a type that does not cast losslessly names the column
    let mut columns = good.columns().to_vec();
    columns[2] = Arc::new(StringArray::from(vec!["x", "y"]));
    let fields: Vec<Field> = good
        .schema()
        .fields()
        .iter()
        .zip(&columns)
        .map(|(f, c)| f.as_ref().clone().with_data_type(c.data_type().clone()))
        .collect();
    let bad = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).expect("batch");
    let err = w.write(&bad).await.unwrap_err();
    assert!(err.to_string().contains("'score'"), "{err}");
    assert!(w.close().await.expect("close").is_empty());
}

#[tokio::test]
async fn null_in_required_nested_field_errors() {
    let p = |t| Type::Primitive(t);
    let schema = Schema::new(
        0,
        vec![NestedField::optional(
            1,
            "s",
            Type::Struct(StructType::new(vec![NestedField::required(
                2,
                "x",
                p(PrimitiveType::Int),
            )])),
        )],
    );
    let (_dir, loc) = temp_location();
    let mut w = PartitionedDataFileWriter::new(
        FileIO::default(),
        &loc,
        &schema,
        &PartitionSpec::unpartitioned(),
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    let x = Arc::new(Field::new("x", DataType::Int32, true));
    let make = |values: Vec<Option<i32>>, valid: Vec<bool>| {
        let s = StructArray::new(
            Fields::from(vec![Arc::clone(&x)]),
            vec![Arc::new(Int32Array::from(values)) as ArrayRef],
            Some(valid.into()),
        );
        RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![Field::new(
                "s",
                s.data_type().clone(),
                true,
            )])),
            vec![Arc::new(s)],
        )
        .expect("batch")
    };
    // a null x under a null struct is fine
    w.write(&make(vec![Some(1), None], vec![true, false]))
        .await
        .expect("null parent");
    let err = w
        .write(&make(vec![Some(1), None], vec![true, true]))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("'s.x'"), "{err}");
    let files = w.close().await.expect("close");
    assert_eq!(files[0].record_count, 2);
}

#[tokio::test]
async fn written_files_commit_prune_and_query() {
    use crate::expr::{BinaryOp, Predicate};
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("table");
    let field = |source_id, field_id, name: &str, transform| PartitionField {
        source_id,
        field_id: Some(field_id),
        name: name.into(),
        transform,
    };
    let spec = PartitionSpec {
        spec_id: 0,
        fields: vec![
            field(2, 1000, "name_trunc", Transform::Truncate(1)),
            field(1, 1001, "id_bucket", Transform::Bucket(4)),
            field(4, 1002, "ts_day", Transform::Day),
        ],
    };
    let mut table_writer =
        LocalTableWriter::create(&root, schema(), spec.clone(), HashMap::new()).expect("create");
    let location = format!("{}/data", root.display());
    let mut w = PartitionedDataFileWriter::new(
        FileIO::default(),
        &location,
        &schema(),
        &spec,
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    let rows: Vec<Row> = (0..30)
        .map(|i| {
            let name = ["apple", "banana", "cherry"][i as usize % 3];
            row(
                i,
                Some(name),
                Some(i as f64 / 2.0),
                Some((i % 2) * DAY_US),
                Some(1),
            )
        })
        .collect();
    w.write(&batch(&rows)).await.expect("write");
    let files = w.close().await.expect("close");
    let total = files.len();
    table_writer.append(files).expect("append");

    let table = crate::Table::open(&root.to_string_lossy())
        .await
        .expect("open");
    let snapshot = table.metadata().current_snapshot().cloned();
    let plan = crate::scan::TableScan::new(table.clone(), snapshot.clone())
        .plan_files()
        .await
        .expect("plan");
    assert_eq!(plan.tasks.len(), total);
    // a filter on the truncated name prunes by partition
    let pruned = crate::scan::TableScan::new(table.clone(), snapshot)
        .with_filter(Predicate::col_binary(
            BinaryOp::Eq,
            "name",
            Literal::String("banana".into()),
        ))
        .plan_files()
        .await
        .expect("plan");
    assert!(!pruned.tasks.is_empty() && pruned.tasks.len() < total);
    for t in &pruned.tasks {
        assert_eq!(
            t.data_file().partition[0],
            Some(Literal::String("b".into()))
        );
    }

    let ctx = datafusion::prelude::SessionContext::new();
    let provider = crate::IcebergTableProvider::try_new(table).expect("provider");
    ctx.register_table("t", Arc::new(provider))
        .expect("register");
    let batches = ctx
        .sql("SELECT count(*), sum(id) FROM t WHERE name = 'banana' AND score > 1")
        .await
        .expect("sql")
        .collect()
        .await
        .expect("collect");
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .expect("format")
        .to_string();
    // banana ids: 1, 4, …, 28 (10 rows); score > 1 drops id 1
    assert!(text.contains("| 9        | 144 "), "{text}");
}

/// Files come out near the target size, not at the fraction of it that the Parquet
/// writer's estimate of the rows it holds (before compression, dictionaries counted raw)
/// gave: a 400 KB target made files of ~107 KB, which every later compaction found too
/// small and rewrote again (tester 8's D1). Every file but the last reaches 75 % of the
/// target (the compaction's default minimum) and none passes it by more than a quarter.
#[tokio::test]
async fn files_of_compressible_strings_come_out_near_the_target_size() {
    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let target = 400_000_i64;
    let cfg = config(&[("write.target-file-size-bytes", &target.to_string())]);
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        cfg,
    )
    .expect("writer");
    // 96 hex digits per row, distinct: dictionaries hold them raw, zstd halves them
    let hex = |i: u64| {
        let h = |k: u64| {
            (u128::from(i.wrapping_add(k)).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835))
                .wrapping_add(0x6A09_E667_F3BC_C908)
        };
        format!("{:032x}{:032x}{:032x}", h(0), h(7), h(13))
    };
    let rows: Vec<Row> = (0..30_000)
        .map(|i| row(i, Some(&hex(i as u64)), None, None, None))
        .collect();
    for chunk in rows.chunks(4096) {
        w.write(&batch(chunk)).await.expect("write");
    }
    let mut files = w.close().await.expect("close");
    files.sort_by_key(|f| std::cmp::Reverse(f.file_size_in_bytes));
    let sizes: Vec<i64> = files.iter().map(|f| f.file_size_in_bytes).collect();
    assert!(files.len() >= 3, "{sizes:?}");
    for size in &sizes[..sizes.len() - 1] {
        assert!(
            *size >= target * 3 / 4 && *size <= target * 5 / 4,
            "{sizes:?}"
        );
    }
    assert_eq!(files.iter().map(|f| f.record_count).sum::<i64>(), 30_000);
    let mut seen = Vec::new();
    for f in &files {
        seen.extend(read_back(&io, f).await);
    }
    seen.sort_by_key(|r| r.id);
    assert_eq!(seen, rows);
}

/// `blocks` blocks of 32 pseudo-random hex digits, different for every `seed`: zstd
/// takes them to about half, and no dictionary helps.
fn random_hex(seed: u64, blocks: u64) -> String {
    (0..blocks)
        .map(|k| {
            let x = u128::from(seed.wrapping_mul(1_000_003).wrapping_add(k))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)
                .wrapping_add(0x6A09_E667_F3BC_C908);
            format!("{:032x}", x ^ (x >> 61))
        })
        .collect()
}

/// The files' sizes as stored (not as the [`DataFile`]s say), which must agree.
fn stored_sizes(files: &[DataFile]) -> Vec<i64> {
    files
        .iter()
        .map(|f| {
            let size = std::fs::metadata(&f.file_path).expect("written file").len() as i64;
            assert_eq!(size, f.file_size_in_bytes, "{}", f.file_path);
            size
        })
        .collect()
}

/// Wide rows (3.2 KB of hex digits, ~1.7 KB each in the file) roll at the target size:
/// the size is checked every few rows, not every 1000, which made 1.7 MB files of a
/// 200 KB target (tester 9's D2). Every file but the last comes out within 10 % of the
/// target (the writer rolls once the target is reached and checks every tenth of it),
/// and the rows come back.
#[tokio::test]
async fn files_of_wide_rows_come_out_near_the_target_size() {
    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let target = 200_000_i64;
    let cfg = config(&[("write.target-file-size-bytes", &target.to_string())]);
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        cfg,
    )
    .expect("writer");
    let rows: Vec<Row> = (0..800)
        .map(|i| row(i, Some(&random_hex(i as u64, 100)), None, None, None))
        .collect();
    for chunk in rows.chunks(300) {
        w.write(&batch(chunk)).await.expect("write");
    }
    // files closed by rolling come first, the last one open at close last
    let files = w.close().await.expect("close");
    let sizes = stored_sizes(&files);
    assert!(files.len() >= 5, "{sizes:?}");
    for size in &sizes[..sizes.len() - 1] {
        assert!(
            *size >= target * 9 / 10 && *size <= target * 11 / 10,
            "{sizes:?}"
        );
    }
    assert!(files.iter().all(|f| f.record_count > 1), "{sizes:?}");
    assert_eq!(files.iter().map(|f| f.record_count).sum::<i64>(), 800);
    let mut seen = Vec::new();
    for f in &files {
        seen.extend(read_back(&io, f).await);
    }
    seen.sort_by_key(|r| r.id);
    assert_eq!(seen, rows);
}

/// A row larger than the target size (64 KB of hex digits, ~33 KB in the file, against
/// a 20 KB target) is a file of its own: one row per file, none empty, every row once,
/// the narrow rows around them together.
#[tokio::test]
async fn a_row_larger_than_the_target_is_a_file_of_its_own() {
    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let cfg = config(&[("write.target-file-size-bytes", "20000")]);
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        cfg,
    )
    .expect("writer");
    let mut rows: Vec<Row> = (0..10)
        .map(|i| row(i, Some("narrow"), None, None, None))
        .collect();
    rows.extend((10..15).map(|i| row(i, Some(&random_hex(i as u64, 2000)), None, None, None)));
    w.write(&batch(&rows)).await.expect("write");
    let files = w.close().await.expect("close");
    let sizes = stored_sizes(&files);
    let counts: Vec<i64> = files.iter().map(|f| f.record_count).collect();
    // the narrow rows and the first wide one fill the first file; each wide row after
    // it is a file
    assert_eq!(counts, vec![11, 1, 1, 1, 1], "{sizes:?}");
    assert!(sizes.iter().all(|s| *s > 20_000), "{sizes:?}");
    let mut seen = Vec::new();
    for f in &files {
        seen.extend(read_back(&io, f).await);
    }
    seen.sort_by_key(|r| r.id);
    assert_eq!(seen, rows);
}

#[tokio::test]
async fn abort_deletes_written_files() {
    let (dir, loc) = temp_location();
    let cfg = config(&[("write.target-file-size-bytes", "1024")]);
    let mut w = PartitionedDataFileWriter::new(
        FileIO::default(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        cfg,
    )
    .expect("writer");
    let rows: Vec<Row> = (0..2500)
        .map(|i| row(i, Some("x"), None, None, None))
        .collect();
    w.write(&batch(&rows)).await.expect("write");
    w.abort().await.expect("abort");
    let left: Vec<_> = std::fs::read_dir(dir.path().join("data"))
        .map(|d| d.filter_map(|e| e.ok()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn writer_runs_on_spawned_tasks() {
    let (_dir, loc) = temp_location();
    let mut w = PartitionedDataFileWriter::new(
        FileIO::default(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    let b = batch(&sample_rows());
    // the writer and its futures are Send, as DataFusion's execution needs
    let files = tokio::spawn(async move {
        w.write(&b).await?;
        w.close().await
    })
    .await
    .expect("join")
    .expect("write");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].record_count, 5);
}

/// A data file whose upload fails when it is completed (an S3 endpoint that accepts
/// connections and never answers: the small file is one PUT at `close`) is an error
/// naming the file, not a panic: object_store's `BufWriter::abort` panics on a writer
/// whose completion was attempted, so the writer must not abort it (it used to, catching
/// the panic, whose message the default hook still printed; now nothing panics: a panic
/// here fails the test).
#[tokio::test]
async fn a_failed_upload_at_close_is_an_error_naming_the_file() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let addr = listener.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    let properties: HashMap<String, String> = [
        ("s3.endpoint", format!("http://{addr}")),
        ("s3.region", "us-east-1".to_string()),
        ("s3.path-style-access", "true".to_string()),
        ("s3.access-key-id", "AKIDSILENT".to_string()),
        ("s3.secret-access-key", "not-shown".to_string()),
        ("s3.request-timeout", "0.3".to_string()),
        ("s3.retry.num-retries", "0".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let loc = "s3://silent-bucket/db/t/data";
    let mut w = PartitionedDataFileWriter::new(
        FileIO::new(properties),
        loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    w.write(&batch(&sample_rows())).await.expect("buffered");
    let err = w.close().await.expect_err("nothing answers");
    let message = err.to_string();
    assert!(message.contains(&format!("{loc}/00000-")), "{message}");
    assert!(!message.contains("not-shown"), "{message}");
}

/// A partitioned write holds rows per partition across batches: over more batches than
/// it holds at once, and with a partition past the rows it holds, every row lands once,
/// in its partition's file, in the order it arrived.
#[tokio::test]
async fn held_partition_rows_keep_their_order() {
    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let spec = PartitionSpec {
        spec_id: 0,
        fields: vec![PartitionField {
            source_id: 6,
            field_id: Some(1000),
            name: "a".into(),
            transform: Transform::Identity,
        }],
    };
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc,
        &schema(),
        &spec,
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    // 45 batches of 500 rows; half the rows in partition a=0 (11 250 rows), the rest
    // over a=1..=7 and a=null
    let rows: Vec<Row> = (0..22_500i64)
        .map(|i| {
            let a = if i % 2 == 0 {
                Some(0)
            } else {
                (i % 9 != 1).then_some((i % 7 + 1) as i32)
            };
            row(i, Some(&format!("n{}", i % 13)), Some(i as f64), Some(i), a)
        })
        .collect();
    for chunk in rows.chunks(500) {
        w.write(&batch(chunk)).await.expect("write");
    }
    let files = w.close().await.expect("close");
    assert_eq!(files.len(), 9, "one file per partition");
    let mut seen = Vec::new();
    for f in &files {
        let got = read_back(&io, f).await;
        assert_eq!(got.len() as i64, f.record_count);
        for r in &got {
            assert_eq!(f.partition, vec![r.a.map(Literal::Int)], "row {}", r.id);
        }
        assert!(
            got.windows(2).all(|w| w[0].id < w[1].id),
            "rows of {:?} out of order",
            f.partition
        );
        seen.extend(got);
    }
    seen.sort_by_key(|r| r.id);
    assert_eq!(seen, rows);
    let zero = files
        .iter()
        .find(|f| f.partition == vec![Some(Literal::Int(0))])
        .expect("a=0");
    assert_eq!(zero.record_count, 11_250);
}

/// `write.parquet.bloom-filter-enabled.column.<name>` writes a bloom filter for the column
/// (nested ones by their dotted path), holding the values written; other columns get none
/// (report S65, fault 2: the properties were accepted and ignored).
#[tokio::test]
async fn bloom_filter_properties_write_bloom_filters() {
    use datafusion::parquet::file::properties::ReaderProperties;
    use datafusion::parquet::file::reader::FileReader;
    use datafusion::parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};

    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        config(&[
            ("write.parquet.bloom-filter-enabled.column.name", "true"),
            ("write.parquet.bloom-filter-fpp.column.name", "0.05"),
            ("write.parquet.bloom-filter-enabled.column.s.a", "TRUE"),
            ("write.parquet.bloom-filter-enabled.column.id", "false"),
        ]),
    )
    .expect("writer");
    w.write(&batch(&sample_rows())).await.expect("write");
    let files = w.close().await.expect("close");
    let file = std::fs::File::open(&files[0].file_path).expect("open");
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(
            ReaderProperties::builder()
                .set_read_bloom_filter(true)
                .build(),
        )
        .build();
    let reader = SerializedFileReader::new_with_options(file, options).expect("reader");
    let group = reader.get_row_group(0).expect("row group");
    let columns = reader.metadata().row_group(0).columns();
    let index = |path: &str| {
        columns
            .iter()
            .position(|c| c.column_path().string() == path)
            .unwrap_or_else(|| panic!("no column {path}"))
    };
    let name = group
        .get_column_bloom_filter(index("name"))
        .expect("bloom filter of name");
    assert!(name.check(&"apple") && name.check(&"cherry"));
    let a = group
        .get_column_bloom_filter(index("s.a"))
        .expect("bloom filter of s.a");
    assert!(a.check(&10i32) && a.check(&-4i32));
    assert!(group.get_column_bloom_filter(index("id")).is_none());
    assert!(group.get_column_bloom_filter(index("score")).is_none());
    // the rows read back are the rows written
    assert_eq!(read_back(&io, &files[0]).await, sample_rows());
}

#[test]
fn bloom_filter_properties_are_checked() {
    let props = |kv: &[(&str, &str)]| -> HashMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let c = DataFileWriterConfig::from_properties(&props(&[
        ("write.parquet.bloom-filter-enabled.column.a", "true"),
        ("write.parquet.bloom-filter-enabled.column.b", "true"),
        ("write.parquet.bloom-filter-ndv.column.b", "1000"),
    ]))
    .expect("config");
    assert_eq!(c.bloom_filters.len(), 2);
    // Java's default fpp; the default 1 MiB cap sizes the filter without an NDV
    assert_eq!(c.bloom_filters[0].fpp, 0.01);
    assert!(c.bloom_filters[0].max_ndv > 500_000 && c.bloom_filters[0].max_ndv < 1_000_000);
    assert_eq!(c.bloom_filters[1].max_ndv, 1000);
    for (key, value) in [
        ("write.parquet.bloom-filter-fpp.column.a", "1.0"),
        ("write.parquet.bloom-filter-fpp.column.a", "0"),
        ("write.parquet.bloom-filter-fpp.column.a", "x"),
        ("write.parquet.bloom-filter-ndv.column.a", "-1"),
        ("write.parquet.bloom-filter-max-bytes", "0"),
    ] {
        let err = DataFileWriterConfig::from_properties(&props(&[
            ("write.parquet.bloom-filter-enabled.column.a", "true"),
            (key, value),
        ]))
        .unwrap_err();
        assert!(err.to_string().contains(key), "{err}");
    }
}
