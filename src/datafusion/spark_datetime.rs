//! Spark's field functions of dates and timestamps, which DataFusion 55 lacks: `year`,
//! `quarter`, `month`, `day` (`dayofmonth`), `dayofweek`, `weekday`, `dayofyear`,
//! `weekofyear`, `hour`, `minute` and `second`, each of one date, timestamp or string
//! argument, each an `INT` (Arrow `Int32`), NULL for NULL.
//!
//! They are DataFusion's `date_part` under Spark's names, with Spark's numbering where it
//! differs: `dayofweek` counts from Sunday = 1 to Saturday = 7 (one more than
//! `date_part('dow', …)`), `weekday` from Monday = 0 to Sunday = 6; `weekofyear` is the ISO 8601 week
//! (Spark's "a week starts on Monday, week 1 has more than 3 days"), `second` the whole
//! seconds. An analyzer rewrite ([`SparkDatetimeFunctions`]) replaces each call by that
//! `date_part` before DataFusion coerces types, so the rest of the session treats it as
//! `extract`: a `timestamptz` value's fields are those of its wall-clock time in the
//! session's time zone (module [`zoned_functions`](super::zoned_functions), as Spark's
//! are in `spark.sql.session.timeZone`), and a filter such as `year(ts) = 2024` prunes
//! files and row groups as `extract(year FROM ts) = 2024` does. A string argument is
//! read as Spark reads it: the date fields of the date it writes (Spark casts it to
//! `DATE`: `day('2024-01-01T23:30:00-05:00')` is 1 in any session zone), `hour`,
//! `minute` and `second` of it read as a timestamp (an offset it names places its instant
//! on the session zone's clock); an invalid one is an error, where Spark without ANSI
//! mode answers NULL.
//!
//! Registered (each only where the session has no function of that name, so a user's
//! own `year` stays theirs) by [`install_spark_datetime_functions`], which
//! [`install_session_zone_rule`](super::install_session_zone_rule) calls.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, plan_err, DFSchema, Result as DFResult, ScalarValue};
use datafusion::execution::FunctionRegistry;
use datafusion::functions::datetime::date_part;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{
    cast, lit, ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};
use datafusion::prelude::SessionContext;

use super::compared_groups::install_once;
use super::zoned_functions::SessionZoneFunctions;

/// The rewrite's name (as listed by the session's analyzer).
pub const SPARK_DATETIME_FUNCTIONS_RULE: &str = "icefloe_spark_datetime_functions";

/// How a Spark function's value follows from `date_part`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Numbering {
    /// `date_part`'s value as it is.
    Same,
    /// `dayofweek`: Sunday = 1 … Saturday = 7 (`date_part('dow')` + 1).
    SundayOne,
    /// `weekday`: Monday = 0 … Sunday = 6 (`(date_part('dow') + 6) % 7`).
    MondayZero,
}

/// Spark's names, the `date_part` field each reads, and its numbering.
const FUNCTIONS: [(&str, &str, Numbering); 12] = [
    ("year", "year", Numbering::Same),
    ("quarter", "quarter", Numbering::Same),
    ("month", "month", Numbering::Same),
    ("day", "day", Numbering::Same),
    ("dayofmonth", "day", Numbering::Same),
    ("dayofweek", "dow", Numbering::SundayOne),
    ("weekday", "dow", Numbering::MondayZero),
    ("dayofyear", "doy", Numbering::Same),
    ("weekofyear", "week", Numbering::Same),
    ("hour", "hour", Numbering::Same),
    ("minute", "minute", Numbering::Same),
    ("second", "second", Numbering::Same),
];

/// One of Spark's field functions (see the module docs); planned as a function of its
/// name, and replaced by [`SparkDatetimeFunctions`] before it runs.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct SparkDatetimeFunction {
    name: &'static str,
    part: &'static str,
    numbering: Numbering,
    signature: Signature,
}

impl SparkDatetimeFunction {
    fn new(name: &'static str, part: &'static str, numbering: Numbering) -> Self {
        Self {
            name,
            part,
            numbering,
            signature: Signature::any(1, Volatility::Immutable),
        }
    }

    /// Whether the function reads a field of the time of day (`hour`, `minute`,
    /// `second`), which a `TIME` value has too.
    fn of_times(&self) -> bool {
        matches!(self.part, "hour" | "minute" | "second")
    }

    /// Whether an argument of type `ty` has the function's field (NULL has every one).
    fn takes(&self, ty: &DataType) -> bool {
        match ty {
            DataType::Null
            | DataType::Date32
            | DataType::Date64
            | DataType::Timestamp(_, _)
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View => true,
            DataType::Time32(_) | DataType::Time64(_) => self.of_times(),
            DataType::Dictionary(_, value) => self.takes(value),
            _ => false,
        }
    }

    /// The `date_part` expression of `arg` this call stands for, its value in the
    /// session's time zone (see the module docs) and numbered as Spark numbers it.
    fn as_date_part(&self, arg: Expr, schema: &DFSchema, config: &ConfigOptions) -> DFResult<Expr> {
        let arg = match arg.get_type(schema) {
            Ok(DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) if !self.of_times() => {
                date_written(arg)
            }
            _ => arg,
        };
        let call = date_part().call(vec![lit(self.part), arg]);
        let field = SessionZoneFunctions.rewrite(call, schema, config)?.data;
        Ok(match self.numbering {
            Numbering::Same => field,
            Numbering::SundayOne => field + lit(1i32),
            Numbering::MondayZero => (field + lit(6i32)) % lit(7i32),
        })
    }
}

impl ScalarUDFImpl for SparkDatetimeFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DFResult<DataType> {
        Ok(DataType::Int32)
    }

    /// Run directly only in a plan the session's analyzer did not see (the rewrite
    /// replaces every call): DataFusion's `date_part`, numbered as Spark numbers it,
    /// without the session zone's calendar.
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let ScalarFunctionArgs {
            args: values,
            arg_fields,
            number_rows,
            return_field,
            config_options,
        } = args;
        let [value] = <[ColumnarValue; 1]>::try_from(values).map_err(|_| {
            datafusion::common::DataFusionError::Plan(format!("{} takes one argument", self.name))
        })?;
        let part = ColumnarValue::Scalar(ScalarValue::Utf8(Some(self.part.to_string())));
        let mut fields = vec![Arc::new(Field::new("part", DataType::Utf8, false))];
        fields.extend(arg_fields);
        let field = date_part().invoke_with_args(ScalarFunctionArgs {
            args: vec![part, value],
            arg_fields: fields,
            number_rows,
            return_field,
            config_options,
        })?;
        let (add, modulo) = match self.numbering {
            Numbering::Same => return Ok(field),
            Numbering::SundayOne => (1, None),
            Numbering::MondayZero => (6, Some(7)),
        };
        let renumber = |v: i32| modulo.map_or(v + add, |m| (v + add) % m);
        match field {
            ColumnarValue::Scalar(ScalarValue::Int32(v)) => {
                Ok(ColumnarValue::Scalar(ScalarValue::Int32(v.map(renumber))))
            }
            ColumnarValue::Array(a) => {
                let Some(ints) = a
                    .as_any()
                    .downcast_ref::<datafusion::arrow::array::Int32Array>()
                else {
                    return exec_err!("{}: date_part gave {}", self.name, a.data_type());
                };
                let renumbered: datafusion::arrow::array::Int32Array =
                    ints.iter().map(|v| v.map(renumber)).collect();
                Ok(ColumnarValue::Array(Arc::new(renumbered)))
            }
            ColumnarValue::Scalar(other) => {
                exec_err!("{}: date_part gave {}", self.name, other.data_type())
            }
        }
    }
}

/// `text`, a string, cast to `DATE`: the cast that
/// [`spark_text_casts`](super::spark_text_casts) reads as Spark's cast reads it (the date
/// written, `2024-01-01T23:30:00-05:00` is 2024-01-01 in every session zone, `2024-1-5`
/// 2024-01-05); a string without such a date is an error naming it.
fn date_written(text: Expr) -> Expr {
    cast(text, DataType::Date32)
}

/// A [`FunctionRewrite`]: each call of a [`SparkDatetimeFunction`] becomes its
/// `date_part` expression (see the module docs).
#[derive(Debug, Default)]
pub struct SparkDatetimeFunctions;

impl FunctionRewrite for SparkDatetimeFunctions {
    fn name(&self) -> &str {
        SPARK_DATETIME_FUNCTIONS_RULE
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        let Expr::ScalarFunction(ScalarFunction { func, args }) = expr else {
            return Ok(Transformed::no(expr));
        };
        let Some(spark) = func.inner().downcast_ref::<SparkDatetimeFunction>() else {
            return Ok(Transformed::no(Expr::ScalarFunction(ScalarFunction {
                func,
                args,
            })));
        };
        let [arg] = <[Expr; 1]>::try_from(args).map_err(|args| {
            datafusion::common::DataFusionError::Plan(format!(
                "{} takes one argument, got {}",
                spark.name,
                args.len()
            ))
        })?;
        if let Ok(ty) = arg.get_type(schema) {
            if !spark.takes(&ty) {
                return plan_err!(
                    "{}: the argument must be a date, timestamp or string{}, not {ty}",
                    spark.name,
                    if spark.of_times() { " (or a time)" } else { "" }
                );
            }
        }
        Ok(Transformed::yes(spark.as_date_part(arg, schema, config)?))
    }
}

/// Register Spark's field functions in `ctx` (those whose names the session has no
/// function of) and add [`SparkDatetimeFunctions`] to its analyzer, once.
pub fn install_spark_datetime_functions(ctx: &SessionContext) {
    for (name, part, numbering) in FUNCTIONS {
        if ctx.udf(name).is_err() {
            ctx.register_udf(ScalarUDF::new_from_impl(SparkDatetimeFunction::new(
                name, part, numbering,
            )));
        }
    }
    install_once(ctx, Arc::new(SparkDatetimeFunctions));
}
