//! `ALTER TABLE` schema evolution, properties, tags and a rollback, run through icefloe's
//! statement layer on a SQLite catalog; PyIceberg 0.12 (through the same catalog) and
//! DuckDB (`iceberg_scan` of the metadata file) read the evolved table and give the rows
//! icefloe gives, old data files read with the new schema (an added column null, a
//! renamed column keeping its values, promoted values intact).

use std::sync::Arc;

use datafusion::prelude::SessionContext;
use icefloe::catalog::{Catalog, SqlCatalog, TableIdent};
use icefloe::datafusion::sql::execute;
use serde_json::Value;

use crate::catalog::{attach, context};
use crate::interop::{
    assert_same_rows, duckdb_read, icefloe_rows, pyiceberg_read, pyiceberg_read_at, python,
};

async fn run(ctx: &SessionContext, sql: &str) {
    execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn rows(v: &Value) -> Vec<Value> {
    v["rows"].as_array().expect("rows").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evolved_tables_read_alike_in_pyiceberg_and_duckdb() {
    if python().is_none() {
        return;
    }
    let lake = crate::dml::lake().await;
    let (db, warehouse) = (lake.db.clone(), lake.warehouse.clone());
    let (catalog, ctx) = (Arc::clone(&lake.catalog), lake.ctx.clone());

    let t = "ice.ns.evolved";
    run(
        &ctx,
        &format!(
            "CREATE TABLE {t} (id INT NOT NULL, s VARCHAR, f FLOAT, d DECIMAL(5, 2), \
             gone VARCHAR) PARTITIONED BY (bucket(4, id))"
        ),
    )
    .await;
    run(
        &ctx,
        &format!(
            "INSERT INTO {t} VALUES (1, 'a', 1.5, 1.25, 'x'), (2, 'b', -2.5, 2.50, 'y'), \
             (3, NULL, NULL, NULL, NULL)"
        ),
    )
    .await;
    let first = catalog
        .load_table(&TableIdent::parse("ns.evolved"))
        .await
        .expect("table")
        .metadata()
        .current_snapshot_id
        .expect("snapshot");
    for sql in [
        "ALTER TABLE ice.ns.evolved ADD COLUMN c BIGINT COMMENT 'added' AFTER id",
        "ALTER TABLE ice.ns.evolved RENAME COLUMN s TO name",
        "ALTER TABLE ice.ns.evolved ALTER COLUMN id TYPE BIGINT",
        "ALTER TABLE ice.ns.evolved ALTER COLUMN f TYPE DOUBLE",
        "ALTER TABLE ice.ns.evolved ALTER COLUMN d TYPE DECIMAL(9, 2)",
        "ALTER TABLE ice.ns.evolved ALTER COLUMN id DROP NOT NULL",
        "ALTER TABLE ice.ns.evolved DROP COLUMN gone",
        "ALTER TABLE ice.ns.evolved ADD COLUMN gone INT FIRST",
        "ALTER TABLE ice.ns.evolved SET TBLPROPERTIES ('made.by'='icefloe')",
        "ALTER TABLE ice.ns.evolved CREATE TAG v1 RETAIN 3 DAYS",
    ] {
        run(&ctx, sql).await;
    }
    run(
        &ctx,
        &format!("INSERT INTO {t} VALUES (NULL, 4000000000, 9, 'd', 4.25, 1234567.89)"),
    )
    .await;

    let pyi = pyiceberg_read(&db, &warehouse, "ns.evolved");
    let table = catalog
        .load_table(&TableIdent::parse("ns.evolved"))
        .await
        .expect("table");
    let m = table.metadata();
    let schema = serde_json::to_value(m.current_schema()).expect("schema JSON");
    let names: Vec<&str> = schema["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .map(|f| f["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["gone", "id", "c", "name", "f", "d"]);
    // PyIceberg reads our schema as we wrote it: ids, names, types, docs
    assert_eq!(pyi["schema"]["fields"], schema["fields"]);
    assert_eq!(pyi["schema"]["fields"][0]["id"], 7);
    assert_eq!(pyi["schema"]["fields"][2]["id"], 6);
    assert_eq!(pyi["schema"]["fields"][2]["doc"], "added");
    let ours = icefloe_rows(&ctx, t, &schema).await;
    assert_eq!(ours.len(), 4);
    assert_same_rows("evolved: icefloe vs PyIceberg", &rows(&pyi), &ours);
    // the old file's rows: new columns null, renamed and promoted values intact
    let old: Vec<String> = crate::catalog::strings(
        &ctx,
        &format!(
            "SELECT concat_ws('|', coalesce(CAST(gone AS VARCHAR), 'null'), CAST(id AS VARCHAR), \
             coalesce(CAST(c AS VARCHAR), 'null'), coalesce(name, 'null'), \
             coalesce(CAST(f AS VARCHAR), 'null'), coalesce(CAST(d AS VARCHAR), 'null')) \
             FROM {t} WHERE id < 4 ORDER BY id"
        ),
    )
    .await;
    assert_eq!(
        old,
        [
            "null|1|null|a|1.5|1.25",
            "null|2|null|b|-2.5|2.50",
            "null|3|null|null|null|null"
        ]
    );
    let duck = duckdb_read(table.metadata_location());
    assert_same_rows("evolved: icefloe vs DuckDB", &rows(&duck), &ours);
    assert_eq!(
        m.properties.get("made.by").map(String::as_str),
        Some("icefloe")
    );

    // the tag and a rollback to the first snapshot, as PyIceberg sees them
    let tag = m.refs.get("v1").expect("tag v1");
    let tagged = pyiceberg_read_at(&db, &warehouse, "ns.evolved", tag.snapshot_id);
    assert_eq!(tagged["count"], 3);
    let df = execute(
        &ctx,
        &format!("CALL ice.system.rollback_to_snapshot('ns.evolved', {first})"),
    )
    .await
    .expect("rollback");
    assert_eq!(df.collect().await.expect("rollback")[0].num_rows(), 1);
    let pyi = pyiceberg_read(&db, &warehouse, "ns.evolved");
    assert_eq!(pyi["current_snapshot_id"], first);
    assert_eq!(pyi["count"], 3);
    let ours = icefloe_rows(&ctx, t, &schema).await;
    assert_same_rows("rolled back: icefloe vs PyIceberg", &rows(&pyi), &ours);
}

/// Tables PyIceberg wrote (and evolved itself: `evolve_v2`), changed by icefloe's
/// statements, read back by PyIceberg (and DuckDB) alike; a v1 table is upgraded to v2
/// first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyiceberg_written_tables_evolve_and_read_alike() {
    if python().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("catalog.db");
    let warehouse = tmp.path().join("warehouse");
    std::fs::create_dir_all(&warehouse).expect("warehouse");
    crate::interop::pyiceberg_write(&db, &warehouse);
    let catalog: Arc<dyn Catalog> =
        Arc::new(SqlCatalog::open("default", &db).expect("icefloe opens PyIceberg's catalog"));
    let ctx = context();
    attach(&ctx, "ice", Arc::clone(&catalog)).await;

    // v1: upgraded, then evolved (evolving a v1 table in place is tested in v1_writes)
    let v1 = TableIdent::parse("interop.part_v1");

    let statements = [
        "ALTER TABLE ice.interop.part_v1 SET TBLPROPERTIES ('format-version'='2')",
        "ALTER TABLE ice.interop.part_v1 ADD COLUMN extra INT AFTER id",
        "ALTER TABLE ice.interop.part_v1 RENAME COLUMN v TO value",
        "ALTER TABLE ice.interop.evolve_v2 ALTER COLUMN amount TYPE DECIMAL(12, 2)",
        "ALTER TABLE ice.interop.evolve_v2 RENAME COLUMN val TO value",
        "ALTER TABLE ice.interop.evolve_v2 ADD COLUMN extra DOUBLE FIRST",
        "ALTER TABLE ice.interop.evolve_v2 DROP COLUMN note",
        "ALTER TABLE ice.interop.types_v2 ALTER COLUMN i TYPE BIGINT",
        "ALTER TABLE ice.interop.types_v2 ALTER COLUMN f TYPE DOUBLE",
        "ALTER TABLE ice.interop.types_v2 ALTER COLUMN dec TYPE DECIMAL(20, 3)",
    ];
    for sql in statements {
        run(&ctx, sql).await;
    }
    run(
        &ctx,
        "INSERT INTO ice.interop.evolve_v2 VALUES (0.5, 30, 'x', 7, 12345678.90)",
    )
    .await;
    run(
        &ctx,
        "INSERT INTO ice.interop.part_v1 VALUES (500, 5, 'a', TIMESTAMPTZ '2024-03-02 00:00:00+00:00', 1.5)",
    )
    .await;
    for (name, count) in [("part_v1", 19), ("evolve_v2", 8), ("types_v2", 5)] {
        let ident = format!("interop.{name}");
        let table = catalog
            .load_table(&TableIdent::parse(&ident))
            .await
            .expect("table");
        let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema");
        let pyi = pyiceberg_read(&db, &warehouse, &ident);
        assert_eq!(pyi["schema"]["fields"], schema["fields"], "{ident}: schema");
        let ours = icefloe_rows(&ctx, &format!("ice.{ident}"), &schema).await;
        assert_eq!(ours.len(), count, "{ident}");
        assert_same_rows(
            &format!("{ident}: icefloe vs PyIceberg"),
            &rows(&pyi),
            &ours,
        );
        // DuckDB's iceberg_scan refuses the upgraded v1 table's manifest lists ("required
        // field 'sequence_number' is NULL"): v1 lists have none, which a v2 reader takes as
        // 0 (spec, Appendix E), as PyIceberg and icefloe do
        if name != "part_v1" {
            let duck = duckdb_read(table.metadata_location());
            assert_same_rows(&format!("{ident}: icefloe vs DuckDB"), &rows(&duck), &ours);
        }
    }
    assert_eq!(
        catalog
            .load_table(&v1)
            .await
            .expect("table")
            .metadata()
            .format_version,
        icefloe::spec::FormatVersion::V2
    );
}

/// v3 default values (spec "Default values"): columns added with a `DEFAULT` (top-level,
/// required, in a struct) read their `initial-default` in the file written before them,
/// `INSERT` and `MERGE … INSERT` fill the `write-default` of the columns they do not list
/// (changed by `SET DEFAULT`, gone after `DROP DEFAULT`), a struct value that leaves out a
/// field writes the field's `write-default` (`INSERT … SELECT`, `UPDATE`, `MERGE`), and
/// PyIceberg 0.12 reads the same
/// rows from the same files (it projects `initial-default`s, nested ones too) and the same
/// defaults from the schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v3_defaults_read_alike_in_pyiceberg() {
    let lake = crate::dml::lake().await;
    let (catalog, ctx) = (Arc::clone(&lake.catalog), lake.ctx.clone());
    let t = "ice.ns.defaults";
    run(
        &ctx,
        &format!(
            "CREATE TABLE {t} (id INT, p STRUCT<x INT>) PARTITIONED BY (bucket(2, id)) \
             TBLPROPERTIES ('format-version'='3')"
        ),
    )
    .await;
    run(
        &ctx,
        &format!("INSERT INTO {t} VALUES (1, named_struct('x', 10)), (2, NULL), (3, named_struct('x', 30))"),
    )
    .await;
    for sql in [
        "ALTER TABLE ice.ns.defaults ADD COLUMN n INT DEFAULT 5",
        "ALTER TABLE ice.ns.defaults ADD COLUMN s VARCHAR NOT NULL DEFAULT 'dflt'",
        "ALTER TABLE ice.ns.defaults ADD COLUMN dt DATE DEFAULT DATE '2024-02-29'",
        "ALTER TABLE ice.ns.defaults ADD COLUMN m DECIMAL(9, 2) DEFAULT 12.5",
        "ALTER TABLE ice.ns.defaults ADD COLUMN p.y BIGINT DEFAULT -7",
    ] {
        run(&ctx, sql).await;
    }
    run(
        &ctx,
        &format!("INSERT INTO {t} (id, p, s) VALUES (4, named_struct('x', 40, 'y', 44), 'four')"),
    )
    .await;
    run(
        &ctx,
        "ALTER TABLE ice.ns.defaults ALTER COLUMN n SET DEFAULT 6",
    )
    .await;
    run(
        &ctx,
        "ALTER TABLE ice.ns.defaults ALTER COLUMN dt DROP DEFAULT",
    )
    .await;
    run(&ctx, &format!("INSERT INTO {t} (id, m) VALUES (5, 0.25)")).await;
    run(
        &ctx,
        &format!(
            "MERGE INTO {t} d USING (SELECT 6 AS id UNION ALL SELECT 1) src ON d.id = src.id \
             WHEN NOT MATCHED THEN INSERT (id) VALUES (src.id)"
        ),
    )
    .await;
    let table = catalog
        .load_table(&TableIdent::parse("ns.defaults"))
        .await
        .expect("table");
    let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema JSON");
    let field = |name: &str| -> Value {
        schema["fields"]
            .as_array()
            .expect("fields")
            .iter()
            .find(|f| f["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no field {name}"))
    };
    let defaults = |f: &Value| (f["initial-default"].clone(), f["write-default"].clone());
    use serde_json::json;
    assert_eq!(defaults(&field("n")), (json!(5), json!(6)));
    assert_eq!(defaults(&field("s")), (json!("dflt"), json!("dflt")));
    assert_eq!(field("s")["required"], true);
    assert_eq!(defaults(&field("dt")), (json!("2024-02-29"), Value::Null));
    assert_eq!(defaults(&field("m")), (json!("12.50"), json!("12.50")));
    let y = field("p")["type"]["fields"][1].clone();
    assert_eq!(
        (y["name"].clone(), defaults(&y)),
        (json!("y"), (json!(-7), json!(-7)))
    );

    let all = format!(
        "SELECT concat_ws('|', CAST(id AS VARCHAR), coalesce(CAST(p.x AS VARCHAR), 'null'), \
         coalesce(CAST(p.y AS VARCHAR), 'null'), coalesce(CAST(n AS VARCHAR), 'null'), s, \
         coalesce(CAST(dt AS VARCHAR), 'null'), CAST(m AS VARCHAR)) FROM {t} ORDER BY id"
    );
    let expected = [
        // written before the columns: their initial-defaults (p.y null where p is)
        "1|10|-7|5|dflt|2024-02-29|12.50",
        "2|null|null|5|dflt|2024-02-29|12.50",
        "3|30|-7|5|dflt|2024-02-29|12.50",
        // the write-defaults then
        "4|40|44|5|four|2024-02-29|12.50",
        "5|null|null|6|dflt|null|0.25",
        // MERGE's INSERT too
        "6|null|null|6|dflt|null|12.50",
    ];
    assert_eq!(crate::catalog::strings(&ctx, &all).await, expected);
    // filters on a default keep the files written before the column (all their rows hold it)
    let filtered = crate::catalog::strings(
        &ctx,
        &format!("SELECT CAST(id AS VARCHAR) AS i FROM {t} WHERE n = 5 AND p.y = -7 ORDER BY id"),
    )
    .await;
    assert_eq!(filtered, ["1", "3"]);

    // a struct value leaving out p.y writes its write-default: INSERT … SELECT, UPDATE and
    // MERGE's UPDATE SET and INSERT
    run(
        &ctx,
        "ALTER TABLE ice.ns.defaults ALTER COLUMN p.y SET DEFAULT -8",
    )
    .await;
    run(
        &ctx,
        &format!("INSERT INTO {t} (id, p) SELECT 7, named_struct('x', 70)"),
    )
    .await;
    run(
        &ctx,
        &format!("UPDATE {t} SET p = named_struct('x', 33) WHERE id = 3"),
    )
    .await;
    run(
        &ctx,
        &format!(
            "MERGE INTO {t} d USING (SELECT 8 AS id, 80 AS x UNION ALL SELECT 2, 20) src \
             ON d.id = src.id WHEN MATCHED THEN UPDATE SET p = named_struct('x', src.x) \
             WHEN NOT MATCHED THEN INSERT (id, p) VALUES (src.id, named_struct('x', src.x))"
        ),
    )
    .await;

    let expected = [
        "1|10|-7|5|dflt|2024-02-29|12.50",
        "2|20|-8|5|dflt|2024-02-29|12.50",
        "3|33|-8|5|dflt|2024-02-29|12.50",
        "4|40|44|5|four|2024-02-29|12.50",
        "5|null|null|6|dflt|null|0.25",
        "6|null|null|6|dflt|null|12.50",
        "7|70|-8|6|dflt|null|12.50",
        "8|80|-8|6|dflt|null|12.50",
    ];
    assert_eq!(crate::catalog::strings(&ctx, &all).await, expected);
    let table = catalog
        .load_table(&TableIdent::parse("ns.defaults"))
        .await
        .expect("table");
    let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema JSON");

    if python().is_none() {
        return;
    }
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.defaults");
    // PyIceberg reads the defaults as we wrote them
    assert_eq!(pyi["schema"]["fields"], schema["fields"]);
    let ours = icefloe_rows(&ctx, t, &schema).await;
    assert_eq!(ours.len(), 8);
    assert_same_rows("defaults: icefloe vs PyIceberg", &rows(&pyi), &ours);
}

/// The rows of `sql` in `ctx`, as pretty-printed text (NULL prints as nothing).
async fn text(ctx: &SessionContext, sql: &str) -> String {
    let batches = execute(ctx, sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string()
}

/// A struct field added or renamed after files were written is selected and filtered on
/// by itself (`st.c`, `st.bb`), not only inside `SELECT st`: the older files lack `c` (it
/// reads as null) and hold `bb` under its old name. The struct holds a float field whose
/// NaN counts the older files cannot know, so the scan canonicalizes NaNs in `st`
/// (`canonical_nan`), which used to hide the field access from the per-file column
/// mapping ("Field c not found in struct"). Also one level deeper (`st.inner.y`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn struct_fields_added_or_renamed_later_are_selected_and_filtered_alone() {
    let lake = crate::dml::lake().await;
    let ctx = lake.ctx.clone();
    let t = "ice.ns.nested_later";
    run(
        &ctx,
        &format!("CREATE TABLE {t} (id INT, st STRUCT<a INT, b STRING, inner STRUCT<x INT>>)"),
    )
    .await;
    run(
        &ctx,
        &format!(
            "INSERT INTO {t} VALUES (1, named_struct('a', 10, 'b', 'x', 'inner', \
             named_struct('x', 100)))"
        ),
    )
    .await;
    run(&ctx, &format!("ALTER TABLE {t} ADD COLUMN st.c DOUBLE")).await;
    run(
        &ctx,
        &format!("ALTER TABLE {t} ADD COLUMN st.inner.y DOUBLE"),
    )
    .await;
    run(&ctx, &format!("ALTER TABLE {t} RENAME COLUMN st.b TO bb")).await;
    run(
        &ctx,
        &format!(
            "INSERT INTO {t} VALUES (2, named_struct('a', 20, 'bb', 'y', 'inner', \
             named_struct('x', 200, 'y', 2.5), 'c', 'NaN'::double))"
        ),
    )
    .await;
    let got = text(
        &ctx,
        &format!("SELECT id, st.c, st.bb, st.inner.y, st.inner.x FROM {t} ORDER BY id"),
    )
    .await;
    let cells = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with('|'))
            .skip(1)
            .map(|l| l.split_whitespace().collect::<String>())
            .collect()
    };
    assert_eq!(cells(&got), ["|1||x||100|", "|2|NaN|y|2.5|200|"], "{got}");
    for (condition, ids) in [
        ("st.c IS NULL", "|1|"),
        ("st.c IS NOT NULL", "|2|"),
        ("isnan(st.c)", "|2|"),
        ("st.bb = 'x'", "|1|"),
        ("st.bb = 'y'", "|2|"),
        ("st.inner.y IS NULL", "|1|"),
        ("st.inner.y > 1", "|2|"),
    ] {
        let got = text(&ctx, &format!("SELECT id FROM {t} WHERE {condition}")).await;
        assert_eq!(cells(&got), [ids], "{condition}: {got}");
    }
    // counted as whole values too
    let got = text(
        &ctx,
        &format!("SELECT count(st.c), count(st.bb), count(st.inner.y) FROM {t}"),
    )
    .await;
    assert_eq!(cells(&got), ["|1|2|1|"], "{got}");
}

/// Schemas that no reader could load (two fields with one full name, Java's
/// `TypeUtil.indexByName`) or no writer could write to (a struct left without fields)
/// are refused by `CREATE TABLE`, CTAS and `ALTER TABLE`, naming the name, with nothing
/// committed: the table's metadata file stays, and the table stays readable and writable
/// in icefloe and PyIceberg.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_with_clashing_names_or_empty_structs_are_refused() {
    let lake = crate::dml::lake().await;
    let ctx = lake.ctx.clone();
    let ident = TableIdent::parse("ns.b");
    run(
        &ctx,
        "CREATE TABLE ice.ns.b (id INT, s STRING, st STRUCT<a INT, b STRING>)",
    )
    .await;
    run(
        &ctx,
        "INSERT INTO ice.ns.b VALUES (1, 'x', named_struct('a', 1, 'b', 'one'))",
    )
    .await;
    let before = lake
        .catalog
        .metadata_location(&ident)
        .await
        .expect("location");
    for (sql, needle) in [
        (
            "CREATE TABLE ice.ns.c3 (a INT, a INT)",
            "two fields have the name 'a' (field ids 1 and 2)",
        ),
        (
            "CREATE TABLE ice.ns.c4 (s STRUCT<x INT, x STRING>)",
            "two fields have the name 's.x'",
        ),
        (
            "CREATE TABLE ice.ns.c5 AS SELECT 1 AS \"st.a\", named_struct('a', 2) AS st",
            "two fields have the name 'st.a'",
        ),
        (
            "ALTER TABLE ice.ns.b ADD COLUMN y ARRAY<STRUCT<a INT, a INT>>",
            "two fields have the name 'y.element.a'",
        ),
        (
            "ALTER TABLE ice.ns.b RENAME COLUMN s TO \"st.a\"",
            "two fields have the name 'st.a'",
        ),
        (
            "ALTER TABLE ice.ns.b ADD COLUMN \"st.b\" INT",
            "two fields have the name 'st.b'",
        ),
        (
            "ALTER TABLE ice.ns.b DROP COLUMN st.a, st.b",
            "cannot leave struct 'st' without fields",
        ),
    ] {
        let err = crate::dml::run(&ctx, sql).await.expect_err(sql);
        assert!(err.contains(needle), "{sql}: {err}");
    }
    for name in ["c3", "c4", "c5"] {
        let exists = lake
            .catalog
            .table_exists(&TableIdent::parse(&format!("ns.{name}")))
            .await
            .expect("exists");
        assert!(!exists, "ns.{name} was created");
    }
    assert_eq!(
        lake.catalog
            .metadata_location(&ident)
            .await
            .expect("location"),
        before
    );
    // case matters (`A` is not `a`), one field of a struct may go, and the table takes
    // rows afterwards
    run(&ctx, "ALTER TABLE ice.ns.b ADD COLUMN st.\"A\" INT").await;
    run(&ctx, "ALTER TABLE ice.ns.b DROP COLUMN st.a").await;
    run(
        &ctx,
        "INSERT INTO ice.ns.b VALUES (2, 'y', named_struct('b', 'two', 'A', 2))",
    )
    .await;
    let table = lake.catalog.load_table(&ident).await.expect("table");
    let schema = serde_json::to_value(table.metadata().current_schema()).expect("schema JSON");
    let ours = icefloe_rows(&ctx, "ice.ns.b", &schema).await;
    assert_eq!(ours.len(), 2);
    if python().is_none() {
        return;
    }
    let pyi = pyiceberg_read(&lake.db, &lake.warehouse, "ns.b");
    assert_eq!(pyi["schema"]["fields"], schema["fields"]);
    assert_same_rows("ns.b: icefloe vs PyIceberg", &rows(&pyi), &ours);
}

/// Comments written as any string literal DataFusion's tokenizer reads are kept: `'…'`,
/// Spark's `"…"`, `$$…$$`, `$tag$…$tag$`, `E'…'` (a tester's: a column `COMMENT $$…$$`
/// was dropped without a word, and refused in a table `COMMENT`, `TBLPROPERTIES`,
/// `ALTER COLUMN … COMMENT` and `COMMENT ON TABLE`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comments_in_every_string_form_are_kept() {
    let lake = crate::dml::lake().await;
    let ctx = &lake.ctx;
    for sql in [
        "CREATE TABLE ice.ns.dq (b INT COMMENT \"dq\", c INT COMMENT $$x$$, \
         d INT COMMENT 'plain', f INT COMMENT E'e\\tx', g INT COMMENT $t$tag'd$t$) \
         COMMENT $$tbl$$ TBLPROPERTIES ($$k$$ = $$v$$)",
        "ALTER TABLE ice.ns.dq ADD COLUMN e INT COMMENT $$cc$$",
        "ALTER TABLE ice.ns.dq ALTER COLUMN d COMMENT $$dd$$",
    ] {
        run(ctx, sql).await;
    }
    assert_eq!(
        text(ctx, "DESCRIBE TABLE ice.ns.dq").await,
        text(
            ctx,
            "SELECT * FROM (VALUES ('b', 'int', 'dq'), ('c', 'int', 'x'), ('d', 'int', 'dd'), \
             ('f', 'int', E'e\tx'), ('g', 'int', 'tag''d'), ('e', 'int', 'cc')) \
             AS v(col_name, data_type, comment)"
        )
        .await
    );
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.dq"))
        .await
        .unwrap();
    let properties = &table.metadata().properties;
    assert_eq!(properties.get("comment").map(String::as_str), Some("tbl"));
    assert_eq!(properties.get("k").map(String::as_str), Some("v"));
    run(ctx, "COMMENT ON TABLE ice.ns.dq IS $$t2$$").await;
    let table = lake
        .catalog
        .load_table(&TableIdent::parse("ns.dq"))
        .await
        .unwrap();
    assert_eq!(
        table
            .metadata()
            .properties
            .get("comment")
            .map(String::as_str),
        Some("t2")
    );
}
