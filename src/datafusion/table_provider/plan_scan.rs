//! [`TableProvider::scan`]'s planning: a count from the manifest list, a deferred scan,
//! or the planned files and deletes handed to DataFusion's Parquet scan (its errors as
//! read; [`expired_reads`](crate::datafusion::expired_reads) explains them).

use super::*;

impl IcebergTableProvider {
    /// [`TableProvider::scan`], its errors as read.
    pub(super) async fn plan_scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        // No column and no filter (`COUNT(*)`): the manifest list may give the count.
        if projection.is_some_and(|p| p.is_empty()) && filters.is_empty() {
            if let Some((rows, metrics)) = self.table_scan().live_row_count().await? {
                if let Ok(mut last) = self.last_scan_metrics.lock() {
                    *last = Some(metrics);
                }
                if let Ok(mut last) = self.last_delete_metrics.lock() {
                    *last = Some(DeleteMetrics::default());
                }
                return Ok(rows_without_columns(
                    rows,
                    limit,
                    state.config().batch_size(),
                )?);
            }
        }
        // Planning reads (manifest list, manifests, position deletes) are counted on one
        // FileIO, the scan's own reads on another (request_metrics).
        let planning_requests = Arc::new(RequestCounts::default());
        let planning_table = self.table.with_file_io(
            self.table
                .file_io()
                .with_request_observer(Arc::clone(&planning_requests) as _),
        );
        // Planned data files keep the metrics of the columns read (their statistics) and
        // filtered (pruning), no others.
        let scan = self
            .filtered_scan(planning_table.clone(), filters)
            .with_column_stats(self.read_column_stats(projection));
        // A snapshot of very many files and no deletes: each manifest is planned as the
        // scan reads it (`deferred`).
        let deferred = self
            .deferred_scan(state, &scan, projection, filters, limit, &planning_requests)
            .await?;
        if let Some(exec) = deferred {
            attach_table_name(&exec, &self.scan_name());
            return Ok(exec);
        }
        // An unfiltered LIMIT opens only the manifests it needs (scan::limit).
        let plan = match limit {
            Some(n) if filters.is_empty() => scan.plan_files_with_limit(n).await?,
            _ => scan.plan_files().await?,
        };
        let scan_metrics = plan.metrics.clone();
        if let Ok(mut last) = self.last_scan_metrics.lock() {
            *last = Some(scan_metrics.clone());
        }
        let cache = Some(&self.caches.position_deletes);
        let deletes = plan_deletes(&planning_table, plan.tasks, plan.delete_entries, cache).await?;
        // Equality deletes resolved to positions (this session's, or now: `resolve`),
        // reading through the planning FileIO so their requests count as planning.
        let planning = Self {
            table: planning_table.clone(),
            ..self.clone()
        };
        let deletes = planning
            .resolve_equality_deletes(state, deletes, limit)
            .await?;
        let delete_metrics = deletes.metrics.clone();
        if let Ok(mut last) = self.last_delete_metrics.lock() {
            *last = Some(delete_metrics.clone());
        }
        let store_requests = Arc::new(StoreRequestMetrics::default());
        let counted = self.counting_store_requests(&store_requests);
        let exec = match &self.metadata_columns {
            Some((columns, _)) => {
                counted.scan_with_metadata(state, deletes, projection, filters, limit, columns)?
            }
            None => counted.build_scan(state, deletes, projection, filters, limit, Hidden::None)?,
        };
        attach_counters(&exec, &delete_metrics.counters());
        attach_scan_metrics(&exec, &scan_metrics);
        attach_table_name(&exec, &self.scan_name());
        store_requests.register(&exec, planning_requests.totals());
        Ok(exec)
    }
}
