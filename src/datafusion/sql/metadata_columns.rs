//! Metadata columns in SQL (see [`crate::datafusion::metadata_columns`] for their
//! values): `SELECT _file, _pos, _row_id FROM t` reads them, `SELECT *` does not show them;
//! a field of `_partition` reads as `_partition.k` (or `_partition['k']`).
//!
//! DataFusion 55 has no metadata columns of its own (a table has one schema, `*`
//! expands to all of it), so a `SELECT` (or an `EXPLAIN [ANALYZE]` of one) that names
//! one (`_file`, `t._pos`, …) is rewritten before DataFusion plans it: in each `SELECT` block, the Iceberg tables of
//! its `FROM` are read through their view with metadata columns
//! ([`IcebergTableProvider::with_metadata_columns`]; aliased to the table's own name
//! when it had no alias), and its wildcards get `EXCLUDE (<the metadata columns>)`:
//! `*` over one such table, `t.*` over any. The views live in a private catalog of a
//! copy of the session used only to plan this statement.
//!
//! Limits, each an [`ErrorKind::Unsupported`](crate::ErrorKind) error or left to
//! DataFusion: an unqualified `*` over a join in a block that reads metadata columns
//! (write `t.*, u.*`); metadata columns in statements other than a query (`DELETE …
//! WHERE _pos = 0`: DataFusion reports the unknown column); a table named with more
//! than its last name part once aliased (`ns.t._file` → write `t._file`).

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProvider, MemoryCatalogProviderList,
    MemorySchemaProvider, SchemaProvider,
};
use datafusion::common::TableReference;
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::planner::object_name_to_table_reference;
use datafusion::sql::sqlparser::ast::{
    visit_expressions, ExcludeSelectItem, Expr, Ident, ObjectName, ObjectNamePart, Query, Select,
    SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement, TableAlias, TableFactor,
    TableWithJoins, Visit, VisitMut, Visitor, VisitorMut, WildcardAdditionalOptions,
};

use crate::datafusion::metadata_columns::ALL;
use crate::datafusion::IcebergTableProvider;
use crate::error::{Error, Result};

/// The private catalog (and schema) the views are planned from.
const CATALOG: &str = "__icefloe_metadata_columns";
const SCHEMA: &str = "views";

/// The plan of `sql` when it is a query naming a metadata column of an Iceberg table it
/// reads; `None` for every other statement (run as it is).
///
/// Errors: an unqualified `*` over a join in a block reading metadata columns; planning
/// errors of the rewritten query.
pub(super) async fn plan(ctx: &SessionContext, sql: &str) -> Result<Option<LogicalPlan>> {
    let lower = sql.to_ascii_lowercase();
    if !ALL.iter().any(|name| lower.contains(name)) {
        return Ok(None);
    }
    let state = ctx.state();
    let options = state.config().options().sql_parser.clone();
    let Ok(statement) = state.sql_to_statement(sql, &options.dialect) else {
        return Ok(None);
    };
    // a query, or an `EXPLAIN` of one: the query is rewritten in place, the whole
    // statement planned
    let mut statement = statement;
    let query: &mut Box<Query> = match &mut statement {
        DFStatement::Explain(explain) => match explain.statement.as_mut() {
            DFStatement::Statement(inner) => match inner.as_mut() {
                Statement::Query(query) => query,
                _ => return Ok(None),
            },
            _ => return Ok(None),
        },
        DFStatement::Statement(inner) => match inner.as_mut() {
            Statement::Query(query) => query,
            _ => return Ok(None),
        },
        _ => return Ok(None),
    };
    let normalize = |ident: &Ident| -> String {
        if options.enable_ident_normalization && ident.quote_style.is_none() {
            ident.value.to_ascii_lowercase()
        } else {
            ident.value.clone()
        }
    };
    let names_metadata = visit_expressions(&**query, |e| {
        let found = match e {
            Expr::Identifier(id) => ALL.contains(&normalize(id).as_str()),
            // `t._file`, and a field of `_partition`: `_partition.k`, `t._partition.k`
            Expr::CompoundIdentifier(ids) => {
                ids.iter().any(|id| ALL.contains(&normalize(id).as_str()))
            }
            _ => false,
        };
        if found {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    if names_metadata.is_continue() {
        return Ok(None);
    }
    // the Iceberg tables the query reads (CTE names are not tables)
    let mut ctes = CteNames::default();
    let _ = Visit::visit(&**query, &mut ctes);
    let references = state.resolve_table_references(&DFStatement::Statement(Box::new(
        Statement::Query(query.clone()),
    )))?;
    let mut views: HashMap<TableReference, (String, Arc<IcebergTableProvider>)> = HashMap::new();
    for reference in references {
        if ctes.0.contains(reference.table()) || views.contains_key(&reference) {
            continue;
        }
        let Ok(provider) = ctx.table_provider(reference.clone()).await else {
            continue;
        };
        if let Some(iceberg) = provider.downcast_ref::<IcebergTableProvider>() {
            let key = format!("t{}", views.len());
            let view = iceberg.clone().with_metadata_columns();
            views.insert(reference, (key, Arc::new(view)));
        }
    }
    if views.is_empty() {
        return Ok(None);
    }
    let mut rewriter = Rewriter {
        views: &views,
        ctes: &ctes.0,
        normalization: options.enable_ident_normalization,
        error: None,
    };
    let _ = VisitMut::visit(&mut **query, &mut rewriter);
    if let Some(e) = rewriter.error {
        return Err(e);
    }
    // plan in a copy of the session whose catalogs also hold the views
    let catalogs = Arc::new(MemoryCatalogProviderList::new());
    for name in state.catalog_list().catalog_names() {
        if let Some(catalog) = state.catalog_list().catalog(&name) {
            catalogs.register_catalog(name, catalog);
        }
    }
    let schema = MemorySchemaProvider::new();
    for (key, view) in views.values() {
        schema.register_table(key.clone(), Arc::clone(view) as _)?;
    }
    let catalog = MemoryCatalogProvider::new();
    catalog.register_schema(SCHEMA, Arc::new(schema))?;
    catalogs.register_catalog(CATALOG.to_string(), Arc::new(catalog));
    let private = SessionStateBuilder::new_from_existing(state)
        .with_catalog_list(catalogs)
        .build();
    let plan = private.statement_to_plan(statement).await?;
    Ok(Some(plan))
}

/// The names the query's `WITH` clauses define.
#[derive(Default)]
struct CteNames(HashSet<String>);

impl Visitor for CteNames {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                self.0.insert(cte.alias.name.value.clone());
                self.0.insert(cte.alias.name.value.to_ascii_lowercase());
            }
        }
        ControlFlow::Continue(())
    }
}

struct Rewriter<'a> {
    views: &'a HashMap<TableReference, (String, Arc<IcebergTableProvider>)>,
    ctes: &'a HashSet<String>,
    normalization: bool,
    error: Option<Error>,
}

impl VisitorMut for Rewriter<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if let Err(e) = self.set_expr(&mut query.body) {
            self.error = Some(e);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

impl Rewriter<'_> {
    fn set_expr(&self, body: &mut SetExpr) -> Result<()> {
        match body {
            SetExpr::Select(select) => self.select(select),
            SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left)?;
                self.set_expr(right)
            }
            // nested queries are visited on their own
            _ => Ok(()),
        }
    }

    fn normalize(&self, ident: &Ident) -> String {
        if self.normalization && ident.quote_style.is_none() {
            ident.value.to_ascii_lowercase()
        } else {
            ident.value.clone()
        }
    }

    /// Swap the views in for the block's Iceberg tables and exclude their metadata
    /// columns from its wildcards.
    fn select(&self, select: &mut Select) -> Result<()> {
        // qualifier (normalized) → the metadata column names of its view
        let mut swapped: Vec<(String, Vec<String>)> = vec![];
        for from in &mut select.from {
            self.relation(&mut from.relation, &mut swapped)?;
            for join in &mut from.joins {
                self.relation(&mut join.relation, &mut swapped)?;
            }
        }
        if swapped.is_empty() {
            return Ok(());
        }
        let single = matches!(select.from.as_slice(), [TableWithJoins { joins, relation: TableFactor::Table { .. } }] if joins.is_empty());
        for item in &mut select.projection {
            match item {
                SelectItem::Wildcard(options) => {
                    if !single {
                        return Err(Error::unsupported(
                            "SELECT * over several tables in a query that reads metadata \
                             columns (_file, _pos, …): write each table's columns, e.g. \
                             t.*, u.*",
                        ));
                    }
                    exclude(options, &swapped[0].1);
                }
                SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(name),
                    options,
                ) => {
                    let last = name.0.last().and_then(ObjectNamePart::as_ident);
                    if let Some(last) = last {
                        let q = self.normalize(last);
                        if let Some((_, names)) = swapped.iter().find(|(s, _)| *s == q) {
                            exclude(options, names);
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn relation(
        &self,
        relation: &mut TableFactor,
        swapped: &mut Vec<(String, Vec<String>)>,
    ) -> Result<()> {
        match relation {
            TableFactor::Table {
                name,
                alias,
                args: None,
                version: None,
                ..
            } => {
                let reference = object_name_to_table_reference(name.clone(), self.normalization)?;
                if self.ctes.contains(reference.table()) {
                    return Ok(());
                }
                let Some((key, view)) = self.views.get(&reference) else {
                    return Ok(());
                };
                let Some(last) = name.0.last().and_then(ObjectNamePart::as_ident).cloned() else {
                    return Ok(());
                };
                let alias = alias.get_or_insert_with(|| TableAlias {
                    explicit: true,
                    name: last,
                    columns: vec![],
                    at: None,
                });
                let names: Vec<String> = view
                    .as_ref()
                    .metadata_column_names()
                    .into_iter()
                    .map(str::to_string)
                    .collect();
                swapped.push((self.normalize(&alias.name), names));
                *name = ObjectName(
                    [CATALOG, SCHEMA, key.as_str()]
                        .into_iter()
                        .map(|p| ObjectNamePart::Identifier(Ident::with_quote('"', p)))
                        .collect(),
                );
                Ok(())
            }
            TableFactor::NestedJoin {
                table_with_joins, ..
            } => {
                self.relation(&mut table_with_joins.relation, swapped)?;
                for join in &mut table_with_joins.joins {
                    self.relation(&mut join.relation, swapped)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Add `names` to the wildcard's `EXCLUDE`.
fn exclude(options: &mut WildcardAdditionalOptions, names: &[String]) {
    let mut list: Vec<ObjectName> = match options.opt_exclude.take() {
        None => vec![],
        Some(ExcludeSelectItem::Single(name)) => vec![name],
        Some(ExcludeSelectItem::Multiple(names)) => names,
    };
    for name in names {
        list.push(ObjectName(vec![ObjectNamePart::Identifier(
            Ident::with_quote('"', name.as_str()),
        )]));
    }
    options.opt_exclude = Some(ExcludeSelectItem::Multiple(list));
}
