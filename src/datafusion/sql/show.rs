//! The `SHOW` statements icefloe answers for Iceberg tables, in Spark's syntax:
//! `SHOW TBLPROPERTIES` ([`show_properties`](super::show_properties)) and `SHOW CREATE
//! TABLE` ([`show_create_table`](super::show_create_table)), `SHOW TABLES` of one
//! namespace or with a pattern ([`show_tables`](super::show_tables)) and `SHOW
//! NAMESPACES|SCHEMAS|DATABASES` ([`show_namespaces`](super::show_namespaces)). Every
//! other `SHOW` goes to DataFusion.
//!
//! The table is looked up as a query would look it up (`ctx.table_provider`): a table of
//! an Iceberg catalog, a `--table` or `CREATE EXTERNAL TABLE … STORED AS ICEBERG` table,
//! also a `"t@ref"` name; a catalog table is loaded fresh, so the answer is the table's
//! current metadata.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::tokens::Cursor;
use super::{defaults, show_create_table, show_namespaces, show_properties, show_tables};
use crate::error::{Error, ErrorKind, Result};
use crate::table::Table;
use crate::IcebergTableProvider;

/// `SHOW …` at `c`: `Some` result for the statements icefloe answers, `None` for the
/// ones DataFusion answers (any other `SHOW`, and `SHOW CREATE TABLE` of a table that is
/// not an Iceberg table).
///
/// Errors: the statement's own (see the two modules); an unknown table is
/// [`ErrorKind::NotFound`] "table 'catalog.schema.table' not found".
pub(super) async fn show(ctx: &SessionContext, mut c: Cursor<'_>) -> Result<Option<DataFrame>> {
    if !c.eat_keyword("SHOW") {
        return Ok(None);
    }
    if c.eat_keyword("TBLPROPERTIES") {
        return show_properties::show_tblproperties(ctx, c).await.map(Some);
    }
    if c.eat_keywords(&["CREATE", "TABLE"]) {
        return show_create_table::show_create_table(ctx, c).await;
    }
    if c.peek_keyword("TABLES") {
        return show_tables::show_tables(ctx, c).await;
    }
    for word in ["NAMESPACES", "SCHEMAS", "DATABASES"] {
        if c.eat_keyword(word) {
            return show_namespaces::show_namespaces(ctx, word, c).await;
        }
    }
    if c.eat_keyword("COLUMNS") {
        return show_columns(ctx, c).await;
    }
    if c.eat_keyword("PARTITIONS") {
        return Err(show_partitions(c));
    }
    Ok(None)
}

/// Spark's `SHOW PARTITIONS t [PARTITION (…)]`, which DataFusion read as showing a
/// variable (`'partitions.t' is not a variable …`): refused naming it and the metadata
/// table that lists a table's partitions. Spark refuses it for Iceberg tables too
/// (they have no Hive partitions to manage); DataFusion has no table of partitions.
fn show_partitions(mut c: Cursor<'_>) -> Error {
    let table = c
        .object_name()
        .map_or_else(|_| "t".to_string(), |n| n.join("."));
    Error::unsupported(format!(
        "SHOW PARTITIONS {table}: Iceberg tables have no Hive partitions to show (Spark \
         refuses SHOW PARTITIONS for them too); the partitions metadata table lists them: \
         SELECT * FROM {table}.partitions"
    ))
}

/// `SHOW COLUMNS FROM|IN t` of a name no schema lists (a metadata table `t$files`, a
/// version `t@v1`): DataFusion answers `SHOW COLUMNS` from `information_schema.columns`,
/// which lists the tables of each schema, so it answered such a name with no rows. Here
/// they get DataFusion's columns (`table_catalog`, `table_schema`, `table_name`,
/// `column_name`, `data_type` as `information_schema` shows it, `is_nullable`) from the
/// table's schema; `None` for a listed table and the other forms (`FULL`, `LIKE`, `FROM
/// db`), which DataFusion answers.
///
/// Errors: as [`find_provider`] (an unknown table).
async fn show_columns(ctx: &SessionContext, mut c: Cursor<'_>) -> Result<Option<DataFrame>> {
    if !(c.eat_keyword("FROM") || c.eat_keyword("IN")) {
        return Ok(None);
    }
    let Ok(parts) = c.object_name() else {
        return Ok(None);
    };
    if !c.at_end() {
        return Ok(None);
    }
    let found = find_provider(ctx, &parts).await?;
    let (catalog, _) = defaults(ctx);
    let catalog = match parts.as_slice() {
        [first, _, _, ..] if ctx.catalog(first).is_some() => first.clone(),
        _ => catalog,
    };
    let listed = ctx
        .catalog(&catalog)
        .and_then(|c| c.schema(&found.schema))
        .is_some_and(|s| s.table_names().contains(&found.name));
    if listed {
        return Ok(None);
    }
    let rows = found
        .provider
        .schema()
        .fields()
        .iter()
        .map(|f| {
            vec![
                catalog.clone(),
                found.schema.clone(),
                found.name.clone(),
                f.name().clone(),
                crate::datafusion::information_schema::plain_type(f.data_type()).to_string(),
                match f.is_nullable() {
                    true => "YES",
                    false => "NO",
                }
                .to_string(),
            ]
        })
        .collect();
    string_rows(
        ctx,
        &[
            "table_catalog",
            "table_schema",
            "table_name",
            "column_name",
            "data_type",
            "is_nullable",
        ],
        rows,
    )
    .map(Some)
}

/// An Iceberg table found by its SQL name.
pub(super) struct ShownTable {
    /// `catalog.schema.table`, for messages and Spark's "does not have property" row.
    pub display: String,
    /// The DataFusion schema holding it (an Iceberg namespace: `ns`, `a.b`).
    pub schema: String,
    /// The table's name in that schema.
    pub name: String,
    /// The table as loaded for this statement.
    pub table: Table,
}

/// The table `parts` (a dotted name, as the cursor read it) names, resolved as a query's
/// table name (`t`, `schema.t`, `catalog.schema.t`; more parts: a dotted namespace);
/// `None` when the table is not an Iceberg table.
///
/// Errors: as [`find_provider`].
pub(super) async fn find_table(
    ctx: &SessionContext,
    parts: &[String],
) -> Result<Option<ShownTable>> {
    let found = find_provider(ctx, parts).await?;
    Ok(found
        .provider
        .downcast_ref::<IcebergTableProvider>()
        .map(|p| ShownTable {
            display: found.display,
            schema: found.schema,
            name: found.name,
            table: p.table().clone(),
        }))
}

/// Any table found by its SQL name, as DataFusion's provider of it.
pub(super) struct FoundProvider {
    /// `catalog.schema.table`.
    pub display: String,
    /// The DataFusion schema holding it.
    pub schema: String,
    /// The table's name in that schema.
    pub name: String,
    /// The provider a query of the name reads (an [`IcebergTableProvider`] for Iceberg
    /// tables, at the snapshot a `"t@ref"` name pins).
    pub provider: Arc<dyn TableProvider>,
}

/// The table `parts` names, resolved as a query's table name (see [`find_table`]),
/// whatever kind of table it is.
///
/// Errors: [`ErrorKind::NotFound`] "table 'catalog.schema.table' not found" (the CLI
/// then says which part is unknown); DataFusion's when the table does not load;
/// [`ErrorKind::InvalidArgument`] for an empty name.
pub(super) async fn find_provider(ctx: &SessionContext, parts: &[String]) -> Result<FoundProvider> {
    let reference = match parts {
        [table] => TableReference::bare(table.as_str()),
        [schema, table] => TableReference::partial(schema.as_str(), table.as_str()),
        [catalog, rest @ .., table] if ctx.catalog(catalog).is_some() => {
            TableReference::full(catalog.as_str(), rest.join("."), table.as_str())
        }
        [schema @ .., table] => TableReference::partial(schema.join("."), table.as_str()),
        [] => return Err(Error::invalid_argument("a table name is missing")),
    };
    let (catalog, schema) = defaults(ctx);
    let resolved = reference.clone().resolve(&catalog, &schema);
    let display = resolved.to_string();
    let provider = match ctx.table_provider(reference).await {
        Ok(provider) => provider,
        Err(e) => {
            let listed = ctx
                .catalog(&resolved.catalog)
                .and_then(|c| c.schema(&resolved.schema))
                .is_some_and(|s| s.table_exist(&resolved.table));
            return Err(if listed {
                e.into()
            } else {
                Error::not_found(format!("table '{display}' not found"))
            });
        }
    };
    Ok(FoundProvider {
        display,
        schema: resolved.schema.to_string(),
        name: resolved.table.to_string(),
        provider,
    })
}

/// A result of string columns named `names`, one row per entry of `rows`.
pub(super) fn string_rows(
    ctx: &SessionContext,
    names: &[&str],
    rows: Vec<Vec<String>>,
) -> Result<DataFrame> {
    let schema = Arc::new(ArrowSchema::new(
        names
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, false))
            .collect::<Vec<_>>(),
    ));
    let columns: Vec<ArrayRef> = (0..names.len())
        .map(|i| {
            let values: Vec<&str> = rows
                .iter()
                .map(|r| r.get(i).map_or("", String::as_str))
                .collect();
            Arc::new(StringArray::from(values)) as ArrayRef
        })
        .collect();
    let batch = RecordBatch::try_new(schema, columns)
        .map_err(|e| Error::new(ErrorKind::DataFusion, "SHOW result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}
