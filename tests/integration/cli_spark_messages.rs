//! A Spark user's scripts through the `icefloe` program: the ways README's "Spark
//! expressions that keep DataFusion's meaning" gives to get Spark's results, the error for
//! a column of another case, and `committed snapshot <id>` after the procedures that
//! commit one.

use crate::cli::{assert_failure, assert_success, catalog_with, run, stderr, stdout};

/// Each way README gives to get Spark's result runs and gives it (and DataFusion's
/// meaning is what README says it is, beside it).
#[test]
fn cli_readme_ways_to_spark_results_give_sparks_values() {
    let (_dir, catalog) = catalog_with(
        "CREATE SCHEMA db; CREATE TABLE db.ratio (a INT, b INT, r DOUBLE) USING iceberg; \
         INSERT INTO db.ratio VALUES (5, 2, NULL), (1, 4, NULL)",
    );
    let script = r"UPDATE db.ratio SET r = CAST(a AS DOUBLE) / b;
SELECT a, r, a / b AS truncated FROM db.ratio ORDER BY a;
CREATE TABLE db.lit USING iceberg AS SELECT CAST(1 AS INT) AS i, 1 + 1 AS l,
  CAST(array(1, 2) AS INT[]) AS arr, named_struct('a', CAST(1 AS INT)) AS st;
SELECT column_name, data_type FROM information_schema.columns
  WHERE table_schema = 'db' AND table_name = 'lit' ORDER BY ordinal_position;
SELECT E'a\tb' = 'a' || chr(9) || 'b' AS tab, length(E'C:\\data') AS n, E'it\'s' AS q,
  'it''s' AS q2, length('a\tb') AS plain;
SELECT substr('abcdef', 1, 2) AS a, right('abcdef', 2) AS b, substr('abcdef', 0, 2) AS a0,
  substr('abcdef', -2) AS b0;
SELECT to_char(TIMESTAMP '2024-01-01 10:00:00.5', '%Y-%m-%d %H:%M:%S') AS t,
  to_char(TIMESTAMP '2024-01-01 10:00:00.5', '%Y-%m-%d %H:%M:%S%.f') AS f,
  CAST(TIMESTAMP '2024-01-01 10:00:00.5' AS STRING) AS c;
SELECT a, CAST(a AS STRING) AS a_text FROM db.ratio ORDER BY a;
";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("spark.sql");
    std::fs::write(&file, script).unwrap();
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert_success(&out);
    let text = stdout(&out);
    for expected in [
        "a,r,truncated\n1,0.25,0\n5,2.5,2\n",
        "column_name,data_type\ni,Int32\nl,Int64\narr,",
        "tab,n,q,q2,plain\ntrue,7,it's,it's,4\n",
        "a,b,a0,b0\nab,ef,a,abcdef\n",
        "t,f,c\n2024-01-01 10:00:00,2024-01-01 10:00:00.500,2024-01-01T10:00:00.500\n",
        "a,a_text\n1,1\n5,5\n",
    ] {
        assert!(text.contains(expected), "{expected}\n---\n{text}");
    }
    // the list and the struct hold ints
    let types = text
        .split("column_name,data_type\n")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .unwrap_or_default();
    assert!(
        types.contains("arr,\"List(Int32") && types.contains("st,\"Struct(\"\"a\"\": Int32)\""),
        "{types}"
    );
    // a cast beside its column runs, named as Spark prints it; two items of one name
    // that are no cast are refused, as README says
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "SELECT a, CAST(a AS STRING) FROM db.ratio ORDER BY a",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "a,CAST(a AS STRING)\n1,1\n5,5\n");
    let out = run(&["--catalog", &catalog, "-c", "SELECT a, a FROM db.ratio"]);
    assert_failure(&out);
    assert!(
        stderr(&out).contains("Projections require unique expression names"),
        "{}",
        stderr(&out)
    );
}

/// The `UPDATE` of a column of another case names the name looked up (`msg`, not the
/// `Msg` the statement wrote, which the table has) and the column to quote.
#[test]
fn cli_update_of_a_column_of_another_case_says_to_quote_it() {
    let (_dir, catalog) = catalog_with(
        "CREATE SCHEMA db; CREATE TABLE db.bt (`ID` BIGINT, `Msg` STRING) USING iceberg; \
         INSERT INTO db.bt VALUES (1, 'a')",
    );
    let out = run(&["--catalog", &catalog, "-c", "UPDATE db.bt SET Msg = 'b'"]);
    assert_failure(&out);
    assert!(
        stderr(&out).contains(
            "no column 'msg' in UPDATE SET of 'db.bt'; the table has a column \"Msg\": \
             unquoted names are lowercased, so write it quoted, \"Msg\""
        ),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "UPDATE db.bt SET \"Msg\" = 'b'; SELECT \"Msg\" FROM db.bt",
    ]);
    assert_success(&out);
    assert!(stdout(&out).ends_with("Msg\nb\n"), "{}", stdout(&out));
}

/// A CTAS, and a `CREATE OR REPLACE … AS` of a table that exists, print `committed
/// snapshot <id>` for the snapshot they commit, as an `INSERT` does (they printed none);
/// its integer literal columns are Spark's `int` (`1 AS i`, and in a list or struct), a
/// larger one or a `100L` a `long`.
#[test]
fn cli_ctas_prints_the_committed_snapshot_and_types_literals_as_spark() {
    let (_dir, catalog) = catalog_with("CREATE SCHEMA db");
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "CREATE TABLE db.lit USING iceberg AS SELECT 1 AS i, -7 AS neg, 3000000000 AS big, \
         100L AS l, 1 + 1 AS sum, array(1, 2) AS arr, named_struct('a', 1, 'b', 'x') AS st; \
         SELECT column_name, data_type FROM information_schema.columns \
         WHERE table_schema = 'db' AND table_name = 'lit' ORDER BY ordinal_position; \
         SELECT i, neg, big, l, sum, arr, st FROM db.lit",
    ]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(
        text.contains(
            "column_name,data_type\ni,Int32\nneg,Int32\nbig,Int64\nl,Int64\nsum,Int64\narr,"
        ),
        "{text}"
    );
    assert!(
        text.contains("arr,\"List(Int32")
            && text.contains("st,\"Struct(\"\"a\"\": Int32, \"\"b\"\": "),
        "{text}"
    );
    assert!(
        text.contains("i,neg,big,l,sum,arr,st\n1,-7,3000000000,100,2,"),
        "{text}"
    );
    let created = snapshot_ids(&catalog, "db.lit");
    assert_eq!(created.len(), 1);
    let printed = |out: &std::process::Output| -> Vec<String> {
        stderr(out)
            .lines()
            .filter_map(|l| l.strip_prefix("committed snapshot "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(printed(&out), created, "{}", stderr(&out));
    let out = run(&[
        "--catalog",
        &catalog,
        "-c",
        "CREATE OR REPLACE TABLE db.lit USING iceberg AS SELECT 2 AS i",
    ]);
    assert_success(&out);
    let after = snapshot_ids(&catalog, "db.lit");
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(printed(&out), &after[1..], "{}", stderr(&out));
}

/// The ids `SELECT snapshot_id FROM <table>.snapshots ORDER BY committed_at` lists.
fn snapshot_ids(catalog: &str, table: &str) -> Vec<String> {
    let out = run(&[
        "--catalog",
        catalog,
        "--format",
        "csv",
        "-c",
        &format!("SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at, snapshot_id"),
    ]);
    assert_success(&out);
    stdout(&out).lines().skip(1).map(str::to_string).collect()
}

/// A procedure that commits a snapshot prints `committed snapshot <id>` as a write does
/// (README: "after each procedure that commits new snapshots"); one that only moves a
/// ref prints none.
#[test]
fn cli_procedures_that_commit_print_the_committed_snapshot() {
    let (_dir, catalog) = catalog_with(
        "CREATE SCHEMA db; CREATE TABLE db.k (id INT) USING iceberg; \
         INSERT INTO db.k VALUES (1); INSERT INTO db.k VALUES (2)",
    );
    let before = snapshot_ids(&catalog, "db.k");
    assert_eq!(before.len(), 2);
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "CALL system.rewrite_data_files(table => 'db.k', options => map('min-input-files', '2')); \
         CALL system.rewrite_manifests('db.k')",
    ]);
    assert_success(&out);
    let after = snapshot_ids(&catalog, "db.k");
    let added = &after[before.len()..];
    // the compaction's `replace`, and the manifest rewrite's
    assert_eq!(added.len(), 2, "{after:?}\n{}", stdout(&out));
    let messages = stderr(&out);
    let printed: Vec<&str> = messages
        .lines()
        .filter_map(|l| l.strip_prefix("committed snapshot "))
        .collect();
    assert_eq!(printed, added, "{messages}");
    // a rollback moves `main` and writes no snapshot: nothing printed
    let out = run(&[
        "--catalog",
        &catalog,
        "-c",
        &format!("CALL system.rollback_to_snapshot('db.k', {})", before[1]),
    ]);
    assert_success(&out);
    assert!(
        !stderr(&out).contains("committed snapshot"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot_ids(&catalog, "db.k").len(), after.len());
}
