//! `ALTER TABLE` properties, columns, branches and tags, and the snapshot procedures,
//! on a SQLite catalog in a temporary directory.

use std::sync::Arc;

use super::tests::{fails, ident, ok, session};
use crate::catalog::Catalog;
use crate::spec::{FormatVersion, TableMetadata};
use crate::transaction::{Transaction, UpdateProperties, UpdateSchema};
use crate::ErrorKind;

async fn metadata(catalog: &Arc<dyn Catalog>, name: &str) -> TableMetadata {
    catalog
        .load_table(&ident(name))
        .await
        .expect("table")
        .metadata()
        .clone()
}

async fn metadata_location(catalog: &Arc<dyn Catalog>, name: &str) -> String {
    catalog
        .load_table(&ident(name))
        .await
        .expect("table")
        .metadata_location()
        .to_string()
}

/// The current schema's columns as `id:name:type[:required]`, nested fields inline.
fn columns(m: &TableMetadata) -> Vec<String> {
    m.current_schema()
        .columns()
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}{}",
                f.id,
                f.name,
                f.field_type,
                if f.required { ":required" } else { "" }
            )
        })
        .collect()
}

fn property<'a>(m: &'a TableMetadata, key: &str) -> Option<&'a str> {
    m.properties.get(key).map(String::as_str)
}

#[tokio::test]
async fn set_and_unset_properties() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id BIGINT) TBLPROPERTIES ('format-version'='2', 'a'='0')",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.t SET TBLPROPERTIES ('a'='1', 'write.delete.mode'='merge-on-read', \
         'format-version'='3')",
    )
    .await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(property(&m, "a"), Some("1"));
    assert_eq!(property(&m, "write.delete.mode"), Some("merge-on-read"));
    assert_eq!(m.format_version, FormatVersion::V3);
    assert_eq!(property(&m, "format-version"), None);
    // the same version again is no change, and no commit
    let before = metadata_location(&catalog, "ns.t").await;
    ok(
        &ctx,
        "ALTER TABLE ns.t SET TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);

    ok(&ctx, "ALTER TABLE ns.t UNSET TBLPROPERTIES ('a')").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(property(&m, "a"), None);
    assert_eq!(property(&m, "write.delete.mode"), Some("merge-on-read"));
    ok(
        &ctx,
        "ALTER TABLE ns.t UNSET TBLPROPERTIES IF EXISTS ('a', 'write.delete.mode')",
    )
    .await;
    assert_eq!(
        property(&metadata(&catalog, "ns.t").await, "write.delete.mode"),
        None
    );

    // refusals name the statement, the table and the key, and change nothing
    let before = metadata_location(&catalog, "ns.t").await;
    let cases = [
        (
            "ALTER TABLE ns.t UNSET TBLPROPERTIES ('missing')",
            ErrorKind::NotFound,
            "table property 'missing' is not set",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('format-version'='2')",
            ErrorKind::InvalidArgument,
            "cannot downgrade format version 3 to 2",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('format-version'='9')",
            ErrorKind::InvalidArgument,
            "'format-version' is '9'",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('b'='1', 'current-snapshot-id'='5')",
            ErrorKind::InvalidArgument,
            "table property 'current-snapshot-id' is reserved",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('uuid'='x')",
            ErrorKind::InvalidArgument,
            "'uuid' is reserved",
        ),
        (
            "ALTER TABLE ns.t UNSET TBLPROPERTIES ('format-version')",
            ErrorKind::InvalidArgument,
            "'format-version' is reserved",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('write.delete.mode'='sometimes')",
            ErrorKind::InvalidArgument,
            "'write.delete.mode' is 'sometimes'",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES 'a'='1'",
            ErrorKind::InvalidArgument,
            "expected '('",
        ),
    ];
    for (sql, kind, needle) in cases {
        fails(&ctx, sql, kind, needle).await;
        fails(&ctx, sql, kind, "ALTER TABLE cat.ns.t").await;
    }
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
    assert_eq!(property(&metadata(&catalog, "ns.t").await, "b"), None);
}

#[tokio::test]
async fn add_rename_promote_and_read_old_files() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, s VARCHAR, f FLOAT, d DECIMAL(5, 2), p STRUCT<x INT>)",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.t VALUES (1, 'a', 1.5, 1.25, {x: 10}), (2, 'b', 2.5, 2.50, {x: 20})",
    )
    .await;
    let start = metadata(&catalog, "ns.t").await;
    assert_eq!(start.last_column_id, 6);

    ok(
        &ctx,
        "ALTER TABLE ns.t ADD COLUMN c BIGINT COMMENT 'new' AFTER id",
    )
    .await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.current_schema_id, 1);
    assert_eq!(m.last_column_id, 7);
    assert_eq!(
        columns(&m),
        [
            "1:id:int",
            "7:c:long",
            "2:s:string",
            "3:f:float",
            "4:d:decimal(5, 2)",
            "5:p:struct<x: int>"
        ]
    );
    assert_eq!(
        m.current_schema()
            .field_by_id(7)
            .and_then(|f| f.doc.clone()),
        Some("new".to_string())
    );
    // SELECT * sees the new column at once: NULL in the old file
    assert_eq!(
        ok(&ctx, "SELECT * FROM ns.t ORDER BY id").await,
        [
            ["1", "", "a", "1.5", "1.25", "{x: 10}"],
            ["2", "", "b", "2.5", "2.50", "{x: 20}"]
        ]
    );

    ok(&ctx, "ALTER TABLE ns.t RENAME COLUMN s TO name").await;
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN id TYPE BIGINT").await;
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN f TYPE DOUBLE").await;
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN d TYPE DECIMAL(9, 2)").await;
    ok(
        &ctx,
        "ALTER TABLE ns.t ADD COLUMNS (p.y VARCHAR FIRST, tags INT[] COMMENT 'list')",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t RENAME COLUMN p.x TO xx").await;
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN name FIRST").await;
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN c COMMENT 'changed'").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(
        columns(&m),
        [
            "2:name:string",
            "1:id:long",
            "7:c:long",
            "3:f:double",
            "4:d:decimal(9, 2)",
            "5:p:struct<y: string, xx: int>",
            "9:tags:list<int>"
        ]
    );
    // field ids after last-column-id: p.y 8, tags 9 and its element 10
    assert_eq!(m.last_column_id, 10);
    assert_eq!(
        m.current_schema().field_by_id(8).map(|f| f.name.as_str()),
        Some("y")
    );
    assert_eq!(
        m.current_schema()
            .field_by_id(7)
            .and_then(|f| f.doc.clone()),
        Some("changed".to_string())
    );
    assert_eq!(m.schemas.len(), 10);
    assert_eq!(m.current_schema_id, 9);
    ok(
        &ctx,
        "INSERT INTO ns.t (name, id, c) VALUES ('z', 3000000000, 7)",
    )
    .await;
    assert_eq!(
        ok(
            &ctx,
            "SELECT name, id, c, f, d, p, tags FROM ns.t ORDER BY id"
        )
        .await,
        [
            ["a", "1", "", "1.5", "1.25", "{y: , xx: 10}", ""],
            ["b", "2", "", "2.5", "2.50", "{y: , xx: 20}", ""],
            ["z", "3000000000", "7", "", "", "", ""]
        ]
    );
    // filters on promoted and renamed columns over old files
    assert_eq!(
        ok(&ctx, "SELECT name FROM ns.t WHERE id = 2 AND f > 2.0").await,
        [["b"]]
    );
    // the old snapshot still reads with its own schema
    let first = start.current_snapshot_id.expect("snapshot");
    assert_eq!(
        ok(&ctx, &format!("SELECT s FROM ns.\"t@{first}\" ORDER BY s")).await,
        [["a"], ["b"]]
    );

    // drop a column, and a field of a struct; a dropped name comes back with a new id
    ok(&ctx, "ALTER TABLE ns.t DROP COLUMN c").await;
    ok(&ctx, "ALTER TABLE ns.t DROP COLUMNS (p.y, tags)").await;
    ok(&ctx, "ALTER TABLE ns.t ADD COLUMN c INT").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(
        columns(&m),
        [
            "2:name:string",
            "1:id:long",
            "3:f:double",
            "4:d:decimal(9, 2)",
            "5:p:struct<xx: int>",
            "11:c:int"
        ]
    );
    assert_eq!(
        ok(&ctx, "SELECT name, c FROM ns.t ORDER BY id").await,
        [["a", ""], ["b", ""], ["z", ""]]
    );
    let before = metadata_location(&catalog, "ns.t").await;
    ok(&ctx, "ALTER TABLE ns.t DROP COLUMN IF EXISTS nothing").await;
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
}

#[tokio::test]
async fn schema_changes_update_the_name_mapping() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, s VARCHAR) TBLPROPERTIES \
         ('schema.name-mapping.default'='[{\"field-id\": 1, \"names\": [\"id\"]}, \
         {\"field-id\": 2, \"names\": [\"s\"]}]')",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t RENAME COLUMN s TO name").await;
    ok(&ctx, "ALTER TABLE ns.t ADD COLUMN c BIGINT").await;
    let m = metadata(&catalog, "ns.t").await;
    let mapping: serde_json::Value =
        serde_json::from_str(property(&m, "schema.name-mapping.default").unwrap()).unwrap();
    assert_eq!(
        mapping,
        serde_json::json!([
            {"field-id": 1, "names": ["id"]},
            {"field-id": 2, "names": ["s", "name"]},
            {"field-id": 3, "names": ["c"]}
        ])
    );
}

/// A column's own properties (`write.metadata.metrics.column.<name>`, …) follow it when
/// it is renamed, its struct too, and go when it is dropped, as Java's `SchemaUpdate`
/// keeps them: a renamed column keeps its `none` metrics (no bounds written), a column
/// added back under a dropped one's name does not inherit them.
#[tokio::test]
async fn column_properties_follow_renames_and_drops() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, s VARCHAR, st STRUCT<a INT>) TBLPROPERTIES \
         ('write.metadata.metrics.column.s'='none', \
         'write.metadata.metrics.column.st.a'='counts', \
         'write.parquet.bloom-filter-enabled.column.s'='true')",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t RENAME COLUMN s TO s2").await;
    ok(&ctx, "ALTER TABLE ns.t RENAME COLUMN st TO st2").await;
    let m = metadata(&catalog, "ns.t").await;
    let mut keys: Vec<(&str, &str)> = m
        .properties
        .iter()
        .filter(|(k, _)| k.contains(".column."))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            ("write.metadata.metrics.column.s2", "none"),
            ("write.metadata.metrics.column.st2.a", "counts"),
            ("write.parquet.bloom-filter-enabled.column.s2", "true"),
        ]
    );
    ok(
        &ctx,
        "INSERT INTO ns.t VALUES (1, 'secret', named_struct('a', 5))",
    )
    .await;
    let bounds = "SELECT CAST(readable_metrics['s2']['lower_bound'] AS VARCHAR), \
         CAST(readable_metrics['st2.a']['lower_bound'] AS VARCHAR), \
         CAST(readable_metrics['st2.a']['value_count'] AS VARCHAR) FROM ns.\"t$files\"";
    assert_eq!(ok(&ctx, bounds).await, [["", "", "1"]]);

    ok(&ctx, "ALTER TABLE ns.t DROP COLUMN s2").await;
    ok(&ctx, "ALTER TABLE ns.t ADD COLUMN s2 VARCHAR").await;
    let m = metadata(&catalog, "ns.t").await;
    assert!(
        !m.properties.keys().any(|k| k.ends_with(".column.s2")),
        "{:?}",
        m.properties
    );
    assert_eq!(
        property(&m, "write.metadata.metrics.column.st2.a"),
        Some("counts")
    );
    ok(
        &ctx,
        "INSERT INTO ns.t VALUES (2, named_struct('a', 6), 'open')",
    )
    .await;
    let bounds = "SELECT CAST(readable_metrics['s2']['lower_bound'] AS VARCHAR) \
         FROM ns.\"t$files\"";
    let mut got = ok(&ctx, bounds).await;
    got.sort();
    assert_eq!(got, [[""], ["open"]]);
}

/// A bad bloom-filter value is refused where it is set (`SET TBLPROPERTIES`, `CREATE
/// TABLE … TBLPROPERTIES`), naming the property, and nothing is committed; before, it
/// was refused only by each later write. An fpp or NDV is checked when its column's
/// filter is (or becomes) enabled, as the writer reads them only then.
#[tokio::test]
async fn bloom_filter_values_are_checked_when_set() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT, s VARCHAR)").await;
    let before = metadata(&catalog, "ns.t").await.properties.clone();
    for (props, needle) in [
        (
            "'write.parquet.bloom-filter-enabled.column.s'='true', \
             'write.parquet.bloom-filter-fpp.column.s'='1.5'",
            "table property 'write.parquet.bloom-filter-fpp.column.s': '1.5' is not a \
             number greater than 0 and less than 1",
        ),
        (
            "'write.parquet.bloom-filter-enabled.column.s'='true', \
             'write.parquet.bloom-filter-ndv.column.s'='-3'",
            "table property 'write.parquet.bloom-filter-ndv.column.s': '-3' is not a \
             positive integer",
        ),
        (
            "'write.parquet.bloom-filter-max-bytes'='0'",
            "table property 'write.parquet.bloom-filter-max-bytes': '0' is not an \
             integer from 1 to 2147483647",
        ),
    ] {
        let set = format!("ALTER TABLE ns.t SET TBLPROPERTIES ({props})");
        fails(&ctx, &set, ErrorKind::InvalidArgument, needle).await;
        let create = format!("CREATE TABLE ns.c (id INT, s VARCHAR) TBLPROPERTIES ({props})");
        fails(&ctx, &create, ErrorKind::InvalidArgument, needle).await;
    }
    assert_eq!(metadata(&catalog, "ns.t").await.properties, before);
    // an fpp set first is checked when the filter is enabled later
    ok(
        &ctx,
        "ALTER TABLE ns.t SET TBLPROPERTIES ('write.parquet.bloom-filter-fpp.column.s'='2')",
    )
    .await;
    fails(
        &ctx,
        "ALTER TABLE ns.t SET TBLPROPERTIES ('write.parquet.bloom-filter-enabled.column.s'='true')",
        ErrorKind::InvalidArgument,
        "'write.parquet.bloom-filter-fpp.column.s': '2' is not a number",
    )
    .await;
    // good values are taken and the table is still written
    ok(
        &ctx,
        "ALTER TABLE ns.t SET TBLPROPERTIES ('write.parquet.bloom-filter-fpp.column.s'='0.05', \
         'write.parquet.bloom-filter-enabled.column.s'='true')",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a')").await;
    assert_eq!(ok(&ctx, "SELECT s FROM ns.t").await, [["a"]]);
}

/// Spark's `CHANGE [COLUMN]`: a synonym of `ALTER COLUMN` (dbt-spark comments columns
/// with `CHANGE COLUMN c COMMENT '…'`), and the Hive form `CHANGE COLUMN c c type
/// [COMMENT '…'] [FIRST|AFTER x]` (type, comment and position in one commit; a comment
/// left out stays); a rename or `NOT NULL` there refused as Spark refuses them.
#[tokio::test]
async fn change_column_is_alter_column() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, s VARCHAR, f FLOAT, st STRUCT<a INT, b INT>)",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.t VALUES (1, 'a', 1.5, named_struct('a', 1, 'b', 2))",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t CHANGE COLUMN id TYPE BIGINT").await;
    ok(&ctx, "ALTER TABLE ns.t CHANGE s COMMENT 'the s'").await;
    let before = metadata(&catalog, "ns.t").await.current_schema_id;
    ok(
        &ctx,
        "ALTER TABLE ns.t CHANGE COLUMN f f DOUBLE COMMENT 'ff' FIRST",
    )
    .await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.current_schema_id, before + 1, "one commit, one schema");
    ok(&ctx, "ALTER TABLE ns.t CHANGE COLUMN st.b b INT FIRST").await;
    ok(&ctx, "ALTER TABLE ns.t CHANGE COLUMN s s VARCHAR AFTER id").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(
        columns(&m),
        [
            "3:f:double",
            "1:id:long",
            "2:s:string",
            "4:st:struct<b: int, a: int>"
        ]
    );
    let doc = |name: &str| {
        m.current_schema()
            .field_by_name(name)
            .and_then(|f| f.doc.clone())
    };
    assert_eq!(doc("f").as_deref(), Some("ff"));
    assert_eq!(doc("s").as_deref(), Some("the s"));
    assert_eq!(
        ok(&ctx, "SELECT f, id, s FROM ns.t").await,
        [["1.5", "1", "a"]]
    );

    fails(
        &ctx,
        "ALTER TABLE ns.t CHANGE COLUMN s s2 VARCHAR",
        ErrorKind::InvalidArgument,
        "run RENAME COLUMN instead",
    )
    .await;
    fails(
        &ctx,
        "ALTER TABLE ns.t CHANGE COLUMN s s VARCHAR NOT NULL",
        ErrorKind::InvalidArgument,
        "only a type, a COMMENT and a position",
    )
    .await;
    fails(
        &ctx,
        "ALTER TABLE ns.t CHANGE COLUMN s s INT",
        ErrorKind::InvalidArgument,
        "not a valid type promotion",
    )
    .await;
    let after = metadata(&catalog, "ns.t").await;
    assert_eq!(
        after.current_schema_id, m.current_schema_id,
        "nothing committed"
    );
}

/// A list's `element` and a map's `key`/`value` named in a column clause: promoted
/// (`ll.element.element` too); a default, a drop (also `IF EXISTS`, which used to pass as
/// "no such column") or a change of the key refused naming it; nothing committed.
#[tokio::test]
async fn list_and_map_parts_in_column_clauses() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (l ARRAY<INT>, m MAP<INT, FLOAT>, ll ARRAY<ARRAY<INT>>) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.t ALTER COLUMN ll.element.element TYPE BIGINT",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t CHANGE COLUMN m.value TYPE DOUBLE").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(
        columns(&m),
        [
            "1:l:list<int>",
            "2:m:map<int, double>",
            "3:ll:list<list<long>>"
        ]
    );
    let before = metadata_location(&catalog, "ns.t").await;
    for (sql, needle) in [
        (
            "ALTER TABLE ns.t ALTER COLUMN l.element SET DEFAULT 5",
            "cannot set a default value of the element of list 'l'",
        ),
        (
            "ALTER TABLE ns.t DROP COLUMN IF EXISTS m.key",
            "cannot drop the key of map 'm'",
        ),
        (
            "ALTER TABLE ns.t DROP COLUMN l.element",
            "cannot drop the element of list 'l'",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN m.key TYPE BIGINT",
            "cannot change the key of map 'm': map keys cannot be updated",
        ),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
    }
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
}

/// Spark 4's comma-separated `ALTER COLUMN` changes (`ALTER COLUMN a TYPE BIGINT, b
/// COMMENT '…'`; was read as the type `BIGINT, b COMMENT '…'`): one commit, one new
/// schema; a refused change commits none of them.
#[tokio::test]
async fn several_column_changes_in_one_statement() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, s VARCHAR, f FLOAT, d DECIMAL(5, 2)) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a', 1.5, 1.25)").await;
    let before = metadata(&catalog, "ns.t").await.current_schema_id;
    ok(
        &ctx,
        "ALTER TABLE ns.t ALTER COLUMN id TYPE BIGINT, s COMMENT 'the s', \
         f TYPE DOUBLE, d TYPE DECIMAL(10, 2), s SET DEFAULT concat('x', 'y'), f FIRST",
    )
    .await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.current_schema_id, before + 1, "one commit, one schema");
    assert_eq!(
        columns(&m),
        [
            "3:f:double",
            "1:id:long",
            "2:s:string",
            "4:d:decimal(10, 2)"
        ]
    );
    let s = m.current_schema().field_by_name("s").expect("s");
    assert_eq!(s.doc.as_deref(), Some("the s"));
    assert_eq!(s.write_default, Some(serde_json::json!("xy")));
    ok(&ctx, "INSERT INTO ns.t (id) VALUES (2)").await;
    assert_eq!(
        ok(&ctx, "SELECT id, s, f, d FROM ns.t ORDER BY id").await,
        [["1", "a", "1.5", "1.25"], ["2", "xy", "", ""]]
    );
    let location = metadata_location(&catalog, "ns.t").await;
    fails(
        &ctx,
        "ALTER TABLE ns.t ALTER COLUMN s FIRST, id TYPE VARCHAR",
        ErrorKind::InvalidArgument,
        "cannot change column 'id': from long to string",
    )
    .await;
    assert_eq!(metadata_location(&catalog, "ns.t").await, location);
}

/// A column may not take the name of a partition field of any spec whose source is
/// another column still in the table: Iceberg Java (so Spark) refuses to load such
/// metadata ("Cannot create identity partition sourced from different field in schema"),
/// though icefloe, PyIceberg and DuckDB read it. Nothing is committed.
#[tokio::test]
async fn columns_do_not_take_partition_field_names() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, s VARCHAR, q INT) PARTITIONED BY (bucket(4, id), s)",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t RENAME COLUMN s TO s2").await;
    ok(&ctx, "ALTER TABLE ns.t DROP PARTITION FIELD id_bucket").await;
    let before = metadata_location(&catalog, "ns.t").await;
    for (sql, needle) in [
        (
            "ALTER TABLE ns.t ADD COLUMN id_bucket INT",
            "column name 'id_bucket' is the name of partition field 'id_bucket' of spec 0, \
             whose source is column 'id'",
        ),
        (
            "ALTER TABLE ns.t ADD COLUMN s INT",
            "partition field 's' of spec 0, whose source is column 's2'",
        ),
        (
            "ALTER TABLE ns.t RENAME COLUMN q TO s",
            "partition field 's' of spec 0",
        ),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
    }
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
    // the partition field's own source may take its name back
    ok(&ctx, "ALTER TABLE ns.t RENAME COLUMN s2 TO s").await;
    ok(&ctx, "ALTER TABLE ns.t ADD COLUMN id_bucket_4 INT").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(
        columns(&m),
        ["1:id:int", "2:s:string", "3:q:int", "4:id_bucket_4:int"]
    );
}

/// Tester M64 fault 2: `SET NOT NULL` looked at neither the table nor the column.
#[tokio::test]
async fn set_not_null_keeps_a_required_column_and_refuses_an_optional_one() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.r (id INT NOT NULL, s STRUCT<x INT NOT NULL>, o INT)",
    )
    .await;
    let before = metadata(&catalog, "ns.r").await;
    // already required: a no-op (Java's internalUpdateColumnRequirement), also nested
    ok(&ctx, "ALTER TABLE ns.r ALTER COLUMN id SET NOT NULL").await;
    ok(&ctx, "ALTER TABLE ns.r CHANGE COLUMN s.x SET NOT NULL").await;
    let after = metadata(&catalog, "ns.r").await;
    assert_eq!(after.current_schema_id, before.current_schema_id);
    assert_eq!(after.schemas.len(), 1);
    assert_eq!(columns(&after), columns(&before));
    let cases = [
        (
            "ALTER TABLE ns.r ALTER COLUMN o SET NOT NULL",
            ErrorKind::InvalidArgument,
            "cannot make column 'o' required (SET NOT NULL): it is optional",
        ),
        (
            "ALTER TABLE ns.r ALTER COLUMN s SET NOT NULL",
            ErrorKind::InvalidArgument,
            "cannot make column 's' required (SET NOT NULL): it is optional",
        ),
        (
            "ALTER TABLE ns.r ALTER COLUMN nope SET NOT NULL",
            ErrorKind::NotFound,
            "column 'nope' does not exist",
        ),
        (
            "ALTER TABLE ns.nope ALTER COLUMN id SET NOT NULL",
            ErrorKind::NotFound,
            "ns.nope",
        ),
        // one refused change leaves the statement's others uncommitted
        (
            "ALTER TABLE ns.r ALTER COLUMN id COMMENT 'c', o SET NOT NULL",
            ErrorKind::InvalidArgument,
            "cannot make column 'o' required",
        ),
    ];
    for (sql, kind, needle) in cases {
        fails(&ctx, sql, kind, needle).await;
    }
    let last = metadata(&catalog, "ns.r").await;
    assert_eq!(
        last.current_schema().columns(),
        before.current_schema().columns()
    );
}

#[tokio::test]
async fn column_changes_that_are_refused() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT NOT NULL, s VARCHAR, ts TIMESTAMP, d DATE, \
         p STRUCT<x INT>) PARTITIONED BY (days(ts))",
    )
    .await;
    let before = metadata_location(&catalog, "ns.t").await;
    let cases = [
        (
            "ALTER TABLE ns.t ALTER COLUMN s TYPE INT",
            ErrorKind::InvalidArgument,
            "cannot change column 's': from string to int: not a valid type promotion",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN id TYPE VARCHAR",
            ErrorKind::InvalidArgument,
            "from int to string",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN ts TYPE TIMESTAMPTZ",
            ErrorKind::InvalidArgument,
            "from timestamp to timestamptz",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN p TYPE INT",
            ErrorKind::InvalidArgument,
            "only primitive types are promoted",
        ),
        (
            "ALTER TABLE ns.t DROP COLUMN ts",
            ErrorKind::InvalidArgument,
            "cannot drop column 'ts': the current partition spec uses it (partition field \
             'ts_day', day)",
        ),
        (
            "ALTER TABLE ns.t ADD COLUMN n INT NOT NULL",
            ErrorKind::InvalidArgument,
            "cannot add required column 'n' (NOT NULL)",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN s SET NOT NULL",
            ErrorKind::InvalidArgument,
            "cannot make column 's' required (SET NOT NULL)",
        ),
        (
            "ALTER TABLE ns.t ADD COLUMN s INT",
            ErrorKind::AlreadyExists,
            "column 's' already exists",
        ),
        (
            "ALTER TABLE ns.t ADD COLUMN q.x INT",
            ErrorKind::NotFound,
            "column 'q' does not exist",
        ),
        (
            "ALTER TABLE ns.t ADD COLUMN s.x INT",
            ErrorKind::InvalidArgument,
            "column 's' is not a struct",
        ),
        (
            "ALTER TABLE ns.t ADD COLUMNS (st2 STRUCT<a INT>, st2.q INT)",
            ErrorKind::InvalidArgument,
            "its parent 'st2' is not in the table's schema",
        ),
        (
            "ALTER TABLE ns.t DROP COLUMN nothing",
            ErrorKind::NotFound,
            "column 'nothing' does not exist",
        ),
        (
            "ALTER TABLE ns.t RENAME COLUMN s TO id",
            ErrorKind::AlreadyExists,
            "cannot rename column 's' to 'id'",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN s AFTER nothing",
            ErrorKind::NotFound,
            "cannot move column 's' after 'nothing'",
        ),
        (
            "ALTER TABLE ns.t ADD COLUMN n FOO",
            ErrorKind::DataFusion,
            "planning the columns",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN id TYPE BIGINT COMMENT 'x'",
            ErrorKind::InvalidArgument,
            "TYPE 'BIGINT COMMENT 'x'': only a type",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN s",
            ErrorKind::InvalidArgument,
            "expected TYPE, DROP NOT NULL, SET DEFAULT, DROP DEFAULT, COMMENT, FIRST or \
             AFTER, found end of statement",
        ),
        // default values are v3 (see default_tests)
        (
            "ALTER TABLE ns.t ADD COLUMN n INT DEFAULT 5",
            ErrorKind::InvalidArgument,
            "cannot set a default value of column 'n': default values require format \
             version 3 (the table is v2)",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN s SET DEFAULT 'x'",
            ErrorKind::InvalidArgument,
            "cannot set a default value of column 's': default values require format \
             version 3",
        ),
        (
            "ALTER TABLE ns.t ADD PARTITION FIELD years(id)",
            ErrorKind::InvalidArgument,
            "ADD PARTITION FIELD: cannot add partition field year(id): transform year cannot \
             apply to column 'id'",
        ),
        (
            "ALTER TABLE ns.t ADD PARTITION FIELD hours(ts)",
            ErrorKind::InvalidArgument,
            "the spec already has 'ts_day' (day); drop or replace it",
        ),
        (
            "ALTER TABLE ns.t ADD PARTITION FIELD bucket(4, nope)",
            ErrorKind::NotFound,
            "column 'nope' does not exist",
        ),
        (
            "ALTER TABLE ns.t ADD PARTITION FIELD bucket(4, id) AS s",
            ErrorKind::InvalidArgument,
            "partition field name 's' is the name of a column",
        ),
        (
            "ALTER TABLE ns.t DROP PARTITION FIELD id_bucket_4",
            ErrorKind::NotFound,
            "DROP PARTITION FIELD: partition field 'id_bucket_4' is not in the current \
             partition spec 0 (ts_day: day)",
        ),
        (
            "ALTER TABLE ns.t DROP PARTITION FIELD bucket(4, id)",
            ErrorKind::NotFound,
            "partition field bucket(4, id) is not in the current partition spec",
        ),
        (
            "ALTER TABLE ns.t REPLACE PARTITION FIELD ts_day WITH months(nope)",
            ErrorKind::NotFound,
            "REPLACE PARTITION FIELD: column 'nope' does not exist",
        ),
        (
            "ALTER TABLE ns.t WRITE ORDERED BY nope",
            ErrorKind::NotFound,
            "WRITE: column 'nope' does not exist",
        ),
        (
            "ALTER TABLE ns.t WRITE ORDERED BY id SIDEWAYS",
            ErrorKind::InvalidArgument,
            "expected ',', ASC, DESC, NULLS FIRST or NULLS LAST",
        ),
        (
            "ALTER TABLE ns.t WRITE DISTRIBUTED BY id",
            ErrorKind::InvalidArgument,
            "expected PARTITION",
        ),
        (
            "ALTER TABLE ns.t WRITE ORDERED BY id DISTRIBUTED BY PARTITION DISTRIBUTED BY PARTITION",
            ErrorKind::InvalidArgument,
            "DISTRIBUTED BY is given twice",
        ),
        (
            "ALTER TABLE ns.t WRITE ORDERED BY id UNORDERED",
            ErrorKind::InvalidArgument,
            "expected ','",
        ),
        (
            "ALTER TABLE ns.t WRITE",
            ErrorKind::InvalidArgument,
            "DISTRIBUTED BY PARTITION",
        ),
    ];
    for (sql, kind, needle) in cases {
        fails(&ctx, sql, kind, needle).await;
        fails(&ctx, sql, kind, "ALTER TABLE cat.ns.t").await;
    }
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
    fails(
        &ctx,
        "ALTER TABLE ns.nope ADD COLUMN n INT",
        ErrorKind::NotFound,
        "ALTER TABLE cat.ns.nope ADD COLUMN",
    )
    .await;
    fails(
        &ctx,
        "CALL system.rollback_to_snapshot('ns.nope', 1)",
        ErrorKind::NotFound,
        "ns.nope",
    )
    .await;
    // dropping NOT NULL is allowed; the date promotion needs v3
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN id DROP NOT NULL").await;
    assert_eq!(
        columns(&metadata(&catalog, "ns.t").await)[0],
        "1:id:int".to_string()
    );
    fails(
        &ctx,
        "ALTER TABLE ns.t ALTER COLUMN d TYPE TIMESTAMP",
        ErrorKind::InvalidArgument,
        "from date to timestamp: not a valid type promotion",
    )
    .await;
}

#[tokio::test]
async fn schema_change_retries_on_a_concurrent_commit() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT) TBLPROPERTIES ('commit.retry.min-wait-ms'='1')",
    )
    .await;
    let base = catalog.load_table(&ident("ns.t")).await.unwrap();
    // another writer's schema and property changes land after our load
    ok(&ctx, "ALTER TABLE ns.t ADD COLUMN other VARCHAR").await;
    ok(&ctx, "ALTER TABLE ns.t SET TBLPROPERTIES ('k'='theirs')").await;
    let ours = UpdateSchema::new().add_column(
        &[],
        "mine",
        crate::spec::Type::Primitive(crate::spec::PrimitiveType::Long),
        None,
        None,
    );
    let committed = Transaction::new(Arc::clone(&catalog), ident("ns.t"), base.clone())
        .add_action(ours)
        .add_action(UpdateProperties::new().set("k2", "ours").unwrap())
        .commit()
        .await
        .unwrap();
    let m = committed.metadata();
    // re-applied on the new schema: both columns, ids never reused
    assert_eq!(columns(m), ["1:id:int", "2:other:string", "3:mine:long"]);
    assert_eq!(m.last_column_id, 3);
    assert_eq!(m.current_schema_id, 2);
    assert_eq!(property(m, "k"), Some("theirs"));
    assert_eq!(property(m, "k2"), Some("ours"));
    assert_eq!(
        ok(&ctx, "SELECT * FROM ns.t").await,
        Vec::<Vec<String>>::new()
    );
    // a change that no longer applies after the concurrent commit fails, committing nothing
    let base = catalog.load_table(&ident("ns.t")).await.unwrap();
    ok(&ctx, "ALTER TABLE ns.t RENAME COLUMN other TO renamed").await;
    let before = metadata_location(&catalog, "ns.t").await;
    let err = Transaction::new(Arc::clone(&catalog), ident("ns.t"), base)
        .add_action(UpdateSchema::new().delete_column(&["other".to_string()]))
        .commit()
        .await
        .unwrap_err();
    // the name the change was planned with no longer means its field (transaction's
    // pinned names): a lost race
    assert_eq!(err.kind(), ErrorKind::ValidationFailed, "{err}");
    assert!(
        err.to_string()
            .contains("column 'other' was changed by a concurrent commit"),
        "{err}"
    );
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
}

/// The table's refs as `name:type:snapshot`, sorted.
fn refs(m: &TableMetadata) -> Vec<String> {
    let mut out: Vec<String> = m
        .refs
        .iter()
        .map(|(n, r)| format!("{n}:{}:{}", r.ref_type, r.snapshot_id))
        .collect();
    out.sort();
    out
}

/// `CREATE BRANCH` of a table without snapshots points the branch at a new empty
/// snapshot, as Java's `ManageSnapshots.createBranch` and Spark do (it was refused; a
/// tester's); a tag there is still refused, as in Spark. Writes to the branch then
/// descend from it, and main stays without a snapshot.
#[tokio::test]
async fn a_branch_of_a_table_without_snapshots_starts_empty() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.e (a INT)").await;
    ok(
        &ctx,
        "ALTER TABLE ns.e CREATE BRANCH b WITH SNAPSHOT RETENTION 2 SNAPSHOTS",
    )
    .await;
    let m = metadata(&catalog, "ns.e").await;
    assert_eq!(m.current_snapshot_id, None);
    assert_eq!(m.snapshots.len(), 1);
    let empty = &m.snapshots[0];
    assert_eq!(empty.parent_snapshot_id, None);
    assert_eq!(
        empty.summary.get("operation").map(String::as_str),
        Some("append")
    );
    let b = m.refs.get("b").expect("branch b");
    assert_eq!(
        (b.snapshot_id, b.ref_type.as_str(), b.min_snapshots_to_keep),
        (empty.snapshot_id, "branch", Some(2))
    );
    assert_eq!(
        ok(&ctx, "SELECT count(*) FROM ns.\"e@b\"").await,
        [["0".to_string()]]
    );
    ok(&ctx, "INSERT INTO ns.\"e@b\" VALUES (1)").await;
    let m = metadata(&catalog, "ns.e").await;
    assert_eq!(m.current_snapshot_id, None);
    let head = m.refs.get("b").expect("branch b").snapshot_id;
    let head = m.snapshot_by_id(head).expect("head");
    assert_eq!(head.parent_snapshot_id, Some(empty.snapshot_id));
    // IF NOT EXISTS of the branch now there: nothing; a second branch: at no snapshot
    // still, so empty too
    ok(&ctx, "ALTER TABLE ns.e CREATE BRANCH IF NOT EXISTS b").await;
    assert_eq!(metadata(&catalog, "ns.e").await.snapshots.len(), 2);
    fails(
        &ctx,
        "ALTER TABLE ns.e CREATE TAG t",
        ErrorKind::InvalidArgument,
        "cannot create tag 't': the table has no current snapshot",
    )
    .await;
}

#[tokio::test]
async fn tags_and_branches() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id BIGINT)").await;
    fails(
        &ctx,
        "ALTER TABLE ns.t CREATE TAG v0",
        ErrorKind::InvalidArgument,
        "cannot create tag 'v0': the table has no current snapshot",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    let s1 = metadata(&catalog, "ns.t")
        .await
        .current_snapshot_id
        .unwrap();
    ok(&ctx, "INSERT INTO ns.t VALUES (2)").await;
    let s2 = metadata(&catalog, "ns.t")
        .await
        .current_snapshot_id
        .unwrap();

    ok(
        &ctx,
        &format!("ALTER TABLE ns.t CREATE TAG v1 AS OF VERSION {s1} RETAIN 7 DAYS"),
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.t CREATE BRANCH dev WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 HOURS",
    )
    .await;
    let before = metadata_location(&catalog, "ns.t").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE TAG IF NOT EXISTS v1").await;
    // nothing changed: no commit, no new metadata file
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(
        refs(&m),
        [
            format!("dev:branch:{s2}"),
            format!("main:branch:{s2}"),
            format!("v1:tag:{s1}")
        ]
    );
    assert_eq!(m.refs["v1"].max_ref_age_ms, Some(7 * 86_400_000));
    assert_eq!(m.refs["dev"].min_snapshots_to_keep, Some(3));
    assert_eq!(m.refs["dev"].max_snapshot_age_ms, Some(2 * 3_600_000));
    // reads of the refs
    assert_eq!(ok(&ctx, "SELECT id FROM ns.\"t@v1\"").await, [["1"]]);
    assert_eq!(
        ok(&ctx, "SELECT name, type FROM ns.\"t$refs\" ORDER BY name").await,
        [["dev", "BRANCH"], ["main", "BRANCH"], ["v1", "TAG"]]
    );

    ok(&ctx, "ALTER TABLE ns.t CREATE OR REPLACE TAG v1").await;
    ok(
        &ctx,
        &format!("ALTER TABLE ns.t REPLACE BRANCH dev AS OF VERSION {s1}"),
    )
    .await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(
        refs(&m),
        [
            format!("dev:branch:{s1}"),
            format!("main:branch:{s2}"),
            format!("v1:tag:{s2}")
        ]
    );
    assert_eq!(
        ok(&ctx, "SELECT id FROM ns.\"t@v1\" ORDER BY id").await,
        [["1"], ["2"]]
    );
    // a replaced ref keeps the retention it had where none is given (Java's replaceTag /
    // replaceBranch); what is given replaces it
    assert_eq!(m.refs["v1"].max_ref_age_ms, Some(7 * 86_400_000));
    assert_eq!(m.refs["dev"].min_snapshots_to_keep, Some(3));
    assert_eq!(m.refs["dev"].max_snapshot_age_ms, Some(2 * 3_600_000));
    ok(
        &ctx,
        &format!("ALTER TABLE ns.t REPLACE TAG v1 AS OF VERSION {s1} RETAIN 1 DAYS"),
    )
    .await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.refs["v1"].snapshot_id, s1);
    assert_eq!(m.refs["v1"].max_ref_age_ms, Some(86_400_000));

    let before = metadata_location(&catalog, "ns.t").await;
    let cases = [
        (
            "ALTER TABLE ns.t CREATE TAG v1",
            ErrorKind::AlreadyExists,
            "tag 'v1' already exists",
        ),
        (
            "ALTER TABLE ns.t CREATE BRANCH v1",
            ErrorKind::AlreadyExists,
            "tag 'v1' already exists",
        ),
        (
            "ALTER TABLE ns.t CREATE OR REPLACE BRANCH v1",
            ErrorKind::InvalidArgument,
            "'v1' is a tag, not a branch",
        ),
        (
            "ALTER TABLE ns.t CREATE TAG x AS OF VERSION 42",
            ErrorKind::NotFound,
            "snapshot 42 does not exist",
        ),
        (
            "ALTER TABLE ns.t CREATE TAG main",
            ErrorKind::InvalidArgument,
            "'main' is the table's main branch",
        ),
        (
            "ALTER TABLE ns.t CREATE TAG x RETAIN 0 DAYS",
            ErrorKind::InvalidArgument,
            "max-ref-age-ms must be greater than 0",
        ),
        (
            "ALTER TABLE ns.t CREATE BRANCH x WITH SNAPSHOT RETENTION -1 SNAPSHOTS",
            ErrorKind::InvalidArgument,
            "min-snapshots-to-keep must be greater than 0",
        ),
        (
            "ALTER TABLE ns.t CREATE TAG x RETAIN 2 WEEKS",
            ErrorKind::InvalidArgument,
            "expected DAYS, HOURS or MINUTES",
        ),
        (
            "ALTER TABLE ns.t DROP BRANCH main",
            ErrorKind::InvalidArgument,
            "cannot remove the 'main' branch",
        ),
        (
            "ALTER TABLE ns.t DROP TAG dev",
            ErrorKind::InvalidArgument,
            "'dev' is a branch, not a tag",
        ),
        (
            "ALTER TABLE ns.t DROP TAG nope",
            ErrorKind::NotFound,
            "tag 'nope' does not exist",
        ),
        // REPLACE (without CREATE OR) wants the ref, and says REPLACE
        (
            "ALTER TABLE ns.t REPLACE TAG nope",
            ErrorKind::NotFound,
            "ALTER TABLE cat.ns.t REPLACE TAG: tag 'nope' does not exist (CREATE OR REPLACE \
             TAG creates it)",
        ),
        (
            "ALTER TABLE ns.t REPLACE BRANCH nope",
            ErrorKind::NotFound,
            "REPLACE BRANCH: branch 'nope' does not exist",
        ),
        (
            "ALTER TABLE ns.t REPLACE TAG v1 AS OF VERSION 999",
            ErrorKind::NotFound,
            "ALTER TABLE cat.ns.t REPLACE TAG: snapshot 999 does not exist",
        ),
        (
            "ALTER TABLE ns.t REPLACE TAG IF NOT EXISTS v1",
            ErrorKind::InvalidArgument,
            "REPLACE TAG: REPLACE and IF NOT EXISTS cannot be used together",
        ),
    ];
    for (sql, kind, needle) in cases {
        fails(&ctx, sql, kind, needle).await;
        fails(&ctx, sql, kind, "ALTER TABLE cat.ns.t").await;
    }
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);

    ok(&ctx, "ALTER TABLE ns.t DROP TAG v1").await;
    ok(&ctx, "ALTER TABLE ns.t DROP BRANCH IF EXISTS dev").await;
    ok(&ctx, "ALTER TABLE ns.t DROP TAG IF EXISTS v1").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(refs(&m), [format!("main:branch:{s2}")]);
    assert_eq!(m.current_snapshot_id, Some(s2));
}

#[tokio::test]
async fn snapshot_procedures() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id BIGINT)").await;
    let mut ids = vec![];
    for i in 1..=3 {
        ok(&ctx, &format!("INSERT INTO ns.t VALUES ({i})")).await;
        ids.push(
            metadata(&catalog, "ns.t")
                .await
                .current_snapshot_id
                .unwrap(),
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let (s1, s2, s3) = (ids[0], ids[1], ids[2]);
    let header = ["previous_snapshot_id", "current_snapshot_id"];
    let df = super::execute(
        &ctx,
        &format!("CALL cat.system.rollback_to_snapshot('ns.t', {s2})"),
    )
    .await
    .unwrap();
    let names: Vec<String> = df
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, header);
    assert_eq!(df.collect().await.unwrap()[0].num_rows(), 1);
    assert_eq!(
        metadata(&catalog, "ns.t").await.current_snapshot_id,
        Some(s2)
    );
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns.t").await, [["2"]]);

    // ancestors_of: the current snapshot's line, newest first, or a given snapshot's
    let m = metadata(&catalog, "ns.t").await;
    let row = |id: i64| {
        let ms = m.snapshot_by_id(id).map(|s| s.timestamp_ms).unwrap();
        vec![id.to_string(), ms.to_string()]
    };
    let line = |ids: &[i64]| ids.iter().map(|i| i.to_string()).collect::<Vec<_>>();
    let rows = ok(&ctx, "CALL system.ancestors_of('ns.t')").await;
    assert_eq!(rows, [row(s2), row(s1)]);
    let rows = ok(
        &ctx,
        &format!("CALL cat.system.ancestors_of(snapshot_id => {s3}, table => 'ns.t')"),
    )
    .await;
    let firsts: Vec<String> = rows.iter().map(|r| r[0].clone()).collect();
    assert_eq!(firsts, line(&[s3, s2, s1]));
    fails(
        &ctx,
        "CALL system.ancestors_of('ns.t', 42)",
        ErrorKind::NotFound,
        "snapshot 42 does not exist",
    )
    .await;

    // s3 is no longer an ancestor: rollback refuses it, set_current_snapshot takes it
    let before = metadata_location(&catalog, "ns.t").await;
    fails(
        &ctx,
        &format!("CALL system.rollback_to_snapshot(table => 'ns.t', snapshot_id => {s3})"),
        ErrorKind::InvalidArgument,
        &format!("cannot roll back to snapshot {s3}: it is not an ancestor"),
    )
    .await;
    fails(
        &ctx,
        "CALL system.rollback_to_snapshot('ns.t', 42)",
        ErrorKind::NotFound,
        "snapshot 42 does not exist",
    )
    .await;
    fails(
        &ctx,
        "CALL system.set_current_snapshot('ns.nope', 42)",
        ErrorKind::NotFound,
        "nope",
    )
    .await;
    fails(
        &ctx,
        "CALL system.rollback_to_snapshot('ns.t', snapshot => 1)",
        ErrorKind::InvalidArgument,
        "unknown argument 'snapshot'",
    )
    .await;
    fails(
        &ctx,
        "CALL system.expire_everything('ns.t')",
        ErrorKind::Unsupported,
        "unknown procedure",
    )
    .await;
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
    assert_eq!(
        ok(
            &ctx,
            &format!("CALL system.set_current_snapshot(snapshot_id => {s3}, table => 'ns.t')")
        )
        .await,
        [[s2.to_string(), s3.to_string()]]
    );
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns.t").await, [["3"]]);
    // a one-part name is in the session's default schema (`public` here: not Iceberg)
    fails(
        &ctx,
        "CALL system.rollback_to_snapshot('t', 1)",
        ErrorKind::NotFound,
        "'t' is not a table of Iceberg catalog 'cat'",
    )
    .await;

    // rollback_to_timestamp: the latest ancestor older than the time
    let m = metadata(&catalog, "ns.t").await;
    let t2 = m.snapshot_by_id(s2).unwrap().timestamp_ms;
    let at = chrono::DateTime::from_timestamp_millis(t2 + 1)
        .unwrap()
        .format("%Y-%m-%d %H:%M:%S%.3f")
        .to_string();
    assert_eq!(
        ok(
            &ctx,
            &format!("CALL cat.system.rollback_to_timestamp('ns.t', TIMESTAMP '{at}')")
        )
        .await,
        [[s3.to_string(), s2.to_string()]]
    );
    assert_eq!(
        ok(&ctx, "SELECT id FROM ns.t ORDER BY id").await,
        [["1"], ["2"]]
    );
    fails(
        &ctx,
        &format!(
            // a number is seconds since the epoch (Spark's BIGINT to TIMESTAMP)
            "CALL system.rollback_to_timestamp('ns.t', {})",
            m.snapshot_by_id(s1).unwrap().timestamp_ms / 1000
        ),
        ErrorKind::NotFound,
        "no ancestor of the current snapshot is older than",
    )
    .await;
    // set_current_snapshot by ref
    ok(
        &ctx,
        &format!("ALTER TABLE ns.t CREATE TAG last AS OF VERSION {s3}"),
    )
    .await;
    assert_eq!(
        ok(
            &ctx,
            "CALL system.set_current_snapshot(table => 'ns.t', ref => 'last')"
        )
        .await,
        [[s2.to_string(), s3.to_string()]]
    );
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.current_snapshot_id, Some(s3));
    let log: Vec<i64> = m.snapshot_log.iter().map(|e| e.snapshot_id).collect();
    assert_eq!(log, [s1, s2, s3, s2, s3, s2, s3]);
}

#[tokio::test]
async fn v3_date_promotion_reads_old_files() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, d DATE) PARTITIONED BY (month(d))",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.t VALUES (1, DATE '2026-01-05'), (2, DATE '2026-03-01')",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.t VALUES (3, DATE '2025-01-05')").await;
    ok(
        &ctx,
        "CREATE TABLE ns.b (id INT, d DATE) PARTITIONED BY (bucket(4, d))",
    )
    .await;
    for t in ["t", "b"] {
        ok(
            &ctx,
            &format!("ALTER TABLE ns.{t} SET TBLPROPERTIES ('format-version'='3')"),
        )
        .await;
    }
    // a bucket of a date hashes the day number, of a timestamp the microseconds
    fails(
        &ctx,
        "ALTER TABLE ns.b ALTER COLUMN d TYPE TIMESTAMP",
        ErrorKind::InvalidArgument,
        "cannot change column 'd': from date to timestamp: partition field 'd_bucket' \
         (bucket[4]) would change its values",
    )
    .await;
    fails(
        &ctx,
        "ALTER TABLE ns.t ALTER COLUMN d TYPE TIMESTAMPTZ",
        ErrorKind::InvalidArgument,
        "from date to timestamptz: not a valid type promotion",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t ALTER COLUMN d TYPE TIMESTAMP").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(columns(&m), ["1:id:int", "2:d:timestamp"]);
    // old date files read as midnight timestamps; partition and metrics pruning agree
    let queries = [
        (
            "SELECT id, d FROM ns.t ORDER BY id",
            vec![
                vec!["1", "2026-01-05T00:00:00"],
                vec!["2", "2026-03-01T00:00:00"],
                vec!["3", "2025-01-05T00:00:00"],
            ],
        ),
        (
            "SELECT id FROM ns.t WHERE d > TIMESTAMP '2026-02-01 00:00:00'",
            vec![vec!["2"]],
        ),
        (
            "SELECT id FROM ns.t WHERE d = TIMESTAMP '2026-01-05 00:00:00'",
            vec![vec!["1"]],
        ),
        (
            "SELECT id FROM ns.t WHERE d < TIMESTAMP '2026-01-01 00:00:00'",
            vec![vec!["3"]],
        ),
    ];
    for (sql, expected) in queries {
        assert_eq!(ok(&ctx, sql).await, expected, "{sql}");
    }
}

/// Only the current spec's sources are kept from being dropped (as Iceberg Java): a
/// column that only an older spec partitions by can go, and files of that spec still read.
#[tokio::test]
async fn dropping_an_old_specs_source_keeps_reads() {
    use crate::spec::{PartitionField, PartitionSpec, TableCommit, TableUpdate, Transform};
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, a VARCHAR, b INT) PARTITIONED BY (a)",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1, 'x', 10), (2, 'y', 20)").await;
    let spec = PartitionSpec {
        spec_id: 1,
        fields: vec![PartitionField {
            source_id: 3,
            field_id: Some(1001),
            name: "b_bucket".into(),
            transform: Transform::Bucket(4),
        }],
    };
    catalog
        .commit_table(
            &ident("ns.t"),
            &TableCommit {
                requirements: vec![],
                updates: vec![
                    TableUpdate::AddSpec { spec },
                    TableUpdate::SetDefaultSpec { spec_id: -1 },
                ],
            },
        )
        .await
        .unwrap();
    ok(&ctx, "INSERT INTO ns.t VALUES (3, 'z', 30)").await;
    fails(
        &ctx,
        "ALTER TABLE ns.t DROP COLUMN b",
        ErrorKind::InvalidArgument,
        "the current partition spec uses it (partition field 'b_bucket', bucket[4])",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t DROP COLUMN a").await;
    assert_eq!(
        ok(&ctx, "SELECT * FROM ns.t ORDER BY id").await,
        [["1", "10"], ["2", "20"], ["3", "30"]]
    );
    assert_eq!(ok(&ctx, "SELECT b FROM ns.t WHERE id = 1").await, [["10"]]);
}

#[tokio::test]
async fn rollback_retries_on_a_concurrent_append() {
    use crate::transaction::ManageSnapshots;
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id BIGINT) TBLPROPERTIES ('commit.retry.min-wait-ms'='1')",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    let s1 = metadata(&catalog, "ns.t")
        .await
        .current_snapshot_id
        .unwrap();
    ok(&ctx, "INSERT INTO ns.t VALUES (2)").await;
    let base = catalog.load_table(&ident("ns.t")).await.unwrap();
    // an append lands after the load: main moved, the rollback's requirement fails once
    ok(&ctx, "INSERT INTO ns.t VALUES (3)").await;
    let committed = Transaction::new(Arc::clone(&catalog), ident("ns.t"), base.clone())
        .add_action(ManageSnapshots::new().rollback_to(s1))
        .commit()
        .await
        .unwrap();
    assert_eq!(committed.metadata().current_snapshot_id, Some(s1));
    assert_eq!(ok(&ctx, "SELECT id FROM ns.t").await, [["1"]]);
    // a tag created from a stale base still lands, at the snapshot it names
    ok(&ctx, "INSERT INTO ns.t VALUES (4)").await;
    let committed = Transaction::new(Arc::clone(&catalog), ident("ns.t"), base)
        .add_action(ManageSnapshots::new().create_tag(
            "first",
            Some(s1),
            Default::default(),
            crate::transaction::RefExists::Fail,
        ))
        .commit()
        .await
        .unwrap();
    assert_eq!(committed.metadata().refs["first"].snapshot_id, s1);
    assert_eq!(
        committed.metadata().ref_snapshot_id("main"),
        metadata(&catalog, "ns.t").await.current_snapshot_id
    );
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns.t").await, [["2"]]);
}

#[tokio::test]
async fn fast_forward_procedure() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id BIGINT)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    let s1 = metadata(&catalog, "ns.t")
        .await
        .current_snapshot_id
        .unwrap();
    ok(&ctx, "ALTER TABLE ns.t CREATE BRANCH old RETAIN 2 DAYS").await;
    ok(&ctx, "ALTER TABLE ns.t CREATE TAG v0").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (2)").await;
    let s2 = metadata(&catalog, "ns.t")
        .await
        .current_snapshot_id
        .unwrap();

    let df = super::execute(&ctx, "CALL system.fast_forward('ns.t', 'old', 'main')")
        .await
        .unwrap();
    let names: Vec<String> = df
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["branch_updated", "previous_ref", "updated_ref"]);
    let rows = super::tests::run(&ctx, "CALL system.fast_forward('ns.t', 'old', 'main')")
        .await
        .unwrap();
    // the first call moved it; the second finds nothing to do
    assert_eq!(rows, [["old".to_string(), s2.to_string(), s2.to_string()]]);
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.refs["old"].snapshot_id, s2);
    assert_eq!(m.refs["old"].max_ref_age_ms, Some(2 * 86_400_000));

    // main, rolled back, moves forward to the branch; a missing branch is created
    ok(
        &ctx,
        &format!("CALL system.rollback_to_snapshot('ns.t', {s1})"),
    )
    .await;
    assert_eq!(
        ok(
            &ctx,
            "CALL system.fast_forward(table => 'ns.t', branch => 'main', to => 'old')"
        )
        .await,
        [["main".to_string(), s1.to_string(), s2.to_string()]]
    );
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns.t").await, [["2"]]);
    assert_eq!(
        ok(&ctx, "CALL system.fast_forward('ns.t', 'fresh', 'v0')").await,
        [["fresh".to_string(), String::new(), s1.to_string()]]
    );

    let before = metadata_location(&catalog, "ns.t").await;
    fails(
        &ctx,
        "CALL system.fast_forward('ns.t', 'main', 'v0')",
        ErrorKind::InvalidArgument,
        &format!(
            "cannot fast-forward 'main' to 'v0': its snapshot {s2} is not an ancestor of {s1}"
        ),
    )
    .await;
    fails(
        &ctx,
        "CALL system.fast_forward('ns.t', 'v0', 'main')",
        ErrorKind::InvalidArgument,
        "'v0' is a tag, not a branch",
    )
    .await;
    fails(
        &ctx,
        "CALL system.fast_forward('ns.t', 'main', 'nope')",
        ErrorKind::NotFound,
        "branch or tag 'nope' does not exist",
    )
    .await;
    fails(
        &ctx,
        "CALL system.fast_forward('ns.t', 'main')",
        ErrorKind::InvalidArgument,
        "the 'branch' and 'to' arguments",
    )
    .await;
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
}

#[tokio::test]
async fn identifier_fields() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id BIGINT NOT NULL, k INT NOT NULL, s VARCHAR, f DOUBLE NOT NULL, \
         st STRUCT<a INT>)",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t SET IDENTIFIER FIELDS id, k").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.current_schema().identifier_field_ids, [1, 2]);
    assert_eq!(m.current_schema_id, 1);

    let before = metadata_location(&catalog, "ns.t").await;
    let cases = [
        (
            "ALTER TABLE ns.t DROP COLUMN id",
            "cannot drop column 'id': field 1 is an identifier field",
        ),
        (
            "ALTER TABLE ns.t ALTER COLUMN k DROP NOT NULL",
            "cannot make column 'k' optional: it is an identifier field",
        ),
        (
            "ALTER TABLE ns.t SET IDENTIFIER FIELDS s",
            "column 's' cannot be an identifier field: it is optional",
        ),
        (
            "ALTER TABLE ns.t SET IDENTIFIER FIELDS f",
            "column 'f' cannot be an identifier field: float and double fields are not allowed",
        ),
        (
            "ALTER TABLE ns.t SET IDENTIFIER FIELDS st.a",
            "column 'st.a' cannot be an identifier field: struct 'st' is optional",
        ),
        (
            "ALTER TABLE ns.t DROP IDENTIFIER FIELDS s",
            "column 's' is not an identifier field",
        ),
    ];
    for (sql, needle) in cases {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
        fails(
            &ctx,
            sql,
            ErrorKind::InvalidArgument,
            "ALTER TABLE cat.ns.t",
        )
        .await;
    }
    fails(
        &ctx,
        "ALTER TABLE ns.t SET IDENTIFIER FIELDS nope",
        ErrorKind::NotFound,
        "column 'nope' does not exist",
    )
    .await;
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);

    ok(&ctx, "ALTER TABLE ns.t DROP IDENTIFIER FIELDS id").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.current_schema().identifier_field_ids, [2]);
    ok(&ctx, "ALTER TABLE ns.t DROP COLUMN id").await;
    assert_eq!(
        columns(&metadata(&catalog, "ns.t").await),
        [
            "2:k:int:required",
            "3:s:string",
            "4:f:double:required",
            "5:st:struct<a: int>"
        ]
    );
}

/// A v2 table upgraded by `SET TBLPROPERTIES` takes v3 writes: row ids start at the
/// upgrade (`next-row-id` 0), the rows written before keep reading and get ids in the
/// first v3 commit.
#[tokio::test]
async fn upgraded_v3_table_takes_writes() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id BIGINT)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1), (2)").await;
    ok(
        &ctx,
        "ALTER TABLE ns.t SET TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    assert_eq!(metadata(&catalog, "ns.t").await.next_row_id, Some(0));
    assert_eq!(ok(&ctx, "INSERT INTO ns.t VALUES (3)").await, [["1"]]);
    assert_eq!(
        ok(&ctx, "SELECT id FROM ns.t ORDER BY id").await,
        [["1"], ["2"], ["3"]]
    );
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(m.format_version, FormatVersion::V3);
    // the first v3 snapshot assigns ids to the rows from before the upgrade too (spec:
    // "Row Lineage for Upgraded Tables"): the new manifest first, then the old one
    assert_eq!(m.next_row_id, Some(3));
    let last = m.current_snapshot().unwrap();
    assert_eq!((last.first_row_id, last.added_rows), (Some(0), Some(3)));
    assert_eq!(
        ok(&ctx, "SELECT id, _row_id FROM ns.t ORDER BY id").await,
        [["1", "1"], ["2", "2"], ["3", "0"]]
    );
}

/// `(field id, name, transform)` of the default partition spec.
fn spec_fields(m: &TableMetadata) -> Vec<(i32, String, String)> {
    m.default_partition_spec()
        .expect("default spec")
        .fields
        .iter()
        .map(|f| {
            (
                f.field_id.unwrap_or(-1),
                f.name.clone(),
                f.transform.to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn partition_evolution_then_writes_and_row_changes() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.p (id BIGINT, s VARCHAR, ts TIMESTAMP) PARTITIONED BY (days(ts))",
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.p VALUES (1, 'a', TIMESTAMP '2026-01-01 10:00:00'), \
         (2, 'b', TIMESTAMP '2026-01-02 10:00:00')",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.p ADD PARTITION FIELD bucket(4, id)").await;
    let m = metadata(&catalog, "ns.p").await;
    assert_eq!((m.default_spec_id, m.last_partition_id), (1, 1001));
    assert_eq!(
        spec_fields(&m),
        [
            (1000, "ts_day".into(), "day".into()),
            (1001, "id_bucket_4".into(), "bucket[4]".into())
        ]
    );
    ok(
        &ctx,
        "INSERT INTO ns.p VALUES (3, 'c', TIMESTAMP '2026-02-03 10:00:00'), \
         (4, 'd', TIMESTAMP '2026-02-03 11:00:00')",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.p REPLACE PARTITION FIELD ts_day WITH months(ts) AS mon",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.p DROP PARTITION FIELD bucket(4, id)").await;
    let m = metadata(&catalog, "ns.p").await;
    assert_eq!((m.default_spec_id, m.last_partition_id), (3, 1002));
    assert_eq!(spec_fields(&m), [(1002, "mon".into(), "month".into())]);
    ok(
        &ctx,
        "INSERT INTO ns.p VALUES (5, 'e', TIMESTAMP '2026-03-04 10:00:00')",
    )
    .await;
    // each file under the spec it was written with, partition values by its transforms
    assert_eq!(
        ok(
            &ctx,
            "SELECT spec_id, count(*), sum(record_count) FROM ns.\"p$files\" \
             GROUP BY spec_id ORDER BY spec_id"
        )
        .await,
        [["0", "2", "2"], ["1", "2", "2"], ["3", "1", "1"]]
    );
    // the unified partition struct: a field each spec does not have is null
    assert_eq!(
        ok(
            &ctx,
            "SELECT spec_id, get_field(partition, 'ts_day'), get_field(partition, 'id_bucket_4'), \
             get_field(partition, 'mon'), record_count FROM ns.\"p$partitions\" \
             ORDER BY spec_id, 2, 3"
        )
        .await,
        [
            ["0", "2026-01-01", "", "", "1"],
            ["0", "2026-01-02", "", "", "1"],
            ["1", "2026-02-03", "2", "", "1"],
            ["1", "2026-02-03", "3", "", "1"],
            ["3", "", "", "674", "1"],
        ]
    );
    assert_eq!(
        ok(
            &ctx,
            "SELECT get_field(partition, 'mon'), get_field(partition, 'ts_day') \
             FROM ns.\"p$partitions\" WHERE spec_id = 3"
        )
        .await,
        [["674", ""]],
        "2026-03 is month 674"
    );
    // a filter on the evolved columns reads every spec's files right
    assert_eq!(
        ok(
            &ctx,
            "SELECT id FROM ns.p WHERE ts >= TIMESTAMP '2026-01-02 00:00:00' ORDER BY id"
        )
        .await,
        [["2"], ["3"], ["4"], ["5"]]
    );
    // the current spec's source cannot be dropped
    fails(
        &ctx,
        "ALTER TABLE ns.p DROP COLUMN ts",
        ErrorKind::InvalidArgument,
        "the current partition spec uses it (partition field 'mon', month)",
    )
    .await;
    // DELETE and UPDATE over files of three specs; rewritten rows go to the default spec
    ok(&ctx, "DELETE FROM ns.p WHERE id IN (1, 3)").await;
    ok(&ctx, "UPDATE ns.p SET s = 'u' WHERE id IN (2, 4)").await;
    assert_eq!(
        ok(&ctx, "SELECT id, s FROM ns.p ORDER BY id").await,
        [["2", "u"], ["4", "u"], ["5", "e"]]
    );
    assert_eq!(
        ok(
            &ctx,
            "SELECT DISTINCT spec_id FROM ns.\"p$files\" WHERE readable_metrics.s.lower_bound = 'u'"
        )
        .await,
        [["3"]]
    );
    // back to an earlier spec: its id is reused, no new spec
    ok(&ctx, "ALTER TABLE ns.p DROP PARTITION FIELD mon").await;
    ok(&ctx, "ALTER TABLE ns.p ADD PARTITION FIELD days(ts)").await;
    let m = metadata(&catalog, "ns.p").await;
    assert_eq!(m.partition_specs.len(), 5);
    assert_eq!(spec_fields(&m), [(1000, "ts_day".into(), "day".into())]);
    assert_eq!(m.default_spec_id, 0);
}

#[tokio::test]
async fn write_ordered_by_sorts_each_file_and_records_the_order() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.o (id BIGINT, s VARCHAR)").await;
    ok(
        &ctx,
        "ALTER TABLE ns.o WRITE ORDERED BY s DESC NULLS FIRST, bucket(4, id), id",
    )
    .await;
    let m = metadata(&catalog, "ns.o").await;
    assert_eq!(m.default_sort_order_id, 1);
    let order = m
        .sort_orders
        .iter()
        .find(|o| o.order_id == 1)
        .expect("order 1");
    assert_eq!(
        order
            .fields
            .iter()
            .map(|f| format!(
                "{} {} {} {}",
                f.source_id, f.transform, f.direction, f.null_order
            ))
            .collect::<Vec<_>>(),
        [
            "2 identity desc nulls-first",
            "1 bucket[4] asc nulls-first",
            "1 identity asc nulls-first"
        ]
    );
    ok(
        &ctx,
        "INSERT INTO ns.o VALUES (1, 'a'), (2, 'c'), (3, NULL), (4, 'b'), (5, 'c'), (6, 'c')",
    )
    .await;
    assert_eq!(
        ok(&ctx, "SELECT DISTINCT sort_order_id FROM ns.\"o$files\"").await,
        [["1"]]
    );
    // one file holds every row (one input partition for VALUES): its order is the
    // table's: s descending with nulls first, then bucket(4, id), then id
    let read = ok(&ctx, "SELECT id FROM ns.o").await;
    let ids: Vec<&str> = read.iter().map(|r| r[0].as_str()).collect();
    let bucket = |id: i64| {
        crate::transform::apply(
            &crate::spec::Transform::Bucket(4),
            &crate::spec::Literal::Long(id),
        )
        .expect("bucket")
        .map(|v| format!("{v:?}"))
    };
    let mut expected: Vec<(Option<&str>, i64)> = vec![
        (Some("a"), 1),
        (Some("c"), 2),
        (None, 3),
        (Some("b"), 4),
        (Some("c"), 5),
        (Some("c"), 6),
    ];
    expected.sort_by(|a, b| {
        let s = match (a.0, b.0) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, _) => std::cmp::Ordering::Less,
            (_, None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => y.cmp(x),
        };
        s.then_with(|| bucket(a.1).cmp(&bucket(b.1)))
            .then(a.1.cmp(&b.1))
    });
    let expected: Vec<String> = expected.iter().map(|(_, id)| id.to_string()).collect();
    assert_eq!(ids, expected);
    // the same order (and distribution mode, range) again commits nothing; UNORDERED
    // goes back to order 0
    let before = metadata_location(&catalog, "ns.o").await;
    ok(
        &ctx,
        "ALTER TABLE ns.o WRITE ORDERED BY s DESC NULLS FIRST, bucket(4, id), id ASC",
    )
    .await;
    assert_eq!(metadata_location(&catalog, "ns.o").await, before);
    ok(&ctx, "ALTER TABLE ns.o WRITE UNORDERED").await;
    assert_eq!(metadata(&catalog, "ns.o").await.default_sort_order_id, 0);
    ok(&ctx, "INSERT INTO ns.o VALUES (7, 'z')").await;
    // the unsorted order, as Iceberg Java's writers record it
    assert_eq!(
        ok(
            &ctx,
            "SELECT count(*) FROM ns.\"o$files\" WHERE sort_order_id = 0"
        )
        .await,
        [["1"]]
    );
}

#[tokio::test]
async fn cherrypick_snapshot_applies_appends_onto_main() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.c (id BIGINT) PARTITIONED BY (bucket(2, id))",
    )
    .await;
    let current = |m: TableMetadata| m.current_snapshot_id.expect("snapshot");
    ok(&ctx, "INSERT INTO ns.c VALUES (1)").await;
    let a = current(metadata(&catalog, "ns.c").await);
    ok(&ctx, "INSERT INTO ns.c VALUES (2), (3)").await;
    let b = current(metadata(&catalog, "ns.c").await);
    ok(&ctx, "DELETE FROM ns.c WHERE id = 1").await;
    let d = current(metadata(&catalog, "ns.c").await);
    ok(
        &ctx,
        &format!("CALL system.rollback_to_snapshot('ns.c', {a})"),
    )
    .await;
    ok(&ctx, "INSERT INTO ns.c VALUES (4)").await;
    let c = current(metadata(&catalog, "ns.c").await);
    // b is no ancestor of c: its files are appended in a new snapshot
    let out = ok(
        &ctx,
        &format!("CALL system.cherrypick_snapshot('ns.c', {b})"),
    )
    .await;
    let m = metadata(&catalog, "ns.c").await;
    let new = m.current_snapshot().expect("snapshot");
    assert_eq!(out, [[b.to_string(), new.snapshot_id.to_string()]]);
    assert_eq!(new.parent_snapshot_id, Some(c));
    assert_eq!(
        new.summary.get("operation").map(String::as_str),
        Some("append")
    );
    assert_eq!(new.summary.get("source-snapshot-id"), Some(&b.to_string()));
    assert_eq!(
        new.summary.get("added-records").map(String::as_str),
        Some("2")
    );
    assert_eq!(
        ok(&ctx, "SELECT id FROM ns.c ORDER BY id").await,
        [["1"], ["2"], ["3"], ["4"]]
    );
    let before = metadata_location(&catalog, "ns.c").await;
    for (sql, kind, needle) in [
        (
            format!("CALL system.cherrypick_snapshot('ns.c', {b})"),
            ErrorKind::InvalidArgument,
            format!("cannot cherry-pick snapshot {b}: it was cherry-picked before"),
        ),
        (
            format!("CALL system.cherrypick_snapshot('ns.c', {a})"),
            ErrorKind::InvalidArgument,
            "it is already an ancestor of the current snapshot".to_string(),
        ),
        (
            format!("CALL system.cherrypick_snapshot('ns.c', {d})"),
            ErrorKind::ValidationFailed,
            format!("cannot cherry-pick snapshot {d}: it is a delete, planned on snapshot {b}"),
        ),
        (
            "CALL system.cherrypick_snapshot('ns.c', 42)".to_string(),
            ErrorKind::NotFound,
            "CALL cat.system.cherrypick_snapshot('ns.c'): snapshot 42 does not exist".to_string(),
        ),
    ] {
        fails(&ctx, &sql, kind, &needle).await;
    }
    assert_eq!(metadata_location(&catalog, "ns.c").await, before);
    // a snapshot whose parent is main's current one: main fast-forwards to it
    ok(&ctx, "INSERT INTO ns.c VALUES (5)").await;
    let e = current(metadata(&catalog, "ns.c").await);
    ok(
        &ctx,
        &format!(
            "CALL system.rollback_to_snapshot('ns.c', {})",
            new.snapshot_id
        ),
    )
    .await;
    let out = ok(
        &ctx,
        &format!("CALL system.cherrypick_snapshot(table => 'ns.c', snapshot_id => {e})"),
    )
    .await;
    assert_eq!(out, [[e.to_string(), e.to_string()]]);
    assert_eq!(current(metadata(&catalog, "ns.c").await), e);
}

#[tokio::test]
async fn inserts_into_a_branch_leave_main_alone() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.b (id BIGINT) PARTITIONED BY (bucket(2, id))",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.b VALUES (1)").await;
    let main = metadata(&catalog, "ns.b").await.current_snapshot_id;
    ok(
        &ctx,
        "ALTER TABLE ns.b CREATE BRANCH dev RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS",
    )
    .await;
    // Spark's form and the branch's table name
    assert_eq!(
        ok(&ctx, "INSERT INTO ns.b.branch_dev VALUES (2)").await,
        [["1"]]
    );
    assert_eq!(
        ok(&ctx, "INSERT INTO ns.\"b@dev\" VALUES (3), (4)").await,
        [["2"]]
    );
    let m = metadata(&catalog, "ns.b").await;
    assert_eq!(m.current_snapshot_id, main);
    let dev = &m.refs["dev"];
    let head = m.snapshot_by_id(dev.snapshot_id).expect("dev head");
    let parent = m
        .snapshot_by_id(head.parent_snapshot_id.expect("parent"))
        .expect("parent");
    assert_eq!(parent.parent_snapshot_id, main);
    // the branch keeps its retention
    assert_eq!(dev.max_ref_age_ms, Some(7 * 86_400_000));
    assert_eq!(dev.min_snapshots_to_keep, Some(2));
    assert_eq!(ok(&ctx, "SELECT id FROM ns.b").await, [["1"]]);
    assert_eq!(
        ok(&ctx, "SELECT id FROM ns.\"b@dev\" ORDER BY id").await,
        [["1"], ["2"], ["3"], ["4"]]
    );
    let before = metadata_location(&catalog, "ns.b").await;
    for (sql, kind, needle) in [
        // row-level changes and overwrites of a branch: tests/integration/dml_branches.rs
        (
            "INSERT INTO ns.b.branch_nope VALUES (9)",
            ErrorKind::NotFound,
            "nope",
        ),
    ] {
        fails(&ctx, sql, kind, needle).await;
    }
    assert_eq!(metadata_location(&catalog, "ns.b").await, before);
    // the branch's snapshots cherry-picked onto main, one by one: fast-forwards
    let second = parent.snapshot_id;
    ok(
        &ctx,
        &format!("CALL system.cherrypick_snapshot('ns.b', {second})"),
    )
    .await;
    ok(
        &ctx,
        &format!(
            "CALL system.cherrypick_snapshot('ns.b', {})",
            head.snapshot_id
        ),
    )
    .await;
    assert_eq!(
        metadata(&catalog, "ns.b").await.current_snapshot_id,
        Some(head.snapshot_id)
    );
    assert_eq!(
        ok(&ctx, "SELECT id FROM ns.b ORDER BY id").await,
        [["1"], ["2"], ["3"], ["4"]]
    );
}

/// `WRITE [DISTRIBUTED BY PARTITION] [LOCALLY] ORDERED BY …` / `UNORDERED` set the sort
/// order and `write.distribution-mode` in one commit, as Spark's
/// `SetWriteDistributionAndOrdering` does.
#[tokio::test]
async fn write_distribution_and_ordering_set_the_mode_and_the_order() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.d (id BIGINT, s VARCHAR) PARTITIONED BY (s) \
         TBLPROPERTIES ('format-version'='2')",
    )
    .await;
    let order = |m: &TableMetadata| -> Vec<String> {
        m.sort_orders
            .iter()
            .find(|o| o.order_id == m.default_sort_order_id)
            .expect("default order")
            .fields
            .iter()
            .map(|f| {
                format!(
                    "{} {} {} {}",
                    f.source_id, f.transform, f.direction, f.null_order
                )
            })
            .collect()
    };
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "WRITE ORDERED BY id DESC",
            "range",
            &["1 identity desc nulls-last"],
        ),
        (
            "WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY s, id NULLS LAST",
            "hash",
            &["2 identity asc nulls-first", "1 identity asc nulls-last"],
        ),
        ("WRITE DISTRIBUTED BY PARTITION", "hash", &[]),
        (
            "WRITE LOCALLY ORDERED BY bucket(4, id)",
            "none",
            &["1 bucket[4] asc nulls-first"],
        ),
        (
            "WRITE ORDERED BY id DISTRIBUTED BY PARTITION",
            "hash",
            &["1 identity asc nulls-first"],
        ),
        ("WRITE UNORDERED", "none", &[]),
    ];
    for (clause, mode, fields) in cases {
        let before = metadata(&catalog, "ns.d").await.snapshots.len();
        ok(&ctx, &format!("ALTER TABLE ns.d {clause}")).await;
        let m = metadata(&catalog, "ns.d").await;
        assert_eq!(
            property(&m, "write.distribution-mode"),
            Some(mode),
            "{clause}"
        );
        assert_eq!(order(&m), fields, "{clause}");
        assert_eq!(m.snapshots.len(), before, "{clause}: metadata only");
    }
    // the same clause again commits nothing
    let location = metadata_location(&catalog, "ns.d").await;
    ok(&ctx, "ALTER TABLE ns.d WRITE UNORDERED").await;
    assert_eq!(metadata_location(&catalog, "ns.d").await, location);
}

#[tokio::test]
async fn set_location_and_comment_on_table() {
    let (ctx, catalog, dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT) PARTITIONED BY (id)").await;
    ok(&ctx, "INSERT INTO ns.t VALUES (1)").await;
    let old = metadata(&catalog, "ns.t").await.location;
    let elsewhere = dir.path().join("elsewhere");
    ok(
        &ctx,
        &format!("ALTER TABLE ns.t SET LOCATION '{}/'", elsewhere.display()),
    )
    .await;
    let new = format!("file://{}", elsewhere.display());
    assert_eq!(metadata(&catalog, "ns.t").await.location, new);
    // the commit's metadata file and the files written later go there; the old file stays
    assert!(metadata_location(&catalog, "ns.t")
        .await
        .starts_with(&format!("{new}/metadata/")));
    ok(&ctx, "INSERT INTO ns.t VALUES (2)").await;
    let files = ok(&ctx, "SELECT id, _file FROM ns.t ORDER BY id").await;
    assert_eq!(files.len(), 2);
    assert!(
        files[0][1].starts_with(&format!("{old}/data/")),
        "{files:?}"
    );
    assert!(
        files[1][1].starts_with(&format!("{new}/data/")),
        "{files:?}"
    );
    // the same location again commits nothing
    let before = metadata_location(&catalog, "ns.t").await;
    ok(&ctx, &format!("ALTER TABLE ns.t SET LOCATION '{new}'")).await;
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
    fails(
        &ctx,
        "ALTER TABLE ns.t SET LOCATION ''",
        ErrorKind::InvalidArgument,
        "ALTER TABLE cat.ns.t SET LOCATION: a table location cannot be empty",
    )
    .await;

    ok(&ctx, "COMMENT ON TABLE ns.t IS 'the t'").await;
    assert_eq!(
        metadata(&catalog, "ns.t").await.properties.get("comment"),
        Some(&"the t".to_string())
    );
    ok(&ctx, "COMMENT ON TABLE ns.t IS NULL").await;
    assert_eq!(
        metadata(&catalog, "ns.t").await.properties.get("comment"),
        None
    );
    ok(&ctx, "COMMENT ON TABLE ns.t IS NULL").await;
    fails(
        &ctx,
        "COMMENT ON TABLE ns.t 'x'",
        ErrorKind::InvalidArgument,
        "COMMENT ON TABLE cat.ns.t: expected IS",
    )
    .await;
}

/// Trino's and PostgreSQL's `COMMENT ON COLUMN t.c IS …` sets and removes a column's
/// doc, as `ALTER COLUMN c COMMENT` does, in every string form; a name without a table or
/// a missing column is an error that changes nothing.
#[tokio::test]
async fn comment_on_column_sets_and_removes_the_doc() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT, \"a.b\" STRING)").await;
    let doc = |m: &TableMetadata, name: &str| {
        m.current_schema()
            .columns()
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.doc.clone())
    };
    ok(&ctx, "COMMENT ON COLUMN ns.t.id IS 'the id'").await;
    ok(&ctx, "COMMENT ON COLUMN ns.t.\"a.b\" IS $$dotted$$").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(doc(&m, "id").as_deref(), Some("the id"));
    assert_eq!(doc(&m, "a.b").as_deref(), Some("dotted"));
    ok(&ctx, "COMMENT ON COLUMN cat.ns.t.id IS NULL").await;
    let m = metadata(&catalog, "ns.t").await;
    assert_eq!(doc(&m, "id"), None);
    assert_eq!(doc(&m, "a.b").as_deref(), Some("dotted"));
    let before = metadata_location(&catalog, "ns.t").await;
    fails(
        &ctx,
        "COMMENT ON COLUMN ns.t.nope IS 'x'",
        ErrorKind::NotFound,
        "nope",
    )
    .await;
    fails(
        &ctx,
        "COMMENT ON COLUMN id IS 'x'",
        ErrorKind::InvalidArgument,
        "COMMENT ON COLUMN id: name the column with its table (t.column)",
    )
    .await;
    fails(
        &ctx,
        "COMMENT ON COLUMN ns.t.id 'x'",
        ErrorKind::InvalidArgument,
        "COMMENT ON COLUMN cat.ns.t.id: expected IS",
    )
    .await;
    assert_eq!(metadata_location(&catalog, "ns.t").await, before);
}

/// The error of an `ADD`/`DROP` clause icefloe does not run lists exactly the clauses of
/// that verb it runs (it listed `ADD TAG|BRANCH`, which it refuses), and Spark's Hive
/// `ADD|DROP PARTITION (…)` is named as such.
#[tokio::test]
async fn add_and_drop_errors_list_the_clauses_icefloe_runs() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.h (id INT NOT NULL)").await;
    let message = |sql: &'static str| {
        let ctx = ctx.clone();
        async move {
            match super::tests::run(&ctx, sql).await {
                Ok(_) => panic!("{sql}: succeeded"),
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Unsupported, "{sql}: {e}");
                    e.to_string()
                }
            }
        }
    };
    let add_tag = message("ALTER TABLE ns.h ADD TAG t1").await;
    assert!(
        add_tag.contains(
            "ALTER TABLE cat.ns.h ADD: expected COLUMN, found 'TAG' (icefloe runs ADD \
             COLUMN|COLUMNS and ADD PARTITION FIELD; a tag or branch is made with CREATE \
             TAG|BRANCH)"
        ),
        "{add_tag}"
    );
    assert!(!add_tag.contains("ADD TAG"), "{add_tag}");
    let drop_foo = message("ALTER TABLE ns.h DROP FOO").await;
    assert!(
        drop_foo.contains(
            "(icefloe runs DROP COLUMN|COLUMNS, DROP PARTITION FIELD, DROP IDENTIFIER FIELDS \
             and DROP TAG|BRANCH)"
        ),
        "{drop_foo}"
    );
    for verb in ["ADD", "DROP"] {
        let sql: &'static str = match verb {
            "ADD" => "ALTER TABLE ns.h ADD PARTITION (id = 1)",
            _ => "ALTER TABLE ns.h DROP PARTITION (id = 1)",
        };
        let hive = message(sql).await;
        assert!(
            hive.contains(&format!(
                "ALTER TABLE cat.ns.h {verb} PARTITION (…): Iceberg tables have no Hive \
                 partitions"
            )) && hive.contains(&format!("{verb} PARTITION FIELD")),
            "{hive}"
        );
    }
    let other = message("ALTER TABLE ns.h FROB").await;
    for clause in [
        "SET|DROP IDENTIFIER FIELDS",
        "ADD|DROP COLUMN|COLUMNS",
        "DISTRIBUTED BY PARTITION",
        "CREATE|REPLACE|DROP TAG|BRANCH",
    ] {
        assert!(other.contains(clause), "{other}");
    }
    // each clause the lists name runs
    ok(&ctx, "ALTER TABLE ns.h ADD COLUMNS (a INT)").await;
    ok(&ctx, "ALTER TABLE ns.h ADD PARTITION FIELD bucket(2, id)").await;
    ok(&ctx, "ALTER TABLE ns.h SET IDENTIFIER FIELDS id").await;
    ok(&ctx, "ALTER TABLE ns.h DROP IDENTIFIER FIELDS id").await;
    ok(&ctx, "ALTER TABLE ns.h DROP PARTITION FIELD id_bucket_2").await;
    ok(&ctx, "ALTER TABLE ns.h WRITE DISTRIBUTED BY PARTITION").await;
    ok(&ctx, "ALTER TABLE ns.h DROP COLUMNS (a)").await;
}
