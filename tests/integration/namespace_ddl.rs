//! Namespace DDL through the CLI on SQLite and filesystem catalogs, as PyIceberg then
//! sees it (tester M64's faults 2 to 8).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use crate::cli::{assert_failure, assert_success, icefloe, stderr, stdout};
use crate::interop::{python, run_script};

/// The CLI on the SQLite catalog `cat.db` in `cwd` (created), printing CSV.
fn sql_in(cwd: &Path, sql: &str) -> Output {
    on_catalog(cwd, &["sqlite:cat.db", "--create-catalog"], sql)
}

/// The CLI in `cwd` with `--catalog` and the arguments `catalog`, printing CSV.
fn on_catalog(cwd: &Path, catalog: &[&str], sql: &str) -> Output {
    let home = tempfile::tempdir().expect("home");
    icefloe(home.path())
        .current_dir(cwd)
        .arg("--catalog")
        .args(catalog)
        .args(["--format", "csv"])
        .args(["-c", sql])
        .output()
        .expect("icefloe")
}

/// Tester M64 faults 5 and 6 through the CLI, on each catalog kind that keeps its
/// namespaces on disk: `SHOW NAMESPACES|SCHEMAS|DATABASES [IN ns] [LIKE …]` lists one
/// level as Spark does, `SHOW TABLES … LIKE` filters, `COMMENT ON NAMESPACE` sets the
/// comment where the catalog keeps namespace properties (SQLite; PyIceberg reads it) and
/// is refused, naming the catalog, where it keeps none (filesystem).
#[test]
fn show_namespaces_and_comment_on_namespace_through_the_cli() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    std::fs::create_dir(cwd.join("wh")).expect("warehouse");
    // each with the catalog's name in the session
    let catalogs: [(&[&str], &str); 2] = [
        (&["sqlite:cat.db", "--create-catalog"], "default"),
        (&["wh"], "wh"),
    ];
    for (catalog, name) in catalogs {
        let sql = |sql: &str| on_catalog(&cwd, catalog, sql);
        assert_success(&sql(
            "CREATE SCHEMA ns; CREATE DATABASE payroll; CREATE SCHEMA \"a.b\"; \
             CREATE TABLE ns.sam (id INT); CREATE TABLE ns.other (id INT)",
        ));
        for (statement, expected) in [
            ("SHOW NAMESPACES", "namespace\na\nns\npayroll\n"),
            ("SHOW SCHEMAS LIKE 'P*|x'", "namespace\npayroll\n"),
            ("SHOW DATABASES IN a", "namespace\na.b\n"),
            (
                "SHOW TABLES IN ns LIKE 'S*'",
                "table_catalog,table_schema,table_name,table_type\n\
                 default,ns,sam,BASE TABLE\n",
            ),
        ] {
            let out = sql(statement);
            assert_success(&out);
            let expected = expected.replace("default,", &format!("{name},"));
            assert_eq!(stdout(&out), expected, "{catalog:?}: {statement}");
        }
        let out = sql("SHOW NAMESPACES IN nope");
        assert_failure(&out);
        assert!(
            stderr(&out).contains(&format!("SHOW NAMESPACES IN {name}.nope: namespace 'nope'")),
            "{catalog:?}: {}",
            stderr(&out)
        );
    }
    // the filesystem catalog keeps no namespace properties: refused as ALTER NAMESPACE is
    let out = on_catalog(&cwd, &["wh"], "COMMENT ON NAMESPACE ns IS 'x'");
    assert_failure(&out);
    assert!(
        stderr(&out).contains("COMMENT ON NAMESPACE wh.ns: ")
            && stderr(&out).contains("it keeps no namespace properties"),
        "{}",
        stderr(&out)
    );
    let out = sql_in(
        &cwd,
        "COMMENT ON DATABASE payroll IS 'pay''s'; COMMENT ON SCHEMA ns IS 'gone'; \
         COMMENT ON NAMESPACE ns IS NULL; DESCRIBE NAMESPACE payroll",
    );
    assert_success(&out);
    assert!(stdout(&out).contains("Comment,pay's\n"), "{}", stdout(&out));
    if python().is_none() {
        return;
    }
    let db = cwd.join("cat.db");
    let seen = run_script(
        "pyiceberg_namespaces.py",
        &[db.as_os_str(), cwd.as_os_str(), OsStr::new("payroll")],
    );
    assert_eq!(seen["properties"]["comment"], "pay's", "{seen}");
    let seen = run_script(
        "pyiceberg_namespaces.py",
        &[db.as_os_str(), cwd.as_os_str(), OsStr::new("ns")],
    );
    assert!(seen["properties"].get("comment").is_none(), "{seen}");
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
