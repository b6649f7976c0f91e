use std::collections::HashMap;

use datafusion::arrow::array::{Float64Array, Int32Array, ListArray, StructArray};
use datafusion::arrow::datatypes::{Field, Fields, Int32Type};

use super::*;

/// `Struct<a: Int32, b: Int32>` values; `None`: a NULL struct.
fn structs(values: &[Option<(Option<i32>, i32)>]) -> ArrayRef {
    let fields = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Int32, true),
    ]);
    let a: Int32Array = values.iter().map(|v| v.and_then(|(a, _)| a)).collect();
    let b: Int32Array = values.iter().map(|v| v.map(|(_, b)| b)).collect();
    let nulls = values.iter().map(Option::is_some).collect::<Vec<_>>();
    Arc::new(
        StructArray::try_new(fields, vec![Arc::new(a), Arc::new(b)], Some(nulls.into()))
            .expect("struct"),
    )
}

/// `List<Int32>` values, the element field carrying `metadata`; `None`: a NULL list.
fn lists(values: &[Option<Vec<Option<i32>>>], metadata: &HashMap<String, String>) -> ArrayRef {
    let plain = ListArray::from_iter_primitive::<Int32Type, _, _>(values.iter().cloned());
    let field =
        Arc::new(Field::new("element", DataType::Int32, true).with_metadata(metadata.clone()));
    let (_, offsets, elements, nulls) = plain.into_parts();
    Arc::new(ListArray::try_new(field, offsets, elements, nulls).expect("list"))
}

/// Every order of `values`.
fn permutations<T: Clone>(values: &[T]) -> Vec<Vec<T>> {
    if values.len() <= 1 {
        return vec![values.to_vec()];
    }
    let mut out = vec![];
    for i in 0..values.len() {
        let mut rest = values.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first.clone());
            out.push(p);
        }
    }
    out
}

/// `extremum` of `values` (rows of one array) as an ungrouped aggregate fed `batches`
/// batches, and as group `0` of a groups accumulator fed the same batches, through a
/// partial state merged into a final one.
fn both_ways(extremum: Extremum, values: &ArrayRef, batches: usize) -> (ScalarValue, ArrayRef) {
    let size = values.len().div_ceil(batches).max(1);
    let mut acc = NestedAccumulator::try_new(values.data_type(), extremum).expect("acc");
    let mut partial = NestedGroups::try_new(values.data_type(), extremum).expect("groups");
    let mut offset = 0;
    while offset < values.len() {
        let len = size.min(values.len() - offset);
        let batch = values.slice(offset, len);
        acc.update_batch(&[Arc::clone(&batch)]).expect("update");
        partial
            .update_batch(&[batch], &vec![0; len], None, 1)
            .expect("update groups");
        offset += len;
    }
    let state = partial.state(EmitTo::All).expect("state");
    let mut last = NestedGroups::try_new(values.data_type(), extremum).expect("groups");
    last.merge_batch(&state, &[0], 1).expect("merge");
    (
        acc.evaluate().expect("evaluate"),
        last.evaluate(EmitTo::All).expect("evaluate groups"),
    )
}

/// `extremum` of `values` both ways (every order, one and two batches) is `expected`
/// (a one-row array of the values' type).
fn assert_extreme(extremum: Extremum, values: &ArrayRef, expected: &ArrayRef) {
    let indices: Vec<u32> = (0..values.len() as u32).collect();
    for order in permutations(&indices) {
        let order = datafusion::arrow::array::UInt32Array::from(order);
        let reordered = datafusion::arrow::compute::take(values, &order, None).expect("take");
        for batches in [1, 2] {
            let (scalar, grouped) = both_ways(extremum, &reordered, batches);
            let scalar = scalar.to_array().expect("array");
            assert_eq!(
                scalar.as_ref(),
                expected.as_ref(),
                "{extremum:?} of {reordered:?} ({batches} batches): {scalar:?}"
            );
            assert_eq!(grouped.as_ref(), expected.as_ref(), "{extremum:?} grouped");
        }
    }
}

#[test]
fn structs_order_null_fields_first_whatever_the_row_order() {
    let values = structs(&[
        Some((None, 1)),
        Some((Some(2), 1)),
        Some((Some(1), 1)),
        None,
    ]);
    assert_extreme(Extremum::Max, &values, &structs(&[Some((Some(2), 1))]));
    assert_extreme(Extremum::Min, &values, &structs(&[Some((None, 1))]));
    // the first field decides; a NULL field is below every value of it
    let values = structs(&[Some((Some(1), 9)), Some((Some(2), 0)), Some((None, 100))]);
    assert_extreme(Extremum::Max, &values, &structs(&[Some((Some(2), 0))]));
    assert_extreme(Extremum::Min, &values, &structs(&[Some((None, 100))]));
    // only NULL structs: NULL
    let values = structs(&[None, None]);
    assert_extreme(Extremum::Max, &values, &structs(&[None]));
}

#[test]
fn lists_compare_element_by_element_null_elements_first_prefixes_smaller() {
    let none = HashMap::new();
    let values = lists(
        &[Some(vec![None]), Some(vec![Some(2)]), Some(vec![Some(1)])],
        &none,
    );
    assert_extreme(
        Extremum::Max,
        &values,
        &lists(&[Some(vec![Some(2)])], &none),
    );
    assert_extreme(Extremum::Min, &values, &lists(&[Some(vec![None])], &none));
    let values = lists(
        &[
            Some(vec![Some(1), Some(2)]),
            Some(vec![Some(1)]),
            Some(vec![]),
            None,
        ],
        &none,
    );
    assert_extreme(
        Extremum::Max,
        &values,
        &lists(&[Some(vec![Some(1), Some(2)])], &none),
    );
    assert_extreme(Extremum::Min, &values, &lists(&[Some(vec![])], &none));
}

#[test]
fn values_keep_their_exact_type_nested_field_metadata_too() {
    // an Iceberg list column's element field carries its field id
    let id = HashMap::from([("PARQUET:field_id".to_string(), "4".to_string())]);
    let values = lists(&[Some(vec![Some(1), Some(2)]), Some(vec![Some(0)])], &id);
    assert_extreme(Extremum::Min, &values, &lists(&[Some(vec![Some(0)])], &id));
    let (scalar, grouped) = both_ways(Extremum::Max, &values, 1);
    assert_eq!(&scalar.data_type(), values.data_type());
    assert_eq!(grouped.data_type(), values.data_type());
    let mut sliding = SlidingNested::try_new(values.data_type(), Extremum::Max).expect("new");
    sliding
        .update_batch(&[Arc::clone(&values)])
        .expect("update");
    assert_eq!(
        &sliding.evaluate().expect("evaluate").data_type(),
        values.data_type()
    );
    // an empty group / aggregate: a NULL of the type
    let mut acc = NestedAccumulator::try_new(values.data_type(), Extremum::Min).expect("new");
    let null = acc.evaluate().expect("evaluate");
    assert!(null.is_null());
    assert_eq!(&null.data_type(), values.data_type());
}

#[test]
fn floats_inside_are_ordered_as_min_max_of_floats_order_them() {
    // a list of structs {x: double}: -NaN (x86's 0.0 / 0.0) is the canonical NaN, above
    // every number; -0.0 below 0.0
    let neg_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
    let list_of = |xs: &[f64]| -> ArrayRef {
        let fields = Fields::from(vec![Field::new("x", DataType::Float64, true)]);
        let inner = StructArray::try_new(
            fields.clone(),
            vec![Arc::new(Float64Array::from(xs.to_vec()))],
            None,
        )
        .expect("struct");
        let field = Arc::new(Field::new("element", DataType::Struct(fields), true));
        let offsets = datafusion::arrow::buffer::OffsetBuffer::from_lengths(vec![1; xs.len()]);
        Arc::new(ListArray::try_new(field, offsets, Arc::new(inner), None).expect("list"))
    };
    let values = list_of(&[1.0, neg_nan, f64::INFINITY]);
    assert_extreme(Extremum::Max, &values, &list_of(&[f64::NAN]));
    assert_extreme(Extremum::Min, &values, &list_of(&[1.0]));
    let values = list_of(&[0.0, -0.0]);
    assert_extreme(Extremum::Max, &values, &list_of(&[0.0]));
    assert_extreme(Extremum::Min, &values, &list_of(&[-0.0]));
}

#[test]
fn groups_filter_and_emit_the_first_groups() {
    let values = structs(&[
        Some((Some(1), 1)),
        Some((Some(5), 1)),
        Some((Some(3), 1)),
        None,
    ]);
    let filter = BooleanArray::from(vec![Some(true), Some(false), None, Some(true)]);
    let mut acc = NestedGroups::try_new(values.data_type(), Extremum::Max).expect("groups");
    // groups 0, 1, 0, 2: group 0 keeps 1 (5 filtered out? no: 5 is group 1's, filtered)
    acc.update_batch(&[Arc::clone(&values)], &[0, 1, 0, 2], Some(&filter), 3)
        .expect("update");
    assert!(acc.size() > 0);
    let first = acc.evaluate(EmitTo::First(2)).expect("first");
    assert_eq!(
        first.as_ref(),
        structs(&[Some((Some(1), 1)), None]).as_ref()
    );
    let rest = acc.evaluate(EmitTo::All).expect("rest");
    assert_eq!(rest.as_ref(), structs(&[None]).as_ref());
    // skipped partial aggregation: the values, filtered rows NULL
    let state = acc
        .convert_to_state(&[Arc::clone(&values)], Some(&filter))
        .expect("state");
    let expected = structs(&[Some((Some(1), 1)), None, None, None]);
    assert_eq!(state[0].as_ref(), expected.as_ref());
}

#[test]
fn a_sliding_frame_keeps_the_extreme_of_the_rows_in_it() {
    let none = HashMap::new();
    let rows: Vec<Option<Vec<Option<i32>>>> = vec![
        Some(vec![Some(3)]),
        None,
        Some(vec![None]),
        Some(vec![Some(5), Some(1)]),
        Some(vec![Some(5)]),
        Some(vec![Some(2)]),
        None,
        Some(vec![]),
        Some(vec![Some(4)]),
    ];
    let values = lists(&rows, &none);
    for extremum in [Extremum::Max, Extremum::Min] {
        for width in 1..=4 {
            // frames [i - width + 1, i]: add row i, retract row i - width
            let mut sliding = SlidingNested::try_new(values.data_type(), extremum).expect("new");
            for i in 0..values.len() {
                sliding.update_batch(&[values.slice(i, 1)]).expect("update");
                if i >= width {
                    sliding
                        .retract_batch(&[values.slice(i - width, 1)])
                        .expect("retract");
                }
                let start = (i + 1).saturating_sub(width);
                let mut whole =
                    NestedAccumulator::try_new(values.data_type(), extremum).expect("new");
                whole
                    .update_batch(&[values.slice(start, i + 1 - start)])
                    .expect("update");
                assert_eq!(
                    sliding.evaluate().expect("slide"),
                    whole.evaluate().expect("whole"),
                    "{extremum:?}, width {width}, row {i}"
                );
            }
        }
    }
    // a hand-checked frame: max of [[5, 1], [5], [2]] is [5, 1], min [2]
    let mut max = SlidingNested::try_new(values.data_type(), Extremum::Max).expect("new");
    max.update_batch(&[values.slice(0, 6)]).expect("update");
    max.retract_batch(&[values.slice(0, 3)]).expect("retract");
    let expected = lists(&[Some(vec![Some(5), Some(1)])], &none);
    assert_eq!(
        max.evaluate()
            .expect("max")
            .to_array()
            .expect("array")
            .as_ref(),
        expected.as_ref()
    );
}

#[test]
fn maps_are_found_at_any_depth() {
    let entries = Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Int32, true),
        ])),
        false,
    );
    let map = DataType::Map(Arc::new(entries), false);
    assert!(holds_map(&map));
    let in_list = DataType::List(Arc::new(Field::new("element", map.clone(), true)));
    assert!(holds_map(&in_list));
    let in_struct = DataType::Struct(Fields::from(vec![Field::new("m", in_list, true)]));
    assert!(holds_map(&in_struct));
    assert!(!holds_map(&DataType::Struct(Fields::from(vec![
        Field::new("x", DataType::Int32, true)
    ]))));
    assert!(is_nested(&in_struct) && !is_nested(&map) && !is_nested(&DataType::Int32));
}
