//! A value an `INSERT … SELECT` computes that its column cannot hold (a `BIGINT` of
//! 3000000000 into an `INT` column, a `DECIMAL(10,3)` of 12345.678 into a
//! `DECIMAL(5,2)`), named by table and column as the `VALUES` path names a literal
//! ([`insert_casts`](super::insert_casts)): "INSERT INTO 'ns.dst': cannot set column 'i'
//! (Int32): Arrow error: Cast error: Can't cast value 3000000000 to type Int32".
//!
//! DataFusion 55 plans an `INSERT`'s query under a projection of casts to the table's
//! column types, and such a cast fails on the values while the statement runs with
//! Arrow's message alone, or, pushed into the scan of the source table, as if that
//! table's data file were at fault. Spark refuses these values by its ANSI store
//! assignment (`CAST_OVERFLOW_IN_TABLE_INSERT`, naming the column). [`InsertColumnCasts`],
//! an analyzer rule installed after icefloe's other rules over these casts, replaces each
//! cast between numeric types (integers, floats, decimals), or between nested types
//! holding no time (a struct of a decimal field), of a value computed from the query's
//! rows by [`WRITE_CAST`], which casts it the same way (DataFusion's cast, not
//! safe: a value that does not fit is an error) and names the table and column when it
//! fails (a struct's by DataFusion's cast of struct fields by name, after icefloe's
//! check of those names, [`struct_fields`](super::struct_fields)). Casts of literals are
//! checked (and named) while planning, by `insert_casts`; casts of other types (strings,
//! dates and times) keep DataFusion's cast, for the rules that rewrite those casts
//! (strings read as dates and timestamps as Spark reads them, session-zone readings).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::format::DEFAULT_CAST_OPTIONS;
use datafusion::common::{exec_err, DataFusionError, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::{Alias, ScalarFunction};
use datafusion::logical_expr::{
    Cast, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Projection, ReturnFieldArgs,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility, WriteOp,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

use crate::error::Error;

/// The rule's name (as listed by the session's analyzer).
pub const INSERT_COLUMN_CASTS_RULE: &str = "icefloe_insert_column_casts";

/// The name of the function that replaces the casts.
pub const WRITE_CAST: &str = "icefloe_write_cast";

/// `icefloe_write_cast(value, target, table, column)`: `value` cast to the type of
/// `target` (a typed `NULL`) by DataFusion's cast (not safe); nullable as `value`.
/// `table` and `column` (strings) name the column in its error: "INSERT INTO 'ns.t':
/// cannot set column 'i' (Int32): …" (an icefloe `InvalidArgument`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct WriteCast {
    signature: Signature,
}

impl Default for WriteCast {
    fn default() -> Self {
        Self {
            signature: Signature::any(4, Volatility::Immutable),
        }
    }
}

/// The [`WriteCast`] function.
pub fn write_cast_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(WriteCast::default()))
}

/// The string of a literal argument of [`WRITE_CAST`].
fn text(value: Option<&ColumnarValue>) -> String {
    match value {
        Some(ColumnarValue::Scalar(s)) => s.to_string(),
        _ => String::new(),
    }
}

impl ScalarUDFImpl for WriteCast {
    fn name(&self) -> &str {
        WRITE_CAST
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> DFResult<DataType> {
        match arg_types {
            [_, target, _, _] => Ok(target.clone()),
            _ => exec_err!("{WRITE_CAST} takes a value, a target, a table and a column"),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DFResult<FieldRef> {
        let [value, target, _, _] = args.arg_fields else {
            return exec_err!("{WRITE_CAST} takes a value, a target, a table and a column");
        };
        Ok(Arc::new(Field::new(
            self.name(),
            target.data_type().clone(),
            value.is_nullable(),
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let [value, _, table, column] = args.args.as_slice() else {
            return exec_err!("{WRITE_CAST} takes a value, a target, a table and a column");
        };
        let Some(target) = args.arg_fields.get(1) else {
            return exec_err!("{WRITE_CAST} takes a value, a target, a table and a column");
        };
        let to = target.data_type();
        value.cast_to(to, Some(&DEFAULT_CAST_OPTIONS)).map_err(|e| {
            DataFusionError::External(Box::new(Error::invalid_argument(format!(
                "INSERT INTO '{}': cannot set column '{}' ({to}): {}",
                text(Some(table)),
                text(Some(column)),
                e.strip_backtrace()
            ))))
        })
    }
}

/// Whether a cast from `from` to `to` is one [`InsertColumnCasts`] names: between
/// numeric types (integers, floats, decimals), where a value may not fit, or between
/// nested types (a struct of a decimal field) holding no date or time, whose casts
/// icefloe's session-zone rules read.
fn named_cast(from: &DataType, to: &DataType) -> bool {
    from != to
        && (from.is_numeric() && to.is_numeric()
            || from.is_nested() && to.is_nested() && !holds_time(from) && !holds_time(to))
}

/// Whether `data_type` is or holds (at any depth) a date, time, timestamp or interval.
fn holds_time(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(fields) => fields.iter().any(|f| holds_time(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => holds_time(f.data_type()),
        other => other.is_temporal() || matches!(other, DataType::Interval(_)),
    }
}

/// An analyzer rule: the casts of an `INSERT`'s projection over its query between
/// numeric types go through [`WRITE_CAST`] (see the module docs).
#[derive(Debug, Default)]
pub struct InsertColumnCasts;

impl AnalyzerRule for InsertColumnCasts {
    fn name(&self) -> &str {
        INSERT_COLUMN_CASTS_RULE
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        let LogicalPlan::Dml(dml) = &plan else {
            return Ok(plan);
        };
        if !matches!(dml.op, WriteOp::Insert(_)) {
            return Ok(plan);
        }
        let LogicalPlan::Projection(projection) = dml.input.as_ref() else {
            return Ok(plan);
        };
        let table = dml.table_name.to_string();
        let schema = projection.input.schema();
        let mut changed = false;
        let mut exprs = Vec::with_capacity(projection.expr.len());
        for expr in &projection.expr {
            let Expr::Alias(Alias {
                expr: inner,
                relation,
                name,
                metadata,
            }) = expr
            else {
                exprs.push(expr.clone());
                continue;
            };
            let Expr::Cast(Cast { expr: value, field }) = inner.as_ref() else {
                exprs.push(expr.clone());
                continue;
            };
            let given = value.get_type(schema)?;
            if matches!(value.as_ref(), Expr::Literal(..)) || !named_cast(&given, field.data_type())
            {
                exprs.push(expr.clone());
                continue;
            }
            let cast = Expr::ScalarFunction(ScalarFunction::new_udf(
                write_cast_udf(),
                vec![
                    value.as_ref().clone(),
                    Expr::Literal(ScalarValue::try_from(field.data_type())?, None),
                    Expr::Literal(ScalarValue::Utf8(Some(table.clone())), None),
                    Expr::Literal(ScalarValue::Utf8(Some(name.clone())), None),
                ],
            ));
            exprs.push(Expr::Alias(Alias {
                expr: Box::new(cast),
                relation: relation.clone(),
                name: name.clone(),
                metadata: metadata.clone(),
            }));
            changed = true;
        }
        if !changed {
            return Ok(plan);
        }
        let input = Arc::new(LogicalPlan::Projection(Projection::try_new(
            exprs,
            Arc::clone(&projection.input),
        )?));
        let mut dml = dml.clone();
        dml.input = input;
        Ok(LogicalPlan::Dml(dml))
    }
}

/// Add [`InsertColumnCasts`] to `ctx`'s analyzer, once (a second call does nothing).
pub(crate) fn install_insert_column_casts_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(InsertColumnCasts));
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, Int64Array};

    use super::*;

    /// The function casts as DataFusion's cast does, and a value that does not fit is an
    /// error naming the table and the column.
    #[test]
    fn a_value_that_does_not_fit_names_table_and_column() {
        let udf = write_cast_udf();
        let call = |values: Vec<Option<i64>>| {
            let array = Arc::new(Int64Array::from(values));
            let fields = vec![
                Arc::new(Field::new("v", DataType::Int64, true)),
                Arc::new(Field::new("t", DataType::Int32, true)),
                Arc::new(Field::new("a", DataType::Utf8, true)),
                Arc::new(Field::new("b", DataType::Utf8, true)),
            ];
            udf.invoke_with_args(ScalarFunctionArgs {
                args: vec![
                    ColumnarValue::Array(array),
                    ColumnarValue::Scalar(ScalarValue::Int32(None)),
                    ColumnarValue::Scalar(ScalarValue::from("ns.dst")),
                    ColumnarValue::Scalar(ScalarValue::from("i")),
                ],
                arg_fields: fields,
                number_rows: 2,
                return_field: Arc::new(Field::new("r", DataType::Int32, true)),
                config_options: Arc::new(ConfigOptions::default()),
            })
        };
        let Ok(ColumnarValue::Array(fits)) = call(vec![Some(7), None]) else {
            panic!("7 and NULL fit an INT");
        };
        assert_eq!(fits.data_type(), &DataType::Int32);
        assert_eq!(fits.null_count(), 1);
        let err = call(vec![Some(1), Some(3_000_000_000)])
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "INSERT INTO 'ns.dst': cannot set column 'i' (Int32): \
                 Arrow error: Cast error: Can't cast value 3000000000 to type Int32"
            ),
            "{err}"
        );
        assert!(named_cast(&DataType::Int64, &DataType::Int32));
        assert!(named_cast(
            &DataType::Decimal128(10, 3),
            &DataType::Decimal128(5, 2)
        ));
        assert!(!named_cast(&DataType::Utf8, &DataType::Int32));
        let st = |t: DataType| DataType::Struct(vec![Field::new("d", t, true)].into());
        assert!(named_cast(
            &st(DataType::Decimal128(10, 3)),
            &st(DataType::Decimal128(5, 2))
        ));
        assert!(!named_cast(&st(DataType::Utf8), &st(DataType::Date32)));
        assert!(!named_cast(&DataType::Int32, &DataType::Int32));
    }
}
