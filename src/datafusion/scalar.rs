//! Iceberg [`Literal`]s as DataFusion `ScalarValue`s.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;

use crate::error::{Error, Result};
use crate::spec::Literal;

/// The `ScalarValue` of a literal in its natural Arrow type (see `crate::spec::arrow`
/// for the mapping), then cast to `target` (e.g. an `int` partition value under a column
/// promoted to `long`). `None` is the typed null of `target`. A NaN becomes the one
/// canonical NaN, as scans return it (see `canonical_nan`: Spark's NaN semantics), so
/// statistics and per-file values built from metadata compare as the rows do.
///
/// Errors when the value cannot be represented in `target`.
pub fn literal_to_scalar(lit: Option<&Literal>, target: &DataType) -> Result<ScalarValue> {
    let Some(lit) = lit else {
        return ScalarValue::try_from(target).map_err(|e| {
            Error::invalid_data(format!("no null value for type {target}")).with_source(e)
        });
    };
    // Direct forms of the common promotions and view types: `ScalarValue::cast_to` goes
    // through an Arrow cast of a one-row array, which planning would pay per file.
    match (lit, target) {
        (Literal::String(s), DataType::Utf8View) => {
            return Ok(ScalarValue::Utf8View(Some(s.clone())))
        }
        (Literal::Binary(b), DataType::BinaryView) => {
            return Ok(ScalarValue::BinaryView(Some(b.clone())))
        }
        (Literal::Int(v), DataType::Int64) => return Ok(ScalarValue::Int64(Some(i64::from(*v)))),
        (Literal::Float(v), DataType::Float64) => {
            return Ok(ScalarValue::Float64(Some(canonical_f64(f64::from(*v)))))
        }
        _ => {}
    }
    let utc = || Some("UTC".into());
    let natural = match lit {
        Literal::Boolean(v) => ScalarValue::Boolean(Some(*v)),
        Literal::Int(v) => ScalarValue::Int32(Some(*v)),
        Literal::Long(v) => ScalarValue::Int64(Some(*v)),
        Literal::Float(v) => ScalarValue::Float32(Some(if v.is_nan() { f32::NAN } else { *v })),
        Literal::Double(v) => ScalarValue::Float64(Some(canonical_f64(*v))),
        Literal::Decimal {
            unscaled,
            precision,
            scale,
        } => ScalarValue::Decimal128(
            Some(*unscaled),
            u8::try_from(*precision).unwrap_or(38),
            i8::try_from(*scale).unwrap_or(0),
        ),
        Literal::Date(v) => ScalarValue::Date32(Some(*v)),
        Literal::Time(v) => ScalarValue::Time64Microsecond(Some(*v)),
        Literal::Timestamp(v) => ScalarValue::TimestampMicrosecond(Some(*v), None),
        Literal::Timestamptz(v) => ScalarValue::TimestampMicrosecond(Some(*v), utc()),
        Literal::TimestampNs(v) => ScalarValue::TimestampNanosecond(Some(*v), None),
        Literal::TimestamptzNs(v) => ScalarValue::TimestampNanosecond(Some(*v), utc()),
        Literal::String(s) => ScalarValue::Utf8(Some(s.clone())),
        Literal::Uuid(b) => ScalarValue::FixedSizeBinary(16, Some(b.to_vec())),
        Literal::Fixed(b) => ScalarValue::FixedSizeBinary(
            i32::try_from(b.len()).map_err(|_| Error::invalid_data("fixed value too long"))?,
            Some(b.clone()),
        ),
        Literal::Binary(b) => ScalarValue::Binary(Some(b.clone())),
    };
    if &natural.data_type() == target {
        return Ok(natural);
    }
    natural.cast_to(target).map_err(|e| {
        Error::invalid_data(format!("value {lit} cannot be read as {target}")).with_source(e)
    })
}

/// `v`, or the canonical NaN when `v` is any NaN.
fn canonical_f64(v: f64) -> f64 {
    if v.is_nan() {
        f64::NAN
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_forms_equal_the_cast() {
        let cases = [
            (
                Literal::String("ab".into()),
                DataType::Utf8,
                DataType::Utf8View,
            ),
            (
                Literal::Binary(vec![1, 2]),
                DataType::Binary,
                DataType::BinaryView,
            ),
            (Literal::Int(-3), DataType::Int32, DataType::Int64),
            (Literal::Float(1.5), DataType::Float32, DataType::Float64),
        ];
        for (lit, natural, target) in cases {
            let direct = literal_to_scalar(Some(&lit), &target).unwrap();
            let natural = literal_to_scalar(Some(&lit), &natural).unwrap();
            assert_eq!(direct, natural.cast_to(&target).unwrap(), "{lit}");
        }
    }

    #[test]
    fn converts_and_widens() {
        assert_eq!(
            literal_to_scalar(Some(&Literal::Int(7)), &DataType::Int64).unwrap(),
            ScalarValue::Int64(Some(7))
        );
        assert_eq!(
            literal_to_scalar(None, &DataType::Utf8).unwrap(),
            ScalarValue::Utf8(None)
        );
        let dec = Literal::Decimal {
            unscaled: 1230,
            precision: 8,
            scale: 2,
        };
        assert_eq!(
            literal_to_scalar(Some(&dec), &DataType::Decimal128(18, 2)).unwrap(),
            ScalarValue::Decimal128(Some(1230), 18, 2)
        );
    }
}
