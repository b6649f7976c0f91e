//! Where a `CREATE TABLE` of the CLI goes.
//!
//! With an Iceberg catalog attached (`--catalog`), the default schema `public` is the
//! CLI's in-memory schema (it holds the `--table` and `CREATE EXTERNAL TABLE` tables), not
//! a namespace: DataFusion would create a `CREATE TABLE t` there as an in-memory table,
//! lost at exit, with nothing said. A Spark or Trino user expects an unqualified name to
//! be a table of the catalog's current namespace (Spark's `USE ns`, which icefloe runs),
//! and a table created in an Iceberg catalog to be kept. So a `CREATE [OR REPLACE] TABLE`
//! or `REPLACE TABLE` (and CTAS) into a schema of an Iceberg catalog that is no namespace
//! is refused, naming how to qualify the name or which `USE` makes a namespace current.
//! Without an Iceberg catalog, the session's tables are DataFusion's in-memory ones, as in
//! `datafusion-cli`.

use std::any::Any;

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::Parser;
use icefloe::datafusion::IcebergCatalogProvider;

use crate::statements::session_dialect;
use crate::CliError;

/// The table a `CREATE TABLE` creates, resolved against the session's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedTable {
    pub catalog: String,
    pub schema: String,
    pub table: String,
}

/// The table `statement` creates when it is `CREATE [OR REPLACE] TABLE [IF NOT EXISTS]
/// name …` or `REPLACE TABLE name …` (not `EXTERNAL`, `TEMPORARY` or a view), its name
/// read as DataFusion reads it (unquoted parts lowercased when
/// `datafusion.sql_parser.enable_ident_normalization` is on); `None` for any other
/// statement, or one whose beginning does not parse.
pub fn created_table(ctx: &SessionContext, statement: &str) -> Option<CreatedTable> {
    let dialect = session_dialect(ctx);
    let mut parser = Parser::new(dialect.as_ref()).try_with_sql(statement).ok()?;
    if parser.parse_keyword(Keyword::CREATE) {
        let _ = parser.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
    } else if !parser.parse_keyword(Keyword::REPLACE) {
        return None;
    }
    if !parser.parse_keyword(Keyword::TABLE) {
        return None;
    }
    let _ = parser.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = parser.parse_object_name(false).ok()?;
    let state = ctx.state();
    let options = state.config_options();
    let normalize = options.sql_parser.enable_ident_normalization;
    let parts = name
        .0
        .iter()
        .map(|part| {
            let ident = part.as_ident()?;
            Some(match ident.quote_style {
                None if normalize => ident.value.to_lowercase(),
                _ => ident.value.clone(),
            })
        })
        .collect::<Option<Vec<String>>>()?;
    let (catalog, schema) = (
        options.catalog.default_catalog.clone(),
        options.catalog.default_schema.clone(),
    );
    let (catalog, schema, table) = match parts.as_slice() {
        [t] => (catalog, schema, t.clone()),
        [s, t] => (catalog, s.clone(), t.clone()),
        [c, s, t] => (c.clone(), s.clone(), t.clone()),
        _ => return None,
    };
    Some(CreatedTable {
        catalog,
        schema,
        table,
    })
}

/// Refuse to create `created` when its catalog is an Iceberg catalog and its schema is
/// not one of the catalog's namespaces (the in-memory `public`): see the module docs.
///
/// Errors: the refusal, naming the table, the schema and how to name a namespace.
pub fn check_kept(ctx: &SessionContext, created: &CreatedTable) -> Result<(), CliError> {
    let Some(catalog) = ctx.catalog(&created.catalog) else {
        return Ok(());
    };
    let any: &dyn Any = catalog.as_ref();
    let Some(iceberg) = any.downcast_ref::<IcebergCatalogProvider>() else {
        return Ok(());
    };
    if !iceberg.is_other_schema(&created.schema) {
        return Ok(());
    }
    let mut namespaces = catalog.schema_names();
    namespaces.retain(|n| !iceberg.is_other_schema(n) && n != "information_schema");
    let CreatedTable {
        catalog: catalog_name,
        schema,
        table,
    } = created;
    let (example, listed) = match namespaces.first() {
        // as it must be written to name it (`"MixNs"`: unquoted it is `mixns`)
        Some(first) => (
            icefloe::datafusion::sql::sql_identifier(first),
            format!("namespaces: {}", namespaces.join(", ")),
        ),
        None => (
            "ns".to_string(),
            "the catalog has no namespaces yet: CREATE SCHEMA ns makes one".to_string(),
        ),
    };
    let shown = icefloe::datafusion::sql::sql_identifier(table);
    Err(CliError::new(format!(
        "CREATE TABLE {table}: '{schema}' is the CLI's in-memory schema, not a namespace of \
         Iceberg catalog '{catalog_name}', so the table would be lost at exit; name a \
         namespace (CREATE TABLE {example}.{shown} …) or make one current (USE {example}) \
         ({listed})"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_name_a_create_table_creates() {
        let ctx = SessionContext::new();
        let created = |sql: &str| created_table(&ctx, sql).map(|t| (t.schema, t.table));
        let public = |t: &str| Some(("public".to_string(), t.to_string()));
        assert_eq!(created("CREATE TABLE T (id INT)"), public("t"));
        assert_eq!(
            created("create or replace table \"T\" AS SELECT 1"),
            public("T")
        );
        assert_eq!(created("REPLACE TABLE t (id INT)"), public("t"));
        assert_eq!(
            created("CREATE TABLE IF NOT EXISTS \"f.parquet\" (id INT)"),
            public("f.parquet")
        );
        assert_eq!(
            created("CREATE TABLE ns.t (id INT) PARTITIONED BY (days(ts))"),
            Some(("ns".to_string(), "t".to_string()))
        );
        for other in [
            "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION 'f.parquet'",
            "CREATE VIEW v AS SELECT 1",
            "CREATE TEMPORARY TABLE t (id INT)",
            "SELECT 1",
            "CREATE TABLE a.b.c.d (id INT)",
        ] {
            assert_eq!(created(other), None, "{other}");
        }
    }
}
