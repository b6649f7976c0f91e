//! What a killed writer leaves in a filesystem (Hadoop) warehouse, made here file by file
//! as tester X66 found it after SIGKILLs at exact file operations (faults F1, F2, F4),
//! and what the catalog and `remove_orphan_files` then do with it, through the CLI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A filesystem catalog over `<dir>/wh`.
struct Warehouse {
    dir: tempfile::TempDir,
}

impl Warehouse {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("wh")).expect("warehouse");
        Self { dir }
    }

    /// `<dir>/wh/<relative>`.
    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join("wh").join(relative)
    }

    /// Run `sql` in the CLI (CSV output): stdout, or stderr as the error.
    fn run(&self, sql: &str) -> Result<String, String> {
        let out = Command::new(env!("CARGO_BIN_EXE_icefloe"))
            .env("HOME", self.dir.path())
            .env_remove("ICEFLOE_FAILPOINT")
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .args(["--catalog", &self.path("").display().to_string()])
            .args(["--format", "csv", "-c", sql])
            .output()
            .expect("run");
        match out.status.success() {
            true => Ok(String::from_utf8_lossy(&out.stdout).to_string()),
            false => Err(String::from_utf8_lossy(&out.stderr).to_string()),
        }
    }

    /// Run `sql` in the CLI killed at `ICEFLOE_FAILPOINT` `point`; it must abort there.
    fn killed_at(&self, point: &str, sql: &str) {
        let out = Command::new(env!("CARGO_BIN_EXE_icefloe"))
            .env("HOME", self.dir.path())
            .env("ICEFLOE_FAILPOINT", point)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .args(["--catalog", &self.path("").display().to_string()])
            .args(["-c", sql])
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(&format!("failpoint '{point}' reached")),
            "{sql}: not killed at {point}: {err}"
        );
    }

    fn ok(&self, sql: &str) -> String {
        self.run(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The error of `sql`, which must fail with a message, not a raw I/O error.
    fn refused(&self, sql: &str) -> String {
        let err = self.run(sql).expect_err(sql);
        assert!(!err.contains("os error"), "{sql}: a raw I/O error: {err}");
        err
    }

    /// Age every file 5 days (`touch -d '5 days ago'`), past the default `older_than`.
    fn age(&self) {
        for f in files(&self.path("")) {
            crate::fixtures::set_mtime(&f, crate::fixtures::days_ago(5));
        }
    }

    /// Write `bytes` at `relative`, making its directories.
    fn write(&self, relative: &str, bytes: &[u8]) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, bytes).expect("write");
        path
    }
}

/// Every file under `dir`, recursively, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
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

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// X66 F1: a commit killed before the link of its `v<N>.metadata.json` leaves its staging
/// file `.v<N>.metadata.json.<uuid>.staging` holding the whole new metadata; killed after
/// the link (the commit landed) it leaves the same name hard-linked to the version file.
/// No reader takes either for a version (the newest version is still found with the hint
/// gone), `remove_orphan_files` lists both, and removes them while the table reads whole;
/// other hidden files stay, as in Java.
#[test]
fn a_killed_commits_staging_file_is_an_orphan_that_remove_orphan_files_removes() {
    let wh = Warehouse::new();
    wh.ok(
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1); \
         INSERT INTO ns.t VALUES (2)",
    );
    let meta = wh.path("ns/t/metadata");
    assert!(meta.join("v3.metadata.json").is_file());
    // killed after the link of v3: the staging name is a second link of the version file
    let landed = meta.join(format!(".v3.metadata.json.{}.staging", uuid()));
    std::fs::hard_link(meta.join("v3.metadata.json"), &landed).expect("link");
    // killed before the link of v4: the staging file holds a whole metadata file
    let unlinked = meta.join(format!(".v4.metadata.json.{}.staging", uuid()));
    std::fs::copy(meta.join("v3.metadata.json"), &unlinked).expect("copy");
    let crc = wh.write("ns/t/metadata/.v3.metadata.json.crc", b"kept, as in Java");
    std::fs::remove_file(meta.join("version-hint.text")).expect("hint");
    assert_eq!(wh.ok("SELECT id FROM ns.t ORDER BY id"), "id\n1\n2\n");
    assert!(
        wh.run("INSERT INTO ns.t VALUES (3)").is_ok(),
        "a commit beside the staging files"
    );
    assert!(meta.join("v4.metadata.json").is_file());
    wh.age();

    let listed = wh.ok("CALL system.remove_orphan_files(table => 'ns.t', dry_run => true)");
    for f in [&landed, &unlinked] {
        assert!(
            listed.contains(&f.display().to_string()),
            "{f:?} not in {listed}"
        );
    }
    assert!(!listed.contains(".crc"), "{listed}");
    wh.ok("CALL system.remove_orphan_files(table => 'ns.t')");
    assert!(!landed.exists() && !unlinked.exists());
    assert!(crc.exists(), "another hidden file is kept");
    assert!(
        meta.join("v3.metadata.json").is_file(),
        "the version the staging name linked"
    );
    assert_eq!(wh.ok("SELECT id FROM ns.t ORDER BY id"), "id\n1\n2\n3\n");
    let orphans = wh.ok("CALL system.remove_orphan_files(table => 'ns.t', dry_run => true)");
    assert_eq!(orphans, "orphan_file_location\n");
}

/// X66 F4: a `DROP TABLE` killed after it renamed the table directory to
/// `.<t>.dropped-<uuid>` has dropped the table; `DROP NAMESPACE` removes that directory
/// (instead of failing with "Directory not empty"), and so does the next `DROP TABLE` in
/// the namespace.
#[test]
fn a_killed_drops_hidden_directory_is_removed_by_drop_namespace_and_the_next_drop() {
    let wh = Warehouse::new();
    wh.ok(
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT); INSERT INTO ns.t VALUES (1); \
         CREATE TABLE ns.a (id BIGINT); INSERT INTO ns.a VALUES (1); \
         CREATE TABLE ns.b (id BIGINT)",
    );
    let t_dropped = wh.path(&format!("ns/.t.dropped-{}", uuid()));
    std::fs::rename(wh.path("ns/t"), &t_dropped).expect("the drop's rename");
    assert_eq!(
        wh.ok("SHOW TABLES IN ns"),
        "table_catalog,table_schema,table_name,table_type\nwh,ns,a,BASE TABLE\nwh,ns,b,BASE TABLE\n"
    );
    // the next DROP TABLE in the namespace removes it
    wh.ok("DROP TABLE ns.b");
    assert!(!t_dropped.exists(), "left by the next DROP TABLE");
    assert_eq!(wh.ok("SELECT id FROM ns.a"), "id\n1\n", "the other table");

    let a_dropped = wh.path(&format!("ns/.a.dropped-{}", uuid()));
    std::fs::rename(wh.path("ns/a"), &a_dropped).expect("the drop's rename");
    assert_eq!(
        wh.ok("SHOW TABLES IN ns"),
        "table_catalog,table_schema,table_name,table_type\n"
    );
    wh.ok("DROP NAMESPACE ns");
    assert!(!wh.path("ns").exists());
}

/// X66 F4 with `gc.enabled` false: the drop moves only `metadata/` (to
/// `.metadata.dropped-<uuid>`) and keeps the data files; killed after that rename, the
/// table is gone and its directory holds the kept `data/`, which is no namespace (B67:
/// it listed as `ns.k` and `ns.k.data`). Nothing removes the kept data: `DROP
/// NAMESPACE ns` is refused naming the directory and what left it; once the data is
/// moved away, `DROP NAMESPACE` removes the hidden metadata directory with it.
#[test]
fn a_killed_drop_of_a_table_without_gc_keeps_its_data() {
    let wh = Warehouse::new();
    wh.ok(
        "CREATE SCHEMA ns; CREATE TABLE ns.k (id BIGINT) TBLPROPERTIES ('gc.enabled' = 'false'); \
         INSERT INTO ns.k VALUES (1)",
    );
    let data = files(&wh.path("ns/k/data"));
    assert_eq!(data.len(), 1);
    let hidden = wh.path(&format!("ns/k/.metadata.dropped-{}", uuid()));
    std::fs::rename(wh.path("ns/k/metadata"), &hidden).expect("the drop's rename");
    assert_eq!(
        wh.ok("SHOW TABLES IN ns"),
        "table_catalog,table_schema,table_name,table_type\n"
    );

    assert_eq!(wh.ok("SHOW NAMESPACES"), "namespace\nns\n");
    let err = wh.refused("DROP NAMESPACE ns");
    assert!(
        err.contains(&wh.path("ns/k").display().to_string())
            && err.contains("data files of a table 'ns.k'")
            && err.contains("gc.enabled false"),
        "{err}"
    );
    for ns in ["ns.k", "ns.k.data"] {
        let err = wh.refused(&format!("DROP NAMESPACE {ns}"));
        assert!(err.contains("not found"), "{ns}: {err}");
    }
    assert!(data[0].is_file() && hidden.is_dir());

    std::fs::remove_dir_all(wh.path("ns/k/data")).expect("the kept data moved away");
    wh.ok("DROP NAMESPACE ns.k; DROP NAMESPACE ns");
    assert!(!wh.path("ns").exists());
}

/// X66 F2: a CTAS (or `CREATE TABLE`) killed before its `v1.metadata.json` was linked in
/// place leaves `<ns>/c/metadata/v1.metadata.json#1` (and with a CTAS its data file,
/// manifest and manifest list). That directory is no table and no namespace (nor are its
/// `data/` and `metadata/`); `DROP NAMESPACE` names it (a create still running looks the
/// same, so it is not removed) and `CREATE SCHEMA` there is refused naming it; the
/// create run again works. A stray file or a data file a CTAS killed earlier left is
/// named too, never a raw "Directory not empty".
#[test]
fn a_killed_creates_directory_is_no_namespace_and_drop_namespace_names_it() {
    let wh = Warehouse::new();
    wh.ok("CREATE SCHEMA ns");
    let u = uuid();
    wh.write(&format!("ns/c/data/00000-0-{u}.parquet"), b"PAR1");
    wh.write(&format!("ns/c/metadata/{u}-m0.avro"), b"Obj");
    wh.write(&format!("ns/c/metadata/snap-1-1-{u}.avro"), b"Obj");
    wh.write("ns/c/metadata/v1.metadata.json#1", b"{}");
    wh.write("ns/x/metadata/v1.metadata.json#1", b"{}");

    assert_eq!(
        wh.ok("SHOW TABLES IN ns"),
        "table_catalog,table_schema,table_name,table_type\n"
    );
    assert_eq!(wh.ok("SHOW NAMESPACES IN ns"), "namespace\n");
    assert_eq!(wh.ok("SHOW NAMESPACES"), "namespace\nns\n");
    let err = wh.refused("DROP NAMESPACE ns");
    for part in [
        wh.path("ns/c").display().to_string(),
        wh.path("ns/x").display().to_string(),
        "CTAS of 'ns.c'".to_string(),
        "killed".to_string(),
        "v1.metadata.json#1".to_string(),
    ] {
        assert!(err.contains(&part), "{part:?} not in {err}");
    }
    for ns in ["ns.c", "ns.c.data", "ns.c.metadata"] {
        let err = wh.refused(&format!("DROP NAMESPACE {ns}"));
        assert!(err.contains("not found"), "{err}");
    }
    let err = wh.refused("CREATE SCHEMA ns.c");
    assert!(
        err.contains(&wh.path("ns/c").display().to_string()),
        "{err}"
    );
    let err = wh.refused("CREATE SCHEMA ns.c.data");
    assert!(err.contains("killed"), "{err}");

    // the create again: the leftovers are the new table's orphans
    wh.ok("CREATE TABLE ns.c AS SELECT 1 AS id; CREATE TABLE ns.x (id BIGINT)");
    assert_eq!(wh.ok("SELECT id FROM ns.c"), "id\n1\n");
    wh.ok("DROP TABLE ns.c; DROP TABLE ns.x");

    // a file of no table: a stray one, or the data file of a CTAS killed while writing
    let stray = wh.write("ns/notes.txt", b"?");
    wh.write(&format!("ns/d/data/00000-0-{u}.parquet"), b"PAR1");
    let err = wh.refused("DROP NAMESPACE ns.d.data");
    assert!(err.contains("not found"), "{err}");
    let err = wh.refused("DROP NAMESPACE ns");
    assert!(
        err.contains(&wh.path("ns/d").display().to_string())
            && err.contains("data files of a table 'ns.d'"),
        "{err}"
    );
    std::fs::remove_dir_all(wh.path("ns/d")).expect("rm");
    let err = wh.refused("DROP NAMESPACE ns");
    assert!(err.contains(&stray.display().to_string()), "{err}");
    std::fs::remove_file(stray).expect("rm");
    wh.ok("DROP NAMESPACE ns");
}

/// Helper B67, task 3: a table's data files left without its metadata are no namespace.
/// (a) A CTAS killed after its data files, before any metadata file
/// (`ICEFLOE_FAILPOINT=after-data-files`), leaves `ns/c/` holding only `data/`; (b) a
/// `DROP TABLE` of a table whose `gc.enabled` is false keeps `ns/k/data/` (partitioned:
/// `id=1/…`). `SHOW NAMESPACES` listed `ns.c`, `ns.c.data`, `ns.k`, `ns.k.data` and
/// `ns.k.data.id=1`; now only `ns`, and a namespace inside either is refused naming the
/// directory. A namespace named `data` (with a table, or empty) is still a namespace. The
/// CTAS run again and a table created at the kept directory take their directories (the
/// files left become their orphans, as in Java's `HadoopCatalog`, where the directory is
/// the table); a drop's hidden directory left in `ns/k` is removed by that create.
#[test]
fn a_tables_data_left_without_metadata_is_no_namespace() {
    let wh = Warehouse::new();
    wh.ok(
        "CREATE SCHEMA ns; CREATE TABLE ns.k (id BIGINT) PARTITIONED BY (id) \
         TBLPROPERTIES ('gc.enabled' = 'false'); INSERT INTO ns.k VALUES (1), (2); \
         CREATE SCHEMA ns2; CREATE SCHEMA ns2.data; CREATE TABLE ns2.data.t (id BIGINT); \
         INSERT INTO ns2.data.t VALUES (1); CREATE SCHEMA ns2.data.data; CREATE SCHEMA ns3; \
         CREATE SCHEMA ns3.data",
    );
    wh.killed_at("after-data-files", "CREATE TABLE ns.c AS SELECT 1 AS id");
    let c_files = files(&wh.path("ns/c"));
    assert!(
        !c_files.is_empty() && c_files.iter().all(|f| f.starts_with(wh.path("ns/c/data"))),
        "the kill left data files only: {c_files:?}"
    );
    wh.ok("DROP TABLE ns.k");
    let kept = files(&wh.path("ns/k"));
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        kept.iter().all(|f| f.starts_with(wh.path("ns/k/data"))),
        "{kept:?}"
    );

    assert_eq!(wh.ok("SHOW NAMESPACES"), "namespace\nns\nns2\nns3\n");
    for (ns, listed) in [
        ("ns", ""),
        ("ns2", "ns2.data\n"),
        ("ns2.data", "ns2.data.data\n"),
        ("ns3", "ns3.data\n"),
    ] {
        assert_eq!(
            wh.ok(&format!("SHOW NAMESPACES IN {ns}")),
            format!("namespace\n{listed}"),
            "{ns}"
        );
    }
    assert_eq!(wh.ok("SELECT id FROM ns2.data.t"), "id\n1\n");
    for ns in ["ns.c", "ns.c.data", "ns.k", "ns.k.data"] {
        let err = wh.refused(&format!("DROP NAMESPACE {ns}"));
        assert!(err.contains("not found"), "{ns}: {err}");
    }
    for (ns, dir) in [("ns.k.x", "ns/k"), ("ns.c.data.x", "ns/c")] {
        let err = wh.refused(&format!("CREATE SCHEMA {ns}"));
        assert!(
            err.contains(&wh.path(dir).display().to_string()) && err.contains("gc.enabled false"),
            "{ns}: {err}"
        );
    }
    let err = wh.refused("DROP NAMESPACE ns");
    for dir in ["ns/c", "ns/k"] {
        assert!(
            err.contains(&wh.path(dir).display().to_string()),
            "{dir} not in {err}"
        );
    }

    // the CTAS again, and a table at the kept directory: the files left are their orphans
    let hidden = wh.path(&format!("ns/k/.metadata.dropped-{}", uuid()));
    std::fs::create_dir_all(&hidden).expect("a killed drop's hidden metadata");
    wh.ok("CREATE TABLE ns.c AS SELECT 1 AS id; CREATE TABLE ns.k (id BIGINT)");
    assert!(!hidden.exists(), "removed by the create");
    assert_eq!(wh.ok("SELECT id FROM ns.c"), "id\n1\n");
    assert_eq!(wh.ok("SELECT count(*) AS n FROM ns.k"), "n\n0\n");
    wh.age();
    let orphans = wh.ok("CALL system.remove_orphan_files(table => 'ns.k', dry_run => true)");
    for f in &kept {
        assert!(
            orphans.contains(&f.display().to_string()),
            "{f:?} not in {orphans}"
        );
    }
    assert_eq!(wh.ok("SHOW NAMESPACES IN ns"), "namespace\n");
}
