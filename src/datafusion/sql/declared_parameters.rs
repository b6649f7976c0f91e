//! A parameter a `PREPARE name(types)` declares, written into a column of another type
//! (`PREPARE p(TIMESTAMP) AS INSERT INTO t (ts) VALUES ($1)` with `ts` an Iceberg
//! `timestamp`, microseconds), is cast to the column's type as the same value written
//! directly is.
//!
//! DataFusion 55 types such a parameter by the column it is written into (the
//! `VALUES` row or the `UPDATE` assignment holds `$1` with no cast), and at `EXECUTE`
//! binds the value cast to the declared type (`TIMESTAMP`: nanoseconds) in its place:
//! the rows then held a value of the declared type. An `INSERT` of a nanosecond
//! `TIMESTAMP` into a microsecond column was refused ("does not cast losslessly"), and a
//! zone-less `TIMESTAMP` assigned to a `timestamptz` column was written as a UTC
//! wall-clock time whatever the session's zone (the analyzer rules
//! `time_narrowing` and `zoned_writes` see only the casts DataFusion puts on written
//! values). Each such parameter of the written values is now
//! `CAST($n AS <column type>)`, `$n` of its declared type, so `EXECUTE` binds the value
//! as declared and the cast (floored where it narrows a time unit, read in the session's
//! zone) makes it the column's,
//! as for `INSERT … VALUES (TIMESTAMP '…')`. Parameters elsewhere (conditions) keep
//! DataFusion's typing, which type coercion completes at `EXECUTE`.

use datafusion::arrow::datatypes::FieldRef;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DFSchema, Result as DFResult};
use datafusion::logical_expr::expr::Placeholder;
use datafusion::logical_expr::{Cast, Expr, LogicalPlan};

use crate::datafusion::time_narrowing::floor_narrowing_cast;
use crate::datafusion::written_values::map_written_values;

/// `plan` (a prepared statement's input) with each parameter it writes into a column
/// whose type is not the one `declared` gives it (`$1` is `declared[0]`) cast from its
/// declared type to the column's (see the module docs); unchanged when `declared` is
/// empty (no types declared: DataFusion's typing is the column's).
///
/// Errors: DataFusion's, when the plan's written values do not resolve.
pub(super) fn cast_declared(plan: LogicalPlan, declared: &[FieldRef]) -> DFResult<LogicalPlan> {
    if declared.is_empty() {
        return Ok(plan);
    }
    // the declared field of parameter `id` when the plan types it otherwise
    let redeclared = |id: &str, field: &Option<FieldRef>| -> Option<Expr> {
        let wanted = id
            .strip_prefix('$')
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| declared.get(i.checked_sub(1)?))?;
        if field.as_ref().map(|f| f.data_type()) == Some(wanted.data_type()) {
            return None;
        }
        Some(Expr::Placeholder(Placeholder::new_with_field(
            id.to_string(),
            Some(wanted.clone()),
        )))
    };
    let rewrite = |expr: Expr, schema: &DFSchema| {
        expr.transform_down(|e| {
            // the column's type: the cast DataFusion put on the parameter (a parameter
            // written into several columns is typed by one of them and cast to the
            // others), or the parameter's own type in the plan
            let (cast, field) = match &e {
                Expr::Cast(Cast { expr, field }) => match expr.as_ref() {
                    Expr::Placeholder(p) => match redeclared(&p.id, &p.field) {
                        Some(as_declared) => (as_declared, field.data_type().clone()),
                        None => return Ok(Transformed::no(e)),
                    },
                    _ => return Ok(Transformed::no(e)),
                },
                Expr::Placeholder(p) => match (redeclared(&p.id, &p.field), &p.field) {
                    (Some(as_declared), Some(field)) => (as_declared, field.data_type().clone()),
                    _ => return Ok(Transformed::no(e)),
                },
                _ => return Ok(Transformed::no(e)),
            };
            let cast = Expr::Cast(Cast::new(Box::new(cast), field));
            // floored where it narrows a time unit, as a written value's cast is
            // (`time_narrowing`); its parameter is of the declared type now
            Ok(Transformed::new(
                floor_narrowing_cast(cast, schema)?.data,
                true,
                TreeNodeRecursion::Jump,
            ))
        })
    };
    map_written_values(plan, &rewrite)
}
