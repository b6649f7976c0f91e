//! The CLI's output formats tell the truth, `-o FILE` and `COPY … TO` a file are
//! atomic, a closed pipe ends
//! quietly, and a failed statement makes the run fail, however the SQL arrives.

use std::io::Read;
use std::process::Stdio;

use crate::cli::{
    assert_failure, assert_success, icefloe, run, run_with_stdin, sample_table, stderr, stdout,
};

/// Values JSON cannot hold as numbers, NULL map values, non-string map keys, NULL next
/// to an empty string, nested values.
const TRICKY: &str = "SELECT CAST(1.50 AS DECIMAL(10,2)) AS d, \
     CAST('12345678901234567.89' AS DECIMAL(20,2)) AS big, \
     CAST('NaN' AS DOUBLE) AS nan, CAST('inf' AS DOUBLE) AS pinf, \
     CAST('-inf' AS DOUBLE) AS ninf, 2.5e0 AS f, \
     MAP(['a', 'b'], [1, NULL]) AS m, MAP([1, 2], ['x', NULL]) AS mi, \
     CAST(NULL AS VARCHAR) AS n, '' AS e, named_struct('z', 1, 'a', [1, 2]) AS s";

#[test]
fn cli_json_keeps_nulls_non_finite_floats_decimals_and_maps() {
    let out = run(&["--format", "json", "-c", TRICKY]);
    assert_success(&out);
    assert_eq!(
        stdout(&out),
        "{\"d\":\"1.50\",\"big\":\"12345678901234567.89\",\"nan\":\"NaN\",\"pinf\":\"Infinity\",\
         \"ninf\":\"-Infinity\",\"f\":2.5,\"m\":{\"a\":1,\"b\":null},\
         \"mi\":[{\"key\":1,\"value\":\"x\"},{\"key\":2,\"value\":null}],\"n\":null,\"e\":\"\",\
         \"s\":{\"z\":1,\"a\":[1,2]}}\n"
    );
}

/// `--null-string` is written unquoted: one holding a `,` split the row into one field
/// more (`a,b,x` for NULL and `'x'`), a `"` or line break opened a quoted field. Such a
/// text is refused as the option's value (status 2, as other bad arguments); others are
/// written as given.
#[test]
fn cli_null_string_holds_no_csv_syntax() {
    let sql = "SELECT CAST(NULL AS INT) AS a, 'x' AS b";
    for null in ["a,b", "\"", "n\nl", "n\rl"] {
        let out = run(&["--format", "csv", "--null-string", null, "-c", sql]);
        assert_eq!(out.status.code(), Some(2), "{null:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("which CSV reads as part of its syntax"),
            "{null:?}: {}",
            stderr(&out)
        );
        assert_eq!(stdout(&out), "");
    }
    let out = run(&["--format", "csv", "--null-string", "N/A;-", "-c", sql]);
    assert_success(&out);
    assert_eq!(stdout(&out), "a,b\nN/A;-,x\n");
}

/// Two columns of one name (a join's `SELECT *`) wrote JSON objects with the key twice
/// (`{"a":1,"a":2}`: readers keep one value) and a Parquet file that read back as one
/// column: an error naming the columns, before the statement runs, and no file is
/// written; the table and CSV show both columns as they are.
#[test]
fn cli_json_and_parquet_refuse_two_columns_of_one_name() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "SELECT * FROM (SELECT 1 AS a, 'p' AS b) x, (SELECT 2 AS a) y";
    let parquet = dir.path().join("out.parquet");
    for args in [
        vec!["--format", "json", "-c", sql],
        vec!["-o", parquet.to_str().unwrap(), "-c", sql],
    ] {
        let out = run(&args);
        assert_failure(&out);
        let what = if args[0] == "-o" {
            "a Parquet file needs"
        } else {
            "JSON objects need"
        };
        assert_eq!(
            stderr(&out),
            format!(
                "error: the result has more than one column named 'a' (x.a, y.a); {what} a \
                 name per column: name them apart (SELECT … AS a_1, …)\n"
            )
        );
        assert_eq!(stdout(&out), "");
    }
    assert!(!parquet.exists());
    let out = run(&["--format", "csv", "-c", sql]);
    assert_success(&out);
    assert_eq!(stdout(&out), "a,b,a\n1,p,2\n");
    // named apart, both are kept
    let out = run(&[
        "--format",
        "json",
        "-c",
        "SELECT x.a, y.a AS a_1 FROM (SELECT 1 AS a) x, (SELECT 2 AS a) y",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "{\"a\":1,\"a_1\":2}\n");
}

/// A struct with two fields of one name (`{a: 1, a: 2}`, at any depth) wrote a JSON
/// object with the key twice: refused as two columns of one name are, naming the struct.
#[test]
fn cli_json_and_parquet_refuse_two_struct_fields_of_one_name() {
    let dir = tempfile::tempdir().unwrap();
    let parquet = dir.path().join("out.parquet");
    for (sql, path) in [
        ("SELECT 1 AS k, {a: 1, a: 2} AS s", "s"),
        ("SELECT [{x: {a: 1, b: 2, a: 3}}] AS l", "l.item.x"),
    ] {
        for args in [
            vec!["--format", "json", "-c", sql],
            vec!["-o", parquet.to_str().unwrap(), "-c", sql],
        ] {
            let out = run(&args);
            assert_failure(&out);
            let what = if args[0] == "-o" {
                "a Parquet file needs"
            } else {
                "JSON objects need"
            };
            assert_eq!(
                stderr(&out),
                format!(
                    "error: the struct '{path}' of the result has more than one field named \
                     'a'; {what} a name per field: name them apart\n"
                )
            );
            assert_eq!(stdout(&out), "");
            assert!(!parquet.exists());
        }
    }
    // fields named apart are written
    let out = run(&["--format", "json", "-c", "SELECT {a: 1, b: 2} AS s"]);
    assert_success(&out);
    assert_eq!(stdout(&out), "{\"s\":{\"a\":1,\"b\":2}}\n");
}

#[test]
fn cli_csv_writes_nested_values_as_json_and_tells_null_from_empty() {
    let out = run(&["--format", "csv", "-c", TRICKY]);
    assert_success(&out);
    assert_eq!(
        stdout(&out),
        "d,big,nan,pinf,ninf,f,m,mi,n,e,s\n\
         1.50,12345678901234567.89,NaN,inf,-inf,2.5,\"{\"\"a\"\":1,\"\"b\"\":null}\",\
         \"[{\"\"key\"\":1,\"\"value\"\":\"\"x\"\"},{\"\"key\"\":2,\"\"value\"\":null}]\",,\"\",\
         \"{\"\"z\"\":1,\"\"a\"\":[1,2]}\"\n"
    );
    let out = run(&[
        "--format",
        "csv",
        "--null-string",
        "\\N",
        "-c",
        // `NULL AS u`: an untyped NULL (a column of Arrow type Null)
        "SELECT CAST(NULL AS VARCHAR) AS n, NULL AS u, '' AS e, '\\N' AS literal",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "n,u,e,literal\n\\N,\\N,\"\",\"\\N\"\n");
    let out = run(&["--format", "json", "-c", "SELECT 1 AS id, NULL AS u"]);
    assert_success(&out);
    assert_eq!(stdout(&out), "{\"id\":1,\"u\":null}\n");
}

#[test]
fn cli_table_shows_null() {
    let out = run(&["-c", "SELECT CAST(NULL AS VARCHAR) AS n, '' AS e"]);
    assert_success(&out);
    assert_eq!(
        stdout(&out),
        "+------+---+\n| n    | e |\n+------+---+\n| NULL |   |\n+------+---+\n"
    );
}

/// Every metadata table of a table with nested `map<int, …>` columns (`$files`,
/// `$entries`) exports in every text format.
#[test]
fn cli_every_metadata_table_exports_in_every_format() {
    let table = format!("t={}", sample_table().display());
    for name in [
        "snapshots",
        "history",
        "metadata_log_entries",
        "refs",
        "manifests",
        "all_manifests",
        "files",
        "data_files",
        "delete_files",
        "entries",
        "all_files",
        "all_entries",
        "partitions",
        "position_deletes",
    ] {
        for format in ["table", "csv", "json"] {
            let sql = format!("SELECT * FROM \"t${name}\"");
            let out = run(&["--table", &table, "--format", format, "-c", &sql]);
            assert_success(&out);
            // table and CSV print a header at least ($delete_files is empty here)
            assert!(
                format == "json" || !stdout(&out).is_empty(),
                "{name} as {format}"
            );
        }
    }
    // the map<int, long> column_sizes as key/value pairs, and its file path
    let out = run(&[
        "--table",
        &table,
        "--format",
        "json",
        "-c",
        "SELECT file_path, column_sizes FROM \"t$files\" LIMIT 1",
    ]);
    assert_success(&out);
    let row: serde_json::Value = serde_json::from_str(stdout(&out).trim()).expect("one row");
    let sizes = row["column_sizes"].as_array().expect("pairs");
    assert!(!sizes.is_empty(), "{row}");
    assert!(
        sizes
            .iter()
            .all(|p| p["key"].is_i64() && p["value"].is_i64()),
        "{row}"
    );
}

#[test]
fn cli_information_schema_types_have_no_field_id_noise() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = format!("sqlite:{}", dir.path().join("c.db").display());
    let out = run(&[
        "--catalog",
        &catalog,
        "--create-catalog",
        "--format",
        "csv",
        "-c",
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT, s STRUCT<a INT, b VARCHAR>, xs ARRAY<INT>); \
         SELECT column_name, data_type FROM information_schema.columns \
         WHERE table_name = 't' ORDER BY ordinal_position",
    ]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(!text.contains("field_id"), "{text}");
    assert!(
        text.starts_with("column_name,data_type\nid,Int64\ns,"),
        "{text}"
    );
    assert!(text.contains("xs,\"List(Int32"), "{text}");
}

/// PyIceberg's corpus table with a `uuid` (bucketed) and a `time` column, or `None`
/// (reported as skipped) when the corpus is not there.
fn uuid_time_corpus_table() -> Option<std::path::PathBuf> {
    let corpus = std::env::var_os("ICEFLOE_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
        })
        .join("pyiceberg_v2_types_uuid_time");
    if corpus.is_dir() {
        Some(corpus)
    } else {
        eprintln!("SKIPPED: no corpus table at {}", corpus.display());
        None
    }
}

#[test]
fn cli_uuids_print_in_canonical_form() {
    // PyIceberg wrote a uuid column in the corpus table
    let Some(corpus) = uuid_time_corpus_table() else {
        return;
    };
    let table = format!("t={}", corpus.display());
    let sql = "SELECT u FROM t WHERE u IS NOT NULL LIMIT 1";
    let canonical = |s: &str| {
        let parts: Vec<usize> = s.split('-').map(str::len).collect();
        parts == [8, 4, 4, 4, 12] && s.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
    };
    for format in ["csv", "json", "table"] {
        let out = run(&["--table", &table, "--format", format, "-c", sql]);
        assert_success(&out);
        let text = stdout(&out);
        let found = text
            .split(|c: char| !(c == '-' || c.is_ascii_hexdigit()))
            .any(canonical);
        assert!(found, "{format}: {text}");
    }
}

#[test]
fn cli_uuid_string_literals_filter_the_bucketed_corpus_table() {
    // PyIceberg's table is partitioned by bucket(4, u): the string literal must become
    // the UUID's bytes before the manifests' pruning and the scan see it
    let Some(corpus) = uuid_time_corpus_table() else {
        return;
    };
    let table = format!("t={}", corpus.display());
    let query = |sql: &str| {
        let out = run(&["--table", &table, "--format", "csv", "-c", sql]);
        assert_success(&out);
        stdout(&out)
    };
    let listed = query("SELECT u FROM t WHERE u IS NOT NULL ORDER BY u");
    let uuids: Vec<&str> = listed.lines().skip(1).collect();
    assert!(uuids.len() >= 2, "{listed}");
    let total = query("SELECT count(*) AS n FROM t");
    for u in [uuids[0], uuids[uuids.len() - 1]] {
        let hex = u.replace('-', "");
        let by_bytes = query(&format!(
            "SELECT count(*) AS n FROM t WHERE u = arrow_cast(decode('{hex}', 'hex'), 'FixedSizeBinary(16)')"
        ));
        assert_eq!(by_bytes.trim(), "n\n1", "{u}");
        let by_string = query(&format!("SELECT count(*) AS n FROM t WHERE u = '{u}'"));
        assert_eq!(by_string, by_bytes, "{u}");
        let upper = query(&format!(
            "SELECT count(*) AS n FROM t WHERE u = '{}'",
            u.to_uppercase()
        ));
        assert_eq!(upper, by_bytes, "{u}");
        // the complement plus the null rows is the whole table
        let others = query(&format!(
            "SELECT count(*) + (SELECT count(*) FROM t WHERE u IS NULL) + 1 AS n \
             FROM t WHERE u <> '{u}'"
        ));
        assert_eq!(others, total, "{u}");
    }
    let both = query(&format!(
        "SELECT count(*) AS n FROM t WHERE u IN ('{}', '{}')",
        uuids[0],
        uuids[uuids.len() - 1]
    ));
    assert_eq!(both.trim(), "n\n2");
    let all = query(&format!(
        "SELECT count(*) AS n FROM t WHERE u BETWEEN '{}' AND '{}'",
        uuids[0],
        uuids[uuids.len() - 1]
    ));
    assert_eq!(all.trim(), format!("n\n{}", uuids.len()));
    let out = run(&[
        "--table",
        &table,
        "-c",
        "SELECT count(*) FROM t WHERE u = 'no-such-uuid'",
    ]);
    assert_failure(&out);
    let err = stderr(&out);
    assert!(err.contains("'no-such-uuid' is not a UUID"), "{err}");
}

#[test]
fn cli_time_literals_filter_the_corpus_time_column() {
    // PyIceberg wrote an Iceberg `time` column (microseconds); `TIME '…'` is nanoseconds
    let Some(corpus) = uuid_time_corpus_table() else {
        return;
    };
    let table = format!("t={}", corpus.display());
    let query = |sql: &str| {
        let out = run(&["--table", &table, "--format", "csv", "-c", sql]);
        assert_success(&out);
        stdout(&out)
    };
    // the string form, which DataFusion casts to the column's type, is the reference
    for (typed, string) in [
        ("t > TIME '12:00:00'", "t > '12:00:00'"),
        ("t <= TIME '12:00:00'", "t <= '12:00:00'"),
        (
            "t BETWEEN TIME '02:00:00' AND TIME '22:22:22.000154'",
            "t BETWEEN '02:00:00' AND '22:22:22.000154'",
        ),
        ("t = TIME '22:22:22.000154'", "t = '22:22:22.000154'"),
    ] {
        let by_time = query(&format!("SELECT count(*) AS n FROM t WHERE {typed}"));
        let by_string = query(&format!("SELECT count(*) AS n FROM t WHERE {string}"));
        assert_eq!(by_time, by_string, "{typed}");
        assert_ne!(by_time.trim(), "n\n0", "{typed}");
    }
    // a literal finer than the column compares exactly
    let finer = query("SELECT count(*) AS n FROM t WHERE t = TIME '22:22:22.0001545'");
    assert_eq!(finer.trim(), "n\n0");
}

#[test]
fn cli_output_file_is_replaced_only_when_the_run_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["csv", "json", "table", "parquet"] {
        let path = dir.path().join(format!("out.{format}"));
        std::fs::write(&path, b"old contents").unwrap();
        let out = run(&[
            "--format",
            format,
            "-o",
            path.to_str().unwrap(),
            "-c",
            "SELECT 1 AS a; SELECT * FROM no_such_table",
        ]);
        assert_failure(&out);
        assert_eq!(std::fs::read(&path).unwrap(), b"old contents", "{format}");
        let out = run(&[
            "--format",
            format,
            "-o",
            path.to_str().unwrap(),
            "-c",
            "SELECT 1 AS a",
        ]);
        assert_success(&out);
        assert_ne!(std::fs::read(&path).unwrap(), b"old contents", "{format}");
    }
    // no temporary file is left behind
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
}

/// Without `--format`, `-o FILE` writes the format its extension names (as a user who
/// types `-o out.parquet` expects); `--format` still wins, other extensions get the table.
#[test]
fn cli_output_file_extension_picks_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let sql = "SELECT 1 AS a, 'x' AS b";
    let write = |name: &str, extra: &[&str]| {
        let path = dir.path().join(name);
        let mut args = extra.to_vec();
        let p = path.to_str().unwrap().to_string();
        args.extend(["-o", &p, "-c", sql]);
        assert_success(&run(&args));
        std::fs::read(&path).unwrap()
    };
    let parquet = write("out.PARQUET", &[]);
    assert!(parquet.starts_with(b"PAR1") && parquet.ends_with(b"PAR1"));
    assert_eq!(write("out.csv", &[]), b"a,b\n1,x\n");
    assert_eq!(write("out.ndjson", &[]), b"{\"a\":1,\"b\":\"x\"}\n");
    assert_eq!(write("out.jsonl", &[]), write("out.json", &[]));
    let table = String::from_utf8(write("out.txt", &[])).unwrap();
    assert!(table.contains("| a | b |"), "{table}");
    assert_eq!(write("forced.parquet", &["--format", "csv"]), b"a,b\n1,x\n");
}

/// A reader that stops after the first line: the rest is written into a closed pipe.
#[test]
fn cli_closed_pipe_ends_quietly_in_every_format() {
    for format in ["table", "csv", "json"] {
        let home = tempfile::tempdir().unwrap();
        let mut child = icefloe(home.path())
            .args([
                "--format",
                format,
                "-c",
                "SELECT v, repeat('x', 100) AS pad FROM generate_series(1, 200000) AS s(v)",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 64];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{format}");
    }
}

#[test]
fn cli_any_failed_statement_fails_the_run() {
    let sql = "SELECT 1 AS a;\nSELECT * FROM no_such_table;\nSELECT 2 AS b;\n";
    // -c and -f stop at the failing statement
    let out = run(&["--format", "csv", "-c", sql]);
    assert_failure(&out);
    assert_eq!(stdout(&out), "a\n1\n");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("q.sql");
    std::fs::write(&file, sql).unwrap();
    let out = run(&["--format", "csv", "-f", file.to_str().unwrap()]);
    assert_failure(&out);
    // -f - and a pipe into the shell
    let out = run_with_stdin(&["--format", "csv", "-f", "-"], sql);
    assert_failure(&out);
    let out = run_with_stdin(&["--format", "csv"], sql);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // the shell reports the error and runs the rest
    assert_eq!(stdout(&out), "a\n1\nb\n2\n");
    assert!(stderr(&out).contains("no_such_table"), "{}", stderr(&out));
}

#[test]
fn cli_quit_works_on_a_continuation_line() {
    let out = run_with_stdin(
        &["--format", "csv"],
        "SELECT 1 AS a;\nSELECT 2\n\\q\nSELECT 3 AS c;\n",
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "a\n1\n");
    let out = run_with_stdin(&["--format", "csv"], "SELECT 1 AS a;\nquit\nSELECT 2;\n");
    assert_success(&out);
    assert_eq!(stdout(&out), "a\n1\n");
    // piped in, a bare `exit` inside a statement is part of it (a tester's: the script
    // ended there, status 0, nothing run)
    let out = run_with_stdin(
        &["--format", "csv"],
        "SELECT id,\n  exit\nFROM (SELECT 1 AS id, 2 AS exit) s;\nSELECT 3 AS c;\n",
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "id,exit\n1,2\nc\n3\n");
    // inside a string, quoted name or comment the line is text (a tester's: the shell
    // ended with status 0, the statement and the rest unrun)
    let out = run_with_stdin(
        &["--format", "csv"],
        "SELECT length('one\nexit\n\\q\nquit\nfive') AS n, 1 AS \"a\nquit\";\n\
         SELECT 2 /* a\nexit\n*/ AS b;\nSELECT 3 AS c;\n",
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "n,\"a\nquit\"\n21,1\nb\n2\nc\n3\n");
}

/// A `COPY … TO` a file whose query fails half-way leaves the file that was there (and no
/// partial or temporary file; DataFusion's sink finished the partial file under the
/// target's name); one that succeeds replaces it, and a directory output is unchanged.
#[test]
fn cli_failed_copy_leaves_the_target_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    // fails after 200,000 rows, several batches into the file
    let failing = "SELECT CASE WHEN value < 200000 THEN value ELSE 1 / (value - value) END AS v \
                   FROM generate_series(1, 300000)";
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    for name in ["out.csv", "out.parquet", "out.json"] {
        std::fs::write(dir.path().join(name), "before").unwrap();
        let out = run(&["-c", &format!("COPY ({failing}) TO '{d}/{name}'")]);
        assert_failure(&out);
        assert!(stderr(&out).contains("Divide by zero"), "{}", stderr(&out));
        assert_eq!(
            std::fs::read(dir.path().join(name)).unwrap(),
            b"before",
            "{name}"
        );
        // a file that was not there is not made
        let out = run(&["-c", &format!("COPY ({failing}) TO '{d}/new_{name}'")]);
        assert_failure(&out);
    }
    assert_eq!(listing(), ["out.csv", "out.json", "out.parquet"]);
    let out = run(&[
        "--format",
        "csv",
        "-c",
        &format!("COPY (SELECT 7 AS a) TO '{d}/out.csv'; SELECT * FROM '{d}/out.csv'"),
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "count\n1\na\n7\n");
    assert_eq!(listing(), ["out.csv", "out.json", "out.parquet"]);
    // a name near the file system's 255 bytes (a tester's: the temporary name, the
    // target's with more around it, did not fit)
    let long = format!("{}.csv", "é".repeat(125));
    assert_eq!(long.len(), 254);
    let out = run(&["-c", &format!("COPY (SELECT 1 AS a) TO '{d}/{long}'")]);
    assert_success(&out);
    assert!(dir.path().join(&long).is_file());
    std::fs::remove_file(dir.path().join(&long)).unwrap();
    // a directory output is DataFusion's as before
    let out = run(&[
        "-c",
        &format!("COPY (SELECT 1 AS a) TO '{d}/dir/' STORED AS CSV"),
    ]);
    assert_success(&out);
    assert_eq!(
        std::fs::read_dir(dir.path().join("dir")).unwrap().count(),
        1
    );
}

/// Tester Q65 F5: a `uuid` inside a metadata table or metadata column (a partition tuple's
/// field, a `readable_metrics` bound) is typed as the table's `uuid` columns are, so it
/// prints 8-4-4-4-12 in every format (it printed 32 hex digits) and a string literal
/// filters it.
#[test]
fn cli_uuids_inside_metadata_tables_print_as_uuids() {
    let u = "550e8400-e29b-41d4-a716-446655440000";
    let (_dir, catalog) = crate::cli::catalog_with(&format!(
        "CREATE SCHEMA ns; \
         CREATE TABLE ns.uu (u UUID, n INT) PARTITIONED BY (u) \
         TBLPROPERTIES ('format-version'='2'); \
         INSERT INTO ns.uu VALUES ('{u}', 1)"
    ));
    let query = |format: &str, sql: &str| {
        let out = run(&["--catalog", &catalog, "--format", format, "-c", sql]);
        assert_success(&out);
        stdout(&out)
    };
    for sql in [
        "SELECT _partition.u AS v FROM ns.uu".to_string(),
        "SELECT partition.u AS v FROM ns.\"uu$files\"".to_string(),
        "SELECT data_file.partition.u AS v FROM ns.\"uu$entries\"".to_string(),
        "SELECT partition.u AS v FROM ns.\"uu$partitions\"".to_string(),
        "SELECT readable_metrics.u.lower_bound AS v FROM ns.\"uu$files\"".to_string(),
        "SELECT readable_metrics.u.upper_bound AS v FROM ns.uu.files".to_string(),
        format!("SELECT partition.u AS v FROM ns.\"uu$files\" WHERE partition.u = '{u}'"),
        format!("SELECT partition.u AS v FROM ns.\"uu$partitions\" WHERE partition.u = '{u}'"),
        format!("SELECT _partition.u AS v FROM ns.uu WHERE _partition.u = '{u}'"),
        format!(
            "SELECT readable_metrics.u.lower_bound AS v FROM ns.\"uu$files\" \
             WHERE readable_metrics.u.lower_bound = '{u}'"
        ),
    ] {
        assert_eq!(query("csv", &sql), format!("v\n{u}\n"), "{sql}");
        assert_eq!(query("json", &sql), format!("{{\"v\":\"{u}\"}}\n"), "{sql}");
        assert!(query("table", &sql).contains(&format!("| {u} |")), "{sql}");
    }
    // whole structs, in each format
    for sql in [
        "SELECT _partition AS p FROM ns.uu",
        "SELECT partition AS p FROM ns.\"uu$files\"",
        "SELECT partition AS p FROM ns.\"uu$partitions\"",
    ] {
        assert_eq!(
            query("json", sql),
            format!("{{\"p\":{{\"u\":\"{u}\"}}}}\n"),
            "{sql}"
        );
        assert_eq!(
            query("csv", sql),
            format!("p\n\"{{\"\"u\"\":\"\"{u}\"\"}}\"\n"),
            "{sql}"
        );
        assert!(
            query("table", sql).contains(&format!("{{u: {u}}}")),
            "{sql}"
        );
    }
    let readable = query(
        "json",
        "SELECT readable_metrics.u AS m FROM ns.\"uu$files\"",
    );
    assert!(
        readable.contains(&format!("\"lower_bound\":\"{u}\",\"upper_bound\":\"{u}\"")),
        "{readable}"
    );
    assert!(
        query("table", "SELECT readable_metrics FROM ns.\"uu$files\"")
            .contains(&format!("lower_bound: {u}")),
        "readable_metrics"
    );
}
