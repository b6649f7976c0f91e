//! `USE [NAMESPACE|SCHEMA|DATABASE] [cat.]ns`: make `ns` the session's current namespace,
//! where unqualified table names resolve (Spark's `USE [NAMESPACE] [catalog.]ns`, Trino's
//! `USE [catalog.]schema`; DataFusion 55 does not run `USE`). It sets
//! `datafusion.catalog.default_schema` (and `default_catalog` for `cat.ns`), so
//! `CREATE TABLE t`, `SELECT * FROM t` and the other statements read `t` as `ns.t` after
//! it, as `SET datafusion.catalog.default_schema = 'ns'` would.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::resolve::message_name;
use super::tokens::Cursor;
use super::{defaults, empty, IcebergTarget};
use crate::catalog::Namespace;
use crate::error::{Error, Result};

/// Run `c`'s statement if it is `USE …` (see the module docs); `None` otherwise.
///
/// Errors: [`crate::ErrorKind::NotFound`] naming the namespace and the catalog's schemas
/// when the namespace (or catalog) does not exist;
/// [`crate::ErrorKind::InvalidArgument`] for text after the name.
pub(super) async fn use_namespace(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    if !c.eat_keyword("USE") {
        return Ok(None);
    }
    let _ = c.eat_keyword("NAMESPACE") || c.eat_keyword("SCHEMA") || c.eat_keyword("DATABASE");
    // a statement icefloe cannot read is DataFusion's to report
    let Ok(parts) = c.object_name() else {
        return Ok(None);
    };
    let what = format!("USE {}", message_name(parts.iter().map(String::as_str)));
    c.expect_end().map_err(|e| e.context(&what))?;
    let (default_catalog, _) = defaults(ctx);
    let (catalog_name, schema_parts) = match parts.as_slice() {
        [cat, rest @ ..] if !rest.is_empty() && ctx.catalog(cat).is_some() => (cat.clone(), rest),
        all => (default_catalog, all),
    };
    let schema = schema_parts.join(".");
    let Some(catalog) = ctx.catalog(&catalog_name) else {
        return Err(Error::not_found(format!(
            "{what}: catalog '{catalog_name}' does not exist (catalogs: {})",
            ctx.catalog_names().join(", ")
        )));
    };
    if catalog.schema(&schema).is_none() {
        // a namespace another engine created since the catalog was listed
        let listed_now = match IcebergTarget::find(ctx, &catalog_name) {
            Some(target) => {
                let namespace = Namespace::parse(&schema);
                let exists = target.catalog().namespace_exists(&namespace).await?;
                if exists {
                    target.iceberg().add_namespace(&namespace)?;
                }
                exists
            }
            None => false,
        };
        if !listed_now {
            let mut schemas = catalog.schema_names();
            schemas.retain(|s| s != "information_schema");
            return Err(Error::not_found(format!(
                "{what}: namespace '{schema}' does not exist in catalog '{catalog_name}' \
                 (schemas: {}; CREATE SCHEMA {} creates it)",
                schemas.join(", "),
                message_name(schema_parts.iter().map(String::as_str))
            )));
        }
    }
    {
        let shared = ctx.state_ref();
        let mut state = shared.write();
        let options = &mut state.config_mut().options_mut().catalog;
        options.default_catalog = catalog_name;
        options.default_schema = schema;
    }
    empty(ctx).map(Some)
}
