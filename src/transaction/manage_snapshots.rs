//! [`ManageSnapshots`]: branches, tags and the current snapshot, without new data (Java
//! `ManageSnapshots`/`SnapshotManager`; spec "Snapshot References"; REST
//! `set-snapshot-ref`, `remove-snapshot-ref`).
//!
//! The rules, as Java's `SnapshotManager` and `UpdateSnapshotReferencesOperation` apply
//! them:
//! - a new ref's name is not taken; replacing keeps the kind (a tag replaces a tag, a
//!   branch a branch) and the ref's retention settings not given anew, and a ref only
//!   replaced ([`RefExists::ReplaceExisting`], SQL `REPLACE TAG|BRANCH`) must exist;
//!   `main` is always a branch and is never removed;
//! - refs point at snapshots the table has; retention settings are positive
//!   (`min-snapshots-to-keep`, `max-snapshot-age-ms` for branches, `max-ref-age-ms`);
//! - [`rollback_to`](ManageSnapshots::rollback_to) moves `main` to an *ancestor* of the
//!   current snapshot; [`rollback_to_time`](ManageSnapshots::rollback_to_time) to the
//!   latest ancestor older than the time;
//!   [`set_current_snapshot`](ManageSnapshots::set_current_snapshot) to any snapshot;
//!   [`fast_forward_branch`](ManageSnapshots::fast_forward_branch) moves a branch to a
//!   ref whose snapshot descends from the branch's.
//!
//! Each ref change requires the ref to still be where the base had it
//! (`assert-ref-snapshot-id`); a retry re-checks every rule against the refreshed table.

use async_trait::async_trait;

use super::TransactionAction;
use crate::catalog::ancestors;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{SnapshotReference, TableMetadata, TableUpdate, MAIN_BRANCH};
use crate::table::Table;

/// What to do when a created ref's name is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefExists {
    /// Fail (`CREATE TAG|BRANCH`).
    Fail,
    /// Point it at the new snapshot, creating it when there is none (`CREATE OR
    /// REPLACE`).
    Replace,
    /// Point it at the new snapshot; fail when there is none (`REPLACE`; Java's
    /// `replaceTag` / `replaceBranch`).
    ReplaceExisting,
    /// Leave it as it is (`IF NOT EXISTS`).
    Keep,
}

/// Retention of a ref (spec "Snapshot Retention Policy"); `None` leaves the table
/// default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefRetention {
    /// `max-ref-age-ms`.
    pub max_ref_age_ms: Option<i64>,
    /// Branches: `min-snapshots-to-keep`.
    pub min_snapshots_to_keep: Option<i32>,
    /// Branches: `max-snapshot-age-ms`.
    pub max_snapshot_age_ms: Option<i64>,
}

#[derive(Debug, Clone)]
enum Op {
    CreateRef {
        name: String,
        branch: bool,
        snapshot_id: Option<i64>,
        retention: RefRetention,
        exists: RefExists,
    },
    RemoveRef {
        name: String,
        branch: bool,
        missing_ok: bool,
    },
    RollbackTo(i64),
    RollbackToTime(i64),
    SetCurrent(i64),
    FastForward {
        branch: String,
        to: String,
    },
}

/// Ref and current-snapshot changes committed together.
#[derive(Debug, Clone, Default)]
pub struct ManageSnapshots {
    ops: Vec<Op>,
}

impl ManageSnapshots {
    /// No changes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Create (or per `exists`, replace or keep) tag `name` at `snapshot_id` (`None`:
    /// the current snapshot). Only `max_ref_age_ms` of `retention` applies to tags.
    pub fn create_tag(
        mut self,
        name: &str,
        snapshot_id: Option<i64>,
        retention: RefRetention,
        exists: RefExists,
    ) -> Self {
        self.ops.push(Op::CreateRef {
            name: name.to_string(),
            branch: false,
            snapshot_id,
            retention,
            exists,
        });
        self
    }

    /// Create (or per `exists`, replace or keep) branch `name` at `snapshot_id`
    /// (`None`: the current snapshot).
    pub fn create_branch(
        mut self,
        name: &str,
        snapshot_id: Option<i64>,
        retention: RefRetention,
        exists: RefExists,
    ) -> Self {
        self.ops.push(Op::CreateRef {
            name: name.to_string(),
            branch: true,
            snapshot_id,
            retention,
            exists,
        });
        self
    }

    /// When these changes are one `CREATE BRANCH name` at the current snapshot of `m`, a
    /// table that has no snapshot, and no ref `name` exists: the branch's name and
    /// retention. Java's `ManageSnapshots.createBranch(name)` then points the branch at a
    /// new empty snapshot (an empty append to it,
    /// [`AppendFiles::to_new_branch`](super::AppendFiles::to_new_branch)); as changes of
    /// refs alone they are refused ("the table has no current snapshot").
    pub fn branch_of_empty_table(&self, m: &TableMetadata) -> Option<(String, RefRetention)> {
        match self.ops.as_slice() {
            [Op::CreateRef {
                name,
                branch: true,
                snapshot_id: None,
                retention,
                ..
            }] if m.current_snapshot_id.is_none() && !m.refs.contains_key(name) => {
                Some((name.clone(), *retention))
            }
            _ => None,
        }
    }

    /// Remove tag `name` (`missing_ok`: no error when there is none).
    pub fn remove_tag(mut self, name: &str, missing_ok: bool) -> Self {
        self.ops.push(Op::RemoveRef {
            name: name.to_string(),
            branch: false,
            missing_ok,
        });
        self
    }

    /// Remove branch `name` (never `main`).
    pub fn remove_branch(mut self, name: &str, missing_ok: bool) -> Self {
        self.ops.push(Op::RemoveRef {
            name: name.to_string(),
            branch: true,
            missing_ok,
        });
        self
    }

    /// Make `snapshot_id`, an ancestor of the current snapshot, current.
    pub fn rollback_to(mut self, snapshot_id: i64) -> Self {
        self.ops.push(Op::RollbackTo(snapshot_id));
        self
    }

    /// Make the latest ancestor of the current snapshot older than `timestamp_ms`
    /// current.
    pub fn rollback_to_time(mut self, timestamp_ms: i64) -> Self {
        self.ops.push(Op::RollbackToTime(timestamp_ms));
        self
    }

    /// Make any snapshot of the table current.
    pub fn set_current_snapshot(mut self, snapshot_id: i64) -> Self {
        self.ops.push(Op::SetCurrent(snapshot_id));
        self
    }

    /// Move branch `branch` forward to the snapshot of ref `to` (Java
    /// `fastForwardBranch`): `branch`'s snapshot must be an ancestor of `to`'s; a
    /// `branch` that does not exist is created there.
    pub fn fast_forward_branch(mut self, branch: &str, to: &str) -> Self {
        self.ops.push(Op::FastForward {
            branch: branch.to_string(),
            to: to.to_string(),
        });
        self
    }
}

fn kind(branch: bool) -> &'static str {
    if branch {
        "branch"
    } else {
        "tag"
    }
}

fn check_retention(r: &RefRetention, branch: bool) -> Result<()> {
    let positive = |v: Option<i64>, what: &str| match v {
        Some(v) if v <= 0 => Err(Error::invalid_argument(format!(
            "{what} must be greater than 0, got {v}"
        ))),
        _ => Ok(()),
    };
    positive(r.max_ref_age_ms, "max-ref-age-ms")?;
    positive(r.max_snapshot_age_ms, "max-snapshot-age-ms")?;
    positive(
        r.min_snapshots_to_keep.map(i64::from),
        "min-snapshots-to-keep",
    )?;
    if !branch && (r.min_snapshots_to_keep.is_some() || r.max_snapshot_age_ms.is_some()) {
        return Err(Error::invalid_argument(
            "snapshot retention (min-snapshots-to-keep, max-snapshot-age-ms) applies to \
             branches, not tags",
        ));
    }
    Ok(())
}

fn snapshot_exists(m: &TableMetadata, id: i64) -> Result<()> {
    if m.snapshot_by_id(id).is_none() {
        return Err(Error::not_found(format!("snapshot {id} does not exist")));
    }
    Ok(())
}

/// `main` at `snapshot_id`, keeping `main`'s retention settings.
fn main_at(m: &TableMetadata, snapshot_id: i64) -> TableUpdate {
    let mut reference = m
        .refs
        .get(MAIN_BRANCH)
        .cloned()
        .unwrap_or(SnapshotReference {
            snapshot_id,
            ref_type: "branch".into(),
            min_snapshots_to_keep: None,
            max_snapshot_age_ms: None,
            max_ref_age_ms: None,
        });
    reference.snapshot_id = snapshot_id;
    TableUpdate::SetSnapshotRef {
        ref_name: MAIN_BRANCH.into(),
        reference,
    }
}

impl Op {
    /// The updates of this op on `m` (the table with the earlier ops applied).
    fn updates(&self, m: &TableMetadata) -> Result<Vec<TableUpdate>> {
        match self {
            Op::CreateRef {
                name,
                branch,
                snapshot_id,
                retention,
                exists,
            } => {
                let what = kind(*branch);
                if name.is_empty() {
                    return Err(Error::invalid_argument(format!("a {what} needs a name")));
                }
                if !branch && name == MAIN_BRANCH {
                    return Err(Error::invalid_argument(
                        "'main' is the table's main branch, it cannot be a tag",
                    ));
                }
                check_retention(retention, *branch)?;
                let mut retention = *retention;
                match (m.refs.get(name), exists) {
                    (Some(_), RefExists::Keep) => return Ok(vec![]),
                    (Some(existing), RefExists::Fail) => {
                        return Err(Error::new(
                            ErrorKind::AlreadyExists,
                            format!("{} '{name}' already exists", existing.ref_type),
                        ))
                    }
                    (Some(existing), RefExists::Replace | RefExists::ReplaceExisting)
                        if existing.ref_type != what =>
                    {
                        return Err(Error::invalid_argument(format!(
                            "'{name}' is a {}, not a {what}",
                            existing.ref_type
                        )))
                    }
                    // the settings not given anew stay (Java's `SnapshotRef.builderFrom`)
                    (Some(existing), RefExists::Replace | RefExists::ReplaceExisting) => {
                        retention.max_ref_age_ms =
                            retention.max_ref_age_ms.or(existing.max_ref_age_ms);
                        retention.min_snapshots_to_keep = retention
                            .min_snapshots_to_keep
                            .or(existing.min_snapshots_to_keep);
                        retention.max_snapshot_age_ms = retention
                            .max_snapshot_age_ms
                            .or(existing.max_snapshot_age_ms);
                    }
                    (None, RefExists::ReplaceExisting) => {
                        return Err(Error::not_found(format!(
                            "{what} '{name}' does not exist (CREATE OR REPLACE {} creates it)",
                            what.to_ascii_uppercase()
                        )))
                    }
                    (None, _) => {}
                }
                let id = match snapshot_id {
                    Some(id) => *id,
                    None => m.current_snapshot_id.ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "cannot create {what} '{name}': the table has no current snapshot"
                        ))
                    })?,
                };
                snapshot_exists(m, id)?;
                Ok(vec![TableUpdate::SetSnapshotRef {
                    ref_name: name.clone(),
                    reference: SnapshotReference {
                        snapshot_id: id,
                        ref_type: what.into(),
                        min_snapshots_to_keep: retention.min_snapshots_to_keep,
                        max_snapshot_age_ms: retention.max_snapshot_age_ms,
                        max_ref_age_ms: retention.max_ref_age_ms,
                    },
                }])
            }
            Op::RemoveRef {
                name,
                branch,
                missing_ok,
            } => {
                let what = kind(*branch);
                if *branch && name == MAIN_BRANCH {
                    return Err(Error::invalid_argument("cannot remove the 'main' branch"));
                }
                match m.refs.get(name) {
                    None if *missing_ok => Ok(vec![]),
                    None => Err(Error::not_found(format!("{what} '{name}' does not exist"))),
                    Some(r) if r.ref_type != what => Err(Error::invalid_argument(format!(
                        "'{name}' is a {}, not a {what}",
                        r.ref_type
                    ))),
                    Some(_) => Ok(vec![TableUpdate::RemoveSnapshotRef {
                        ref_name: name.clone(),
                    }]),
                }
            }
            Op::RollbackTo(id) => {
                snapshot_exists(m, *id)?;
                let is_ancestor = ancestors(m, m.current_snapshot_id)
                    .iter()
                    .any(|s| s.snapshot_id == *id);
                if !is_ancestor {
                    return Err(Error::invalid_argument(format!(
                        "cannot roll back to snapshot {id}: it is not an ancestor of the \
                         current snapshot (use set_current_snapshot)"
                    )));
                }
                Ok(vec![main_at(m, *id)])
            }
            Op::RollbackToTime(ms) => {
                let target = ancestors(m, m.current_snapshot_id)
                    .into_iter()
                    .find(|s| s.timestamp_ms < *ms)
                    .ok_or_else(|| {
                        Error::not_found(format!(
                            "cannot roll back: no ancestor of the current snapshot is older \
                             than {ms} ms"
                        ))
                    })?;
                Ok(vec![main_at(m, target.snapshot_id)])
            }
            Op::SetCurrent(id) => {
                snapshot_exists(m, *id)?;
                Ok(vec![main_at(m, *id)])
            }
            Op::FastForward { branch, to } => {
                let target = m.ref_snapshot_id(to).ok_or_else(|| {
                    Error::not_found(format!("branch or tag '{to}' does not exist"))
                })?;
                if let Some(r) = m.refs.get(branch).filter(|r| r.ref_type != "branch") {
                    return Err(Error::invalid_argument(format!(
                        "'{branch}' is a {}, not a branch",
                        r.ref_type
                    )));
                }
                let Some(from) = m.ref_snapshot_id(branch) else {
                    // as Java: a missing branch is created at the target
                    return Ok(vec![TableUpdate::SetSnapshotRef {
                        ref_name: branch.clone(),
                        reference: SnapshotReference {
                            snapshot_id: target,
                            ref_type: "branch".into(),
                            min_snapshots_to_keep: None,
                            max_snapshot_age_ms: None,
                            max_ref_age_ms: None,
                        },
                    }]);
                };
                if from == target {
                    return Ok(vec![]);
                }
                let is_ancestor = ancestors(m, Some(target))
                    .iter()
                    .any(|s| s.snapshot_id == from);
                if !is_ancestor {
                    return Err(Error::invalid_argument(format!(
                        "cannot fast-forward '{branch}' to '{to}': its snapshot {from} is not \
                         an ancestor of {target}"
                    )));
                }
                if branch == MAIN_BRANCH {
                    return Ok(vec![main_at(m, target)]);
                }
                let mut reference =
                    m.refs.get(branch).cloned().ok_or_else(|| {
                        Error::not_found(format!("branch '{branch}' does not exist"))
                    })?;
                reference.snapshot_id = target;
                Ok(vec![TableUpdate::SetSnapshotRef {
                    ref_name: branch.clone(),
                    reference,
                }])
            }
        }
    }
}

#[async_trait]
impl TransactionAction for ManageSnapshots {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        let mut builder = crate::spec::TableMetadataBuilder::from_base(
            table.metadata().clone(),
            Some(table.metadata_location()),
        );
        let mut out = vec![];
        for op in &self.ops {
            let more = op.updates(builder.metadata())?;
            builder.apply_all(&more)?;
            out.extend(more);
        }
        Ok(out)
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}
