//! Filters that DataFusion's statistics pruning would answer wrongly, kept from the
//! Parquet scan (they stay in the filter above it, which evaluates them on every row).
//!
//! DataFusion 55's `PruningPredicate` (row groups, the page index and files, from their
//! min/max statistics) rewrites a comparison of an expression of a column into one of the
//! column itself: `-c op v` into `c op' -v`, and `CAST(c AS t) op v` into a comparison of
//! `CAST(min)` and `CAST(max)`, for any cast between two non-string types. Both assume the
//! expression is monotonic in the column; two are not, and the row groups they prune may
//! hold matching rows:
//!
//! - negation: `-c` of the smallest `int`/`bigint` wraps to itself, so `-i < 0` matches
//!   `i = -2147483648` while `i > 0` does not; and a float NaN negated has its sign bit
//!   set, which Arrow orders below every number;
//! - a cast to `boolean`: `CAST(i AS BOOLEAN)` is true at both ends of `[-1, 1]` and false
//!   at 0 between them, so a row group with those bounds was pruned by
//!   `CAST(i AS BOOLEAN) = false`.
//!
//! The rule: pruning may keep too much, never drop a row.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::expressions::{CastExpr, NegativeExpr, TryCastExpr};
use datafusion::physical_expr::PhysicalExpr;

/// Whether DataFusion's statistics pruning keeps every row group holding a row that
/// `filter` (a physical filter over the scan's columns) selects: false when it holds a
/// negation or a cast to `boolean` anywhere (see the module docs).
pub(crate) fn prunes_soundly(filter: &Arc<dyn PhysicalExpr>) -> bool {
    let mut sound = true;
    // the closure never fails
    let _ = filter.apply(|e| {
        let unsound = e.downcast_ref::<NegativeExpr>().is_some()
            || e.downcast_ref::<CastExpr>()
                .is_some_and(|c| c.cast_type() == &DataType::Boolean)
            || e.downcast_ref::<TryCastExpr>()
                .is_some_and(|c| c.cast_type() == &DataType::Boolean);
        if unsound {
            sound = false;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    sound
}

/// [`prunes_soundly`] for a logical filter (before it is planned): false when it holds a
/// negation or a cast to `boolean`.
pub(crate) fn prunes_soundly_logical(filter: &Expr) -> bool {
    let mut sound = true;
    let _ = filter.apply(|e| {
        let unsound = match e {
            Expr::Negative(_) => true,
            Expr::Cast(c) => c.field.data_type() == &DataType::Boolean,
            Expr::TryCast(c) => c.field.data_type() == &DataType::Boolean,
            _ => false,
        };
        if unsound {
            sound = false;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    sound
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::common::DFSchema;
    use datafusion::logical_expr::{cast, col, lit};
    use datafusion::prelude::SessionContext;

    use super::*;

    #[test]
    fn negations_and_casts_to_boolean_are_kept_from_pruning() {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("b", DataType::Boolean, true),
        ]);
        let df_schema = DFSchema::try_from(schema).unwrap();
        let state = SessionContext::new().state();
        let cases = [
            (col("i").lt(lit(0)), true),
            (cast(col("i"), DataType::Int64).gt(lit(1i64)), true),
            (col("b").eq(lit(true)).and(col("i").is_null()), true),
            (Expr::Negative(Box::new(col("i"))).lt(lit(0)), false),
            (
                col("b").or(Expr::Negative(Box::new(col("i"))).gt_eq(lit(1))),
                false,
            ),
            (cast(col("i"), DataType::Boolean).eq(lit(false)), false),
            (
                !Expr::TryCast(datafusion::logical_expr::TryCast::new(
                    Box::new(col("i")),
                    DataType::Boolean,
                )),
                false,
            ),
        ];
        for (filter, sound) in cases {
            assert_eq!(prunes_soundly_logical(&filter), sound, "{filter}");
            let physical = state
                .create_physical_expr(filter.clone(), &df_schema)
                .unwrap();
            assert_eq!(prunes_soundly(&physical), sound, "{physical}");
        }
    }
}
