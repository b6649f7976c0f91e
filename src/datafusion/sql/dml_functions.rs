//! Aggregate and window functions where a row-level statement reads one row at a time:
//! `UPDATE … SET v = sum(v)`, `DELETE … WHERE v > avg(v)`, `SET v = row_number() OVER
//! (…)`, `MERGE … WHEN MATCHED AND sum(t.v) > 0`. Spark refuses them in these places;
//! DataFusion 55 got as far as its physical planner and printed the whole expression's
//! debug form ("Physical plan does not support logical expression AggregateFunction(…)").
//! [`check_row_functions`] refuses them first, naming the function and where it is. Inside
//! a subquery they are the subquery's own (`SET v = (SELECT sum(v) FROM u)`) and fine.

use std::ops::ControlFlow;

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{Expr, ObjectNamePart, Query, Visit, Visitor};

use crate::error::{Error, Result};

/// Refuse an aggregate or window function call in `exprs` outside subqueries; `at` says
/// where they are (`"in UPDATE SET or WHERE of 'ns.t'"`).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): naming the function and `at`.
pub(super) fn check_row_functions<'a>(
    ctx: &SessionContext,
    exprs: impl IntoIterator<Item = &'a Expr>,
    at: &str,
) -> Result<()> {
    let state = ctx.state();
    let aggregates = state.aggregate_functions();
    let mut finder = Finder {
        depth: 0,
        is_aggregate: &|name: &str| aggregates.contains_key(name),
    };
    for expr in exprs {
        if let ControlFlow::Break((name, window)) = expr.visit(&mut finder) {
            let (kind, instead) = match window {
                true => (
                    "window",
                    "compute it in a query and MERGE its rows".to_string(),
                ),
                false => (
                    "aggregate",
                    format!("compute it in a subquery, e.g. (SELECT {name}(…) FROM …)"),
                ),
            };
            return Err(Error::invalid_argument(format!(
                "{kind} function '{name}' {at}: a row-level statement computes each row's \
                 values from that row alone ({instead})"
            )));
        }
    }
    Ok(())
}

/// Breaks at the first aggregate or window call outside subqueries: its name, and whether
/// it is a window call.
struct Finder<'a> {
    depth: usize,
    is_aggregate: &'a dyn Fn(&str) -> bool,
}

impl Visitor for Finder<'_> {
    type Break = (String, bool);

    fn pre_visit_query(&mut self, _query: &Query) -> ControlFlow<Self::Break> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<Self::Break> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<Self::Break> {
        let Expr::Function(f) = expr else {
            return ControlFlow::Continue(());
        };
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        let name = match f.name.0.last() {
            Some(ObjectNamePart::Identifier(ident)) => ident.value.to_lowercase(),
            _ => return ControlFlow::Continue(()),
        };
        if f.over.is_some() {
            return ControlFlow::Break((name, true));
        }
        if (self.is_aggregate)(&name) {
            return ControlFlow::Break((name, false));
        }
        ControlFlow::Continue(())
    }
}
