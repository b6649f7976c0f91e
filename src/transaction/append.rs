//! [`AppendFiles`]: add data files in a new `append` snapshot (Java `FastAppend`).
//!
//! The new files go into one new manifest per partition spec, written once and reused by
//! every retry; the parent's manifests are carried over, merged as `MergeAppend` does
//! once there are `commit.manifest.min-count-to-merge` of them (see `manifest_merge`), and
//! delete files older than every data file are dropped as by `MergeAppend`
//! (`dropped_deletes`). An append conflicts with nothing: a retry only re-reads the parent.

use std::collections::{BTreeMap, HashSet};

use async_trait::async_trait;

use super::dropped_deletes::drop_deletes_older_than_data;
use super::manifest_merge::merge_manifests;
use super::snapshot_producer::SnapshotProducer;
use super::summary::SnapshotSummary;
use super::TransactionAction;
use crate::error::{Error, ErrorKind, Result};
use crate::scan::TableScan;
use crate::spec::{DataContentType, DataFile, Snapshot, TableUpdate};
use crate::table::Table;

/// Append data files (each with the id of the partition spec it was written under).
#[derive(Debug)]
pub struct AppendFiles {
    files: BTreeMap<i32, Vec<DataFile>>,
    producer: SnapshotProducer,
    /// Fail when the parent already holds one of the files ([`Self::validate_files_not_present`]).
    validate_not_present: bool,
}

impl AppendFiles {
    /// An append of `files`, written under partition spec `spec_id`.
    ///
    /// Errors: a file that is not a data file ([`crate::ErrorKind::InvalidArgument`]).
    pub fn new(spec_id: i32, files: Vec<DataFile>) -> Result<Self> {
        Self::default().with_files(spec_id, files)
    }

    /// Add more files, written under spec `spec_id`.
    ///
    /// Errors: a file that is not a data file.
    pub fn with_files(mut self, spec_id: i32, files: Vec<DataFile>) -> Result<Self> {
        if let Some(f) = files.iter().find(|f| f.content != DataContentType::Data) {
            return Err(Error::invalid_argument(format!(
                "append of '{}', which is a delete file (use a row delta)",
                f.file_path
            )));
        }
        self.files.entry(spec_id).or_default().extend(files);
        Ok(self)
    }

    /// Commit to branch `branch` (which must exist) instead of `main`; `main` is left
    /// as it is.
    pub fn to_branch(mut self, branch: &str) -> Self {
        self.producer.set_branch(branch);
        self
    }

    /// Commit to branch `branch`, creating it with `retention` when it does not exist:
    /// with no files, the empty snapshot Java's `ManageSnapshots.createBranch` makes for a
    /// branch of a table that has no snapshot yet (Spark's `CREATE BRANCH` there).
    pub fn to_new_branch(mut self, branch: &str, retention: super::RefRetention) -> Self {
        self.producer.set_new_branch(
            branch,
            crate::spec::SnapshotReference {
                snapshot_id: self.producer.snapshot_id(),
                ref_type: "branch".to_string(),
                min_snapshots_to_keep: retention.min_snapshots_to_keep,
                max_snapshot_age_ms: retention.max_snapshot_age_ms,
                max_ref_age_ms: retention.max_ref_age_ms,
            },
        );
        self
    }

    /// Stage the snapshot (write-audit-publish): it is added to the table with summary
    /// property `wap.id` = `wap_id`, its parent the branch's current snapshot, but no
    /// branch points at it, so reads do not see it until it is published
    /// ([`super::CherryPickSnapshot`], Spark's `publish_changes`); it can be read by id.
    pub fn stage_only(mut self, wap_id: &str) -> Self {
        self.producer.set_stage_only(wap_id);
        self
    }

    /// Set a summary property of the new snapshot (e.g. `source-snapshot-id`).
    pub(crate) fn set_summary(mut self, key: &str, value: String) -> Self {
        self.producer.set_summary(key, value);
        self
    }

    /// At every attempt, fail ([`crate::ErrorKind::ValidationFailed`], not retried) when
    /// the snapshot the append goes onto already holds a data file of the same path:
    /// registering existing files (`add_files`) twice, concurrently, would otherwise
    /// reference each file twice and read its rows twice.
    pub fn validate_files_not_present(mut self) -> Self {
        self.validate_not_present = true;
        self
    }

    /// The id of the snapshot this append commits.
    pub fn snapshot_id(&self) -> i64 {
        self.producer.snapshot_id()
    }
}

impl Default for AppendFiles {
    fn default() -> Self {
        Self {
            files: BTreeMap::new(),
            producer: SnapshotProducer::new(),
            validate_not_present: false,
        }
    }
}

#[async_trait]
impl TransactionAction for AppendFiles {
    fn added_spec_ids(&self) -> Vec<i32> {
        SnapshotProducer::spec_ids(&self.files)
    }

    fn adds_typed_files(&self) -> bool {
        !self.files.is_empty()
    }

    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        SnapshotProducer::check_format(table)?;
        let mut manifests = self.producer.added_manifests(table, &self.files).await?;
        let mut summary = SnapshotSummary::of_added(&self.files);
        let parent = self.producer.parent(table).cloned();
        if self.validate_not_present {
            self.check_not_present(table, parent.as_ref()).await?;
        }
        manifests.extend(SnapshotProducer::manifests_of(table, parent.as_ref()).await?);
        let manifests =
            drop_deletes_older_than_data(table, &mut self.producer, manifests, &mut summary)
                .await?;
        let manifests = merge_manifests(table, &mut self.producer, manifests).await?;
        self.producer
            .commit_updates(table, "append", manifests, &summary)
            .await
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        self.producer.clean_up(table, committed).await;
    }

    fn branch(&self) -> Option<&str> {
        self.producer.branch_other_than_main()
    }
}

impl AppendFiles {
    /// See [`Self::validate_files_not_present`].
    async fn check_not_present(&self, table: &Table, parent: Option<&Snapshot>) -> Result<()> {
        let Some(parent) = parent else {
            return Ok(());
        };
        let paths = self.files.values().flatten().map(|f| f.file_path.as_str());
        let present: Vec<String> = paths_in_snapshot(table, parent, paths)
            .await?
            .iter()
            .map(|p| format!("'{p}'"))
            .collect();
        if present.is_empty() {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "{} of the files to add are already in snapshot {} of the table ({}{}), \
                 added by a concurrent commit or before",
                present.len(),
                parent.snapshot_id,
                present[..present.len().min(10)].join(", "),
                if present.len() > 10 { ", …" } else { "" }
            ),
        ))
    }
}

/// Those of `paths` that are live data files of `snapshot` of `table` (in `paths`' order):
/// one plan of the snapshot. Used by [`AppendFiles::validate_files_not_present`] and by
/// `add_files`'s check before it reads any footer.
pub(crate) async fn paths_in_snapshot<'p>(
    table: &Table,
    snapshot: &Snapshot,
    paths: impl Iterator<Item = &'p str>,
) -> Result<Vec<&'p str>> {
    let plan = TableScan::new(table.clone(), Some(snapshot.clone()))
        .plan_files()
        .await?;
    let held: HashSet<&str> = plan
        .tasks
        .iter()
        .map(|t| t.data_file().file_path.as_str())
        .collect();
    Ok(paths.filter(|p| held.contains(p)).collect())
}
