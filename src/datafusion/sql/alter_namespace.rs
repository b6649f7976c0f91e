//! Spark's `ALTER NAMESPACE|SCHEMA|DATABASE ns …` on a namespace of an Iceberg catalog,
//! through [`Catalog::update_namespace_properties`](crate::catalog::Catalog::update_namespace_properties)
//! (Iceberg's `SparkCatalog.alterNamespace`: set and remove properties):
//!
//! - `SET DBPROPERTIES|PROPERTIES ('k' = 'v', …)`: sets them;
//! - `UNSET DBPROPERTIES|PROPERTIES [IF EXISTS] ('k', …)` (Spark 4): removes them; a key
//!   that is not set is an error naming it unless `IF EXISTS` is given, as `ALTER TABLE …
//!   UNSET TBLPROPERTIES` does, and then nothing changes;
//! - `SET LOCATION '…'`: sets the `location` property (what `DESCRIBE NAMESPACE` shows;
//!   a SQL catalog still puts new tables under its warehouse, as Java's `JdbcCatalog`).
//!
//! A filesystem catalog keeps no namespace properties: refused, naming it.

use std::collections::HashMap;

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::tokens::Cursor;
use super::{empty, resolve_namespace};
use crate::error::{Error, Result};

/// What follows `ALTER NAMESPACE|SCHEMA|DATABASE`; `None` when the name is not a namespace
/// of an Iceberg catalog (DataFusion then reports the statement).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for bad syntax or a missing key without
/// `IF EXISTS`; [`crate::ErrorKind::NotFound`] for a namespace that does not exist; the
/// catalog's errors ([`crate::ErrorKind::Unsupported`] where it keeps no properties).
pub(super) async fn alter_namespace(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Ok(parts) = c.object_name() else {
        return Ok(None);
    };
    let Some((target, catalog, namespace)) = resolve_namespace(ctx, &parts) else {
        return Ok(None);
    };
    let what = format!("ALTER NAMESPACE {catalog}.{namespace}");
    let parse = |c: &mut Cursor<'_>| -> Result<(HashMap<String, String>, Vec<String>, bool)> {
        let mut updates = HashMap::new();
        let mut removals = vec![];
        let mut if_exists = false;
        if c.eat_keywords(&["SET", "LOCATION"]) {
            updates.insert("location".to_string(), c.string()?);
        } else if c.eat_keyword("SET") {
            if !c.eat_keyword("DBPROPERTIES") {
                c.expect_keyword("PROPERTIES")?;
            }
            updates.extend(c.properties()?);
        } else if c.eat_keyword("UNSET") {
            if !c.eat_keyword("DBPROPERTIES") {
                c.expect_keyword("PROPERTIES")?;
            }
            if_exists = c.eat_keywords(&["IF", "EXISTS"]);
            c.expect(&Token::LParen)?;
            loop {
                removals.push(c.string()?);
                if c.eat(&Token::RParen) {
                    break;
                }
                c.expect(&Token::Comma)?;
            }
        } else {
            return Err(c.expected("SET DBPROPERTIES, UNSET DBPROPERTIES or SET LOCATION"));
        }
        c.expect_end()?;
        Ok((updates, removals, if_exists))
    };
    let (updates, removals, if_exists) = parse(&mut c).map_err(|e| e.context(&what))?;
    let catalog = target.catalog();
    if !removals.is_empty() && !if_exists {
        let current = catalog
            .load_namespace_metadata(&namespace)
            .await
            .map_err(|e| e.context(&what))?;
        let missing: Vec<&str> = removals
            .iter()
            .filter(|k| !current.contains_key(k.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(Error::invalid_argument(format!(
                "{what} UNSET: the namespace has no property {} (UNSET … IF EXISTS ignores \
                 missing ones)",
                missing.join(", ")
            )));
        }
    }
    catalog
        .update_namespace_properties(&namespace, &updates, &removals)
        .await
        .map_err(|e| e.context(&what))?;
    empty(ctx).map(Some)
}
