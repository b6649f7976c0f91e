//! `CREATE OR REPLACE TABLE` and Spark's `REPLACE TABLE` of a table that exists: one
//! commit of a [`ReplaceTable`] (the table keeps its history; see that type for what the
//! replacement keeps), with the `AS` query's rows appended in the same transaction.
//!
//! The replacement is atomic, as in Spark: the rows are written first, against the
//! replacement's staged metadata (module `staged_write`), and one commit replaces the
//! table and adds them; a statement that fails leaves the table as it was, and its data
//! files are removed.

use std::sync::Arc;

use datafusion::prelude::SessionContext;

use super::create_table::Parsed;
use super::ResolvedTable;
use crate::datafusion::insert::WriteTarget;
use crate::datafusion::table_provider::IcebergTableProvider;
use crate::error::Result;
use crate::transaction::{check_writable, ReplaceTable, Transaction};

/// Replace `table` (which exists) by what `parsed` declares; see the module docs.
///
/// Errors: the table's format version is not written by this crate; the declaration's
/// errors (as `CREATE TABLE`'s); a `format-version` below the table's; the query's
/// errors; a commit conflict that cannot be retried (another writer changed the
/// table's schema or partition fields meanwhile: `ValidationFailed`).
pub(super) async fn replace_table(
    ctx: &SessionContext,
    table: &ResolvedTable,
    parsed: &mut Parsed,
) -> Result<()> {
    let catalog = Arc::clone(table.target.catalog());
    let loaded = catalog.load_table(&table.ident).await?;
    check_writable(&loaded)?;
    // the table's format version, unless the statement upgrades it (`CREATE TABLE`'s
    // checks of v3-only columns read it from the properties)
    let version = (loaded.metadata().format_version as i32).to_string();
    parsed
        .properties
        .entry("format-version".to_string())
        .or_insert(version);
    let creation = parsed.creation(ctx).await?;
    let mut replacement = ReplaceTable::new(
        creation.schema,
        creation.partition_spec,
        creation.properties,
    )
    .with_location(creation.location);
    let target = WriteTarget {
        catalog: Arc::clone(&catalog),
        ident: table.ident.clone(),
    };
    let Some(query) = &parsed.query else {
        Transaction::new(catalog, table.ident.clone(), loaded)
            .add_action(replacement)
            .commit()
            .await?;
        return Ok(());
    };
    let staged = replacement.staged(&loaded)?;
    let provider = IcebergTableProvider::try_new(staged)?
        .with_write_target(target)
        .replacing(loaded, replacement);
    super::staged_write::insert_rows(ctx, provider, query).await
}
