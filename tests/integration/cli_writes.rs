//! Writing through the `icefloe` program: separate processes appending to one table of a
//! SQLite catalog at once, and writers killed at each step of a commit
//! (`ICEFLOE_FAILPOINT`), after which the table reads at the old or the new snapshot —
//! never half — the next write succeeds and `remove_orphan_files` removes exactly the
//! debris; `DROP TABLE` killed midway or racing a commit (`ICEFLOE_PAUSEPOINT`) leaves the
//! table gone, on the SQLite and the filesystem catalog.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use icefloe::catalog::{Catalog, Namespace, SqlCatalog, TableCreation, TableIdent};
use icefloe::spec::{
    NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, Transform, Type,
};

use crate::catalog::{attach, context, scalar_i64};

fn icefloe(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_icefloe"));
    cmd.env("HOME", home)
        .env_remove("ICEFLOE_FAILPOINT")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null());
    cmd
}

/// A fresh SQLite catalog file in `dir`, as the CLI's `--catalog` value.
fn sqlite_catalog(dir: &Path) -> String {
    let db = dir.join("cat.db");
    std::fs::write(&db, b"").expect("touch");
    format!("sqlite:{}", db.display())
}

/// A catalog in `dir` with its warehouse in `dir/wh`: a SQLite catalog (`sql_catalog`) or
/// the warehouse itself as a filesystem catalog. Returns the warehouse, the `--catalog`
/// argument, and the `LOCATION` clause that puts table `ns.t` where the filesystem
/// catalog would (empty for that catalog).
fn catalog_in(dir: &Path, sql_catalog: bool) -> (std::path::PathBuf, String, String) {
    let warehouse = dir.join("wh");
    std::fs::create_dir(&warehouse).expect("warehouse");
    match sql_catalog {
        true => {
            let location = format!(" LOCATION '{}/ns/t'", warehouse.display());
            (warehouse, sqlite_catalog(dir), location)
        }
        false => {
            let arg = warehouse.display().to_string();
            (warehouse, arg, String::new())
        }
    }
}

/// Run `sql` in the CLI on `catalog` (home `dir`) with CSV output.
fn run_csv(dir: &Path, catalog: &str, sql: &str) -> std::process::Output {
    icefloe(dir)
        .args(["--catalog", catalog, "--format", "csv", "-c", sql])
        .output()
        .expect("run")
}

/// An `icefloe --catalog CATALOG -c SQL` run, stopped at `ICEFLOE_PAUSEPOINT` `point`
/// for `ms`: [`Paused::start`] returns once it said it reached the point.
struct Paused {
    child: std::process::Child,
    stderr: std::io::BufReader<std::process::ChildStderr>,
    /// What it wrote to stderr until it paused.
    said: String,
}

impl Paused {
    fn start(dir: &Path, catalog: &str, sql: &str, point: &str, ms: u32, what: &str) -> Self {
        use std::io::BufRead;
        let mut child = icefloe(dir)
            .env("ICEFLOE_PAUSEPOINT", format!("{point}={ms}"))
            .args(["--catalog", catalog, "--format", "csv", "-c", sql])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        let mut said = String::new();
        while !said.contains(&format!("pausepoint '{point}' reached")) {
            let mut line = String::new();
            let n = stderr.read_line(&mut line).expect("read");
            assert!(n > 0, "{what}: it ended before pausing at {point}: {said}");
            said.push_str(&line);
        }
        Self {
            child,
            stderr,
            said,
        }
    }

    /// Its exit status and the rest of its stderr (after it paused).
    fn finish(self) -> (std::process::ExitStatus, String) {
        let (status, rest, _) = self.finish_with_output();
        (status, rest)
    }

    /// [`Self::finish`] with what it wrote to stdout (CSV).
    fn finish_with_output(mut self) -> (std::process::ExitStatus, String, String) {
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stderr, &mut rest).expect("read");
        let mut out = String::new();
        if let Some(mut stdout) = self.child.stdout.take() {
            std::io::Read::read_to_string(&mut stdout, &mut out).expect("read stdout");
        }
        (self.child.wait().expect("wait"), rest, out)
    }
}

/// A catalog `default` with table `ns.t (id long, p int) PARTITIONED BY (p)`; returns its db.
async fn table(dir: &Path, retries: &str) -> std::path::PathBuf {
    let db = dir.join("catalog.db");
    let catalog = SqlCatalog::open_or_create("default", &db).expect("db");
    catalog
        .create_namespace(&Namespace::parse("ns"), &HashMap::new())
        .await
        .expect("ns");
    let mut c = TableCreation::new(Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::optional(2, "p", Type::Primitive(PrimitiveType::Int)),
        ],
    ));
    c.partition_spec = PartitionSpec {
        spec_id: 0,
        fields: vec![PartitionField {
            source_id: 2,
            field_id: Some(1000),
            name: "p".into(),
            transform: Transform::Identity,
        }],
    };
    c.properties
        .insert("commit.retry.num-retries".into(), retries.into());
    c.properties
        .insert("commit.retry.min-wait-ms".into(), "5".into());
    c.properties
        .insert("commit.retry.max-wait-ms".into(), "100".into());
    catalog
        .create_table(&TableIdent::parse("ns.t"), c)
        .await
        .expect("create");
    db
}

async fn count(db: &Path) -> (i64, usize) {
    let catalog: Arc<dyn Catalog> = Arc::new(SqlCatalog::open("default", db).expect("open"));
    let snapshots = catalog
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .expect("the table loads")
        .metadata()
        .snapshots
        .len();
    let ctx = context();
    attach(&ctx, "c", catalog).await;
    (
        scalar_i64(&ctx, "SELECT count(*) FROM c.ns.t").await,
        snapshots,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_cli_processes_each_commit_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = table(dir.path(), "100").await;
    let catalog = format!("sqlite:{}", db.display());
    let mut children = vec![];
    for w in 0..4 {
        let statements: Vec<String> = (0..3)
            .map(|i| format!("INSERT INTO ns.t VALUES ({}, {w})", w * 10 + i))
            .collect();
        children.push(
            icefloe(dir.path())
                .args(["--catalog", &catalog, "-c", &statements.join("; ")])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn"),
        );
    }
    for c in children {
        let out = c.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (rows, snapshots) = count(&db).await;
    assert_eq!((rows, snapshots), (12, 12));
    // a linear history: every snapshot's parent is the one before it
    let table = SqlCatalog::open("default", &db)
        .expect("open")
        .load_table(&TableIdent::parse("ns.t"))
        .await
        .expect("load");
    let m = table.metadata();
    let mut seq = vec![];
    let mut cursor = m.current_snapshot();
    while let Some(s) = cursor {
        seq.push(s.sequence_number);
        cursor = s.parent_snapshot_id.and_then(|p| m.snapshot_by_id(p));
    }
    assert_eq!(seq, (1..=12).rev().collect::<Vec<i64>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_killed_at_any_step_leaves_the_table_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = table(dir.path(), "4").await;
    let catalog = format!("sqlite:{}", db.display());
    let mut expected_rows = 0;
    let points = [
        ("after-data-files", false),
        ("after-manifest", false),
        ("after-manifest-list", false),
        ("after-metadata-file", false),
        ("after-swap", true),
    ];
    for (i, (point, lands)) in points.iter().enumerate() {
        let out = icefloe(dir.path())
            .env("ICEFLOE_FAILPOINT", point)
            .args([
                "--catalog",
                &catalog,
                "-c",
                &format!("INSERT INTO ns.t VALUES ({i}, 1), ({i}, 2)"),
            ])
            .output()
            .expect("run");
        assert!(!out.status.success(), "{point}: the process was not killed");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(point),
            "{point}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if *lands {
            expected_rows += 2;
        }
        let (rows, _) = count(&db).await;
        assert_eq!(rows, expected_rows, "after a crash {point}");
        // and the table takes the next write
        let out = icefloe(dir.path())
            .args([
                "--catalog",
                &catalog,
                "-c",
                "INSERT INTO ns.t VALUES (100, 3)",
            ])
            .output()
            .expect("run");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        expected_rows += 1;
        assert_eq!(
            count(&db).await.0,
            expected_rows,
            "write after a crash {point}"
        );
    }
}

/// Issue 11's check as written: on an empty SQLite file, the CLI creates a schema and a
/// day-partitioned table, inserts two rows and counts them; PyIceberg's `SqlCatalog` on the
/// same file then loads `ns.t` and reads the same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_creates_inserts_and_pyiceberg_reads_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = sqlite_catalog(dir.path());
    let db = dir.path().join("cat.db");
    let out = run_csv(
        dir.path(),
        &catalog,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT, s VARCHAR, ts TIMESTAMP) \
             PARTITIONED BY (day(ts)); INSERT INTO ns.t VALUES (1, 'a', TIMESTAMP \
             '2026-01-01 10:00:00'), (2, 'b', TIMESTAMP '2026-01-02 11:00:00'); \
             SELECT count(*) AS n FROM ns.t",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("count\n2\n"), "{stdout}");
    assert!(stdout.ends_with("n\n2\n"), "{stdout}");
    if crate::interop::python().is_none() {
        return;
    }
    let read = crate::interop::pyiceberg_read(&db, dir.path(), "ns.t");
    assert_eq!(
        read["rows"],
        serde_json::json!([
            [1, "a", "2026-01-01T10:00:00.000000"],
            [2, "b", "2026-01-02T11:00:00.000000"]
        ]),
        "{read}"
    );
    let files = read["files"].as_array().expect("files");
    assert_eq!(files.len(), 2, "one file per day: {read}");
    // the CLI named the snapshot the INSERT committed
    let id = read["snapshots"][0]["snapshot_id"]
        .as_i64()
        .expect("snapshot id");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("committed snapshot {id}")),
        "{stderr}"
    );
}

/// A write staged for write-audit-publish is reported as staged, not as committed to
/// `main`, for an `INSERT` and a row-level statement alike; after publishing, `main`
/// holds the staged snapshot.
#[test]
fn cli_reports_staged_writes_as_staged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = sqlite_catalog(dir.path());
    let out = run_csv(
        dir.path(),
        &catalog,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT) TBLPROPERTIES \
             ('write.wap.enabled'='true'); INSERT INTO ns.t VALUES (1), (2); \
             SET icefloe.wap_id = 'w1'; DELETE FROM ns.t WHERE id = 1; \
             SELECT count(*) AS main_rows FROM ns.t; \
             SELECT snapshot_id FROM ns.\"t$snapshots\" ORDER BY committed_at DESC LIMIT 1",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("main_rows\n2\n"), "{stdout}");
    let staged: i64 = stdout
        .trim_end()
        .rsplit('\n')
        .next()
        .and_then(|l| l.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(stderr.matches("committed snapshot").count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "staged snapshot {staged} (write-audit-publish: main is unchanged until published)"
        )),
        "{stderr}"
    );
    let out = run_csv(
        dir.path(),
        &catalog,
        "CALL system.publish_changes('ns.t', 'w1'); SELECT id FROM ns.t",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.ends_with("id\n2\n"), "{stdout}");
}

/// Issue 12's check as written: in the CLI, on a SQLite catalog, `DELETE`, `UPDATE` and
/// `MERGE INTO … USING (SELECT …)` on a v2 and a v3 table in merge-on-read mode and a v3
/// table in copy-on-write mode; the v3 tables' row lineage is as the spec says (ids 1–4
/// took row ids 0–3 at sequence number 1; the update and the merge are sequence numbers
/// 3 and 4; the merge's insert gets a row id from a later range); PyIceberg reads the
/// same rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_row_level_changes_on_v2_and_v3_and_pyiceberg_reads_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = sqlite_catalog(dir.path());
    let db = dir.path().join("cat.db");
    let mor = "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', \
               'write.merge.mode'='merge-on-read'";
    let tables = [
        ("v2_mor", format!("'format-version'='2', {mor}")),
        ("v3_mor", format!("'format-version'='3', {mor}")),
        ("v3_cow", "'format-version'='3'".to_string()),
    ];
    let mut sql = "CREATE SCHEMA ns;".to_string();
    for (name, properties) in &tables {
        sql.push_str(&format!(
            " CREATE TABLE ns.{name} (id BIGINT, s VARCHAR) TBLPROPERTIES ({properties}); \
             INSERT INTO ns.{name} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'); \
             DELETE FROM ns.{name} WHERE id = 1; \
             UPDATE ns.{name} SET s = 'u' WHERE id = 2; \
             MERGE INTO ns.{name} t USING (SELECT 3 AS id, 'm' AS s UNION ALL SELECT 5, 'n') s \
             ON t.id = s.id WHEN MATCHED THEN UPDATE SET s = s.s \
             WHEN NOT MATCHED THEN INSERT (id, s) VALUES (s.id, s.s); \
             SELECT id, s FROM ns.{name} ORDER BY id;"
        ));
        if name.starts_with("v3") {
            sql.push_str(&format!(
                " SELECT id, _row_id, _last_updated_sequence_number AS seq FROM ns.{name} \
                 WHERE id <> 5 ORDER BY id; \
                 SELECT _row_id >= 5 AS fresh, _last_updated_sequence_number AS seq \
                 FROM ns.{name} WHERE id = 5;"
            ));
        }
    }
    let out = run_csv(dir.path(), &catalog, &sql);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // per table: the statements' counts (4 inserted, 1 deleted, 1 updated, 2 merged),
    // its rows, on v3 its lineage
    let counts = "count\n4\ncount\n1\ncount\n1\ncount\n2\n";
    let rows = "id,s\n2,u\n3,m\n4,d\n5,n\n";
    let lineage = "id,_row_id,seq\n2,1,3\n3,2,4\n4,3,1\nfresh,seq\ntrue,4\n";
    let want = format!("{counts}{rows}{counts}{rows}{lineage}{counts}{rows}{lineage}");
    assert_eq!(stdout, want);
    if crate::interop::python().is_none() {
        return;
    }
    for (name, _) in &tables {
        let read = crate::interop::pyiceberg_read(&db, dir.path(), &format!("ns.{name}"));
        let mut got = read["rows"].as_array().expect("rows").clone();
        got.sort_by_key(|r| r[0].as_i64());
        assert_eq!(
            serde_json::Value::Array(got),
            serde_json::json!([[2, "u"], [3, "m"], [4, "d"], [5, "n"]]),
            "{name}: {read}"
        );
    }
}

/// A `DROP TABLE [PURGE]` killed at any moment, on the filesystem and the SQLite catalog,
/// leaves the table gone (or whole), never listed with some of its files deleted nor
/// back at an older version: killed after the drop (`after-drop`) and after the first file
/// of a purge is deleted (`purge-deleting`), the table is not listed or loadable, no
/// directory of it lists as a namespace, and a new table of that name reads only its own
/// rows. (The filesystem catalog once deleted the purged files first and then `metadata/`
/// file by file, so a kill left the table listed, reading a missing file or an older
/// version.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drop_killed_at_any_moment_leaves_the_table_gone() {
    for (statement, point) in [
        ("DROP TABLE ns.t PURGE", "purge-deleting"),
        ("DROP TABLE ns.t PURGE", "after-drop"),
        ("DROP TABLE ns.t", "after-drop"),
    ] {
        for sql_catalog in [false, true] {
            let what = format!("{statement} killed at {point} (SQL catalog: {sql_catalog})");
            let dir = tempfile::tempdir().expect("tempdir");
            let (warehouse, catalog_arg, location) = catalog_in(dir.path(), sql_catalog);
            let out = run_csv(
                dir.path(),
                &catalog_arg,
                &format!(
                    "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location}; \
                     INSERT INTO ns.t VALUES (1), (2); INSERT INTO ns.t VALUES (3); \
                     INSERT INTO ns.t VALUES (4)"
                ),
            );
            assert!(out.status.success(), "{what}: {out:?}");
            let out = icefloe(dir.path())
                .env("ICEFLOE_FAILPOINT", point)
                .args(["--catalog", &catalog_arg, "-c", statement])
                .output()
                .expect("run");
            // a filesystem table's files all go with its directory: a purge then deletes
            // none by location, and the process ends normally
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() || stderr.contains(point),
                "{what}: {stderr}"
            );
            if sql_catalog || point == "after-drop" {
                assert!(!out.status.success(), "{what}: not killed");
            }
            let catalog: Arc<dyn Catalog> = match sql_catalog {
                true => {
                    Arc::new(SqlCatalog::open("default", dir.path().join("cat.db")).expect("db"))
                }
                false => Arc::new(
                    icefloe::catalog::FileSystemCatalog::new(
                        "wh",
                        &warehouse.display().to_string(),
                    )
                    .expect("catalog"),
                ),
            };
            let ns = Namespace::parse("ns");
            assert_eq!(
                catalog.list_tables(&ns).await.expect("tables"),
                vec![],
                "{what}"
            );
            assert_eq!(
                catalog.list_namespaces().await.expect("namespaces"),
                vec![ns.clone()],
                "{what}"
            );
            let err = catalog
                .load_table(&TableIdent::parse("ns.t"))
                .await
                .expect_err("dropped");
            assert_eq!(err.kind(), icefloe::ErrorKind::NotFound, "{what}: {err}");
            let out = run_csv(
                dir.path(),
                &catalog_arg,
                &format!(
                    "CREATE TABLE ns.t (id BIGINT){location}; INSERT INTO ns.t VALUES (7); \
                     SELECT id FROM ns.t ORDER BY id"
                ),
            );
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{what}: {out:?}");
            assert!(stdout.ends_with("id\n7\n"), "{what}: {stdout}");
        }
    }
}

/// Errors of a write that loses to another process name what happened (found by a
/// tester): an `INSERT OVERWRITE` that conflicts with rows inserted meanwhile names the
/// statement and the table, as a `DELETE`'s conflict does (it said only "commit validation
/// failed: found a conflicting data file …"); an `INSERT` into a table renamed meanwhile
/// says it may have been renamed (it said "dropped"). Each writer is paused by
/// `ICEFLOE_PAUSEPOINT` while the other commits; the table keeps the other's rows.
#[test]
fn writes_losing_to_another_process_name_what_happened() {
    for (paused, point, other, message, rows) in [
        (
            "INSERT OVERWRITE ns.t VALUES (5)",
            "before-data-files",
            "INSERT INTO ns.t VALUES (2)",
            "INSERT OVERWRITE on 'ns.t': found a conflicting data file",
            "id\n1\n2\n",
        ),
        (
            "INSERT INTO ns.t VALUES (5)",
            "commit-loaded",
            "ALTER TABLE ns.t RENAME TO ns.u",
            "the table was dropped (or renamed) while the commit ran",
            "",
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_warehouse, catalog_arg, location) = catalog_in(dir.path(), true);
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!("CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location}; INSERT INTO ns.t VALUES (1)"),
        );
        assert!(out.status.success(), "{paused}: {out:?}");
        let writer = Paused::start(dir.path(), &catalog_arg, paused, point, 1500, paused);
        let out = run_csv(dir.path(), &catalog_arg, other);
        assert!(out.status.success(), "{paused}: {out:?}");
        let (status, rest) = writer.finish();
        assert!(!status.success(), "{paused}: {rest}");
        assert!(rest.contains(message), "{paused}: {rest}");
        if !rows.is_empty() {
            let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
            assert_eq!(String::from_utf8_lossy(&out.stdout), rows, "{paused}");
        }
    }
}

/// A compaction (`rewrite_data_files`, `rewrite_position_delete_files`) paused after
/// choosing its files, while another process replaces them (a copy-on-write `DELETE`,
/// the same compaction) and expires every older snapshot, fails as a lost race naming the expired snapshot (it said only "data file
/// … does not exist"), commits nothing and leaves no file of its own; run again it
/// compacts the table as it now is.
#[test]
fn compactions_whose_snapshot_expired_meanwhile_fail_as_lost_races() {
    let cases = [
        (
            "'format-version'='2'",
            "CALL system.rewrite_data_files(table => 'ns.t', options => map('rewrite-all', 'true'))",
        ),
        (
            "'format-version'='2', 'write.delete.mode'='merge-on-read'",
            "CALL system.rewrite_position_delete_files(table => 'ns.t', options => map('rewrite-all', 'true'))",
        ),
    ];
    for (properties, call) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let (warehouse, catalog_arg, location) = catalog_in(dir.path(), true);
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location} TBLPROPERTIES ({properties}); \
                 INSERT INTO ns.t VALUES (1), (2), (3); INSERT INTO ns.t VALUES (4), (5); \
                 DELETE FROM ns.t WHERE id = 2"
            ),
        );
        assert!(out.status.success(), "{call}: {out:?}");
        let before = files_under(&warehouse);
        let rewrite = Paused::start(
            dir.path(),
            &catalog_arg,
            call,
            "rewrite-planned",
            2500,
            call,
        );
        // the other process replaces the files the paused one chose (a copy-on-write
        // DELETE rewrites the data file; the same compaction replaces position delete
        // files), then expires the snapshots that held the old ones
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "DELETE FROM ns.t WHERE id = 3; {call}; CALL system.expire_snapshots(table => \
                 'ns.t', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)"
            ),
        );
        assert!(out.status.success(), "{call}: {out:?}");
        let after_other = files_under(&warehouse);
        let (status, rest) = rewrite.finish();
        assert!(!status.success(), "{call}: {rest}");
        assert!(
            rest.contains("which the rewrite read, was expired by a concurrent commit")
                && (rest.contains(".parquet") || rest.contains(".puffin")),
            "{call}: {rest}"
        );
        assert!(!before.is_empty());
        assert_eq!(
            files_under(&warehouse),
            after_other,
            "{call}: files left behind"
        );
        let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "id\n1\n4\n5\n",
            "{call}"
        );
        let out = run_csv(dir.path(), &catalog_arg, call);
        assert!(out.status.success(), "{call}: {out:?}");
        let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "id\n1\n4\n5\n",
            "{call}"
        );
    }
}

/// `INSERT … SELECT` (from the target itself or from another table) and `CREATE TABLE …
/// AS SELECT`, paused before reading their source (`before-data-files`) while another
/// process replaces the source's data file (a copy-on-write `DELETE`) and expires every
/// older snapshot, fail as a lost race naming the source table and the expired snapshot
/// and keeping the file error (they said only "data file … does not exist", tester O64
/// F2); nothing is committed (no table created) and no file of theirs is left; run again
/// they commit.
#[test]
fn writes_whose_source_snapshot_expired_meanwhile_fail_as_lost_races() {
    let cases = [
        (
            "INSERT INTO ns.t SELECT id + 100 FROM ns.t",
            "INSERT INTO",
            "ns.t",
        ),
        (
            "INSERT INTO ns.u SELECT id FROM ns.t",
            "INSERT INTO",
            "ns.u",
        ),
        (
            "CREATE TABLE ns.c AS SELECT id FROM ns.t",
            "CREATE TABLE … AS",
            "ns.c",
        ),
    ];
    for (statement, what, target) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_, catalog_arg, location) = catalog_in(dir.path(), true);
        // every file of the catalog's tables, wherever the catalog puts them
        let files = || {
            let mut files = files_under(dir.path());
            files.retain(|f| !f.to_string_lossy().contains("cat.db"));
            files
        };
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location}; \
                 CREATE TABLE ns.u (id BIGINT); INSERT INTO ns.t VALUES (1), (2), (3)"
            ),
        );
        assert!(out.status.success(), "{statement}: {out:?}");
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            "SELECT snapshot_id FROM ns.t$snapshots",
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let old = stdout.lines().nth(1).expect("one snapshot").to_string();
        let write = Paused::start(
            dir.path(),
            &catalog_arg,
            statement,
            "before-data-files",
            2500,
            statement,
        );
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            "DELETE FROM ns.t WHERE id = 1; CALL system.expire_snapshots(table => 'ns.t', \
             older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)",
        );
        assert!(out.status.success(), "{statement}: {out:?}");
        let after_other = files();
        let (status, rest) = write.finish();
        assert!(!status.success(), "{statement}: {rest}");
        assert!(
            rest.starts_with("error: commit validation failed: ")
                && rest.contains(&format!(
                    "snapshot {old} of 'ns.t', which the {what} read, was expired by a \
                     concurrent commit while it ran"
                ))
                && rest.contains("nothing was committed")
                && rest.contains("does not exist")
                && rest.contains(".parquet"),
            "{statement}: {rest}"
        );
        assert_eq!(files(), after_other, "{statement}: files left behind");
        let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "id\n2\n3\n",
            "{statement}"
        );
        if target == "ns.c" {
            let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.c");
            assert!(!out.status.success(), "{statement}: created: {out:?}");
        }
        // run again, it commits
        let out = run_csv(dir.path(), &catalog_arg, statement);
        assert!(out.status.success(), "{statement}: {out:?}");
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!("SELECT count(*) AS n FROM {target}"),
        );
        let expected = if target == "ns.t" { "n\n4\n" } else { "n\n2\n" };
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            expected,
            "{statement}"
        );
    }
}

/// A row-level statement paused after loading its table, before planning its files
/// (`row-level-loaded`), while another process commits and expires every older
/// snapshot (which deletes the manifest list the paused one would read), fails as a
/// lost race naming the statement and the expired snapshot and keeping the read error
/// (it failed as the bare "does not exist" of the manifest list: the planning reads
/// were not checked, stop 64's leftover); nothing is committed, no file of its own is
/// left, and run again it commits.
#[test]
fn row_level_statements_whose_snapshot_expired_before_planning_fail_as_lost_races() {
    let cases = [
        ("DELETE FROM ns.t WHERE id = 2", "DELETE", "id\n3\n"),
        (
            "UPDATE ns.t SET id = 20 WHERE id = 2",
            "UPDATE",
            "id\n3\n20\n",
        ),
        (
            "MERGE INTO ns.t USING (SELECT 2 AS k) s ON ns.t.id = s.k \
             WHEN MATCHED THEN DELETE",
            "MERGE",
            "id\n3\n",
        ),
    ];
    for (statement, what, rows_after_retry) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let (warehouse, catalog_arg, location) = catalog_in(dir.path(), true);
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location}; \
                 INSERT INTO ns.t VALUES (1), (2), (3)"
            ),
        );
        assert!(out.status.success(), "{statement}: {out:?}");
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            "SELECT snapshot_id FROM ns.t$snapshots",
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let old = stdout.lines().nth(1).expect("one snapshot").to_string();
        let paused = Paused::start(
            dir.path(),
            &catalog_arg,
            statement,
            "row-level-loaded",
            2500,
            statement,
        );
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            "DELETE FROM ns.t WHERE id = 1; CALL system.expire_snapshots(table => 'ns.t', \
             older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)",
        );
        assert!(out.status.success(), "{statement}: {out:?}");
        let after_other = files_under(&warehouse);
        let (status, rest) = paused.finish();
        assert!(!status.success(), "{statement}: {rest}");
        assert!(
            rest.contains("commit validation failed: ")
                && rest.contains(&format!(
                    "snapshot {old} of 'ns.t', which the {what} read, was expired by a \
                     concurrent commit while it ran"
                ))
                && rest.contains("nothing was committed")
                && rest.contains("does not exist")
                && rest.contains(".avro"),
            "{statement}: {rest}"
        );
        assert_eq!(
            files_under(&warehouse),
            after_other,
            "{statement}: files left behind"
        );
        let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "id\n2\n3\n",
            "{statement}"
        );
        let out = run_csv(dir.path(), &catalog_arg, statement);
        assert!(out.status.success(), "{statement}: {out:?}");
        let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            rows_after_retry,
            "{statement}"
        );
    }
}

/// `CREATE TABLE IF NOT EXISTS` and `CREATE SCHEMA IF NOT EXISTS` succeed, changing
/// nothing, when another process creates the name between their check and their create
/// (paused there by `ICEFLOE_PAUSEPOINT` `create-checked`), as Spark's `CreateTableExec`
/// catches `TableAlreadyExistsException` under `IF NOT EXISTS`: 1 to 3 of 10 processes
/// creating one name at once failed with "already exists" (found by a tester). Without
/// `IF NOT EXISTS` the loser still fails naming the table.
#[test]
fn create_if_not_exists_racing_another_creator_succeeds() {
    for sql_catalog in [false, true] {
        for (paused, other, if_not_exists) in [
            (
                "CREATE TABLE IF NOT EXISTS ns.t (id BIGINT)",
                "CREATE TABLE ns.t (id BIGINT, s STRING)",
                true,
            ),
            ("CREATE SCHEMA IF NOT EXISTS ns2", "CREATE SCHEMA ns2", true),
            (
                "CREATE TABLE ns.t (id BIGINT)",
                "CREATE TABLE ns.t (id BIGINT, s STRING)",
                false,
            ),
        ] {
            let what = format!("{paused}, SQL catalog: {sql_catalog}");
            let dir = tempfile::tempdir().expect("tempdir");
            let (_warehouse, catalog_arg, location) = catalog_in(dir.path(), sql_catalog);
            let table_location = |sql: &str| match sql.starts_with("CREATE TABLE") {
                true => format!("{sql}{location}"),
                false => sql.to_string(),
            };
            let out = run_csv(dir.path(), &catalog_arg, "CREATE SCHEMA ns");
            assert!(out.status.success(), "{what}: {out:?}");
            let creator = Paused::start(
                dir.path(),
                &catalog_arg,
                &table_location(paused),
                "create-checked",
                1500,
                &what,
            );
            let out = run_csv(dir.path(), &catalog_arg, &table_location(other));
            assert!(out.status.success(), "{what}: {out:?}");
            let said = creator.said.clone();
            let (status, rest) = creator.finish();
            match if_not_exists {
                true => assert!(status.success(), "{what}: {said}{rest}"),
                false => {
                    assert!(!status.success(), "{what}");
                    assert!(rest.contains("already exists"), "{what}: {rest}");
                }
            }
            // the other process's table is the one kept
            if paused.starts_with("CREATE TABLE") {
                let out = run_csv(dir.path(), &catalog_arg, "SELECT * FROM ns.t");
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout),
                    "id,s\n",
                    "{what}: {out:?}"
                );
            }
        }
    }
}

/// A `DROP TABLE` lands while another process's `INSERT` runs (paused by
/// `ICEFLOE_PAUSEPOINT` before it writes its data files, or in its commit after its
/// catalog loaded the table): the `INSERT` fails saying the table was dropped while the
/// commit ran, and the table stays dropped with nothing of it listed, on the filesystem
/// and the SQLite catalog; a table created again under the name meanwhile keeps its own
/// schema and rows. (The filesystem catalog's commit once created `metadata/` anew
/// holding only its new metadata file, whose manifests had gone with the drop: the table
/// was back, listed and unreadable; a writer paused before its data files failed naming a
/// missing manifest list and left `t/`, `t/data/` and `t/metadata/` listed as namespaces;
/// a commit paused across a drop and a create of the name put its `v<N+1>.metadata.json`
/// in the new table's directory: the new table became the old one, unreadable;
/// the SQLite catalog's error said only 'table not found'.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_dropped_while_a_writer_commits_stays_dropped() {
    for (sql_catalog, point, created_again) in [
        (false, "commit-loaded", false),
        (true, "commit-loaded", false),
        (false, "before-data-files", false),
        (true, "before-data-files", false),
        (false, "commit-loaded", true),
        (true, "commit-loaded", true),
    ] {
        let what = format!(
            "paused at {point}, SQL catalog: {sql_catalog}, created again: {created_again}"
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let (warehouse, catalog_arg, location) = catalog_in(dir.path(), sql_catalog);
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location}; \
                 INSERT INTO ns.t VALUES (1)"
            ),
        );
        assert!(out.status.success(), "{what}: {out:?}");
        let writer = Paused::start(
            dir.path(),
            &catalog_arg,
            "INSERT INTO ns.t VALUES (2)",
            point,
            1500,
            &what,
        );
        // created again: a table of another schema, one version behind the writer's base
        // (a filesystem table's next version file is free for the writer)
        let again = format!(
            "; CREATE TABLE ns.t (id BIGINT, s STRING){location}; INSERT INTO ns.t VALUES \
             (7, 'new'), (8, 'new')"
        );
        let drop = match created_again {
            true => format!("DROP TABLE ns.t{again}"),
            false => "DROP TABLE ns.t".to_string(),
        };
        let out = run_csv(dir.path(), &catalog_arg, &drop);
        assert!(out.status.success(), "{what}: {out:?}");
        let said = writer.said.clone();
        let (status, rest) = writer.finish();
        assert!(
            !status.success(),
            "{what}: the INSERT succeeded: {said}{rest}"
        );
        assert!(
            rest.contains("dropped (or renamed) while the commit ran")
                || (created_again && rest.contains("replaced while the commit ran")),
            "{what}: {rest}"
        );
        if created_again {
            let out = run_csv(dir.path(), &catalog_arg, "SELECT * FROM ns.t ORDER BY id");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{what}: {out:?}");
            assert_eq!(stdout, "id,s\n7,new\n8,new\n", "{what}");
            continue;
        }
        let catalog: Arc<dyn Catalog> = match sql_catalog {
            true => Arc::new(SqlCatalog::open("default", dir.path().join("cat.db")).expect("db")),
            false => Arc::new(
                icefloe::catalog::FileSystemCatalog::new("wh", &warehouse.display().to_string())
                    .expect("catalog"),
            ),
        };
        let ns = Namespace::parse("ns");
        assert_eq!(
            catalog.list_tables(&ns).await.expect("tables"),
            vec![],
            "{what}"
        );
        assert_eq!(
            catalog.list_namespaces().await.expect("namespaces"),
            vec![ns.clone()],
            "{what}"
        );
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE TABLE ns.t (id BIGINT){location}; INSERT INTO ns.t VALUES (7); \
                 SELECT id FROM ns.t ORDER BY id"
            ),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{what}: {out:?}");
        assert!(stdout.ends_with("id\n7\n"), "{what}: {stdout}");
    }
}

/// A `CREATE TABLE … AS` paused in its commit (`ICEFLOE_PAUSEPOINT=commit-loaded`: its
/// data files, manifest and manifest list written, its first metadata file not) is in no
/// catalog: another process's `CREATE TABLE` of the name then succeeds, and the CTAS
/// fails with `AlreadyExists` naming the table, removing every file it wrote: the other
/// table keeps its schema and rows, and the table's directory holds only the other
/// table's files — on the SQLite and the filesystem catalog. (CTAS was create, then
/// insert: the other `CREATE TABLE` failed, the name taken by a table still empty.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_created_while_a_ctas_commits_wins_and_the_ctas_leaves_nothing() {
    for sql_catalog in [true, false] {
        let what = format!("SQL catalog: {sql_catalog}");
        let dir = tempfile::tempdir().expect("tempdir");
        let (warehouse, catalog_arg, location) = catalog_in(dir.path(), sql_catalog);
        let out = run_csv(dir.path(), &catalog_arg, "CREATE SCHEMA ns");
        assert!(out.status.success(), "{what}: {out:?}");
        let ctas = Paused::start(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE TABLE ns.t PARTITIONED BY (k){location} AS SELECT value AS id, \
                 CAST(value % 2 AS INT) AS k FROM generate_series(1, 100)"
            ),
            "commit-loaded",
            3000,
            &what,
        );
        let table_dir = warehouse.join("ns").join("t");
        let written = files_under(&table_dir);
        assert!(
            written
                .iter()
                .any(|f| f.to_string_lossy().ends_with(".parquet")),
            "{what}: {written:?}"
        );
        let catalog: Arc<dyn Catalog> = match sql_catalog {
            true => Arc::new(SqlCatalog::open("default", dir.path().join("cat.db")).expect("db")),
            false => Arc::new(
                icefloe::catalog::FileSystemCatalog::new("wh", &warehouse.display().to_string())
                    .expect("catalog"),
            ),
        };
        let ns = Namespace::parse("ns");
        assert_eq!(
            catalog.list_tables(&ns).await.expect("tables"),
            vec![],
            "{what}"
        );
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE TABLE ns.t (id BIGINT, s STRING){location}; \
                 INSERT INTO ns.t VALUES (7, 'other')"
            ),
        );
        assert!(out.status.success(), "{what}: {out:?}");
        let (status, rest) = ctas.finish();
        assert!(!status.success(), "{what}: the CTAS succeeded: {rest}");
        assert!(
            rest.contains("table 'ns.t' already exists"),
            "{what}: {rest}"
        );
        let out = run_csv(dir.path(), &catalog_arg, "SELECT * FROM ns.t ORDER BY id");
        assert!(out.status.success(), "{what}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "id,s\n7,other\n",
            "{what}"
        );
        // the other table's files only: one data file, one manifest and its list, its
        // metadata files (and a filesystem catalog's version hint); no CTAS partition
        let left = files_under(&table_dir);
        let count = |ext: &str| {
            left.iter()
                .filter(|f| f.to_string_lossy().ends_with(ext))
                .count()
        };
        assert_eq!(count(".parquet"), 1, "{what}: {left:?}");
        assert_eq!(count(".avro"), 2, "{what}: {left:?}");
        assert_eq!(count(".metadata.json"), 2, "{what}: {left:?}");
        assert!(
            left.iter().all(|f| !f.to_string_lossy().contains("k=")),
            "{what}: {left:?}"
        );
        assert!(
            std::fs::read_dir(table_dir.join("data"))
                .expect("data")
                .flatten()
                .all(|e| !e.path().is_dir()),
            "{what}: a CTAS partition directory is left"
        );
    }
}

/// A `CREATE TABLE … AS` killed at each step of its commit (`ICEFLOE_FAILPOINT`: data
/// files written, a manifest, the manifest list, and on the SQLite catalog its first
/// metadata file, before the row registering the name) leaves no table: the name is not
/// listed, and the same CTAS then succeeds, on the SQLite and the filesystem catalog. (On
/// the filesystem catalog writing `v1.metadata.json` is the create itself: killed after
/// it, the table is there, whole, with its rows.)
/// (CTAS was create, then insert: a killed CTAS left the empty table.)
#[test]
fn a_ctas_killed_at_any_step_leaves_no_table() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    for sql_catalog in [true, false] {
        for point in [
            "after-data-files",
            "after-manifest",
            "after-manifest-list",
            "after-metadata-file",
        ] {
            let what = format!("killed at {point}, SQL catalog: {sql_catalog}");
            let dir = tempfile::tempdir().expect("tempdir");
            let (warehouse, catalog_arg, location) = catalog_in(dir.path(), sql_catalog);
            let out = run_csv(dir.path(), &catalog_arg, "CREATE SCHEMA ns");
            assert!(out.status.success(), "{what}: {out:?}");
            let ctas = format!(
                "CREATE TABLE ns.t PARTITIONED BY (k){location} AS SELECT value AS id, \
                 CAST(value % 2 AS INT) AS k FROM generate_series(1, 10)"
            );
            let out = icefloe(dir.path())
                .env("ICEFLOE_FAILPOINT", point)
                .args(["--catalog", &catalog_arg, "-c", &ctas])
                .output()
                .expect("run");
            assert!(!out.status.success(), "{what}: not killed: {out:?}");
            assert!(
                String::from_utf8_lossy(&out.stderr).contains(&format!("failpoint '{point}'")),
                "{what}: {out:?}"
            );
            let catalog: Arc<dyn Catalog> = match sql_catalog {
                true => {
                    Arc::new(SqlCatalog::open("default", dir.path().join("cat.db")).expect("db"))
                }
                false => Arc::new(
                    icefloe::catalog::FileSystemCatalog::new(
                        "wh",
                        &warehouse.display().to_string(),
                    )
                    .expect("catalog"),
                ),
            };
            let ns = Namespace::parse("ns");
            let tables = rt.block_on(catalog.list_tables(&ns)).expect("tables");
            if !sql_catalog && point == "after-metadata-file" {
                // a Hadoop table's first version file is its create: committed, whole
                assert_eq!(tables, vec![TableIdent::parse("ns.t")], "{what}");
                let out = run_csv(dir.path(), &catalog_arg, "SELECT count(*) AS n FROM ns.t");
                assert!(
                    String::from_utf8_lossy(&out.stdout).ends_with("n\n10\n"),
                    "{what}: {out:?}"
                );
                continue;
            }
            assert_eq!(tables, vec![], "{what}");
            let out = run_csv(
                dir.path(),
                &catalog_arg,
                &format!("{ctas}; SELECT count(*) AS n FROM ns.t"),
            );
            assert!(out.status.success(), "{what}: {out:?}");
            assert!(
                String::from_utf8_lossy(&out.stdout).ends_with("n\n10\n"),
                "{what}: {out:?}"
            );
        }
    }
}

/// Every file under `dir`, sorted.
fn files_under(dir: &Path) -> std::collections::BTreeSet<std::path::PathBuf> {
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("list") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p);
            }
        }
    }
    out
}

/// Writers of every kind (`INSERT`, a merge-on-read `DELETE`, a copy-on-write `UPDATE`, a
/// `MERGE`, a compaction) killed at each step of their commit before the swap leave the
/// table reading its rows as before, and leave debris that `remove_orphan_files` (once
/// the files are older than its default 3 days) removes exactly: every file the killed
/// writers made, nothing the table references (PyIceberg reads the same rows after).
/// While the files are young, the default `older_than` spares them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_writers_leave_only_debris_that_remove_orphan_files_removes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let warehouse = dir.path().join("wh");
    std::fs::create_dir(&warehouse).expect("warehouse");
    let catalog = sqlite_catalog(dir.path());
    let out = run_csv(
        dir.path(),
        &catalog,
        &format!(
            "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT, k INT) PARTITIONED BY (k) \
             LOCATION '{}/ns/t' TBLPROPERTIES ('write.delete.mode'='merge-on-read', \
             'write.update.mode'='copy-on-write', 'write.merge.mode'='merge-on-read'); \
             INSERT INTO ns.t VALUES (1, 0), (2, 1), (3, 0), (4, 1); \
             INSERT INTO ns.t VALUES (5, 0), (6, 1); DELETE FROM ns.t WHERE id = 6",
            warehouse.display()
        ),
    );
    assert!(out.status.success(), "{out:?}");
    let read = |what: &str| {
        let out = run_csv(dir.path(), &catalog, "SELECT id, k FROM ns.t ORDER BY id");
        assert!(out.status.success(), "{what}: {out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let rows = read("before");
    assert_eq!(rows, "id,k\n1,0\n2,1\n3,0\n4,1\n5,0\n");
    let statements = [
        "INSERT INTO ns.t VALUES (100, 0), (101, 1)",
        "DELETE FROM ns.t WHERE id = 1",
        "UPDATE ns.t SET id = id + 1000 WHERE id = 2",
        "MERGE INTO ns.t USING (SELECT 3 AS id) s ON ns.t.id = s.id \
         WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, k) VALUES (s.id, 0)",
        "CALL system.rewrite_data_files(table => 'ns.t', options => map('rewrite-all', 'true'))",
    ];
    let points = [
        "after-data-files",
        "after-manifest",
        "after-manifest-list",
        "after-metadata-file",
    ];
    let mut debris = std::collections::BTreeSet::new();
    for statement in statements {
        for point in points {
            let before = files_under(&warehouse);
            let out = icefloe(dir.path())
                .env("ICEFLOE_FAILPOINT", point)
                .args(["--catalog", &catalog, "-c", statement])
                .output()
                .expect("run");
            let stderr = String::from_utf8_lossy(&out.stderr);
            // a compaction writes its data files by another path than a DML's
            if statement.starts_with("CALL") && point == "after-data-files" {
                continue;
            }
            assert!(
                !out.status.success() && stderr.contains(point),
                "{statement} at {point}: not killed: {stderr}"
            );
            let after = files_under(&warehouse);
            assert!(before.is_subset(&after), "{statement} at {point}");
            debris.extend(after.difference(&before).cloned());
            assert_eq!(read(point), rows, "{statement} killed at {point}");
        }
    }
    assert!(!debris.is_empty());
    let orphans = |what: &str| -> std::collections::BTreeSet<std::path::PathBuf> {
        let out = run_csv(
            dir.path(),
            &catalog,
            "CALL system.remove_orphan_files(table => 'ns.t')",
        );
        assert!(out.status.success(), "{what}: {out:?}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .skip(1)
            .map(|l| std::path::PathBuf::from(l.strip_prefix("file://").unwrap_or(l)))
            .collect()
    };
    // young files may be a commit in flight: the default older_than keeps them
    assert_eq!(orphans("young"), Default::default());
    for f in files_under(&warehouse) {
        crate::fixtures::set_mtime(&f, crate::fixtures::days_ago(4));
    }
    assert_eq!(orphans("old"), debris);
    assert_eq!(orphans("again"), Default::default());
    assert_eq!(read("after removing orphans"), rows);
    if crate::interop::python().is_none() {
        return;
    }
    let read = crate::interop::pyiceberg_read(&dir.path().join("cat.db"), &warehouse, "ns.t");
    let mut ids: Vec<i64> = read["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r[0].as_i64().expect("id"))
        .collect();
    ids.sort();
    assert_eq!(ids, vec![1, 2, 3, 4, 5], "{read}");
}

/// On the filesystem catalog, a commit whose base metadata file another process's
/// commits deleted meanwhile (`write.metadata.delete-after-commit.enabled`, one previous
/// version kept) lost a race and retries; it does not take the table for dropped: every
/// row lands.
#[test]
fn a_commit_whose_base_metadata_was_deleted_meanwhile_retries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let warehouse = dir.path().join("wh");
    std::fs::create_dir(&warehouse).expect("warehouse");
    let catalog = warehouse.display().to_string();
    let out = run_csv(
        dir.path(),
        &catalog,
        "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT) TBLPROPERTIES \
         ('write.metadata.delete-after-commit.enabled'='true', \
         'write.metadata.previous-versions-max'='1', 'commit.retry.min-wait-ms'='5'); \
         INSERT INTO ns.t VALUES (1)",
    );
    assert!(out.status.success(), "{out:?}");
    let writer = Paused::start(
        dir.path(),
        &catalog,
        "INSERT INTO ns.t VALUES (2)",
        "commit-loaded",
        1500,
        "the writer",
    );
    let out = run_csv(
        dir.path(),
        &catalog,
        "INSERT INTO ns.t VALUES (3); INSERT INTO ns.t VALUES (4)",
    );
    assert!(out.status.success(), "{out:?}");
    let base = warehouse.join("ns/t/metadata/v2.metadata.json");
    assert!(!base.exists(), "the writer's base was not deleted");
    let said = writer.said.clone();
    let (status, rest) = writer.finish();
    assert!(status.success(), "{said}{rest}");
    let out = run_csv(dir.path(), &catalog, "SELECT id FROM ns.t ORDER BY id");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "id\n1\n2\n3\n4\n");
}

/// The files of table `ns.t`'s metadata directory under `warehouse` that its metadata
/// does not reach: manifest lists of no snapshot, manifests of no manifest list (read
/// through `$all_manifests`, which lists every snapshot's manifests).
fn unreached_metadata_files(dir: &Path, catalog: &str, warehouse: &Path) -> Vec<String> {
    let out = run_csv(
        dir,
        catalog,
        "SELECT manifest_list AS path FROM ns.t$snapshots UNION ALL \
         SELECT DISTINCT path FROM ns.t$all_manifests",
    );
    assert!(out.status.success(), "{out:?}");
    let reached: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .map(|l| l.rsplit('/').next().unwrap_or(l).to_string())
        .collect();
    files_under(&warehouse.join("ns/t/metadata"))
        .into_iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| n.ends_with(".avro") && !reached.contains(n))
        .collect()
}

/// Tester O64 F1: two `rewrite_manifests` racing. The one paused before its commit finds,
/// on its retry, the manifests already reclustered by the other: it commits nothing,
/// reports zero counts (it reported the first attempt's, 3 and 1), and removes the
/// manifest list and manifests its first attempt wrote (they were left behind).
#[test]
fn a_rewrite_manifests_whose_work_a_concurrent_one_did_reports_and_leaves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (warehouse, catalog_arg, location) = catalog_in(dir.path(), true);
    let out = run_csv(
        dir.path(),
        &catalog_arg,
        &format!(
            "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location}; \
             INSERT INTO ns.t VALUES (1); INSERT INTO ns.t VALUES (2); INSERT INTO ns.t VALUES (3)"
        ),
    );
    assert!(out.status.success(), "{out:?}");
    let before = files_under(&warehouse);
    let call = "CALL system.rewrite_manifests('ns.t')";
    let counts = "rewritten_manifests_count,added_manifests_count\n";
    let paused = Paused::start(
        dir.path(),
        &catalog_arg,
        call,
        "commit-loaded",
        1500,
        "the paused rewrite",
    );
    // what the paused rewrite's first attempt wrote
    let its_own: std::collections::BTreeSet<_> = files_under(&warehouse)
        .difference(&before)
        .cloned()
        .collect();
    assert!(!its_own.is_empty());
    let out = run_csv(dir.path(), &catalog_arg, call);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{counts}3,1\n")
    );
    let after_winner = files_under(&warehouse);
    let said = paused.said.clone();
    let (status, rest, stdout) = paused.finish_with_output();
    assert!(status.success(), "{said}{rest}");
    assert_eq!(stdout, format!("{counts}0,0\n"), "the paused rewrite");
    let expected: std::collections::BTreeSet<_> =
        after_winner.difference(&its_own).cloned().collect();
    assert_eq!(files_under(&warehouse), expected, "files left behind");
    assert_eq!(
        unreached_metadata_files(dir.path(), &catalog_arg, &warehouse),
        Vec::<String>::new()
    );
    let out = run_csv(
        dir.path(),
        &catalog_arg,
        "SELECT operation FROM ns.t$snapshots ORDER BY committed_at",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "operation\nappend\nappend\nappend\nreplace\n"
    );
    let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "id\n1\n2\n3\n");
}

/// Tester O64 F3: an `expire_snapshots` paused before its commit while another process
/// commits two overwrites retries, and its retry also expires the first overwrite's
/// snapshot: that snapshot's manifest list, manifests and data file are deleted and
/// counted too (they were left behind: the deletions came from the table loaded before
/// the first attempt). Two expiries racing: the one whose retry finds nothing left to
/// expire reports zero (it reported the manifest lists the other deleted).
#[test]
fn a_retried_expiry_deletes_and_counts_exactly_what_it_expired() {
    let expire = "CALL system.expire_snapshots(table => 'ns.t', older_than => \
                  TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)";
    let header = "deleted_data_files_count,deleted_position_delete_files_count,\
                  deleted_equality_delete_files_count,deleted_manifest_files_count,\
                  deleted_manifest_lists_count,deleted_statistics_files_count\n";
    // (what the other process runs, what it prints, the data files and manifest lists
    // the paused expiry deletes, the rows)
    let overwrites = "INSERT OVERWRITE ns.t VALUES (3); INSERT OVERWRITE ns.t VALUES (4)";
    let cases = [
        (overwrites, "", (3, 3), "id\n4\n"),
        (expire, "0,0,0,0,1,0\n", (0, 0), "id\n1\n2\n"),
    ];
    for (other, other_prints, (data, lists), rows) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let (warehouse, catalog_arg, location) = catalog_in(dir.path(), true);
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location}; \
                 INSERT INTO ns.t VALUES (1); INSERT INTO ns.t VALUES (2)"
            ),
        );
        assert!(out.status.success(), "{out:?}");
        let paused = Paused::start(
            dir.path(),
            &catalog_arg,
            expire,
            "commit-loaded",
            1500,
            "the paused expiry",
        );
        let out = run_csv(dir.path(), &catalog_arg, other);
        assert!(out.status.success(), "{other}: {out:?}");
        if !other_prints.is_empty() {
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                format!("{header}{other_prints}"),
                "{other}"
            );
        }
        let after_other = files_under(&warehouse);
        let said = paused.said.clone();
        let (status, rest, stdout) = paused.finish_with_output();
        assert!(status.success(), "{other}: {said}{rest}");
        // what it deleted, by kind, is what it reports
        let now = files_under(&warehouse);
        let gone: Vec<String> = after_other
            .difference(&now)
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        let count = |f: &dyn Fn(&str) -> bool| gone.iter().filter(|n| f(n)).count();
        let gone_data = count(&|n| n.ends_with(".parquet"));
        let gone_lists = count(&|n| n.starts_with("snap-"));
        let gone_manifests = count(&|n| n.ends_with(".avro") && !n.starts_with("snap-"));
        assert_eq!((gone_data, gone_lists), (data, lists), "{other}: {gone:?}");
        assert_eq!(
            gone.len(),
            gone_data + gone_lists + gone_manifests,
            "{other}: {gone:?}"
        );
        assert_eq!(
            stdout,
            format!("{header}{data},0,0,{gone_manifests},{lists},0\n"),
            "{other}"
        );
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            "SELECT count(*) AS n FROM ns.t$snapshots",
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "n\n1\n", "{other}");
        assert_eq!(
            unreached_metadata_files(dir.path(), &catalog_arg, &warehouse),
            Vec::<String>::new(),
            "{other}"
        );
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            "SELECT count(*) AS n FROM ns.t$files",
        );
        let live: usize = String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.parse().ok())
            .expect("count");
        assert_eq!(
            files_under(&warehouse.join("ns/t/data")).len(),
            live,
            "{other}: data files left behind"
        );
        let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
        assert_eq!(String::from_utf8_lossy(&out.stdout), rows, "{other}");
    }
}

/// Tester O64 F5: a write that runs out of commit retries names its statement, as its
/// validation failures do (it said only "commit to table 'ns.t' gave up after 1
/// attempts"), in the singular for one attempt, and leaves no file of its own.
#[test]
fn a_write_out_of_retries_names_its_statement() {
    for statement in [
        "UPDATE ns.t SET id = 10 WHERE id = 1",
        "DELETE FROM ns.t WHERE id = 1",
        "INSERT INTO ns.t VALUES (5)",
        "INSERT OVERWRITE ns.t VALUES (5)",
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (warehouse, catalog_arg, location) = catalog_in(dir.path(), true);
        let out = run_csv(
            dir.path(),
            &catalog_arg,
            &format!(
                "CREATE SCHEMA ns; CREATE TABLE ns.t (id BIGINT){location} TBLPROPERTIES \
                 ('commit.retry.num-retries'='0'); INSERT INTO ns.t VALUES (1)"
            ),
        );
        assert!(out.status.success(), "{out:?}");
        let before = files_under(&warehouse);
        let paused = Paused::start(
            dir.path(),
            &catalog_arg,
            statement,
            "commit-loaded",
            1500,
            statement,
        );
        let at_pause = files_under(&warehouse);
        let out = run_csv(dir.path(), &catalog_arg, "INSERT INTO ns.t VALUES (3)");
        assert!(out.status.success(), "{out:?}");
        // what the other INSERT wrote stays; what the paused write wrote goes
        let other: std::collections::BTreeSet<_> = files_under(&warehouse)
            .difference(&at_pause)
            .cloned()
            .collect();
        let after_other: std::collections::BTreeSet<_> = before.union(&other).cloned().collect();
        let (status, rest) = paused.finish();
        assert!(!status.success(), "{statement}: {rest}");
        let verb = statement
            .split(" ns.t")
            .next()
            .unwrap_or(statement)
            .trim_end_matches(" FROM");
        assert!(
            rest.contains(&format!(
                "{verb} on 'ns.t': commit to table 'ns.t' gave up after 1 attempt: "
            )),
            "{statement}: {rest}"
        );
        assert_eq!(files_under(&warehouse), after_other, "{statement}");
        let out = run_csv(dir.path(), &catalog_arg, "SELECT id FROM ns.t ORDER BY id");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "id\n1\n3\n",
            "{statement}"
        );
    }
}
