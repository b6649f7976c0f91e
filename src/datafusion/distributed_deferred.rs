//! [`RefuseDeferredScans`]: a distributed session's physical optimizer rule refusing a
//! scan that plans each manifest as it reads it (deferred planning,
//! `icefloe.deferred_planning_min_files`) when the query is planned, not when its plan is
//! sent to workers.
//!
//! Distributed sessions start with deferred planning off (their codecs send planned
//! files only), but `SET icefloe.deferred_planning_min_files = …` turns it back on. The
//! codec then refused the scan while datafusion-distributed sent a task's plan, an error
//! that never reached the user: the worker waited 10 s for the plan and failed with its
//! own timeout. This rule gives the codec's error (naming the option) at planning.

use std::sync::Arc;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::Result as DFResult;
use datafusion::config::ConfigOptions;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;

use super::codec::deferred_scan_error;
use super::iceberg_source::IcebergParquetSource;

/// The rule's name.
pub(crate) const REFUSE_DEFERRED_SCANS: &str = "icefloe_refuse_deferred_scans";

/// Fails planning of a plan holding a deferred Iceberg scan, with
/// `IcebergPhysicalCodec`'s error ("set icefloe.deferred_planning_min_files = 0 …").
/// Plans without one pass unchanged.
#[derive(Debug, Default)]
pub(crate) struct RefuseDeferredScans;

/// Whether `plan` is an Iceberg scan whose files are planned as it reads its manifests.
fn is_deferred_scan(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.downcast_ref::<DataSourceExec>()
        .and_then(|dse| dse.data_source().downcast_ref::<FileScanConfig>())
        .and_then(|config| config.file_source().downcast_ref::<IcebergParquetSource>())
        .is_some_and(|source| source.state().deferred.is_some())
}

impl PhysicalOptimizerRule for RefuseDeferredScans {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let mut deferred = false;
        plan.apply(|node| {
            deferred = is_deferred_scan(node);
            Ok(match deferred {
                true => TreeNodeRecursion::Stop,
                false => TreeNodeRecursion::Continue,
            })
        })?;
        match deferred {
            true => Err(deferred_scan_error()),
            false => Ok(plan),
        }
    }

    fn name(&self) -> &str {
        REFUSE_DEFERRED_SCANS
    }

    fn schema_check(&self) -> bool {
        true
    }
}
