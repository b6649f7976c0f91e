//! [`RowDelta`]: a row-level change in one snapshot (Java `BaseRowDelta`; spec:
//! "Row-level Deletes"): add data files (new versions of updated rows), add delete
//! files (position deletes of removed or updated rows), and remove whole data files
//! whose every row the change removes — what a merge-on-read `DELETE`, `UPDATE` or
//! `MERGE` commits.
//!
//! **Validation** (re-run on every retry, as Spark's position-delta write asks of
//! Java's `RowDelta`): the data files the new deletes reference, and the files removed,
//! are still live (`validateDataFilesExist`); no delete file added since the starting
//! snapshot applies to those files (`validateNoConflictingDeleteFiles`); under
//! [`IsolationLevel::Serializable`], no data file added since then may hold rows the
//! change's conflict-detection filter matches (`validateNoConflictingDataFiles`).
//! A failed check is [`ErrorKind::ValidationFailed`](crate::ErrorKind) naming the file
//! and the snapshot.

use std::collections::{BTreeMap, HashSet};

use async_trait::async_trait;

use super::dropped_deletes::drop_deletes_older_than_data;
use super::manifest_merge::merge_manifests;
use super::snapshot_producer::SnapshotProducer;
use super::summary::SnapshotSummary;
use super::validation::{
    check_all_removed, remove_files, removed_key, validate_data_files_exist,
    validate_no_conflicting_data, validate_no_new_deletes_for_data_files, Coverage, Matcher,
};
use super::{IsolationLevel, TransactionAction};
use crate::error::{Error, Result};
use crate::expr::Predicate;
use crate::spec::{DataContentType, DataFile, ManifestEntry, TableUpdate};
use crate::table::Table;

/// Add data and delete files and remove whole data files in one snapshot.
#[derive(Debug)]
pub struct RowDelta {
    added: BTreeMap<i32, Vec<DataFile>>,
    removed_paths: HashSet<String>,
    /// Delete files (deletion vectors) replaced, by [`removed_key`].
    removed_deletes: HashSet<String>,
    /// The data files the change reads rows of (deletes it adds, files it removes),
    /// with their spec ids, for the conflict checks.
    referenced: Vec<(i32, DataFile)>,
    starting_snapshot_id: Option<i64>,
    isolation: IsolationLevel,
    conflict_detection_filter: Option<Predicate>,
    producer: SnapshotProducer,
}

impl RowDelta {
    /// A row delta whose rows were read at `starting_snapshot_id` (`None`: empty table).
    pub fn new(starting_snapshot_id: Option<i64>) -> Self {
        Self {
            added: BTreeMap::new(),
            removed_paths: HashSet::new(),
            removed_deletes: HashSet::new(),
            referenced: vec![],
            starting_snapshot_id,
            isolation: IsolationLevel::Serializable,
            conflict_detection_filter: None,
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
    /// Errors: a delete file ([`crate::ErrorKind::InvalidArgument`]).
    pub fn add_rows(mut self, spec_id: i32, files: Vec<DataFile>) -> Result<Self> {
        if let Some(f) = files.iter().find(|f| f.content != DataContentType::Data) {
            return Err(Error::invalid_argument(format!(
                "row delta adding '{}' as rows, which is a delete file",
                f.file_path
            )));
        }
        self.added.entry(spec_id).or_default().extend(files);
        Ok(self)
    }

    /// Add position or equality delete files written under spec `spec_id`.
    ///
    /// Errors: a data file ([`crate::ErrorKind::InvalidArgument`]).
    pub fn add_deletes(mut self, spec_id: i32, files: Vec<DataFile>) -> Result<Self> {
        if let Some(f) = files.iter().find(|f| f.content == DataContentType::Data) {
            return Err(Error::invalid_argument(format!(
                "row delta adding '{}' as deletes, which is a data file",
                f.file_path
            )));
        }
        self.added.entry(spec_id).or_default().extend(files);
        Ok(self)
    }

    /// Remove a whole data file (every row of it deleted), by its location as stored.
    pub fn remove_rows(mut self, spec_id: i32, file: DataFile) -> Self {
        self.removed_paths.insert(file.file_path.clone());
        self.referenced.push((spec_id, file));
        self
    }

    /// Remove a delete file: a deletion vector the added one replaces (the spec allows
    /// one per data file per snapshot), or a file-scoped position delete file merged
    /// into it.
    pub fn remove_deletes(mut self, file: &DataFile) -> Self {
        self.removed_deletes.insert(removed_key(file));
        self
    }

    /// Name a data file whose rows the added deletes remove (checked to be still live and
    /// free of concurrent deletes at commit).
    pub fn validate_data_file(mut self, spec_id: i32, file: DataFile) -> Self {
        self.referenced.push((spec_id, file));
        self
    }

    /// Check conflicts at `level` (default serializable).
    pub fn with_isolation_level(mut self, level: IsolationLevel) -> Self {
        self.isolation = level;
        self
    }

    /// The rows the change read: under serializable isolation, a data file added since
    /// the starting snapshot that may hold such rows is a conflict.
    pub fn conflict_detection_filter(mut self, filter: Predicate) -> Self {
        self.conflict_detection_filter = Some(filter);
        self
    }

    /// The id of the snapshot this row delta commits.
    pub fn snapshot_id(&self) -> i64 {
        self.producer.snapshot_id()
    }

    fn operation(&self) -> &'static str {
        let files = self.added.values().flatten();
        let (mut data, mut deletes) = (false, !self.removed_paths.is_empty());
        for f in files {
            match f.content {
                DataContentType::Data => data = true,
                _ => deletes = true,
            }
        }
        match (data, deletes) {
            (true, false) => "append",
            (false, _) => "delete",
            (true, true) => "overwrite",
        }
    }
}

#[async_trait]
impl TransactionAction for RowDelta {
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
        let upgraded = self.producer.upgraded_since_first_attempt(table);
        if table.metadata().format_version == crate::spec::FormatVersion::V1 {
            if let Some(f) = self
                .added
                .values()
                .flatten()
                .find(|f| f.content != DataContentType::Data)
            {
                return Err(Error::unsupported(format!(
                    "delete file '{}' in a format-version 1 table: v1 has no delete files \
                     (use copy-on-write, or upgrade to format version 2)",
                    f.file_path
                )));
            }
        }
        // v3 tables take deletion vectors, never new position delete files (spec:
        // "Deletion Vectors")
        if table.metadata().format_version >= crate::spec::FormatVersion::V3 {
            if let Some(f) = self.added.values().flatten().find(|f| {
                f.content == DataContentType::PositionDeletes
                    && !crate::delete::is_deletion_vector(f)
            }) {
                if let Some(from) = upgraded {
                    let checked = self.producer.checked("row delta");
                    return Err(SnapshotProducer::upgraded_error(
                        table,
                        from,
                        &checked.to_string(),
                        &format!(
                            "its position delete file '{}' is of format version {} (v3 \
                             takes deletion vectors)",
                            f.file_path, from as i32
                        ),
                    ));
                }
                return Err(Error::unsupported(format!(
                    "adding position delete file '{}' to a format-version 3 table (v3 takes \
                     deletion vectors: one per data file, see `write::write_deletion_vectors`)",
                    f.file_path
                )));
            }
        }
        check_equality_ids(table, &self.added)?;
        let added_manifests = self.producer.added_manifests(table, &self.added).await?;
        let parent = self.producer.parent(table).cloned();
        let starting = self.starting_snapshot_id;
        let checked = self
            .producer
            .checked_from("row delta", starting, parent.as_ref());

        let referenced_paths: HashSet<String> = self
            .referenced
            .iter()
            .map(|(_, f)| f.file_path.clone())
            .collect();
        validate_data_files_exist(
            table,
            parent.as_ref(),
            starting,
            &referenced_paths,
            &checked,
        )
        .await?;
        let touched: Vec<(i32, &DataFile)> = self.referenced.iter().map(|(s, f)| (*s, f)).collect();
        validate_no_new_deletes_for_data_files(
            table,
            parent.as_ref(),
            starting,
            &touched,
            &checked,
        )
        .await?;
        if self.isolation == IsolationLevel::Serializable {
            if let Some(filter) = &self.conflict_detection_filter {
                let matcher = Matcher::new(table, Some(filter), HashSet::new(), false)?;
                validate_no_conflicting_data(table, parent.as_ref(), starting, &matcher, &checked)
                    .await?;
            }
        }

        let mut summary = SnapshotSummary::of_added(&self.added);
        let (removed_paths, removed_deletes) = (&self.removed_paths, &self.removed_deletes);
        let covered = |e: &ManifestEntry| -> Result<Coverage> {
            let f = &e.data_file;
            let hit = match f.content {
                DataContentType::Data => removed_paths.contains(&f.file_path),
                _ => removed_deletes.contains(&removed_key(f)),
            };
            Ok(if hit { Coverage::All } else { Coverage::None })
        };
        let (kept, removed) = if removed_paths.is_empty() && removed_deletes.is_empty() {
            let kept = SnapshotProducer::manifests_of(table, parent.as_ref()).await?;
            (kept, HashSet::new())
        } else {
            remove_files(
                table,
                &mut self.producer,
                parent.as_ref(),
                &covered,
                &mut summary,
            )
            .await?
        };
        check_all_removed(&self.removed_paths, &removed, &checked)?;
        check_all_removed(&self.removed_deletes, &removed, &checked)?;
        let mut manifests = added_manifests;
        manifests.extend(kept);
        let manifests =
            drop_deletes_older_than_data(table, &mut self.producer, manifests, &mut summary)
                .await?;
        let manifests = merge_manifests(table, &mut self.producer, manifests).await?;
        let operation = self.operation();
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

/// Every equality delete file of `added` names at least one field, and only fields some
/// schema of `table` has (spec: "Equality Delete Files": `equality_ids` are field ids of
/// the table's columns). A file naming another id would be committed and make every read
/// of the table fail.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming the file and the id.
fn check_equality_ids(table: &Table, added: &BTreeMap<i32, Vec<DataFile>>) -> Result<()> {
    let m = table.metadata();
    for f in added
        .values()
        .flatten()
        .filter(|f| f.content == DataContentType::EqualityDeletes)
    {
        if f.equality_ids.is_empty() {
            return Err(Error::invalid_argument(format!(
                "equality delete file '{}' has no equality_ids: it must name the field ids \
                 its rows are matched by",
                f.file_path
            )));
        }
        if let Some(id) = f
            .equality_ids
            .iter()
            .find(|id| m.schemas.iter().all(|s| s.field_by_id(**id).is_none()))
        {
            return Err(Error::invalid_argument(format!(
                "equality delete file '{}' names equality field id {id}, which no schema of \
                 the table at '{}' has",
                f.file_path, m.location
            )));
        }
    }
    Ok(())
}
