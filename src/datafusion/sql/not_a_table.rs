//! DDL naming a version or a metadata table of a table instead of the table: `DROP TABLE
//! ns.t.branch_dev` (read as `ns."t@dev"`, see module `time_travel`), `ALTER TABLE
//! ns."t$files" …`. Such a name is no table of the catalog, and "table not found" would
//! mislead, the table being there: the error says what the name is and what to write.
//!
//! The other way round, a new table name that the same syntax reads as a version or a
//! metadata table (`CREATE TABLE ns."t$files"`, `ALTER TABLE ns.u RENAME TO ns."t@dev"`)
//! is refused: the table could not be read back by its name.

use super::ResolvedTable;
use crate::catalog::TableIdent;
use crate::datafusion::catalog::{schema_name, TableNameParts};
use crate::error::{Error, ErrorKind, Result};

/// Refuse `statement` (`"DROP TABLE"`, `"ALTER TABLE"`) on `table` when its name is a
/// version (`t@dev`, `t@<snapshot id>`) or a metadata table (`t$files`) of an existing
/// table and no table has that very name. Nothing is checked for a plain name or one the
/// catalog holds.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming the branch, tag or
/// version and the table, with the statement to write instead (`ALTER TABLE t DROP
/// BRANCH dev` to drop a branch); the catalog's errors.
pub(super) async fn check_not_a_version(table: &ResolvedTable, statement: &str) -> Result<()> {
    let parts = TableNameParts::parse(&table.ident.name);
    if parts.is_plain() {
        return Ok(());
    }
    let catalog = table.target.catalog();
    let base_ident = TableIdent::new(table.ident.namespace.clone(), parts.base.to_string());
    if catalog.table_exists(&table.ident).await? || !catalog.table_exists(&base_ident).await? {
        return Ok(());
    }
    let base = format!("{}.{}", table.target.name, base_ident);
    let named = format!("{statement} {}", table.display());
    if let Some(kind) = parts.metadata {
        return Err(Error::invalid_argument(format!(
            "{named}: '{}' is the {} metadata table of table '{base}', not a table; \
             {statement} applies to the table itself",
            table.ident.name,
            kind.name()
        )));
    }
    let version = parts.version.unwrap_or_default();
    let loaded = catalog.load_table(&base_ident).await?;
    let ref_type = loaded
        .metadata()
        .refs
        .get(version)
        .map(|r| r.ref_type.to_ascii_lowercase());
    let what = match &ref_type {
        Some(t) => format!("'{version}' is a {t} of table '{base}'"),
        None => format!("'{version}' names a version of table '{base}'"),
    };
    let instead = match (statement, ref_type.as_deref()) {
        ("DROP TABLE", Some(t)) => format!(
            "to drop the {t}, run ALTER TABLE {base} DROP {} {version}",
            t.to_ascii_uppercase()
        ),
        ("DROP TABLE", None) => format!("DROP TABLE drops whole tables ({base})"),
        _ => format!(
            "{statement} changes the table, whose schema, properties, partition specs and \
             refs all its branches and tags share: run {statement} {base} …"
        ),
    };
    Err(Error::invalid_argument(format!(
        "{named}: {what}, not a table; {instead}"
    )))
}

/// Whether `table` names a session view of its namespace (`CREATE VIEW ns.v`) and no
/// table of the catalog.
///
/// Errors: the catalog's, looking the table up.
pub(super) async fn is_session_view(table: &ResolvedTable) -> Result<bool> {
    Ok(session_view_named(table) && !table.target.catalog().table_exists(&table.ident).await?)
}

/// Whether a session view `table` (`CREATE VIEW ns.v`) is registered in its namespace,
/// whether or not the catalog holds a table of that name.
pub(super) fn session_view_named(table: &ResolvedTable) -> bool {
    table
        .target
        .iceberg()
        .namespace_schema(&schema_name(&table.ident.namespace))
        .is_some_and(|s| s.has_view(&table.ident.name))
}

/// Refuse `statement` (`"CREATE TABLE cat.ns.e"`, `"ALTER TABLE … RENAME"`), which would
/// put a table at `table`, when a session view of that name is in its namespace: a table
/// and a view share one set of names, and `SHOW TABLES` listed both. As Iceberg Java's
/// view catalogs (`BaseMetastoreViewCatalog`'s table builder: "View with same name
/// already exists") for `CREATE`, `CREATE OR REPLACE` and `REPLACE TABLE` and Spark's
/// `TABLE_OR_VIEW_ALREADY_EXISTS`; the other way round, `CREATE VIEW` over a table is
/// refused where the view is registered (the namespace's schema provider).
///
/// Errors: [`ErrorKind::AlreadyExists`](crate::ErrorKind), naming the view and its kind.
pub(super) fn check_no_view_named(table: &ResolvedTable, statement: &str) -> Result<()> {
    if !session_view_named(table) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::AlreadyExists,
        format!(
            "{statement}: {0} already exists as a view of this session (CREATE VIEW); a \
             table cannot take its name (DROP VIEW {0} first, or choose another name)",
            table.display()
        ),
    ))
}

/// Refuse `statement` (`"ALTER TABLE"`, `"COMMENT ON COLUMN"`, …) on a session view
/// ([`is_session_view`]): "table not found" would mislead, the view being there. A view
/// is its query: it has no schema, properties or docs of its own to change.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming the view; the
/// catalog's.
pub(super) async fn check_not_a_view(table: &ResolvedTable, statement: &str) -> Result<()> {
    if !is_session_view(table).await? {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "{statement} {0}: {0} is a view of this session, not a table (its columns are its \
         query's; CREATE OR REPLACE VIEW {0} AS … changes it)",
        table.display()
    )))
}

/// Refuse `name` as the name of a new table (`statement`: `"CREATE TABLE cat.ns.t$files"`,
/// …) when the table-name syntax of [`crate::datafusion::catalog`] reads it as something
/// else: a metadata table (`t$files`, any [`MetadataTableKind`](crate::datafusion::metadata_tables::MetadataTableKind)
/// name after the last `$`, in any case) or a version of a table (`t@dev`, `t@<snapshot
/// id>`, `t@<timestamp>`: text on both sides of an `@`). Such a table would shadow the
/// metadata table or version of `t`, or be shadowed by it. Spark's Iceberg catalog has no
/// such names (its metadata tables and versions are `ns.t.files`, `ns.t.branch_dev`): the
/// rule is icefloe's, for its own syntax. A `$` suffix that is no metadata table name
/// (`price$usd`) is a plain name.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind), naming the name, what it
/// reads as and the table it belongs to.
pub(super) fn check_new_table_name(name: &str, statement: &str) -> Result<()> {
    let parts = TableNameParts::parse(name);
    let reads_as = match (parts.version, parts.metadata) {
        (None, None) => return Ok(()),
        (None, Some(kind)) => format!(
            "the {} metadata table of table '{}'",
            kind.name(),
            parts.base
        ),
        (Some(version), None) => format!(
            "version '{version}' (a branch, tag, snapshot id or timestamp) of table '{}'",
            parts.base
        ),
        (Some(version), Some(kind)) => format!(
            "the {} metadata table of version '{version}' of table '{}'",
            kind.name(),
            parts.base
        ),
    };
    Err(Error::invalid_argument(format!(
        "{statement}: the table name '{name}' reads as {reads_as} ('$' before a metadata \
         table name and '@' between two names are table-name syntax); choose another name"
    )))
}
