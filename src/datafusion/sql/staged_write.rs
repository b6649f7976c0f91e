//! The rows of a `… AS query` written into a table that is not committed yet: a
//! replacement's staged table (`CREATE OR REPLACE TABLE … AS`, module `replace_table`)
//! or a staged create (`CREATE TABLE … AS`, module `create_table`). The provider over
//! the staged table commits the rows and the replacement or create in one transaction.

use std::sync::Arc;

use datafusion::catalog::{MemorySchemaProvider, SchemaProvider};
use datafusion::prelude::SessionContext;

use crate::datafusion::table_provider::IcebergTableProvider;
use crate::error::Result;

/// The private catalog (and schema, and table) the `AS` query's rows are inserted
/// through.
const CATALOG: &str = "__icefloe_staged_table";
const SCHEMA: &str = "s";
const TABLE: &str = "t";

/// `INSERT INTO` `provider` (over a staged table) the rows of `query`, run to the end;
/// the provider's commit lands them (and what it stages) or nothing.
///
/// The `INSERT` is planned in a copy of the session whose catalogs also hold the staged
/// table, as `sql::execute` plans an `INSERT`: DataFusion matches and casts the query's
/// columns as for CTAS, a query naming metadata columns reads them as `SELECT`s naming
/// them do, and a `VALUES` in it is typed by its own rows.
///
/// Errors: the query's planning and execution errors; the commit's.
pub(super) async fn insert_rows(
    ctx: &SessionContext,
    provider: IcebergTableProvider,
    query: &str,
) -> Result<()> {
    let state = ctx.state();
    let schema = MemorySchemaProvider::new();
    schema.register_table(TABLE.to_string(), Arc::new(provider))?;
    let private = super::metadata_columns::with_private_schema(state, CATALOG, SCHEMA, schema)?;
    let private = SessionContext::new_with_state(private);
    let sql = format!("INSERT INTO {CATALOG}.{SCHEMA}.{TABLE} {query}");
    super::run_in_datafusion(&private, &sql)
        .await?
        .collect()
        .await?;
    Ok(())
}
