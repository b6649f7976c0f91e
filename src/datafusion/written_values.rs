//! The values an `INSERT`, `UPDATE` or `MERGE` writes, as DataFusion 55 plans them: one
//! expression rewrite applied to each of them, for the analyzer rules that change how
//! those values are cast to the table's column types
//! ([`time_narrowing`](super::time_narrowing), [`zoned_writes`](super::zoned_writes)).
//!
//! DataFusion's `INSERT` and `UPDATE` planners cast the rows they write to the table's
//! column types: `Dml ← Projection (CAST(… AS <column type>))` over the query, and casts in
//! the rows of each `Values` node (each `VALUES` of an `INSERT`, a branch of a `UNION`
//! too, is planned with the table's column types). A `MERGE`'s `UPDATE SET` and `INSERT
//! VALUES` values are cast by DataFusion's type coercion, over the source's and the
//! target's columns.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, Result as DFResult};
use datafusion::logical_expr::dml::{MergeIntoAction, MergeIntoOp};
use datafusion::logical_expr::expr::Alias;
use datafusion::logical_expr::{Cast, Expr, LogicalPlan, TryCast, WriteOp};

/// A rewrite of one written value (over the schema of the columns it reads).
pub(crate) type WrittenValueRewrite<'a> =
    &'a dyn Fn(Expr, &DFSchema) -> DFResult<Transformed<Expr>>;

/// `expr` (a written value: a cast to its column's type, under its aliases) with the
/// cast's input replaced by `replace(input, target type)` where that gives one;
/// unchanged otherwise (also when `expr` is no cast).
///
/// Errors: `replace`'s.
pub(crate) fn replace_cast_input(
    expr: Expr,
    replace: &dyn Fn(&Expr, &DataType) -> DFResult<Option<Expr>>,
) -> DFResult<Transformed<Expr>> {
    Ok(match expr {
        Expr::Alias(Alias {
            expr,
            relation,
            name,
            metadata,
        }) => replace_cast_input(*expr, replace)?.update_data(|expr| {
            Expr::Alias(Alias {
                expr: Box::new(expr),
                relation,
                name,
                metadata,
            })
        }),
        Expr::Cast(Cast { expr, field }) => match replace(&expr, field.data_type())? {
            Some(input) => {
                Transformed::yes(Expr::Cast(Cast::new_from_field(Box::new(input), field)))
            }
            None => Transformed::no(Expr::Cast(Cast { expr, field })),
        },
        Expr::TryCast(TryCast { expr, field }) => match replace(&expr, field.data_type())? {
            Some(input) => Transformed::yes(Expr::TryCast(TryCast {
                expr: Box::new(input),
                field,
            })),
            None => Transformed::no(Expr::TryCast(TryCast { expr, field })),
        },
        other => Transformed::no(other),
    })
}

/// `plan` with `rewrite` applied to every value each of its `INSERT`, `UPDATE` and
/// `MERGE` nodes writes (see the module docs); other plans are returned unchanged.
///
/// Errors: `rewrite`'s; DataFusion's, when the target's schema does not qualify.
pub(crate) fn map_written_values(
    plan: LogicalPlan,
    rewrite: WrittenValueRewrite<'_>,
) -> DFResult<LogicalPlan> {
    plan.transform_down(|node| match node {
        LogicalPlan::Dml(mut dml) if matches!(dml.op, WriteOp::Insert(_) | WriteOp::Update) => {
            let input = map_rows(Arc::unwrap_or_clone(dml.input), rewrite)?;
            let transformed = input.transformed;
            dml.input = Arc::new(input.data);
            Ok(Transformed::new(
                LogicalPlan::Dml(dml),
                transformed,
                TreeNodeRecursion::Jump,
            ))
        }
        LogicalPlan::Dml(mut dml) if matches!(dml.op, WriteOp::MergeInto(_)) => {
            let WriteOp::MergeInto(merge) = dml.op else {
                return Ok(Transformed::no(LogicalPlan::Dml(dml)));
            };
            // the values read the source's and the target's columns
            let mut schema = dml.input.schema().as_ref().clone();
            schema.merge(&DFSchema::try_from_qualified_schema(
                dml.table_name.clone(),
                &dml.target.schema(),
            )?);
            let merge = map_merge_values(*merge, &schema, rewrite)?;
            dml.op = WriteOp::MergeInto(Box::new(merge.data));
            Ok(Transformed::new(
                LogicalPlan::Dml(dml),
                merge.transformed,
                TreeNodeRecursion::Jump,
            ))
        }
        other => Ok(Transformed::no(other)),
    })
    .map(|t| t.data)
}

/// The rows a `Dml` node writes, rewritten: those of the top `Projection` and those in
/// the rows of every `Values` node in it.
fn map_rows(
    input: LogicalPlan,
    rewrite: WrittenValueRewrite<'_>,
) -> DFResult<Transformed<LogicalPlan>> {
    let empty = DFSchema::empty();
    let input = input.transform_down(|plan| {
        if !matches!(plan, LogicalPlan::Values(_)) {
            return Ok(Transformed::no(plan));
        }
        plan.map_expressions(|e| rewrite(e, &empty))
    })?;
    input.transform_data(|plan| {
        let LogicalPlan::Projection(projection) = plan else {
            return Ok(Transformed::no(plan));
        };
        let schema = Arc::clone(projection.input.schema());
        LogicalPlan::Projection(projection).map_expressions(|e| rewrite(e, &schema))
    })
}

/// A `MERGE`'s `UPDATE SET` and `INSERT VALUES` values (over `schema`), rewritten.
fn map_merge_values(
    mut merge: MergeIntoOp,
    schema: &DFSchema,
    rewrite: WrittenValueRewrite<'_>,
) -> DFResult<Transformed<MergeIntoOp>> {
    let mut transformed = false;
    for clause in &mut merge.clauses {
        let values: Vec<&mut Expr> = match &mut clause.action {
            MergeIntoAction::Update(assignments) => {
                assignments.iter_mut().map(|(_, v)| v).collect()
            }
            MergeIntoAction::Insert { values, .. } => values.iter_mut().collect(),
            MergeIntoAction::Delete => vec![],
        };
        for value in values {
            let rewritten = rewrite(value.clone(), schema)?;
            transformed |= rewritten.transformed;
            *value = rewritten.data;
        }
    }
    Ok(Transformed::new_transformed(merge, transformed))
}
