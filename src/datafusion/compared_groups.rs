//! The groups of values SQL compares with each other, for the analyzer's expression
//! rewrites that make such values comparable before DataFusion's type coercion
//! ([`float_literals`](super::float_literals), [`uuid_literals`](super::uuid_literals),
//! [`time_literals`](super::time_literals)).

use std::sync::Arc;

use datafusion::common::{DFSchema, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::InList;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::planner::{ExprPlanner, PlannerResult, RawBinaryExpr};
use datafusion::logical_expr::{Between, BinaryExpr, Cast, Expr, Operator, TryCast};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::BinaryOperator;

/// The value of `expr` when it is a literal or a chain of casts of one (each cast
/// applied to the value); `None` otherwise or when a cast fails.
pub(crate) fn constant(expr: &Expr) -> Option<ScalarValue> {
    match expr {
        Expr::Literal(value, _) => Some(value.clone()),
        Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) => {
            constant(expr)?.cast_to(field.data_type()).ok()
        }
        _ => None,
    }
}

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

/// A rewrite of the values a comparison compares, as an analyzer rewrite gives them to
/// it (`Ok(true)` when it changed them).
pub(crate) type UnifyCompared = fn(&mut [&mut Expr], &DFSchema) -> DFResult<bool>;

/// An [`ExprPlanner`] applying an analyzer rewrite's [`UnifyCompared`] to each binary
/// comparison (`=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`) as DataFusion's SQL planner builds
/// it: the planner types the operand of `NOT` at once, before any analyzer rule runs, so
/// `NOT (u = '550e8400-…')` on a `uuid` column and `NOT (tm > TIME '11:00:00')` on a
/// microsecond `time` column failed ("Cannot infer common argument type for comparison
/// operation …").
pub(crate) struct ComparisonPlanner {
    /// The analyzer rewrite's name.
    pub(crate) name: &'static str,
    pub(crate) unify: UnifyCompared,
}

impl std::fmt::Debug for ComparisonPlanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ComparisonPlanner({})", self.name)
    }
}

impl ExprPlanner for ComparisonPlanner {
    fn plan_binary_op(
        &self,
        mut expr: RawBinaryExpr,
        schema: &DFSchema,
    ) -> DFResult<PlannerResult<RawBinaryExpr>> {
        use BinaryOperator as B;
        if matches!(
            expr.op,
            B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship
        ) {
            (self.unify)(&mut [&mut expr.left, &mut expr.right], schema)?;
        }
        Ok(PlannerResult::Original(expr))
    }
}

/// Add `planner` to `ctx`'s expression planners, once (a second one of its name is not
/// added).
pub(crate) fn install_planner_once(ctx: &SessionContext, planner: ComparisonPlanner) {
    let state = ctx.state_ref();
    let mut state = state.write();
    let name = format!("{planner:?}");
    if !state
        .expr_planners()
        .iter()
        .any(|p| format!("{p:?}") == name)
    {
        // `register_expr_planner` never fails for a SessionState
        let _ = datafusion::execution::FunctionRegistry::register_expr_planner(
            &mut *state,
            Arc::new(planner),
        );
    }
}
