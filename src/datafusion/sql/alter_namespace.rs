//! Spark's `ALTER NAMESPACE|SCHEMA|DATABASE ns …` on a namespace of an Iceberg catalog,
//! through [`Catalog::update_namespace_properties`](crate::catalog::Catalog::update_namespace_properties)
//! (Iceberg's `SparkCatalog.alterNamespace`: set and remove properties):
//!
//! - `SET DBPROPERTIES|PROPERTIES ('k' = 'v', …)`: sets them (Spark's property list, no
//!   reserved `location` or `owner`: module `property_lists`);
//! - `UNSET DBPROPERTIES|PROPERTIES [IF EXISTS] ('k', …)` (Spark 4): removes them; a key
//!   that is not set is an error naming it unless `IF EXISTS` is given, as `ALTER TABLE …
//!   UNSET TBLPROPERTIES` does, and then nothing changes;
//! - `SET LOCATION '…'`: sets the `location` property (what `DESCRIBE NAMESPACE` shows;
//!   a SQL catalog still puts new tables under its warehouse, as Java's `JdbcCatalog`),
//!   made absolute first, as `CREATE SCHEMA … LOCATION` makes it ([`namespace_location`]).
//!
//! A filesystem catalog keeps no namespace properties: refused, naming it.

use std::collections::HashMap;

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::property_lists::check_namespace_keys;
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
            updates.insert("location".to_string(), namespace_location(&c.string()?)?);
        } else if c.eat_keyword("SET") {
            if !c.eat_keyword("DBPROPERTIES") {
                c.expect_keyword("PROPERTIES")?;
            }
            let list = c.properties()?;
            check_namespace_keys(list.iter().map(|(k, _)| k.as_str()))?;
            updates.extend(list);
        } else if c.eat_keyword("UNSET") {
            if !c.eat_keyword("DBPROPERTIES") {
                c.expect_keyword("PROPERTIES")?;
            }
            if_exists = c.eat_keywords(&["IF", "EXISTS"]);
            removals = c.property_keys()?;
            check_namespace_keys(removals.iter().map(String::as_str))?;
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

/// A namespace location as it is stored (the `location` property of `CREATE SCHEMA …
/// LOCATION '…'` and `ALTER NAMESPACE … SET LOCATION '…'`), as Spark 3.5's
/// `DataSourceV2Strategy` stores it: a blank location is refused (Spark's
/// `INVALID_EMPTY_LOCATION`), and a local path, relative or not, becomes the `file:` URL
/// of its absolute path ([`crate::io::normalize_location`], as a table's `LOCATION`;
/// Spark's `makeQualifiedDBObjectPath`): another engine builds its tables' locations from
/// it, and a relative path would mean a different directory to each. A URL of another
/// scheme (`s3://…`) is kept, without a trailing `/`.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for a blank location or a `file:` URL
/// of another host; [`crate::ErrorKind::Io`] when the current directory cannot be read.
pub(super) fn namespace_location(location: &str) -> Result<String> {
    if location.trim().is_empty() {
        return Err(Error::invalid_argument(format!(
            "LOCATION '{location}': the location name cannot be empty (as Spark's \
             INVALID_EMPTY_LOCATION)"
        )));
    }
    crate::io::normalize_location(location)
}
