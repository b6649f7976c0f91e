//! Self-checks of the normaliser, run at the start of every conformance run (the target has
//! `harness = false`, so these are plain assertions that panic on mismatch).

use std::sync::Arc;

use datafusion::arrow::array::*;
use datafusion::arrow::datatypes::*;
use serde_json::{json, Value};

use crate::normalize::*;

fn cell(arr: &dyn Array, row: usize, ty: &ExpType) -> Value {
    canon(&cell_to_json(arr, row, Some(ty)).expect("cell_to_json"), ty)
}

fn ty(s: &str) -> ExpType {
    parse_type(s, Dialect::Spark)
}

pub fn run() {
    // --- type parsing
    assert_eq!(ty("int"), ExpType::Int(32));
    assert_eq!(ty("bigint"), ExpType::Int(64));
    assert_eq!(ty("decimal(38,10)"), ExpType::Decimal(38, 10));
    assert_eq!(ty("timestamp"), ExpType::Timestamp { tz: true });
    assert_eq!(ty("timestamp_ntz"), ExpType::Timestamp { tz: false });
    assert_eq!(ty("timestamp_ns"), ExpType::TimestampNs { tz: false });
    assert_eq!(ty("timestamptz_ns"), ExpType::TimestampNs { tz: true });
    assert_eq!(
        parse_type("TIMESTAMP", Dialect::DuckDb),
        ExpType::Timestamp { tz: false }
    );
    assert_eq!(
        parse_type("TIMESTAMP WITH TIME ZONE", Dialect::DuckDb),
        ExpType::Timestamp { tz: true }
    );
    assert_eq!(
        parse_type("DECIMAL(12,3)", Dialect::DuckDb),
        ExpType::Decimal(12, 3)
    );
    assert_eq!(
        parse_type("INTEGER[]", Dialect::DuckDb),
        ExpType::List(Box::new(ExpType::Int(32)))
    );
    let nested = ty("struct<a:int,b:string,inner:struct<c:double>>");
    assert_eq!(
        nested,
        ExpType::Struct(vec![
            ("a".into(), ExpType::Int(32)),
            ("b".into(), ExpType::String),
            (
                "inner".into(),
                ExpType::Struct(vec![("c".into(), ExpType::Float64)])
            ),
        ])
    );
    assert_eq!(
        ty("map<int,struct<p:string>>"),
        ExpType::Map(
            Box::new(ExpType::Int(32)),
            Box::new(ExpType::Struct(vec![("p".into(), ExpType::String)]))
        )
    );
    assert!(matches!(ty("interval day"), ExpType::Unknown(_)));

    // --- type checks
    assert!(check_type(
        &ty("timestamp"),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into()))
    )
    .is_ok());
    assert!(check_type(
        &ty("timestamp"),
        &DataType::Timestamp(TimeUnit::Microsecond, None)
    )
    .is_err());
    assert!(check_type(&ty("int"), &DataType::Int64).is_err());
    assert!(check_type(&ty("decimal(9,2)"), &DataType::Decimal128(9, 2)).is_ok());
    assert!(check_type(&ty("decimal(9,2)"), &DataType::Decimal128(9, 3)).is_err());
    assert!(check_type(&ty("string"), &DataType::Utf8View).is_ok());
    assert!(check_type(&ExpType::Uuid, &DataType::FixedSizeBinary(16)).is_ok());

    // --- floats: NaN, infinities, -0.0, float32 widening
    let f64s = Float64Array::from(vec![
        Some(f64::NAN),
        Some(-0.0),
        Some(f64::INFINITY),
        Some(f64::NEG_INFINITY),
        Some(1.25),
        None,
    ]);
    let dbl = ty("double");
    let got: Vec<Value> = (0..f64s.len()).map(|i| cell(&f64s, i, &dbl)).collect();
    assert_eq!(
        got,
        vec![
            json!("NaN"),
            json!("-0.0"),
            json!("Infinity"),
            json!("-Infinity"),
            json!(1.25),
            Value::Null
        ]
    );
    assert!(json_eq(&canon(&json!("-0.0"), &dbl), &got[1]));
    assert!(
        !json_eq(&canon(&json!(0.0), &dbl), &got[1]),
        "-0.0 must differ from 0.0"
    );
    let f32s = Float32Array::from(vec![1.1f32, f32::NAN]);
    let flt = ty("float");
    assert!(json_eq(
        &cell(&f32s, 0, &flt),
        &canon(&json!(1.100000023841858), &flt)
    ));
    assert_eq!(cell(&f32s, 1, &flt), json!("NaN"));

    // --- decimals keep the column scale
    let dec = Decimal128Array::from(vec![317i128, -5, 0])
        .with_precision_and_scale(9, 2)
        .expect("dec");
    let d92 = ty("decimal(9,2)");
    assert_eq!(cell(&dec, 0, &d92), json!("3.17"));
    assert_eq!(cell(&dec, 1, &d92), json!("-0.05"));
    assert_eq!(cell(&dec, 2, &d92), json!("0.00"));
    let big = Decimal128Array::from(vec![12345678901230123456789i128])
        .with_precision_and_scale(38, 10)
        .expect("dec");
    assert_eq!(
        cell(&big, 0, &ty("decimal(38,10)")),
        json!("1234567890123.0123456789")
    );
    assert_eq!(canon(&json!("12.3"), &d92), json!("12.30"));
    assert_eq!(decimal_string("-12345", 0), "-12345");

    // --- timestamps (UTC with Z for instants), dates, times
    let tz = TimestampMicrosecondArray::from(vec![1704092400000001i64, -1_800_000_000])
        .with_timezone("+00:00");
    let tsz = ty("timestamp");
    assert_eq!(cell(&tz, 0, &tsz), json!("2024-01-01T07:00:00.000001Z"));
    assert_eq!(cell(&tz, 1, &tsz), json!("1969-12-31T23:30:00.000000Z"));
    let ntz = TimestampNanosecondArray::from(vec![1704085200000002000i64]);
    assert_eq!(
        cell(&ntz, 0, &ty("timestamp_ntz")),
        json!("2024-01-01T05:00:00.000002")
    );
    // timestamp_ns / timestamptz_ns: 9 digits always, also when the sub-microsecond digits
    // are zero (and with them), as the corpus encodes them
    let ns = TimestampNanosecondArray::from(vec![1704085200000002000i64, 1704085200000002003]);
    assert_eq!(
        cell(&ns, 0, &ty("timestamp_ns")),
        json!("2024-01-01T05:00:00.000002000")
    );
    assert_eq!(
        cell(&ns, 1, &ty("timestamp_ns")),
        json!("2024-01-01T05:00:00.000002003")
    );
    let nsz = ns.clone().with_timezone("+00:00");
    assert_eq!(
        cell(&nsz, 0, &ty("timestamptz_ns")),
        json!("2024-01-01T05:00:00.000002000Z")
    );
    assert_eq!(
        cell_to_json(&nsz, 0, None).expect("no hint"),
        json!("2024-01-01T05:00:00.000002000Z")
    );
    assert!(check_type(&ty("timestamp_ns"), ns.data_type()).is_ok());
    assert!(check_type(
        &ty("timestamp_ns"),
        &DataType::Timestamp(TimeUnit::Microsecond, None)
    )
    .is_err());
    let dates = Date32Array::from(vec![-1, 19737]);
    assert_eq!(cell(&dates, 0, &ty("date")), json!("1969-12-31"));
    assert_eq!(cell(&dates, 1, &ty("date")), json!("2024-01-15"));
    let times = Time64MicrosecondArray::from(vec![3_661_000_007i64]);
    assert_eq!(cell(&times, 0, &ExpType::Time), json!("01:01:01.000007"));

    // --- binary, fixed, uuid
    let bin = BinaryArray::from(vec![&[0x03u8, 0x15][..], &[][..]]);
    assert_eq!(cell(&bin, 0, &ty("binary")), json!("0315"));
    assert_eq!(cell(&bin, 1, &ty("binary")), json!(""));
    let u = FixedSizeBinaryArray::try_from_iter(
        vec![vec![
            0u8, 0, 0, 0, 0, 0, 0, 4, 0x53, 0x84, 0x54, 0x12, 0x7b, 0x09, 0x64, 0x93,
        ]]
        .into_iter(),
    )
    .expect("fsb");
    assert_eq!(
        cell(&u, 0, &ExpType::Uuid),
        json!("00000000-0000-0004-5384-54127b096493")
    );
    assert_eq!(
        cell(&u, 0, &ExpType::Binary),
        json!("0000000000000004538454127b096493")
    );

    // --- nested: struct (null struct vs struct of nulls), list, map sorted by key
    let inner = StructArray::from(vec![(
        Arc::new(Field::new("c", DataType::Float64, true)),
        Arc::new(Float64Array::from(vec![Some(1.5), None])) as ArrayRef,
    )]);
    let st = StructArray::try_new(
        vec![
            Arc::new(Field::new("a", DataType::Int32, true)),
            Arc::new(Field::new("inner", inner.data_type().clone(), true)),
        ]
        .into(),
        vec![
            Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef,
            Arc::new(inner) as ArrayRef,
        ],
        Some(vec![true, false].into()),
    )
    .expect("struct");
    let st_ty = ty("struct<a:int,inner:struct<c:double>>");
    assert!(check_type(&st_ty, st.data_type()).is_ok());
    assert!(json_eq(
        &cell(&st, 0, &st_ty),
        &canon(&json!({"a": 1, "inner": {"c": 1.5}}), &st_ty)
    ));
    assert_eq!(cell(&st, 1, &st_ty), Value::Null);
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
        Some(vec![None, Some(5)]),
        Some(vec![]),
    ]);
    assert_eq!(cell(&list, 0, &ty("array<int>")), json!([null, 5]));
    assert_eq!(cell(&list, 1, &ty("array<int>")), json!([]));
    let mut mb = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    mb.keys().append_value("k2");
    mb.values().append_value(2);
    mb.keys().append_value("k1");
    mb.values().append_null();
    mb.append(true).expect("map");
    let map = mb.finish();
    let m_ty = ty("map<string,int>");
    assert!(check_type(&m_ty, map.data_type()).is_ok());
    assert_eq!(cell(&map, 0, &m_ty), json!([["k1", null], ["k2", 2]]));

    // --- row comparison
    let types = vec![ExpType::Int(32), ExpType::Float64];
    let exp = canon_expected(&[json!([1, "NaN"]), json!([2, 0.5])], &types).expect("canon");
    let act = canon_expected(&[json!([2, 0.5]), json!([1, "NaN"])], &types).expect("canon");
    assert!(compare_rows(&exp, &act, false).is_ok());
    assert!(compare_rows(&exp, &act, true).is_err());
    let short = canon_expected(&[json!([1, "NaN"])], &types).expect("canon");
    assert!(compare_rows(&exp, &short, false).is_err());
    assert!(canon_expected(&[json!([1])], &types).is_err());
}
