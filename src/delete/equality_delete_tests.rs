//! Unit tests of equality delete reading (in-memory Parquet and temp files; the corpus
//! tables are checked end to end in `corpus_tests.rs`).

use std::collections::HashSet;

use datafusion::arrow::array::{Int32Array, Int64Array, StringArray, StructArray};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{Field, Schema as ArrowSchema};
use datafusion::arrow::row::SortField;
use datafusion::parquet::arrow::ArrowWriter;

use super::*;
use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;
use crate::spec::{DataFile, ManifestStatus, NestedField, PrimitiveType, Type};
use crate::ErrorKind;

fn with_id(f: Field, id: i32) -> Field {
    f.with_metadata(HashMap::from([(
        PARQUET_FIELD_ID_META_KEY.to_string(),
        id.to_string(),
    )]))
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

/// Table: 1 id long (promoted from int), 2 name string, 3 s struct<4 k int>, 5 dropped int.
fn schemas() -> (Schema, Schema) {
    let current = Schema::new(
        1,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "name", Type::Primitive(PrimitiveType::String)),
            NestedField::optional(
                3,
                "s",
                Type::Struct(crate::spec::StructType::new(vec![NestedField::optional(
                    4,
                    "k",
                    Type::Primitive(PrimitiveType::Int),
                )])),
            ),
        ],
    );
    let old = Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Int)),
            NestedField::optional(5, "gone", Type::Primitive(PrimitiveType::Int)),
        ],
    );
    (current, old)
}

/// A delete file written before the promotion: id as int, with a struct and a dropped column.
fn delete_file() -> Bytes {
    let k = with_id(Field::new("k", DataType::Int32, true), 4);
    let s = StructArray::new(
        vec![k.clone()].into(),
        vec![Arc::new(Int32Array::from(vec![Some(10), Some(20), Some(30)])) as ArrayRef],
        Some(NullBuffer::from(vec![true, false, true])),
    );
    parquet(
        vec![
            with_id(Field::new("id", DataType::Int32, false), 1),
            with_id(Field::new("name", DataType::Utf8, true), 2),
            with_id(Field::new("s", DataType::Struct(vec![k].into()), true), 3),
            with_id(Field::new("gone", DataType::Int32, true), 5),
        ],
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3])),
            Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
            Arc::new(s),
            Arc::new(Int32Array::from(vec![7, 8, 9])),
        ],
    )
}

#[test]
fn target_schema_from_table_schemas() {
    let (current, old) = schemas();
    let schema = equality_delete_schema(&[&current, &old], &[2, 1, 5]).unwrap();
    let names: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| (f.name().as_str(), f.data_type().clone(), f.is_nullable()))
        .collect();
    assert_eq!(
        names,
        [
            ("name", DataType::Utf8, true),
            ("id", DataType::Int64, true),
            ("gone", DataType::Int32, true)
        ]
    );
    assert_eq!(arrow_field_id(schema.field(2)), Some(5));
    let err = equality_delete_schema(&[&current], &[99]).unwrap_err();
    assert!(err.to_string().contains("99"), "{err}");
}

#[test]
fn reads_key_columns_by_id_casting_and_nesting() {
    let (current, old) = schemas();
    let target = equality_delete_schema(&[&current, &old], &[1, 4, 2, 5]).unwrap();
    let batches = parse_equality_delete_file(delete_file(), "eq.parquet", &target).unwrap();
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    assert_eq!(b.schema(), target);
    assert_eq!(
        b.column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .values(),
        &[1, 2, 3]
    );
    // the null parent struct makes k null in row 1
    let k = b
        .column(1)
        .as_primitive::<datafusion::arrow::datatypes::Int32Type>();
    assert_eq!((k.is_null(0), k.is_null(1), k.value(2)), (false, true, 30));
    assert!(b.column(2).is_null(1));
    assert_eq!(
        b.column(3)
            .as_primitive::<datafusion::arrow::datatypes::Int32Type>()
            .value(0),
        7
    );
}

#[test]
fn missing_column_is_an_error_naming_it() {
    let target = Arc::new(ArrowSchema::new(vec![with_id(
        Field::new("region", DataType::Utf8, true),
        42,
    )]));
    let err = parse_equality_delete_file(delete_file(), "eq.parquet", &target).unwrap_err();
    // the file exists: its data is what is wrong (report W67 F12)
    assert_eq!(err.kind(), ErrorKind::InvalidData);
    assert!(
        err.to_string().contains("'eq.parquet'")
            && err.to_string().contains("'region' (field id 42)"),
        "{err}"
    );
}

#[test]
fn name_fallback_without_field_ids() {
    let bytes = parquet(
        vec![Field::new("id", DataType::Int64, false)],
        vec![Arc::new(Int64Array::from(vec![4, 5]))],
    );
    let target = Arc::new(ArrowSchema::new(vec![with_id(
        Field::new("id", DataType::Int64, true),
        1,
    )]));
    let batches = parse_equality_delete_file(bytes, "eq", &target).unwrap();
    assert_eq!(batches[0].num_rows(), 2);
}

#[test]
fn incompatible_type_and_truncation_are_invalid_data() {
    let target = Arc::new(ArrowSchema::new(vec![with_id(
        Field::new("s", DataType::Int64, true),
        3,
    )]));
    let err = parse_equality_delete_file(delete_file(), "eq.parquet", &target).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
    assert!(err.to_string().contains("eq.parquet"), "{err}");
    let bytes = delete_file();
    let target = Arc::new(ArrowSchema::new(vec![with_id(
        Field::new("id", DataType::Int64, true),
        1,
    )]));
    for len in (0..bytes.len()).step_by(11) {
        let err =
            parse_equality_delete_file(bytes.slice(..len), "cut.parquet", &target).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
        assert!(err.to_string().contains("cut.parquet"), "{err}");
    }
}

#[test]
fn key_rows_match_null_only_with_null() {
    let (current, _) = schemas();
    let target = equality_delete_schema(&[&current], &[2]).unwrap();
    let batches = parse_equality_delete_file(delete_file(), "eq", &target).unwrap();
    let converter = RowConverter::new(vec![SortField::new(DataType::Utf8)]).unwrap();
    let keys: HashSet<OwnedRow> = build_key_rows(&batches, &converter)
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(keys.len(), 3);
    let probe: ArrayRef = Arc::new(StringArray::from(vec![
        Some("a"),
        None,
        Some("b"),
        Some(""),
    ]));
    let rows = converter.convert_columns(&[probe]).unwrap();
    let hits: Vec<bool> = rows.iter().map(|r| keys.contains(&r.owned())).collect();
    assert_eq!(hits, [true, true, false, false]);
}

fn entry(path: &str) -> ManifestEntry {
    ManifestEntry {
        status: ManifestStatus::Added,
        snapshot_id: 1,
        data_sequence_number: 2,
        file_sequence_number: 2,
        spec_id: 0,
        data_file: DataFile {
            record_count: 3,
            file_size_in_bytes: std::fs::metadata(path).map_or(1, |m| m.len() as i64),
            equality_ids: vec![1],
            ..crate::write::empty_data_file(path, DataContentType::EqualityDeletes)
        },
    }
}

#[tokio::test]
async fn loader_caches_per_file_and_names_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eq.parquet").to_string_lossy().to_string();
    std::fs::write(&path, delete_file()).unwrap();
    let (current, _) = schemas();
    let target = equality_delete_schema(&[&current], &[1]).unwrap();
    let loader = EqualityDeleteLoader::new(FileIO::default());
    let recorded = entry(&path);
    let first = loader.load(&recorded, &target).await.unwrap();
    assert_eq!(first.num_rows(), 3);
    std::fs::remove_file(&path).unwrap();
    let again = loader.load(&recorded, &target).await.unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    let err = EqualityDeleteLoader::new(FileIO::default())
        .load(&recorded, &target)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("eq.parquet"), "{err}");
    let mut pos = entry(&path);
    pos.data_file.content = DataContentType::PositionDeletes;
    assert_eq!(
        loader.load(&pos, &target).await.unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn int96_keys_read_as_microseconds() {
    use datafusion::parquet::basic::{Repetition, Type as PType};
    use datafusion::parquet::data_type::{Int96, Int96Type};
    use datafusion::parquet::file::writer::SerializedFileWriter;
    use datafusion::parquet::schema::types::Type as SchemaType;
    // 3332-12-14T11:33:10.965Z: Julian day and nanoseconds of the day
    let micros: i64 = 43_010_652_790_965_000;
    let day = micros.div_euclid(86_400_000_000) + 2_440_588;
    let nanos = micros.rem_euclid(86_400_000_000) * 1000;
    let mut v = Int96::new();
    v.set_data(nanos as u32, (nanos >> 32) as u32, day as u32);
    let column = SchemaType::primitive_type_builder("ts", PType::INT96)
        .with_repetition(Repetition::REQUIRED)
        .with_id(Some(1))
        .build()
        .unwrap();
    let schema = SchemaType::group_type_builder("m")
        .with_fields(vec![Arc::new(column)])
        .build()
        .unwrap();
    let mut buf = vec![];
    let mut w = SerializedFileWriter::new(&mut buf, Arc::new(schema), Default::default()).unwrap();
    let mut rg = w.next_row_group().unwrap();
    let mut col = rg.next_column().unwrap().unwrap();
    col.typed::<Int96Type>()
        .write_batch(&[v], None, None)
        .unwrap();
    col.close().unwrap();
    rg.close().unwrap();
    w.close().unwrap();
    let target: SchemaRef = Arc::new(ArrowSchema::new(vec![with_id(
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        1,
    )]));
    let batches = parse_equality_delete_file(Bytes::from(buf), "eq", &target).unwrap();
    let ts = cast(batches[0].column(0), &DataType::Int64).unwrap();
    assert_eq!(
        ts.as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0),
        micros
    );
}

/// An equality delete file of another size than its entry's `file_size_in_bytes`
/// (replaced by another, or truncated) is refused naming it and both sizes (report W67
/// F3), where its keys used to delete other rows.
#[tokio::test]
async fn a_delete_file_of_another_size_than_the_manifest_says_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("eq.parquet").to_string_lossy().to_string();
    let (current, _) = schemas();
    let target = equality_delete_schema(&[&current], &[1]).unwrap();
    let mut recorded = entry(&path);
    recorded.data_file.file_size_in_bytes = delete_file().len() as i64 + 17;
    std::fs::write(&path, delete_file()).unwrap();
    let err = EqualityDeleteLoader::new(FileIO::default())
        .load(&recorded, &target)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
    assert!(
        err.to_string().contains(&format!(
            "equality delete file '{path}' is {} bytes, the manifest says {} \
             (file_size_in_bytes): the file was replaced or truncated",
            delete_file().len(),
            delete_file().len() + 17
        )),
        "{err}"
    );
}
