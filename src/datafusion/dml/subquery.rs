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
//!
//! Uncorrelated `IN (SELECT …)` and `EXISTS (…)` in a `DELETE`/`UPDATE` condition or
//! `SET` value ([`inline_predicate_subqueries`]) are run once too, before DataFusion's
//! optimizer would turn them into a semi or anti join that the table is never handed
//! (the guard refuses those): `x [NOT] IN (SELECT k …)` becomes `x [NOT] IN (v1, v2, …)`
//! over the values the subquery returned, which is the same three-valued predicate (a
//! NULL among them makes `NOT IN` NULL for a value not listed, as in Spark), and `[NOT]
//! EXISTS (…)` becomes `true`/`false`.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::ScalarValue;
use datafusion::dataframe::DataFrame;
use datafusion::execution::SessionState;
use datafusion::logical_expr::dml::{MergeIntoAction, MergeIntoClause, WriteOp};
use datafusion::logical_expr::expr::{Exists, InList, InSubquery};
use datafusion::logical_expr::{
    lit, DmlStatement, Expr, LogicalPlan, LogicalPlanBuilder, Subquery,
};
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
    // each expression, with what names it in errors: a value names its column (its
    // subquery's result is cast to the column's type as it runs, so a value that does not
    // fit fails here)
    let mut exprs: Vec<(Expr, Option<String>)> = vec![];
    for c in &clauses {
        exprs.extend(c.predicate.iter().map(|p| (p.clone(), None)));
        match &c.action {
            MergeIntoAction::Update(assignments) => {
                exprs.extend(assignments.iter().map(|(column, e)| {
                    let what =
                        format!("MERGE UPDATE SET: computing the value of column '{column}'");
                    (e.clone(), Some(what))
                }))
            }
            MergeIntoAction::Insert { columns, values } => {
                exprs.extend(values.iter().enumerate().map(|(i, e)| {
                    let column = columns
                        .get(i)
                        .map_or_else(|| format!("number {}", i + 1), |c| format!("'{c}'"));
                    let what = format!("MERGE INSERT: computing the value of column {column}");
                    (e.clone(), Some(what))
                }))
            }
            MergeIntoAction::Delete => {}
        }
    }
    let mut inlined = Vec::with_capacity(exprs.len());
    for (e, what) in exprs {
        let one = inline_scalar_subqueries(state, vec![e], "MERGE", table).await;
        inlined.extend(match what {
            Some(what) => one.map_err(|e| e.context(what))?,
            None => one?,
        });
    }
    let mut exprs = inlined.into_iter();
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

/// `df` with every uncorrelated `IN (SELECT …)` and `EXISTS (…)` in the conditions and
/// `SET` values of its `DELETE`/`UPDATE` (an unoptimized plan, as `SessionContext::sql`
/// returns it) run once and replaced by what it returned (see the module docs); any
/// other plan unchanged. A correlated one is left for the DML guard to refuse.
///
/// Errors: planning and execution errors of a subquery, naming the statement and table.
pub(crate) async fn inline_predicate_subqueries(df: DataFrame) -> Result<DataFrame> {
    let LogicalPlan::Dml(DmlStatement {
        op: op @ (WriteOp::Delete | WriteOp::Update),
        table_name,
        ..
    }) = df.logical_plan()
    else {
        return Ok(df);
    };
    let statement = if *op == WriteOp::Delete {
        "DELETE"
    } else {
        "UPDATE"
    };
    let table = table_name.to_string();
    let (state, plan) = df.into_parts();
    let LogicalPlan::Dml(dml) = plan else {
        return Ok(DataFrame::new(state, plan));
    };
    // the uncorrelated ones (whether an EXISTS), each once (the same one may be written
    // twice)
    let mut found: Vec<(Subquery, bool)> = vec![];
    dml.input.apply(|node| {
        node.apply_expressions(|expr| {
            expr.apply(|e| {
                let (sq, exists) = match e {
                    Expr::InSubquery(InSubquery { subquery, .. }) => (subquery, false),
                    Expr::Exists(Exists { subquery, .. }) => (subquery, true),
                    Expr::ScalarSubquery(_) => return Ok(TreeNodeRecursion::Jump),
                    _ => return Ok(TreeNodeRecursion::Continue),
                };
                let key = (sq.clone(), exists);
                if sq.outer_ref_columns.is_empty() && !found.contains(&key) {
                    found.push(key);
                }
                Ok(TreeNodeRecursion::Jump)
            })
        })
    })?;
    if found.is_empty() {
        return Ok(DataFrame::new(state, LogicalPlan::Dml(dml)));
    }
    let mut rows: Vec<Vec<ScalarValue>> = Vec::with_capacity(found.len());
    for (sq, exists) in &found {
        rows.push(values_of(&state, sq, *exists, statement, &table).await?);
    }
    let input = Arc::unwrap_or_clone(dml.input).transform(|node| {
        node.map_expressions(|expr| {
            expr.transform(|e| {
                let position = |sq: &Subquery, exists: bool| {
                    found.iter().position(|(f, x)| f == sq && *x == exists)
                };
                Ok(match e {
                    Expr::InSubquery(InSubquery {
                        expr,
                        subquery,
                        negated,
                    }) => match position(&subquery, false) {
                        // `x IN (empty)` is false and `x NOT IN (empty)` true, for a NULL
                        // `x` too (SQL; Spark)
                        Some(i) if rows[i].is_empty() => Transformed::yes(lit(negated)),
                        Some(i) => Transformed::yes(Expr::InList(InList {
                            expr,
                            list: rows[i].iter().map(|v| lit(v.clone())).collect(),
                            negated,
                        })),
                        None => Transformed::no(Expr::InSubquery(InSubquery {
                            expr,
                            subquery,
                            negated,
                        })),
                    },
                    Expr::Exists(Exists { subquery, negated }) => match position(&subquery, true) {
                        Some(i) => Transformed::yes(lit(rows[i].is_empty() == negated)),
                        None => Transformed::no(Expr::Exists(Exists { subquery, negated })),
                    },
                    other => Transformed::no(other),
                })
            })
        })
    })?;
    let plan = LogicalPlan::Dml(DmlStatement {
        input: Arc::new(input.data),
        ..dml
    });
    Ok(DataFrame::new(state, plan))
}

/// The distinct values of the first column `sq` returns (for an `EXISTS`, of at most one
/// row: only whether there is one counts).
async fn values_of(
    state: &SessionState,
    sq: &Subquery,
    exists: bool,
    statement: &str,
    table: &str,
) -> Result<Vec<ScalarValue>> {
    let context = |e: datafusion::error::DataFusionError| {
        Error::from(e).context(format!("{statement} on '{table}': subquery"))
    };
    let plan = sq.subquery.as_ref().clone();
    let plan = match exists {
        false => plan,
        true => LogicalPlanBuilder::from(plan)
            .limit(0, Some(1))
            .map_err(context)?
            .build()
            .map_err(context)?,
    };
    let plan = state.create_physical_plan(&plan).await.map_err(context)?;
    let batches = collect(plan, state.task_ctx()).await.map_err(context)?;
    let mut out: Vec<ScalarValue> = vec![];
    let mut seen = std::collections::HashSet::new();
    for batch in &batches {
        for row in 0..batch.num_rows() {
            let value = ScalarValue::try_from_array(batch.column(0), row)?;
            if seen.insert(value.clone()) {
                out.push(value);
            }
        }
    }
    Ok(out)
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
