//! `SHOW TABLES [FROM|IN [cat.]ns] [[LIKE] 'pattern']` as Spark and Trino users expect
//! it: the tables (and session views) of one namespace, listed as the catalog holds them
//! now.
//!
//! - Spark's `SHOW TABLES` lists the current namespace's tables (after `USE ns`), Trino's
//!   the current schema's; both take `FROM|IN ns` for another one. DataFusion 55 lists
//!   every table of every catalog and takes no `FROM`. Here, when the current schema is a
//!   namespace of an Iceberg catalog (`USE ns`, or a session whose default schema is
//!   one), only its tables are listed; `FROM|IN [cat.]ns` lists that schema's (any
//!   schema: `FROM public` too). A session whose current schema is no namespace (the
//!   CLI's in-memory `public` before any `USE`) has no current namespace to list, so it
//!   keeps DataFusion's list of everything.
//! - The Iceberg catalogs' namespace and table lists are read again first: tables that
//!   another session or process created or dropped since are listed as they are now
//!   (DataFusion's lists are the ones read when the catalog was attached, kept up to
//!   date only by this session's own DDL). Once per statement: with icefloe's
//!   `information_schema` (which reads them when scanned) the statement reads them
//!   either itself or through the view, never both.
//!
//! - Spark's pattern (`LIKE 'sam*|suj'`, the `LIKE` optional: module `show_patterns`)
//!   keeps the rows whose table name matches it, also in DataFusion's list of every
//!   table (DataFusion 55 refuses `SHOW TABLES LIKE`).
//!
//! The rows are `information_schema.tables`' (`table_catalog`, `table_schema`,
//! `table_name`, `table_type`: DataFusion's columns, so output read by scripts keeps its
//! shape), sorted by name.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, BooleanArray};
use datafusion::arrow::compute::{cast, filter_record_batch};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::TableReference;
use datafusion::dataframe::DataFrame;
use datafusion::datasource::MemTable;
use datafusion::prelude::{col, lit, SessionContext};

use super::show_namespaces::{from_or_in, like_pattern};
use super::show_patterns::ShowPattern;
use super::tokens::Cursor;
use super::{defaults, IcebergTarget};
use crate::datafusion::catalog::IcebergCatalogProvider;
use crate::datafusion::information_schema;
use crate::error::{Error, ErrorKind, Result};

/// `SHOW TABLES …` after `SHOW` at `c`: the one namespace's tables (see the module
/// docs); `None` for DataFusion's list (no current namespace, no pattern) and for a
/// `SHOW TABLES` form this does not read (DataFusion reports it).
///
/// Errors: [`crate::ErrorKind::NotFound`] when the catalog or namespace named (or the
/// current one) does not exist, listing the catalog's schemas; the catalog's, listing
/// its namespaces and tables.
pub(super) async fn show_tables(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    if !c.eat_keyword("TABLES") {
        return Ok(None);
    }
    let Some(named) = from_or_in(&mut c) else {
        return Ok(None);
    };
    // a form this does not read (`LIKE` without a string, …): DataFusion reports it
    let Ok(pattern) = like_pattern(&mut c) else {
        return Ok(None);
    };
    if !c.at_end() {
        return Ok(None);
    }
    let (default_catalog, default_schema) = defaults(ctx);
    let (catalog, schema) = match named.as_deref() {
        Some([cat, rest @ ..]) if !rest.is_empty() && ctx.catalog(cat).is_some() => {
            (cat.clone(), rest.join("."))
        }
        Some(all) => (default_catalog, all.join(".")),
        None => (default_catalog, default_schema),
    };
    let what = match &named {
        Some(parts) => format!("SHOW TABLES FROM {}", parts.join(".")),
        None => "SHOW TABLES".to_string(),
    };
    let target = IcebergTarget::find(ctx, &catalog);
    let is_namespace = target
        .as_ref()
        .is_some_and(|t| !t.iceberg().is_other_schema(&schema));
    if named.is_none() && !is_namespace {
        // no current namespace: every catalog's tables, as they are now; icefloe's
        // `information_schema` reads the lists itself when DataFusion's `SHOW TABLES`
        // (or this statement, for a pattern) scans it (once per statement)
        if !information_schema::reads_lists_anew(ctx, &catalog) {
            for name in ctx.catalog_names() {
                if let Some(t) = IcebergTarget::find(ctx, &name) {
                    refresh(t.iceberg(), &what).await?;
                }
            }
        }
        let Some(pattern) = pattern else {
            return Ok(None);
        };
        // DataFusion's `SHOW TABLES` takes no pattern: its rows, filtered here
        let tables = ctx
            .table(TableReference::full(
                catalog.as_str(),
                "information_schema",
                "tables",
            ))
            .await?;
        return matching(ctx, tables, &pattern).await.map(Some);
    }
    if let Some(t) = &target {
        refresh(t.iceberg(), &what).await?;
    }
    let Some(provider) = ctx.catalog(&catalog) else {
        return Err(Error::not_found(format!(
            "{what}: catalog '{catalog}' does not exist (catalogs: {})",
            ctx.catalog_names().join(", ")
        )));
    };
    if provider.schema(&schema).is_none() {
        let mut schemas = provider.schema_names();
        schemas.retain(|s| s != "information_schema");
        return Err(Error::not_found(format!(
            "{what}: namespace '{schema}' does not exist in catalog '{catalog}' (schemas: {})",
            schemas.join(", ")
        )));
    }
    // the lists just read, not read again by icefloe's `information_schema`
    let tables = match information_schema::as_listed(ctx, &catalog, "tables").await? {
        Some(listed) => ctx.read_table(listed)?,
        None => {
            ctx.table(TableReference::full(
                catalog.as_str(),
                "information_schema",
                "tables",
            ))
            .await?
        }
    };
    let tables = tables
        .filter(
            col("table_catalog")
                .eq(lit(catalog.as_str()))
                .and(col("table_schema").eq(lit(schema.as_str()))),
        )?
        .sort(vec![col("table_name").sort(true, false)])?;
    match pattern {
        Some(pattern) => matching(ctx, tables, &pattern).await.map(Some),
        None => Ok(Some(tables)),
    }
}

/// The rows of `tables` (`information_schema.tables`' columns) whose `table_name`
/// matches `pattern`, in their order.
///
/// Errors: DataFusion's, reading the rows.
async fn matching(
    ctx: &SessionContext,
    tables: DataFrame,
    pattern: &ShowPattern,
) -> Result<DataFrame> {
    let schema = tables.schema().inner().clone();
    let mut kept = Vec::new();
    for batch in tables.collect().await? {
        let names = cast(
            batch.column_by_name("table_name").ok_or_else(|| {
                Error::new(ErrorKind::DataFusion, "SHOW TABLES: no column table_name")
            })?,
            &DataType::Utf8,
        )
        .map_err(|e| Error::new(ErrorKind::DataFusion, "SHOW TABLES").with_source(e))?;
        let names = names.as_string::<i32>();
        let mask: BooleanArray = (0..names.len())
            .map(|i| Some(names.is_valid(i) && pattern.matches(names.value(i))))
            .collect();
        kept.push(
            filter_record_batch(&batch, &mask)
                .map_err(|e| Error::new(ErrorKind::DataFusion, "SHOW TABLES").with_source(e))?,
        );
    }
    let table = MemTable::try_new(schema, vec![kept])?;
    Ok(ctx.read_table(Arc::new(table))?)
}

/// Read `catalog`'s namespace and table lists again.
async fn refresh(catalog: &IcebergCatalogProvider, what: &str) -> Result<()> {
    catalog.refresh().await.map_err(|e| e.context(what))
}
