//! Iceberg queries on datafusion-distributed (feature `distributed`, issue 15).
//!
//! [`IcebergWorkerSessionBuilder`] is what a worker process needs: its sessions decode
//! icefloe's plan nodes with [`IcebergPhysicalCodec`]. On the coordinator, register the
//! same codec with `datafusion_distributed::DistributedExt::with_distributed_user_codec`
//! next to the planner and the worker and channel resolvers of your deployment.
//!
//! [`in_process_session`] builds a coordinator session whose queries run on in-process
//! workers: datafusion-distributed's in-memory gRPC channel (its `integration`
//! utilities), so every task's plan is encoded, sent and decoded as it would be between
//! machines. All `workers` URLs are served by one in-process worker service.
//!
//! `INSERT` runs distributed too: the writing half
//! ([`IcebergDataFileWriterExec`](super::IcebergDataFileWriterExec)) sits under a
//! `CoalescePartitionsExec`, so datafusion-distributed puts it in the stage of the rows it
//! writes, on the workers, and returns the data files each task wrote (as rows) to the
//! coordinator, where [`IcebergWriteExec`](super::IcebergWriteExec) commits them all in
//! one snapshot. A query that fails commits nothing.
//!
//! The session refuses a scan planning each manifest as it reads it (deferred planning,
//! when `icefloe.deferred_planning_min_files` is set again after the session turned it
//! off) when the query is planned, with the codec's error naming the option
//! (`distributed_deferred`), not when a task's plan is sent.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::test_utils::in_memory_channel_resolver::{
    InMemoryChannelResolver, InMemoryWorkerResolver,
};
use datafusion_distributed::{
    DistributedExt, SessionStateBuilderExt, WorkerQueryContext, WorkerSessionBuilder,
};
use datafusion_proto::physical_plan::PhysicalExtensionCodec;

use super::codec::{IcebergPhysicalCodec, UDFS_BY_NAME};
use super::distributed_deferred::RefuseDeferredScans;
use super::min_max::register_min_max_in;
use super::options::without_deferred_planning;

/// A worker's sessions with [`IcebergPhysicalCodec`] registered and the functions
/// icefloe's plans resolve by name there ([`register_worker_functions`]: `min`/`max`, a
/// scan's one NaN, a write's sort by a transform, float keys, write flooring, the
/// session-zone readings) (give it to `datafusion_distributed::Worker::from_session_builder`).
#[derive(Debug, Clone, Copy, Default)]
pub struct IcebergWorkerSessionBuilder;

#[async_trait::async_trait]
impl WorkerSessionBuilder for IcebergWorkerSessionBuilder {
    async fn build_session_state(&self, ctx: WorkerQueryContext) -> DFResult<SessionState> {
        let mut state = ctx
            .builder
            .with_distributed_user_codec(IcebergPhysicalCodec)
            .build();
        register_worker_functions(&mut state)?;
        Ok(state)
    }
}

/// Registers in a worker's `state` the functions the plans icefloe sends resolve by
/// name there: icefloe's `min`/`max` ([`register_min_max_in`]), Spark's `greatest` and
/// `least` of floats, and its scalar functions (`icefloe_canonical_nan`, a scan's one
/// NaN; `icefloe_partition_transform`, a write's sort by a transform;
/// `icefloe_normalize_nan_and_zero`, float keys;
/// `icefloe_floor_time_units`; `icefloe_[try_]zoned_wall_clock`). datafusion-proto's
/// composed codec, through which datafusion-distributed sends plans, never hands a
/// function sent by name to [`IcebergPhysicalCodec`], so a worker session built without
/// [`IcebergWorkerSessionBuilder`] must call this. Also Spark's functions from
/// `datafusion-spark` under the names the session lacks (`date_add`, `collect_list`, …).
///
/// Errors: DataFusion's, registering a function.
pub fn register_worker_functions(state: &mut SessionState) -> DFResult<()> {
    register_min_max_in(state);
    // Spark's `greatest`/`least` of floats: datafusion-distributed's codec sends them by
    // name, which a worker without them resolves to DataFusion's
    super::greatest_least::register_greatest_least_in(state)?;
    for name in UDFS_BY_NAME {
        state.register_udf(IcebergPhysicalCodec.try_decode_udf(name, &[])?)?;
    }
    // Spark's functions from `datafusion-spark`, under the names the session lacks (as
    // icefloe's sessions register them)
    let scalar = super::spark_functions::missing_scalar_functions(|name| {
        state.scalar_functions().contains_key(name)
    });
    for f in scalar {
        state.register_udf(std::sync::Arc::new(f))?;
    }
    let aggregate = super::spark_functions::missing_aggregate_functions(|name| {
        state.aggregate_functions().contains_key(name)
    });
    for f in aggregate {
        state.register_udaf(f)?;
    }
    Ok(())
}

/// A coordinator session over `workers` in-process workers (see the module docs), with
/// `config` (its `target_partitions` is the partitions of each task).
/// `bytes_per_task_partition` is how many bytes of data files one scan partition of a
/// task reads: a scan of `B` planned bytes asks for `B / bytes_per_task_partition /
/// target_partitions` tasks (datafusion-distributed's file-scan rule, capped at the
/// number of workers).
///
/// Must be called inside a Tokio runtime (the worker service is spawned on it).
/// Errors (DataFusion's `Configuration` error, before any query runs):
/// `bytes_per_task_partition` 0 (datafusion-distributed's file-scan rule divides by it);
/// `workers` 0 (a coordinator with no worker is no distributed session: use a plain
/// `SessionContext`).
pub fn in_process_session(
    workers: usize,
    config: SessionConfig,
    bytes_per_task_partition: usize,
) -> DFResult<SessionContext> {
    in_process_session_with(
        workers,
        config,
        bytes_per_task_partition,
        IcebergWorkerSessionBuilder,
    )
}

/// [`in_process_session`] whose worker sessions come from `worker_sessions` (e.g. an
/// [`IcebergWorkerSessionBuilder`] wrapped to add UDFs or to observe the worker), which
/// must register [`IcebergPhysicalCodec`] or a codec delegating to it, and icefloe's
/// functions ([`register_worker_functions`]). The coordinator has them
/// ([`register_min_max`](super::register_min_max)).
///
/// Must be called inside a Tokio runtime. Errors: as [`in_process_session`]'s (0 workers,
/// 0 `bytes_per_task_partition`).
pub fn in_process_session_with(
    workers: usize,
    config: SessionConfig,
    bytes_per_task_partition: usize,
    worker_sessions: impl WorkerSessionBuilder + Send + Sync + 'static,
) -> DFResult<SessionContext> {
    if workers == 0 {
        return Err(DataFusionError::Configuration(
            "in_process_session: workers must be at least 1".into(),
        ));
    }
    if bytes_per_task_partition == 0 {
        return Err(DataFusionError::Configuration(
            "in_process_session: bytes_per_task_partition must be at least 1".into(),
        ));
    }
    let channels = InMemoryChannelResolver::from_session_builder(worker_sessions);
    let mut state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(without_deferred_planning(config))
        .with_distributed_planner()
        .with_distributed_worker_resolver(InMemoryWorkerResolver::new(workers))
        .with_distributed_channel_resolver(channels)
        .with_distributed_user_codec(IcebergPhysicalCodec)
        .with_distributed_file_scan_config_bytes_per_partition(bytes_per_task_partition)?
        .with_physical_optimizer_rule(Arc::new(RefuseDeferredScans))
        .build();
    register_min_max_in(&mut state);
    let ctx = SessionContext::from(state);
    super::install_float_key_rule(&ctx);
    Ok(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 workers or 0 bytes per task partition are refused when the session is made,
    /// not by a divide-by-zero panic at the first query.
    #[tokio::test]
    async fn zero_workers_or_bytes_per_partition_are_refused() {
        for (workers, bytes, needle) in [
            (2, 0, "bytes_per_task_partition must be at least 1"),
            (0, 4096, "workers must be at least 1"),
        ] {
            let Err(e) = in_process_session(workers, SessionConfig::new(), bytes) else {
                panic!("{workers} workers, {bytes} bytes accepted");
            };
            assert!(matches!(e, DataFusionError::Configuration(_)), "{e}");
            assert!(e.to_string().contains(needle), "{e}");
        }
        assert!(in_process_session(1, SessionConfig::new(), 1).is_ok());
    }
}
