//! [`BallistaReadsOnly`]: the analyzer rule of the Ballista client sessions icefloe
//! builds, refusing on the client, by name, what a Ballista cluster cannot run for
//! icefloe, before the plan is serialized for the scheduler:
//! - **writes** (`INSERT`, `DELETE`, `UPDATE`, `MERGE`, `TRUNCATE`) to an Iceberg table:
//!   the scheduler reloads a table from its identity as a read-only table
//!   ([`IcebergLogicalCodec`](super::IcebergLogicalCodec)), whose refusal said the table
//!   "was opened by location or at a snapshot", and icefloe's writing nodes are not
//!   planned by Ballista's scheduler;
//! - **metadata tables** (`t$files`, `t$snapshots`, …) and other in-memory tables of
//!   icefloe's ([`ReadOnlyTable`]): their rows are computed by the client and no codec
//!   sends them; serializing the plan failed with DataFusion's "LogicalExtensionCodec is
//!   not provided", reported as an internal error of DataFusion.

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::config::ConfigOptions;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::LogicalPlan;
use datafusion::optimizer::AnalyzerRule;

use super::read_only::ReadOnlyTable;
use super::table_provider::IcebergTableProvider;

/// The rule's name.
pub(crate) const BALLISTA_READS_ONLY: &str = "icefloe_ballista_reads_only";

/// Fails the analysis of a plan writing to an Iceberg table or reading one of icefloe's
/// in-memory tables (see the module docs); other plans pass unchanged.
#[derive(Debug, Default)]
pub(crate) struct BallistaReadsOnly;

/// The refusal of `node`, if it is a write to an Iceberg table or a scan of an in-memory
/// table.
fn refusal(node: &LogicalPlan) -> Option<DataFusionError> {
    match node {
        LogicalPlan::Dml(dml) => {
            let provider = source_as_provider(&dml.target).ok()?;
            provider.downcast_ref::<IcebergTableProvider>()?;
            Some(DataFusionError::Plan(format!(
                "{} on table '{}': writes are not supported on a Ballista session (icefloe \
                 runs reads only on Ballista); write through a single-node or a \
                 datafusion-distributed session",
                dml.op.name(),
                dml.table_name
            )))
        }
        LogicalPlan::TableScan(scan) => {
            let provider = source_as_provider(&scan.source).ok()?;
            let table = provider.downcast_ref::<ReadOnlyTable>()?;
            Some(DataFusionError::Plan(format!(
                "'{}' ({}): metadata tables on Ballista are not supported (the client \
                 computes their rows, which Ballista's codecs do not send); query it on a \
                 single-node or a datafusion-distributed session",
                scan.table_name,
                table.what()
            )))
        }
        _ => None,
    }
}

impl AnalyzerRule for BallistaReadsOnly {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        let mut refused = None;
        plan.apply_with_subqueries(|node| {
            refused = refusal(node);
            Ok(match refused {
                Some(_) => TreeNodeRecursion::Stop,
                None => TreeNodeRecursion::Continue,
            })
        })?;
        match refused {
            Some(e) => Err(e),
            None => Ok(plan),
        }
    }

    fn name(&self) -> &str {
        BALLISTA_READS_ONLY
    }
}
