//! The `icefloe` command-line program, run as a subprocess.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use datafusion::arrow::array::{Array, Int64Array};
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// The binary, with HOME pointed at an empty directory so that no history file is
/// read or written in the real home.
pub(crate) fn icefloe(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_icefloe"));
    cmd.env("HOME", home)
        .env("USERPROFILE", home)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null());
    cmd
}

pub(crate) fn run(args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    icefloe(home.path()).args(args).output().unwrap()
}

/// Run with `stdin` fed to the process (no terminal: rustyline reads plain lines).
pub(crate) fn run_with_stdin(args: &[&str], stdin: &str) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut child = icefloe(home.path())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A new SQLite catalog in a temporary directory, made by running `setup` (which must
/// succeed) through the CLI: the directory (removed when dropped) and the `--catalog`
/// value naming the catalog.
pub(crate) fn catalog_with(setup: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let catalog = format!("sqlite:{}", dir.path().join("c.db").display());
    let out = run(&["--catalog", &catalog, "--create-catalog", "-c", setup]);
    assert_success(&out);
    (dir, catalog)
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[track_caller]
pub(crate) fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "exit status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        stdout(out),
        stderr(out)
    );
}

#[track_caller]
pub(crate) fn assert_failure(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout:\n{}\nstderr:\n{}",
        stdout(out),
        stderr(out)
    );
    assert!(
        stderr(out).starts_with("error: "),
        "stderr: {}",
        stderr(out)
    );
}

#[test]
fn cli_table_format() {
    let out = run(&["-c", "SELECT 1 AS a"]);
    assert_success(&out);
    assert_eq!(stdout(&out), "+---+\n| a |\n+---+\n| 1 |\n+---+\n");
    assert_eq!(stderr(&out), "");
}

#[test]
fn cli_table_format_separates_results_and_shows_empty_results() {
    let out = run(&["-c", "SELECT 1 AS a; SELECT 'x' AS b WHERE false"]);
    assert_success(&out);
    assert_eq!(
        stdout(&out),
        "+---+\n| a |\n+---+\n| 1 |\n+---+\n\n+---+\n| b |\n+---+\n+---+\n"
    );
}

#[test]
fn cli_csv_format() {
    let out = run(&["-c", "SELECT 1 AS a, 'x,y' AS b", "--format", "csv"]);
    assert_success(&out);
    assert_eq!(stdout(&out), "a,b\n1,\"x,y\"\n");
}

/// Values beginning with '-' are values of -c and --null-string, not options.
#[test]
fn cli_command_and_null_string_may_begin_with_a_hyphen() {
    let out = run(&[
        "-c",
        "-- a comment first\nSELECT -1 AS a, NULL AS b",
        "--format",
        "csv",
        "--null-string",
        "-",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "a,b\n-1,-\n");
    // an SQL error (status 1), not a usage error (status 2)
    let out = run(&["-c", "-1", "--format", "csv"]);
    assert_failure(&out);
}

#[test]
fn cli_csv_header_without_rows() {
    let out = run(&["-c", "SELECT 1 AS a WHERE false", "--format", "csv"]);
    assert_success(&out);
    assert_eq!(stdout(&out), "a\n");
}

#[test]
fn cli_json_format() {
    let out = run(&[
        "-c",
        "SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, 'y' ORDER BY a",
        "--format",
        "json",
    ]);
    assert_success(&out);
    assert_eq!(
        stdout(&out),
        "{\"a\":1,\"b\":\"x\"}\n{\"a\":2,\"b\":\"y\"}\n"
    );
}

#[test]
fn cli_parquet_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.parquet");
    let out = run(&[
        "-c",
        "SELECT 1 AS a",
        "--format",
        "parquet",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "");

    let file = std::fs::File::open(&path).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let batches = reader.collect::<Result<Vec<_>, _>>().unwrap();
    assert_eq!(batches.len(), 1);
    let batch = &batches[0];
    assert_eq!(batch.schema().field(0).name(), "a");
    let a = batch
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a.value(0), 1);
}

#[test]
fn cli_parquet_needs_output_file() {
    let out = run(&["-c", "SELECT 1 AS a", "--format", "parquet"]);
    assert_failure(&out);
    assert!(stderr(&out).contains("-o FILE"), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn cli_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    let out = run(&[
        "-c",
        "SELECT 1 AS a",
        "--format",
        "csv",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\n1\n");
}

#[test]
fn cli_sql_error_exits_1() {
    let out = run(&["-c", "SELECT * FROM no_such_table"]);
    assert_failure(&out);
    assert!(stderr(&out).contains("no_such_table"), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn cli_stops_at_first_failing_statement() {
    let out = run(&[
        "-c",
        "SELECT 1 AS a; SELECT * FROM no_such_table; SELECT 2 AS b",
        "--format",
        "csv",
    ]);
    assert_failure(&out);
    assert_eq!(stdout(&out), "a\n1\n");
}

#[test]
fn cli_file_with_two_statements() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queries.sql");
    std::fs::write(
        &path,
        "-- a view, then a query; DDL prints nothing\n\
         CREATE VIEW v AS SELECT 'x;y' AS b;\n\
         SELECT b, 2 AS c\n  FROM v; /* done; */\n",
    )
    .unwrap();
    let out = run(&["-f", path.to_str().unwrap(), "--format", "csv"]);
    assert_success(&out);
    assert_eq!(stdout(&out), "b,c\nx;y,2\n");
}

/// A script saved with a UTF-8 byte order mark (Windows editors) runs, from `-f FILE`,
/// `-f -` and a pipe into the shell (its first statement failed: "found: \u{feff}");
/// a mark inside a string is kept.
#[test]
fn cli_script_may_begin_with_a_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bom.sql");
    let sql = "\u{feff}SELECT 1 AS a;\nSELECT length('\u{feff}x') AS n;\n";
    std::fs::write(&path, sql).unwrap();
    let rows = "a\n1\nn\n2\n";
    for (out, expected) in [
        (
            run(&["-f", path.to_str().unwrap(), "--format", "csv"]),
            rows,
        ),
        (run_with_stdin(&["-f", "-", "--format", "csv"], sql), rows),
        (run_with_stdin(&["--format", "csv"], sql), rows),
        // a shell command on the first line
        (
            run_with_stdin(&["--format", "csv"], "\u{feff}\\d\n"),
            "table_catalog,table_schema,table_name,table_type\n",
        ),
    ] {
        assert_success(&out);
        assert_eq!(stdout(&out), expected);
    }
}

/// A parse error's position is where it is in the script (`-f FILE`, `-f -`, a script
/// piped into the shell, `-c`), not in the failed statement's text: `)` on line 6 of
/// the file was named as line 3.
#[test]
fn cli_parse_errors_give_positions_in_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.sql");
    let sql = "SELECT 1;\n\n\nSELECT 2,\n3 +\n)\n";
    std::fs::write(&path, sql).unwrap();
    let file = path.to_str().unwrap();
    for out in [
        run(&["-f", file]),
        run_with_stdin(&["-f", "-"], sql),
        run_with_stdin(&[], sql),
    ] {
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("found: ) at Line: 6, Column: 1"), "{err}");
    }
    // on the statement's first line, the column counts from the line's start: `3` is
    // the 22nd character (the statement's 10th)
    let out = run(&["-c", "SELECT 1;   SELECT 2 3 4"]);
    assert_failure(&out);
    let err = stderr(&out);
    assert!(err.contains("found: 3 at Line: 1, Column: 22"), "{err}");

    // an unterminated string: the statements before it run, and the error names its
    // statement and position (the whole script was one statement, named as line 1)
    let sql = "SELECT 1 AS a;\nSELECT 2 AS b;\n  SELECT 'abc;\nSELECT 3;\n";
    std::fs::write(&path, sql).unwrap();
    for (out, name) in [
        (run(&["--format", "csv", "-f", file]), file),
        (
            run_with_stdin(&["--format", "csv", "-f", "-"], sql),
            "<stdin>",
        ),
    ] {
        assert_failure(&out);
        assert_eq!(stdout(&out), "a\n1\nb\n2\n");
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("error: {name}:3 (SELECT 'abc; SELECT 3;): ")),
            "{err}"
        );
        assert!(
            err.contains("Unterminated string literal at Line: 3, Column: 10"),
            "{err}"
        );
    }
}

#[test]
fn cli_script_errors_name_the_statement() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.sql");
    // the failing statement begins on line 5 (after a comment), spans two lines and is
    // longer than the 60 characters shown
    let sql = "-- a script\nSELECT 1 AS a;\n\n/* next */\nSELECT * FROM no_such_table\n  \
               WHERE id = 1 AND a_rather_long_column_name > 100000;\nSELECT 2 AS b;\n";
    std::fs::write(&path, sql).unwrap();
    let head = "SELECT * FROM no_such_table WHERE id = 1 AND a_rather_long_c…";
    let file = path.to_str().unwrap();
    for (out, name) in [
        (run(&["--format", "csv", "-f", file]), file),
        (
            run_with_stdin(&["--format", "csv", "-f", "-"], sql),
            "<stdin>",
        ),
    ] {
        assert_failure(&out);
        // it stops there
        assert_eq!(stdout(&out), "a\n1\n");
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("error: {name}:5 ({head}): ")),
            "{err}"
        );
        assert!(err.contains("no_such_table"), "{err}");
    }
    // a script piped into the shell: the error names it, and the rest runs
    let out = run_with_stdin(&["--format", "csv"], sql);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "a\n1\nb\n2\n");
    assert!(
        stderr(&out).starts_with(&format!("error: <stdin>:5 ({head}): ")),
        "{}",
        stderr(&out)
    );
    // -c: by its place among several statements; one alone is not named
    let out = run(&["-c", "SELECT 1 AS a; SELECT nope"]);
    assert_failure(&out);
    assert!(
        stderr(&out).starts_with("error: -c statement 2 (SELECT nope): "),
        "{}",
        stderr(&out)
    );
    let out = run(&["-c", "SELECT nope"]);
    assert_failure(&out);
    let err = stderr(&out);
    assert!(err.starts_with("error: ") && !err.contains("-c"), "{err}");
    assert!(err.contains("nope"), "{err}");
    // an unknown prepared statement is named as any other failed statement (a tester's
    // D10: `EXECUTE nosuch` alone had no `-c statement N`, as no statement alone has)
    let out = run(&["-c", "PREPARE p AS SELECT 1; EXECUTE nosuch"]);
    assert_failure(&out);
    assert_eq!(
        stderr(&out),
        "error: -c statement 2 (EXECUTE nosuch): Execution error: Prepared statement \
         'nosuch' does not exist\n"
    );
    let out = run(&["-c", "EXECUTE nosuch"]);
    assert_failure(&out);
    assert_eq!(
        stderr(&out),
        "error: Execution error: Prepared statement 'nosuch' does not exist\n"
    );
}

#[test]
fn cli_table_names_read_as_sql_names() {
    let count = |name: &str, sql: &str| {
        let table = format!("{name}=testdata/sample_table");
        run(&["--format", "csv", "--table", &table, "-c", sql])
    };
    let expected = count("t", "SELECT count(*) AS n FROM t");
    assert_success(&expected);
    // unquoted: lowercased, as CREATE EXTERNAL TABLE MyT and FROM MyT read it
    for sql in [
        "SELECT count(*) AS n FROM MyT",
        "SELECT count(*) AS n FROM myt",
        "SELECT count(*) AS n FROM \"myt\"",
        "SELECT count(*) AS n FROM iceberg_scan('MyT')",
    ] {
        let out = count("MyT", sql);
        assert_success(&out);
        assert_eq!(stdout(&out), stdout(&expected), "{sql}");
    }
    let out = count("MyT", "SELECT count(*) AS n FROM \"MyT$snapshots\"");
    assert_failure(&out);
    let out = count("MyT", "SELECT count(*) AS n FROM \"MyT\"");
    assert_failure(&out);
    assert!(
        stderr(&out).contains(
            "table 'MyT' not found in schema 'datafusion.public' (tables: myt); did you mean \
             \"myt\"? (unquoted names are lowercased, quoted ones keep their case)"
        ),
        "{}",
        stderr(&out)
    );
    // double-quoted: as written, and then only quoted
    for (name, sql) in [
        ("\"MyT\"", "SELECT count(*) AS n FROM \"MyT\""),
        (
            "\"MyT\"",
            "SELECT count(*) AS n FROM iceberg_scan('\"MyT\"')",
        ),
        ("\"a.b\"", "SELECT count(*) AS n FROM \"a.b\""),
        ("my-t", "SELECT count(*) AS n FROM \"my-t\""),
    ] {
        let out = count(name, sql);
        assert_success(&out);
        assert_eq!(stdout(&out), stdout(&expected), "{name}: {sql}");
    }
    let out = count("\"MyT\"", "SELECT count(*) AS n FROM MyT");
    assert_failure(&out);
    assert!(
        stderr(&out).contains("did you mean \"MyT\"?"),
        "{}",
        stderr(&out)
    );
    // a dotted name is a schema and a table: refused, saying how to keep the '.'
    let out = count("a.b", "SELECT 1");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("NAME 'a.b' reads as the qualified name a.b; give one table name"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn cli_missing_file_is_an_error() {
    let out = run(&["-f", "no/such/file.sql"]);
    assert_failure(&out);
    assert!(
        stderr(&out).contains("no/such/file.sql"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn cli_help_has_examples() {
    let out = run(&["--help"]);
    assert_success(&out);
    let help = stdout(&out);
    assert!(help.contains("Examples:"), "{help}");
    assert!(help.contains("icefloe --table t="), "{help}");
    assert!(help.contains("--format csv"), "{help}");
}

#[test]
fn cli_bad_table_argument() {
    let out = run(&["--table", "just_a_name", "-c", "SELECT 1"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("NAME=LOCATION"), "{}", stderr(&out));
}

#[test]
fn cli_target_partitions_and_information_schema() {
    let out = run(&[
        "--target-partitions",
        "3",
        "--format",
        "csv",
        "-c",
        "SELECT value FROM information_schema.df_settings \
         WHERE name = 'datafusion.execution.target_partitions'",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "value\n3\n");
}

#[test]
fn cli_repl_reads_statements_from_stdin() {
    let out = run_with_stdin(
        &["--format", "csv"],
        "SELECT\n  1 AS a;\n-- a comment line\nSELECT ';' AS b; SELECT 3\n  AS c;\n\\q\nSELECT 4 AS d;\n",
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "a\n1\nb\n;\nc\n3\n");
    assert_eq!(stderr(&out), "");
}

#[test]
fn cli_repl_continues_after_error() {
    let out = run_with_stdin(
        &["--format", "csv"],
        "SELECT * FROM no_such_table;\nSELECT 2 AS b;\n",
    );
    // the next statement runs; the run fails
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "b\n2\n");
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    assert!(stderr(&out).contains("no_such_table"), "{}", stderr(&out));
}

/// A failed statement piped into the shell is reported and the rest runs, the other
/// statements of its line too, each failure reported on its own (a tester found the rest
/// of the line skipped without a word: `INSERT … (2)` after a failed `INSERT` on its line
/// was never written). `-c` still stops at the first failure.
#[test]
fn cli_repl_runs_the_rest_of_a_line_after_a_failed_statement() {
    let (_dir, catalog) = catalog_with("CREATE SCHEMA ns; CREATE TABLE ns.t (id INT)");
    let out = run_with_stdin(
        &["--catalog", &catalog, "--format", "csv"],
        "INSERT INTO ns.t VALUES ('x'); INSERT INTO ns.t VALUES (2);\n\
         SELECT * FROM nosuch; SELECT 3 AS three; SELECT * FROM nosuch2;\n\
         INSERT INTO ns.t VALUES (4);\n\
         SELECT id FROM ns.t ORDER BY id;\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "count\n1\nthree\n3\ncount\n1\nid\n2\n4\n",
        "{}",
        stderr(&out)
    );
    let errors: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("error: "))
        .map(str::to_string)
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].starts_with("error: <stdin>:1 (INSERT INTO ns.t VALUES ('x'))"),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("error: <stdin>:2 (SELECT * FROM nosuch)"),
        "{errors:?}"
    );
    assert!(
        errors[2].starts_with("error: <stdin>:2 (SELECT * FROM nosuch2)"),
        "{errors:?}"
    );
    // `-c` stops at the first failure, as documented
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "SELECT * FROM nosuch; INSERT INTO ns.t VALUES (9)",
    ]);
    assert_failure(&out);
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "SELECT count(*) AS n FROM ns.t",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n2\n");
}

#[test]
fn cli_repl_runs_unterminated_last_statement() {
    let out = run_with_stdin(
        &["--format", "json"],
        "CREATE VIEW v AS SELECT 5 AS e;\nSELECT e FROM v",
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "{\"e\":5}\n");
}

pub(crate) fn sample_table() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sample_table")
}

/// Needs the library and `testdata/sample_table`: opens the table both with `--table`
/// and with `CREATE EXTERNAL TABLE ... STORED AS ICEBERG`.
#[test]
fn cli_counts_sample_table() {
    let location = sample_table();
    let location = location.to_str().unwrap();
    let sql = format!(
        "SELECT count(*) AS n FROM t; \
         CREATE EXTERNAL TABLE u STORED AS ICEBERG LOCATION '{location}'; \
         SELECT count(*) AS n FROM u"
    );
    let out = run(&[
        "--table",
        &format!("t={location}"),
        "--format",
        "csv",
        "-c",
        &sql,
    ]);
    assert_success(&out);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], "n");
    assert_eq!(lines[2], "n");
    let n: u64 = lines[1].parse().expect("a row count");
    assert!(n > 0, "{text}");
    assert_eq!(lines[3], lines[1], "{text}");
}

#[test]
fn cli_explain_pruning_prints_the_funnel() {
    let table = format!(
        "t={}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/sample_table")
    );
    let out = run(&[
        "--table",
        &table,
        "--explain-pruning",
        "-c",
        "SELECT count(*) AS n FROM t WHERE ts >= TIMESTAMP '2024-03-02 00:00:00+00:00' \
         AND ts < TIMESTAMP '2024-03-03 00:00:00+00:00'",
    ]);
    assert_success(&out);
    assert!(stdout(&out).contains("| 15 |"), "{}", stdout(&out));
    // 3 manifests, 2 skipped by their partition summaries; of 2 files in the third, the
    // partition of one cannot match
    let err = stderr(&out);
    assert!(
        err.contains("pruning: t: manifests 3 (2 skipped by partition summaries, 0 not opened: LIMIT already covered); data files 2 (1 skipped by partition, 0 by metrics; 0 with inconsistent metrics) -> 1 planned"),
        "{err}"
    );
}

#[test]
fn cli_runs_iceberg_ddl_on_a_sqlite_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = format!("sqlite:{}", dir.path().join("cat.db").display());
    let with_catalog = |args: &[&str]| {
        let mut all = vec!["--catalog", catalog.as_str(), "--format", "csv"];
        all.extend_from_slice(args);
        run(&all)
    };
    let out = with_catalog(&[
        "--create-catalog",
        "-c",
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT, s VARCHAR, ts TIMESTAMP) \
         PARTITIONED BY (day(ts))",
    ]);
    assert_success(&out);
    let metadata_dir = dir.path().join("ns/t/metadata");
    let metadata_files = || {
        std::fs::read_dir(&metadata_dir)
            .map(|d| d.filter_map(|e| e.ok()).count())
            .unwrap_or(0)
    };
    assert_eq!(metadata_files(), 1, "{}", metadata_dir.display());

    let out = with_catalog(&["-c", "SHOW TABLES"]);
    assert_success(&out);
    assert!(
        stdout(&out).contains(",ns,t,BASE TABLE"),
        "{}",
        stdout(&out)
    );
    // after USE, the namespace's tables and views only (as Spark's and Trino's SHOW TABLES)
    let out = with_catalog(&[
        "-c",
        "CREATE SCHEMA other; CREATE TABLE other.u (id INT); USE ns; \
         CREATE VIEW v AS SELECT id FROM t; SHOW TABLES; DROP TABLE other.u",
    ]);
    assert_success(&out);
    assert_eq!(
        stdout(&out),
        "table_catalog,table_schema,table_name,table_type\n\
         default,ns,t,BASE TABLE\n\
         default,ns,v,VIEW\n"
    );
    let out = with_catalog(&["-c", "SELECT count(*) AS n FROM ns.t"]);
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n0\n");

    // icefloe's errors name the statement; DataFusion's are passed on as they were
    let out = with_catalog(&["-c", "CREATE TABLE ns.t (id INT)"]);
    assert_failure(&out);
    assert!(
        stderr(&out).contains("CREATE TABLE") && stderr(&out).contains("already exists"),
        "{}",
        stderr(&out)
    );
    let out = with_catalog(&["-c", "SELECT * FROM ns.nope"]);
    assert_failure(&out);
    assert!(
        stderr(&out)
            .starts_with("error: table 'nope' not found in schema 'default.ns' (tables: t)"),
        "{}",
        stderr(&out)
    );
    // Spark's `ns.t.branch_b` form of a missing table names the table, not a catalog
    // 'ns' (a tester's)
    for sql in [
        "SELECT * FROM ns.nope.branch_b",
        "INSERT INTO ns.nope.branch_b VALUES (1)",
        "SELECT * FROM ns.nope.snapshots",
        // and `t@version` / `t$metadata` names the table too, not `nope@b`
        "SELECT * FROM ns.\"nope@b\"",
        "SELECT * FROM ns.\"nope$files\"",
    ] {
        let out = with_catalog(&["-c", sql]);
        assert_failure(&out);
        assert!(
            stderr(&out)
                .starts_with("error: table 'nope' not found in schema 'default.ns' (tables: t); "),
            "{sql}: {}",
            stderr(&out)
        );
    }

    let out = with_catalog(&["-c", "DROP TABLE ns.t PURGE; SHOW TABLES"]);
    assert_success(&out);
    assert!(!stdout(&out).contains(",ns,t,"), "{}", stdout(&out));
    assert_eq!(metadata_files(), 0);
}

/// A file path as a table, as `datafusion-cli` reads it: `FROM '/dir/f1.parquet'`, a
/// relative path, a directory, with or without a catalog. A table of the name resolves
/// first, and a name that is no path (`FROM t`, `ns.missing`) is never read from the
/// current directory. The tester's D8: "table 'datafusion.public./…/f1.parquet' not found".
#[test]
fn cli_reads_a_file_path_as_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let in_dir = |args: &[&str]| {
        icefloe(home.path())
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    let file = dir.path().join("f1.parquet");
    let copy = format!(
        "COPY (SELECT * FROM (VALUES (1), (2), (3)) AS v(x)) TO '{}' STORED AS PARQUET; \
         COPY (SELECT 10 AS x) TO '{}/t/part.parquet' STORED AS PARQUET",
        file.display(),
        dir.path().display()
    );
    assert_success(&in_dir(&["-c", &copy]));
    let catalog = format!("sqlite:{}/cat.db", dir.path().display());
    let with_catalog = ["--catalog", catalog.as_str(), "--create-catalog"];
    let sum = |from: &str| format!("SELECT count(*) AS n, sum(x) AS s FROM {from}");
    for prefix in [&[][..], &with_catalog[..]] {
        for (from, expected) in [
            (format!("'{}'", file.display()), "n,s\n3,6\n"),
            ("'f1.parquet'".to_string(), "n,s\n3,6\n"),
            ("'./t/'".to_string(), "n,s\n1,10\n"),
        ] {
            let mut args = prefix.to_vec();
            let sql = sum(&from);
            args.extend(["--format", "csv", "-c", &sql]);
            let out = in_dir(&args);
            assert_success(&out);
            assert_eq!(stdout(&out), expected, "{prefix:?} {sql}");
        }
    }
    // a bare name that is no path is a table or nothing, even with a directory `t` here
    let out = in_dir(&["-c", &sum("t")]);
    assert_failure(&out);
    assert!(
        stderr(&out).contains("table 't' not found"),
        "{}",
        stderr(&out)
    );
    let out = in_dir(
        &[
            &with_catalog[..],
            &["-c", "CREATE SCHEMA ns; SELECT * FROM ns.t"],
        ]
        .concat(),
    );
    assert_failure(&out);
    assert!(
        stderr(&out).contains("table 't' not found"),
        "{}",
        stderr(&out)
    );
    // a table registered under the file's name comes first
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/sample_table");
    let table = format!("\"f1.parquet\"={sample}");
    let named = in_dir(&[
        "--format",
        "csv",
        "--table",
        &table,
        "-c",
        "SELECT count(*) AS n FROM 'f1.parquet'",
    ]);
    let iceberg = in_dir(&[
        "--format",
        "csv",
        "--table",
        &format!("t={sample}"),
        "-c",
        "SELECT count(*) AS n FROM t",
    ]);
    assert_success(&named);
    assert_success(&iceberg);
    assert_eq!(stdout(&named), stdout(&iceberg));
    assert_ne!(stdout(&named), "n\n3\n");
    // a URL of a scheme no object store serves is refused by icefloe naming it and what
    // to set (report J, fault 1: DataFusion's "No suitable object store … likely a bug")
    for sql in [
        sum("'hdfs://nn:9000/d/f.parquet'"),
        "COPY (SELECT 1 AS x) TO 'hdfs://nn:9000/d/out.parquet' STORED AS PARQUET".to_string(),
    ] {
        let out = in_dir(&["-c", &sql]);
        assert_failure(&out);
        let err = stderr(&out);
        assert!(
            err.contains("no object store serves 'hdfs://nn:9000'") && err.contains("--catalog"),
            "{sql}: {err}"
        );
        assert!(!err.contains("bug"), "{sql}: {err}");
    }
}

/// File paths are for reading (a tester's D7): a file `f.parquet` in the working
/// directory does not block `CREATE TABLE "f.parquet"`; `DROP TABLE 'f.parquet'` is an
/// error that deletes nothing; a name that reads as no table says what is on disk: no
/// file there, a file whose format the extension does not tell, or (for a bare name,
/// never read as a path) a directory of that name and how to read it.
#[test]
fn cli_file_paths_are_for_reading_and_errors_say_what_is_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let in_dir = |args: &[&str]| {
        icefloe(home.path())
            .current_dir(&cwd)
            .args(args)
            .output()
            .unwrap()
    };
    let csv = |sql: &str| in_dir(&["--format", "csv", "-c", sql]);
    assert_success(&csv(
        "COPY (SELECT 1 AS x) TO 'f.parquet' STORED AS PARQUET; \
         COPY (SELECT 2 AS x) TO 'x.bin' STORED AS PARQUET; \
         COPY (SELECT 3 AS x) TO 'd' STORED AS PARQUET",
    ));
    // (a path without an extension is a directory to COPY)
    assert!(cwd.join("d").is_dir());
    std::fs::copy(cwd.join("x.bin"), cwd.join("noext")).unwrap();
    // a table of the file's name is created, and read before the file
    let out = csv(
        "CREATE TABLE \"f.parquet\" (x INT); INSERT INTO \"f.parquet\" VALUES (7); \
         SELECT x FROM \"f.parquet\"",
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "count\n1\nx\n7\n");
    // DROP TABLE of a file path: an error, the file left as it is
    let out = csv("DROP TABLE 'f.parquet'");
    assert_failure(&out);
    assert_eq!(
        stderr(&out),
        "error: DROP TABLE 'f.parquet': 'f.parquet' is a file path, not a table (SELECT … \
         FROM 'f.parquet' reads the file); DROP TABLE drops tables and deletes no files\n"
    );
    let out = csv("SELECT x FROM 'f.parquet'");
    assert_success(&out);
    assert_eq!(stdout(&out), "x\n1\n");
    // a missing file, a file of no known format, a bare directory name
    let missing = cwd.join("sub/nosuch.parquet");
    for (sql, expected) in [
        (
            "SELECT * FROM 'sub/nosuch.parquet'",
            format!(
                "error: no file or directory at {} (nor is 'sub/nosuch.parquet' a table of \
                 schema 'datafusion.public': it has no tables)\n",
                missing.display()
            ),
        ),
        (
            "SELECT * FROM 'noext'",
            "error: table 'noext' not found in schema 'datafusion.public' (it has no \
             tables); a file 'noext' is in the working directory: name it as a path to \
             read it (FROM './noext')\n"
                .to_string(),
        ),
        (
            "SELECT * FROM './noext'",
            format!(
                "error: {} is a file whose format is not known from its extension (.parquet, \
                 .csv, .json, .avro, .arrow); read it with CREATE EXTERNAL TABLE t STORED AS \
                 PARQUET|CSV|JSON|AVRO|ARROW LOCATION './noext' (nor is './noext' a table of \
                 schema 'datafusion.public': it has no tables)\n",
                cwd.join("noext").display()
            ),
        ),
        (
            "SELECT * FROM d",
            "error: table 'd' not found in schema 'datafusion.public' (it has no tables); \
             a directory 'd' is in the working directory: name it as a path to read it \
             (FROM './d/')\n"
                .to_string(),
        ),
    ] {
        let out = csv(sql);
        assert_failure(&out);
        assert_eq!(stderr(&out), expected, "{sql}");
    }
    // the ways the hints offer read the files
    let out = csv("SELECT x FROM './d/' UNION ALL SELECT x FROM './d' ORDER BY x");
    assert_success(&out);
    assert_eq!(stdout(&out), "x\n3\n3\n");
    let out = csv("CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION './noext'; SELECT x FROM t");
    assert_success(&out);
    assert_eq!(stdout(&out), "x\n2\n");
    // writes to a path are refused and write no file (tester T10's D2: an INSERT into a
    // directory wrote a file there that the directory's files then no longer read with)
    let before = std::fs::read_dir(cwd.join("d")).unwrap().count();
    for sql in [
        "INSERT INTO './d/' VALUES (4)",
        "INSERT INTO 'f.parquet' VALUES (4)",
        "DELETE FROM './d/' WHERE x = 3",
    ] {
        let out = csv(sql);
        assert_failure(&out);
        assert!(
            stderr(&out).contains("(not a table; write files with COPY … TO) is read-only"),
            "{sql}: {}",
            stderr(&out)
        );
    }
    assert_eq!(std::fs::read_dir(cwd.join("d")).unwrap().count(), before);
    let out = csv("SELECT x FROM './d/'");
    assert_success(&out);
    assert_eq!(stdout(&out), "x\n3\n");
}

/// An Iceberg table's directory read as a file path (`FROM 'warehouse/ns/t'`) says it is
/// an Iceberg table and how to read one; it said the directory "holds no files of a
/// format known from their extension", which sent the user to its data files (read
/// alone, they would bring back deleted rows).
#[test]
fn cli_an_iceberg_table_directory_read_as_a_path_says_how_to_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let table = sample_table();
    let shown = table.display().to_string();
    for sql in [
        format!("SELECT count(*) FROM '{shown}'"),
        format!("SELECT count(*) FROM '{shown}/'"),
    ] {
        let out = icefloe(home.path())
            .current_dir(&cwd)
            .args(["-c", &sql])
            .output()
            .unwrap();
        assert_failure(&out);
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "is an Iceberg table (metadata/ holds its metadata files), not a directory \
                 of data files: read it with iceberg_scan('{shown}"
            )),
            "{sql}: {err}"
        );
    }
    // and what it points to reads the table
    let out = run(&[
        "--format",
        "csv",
        "-c",
        &format!("SELECT count(*) AS n FROM iceberg_scan('{shown}')"),
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n61\n");
}

/// The REPL (stdin piped) run in `cwd` with `--format csv`, asked one statement at a
/// time: `ask(sql, lines)` writes `sql` and returns the next `lines` lines of stdout
/// (failing after a minute without one, rather than hanging).
struct Shell {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::sync::mpsc::Receiver<String>,
}

impl Shell {
    fn start(home: &Path, cwd: &Path, args: &[&str]) -> Self {
        let mut child = icefloe(home)
            .current_dir(cwd)
            .args(args)
            .args(["--format", "csv"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let out = child.stdout.take().unwrap();
        let (send, stdout) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(out)) {
                if send.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            stdout,
        }
    }

    #[track_caller]
    fn ask(&mut self, sql: &str, lines: usize) -> Vec<String> {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{sql}").unwrap();
        stdin.flush().unwrap();
        let mut got = Vec::new();
        for _ in 0..lines {
            match self.stdout.recv_timeout(std::time::Duration::from_secs(60)) {
                Ok(line) => got.push(line),
                Err(e) => {
                    let _ = self.child.kill();
                    panic!("no output after {sql} ({got:?}, {e}): {}", self.stderr())
                }
            }
        }
        got
    }

    /// The shell's stderr, once it has exited.
    fn stderr(&mut self) -> String {
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err).unwrap();
        }
        err
    }

    /// Close stdin; the shell's stderr, after it exits successfully with no output
    /// left unasked for.
    #[track_caller]
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        let err = self.stderr();
        assert!(status.success(), "{status}: {err}");
        let rest: Vec<String> = self.stdout.iter().collect();
        assert!(rest.is_empty(), "{rest:?}");
        err
    }
}

/// A path is listed anew by each statement of a session (tester's D3): files removed
/// or added since an earlier statement read it (by another process or by the session's
/// own `COPY`), and the columns of an added file, are seen, in the shell and among
/// several `-c` statements; so is a `CREATE EXTERNAL TABLE` directory.
#[test]
fn cli_file_paths_are_listed_anew_by_each_statement() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let in_dir = |args: &[&str]| {
        icefloe(home.path())
            .current_dir(&cwd)
            .args(args)
            .output()
            .unwrap()
    };
    assert_success(&in_dir(&[
        "-c",
        "COPY (SELECT 1 AS x) TO 'd/a.parquet' STORED AS PARQUET; \
         COPY (SELECT 2 AS x) TO 'd/b.parquet' STORED AS PARQUET",
    ]));
    let mut shell = Shell::start(home.path(), &cwd, &[]);
    assert_eq!(
        shell.ask("SELECT count(*) AS n, sum(x) AS s FROM './d/';", 2),
        ["n,s", "2,3"]
    );
    shell.ask(
        "CREATE EXTERNAL TABLE ext STORED AS PARQUET LOCATION './d/';",
        0,
    );
    assert_eq!(shell.ask("SELECT sum(x) AS s FROM ext;", 2), ["s", "3"]);
    // another process removes a file and adds one with a new column
    std::fs::remove_file(cwd.join("d/a.parquet")).unwrap();
    assert_success(&in_dir(&[
        "-c",
        "COPY (SELECT 10 AS x, 'new' AS y) TO 'd/c.parquet' STORED AS PARQUET",
    ]));
    assert_eq!(
        shell.ask("SELECT x, y FROM './d/' ORDER BY x;", 3),
        ["x,y", "2,", "10,new"]
    );
    // the session's own COPY adds one
    assert_eq!(
        shell.ask(
            "COPY (SELECT 20 AS x, 'own' AS y) TO './d/e.parquet' STORED AS PARQUET;",
            2
        ),
        ["count", "1"]
    );
    assert_eq!(
        shell.ask("SELECT x, y FROM 'd/' ORDER BY x;", 4),
        ["x,y", "2,", "10,new", "20,own"]
    );
    // an external table's directory is listed anew too (its schema is the one created)
    assert_eq!(shell.ask("SELECT sum(x) AS s FROM ext;", 2), ["s", "32"]);
    assert_eq!(shell.finish(), "");
    // several -c statements in one process
    let out = in_dir(&[
        "--format",
        "csv",
        "-c",
        "SELECT count(*) AS n FROM './d/'; \
         COPY (SELECT 30 AS x, 'c' AS y, true AS z) TO './d/f.parquet' STORED AS PARQUET; \
         SELECT count(*) AS n, count(z) AS z FROM './d/'",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n3\ncount\n1\nn,z\n4,1\n");
}

/// Parquet files of one directory written by pyarrow (`string`) and by DataFusion
/// (`string_view`, top-level and nested) read together, each string column as one type.
#[test]
fn cli_file_paths_read_pyarrow_and_datafusion_parquet_together() {
    let Some(python) = crate::interop::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(cwd.join("d")).unwrap();
    let py = Command::new(&python)
        .current_dir(&cwd)
        .args([
            "-c",
            "import pyarrow as pa, pyarrow.parquet as pq\n\
             t = pa.table({'s': pa.array(['a'], pa.string()),\n\
                 'st': pa.array([{'v': 'x'}], pa.struct([('v', pa.string())])),\n\
                 'l': pa.array([['p']], pa.list_(pa.string()))})\n\
             pq.write_table(t, 'd/py.parquet')\n",
        ])
        .output()
        .unwrap();
    assert!(py.status.success(), "{}", stderr(&py));
    let csv = |sql: &str| {
        icefloe(home.path())
            .current_dir(&cwd)
            .args(["--format", "csv", "-c", sql])
            .output()
            .unwrap()
    };
    assert_success(&csv(
        "COPY (SELECT arrow_cast('b', 'Utf8View') AS s, \
         named_struct('v', arrow_cast('y', 'Utf8View')) AS st, \
         make_array(arrow_cast('q', 'Utf8View')) AS l) TO 'd/df.parquet' STORED AS PARQUET",
    ));
    // the files hold the two representations (else this tests nothing)
    let types = Command::new(&python)
        .current_dir(&cwd)
        .args([
            "-c",
            "import pyarrow.parquet as pq\n\
             for f in ['d/py.parquet', 'd/df.parquet']:\n\
             \x20   s = pq.read_schema(f)\n\
             \x20   print(s.field('s').type, s.field('st').type, s.field('l').type)\n",
        ])
        .output()
        .unwrap();
    assert!(types.status.success(), "{}", stderr(&types));
    assert_eq!(
        stdout(&types),
        "string struct<v: string> list<element: string>\n\
         string_view struct<v: string_view> list<item: string_view>\n"
    );
    let out = csv("SELECT s, st['v'] AS v, l[1] AS i, arrow_typeof(s) AS t FROM './d/' ORDER BY s");
    assert_success(&out);
    assert_eq!(stdout(&out), "s,v,i,t\na,x,p,Utf8View\nb,y,q,Utf8View\n");
    // each file alone reads as the same types
    let out = csv("SELECT arrow_typeof(st) AS t FROM 'd/py.parquet' \
         UNION ALL SELECT arrow_typeof(st) FROM 'd/df.parquet'");
    assert_success(&out);
    let text = stdout(&out);
    let types: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(types.len(), 2, "{text}");
    assert_eq!(types[0], types[1], "{text}");
    // CREATE EXTERNAL TABLE … STORED AS PARQUET reads them as the path does (DataFusion's
    // factory refused the mix: "Fail to merge schema field 's'"), in Hive partition
    // directories too
    for (i, py, df) in [
        (1, "py.parquet", "df.parquet"),
        (2, "k=1/py.parquet", "k=2/df.parquet"),
    ] {
        let table = cwd.join(format!("t{i}"));
        for (from, to) in [("py.parquet", py), ("df.parquet", df)] {
            let to = table.join(to);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(cwd.join("d").join(from), to).unwrap();
        }
        let partition = if i == 2 { ", k" } else { ", 0 AS k" };
        let out = csv(&format!(
            "CREATE EXTERNAL TABLE x STORED AS PARQUET LOCATION 't{i}/'; \
             SELECT s, st['v'] AS v, l[1] AS i, arrow_typeof(s) AS t{partition} FROM x ORDER BY s"
        ));
        assert_success(&out);
        let expected = if i == 2 {
            "s,v,i,t,k\na,x,p,Utf8View,1\nb,y,q,Utf8View,2\n"
        } else {
            "s,v,i,t,k\na,x,p,Utf8View,0\nb,y,q,Utf8View,0\n"
        };
        assert_eq!(stdout(&out), expected, "t{i}");
    }
}

/// Strings of CSV and JSON files (`Utf8`, nested in JSON structs and lists too) and of
/// `CREATE EXTERNAL TABLE … STORED AS CSV` (declared `VARCHAR`: `Utf8View`) meet an
/// Iceberg table's (`Utf8View`) in `INSERT`, `CREATE TABLE … AS`, joins, set operations
/// and `MERGE` as Parquet files' do: the values are the files'.
#[test]
fn cli_csv_and_json_strings_meet_iceberg_strings() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let catalog = format!("sqlite:{}/cat.db", cwd.display());
    std::fs::write(cwd.join("p.csv"), "id,name\n1,alice\n2,bob\n").unwrap();
    std::fs::write(
        cwd.join("n.json"),
        "{\"id\":1,\"s\":{\"a\":\"x\"},\"l\":[\"p\",\"q\"]}\n\
         {\"id\":2,\"s\":{\"a\":\"y\"},\"l\":[\"r\"]}\n",
    )
    .unwrap();
    let csv = |sql: &str| {
        let out = icefloe(home.path())
            .current_dir(&cwd)
            .args(["--catalog", &catalog, "--create-catalog", "--format", "csv"])
            .args(["-c", sql])
            .output()
            .unwrap();
        assert_success(&out);
        stdout(&out)
    };
    csv(
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT, name STRING); \
         CREATE TABLE ns.n (id BIGINT, s STRUCT<a: STRING>, l ARRAY<STRING>); \
         INSERT INTO ns.t VALUES (2, 'bob'), (3, 'carol')",
    );
    assert_eq!(
        csv("INSERT INTO ns.t SELECT * FROM 'p.csv'; \
             INSERT INTO ns.n SELECT id, s, l FROM 'n.json'; \
             CREATE TABLE ns.c AS SELECT * FROM 'n.json'; \
             SELECT name FROM ns.t ORDER BY name"),
        "count\n2\ncount\n2\nname\nalice\nbob\nbob\ncarol\n"
    );
    assert_eq!(
        csv("SELECT t.id, c.name FROM ns.t JOIN 'p.csv' c ON t.name = c.name ORDER BY 1, 2"),
        "id,name\n1,alice\n2,bob\n2,bob\n"
    );
    assert_eq!(
        csv(
            "SELECT n.id, j.s['a'] AS a, j.l[1] AS f FROM ns.n JOIN 'n.json' j \
             ON n.s = j.s AND n.l = j.l ORDER BY 1"
        ),
        "id,a,f\n1,x,p\n2,y,r\n"
    );
    assert_eq!(
        csv("SELECT name FROM ns.t INTERSECT SELECT name FROM 'p.csv' ORDER BY name"),
        "name\nalice\nbob\n"
    );
    assert_eq!(
        csv("SELECT l FROM ns.c EXCEPT SELECT l FROM 'n.json'"),
        "l\n"
    );
    assert_eq!(
        csv(
            "CREATE EXTERNAL TABLE e (id BIGINT, name VARCHAR) STORED AS CSV \
             LOCATION 'p.csv' OPTIONS ('format.has_header' 'true'); \
             MERGE INTO ns.t USING e ON t.id = e.id + 10 WHEN NOT MATCHED THEN INSERT *; \
             SELECT id, name FROM ns.t UNION ALL SELECT id, name FROM e ORDER BY id, name"
        ),
        "count\n2\nid,name\n1,alice\n1,alice\n1,alice\n2,bob\n2,bob\n2,bob\n2,bob\n3,carol\n"
    );
}

/// A directory of files of several formats is an error naming them (tester's D4: it
/// read the format of one and skipped the others silently); the glob the error offers
/// reads one format.
#[test]
fn cli_file_paths_of_mixed_formats_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let csv = |sql: &str| {
        icefloe(home.path())
            .current_dir(&cwd)
            .args(["--format", "csv", "-c", sql])
            .output()
            .unwrap()
    };
    assert_success(&csv("COPY (SELECT 1 AS x) TO 'm/a.csv' STORED AS CSV; \
         COPY (SELECT 2 AS x) TO 'm/b.parquet' STORED AS PARQUET; \
         COPY (SELECT 3 AS x) TO 'm/c.parquet' STORED AS PARQUET"));
    std::fs::write(cwd.join("m/README.md"), "not data\n").unwrap();
    for from in ["'./m/'", "'./m'"] {
        let out = csv(&format!("SELECT sum(x) AS s FROM {from}"));
        assert_failure(&out);
        let name = from.trim_matches('\'');
        assert!(
            stderr(&out).contains(&format!(
                "'{name}' holds files of several formats (1 .csv, 2 .parquet files); a path \
                 is read as one format: name the files of one (FROM '{}/*.csv')",
                name.trim_end_matches('/')
            )),
            "{from}: {}",
            stderr(&out)
        );
    }
    let out = csv("SELECT sum(x) AS s FROM './m/*.parquet'");
    assert_success(&out);
    assert_eq!(stdout(&out), "s\n5\n");
    let out = csv("SELECT sum(x) AS s FROM './m/*.csv'");
    assert_success(&out);
    assert_eq!(stdout(&out), "s\n1\n");
}

/// After `USE ns` a quoted path reads its file as before `USE` (it resolved in the
/// namespace, where paths are not read: "not found"), in every statement that reads
/// tables, icefloe's own syntax (`MERGE … INSERT *`) included; so for a namespace of two
/// levels. A string literal equal to the path stays a string, a CTE of that name is the
/// CTE, a table of the namespace of that name is the table; a path qualified with the
/// namespace is a table of the namespace, whose error names the form that reads it.
#[test]
fn cli_file_paths_after_use_read_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let catalog = format!("sqlite:{}/cat.db", cwd.display());
    let csv = |sql: &str| {
        icefloe(home.path())
            .current_dir(&cwd)
            .args(["--catalog", &catalog, "--create-catalog", "--format", "csv"])
            .args(["-c", sql])
            .output()
            .unwrap()
    };
    assert_success(&csv(
        "CREATE SCHEMA ns; CREATE SCHEMA a; CREATE SCHEMA a.b; \
         COPY (SELECT 4 AS x) TO 'd/a.parquet' STORED AS PARQUET; \
         CREATE TABLE ns.t (x INT); INSERT INTO ns.t VALUES (4), (5); \
         CREATE TABLE ns.\"e.csv\" (x INT); INSERT INTO ns.\"e.csv\" VALUES (7)",
    ));
    std::fs::write(cwd.join("e.csv"), "x\n1\n").unwrap();
    for (ns, path) in [("ns", "./d/"), ("ns", "d/a.parquet"), ("a.b", "./d/")] {
        for (sql, expected) in [
            (format!("SELECT x FROM '{path}'"), "x\n4\n"),
            (format!("SELECT x FROM \"{path}\""), "x\n4\n"),
            (
                format!("SELECT x, '{path}' AS p FROM '{path}' WHERE '{path}' <> 'x'"),
                &*format!("x,p\n4,{path}\n"),
            ),
            (
                format!(
                    "SELECT t.x FROM ns.t JOIN '{path}' f ON t.x = f.x \
                     UNION ALL SELECT x + 1 FROM (SELECT * FROM '{path}') ORDER BY x"
                ),
                "x\n4\n5\n",
            ),
            (
                format!("WITH \"{path}\" AS (SELECT 9 AS x) SELECT x FROM \"{path}\""),
                "x\n9\n",
            ),
        ] {
            let out = csv(&format!("USE {ns}; {sql}"));
            assert_success(&out);
            assert_eq!(stdout(&out), expected, "USE {ns}; {sql}");
        }
        // a table of the namespace of that name wins over the file
        let out = csv(&format!("USE {ns}; SELECT x FROM 'e.csv'"));
        assert_success(&out);
        let expected = if ns == "ns" { "x\n7\n" } else { "x\n1\n" };
        assert_eq!(stdout(&out), expected, "USE {ns}");
        let out = csv(&format!(
            "USE {ns}; COPY '{path}' TO 'out.csv'; SELECT x FROM 'out.csv'"
        ));
        assert_success(&out);
        assert_eq!(stdout(&out), "count\n1\nx\n4\n");
        // the namespace qualifies it: a table of the namespace
        let out = csv(&format!("USE {ns}; SELECT x FROM \"{ns}\".'{path}'"));
        assert_failure(&out);
        let form = format!("public.\"{path}\"");
        assert!(
            stderr(&out).contains(&format!(
                "table '{path}' not found in schema 'default.{ns}' ("
            )) && stderr(&out).contains(&format!(
                "file paths are read as tables in the CLI's schema 'public' only: FROM {form} \
                 reads it here (or USE public)\n"
            )),
            "{}",
            stderr(&out)
        );
        // a dotted name with nothing at that path is only a missing table: no "FROM
        // public.… reads it here" (a tester's)
        let out = csv(&format!("USE {ns}; SELECT * FROM \"{ns}\".\"v1.2\""));
        assert_failure(&out);
        assert!(
            stderr(&out).contains("'v1.2'") && !stderr(&out).contains("reads it here"),
            "{}",
            stderr(&out)
        );
        let out = csv(&format!("USE {ns}; USE public; SELECT x FROM '{path}'"));
        assert_success(&out);
        assert_eq!(stdout(&out), "x\n4\n");
    }
    // a statement DataFusion's parser does not read (Spark's `INSERT *`)
    let out = csv(
        "USE ns; MERGE INTO t USING 'd/a.parquet' s ON t.x = s.x + 10 \
         WHEN NOT MATCHED THEN INSERT *; SELECT x FROM t ORDER BY x",
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "count\n1\nx\n4\n4\n5\n");
}

/// A damaged manifest list or manifest of a moved table (its files recorded under
/// another location, as `testdata/sample_table`'s are) is named where it was read too:
/// the error named only the recorded path (`file:/tmp/iceberg-corpus/…`), which is not
/// the file on disk that is damaged. (Data files and missing files said both already.)
#[test]
fn cli_damaged_metadata_files_of_a_moved_table_are_named_where_they_were_read() {
    let metadata = |dir: &Path| dir.join("metadata");
    for (damaged, kind) in [
        ("snap-2049152867955782130-1-", "manifest list"),
        ("-m0.avro", "manifest"),
    ] {
        let table = crate::fixtures::copy_table("sample_table");
        let dir = std::fs::canonicalize(table.path()).unwrap();
        let mut hit = None;
        for entry in std::fs::read_dir(metadata(&dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.contains(damaged) {
                let bytes = std::fs::read(&path).unwrap();
                std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
                hit = Some(name);
            }
        }
        let name = hit.expect("a file to damage");
        let out = run(&[
            "--table",
            &format!("t={}", dir.display()),
            "-c",
            "SELECT * FROM t",
        ]);
        assert_failure(&out);
        let err = stderr(&out);
        let read_at = format!("(read at 'file://{}/", metadata(&dir).display());
        assert!(
            err.contains(&format!("{kind} 'file:/tmp/iceberg-corpus/")),
            "{err}"
        );
        assert!(err.contains(&read_at), "{kind}: {err}");
        if kind == "manifest list" {
            assert!(
                err.contains(&format!("{}/{name}')", metadata(&dir).display())),
                "{err}"
            );
        }
    }
}

/// Tester U66, fault 4: a table registered by its directory (`--table NAME=DIR`,
/// `CREATE EXTERNAL TABLE … LOCATION 'DIR'`) reads the version another process
/// committed since, at the next statement (before: the version of its registration,
/// the deleted row and not the inserted one), as `iceberg_scan('DIR')` does; its
/// metadata tables too. A table registered by a metadata file stays at that version;
/// after an expiry deleted that version's files, reading it says the table is pinned
/// there (before: a bare "not found" of a manifest list).
#[test]
fn cli_tables_registered_by_directory_read_later_commits_and_metadata_files_stay_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let warehouse = cwd.join("wh");
    let catalog = warehouse.display().to_string();
    let writer = |sql: &str| {
        let out = icefloe(home.path())
            .args(["--catalog", &catalog, "-c", sql])
            .output()
            .unwrap();
        assert_success(&out);
    };
    let out = icefloe(home.path())
        .args([
            "--catalog",
            &catalog,
            "--create-catalog",
            "-c",
            "CREATE SCHEMA ns; CREATE TABLE ns.x (id BIGINT); INSERT INTO ns.x VALUES (1)",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let table = warehouse.join("ns").join("x");
    let hint = std::fs::read_to_string(table.join("metadata/version-hint.text")).unwrap();
    let pinned = table.join(format!("metadata/v{}.metadata.json", hint.trim()));
    assert!(pinned.exists(), "{}", pinned.display());
    let mut shell = Shell::start(
        home.path(),
        &cwd,
        &[
            "--table",
            &format!("tx={}", table.display()),
            "--table",
            &format!("px={}", pinned.display()),
            "--table",
            &format!("py={}", pinned.display()),
        ],
    );
    shell.ask(
        &format!(
            "CREATE EXTERNAL TABLE ex STORED AS ICEBERG LOCATION '{}';",
            table.display()
        ),
        0,
    );
    for t in ["tx", "ex", "px"] {
        let q = format!("SELECT count(*), sum(id) FROM {t};");
        assert_eq!(shell.ask(&q, 2)[1], "1,1", "{t}");
    }
    writer("INSERT INTO ns.x VALUES (2); DELETE FROM ns.x WHERE id = 1");
    for (t, expected) in [("tx", "1,2"), ("ex", "1,2"), ("px", "1,1")] {
        let q = format!("SELECT count(*), sum(id) FROM {t};");
        assert_eq!(shell.ask(&q, 2)[1], expected, "{t}");
    }
    let q = format!(
        "SELECT count(*), sum(id) FROM iceberg_scan('{}');",
        table.display()
    );
    assert_eq!(shell.ask(&q, 2)[1], "1,2");
    assert_eq!(
        shell.ask("SELECT count(*) FROM \"tx$snapshots\";", 2)[1],
        "3"
    );
    assert_eq!(
        shell.ask("SELECT count(*) FROM \"px$snapshots\";", 2)[1],
        "1"
    );
    writer("CALL system.expire_snapshots(table => 'ns.x', older_than => now(), retain_last => 1)");
    assert_eq!(shell.ask("SELECT * FROM tx;", 2)[1], "2");
    assert_eq!(shell.ask("SELECT * FROM ex;", 2)[1], "2");
    // read for the first time after the expiry: its version's files are gone
    writeln!(shell.stdin.as_mut().unwrap(), "SELECT * FROM py;").unwrap();
    drop(shell.stdin.take());
    let err = shell.stderr();
    assert!(
        err.contains("table 'py' is pinned at metadata file")
            && err.contains(&pinned.display().to_string())
            && err.contains("which a later commit expired"),
        "{err}"
    );
}
