//! The static catalog: tables named by hand, each from a metadata file or table
//! directory (Iceberg Java's `StaticTableOperations`, PyIceberg's `StaticTable`).
//!
//! Nothing is looked up: the location given is opened as [`Table::open_with`] opens it
//! (a `….metadata.json` file is read as is; a directory by its version hint or newest
//! metadata file), every time the table is loaded.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::{
    namespace_not_found, read_only, table_not_found, with_parent_namespaces, Catalog, Namespace,
    TableCreation, TableIdent,
};
use crate::error::Result;
use crate::spec::TableCommit;
use crate::table::{OpenOptions, Table};

/// A catalog of fixed tables, each at a metadata file or table directory.
#[derive(Debug, Clone, Default)]
pub struct StaticCatalog {
    name: String,
    tables: BTreeMap<TableIdent, String>,
    options: OpenOptions,
}

impl StaticCatalog {
    /// An empty catalog named `name`.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            ..Default::default()
        }
    }

    /// Add a table at `location` (metadata file or table directory).
    pub fn with_table(mut self, ident: TableIdent, location: &str) -> Self {
        self.add_table(ident, location);
        self
    }

    /// Add (or replace) a table at `location`.
    pub fn add_table(&mut self, ident: TableIdent, location: &str) {
        self.tables.insert(ident, location.to_string());
    }

    /// Use these options (remaps, object store properties) when loading tables.
    pub fn with_open_options(mut self, options: OpenOptions) -> Self {
        self.options = options;
        self
    }

    fn location(&self, ident: &TableIdent) -> Result<&str> {
        match self.tables.get(ident) {
            Some(l) => Ok(l),
            None if !self.tables.keys().any(|t| t.namespace == ident.namespace) => {
                Err(namespace_not_found(&self.name, &ident.namespace))
            }
            None => Err(table_not_found(&self.name, ident)),
        }
    }
}

#[async_trait]
impl Catalog for StaticCatalog {
    fn name(&self) -> &str {
        &self.name
    }

    async fn list_namespaces(&self) -> Result<Vec<Namespace>> {
        let mut out = with_parent_namespaces(self.tables.keys().map(|t| t.namespace.clone()));
        if self.tables.keys().any(|t| t.namespace.is_root()) {
            out.insert(0, Namespace::root());
        }
        Ok(out)
    }

    async fn list_tables(&self, namespace: &Namespace) -> Result<Vec<TableIdent>> {
        if !self.list_namespaces().await?.contains(namespace) {
            return Err(namespace_not_found(&self.name, namespace));
        }
        Ok(self
            .tables
            .keys()
            .filter(|t| &t.namespace == namespace)
            .cloned()
            .collect())
    }

    async fn metadata_location(&self, ident: &TableIdent) -> Result<String> {
        let location = self.location(ident)?;
        if location.ends_with(".json") {
            return Ok(location.to_string());
        }
        Ok(self
            .load_table(ident)
            .await?
            .metadata_location()
            .to_string())
    }

    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        let location = self.location(ident)?;
        Table::open_with(location, self.options.clone())
            .await
            .map_err(|e| e.context(format!("table '{ident}' in catalog '{}'", self.name)))
    }

    async fn commit_table(&self, ident: &TableIdent, _commit: &TableCommit) -> Result<Table> {
        Err(read_only(
            &self.name,
            "static",
            &format!("committing to table '{ident}'"),
        ))
    }

    async fn create_table(&self, ident: &TableIdent, _creation: TableCreation) -> Result<Table> {
        Err(read_only(
            &self.name,
            "static",
            &format!("creating table '{ident}'"),
        ))
    }

    async fn drop_table(&self, ident: &TableIdent, _purge: bool) -> Result<()> {
        Err(read_only(
            &self.name,
            "static",
            &format!("dropping table '{ident}'"),
        ))
    }
}
