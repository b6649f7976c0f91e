//! Where tables and their files go, through the CLI (tester R65's faults F4, F5, F6):
//! tables inside tables on a filesystem catalog, a staging location over the live table,
//! relative write paths.

use std::path::Path;
use std::process::Output;

use crate::cli::{assert_failure, assert_success, icefloe, stderr, stdout};

/// The CLI on `catalog` (a `--catalog` value) in `cwd`, creating it, printing CSV.
fn sql_in(cwd: &Path, catalog: &str, sql: &str) -> Output {
    let home = tempfile::tempdir().expect("home");
    icefloe(home.path())
        .current_dir(cwd)
        .args(["--catalog", catalog, "--create-catalog", "--format", "csv"])
        .args(["-c", sql])
        .output()
        .expect("icefloe")
}

/// Every file below `dir`, relative to it, sorted.
fn files_below(dir: &Path) -> Vec<String> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("below").to_string_lossy();
                out.push(rel.into_owned());
            }
        }
    }
    out.sort();
    out
}

/// F4: on a filesystem catalog a table's `data/` and `metadata/` directories are not
/// namespaces, so no table is made inside another table's directory (its `DROP TABLE`
/// removed the whole directory, and the inner table with it); a table is not made over a
/// namespace directory holding tables (it hid them, and its drop deleted them); and
/// `CREATE SCHEMA` over a table says a table is there (it reported success and made
/// nothing). The tables stay whole and listed.
#[test]
fn filesystem_catalog_keeps_tables_out_of_each_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = dir.path();
    assert_success(&sql_in(
        cwd,
        "wh",
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id INT); INSERT INTO ns.t VALUES (1); \
         CREATE SCHEMA \"ns.x\"; CREATE TABLE \"ns.x\".u (id INT); \
         INSERT INTO \"ns.x\".u VALUES (5); CREATE SCHEMA \"ns.e\"",
    ));
    for (sql, needle) in [
        // a table's directories are no namespaces: nothing is made in them
        (
            "CREATE TABLE \"ns.t.data\".u (id INT)",
            "namespace 'ns.t.data' does not exist in catalog 'wh'",
        ),
        (
            "CREATE TABLE \"ns.t.metadata\".u (id INT)",
            "namespace 'ns.t.metadata' does not exist in catalog 'wh'",
        ),
        (
            "CREATE TABLE \"ns.t.data\".u AS SELECT 1 AS id",
            "namespace 'ns.t.data' does not exist in catalog 'wh'",
        ),
        (
            "CREATE TABLE ns.x (id INT)",
            "the directory of namespace 'ns.x', which holds table 'ns.x.u'",
        ),
        (
            "CREATE TABLE ns.x AS SELECT 1 AS id",
            "which holds table 'ns.x.u'",
        ),
        (
            "CREATE SCHEMA \"ns.t\"",
            "namespace 'ns.t' cannot be created in filesystem catalog 'wh': a table exists \
             there",
        ),
        (
            "CREATE SCHEMA \"ns.t.data\"",
            "namespace 'ns.t.data' of filesystem catalog 'wh' would lie inside the \
             directory of table 'ns.t'",
        ),
        (
            "DESCRIBE NAMESPACE \"ns.t.data\"",
            "namespace 'ns.t.data' in catalog 'wh'",
        ),
    ] {
        let out = sql_in(cwd, "wh", sql);
        assert_failure(&out);
        assert!(stderr(&out).contains(needle), "{sql}: {}", stderr(&out));
    }
    // an empty namespace's directory may become a table (nothing is hidden)
    assert_success(&sql_in(cwd, "wh", "CREATE TABLE ns.e (id INT)"));
    let out = sql_in(
        cwd,
        "wh",
        "SELECT schema_name FROM information_schema.schemata",
    );
    assert_success(&out);
    assert!(!stdout(&out).contains("ns.t"), "{}", stdout(&out));
    let out = sql_in(
        cwd,
        "wh",
        "DROP TABLE ns.t; SELECT * FROM \"ns.x\".u; SHOW TABLES",
    );
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("\n5\n"), "{text}");
    assert!(text.contains("ns.x,u"), "{text}");
    let left = files_below(&cwd.join("wh/ns"));
    assert!(left.iter().all(|f| !f.starts_with("t/")), "{left:?}");
    assert!(left.iter().any(|f| f.starts_with("x/u/data/")), "{left:?}");
}

/// The bytes of every file below `dir`, by path relative to it.
fn contents_below(dir: &Path) -> Vec<(String, Vec<u8>)> {
    files_below(dir)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(&f)).expect("read");
            (f, bytes)
        })
        .collect()
}

/// F5: `rewrite_table_path` with the staging location at the source prefix staged each
/// rewritten file over its live source (the table's own metadata then named the target
/// prefix: unreadable by other engines) and reported success. That location is refused
/// in every form, and among the table's files a staged file is created only where none
/// is (an existing one fails the call and stays as it was); the table's files are
/// unchanged and it still reads.
#[test]
fn rewrite_table_path_never_stages_over_live_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let cat = "sqlite:cat.db";
    assert_success(&sql_in(
        &cwd,
        cat,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1)",
    ));
    let table = cwd.join("ns/t");
    let loc = table.display().to_string();
    let metadata_json = files_below(&table.join("metadata"))
        .into_iter()
        .find(|f| f.starts_with("00001-"))
        .expect("current metadata file");
    // a file where a staged one would go, below the table
    let blocked = table.join("stage/metadata").join(&metadata_json);
    std::fs::create_dir_all(blocked.parent().expect("parent")).expect("mkdir");
    std::fs::write(&blocked, b"not mine").expect("write");
    let before = contents_below(&table);
    for (staging, needle) in [
        (loc.clone(), "is the source prefix"),
        (format!("{loc}/"), "is the source prefix"),
        (format!("file://{loc}"), "is the source prefix"),
        (format!("file:{loc}//"), "is the source prefix"),
        (
            format!("{loc}/stage"),
            "lies among the table's files, where no file is replaced",
        ),
    ] {
        let out = sql_in(
            &cwd,
            cat,
            &format!(
                "CALL system.rewrite_table_path(table => 'ns.t', source_prefix => '{loc}', \
                 target_prefix => '/elsewhere/t', staging_location => '{staging}')"
            ),
        );
        assert_failure(&out);
        assert!(stderr(&out).contains(needle), "{staging}: {}", stderr(&out));
    }
    let after: Vec<(String, Vec<u8>)> = contents_below(&table)
        .into_iter()
        .filter(|(f, _)| !f.starts_with("stage/") || f.ends_with(&metadata_json))
        .collect();
    assert_eq!(after, before, "the table's files changed");
    let out = sql_in(&cwd, cat, "SELECT * FROM ns.t");
    assert_success(&out);
    assert_eq!(stdout(&out), "id\n1\n");
}

/// F6: a relative `write.data.path` / `write.metadata.path` was stored as typed and
/// files were written under the writer's working directory, so the table read only from
/// there. Relative path properties are refused, naming the property, when a table is
/// created, replaced or altered; absolute ones are taken.
#[test]
fn relative_write_paths_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let cat = "sqlite:cat.db";
    assert_success(&sql_in(
        &cwd,
        cat,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT)",
    ));
    for (sql, key, value) in [
        (
            "CREATE TABLE ns.r (id BIGINT) TBLPROPERTIES ('write.data.path'='reldata')",
            "write.data.path",
            "reldata",
        ),
        (
            "CREATE TABLE ns.r TBLPROPERTIES ('write.metadata.path'='./relmeta') AS SELECT 1 AS id",
            "write.metadata.path",
            "./relmeta",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('write.metadata.path'='relmeta')",
            "write.metadata.path",
            "relmeta",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('write.object-storage.path'='objects')",
            "write.object-storage.path",
            "objects",
        ),
        (
            "REPLACE TABLE ns.t (id BIGINT) TBLPROPERTIES ('write.folder-storage.path'='../f')",
            "write.folder-storage.path",
            "../f",
        ),
    ] {
        let out = sql_in(&cwd, cat, sql);
        assert_failure(&out);
        let needle = format!("table property '{key}' is '{value}', not an absolute location");
        assert!(stderr(&out).contains(&needle), "{sql}: {}", stderr(&out));
    }
    let data = cwd.join("elsewhere/data");
    let out = sql_in(
        &cwd,
        cat,
        &format!(
            "ALTER TABLE ns.t SET TBLPROPERTIES ('write.data.path'='{}'); \
             INSERT INTO ns.t VALUES (1); SELECT * FROM ns.t",
            data.display()
        ),
    );
    assert_success(&out);
    assert_eq!(stdout(&out), "count\n1\nid\n1\n");
    assert_eq!(files_below(&data).len(), 1, "{:?}", files_below(&data));
    let out = sql_in(&cwd, cat, "SHOW TABLES");
    assert!(!stdout(&out).contains(",ns,r,"), "{}", stdout(&out));
}

/// F7/F10: an object store table location holding `#` or `?` (other engines read them
/// as a URL's fragment and query, and looked for other keys) or on `az://` (no other
/// engine takes it for a table) is refused, naming the character or scheme, for a new
/// table's location, a path property and `SET LOCATION`, before anything is written. On
/// local disk both characters stay allowed.
#[test]
fn object_store_locations_other_engines_cannot_read_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let cat = "sqlite:cat.db";
    assert_success(&sql_in(
        &cwd,
        cat,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); \
         CREATE TABLE ns.\"l#1?x\" (id BIGINT); INSERT INTO ns.\"l#1?x\" VALUES (1)",
    ));
    for (sql, needle) in [
        (
            "CREATE TABLE ns.a (id BIGINT) LOCATION 's3://bucket/wh/T#1'",
            "table location 's3://bucket/wh/T#1' holds '#': other engines",
        ),
        (
            "CREATE TABLE ns.a (id BIGINT) LOCATION 'gs://bucket/wh/T?x'",
            "holds '?'",
        ),
        (
            "CREATE TABLE ns.a (id BIGINT) LOCATION 'az://cont/t'",
            "table location 'az://cont/t': other engines (Iceberg Java's ADLSFileIO, \
             PyIceberg) do not read az:// table locations",
        ),
        (
            "CREATE TABLE ns.a (id BIGINT) TBLPROPERTIES ('write.data.path'='s3://b/d#x')",
            "table property 'write.data.path' 's3://b/d#x' holds '#'",
        ),
        (
            "ALTER TABLE ns.t SET LOCATION 's3://bucket/a?b'",
            "table location 's3://bucket/a?b' holds '?'",
        ),
        (
            "ALTER TABLE ns.t SET LOCATION 'az://cont/t'",
            "do not read az:// table locations",
        ),
        (
            "ALTER TABLE ns.t SET TBLPROPERTIES ('write.metadata.path'='az://c/m')",
            "table property 'write.metadata.path' 'az://c/m'",
        ),
    ] {
        let out = sql_in(&cwd, cat, sql);
        assert_failure(&out);
        assert!(stderr(&out).contains(needle), "{sql}: {}", stderr(&out));
    }
    let out = sql_in(&cwd, cat, "SHOW TABLES; SELECT * FROM ns.\"l#1?x\"");
    assert_success(&out);
    assert!(!stdout(&out).contains(",ns,a,"), "{}", stdout(&out));
    assert!(stdout(&out).ends_with("id\n1\n"), "{}", stdout(&out));
}

/// F9: `"a.b".u` of a namespace `a.b` that does not exist (namespace `a` does) says the
/// namespace is unknown; it said there was no file `b.u` in the working directory.
#[test]
fn unknown_dotted_namespace_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let cat = "sqlite:cat.db";
    assert_success(&sql_in(
        &cwd,
        cat,
        "CREATE SCHEMA a; CREATE TABLE a.t (id INT)",
    ));
    for sql in ["SELECT * FROM \"a.b\".u", "SELECT u.id FROM \"a.b\".u"] {
        let out = sql_in(&cwd, cat, sql);
        assert_failure(&out);
        assert_eq!(
            stderr(&out),
            "error: schema (namespace) 'a.b' not found in catalog 'default' (schemas: a, \
             public), nor is 'b.u' a table of schema 'default.a' (tables: t)\n",
            "{sql}"
        );
    }
    let out = sql_in(&cwd, cat, "SELECT * FROM \"x.y\".u");
    assert_failure(&out);
    assert!(
        stderr(&out).contains("schema (namespace) 'x.y' not found in catalog 'default'"),
        "{}",
        stderr(&out)
    );
}
