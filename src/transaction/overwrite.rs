//! [`OverwriteFiles`]: remove data files (by path, by a row filter, or by the partitions
//! new files replace) and add new ones in one snapshot (Java `BaseOverwriteFiles`,
//! `BaseReplacePartitions`; spec: "Snapshots", operations `overwrite` and `delete`).
//!
//! Manifests holding a removed file are rewritten with that entry `DELETED` and the
//! other live entries `EXISTING` (their snapshot ids and sequence numbers kept); other
//! manifests are carried over. Delete files older than every data file the overwrite keeps
//! apply to nothing and are dropped (`dropped_deletes`). A row filter removes a file when its partition guarantees
//! every row matches (the filter's residual for the partition is `true`, Java's
//! `ResidualEvaluator`) or its column metrics do (`StrictMetricsEvaluator`), and keeps
//! it when either shows no row can (`InclusiveMetricsEvaluator`), as Java's
//! `ManifestFilterManager`; a data file the filter matches only in part is an
//! [`ErrorKind::Unsupported`](crate::ErrorKind) error, since removing it would take rows
//! with it and rewriting files is a row-level operation.
//!
//! **Validation** (re-run on every retry, Java `validateNoConflictingData` and
//! `validateDeletedFiles`): files removed by path must still be live; under
//! [`IsolationLevel::Serializable`] no data file added since the starting snapshot may
//! hold rows the overwrite covers (by the filter, asked of the file's partition and column
//! metrics as Java's `validateAddedDataFiles` does; or by the replaced partitions).
//! A failed check is [`ErrorKind::ValidationFailed`](crate::ErrorKind) naming the file and
//! the snapshot that added it.

use std::collections::{BTreeMap, HashSet};

use async_trait::async_trait;

use super::dropped_deletes::drop_deletes_older_than_data;
use super::manifest_merge::merge_manifests;
use super::snapshot_producer::SnapshotProducer;
use super::summary::SnapshotSummary;
use super::validation::{
    check_all_removed, partition_key, remove_files, validate_no_conflicting_data,
    validate_no_new_deletes_for_data_files, Coverage, Matcher, PartitionKey,
};
use super::TransactionAction;
use crate::error::{Error, Result};
use crate::expr::Predicate;
use crate::spec::{DataContentType, DataFile, ManifestContent, ManifestEntry, TableUpdate};
use crate::table::Table;

/// How strictly concurrent commits are checked (`write.*.isolation-level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum IsolationLevel {
    /// No data the operation covers may have been added since it began (default).
    #[default]
    Serializable,
    /// Only the operation's own inputs are checked (removed files still live).
    Snapshot,
}

impl IsolationLevel {
    /// Parse `serializable` / `snapshot`.
    ///
    /// Errors: any other value, naming it.
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "serializable" => Ok(Self::Serializable),
            "snapshot" => Ok(Self::Snapshot),
            other => Err(Error::invalid_argument(format!(
                "isolation level '{other}' (expected serializable or snapshot)"
            ))),
        }
    }
}

/// Remove and add files in one snapshot.
#[derive(Debug)]
pub struct OverwriteFiles {
    added: BTreeMap<i32, Vec<DataFile>>,
    delete_paths: HashSet<String>,
    row_filter: Option<Predicate>,
    replace_partitions: bool,
    starting_snapshot_id: Option<i64>,
    isolation: IsolationLevel,
    conflict_detection_filter: Option<Predicate>,
    validate_deletes_of_removed: bool,
    producer: SnapshotProducer,
}

impl OverwriteFiles {
    /// An overwrite whose inputs were read at `starting_snapshot_id` (`None`: the table
    /// was empty). Conflicts are checked against what was committed after it.
    pub fn new(starting_snapshot_id: Option<i64>) -> Self {
        Self {
            added: BTreeMap::new(),
            delete_paths: HashSet::new(),
            row_filter: None,
            replace_partitions: false,
            starting_snapshot_id,
            isolation: IsolationLevel::Serializable,
            conflict_detection_filter: None,
            validate_deletes_of_removed: false,
            producer: SnapshotProducer::new(),
        }
    }

    /// Commit to branch `branch` (which must exist) instead of `main`: the new snapshot
    /// descends from the branch's, conflicts are checked along the branch's ancestry,
    /// and `main` is left as it is (spec: "Branching and Tagging").
    pub fn to_branch(mut self, branch: &str) -> Self {
        self.producer.set_branch(branch);
        self
    }

    /// Stage the snapshot (write-audit-publish): it is added to the table with summary
    /// property `wap.id` = `wap_id`, its parent the branch's current snapshot (conflicts
    /// are checked up to it as for a commit), but no branch points at it, so reads do
    /// not see it until it is published ([`super::CherryPickSnapshot`], Spark's
    /// `publish_changes`); it can be read by id.
    pub fn stage_only(mut self, wap_id: &str) -> Self {
        self.producer.set_stage_only(wap_id);
        self
    }

    /// Add data files written under spec `spec_id`.
    ///
    /// Errors: a file that is not a data file.
    pub fn add_files(mut self, spec_id: i32, files: Vec<DataFile>) -> Result<Self> {
        if let Some(f) = files.iter().find(|f| f.content != DataContentType::Data) {
            return Err(Error::invalid_argument(format!(
                "overwrite adding '{}', which is a delete file",
                f.file_path
            )));
        }
        self.added.entry(spec_id).or_default().extend(files);
        Ok(self)
    }

    /// Remove a file (data or delete) by its location as stored in the manifest.
    pub fn delete_file(mut self, path: impl Into<String>) -> Self {
        self.delete_paths.insert(path.into());
        self
    }

    /// Remove every file whose rows all match `filter` (`AlwaysTrue`: the whole table).
    pub fn overwrite_by_row_filter(mut self, filter: Predicate) -> Self {
        self.row_filter = Some(match self.row_filter.take() {
            Some(f) => f.or(filter),
            None => filter,
        });
        self
    }

    /// Remove every file in the partitions the added files belong to (dynamic partition
    /// overwrite; on an unpartitioned table, the whole table).
    pub fn replace_partitions(mut self) -> Self {
        self.replace_partitions = true;
        self
    }

    /// Set a summary property of the new snapshot (e.g. `source-snapshot-id`).
    pub(crate) fn set_summary(mut self, key: &str, value: String) -> Self {
        self.producer.set_summary(key, value);
        self
    }

    /// Check conflicts at `level` (default serializable).
    pub fn with_isolation_level(mut self, level: IsolationLevel) -> Self {
        self.isolation = level;
        self
    }

    /// Under serializable isolation, fail when a data file added since the starting
    /// snapshot may hold rows matching `filter` (Java `conflictDetectionFilter` +
    /// `validateNoConflictingData`): what a copy-on-write `DELETE`/`UPDATE` read.
    pub fn conflict_detection_filter(mut self, filter: Predicate) -> Self {
        self.conflict_detection_filter = Some(filter);
        self
    }

    /// Fail when a delete file added since the starting snapshot applies to a data file
    /// this overwrite removes (Java `validateNoConflictingDeletes`): a copy-on-write
    /// rewrite would otherwise bring back the rows such a delete removed. Checked at
    /// every isolation level.
    pub fn validate_no_conflicting_deletes(mut self) -> Self {
        self.validate_deletes_of_removed = true;
        self
    }

    /// The removed data files (spec id, file) as the table holds them.
    async fn removed_data_files(
        &self,
        table: &Table,
        removed: &HashSet<String>,
    ) -> Result<Vec<(i32, DataFile)>> {
        let mut out = vec![];
        let parent = self.producer.parent(table).cloned();
        for mf in SnapshotProducer::manifests_of(table, parent.as_ref()).await? {
            if mf.content != ManifestContent::Data {
                continue;
            }
            for e in SnapshotProducer::entries_of(table, &mf).await? {
                if e.is_alive() && removed.contains(&e.data_file.file_path) {
                    out.push((e.spec_id, e.data_file));
                }
            }
        }
        Ok(out)
    }

    /// The id of the snapshot this overwrite commits.
    pub fn snapshot_id(&self) -> i64 {
        self.producer.snapshot_id()
    }

    fn replaced_partitions(&self) -> HashSet<(i32, PartitionKey)> {
        if !self.replace_partitions {
            return HashSet::new();
        }
        self.added
            .iter()
            .flat_map(|(spec, files)| files.iter().map(|f| (*spec, partition_key(&f.partition))))
            .collect()
    }

    /// The snapshot's `operation`: a partition replace is always `overwrite` (Java
    /// `BaseReplacePartitions.operation`); otherwise `append` when it only adds,
    /// `delete` when it only removes, else `overwrite`.
    fn operation(&self, summary_removed: bool) -> &'static str {
        if self.replace_partitions {
            return "overwrite";
        }
        let adds = self.added.values().any(|f| !f.is_empty());
        match (adds, summary_removed || self.replace_partitions) {
            (true, false) => "append",
            (false, true) => "delete",
            _ => "overwrite",
        }
    }
}

#[async_trait]
impl TransactionAction for OverwriteFiles {
    fn added_spec_ids(&self) -> Vec<i32> {
        SnapshotProducer::spec_ids(&self.added)
    }

    fn adds_typed_files(&self) -> bool {
        self.added.values().flatten().any(|f| {
            matches!(
                f.content,
                DataContentType::Data | DataContentType::EqualityDeletes
            )
        })
    }

    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        SnapshotProducer::check_format(table)?;
        let added_manifests = self.producer.added_manifests(table, &self.added).await?;
        let matcher = Matcher::new(
            table,
            self.row_filter.as_ref(),
            self.replaced_partitions(),
            self.replace_partitions,
        )?;
        let parent = self.producer.parent(table).cloned();
        let starting = self.starting_snapshot_id;
        let checked = self
            .producer
            .checked_from("overwrite", starting, parent.as_ref());

        // Conflict checks against what was committed since the starting snapshot.
        if self.isolation == IsolationLevel::Serializable {
            if self.row_filter.is_some() || self.replace_partitions {
                validate_no_conflicting_data(table, parent.as_ref(), starting, &matcher, &checked)
                    .await?;
            }
            if let Some(filter) = &self.conflict_detection_filter {
                let conflicts = Matcher::new(table, Some(filter), HashSet::new(), false)?;
                validate_no_conflicting_data(
                    table,
                    parent.as_ref(),
                    starting,
                    &conflicts,
                    &checked,
                )
                .await?;
            }
        }

        let mut summary = SnapshotSummary::of_added(&self.added);
        summary.replace_partitions = self.replace_partitions;
        let delete_paths = &self.delete_paths;
        let covered = |e: &ManifestEntry| -> Result<Coverage> {
            if delete_paths.contains(&e.data_file.file_path) {
                Ok(Coverage::All)
            } else {
                matcher.coverage(e.spec_id, &e.data_file)
            }
        };
        let (kept, removed) = remove_files(
            table,
            &mut self.producer,
            parent.as_ref(),
            &covered,
            &mut summary,
        )
        .await?;
        check_all_removed(&self.delete_paths, &removed, &checked)?;
        if self.validate_deletes_of_removed {
            let removed_files: Vec<(i32, DataFile)> =
                self.removed_data_files(table, &removed).await?;
            let touched: Vec<(i32, &DataFile)> =
                removed_files.iter().map(|(s, f)| (*s, f)).collect();
            validate_no_new_deletes_for_data_files(
                table,
                parent.as_ref(),
                starting,
                &touched,
                &checked,
            )
            .await?;
        }
        let mut manifests = added_manifests;
        manifests.extend(kept);
        let manifests =
            drop_deletes_older_than_data(table, &mut self.producer, manifests, &mut summary)
                .await?;
        let manifests = merge_manifests(table, &mut self.producer, manifests).await?;
        let operation = self.operation(!removed.is_empty());
        self.producer
            .commit_updates(table, operation, manifests, &summary)
            .await
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        self.producer.clean_up(table, committed).await;
    }

    fn branch(&self) -> Option<&str> {
        self.producer.branch_other_than_main()
    }
}
