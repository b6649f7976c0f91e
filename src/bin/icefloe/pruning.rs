//! `--explain-pruning`: the pruning funnel of each Iceberg scan, printed after a query and
//! named by its table (the `iceberg_table` metric of the scan says which).
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
use datafusion::logical_expr::{LogicalPlan, WriteOp};
use datafusion::physical_plan::metrics::{MetricValue, MetricsSet};
use datafusion::physical_plan::ExecutionPlan;
use icefloe::datafusion::metrics::{TABLE_LABEL, TABLE_METRIC};

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

/// One Iceberg scan of a query's logical plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    /// The table's name as written in the query.
    pub name: String,
    /// What its executed scan's `iceberg_table` metric says
    /// ([`icefloe::IcebergTableProvider::scan_name`]).
    pub scan_name: String,
}

/// The Iceberg tables `plan` scans.
pub fn iceberg_scans(plan: &LogicalPlan) -> Vec<Scanned> {
    let scan_name = |source: &Arc<dyn datafusion::logical_expr::TableSource>| {
        let provider = source_as_provider(source).ok()?;
        let iceberg = provider.downcast_ref::<icefloe::IcebergTableProvider>()?;
        Some(iceberg.scan_name())
    };
    let (mut scans, mut merge_targets) = (vec![], vec![]);
    let _ = plan.apply_with_subqueries(|node| {
        match node {
            LogicalPlan::TableScan(scan) => {
                if let Some(scan_name) = scan_name(&scan.source) {
                    let name = scan.table_name.to_string();
                    scans.push(Scanned { name, scan_name });
                }
            }
            // a `MERGE`'s target is no `TableScan` of the plan (its source is): its
            // row-level scan is named by the statement's target (it was named by its
            // location)
            LogicalPlan::Dml(dml) if matches!(dml.op, WriteOp::MergeInto(_)) => {
                if let Some(scan_name) = scan_name(&dml.target) {
                    let name = dml.table_name.to_string();
                    merge_targets.push(Scanned { name, scan_name });
                }
            }
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    });
    for target in merge_targets {
        if !scans.iter().any(|s| s.scan_name == target.scan_name) {
            scans.push(target);
        }
    }
    scans
}

/// One line per Iceberg scan in the executed `plan` (depth first), named as the query
/// names its table, and one per table of `scanned` (from [`iceberg_scans`]) that no
/// executed scan read. A scan is matched to the table by the name its `iceberg_table`
/// metric carries (the order of the two lists differs where a scan was answered from
/// metadata: a funnel was printed under the other table's name).
pub fn report(plan: &Arc<dyn ExecutionPlan>, scanned: &[Scanned]) -> Vec<String> {
    let mut funnels = vec![];
    collect(plan, &mut funnels);
    let mut unmatched: Vec<Option<&Scanned>> = scanned.iter().map(Some).collect();
    let mut lines = vec![];
    for (scan_name, funnel) in funnels {
        let table = scan_name.as_deref().and_then(|scan_name| {
            unmatched
                .iter_mut()
                .find(|s| s.is_some_and(|s| s.scan_name == scan_name))
                .and_then(Option::take)
        });
        let name = match (table, &scan_name) {
            (Some(table), _) => table.name.clone(),
            (None, Some(scan_name)) => scan_name.clone(),
            (None, None) => "?".to_string(),
        };
        lines.push(format!("pruning: {name}: {funnel}"));
    }
    for table in unmatched.into_iter().flatten() {
        lines.push(format!(
            "pruning: {}: no data file read; the answer came from table metadata \
             (row counts or bounds in the manifest list or manifests) or every data file was \
             pruned",
            table.name
        ));
    }
    lines
}

/// Each Iceberg scan's table (its `iceberg_table` metric's label) and funnel.
fn collect(plan: &Arc<dyn ExecutionPlan>, funnels: &mut Vec<(Option<String>, String)>) {
    if plan.downcast_ref::<DataSourceExec>().is_some() {
        if let Some(metrics) = plan.metrics() {
            if count(&metrics, "iceberg_manifests_total").is_some() {
                funnels.push((table_of(&metrics), line(&metrics)));
            }
        }
    }
    for child in plan.children() {
        collect(child, funnels);
    }
}

/// The table a scan's metrics name ([`TABLE_METRIC`]).
fn table_of(metrics: &MetricsSet) -> Option<String> {
    metrics.iter().find_map(|m| {
        (m.value().name() == TABLE_METRIC)
            .then(|| m.labels().iter().find(|l| l.name() == TABLE_LABEL))
            .flatten()
            .map(|l| l.value().to_string())
    })
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
        "manifests {} ({} skipped by partition summaries, {} not opened: LIMIT already covered); \
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
