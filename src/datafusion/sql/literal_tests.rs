//! Number literals through [`execute`](super::execute) in a session with exact decimal
//! literals: exponent forms are doubles, plain decimals exact, in every statement kind.

use std::sync::Arc;

use datafusion::arrow::array::{
    Decimal128Array, Float32Array, Float64Array, Int32Array, Int64Array, RecordBatch,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::prelude::{SessionConfig, SessionContext};

use super::execute;
use super::tests::{fails, ok, session};
use crate::datafusion::{register_iceberg_options, use_decimal_literals};
use crate::ErrorKind;

/// A session set up as the library recommends (`register_iceberg_options`) with a table
/// `t(id int, i int, b bigint, dec decimal(38,10), f float, d double)`.
fn memory_session() -> SessionContext {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("i", DataType::Int32, true),
        Field::new("b", DataType::Int64, true),
        Field::new("dec", DataType::Decimal128(38, 10), true),
        Field::new("f", DataType::Float32, true),
        Field::new("d", DataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
            Arc::new(Int32Array::from(vec![Some(10), Some(-3), Some(0), None])),
            Arc::new(Int64Array::from(vec![
                Some(10_000_000_000),
                Some(-3),
                Some(0),
                None,
            ])),
            Arc::new(
                Decimal128Array::from(vec![
                    Some(100_000_000_000_000_000_000),
                    Some(37_037_036_703_690_370_370_367),
                    Some(25_000_000),
                    None,
                ])
                .with_precision_and_scale(38, 10)
                .expect("decimal type"),
            ),
            Arc::new(Float32Array::from(vec![
                Some(1e10),
                Some(0.1),
                Some(-0.0),
                Some(f32::NAN),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(1e10),
                Some(1e300),
                Some(-0.0),
                Some(0.0025),
            ])),
        ],
    )
    .expect("batch");
    let ctx = SessionContext::new_with_config(register_iceberg_options(SessionConfig::new()));
    ctx.register_batch("t", batch).expect("register");
    ctx
}

async fn ids(ctx: &SessionContext, filter: &str) -> Vec<String> {
    ok(ctx, &format!("SELECT id FROM t WHERE {filter} ORDER BY id"))
        .await
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
}

/// The type and value of a one-value query.
async fn value(ctx: &SessionContext, sql: &str) -> (DataType, String) {
    let batches = execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let column = batches[0].column(0);
    (
        column.data_type().clone(),
        datafusion::arrow::util::display::array_value_to_string(column, 0).expect("display"),
    )
}

#[tokio::test]
async fn exponent_literals_are_doubles_and_plain_decimals_exact() {
    let ctx = memory_session();
    assert!(
        ctx.state()
            .config_options()
            .sql_parser
            .parse_float_as_decimal
    );
    for (sql, want_type, want) in [
        ("SELECT 1e300", DataType::Float64, "1e300"),
        ("SELECT -1E300", DataType::Float64, "-1e300"),
        ("SELECT 2.5E-3", DataType::Float64, "0.0025"),
        ("SELECT 1.0e10", DataType::Float64, "10000000000.0"),
        ("SELECT 1e-400", DataType::Float64, "0.0"),
        ("SELECT -0e0", DataType::Float64, "-0.0"),
        ("SELECT 1.5", DataType::Decimal128(2, 1), "1.5"),
        ("SELECT -0.0", DataType::Decimal128(1, 1), "0.0"),
        (
            "SELECT 3703703670369.0370370367",
            DataType::Decimal128(23, 10),
            "3703703670369.0370370367",
        ),
        ("SELECT 12", DataType::Int64, "12"),
    ] {
        let (t, v) = value(&ctx, sql).await;
        assert_eq!((t, v.as_str()), (want_type, want), "{sql}");
    }
    // the sign of -0e0 is kept (it is not the decimal 0.0)
    let batches = execute(&ctx, "SELECT -0e0")
        .await
        .expect("plan")
        .collect()
        .await
        .expect("run");
    let zero = datafusion::arrow::array::AsArray::as_primitive::<
        datafusion::arrow::datatypes::Float64Type,
    >(batches[0].column(0))
    .value(0);
    assert!(zero == 0.0 && zero.is_sign_negative());
    // beyond the largest double: an error naming the literal, as in Spark
    fails(&ctx, "SELECT 1e400", ErrorKind::InvalidArgument, "1e400").await;
}

#[tokio::test]
async fn exponent_literals_compare_with_every_numeric_column() {
    let ctx = memory_session();
    // exact decimal literals find the decimal row
    assert_eq!(ids(&ctx, "dec = 3703703670369.0370370367").await, ["2"]);
    assert!(ids(&ctx, "dec = 3703703670369.037037037").await.is_empty());
    for (filter, want) in [
        ("i = 1.0e1", vec!["1"]),
        ("i = 1e1", vec!["1"]),
        ("i < -2.5e0", vec!["2"]),
        ("b = 1.0e10", vec!["1"]),
        ("b > 1e300", vec![]),
        ("b IN (1.0e10, -3e0)", vec!["1", "2"]),
        ("dec = 1.0e10", vec!["1"]),
        ("dec = 2.5e-3", vec!["3"]),
        ("dec < 1e300", vec!["1", "2", "3"]),
        ("dec > -1e300", vec!["1", "2", "3"]),
        ("f = 1.0e10", vec!["1"]),
        ("d = 1.0e10", vec!["1"]),
        ("d = 1e300", vec!["2"]),
        ("d >= 1E300", vec!["2"]),
        ("d = 2.5e-3", vec!["4"]),
        ("d = 2.5E-3 OR d = 0.0025", vec!["4"]),
        ("d = 1e-400", vec!["3"]),
        ("d = -0e0", vec!["3"]),
        ("d = -0.0", vec!["3"]),
        ("f = -0.0", vec!["3"]),
        ("d BETWEEN 1e9 AND 1e11", vec!["1"]),
        // float columns compare in double: the float 0.1 is not the double 0.1
        ("f = 0.1", vec![]),
        ("f = 1e-1", vec![]),
        ("f > 1e0", vec!["1", "4"]), // NaN sorts above every float
    ] {
        assert_eq!(ids(&ctx, filter).await, want, "{filter}");
    }
}

#[tokio::test]
async fn exponent_literals_in_every_statement_kind() {
    let (ctx, _catalog, _dir) = session().await;
    use_decimal_literals(&ctx);
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, d DOUBLE, dec DECIMAL(38, 10)) \
         TBLPROPERTIES ('format-version' = '2')",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.t VALUES (1, 1e300, 3703703670369.0370370367), \
         (2, -0e0, 2.5E-3), (3, 1e-400, -1.5), (4, 0.1, 1e1)",
    )
    .await;
    let all = "SELECT id, d, dec FROM ns.t ORDER BY id";
    assert_eq!(
        ok(&ctx, all).await,
        [
            ["1", "1e300", "3703703670369.0370370367"],
            ["2", "-0.0", "0.0025000000"],
            ["3", "0.0", "-1.5000000000"],
            ["4", "0.1", "10.0000000000"],
        ]
    );
    assert_eq!(
        ok(
            &ctx,
            "SELECT id FROM ns.t WHERE dec = 3703703670369.0370370367"
        )
        .await,
        [["1"]]
    );
    ok(
        &ctx,
        "UPDATE ns.t SET d = d + 1.5e0 WHERE d < 1e300 AND dec < 1e1",
    )
    .await;
    ok(&ctx, "DELETE FROM ns.t WHERE d >= 1E300").await;
    assert_eq!(
        ok(&ctx, all).await,
        [
            ["2", "1.5", "0.0025000000"],
            ["3", "1.5", "-1.5000000000"],
            ["4", "0.1", "10.0000000000"],
        ]
    );
    ok(
        &ctx,
        "CREATE TABLE ns.c TBLPROPERTIES ('format-version' = '2') \
         AS SELECT id, d * 1e2 AS big, dec FROM ns.t WHERE dec < 1e1",
    )
    .await;
    assert_eq!(
        ok(&ctx, "SELECT id, big, dec FROM ns.c ORDER BY id").await,
        [
            ["2", "150.0", "0.0025000000"],
            ["3", "150.0", "-1.5000000000"]
        ]
    );
    // an exponent literal in a string or a property value is left alone
    assert_eq!(ok(&ctx, "SELECT '1e300' AS s").await, [["1e300"]]);
}

/// Spark's literal suffixes directly after the digits give Spark's types (`1.5D` was `1.5
/// AS d`, a decimal column named `d`; `1 = 1S` a parse error), as `100L` did already.
#[tokio::test]
async fn spark_literal_suffixes_give_spark_types() {
    let ctx = memory_session();
    for (sql, want_type, want) in [
        ("SELECT 1.5D", DataType::Float64, "1.5"),
        ("SELECT 1.5d", DataType::Float64, "1.5"),
        ("SELECT 1e3D", DataType::Float64, "1000.0"),
        ("SELECT 2D", DataType::Float64, "2.0"),
        ("SELECT 1.5F", DataType::Float32, "1.5"),
        ("SELECT 4S", DataType::Int16, "4"),
        ("SELECT 3Y", DataType::Int8, "3"),
        ("SELECT -128Y", DataType::Int8, "-128"),
        ("SELECT -32768s", DataType::Int16, "-32768"),
        ("SELECT 2.5BD", DataType::Decimal128(2, 1), "2.5"),
        ("SELECT 1e3BD", DataType::Decimal128(4, 0), "1000"),
        ("SELECT 100L", DataType::Int64, "100"),
        ("SELECT 100l", DataType::Int64, "100"),
        ("SELECT arrow_typeof(1.5D)", DataType::Utf8, "Float64"),
        (
            "SELECT arrow_typeof(4S) || arrow_typeof(3Y)",
            DataType::Utf8,
            "Int16Int8",
        ),
        // a word after a space is an alias, as in Spark
        ("SELECT 1.5 D", DataType::Decimal128(2, 1), "1.5"),
    ] {
        let (t, v) = value(&ctx, sql).await;
        assert_eq!((t, v.as_str()), (want_type, want), "{sql}");
    }
    // the column is the literal, not an alias `d`
    let df = execute(&ctx, "SELECT 1.5D").await.expect("plan");
    assert_ne!(df.schema().field(0).name(), "d");
    // in conditions, compared as their types
    assert_eq!(ids(&ctx, "d = 1e10D").await, ["1"]);
    assert_eq!(ids(&ctx, "f = 0.1F").await, ["2"]);
    assert_eq!(ids(&ctx, "i = 10S OR i = 0Y").await, ["1", "3"]);
    assert_eq!(ids(&ctx, "dec = 0.0025BD").await, ["3"]);
    assert_eq!(
        ok(&ctx, "SELECT 1 WHERE 1 = 1S").await,
        vec![vec!["1".to_string()]]
    );
    // outside the type's range: an error naming the literal, as in Spark
    for (sql, literal) in [
        ("SELECT 128Y", "128Y"),
        ("SELECT 40000S", "40000S"),
        ("SELECT 1e39F", "1e39F"),
        ("SELECT 1e400D", "1e400D"),
        ("SELECT 1e40BD", "1e40BD"),
        ("SELECT 9223372036854775808l", "9223372036854775808l"),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, literal).await;
    }
}
