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
use datafusion::common::tree_node::{Transformed, TreeNode};
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
    let rewrite = |expr: Expr, schema: &DFSchema| {
        expr.transform_down(|e| match e {
            Expr::Placeholder(Placeholder {
                id,
                field: Some(field),
            }) => {
                let wanted = id
                    .strip_prefix('$')
                    .and_then(|i| i.parse::<usize>().ok())
                    .and_then(|i| declared.get(i.checked_sub(1)?));
                match wanted {
                    Some(wanted) if wanted.data_type() != field.data_type() => {
                        let as_declared = Expr::Placeholder(Placeholder::new_with_field(
                            id,
                            Some(wanted.clone()),
                        ));
                        let cast =
                            Expr::Cast(Cast::new(Box::new(as_declared), field.data_type().clone()));
                        // floored where it narrows a time unit, as a written value's
                        // cast is (`time_narrowing`)
                        Ok(Transformed::yes(floor_narrowing_cast(cast, schema)?.data))
                    }
                    _ => Ok(Transformed::no(Expr::Placeholder(Placeholder {
                        id,
                        field: Some(field),
                    }))),
                }
            }
            other => Ok(Transformed::no(other)),
        })
    };
    map_written_values(plan, &rewrite)
}
