//! Object-store requests of one Iceberg scan, shown by `EXPLAIN ANALYZE`.
//!
//! A scan counts the requests it makes in two phases, each through a FileIO with a
//! request observer ([`FileIO::with_request_observer`](crate::io::FileIO::with_request_observer),
//! [`CountingStore`](crate::io::CountingStore)):
//!
//! - **planning** (`iceberg_planning_*`): the manifest list, the manifests and the
//!   position delete files read while the scan is planned (reads answered by the
//!   session's manifest cache make no request). The table metadata JSON is read when the
//!   table is loaded, before any scan, and is not counted here.
//! - **execution** (`iceberg_store_*`): the data files' footers and column chunks (and
//!   equality delete files), as the scan runs. Footers found in the session's
//!   file-metadata cache make no request.
//!
//! Each phase has `get_requests` (whole-object and ranged GETs; ranged reads are
//! coalesced as object_store's S3 client does), `head_requests`, `list_requests` and
//! `bytes_read` (the GET answers' bodies). They are counters on the metrics set of the
//! scan's `DataSourceExec`:
//!
//! ```text
//! DataSourceExec: ..., metrics=[..., iceberg_planning_get_requests=2,
//!   iceberg_planning_bytes_read=9012, iceberg_store_get_requests=6, ...]
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::metrics::{Count, MetricBuilder, MetricType, MetricValue};
use datafusion::physical_plan::ExecutionPlan;

use crate::io::{RequestObserver, RequestTotals, StoreRequest};

/// The execution-phase counters of one scan: an observer adding to DataFusion `Count`s
/// that [`register`](Self::register) puts on the scan's metrics set, so `EXPLAIN
/// ANALYZE` shows the requests made while the plan ran.
#[derive(Debug, Default)]
pub struct StoreRequestMetrics {
    gets: Count,
    heads: Count,
    lists: Count,
    bytes_read: Count,
}

impl RequestObserver for StoreRequestMetrics {
    fn observe(&self, request: StoreRequest) {
        match request {
            StoreRequest::Get { bytes } => {
                self.gets.add(1);
                self.bytes_read
                    .add(usize::try_from(bytes).unwrap_or(usize::MAX));
            }
            StoreRequest::Head => self.heads.add(1),
            StoreRequest::List => self.lists.add(1),
            // a scan writes nothing
            StoreRequest::Put => {}
        }
    }
}

impl StoreRequestMetrics {
    /// Register the counters (`iceberg_store_*`) and the planning totals
    /// (`iceberg_planning_*`) on the first `DataSourceExec` of `plan` (depth first).
    /// Returns whether one was found.
    pub fn register(&self, plan: &Arc<dyn ExecutionPlan>, planning: RequestTotals) -> bool {
        let Some(exec) = first_data_source(plan) else {
            return false;
        };
        let set = exec.data_source().metrics();
        let planning = [
            ("iceberg_planning_get_requests", planning.gets),
            ("iceberg_planning_head_requests", planning.heads),
            ("iceberg_planning_list_requests", planning.lists),
            ("iceberg_planning_bytes_read", planning.bytes_read),
        ];
        for (name, value) in planning {
            let count = Count::new();
            count.add(usize::try_from(value).unwrap_or(usize::MAX));
            MetricBuilder::new(&set)
                .with_type(MetricType::Summary)
                .build(MetricValue::Count {
                    name: Cow::Borrowed(name),
                    count,
                });
        }
        let execution = [
            ("iceberg_store_get_requests", &self.gets),
            ("iceberg_store_head_requests", &self.heads),
            ("iceberg_store_list_requests", &self.lists),
            ("iceberg_store_bytes_read", &self.bytes_read),
        ];
        for (name, count) in execution {
            MetricBuilder::new(&set)
                .with_type(MetricType::Summary)
                .build(MetricValue::Count {
                    name: Cow::Borrowed(name),
                    count: count.clone(),
                });
        }
        true
    }
}

fn first_data_source(plan: &Arc<dyn ExecutionPlan>) -> Option<&DataSourceExec> {
    if let Some(exec) = plan.downcast_ref::<DataSourceExec>() {
        return Some(exec);
    }
    plan.children().into_iter().find_map(first_data_source)
}
