//! `--explain-pruning`: the pruning funnel of each Iceberg scan, printed after a query.
//!
//! The counts are the metrics icefloe registers on each `DataSourceExec` (manifests,
//! data and delete files at each pruning step, deletes applied) plus DataFusion's own
//! row-group and page pruning counters of the Parquet scan, printed exactly (`9,999`).
//! An Iceberg table the query read without any data-file scan in the executed plan
//! (a `count(*)` answered from the row counts in the manifest list, a `min`/`max` from
//! exact bounds in the manifests, or a filter that pruned
//! every file) gets a line saying so.

use std::sync::Arc;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::metrics::{MetricValue, MetricsSet};
use datafusion::physical_plan::ExecutionPlan;

/// `n` with a `,` between groups of three digits.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The metric's value summed over partitions, if the scan recorded it.
fn count(metrics: &MetricsSet, name: &str) -> Option<usize> {
    metrics.sum_by_name(name).map(|v| v.as_usize())
}

/// The Iceberg tables `plan` scans (table names as written in the query).
pub fn iceberg_scans(plan: &LogicalPlan) -> Vec<String> {
    let mut names = vec![];
    let _ = plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node {
            let is_iceberg = source_as_provider(&scan.source)
                .is_ok_and(|p| p.downcast_ref::<icefloe::IcebergTableProvider>().is_some());
            if is_iceberg {
                names.push(scan.table_name.to_string());
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    names
}

/// One line per Iceberg scan in the executed `plan` (depth first), and one per table of
/// `scanned` (from [`iceberg_scans`]) beyond the scans found.
pub fn report(plan: &Arc<dyn ExecutionPlan>, scanned: &[String]) -> Vec<String> {
    let mut lines = vec![];
    collect(plan, &mut lines);
    for table in scanned.iter().skip(lines.len()) {
        lines.push(format!(
            "pruning: {table}: no data file read; the answer came from table metadata \
             (row counts or bounds in the manifest list or manifests) or every data file was \
             pruned"
        ));
    }
    lines
}

fn collect(plan: &Arc<dyn ExecutionPlan>, lines: &mut Vec<String>) {
    if plan.downcast_ref::<DataSourceExec>().is_some() {
        if let Some(metrics) = plan.metrics() {
            if count(&metrics, "iceberg_manifests_total").is_some() {
                lines.push(line(&metrics));
            }
        }
    }
    for child in plan.children() {
        collect(child, lines);
    }
}

/// DataFusion's pruning counters (`row_groups_pruned_statistics`, …) summed over
/// partitions: total, matched, fully matched.
fn pruning_counts(m: &MetricsSet, name: &str) -> String {
    let (mut pruned, mut matched, mut fully) = (0, 0, 0);
    for metric in m.iter() {
        if let MetricValue::PruningMetrics {
            name: n,
            pruning_metrics: p,
        } = metric.value()
        {
            if n.as_ref() == name {
                pruned += p.pruned();
                matched += p.matched();
                fully += p.fully_matched();
            }
        }
    }
    format!(
        "{} total, {} matched, {} fully matched",
        thousands(pruned + matched),
        thousands(matched),
        thousands(fully)
    )
}

fn line(m: &MetricsSet) -> String {
    let get = |name: &str| thousands(count(m, name).unwrap_or(0));
    format!(
        "pruning: manifests {} ({} skipped by partition summaries, {} not opened: LIMIT already covered); \
         data files {} ({} skipped by partition, {} by metrics; {} with inconsistent metrics) -> {} planned ({} fully deleted); \
         delete files kept {} (position {}, deletion vectors {}, equality {}, applied as positions to {} data files; rows deleted by position {}); \
         row groups {}; pages {}",
        get("iceberg_manifests_total"),
        get("iceberg_manifests_skipped"),
        get("iceberg_manifests_skipped_by_limit"),
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
        get("iceberg_data_files_equality_resolved"),
        get("iceberg_rows_deleted_by_position"),
        pruning_counts(m, "row_groups_pruned_statistics"),
        pruning_counts(m, "page_index_pages_pruned"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(9_999), "9,999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
