//! [`WidenSetOperationTypes`]: a decimal column of a set operation or `VALUES` list
//! whose other side holds a `float`/`double` becomes a `double`, as in Spark.
//!
//! Spark's analyzer rules `WidenSetOperationTypes` and `InConversion` (and the `VALUES`
//! list's `findWiderTypeForDecimal`) widen a decimal combined with a `float` or `double` to
//! `double` (`TypeCoercion.findWiderTypeForDecimal`: a fractional type with a decimal is
//! `DoubleType`). DataFusion 55's union coercion (`type_union_coercion`, used by its
//! analyzer's `coerce_union_schema` for `UNION`, by its join key coercion for the joins
//! `INTERSECT` and `EXCEPT` are planned as, and by `LogicalPlanBuilder::values` for
//! `VALUES` lists) prefers decimal: `SELECT 0.5 UNION ALL SELECT CAST(7e-20 AS DOUBLE)`
//! was `Decimal128(30, 15)`, rounding the second row to 0, failing on NaN, infinities and
//! doubles beyond 15 integer digits.
//!
//! The rule runs just before DataFusion's type coercion (which then recomputes the
//! schemas above) and, for each column position where one input is a float and another a
//! decimal:
//! - `UNION [ALL]` (of any number of inputs): the decimal inputs get a projection casting
//!   the column to `Float64`, and the union's own column becomes `Float64`;
//! - `INTERSECT [ALL]` / `EXCEPT [ALL]` (a left semi / anti join keyed on every column of
//!   both sides, pair by pair, by its name): both sides are projected so, and the keys
//!   then compare in double;
//! - `x [NOT] IN (subquery)`: the decimal side (`x`, or the subquery's column through a
//!   projection) becomes a double (DataFusion compared in `Decimal128(30, 15)`: an error
//!   on a NaN row);
//! - `VALUES`: the column becomes `Float64`; DataFusion's builder has already cast each
//!   value to the decimal type, and those casts of floats and decimals are replaced by
//!   casts to `Float64`. A float value the query itself casts to that very decimal type
//!   (`CAST(x AS DECIMAL(30, 15))` next to other decimals) cannot be told from the
//!   builder's cast and becomes a double too. The `VALUES` of an `INSERT` are typed by
//!   the table's columns and left alone.
//!
//! Columns of structs and lists holding decimals are left as DataFusion types them.
//! Installed by [`install_set_operation_rule`] (through
//! [`install_float_literal_rule`](super::install_float_literal_rule)).

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::tree_node::TreeNode;
use datafusion::common::{Column, DFSchema, Result as DFResult};
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::expr::InSubquery;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    Cast, DmlStatement, Expr, ExprSchemable, Join, JoinConstraint, JoinType, LogicalPlan,
    Projection, Subquery, Union, Values, WriteOp,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

/// The rule's name (as listed by the session's analyzer).
pub const WIDEN_SET_OPERATION_TYPES_RULE: &str = "icefloe_widen_set_operation_types";

/// DataFusion's type coercion rule, which this one runs before.
const TYPE_COERCION: &str = "type_coercion";

/// Spark's widening of decimal with float to double in set operations and `VALUES`, as a
/// DataFusion analyzer rule (see the module docs).
#[derive(Debug, Default)]
pub struct WidenSetOperationTypes;

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64)
}

fn is_decimal(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
    )
}

/// The column positions where `schemas` hold a float in one and a decimal in another.
fn mixed_columns(schemas: &[&DFSchema]) -> Vec<usize> {
    let Some(width) = schemas.iter().map(|s| s.fields().len()).min() else {
        return vec![];
    };
    (0..width)
        .filter(|&i| {
            let types = || schemas.iter().map(|s| s.field(i).data_type());
            types().any(is_float) && types().any(is_decimal)
        })
        .collect()
}

/// `plan` under a projection casting its decimal columns at `columns` to `Float64`
/// (names and qualifiers kept), or `plan` itself when none is decimal.
fn doubles_at(plan: Arc<LogicalPlan>, columns: &[usize]) -> DFResult<Arc<LogicalPlan>> {
    let schema = Arc::clone(plan.schema());
    if !columns
        .iter()
        .any(|&i| is_decimal(schema.field(i).data_type()))
    {
        return Ok(plan);
    }
    let exprs = schema
        .iter()
        .enumerate()
        .map(|(i, (qualifier, field))| {
            let column = Expr::Column(Column::from((qualifier, field)));
            match columns.contains(&i) && is_decimal(field.data_type()) {
                true => Expr::Cast(Cast::new(Box::new(column), DataType::Float64))
                    .alias_qualified(qualifier.cloned(), field.name()),
                false => column,
            }
        })
        .collect();
    Ok(Arc::new(LogicalPlan::Projection(Projection::try_new(
        exprs, plan,
    )?)))
}

/// `schema` with the columns at `columns` of type `Float64`.
fn with_doubles(schema: &DFSchema, columns: &[usize]) -> DFResult<DFSchema> {
    let fields = schema
        .iter()
        .enumerate()
        .map(|(i, (qualifier, field))| {
            let field = match columns.contains(&i) {
                true => Arc::new(field.as_ref().clone().with_data_type(DataType::Float64)),
                false => Arc::clone(field),
            };
            (qualifier.cloned(), field)
        })
        .collect();
    DFSchema::new_with_metadata(fields, schema.metadata().clone())?
        .with_functional_dependencies(schema.functional_dependencies().clone())
}

fn union(union: Union) -> DFResult<Transformed<LogicalPlan>> {
    let inputs: Vec<&DFSchema> = union.inputs.iter().map(|p| p.schema().as_ref()).collect();
    let width = union.schema.fields().len();
    if inputs.iter().any(|s| s.fields().len() != width) {
        // DataFusion's coercion reports it
        return Ok(Transformed::no(LogicalPlan::Union(union)));
    }
    // the union's own schema (the first input's types when it was built) is where
    // DataFusion's coercion starts from: a decimal there that an inner union widened
    let columns: Vec<usize> = (0..width)
        .filter(|&i| {
            let types = || inputs.iter().map(|s| s.field(i).data_type());
            types().any(is_float)
                && (types().any(is_decimal) || is_decimal(union.schema.field(i).data_type()))
        })
        .collect();
    if columns.is_empty() {
        return Ok(Transformed::no(LogicalPlan::Union(union)));
    }
    let inputs = union
        .inputs
        .into_iter()
        .map(|p| doubles_at(p, &columns))
        .collect::<DFResult<Vec<_>>>()?;
    let schema = Arc::new(with_doubles(&union.schema, &columns)?);
    Ok(Transformed::yes(LogicalPlan::Union(Union {
        inputs,
        schema,
    })))
}

/// Whether `join` is how DataFusion plans `INTERSECT` / `EXCEPT`: a left semi or anti
/// join on `ON` keys pairing every column of both sides by position, by name.
fn is_set_operation(join: &Join) -> bool {
    let (left, right) = (join.left.schema(), join.right.schema());
    matches!(join.join_type, JoinType::LeftSemi | JoinType::LeftAnti)
        && join.join_constraint == JoinConstraint::On
        && join.filter.is_none()
        && join.on.len() == left.fields().len()
        && join.on.len() == right.fields().len()
        && join.on.iter().enumerate().all(|(i, (l, r))| {
            matches!(l, Expr::Column(c) if c.name == *left.field(i).name())
                && matches!(r, Expr::Column(c) if c.name == *right.field(i).name())
        })
}

fn set_operation(join: Join) -> DFResult<Transformed<LogicalPlan>> {
    if !is_set_operation(&join) {
        return Ok(Transformed::no(LogicalPlan::Join(join)));
    }
    let columns = mixed_columns(&[join.left.schema(), join.right.schema()]);
    if columns.is_empty() {
        return Ok(Transformed::no(LogicalPlan::Join(join)));
    }
    let left = doubles_at(Arc::clone(&join.left), &columns)?;
    let right = doubles_at(Arc::clone(&join.right), &columns)?;
    let join = LogicalPlan::Join(Join {
        left,
        right,
        ..join
    });
    Ok(Transformed::yes(join.recompute_schema()?))
}

/// `CAST(x AS <decimal>)` of the builder: `x` when it is a float or a decimal.
fn uncast(expr: Expr, schema: &DFSchema) -> Expr {
    match expr {
        Expr::Cast(Cast { expr: inner, field })
            if is_decimal(field.data_type())
                && inner
                    .get_type(schema)
                    .is_ok_and(|t| is_float(&t) || is_decimal(&t)) =>
        {
            *inner
        }
        other => other,
    }
}

fn values(values: Values) -> DFResult<Transformed<LogicalPlan>> {
    let empty = DFSchema::empty();
    // the values' own types, under the builder's casts
    let columns: Vec<usize> = (0..values.schema.fields().len())
        .filter(|&j| {
            is_decimal(values.schema.field(j).data_type())
                && values.values.iter().any(|row| {
                    matches!(&row[j], Expr::Cast(Cast { expr, .. })
                        if expr.get_type(&empty).is_ok_and(|t| is_float(&t)))
                })
        })
        .collect();
    if columns.is_empty() {
        return Ok(Transformed::no(LogicalPlan::Values(values)));
    }
    let rows = values
        .values
        .into_iter()
        .map(|row| {
            row.into_iter()
                .enumerate()
                .map(|(j, value)| match columns.contains(&j) {
                    true => uncast(value, &empty).cast_to(&DataType::Float64, &empty),
                    false => Ok(value),
                })
                .collect::<DFResult<Vec<_>>>()
        })
        .collect::<DFResult<Vec<_>>>()?;
    let schema = Arc::new(with_doubles(&values.schema, &columns)?);
    Ok(Transformed::yes(LogicalPlan::Values(Values {
        schema,
        values: rows,
    })))
}

/// `x [NOT] IN (subquery)` in `plan`'s expressions, one side a float and the other a
/// decimal: the decimal side becomes a double (the subquery's column through a
/// projection), as Spark's `InConversion` widens both sides to their wider type.
fn in_subqueries(plan: LogicalPlan) -> DFResult<Transformed<LogicalPlan>> {
    let mut schema = merge_schema(&plan.inputs());
    // a MERGE's conditions and values read its target too
    if let LogicalPlan::Dml(
        dml @ DmlStatement {
            op: WriteOp::MergeInto(_),
            ..
        },
    ) = &plan
    {
        schema.merge(&DFSchema::try_from_qualified_schema(
            dml.table_name.clone(),
            &dml.target.schema(),
        )?);
    }
    plan.map_expressions(|expr| {
        expr.transform_up(|e| {
            let Expr::InSubquery(InSubquery {
                expr,
                subquery,
                negated,
            }) = e
            else {
                return Ok(Transformed::no(e));
            };
            // a value not typed here (an outer column of a correlated subquery): left to
            // DataFusion
            let Ok(value) = expr.get_type(&schema) else {
                let e = Expr::InSubquery(InSubquery::new(expr, subquery, negated));
                return Ok(Transformed::no(e));
            };
            let listed = subquery.subquery.schema().field(0).data_type().clone();
            let (expr, plan) = match (is_float(&value), is_decimal(&value)) {
                (true, _) if is_decimal(&listed) => {
                    (expr, doubles_at(Arc::clone(&subquery.subquery), &[0])?)
                }
                (_, true) if is_float(&listed) => (
                    Box::new(Expr::Cast(Cast::new(expr, DataType::Float64))),
                    Arc::clone(&subquery.subquery),
                ),
                _ => {
                    let e = Expr::InSubquery(InSubquery::new(expr, subquery, negated));
                    return Ok(Transformed::no(e));
                }
            };
            let subquery = Subquery {
                subquery: plan,
                ..subquery
            };
            Ok(Transformed::yes(Expr::InSubquery(InSubquery::new(
                expr, subquery, negated,
            ))))
        })
    })
}

/// Whether `plan` is an `INSERT … VALUES`: DataFusion types that list by the table's
/// columns (`LogicalPlanBuilder::values_with_schema`), its casts of doubles to a decimal
/// column are the table's.
fn inserts_values(plan: &LogicalPlan) -> bool {
    let LogicalPlan::Dml(dml) = plan else {
        return false;
    };
    if !matches!(dml.op, WriteOp::Insert(_)) {
        return false;
    }
    let mut input = dml.input.as_ref();
    loop {
        match input {
            LogicalPlan::Projection(p) => input = p.input.as_ref(),
            LogicalPlan::SubqueryAlias(a) => input = a.input.as_ref(),
            LogicalPlan::Values(_) => return true,
            _ => return false,
        }
    }
}

impl AnalyzerRule for WidenSetOperationTypes {
    fn name(&self) -> &str {
        WIDEN_SET_OPERATION_TYPES_RULE
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        if inserts_values(&plan) {
            return Ok(plan);
        }
        widened(plan).map(|t| t.data)
    }
}

/// `plan` with its inputs and subqueries widened first (their schemas recomputed above
/// a change, so an outer union sees the types of an inner one), then itself.
fn widened(plan: LogicalPlan) -> DFResult<Transformed<LogicalPlan>> {
    let inputs = plan.map_children(widened)?;
    let subqueries = inputs.data.map_subqueries(widened)?;
    let below = inputs.transformed || subqueries.transformed;
    let plan = match below {
        true => subqueries.data.recompute_schema()?,
        false => subqueries.data,
    };
    let node = match plan {
        LogicalPlan::Union(u) => union(u),
        LogicalPlan::Join(j) => set_operation(j),
        LogicalPlan::Values(v) => values(v),
        other => in_subqueries(other),
    }?;
    Ok(Transformed::new_transformed(
        node.data,
        below || node.transformed,
    ))
}

/// Put [`WidenSetOperationTypes`] in `ctx`'s analyzer just before DataFusion's type
/// coercion (at the start when that is absent), once: a second call does nothing. The
/// session state is rebuilt with the new list of rules (DataFusion adds analyzer rules at
/// the end only); its id, functions, rewrites, catalogs and options stay.
pub(crate) fn install_set_operation_rule(ctx: &SessionContext) {
    let state = ctx.state_ref();
    let mut state = state.write();
    let analyzer = state.analyzer().clone();
    if analyzer
        .rules
        .iter()
        .any(|r| r.name() == WIDEN_SET_OPERATION_TYPES_RULE)
    {
        return;
    }
    let mut rules = analyzer.rules;
    let at = rules
        .iter()
        .position(|r| r.name() == TYPE_COERCION)
        .unwrap_or(0);
    rules.insert(at, Arc::new(WidenSetOperationTypes));
    let mut rebuilt = SessionStateBuilder::new_from_existing(state.clone())
        .with_session_id(state.session_id().to_string())
        .with_analyzer_rules(rules)
        .build();
    for rewrite in analyzer.function_rewrites {
        // `register_function_rewrite` never fails for a SessionState
        let _ = datafusion::execution::FunctionRegistry::register_function_rewrite(
            &mut rebuilt,
            rewrite,
        );
    }
    *state = rebuilt;
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::util::pretty::pretty_format_batches;

    use super::*;

    /// A session reading `0.5` as a decimal, as icefloe's SQL does.
    fn session() -> SessionContext {
        let ctx = SessionContext::new();
        crate::datafusion::use_decimal_literals(&ctx);
        crate::datafusion::install_float_literal_rule(&ctx);
        ctx
    }

    async fn text(ctx: &SessionContext, sql: &str) -> String {
        let batches = ctx.sql(sql).await.expect(sql).collect().await.expect(sql);
        pretty_format_batches(&batches)
            .expect("format")
            .to_string()
            .replace(' ', "")
    }

    /// Installed once, just before DataFusion's type coercion, the session's other
    /// rewrites kept.
    #[test]
    fn installed_once_before_type_coercion() {
        let ctx = session();
        let state = ctx.state();
        let names: Vec<&str> = state.analyzer().rules.iter().map(|r| r.name()).collect();
        let at = |name: &str| names.iter().position(|n| *n == name);
        assert_eq!(
            names
                .iter()
                .filter(|n| **n == WIDEN_SET_OPERATION_TYPES_RULE)
                .count(),
            1
        );
        assert_eq!(
            at(WIDEN_SET_OPERATION_TYPES_RULE).map(|i| i + 1),
            at(TYPE_COERCION)
        );
        assert_eq!(
            state
                .analyzer()
                .function_rewrites
                .iter()
                .filter(
                    |r| r.name() == crate::datafusion::float_literals::FLOAT_DECIMAL_LITERALS_RULE
                )
                .count(),
            1
        );
    }

    /// Spark's rows and types: a decimal with a double (or float) is a double, in `UNION
    /// [ALL]` (either side first, three inputs), `INTERSECT`, `EXCEPT` and `VALUES`: no
    /// rounding to 15 digits, NaN, infinities and large values kept. Decimals among
    /// themselves stay decimal.
    #[tokio::test]
    async fn decimals_with_floats_widen_to_double() {
        let ctx = session();
        let neg_inf = "CAST('-inf' AS DOUBLE)";
        for (sql, expected) in [
            (
                "SELECT k, arrow_typeof(k) AS t FROM (SELECT 0.5 AS k UNION ALL \
                 SELECT CAST(7e-20 AS DOUBLE)) ORDER BY k"
                    .to_string(),
                "|7e-20|Float64|\n|0.5|Float64|",
            ),
            (
                format!(
                    "SELECT k FROM (SELECT CAST('NaN' AS DOUBLE) AS k UNION ALL SELECT 0.0 \
                     UNION ALL SELECT {neg_inf} UNION ALL \
                     SELECT CAST(123456789012345678.0 AS DOUBLE)) ORDER BY k"
                ),
                "|-inf|\n|0.0|\n|1.2345678901234568e17|\n|NaN|",
            ),
            (
                "SELECT k, arrow_typeof(k) AS t FROM (SELECT 0.5 AS k UNION \
                 SELECT CAST(0.5 AS FLOAT))"
                    .to_string(),
                "|0.5|Float64|\n+",
            ),
            (
                "SELECT k, arrow_typeof(k) AS t FROM (SELECT 0.5 AS k INTERSECT \
                 SELECT CAST(0.5 AS DOUBLE))"
                    .to_string(),
                "|0.5|Float64|",
            ),
            (
                "SELECT k, arrow_typeof(k) AS t FROM (SELECT 0.5 AS k EXCEPT \
                 SELECT CAST('NaN' AS DOUBLE))"
                    .to_string(),
                "|0.5|Float64|",
            ),
            (
                "SELECT count(*) AS n FROM (SELECT CAST('NaN' AS DOUBLE) AS k \
                 INTERSECT ALL SELECT 0.5)"
                    .to_string(),
                "|0|",
            ),
            (
                "SELECT k, arrow_typeof(k) AS t FROM (VALUES (0.5), (CAST(7e-20 AS DOUBLE)), \
                 (CAST('NaN' AS DOUBLE))) AS v(k)"
                    .to_string(),
                "|0.5|Float64|\n|7e-20|Float64|\n|NaN|Float64|",
            ),
            (
                "SELECT arrow_typeof(k) AS t FROM (SELECT 0.5 AS k UNION ALL SELECT 1.25) \
                 LIMIT 1"
                    .to_string(),
                "|Decimal128(3,2)|",
            ),
            // a union inside another, under an alias
            (
                "SELECT k, arrow_typeof(k) AS t FROM (SELECT * FROM (SELECT 0.5 AS k \
                 UNION ALL SELECT CAST('inf' AS DOUBLE)) a UNION SELECT 1.25) ORDER BY k"
                    .to_string(),
                "|0.5|Float64|\n|1.25|Float64|\n|inf|Float64|",
            ),
            (
                "SELECT arrow_typeof(0.5) AS t".to_string(),
                "|Decimal128(1,1)|",
            ),
        ] {
            let got = text(&ctx, &sql).await;
            assert!(got.contains(expected), "{sql}: {got}");
        }
    }
}
