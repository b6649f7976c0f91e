//! Crash points for tests of the commit path: when the environment variable
//! `ICEFLOE_FAILPOINT` names a point the process reaches, the process aborts there, as a
//! writer killed at that moment would stop (no destructors, no cleanup).
//!
//! The points, in commit order: `after-data-files` (data files written, nothing
//! committed), `after-manifest` (a manifest written), `after-manifest-list`,
//! `after-metadata-file` (the new metadata file written, pointer not swapped; on a
//! filesystem catalog writing `v<N>.metadata.json` is the commit, as in Java's
//! `HadoopTableOperations`, so the write has landed for icefloe and Java, which read past
//! `version-hint.text`, though a reader going by the hint alone, such as DuckDB's
//! `iceberg_scan` of the directory, sees the version before until the next commit),
//! `after-swap` (the catalog points at the new metadata, the writer has not returned);
//! and for `DROP TABLE`, `after-drop` (the table is gone from the catalog, none of its
//! files deleted yet) and `purge-deleting` (`… PURGE`: the first of its files deleted).
//! `ICEFLOE_FAILPOINT=<point>:panic` panics at the point instead (tests of how a panic
//! in the middle of a statement is reported). Unset (the normal case) costs one cached
//! environment lookup per point.
//!
//! Pause points let a test run another process inside a window of the commit: when
//! `ICEFLOE_PAUSEPOINT` is `<point>=<ms>`, the process reaching `point` says so on
//! stderr (`icefloe: pausepoint '<point>' reached, pausing <ms> ms`) and sleeps. The
//! points: `before-data-files` (an `INSERT` is planned, none of its data files written
//! yet), `commit-loaded` (a catalog's commit loaded the table it commits on, nothing
//! of the commit written yet), `row-level-loaded` (a `DELETE`, `UPDATE` or `MERGE`
//! loaded its table, none of its files planned yet), `rewrite-planned` (`rewrite_data_files` or
//! `rewrite_position_delete_files` chose the files it rewrites, none read yet) and
//! `create-checked` (a `CREATE TABLE` without a query or a
//! `CREATE SCHEMA` found the name free, nothing created yet).

use std::sync::OnceLock;

/// Abort the process if `ICEFLOE_FAILPOINT` is `point`; panic if it is `point:panic`
/// (for tests of how a panic in the middle of a statement is reported).
pub fn hit(point: &str) {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    let armed = ARMED.get_or_init(|| std::env::var("ICEFLOE_FAILPOINT").ok());
    let Some(armed) = armed.as_deref() else {
        return;
    };
    if armed == point {
        eprintln!("icefloe: failpoint '{point}' reached, aborting");
        std::process::abort();
    }
    if armed.strip_suffix(":panic") == Some(point) {
        panic!("failpoint '{point}' reached");
    }
}

/// Sleep if `ICEFLOE_PAUSEPOINT` is `<point>=<ms>` (module docs), blocking the thread.
pub fn pause(point: &str) {
    static ARMED: OnceLock<Option<(String, u64)>> = OnceLock::new();
    let armed = ARMED.get_or_init(|| {
        let v = std::env::var("ICEFLOE_PAUSEPOINT").ok()?;
        let (name, ms) = v.split_once('=')?;
        Some((name.to_string(), ms.parse().ok()?))
    });
    if let Some((name, ms)) = armed {
        if name == point {
            eprintln!("icefloe: pausepoint '{point}' reached, pausing {ms} ms");
            std::thread::sleep(std::time::Duration::from_millis(*ms));
        }
    }
}
