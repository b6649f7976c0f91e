//! [`CherryPickSnapshot`]: apply a snapshot that is not an ancestor of `main` (one
//! written to another branch, or a staged write-audit-publish snapshot) onto `main`, as
//! Iceberg Java's `CherryPickOperation` does (Spark's `cherrypick_snapshot` and
//! `publish_changes`, which both run this action).
//!
//! - **Fast-forward**: when the snapshot's parent is `main`'s current snapshot (or both
//!   are absent), `main` moves to the snapshot itself, whatever its operation (an append,
//!   an overwrite, a delete, a row delta); no new snapshot.
//! - **Append**: otherwise, the data files an `append` snapshot added are appended in a
//!   new `append` snapshot on `main`; the files keep their paths and partition specs (v3:
//!   the new snapshot assigns their row ids).
//! - **Dynamic partition overwrite** (an `overwrite` whose summary says
//!   `replace-partitions=true`, Java `BaseReplacePartitions`): replayed in a new
//!   `overwrite` snapshot that adds its data files and replaces their partitions, when its
//!   parent is still an ancestor of `main` (or it had none), no data file was added to
//!   those partitions since its parent (Java `validateReplacedPartitions`), and every data
//!   file it removed is still live (Java `failMissingDeletePaths`).
//!
//! A new snapshot's summary carries `source-snapshot-id` (the picked snapshot) and, for a
//! staged snapshot, `published-wap-id` (its `wap.id`), as Java's does. Every check is re-run
//! at each commit attempt.
//!
//! Refusals, committing nothing: a snapshot that does not exist ([`ErrorKind::NotFound`]);
//! one that is already an ancestor of `main`, or was cherry-picked onto it before (an
//! ancestor's `source-snapshot-id` names it), or a staged snapshot whose `wap.id` an
//! ancestor of `main` staged or published already (Java `WapUtil.validateWapPublish`)
//! ([`ErrorKind::InvalidArgument`]); when `main` moved on from the snapshot's parent, any
//! snapshot other than an append or a dynamic partition overwrite (a delete, a
//! copy-on-write overwrite, a row delta: Java refuses them too, their changes were planned
//! on rows `main` no longer holds), a dynamic overwrite whose parent is no longer an
//! ancestor of `main`, or whose partitions or removed files changed since
//! ([`ErrorKind::ValidationFailed`], naming the snapshot and why).
//!
//! [`ErrorKind::NotFound`]: crate::ErrorKind
//! [`ErrorKind::InvalidArgument`]: crate::ErrorKind
//! [`ErrorKind::ValidationFailed`]: crate::ErrorKind

use async_trait::async_trait;

use super::append::AppendFiles;
use super::overwrite::{IsolationLevel, OverwriteFiles};
use super::snapshot_producer::{SnapshotProducer, STAGED_WAP_ID};
use super::summary::REPLACE_PARTITIONS;
use super::TransactionAction;
use crate::catalog::ancestors;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{
    DataContentType, DataFile, ManifestContent, ManifestStatus, Snapshot, SnapshotReference,
    TableUpdate, MAIN_BRANCH,
};
use crate::table::Table;

/// The snapshot summary property naming the snapshot a cherry-pick applied.
pub const SOURCE_SNAPSHOT_ID: &str = "source-snapshot-id";

/// The snapshot summary property naming the write-audit-publish id a cherry-pick of a
/// staged snapshot published (Java `SnapshotSummary.PUBLISHED_WAP_ID_PROP`).
pub const PUBLISHED_WAP_ID: &str = "published-wap-id";

/// Cherry-pick one snapshot onto `main` (see the module docs).
#[derive(Debug)]
pub struct CherryPickSnapshot {
    snapshot_id: i64,
    /// The action replaying the snapshot's changes, once built (kept across retries so
    /// its manifests are written once).
    replay: Option<Replay>,
    /// The last attempt fast-forwarded `main` (the replay, if built, is not committed).
    fast_forwarded: bool,
}

/// How a picked snapshot is replayed onto a `main` that moved on from its parent.
#[derive(Debug)]
enum Replay {
    Append(AppendFiles),
    Overwrite(OverwriteFiles),
}

impl CherryPickSnapshot {
    /// Cherry-pick snapshot `snapshot_id`.
    pub fn new(snapshot_id: i64) -> Self {
        Self {
            snapshot_id,
            replay: None,
            fast_forwarded: false,
        }
    }
}

#[async_trait]
impl TransactionAction for CherryPickSnapshot {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        let m = table.metadata();
        let id = self.snapshot_id;
        let picked = m
            .snapshot_by_id(id)
            .ok_or_else(|| Error::not_found(format!("snapshot {id} does not exist")))?;
        let main = m.ref_snapshot_id(MAIN_BRANCH);
        let history = ancestors(m, main);
        check_not_applied(picked, &history)?;
        // Java `isFastForward`: the snapshot's parent is main's current snapshot
        if picked.parent_snapshot_id == main {
            self.fast_forwarded = true;
            let mut reference = m
                .refs
                .get(MAIN_BRANCH)
                .cloned()
                .unwrap_or(SnapshotReference {
                    snapshot_id: id,
                    ref_type: "branch".into(),
                    min_snapshots_to_keep: None,
                    max_snapshot_age_ms: None,
                    max_ref_age_ms: None,
                });
            reference.snapshot_id = id;
            return Ok(vec![TableUpdate::SetSnapshotRef {
                ref_name: MAIN_BRANCH.into(),
                reference,
            }]);
        }
        self.fast_forwarded = false;
        let operation = picked
            .summary
            .get("operation")
            .map(String::as_str)
            .unwrap_or("unknown");
        let replaces_partitions = picked
            .summary
            .get(REPLACE_PARTITIONS)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        match (operation, replaces_partitions) {
            ("append", _) => {}
            ("overwrite", true) => {
                // the partitions' changes since the parent are found along main's history
                if let Some(parent) = picked.parent_snapshot_id {
                    if !history.iter().any(|s| s.snapshot_id == parent) {
                        return Err(Error::new(
                            ErrorKind::ValidationFailed,
                            format!(
                                "cannot cherry-pick snapshot {id}, a dynamic partition \
                                 overwrite: its parent, snapshot {parent}, is no longer an \
                                 ancestor of main's current snapshot{}",
                                at(main)
                            ),
                        ));
                    }
                }
            }
            _ => return Err(moved_on_error(picked, operation, main)),
        }
        if self.replay.is_none() {
            self.replay = Some(replay_of(table, picked, replaces_partitions).await?);
        }
        match &mut self.replay {
            Some(Replay::Append(append)) => append.updates(table).await,
            Some(Replay::Overwrite(overwrite)) => overwrite.updates(table).await.map_err(|e| {
                if e.kind() == ErrorKind::ValidationFailed {
                    e.context(format!(
                        "cannot cherry-pick snapshot {id}, a dynamic partition \
                             overwrite staged on snapshot {}: its partitions changed on \
                             main since",
                        picked
                            .parent_snapshot_id
                            .map_or("none".into(), |p| p.to_string())
                    ))
                } else {
                    e
                }
            }),
            None => Ok(vec![]),
        }
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        let committed = committed && !self.fast_forwarded;
        match &mut self.replay {
            Some(Replay::Append(append)) => append.clean_up(table, committed).await,
            Some(Replay::Overwrite(overwrite)) => overwrite.clean_up(table, committed).await,
            None => {}
        }
    }
}

/// ` {id}`, or ` (none)` when `main` has no snapshot, for messages.
fn at(main: Option<i64>) -> String {
    match main {
        Some(id) => format!(" {id}"),
        None => " (none: main has no snapshot)".to_string(),
    }
}

/// Refuse a snapshot `main` holds already (Java `validateNonAncestor`) or whose
/// write-audit-publish id it published already (Java `WapUtil.validateWapPublish`);
/// `history` is `main`'s ancestry, newest first.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the snapshot that holds it.
fn check_not_applied(picked: &Snapshot, history: &[&Snapshot]) -> Result<()> {
    let id = picked.snapshot_id;
    if history.iter().any(|s| s.snapshot_id == id) {
        return Err(Error::invalid_argument(format!(
            "cannot cherry-pick snapshot {id}: it is already an ancestor of the current \
             snapshot"
        )));
    }
    if let Some(s) = history
        .iter()
        .find(|s| s.summary.get(SOURCE_SNAPSHOT_ID) == Some(&id.to_string()))
    {
        return Err(Error::invalid_argument(format!(
            "cannot cherry-pick snapshot {id}: it was cherry-picked before, as snapshot {}",
            s.snapshot_id
        )));
    }
    if let Some(wap) = picked.summary.get(STAGED_WAP_ID) {
        if let Some(s) = history.iter().find(|s| {
            s.summary.get(STAGED_WAP_ID) == Some(wap)
                || s.summary.get(PUBLISHED_WAP_ID) == Some(wap)
        }) {
            return Err(Error::invalid_argument(format!(
                "cannot cherry-pick snapshot {id}: its write-audit-publish id '{wap}' was \
                 published already, by snapshot {}",
                s.snapshot_id
            )));
        }
    }
    Ok(())
}

/// The refusal of a snapshot that only a fast-forward could apply (operation
/// `operation`: a delete, a copy-on-write overwrite, a row delta) while `main` (at
/// `main`) moved on from its parent, as Java's "not append, dynamic overwrite, or
/// fast-forward".
fn moved_on_error(picked: &Snapshot, operation: &str, main: Option<i64>) -> Error {
    let what = match operation {
        "delete" => "a delete".to_string(),
        "overwrite" => {
            "an overwrite that is no dynamic partition overwrite (a copy-on-write change, a \
             row delta or a static INSERT OVERWRITE)"
                .to_string()
        }
        other => format!("a '{other}' snapshot"),
    };
    let staged = match picked.summary.get(STAGED_WAP_ID) {
        Some(wap) => format!(" staged under write-audit-publish id '{wap}'"),
        None => String::new(),
    };
    let parent = picked
        .parent_snapshot_id
        .map_or("no snapshot".to_string(), |p| format!("snapshot {p}"));
    Error::new(
        ErrorKind::ValidationFailed,
        format!(
            "cannot cherry-pick snapshot {}: it is {what}{staged}, planned on {parent}, and \
             main has moved on to snapshot{}; only an append or a dynamic partition \
             overwrite can be applied onto a later snapshot, anything else only by \
             fast-forward (as Iceberg Java's CherryPickOperation); nothing was committed \
             (write it again on main's current snapshot)",
            picked.snapshot_id,
            at(main)
        ),
    )
}

/// The action replaying `picked` (an append, or a dynamic partition overwrite when
/// `replaces_partitions`): the data files it added (and for an overwrite, removed), read
/// from the manifests it wrote (Java `SnapshotChanges`).
///
/// Errors: a delete file among its added files ([`ErrorKind::Unsupported`]: an append or
/// a partition overwrite adds data files only); manifests that cannot be read.
async fn replay_of(table: &Table, picked: &Snapshot, replaces_partitions: bool) -> Result<Replay> {
    let id = picked.snapshot_id;
    let (added, removed) = changes_of(table, picked).await?;
    let wap_id = picked.summary.get(STAGED_WAP_ID);
    if !replaces_partitions {
        let mut append = AppendFiles::default().set_summary(SOURCE_SNAPSHOT_ID, id.to_string());
        if let Some(wap) = wap_id {
            append = append.set_summary(PUBLISHED_WAP_ID, wap.clone());
        }
        for (spec_id, file) in added {
            append = append.with_files(spec_id, vec![file])?;
        }
        return Ok(Replay::Append(append));
    }
    // replaced partitions are checked from the picked snapshot's parent: no data file
    // added to them since (serializable), and every file it removed still live
    let mut overwrite = OverwriteFiles::new(picked.parent_snapshot_id)
        .replace_partitions()
        .with_isolation_level(IsolationLevel::Serializable)
        .set_summary(SOURCE_SNAPSHOT_ID, id.to_string());
    if let Some(wap) = wap_id {
        overwrite = overwrite.set_summary(PUBLISHED_WAP_ID, wap.clone());
    }
    for (spec_id, file) in added {
        overwrite = overwrite.add_files(spec_id, vec![file])?;
    }
    for path in removed {
        overwrite = overwrite.delete_file(path);
    }
    Ok(Replay::Overwrite(overwrite))
}

/// The data files `picked` added (with their spec ids; v3: without `first_row_id`, which
/// the replaying snapshot assigns) and the paths of the data files it removed.
///
/// Errors: a delete file it added ([`ErrorKind::Unsupported`]).
async fn changes_of(
    table: &Table,
    picked: &Snapshot,
) -> Result<(Vec<(i32, DataFile)>, Vec<String>)> {
    let id = picked.snapshot_id;
    let (mut added, mut removed) = (vec![], vec![]);
    for manifest in SnapshotProducer::manifests_of(table, Some(picked)).await? {
        if manifest.added_snapshot_id != id {
            continue;
        }
        for e in SnapshotProducer::entries_of(table, &manifest).await? {
            if e.snapshot_id != id {
                continue;
            }
            match e.status {
                ManifestStatus::Added => {
                    if e.data_file.content != DataContentType::Data {
                        return Err(Error::unsupported(format!(
                            "cherry-picking snapshot {id}: it adds delete file '{}'",
                            e.data_file.file_path
                        )));
                    }
                    let mut file = e.data_file;
                    file.first_row_id = None;
                    added.push((e.spec_id, file));
                }
                ManifestStatus::Deleted if manifest.content == ManifestContent::Data => {
                    removed.push(e.data_file.file_path)
                }
                _ => {}
            }
        }
    }
    Ok((added, removed))
}
