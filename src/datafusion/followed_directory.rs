//! Tables registered by name from a location — the CLI's `--table NAME=LOCATION`,
//! `CREATE EXTERNAL TABLE … STORED AS ICEBERG LOCATION '…'` — read the version the
//! location names *at each statement*, as catalog tables and `iceberg_scan('DIR')` do.
//!
//! - A **table directory** names the table's current version: the metadata file
//!   `metadata/version-hint.text` names, or the newest one (see [`Table::open_with`]).
//!   Its provider carries a [`FollowedDirectory`]; the schema that resolves its name
//!   ([`IcebergNamesSchemaProvider`](super::IcebergNamesSchemaProvider), the CLI's
//!   default schema) finds the current metadata file at each statement and, when another
//!   process committed since, loads it (with the location, storage options, time-travel
//!   option and view types registration used) and keeps the new provider under the name.
//!   The caches of immutable files (manifests, position deletes, checked files) are
//!   shared by the versions. Without another commit the provider is reused: one small
//!   read (the version hint) a statement.
//! - A **metadata file** (`….metadata.json`) names one version: the table stays at it
//!   (it is pinned). When a later commit expired its snapshot and deleted the files,
//!   reading it fails saying so ([`super::expired_reads`]).
//!
//! A schema that is not an `IcebergNamesSchemaProvider` (DataFusion's in-memory one
//! used directly) hands out the provider as registered: the version loaded then.

use std::sync::Arc;

use super::table_provider::IcebergTableProvider;
use crate::catalog::TableVersion;
use crate::error::Result;
use crate::table::{OpenOptions, Table};

/// How a table registered by its directory is loaded again (see the module docs).
#[derive(Debug)]
pub struct FollowedDirectory {
    /// The directory as registered.
    location: String,
    /// The options it was opened with (storage properties, remaps, moved paths).
    options: OpenOptions,
    /// The snapshot, branch or tag it was registered at (`None`: the current one).
    version: Option<TableVersion>,
    /// Whether strings and binaries are exposed as views (as at registration).
    view_types: Option<bool>,
    /// The name it was registered under.
    name: String,
}

/// The provider of `table` registered as `name`: at `version` when given (a branch
/// read at its head with the current schema, a snapshot id, tag or timestamp with the
/// snapshot's own schema, as Iceberg Java picks them), strings and binaries as views
/// when `view_types` says so.
///
/// Errors: a version the table does not hold; a schema icefloe cannot read.
fn provider_of(
    table: Table,
    name: &str,
    version: Option<&TableVersion>,
    view_types: Option<bool>,
) -> Result<IcebergTableProvider> {
    let mut provider = IcebergTableProvider::try_new(table)?.with_table_name(name);
    if let Some(view_types) = view_types {
        provider = provider.with_schema_force_view_types(view_types)?;
    }
    if let Some(version) = version {
        let snapshot = version.resolve(provider.table().metadata(), name)?;
        provider = match (version, snapshot.map(|s| s.snapshot_id)) {
            (TableVersion::Ref(r), _) => provider.with_ref(r)?,
            (_, Some(id)) => provider.with_snapshot_id(id)?,
            (_, None) => provider,
        };
    }
    Ok(provider)
}

impl FollowedDirectory {
    /// The provider of the table at `location` (a table directory or a metadata file)
    /// registered as `name`, at `version` if given, strings and binaries as views if
    /// `view_types` says so (the provider's default otherwise). A directory is followed
    /// (see the module docs); a metadata file is read as it is.
    ///
    /// Errors: as [`Table::open_with`]'s, naming the location; a version the table does
    /// not hold.
    pub async fn open(
        name: &str,
        location: &str,
        options: OpenOptions,
        version: Option<TableVersion>,
        view_types: Option<bool>,
    ) -> Result<IcebergTableProvider> {
        let table = Table::open_with(location, options.clone()).await?;
        let provider = provider_of(table, name, version.as_ref(), view_types)?;
        if Table::is_metadata_file(location) {
            return Ok(provider);
        }
        let followed = Arc::new(Self {
            location: location.to_string(),
            options,
            version,
            view_types,
            name: name.to_string(),
        });
        Ok(provider.with_followed(followed))
    }

    /// The provider of the directory's current version when another commit made a new
    /// one since `registered` was loaded (sharing its caches and following the
    /// directory too); `None` when `registered` is current.
    ///
    /// Errors: the directory holds no readable metadata any more, or no longer the
    /// registered version (a dropped branch), naming the table and its directory.
    pub(crate) async fn refreshed(
        self: &Arc<Self>,
        registered: &IcebergTableProvider,
    ) -> Result<Option<IcebergTableProvider>> {
        let context = || {
            format!(
                "table '{}' (registered by its directory '{}'): loading its current version",
                self.name, self.location
            )
        };
        let current = Table::current_metadata_file(&self.location, &self.options)
            .await
            .map_err(|e| e.context(context()))?;
        if current == registered.table().metadata_location() {
            return Ok(None);
        }
        let table = Table::open_with(&self.location, self.options.clone())
            .await
            .map_err(|e| e.context(context()))?;
        let provider = provider_of(table, &self.name, self.version.as_ref(), self.view_types)
            .map_err(|e| e.context(context()))?
            .with_caches(registered.caches().clone())
            .with_followed(Arc::clone(self));
        Ok(Some(provider))
    }
}
