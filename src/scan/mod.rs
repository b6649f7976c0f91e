//! Scan planning: snapshot → manifest list → manifests → [`FileScanTask`]s.
//!
//! Manifests are read concurrently. Only live entries (added or existing) are planned;
//! each data file becomes one task carrying its stored path, resolved location, partition
//! tuple and data sequence number. Delete files are collected alongside; applying them is
//! the business of the delete planner.
//!
//! With a row filter ([`TableScan::with_filter`]) planning prunes in three steps, each
//! only dropping what cannot hold a matching row: manifests by their partition summaries
//! ([`ManifestEvaluator`], each manifest under its own partition spec), then each data
//! or delete file by its partition tuple (the filter's inclusive projection), then each
//! data file by its column metrics ([`InclusiveMetricsEvaluator`]). The counts of each
//! step are in [`ScanMetrics`]. A [`DataFileFilter`] drops more data files by their
//! manifest entries (a filter on the `_partition` metadata column), counted as pruned by
//! partition.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::{self, StreamExt, TryStreamExt};

use crate::error::{Error, Result};
use crate::eval::{
    evaluate_partition, BoundPartitionSpec, InclusiveMetricsEvaluator, ManifestEvaluator,
    MetricsVerdict,
};
use crate::expr::{Binder, BoundPredicate, Predicate};
use crate::spec::{
    ColumnStats, DataContentType, DataFile, ManifestContent, ManifestEntry, ManifestFile, Schema,
    Snapshot, TableMetadata,
};
use crate::table::Table;

pub mod cache;
pub mod checked_files;
#[cfg(test)]
mod column_stats_tests;
mod deferred;
mod file_identity;
pub mod file_version;
mod limit;
mod row_count;
#[cfg(test)]
mod test_tables;

pub(crate) use cache::manifest_list_recorded;
pub use deferred::DeferredScan;
pub(crate) use file_identity::check_manifest_list;
pub use row_count::live_rows_from_manifest_list;

/// How many manifests are fetched and decoded at once.
const MANIFEST_CONCURRENCY: usize = 16;

/// A condition on the manifest entries of data files besides the row filter (Iceberg
/// Java's `ManifestGroup.filterManifestEntries`): a data file whose entry it answers
/// `false` for holds no row the query wants and is not planned. Delete files are never
/// dropped by it (an equality delete file of one partition may apply to data files of
/// another spec).
#[derive(Clone)]
pub struct DataFileFilter(Arc<dyn Fn(&ManifestEntry) -> bool + Send + Sync>);

impl DataFileFilter {
    /// The filter keeping the data files whose entries `keep` answers `true` for.
    pub fn new(keep: impl Fn(&ManifestEntry) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(keep))
    }

    /// Whether the data file of `entry` is kept.
    pub fn keeps(&self, entry: &ManifestEntry) -> bool {
        (self.0)(entry)
    }
}

impl std::fmt::Debug for DataFileFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DataFileFilter")
    }
}

/// One data file to scan.
#[derive(Debug, Clone)]
pub struct FileScanTask {
    /// The manifest entry of the data file (inherited values filled in).
    pub entry: Arc<ManifestEntry>,
    /// The file's location after remapping (what to open).
    pub location: String,
}

impl FileScanTask {
    /// The data file.
    pub fn data_file(&self) -> &DataFile {
        &self.entry.data_file
    }
}

/// Counts from planning (the pruning funnel), for `EXPLAIN ANALYZE` and the CLI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanMetrics {
    /// Manifests in the manifest list.
    pub manifests_total: usize,
    /// Manifests opened.
    pub manifests_scanned: usize,
    /// Manifests skipped by their partition summaries.
    pub manifests_skipped: usize,
    /// Manifests not opened because the manifests before them hold enough rows for an
    /// unfiltered `LIMIT` ([`TableScan::plan_files_with_limit`]).
    pub manifests_skipped_by_limit: usize,
    /// Data manifests in the manifest list.
    pub data_manifests_total: usize,
    /// Data manifests skipped by their partition summaries.
    pub data_manifests_skipped: usize,
    /// Live data files in the scanned manifests.
    pub data_files_total: usize,
    /// Data files skipped by their partition tuple.
    pub data_files_skipped_by_partition: usize,
    /// Data files skipped by their column metrics.
    pub data_files_skipped_by_metrics: usize,
    /// Data files whose metrics of a filtered column contradict themselves (inverted
    /// bounds, a bound of the wrong width, more nulls than values; see
    /// [`metrics_inconsistency`](crate::eval::metrics_inconsistency)): not pruned by
    /// that column.
    pub data_files_with_inconsistent_metrics: usize,
    /// Data files planned.
    pub data_files_planned: usize,
    /// Live delete files in the scanned manifests.
    pub delete_files_total: usize,
    /// Delete files skipped by their partition tuple.
    pub delete_files_skipped_by_partition: usize,
    /// Delete files kept (handed to the delete planner).
    pub delete_files_kept: usize,
}

impl ScanMetrics {
    /// Metrics with the manifest counts of a snapshot's manifest list filled in.
    fn of_manifest_list(manifests: &[ManifestFile]) -> Self {
        ScanMetrics {
            manifests_total: manifests.len(),
            data_manifests_total: manifests
                .iter()
                .filter(|m| m.content == ManifestContent::Data)
                .count(),
            ..Default::default()
        }
    }
}

/// The result of planning a scan.
#[derive(Debug, Clone, Default)]
pub struct ScanPlan {
    /// Data files to read.
    pub tasks: Vec<FileScanTask>,
    /// Live delete files (position, equality, deletion vectors).
    pub delete_entries: Vec<Arc<ManifestEntry>>,
    /// Planning counts.
    pub metrics: ScanMetrics,
}

/// A scan of one snapshot of a table.
#[derive(Debug, Clone)]
pub struct TableScan {
    table: Table,
    snapshot: Option<Snapshot>,
    filter: Option<Predicate>,
    cache: Option<Arc<cache::ManifestCache>>,
    /// The schema the filter binds to, when not the snapshot's.
    schema: Option<Arc<Schema>>,
    /// Data files dropped by their entries besides the filter.
    data_file_filter: Option<DataFileFilter>,
    /// The columns whose metrics planned data files keep (besides the filter's).
    column_stats: ColumnStats,
}

impl TableScan {
    /// A scan of `snapshot` (`None`: a table with no snapshot, which plans nothing).
    pub fn new(table: Table, snapshot: Option<Snapshot>) -> Self {
        Self {
            table,
            snapshot,
            filter: None,
            cache: None,
            schema: None,
            data_file_filter: None,
            column_stats: ColumnStats::All,
        }
    }

    /// Keep on the planned data files only the metrics of the columns `stats` selects,
    /// besides those of the columns the filter references (Iceberg Java's
    /// `Scan.includeColumnStats`): a plan of many files then decodes and holds much less.
    /// The default keeps every column's metrics. A snapshot with delete manifests keeps
    /// them all whatever is asked: the delete planner matches equality delete files to
    /// data files by the data files' bounds. Delete files always keep all theirs.
    pub fn with_column_stats(mut self, stats: ColumnStats) -> Self {
        self.column_stats = stats;
        self
    }

    /// The metrics the data files of a plan of `manifests` (the snapshot's manifest list)
    /// filtered by `filter` keep (see [`Self::with_column_stats`]).
    fn data_file_stats(
        &self,
        manifests: &[ManifestFile],
        filter: Option<&BoundPredicate>,
    ) -> ColumnStats {
        if manifests
            .iter()
            .any(|m| m.content == ManifestContent::Deletes)
        {
            return ColumnStats::All;
        }
        match filter {
            Some(f) => self
                .column_stats
                .union(&ColumnStats::only(f.terms().iter().map(|t| t.field_id))),
            None => self.column_stats.clone(),
        }
    }

    /// Read manifest lists and manifests through `cache` (shared across the scans of a
    /// session; see [`cache::ManifestCache`]).
    pub fn with_manifest_cache(mut self, cache: Arc<cache::ManifestCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Plan only files that may hold rows matching `filter` (ANDed with any filter set
    /// before). The filter is bound by field id to the snapshot's schema when planning.
    pub fn with_filter(mut self, filter: Predicate) -> Self {
        self.filter = Some(match self.filter.take() {
            Some(f) => f.and(filter),
            None => filter,
        });
        self
    }

    /// Plan only the data files `filter` keeps (besides the row filter; see
    /// [`DataFileFilter`]).
    pub fn with_data_file_filter(mut self, filter: DataFileFilter) -> Self {
        self.data_file_filter = Some(filter);
        self
    }

    /// Bind the filter to `schema` (the schema the rows are read with, e.g. the current
    /// schema when reading the current snapshot: a column added after the snapshot was
    /// written is in it, not in the snapshot's) instead of the snapshot's.
    pub fn with_schema(mut self, schema: Arc<Schema>) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The schema the filter binds to: the one given ([`Self::with_schema`]), else the
    /// snapshot's, else the current one.
    fn schema(&self) -> &Schema {
        if let Some(schema) = &self.schema {
            return schema;
        }
        let metadata = self.table.metadata();
        match &self.snapshot {
            // a snapshot naming no schema is refused where it is chosen (time travel);
            // a scan built on one by hand binds to the current schema
            Some(s) => metadata
                .schema_for_snapshot(s)
                .unwrap_or_else(|_| metadata.current_schema()),
            None => metadata.current_schema(),
        }
    }

    /// The filter bound to the scan's schema (`None` when there is no filter).
    ///
    /// Errors: a column the schema does not have, or a literal of an incompatible type.
    pub fn bound_filter(&self) -> Result<Option<BoundPredicate>> {
        self.filter
            .as_ref()
            .map(|f| Binder::new(self.schema()).bind(f))
            .transpose()
    }

    /// The snapshot scanned.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }

    /// Read the snapshot's manifest list.
    pub async fn manifest_list(&self) -> Result<Vec<ManifestFile>> {
        let Some(snapshot) = &self.snapshot else {
            return Ok(vec![]);
        };
        let Some(list) = &snapshot.manifest_list else {
            return Err(Error::unsupported(format!(
                "v1 snapshot {} without a manifest list (inline 'manifests')",
                snapshot.snapshot_id
            )));
        };
        let cached = cache::read_manifest_list_cached(
            &self.table,
            list,
            snapshot.snapshot_id,
            self.cache.as_deref(),
        )
        .await?;
        Ok(cached.as_ref().clone())
    }

    /// The entries of `manifests` (of this scan's manifest list), read
    /// [`MANIFEST_CONCURRENCY`] at a time through the scan's cache, data files keeping
    /// the metrics `stats` selects.
    async fn read_manifests(
        &self,
        manifests: Vec<ManifestFile>,
        stats: &ColumnStats,
    ) -> Result<Vec<cache::CachedManifest>> {
        let list = self
            .snapshot
            .as_ref()
            .and_then(|s| s.manifest_list.clone())
            .unwrap_or_default();
        let metadata = self.table.metadata_ref();
        // what this scan may add to the cache (see `ManifestCache::scan_budget`)
        let budget = self.cache.as_ref().map(|c| Arc::new(c.scan_budget()));
        stream::iter(manifests)
            .map(|m| {
                let (table, metadata) = (self.table.clone(), Arc::clone(&metadata));
                let (cache, list) = (self.cache.clone(), list.clone());
                let (budget, stats) = (budget.clone(), stats.clone());
                async move {
                    let cache = cache.as_deref().zip(budget.as_deref());
                    cache::read_manifest_cached(&table, &metadata, &m, &list, cache, &stats).await
                }
            })
            .buffered(MANIFEST_CONCURRENCY)
            .try_collect()
            .await
    }

    /// Plan the files of the snapshot.
    ///
    /// Errors: a manifest list or manifest that is missing ([`crate::ErrorKind::NotFound`])
    /// or corrupt ([`crate::ErrorKind::InvalidData`]), naming the file.
    pub async fn plan_files(&self) -> Result<ScanPlan> {
        let filter = self.bound_filter()?;
        let manifests = self.manifest_list().await?;
        let stats = self.data_file_stats(&manifests, filter.as_ref());
        let mut metrics = ScanMetrics::of_manifest_list(&manifests);
        let metadata = self.table.metadata_ref();
        let mut pruner = filter.as_ref().map(|f| Pruner::new(&metadata, f));
        let scanned = prune_manifests(pruner.as_mut(), manifests, &mut metrics)?;
        metrics.manifests_scanned = scanned.len();
        // Decoded manifests come from the scan's cache (if any) when planned before.
        let entries = self.read_manifests(scanned, &stats).await?;
        let mut plan = ScanPlan::default();
        let live = entries.iter().flat_map(|m| m.iter());
        self.plan_entries(pruner.as_mut(), live, &mut metrics, &mut plan)?;
        metrics.data_files_planned = plan.tasks.len();
        metrics.delete_files_kept = plan.delete_entries.len();
        plan.metrics = metrics;
        Ok(plan)
    }

    /// Plan the live ones of decoded manifest `entries`: a data file the scan's
    /// [`DataFileFilter`] drops is counted as pruned by partition; each is pruned by
    /// `pruner` (when the scan has a filter) by its partition tuple, then, for data files,
    /// by its column metrics; what survives goes to `plan` (data files as tasks, delete
    /// files as entries), and every step is counted in `metrics`.
    ///
    /// Errors: a partition tuple the filter cannot be evaluated on, a location that does
    /// not remap.
    fn plan_entries<'e>(
        &self,
        mut pruner: Option<&mut Pruner<'_>>,
        entries: impl Iterator<Item = &'e Arc<ManifestEntry>>,
        metrics: &mut ScanMetrics,
        plan: &mut ScanPlan,
    ) -> Result<()> {
        for entry in entries.filter(|e| e.is_alive()) {
            let is_data = entry.data_file.content == DataContentType::Data;
            if is_data {
                metrics.data_files_total += 1;
                if self
                    .data_file_filter
                    .as_ref()
                    .is_some_and(|f| !f.keeps(entry))
                {
                    metrics.data_files_skipped_by_partition += 1;
                    continue;
                }
            } else {
                metrics.delete_files_total += 1;
            }
            if let Some(p) = pruner.as_deref_mut() {
                if !p.partition_might_match(entry)? {
                    if is_data {
                        metrics.data_files_skipped_by_partition += 1;
                    } else {
                        metrics.delete_files_skipped_by_partition += 1;
                    }
                    continue;
                }
                if is_data {
                    let verdict = p.metrics_verdict(entry);
                    if verdict.inconsistent {
                        metrics.data_files_with_inconsistent_metrics += 1;
                    }
                    if !verdict.might_match {
                        metrics.data_files_skipped_by_metrics += 1;
                        continue;
                    }
                }
            }
            if is_data {
                let location = self.table.file_io().remap(&entry.data_file.file_path)?;
                plan.tasks.push(FileScanTask {
                    entry: Arc::clone(entry),
                    location,
                });
            } else {
                plan.delete_entries.push(Arc::clone(entry));
            }
        }
        Ok(())
    }
}

/// The manifests of `manifests` that may hold live files the scan needs: those pruned
/// by `pruner` (their partition summaries) are counted in `metrics` and left out.
fn prune_manifests(
    mut pruner: Option<&mut Pruner<'_>>,
    manifests: Vec<ManifestFile>,
    metrics: &mut ScanMetrics,
) -> Result<Vec<ManifestFile>> {
    let mut scanned = Vec::with_capacity(manifests.len());
    for m in manifests.into_iter().filter(|m| m.has_live_files()) {
        let keep = match pruner.as_deref_mut() {
            Some(p) => p.manifest_might_match(&m)?,
            None => true,
        };
        if keep {
            scanned.push(m);
        } else {
            metrics.manifests_skipped += 1;
            if m.content == ManifestContent::Data {
                metrics.data_manifests_skipped += 1;
            }
        }
    }
    Ok(scanned)
}

/// `e` with `referenced` (where the file's location was found, e.g. "manifest listed in
/// '…/snap-1.avro'") when it says the file does not exist: the location itself may be what
/// is wrong, and the referencing file is the one to look at.
pub(crate) fn missing_from(e: Error, referenced: String) -> Error {
    if e.kind() == crate::error::ErrorKind::NotFound {
        e.context(referenced)
    } else {
        e
    }
}

/// The evaluators of one scan's filter, per partition spec.
struct Pruner<'a> {
    metadata: &'a TableMetadata,
    filter: &'a BoundPredicate,
    /// spec id → manifest evaluator (which holds the projected partition filter);
    /// `None` when the spec cannot be resolved (nothing is pruned by partition then).
    specs: HashMap<i32, Option<(BoundPartitionSpec, ManifestEvaluator)>>,
    metrics: InclusiveMetricsEvaluator,
}

impl<'a> Pruner<'a> {
    fn new(metadata: &'a TableMetadata, filter: &'a BoundPredicate) -> Self {
        Self {
            metadata,
            filter,
            specs: HashMap::new(),
            metrics: InclusiveMetricsEvaluator::new(filter),
        }
    }

    fn spec(&mut self, spec_id: i32) -> Result<Option<&(BoundPartitionSpec, ManifestEvaluator)>> {
        if !self.specs.contains_key(&spec_id) {
            let resolved = match self.metadata.partition_spec_by_id(spec_id) {
                None => None,
                Some(spec) => {
                    let schemas = self.metadata.schemas_newest_first();
                    let bound = BoundPartitionSpec::new(spec, &schemas)?;
                    let evaluator = ManifestEvaluator::new(bound.clone(), self.filter)?;
                    Some((bound, evaluator))
                }
            };
            self.specs.insert(spec_id, resolved);
        }
        Ok(self.specs.get(&spec_id).and_then(Option::as_ref))
    }

    /// Whether the manifest's partition summaries allow a matching row. Pruning is best
    /// effort: a summary that cannot be evaluated keeps the manifest.
    fn manifest_might_match(&mut self, manifest: &ManifestFile) -> Result<bool> {
        Ok(match self.spec(manifest.partition_spec_id)? {
            Some((_, evaluator)) => evaluator.eval(manifest).unwrap_or(true),
            None => true,
        })
    }

    /// Whether the entry's partition tuple allows a matching row. Errors are returned,
    /// not ignored: exact filter pushdown relies on this step.
    fn partition_might_match(&mut self, entry: &ManifestEntry) -> Result<bool> {
        let Some((spec, evaluator)) = self.spec(entry.spec_id)? else {
            return Ok(true);
        };
        if entry.data_file.partition.len() != spec.fields.len() {
            return Ok(true);
        }
        evaluate_partition(
            spec,
            evaluator.partition_filter(),
            &entry.data_file.partition,
        )
        .map_err(|e| e.context(format!("partition of '{}'", entry.data_file.file_path)))
    }

    /// Whether the data file's column metrics allow a matching row (best effort: an
    /// evaluation error keeps the file), and whether some were inconsistent.
    fn metrics_verdict(&self, entry: &ManifestEntry) -> MetricsVerdict {
        self.metrics
            .verdict(&entry.data_file)
            .unwrap_or(MetricsVerdict {
                might_match: true,
                inconsistent: false,
            })
    }
}

/// Read one manifest, typed by its own partition spec (deleted entries included).
///
/// Errors when the spec is unknown, the file cannot be read or decoded, or a data
/// manifest holds delete files (or the reverse); each names the manifest.
pub(crate) async fn read_manifest(
    table: &Table,
    metadata: &TableMetadata,
    manifest: &ManifestFile,
) -> Result<Vec<ManifestEntry>> {
    read_manifest_keeping(table, metadata, manifest, None, &ColumnStats::All).await
}

/// [`read_manifest`] keeping on data files the metrics `stats` selects (see
/// [`ColumnStats`]), of the manifest list `listed_in` when known (named in errors). Same
/// errors, and those of [`file_identity::check_manifest`] (a manifest of another length
/// than the list's `manifest_length`, or of another partition spec).
pub(crate) async fn read_manifest_keeping(
    table: &Table,
    metadata: &TableMetadata,
    manifest: &ManifestFile,
    listed_in: Option<&str>,
    stats: &ColumnStats,
) -> Result<Vec<ManifestEntry>> {
    let spec = metadata
        .partition_spec_by_id(manifest.partition_spec_id)
        .ok_or_else(|| {
            Error::invalid_data(format!(
                "manifest '{}' names partition spec {} which the table does not have",
                manifest.manifest_path, manifest.partition_spec_id
            ))
        })?;
    let spec = spec.clone();
    let bytes = table.file_io().read(&manifest.manifest_path).await?;
    file_identity::check_manifest(&bytes, manifest, listed_in).map_err(|e| {
        crate::io::when_moved(e, "manifest", table.file_io(), &manifest.manifest_path)
    })?;
    // Decoding is CPU-bound: it runs on the blocking pool (when inside tokio), so the
    // manifests fetched concurrently also decode on every core.
    let (owned, metadata) = (manifest.clone(), table.metadata_ref());
    let what = format!("manifest '{}'", manifest.manifest_path);
    let stats = stats.clone();
    let entries = crate::blocking::run_blocking(what, move || {
        let schemas = metadata.schemas_newest_first();
        crate::spec::manifest::parse_manifest_keeping(
            &bytes,
            &owned.manifest_path,
            &owned,
            &spec,
            &schemas,
            &stats,
        )
    })
    .await
    .map_err(|e| crate::io::when_moved(e, "manifest", table.file_io(), &manifest.manifest_path))?;
    // A data manifest must hold only data files, a delete manifest only delete files.
    let expect_data = manifest.content == ManifestContent::Data;
    if let Some(bad) = entries
        .iter()
        .find(|e| (e.data_file.content == DataContentType::Data) != expect_data)
    {
        return Err(Error::invalid_data(format!(
            "manifest '{}' of content {:?} holds a file of content {:?} ('{}')",
            manifest.manifest_path,
            manifest.content,
            bad.data_file.content,
            bad.data_file.file_path
        )));
    }
    Ok(entries)
}
