use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{AsArray, Float64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{Field, Fields, Schema};
use datafusion::arrow::util::display::FormatOptions;
use datafusion::arrow::util::pretty::{pretty_format_batches, pretty_format_batches_with_options};
use datafusion::functions_aggregate::sum::sum_udaf;
use datafusion::physical_expr::expressions::col;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::prelude::{SessionConfig, SessionContext};

use super::*;
use datafusion::logical_expr::EmitTo;

use crate::datafusion::min_max_nested::NestedGroups;

/// The NaN x86 computes for `0.0 / 0.0`: sign bit set.
fn neg_nan() -> f64 {
    f64::from_bits(f64::NAN.to_bits() | (1 << 63))
}

/// `extremum`'s groups accumulator (as DataFusion asks for it) over a column `f` of
/// `data_type`, and whether DataFusion would use one.
fn groups(extremum: Extremum, data_type: &DataType) -> (bool, Box<dyn GroupsAccumulator>) {
    let schema = Schema::new(vec![Field::new("f", data_type.clone(), true)]);
    let exprs: Vec<Arc<dyn PhysicalExpr>> = vec![col("f", &schema).expect("column")];
    let fields: Vec<FieldRef> = vec![Arc::new(schema.field(0).clone())];
    let f = MinMax::new(extremum);
    let args = || AccumulatorArgs {
        return_field: Arc::clone(&fields[0]),
        schema: &schema,
        ignore_nulls: false,
        order_bys: &[],
        is_reversed: false,
        name: f.name(),
        is_distinct: false,
        exprs: &exprs,
        expr_fields: &fields,
    };
    let supported = f.groups_accumulator_supported(args());
    (
        supported,
        f.create_groups_accumulator(args()).expect("accumulator"),
    )
}

/// The values of groups 0..n of a Float64 `evaluate`/`state` as bits (`None`: NULL).
fn bits(a: &ArrayRef) -> Vec<Option<u64>> {
    a.as_primitive::<Float64Type>()
        .iter()
        .map(|v| v.map(f64::to_bits))
        .collect()
}

fn b(v: f64) -> Option<u64> {
    Some(v.to_bits())
}

/// Every order of `values` as its own group: group `g` gets the `g`-th permutation.
fn permutations(values: &[Option<f64>]) -> Vec<Vec<Option<f64>>> {
    if values.len() <= 1 {
        return vec![values.to_vec()];
    }
    let mut out = vec![];
    for i in 0..values.len() {
        let mut rest = values.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest) {
            p.insert(0, first);
            out.push(p);
        }
    }
    out
}

/// Feed `groups` (group `g`'s rows in order) to `acc`, the rows of all groups
/// interleaved row by row, in `batches` batches.
fn feed(acc: &mut dyn GroupsAccumulator, groups: &[Vec<Option<f64>>], batches: usize) {
    let mut rows = vec![];
    let longest = groups.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        for (g, values) in groups.iter().enumerate() {
            if let Some(v) = values.get(i) {
                rows.push((g, *v));
            }
        }
    }
    let size = rows.len().div_ceil(batches).max(1);
    for chunk in rows.chunks(size) {
        let values: ArrayRef = Arc::new(Float64Array::from(
            chunk.iter().map(|(_, v)| *v).collect::<Vec<_>>(),
        ));
        let indices: Vec<usize> = chunk.iter().map(|(g, _)| *g).collect();
        acc.update_batch(&[values], &indices, None, groups.len())
            .expect("update");
    }
}

#[test]
fn float_groups_give_sparks_answer_in_every_row_order_and_through_a_merge() {
    let values = [Some(1.5), Some(f64::NAN), Some(neg_nan()), Some(2.5), None];
    let orders = permutations(&values);
    assert_eq!(orders.len(), 120);
    for batches in [1, 3] {
        let (_, mut max) = groups(Extremum::Max, &DataType::Float64);
        let (_, mut min) = groups(Extremum::Min, &DataType::Float64);
        feed(max.as_mut(), &orders, batches);
        feed(min.as_mut(), &orders, batches);
        let max = bits(&max.evaluate(EmitTo::All).expect("max"));
        let min = bits(&min.evaluate(EmitTo::All).expect("min"));
        for (g, order) in orders.iter().enumerate() {
            assert_eq!(max[g], b(f64::NAN), "max of {order:?}");
            assert_eq!(min[g], b(1.5), "min of {order:?}");
        }
    }

    // each order split in two partial aggregations (the first two rows, the rest) whose
    // states are merged, in both orders
    let heads: Vec<_> = orders.iter().map(|o| o[..2].to_vec()).collect();
    let tails: Vec<_> = orders.iter().map(|o| o[2..].to_vec()).collect();
    for (extremum, expected) in [(Extremum::Max, f64::NAN), (Extremum::Min, 1.5)] {
        let mut states = vec![];
        for part in [&heads, &tails] {
            let (_, mut partial) = groups(extremum, &DataType::Float64);
            feed(partial.as_mut(), part, 2);
            states.push(partial.state(EmitTo::All).expect("state"));
        }
        for merge_order in [[0, 1], [1, 0]] {
            let (_, mut last) = groups(extremum, &DataType::Float64);
            for i in merge_order {
                let indices: Vec<usize> = (0..orders.len()).collect();
                last.merge_batch(&states[i], &indices, orders.len())
                    .expect("merge");
            }
            let out = bits(&last.evaluate(EmitTo::All).expect("evaluate"));
            for (g, order) in orders.iter().enumerate() {
                assert_eq!(out[g], b(expected), "{extremum:?} of {order:?}");
            }
        }
    }
}

#[test]
fn float_groups_at_the_edges() {
    // (values, max, min)
    type Case = (Vec<Option<f64>>, Option<u64>, Option<u64>);
    let cases: Vec<Case> = vec![
        // only NaNs: both NaN, the canonical one
        (
            vec![Some(neg_nan()), Some(f64::NAN)],
            b(f64::NAN),
            b(f64::NAN),
        ),
        (vec![None, None], None, None),
        (vec![], None, None),
        // the starting values are answers too
        (
            vec![Some(f64::NEG_INFINITY)],
            b(f64::NEG_INFINITY),
            b(f64::NEG_INFINITY),
        ),
        (
            vec![Some(f64::INFINITY), Some(f64::NEG_INFINITY), None],
            b(f64::INFINITY),
            b(f64::NEG_INFINITY),
        ),
        // total order: -0.0 below 0.0, whichever comes first
        (vec![Some(0.0), Some(-0.0)], b(0.0), b(-0.0)),
        (vec![Some(-0.0), Some(0.0)], b(0.0), b(-0.0)),
        (
            vec![Some(f64::INFINITY), Some(neg_nan()), Some(-0.0)],
            b(f64::NAN),
            b(-0.0),
        ),
    ];
    let groups_values: Vec<_> = cases.iter().map(|(v, _, _)| v.clone()).collect();
    let (_, mut max) = groups(Extremum::Max, &DataType::Float64);
    let (_, mut min) = groups(Extremum::Min, &DataType::Float64);
    feed(max.as_mut(), &groups_values, 1);
    feed(min.as_mut(), &groups_values, 1);
    let max = bits(&max.evaluate(EmitTo::All).expect("max"));
    let min = bits(&min.evaluate(EmitTo::All).expect("min"));
    for (g, (values, want_max, want_min)) in cases.iter().enumerate() {
        assert_eq!(max[g], *want_max, "max of {values:?}");
        assert_eq!(min[g], *want_min, "min of {values:?}");
    }

    // Float32 and Float16 alike, their NaNs with the sign bit set too
    let values: ArrayRef = Arc::new(Float64Array::from(vec![
        Some(1.5),
        Some(neg_nan()),
        Some(2.5),
        None,
    ]));
    for t in [DataType::Float32, DataType::Float16] {
        let narrow = cast(&values, &t).expect("cast");
        let nan = cast(&narrow, &DataType::Float64).expect("cast");
        assert!(nan
            .as_primitive::<Float64Type>()
            .value(1)
            .is_sign_negative());
        let (_, mut max) = groups(Extremum::Max, &t);
        let (_, mut min) = groups(Extremum::Min, &t);
        for acc in [&mut max, &mut min] {
            acc.update_batch(&[Arc::clone(&narrow)], &[0, 0, 0, 0], None, 1)
                .expect("update");
        }
        let max = cast(&max.evaluate(EmitTo::All).expect("max"), &DataType::Float64).expect("cast");
        let min = cast(&min.evaluate(EmitTo::All).expect("min"), &DataType::Float64).expect("cast");
        let max = max.as_primitive::<Float64Type>().value(0);
        assert!(max.is_nan() && max.is_sign_positive(), "{t}: {max}");
        assert_eq!(min.as_primitive::<Float64Type>().value(0), 1.5, "{t}");
    }
}

#[test]
fn every_type_keeps_a_groups_accumulator_floats_structs_and_lists_icefloes() {
    let nested = |acc: &dyn GroupsAccumulator| (acc as &dyn std::any::Any).is::<NestedGroups>();
    for extremum in [Extremum::Max, Extremum::Min] {
        // the vectorized path of DataFusion's own, untouched: TPC-H's decimals, keys, …;
        // floats stay on a vectorized path, icefloe's (the values above are its answers)
        for t in [
            DataType::Int64,
            DataType::Decimal128(15, 2),
            DataType::Date32,
            DataType::Utf8View,
            DataType::Float16,
            DataType::Float32,
            DataType::Float64,
        ] {
            let (supported, acc) = groups(extremum, &t);
            assert!(supported && !nested(acc.as_ref()), "{t}");
        }
        // structs and lists (DataFusion has no groups accumulator for lists), with floats
        // in them or not: icefloe's order of nested values
        let st = DataType::Struct(Fields::from(vec![Field::new("x", DataType::Float64, true)]));
        let list = DataType::List(Arc::new(Field::new("element", DataType::Utf8, true)));
        let large = DataType::LargeList(Arc::new(Field::new("element", st.clone(), true)));
        let fixed = DataType::FixedSizeList(Arc::new(Field::new("e", DataType::Int32, true)), 2);
        for t in [st, list, large, fixed] {
            let (supported, acc) = groups(extremum, &t);
            assert!(supported && nested(acc.as_ref()), "{t}");
        }
    }
}

/// A session of `partitions` target partitions with icefloe's `min`/`max`.
fn session(partitions: usize) -> SessionContext {
    let ctx =
        SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    register_min_max(&ctx);
    ctx
}

async fn text(ctx: &SessionContext, sql: &str) -> String {
    let batches = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&batches).expect("format").to_string()
}

/// [`text`] with NULLs, at any depth, printed `NULL`.
async fn text_with_nulls(ctx: &SessionContext, sql: &str) -> String {
    let batches = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let options = FormatOptions::default().with_null("NULL");
    pretty_format_batches_with_options(&batches, &options)
        .expect("format")
        .to_string()
}

/// `0.0 / 0.0` in SQL: the NaN with its sign bit set on x86.
const NEG_NAN: &str = "CAST(0 AS DOUBLE) / CAST(0 AS DOUBLE)";

#[tokio::test]
async fn sql_min_max_order_nan_above_numbers_grouped_or_not_computed_or_not() {
    for partitions in [1, 4] {
        let ctx = session(partitions);
        for nan in ["'NaN'::double", NEG_NAN] {
            let rows = format!(
                "(VALUES ('b', 1.5::double), ('b', {nan}), ('b', 2.5::double), \
                 ('c', {nan}), ('d', NULL::double)) AS v(k, f)"
            );
            let grouped = text(
                &ctx,
                &format!("SELECT k, max(f) AS mx, min(f) AS mn FROM {rows} GROUP BY k ORDER BY k"),
            )
            .await;
            let expected = "\
+---+-----+-----+
| k | mx  | mn  |
+---+-----+-----+
| b | NaN | 1.5 |
| c | NaN | NaN |
| d |     |     |
+---+-----+-----+";
            assert_eq!(grouped, expected, "{nan}, {partitions} partitions");
            let ungrouped = text(
                &ctx,
                &format!("SELECT max(f) AS mx, min(f) AS mn FROM {rows} WHERE k = 'b'"),
            )
            .await;
            assert!(
                ungrouped.contains("| NaN | 1.5 |"),
                "{nan}, {partitions}: {ungrouped}"
            );
            // a sliding frame (retracting rows) and a growing one
            let windows = text(
                &ctx,
                &format!(
                    "SELECT i, max(f) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) \
                     AS slide_max, min(f) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND \
                     CURRENT ROW) AS slide_min, min(f) OVER (ORDER BY i) AS run_min \
                     FROM (VALUES (1, 1.5::double), (2, {nan}), (3, 2.5::double), \
                     (4, 0.5::double)) AS w(i, f) ORDER BY i"
                ),
            )
            .await;
            let expected = "\
+---+-----------+-----------+---------+
| i | slide_max | slide_min | run_min |
+---+-----------+-----------+---------+
| 1 | 1.5       | 1.5       | 1.5     |
| 2 | NaN       | 1.5       | 1.5     |
| 3 | NaN       | 2.5       | 1.5     |
| 4 | 2.5       | 0.5       | 0.5     |
+---+-----------+-----------+---------+";
            assert_eq!(windows, expected, "{nan}, {partitions} partitions");
        }
    }
}

#[tokio::test]
async fn a_struct_holding_a_computed_nan_is_ordered_by_its_canonical_nan() {
    let ctx = session(1);
    // {x: -NaN} > {x: 1.0} as {x: NaN} is, grouped and not
    for group_by in ["GROUP BY k", ""] {
        let out = text(
            &ctx,
            &format!(
                "SELECT max(s)['x'] AS mx, min(s)['x'] AS mn FROM (SELECT k, named_struct('x', f) \
                 AS s FROM (VALUES ('a', 1.0::double), ('a', {NEG_NAN})) AS v(k, f)) {group_by}"
            ),
        )
        .await;
        assert!(out.contains("| NaN | 1.0 |"), "{group_by}: {out}");
    }
}

/// The report's structs (one with a NULL field) in `order`, as `VALUES` rows `(k, s)`.
fn struct_rows(order: &[usize]) -> String {
    let all = [
        "named_struct('a', CAST(NULL AS INT), 'b', 1)",
        "named_struct('a', 2, 'b', 1)",
        "named_struct('a', 1, 'b', 1)",
        "CAST(NULL AS STRUCT<a INT, b INT>)",
    ];
    let rows: Vec<String> = order
        .iter()
        .enumerate()
        .map(|(i, &o)| format!("({i}, 'k', {})", all[o]))
        .collect();
    format!("(VALUES {}) AS v(i, k, s)", rows.join(", "))
}

#[tokio::test]
async fn sql_structs_order_a_null_field_first_in_every_row_order_and_plan() {
    for partitions in [1, 4] {
        let ctx = session(partitions);
        for order in [[0, 1, 2, 3], [1, 0, 2, 3], [3, 2, 1, 0], [2, 3, 0, 1]] {
            let rows = struct_rows(&order);
            for group_by in ["", "GROUP BY k"] {
                let out = text_with_nulls(
                    &ctx,
                    &format!("SELECT max(s) AS mx, min(s) AS mn FROM {rows} {group_by}"),
                )
                .await;
                assert!(
                    out.contains("| {a: 2, b: 1} | {a: NULL, b: 1} |"),
                    "{order:?} {group_by} {partitions}: {out}"
                );
            }
            // a sliding frame of two rows and a growing one: the extreme of the rows each
            // holds, by the order of the values (NULL ignored)
            let out = text_with_nulls(
                &ctx,
                &format!(
                    "SELECT i, max(s) OVER (ORDER BY i ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) \
                     AS mx, min(s) OVER (ORDER BY i) AS mn FROM {rows} ORDER BY i"
                ),
            )
            .await;
            let shown = ["{a: NULL, b: 1}", "{a: 2, b: 1}", "{a: 1, b: 1}", "NULL"];
            let rank = |v: usize| [0, 2, 1, usize::MAX][v];
            let extreme = |frame: &[usize], max: bool| {
                let values = frame.iter().copied().filter(|&v| v != 3);
                let best = match max {
                    true => values.max_by_key(|&v| rank(v)),
                    false => values.min_by_key(|&v| rank(v)),
                };
                shown[best.unwrap_or(3)]
            };
            for i in 0..order.len() {
                let mx = extreme(&order[i.saturating_sub(1)..=i], true);
                let mn = extreme(&order[..=i], false);
                let line = out.lines().nth(3 + i).unwrap_or_default();
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                assert_eq!(cells[2..4], [mx, mn], "{order:?} row {i}: {out}");
            }
        }
    }
}

#[tokio::test]
async fn sql_lists_order_null_elements_first_and_prefixes_lower() {
    for partitions in [1, 4] {
        let ctx = session(partitions);
        for rows in [
            "('k', [NULL]), ('k', [2]), ('k', [1])",
            "('k', [1]), ('k', [2]), ('k', [NULL])",
            "('k', [2]), ('k', [NULL]), ('k', [1])",
        ] {
            for group_by in ["", "GROUP BY k"] {
                let out = text_with_nulls(
                    &ctx,
                    &format!(
                        "SELECT max(x) AS mx, min(x) AS mn FROM (VALUES {rows}) AS v(k, x) \
                         {group_by}"
                    ),
                )
                .await;
                assert!(
                    out.contains("| [2] | [NULL] |"),
                    "{rows} {group_by}, {partitions}: {out}"
                );
            }
        }
        let out = text(
            &ctx,
            "SELECT max(x) AS mx, min(x) AS mn FROM (VALUES ([1, 2]), ([1]), ([0, 9]), \
             (CAST(NULL AS INT[]))) AS v(x)",
        )
        .await;
        assert!(out.contains("| [1, 2] | [0, 9] |"), "{out}");
    }
}

#[tokio::test]
async fn sql_min_distinct_is_min_negative_zero_below_zero() {
    let ctx = session(2);
    let rows = "(VALUES (1, CAST('0.0' AS DOUBLE)), (1, CAST('-0.0' AS DOUBLE))) AS v(g, x)";
    for group_by in ["", "GROUP BY g"] {
        let out = text(
            &ctx,
            &format!(
                "SELECT min(x) AS a, min(DISTINCT x) AS b, max(DISTINCT x) AS c FROM {rows} \
                 {group_by}"
            ),
        )
        .await;
        assert!(out.contains("| -0.0 | -0.0 | 0.0 |"), "{group_by}: {out}");
    }
}

#[tokio::test]
async fn sql_min_max_of_a_map_is_a_planning_error_naming_it() {
    let ctx = session(1);
    for (sql, f) in [
        ("SELECT min(m) FROM (SELECT MAP(['x'], [1]) AS m)", "min(m)"),
        (
            "SELECT max(s) FROM (SELECT named_struct('a', MAP(['x'], [1])) AS s)",
            "max(s)",
        ),
        (
            "SELECT k, max(l) FROM (SELECT 1 AS k, [MAP(['x'], [1])] AS l) GROUP BY k",
            "max(l)",
        ),
    ] {
        let err = match ctx.sql(sql).await {
            Ok(df) => df.collect().await.map(|_| ()).expect_err(sql),
            Err(e) => e,
        };
        let message = err.to_string();
        assert!(
            message.starts_with("Error during planning: ")
                && message.contains(&format!("{f}: a map has no order")),
            "{sql}: {message}"
        );
    }
}

#[test]
fn the_result_field_keeps_the_arguments_metadata() {
    let uuid = HashMap::from([("ARROW:extension:name".to_string(), "arrow.uuid".to_string())]);
    let arg: FieldRef =
        Arc::new(Field::new("u", DataType::FixedSizeBinary(16), true).with_metadata(uuid.clone()));
    for extremum in [Extremum::Max, Extremum::Min] {
        let f = MinMax::new(extremum);
        let out = f.return_field(&[Arc::clone(&arg)]).expect("field");
        assert_eq!(out.metadata(), &uuid, "{extremum:?}");
        assert_eq!(out.data_type(), arg.data_type());
    }
}

#[test]
fn registering_replaces_datafusions_functions_only_and_once() {
    let ctx = SessionContext::new();
    register_min_max(&ctx);
    register_min_max(&ctx);
    for name in ["max", "min"] {
        let f = ctx.udaf(name).expect("registered");
        assert!(f.inner().is::<MinMax>(), "{name}");
    }
    // a user's own `max` stays
    let ctx = SessionContext::new();
    ctx.register_udaf((*sum_udaf()).clone().with_aliases(["max"]));
    register_min_max(&ctx);
    assert_eq!(ctx.udaf("max").expect("max").name(), "sum");
    assert!(ctx.udaf("min").expect("min").inner().is::<MinMax>());
}

#[cfg(any(feature = "distributed", feature = "ballista"))]
#[test]
fn codecs_send_min_max_as_icefloes() {
    for f in min_max_udafs() {
        let bytes = encode_min_max(&f).expect("encoded");
        let back = decode_min_max(bytes).expect("decoded");
        assert_eq!(back.as_ref(), f.as_ref());
        assert_eq!(back.name(), f.name());
    }
    assert!(encode_min_max(&max_udaf()).is_none());
    assert!(encode_min_max(&sum_udaf()).is_none());
    assert!(decode_min_max(b"").is_none());
}
