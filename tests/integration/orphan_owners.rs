//! `remove_orphan_files` never deletes a file another table of the catalog (or the catalog
//! itself) needs, and the SQL catalog refuses a new table where another one lives (tester
//! R65 F1, F2, F3), through the CLI: every file aged 5 days, past the default
//! `older_than` of 3 days, as the tester's `touch -d '5 days ago'`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A SQLite catalog `cat.db` in `dir` (the warehouse is `dir`, as the CLI's default).
struct Lake {
    dir: tempfile::TempDir,
}

impl Lake {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("cat.db"), b"").expect("touch");
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Run `sql` in the CLI (CSV output): stdout, or stderr as the error.
    fn run(&self, sql: &str) -> Result<String, String> {
        let catalog = format!("sqlite:{}", self.path().join("cat.db").display());
        let out = Command::new(env!("CARGO_BIN_EXE_icefloe"))
            .env("HOME", self.path())
            .env_remove("ICEFLOE_FAILPOINT")
            .current_dir(self.path())
            .stdin(Stdio::null())
            .args(["--catalog", &catalog, "--format", "csv", "-c", sql])
            .output()
            .expect("run");
        match out.status.success() {
            true => Ok(String::from_utf8_lossy(&out.stdout).to_string()),
            false => Err(String::from_utf8_lossy(&out.stderr).to_string()),
        }
    }

    fn ok(&self, sql: &str) -> String {
        self.run(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The ids of `table`, sorted, as CSV lines.
    fn ids(&self, table: &str) -> String {
        self.ok(&format!("SELECT id FROM {table} ORDER BY id"))
    }

    /// Every file under the lake, recursively.
    fn files(&self) -> Vec<PathBuf> {
        let mut out = vec![];
        let mut stack = vec![self.path().to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("read dir") {
                let path = e.expect("entry").path();
                match path.is_dir() {
                    true => stack.push(path),
                    false => out.push(path),
                }
            }
        }
        out.sort();
        out
    }

    /// Age every file 5 days (`touch -d '5 days ago'`).
    fn age(&self) {
        for f in self.files() {
            crate::fixtures::set_mtime(&f, crate::fixtures::days_ago(5));
        }
    }

    /// A file no metadata names at `relative`, 5 days old.
    fn orphan(&self, relative: &str) -> PathBuf {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, b"not referenced").expect("write");
        crate::fixtures::set_mtime(&path, crate::fixtures::days_ago(5));
        path
    }

    /// Run `sql` with `table`'s catalog row hidden (moved to another `catalog_name`), as a
    /// catalog that did not refuse it (Java's `JdbcCatalog`, or icefloe before R65)
    /// would have run it.
    fn with_row_hidden(&self, table: &str, sql: &str) {
        let conn = rusqlite::Connection::open(self.path().join("cat.db")).expect("sqlite");
        let (ns, name) = table.rsplit_once('.').expect("ns.table");
        let set = |from: &str, to: &str| {
            conn.execute(
                "UPDATE iceberg_tables SET catalog_name = ?1 WHERE catalog_name = ?2 \
                 AND table_namespace = ?3 AND table_name = ?4",
                rusqlite::params![to, from, ns, name],
            )
            .expect("update")
        };
        assert_eq!(set("default", "hidden"), 1);
        self.ok(sql);
        assert_eq!(set("hidden", "default"), 1);
    }
}

/// R65 F1: a table renamed keeps its location; a new table under its old name would get
/// that location by default. The SQL catalog refuses the create; and where a catalog
/// holds two such tables anyway, `remove_orphan_files` of either is refused naming the
/// other, and both read all their rows.
#[test]
fn a_renamed_tables_location_is_refused_to_a_new_table_and_its_files_kept() {
    let lake = Lake::new();
    lake.ok(
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1), (2); \
         ALTER TABLE ns.t RENAME TO ns.t_old",
    );
    let err = lake
        .run("CREATE TABLE ns.t (id BIGINT)")
        .expect_err("a new table at the renamed one's location");
    for part in ["table 'ns.t_old'", "lives there", "LOCATION"] {
        assert!(err.contains(part), "{part:?} not in {err}");
    }
    lake.with_row_hidden(
        "ns.t_old",
        "CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (3)",
    );
    lake.age();
    let before = lake.files();
    for table in ["ns.t", "ns.t_old"] {
        let err = lake
            .run(&format!(
                "CALL system.remove_orphan_files(table => '{table}')"
            ))
            .expect_err("orphans of a table sharing its location");
        assert!(err.contains("cannot remove orphan files under"), "{err}");
        assert!(err.contains("has this location too"), "{err}");
    }
    assert_eq!(lake.files(), before, "files deleted");
    assert_eq!(lake.ids("ns.t_old"), "id\n1\n2\n");
    assert_eq!(lake.ids("ns.t"), "id\n3\n");
}

/// R65 F1, the explicit form: `LOCATION` naming another table's location is refused;
/// where a catalog holds such a table anyway, its `remove_orphan_files` is refused and
/// the other table reads all its rows.
#[test]
fn a_location_of_another_table_is_refused_and_its_files_kept() {
    let lake = Lake::new();
    lake.ok("CREATE SCHEMA ns; CREATE TABLE ns.a (id BIGINT); INSERT INTO ns.a VALUES (1), (2)");
    let location = lake.path().join("ns").join("a");
    let create = format!(
        "CREATE TABLE ns.b (id BIGINT) LOCATION '{}'",
        location.display()
    );
    let err = lake
        .run(&create)
        .expect_err("a table at another's location");
    assert!(
        err.contains("table 'ns.a'") && err.contains("lives there"),
        "{err}"
    );
    // the same directory in another form (trailing slash, `file://`)
    let err = lake
        .run(&format!(
            "CREATE TABLE ns.b (id BIGINT) LOCATION 'file://{}/'",
            location.display()
        ))
        .expect_err("a table at another's location");
    assert!(err.contains("table 'ns.a'"), "{err}");
    lake.with_row_hidden("ns.a", &format!("{create}; INSERT INTO ns.b VALUES (3)"));
    lake.age();
    let before = lake.files();
    let err = lake
        .run("CALL system.remove_orphan_files(table => 'ns.b')")
        .expect_err("orphans of a table sharing its location");
    assert!(err.contains("table 'ns.a'"), "{err}");
    assert_eq!(lake.files(), before, "files deleted");
    assert_eq!(lake.ids("ns.a"), "id\n1\n2\n");
    assert_eq!(lake.ids("ns.b"), "id\n3\n");
}

/// R65 F2: tables sharing a `write.data.path` and `write.metadata.path` outside their
/// locations. As in Java, only the table location is listed by default: the other
/// table's files are kept, the table's own orphans deleted; the shared path given as
/// `location` is refused naming the other table.
#[test]
fn a_shared_write_path_is_not_listed_by_default_and_refused_as_location() {
    let lake = Lake::new();
    let w = lake.path().display().to_string();
    lake.ok(&format!(
        "CREATE SCHEMA ns; \
         CREATE TABLE ns.c (id BIGINT) TBLPROPERTIES ('write.data.path'='{w}/shared-data', \
           'write.metadata.path'='{w}/shared-meta'); \
         CREATE TABLE ns.d (id BIGINT) TBLPROPERTIES ('write.data.path'='{w}/shared-data', \
           'write.metadata.path'='{w}/shared-meta'); \
         INSERT INTO ns.c VALUES (1); INSERT INTO ns.d VALUES (2)"
    ));
    lake.age();
    let stray = lake.orphan("ns/c/stray.parquet");
    let shared_stray = lake.orphan("shared-data/stray.parquet");
    let out = lake.ok("CALL system.remove_orphan_files(table => 'ns.c')");
    assert_eq!(
        out,
        format!("orphan_file_location\nfile://{}\n", stray.display())
    );
    assert!(!stray.exists() && shared_stray.exists());
    assert_eq!(lake.ids("ns.d"), "id\n2\n");
    assert_eq!(lake.ids("ns.c"), "id\n1\n");
    for dir in ["shared-data", "shared-meta"] {
        let err = lake
            .run(&format!(
                "CALL system.remove_orphan_files(table => 'ns.c', location => '{w}/{dir}')"
            ))
            .expect_err("a write path shared with another table");
        assert!(err.contains("table 'ns.d'"), "{err}");
        assert!(err.contains(&format!("{w}/{dir}")), "{err}");
    }
    assert!(shared_stray.exists());
    assert_eq!(lake.ids("ns.d"), "id\n2\n");
}

/// R65 F2, second form: a table whose `write.data.path` is another table's data
/// directory. Its orphan removal lists its location only; the other table's removes its
/// own orphans beside it and skips that directory (whose files are the first table's).
#[test]
fn a_write_path_inside_another_table_keeps_both_tables_files() {
    let lake = Lake::new();
    let w = lake.path().display().to_string();
    lake.ok(&format!(
        "CREATE SCHEMA ns; CREATE TABLE ns.a (id BIGINT); INSERT INTO ns.a VALUES (1), (2); \
         CREATE TABLE ns.c (id BIGINT) TBLPROPERTIES ('write.data.path'='{w}/ns/a/data/c'); \
         INSERT INTO ns.c VALUES (3)"
    ));
    lake.age();
    let c_stray = lake.orphan("ns/c/metadata/stray.avro");
    let a_stray = lake.orphan("ns/a/metadata/stray.avro");
    let out = lake.ok("CALL system.remove_orphan_files(table => 'ns.c')");
    assert_eq!(
        out,
        format!("orphan_file_location\nfile://{}\n", c_stray.display())
    );
    assert_eq!(lake.ids("ns.a"), "id\n1\n2\n");
    let out = lake.ok("CALL system.remove_orphan_files(table => 'ns.a')");
    assert_eq!(
        out,
        format!("orphan_file_location\nfile://{}\n", a_stray.display())
    );
    assert_eq!(lake.ids("ns.c"), "id\n3\n");
    assert_eq!(lake.ids("ns.a"), "id\n1\n2\n");
}

/// R65 F3: a table at the warehouse root, which holds the catalog database and the other
/// tables: its orphan removal deletes its own orphans only, never the database, nor
/// another table's files.
#[test]
fn a_table_at_the_warehouse_root_keeps_the_catalog_and_other_tables() {
    let lake = Lake::new();
    let w = lake.path().display().to_string();
    lake.ok(&format!(
        "CREATE SCHEMA ns; CREATE TABLE ns.a (id BIGINT); INSERT INTO ns.a VALUES (1); \
         CREATE TABLE ns.b (id BIGINT) LOCATION '{w}'; INSERT INTO ns.b VALUES (2)"
    ));
    lake.age();
    let b_stray = lake.orphan("data/stray.parquet");
    let a_stray = lake.orphan("ns/a/data/stray.parquet");
    let out = lake.ok("CALL system.remove_orphan_files(table => 'ns.b')");
    assert_eq!(
        out,
        format!("orphan_file_location\nfile://{}\n", b_stray.display())
    );
    assert!(lake.path().join("cat.db").exists(), "the catalog database");
    assert!(a_stray.exists(), "ns.a's directory is ns.a's");
    assert_eq!(lake.ids("ns.a"), "id\n1\n");
    assert_eq!(lake.ids("ns.b"), "id\n2\n");
    // ns.a's own orphan removal is not refused by ns.b above it (ns.b writes under
    // <warehouse>/data and <warehouse>/metadata only)
    let out = lake.ok("CALL system.remove_orphan_files(table => 'ns.a')");
    assert_eq!(
        out,
        format!("orphan_file_location\nfile://{}\n", a_stray.display())
    );
    assert_eq!(lake.ids("ns.a"), "id\n1\n");
    assert_eq!(lake.ids("ns.b"), "id\n2\n");
}
