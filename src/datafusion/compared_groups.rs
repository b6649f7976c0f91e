//! The groups of values SQL compares with each other, for the analyzer's expression
//! rewrites that make such values comparable before DataFusion's type coercion
//! ([`float_literals`](super::float_literals), [`uuid_literals`](super::uuid_literals),
//! [`time_literals`](super::time_literals)).

use std::sync::Arc;

use datafusion::common::Result as DFResult;
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};
use datafusion::prelude::SessionContext;

/// `op` compares its two sides: `=`, `<>`, `<`, `<=`, `>`, `>=`, `IS [NOT] DISTINCT FROM`.
pub(crate) fn is_comparison(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq
            | Operator::NotEq
            | Operator::Lt
            | Operator::LtEq
            | Operator::Gt
            | Operator::GtEq
            | Operator::IsDistinctFrom
            | Operator::IsNotDistinctFrom
    )
}

/// Call `unify` on the values `expr` compares with each other, when it is a comparison
/// (both sides), a `BETWEEN` (value, low, high) or an `IN` list (value and list); `None`
/// for any other expression. `unify` returns whether it changed a value.
///
/// Errors: `unify`'s.
pub(crate) fn unify_compared(
    expr: &mut Expr,
    mut unify: impl FnMut(&mut [&mut Expr]) -> DFResult<bool>,
) -> DFResult<Option<bool>> {
    Ok(Some(match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_comparison(*op) => {
            unify(&mut [left.as_mut(), right.as_mut()])?
        }
        Expr::Between(Between {
            expr: value,
            low,
            high,
            ..
        }) => unify(&mut [value.as_mut(), low.as_mut(), high.as_mut()])?,
        Expr::InList(InList {
            expr: value, list, ..
        }) => {
            let mut group: Vec<&mut Expr> = vec![value.as_mut()];
            group.extend(list.iter_mut());
            unify(&mut group)?
        }
        _ => return Ok(None),
    }))
}

/// Add `rewrite` to `ctx`'s analyzer unless a rewrite of its name is there already (so a
/// second install does nothing).
pub(crate) fn install_once(ctx: &SessionContext, rewrite: Arc<dyn FunctionRewrite + Send + Sync>) {
    let present = ctx
        .state()
        .analyzer()
        .function_rewrites()
        .iter()
        .any(|r| r.name() == rewrite.name());
    if !present {
        // `register_function_rewrite` never fails for a SessionState
        let _ = datafusion::execution::FunctionRegistry::register_function_rewrite(
            &mut *ctx.state_ref().write(),
            rewrite,
        );
    }
}
