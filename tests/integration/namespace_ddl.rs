//! Namespace DDL through the CLI on a SQLite catalog, as PyIceberg then sees it (tester
//! M64's faults 2, 3, 4 and 7).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use crate::cli::{assert_failure, assert_success, icefloe, stderr, stdout};
use crate::interop::{python, run_script};

/// The CLI on the SQLite catalog `cat.db` in `cwd` (created), printing CSV.
fn sql_in(cwd: &Path, sql: &str) -> Output {
    let home = tempfile::tempdir().expect("home");
    icefloe(home.path())
        .current_dir(cwd)
        .args([
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

/// A relative namespace `LOCATION` is stored as the `file:` URL of its absolute path (it
/// was stored as typed, and PyIceberg, running elsewhere, made its table under its own
/// working directory, which icefloe then could not read); a blank one is refused. The
/// clauses win over `comment`/`location` properties, reserved keys are refused, and
/// Spark's property syntax is read.
#[test]
fn namespace_locations_and_properties_read_alike_in_pyiceberg() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    assert_success(&sql_in(
        &cwd,
        "CREATE SCHEMA s2 LOCATION 'rel/ns' COMMENT 'from clause' \
         WITH DBPROPERTIES ('comment' = 'from props', write.mode = true); \
         CREATE TABLE s2.r (id INT NOT NULL); \
         ALTER TABLE s2.r ALTER COLUMN id SET NOT NULL",
    ));
    for (sql, needle) in [
        (
            "CREATE SCHEMA s3 LOCATION ''",
            "CREATE SCHEMA default.s3: LOCATION '': the location name cannot be empty",
        ),
        (
            "ALTER NAMESPACE s2 SET LOCATION ''",
            "ALTER NAMESPACE default.s2: LOCATION '': the location name cannot be empty",
        ),
        (
            "ALTER NAMESPACE s2 SET DBPROPERTIES ('location' = '/elsewhere')",
            "'location' is a reserved namespace property, please use the LOCATION clause",
        ),
        (
            "ALTER TABLE s2.r ALTER COLUMN nope SET NOT NULL",
            "column 'nope' does not exist",
        ),
    ] {
        let out = sql_in(&cwd, sql);
        assert_failure(&out);
        assert!(stderr(&out).contains(needle), "{sql}: {}", stderr(&out));
    }
    let location = format!("file://{}/rel/ns", cwd.display());
    if python().is_none() {
        return;
    }
    // PyIceberg runs in the test's working directory, not the CLI's
    let db = cwd.join("cat.db");
    let seen = run_script(
        "pyiceberg_namespaces.py",
        &[
            db.as_os_str(),
            cwd.as_os_str(),
            OsStr::new("s2"),
            OsStr::new("--create-table"),
            OsStr::new("pt"),
        ],
    );
    let properties = &seen["properties"];
    assert_eq!(properties["location"], location.as_str(), "{seen}");
    assert_eq!(properties["comment"], "from clause", "{seen}");
    assert_eq!(properties["write.mode"], "true", "{seen}");
    assert_eq!(seen["table_location"], format!("{location}/pt").as_str());
    // and icefloe reads the table PyIceberg made there
    let out = sql_in(&cwd, "SELECT a FROM s2.pt");
    assert_success(&out);
    assert_eq!(stdout(&out), "a\n1\n");
}
