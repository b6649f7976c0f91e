//! Writes floor a timestamp narrowed to the table's unit, as Iceberg Java and Spark do
//! (see [`crate::time_narrowing`]): a `TIMESTAMP '1969-12-31 23:59:59.9999995'` (a
//! nanosecond value, as DataFusion plans every `TIMESTAMP`) written into a `timestamp`
//! column is `1969-12-31 23:59:59.999999`, not `1970-01-01 00:00:00`.
//!
//! DataFusion's `INSERT` and `UPDATE` planners cast the rows they write to the table's
//! column types (`Dml ← Projection (CAST(… AS Timestamp(µs)))`, casts in the rows of
//! each `Values` node), and DataFusion's and Arrow's casts divide. [`TimeNarrowingFloor`], an
//! analyzer rule (it must see those casts before constant folding evaluates them), puts
//! [`FLOOR_TIME_UNITS`] under each such cast that narrows a time unit, at any depth
//! (struct fields, list elements, map keys and values): the function floors those
//! values into the target's units, and the cast above it then changes nothing in them.
//! `INSERT … VALUES`, `INSERT … SELECT`, `INSERT OVERWRITE`, CTAS (an `INSERT` of its
//! query), `UPDATE … SET` and `MERGE`'s `UPDATE SET` / `INSERT VALUES` (cast by
//! DataFusion's type coercion) go through it; the row-level writers cast what is left
//! with [`crate::time_narrowing::cast_flooring`]. Installed with the `VALUES` rule
//! ([`install_values_rule`](super::install_values_rule)).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, LogicalPlan, ReturnFieldArgs, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

use crate::time_narrowing::{floor_time_units, narrowed_type};

/// The rule's name (as listed by the session's analyzer).
pub const TIME_NARROWING_RULE: &str = "icefloe_time_narrowing";

/// The name of the function the rule puts under a narrowing cast.
pub const FLOOR_TIME_UNITS: &str = "icefloe_floor_time_units";

/// `icefloe_floor_time_units(value, target)`: `value` with every timestamp (and `Time64`)
/// whose counterpart in the type of `target` (a typed `NULL`) has a coarser unit floored
/// into that unit ([`crate::time_narrowing::floor_time_units`]); of type
/// [`crate::time_narrowing::narrowed_type`]`(value, target)`, nullable as `value`.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct FloorTimeUnits {
    signature: Signature,
}

impl Default for FloorTimeUnits {
    fn default() -> Self {
        Self {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

/// The [`FloorTimeUnits`] function.
pub fn floor_time_units_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(FloorTimeUnits::default()))
}

impl ScalarUDFImpl for FloorTimeUnits {
    fn name(&self) -> &str {
        FLOOR_TIME_UNITS
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> DFResult<DataType> {
        match arg_types {
            [value, target] => Ok(narrowed_type(value, target)),
            _ => exec_err!("{FLOOR_TIME_UNITS} takes a value and a target, not {arg_types:?}"),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DFResult<FieldRef> {
        let [value, target] = args.arg_fields else {
            return exec_err!("{FLOOR_TIME_UNITS} takes a value and a target");
        };
        Ok(Arc::new(Field::new(
            self.name(),
            narrowed_type(value.data_type(), target.data_type()),
            value.is_nullable(),
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let [_, target] = args.arg_fields.as_slice() else {
            return exec_err!("{FLOOR_TIME_UNITS} takes a value and a target");
        };
        let to = target.data_type();
        match args.args.first() {
            Some(ColumnarValue::Array(array)) => {
                Ok(ColumnarValue::Array(floor_time_units(array, to)?))
            }
            Some(ColumnarValue::Scalar(scalar)) => {
                let array = floor_time_units(&scalar.to_array()?, to)?;
                Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                    &array, 0,
                )?))
            }
            None => exec_err!("{FLOOR_TIME_UNITS} takes a value and a target"),
        }
    }
}

/// `expr` (over `schema`) with [`FLOOR_TIME_UNITS`] under its cast when that cast (under
/// the aliases) narrows a time unit; unchanged otherwise.
///
/// Errors: DataFusion's, when the cast's input has no type.
pub(crate) fn floor_narrowing_cast(expr: Expr, schema: &DFSchema) -> DFResult<Transformed<Expr>> {
    super::written_values::replace_cast_input(expr, &|inner, to| {
        let given = inner.get_type(schema)?;
        if narrowed_type(&given, to) == given {
            return Ok(None);
        }
        let target = Expr::Literal(ScalarValue::try_from(to)?, None);
        Ok(Some(Expr::ScalarFunction(ScalarFunction::new_udf(
            floor_time_units_udf(),
            vec![inner.clone(), target],
        ))))
    })
}

/// An analyzer rule: the casts an `INSERT`, `UPDATE` or `MERGE` puts on the values it
/// writes floor where they narrow a time unit (see the module docs).
#[derive(Debug, Default)]
pub struct TimeNarrowingFloor;

impl AnalyzerRule for TimeNarrowingFloor {
    fn name(&self) -> &str {
        TIME_NARROWING_RULE
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        super::written_values::map_written_values(plan, &floor_narrowing_cast)
    }
}

/// Add [`TimeNarrowingFloor`] to `ctx`'s analyzer, once (a second call does nothing).
pub(crate) fn install_time_narrowing_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(TimeNarrowingFloor));
}
