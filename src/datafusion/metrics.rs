//! The pruning funnel as DataFusion metrics, shown by `EXPLAIN ANALYZE`.
//!
//! The planning counts of [`ScanMetrics`] are registered as counters on the metrics set
//! of the scan's Parquet source, so they print on the `DataSourceExec` line next to
//! DataFusion's own Parquet counters (row groups pruned by statistics, pages pruned,
//! rows filtered):
//!
//! ```text
//! DataSourceExec: ..., metrics=[iceberg_manifests_total=40, iceberg_manifests_skipped=37,
//!   iceberg_data_files_total=12400, iceberg_data_files_skipped_by_partition=..., ...]
//! ```

use std::sync::Arc;

use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricType};
use datafusion::physical_plan::ExecutionPlan;

use crate::scan::ScanMetrics;

/// The funnel counts, named as they appear in `EXPLAIN ANALYZE`.
pub fn funnel(metrics: &ScanMetrics) -> [(&'static str, usize); 12] {
    [
        ("iceberg_manifests_total", metrics.manifests_total),
        ("iceberg_manifests_skipped", metrics.manifests_skipped),
        (
            "iceberg_manifests_skipped_by_limit",
            metrics.manifests_skipped_by_limit,
        ),
        ("iceberg_data_manifests_total", metrics.data_manifests_total),
        (
            "iceberg_data_manifests_skipped",
            metrics.data_manifests_skipped,
        ),
        ("iceberg_data_files_total", metrics.data_files_total),
        (
            "iceberg_data_files_skipped_by_partition",
            metrics.data_files_skipped_by_partition,
        ),
        (
            "iceberg_data_files_skipped_by_metrics",
            metrics.data_files_skipped_by_metrics,
        ),
        (
            "iceberg_data_files_with_inconsistent_metrics",
            metrics.data_files_with_inconsistent_metrics,
        ),
        ("iceberg_data_files_planned", metrics.data_files_planned),
        (
            "iceberg_delete_files_skipped_by_partition",
            metrics.delete_files_skipped_by_partition,
        ),
        ("iceberg_delete_files_kept", metrics.delete_files_kept),
    ]
}

/// Register the funnel counts on `set`.
pub fn record_scan_metrics(set: &ExecutionPlanMetricsSet, metrics: &ScanMetrics) {
    for (name, value) in funnel(metrics) {
        MetricBuilder::new(set)
            .with_type(MetricType::Summary)
            .global_counter(name)
            .add(value);
    }
}

/// Register the funnel counts on the first `DataSourceExec` of `plan` (depth first).
/// Returns whether one was found (an `EmptyExec` for a fully pruned scan has none).
pub fn attach_scan_metrics(plan: &Arc<dyn ExecutionPlan>, metrics: &ScanMetrics) -> bool {
    attach_counters(plan, &funnel(metrics))
}

/// Register named counts on the first `DataSourceExec` of `plan` (depth first).
/// Returns whether one was found.
pub fn attach_counters(plan: &Arc<dyn ExecutionPlan>, counters: &[(&'static str, usize)]) -> bool {
    if let Some(exec) = plan.downcast_ref::<DataSourceExec>() {
        let set = exec.data_source().metrics();
        for &(name, value) in counters {
            MetricBuilder::new(&set)
                .with_type(MetricType::Summary)
                .global_counter(name)
                .add(value);
        }
        return true;
    }
    plan.children()
        .into_iter()
        .any(|child| attach_counters(child, counters))
}

/// The name of the metric saying which table a scan reads: a count of 1 labelled
/// `table=<name>` ([`IcebergTableProvider::scan_name`](super::IcebergTableProvider::scan_name)),
/// so that a query scanning several tables can tell their funnels apart (the CLI's
/// `--explain-pruning`; `EXPLAIN ANALYZE` shows `iceberg_table=1`, without the label).
pub const TABLE_METRIC: &str = "iceberg_table";

/// The label of [`TABLE_METRIC`] holding the table's name.
pub const TABLE_LABEL: &str = "table";

/// Register [`TABLE_METRIC`] naming `table` on the first `DataSourceExec` of `plan`
/// (depth first). Returns whether one was found.
pub fn attach_table_name(plan: &Arc<dyn ExecutionPlan>, table: &str) -> bool {
    if let Some(exec) = plan.downcast_ref::<DataSourceExec>() {
        let set = exec.data_source().metrics();
        MetricBuilder::new(&set)
            .with_type(MetricType::Summary)
            .with_new_label(TABLE_LABEL, table.to_string())
            .global_counter(TABLE_METRIC)
            .add(1);
        return true;
    }
    plan.children()
        .into_iter()
        .any(|child| attach_table_name(child, table))
}
