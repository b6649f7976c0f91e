//! Resolving the names a statement gives (`[cat.][ns.]t`, `[cat.]ns`) to an Iceberg
//! catalog registered in the session: the rules are in the [module docs](super).

use std::any::Any;
use std::sync::Arc;

use datafusion::prelude::SessionContext;

use super::super::catalog::{schema_name, IcebergCatalogProvider, IcebergSchemaProvider};
use crate::catalog::{Catalog, Namespace, TableIdent};
use crate::error::Result;

/// An Iceberg catalog registered in the session, by its registered name.
#[derive(Clone)]
pub(super) struct IcebergTarget {
    pub(super) name: String,
    provider: Arc<IcebergCatalogProvider>,
}

impl IcebergTarget {
    /// The catalog named `name` in `ctx`, if it is an Iceberg catalog.
    pub(super) fn find(ctx: &SessionContext, name: &str) -> Option<Self> {
        let provider: Arc<dyn Any + Send + Sync> = ctx.catalog(name)?;
        Some(Self {
            name: name.to_string(),
            provider: provider.downcast::<IcebergCatalogProvider>().ok()?,
        })
    }

    pub(super) fn iceberg(&self) -> &IcebergCatalogProvider {
        &self.provider
    }

    pub(super) fn catalog(&self) -> &Arc<dyn Catalog> {
        self.provider.catalog()
    }

    /// The namespace behind DataFusion schema `schema` (the root namespace's schema
    /// when listed as such), or `None` when `schema` is not an Iceberg namespace.
    pub(super) fn namespace(&self, schema: &str) -> Result<Option<Namespace>> {
        let p = self.iceberg();
        if p.is_other_schema(schema) {
            return Ok(None);
        }
        Ok(Some(match p.namespace_schema(schema) {
            Some(s) => s.namespace().clone(),
            None => Namespace::parse(schema),
        }))
    }

    /// The schema provider listing `namespace`'s tables (registered if new).
    pub(super) fn schema(&self, namespace: &Namespace) -> Result<Arc<IcebergSchemaProvider>> {
        let p = self.iceberg();
        match p.namespace_schema(&schema_name(namespace)) {
            Some(s) => Ok(s),
            None => p.add_namespace(namespace),
        }
    }
}

/// A table name resolved to an Iceberg catalog.
pub(super) struct ResolvedTable {
    pub(super) target: IcebergTarget,
    pub(super) ident: TableIdent,
    /// The namespace's parts as the statement typed them (after the catalog's), for
    /// messages: `ns."a.b"` is namespace `ns.a.b`, named as typed. `None`: its levels.
    typed_namespace: Option<Vec<String>>,
}

impl ResolvedTable {
    /// Table `ident` of the catalog `target`, named by its namespace's levels.
    pub(super) fn new(target: IcebergTarget, ident: TableIdent) -> Self {
        Self {
            target,
            ident,
            typed_namespace: None,
        }
    }

    /// `cat.ns.t` as the statement's messages name it: the catalog, the namespace as
    /// typed (or its levels) and the table, each part shown by [`message_name`]
    /// (`default.ns.".."`, not `default.ns...`).
    pub(super) fn display(&self) -> String {
        let levels = self.ident.namespace.levels();
        let namespace = match &self.typed_namespace {
            // (the typed parts when they are the levels, grouped as typed)
            Some(parts) if parts.join(".") == levels.join(".") => parts.as_slice(),
            _ => levels,
        };
        let namespace = namespace.iter().map(String::as_str);
        message_name(
            std::iter::once(self.target.name.as_str())
                .chain(namespace)
                .chain(std::iter::once(self.ident.name.as_str())),
        )
    }

    /// The table's name as a SQL identifier quoted with `quote`, `"cat"."schema"."t"`.
    pub(super) fn sql_name(&self, quote: char) -> String {
        let escaped = format!("{quote}{quote}");
        [
            self.target.name.as_str(),
            &schema_name(&self.ident.namespace),
            &self.ident.name,
        ]
        .iter()
        .map(|p| format!("{quote}{}{quote}", p.replace(quote, &escaped)))
        .collect::<Vec<_>>()
        .join(".")
    }
}

/// The session's default catalog and schema.
pub(super) fn defaults(ctx: &SessionContext) -> (String, String) {
    let state = ctx.state();
    let o = &state.config_options().catalog;
    (o.default_catalog.clone(), o.default_schema.clone())
}

/// Whether the dotted name `parts` names a table of an Iceberg catalog of `ctx` that
/// loads.
///
/// Errors: a namespace name the catalog refuses.
pub(super) async fn iceberg_table_exists(ctx: &SessionContext, parts: &[String]) -> Result<bool> {
    Ok(match resolve_table(ctx, parts)? {
        Some(t) => t.target.catalog().load_table(&t.ident).await.is_ok(),
        None => false,
    })
}

/// Resolve a table name (see the module docs); `None` when it is not in an Iceberg
/// namespace.
pub(super) fn resolve_table(
    ctx: &SessionContext,
    parts: &[String],
) -> Result<Option<ResolvedTable>> {
    let (default_catalog, default_schema) = defaults(ctx);
    let Some((table, qualifier)) = parts.split_last() else {
        return Ok(None);
    };
    let (catalog, typed) = match qualifier {
        [] => (default_catalog, None),
        [schema] => (default_catalog, Some(std::slice::from_ref(schema))),
        [cat, rest @ ..] if ctx.catalog(cat).is_some() => (cat.clone(), Some(rest)),
        all => (default_catalog, Some(all)),
    };
    let schema = typed.map_or(default_schema, |parts| parts.join("."));
    let Some(target) = IcebergTarget::find(ctx, &catalog) else {
        return Ok(None);
    };
    Ok(target.namespace(&schema)?.map(|namespace| ResolvedTable {
        ident: TableIdent::new(namespace, table.clone()),
        target,
        typed_namespace: typed.map(<[String]>::to_vec),
    }))
}

/// The Iceberg catalog and namespace a schema name (`[cat.]ns`, a dotted namespace)
/// names: the target, the catalog's name and the namespace; `None` when the catalog is
/// not an Iceberg one or the schema is not a namespace of it (DataFusion's to handle).
pub(super) fn resolve_namespace(
    ctx: &SessionContext,
    parts: &[String],
) -> Option<(IcebergTarget, String, Namespace)> {
    let (default_catalog, _) = defaults(ctx);
    let (catalog, schema) = match parts {
        [cat, rest @ ..] if !rest.is_empty() && ctx.catalog(cat).is_some() => {
            (cat.clone(), rest.join("."))
        }
        all => (default_catalog, all.join(".")),
    };
    let target = IcebergTarget::find(ctx, &catalog)?;
    if target.iceberg().is_other_schema(&schema) {
        return None;
    }
    Some((target, catalog, Namespace::parse(&schema)))
}

/// How a statement's messages show a name part (a catalog, a namespace as typed or one of
/// its levels, a table): as it is, unless it is empty or holds a `.`, a `"`, whitespace or
/// a control character, when it is double-quoted with its quotes doubled, as SQL reads it
/// back (`".."`, `""`, `"a.b"`, `"x""y"`). Without the quotes, `ns.".."` printed as
/// `ns...`, which `ns."."."."` or `ns.""."".""` print as too (a tester's). Other names
/// print as before, in their case (`ns.t`, `NS.T`).
pub(super) fn message_name_part(part: &str) -> std::borrow::Cow<'_, str> {
    let needs_quotes = part.is_empty()
        || part
            .chars()
            .any(|c| c == '.' || c == '"' || c.is_whitespace() || c.is_control());
    if needs_quotes {
        format!("\"{}\"", part.replace('"', "\"\"")).into()
    } else {
        part.into()
    }
}

/// A dotted name (`cat.ns.t`) as a statement's messages show it: its parts by
/// [`message_name_part`], joined by `.`.
pub(super) fn message_name<'a>(parts: impl IntoIterator<Item = &'a str>) -> String {
    parts
        .into_iter()
        .map(message_name_part)
        .collect::<Vec<_>>()
        .join(".")
}

/// A namespace a statement named by `parts` (as typed, the catalog's part included when
/// typed) as its messages show it, with the catalog `catalog` it resolved to
/// ([`resolve_namespace`]) first: `default."..".`
pub(super) fn message_namespace(catalog: &str, parts: &[String]) -> String {
    let namespace = match parts {
        [cat, rest @ ..] if !rest.is_empty() && cat == catalog => rest,
        all => all,
    };
    message_name(std::iter::once(catalog).chain(namespace.iter().map(String::as_str)))
}

/// Refuse the namespace levels `levels` of a name a statement creates (`statement`, its
/// verb, and `parts`, the whole name as typed) when a part of them would leave a level
/// empty once split at its '.'s (`".."`, `"a."`, `ns."..".t`): icefloe reads a '.' in a
/// name, quoted or not, as separating namespace levels (module docs), and Iceberg's
/// catalogs hold no empty level ([`Namespace::check_creatable`]). The refusal names the
/// part as typed, not the levels it splits into (`CREATE SCHEMA ".."` said "namespace
/// '..': a namespace level cannot be empty", `CREATE TABLE ns."..".t` "namespace 'ns...'
/// does not exist").
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming the statement, the
/// name and the part.
pub(super) fn check_namespace_levels(
    statement: &str,
    parts: &[String],
    levels: &[String],
) -> Result<()> {
    let Some(part) = levels
        .iter()
        .find(|p| p.is_empty() || p.split('.').any(str::is_empty))
    else {
        return Ok(());
    };
    let name = message_name(parts.iter().map(String::as_str));
    let part = message_name_part(part);
    Err(crate::error::Error::invalid_argument(format!(
        "{statement} {name}: {part} names no namespace: a '.' in a name, quoted or not, \
         separates namespace levels, and {part} leaves a level empty"
    )))
}
