//! `EXECUTE name(values)`: a value that its parameter's type cannot hold exactly is
//! refused, instead of being cut to fit.
//!
//! DataFusion gives each parameter of `PREPARE` the type of what it is compared with or
//! assigned to (`WHERE id < $1` on an `int` column: `Int32`), or the type the statement
//! declares (`PREPARE q(INT) AS …`), and casts the `EXECUTE` value to it. A cast from
//! `2.5` to `Int32` drops the fraction, so `WHERE id < $1` with `2.5` returned only the
//! rows below 2, `id = $1` with `2.7` returned the rows of 2, and a prepared `DELETE`
//! would delete them. Spark, Trino and the same query without `PREPARE` compare the value
//! as it is. A numeric value that does not come back unchanged from its parameter's type
//! (a fraction, a value out of range) is an error naming the statement, the parameter,
//! the value and the type; other values (strings, dates) are left to DataFusion's cast,
//! which fails on what it cannot convert.
//!
//! The parameter types are kept per session ([`PreparedParameterTypes`], a
//! `SessionConfig` extension that [`register_iceberg_options`] installs) when `PREPARE`
//! runs through [`super::execute`]; a session without it is not checked.
//!
//! [`register_iceberg_options`]: crate::datafusion::register_iceberg_options

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::{Expr, LogicalPlan, Statement};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;
use datafusion::prelude::SessionContext;

use crate::error::{Error, Result};

/// The parameter types of the session's prepared statements: name → the type of `$1`,
/// `$2`, … (`None`: not inferred; not checked).
#[derive(Debug, Default)]
pub struct PreparedParameterTypes(Mutex<HashMap<String, Vec<Option<DataType>>>>);

impl PreparedParameterTypes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Option<DataType>>>> {
        // a poisoned lock only means a panic elsewhere: the map itself is whole
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn registry(ctx: &SessionContext) -> Option<Arc<PreparedParameterTypes>> {
    ctx.state()
        .config()
        .get_extension::<PreparedParameterTypes>()
}

/// Keep the parameter types of `statement`, a `PREPARE` that the session has just
/// registered (planned again here: planning registers nothing). Does nothing when the
/// session keeps no types or the statement does not plan.
pub(super) async fn remember(ctx: &SessionContext, statement: &str) {
    let Some(registry) = registry(ctx) else {
        return;
    };
    let Ok(LogicalPlan::Statement(Statement::Prepare(prepare))) =
        ctx.state().create_logical_plan(statement).await
    else {
        return;
    };
    let types = if prepare.fields.is_empty() {
        let inferred = prepare.input.get_parameter_types().unwrap_or_default();
        let count = inferred
            .keys()
            .filter_map(|k| k.strip_prefix('$')?.parse::<usize>().ok())
            .max()
            .unwrap_or(0);
        (1..=count)
            .map(|i| inferred.get(&format!("${i}")).cloned().flatten())
            .collect()
    } else {
        prepare
            .fields
            .iter()
            .map(|f| Some(f.data_type().clone()))
            .collect()
    };
    registry.lock().insert(prepare.name, types);
}

/// Forget the parameter types of prepared statement `name` (`DEALLOCATE` removed it).
pub(super) fn forget(ctx: &SessionContext, name: &str) {
    if let Some(registry) = registry(ctx) {
        registry.lock().remove(name);
    }
}

/// Check the values of `statement`, an `EXECUTE`, against the types of its prepared
/// statement's parameters (see the module docs). Statements the session has no types
/// for, and values that are not constants, are left to DataFusion.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the statement, the parameter
/// (`$n`), the value and the type, for a numeric value its parameter's type does not hold
/// exactly.
pub(super) async fn check(ctx: &SessionContext, statement: &str) -> Result<()> {
    let Some(registry) = registry(ctx) else {
        return Ok(());
    };
    let Some(execute) = super::prepare::executed(ctx, statement).await else {
        return Ok(());
    };
    let Some(types) = registry.lock().get(&execute.name).cloned() else {
        return Ok(());
    };
    let state = ctx.state();
    let simplifier = ExprSimplifier::new(
        SimplifyContext::builder()
            .with_config_options(Arc::clone(state.config_options()))
            .build(),
    );
    for (i, (value, ty)) in execute.parameters.into_iter().zip(types).enumerate() {
        // coerced before folding, as the analyzer takes it (`make_array(1, 2.5)` folded
        // uncoerced panicked in Arrow)
        let folded = simplifier
            .coerce(value, &DFSchema::empty())
            .and_then(|value| simplifier.simplify(value));
        let (Some(ty), Ok(Expr::Literal(value, _))) = (ty, folded) else {
            continue;
        };
        if let Some(why) = does_not_fit(&value, &ty) {
            return Err(Error::invalid_argument(format!(
                "EXECUTE {}: parameter ${} = {value} {why} {ty}, the type PREPARE gave it \
                 (from the column it is compared with or assigned to, or declared); cast \
                 it in the prepared statement (e.g. CAST(${} AS DOUBLE)) or pass a value \
                 of that type",
                execute.name,
                i + 1,
                i + 1
            )));
        }
    }
    Ok(())
}

/// `statement`, when it is an `EXECUTE`, planned with its values type-coerced (`None`
/// for any other statement): DataFusion 55 folds the values of an `EXECUTE` without
/// coercing them first, so `EXECUTE p([1, 2.5])` panicked in Arrow ("Arrays with
/// inconsistent types passed to MutableArrayData") where `SELECT [1, 2.5]` is
/// `[1.0, 2.5]`.
///
/// Errors: DataFusion's, when a value cannot be coerced.
pub(super) async fn coerced(ctx: &SessionContext, statement: &str) -> Result<Option<LogicalPlan>> {
    let Some(execute) = super::prepare::executed(ctx, statement).await else {
        return Ok(None);
    };
    let simplifier = ExprSimplifier::new(SimplifyContext::builder().build());
    let parameters = execute
        .parameters
        .into_iter()
        .map(|value| simplifier.coerce(value, &DFSchema::empty()))
        .collect::<datafusion::common::Result<Vec<_>>>()?;
    Ok(Some(LogicalPlan::Statement(Statement::Execute(
        datafusion::logical_expr::Execute {
            name: execute.name,
            parameters,
        },
    ))))
}

/// Why numeric `value` cannot be given to a parameter of type `ty` without changing
/// (`None`: it can, or it is not numeric).
fn does_not_fit(value: &ScalarValue, ty: &DataType) -> Option<&'static str> {
    let from = value.data_type();
    if value.is_null() || &from == ty || !from.is_numeric() {
        return None;
    }
    match value.cast_to(ty) {
        Err(_) => Some("is out of the range of"),
        Ok(cast) => match cast.cast_to(&from) {
            Ok(back) if back == *value => None,
            _ => Some("is not exactly a value of"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_values_fit_only_when_they_come_back_unchanged() {
        let dec = |v: i128, p: u8, s: i8| ScalarValue::Decimal128(Some(v), p, s);
        // 2.5 and 2.7 are not integers; 2.0 is
        assert!(does_not_fit(&dec(25, 2, 1), &DataType::Int32).is_some());
        assert!(does_not_fit(&dec(27, 2, 1), &DataType::Int32).is_some());
        assert_eq!(does_not_fit(&dec(20, 2, 1), &DataType::Int32), None);
        // out of the range of int
        assert_eq!(
            does_not_fit(&ScalarValue::Int64(Some(4_000_000_000)), &DataType::Int32),
            Some("is out of the range of")
        );
        assert_eq!(
            does_not_fit(&ScalarValue::Int64(Some(7)), &DataType::Int32),
            None
        );
        assert!(does_not_fit(&ScalarValue::Float64(Some(0.5)), &DataType::Int64).is_some());
        assert_eq!(
            does_not_fit(&ScalarValue::Int64(Some(3)), &DataType::Float64),
            None
        );
        // not numeric, or NULL: left to DataFusion
        assert_eq!(
            does_not_fit(&ScalarValue::Utf8(Some("05".into())), &DataType::Int32),
            None
        );
        assert_eq!(
            does_not_fit(&ScalarValue::Int64(None), &DataType::Int32),
            None
        );
    }
}
