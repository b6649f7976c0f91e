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
//! With [`clean_expired_metadata`] (Spark's `clean_expired_metadata => true`, Java
//! `cleanExpiredMetadata`), the partition specs and schemas no kept snapshot uses are
//! removed too (REST `remove-partition-specs`, `remove-schemas`): a spec is kept when it
//! is the default one or a kept snapshot's manifest list names it, a schema when it is
//! the current one or a kept snapshot's `schema-id`. That holds even when no snapshot
//! expires. The commit then also requires the default spec, the current schema and
//! every branch other than `main` to be unchanged.
//!
//! [`clean_expired_metadata`]: ExpireSnapshots::clean_expired_metadata
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
    clean_expired_metadata: bool,
}

/// What an [`ExpireSnapshots`] removes from one version of the table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpirePlan {
    /// The refs removed (past their `max-ref-age-ms`), sorted.
    pub refs: Vec<String>,
    /// The snapshots removed, sorted.
    pub snapshot_ids: Vec<i64>,
    /// The partition specs removed, sorted (only with
    /// [`ExpireSnapshots::clean_expired_metadata`]).
    pub spec_ids: Vec<i32>,
    /// The schemas removed, sorted (only with
    /// [`ExpireSnapshots::clean_expired_metadata`]).
    pub schema_ids: Vec<i32>,
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

    /// Also expire snapshot `id`, whatever its age. An id the table does not have (one
    /// expired already) is ignored, as Java's `RemoveSnapshots` ignores it.
    pub fn expire_snapshot_id(mut self, id: i64) -> Self {
        self.snapshot_ids.insert(id);
        self
    }

    /// Also remove the partition specs and schemas no kept snapshot uses (see the module
    /// docs; default false, as in Java).
    pub fn clean_expired_metadata(mut self, clean: bool) -> Self {
        self.clean_expired_metadata = clean;
        self
    }

    /// What this expiry removes from `table`: [`Self::plan`], and with
    /// [`Self::clean_expired_metadata`] the specs and schemas no kept snapshot uses
    /// (reading the kept snapshots' manifest lists while a spec may still be unused).
    ///
    /// Errors: as [`Self::plan`]; a kept snapshot's manifest list that cannot be read.
    pub async fn plan_for(&self, table: &Table) -> Result<ExpirePlan> {
        let m = table.metadata();
        let mut plan = self.plan(m)?;
        if !self.clean_expired_metadata {
            return Ok(plan);
        }
        let expired: HashSet<i64> = plan.snapshot_ids.iter().copied().collect();
        let kept: Vec<_> = m
            .snapshots
            .iter()
            .filter(|s| !expired.contains(&s.snapshot_id))
            .collect();
        let mut specs: HashSet<i32> = HashSet::from([m.default_spec_id]);
        let mut schemas: HashSet<i32> = HashSet::from([m.current_schema_id]);
        for snapshot in &kept {
            if let Some(id) = snapshot.schema_id {
                schemas.insert(id);
            }
            if specs.len() < m.partition_specs.len() {
                let manifests =
                    crate::scan::TableScan::new(table.clone(), Some((*snapshot).clone()))
                        .manifest_list()
                        .await?;
                specs.extend(manifests.iter().map(|mf| mf.partition_spec_id));
            }
        }
        plan.spec_ids = m
            .partition_specs
            .iter()
            .map(|s| s.spec_id)
            .filter(|id| !specs.contains(id))
            .collect();
        plan.spec_ids.sort_unstable();
        plan.schema_ids = m
            .schemas
            .iter()
            .map(|s| s.schema_id)
            .filter(|id| !schemas.contains(id))
            .collect();
        plan.schema_ids.sort_unstable();
        Ok(plan)
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
            // the branch retains its newest ancestors; every ancestor is referenced by it,
            // so one it does not retain is not kept by the default age either (Java's
            // `computeBranchSnapshotsToRetain`, `unreferencedSnapshotsToRetain`)
            let mut kept = 0i64;
            let mut retaining = true;
            for s in ancestors(m, Some(head)) {
                in_history.insert(s.snapshot_id);
                retaining = retaining && (kept < keep || s.timestamp_ms >= cutoff);
                if retaining {
                    retained.insert(s.snapshot_id);
                    kept += 1;
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
            ..ExpirePlan::default()
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
        if !self.spec_ids.is_empty() {
            out.push(TableUpdate::RemovePartitionSpecs {
                spec_ids: self.spec_ids.clone(),
            });
        }
        if !self.schema_ids.is_empty() {
            out.push(TableUpdate::RemoveSchemas {
                schema_ids: self.schema_ids.clone(),
            });
        }
        out
    }

    /// Whether this plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.refs.is_empty()
            && self.snapshot_ids.is_empty()
            && self.spec_ids.is_empty()
            && self.schema_ids.is_empty()
    }
}

#[async_trait]
impl TransactionAction for ExpireSnapshots {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        Ok(self.plan_for(table).await?.updates())
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}
