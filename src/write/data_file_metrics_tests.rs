//! Metrics of written data files: metrics modes, NaN counts, truncated bounds and the
//! single-value serialization of bounds (spec: "Manifests", Appendix D).

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};

use super::data_file_writer_tests::{batch, bound, config, read_back, row, schema, temp_location};
use super::*;
use crate::io::FileIO;
use crate::spec::{Literal, NestedField, PartitionSpec, PrimitiveType, Schema, Type};

#[tokio::test]
async fn metrics_modes_are_respected() {
    let (_dir, loc) = temp_location();
    let io = FileIO::default();
    let cfg = config(&[
        ("write.metadata.metrics.default", "truncate(4)"),
        ("write.metadata.metrics.column.id", "none"),
        ("write.metadata.metrics.column.score", "counts"),
        ("write.metadata.metrics.column.s.a", "full"),
    ]);
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        cfg,
    )
    .expect("writer");
    let rows = vec![
        row(1, Some("ab😀cdef"), Some(f64::NAN), Some(1), Some(7)),
        row(2, Some("日本語テキスト"), Some(2.0), Some(9), Some(-7)),
        row(3, Some("b"), None, None, None),
    ];
    w.write(&batch(&rows)).await.expect("write");
    let files = w.close().await.expect("close");
    let f = &files[0];
    assert_eq!(read_back(&io, f).await, rows);
    // none: nothing at all
    assert!(!f.column_sizes.contains_key(&1));
    assert!(!f.value_counts.contains_key(&1));
    assert!(!f.null_value_counts.contains_key(&1));
    assert!(!f.lower_bounds.contains_key(&1));
    // counts: counts and NaN count, no bounds
    assert_eq!(f.value_counts.get(&3), Some(&3));
    assert_eq!(f.null_value_counts.get(&3), Some(&1));
    assert_eq!(f.nan_value_counts.get(&3), Some(&1));
    assert!(!f.lower_bounds.contains_key(&3) && !f.upper_bounds.contains_key(&3));
    // truncate(4): strings cut to 4 code points, the upper bound incremented
    let b = |id, ty, lower| bound(f, id, ty, lower);
    assert_eq!(
        b(2, PrimitiveType::String, true),
        Some(Literal::String("ab😀c".into()))
    );
    assert_eq!(
        b(2, PrimitiveType::String, false),
        Some(Literal::String("日本語デ".into()))
    );
    // truncate does not change non-string bounds
    assert_eq!(
        b(4, PrimitiveType::Timestamptz, false),
        Some(Literal::Timestamptz(9))
    );
    // full on a nested column
    assert_eq!(b(6, PrimitiveType::Int, true), Some(Literal::Int(-7)));
    assert_eq!(b(6, PrimitiveType::Int, false), Some(Literal::Int(7)));

    // full keeps long strings whole; counts on strings keeps no bounds
    let (_dir2, loc2) = temp_location();
    let cfg = config(&[
        ("write.metadata.metrics.default", "counts"),
        ("write.metadata.metrics.column.name", "full"),
    ]);
    let mut w = PartitionedDataFileWriter::new(
        io.clone(),
        &loc2,
        &schema(),
        &PartitionSpec::unpartitioned(),
        cfg,
    )
    .expect("writer");
    let long = "x".repeat(40);
    w.write(&batch(&[row(1, Some(&long), None, Some(3), None)]))
        .await
        .expect("write");
    let f = &w.close().await.expect("close")[0];
    assert_eq!(
        bound(f, 2, PrimitiveType::String, false),
        Some(Literal::String(long))
    );
    assert!(!f.lower_bounds.contains_key(&4));
    assert_eq!(f.value_counts.get(&4), Some(&1));
}

#[tokio::test]
async fn all_nan_column_has_no_bounds() {
    let (_dir, loc) = temp_location();
    let mut w = PartitionedDataFileWriter::new(
        FileIO::default(),
        &loc,
        &schema(),
        &PartitionSpec::unpartitioned(),
        DataFileWriterConfig::default(),
    )
    .expect("writer");
    let rows = vec![
        row(1, None, Some(f64::NAN), None, None),
        row(2, None, Some(f64::NAN), None, None),
        row(3, None, None, None, None),
    ];
    w.write(&batch(&rows)).await.expect("write");
    let f = &w.close().await.expect("close")[0];
    assert_eq!(f.nan_value_counts.get(&3), Some(&2));
    assert_eq!(f.null_value_counts.get(&3), Some(&1));
    assert!(!f.lower_bounds.contains_key(&3) && !f.upper_bounds.contains_key(&3));
    // all-null columns have counts but no bounds
    assert_eq!(f.null_value_counts.get(&2), Some(&3));
    assert!(!f.lower_bounds.contains_key(&2));
}

#[tokio::test]
async fn bounds_use_single_value_serialization() {
    use datafusion::arrow::array::{
        BinaryArray, Date32Array, Decimal128Array, FixedSizeBinaryArray, Time64MicrosecondArray,
        TimestampNanosecondArray,
    };
    let p = |t| Type::Primitive(t);
    let dec = |precision, scale| PrimitiveType::Decimal { precision, scale };
    let schema = Schema::new(
        0,
        vec![
            NestedField::optional(1, "dec", p(dec(10, 2))),
            NestedField::optional(2, "dec38", p(dec(38, 4))),
            NestedField::optional(3, "u", p(PrimitiveType::Uuid)),
            NestedField::optional(4, "fx", p(PrimitiveType::Fixed(3))),
            NestedField::optional(5, "bin", p(PrimitiveType::Binary)),
            NestedField::optional(6, "d", p(PrimitiveType::Date)),
            NestedField::optional(7, "t", p(PrimitiveType::Time)),
            NestedField::optional(8, "tsn", p(PrimitiveType::TimestampNs)),
        ],
    );
    let big = -(10i128.pow(30));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(
            Decimal128Array::from(vec![Some(-12345), Some(678), None])
                .with_precision_and_scale(10, 2)
                .expect("dec"),
        ),
        Arc::new(
            Decimal128Array::from(vec![Some(big), Some(5), None])
                .with_precision_and_scale(38, 4)
                .expect("dec38"),
        ),
        Arc::new(
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                vec![Some([0u8; 16]), Some([0xffu8; 16]), None].into_iter(),
                16,
            )
            .expect("uuid"),
        ),
        Arc::new(
            FixedSizeBinaryArray::try_from_iter(
                vec![[1u8, 2, 3], [0, 9, 9], [0, 9, 9]].into_iter(),
            )
            .expect("fixed"),
        ),
        Arc::new(BinaryArray::from_opt_vec(vec![
            Some(&[5u8, 6, 7][..]),
            Some(&[5u8, 0xff, 0xff, 1][..]),
            None,
        ])),
        Arc::new(Date32Array::from(vec![Some(-1), Some(10), None])),
        Arc::new(Time64MicrosecondArray::from(vec![
            Some(5),
            Some(86_399_999_999),
            None,
        ])),
        Arc::new(TimestampNanosecondArray::from(vec![
            Some(-1),
            Some(1_000),
            None,
        ])),
    ];
    let arrow = ArrowSchema::new(
        columns
            .iter()
            .zip(schema.columns())
            .map(|(c, f)| Field::new(&f.name, c.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    let batch = RecordBatch::try_new(Arc::new(arrow), columns).expect("batch");
    let (_dir, loc) = temp_location();
    let mut w = PartitionedDataFileWriter::new(
        FileIO::default(),
        &loc,
        &schema,
        &PartitionSpec::unpartitioned(),
        config(&[("write.metadata.metrics.default", "truncate(2)")]),
    )
    .expect("writer");
    w.write(&batch).await.expect("write");
    let f = &w.close().await.expect("close")[0];
    let lower = |id: i32| f.lower_bounds.get(&id).map(|b| b.to_vec());
    let upper = |id: i32| f.upper_bounds.get(&id).map(|b| b.to_vec());
    // decimals: minimal big-endian two's complement
    assert_eq!(lower(1), Some(vec![0xCF, 0xC7]));
    assert_eq!(upper(1), Some(vec![0x02, 0xA6]));
    assert_eq!(
        bound(f, 2, dec(38, 4), true),
        Some(Literal::Decimal {
            unscaled: big,
            precision: 38,
            scale: 4
        })
    );
    assert_eq!(upper(2), Some(vec![0x05]));
    // uuid: 16 bytes; fixed: whole (not truncated); binary: truncated to 2 bytes
    assert_eq!(lower(3), Some(vec![0; 16]));
    assert_eq!(upper(3), Some(vec![0xff; 16]));
    assert_eq!(lower(4), Some(vec![0, 9, 9]));
    assert_eq!(upper(4), Some(vec![1, 2, 3]));
    assert_eq!(lower(5), Some(vec![5, 6]));
    assert_eq!(upper(5), Some(vec![6]));
    // date 4 bytes LE, time and timestamp_ns 8 bytes LE
    assert_eq!(lower(6), Some((-1i32).to_le_bytes().to_vec()));
    assert_eq!(upper(6), Some(10i32.to_le_bytes().to_vec()));
    assert_eq!(lower(7), Some(5i64.to_le_bytes().to_vec()));
    assert_eq!(upper(7), Some(86_399_999_999i64.to_le_bytes().to_vec()));
    assert_eq!(lower(8), Some((-1i64).to_le_bytes().to_vec()));
    assert_eq!(upper(8), Some(1_000i64.to_le_bytes().to_vec()));
    for id in 1..=8 {
        let nulls = if id == 4 { 0 } else { 1 };
        assert_eq!(f.null_value_counts.get(&id), Some(&nulls), "nulls {id}");
    }
}

/// `batch(rows)` with its `name` column (Utf8View) as `layout` instead.
fn with_name_layout(rows: &[super::data_file_writer_tests::Row], layout: &DataType) -> RecordBatch {
    let b = batch(rows);
    let name = cast(b.column(1), layout).expect("cast name");
    let mut fields: Vec<Field> = b
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields[1] = fields[1].clone().with_data_type(layout.clone());
    let mut columns: Vec<ArrayRef> = b.columns().to_vec();
    columns[1] = name;
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).expect("batch")
}

/// Strings arriving as `Utf8`, `Utf8View` (written without a cast) or `LargeUtf8` make
/// the same file: the same Parquet column (BYTE_ARRAY, STRING), the same Arrow schema
/// hint and `iceberg.schema`, the same metrics, partition values and rows.
#[tokio::test]
async fn string_layouts_write_the_same_file() {
    let rows: Vec<_> = (0..3000)
        .map(|i| {
            let name = format!("name-{}-{}", i % 17, "x".repeat((i % 40) as usize));
            row(
                i,
                (i % 11 != 0).then_some(name.as_str()),
                Some(i as f64),
                Some(i),
                Some(1),
            )
        })
        .collect();
    let spec = PartitionSpec {
        spec_id: 0,
        fields: vec![crate::spec::PartitionField {
            source_id: 2,
            field_id: Some(1000),
            name: "name_trunc".into(),
            transform: crate::spec::Transform::Truncate(6),
        }],
    };
    let mut written = Vec::new();
    for layout in [DataType::Utf8, DataType::Utf8View, DataType::LargeUtf8] {
        let (_dir, loc) = temp_location();
        let io = FileIO::default();
        let mut w = PartitionedDataFileWriter::new(
            io.clone(),
            &loc,
            &schema(),
            &spec,
            DataFileWriterConfig::default(),
        )
        .expect("writer");
        w.write(&with_name_layout(&rows[..1700], &layout))
            .await
            .expect("write");
        w.write(&with_name_layout(&rows[1700..], &layout))
            .await
            .expect("write");
        let files = w.close().await.expect("close");
        let mut out = Vec::new();
        for f in files {
            let bytes = io.read(&f.file_path).await.expect("read");
            let reader =
                datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                    bytes,
                )
                .expect("parquet");
            let column = reader.metadata().file_metadata().schema_descr().column(1);
            assert_eq!(
                column.physical_type(),
                datafusion::parquet::basic::Type::BYTE_ARRAY
            );
            assert_eq!(
                column.logical_type_ref(),
                Some(&datafusion::parquet::basic::LogicalType::String)
            );
            assert_eq!(
                reader.schema().field(1).data_type(),
                &DataType::Utf8,
                "{layout}: the Arrow schema hint"
            );
            let got = read_back(&io, &f).await;
            // locations differ by their uuid; everything else is the same
            let mut f = f;
            f.file_path = String::new();
            out.push((f, got));
        }
        written.push((layout, out));
    }
    let (_, utf8) = &written[0];
    assert!(utf8.len() > 3, "{} files", utf8.len());
    assert_eq!(utf8.iter().map(|(_, r)| r.len()).sum::<usize>(), rows.len());
    for (layout, files) in &written[1..] {
        assert_eq!(files.len(), utf8.len(), "{layout}");
        for ((a, ra), (b, rb)) in files.iter().zip(utf8) {
            assert_eq!(a, b, "{layout}: data file and metrics");
            assert_eq!(ra, rb, "{layout}: rows");
        }
    }
}
