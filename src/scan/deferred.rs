//! Deferred planning: a scan of a table of very many files plans each manifest's files
//! when the query reads that manifest, not all of them before the query starts.
//!
//! [`TableScan::plan_files`] decodes every manifest the filter keeps and returns every
//! surviving data file at once: for a table of a million files that is a million tasks
//! (and, in DataFusion, a million `PartitionedFile`s with statistics) held before the
//! first row is read. [`TableScan::defer_files`] reads only the manifest list and prunes
//! manifests by their partition summaries; [`DeferredScan::plan_manifest`] then plans one
//! manifest's files with the same pruning as `plan_files` (partition tuple, then column
//! metrics), when the reader gets to it. The files planned are the same, manifest by
//! manifest, in the same order.
//!
//! Only snapshots without delete files are deferred: applying deletes needs every delete
//! file matched to the data files before the scan starts (spec "Scan Planning"), and a
//! delete manifest may apply to files of every data manifest.

use std::sync::Arc;

use super::cache::{read_manifest_cached, InsertBudget};
use super::{prune_manifests, Pruner, ScanMetrics, ScanPlan, TableScan};
use crate::error::Result;
use crate::expr::BoundPredicate;
use crate::spec::{ColumnStats, ManifestContent, ManifestFile};

/// A scan whose data manifests are planned one at a time ([`Self::plan_manifest`]); see
/// the module docs.
#[derive(Debug)]
pub struct DeferredScan {
    scan: TableScan,
    filter: Option<BoundPredicate>,
    /// The manifest list's location (named in errors, part of cache keys).
    list: String,
    /// What this scan may add to the manifest cache (`ManifestCache::scan_budget`).
    budget: Option<Arc<InsertBudget>>,
    manifests: Vec<ManifestFile>,
    /// The metrics the planned data files keep (`TableScan::with_column_stats`).
    stats: ColumnStats,
    metrics: ScanMetrics,
    live_files: u64,
    live_rows: u64,
}

impl TableScan {
    /// This scan deferred ([`DeferredScan`]) when the snapshot has at least `min_files`
    /// live data files in the manifests the filter keeps, going by the manifest list's
    /// counts; `None` (plan with [`Self::plan_files`]) when it has fewer, when it has
    /// live delete files (delete manifests with live files), or when a kept manifest does
    /// not record its counts (optional in v1 manifest lists). Reads only the manifest
    /// list.
    ///
    /// Errors: the manifest list is missing or corrupt, a filter that cannot be bound or
    /// evaluated on a manifest's partition summaries.
    pub async fn defer_files(&self, min_files: u64) -> Result<Option<DeferredScan>> {
        let Some(list) = self.snapshot.as_ref().and_then(|s| s.manifest_list.clone()) else {
            return Ok(None);
        };
        let filter = self.bound_filter()?;
        let manifests = self.manifest_list().await?;
        let deletes = manifests
            .iter()
            .any(|m| m.content == ManifestContent::Deletes && m.has_live_files());
        if deletes {
            return Ok(None);
        }
        let stats = self.data_file_stats(&manifests, filter.as_ref());
        let mut metrics = ScanMetrics::of_manifest_list(&manifests);
        let metadata = self.table.metadata_ref();
        let scanned = {
            let mut pruner = filter.as_ref().map(|f| Pruner::new(&metadata, f));
            prune_manifests(pruner.as_mut(), manifests, &mut metrics)?
        };
        let (mut live_files, mut live_rows) = (0u64, 0u64);
        for m in &scanned {
            let counts = (
                m.added_files_count,
                m.existing_files_count,
                m.added_rows_count,
                m.existing_rows_count,
            );
            let (Some(af), Some(ef), Some(ar), Some(er)) = counts else {
                return Ok(None);
            };
            // counts as recorded (negative ones as 0), summed without overflowing
            let count = |n: i64| u64::try_from(n).unwrap_or(0);
            live_files = live_files
                .saturating_add(count(i64::from(af)))
                .saturating_add(count(i64::from(ef)));
            live_rows = live_rows
                .saturating_add(count(ar))
                .saturating_add(count(er));
        }
        if live_files < min_files.max(1) {
            return Ok(None);
        }
        metrics.manifests_scanned = scanned.len();
        let budget = self.cache.as_ref().map(|c| Arc::new(c.scan_budget()));
        Ok(Some(DeferredScan {
            scan: self.clone(),
            filter,
            list,
            budget,
            manifests: scanned,
            stats,
            metrics,
            live_files,
            live_rows,
        }))
    }
}

impl DeferredScan {
    /// This scan reading its manifests through `file_io` (e.g. one counting the
    /// requests of the query's execution, when the manifests are read).
    pub fn reading_through(mut self, file_io: crate::io::FileIO) -> Self {
        self.scan.table = self.scan.table.with_file_io(file_io);
        self
    }

    /// The data manifests to plan, in manifest-list order.
    pub fn manifests(&self) -> &[ManifestFile] {
        &self.manifests
    }

    /// The counts known before any manifest is read: the manifest counts (total,
    /// skipped by partition summaries, scanned); the data-file counts are those of
    /// [`Self::plan_manifest`]'s plans.
    pub fn metrics(&self) -> &ScanMetrics {
        &self.metrics
    }

    /// Live data files in the kept manifests, by the manifest list's counts (before
    /// pruning files).
    pub fn live_files(&self) -> u64 {
        self.live_files
    }

    /// Rows of the live data files in the kept manifests, by the manifest list's counts
    /// (before pruning files).
    pub fn live_rows(&self) -> u64 {
        self.live_rows
    }

    /// Plan one of [`Self::manifests`]: its live data files that the filter may match, as
    /// [`TableScan::plan_files`] plans them (through the scan's manifest cache), with the
    /// data-file counts of this manifest in the plan's metrics (the manifest counts
    /// there are 0).
    ///
    /// Errors: the manifest is missing ([`crate::ErrorKind::NotFound`], naming the
    /// manifest list too) or corrupt ([`crate::ErrorKind::InvalidData`]), a partition
    /// tuple the filter cannot be evaluated on.
    pub async fn plan_manifest(&self, manifest: &ManifestFile) -> Result<ScanPlan> {
        let table = &self.scan.table;
        let metadata = table.metadata_ref();
        let cache = self.scan.cache.as_deref().zip(self.budget.as_deref());
        let entries =
            read_manifest_cached(table, &metadata, manifest, &self.list, cache, &self.stats)
                .await?;
        let mut pruner = self.filter.as_ref().map(|f| Pruner::new(&metadata, f));
        let mut plan = ScanPlan::default();
        let mut metrics = ScanMetrics::default();
        self.scan
            .plan_entries(pruner.as_mut(), entries.iter(), &mut metrics, &mut plan)?;
        metrics.data_files_planned = plan.tasks.len();
        metrics.delete_files_kept = plan.delete_entries.len();
        plan.metrics = metrics;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use crate::Table;

    /// 20 manifests of 5 files of 100 rows each; deferred at up to 100 files, and each
    /// manifest's plan is that manifest's part of `plan_files`, in order. A delete file
    /// makes the snapshot planned up front.
    #[tokio::test]
    async fn manifests_planned_one_at_a_time_plan_what_plan_files_plans() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = super::super::test_tables::twenty_manifests(dir.path());
        let open = || async {
            let table = Table::open(&dir.path().to_string_lossy())
                .await
                .expect("open");
            super::TableScan::new(table.clone(), table.metadata().current_snapshot().cloned())
        };
        let scan = open().await;
        assert!(scan.defer_files(101).await.expect("defer").is_none());
        let deferred = scan
            .defer_files(100)
            .await
            .expect("defer")
            .expect("deferred");
        assert_eq!(deferred.manifests().len(), 20);
        assert_eq!((deferred.live_files(), deferred.live_rows()), (100, 10_000));
        assert_eq!(deferred.metrics().manifests_scanned, 20);
        let mut one_at_a_time = vec![];
        for m in deferred.manifests() {
            let plan = deferred.plan_manifest(m).await.expect("plan manifest");
            assert_eq!(plan.metrics.data_files_planned, 5);
            one_at_a_time.extend(plan.tasks.into_iter().map(|t| t.location));
        }
        let all: Vec<String> = scan
            .plan_files()
            .await
            .expect("plan")
            .tasks
            .into_iter()
            .map(|t| t.location)
            .collect();
        assert_eq!(one_at_a_time, all);

        super::super::test_tables::add_equality_delete(&mut w);
        assert!(open().await.defer_files(1).await.expect("defer").is_none());
    }
}
