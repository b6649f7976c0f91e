//! Fields nested in structs, lists and maps (any nesting of them) evolved after files were
//! written: dropped, added (null, or the v3 `initial-default`), added back under a dropped
//! field's name, renamed, moved and promoted. Old files read by field id at every depth
//! (spec "Column Projection"), and what icefloe writes from them afterwards (a
//! copy-on-write `UPDATE`, `rewrite_data_files`, an `INSERT` into the evolved type) holds
//! the right values under the right field ids. Each step's rows are the rows stated here,
//! and DuckDB 1.5.5 and PyIceberg 0.12 read the same from the same files.
//!
//! PyIceberg 0.12 is left out where it reads wrong: it matches the fields of a struct under
//! two lists/maps (`lm.element.value`) by name (a renamed field reads null, one added back
//! under a dropped one's name reads the dropped values), and reads a null list or map
//! holding structs as an empty one. DuckDB reads those right.

use std::sync::Arc;

use icefloe::catalog::{SqlCatalog, TableIdent};
use serde_json::{json, Value};

use crate::dml::{lake, run, session_over, Lake};
use crate::interop::{
    assert_same_rows, duckdb_read, icefloe_rows, pyiceberg_read, python, run_script,
};

async fn exec(lake: &Lake, sql: &str) {
    run(&lake.ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Which engines must read `expected` besides icefloe.
#[derive(Clone, Copy, PartialEq)]
enum Others {
    /// PyIceberg and DuckDB.
    Both,
    /// DuckDB only (see the module docs).
    DuckDb,
}

/// icefloe reads `expected` (canonical rows) from `ident` (`ns.t` of `lake`'s catalog,
/// attached as `ice`), and so do the `others` when the interop venv is there.
async fn read_alike(lake: &Lake, ident: &str, expected: &[Value], step: &str, others: Others) {
    let table = lake
        .catalog
        .load_table(&TableIdent::parse(ident))
        .await
        .expect("table");
    let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema");
    let ours = icefloe_rows(&lake.ctx, &format!("ice.{ident}"), &schema).await;
    assert_same_rows(&format!("{ident} {step}: icefloe"), expected, &ours);
    if python().is_none() {
        return;
    }
    let duck = duckdb_read(table.metadata_location());
    assert_same_rows(
        &format!("{ident} {step}: DuckDB"),
        expected,
        duck["rows"].as_array().expect("rows"),
    );
    if others == Others::Both {
        let pyi = pyiceberg_read(&lake.db, &lake.warehouse, ident);
        assert_eq!(pyi["schema"]["fields"], schema["fields"], "{ident}: schema");
        assert_same_rows(
            &format!("{ident} {step}: PyIceberg"),
            expected,
            pyi["rows"].as_array().expect("rows"),
        );
    }
}

/// `rows` with the first column (`id`) `from` changed to `to`.
fn with_id(rows: &[Value], from: i64, to: i64) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            if r[0] == json!(from) {
                r[0] = json!(to);
            }
            r
        })
        .collect()
}

/// After a table's old file was read, changed and written again by icefloe: a
/// copy-on-write `UPDATE` of a row of the old file, then `rewrite_data_files` of every
/// file, each read alike.
async fn update_and_compact(lake: &Lake, ident: &str, expected: &[Value], others: Others) {
    exec(
        lake,
        &format!("UPDATE ice.{ident} SET id = id + 10 WHERE id = 1"),
    )
    .await;
    let expected = with_id(expected, 1, 11);
    read_alike(lake, ident, &expected, "after UPDATE", others).await;
    exec(
        lake,
        &format!(
            "CALL ice.system.rewrite_data_files(table => '{ident}', \
             options => map('rewrite-all', 'true'))"
        ),
    )
    .await;
    read_alike(lake, ident, &expected, "after rewrite_data_files", others).await;
}

/// The tester's D1 and D2 and their kin, through icefloe's DDL: struct fields of map
/// values (dropped, added, added back under the dropped name with another type,
/// promoted), of list elements (dropped and added back, renamed, moved), of a struct's
/// map value and nested struct; then an `UPDATE`, a compaction and an `INSERT` of the
/// evolved types.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structs_in_maps_lists_and_structs_evolve_by_field_id() {
    let lake = lake().await;
    exec(
        &lake,
        "CREATE TABLE ice.ns.nested (id INT, m MAP<STRING, STRUCT<c INT, d STRING>>, \
         m2 MAP<STRING, STRUCT<c INT, d STRING>>, l ARRAY<STRUCT<x INT, y STRING>>, \
         s STRUCT<a INT, inner STRUCT<p FLOAT, q STRING>, mm MAP<INT, STRUCT<u INT, v STRING>>>)",
    )
    .await;
    exec(
        &lake,
        "INSERT INTO ice.ns.nested VALUES \
         (1, map(['k1', 'k2'], [named_struct('c', 100, 'd', 'd100'), NULL]), \
          map(['k1'], [named_struct('c', 1, 'd', 'd1')]), \
          [named_struct('x', 1, 'y', 'y1'), NULL], \
          named_struct('a', 7, 'inner', named_struct('p', 1.5, 'q', 'q1'), \
                       'mm', map([1], [named_struct('u', 10, 'v', 'v10')]))), \
         (2, map(['k'], [named_struct('c', 2, 'd', 'd2')]), \
          map(['k'], [named_struct('c', 2, 'd', 'd2')]), [], NULL)",
    )
    .await;
    for change in [
        // D1: a field dropped and another added (reads null, not the dropped values)
        "DROP COLUMN m.value.d",
        "ADD COLUMN m.value.f STRING",
        "ALTER COLUMN m.value.c TYPE BIGINT",
        // added back under the dropped name with another type (was a cast error)
        "DROP COLUMN m2.value.d",
        "ADD COLUMN m2.value.d BIGINT",
        "DROP COLUMN l.element.x",
        "ADD COLUMN l.element.x STRING",
        "RENAME COLUMN l.element.y TO yy",
        "ALTER COLUMN l.element.yy FIRST",
        "DROP COLUMN s.a",
        "ADD COLUMN s.a STRING",
        "ALTER COLUMN s.inner.p TYPE DOUBLE",
        "RENAME COLUMN s.mm.value.u TO uu",
        "ALTER COLUMN s.mm.value.v FIRST",
        "ADD COLUMN s.mm.value.w DATE",
    ] {
        exec(&lake, &format!("ALTER TABLE ice.ns.nested {change}")).await;
    }
    let mut expected = vec![
        json!([1, [["k1", {"c": 100, "f": null}], ["k2", null]],
               [["k1", {"c": 1, "d": null}]],
               [{"yy": "y1", "x": null}, null],
               {"inner": {"p": 1.5, "q": "q1"}, "mm": [[1, {"v": "v10", "uu": 10, "w": null}]],
                "a": null}]),
        json!([2, [["k", {"c": 2, "f": null}]], [["k", {"c": 2, "d": null}]], [], null]),
    ];
    read_alike(&lake, "ns.nested", &expected, "evolved", Others::Both).await;
    // a field of a map value selected alone reads by id too
    let picked = crate::catalog::strings(
        &lake.ctx,
        "SELECT concat_ws('|', CAST(id AS VARCHAR), \
         coalesce(get_field(m['k1'], 'f'), 'null'), CAST(get_field(m['k1'], 'c') AS VARCHAR), \
         coalesce(CAST(get_field(m2['k1'], 'd') AS VARCHAR), 'null')) FROM ice.ns.nested \
         WHERE id = 1",
    )
    .await;
    assert_eq!(picked, ["1|null|100|null"]);

    update_and_compact(&lake, "ns.nested", &expected, Others::Both).await;
    expected = with_id(&expected, 1, 11);

    // the evolved types written: their field ids as the table has them
    exec(
        &lake,
        "INSERT INTO ice.ns.nested VALUES \
         (3, map(['k3'], [named_struct('c', 3000000000, 'f', 'f3')]), \
          map(['k3'], [named_struct('c', 3, 'd', 33)]), \
          [named_struct('yy', 'y3', 'x', 'x3')], \
          named_struct('inner', named_struct('p', 0.25, 'q', 'q3'), \
                       'mm', map([3], [named_struct('v', 'v3', 'uu', 30, 'w', DATE '2024-02-29')]), \
                       'a', 'a3'))",
    )
    .await;
    expected.push(json!([3, [["k3", {"c": 3000000000_i64, "f": "f3"}]],
                         [["k3", {"c": 3, "d": 33}]],
                         [{"yy": "y3", "x": "x3"}],
                         {"inner": {"p": 0.25, "q": "q3"},
                          "mm": [[3, {"v": "v3", "uu": 30, "w": "2024-02-29"}]], "a": "a3"}]));
    read_alike(&lake, "ns.nested", &expected, "after INSERT", Others::Both).await;
}

/// A list's element and a map's value promoted in place (Spark's `ALTER COLUMN
/// l.element TYPE BIGINT`, Java's `updateColumn("l.element", …)`; was refused as "not a
/// struct"), a nested list's element too, and made optional: the old file's values read
/// widened, then an `UPDATE`, a compaction and an `INSERT` of values only the new types
/// hold, each read alike by DuckDB and PyIceberg.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_elements_and_map_values_are_promoted() {
    let lake = lake().await;
    exec(
        &lake,
        "CREATE TABLE ice.ns.widened (id INT, l ARRAY<INT>, m MAP<STRING, FLOAT>, \
         ll ARRAY<ARRAY<DECIMAL(5, 2)>>)",
    )
    .await;
    exec(
        &lake,
        "INSERT INTO ice.ns.widened VALUES \
         (1, [1, 2147483647], map(['a'], [CAST(1.5 AS FLOAT)]), [[1.25, -999.99]]), \
         (2, NULL, NULL, NULL), \
         (3, [NULL], map(['b'], [CAST(NULL AS FLOAT)]), [NULL, [NULL]])",
    )
    .await;
    for change in [
        "ALTER COLUMN l.element TYPE BIGINT",
        "ALTER COLUMN m.value TYPE DOUBLE",
        "ALTER COLUMN ll.element.element TYPE DECIMAL(10, 2)",
        "ALTER COLUMN ll.element DROP NOT NULL",
    ] {
        exec(&lake, &format!("ALTER TABLE ice.ns.widened {change}")).await;
    }
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.widened"))
        .await
        .expect("table");
    let types: Vec<String> = table
        .metadata()
        .current_schema()
        .columns()
        .iter()
        .map(|f| f.field_type.to_string())
        .collect();
    assert_eq!(
        types,
        [
            "int",
            "list<long>",
            "map<string, double>",
            "list<list<decimal(10, 2)>>"
        ]
    );
    let mut expected = vec![
        json!([1, [1, 2147483647], [["a", 1.5]], [["1.25", "-999.99"]]]),
        json!([2, null, null, null]),
        json!([3, [null], [["b", null]], [null, [null]]]),
    ];
    read_alike(&lake, "ns.widened", &expected, "promoted", Others::Both).await;
    update_and_compact(&lake, "ns.widened", &expected, Others::Both).await;
    expected = with_id(&expected, 1, 11);
    exec(
        &lake,
        "INSERT INTO ice.ns.widened VALUES \
         (4, [5000000000], map(['c'], [CAST(0.1 AS DOUBLE)]), [[12345678.91]])",
    )
    .await;
    expected.push(json!([
        4,
        [5000000000_i64],
        [["c", 0.1]],
        [["12345678.91"]]
    ]));
    read_alike(&lake, "ns.widened", &expected, "after INSERT", Others::Both).await;
    let wide = crate::catalog::strings(
        &lake.ctx,
        "SELECT CAST(id AS VARCHAR) AS i FROM ice.ns.widened WHERE l[1] > 3000000000 \
         OR l[2] = 2147483647 ORDER BY id",
    )
    .await;
    assert_eq!(wide, ["4", "11"]);
}

/// Structs under two lists/maps: a list of maps of structs and a map of lists of
/// structs, their fields renamed, dropped and added back under the same name, moved and
/// promoted (DuckDB reads them alike; PyIceberg 0.12 does not, see the module docs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structs_under_two_lists_or_maps_evolve_by_field_id() {
    let lake = lake().await;
    exec(
        &lake,
        "CREATE TABLE ice.ns.deep (id INT, lm ARRAY<MAP<STRING, STRUCT<a INT, b STRING>>>, \
         ml MAP<STRING, ARRAY<STRUCT<p INT, q STRING>>>)",
    )
    .await;
    exec(
        &lake,
        "INSERT INTO ice.ns.deep VALUES \
         (1, [map(['x', 'y'], [named_struct('a', 1, 'b', 'b1'), NULL]), NULL], \
          map(['k', 'n'], [[named_struct('p', 5, 'q', 'q5'), NULL], NULL])), \
         (2, [], map(['k'], [[]]))",
    )
    .await;
    for change in [
        "RENAME COLUMN lm.element.value.a TO aa",
        "ALTER COLUMN lm.element.value.aa TYPE BIGINT",
        "DROP COLUMN lm.element.value.b",
        "ADD COLUMN lm.element.value.b STRING",
        "ALTER COLUMN lm.element.value.b FIRST",
        "DROP COLUMN ml.value.element.q",
        "ADD COLUMN ml.value.element.q STRING",
        "RENAME COLUMN ml.value.element.p TO pp",
        "ALTER COLUMN ml.value.element.pp TYPE BIGINT",
    ] {
        exec(&lake, &format!("ALTER TABLE ice.ns.deep {change}")).await;
    }
    let mut expected = vec![
        json!([1, [[["x", {"b": null, "aa": 1}], ["y", null]], null],
               [["k", [{"pp": 5, "q": null}, null]], ["n", null]]]),
        json!([2, [], [["k", []]]]),
    ];
    read_alike(&lake, "ns.deep", &expected, "evolved", Others::DuckDb).await;
    update_and_compact(&lake, "ns.deep", &expected, Others::DuckDb).await;
    expected = with_id(&expected, 1, 11);
    exec(
        &lake,
        "INSERT INTO ice.ns.deep VALUES \
         (3, [map(['z'], [named_struct('b', 'b3', 'aa', 3000000000)])], \
          map(['k'], [[named_struct('pp', 3, 'q', 'q3')]]))",
    )
    .await;
    expected.push(json!([3, [[["z", {"b": "b3", "aa": 3000000000_i64}]]],
                         [["k", [{"pp": 3, "q": "q3"}]]]]));
    read_alike(&lake, "ns.deep", &expected, "after INSERT", Others::DuckDb).await;
}

/// v3 `initial-default`s of fields added to the structs of a map's values and a list's
/// elements: the rows written before read them (null where the enclosing struct is), and
/// a rewrite keeps them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_of_fields_added_inside_maps_and_lists() {
    let lake = lake().await;
    exec(
        &lake,
        "CREATE TABLE ice.ns.dflt (id INT, m MAP<STRING, STRUCT<c INT>>, \
         l ARRAY<STRUCT<x INT>>) TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    exec(
        &lake,
        "INSERT INTO ice.ns.dflt VALUES \
         (1, map(['k', 'n'], [named_struct('c', 1), NULL]), [named_struct('x', 1), NULL]), \
         (2, map(['k'], [named_struct('c', 2)]), [])",
    )
    .await;
    exec(
        &lake,
        "ALTER TABLE ice.ns.dflt ADD COLUMN m.value.f BIGINT DEFAULT 7",
    )
    .await;
    exec(
        &lake,
        "ALTER TABLE ice.ns.dflt ADD COLUMN l.element.z STRING DEFAULT 'zz'",
    )
    .await;
    let expected = vec![
        json!([1, [["k", {"c": 1, "f": 7}], ["n", null]], [{"x": 1, "z": "zz"}, null]]),
        json!([2, [["k", {"c": 2, "f": 7}]], []]),
    ];
    read_alike(&lake, "ns.dflt", &expected, "evolved", Others::Both).await;
    update_and_compact(&lake, "ns.dflt", &expected, Others::Both).await;
}

/// A table PyIceberg wrote and evolved itself (`tests/interop/pyiceberg_nested_evolve.py`:
/// nested fields dropped, added back, renamed, moved, promoted with `update_schema()`, then
/// written again): icefloe reads the rows the writer expects, as PyIceberg and DuckDB do;
/// after icefloe's compaction and copy-on-write `UPDATE` (which rewrite the files PyIceberg
/// wrote before the evolution) and an `INSERT` of a map of structs, PyIceberg and DuckDB
/// read what icefloe reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyiceberg_evolved_nested_fields_read_and_rewrite_alike() {
    if python().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("catalog.db");
    let warehouse = dir.path().join("warehouse");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let written = run_script(
        "pyiceberg_nested_evolve.py",
        &[db.as_os_str(), warehouse.as_os_str()],
    );
    let catalog = SqlCatalog::open("default", &db).expect("icefloe opens PyIceberg's catalog");
    let mut lake = Lake {
        dir,
        db,
        warehouse,
        catalog: Arc::new(catalog),
        ctx: datafusion::prelude::SessionContext::new(),
    };
    lake.ctx = session_over(&lake).await;
    let ident = written["ident"].as_str().expect("ident");
    let mut expected = written["rows"].as_array().expect("rows").clone();
    assert_eq!(expected.len(), 4);
    read_alike(&lake, ident, &expected, "as written", Others::Both).await;

    exec(
        &lake,
        &format!(
            "CALL ice.system.rewrite_data_files(table => '{ident}', \
             options => map('rewrite-all', 'true'))"
        ),
    )
    .await;
    read_alike(
        &lake,
        ident,
        &expected,
        "after rewrite_data_files",
        Others::Both,
    )
    .await;
    exec(
        &lake,
        &format!("UPDATE ice.{ident} SET id = id + 10 WHERE id = 1"),
    )
    .await;
    expected = with_id(&expected, 1, 11);
    read_alike(&lake, ident, &expected, "after UPDATE", Others::Both).await;

    exec(
        &lake,
        &format!(
            "INSERT INTO ice.{ident} (id, m, l, s, lm, ml) VALUES (5, \
             map(['k5'], [named_struct('c', 5, 'f', 'f5')]), [], NULL, [], \
             map(['k'], [[named_struct('p', 55, 'r', 'r5')]]))"
        ),
    )
    .await;
    expected.push(json!([5, [["k5", {"c": 5, "f": "f5"}]], [], null, [],
                         [["k", [{"p": 55, "r": "r5"}]]]]));
    read_alike(&lake, ident, &expected, "after INSERT", Others::Both).await;
}
