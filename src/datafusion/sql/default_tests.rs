//! v3 column default values through SQL (spec "Default values"): `ADD COLUMN … DEFAULT`,
//! `ALTER COLUMN … SET|DROP DEFAULT`, reads of files written before a column existed,
//! `INSERT` filling the `write-default`, and the refusals, on a SQLite catalog in a
//! temporary directory.

use std::sync::Arc;

use serde_json::{json, Value};

use super::tests::{fails, ident, ok, session};
use crate::catalog::Catalog;
use crate::spec::{NestedField, TableMetadata, Type};
use crate::ErrorKind;

async fn metadata(catalog: &Arc<dyn Catalog>, name: &str) -> TableMetadata {
    catalog
        .load_table(&ident(name))
        .await
        .expect("table")
        .metadata()
        .clone()
}

/// The field at a dotted path of the current schema.
fn field(m: &TableMetadata, path: &str) -> NestedField {
    let mut fields = m.current_schema().columns().to_vec();
    let mut found = None;
    for name in path.split('.') {
        let f = fields
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no field {path}"))
            .clone();
        if let Type::Struct(s) = f.field_type.as_ref() {
            fields = s.fields.clone();
        }
        found = Some(f);
    }
    found.expect("a path")
}

/// (`initial-default`, `write-default`) of a field, as the schema's JSON gives them.
fn defaults(m: &TableMetadata, path: &str) -> (Value, Value) {
    let f = field(m, path);
    (
        f.initial_default.unwrap_or(Value::Null),
        f.write_default.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn create_table_sets_defaults_on_v3() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.c (id INT NOT NULL, n INT DEFAULT 5, \
         r VARCHAR NOT NULL DEFAULT 'r0' COMMENT 'req', d DATE DEFAULT '2024-02-29', \
         m DECIMAL(9, 2) DEFAULT 12.5, z INT DEFAULT NULL) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    let m = metadata(&catalog, "ns.c").await;
    assert_eq!(defaults(&m, "n"), (json!(5), json!(5)));
    assert_eq!(defaults(&m, "r"), (json!("r0"), json!("r0")));
    assert!(field(&m, "r").required);
    assert_eq!(field(&m, "r").doc.as_deref(), Some("req"));
    assert_eq!(
        defaults(&m, "d"),
        (json!("2024-02-29"), json!("2024-02-29"))
    );
    assert_eq!(defaults(&m, "m"), (json!("12.50"), json!("12.50")));
    assert_eq!(defaults(&m, "z"), (Value::Null, Value::Null));
    assert_eq!(defaults(&m, "id"), (Value::Null, Value::Null));
    // an INSERT not listing them writes the write-defaults
    ok(&ctx, "INSERT INTO ns.c (id) VALUES (1)").await;
    assert_eq!(
        ok(&ctx, "SELECT id, n, r, d, m, z FROM ns.c").await,
        [["1", "5", "r0", "2024-02-29", "12.50", ""]]
    );
}

#[tokio::test]
async fn defaults_fill_old_rows_and_omitted_columns() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, p STRUCT<x INT>) TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.t VALUES (1, named_struct('x', 10)), (2, NULL)",
    )
    .await;
    for sql in [
        "ALTER TABLE ns.t ADD COLUMN n INT DEFAULT 5",
        "ALTER TABLE ns.t ADD COLUMN r VARCHAR NOT NULL DEFAULT 'r0' COMMENT 'req'",
        "ALTER TABLE ns.t ADD COLUMNS (d DATE DEFAULT DATE '2024-02-29', \
         m DECIMAL(9, 2) DEFAULT 12.5 AFTER id)",
        "ALTER TABLE ns.t ADD COLUMN p.y BIGINT DEFAULT -7",
    ] {
        ok(&ctx, sql).await;
    }
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(defaults(&m, "n"), (json!(5), json!(5)));
    assert_eq!(defaults(&m, "r"), (json!("r0"), json!("r0")));
    assert!(field(&m, "r").required);
    assert_eq!(field(&m, "r").doc.as_deref(), Some("req"));
    assert_eq!(
        defaults(&m, "d"),
        (json!("2024-02-29"), json!("2024-02-29"))
    );
    assert_eq!(defaults(&m, "m"), (json!("12.50"), json!("12.50")));
    assert_eq!(defaults(&m, "p.y"), (json!(-7), json!(-7)));
    // the schema JSON carries them as the spec names them
    let schema = serde_json::to_value(m.current_schema()).expect("schema JSON");
    let n = &schema["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .find(|f| f["name"] == "n")
        .expect("n")
        .clone();
    assert_eq!(
        (&n["initial-default"], &n["write-default"]),
        (&json!(5), &json!(5))
    );

    // the file written before the columns existed reads their initial-default; p.y is
    // null where p is
    let all = "SELECT id, m, n, r, d, p.x, p.y FROM ns.t ORDER BY id";
    assert_eq!(
        ok(&ctx, all).await,
        [
            ["1", "12.50", "5", "r0", "2024-02-29", "10", "-7"],
            ["2", "12.50", "5", "r0", "2024-02-29", "", ""],
        ]
    );
    // filters on the defaults keep the old file (its rows all hold them)
    for (sql, expected) in [
        (
            "SELECT id FROM ns.t WHERE n = 5 ORDER BY id",
            vec!["1", "2"],
        ),
        ("SELECT id FROM ns.t WHERE n <> 5", vec![]),
        (
            "SELECT id FROM ns.t WHERE r = 'r0' AND d = DATE '2024-02-29' ORDER BY id",
            vec!["1", "2"],
        ),
        ("SELECT id FROM ns.t WHERE p.y = -7", vec!["1"]),
        ("SELECT id FROM ns.t WHERE n IS NULL", vec![]),
        ("SELECT count(*) FROM ns.t WHERE m = 12.5", vec!["2"]),
    ] {
        let got: Vec<String> = ok(&ctx, sql).await.into_iter().flatten().collect();
        assert_eq!(got, expected, "{sql}");
    }
    assert_eq!(
        ok(&ctx, "SELECT min(n), max(n), count(n) FROM ns.t").await,
        [["5", "5", "2"]]
    );

    // INSERT fills the write-default of the columns it does not list
    ok(
        &ctx,
        "INSERT INTO ns.t (id, p) VALUES (3, named_struct('x', 30, 'y', 70))",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN n SET DEFAULT 6").await;
    ok(
        &ctx,
        "ALTER TABLE ns.t ALTER COLUMN d SET DEFAULT '2025-01-01'",
    )
    .await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(defaults(&m, "n"), (json!(5), json!(6)));
    assert_eq!(
        defaults(&m, "d"),
        (json!("2024-02-29"), json!("2025-01-01"))
    );
    ok(&ctx, "INSERT INTO ns.t (id, r) VALUES (4, 'r4')").await;
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN n DROP DEFAULT").await;
    assert_eq!(
        defaults(&metadata(&catalog, "ns.t").await, "n"),
        (json!(5), Value::Null)
    );
    ok(&ctx, "INSERT INTO ns.t (id, n) VALUES (5, 50)").await;
    ok(&ctx, "INSERT INTO ns.t (id) VALUES (6)").await;
    assert_eq!(
        ok(&ctx, all).await,
        [
            ["1", "12.50", "5", "r0", "2024-02-29", "10", "-7"],
            ["2", "12.50", "5", "r0", "2024-02-29", "", ""],
            ["3", "12.50", "5", "r0", "2024-02-29", "30", "70"],
            ["4", "12.50", "6", "r4", "2025-01-01", "", ""],
            ["5", "12.50", "50", "r0", "2025-01-01", "", ""],
            ["6", "12.50", "", "r0", "2025-01-01", "", ""],
        ]
    );
    // a required column without a write-default must be given (the writer's check of
    // the planned rows refuses the null DataFusion fills in, naming the column)
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN r DROP DEFAULT").await;
    assert_eq!(
        defaults(&metadata(&catalog, "ns.t").await, "r"),
        (json!("r0"), Value::Null)
    );
    fails(
        &ctx,
        "INSERT INTO ns.t (id) VALUES (7)",
        ErrorKind::InvalidArgument,
        "column 'r' is required (NOT NULL) but a row to write holds null for it (it has no \
         write-default, so an INSERT must give it a value)",
    )
    .await;
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns.t").await, [["6"]]);
}

#[tokio::test]
async fn default_changes_that_are_refused() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.v2 (id INT, s VARCHAR)").await;
    ok(
        &ctx,
        "CREATE TABLE ns.v3 (id INT, s VARCHAR, p STRUCT<x INT>, l ARRAY<INT>) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    let cases = [
        (
            "ALTER TABLE ns.v2 ADD COLUMN n INT DEFAULT 5",
            ErrorKind::InvalidArgument,
            "cannot set a default value of column 'n': default values require format \
             version 3 (the table is v2)",
        ),
        (
            "ALTER TABLE ns.v2 ALTER COLUMN s SET DEFAULT 'x'",
            ErrorKind::InvalidArgument,
            "default values require format version 3",
        ),
        (
            "ALTER TABLE ns.v2 ALTER COLUMN s DROP DEFAULT",
            ErrorKind::InvalidArgument,
            "default values require format version 3",
        ),
        (
            "ALTER TABLE ns.v2 ADD COLUMN n INT NOT NULL",
            ErrorKind::InvalidArgument,
            "cannot add required column 'n' (NOT NULL) without a DEFAULT",
        ),
        (
            "ALTER TABLE ns.v3 ADD COLUMN n INT NOT NULL",
            ErrorKind::InvalidArgument,
            "cannot add required column 'n' (NOT NULL) without a DEFAULT",
        ),
        (
            "ALTER TABLE ns.v3 ADD COLUMN n INT NOT NULL DEFAULT NULL",
            ErrorKind::InvalidArgument,
            "without a DEFAULT",
        ),
        (
            "ALTER TABLE ns.v3 ADD COLUMN n INT DEFAULT 'abc'",
            ErrorKind::InvalidArgument,
            "DEFAULT abc is not a value of column 'n' of type int",
        ),
        (
            "ALTER TABLE ns.v3 ADD COLUMN n INT DEFAULT 5.5",
            ErrorKind::InvalidArgument,
            "DEFAULT 5.5 is not a value of column 'n' of type int",
        ),
        (
            "ALTER TABLE ns.v3 ADD COLUMN p.z DATE DEFAULT 5",
            ErrorKind::InvalidArgument,
            "is not a value of column 'p.z' of type date",
        ),
        (
            "ALTER TABLE ns.v3 ALTER COLUMN id SET DEFAULT 'abc'",
            ErrorKind::InvalidArgument,
            "DEFAULT abc is not a value of column 'id' of type int",
        ),
        (
            "ALTER TABLE ns.v3 ALTER COLUMN nope SET DEFAULT 1",
            ErrorKind::NotFound,
            "column 'nope' does not exist",
        ),
        (
            "ALTER TABLE ns.v3 ALTER COLUMN nope DROP DEFAULT",
            ErrorKind::NotFound,
            "nope",
        ),
        (
            "ALTER TABLE ns.v3 ALTER COLUMN p SET DEFAULT 1",
            ErrorKind::InvalidArgument,
            "column 'p' of type struct<x: int> cannot have a DEFAULT",
        ),
        (
            "ALTER TABLE ns.v3 ALTER COLUMN id SET DEFAULT id + 1",
            ErrorKind::DataFusion,
            "planning the DEFAULT of column 'id'",
        ),
        (
            "ALTER TABLE ns.v3 ALTER COLUMN id SET DEFAULT",
            ErrorKind::InvalidArgument,
            "expected a value after SET DEFAULT",
        ),
        (
            "ALTER TABLE ns.v3 ADD COLUMN q ARRAY<INT> DEFAULT [1]",
            ErrorKind::InvalidArgument,
            "only primitive columns have default values",
        ),
        (
            "ALTER TABLE ns.v3 ALTER COLUMN id TYPE BIGINT DEFAULT 1",
            ErrorKind::InvalidArgument,
            "only a type",
        ),
        (
            "CREATE TABLE ns.c (id INT DEFAULT 1)",
            ErrorKind::InvalidArgument,
            "column 'id' with a DEFAULT: default values require format version 3",
        ),
        (
            "CREATE TABLE ns.c (id INT DEFAULT 1) TBLPROPERTIES ('format-version'='2')",
            ErrorKind::InvalidArgument,
            "column 'id' with a DEFAULT: default values require format version 3",
        ),
        (
            "CREATE TABLE ns.c (id INT DEFAULT 1.5) TBLPROPERTIES ('format-version'='3')",
            ErrorKind::InvalidArgument,
            "DEFAULT 1.5 is not a value of column 'id' of type int",
        ),
    ];
    let locations = |catalog: Arc<dyn Catalog>| async move {
        let mut out = vec![];
        for t in ["ns.v2", "ns.v3"] {
            let table = catalog.load_table(&ident(t)).await.expect("table");
            out.push(table.metadata_location().to_string());
        }
        out
    };
    let before = locations(Arc::clone(&catalog)).await;
    for (sql, kind, needle) in cases {
        fails(&ctx, sql, kind, needle).await;
    }
    // nothing was committed
    assert_eq!(locations(Arc::clone(&catalog)).await, before);
    assert!(!catalog.table_exists(&ident("ns.c")).await.expect("exists"));
}

#[tokio::test]
async fn promoted_columns_keep_their_defaults() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT) TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    for sql in [
        "ALTER TABLE ns.t ADD COLUMN i INT DEFAULT 7",
        "ALTER TABLE ns.t ADD COLUMN d DATE DEFAULT '2024-02-29'",
        "ALTER TABLE ns.t ALTER COLUMN i TYPE BIGINT",
        "ALTER TABLE ns.t ALTER COLUMN d TYPE TIMESTAMP",
    ] {
        ok(&ctx, sql).await;
    }
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(defaults(&m, "i"), (json!(7), json!(7)));
    assert_eq!(
        defaults(&m, "d"),
        (
            json!("2024-02-29T00:00:00.000000"),
            json!("2024-02-29T00:00:00.000000")
        )
    );
    ok(&ctx, "INSERT INTO ns.t (id) VALUES (2)").await;
    assert_eq!(
        ok(&ctx, "SELECT id, i, d FROM ns.t ORDER BY id").await,
        [
            ["1", "7", "2024-02-29T00:00:00"],
            ["2", "7", "2024-02-29T00:00:00"]
        ]
    );
}

/// A struct value that leaves out a field with a `write-default` writes the default
/// (spec "Default values": a writer that does not supply a field writes its
/// `write-default`), at any depth (a struct in a struct); a NULL struct stays NULL;
/// `INSERT … SELECT` and `UPDATE … SET`. A field without a default is still refused,
/// naming it. (A list or map of narrower structs is refused by DataFusion 55's planner
/// before icefloe sees it: "Cannot automatically convert List(Struct(…)) …".)
#[tokio::test]
async fn a_struct_value_lacking_a_field_writes_its_write_default() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, s STRUCT<a INT, inner STRUCT<x INT>>) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    for sql in [
        "ALTER TABLE ns.t ADD COLUMN s.c INT DEFAULT 7",
        "ALTER TABLE ns.t ADD COLUMN s.inner.y INT DEFAULT 3",
        // a write-default other than the initial-default: the write-default is written
        "ALTER TABLE ns.t ALTER COLUMN s.c SET DEFAULT 8",
    ] {
        ok(&ctx, sql).await;
    }
    ok(
        &ctx,
        "INSERT INTO ns.t SELECT 1, named_struct('a', 1, 'inner', named_struct('x', 2))",
    )
    .await;
    // a NULL struct (of the narrower type) stays NULL
    ok(
        &ctx,
        "INSERT INTO ns.t (id, s) SELECT 2, CASE WHEN id > 5 THEN \
         named_struct('a', 1, 'inner', named_struct('x', 2)) END FROM (SELECT 1 AS id)",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.t (id, s) SELECT 3, named_struct('a', 3, 'c', 33, \
         'inner', CASE WHEN false THEN named_struct('x', 1) END)",
    )
    .await;
    let read = "SELECT id, s.a, s.c, s.inner.x, s.inner.y, s.inner IS NULL, s IS NULL \
                FROM ns.t ORDER BY id";
    let row = |r: [&str; 7]| r.map(String::from).to_vec();
    assert_eq!(
        ok(&ctx, read).await,
        [
            row(["1", "1", "8", "2", "3", "false", "false"]),
            row(["2", "", "", "", "", "true", "true"]),
            row(["3", "3", "33", "", "", "true", "false"]),
        ]
    );
    // UPDATE … SET of a narrower struct
    ok(
        &ctx,
        "UPDATE ns.t SET s = named_struct('a', 9, 'inner', named_struct('x', 8)) WHERE id = 2",
    )
    .await;
    assert_eq!(
        ok(
            &ctx,
            "SELECT s.a, s.c, s.inner.x, s.inner.y FROM ns.t WHERE id = 2"
        )
        .await,
        [["9", "8", "8", "3"].map(String::from).to_vec()]
    );
    // a field without a write-default is still one the value must give
    ok(&ctx, "ALTER TABLE ns.t ADD COLUMN s.d INT").await;
    fails(
        &ctx,
        "INSERT INTO ns.t (id, s) SELECT 4, named_struct('a', 1, 'inner', named_struct('x', 2))",
        ErrorKind::InvalidArgument,
        "cannot find data for output column 's.d'",
    )
    .await;
}
