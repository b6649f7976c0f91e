//! Planning for an unfiltered `LIMIT n`: open only as many data manifests as needed.
//!
//! A manifest list records each manifest's live row count (`added_rows_count` +
//! `existing_rows_count`, spec: "Manifest Lists"), so without a filter and without delete
//! files the first manifests whose live rows add up to `n` hold enough rows: only they
//! are opened, and within them files are planned until `n` rows are covered. Anything
//! that could make a planned row not count — a row filter, any delete manifest, a
//! manifest without row counts — falls back to the full [`TableScan::plan_files`].
//! Manifests are read through the scan's [`ManifestCache`](super::cache::ManifestCache), if any.

use std::sync::Arc;

use super::cache::CachedManifest;
use super::{FileScanTask, ScanMetrics, ScanPlan, TableScan};
use crate::error::Result;
use crate::spec::{ManifestContent, ManifestFile};

/// Live rows of a manifest per its list entry, `None` when a count is missing.
fn live_rows(m: &ManifestFile) -> Option<i64> {
    Some(m.added_rows_count? + m.existing_rows_count?)
}

impl TableScan {
    /// Plan enough data files to produce `limit` rows (see the module docs); the
    /// metrics count the manifests actually opened. Falls back to
    /// [`plan_files`](Self::plan_files) when a filter is set, when the snapshot has
    /// delete manifests with live files, or when row counts are missing.
    pub async fn plan_files_with_limit(&self, limit: usize) -> Result<ScanPlan> {
        if self.filter.is_some() {
            return self.plan_files().await;
        }
        let manifests = self.manifest_list().await?;
        let has_deletes = manifests
            .iter()
            .any(|m| m.content == ManifestContent::Deletes && m.has_live_files());
        if has_deletes || manifests.iter().any(|m| live_rows(m).is_none()) {
            return self.plan_files().await;
        }
        let mut metrics = ScanMetrics {
            manifests_total: manifests.len(),
            data_manifests_total: manifests.len(),
            ..Default::default()
        };
        let want = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut covered = 0i64;
        let mut chosen = vec![];
        for m in manifests
            .into_iter()
            .filter(|m| live_rows(m).is_some_and(|r| r > 0))
        {
            if covered >= want {
                break;
            }
            covered += live_rows(&m).unwrap_or(0);
            chosen.push(m);
        }
        metrics.manifests_scanned = chosen.len();
        metrics.manifests_skipped_by_limit = metrics.manifests_total - chosen.len();
        let entries: Vec<CachedManifest> = self.read_manifests(chosen, &self.column_stats).await?;
        let mut plan = ScanPlan::default();
        let mut rows = 0i64;
        for entry in entries
            .iter()
            .flat_map(|m| m.iter())
            .filter(|e| e.is_alive())
        {
            metrics.data_files_total += 1;
            if rows >= want {
                continue;
            }
            rows = rows.saturating_add(entry.data_file.record_count);
            let location = self.table.file_io().remap(&entry.data_file.file_path)?;
            plan.tasks.push(FileScanTask {
                entry: Arc::clone(entry),
                location,
            });
        }
        metrics.data_files_planned = plan.tasks.len();
        plan.metrics = metrics;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use crate::Table;

    /// 20 manifests of 5 files of 100 rows: LIMIT 250 needs one manifest, LIMIT 1,200
    /// three; a delete manifest makes it plan everything.
    #[tokio::test]
    async fn opens_only_the_manifests_a_limit_needs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = super::super::test_tables::twenty_manifests(dir.path());
        let table = Table::open(&dir.path().to_string_lossy())
            .await
            .expect("open");
        let scan =
            super::TableScan::new(table.clone(), table.metadata().current_snapshot().cloned());
        let plan = scan.plan_files_with_limit(250).await.expect("plan");
        assert_eq!((plan.metrics.manifests_scanned, plan.tasks.len()), (1, 3));
        // the 19 others are skipped for the limit, not by partition summaries
        assert_eq!(
            (
                plan.metrics.manifests_skipped_by_limit,
                plan.metrics.manifests_skipped
            ),
            (19, 0)
        );
        let plan = scan.plan_files_with_limit(1200).await.expect("plan");
        assert_eq!((plan.metrics.manifests_scanned, plan.tasks.len()), (3, 12));
        assert_eq!(plan.metrics.manifests_total, 20);

        super::super::test_tables::add_equality_delete(&mut w);
        let table = Table::open(&dir.path().to_string_lossy())
            .await
            .expect("reopen");
        let scan =
            super::TableScan::new(table.clone(), table.metadata().current_snapshot().cloned());
        let plan = scan.plan_files_with_limit(10).await.expect("plan");
        assert_eq!(
            (plan.metrics.manifests_scanned, plan.tasks.len()),
            (21, 100)
        );
    }
}
