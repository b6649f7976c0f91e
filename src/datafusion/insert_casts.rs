//! A literal an `INSERT` cannot write into its column (`INSERT INTO t VALUES ('x')` into
//! an `INT` column, `10000000000` into an `INT`), named by table and column.
//!
//! DataFusion 55 plans an `INSERT`'s values as casts to the table's column types
//! (`CAST(Utf8("x") AS Int32)` in the `VALUES` rows or in the projection over the query)
//! and its constant folding then fails on such a literal with Arrow's message alone:
//! "Optimizer rule 'simplify_expressions' failed … Cast error: Cannot cast string 'x' to
//! value of Int32 type", which names neither the table nor the column.
//! [`InsertLiteralCasts`] (an analyzer rule, so it runs before the optimizer) tries each
//! such cast of a literal and fails the statement with the same cast error, prefixed by
//! the table and the column, as `UPDATE … SET` names them: "INSERT INTO 'ns.t': cannot
//! set column 'a' (Int32): Arrow error: Cast error: …". Only value errors are reported
//! here: a cast Arrow does not have between the two types (a uuid's text into
//! `FixedSizeBinary(16)`, which another rule rewrites) is left to the rules after it.

use std::sync::Arc;

use datafusion::arrow::compute::can_cast_types;
use datafusion::common::config::ConfigOptions;
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::logical_expr::{Cast, Expr, LogicalPlan, WriteOp};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

/// The rule's name in the session's analyzer.
pub const INSERT_LITERAL_CASTS_RULE: &str = "icefloe_insert_literal_casts";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct InsertLiteralCasts;

/// Add [`InsertLiteralCasts`] to `ctx`'s analyzer, once (a second call does nothing).
/// [`install_values_rule`](super::install_values_rule) calls it.
pub fn install_insert_casts_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(InsertLiteralCasts));
}

impl AnalyzerRule for InsertLiteralCasts {
    fn name(&self) -> &str {
        INSERT_LITERAL_CASTS_RULE
    }

    /// Errors: an icefloe [`crate::ErrorKind::InvalidArgument`] (as
    /// [`DataFusionError::External`]) naming the table and column, for the first literal
    /// of an `INSERT` its column's type cannot hold; the plan is returned unchanged
    /// otherwise.
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        if let LogicalPlan::Dml(dml) = &plan {
            if matches!(dml.op, WriteOp::Insert(_)) {
                check_input(&dml.table_name.to_string(), &dml.input)?;
            }
        }
        Ok(plan)
    }
}

/// The casts of literals in `input` (the `INSERT`'s input: `Projection ← Values`, a
/// `Projection` over a query, whose casts may read a literal of the query's own
/// `Projection` by column, or `Values`), each checked against its column.
fn check_input(table: &str, input: &LogicalPlan) -> DFResult<()> {
    // the projection's names: `columnN AS name` of a `VALUES`, or the table's columns
    let mut names: Vec<(String, String)> = Vec::new();
    let values = match input {
        LogicalPlan::Projection(p) => {
            let query = match p.input.as_ref() {
                LogicalPlan::Projection(q) => Some(q),
                _ => None,
            };
            for e in &p.expr {
                if let Expr::Alias(a) = e {
                    match a.expr.as_ref() {
                        Expr::Column(c) => names.push((c.name.clone(), a.name.clone())),
                        Expr::Cast(Cast { expr, field }) => {
                            // `CAST(column AS type)` of the query's literal column
                            let literal = match (expr.as_ref(), query) {
                                (Expr::Column(c), Some(q)) => q
                                    .schema
                                    .fields()
                                    .iter()
                                    .position(|f| f.name() == &c.name)
                                    .and_then(|i| q.expr.get(i)),
                                _ => None,
                            };
                            let cast = match literal {
                                Some(l) => Expr::Cast(Cast::new(
                                    Box::new(l.clone()),
                                    field.data_type().clone(),
                                )),
                                None => a.expr.as_ref().clone(),
                            };
                            check_literal_cast(table, &a.name, &cast)?;
                        }
                        _ => {}
                    }
                }
            }
            match p.input.as_ref() {
                LogicalPlan::Values(v) => v,
                _ => return Ok(()),
            }
        }
        LogicalPlan::Values(v) => v,
        _ => return Ok(()),
    };
    for row in &values.values {
        for (e, field) in row.iter().zip(values.schema.fields()) {
            let column = names
                .iter()
                .find(|(from, _)| from == field.name())
                .map_or(field.name().as_str(), |(_, to)| to.as_str());
            check_literal_cast(table, column, e)?;
        }
    }
    Ok(())
}

/// `e` (aliases aside) when it is `CAST(literal AS type)` of castable types: an error
/// naming `table` and `column` when the literal's value does not cast.
fn check_literal_cast(table: &str, column: &str, e: &Expr) -> DFResult<()> {
    let mut e = e;
    while let Expr::Alias(a) = e {
        e = a.expr.as_ref();
    }
    let Expr::Cast(Cast { expr, field }) = e else {
        return Ok(());
    };
    let data_type = field.data_type();
    let mut expr = expr.as_ref();
    while let Expr::Alias(a) = expr {
        expr = a.expr.as_ref();
    }
    let Expr::Literal(value, _) = expr else {
        return Ok(());
    };
    if value.is_null() || !can_cast_types(&value.data_type(), data_type) {
        return Ok(());
    }
    match value.cast_to(data_type) {
        Ok(_) => Ok(()),
        Err(err) => Err(DataFusionError::External(Box::new(
            crate::error::Error::invalid_argument(format!(
                "INSERT INTO '{table}': cannot set column '{column}' ({data_type}): {err}"
            )),
        ))),
    }
}
