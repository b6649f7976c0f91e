//! [`IcebergTransformExpr`]: an Iceberg partition transform (spec "Partition
//! Transforms": bucket, truncate, year, month, day, hour) as a DataFusion physical
//! expression over one column, so that a write plan can sort rows by a sort order's
//! transformed terms (`bucket(4, c)`). Values go through the crate's transforms one by
//! one, as the partitioned writer computes partition values; the result has the
//! transform's result type in its Arrow form (`int` → `Int32`, `date` → `Date32`,
//! `truncate` keeps the source type).

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Schema as ArrowSchema};
use datafusion::common::{Result as DFResult, ScalarValue};
use datafusion::logical_expr::ColumnarValue;
use datafusion::physical_expr::PhysicalExpr;
#[cfg(any(feature = "distributed", feature = "ballista"))]
use serde::{Deserialize, Serialize};

use super::scalar::literal_to_scalar;
use crate::error::{Error, Result};
use crate::spec::arrow::primitive_to_arrow;
use crate::spec::{PrimitiveType, Transform, Type};
use crate::write::batch_literals;

/// `transform(input)` for an input of Iceberg type `source`.
#[derive(Debug, Clone)]
pub struct IcebergTransformExpr {
    transform: Transform,
    source: PrimitiveType,
    input: Arc<dyn PhysicalExpr>,
    /// The Arrow type the source values are cast to before transforming.
    source_arrow: DataType,
    result: DataType,
}

impl PartialEq for IcebergTransformExpr {
    fn eq(&self, other: &Self) -> bool {
        self.transform == other.transform
            && self.source == other.source
            && self.input.as_ref() == other.input.as_ref()
    }
}

impl Eq for IcebergTransformExpr {}

impl Hash for IcebergTransformExpr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.transform.hash(state);
        self.input.as_ref().hash(state);
    }
}

impl IcebergTransformExpr {
    /// `transform` of `input`, whose values are of Iceberg type `source`.
    ///
    /// Errors: a transform that does not apply to `source`
    /// ([`crate::ErrorKind::InvalidArgument`]), or a type with no Arrow form.
    pub fn try_new(
        transform: Transform,
        source: PrimitiveType,
        input: Arc<dyn PhysicalExpr>,
    ) -> Result<Self> {
        let source_type = Type::Primitive(source);
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
            input,
            source_arrow: primitive_to_arrow(&source)?,
            result,
        })
    }

    fn values(&self, batch: &RecordBatch) -> Result<ColumnarValue> {
        let array = self.input.evaluate(batch)?.into_array(batch.num_rows())?;
        let array = cast(&array, &self.source_arrow)?;
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
            return Ok(ColumnarValue::Array(
                datafusion::arrow::array::new_empty_array(&self.result),
            ));
        }
        Ok(ColumnarValue::Array(ScalarValue::iter_to_array(scalars)?))
    }
}

/// An [`IcebergTransformExpr`] as a plan codec sends it: the transform and the source
/// type (the input expression travels as the expression's child).
#[cfg(any(feature = "distributed", feature = "ballista"))]
#[derive(Serialize, Deserialize)]
struct EncodedTransform {
    transform: Transform,
    /// `Type::Primitive` of the source type (the spec's JSON form, e.g. `"date"`).
    source: Type,
}

#[cfg(any(feature = "distributed", feature = "ballista"))]
impl IcebergTransformExpr {
    /// The bytes a plan codec sends for this expression (JSON of the transform and the
    /// source type; the input is the expression's one child).
    pub(crate) fn encode(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&EncodedTransform {
            transform: self.transform,
            source: Type::Primitive(self.source),
        })
        .map_err(|e| Error::invalid_argument("encoding an Iceberg transform").with_source(e))
    }

    /// The expression [`Self::encode`] wrote, over `input`.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`]): bytes that are not such JSON, or
    /// a transform that does not apply to the source type.
    pub(crate) fn decode(bytes: &[u8], input: Arc<dyn PhysicalExpr>) -> Result<Self> {
        let e: EncodedTransform = serde_json::from_slice(bytes).map_err(|e| {
            Error::invalid_argument("decoding an Iceberg transform expression").with_source(e)
        })?;
        let Type::Primitive(source) = e.source else {
            return Err(Error::invalid_argument(format!(
                "an Iceberg transform over non-primitive type {}",
                e.source
            )));
        };
        Self::try_new(e.transform, source, input)
    }
}

impl fmt::Display for IcebergTransformExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "iceberg_{}({})", self.transform, self.input)
    }
}

impl PhysicalExpr for IcebergTransformExpr {
    fn data_type(&self, _input_schema: &ArrowSchema) -> DFResult<DataType> {
        Ok(self.result.clone())
    }

    fn nullable(&self, input_schema: &ArrowSchema) -> DFResult<bool> {
        self.input.nullable(input_schema)
    }

    fn evaluate(&self, batch: &RecordBatch) -> DFResult<ColumnarValue> {
        Ok(self.values(batch)?)
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> DFResult<Arc<dyn PhysicalExpr>> {
        let input = children.pop().unwrap_or_else(|| Arc::clone(&self.input));
        Ok(Arc::new(Self {
            input,
            ..(*self).clone()
        }))
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "iceberg_{}(", self.transform)?;
        self.input.fmt_sql(f)?;
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, Int32Array, StringViewArray};
    use datafusion::arrow::datatypes::Field;
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
        let bucket = IcebergTransformExpr::try_new(
            Transform::Bucket(16),
            PrimitiveType::String,
            col.clone(),
        )
        .unwrap();
        let out = bucket.evaluate(&batch).unwrap().into_array(3).unwrap();
        let out = out.as_any().downcast_ref::<Int32Array>().unwrap();
        // spec Appendix B: bucket hash of "iceberg" is 1210000089
        assert_eq!(out.value(0), 1210000089 % 16);
        assert!(out.is_null(1));
        let trunc = IcebergTransformExpr::try_new(
            Transform::Truncate(3),
            PrimitiveType::String,
            col.clone(),
        )
        .unwrap();
        let out = trunc.evaluate(&batch).unwrap().into_array(3).unwrap();
        assert_eq!(
            cast(&out, &DataType::Utf8).unwrap().as_ref(),
            &datafusion::arrow::array::StringArray::from(vec![Some("ice"), None, Some("abc")])
                as &dyn Array
        );
        assert!(IcebergTransformExpr::try_new(Transform::Day, PrimitiveType::String, col).is_err());
    }
}
