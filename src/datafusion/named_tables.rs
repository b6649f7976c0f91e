//! The suffixed table names of [`super::catalog`] (`"t$snapshots"`, `"t@v1"`,
//! `"t@<snapshot id>$files"`) for Iceberg tables registered by name — the CLI's
//! `--table NAME=LOCATION`, `CREATE EXTERNAL TABLE … STORED AS ICEBERG`,
//! `ctx.register_table` — so that every Iceberg table answers to one naming scheme.
//!
//! [`IcebergNamesSchemaProvider`] wraps a schema (usually DataFusion's in-memory one):
//! names it holds resolve as before; a name it does not hold whose base name (before `@`
//! or `$`) is a registered [`IcebergTableProvider`] resolves to that table at the version
//! after `@` and/or to the metadata table after `$`. A `$` suffix that is no metadata
//! table is an error listing the metadata table names.
//!
//! A table registered by its directory is resolved at the directory's current version
//! at each lookup, i.e. each statement (see [`super::followed_directory`]).

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::SchemaProvider;
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::datasource::TableProvider;

use super::catalog::{table_provider_for, TableNameParts};
use super::metadata_tables::MetadataTableKind;
use super::table_provider::IcebergTableProvider;
use crate::catalog::TableVersion;
use crate::error::Error;

/// A schema whose Iceberg tables also answer to suffixed names (see the module docs).
#[derive(Debug)]
pub struct IcebergNamesSchemaProvider {
    inner: Arc<dyn SchemaProvider>,
}

impl IcebergNamesSchemaProvider {
    /// Wrap `inner`; tables are registered in and read from it.
    pub fn new(inner: Arc<dyn SchemaProvider>) -> Self {
        Self { inner }
    }
}

/// The error for `name`, whose text after the last `$` is no metadata table, when the
/// text before it (`base`) names a table. Errors: [`crate::ErrorKind::NotFound`].
pub fn unknown_metadata_table(name: &str) -> Option<(&str, Error)> {
    let (base, suffix) = name.rsplit_once('$')?;
    if base.is_empty() || MetadataTableKind::parse(suffix).is_some() {
        return None;
    }
    let error = Error::not_found(format!(
        "metadata table '{suffix}' of table '{base}' (metadata tables: {})",
        MetadataTableKind::ALL.map(|k| k.name()).join(", ")
    ));
    Some((base, error))
}

impl IcebergNamesSchemaProvider {
    /// The table registered as `name`; for one registered by its directory, at the
    /// directory's current version, kept under the name when another commit made a new
    /// one ([`super::followed_directory`]).
    async fn current(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        let Some(table) = self.inner.table(name).await? else {
            return Ok(None);
        };
        let Some((registered, followed)) = table
            .downcast_ref::<IcebergTableProvider>()
            .and_then(|p| p.followed().map(|f| (p, Arc::clone(f))))
        else {
            return Ok(Some(table));
        };
        let Some(newer) = followed.refreshed(registered).await? else {
            return Ok(Some(table));
        };
        let newer: Arc<dyn TableProvider> = Arc::new(newer);
        self.inner.deregister_table(name)?;
        self.inner
            .register_table(name.to_string(), Arc::clone(&newer))?;
        Ok(Some(newer))
    }
}

#[async_trait]
impl SchemaProvider for IcebergNamesSchemaProvider {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        if let Some(table) = self.current(name).await? {
            return Ok(Some(table));
        }
        let parts = TableNameParts::parse(name);
        if parts.is_plain() {
            if let Some((base, error)) = unknown_metadata_table(name) {
                let base = TableNameParts::parse(base).base;
                if self.inner.table_exist(base) {
                    return Err(error.into());
                }
            }
            return Ok(None);
        }
        let Some(base) = self.current(parts.base).await? else {
            return Ok(None);
        };
        let Some(iceberg) = base.downcast_ref::<IcebergTableProvider>() else {
            return Err(DataFusionError::Plan(format!(
                "table '{}' is not an Iceberg table: '{name}' needs one",
                parts.base
            )));
        };
        let table = iceberg.table().clone();
        let version = match parts.version {
            Some(text) => Some(TableVersion::from_suffix(
                text,
                table.metadata(),
                parts.base,
            )?),
            // a table registered at a snapshot lists that snapshot's metadata
            None => iceberg
                .snapshot()
                .filter(|s| {
                    table.metadata().current_snapshot().map(|c| c.snapshot_id)
                        != Some(s.snapshot_id)
                })
                .map(|s| TableVersion::SnapshotId(s.snapshot_id)),
        };
        let version = version.filter(|_| {
            parts.version.is_some() || parts.metadata.is_some_and(|k| k.is_snapshot_scoped())
        });
        Ok(Some(
            table_provider_for(table, parts.base, version.as_ref(), parts.metadata).await?,
        ))
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> DFResult<Option<Arc<dyn TableProvider>>> {
        self.inner.register_table(name, table)
    }

    fn deregister_table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        self.inner.deregister_table(name)
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
    }
}
