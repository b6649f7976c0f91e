//! Errors computing an `UPDATE`'s constant values, named by the column.
//!
//! DataFusion 55's planner casts each `SET` value to its column's type, and its optimizer
//! folds a constant one when the statement is run: `SET i = 3000000000` on an `INT`
//! column failed with "Optimizer rule 'simplify_expressions' failed caused by Arrow error:
//! Cast error: Can't cast value 3000000000 to type Int32", naming no column.
//! [`check_constant_values`] folds each value of a planned `UPDATE` first, alone, and
//! names the column whose value fails. (Values computed from the row fail while the
//! statement runs, where the table names the column.) Each value goes through the
//! session's function rewrites first, as the analyzer's `apply_function_rewrites` rule
//! takes it when the statement runs: a value they make foldable (`SET ts = TIMESTAMP
//! '0001-01-01 00:00:00'`, restated in microseconds by
//! [`timestamp_literals`](crate::datafusion::timestamp_literals)) is not refused; and
//! through the reading of strings as dates and timestamps as Spark's cast reads them
//! ([`spark_text_casts`](crate::datafusion::spark_text_casts), an analyzer rule), so
//! `SET d = '2024-1-5'` is not refused for Arrow's cast; and through DataFusion's type
//! coercion, as the analyzer takes it before the optimizer folds it (`SET l = [1, 2.5]`
//! folded uncoerced panicked in Arrow; `SET d = coalesce(1, 2.5)` was refused naming a
//! `CASE` the statement did not hold).

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::execution::SessionState;
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::{Cast, Expr, LogicalPlan, WriteOp};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;

use crate::datafusion::spark_text_casts::unread_text;
use crate::error::{Error, Result};

/// Refuse the `UPDATE` `plan` (of table `table` as written) when folding one of its
/// values, after `state`'s function rewrites, fails.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): "UPDATE SET of 'ns.t': cannot set
/// column 'i' (Int32): …", with DataFusion's error as the source.
pub(super) fn check_constant_values(
    state: &SessionState,
    plan: &LogicalPlan,
    table: &str,
) -> Result<()> {
    let LogicalPlan::Dml(dml) = plan else {
        return Ok(());
    };
    if dml.op != WriteOp::Update {
        return Ok(());
    }
    let LogicalPlan::Projection(projection) = dml.input.as_ref() else {
        return Ok(());
    };
    let schema = projection.input.schema();
    let simplifier = ExprSimplifier::new(
        SimplifyContext::builder()
            .with_schema(std::sync::Arc::clone(schema))
            .build(),
    );
    for (expr, field) in projection.expr.iter().zip(projection.schema.fields()) {
        // only values given by the statement: a kept column is a column reference
        let inner = match expr {
            Expr::Alias(alias) => alias.expr.as_ref(),
            other => other,
        };
        if matches!(inner, Expr::Column(_)) {
            continue;
        }
        // a string that is no date or timestamp Spark's cast reads, named before folding
        // (the reading's failure is kept for the run by DataFusion's constant folding)
        if let Expr::Cast(Cast { expr, field: to }) = inner {
            if let Expr::Literal(value, _) = expr.as_ref() {
                if let Some(reason) = unread_text(value, to.data_type()) {
                    return Err(Error::invalid_argument(format!(
                        "UPDATE SET of '{table}': cannot set column '{}' ({}): {reason}",
                        field.name(),
                        field.data_type(),
                    )));
                }
            }
        }
        let rewrites = state.analyzer().function_rewrites();
        let rewritten = inner.clone().transform_up(|e| {
            let mut result = Transformed::no(e);
            for rewrite in rewrites {
                result = result
                    .transform_data(|e| rewrite.rewrite(e, schema, state.config_options()))?;
            }
            Ok(result)
        });
        // and a string read as a date or timestamp as Spark's cast reads it
        let session = super::session_zone::non_utc_zone(state.config_options());
        let rewritten = rewritten.and_then(|value| {
            crate::datafusion::spark_text_casts::text_casts(value.data, schema, session)
        });
        // coerced first, as the analyzer's type coercion takes it before the optimizer
        // folds it: folding `make_array(1, 2.5)` uncoerced panicked in Arrow
        // ("Arrays with inconsistent types passed to MutableArrayData")
        let folded = rewritten
            .and_then(|value| simplifier.coerce(value.data, schema))
            .and_then(|value| simplifier.simplify(value));
        if let Err(e) = folded {
            return Err(Error::invalid_argument(format!(
                "UPDATE SET of '{table}': cannot set column '{}' ({}): {}",
                field.name(),
                field.data_type(),
                e.strip_backtrace()
            )));
        }
    }
    Ok(())
}
