//! [`FloatDecimalLiterals`]: exact decimal literals (`datafusion.sql_parser.parse_float_as_decimal
//! = true`) next to `float`/`double` values stay compared in double.
//!
//! DataFusion parses `3703703670369.0370370367` as a `Float64` literal by default and casts it
//! to the column's type, so `WHERE dec_col = 3703703670369.0370370367` compares with a rounded
//! value and finds nothing. With `parse_float_as_decimal = true` the literal is the exact
//! `Decimal128(23, 10)` (Spark and Iceberg Java read it the same way) and decimal columns
//! compare exactly. But DataFusion 55's comparison coercion prefers decimal over floating
//! point: `double_col = 1.5` then casts the *column* to `Decimal128(30, 15)`, which fails on
//! NaN and infinities ("Overflowing on NaN") and rounds every double to 15 digits.
//!
//! This expression rewrite, run before DataFusion's type coercion (a [`FunctionRewrite`] runs
//! first in the analyzer), casts decimal literals to `Float64` wherever DataFusion would unify
//! them with a floating-point value: both sides of a comparison (`=`, `<>`, `<`, `<=`, `>`,
//! `>=`, `IS [NOT] DISTINCT FROM`), `IN` lists, `BETWEEN`, the branches of `CASE` (and its
//! operand with the `WHEN` values), and the arguments of `coalesce`, `nullif`, `nvl`,
//! `nvl2`, `ifnull`, `greatest` and `least`. The comparison is then in double, as with
//! `parse_float_as_decimal = false` and as Spark compares a `double` with a decimal literal
//! (a `float` column is widened to double by DataFusion's own coercion, so `float_col = 0.1`
//! matches what it matched before). Arithmetic between a double and a decimal is already done
//! in double by DataFusion; decimal literals next to integers or decimals are left as they are.
//!
//! The same holds for decimal *columns* (any decimal-typed expression) next to a
//! floating-point value: `dec_col = 1e10` (an exponent literal is a double, see
//! `sql::execute`) or `dec_col = double_col` compare in double, as Spark compares a
//! decimal with a double. DataFusion would cast the double to `Decimal128(30, 15)`, which
//! overflows for `1e300` and misses equal values.
//!
//! Installed (once) by [`install_float_literal_rule`], which
//! [`register_iceberg_factory`](super::register_iceberg_factory),
//! [`sql::execute`](super::sql::execute) and so the CLI call.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::{Case, ScalarFunction};
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Cast, Expr, ExprSchemable};
use datafusion::prelude::SessionContext;

use super::compared_groups::{install_once, unify_compared};

/// The rewrite's name (as listed by the session's analyzer).
pub const FLOAT_DECIMAL_LITERALS_RULE: &str = "icefloe_float_decimal_literals";

/// Functions whose arguments DataFusion coerces to one common type.
const UNIFYING_FUNCTIONS: &[&str] = &[
    "coalesce", "nullif", "nvl", "nvl2", "ifnull", "greatest", "least",
];

/// A [`FunctionRewrite`]: decimal values unified with a floating-point value become
/// `CAST(value AS DOUBLE)` (see the module docs).
#[derive(Debug, Default)]
pub struct FloatDecimalLiterals;

/// `expr` is a decimal literal (or the negation of one).
fn is_decimal_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Literal(value, _) => matches!(
            value,
            ScalarValue::Decimal32(..)
                | ScalarValue::Decimal64(..)
                | ScalarValue::Decimal128(..)
                | ScalarValue::Decimal256(..)
        ),
        Expr::Negative(inner) => is_decimal_literal(inner),
        _ => false,
    }
}

/// `expr` has a floating-point type in `schema` (`false` when its type cannot be told yet).
fn is_float(expr: &Expr, schema: &DFSchema) -> bool {
    if is_decimal_literal(expr) {
        return false;
    }
    matches!(
        expr.get_type(schema),
        Ok(DataType::Float16 | DataType::Float32 | DataType::Float64)
    )
}

/// `expr` as a double: a decimal literal becomes the double nearest its value (one
/// rounding, as Spark's `BigDecimal.doubleValue`: arrow's cast divides the unscaled
/// integer, already rounded to a double above 2^53, by a power of ten, so
/// `22.139999389648438` became the double after the one it prints as); anything else is
/// cast.
fn to_double(expr: Expr) -> Expr {
    match nearest_double(&expr) {
        Some(v) => Expr::Literal(ScalarValue::Float64(Some(v)), None),
        None => Expr::Cast(Cast::new(Box::new(expr), DataType::Float64)),
    }
}

/// The double nearest the value of a decimal literal (or its negation): its exact
/// decimal text parsed by Rust's correctly rounded `f64` parser. `None` for a NULL or
/// anything else.
fn nearest_double(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Literal(value, _) => {
            let (unscaled, scale) = match value {
                ScalarValue::Decimal32(Some(v), _, s) => (v.to_string(), *s),
                ScalarValue::Decimal64(Some(v), _, s) => (v.to_string(), *s),
                ScalarValue::Decimal128(Some(v), _, s) => (v.to_string(), *s),
                ScalarValue::Decimal256(Some(v), _, s) => (v.to_string(), *s),
                _ => return None,
            };
            format!("{unscaled}e{}", -i32::from(scale)).parse().ok()
        }
        Expr::Negative(inner) => nearest_double(inner).map(|v| -v),
        _ => None,
    }
}

/// `expr` is a decimal literal or has a decimal type in `schema`.
fn is_decimal(expr: &Expr, schema: &DFSchema) -> bool {
    is_decimal_literal(expr)
        || matches!(
            expr.get_type(schema),
            Ok(DataType::Decimal32(..)
                | DataType::Decimal64(..)
                | DataType::Decimal128(..)
                | DataType::Decimal256(..))
        )
}

/// When one of `group` is floating point, cast each decimal value in it to double.
/// Returns whether anything changed.
fn unify(group: &mut [&mut Expr], schema: &DFSchema) -> bool {
    if !group.iter().any(|e| is_float(e, schema)) || !group.iter().any(|e| is_decimal(e, schema)) {
        return false;
    }
    for expr in group.iter_mut() {
        if is_decimal(expr, schema) {
            let literal = std::mem::replace(&mut **expr, Expr::Literal(ScalarValue::Null, None));
            **expr = to_double(literal);
        }
    }
    true
}

impl FunctionRewrite for FloatDecimalLiterals {
    fn name(&self) -> &str {
        FLOAT_DECIMAL_LITERALS_RULE
    }

    fn rewrite(
        &self,
        mut expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        let schema_unify = |group: &mut [&mut Expr]| Ok(unify(group, schema));
        let changed = match unify_compared(&mut expr, schema_unify)? {
            Some(changed) => changed,
            None => match &mut expr {
                Expr::Case(Case {
                    expr: operand,
                    when_then_expr,
                    else_expr,
                }) => {
                    let mut whens: Vec<&mut Expr> = Vec::new();
                    let mut thens: Vec<&mut Expr> = Vec::new();
                    for (when, then) in when_then_expr.iter_mut() {
                        whens.push(when.as_mut());
                        thens.push(then.as_mut());
                    }
                    if let Some(e) = else_expr {
                        thens.push(e.as_mut());
                    }
                    let mut changed = unify(&mut thens, schema);
                    if let Some(operand) = operand {
                        whens.push(operand.as_mut());
                        changed |= unify(&mut whens, schema);
                    }
                    changed
                }
                Expr::ScalarFunction(ScalarFunction { func, args })
                    if UNIFYING_FUNCTIONS.contains(&func.name()) =>
                {
                    let mut group: Vec<&mut Expr> = args.iter_mut().collect();
                    unify(&mut group, schema)
                }
                _ => false,
            },
        };
        Ok(if changed {
            Transformed::yes(expr)
        } else {
            Transformed::no(expr)
        })
    }
}

/// Add [`FloatDecimalLiterals`] to `ctx`'s analyzer, and the widening of decimal with
/// float columns of set operations and `VALUES` lists
/// ([`WidenSetOperationTypes`](super::set_operation_types::WidenSetOperationTypes)),
/// once (a second call does nothing).
pub fn install_float_literal_rule(ctx: &SessionContext) {
    install_once(ctx, Arc::new(FloatDecimalLiterals));
    super::set_operation_types::install_set_operation_rule(ctx);
}

/// Turn on `datafusion.sql_parser.parse_float_as_decimal` in `ctx` (SQL literals such as
/// `1.25` are exact decimals) and install [`FloatDecimalLiterals`] so floating-point values
/// stay compared in double.
pub fn use_decimal_literals(ctx: &SessionContext) {
    ctx.state_ref()
        .write()
        .config_mut()
        .options_mut()
        .sql_parser
        .parse_float_as_decimal = true;
    install_float_literal_rule(ctx);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{
        Array, AsArray, Decimal128Array, Float32Array, Float64Array, Int32Array, RecordBatch,
    };
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::prelude::SessionContext;

    use super::use_decimal_literals;

    /// A session with decimal literals on and a table `t(id int, d double, f float,
    /// dec decimal(38,10))` holding NaN, ±infinity, -0.0 and ordinary values.
    fn session() -> SessionContext {
        session_with(true)
    }

    /// [`session`], with decimal literals on or off (DataFusion's default).
    fn session_with(decimal_literals: bool) -> SessionContext {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("d", DataType::Float64, true),
            Field::new("f", DataType::Float32, true),
            Field::new("dec", DataType::Decimal128(38, 10), true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5, 6, 7])),
                Arc::new(Float64Array::from(vec![
                    Some(1.5),
                    Some(f64::NAN),
                    Some(f64::INFINITY),
                    Some(f64::NEG_INFINITY),
                    Some(0.1),
                    Some(-0.0),
                    None,
                ])),
                Arc::new(Float32Array::from(vec![
                    Some(1.5),
                    Some(f32::NAN),
                    Some(f32::INFINITY),
                    Some(f32::NEG_INFINITY),
                    Some(0.1),
                    Some(-0.0),
                    None,
                ])),
                Arc::new(
                    Decimal128Array::from(vec![
                        Some(37_037_036_703_690_370_370_367),
                        Some(15_000_000_000),
                        Some(30_000_000_000),
                        Some(-10_000_000_000),
                        Some(1_000_000_000),
                        Some(0),
                        None,
                    ])
                    .with_precision_and_scale(38, 10)
                    .expect("decimal type"),
                ),
            ],
        )
        .expect("batch");
        let ctx = SessionContext::new();
        if decimal_literals {
            use_decimal_literals(&ctx);
        }
        ctx.register_batch("t", batch).expect("register");
        ctx
    }

    async fn ids(ctx: &SessionContext, filter: &str) -> Vec<i32> {
        let batches = ctx
            .sql(&format!("SELECT id FROM t WHERE {filter} ORDER BY id"))
            .await
            .unwrap_or_else(|e| panic!("{filter}: {e}"))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{filter}: {e}"));
        batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_primitive::<datafusion::arrow::datatypes::Int32Type>()
                    .values()
                    .to_vec()
            })
            .collect()
    }

    /// A double printed with 17 significant digits, written back as a literal, finds its
    /// own value: the literal is converted once, to the nearest double (arrow's cast of
    /// the decimal rounded twice and missed it).
    #[tokio::test]
    async fn long_decimal_literals_are_the_nearest_double() {
        let ctx = SessionContext::new();
        use_decimal_literals(&ctx);
        for value in [
            22.139999389648438_f64,
            98.80999755859375,
            -0.30000000000000004,
            1.0000000000000002,
            123456789012345680.0,
        ] {
            let text = format!("{value:?}");
            for (op, want) in [("=", 1), (">=", 1), ("<=", 1), ("<", 0), (">", 0)] {
                let sql = format!(
                    "SELECT count(*) FROM (VALUES (CAST('{text}' AS DOUBLE))) v(d) \
                     WHERE d {op} {text}"
                );
                let batches = ctx
                    .sql(&sql)
                    .await
                    .expect("plan")
                    .collect()
                    .await
                    .expect("run");
                let got = batches[0]
                    .column(0)
                    .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                    .value(0);
                assert_eq!(got, want, "{sql}");
            }
        }
    }

    #[tokio::test]
    async fn decimal_literals_are_exact_for_decimal_columns() {
        let ctx = session();
        assert_eq!(ids(&ctx, "dec = 3703703670369.0370370367").await, vec![1]);
        assert_eq!(
            ids(&ctx, "dec = 3703703670369.037037036").await,
            Vec::<i32>::new()
        );
        assert_eq!(ids(&ctx, "dec IN (1.5, 0.1)").await, vec![2, 5]);
        assert_eq!(ids(&ctx, "dec BETWEEN -1.0 AND 0.10").await, vec![4, 5, 6]);
        // integer literals against a decimal column
        assert_eq!(ids(&ctx, "dec = 3").await, vec![3]);
        assert_eq!(ids(&ctx, "dec < -0").await, vec![4]);
        assert_eq!(ids(&ctx, "dec IN (0, 3)").await, vec![3, 6]);
        // a decimal column next to a double column compares in double (as in Spark;
        // DataFusion alone would cast the doubles to decimals and fail on NaN)
        assert_eq!(ids(&ctx, "dec = d").await, vec![5, 6]);
        assert_eq!(ids(&ctx, "dec < d").await, vec![2, 3]);
        // the literal keeps its decimal type (no cast to double next to a decimal)
        let batches = ctx
            .sql("SELECT 3703703670369.0370370367 AS x")
            .await
            .expect("plan")
            .collect()
            .await
            .expect("run");
        assert_eq!(
            batches[0].schema().field(0).data_type(),
            &DataType::Decimal128(23, 10)
        );
    }

    #[tokio::test]
    async fn float_columns_compare_with_decimal_literals_in_double() {
        let ctx = session();
        // DataFusion's default (literals as Float64) gives the same rows on float columns
        let float_literals = session_with(false);
        for (filter, want) in [
            ("d = 1.5", vec![1]),
            ("1.5 = d", vec![1]),
            ("d = 0.1", vec![5]),
            ("d <> 1.5", vec![2, 3, 4, 5, 6]),
            ("d > 1.0", vec![1, 2, 3]), // NaN sorts above every double in DataFusion
            ("d < -1.0e0", vec![4]),
            ("d >= -0.0", vec![1, 2, 3, 5, 6]),
            ("d <= -0.5", vec![4]),
            ("d = 0.0", vec![6]),
            ("d IS DISTINCT FROM 1.5", vec![2, 3, 4, 5, 6, 7]),
            ("d IS NOT DISTINCT FROM 0.1", vec![5]),
            ("d IN (1.5, 0.1, 7.25)", vec![1, 5]),
            ("d NOT IN (1.5, 0.1)", vec![2, 3, 4, 6]),
            ("d BETWEEN -2.5 AND 1.5", vec![1, 5, 6]),
            ("d NOT BETWEEN -2.5 AND 1.5", vec![2, 3, 4]),
            ("d * 2 = 3.0", vec![1]),
            ("coalesce(d, 9.5) = 9.5", vec![7]),
            ("nullif(d, 1.5) IS NULL", vec![1, 7]),
            ("greatest(d, 2.5) = 2.5", vec![1, 4, 5, 6, 7]), // NULLs skipped
            (
                "CASE WHEN id = 1 THEN d ELSE 0.5 END = 0.5",
                vec![2, 3, 4, 5, 6, 7],
            ),
            ("CASE d WHEN 1.5 THEN true ELSE false END", vec![1]),
            ("d = 'NaN'", vec![2]),
            ("d = 'Infinity'", vec![3]),
            // float: widened to double, so 0.1f32 is not the double 0.1 (as before)
            ("f = 1.5", vec![1]),
            ("f = 0.1", Vec::new()),
            ("f > 1.0", vec![1, 2, 3]),
            ("f IN (1.5, 7.0)", vec![1]),
            ("f BETWEEN -1.0 AND 2.0", vec![1, 5, 6]),
        ] {
            assert_eq!(ids(&ctx, filter).await, want, "{filter}");
            assert_eq!(
                ids(&float_literals, filter).await,
                want,
                "{filter} (float literals)"
            );
        }
    }

    #[tokio::test]
    async fn comparison_result_types_are_double() {
        let ctx = session();
        let batches = ctx
            .sql("SELECT coalesce(d, 2.5) AS c FROM t ORDER BY id")
            .await
            .expect("plan")
            .collect()
            .await
            .expect("run");
        let column = batches[0].column(0);
        assert_eq!(column.data_type(), &DataType::Float64);
        let values = column.as_primitive::<datafusion::arrow::datatypes::Float64Type>();
        assert!(values.value(1).is_nan());
        assert_eq!(values.value(2), f64::INFINITY);
        assert_eq!(values.value(6), 2.5);
        assert!(!values.is_null(6));
    }

    #[tokio::test]
    async fn installing_twice_adds_one_rewrite() {
        let ctx = session();
        use_decimal_literals(&ctx);
        let count = ctx
            .state()
            .analyzer()
            .function_rewrites()
            .iter()
            .filter(|r| r.name() == super::FLOAT_DECIMAL_LITERALS_RULE)
            .count();
        assert_eq!(count, 1);
    }
}
