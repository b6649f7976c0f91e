//! How the filesystem catalog reads its warehouse's directories: listings, what a
//! directory is (a table, a namespace, a killed create's directory, a table's data left
//! without its metadata), the namespaces below a directory, and where a new table may lie
//! (module docs of the parent: Iceberg Java's `HadoopCatalog` layout).

use std::path::Path;

use futures::future::BoxFuture;
use futures::FutureExt;
use object_store::path::Path as ObjectPath;

use super::FileSystemCatalog;
use crate::catalog::{Namespace, TableIdent};
use crate::error::{Error, ErrorKind, Result};

/// How deep namespaces are searched below the warehouse.
pub(super) const MAX_NAMESPACE_DEPTH: usize = 8;

impl FileSystemCatalog {
    pub(super) fn location_of(&self, levels: &[String]) -> String {
        let mut loc = self.warehouse.clone();
        for l in levels {
            loc.push('/');
            loc.push_str(l);
        }
        loc
    }

    /// (subdirectory names, file names) directly under `location`; a missing directory
    /// lists as empty.
    pub(super) async fn list(&self, location: &str) -> Result<(Vec<String>, Vec<String>)> {
        let resolved = self.io.resolve(location)?;
        let store = self.io.store(&resolved.store_url)?;
        let prefix: Option<&ObjectPath> = Some(&resolved.path).filter(|p| !p.as_ref().is_empty());
        match store.list_with_delimiter(prefix).await {
            Ok(listing) => Ok((
                listing
                    .common_prefixes
                    .iter()
                    .filter_map(|p| p.filename().map(str::to_string))
                    .filter(|n| !n.starts_with('.'))
                    .collect(),
                listing
                    .objects
                    .iter()
                    .filter_map(|o| o.location.filename().map(str::to_string))
                    .collect(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok((vec![], vec![])),
            Err(e) => {
                Err(Error::new(ErrorKind::Io, format!("cannot list '{location}'")).with_source(e))
            }
        }
    }

    /// Whether the directory at `location` is a table.
    pub(super) async fn is_table_dir(&self, location: &str) -> Result<bool> {
        Ok(self.dir_kind(location).await? == DirKind::Table)
    }

    /// What the directory at `location` is: a table when its `metadata/` holds
    /// `version-hint.text` or a `*.metadata.json` file; else a killed create's leftover
    /// when `metadata/` holds a staged, uncommitted first version
    /// ([`super::leftovers::staged_first_version`](super::leftovers::staged_first_version)); else a table's data left without its
    /// metadata ([`super::leftovers::is_data_leftover`]); else a namespace.
    pub(super) async fn dir_kind(&self, location: &str) -> Result<DirKind> {
        let (_, files) = self.list(&format!("{location}/metadata")).await?;
        if files
            .iter()
            .any(|f| f == "version-hint.text" || f.ends_with(".metadata.json"))
        {
            return Ok(DirKind::Table);
        }
        // object_store's local listing skips its own staging files (`…#<n>`): read the
        // directory itself (only a local warehouse is written to)
        let local = location.strip_prefix("file://");
        let staged = local.is_some_and(|path| {
            let names: Vec<String> = std::fs::read_dir(format!("{path}/metadata"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect();
            super::leftovers::staged_first_version(&names).is_some()
        });
        Ok(if staged {
            DirKind::CreateLeftover
        } else if local.is_some_and(|path| super::leftovers::is_data_leftover(Path::new(path))) {
            DirKind::DataLeftover
        } else {
            DirKind::Namespace
        })
    }

    /// The leftover directory (a killed create's, [`DirKind::CreateLeftover`], or a
    /// table's data without metadata, [`DirKind::DataLeftover`]) that the directory
    /// `levels` names is or lies in, as levels, with its kind: neither it nor anything
    /// in it is a namespace.
    pub(super) async fn leftover_at(
        &self,
        levels: &[String],
    ) -> Result<Option<(Vec<String>, DirKind)>> {
        for k in 1..=levels.len() {
            let kind = self.dir_kind(&self.location_of(&levels[..k])).await?;
            if matches!(kind, DirKind::CreateLeftover | DirKind::DataLeftover) {
                return Ok(Some((levels[..k].to_vec(), kind)));
            }
        }
        Ok(None)
    }

    /// (namespace subdirectories, table subdirectories) of a namespace directory; a
    /// killed create's directory is neither.
    pub(super) async fn classify(&self, levels: &[String]) -> Result<(Vec<String>, Vec<String>)> {
        let (dirs, _) = self.list(&self.location_of(levels)).await?;
        let (mut namespaces, mut tables) = (vec![], vec![]);
        for d in dirs {
            let mut child = levels.to_vec();
            child.push(d.clone());
            match self.dir_kind(&self.location_of(&child)).await? {
                DirKind::Table => tables.push(d),
                DirKind::Namespace => namespaces.push(d),
                DirKind::CreateLeftover | DirKind::DataLeftover => {}
            }
        }
        namespaces.sort();
        tables.sort();
        Ok((namespaces, tables))
    }

    /// The table whose directory holds the directory `levels` names (an ancestor of it,
    /// not the directory itself): what lies there is that table's (`data/`, `metadata/`),
    /// not a namespace, and `DROP TABLE` of it would delete anything put there.
    pub(super) async fn enclosing_table(&self, levels: &[String]) -> Result<Option<TableIdent>> {
        for k in 1..levels.len() {
            if self.is_table_dir(&self.location_of(&levels[..k])).await? {
                let namespace = Namespace::new(levels[..k - 1].to_vec());
                return Ok(Some(TableIdent::new(namespace, &levels[k - 1])));
            }
        }
        Ok(None)
    }

    /// A table in the namespace directory `levels` or in a namespace below it (searched
    /// [`MAX_NAMESPACE_DEPTH`] deep, as listings are): a table made at that directory
    /// would hide them (a namespace's directory that is a table is no namespace) and its
    /// `DROP TABLE` would delete them.
    pub(super) fn table_below<'a>(
        &'a self,
        levels: Vec<String>,
    ) -> BoxFuture<'a, Result<Option<TableIdent>>> {
        async move {
            if levels.len() > MAX_NAMESPACE_DEPTH {
                return Ok(None);
            }
            let (namespaces, tables) = self.classify(&levels).await?;
            if let Some(t) = tables.first() {
                return Ok(Some(TableIdent::new(Namespace::new(levels.clone()), t)));
            }
            for ns in namespaces {
                let mut child = levels.clone();
                child.push(ns);
                if let Some(t) = self.table_below(child).await? {
                    return Ok(Some(t));
                }
            }
            Ok(None)
        }
        .boxed()
    }

    /// The rule of the README's "Writing tables" (the SQL catalog's for default
    /// locations): table `ident`'s directory may not lie inside another table's
    /// directory (table `ns.t.u` in table `ns.t`'s `data/`), nor be a namespace's
    /// directory holding tables (table `ns.t` over namespace `ns.t` and its tables).
    /// Either way the tables' files would mix, one would hide the other from listings,
    /// and `DROP TABLE` of the outer one (which removes its whole directory, as Java's
    /// `HadoopCatalog`) would delete the inner one.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] naming both tables and the location.
    pub(super) async fn check_location_apart(&self, ident: &TableIdent) -> Result<()> {
        let mut levels = ident.namespace.levels().to_vec();
        levels.push(ident.name.clone());
        let location = self.location_of(&levels);
        if let Some(outer) = self.enclosing_table(&levels).await? {
            return Err(Error::invalid_argument(format!(
                "table '{ident}' of filesystem catalog '{}' would lie at '{location}', inside \
                 the directory of table '{outer}', whose DROP TABLE would delete it",
                self.name
            )));
        }
        if self.is_table_dir(&location).await? {
            return Ok(());
        }
        if let Some(inner) = self.table_below(levels).await? {
            return Err(Error::invalid_argument(format!(
                "table '{ident}' of filesystem catalog '{}' would lie at '{location}', the \
                 directory of namespace '{}', which holds table '{inner}': the table would \
                 hide it and its DROP TABLE would delete it",
                self.name,
                Namespace::new(
                    ident
                        .namespace
                        .levels()
                        .iter()
                        .chain(std::iter::once(&ident.name))
                        .cloned()
                        .collect()
                ),
            )));
        }
        Ok(())
    }

    pub(super) fn collect_namespaces<'a>(
        &'a self,
        levels: Vec<String>,
        out: &'a mut Vec<Namespace>,
    ) -> BoxFuture<'a, Result<()>> {
        async move {
            if levels.len() >= MAX_NAMESPACE_DEPTH {
                return Ok(());
            }
            let (namespaces, _) = self.classify(&levels).await?;
            for ns in namespaces {
                let mut child = levels.clone();
                child.push(ns);
                out.push(Namespace::new(child.clone()));
                self.collect_namespaces(child, out).await?;
            }
            Ok(())
        }
        .boxed()
    }
}

/// What a directory of the warehouse is ([`FileSystemCatalog::dir_kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DirKind {
    Table,
    /// a `CREATE TABLE` or CTAS killed before it committed (or still running)
    CreateLeftover,
    /// a table's data files without its metadata (`leftovers::is_data_leftover`)
    DataLeftover,
    Namespace,
}
