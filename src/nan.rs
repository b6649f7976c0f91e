//! NaN's one form in Arrow arrays, for Spark's NaN semantics: every NaN (any sign, any
//! payload) becomes the canonical quiet NaN (`f16::NAN` / `f32::NAN` / `f64::NAN`), at any
//! depth (struct fields, list elements, map keys and values).
//!
//! Arrow compares floats in IEEE 754 total order, where a NaN with its sign bit set sorts
//! below every number and differs from the positive NaN; x86 computes that NaN for
//! `0.0 / 0.0`. Spark treats every NaN as one value greater than all others (its SQL
//! reference, "NaN Semantics"); with one NaN left, Arrow's total order is Spark's. Scans
//! make what they read canonical (`datafusion::canonical_nan`), and writers what they
//! store, and `min`/`max` what they aggregate (`datafusion::min_max`).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, FixedSizeListArray, GenericListArray, MapArray, OffsetSizeTrait,
    PrimitiveArray, StructArray,
};
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, Field, Float16Type, Float32Type, Float64Type,
};
use datafusion::arrow::error::ArrowError;

/// Whether values of `data_type` can hold a float at any depth.
pub(crate) fn holds_floats(data_type: &DataType) -> bool {
    match data_type {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => true,
        DataType::Struct(fields) => fields.iter().any(|f| holds_floats(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::Map(f, _) => holds_floats(f.data_type()),
        DataType::Dictionary(_, values) => holds_floats(values),
        _ => false,
    }
}

/// `array` with every NaN made the canonical one, or `None` when it holds no other NaN
/// (nothing is copied then).
///
/// Errors: Arrow's, rebuilding a nested array.
pub(crate) fn canonical_nans(array: &ArrayRef) -> Result<Option<ArrayRef>, ArrowError> {
    rewrite_floats(array, Zeros::Keep)
}

/// `array` with every NaN made the canonical one and every `-0.0` made `0.0`, at any
/// depth, or `None` when nothing changes (nothing is copied then): the values Spark
/// groups and joins by (its optimizer's `NormalizeFloatingNumbers`, which
/// wraps every float grouping, join and window partition key in `NormalizeNaNAndZero`,
/// through struct fields and array elements).
///
/// Errors: Arrow's, rebuilding a nested array.
pub(crate) fn normalized_floats(array: &ArrayRef) -> Result<Option<ArrayRef>, ArrowError> {
    rewrite_floats(array, Zeros::Fold)
}

/// Whether `-0.0` stays (reads, writes, `min`/`max`) or becomes `0.0` (keys).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Zeros {
    Keep,
    Fold,
}

fn rewrite_floats(array: &ArrayRef, zeros: Zeros) -> Result<Option<ArrayRef>, ArrowError> {
    Ok(match array.data_type() {
        DataType::Float16 => rewrite_f16(array.as_primitive(), zeros),
        DataType::Float32 => rewrite_f32(array.as_primitive(), zeros),
        DataType::Float64 => rewrite_f64(array.as_primitive(), zeros),
        DataType::Struct(_) => {
            let s = array.as_struct();
            let mut changed = false;
            let mut columns = Vec::with_capacity(s.num_columns());
            for c in s.columns() {
                columns.push(match rewrite_floats(c, zeros)? {
                    Some(new) => {
                        changed = true;
                        new
                    }
                    None => Arc::clone(c),
                });
            }
            match changed {
                true => Some(Arc::new(StructArray::try_new(
                    s.fields().clone(),
                    columns,
                    s.nulls().cloned(),
                )?)),
                false => None,
            }
        }
        DataType::List(field) => list::<i32>(array.as_list(), field, zeros)?,
        DataType::LargeList(field) => list::<i64>(array.as_list(), field, zeros)?,
        DataType::FixedSizeList(field, size) => {
            let l = array.as_fixed_size_list();
            match rewrite_floats(l.values(), zeros)? {
                Some(values) => Some(Arc::new(FixedSizeListArray::try_new(
                    Arc::clone(field),
                    *size,
                    values,
                    l.nulls().cloned(),
                )?)),
                None => None,
            }
        }
        DataType::Map(field, ordered) => {
            let m = array.as_map();
            let entries: ArrayRef = Arc::new(m.entries().clone());
            match rewrite_floats(&entries, zeros)? {
                Some(entries) => Some(Arc::new(MapArray::try_new(
                    Arc::clone(field),
                    m.offsets().clone(),
                    entries.as_struct().clone(),
                    m.nulls().cloned(),
                    *ordered,
                )?)),
                None => None,
            }
        }
        _ => None,
    })
}

/// Functions making a float array's NaNs the canonical NaN (and, with [`Zeros::Fold`],
/// its `-0.0`s `0.0`); `None` when no value is to change.
macro_rules! float_rewrite {
    ($name:ident, $arrow:ty, $native:ty) => {
        fn $name(a: &PrimitiveArray<$arrow>, zeros: Zeros) -> Option<ArrayRef> {
            let nan = <$native>::NAN;
            let zero = <$native>::from_bits(0);
            let fold = zeros == Zeros::Fold;
            let changes = |v: $native| {
                (v.is_nan() && v.to_bits() != nan.to_bits())
                    || (fold && v == zero && v.to_bits() != zero.to_bits())
            };
            if !a.values().iter().any(|v| changes(*v)) {
                return None;
            }
            Some(Arc::new(a.unary::<_, $arrow>(|v| {
                if v.is_nan() {
                    nan
                } else if fold && v == zero {
                    zero
                } else {
                    v
                }
            })))
        }
    };
}

float_rewrite!(
    rewrite_f16,
    Float16Type,
    <Float16Type as ArrowPrimitiveType>::Native
);
float_rewrite!(rewrite_f32, Float32Type, f32);
float_rewrite!(rewrite_f64, Float64Type, f64);

fn list<O: OffsetSizeTrait>(
    l: &GenericListArray<O>,
    field: &Arc<Field>,
    zeros: Zeros,
) -> Result<Option<ArrayRef>, ArrowError> {
    Ok(match rewrite_floats(l.values(), zeros)? {
        Some(values) => Some(Arc::new(GenericListArray::<O>::try_new(
            Arc::clone(field),
            l.offsets().clone(),
            values,
            l.nulls().cloned(),
        )?)),
        None => None,
    })
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::Float64Builder;
    use datafusion::arrow::array::{
        Float32Array, Float64Array, Int32Array, ListArray, MapBuilder, StringBuilder,
    };
    use datafusion::arrow::datatypes::Fields;

    use super::*;

    /// The NaN x86 computes for `0.0 / 0.0`: sign bit set.
    fn neg_nan() -> f64 {
        f64::from_bits(f64::NAN.to_bits() | (1 << 63))
    }

    fn bits(a: &ArrayRef) -> Vec<Option<u64>> {
        a.as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.map(f64::to_bits))
            .collect()
    }

    #[test]
    fn every_nan_becomes_the_positive_one_and_nothing_else_changes() {
        assert!(neg_nan().is_nan() && neg_nan().is_sign_negative());
        let a: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(neg_nan()),
            Some(f64::NAN),
            None,
            Some(-0.0),
            Some(f64::NEG_INFINITY),
            Some(1.5),
        ]));
        let out = canonical_nans(&a).unwrap().expect("changed");
        let n = f64::NAN.to_bits();
        assert_eq!(
            bits(&out),
            vec![
                Some(n),
                Some(n),
                None,
                Some((-0.0f64).to_bits()),
                Some(f64::NEG_INFINITY.to_bits()),
                Some(1.5f64.to_bits())
            ]
        );
        // only canonical NaNs (or none): nothing copied
        let same: ArrayRef = Arc::new(Float64Array::from(vec![Some(f64::NAN), Some(2.0), None]));
        assert!(canonical_nans(&same).unwrap().is_none());
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        assert!(canonical_nans(&ints).unwrap().is_none());
        let floats: ArrayRef = Arc::new(Float32Array::from(vec![
            f32::from_bits(f32::NAN.to_bits() | (1 << 31)),
            -1.0,
        ]));
        let out = canonical_nans(&floats).unwrap().expect("changed");
        let out = out.as_primitive::<Float32Type>();
        assert_eq!(out.value(0).to_bits(), f32::NAN.to_bits());
        assert_eq!(out.value(1), -1.0);
        type F16 = <Float16Type as ArrowPrimitiveType>::Native;
        let halves: ArrayRef = Arc::new(PrimitiveArray::<Float16Type>::from(vec![
            F16::from_bits(F16::NAN.to_bits() | (1 << 15)),
            F16::from_f32(-1.0),
        ]));
        let out = canonical_nans(&halves).unwrap().expect("changed");
        let out = out.as_primitive::<Float16Type>();
        assert_eq!(out.value(0).to_bits(), F16::NAN.to_bits());
        assert_eq!(out.value(1), F16::from_f32(-1.0));
    }

    #[test]
    fn nested_nans_are_made_canonical_keeping_nulls_and_offsets() {
        // struct<x double, i int> with a null struct row
        let x: ArrayRef = Arc::new(Float64Array::from(vec![Some(neg_nan()), Some(1.0), None]));
        let i: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3]));
        let fields = Fields::from(vec![
            Field::new("x", DataType::Float64, true),
            Field::new("i", DataType::Int32, false),
        ]);
        let nulls = Some(vec![true, false, true].into());
        let s: ArrayRef =
            Arc::new(StructArray::try_new(fields, vec![x, i.clone()], nulls).unwrap());
        let out = canonical_nans(&s).unwrap().expect("changed");
        let out = out.as_struct();
        assert_eq!(out.nulls(), s.nulls());
        assert_eq!(bits(out.column(0))[0], Some(f64::NAN.to_bits()));
        assert!(
            Arc::ptr_eq(out.column(1), &i),
            "a column without NaN is shared"
        );

        // list<double>: [[-NaN, 2.0], null, []]
        let mut b = datafusion::arrow::array::ListBuilder::new(Float64Builder::new());
        b.values().append_value(neg_nan());
        b.values().append_value(2.0);
        b.append(true);
        b.append(false);
        b.append(true);
        let l: ArrayRef = Arc::new(b.finish());
        let out = canonical_nans(&l).unwrap().expect("changed");
        let out: &ListArray = out.as_list();
        assert_eq!(out.offsets(), l.as_list::<i32>().offsets());
        assert!(out.is_null(1));
        assert_eq!(bits(out.values())[0], Some(f64::NAN.to_bits()));

        // map<string, double>
        let mut m = MapBuilder::new(None, StringBuilder::new(), Float64Builder::new());
        m.keys().append_value("a");
        m.values().append_value(neg_nan());
        m.append(true).unwrap();
        let m: ArrayRef = Arc::new(m.finish());
        let out = canonical_nans(&m).unwrap().expect("changed");
        assert_eq!(bits(out.as_map().values())[0], Some(f64::NAN.to_bits()));
        assert_eq!(out.data_type(), m.data_type());
    }

    #[test]
    fn keys_fold_negative_zero_and_every_nan() {
        let a: ArrayRef = Arc::new(Float64Array::from(vec![
            Some(-0.0),
            Some(0.0),
            Some(neg_nan()),
            None,
            Some(-1.5),
            Some(f64::NEG_INFINITY),
        ]));
        let out = normalized_floats(&a).unwrap().expect("changed");
        assert_eq!(
            bits(&out),
            vec![
                Some(0),
                Some(0),
                Some(f64::NAN.to_bits()),
                None,
                Some((-1.5f64).to_bits()),
                Some(f64::NEG_INFINITY.to_bits())
            ]
        );
        assert_eq!(out.nulls(), a.nulls());
        // nothing to change: nothing copied
        let same: ArrayRef = Arc::new(Float64Array::from(vec![Some(0.0), Some(f64::NAN)]));
        assert!(normalized_floats(&same).unwrap().is_none());
        // a -0.0 alone is not a NaN to make canonical: reads keep it
        let zero: ArrayRef = Arc::new(Float64Array::from(vec![-0.0]));
        assert!(canonical_nans(&zero).unwrap().is_none());
        let floats: ArrayRef = Arc::new(Float32Array::from(vec![-0.0f32, 2.0]));
        let out = normalized_floats(&floats).unwrap().expect("changed");
        assert_eq!(out.as_primitive::<Float32Type>().value(0).to_bits(), 0);
        type F16 = <Float16Type as ArrowPrimitiveType>::Native;
        let halves: ArrayRef = Arc::new(PrimitiveArray::<Float16Type>::from(vec![
            F16::from_f32(-0.0),
            F16::from_f32(-1.0),
        ]));
        let out = normalized_floats(&halves).unwrap().expect("changed");
        let out = out.as_primitive::<Float16Type>();
        assert_eq!(out.value(0).to_bits(), 0);
        assert_eq!(out.value(1), F16::from_f32(-1.0));
        // inside a struct inside a list
        let x: ArrayRef = Arc::new(Float64Array::from(vec![-0.0, 1.0]));
        let st = StructArray::try_new(
            Fields::from(vec![Field::new("x", DataType::Float64, false)]),
            vec![x],
            None,
        )
        .unwrap();
        let l: ArrayRef = Arc::new(
            ListArray::try_new(
                Arc::new(Field::new("element", st.data_type().clone(), false)),
                datafusion::arrow::buffer::OffsetBuffer::from_lengths([2]),
                Arc::new(st),
                None,
            )
            .unwrap(),
        );
        let out = normalized_floats(&l).unwrap().expect("changed");
        let out: &ListArray = out.as_list();
        assert_eq!(
            bits(out.values().as_struct().column(0)),
            vec![Some(0), Some(1.0f64.to_bits())]
        );
    }

    #[test]
    fn holds_floats_looks_through_nesting() {
        assert!(holds_floats(&DataType::Float32));
        assert!(!holds_floats(&DataType::Int64));
        let list = DataType::List(Arc::new(Field::new("element", DataType::Float64, true)));
        assert!(holds_floats(&list));
        let st = DataType::Struct(Fields::from(vec![Field::new("a", DataType::Utf8, true)]));
        assert!(!holds_floats(&st));
    }
}
