//! Timestamps (and times) narrowed to a coarser unit the way Iceberg Java and Spark
//! narrow them: by **flooring** (`Math.floorDiv`), at any depth (struct fields, list
//! elements, map keys and values).
//!
//! Arrow's `cast` from `Timestamp(Nanosecond)` to `Timestamp(Microsecond)` divides, which
//! rounds a value before 1970 with a sub-microsecond part toward zero, i.e. up:
//! `1969-12-31 23:59:59.9999995` became `1970-01-01 00:00:00`. Iceberg's `timestamp` and
//! `timestamptz` hold microseconds (spec "Primitive Types"), and Java converts
//! nanoseconds to them with `Math.floorDiv` (`DateTimeUtil.nanosToMicros`), so
//! `1969-12-31 23:59:59.999999` is the value written. DataFusion plans every
//! `TIMESTAMP` literal as nanoseconds, so every write of one into a microsecond column
//! narrows.
//!
//! [`floor_time_units`] converts only the leaves whose unit narrows, leaving the rest of
//! the value (and its field names) as it is; a cast to the target type after it
//! (DataFusion's, or Arrow's: [`cast_flooring`]) then finds the units equal and changes
//! nothing in them. Strings cast to timestamps floor already (Arrow adds the
//! non-negative fraction of the second to the whole seconds), as do casts of timestamps
//! to dates and times (through chrono).

use std::sync::Arc;

use datafusion::arrow::array::{
    make_array, Array, ArrayRef, AsArray, FixedSizeListArray, GenericListArray, MapArray,
    OffsetSizeTrait, StructArray,
};
use datafusion::arrow::compute::{cast_with_options, CastOptions};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Int64Type, TimeUnit};
use datafusion::arrow::error::ArrowError;

/// Nanoseconds in one `unit`.
fn nanos(unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// For a leaf: the type `from` narrows to under `to` and the divisor of its values, when
/// `to` is of a coarser unit (timestamp to timestamp, time to time).
fn narrowed_leaf(from: &DataType, to: &DataType) -> Option<(DataType, i64)> {
    let (DataType::Timestamp(u, tz), DataType::Timestamp(tu, _)) = (from, to) else {
        return match (from, to) {
            (DataType::Time64(u), DataType::Time64(tu)) if nanos(u) < nanos(tu) => {
                Some((DataType::Time64(*tu), nanos(tu) / nanos(u)))
            }
            _ => None,
        };
    };
    (nanos(u) < nanos(tu)).then(|| (DataType::Timestamp(*tu, tz.clone()), nanos(tu) / nanos(u)))
}

fn with_type(field: &FieldRef, data_type: DataType) -> FieldRef {
    Arc::new(field.as_ref().clone().with_data_type(data_type))
}

/// The type of `from`'s values once [`floor_time_units`] narrowed them for `to`:
/// `from` with each timestamp (and `Time64`) at any depth whose counterpart in `to` has a
/// coarser unit given that unit (its time zone kept); everything else, names included,
/// as in `from`. Struct fields correspond by name (as DataFusion's and Arrow's struct
/// casts match them), map keys and values by position; a field with no counterpart is
/// kept as it is.
pub(crate) fn narrowed_type(from: &DataType, to: &DataType) -> DataType {
    use DataType as D;
    if let Some((leaf, _)) = narrowed_leaf(from, to) {
        return leaf;
    }
    let element = |to: &DataType| match to {
        D::List(t) | D::LargeList(t) | D::FixedSizeList(t, _) => Some(t.data_type().clone()),
        _ => None,
    };
    match from {
        D::Struct(fields) => {
            let D::Struct(targets) = to else {
                return from.clone();
            };
            D::Struct(narrowed_fields(fields, |_, f| {
                targets.find(f.name()).map(|(_, t)| t.data_type().clone())
            }))
        }
        D::List(f) => match element(to) {
            Some(t) => D::List(with_type(f, narrowed_type(f.data_type(), &t))),
            None => from.clone(),
        },
        D::LargeList(f) => match element(to) {
            Some(t) => D::LargeList(with_type(f, narrowed_type(f.data_type(), &t))),
            None => from.clone(),
        },
        D::FixedSizeList(f, n) => match element(to) {
            Some(t) => D::FixedSizeList(with_type(f, narrowed_type(f.data_type(), &t)), *n),
            None => from.clone(),
        },
        D::Map(entries, sorted) => match (entries.data_type(), to) {
            (D::Struct(fields), D::Map(t, _)) => {
                let D::Struct(targets) = t.data_type() else {
                    return from.clone();
                };
                let narrowed =
                    narrowed_fields(fields, |i, _| targets.get(i).map(|t| t.data_type().clone()));
                D::Map(with_type(entries, D::Struct(narrowed)), *sorted)
            }
            _ => from.clone(),
        },
        D::Dictionary(key, values) => {
            let target = match to {
                D::Dictionary(_, t) => t.as_ref(),
                other => other,
            };
            D::Dictionary(key.clone(), Box::new(narrowed_type(values, target)))
        }
        _ => from.clone(),
    }
}

/// `fields` narrowed for the type `target` gives each (by position and field).
fn narrowed_fields(
    fields: &Fields,
    target: impl Fn(usize, &FieldRef) -> Option<DataType>,
) -> Fields {
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| match target(i, f) {
            Some(t) => with_type(f, narrowed_type(f.data_type(), &t)),
            None => Arc::clone(f),
        })
        .collect()
}

/// `array` with every timestamp (and `Time64`) value whose counterpart in `to` has a
/// coarser unit converted to that unit by flooring (`1969-12-31 23:59:59.9999995` →
/// `…59.999999`), at any depth; of type [`narrowed_type`]`(array's type, to)`. `array`
/// itself (no copy) when nothing narrows.
///
/// Errors: Arrow's, rebuilding a nested array.
pub(crate) fn floor_time_units(array: &ArrayRef, to: &DataType) -> Result<ArrayRef, ArrowError> {
    use DataType as D;
    let want = narrowed_type(array.data_type(), to);
    if &want == array.data_type() {
        return Ok(Arc::clone(array));
    }
    if let Some((leaf, divisor)) = narrowed_leaf(array.data_type(), to) {
        let values = cast_with_options(array, &D::Int64, &CastOptions::default())?;
        let floored = values
            .as_primitive::<Int64Type>()
            .unary::<_, Int64Type>(|v| v.div_euclid(divisor));
        return Ok(make_array(
            floored.into_data().into_builder().data_type(leaf).build()?,
        ));
    }
    let element = |to: &DataType| match to {
        D::List(t) | D::LargeList(t) | D::FixedSizeList(t, _) => Some(t.data_type().clone()),
        _ => None,
    };
    Ok(match (&want, to) {
        (D::Struct(fields), D::Struct(targets)) => {
            let s = array.as_struct();
            let mut columns = Vec::with_capacity(s.num_columns());
            for (column, field) in s.columns().iter().zip(fields.iter()) {
                columns.push(match targets.find(field.name()) {
                    Some((_, t)) => floor_time_units(column, t.data_type())?,
                    None => Arc::clone(column),
                });
            }
            Arc::new(StructArray::try_new(
                fields.clone(),
                columns,
                s.nulls().cloned(),
            )?)
        }
        (D::List(f), _) => list::<i32>(array.as_list(), f, element(to))?,
        (D::LargeList(f), _) => list::<i64>(array.as_list(), f, element(to))?,
        (D::FixedSizeList(f, n), _) => {
            let l = array.as_fixed_size_list();
            let values = match element(to) {
                Some(t) => floor_time_units(l.values(), &t)?,
                None => Arc::clone(l.values()),
            };
            Arc::new(FixedSizeListArray::try_new(
                Arc::clone(f),
                *n,
                values,
                l.nulls().cloned(),
            )?)
        }
        (D::Map(entries_field, sorted), D::Map(t, _)) => {
            let m = array.as_map();
            let (D::Struct(fields), D::Struct(targets)) =
                (entries_field.data_type(), t.data_type())
            else {
                return Ok(Arc::clone(array));
            };
            let entries = m.entries();
            let mut columns = Vec::with_capacity(entries.num_columns());
            for (i, column) in entries.columns().iter().enumerate() {
                columns.push(match targets.get(i) {
                    Some(t) => floor_time_units(column, t.data_type())?,
                    None => Arc::clone(column),
                });
            }
            let entries = StructArray::try_new(fields.clone(), columns, entries.nulls().cloned())?;
            Arc::new(MapArray::try_new(
                Arc::clone(entries_field),
                m.offsets().clone(),
                entries,
                m.nulls().cloned(),
                *sorted,
            )?)
        }
        (D::Dictionary(_, _), _) => {
            let d = array.as_any_dictionary();
            let target = match to {
                D::Dictionary(_, t) => t.as_ref(),
                other => other,
            };
            d.with_values(floor_time_units(d.values(), target)?)
        }
        _ => Arc::clone(array),
    })
}

fn list<O: OffsetSizeTrait>(
    l: &GenericListArray<O>,
    field: &Arc<Field>,
    element: Option<DataType>,
) -> Result<ArrayRef, ArrowError> {
    let values = match element {
        Some(t) => floor_time_units(l.values(), &t)?,
        None => Arc::clone(l.values()),
    };
    Ok(Arc::new(GenericListArray::<O>::try_new(
        Arc::clone(field),
        l.offsets().clone(),
        values,
        l.nulls().cloned(),
    )?))
}

/// Arrow's `cast_with_options` of `array` to `to`, with every narrowing of a time unit
/// flooring ([`floor_time_units`]) instead of rounding toward zero.
///
/// Errors: Arrow's (a cast it does not support or a value it rejects).
pub(crate) fn cast_flooring(
    array: &ArrayRef,
    to: &DataType,
    options: &CastOptions,
) -> Result<ArrayRef, ArrowError> {
    cast_with_options(&floor_time_units(array, to)?, to, options)
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{
        Int32Array, ListArray, MapBuilder, StringBuilder, Time64NanosecondArray,
        TimestampMicrosecondArray, TimestampNanosecondArray, TimestampNanosecondBuilder,
    };
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::TimestampMicrosecondType;

    use super::*;

    const NS: [Option<i64>; 7] = [
        Some(-500),
        Some(-1_000),
        Some(-1_001),
        Some(999),
        Some(i64::MIN),
        None,
        Some(1_234_567_890_123),
    ];
    const US: [Option<i64>; 7] = [
        Some(-1),
        Some(-1),
        Some(-2),
        Some(0),
        Some(-9_223_372_036_854_776),
        None,
        Some(1_234_567_890),
    ];

    fn us(tz: Option<&str>) -> DataType {
        DataType::Timestamp(TimeUnit::Microsecond, tz.map(Into::into))
    }

    fn micros(a: &ArrayRef) -> Vec<Option<i64>> {
        a.as_primitive::<TimestampMicrosecondType>()
            .iter()
            .collect()
    }

    #[test]
    fn nanoseconds_floor_to_microseconds_where_arrow_truncates() {
        let ns: ArrayRef = Arc::new(TimestampNanosecondArray::from(NS.to_vec()));
        // the fault: Arrow rounds toward zero
        let truncated = cast(&ns.slice(0, 1), &us(None)).unwrap();
        assert_eq!(micros(&truncated), [Some(0)]);
        for tz in [None, Some("UTC")] {
            let out = cast_flooring(&ns, &us(tz), &CastOptions::default()).unwrap();
            assert_eq!(out.data_type(), &us(tz));
            assert_eq!(micros(&out), US);
        }
        // a zone on the input is kept by the narrowing, the cast then gives the target's
        let zoned: ArrayRef =
            Arc::new(TimestampNanosecondArray::from(vec![Some(-500)]).with_timezone("+01:00"));
        let narrowed = floor_time_units(&zoned, &us(Some("UTC"))).unwrap();
        assert_eq!(narrowed.data_type(), &us(Some("+01:00")));
        assert_eq!(micros(&narrowed), [Some(-1)]);
    }

    #[test]
    fn widening_and_equal_units_are_left_alone() {
        let a: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![Some(-1)]));
        let ns = DataType::Timestamp(TimeUnit::Nanosecond, None);
        assert!(Arc::ptr_eq(&floor_time_units(&a, &ns).unwrap(), &a));
        assert!(Arc::ptr_eq(&floor_time_units(&a, &us(None)).unwrap(), &a));
        let i: ArrayRef = Arc::new(Int32Array::from(vec![1]));
        assert!(Arc::ptr_eq(&floor_time_units(&i, &us(None)).unwrap(), &i));
    }

    #[test]
    fn times_floor_too() {
        let t: ArrayRef = Arc::new(Time64NanosecondArray::from(vec![Some(1_999), None]));
        let out = floor_time_units(&t, &DataType::Time64(TimeUnit::Microsecond)).unwrap();
        assert_eq!(out.data_type(), &DataType::Time64(TimeUnit::Microsecond));
        assert_eq!(out.to_data().buffers()[0].typed_data::<i64>()[0], 1);
    }

    #[test]
    fn nested_values_floor_at_any_depth() {
        let ns_type = DataType::Timestamp(TimeUnit::Nanosecond, None);
        // struct<b: int, a: ts_ns> into struct<a: ts_us, b: int> (fields by name)
        let ts: ArrayRef = Arc::new(TimestampNanosecondArray::from(NS.to_vec()));
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![1; NS.len()]));
        let st = StructArray::from(vec![
            (Arc::new(Field::new("b", DataType::Int32, true)), ints),
            (Arc::new(Field::new("a", ns_type.clone(), true)), ts),
        ]);
        let target = DataType::Struct(
            vec![
                Field::new("a", us(None), true),
                Field::new("b", DataType::Int32, true),
            ]
            .into(),
        );
        let out = cast_flooring(
            &(Arc::new(st) as ArrayRef),
            &target,
            &CastOptions::default(),
        )
        .unwrap();
        assert_eq!(out.data_type(), &target);
        assert_eq!(micros(out.as_struct().column(0)), US);

        // list<ts_ns> into list<ts_us>
        let values = Arc::new(TimestampNanosecondArray::from(NS.to_vec())) as ArrayRef;
        let list: ArrayRef = Arc::new(ListArray::new(
            Arc::new(Field::new("item", ns_type.clone(), true)),
            datafusion::arrow::buffer::OffsetBuffer::from_lengths([3, 4]),
            values,
            None,
        ));
        let to = DataType::new_list(us(None), true);
        let out = cast_flooring(&list, &to, &CastOptions::default()).unwrap();
        assert_eq!(out.data_type(), &to);
        assert_eq!(micros(out.as_list::<i32>().values()), US);

        // map<ts_ns, ts_ns> into map<ts_us, ts_us>: keys and values
        let mut b = MapBuilder::new(
            None,
            TimestampNanosecondBuilder::new(),
            TimestampNanosecondBuilder::new(),
        );
        b.keys().append_value(-500);
        b.values().append_value(-1_001);
        b.append(true).unwrap();
        let map: ArrayRef = Arc::new(b.finish());
        let entries = |t: DataType| {
            DataType::Map(
                Arc::new(Field::new(
                    "key_value",
                    DataType::Struct(
                        vec![
                            Field::new("key", t.clone(), false),
                            Field::new("value", t, true),
                        ]
                        .into(),
                    ),
                    false,
                )),
                false,
            )
        };
        let out = cast_flooring(&map, &entries(us(None)), &CastOptions::default()).unwrap();
        let m = out.as_map();
        assert_eq!(micros(m.keys()), [Some(-1)]);
        assert_eq!(micros(m.values()), [Some(-2)]);
        // unrelated nested types pass through
        let strings: ArrayRef = {
            let mut s = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
            s.append(true).unwrap();
            Arc::new(s.finish())
        };
        assert!(Arc::ptr_eq(
            &floor_time_units(&strings, &entries(us(None))).unwrap(),
            &strings
        ));
    }
}
