//! `CREATE TABLE … AS query` (and `CREATE OR REPLACE TABLE … AS` of a missing table) as
//! Spark's CTAS on Iceberg's staging catalog: the table is staged
//! ([`Catalog::stage_create_table`](crate::catalog::Catalog::stage_create_table): its
//! metadata in memory, nothing in the catalog), the query's rows are written under its
//! location, and one commit
//! ([`Transaction::create`](crate::transaction::Transaction::create), requirement
//! `assert-create`) creates the table with its first snapshot. Until then no other
//! reader or writer sees the table; a query that fails, or a table created under the
//! name meanwhile (then [`ErrorKind::AlreadyExists`](crate::ErrorKind) naming it), leaves
//! no table and removes every file the statement wrote.
//!
//! A catalog that cannot stage a create (a REST server refusing `stage-create`) gets the
//! old way, [`Unstaged`]: create, then insert.

use std::sync::Arc;

use datafusion::prelude::SessionContext;

use super::create_table::{CreateMode, Parsed};
use super::ResolvedTable;
use crate::catalog::TableCreation;
use crate::datafusion::insert::WriteTarget;
use crate::datafusion::table_provider::IcebergTableProvider;
use crate::error::{Error, Result};
use crate::table::Table;

/// Write `query`'s rows into `staged` (the table `table` names, staged by its catalog)
/// and create the table with them in one commit; see the module docs.
///
/// Errors: the query's errors, and the commit's (`AlreadyExists` when another writer
/// created the table first); the files written are removed either way, and so are the
/// local directories the statement made under the table's location.
pub(super) async fn create_with_rows(
    ctx: &SessionContext,
    table: &ResolvedTable,
    staged: Table,
    query: &str,
) -> Result<()> {
    let location = staged.metadata().location.clone();
    let local = location
        .strip_prefix("file://")
        .map(std::path::PathBuf::from);
    let existed = local.as_ref().is_some_and(|dir| dir.exists());
    let target = WriteTarget {
        catalog: Arc::clone(table.target.catalog()),
        ident: table.ident.clone(),
    };
    let provider = IcebergTableProvider::try_new(staged)?
        .with_write_target(target)
        .creating();
    let written = super::staged_write::insert_rows(ctx, provider, query).await;
    if written.is_err() {
        // the writers and the transaction removed their files; a local file system
        // keeps the directories they made (`data/…`, `metadata/`), which a filesystem
        // catalog would list as namespaces: removed while empty
        if let Some(dir) = local {
            remove_empty_dirs(&dir, !existed);
        }
    }
    written
}

/// Remove the empty directories under `dir` (bottom-up), and `dir` itself when `itself`
/// and it is empty then. A directory holding a file stays (another table's, created
/// under the name meanwhile).
fn remove_empty_dirs(dir: &std::path::Path, itself: bool) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&e.path(), true);
            }
        }
    }
    if itself {
        // fails, as it should, on a directory that is not empty
        let _ = std::fs::remove_dir(dir);
    }
}

/// CTAS on a catalog that cannot stage a create: create, then insert (not atomic).
pub(super) struct Unstaged {
    /// The statement's mode: `CREATE OR REPLACE` writes the rows as a replacement of
    /// the table it created, so that a concurrent `CREATE OR REPLACE` is replaced, not
    /// added to.
    pub mode: CreateMode,
    /// The statement's identifier quote, for the `INSERT` naming the table.
    pub quote: char,
}

impl Unstaged {
    /// Create `table` as `creation`, then insert `parsed`'s query; when the insert fails
    /// drop the table again and remove its files — but only while it is still as
    /// created: it is visible from the create on, so another writer may have committed
    /// to it meanwhile, and dropping it then would delete that writer's rows. `what`
    /// names the statement in errors.
    ///
    /// Errors: the create's; the insert's (saying when the table was kept).
    pub(super) async fn create_then_insert(
        &self,
        ctx: &SessionContext,
        table: &ResolvedTable,
        creation: TableCreation,
        parsed: &mut Parsed,
        what: &str,
    ) -> Result<()> {
        let catalog = table.target.catalog().clone();
        let created = catalog
            .create_table(&table.ident, creation)
            .await
            .map_err(|e| e.context(what))?;
        let schema = table.target.schema(&table.ident.namespace)?;
        schema.add_table_name(&table.ident.name);
        let query = parsed.query.clone().unwrap_or_default();
        let inserted = match self.mode {
            CreateMode::CreateOrReplace => {
                super::replace_table::replace_table(ctx, table, parsed).await
            }
            _ => insert(ctx, &table.sql_name(self.quote), &query).await,
        };
        let Err(e) = inserted else {
            return Ok(());
        };
        let e = e.context(format!("{what} AS: inserting the query's rows"));
        let unchanged = catalog
            .metadata_location(&table.ident)
            .await
            .is_ok_and(|now| now == created.metadata_location());
        if !unchanged {
            return Err(e.context(format!(
                "table {} was kept: it changed after this statement created it \
                 (another writer committed to it)",
                table.display()
            )));
        }
        let _ = catalog.drop_table(&table.ident, true).await;
        schema.remove_table_name(&table.ident.name);
        Err(e)
    }
}

/// `INSERT INTO <table> <query>`, run to the end, planned as `sql::execute` plans that
/// `INSERT` (metadata columns, a `VALUES` in the query typed by its own rows).
async fn insert(ctx: &SessionContext, table: &str, query: &str) -> Result<()> {
    let sql = format!("INSERT INTO {table} {query}");
    super::run_in_datafusion(ctx, &sql)
        .await?
        .collect()
        .await
        .map_err(Error::from)?;
    Ok(())
}
