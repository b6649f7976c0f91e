//! Property lists of `CREATE|ALTER TABLE` and `CREATE|ALTER NAMESPACE` (module
//! `property_lists`): Spark's grammar, its reserved keys and its duplicate checks, on a
//! SQLite catalog in a temporary directory (tester M64's faults 3 and 7).

use std::collections::HashMap;
use std::sync::Arc;

use super::tests::{fails, ident, ok, session};
use crate::catalog::{Catalog, Namespace};
use crate::ErrorKind;

async fn table_properties(catalog: &Arc<dyn Catalog>, name: &str) -> HashMap<String, String> {
    catalog
        .load_table(&ident(name))
        .await
        .expect("table")
        .metadata()
        .properties
        .clone()
}

async fn namespace_properties(catalog: &Arc<dyn Catalog>, ns: &str) -> HashMap<String, String> {
    catalog
        .load_namespace_metadata(&Namespace::parse(ns))
        .await
        .expect("namespace")
}

/// Fault 7: unquoted dotted keys, booleans and decimals are Spark's property syntax, in
/// every statement that takes a property list (its one parser).
#[tokio::test]
async fn property_lists_take_sparks_keys_and_values() {
    let (ctx, catalog, _dir) = session().await;
    ok(
        &ctx,
        "CREATE SCHEMA ns WITH DBPROPERTIES (a.b = 'x', 'q' 'no equals', Flag = TRUE)",
    )
    .await;
    let p = namespace_properties(&catalog, "ns").await;
    assert_eq!(p.get("a.b").map(String::as_str), Some("x"));
    assert_eq!(p.get("q").map(String::as_str), Some("no equals"));
    assert_eq!(p.get("Flag").map(String::as_str), Some("true"));
    ok(
        &ctx,
        "ALTER NAMESPACE ns SET DBPROPERTIES (a.b = 1.5, c = false)",
    )
    .await;
    ok(&ctx, "ALTER NAMESPACE ns UNSET DBPROPERTIES (Flag, 'q')").await;
    let p = namespace_properties(&catalog, "ns").await;
    assert_eq!(p.get("a.b").map(String::as_str), Some("1.5"));
    assert_eq!(p.get("c").map(String::as_str), Some("false"));
    assert!(!p.contains_key("Flag") && !p.contains_key("q"), "{p:?}");
    ok(
        &ctx,
        "CREATE TABLE ns.t (a INT) TBLPROPERTIES (write.delete.mode = 'merge-on-read', \
         `x`.y = true, 'n' = 10)",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.t SET TBLPROPERTIES (write.update.mode = 'merge-on-read', d = 1.5)",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t UNSET TBLPROPERTIES (n)").await;
    let p = table_properties(&catalog, "ns.t").await;
    for (k, v) in [
        ("write.delete.mode", "merge-on-read"),
        ("write.update.mode", "merge-on-read"),
        ("x.y", "true"),
        ("d", "1.5"),
    ] {
        assert_eq!(p.get(k).map(String::as_str), Some(v), "{k}: {p:?}");
    }
    assert!(!p.contains_key("n"), "{p:?}");
}

/// Fault 7: what Spark refuses (a key twice, a clause twice, a key without a value) is
/// refused naming the statement and the key, and changes nothing.
#[tokio::test]
async fn property_lists_refuse_duplicates_naming_the_statement() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns WITH DBPROPERTIES ('k' = 'v')").await;
    ok(&ctx, "CREATE TABLE ns.t (a INT)").await;
    for (sql, needle) in [
        (
            "ALTER NAMESPACE ns SET DBPROPERTIES ('dup' = '1', dup = '2')",
            "ALTER NAMESPACE cat.ns: found duplicate keys 'dup'",
        ),
        (
            "ALTER NAMESPACE ns UNSET DBPROPERTIES ('k', k)",
            "ALTER NAMESPACE cat.ns: found duplicate keys 'k'",
        ),
        (
            "CREATE SCHEMA s4 COMMENT 'x' COMMENT 'y'",
            "CREATE SCHEMA cat.s4: found duplicate clauses: COMMENT",
        ),
        (
            "CREATE SCHEMA s4 LOCATION '/a' LOCATION '/b'",
            "CREATE SCHEMA cat.s4: found duplicate clauses: LOCATION",
        ),
        (
            "CREATE SCHEMA s4 WITH DBPROPERTIES ('a' = '1') WITH PROPERTIES ('b' = '2')",
            "CREATE SCHEMA cat.s4: found duplicate clauses: WITH DBPROPERTIES|PROPERTIES",
        ),
        (
            "CREATE SCHEMA s5 WITH DBPROPERTIES (a.b = 'x', a.b = 'y')",
            "CREATE SCHEMA cat.s5: found duplicate keys 'a.b'",
        ),
        (
            "CREATE SCHEMA s5 WITH DBPROPERTIES (a.b)",
            "CREATE SCHEMA cat.s5: values must be specified for key(s): 'a.b'",
        ),
        (
            "CREATE SCHEMA s5 WITH DBPROPERTIES (a. = 'x')",
            "CREATE SCHEMA cat.s5: expected a name after 'a.'",
        ),
        (
            "CREATE SCHEMA s5 WITH DBPROPERTIES ('a' = NULL)",
            "CREATE SCHEMA cat.s5: expected a value for 'a' (a quoted string, a number, true \
             or false), found 'NULL'",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('k' = '1', 'k' = '2')",
            "ALTER TABLE cat.ns.t SET TBLPROPERTIES: found duplicate keys 'k'",
        ),
        (
            "ALTER TABLE ns.t UNSET TBLPROPERTIES IF EXISTS (k, 'k')",
            "ALTER TABLE cat.ns.t UNSET TBLPROPERTIES: found duplicate keys 'k'",
        ),
        (
            "CREATE TABLE ns.u (a INT) COMMENT 'x' COMMENT 'y'",
            "found duplicate clauses: COMMENT",
        ),
        (
            "CREATE TABLE ns.u (a INT) LOCATION '/a' LOCATION '/b'",
            "found duplicate clauses: LOCATION",
        ),
        (
            "CREATE TABLE ns.u (a INT) TBLPROPERTIES ('a' = '1') TBLPROPERTIES ('b' = '2')",
            "found duplicate clauses: TBLPROPERTIES",
        ),
        (
            "CREATE TABLE ns.u (a INT) TBLPROPERTIES (k = '1', k = '2')",
            "found duplicate keys 'k'",
        ),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
    }
    for ns in ["s4", "s5"] {
        assert!(!catalog
            .namespace_exists(&Namespace::parse(ns))
            .await
            .expect("exists"));
    }
    assert!(!catalog.table_exists(&ident("ns.u")).await.expect("exists"));
    let p = namespace_properties(&catalog, "ns").await;
    assert_eq!(p.get("k").map(String::as_str), Some("v"));
    assert!(!p.contains_key("dup"), "{p:?}");
}

/// Fault 3: the reserved keys are refused in property lists with Spark's message naming
/// the clause to use, and a `COMMENT` clause wins over a `comment` property.
#[tokio::test]
async fn reserved_properties_are_refused_and_clauses_win() {
    let (ctx, catalog, _dir) = session().await;
    ok(
        &ctx,
        "CREATE SCHEMA s1 COMMENT 'from clause' LOCATION '/tmp/from-clause' \
         WITH DBPROPERTIES ('comment' = 'from props')",
    )
    .await;
    let p = namespace_properties(&catalog, "s1").await;
    assert_eq!(p.get("comment").map(String::as_str), Some("from clause"));
    assert_eq!(
        p.get("location").map(String::as_str),
        Some("file:///tmp/from-clause")
    );
    // a comment property alone is the comment (Spark allows it)
    ok(
        &ctx,
        "ALTER NAMESPACE s1 SET DBPROPERTIES ('comment' = 'new')",
    )
    .await;
    assert_eq!(
        namespace_properties(&catalog, "s1")
            .await
            .get("comment")
            .map(String::as_str),
        Some("new")
    );
    ok(
        &ctx,
        "CREATE TABLE s1.tp (a INT) TBLPROPERTIES ('comment' = 'from props') \
         COMMENT 'from clause'",
    )
    .await;
    assert_eq!(
        table_properties(&catalog, "s1.tp")
            .await
            .get("comment")
            .map(String::as_str),
        Some("from clause")
    );
    let location = catalog
        .load_table(&ident("s1.tp"))
        .await
        .expect("table")
        .metadata()
        .location
        .clone();
    for (sql, needle) in [
        (
            "CREATE SCHEMA s2 WITH DBPROPERTIES ('location' = '/tmp/from-props')",
            "CREATE SCHEMA cat.s2: 'location' is a reserved namespace property, please use \
             the LOCATION clause to specify it",
        ),
        (
            "CREATE SCHEMA s2 WITH DBPROPERTIES (owner = 'mallory')",
            "CREATE SCHEMA cat.s2: 'owner' is a reserved namespace property, it will be set \
             to the current user",
        ),
        (
            "ALTER NAMESPACE s1 SET DBPROPERTIES ('location' = '/tmp/x')",
            "ALTER NAMESPACE cat.s1: 'location' is a reserved namespace property",
        ),
        (
            "ALTER NAMESPACE s1 UNSET DBPROPERTIES ('owner')",
            "ALTER NAMESPACE cat.s1: 'owner' is a reserved namespace property",
        ),
        (
            "CREATE TABLE s1.u (a INT) TBLPROPERTIES ('location' = '/tmp/elsewhere')",
            "'location' is a reserved table property, please use the LOCATION clause to \
             specify it",
        ),
        (
            "ALTER TABLE s1.tp SET TBLPROPERTIES ('location' = '/tmp/elsewhere')",
            "ALTER TABLE cat.s1.tp SET TBLPROPERTIES: 'location' is a reserved table property, \
             please use the LOCATION clause",
        ),
        (
            "ALTER TABLE s1.tp SET TBLPROPERTIES ('provider' = 'parquet')",
            "'provider' is a reserved table property, please use the USING clause to \
             specify it",
        ),
        (
            "ALTER TABLE s1.tp SET TBLPROPERTIES ('a' = '1', 'owner' = 'mallory')",
            "'owner' is a reserved table property, it will be set to the current user",
        ),
        (
            "ALTER TABLE s1.tp SET TBLPROPERTIES (external = true)",
            "'external' is a reserved table property, please use CREATE EXTERNAL TABLE",
        ),
        (
            "ALTER TABLE s1.tp UNSET TBLPROPERTIES IF EXISTS ('is_managed_location')",
            "'is_managed_location' is a reserved table property, please remove it from the \
             TBLPROPERTIES list",
        ),
        (
            "REPLACE TABLE s1.tp (a INT) TBLPROPERTIES ('owner' = 'mallory')",
            "'owner' is a reserved table property",
        ),
    ] {
        fails(&ctx, sql, ErrorKind::InvalidArgument, needle).await;
    }
    assert!(!catalog
        .namespace_exists(&Namespace::parse("s2"))
        .await
        .expect("exists"));
    assert!(!catalog.table_exists(&ident("s1.u")).await.expect("exists"));
    let p = table_properties(&catalog, "s1.tp").await;
    for k in ["location", "provider", "owner", "a", "external"] {
        assert!(!p.contains_key(k), "{k}: {p:?}");
    }
    let m = catalog.load_table(&ident("s1.tp")).await.expect("table");
    assert_eq!(m.metadata().location, location);
    let p = namespace_properties(&catalog, "s1").await;
    assert_eq!(
        p.get("location").map(String::as_str),
        Some("file:///tmp/from-clause")
    );
}

/// Tester T69 F6: a number with a type suffix as a property value (`10L`, `5Y`, `2s`,
/// `1.5D`, `2F`, `1.0BD`, any case) is refused naming the key and the value as written,
/// in every property list, and changes nothing (`10L` was stored as `10`, `5Y` failed
/// with "expected ',', found 'Y'"); plain numbers, strings and booleans are kept.
#[tokio::test]
async fn suffixed_numbers_are_no_property_values() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (a INT)").await;
    for value in [
        "10L", "10l", "5Y", "2s", "1.5D", "2F", "1.0BD", "1e3d", "7bd",
    ] {
        let refused =
            format!("property value {value} of 'p' is not a plain number, string or boolean");
        for sql in [
            format!("CREATE TABLE ns.u (a INT) TBLPROPERTIES ('k' = 1, 'p' = {value})"),
            format!("ALTER TABLE ns.t SET TBLPROPERTIES ('p' = {value}, 'k' = 1)"),
            format!("ALTER NAMESPACE ns SET DBPROPERTIES (p = {value})"),
        ] {
            fails(&ctx, &sql, ErrorKind::InvalidArgument, &refused).await;
        }
    }
    assert!(!catalog.table_exists(&ident("ns.u")).await.expect("exists"));
    assert!(!table_properties(&catalog, "ns.t").await.contains_key("k"));
    ok(
        &ctx,
        "ALTER TABLE ns.t SET TBLPROPERTIES ('p1' = 10, 'p2' = 1.5, 'p3' = 1e3, 'p4' = '10L', \
         'p5' = true)",
    )
    .await;
    let p = table_properties(&catalog, "ns.t").await;
    for (k, v) in [
        ("p1", "10"),
        ("p2", "1.5"),
        ("p3", "1e3"),
        ("p4", "10L"),
        ("p5", "true"),
    ] {
        assert_eq!(p.get(k).map(String::as_str), Some(v), "{k}: {p:?}");
    }
}
