//! A [`Catalog`] as a DataFusion `CatalogProvider`: namespaces are schemas, so
//! `SHOW TABLES`, `information_schema` and three-part names (`cat.ns.t`) work.
//!
//! Table names may carry suffixes, resolved when the query is planned:
//!
//! | name | reads |
//! |---|---|
//! | `t` | the current snapshot (metadata reloaded from the catalog for every query) |
//! | `"t@v1-tag"`, `"t@main"` | the snapshot a tag or branch points at |
//! | `"t@4407679495151858443"` | a snapshot by id |
//! | `"t@2026-01-01T00:00:00Z"`, `"t@2026-01-01 10:00:00"`, `"t@2026-01-01"` | the snapshot current at that time (UTC unless a zone is given) |
//! | `"t$snapshots"`, `"t$files"`, … | a metadata table ([`MetadataTableKind`]) |
//! | `"t@v1-tag$files"` | a snapshot-scoped metadata table at that snapshot |
//!
//! A `$` suffix that is no metadata table name is an error listing them. Tables
//! registered by name get the same suffixes through
//! [`IcebergNamesSchemaProvider`](super::named_tables::IcebergNamesSchemaProvider).
//! After `@`, a branch or tag name wins over a snapshot id, which wins over a timestamp.
//! The suffixed names need double quotes in SQL. As in Iceberg Java, a snapshot id, tag or
//! timestamp reads with the schema the snapshot was written with, a branch with the
//! table's current schema.
//!
//! Namespace and table lists are read when the provider is created
//! ([`IcebergCatalogProvider::try_new`]) and on [`IcebergCatalogProvider::refresh`], and
//! kept up to date by icefloe's DDL statements ([`crate::datafusion::sql::execute`]);
//! tables themselves are loaded on every lookup, so queries see new commits. The root
//! namespace (tables directly under a Hadoop warehouse) is the schema
//! [`ROOT_NAMESPACE_SCHEMA`]. Other schemas (e.g. DataFusion's in-memory `public`) can be
//! registered beside the namespaces with `register_schema`.
//!
//! A namespace's schema also takes session views (`CREATE VIEW ns.v AS …`,
//! DataFusion's `register_table` of a view): they live in the session only (icefloe has
//! no Iceberg catalog views), are listed beside the tables (as `VIEW` in
//! `information_schema.tables`), shadow no table, and survive a
//! [`refresh`](IcebergCatalogProvider::refresh). Any other table registered by name
//! there is refused: a namespace's tables are the catalog's.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, MemorySchemaProvider, SchemaProvider};
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::datasource::{TableProvider, TableType};

use super::insert::WriteTarget;
use super::metadata_tables::{metadata_table_provider, MetadataTableKind};
use super::table_provider::IcebergTableProvider;
use crate::catalog::{Catalog, Namespace, TableIdent, TableVersion};
use crate::error::{Error, ErrorKind, Result};
use crate::scan::cache::SessionCaches;
use crate::table::Table;

/// The schema name of the root (empty) namespace.
pub const ROOT_NAMESPACE_SCHEMA: &str = "default";

/// The DataFusion schema name of a namespace.
pub fn schema_name(namespace: &Namespace) -> String {
    if namespace.is_root() {
        ROOT_NAMESPACE_SCHEMA.to_string()
    } else {
        namespace.to_string()
    }
}

/// A table name split into its base name and suffixes (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableNameParts<'a> {
    /// The table's name in its namespace.
    pub base: &'a str,
    /// The text after `@`, if any.
    pub version: Option<&'a str>,
    /// The metadata table after `$`, if any.
    pub metadata: Option<MetadataTableKind>,
}

impl<'a> TableNameParts<'a> {
    /// Split `name`: `base[@version][$metadata]`. A `$` suffix that is not a metadata
    /// table name stays part of the name.
    pub fn parse(name: &'a str) -> Self {
        let (rest, metadata) = match name.rsplit_once('$') {
            Some((rest, meta)) => match MetadataTableKind::parse(meta) {
                Some(kind) => (rest, Some(kind)),
                None => (name, None),
            },
            None => (name, None),
        };
        let (base, version) = match rest.split_once('@') {
            Some((base, v)) if !base.is_empty() && !v.is_empty() => (base, Some(v)),
            _ => (rest, None),
        };
        Self {
            base,
            version,
            metadata,
        }
    }

    /// Whether the name has no suffix.
    pub fn is_plain(&self) -> bool {
        self.version.is_none() && self.metadata.is_none()
    }
}

/// The DataFusion table for `table` at `version` (`None`: current), or its metadata
/// table `metadata`. `name` names the table in messages (also those refusing a write to
/// the version, [`IcebergTableProvider::with_table_name`]).
///
/// Errors: an unknown snapshot id, branch, tag, or a timestamp before the first snapshot
/// ([`ErrorKind::NotFound`], named); a metadata table of another snapshot than the
/// current for the tables that list the whole history (`snapshots`, `history`, …).
pub async fn table_provider_for(
    table: Table,
    name: &str,
    version: Option<&TableVersion>,
    metadata: Option<MetadataTableKind>,
) -> Result<Arc<dyn TableProvider>> {
    let snapshot = match version {
        None => None,
        Some(v) => v.resolve(table.metadata(), name)?.cloned(),
    };
    match metadata {
        Some(kind) => {
            if snapshot.is_some() && !kind.is_snapshot_scoped() {
                return Err(Error::invalid_argument(format!(
                    "metadata table '{}' lists the whole table history and cannot be read at a snapshot",
                    kind.name()
                )));
            }
            metadata_table_provider(&table, kind, snapshot.as_ref()).await
        }
        None => {
            let provider = IcebergTableProvider::try_new(table)?.with_table_name(name);
            // schemas as Iceberg Java picks them: a branch reads with the table's current
            // schema, a snapshot id, tag or timestamp with the snapshot's own
            Ok(Arc::new(match (version, snapshot) {
                (Some(TableVersion::Ref(name)), Some(_)) => provider.with_ref(name)?,
                (_, Some(s)) => provider.with_snapshot_id(s.snapshot_id)?,
                (_, None) => provider,
            }))
        }
    }
}

/// A [`Catalog`] as a DataFusion catalog (see the module docs).
#[derive(Debug)]
pub struct IcebergCatalogProvider {
    catalog: Arc<dyn Catalog>,
    schemas: RwLock<BTreeMap<String, Arc<IcebergSchemaProvider>>>,
    extra: RwLock<BTreeMap<String, Arc<dyn SchemaProvider>>>,
    /// Decoded manifest lists, manifests and position deletes of every table of the
    /// catalog, shared by the providers each statement loads (the files are immutable
    /// and keyed by location), so a statement does not read again what an earlier one
    /// decoded.
    caches: SessionCaches,
}

impl IcebergCatalogProvider {
    /// List the catalog's namespaces and tables and wrap it.
    pub async fn try_new(catalog: Arc<dyn Catalog>) -> Result<Self> {
        let provider = Self {
            catalog,
            schemas: RwLock::new(BTreeMap::new()),
            extra: RwLock::new(BTreeMap::new()),
            caches: SessionCaches::default(),
        };
        provider.refresh().await?;
        Ok(provider)
    }

    /// As [`try_new`](Self::try_new), with an empty in-memory schema `schema` beside
    /// the namespaces, for tables registered by name (e.g. `public` when this is the
    /// session's default catalog).
    pub async fn try_new_with_memory_schema(
        catalog: Arc<dyn Catalog>,
        schema: &str,
    ) -> Result<Self> {
        let provider = Self::try_new(catalog).await?;
        provider.register_schema(schema, Arc::new(MemorySchemaProvider::new()))?;
        Ok(provider)
    }

    /// The catalog.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }

    /// Re-read the namespace and table lists (e.g. before `SHOW TABLES`: another
    /// session or process may have created or dropped tables). A namespace still listed
    /// keeps its schema provider, so its session views stay; a namespace no longer
    /// listed is dropped with its views.
    ///
    /// A namespace listed but gone when its tables are listed (another process dropped
    /// it meanwhile; a filesystem catalog lists a directory a `CREATE TABLE` is making as
    /// a namespace until its metadata is written) is left out, as if listed a moment later:
    /// a query once failed with "cannot list catalog …: namespace 'ns.x22' not found"
    /// while another process created and dropped table `ns.x22`.
    ///
    /// Errors: the catalog's, listing namespaces or tables (nothing changes then).
    pub async fn refresh(&self) -> Result<()> {
        let mut listed = Vec::new();
        for ns in self.catalog.list_namespaces().await? {
            let tables = match self.catalog.list_tables(&ns).await {
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                tables => tables?,
            };
            listed.push((ns, tables.into_iter().map(|t| t.name).collect::<Vec<_>>()));
        }
        let mut schemas = self
            .schemas
            .write()
            .map_err(|_| Error::new(ErrorKind::Io, "catalog provider lock poisoned"))?;
        let mut now = BTreeMap::new();
        for (ns, tables) in listed {
            let name = schema_name(&ns);
            let schema = match schemas.remove(&name) {
                Some(kept) => {
                    kept.set_table_names(tables);
                    kept
                }
                None => Arc::new(IcebergSchemaProvider::new(
                    Arc::clone(&self.catalog),
                    ns,
                    tables,
                    self.caches.clone(),
                )),
            };
            now.insert(name, schema);
        }
        *schemas = now;
        Ok(())
    }

    /// The schema of a namespace by its DataFusion schema name, if listed.
    pub fn namespace_schema(&self, name: &str) -> Option<Arc<IcebergSchemaProvider>> {
        self.schemas.read().ok().and_then(|s| s.get(name).cloned())
    }

    /// Whether `name` is a schema registered beside the namespaces (not an Iceberg
    /// namespace), e.g. the in-memory `public`.
    pub fn is_other_schema(&self, name: &str) -> bool {
        self.extra.read().is_ok_and(|s| s.contains_key(name))
    }

    /// Stop listing `namespace` as a schema (it was dropped).
    pub fn remove_namespace(&self, namespace: &Namespace) -> Result<()> {
        self.schemas
            .write()
            .map_err(|_| Error::new(ErrorKind::Io, "catalog provider lock poisoned"))?
            .remove(&schema_name(namespace));
        Ok(())
    }

    /// When DataFusion schema `name` is not listed (neither a namespace nor another
    /// schema) but the catalog has namespace `name` now, list it with its tables: created
    /// by another process since the names were last listed (a `SHOW TABLES` that found
    /// it missing unlisted it, and every query naming it then failed with "schema not
    /// found" until a `SHOW TABLES IN` it). DataFusion resolves schemas without waiting,
    /// from the list, so a statement calls this for the schemas it names first.
    ///
    /// Errors: the catalog's, asking for the namespace or listing its tables (nothing
    /// is listed then).
    pub async fn recheck_namespace(&self, name: &str) -> Result<()> {
        if self.schema(name).is_some() {
            return Ok(());
        }
        let namespace = Namespace::parse(name);
        if !self.catalog.namespace_exists(&namespace).await? {
            return Ok(());
        }
        let tables = match self.catalog.list_tables(&namespace).await {
            // dropped again meanwhile
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            tables => tables?,
        };
        let schema = self.add_namespace(&namespace)?;
        schema.set_table_names(tables.into_iter().map(|t| t.name).collect());
        Ok(())
    }

    /// Make `namespace` (and its parents) visible as schemas, with no tables listed, if
    /// they are not yet; returns the namespace's schema.
    pub fn add_namespace(&self, namespace: &Namespace) -> Result<Arc<IcebergSchemaProvider>> {
        let mut schemas = self
            .schemas
            .write()
            .map_err(|_| Error::new(ErrorKind::Io, "catalog provider lock poisoned"))?;
        let levels = namespace.levels();
        for n in 1..levels.len() {
            let parent = Namespace::new(levels[..n].to_vec());
            schemas.entry(schema_name(&parent)).or_insert_with(|| {
                Arc::new(IcebergSchemaProvider::new(
                    Arc::clone(&self.catalog),
                    parent,
                    vec![],
                    self.caches.clone(),
                ))
            });
        }
        let schema = schemas.entry(schema_name(namespace)).or_insert_with(|| {
            Arc::new(IcebergSchemaProvider::new(
                Arc::clone(&self.catalog),
                namespace.clone(),
                vec![],
                self.caches.clone(),
            ))
        });
        Ok(Arc::clone(schema))
    }
}

impl CatalogProvider for IcebergCatalogProvider {
    fn schema_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .schemas
            .read()
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default();
        names.extend(
            self.extra
                .read()
                .map(|s| s.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default(),
        );
        names.sort();
        names.dedup();
        names
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        if let Some(s) = self.extra.read().ok().and_then(|s| s.get(name).cloned()) {
            return Some(s);
        }
        if let Some(s) = self.schemas.read().ok().and_then(|s| s.get(name).cloned()) {
            return Some(s as Arc<dyn SchemaProvider>);
        }
        None
    }

    fn register_schema(
        &self,
        name: &str,
        schema: Arc<dyn SchemaProvider>,
    ) -> DFResult<Option<Arc<dyn SchemaProvider>>> {
        let mut extra = self
            .extra
            .write()
            .map_err(|_| DataFusionError::Execution("catalog provider lock poisoned".into()))?;
        Ok(extra.insert(name.to_string(), schema))
    }
}

/// One namespace of a [`Catalog`] as a DataFusion schema.
#[derive(Debug)]
pub struct IcebergSchemaProvider {
    catalog: Arc<dyn Catalog>,
    namespace: Namespace,
    /// The listed tables, sorted.
    table_names: RwLock<Vec<String>>,
    /// Session views registered in the namespace, by name (see the module docs).
    views: RwLock<BTreeMap<String, Arc<dyn TableProvider>>>,
    /// The catalog provider's caches.
    caches: SessionCaches,
}

impl IcebergSchemaProvider {
    fn new(
        catalog: Arc<dyn Catalog>,
        namespace: Namespace,
        mut table_names: Vec<String>,
        caches: SessionCaches,
    ) -> Self {
        table_names.sort();
        Self {
            catalog,
            namespace,
            table_names: RwLock::new(table_names),
            views: RwLock::new(BTreeMap::new()),
            caches,
        }
    }

    /// Replace the listed tables with `names` (as the catalog lists them now).
    fn set_table_names(&self, mut names: Vec<String>) {
        names.sort();
        if let Ok(mut listed) = self.table_names.write() {
            *listed = names;
        }
    }

    /// The session view `name`, if one is registered.
    fn view(&self, name: &str) -> Option<Arc<dyn TableProvider>> {
        self.views.read().ok().and_then(|v| v.get(name).cloned())
    }

    /// Whether a session view `name` is registered in the namespace.
    pub(crate) fn has_view(&self, name: &str) -> bool {
        self.view(name).is_some()
    }

    /// The namespace.
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// List `name` among the tables (after it was created or renamed to).
    pub fn add_table_name(&self, name: &str) {
        if let Ok(mut names) = self.table_names.write() {
            if let Err(i) = names.binary_search_by(|t| t.as_str().cmp(name)) {
                names.insert(i, name.to_string());
            }
        }
    }

    /// Stop listing `name` (after it was dropped or renamed).
    pub fn remove_table_name(&self, name: &str) {
        if let Ok(mut names) = self.table_names.write() {
            names.retain(|t| t != name);
        }
    }

    /// List or unlist table `name` as the catalog has it now: the names were listed
    /// when the session started or at its last `SHOW TABLES`, and another process may
    /// have created or dropped the table since. What DataFusion asks without waiting
    /// (`table_exist`, which `CREATE VIEW` asks) answers from the list, so a statement
    /// creating a name calls this first.
    ///
    /// Errors: the catalog's, asking whether the table exists (the list is unchanged).
    pub async fn recheck_table_name(&self, name: &str) -> Result<()> {
        let ident = TableIdent::new(self.namespace.clone(), name);
        match self.catalog.table_exists(&ident).await? {
            true => self.add_table_name(name),
            false => self.remove_table_name(name),
        }
        Ok(())
    }

    fn is_listed(&self, name: &str) -> bool {
        self.table_names
            .read()
            .is_ok_and(|names| names.iter().any(|t| t == name))
    }

    async fn resolve(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(view) = self.view(name) {
            return Ok(Some(view));
        }
        let parts = TableNameParts::parse(name);
        if parts.is_plain() && !self.is_listed(name) {
            if let Some((base, error)) = super::named_tables::unknown_metadata_table(name) {
                if self.is_listed(TableNameParts::parse(base).base) {
                    return Err(error);
                }
            }
        }
        let (base, version, metadata) = if self.is_listed(name) || parts.is_plain() {
            (name, None, None)
        } else {
            (parts.base, parts.version, parts.metadata)
        };
        let ident = TableIdent::new(self.namespace.clone(), base);
        let table = match self.catalog.load_table(&ident).await {
            Ok(t) => {
                // created since the names were listed (by another process): listed now,
                // so a `CREATE VIEW` of the name is refused as in a new session
                if !self.is_listed(base) {
                    self.add_table_name(base);
                }
                t
            }
            // an unknown table is "not found" for DataFusion, which names it
            Err(e) if e.kind() == ErrorKind::NotFound && !self.is_listed(base) => return Ok(None),
            // listed, but dropped since (by another process) when the catalog no longer
            // has it: "not found", as in a new session, with the namespace's tables
            // listed again (the stale name made every `CREATE` of it fail until `SHOW
            // TABLES` listed the names again, and "not found" named the stale list);
            // listed and still there, the load's own error (e.g. a metadata file missing)
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if self.catalog.table_exists(&ident).await? {
                    return Err(e);
                }
                match self.catalog.list_tables(&self.namespace).await {
                    Ok(tables) => {
                        self.set_table_names(tables.into_iter().map(|t| t.name).collect())
                    }
                    // the namespace dropped too: the name at least
                    Err(_) => self.remove_table_name(base),
                }
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let display = format!("{}.{}", self.catalog.name(), ident);
        let version = match version {
            Some(text) => Some(TableVersion::from_suffix(text, table.metadata(), &display)?),
            None => None,
        };
        if version.is_none() && metadata.is_none() {
            let provider = IcebergTableProvider::try_new(table)?
                .with_caches(self.caches.clone())
                .with_write_target(WriteTarget {
                    catalog: Arc::clone(&self.catalog),
                    ident,
                });
            return Ok(Some(Arc::new(provider)));
        }
        // a branch (`t@dev`) is read at its head and takes `INSERT INTO`
        if let (Some(TableVersion::Ref(name)), None) = (&version, metadata) {
            if table
                .metadata()
                .refs
                .get(name)
                // `main` of a table without snapshots has no ref yet
                .map_or(name == crate::spec::MAIN_BRANCH, |r| r.ref_type == "branch")
            {
                let provider = IcebergTableProvider::try_new(table)?
                    .with_caches(self.caches.clone())
                    .with_ref(name)?
                    .with_write_target(WriteTarget {
                        catalog: Arc::clone(&self.catalog),
                        ident,
                    });
                return Ok(Some(Arc::new(provider)));
            }
        }
        // named as the statements writing to the table name it
        table_provider_for(table, &ident.to_string(), version.as_ref(), metadata)
            .await
            .map(Some)
    }
}

#[async_trait]
impl SchemaProvider for IcebergSchemaProvider {
    fn table_names(&self) -> Vec<String> {
        let mut names = self
            .table_names
            .read()
            .map(|names| names.clone())
            .unwrap_or_default();
        if let Ok(views) = self.views.read() {
            names.extend(views.keys().cloned());
        }
        names
    }

    async fn table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        Ok(self.resolve(name).await?)
    }

    async fn table_type(&self, name: &str) -> DFResult<Option<TableType>> {
        if self.view(name).is_some() {
            return Ok(Some(TableType::View));
        }
        // listed tables are answered without loading them (information_schema asks for each)
        if self.is_listed(name) {
            return Ok(Some(TableType::Base));
        }
        Ok(self.table(name).await?.map(|t| t.table_type()))
    }

    fn table_exist(&self, name: &str) -> bool {
        let parts = TableNameParts::parse(name);
        self.view(name).is_some() || self.is_listed(name) || self.is_listed(parts.base)
    }

    /// Register session view `name` (DataFusion's `CREATE VIEW`, icefloe's views of
    /// Iceberg tables).
    ///
    /// Errors: `table` is not a view (a namespace's tables are the catalog's: `CREATE
    /// TABLE` creates one); a table or view `name` exists.
    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> DFResult<Option<Arc<dyn TableProvider>>> {
        let display = format!("{}.{}", schema_name(&self.namespace), name);
        if table.table_type() != TableType::View {
            return Err(DataFusionError::Plan(format!(
                "cannot register table '{display}': namespace '{}' of Iceberg catalog '{}' \
                 holds the catalog's tables (CREATE TABLE creates one) and session views \
                 (CREATE VIEW); a table registered by name goes in a schema that is not a \
                 namespace, e.g. 'public'",
                self.namespace,
                self.catalog.name()
            )));
        }
        // a table and a view share one set of names (Spark's TABLE_OR_VIEW_ALREADY_EXISTS,
        // Iceberg Java's view catalogs: "Table with same name already exists")
        let taken = if self.view(&name).is_some() {
            Some("a view of this session")
        } else if self.is_listed(&name) {
            Some("a table of the catalog")
        } else if self.table_exist(&name) {
            Some("a name of a table's version or metadata table")
        } else {
            None
        };
        if let Some(kind) = taken {
            return Err(DataFusionError::Plan(format!(
                "cannot create view '{display}': '{display}' already exists as {kind}; a \
                 view cannot take its name"
            )));
        }
        let mut views = self
            .views
            .write()
            .map_err(|_| DataFusionError::Execution("schema provider lock poisoned".into()))?;
        Ok(views.insert(name, table))
    }

    /// Remove session view `name`; `None` when there is none (an Iceberg table is
    /// dropped by `DROP TABLE`, not here).
    fn deregister_table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        let mut views = self
            .views
            .write()
            .map_err(|_| DataFusionError::Execution("schema provider lock poisoned".into()))?;
        Ok(views.remove(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_suffixes() {
        let p = TableNameParts::parse("t@v1-tag$files");
        assert_eq!(
            (p.base, p.version, p.metadata),
            ("t", Some("v1-tag"), Some(MetadataTableKind::Files))
        );
        let p = TableNameParts::parse("t$snapshots");
        assert_eq!(
            (p.base, p.version, p.metadata),
            ("t", None, Some(MetadataTableKind::Snapshots))
        );
        let p = TableNameParts::parse("t@2026-01-01T00:00:00Z");
        assert_eq!(p.version, Some("2026-01-01T00:00:00Z"));
        let p = TableNameParts::parse("price$usd");
        assert!(p.is_plain());
        assert!(TableNameParts::parse("@x").is_plain());
    }

    /// A catalog listing namespaces `a` and `gone`, whose tables are listed as another
    /// process drops `gone` (its `list_tables` finds it missing), or fails otherwise.
    #[derive(Debug)]
    struct DroppedWhileListed {
        other_error: bool,
    }

    #[async_trait]
    impl Catalog for DroppedWhileListed {
        fn name(&self) -> &str {
            "c"
        }
        async fn list_namespaces(&self) -> Result<Vec<Namespace>> {
            Ok(vec![Namespace::parse("a"), Namespace::parse("gone")])
        }
        async fn list_tables(&self, namespace: &Namespace) -> Result<Vec<TableIdent>> {
            match (namespace.to_string().as_str(), self.other_error) {
                ("gone", false) => Err(Error::not_found("namespace 'gone' in catalog 'c'")),
                ("gone", true) => Err(Error::new(ErrorKind::Io, "cannot list 'gone'")),
                _ => Ok(vec![TableIdent::new(namespace.clone(), "t".to_string())]),
            }
        }
        async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
            Err(Error::not_found(format!("table '{ident}'")))
        }
    }

    #[tokio::test]
    async fn a_namespace_dropped_while_listed_is_left_out() {
        let provider =
            IcebergCatalogProvider::try_new(Arc::new(DroppedWhileListed { other_error: false }))
                .await
                .expect("listed");
        assert_eq!(provider.schema_names(), vec!["a".to_string()]);
        // other failures still fail the listing
        let Err(e) =
            IcebergCatalogProvider::try_new(Arc::new(DroppedWhileListed { other_error: true }))
                .await
        else {
            panic!("an I/O error fails the listing");
        };
        assert_eq!(e.kind(), ErrorKind::Io);
    }
}
