//! The session's lists of namespace and table names kept in agreement with the catalog
//! for the names a statement uses.
//!
//! Each Iceberg catalog of the session lists its namespaces (DataFusion schemas) and
//! their tables when the session starts and at each `SHOW TABLES`
//! ([`IcebergCatalogProvider::refresh`]). DataFusion resolves a schema, and asks whether
//! a table exists (`CREATE VIEW`), from these lists without waiting on the catalog, so
//! what another process did since was invisible until the next `SHOW TABLES`: a
//! namespace it created again after a `SHOW TABLES` found it missing stayed "not found"
//! for every query, and a table it dropped kept its name taken for `CREATE VIEW`. Here
//! a statement's schemas missing from the list are looked up in the catalog before the
//! statement is planned ([`recheck_namespaces`]), and the name a `CREATE VIEW` creates
//! is looked up before it is registered ([`recheck_table_name`]), as a new session
//! would list them. (A table dropped since is unlisted when loading it finds it gone, in
//! `IcebergSchemaProvider`.)

use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;

use super::resolve::{defaults, IcebergTarget};
use crate::datafusion::catalog::IcebergCatalogProvider;

/// List each schema that `statement` names (resolved in the session's default catalog
/// and schema) in an Iceberg catalog of the session that does not list it but has it
/// now (see the module docs). A statement DataFusion does not parse is left alone (its
/// own error names what is wrong).
///
/// A catalog failing to answer leaves its list as it is: the statement then fails as it
/// would have, naming the schema it does not find.
pub(super) async fn recheck_namespaces(ctx: &SessionContext, statement: &str) {
    let state = ctx.state();
    let dialect = state.config_options().sql_parser.dialect;
    let Ok(parsed) = state.sql_to_statement(statement, &dialect) else {
        return;
    };
    let Ok(references) = state.resolve_table_references(&parsed) else {
        return;
    };
    let (default_catalog, default_schema) = defaults(ctx);
    let mut checked: Vec<(String, String)> = Vec::new();
    for reference in references {
        let resolved = reference.clone().resolve(&default_catalog, &default_schema);
        let key = (resolved.catalog.to_string(), resolved.schema.to_string());
        // found as it is (`information_schema` too, which no catalog lists): no
        // catalog is asked, so a statement whose schemas are listed costs nothing more
        if checked.contains(&key) || state.schema_for_ref(reference).is_ok() {
            continue;
        }
        if let Some(target) = IcebergTarget::find(ctx, &key.0) {
            // not answering: the statement fails as it would have (module docs)
            let _ = target.iceberg().recheck_namespace(&key.1).await;
        }
        checked.push(key);
    }
}

/// List or unlist table `name` (the name a `CREATE VIEW` creates, resolved in the
/// session's default catalog and schema) in its Iceberg namespace's list as the catalog
/// has it now (see the module docs). Names outside an Iceberg catalog's namespaces, and
/// a catalog failing to answer, leave the lists as they are.
pub(super) async fn recheck_table_name(ctx: &SessionContext, name: &TableReference) {
    let (default_catalog, default_schema) = defaults(ctx);
    let resolved = name.clone().resolve(&default_catalog, &default_schema);
    let Some(target) = IcebergTarget::find(ctx, &resolved.catalog) else {
        return;
    };
    let provider: &IcebergCatalogProvider = target.iceberg();
    if let Some(schema) = provider.namespace_schema(&resolved.schema) {
        // not answering: the list stays as it was (module docs)
        let _ = schema.recheck_table_name(&resolved.table).await;
    }
}
