//! The SQL catalog: Iceberg's JDBC catalog layout on SQLite.
//!
//! Two tables, as Iceberg Java's `JdbcCatalog` (`JdbcUtil`) and PyIceberg's `SqlCatalog`
//! create them:
//!
//! ```text
//! iceberg_tables (catalog_name, table_namespace, table_name,      -- primary key
//!                 metadata_location, previous_metadata_location,
//!                 iceberg_type)                                   -- V1 schema only
//! iceberg_namespace_properties (catalog_name, namespace, property_key,   -- primary key
//!                               property_value)
//! ```
//!
//! Both the V0 schema (no `iceberg_type`, as PyIceberg writes it) and the V1 schema
//! (`iceberg_type` = `'TABLE'`, `'VIEW'` or NULL for rows written before V1) are read;
//! views are not listed. Namespaces are stored `.`-joined; a namespace exists when it has
//! a row in `iceberg_namespace_properties` or a table in `iceberg_tables` (or is a parent
//! of one that does). One database may hold several catalogs (`catalog_name`).

mod locations;
mod namespace_properties;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use std::collections::HashMap;

use super::{
    apply_commit, check_directory_name, default_table_location, namespace_not_found,
    next_metadata_location, table_not_found, with_parent_namespaces, write_metadata_file, Catalog,
    Namespace, TableCreation, TableIdent,
};
use crate::error::{Error, ErrorKind, Result};
use crate::spec::TableCommit;
use crate::table::{OpenOptions, Table};

/// The V1 schema, as `JdbcUtil` (V1) creates it; PyIceberg creates the same without
/// `iceberg_type`.
const CREATE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name)
);
CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255),
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key)
);";

fn sql_error(db: &Path, what: &str, e: rusqlite::Error) -> Error {
    // SQLite keeps using a database file deleted under it, and then refuses writes as
    // "attempt to write a readonly database": say what happened
    let gone = match db.exists() {
        false => " (the database file no longer exists: it was deleted or moved while open)",
        true => "",
    };
    Error::new(
        ErrorKind::Io,
        format!("SQL catalog '{}': {what}{gone}", db.display()),
    )
    .with_source(e)
}

/// Whether `e` is SQLite refusing a row whose key is taken (`iceberg_tables`' primary key
/// catalog, namespace, name; `iceberg_namespace_properties`' catalog, namespace,
/// property): another writer created the table or namespace (or renamed a table to that
/// name) between this one's existence check and its statement.
fn is_key_taken(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation)
}

/// The location a commit records for its new metadata file `logical` (under the table's
/// recorded `location`), in the form the catalog row held the base's (`stored`).
///
/// A table registered from a copy (its metadata names the old location, which
/// `allow_moved_paths` maps to the copy: see [`Table::open_with`]) reads and writes
/// every file in the copy, so the row must name the file where it was written: the
/// logical location does not exist, and the next load would fail. A row holding a
/// location the catalog's own `remap` rules translate keeps the logical form, as
/// before. Errors: a location that cannot be normalised.
fn stored_form(base: &Table, stored: &str, logical: &str) -> Result<String> {
    let io = base.file_io();
    if io.remap(stored)? != crate::io::normalize_location(stored)? {
        return Ok(logical.to_string());
    }
    io.remap(logical)
}

/// [`ErrorKind::AlreadyExists`]: table `ident` exists in catalog `catalog`.
fn table_exists_error(ident: &TableIdent, catalog: &str) -> Error {
    Error::new(
        ErrorKind::AlreadyExists,
        format!("table '{ident}' already exists in catalog '{catalog}'"),
    )
}

/// An Iceberg SQL (JDBC-layout) catalog in a SQLite database file.
#[derive(Debug, Clone)]
pub struct SqlCatalog {
    name: String,
    db: PathBuf,
    conn: Arc<Mutex<Connection>>,
    /// Whether `iceberg_tables` has the V1 `iceberg_type` column.
    v1: bool,
    /// Whether `iceberg_namespace_properties` exists.
    has_namespace_table: bool,
    options: OpenOptions,
    /// Where new tables go by default: `<warehouse>/<ns levels…>/<table>`.
    warehouse: String,
}

impl SqlCatalog {
    /// Open the catalog `name` in an existing SQLite database.
    ///
    /// Errors: [`ErrorKind::NotFound`] when the file does not exist or has no
    /// `iceberg_tables` table (naming it).
    pub fn open(name: &str, db: impl AsRef<Path>) -> Result<Self> {
        let db = db.as_ref();
        if !db.is_file() {
            return Err(Error::not_found(format!(
                "SQL catalog database '{}'",
                db.display()
            )));
        }
        let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .or_else(|_| Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY))
            .map_err(|e| sql_error(db, "cannot open the database", e))?;
        Self::from_connection(name, db, conn)
    }

    /// Open the catalog `name` in a SQLite database, creating the file (and its parent
    /// directory) and the V1 catalog tables when missing — what PyIceberg's
    /// `SqlCatalog` does on first use.
    pub fn open_or_create(name: &str, db: impl AsRef<Path>) -> Result<Self> {
        let db = db.as_ref();
        if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("cannot create directory '{}'", dir.display()),
                )
                .with_source(e)
            })?;
        }
        let conn =
            Connection::open(db).map_err(|e| sql_error(db, "cannot open the database", e))?;
        conn.execute_batch(CREATE_TABLES)
            .map_err(|e| sql_error(db, "cannot create the catalog tables", e))?;
        Self::from_connection(name, db, conn)
    }

    fn from_connection(name: &str, db: &Path, conn: Connection) -> Result<Self> {
        let columns = |table: &str| -> Result<Vec<String>> {
            let mut stmt = conn
                .prepare(&format!("PRAGMA table_info({table})"))
                .map_err(|e| sql_error(db, "cannot read the schema", e))?;
            let names = stmt
                .query_map([], |row| row.get::<_, String>(1))
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                .map_err(|e| sql_error(db, "cannot read the schema", e))?;
            Ok(names)
        };
        let table_columns = columns("iceberg_tables")?;
        if table_columns.is_empty() {
            return Err(Error::not_found(format!(
                "table 'iceberg_tables' in '{}' (not an Iceberg SQL catalog)",
                db.display()
            )));
        }
        let has_namespace_table = !columns("iceberg_namespace_properties")?.is_empty();
        // Concurrent writers (threads or processes) wait for each other's transactions.
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(|e| sql_error(db, "cannot set the busy timeout", e))?;
        let warehouse = crate::io::normalize_location(
            &db.parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_string_lossy(),
        )?;
        Ok(Self {
            warehouse,
            name: name.to_string(),
            db: db.to_path_buf(),
            v1: table_columns
                .iter()
                .any(|c| c.eq_ignore_ascii_case("iceberg_type")),
            has_namespace_table,
            conn: Arc::new(Mutex::new(conn)),
            options: OpenOptions::default(),
        })
    }

    /// Use these options (remaps, object store properties) when loading tables.
    pub fn with_open_options(mut self, options: OpenOptions) -> Self {
        self.options = options;
        self
    }

    /// Create new tables under `warehouse` (a local path or URL; default: the directory
    /// of the database file).
    ///
    /// Errors: a location that cannot be normalised.
    pub fn with_warehouse(mut self, warehouse: &str) -> Result<Self> {
        self.warehouse = crate::io::normalize_location(warehouse)?;
        Ok(self)
    }

    /// A default location `<warehouse>/<ns…>/<name>` must not lie inside another table's
    /// (namespace `ns` of table `ns.t.u` is itself a table `ns.t`: `u` would be in
    /// `<warehouse>/ns/t/u`, among `ns.t`'s files, which `remove_orphan_files` of either
    /// would take for orphans), nor hold other tables' (a namespace `ns.t` beside the new
    /// table `ns.t`). Java's `JdbcCatalog` lets both happen; a `LOCATION` given avoids it.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] naming the table or namespace in the way.
    async fn check_default_location_apart(&self, ident: &TableIdent, location: &str) -> Result<()> {
        let levels = ident.namespace.levels();
        for k in 1..=levels.len() {
            let outer = TableIdent::new(Namespace::new(levels[..k - 1].to_vec()), &levels[k - 1]);
            if self.table_exists(&outer).await? {
                return Err(Error::invalid_argument(format!(
                    "the default location of table '{ident}', '{location}', lies inside the \
                     directory of table '{outer}'; give the table a LOCATION"
                )));
            }
        }
        let mut inner = levels.to_vec();
        inner.push(ident.name.clone());
        let inner = Namespace::new(inner);
        if self.namespace_exists(&inner).await? {
            return Err(Error::invalid_argument(format!(
                "the default location of table '{ident}', '{location}', is the directory of \
                 namespace '{inner}''s tables; give the table a LOCATION"
            )));
        }
        Ok(())
    }

    /// Where new tables go by default.
    pub fn warehouse(&self) -> &str {
        &self.warehouse
    }

    /// The database file.
    pub fn database(&self) -> &Path {
        &self.db
    }

    /// Whether the catalog tables use the V1 schema (`iceberg_type` column).
    pub fn is_v1_schema(&self) -> bool {
        self.v1
    }

    /// The distinct `catalog_name`s in the database file `db`, sorted.
    pub fn catalog_names(db: impl AsRef<Path>) -> Result<Vec<String>> {
        let catalog = Self::open("", db)?;
        let ns_part = if catalog.has_namespace_table {
            " UNION SELECT catalog_name FROM iceberg_namespace_properties"
        } else {
            ""
        };
        let sql = format!("SELECT catalog_name FROM iceberg_tables{ns_part} ORDER BY 1");
        catalog.query_strings(&sql, &[])
    }

    /// Run `f` with the connection on a blocking thread.
    async fn with_conn<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T> {
        let conn = Arc::clone(&self.conn);
        let db = self.db.clone();
        let run = move || {
            let conn = conn
                .lock()
                .map_err(|_| Error::new(ErrorKind::Io, "SQL catalog connection poisoned"))?;
            f(&conn).map_err(|e| sql_error(&db, "query failed", e))
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle
                .spawn_blocking(run)
                .await
                .map_err(|e| Error::new(ErrorKind::Io, "SQL catalog task failed").with_source(e))?,
            Err(_) => run(),
        }
    }

    fn query_strings(&self, sql: &str, args: &[&str]) -> Result<Vec<String>> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| Error::new(ErrorKind::Io, "SQL catalog connection poisoned"))?;
        let mut stmt = conn
            .prepare(sql)
            .map_err(|e| sql_error(&self.db, "query failed", e))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |row| {
                row.get::<_, String>(0)
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| sql_error(&self.db, "query failed", e))?;
        Ok(rows)
    }

    /// `AND …` restricting rows to tables (not views) in the V1 schema.
    fn tables_only(&self) -> &'static str {
        if self.v1 {
            " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"
        } else {
            ""
        }
    }

    /// Point `ident` at `metadata_location` (a new row of `iceberg_tables`). The
    /// namespace must exist or is created when the database has no namespace table.
    /// Errors when the name is taken.
    async fn insert_table_row(&self, ident: &TableIdent, metadata_location: &str) -> Result<()> {
        if self.has_namespace_table && !self.namespace_exists(&ident.namespace).await? {
            return Err(namespace_not_found(&self.name, &ident.namespace));
        }
        if self.metadata_location(ident).await.is_ok() {
            return Err(table_exists_error(ident, &self.name));
        }
        let (catalog, ns, name) = (
            self.name.clone(),
            ident.namespace.to_string(),
            ident.name.clone(),
        );
        let location = metadata_location.to_string();
        let v1 = self.v1;
        let inserted = self
            .with_conn(move |conn| {
                let inserted = if v1 {
                    conn.execute(
                        "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, \
                     metadata_location, previous_metadata_location, iceberg_type) \
                     VALUES (?1, ?2, ?3, ?4, NULL, 'TABLE')",
                        params![catalog, ns, name, location],
                    )
                } else {
                    conn.execute(
                        "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, \
                     metadata_location, previous_metadata_location) VALUES (?1, ?2, ?3, ?4, NULL)",
                        params![catalog, ns, name, location],
                    )
                };
                match inserted {
                    Ok(_) => Ok(true),
                    Err(e) if is_key_taken(&e) => Ok(false),
                    Err(e) => Err(e),
                }
            })
            .await?;
        if !inserted {
            return Err(table_exists_error(ident, &self.name));
        }
        Ok(())
    }

    /// Write `table`'s metadata file (create-if-absent) and insert the catalog row
    /// pointing at it; a row inserted by another writer first (primary key) is
    /// [`ErrorKind::AlreadyExists`] and the written file is removed.
    async fn register_new(&self, ident: &TableIdent, table: &Table) -> Result<()> {
        let metadata_location = table.metadata_location();
        write_metadata_file(table.file_io(), table.metadata(), metadata_location).await?;
        if let Err(e) = self.insert_table_row(ident, metadata_location).await {
            let _ = table.file_io().delete(metadata_location).await;
            return Err(e);
        }
        Ok(())
    }
}

#[async_trait]
impl Catalog for SqlCatalog {
    fn name(&self) -> &str {
        &self.name
    }

    fn own_files(&self) -> Vec<String> {
        let Ok(db) = std::path::absolute(&self.db) else {
            return Vec::new();
        };
        let db = db.to_string_lossy().to_string();
        ["", "-wal", "-shm", "-journal"]
            .iter()
            .filter_map(|suffix| crate::io::normalize_location(&format!("{db}{suffix}")).ok())
            .collect()
    }

    async fn list_namespaces(&self) -> Result<Vec<Namespace>> {
        let ns_part = if self.has_namespace_table {
            " UNION SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?1"
        } else {
            ""
        };
        let sql = format!(
            "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ?1{}{ns_part}",
            self.tables_only()
        );
        let catalog = self.name.clone();
        let names: Vec<String> = self
            .with_conn(move |conn| {
                let mut stmt = conn.prepare(&sql)?;
                let rows = stmt.query_map(params![catalog], |row| row.get::<_, String>(0))?;
                rows.collect()
            })
            .await?;
        Ok(with_parent_namespaces(
            names.iter().map(|n| Namespace::parse(n)),
        ))
    }

    async fn list_tables(&self, namespace: &Namespace) -> Result<Vec<TableIdent>> {
        let sql = format!(
            "SELECT table_name FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2{} \
             ORDER BY table_name",
            self.tables_only()
        );
        let (catalog, ns) = (self.name.clone(), namespace.to_string());
        let names: Vec<String> = self
            .with_conn(move |conn| {
                let mut stmt = conn.prepare(&sql)?;
                let rows = stmt.query_map(params![catalog, ns], |row| row.get::<_, String>(0))?;
                rows.collect()
            })
            .await?;
        if names.is_empty() && !self.namespace_exists(namespace).await? {
            return Err(namespace_not_found(&self.name, namespace));
        }
        Ok(names
            .into_iter()
            .map(|n| TableIdent::new(namespace.clone(), n))
            .collect())
    }

    async fn metadata_location(&self, ident: &TableIdent) -> Result<String> {
        let sql = format!(
            "SELECT metadata_location FROM iceberg_tables \
             WHERE catalog_name = ?1 AND table_namespace = ?2 AND table_name = ?3{}",
            self.tables_only()
        );
        let (catalog, ns, name) = (
            self.name.clone(),
            ident.namespace.to_string(),
            ident.name.clone(),
        );
        let row: Option<Option<String>> = self
            .with_conn(move |conn| {
                conn.query_row(&sql, params![catalog, ns, name], |row| {
                    row.get::<_, Option<String>>(0)
                })
                .optional()
            })
            .await?;
        match row {
            Some(Some(location)) => Ok(location),
            Some(None) => Err(Error::invalid_data(format!(
                "table '{ident}' in catalog '{}' has no metadata_location",
                self.name
            ))),
            None if !self.namespace_exists(&ident.namespace).await? => {
                Err(namespace_not_found(&self.name, &ident.namespace))
            }
            None => Err(table_not_found(&self.name, ident)),
        }
    }

    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        let location = self.metadata_location(ident).await?;
        Table::open_with(&location, self.options.clone())
            .await
            .map_err(|e| e.context(format!("table '{ident}' in catalog '{}'", self.name)))
    }

    /// As `JdbcCatalog.createNamespace`: one row per property plus `exists = true`.
    async fn create_namespace(
        &self,
        namespace: &Namespace,
        properties: &HashMap<String, String>,
    ) -> Result<()> {
        if !self.has_namespace_table {
            return Err(Error::unsupported(format!(
                "creating namespaces: '{}' has no iceberg_namespace_properties table",
                self.db.display()
            )));
        }
        namespace.check_creatable()?;
        // its tables' default locations are directories under it
        for level in namespace.levels() {
            check_directory_name("namespace", level)?;
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
        // the given properties win over the marker, as Java's `JdbcCatalog` stores them
        let mut props: std::collections::BTreeMap<String, String> =
            std::collections::BTreeMap::from([("exists".into(), "true".into())]);
        props.extend(properties.iter().map(|(k, v)| (k.clone(), v.clone())));
        let (catalog, ns) = (self.name.clone(), namespace.to_string());
        // One transaction of plain INSERTs: another writer creating the namespace between
        // the check above and here makes a row's key taken, and nothing of this one stays
        // (INSERT OR REPLACE let both creates succeed with their properties mixed).
        let created = self
            .with_conn(move |conn| {
                let tx = conn.unchecked_transaction()?;
                for (k, v) in &props {
                    match tx.execute(
                        "INSERT INTO iceberg_namespace_properties \
                         (catalog_name, namespace, property_key, property_value) \
                         VALUES (?1, ?2, ?3, ?4)",
                        params![catalog, ns, k, v],
                    ) {
                        Ok(_) => {}
                        // dropping `tx` rolls back this create's rows
                        Err(e) if is_key_taken(&e) => return Ok(false),
                        Err(e) => return Err(e),
                    }
                }
                tx.commit()?;
                Ok(true)
            })
            .await?;
        if !created {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "namespace '{namespace}' already exists in catalog '{}'",
                    self.name
                ),
            ));
        }
        Ok(())
    }

    /// Deletes the namespace's rows of `iceberg_namespace_properties`; refused while any
    /// row of `iceberg_tables` (a table or a view) is in it, as Java's `JdbcCatalog`.
    /// The namespace's rows of `iceberg_namespace_properties` without the `exists`
    /// marker, and `location` (when none was set) where its tables go by default:
    /// `<warehouse>/<levels…>`, as Java's `JdbcCatalog.loadNamespaceMetadata` gives them.
    async fn load_namespace_metadata(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        self.namespace_metadata(namespace).await
    }

    /// The namespace's rows of `iceberg_namespace_properties`: the `exists` marker too
    /// (reserved: removing it is refused), no default `location`.
    async fn stored_namespace_properties(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        self.namespace_rows(namespace).await
    }

    /// One SQLite transaction of `UPDATE`s (an `INSERT` for a new key) and `DELETE`s of
    /// the namespace's rows; the `exists` marker is reserved, as in Java's `JdbcCatalog`.
    async fn update_namespace_properties(
        &self,
        namespace: &Namespace,
        updates: &HashMap<String, String>,
        removals: &[String],
    ) -> Result<Vec<String>> {
        self.update_properties(namespace, updates, removals).await
    }

    async fn drop_namespace(&self, namespace: &Namespace) -> Result<()> {
        if namespace.is_root() || !self.namespace_exists(namespace).await? {
            return Err(namespace_not_found(&self.name, namespace));
        }
        let (catalog, ns) = (self.name.clone(), namespace.to_string());
        let held: Vec<String> = self
            .with_conn(move |conn| {
                let mut stmt = conn.prepare(
                    "SELECT table_name FROM iceberg_tables WHERE catalog_name = ?1 \
                     AND table_namespace = ?2 ORDER BY table_name",
                )?;
                let rows = stmt.query_map(params![catalog, ns], |row| row.get::<_, String>(0))?;
                rows.collect()
            })
            .await?;
        super::check_droppable(self, namespace, &held).await?;
        let (catalog, ns) = (self.name.clone(), namespace.to_string());
        self.with_conn(move |conn| {
            conn.execute(
                "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ?1 AND namespace = ?2",
                params![catalog, ns],
            )
            .map(|_| ())
        })
        .await
    }

    /// Writes `00000-<uuid>.metadata.json` under the table location, then inserts the
    /// catalog row; a row inserted by another writer first (primary key) is
    /// [`ErrorKind::AlreadyExists`] and the written file is removed.
    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        let table = self.stage_create_table(ident, creation).await?;
        self.register_new(ident, &table).await?;
        Ok(table)
    }

    /// The table at its location (given, or `<warehouse>/<ns…>/<name>`), to be written
    /// at `<location>/metadata/00000-<uuid>.metadata.json`.
    async fn stage_create_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
    ) -> Result<Table> {
        if self.table_exists(ident).await? {
            return Err(table_exists_error(ident, &self.name));
        }
        if !self.namespace_exists(&ident.namespace).await? {
            return Err(namespace_not_found(&self.name, &ident.namespace));
        }
        let location = match &creation.location {
            Some(l) => crate::io::normalize_location(l)?,
            None => {
                let location = default_table_location(&self.warehouse, ident)?;
                self.check_default_location_apart(ident, &location).await?;
                location
            }
        };
        self.check_location_unused(ident, &location).await?;
        let metadata = creation.to_metadata(&location)?;
        let metadata_location = next_metadata_location(&metadata, None);
        Table::from_written(metadata, &metadata_location, &self.options)
    }

    /// Writes the staged table's first metadata file with the updates applied, then
    /// inserts the catalog row (as `create_table`).
    async fn commit_create(
        &self,
        ident: &TableIdent,
        staged: &Table,
        commit: &TableCommit,
    ) -> Result<Table> {
        let table = super::commit::apply_create(staged, commit)?;
        crate::failpoint::pause("commit-loaded");
        self.register_new(ident, &table).await?;
        Ok(table)
    }

    /// The metadata file is read first (through the catalog's storage settings), so a
    /// location that is not table metadata registers nothing.
    async fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        check_directory_name("table", &ident.name)?;
        if self.has_namespace_table && !self.namespace_exists(&ident.namespace).await? {
            return Err(namespace_not_found(&self.name, &ident.namespace));
        }
        let location = crate::io::normalize_location(metadata_location)?;
        let table = Table::open_with(&location, self.options.clone()).await?;
        // a table directory given: the row holds the metadata file it opened to, which
        // every engine reading the row expects (PyIceberg could not open a directory)
        let stored = if table.metadata_location() == location {
            &location
        } else {
            table.metadata_location()
        };
        self.insert_table_row(ident, stored).await?;
        Ok(table)
    }

    /// The swap is `UPDATE iceberg_tables SET metadata_location = <new>,
    /// previous_metadata_location = <base> WHERE … AND metadata_location = <base>`
    /// (`JdbcTableOperations`); no row updated means another commit landed first
    /// ([`ErrorKind::CommitConflict`]), and the new metadata file is removed.
    async fn commit_table(&self, ident: &TableIdent, commit: &TableCommit) -> Result<Table> {
        // the swap compares with the location exactly as stored (a registered table's
        // may be a plain path, which the loaded table reports normalised)
        let stored = self.metadata_location(ident).await?;
        let base = Table::open_with(&stored, self.options.clone())
            .await
            .map_err(|e| e.context(format!("table '{ident}' in catalog '{}'", self.name)))?;
        crate::failpoint::pause("commit-loaded");
        let metadata = apply_commit(&base, commit)?;
        let logical = next_metadata_location(&metadata, Some(base.metadata_location()));
        let new_location = stored_form(&base, &stored, &logical)?;
        let table = base.with_metadata(metadata, &new_location);
        write_metadata_file(table.file_io(), table.metadata(), &new_location).await?;
        let (catalog, ns, name) = (
            self.name.clone(),
            ident.namespace.to_string(),
            ident.name.clone(),
        );
        let (old, new) = (stored, new_location.clone());
        let swapped = self
            .with_conn(move |conn| {
                conn.execute(
                    "UPDATE iceberg_tables SET metadata_location = ?1, previous_metadata_location = ?2 \
                     WHERE catalog_name = ?3 AND table_namespace = ?4 AND table_name = ?5 \
                     AND metadata_location = ?2",
                    params![new, old, catalog, ns, name],
                )
            })
            .await;
        match swapped {
            Ok(1) => {
                crate::failpoint::hit("after-swap");
                super::commit::delete_dropped_metadata(
                    base.metadata(),
                    table.metadata(),
                    table.file_io(),
                )
                .await;
                Ok(table)
            }
            Ok(_) => {
                let _ = table.file_io().delete(&new_location).await;
                Err(Error::new(
                    ErrorKind::CommitConflict,
                    format!(
                        "table '{ident}' in catalog '{}' changed since '{}' was read \
                         (another commit landed first)",
                        self.name,
                        base.metadata_location()
                    ),
                ))
            }
            // SQLite either applied the update or not; a failed statement did not.
            Err(e) => {
                let _ = table.file_io().delete(&new_location).await;
                Err(e)
            }
        }
    }

    /// Drop `ident`; with `purge`, also delete its files (see [`super::purge`]): they
    /// are listed from its metadata first, so a manifest list or manifest that cannot be
    /// read fails the drop with the table kept (as the filesystem catalog does), and are
    /// deleted after the drop, best effort (a failed delete is a warning on stderr
    /// naming the file and the table location; the drop stands, as Java's
    /// `CatalogUtil.dropTableData` after `dropTable`).
    ///
    /// Errors: [`ErrorKind::NotFound`] for an unknown table; a purge's listing errors
    /// (nothing dropped); the catalog database's errors.
    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let purged = if purge {
            let table = self.load_table(ident).await?;
            let files = super::files_to_purge(&table).await?;
            Some((table, files))
        } else {
            self.metadata_location(ident).await?;
            None
        };
        let (catalog, ns, name) = (
            self.name.clone(),
            ident.namespace.to_string(),
            ident.name.clone(),
        );
        let sql = format!(
            "DELETE FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2 \
             AND table_name = ?3{}",
            self.tables_only()
        );
        let removed = self
            .with_conn(move |conn| conn.execute(&sql, params![catalog, ns, name]))
            .await?;
        if removed == 0 {
            return Err(table_not_found(&self.name, ident));
        }
        crate::failpoint::hit("after-drop");
        if let Some((table, files)) = purged {
            let left =
                super::delete_dropped_table_files(&table, &self.name, ident, &files, |_| false);
            if let Some(warning) = left.await {
                eprintln!("warning: {warning}");
            }
        }
        Ok(())
    }

    async fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        // the name rule of a created table (the location stays where it is)
        check_directory_name("table", &to.name)?;
        self.metadata_location(from).await?;
        if self.table_exists(to).await? {
            return Err(table_exists_error(to, &self.name));
        }
        if !self.namespace_exists(&to.namespace).await? {
            return Err(namespace_not_found(&self.name, &to.namespace));
        }
        let (catalog, ns, name) = (
            self.name.clone(),
            from.namespace.to_string(),
            from.name.clone(),
        );
        let (to_ns, to_name) = (to.namespace.to_string(), to.name.clone());
        let renamed = self
            .with_conn(move |conn| {
                match conn.execute(
                    "UPDATE iceberg_tables SET table_namespace = ?4, table_name = ?5 \
                     WHERE catalog_name = ?1 AND table_namespace = ?2 AND table_name = ?3",
                    params![catalog, ns, name, to_ns, to_name],
                ) {
                    Ok(_) => Ok(true),
                    Err(e) if is_key_taken(&e) => Ok(false),
                    Err(e) => Err(e),
                }
            })
            .await?;
        if !renamed {
            return Err(table_exists_error(to, &self.name));
        }
        Ok(())
    }
}
