//! `icefloe_partition_transform(value, transform, source_type)`: an Iceberg partition
//! transform (spec "Partition Transforms": bucket, truncate, year, month, day, hour) as a
//! DataFusion scalar function over one value, so that a write plan can sort rows by a sort
//! order's transformed terms (`bucket(4, c)`). `transform` is the transform in the spec's
//! string form (`'bucket[4]'`, `'truncate[10]'`, `'day'`) and `source_type` the Iceberg type
//! of the values (`'int'`, `'decimal(9, 2)'`, `'timestamptz'`), both literals, so the call
//! crosses plan codecs by name with its arguments (datafusion-proto's composed codec,
//! through which datafusion-distributed sends plans, passes no extension expression to
//! icefloe's codec). Values go through the crate's transforms one by one, as the
//! partitioned writer computes partition values; the result has the transform's result
//! type in its Arrow form (`int` → `Int32`, `date` → `Date32`, `truncate` keeps the
//! source type).

use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema as ArrowSchema};
use datafusion::common::config::ConfigOptions;
use datafusion::common::{exec_err, internal_err, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};

use super::scalar::literal_to_scalar;
use crate::error::{Error, Result};
use crate::spec::arrow::primitive_to_arrow;
use crate::spec::{PrimitiveType, Transform, Type};
use crate::write::batch_literals;

/// The name of the scalar function (also how plan codecs send it: by name, resolved in
/// worker sessions, see `codec::UDFS_BY_NAME`).
pub const PARTITION_TRANSFORM: &str = "icefloe_partition_transform";

/// `icefloe_partition_transform(value, transform, source_type)` (see the module docs).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PartitionTransform {
    signature: Signature,
}

impl Default for PartitionTransform {
    fn default() -> Self {
        Self {
            signature: Signature::any(3, Volatility::Immutable),
        }
    }
}

/// The [`PartitionTransform`] function.
pub fn partition_transform_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::new_from_impl(PartitionTransform::default()))
}

/// A transform of values of one source type, with the Arrow types around it.
struct Resolved {
    transform: Transform,
    source: PrimitiveType,
    /// The Arrow type the source values are cast to before transforming.
    source_arrow: DataType,
    result: DataType,
}

impl Resolved {
    /// `transform` of values of Iceberg type `source`.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`]): a transform that does not apply to
    /// `source` (or `void`), or a type with no Arrow form.
    fn new(transform: Transform, source: PrimitiveType) -> Result<Self> {
        let source_type = Type::Primitive(source);
        if let Transform::Unknown(name) = &transform {
            return Err(Error::invalid_argument(format!(
                "icefloe does not know the transform '{name}'"
            )));
        }
        if !transform.can_transform(&source_type) || transform == Transform::Void {
            return Err(Error::invalid_argument(format!(
                "transform {transform} cannot apply to type {source}"
            )));
        }
        let result = match transform.result_type(&source_type)? {
            Type::Primitive(p) => primitive_to_arrow(&p)?,
            other => {
                return Err(Error::invalid_argument(format!(
                    "transform {transform} gives non-primitive type {other}"
                )))
            }
        };
        Ok(Self {
            transform,
            source,
            source_arrow: primitive_to_arrow(&source)?,
            result,
        })
    }

    /// The transform and source type of the function's literal arguments.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`]): arguments that are not two
    /// strings naming a transform and a primitive type it applies to.
    fn of_arguments(transform: Option<&ScalarValue>, source: Option<&ScalarValue>) -> Result<Self> {
        fn text<'a>(v: Option<&'a ScalarValue>, what: &str) -> Result<&'a str> {
            v.and_then(|v| v.try_as_str().flatten()).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{PARTITION_TRANSFORM} takes its {what} as a string literal"
                ))
            })
        }
        let transform: Transform = text(transform, "transform")?.parse()?;
        let source = text(source, "source type")?;
        let source = PrimitiveType::parse(source).map_err(|e| {
            Error::invalid_argument(format!(
                "{PARTITION_TRANSFORM}: source type '{source}': {e}"
            ))
        })?;
        Self::new(transform, source)
    }

    /// The transformed values of `array` (of the source's Arrow type or one cast to it).
    fn values(&self, array: &ArrayRef) -> Result<ArrayRef> {
        let array = cast(array, &self.source_arrow)?;
        let scalars = batch_literals(array.as_ref(), &self.source)?
            .into_iter()
            .map(|v| {
                let out = match v {
                    Some(v) => crate::transform::apply(&self.transform, &v)?,
                    None => None,
                };
                literal_to_scalar(out.as_ref(), &self.result)
            })
            .collect::<Result<Vec<_>>>()?;
        if scalars.is_empty() {
            return Ok(datafusion::arrow::array::new_empty_array(&self.result));
        }
        Ok(ScalarValue::iter_to_array(scalars)?)
    }
}

impl ScalarUDFImpl for PartitionTransform {
    fn name(&self) -> &str {
        PARTITION_TRANSFORM
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DFResult<DataType> {
        internal_err!("{PARTITION_TRANSFORM}'s type depends on its arguments")
    }

    /// The transform's result type (its Arrow form), nullable as the value.
    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DFResult<FieldRef> {
        match (args.arg_fields, args.scalar_arguments) {
            ([value, _, _], [_, transform, source]) => {
                let resolved = Resolved::of_arguments(*transform, *source)?;
                Ok(Arc::new(Field::new(
                    self.name(),
                    resolved.result,
                    value.is_nullable(),
                )))
            }
            _ => exec_err!("{PARTITION_TRANSFORM} takes a value, a transform and a type"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let [value, ColumnarValue::Scalar(transform), ColumnarValue::Scalar(source)] =
            args.args.as_slice()
        else {
            return exec_err!("{PARTITION_TRANSFORM} takes a value, a transform and a type");
        };
        let resolved = Resolved::of_arguments(Some(transform), Some(source))?;
        let array = value.to_array(args.number_rows)?;
        Ok(ColumnarValue::Array(resolved.values(&array)?))
    }
}

/// `icefloe_partition_transform(input, 'transform', 'source')` over `schema` (the
/// input's schema), for an input of Iceberg type `source`.
///
/// Errors: a transform that does not apply to `source`
/// ([`crate::ErrorKind::InvalidArgument`]), a type with no Arrow form, or DataFusion's,
/// typing `input` over `schema`.
pub(crate) fn partition_transform(
    transform: Transform,
    source: PrimitiveType,
    input: Arc<dyn PhysicalExpr>,
    schema: &ArrowSchema,
) -> Result<Arc<dyn PhysicalExpr>> {
    Resolved::new(transform.clone(), source)?;
    let text =
        |s: String| -> Arc<dyn PhysicalExpr> { Arc::new(Literal::new(ScalarValue::Utf8(Some(s)))) };
    Ok(Arc::new(ScalarFunctionExpr::try_new(
        partition_transform_udf(),
        vec![input, text(transform.to_string()), text(source.to_string())],
        schema,
        Arc::new(ConfigOptions::default()),
    )?))
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, Int32Array, RecordBatch, StringViewArray};
    use datafusion::physical_expr::expressions::Column;

    use super::*;

    #[test]
    fn buckets_and_truncates_like_the_partition_writer() {
        let schema = Arc::new(ArrowSchema::new(vec![Field::new(
            "s",
            DataType::Utf8View,
            true,
        )]));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![Arc::new(StringViewArray::from(vec![
                Some("iceberg"),
                None,
                Some("abcdef"),
            ]))],
        )
        .unwrap();
        let col: Arc<dyn PhysicalExpr> = Arc::new(Column::new("s", 0));
        let bucket = partition_transform(
            Transform::Bucket(16),
            PrimitiveType::String,
            col.clone(),
            &schema,
        )
        .unwrap();
        let out = bucket.evaluate(&batch).unwrap().into_array(3).unwrap();
        let out = out.as_any().downcast_ref::<Int32Array>().unwrap();
        // spec Appendix B: bucket hash of "iceberg" is 1210000089
        assert_eq!(out.value(0), 1210000089 % 16);
        assert!(out.is_null(1));
        let trunc = partition_transform(
            Transform::Truncate(3),
            PrimitiveType::String,
            col.clone(),
            &schema,
        )
        .unwrap();
        let out = trunc.evaluate(&batch).unwrap().into_array(3).unwrap();
        assert_eq!(
            cast(&out, &DataType::Utf8).unwrap().as_ref(),
            &datafusion::arrow::array::StringArray::from(vec![Some("ice"), None, Some("abc")])
                as &dyn Array
        );
        assert!(partition_transform(Transform::Day, PrimitiveType::String, col, &schema).is_err());
    }
}
