//! Crash points for tests of the commit path: when the environment variable
//! `ICEFLOE_FAILPOINT` names a point the process reaches, the process aborts there, as a
//! writer killed at that moment would stop (no destructors, no cleanup).
//!
//! The points, in commit order: `after-data-files` (data files written, nothing
//! committed), `after-manifest` (a manifest written), `after-manifest-list`,
//! `after-metadata-file` (the new metadata file written, pointer not swapped),
//! `after-swap` (the catalog points at the new metadata, the writer has not returned);
//! and for `DROP TABLE`, `after-drop` (the table is gone from the catalog, none of its
//! files deleted yet) and `purge-deleting` (`… PURGE`: the first of its files deleted).
//! Unset (the normal case) costs one cached environment lookup per point.

use std::sync::OnceLock;

/// Abort the process if `ICEFLOE_FAILPOINT` is `point`.
pub fn hit(point: &str) {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    let armed = ARMED.get_or_init(|| std::env::var("ICEFLOE_FAILPOINT").ok());
    if armed.as_deref() == Some(point) {
        eprintln!("icefloe: failpoint '{point}' reached, aborting");
        std::process::abort();
    }
}
