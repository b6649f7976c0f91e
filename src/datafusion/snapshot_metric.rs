//! The snapshot a write committed, as a DataFusion metric.
//!
//! An `INSERT`, `DELETE`, `UPDATE` or `MERGE` records the id of the snapshot it committed
//! on its sink's metrics set, under [`COMMITTED_SNAPSHOT_METRIC`] (or
//! [`STAGED_SNAPSHOT_METRIC`] when it was staged for write-audit-publish). `EXPLAIN ANALYZE`
//! prints it as `committed_snapshot_id=6519876391283712345`: the id itself, which a gauge
//! would show rounded (`6.5 E`). The CLI reads it back with [`committed_snapshots`].

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock};

use datafusion::physical_plan::metrics::{
    CustomMetricValue, ExecutionPlanMetricsSet, MetricBuilder, MetricValue,
};
use datafusion::physical_plan::ExecutionPlan;

/// The name of the metric holding the committed snapshot id.
pub const COMMITTED_SNAPSHOT_METRIC: &str = "committed_snapshot_id";

/// The name of the metric holding the id of a snapshot committed staged for
/// write-audit-publish (no branch points at it), in place of
/// [`COMMITTED_SNAPSHOT_METRIC`].
pub const STAGED_SNAPSHOT_METRIC: &str = "staged_snapshot_id";

/// A snapshot id as a metric value, shown in full. Empty until set; aggregating keeps
/// the first id set.
#[derive(Debug, Default)]
pub struct SnapshotIdMetric(OnceLock<i64>);

impl SnapshotIdMetric {
    /// The snapshot id, once set.
    pub fn id(&self) -> Option<i64> {
        self.0.get().copied()
    }
}

impl fmt::Display for SnapshotIdMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.id() {
            Some(id) => write!(f, "{id}"),
            None => write!(f, "none"),
        }
    }
}

impl CustomMetricValue for SnapshotIdMetric {
    fn new_empty(&self) -> Arc<dyn CustomMetricValue> {
        Arc::new(Self::default())
    }

    fn aggregate(&self, other: Arc<dyn CustomMetricValue>) {
        if let Some(id) = other
            .as_any()
            .downcast_ref::<Self>()
            .and_then(SnapshotIdMetric::id)
        {
            let _ = self.0.set(id);
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_eq(&self, other: &Arc<dyn CustomMetricValue>) -> bool {
        other
            .as_any()
            .downcast_ref::<Self>()
            .is_some_and(|o| o.id() == self.id())
    }
}

/// The metric a write's snapshot id is recorded under: [`STAGED_SNAPSHOT_METRIC`] when it
/// was staged under a write-audit-publish id, else [`COMMITTED_SNAPSHOT_METRIC`].
fn snapshot_metric(wap_id: Option<&str>) -> &'static str {
    if wap_id.is_some() {
        STAGED_SNAPSHOT_METRIC
    } else {
        COMMITTED_SNAPSHOT_METRIC
    }
}

/// Record on `metrics` that the write committed snapshot `id` (staged for
/// write-audit-publish when `wap_id` is set).
pub(crate) fn record_snapshot(metrics: &ExecutionPlanMetricsSet, wap_id: Option<&str>, id: i64) {
    let value = SnapshotIdMetric::default();
    let _ = value.0.set(id);
    MetricBuilder::new(metrics).build(MetricValue::Custom {
        name: snapshot_metric(wap_id).into(),
        value: Arc::new(value),
    });
}

/// The snapshot ids the writes in `plan` (and its children) committed, each with whether
/// it was staged for write-audit-publish; empty before the plan ran.
pub fn committed_snapshots(plan: &dyn ExecutionPlan) -> Vec<(i64, bool)> {
    let mut out: Vec<(i64, bool)> = plan
        .metrics()
        .iter()
        .flat_map(|set| set.iter().cloned().collect::<Vec<_>>())
        .filter_map(|m| match m.value() {
            MetricValue::Custom { name, value }
                if name == COMMITTED_SNAPSHOT_METRIC || name == STAGED_SNAPSHOT_METRIC =>
            {
                let id = value.as_any().downcast_ref::<SnapshotIdMetric>()?.id()?;
                Some((id, name == STAGED_SNAPSHOT_METRIC))
            }
            _ => None,
        })
        .collect();
    for child in plan.children() {
        out.extend(committed_snapshots(child.as_ref()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_show_in_full_and_aggregate() {
        let set = ExecutionPlanMetricsSet::new();
        record_snapshot(&set, None, 8_312_345_678_901_234_567);
        let metrics = set.clone_inner().aggregate_by_name();
        assert_eq!(
            metrics.to_string(),
            "committed_snapshot_id=8312345678901234567"
        );
        let staged = ExecutionPlanMetricsSet::new();
        record_snapshot(&staged, Some("wap-1"), -5);
        assert_eq!(
            staged.clone_inner().aggregate_by_name().to_string(),
            "staged_snapshot_id=-5"
        );
    }
}
