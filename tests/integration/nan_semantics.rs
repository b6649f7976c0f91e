//! NaN as Spark has it, whatever NaN a writer stored: every NaN equals `'NaN'` and is
//! greater than every number, also the NaN with its sign bit set that x86 computes for
//! `0.0 / 0.0` (Arrow's total order alone puts that one below every number). The answer
//! of a row must not depend on the other values of its file (which decide pruning).

use icefloe::catalog::TableIdent;

use crate::dml::{lake, ok, run, Lake};
use crate::interop::{assert_same_rows, duckdb_read, icefloe_rows, pyiceberg_read, python};

/// `0.0 / 0.0` as DataFusion computes it on x86: a NaN with the sign bit set.
const NEG_NAN: &str = "CAST(0 AS DOUBLE) / CAST(0 AS DOUBLE)";

/// `ns.<name>` (id, f double) in two files, each with a positive and a negative NaN:
/// the first file's numbers are all ≥ 0 (so `f < 0.0` prunes it by its bounds), the
/// second's are not.
async fn two_files(lake: &Lake, name: &str, partitioning: &str, properties: &str) {
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} (id INT, f DOUBLE) {partitioning} \
             TBLPROPERTIES ({properties})"
        ),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO ice.ns.{name} VALUES (1, 1.0), (2, 'NaN'::double), (3, {NEG_NAN})"),
    )
    .await;
    ok(
        &lake.ctx,
        &format!("INSERT INTO ice.ns.{name} VALUES (4, -1.0), (5, 'NaN'::double), (6, {NEG_NAN})"),
    )
    .await;
}

async fn ids(lake: &Lake, q: &str) -> String {
    let text = ok(&lake.ctx, q).await;
    text.lines()
        .filter_map(|l| l.trim_matches(|c| c == '|' || c == ' ').parse::<i64>().ok())
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

async fn check_reads(lake: &Lake, t: &str) {
    let q = |w: &str| format!("SELECT id FROM ice.ns.{t} WHERE {w} ORDER BY id");
    assert_eq!(ids(lake, &q("f < 0.0")).await, "4", "{t}: f < 0.0");
    assert_eq!(ids(lake, &q("f <= -1.0")).await, "4", "{t}: f <= -1.0");
    assert_eq!(
        ids(lake, &q("f = 'NaN'::double")).await,
        "2,3,5,6",
        "{t}: f = NaN"
    );
    assert_eq!(ids(lake, &q("f > 0.5")).await, "1,2,3,5,6", "{t}: f > 0.5");
    assert_eq!(ids(lake, &q("isnan(f)")).await, "2,3,5,6", "{t}: isnan");
    // NaN sorts last, all NaNs together
    assert_eq!(
        ids(lake, &format!("SELECT id FROM ice.ns.{t} ORDER BY f, id")).await,
        "4,1,2,3,5,6",
        "{t}: order"
    );
    assert_eq!(
        ids(
            lake,
            &format!("SELECT count(DISTINCT f) AS n FROM ice.ns.{t} WHERE isnan(f)")
        )
        .await,
        "1",
        "{t}: one NaN"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_negative_nan_is_nan_in_reads_and_dml() {
    let lake = lake().await;
    let tables = [
        ("part", "PARTITIONED BY (f)", "'format-version'='2'"),
        ("cow", "", "'format-version'='2'"),
        (
            "mor",
            "",
            "'format-version'='2', 'write.delete.mode'='merge-on-read'",
        ),
        (
            "dv",
            "",
            "'format-version'='3', 'write.delete.mode'='merge-on-read'",
        ),
    ];
    for (t, partitioning, properties) in tables {
        two_files(&lake, t, partitioning, properties).await;
        if t == "part" {
            // the writer stores one NaN: one NaN partition per INSERT, not one per sign
            assert_eq!(
                ids(&lake, "SELECT count(*) AS n FROM ice.ns.\"part$files\"").await,
                "4",
                "part: data files"
            );
        }
        check_reads(&lake, t).await;
        // the row of a file the bounds prune and the row of one they keep alike
        let deleted = ok(&lake.ctx, &format!("DELETE FROM ice.ns.{t} WHERE f < 0.0")).await;
        assert!(deleted.contains("| 1     |"), "{t}: {deleted}");
        assert_eq!(
            ids(&lake, &format!("SELECT id FROM ice.ns.{t} ORDER BY id")).await,
            "1,2,3,5,6",
            "{t}: after DELETE"
        );
        let updated = ok(
            &lake.ctx,
            &format!("UPDATE ice.ns.{t} SET id = id + 10 WHERE f = 'NaN'::double"),
        )
        .await;
        assert!(updated.contains("| 4     |"), "{t}: {updated}");
        assert_eq!(
            ids(&lake, &format!("SELECT id FROM ice.ns.{t} ORDER BY id")).await,
            "1,12,13,15,16",
            "{t}: after UPDATE"
        );
        other_engines_agree(&lake, t).await;
    }
}

/// PyIceberg and DuckDB read the same rows of `ns.<t>` (id, f) as icefloe: the NaNs
/// icefloe wrote and the deletes it committed.
async fn other_engines_agree(lake: &Lake, t: &str) {
    if python().is_none() {
        return;
    }
    let schema = serde_json::json!({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": false, "type": "int"},
        {"id": 2, "name": "f", "required": false, "type": "double"}
    ]});
    let ident = format!("ns.{t}");
    let ours = icefloe_rows(&lake.ctx, &format!("ice.{ident}"), &schema).await;
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, &ident);
    assert_same_rows(
        &format!("{ident}: icefloe vs PyIceberg"),
        pyi["rows"].as_array().expect("rows"),
        &ours,
    );
    let location = lake
        .catalog
        .load_table(&TableIdent::parse(&ident))
        .await
        .expect("load")
        .metadata_location()
        .to_string();
    let duck = duckdb_read(&location);
    assert_same_rows(
        &format!("{ident}: icefloe vs DuckDB"),
        duck["rows"].as_array().expect("rows"),
        &ours,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_negative_nan_inside_structs_lists_and_maps_is_nan() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.n (id INT, st STRUCT<x DOUBLE, y FLOAT>, l ARRAY<DOUBLE>, \
         m MAP<STRING, DOUBLE>) TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    ok(
        &lake.ctx,
        &format!(
            "INSERT INTO ice.ns.n VALUES \
             (1, named_struct('x', 1.0, 'y', CAST(1.0 AS FLOAT)), [1.0], MAP {{'a': 1.0}}), \
             (2, named_struct('x', {NEG_NAN}, 'y', CAST({NEG_NAN} AS FLOAT)), [{NEG_NAN}], \
                 MAP {{'a': {NEG_NAN}}}), \
             (3, named_struct('x', -1.0, 'y', CAST(-1.0 AS FLOAT)), [-1.0], MAP {{'a': -1.0}})"
        ),
    )
    .await;
    let q = |w: &str| format!("SELECT id FROM ice.ns.n WHERE {w} ORDER BY id");
    assert_eq!(ids(&lake, &q("st.x < 0.0")).await, "3");
    assert_eq!(ids(&lake, &q("st.y < 0.0")).await, "3");
    assert_eq!(ids(&lake, &q("st.x = 'NaN'::double")).await, "2");
    assert_eq!(ids(&lake, &q("l[1] < 0.0")).await, "3");
    assert_eq!(ids(&lake, &q("l[1] > 5.0")).await, "2");
    assert_eq!(ids(&lake, &q("m['a'] < 0.0")).await, "3");
    assert_eq!(ids(&lake, &q("m['a'] = 'NaN'::double")).await, "2");
}

/// `ns.fz` (id, d double, f float, s struct<a int, b double>, l array<double>) holding
/// `-0.0` (id 2, written first), `0.0` (id 1), NaN (3), 1.5 (5) and NULL (6), in two files.
async fn zeros_table(lake: &Lake) {
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.fz (id INT, d DOUBLE, f FLOAT, s STRUCT<a: INT, b: DOUBLE>, \
         l ARRAY<DOUBLE>)",
    )
    .await;
    let row = |id: i32, v: &str, a: i32| {
        format!(
            "({id}, CAST({v} AS DOUBLE), CAST({v} AS FLOAT), \
             named_struct('a', {a}, 'b', CAST({v} AS DOUBLE)), [CAST({v} AS DOUBLE)])"
        )
    };
    let files = [
        vec![row(2, "'-0.0'", 1), row(3, "'NaN'", 1)],
        vec![
            row(1, "'0.0'", 1),
            row(5, "1.5", 2),
            "(6, NULL, NULL, NULL, NULL)".to_string(),
        ],
    ];
    for rows in files {
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.fz VALUES {}", rows.join(", ")),
        )
        .await;
    }
}

/// What `q` answers, as `ok` prints it without spaces.
async fn squeezed(lake: &Lake, q: &str) -> String {
    ok(&lake.ctx, q).await.replace(' ', "")
}

/// Float keys as Spark has them (its optimizer's `NormalizeFloatingNumbers`): `-0.0` and
/// `0.0` are one key, and every NaN one, in `GROUP BY` (one column, several, a struct or a
/// list holding a double), `DISTINCT`, `count(DISTINCT …)`, joins, `IN (subquery)`,
/// `UNION`, `INTERSECT`, `EXCEPT` and window partitions; a grouped key reads `0.0`, while
/// a row's own value (a join's output, a plain read) stays `-0.0`. DataFusion counted
/// `count(DISTINCT d)` of {0.0, -0.0} as 2 and kept `{a: 1, b: -0.0}` and `{a: 1, b: 0.0}`
/// apart everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negative_zero_and_every_nan_are_one_key() {
    let lake = lake().await;
    zeros_table(&lake).await;
    let t = "ice.ns.fz";
    for partitions in [1, 4] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.target_partitions = {partitions}"),
        )
        .await;
        let cases = [
            (
                format!(
                    "SELECT count(DISTINCT d) AS d, count(DISTINCT f) AS f, \
                     count(DISTINCT s) AS s, count(DISTINCT l) AS l FROM {t}"
                ),
                "|3|3|3|3|",
            ),
            (
                format!("SELECT avg(DISTINCT d) AS a FROM {t} WHERE id <> 3"),
                "|0.75|",
            ),
            (
                format!("SELECT d, count(*) AS n FROM {t} GROUP BY d ORDER BY d NULLS FIRST"),
                "||1|\n|0.0|2|\n|1.5|1|\n|NaN|1|",
            ),
            (
                format!(
                    "SELECT f, s.a AS a, count(*) AS n FROM {t} GROUP BY f, s.a \
                     ORDER BY f NULLS FIRST"
                ),
                "|||1|\n|0.0|1|2|\n|1.5|2|1|\n|NaN|1|1|",
            ),
            (
                format!(
                    "SELECT s, count(*) AS n FROM {t} GROUP BY s ORDER BY n DESC, s NULLS FIRST"
                ),
                "|{a:1,b:0.0}|2|\n||1|\n|{a:1,b:NaN}|1|\n|{a:2,b:1.5}|1|",
            ),
            (
                format!(
                    "SELECT l, count(*) AS n FROM {t} GROUP BY l ORDER BY n DESC, l NULLS FIRST"
                ),
                "|[0.0]|2|\n||1|\n|[1.5]|1|\n|[NaN]|1|",
            ),
            (
                format!(
                    "SELECT d, grouping(d) AS g, count(*) AS n FROM {t} GROUP BY ROLLUP (d) \
                     ORDER BY g, d NULLS FIRST"
                ),
                "||0|1|\n|0.0|0|2|\n|1.5|0|1|\n|NaN|0|1|\n||1|5|",
            ),
            (
                format!("SELECT DISTINCT d FROM {t} ORDER BY d NULLS FIRST"),
                "+\n||\n|0.0|\n|1.5|\n|NaN|\n+",
            ),
            (
                format!(
                    "SELECT a.id AS x, b.id AS y, a.d AS ad FROM {t} a JOIN {t} b ON a.d = b.d \
                     ORDER BY x, y"
                ),
                "|1|1|0.0|\n|1|2|0.0|\n|2|1|-0.0|\n|2|2|-0.0|\n|3|3|NaN|\n|5|5|1.5|\n+",
            ),
            (
                format!(
                    "SELECT a.id AS x, b.id AS y FROM {t} a JOIN {t} b ON a.s = b.s AND a.l = b.l \
                     ORDER BY x, y"
                ),
                "|1|1|\n|1|2|\n|2|1|\n|2|2|\n|3|3|\n|5|5|\n+",
            ),
            (
                format!(
                    "SELECT id FROM {t} WHERE d IN (SELECT d FROM {t} WHERE id = 2) \
                     AND s IN (SELECT s FROM {t} WHERE id = 2) ORDER BY id"
                ),
                "|1|\n|2|\n+",
            ),
            (
                format!(
                    "SELECT id FROM {t} a WHERE EXISTS (SELECT 1 FROM {t} b \
                     WHERE b.l = a.l AND b.id = 1) ORDER BY id"
                ),
                "|1|\n|2|\n+",
            ),
            (
                format!("SELECT d FROM {t} WHERE id = 2 UNION SELECT d FROM {t} WHERE id = 1"),
                "+\n|0.0|\n+",
            ),
            (
                format!(
                    "SELECT d, s FROM {t} WHERE id = 2 INTERSECT SELECT d, s FROM {t} WHERE id = 1"
                ),
                "+\n|0.0|{a:1,b:0.0}|\n+",
            ),
            (
                format!(
                    "SELECT count(*) AS n FROM (SELECT l FROM {t} WHERE id = 2 \
                     EXCEPT SELECT l FROM {t} WHERE id = 1)"
                ),
                "|0|",
            ),
            (
                format!(
                    "SELECT id, count(*) OVER (PARTITION BY d) AS n, \
                     count(*) OVER (PARTITION BY s) AS m FROM {t} ORDER BY id"
                ),
                "|1|2|2|\n|2|2|2|\n|3|1|1|\n|5|1|1|\n|6|1|1|",
            ),
            // a NaN the query computes (sign bit set on x86) is the same key
            (
                format!(
                    "SELECT count(DISTINCT x) AS n, count(*) AS m FROM (SELECT d AS x FROM {t} \
                     WHERE id = 3 UNION ALL SELECT {NEG_NAN})"
                ),
                "|1|2|",
            ),
            (
                format!(
                    "SELECT x, count(*) AS n FROM (SELECT named_struct('b', d) AS x FROM {t} \
                     WHERE id = 3 UNION ALL SELECT named_struct('b', {NEG_NAN})) GROUP BY x"
                ),
                "|{b:NaN}|2|",
            ),
            // values are read as they are: -0.0 stays
            (
                format!("SELECT d, s FROM {t} WHERE id = 2"),
                "|-0.0|{a:1,b:-0.0}|",
            ),
        ];
        for (q, expected) in cases {
            let got = squeezed(&lake, &q).await;
            assert!(
                got.contains(expected),
                "{partitions} partitions: {q}: {got}"
            );
        }
    }
}

/// Grouped `min`/`max` as Spark answers them, whatever order the rows come in: `max` is
/// NaN when a group holds a NaN (any sign: a NaN computed in the query too), `min` is
/// NaN only when every non-NULL value is; NULLs are ignored; `-0.0` is below `0.0` (total
/// order; Spark compares them equal and keeps the first it meets). DataFusion's grouped
/// float accumulator answered by row order (`max` of {1.5, NaN, 2.5} was 2.5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouped_min_max_put_nan_above_every_number_in_any_row_order() {
    let lake = lake().await;
    ok(
        &lake.ctx,
        "CREATE TABLE ice.ns.mm (id INT, f DOUBLE) TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    // the values of a group (SQL), its max and min
    let kinds: [(&[&str], Option<f64>, Option<f64>); 7] = [
        (&["1.5", "'NaN'", "2.5"], Some(nan), Some(1.5)),
        (
            &[NEG_NAN, "'-inf'", "'inf'", "'-0.0'", "NULL"],
            Some(nan),
            Some(-inf),
        ),
        (&["'NaN'", NEG_NAN, "NULL"], Some(nan), Some(nan)),
        (&["NULL", "NULL"], None, None),
        (&["'-0.0'", "1.0", "NULL"], Some(1.0), Some(-0.0)),
        (&["'inf'", "'NaN'"], Some(nan), Some(inf)),
        (&["'0.0'", "'-0.0'"], Some(0.0), Some(-0.0)),
    ];
    // group `g` = kind * 3 + rotation holds rows `g * 100 + j`; value `j` goes to file
    // `(j + rotation) % 3`, so each value (the NaN too) is in the first, the middle and
    // the last file of some group
    let mut files = vec![vec![], vec![], vec![]];
    let mut expected = std::collections::BTreeMap::new();
    for (k, (values, max, min)) in kinds.iter().enumerate() {
        for rotation in 0..3 {
            let g = k * 3 + rotation;
            expected.insert(g as i64, (max.map(f64::to_bits), min.map(f64::to_bits)));
            for (j, v) in values.iter().enumerate() {
                files[(j + rotation) % 3].push(format!("({}, CAST({v} AS DOUBLE))", g * 100 + j));
            }
        }
    }
    for rows in &files {
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.mm VALUES {}", rows.join(", ")),
        )
        .await;
    }
    let computed = format!("CASE WHEN isnan(f) THEN {NEG_NAN} ELSE f END");
    let queries = [
        "SELECT id / 100 AS g, max(f) AS mx, min(f) AS mn FROM ice.ns.mm GROUP BY id / 100"
            .to_string(),
        "SELECT id / 100 AS g, max(f) FILTER (WHERE id >= 0) AS mx, \
         min(f) FILTER (WHERE id >= 0) AS mn FROM ice.ns.mm GROUP BY id / 100"
            .to_string(),
        // a NaN the query computes (its sign bit set on x86)
        format!(
            "SELECT id / 100 AS g, max({computed}) AS mx, min({computed}) AS mn \
             FROM ice.ns.mm GROUP BY id / 100"
        ),
        // window functions over the group, read on its first row
        "SELECT g, mx, mn FROM (SELECT id, id / 100 AS g, \
         max(f) OVER (PARTITION BY id / 100) AS mx, \
         min(f) OVER (PARTITION BY id / 100 ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING \
         AND UNBOUNDED FOLLOWING) AS mn FROM ice.ns.mm) WHERE id % 100 = 0"
            .to_string(),
    ];
    for partitions in [1, 4] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.target_partitions = {partitions}"),
        )
        .await;
        for q in &queries {
            let got = extremes_by_group(&lake, q).await;
            assert_eq!(got, expected, "{partitions} partitions: {q}");
        }
        // `min(DISTINCT f)` is `min(f)`, as Spark's optimizer makes it (`EliminateDistinct`,
        // before anything normalizes -0.0): DataFusion's plan of the DISTINCT grouped by
        // the value first, where -0.0 and 0.0 are one value, and answered 0.0
        let distinct = extremes_by_group(
            &lake,
            "SELECT id / 100 AS g, max(DISTINCT f) AS mx, min(DISTINCT f) AS mn \
             FROM ice.ns.mm GROUP BY id / 100",
        )
        .await;
        assert_eq!(distinct, expected, "{partitions} partitions: DISTINCT");
        // ungrouped, over every group and over the NaN computed in the query
        for f in ["f", computed.as_str()] {
            let got = extremes_by_group(
                &lake,
                &format!("SELECT 0 AS g, max({f}) AS mx, min({f}) AS mn FROM ice.ns.mm"),
            )
            .await;
            assert_eq!(
                got[&0],
                (Some(nan.to_bits()), Some((-inf).to_bits())),
                "{partitions} partitions: ungrouped {f}"
            );
        }
        // the groups of the greatest max first (DataFusion's TopK over groups): the 12
        // groups whose max is NaN, then the 1.0 of the next
        let top = extremes_by_group(
            &lake,
            "SELECT id / 100 AS g, max(f) AS mx, max(f) AS mn FROM ice.ns.mm \
             GROUP BY id / 100 ORDER BY mx DESC NULLS LAST LIMIT 13",
        )
        .await;
        let mut maxes: Vec<_> = top.values().map(|(mx, _)| mx.map(f64::from_bits)).collect();
        maxes.retain(|m| m.is_some_and(f64::is_nan));
        assert_eq!(maxes.len(), 12, "{partitions} partitions: {top:?}");
        assert!(
            top.values().any(|(mx, _)| *mx == Some(1.0f64.to_bits())),
            "{partitions} partitions: {top:?}"
        );
    }
    other_engines_agree(&lake, "mm").await;
}

/// `g → (mx, min)` as bits (`None`: NULL) of a query with columns `g` (integer), `mx` and
/// `mn` (double), one row per `g`.
async fn extremes_by_group(
    lake: &Lake,
    q: &str,
) -> std::collections::BTreeMap<i64, (Option<u64>, Option<u64>)> {
    use datafusion::arrow::array::{Array, AsArray};
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};

    let batches = run(&lake.ctx, q)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    let mut out = std::collections::BTreeMap::new();
    for b in &batches {
        let g = cast(b.column(0), &DataType::Int64).expect("g");
        let g = g.as_primitive::<Int64Type>();
        let mx = b.column(1).as_primitive::<Float64Type>();
        let mn = b.column(2).as_primitive::<Float64Type>();
        for i in 0..b.num_rows() {
            let bits = |a: &datafusion::arrow::array::Float64Array| {
                a.is_valid(i).then(|| a.value(i).to_bits())
            };
            let previous = out.insert(g.value(i), (bits(mx), bits(mn)));
            assert!(previous.is_none(), "{q}: group {} twice", g.value(i));
        }
    }
    out
}

/// `ice.ns.<name>` (k INT, f DOUBLE) in three data files, each with every group's rows,
/// a NaN between numbers; for the engines that run a plan across processes.
#[cfg(feature = "distributed")]
pub(crate) async fn nan_groups(lake: &Lake, name: &str) {
    ok(
        &lake.ctx,
        &format!("CREATE TABLE ice.ns.{name} (k INT, f DOUBLE)"),
    )
    .await;
    for _ in 0..3 {
        ok(
            &lake.ctx,
            &format!(
                "INSERT INTO ice.ns.{name} VALUES (1, 1.5), (1, CAST('NaN' AS DOUBLE)), \
                 (1, 2.5), (2, -1.0), (2, {NEG_NAN}), (2, 3.0), (3, CAST('NaN' AS DOUBLE)), \
                 (3, NULL), (4, NULL)"
            ),
        )
        .await;
    }
}

/// The grouped `min`/`max` of a [`nan_groups`] table (`table`: its name in the session)
/// and Spark's answer.
#[cfg(feature = "distributed")]
pub(crate) fn nan_groups_query(table: &str) -> (String, &'static str) {
    (
        format!("SELECT k, max(f) AS mx, min(f) AS mn FROM {table} GROUP BY k ORDER BY k"),
        "\
+---+-----+------+
| k | mx  | mn   |
+---+-----+------+
| 1 | NaN | 1.5  |
| 2 | NaN | -1.0 |
| 3 | NaN | NaN  |
| 4 |     |      |
+---+-----+------+",
    )
}

/// `ns.<name>` (id, d double, e double, f float) in five files, one per row group of
/// values: `-0.0` alone (id 1: its bounds are `[-0.0, -0.0]`), `0.0` alone (2), `1.5` and
/// `inf` (3, 7), `-2.0` and NULL (4, 5), NaN alone (6). `e` holds the other zero where `d`
/// holds one, `f` is `d` as a float.
async fn signed_zeros(lake: &Lake, name: &str, properties: &str) {
    ok(
        &lake.ctx,
        &format!(
            "CREATE TABLE ice.ns.{name} (id INT, d DOUBLE, e DOUBLE, f FLOAT) \
             TBLPROPERTIES ({properties})"
        ),
    )
    .await;
    let row = |id: i32, d: &str, e: &str| {
        format!("({id}, CAST({d} AS DOUBLE), CAST({e} AS DOUBLE), CAST({d} AS FLOAT))")
    };
    let files = [
        vec![row(1, "'-0.0'", "'0.0'")],
        vec![row(2, "'0.0'", "'-0.0'")],
        vec![row(3, "1.5", "2.0"), row(7, "'inf'", "1.0")],
        vec![row(4, "-2.0", "-2.0"), row(5, "NULL", "NULL")],
        vec![row(6, "'NaN'", "'NaN'")],
    ];
    for rows in files {
        ok(
            &lake.ctx,
            &format!("INSERT INTO ice.ns.{name} VALUES {}", rows.join(", ")),
        )
        .await;
    }
}

/// Comparisons of floats as Spark makes them (`SQLOrderingUtil.compareDoubles`: `-0.0 =
/// 0.0`, every NaN one value above every number), in each form: `=`, `<>`, `<`, `<=`, `>`,
/// `>=`, `<=>`, `BETWEEN`, `[NOT] IN` (short and long lists, literals or columns), column
/// against column, `CASE x WHEN`, `nullif`, a NaN or `-0.0` the query computes, a join's
/// non-equi condition. DataFusion's `IN` list, `CASE x WHEN` and `nullif` compared bit
/// patterns (`d IN (0.0, 5.0, 6.0)` missed `-0.0`), and a computed NaN (`inf - inf`) was
/// below every number. Files are pruned by the bounds yet the file holding only `-0.0`
/// (bounds `[-0.0, -0.0]`) is planned for `d = 0.0`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_zeros_and_computed_nans_compare_as_in_spark() {
    let lake = lake().await;
    signed_zeros(&lake, "zc", "'format-version'='2'").await;
    let bounds = squeezed(
        &lake,
        "SELECT readable_metrics.d.lower_bound AS lo, readable_metrics.d.upper_bound AS hi \
         FROM ice.ns.\"zc$files\" ORDER BY record_count, lo",
    )
    .await;
    assert!(bounds.contains("|-0.0|-0.0|"), "{bounds}");
    let q = |w: &str| format!("SELECT id FROM ice.ns.zc WHERE {w} ORDER BY id");
    let inf_minus_inf = "(CAST('inf' AS DOUBLE) - CAST('inf' AS DOUBLE))";
    let cases: Vec<(String, &str)> = vec![
        ("d = 0.0".into(), "1,2"),
        ("d = -0.0".into(), "1,2"),
        ("0.0 = d".into(), "1,2"),
        ("d <> 0.0".into(), "3,4,6,7"),
        ("d < 0.0".into(), "4"),
        ("d <= -0.0".into(), "1,2,4"),
        ("d > -0.0".into(), "3,6,7"),
        ("d >= 0.0".into(), "1,2,3,6,7"),
        ("d <=> 0.0".into(), "1,2"),
        ("d <=> CAST(NULL AS DOUBLE)".into(), "5"),
        ("d IS DISTINCT FROM 1.5".into(), "1,2,4,5,6,7"),
        ("NOT (d <=> -0.0)".into(), "3,4,5,6,7"),
        ("d BETWEEN 0.0 AND 1.5".into(), "1,2,3"),
        ("d BETWEEN -1.0 AND -0.0".into(), "1,2"),
        ("d NOT BETWEEN -0.0 AND 0.0".into(), "3,4,6,7"),
        ("d IN (0.0, 5.0)".into(), "1,2"),
        ("d IN (0.0, -5.0, -6.0, -7.0)".into(), "1,2"),
        ("d IN (-0.0, -5.0, -6.0, -7.0, -8.0, -9.0)".into(), "1,2"),
        ("d NOT IN (0.0, -5.0, -6.0, -7.0)".into(), "3,4,6,7"),
        ("d IN ('NaN'::double, -5.0, -6.0, -7.0)".into(), "6"),
        ("f IN (CAST(0.0 AS FLOAT), 5.0, 6.0, 7.0)".into(), "1,2"),
        ("f = 0.0".into(), "1,2"),
        ("f < 0.0".into(), "4"),
        // column against column: -0.0 = 0.0, NaN = NaN
        ("d = e".into(), "1,2,4,6"),
        ("d < e".into(), "3"),
        ("d >= e".into(), "1,2,4,6,7"),
        ("d IN (e, 5.0, 6.0, 7.0)".into(), "1,2,4,6"),
        ("d NOT IN (e, 5.0, 6.0, 7.0)".into(), "3,7"),
        ("CASE d WHEN 0.0 THEN true ELSE false END".into(), "1,2"),
        ("CASE d WHEN e THEN true ELSE false END".into(), "1,2,4,6"),
        ("nullif(d, 0.0) IS NULL".into(), "1,2,5"),
        ("nullif(d, e) IS NULL".into(), "1,2,4,5,6"),
        // computed: NaN - NaN and inf - inf are NaN (the latter with its sign bit set on
        // x86), -2.0 * 0.0 and -0.0 * 0.0 are -0.0
        ("d - d = 'NaN'::double".into(), "6,7"),
        ("d - d > 1.0".into(), "6,7"),
        (format!("d = {inf_minus_inf}"), "6"),
        (format!("d IN ({inf_minus_inf}, -5.0, -6.0, -7.0)"), "6"),
        ("d * 0.0 = 0.0".into(), "1,2,3,4"),
        ("d * 0.0 < 0.0".into(), ""),
        ("-d > 1.0".into(), "4,6"),
    ];
    for partitions in [1, 4] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.target_partitions = {partitions}"),
        )
        .await;
        for (w, expected) in &cases {
            assert_eq!(ids(&lake, &q(w)).await, *expected, "{partitions}: {w}");
        }
        // a non-equi join condition: the zeros are equal, NaN equals NaN
        let pairs = squeezed(
            &lake,
            "SELECT a.id AS x, b.id AS y FROM ice.ns.zc a JOIN ice.ns.zc b \
             ON a.d >= b.e AND a.d <= b.e AND a.id < b.id ORDER BY x, y",
        )
        .await;
        assert!(pairs.contains("|x|y|\n+---+---+\n|1|2|\n+"), "{pairs}");
    }
    // the bounds prune the other files, never the one holding only -0.0
    for (w, planned) in [
        ("d = 0.0", 2),
        ("d = -0.0", 2),
        ("d <=> 0.0", 2),
        ("0.0 <=> d", 2),
        ("d <=> CAST(NULL AS DOUBLE)", 1),
        ("d <=> 1.5", 1),
        ("d IN (0.0, -5.0, -6.0, -7.0)", 2),
        ("d BETWEEN -1.0 AND -0.0", 2),
        ("d = 1.5", 1),
    ] {
        let got = crate::metadata_columns::files_planned(&lake.ctx, &q(w)).await;
        assert_eq!(got, planned, "{w}");
    }
}

/// `DELETE`, `UPDATE` and `MERGE` find the rows of `-0.0` and `0.0` alike (copy-on-write
/// and merge-on-read), whichever zero their condition names, in `=`, `IN` and a `MERGE`
/// `ON` key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dml_conditions_on_a_signed_zero_match_both_zeros() {
    let lake = lake().await;
    for (t, properties) in [
        ("zcow", "'format-version'='2'"),
        (
            "zmor",
            "'format-version'='2', 'write.delete.mode'='merge-on-read', \
             'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'",
        ),
    ] {
        signed_zeros(&lake, t, properties).await;
        let updated = ok(
            &lake.ctx,
            &format!("UPDATE ice.ns.{t} SET id = id + 10 WHERE d IN (-0.0, 5.0, 6.0, 7.0)"),
        )
        .await;
        assert!(updated.contains("| 2     |"), "{t}: {updated}");
        let merged = ok(
            &lake.ctx,
            &format!(
                "MERGE INTO ice.ns.{t} t USING (SELECT CAST('-0.0' AS DOUBLE) AS x) s \
                 ON t.d = s.x WHEN MATCHED THEN UPDATE SET id = t.id + 10"
            ),
        )
        .await;
        assert!(merged.contains("| 2 "), "{t}: {merged}");
        assert_eq!(
            ids(&lake, &format!("SELECT id FROM ice.ns.{t} ORDER BY id")).await,
            "3,4,5,6,7,21,22",
            "{t}: after UPDATE and MERGE"
        );
        let deleted = ok(&lake.ctx, &format!("DELETE FROM ice.ns.{t} WHERE d = 0.0")).await;
        assert!(deleted.contains("| 2     |"), "{t}: {deleted}");
        let deleted = ok(&lake.ctx, &format!("DELETE FROM ice.ns.{t} WHERE d < 0.0")).await;
        assert!(deleted.contains("| 1     |"), "{t}: {deleted}");
        assert_eq!(
            ids(&lake, &format!("SELECT id FROM ice.ns.{t} ORDER BY id")).await,
            "3,5,6,7",
            "{t}: after DELETE"
        );
    }
}

/// Float sort keys as Spark orders them (`SQLOrderingUtil.compareDoubles`): `-0.0` and
/// `0.0` are peers, every NaN (the one a query computes with its sign bit set too) one
/// value above `+inf`, in `ORDER BY` (`ASC`/`DESC`, `NULLS FIRST/LAST`, `LIMIT`), in a
/// window's `ORDER BY` (`rank`, `dense_rank`, a `RANGE` frame), for `double` and `float`;
/// the rows keep their values. `greatest`/`least` keep the first of equal arguments and
/// put NaN above every number. DataFusion sorted `-0.0` before `0.0` (so `ORDER BY d, id
/// DESC` ignored `id` between them, and the zeros had two ranks) and a computed NaN first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn float_sort_keys_order_as_in_spark() {
    let lake = lake().await;
    signed_zeros(&lake, "zo", "'format-version'='2'").await;
    // id 10: a NaN computed in the query, its sign bit set
    let rows = format!(
        "(SELECT id, d, f FROM ice.ns.zo UNION ALL \
         SELECT 10, {NEG_NAN}, CAST({NEG_NAN} AS FLOAT))"
    );
    for partitions in [1, 4] {
        ok(
            &lake.ctx,
            &format!("SET datafusion.execution.target_partitions = {partitions}"),
        )
        .await;
        for c in ["d", "f"] {
            let cases = [
                (
                    format!("ORDER BY {c} NULLS FIRST, id DESC"),
                    "5,4,2,1,3,7,10,6",
                ),
                (format!("ORDER BY {c}, id"), "4,1,2,3,7,6,10,5"),
                (
                    format!("ORDER BY {c} DESC NULLS LAST, id"),
                    "6,10,7,3,1,2,4,5",
                ),
                (format!("ORDER BY {c} DESC, id DESC"), "5,10,6,7,3,2,1,4"),
                // TopK
                (
                    format!("ORDER BY {c} DESC NULLS LAST, id LIMIT 4"),
                    "6,10,7,3",
                ),
                (
                    format!("ORDER BY {c} NULLS FIRST, id DESC LIMIT 3"),
                    "5,4,2",
                ),
                (format!("ORDER BY {c} NULLS FIRST, id LIMIT 3"), "5,4,1"),
            ];
            for (order, expected) in cases {
                let q = format!("SELECT id FROM {rows} {order}");
                assert_eq!(ids(&lake, &q).await, expected, "{partitions}: {q}");
            }
            let q = format!(
                "SELECT id, rank() OVER (ORDER BY {c} NULLS FIRST) AS r, \
                 dense_rank() OVER (ORDER BY {c} NULLS FIRST) AS dr, \
                 sum(id) OVER (ORDER BY {c} NULLS FIRST \
                 RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s, \
                 rank() OVER (PARTITION BY id > 3 ORDER BY {c} DESC) AS p \
                 FROM {rows} ORDER BY id"
            );
            let got = squeezed(&lake, &q).await;
            assert!(
                got.contains(
                    "|1|3|3|12|2|\n|2|3|3|12|2|\n|3|5|4|15|1|\n|4|2|2|9|5|\n\
                     |5|1|1|5|1|\n|6|7|6|38|2|\n|7|6|5|22|4|\n|10|7|6|38|2|"
                ),
                "{partitions}: {q}: {got}"
            );
        }
        // the sort key is normalized, the row is not
        let got = squeezed(
            &lake,
            &format!("SELECT id, d, f FROM {rows} WHERE id < 3 ORDER BY d, id DESC"),
        )
        .await;
        assert!(got.contains("|2|0.0|0.0|\n|1|-0.0|-0.0|"), "{got}");
        // greatest / least: NULLs skipped, the first of equal values, NaN the greatest
        let got = squeezed(
            &lake,
            "SELECT id, greatest(d, e) AS g, least(d, e) AS l, \
             greatest(d - d, CAST(-1 AS DOUBLE)) AS n, least(f, CAST('NaN' AS FLOAT)) AS m \
             FROM ice.ns.zo ORDER BY id",
        )
        .await;
        assert!(
            got.contains(
                "|1|-0.0|-0.0|0.0|-0.0|\n|2|0.0|0.0|0.0|0.0|\n|3|2.0|1.5|0.0|1.5|\n\
                 |4|-2.0|-2.0|0.0|-2.0|\n|5|||-1.0|NaN|\n|6|NaN|NaN|NaN|NaN|\n|7|inf|1.0|NaN|inf|"
            ),
            "{partitions}: {got}"
        );
    }
    // filters stay on the bare column: the bounds still prune
    let q = "SELECT id FROM ice.ns.zo WHERE d = 1.5 ORDER BY d DESC, id LIMIT 1";
    assert_eq!(ids(&lake, q).await, "3");
    assert_eq!(
        crate::metadata_columns::files_planned(&lake.ctx, q).await,
        1
    );
}

/// A decimal combined with a double is a double, as Spark widens it
/// (`WidenSetOperationTypes`, `InConversion`): in a `UNION` with a table's doubles (NaN,
/// ±inf, -0.0 among them), `INTERSECT`, `EXCEPT`, `IN (subquery)` either way round and a
/// `MERGE` source. DataFusion typed these `Decimal128(30, 15)`: an error on the NaN row
/// ("Overflowing on NaN"), doubles rounded to 15 digits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decimals_with_doubles_widen_to_double() {
    let lake = lake().await;
    signed_zeros(&lake, "zw", "'format-version'='2'").await;
    let t = "ice.ns.zw";
    // the literals are decimals here, as in Spark
    let typed = squeezed(&lake, "SELECT arrow_typeof(0.5) AS t").await;
    assert!(typed.contains("|Decimal128(1,1)|"), "{typed}");
    let q = |w: &str| format!("SELECT id FROM {t} WHERE {w} ORDER BY id");
    for (w, expected) in [
        ("d IN (SELECT 1.5)", "3"),
        (
            "d IN (SELECT 0.0 UNION ALL SELECT CAST('NaN' AS DOUBLE))",
            "1,2,6",
        ),
        ("d NOT IN (SELECT 1.5 UNION ALL SELECT -2.0)", "1,2,6,7"),
        ("CAST(id AS DECIMAL(5,1)) / 2 IN (SELECT d FROM {t})", "3"),
    ] {
        let w = w.replace("{t}", t);
        assert_eq!(ids(&lake, &q(&w)).await, expected, "{w}");
    }
    for (sql, expected) in [
        (
            format!(
                "SELECT k, arrow_typeof(k) AS t FROM (SELECT 0.5 AS k UNION ALL \
                 SELECT d FROM {t} WHERE id <> 1 UNION ALL SELECT CAST(7e-20 AS DOUBLE)) \
                 ORDER BY k NULLS FIRST"
            ),
            "||Float64|\n|-2.0|Float64|\n|0.0|Float64|\n|7e-20|Float64|\n\
             |0.5|Float64|\n|1.5|Float64|\n|inf|Float64|\n|NaN|Float64|",
        ),
        (
            format!("SELECT k FROM (SELECT d AS k FROM {t} INTERSECT SELECT 1.5) ORDER BY k"),
            "|1.5|",
        ),
        (
            format!(
                "SELECT count(*) AS n FROM (SELECT d FROM {t} WHERE d IS NOT NULL \
                 EXCEPT SELECT 1.5)"
            ),
            // distinct: the two zeros are one row
            "|4|",
        ),
    ] {
        let got = squeezed(&lake, &sql).await;
        assert!(got.contains(expected), "{sql}: {got}");
    }
    let merged = ok(
        &lake.ctx,
        &format!(
            "MERGE INTO {t} t USING (SELECT 0.0 AS k UNION ALL SELECT CAST('NaN' AS DOUBLE)) s \
             ON t.d = s.k WHEN MATCHED THEN UPDATE SET id = t.id + 10"
        ),
    )
    .await;
    assert!(merged.contains("| 3 "), "{merged}");
    assert_eq!(
        ids(&lake, &format!("SELECT id FROM {t} ORDER BY id")).await,
        "3,4,5,7,11,12,16"
    );
}
