//! [`OverwriteFiles`]: remove data files (by path, by a row filter, or by the partitions
//! new files replace) and add new ones in one snapshot (Java `BaseOverwriteFiles`,
//! `BaseReplacePartitions`; spec: "Snapshots", operations `overwrite` and `delete`).
//!
//! Manifests holding a removed file are rewritten with that entry `DELETED` and the
//! other live entries `EXISTING` (their snapshot ids and sequence numbers kept); other
//! manifests are carried over. A row filter removes a file when its partition guarantees
//! every row matches (the filter's residual for the partition is `true`, Java's
//! `ResidualEvaluator`); a data file the filter matches only in part is an
//! [`ErrorKind::Unsupported`](crate::ErrorKind) error, since removing it would take rows
//! with it and rewriting files is a row-level operation.
//!
//! **Validation** (re-run on every retry, Java `validateNoConflictingData` and
//! `validateDeletedFiles`): files removed by path must still be live; under
//! [`IsolationLevel::Serializable`] no data file added since the starting snapshot may
//! hold rows the overwrite covers (the filter's partitions, or the replaced partitions).
//! A failed check is [`ErrorKind::ValidationFailed`](crate::ErrorKind) naming the file and
//! the snapshot that added it.

use std::collections::{BTreeMap, HashMap, HashSet};

use async_trait::async_trait;

use super::manifest_merge::merge_manifests;
use super::snapshot_producer::SnapshotProducer;
use super::summary::SnapshotSummary;
use super::TransactionAction;
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{BoundPartitionSpec, ResidualEvaluator};
use crate::expr::{Binder, BoundPredicate, Predicate};
use crate::spec::{
    DataContentType, DataFile, Literal, ManifestContent, ManifestEntry, ManifestStatus, Snapshot,
    TableUpdate,
};
use crate::table::Table;
use crate::write::bounds::literal_to_bytes;
use crate::write::NewEntry;

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
            producer: SnapshotProducer::new(),
        }
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

    /// Check conflicts at `level` (default serializable).
    pub fn with_isolation_level(mut self, level: IsolationLevel) -> Self {
        self.isolation = level;
        self
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

    fn operation(&self, summary_removed: bool) -> &'static str {
        let adds = self.added.values().any(|f| !f.is_empty());
        match (adds, summary_removed || self.replace_partitions) {
            (true, false) => "append",
            (false, true) => "delete",
            _ => "overwrite",
        }
    }
}

/// A partition tuple as a hashable key: each value's single-value serialization.
type PartitionKey = Vec<Option<Vec<u8>>>;

fn partition_key(partition: &[Option<Literal>]) -> PartitionKey {
    partition
        .iter()
        .map(|v| v.as_ref().map(literal_to_bytes))
        .collect()
}

/// Decides, per file, whether an overwrite covers it.
struct Matcher {
    filter: Option<BoundPredicate>,
    residuals: HashMap<i32, ResidualEvaluator>,
    partitions: HashSet<(i32, PartitionKey)>,
    replace_all_unpartitioned: bool,
}

#[derive(Debug, PartialEq)]
enum Coverage {
    None,
    Partial,
    All,
}

impl Matcher {
    fn new(
        table: &Table,
        filter: Option<&Predicate>,
        partitions: HashSet<(i32, PartitionKey)>,
        replace: bool,
    ) -> Result<Self> {
        let m = table.metadata();
        let filter = filter
            .map(|f| Binder::new(m.current_schema()).bind(f))
            .transpose()?;
        let mut residuals = HashMap::new();
        if let Some(f) = &filter {
            let schemas: Vec<_> = std::iter::once(m.current_schema())
                .chain(m.schemas.iter().rev())
                .collect();
            for spec in &m.partition_specs {
                let bound = BoundPartitionSpec::new(spec, &schemas)?;
                residuals.insert(spec.spec_id, ResidualEvaluator::new(bound, f));
            }
        }
        // Replacing the partitions of files added to an unpartitioned spec is the whole
        // table (Java `BaseReplacePartitions` on an unpartitioned table).
        let replace_all_unpartitioned = replace
            && partitions.iter().any(|(spec, _)| {
                m.partition_spec_by_id(*spec)
                    .is_some_and(|s| s.is_unpartitioned())
            });
        Ok(Self {
            filter,
            residuals,
            partitions,
            replace_all_unpartitioned,
        })
    }

    fn coverage(&self, spec_id: i32, file: &DataFile) -> Result<Coverage> {
        if self.replace_all_unpartitioned
            || self
                .partitions
                .contains(&(spec_id, partition_key(&file.partition)))
        {
            return Ok(Coverage::All);
        }
        if self.filter.is_none() {
            return Ok(Coverage::None);
        }
        let Some(residual) = self.residuals.get(&spec_id) else {
            return Ok(Coverage::Partial);
        };
        Ok(match residual.residual_for(&file.partition)? {
            Predicate::AlwaysTrue => Coverage::All,
            Predicate::AlwaysFalse => Coverage::None,
            _ => Coverage::Partial,
        })
    }
}

/// The snapshots committed after `starting` up to `current` (newest first), following
/// parents. `Err` when `starting` is not an ancestor (expired or another branch).
fn snapshots_since<'a>(
    table: &'a Table,
    current: Option<&'a Snapshot>,
    starting: Option<i64>,
) -> Result<Vec<&'a Snapshot>> {
    let m = table.metadata();
    let mut out = vec![];
    let mut cursor = current;
    while let Some(s) = cursor {
        if Some(s.snapshot_id) == starting {
            return Ok(out);
        }
        out.push(s);
        cursor = s.parent_snapshot_id.and_then(|p| m.snapshot_by_id(p));
    }
    if starting.is_none() {
        Ok(out)
    } else {
        Err(Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "cannot check for conflicts: starting snapshot {} is no longer an ancestor \
                 of the table's current snapshot (expired or rolled back)",
                starting.unwrap_or_default()
            ),
        ))
    }
}

#[async_trait]
impl TransactionAction for OverwriteFiles {
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

        // Conflict checks against what was committed since the starting snapshot.
        if self.isolation == IsolationLevel::Serializable
            && (self.row_filter.is_some() || self.replace_partitions)
        {
            for s in snapshots_since(table, parent.as_ref(), self.starting_snapshot_id)? {
                for mf in SnapshotProducer::manifests_of(table, Some(s)).await? {
                    if mf.added_snapshot_id != s.snapshot_id || mf.content != ManifestContent::Data
                    {
                        continue;
                    }
                    for e in SnapshotProducer::entries_of(table, &mf).await? {
                        if e.status == ManifestStatus::Added
                            && e.snapshot_id == s.snapshot_id
                            && matcher.coverage(e.spec_id, &e.data_file)? != Coverage::None
                        {
                            return Err(Error::new(
                                ErrorKind::ValidationFailed,
                                format!(
                                    "found a conflicting data file '{}' added by snapshot {} \
                                     after this overwrite began (serializable isolation)",
                                    e.data_file.file_path, s.snapshot_id
                                ),
                            ));
                        }
                    }
                }
            }
        }

        let mut summary = SnapshotSummary::of_added(&self.added);
        let mut manifests = added_manifests;
        let mut found_paths = HashSet::new();
        let mut removed_any = false;
        for mf in SnapshotProducer::manifests_of(table, parent.as_ref()).await? {
            let entries = SnapshotProducer::entries_of(table, &mf).await?;
            let mut removed: Vec<&ManifestEntry> = vec![];
            for e in entries.iter().filter(|e| e.is_alive()) {
                let by_path = self.delete_paths.contains(&e.data_file.file_path);
                if by_path {
                    found_paths.insert(e.data_file.file_path.clone());
                }
                let covered = if by_path {
                    Coverage::All
                } else {
                    matcher.coverage(e.spec_id, &e.data_file)?
                };
                match covered {
                    Coverage::All => removed.push(e),
                    Coverage::Partial if e.data_file.content == DataContentType::Data => {
                        return Err(Error::unsupported(format!(
                            "overwrite by a filter that matches only some rows of data file \
                             '{}' (rewriting data files is a row-level DELETE)",
                            e.data_file.file_path
                        )));
                    }
                    _ => {}
                }
            }
            if removed.is_empty() {
                manifests.push(mf);
                continue;
            }
            removed_any = true;
            let removed_paths: HashSet<&str> = removed
                .iter()
                .map(|e| e.data_file.file_path.as_str())
                .collect();
            let mut new_entries = vec![];
            for e in entries.iter().filter(|e| e.is_alive()) {
                if removed_paths.contains(e.data_file.file_path.as_str()) {
                    summary.remove(e.spec_id, &e.data_file);
                    new_entries.push(NewEntry::deleted(e));
                } else {
                    new_entries.push(NewEntry::existing(e));
                }
            }
            let rewritten = self
                .producer
                .write_manifest(table, mf.partition_spec_id, mf.content, &new_entries)
                .await?;
            manifests.push(rewritten);
        }
        if let Some(missing) = self.delete_paths.iter().find(|p| !found_paths.contains(*p)) {
            return Err(Error::new(
                ErrorKind::ValidationFailed,
                format!(
                    "file '{missing}' to be removed is not live in the table any more \
                     (a concurrent commit removed it)"
                ),
            ));
        }
        let manifests = merge_manifests(table, &mut self.producer, manifests).await?;
        let operation = self.operation(removed_any);
        self.producer
            .commit_updates(table, operation, manifests, &summary)
            .await
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        self.producer.clean_up(table, committed).await;
    }
}
