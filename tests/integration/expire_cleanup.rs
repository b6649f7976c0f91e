//! `expire_snapshots` whose commit went through but whose file cleanup failed (tester
//! R65's F8): the procedure succeeds, as Spark's (Java's `RemoveSnapshots` logs the
//! failed cleanup), and the CLI warns on stderr which files were left for
//! `remove_orphan_files`; before, the statement failed after its commit, as if nothing
//! had changed.

use std::path::Path;
use std::process::Output;

use crate::cli::{assert_success, icefloe, stderr, stdout};

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

/// A table `ns.e` of two snapshots (the second overwrites the first's row) in `cwd`,
/// and the first snapshot's manifest list and data file (local paths).
fn two_snapshots(cwd: &Path) -> (String, String) {
    assert_success(&sql_in(
        cwd,
        "CREATE SCHEMA ns; CREATE TABLE ns.e (id BIGINT); INSERT INTO ns.e VALUES (1); \
         INSERT OVERWRITE ns.e VALUES (2)",
    ));
    let out = sql_in(
        cwd,
        "SELECT manifest_list FROM \"ns\".\"e$snapshots\" ORDER BY committed_at LIMIT 1; \
         SELECT file_path FROM \"ns\".\"e$all_data_files\" WHERE file_path NOT IN \
         (SELECT file_path FROM \"ns\".\"e$files\")",
    );
    assert_success(&out);
    let text = stdout(&out);
    let paths: Vec<String> = text
        .lines()
        .filter(|l| l.contains('/'))
        .map(|l| l.trim_start_matches("file://").to_string())
        .collect();
    assert_eq!(paths.len(), 2, "{text}");
    (paths[0].clone(), paths[1].clone())
}

const EXPIRE: &str =
    "CALL system.expire_snapshots(table => 'ns.e', older_than => now(), retain_last => 1)";

/// The snapshots of `ns.e` after the expiry.
fn snapshot_count(cwd: &Path) -> String {
    let out = sql_in(cwd, "SELECT count(*) AS n FROM \"ns\".\"e$snapshots\"");
    assert_success(&out);
    stdout(&out)
}

/// The expired snapshot's manifest list cannot be read after the commit: the call
/// succeeds, the snapshot is expired, nothing is deleted, and stderr says so.
#[test]
fn expiry_whose_files_cannot_be_found_succeeds_and_warns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let (list, data) = two_snapshots(&cwd);
    std::fs::write(&list, b"not avro").expect("spoil the manifest list");
    let out = sql_in(&cwd, EXPIRE);
    assert_success(&out);
    let err = stderr(&out);
    assert!(
        err.contains(
            "warning: expire_snapshots of table 'ns.e' expired 1 snapshot(s) (committed), \
             but none of their files was deleted:"
        ),
        "{err}"
    );
    assert!(err.contains("remove_orphan_files"), "{err}");
    assert!(stdout(&out).contains("\n0,0,0,0,0,0\n"), "{}", stdout(&out));
    assert_eq!(snapshot_count(&cwd), "n\n1\n");
    assert!(Path::new(&data).exists(), "{data} was deleted");
}

/// A file of the expired snapshot cannot be deleted: the others are, it is not counted,
/// and stderr names it.
#[test]
fn expiry_whose_file_cannot_be_deleted_succeeds_and_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cwd = std::fs::canonicalize(dir.path()).expect("cwd");
    let (list, data) = two_snapshots(&cwd);
    // a directory (not empty) where the data file was: not deletable as a file
    std::fs::remove_file(&data).expect("remove");
    std::fs::create_dir_all(Path::new(&data).join("x")).expect("mkdir");
    let out = sql_in(&cwd, EXPIRE);
    assert_success(&out);
    let err = stderr(&out);
    assert!(
        err.contains(
            "expired 1 snapshot(s) (committed), but 1 of their files could not be deleted ("
        ),
        "{err}"
    );
    assert!(err.contains(&data), "{err}");
    // the data file is not counted; its manifest and the manifest list are deleted
    assert!(stdout(&out).contains("\n0,0,0,1,1,0\n"), "{}", stdout(&out));
    assert!(!Path::new(&list).exists(), "{list} was kept");
    assert_eq!(snapshot_count(&cwd), "n\n1\n");
}
