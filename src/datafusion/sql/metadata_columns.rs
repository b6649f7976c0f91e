//! Metadata columns in SQL (see [`crate::datafusion::metadata_columns`] for their
//! values): `SELECT _file, _pos, _row_id FROM t` reads them, `SELECT *` does not show them;
//! a field of `_partition` reads as `_partition.k` (or `_partition['k']`).
//!
//! DataFusion 55 has no metadata columns of its own (a table has one schema, `*`
//! expands to all of it), so a statement naming one (`_file`, `t._pos`, …) is rewritten
//! before DataFusion plans it: in each `SELECT` block, the Iceberg tables of its `FROM`
//! are read through their view with metadata columns
//! ([`IcebergTableProvider::with_metadata_columns`]; aliased to the table's own name
//! when it had no alias), and its wildcards get `EXCLUDE (<the metadata columns>)`:
//! `*` over one such table, `t.*` over any. The views live in a private catalog of a
//! copy of the session used only to plan this statement; in the plan each view's scan
//! is then named as the statement names the table (`ns.t`), so `EXPLAIN` and
//! `--explain-pruning` show the user's names.
//!
//! The statements rewritten are the queries and the statements wrapping one: a query,
//! `EXPLAIN [ANALYZE]` and `DESCRIBE` of one, `INSERT … <query>`, `CREATE TABLE … AS
//! <query>` (also through icefloe's CTAS), `COPY (<query>) TO …`, and the source of a
//! `MERGE` (a table or a query). Where a statement keeps its plan for later or names
//! a metadata column of the table it changes, [`unsupported`] turns DataFusion's "No
//! field named _pos" into an [`ErrorKind::Unsupported`](crate::ErrorKind) error naming
//! the feature:
//!
//! - `CREATE VIEW` and `PREPARE`: DataFusion keeps a view or a prepared statement as the
//!   plan made when it is created, and `SELECT … FROM v` / `EXECUTE` reuse that plan
//!   without passing through `sql::execute`, while icefloe resolves metadata columns
//!   for each statement it plans;
//! - the target table of a `MERGE`, unqualified (an unqualified metadata column in a
//!   `MERGE` is its source's; `t._pos` is the target's).
//!
//! A `DELETE` or `UPDATE` reading metadata columns of its target, and a `MERGE` reading
//! them qualified, are planned against the target with them (module `metadata_targets`).
//!
//! Other limits, each an [`ErrorKind::Unsupported`](crate::ErrorKind) error or left to
//! DataFusion: an unqualified `*` over a join in a block that reads metadata columns
//! (write `t.*, u.*`); a table named with more than its last name part once aliased
//! (`ns.t._file` → write `t._file`).

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProvider, MemoryCatalogProviderList,
    MemorySchemaProvider, SchemaProvider,
};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DataFusionError, SchemaError, TableReference};
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::{
    LogicalPlan, PlanType, TableScan, TableScanBuilder, ToStringifiedPlan,
};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::{CopyToSource, Statement as DFStatement};
use datafusion::sql::planner::object_name_to_table_reference;
use datafusion::sql::sqlparser::ast::{
    ExcludeSelectItem, Expr, Ident, Insert, ObjectName, ObjectNamePart, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, Statement, TableAlias, TableFactor, TableWithJoins,
    Visit, VisitMut, Visitor, VisitorMut, WildcardAdditionalOptions,
};

use crate::datafusion::metadata_columns::ALL;
use crate::datafusion::IcebergTableProvider;
use crate::error::{Error, Result};

/// The private catalog (and schema) the views are planned from.
const CATALOG: &str = "__icefloe_metadata_columns";
const SCHEMA: &str = "views";

/// The plan of `sql` when it is a query, or a statement wrapping one (see the module
/// docs), naming a metadata column of an Iceberg table it reads; `None` for every other
/// statement (run as it is).
///
/// Errors: an unqualified `*` over a join in a block reading metadata columns; planning
/// errors of the rewritten statement ([`unsupported`]'s where it applies).
pub(super) async fn plan(ctx: &SessionContext, sql: &str) -> Result<Option<LogicalPlan>> {
    let lower = sql.to_ascii_lowercase();
    if !ALL.iter().any(|name| lower.contains(name)) {
        return Ok(None);
    }
    let state = ctx.state();
    let options = state.config().options().sql_parser.clone();
    let normalization = options.enable_ident_normalization;
    let Ok(mut statement) = state.sql_to_statement(sql, &options.dialect) else {
        return Ok(None);
    };
    // the statement's part holding its queries, rewritten in place; the whole
    // statement is planned
    let ctes = {
        let Some(body) = body(&mut statement) else {
            return Ok(None);
        };
        if !body.names_metadata(normalization) {
            return Ok(None);
        }
        body.cte_names()
    };
    // the Iceberg tables the statement names (CTE names are not tables)
    let references = state.resolve_table_references(&statement)?;
    let mut views: HashMap<TableReference, (String, Arc<IcebergTableProvider>)> = HashMap::new();
    for reference in references {
        if ctes.contains(reference.table()) || views.contains_key(&reference) {
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
    let rewriter = Rewriter {
        views: &views,
        ctes: &ctes,
        normalization,
        error: None,
    };
    if let Some(mut body) = body(&mut statement) {
        body.rewrite(rewriter)?;
    }
    // plan in a copy of the session whose catalogs also hold the views
    let schema = MemorySchemaProvider::new();
    for (key, view) in views.values() {
        schema.register_table(key.clone(), Arc::clone(view) as _)?;
    }
    let private = with_private_schema(state, CATALOG, SCHEMA, schema)?;
    let plan = match private.statement_to_plan(statement).await {
        Ok(plan) => plan,
        Err(e) => {
            let e = Error::from(e);
            return Err(unsupported(ctx, sql, &e).await.unwrap_or(e));
        }
    };
    let names: HashMap<TableReference, TableReference> = views
        .into_iter()
        .map(|(user, (key, _))| (TableReference::full(CATALOG, SCHEMA, key), user))
        .collect();
    Ok(Some(with_user_names(plan, &names)?))
}

/// `plan` with each view's scan named as the statement names its table (`names`:
/// private name → the user's), and an `EXPLAIN`'s initial plan shown so: the plan reads
/// as DataFusion's plan of a table with those columns would.
///
/// Errors: a scan that cannot be rebuilt (DataFusion's).
fn with_user_names(
    plan: LogicalPlan,
    names: &HashMap<TableReference, TableReference>,
) -> Result<LogicalPlan> {
    let renamed = plan.transform_up_with_subqueries(|node| match node {
        LogicalPlan::TableScan(scan) if names.contains_key(&scan.table_name) => {
            let TableScan {
                table_name,
                source,
                projection,
                filters,
                fetch,
                statistics_requests,
                ..
            } = scan;
            let user = names.get(&table_name).cloned().unwrap_or(table_name);
            let renamed = TableScanBuilder::new(user, source)
                .with_projection(projection)
                .with_filters(filters)
                .with_fetch(fetch)
                .with_statistics_requests(statistics_requests)
                .build()?;
            Ok(Transformed::yes(LogicalPlan::TableScan(renamed)))
        }
        // the initial plan was printed before the scans were renamed
        LogicalPlan::Explain(mut explain) => {
            for shown in &mut explain.stringified_plans {
                if shown.plan_type == PlanType::InitialLogicalPlan {
                    *shown = explain.plan.to_stringified(PlanType::InitialLogicalPlan);
                }
            }
            Ok(Transformed::yes(LogicalPlan::Explain(explain)))
        }
        other => Ok(Transformed::no(other)),
    })?;
    Ok(renamed.data)
}

/// The error for `sql`, which failed to plan with `error`, when that is DataFusion's "No
/// field named <metadata column>" in a statement where icefloe does not give them
/// (`CREATE VIEW`, `PREPARE`, a `MERGE`'s target unqualified; see the module docs) and an Iceberg table the statement names has that column:
/// [`ErrorKind::Unsupported`](crate::ErrorKind) naming the statement, the column and
/// the table; for an `INSERT` listing a metadata column of its target, that they are
/// read-only ([`ErrorKind::InvalidArgument`](crate::ErrorKind)). `None` otherwise (the
/// error stands).
pub(super) async fn unsupported(ctx: &SessionContext, sql: &str, error: &Error) -> Option<Error> {
    let column = missing_metadata_column(error)?;
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    let statement = state.sql_to_statement(sql, &dialect).ok()?;
    let DFStatement::Statement(inner) = &statement else {
        return None;
    };
    if let Statement::Insert(insert) = inner.as_ref() {
        return listed_metadata_column(ctx, insert, &column).await;
    }
    let (what, why) = match inner.as_ref() {
        Statement::CreateView(_) => (
            "metadata columns in CREATE VIEW are not supported",
            " (DataFusion keeps a view as the plan made by CREATE VIEW, and icefloe \
             resolves metadata columns in each statement; read them in a query)",
        ),
        Statement::Prepare { .. } => (
            "metadata columns in PREPARE are not supported",
            " (DataFusion keeps a prepared statement as the plan made by PREPARE, and \
             icefloe resolves metadata columns in each statement; run the query itself)",
        ),
        Statement::Merge(_) => (
            "unqualified metadata columns of a MERGE's target table are not supported \
             (an unqualified one is the source's)",
            "; qualify it with the target's name or alias, e.g. t._pos",
        ),
        _ => return None,
    };
    for reference in state.resolve_table_references(&statement).ok()? {
        let Ok(provider) = ctx.table_provider(reference.clone()).await else {
            continue;
        };
        let Some(iceberg) = provider.downcast_ref::<IcebergTableProvider>() else {
            continue;
        };
        let view = iceberg.clone().with_metadata_columns();
        if view.metadata_column_names().contains(&column.as_str()) {
            return Some(Error::unsupported(format!(
                "{what}: {column} of {reference}{why}"
            )));
        }
    }
    None
}

/// The error for an `INSERT` whose column list names `column`, a metadata column of its
/// target (`INSERT INTO t (id, _row_id) …`, which DataFusion refuses as "No field named
/// _row_id" of a column the user can read): metadata columns are read-only, as an
/// `UPDATE` or `MERGE` assigning one is told (module `metadata_targets`), and as Spark
/// refuses writing them. `None` when the list does not name it or the target is no
/// Iceberg table having it.
async fn listed_metadata_column(
    ctx: &SessionContext,
    insert: &Insert,
    column: &str,
) -> Option<Error> {
    let normalize = ctx
        .state()
        .config_options()
        .sql_parser
        .enable_ident_normalization;
    let listed = insert.columns.iter().any(|name| {
        name.0
            .last()
            .and_then(ObjectNamePart::as_ident)
            .is_some_and(|ident| {
                let value = if ident.quote_style.is_none() && normalize {
                    ident.value.to_lowercase()
                } else {
                    ident.value.clone()
                };
                value == column
            })
    });
    let datafusion::sql::sqlparser::ast::TableObject::TableName(name) = &insert.table else {
        return None;
    };
    if !listed {
        return None;
    }
    let reference = object_name_to_table_reference(name.clone(), normalize).ok()?;
    let provider = ctx.table_provider(reference.clone()).await.ok()?;
    let iceberg = provider.downcast_ref::<IcebergTableProvider>()?;
    let view = iceberg.clone().with_metadata_columns();
    view.metadata_column_names().contains(&column).then(|| {
        Error::invalid_argument(format!(
            "INSERT into '{reference}' lists metadata column '{column}': metadata \
                 columns (_file, _pos, …) are read-only"
        ))
    })
}

/// The metadata column DataFusion found no field for, when `error` is (or wraps) its
/// "No field named …" for one.
fn missing_metadata_column(error: &Error) -> Option<String> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(DataFusionError::SchemaError(inner, _)) = e
            .downcast_ref::<DataFusionError>()
            .map(DataFusionError::find_root)
        {
            if let SchemaError::FieldNotFound { field, .. } = inner.as_ref() {
                if ALL.contains(&field.name.as_str()) {
                    return Some(field.name.clone());
                }
            }
        }
        next = e.source();
    }
    None
}

/// The part of a statement holding the queries the rewrite applies to.
enum Body<'a> {
    /// A query, or a statement wrapping queries (`INSERT`, CTAS, `MERGE`, `EXPLAIN`/
    /// `DESCRIBE` of one of these).
    Statement(&'a mut Statement),
    /// `COPY (<query>) TO …`.
    Query(&'a mut Query),
}

/// The part of `statement` the rewrite applies to; `None` for a statement it does not
/// apply to.
fn body(statement: &mut DFStatement) -> Option<Body<'_>> {
    match statement {
        DFStatement::Statement(inner) => {
            rewritten(inner).then_some(Body::Statement(inner.as_mut()))
        }
        DFStatement::Explain(explain) => body(explain.statement.as_mut()),
        DFStatement::CopyTo(copy) => match &mut copy.source {
            CopyToSource::Query(query) => Some(Body::Query(query.as_mut())),
            CopyToSource::Relation(_) => None,
        },
        _ => None,
    }
}

/// Whether the rewrite applies to `statement` (see the module docs).
fn rewritten(statement: &Statement) -> bool {
    match statement {
        Statement::Query(_) | Statement::Merge(_) => true,
        Statement::Insert(Insert { source, .. }) => source.is_some(),
        Statement::CreateTable(create) => create.query.is_some(),
        // `EXPLAIN` in sqlparser's form, `DESCRIBE <query>`
        Statement::Explain { statement, .. } => rewritten(statement),
        _ => false,
    }
}

impl Body<'_> {
    fn visit<V: Visitor>(&self, visitor: &mut V) -> ControlFlow<V::Break> {
        match self {
            Body::Statement(statement) => Visit::visit(&**statement, visitor),
            Body::Query(query) => Visit::visit(&**query, visitor),
        }
    }

    /// Whether an expression of the statement names a metadata column.
    fn names_metadata(&self, normalization: bool) -> bool {
        let mut names = NamesMetadata { normalization };
        self.visit(&mut names).is_break()
    }

    /// The names the statement's `WITH` clauses define.
    fn cte_names(&self) -> HashSet<String> {
        let mut ctes = CteNames::default();
        let _ = self.visit(&mut ctes);
        ctes.0
    }

    /// Swap the views in for the Iceberg tables the statement reads.
    ///
    /// Errors: see [`Rewriter::select`].
    fn rewrite(&mut self, mut rewriter: Rewriter<'_>) -> Result<()> {
        let _ = match self {
            Body::Statement(statement) => {
                // a MERGE's source is read as a `FROM` is
                if let Statement::Merge(merge) = &mut **statement {
                    let mut swapped = vec![];
                    rewriter.relation(&mut merge.source, &mut swapped)?;
                }
                VisitMut::visit(&mut **statement, &mut rewriter)
            }
            Body::Query(query) => VisitMut::visit(&mut **query, &mut rewriter),
        };
        match rewriter.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Whether an expression of `statement` names a metadata column (`_file`, `t._pos`,
/// `_partition.k`); `normalization`: unquoted names compare lowercased.
pub(super) fn names_metadata_column(statement: &Statement, normalization: bool) -> bool {
    Visit::visit(statement, &mut NamesMetadata { normalization }).is_break()
}

/// Finds an identifier naming a metadata column (`_file`, `t._file`, `_partition.k`).
struct NamesMetadata {
    normalization: bool,
}

impl Visitor for NamesMetadata {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        let named = |id: &Ident| {
            let name = if self.normalization && id.quote_style.is_none() {
                id.value.to_ascii_lowercase()
            } else {
                id.value.clone()
            };
            ALL.contains(&name.as_str())
        };
        let found = match expr {
            Expr::Identifier(id) => named(id),
            Expr::CompoundIdentifier(ids) => ids.iter().any(named),
            _ => false,
        };
        if found {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
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

/// A copy of `state` whose catalogs also hold catalog `catalog` with `schema` as its
/// schema `schema_name` (private tables to plan a statement with).
///
/// Errors: DataFusion's, registering the schema.
pub(super) fn with_private_schema(
    state: SessionState,
    catalog: &str,
    schema_name: &str,
    schema: MemorySchemaProvider,
) -> Result<SessionState> {
    let catalogs = Arc::new(MemoryCatalogProviderList::new());
    for name in state.catalog_list().catalog_names() {
        if let Some(c) = state.catalog_list().catalog(&name) {
            catalogs.register_catalog(name, c);
        }
    }
    let private = MemoryCatalogProvider::new();
    private.register_schema(schema_name, Arc::new(schema))?;
    catalogs.register_catalog(catalog.to_string(), Arc::new(private));
    Ok(SessionStateBuilder::new_from_existing(state)
        .with_catalog_list(catalogs)
        .build())
}
