//! Uncorrelated scalar subqueries in a `DELETE`/`UPDATE` condition or `SET` value
//! (`WHERE id = (SELECT max(id) FROM u)`, `SET x = (SELECT count(*) FROM u)`).
//!
//! DataFusion 55 leaves such a subquery in the expression for its physical planner,
//! which runs it once before the plan (`ScalarSubqueryExec`); but the expressions a
//! table's `delete_from` / `update` is handed are planned by the table, outside that
//! planner, which cannot turn them into physical expressions. So each one is run here
//! first, once, when the statement is planned, and replaced by its value: no row gives
//! NULL, more than one row is an error (the SQL rule for a scalar subquery, as Spark and
//! DataFusion apply it). A correlated one (reading the target row's columns) is refused
//! by the DML guard (module `guard`) before the statement gets here.

use std::collections::HashMap;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::ScalarValue;
use datafusion::execution::SessionState;
use datafusion::logical_expr::{Expr, Subquery};
use datafusion::physical_plan::collect;

use crate::error::{Error, Result};

/// `exprs` with every uncorrelated scalar subquery replaced by its value, run once each
/// (`statement` and `table` name them in errors).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for a subquery that returns more than
/// one row or column; planning and execution errors of a subquery.
pub(super) async fn inline_scalar_subqueries(
    state: &SessionState,
    exprs: Vec<Expr>,
    statement: &str,
    table: &str,
) -> Result<Vec<Expr>> {
    let mut found: Vec<Subquery> = vec![];
    for expr in &exprs {
        expr.apply(|e| {
            if let Expr::ScalarSubquery(sq) = e {
                if sq.outer_ref_columns.is_empty() && !found.contains(sq) {
                    found.push(sq.clone());
                }
                return Ok(TreeNodeRecursion::Jump);
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
    }
    if found.is_empty() {
        return Ok(exprs);
    }
    let mut values: HashMap<usize, ScalarValue> = HashMap::new();
    for (i, sq) in found.iter().enumerate() {
        values.insert(i, value_of(state, sq, statement, table).await?);
    }
    exprs
        .into_iter()
        .map(|expr| {
            Ok(expr
                .transform(|e| match &e {
                    Expr::ScalarSubquery(sq) => match found.iter().position(|f| f == sq) {
                        Some(i) => Ok(Transformed::new(
                            Expr::Literal(values[&i].clone(), None),
                            true,
                            TreeNodeRecursion::Jump,
                        )),
                        None => Ok(Transformed::no(e)),
                    },
                    _ => Ok(Transformed::no(e)),
                })?
                .data)
        })
        .collect()
}

/// The one value `sq` returns (NULL of its type for no row).
async fn value_of(
    state: &SessionState,
    sq: &Subquery,
    statement: &str,
    table: &str,
) -> Result<ScalarValue> {
    let schema = sq.subquery.schema();
    let [field] = schema.fields().as_ref() else {
        return Err(Error::invalid_argument(format!(
            "{statement} on '{table}': a scalar subquery returns {} columns (expected one)",
            schema.fields().len()
        )));
    };
    let plan = state
        .create_physical_plan(sq.subquery.as_ref())
        .await
        .map_err(|e| {
            Error::from(e).context(format!("{statement} on '{table}': scalar subquery"))
        })?;
    let batches = collect(plan, state.task_ctx()).await?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    if rows > 1 {
        return Err(Error::invalid_argument(format!(
            "{statement} on '{table}': a scalar subquery returned {rows} rows (at most one \
             is allowed)"
        )));
    }
    match batches.iter().find(|b| b.num_rows() == 1) {
        Some(batch) => Ok(ScalarValue::try_from_array(batch.column(0), 0)?),
        None => Ok(ScalarValue::try_from(field.data_type())?),
    }
}
