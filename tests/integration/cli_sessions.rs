//! A long-lived CLI session (SQL piped in) whose state must follow what the session itself
//! and other `icefloe` processes change meanwhile: prepared statements, views, and the
//! session's lists of namespaces and tables.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use super::cli::{assert_success, catalog_with, icefloe, run, run_with_stdin, stderr, stdout};

/// An `icefloe --catalog CATALOG --format csv` shell reading SQL from a pipe, run step
/// by step: [`Session::run`] returns once the session has run what it was given, so
/// another process can change the catalog between two steps.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    steps: usize,
}

impl Session {
    /// Start the session; it has listed the catalog's namespaces and tables when this
    /// returns.
    fn start(home: &Path, catalog: &str) -> Self {
        let mut child = icefloe(home)
            .args(["--catalog", catalog, "--format", "csv"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the session starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut session = Self {
            child,
            stdin,
            stdout,
            steps: 0,
        };
        session.run("SELECT 1 AS started;");
        session
    }

    /// Run `sql` (whole lines) in the session: what it printed on stdout (its errors go to
    /// stderr, which [`Session::finish`] returns).
    fn run(&mut self, sql: &str) -> String {
        self.steps += 1;
        let mark = format!("step_{}_done", self.steps);
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{sql}\nSELECT '{mark}' AS step;").expect("write SQL");
        stdin.flush().expect("flush SQL");
        let mut printed = String::new();
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read stdout");
            assert!(n > 0, "the session ended before {mark}; stdout:\n{printed}");
            if line.trim_end() == mark {
                // the `step` header line before it is the mark's too
                let kept = printed.strip_suffix("step\n").unwrap_or(&printed);
                return kept.to_string();
            }
            printed.push_str(&line);
        }
    }

    /// End the session: its exit status code and stderr.
    fn finish(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().expect("the session ends");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// `sql` run in another process (`-c`) on `catalog`, which must succeed.
fn other_process(home: &Path, catalog: &str, sql: &str) {
    let out = icefloe(home)
        .args(["--catalog", catalog, "-c", sql])
        .output()
        .expect("run");
    assert_success(&out);
}

/// A prepared `INSERT` takes the column's write-default as it is at each `EXECUTE`: after
/// `SET DEFAULT` the new one, after `DROP DEFAULT` none (the `NOT NULL` column's row is
/// refused, as the same `INSERT` run directly is). A tester found the default of the
/// `PREPARE` written (rows 2 → 5 and 4 → 5), for `VALUES ($1)`, `SELECT $1` and `VALUES
/// ($1, DEFAULT)`. A prepared `UPDATE … SET n = DEFAULT` and `MERGE` do the same.
#[test]
fn prepared_inserts_take_the_write_default_of_each_execute() {
    let (_dir, catalog) = catalog_with(
        "CREATE SCHEMA ns; CREATE TABLE ns.df (id BIGINT) TBLPROPERTIES ('format-version'='3'); \
         ALTER TABLE ns.df ADD COLUMN n INT NOT NULL DEFAULT 5",
    );
    let out = run_with_stdin(
        &["--catalog", &catalog, "--format", "csv"],
        "PREPARE ins AS INSERT INTO ns.df (id) VALUES ($1);\n\
         PREPARE sel AS INSERT INTO ns.df (id) SELECT $1;\n\
         PREPARE def AS INSERT INTO ns.df VALUES ($1, DEFAULT);\n\
         PREPARE up AS UPDATE ns.df SET n = DEFAULT WHERE id = $1;\n\
         PREPARE mg AS MERGE INTO ns.df t USING (SELECT $1 AS id) s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET n = DEFAULT WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id);\n\
         EXECUTE ins(1); EXECUTE sel(11); EXECUTE def(21); EXECUTE mg(31);\n\
         ALTER TABLE ns.df ALTER COLUMN n SET DEFAULT 6;\n\
         EXECUTE ins(2); EXECUTE sel(12); EXECUTE def(22); EXECUTE up(1); EXECUTE mg(32);\n\
         EXECUTE mg(31);\n\
         ALTER TABLE ns.df ALTER COLUMN n DROP DEFAULT;\n\
         EXECUTE ins(4);\nEXECUTE sel(14);\nEXECUTE def(24);\nEXECUTE mg(34);\nEXECUTE up(2);\n\
         INSERT INTO ns.df (id) VALUES (5);\n\
         SELECT id, n FROM ns.df ORDER BY id;\n",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = stdout(&out);
    let rows = &rows[rows.rfind("id,n\n").expect("the SELECT's rows")..];
    assert_eq!(
        rows,
        "id,n\n1,6\n2,6\n11,5\n12,6\n21,5\n22,6\n31,6\n32,6\n",
        "{}",
        stderr(&out)
    );
    // each row without a default refused, naming the column, as the INSERT run directly
    let err = stderr(&out);
    for (line, statement) in [
        (11, "EXECUTE ins(4)"),
        (12, "EXECUTE sel(14)"),
        (13, "EXECUTE def(24)"),
        (14, "EXECUTE mg(34)"),
        (15, "EXECUTE up(2)"),
        (16, "INSERT INTO ns.df (id) VALUES (5)"),
    ] {
        let error = err
            .lines()
            .find(|l| l.starts_with(&format!("error: <stdin>:{line} ({statement})")))
            .unwrap_or_else(|| panic!("{statement} refused: {err}"));
        assert!(
            error.contains("column 'n' is required (NOT NULL)"),
            "{error}"
        );
    }
    // the change that made `def` plan again is named: its default, not its columns
    assert!(
        err.contains("the write-default of column 'n' of table ns.df changed since PREPARE def"),
        "{err}"
    );
}

/// A prepared statement or a view aggregating a column dropped and added again under its
/// name and type (another field id) answers as the table queried directly does (NULL for
/// the rows before it, then the new column's values); a tester found DataFusion's
/// "Internal error: Physical input schema should be the same …" at every `EXECUTE` and
/// query of the view. The other process's `DROP TABLE` and `CREATE TABLE` (other ids)
/// too.
#[test]
fn prepared_statements_and_views_follow_a_column_added_again() {
    let (dir, catalog) = catalog_with(
        "CREATE SCHEMA ns; CREATE TABLE ns.r (id BIGINT, v STRING); \
         INSERT INTO ns.r VALUES (1, 'a'), (2, 'b'); \
         CREATE TABLE ns.s (k BIGINT, v STRING); INSERT INTO ns.s VALUES (1, 'a')",
    );
    let mut session = Session::start(dir.path(), &catalog);
    session.run(
        "PREPARE p AS SELECT max(v) AS m FROM ns.r;\n\
         PREPARE g AS SELECT v, count(*) AS c FROM ns.r GROUP BY v ORDER BY v;\n\
         CREATE VIEW ns.vw AS SELECT id, v FROM ns.r;\n\
         PREPARE q AS SELECT count(DISTINCT v) AS d FROM ns.s;\n\
         CREATE VIEW ns.sv AS SELECT k, v FROM ns.s;\n\
         ALTER TABLE ns.r DROP COLUMN v;\n\
         ALTER TABLE ns.r ADD COLUMN v STRING;",
    );
    let printed = session.run(
        "EXECUTE p;\nEXECUTE g;\nSELECT DISTINCT v FROM ns.vw;\nSELECT max(v) AS m FROM ns.vw;",
    );
    assert_eq!(printed, "m\n\nv,c\n,2\nv\n\nm\n\n");
    let printed = session.run(
        "INSERT INTO ns.r VALUES (3, 'c');\n\
         EXECUTE p;\nEXECUTE g;\nSELECT max(v) AS m FROM ns.vw;",
    );
    assert_eq!(printed, "count\n1\nm\nc\nv,c\nc,1\n,2\nm\nc\n");
    // another process makes `ns.s` again: its `v` another column (another field id)
    other_process(
        dir.path(),
        &catalog,
        "DROP TABLE ns.s; CREATE TABLE ns.s (v STRING, k BIGINT); \
         ALTER TABLE ns.s DROP COLUMN v; ALTER TABLE ns.s ADD COLUMN v STRING; \
         INSERT INTO ns.s VALUES (7, 'x'), (8, 'y')",
    );
    let printed = session.run("EXECUTE q;\nSELECT count(DISTINCT v) AS d, max(k) AS k FROM ns.sv;");
    assert_eq!(printed, "d\n2\nd,k\n2,8\n");
    let (status, err) = session.finish();
    assert_eq!(status, Some(0), "{err}");
    assert!(!err.contains("rror"), "{err}");
}

/// After another process dropped a table, the session creates a table or view of its
/// name (every `CREATE` form) and says the table is not found as a new session does; a
/// tester found every `CREATE` refused ("planning the columns: … not found: table
/// 'ns.e'", "cannot create view …: a table or view of that name exists") until `SHOW
/// TABLES`. A table another process created is a name taken for `CREATE VIEW`.
#[test]
fn a_session_creates_names_another_process_dropped() {
    let (dir, catalog) = catalog_with(
        "CREATE SCHEMA ns; CREATE TABLE ns.e (id BIGINT); CREATE TABLE ns.f (id BIGINT); \
         CREATE TABLE ns.g (id BIGINT); CREATE TABLE ns.h (id BIGINT); CREATE TABLE ns.keep (id BIGINT)",
    );
    let mut session = Session::start(dir.path(), &catalog);
    assert_eq!(session.run("SELECT count(*) AS n FROM ns.e;"), "n\n0\n");
    other_process(
        dir.path(),
        &catalog,
        "DROP TABLE ns.e; DROP TABLE ns.f; DROP TABLE ns.g; DROP TABLE ns.h; \
         CREATE TABLE ns.new (id BIGINT)",
    );
    let printed = session.run(
        "SELECT * FROM ns.e;\n\
         CREATE TABLE IF NOT EXISTS ns.e (id BIGINT, x STRING);\n\
         INSERT INTO ns.e VALUES (1, 'a');\n\
         CREATE TABLE ns.f AS SELECT 7 AS id;\n\
         CREATE OR REPLACE TABLE ns.g (id BIGINT, y STRING);\n\
         CREATE VIEW ns.h AS SELECT 8 AS id;\n\
         CREATE VIEW ns.new AS SELECT 9 AS id;\n\
         SELECT x FROM ns.e;\nSELECT id FROM ns.f;\nSELECT y FROM ns.g;\nSELECT id FROM ns.h;",
    );
    // the INSERT's count; then the rows
    assert_eq!(printed, "count\n1\nx\na\nid\n7\ny\nid\n8\n");
    let (status, err) = session.finish();
    assert_eq!(status, Some(1), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 2, "{err}");
    // as a new session says it
    assert!(
        errors[0].contains(
            "(SELECT * FROM ns.e): table 'e' not found in schema 'default.ns' (tables: keep, new)"
        ),
        "{err}"
    );
    assert!(
        errors[1].contains("(CREATE VIEW ns.new AS SELECT 9 AS id): ")
            && errors[1].contains("already exists"),
        "{err}"
    );
    let out = run(&[
        "--catalog",
        &catalog,
        "--format",
        "csv",
        "-c",
        "SELECT id, x FROM ns.e",
    ]);
    assert_success(&out);
    assert_eq!(stdout(&out), "id,x\n1,a\n");
}

/// After a `SHOW TABLES IN ns6` found the namespace missing (another process dropped
/// it), the namespace another process creates again is found, qualified and through
/// `USE`; a tester found it "not found" for every query until a successful `SHOW TABLES
/// IN ns6`.
#[test]
fn a_session_finds_a_namespace_another_process_created_again() {
    let (dir, catalog) = catalog_with("CREATE SCHEMA ns6; CREATE TABLE ns6.q (id BIGINT)");
    let mut session = Session::start(dir.path(), &catalog);
    assert_eq!(session.run("SELECT count(*) AS n FROM ns6.q;"), "n\n0\n");
    other_process(dir.path(), &catalog, "DROP TABLE ns6.q; DROP SCHEMA ns6");
    assert_eq!(session.run("SHOW TABLES IN ns6;"), "");
    other_process(
        dir.path(),
        &catalog,
        "CREATE SCHEMA ns6; CREATE TABLE ns6.q (id BIGINT); INSERT INTO ns6.q VALUES (5)",
    );
    let printed = session.run(
        "SELECT id FROM ns6.q;\nUSE ns6;\nINSERT INTO q VALUES (6);\nSELECT sum(id) AS s FROM q;",
    );
    assert_eq!(printed, "id\n5\ncount\n1\ns\n11\n");
    // through `USE` alone
    other_process(
        dir.path(),
        &catalog,
        "CREATE SCHEMA ns7; CREATE TABLE ns7.w (id BIGINT)",
    );
    assert_eq!(
        session.run("USE ns7;\nSELECT count(*) AS n FROM w;"),
        "n\n0\n"
    );
    let (status, err) = session.finish();
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(status, Some(1), "{err}");
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("(SHOW TABLES IN ns6)"), "{err}");
}
