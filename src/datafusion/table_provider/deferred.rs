//! The physical scan of a deferred snapshot ([`DeferredScan`]): DataFusion's Parquet
//! scan over one `PartitionedFile` per data manifest, planned into data files as the scan
//! reads them ([`deferred_files`](crate::datafusion::deferred_files)).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::physical_plan::ExecutionPlan;

use crate::datafusion::canonical_nan::canonical_nan_projection;
use crate::datafusion::deferred_files::{manifest_files, StatisticsInputs};
use crate::datafusion::delete_planning::PositionDeletePolicy;
use crate::datafusion::statistics::untruncated_bounds;
use crate::error::Result;
use crate::scan::DeferredScan;

use super::hidden::{Hidden, HiddenLayout};
use super::scan::{split_into_groups, FileLayout, StoreScan};
use super::IcebergTableProvider;

impl IcebergTableProvider {
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
        let untruncated = untruncated_bounds(&self.schema, &self.table.metadata().properties);
        let inputs = StatisticsInputs {
            schema: Arc::clone(&self.schema),
            arrow_schema: Arc::clone(&self.arrow_schema),
            metadata: self.table.metadata_ref(),
            read_columns: read_columns.clone(),
            untruncated: untruncated.clone(),
        };
        let files = FileLayout {
            layout: &layout,
            equality: false,
            per_batch: false,
            policy: PositionDeletePolicy::Auto,
            untruncated,
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
