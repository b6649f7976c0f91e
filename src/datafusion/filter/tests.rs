//! Conversion tests: SQL filters planned by DataFusion, converted, bound, and checked
//! against DataFusion's own answer on rows with NULL, NaN, ±0.0, negative, multi-byte
//! and pre-1970 values: every row DataFusion keeps must satisfy the predicate, and an
//! exact conversion must keep exactly DataFusion's rows.

use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;

use super::*;
use crate::eval::evaluate;
use crate::spec::arrow::schema_to_arrow;
use crate::spec::{NestedField, Type};

fn schema() -> Schema {
    let f = |id, name: &str, t| NestedField::optional(id, name, Type::Primitive(t));
    Schema::new(
        0,
        vec![
            NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
            f(2, "i", PrimitiveType::Int),
            f(3, "l", PrimitiveType::Long),
            f(4, "f", PrimitiveType::Float),
            f(5, "d", PrimitiveType::Double),
            f(
                6,
                "dec",
                PrimitiveType::Decimal {
                    precision: 9,
                    scale: 2,
                },
            ),
            f(7, "s", PrimitiveType::String),
            f(8, "dt", PrimitiveType::Date),
            f(9, "ts", PrimitiveType::Timestamptz),
            f(10, "ntz", PrimitiveType::Timestamp),
            f(11, "b", PrimitiveType::Boolean),
            f(12, "bin", PrimitiveType::Binary),
        ],
    )
}

type Row = Vec<Option<Literal>>;

fn rows() -> Vec<Row> {
    use Literal as L;
    let day = 86_400_000_000i64;
    let r = |i: Option<i32>,
             f: Option<f32>,
             d: Option<f64>,
             dec: Option<i128>,
             s: Option<&str>,
             dt: Option<i32>,
             ts: Option<i64>,
             b: Option<bool>| {
        vec![
            i.map(L::Int),
            i.map(|v| L::Long(i64::from(v) * 1_000_000_000)),
            f.map(L::Float),
            d.map(L::Double),
            dec.map(|u| L::Decimal {
                unscaled: u,
                precision: 9,
                scale: 2,
            }),
            s.map(|s| L::String(s.into())),
            dt.map(L::Date),
            ts.map(L::Timestamptz),
            ts.map(L::Timestamp),
            b.map(L::Boolean),
            s.map(|s| L::Binary(s.as_bytes().to_vec())),
        ]
    };
    vec![
        r(
            Some(1),
            Some(1.5),
            Some(1.5),
            Some(150),
            Some("abc"),
            Some(0),
            Some(0),
            Some(true),
        ),
        r(
            Some(-1),
            Some(-0.0),
            Some(-0.0),
            Some(-1),
            Some("ab"),
            Some(-1),
            Some(-1),
            Some(false),
        ),
        r(
            Some(0),
            Some(0.0),
            Some(0.0),
            Some(0),
            Some(""),
            Some(-365),
            Some(-day),
            None,
        ),
        r(None, None, None, None, None, None, None, None),
        r(
            Some(5),
            Some(f32::NAN),
            Some(f64::NAN),
            Some(12345),
            Some("é😀"),
            Some(17501),
            Some(1_512_123_175_038_194),
            Some(true),
        ),
        r(
            Some(10),
            Some(f32::INFINITY),
            Some(f64::NEG_INFINITY),
            Some(-99999),
            Some("abd"),
            Some(18000),
            Some(day * 18000 + 1),
            Some(false),
        ),
        r(
            Some(i32::MAX),
            Some(1.1),
            Some(1.1),
            Some(110),
            Some("zz\u{10FFFF}"),
            Some(i32::MIN / 2),
            Some(i64::MIN / 2),
            Some(true),
        ),
        r(
            Some(3),
            Some(3.0),
            Some(3.0),
            Some(300),
            Some("a%b_c"),
            Some(3),
            Some(3),
            None,
        ),
    ]
}

fn batch(schema: &Schema, rows: &[Row]) -> RecordBatch {
    use Literal as L;
    let arrow = Arc::new(schema_to_arrow(schema).unwrap());
    let col = |k: usize| rows.iter().map(move |r| r[k].clone());
    let ids: ArrayRef = Arc::new(Int64Array::from((0..rows.len() as i64).collect::<Vec<_>>()));
    let arrays: Vec<ArrayRef> = vec![
        ids,
        Arc::new(
            col(0)
                .map(|v| match v {
                    Some(L::Int(x)) => Some(x),
                    _ => None,
                })
                .collect::<Int32Array>(),
        ),
        Arc::new(
            col(1)
                .map(|v| match v {
                    Some(L::Long(x)) => Some(x),
                    _ => None,
                })
                .collect::<Int64Array>(),
        ),
        Arc::new(
            col(2)
                .map(|v| match v {
                    Some(L::Float(x)) => Some(x),
                    _ => None,
                })
                .collect::<Float32Array>(),
        ),
        Arc::new(
            col(3)
                .map(|v| match v {
                    Some(L::Double(x)) => Some(x),
                    _ => None,
                })
                .collect::<Float64Array>(),
        ),
        Arc::new(
            col(4)
                .map(|v| match v {
                    Some(L::Decimal { unscaled, .. }) => Some(unscaled),
                    _ => None,
                })
                .collect::<Decimal128Array>()
                .with_precision_and_scale(9, 2)
                .unwrap(),
        ),
        Arc::new(
            col(5)
                .map(|v| match v {
                    Some(L::String(x)) => Some(x),
                    _ => None,
                })
                .collect::<StringArray>(),
        ),
        Arc::new(
            col(6)
                .map(|v| match v {
                    Some(L::Date(x)) => Some(x),
                    _ => None,
                })
                .collect::<Date32Array>(),
        ),
        Arc::new(
            col(7)
                .map(|v| match v {
                    Some(L::Timestamptz(x)) => Some(x),
                    _ => None,
                })
                .collect::<TimestampMicrosecondArray>()
                .with_timezone("UTC"),
        ),
        Arc::new(
            col(8)
                .map(|v| match v {
                    Some(L::Timestamp(x)) => Some(x),
                    _ => None,
                })
                .collect::<TimestampMicrosecondArray>(),
        ),
        Arc::new(
            col(9)
                .map(|v| match v {
                    Some(L::Boolean(x)) => Some(x),
                    _ => None,
                })
                .collect::<BooleanArray>(),
        ),
        Arc::new(
            col(10)
                .map(|v| match v {
                    Some(L::Binary(x)) => Some(x),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .iter()
                .map(|o| o.as_deref())
                .collect::<BinaryArray>(),
        ),
    ];
    RecordBatch::try_new(arrow, arrays).unwrap()
}

fn filter_expr(plan: &LogicalPlan) -> Option<Expr> {
    if let LogicalPlan::Filter(f) = plan {
        return Some(f.predicate.clone());
    }
    plan.inputs().into_iter().find_map(filter_expr)
}

/// (WHERE clause, whether it must convert, whether the conversion must be exact)
const CASES: &[(&str, bool, bool)] = &[
    ("i = 5", true, true),
    ("5 = i", true, true),
    ("i != 5", true, true),
    ("i < 3", true, true),
    ("3 > i", true, true),
    ("i >= 3000000000", true, true),
    ("l <= -1000000000", true, true),
    ("i IN (1, 5, 7)", true, true),
    ("i NOT IN (1, 5)", true, true),
    ("i NOT IN (1, NULL)", true, true),
    ("i IN (1, NULL)", true, true),
    ("i IS NULL", true, true),
    ("i IS NOT NULL", true, true),
    ("NOT (i IS NULL)", true, true),
    ("i BETWEEN 0 AND 5", true, true),
    ("i NOT BETWEEN 0 AND 5", true, true),
    ("NOT (i < 3 OR s = 'ab')", true, true),
    ("i = NULL", true, true),
    ("i <=> 5", true, true),
    ("5 <=> i", true, true),
    ("i <=> CAST(NULL AS INT)", true, true),
    ("i IS DISTINCT FROM 5", true, true),
    ("NOT (i <=> 5)", true, true),
    ("i IS DISTINCT FROM CAST(NULL AS INT)", true, true),
    ("d <=> 0.0", true, false),
    ("d <=> -0.0", true, false),
    ("d IS DISTINCT FROM 0.0", true, false),
    ("d <=> 'NaN'", true, false),
    ("i < 3 AND i % 2 = 1", true, false),
    ("i < 3 OR i % 2 = 1", false, false),
    ("NOT (i < 3 AND i % 2 = 1)", false, false),
    ("NOT (i < 3 OR i % 2 = 1)", true, false),
    ("TRY_CAST(d AS INT) = 1", false, false),
    ("CAST(i AS BIGINT) > 2", true, true),
    ("CAST(i AS DOUBLE) > 2.5", true, true),
    ("i > 2.5", true, true),
    ("d > 1", true, false),
    ("d >= 1.5", true, false),
    ("d < 0.0", true, false),
    ("d > -0.0", true, false),
    ("d != 0.0", true, false),
    ("d = 0.0", true, false),
    ("d = 'NaN'", true, false),
    ("d != 'NaN'", true, false),
    ("d < 'NaN'", true, false),
    ("d > 'NaN'", true, false),
    ("d <= 'NaN'", true, false),
    ("NOT (d < 1)", true, false),
    ("d IN (0.0, 'NaN')", true, false),
    ("d NOT IN (0.0, 'NaN')", true, false),
    ("f = 1.1", true, false),
    ("f > 1.1", true, false),
    ("f < 1.1", true, false),
    ("isnan(d)", true, false),
    ("NOT isnan(d)", true, false),
    ("isnan(f)", true, false),
    ("dec > 1.2", true, true),
    ("dec = 1.234", true, true),
    ("dec < 1.234", true, true),
    ("dec >= -0.01", true, true),
    ("s = 'abc'", true, true),
    ("s LIKE 'ab%'", true, true),
    ("s NOT LIKE 'ab%'", true, true),
    ("s LIKE 'ab'", true, true),
    ("s LIKE 'a_c'", false, false),
    ("s LIKE '%b'", false, false),
    ("s LIKE 'a\\%%'", false, false),
    ("s ILIKE 'ab%'", false, false),
    ("s LIKE 'é%'", true, true),
    ("s >= 'é'", true, true),
    ("s < 'ab'", true, true),
    ("dt = DATE '1969-12-31'", true, true),
    ("dt < DATE '1970-01-01'", true, true),
    ("ts >= TIMESTAMP '1969-12-31T00:00:00Z'", true, true),
    ("ts < TIMESTAMP '1970-01-01T00:00:00+02:00'", true, true),
    (
        "ts = TIMESTAMP '1970-01-01T00:00:00.000000001Z'",
        true,
        true,
    ),
    // a zoned column seen in another zone (the session zone's `extract`): DataFusion's
    // preimage of the year is a range of instants of New York's years
    (
        r#"arrow_cast(ts, 'Timestamp(Microsecond, Some("America/New_York"))') >= TIMESTAMP '1969-12-31T00:00:00Z'"#,
        true,
        true,
    ),
    (
        r#"date_part('year', arrow_cast(ts, 'Timestamp(Microsecond, Some("America/New_York"))')) = 1969"#,
        true,
        true,
    ),
    (
        r#"date_part('year', arrow_cast(ts, 'Timestamp(Microsecond, Some("America/New_York"))')) = 1970"#,
        true,
        true,
    ),
    ("ntz < TIMESTAMP '1970-01-01 00:00:00'", true, true),
    ("ntz > TIMESTAMP '1969-12-31 23:59:59.9999995'", true, true),
    ("b", true, true),
    ("NOT b", true, true),
    ("b = false", true, true),
    ("bin = X'6162'", true, true),
    ("bin < X'6163'", true, true),
    ("i + 1 = 2", false, false),
    ("abs(i) = 1", false, false),
];

#[tokio::test]
async fn conversions_keep_every_row_datafusion_keeps() {
    check_conversions(&SessionContext::new(), CASES, rows()).await;
}

/// `isnan` and its truth tests under Spark's `isnan` (FALSE for NULL,
/// [`crate::datafusion::spark_isnan`]): `NOT isnan(d)` keeps the rows of NULL `d`, and so
/// must its predicate (it was `not_nan(d)`, false for NULL, which pruned them).
const SPARK_ISNAN_CASES: &[(&str, bool, bool)] = &[
    ("isnan(d)", true, false),
    ("NOT isnan(d)", true, false),
    ("NOT isnan(f)", true, false),
    // simplified to `NOT (isnan(d) IS TRUE)`
    ("isnan(d) = false", true, false),
    ("NOT isnan(d) OR i = 5", true, false),
    ("NOT (isnan(d) OR i = 5)", true, false),
    ("isnan(d) IS NOT TRUE", true, false),
    ("isnan(d) IS NOT FALSE", true, false),
    ("NOT (isnan(f) IS FALSE)", true, false),
    ("NOT isnan(CAST(f AS DOUBLE))", true, false),
];

#[tokio::test]
async fn spark_isnan_conversions_keep_every_row_datafusion_keeps() {
    let ctx = SessionContext::new();
    crate::datafusion::spark_isnan::install_spark_isnan_rule(&ctx);
    check_conversions(&ctx, SPARK_ISNAN_CASES, rows()).await;
    // the rule is in effect: row 3 (every column NULL) is one the predicates must keep
    let kept = ctx
        .sql("SELECT id FROM t WHERE NOT isnan(d) AND id = 3")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(kept.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
}

/// A `date` column compared with timestamp literals, as icefloe's
/// [`timestamp_literals`](crate::datafusion::timestamp_literals) rewrite plans it (in
/// microseconds): converted for pruning, exactly. (`BETWEEN` is left to the integration
/// tests: over a table without filter pushdown DataFusion's common-subexpression rule
/// moves its cast column into a projection the filter names.)
const DATE_TIMESTAMP_CASES: &[(&str, bool, bool)] = &[
    ("dt < TIMESTAMP '1970-01-01 00:00:00'", true, true),
    ("dt < TIMESTAMP '2300-01-01 00:00:00'", true, true),
    ("dt >= TIMESTAMP '1969-12-31 12:00:00'", true, true),
    ("dt = TIMESTAMP '1970-01-04 00:00:00'", true, true),
    ("dt = TIMESTAMP '1970-01-04 00:00:01'", true, true),
    ("dt <= TIMESTAMP '0001-01-01 00:00:00'", true, true),
    (
        "dt IN (TIMESTAMP '1970-01-01 00:00:00', TIMESTAMP '0001-01-01 00:00:00')",
        true,
        true,
    ),
    ("dt > TIMESTAMPTZ '1970-01-01 00:00:00+00:00'", true, true),
];

#[tokio::test]
async fn dates_against_timestamps_convert_in_microseconds() {
    let ctx = SessionContext::new();
    crate::datafusion::install_timestamp_literal_rule(&ctx);
    // dates Iceberg and Spark hold (years 0001 to 9999: the first and the last day among
    // them), none whose microseconds overflow
    let mut rows: Vec<Row> = rows()
        .into_iter()
        .filter(|r| !matches!(r[6], Some(Literal::Date(d)) if d.abs() > 3_000_000))
        .collect();
    for day in [-719_162, 2_932_896] {
        let mut row = rows[0].clone();
        row[6] = Some(Literal::Date(day));
        rows.push(row);
    }
    check_conversions(&ctx, DATE_TIMESTAMP_CASES, rows).await;
}

/// Plan each of `cases` (WHERE clause, whether it must convert, whether exactly) over
/// `rows` in `ctx`, convert the optimized filter and check it against DataFusion's rows.
async fn check_conversions(ctx: &SessionContext, cases: &[(&str, bool, bool)], rows: Vec<Row>) {
    let schema = schema();
    let batch = batch(&schema, &rows);
    let table = MemTable::try_new(batch.schema(), vec![vec![batch]]).unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    let converter = FilterConverter::new(&schema);
    for (sql, converts, exact) in cases {
        let df = ctx
            .sql(&format!("SELECT id FROM t WHERE {sql}"))
            .await
            .unwrap();
        let plan = df.clone().into_optimized_plan().unwrap();
        let result = df.collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        let kept: Vec<i64> = result
            .iter()
            .flat_map(|b| {
                let ids = b
                    .column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .clone();
                ids.values().to_vec()
            })
            .collect();
        let Some(expr) = filter_expr(&plan) else {
            // folded away by DataFusion (a constant filter)
            continue;
        };
        let converted = converter.convert(&expr);
        assert_eq!(
            converted.is_some(),
            *converts,
            "{sql}: converts? {expr} → {converted:?}"
        );
        let Some(converted) = converted else { continue };
        assert_eq!(
            converted.exact, *exact,
            "{sql}: exact? {}",
            converted.predicate
        );
        let bound = Binder::new(&schema).bind(&converted.predicate).unwrap();
        for (i, row) in rows.iter().enumerate() {
            let value_of = |id: i32| -> Option<&Literal> {
                if id == 1 {
                    None
                } else {
                    row.get((id - 2) as usize).and_then(Option::as_ref)
                }
            };
            let ours = evaluate(&bound, &value_of).unwrap();
            let theirs = kept.contains(&(i as i64));
            if theirs {
                assert!(ours, "{sql}: row {i} kept by DataFusion but not by {bound}");
            }
            if converted.exact {
                assert_eq!(ours, theirs, "{sql}: exact {bound} differs on row {i}");
            }
        }
    }
}

#[test]
fn exact_pushdown_needs_identity_partitions_in_every_spec() {
    use datafusion::prelude::{col, lit};
    let schema = schema();
    let identity = |id, spec_id| PartitionSpec {
        spec_id,
        fields: vec![crate::spec::PartitionField {
            source_id: id,
            field_id: Some(1000),
            name: "p".into(),
            transform: Transform::Identity,
        }],
    };
    let conv = FilterConverter::new(&schema);
    let on_s = conv.convert(&col("s").eq(lit("a"))).unwrap();
    assert!(exact_by_identity_partitions(
        &on_s,
        &schema,
        &[identity(7, 0)]
    ));
    assert!(!exact_by_identity_partitions(
        &on_s,
        &schema,
        &[identity(7, 0), PartitionSpec::unpartitioned()]
    ));
    assert!(!exact_by_identity_partitions(
        &on_s,
        &schema,
        &[identity(2, 0)]
    ));
    let on_d = conv.convert(&col("d").eq(lit(1.0))).unwrap();
    assert!(!exact_by_identity_partitions(
        &on_d,
        &schema,
        &[identity(5, 0)]
    ));
}
