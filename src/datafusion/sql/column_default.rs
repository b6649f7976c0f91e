//! The value of a `DEFAULT` expression (`ALTER TABLE … ADD COLUMN c type DEFAULT …`,
//! `ALTER COLUMN c SET DEFAULT …`) as an Iceberg [`Literal`] of the column's type, for
//! its v3 `initial-default` / `write-default` (spec "Default values").
//!
//! DataFusion plans the expression (column references are refused) and evaluates it
//! once (`DEFAULT 5`, `DEFAULT -1.5`, `DEFAULT DATE '2024-01-01'`, `DEFAULT 'x'`,
//! `DEFAULT 1 + 2`). The spec keeps a default as one literal value (its JSON single-value
//! form), so an expression whose value depends on when or where it is evaluated is
//! refused: `current_date()`, `now()` and the other functions DataFusion does not mark
//! immutable (`random()`), a subquery (the table's rows at the time of the statement), a
//! variable or parameter. Stored, `DEFAULT current_date()` would have filled every later
//! row with the date of the `ALTER TABLE` (Spark's DEFAULT, evaluated per write, fills
//! the date of the write). The value then becomes one of the column's type by a cast that
//! loses nothing: a number must be the same number in the column's type (`5` or `5.0`
//! for an `INT` column, not `5.5` or `3000000000`), a string is parsed as the column's
//! type (`'2024-01-01'` for a `DATE`, a UUID's text for a `UUID`), and a boolean, a
//! temporal or a binary value only fits a column of its own kind.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, Volatility};
use datafusion::prelude::SessionContext;

use crate::datafusion::filter::scalar_to_literal;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::arrow::primitive_to_arrow;
use crate::spec::{Literal, PrimitiveType, Type};
use crate::time_narrowing::floor_time_units;

/// The value of the SQL expression `text` for column `column` of type `ty`; `None` for
/// `DEFAULT NULL` (no default).
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the column and type when the value is
/// not one of the type or the column is not primitive; DataFusion's error when the
/// expression does not plan (e.g. it names a column).
pub(super) async fn default_from_sql(
    ctx: &SessionContext,
    text: &str,
    column: &str,
    ty: &Type,
) -> Result<Option<Literal>> {
    let expr = ctx
        .state()
        .create_logical_expr(text, &DFSchema::empty())
        .map_err(|e| {
            Error::new(
                ErrorKind::DataFusion,
                format!("planning the DEFAULT of column '{column}'"),
            )
            .with_source(e)
        })?;
    default_value(ctx, expr, column, ty).await
}

/// The value of the planned expression `expr` for column `column` of type `ty` (see
/// [`default_from_sql`]).
pub(super) async fn default_value(
    ctx: &SessionContext,
    expr: Expr,
    column: &str,
    ty: &Type,
) -> Result<Option<Literal>> {
    let Type::Primitive(p) = ty else {
        return Err(Error::invalid_argument(format!(
            "column '{column}' of type {ty} cannot have a DEFAULT: only primitive columns \
             have default values (a struct's fields carry their own)"
        )));
    };
    if let Some(why) = not_a_literal(&expr) {
        return Err(Error::invalid_argument(format!(
            "the DEFAULT of column '{column}' ({expr}) is not a constant: {why}; an Iceberg \
             default is one literal value (spec \"Default values\"), so write the value \
             itself (e.g. DATE '2024-02-29')"
        )));
    }
    let value = evaluate(ctx, expr, column).await?;
    if value.is_null() {
        return Ok(None);
    }
    to_literal(&value, p).map(Some).map_err(|reason| {
        Error::invalid_argument(format!(
            "DEFAULT {value} is not a value of column '{column}' of type {p}{reason}"
        ))
    })
}

/// Why `expr` has no single value of its own (see the module docs): it holds a subquery,
/// a function DataFusion does not mark immutable (`current_date()`: stable, one value per
/// statement; `random()`: volatile), an aggregate, a variable or a parameter; `None` when
/// it is built of literals by immutable functions and operators (`1 + 2`, `CAST('5' AS
/// INT)`, `DATE '2024-02-29'`).
fn not_a_literal(expr: &Expr) -> Option<String> {
    let mut why = None;
    let _ = expr.apply(|e| {
        why = match e {
            Expr::ScalarSubquery(_)
            | Expr::Exists(_)
            | Expr::InSubquery(_)
            | Expr::SetComparison(_) => {
                Some("it holds a subquery (the value of a table's rows when it runs)".to_string())
            }
            Expr::ScalarFunction(f) if f.func.signature().volatility != Volatility::Immutable => {
                Some(format!(
                    "{}() takes a new value each time it is evaluated",
                    f.func.name()
                ))
            }
            Expr::AggregateFunction(_) | Expr::WindowFunction(_) => {
                Some("it is an aggregate".to_string())
            }
            Expr::ScalarVariable(..) | Expr::Placeholder(_) => {
                Some("it names a variable or parameter".to_string())
            }
            _ => None,
        };
        Ok(match why {
            Some(_) => TreeNodeRecursion::Stop,
            None => TreeNodeRecursion::Continue,
        })
    });
    why
}

/// `expr` evaluated once, over no columns.
async fn evaluate(ctx: &SessionContext, expr: Expr, column: &str) -> Result<ScalarValue> {
    let failed = |e: datafusion::error::DataFusionError| {
        Error::new(
            ErrorKind::DataFusion,
            format!("evaluating the DEFAULT of column '{column}'"),
        )
        .with_source(e)
    };
    let plan = LogicalPlanBuilder::empty(true)
        .project(vec![expr])
        .and_then(|b| b.build())
        .map_err(failed)?;
    let batches = ctx
        .execute_logical_plan(plan)
        .await
        .map_err(failed)?
        .collect()
        .await
        .map_err(failed)?;
    let batch = batches.iter().find(|b| b.num_rows() > 0).ok_or_else(|| {
        Error::invalid_argument(format!("the DEFAULT of '{column}' has no value"))
    })?;
    ScalarValue::try_from_array(batch.column(0), 0).map_err(failed)
}

/// `value` as a literal of `ty`, or why it is not one (appended to the error).
fn to_literal(value: &ScalarValue, ty: &PrimitiveType) -> std::result::Result<Literal, String> {
    let source = value.data_type();
    let target = primitive_to_arrow(ty).map_err(|e| format!(": {}", e.message()))?;
    let text = matches!(
        source,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    );
    if *ty == PrimitiveType::Uuid && text {
        let s = value.to_string();
        let parsed = uuid::Uuid::parse_str(&s).map_err(|_| " (not a UUID)".to_string())?;
        return Ok(Literal::Uuid(*parsed.as_bytes()));
    }
    let binary = |t: &DataType| {
        matches!(
            t,
            DataType::Binary
                | DataType::LargeBinary
                | DataType::BinaryView
                | DataType::FixedSizeBinary(_)
        )
    };
    let same_kind = text
        || (source.is_numeric() && target.is_numeric())
        || (source == DataType::Boolean && target == DataType::Boolean)
        || (source.is_temporal() && target.is_temporal())
        || (binary(&source) && binary(&target))
        || (source == target);
    if !same_kind {
        return Err(format!(" (a {source} value)"));
    }
    // a narrowed timestamp floors, as Java's `DateTimeUtil.nanosToMicros`
    let floored = value
        .to_array()
        .and_then(|a| Ok(floor_time_units(&a, &target)?))
        .and_then(|a| ScalarValue::try_from_array(&a, 0))
        .map_err(|e| format!(" ({e})"))?;
    let cast = floored.cast_to(&target).map_err(|e| {
        let e = e.to_string();
        let first = e.lines().next().unwrap_or_default().to_string();
        format!(" ({first})")
    })?;
    // a number must survive the cast unchanged (5.5 is no INT, 3000000000 no INT)
    let float = matches!(target, DataType::Float32 | DataType::Float64);
    if source.is_numeric() && !float && cast.cast_to(&source).ok().as_ref() != Some(value) {
        return Err(" (it does not fit without change)".to_string());
    }
    let literal = match scalar_to_literal(&cast) {
        Some(Some(l)) => l,
        _ => return Err(String::new()),
    };
    Ok(match (literal, ty) {
        (Literal::Fixed(b), PrimitiveType::Uuid) => {
            Literal::Uuid(b.try_into().map_err(|_| " (not 16 bytes)".to_string())?)
        }
        (l, _) => l,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn value(text: &str, ty: PrimitiveType) -> Result<Option<Literal>> {
        let ctx = SessionContext::new();
        default_from_sql(&ctx, text, "c", &Type::Primitive(ty)).await
    }

    #[tokio::test]
    async fn defaults_are_typed_to_the_column() {
        let dec = PrimitiveType::Decimal {
            precision: 9,
            scale: 2,
        };
        let cases = [
            ("5", PrimitiveType::Int, Literal::Int(5)),
            ("-5", PrimitiveType::Long, Literal::Long(-5)),
            ("5.0", PrimitiveType::Int, Literal::Int(5)),
            ("1 + 2", PrimitiveType::Int, Literal::Int(3)),
            ("1.5", PrimitiveType::Double, Literal::Double(1.5)),
            ("1.5", PrimitiveType::Float, Literal::Float(1.5)),
            ("1.1", PrimitiveType::Float, Literal::Float(1.1)),
            (
                "12.3",
                dec,
                Literal::Decimal {
                    unscaled: 1230,
                    precision: 9,
                    scale: 2,
                },
            ),
            ("true", PrimitiveType::Boolean, Literal::Boolean(true)),
            ("'x'", PrimitiveType::String, Literal::String("x".into())),
            ("'2017-11-16'", PrimitiveType::Date, Literal::Date(17486)),
            (
                "DATE '2017-11-16'",
                PrimitiveType::Date,
                Literal::Date(17486),
            ),
            (
                "TIMESTAMP '2017-11-16 22:31:08.000001'",
                PrimitiveType::Timestamp,
                Literal::Timestamp(1510871468000001),
            ),
            // nanoseconds floor into microseconds (Java's DateTimeUtil.nanosToMicros)
            (
                "TIMESTAMP '1969-12-31 23:59:59.9999995'",
                PrimitiveType::Timestamp,
                Literal::Timestamp(-1),
            ),
            (
                "TIMESTAMP '1969-12-31 23:59:59.9999995'",
                PrimitiveType::Timestamptz,
                Literal::Timestamptz(-1),
            ),
            (
                "'f79c3e09-677c-4bbd-a479-3f349cb785e7'",
                PrimitiveType::Uuid,
                Literal::Uuid(
                    *uuid::Uuid::from_u128(0xf79c3e09_677c_4bbd_a479_3f349cb785e7).as_bytes(),
                ),
            ),
        ];
        for (text, ty, expected) in cases {
            assert_eq!(value(text, ty).await.unwrap(), Some(expected), "{text}");
        }
        assert_eq!(value("NULL", PrimitiveType::Int).await.unwrap(), None);
    }

    #[tokio::test]
    async fn values_not_of_the_type_are_refused() {
        for (text, ty, message) in [
            (
                "5.5",
                PrimitiveType::Int,
                "DEFAULT 5.5 is not a value of column 'c' of type int",
            ),
            (
                "3000000000",
                PrimitiveType::Int,
                "of column 'c' of type int",
            ),
            (
                "'abc'",
                PrimitiveType::Int,
                "DEFAULT abc is not a value of column 'c' of type int",
            ),
            ("true", PrimitiveType::Int, "(a Boolean value)"),
            ("5", PrimitiveType::Date, "(a Int64 value)"),
            ("'nope'", PrimitiveType::Uuid, "(not a UUID)"),
            (
                "'2024-13-01'",
                PrimitiveType::Date,
                "of column 'c' of type date",
            ),
            ("random()", PrimitiveType::Double, "is not a constant"),
            (
                "current_date()",
                PrimitiveType::Date,
                "(current_date()) is not a constant: current_date() takes a new value",
            ),
            ("now()", PrimitiveType::Timestamptz, "is not a constant"),
            (
                "CAST(now() AS DATE)",
                PrimitiveType::Date,
                "now() takes a new value",
            ),
        ] {
            let err = value(text, ty).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{text}: {err}");
            assert!(err.message().contains(message), "{text}: {err}");
        }
        let err = value("other_column", PrimitiveType::Int).await.unwrap_err();
        assert!(
            err.message().contains("planning the DEFAULT of column 'c'"),
            "{err}"
        );
        let err = default_from_sql(
            &SessionContext::new(),
            "1",
            "s",
            &Type::Struct(crate::spec::StructType::new(vec![])),
        )
        .await
        .unwrap_err();
        assert!(err.message().contains("only primitive columns"), "{err}");
    }
}
