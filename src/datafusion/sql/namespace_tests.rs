//! Namespace DDL (`CREATE SCHEMA`, `ALTER NAMESPACE`) on a SQLite catalog in a temporary
//! directory: what is stored, and what is refused (tester M64's faults).

use super::tests::{fails, ok, session};
use crate::catalog::Namespace;
use crate::ErrorKind;

/// Tester M64 fault 4: namespace locations were stored as typed, so a relative one meant
/// each engine's own working directory. A blank location is refused (Spark's
/// `INVALID_EMPTY_LOCATION`), a relative one stored as the `file:` URL of its absolute
/// path, as a table's `LOCATION` is, and a URL kept.
#[tokio::test]
async fn namespace_locations_are_stored_absolute_and_never_blank() {
    let (ctx, catalog, _dir) = session().await;
    let cwd = std::env::current_dir().expect("cwd");
    let location = |ns: &'static str| {
        let catalog = catalog.clone();
        async move {
            catalog
                .load_namespace_metadata(&Namespace::parse(ns))
                .await
                .expect("namespace")
                .get("location")
                .cloned()
        }
    };
    ok(&ctx, "CREATE SCHEMA rel LOCATION 'rel/ns'").await;
    assert_eq!(
        location("rel").await,
        Some(format!("file://{}/rel/ns", cwd.display()))
    );
    ok(&ctx, "CREATE SCHEMA s3 LOCATION 's3://bucket/a/'").await;
    assert_eq!(location("s3").await.as_deref(), Some("s3://bucket/a"));
    ok(&ctx, "ALTER NAMESPACE s3 SET LOCATION './x/../y'").await;
    assert_eq!(
        location("s3").await,
        Some(format!("file://{}/y", cwd.display()))
    );
    ok(&ctx, "ALTER NAMESPACE s3 SET LOCATION '/abs/z'").await;
    assert_eq!(location("s3").await.as_deref(), Some("file:///abs/z"));
    for (sql, needle) in [
        (
            "CREATE SCHEMA blank LOCATION ''",
            "CREATE SCHEMA cat.blank: LOCATION '': the location name cannot be empty",
        ),
        (
            "CREATE SCHEMA blank LOCATION '  '",
            "CREATE SCHEMA cat.blank: LOCATION '  ': the location name cannot be empty",
        ),
        (
            "ALTER NAMESPACE s3 SET LOCATION ''",
            "ALTER NAMESPACE cat.s3: LOCATION '': the location name cannot be empty",
        ),
        (
            "CREATE SCHEMA blank LOCATION 's3://bucket/a#1'",
            "namespace LOCATION 's3://bucket/a#1' holds '#'",
        ),
        (
            "ALTER NAMESPACE s3 SET LOCATION 's3://bucket/b?x=1'",
            "namespace LOCATION 's3://bucket/b?x=1' holds '?'",
        ),
        (
            "CREATE SCHEMA blank LOCATION 'az://container/wh'",
            "do not read az:// table locations",
        ),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
    }
    assert!(!catalog
        .namespace_exists(&Namespace::parse("blank"))
        .await
        .expect("exists"));
    assert_eq!(location("s3").await.as_deref(), Some("file:///abs/z"));
}

/// The column names of `sql`'s result.
async fn columns(ctx: &datafusion::prelude::SessionContext, sql: &str) -> Vec<String> {
    super::execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

/// The one-column rows of `sql`.
async fn names(ctx: &datafusion::prelude::SessionContext, sql: &str) -> Vec<String> {
    ok(ctx, sql)
        .await
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
}

/// Tester M64 fault 5: there was no `SHOW NAMESPACES|SCHEMAS|DATABASES` (DataFusion's
/// messages spoke of configuration variables). As Spark 3.5's: one column `namespace`,
/// the current catalog's top-level namespaces (also after `USE`) or `ns`'s children,
/// dotted and quoted as Spark quotes them, read from the catalog anew, filtered by
/// Spark's pattern; a missing `ns` and a schema that is no namespace are errors naming
/// them.
#[tokio::test]
async fn show_namespaces_lists_a_level_as_spark() {
    let (ctx, catalog, _dir) = session().await;
    for sql in [
        "CREATE SCHEMA ns",
        "CREATE DATABASE payroll",
        "CREATE NAMESPACE \"a.b\"",
        "CREATE SCHEMA \"a.my ns\"",
        "CREATE SCHEMA \"a.7\"",
    ] {
        ok(&ctx, sql).await;
    }
    // made by another engine: read anew, not from the session's lists
    catalog
        .create_namespace(&Namespace::parse("Payments"), &Default::default())
        .await
        .expect("namespace");
    assert_eq!(columns(&ctx, "SHOW NAMESPACES").await, ["namespace"]);
    let top = ["Payments", "a", "ns", "payroll"];
    for sql in [
        "SHOW NAMESPACES",
        "SHOW SCHEMAS",
        "SHOW DATABASES",
        "SHOW NAMESPACES IN cat",
        "SHOW NAMESPACES FROM cat '*'",
    ] {
        assert_eq!(names(&ctx, sql).await, top, "{sql}");
    }
    assert_eq!(
        names(&ctx, "SHOW NAMESPACES IN a").await,
        ["a.`7`", "a.`my ns`", "a.b"]
    );
    assert_eq!(
        names(&ctx, "SHOW SCHEMAS FROM cat.a LIKE 'a.b'").await,
        ["a.b"]
    );
    assert_eq!(
        names(&ctx, "SHOW NAMESPACES IN a.b").await,
        Vec::<String>::new()
    );
    // `*` and `|`, the rest a regular expression, the whole name, any case, trimmed
    // (only the whole pattern is trimmed: an alternative keeps its blanks)
    assert_eq!(
        names(&ctx, "SHOW DATABASES LIKE ' PAY* |n. '").await,
        ["ns"]
    );
    assert_eq!(
        names(&ctx, "SHOW DATABASES LIKE 'PAY*|n.'").await,
        ["Payments", "ns", "payroll"]
    );
    assert_eq!(
        names(&ctx, "SHOW SCHEMAS 'pay'").await,
        Vec::<String>::new()
    );
    assert_eq!(
        names(&ctx, "SHOW SCHEMAS 'pay%'").await,
        Vec::<String>::new()
    );
    // the current catalog's top level, whatever the current namespace
    ok(&ctx, "USE ns").await;
    assert_eq!(names(&ctx, "SHOW NAMESPACES").await, top);
    for (sql, kind, needle) in [
        (
            "SHOW NAMESPACES IN nope",
            ErrorKind::NotFound,
            "SHOW NAMESPACES IN cat.nope: namespace 'nope' in catalog 'cat'",
        ),
        (
            "SHOW SCHEMAS IN a.nope",
            ErrorKind::NotFound,
            "SHOW SCHEMAS IN cat.a.nope: namespace 'a.nope' in catalog 'cat'",
        ),
        (
            "SHOW NAMESPACES IN public",
            ErrorKind::InvalidArgument,
            "SHOW NAMESPACES IN cat.public: 'public' is not a namespace of an Iceberg catalog",
        ),
        (
            "SHOW NAMESPACES LIKE 'a' extra",
            ErrorKind::InvalidArgument,
            "SHOW NAMESPACES IN cat: expected end of statement",
        ),
    ] {
        fails(&ctx, sql, kind, needle).await;
    }
}

/// Tester M64 (8.): `SHOW TABLES [IN ns] LIKE 'pattern'` was refused ("SHOW TABLES IN not
/// supported", "SHOW TABLES FILTER not supported"). Spark's pattern now filters the
/// names, in the rows `SHOW TABLES` gives: of one namespace, and of every table before
/// any `USE`.
#[tokio::test]
async fn show_tables_takes_sparks_pattern() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE SCHEMA other").await;
    for t in ["ns.sam", "ns.sam1", "ns.suj", "ns.pay", "other.sam2"] {
        ok(&ctx, &format!("CREATE TABLE {t} (id INT)")).await;
    }
    let tables = |rows: Vec<Vec<String>>| -> Vec<String> {
        rows.into_iter()
            .map(|r| format!("{}.{}.{}", r[0], r[1], r[2]))
            .collect()
    };
    assert_eq!(
        columns(&ctx, "SHOW TABLES IN ns LIKE 'x'").await,
        ["table_catalog", "table_schema", "table_name", "table_type"]
    );
    assert_eq!(
        tables(ok(&ctx, "SHOW TABLES IN ns LIKE 'sam*|SUJ'").await),
        ["cat.ns.sam", "cat.ns.sam1", "cat.ns.suj"]
    );
    assert_eq!(
        tables(ok(&ctx, "SHOW TABLES FROM cat.ns 'p.y'").await),
        ["cat.ns.pay"]
    );
    // before any USE: every table, filtered
    let mut all = tables(ok(&ctx, "SHOW TABLES LIKE 'sam.*'").await);
    all.sort();
    assert_eq!(all, ["cat.ns.sam1", "cat.other.sam2"]);
    ok(&ctx, "USE ns").await;
    assert_eq!(
        tables(ok(&ctx, "SHOW TABLES LIKE 'sam'").await),
        ["cat.ns.sam"]
    );
    assert_eq!(
        tables(ok(&ctx, "SHOW TABLES 'nope*'").await),
        Vec::<String>::new()
    );
}

/// Tester M64 fault 6: `COMMENT ON NAMESPACE|DATABASE|SCHEMA ns IS …` was a raw parser
/// error. It sets the `comment` property (`DESCRIBE NAMESPACE`'s `Comment`), `NULL`
/// removes it; a schema that is no namespace (`public`, also for `ALTER NAMESPACE`,
/// which gave sqlparser's error) and a missing namespace are errors naming them.
#[tokio::test]
async fn comment_on_namespace_sets_the_comment_property() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    let comment = || {
        let catalog = catalog.clone();
        async move {
            catalog
                .load_namespace_metadata(&Namespace::parse("ns"))
                .await
                .expect("namespace")
                .get("comment")
                .cloned()
        }
    };
    ok(&ctx, "COMMENT ON NAMESPACE ns IS 'the ''main'' one'").await;
    assert_eq!(comment().await.as_deref(), Some("the 'main' one"));
    assert!(ok(&ctx, "DESCRIBE NAMESPACE ns")
        .await
        .contains(&vec!["Comment".to_string(), "the 'main' one".to_string()]));
    ok(&ctx, "COMMENT ON DATABASE cat.ns IS 'second'").await;
    assert_eq!(comment().await.as_deref(), Some("second"));
    ok(&ctx, "COMMENT ON SCHEMA ns IS NULL").await;
    assert_eq!(comment().await, None);
    // nothing to remove is no error
    ok(&ctx, "COMMENT ON SCHEMA ns IS NULL").await;
    for (sql, kind, needle) in [
        (
            "COMMENT ON NAMESPACE nope IS 'x'",
            ErrorKind::NotFound,
            "COMMENT ON NAMESPACE cat.nope: namespace 'nope' in catalog 'cat'",
        ),
        (
            "COMMENT ON DATABASE public IS 'x'",
            ErrorKind::InvalidArgument,
            "COMMENT ON DATABASE cat.public: 'public' is not a namespace of an Iceberg catalog",
        ),
        (
            "ALTER NAMESPACE public SET DBPROPERTIES ('a' = '1')",
            ErrorKind::InvalidArgument,
            "ALTER NAMESPACE cat.public: 'public' is not a namespace of an Iceberg catalog",
        ),
        (
            "COMMENT ON SCHEMA ns 'x'",
            ErrorKind::InvalidArgument,
            "COMMENT ON SCHEMA cat.ns: expected IS",
        ),
        (
            "COMMENT ON SCHEMA ns IS 'x' extra",
            ErrorKind::InvalidArgument,
            "COMMENT ON SCHEMA cat.ns: expected end of statement",
        ),
    ] {
        fails(&ctx, sql, kind, needle).await;
    }
    assert_eq!(comment().await, None);
}

/// Tester M64 (8.): messages that named the wrong thing. `UNSET DBPROPERTIES
/// ('location')` of a namespace storing none succeeded silently (the check read the
/// default location the SQL catalog shows; the key is now refused as reserved, as in
/// Spark), `('exists')` said the property was missing, the SQL catalog's marker;
/// a struct field in `COMMENT ON COLUMN`, a table name without a namespace before `USE`
/// and a session view were reported as missing namespaces or tables, or unsupported;
/// `CREATE DATABASE` of an existing one said `CREATE SCHEMA`.
#[tokio::test]
async fn namespace_and_column_ddl_name_what_is_wrong() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT, st STRUCT<a: INT>)").await;
    ok(&ctx, "CREATE VIEW ns.v AS SELECT 1 AS id").await;
    for (sql, needle) in [
        (
            "ALTER NAMESPACE ns UNSET DBPROPERTIES ('location')",
            "ALTER NAMESPACE cat.ns: 'location' is a reserved namespace property",
        ),
        (
            "ALTER SCHEMA ns UNSET DBPROPERTIES ('exists')",
            "ALTER SCHEMA cat.ns: namespace property 'exists' is reserved",
        ),
        (
            "ALTER DATABASE ns UNSET DBPROPERTIES IF EXISTS ('exists')",
            "ALTER DATABASE cat.ns: namespace property 'exists' is reserved",
        ),
        (
            "COMMENT ON COLUMN ns.t.st.a IS 'x'",
            "COMMENT ON COLUMN ns.t.st.a: 'st.a' is a field path of table ns.t, and COMMENT \
             ON COLUMN sets top-level columns' docs only; run ALTER TABLE ns.t ALTER COLUMN \
             st.a COMMENT '…'",
        ),
        (
            "COMMENT ON COLUMN t.id IS 'x'",
            "COMMENT ON COLUMN t.id: 'public' is a schema of this session, not a namespace \
             of Iceberg catalog 'cat', and holds no table 't'; name the table's namespace \
             (COMMENT ON COLUMN ns.t.column) or make one current (USE ns)",
        ),
        (
            "COMMENT ON COLUMN ns.v.id IS 'x'",
            "COMMENT ON COLUMN cat.ns.v: cat.ns.v is a view of this session, not a table",
        ),
        (
            "ALTER TABLE ns.v ALTER COLUMN id COMMENT 'x'",
            "ALTER TABLE cat.ns.v: cat.ns.v is a view of this session, not a table",
        ),
        (
            "ALTER TABLE ns.v RENAME TO ns.w",
            "ALTER TABLE cat.ns.v: cat.ns.v is a view of this session, not a table",
        ),
        (
            "COMMENT ON TABLE ns.v IS 'x'",
            "COMMENT ON TABLE cat.ns.v: cat.ns.v is a view of this session, not a table",
        ),
        (
            "CREATE DATABASE ns",
            "CREATE DATABASE cat.ns: namespace 'ns' already exists",
        ),
        (
            "CREATE NAMESPACE ns",
            "CREATE NAMESPACE cat.ns: namespace 'ns' already exists",
        ),
        (
            "DROP DATABASE nope",
            "DROP DATABASE cat.nope: namespace 'nope' in catalog 'cat'",
        ),
    ] {
        match super::tests::run(&ctx, sql).await {
            Ok(_) => panic!("{sql}: succeeded"),
            Err(e) => assert!(e.to_string().contains(needle), "{sql}: {e}"),
        }
    }
    // after USE, the two-part name is the current namespace's table
    ok(&ctx, "USE ns").await;
    ok(&ctx, "COMMENT ON COLUMN t.id IS 'the id'").await;
    let table = catalog
        .load_table(&super::tests::ident("ns.t"))
        .await
        .expect("table");
    let schema = table.metadata().current_schema();
    assert_eq!(
        schema
            .field_by_name("id")
            .and_then(|f| f.doc.clone())
            .as_deref(),
        Some("the id")
    );
}

/// Tester W67 F12: a quoted name that leaves a namespace level empty once split at its
/// '.'s is refused naming the name as typed (`CREATE SCHEMA ".."` said "a namespace
/// level cannot be empty", `CREATE TABLE ns."..".t` "namespace 'ns...' does not exist").
#[tokio::test]
async fn names_leaving_a_namespace_level_empty_are_refused_as_typed() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    for (sql, needle) in [
        (
            "CREATE SCHEMA \"..\"",
            "CREATE SCHEMA \"..\": \"..\" names no namespace: a '.' in a name, quoted or \
             not, separates namespace levels, and \"..\" leaves a level empty",
        ),
        (
            "CREATE DATABASE IF NOT EXISTS cat.\"a.\"",
            "CREATE DATABASE cat.\"a.\": \"a.\" names no namespace",
        ),
        (
            "CREATE TABLE ns.\"..\".t (id INT)",
            "CREATE TABLE ns.\"..\".t: \"..\" names no namespace: a '.' in a name, quoted \
             or not, separates namespace levels, and \"..\" leaves a level empty",
        ),
        (
            "CREATE TABLE \"ns.\".t AS SELECT 1 AS id",
            "CREATE TABLE \"ns.\".t: \"ns.\" names no namespace",
        ),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
    }
    // a '.' between two names is two levels, as before
    ok(&ctx, "CREATE SCHEMA \"ns.a\"").await;
    ok(&ctx, "CREATE TABLE ns.a.t (id INT)").await;
}

/// Tester T69 F9: the statements that name a table or namespace in their messages show a
/// name part that is empty or holds `.`, `"`, whitespace or a control character quoted as
/// typed (`DROP TABLE ns.".."` said "DROP TABLE cat.ns...", which `ns."."."."` prints as
/// too); ordinary names print as before.
#[tokio::test]
async fn statements_name_a_part_that_needs_quotes_quoted() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    for (sql, prefix) in [
        ("DROP TABLE ns.\"..\"", "DROP TABLE cat.ns.\"..\": "),
        ("DROP TABLE ns.\"a b\"", "DROP TABLE cat.ns.\"a b\": "),
        ("DROP TABLE ns.\"x\"\"y\"", "DROP TABLE cat.ns.\"x\"\"y\": "),
        ("DROP TABLE ns.\"..\" x", "DROP TABLE ns.\"..\": "),
        ("DROP SCHEMA \"..\"", "DROP SCHEMA cat.\"..\": "),
        ("DROP SCHEMA cat.\"a.\"", "DROP SCHEMA cat.\"a.\": "),
        ("CREATE TABLE ns.\"\" (a INT)", "CREATE TABLE cat.ns.\"\": "),
        (
            "CREATE TABLE ns.\"..\" (a INT)",
            "CREATE TABLE cat.ns.\"..\": ",
        ),
        ("USE \"..\"", "USE \"..\": "),
        (
            "COMMENT ON COLUMN ns.\"t.u\" IS 'c'",
            "COMMENT ON COLUMN ns.\"t.u\": ",
        ),
        // ordinary names, and a dotted namespace typed unquoted, as before
        ("DROP TABLE ns.missing", "DROP TABLE cat.ns.missing: "),
        ("DROP SCHEMA missing", "DROP SCHEMA cat.missing: "),
        ("DROP TABLE a.b.t", "DROP TABLE cat.a.b.t: "),
    ] {
        let e = super::tests::run(&ctx, sql).await.expect_err(sql);
        assert!(e.message().starts_with(prefix), "{sql}: {e}");
    }
}

/// How messages show a name part: quoted, quotes doubled, only when it needs quotes.
#[test]
fn message_name_parts_need_quotes_only_when_ambiguous() {
    use super::resolve::{message_name, message_name_part};
    for (part, shown) in [
        ("ns", "ns"),
        ("T1", "T1"),
        ("a-b", "a-b"),
        ("", "\"\""),
        ("..", "\"..\""),
        ("a.b", "\"a.b\""),
        ("x\"y", "\"x\"\"y\""),
        ("a b", "\"a b\""),
        ("a\tb", "\"a\tb\""),
        ("a\u{1}", "\"a\u{1}\""),
    ] {
        assert_eq!(message_name_part(part), shown, "{part:?}");
    }
    assert_eq!(message_name(["cat", "ns", ".."]), "cat.ns.\"..\"");
}
