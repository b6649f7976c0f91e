//! A read whose snapshot was expired while it ran: a query's scan, a write that reads the
//! table (a row-level statement, `INSERT … SELECT`, `CREATE TABLE … AS SELECT`, a
//! rewrite).
//!
//! A statement reads the files of the snapshot it was planned on. When a concurrent
//! `expire_snapshots` (retention shorter than the statement's run, e.g. `older_than` in
//! the future, or `DROP TABLE … PURGE`) expires that snapshot and deletes the files only
//! it referenced, the read fails on a file that is gone, and the cause is not the table
//! (still whole) but the race. Two steps tell that apart:
//!
//! - [`expired_read`]: when a read fails (kinds `InvalidData`, `NotFound`, `Io`) and the
//!   catalog's table no longer holds the snapshot read, the error keeps its kind and says
//!   so, naming the table and snapshot, that the query can be run again, and keeping the
//!   read error; an [`ExpiredSnapshotRead`] in its source chain records it. The Iceberg
//!   scan (`datafusion::expired_reads`) and the rewrites call it.
//! - [`lost_race`] / [`explain`]: a write whose read failed so fails as a lost race
//!   ([`ErrorKind::ValidationFailed`], as its commit would: Java's
//!   `MergingSnapshotProducer` refuses a commit whose starting snapshot left the
//!   history), naming the statement and the snapshot and keeping the read error. Nothing
//!   was committed; the write can be run again.
//!
//! Errors of any other cause, and read errors while the snapshot is still in the table,
//! pass unchanged.

use std::fmt;

use crate::catalog::{Catalog, TableIdent};
use crate::error::{error_chain, Error, ErrorKind};

/// The source of an error of a read of snapshot `snapshot_id` of `table` that failed
/// because the snapshot was expired while it ran (see [`expired_read`]); its own source,
/// and its text, are the read error's.
#[derive(Debug)]
pub(crate) struct ExpiredSnapshotRead {
    table: String,
    snapshot_id: i64,
    /// How the snapshot left: "expired" or "dropped with its table".
    how: &'static str,
    read_error: Box<dyn std::error::Error + Send + Sync + 'static>,
}

/// The text of a read error kept under a lost race (its causes included).
#[derive(Debug)]
struct ReadError(String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

impl fmt::Display for ExpiredSnapshotRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.read_error, f)
    }
}

impl std::error::Error for ExpiredSnapshotRead {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.read_error.source()
    }
}

/// Whether `e` is a read failure worth checking against the table's history: of a failed
/// read's kind ([`ErrorKind::is_read_failure`]), or `DataFusion` (a DataFusion error,
/// which may hold one).
fn is_read_failure(e: &Error) -> bool {
    e.kind().is_read_failure() || e.kind() == ErrorKind::DataFusion
}

/// The read that failed because its snapshot was expired, found in `e`'s source chain
/// (crossing DataFusion's and Arrow's wrappers, which keep their sources).
fn find_expired_read<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a ExpiredSnapshotRead> {
    error_chain(e).find_map(|err| err.downcast_ref::<ExpiredSnapshotRead>())
}

/// `e` (a failed read of snapshot `snapshot` of `ident`; kinds `InvalidData`, `NotFound`,
/// `Io`, `DataFusion`) saying that the snapshot was expired meanwhile when `catalog` now
/// loads `ident` without it (or no longer has the table: dropped with it): same kind,
/// message "snapshot N of 'ns.t', which the query read, was expired by a concurrent
/// commit while it ran and a file it read is gone; the query can be run again", the read
/// error as the source (inside an [`ExpiredSnapshotRead`]). Otherwise (another kind, the
/// snapshot still there, a table that cannot be loaded, an error already so explained)
/// `e` unchanged.
pub(crate) async fn expired_read(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    snapshot: i64,
    e: Error,
) -> Error {
    if !is_read_failure(&e) || find_expired_read(&e).is_some() {
        return e;
    }
    match catalog.load_table(ident).await {
        Ok(now) if now.metadata().snapshot_by_id(snapshot).is_none() => {
            expired(ident.to_string(), snapshot, "expired", e)
        }
        // a table dropped (`DROP TABLE … PURGE`) took the snapshot with it
        Err(not_found) if not_found.kind() == ErrorKind::NotFound => {
            expired(ident.to_string(), snapshot, "dropped with its table", e)
        }
        _ => e,
    }
}

/// `e` (a read failure of `snapshot` of `table`, a table read by its directory whose
/// current version no longer holds the snapshot) as [`expired_read`] words it; `e`
/// unchanged when it is not a read failure or already so explained.
pub(crate) fn expired_location_read(table: &str, snapshot: i64, e: Error) -> Error {
    if !is_read_failure(&e) || find_expired_read(&e).is_some() {
        return e;
    }
    expired(table.to_string(), snapshot, "expired", e)
}

/// `e` as a read of `snapshot` of `table` that failed because the snapshot was expired.
fn expired(table: String, snapshot: i64, how: &'static str, e: Error) -> Error {
    let kind = e.kind();
    Error::new(
        kind,
        format!(
            "snapshot {snapshot} of '{table}', which the query read, was {how} by a \
             concurrent commit while it ran and a file it read is gone; the query can be \
             run again"
        ),
    )
    .with_source(ExpiredSnapshotRead {
        table,
        snapshot_id: snapshot,
        how,
        read_error: Box::new(e),
    })
}

/// `e` (a failure before the commit of `what` — `INSERT INTO`, `CREATE TABLE … AS`), as
/// a lost race when its source chain holds a read whose snapshot was expired (see
/// [`expired_read`]): [`ErrorKind::ValidationFailed`], "snapshot N of 'ns.t', which the
/// INSERT INTO read, was expired by a concurrent commit while it ran and a file it read
/// is gone; nothing was committed, the INSERT INTO can be run again", the read error
/// kept. Otherwise `e` unchanged.
pub(crate) fn lost_race(what: &str, e: Error) -> Error {
    if e.kind() == ErrorKind::ValidationFailed {
        return e;
    }
    let Some(read) = find_expired_read(&e) else {
        return e;
    };
    let message = format!(
        "snapshot {} of '{}', which the {what} read, was {} by a concurrent commit while \
         it ran and a file it read is gone; nothing was committed, the {what} can be run \
         again",
        read.snapshot_id, read.table, read.how
    );
    let read_error = crate::error::with_causes(read.read_error.as_ref());
    Error::new(ErrorKind::ValidationFailed, message).with_source(ReadError(read_error))
}

/// `e` (a failure before the commit of `what` — `DELETE`, `rewrite_data_files` — on
/// `ident`, which read snapshot `base`), as a lost race ([`lost_race`]) when the read
/// already said its snapshot was expired, or when `base` is no longer in the table
/// `catalog` now loads ([`expired_read`]); otherwise `e` unchanged. A table that cannot
/// be loaded leaves `e` unchanged.
pub(crate) async fn explain(
    catalog: &dyn Catalog,
    ident: &TableIdent,
    what: &str,
    base: Option<i64>,
    e: Error,
) -> Error {
    let e = match base {
        Some(base) if find_expired_read(&e).is_none() => {
            expired_read(catalog, ident, base, e).await
        }
        _ => e,
    };
    lost_race(what, e)
}
