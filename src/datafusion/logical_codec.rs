//! [`IcebergLogicalCodec`]: an [`IcebergTableProvider`] in a serialized logical plan
//! (features `distributed` / `ballista`, issue 15), for engines whose client ships the
//! logical plan (Ballista: client → scheduler).
//!
//! A table crosses as its **identity**, never its in-memory metadata: the metadata file
//! location (metadata files are immutable, so it names one table version), the FileIO
//! the table is read through (properties, location remaps, vended credentials), the
//! snapshot id and schema id read, and how the provider exposes it (view types, metadata
//! columns). The receiving process reloads the metadata file through that FileIO
//! ([`Table::load`]) and checks that the provider's Arrow schema is the one the plan was
//! built with. icefloe's `min`/`max` ([`MinMax`](super::min_max::MinMax)) cross as
//! themselves (a scheduler would resolve the names to DataFusion's). Everything else in a
//! serialized plan goes to an inner codec (by default `datafusion-proto`'s
//! `DefaultLogicalExtensionCodec`).
//!
//! The decoded provider is read-only (no write target, no branch to commit to): `INSERT`
//! through a plan decoded elsewhere is refused by the provider. Its manifest cache is
//! its own.
//!
//! The encoded bytes hold the FileIO properties, which can include cloud credentials:
//! send them only to processes trusted with the table.

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result as DFResult, TableReference};
use datafusion::datasource::file_format::parquet::ParquetFormatFactory;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    AggregateUDF, Extension, HigherOrderUDF, LogicalPlan, ScalarUDF, WindowUDF,
};
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use prost::Message;
use serde::{Deserialize, Serialize};

use super::codec::FileIoState;
use super::float_keys::{normalize_nan_and_zero_udf, NORMALIZE_NAN_AND_ZERO};
use super::greatest_least::{decode_greatest_least, encode_greatest_least};
use super::min_max::{decode_min_max, encode_min_max};
use super::nan_safe_parquet::NanSafeParquetFormatFactory;
use super::table_provider::IcebergTableProvider;
use crate::table::Table;

/// The `kind` of an encoded [`IcebergTableProvider`].
const TABLE: &str = "IcebergTableProvider";

/// The envelope of an encoded table.
#[derive(Clone, PartialEq, Message)]
struct EncodedTable {
    /// [`TABLE`].
    #[prost(string, tag = "1")]
    kind: String,
    /// The table's identity ([`TableState`], JSON).
    #[prost(string, tag = "2")]
    state: String,
}

/// An [`IcebergTableProvider`]'s identity (see the module docs).
#[derive(Serialize, Deserialize)]
struct TableState {
    metadata_location: String,
    file_io: FileIoState,
    /// The snapshot read; `None`: the table had no snapshot.
    snapshot_id: Option<i64>,
    /// The Iceberg schema read (the snapshot's for time travel by id or tag, the
    /// current one otherwise).
    schema_id: i32,
    view_types: bool,
    metadata_columns: bool,
}

/// The `LogicalExtensionCodec` of [`IcebergTableProvider`] (see the module docs):
/// tables by identity, everything else through the inner codec.
#[derive(Debug, Clone)]
pub struct IcebergLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
}

impl Default for IcebergLogicalCodec {
    fn default() -> Self {
        Self::new(Arc::new(DefaultLogicalExtensionCodec {}))
    }
}

impl IcebergLogicalCodec {
    /// Icefloe's tables, and what else a plan holds through `inner` (e.g. Ballista's
    /// `BallistaLogicalExtensionCodec`, for its file formats and cache nodes).
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        Self { inner }
    }
}

fn codec_error(message: impl Into<String>) -> DataFusionError {
    DataFusionError::Plan(format!("IcebergLogicalCodec: {}", message.into()))
}

/// The identity of `provider` as bytes.
fn encode_table(provider: &IcebergTableProvider) -> DFResult<Vec<u8>> {
    let table = provider.table();
    let state = TableState {
        metadata_location: table.metadata_location().to_string(),
        file_io: FileIoState::of(table.file_io()),
        snapshot_id: provider.snapshot().map(|s| s.snapshot_id),
        schema_id: provider.iceberg_schema().schema_id,
        view_types: provider.schema_force_view_types(),
        metadata_columns: provider.has_metadata_columns(),
    };
    let state = serde_json::to_string(&state)
        .map_err(|e| codec_error(format!("encoding table state: {e}")))?;
    Ok(EncodedTable {
        kind: TABLE.to_string(),
        state,
    }
    .encode_to_vec())
}

/// `bytes` as an encoded table, or `None` when they are not one (another codec's).
fn decode_envelope(bytes: &[u8]) -> Option<EncodedTable> {
    EncodedTable::decode(bytes).ok().filter(|t| t.kind == TABLE)
}

/// Reload the table of `state` (in a thread of its own: decoding is synchronous and may
/// run on a runtime thread) and rebuild its provider.
fn decode_table(state: &TableState) -> DFResult<IcebergTableProvider> {
    let io = state.file_io.rebuild()?;
    let location = state.metadata_location.clone();
    let table = std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| codec_error(format!("starting a runtime to load a table: {e}")))?;
                let table = runtime.block_on(Table::load(&location, io))?;
                Ok::<_, DataFusionError>(table)
            })
            .join()
            .map_err(|_| codec_error("loading the table panicked"))
    })??;
    // a FileIO of this runtime, not the loader's (its object stores died with it)
    let table = table.with_file_io(state.file_io.rebuild()?);
    let metadata = table.metadata();
    let snapshot = match state.snapshot_id {
        Some(id) => Some(metadata.snapshot_by_id(id).cloned().ok_or_else(|| {
            codec_error(format!(
                "snapshot id {id} is not in table '{}'",
                state.metadata_location
            ))
        })?),
        None => None,
    };
    let schema = metadata
        .schema_by_id(state.schema_id)
        .cloned()
        .ok_or_else(|| {
            codec_error(format!(
                "schema id {} is not in table '{}'",
                state.schema_id, state.metadata_location
            ))
        })?;
    let provider = IcebergTableProvider::at_snapshot(table, snapshot, schema, state.view_types)?;
    Ok(if state.metadata_columns {
        provider.with_metadata_columns()
    } else {
        provider
    })
}

impl LogicalExtensionCodec for IcebergLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> DFResult<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> DFResult<()> {
        self.inner.try_encode(node, buf)
    }

    /// Errors: the table cannot be reloaded (its metadata file unreadable: the error
    /// names it), its snapshot or schema id is missing from it, or the reloaded
    /// provider's Arrow schema differs from `schema` (the plan's).
    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> DFResult<Arc<dyn TableProvider>> {
        let Some(encoded) = decode_envelope(buf) else {
            return self
                .inner
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let state: TableState = serde_json::from_str(&encoded.state)
            .map_err(|e| codec_error(format!("decoding table '{table_ref}': {e}")))?;
        let provider = decode_table(&state)?;
        if provider.schema() != schema {
            return Err(codec_error(format!(
                "table '{table_ref}' ('{}') reloaded with schema {:?}, but the plan has {:?}",
                state.metadata_location,
                provider.schema(),
                schema
            )));
        }
        Ok(Arc::new(provider))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> DFResult<()> {
        match node.downcast_ref::<IcebergTableProvider>() {
            Some(provider) => {
                buf.extend_from_slice(&encode_table(provider)?);
                Ok(())
            }
            None => self.inner.try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> DFResult<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> DFResult<()> {
        // icefloe's NaN-safe Parquet format travels as DataFusion's (what it writes)
        let node = match node.as_ref().downcast_ref::<NanSafeParquetFormatFactory>() {
            Some(f) => Arc::new(match &f.inner().options {
                Some(o) => ParquetFormatFactory::new_with_options(o.clone()),
                None => ParquetFormatFactory::new(),
            }) as Arc<dyn FileFormatFactory>,
            None => node,
        };
        self.inner.try_encode_file_format(buf, node)
    }

    /// icefloe's [`NORMALIZE_NAN_AND_ZERO`] (float keys, which the optimizer put in) by
    /// its name, without the scheduler registering it; anything else by `inner`.
    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> DFResult<Arc<ScalarUDF>> {
        if let Some(udf) = decode_greatest_least(buf) {
            return Ok(udf);
        }
        match name {
            NORMALIZE_NAN_AND_ZERO => Ok(normalize_nan_and_zero_udf()),
            _ => self.inner.try_decode_udf(name, buf),
        }
    }

    /// icefloe's `greatest`/`least` (Spark's order of floats) by their own bytes; anything
    /// else by `inner`.
    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> DFResult<()> {
        match encode_greatest_least(node) {
            Some(bytes) => {
                buf.extend_from_slice(bytes);
                Ok(())
            }
            None => self.inner.try_encode_udf(node, buf),
        }
    }

    fn try_decode_higher_order_function(
        &self,
        name: &str,
        buf: &[u8],
    ) -> DFResult<Arc<HigherOrderUDF>> {
        self.inner.try_decode_higher_order_function(name, buf)
    }

    fn try_encode_higher_order_function(
        &self,
        node: &HigherOrderUDF,
        buf: &mut Vec<u8>,
    ) -> DFResult<()> {
        self.inner.try_encode_higher_order_function(node, buf)
    }

    /// icefloe's `min`/`max` ([`MinMax`](super::min_max::MinMax)) from the bytes
    /// [`Self::try_encode_udaf`] wrote (a scheduler resolving `min`/`max` by name would get
    /// DataFusion's), anything else through the inner codec.
    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> DFResult<Arc<AggregateUDF>> {
        match decode_min_max(buf) {
            Some(udaf) => Ok(udaf),
            None => self.inner.try_decode_udaf(name, buf),
        }
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> DFResult<()> {
        match encode_min_max(node) {
            Some(bytes) => {
                buf.extend_from_slice(bytes);
                Ok(())
            }
            None => self.inner.try_encode_udaf(node, buf),
        }
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> DFResult<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> DFResult<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}
