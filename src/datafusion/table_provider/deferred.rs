//! Deferred scans: whether a query's scan is deferred, and its physical scan
//! ([`DeferredScan`]): DataFusion's Parquet scan over one `PartitionedFile` per data
//! manifest, planned into data files as the scan reads them
//! ([`deferred_files`](crate::datafusion::deferred_files)).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;

use crate::datafusion::canonical_nan::canonical_nan_projection;
use crate::datafusion::deferred_files::{manifest_files, StatisticsInputs};
use crate::datafusion::delete_planning::{DeleteMetrics, PositionDeletePolicy};
use crate::datafusion::metrics::attach_counters;
use crate::datafusion::options::{IcefloeOptions, DEFAULT_DEFERRED_PLANNING_MIN_FILES};
use crate::datafusion::request_metrics::StoreRequestMetrics;
use crate::error::Result;
use crate::io::RequestCounts;
use crate::scan::{DeferredScan, TableScan};

use super::file_groups::split_into_groups;
use super::hidden::{Hidden, HiddenLayout};
use super::scan::{FileLayout, StoreScan};
use super::IcebergTableProvider;

impl IcebergTableProvider {
    /// The scan of `scan` deferred, if it is to be: `None` (plan its files up front)
    /// unless the session's `icefloe.deferred_planning_min_files` is above 0 and the
    /// snapshot reaches it ([`TableScan::defer_files`]: no delete files, enough live
    /// files), and the scan is none of: an unfiltered LIMIT (it opens only the manifests
    /// it needs), a scan of no column (`COUNT(*)` under an exact filter: DataFusion
    /// answers it from the planned files' statistics), one with metadata columns, one of
    /// a moved table (its errors name files as recorded, which needs them planned), or
    /// one of fewer manifests than the session's `target_partitions` (each manifest's
    /// files are read by one partition). The manifest list is read through `scan`'s
    /// FileIO (counted as planning, `planning_requests`), the manifests through the
    /// query's (counted with its reads).
    ///
    /// Errors: as [`TableScan::defer_files`] and [`Self::build_deferred_scan`].
    pub(super) async fn deferred_scan(
        &self,
        state: &dyn Session,
        scan: &TableScan,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        planning_requests: &RequestCounts,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let min_files = state
            .config_options()
            .extensions
            .get::<IcefloeOptions>()
            .map_or(DEFAULT_DEFERRED_PLANNING_MIN_FILES, |o| {
                o.deferred_planning_min_files
            });
        let deferrable = min_files > 0
            && self.metadata_columns.is_none()
            && !(limit.is_some() && filters.is_empty())
            && !projection.is_some_and(|p| p.is_empty())
            && self.table.file_io().remaps().is_empty();
        if !deferrable {
            return Ok(None);
        }
        let partitions = state.config().target_partitions();
        let Some(deferred) = scan
            .defer_files(min_files as u64)
            .await?
            .filter(|d| d.manifests().len() >= partitions)
        else {
            return Ok(None);
        };
        if let Ok(mut last) = self.last_scan_metrics.lock() {
            *last = Some(deferred.metrics().clone());
        }
        if let Ok(mut last) = self.last_delete_metrics.lock() {
            *last = Some(DeleteMetrics::default());
        }
        let store_requests = Arc::new(StoreRequestMetrics::default());
        let counted = self.counting_store_requests(&store_requests);
        let deferred = deferred.reading_through(counted.table.file_io().clone());
        let exec = counted.build_deferred_scan(state, deferred, projection, limit)?;
        // no delete applies: the delete counters are 0, shown as for any scan
        attach_counters(&exec, &DeleteMetrics::default().counters());
        store_requests.register(&exec, planning_requests.totals());
        Ok(Some(exec))
    }

    /// The scan of `deferred` (a query's scan: no hidden columns, no deletes), reading
    /// `projection` of the table's columns, at most `limit` rows.
    ///
    /// No data file is known when the plan is built, so: DataFusion gets the manifest
    /// list's row count as inexact statistics and nothing per column (each data file
    /// gets its own statistics when its manifest is planned, as in a scan planned up
    /// front, for the Parquet opener); every float column
    /// read is made one NaN ([`canonical_nan_projection`]), and reading a top-level
    /// float column turns row-group and page pruning off (see `nan_columns`: the eager
    /// scan decides both from the files' `nan_value_counts`). The filters DataFusion
    /// pushes into the scan prune row groups and pages as in an eager scan, and the
    /// scan's own filter prunes each manifest's files by partition and metrics.
    ///
    /// Errors: a manifest or table location that does not resolve, a filter or schema
    /// DataFusion refuses.
    pub(super) fn build_deferred_scan(
        &self,
        state: &dyn Session,
        deferred: DeferredScan,
        projection: Option<&Vec<usize>>,
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let layout = HiddenLayout::new(self, Hidden::None);
        let columns = self.arrow_schema.fields().len();
        let read_columns: Vec<bool> = match projection {
            Some(p) => (0..columns).map(|i| p.contains(&i)).collect(),
            None => vec![true; columns],
        };
        let nan_columns = self.float_columns(&read_columns, |_| true);
        let inputs = StatisticsInputs {
            schema: Arc::clone(&self.schema),
            arrow_schema: Arc::clone(&self.arrow_schema),
            metadata: self.table.metadata_ref(),
            read_columns: read_columns.clone(),
        };
        let files = FileLayout {
            layout: &layout,
            equality: false,
            per_batch: false,
            file_count: 0,
            policy: PositionDeletePolicy::Auto,
            read_columns,
        };
        let io = self.table.file_io();
        let store_url = io.resolve(&self.table.metadata().location)?.store_url;
        let scan = StoreScan {
            table_schema: self.scan_table_schema(&files)?,
            predicate: None,
            projection: projection.cloned(),
            limit,
            nan_unsafe: nan_columns.iter().any(|(_, top_level)| *top_level),
            recorded: Arc::new(HashMap::new()),
            columns: Arc::new(self.expr_adapter_factory()?),
        };
        let manifests = manifest_files(&deferred, io)?;
        let groups = split_into_groups(manifests, state.config().target_partitions());
        let plan = self.store_scan(state, &store_url, groups, &scan, Some((deferred, inputs)))?;
        let nan_names: Vec<String> = nan_columns.into_iter().map(|(name, _)| name).collect();
        Ok(canonical_nan_projection(plan, &nan_names)?)
    }
}
