//! `SHOW TBLPROPERTIES` and `SHOW CREATE TABLE` on a SQLite catalog in a temporary
//! directory.

use std::sync::Arc;

use super::tests::{fails, ident, ok, session, set_table_properties};
use crate::catalog::Catalog;
use crate::ErrorKind;

async fn current_snapshot_id(catalog: &Arc<dyn Catalog>, name: &str) -> String {
    catalog
        .load_table(&ident(name))
        .await
        .expect("table")
        .metadata()
        .current_snapshot_id
        .expect("a snapshot")
        .to_string()
}

fn pairs(rows: &[(&str, &str)]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|(k, v)| vec![k.to_string(), v.to_string()])
        .collect()
}

#[tokio::test]
async fn show_tblproperties_lists_what_spark_lists_sorted_by_key() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id BIGINT NOT NULL, s STRING) COMMENT 'a comment' \
         TBLPROPERTIES ('write.delete.mode'='merge-on-read', \
         's3.secret-access-key'='hunter2', 'write.metadata.metrics.column.s'='full', \
         'a.first'='1')",
    )
    .await;
    // as Spark sets it (a property list refuses the reserved key)
    set_table_properties(&catalog, "ns.t", &[("owner", "me")]).await;
    // no snapshot yet; comment and owner are Spark's reserved keys (DESCRIBE's), not shown
    assert_eq!(
        ok(&ctx, "SHOW TBLPROPERTIES ns.t").await,
        pairs(&[
            ("a.first", "1"),
            ("current-snapshot-id", "none"),
            ("format", "iceberg/parquet"),
            ("format-version", "2"),
            ("s3.secret-access-key", "***"),
            ("write.delete.mode", "merge-on-read"),
            ("write.metadata.metrics.column.s", "full"),
        ])
    );

    ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')").await;
    ok(
        &ctx,
        "ALTER TABLE ns.t WRITE ORDERED BY id DESC NULLS LAST, bucket(4, s), truncate(2, s)",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.t SET IDENTIFIER FIELDS id").await;
    let snapshot = current_snapshot_id(&catalog, "ns.t").await;
    assert_eq!(
        ok(&ctx, "show tblproperties cat.ns.t").await,
        pairs(&[
            ("a.first", "1"),
            ("current-snapshot-id", &snapshot),
            ("format", "iceberg/parquet"),
            ("format-version", "2"),
            ("identifier-fields", "[id]"),
            ("s3.secret-access-key", "***"),
            (
                "sort-order",
                "id DESC NULLS LAST, bucket(4, s) ASC NULLS FIRST, truncate(s, 2) ASC NULLS FIRST",
            ),
            ("write.delete.mode", "merge-on-read"),
            ("write.distribution-mode", "range"),
            ("write.metadata.metrics.column.s", "full"),
        ])
    );
}

#[tokio::test]
async fn show_tblproperties_of_one_key() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.t (id INT) TBLPROPERTIES ('format-version'='3', \
         'write.delete.mode'='merge-on-read')",
    )
    .await;
    let row = |k: &str, v: &str| vec![vec![k.to_string(), v.to_string()]];
    for sql in [
        "SHOW TBLPROPERTIES ns.t ('write.delete.mode')",
        "SHOW TBLPROPERTIES ns.t (write.delete.mode)",
    ] {
        assert_eq!(
            ok(&ctx, sql).await,
            row("write.delete.mode", "merge-on-read"),
            "{sql}"
        );
    }
    assert_eq!(
        ok(&ctx, "SHOW TBLPROPERTIES ns.t ('format-version')").await,
        row("format-version", "3")
    );
    // as Spark: a row saying the table does not have it (reserved keys too)
    for key in ["nope", "location"] {
        assert_eq!(
            ok(&ctx, &format!("SHOW TBLPROPERTIES ns.t ('{key}')")).await,
            row(
                key,
                &format!("Table cat.ns.t does not have property: {key}")
            ),
        );
    }
}

#[tokio::test]
async fn show_tblproperties_refusals() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.t (id INT)").await;
    ok(&ctx, "CREATE TABLE public.mem (id INT)").await;
    fails(
        &ctx,
        "SHOW TBLPROPERTIES public.mem",
        ErrorKind::Unsupported,
        "SHOW TBLPROPERTIES public.mem: not an Iceberg table",
    )
    .await;
    fails(
        &ctx,
        "SHOW TBLPROPERTIES ns.missing",
        ErrorKind::NotFound,
        "table 'cat.ns.missing' not found",
    )
    .await;
    fails(
        &ctx,
        "SHOW TBLPROPERTIES ns.t ('a', 'b')",
        ErrorKind::InvalidArgument,
        "SHOW TBLPROPERTIES: expected end of statement",
    )
    .await;
    fails(
        &ctx,
        "SHOW TBLPROPERTIES ns.t 'a'",
        ErrorKind::InvalidArgument,
        "SHOW TBLPROPERTIES: expected end of statement",
    )
    .await;
}

/// What `SHOW CREATE TABLE` must reproduce of a table, without ids: the current schema
/// (names, types, requiredness, docs, defaults), identifier fields by name, the default
/// spec's transforms with their source names (and field names when `names`), the sort
/// order by source names, location, format version and properties.
fn shape(m: &crate::spec::TableMetadata, names: bool) -> serde_json::Value {
    use serde_json::{json, Value};
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                for k in [
                    "id",
                    "element-id",
                    "key-id",
                    "value-id",
                    "schema-id",
                    "identifier-field-ids",
                ] {
                    o.remove(k);
                }
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let schema = m.current_schema();
    let name = |id: i32| super::show_properties::column_name(schema, id).expect("a column");
    let mut fields = serde_json::to_value(schema).expect("schema JSON");
    strip(&mut fields);
    let spec: Vec<Value> = m
        .default_partition_spec()
        .expect("spec")
        .fields
        .iter()
        .map(|f| {
            let field = if names { f.name.clone() } else { String::new() };
            json!([f.transform.to_string(), name(f.source_id), field])
        })
        .collect();
    let order: Vec<Value> = m
        .sort_orders
        .iter()
        .find(|o| o.order_id == m.default_sort_order_id)
        .map(|o| {
            o.fields
                .iter()
                .map(|f| {
                    json!([
                        f.transform.to_string(),
                        name(f.source_id),
                        f.direction,
                        f.null_order
                    ])
                })
                .collect()
        })
        .unwrap_or_default();
    let identifier: Vec<String> = schema
        .identifier_field_ids
        .iter()
        .map(|id| name(*id))
        .collect();
    json!({
        "schema": fields,
        "identifier": identifier,
        "spec": spec,
        "order": order,
        "location": m.location,
        "format_version": m.format_version as i32,
        "properties": m.properties.iter().collect::<std::collections::BTreeMap<_, _>>(),
    })
}

/// `SHOW CREATE TABLE name`'s statement text.
async fn create_statement(ctx: &datafusion::prelude::SessionContext, name: &str) -> String {
    let rows = ok(ctx, &format!("SHOW CREATE TABLE {name}")).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].len(), 1, "{rows:?}");
    rows[0][0].clone()
}

/// Run `statement` (statements separated by `;` and a line break, as `SHOW CREATE TABLE`
/// writes them) in a new session on another catalog, and return the table `ns.<table>`
/// it made.
async fn recreate(statement: &str, table: &str) -> crate::spec::TableMetadata {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    for s in statement.split(";\n") {
        ok(&ctx, s).await;
    }
    catalog
        .load_table(&ident(&format!("ns.{table}")))
        .await
        .expect("the new table")
        .metadata()
        .clone()
}

#[tokio::test]
async fn show_create_table_round_trips() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.\"Rich T\" (\n\
           id BIGINT NOT NULL COMMENT 'the id',\n\
           \"Mixed Case\" STRING,\n\
           \"order\" INT COMMENT 'it''s a keyword',\n\
           s STRUCT<a INT, \"B\" STRING, bin BYTEA, inner STRUCT<x DOUBLE>>,\n\
           l ARRAY<STRUCT<q DOUBLE>>,\n\
           m MAP<INT, ARRAY<DATE>>,\n\
           ts TIMESTAMP, tz TIMESTAMPTZ, tsn TIMESTAMP(9), tzn TIMESTAMP(9) WITH TIME ZONE,\n\
           u UUID, b BINARY, dec DECIMAL(10, 2), f FLOAT, d DOUBLE, t TIME, flag BOOLEAN,\n\
           n INT DEFAULT 5, dd DATE DEFAULT '2024-02-29',\n\
           tzd TIMESTAMPTZ DEFAULT '2024-01-01T10:00:00.000001+00:00',\n\
           td TIME DEFAULT '10:11:12.5', bd BINARY DEFAULT X'00ff',\n\
           md DECIMAL(9, 2) DEFAULT 12.5, fd DOUBLE DEFAULT -1.25, flagd BOOLEAN DEFAULT true,\n\
           ud UUID DEFAULT 'f79c3e09-677c-4bbd-a479-3f349cb785e7',\n\
           sd STRING NOT NULL DEFAULT 'it''s')\n\
         USING iceberg\n\
         PARTITIONED BY (bucket(16, id), truncate(4, \"Mixed Case\"), days(ts), months(tz), \
         flag, void(f), s.a)\n\
         COMMENT 'a ''quoted'' comment'\n\
         TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read', \
         'write.distribution-mode'='hash')",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.\"Rich T\" WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY \
         id DESC NULLS LAST, bucket(4, \"Mixed Case\"), truncate(2, s.\"B\") ASC NULLS LAST",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.\"Rich T\" SET IDENTIFIER FIELDS id").await;
    let source = catalog
        .load_table(&ident("ns.Rich T"))
        .await
        .expect("table")
        .metadata()
        .clone();
    let statement = create_statement(&ctx, "ns.\"Rich T\"").await;
    assert!(
        statement.starts_with(
            "CREATE TABLE ns.\"Rich T\" (\n  id BIGINT NOT NULL COMMENT 'the id',\n  \
             \"Mixed Case\" STRING,\n  \"order\" INT COMMENT 'it''s a keyword',\n  \
             s STRUCT<a INT, \"B\" STRING, bin BYTEA, \"inner\" STRUCT<x DOUBLE>>,\n"
        ),
        "{statement}"
    );
    for part in [
        "\n  n INT DEFAULT 5,\n",
        "\n  dd DATE DEFAULT '2024-02-29',\n",
        "\n  bd BINARY DEFAULT X'00ff',\n",
        "\n  sd STRING NOT NULL DEFAULT 'it''s')\nUSING iceberg\n\
         PARTITIONED BY (bucket(16, id), truncate(4, \"Mixed Case\"), days(ts), months(tz), \
         flag, void(f), s.a)\nCOMMENT 'a ''quoted'' comment'\nLOCATION '",
        "\nTBLPROPERTIES (\n  'format-version' = '3',\n  \
         'write.delete.mode' = 'merge-on-read',\n  'write.distribution-mode' = 'hash');\n\
         ALTER TABLE ns.\"Rich T\" WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY \
         id DESC NULLS LAST, bucket(4, \"Mixed Case\") ASC NULLS FIRST, \
         truncate(2, s.\"B\") ASC NULLS LAST;\n\
         ALTER TABLE ns.\"Rich T\" SET IDENTIFIER FIELDS id",
    ] {
        assert!(statement.contains(part), "{part}\nnot in\n{statement}");
    }
    let copy = recreate(&statement, "Rich T").await;
    assert_eq!(shape(&copy, true), shape(&source, true), "{statement}");
}

/// Timestamps of either zone and precision below the top level (CREATE TABLE reads them
/// at any depth) are written as declared and read back to the same types; a nested
/// `uuid`, which CREATE TABLE cannot declare, is refused naming the field.
#[tokio::test]
async fn show_create_table_round_trips_nested_timestamps() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.sc2 (id INT, ts STRUCT<tz: TIMESTAMPTZ, n TIMESTAMP(9), \
         zn TIMESTAMP(9) WITH TIME ZONE, plain TIMESTAMP>, \
         l ARRAY<TIMESTAMP WITH TIME ZONE>, m MAP<STRING, TIMESTAMP(9)>) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    let source = catalog
        .load_table(&ident("ns.sc2"))
        .await
        .expect("table")
        .metadata()
        .clone();
    assert_eq!(
        source
            .current_schema()
            .columns()
            .iter()
            .map(|c| c.field_type.to_string())
            .collect::<Vec<_>>(),
        [
            "int",
            "struct<tz: timestamptz, n: timestamp_ns, zn: timestamptz_ns, plain: timestamp>",
            "list<timestamptz>",
            "map<string, timestamp_ns>"
        ]
    );
    let statement = create_statement(&ctx, "ns.sc2").await;
    assert!(
        statement.contains(
            "ts STRUCT<tz TIMESTAMP WITH TIME ZONE, n TIMESTAMP(9), \
             zn TIMESTAMP(9) WITH TIME ZONE, plain TIMESTAMP>,\n  \
             l ARRAY<TIMESTAMP WITH TIME ZONE>,\n  m MAP<STRING, TIMESTAMP(9)>)"
        ),
        "{statement}"
    );
    let copy = recreate(&statement, "sc2").await;
    assert_eq!(shape(&copy, true), shape(&source, true), "{statement}");

    ok(&ctx, "CREATE TABLE ns.u (id INT, s STRUCT<a INT>)").await;
    ok(&ctx, "ALTER TABLE ns.u ADD COLUMN s.u UUID").await;
    fails(
        &ctx,
        "SHOW CREATE TABLE ns.u",
        ErrorKind::Unsupported,
        "field 's.u' of type uuid: CREATE TABLE declares this type for top-level columns only",
    )
    .await;
}

#[tokio::test]
async fn show_create_table_of_an_evolved_table() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.e (id INT NOT NULL, s STRING, gone INT) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    ok(&ctx, "INSERT INTO ns.e VALUES (1, 'a', 2)").await;
    for sql in [
        "ALTER TABLE ns.e ADD COLUMN n INT DEFAULT 5",
        "ALTER TABLE ns.e ALTER COLUMN n SET DEFAULT 6",
        "ALTER TABLE ns.e ADD COLUMN o INT DEFAULT 7",
        "ALTER TABLE ns.e ALTER COLUMN o DROP DEFAULT",
        "ALTER TABLE ns.e DROP COLUMN gone",
        "ALTER TABLE ns.e RENAME COLUMN s TO name",
        "ALTER TABLE ns.e ALTER COLUMN id TYPE BIGINT",
        "ALTER TABLE ns.e ADD PARTITION FIELD bucket(8, id)",
        "ALTER TABLE ns.e WRITE ORDERED BY name",
    ] {
        ok(&ctx, sql).await;
    }
    let statement = create_statement(&ctx, "ns.e").await;
    let location = catalog
        .load_table(&ident("ns.e"))
        .await
        .expect("table")
        .metadata()
        .location
        .clone();
    // the write-default 6 (the new table has no rows from before n); o has none left
    assert_eq!(
        statement,
        format!(
            "CREATE TABLE ns.e (\n  id BIGINT NOT NULL,\n  name STRING,\n  \
             n INT DEFAULT 6,\n  o INT)\nUSING iceberg\nPARTITIONED BY (bucket(8, id))\n\
             LOCATION '{location}'\nTBLPROPERTIES (\n  'format-version' = '3',\n  \
             'write.distribution-mode' = 'range');\n\
             ALTER TABLE ns.e WRITE ORDERED BY name ASC NULLS FIRST"
        )
    );
    let copy = recreate(&statement, "e").await;
    let field = |m: &crate::spec::TableMetadata, name: &str| {
        m.current_schema()
            .field_by_name(name)
            .cloned()
            .expect("field")
    };
    assert_eq!(field(&copy, "n").write_default, Some(serde_json::json!(6)));
    assert_eq!(field(&copy, "o").write_default, None);
    let spec = &copy.default_partition_spec().expect("spec").fields;
    assert_eq!(spec.len(), 1);
    assert_eq!(spec[0].transform, crate::spec::Transform::Bucket(8));
}

#[tokio::test]
async fn show_create_table_refuses_what_create_table_cannot_declare() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.r (id INT, s STRUCT<a INT>, l ARRAY<INT>) \
         TBLPROPERTIES ('format-version'='3')",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.r ADD COLUMN q STRUCT<b INT>").await;
    ok(
        &ctx,
        "ALTER TABLE ns.r ADD COLUMN q.c INT NOT NULL DEFAULT 1",
    )
    .await;
    fails(
        &ctx,
        "SHOW CREATE TABLE ns.r",
        ErrorKind::Unsupported,
        "SHOW CREATE TABLE cat.ns.r: field 'q.c' has a default value: CREATE TABLE \
         declares that for top-level columns only",
    )
    .await;
    fails(
        &ctx,
        "SHOW CREATE TABLE ns.nope",
        ErrorKind::NotFound,
        "table 'cat.ns.nope' not found",
    )
    .await;
    // not an Iceberg table: DataFusion's SHOW CREATE TABLE
    ok(&ctx, "CREATE TABLE public.mem (id INT)").await;
    let rows = ok(&ctx, "SHOW CREATE TABLE public.mem").await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][..3], ["cat", "public", "mem"]);
}

#[tokio::test]
async fn show_create_table_declares_struct_fields_not_null_and_comments() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    // Spark's syntax, which DataFusion's parser refuses, at any depth and in a map's
    // value and a list's element
    ok(
        &ctx,
        "CREATE TABLE ns.n (id INT, s STRUCT<a: INT NOT NULL COMMENT 'the a', \
         b: STRUCT<x: DECIMAL(10, 2) NOT NULL, y: STRING COMMENT 'why'>>, \
         m MAP<STRING, STRUCT<k: BIGINT NOT NULL>>, \
         l ARRAY<STRUCT<e: INT COMMENT 'e'>> NOT NULL COMMENT 'the l')",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.n ADD COLUMN t STRUCT<u: INT NOT NULL COMMENT 'the u'> COMMENT 'the t'",
    )
    .await;
    let statement = create_statement(&ctx, "ns.n").await;
    let columns = "CREATE TABLE ns.n (\n  id INT,\n  \
         s STRUCT<a INT NOT NULL COMMENT 'the a', b STRUCT<x DECIMAL(10, 2) NOT NULL, \
         y STRING COMMENT 'why'>>,\n  \
         m MAP<STRING, STRUCT<k BIGINT NOT NULL>>,\n  \
         l ARRAY<STRUCT<e INT COMMENT 'e'>> NOT NULL COMMENT 'the l',\n  \
         t STRUCT<u INT NOT NULL COMMENT 'the u'> COMMENT 'the t')\nUSING iceberg";
    assert!(statement.starts_with(columns), "{statement}");
    let original = catalog
        .load_table(&ident("ns.n"))
        .await
        .expect("table")
        .metadata()
        .clone();
    let copy = recreate(&statement, "n").await;
    // the same fields, requiredness and docs by path (ids are the new table's)
    fn fields(m: &crate::spec::TableMetadata) -> Vec<(String, bool, Option<String>)> {
        fn walk(
            prefix: &str,
            f: &crate::spec::NestedField,
            out: &mut Vec<(String, bool, Option<String>)>,
        ) {
            use crate::spec::Type;
            let path = format!("{prefix}{}", f.name);
            out.push((path.clone(), f.required, f.doc.clone()));
            let prefix = format!("{path}.");
            match f.field_type.as_ref() {
                Type::Struct(s) => s.fields.iter().for_each(|c| walk(&prefix, c, out)),
                Type::List(l) => walk(&prefix, &l.element_field, out),
                Type::Map(m) => {
                    walk(&prefix, &m.key_field, out);
                    walk(&prefix, &m.value_field, out);
                }
                Type::Primitive(_) => {}
            }
        }
        let mut out = Vec::new();
        for c in m.current_schema().columns() {
            walk("", c, &mut out);
        }
        out
    }
    assert_eq!(fields(&copy), fields(&original));
    let declared = fields(&copy);
    let field = |path: &str| {
        declared
            .iter()
            .find(|(p, _, _)| p == path)
            .map(|(_, required, doc)| (*required, doc.clone()))
            .unwrap_or_else(|| panic!("{path}"))
    };
    let doc = |d: &str| Some(d.to_string());
    assert_eq!(field("s.a"), (true, doc("the a")));
    assert_eq!(field("s.b.x"), (true, None));
    assert_eq!(field("s.b.y"), (false, doc("why")));
    assert_eq!(field("m.value.k"), (true, None));
    assert_eq!(field("l.element.e"), (false, doc("e")));
    assert_eq!(field("l"), (true, doc("the l")));
    assert_eq!(field("t.u"), (true, doc("the u")));
    assert_eq!(field("t"), (false, doc("the t")));
    // a null in a required struct field is refused; a null struct is not
    ok(
        &ctx,
        "INSERT INTO ns.n (id, t, l) VALUES (1, NULL, [named_struct('e', 1)])",
    )
    .await;
    fails(
        &ctx,
        "INSERT INTO ns.n (id, t, l) VALUES (2, named_struct('u', CAST(NULL AS INT)), \
         [named_struct('e', 1)])",
        ErrorKind::InvalidArgument,
        "'t.u' is required",
    )
    .await;
}

/// A `<` or `>` in a column's `DEFAULT` compares; a `,` in its `[…]` is inside the
/// expression. Neither may end or extend the column's definition: `DEFAULT 1 < 2` once
/// swallowed the columns after it (their comments and types were lost, `UUID` refused),
/// and `ALTER TABLE … ADD COLUMNS` with it was refused.
#[tokio::test]
async fn a_comparison_in_a_default_keeps_the_next_columns() {
    let (ctx, catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(
        &ctx,
        "CREATE TABLE ns.d (flag BOOLEAN DEFAULT 1 < 2, \
         s STRUCT<a: INT NOT NULL COMMENT 'the a'> COMMENT 'the s', u UUID, \
         n INT DEFAULT [3, 4][1] COMMENT 'the n', \
         k INT COMMENT 'the k') TBLPROPERTIES ('format-version' = '3')",
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.d ADD COLUMNS (f2 BOOLEAN DEFAULT 2 > 1 AND 1 < 2, \
         k2 STRUCT<b: INT> COMMENT 'the k2')",
    )
    .await;
    let statement = create_statement(&ctx, "ns.d").await;
    let columns = "CREATE TABLE ns.d (\n  flag BOOLEAN DEFAULT TRUE,\n  \
         s STRUCT<a INT NOT NULL COMMENT 'the a'> COMMENT 'the s',\n  u UUID,\n  \
         n INT DEFAULT 3 COMMENT 'the n',\n  k INT COMMENT 'the k',\n  \
         f2 BOOLEAN DEFAULT TRUE,\n  k2 STRUCT<b INT> COMMENT 'the k2')\nUSING iceberg";
    assert!(statement.starts_with(columns), "{statement}");
    let m = catalog
        .load_table(&ident("ns.d"))
        .await
        .expect("table")
        .metadata()
        .clone();
    let u = m
        .current_schema()
        .columns()
        .iter()
        .find(|f| f.name == "u")
        .expect("u");
    assert_eq!(u.field_type.to_string(), "uuid");
}

/// Spark reads `"…"` as a string literal, so its users write `COMMENT "…"`,
/// `TBLPROPERTIES ("k"="v")`, `LOCATION "…"`, `COMMENT ON TABLE … IS "…"` and
/// `CALL system.p("ns.t")`: each is taken where only a string may stand (a column's and a
/// struct field's comment too), while a double-quoted column name stays a name.
#[tokio::test]
async fn double_quoted_strings_where_spark_reads_strings() {
    let (ctx, _catalog, dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    let location = format!("{}/q_loc", dir.path().display());
    ok(
        &ctx,
        &format!(
            "CREATE TABLE ns.q (\"Odd Name\" INT COMMENT \"it's\", \
             s STRUCT<a: INT NOT NULL COMMENT \"the a\", b: STRING COMMENT 'the b'> \
             COMMENT \"the s\") COMMENT \"tbl\" LOCATION \"{location}\" \
             TBLPROPERTIES (\"format-version\"=\"2\", 'k'='v')"
        ),
    )
    .await;
    ok(
        &ctx,
        "ALTER TABLE ns.q ADD COLUMNS (e INT COMMENT \"the e\", \
         f STRUCT<x: INT COMMENT \"the x\">)",
    )
    .await;
    ok(&ctx, "ALTER TABLE ns.q SET TBLPROPERTIES (\"x\"=\"y\")").await;
    ok(&ctx, "ALTER TABLE ns.q UNSET TBLPROPERTIES (\"k\")").await;
    ok(&ctx, "COMMENT ON TABLE ns.q IS \"new\"").await;
    assert_eq!(
        ok(&ctx, "SHOW TBLPROPERTIES ns.q (\"x\")").await,
        pairs(&[("x", "y")])
    );
    ok(&ctx, "INSERT INTO ns.q (\"Odd Name\") VALUES (1)").await;
    assert_eq!(ok(&ctx, "SELECT \"Odd Name\" FROM ns.q").await, [["1"]]);
    // a procedure's table argument
    assert_eq!(
        ok(&ctx, "CALL system.expire_snapshots(\"ns.q\")").await,
        [["0", "0", "0", "0", "0", "0"]]
    );
    let statement = create_statement(&ctx, "ns.q").await;
    let expected = format!(
        "CREATE TABLE ns.q (\n  \"Odd Name\" INT COMMENT 'it''s',\n  \
         s STRUCT<a INT NOT NULL COMMENT 'the a', b STRING COMMENT 'the b'> COMMENT 'the s',\n  \
         e INT COMMENT 'the e',\n  f STRUCT<x INT COMMENT 'the x'>)\nUSING iceberg\n\
         COMMENT 'new'\nLOCATION 'file://{location}'\nTBLPROPERTIES (\n  \
         'format-version' = '2',\n  'x' = 'y')"
    );
    assert_eq!(statement, expected);
    // and it round-trips
    let m = recreate(&statement.replace(&location, &format!("{location}2")), "q").await;
    assert_eq!(m.properties.get("comment").map(String::as_str), Some("new"));
}

/// Spark's `SHOW PARTITIONS t` is refused naming the statement and the metadata table
/// that lists the partitions (DataFusion read it as a variable `partitions.t`), and that
/// query runs.
#[tokio::test]
async fn show_partitions_points_to_the_partitions_metadata_table() {
    let (ctx, _catalog, _dir) = session().await;
    ok(&ctx, "CREATE SCHEMA ns").await;
    ok(&ctx, "CREATE TABLE ns.h (id INT) PARTITIONED BY (id)").await;
    ok(&ctx, "INSERT INTO ns.h VALUES (1), (2)").await;
    for sql in [
        "SHOW PARTITIONS ns.h",
        "show partitions ns.h PARTITION (id = 1)",
    ] {
        fails(
            &ctx,
            sql,
            ErrorKind::Unsupported,
            "SHOW PARTITIONS ns.h: Iceberg tables have no Hive partitions to show (Spark \
             refuses SHOW PARTITIONS for them too); the partitions metadata table lists \
             them: SELECT * FROM ns.h.partitions",
        )
        .await;
    }
    let rows = ok(&ctx, "SELECT count(*) FROM ns.h.partitions").await;
    assert_eq!(rows, vec![vec!["2".to_string()]]);
}
