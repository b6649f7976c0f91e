//! `rewrite_data_files`: compaction (Spark's procedure and Java's
//! `RewriteDataFilesSparkAction` with the `binpack` strategy, `SizeBasedFileRewritePlanner`).
//!
//! **Selection.** The current snapshot's data files are planned with the `where` filter
//! (files that may hold matching rows; every row of a selected file is rewritten). A file
//! is a candidate when it is smaller than `min-file-size-bytes` (default 75 % of the
//! target), larger than `max-file-size-bytes` (180 %), has at least
//! `delete-file-threshold` delete files applying to it, has at least
//! `delete-ratio-threshold` (default 0.3) of its rows deleted by file-scoped deletes
//! (deletion vectors, position delete files of that file), or has every row deleted; with
//! `rewrite-all` every file is. A file referenced by more than one live manifest entry
//! (added again, e.g. by `add_files` with `check_duplicate_files => false`) is read once
//! per entry, as every scan returns its rows, and is one candidate: the commit removes it
//! by location, every entry at once (Java's `ManifestFilterManager`), and fails when an
//! entry was not read (see [`RewriteFiles`]). Candidates are grouped by partition (spec
//! and tuple; the files of older specs all in one group, as Java groups them), in groups
//! of at most `max-file-group-size-bytes`; a group is rewritten when it has at least two
//! files and `min-input-files` of them (default 5; a file counts once per entry, as Java
//! counts tasks), or two files and more bytes than the target, or more bytes than
//! `max-file-size-bytes` (one oversized file is enough: Java's `tooMuchContent`), or a file
//! with too many deletes or too high a delete ratio (or no row left), or `rewrite-all` is set (see
//! `FileRewriteSizes`). The target is `target-file-size-bytes`, else the table's
//! `write.target-file-size-bytes`.
//!
//! **Rewrite.** Each group is read through the table's row-level scan (its deletes
//! applied: position deletes, deletion vectors, equality deletes) and written by the
//! table's data file writer under the output partition spec. A group whose files are all
//! of that spec (one partition) becomes Java's `expectedOutputFiles` files: its rows are
//! cut into splits of its input bytes over that count (at least the target; see
//! `InputSplits`), each split written as one file that rolls only past Java's
//! `writeMaxFileSize` (the target plus half the way to the maximum), as Spark's bin-pack
//! rewrite writes each read split as a file; so a remainder is not left as a sliver and
//! a second call finds nothing to rewrite. Rows of older specs fan out to partitions and
//! roll at the target. All groups commit together in one [`RewriteFiles`] (`replace`
//! snapshot) that also drops the delete files no remaining data file needs; it is
//! validated against what was committed since (a concurrent append is kept, a
//! concurrent delete touching a rewritten file fails the rewrite, which then removes
//! the files it wrote). With `partial-progress.enabled` the groups commit in up to
//! `partial-progress.max-commits` commits, and a failing group or commit leaves the
//! others in place (see [`RewriteDataFilesOptions::partial_progress_enabled`] and
//! `failed_data_files_count`).
//!
//! On format version 3 every rewritten row keeps its `_row_id` and
//! `_last_updated_sequence_number` (stored or inherited, as read): the new files store
//! both (spec: "Row Lineage": a compaction changes no row).
//!
//! **Refused** with [`ErrorKind::Unsupported`](crate::ErrorKind): the `sort` strategy on a
//! table without a sort order (or with a term DataFusion cannot sort by here).
//!
//! **`sort`** selects and groups files as `binpack` does and writes each group's rows
//! sorted by [`RewriteDataFilesOptions::sort_order`] when given (Spark's `sort_order`
//! argument), else by the table's default sort order; the table's sort order is not
//! changed.
//!
//! **Z-order** (Spark's `sort_order => 'zorder(a, b)'`, [`RewriteStrategy::ZOrder`])
//! selects and groups files as `binpack` does and writes each group's rows sorted by the
//! z-value of the columns ([`crate::maintenance::zorder`]; options
//! `var-length-contribution` and `max-output-size`, as Java's
//! `SparkZOrderFileRewriteRunner`); the files record sort order 0, as no sort order of the
//! table describes their order.

mod rewrite_options;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use datafusion::physical_expr::LexOrdering;
use datafusion::prelude::SessionContext;

use super::delete_planning::{plan_deletes, DeletePlan, PlannedFile};
use super::insert::IcebergDataSink;
pub use super::partition_stats_file::{
    partition_stats_fields, partition_stats_rows, StatsComputation,
};
use super::rewrite_group::{rewrite_group, InputSplits, RowOrder};
use super::table_provider::IcebergTableProvider;
use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::maintenance::file_rewrite_sizes::FileRewriteSizes;
use crate::maintenance::zorder;
use crate::spec::DataFile;
use crate::table::Table;
use crate::transaction::{check_writable, RewriteFiles, Transaction};
use crate::write::DataFileWriterConfig;
pub use rewrite_options::{RewriteDataFilesOptions, RewriteStrategy};

/// Spark's result row of `rewrite_data_files`, and the failures behind
/// `failed_data_files_count`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewriteDataFilesResult {
    /// Data files replaced.
    pub rewritten_data_files_count: usize,
    /// Data files written in their place.
    pub added_data_files_count: usize,
    /// Bytes of the replaced data files.
    pub rewritten_bytes_count: u64,
    /// Files of groups whose rewrite or commit failed under `partial-progress.enabled`
    /// (otherwise 0: the groups commit together or not at all).
    pub failed_data_files_count: usize,
    /// Delete files (and deletion vectors) the rewrite's commits removed: those whose
    /// every data file was rewritten and dangling ones (Spark 3.5 / Iceberg ≥ 1.5's
    /// `removed_delete_files_count`, the commits' `removed-delete-files` summary).
    pub removed_delete_files_count: usize,
    /// The error of each failed group or commit (partial progress only).
    pub failures: Vec<String>,
}

/// A partition: spec id and the partition tuple's single-value serialization.
type PartitionOf = (i32, Vec<Option<Vec<u8>>>);

/// One candidate data file (location) and the live manifest entries of it the scan
/// planned — usually one; more when the file was added again (`add_files` with
/// `check_duplicate_files => false`, Java's `AppendFiles` of the same file twice). Each
/// entry is read (its rows once per entry, as a scan returns them) and the commit
/// removes the file by location, every entry at once (Java's `ManifestFilterManager`),
/// so the entries of one location are never split between groups.
struct Candidate {
    file: DataFile,
    entries: Vec<CandidateEntry>,
}

/// One manifest entry of a candidate file.
struct CandidateEntry {
    spec_id: i32,
    /// Rows left after deletes (`None`: every row deleted; nothing to read).
    planned: Option<PlannedFile>,
    too_many_deletes: bool,
}

impl Candidate {
    /// Whether an entry has at least `delete-file-threshold` deletes, or none left.
    fn too_many_deletes(&self) -> bool {
        self.entries.iter().any(|e| e.too_many_deletes)
    }

    /// Bytes read: the file's size once per entry.
    fn bytes(&self) -> u64 {
        let size = u64::try_from(self.file.file_size_in_bytes).unwrap_or(0);
        size.saturating_mul(self.entries.len() as u64)
    }
}

/// Compact the data files of table `ident` per `options` (see the module docs), reading
/// and writing in `ctx`. Returns the committed table (the loaded one when nothing needed
/// a rewrite) and Spark's counts.
///
/// Errors: unsupported format versions or strategies, bad options (naming them), read
/// and write errors, [`ErrorKind::ValidationFailed`] when a concurrent commit deleted
/// rows of or removed a file being rewritten — in every error case the files written
/// are removed and the table is unchanged.
pub async fn rewrite_data_files(
    ctx: &SessionContext,
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    options: &RewriteDataFilesOptions,
) -> Result<(Table, RewriteDataFilesResult)> {
    let table = catalog.load_table(ident).await?;
    check_writable(&table)?;
    let Some(snapshot) = table.metadata().current_snapshot().cloned() else {
        return Ok((table, RewriteDataFilesResult::default()));
    };
    let m = table.metadata();
    let mut config = DataFileWriterConfig::for_table(m)?;
    if let Some(t) = options.target_file_size_bytes {
        if t == 0 {
            return Err(Error::invalid_argument(
                "option 'target-file-size-bytes' must be positive",
            ));
        }
        config.target_file_size_bytes = t;
    }
    let sizes = FileRewriteSizes::new(
        config.target_file_size_bytes,
        options.min_file_size_bytes,
        options.max_file_size_bytes,
    );
    sizes.check()?;

    let provider = IcebergTableProvider::try_new(table.clone())?;
    // the order the rows are written in, and the table's sort order id the files record
    // (Java's `SparkShufflingFileRewriteRunner`: the table's order equal to the job's,
    // else 0, unsorted)
    if options.strategy != RewriteStrategy::ZOrder {
        for (set, name) in [
            (
                options.var_length_contribution.is_some(),
                "var-length-contribution",
            ),
            (options.max_output_size.is_some(), "max-output-size"),
        ] {
            if set {
                return Err(Error::invalid_argument(format!(
                    "option '{name}' applies to z-order rewrites only (sort_order => \
                     'zorder(…)')"
                )));
            }
        }
    }
    let ordering: Option<RowOrder> = match options.strategy {
        RewriteStrategy::BinPack => None,
        RewriteStrategy::ZOrder => Some(zorder(&table, &provider, options)?),
        RewriteStrategy::Sort => {
            let (order, order_id) = match &options.sort_order {
                Some(order) => (
                    Some(order),
                    m.sort_orders
                        .iter()
                        .find(|o| o.fields == order.fields)
                        .map_or(0, |o| o.order_id),
                ),
                None => (
                    m.sort_orders
                        .iter()
                        .find(|o| o.order_id == m.default_sort_order_id),
                    m.default_sort_order_id,
                ),
            };
            let Some(order) = order.filter(|o| !o.fields.is_empty()) else {
                return Err(Error::invalid_argument(format!(
                    "rewrite_data_files strategy 'sort' on '{ident}': the table has no sort \
                     order (give sort_order => 'column [ASC|DESC] [NULLS FIRST|LAST], …' or \
                     set one with ALTER TABLE … WRITE ORDERED BY)"
                )));
            };
            let ordering =
                IcebergDataSink::sort_requirement_of(&table, order, provider.arrow_schema())
                    .map_err(|e| {
                        e.context(format!("rewrite_data_files strategy 'sort' on '{ident}'"))
                    })?
                    .map(LexOrdering::from)
                    .ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "rewrite_data_files strategy 'sort' on '{ident}': the sort order \
                             has no term to sort by"
                        ))
                    })?;
            Some(RowOrder::Sort(
                ordering,
                i32::try_from(order_id).unwrap_or(0),
            ))
        }
    };
    let mut scan = provider.table_scan();
    if let Some(f) = &options.filter {
        scan = scan.with_filter(f.clone());
    }
    let plan = scan.plan_files().await?;
    let tasks = plan.tasks.clone();
    let deletes = plan_deletes(&table, plan.tasks, plan.delete_entries, None).await?;
    // each task's planned file, matched by its manifest entry (a data file referenced by
    // two live entries is two tasks, read twice, as Java plans one task per entry)
    let mut planned: HashMap<String, Vec<PlannedFile>> = HashMap::new();
    for f in &deletes.files {
        planned
            .entry(f.task.data_file().file_path.clone())
            .or_default()
            .push(f.clone());
    }

    // candidates by partition: one per data file location, with every planned entry of
    // it — the commit removes a file by location, so all its entries are rewritten
    // together or not at all (see `Candidate`)
    let current_spec = options.output_spec_id.unwrap_or(m.default_spec_id);
    if m.partition_spec_by_id(current_spec).is_none() {
        let mut ids: Vec<String> = m
            .partition_specs
            .iter()
            .map(|s| s.spec_id.to_string())
            .collect();
        ids.sort();
        return Err(Error::invalid_argument(format!(
            "option 'output-spec-id' is {current_spec}, not a partition spec of table '{ident}' \
             (its specs: {})",
            ids.join(", ")
        )));
    }
    let mut by_path: BTreeMap<String, (PartitionOf, Candidate)> = BTreeMap::new();
    let mut order: Vec<String> = vec![];
    for task in tasks {
        let entry = &task.entry;
        let file = entry.data_file.clone();
        let planned = planned.get_mut(&file.file_path).and_then(|same_path| {
            let at = same_path
                .iter()
                .position(|p| Arc::ptr_eq(&p.task.entry, entry))?;
            Some(same_path.remove(at))
        });
        let too_many_deletes = match &planned {
            None => true,
            Some(p) => too_many_deletes(p, options),
        };
        let read = CandidateEntry {
            spec_id: entry.spec_id,
            planned,
            too_many_deletes,
        };
        if let Some((_, c)) = by_path.get_mut(&file.file_path) {
            c.entries.push(read);
            continue;
        }
        // Files of an older spec may hold rows of several partitions of the current
        // one: they form one group, as if unpartitioned, and the writer splits their
        // rows by the current spec (Java's `RewriteDataFilesSparkAction` groups them
        // under an empty partition, "to minimize new files made").
        let key = if entry.spec_id == current_spec {
            (
                entry.spec_id,
                file.partition
                    .iter()
                    .map(|v| v.as_ref().map(crate::write::bounds::literal_to_bytes))
                    .collect(),
            )
        } else {
            (current_spec, vec![])
        };
        order.push(file.file_path.clone());
        by_path.insert(
            file.file_path.clone(),
            (
                key,
                Candidate {
                    file,
                    entries: vec![read],
                },
            ),
        );
    }
    let mut by_partition: BTreeMap<PartitionOf, Vec<Candidate>> = BTreeMap::new();
    for path in order {
        let Some((key, c)) = by_path.remove(&path) else {
            continue;
        };
        let size = u64::try_from(c.file.file_size_in_bytes).unwrap_or(0);
        if options.rewrite_all || sizes.outside_desired_range(size) || c.too_many_deletes() {
            by_partition.entry(key).or_default().push(c);
        }
    }
    let mut groups: Vec<Vec<Candidate>> = vec![];
    for (_, files) in by_partition {
        let mut group: Vec<Candidate> = vec![];
        let mut size = 0u64;
        for c in files {
            let s = c.bytes();
            if !group.is_empty() && size + s > options.max_file_group_size_bytes {
                groups.push(std::mem::take(&mut group));
                size = 0;
            }
            size += s;
            group.push(c);
        }
        if !group.is_empty() {
            groups.push(group);
        }
    }
    groups.retain(|g| {
        // input files as Java counts them: one per task (manifest entry)
        let n: usize = g.iter().map(|c| c.entries.len()).sum();
        let size = bytes_of(g.iter());
        options.rewrite_all
            || sizes.worth_rewriting(n, size, options.min_input_files)
            || g.iter().any(Candidate::too_many_deletes)
    });
    if groups.is_empty() {
        return Ok((table, RewriteDataFilesResult::default()));
    }
    crate::failpoint::pause("rewrite-planned");

    let job = RewriteJob {
        ctx,
        catalog,
        ident,
        provider: &provider,
        deletes: &deletes,
        base_snapshot_id: snapshot.snapshot_id,
        ordering,
        config,
        sizes,
        output_spec_id: current_spec,
    };
    if !options.partial_progress_enabled {
        let all: Vec<&[Candidate]> = groups.iter().map(Vec::as_slice).collect();
        let (committed, written) = job
            .rewrite_and_commit(&table, &all)
            .await
            .map_err(|e| e.context(format!("rewrite_data_files on '{ident}'")))?;
        let rewritten: Vec<&Candidate> = groups.iter().flatten().collect();
        let removed_delete_files_count = removed_delete_files(&committed);
        return Ok((
            committed,
            RewriteDataFilesResult {
                rewritten_data_files_count: rewritten.len(),
                added_data_files_count: written,
                rewritten_bytes_count: bytes_of(rewritten.iter().copied()),
                removed_delete_files_count,
                ..Default::default()
            },
        ));
    }
    job.rewrite_with_partial_progress(table, &groups, options)
        .await
        .map_err(|e| e.context(format!("rewrite_data_files on '{ident}'")))
}

/// Whether the deletes applying to a planned data file make it a candidate on their own
/// (Java's `BinPackRewriteFilePlanner.tooManyDeletes` / `tooHighDeleteRatio`): at least
/// `delete-file-threshold` delete files apply to it (as the delete file index finds them),
/// or its file-scoped deletes — deletion vectors and position delete files whose
/// `referenced_data_file` (or equal `file_path` bounds) names it — delete at least
/// `delete-ratio-threshold` of its `record_count` rows (their `record_count`s summed,
/// capped at the file's; partition-scoped and equality deletes are not counted: how many
/// of their rows hit the file is unknown without reading them).
fn too_many_deletes(planned: &PlannedFile, options: &RewriteDataFilesOptions) -> bool {
    let count = planned.position_deletes.len() + planned.equality_deletes.len();
    if count >= options.delete_file_threshold {
        return true;
    }
    let records = planned.task.data_file().record_count;
    if count == 0 || records <= 0 {
        return false;
    }
    let scoped: i64 = planned
        .position_deletes
        .iter()
        .filter(|d| crate::delete::referenced_data_file(&d.data_file).is_some())
        .map(|d| d.data_file.record_count.max(0))
        .fold(0i64, i64::saturating_add);
    let deleted = scoped.min(records) as f64;
    deleted / records as f64 >= options.delete_ratio_threshold
}

/// The z-order of a rewrite: the scan columns of
/// [`RewriteDataFilesOptions::zorder_columns`] (see
/// [`crate::maintenance::zorder::zorder_field_ids`]) and the options.
///
/// Errors: those of `zorder_field_ids`, and a column whose type cannot be z-ordered,
/// naming it ([`ErrorKind::InvalidArgument`]).
fn zorder(
    table: &Table,
    provider: &IcebergTableProvider,
    options: &RewriteDataFilesOptions,
) -> Result<RowOrder> {
    let m = table.metadata();
    let ids = zorder::zorder_field_ids(m, &options.zorder_columns)?;
    let schema = m.current_schema();
    let scan = provider.arrow_schema();
    let mut columns = vec![];
    for id in ids {
        // the scan's first columns are the current schema's top-level columns, in order
        let at = schema.columns().iter().position(|c| c.id == id);
        let field = at.and_then(|i| scan.fields().get(i).map(|f| (i, f)));
        let Some((i, field)) = field else {
            return Err(Error::invalid_data(format!(
                "zorder column of field id {id} is not in the table's scan"
            )));
        };
        if !zorder::supports(field.data_type()) {
            return Err(Error::invalid_argument(format!(
                "zorder column '{}' of type {} cannot be z-ordered",
                field.name(),
                field.data_type()
            )));
        }
        columns.push(i);
    }
    let defaults = zorder::ZOrderOptions::default();
    Ok(RowOrder::ZOrder(
        columns,
        zorder::ZOrderOptions {
            var_length_contribution: options
                .var_length_contribution
                .unwrap_or(defaults.var_length_contribution),
            max_output_size: options.max_output_size.unwrap_or(defaults.max_output_size),
        },
    ))
}

/// The `removed-delete-files` of the snapshot `table`'s commit made current (0 when
/// absent).
fn removed_delete_files(table: &Table) -> usize {
    table
        .metadata()
        .current_snapshot()
        .and_then(|s| s.summary.get("removed-delete-files"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Bytes read to rewrite the files (a file once per entry, as Java sums its tasks).
fn bytes_of<'a>(files: impl Iterator<Item = &'a Candidate>) -> u64 {
    files.map(Candidate::bytes).sum()
}

/// What every file group of one `rewrite_data_files` call shares.
struct RewriteJob<'a> {
    ctx: &'a SessionContext,
    catalog: &'a Arc<dyn Catalog>,
    ident: &'a TableIdent,
    /// The table as loaded: the rows of every group are read from its current snapshot.
    provider: &'a IcebergTableProvider,
    deletes: &'a DeletePlan,
    /// The snapshot the groups were planned on: commits validate what was committed
    /// since.
    base_snapshot_id: i64,
    /// The order each group's rows are written in; `None`: arrival order (`binpack`,
    /// files record sort order 0).
    ordering: Option<RowOrder>,
    config: DataFileWriterConfig,
    sizes: FileRewriteSizes,
    /// The partition spec the new files are written and committed under.
    output_spec_id: i32,
}

impl RewriteJob<'_> {
    /// Rewrite one group: the files written, or the error and the files already written.
    async fn rewrite(
        &self,
        group: &[Candidate],
    ) -> std::result::Result<Vec<DataFile>, (Error, Vec<DataFile>)> {
        let files: Vec<PlannedFile> = group
            .iter()
            .flat_map(|c| &c.entries)
            .filter_map(|e| e.planned.clone())
            .collect();
        if files.is_empty() {
            // every row of these files is deleted: they are dropped, nothing is written
            return Ok(vec![]);
        }
        let group_plan = DeletePlan {
            files,
            equality_deletes: self.deletes.equality_deletes.clone(),
            ..Default::default()
        };
        // a group of one partition of the output spec is read in splits of about equal
        // input size, each written as one file rolling at Java's `writeMaxFileSize`
        // (`SparkBinPackFileRewriteRunner`: "each split becomes a new file"); rows of
        // older specs fan out to partitions and roll at the target
        let mut config = self.config.clone();
        let one_partition = group
            .iter()
            .all(|c| c.entries.iter().all(|e| e.spec_id == self.output_spec_id));
        let splits = if one_partition {
            config.target_file_size_bytes = self.sizes.write_max_file_size();
            let input_bytes = bytes_of(group.iter());
            Some(InputSplits::new(
                group.iter().map(|c| &c.file),
                self.sizes.input_split_size(input_bytes),
            ))
        } else {
            None
        };
        rewrite_group(
            self.ctx,
            self.provider,
            self.provider.table(),
            group_plan,
            self.ordering.clone(),
            config,
            self.output_spec_id,
            splits,
        )
        .await
    }

    /// Commit the replacement of `groups`' files by `written` as one [`RewriteFiles`] on
    /// `base` (validated against what was committed since the planned snapshot).
    async fn commit(
        &self,
        base: &Table,
        groups: &[&[Candidate]],
        written: &[DataFile],
    ) -> Result<Table> {
        // v3: the new files store each row's lineage (see `rewrite_group`)
        let mut rewrite = RewriteFiles::new(Some(self.base_snapshot_id))
            .remove_dangling_deletes()
            .keeps_row_lineage();
        // once per entry read: the commit checks that no other entry of the file is live
        for c in groups.iter().copied().flatten() {
            for e in &c.entries {
                rewrite = rewrite.delete_data_file(e.spec_id, c.file.clone())?;
            }
        }
        if !written.is_empty() {
            rewrite = rewrite.add_data_files(self.output_spec_id, written.to_vec())?;
        }
        Transaction::new(Arc::clone(self.catalog), self.ident.clone(), base.clone())
            .add_action(rewrite)
            .commit()
            .await
    }

    /// A group's read error as a lost race when the planned snapshot was expired
    /// meanwhile (see [`expired_base`](crate::transaction::expired_base)).
    async fn explain(&self, e: Error) -> Error {
        crate::transaction::expired_base::explain(
            self.catalog.as_ref(),
            self.ident,
            "rewrite",
            Some(self.base_snapshot_id),
            e,
        )
        .await
    }

    /// Remove files a failed rewrite or commit wrote (best effort: nothing references
    /// them).
    async fn remove(&self, written: &[DataFile]) {
        for f in written {
            let _ = self.provider.table().file_io().delete(&f.file_path).await;
        }
    }

    /// Rewrite every group and commit them together: the committed table and the number
    /// of files written. On any error the files written are removed (unless the commit's
    /// state is unknown) and the table is unchanged.
    async fn rewrite_and_commit(
        &self,
        base: &Table,
        groups: &[&[Candidate]],
    ) -> Result<(Table, usize)> {
        let mut written: Vec<DataFile> = vec![];
        let outcome = async {
            for group in groups {
                match self.rewrite(group).await {
                    Ok(f) => written.extend(f),
                    Err((e, f)) => {
                        written.extend(f);
                        return Err(self.explain(e).await);
                    }
                }
            }
            self.commit(base, groups, &written).await
        }
        .await;
        match outcome {
            Ok(t) => Ok((t, written.len())),
            Err(e) => {
                if e.kind() != ErrorKind::CommitStateUnknown {
                    self.remove(&written).await;
                }
                Err(e)
            }
        }
    }

    /// `partial-progress.enabled`: the groups, in planning order, are split into at most
    /// `partial-progress.max-commits` commits of consecutive groups (Java's
    /// `groupsPerCommit`, rounded up). A group whose rewrite fails is left out of its
    /// commit; a commit that fails (or has no group left) leaves the table as the earlier
    /// commits made it and the next commits go on. Their files count in
    /// `failed_data_files_count`. When more commits failed than
    /// `partial-progress.max-failed-commits` (default: `max-commits`), the call fails,
    /// after the commits that landed; a commit whose state is unknown stops the call.
    async fn rewrite_with_partial_progress(
        &self,
        table: Table,
        groups: &[Vec<Candidate>],
        options: &RewriteDataFilesOptions,
    ) -> Result<(Table, RewriteDataFilesResult)> {
        let max_commits = options.partial_progress_max_commits;
        let per_commit = groups.len().div_ceil(max_commits).max(1);
        let mut result = RewriteDataFilesResult::default();
        let mut base = table;
        let (mut commits, mut failed_commits) = (0usize, 0usize);
        for chunk in groups.chunks(per_commit) {
            commits += 1;
            let mut done: Vec<&[Candidate]> = vec![];
            let mut written: Vec<DataFile> = vec![];
            for group in chunk {
                match self.rewrite(group).await {
                    Ok(f) => {
                        done.push(group);
                        written.extend(f);
                    }
                    Err((e, f)) => {
                        self.remove(&f).await;
                        result.failed_data_files_count += group.len();
                        result.failures.push(self.explain(e).await.to_string());
                    }
                }
            }
            if done.is_empty() {
                failed_commits += 1;
                continue;
            }
            match self.commit(&base, &done, &written).await {
                Ok(t) => {
                    result.removed_delete_files_count += removed_delete_files(&t);
                    base = t;
                    let rewritten: Vec<&Candidate> = done.iter().copied().flatten().collect();
                    result.rewritten_data_files_count += rewritten.len();
                    result.added_data_files_count += written.len();
                    result.rewritten_bytes_count += bytes_of(rewritten.into_iter());
                }
                Err(e) if e.kind() == ErrorKind::CommitStateUnknown => return Err(e),
                Err(e) => {
                    self.remove(&written).await;
                    failed_commits += 1;
                    result.failed_data_files_count += done.iter().map(|g| g.len()).sum::<usize>();
                    result.failures.push(e.to_string());
                }
            }
        }
        let max_failed = options
            .partial_progress_max_failed_commits
            .unwrap_or(max_commits);
        if failed_commits > max_failed {
            return Err(Error::new(
                ErrorKind::ValidationFailed,
                format!(
                    "partial-progress.enabled is true but {failed_commits} of {commits} \
                     rewrite commits failed, more than partial-progress.max-failed-commits \
                     = {max_failed} ({} commits landed; first failure: {})",
                    commits - failed_commits,
                    result.failures.first().map_or("none", String::as_str)
                ),
            ));
        }
        Ok((base, result))
    }
}
