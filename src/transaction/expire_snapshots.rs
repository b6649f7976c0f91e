//! [`ExpireSnapshots`]: remove old snapshots and refs past their age from the table
//! metadata (Java `RemoveSnapshots`; spec: "Snapshot Retention Policy"; REST
//! `remove-snapshots`, `remove-snapshot-ref`).
//!
//! What is kept, as Java's `RemoveSnapshots` decides it, with `now` the time of the
//! commit attempt:
//! - **refs**: `main` always; every other ref while its snapshot is younger than its
//!   `max-ref-age-ms` (default: table property `history.expire.max-ref-age-ms`, else
//!   forever). An older ref is removed.
//! - **each kept ref's snapshot** (a branch's or tag's head, the current snapshot).
//! - **each kept branch's ancestors**, walking from its head while fewer than
//!   `min-snapshots-to-keep` are kept (the ref's, else [`retain_last`], else
//!   `history.expire.min-snapshots-to-keep`, default 1) or the ancestor is not older
//!   than the cut-off (`now − max-snapshot-age-ms` of the ref, else [`older_than`], else
//!   `now − history.expire.max-snapshot-age-ms`, default 5 days).
//! - **snapshots of no kept ref's history** (no kept branch's ancestor, no kept tag's
//!   snapshot; a tag's ancestors are not its history) not older than the cut-off.
//!
//! Everything else is removed, and so are the snapshots named by
//! [`expire_snapshot_id`], which must not be a kept ref's head (the current snapshot
//! included): that is an [`ErrorKind::InvalidArgument`](crate::ErrorKind) error naming
//! the refs. The commit requires every ref of the base to be where it was
//! (`assert-ref-snapshot-id`), so a concurrent commit makes the retry decide again on
//! the refreshed table. This action changes metadata only; deleting the files no kept
//! snapshot reaches is [`crate::maintenance::expire_snapshots`]'s business, after the
//! commit.
//!
//! [`retain_last`]: ExpireSnapshots::retain_last
//! [`older_than`]: ExpireSnapshots::expire_older_than
//! [`expire_snapshot_id`]: ExpireSnapshots::expire_snapshot_id

use std::collections::{BTreeSet, HashMap, HashSet};

use async_trait::async_trait;

use super::TransactionAction;
use crate::catalog::ancestors;
use crate::error::{Error, Result};
use crate::spec::{TableMetadata, TableUpdate, MAIN_BRANCH};
use crate::table::Table;
use crate::table_properties as tp;

/// Table property: the default age past which snapshots expire, ms (default 5 days).
pub const MAX_SNAPSHOT_AGE_MS: &str = tp::MAX_SNAPSHOT_AGE_MS.name;
/// Table property: the default number of a branch's snapshots always kept (default 1).
pub const MIN_SNAPSHOTS_TO_KEEP: &str = tp::MIN_SNAPSHOTS_TO_KEEP.name;
/// Table property: the default age past which refs other than `main` expire, ms
/// (default: never).
pub const MAX_REF_AGE_MS: &str = tp::MAX_REF_AGE_MS.name;

const DEFAULT_MAX_SNAPSHOT_AGE_MS: i64 = 5 * 24 * 60 * 60 * 1000;

/// Remove snapshots (and aged refs) from the table metadata.
#[derive(Debug, Clone, Default)]
pub struct ExpireSnapshots {
    older_than_ms: Option<i64>,
    retain_last: Option<i32>,
    snapshot_ids: BTreeSet<i64>,
    now_ms: Option<i64>,
}

/// What an [`ExpireSnapshots`] removes from one version of the table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpirePlan {
    /// The refs removed (past their `max-ref-age-ms`), sorted.
    pub refs: Vec<String>,
    /// The snapshots removed, sorted.
    pub snapshot_ids: Vec<i64>,
}

impl ExpireSnapshots {
    /// Expire by the table's retention properties alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Expire snapshots older than `timestamp_ms` (ms since the epoch) outside the kept
    /// ones (overrides `history.expire.max-snapshot-age-ms`; a ref's own
    /// `max-snapshot-age-ms` still wins for its branch).
    pub fn expire_older_than(mut self, timestamp_ms: i64) -> Self {
        self.older_than_ms = Some(timestamp_ms);
        self
    }

    /// Keep at least `n` snapshots of each branch's history (overrides
    /// `history.expire.min-snapshots-to-keep`). `n` below 1 fails at commit.
    pub fn retain_last(mut self, n: i32) -> Self {
        self.retain_last = Some(n);
        self
    }

    /// Also expire snapshot `id`, whatever its age.
    pub fn expire_snapshot_id(mut self, id: i64) -> Self {
        self.snapshot_ids.insert(id);
        self
    }

    /// Decide as if the time were `now_ms` (default: the clock at each attempt).
    pub fn at_time(mut self, now_ms: i64) -> Self {
        self.now_ms = Some(now_ms);
        self
    }

    /// What this expiry removes from `m` (Java `RemoveSnapshots.internalApply`).
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) for a table whose
    /// `gc.enabled` is false, `retain_last` < 1, a table property that is not a number
    /// (naming it), or a named snapshot that a kept ref points at; [`ErrorKind::NotFound`](crate::ErrorKind) for a named snapshot the
    /// table does not have.
    pub fn plan(&self, m: &TableMetadata) -> Result<ExpirePlan> {
        tp::check_gc_enabled(
            &m.properties,
            &format!("expire snapshots of the table at '{}'", m.location),
        )?;
        let now = self
            .now_ms
            .unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
        if let Some(n) = self.retain_last.filter(|n| *n < 1) {
            return Err(Error::invalid_argument(format!(
                "retain_last must be at least 1, got {n}"
            )));
        }
        let props = &m.properties;
        let default_age = tp::MAX_SNAPSHOT_AGE_MS
            .int(props)?
            .unwrap_or(DEFAULT_MAX_SNAPSHOT_AGE_MS);
        let default_keep = match self.retain_last {
            Some(n) => i64::from(n),
            None => tp::MIN_SNAPSHOTS_TO_KEEP.int(props)?.unwrap_or(1),
        };
        if default_keep < 1 {
            return Err(Error::invalid_argument(format!(
                "table property '{MIN_SNAPSHOTS_TO_KEEP}' must be at least 1, got {default_keep}"
            )));
        }
        let default_ref_age = tp::MAX_REF_AGE_MS.int(props)?.unwrap_or(i64::MAX);
        let default_cutoff = self
            .older_than_ms
            .unwrap_or_else(|| now.saturating_sub(default_age));

        for id in &self.snapshot_ids {
            if m.snapshot_by_id(*id).is_none() {
                return Err(Error::not_found(format!("snapshot {id} does not exist")));
            }
        }

        // refs kept: main always, others younger than their max-ref-age-ms
        let mut refs: HashMap<String, crate::spec::SnapshotReference> = HashMap::new();
        let mut removed_refs = vec![];
        for (name, r) in &m.refs {
            let keep = name == MAIN_BRANCH
                || m.snapshot_by_id(r.snapshot_id).is_some_and(|s| {
                    let max_age = r.max_ref_age_ms.unwrap_or(default_ref_age);
                    now.saturating_sub(s.timestamp_ms) <= max_age
                });
            if keep {
                refs.insert(name.clone(), r.clone());
            } else {
                removed_refs.push(name.clone());
            }
        }
        removed_refs.sort();
        // a table without a `main` ref still has a current snapshot (v1 metadata)
        let mut heads: HashMap<i64, Vec<String>> = HashMap::new();
        for (name, r) in &refs {
            heads.entry(r.snapshot_id).or_default().push(name.clone());
        }
        if let Some(current) = m.current_snapshot_id {
            let names = heads.entry(current).or_default();
            if !names.iter().any(|n| n == MAIN_BRANCH) {
                names.push(MAIN_BRANCH.to_string());
            }
        }
        for id in &self.snapshot_ids {
            if let Some(names) = heads.get(id) {
                let mut names = names.clone();
                names.sort();
                return Err(Error::invalid_argument(format!(
                    "cannot expire snapshot {id}: it is the head of {} ({})",
                    names.join(", "),
                    if names.iter().any(|n| n == MAIN_BRANCH) {
                        "the current snapshot"
                    } else {
                        "remove or move the ref first"
                    }
                )));
            }
        }

        let mut retained: HashSet<i64> = heads.keys().copied().collect();
        let mut in_history: HashSet<i64> = HashSet::new();
        let mut branches: Vec<(Option<&crate::spec::SnapshotReference>, i64)> = refs
            .values()
            .filter(|r| r.ref_type == "branch")
            .map(|r| (Some(r), r.snapshot_id))
            .collect();
        if !refs.contains_key(MAIN_BRANCH) {
            if let Some(current) = m.current_snapshot_id {
                branches.push((None, current));
            }
        }
        for (r, head) in branches {
            let cutoff = match r.and_then(|r| r.max_snapshot_age_ms) {
                Some(age) => now.saturating_sub(age),
                None => default_cutoff,
            };
            let keep = r
                .and_then(|r| r.min_snapshots_to_keep)
                .map(i64::from)
                .unwrap_or(default_keep);
            let mut kept = 0i64;
            for s in ancestors(m, Some(head)) {
                in_history.insert(s.snapshot_id);
                if kept < keep || s.timestamp_ms >= cutoff {
                    retained.insert(s.snapshot_id);
                    kept += 1;
                } else {
                    break;
                }
            }
        }
        // a tag references its own snapshot only, not that snapshot's ancestors (Java's
        // `unreferencedSnapshotsToRetain`): an ancestor on no branch is kept by its age
        for r in refs.values().filter(|r| r.ref_type != "branch") {
            in_history.insert(r.snapshot_id);
        }
        for s in &m.snapshots {
            if !in_history.contains(&s.snapshot_id) && s.timestamp_ms >= default_cutoff {
                retained.insert(s.snapshot_id);
            }
        }
        let mut snapshot_ids: Vec<i64> = m
            .snapshots
            .iter()
            .map(|s| s.snapshot_id)
            .filter(|id| !retained.contains(id) || self.snapshot_ids.contains(id))
            .collect();
        snapshot_ids.sort_unstable();
        Ok(ExpirePlan {
            refs: removed_refs,
            snapshot_ids,
        })
    }
}

impl ExpirePlan {
    /// The updates that apply this plan.
    pub fn updates(&self) -> Vec<TableUpdate> {
        let mut out: Vec<TableUpdate> = self
            .refs
            .iter()
            .map(|r| TableUpdate::RemoveSnapshotRef {
                ref_name: r.clone(),
            })
            .collect();
        if !self.snapshot_ids.is_empty() {
            out.push(TableUpdate::RemoveSnapshots {
                snapshot_ids: self.snapshot_ids.clone(),
            });
        }
        out
    }
}

#[async_trait]
impl TransactionAction for ExpireSnapshots {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        Ok(self.plan(table.metadata())?.updates())
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}
