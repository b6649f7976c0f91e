//! NaN as Spark has it, whatever NaN a writer stored: every NaN equals `'NaN'` and is
//! greater than every number, also the NaN with its sign bit set that x86 computes for
//! `0.0 / 0.0` (Arrow's total order alone puts that one below every number). The answer
//! of a row must not depend on the other values of its file (which decide pruning).

use icefloe::catalog::TableIdent;

use crate::dml::{lake, ok, Lake};
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
