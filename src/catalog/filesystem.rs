//! The filesystem catalog: Iceberg Java's `HadoopCatalog` directory layout.
//!
//! ```text
//! <warehouse>/<ns level 1>/…/<table>/metadata/version-hint.text
//!                                   /metadata/v<N>.metadata.json
//! ```
//!
//! A directory is a table when its `metadata/` directory holds `version-hint.text` or a
//! `*.metadata.json` file; any other directory is a namespace, but for those inside a
//! table's directory (its `data/` and `metadata/`). A table is not created inside another
//! table's directory nor over a namespace holding tables, and a namespace not over or
//! inside a table (`DROP TABLE` removes the whole directory). Tables directly under the
//! warehouse belong to the root (empty) namespace, which is listed when it has tables
//! (Spark writes `HadoopCatalog` tables there when no namespace is given). The current
//! metadata file is found as [`Table::open`] finds it (version hint, else the highest
//! version). Directories whose names start with `.` are ignored, and so is a directory
//! a killed create left (module `leftovers`).
//!
//! **Commits** (as `HadoopTableOperations`): the next `v<N+1>.metadata.json` is created
//! with an atomic create-if-absent, and only then is `version-hint.text` rewritten (best
//! effort: the version file is the commit, so a hint that cannot be written fails
//! nothing); a writer that finds the file already there lost the race
//! ([`ErrorKind::CommitConflict`]). Only local warehouses are committed to: object
//! stores are refused, since the spec calls this scheme unsafe there — use the SQL (or a
//! REST) catalog. Namespaces are directories.

mod layout;
mod leftovers;
mod version_file;

use layout::DirKind;
pub(crate) use leftovers::is_commit_staging_name;
use version_file::{create_version_file, remove_empty_dirs, FileIdentity};

use async_trait::async_trait;

use std::collections::HashMap;

use bytes::Bytes;

use super::{
    apply_commit, check_directory_name, delete_dropped_table_files, files_to_purge,
    namespace_not_found, table_not_found, write_metadata_file, Catalog, Namespace, TableCreation,
    TableIdent,
};
use crate::error::{Error, ErrorKind, Result};
use crate::io::{normalize_location, FileIO};
use crate::spec::TableCommit;
use crate::table::{OpenOptions, Table};
use crate::write::table_metadata_to_json;

/// A catalog over a warehouse directory in the `HadoopCatalog` layout.
#[derive(Debug, Clone)]
pub struct FileSystemCatalog {
    name: String,
    warehouse: String,
    io: FileIO,
    options: OpenOptions,
}

impl FileSystemCatalog {
    /// A catalog named `name` over the warehouse at `warehouse` (a local path or URL).
    pub fn new(name: &str, warehouse: &str) -> Result<Self> {
        Self::with_options(name, warehouse, OpenOptions::default())
    }

    /// As [`new`](Self::new), loading tables with `options` (object store properties are
    /// also used to list the warehouse).
    pub fn with_options(name: &str, warehouse: &str, options: OpenOptions) -> Result<Self> {
        Ok(Self {
            name: name.to_string(),
            warehouse: normalize_location(warehouse)?,
            io: FileIO::new(options.storage_properties.clone()),
            options,
        })
    }

    /// The warehouse location (normalised).
    pub fn warehouse(&self) -> &str {
        &self.warehouse
    }

    fn table_location(&self, ident: &TableIdent) -> String {
        let mut levels = ident.namespace.levels().to_vec();
        levels.push(ident.name.clone());
        self.location_of(&levels)
    }

    /// Each namespace level (and the table name) is one directory of the warehouse
    /// ([`check_directory_name`]) that this catalog lists: not beginning with `.`.
    fn check_directories(namespace: &Namespace, table: Option<&str>) -> Result<()> {
        let levels = namespace.levels().iter().map(|l| ("namespace", l.as_str()));
        for (what, name) in levels.chain(table.map(|t| ("table", t))) {
            check_directory_name(what, name)?;
            if name.starts_with('.') {
                return Err(Error::invalid_argument(format!(
                    "{what} name '{name}' begins with '.': a filesystem catalog ignores \
                     such directories, so it would not list it"
                )));
            }
        }
        Ok(())
    }

    /// The local directory of a `file://` location; writes elsewhere are refused.
    fn local_dir(&self, location: &str, what: &str) -> Result<std::path::PathBuf> {
        match location.strip_prefix("file://") {
            Some(path) => Ok(std::path::PathBuf::from(path)),
            None => Err(Error::unsupported(format!(
                "{what} in filesystem catalog '{}': commits need an atomic create-if-absent, \
                 which only local disk gives this catalog ('{location}'); use a SQL or REST \
                 catalog on object stores",
                self.name
            ))),
        }
    }

    /// [`ErrorKind::AlreadyExists`] naming table `ident`.
    fn exists_error(&self, ident: &TableIdent) -> Error {
        Error::new(
            ErrorKind::AlreadyExists,
            format!("table '{ident}' already exists in catalog '{}'", self.name),
        )
    }

    /// Create `table`'s first version file (`v1.metadata.json`, create-if-absent: a
    /// file already there is [`ErrorKind::AlreadyExists`], another writer created the
    /// table), then its version hint (best effort: the version file is the table).
    async fn write_first_version(&self, ident: &TableIdent, table: &Table) -> Result<()> {
        let metadata_location = table.metadata_location();
        write_metadata_file(table.file_io(), table.metadata(), metadata_location)
            .await
            .map_err(|e| match e.kind() {
                ErrorKind::CommitConflict => self.exists_error(ident),
                _ => e,
            })?;
        let _ = self
            .io
            .write(
                &format!("{}/metadata/version-hint.text", table.metadata().location),
                Bytes::from_static(b"1"),
            )
            .await;
        Ok(())
    }
}

#[async_trait]
impl Catalog for FileSystemCatalog {
    fn name(&self) -> &str {
        &self.name
    }

    async fn list_namespaces(&self) -> Result<Vec<Namespace>> {
        let (_, files) = self.list(&self.warehouse).await?;
        let (root_namespaces, root_tables) = self.classify(&[]).await?;
        if root_namespaces.is_empty() && root_tables.is_empty() && files.is_empty() {
            let exists = match self.io.resolve(&self.warehouse) {
                Ok(r) if r.store_url == "file://" => {
                    std::path::Path::new(&format!("/{}", r.path)).is_dir()
                }
                _ => true,
            };
            if !exists {
                return Err(Error::not_found(format!(
                    "warehouse '{}' of catalog '{}'",
                    self.warehouse, self.name
                )));
            }
        }
        let mut out = vec![];
        if !root_tables.is_empty() {
            out.push(Namespace::root());
        }
        self.collect_namespaces(vec![], &mut out).await?;
        out.sort();
        Ok(out)
    }

    async fn namespace_exists(&self, namespace: &Namespace) -> Result<bool> {
        if namespace.is_root() {
            return Ok(!self.classify(&[]).await?.1.is_empty());
        }
        // the `data/` and `metadata/` directories of a table are not namespaces
        if self.enclosing_table(namespace.levels()).await?.is_some()
            || self.leftover_at(namespace.levels()).await?.is_some()
        {
            return Ok(false);
        }
        let (parent, last) = namespace.levels().split_at(namespace.levels().len() - 1);
        Ok(self.classify(parent).await?.0.iter().any(|n| n == &last[0]))
    }

    /// `location`, the namespace's directory: the only property a filesystem catalog
    /// knows (Java's `HadoopCatalog.loadNamespaceMetadata`).
    async fn load_namespace_metadata(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        if namespace.is_root() || !self.namespace_exists(namespace).await? {
            return Err(namespace_not_found(&self.name, namespace));
        }
        Ok(HashMap::from([(
            "location".to_string(),
            self.location_of(namespace.levels()),
        )]))
    }

    async fn list_tables(&self, namespace: &Namespace) -> Result<Vec<TableIdent>> {
        if !namespace.is_root() && !self.namespace_exists(namespace).await? {
            return Err(namespace_not_found(&self.name, namespace));
        }
        let (_, tables) = self.classify(namespace.levels()).await?;
        Ok(tables
            .into_iter()
            .map(|t| TableIdent::new(namespace.clone(), t))
            .collect())
    }

    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        let mut levels = ident.namespace.levels().to_vec();
        levels.push(ident.name.clone());
        let location = self.location_of(&levels);
        if !self.is_table_dir(&location).await? {
            if !ident.namespace.is_root() && !self.namespace_exists(&ident.namespace).await? {
                return Err(namespace_not_found(&self.name, &ident.namespace));
            }
            return Err(table_not_found(&self.name, ident));
        }
        Table::open_with(&location, self.options.clone())
            .await
            .map_err(|e| e.context(format!("table '{ident}' in catalog '{}'", self.name)))
    }

    async fn create_namespace(
        &self,
        namespace: &Namespace,
        properties: &HashMap<String, String>,
    ) -> Result<()> {
        if !properties.is_empty() {
            return Err(Error::unsupported(format!(
                "namespace properties in filesystem catalog '{}'",
                self.name
            )));
        }
        namespace.check_creatable()?;
        Self::check_directories(namespace, None)?;
        if let Some(table) = self.enclosing_table(namespace.levels()).await? {
            return Err(Error::invalid_argument(format!(
                "namespace '{namespace}' of filesystem catalog '{}' would lie inside the \
                 directory of table '{table}', whose DROP TABLE would delete it",
                self.name
            )));
        }
        if let Some((levels, kind)) = self.leftover_at(namespace.levels()).await? {
            let left_by = match kind {
                DirKind::DataLeftover => {
                    "holding the data files of a table dropped with \
                     gc.enabled false (which keeps them), or of a CTAS killed before it \
                     committed"
                }
                _ => "left by a CREATE TABLE or CTAS that was killed before it committed",
            };
            return Err(Error::invalid_argument(format!(
                "namespace '{namespace}' of filesystem catalog '{}' would lie in '{}', the \
                 directory of table '{}' {left_by}: create that table again, or move or \
                 remove the directory unless that statement is still running",
                self.name,
                self.location_of(&levels),
                levels.join(".")
            )));
        }
        if self
            .is_table_dir(&self.location_of(namespace.levels()))
            .await?
        {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "namespace '{namespace}' cannot be created in filesystem catalog '{}': \
                     a table exists there (its directory is table '{namespace}')",
                    self.name
                ),
            ));
        }
        if self.namespace_exists(namespace).await? {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "namespace '{namespace}' already exists in catalog '{}'",
                    self.name
                ),
            ));
        }
        let dir = self.local_dir(
            &self.location_of(namespace.levels()),
            "creating a namespace",
        )?;
        std::fs::create_dir_all(&dir).map_err(|e| {
            Error::new(ErrorKind::Io, format!("cannot create '{}'", dir.display())).with_source(e)
        })
    }

    /// Removes the namespace's directory, which must be empty of tables, namespaces and
    /// other files. The hidden directories of drops killed before they removed them
    /// (`.<name>.dropped-<uuid>`: those drops committed) are removed first; anything
    /// else left (a killed create's directory, a stray file) is named in the error.
    ///
    /// Errors: [`ErrorKind::NotFound`] for an unknown namespace;
    /// [`ErrorKind::InvalidArgument`] naming its tables, namespaces or up to five other
    /// entries of its directory; [`ErrorKind::Io`] when the empty directory cannot be
    /// removed.
    async fn drop_namespace(&self, namespace: &Namespace) -> Result<()> {
        if namespace.is_root() || !self.namespace_exists(namespace).await? {
            return Err(namespace_not_found(&self.name, namespace));
        }
        let (_, tables) = self.classify(namespace.levels()).await?;
        super::check_droppable(self, namespace, &tables).await?;
        let dir = self.local_dir(
            &self.location_of(namespace.levels()),
            "dropping a namespace",
        )?;
        leftovers::remove_drop_leftovers(&dir);
        let not_empty = || {
            let held = leftovers::blocking_entries(&dir, namespace.levels());
            (!held.is_empty()).then(|| {
                Error::invalid_argument(format!(
                    "namespace '{namespace}' in catalog '{}' is not empty: its directory \
                     holds {}",
                    self.name,
                    held.join("; ")
                ))
            })
        };
        if let Some(e) = not_empty() {
            return Err(e);
        }
        std::fs::remove_dir(&dir).map_err(|e| {
            not_empty().unwrap_or_else(|| {
                Error::new(
                    ErrorKind::Io,
                    format!(
                        "cannot remove the directory of namespace '{namespace}', '{}'",
                        dir.display()
                    ),
                )
                .with_source(e)
            })
        })
    }

    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        let table = self.stage_create_table(ident, creation).await?;
        self.write_first_version(ident, &table).await?;
        Ok(table)
    }

    /// The table at `<warehouse>/<ns…>/<name>` (no other location), to be written at
    /// `metadata/v1.metadata.json` there.
    async fn stage_create_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
    ) -> Result<Table> {
        Self::check_directories(&ident.namespace, Some(&ident.name))?;
        let location = self.table_location(ident);
        let dir = self.local_dir(&location, "creating a table")?;
        // before the namespace: inside a table's directory is no namespace
        self.check_location_apart(ident).await?;
        if !ident.namespace.is_root() && !self.namespace_exists(&ident.namespace).await? {
            return Err(namespace_not_found(&self.name, &ident.namespace));
        }
        if self.is_table_dir(&location).await? {
            return Err(self.exists_error(ident));
        }
        // the hidden directories of drops killed before they removed them (those drops
        // committed), beside the new table's directory and in it (`gc.enabled` false)
        leftovers::remove_drop_leftovers(&dir);
        if let Some(namespace_dir) = dir.parent() {
            leftovers::remove_drop_leftovers(namespace_dir);
        }
        if creation
            .location
            .as_deref()
            .is_some_and(|l| normalize_location(l).map_or(true, |l| l != location))
        {
            return Err(Error::invalid_argument(format!(
                "filesystem catalog '{}' keeps table '{ident}' at '{location}'; another \
                 location cannot be given",
                self.name
            )));
        }
        let metadata = creation.to_metadata(&location)?;
        let metadata_location = format!("{location}/metadata/v1.metadata.json");
        Table::from_written(metadata, &metadata_location, &self.options)
    }

    /// Writes the staged table's `v1.metadata.json`, with the updates applied, only if
    /// absent (as `create_table`): a table created under the name meanwhile holds it.
    async fn commit_create(
        &self,
        ident: &TableIdent,
        staged: &Table,
        commit: &TableCommit,
    ) -> Result<Table> {
        let table = super::commit::apply_create(staged, commit)?;
        crate::failpoint::pause("commit-loaded");
        if !ident.namespace.is_root() && !self.namespace_exists(&ident.namespace).await? {
            return Err(namespace_not_found(&self.name, &ident.namespace));
        }
        // another table there may have removed its v1 (`write.metadata.delete-after-commit`)
        if self.is_table_dir(&table.metadata().location).await? {
            return Err(self.exists_error(ident));
        }
        self.check_location_apart(ident).await?;
        self.write_first_version(ident, &table).await?;
        Ok(table)
    }

    async fn commit_table(&self, ident: &TableIdent, commit: &TableCommit) -> Result<Table> {
        let base = self.load_table(ident).await?;
        let location = self.table_location(ident);
        self.local_dir(&location, &format!("committing to table '{ident}'"))?;
        // the base's version file, as it is now: the commit lands only while it is still
        // there (not dropped, nor dropped and created again under the name)
        let base_file = self.local_dir(base.metadata_location(), "committing")?;
        let held = FileIdentity::of(&base_file);
        crate::failpoint::pause("commit-loaded");
        let version =
            crate::table::metadata_file_version(base.metadata_location()).ok_or_else(|| {
                Error::unsupported(format!(
                    "committing to '{}': not a v<N>.metadata.json file",
                    base.metadata_location()
                ))
            })?;
        let metadata = apply_commit(&base, commit)?;
        if metadata.location != base.metadata().location {
            return Err(Error::unsupported(format!(
                "filesystem catalog '{}' keeps table '{ident}' at '{location}': its \
                 location cannot be changed (use a SQL or REST catalog)",
                self.name
            )));
        }
        let next = version + 1;
        let new_location = format!("{location}/metadata/v{next}.metadata.json");
        let table = base.with_metadata(metadata, &new_location);
        let dir = self.local_dir(&location, &format!("committing to table '{ident}'"))?;
        create_version_file(
            &dir.join("metadata"),
            &format!("v{next}.metadata.json"),
            table_metadata_to_json(table.metadata())?.as_bytes(),
            || held.is_some() && FileIdentity::of(&base_file) == held,
        )
        .map_err(|e| {
            match e.kind() {
                std::io::ErrorKind::AlreadyExists => Error::new(
                    ErrorKind::CommitConflict,
                    format!("metadata file '{new_location}' was written by another commit first"),
                ),
                std::io::ErrorKind::NotFound => Error::not_found(format!(
                    "table '{ident}' in catalog '{}': dropped while the commit ran (its \
                     metadata file '{}' is gone, or another table holds the name now)",
                    self.name,
                    base.metadata_location()
                )),
                _ => Error::new(
                    ErrorKind::Io,
                    format!("cannot write metadata file '{new_location}'"),
                ),
            }
            .with_source(e)
        })?;
        crate::failpoint::hit("after-metadata-file");
        // The new version is committed: from here on nothing may fail the commit, or the
        // writer would remove files the table now references. The hint only speeds up
        // finding the version (readers probe past a stale one and list `metadata/` when
        // it is unreadable), so failing to write it is ignored, as Java's
        // `HadoopTableOperations.writeVersionHint` only logs it.
        let _ = self
            .io
            .write(
                &format!("{location}/metadata/version-hint.text"),
                Bytes::from(next.to_string()),
            )
            .await;
        crate::failpoint::hit("after-swap");
        super::commit::delete_dropped_metadata(base.metadata(), table.metadata(), &self.io).await;
        Ok(table)
    }

    /// A writer that ran while the table was dropped made `data/` and `metadata/` under
    /// the table's directory again (object stores create parent directories); its files
    /// are removed, and so are now the empty directories it left, bottom-up, the table's
    /// directory last — only while no table is there (a table created under the name
    /// meanwhile has its metadata file in it, and a directory that is not empty stays).
    async fn clean_up_failed_write(&self, ident: &TableIdent, error: &Error) {
        if error.kind() != ErrorKind::NotFound {
            return;
        }
        let location = self.table_location(ident);
        if !matches!(self.is_table_dir(&location).await, Ok(false)) {
            return;
        }
        if let Ok(dir) = self.local_dir(&location, "cleaning up") {
            remove_empty_dirs(&dir);
        }
    }

    /// Refused: a table's directory is its name, so a rename would move every file the
    /// metadata references by location (Java's `HadoopCatalog.renameTable` refuses too).
    async fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        Err(Error::unsupported(format!(
            "renaming table '{from}' to '{to}' in filesystem catalog '{}': a filesystem \
             (Hadoop) catalog cannot rename tables, since a table's directory is its name \
             and its metadata names files by location; use a SQL or REST catalog",
            self.name
        )))
    }

    /// Drop `ident`: its metadata directory, and (as Java's `HadoopCatalog.dropTable`,
    /// where the directory is the table) the whole table directory, unless its
    /// `gc.enabled` is false (then its data and delete files may be other tables' and
    /// stay). `purge` also deletes the files the metadata references outside the table
    /// directory ([`super::purge`]). A data directory left behind would list as
    /// namespaces of this catalog.
    ///
    /// The drop itself is one atomic rename, done before any file is deleted: the table
    /// directory (the metadata directory when `gc.enabled` is false) becomes a hidden
    /// `.<name>.dropped-<uuid>` (`.metadata.dropped-<uuid>`) beside it, which no listing
    /// shows, and is then removed. So a drop killed at any moment leaves the table whole
    /// at its last commit or gone, never an older version (deleting `metadata/` file by
    /// file would make a lower `v<N>.metadata.json` current) nor a table whose files are
    /// half deleted; what it leaves is hidden debris, which the next `DROP TABLE` in the
    /// namespace (or of a table kept at that directory) or `DROP NAMESPACE` removes. Files
    /// a purge deletes outside the moved directory are listed from the metadata before the
    /// rename (a killed purge leaves those, as Java's does).
    ///
    /// Errors: [`ErrorKind::NotFound`] for an unknown table; [`ErrorKind::Io`] naming the
    /// directory when it cannot be renamed (nothing is dropped then); a purge's errors
    /// (see [`files_to_purge`]: before the rename, nothing dropped). A file that cannot be
    /// deleted after the rename is a warning on stderr naming it and the table location:
    /// the drop stands ([`delete_dropped_table_files`]).
    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let table = self.load_table(ident).await?;
        let location = self.table_location(ident);
        let dir = self.local_dir(&location, &format!("dropping '{ident}'"))?;
        let files = match purge {
            true => files_to_purge(&table).await?,
            false => vec![],
        };
        // the data directory holds data files that are kept without gc.enabled
        let whole = crate::table_properties::gc_enabled(&table.metadata().properties);
        let (moved, hidden, moved_location) = match whole {
            true => (
                dir.clone(),
                dir.with_file_name(leftovers::dropped_name(&ident.name)),
                location.clone(),
            ),
            false => (
                dir.join("metadata"),
                dir.join(leftovers::dropped_name("metadata")),
                format!("{location}/metadata"),
            ),
        };
        std::fs::rename(&moved, &hidden).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!(
                    "cannot drop table '{ident}' of catalog '{}': renaming '{}' to '{}' failed",
                    self.name,
                    moved.display(),
                    hidden.display()
                ),
            )
            .with_source(e)
        })?;
        crate::failpoint::hit("after-drop");
        // Files under the moved directory went with it (and a table created at the
        // same name since may have files of the same names there now): only files
        // elsewhere are deleted by location.
        let prefix = format!("{moved_location}/");
        let left = delete_dropped_table_files(&table, &self.name, ident, &files, |f| {
            normalize_location(f).map_or(true, |f| f.starts_with(&prefix))
        });
        if let Some(warning) = left.await {
            eprintln!("warning: {warning}");
        }
        // dropped already: what cannot be removed stays as hidden debris; and so do the
        // hidden directories of drops killed before this point, removed here too (in
        // the namespace's directory, or in the table's when only `metadata/` moved)
        let _ = std::fs::remove_dir_all(&hidden);
        if let Some(namespace_dir) = dir.parent() {
            leftovers::remove_drop_leftovers(namespace_dir);
        }
        if !whole {
            leftovers::remove_drop_leftovers(&dir);
        }
        Ok(())
    }
}
