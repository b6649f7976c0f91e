//! `rewrite_position_delete_files`: compaction of position delete files (Spark's
//! procedure; Java's `RewritePositionDeleteFilesSparkAction`,
//! `BinPackRewritePositionDeletePlanner` and `RewritePositionDeletesCommitManager`), and
//! its format-version 3 form, deletion-vector maintenance.
//!
//! **Selection.** The live delete files of the current snapshot whose partition may hold
//! rows matching the `where` filter (the filter projected onto each partition spec, as
//! Java's `baseTableFilter`). Format version 2: a Parquet position delete file is a
//! candidate when it is smaller than `min-file-size-bytes` (default 75 % of the target),
//! larger than `max-file-size-bytes` (180 %), or scoped to one data file that is no
//! longer live (a dangling delete, known from the metadata alone); with `rewrite-all`
//! every file is. Candidates are grouped by partition (spec id and tuple), in groups of
//! at most `max-file-group-size-bytes`; a group is rewritten when it has at least two
//! files and `min-input-files` of them (default 5), or two files and more bytes than the
//! target, or more than `max-file-group-size-bytes`, or a dangling file, or `rewrite-all`
//! is set. The target is `target-file-size-bytes`, else the table's
//! `write.delete.target-file-size-bytes` (default 64 MiB).
//!
//! **Rewrite (v2).** Each group's files are read; a position survives when its data file
//! is live in the current snapshot with a data sequence number not above the delete
//! file's (spec: "Scan Planning"), so dangling positions are dropped. The survivors are
//! written as partition-scoped position delete files (sorted by `file_path`, `pos`),
//! rolled at the target size; a group left with nothing is only dropped.
//!
//! **Format version 3** (spec: "Deletion Vectors"): a data file has at most one deletion
//! vector already, so the work is: drop every deletion vector whose data file is no
//! longer live, and fold every Parquet position delete file left from before an upgrade
//! to v3 into deletion vectors: the positions of each live data file without a deletion
//! vector become its new vector (one Puffin file per partition); positions of a data file
//! that has a vector are dropped, since its vector replaces them for readers. The size
//! options do not apply (they are still checked).
//!
//! **Commit.** Everything commits in one [`RewriteFiles`] (`replace` snapshot) that drops
//! the rewritten files and adds the new ones, validated against what was committed since
//! the start: a rewritten file a concurrent commit removed fails the rewrite
//! ([`ErrorKind::ValidationFailed`]), and so does, in v3, a delete file added
//! concurrently for a data file that gets a new deletion vector (two vectors for one
//! file). A concurrent append or a concurrent v2 delete file is kept by the retry. On
//! failure the files written are removed and the table is unchanged.
//!
//! Result (Spark's columns): files dropped, files added, and their bytes — a Parquet
//! file's `file_size_in_bytes`, a deletion vector's blob length
//! (`content_size_in_bytes`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use roaring::RoaringTreemap;

use super::options::{option_count, option_flag as flag, option_number as num};
use crate::catalog::{Catalog, TableIdent};
use crate::datafusion::insert::data_location;
use crate::delete::{is_deletion_vector, referenced_data_file, PositionDeleteLoader};
use crate::error::{Error, ErrorKind, Result};
use crate::expr::Predicate;
use crate::scan::TableScan;
use crate::spec::{DataContentType, DataFile, FormatVersion, ManifestEntry};
use crate::table::Table;
use crate::transaction::{check_writable, expired_base, RewriteFiles, Transaction};
use crate::write::bounds::literal_to_bytes;
use crate::write::{write_deletion_vectors, write_position_delete_file, DataFileWriterConfig};

/// Table property: target size of delete files, in bytes.
pub const DELETE_TARGET_FILE_SIZE_BYTES: &str =
    crate::table_properties::DELETE_TARGET_FILE_SIZE_BYTES.name;
/// Default of [`DELETE_TARGET_FILE_SIZE_BYTES`]: 64 MiB.
pub const DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT: u64 = 64 * 1024 * 1024;

/// The options of `rewrite_position_delete_files` (Spark's names).
#[derive(Debug, Clone, PartialEq)]
pub struct RewritePositionDeleteFilesOptions {
    /// Only delete files whose partition may hold rows matching this filter.
    pub filter: Option<Predicate>,
    /// `target-file-size-bytes` (default: table `write.delete.target-file-size-bytes`).
    pub target_file_size_bytes: Option<u64>,
    /// `min-file-size-bytes` (default 75 % of the target).
    pub min_file_size_bytes: Option<u64>,
    /// `max-file-size-bytes` (default 180 % of the target).
    pub max_file_size_bytes: Option<u64>,
    /// `min-input-files` (default 5).
    pub min_input_files: usize,
    /// `rewrite-all` (default false).
    pub rewrite_all: bool,
    /// `max-file-group-size-bytes` (default 100 GiB).
    pub max_file_group_size_bytes: u64,
}

impl Default for RewritePositionDeleteFilesOptions {
    fn default() -> Self {
        Self {
            filter: None,
            target_file_size_bytes: None,
            min_file_size_bytes: None,
            max_file_size_bytes: None,
            min_input_files: 5,
            rewrite_all: false,
            max_file_group_size_bytes: 100 * 1024 * 1024 * 1024,
        }
    }
}

impl RewritePositionDeleteFilesOptions {
    /// Set options from Spark's `options` map: the size options above,
    /// `max-concurrent-file-group-rewrites`, `partial-progress.max-commits` (numbers,
    /// accepted; groups are rewritten one after another and commit together),
    /// `rewrite-job-order` (`none`, `bytes-asc`, `bytes-desc`, `files-asc`,
    /// `files-desc`; accepted) and `partial-progress.enabled` (only `false`).
    ///
    /// Errors: an unknown option or a value that does not parse, naming it
    /// ([`ErrorKind::InvalidArgument`]); `partial-progress.enabled` = `true`
    /// ([`ErrorKind::Unsupported`]).
    pub fn with_options(mut self, options: &[(String, String)]) -> Result<Self> {
        for (k, v) in options {
            match k.as_str() {
                "target-file-size-bytes" => {
                    let t: u64 = num(k, v)?;
                    if t == 0 {
                        return Err(Error::invalid_argument(
                            "option 'target-file-size-bytes' must be positive",
                        ));
                    }
                    self.target_file_size_bytes = Some(t);
                }
                "min-file-size-bytes" => self.min_file_size_bytes = Some(num(k, v)?),
                "max-file-size-bytes" => self.max_file_size_bytes = Some(num(k, v)?),
                "min-input-files" => self.min_input_files = num(k, v)?,
                "rewrite-all" => self.rewrite_all = flag(k, v)?,
                "max-file-group-size-bytes" => self.max_file_group_size_bytes = num(k, v)?,
                "max-concurrent-file-group-rewrites" | "partial-progress.max-commits" => {
                    option_count(k, v)?;
                }
                "rewrite-job-order" => {
                    let order = v.trim().to_ascii_lowercase();
                    if !["none", "bytes-asc", "bytes-desc", "files-asc", "files-desc"]
                        .contains(&order.as_str())
                    {
                        return Err(Error::invalid_argument(format!(
                            "option 'rewrite-job-order' is '{v}' (expected none, bytes-asc, \
                             bytes-desc, files-asc or files-desc)"
                        )));
                    }
                }
                "partial-progress.enabled" => {
                    if flag(k, v)? {
                        return Err(Error::unsupported(
                            "rewrite_position_delete_files option 'partial-progress.enabled' = \
                             true",
                        ));
                    }
                }
                other => {
                    return Err(Error::invalid_argument(format!(
                        "unknown rewrite_position_delete_files option '{other}' (known: \
                         target-file-size-bytes, min-file-size-bytes, max-file-size-bytes, \
                         min-input-files, rewrite-all, max-file-group-size-bytes, \
                         max-concurrent-file-group-rewrites, partial-progress.enabled, \
                         partial-progress.max-commits, rewrite-job-order)"
                    )))
                }
            }
        }
        if self.min_input_files == 0 {
            return Err(Error::invalid_argument(
                "option 'min-input-files' must be at least 1",
            ));
        }
        if self.max_file_group_size_bytes == 0 {
            return Err(Error::invalid_argument(
                "option 'max-file-group-size-bytes' must be at least 1",
            ));
        }
        Ok(self)
    }
}

/// Spark's result row of `rewrite_position_delete_files`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewritePositionDeleteFilesResult {
    /// Delete files (deletion vectors counted one by one) dropped.
    pub rewritten_delete_files_count: usize,
    /// Delete files (deletion vectors) written in their place.
    pub added_delete_files_count: usize,
    /// Bytes of the dropped files.
    pub rewritten_bytes_count: u64,
    /// Bytes of the added files.
    pub added_bytes_count: u64,
}

/// The live data files of the current snapshot, by stored location. A file referenced
/// by more than one live manifest entry (added again, e.g. by `add_files` with
/// `check_duplicate_files => false`) has their lowest and highest data sequence numbers:
/// a position delete applies to each entry whose number is not above its own.
struct LiveFile {
    spec_id: i32,
    data_sequence_number: i64,
    max_data_sequence_number: i64,
    file: DataFile,
}

/// A partition: spec id and the partition tuple's single-value serialization.
type PartitionOf = (i32, Vec<Option<Vec<u8>>>);

fn partition_of(spec_id: i32, file: &DataFile) -> PartitionOf {
    (
        spec_id,
        file.partition
            .iter()
            .map(|v| v.as_ref().map(literal_to_bytes))
            .collect(),
    )
}

/// The bytes a delete file counts for: a deletion vector's blob, else the whole file.
fn counted_bytes(file: &DataFile) -> u64 {
    let n = if is_deletion_vector(file) {
        file.content_size_in_bytes
            .unwrap_or(file.file_size_in_bytes)
    } else {
        file.file_size_in_bytes
    };
    u64::try_from(n).unwrap_or(0)
}

/// What a rewrite drops and adds, before the commit.
#[derive(Default)]
struct Work {
    removed: Vec<DataFile>,
    added: Vec<(i32, DataFile)>,
    validated: Vec<(i32, DataFile)>,
}

/// Compact the position delete files of table `ident` per `options` (see the module
/// docs). Returns the committed table (the loaded one when nothing needed a rewrite:
/// no snapshot, a v1 table, nothing selected) and Spark's counts.
///
/// Errors: bad options (naming them), unreadable delete files (naming them), write
/// errors, [`ErrorKind::ValidationFailed`] when a concurrent commit removed a file being
/// rewritten or (v3) added a delete for a data file getting a new deletion vector — in
/// every error case the files written are removed and the table is unchanged.
pub async fn rewrite_position_delete_files(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    options: &RewritePositionDeleteFilesOptions,
) -> Result<(Table, RewritePositionDeleteFilesResult)> {
    let table = catalog.load_table(ident).await?;
    check_writable(&table)?;
    let m = table.metadata();
    let Some(snapshot) = m.current_snapshot().cloned() else {
        return Ok((table, RewritePositionDeleteFilesResult::default()));
    };
    if m.format_version == FormatVersion::V1 {
        // v1 tables have no delete files
        return Ok((table, RewritePositionDeleteFilesResult::default()));
    }
    let all = TableScan::new(table.clone(), Some(snapshot.clone()))
        .plan_files()
        .await?;
    let selected = match &options.filter {
        None => all.delete_entries.clone(),
        Some(f) => {
            TableScan::new(table.clone(), Some(snapshot.clone()))
                .with_filter(f.clone())
                .plan_files()
                .await?
                .delete_entries
        }
    };
    let mut live: HashMap<String, LiveFile> = HashMap::new();
    for t in &all.tasks {
        let seq = t.entry.data_sequence_number;
        live.entry(t.entry.data_file.file_path.clone())
            .and_modify(|f| {
                f.data_sequence_number = f.data_sequence_number.min(seq);
                f.max_data_sequence_number = f.max_data_sequence_number.max(seq);
            })
            .or_insert_with(|| LiveFile {
                spec_id: t.entry.spec_id,
                data_sequence_number: seq,
                max_data_sequence_number: seq,
                file: t.entry.data_file.clone(),
            });
    }

    crate::failpoint::pause("rewrite-planned");
    let mut written: Vec<String> = vec![];
    let outcome = async {
        let work = if m.format_version >= FormatVersion::V3 {
            plan_v3(&table, &live, &all.delete_entries, &selected, &mut written).await
        } else {
            plan_v2(&table, &live, &selected, options, &mut written).await
        };
        let work = match work {
            Ok(w) => w,
            // a read that failed because the snapshot was expired meanwhile
            Err(e) => {
                let base = Some(snapshot.snapshot_id);
                return Err(
                    expired_base::explain(catalog.as_ref(), ident, "rewrite", base, e).await,
                );
            }
        };
        if work.removed.is_empty() {
            return Ok(None);
        }
        let mut rewrite = RewriteFiles::new(Some(snapshot.snapshot_id));
        for f in &work.removed {
            rewrite = rewrite.delete_delete_file(f);
        }
        let mut by_spec: BTreeMap<i32, Vec<DataFile>> = BTreeMap::new();
        for (spec_id, f) in &work.added {
            by_spec.entry(*spec_id).or_default().push(f.clone());
        }
        for (spec_id, files) in by_spec {
            rewrite = rewrite.add_delete_files(spec_id, files)?;
        }
        for (spec_id, f) in &work.validated {
            rewrite = rewrite.validate_data_file(*spec_id, f.clone());
        }
        let committed = Transaction::new(Arc::clone(catalog), ident.clone(), table.clone())
            .add_action(rewrite)
            .commit()
            .await?;
        Ok::<_, Error>(Some((committed, work)))
    }
    .await;
    match outcome {
        Ok(None) => Ok((table, RewritePositionDeleteFilesResult::default())),
        Ok(Some((committed, work))) => Ok((
            committed,
            RewritePositionDeleteFilesResult {
                rewritten_delete_files_count: work.removed.len(),
                added_delete_files_count: work.added.len(),
                rewritten_bytes_count: work.removed.iter().map(counted_bytes).sum(),
                added_bytes_count: work.added.iter().map(|(_, f)| counted_bytes(f)).sum(),
            },
        )),
        Err(e) => {
            if e.kind() != ErrorKind::CommitStateUnknown {
                for f in &written {
                    let _ = table.file_io().delete(f).await;
                }
            }
            Err(e.context(format!("rewrite_position_delete_files on '{ident}'")))
        }
    }
}

/// Whether position deletes of `entry` apply to the live data file at `path` (to at least
/// one manifest entry of it).
fn applies(live: &HashMap<String, LiveFile>, path: &str, entry: &ManifestEntry) -> bool {
    live.get(path)
        .is_some_and(|f| f.data_sequence_number <= entry.data_sequence_number)
}

/// Position deletes of delete file `entry` for the data file at `path`, to be written
/// into a new delete file (whose data sequence number is the rewrite's, so it applies to
/// every entry of the data file): refused when the old one applies to only some entries
/// of it — the rewrite would delete rows of the others.
///
/// Errors: [`ErrorKind::Unsupported`] naming both files.
fn check_rewritable(
    live: &HashMap<String, LiveFile>,
    path: &str,
    entry: &ManifestEntry,
) -> Result<()> {
    match live.get(path) {
        Some(f) if f.max_data_sequence_number > entry.data_sequence_number => {
            Err(Error::unsupported(format!(
                "rewriting position delete file '{}': its deletes of data file '{path}' \
                 apply to only some of the live manifest entries of that file (it was \
                 added again after the deletes); rewrite the table's data files first \
                 (rewrite_data_files)",
                entry.data_file.file_path
            )))
        }
        _ => Ok(()),
    }
}

/// v2: select, group and rewrite Parquet position delete files.
async fn plan_v2(
    table: &Table,
    live: &HashMap<String, LiveFile>,
    selected: &[Arc<ManifestEntry>],
    options: &RewritePositionDeleteFilesOptions,
    written: &mut Vec<String>,
) -> Result<Work> {
    let m = table.metadata();
    let mut config = DataFileWriterConfig::from_properties(&m.properties)?;
    crate::write::check_file_format(
        &m.properties,
        crate::table_properties::DELETE_DEFAULT_FILE_FORMAT,
    )?;
    let target = match options.target_file_size_bytes {
        Some(t) => t,
        None => crate::table_properties::DELETE_TARGET_FILE_SIZE_BYTES
            .int(&m.properties)?
            .map_or(DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT, |n| {
                u64::try_from(n).unwrap_or(DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT)
            }),
    };
    config.target_file_size_bytes = target;
    let min_size = options.min_file_size_bytes.unwrap_or(target / 4 * 3);
    let max_size = options
        .max_file_size_bytes
        .unwrap_or(target.saturating_mul(18) / 10);
    crate::maintenance::file_rewrite_sizes::FileRewriteSizes {
        target,
        min: min_size,
        max: max_size,
    }
    .check()?;
    let size = |e: &ManifestEntry| u64::try_from(e.data_file.file_size_in_bytes).unwrap_or(0);

    // candidates by partition: (entry, dangling)
    let mut by_partition: BTreeMap<PartitionOf, Vec<(Arc<ManifestEntry>, bool)>> = BTreeMap::new();
    for e in selected.iter().filter(|e| {
        e.data_file.content == DataContentType::PositionDeletes && !is_deletion_vector(&e.data_file)
    }) {
        let dangling = referenced_data_file(&e.data_file).is_some_and(|p| !applies(live, &p, e));
        let s = size(e);
        if options.rewrite_all || s < min_size || s > max_size || dangling {
            by_partition
                .entry(partition_of(e.spec_id, &e.data_file))
                .or_default()
                .push((Arc::clone(e), dangling));
        }
    }
    let mut groups: Vec<Vec<(Arc<ManifestEntry>, bool)>> = vec![];
    for (_, files) in by_partition {
        let mut group = vec![];
        let mut bytes = 0u64;
        for c in files {
            let s = size(&c.0);
            if !group.is_empty() && bytes + s > options.max_file_group_size_bytes {
                groups.push(std::mem::take(&mut group));
                bytes = 0;
            }
            bytes += s;
            group.push(c);
        }
        if !group.is_empty() {
            groups.push(group);
        }
    }
    groups.retain(|g| {
        let n = g.len();
        let bytes: u64 = g.iter().map(|c| size(&c.0)).sum();
        options.rewrite_all
            || (n > 1 && n >= options.min_input_files)
            || (n > 1 && bytes > target)
            || bytes > options.max_file_group_size_bytes
            || g.iter().any(|c| c.1)
    });

    let loader = PositionDeleteLoader::new(table.file_io().clone());
    let mut work = Work::default();
    for group in groups {
        let mut merged: BTreeMap<String, RoaringTreemap> = BTreeMap::new();
        let mut input_rows = 0u64;
        let mut input_bytes = 0u64;
        for (e, _) in &group {
            let file = loader.load_position_delete_file(e).await?;
            input_rows += file.rows;
            input_bytes += size(e);
            for (path, positions) in &file.by_data_file {
                if applies(live, path, e) {
                    check_rewritable(live, path, e)?;
                    *merged.entry(path.clone()).or_default() |= positions;
                }
            }
        }
        let first = &group[0].0;
        work.removed
            .extend(group.iter().map(|(e, _)| e.data_file.clone()));
        let rows: u64 = merged.values().map(|p| p.len()).sum();
        if rows == 0 {
            continue;
        }
        // output files at about the target size, by the input's bytes per row
        let out_bytes = input_bytes.saturating_mul(rows) / input_rows.max(1);
        let outputs = out_bytes.div_ceil(target).max(1);
        let per_file = rows.div_ceil(outputs);
        let spec = m.partition_spec_by_id(first.spec_id).ok_or_else(|| {
            Error::invalid_data(format!("the table has no partition spec {}", first.spec_id))
        })?;
        let mut chunk: Vec<(String, RoaringTreemap)> = vec![];
        let mut chunk_rows = 0u64;
        let mut chunks = vec![];
        for (path, positions) in merged {
            chunk_rows += positions.len();
            chunk.push((path, positions));
            if chunk_rows >= per_file {
                chunks.push(std::mem::take(&mut chunk));
                chunk_rows = 0;
            }
        }
        if !chunk.is_empty() {
            chunks.push(chunk);
        }
        for chunk in chunks {
            let file = write_position_delete_file(
                table.file_io(),
                &data_location(table),
                spec,
                first.data_file.partition.clone(),
                chunk,
                &config,
            )
            .await?;
            written.push(file.file_path.clone());
            work.added.push((first.spec_id, file));
        }
    }
    Ok(work)
}

/// v3: drop dangling deletion vectors and fold Parquet position delete files into
/// deletion vectors.
async fn plan_v3(
    table: &Table,
    live: &HashMap<String, LiveFile>,
    all_deletes: &[Arc<ManifestEntry>],
    selected: &[Arc<ManifestEntry>],
    written: &mut Vec<String>,
) -> Result<Work> {
    let m = table.metadata();
    // data files with a (non-dangling) deletion vector: it replaces their position deletes
    let with_vector: HashSet<String> = all_deletes
        .iter()
        .filter(|e| is_deletion_vector(&e.data_file))
        .filter_map(|e| referenced_data_file(&e.data_file).filter(|p| applies(live, p, e)))
        .collect();
    let mut work = Work::default();
    let loader = PositionDeleteLoader::new(table.file_io().clone());
    let mut folded: BTreeMap<String, RoaringTreemap> = BTreeMap::new();
    for e in selected
        .iter()
        .filter(|e| e.data_file.content == DataContentType::PositionDeletes)
    {
        if is_deletion_vector(&e.data_file) {
            let keep = referenced_data_file(&e.data_file).is_some_and(|p| applies(live, &p, e));
            if !keep {
                work.removed.push(e.data_file.clone());
            }
            continue;
        }
        let file = loader.load_position_delete_file(e).await?;
        for (path, positions) in &file.by_data_file {
            if applies(live, path, e) && !with_vector.contains(path) {
                check_rewritable(live, path, e)?;
                *folded.entry(path.clone()).or_default() |= positions;
            }
        }
        work.removed.push(e.data_file.clone());
    }
    // one Puffin file per partition
    let mut by_partition: BTreeMap<PartitionOf, Vec<(String, RoaringTreemap)>> = BTreeMap::new();
    for (path, positions) in folded {
        if positions.is_empty() {
            continue;
        }
        let Some(f) = live.get(&path) else { continue };
        by_partition
            .entry(partition_of(f.spec_id, &f.file))
            .or_default()
            .push((path, positions));
    }
    for ((spec_id, _), vectors) in by_partition {
        let spec = m.partition_spec_by_id(spec_id).ok_or_else(|| {
            Error::invalid_data(format!("the table has no partition spec {spec_id}"))
        })?;
        let partition = vectors
            .first()
            .and_then(|(p, _)| live.get(p))
            .map(|f| f.file.partition.clone())
            .unwrap_or_default();
        for (path, _) in &vectors {
            if let Some(f) = live.get(path) {
                work.validated.push((f.spec_id, f.file.clone()));
            }
        }
        let files = write_deletion_vectors(
            table.file_io(),
            &data_location(table),
            spec,
            partition,
            vectors,
        )
        .await?;
        if let Some(f) = files.first() {
            written.push(f.file_path.clone());
        }
        work.added.extend(files.into_iter().map(|f| (spec_id, f)));
    }
    Ok(work)
}
