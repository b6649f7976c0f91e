//! Reading's hard corners (issue 16), on small tables written here: locations holding
//! `%xx` and `+` (never decoded), Parquet timestamps in every encoding (INT96, INT64
//! millis/micros/nanos, with and without `isAdjustedToUTC`) reading as the same instant,
//! and required fields inside optional structs reading as null where the struct is.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
    StructArray, TimestampMillisecondArray, TimestampNanosecondArray,
};
use datafusion::arrow::buffer::{NullBuffer, OffsetBuffer};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Int64Type, Schema, TimeUnit};
use datafusion::parquet::arrow::ArrowWriter;
use icefloe::spec::{DataContentType, NestedField, PartitionSpec, PrimitiveType, Type};
use icefloe::write::{data_file_from_parquet, schema_from_parquet, LocalTableWriter};

use crate::fixtures::run_sql;

fn field(name: &str, dt: DataType, id: i32, nullable: bool) -> Field {
    Field::new(name, dt, nullable).with_metadata(HashMap::from([(
        "PARQUET:field_id".to_string(),
        id.to_string(),
    )]))
}

fn write_batch(path: &Path, batch: &RecordBatch) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

fn write_ids(path: &Path, ids: &[i64]) {
    let schema = Arc::new(Schema::new(vec![field("id", DataType::Int64, 1, false)]));
    let batch =
        RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(ids.to_vec()))]).unwrap();
    write_batch(path, &batch);
}

fn i64_column(batches: &[RecordBatch], i: usize) -> Vec<Option<i64>> {
    batches
        .iter()
        .flat_map(|b| {
            let c = datafusion::arrow::compute::cast(b.column(i), &DataType::Int64).unwrap();
            c.as_primitive::<Int64Type>().iter().collect::<Vec<_>>()
        })
        .collect()
}

fn string_column(batches: &[RecordBatch], i: usize) -> Vec<Option<String>> {
    batches
        .iter()
        .flat_map(|b| {
            let c = datafusion::arrow::compute::cast(b.column(i), &DataType::Utf8).unwrap();
            let s = c.as_string::<i32>();
            (0..s.len())
                .map(|r| (!s.is_null(r)).then(|| s.value(r).to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

async fn query(root: &Path, sql: &str) -> Vec<RecordBatch> {
    run_sql(root.to_str().unwrap(), sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

#[tokio::test]
async fn escapes_in_every_location_are_part_of_the_name() {
    let dir = tempfile::tempdir().unwrap();
    // the table directory itself holds escapes: metadata files, manifest lists and
    // manifests have them in their locations too
    let root = dir.path().join("wh%2Fx").join("t+1 %25");
    let data = root.join("data");
    let encoded: [(&str, &[i64]); 4] = [
        ("p=x%2Fy", &[1, 2]),
        ("p=100%25", &[3, 4]),
        ("p=%2541", &[5]),
        ("q+r=2", &[6]),
    ];
    let mut files: Vec<PathBuf> = vec![];
    for (part, ids) in encoded {
        let path = data.join(part).join("f.parquet");
        write_ids(&path, ids);
        files.push(path);
    }
    // what decoding the names would find instead (once or twice; '+' as space)
    for decoy in ["p=x/y", "p=100%", "p=%41", "p=A", "q r=2"] {
        write_ids(&data.join(decoy).join("f.parquet"), &[100]);
    }
    let schema = schema_from_parquet(&files[0]).unwrap();
    let mut w = LocalTableWriter::create(
        &root,
        schema.clone(),
        PartitionSpec::unpartitioned(),
        HashMap::new(),
    )
    .unwrap();
    w.add_parquet_files(&files).unwrap();

    // a position delete file (its own name escaped) deleting row 0 of `p=100%25/f.parquet`,
    // matched by the stored location string, with `referenced_data_file` set
    let target = format!("file://{}", files[1].display());
    let delete_path = data.join("del%3D1+x.parquet");
    let delete_schema = Arc::new(Schema::new(vec![
        field("file_path", DataType::Utf8, 2147483546, false),
        field("pos", DataType::Int64, 2147483545, false),
    ]));
    let deletes = RecordBatch::try_new(
        delete_schema,
        vec![
            Arc::new(StringArray::from(vec![target.as_str()])),
            Arc::new(Int64Array::from(vec![0])),
        ],
    )
    .unwrap();
    write_batch(&delete_path, &deletes);
    let mut delete = data_file_from_parquet(
        &delete_path,
        &format!("file:{}", delete_path.display()),
        &schema,
        vec![],
        DataContentType::PositionDeletes,
        vec![],
    )
    .unwrap();
    delete.referenced_data_file = Some(target.clone());
    w.row_delta(vec![], vec![delete]).unwrap();

    let batches = query(&root, "SELECT id FROM t ORDER BY id").await;
    let ids: Vec<Option<i64>> = [1, 2, 4, 5, 6].into_iter().map(Some).collect();
    assert_eq!(i64_column(&batches, 0), ids);
    let batches = query(&root, "SELECT count(*) FROM t WHERE id = 100").await;
    assert_eq!(i64_column(&batches, 0), vec![Some(0)]);
}

/// Microseconds since the epoch of a UTC date-time.
fn micros(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap()
        .timestamp_micros()
}

/// A Parquet INT96 timestamp (nanoseconds of the day, Julian day) of `micros`.
fn int96(micros: i64) -> datafusion::parquet::data_type::Int96 {
    const JULIAN_EPOCH_DAY: i64 = 2_440_588;
    const DAY_MICROS: i64 = 86_400_000_000;
    let day = micros.div_euclid(DAY_MICROS) + JULIAN_EPOCH_DAY;
    let nanos = micros.rem_euclid(DAY_MICROS) * 1000;
    let mut v = datafusion::parquet::data_type::Int96::new();
    v.set_data(nanos as u32, (nanos >> 32) as u32, day as u32);
    v
}

/// A file of INT96 `tz` (field 2) and `ntz` (field 3) columns, one dictionary-encoded
/// row group, ids from `first_id`; `None` values are nulls.
fn write_int96(path: &Path, first_id: i64, values: &[Option<i64>]) {
    use datafusion::parquet::basic::{Repetition, Type as PhysicalType};
    use datafusion::parquet::data_type::{Int64Type as PInt64, Int96Type};
    use datafusion::parquet::file::properties::WriterProperties;
    use datafusion::parquet::file::writer::SerializedFileWriter;
    use datafusion::parquet::schema::types::Type as PType;
    let column = |name: &str, ty, id, repetition| {
        Arc::new(
            PType::primitive_type_builder(name, ty)
                .with_repetition(repetition)
                .with_id(Some(id))
                .build()
                .unwrap(),
        )
    };
    let schema = PType::group_type_builder("spark_schema")
        .with_fields(vec![
            column("id", PhysicalType::INT64, 1, Repetition::REQUIRED),
            column("tz", PhysicalType::INT96, 2, Repetition::OPTIONAL),
            column("ntz", PhysicalType::INT96, 3, Repetition::OPTIONAL),
        ])
        .build()
        .unwrap();
    let props = WriterProperties::builder()
        .set_dictionary_enabled(true)
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).unwrap();
    let mut rg = writer.next_row_group().unwrap();
    let ids: Vec<i64> = (first_id..first_id + values.len() as i64).collect();
    let mut col = rg.next_column().unwrap().unwrap();
    col.typed::<PInt64>().write_batch(&ids, None, None).unwrap();
    col.close().unwrap();
    let present: Vec<_> = values.iter().flatten().map(|m| int96(*m)).collect();
    let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
    for _ in 0..2 {
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<Int96Type>()
            .write_batch(&present, Some(&levels), None)
            .unwrap();
        col.close().unwrap();
    }
    rg.close().unwrap();
    writer.close().unwrap();
}

/// A file whose `tz`/`ntz` columns are INT64 timestamps of Arrow type `tz_type`/`ntz_type`
/// (unit and time zone decide the Parquet unit and `isAdjustedToUTC`).
fn write_int64(path: &Path, first_id: i64, values: &[Option<i64>], types: [&DataType; 2]) {
    let ids: Vec<i64> = (first_id..first_id + values.len() as i64).collect();
    let column = |dt: &DataType| -> ArrayRef {
        let (scaled, tz): (Vec<Option<i64>>, _) = match dt {
            DataType::Timestamp(TimeUnit::Millisecond, tz) => {
                (values.iter().map(|v| v.map(|m| m / 1000)).collect(), tz)
            }
            DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
                (values.iter().map(|v| v.map(|m| m * 1000)).collect(), tz)
            }
            _ => panic!("unexpected {dt}"),
        };
        match dt {
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                Arc::new(TimestampMillisecondArray::from(scaled).with_timezone_opt(tz.clone()))
            }
            _ => Arc::new(TimestampNanosecondArray::from(scaled).with_timezone_opt(tz.clone())),
        }
    };
    let schema = Arc::new(Schema::new(vec![
        field("id", DataType::Int64, 1, false),
        field("tz", types[0].clone(), 2, true),
        field("ntz", types[1].clone(), 3, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids)),
            column(types[0]),
            column(types[1]),
        ],
    )
    .unwrap();
    write_batch(path, &batch);
}

#[tokio::test]
async fn timestamps_of_every_parquet_encoding_read_as_the_same_instant() {
    let dir = tempfile::tempdir().unwrap();
    let far = micros("3332-12-14T11:33:10.965000Z");
    let before_epoch = micros("1900-01-01T00:00:00.000001Z");
    let just_before = micros("1969-12-31T23:59:59.999999Z");
    let int96_values = [Some(far), Some(before_epoch), Some(just_before), None];
    // ms and ns files: values their unit can hold (ns covers 1677..2262 only)
    let ms_values = [
        Some(micros("3000-01-01T00:00:00.001Z")),
        Some(micros("1960-06-30T12:00:00.123Z")),
    ];
    let ns_values = [
        Some(micros("2200-01-01T00:00:00.000001Z")),
        Some(micros("1950-01-01T00:00:00.5Z")),
    ];
    let utc = Some(Arc::<str>::from("UTC"));
    let files = [
        dir.path().join("int96.parquet"),
        dir.path().join("millis.parquet"),
        dir.path().join("nanos.parquet"),
    ];
    write_int96(&files[0], 0, &int96_values);
    write_int64(
        &files[1],
        10,
        &ms_values,
        [
            &DataType::Timestamp(TimeUnit::Millisecond, utc.clone()),
            &DataType::Timestamp(TimeUnit::Millisecond, None),
        ],
    );
    // not adjusted to UTC in a timestamptz column, adjusted in a timestamp column
    write_int64(
        &files[2],
        20,
        &ns_values,
        [
            &DataType::Timestamp(TimeUnit::Nanosecond, None),
            &DataType::Timestamp(TimeUnit::Nanosecond, utc),
        ],
    );
    let schema = icefloe::spec::Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "tz", Type::Primitive(PrimitiveType::Timestamptz)),
            NestedField::optional(3, "ntz", Type::Primitive(PrimitiveType::Timestamp)),
        ],
    );
    let root = dir.path().join("table");
    let mut w = LocalTableWriter::create(
        &root,
        schema,
        PartitionSpec::unpartitioned(),
        HashMap::new(),
    )
    .unwrap();
    w.add_parquet_files(&files).unwrap();

    let batches = query(&root, "SELECT id, tz, ntz FROM t ORDER BY id").await;
    for b in &batches {
        assert_eq!(
            b.schema().field(1).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            b.schema().field(2).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, None)
        );
    }
    let expected: Vec<Option<i64>> = int96_values
        .iter()
        .chain(&ms_values)
        .chain(&ns_values)
        .copied()
        .collect();
    assert_eq!(i64_column(&batches, 1), expected);
    assert_eq!(i64_column(&batches, 2), expected);

    // the session's INT96 settings do not change what an Iceberg scan reads
    let config = datafusion::prelude::SessionConfig::new()
        .set_str("datafusion.execution.parquet.coerce_int96", "ms")
        .set_str("datafusion.execution.parquet.coerce_int96_tz", "Asia/Tokyo");
    let ctx = datafusion::prelude::SessionContext::new_with_config(config);
    let provider = icefloe::IcebergTableProvider::open(root.to_str().unwrap())
        .await
        .unwrap();
    ctx.register_table("t", Arc::new(provider)).unwrap();
    let batches = ctx
        .sql("SELECT id, tz, ntz FROM t ORDER BY id")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(i64_column(&batches, 1), expected);
    assert_eq!(i64_column(&batches, 2), expected);

    // the bounds add_files took from the footers are in the table's unit: no file is
    // pruned wrongly (a millisecond bound read as microseconds would end in 1970)
    // (a nanosecond `TIMESTAMP '3332-…'` literal overflows in DataFusion: micros instead)
    for (sql, ids) in [
        ("SELECT id FROM t WHERE tz > TIMESTAMP '2100-01-01T00:00:00Z' ORDER BY id".to_string(), vec![0, 10, 20]),
        ("SELECT id FROM t WHERE ntz < TIMESTAMP '1960-07-01T00:00:00' ORDER BY id".to_string(), vec![1, 11, 21]),
        (format!("SELECT id FROM t WHERE tz = to_timestamp_micros({far}) ORDER BY id"), vec![0]),
        (format!("SELECT id FROM t WHERE ntz < to_timestamp_micros({before_epoch}) + INTERVAL '1 day' ORDER BY id"), vec![1]),
    ] {
        let got = i64_column(&query(&root, &sql).await, 0);
        let want: Vec<Option<i64>> = ids.into_iter().map(Some).collect();
        assert_eq!(got, want, "{sql}");
    }
}

/// `a: struct<street: string not null, info: struct<city: string not null>>` (optional
/// `a` and `info`) and `l: list<struct<z: int not null>>` (optional elements).
fn write_structs(path: &Path) {
    let n = 5;
    let city = StructArray::try_new(
        Fields::from(vec![field("city", DataType::Utf8, 4, false)]),
        vec![Arc::new(StringArray::from(vec!["SF", "", "LA", "", ""])) as ArrayRef],
        Some(NullBuffer::from(vec![true, false, true, false, false])),
    )
    .unwrap();
    let a_fields = Fields::from(vec![
        field("street", DataType::Utf8, 3, false),
        field("info", city.data_type().clone(), 5, true),
    ]);
    let a = StructArray::try_new(
        a_fields,
        vec![
            Arc::new(StringArray::from(vec!["Main", "Elm", "Oak", "", ""])) as ArrayRef,
            Arc::new(city),
        ],
        Some(NullBuffer::from(vec![true, true, true, false, false])),
    )
    .unwrap();
    // elements: row 0 [{z:1}, null], row 1 [null], row 2 null list, rows 3, 4 [{z:4}]
    let element = StructArray::try_new(
        Fields::from(vec![field("z", DataType::Int32, 8, false)]),
        vec![Arc::new(Int32Array::from(vec![1, 0, 0, 4, 5])) as ArrayRef],
        Some(NullBuffer::from(vec![true, false, false, true, true])),
    )
    .unwrap();
    let item = Arc::new(field("element", element.data_type().clone(), 7, true));
    let l = ListArray::try_new(
        item,
        OffsetBuffer::from_lengths([2, 1, 0, 1, 1]),
        Arc::new(element),
        Some(NullBuffer::from(vec![true, true, false, true, true])),
    )
    .unwrap();
    let schema = Arc::new(Schema::new(vec![
        field("id", DataType::Int64, 1, false),
        field("a", a.data_type().clone(), 2, true),
        field("l", l.data_type().clone(), 6, true),
    ]));
    let ids: Vec<i64> = (0..n).collect();
    let batch = RecordBatch::try_new(
        schema,
        vec![Arc::new(Int64Array::from(ids)), Arc::new(a), Arc::new(l)],
    )
    .unwrap();
    write_batch(path, &batch);
}

#[tokio::test]
async fn required_fields_of_null_structs_are_null() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.parquet");
    write_structs(&file);
    let schema = schema_from_parquet(&file).unwrap();
    assert!(schema.field_by_id(3).is_some_and(|f| f.required));
    let root = dir.path().join("table");
    let mut w = LocalTableWriter::create(
        &root,
        schema,
        PartitionSpec::unpartitioned(),
        HashMap::new(),
    )
    .unwrap();
    w.add_parquet_files(&[file]).unwrap();

    let batches = query(&root, "SELECT id, a.street, a.info.city FROM t ORDER BY id").await;
    let some = |v: &[Option<&str>]| -> Vec<Option<String>> {
        v.iter().map(|s| s.map(str::to_string)).collect()
    };
    assert_eq!(
        string_column(&batches, 1),
        some(&[Some("Main"), Some("Elm"), Some("Oak"), None, None])
    );
    assert_eq!(
        string_column(&batches, 2),
        some(&[Some("SF"), None, Some("LA"), None, None])
    );
    for b in &batches {
        assert!(b.schema().field(1).is_nullable() && b.schema().field(2).is_nullable());
    }
    for (sql, want) in [
        (
            "SELECT id FROM t WHERE a.street IS NULL ORDER BY id",
            vec![3, 4],
        ),
        (
            "SELECT id FROM t WHERE a.info.city IS NULL ORDER BY id",
            vec![1, 3, 4],
        ),
        (
            "SELECT id FROM t WHERE a.info.city IS NOT NULL ORDER BY id",
            vec![0, 2],
        ),
        (
            "SELECT count(a.street), count(a.info.city), count(*) FROM t",
            vec![3, 2, 5],
        ),
        // an element that is null has a null z; a null list has no element
        (
            "SELECT id FROM t WHERE l[1]['z'] IS NULL ORDER BY id",
            vec![1, 2],
        ),
        ("SELECT count(l[2]['z']) FROM t", vec![0]),
    ] {
        let batches = query(&root, sql).await;
        let got: Vec<Option<i64>> = if batches.first().is_some_and(|b| b.num_columns() == 3) {
            (0..3).flat_map(|i| i64_column(&batches, i)).collect()
        } else {
            i64_column(&batches, 0)
        };
        let want: Vec<Option<i64>> = want.into_iter().map(Some).collect();
        assert_eq!(got, want, "{sql}");
    }
}

#[tokio::test]
async fn inverted_bounds_in_a_manifest_never_prune_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    let file = root.join("data/f.parquet");
    write_ids(&file, &[1, 2, 3]);
    let schema = schema_from_parquet(&file).unwrap();
    let mut data = data_file_from_parquet(
        &file,
        &format!("file:{}", file.display()),
        &schema,
        vec![],
        DataContentType::Data,
        vec![],
    )
    .unwrap();
    // a broken writer: lower bound 3 above upper bound 1 (Java's evaluator drops the
    // file for id = 2; DataFusion would too, given them as min/max statistics)
    data.lower_bounds.insert(1, 3_i64.to_le_bytes().to_vec());
    data.upper_bounds.insert(1, 1_i64.to_le_bytes().to_vec());
    let mut w = LocalTableWriter::create(
        &root,
        schema,
        PartitionSpec::unpartitioned(),
        HashMap::new(),
    )
    .unwrap();
    w.append(vec![data]).unwrap();

    let provider = Arc::new(
        icefloe::IcebergTableProvider::open(root.to_str().unwrap())
            .await
            .unwrap(),
    );
    let ctx = datafusion::prelude::SessionContext::new();
    ctx.register_table("t", provider.clone()).unwrap();
    for (sql, want) in [
        ("SELECT id FROM t WHERE id = 2", vec![Some(2)]),
        ("SELECT id FROM t WHERE id > 2", vec![Some(3)]),
        ("SELECT id FROM t WHERE id < 2", vec![Some(1)]),
    ] {
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        assert_eq!(i64_column(&batches, 0), want, "{sql}");
        let m = provider.last_scan_metrics().expect("scan metrics");
        assert_eq!(m.data_files_skipped_by_metrics, 0, "{sql}");
        assert_eq!(m.data_files_with_inconsistent_metrics, 1, "{sql}");
        assert_eq!(m.data_files_planned, 1, "{sql}");
    }
}

/// One table (`id long, x int, s string, d decimal(10,2), st struct<a: int>`) over the
/// given files, returned with the error (or rows) of `SELECT *`.
async fn read_all(dir: &Path, name: &str, files: &[PathBuf]) -> (PathBuf, Result<usize, String>) {
    let int = |id, n: &str| NestedField::optional(id, n, Type::Primitive(PrimitiveType::Int));
    let schema = icefloe::spec::Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            int(2, "x"),
            NestedField::optional(3, "s", Type::Primitive(PrimitiveType::String)),
            NestedField::optional(
                4,
                "d",
                Type::Primitive(PrimitiveType::Decimal {
                    precision: 10,
                    scale: 2,
                }),
            ),
            NestedField::optional(
                5,
                "st",
                Type::Struct(icefloe::spec::StructType::new(vec![int(6, "a")])),
            ),
        ],
    );
    let root = dir.join(name);
    let mut w = LocalTableWriter::create(
        &root,
        schema,
        PartitionSpec::unpartitioned(),
        HashMap::new(),
    )
    .unwrap();
    w.add_parquet_files(files).unwrap();
    let got = run_sql(root.to_str().unwrap(), "SELECT * FROM t")
        .await
        .map(|b| b.iter().map(|b| b.num_rows()).sum());
    (root, got)
}

/// A file with columns `id` (field id 1) and the given ones (name, type, id, values).
fn write_columns(path: &Path, columns: Vec<(&str, DataType, i32, ArrayRef)>) {
    let mut fields = vec![field("id", DataType::Int64, 1, false)];
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(vec![1, 2]))];
    for (name, dt, id, array) in columns {
        fields.push(field(name, dt, id, true));
        arrays.push(array);
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap();
    write_batch(path, &batch);
}

#[tokio::test]
async fn a_column_stored_as_another_type_is_an_error_naming_file_column_and_types() {
    use datafusion::arrow::array::{BinaryArray, Decimal128Array, Float64Array, Int16Array};
    let dir = tempfile::tempdir().unwrap();
    // the spec's promotions and other encodings of the same type read:
    // int16 under int, binary (unannotated BYTE_ARRAY) under string, decimal(8,2) under
    // decimal(10,2)
    let good = dir.path().join("good.parquet");
    write_columns(
        &good,
        vec![
            (
                "x",
                DataType::Int16,
                2,
                Arc::new(Int16Array::from(vec![7, -3])),
            ),
            (
                "s",
                DataType::Binary,
                3,
                Arc::new(BinaryArray::from(vec![&b"ab"[..], b"c"])),
            ),
            (
                "d",
                DataType::Decimal128(8, 2),
                4,
                Arc::new(
                    Decimal128Array::from(vec![470, -1])
                        .with_precision_and_scale(8, 2)
                        .unwrap(),
                ),
            ),
        ],
    );
    let (root, got) = read_all(dir.path(), "good", std::slice::from_ref(&good)).await;
    assert_eq!(got, Ok(2));
    let batches = query(&root, "SELECT x, s, CAST(d AS VARCHAR) FROM t ORDER BY id").await;
    assert_eq!(i64_column(&batches, 0), vec![Some(7), Some(-3)]);
    assert_eq!(
        string_column(&batches, 1),
        vec![Some("ab".into()), Some("c".into())]
    );
    assert_eq!(
        string_column(&batches, 2),
        vec![Some("4.70".into()), Some("-0.01".into())]
    );

    // anything else fails naming the file, the column (nested too) and both types
    let double = dir.path().join("double_under_int.parquet");
    write_columns(
        &double,
        vec![(
            "x",
            DataType::Float64,
            2,
            Arc::new(Float64Array::from(vec![4.7, 1.0])),
        )],
    );
    let text = dir.path().join("int_under_string.parquet");
    write_columns(
        &text,
        vec![(
            "s",
            DataType::Int64,
            3,
            Arc::new(Int64Array::from(vec![1, 2])),
        )],
    );
    let scale = dir.path().join("other_scale.parquet");
    write_columns(
        &scale,
        vec![(
            "d",
            DataType::Decimal128(10, 3),
            4,
            Arc::new(
                Decimal128Array::from(vec![4700, 1])
                    .with_precision_and_scale(10, 3)
                    .unwrap(),
            ),
        )],
    );
    let nested = dir.path().join("nested_double.parquet");
    let inner = Fields::from(vec![field("a", DataType::Float64, 6, true)]);
    let st = StructArray::new(
        inner.clone(),
        vec![Arc::new(Float64Array::from(vec![0.5, 2.5])) as ArrayRef],
        None,
    );
    write_columns(
        &nested,
        vec![("st", DataType::Struct(inner), 5, Arc::new(st))],
    );
    for (file, column, stored) in [
        (
            &double,
            "'x' (field id 2)",
            "Float64, which does not read as the table's type int",
        ),
        (&text, "'s' (field id 3)", "Int64"),
        (&scale, "'d' (field id 4)", "Decimal128(10, 3)"),
        (&nested, "'st.a' (field id 6)", "Float64"),
    ] {
        let name = file.file_stem().unwrap().to_str().unwrap();
        let (root, got) = read_all(dir.path(), name, &[good.clone(), file.clone()]).await;
        let err = got.expect_err(name);
        assert!(
            err.contains(&format!("data file '{}'", file.display())),
            "{err}"
        );
        assert!(
            err.contains(&format!("column {column} is stored as {stored}")),
            "{err}"
        );
        assert!(err.contains("type promotions"), "{err}");
        assert!(!err.contains("Parquet error: Parquet error"), "{err}");
        // COUNT(*) is still answered from the manifests
        let count = query(&root, "SELECT count(*) FROM t").await;
        assert_eq!(i64_column(&count, 0), vec![Some(4)]);
    }
}

#[tokio::test]
async fn a_data_file_that_is_not_what_the_manifest_says_is_named_with_the_reason() {
    use datafusion::arrow::array::Int16Array;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.parquet");
    write_columns(
        &file,
        vec![(
            "x",
            DataType::Int16,
            2,
            Arc::new(Int16Array::from(vec![1, 2])),
        )],
    );
    let (root, got) = read_all(dir.path(), "t", std::slice::from_ref(&file)).await;
    assert_eq!(got, Ok(2));
    let bytes = std::fs::read(&file).unwrap();
    let sql = "SELECT sum(x) FROM t";
    let fails = |why: &str| {
        let root = root.clone();
        let why = why.to_string();
        async move {
            let err = run_sql(root.to_str().unwrap(), sql).await.expect_err(&why);
            assert!(err.contains("data file '/"), "{why}: {err}");
            err
        }
    };
    // truncated
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let err = fails("truncated").await;
    assert!(
        err.contains(&format!(
            "is {} bytes, the manifest says {}",
            bytes.len() / 2,
            bytes.len()
        )),
        "{err}"
    );
    // replaced by a longer file (bytes past the recorded size are never read, so only a
    // file whose first `file_size_in_bytes` bytes do not end in its footer is noticed;
    // no HEAD request is made per file to compare sizes up front)
    let mut longer = vec![b'x'; 100];
    longer.extend_from_slice(&bytes);
    std::fs::write(&file, &longer).unwrap();
    let err = fails("grown").await;
    assert!(err.contains(&format!("is {} bytes", longer.len())), "{err}");
    // the same size, not Parquet
    std::fs::write(&file, vec![b'x'; bytes.len()]).unwrap();
    let err = fails("not parquet").await;
    assert!(err.contains("is not a readable Parquet file"), "{err}");
    // gone
    std::fs::remove_file(&file).unwrap();
    let err = fails("missing").await;
    assert!(err.contains("does not exist"), "{err}");
}
