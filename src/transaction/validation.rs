//! Conflict checks of snapshot-producing actions, re-run on every commit attempt against
//! what was committed since the action's starting snapshot (Java
//! `MergingSnapshotProducer.validateAddedDataFiles`, `validateNoNewDeletesForDataFiles`,
//! `validateDataFilesExist`; spec: "Commit Conflict Resolution and Retry"), and the
//! rewrite of manifests that removes files (entries `DELETED`, the rest `EXISTING`).
//!
//! Which files an operation covers is decided per partition ([`Matcher::coverage`]): by a
//! row filter's residual for the file's partition (Java `ResidualEvaluator`), by replaced
//! partitions, or by path. Whether a concurrently added data file conflicts
//! ([`Matcher::may_conflict`]) also asks the file's column metrics, as Java's
//! `validateAddedDataFiles` does through `ManifestGroup.filterData`
//! (`InclusiveMetricsEvaluator`): a file whose metrics prove no row matches the filter is
//! no conflict. Whether a concurrently added equality delete file applies to a data file
//! the operation changes asks both files' statistics (Java `DeleteFileIndex`,
//! `canContainEqDeletesForFile`). Metrics only ever rule a file out; files without them
//! count.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::snapshot_producer::SnapshotProducer;
use super::summary::SnapshotSummary;
use crate::delete::delete_file_index::{equality_deletes_may_apply, is_deletion_vector};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{
    BoundPartitionSpec, InclusiveMetricsEvaluator, ResidualEvaluator, StrictMetricsEvaluator,
    ROWS_CANNOT_MATCH, ROWS_MIGHT_MATCH, ROWS_MIGHT_NOT_MATCH, ROWS_MUST_MATCH,
};
use crate::expr::{Binder, BoundPredicate, Predicate};
use crate::spec::{
    DataContentType, DataFile, Literal, ManifestContent, ManifestEntry, ManifestFile,
    ManifestStatus, Snapshot,
};
use crate::table::Table;
use crate::write::bounds::literal_to_bytes;
use crate::write::NewEntry;

/// The operation a conflict check is for, as its errors name it: `row delta` on `main`
/// (the messages of `main`'s commits), `row delta on branch 'dev'` on another branch,
/// whose conflicts are checked along the branch's ancestry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checked {
    operation: &'static str,
    /// The branch committed to; `None` for `main`.
    branch: Option<String>,
    /// The check runs on the transaction's first attempt and nothing was committed since
    /// the action's starting snapshot: a file missing then was not live when the caller
    /// read the table, not removed by a concurrent commit.
    first_attempt: bool,
}

impl Checked {
    /// `operation` (`"row delta"`, `"overwrite"`, `"rewrite"`) committing to `branch`.
    pub(crate) fn new(operation: &'static str, branch: &str) -> Self {
        Self {
            operation,
            branch: (branch != crate::spec::MAIN_BRANCH).then(|| branch.to_string()),
            first_attempt: false,
        }
    }

    /// Whether the check runs on the first attempt (see the field).
    pub(crate) fn on_first_attempt(mut self, first: bool) -> Self {
        self.first_attempt = first;
        self
    }

    /// The snapshot the operation commits onto, in words.
    fn head(&self) -> String {
        match &self.branch {
            None => "the table's current snapshot".to_string(),
            Some(b) => format!("the snapshot of branch '{b}'"),
        }
    }

    /// Where the files the operation removes live, in words.
    pub(crate) fn live_in(&self) -> String {
        match &self.branch {
            None => "in the table".to_string(),
            Some(b) => format!("on branch '{b}'"),
        }
    }
}

impl std::fmt::Display for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.branch {
            None => f.write_str(self.operation),
            Some(b) => write!(f, "{} on branch '{b}'", self.operation),
        }
    }
}

/// A partition tuple as a hashable key: each value's single-value serialization.
pub(crate) type PartitionKey = Vec<Option<Vec<u8>>>;

pub(crate) fn partition_key(partition: &[Option<Literal>]) -> PartitionKey {
    partition
        .iter()
        .map(|v| v.as_ref().map(literal_to_bytes))
        .collect()
}

/// Decides, per file, whether an overwrite covers it, and whether a data file added
/// concurrently conflicts with it.
pub(crate) struct Matcher {
    filter: Option<BoundPredicate>,
    residuals: HashMap<i32, ResidualEvaluator>,
    /// The filter against a file's column metrics: may a row match.
    metrics: Option<InclusiveMetricsEvaluator>,
    /// The filter against a file's column metrics: must every row match.
    strict: Option<StrictMetricsEvaluator>,
    partitions: HashSet<(i32, PartitionKey)>,
    replace_all_unpartitioned: bool,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Coverage {
    None,
    Partial,
    All,
}

impl Matcher {
    pub(crate) fn new(
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
        let metrics = filter.as_ref().map(InclusiveMetricsEvaluator::new);
        let strict = filter.as_ref().map(StrictMetricsEvaluator::new);
        if let Some(f) = &filter {
            let schemas = m.schemas_newest_first();
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
            metrics,
            strict,
            partitions,
            replace_all_unpartitioned,
        })
    }

    /// Whether the operation replaces the file's whole partition (the partitions new
    /// files replace, Java `BaseReplacePartitions`).
    fn replaces_partition(&self, spec_id: i32, file: &DataFile) -> bool {
        self.replace_all_unpartitioned
            || self
                .partitions
                .contains(&(spec_id, partition_key(&file.partition)))
    }

    /// How much of the file the operation covers: `All` when it replaces the partition,
    /// the filter's residual for the partition is `true`, or the file's column metrics
    /// show every row matches ([`StrictMetricsEvaluator`]); `None` when that residual is
    /// `false`, the metrics show no row can match ([`InclusiveMetricsEvaluator`]), or
    /// there is no filter; else `Partial`. What [`remove_files`] removes by, as Java's
    /// `ManifestFilterManager` decides by partition and metrics (a file of a spec where
    /// the filter's column is no partition column, after partition evolution, is often
    /// decided by its metrics).
    pub(crate) fn coverage(&self, spec_id: i32, file: &DataFile) -> Result<Coverage> {
        if self.replaces_partition(spec_id, file) {
            return Ok(Coverage::All);
        }
        if self.filter.is_none() {
            return Ok(Coverage::None);
        }
        if let Some(residual) = self.residuals.get(&spec_id) {
            match residual.residual_for(&file.partition)? {
                Predicate::AlwaysTrue => return Ok(Coverage::All),
                Predicate::AlwaysFalse => return Ok(Coverage::None),
                _ => {}
            }
        }
        if let Some(m) = &self.metrics {
            if m.eval(file).unwrap_or(ROWS_MIGHT_MATCH) == ROWS_CANNOT_MATCH {
                return Ok(Coverage::None);
            }
        }
        if let Some(strict) = &self.strict {
            if strict.eval(file).unwrap_or(ROWS_MIGHT_NOT_MATCH) == ROWS_MUST_MATCH {
                return Ok(Coverage::All);
            }
        }
        Ok(Coverage::Partial)
    }

    /// Whether a data file added by a concurrent commit may hold rows the operation
    /// covers (serializable isolation). A file in a replaced partition always may (Java
    /// checks a `PartitionSet` without metrics); otherwise the filter's residual for its
    /// partition must allow a match and so must its column metrics (Java
    /// `MergingSnapshotProducer.validateAddedDataFiles` → `ManifestGroup.filterData`:
    /// partition evaluator and `InclusiveMetricsEvaluator`). Missing metrics, or metrics
    /// that cannot be evaluated, might match.
    pub(crate) fn may_conflict(&self, spec_id: i32, file: &DataFile) -> Result<bool> {
        if self.replaces_partition(spec_id, file) {
            return Ok(true);
        }
        if self.coverage(spec_id, file)? == Coverage::None {
            return Ok(false);
        }
        Ok(self
            .metrics
            .as_ref()
            .is_none_or(|m| m.eval(file).unwrap_or(ROWS_MIGHT_MATCH)))
    }
}

/// The snapshots committed after `starting` up to `current` (newest first), following
/// parents. The history is known when the walk reaches `starting`, or a snapshot whose
/// parent is `starting` though `starting` itself was expired meanwhile (Java
/// `MergingSnapshotProducer.validationHistory`: the last snapshot found must have
/// `starting` as its parent). `Err` when `starting` is not an ancestor (rolled back,
/// another branch) or snapshots between it and `current` were expired, naming the branch
/// of `checked`.
pub(crate) fn snapshots_since<'a>(
    table: &'a Table,
    current: Option<&'a Snapshot>,
    starting: Option<i64>,
    checked: &Checked,
) -> Result<Vec<&'a Snapshot>> {
    let m = table.metadata();
    let mut out = vec![];
    let mut cursor = current;
    while let Some(s) = cursor {
        if Some(s.snapshot_id) == starting {
            return Ok(out);
        }
        out.push(s);
        if starting.is_some() && s.parent_snapshot_id == starting {
            return Ok(out);
        }
        cursor = s.parent_snapshot_id.and_then(|p| m.snapshot_by_id(p));
    }
    if starting.is_none() {
        Ok(out)
    } else {
        Err(Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "cannot check the {checked} for conflicts: starting snapshot {} is no longer \
                 an ancestor of {} (expired or rolled back)",
                starting.unwrap_or_default(),
                checked.head()
            ),
        ))
    }
}

/// Snapshot operations that can add data files: `append`, `overwrite` (Java
/// `MergingSnapshotProducer.VALIDATE_ADDED_FILES_OPERATIONS`). A `replace` (compaction)
/// writes rows the table already held, and a `delete` adds none.
const ADDS_DATA_FILES: &[&str] = &["append", "overwrite"];

/// Snapshot operations whose added delete files may delete rows: `overwrite`, `delete`
/// (Java `VALIDATE_ADDED_DELETE_FILES_OPERATIONS`), and `replace` for deletion vectors
/// alone (Java `VALIDATE_ADDED_DVS_OPERATIONS`): a `replace` (`rewrite_position_delete_files`)
/// rewrites deletes the table already held, but a deletion vector it adds for a data file
/// another writer also gives one would leave that file two (spec: at most one per file).
const ADDS_DELETE_FILES: &[&str] = &["overwrite", "delete", "replace"];

/// The entries of `content` that snapshots since `starting` (up to `parent`) wrote with
/// `status`, each with the id and `operation` of the snapshot that wrote it; only
/// snapshots whose `operation` is one of `operations` or missing (a v1 snapshot may have
/// no summary: it counts).
async fn entries_since(
    table: &Table,
    parent: Option<&Snapshot>,
    starting: Option<i64>,
    (content, status): (ManifestContent, ManifestStatus),
    operations: Option<&[&str]>,
    checked: &Checked,
) -> Result<Vec<(i64, Option<String>, ManifestEntry)>> {
    let mut out = vec![];
    for s in snapshots_since(table, parent, starting, checked)? {
        let operation = s.operation();
        if let (Some(op), Some(ops)) = (operation, operations) {
            if !ops.contains(&op) {
                continue;
            }
        }
        for mf in SnapshotProducer::manifests_of(table, Some(s)).await? {
            if mf.added_snapshot_id != s.snapshot_id || mf.content != content {
                continue;
            }
            for e in SnapshotProducer::entries_of(table, &mf).await? {
                if e.status == status && e.snapshot_id == s.snapshot_id {
                    out.push((s.snapshot_id, operation.map(str::to_string), e));
                }
            }
        }
    }
    Ok(out)
}

/// Serializable isolation: no data file an `append` or `overwrite` added since `starting`
/// ([`ADDS_DATA_FILES`]; a compaction's files hold no new rows) may hold rows the
/// operation covers ([`Matcher::may_conflict`]: by partition and column metrics).
///
/// Errors: [`ErrorKind::ValidationFailed`] naming the file and the snapshot that added it.
pub(crate) async fn validate_no_conflicting_data(
    table: &Table,
    parent: Option<&Snapshot>,
    starting: Option<i64>,
    matcher: &Matcher,
    operation: &Checked,
) -> Result<()> {
    let added = entries_since(
        table,
        parent,
        starting,
        (ManifestContent::Data, ManifestStatus::Added),
        Some(ADDS_DATA_FILES),
        operation,
    )
    .await?;
    for (snapshot, _, e) in added {
        if matcher.may_conflict(e.spec_id, &e.data_file)? {
            return Err(Error::new(
                ErrorKind::ValidationFailed,
                format!(
                    "found a conflicting data file '{}' added by snapshot {snapshot} after \
                     this {operation} began (serializable isolation)",
                    e.data_file.file_path
                ),
            ));
        }
    }
    Ok(())
}

/// No delete file an `overwrite` or `delete` added since `starting`, nor a deletion
/// vector a `replace` added ([`ADDS_DELETE_FILES`]), may apply to a data file in `touched` (data
/// files the operation rewrites, removes or adds deletes for): one whose
/// `referenced_data_file` is such a file, or an unscoped one in the same partition (or
/// any partition, when its spec is unpartitioned). Such deletes would be lost (the rows
/// they remove written again) or doubled. An equality delete file applies only to the
/// touched files its statistics allow (Java `validateNoNewDeletesForDataFiles` through
/// `DeleteFileIndex.forDataFile`, `canContainEqDeletesForFile`).
///
/// Errors: [`ErrorKind::ValidationFailed`] naming the delete file and its snapshot.
pub(crate) async fn validate_no_new_deletes_for_data_files(
    table: &Table,
    parent: Option<&Snapshot>,
    starting: Option<i64>,
    touched: &[(i32, &DataFile)],
    operation: &Checked,
) -> Result<()> {
    if touched.is_empty() {
        return Ok(());
    }
    let paths: HashSet<&str> = touched.iter().map(|(_, f)| f.file_path.as_str()).collect();
    let keyed: Vec<((i32, PartitionKey), &DataFile)> = touched
        .iter()
        .map(|(spec, f)| ((*spec, partition_key(&f.partition)), *f))
        .collect();
    let partitions: HashSet<&(i32, PartitionKey)> = keyed.iter().map(|(k, _)| k).collect();
    let added = entries_since(
        table,
        parent,
        starting,
        (ManifestContent::Deletes, ManifestStatus::Added),
        Some(ADDS_DELETE_FILES),
        operation,
    )
    .await?;
    let m = table.metadata();
    let schemas = m.schemas_newest_first();
    for (snapshot, op, e) in added {
        if op.as_deref() == Some("replace") && !is_deletion_vector(&e.data_file) {
            continue;
        }
        let e = Arc::new(e);
        let d = &e.data_file;
        let global = m
            .partition_spec_by_id(e.spec_id)
            .is_none_or(|s| s.is_unpartitioned());
        let key = (e.spec_id, partition_key(&d.partition));
        let in_scope = global || partitions.contains(&key);
        let applies = match crate::delete::referenced_data_file(d) {
            Some(path) => paths.contains(path.as_str()),
            None if in_scope && d.content == DataContentType::EqualityDeletes => {
                let may_apply = equality_deletes_may_apply(Arc::clone(&e), &schemas);
                keyed
                    .iter()
                    .any(|(k, f)| (global || *k == key) && may_apply(f))
            }
            None => in_scope,
        };
        if applies {
            return Err(Error::new(
                ErrorKind::ValidationFailed,
                format!(
                    "found a conflicting delete file '{}' added by snapshot {snapshot} after \
                     this {operation} began: it may delete rows of files this {} changes",
                    d.file_path, operation.operation
                ),
            ));
        }
    }
    Ok(())
}

/// Every data file in `paths` is still live: no snapshot since `starting` removed it.
///
/// Errors: [`ErrorKind::ValidationFailed`] naming the file and the snapshot.
pub(crate) async fn validate_data_files_exist(
    table: &Table,
    parent: Option<&Snapshot>,
    starting: Option<i64>,
    paths: &HashSet<String>,
    operation: &Checked,
) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let removed = entries_since(
        table,
        parent,
        starting,
        (ManifestContent::Data, ManifestStatus::Deleted),
        None,
        operation,
    )
    .await?;
    if let Some((snapshot, _, e)) = removed
        .iter()
        .find(|(_, _, e)| paths.contains(&e.data_file.file_path))
    {
        return Err(Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "data file '{}' that this {operation} deletes rows of was removed by \
                 snapshot {snapshot}",
                e.data_file.file_path
            ),
        ));
    }
    Ok(())
}

/// The manifests of `parent` with the files `covered` says to remove taken out: each
/// manifest holding one is rewritten (removed entries `DELETED`, other live entries
/// `EXISTING` with their snapshot ids and sequence numbers); the others are kept.
/// Removed files are counted in `summary`. Returns the manifests and the removed files'
/// keys ([`removed_key`]: the location; `location@offset` for a deletion vector).
///
/// `covered` answers for each live entry: [`Coverage::All`] removes it; `Partial` on a
/// data file is an [`ErrorKind::Unsupported`] error (removing it would take rows the
/// operation does not cover).
///
/// A delete file scoped to one data file that this removes — a deletion vector, or a
/// position delete file whose `referenced_data_file` (or `file_path` bounds) names it —
/// applies to nothing afterwards and is removed with it (Java
/// `ManifestFilterManager.removeDanglingDeletesFor`, which every `MergingSnapshotProducer`
/// commit applies to the data files it deletes; the same rule for v2 file-scoped
/// position deletes as Java's `RemoveDanglingDeleteFiles`). Partition-scoped and
/// equality delete files stay here; those older than every data file the commit keeps
/// are dropped afterwards (`dropped_deletes`).
pub(crate) async fn remove_files(
    table: &Table,
    producer: &mut SnapshotProducer,
    parent: Option<&Snapshot>,
    covered: &(dyn Fn(&ManifestEntry) -> Result<Coverage> + Sync),
    summary: &mut SnapshotSummary,
) -> Result<(Vec<ManifestFile>, HashSet<String>)> {
    let mut loaded = vec![];
    for mf in SnapshotProducer::manifests_of(table, parent).await? {
        let entries = SnapshotProducer::entries_of(table, &mf).await?;
        loaded.push((mf, entries));
    }
    // by location and blob offset: one Puffin file holds the deletion vectors of
    // several data files, each its own entry
    let mut removed_by_manifest: Vec<HashSet<FileKey>> = Vec::with_capacity(loaded.len());
    let mut removed_data: HashSet<&str> = HashSet::new();
    for (_, entries) in &loaded {
        let mut removed: HashSet<FileKey> = HashSet::new();
        for e in entries.iter().filter(|e| e.is_alive()) {
            match covered(e)? {
                Coverage::All => {
                    removed.insert(file_key(&e.data_file));
                    if e.data_file.content == DataContentType::Data {
                        removed_data.insert(e.data_file.file_path.as_str());
                    }
                }
                Coverage::Partial if e.data_file.content == DataContentType::Data => {
                    return Err(Error::unsupported(format!(
                        "overwrite by a filter that data file '{}' may match only in part: \
                         neither its partition values nor its column metrics (bounds, null \
                         and NaN counts, which metrics modes 'none' and 'counts' do not \
                         keep and long strings' truncate) show that all or none of its rows \
                         match, and rewriting its rows is a row-level DELETE (a DELETE with \
                         the same condition, then the INSERT, does it)",
                        e.data_file.file_path
                    )));
                }
                _ => {}
            }
        }
        removed_by_manifest.push(removed);
    }
    if !removed_data.is_empty() {
        for ((_, entries), removed) in loaded.iter().zip(removed_by_manifest.iter_mut()) {
            for e in entries.iter().filter(|e| e.is_alive()) {
                let dangling = crate::delete::referenced_data_file(&e.data_file)
                    .is_some_and(|data| removed_data.contains(data.as_str()));
                if dangling {
                    removed.insert(file_key(&e.data_file));
                }
            }
        }
    }
    let mut manifests = vec![];
    let mut removed_paths = HashSet::new();
    for ((mf, entries), removed) in loaded.iter().zip(removed_by_manifest) {
        if removed.is_empty() {
            manifests.push(mf.clone());
            continue;
        }
        let mut new_entries = vec![];
        for e in entries.iter().filter(|e| e.is_alive()) {
            if removed.contains(&file_key(&e.data_file)) {
                summary.remove(e.spec_id, &e.data_file);
                new_entries.push(NewEntry::deleted(e));
            } else {
                new_entries.push(NewEntry::existing(e));
            }
        }
        removed_paths.extend(removed.into_iter().map(|(p, o)| match o {
            Some(offset) => format!("{p}@{offset}"),
            None => p.to_string(),
        }));
        let rewritten = producer
            .write_manifest(table, mf.partition_spec_id, mf.content, &new_entries)
            .await?;
        manifests.push(rewritten);
    }
    Ok((manifests, removed_paths))
}

/// A file entry's identity: its location and, for a deletion vector, its blob offset.
type FileKey<'a> = (&'a str, Option<i64>);

fn file_key(f: &DataFile) -> FileKey<'_> {
    (f.file_path.as_str(), f.content_offset)
}

/// The key [`remove_files`] reports a removed entry by: its location, with `@<offset>`
/// for a deletion vector (a blob of a Puffin file).
pub(crate) fn removed_key(f: &DataFile) -> String {
    match f.content_offset {
        Some(offset) => format!("{}@{offset}", f.file_path),
        None => f.file_path.clone(),
    }
}

/// Every path in `wanted` was removed (`removed`): else, when nothing changed since the
/// caller read the table ([`Checked::on_first_attempt`]), the path is not a live file
/// of the table (Java's "Missing required files to delete"), and otherwise a concurrent
/// commit removed it.
///
/// Errors: [`ErrorKind::ValidationFailed`] naming a missing file.
pub(crate) fn check_all_removed(
    wanted: &HashSet<String>,
    removed: &HashSet<String>,
    operation: &Checked,
) -> Result<()> {
    let mut missing: Vec<&String> = wanted.iter().filter(|p| !removed.contains(*p)).collect();
    missing.sort();
    let Some(missing) = missing.first() else {
        return Ok(());
    };
    if operation.first_attempt {
        return Err(Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "missing required files to delete: '{missing}' is not a live file {} \
                 ({operation})",
                operation.live_in()
            ),
        ));
    }
    Err(Error::new(
        ErrorKind::ValidationFailed,
        format!(
            "file '{missing}' to be removed is not live {} any more (a concurrent commit \
             removed it)",
            operation.live_in()
        ),
    ))
}
