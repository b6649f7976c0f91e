//! Spark's NaN semantics for the rows a scan returns: every NaN read from a data file
//! (at any depth: struct fields, list elements, map keys and values) becomes the one
//! canonical NaN (positive, quiet: `f32::NAN` / `f64::NAN`) before anything above the
//! scan compares, sorts or groups it.
//!
//! Arrow, and so DataFusion, compares floats in IEEE 754 total order, where a NaN with its
//! sign bit set sorts below every number and differs from the positive NaN: `-NaN < 0.0`
//! is true and `-NaN = 'NaN'` false. x86 computes exactly that NaN for `0.0 / 0.0` and
//! `inf - inf`, so tables written by native engines (DataFusion, icefloe itself) hold it.
//! Spark treats every NaN as one value, greater than every other value (its SQL reference,
//! "NaN Semantics"), and so do the Iceberg rules the manifest pruning applies (NaNs are
//! counted apart from the bounds, which hold no NaN). With a single NaN left, Arrow's total
//! order is Spark's. Without this, whether a `-NaN` row matched `f < 0.0` depended on the
//! other values of its file, which decided whether the file was pruned.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, FieldRef, Schema as ArrowSchema};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{Result as DFResult, ScalarValue};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;

use crate::nan::canonical_nans;

/// `input` with every NaN in it made the canonical NaN; any type (values without floats
/// pass unchanged).
#[derive(Debug, Clone)]
pub(crate) struct CanonicalNanExpr {
    input: Arc<dyn PhysicalExpr>,
}

impl CanonicalNanExpr {
    /// What a plan codec sends for this expression (its input travels as its one child).
    #[cfg(any(feature = "distributed", feature = "ballista"))]
    pub(crate) const ENCODED: &'static [u8] = b"icefloe.canonical_nan";

    pub(crate) fn new(input: Arc<dyn PhysicalExpr>) -> Self {
        Self { input }
    }
}

impl PartialEq for CanonicalNanExpr {
    fn eq(&self, other: &Self) -> bool {
        self.input.as_ref() == other.input.as_ref()
    }
}

impl Eq for CanonicalNanExpr {}

impl Hash for CanonicalNanExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        "canonical_nan".hash(state);
        self.input.as_ref().hash(state);
    }
}

impl fmt::Display for CanonicalNanExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "canonical_nan({})", self.input)
    }
}

impl PhysicalExpr for CanonicalNanExpr {
    fn data_type(&self, input_schema: &ArrowSchema) -> DFResult<DataType> {
        self.input.data_type(input_schema)
    }

    fn nullable(&self, input_schema: &ArrowSchema) -> DFResult<bool> {
        self.input.nullable(input_schema)
    }

    /// The input's field, its name and metadata (field ids) kept.
    fn return_field(&self, input_schema: &ArrowSchema) -> DFResult<FieldRef> {
        self.input.return_field(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> DFResult<ColumnarValue> {
        Ok(match self.input.evaluate(batch)? {
            ColumnarValue::Array(array) => {
                ColumnarValue::Array(canonical_nans(&array)?.unwrap_or(array))
            }
            ColumnarValue::Scalar(scalar) => match canonical_nans(&scalar.to_array()?)? {
                Some(array) => ColumnarValue::Scalar(ScalarValue::try_from_array(&array, 0)?),
                None => ColumnarValue::Scalar(scalar),
            },
        })
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> DFResult<Arc<dyn PhysicalExpr>> {
        let input = children.pop().unwrap_or_else(|| Arc::clone(&self.input));
        Ok(Arc::new(Self { input }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "canonical_nan(")?;
        self.input.fmt_sql(f)?;
        write!(f, ")")
    }
}

/// `expr` with each struct field access over a [`CanonicalNanExpr`] turned inside out:
/// `get_field(canonical_nan(s), 'a', …)` becomes `canonical_nan(get_field(s, 'a', …))`,
/// the same value (a field of the canonicalized struct is the canonicalized field).
///
/// DataFusion's projection and filter pushdown merge the query's `s.a` into the scan's
/// `canonical_nan(s)`, and the per-file column mapping (`expr_adapter`) recognises a field
/// access only directly over a column: there a field renamed since the file was written
/// is read by its name in the file, and a field the file lacks reads as null. Between the
/// two, `canonical_nan` made `SELECT s.a` fail on such files ("Field a not found in
/// struct").
///
/// Errors: DataFusion's, rebuilding an expression.
pub(crate) fn field_access_inside(expr: Arc<dyn PhysicalExpr>) -> DFResult<Arc<dyn PhysicalExpr>> {
    expr.transform_down(|e| {
        let Some(access) = e.downcast_ref::<ScalarFunctionExpr>() else {
            return Ok(Transformed::no(e));
        };
        if access.name() != "get_field" {
            return Ok(Transformed::no(e));
        }
        let args = access.args();
        let Some(nan) = args
            .first()
            .and_then(|a| a.downcast_ref::<CanonicalNanExpr>())
        else {
            return Ok(Transformed::no(e));
        };
        let mut inner_args = vec![Arc::clone(&nan.input)];
        inner_args.extend(args[1..].iter().cloned());
        let inner = Arc::clone(&e).with_new_children(inner_args)?;
        let hoisted: Arc<dyn PhysicalExpr> = Arc::new(CanonicalNanExpr::new(inner));
        Ok(Transformed::yes(hoisted))
    })
    .data()
}

/// `plan` with the columns named in `columns` passed through [`CanonicalNanExpr`], every
/// column kept in its place (same names, types and metadata). `plan` itself when no
/// column is named.
///
/// Errors: DataFusion's, building the projection.
pub(crate) fn canonical_nan_projection(
    plan: Arc<dyn ExecutionPlan>,
    columns: &[String],
) -> DFResult<Arc<dyn ExecutionPlan>> {
    let schema = plan.schema();
    if !schema
        .fields()
        .iter()
        .any(|f| columns.iter().any(|c| c == f.name()))
    {
        return Ok(plan);
    }
    let exprs: Vec<(Arc<dyn PhysicalExpr>, String)> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new(f.name(), i));
            let expr: Arc<dyn PhysicalExpr> = match columns.iter().any(|c| c == f.name()) {
                true => Arc::new(CanonicalNanExpr::new(column)),
                false => column,
            };
            (expr, f.name().clone())
        })
        .collect();
    Ok(Arc::new(ProjectionExec::try_new(exprs, plan)?))
}
