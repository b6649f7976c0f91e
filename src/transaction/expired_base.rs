//! A write that reads the table (a row-level statement, a rewrite) whose snapshot was
//! expired while it ran.
//!
//! A `DELETE`/`UPDATE`/`MERGE` or a `rewrite_data_files` reads the files of the snapshot
//! it was planned on. When a concurrent `expire_snapshots` (retention shorter than the
//! write's run, e.g. `older_than` in the future) expires that snapshot and deletes the
//! files only it referenced, the write's read fails on a file that is gone, and the
//! cause is not the table (still whole) but the race. [`explain`] tells that apart: when
//! a read fails and the catalog's table no longer holds the write's snapshot, the write
//! fails as a lost race ([`ErrorKind::ValidationFailed`], as its commit would: Java's
//! `MergingSnapshotProducer` refuses a commit whose starting snapshot left the history),
//! naming the snapshot and keeping the read error. Nothing was committed; the write can
//! be run again. Errors of any other cause, and read errors while the snapshot is still
//! in the table, pass unchanged.

use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, ErrorKind};

/// `e` (a failure before the commit of `what` — `DELETE`, `rewrite_data_files` — on
/// `ident`, which read snapshot `base`), as a lost race when `base` is no longer in the table `catalog` now loads;
/// otherwise `e` unchanged. Only read failures (kinds `InvalidData`, `NotFound`, `Io`,
/// `DataFusion`) are looked at; a table that cannot be loaded leaves `e` unchanged.
pub(crate) async fn explain(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    what: &str,
    base: Option<i64>,
    e: Error,
) -> Error {
    let Some(base) = base else {
        return e;
    };
    if !matches!(
        e.kind(),
        ErrorKind::InvalidData | ErrorKind::NotFound | ErrorKind::Io | ErrorKind::DataFusion
    ) {
        return e;
    }
    match catalog.load_table(ident).await {
        Ok(now) if now.metadata().snapshot_by_id(base).is_none() => Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "snapshot {base} of '{ident}', which the {what} read, was expired by a \
                 concurrent commit while it ran and a file it read is gone; nothing was \
                 committed, the {what} can be run again"
            ),
        )
        .with_source(e),
        _ => e,
    }
}
