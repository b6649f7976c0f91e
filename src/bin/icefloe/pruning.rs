//! `--explain-pruning`: the pruning funnel of each Iceberg scan, printed after a query.
//!
//! The counts are the metrics icefloe registers on each `DataSourceExec` (manifests,
//! data and delete files at each pruning step, deletes applied) plus DataFusion's own
//! row-group and page pruning counters of the Parquet scan.

use std::sync::Arc;

use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::ExecutionPlan;

/// The metric's aggregated value as text, if the scan recorded it.
fn metric(metrics: &MetricsSet, name: &str) -> Option<String> {
    metrics
        .sum_by_name(name)
        .map(|v| v.to_string())
        .filter(|v| !v.is_empty())
}

/// One line per Iceberg scan in the executed `plan` (depth first).
pub fn report(plan: &Arc<dyn ExecutionPlan>) -> Vec<String> {
    let mut lines = vec![];
    collect(plan, &mut lines);
    lines
}

fn collect(plan: &Arc<dyn ExecutionPlan>, lines: &mut Vec<String>) {
    if plan.downcast_ref::<DataSourceExec>().is_some() {
        if let Some(metrics) = plan.metrics() {
            if metric(&metrics, "iceberg_manifests_total").is_some() {
                lines.push(line(&metrics));
            }
        }
    }
    for child in plan.children() {
        collect(child, lines);
    }
}

fn line(m: &MetricsSet) -> String {
    let get = |name: &str| metric(m, name).unwrap_or_else(|| "0".to_string());
    format!(
        "pruning: manifests {} ({} skipped by partition summaries); data files {} \
         ({} skipped by partition, {} by metrics; {} with inconsistent metrics) -> {} planned ({} fully deleted); \
         delete files kept {} (position {}, deletion vectors {}, equality {}; rows deleted by position {}); \
         row groups {}; pages {}",
        get("iceberg_manifests_total"),
        get("iceberg_manifests_skipped"),
        get("iceberg_data_files_total"),
        get("iceberg_data_files_skipped_by_partition"),
        get("iceberg_data_files_skipped_by_metrics"),
        get("iceberg_data_files_with_inconsistent_metrics"),
        get("iceberg_data_files_planned"),
        get("iceberg_data_files_fully_deleted"),
        get("iceberg_delete_files_kept"),
        get("iceberg_position_delete_files"),
        get("iceberg_deletion_vectors"),
        get("iceberg_equality_delete_files"),
        get("iceberg_rows_deleted_by_position"),
        get("row_groups_pruned_statistics"),
        get("page_index_pages_pruned"),
    )
}
