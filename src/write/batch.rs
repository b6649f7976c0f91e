//! Record batches made ready to write: cast to the table's Arrow schema (losslessly),
//! required columns checked for nulls, and values of struct-nested leaf columns read
//! as Iceberg literals (partition sources) or float statistics.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, FixedSizeBinaryArray, RecordBatch, RecordBatchOptions,
    StructArray,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::compute::{cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, FieldRef, Float32Type, Float64Type, Int32Type, Int64Type,
    Schema as ArrowSchema, SchemaRef, Time64MicrosecondType, TimeUnit, TimestampMicrosecondType,
    TimestampNanosecondType,
};

use super::parquet_metrics::FloatFieldStats;
use crate::error::{Error, Result};
use crate::nan::{canonical_nans, holds_floats};
use crate::spec::{Literal, NestedField, PrimitiveType, Schema, Type};

/// Whether a column of Arrow type `from` is cast to `to` (the table's Arrow type) value
/// by value, failing on a value that does not fit: a wider integer into an `int` or
/// `long` column. Spark's ANSI store assignment takes them so (a `long` into an `int`
/// column, an overflow an error); DataFusion 55 hands a sink such a column where its own
/// insert cast was planned before a `UNION`'s types were widened (`INSERT INTO t SELECT
/// a, 7 FROM s UNION ALL SELECT 5, 5`, `a` an `int`: the union is typed `Int64`).
fn narrowing_checked(from: &DataType, to: &DataType) -> bool {
    use DataType as D;
    matches!(
        (from, to),
        (D::Int64 | D::UInt32 | D::UInt64, D::Int32) | (D::UInt64, D::Int64)
    )
}

/// Whether every value of Arrow type `from` has an exact counterpart in `to` (the
/// table's Arrow type), so the cast loses nothing.
pub(crate) fn lossless(from: &DataType, to: &DataType) -> bool {
    use DataType as D;
    if from == to {
        return true;
    }
    let ts_rank = |u: &TimeUnit| match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 1,
        TimeUnit::Microsecond => 2,
        TimeUnit::Nanosecond => 3,
    };
    match (from, to) {
        (D::Null, _) => true,
        (D::Dictionary(_, v), _) => lossless(v, to),
        (D::Utf8 | D::LargeUtf8 | D::Utf8View, D::Utf8) => true,
        (D::Binary | D::LargeBinary | D::BinaryView, D::Binary) => true,
        (D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16, D::Int32) => true,
        (D::Int8 | D::Int16 | D::Int32 | D::Int64 | D::UInt8 | D::UInt16 | D::UInt32, D::Int64) => {
            true
        }
        (D::Float16 | D::Float32, D::Float32) => true,
        (D::Float16 | D::Float32 | D::Float64, D::Float64) => true,
        (D::Decimal32(p, s) | D::Decimal64(p, s) | D::Decimal128(p, s), D::Decimal128(tp, ts)) => {
            s <= ts && i16::from(*p) - i16::from(*s) <= i16::from(*tp) - i16::from(*ts)
        }
        (D::Time32(_), D::Time64(TimeUnit::Microsecond)) => true,
        (D::Timestamp(u, tz), D::Timestamp(tu, ttz)) => {
            tz.is_some() == ttz.is_some() && ts_rank(u) <= ts_rank(tu)
        }
        (D::List(a) | D::LargeList(a), D::List(b)) => lossless(a.data_type(), b.data_type()),
        (D::Struct(a), D::Struct(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|(x, y)| lossless(x.data_type(), y.data_type()))
        }
        (D::Map(a, _), D::Map(b, _)) => lossless(a.data_type(), b.data_type()),
        _ => false,
    }
}

/// Whether a top-level column of Arrow type `from` is written as the table's `to` as it
/// is: the Parquet writer encodes `Utf8View`/`LargeUtf8` as the same `BYTE_ARRAY`
/// (`STRING`) column as `Utf8`, and `BinaryView`/`LargeBinary` as `Binary`, with the
/// same statistics, so these columns are not cast (a cast copies every value).
pub(crate) fn written_as_is(from: &DataType, to: &DataType) -> bool {
    use DataType as D;
    matches!(
        (from, to),
        (D::Utf8View | D::LargeUtf8, D::Utf8) | (D::BinaryView | D::LargeBinary, D::Binary)
    )
}

/// `batch` as a batch of the table's Arrow schema `target` (field ids in the metadata):
/// columns matched by position and cast losslessly; required columns (nested ones
/// too) checked for nulls. Top-level string and binary columns of another layout
/// ([`written_as_is`]: views, large offsets) keep it: the result's field then has that
/// type with the target field's name, nullability and metadata, and the Parquet writer
/// (built for `target`) writes it as the table's type. Every NaN becomes the canonical NaN
/// ([`crate::nan`]: Spark's NaN semantics, one NaN partition value, not one per bit pattern).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming the column): a different
/// column count, a type that does not cast losslessly (other than the integers of
/// [`narrowing_checked`]), a value the cast rejects (an integer out of the column's
/// range), a null in a required column.
pub(crate) fn conform_batch(
    batch: &RecordBatch,
    schema: &Schema,
    target: &SchemaRef,
) -> Result<RecordBatch> {
    let columns = schema.columns();
    if batch.num_columns() != columns.len() {
        return Err(Error::invalid_argument(format!(
            "batch has {} columns, the table schema {} ({})",
            batch.num_columns(),
            columns.len(),
            columns
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    let mut out = Vec::with_capacity(columns.len());
    let mut kept: Vec<(usize, DataType)> = Vec::new();
    for (i, ((array, field), target_field)) in batch
        .columns()
        .iter()
        .zip(columns)
        .zip(target.fields())
        .enumerate()
    {
        check_required(array.as_ref(), field, &field.name, None)?;
        let to = target_field.data_type();
        let array = if array.data_type() == to {
            Arc::clone(array)
        } else if written_as_is(array.data_type(), to) {
            kept.push((i, array.data_type().clone()));
            Arc::clone(array)
        } else {
            if !lossless(array.data_type(), to) && !narrowing_checked(array.data_type(), to) {
                return Err(Error::invalid_argument(format!(
                    "column '{}': Arrow type {} does not cast losslessly to {} (Iceberg {})",
                    field.name,
                    array.data_type(),
                    to,
                    field.field_type
                )));
            }
            cast_with_options(array, to, &options).map_err(|e| {
                Error::invalid_argument(format!("column '{}': cannot cast to {to}", field.name))
                    .with_source(e)
            })?
        };
        // NaN stored in its one form, as Spark's writes store it (see `crate::nan`)
        let array = match holds_floats(array.data_type()) {
            true => canonical_nans(&array)
                .map_err(|e| {
                    Error::invalid_argument(format!("column '{}': its NaNs", field.name))
                        .with_source(e)
                })?
                .unwrap_or(array),
            false => array,
        };
        out.push(array);
    }
    let schema = if kept.is_empty() {
        Arc::clone(target)
    } else {
        let mut fields: Vec<FieldRef> = target.fields().iter().cloned().collect();
        for (i, ty) in kept {
            fields[i] = Arc::new(fields[i].as_ref().clone().with_data_type(ty));
        }
        Arc::new(ArrowSchema::new_with_metadata(
            fields,
            target.metadata().clone(),
        ))
    };
    RecordBatch::try_new_with_options(
        schema,
        out,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
    .map_err(|e| Error::invalid_argument("batch does not fit the table schema").with_source(e))
}

/// Nulls of `array` at positions where `parent` (the ancestors' validity) is valid.
fn nulls_under(array: &dyn Array, parent: Option<&NullBuffer>) -> usize {
    match (array.logical_nulls(), parent) {
        (None, _) => 0,
        (Some(n), None) => n.null_count(),
        (Some(n), Some(p)) => (0..array.len())
            .filter(|&i| n.is_null(i) && p.is_valid(i))
            .count(),
    }
}

fn check_required(
    array: &dyn Array,
    field: &NestedField,
    path: &str,
    parent: Option<&NullBuffer>,
) -> Result<()> {
    if field.required {
        let n = nulls_under(array, parent);
        if n > 0 {
            return Err(Error::invalid_argument(format!(
                "column '{path}' is required (NOT NULL) but {n} row(s) to write hold null \
                 for it"
            )));
        }
    }
    match field.field_type.as_ref() {
        Type::Struct(s) => {
            let Some(st) = array.as_struct_opt() else {
                return Ok(());
            };
            let valid = NullBuffer::union(parent, st.nulls());
            for (child, f) in st.columns().iter().zip(&s.fields) {
                let p = format!("{path}.{}", f.name);
                check_required(child.as_ref(), f, &p, valid.as_ref())?;
            }
        }
        Type::List(l) => {
            if let Some(list) = array.as_list_opt::<i32>() {
                let p = format!("{path}.element");
                check_required(list.values().as_ref(), &l.element_field, &p, None)?;
            }
        }
        Type::Map(m) => {
            if let Some(map) = array.as_map_opt() {
                check_required(
                    map.keys().as_ref(),
                    &m.key_field,
                    &format!("{path}.key"),
                    None,
                )?;
                let p = format!("{path}.value");
                check_required(map.values().as_ref(), &m.value_field, &p, None)?;
            }
        }
        Type::Primitive(_) => {}
    }
    Ok(())
}

/// The positions of a field reachable through structs only: top-level column index,
/// then child indexes. `None` when the field is missing or inside a list or map.
pub(crate) fn struct_path(schema: &Schema, field_id: i32) -> Option<Vec<usize>> {
    fn find(fields: &[NestedField], id: i32, path: &mut Vec<usize>) -> bool {
        for (i, f) in fields.iter().enumerate() {
            path.push(i);
            if f.id == id {
                return true;
            }
            if let Type::Struct(s) = f.field_type.as_ref() {
                if find(&s.fields, id, path) {
                    return true;
                }
            }
            path.pop();
        }
        false
    }
    let mut path = Vec::new();
    find(schema.columns(), field_id, &mut path).then_some(path)
}

/// The array at a struct path of `batch` and the validity of its ancestors (a value is
/// null when the ancestors' validity says so, whatever the leaf holds).
pub(crate) fn leaf_at(
    batch: &RecordBatch,
    path: &[usize],
) -> Option<(ArrayRef, Option<NullBuffer>)> {
    let (first, rest) = path.split_first()?;
    let mut array = Arc::clone(batch.columns().get(*first)?);
    let mut ancestors: Option<NullBuffer> = None;
    for &i in rest {
        let st: &StructArray = array.as_struct_opt()?;
        ancestors = NullBuffer::union(ancestors.as_ref(), st.nulls());
        let child = Arc::clone(st.columns().get(i)?);
        array = child;
    }
    Some((array, ancestors))
}

fn is_valid(array: &dyn Array, ancestors: Option<&NullBuffer>, i: usize) -> bool {
    array.is_valid(i) && ancestors.is_none_or(|a| a.is_valid(i))
}

/// The values of a conformed (table-typed) array as literals of Iceberg type `ty`,
/// `None` for nulls (the leaf's or an ancestor's); strings and binaries also from the
/// view and large layouts [`conform_batch`] keeps.
///
/// Errors: a type with no literal form (unknown, variant, geo) or an array not of the
/// table's Arrow type ([`crate::ErrorKind::Unsupported`] / `InvalidArgument`).
pub(crate) fn literals(
    array: &dyn Array,
    ancestors: Option<&NullBuffer>,
    ty: &PrimitiveType,
) -> Result<Vec<Option<Literal>>> {
    use PrimitiveType as P;
    let mismatch = || {
        Error::invalid_argument(format!(
            "array of type {} does not hold Iceberg {ty}",
            array.data_type()
        ))
    };
    let n = array.len();
    let valid = |i: usize| is_valid(array, ancestors, i);
    macro_rules! prim {
        ($t:ty, $f:expr) => {{
            let a = array.as_primitive_opt::<$t>().ok_or_else(mismatch)?;
            (0..n).map(|i| valid(i).then(|| $f(a.value(i)))).collect()
        }};
    }
    Ok(match ty {
        P::Boolean => {
            let a: &BooleanArray = array.as_boolean_opt().ok_or_else(mismatch)?;
            (0..n)
                .map(|i| valid(i).then(|| Literal::Boolean(a.value(i))))
                .collect()
        }
        P::Int => prim!(Int32Type, Literal::Int),
        P::Long => prim!(Int64Type, Literal::Long),
        P::Float => prim!(Float32Type, Literal::Float),
        P::Double => prim!(Float64Type, Literal::Double),
        P::Date => prim!(Date32Type, Literal::Date),
        P::Time => prim!(Time64MicrosecondType, Literal::Time),
        P::Timestamp => prim!(TimestampMicrosecondType, Literal::Timestamp),
        P::Timestamptz => prim!(TimestampMicrosecondType, Literal::Timestamptz),
        P::TimestampNs => prim!(TimestampNanosecondType, Literal::TimestampNs),
        P::TimestamptzNs => prim!(TimestampNanosecondType, Literal::TimestamptzNs),
        P::Decimal { precision, scale } => prim!(Decimal128Type, |v| Literal::Decimal {
            unscaled: v,
            precision: *precision,
            scale: *scale,
        }),
        P::String => {
            let string = |v: &str| Literal::String(v.to_string());
            if let Some(a) = array.as_string_opt::<i32>() {
                (0..n)
                    .map(|i| valid(i).then(|| string(a.value(i))))
                    .collect()
            } else if let Some(a) = array.as_string_view_opt() {
                (0..n)
                    .map(|i| valid(i).then(|| string(a.value(i))))
                    .collect()
            } else {
                let a = array.as_string_opt::<i64>().ok_or_else(mismatch)?;
                (0..n)
                    .map(|i| valid(i).then(|| string(a.value(i))))
                    .collect()
            }
        }
        P::Binary => {
            let binary = |v: &[u8]| Literal::Binary(v.to_vec());
            if let Some(a) = array.as_binary_opt::<i32>() {
                (0..n)
                    .map(|i| valid(i).then(|| binary(a.value(i))))
                    .collect()
            } else if let Some(a) = array.as_binary_view_opt() {
                (0..n)
                    .map(|i| valid(i).then(|| binary(a.value(i))))
                    .collect()
            } else {
                let a = array.as_binary_opt::<i64>().ok_or_else(mismatch)?;
                (0..n)
                    .map(|i| valid(i).then(|| binary(a.value(i))))
                    .collect()
            }
        }
        P::Uuid | P::Fixed(_) => {
            let a: &FixedSizeBinaryArray = array.as_fixed_size_binary_opt().ok_or_else(mismatch)?;
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                out.push(if !valid(i) {
                    None
                } else if *ty == P::Uuid {
                    Some(Literal::Uuid(
                        a.value(i).try_into().map_err(|_| mismatch())?,
                    ))
                } else {
                    Some(Literal::Fixed(a.value(i).to_vec()))
                });
            }
            out
        }
        P::Unknown | P::Variant | P::Geometry | P::Geography => {
            return Err(Error::unsupported(format!("values of type {ty}")))
        }
    })
}

/// Fold the non-null values of a float or double array into `stats`.
pub(crate) fn update_float_stats(
    array: &dyn Array,
    ancestors: Option<&NullBuffer>,
    stats: &mut FloatFieldStats,
) {
    if let Some(a) = array.as_primitive_opt::<Float64Type>() {
        for i in 0..a.len() {
            if is_valid(array, ancestors, i) {
                stats.update(a.value(i));
            }
        }
    } else if let Some(a) = array.as_primitive_opt::<Float32Type>() {
        for i in 0..a.len() {
            if is_valid(array, ancestors, i) {
                stats.update(f64::from(a.value(i)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Field;

    #[test]
    fn lossless_casts() {
        use DataType as D;
        assert!(lossless(&D::Utf8View, &D::Utf8));
        assert!(lossless(&D::Int16, &D::Int32));
        assert!(!lossless(&D::Int64, &D::Int32));
        assert!(!lossless(&D::Float64, &D::Float32));
        assert!(lossless(&D::Decimal128(5, 2), &D::Decimal128(10, 2)));
        assert!(!lossless(&D::Decimal128(10, 4), &D::Decimal128(10, 2)));
        assert!(lossless(
            &D::Timestamp(TimeUnit::Millisecond, Some("+01:00".into())),
            &D::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        ));
        assert!(!lossless(
            &D::Timestamp(TimeUnit::Nanosecond, None),
            &D::Timestamp(TimeUnit::Microsecond, None)
        ));
        assert!(!lossless(
            &D::Timestamp(TimeUnit::Microsecond, None),
            &D::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        ));
        let l = |t| D::List(Arc::new(Field::new("item", t, true)));
        assert!(lossless(&l(D::Utf8View), &l(D::Utf8)));
    }
}
