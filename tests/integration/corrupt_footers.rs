//! A Parquet footer length field beyond its file (report W67 F5): the `parquet` crate's
//! footer decoder panics on it, which killed the CLI reading such a file by path (no
//! `error:` line) and printed the panic before the error for a table's data file. Now
//! the footer is checked before the decoder sees it, and any panic while a statement
//! runs is the statement's error.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use datafusion::arrow::array::{Int64Array, RecordBatch};
use datafusion::parquet::arrow::ArrowWriter;

use crate::cli::{assert_success, icefloe, stderr, stdout};

/// The footer length the tester wrote (2,000,000,000 bytes).
const HUGE_LENGTH: u32 = 2_000_000_000;

/// The CLI in `cwd` on the SQLite catalog `cat.db` there (created), printing CSV, with
/// backtraces on (as in the tester's environment): the default panic hook would print
/// one.
fn sql_in(cwd: &Path, sql: &str) -> Output {
    let home = tempfile::tempdir().expect("home");
    icefloe(home.path())
        .current_dir(cwd)
        .env("RUST_BACKTRACE", "1")
        .env_remove("ICEFLOE_FAILPOINT")
        .args([
            "--quiet",
            "--catalog",
            "sqlite:cat.db",
            "--create-catalog",
            "--format",
            "csv",
        ])
        .args(["-c", sql])
        .output()
        .expect("icefloe")
}

/// Set the footer length field of the Parquet file at `path` (the 4 bytes before the
/// closing `PAR1`) to [`HUGE_LENGTH`]; its size in bytes.
fn break_footer_length(path: &Path) -> u64 {
    let mut bytes = std::fs::read(path).expect("read");
    let n = bytes.len();
    assert_eq!(&bytes[n - 4..], b"PAR1");
    bytes[n - 8..n - 4].copy_from_slice(&HUGE_LENGTH.to_le_bytes());
    std::fs::write(path, &bytes).expect("write");
    n as u64
}

/// A failed run: exit status 1, an `error:` line holding `expected`, and no panic text.
#[track_caller]
fn assert_failed_with(out: &Output, expected: &str) {
    let err = stderr(out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stdout {}\nstderr {err}",
        stdout(out)
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with("error: ") && l.contains(expected)),
        "wanted an error line holding {expected:?}: {err}"
    );
    assert!(!err.contains("panicked at"), "{err}");
    assert!(!err.contains("stack backtrace"), "{err}");
}

/// Reading the file by path (`FROM 'f.parquet'`, an external table, an `INSERT … SELECT`
/// from it) fails naming the file, where the CLI died with the decoder's panic.
#[test]
fn a_footer_length_beyond_the_file_read_by_path_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let file = cwd.join("f.parquet");
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as _)])
            .expect("batch");
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(&file).expect("create"),
        batch.schema(),
        None,
    )
    .expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    let size = break_footer_length(&file);
    let expected = format!(
        "'{}': its footer gives a metadata length of {HUGE_LENGTH} bytes, more than the \
         {size}-byte file holds (corrupt footer)",
        file.display().to_string().trim_start_matches('/')
    );
    let path = file.display();
    for sql in [
        format!("SELECT * FROM '{path}'"),
        format!("CREATE EXTERNAL TABLE x STORED AS PARQUET LOCATION '{path}'; SELECT * FROM x"),
        format!(
            "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); \
             INSERT INTO ns.t SELECT * FROM '{path}'"
        ),
    ] {
        let out = sql_in(&cwd, &sql);
        assert_failed_with(&out, &expected);
    }
    // declared columns: nothing infers the schema, the file's statistics read its footer
    let out = sql_in(
        &cwd,
        &format!(
            "CREATE EXTERNAL TABLE y (id BIGINT) STORED AS PARQUET LOCATION '{path}'; \
             SELECT * FROM y"
        ),
    );
    assert_failed_with(&out, &expected);
}

/// A table's data file: the scan's error names it, with no panic text before it.
#[test]
fn a_data_files_footer_length_beyond_the_file_is_an_error_without_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
    ));
    let out = sql_in(&cwd, "SELECT file_path FROM ns.\"t$files\"");
    assert_success(&out);
    let location = stdout(&out).lines().nth(1).expect("one file").to_string();
    // a local data file is named by its path
    let file = location.trim_start_matches("file://");
    let size = break_footer_length(Path::new(file));
    let expected = format!(
        "data file '{file}' is not a readable Parquet file: its footer gives a metadata \
         length of {HUGE_LENGTH} bytes, more than the {size}-byte file holds (corrupt footer)"
    );
    for sql in [
        "SELECT * FROM ns.t",
        "SELECT count(*) FROM ns.t WHERE id > 0",
        "CALL system.rewrite_data_files(table => 'ns.t', options => map('rewrite-all', 'true'))",
    ] {
        assert_failed_with(&sql_in(&cwd, sql), &expected);
    }
}

/// A panic in the middle of a statement (a test failpoint panicking after an INSERT's
/// data files are written) is that statement's error: exit status 1, an `error:` line
/// naming the statement and the panic's message and location, no panic text, and the
/// statements after it are not run, as after any other error.
#[test]
fn a_panic_while_a_statement_runs_is_its_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT)",
    ));
    let home = tempfile::tempdir().expect("home");
    let out = icefloe(home.path())
        .current_dir(&cwd)
        .env("RUST_BACKTRACE", "1")
        .env("ICEFLOE_FAILPOINT", "after-data-files:panic")
        .args(["--quiet", "--catalog", "sqlite:cat.db", "--format", "csv"])
        .args([
            "-c",
            "SELECT 41 AS a; INSERT INTO ns.t VALUES (1); SELECT 42 AS b",
        ])
        .output()
        .expect("icefloe");
    assert_failed_with(
        &out,
        "-c statement 2 (INSERT INTO ns.t VALUES (1)): internal error: failpoint \
         'after-data-files' reached (panic at src/",
    );
    assert!(
        stderr(&out).contains("please report it)"),
        "{}",
        stderr(&out)
    );
    // the first statement ran, the third did not
    let printed = stdout(&out);
    assert!(
        printed.starts_with("a\n41\n") && !printed.contains("42"),
        "{printed}"
    );
    // nothing was committed
    let out = sql_in(&cwd, "SELECT count(*) AS n FROM ns.t");
    assert_success(&out);
    assert_eq!(stdout(&out), "n\n0\n");
}

/// The same footer in a position delete file, and in a file given to `add_files`: the
/// shared check's error, naming the file (these readers failed cleanly before, in the
/// `parquet` crate's words: "Parquet file too small. Size is 1774 but need 2000000008").
#[test]
fn delete_files_and_added_files_name_the_footer_length_beyond_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT) TBLPROPERTIES \
         ('format-version'='2','write.delete.mode'='merge-on-read'); \
         INSERT INTO ns.t VALUES (1), (2); DELETE FROM ns.t WHERE id = 2",
    ));
    let out = sql_in(
        &cwd,
        "SELECT file_path FROM ns.\"t$files\" WHERE content = 1",
    );
    assert_success(&out);
    let delete = stdout(&out)
        .lines()
        .nth(1)
        .expect("a delete file")
        .to_string();
    let size = break_footer_length(Path::new(delete.trim_start_matches("file://")));
    assert_failed_with(
        &sql_in(&cwd, "SELECT * FROM ns.t"),
        &format!(
            "position delete file '{delete}': its footer gives a metadata length of \
             {HUGE_LENGTH} bytes, more than the {size}-byte file holds (corrupt footer)"
        ),
    );
    // a file to add
    let out = sql_in(
        &cwd,
        "SELECT file_path FROM ns.\"t$files\" WHERE content = 0",
    );
    assert_success(&out);
    let data = stdout(&out)
        .lines()
        .nth(1)
        .expect("a data file")
        .to_string();
    let added = cwd.join("added.parquet");
    std::fs::copy(data.trim_start_matches("file://"), &added).expect("copy");
    let size = break_footer_length(&added);
    assert_failed_with(
        &sql_in(
            &cwd,
            &format!(
                "CALL system.add_files(table => 'ns.t', source_table => '`parquet`.`{}`')",
                added.display()
            ),
        ),
        &format!(
            "is not a readable Parquet file: its footer gives a metadata length of \
             {HUGE_LENGTH} bytes, more than the {size}-byte file holds (corrupt footer)"
        ),
    );
}
