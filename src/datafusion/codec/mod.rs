//! [`IcebergPhysicalCodec`]: icefloe's plan nodes through `datafusion-proto` (feature
//! `distributed`), so that a distributed engine built on DataFusion can run Iceberg
//! scans, deletes included, on its workers (issue 15).
//!
//! What it carries:
//! - **Scans** (`DataSourceExec` over [`IcebergParquetSource`]): DataFusion's own
//!   `ParquetScan` message for the file groups, schema, statistics, projection,
//!   predicate and Parquet options, plus what `datafusion-proto` does not serialize: each
//!   file's position-delete / deletion-vector row selection (a `ParquetRowSelection` in
//!   its `PartitionedFile` extensions), the field-id column mapping (`initial-default`s,
//!   required ids, name mapping, the columns with their nested fields' ids) and how to
//!   reach the files (the store URL and the table's FileIO properties and remaps, from
//!   which the worker rebuilds the object store and registers it in its runtime before
//!   decoding).
//!   A scan's Parquet `RowNumber` virtual columns (row positions, for position deletes
//!   applied per batch) are carried by name, with the scan's projection, which
//!   `datafusion-proto` could not decode without them.
//! - **[`PositionDeleteExec`]**: each file's deleted positions (a serialized
//!   `RoaringTreemap`, the portable format of the Roaring spec) and row count, the
//!   positions of its two hidden input columns and the filters it took over from
//!   above; its input is a child plan.
//! - **[`EqualityDeleteExec`]**: its delete files (the manifest fields the loader reads:
//!   location, format, size, record count, `equality_ids`, sequence numbers, spec id),
//!   their scopes and key schemas, the pre-probe predicate, the hidden-column positions
//!   and the table's FileIO; its input is a child plan.
//! - **[`IcebergDataFileWriterExec`]** (the writing half of an `INSERT`): the table's
//!   name, FileIO, data location, current schema, default partition spec, properties,
//!   format version, sort order id and operation id, the rows' Arrow schema and the sort it requires;
//!   its input is a child plan. The files it writes come back to the coordinator as rows
//!   ([`crate::write::encode_written_files`]), where
//!   [`IcebergWriteExec`](super::IcebergWriteExec) commits them.
//! - icefloe's scalar functions by their names, decoded without the worker registering
//!   them (and registered in datafusion-distributed worker sessions, whose composed codec
//!   never hands a function sent by name to this one, see [`UDFS_BY_NAME`]):
//!   **`icefloe_floor_time_units`** (under a write's cast that narrows nanoseconds to the
//!   table's microseconds), **`icefloe_normalize_nan_and_zero`** (Spark's float keys,
//!   `float_keys`), **`icefloe_canonical_nan`** (a scan's one-NaN projection of float
//!   columns that may hold NaN, `canonical_nan`), **`icefloe_partition_transform`** (a
//!   partition transform in a writer's sort, its transform and source type literal
//!   arguments, `transform_expr`), **`icefloe_fill_defaults`** (the write-defaults of
//!   a written struct's missing fields, `struct_defaults`) and the session-zone readings
//!   `icefloe_[try_]zoned_wall_clock`. No icefloe expression needs an extension
//!   encoding: datafusion-proto 55's composed codec would not pass one to this codec.
//!
//! Refused with an error naming the node (never sent without its delete information):
//! `IcebergRowLevelExec` (row-level changes run and
//! commit on one node), [`IcebergWriteExec`](super::IcebergWriteExec) (it commits, on the
//! node that planned the statement: a distributed planner keeps it there), files
//! carrying an extension other than a row selection, and equality delete files in a
//! format other than Parquet.
//!
//! The encoded bytes hold the FileIO properties, which can include cloud credentials:
//! send them only to workers trusted with the table.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema as ArrowSchema};
use datafusion::common::{DataFusionError, Result as DFResult, ScalarValue};
use datafusion::datasource::physical_plan::parquet::ParquetRowSelection;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfig, FileSource, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use datafusion::parquet::arrow::RowNumber;
use datafusion::physical_expr::projection::{ProjectionExpr, ProjectionExprs};
use datafusion::physical_expr::{LexRequirement, PhysicalExpr, PhysicalSortRequirement};
use datafusion::physical_expr_adapter::PhysicalExprAdapterFactory;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use object_store::path::Path;
use prost::Message;
use roaring::RoaringTreemap;
use serde::{Deserialize, Serialize};

use super::canonical_nan::{canonical_nan_udf, CANONICAL_NAN};
use super::data_file_writer_exec::{DataFileWriteState, IcebergDataFileWriterExec};
use super::delete_planning::EqualityDeleteFile;
use super::equality_delete_exec::{EqualityDeleteExec, EqualityGroup};
use super::expr_adapter::FieldIdExprAdapterFactory;
use super::file_reader::IcebergParquetReaderFactory;
use super::float_keys::{normalize_nan_and_zero_udf, NORMALIZE_NAN_AND_ZERO};
use super::greatest_least::{decode_greatest_least, encode_greatest_least};
use super::iceberg_source::{IcebergParquetSource, IcebergScanState};
use super::insert_column_casts::{write_cast_udf, WRITE_CAST};
use super::min_max::{decode_min_max, encode_min_max};
use super::position_delete_exec::{FileDeletes, PositionDeleteExec};
use super::struct_defaults::{fill_defaults_udf, FILL_DEFAULTS};
use super::struct_rename::{rename_fields_udf, RENAME_FIELDS};
use super::time_narrowing::{floor_time_units_udf, FLOOR_TIME_UNITS};
use super::transform_expr::{partition_transform_udf, PARTITION_TRANSFORM};
use super::zoned_wall_clock::{zoned_wall_clock_udf, TRY_ZONED_WALL_CLOCK, ZONED_WALL_CLOCK};
use crate::delete::EqualityDeleteLoader;
use crate::io::FileIO;
use crate::spec::name_mapping::{MappedField, NameMapping};
use crate::spec::{
    DataContentType, DataFile, DataFileFormat, FormatVersion, ManifestEntry, ManifestStatus,
    PartitionSpec, Schema,
};
use crate::write::empty_data_file;

mod deletes;
mod writer;

/// The `kind` of an encoded scan.
const SCAN: &str = "IcebergParquetScan";
/// The `kind` of an encoded [`EqualityDeleteExec`].
const EQUALITY_DELETES: &str = "EqualityDeleteExec";
/// The `kind` of an encoded [`PositionDeleteExec`].
const POSITION_DELETES: &str = "PositionDeleteExec";
/// The `kind` of an encoded [`IcebergDataFileWriterExec`].
const DATA_FILE_WRITER: &str = "IcebergDataFileWriterExec";

/// The envelope of every node this codec writes.
#[derive(Clone, PartialEq, Message)]
struct EncodedNode {
    /// [`SCAN`], [`EQUALITY_DELETES`] or [`DATA_FILE_WRITER`].
    #[prost(string, tag = "1")]
    kind: String,
    /// The node's icefloe state, as JSON (`ScanState`, `deletes::PositionDeleteState`,
    /// `deletes::EqualityState`, `writer::WriterState`).
    #[prost(string, tag = "2")]
    state: String,
    /// Scan: the `PhysicalPlanNode` of the same scan over a plain `ParquetSource`.
    #[prost(bytes = "vec", tag = "3")]
    plan: Vec<u8>,
    /// Scan: the `initial-default` values (`ScalarValue` messages), in the order of
    /// `ScanState::default_ids`. Equality deletes: the key schemas (`Schema` messages),
    /// one per group. Writer: the rows' schema (a `Schema` message), then the
    /// expressions of its sort (`PhysicalExprNode`s), in order.
    #[prost(bytes = "vec", repeated, tag = "4")]
    values: Vec<Vec<u8>>,
    /// Equality deletes: the pre-probe predicate; position deletes: the filters taken
    /// over from above (`PhysicalExprNode`), if any.
    #[prost(bytes = "vec", optional, tag = "5")]
    predicate: Option<Vec<u8>>,
    /// Scan with virtual columns: its projection (a `ProjectionExprs` message), taken
    /// out of `plan`, whose decoding would not know those columns.
    #[prost(bytes = "vec", optional, tag = "6")]
    projection: Option<Vec<u8>>,
    /// Scan: the table's columns with the field ids of their nested fields (a `Schema`
    /// message), which the scan's own schema does not carry.
    #[prost(bytes = "vec", optional, tag = "7")]
    id_columns: Option<Vec<u8>>,
}

/// A FileIO as it crosses processes.
#[derive(Serialize, Deserialize)]
pub(super) struct FileIoState {
    properties: BTreeMap<String, String>,
    remaps: Vec<(String, String)>,
    /// Vended credentials by prefix, as they are now (a worker does not refresh them).
    #[serde(default)]
    credentials: Vec<(String, BTreeMap<String, String>)>,
}

impl FileIoState {
    pub(super) fn of(io: &FileIO) -> Self {
        Self {
            properties: io
                .properties()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            remaps: io.remaps().to_vec(),
            credentials: io
                .storage_credentials()
                .iter()
                .map(|c| (c.prefix.clone(), c.properties.clone().into_iter().collect()))
                .collect(),
        }
    }

    pub(super) fn rebuild(&self) -> DFResult<FileIO> {
        let mut io = FileIO::new(self.properties.clone().into_iter().collect());
        for (from, to) in &self.remaps {
            io = io.with_remap(from, to)?;
        }
        if !self.credentials.is_empty() {
            let credentials = self
                .credentials
                .iter()
                .map(|(prefix, properties)| {
                    crate::io::StorageCredential::new(
                        prefix,
                        properties.clone().into_iter().collect(),
                    )
                })
                .collect::<crate::error::Result<Vec<_>>>()?;
            io = io.with_storage_credentials(credentials);
        }
        Ok(io)
    }
}

/// One file's row selection: the file at `file` of group `group`, as `(skip, rows)` runs.
#[derive(Serialize, Deserialize)]
struct FileSelection {
    group: usize,
    file: usize,
    runs: Vec<(bool, usize)>,
}

#[derive(Serialize, Deserialize)]
struct ScanState {
    store_url: String,
    file_io: FileIoState,
    /// Object path → location as recorded in the manifest (moved tables).
    recorded: Vec<(String, String)>,
    required: Vec<i32>,
    /// The name mapping's fields (JSON), if the table has one.
    name_mapping: Option<Vec<MappedField>>,
    /// Field ids of the `initial-default`s (values in `EncodedNode::values`).
    default_ids: Vec<i32>,
    selections: Vec<FileSelection>,
    /// The scan's virtual columns, all Parquet `RowNumber`s: name and nullability.
    #[serde(default)]
    row_numbers: Vec<(String, bool)>,
}

/// The `PhysicalExtensionCodec` of icefloe's plan nodes (see the module docs for what
/// it carries and what it refuses). Register it on the coordinator and on every worker.
#[derive(Debug, Default, Clone, Copy)]
pub struct IcebergPhysicalCodec;

fn codec_error(message: impl Into<String>) -> DataFusionError {
    DataFusionError::Plan(format!("IcebergPhysicalCodec: {}", message.into()))
}

fn not_supported(node: &str, why: &str) -> DataFusionError {
    DataFusionError::NotImplemented(format!(
        "IcebergPhysicalCodec cannot send {node} to another process: {why}"
    ))
}

/// The error refusing to send a scan planning each manifest as it reads it (deferred
/// planning): it has no planned files to send.
pub(crate) fn deferred_scan_error() -> DataFusionError {
    not_supported(
        "an Iceberg scan planning each manifest as it reads it",
        "its files are not planned yet; set icefloe.deferred_planning_min_files = 0 \
         on the session that plans distributed queries",
    )
}

fn to_json<T: Serialize>(value: &T) -> DFResult<String> {
    serde_json::to_string(value).map_err(|e| codec_error(format!("encoding state: {e}")))
}

fn from_json<'a, T: Deserialize<'a>>(text: &'a str) -> DFResult<T> {
    serde_json::from_str(text).map_err(|e| codec_error(format!("decoding state: {e}")))
}

fn decode_message<M: Message + Default>(bytes: &[u8], what: &str) -> DFResult<M> {
    M::decode(bytes).map_err(|e| codec_error(format!("decoding {what}: {e}")))
}

impl IcebergPhysicalCodec {
    fn encode_scan(
        &self,
        config: &FileScanConfig,
        source: &IcebergParquetSource,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<EncodedNode> {
        if source.state().deferred.is_some() {
            return Err(deferred_scan_error());
        }
        let mut row_numbers = vec![];
        for field in source.table_schema().virtual_columns() {
            if field.try_extension_type::<RowNumber>().is_err() {
                return Err(not_supported(
                    "an Iceberg scan",
                    &format!("its virtual column '{}' is not a row number", field.name()),
                ));
            }
            row_numbers.push((field.name().clone(), field.is_nullable()));
        }
        if source.inner().downcast_ref::<ParquetSource>().is_none() {
            return Err(codec_error("an Iceberg scan whose source is not Parquet"));
        }
        let mut selections = vec![];
        for (g, group) in config.file_groups.iter().enumerate() {
            for (f, file) in group.files().iter().enumerate() {
                let selection = file.extension::<ParquetRowSelection>();
                let known = usize::from(selection.is_some());
                if file.extensions.len() > known {
                    return Err(not_supported(
                        &format!("the scan of '{}'", file.object_meta.location),
                        "the file carries an extension other than its row selection",
                    ));
                }
                if let Some(selection) = selection {
                    selections.push(FileSelection {
                        group: g,
                        file: f,
                        runs: selection
                            .selection()
                            .iter()
                            .map(|s| (s.skip, s.row_count))
                            .collect(),
                    });
                }
            }
        }
        // the same scan over DataFusion's own source: its `ParquetScan` message
        let mut plain = config.clone();
        plain.file_source = Arc::clone(source.inner());
        plain.expr_adapter_factory = None;
        let plain: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(plain);
        let mut plan = proto_converter.execution_plan_to_proto(&plain, self)?;
        let mut projection = None;
        if !row_numbers.is_empty() {
            // the projection may name the virtual columns: carried beside the plan
            if let Some(protobuf::physical_plan_node::PhysicalPlanType::ParquetScan(scan)) =
                &mut plan.physical_plan_type
            {
                if let Some(conf) = &mut scan.base_conf {
                    projection = conf.projection_exprs.take().map(|p| p.encode_to_vec());
                }
            }
        }
        let plan = plan.encode_to_vec();
        let state = source.state();
        let columns = &state.columns;
        let mut default_ids: Vec<i32> = columns.initial_defaults().keys().copied().collect();
        default_ids.sort_unstable();
        let values = default_ids
            .iter()
            .map(|id| {
                let value = &columns.initial_defaults()[id];
                Ok(protobuf::ScalarValue::try_from(value)?.encode_to_vec())
            })
            .collect::<DFResult<Vec<_>>>()?;
        let mut required: Vec<i32> = columns.required().iter().copied().collect();
        required.sort_unstable();
        let mut recorded: Vec<(String, String)> = state
            .recorded
            .iter()
            .map(|(path, location)| (path.to_string(), location.clone()))
            .collect();
        recorded.sort();
        let scan = ScanState {
            store_url: state.store_url.clone(),
            file_io: FileIoState::of(&state.file_io),
            recorded,
            required,
            name_mapping: columns.name_mapping().map(|m| m.fields.clone()),
            default_ids,
            selections,
            row_numbers,
        };
        Ok(EncodedNode {
            kind: SCAN.to_string(),
            state: to_json(&scan)?,
            plan,
            values,
            predicate: None,
            projection,
            id_columns: Some(protobuf::Schema::try_from(&columns.id_columns())?.encode_to_vec()),
        })
    }

    fn decode_scan(
        &self,
        node: &EncodedNode,
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let scan: ScanState = from_json(&node.state)?;
        let file_io = scan.file_io.rebuild()?;
        // the store first: DataFusion's decoder looks it up in the runtime
        let store = file_io.store(&scan.store_url)?;
        let url = ObjectStoreUrl::parse(&scan.store_url)?;
        ctx.runtime_env()
            .register_object_store(url.as_ref(), Arc::clone(&store));
        let plan_node: protobuf::PhysicalPlanNode = decode_message(&node.plan, "scan plan")?;
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        let plain = proto_converter.proto_to_execution_plan(&plan_node, &decode_ctx)?;
        let mut config = plain
            .downcast_ref::<DataSourceExec>()
            .and_then(|dse| dse.data_source().downcast_ref::<FileScanConfig>())
            .cloned()
            .ok_or_else(|| codec_error("the encoded scan is not a file scan"))?;
        let parquet = config
            .file_source()
            .downcast_ref::<ParquetSource>()
            .cloned()
            .ok_or_else(|| codec_error("the encoded scan is not a Parquet scan"))?;

        if scan.default_ids.len() != node.values.len() {
            return Err(codec_error(
                "initial-default ids and values differ in number",
            ));
        }
        let mut defaults = HashMap::new();
        for (id, bytes) in scan.default_ids.iter().zip(&node.values) {
            let value: protobuf::ScalarValue = decode_message(bytes, "initial-default")?;
            defaults.insert(*id, ScalarValue::try_from(&value)?);
        }
        let name_mapping = scan
            .name_mapping
            .map(|fields| Arc::new(NameMapping { fields }));
        let mut columns = FieldIdExprAdapterFactory::new(
            defaults,
            scan.required.into_iter().collect::<HashSet<_>>(),
            name_mapping,
        );
        if let Some(bytes) = &node.id_columns {
            let schema: protobuf::Schema = decode_message(bytes, "columns with field ids")?;
            columns = columns.with_id_columns(&ArrowSchema::try_from(&schema)?);
        }
        let columns = Arc::new(columns);
        // object paths as DataFusion decodes them: their characters kept (`parse`)
        let recorded: HashMap<Path, String> = scan
            .recorded
            .into_iter()
            .map(|(path, location)| {
                Path::parse(&path)
                    .map(|p| (p, location))
                    .map_err(|e| codec_error(format!("object path '{path}': {e}")))
            })
            .collect::<DFResult<_>>()?;
        let recorded = Arc::new(recorded);
        let readers = IcebergParquetReaderFactory::new(
            store,
            &scan.store_url,
            Arc::clone(&recorded),
            Arc::clone(config.file_schema()),
            Arc::clone(&columns),
            // footers cached in the worker's own session, as on the coordinator
            ctx.runtime_env().cache_manager.get_file_metadata_cache(),
        );
        let parquet = parquet.with_parquet_file_reader_factory(Arc::new(readers));
        let parquet =
            self.with_row_numbers(parquet, &scan.row_numbers, node, ctx, proto_converter)?;
        let state = Arc::new(IcebergScanState {
            file_io,
            store_url: scan.store_url,
            recorded,
            columns: Arc::clone(&columns),
            deferred: None,
            expired_reads: None,
        });
        config.file_source = Arc::new(IcebergParquetSource::new(parquet, state));
        let adapter: Arc<dyn PhysicalExprAdapterFactory> = columns;
        config.expr_adapter_factory = Some(adapter);
        // the row selections back on their files
        let mut groups: Vec<Vec<_>> = std::mem::take(&mut config.file_groups)
            .into_iter()
            .map(|g| g.into_inner())
            .collect();
        for selection in scan.selections {
            let file = groups
                .get_mut(selection.group)
                .and_then(|g| g.get_mut(selection.file))
                .ok_or_else(|| {
                    codec_error(format!(
                        "row selection for file {} of group {}, which the scan does not have",
                        selection.file, selection.group
                    ))
                })?;
            let selectors: Vec<RowSelector> = selection
                .runs
                .into_iter()
                .map(|(skip, rows)| {
                    if skip {
                        RowSelector::skip(rows)
                    } else {
                        RowSelector::select(rows)
                    }
                })
                .collect();
            file.extensions
                .insert(ParquetRowSelection::new(RowSelection::from(selectors)));
        }
        config.file_groups = groups.into_iter().map(FileGroup::new).collect();
        Ok(DataSourceExec::from_data_source(config))
    }

    /// `parquet` (decoded without projection) with the virtual `row_numbers` added to
    /// its table schema, then the node's projection.
    fn with_row_numbers(
        &self,
        parquet: ParquetSource,
        row_numbers: &[(String, bool)],
        node: &EncodedNode,
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn FileSource>> {
        if row_numbers.is_empty() {
            return Ok(Arc::new(parquet));
        }
        let decoded = parquet.table_schema();
        let virtual_columns: Vec<FieldRef> = row_numbers
            .iter()
            .map(|(name, nullable)| {
                Arc::new(
                    Field::new(name, DataType::Int64, *nullable).with_extension_type(RowNumber),
                ) as FieldRef
            })
            .collect();
        let table_schema = TableSchema::builder(Arc::clone(decoded.file_schema()))
            .with_table_partition_cols(decoded.table_partition_cols().clone())
            .with_virtual_columns(virtual_columns)
            .build();
        let mut rebuilt = ParquetSource::new(table_schema)
            .with_table_parquet_options(parquet.table_parquet_options().clone());
        if let Some(factory) = parquet.parquet_file_reader_factory() {
            rebuilt = rebuilt.with_parquet_file_reader_factory(Arc::clone(factory));
        }
        if let Some(predicate) = parquet.filter() {
            rebuilt = rebuilt.with_predicate(predicate);
        }
        let Some(bytes) = &node.projection else {
            return Ok(Arc::new(rebuilt));
        };
        let proto: protobuf::ProjectionExprs = decode_message(bytes, "scan projection")?;
        let schema = Arc::clone(rebuilt.table_schema().table_schema());
        let decode_ctx = PhysicalPlanDecodeContext::new(ctx, self);
        let exprs = proto
            .projections
            .iter()
            .map(|p| {
                let expr = p
                    .expr
                    .as_ref()
                    .ok_or_else(|| codec_error("a scan projection without its expression"))?;
                Ok(ProjectionExpr::new(
                    proto_converter.proto_to_physical_expr(expr, &schema, &decode_ctx)?,
                    p.alias.clone(),
                ))
            })
            .collect::<DFResult<Vec<_>>>()?;
        let rebuilt: Arc<dyn FileSource> = Arc::new(rebuilt);
        Ok(rebuilt
            .try_pushdown_projection(&ProjectionExprs::new(exprs))?
            .unwrap_or(rebuilt))
    }
}

/// The names of icefloe's scalar functions that [`IcebergPhysicalCodec::try_decode_udf`]
/// decodes by name (no bytes). A codec composed after another
/// (`datafusion_distributed`'s `DistributedCodec` comes first) never receives them: the
/// first codec encodes every function as nothing, and a worker resolves a function sent
/// so in its own session first, so worker sessions register these
/// ([`IcebergWorkerSessionBuilder`](super::distributed::IcebergWorkerSessionBuilder)).
pub(crate) const UDFS_BY_NAME: [&str; 9] = [
    FLOOR_TIME_UNITS,
    WRITE_CAST,
    FILL_DEFAULTS,
    NORMALIZE_NAN_AND_ZERO,
    CANONICAL_NAN,
    PARTITION_TRANSFORM,
    RENAME_FIELDS,
    ZONED_WALL_CLOCK,
    TRY_ZONED_WALL_CLOCK,
];

/// The scalar functions of icefloe's that a plan of an icefloe session may hold, for a
/// task whose functions are `existing(name)`: those it lacks of [`UDFS_BY_NAME`] (put in
/// by icefloe's optimizer rules, scans and writes), Spark's `greatest`/`least` of floats
/// where its own are DataFusion's or missing (icefloe's sessions replace DataFusion's),
/// and `datafusion-spark`'s functions under the names it lacks (icefloe's sessions
/// register those). `|_| None` lists them all.
///
/// Another engine's plan nodes (Ballista's shuffles) and datafusion-distributed's
/// composed codec resolve a function by name in the decoding task's functions only,
/// never through [`IcebergPhysicalCodec`]; decoding gives that task these.
pub fn plan_scalar_functions(
    existing: impl Fn(&str) -> Option<Arc<ScalarUDF>>,
) -> Vec<Arc<ScalarUDF>> {
    let mut udfs: Vec<Arc<ScalarUDF>> = UDFS_BY_NAME
        .iter()
        .filter(|name| existing(name).is_none())
        .filter_map(|name| IcebergPhysicalCodec.try_decode_udf(name, &[]).ok())
        .collect();
    udfs.extend(super::greatest_least::spark_greatest_least(&existing));
    udfs.extend(
        super::spark_functions::missing_scalar_functions(|name| existing(name).is_some())
            .into_iter()
            .map(Arc::new),
    );
    udfs
}

impl PhysicalExtensionCodec for IcebergPhysicalCodec {
    /// Decodes icefloe's [`FLOOR_TIME_UNITS`] (the flooring under a write's cast that
    /// narrows a time unit), [`WRITE_CAST`] (an `INSERT`'s numeric cast naming its
    /// column), its session-zone readings of zone-less times
    /// (`icefloe_[try_]zoned_wall_clock`), [`NORMALIZE_NAN_AND_ZERO`] (float keys),
    /// [`CANONICAL_NAN`] (a scan's one NaN), [`PARTITION_TRANSFORM`] (a write's sort by
    /// a transform), [`RENAME_FIELDS`] (a written struct's field names) and
    /// [`FILL_DEFAULTS`] (the write-defaults of a written struct's missing fields) by their names, so that workers need not register them, and
    /// icefloe's `greatest`/`least` by the bytes [`Self::try_encode_udf`] wrote.
    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> DFResult<Arc<ScalarUDF>> {
        if let Some(udf) = decode_greatest_least(buf) {
            return Ok(udf);
        }
        match name {
            FLOOR_TIME_UNITS => Ok(floor_time_units_udf()),
            WRITE_CAST => Ok(write_cast_udf()),
            NORMALIZE_NAN_AND_ZERO => Ok(normalize_nan_and_zero_udf()),
            CANONICAL_NAN => Ok(canonical_nan_udf()),
            PARTITION_TRANSFORM => Ok(partition_transform_udf()),
            RENAME_FIELDS => Ok(rename_fields_udf()),
            FILL_DEFAULTS => Ok(fill_defaults_udf()),
            _ => zoned_wall_clock_udf(name)
                .or_else(|| super::spark_functions::scalar_function(name))
                .ok_or_else(|| {
                    codec_error(format!(
                        "scalar function '{name}' is not registered and not icefloe's"
                    ))
                }),
        }
    }

    /// Encodes icefloe's `greatest`/`least` (Spark's order of floats); any other scalar
    /// function goes by name.
    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> DFResult<()> {
        if let Some(bytes) = encode_greatest_least(node) {
            buf.extend_from_slice(bytes);
        }
        Ok(())
    }

    /// Decodes icefloe's `min`/`max` ([`MinMax`](super::min_max::MinMax), Spark's NaN
    /// semantics) from the bytes [`Self::try_encode_udaf`] wrote, so that they reach
    /// workers that resolve `min`/`max` by name to DataFusion's.
    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> DFResult<Arc<AggregateUDF>> {
        decode_min_max(buf)
            .or_else(|| match buf.is_empty() {
                true => super::spark_functions::aggregate_function(name),
                false => None,
            })
            .ok_or_else(|| {
                codec_error(format!(
                    "aggregate function '{name}' is not registered and not icefloe's"
                ))
            })
    }

    /// Encodes icefloe's `min`/`max`; any other aggregate function goes by name.
    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> DFResult<()> {
        if let Some(bytes) = encode_min_max(node) {
            buf.extend_from_slice(bytes);
        }
        Ok(())
    }

    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let node: EncodedNode = decode_message(buf, "icefloe plan node")?;
        match node.kind.as_str() {
            SCAN => self.decode_scan(&node, ctx, proto_converter),
            EQUALITY_DELETES => self.decode_equality_deletes(&node, inputs, ctx, proto_converter),
            POSITION_DELETES => self.decode_position_deletes(&node, inputs, ctx, proto_converter),
            DATA_FILE_WRITER => self.decode_data_file_writer(&node, inputs, ctx, proto_converter),
            other => Err(codec_error(format!("unknown icefloe plan node '{other}'"))),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DFResult<()> {
        let encoded = if let Some(dse) = node.downcast_ref::<DataSourceExec>() {
            let scan = dse
                .data_source()
                .downcast_ref::<FileScanConfig>()
                .and_then(|c| {
                    c.file_source()
                        .downcast_ref::<IcebergParquetSource>()
                        .map(|s| (c, s))
                });
            match scan {
                Some((config, source)) => self.encode_scan(config, source, proto_converter)?,
                None => {
                    return Err(codec_error(format!(
                        "a data source that is not an Iceberg scan: {}",
                        node.name()
                    )))
                }
            }
        } else if let Some(exec) = node.downcast_ref::<EqualityDeleteExec>() {
            self.encode_equality_deletes(exec, proto_converter)?
        } else if let Some(exec) = node.downcast_ref::<PositionDeleteExec>() {
            self.encode_position_deletes(exec, proto_converter)?
        } else if let Some(exec) = node.downcast_ref::<IcebergDataFileWriterExec>() {
            self.encode_data_file_writer(exec, proto_converter)?
        } else {
            let name = node.name();
            let why = match name {
                "IcebergWriteExec" => {
                    "it commits, once, on the node that planned the INSERT (its input, \
                     IcebergDataFileWriterExec, is what runs on workers)"
                }
                "IcebergRowLevelExec" => {
                    "DELETE / UPDATE / MERGE run and commit on one node; distributed \
                     row-level changes are not supported yet"
                }
                _ => "it is not an icefloe plan node",
            };
            return Err(not_supported(name, why));
        };
        encoded.encode(buf).map_err(|e| codec_error(e.to_string()))
    }
}
