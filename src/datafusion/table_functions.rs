//! Table functions for time travel and metadata tables, usable on any Iceberg table —
//! one in an attached catalog, one registered by name (e.g. the CLI's `--table`), or a
//! table location:
//!
//! ```sql
//! SELECT * FROM iceberg_scan('ns.orders', 'snapshot_id', 4407679495151858443);
//! SELECT * FROM iceberg_scan('ns.orders', 'ref', 'v1-tag');          -- branch or tag
//! SELECT * FROM iceberg_scan('ns.orders', 'as_of', '2026-01-01T00:00:00Z');
//! SELECT * FROM iceberg_scan('warehouse/db/orders');                  -- a location
//! SELECT * FROM iceberg_metadata('mycat.ns.orders', 'snapshots');
//! SELECT * FROM iceberg_metadata('ns.orders', 'files', 'ref', 'v1-tag');
//! ```
//!
//! The first argument is a table reference (`t`, `ns.t`, `cat.ns.t`, resolved like a
//! table name in `FROM`) or, when no table has that name, a metadata file or table
//! directory. The optional key/value pair picks the snapshot: `snapshot_id`, `ref` (also
//! `branch` / `tag`) or `as_of` (a timestamp, UTC unless it has a zone, or ms since the
//! epoch); see [`TableVersion`]. A table directory read without a version is read at
//! its current version and followed as a table registered by its directory is (a
//! concurrent expiry of the snapshot read says so as for a catalog's table); a metadata
//! file, or a version picked by the key/value pair, pins the read there
//! ([`super::followed_directory`], [`super::expired_reads`]). DataFusion table functions take positional arguments
//! only and are planned synchronously, so the table is loaded on a helper thread while
//! the query is planned.

use std::future::Future;
use std::sync::Arc;

use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl};
use datafusion::common::{Result as DFResult, ScalarValue, TableReference};
use datafusion::datasource::TableProvider;
use datafusion::logical_expr::Expr;
use datafusion::prelude::SessionContext;

use super::catalog::table_provider_for;
use super::followed_directory::FollowedDirectory;
use super::location_storage::LocationStorageProperties;
use super::metadata_tables::MetadataTableKind;
use super::table_provider::IcebergTableProvider;
use crate::catalog::TableVersion;
use crate::error::{Error, ErrorKind, Result};
use crate::table::{OpenOptions, Table};

/// Register `iceberg_scan` and `iceberg_metadata` in `ctx`, `min`/`max` with Spark's
/// NaN semantics ([`register_min_max`](super::register_min_max)), and Spark's float keys
/// ([`install_float_key_rule`](super::install_float_key_rule)).
pub fn register_iceberg_functions(ctx: &SessionContext) {
    super::register_min_max(ctx);
    super::install_float_key_rule(ctx);
    ctx.register_udtf("iceberg_scan", Arc::new(IcebergScanFunction));
    ctx.register_udtf("iceberg_metadata", Arc::new(IcebergMetadataFunction));
}

/// `iceberg_scan(table [, key, value])`: a table at a snapshot (see the module docs).
#[derive(Debug, Default)]
pub struct IcebergScanFunction;

/// `iceberg_metadata(table, name [, key, value])`: a metadata table (see the module docs
/// and [`MetadataTableKind`]).
#[derive(Debug, Default)]
pub struct IcebergMetadataFunction;

/// Run `fut` to completion on a helper thread with its own runtime, so it works from
/// any caller (inside or outside a Tokio runtime, of either flavour).
fn block_on<T: Send>(fut: impl Future<Output = Result<T>> + Send) -> Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    Error::new(ErrorKind::Io, "cannot start a runtime to load the table")
                        .with_source(e)
                })?
                .block_on(fut)
        })
        .join()
        .map_err(|_| Error::new(ErrorKind::Io, "loading the table panicked"))?
    })
}

/// The text of a literal argument (strings, numbers, timestamps as ms since epoch).
fn literal_text(expr: &Expr, function: &str, position: usize) -> Result<String> {
    let bad = || {
        Error::invalid_argument(format!(
            "{function}: argument {position} must be a literal string or number, found {expr}"
        ))
    };
    match expr {
        Expr::Literal(v, _) => match v {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => Ok(s.clone()),
            ScalarValue::TimestampSecond(Some(v), _) => Ok((v * 1000).to_string()),
            ScalarValue::TimestampMillisecond(Some(v), _) => Ok(v.to_string()),
            ScalarValue::TimestampMicrosecond(Some(v), _) => Ok(v.div_euclid(1000).to_string()),
            ScalarValue::TimestampNanosecond(Some(v), _) => Ok(v.div_euclid(1_000_000).to_string()),
            v if v.data_type().is_integer() && !v.is_null() => Ok(v.to_string()),
            _ => Err(bad()),
        },
        // TIMESTAMP '…' arrives as a cast of the text
        Expr::Cast(c) => literal_text(&c.expr, function, position),
        Expr::Negative(inner) => literal_text(inner, function, position).map(|t| format!("-{t}")),
        _ => Err(bad()),
    }
}

/// Whether `text` looks like a location rather than a table name.
fn looks_like_location(text: &str) -> bool {
    text.contains('/') || text.contains('\\') || text.ends_with(".json")
}

/// The Iceberg table `name` refers to in `session`, or at location `name`.
fn load_table(
    session: &dyn Session,
    name: &str,
    function: &str,
) -> Result<(Table, Arc<dyn TableProvider>)> {
    let options = &session.config_options().catalog;
    let reference =
        TableReference::parse_str(name).resolve(&options.default_catalog, &options.default_schema);
    let schema = session
        .catalog_list()
        .catalog(&reference.catalog)
        .and_then(|c| c.schema(&reference.schema));
    let registered = match &schema {
        Some(schema) if !looks_like_location(name) => block_on(async {
            schema.table(&reference.table).await.map_err(|e| {
                Error::new(
                    ErrorKind::DataFusion,
                    format!("{function}: cannot load table '{name}'"),
                )
                .with_source(e)
            })
        })?,
        _ => None,
    };
    match registered {
        Some(provider) => {
            let iceberg = provider.downcast_ref::<IcebergTableProvider>().ok_or_else(|| {
                Error::invalid_argument(format!("{function}: table '{name}' is not an Iceberg table"))
            })?;
            Ok((iceberg.table().clone(), provider))
        }
        // a relative directory name (`iceberg_scan('sample_table')`) when no table has it
        // with the session's storage properties for tables read by location (the CLI's
        // `--catalog` config's `s3.*`: `LocationStorageProperties`)
        None if looks_like_location(name) || std::path::Path::new(name).exists() => {
            let options = OpenOptions {
                storage_properties: LocationStorageProperties::of(session.config()),
                ..Default::default()
            };
            // a directory is followed as one registered by it (`--table NAME=DIR`) is:
            // loaded at its current version, its expiry errors worded as a catalog
            // table's; a metadata file stays pinned (`followed_directory`)
            let provider = block_on(FollowedDirectory::open(name, name, options, None, None))?;
            Ok((provider.table().clone(), Arc::new(provider)))
        }
        None => Err(Error::not_found(format!(
            "{function}: table '{name}' (no such table in catalog '{}' schema '{}', and not a table location)",
            reference.catalog, reference.schema
        ))),
    }
}

/// The optional `key, value` pair at `args[start..]`.
fn version_args(args: &[Expr], start: usize, function: &str) -> Result<Option<TableVersion>> {
    match &args[start.min(args.len())..] {
        [] => Ok(None),
        [key, value] => {
            let key = literal_text(key, function, start + 1)?;
            let value = literal_text(value, function, start + 2)?;
            TableVersion::from_key_value(&key, &value).map(Some)
        }
        _ => Err(Error::invalid_argument(format!(
            "{function}: expected a table, then optionally a key ('snapshot_id', 'ref' or 'as_of') and a value; \
             found {} arguments",
            args.len()
        ))),
    }
}

impl TableFunctionImpl for IcebergScanFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> DFResult<Arc<dyn TableProvider>> {
        const NAME: &str = "iceberg_scan";
        let exprs = args.exprs();
        let Some(first) = exprs.first() else {
            return Err(Error::invalid_argument(format!(
                "{NAME}: expected a table name or location"
            ))
            .into());
        };
        let name = literal_text(first, NAME, 1)?;
        let version = version_args(exprs, 1, NAME)?;
        let (table, provider) = load_table(args.session(), &name, NAME)?;
        match version {
            None => Ok(provider),
            Some(v) => Ok(block_on(table_provider_for(table, &name, Some(&v), None))?),
        }
    }
}

impl TableFunctionImpl for IcebergMetadataFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> DFResult<Arc<dyn TableProvider>> {
        const NAME: &str = "iceberg_metadata";
        let exprs = args.exprs();
        if exprs.len() < 2 {
            return Err(Error::invalid_argument(format!(
                "{NAME}: expected a table and a metadata table name ({})",
                MetadataTableKind::ALL.map(|k| k.name()).join(", ")
            ))
            .into());
        }
        let name = literal_text(&exprs[0], NAME, 1)?;
        let kind_name = literal_text(&exprs[1], NAME, 2)?;
        let kind = MetadataTableKind::parse(&kind_name).ok_or_else(|| {
            Error::not_found(format!(
                "{NAME}: metadata table '{kind_name}' (known: {})",
                MetadataTableKind::ALL.map(|k| k.name()).join(", ")
            ))
        })?;
        let version = version_args(exprs, 2, NAME)?;
        let (table, _) = load_table(args.session(), &name, NAME)?;
        Ok(block_on(table_provider_for(
            table,
            &name,
            version.as_ref(),
            Some(kind),
        ))?)
    }
}
