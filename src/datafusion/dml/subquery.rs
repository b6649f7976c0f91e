//! Uncorrelated scalar subqueries in a `DELETE`/`UPDATE` condition or `SET` value
//! (`WHERE id = (SELECT max(id) FROM u)`, `SET x = (SELECT count(*) FROM u)`), and in a
//! `MERGE` clause's condition and values ([`inline_in_merge_clauses`]).
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
use datafusion::logical_expr::dml::{MergeIntoAction, MergeIntoClause};
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

/// `clauses` (of a `MERGE` into `table`) with every uncorrelated scalar subquery of their
/// conditions and values replaced by its value, run once each.
///
/// Errors: as [`inline_scalar_subqueries`]; [`crate::ErrorKind::Unsupported`] for a
/// subquery left (correlated with the target or source row, `IN`/`EXISTS`), which the
/// table cannot evaluate per row.
pub(super) async fn inline_in_merge_clauses(
    state: &SessionState,
    clauses: Vec<MergeIntoClause>,
    table: &str,
) -> Result<Vec<MergeIntoClause>> {
    let mut exprs = vec![];
    for c in &clauses {
        exprs.extend(c.predicate.iter().cloned());
        match &c.action {
            MergeIntoAction::Update(assignments) => {
                exprs.extend(assignments.iter().map(|(_, e)| e.clone()))
            }
            MergeIntoAction::Insert { values, .. } => exprs.extend(values.iter().cloned()),
            MergeIntoAction::Delete => {}
        }
    }
    let mut exprs = inline_scalar_subqueries(state, exprs, "MERGE", table)
        .await?
        .into_iter();
    for e in exprs.clone() {
        let nested = e.exists(|e| {
            Ok(matches!(
                e,
                Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_)
            ))
        })?;
        if nested {
            return Err(Error::unsupported(format!(
                "MERGE into '{table}': a correlated subquery, IN (SELECT …) or EXISTS in a \
                 WHEN clause is not supported (an uncorrelated scalar subquery is)"
            )));
        }
    }
    let mut next = || {
        exprs
            .next()
            .ok_or_else(|| Error::invalid_data("MERGE: a clause expression went missing"))
    };
    clauses
        .into_iter()
        .map(|mut c| {
            if c.predicate.is_some() {
                c.predicate = Some(next()?);
            }
            match &mut c.action {
                MergeIntoAction::Update(assignments) => {
                    for (_, e) in assignments.iter_mut() {
                        *e = next()?;
                    }
                }
                MergeIntoAction::Insert { values, .. } => {
                    for e in values.iter_mut() {
                        *e = next()?;
                    }
                }
                MergeIntoAction::Delete => {}
            }
            Ok(c)
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
