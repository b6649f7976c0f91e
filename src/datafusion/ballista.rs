//! Iceberg queries on Apache DataFusion Ballista 55 (feature `ballista`, issue 15).
//!
//! A Ballista client ships the **logical** plan to the scheduler, which plans it and
//! sends each stage's **physical** plan to executors. Both hops need icefloe's codecs,
//! registered on the client, the scheduler and every executor:
//! - [`ballista_logical_codec`]: [`IcebergLogicalCodec`] over Ballista's own logical
//!   codec. An [`IcebergTableProvider`](super::IcebergTableProvider) crosses as its
//!   identity (metadata location, FileIO, snapshot and schema ids) and the scheduler
//!   reloads the table from it; the scheduler reads the manifests when it plans.
//! - [`IcebergBallistaPhysicalCodec`]: [`IcebergPhysicalCodec`] (scans with their
//!   position-delete / deletion-vector row selections, `EqualityDeleteExec`, the field-id
//!   column mapping) next to Ballista's codec for its shuffle nodes.
//!
//! Both carry icefloe's `min`/`max` ([`MinMax`](super::min_max::MinMax)) as themselves: a
//! scheduler or executor would resolve the names to DataFusion's. The client sessions
//! built here have them ([`register_min_max_in`]).
//!
//! [`with_iceberg_codecs`] puts both in a client's `SessionConfig` (Ballista's
//! standalone scheduler and executor take them from the client's state);
//! [`standalone_session`] starts an in-process scheduler and executor with them. For
//! separate scheduler / executor processes, set both codecs as their
//! `override_logical_codec` / `override_physical_codec` (README "Distributed queries",
//! `examples/ballista_nodes.rs`).
//!
//! Reads only: the tables a scheduler decodes are read-only, and icefloe's writing nodes
//! are not planned by Ballista's scheduler. The client sessions built here refuse a write
//! to an Iceberg table and a metadata table by name before sending the plan
//! (`ballista_reads`).

use std::sync::Arc;

use ::ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::execution::{FunctionRegistry, SessionStateBuilder, TaskContext};
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};

use super::ballista_reads::BallistaReadsOnly;
use super::codec::{plan_scalar_functions, IcebergPhysicalCodec};
use super::logical_codec::IcebergLogicalCodec;
use super::min_max::register_min_max_in;
use super::options::without_deferred_planning;

/// The first byte of a node Ballista's codec wrote.
const BALLISTA_NODE: u8 = 0;
/// The first byte of a node [`IcebergPhysicalCodec`] wrote.
const ICEBERG_NODE: u8 = 1;

/// The `PhysicalExtensionCodec` of a Ballista cluster reading Iceberg tables: Ballista's
/// nodes (shuffle writers and readers, …) through `BallistaPhysicalExtensionCodec`,
/// everything else through [`IcebergPhysicalCodec`], whose error names a node neither
/// can send. Each encoded node starts with one byte saying which codec wrote it.
#[derive(Debug, Default)]
pub struct IcebergBallistaPhysicalCodec {
    ballista: BallistaPhysicalExtensionCodec,
}

impl PhysicalExtensionCodec for IcebergBallistaPhysicalCodec {
    /// Scalar functions are icefloe's ([`IcebergPhysicalCodec::try_decode_udf`]), then
    /// Ballista's.
    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> DFResult<Arc<ScalarUDF>> {
        IcebergPhysicalCodec
            .try_decode_udf(name, buf)
            .or_else(|_| self.ballista.try_decode_udf(name, buf))
    }

    /// icefloe's `greatest`/`least` as [`IcebergPhysicalCodec`] sends them (by their own
    /// bytes: an executor would resolve the names to DataFusion's), others as Ballista
    /// does.
    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> DFResult<()> {
        let before = buf.len();
        IcebergPhysicalCodec.try_encode_udf(node, buf)?;
        match buf.len() == before {
            true => self.ballista.try_encode_udf(node, buf),
            false => Ok(()),
        }
    }

    /// Aggregate functions are icefloe's `min`/`max`
    /// ([`IcebergPhysicalCodec::try_decode_udaf`]), then Ballista's.
    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> DFResult<Arc<AggregateUDF>> {
        IcebergPhysicalCodec
            .try_decode_udaf(name, buf)
            .or_else(|_| self.ballista.try_decode_udaf(name, buf))
    }

    /// icefloe's `min`/`max` as [`IcebergPhysicalCodec`] sends them, others as Ballista
    /// does.
    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> DFResult<()> {
        let before = buf.len();
        IcebergPhysicalCodec.try_encode_udaf(node, buf)?;
        match buf.len() == before {
            true => self.ballista.try_encode_udaf(node, buf),
            false => Ok(()),
        }
    }

    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        match buf.split_first() {
            Some((&BALLISTA_NODE, rest)) => {
                let ctx = with_plan_functions(ctx);
                self.ballista
                    .try_decode(rest, inputs, &ctx, proto_converter)
            }
            Some((&ICEBERG_NODE, rest)) => {
                IcebergPhysicalCodec.try_decode(rest, inputs, ctx, proto_converter)
            }
            _ => Err(DataFusionError::Plan(
                "IcebergBallistaPhysicalCodec: a plan node written by another codec".into(),
            )),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<()> {
        let mut bytes = vec![];
        if self
            .ballista
            .try_encode(Arc::clone(&node), &mut bytes, proto_converter)
            .is_ok()
        {
            buf.push(BALLISTA_NODE);
        } else {
            bytes.clear();
            IcebergPhysicalCodec.try_encode(node, &mut bytes, proto_converter)?;
            buf.push(ICEBERG_NODE);
        }
        buf.extend_from_slice(&bytes);
        Ok(())
    }
}

/// `ctx` with icefloe's scalar functions ([`plan_scalar_functions`]) where it lacks them.
/// Ballista's codec decodes the expressions of its own nodes (a hash shuffle's keys, a
/// range shuffle's merge order: `ORDER BY` over several partitions) with itself as the
/// codec, which resolves a function by name in the task's functions only and knows none
/// of icefloe's (`icefloe_normalize_nan_and_zero` of a float sort key failed the stage);
/// an executor's functions are its own, not the client's.
fn with_plan_functions(ctx: &TaskContext) -> TaskContext {
    let mut scalar = ctx.scalar_functions().clone();
    for udf in plan_scalar_functions(|name| scalar_function_of(ctx, name)) {
        scalar.insert(udf.name().to_string(), udf);
    }
    TaskContext::new(
        ctx.task_id(),
        ctx.session_id(),
        ctx.session_config().clone(),
        scalar,
        ctx.higher_order_functions().clone(),
        ctx.aggregate_functions().clone(),
        ctx.window_functions().clone(),
        ctx.runtime_env(),
    )
}

/// The scalar function `ctx` resolves `name` to, by name or alias.
fn scalar_function_of(ctx: &TaskContext, name: &str) -> Option<Arc<ScalarUDF>> {
    ctx.udf(name).ok()
}

/// [`IcebergLogicalCodec`] over Ballista's logical codec (its file formats and cache
/// nodes): the logical codec of a client, scheduler or executor.
pub fn ballista_logical_codec() -> IcebergLogicalCodec {
    IcebergLogicalCodec::new(Arc::new(BallistaLogicalExtensionCodec::default()))
}

/// `config` with icefloe's logical and physical codecs registered as Ballista's
/// (`with_ballista_logical_extension_codec` / `with_ballista_physical_extension_codec`),
/// and `icefloe.deferred_planning_min_files` = 0 (the codecs send planned files only).
pub fn with_iceberg_codecs(config: SessionConfig) -> SessionConfig {
    without_deferred_planning(config)
        .with_ballista_logical_extension_codec(Arc::new(ballista_logical_codec()))
        .with_ballista_physical_extension_codec(Arc::new(IcebergBallistaPhysicalCodec::default()))
}

/// A client session on an in-process Ballista cluster (Ballista's `standalone` mode: a
/// scheduler and one executor in this process, on loopback gRPC ports the OS picks),
/// all three with icefloe's codecs. `config` is the client's (e.g.
/// `SessionConfig::new_with_ballista().with_ballista_standalone_parallelism(4)`: the
/// executor's task slots); its codecs are replaced by icefloe's ([`with_iceberg_codecs`]).
///
/// Must be called inside a multi-threaded Tokio runtime (the scheduler and executor are
/// spawned on it). Errors: `ballista.standalone.parallelism` 0 (DataFusion's
/// `Configuration` error: an executor with no task slot runs nothing, and Ballista's
/// would hang every query); the scheduler or executor cannot start (Ballista's error).
pub async fn standalone_session(config: SessionConfig) -> DFResult<SessionContext> {
    if config.ballista_standalone_parallelism() == 0 {
        return Err(DataFusionError::Configuration(
            "standalone_session: ballista.standalone.parallelism (the executor's task \
             slots) must be at least 1"
                .into(),
        ));
    }
    let mut state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(with_iceberg_codecs(config))
        .build();
    register_min_max_in(&mut state);
    let ctx = SessionContext::standalone_with_state(state).await?;
    super::install_float_key_rule(&ctx);
    ctx.add_analyzer_rule(Arc::new(BallistaReadsOnly));
    Ok(ctx)
}

/// A client session of the Ballista scheduler at `url` (`df://HOST:PORT`) with icefloe's
/// codecs in `config` ([`with_iceberg_codecs`]); the scheduler and executors must have
/// them too (`override_logical_codec` / `override_physical_codec`).
///
/// Ballista only parses `url` here (any scheme; the port defaults to 50050) and
/// contacts the scheduler at the first query, so an unreachable or wrong scheduler
/// fails that query, not this call.
///
/// Errors: a `url` that does not parse or has no host (Ballista's `Configuration`
/// error).
pub async fn remote_session(url: &str, config: SessionConfig) -> DFResult<SessionContext> {
    let mut state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(with_iceberg_codecs(config))
        .build();
    register_min_max_in(&mut state);
    let ctx = SessionContext::remote_with_state(url, state).await?;
    super::install_float_key_rule(&ctx);
    ctx.add_analyzer_rule(Arc::new(BallistaReadsOnly));
    Ok(ctx)
}

#[cfg(test)]
mod session_tests {
    use super::*;

    /// An executor of 0 task slots is refused when the session is made (Ballista's
    /// executor would panic and every query hang).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn zero_standalone_parallelism_is_refused() {
        let config = SessionConfig::new_with_ballista().with_ballista_standalone_parallelism(0);
        let Err(e) = standalone_session(config).await else {
            panic!("0 task slots accepted");
        };
        assert!(matches!(e, DataFusionError::Configuration(_)), "{e}");
        assert!(e.to_string().contains("must be at least 1"), "{e}");
    }
}
