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

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, FieldRef, Schema as ArrowSchema};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{exec_err, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;

use crate::nan::canonical_nans;

/// The name of the scalar function (also how plan codecs send it: by name, resolved in
/// worker sessions, see `codec::UDFS_BY_NAME`).
pub const CANONICAL_NAN: &str = "icefloe_canonical_nan";

/// `icefloe_canonical_nan(value)`: `value` with every NaN in it made the canonical NaN
/// ([`crate::nan::canonical_nans`]), at any depth; any type (values without floats pass
/// unchanged). Its result field is the argument's own: name, type, nullability and
/// metadata (the column's `PARQUET:field_id`), so a scan's schema is the same with it.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CanonicalNan {
    signature: Signature,
}

impl Default for CanonicalNan {
    fn default() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

/// The [`CanonicalNan`] function.
pub fn canonical_nan_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(CanonicalNan::default()))
}

impl ScalarUDFImpl for CanonicalNan {
    fn name(&self) -> &str {
        CANONICAL_NAN
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> DFResult<DataType> {
        match arg_types {
            [value] => Ok(value.clone()),
            _ => exec_err!("{CANONICAL_NAN} takes one value, not {arg_types:?}"),
        }
    }

    /// The argument's field, its name and metadata (field ids) kept.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DFResult<FieldRef> {
        match args.arg_fields {
            [value] => Ok(Arc::clone(value)),
            _ => exec_err!("{CANONICAL_NAN} takes one value"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        match args.args.as_slice() {
            [ColumnarValue::Array(array)] => Ok(ColumnarValue::Array(
                canonical_nans(array)?.unwrap_or_else(|| Arc::clone(array)),
            )),
            [ColumnarValue::Scalar(scalar)] => match canonical_nans(&scalar.to_array()?)? {
                Some(array) => Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                    &array, 0,
                )?)),
                None => Ok(ColumnarValue::Scalar(scalar.clone())),
            },
            _ => exec_err!("{CANONICAL_NAN} takes one value"),
        }
    }
}

/// `icefloe_canonical_nan(input)` over `schema` (the input's schema).
///
/// Errors: DataFusion's, typing `input` over `schema`.
pub(crate) fn canonical_nan(
    input: Arc<dyn PhysicalExpr>,
    schema: &ArrowSchema,
) -> DFResult<Arc<dyn PhysicalExpr>> {
    Ok(Arc::new(ScalarFunctionExpr::try_new(
        canonical_nan_udf(),
        vec![input],
        schema,
        Arc::new(ConfigOptions::default()),
    )?))
}

/// The argument of `expr` when it is a call of [`CANONICAL_NAN`].
fn canonical_nan_input(expr: &Arc<dyn PhysicalExpr>) -> Option<&Arc<dyn PhysicalExpr>> {
    let call = expr.downcast_ref::<ScalarFunctionExpr>()?;
    match call.args() {
        [input] if call.name() == CANONICAL_NAN => Some(input),
        _ => None,
    }
}

/// `expr` with each struct field access over a call of [`CANONICAL_NAN`] turned inside out:
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
        let Some(input) = args.first().and_then(canonical_nan_input) else {
            return Ok(Transformed::no(e));
        };
        let mut inner_args = vec![Arc::clone(input)];
        inner_args.extend(args[1..].iter().cloned());
        let inner = Arc::clone(&e).with_new_children(inner_args)?;
        // the field access's own result field (a function call keeps it whatever schema
        // it is asked over)
        let field = inner.return_field(&ArrowSchema::empty())?;
        let hoisted: Arc<dyn PhysicalExpr> = Arc::new(ScalarFunctionExpr::new(
            CANONICAL_NAN,
            canonical_nan_udf(),
            vec![inner],
            field,
            Arc::new(access.config_options().clone()),
        ));
        Ok(Transformed::yes(hoisted))
    })
    .data()
}

/// `plan` with the columns named in `columns` passed through [`CANONICAL_NAN`], every
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
                true => canonical_nan(column, &schema)?,
                false => column,
            };
            Ok((expr, f.name().clone()))
        })
        .collect::<DFResult<_>>()?;
    Ok(Arc::new(ProjectionExec::try_new(exprs, plan)?))
}
