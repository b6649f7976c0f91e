//! `CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '…'`.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, SchemaRef, TimeUnit};
use datafusion::catalog::{Session, TableProviderFactory};
use datafusion::common::Result as DFResult;
use datafusion::datasource::TableProvider;
use datafusion::logical_expr::CreateExternalTable;
use datafusion::prelude::SessionContext;

use super::followed_directory::FollowedDirectory;
use super::location_storage::LocationStorageProperties;
use crate::catalog::TableVersion;
use crate::table::OpenOptions;

/// Creates [`IcebergTableProvider`]s for `STORED AS ICEBERG`.
///
/// `LOCATION` is a metadata file or table directory: a directory is read at its current
/// version at each statement (where the schema is an
/// [`IcebergNamesSchemaProvider`](super::IcebergNamesSchemaProvider), as the CLI's is),
/// a metadata file at its own version (see [`super::followed_directory`]). Options (`OPTIONS ('k' 'v', …)`):
/// one time-travel key, as `iceberg_scan` takes them (`snapshot_id`, `ref` (also
/// `branch` / `tag`) or `as_of`, a timestamp or ms since the epoch: see
/// [`TableVersion::from_key_value`]; two are an error), `allow_moved_paths`
/// (`true`/`false`), `remap` (`old=>new`, several separated by `;`), and object store
/// options: `object_store`'s keys (prefixes `STORAGE_OPTION_PREFIXES`: `aws_…`,
/// `google_…`, `azure_…`) and Iceberg FileIO properties (`s3.…`, `gcs.…`, `adls.…`,
/// `client.…`), over the session's [`LocationStorageProperties`] (the CLI's `--catalog`
/// config's). Any other key is an error listing the accepted ones.
///
/// A column list (`CREATE EXTERNAL TABLE t (id BIGINT, …) STORED AS ICEBERG`) is
/// optional; when given, it must name the table's columns in order with matching types
/// (string and binary types in any of their Arrow encodings, timestamps in any unit),
/// else it is an error.
#[derive(Debug, Default)]
pub struct IcebergTableProviderFactory;

/// The options `STORED AS ICEBERG` reads itself.
pub const TABLE_OPTIONS: [&str; 7] = [
    "snapshot_id",
    "ref",
    "branch",
    "tag",
    "as_of",
    "allow_moved_paths",
    "remap",
];

/// The options of [`TABLE_OPTIONS`] that pick the snapshot to read (at most one).
const TIME_TRAVEL_OPTIONS: [&str; 5] = ["snapshot_id", "ref", "branch", "tag", "as_of"];

/// Prefixes of the object store options passed on to the table's FileIO.
pub const STORAGE_OPTION_PREFIXES: [&str; 7] = [
    "aws_", "google_", "azure_", "s3.", "gcs.", "adls.", "client.",
];

fn unknown_option(key: &str) -> crate::Error {
    crate::Error::invalid_argument(format!(
        "STORED AS ICEBERG: unknown option '{key}' (accepted: {}, and object store options \
         starting with {})",
        TABLE_OPTIONS.join(", "),
        STORAGE_OPTION_PREFIXES.join(", ")
    ))
}

/// Arrow types compared as a declared column type: string and binary types in any
/// encoding are one type each, and timestamps of any unit and zone one type (SQL's
/// `TIMESTAMP [WITH TIME ZONE]` is planned as nanoseconds without a zone).
fn comparable(data_type: &DataType) -> DataType {
    match data_type {
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        DataType::BinaryView | DataType::LargeBinary => DataType::Binary,
        DataType::Timestamp(_, _) => DataType::Timestamp(TimeUnit::Microsecond, None),
        other => other.clone(),
    }
}

/// Check a declared column list against the table's Arrow schema.
fn check_declared_columns(cmd: &CreateExternalTable, table: &SchemaRef) -> crate::Result<()> {
    let declared = cmd.schema.fields();
    if declared.is_empty() {
        return Ok(());
    }
    let describe = |fields: &mut dyn Iterator<Item = (&String, &DataType)>| {
        fields
            .map(|(n, t)| format!("{n} {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let same = declared.len() == table.fields().len()
        && declared.iter().zip(table.fields()).all(|(d, t)| {
            d.name() == t.name()
                && (comparable(d.data_type()) == comparable(t.data_type())
                    || d.data_type().equals_datatype(t.data_type()))
        });
    if same {
        return Ok(());
    }
    Err(crate::Error::invalid_argument(format!(
        "CREATE EXTERNAL TABLE {}: the declared columns ({}) do not match the Iceberg table's \
         columns ({}); leave the column list out to take the table's",
        cmd.name,
        describe(&mut declared.iter().map(|f| (f.name(), f.data_type()))),
        describe(&mut table.fields().iter().map(|f| (f.name(), f.data_type())))
    )))
}

#[async_trait]
impl TableProviderFactory for IcebergTableProviderFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> DFResult<Arc<dyn TableProvider>> {
        // the session's storage properties for tables read by location, under OPTIONS
        let mut options = OpenOptions {
            storage_properties: LocationStorageProperties::of(state.config()),
            ..Default::default()
        };
        // (key, version): the one time-travel option given
        let mut version: Option<(&str, TableVersion)> = None;
        for (key, value) in &cmd.options {
            // DataFusion prefixes format options with `format.`
            let key = key.strip_prefix("format.").unwrap_or(key);
            match key {
                _ if TIME_TRAVEL_OPTIONS.contains(&key) => {
                    if let Some((first, _)) = version {
                        return Err(crate::Error::invalid_argument(format!(
                            "STORED AS ICEBERG: options '{first}' and '{key}' both pick the \
                             snapshot to read; give one"
                        ))
                        .into());
                    }
                    let picked = TableVersion::from_key_value(key, value)
                        .map_err(|e| e.context(format!("STORED AS ICEBERG option '{key}'")))?;
                    version = Some((key, picked));
                }
                "allow_moved_paths" => {
                    options.allow_moved_paths = value.eq_ignore_ascii_case("true")
                }
                "remap" => {
                    for rule in value.split(';').filter(|r| !r.trim().is_empty()) {
                        let (from, to) = rule.split_once("=>").ok_or_else(|| {
                            crate::Error::invalid_argument(format!(
                                "option remap '{rule}' is not 'old=>new'"
                            ))
                        })?;
                        options
                            .remap
                            .push((from.trim().to_string(), to.trim().to_string()));
                    }
                }
                _ if STORAGE_OPTION_PREFIXES.iter().any(|p| key.starts_with(p)) => {
                    options
                        .storage_properties
                        .insert(key.to_string(), value.clone());
                }
                _ => return Err(unknown_option(key).into()),
            }
        }
        let [location] = cmd.locations.as_slice() else {
            return Err(crate::Error::invalid_argument(format!(
                "STORED AS ICEBERG takes exactly one LOCATION, found {}",
                cmd.locations.len()
            ))
            .into());
        };
        let view_types = state
            .config_options()
            .execution
            .parquet
            .schema_force_view_types;
        // a directory is read at its current version at each statement, a metadata file
        // at its own (`followed_directory`)
        let provider = FollowedDirectory::open(
            &cmd.name.to_string(),
            location,
            options,
            version.map(|(_, v)| v),
            Some(view_types),
        )
        .await?;
        check_declared_columns(cmd, &provider.schema())?;
        Ok(Arc::new(provider))
    }
}

/// Register [`IcebergTableProviderFactory`] under `ICEBERG` in `ctx`, enabling
/// `CREATE EXTERNAL TABLE … STORED AS ICEBERG LOCATION '…'`; also installs the
/// optimizer rule that lets `INSERT … VALUES` carry nested values
/// ([`install_values_rule`](super::install_values_rule)) and turns on exact decimal
/// literals (`datafusion.sql_parser.parse_float_as_decimal = true`, with the rewrite that
/// keeps `float`/`double` comparisons in double:
/// [`use_decimal_literals`](super::use_decimal_literals)), so
/// `WHERE dec_col = 3703703670369.0370370367` finds its row. Statements run through
/// [`sql::execute`](super::sql::execute) read exponent literals (`1e300`) as doubles, as
/// Spark does; plain `ctx.sql` reads them as decimals and refuses those beyond the
/// decimal range (DataFusion 55: "Decimal scale -300 exceeds the minimum supported
/// scale"). String literals compared with a `uuid` column are read as UUIDs
/// ([`install_uuid_literal_rule`](super::install_uuid_literal_rule)), and times of
/// different units compare ([`install_time_literal_rule`](super::install_time_literal_rule)),
/// as do timestamps of years nanoseconds cannot hold (`TIMESTAMP '0001-01-01 00:00:00'`,
/// [`install_timestamp_literal_rule`](super::install_timestamp_literal_rule)),
/// zone-less times compared with `timestamptz` values are read in the session's zone and
/// Spark's `year`, `hour`, … functions are there
/// ([`install_session_zone_rule`](super::install_session_zone_rule)),
/// and `m[1]` reads a map with `int` keys such as `$files`' `column_sizes`
/// ([`install_map_key_rule`](super::install_map_key_rule)); `min`/`max` order NaN above
/// every number in groups too ([`register_min_max`](super::register_min_max)), and float
/// keys group and join as in Spark, `-0.0` with `0.0`
/// ([`install_float_key_rule`](super::install_float_key_rule)).
pub fn register_iceberg_factory(ctx: &SessionContext) {
    super::register_min_max(ctx);
    super::install_values_rule(ctx);
    super::use_decimal_literals(ctx);
    super::install_uuid_literal_rule(ctx);
    super::install_time_literal_rule(ctx);
    super::install_session_zone_rule(ctx);
    super::install_timestamp_literal_rule(ctx);
    super::install_map_key_rule(ctx);
    super::install_float_key_rule(ctx);
    ctx.state_ref()
        .write()
        .table_factories_mut()
        .insert("ICEBERG".to_string(), Arc::new(IcebergTableProviderFactory));
}
