//! Spark's `SHOW NAMESPACES|SCHEMAS|DATABASES [FROM|IN [cat.]ns] [[LIKE] 'pattern']` on
//! an Iceberg catalog, as Spark 3.5's `ShowNamespacesExec` answers it (DataFusion 55 has
//! no such statement).
//!
//! - One column, `namespace`; one row per child namespace of the current catalog (the
//!   session's default catalog: top-level namespaces, also after `USE ns`, as in Spark)
//!   or of `ns` (its namespaces one level down), read from the catalog anew
//!   ([`Catalog::list_namespaces`](crate::catalog::Catalog::list_namespaces)), sorted.
//! - A row names the whole namespace, its levels joined by `.`, a level other than
//!   letters, digits and `_` (or all digits) in backquotes (Spark's `quoted`, which
//!   `SHOW NAMESPACES IN a` shows as `a.b`, `` a.`my ns` ``).
//! - `IN cat` of a catalog registered in the session lists that catalog's top-level
//!   namespaces (a catalog name wins over a namespace of the same name, as in Spark's
//!   `CatalogAndNamespace`); `IN cat.ns` that catalog's `ns`.
//! - The pattern ([`ShowPattern`]) is matched against the row's text (the quoted name).
//!
//! A current catalog (or `cat`) that is not an Iceberg catalog is DataFusion's to answer.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::alter_namespace::not_a_namespace;
use super::describe_table::quote_if_needed;
use super::show::string_rows;
use super::show_patterns::ShowPattern;
use super::tokens::{string_literal, Cursor};
use super::{defaults, resolve_namespace, IcebergTarget};
use crate::catalog::{namespace_not_found, Namespace};
use crate::error::Result;

/// What follows `SHOW NAMESPACES|SCHEMAS|DATABASES` (`word`, as written, for messages);
/// `None` when the catalog is not an Iceberg catalog.
///
/// Errors: [`crate::ErrorKind::NotFound`] naming a namespace that does not exist;
/// [`crate::ErrorKind::InvalidArgument`] for a schema of the catalog that is no
/// namespace (the CLI's `public`) and for text after the pattern; the catalog's,
/// listing its namespaces.
pub(super) async fn show_namespaces(
    ctx: &SessionContext,
    word: &str,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Some(named) = from_or_in(&mut c) else {
        return Ok(None);
    };
    let (default_catalog, _) = defaults(ctx);
    let (target, catalog, parent) = match named.as_deref() {
        None => (
            IcebergTarget::find(ctx, &default_catalog),
            default_catalog,
            Namespace::root(),
        ),
        Some([cat]) if ctx.catalog(cat).is_some() => (
            IcebergTarget::find(ctx, cat),
            cat.clone(),
            Namespace::root(),
        ),
        Some(parts) => match resolve_namespace(ctx, parts) {
            Some((target, catalog, namespace)) => (Some(target), catalog, namespace),
            None => {
                let catalog = match parts {
                    [cat, _, ..] if ctx.catalog(cat).is_some() => cat.clone(),
                    _ => default_catalog,
                };
                if IcebergTarget::find(ctx, &catalog).is_none() {
                    return Ok(None);
                }
                return Err(not_a_namespace(ctx, &format!("SHOW {word} IN"), parts));
            }
        },
    };
    let Some(target) = target else {
        return Ok(None);
    };
    let what = match parent.is_root() {
        true => format!("SHOW {word} IN {catalog}"),
        false => format!("SHOW {word} IN {catalog}.{parent}"),
    };
    let pattern = like_pattern(&mut c).map_err(|e| e.context(&what))?;
    c.expect_end().map_err(|e| e.context(&what))?;
    let iceberg = target.catalog();
    if !parent.is_root() && !iceberg.namespace_exists(&parent).await? {
        return Err(namespace_not_found(&catalog, &parent).context(&what));
    }
    let depth = parent.levels().len() + 1;
    let mut rows: Vec<String> = iceberg
        .list_namespaces()
        .await
        .map_err(|e| e.context(&what))?
        .into_iter()
        .filter(|n| n.levels().len() == depth && n.levels().starts_with(parent.levels()))
        .map(|n| quoted(&n))
        .filter(|shown| pattern.as_ref().is_none_or(|p| p.matches(shown)))
        .collect();
    rows.sort();
    rows.dedup();
    string_rows(
        ctx,
        &["namespace"],
        rows.into_iter().map(|r| vec![r]).collect(),
    )
    .map(Some)
}

/// Spark's `quoted` of a namespace: its levels, each quoted if needed, joined by `.`.
fn quoted(namespace: &Namespace) -> String {
    namespace
        .levels()
        .iter()
        .map(|l| quote_if_needed(l))
        .collect::<Vec<_>>()
        .join(".")
}

/// The optional `FROM|IN [cat.]ns` of `SHOW NAMESPACES|TABLES` at `c`: `Some(None)`
/// without one, `Some(Some(parts))` with one, `None` when the keyword is followed by no
/// name (a form left to DataFusion, which reports it).
pub(super) fn from_or_in(c: &mut Cursor<'_>) -> Option<Option<Vec<String>>> {
    if c.eat_keyword("FROM") || c.eat_keyword("IN") {
        c.object_name().ok().map(Some)
    } else {
        Some(None)
    }
}

/// Spark's optional `[LIKE] 'pattern'` of `SHOW NAMESPACES|TABLES` at `c`.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] for `LIKE` without a quoted string.
pub(super) fn like_pattern(c: &mut Cursor<'_>) -> Result<Option<ShowPattern>> {
    let like = c.eat_keyword("LIKE");
    let string = c.peek().and_then(|t| string_literal(&t.token)).is_some();
    if like || string {
        return Ok(Some(ShowPattern::new(&c.string()?)));
    }
    Ok(None)
}
