//! [`CherryPickSnapshot`]: apply a snapshot that is not an ancestor of `main` (one
//! written to another branch, or a staged write-audit-publish snapshot) onto `main`
//! (Java `CherryPickOperation`, Spark's `cherrypick_snapshot`).
//!
//! - When the snapshot's parent is `main`'s current snapshot, `main` is fast-forwarded
//!   to it (no new snapshot, as Java does).
//! - Otherwise the data files the snapshot added are appended in a new `append`
//!   snapshot on `main` whose summary carries `source-snapshot-id` (the picked
//!   snapshot) as Java's does, and for a staged snapshot `published-wap-id` (its
//!   `wap.id`); the files keep their paths and partition specs.
//!
//! Refusals: a snapshot that does not exist ([`ErrorKind::NotFound`]); one that is
//! already an ancestor of `main`, or was cherry-picked onto it before (an ancestor's
//! `source-snapshot-id` names it), or a staged snapshot whose `wap.id` an ancestor of
//! `main` staged or published already ([`ErrorKind::InvalidArgument`]); a snapshot whose
//! operation is not `append` (`overwrite`, `delete`, `replace`:
//! [`ErrorKind::Unsupported`], naming the operation; Java replays dynamic overwrites,
//! icefloe does not yet).
//!
//! [`ErrorKind::NotFound`]: crate::ErrorKind
//! [`ErrorKind::InvalidArgument`]: crate::ErrorKind
//! [`ErrorKind::Unsupported`]: crate::ErrorKind

use async_trait::async_trait;

use super::append::{AppendFiles, STAGED_WAP_ID};
use super::snapshot_producer::SnapshotProducer;
use super::TransactionAction;
use crate::catalog::ancestors;
use crate::error::{Error, Result};
use crate::spec::{DataContentType, ManifestStatus, SnapshotReference, TableUpdate, MAIN_BRANCH};
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
    /// The append replaying the snapshot's files, once built (kept across retries so
    /// its manifest is written once).
    append: Option<AppendFiles>,
}

impl CherryPickSnapshot {
    /// Cherry-pick snapshot `snapshot_id`.
    pub fn new(snapshot_id: i64) -> Self {
        Self {
            snapshot_id,
            append: None,
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
        // a staged write-audit-publish snapshot is published once (Java
        // `WapUtil.isWapIdPublished`: an ancestor staged or published the same id)
        let wap_id = picked.summary.get(STAGED_WAP_ID).cloned();
        if let Some(wap) = &wap_id {
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
        let operation = picked
            .summary
            .get("operation")
            .map(String::as_str)
            .unwrap_or("unknown");
        if operation != "append" {
            return Err(Error::unsupported(format!(
                "cherry-picking snapshot {id}: its operation is '{operation}'; icefloe \
                 cherry-picks 'append' snapshots only"
            )));
        }
        if self.append.is_none() && picked.parent_snapshot_id == main && main.is_some() {
            // fast-forward: main moves to the snapshot itself
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
        if self.append.is_none() {
            let mut append = AppendFiles::default().set_summary(SOURCE_SNAPSHOT_ID, id.to_string());
            if let Some(wap) = &wap_id {
                append = append.set_summary(PUBLISHED_WAP_ID, wap.clone());
            }
            for manifest in SnapshotProducer::manifests_of(table, Some(picked)).await? {
                if manifest.added_snapshot_id != id {
                    continue;
                }
                for e in SnapshotProducer::entries_of(table, &manifest).await? {
                    if e.status != ManifestStatus::Added || e.snapshot_id != id {
                        continue;
                    }
                    if e.data_file.content != DataContentType::Data {
                        return Err(Error::unsupported(format!(
                            "cherry-picking snapshot {id}: it adds delete file '{}'",
                            e.data_file.file_path
                        )));
                    }
                    let mut file = e.data_file;
                    // v3: the new snapshot assigns the row ids
                    file.first_row_id = None;
                    append = append.with_files(e.spec_id, vec![file])?;
                }
            }
            self.append = Some(append);
        }
        match &mut self.append {
            Some(append) => append.updates(table).await,
            None => Ok(vec![]),
        }
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        if let Some(append) = &mut self.append {
            append.clean_up(table, committed).await;
        }
    }
}
