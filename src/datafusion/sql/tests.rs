//! icefloe's DDL on a SQLite catalog in a temporary directory.

use std::sync::Arc;

use datafusion::catalog::{CatalogProvider, MemoryCatalogProvider, MemorySchemaProvider};
use datafusion::prelude::{SessionConfig, SessionContext};
use tempfile::TempDir;

use super::execute;
use crate::catalog::{Catalog, Namespace, SqlCatalog, TableIdent};
use crate::datafusion::IcebergCatalogProvider;
use crate::spec::{FormatVersion, PrimitiveType, Transform, Type};
use crate::ErrorKind;

/// A session whose default catalog `cat` is a new SQLite catalog (with the in-memory
/// schema `public` as the default schema, as the CLI sets it up).
pub(super) async fn session() -> (SessionContext, Arc<dyn Catalog>, TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let catalog: Arc<dyn Catalog> =
        Arc::new(SqlCatalog::open_or_create("cat", dir.path().join("cat.db")).expect("catalog"));
    let ctx = SessionContext::new_with_config(
        SessionConfig::new()
            .with_information_schema(true)
            .with_default_catalog_and_schema("cat", "public")
            .with_target_partitions(2),
    );
    let provider = IcebergCatalogProvider::try_new(Arc::clone(&catalog))
        .await
        .expect("provider");
    provider
        .register_schema("public", Arc::new(MemorySchemaProvider::new()))
        .expect("public");
    ctx.register_catalog("cat", Arc::new(provider));
    (ctx, catalog, dir)
}

pub(super) async fn run(ctx: &SessionContext, sql: &str) -> crate::Result<Vec<Vec<String>>> {
    let batches = execute(ctx, sql).await?.collect().await?;
    let mut rows = Vec::new();
    for b in &batches {
        for r in 0..b.num_rows() {
            rows.push(
                b.columns()
                    .iter()
                    .map(|c| {
                        datafusion::arrow::util::display::array_value_to_string(c, r)
                            .unwrap_or_default()
                    })
                    .collect(),
            );
        }
    }
    Ok(rows)
}

pub(super) async fn ok(ctx: &SessionContext, sql: &str) -> Vec<Vec<String>> {
    run(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

pub(super) async fn fails(ctx: &SessionContext, sql: &str, kind: ErrorKind, needle: &str) {
    match run(ctx, sql).await {
        Ok(_) => panic!("{sql}: succeeded"),
        Err(e) => {
            assert_eq!(e.kind(), kind, "{sql}: {e}");
            assert!(e.to_string().contains(needle), "{sql}: {e}");
        }
    }
}

/// The table names `SHOW TABLES` lists in schema `schema` of `cat`.
async fn show_tables(ctx: &SessionContext, schema: &str) -> Vec<String> {
    show_tables_in(ctx, "cat", schema).await
}

/// The table names `SHOW TABLES` lists in `catalog.schema`.
async fn show_tables_in(ctx: &SessionContext, catalog: &str, schema: &str) -> Vec<String> {
    let mut names: Vec<String> = ok(ctx, "SHOW TABLES")
        .await
        .into_iter()
        .filter(|r| r[0] == catalog && r[1] == schema)
        .map(|r| r[2].clone())
        .collect();
    names.sort();
    names
}

pub(super) fn ident(text: &str) -> TableIdent {
    TableIdent::parse(text)
}

/// Set properties of table `name` through the Rust API, as another engine sets them
/// (Spark sets `owner`, which a property list refuses).
pub(super) async fn set_table_properties(
    catalog: &Arc<dyn Catalog>,
    name: &str,
    properties: &[(&str, &str)],
) {
    let base = catalog.load_table(&ident(name)).await.expect("table");
    let update = properties
        .iter()
        .try_fold(crate::transaction::UpdateProperties::new(), |u, (k, v)| {
            u.set(*k, *v)
        })
        .expect("properties");
    crate::transaction::Transaction::new(Arc::clone(catalog), ident(name), base)
        .add_action(update)
        .commit()
        .await
        .expect("commit");
}

#[tokio::test]
async fn create_table_with_every_transform() {
    let (ctx, catalog, _dir) = session().await;
    assert!(ok(&ctx, "CREATE SCHEMA ns").await.is_empty());
    assert!(catalog
        .namespace_exists(&Namespace::parse("ns"))
        .await
        .unwrap());
    ok(
        &ctx,
        "CREATE TABLE ns.t (\n  id BIGINT NOT NULL COMMENT 'the id',\n  s VARCHAR,\n  \
         ts TIMESTAMP,\n  tz TIMESTAMP WITH TIME ZONE,\n  d DATE,\n  n INT,\n  u UUID,\n  \
         b BINARY,\n  dec DECIMAL(10, 2),\n  f DOUBLE,\n  flag BOOLEAN,\n  h TIMESTAMP,\n  tags INT[]\n) \
         USING iceberg\n\
         PARTITIONED BY (bucket(16, id), truncate(4, s), years(ts), months(tz), day(d), \
         hours(h), n, identity(flag), void(f))\n\
         TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
    )
    .await;
    let table = catalog.load_table(&ident("ns.t")).await.unwrap();
    let m = table.metadata();
    assert_eq!(m.format_version, FormatVersion::V2);
    assert_eq!(
        m.properties.get("write.delete.mode").map(String::as_str),
        Some("merge-on-read")
    );
    let schema = m.current_schema();
    let columns: Vec<(i32, &str, String, bool)> = schema
        .columns()
        .iter()
        .map(|f| (f.id, f.name.as_str(), f.field_type.to_string(), f.required))
        .collect();
    let expected = [
        (1, "id", "long", true),
        (2, "s", "string", false),
        (3, "ts", "timestamp", false),
        (4, "tz", "timestamptz", false),
        (5, "d", "date", false),
        (6, "n", "int", false),
        (7, "u", "uuid", false),
        (8, "b", "binary", false),
        (9, "dec", "decimal(10, 2)", false),
        (10, "f", "double", false),
        (11, "flag", "boolean", false),
        (12, "h", "timestamp", false),
    ];
    for (got, want) in columns.iter().zip(expected) {
        assert_eq!((got.0, got.1, got.2.as_str(), got.3), want);
    }
    let Type::List(tags) = schema.columns()[12].field_type.as_ref() else {
        panic!("tags: {:?}", schema.columns()[12]);
    };
    assert_eq!((schema.columns()[12].id, tags.element_field.id), (13, 14));
    assert_eq!(schema.columns()[0].doc.as_deref(), Some("the id"));
    assert_eq!(m.last_column_id, 14);

    let spec = m.default_partition_spec().unwrap();
    let fields: Vec<(i32, Option<i32>, &str, Transform)> = spec
        .fields
        .iter()
        .map(|f| {
            (
                f.source_id,
                f.field_id,
                f.name.as_str(),
                f.transform.clone(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        [
            (1, Some(1000), "id_bucket", Transform::Bucket(16)),
            (2, Some(1001), "s_trunc", Transform::Truncate(4)),
            (3, Some(1002), "ts_year", Transform::Year),
            (4, Some(1003), "tz_month", Transform::Month),
            (5, Some(1004), "d_day", Transform::Day),
            (12, Some(1005), "h_hour", Transform::Hour),
            (6, Some(1006), "n", Transform::Identity),
            (11, Some(1007), "flag", Transform::Identity),
            (10, Some(1008), "f_null", Transform::Void),
        ]
    );
    assert_eq!(m.last_partition_id, 1008);
    // visible at once, and readable
    assert_eq!(show_tables(&ctx, "ns").await, ["t"]);
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns.t").await, [["0"]]);
}

#[tokio::test]
async fn names_format_versions_and_spark_spellings() {
    let (ctx, catalog, dir) = session().await;
    ok(&ctx, "CREATE DATABASE IF NOT EXISTS cat.ns COMMENT 'c'").await;
    ok(&ctx, "CREATE NAMESPACE IF NOT EXISTS ns").await;
    let location = dir.path().join("elsewhere/t3");
    ok(
        &ctx,
        &format!(
            "CREATE TABLE cat.ns.T3 (Id LONG, ts TIMESTAMP_NTZ, \"Quoted\" STRING) \
             PARTITIONED BY (date(ts), bucket(id, 8)) LOCATION '{}' \
             COMMENT 'three' TBLPROPERTIES ('format-version'='3')",
            location.display()
        ),
    )
    .await;
    let m = catalog
        .load_table(&ident("ns.t3"))
        .await
        .unwrap()
        .metadata()
        .clone();
    assert_eq!(m.format_version, FormatVersion::V3);
    assert!(m.location.ends_with("elsewhere/t3"), "{}", m.location);
    // a format version is an integer as Java's Integer.parseInt reads one: `+1`, `01`
    for (name, value) in [("v_plus", "+1"), ("v_zero", "01")] {
        ok(
            &ctx,
            &format!("CREATE TABLE ns.{name} (id INT) TBLPROPERTIES ('format-version'='{value}')"),
        )
        .await;
        let table = catalog
            .load_table(&ident(&format!("ns.{name}")))
            .await
            .unwrap();
        assert_eq!(
            table.metadata().format_version,
            FormatVersion::V1,
            "{value}"
        );
        assert!(!table.metadata().properties.contains_key("format-version"));
    }
    assert_eq!(
        m.properties.get("comment").map(String::as_str),
        Some("three")
    );
    let names: Vec<&str> = m
        .current_schema()
        .columns()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["id", "ts", "Quoted"]);
    assert_eq!(
        *m.current_schema().columns()[0].field_type,
        Type::Primitive(PrimitiveType::Long)
    );
    let spec = m.default_partition_spec().unwrap();
    let names: Vec<&str> = spec.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ts_day", "id_bucket"]);
    assert_eq!(spec.fields[1].transform, Transform::Bucket(8));
    // a table in the default schema goes to DataFusion's in-memory `public`
    ok(&ctx, "CREATE TABLE mem (x INT)").await;
    ok(&ctx, "INSERT INTO mem VALUES (1)").await;
    assert_eq!(ok(&ctx, "SELECT x FROM public.mem").await, [["1"]]);
    assert!(!catalog
        .namespace_exists(&Namespace::parse("public"))
        .await
        .unwrap());
}

#[tokio::test]
async fn errors_name_the_statement_and_create_nothing() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    fails(
        &ctx,
        "CREATE SCHEMA ns",
        ErrorKind::AlreadyExists,
        "CREATE SCHEMA cat.ns",
    )
    .await;
    ok(&ctx, "CREATE SCHEMA IF NOT EXISTS ns").await;
    let bad = [
        (
            "CREATE TABLE ns.t (id INT) PARTITIONED BY (bucket(4, nope))",
            "column 'nope' does not exist",
        ),
        (
            "CREATE TABLE ns.t (id INT, flag BOOLEAN) PARTITIONED BY (bucket(4, flag))",
            "transform bucket[4] cannot apply to column 'flag' of type boolean",
        ),
        (
            "CREATE TABLE ns.t (id INT) PARTITIONED BY (days(id))",
            "transform day cannot apply to column 'id'",
        ),
        (
            "CREATE TABLE ns.t (ts DATE) PARTITIONED BY (days(ts), years(ts))",
            "column 'ts' is already partitioned by day (ts_day)",
        ),
        (
            "CREATE TABLE ns.t (id INT) PARTITIONED BY (bucket(2, id), bucket(4, id))",
            "partition field 'id_bucket' appears twice",
        ),
        (
            "CREATE TABLE ns.t (id INT) PARTITIONED BY (zorder(id))",
            "unknown partition transform 'zorder'",
        ),
        (
            "CREATE TABLE ns.t (id INT) TBLPROPERTIES ('format-version'='5')",
            "table property 'format-version' is '5'",
        ),
        // Java's Integer.parseInt refuses blanks: no v3 table, no v3-only column
        (
            "CREATE TABLE ns.t (id INT, ts TIMESTAMP(9)) TBLPROPERTIES ('format-version'=' 3')",
            "table property 'format-version' is ' 3' (expected 1, 2 or 3)",
        ),
        (
            "CREATE TABLE ns.t TBLPROPERTIES ('format-version'='3 ') AS SELECT 1 AS id",
            "table property 'format-version' is '3 ' (expected 1, 2 or 3)",
        ),
        (
            "CREATE TABLE ns.t (id INT) TBLPROPERTIES ('write.delete.mode'='sometimes')",
            "table property 'write.delete.mode'",
        ),
        ("CREATE TABLE ns.t (id INT) USING parquet", "USING parquet"),
        ("CREATE TABLE ns.t (id INT) WHATEVER", "'WHATEVER'"),
    ];
    for (sql, needle) in bad {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
        fails(
            &ctx,
            sql,
            ErrorKind::InvalidArgument,
            "CREATE TABLE cat.ns.t",
        )
        .await;
    }
    assert!(catalog
        .list_tables(&Namespace::parse("ns"))
        .await
        .unwrap()
        .is_empty());
    fails(
        &ctx,
        "CREATE TABLE missing.t (id INT)",
        ErrorKind::NotFound,
        "namespace 'missing'",
    )
    .await;
    ok(&ctx, "CREATE TABLE ns.t (id INT)").await;
    fails(
        &ctx,
        "CREATE TABLE ns.t (id BIGINT)",
        ErrorKind::AlreadyExists,
        "CREATE TABLE cat.ns.t: table already exists",
    )
    .await;
    ok(&ctx, "CREATE TABLE IF NOT EXISTS ns.t (id BIGINT)").await;
    let m = catalog
        .load_table(&ident("ns.t"))
        .await
        .unwrap()
        .metadata()
        .clone();
    assert_eq!(
        *m.current_schema().columns()[0].field_type,
        Type::Primitive(PrimitiveType::Int)
    );
    fails(
        &ctx,
        "DROP TABLE ns.nope",
        ErrorKind::NotFound,
        "DROP TABLE cat.ns.nope",
    )
    .await;
    ok(&ctx, "DROP TABLE IF EXISTS ns.nope").await;
    fails(
        &ctx,
        "CREATE OR REPLACE TABLE IF NOT EXISTS ns.t (id INT)",
        ErrorKind::InvalidArgument,
        "CREATE OR REPLACE TABLE cat.ns.t: IF NOT EXISTS cannot go with REPLACE",
    )
    .await;
    // a statement icefloe cannot read goes to DataFusion, which reports it
    fails(&ctx, "DROP TABLE 'x'", ErrorKind::DataFusion, "").await;
    // DataFusion's own errors come back as they were
    let e = execute(&ctx, "SELECT * FROM ns.nope").await.unwrap_err();
    let df: datafusion::error::DataFusionError = e.into();
    assert!(df.to_string().contains("nope"), "{df}");
}

#[tokio::test]
async fn drop_rename_and_show_tables() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE SCHEMA ns2").await;
    ok(&ctx, "CREATE TABLE ns.a (id INT)").await;
    ok(&ctx, "CREATE TABLE ns.b (id INT)").await;
    assert_eq!(show_tables(&ctx, "ns").await, ["a", "b"]);
    let listed = ok(
        &ctx,
        "SELECT table_name FROM information_schema.tables \
         WHERE table_catalog = 'cat' AND table_schema = 'ns' ORDER BY 1",
    )
    .await;
    assert_eq!(listed, [["a"], ["b"]]);

    ok(&ctx, "ALTER TABLE ns.a RENAME TO c").await;
    assert_eq!(show_tables(&ctx, "ns").await, ["b", "c"]);
    ok(&ctx, "ALTER TABLE cat.ns.c RENAME TO ns2.d").await;
    assert_eq!(show_tables(&ctx, "ns").await, ["b"]);
    assert_eq!(show_tables(&ctx, "ns2").await, ["d"]);
    assert!(catalog.table_exists(&ident("ns2.d")).await.unwrap());
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns2.d").await, [["0"]]);

    // DROP keeps the files, DROP … PURGE deletes them
    let kept = catalog.load_table(&ident("ns2.d")).await.unwrap();
    let kept = kept
        .metadata_location()
        .trim_start_matches("file://")
        .to_string();
    ok(&ctx, "DROP TABLE ns2.d").await;
    assert!(std::path::Path::new(&kept).is_file(), "{kept}");
    ok(&ctx, "INSERT INTO ns.b VALUES (1), (2)").await;
    assert_eq!(ok(&ctx, "SELECT count(*) FROM ns.b").await, [["2"]]);
    let purged = catalog.load_table(&ident("ns.b")).await.unwrap();
    let location = purged
        .metadata()
        .location
        .trim_start_matches("file://")
        .to_string();
    let data_files = || {
        std::fs::read_dir(format!("{location}/data"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    assert!(data_files() > 0, "{location}");
    let purged = purged
        .metadata_location()
        .trim_start_matches("file://")
        .to_string();
    assert!(std::path::Path::new(&purged).is_file(), "{purged}");
    ok(&ctx, "DROP TABLE cat.ns.b PURGE").await;
    assert!(!std::path::Path::new(&purged).exists(), "{purged}");
    assert_eq!(data_files(), 0, "{location}");
    assert!(show_tables(&ctx, "ns").await.is_empty());
    assert!(show_tables(&ctx, "ns2").await.is_empty());
    assert!(!catalog.table_exists(&ident("ns.b")).await.unwrap());
    let e = execute(&ctx, "SELECT * FROM ns.b").await.unwrap_err();
    assert!(e.to_string().contains("not found"), "{e}");
}

#[tokio::test]
async fn other_catalogs_go_to_datafusion() {
    let (ctx, catalog, _dir) = session().await;
    let mem = MemoryCatalogProvider::new();
    mem.register_schema("public", Arc::new(MemorySchemaProvider::new()))
        .unwrap();
    ctx.register_catalog("mem", Arc::new(mem));
    ok(&ctx, "CREATE TABLE mem.public.m (x INT)").await;
    ok(&ctx, "INSERT INTO mem.public.m VALUES (7)").await;
    assert_eq!(ok(&ctx, "SELECT x FROM mem.public.m").await, [["7"]]);
    ok(&ctx, "DROP TABLE mem.public.m").await;
    ok(&ctx, "CREATE SCHEMA mem.other").await;
    ok(&ctx, "CREATE TABLE mem.other.t (x INT)").await;
    assert!(catalog.list_namespaces().await.unwrap().is_empty());
    assert!(ctx.catalog("mem").unwrap().schema("other").is_some());
}

#[tokio::test]
async fn create_table_as_select() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.c USING iceberg PARTITIONED BY (s) \
         AS SELECT CAST(1 AS BIGINT) AS id, 'x' AS s",
    )
    .await;
    let m = catalog
        .load_table(&ident("ns.c"))
        .await
        .unwrap()
        .metadata()
        .clone();
    let columns: Vec<(String, bool)> = m
        .current_schema()
        .columns()
        .iter()
        .map(|f| (f.field_type.to_string(), f.required))
        .collect();
    assert_eq!(
        columns,
        [("long".to_string(), false), ("string".to_string(), false)]
    );
    let rows = ok(&ctx, "SELECT id, s FROM ns.c").await;
    assert_eq!(rows, [["1", "x"]]);
    let files = ok(&ctx, "SELECT file_path FROM ns.\"c$files\"").await;
    assert_eq!(files.len(), 1);
    assert!(files[0][0].contains("/data/s=x/"), "{files:?}");
    // a CTAS from an Iceberg table, with a declared partition transform
    ok(
        &ctx,
        "CREATE TABLE ns.d PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('format-version'='2') \
         AS SELECT id * 10 AS id FROM ns.c UNION ALL SELECT CAST(2 AS BIGINT)",
    )
    .await;
    assert_eq!(
        ok(&ctx, "SELECT id FROM ns.d ORDER BY id").await,
        [["2"], ["10"]]
    );
    let m = catalog
        .load_table(&ident("ns.d"))
        .await
        .unwrap()
        .metadata()
        .clone();
    assert_eq!(m.format_version, FormatVersion::V2);
    assert_eq!(
        m.partition_specs[0].fields[0].transform,
        Transform::Bucket(2)
    );
    // a CTAS into a v3 table (row lineage assigned)
    ok(
        &ctx,
        "CREATE TABLE ns.e TBLPROPERTIES ('format-version'='3') AS SELECT CAST(1 AS BIGINT) AS id",
    )
    .await;
    assert_eq!(ok(&ctx, "SELECT id FROM ns.e").await, [["1"]]);
    let m = catalog
        .load_table(&ident("ns.e"))
        .await
        .unwrap()
        .metadata()
        .clone();
    assert_eq!(m.format_version, FormatVersion::V3);
    assert_eq!(m.next_row_id, Some(1));
    assert_eq!(show_tables(&ctx, "ns").await, ["c", "d", "e"]);
}

/// A CTAS reading a `uuid` column creates a `uuid` column (the query's field is tagged
/// `arrow.uuid`), not `fixed[16]`: top-level, through `SELECT *`, partitioned by it.
#[tokio::test]
async fn create_table_as_select_keeps_uuid_columns() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.src (id INT, u UUID, f BINARY)").await;
    ok(
        &ctx,
        "INSERT INTO ns.src VALUES (1, X'550e8400e29b41d4a716446655440000', X'01'), \
         (2, NULL, NULL)",
    )
    .await;
    for (name, sql) in [
        ("a", "CREATE TABLE ns.a AS SELECT id, u FROM ns.src"),
        ("b", "CREATE TABLE ns.b AS SELECT * FROM ns.src"),
        (
            "c",
            "CREATE TABLE ns.c PARTITIONED BY (bucket(4, u)) AS SELECT u, id FROM ns.src",
        ),
    ] {
        ok(&ctx, sql).await;
        let m = catalog
            .load_table(&ident(&format!("ns.{name}")))
            .await
            .unwrap()
            .metadata()
            .clone();
        let u = m
            .current_schema()
            .columns()
            .iter()
            .find(|f| f.name == "u")
            .map(|f| f.field_type.to_string());
        assert_eq!(u.as_deref(), Some("uuid"), "{sql}");
        let rows = ok(
            &ctx,
            &format!("SELECT id FROM ns.{name} WHERE u = '550e8400-e29b-41d4-a716-446655440000'"),
        )
        .await;
        assert_eq!(rows, [["1"]], "{sql}");
    }
    // 16 bytes that are no uuid column stay fixed[16]
    ok(
        &ctx,
        "CREATE TABLE ns.d AS SELECT \
         arrow_cast(X'550e8400e29b41d4a716446655440000', 'FixedSizeBinary(16)') AS x",
    )
    .await;
    let m = catalog
        .load_table(&ident("ns.d"))
        .await
        .unwrap()
        .metadata()
        .clone();
    assert_eq!(
        m.current_schema().columns()[0].field_type.to_string(),
        "fixed[16]"
    );
}

/// uuid values written as text (as Spark and DuckDB users write them) go into the uuid
/// column as the UUID's bytes: `INSERT … VALUES`, a `SELECT` list, `UPDATE … SET`, and
/// `MERGE`'s `UPDATE SET` and `INSERT … VALUES`; a string column beside it keeps the text,
/// and a string that is no UUID is an error naming it and the column, committing nothing.
#[tokio::test]
async fn uuid_columns_take_their_text_form_in_writes() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, u UUID, s STRING) PARTITIONED BY (bucket(4, u)) \
         TBLPROPERTIES ('write.update.mode'='merge-on-read')",
    )
    .await;
    let text = "550e8400-e29b-41d4-a716-446655440000";
    ok(
        &ctx,
        &format!("INSERT INTO ns.t VALUES (1, '{text}', '{text}'), (2, NULL, 'n')"),
    )
    .await;
    ok(
        &ctx,
        "INSERT INTO ns.t (s, u, id) SELECT 'x', ('550E8400-E29B-41D4-A716-446655440003'), 3 \
         UNION ALL SELECT 'y', $$550e8400e29b41d4a716446655440004$$, 4",
    )
    .await;
    ok(
        &ctx,
        "UPDATE ns.t SET u = '00000000-0000-0000-0000-000000000002' WHERE id = 2",
    )
    .await;
    ok(
        &ctx,
        "MERGE INTO ns.t USING (SELECT 4 AS id UNION ALL SELECT 5) src ON t.id = src.id \
         WHEN MATCHED THEN UPDATE SET u = '00000000-0000-0000-0000-000000000044' \
         WHEN NOT MATCHED THEN INSERT (id, u, s) \
         VALUES (src.id, '00000000-0000-0000-0000-000000000005', 'm')",
    )
    .await;
    let rows = ok(
        &ctx,
        "SELECT id, CAST(u AS STRING), s FROM ns.t ORDER BY id",
    )
    .await;
    assert_eq!(
        rows,
        [
            ["1", text, text],
            ["2", "00000000-0000-0000-0000-000000000002", "n"],
            ["3", "550e8400-e29b-41d4-a716-446655440003", "x"],
            ["4", "00000000-0000-0000-0000-000000000044", "y"],
            ["5", "00000000-0000-0000-0000-000000000005", "m"],
        ]
    );
    // the bytes are the uuid's (bucketed and filtered by it)
    let rows = ok(&ctx, &format!("SELECT id FROM ns.t WHERE u = '{text}'")).await;
    assert_eq!(rows, [["1"]]);

    let before = catalog
        .load_table(&ident("ns.t"))
        .await
        .unwrap()
        .metadata_location()
        .to_string();
    for sql in [
        "INSERT INTO ns.t VALUES (9, 'nope', 'a')",
        "UPDATE ns.t SET u = '550e8400-e29b-41d4-a716' WHERE id = 1",
    ] {
        let err = run(&ctx, sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{sql}: {err}");
        assert!(
            err.to_string().contains("is not a UUID") && err.to_string().contains("column 'u'"),
            "{sql}: {err}"
        );
    }
    let after = catalog
        .load_table(&ident("ns.t"))
        .await
        .unwrap()
        .metadata_location()
        .to_string();
    assert_eq!(before, after);
    // a string that is no uuid into a string column stays text
    ok(&ctx, "INSERT INTO ns.t (id, s) VALUES (10, 'nope')").await;
}

/// `INSERT … VALUES` with a NULL for a required column names the table's column (DataFusion
/// named its `Values` node's `column1`), in any position of a column list, and commits
/// nothing; a NULL in an optional column beside it is written.
#[tokio::test]
async fn null_values_for_required_columns_name_the_column() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT NOT NULL, s STRING NOT NULL, o INT)",
    )
    .await;
    for (sql, column) in [
        ("INSERT INTO ns.t VALUES (NULL, 'a', 1)", "id"),
        (
            "INSERT INTO ns.t (o, s, id) VALUES (1, 'a', 1), (2, NULL, 2)",
            "s",
        ),
    ] {
        let err = run(&ctx, sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{sql}: {err}");
        assert_eq!(
            err.to_string(),
            format!(
                "invalid argument: column '{column}' is required (NOT NULL) but a row of \
                 VALUES holds NULL for it"
            ),
            "{sql}"
        );
    }
    let table = catalog.load_table(&ident("ns.t")).await.unwrap();
    assert!(table.metadata().current_snapshot().is_none());
    ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a', NULL)").await;
    assert_eq!(
        ok(&ctx, "SELECT id, s, o FROM ns.t").await,
        [["1", "a", ""]]
    );
}

/// A struct value written into a struct column must have exactly the table struct's
/// fields, matched by name (in any order): an extra field (its value would be dropped) or
/// a missing one (it would be null) is an error naming the struct and the field, at any
/// depth, for `INSERT … SELECT`, `INSERT … VALUES`, `UPDATE` and `MERGE`, and nothing is
/// committed.
#[tokio::test]
async fn struct_values_must_have_the_table_struct_fields() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, st STRUCT<a INT, b STRING>, n STRUCT<i STRUCT<x INT>>)",
    )
    .await;
    for (sql, message) in [
        (
            "INSERT INTO ns.t (id, st) SELECT 1 AS id, named_struct('a', 2, 'b', 'z', 'c', 5) AS st",
            "INSERT into 'ns.t': cannot write extra fields to struct 'st': 'c'",
        ),
        (
            "INSERT INTO ns.t (id, st) SELECT 2 AS id, named_struct('a', 3) AS st",
            "INSERT into 'ns.t': cannot find data for output column 'st.b'",
        ),
        (
            "INSERT INTO ns.t (id, st) VALUES (3, named_struct('a', 4, 'zzz', 'lost'))",
            "INSERT into 'ns.t': cannot write extra fields to struct 'st': 'zzz'; cannot find \
             data for output column 'st.b'",
        ),
        (
            "INSERT INTO ns.t (id, st) SELECT 4, named_struct('x', 4, 'y', 'by position')",
            "INSERT into 'ns.t': cannot write extra fields to struct 'st': 'x', 'y'; cannot \
             find data for output column 'st.a'; cannot find data for output column 'st.b'",
        ),
        (
            "INSERT INTO ns.t (id, n) SELECT 5, named_struct('i', named_struct('x', 1, 'y', 2))",
            "INSERT into 'ns.t': cannot write extra fields to struct 'n.i': 'y'",
        ),
        // VALUES of another field count: DataFusion's planner refused them with "Types
        // don't match and no valid cast exists"
        (
            "INSERT INTO ns.t VALUES (6, named_struct('a', 1), NULL)",
            "INSERT into 'ns.t': cannot find data for output column 'st.b'",
        ),
        (
            "INSERT INTO ns.t (id, st) VALUES (7, named_struct('a', 1, 'b', 'x')), \
             (8, {'a': 1, 'b': 'y', 'c': 2})",
            "INSERT into 'ns.t': cannot write extra fields to struct 'st': 'c'",
        ),
        (
            "INSERT INTO ns.t (id, n) VALUES (9, named_struct('i', named_struct('x', 1, 'y', 2)))",
            "INSERT into 'ns.t': cannot write extra fields to struct 'n.i': 'y'",
        ),
        (
            "INSERT INTO ns.t VALUES (10, NULL, named_struct('i', named_struct('z', 1)))",
            "INSERT into 'ns.t': cannot write extra fields to struct 'n.i': 'z'; cannot find \
             data for output column 'n.i.x'",
        ),
    ] {
        let err = run(&ctx, sql).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{sql}: {err}");
        assert_eq!(
            err.to_string(),
            format!("invalid argument: {message} (struct fields are matched by name)"),
            "{sql}"
        );
    }
    let table = catalog.load_table(&ident("ns.t")).await.unwrap();
    assert!(table.metadata().current_snapshot().is_none());

    // by name, in any order
    ok(
        &ctx,
        "INSERT INTO ns.t (id, st) SELECT 1, named_struct('b', 'x', 'a', 1)",
    )
    .await;
    let before = catalog.load_table(&ident("ns.t")).await.unwrap();
    fails(
        &ctx,
        "UPDATE ns.t SET st = named_struct('a', 7, 'c', 9) WHERE id = 1",
        ErrorKind::InvalidArgument,
        "UPDATE of 'ns.t': cannot write extra fields to struct 'st': 'c'; cannot find data \
         for output column 'st.b'",
    )
    .await;
    // DataFusion wraps what the provider's MERGE planning returns in "MERGE INTO operation
    // on table 'ns.t'"
    for (sql, message) in [
        (
            "MERGE INTO ns.t USING (SELECT 1 AS id) s ON t.id = s.id \
             WHEN MATCHED THEN UPDATE SET st = named_struct('a', 7)",
            "MERGE: cannot find data for output column 'st.b'",
        ),
        (
            "MERGE INTO ns.t USING (SELECT 2 AS id) s ON t.id = s.id WHEN NOT MATCHED \
             THEN INSERT (id, st) VALUES (s.id, named_struct('a', 7, 'b', 'x', 'q', 1))",
            "MERGE: cannot write extra fields to struct 'st': 'q'",
        ),
    ] {
        let err = run(&ctx, sql).await.unwrap_err().to_string();
        assert!(err.contains(message), "{sql}: {err}");
    }
    let after = catalog.load_table(&ident("ns.t")).await.unwrap();
    assert_eq!(
        after.metadata().current_snapshot_id,
        before.metadata().current_snapshot_id
    );
    ok(
        &ctx,
        "UPDATE ns.t SET st = named_struct('b', 'y', 'a', id + 1) WHERE id = 1",
    )
    .await;
    assert_eq!(
        ok(&ctx, "SELECT id, st FROM ns.t").await,
        [["1", "{a: 2, b: y}"]]
    );
}

/// `TIMESTAMP(9) [WITH TIME ZONE]` creates `timestamp_ns`/`timestamptz_ns` on a v3 table
/// and keeps nanoseconds (it created microsecond columns and truncated); a plain
/// `TIMESTAMP` and `TIMESTAMP(6)` stay microseconds. On a v2 table it is an error naming
/// the column, for `CREATE TABLE` and `ALTER TABLE … ADD COLUMN`; `VARIANT` is an error
/// naming the column and type.
#[tokio::test]
async fn timestamp_precision_9_is_nanoseconds_on_v3() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (a TIMESTAMP(9), b TIMESTAMP(9) WITH TIME ZONE, c TIMESTAMP, \
         d TIMESTAMP(6)) TBLPROPERTIES ('format-version' = '3')",
    )
    .await;
    let table = catalog.load_table(&ident("ns.t")).await.unwrap();
    let types: Vec<String> = table
        .metadata()
        .current_schema()
        .columns()
        .iter()
        .map(|f| f.field_type.to_string())
        .collect();
    assert_eq!(
        types,
        ["timestamp_ns", "timestamptz_ns", "timestamp", "timestamp"]
    );
    let ts = "TIMESTAMP '2026-01-01 00:00:00.123456789'";
    ok(
        &ctx,
        &format!("INSERT INTO ns.t VALUES ({ts}, {ts}, {ts}, {ts})"),
    )
    .await;
    assert_eq!(
        ok(&ctx, "SELECT a, b, c FROM ns.t").await,
        [[
            "2026-01-01T00:00:00.123456789",
            "2026-01-01T00:00:00.123456789Z",
            "2026-01-01T00:00:00.123456"
        ]]
    );
    fails(
        &ctx,
        "CREATE TABLE ns.v2 (id INT, a TIMESTAMP(9))",
        ErrorKind::InvalidArgument,
        "column 'a': type timestamp_ns (TIMESTAMP(9)) needs format-version 3",
    )
    .await;
    ok(&ctx, "CREATE TABLE ns.v2 (id INT)").await;
    fails(
        &ctx,
        "ALTER TABLE ns.v2 ADD COLUMN a TIMESTAMP(9) WITH TIME ZONE",
        ErrorKind::InvalidArgument,
        "invalid type for field 'a' (id 2): timestamptz_ns needs format version 3 (the table \
         is v2)",
    )
    .await;
    fails(
        &ctx,
        "CREATE TABLE ns.var (id INT, v VARIANT) TBLPROPERTIES ('format-version' = '3')",
        ErrorKind::Unsupported,
        "column 'v': type VARIANT",
    )
    .await;
}

/// Timestamp types nested in a struct, list or map are declared as at the top level:
/// `TIMESTAMP(9) [WITH TIME ZONE]` is `timestamp_ns`/`timestamptz_ns` on a v3 table and
/// keeps nanoseconds (it was `timestamp`, truncating), `TIMESTAMP WITH TIME ZONE` is
/// `timestamptz` (it lost its zone); by `CREATE TABLE` and `ALTER TABLE … ADD COLUMN`.
/// On v1/v2 tables they are refused naming the nested field.
#[tokio::test]
async fn nested_timestamp_types_are_declared_as_at_the_top_level() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT, st STRUCT<a TIMESTAMP(9), b TIMESTAMP WITH TIME ZONE, \
         timestamp: TIMESTAMP(9) WITH TIME ZONE, d TIMESTAMP>, l ARRAY<TIMESTAMP(9)>, \
         l2 TIMESTAMP(9)[], m MAP<TIMESTAMP, TIMESTAMP(9)>) \
         TBLPROPERTIES ('format-version' = '3')",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.t ADD COLUMN x STRUCT<y ARRAY<TIMESTAMP(9) WITH TIME ZONE>, z TIMESTAMPTZ>",
    )
    .await;
    let table = catalog.load_table(&ident("ns.t")).await.unwrap();
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
            "struct<a: timestamp_ns, b: timestamptz, timestamp: timestamptz_ns, d: timestamp>",
            "list<timestamp_ns>",
            "list<timestamp_ns>",
            "map<timestamp, timestamp_ns>",
            "struct<y: list<timestamptz_ns>, z: timestamptz>",
        ]
        .map(String::from)
    );
    let ts = "TIMESTAMP '2026-01-01 00:00:00.123456789'";
    ok(
        &ctx,
        &format!(
            "INSERT INTO ns.t VALUES (1, named_struct('a', {ts}, 'b', {ts}, 'timestamp', {ts}, \
             'd', {ts}), [{ts}], [{ts}], MAP {{{ts}: {ts}}}, \
             named_struct('y', [{ts}], 'z', {ts}))"
        ),
    )
    .await;
    assert_eq!(
        ok(
            &ctx,
            "SELECT st['a'], st['timestamp'], st['d'], l[1], l2[1], map_values(m)[1], \
             x['y'][1] FROM ns.t"
        )
        .await,
        [[
            "2026-01-01T00:00:00.123456789",
            "2026-01-01T00:00:00.123456789Z",
            "2026-01-01T00:00:00.123456",
            "2026-01-01T00:00:00.123456789",
            "2026-01-01T00:00:00.123456789",
            "2026-01-01T00:00:00.123456789",
            "2026-01-01T00:00:00.123456789Z",
        ]]
    );
    for (sql, message) in [
        (
            "CREATE TABLE ns.v2 (id INT, st STRUCT<a INT, b TIMESTAMP(9)>)",
            "column 'st.b': type timestamp_ns (TIMESTAMP(9)) needs format-version 3",
        ),
        (
            "CREATE TABLE ns.v2 (m MAP<STRING, TIMESTAMP(9) WITH TIME ZONE>) \
             TBLPROPERTIES ('format-version' = '1')",
            "column 'm.value': type timestamptz_ns (TIMESTAMP(9)) needs format-version 3",
        ),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, message).await;
    }
    ok(&ctx, "CREATE TABLE ns.v2 (id INT)").await;
    fails(
        &ctx,
        "ALTER TABLE ns.v2 ADD COLUMN l ARRAY<TIMESTAMP(9)>",
        ErrorKind::InvalidArgument,
        "invalid type for field 'l.element' (id 3): timestamp_ns needs format version 3 (the \
         table is v2)",
    )
    .await;
}

#[tokio::test]
async fn failed_ctas_drops_the_table() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    let e = run(
        &ctx,
        "CREATE TABLE ns.bad AS SELECT CAST('abc' AS INT) AS x",
    )
    .await
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("CREATE TABLE cat.ns.bad AS: inserting the query's rows"),
        "{e}"
    );
    assert!(!catalog.table_exists(&ident("ns.bad")).await.unwrap());
    assert!(show_tables(&ctx, "ns").await.is_empty());
    // no file of the table is left (its metadata file was)
    fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut left = vec![];
    files(_dir.path(), &mut left);
    left.retain(|p| !p.to_string_lossy().contains("cat.db"));
    assert!(left.is_empty(), "{left:?}");
}

/// A CTAS with a column list creates the list's columns as `CREATE TABLE t (<list>)`
/// does (a `NOT NULL` column is required, even from a query whose column may be null);
/// a null for it fails the statement as `INSERT` would, naming the column, and leaves no
/// table. Without a list every column is optional (Spark's CTAS).
#[tokio::test]
async fn ctas_with_a_column_list_keeps_not_null() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.src (a INT, b STRING)").await;
    ok(&ctx, "INSERT INTO ns.src VALUES (1, 'x'), (2, NULL)").await;
    let required = |name: &'static str| {
        let catalog = Arc::clone(&catalog);
        async move {
            let table = catalog.load_table(&ident(name)).await.unwrap();
            table
                .metadata()
                .current_schema()
                .columns()
                .iter()
                .map(|f| (f.name.clone(), f.field_type.to_string(), f.required))
                .collect::<Vec<_>>()
        }
    };
    ok(
        &ctx,
        "CREATE TABLE ns.t (id BIGINT NOT NULL, s STRING COMMENT 'the s') AS SELECT a, b FROM ns.src",
    )
    .await;
    assert_eq!(
        required("ns.t").await,
        [
            ("id".to_string(), "long".to_string(), true),
            ("s".to_string(), "string".to_string(), false)
        ]
    );
    assert_eq!(
        ok(&ctx, "SELECT id, s FROM ns.t ORDER BY id").await,
        [["1", "x"], ["2", ""]]
    );
    // the plain statement's columns, for comparison
    ok(&ctx, "CREATE TABLE ns.p (id BIGINT NOT NULL, s STRING)").await;
    assert_eq!(required("ns.p").await, required("ns.t").await);
    // a null for the required column: INSERT's error, and no table
    let insert = run(
        &ctx,
        "INSERT INTO ns.p SELECT CASE WHEN b IS NULL THEN NULL ELSE a END, b FROM ns.src",
    )
    .await
    .unwrap_err()
    .to_string();
    let ctas = run(
        &ctx,
        "CREATE TABLE ns.n (s STRING, id INT NOT NULL) \
         AS SELECT b, CASE WHEN b IS NULL THEN NULL ELSE a END FROM ns.src",
    )
    .await
    .unwrap_err();
    assert_eq!(ctas.kind(), ErrorKind::InvalidArgument, "{ctas}");
    let ctas = ctas.to_string();
    assert!(
        ctas.contains("CREATE TABLE cat.ns.n AS: inserting the query's rows"),
        "{ctas}"
    );
    assert!(
        ctas.contains("column 'id' is required (NOT NULL) but a row to write holds null"),
        "{ctas}"
    );
    assert!(
        insert.contains("column 'id' is required (NOT NULL) but a row to write holds null"),
        "{insert}"
    );
    assert!(!catalog.table_exists(&ident("ns.n")).await.unwrap());
    // the list and the query must agree in column count
    fails(
        &ctx,
        "CREATE TABLE ns.m (id INT NOT NULL) AS SELECT a, b FROM ns.src",
        ErrorKind::DataFusion,
        "1 columns specified, but result has 2 columns",
    )
    .await;
    assert!(!catalog.table_exists(&ident("ns.m")).await.unwrap());
    // without a list, every column is optional
    ok(&ctx, "CREATE TABLE ns.o AS SELECT id, s FROM ns.p").await;
    assert!(required("ns.o").await.iter().all(|(_, _, r)| !r));
    assert_eq!(show_tables(&ctx, "ns").await, ["o", "p", "src", "t"]);
}

/// A CTAS is a staged create, as Spark's on Iceberg: while its query runs the table is
/// in no catalog (not listed, not loaded, an `INSERT` into it fails as into a missing
/// table); a `CREATE TABLE` of the name meanwhile wins, the CTAS then fails with
/// `AlreadyExists` naming the table, and the files it wrote are removed, the other
/// table's rows untouched. (It was create, then insert: the table was visible while the
/// query ran, took the other writer's rows, and a failed CTAS kept it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_ctas_is_invisible_until_its_commit_and_loses_to_a_create_meanwhile() {
    use datafusion::arrow::datatypes::DataType;
    use datafusion::logical_expr::{create_udf, ColumnarValue, Volatility};
    use std::sync::{mpsc, Condvar, Mutex};

    let (ctx, catalog, dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    // `stall(x)`: tells the test it runs, waits for its go, then returns x
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let started_tx = Mutex::new(started_tx);
    let go = Arc::new((Mutex::new(false), Condvar::new()));
    let go_udf = Arc::clone(&go);
    let stall = create_udf(
        "stall",
        vec![DataType::Int64],
        DataType::Int64,
        Volatility::Volatile,
        Arc::new(move |args: &[ColumnarValue]| {
            let _ = started_tx.lock().map(|tx| tx.send(()));
            let (lock, cvar) = &*go_udf;
            let mut ready = lock.lock().expect("lock");
            while !*ready {
                ready = cvar.wait(ready).expect("wait");
            }
            Ok(args[0].clone())
        }),
    );
    ctx.register_udf(stall);
    let ctas = {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            run(
                &ctx,
                "CREATE TABLE ns.c AS SELECT stall(x) AS x FROM (VALUES (1), (2)) v(x)",
            )
            .await
        })
    };
    tokio::task::spawn_blocking(move || started_rx.recv().expect("stall runs"))
        .await
        .expect("join");
    assert!(!catalog.table_exists(&ident("ns.c")).await.unwrap());
    assert!(show_tables(&ctx, "ns").await.is_empty());
    fails(
        &ctx,
        "INSERT INTO ns.c VALUES (7)",
        ErrorKind::DataFusion,
        "ns.c",
    )
    .await;
    ok(&ctx, "CREATE TABLE ns.c (x BIGINT)").await;
    ok(&ctx, "INSERT INTO ns.c VALUES (7)").await;
    let other = catalog.load_table(&ident("ns.c")).await.unwrap();
    {
        let (lock, cvar) = &*go;
        *lock.lock().expect("lock") = true;
        cvar.notify_all();
    }
    let e = ctas.await.expect("join").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    assert!(e.to_string().contains("table 'ns.c' already exists"), "{e}");
    // the step that lost is the create, not an insert (a tester's)
    assert!(
        e.to_string()
            .contains("AS: creating the table (another writer created it meanwhile)"),
        "{e}"
    );
    assert_eq!(ok(&ctx, "SELECT x FROM ns.c").await, [["7"]]);
    let now = catalog.load_table(&ident("ns.c")).await.unwrap();
    assert_eq!(now.metadata_location(), other.metadata_location());
    // every file under the table's location is the other table's
    let location = now.metadata().location.clone();
    let root = std::path::PathBuf::from(location.strip_prefix("file://").unwrap());
    assert!(root.starts_with(dir.path()), "{location}");
    let mut left = vec![];
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            match e.path().is_dir() {
                true => stack.push(e.path()),
                false => left.push(format!("file://{}", e.path().display())),
            }
        }
    }
    let mut referenced = crate::catalog::files_to_purge(&now).await.unwrap();
    referenced.retain(|f| f.starts_with(&location));
    left.sort();
    referenced.sort();
    assert_eq!(left, referenced);
}

#[test]
fn execute_is_send() {
    fn assert_send<T: Send>(_: T) {}
    let ctx = SessionContext::new();
    assert_send(execute(&ctx, "SELECT 1"));
}

#[test]
fn plan_sql_cuts_the_spark_clauses() {
    let sql = "CREATE TABLE ns.t (u UUID COMMENT 'a, b', m STRUCT<a INT, b BINARY>, x BINARY) \
               USING iceberg PARTITIONED BY (bucket(4, u)) LOCATION '/x' \
               TBLPROPERTIES ('k'='v') AS SELECT 1";
    let dialect = datafusion::sql::sqlparser::dialect::GenericDialect {};
    let toks = super::tokens::tokenize(sql, &dialect).unwrap();
    let mut c = super::tokens::Cursor::new(sql, toks, true);
    assert!(c.eat_keywords(&["CREATE", "TABLE"]));
    c.object_name().unwrap();
    let parsed = super::create_table::Parsed::parse(c).unwrap();
    assert_eq!(
        parsed.plan_sql,
        "CREATE TABLE ns.t (u BYTEA COMMENT 'a, b', m STRUCT<a INT, b BINARY>, x BYTEA)     AS SELECT 1"
    );
    assert_eq!(parsed.docs.get("u").map(String::as_str), Some("a, b"));
    assert_eq!(parsed.declared.get("u"), Some(&PrimitiveType::Uuid));
    assert_eq!(parsed.query.as_deref(), Some("SELECT 1"));
    assert_eq!(parsed.location.as_deref(), Some("/x"));
}

#[tokio::test]
async fn nested_types_get_ids_after_the_columns() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.n (a INT, s STRUCT<x INT, y VARCHAR>, l VARCHAR[], b INT NOT NULL)",
    )
    .await;
    let m = catalog
        .load_table(&ident("ns.n"))
        .await
        .unwrap()
        .metadata()
        .clone();
    let json = m.current_schema().to_json();
    let ids: Vec<i64> = json["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3, 4]);
    assert_eq!(json["fields"][1]["type"]["fields"][0]["id"], 5);
    assert_eq!(json["fields"][1]["type"]["fields"][1]["id"], 6);
    assert_eq!(json["fields"][2]["type"]["element-id"], 7);
    assert_eq!(json["fields"][3]["required"], true);
    let batches = execute(&ctx, "SELECT * FROM ns.n")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(batches.iter().all(|b| b.num_rows() == 0));
}

#[tokio::test]
async fn map_columns_in_spark_and_duckdb_spelling() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.m (id INT, m MAP<STRING, INT>, d MAP(VARCHAR, DECIMAL(10,2)) COMMENT 'a, b', \
         n MAP<STRING, MAP<STRING, BIGINT>>, s STRUCT<tags MAP<STRING, STRING>>, \
         l ARRAY<MAP<INT, STRING>>, map INT)",
    )
    .await;
    let m = catalog
        .load_table(&ident("ns.m"))
        .await
        .unwrap()
        .metadata()
        .clone();
    let json = m.current_schema().to_json();
    let f = &json["fields"];
    let map = |key_id: i64, key: serde_json::Value, value_id: i64, value: serde_json::Value| {
        serde_json::json!({"type": "map", "key-id": key_id, "key": key, "value-id": value_id,
            "value-required": false, "value": value})
    };
    assert_eq!(f[1]["type"], map(8, "string".into(), 9, "int".into()));
    assert_eq!(
        f[2]["type"],
        map(10, "string".into(), 11, "decimal(10, 2)".into())
    );
    assert_eq!(f[2]["doc"], "a, b");
    assert_eq!(
        f[3]["type"],
        map(
            12,
            "string".into(),
            13,
            map(14, "string".into(), 15, "long".into())
        )
    );
    assert_eq!(f[4]["type"]["fields"][0]["id"], 16);
    assert_eq!(
        f[4]["type"]["fields"][0]["type"],
        map(17, "string".into(), 18, "string".into())
    );
    assert_eq!(f[5]["type"]["element-id"], 19);
    assert_eq!(
        f[5]["type"]["element"],
        map(20, "int".into(), 21, "string".into())
    );
    assert_eq!(f[6]["name"], "map");
    assert_eq!(f[6]["type"], "int");
    // a map column added later gets the same treatment
    ok(
        &ctx,
        "ALTER TABLE ns.m ADD COLUMN extra MAP<STRING, DOUBLE>",
    )
    .await;
    let m = catalog
        .load_table(&ident("ns.m"))
        .await
        .unwrap()
        .metadata()
        .clone();
    let json = m.current_schema().to_json();
    assert_eq!(json["fields"][7]["type"]["type"], "map");
    assert_eq!(json["fields"][7]["type"]["value"], "double");
    // rows go in and come back
    ok(
        &ctx,
        "INSERT INTO ns.m (id, m, n) VALUES (1, MAP {'a': 1, 'b': 2}, MAP {'x': MAP {'y': 3}})",
    )
    .await;
    assert_eq!(
        ok(&ctx, "SELECT id, m['b'], n['x']['y'], d FROM ns.m").await,
        [["1", "2", "3", ""]]
    );
}

#[tokio::test]
async fn filesystem_catalog_ddl() {
    let dir = tempfile::tempdir().expect("temp dir");
    let warehouse = dir.path().to_string_lossy().to_string();
    let catalog: Arc<dyn Catalog> =
        Arc::new(crate::catalog::FileSystemCatalog::new("wh", &warehouse).expect("catalog"));
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_information_schema(true));
    let provider = IcebergCatalogProvider::try_new(Arc::clone(&catalog))
        .await
        .expect("provider");
    ctx.register_catalog("wh", Arc::new(provider));
    ok(&ctx, "CREATE SCHEMA wh.db").await;
    ok(
        &ctx,
        "CREATE TABLE wh.db.t (id BIGINT, ts TIMESTAMP) PARTITIONED BY (hours(ts))",
    )
    .await;
    assert_eq!(show_tables_in(&ctx, "wh", "db").await, ["t"]);
    assert!(dir.path().join("db/t/metadata").is_dir());
    ok(
        &ctx,
        "INSERT INTO wh.db.t VALUES (1, TIMESTAMP '2026-01-01 10:00:00')",
    )
    .await;
    assert_eq!(ok(&ctx, "SELECT id FROM wh.db.t").await, [["1"]]);
    fails(
        &ctx,
        "ALTER TABLE wh.db.t RENAME TO u",
        ErrorKind::Unsupported,
        "ALTER TABLE wh.db.t RENAME",
    )
    .await;
    // the table's directory is its name: its location cannot change
    let elsewhere = dir.path().join("elsewhere");
    fails(
        &ctx,
        &format!("ALTER TABLE wh.db.t SET LOCATION '{}'", elsewhere.display()),
        ErrorKind::Unsupported,
        "its location cannot be changed",
    )
    .await;
    assert_eq!(ok(&ctx, "SELECT id FROM wh.db.t").await, [["1"]]);
    ok(&ctx, "DROP TABLE wh.db.t PURGE").await;
    assert!(show_tables_in(&ctx, "wh", "db").await.is_empty());
    assert!(!catalog.table_exists(&ident("db.t")).await.unwrap());
}

#[test]
fn tokens_carry_their_byte_ranges() {
    let sql = "/* é */ CREATE TABLE \"é\"\n  (x INT) -- ü\n\tLOCATION 'ü;'";
    let dialect = datafusion::sql::sqlparser::dialect::GenericDialect {};
    let toks = super::tokens::tokenize(sql, &dialect).unwrap();
    let texts: Vec<&str> = toks.iter().map(|t| &sql[t.start..t.end]).collect();
    assert_eq!(
        texts,
        ["CREATE", "TABLE", "\"é\"", "(", "x", "INT", ")", "LOCATION", "'ü;'"]
    );
    let first = super::tokens::first_word_is;
    assert!(first(sql, &["CREATE"]));
    assert!(first("-- x\n  drop table t", &["DROP"]));
    assert!(!first("SELECT 1", &["CREATE", "DROP", "ALTER"]));
    assert!(!first("CREATED", &["CREATE"]));
}

/// `USE ns` (Spark's `USE [NAMESPACE] ns`, Trino's `USE schema`) makes unqualified names
/// resolve in namespace `ns`: `CREATE TABLE t` creates the Iceberg table `ns.t`. A
/// namespace that does not exist is refused naming it, and leaves the current one.
#[tokio::test]
async fn use_makes_a_namespace_current() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    fails(
        &ctx,
        "USE nosuch",
        ErrorKind::NotFound,
        "USE nosuch: namespace 'nosuch' does not exist in catalog 'cat' (schemas: ns, public;",
    )
    .await;
    ok(&ctx, "USE ns").await;
    ok(&ctx, "CREATE TABLE t (id INT)").await;
    ok(&ctx, "INSERT INTO t VALUES (4)").await;
    assert!(catalog
        .table_exists(&TableIdent::new(Namespace::parse("ns"), "t"))
        .await
        .unwrap());
    assert_eq!(ok(&ctx, "SELECT id FROM cat.ns.t").await, [["4"]]);
    // back to the in-memory schema, then by catalog and keyword
    ok(&ctx, "USE public").await;
    fails(&ctx, "SELECT id FROM t", ErrorKind::DataFusion, "not found").await;
    ok(&ctx, "USE NAMESPACE cat.ns").await;
    assert_eq!(ok(&ctx, "SELECT id FROM t").await, [["4"]]);
    // a namespace created by another engine since the catalog was listed
    catalog
        .create_namespace(
            &Namespace::parse("later"),
            &std::collections::HashMap::new(),
        )
        .await
        .unwrap();
    ok(&ctx, "USE SCHEMA later").await;
    ok(&ctx, "CREATE TABLE u (id INT)").await;
    assert!(catalog
        .table_exists(&TableIdent::new(Namespace::parse("later"), "u"))
        .await
        .unwrap());
    fails(&ctx, "USE ns extra", ErrorKind::InvalidArgument, "USE ns").await;
}

/// Spark's `SET TIME ZONE 'zone'` sets the session's zone (it failed: "SET variant not
/// implemented yet: SetTimeZone { … }"; a tester's), which time travel and
/// `TIMESTAMPTZ` literals then read; `LOCAL` and `INTERVAL` are refused saying what to
/// write, a zone DataFusion does not know is refused.
#[tokio::test]
async fn set_time_zone_sets_the_session_zone() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "SET TIME ZONE 'Asia/Tokyo'").await;
    let zone = || ctx.state().config_options().execution.time_zone.clone();
    assert_eq!(zone().as_deref(), Some("Asia/Tokyo"));
    assert_eq!(
        ok(
            &ctx,
            "SELECT CAST(CAST('2026-01-01 09:00:00' AS TIMESTAMPTZ) AS BIGINT)"
        )
        .await,
        // 09:00 in Tokyo is 00:00 UTC
        [["1767225600000000000".to_string()]]
    );
    ok(&ctx, "set time zone $$+02:00$$").await;
    assert_eq!(zone().as_deref(), Some("+02:00"));
    for (sql, needle) in [
        (
            "SET TIME ZONE LOCAL",
            "SET TIME ZONE LOCAL: icefloe does not take",
        ),
        (
            "SET TIME ZONE INTERVAL '05:30' HOUR TO MINUTE",
            "give the offset as a string",
        ),
        ("SET TIME ZONE", "a time zone as a string"),
        ("SET TIME ZONE 'UTC' 'x'", "'x'"),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
        assert_eq!(zone().as_deref(), Some("+02:00"), "{sql}");
    }
    fails(
        &ctx,
        "SET TIME ZONE 'Mars/Olympus'",
        ErrorKind::InvalidArgument,
        "SET TIME ZONE 'Mars/Olympus': not a time zone",
    )
    .await;
}
