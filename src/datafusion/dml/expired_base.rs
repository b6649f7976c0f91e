//! A row-level statement whose snapshot was expired while it ran.
//!
//! A `DELETE`/`UPDATE`/`MERGE` reads the files of the snapshot it was planned on. When a
//! concurrent `expire_snapshots` (retention shorter than the statement's run, e.g.
//! `older_than` in the future) expires that snapshot and deletes the files only it
//! referenced, the statement's scan fails on a file that is gone, and the cause is not
//! the table (still whole) but the race. [`explain`] tells that apart: when a read fails
//! and the catalog's table no longer holds the statement's snapshot, the statement fails
//! as a lost race ([`ErrorKind::ValidationFailed`], as its commit would: Java's
//! `MergingSnapshotProducer` refuses a commit whose starting snapshot left the history),
//! naming the snapshot and keeping the read error. Nothing was committed; the statement
//! can be run again. Errors of any other cause, and read errors while the snapshot is
//! still in the table, pass unchanged.

use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, ErrorKind};

/// `e` (a failure before the commit of `statement` on `ident`, which read snapshot
/// `base`), as a lost race when `base` is no longer in the table `catalog` now loads;
/// otherwise `e` unchanged. Only read failures (kinds `InvalidData`, `NotFound`, `Io`,
/// `DataFusion`) are looked at; a table that cannot be loaded leaves `e` unchanged.
pub(crate) async fn explain(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    statement: &str,
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
                "{statement} on '{ident}': snapshot {base}, which the statement read, was \
                 expired by a concurrent commit while it ran and a file it read is gone; \
                 nothing was committed, the statement can be run again"
            ),
        )
        .with_source(e),
        _ => e,
    }
}
