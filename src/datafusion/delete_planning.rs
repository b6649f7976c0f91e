//! Planning row-level deletes for DataFusion's Parquet scan.
//!
//! For each data file of a scan, the [`DeleteFileIndex`] names the delete files that
//! apply (spec: "Scan Planning": position deletes and deletion vectors when their data
//! sequence number ≥ the data file's, equality deletes when >, partition-scoped unless
//! written unpartitioned). Then:
//! - **Position deletes and deletion vectors** are read at planning time into a bitmap
//!   of deleted positions per data file. A file whose rows are all deleted is not
//!   scanned at all. The scan applies the others in one of two ways
//!   ([`PositionDeletePolicy`]): as a file-level `ParquetRowSelection` on the file's
//!   `PartitionedFile` (DataFusion keeps row-group, page and filter pruning on and skips
//!   the deleted rows while decoding, and whole pages of deleted rows are never read),
//!   or, when the deletes are fragmented (short runs all over the file, where a
//!   selection of hundreds of thousands of selectors costs more to split per row group
//!   than the decoding it saves), per batch after decoding by
//!   [`PositionDeleteExec`](super::position_delete_exec::PositionDeleteExec).
//! - **Equality deletes** are applied after the scan by
//!   [`EqualityDeleteExec`](super::equality_delete_exec::EqualityDeleteExec): each data
//!   file carries two hidden constant columns, its data sequence number and the id of its
//!   partition scope, and a row is deleted when a delete row with equal key has a
//!   greater sequence number within the row's scope or globally.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{self, StreamExt, TryStreamExt};

pub(crate) use crate::delete::PositionDeletes;
use crate::delete::{
    DeleteFileIndex, EqualityDeleteLoader, PositionDeleteCache, PositionDeleteLoader, GLOBAL_SCOPE,
};
use crate::error::{Error, Result};
use crate::scan::file_version::FileVersion;
use crate::scan::FileScanTask;
use crate::spec::{DataContentType, ManifestEntry, TableMetadata};
use crate::table::Table;

/// How many data files have their position deletes loaded at once.
const DELETE_LOAD_CONCURRENCY: usize = 16;

/// A data file's hidden sequence number when no equality delete applies to it: no
/// delete can have a greater one, so probing never deletes its rows.
pub(crate) const NO_EQUALITY_DELETES: i64 = i64::MAX;

/// How a scan applies position deletes and deletion vectors (the session option
/// `icefloe.position_deletes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionDeletePolicy {
    /// Fragmented deletes (see `ROWS_PER_RUN_FRAGMENTED`) per batch after decoding,
    /// the others as row selections (the default).
    Auto,
    /// Always as a row selection given to the Parquet decoder.
    Selection,
    /// Always per batch after decoding.
    Filter,
}

impl PositionDeletePolicy {
    /// Whether this policy applies `position` per batch after decoding.
    pub(crate) fn per_batch(self, position: &PositionDeletes) -> bool {
        match self {
            Self::Auto => position.fragmented,
            Self::Selection => false,
            Self::Filter => true,
        }
    }

    /// Parse `auto`, `selection` or `filter` (case-insensitive).
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] for another value.
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "selection" => Ok(Self::Selection),
            "filter" => Ok(Self::Filter),
            other => Err(Error::invalid_argument(format!(
                "icefloe.position_deletes is '{other}' (expected auto, selection or filter)"
            ))),
        }
    }
}

/// How a query's scan applies equality deletes (the session option
/// `icefloe.equality_deletes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EqualityDeletePolicy {
    /// The default: a data file whose equality deletes were resolved to positions
    /// before (kept in the session's position delete cache) has them applied as
    /// position deletes; the others are resolved first (one pass over their equality
    /// columns), except under a `LIMIT` or when the cache keeps nothing, where they
    /// are probed per batch.
    Auto,
    /// Always probed per batch ([`EqualityDeleteExec`](super::equality_delete_exec)),
    /// never resolved to positions.
    Probe,
    /// Always resolved to positions, under a `LIMIT` too.
    Resolve,
}

impl EqualityDeletePolicy {
    /// Parse `auto`, `probe` or `resolve` (case-insensitive).
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] for another value.
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "probe" => Ok(Self::Probe),
            "resolve" => Ok(Self::Resolve),
            other => Err(Error::invalid_argument(format!(
                "icefloe.equality_deletes is '{other}' (expected auto, probe or resolve)"
            ))),
        }
    }
}

/// One data file to scan, with its deletes planned.
#[derive(Debug, Clone)]
pub(crate) struct PlannedFile {
    /// The data file.
    pub task: FileScanTask,
    /// Its position deletes / deletion vector (`None`: no row deleted by position).
    pub position: Option<PositionDeletes>,
    /// The data sequence number equality deletes are compared with, or
    /// [`NO_EQUALITY_DELETES`].
    pub equality_sequence_number: i64,
    /// The file's partition scope id for partition-scoped equality deletes.
    pub scope: i32,
    /// The position delete files and deletion vectors that apply to it.
    pub position_deletes: Vec<Arc<ManifestEntry>>,
    /// The equality delete files that apply to it (empty when
    /// `equality_sequence_number` is [`NO_EQUALITY_DELETES`]).
    pub equality_deletes: Vec<Arc<ManifestEntry>>,
}

impl PlannedFile {
    /// `task` with no delete applying to it.
    pub(crate) fn without_deletes(task: FileScanTask) -> Self {
        PlannedFile {
            task,
            position: None,
            equality_sequence_number: NO_EQUALITY_DELETES,
            scope: GLOBAL_SCOPE,
            position_deletes: vec![],
            equality_deletes: vec![],
        }
    }
}

/// One equality delete file and the scope it applies in.
#[derive(Debug, Clone)]
pub(crate) struct EqualityDeleteFile {
    /// The delete file's manifest entry (its `equality_ids`, data sequence number).
    pub entry: Arc<ManifestEntry>,
    /// [`GLOBAL_SCOPE`] or the id of the one partition scope it applies to.
    pub scope: i32,
}

/// Counts of planned deletes, for `EXPLAIN ANALYZE` and the CLI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteMetrics {
    /// Position delete files (Parquet) applied to at least one data file.
    pub position_delete_files: usize,
    /// Deletion vectors applied.
    pub deletion_vectors: usize,
    /// Equality delete files applied to at least one data file.
    pub equality_delete_files: usize,
    /// Rows removed by position deletes and deletion vectors (known at planning).
    pub rows_deleted_by_position: u64,
    /// Data files skipped because every row was deleted.
    pub data_files_fully_deleted: usize,
    /// Data files whose equality deletes were applied as deleted positions, resolved
    /// once and kept in the session's cache (`icefloe.equality_deletes`).
    pub data_files_equality_resolved: usize,
}

impl DeleteMetrics {
    /// The counts, named as they appear in `EXPLAIN ANALYZE` (on the `DataSourceExec`).
    pub fn counters(&self) -> [(&'static str, usize); 6] {
        [
            ("iceberg_position_delete_files", self.position_delete_files),
            ("iceberg_deletion_vectors", self.deletion_vectors),
            ("iceberg_equality_delete_files", self.equality_delete_files),
            (
                "iceberg_rows_deleted_by_position",
                usize::try_from(self.rows_deleted_by_position).unwrap_or(usize::MAX),
            ),
            (
                "iceberg_data_files_fully_deleted",
                self.data_files_fully_deleted,
            ),
            (
                "iceberg_data_files_equality_resolved",
                self.data_files_equality_resolved,
            ),
        ]
    }
}

/// The result of delete planning.
#[derive(Debug, Default, Clone)]
pub(crate) struct DeletePlan {
    /// The data files to scan.
    pub files: Vec<PlannedFile>,
    /// Equality delete files that apply to some planned file.
    pub equality_deletes: Vec<EqualityDeleteFile>,
    /// Data files left out of `files` because their position deletes or deletion
    /// vectors delete every row: nothing to read, but still live in the snapshot —
    /// a statement that removes whole files (`TRUNCATE`, `DELETE` by partition) must
    /// remove them too.
    pub fully_deleted: Vec<FileScanTask>,
    /// Counts.
    pub metrics: DeleteMetrics,
    /// The pruning funnel of the file planning this plan came from, when it came from
    /// one (a row-level statement's: shown on its scan, as a query's is).
    pub scan_metrics: Option<crate::scan::ScanMetrics>,
}

fn scope_key(spec_id: i32, partition: &[Option<crate::spec::Literal>]) -> String {
    format!("{spec_id}:{partition:?}")
}

/// Plan the deletes of `tasks` given the snapshot's live `delete_entries`, reading
/// position deletes and deletion vectors through `cache` when given (a session's, see
/// [`PositionDeleteCache`]).
///
/// Errors: a delete file that is missing, truncated or corrupt (naming it), or
/// inconsistent delete metadata (see [`DeleteFileIndex::for_data_file`]).
pub(crate) async fn plan_deletes(
    table: &Table,
    tasks: Vec<FileScanTask>,
    delete_entries: Vec<Arc<ManifestEntry>>,
    cache: Option<&Arc<PositionDeleteCache>>,
) -> Result<DeletePlan> {
    let metadata: &TableMetadata = table.metadata();
    let index = DeleteFileIndex::for_table(metadata, delete_entries.iter().cloned())?;
    let file_io = table.file_io().clone();
    let loader = match cache {
        Some(c) => PositionDeleteLoader::with_cache(file_io.clone(), Arc::clone(c)),
        None => PositionDeleteLoader::new(file_io.clone()),
    };

    // Without delete files every data file is planned as it is: no per-file work (a
    // table of a million files plans them in one pass).
    if index.is_empty() {
        return Ok(DeletePlan {
            files: tasks
                .into_iter()
                .map(PlannedFile::without_deletes)
                .collect(),
            ..Default::default()
        });
    }
    // Scope ids of the data files' partitions, for partition-scoped equality deletes
    // (only they read a file's scope).
    let mut scopes: HashMap<String, i32> = HashMap::new();
    if index.has_equality_deletes() {
        for task in &tasks {
            let next = scopes.len() as i32;
            scopes
                .entry(scope_key(task.entry.spec_id, &task.data_file().partition))
                .or_insert(next);
        }
    }

    let planned: Vec<(Planned, Vec<Arc<ManifestEntry>>, u64)> = stream::iter(tasks)
        .map(|task| {
            let (index, loader, scopes, file_io) = (&index, &loader, &scopes, &file_io);
            async move {
                let applicable = index.for_data_file(&task.entry)?;
                let (positional, equality): (Vec<_>, Vec<_>) = applicable
                    .into_iter()
                    .partition(|d| d.data_file.content == DataContentType::PositionDeletes);
                let (scope, equality_sequence_number) = if equality.is_empty() {
                    (GLOBAL_SCOPE, NO_EQUALITY_DELETES)
                } else {
                    let key = scope_key(task.entry.spec_id, &task.data_file().partition);
                    let scope = scopes.get(&key).copied().unwrap_or(GLOBAL_SCOPE);
                    (scope, task.entry.data_sequence_number)
                };
                let equality_deletes = equality.clone();
                let mut applied = equality;
                let mut deleted_rows = 0;
                let mut position = None;
                let position_deletes = positional.clone();
                if !positional.is_empty() {
                    let data_path = &task.data_file().file_path;
                    let total = u64::try_from(task.data_file().record_count).unwrap_or(0);
                    let planned_key = match cache {
                        Some(c) => Some((c, planned_key(file_io, &task.entry, &positional)?)),
                        None => None,
                    };
                    applied.extend(position_deletes.iter().cloned());
                    let kept = planned_key
                        .as_ref()
                        .and_then(|(c, (data, keys))| c.get_planned(data, total, keys));
                    if let Some(kept) = kept {
                        // checked when planned: non-empty, inside the file, not all rows
                        deleted_rows = kept.deleted.len();
                        position = Some(kept);
                    } else {
                        let deleted = loader.deleted_positions(data_path, &positional).await?;
                        // Only positions inside the file count: a file is skipped as fully
                        // deleted (and its statistics trusted to describe surviving rows)
                        // only if every one of its rows is deleted.
                        let in_file = total.checked_sub(1).map_or(0, |last| deleted.rank(last));
                        deleted_rows = in_file;
                        if in_file >= total {
                            let skipped = Planned::FullyDeleted(task);
                            return Ok::<_, crate::Error>((skipped, applied, deleted_rows));
                        }
                        if let Some(max) = deleted.max().filter(|m| *m >= total) {
                            return Err(Error::invalid_data(format!(
                                "position {max} of data file '{data_path}' is deleted, but \
                                 the file has {total} rows"
                            )));
                        }
                        if !deleted.is_empty() {
                            let planned = PositionDeletes::new(deleted, total);
                            if let Some((c, (data, keys))) = &planned_key {
                                c.insert_planned(data, total, keys, planned.clone());
                            }
                            position = Some(planned);
                        }
                    }
                }
                let file = PlannedFile {
                    task,
                    position,
                    equality_sequence_number,
                    scope,
                    position_deletes,
                    equality_deletes,
                };
                Ok((Planned::File(file), applied, deleted_rows))
            }
        })
        .buffered(DELETE_LOAD_CONCURRENCY)
        .try_collect()
        .await?;

    let mut plan = DeletePlan::default();
    let mut used: HashMap<String, Arc<ManifestEntry>> = HashMap::new();
    for (file, applied, deleted_rows) in planned {
        plan.metrics.rows_deleted_by_position += deleted_rows;
        match file {
            Planned::File(f) => plan.files.push(f),
            Planned::FullyDeleted(task) => {
                plan.metrics.data_files_fully_deleted += 1;
                plan.fully_deleted.push(task);
            }
        }
        for d in applied {
            let key = format!("{}@{:?}", d.data_file.file_path, d.data_file.content_offset);
            used.entry(key).or_insert(d);
        }
    }
    for d in used.into_values() {
        let file = &d.data_file;
        match file.content {
            DataContentType::EqualityDeletes => {
                plan.metrics.equality_delete_files += 1;
                let unpartitioned = metadata
                    .partition_spec_by_id(d.spec_id)
                    .is_none_or(|s| s.is_unpartitioned());
                let scope = if unpartitioned {
                    Some(GLOBAL_SCOPE)
                } else {
                    scopes.get(&scope_key(d.spec_id, &file.partition)).copied()
                };
                if let Some(scope) = scope {
                    plan.equality_deletes
                        .push(EqualityDeleteFile { entry: d, scope });
                }
            }
            _ if crate::delete::is_deletion_vector(file) => plan.metrics.deletion_vectors += 1,
            _ => plan.metrics.position_delete_files += 1,
        }
    }
    plan.equality_deletes.sort_by(|a, b| {
        a.entry
            .data_file
            .file_path
            .cmp(&b.entry.data_file.file_path)
    });
    Ok(plan)
}

/// What delete planning made of one data file.
enum Planned {
    /// To scan, with its deletes.
    File(PlannedFile),
    /// Every row deleted by position: never scanned.
    FullyDeleted(FileScanTask),
}

/// The cache key of the planned position deletes of the data file `data` lists: the
/// data file's read location and its path as stored (a position delete file's rows name
/// the stored path, so two tables reading the same files under differently spelled
/// paths must not share an entry), and each delete file's read location (with a
/// deletion vector's offset and length), each with the version of the file its entry
/// lists (a file re-added at the same path is another version, see
/// [`crate::scan::file_version`]).
///
/// Errors: a location the table's FileIO cannot remap.
fn planned_key(
    file_io: &crate::io::FileIO,
    data: &ManifestEntry,
    deletes: &[Arc<ManifestEntry>],
) -> Result<(String, Vec<String>)> {
    let keys = deletes
        .iter()
        .map(|d| {
            let file = &d.data_file;
            Ok(format!(
                "{}@{:?}+{:?}",
                FileVersion::of(d).key(&file_io.remap(&file.file_path)?),
                file.content_offset,
                file.content_size_in_bytes
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let data_path = &data.data_file.file_path;
    let read = FileVersion::of(data).key(&file_io.remap(data_path)?);
    Ok((format!("{read} (stored as {data_path})"), keys))
}

/// A loader for the equality delete files of a scan (shared by all its partitions).
pub(crate) fn equality_loader(table: &Table) -> Arc<EqualityDeleteLoader> {
    Arc::new(EqualityDeleteLoader::new(table.file_io().clone()))
}
