//! `DELETE FROM t AS a WHERE a.c = …`: the table's alias in a `DELETE`.
//!
//! DataFusion 55 plans a `DELETE`'s condition against the table's own name and drops
//! its alias, so `a.c` is "No field named a.c" (its `UPDATE` takes the alias). Spark,
//! DuckDB and PostgreSQL accept the alias. [`plan`] plans such a statement with the
//! alias taken out and each column it qualifies (`a.c`, `a.s.f`) qualified by the
//! table's name instead; nothing else changes. A subquery of the condition that gives
//! one of its own tables the same alias would see that table's columns renamed too:
//! such a subquery is left to DataFusion (which reports it) rather than rewritten.

use std::ops::ControlFlow;

use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, Expr, FromTable, Ident, ObjectNamePart, Query, SetExpr, Statement,
    TableFactor, Visit, Visitor,
};

use crate::error::Result;

/// The plan of `sql` when it is a `DELETE` whose one table has an alias; `None` for any
/// other statement (planned as it is).
///
/// Errors: DataFusion's planning errors for the rewritten statement.
pub(super) async fn plan(ctx: &SessionContext, sql: &str) -> Result<Option<LogicalPlan>> {
    let state = ctx.state();
    let options = state.config().options().sql_parser.clone();
    let Ok(DFStatement::Statement(boxed)) = state.sql_to_statement(sql, &options.dialect) else {
        return Ok(None);
    };
    let Statement::Delete(mut delete) = *boxed else {
        return Ok(None);
    };
    let normalize = |ident: &Ident| -> String {
        if options.enable_ident_normalization && ident.quote_style.is_none() {
            ident.value.to_lowercase()
        } else {
            ident.value.clone()
        }
    };
    let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) = &mut delete.from;
    let [table] = tables.as_mut_slice() else {
        return Ok(None);
    };
    if !table.joins.is_empty() {
        return Ok(None);
    }
    let TableFactor::Table { name, alias, .. } = &mut table.relation else {
        return Ok(None);
    };
    let Some(a) = alias.as_ref().filter(|a| a.columns.is_empty()) else {
        return Ok(None);
    };
    let alias_name = normalize(&a.name);
    let mut qualifier: Vec<Ident> = vec![];
    for part in &name.0 {
        match part {
            ObjectNamePart::Identifier(ident) => qualifier.push(ident.clone()),
            ObjectNamePart::Function(_) => return Ok(None),
        }
    }
    if let Some(selection) = &delete.selection {
        let mut shadows = AliasedAgain {
            alias: &alias_name,
            normalize: &normalize,
        };
        if Visit::visit(selection, &mut shadows).is_break() {
            return Ok(None);
        }
    }
    *alias = None;
    if let Some(selection) = &mut delete.selection {
        let _ = visit_expressions_mut(selection, |e| {
            if let Expr::CompoundIdentifier(parts) = e {
                if parts.len() >= 2 && normalize(&parts[0]) == alias_name {
                    let rest = parts.split_off(1);
                    *parts = qualifier.iter().cloned().chain(rest).collect();
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
    let plan = state
        .statement_to_plan(DFStatement::Statement(Box::new(Statement::Delete(delete))))
        .await?;
    Ok(Some(plan))
}

/// Breaks at a subquery that names one of its tables `alias` (or reads a table of that
/// name).
struct AliasedAgain<'a, F: Fn(&Ident) -> String> {
    alias: &'a str,
    normalize: &'a F,
}

impl<F: Fn(&Ident) -> String> Visitor for AliasedAgain<'_, F> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        let named = |factor: &TableFactor| match factor {
            TableFactor::Table { name, alias, .. } => {
                alias
                    .as_ref()
                    .is_some_and(|a| (self.normalize)(&a.name) == self.alias)
                    || name.0.last().is_some_and(|p| match p {
                        ObjectNamePart::Identifier(i) => (self.normalize)(i) == self.alias,
                        ObjectNamePart::Function(_) => false,
                    })
            }
            _ => false,
        };
        if let SetExpr::Select(select) = query.body.as_ref() {
            for t in &select.from {
                if named(&t.relation) || t.joins.iter().any(|j| named(&j.relation)) {
                    return ControlFlow::Break(());
                }
            }
        }
        // other query shapes: nothing known, be safe
        if !matches!(query.body.as_ref(), SetExpr::Select(_)) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}
