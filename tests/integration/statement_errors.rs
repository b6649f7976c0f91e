//! Errors of DDL, INSERT and procedure calls name what the user wrote (the column, the
//! argument as SQL text, the catalog), say what is allowed, and change nothing; and
//! `remove_orphan_files` never looks outside its table. DDL naming a branch, tag or
//! metadata table says so; a failing expression is not blamed on a data file.

use icefloe::catalog::TableIdent;

use crate::dml::{lake, run, Lake};

async fn metadata_location(lake: &Lake, table: &str) -> String {
    lake.catalog
        .load_table(&TableIdent::parse(table))
        .await
        .expect("table")
        .metadata_location()
        .to_string()
}

/// `sql` fails with an error holding `expected`, no Rust debug text, and `table` unchanged.
async fn fails(lake: &Lake, table: &str, sql: &str, expected: &str) -> String {
    let before = metadata_location(lake, table).await;
    let err = run(&lake.ctx, sql).await.unwrap_err();
    assert!(
        err.contains(expected),
        "{sql}:\n{err}\nexpected: {expected}"
    );
    for debug in ["Text(", "Number(", "Bool(", "Timestamp(", "Some("] {
        assert!(!err.contains(debug), "{sql}: Rust debug text in {err}");
    }
    assert_eq!(metadata_location(lake, table).await, before, "{sql}");
    err
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_type_without_an_iceberg_type_names_its_column() {
    let lake = lake().await;
    run(&lake.ctx, "CREATE TABLE ice.ns.b (c INT, d DECIMAL(10, 2))")
        .await
        .unwrap();
    let err = fails(
        &lake,
        "ns.b",
        "ALTER TABLE ice.ns.b ALTER COLUMN d TYPE DECIMAL(40,2)",
        "column 'd': type DECIMAL(40, 2) has no Iceberg type (Iceberg decimals have a \
         precision of at most 38 and a scale of at least 0)",
    )
    .await;
    assert!(!err.contains("column 'c'"), "{err}");
    fails(
        &lake,
        "ns.b",
        "ALTER TABLE ice.ns.b ADD COLUMN e DECIMAL(40,2)",
        "column 'e': type DECIMAL(40, 2) has no Iceberg type",
    )
    .await;
    fails(
        &lake,
        "ns.b",
        "ALTER TABLE ice.ns.b ADD COLUMN \"we\"\"ird\" DECIMAL(40,2)",
        "column 'we\"ird': type DECIMAL(40, 2)",
    )
    .await;
    // a valid one is planned under the column's own name as before
    run(
        &lake.ctx,
        "ALTER TABLE ice.ns.b ALTER COLUMN d TYPE DECIMAL(12,2)",
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_for_a_required_column_names_it() {
    let lake = lake().await;
    for sql in [
        "CREATE TABLE ice.ns.e3 (id INT, s VARCHAR) TBLPROPERTIES ('format-version'='3')",
        "ALTER TABLE ice.ns.e3 ADD COLUMN n INT NOT NULL DEFAULT 5",
        "ALTER TABLE ice.ns.e3 ALTER COLUMN n DROP DEFAULT",
    ] {
        run(&lake.ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    fails(
        &lake,
        "ns.e3",
        "INSERT INTO ice.ns.e3 (id) VALUES (1)",
        "column 'n' is required (NOT NULL) but a row to write holds null for it (it has no \
         write-default, so an INSERT must give it a value)",
    )
    .await;
    run(
        &lake.ctx,
        "ALTER TABLE ice.ns.e3 ALTER COLUMN n SET DEFAULT 6",
    )
    .await
    .unwrap();
    let err = fails(
        &lake,
        "ns.e3",
        "INSERT INTO ice.ns.e3 SELECT 1, 'a', CAST(NULL AS INT)",
        "column 'n' is required (NOT NULL) but a row to write holds null for it",
    )
    .await;
    assert!(!err.contains("write-default"), "{err}");
    run(&lake.ctx, "INSERT INTO ice.ns.e3 (id) VALUES (1)")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn procedure_arguments_and_names_are_reported_as_written() {
    let lake = lake().await;
    run(&lake.ctx, "CREATE TABLE ice.ns.t (id INT)")
        .await
        .unwrap();
    run(&lake.ctx, "INSERT INTO ice.ns.t VALUES (1)")
        .await
        .unwrap();
    let t = "ns.t";
    for (sql, expected) in [
        (
            "CALL ice.system.expire_snapshots(table => 'ns.t', retain_last => 99999999999)",
            "retain_last must be at most 2147483647, got 99999999999",
        ),
        (
            "CALL ice.system.expire_snapshots(table => 'ns.t', retain_last => 0)",
            "retain_last must be at least 1, got 0",
        ),
        (
            "CALL ice.system.expire_snapshots(table => 'ns.t', retain_last => 'abc')",
            "retain_last must be a number, got 'abc'",
        ),
        (
            "CALL ice.system.expire_snapshots(table => 'ns.t', dry_run => 'it''s')",
            "dry_run must be true or false, got 'it''s'",
        ),
        (
            "CALL ice.system.expire_snapshots(table => 'ns.t', snapshot_ids => array('x', 1))",
            "snapshot_ids must hold snapshot ids, got 'x'",
        ),
        (
            "CALL ice.system.expire_snapshots(table => 'ns.t', older_than => TRUE)",
            "older_than must be a timestamp (TIMESTAMP '…' or seconds since the epoch), \
             got TRUE",
        ),
        (
            "CALL ice.system.remove_orphan_files(table => 'ns.t', location => 5)",
            "location must be a string, got 5",
        ),
        (
            "CALL ice.system.rewrite_data_files(table => 'ns.t', strategy => 'zorder')",
            "unknown strategy 'zorder': a z-order rewrite is strategy => 'sort' with \
             sort_order => 'zorder(column, …)', as in Spark",
        ),
        (
            "CALL ice.system.rewrite_data_files(table => 'ns.t', strategy => 'random')",
            "unknown strategy 'random' (expected 'binpack' or 'sort')",
        ),
        (
            "CALL ice.system.rewrite_data_files(table => 'ns.t', options => array(1, 2))",
            "options must be map('key', 'value', …), got array(1, 2)",
        ),
        (
            "CALL ice.system.rewrite_data_files(table => 'ns.t', sort_order => map('a', 'b'))",
            "got map('a', 'b')",
        ),
        (
            "CALL ice.system.rollback_to_snapshot('ns.t', 'x')",
            "snapshot_id must be a number, got 'x'",
        ),
        (
            "CALL ice.system.rollback_to_timestamp('ns.t', array(1))",
            "timestamp must be a timestamp (TIMESTAMP '…' or seconds since the epoch), got array(1)",
        ),
        (
            "CALL ice.system.remove_orphan_files(table => 'ns.t', older_than => nope(1))",
            "older_than => nope(1): not a constant expression (",
        ),
        (
            "CALL nope.system.expire_snapshots(table => 'ns.t')",
            "CALL nope.system.expire_snapshots: catalog 'nope' does not exist",
        ),
        (
            "CALL ice.nope.expire_snapshots(table => 'ns.t')",
            "procedures are named [catalog.]system.<procedure>",
        ),
    ] {
        fails(&lake, t, sql, expected).await;
    }
    // every procedure the dispatcher runs is listed
    let err = fails(
        &lake,
        t,
        "CALL ice.system.bogus('ns.t')",
        "CALL ice.system.bogus: unknown procedure (icefloe runs rollback_to_snapshot, \
         rollback_to_timestamp, set_current_snapshot, fast_forward, cherrypick_snapshot, \
         publish_changes, register_table, ancestors_of, expire_snapshots, remove_orphan_files, rewrite_data_files, \
         rewrite_manifests, add_files, rewrite_position_delete_files, compute_table_stats, \
         compute_partition_stats, rewrite_table_path, create_changelog_view)",
    )
    .await;
    assert!(err.contains("rewrite_manifests"), "{err}");
    // what Spark takes for older_than: a TIMESTAMP literal, seconds (a BIGINT cast to
    // TIMESTAMP), a string
    for older_than in [
        "TIMESTAMP '2001-01-01 00:00:00'",
        "978307200",
        "'2001-01-01 00:00:00'",
    ] {
        run(
            &lake.ctx,
            &format!(
                "CALL ice.system.remove_orphan_files(table => 'ns.t', \
                 older_than => {older_than}, dry_run => true)"
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{older_than}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_orphan_files_refuses_a_location_outside_its_table() {
    let lake = lake().await;
    for sql in [
        "CREATE TABLE ice.ns.t (id INT)",
        "INSERT INTO ice.ns.t VALUES (1)",
        "CREATE TABLE ice.ns.u (id INT)",
        "INSERT INTO ice.ns.u VALUES (2)",
    ] {
        run(&lake.ctx, sql).await.unwrap();
    }
    let table_location = lake
        .catalog
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .unwrap()
        .metadata()
        .location
        .clone();
    let namespace_dir = lake.warehouse.join("ns");
    let u_files = |dir: &std::path::Path| {
        walk(&dir.join("u"))
            .into_iter()
            .filter(|p| p.is_file())
            .count()
    };
    let before = u_files(&namespace_dir);
    assert!(before >= 3, "u has data and metadata files");
    for (location, dry_run) in [
        (namespace_dir.to_string_lossy().to_string(), true),
        (namespace_dir.to_string_lossy().to_string(), false),
        (format!("file://{}", namespace_dir.display()), false),
        // a sibling whose name starts with the table's
        (format!("{table_location}2"), false),
    ] {
        fails(
            &lake,
            "ns.t",
            &format!(
                "CALL ice.system.remove_orphan_files(table => 'ns.t', location => '{location}', \
                 dry_run => {dry_run})"
            ),
            &format!(
                "location '{location}' is not inside the table location or its \
                 write.data.path / write.metadata.path ('{table_location}'): files there the \
                 table does not reference may be other tables' files"
            ),
        )
        .await;
    }
    assert_eq!(u_files(&namespace_dir), before, "u's files all kept");
    // the table location and a directory in it are fine
    for location in [table_location.clone(), format!("{table_location}/data")] {
        run(
            &lake.ctx,
            &format!(
                "CALL ice.system.remove_orphan_files(table => 'ns.t', location => '{location}', \
                 dry_run => true)"
            ),
        )
        .await
        .unwrap_or_else(|e| panic!("{location}: {e}"));
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// A failing expression of a CTAS or INSERT query (`1/0`, a cast of `'a'` to INT), which
/// DataFusion may evaluate inside the scan, is reported as what it is, not as an
/// unreadable data file; the CTAS leaves no table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_expressions_do_not_blame_the_data_files() {
    let lake = lake().await;
    for q in [
        "CREATE TABLE ice.ns.src (id INT, s STRING)",
        "INSERT INTO ice.ns.src VALUES (1, 'a'), (2, 'x')",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    for (q, expected) in [
        (
            "CREATE TABLE ice.ns.bad AS SELECT id, 1/0 AS z FROM ice.ns.src",
            "Divide by zero",
        ),
        (
            "CREATE TABLE ice.ns.bad AS SELECT CAST(s AS INT) AS z FROM ice.ns.src",
            "Cannot cast string 'a' to value of Int32 type",
        ),
    ] {
        let err = run(&lake.ctx, q).await.expect_err(q);
        assert!(err.contains(expected), "{q}: {err}");
        assert!(!err.contains("data file"), "{q}: {err}");
        assert!(
            !lake
                .catalog
                .table_exists(&TableIdent::parse("ns.bad"))
                .await
                .expect("exists"),
            "{q}"
        );
    }
    let err = fails(
        &lake,
        "ns.src",
        "INSERT INTO ice.ns.src SELECT id + 1/0, s FROM ice.ns.src",
        "Divide by zero",
    )
    .await;
    assert!(!err.contains("data file"), "{err}");
}

/// `DROP TABLE` and `ALTER TABLE` of a branch, a tag or a metadata table (Spark's
/// `t.branch_dev`, icefloe's `"t@dev"`, `"t$files"`) say what the name is and what to
/// write, instead of "table not found"; nothing changes. An `older_than` in the future is
/// called so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ddl_on_a_branch_or_tag_says_what_it_is() {
    let lake = lake().await;
    for q in [
        "CREATE TABLE ice.ns.m (id INT)",
        "INSERT INTO ice.ns.m VALUES (1)",
        "ALTER TABLE ice.ns.m CREATE BRANCH dev",
        "ALTER TABLE ice.ns.m CREATE TAG v1",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let snapshot = lake
        .catalog
        .load_table(&TableIdent::parse("ns.m"))
        .await
        .expect("load")
        .metadata()
        .current_snapshot_id
        .expect("snapshot");
    let cases = [
        (
            "DROP TABLE ice.ns.m.branch_dev".to_string(),
            "'dev' is a branch of table 'ice.ns.m', not a table; to drop the branch, run \
             ALTER TABLE ice.ns.m DROP BRANCH dev",
        ),
        (
            "DROP TABLE IF EXISTS ice.ns.\"m@v1\" PURGE".to_string(),
            "'v1' is a tag of table 'ice.ns.m', not a table; to drop the tag, run ALTER TABLE \
             ice.ns.m DROP TAG v1",
        ),
        (
            format!("DROP TABLE ice.ns.m.snapshot_id_{snapshot}"),
            "names a version of table 'ice.ns.m', not a table",
        ),
        (
            "DROP TABLE ice.ns.\"m$files\"".to_string(),
            "'m$files' is the files metadata table of table 'ice.ns.m', not a table",
        ),
        (
            "ALTER TABLE ice.ns.m.branch_dev ADD COLUMN q INT".to_string(),
            "'dev' is a branch of table 'ice.ns.m', not a table; ALTER TABLE changes the \
             table",
        ),
        (
            "ALTER TABLE ice.ns.m.tag_v1 RENAME TO n".to_string(),
            "'v1' is a tag of table 'ice.ns.m', not a table",
        ),
        (
            "CALL ice.system.remove_orphan_files(table => 'ns.m', \
             older_than => TIMESTAMP '2099-01-01 00:00:00')"
                .to_string(),
            "older_than 2099-01-01T00:00:00.000Z (4070908800000 ms), in the future",
        ),
    ];
    for (q, expected) in &cases {
        let err = fails(&lake, "ns.m", q, expected).await;
        assert!(!err.contains("not found"), "{q}: {err}");
    }
    let refs = crate::catalog::strings(
        &lake.ctx,
        "SELECT name FROM ice.ns.\"m$refs\" ORDER BY name",
    )
    .await;
    assert_eq!(refs, ["dev", "main", "v1"]);
    // a name that is neither a table nor a version of one is still not found
    let err = run(&lake.ctx, "DROP TABLE ice.ns.nope.branch_dev")
        .await
        .expect_err("missing");
    assert!(err.contains("not found") || err.contains("nope"), "{err}");
}

/// A new table name that icefloe's table-name syntax reads as a metadata table (`"m$files"`,
/// any case) or a version (`"m@dev"`, `"m@v1$files"`) is refused by `CREATE TABLE` (also CTAS
/// and `CREATE OR REPLACE`, whose table does not exist) and `ALTER TABLE … RENAME TO`, naming
/// the name and what it reads as; nothing is created or renamed. Names the syntax reads as
/// plain (`"price$usd"`, no metadata table) are created and read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_names_of_the_suffix_syntax_are_refused() {
    let lake = lake().await;
    for q in [
        "CREATE TABLE ice.ns.m (id INT)",
        "INSERT INTO ice.ns.m VALUES (1)",
        "ALTER TABLE ice.ns.m CREATE BRANCH dev",
        "CREATE TABLE ice.ns.r (id INT)",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let cases = [
        (
            "CREATE TABLE ice.ns.\"m$files\" (id INT)",
            "CREATE TABLE ice.ns.m$files: the table name 'm$files' reads as the files metadata \
             table of table 'm'",
        ),
        (
            "CREATE TABLE ice.ns.\"q$Snapshots\" (id INT)",
            "the table name 'q$Snapshots' reads as the snapshots metadata table of table 'q'",
        ),
        (
            "CREATE TABLE ice.ns.\"m@dev\" (id INT)",
            "CREATE TABLE ice.ns.m@dev: the table name 'm@dev' reads as version 'dev' (a \
             branch, tag, snapshot id or timestamp) of table 'm'",
        ),
        (
            "CREATE TABLE ice.ns.\"q@2026-01-01\" AS SELECT 1 AS id",
            "the table name 'q@2026-01-01' reads as version '2026-01-01'",
        ),
        (
            "CREATE OR REPLACE TABLE ice.ns.\"m@v1$entries\" (id INT)",
            "CREATE OR REPLACE TABLE ice.ns.m@v1$entries: the table name 'm@v1$entries' reads \
             as the entries metadata table of version 'v1' of table 'm'",
        ),
        (
            "ALTER TABLE ice.ns.r RENAME TO \"m$history\"",
            "ALTER TABLE ice.ns.r RENAME: the table name 'm$history' reads as the history \
             metadata table of table 'm'",
        ),
        (
            "ALTER TABLE ice.ns.r RENAME TO ice.ns.\"r@1\"",
            "the table name 'r@1' reads as version '1'",
        ),
    ];
    for (q, expected) in cases {
        fails(&lake, "ns.r", q, expected).await;
    }
    let mut tables: Vec<String> = lake
        .catalog
        .list_tables(&icefloe::catalog::Namespace::parse("ns"))
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    tables.sort();
    assert_eq!(tables, ["m", "r"]);
    // the metadata table and the branch still read as such
    let files = crate::catalog::strings(
        &lake.ctx,
        "SELECT CAST(record_count AS VARCHAR) FROM ice.ns.\"m$files\"",
    )
    .await;
    assert_eq!(files, ["1"]);
    // a `$` suffix that is no metadata table is a plain name
    for q in [
        "CREATE TABLE ice.ns.\"price$usd\" (id INT)",
        "INSERT INTO ice.ns.\"price$usd\" VALUES (7)",
        "ALTER TABLE ice.ns.r RENAME TO \"r$x\"",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let rows = crate::catalog::strings(
        &lake.ctx,
        "SELECT CAST(id AS VARCHAR) FROM ice.ns.\"price$usd\"",
    )
    .await;
    assert_eq!(rows, ["7"]);
}

/// A `DEFAULT` whose value depends on when it runs (`current_date()`, `now()`,
/// `current_timestamp()`, a subquery) is refused at the DDL, naming the column and the
/// function, and changes nothing: the spec keeps a default as one literal, and icefloe
/// stored the value at the time of the DDL (every later `INSERT` then wrote the date of
/// the `ALTER TABLE`; a subquery's default was the table's `max` then). An expression of
/// literals (`1 + 2`) is still its value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_default_that_is_no_literal_is_refused_at_the_ddl() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    for sql in [
        "CREATE TABLE ice.ns.d (id INT, dt DATE) TBLPROPERTIES ('format-version'='3')",
        "INSERT INTO ice.ns.d VALUES (1, DATE '2024-01-01')",
    ] {
        run(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    for (sql, expected) in [
        (
            "ALTER TABLE ice.ns.d ADD COLUMN added DATE DEFAULT current_date()",
            "the DEFAULT of column 'added' (current_date()) is not a constant: current_date() \
             takes a new value each time it is evaluated; an Iceberg default is one literal \
             value (spec \"Default values\")",
        ),
        (
            "ALTER TABLE ice.ns.d ADD COLUMN t DATE DEFAULT CAST(now() AS DATE)",
            "the DEFAULT of column 't' (CAST(now() AS Date32)) is not a constant: now() takes \
             a new value",
        ),
        (
            "ALTER TABLE ice.ns.d ALTER COLUMN dt SET DEFAULT current_date()",
            "the DEFAULT of column 'dt' (current_date()) is not a constant",
        ),
        (
            "ALTER TABLE ice.ns.d ADD COLUMN n INT DEFAULT (SELECT max(id) FROM ice.ns.d)",
            "is not a constant: it holds a subquery",
        ),
    ] {
        fails(&lake, "ns.d", sql, expected).await;
    }
    for (sql, expected) in [
        (
            "CREATE TABLE ice.ns.c1 (id INT, dt DATE DEFAULT current_date()) \
             TBLPROPERTIES ('format-version'='3')",
            "the DEFAULT of column 'dt' (current_date()) is not a constant",
        ),
        (
            "CREATE TABLE ice.ns.c2 (id INT, ts TIMESTAMP DEFAULT current_timestamp()) \
             TBLPROPERTIES ('format-version'='3')",
            "the DEFAULT of column 'ts' (now() AS current_timestamp()) is not a constant: \
             now() takes a new value",
        ),
        (
            "CREATE TABLE ice.ns.c3 (id INT, n INT DEFAULT (SELECT max(id) FROM ice.ns.d)) \
             TBLPROPERTIES ('format-version'='3')",
            "the DEFAULT of column 'n' ((<subquery>)) is not a constant: it holds a subquery",
        ),
    ] {
        let err = run(ctx, sql).await.expect_err(sql);
        assert!(
            err.contains(expected),
            "{sql}:\n{err}\nexpected: {expected}"
        );
        assert!(
            run(ctx, "SELECT * FROM ice.ns.c1").await.is_err()
                && run(ctx, "SELECT * FROM ice.ns.c2").await.is_err()
                && run(ctx, "SELECT * FROM ice.ns.c3").await.is_err(),
            "{sql}: a table was created"
        );
    }
    // literals and expressions of them: their value
    for sql in [
        "ALTER TABLE ice.ns.d ADD COLUMN n INT DEFAULT 1 + 2",
        "ALTER TABLE ice.ns.d ALTER COLUMN dt SET DEFAULT DATE '2024-02-29'",
        "INSERT INTO ice.ns.d (id) VALUES (2)",
    ] {
        run(ctx, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let rows = run(
        ctx,
        "SELECT id, CAST(dt AS VARCHAR) AS dt, n FROM ice.ns.d ORDER BY id",
    )
    .await
    .unwrap();
    assert_eq!(
        datafusion::arrow::util::pretty::pretty_format_batches(&rows)
            .unwrap()
            .to_string(),
        "+----+------------+---+\n| id | dt         | n |\n+----+------------+---+\n\
         | 1  | 2024-01-01 | 3 |\n| 2  | 2024-02-29 | 3 |\n+----+------------+---+"
    );
}

/// `PREPARE … AS INSERT INTO|OVERWRITE t PARTITION (…) …` into an Iceberg table is refused
/// naming the form (it was DataFusion's "Partitioned inserts not yet supported"), and
/// writes nothing; the statement run directly writes the partition value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prepared_insert_with_a_partition_clause_names_the_form() {
    let lake = lake().await;
    let ctx = &lake.ctx;
    run(
        ctx,
        "CREATE TABLE ice.ns.p (id INT, k STRING) PARTITIONED BY (k)",
    )
    .await
    .unwrap();
    for (sql, expected) in [
        (
            "PREPARE a AS INSERT INTO ice.ns.p PARTITION (k = 'x') VALUES ($1)",
            "PREPARE a AS INSERT INTO ice.ns.p PARTITION (…): a PARTITION clause in a \
             prepared statement is not supported; run the INSERT INTO … PARTITION statement \
             directly",
        ),
        (
            "PREPARE b AS INSERT OVERWRITE TABLE ice.ns.p PARTITION (k = 'x') SELECT 1",
            "PREPARE b AS INSERT OVERWRITE ice.ns.p PARTITION (…): a PARTITION clause in a \
             prepared statement is not supported",
        ),
        (
            "PREPARE c AS INSERT INTO ice.ns.p PARTITION (k) (k, id) VALUES ('y', $1)",
            "PREPARE c AS INSERT INTO ice.ns.p PARTITION (…)",
        ),
    ] {
        fails(&lake, "ns.p", sql, expected).await;
    }
    assert!(run(ctx, "EXECUTE a(1)").await.is_err(), "a was prepared");
    run(ctx, "INSERT INTO ice.ns.p PARTITION (k = 'x') VALUES (1)")
        .await
        .unwrap();
    // the form the error points to
    run(ctx, "PREPARE d AS INSERT INTO ice.ns.p SELECT $1, 'x'")
        .await
        .unwrap();
    run(ctx, "EXECUTE d(2)").await.unwrap();
    let rows = run(ctx, "SELECT id, k FROM ice.ns.p ORDER BY id")
        .await
        .unwrap();
    assert_eq!(
        datafusion::arrow::util::pretty::pretty_format_batches(&rows)
            .unwrap()
            .to_string(),
        "+----+---+\n| id | k |\n+----+---+\n| 1  | x |\n| 2  | x |\n+----+---+"
    );
}

/// Spark 4's `MERGE WITH SCHEMA EVOLUTION` (README: "Not yet") is refused naming the form,
/// as written and after a `WITH`, and changes nothing; sqlparser's own error said only
/// "Expected: USING, found: EVOLUTION".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_with_schema_evolution_is_refused_by_name() {
    let lake = lake().await;
    for q in [
        "CREATE TABLE ice.ns.e (id INT, v STRING)",
        "INSERT INTO ice.ns.e VALUES (1, 'a')",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    for sql in [
        "MERGE WITH SCHEMA EVOLUTION INTO ice.ns.e t USING (SELECT 1 AS id, 'b' AS v, 2 AS w) s \
         ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        "WITH s AS (SELECT 2 AS id, 'c' AS v) merge with schema evolution INTO ice.ns.e t \
         USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT *",
    ] {
        let err = fails(
            &lake,
            "ns.e",
            sql,
            "MERGE WITH SCHEMA EVOLUTION is not supported: add the source's new columns to \
             the target first (ALTER TABLE … ADD COLUMN)",
        )
        .await;
        assert!(!err.contains("EVOLUTION at Line"), "{err}");
    }
    // the same MERGE without the clause runs
    run(
        &lake.ctx,
        "MERGE INTO ice.ns.e t USING (SELECT 1 AS id, 'b' AS v) s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET *",
    )
    .await
    .unwrap();
}

/// A literal an `INSERT` cannot write into its column's type is an error naming the table
/// and the column (DataFusion's own said only "Optimizer rule 'simplify_expressions'
/// failed … Cannot cast string 'x' to value of Int64 type"), for `VALUES` rows, a column
/// list, later rows and an `INSERT … SELECT`; castable values and uuid text still go in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_literal_its_column_cannot_hold_names_the_column() {
    let lake = lake().await;
    for q in [
        "CREATE TABLE ice.ns.c (a BIGINT, b INT, u UUID)",
        "INSERT INTO ice.ns.c VALUES ('5', 2, '550e8400-e29b-41d4-a716-446655440000')",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let cases = [
        (
            "INSERT INTO ice.ns.c VALUES ('x', 1, NULL)",
            "column 'a' (Int64)",
            "Cannot cast string 'x'",
        ),
        (
            "INSERT INTO ice.ns.c VALUES (1, 10000000000, NULL)",
            "column 'b' (Int32)",
            "10000000000",
        ),
        (
            "INSERT INTO ice.ns.c VALUES (1, 1, NULL), (2, 'w', NULL)",
            "column 'b' (Int32)",
            "Cannot cast string 'w'",
        ),
        (
            "INSERT INTO ice.ns.c (b, a) VALUES ('y', 1)",
            "column 'b' (Int32)",
            "Cannot cast string 'y'",
        ),
        (
            "INSERT INTO ice.ns.c SELECT 1, 'z', NULL",
            "column 'b' (Int32)",
            "Cannot cast string 'z'",
        ),
    ];
    for (sql, column, value) in cases {
        let err = fails(&lake, "ns.c", sql, column).await;
        assert!(err.contains("INSERT INTO 'ice.ns.c'"), "{sql}: {err}");
        assert!(err.contains(value), "{sql}: {err}");
    }
    let rows = crate::dml::count(&lake.ctx, "SELECT count(*) FROM ice.ns.c WHERE a = 5").await;
    assert_eq!(rows, 1);
}

/// A change to a metadata table (`INSERT`, `DELETE`, `UPDATE`, `TRUNCATE`, `MERGE`) is
/// refused naming the metadata table by its SQL name and the table (README: "Metadata
/// tables are read-only"); the error said `metadata table Files of '<metadata file>'`,
/// the Rust variant name and a metadata file the user never wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_to_a_metadata_table_names_it() {
    let lake = lake().await;
    for q in [
        "CREATE TABLE ice.ns.m (id INT)",
        "INSERT INTO ice.ns.m VALUES (1)",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    for (sql, name) in [
        (
            "INSERT INTO ice.ns.\"m$files\" SELECT * FROM ice.ns.\"m$files\"",
            "files",
        ),
        ("DELETE FROM ice.ns.\"m$snapshots\"", "snapshots"),
        (
            "UPDATE ice.ns.\"m$history\" SET is_current_ancestor = false",
            "history",
        ),
        ("TRUNCATE TABLE ice.ns.\"m$all_manifests\"", "all_manifests"),
    ] {
        let err = fails(
            &lake,
            "ns.m",
            sql,
            &format!("metadata table '{name}' of the table at '"),
        )
        .await;
        assert!(
            err.contains("/ns/m' is read-only") && !err.contains(".metadata.json"),
            "{sql}: {err}"
        );
    }
}

/// `IN (subquery)` used as a value is refused by name (module `subquery_values`), but as a
/// condition over Iceberg tables it runs: in an inner join's `ON` the condition is also
/// pushed into the Iceberg scan as a pruning hint, which the check once took for a value
/// left uncomputed, refusing a query that ran (found by a tester). Rows by hand: `a` =
/// (1,1), (2,1), (3,2), (4,NULL), `b` = (1,1), (3,2), (5,3); ids joined are 1 and 3,
/// whose `g` (1, 2) are among `b`'s.
#[tokio::test]
async fn subqueries_over_iceberg_tables_run_as_conditions_and_are_refused_as_values() {
    let lake = lake().await;
    for sql in [
        "CREATE TABLE ice.ns.a (id INT, g INT)",
        "CREATE TABLE ice.ns.b (id INT, g INT)",
        "INSERT INTO ice.ns.a VALUES (1, 1), (2, 1), (3, 2), (4, NULL)",
        "INSERT INTO ice.ns.b VALUES (1, 1), (3, 2), (5, 3)",
    ] {
        run(&lake.ctx, sql).await.expect(sql);
    }
    let ids = |batches: Vec<datafusion::arrow::record_batch::RecordBatch>| -> Vec<i32> {
        let mut out = vec![];
        for b in &batches {
            let c = b
                .column(0)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int32Array>()
                .expect("ints");
            out.extend(c.iter().map(|v| v.expect("id")));
        }
        out
    };
    for (sql, expected) in [
        (
            "SELECT a.id FROM ice.ns.a a JOIN ice.ns.b b ON a.id = b.id \
             AND a.g IN (SELECT g FROM ice.ns.b) ORDER BY 1",
            vec![1, 3],
        ),
        (
            "SELECT a.id FROM ice.ns.a a JOIN ice.ns.b b ON a.id = b.id \
             AND a.g NOT IN (SELECT 2) ORDER BY 1",
            vec![1],
        ),
        (
            "SELECT id FROM ice.ns.a WHERE g IN (SELECT g FROM ice.ns.b) ORDER BY 1",
            vec![1, 2, 3],
        ),
    ] {
        let rows = run(&lake.ctx, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(ids(rows), expected, "{sql}");
    }
    let e = run(
        &lake.ctx,
        "SELECT id, g IN (SELECT g FROM ice.ns.b) AS found FROM ice.ns.a",
    )
    .await
    .expect_err("a value");
    assert!(e.contains("not as values"), "{e}");
}

/// Tester Q65 F4: Spark's metadata-table name with an unknown last part, of an existing
/// table, said "catalog 'ns' not found"; it says the metadata table is unknown and lists
/// them (as `"t$nope"` does). A version's metadata table in dotted parts
/// (`t.branch_dev.files`, which DataFusion refused as too many parts, hinting at a
/// namespace) names the form that reads it, which does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_metadata_table_of_a_dotted_name_is_named() {
    let lake = lake().await;
    for q in [
        "CREATE TABLE ice.ns.t (id INT)",
        "INSERT INTO ice.ns.t VALUES (1)",
        "ALTER TABLE ice.ns.t CREATE BRANCH dev",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    for name in ["nope", "snapshot"] {
        let err = fails(
            &lake,
            "ns.t",
            &format!("SELECT count(*) FROM ice.ns.t.{name}"),
            &format!(
                "metadata table '{name}' of table 'ice.ns.t' ('ice.ns.t.{name}' reads as a \
                 metadata table of it; metadata tables: snapshots, history"
            ),
        )
        .await;
        assert!(!err.contains("catalog"), "{err}");
        assert!(err.contains("position_deletes"), "{err}");
    }
    let err = fails(
        &lake,
        "ns.t",
        "SELECT count(*) FROM ice.ns.t.branch_dev.files",
        "'ice.ns.t.branch_dev.files' names metadata table 'files' of version 'branch_dev' of \
         table 'ice.ns.t', which is written ice.ns.\"t@dev$files\"",
    )
    .await;
    assert!(!err.contains("Expected 1, 2 or 3 parts"), "{err}");
    // the form named reads it
    assert_eq!(
        crate::catalog::scalar_i64(&lake.ctx, "SELECT count(*) FROM ice.ns.\"t@dev$files\"").await,
        1
    );
    // a missing table keeps DataFusion's error
    let err = run(&lake.ctx, "SELECT count(*) FROM ice.ns.nope.files")
        .await
        .expect_err("missing");
    assert!(!err.contains("metadata table"), "{err}");
}

/// Tester P65 F1, the whole kind: the v3 row lineage names are refused in any case (a
/// quoted `"_ROW_ID"` was taken, and DuckDB then read it for `_row_id`) by every check:
/// CREATE TABLE, ADD COLUMN, RENAME COLUMN and the upgrade to v3; the table is unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_lineage_names_are_refused_in_any_case() {
    let lake = lake().await;
    for name in ["_ROW_ID", "_Last_Updated_Sequence_Number"] {
        let err = run(
            &lake.ctx,
            &format!(
                "CREATE TABLE ice.ns.c (id BIGINT, \"{name}\" BIGINT) \
                 TBLPROPERTIES ('format-version'='3')"
            ),
        )
        .await
        .expect_err("reserved name");
        assert!(
            err.contains(&format!(
                "column '{name}' (id 2) has the name of a row lineage field"
            )),
            "{err}"
        );
    }
    for q in [
        "CREATE TABLE ice.ns.v3 (id BIGINT, r BIGINT) TBLPROPERTIES ('format-version'='3')",
        "CREATE TABLE ice.ns.v2 (id BIGINT, \"_Row_Id\" BIGINT) \
         TBLPROPERTIES ('format-version'='2')",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    for (table, sql) in [
        (
            "ns.v3",
            "ALTER TABLE ice.ns.v3 ADD COLUMN \"_Last_Updated_Sequence_Number\" INT",
        ),
        (
            "ns.v3",
            "ALTER TABLE ice.ns.v3 RENAME COLUMN r TO \"_ROW_ID\"",
        ),
        (
            "ns.v2",
            "ALTER TABLE ice.ns.v2 SET TBLPROPERTIES ('format-version'='3')",
        ),
    ] {
        fails(&lake, table, sql, "has the name of a row lineage field").await;
    }
}

/// Tester P65 F2: an INSERT listing a metadata column of its target said "No field named
/// _row_id" of a column the user can read; it says metadata columns are read-only, as an
/// UPDATE assigning one does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insert_listing_a_metadata_column_says_it_is_read_only() {
    let lake = lake().await;
    run(
        &lake.ctx,
        "CREATE TABLE ice.ns.u (id BIGINT, s VARCHAR) TBLPROPERTIES ('format-version'='3')",
    )
    .await
    .expect("create");
    for (sql, column) in [
        (
            "INSERT INTO ice.ns.u (id, _row_id) VALUES (1, 5)",
            "_row_id",
        ),
        (
            "INSERT INTO ice.ns.u (id, _last_updated_sequence_number) SELECT 1, 2",
            "_last_updated_sequence_number",
        ),
        ("INSERT INTO ice.ns.u (_file, id) VALUES ('f', 1)", "_file"),
    ] {
        fails(
            &lake,
            "ns.u",
            sql,
            &format!(
                "INSERT into 'ice.ns.u' lists metadata column '{column}': metadata columns \
                 (_file, _pos, …) are read-only"
            ),
        )
        .await;
    }
    // a column that is none stays DataFusion's error
    let err = run(&lake.ctx, "INSERT INTO ice.ns.u (id, nope) VALUES (1, 5)")
        .await
        .expect_err("no column");
    assert!(err.contains("nope") && !err.contains("read-only"), "{err}");
}

/// Tester Q65 F3: a rolled-back snapshot expired cuts the history log at its entry (as
/// Java's `updateSnapshotLog` does) though no kept snapshot lost its parent; a time from
/// before the cut, after the first snapshot, says the history was expired (it said "no
/// snapshot was current then; its first snapshot is from" an earlier time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn as_of_a_time_before_a_log_cut_by_an_expired_rolled_back_snapshot() {
    let lake = lake().await;
    for q in [
        "CREATE TABLE ice.ns.e (id BIGINT) TBLPROPERTIES ('format-version'='2')",
        "INSERT INTO ice.ns.e VALUES (1)",
        "INSERT INTO ice.ns.e VALUES (2)",
    ] {
        run(&lake.ctx, q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let metadata = lake
        .catalog
        .load_table(&TableIdent::parse("ns.e"))
        .await
        .expect("load")
        .metadata()
        .clone();
    let first = metadata.snapshot_log[0].clone();
    let first_ms = metadata
        .snapshot_by_id(first.snapshot_id)
        .expect("first")
        .timestamp_ms;
    for q in [
        format!(
            "CALL ice.system.rollback_to_snapshot('ns.e', {})",
            first.snapshot_id
        ),
        "INSERT INTO ice.ns.e VALUES (3)".to_string(),
    ] {
        run(&lake.ctx, &q)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    run(
        &lake.ctx,
        "CALL ice.system.expire_snapshots(table => 'ns.e', older_than => now(), retain_last => 2)",
    )
    .await
    .expect("expire");
    let err = fails(
        &lake,
        "ns.e",
        &format!("SELECT * FROM ice.ns.e.at_timestamp_{first_ms}"),
        "was expired, so which snapshot was current then is no longer known",
    )
    .await;
    assert!(!err.contains("no snapshot was current then"), "{err}");
}
