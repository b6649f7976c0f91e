//! Catalogs: where tables are found by name.
//!
//! A [`Catalog`] maps a [`TableIdent`] (namespace + table name) to the current metadata
//! file of a table and loads it as a [`Table`]. Three catalogs are provided:
//!
//! - [`SqlCatalog`]: the Iceberg JDBC catalog layout (`iceberg_tables`,
//!   `iceberg_namespace_properties`, V0 and V1 schemas) on SQLite, as Iceberg Java's
//!   `JdbcCatalog` and PyIceberg's `SqlCatalog` write it;
//! - [`FileSystemCatalog`]: Iceberg Java's `HadoopCatalog` layout,
//!   `<warehouse>/<ns…>/<table>/metadata/` with `version-hint.text`;
//! - [`StaticCatalog`]: tables named by hand, each from a metadata file or table directory;
//! - `RestCatalog` (with the `cloud` feature): a client of the Iceberg REST catalog.
//!
//! [`load_catalog`] builds one from a URI or a config file (what the CLI's `--catalog`
//! takes). [`TableVersion`] picks a snapshot for time travel (by id, branch or tag, or
//! timestamp).
//!
//! Errors: an unknown namespace or table is [`ErrorKind::NotFound`](crate::ErrorKind)
//! naming it (with the catalog's name).

mod commit;
mod config;
mod filesystem;
mod java_properties;
mod purge;
#[cfg(feature = "cloud")]
mod rest;
mod sql;
mod static_catalog;
mod version;

use std::collections::HashMap;
use std::fmt;

use async_trait::async_trait;

use crate::error::{Error, Result};
use crate::spec::TableCommit;
use crate::table::Table;

pub(crate) use commit::{
    apply_commit, check_directory_name, default_table_location, metadata_dir,
    next_metadata_location, read_only, write_metadata_file,
};
pub use commit::{TableCreation, METADATA_PATH};
pub(crate) use purge::{delete_dropped_table_files, files_to_purge};

pub use config::{load_catalog, CatalogConfig};
pub(crate) use filesystem::is_commit_staging_name;
pub use filesystem::FileSystemCatalog;
#[cfg(feature = "cloud")]
pub use rest::RestCatalog;
pub use sql::SqlCatalog;
pub use static_catalog::StaticCatalog;
pub(crate) use version::format_ms;
pub use version::{
    ancestors, parse_local_timestamp, parse_timestamp_ms, parse_zoned_timestamp_ms,
    snapshot_id_as_of, TableVersion,
};

/// A namespace: a list of levels, e.g. `["db"]` or `["a", "b"]`; empty for the root
/// namespace (tables directly under a Hadoop warehouse).
///
/// Shown (and stored by the JDBC catalog) with its levels joined by `.`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Namespace(Vec<String>);

impl Namespace {
    /// A namespace from its levels.
    pub fn new(levels: Vec<String>) -> Self {
        Self(levels)
    }

    /// The root (empty) namespace.
    pub fn root() -> Self {
        Self(vec![])
    }

    /// Parse a `.`-joined namespace name (`"a.b"` → `["a", "b"]`; `""` → root).
    pub fn parse(name: &str) -> Self {
        if name.is_empty() {
            Self::root()
        } else {
            Self(name.split('.').map(str::to_string).collect())
        }
    }

    /// The levels.
    pub fn levels(&self) -> &[String] {
        &self.0
    }

    /// Whether this is the root namespace.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// Check that this namespace can be created: not the root (the root namespace
    /// always exists and has no name; REST `createNamespace` takes a non-empty
    /// namespace) and no empty level (`a..b`), which other engines cannot name. Every
    /// catalog's `create_namespace` runs it.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming the namespace.
    pub fn check_creatable(&self) -> Result<()> {
        if self.is_root() {
            return Err(Error::invalid_argument(
                "cannot create the root namespace: a namespace needs a name",
            ));
        }
        if self.0.iter().any(String::is_empty) {
            return Err(Error::invalid_argument(format!(
                "cannot create namespace '{self}': a namespace level cannot be empty (a '.' \
                 in a SQL name, quoted or not, separates levels)"
            )));
        }
        Ok(())
    }
}

impl fmt::Display for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// A table's name in a catalog: its namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableIdent {
    /// The namespace.
    pub namespace: Namespace,
    /// The table name.
    pub name: String,
}

impl TableIdent {
    /// A table identifier.
    pub fn new(namespace: Namespace, name: impl Into<String>) -> Self {
        Self {
            namespace,
            name: name.into(),
        }
    }

    /// Parse `ns.table` / `a.b.table` / `table` (root namespace): the last `.`-separated
    /// part is the table name.
    pub fn parse(text: &str) -> Self {
        match text.rsplit_once('.') {
            Some((ns, name)) => Self::new(Namespace::parse(ns), name),
            None => Self::new(Namespace::root(), text),
        }
    }
}

impl fmt::Display for TableIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_root() {
            f.write_str(&self.name)
        } else {
            write!(f, "{}.{}", self.namespace, self.name)
        }
    }
}

/// A catalog of Iceberg tables: finds them by name and, where the catalog can, creates,
/// commits to and drops them.
///
/// The write methods default to an [`ErrorKind::Unsupported`](crate::ErrorKind) error
/// naming the catalog (static tables are read-only).
#[async_trait]
pub trait Catalog: fmt::Debug + Send + Sync {
    /// The catalog's name (the JDBC `catalog_name`, or what it was configured as).
    fn name(&self) -> &str;

    /// All namespaces, at every level (`a` and `a.b` are both listed when `a.b` exists).
    async fn list_namespaces(&self) -> Result<Vec<Namespace>>;

    /// Whether `namespace` exists.
    async fn namespace_exists(&self, namespace: &Namespace) -> Result<bool> {
        Ok(self.list_namespaces().await?.contains(namespace))
    }

    /// The tables directly in `namespace`, sorted by name.
    ///
    /// Errors: [`ErrorKind::NotFound`](crate::ErrorKind) naming the namespace when it
    /// does not exist.
    async fn list_tables(&self, namespace: &Namespace) -> Result<Vec<TableIdent>>;

    /// The location of the table's current metadata file. Default: the one
    /// [`load_table`](Self::load_table) opens.
    ///
    /// Errors: [`ErrorKind::NotFound`](crate::ErrorKind) naming the table (or its
    /// namespace) when it does not exist.
    async fn metadata_location(&self, ident: &TableIdent) -> Result<String> {
        Ok(self
            .load_table(ident)
            .await?
            .metadata_location()
            .to_string())
    }

    /// Load the table at its current metadata file.
    async fn load_table(&self, ident: &TableIdent) -> Result<Table>;

    /// The files the catalog itself keeps in table storage, as normalised locations
    /// (`file:///abs/path`): never a table's orphans, whatever directory
    /// `remove_orphan_files` lists. Default: none (a REST catalog keeps its state on its
    /// server; a filesystem catalog's `version-hint.text` files belong to their tables).
    /// The SQL catalog: its SQLite database file and the `-wal`, `-shm` and `-journal`
    /// files SQLite keeps beside it.
    fn own_files(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether `ident` names a table here.
    async fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        match self.metadata_location(ident).await {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == crate::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Create a namespace with `properties` (REST `createNamespace`).
    ///
    /// Errors: [`ErrorKind::AlreadyExists`](crate::ErrorKind) when it exists.
    async fn create_namespace(
        &self,
        namespace: &Namespace,
        properties: &HashMap<String, String>,
    ) -> Result<()> {
        let _ = properties;
        Err(Error::unsupported(format!(
            "creating namespace '{namespace}' in catalog '{}'",
            self.name()
        )))
    }

    /// Create a table: write its first metadata file and register it (REST
    /// `createTable`). The namespace must exist.
    ///
    /// Errors: [`ErrorKind::AlreadyExists`](crate::ErrorKind) when the name is taken,
    /// [`ErrorKind::NotFound`](crate::ErrorKind) for a missing namespace.
    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        let _ = creation;
        Err(Error::unsupported(format!(
            "creating table '{ident}' in catalog '{}'",
            self.name()
        )))
    }

    /// Stage a create (Java `Catalog.buildTable(…).createTransaction()`; REST
    /// `createTable` with `stage-create: true`): the new table as
    /// [`create_table`](Self::create_table) would make it — its location (the catalog's
    /// default for the name unless `creation` gives one), schema, spec, sort order,
    /// properties, a fresh `table-uuid`, no snapshot — with nothing written and nothing
    /// registered. Its metadata location is where
    /// [`commit_create`](Self::commit_create) writes the first metadata file. Writers
    /// put data files and manifests under its location; the table appears in the
    /// catalog only at that commit (Spark's CTAS on Iceberg's staging catalog).
    ///
    /// Errors: as `create_table` (name taken, missing namespace, a location the catalog
    /// refuses, the builder's checks); [`ErrorKind::Unsupported`](crate::ErrorKind)
    /// where the catalog cannot stage a create (the default).
    async fn stage_create_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
    ) -> Result<Table> {
        let _ = creation;
        Err(Error::unsupported(format!(
            "staging the create of table '{ident}' in catalog '{}'",
            self.name()
        )))
    }

    /// Commit a staged create (REST `updateTable` with requirement `assert-create`):
    /// apply `commit.updates` to `staged` (from
    /// [`stage_create_table`](Self::stage_create_table)), write the result as the
    /// table's first metadata file and register the name with the catalog's
    /// check-and-put. `commit.requirements` must hold on a missing table (the
    /// transaction sends `assert-create` only).
    ///
    /// Errors: [`ErrorKind::AlreadyExists`](crate::ErrorKind) naming the table when
    /// another writer created it since it was staged (the metadata file written is
    /// removed again); [`ErrorKind::NotFound`](crate::ErrorKind) for a namespace dropped
    /// meanwhile; [`ErrorKind::CommitStateUnknown`](crate::ErrorKind) when the
    /// registration's outcome is unknown; [`ErrorKind::Unsupported`](crate::ErrorKind)
    /// by default.
    async fn commit_create(
        &self,
        ident: &TableIdent,
        staged: &Table,
        commit: &TableCommit,
    ) -> Result<Table> {
        let _ = (staged, commit);
        Err(Error::unsupported(format!(
            "committing a staged create of table '{ident}' in catalog '{}'",
            self.name()
        )))
    }

    /// Register an existing table under `ident` by the location of one of its metadata
    /// files (Java `Catalog.registerTable`, REST `registerTable`): the table's files stay
    /// where they are, and `ident` points at that metadata file.
    ///
    /// Errors: [`ErrorKind::AlreadyExists`](crate::ErrorKind) when the name is taken,
    /// [`ErrorKind::NotFound`](crate::ErrorKind) for a missing namespace or metadata
    /// file, [`ErrorKind::InvalidData`](crate::ErrorKind) naming a file that is not table
    /// metadata; [`ErrorKind::Unsupported`](crate::ErrorKind) where the catalog cannot
    /// register (a file-system catalog, whose tables are their directories).
    async fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        let _ = metadata_location;
        Err(Error::unsupported(format!(
            "registering table '{ident}' in catalog '{}'",
            self.name()
        )))
    }

    /// Commit to a table (REST `updateTable`): check `commit.requirements` against the
    /// current metadata, apply `commit.updates`, write the new metadata file and swap the
    /// catalog's pointer with a check-and-put against the metadata the check saw.
    ///
    /// Errors: [`ErrorKind::CommitConflict`](crate::ErrorKind) when a requirement fails or
    /// the pointer moved before the swap (retry from a refreshed table);
    /// [`ErrorKind::CommitStateUnknown`](crate::ErrorKind) when the swap's outcome is
    /// unknown.
    async fn commit_table(&self, ident: &TableIdent, commit: &TableCommit) -> Result<Table> {
        let _ = commit;
        Err(Error::unsupported(format!(
            "committing to table '{ident}' in catalog '{}'",
            self.name()
        )))
    }

    /// Drop a table from the catalog; with `purge`, also delete every file its metadata
    /// reaches (data, delete, manifest, manifest list and metadata files) — data and
    /// delete files only when the table's `gc.enabled` is not false, as Java's
    /// `CatalogUtil.dropTableData` (a REST catalog's server decides what it deletes).
    /// SQL's `DROP TABLE … PURGE` refuses a table whose `gc.enabled` is false before
    /// calling this, as Spark does.
    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let _ = purge;
        Err(Error::unsupported(format!(
            "dropping table '{ident}' in catalog '{}'",
            self.name()
        )))
    }

    /// After a write to `ident` failed with `error` and removed the files it wrote: when
    /// `error` is [`ErrorKind::NotFound`] (the table was dropped while the write ran),
    /// remove what the write left of the table's storage that makes the catalog show
    /// something. Best effort, never an error. Default: nothing (a SQL or REST catalog
    /// lists no directories); the filesystem catalog removes the empty directories under
    /// the table's directory that the writer made anew, which would list as namespaces.
    async fn clean_up_failed_write(&self, ident: &TableIdent, error: &Error) {
        let _ = (ident, error);
    }

    /// Rename a table (same or another namespace, which must exist).
    async fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        Err(Error::unsupported(format!(
            "renaming table '{from}' to '{to}' in catalog '{}'",
            self.name()
        )))
    }

    /// A namespace's properties as Java's `loadNamespaceMetadata` gives them (REST
    /// `loadNamespaceMetadata`): what it was created or altered with, and where the
    /// catalog keeps no properties, what it knows (a filesystem catalog: `location`).
    /// Default: no properties.
    ///
    /// Errors: [`ErrorKind::NotFound`](crate::ErrorKind) naming the namespace when it
    /// does not exist.
    async fn load_namespace_metadata(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        if namespace.is_root() || !self.namespace_exists(namespace).await? {
            return Err(namespace_not_found(self.name(), namespace));
        }
        Ok(HashMap::new())
    }

    /// The properties a namespace stores, which
    /// [`update_namespace_properties`](Self::update_namespace_properties) can remove:
    /// without those [`load_namespace_metadata`](Self::load_namespace_metadata) derives
    /// (a SQL catalog's default `location`), with the catalog's own markers (a SQL
    /// catalog's `exists`, which it refuses to remove). SQL's `UNSET DBPROPERTIES` checks
    /// its keys against these. Default: `load_namespace_metadata`'s.
    ///
    /// Errors: [`ErrorKind::NotFound`](crate::ErrorKind) naming the namespace when it
    /// does not exist.
    async fn stored_namespace_properties(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        self.load_namespace_metadata(namespace).await
    }

    /// Set `updates` and remove `removals` of a namespace's properties in one change
    /// (REST `updateProperties`; Java's `setProperties` and `removeProperties`). Returns
    /// the keys of `removals` that were not set (removing them changes nothing).
    ///
    /// Errors: [`ErrorKind::NotFound`](crate::ErrorKind) naming the namespace;
    /// [`ErrorKind::InvalidArgument`](crate::ErrorKind) for a key both set and removed,
    /// or one the catalog reserves; [`ErrorKind::Unsupported`](crate::ErrorKind) where
    /// the catalog keeps no properties (the default; a filesystem catalog).
    async fn update_namespace_properties(
        &self,
        namespace: &Namespace,
        updates: &HashMap<String, String>,
        removals: &[String],
    ) -> Result<Vec<String>> {
        let _ = (updates, removals);
        Err(Error::unsupported(format!(
            "changing the properties of namespace '{namespace}' in catalog '{}' (it keeps no \
             namespace properties)",
            self.name()
        )))
    }

    /// Drop an empty namespace (REST `dropNamespace`; Java's `dropNamespace`).
    ///
    /// Errors: [`ErrorKind::NotFound`](crate::ErrorKind) naming it when it does not
    /// exist; [`ErrorKind::InvalidArgument`](crate::ErrorKind) when it holds tables or
    /// namespaces (Java's `NamespaceNotEmptyException`), naming some of them.
    async fn drop_namespace(&self, namespace: &Namespace) -> Result<()> {
        Err(Error::unsupported(format!(
            "dropping namespace '{namespace}' in catalog '{}'",
            self.name()
        )))
    }
}

/// Check that `namespace` of `catalog` exists and is empty before dropping it: no table
/// (`tables`: its tables, and views where the catalog keeps them), no namespace under it.
pub(crate) async fn check_droppable(
    catalog: &dyn Catalog,
    namespace: &Namespace,
    tables: &[String],
) -> Result<()> {
    let children: Vec<String> = catalog
        .list_namespaces()
        .await?
        .into_iter()
        .filter(|n| n != namespace && n.levels().starts_with(namespace.levels()))
        .map(|n| n.to_string())
        .collect();
    let held = |what: &str, names: &[String]| {
        let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
        let more = names.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        Error::invalid_argument(format!(
            "namespace '{namespace}' in catalog '{}' is not empty: it holds {what} {}{more}",
            catalog.name(),
            shown.join(", ")
        ))
    };
    if !tables.is_empty() {
        return Err(held("tables", tables));
    }
    if !children.is_empty() {
        return Err(held("namespaces", &children));
    }
    Ok(())
}

/// The error for a namespace a catalog does not have.
pub(crate) fn namespace_not_found(catalog: &str, namespace: &Namespace) -> Error {
    Error::not_found(format!("namespace '{namespace}' in catalog '{catalog}'"))
}

/// The error for a table a catalog does not have.
pub(crate) fn table_not_found(catalog: &str, ident: &TableIdent) -> Error {
    Error::not_found(format!("table '{ident}' in catalog '{catalog}'"))
}

/// Every prefix of each namespace (`a.b` → `a`, `a.b`), sorted and deduplicated.
pub(crate) fn with_parent_namespaces(
    namespaces: impl IntoIterator<Item = Namespace>,
) -> Vec<Namespace> {
    let mut out: Vec<Namespace> = namespaces
        .into_iter()
        .flat_map(|ns| {
            (1..=ns.0.len())
                .map(|n| Namespace(ns.0[..n].to_vec()))
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names() {
        assert_eq!(Namespace::parse("a.b").levels(), ["a", "b"]);
        assert!(Namespace::parse("").is_root());
        let t = TableIdent::parse("a.b.t");
        assert_eq!(t.namespace.to_string(), "a.b");
        assert_eq!(t.name, "t");
        assert_eq!(TableIdent::parse("t").to_string(), "t");
        let all = with_parent_namespaces([Namespace::parse("a.b"), Namespace::parse("c")]);
        let names: Vec<String> = all.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["a", "a.b", "c"]);
    }
}
