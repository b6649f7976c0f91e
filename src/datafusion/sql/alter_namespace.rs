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
//! Also Spark's `COMMENT ON NAMESPACE|DATABASE|SCHEMA ns IS '…' | NULL`
//! ([`comment_on_namespace`]), a change of the `comment` property.
//!
//! A filesystem catalog keeps no namespace properties: refused, naming it. A schema of
//! the session that is no Iceberg namespace (the CLI's `public`) is refused, naming it.

use std::collections::HashMap;

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::property_lists::check_namespace_keys;
use super::resolve::message_namespace;
use super::tokens::Cursor;
use super::{defaults, empty, resolve_namespace};
use crate::error::{Error, Result};

/// What follows `ALTER NAMESPACE|SCHEMA|DATABASE` (`word`, echoed in messages); `None`
/// when the name cannot be read (DataFusion then reports the statement).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for bad syntax, a missing key without
/// `IF EXISTS` (a key the namespace does not store, see
/// [`Catalog::stored_namespace_properties`](crate::catalog::Catalog::stored_namespace_properties))
/// and a schema that is no namespace of an Iceberg catalog ([`not_a_namespace`]);
/// [`crate::ErrorKind::NotFound`] for a namespace that does not exist; the catalog's
/// errors ([`crate::ErrorKind::Unsupported`] where it keeps no properties, `exists`
/// reserved on a SQL catalog).
pub(super) async fn alter_namespace(
    ctx: &SessionContext,
    word: &str,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Ok(parts) = c.object_name() else {
        return Ok(None);
    };
    let Some((target, catalog, namespace)) = resolve_namespace(ctx, &parts) else {
        return Err(not_a_namespace(ctx, &format!("ALTER {word}"), &parts));
    };
    let what = format!("ALTER {word} {}", message_namespace(&catalog, &parts));
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
            .stored_namespace_properties(&namespace)
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

/// Spark's `COMMENT ON NAMESPACE|DATABASE|SCHEMA ns IS 'text' | NULL` (`CommentOnNamespace`,
/// a change of the reserved `comment` property), after those keywords (`word` as
/// written, echoed in messages): sets the namespace's `comment` property (what `DESCRIBE
/// NAMESPACE` shows as `Comment`), or removes it for `NULL` (nothing to remove is no
/// error), as `COMMENT ON TABLE` does a table's. `None` when the name cannot be read.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for bad syntax and a schema that is no
/// namespace of an Iceberg catalog ([`not_a_namespace`]); [`crate::ErrorKind::NotFound`]
/// for a namespace that does not exist; the catalog's errors
/// ([`crate::ErrorKind::Unsupported`] where it keeps no namespace properties: the
/// filesystem catalog).
pub(super) async fn comment_on_namespace(
    ctx: &SessionContext,
    word: &str,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Ok(parts) = c.object_name() else {
        return Ok(None);
    };
    let statement = format!("COMMENT ON {word}");
    let Some((target, catalog, namespace)) = resolve_namespace(ctx, &parts) else {
        return Err(not_a_namespace(ctx, &statement, &parts));
    };
    let what = format!("{statement} {}", message_namespace(&catalog, &parts));
    let parse = |c: &mut Cursor<'_>| -> Result<Option<String>> {
        c.expect_keyword("IS")?;
        let comment = match c.eat_keyword("NULL") {
            true => None,
            false => Some(c.string()?),
        };
        c.expect_end()?;
        Ok(comment)
    };
    let comment = parse(&mut c).map_err(|e| e.context(&what))?;
    let (updates, removals) = match comment {
        Some(text) => (HashMap::from([("comment".to_string(), text)]), vec![]),
        None => (HashMap::new(), vec!["comment".to_string()]),
    };
    target
        .catalog()
        .update_namespace_properties(&namespace, &updates, &removals)
        .await
        .map_err(|e| e.context(&what))?;
    empty(ctx).map(Some)
}

/// The error for `statement` (`ALTER NAMESPACE`, `COMMENT ON SCHEMA`, `SHOW NAMESPACES
/// IN`) naming `parts`, a schema that is no namespace of an Iceberg catalog (the CLI's
/// in-memory `public`, a schema of a DataFusion catalog): such a schema keeps no
/// properties and holds no namespaces (sqlparser's `ParserError` about the statement was
/// reported instead).
pub(super) fn not_a_namespace(ctx: &SessionContext, statement: &str, parts: &[String]) -> Error {
    let (default_catalog, _) = defaults(ctx);
    let (catalog, schema) = match parts {
        [cat, rest @ ..] if !rest.is_empty() && ctx.catalog(cat).is_some() => {
            (cat.clone(), rest.join("."))
        }
        all => (default_catalog, all.join(".")),
    };
    Error::invalid_argument(format!(
        "{statement} {catalog}.{schema}: '{schema}' is not a namespace of an Iceberg catalog \
         (a schema of this session only)"
    ))
}

/// A namespace location as it is stored (the `location` property of `CREATE SCHEMA …
/// LOCATION '…'` and `ALTER NAMESPACE … SET LOCATION '…'`), as Spark 3.5's
/// `DataSourceV2Strategy` stores it: a blank location is refused (Spark's
/// `INVALID_EMPTY_LOCATION`), and a local path, relative or not, becomes the `file:` URL
/// of its absolute path ([`crate::io::normalize_location`], as a table's `LOCATION`;
/// Spark's `makeQualifiedDBObjectPath`): another engine builds its tables' locations from
/// it, and a relative path would mean a different directory to each. A URL of another
/// scheme (`s3://…`) is kept, without a trailing `/`. The tables of the namespace are
/// created under it, so it is checked as a table location is
/// ([`crate::io::check_table_location`]: no `#` or `?` in an object store location, no
/// `az://`), here rather than at the first `CREATE TABLE`.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for a blank location, a `file:` URL
/// of another host, or a location other engines would read elsewhere;
/// [`crate::ErrorKind::Io`] when the current directory cannot be read.
pub(super) fn namespace_location(location: &str) -> Result<String> {
    if location.trim().is_empty() {
        return Err(Error::invalid_argument(format!(
            "LOCATION '{location}': the location name cannot be empty (as Spark's \
             INVALID_EMPTY_LOCATION)"
        )));
    }
    let normalized = crate::io::normalize_location(location)?;
    crate::io::check_table_location("namespace LOCATION", &normalized)?;
    Ok(normalized)
}
