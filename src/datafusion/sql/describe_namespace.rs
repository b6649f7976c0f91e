//! Spark's `DESCRIBE NAMESPACE|SCHEMA|DATABASE [EXTENDED] ns`, in Spark 3.5's shape
//! (`DescribeNamespaceExec`).
//!
//! Columns `info_name`, `info_value`; rows `Catalog Name` (the session's name of the
//! catalog), `Namespace Name` (the namespace's last level, as Spark shows it), then those
//! of the reserved properties `comment`, `location` and `owner` the namespace has,
//! capitalized (`Comment`, `Location`, `Owner`). The properties are the catalog's
//! [`load_namespace_metadata`](crate::catalog::Catalog::load_namespace_metadata): a SQL
//! catalog's always hold `location` (Java's `JdbcCatalog` gives the default
//! `<warehouse>/<levels…>` when none was set), a filesystem catalog's only `location`.
//! With `EXTENDED`, a last row `Properties`: the other properties sorted by key as
//! `((k1,v1), (k2,v2))`, empty when there are none; a secret's value (a key
//! [`crate::io::is_secret`] names) shows as `***`.
//!
//! A schema of a catalog that is not an Iceberg catalog (the CLI's `public`) has the two
//! name rows only.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::resolve::message_namespace;
use super::show::string_rows;
use super::show_properties::shown_value;
use super::tokens::Cursor;
use super::{defaults, resolve_namespace};
use crate::error::{Error, Result};

/// Spark's reserved namespace properties, each shown in a row of its own
/// (`CatalogV2Util.NAMESPACE_RESERVED_PROPERTIES`).
const RESERVED: [&str; 3] = ["comment", "location", "owner"];

/// What follows `DESCRIBE NAMESPACE|SCHEMA|DATABASE`.
///
/// Errors: [`crate::ErrorKind::NotFound`] naming a namespace (or catalog) that does not
/// exist; [`crate::ErrorKind::InvalidArgument`] for text after the name; the catalog's
/// errors.
pub(super) async fn describe_namespace(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<DataFrame> {
    let extended = c.eat_keyword("EXTENDED");
    let parts = c.object_name()?;
    c.expect_end()?;
    let names = |catalog: &str, last: &str| {
        vec![
            vec!["Catalog Name".to_string(), catalog.to_string()],
            vec!["Namespace Name".to_string(), last.to_string()],
        ]
    };
    let Some((target, catalog, namespace)) = resolve_namespace(ctx, &parts) else {
        // a schema of a DataFusion catalog: its names only
        let (default_catalog, _) = defaults(ctx);
        let (catalog, schema) = match parts.as_slice() {
            [cat, schema] if ctx.catalog(cat).is_some() => (cat.clone(), schema.clone()),
            all => (default_catalog, all.join(".")),
        };
        return match ctx.catalog(&catalog).and_then(|c| c.schema(&schema)) {
            Some(_) => string_rows(ctx, &["info_name", "info_value"], names(&catalog, &schema)),
            None => Err(Error::not_found(format!(
                "namespace '{catalog}.{schema}' does not exist"
            ))),
        };
    };
    let properties = target
        .catalog()
        .load_namespace_metadata(&namespace)
        .await
        .map_err(|e| {
            e.context(format!(
                "DESCRIBE NAMESPACE {}",
                message_namespace(&catalog, &parts)
            ))
        })?;
    let last = namespace.levels().last().cloned().unwrap_or_default();
    let mut rows = names(&catalog, &last);
    for key in RESERVED {
        if let Some(value) = properties.get(key) {
            let mut name = key.to_string();
            name[..1].make_ascii_uppercase();
            rows.push(vec![name, value.clone()]);
        }
    }
    if extended {
        let mut others: Vec<(&String, &String)> = properties
            .iter()
            .filter(|(k, _)| !RESERVED.contains(&k.as_str()))
            .collect();
        others.sort();
        let listed = if others.is_empty() {
            String::new()
        } else {
            let pairs: Vec<String> = others
                .iter()
                .map(|(k, v)| format!("({k},{})", shown_value(k, v)))
                .collect();
            format!("({})", pairs.join(", "))
        };
        rows.push(vec!["Properties".to_string(), listed]);
    }
    string_rows(ctx, &["info_name", "info_value"], rows)
}
