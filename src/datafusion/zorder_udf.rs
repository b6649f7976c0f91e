//! The z-value of a row as a DataFusion scalar function, so a z-order rewrite sorts by it
//! with DataFusion's `SortExec` (which spills): `rewrite_data_files` with `sort_order =>
//! 'zorder(a, b)'` adds it as a column, sorts by it and drops it (Iceberg Java's
//! `SparkZOrderFileRewriteRunner`). The values are [`crate::maintenance::zorder`]'s.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, Result as DFResult};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use crate::maintenance::zorder::{z_value_array, ZOrderOptions};

/// The function's name (shown in plans).
pub const Z_VALUE: &str = "icefloe_z_value";

/// `icefloe_z_value(a, b, …)`: the z-value of the arguments (non-null `Binary`; see
/// [`crate::maintenance::zorder`]), under the options it was made with.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ZValue {
    signature: Signature,
    var_length_contribution: usize,
    max_output_size: usize,
}

impl ZValue {
    fn options(&self) -> ZOrderOptions {
        ZOrderOptions {
            var_length_contribution: self.var_length_contribution,
            max_output_size: self.max_output_size,
        }
    }
}

/// The [`ZValue`] function under `options`.
pub fn z_value_udf(options: ZOrderOptions) -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(ZValue {
        signature: Signature::variadic_any(Volatility::Immutable),
        var_length_contribution: options.var_length_contribution,
        max_output_size: options.max_output_size,
    }))
}

impl ScalarUDFImpl for ZValue {
    fn name(&self) -> &str {
        Z_VALUE
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DFResult<DataType> {
        Ok(DataType::Binary)
    }

    fn return_field_from_args(&self, _args: ReturnFieldArgs) -> DFResult<FieldRef> {
        Ok(Arc::new(Field::new(Z_VALUE, DataType::Binary, false)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        if args.args.is_empty() {
            return exec_err!("{Z_VALUE} takes at least one column");
        }
        let columns = args
            .args
            .iter()
            .map(|a| a.to_array(args.number_rows))
            .collect::<DFResult<Vec<_>>>()?;
        Ok(ColumnarValue::Array(z_value_array(
            &columns,
            &self.options(),
        )?))
    }
}
