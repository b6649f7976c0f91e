//! Writing nested values (lists, maps, structs of lists, lists of structs) with SQL:
//! `INSERT … VALUES`, `INSERT … SELECT` from another Iceberg table and `CREATE TABLE … AS
//! SELECT`. The table's Arrow schema carries the nested field ids; the rows come back the
//! same from icefloe, PyIceberg and DuckDB.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::prelude::{SessionConfig, SessionContext};
use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableIdent};
use serde_json::{json, Value};

use crate::catalog::attach;
use crate::interop::{assert_same_rows, duckdb_read, icefloe_rows, pyiceberg_read, python};

async fn run(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let df = icefloe::datafusion::sql::execute(ctx, sql)
        .await
        .map_err(|e| e.to_string())?;
    df.collect().await.map_err(|e| e.to_string())
}

struct Setup {
    _tmp: tempfile::TempDir,
    db: std::path::PathBuf,
    warehouse: std::path::PathBuf,
    catalog: Arc<dyn Catalog>,
    ctx: SessionContext,
}

async fn setup() -> Setup {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("catalog.db");
    let warehouse = tmp.path().join("warehouse");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    let catalog = SqlCatalog::open_or_create("default", &db)
        .expect("catalog")
        .with_warehouse(&warehouse.to_string_lossy())
        .expect("warehouse");
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("namespace");
    let catalog: Arc<dyn Catalog> = Arc::new(catalog);
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    icefloe::register_iceberg_factory(&ctx);
    attach(&ctx, "ice", Arc::clone(&catalog)).await;
    Setup {
        _tmp: tmp,
        db,
        warehouse,
        catalog,
        ctx,
    }
}

/// The table's Iceberg schema as JSON (from its metadata) and its rows through icefloe.
async fn rows(s: &Setup, name: &str) -> (Value, Vec<Value>) {
    let table = s
        .catalog
        .load_table(&TableIdent::parse(&format!("ns.{name}")))
        .await
        .expect("load");
    let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema");
    let rows = icefloe_rows(&s.ctx, &format!("ice.ns.{name}"), &schema).await;
    (schema, rows)
}

/// PyIceberg (through the catalog) and DuckDB (the metadata file) read `name` as `expected`.
fn other_engines_agree(s: &Setup, name: &str, expected: &[Value]) {
    if python().is_none() {
        return;
    }
    let ident = format!("ns.{name}");
    let pyi = pyiceberg_read(&s.db, &s.warehouse, &ident);
    assert_same_rows(
        &format!("{ident}: PyIceberg"),
        pyi["rows"].as_array().expect("rows"),
        expected,
    );
    let location = pyi["metadata_location"].as_str().expect("location");
    let duck = duckdb_read(location);
    assert_same_rows(
        &format!("{ident}: DuckDB"),
        duck["rows"].as_array().expect("rows"),
        expected,
    );
}

fn sorted(mut v: Vec<Value>) -> Vec<Value> {
    v.sort_by(crate::normalize::cmp_json);
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_values_of_lists_structs_and_maps() {
    let s = setup().await;
    for sql in [
        "CREATE TABLE ice.ns.l (id BIGINT, l ARRAY<INT>)",
        "INSERT INTO ice.ns.l VALUES (1, [1, 2]), (2, []), (3, NULL), (4, [NULL, 5])",
        "CREATE TABLE ice.ns.sl (id BIGINT, s STRUCT<a: INT, b: ARRAY<VARCHAR>>)",
        "INSERT INTO ice.ns.sl VALUES (1, named_struct('a', 1, 'b', ['x', 'y'])), \
         (2, named_struct('a', NULL, 'b', NULL))",
        "CREATE TABLE ice.ns.ls (id BIGINT, l ARRAY<STRUCT<x: INT, y: VARCHAR>>)",
        "INSERT INTO ice.ns.ls VALUES (1, [named_struct('x', 1, 'y', 'a'), named_struct('x', 2, 'y', NULL)])",
        "CREATE TABLE ice.ns.ll (id BIGINT, l ARRAY<ARRAY<BIGINT>>)",
        "INSERT INTO ice.ns.ll VALUES (1, [[1], [2, 3]])",
        // Spark's required, commented struct fields: a null struct holds no value for them
        "CREATE TABLE ice.ns.rs (id BIGINT, s STRUCT<a: INT NOT NULL COMMENT 'the a', \
         b: STRUCT<c: BIGINT NOT NULL>>)",
        "INSERT INTO ice.ns.rs VALUES (1, named_struct('a', 1, 'b', named_struct('c', 2))), \
         (2, NULL), (3, named_struct('a', 3, 'b', NULL))",
        // maps: DataFusion's CREATE TABLE has no MAP type; CTAS makes one
        "CREATE TABLE ice.ns.m AS SELECT CAST(1 AS BIGINT) AS id, MAP {'a': 1} AS m",
        "INSERT INTO ice.ns.m VALUES (2, MAP {'b': 2, 'c': 3})",
    ] {
        run(&s.ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let cases = [
        (
            "l",
            vec![
                json!([1, [1, 2]]),
                json!([2, []]),
                json!([3, null]),
                json!([4, [null, 5]]),
            ],
        ),
        (
            "sl",
            vec![
                json!([1, {"a": 1, "b": ["x", "y"]}]),
                json!([2, {"a": null, "b": null}]),
            ],
        ),
        (
            "ls",
            vec![json!([1, [{"x": 1, "y": "a"}, {"x": 2, "y": null}]])],
        ),
        ("ll", vec![json!([1, [[1], [2, 3]]])]),
        (
            "rs",
            vec![
                json!([1, {"a": 1, "b": {"c": 2}}]),
                json!([2, null]),
                json!([3, {"a": 3, "b": null}]),
            ],
        ),
        (
            "m",
            vec![json!([1, [["a", 1]]]), json!([2, [["b", 2], ["c", 3]]])],
        ),
    ];
    for (name, expected) in cases {
        let (_, ours) = rows(&s, name).await;
        assert_eq!(ours, sorted(expected.clone()), "ns.{name}");
        other_engines_agree(&s, name, &expected);
    }
    // a null in a required field of a struct that is there: refused, naming the field in
    // the user's words (it said "the batch has 1 null value(s)"; a tester's)
    let sql = "INSERT INTO ice.ns.rs VALUES \
               (4, named_struct('a', CAST(NULL AS INT), 'b', named_struct('c', 4)))";
    let err = run(&s.ctx, sql).await.expect_err(sql).to_string();
    assert!(
        err.contains("column 's.a' is required (NOT NULL) but 1 row(s) to write hold null for it"),
        "{err}"
    );
    assert_eq!(rows(&s, "rs").await.1.len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_select_and_ctas_copy_nested_columns_between_iceberg_tables() {
    let s = setup().await;
    for sql in [
        "CREATE TABLE ice.ns.src (id BIGINT, l ARRAY<INT>, s STRUCT<a: INT, b: ARRAY<INT>>)",
        "INSERT INTO ice.ns.src VALUES (1, [1, 2], named_struct('a', 1, 'b', [3])), (2, NULL, NULL)",
        // the same shape with other field ids: the values are matched by position
        "CREATE TABLE ice.ns.dst (k BIGINT, l2 ARRAY<INT>, s2 STRUCT<a: INT, b: ARRAY<INT>>)",
        "INSERT INTO ice.ns.dst SELECT * FROM ice.ns.src",
        "INSERT INTO ice.ns.dst SELECT id + 10, l, s FROM ice.ns.src WHERE id = 1",
        "CREATE TABLE ice.ns.copy AS SELECT * FROM ice.ns.src",
        "INSERT INTO ice.ns.copy VALUES (3, [4], named_struct('a', 5, 'b', []))",
    ] {
        run(&s.ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let src = vec![
        json!([1, [1, 2], {"a": 1, "b": [3]}]),
        json!([2, null, null]),
    ];
    let mut dst = src.clone();
    dst.push(json!([11, [1, 2], {"a": 1, "b": [3]}]));
    let mut copy = src.clone();
    copy.push(json!([3, [4], {"a": 5, "b": []}]));
    for (name, expected) in [("src", src), ("dst", dst), ("copy", copy)] {
        let (_, ours) = rows(&s, name).await;
        assert_eq!(ours, sorted(expected.clone()), "ns.{name}");
        other_engines_agree(&s, name, &expected);
    }
}

/// A `NOT NULL` struct holding `NOT NULL` fields (at any depth), a required list element
/// (a struct of required fields, or an `int`) and a required map value are written by
/// every write path: `INSERT … VALUES`, `INSERT … SELECT` from a table, CTAS declaring
/// the type, `MERGE … INSERT` / `UPDATE SET`, `UPDATE SET st.a` / `SET st`. Each failed
/// with "Unsupported CAST from Struct(a: Int32) to Struct(a: non-null Int32)" (a
/// tester's): DataFusion's struct cast refuses a nullable field into a non-null one
/// whatever the values. A null where a required field is present is refused naming it
/// (`st.a`, `l.element`, `m.value`; Arrow's "Non-nullable field of ListArray …" named
/// no column), and commits nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn required_structs_of_required_fields_and_required_elements_are_written() {
    let s = setup().await;
    for sql in [
        "CREATE TABLE ice.ns.r (id INT, st STRUCT<a: INT NOT NULL> NOT NULL, \
         s3 STRUCT<s: STRUCT<a: INT NOT NULL> NOT NULL> NOT NULL, \
         s4 STRUCT<a: INT NOT NULL, b: STRING, l: ARRAY<INT> NOT NULL, \
         m: MAP<STRING, INT> NOT NULL> NOT NULL)",
        "INSERT INTO ice.ns.r VALUES (1, named_struct('a', 1), \
         named_struct('s', named_struct('a', 10)), \
         named_struct('a', 100, 'b', 'x', 'l', [1, NULL], 'm', MAP {'k': 1}))",
        "CREATE TABLE ice.ns.src (id INT, st STRUCT<a: INT NOT NULL>)",
        "INSERT INTO ice.ns.src VALUES (2, named_struct('a', 2))",
        "INSERT INTO ice.ns.r SELECT id, st, named_struct('s', named_struct('a', 20)), \
         named_struct('a', 200, 'b', NULL, 'l', [], 'm', MAP {'j': 2}) FROM ice.ns.src",
        "MERGE INTO ice.ns.r t USING (SELECT 3 AS id) s ON t.id = s.id \
         WHEN NOT MATCHED THEN INSERT (id, st, s3, s4) VALUES (s.id, named_struct('a', 3), \
         named_struct('s', named_struct('a', 30)), \
         named_struct('a', 300, 'b', 'z', 'l', [3], 'm', MAP {'i': 3}))",
        "UPDATE ice.ns.r SET st.a = 11 WHERE id = 1",
        "UPDATE ice.ns.r SET s3 = named_struct('s', named_struct('a', CAST(22 AS INT))) \
         WHERE id = 2",
        "MERGE INTO ice.ns.r t USING (SELECT 3 AS id) s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET st = named_struct('a', 33)",
        "CREATE TABLE ice.ns.c (id INT, st STRUCT<a: INT NOT NULL> NOT NULL) \
         AS SELECT id, st FROM ice.ns.r WHERE id < 3",
    ] {
        run(&s.ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let (schema, ours) = rows(&s, "r").await;
    assert_eq!(schema["fields"][1]["required"], json!(true), "{schema}");
    assert_eq!(
        schema["fields"][1]["type"]["fields"][0]["required"],
        json!(true),
        "{schema}"
    );
    let expected = vec![
        json!([1, {"a": 11}, {"s": {"a": 10}}, {"a": 100, "b": "x", "l": [1, null], "m": [["k", 1]]}]),
        json!([2, {"a": 2}, {"s": {"a": 22}}, {"a": 200, "b": null, "l": [], "m": [["j", 2]]}]),
        json!([3, {"a": 33}, {"s": {"a": 30}}, {"a": 300, "b": "z", "l": [3], "m": [["i", 3]]}]),
    ];
    assert_eq!(ours, sorted(expected.clone()));
    other_engines_agree(&s, "r", &expected);
    let (_, copied) = rows(&s, "c").await;
    assert_eq!(copied, vec![json!([1, {"a": 11}]), json!([2, {"a": 2}])]);
    for (sql, field) in [
        (
            "INSERT INTO ice.ns.r VALUES (9, named_struct('a', NULL), \
             named_struct('s', named_struct('a', 1)), \
             named_struct('a', 1, 'b', 'x', 'l', [1], 'm', MAP {'k': 1}))",
            "st.a",
        ),
        (
            "INSERT INTO ice.ns.r VALUES (9, named_struct('a', 1), \
             named_struct('s', named_struct('a', NULL)), \
             named_struct('a', 1, 'b', 'x', 'l', [1], 'm', MAP {'k': 1}))",
            "s3.s.a",
        ),
        ("UPDATE ice.ns.r SET st.a = NULL WHERE id = 1", "st.a"),
        (
            "MERGE INTO ice.ns.r t USING (SELECT 3 AS id) s ON t.id = s.id \
             WHEN MATCHED THEN UPDATE SET st = named_struct('a', CAST(NULL AS INT))",
            "st.a",
        ),
        (
            "UPDATE ice.ns.r SET s4 = named_struct('a', 1, 'b', 'x', 'l', NULL, \
             'm', MAP {'k': 1}) WHERE id = 2",
            "s4.l",
        ),
    ] {
        let err = run(&s.ctx, sql).await.expect_err(sql);
        assert!(
            err.contains(&format!("column '{field}' is required (NOT NULL)")),
            "{sql}: {err}"
        );
    }
    assert_eq!(rows(&s, "r").await.1, sorted(expected));

    // required list elements (a struct of a required field, an int) and map values, as
    // PyIceberg and Java declare them (icefloe's CREATE TABLE declares no such element)
    let schema = icefloe::spec::Schema::from_json(&json!({
    "type": "struct", "fields": [
        {"id": 1, "name": "id", "required": false, "type": "int"},
        {"id": 2, "name": "ls", "required": false, "type": {"type": "list",
            "element-id": 3, "element-required": true, "element": {"type": "struct",
            "fields": [{"id": 4, "name": "a", "required": true, "type": "int"}]}}},
        {"id": 5, "name": "l", "required": false, "type": {"type": "list",
            "element-id": 6, "element-required": true, "element": "int"}},
        {"id": 7, "name": "m", "required": false, "type": {"type": "map",
            "key-id": 8, "key": "string", "value-id": 9, "value-required": true,
            "value": "int"}}
    ]}))
    .expect("schema");
    s.catalog
        .create_table(
            &TableIdent::parse("ns.py"),
            icefloe::catalog::TableCreation::new(schema),
        )
        .await
        .expect("create");
    for sql in [
        "INSERT INTO ice.ns.py VALUES (1, [named_struct('a', 1)], [1, 2], MAP {'k': 1}), \
         (2, NULL, NULL, NULL)",
        "INSERT INTO ice.ns.py SELECT 3, [named_struct('a', CAST(3 AS INT))], [3], \
         MAP {'j': CAST(3 AS INT)}",
        "UPDATE ice.ns.py SET ls = [named_struct('a', 22)], l = [22], m = MAP {'u': 22} \
         WHERE id = 2",
    ] {
        run(&s.ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let expected = vec![
        json!([1, [{"a": 1}], [1, 2], [["k", 1]]]),
        json!([2, [{"a": 22}], [22], [["u", 22]]]),
        json!([3, [{"a": 3}], [3], [["j", 3]]]),
    ];
    assert_eq!(rows(&s, "py").await.1, sorted(expected.clone()));
    other_engines_agree(&s, "py", &expected);
    for (sql, field) in [
        (
            "INSERT INTO ice.ns.py VALUES (9, NULL, [1, NULL], NULL)",
            "l.element",
        ),
        (
            "INSERT INTO ice.ns.py VALUES (9, NULL, NULL, MAP {'k': NULL})",
            "m.value",
        ),
        (
            "INSERT INTO ice.ns.py VALUES (9, [named_struct('a', NULL)], NULL, NULL)",
            "ls.element.a",
        ),
        (
            "INSERT INTO ice.ns.py VALUES (9, [NULL], NULL, NULL)",
            "ls.element",
        ),
        ("UPDATE ice.ns.py SET l = [NULL] WHERE id = 1", "l.element"),
    ] {
        let err = run(&s.ctx, sql).await.expect_err(sql);
        assert!(
            err.contains(&format!("column '{field}' is required (NOT NULL)")),
            "{sql}: {err}"
        );
    }
    assert_eq!(rows(&s, "py").await.1, sorted(expected));
}
