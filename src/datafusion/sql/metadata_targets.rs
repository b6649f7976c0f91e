//! Metadata columns of the table a `DELETE`, `UPDATE` or `MERGE` changes, as Spark reads
//! them on Iceberg tables: in a `DELETE`/`UPDATE`'s `WHERE` and `SET` values (`DELETE FROM t
//! WHERE _file = '…'`, `DELETE FROM t WHERE t._pos < 10`, `UPDATE t SET x = 0 WHERE
//! _partition.k = 'c'`, `UPDATE t SET note = _file WHERE …`), and qualified by the
//! target's name or alias in a `MERGE`'s `ON`, clause conditions and values (`ON t.id =
//! s.id AND t._spec_id = 0 WHEN MATCHED AND t._pos = 3 THEN …`; an unqualified one is the
//! source's, whose tables read them as queries do, module `metadata_columns`); also in
//! `EXPLAIN [ANALYZE]` of such a statement. See [`crate::datafusion::metadata_columns`]
//! for the values: those a `SELECT` of the same snapshot reads for the same rows.
//!
//! DataFusion 55 plans these statements against the target's schema, which holds the
//! table's columns alone. [`session`] gives a copy of the session in which the target's
//! name (as the statement names it, resolved in the session's default catalog and
//! schema) resolves to the table's provider with the metadata columns appended
//! ([`IcebergTableProvider::with_metadata_columns_for_row_level`]), keeping its write
//! target, so the statement plans unchanged (its qualifiers and alias, its subqueries;
//! a subquery reading the same table reads it with the metadata columns too), and the
//! provider's `delete_from`/`update`/`merge_into` run the statement through the one
//! row-level path (module `dml`), whose row-level scan then carries the metadata columns
//! after the row's file and position. Assigning a metadata column is an error, as in
//! Spark; so is a `MERGE` reading them with an `INSERT VALUES` listing no columns
//! (DataFusion would ask a value for each metadata column too).

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, MemoryCatalogProviderList, SchemaProvider,
};
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::datasource::TableProvider;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::planner::object_name_to_table_reference;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, FromTable, Ident, MergeAction, ObjectName, ObjectNamePart,
    Statement, TableFactor, Visit, Visitor,
};

use super::metadata_columns::names_metadata_column;
use crate::datafusion::IcebergTableProvider;
use crate::error::{Error, Result};

/// A copy of `ctx`'s session in which the target of `sql` resolves to its provider with
/// metadata columns, when `sql` is (or `EXPLAIN [ANALYZE]`s) a `DELETE` or `UPDATE` of one
/// Iceberg table naming a metadata column, or a `MERGE` naming one of its target's
/// qualified (see the module docs); `None` otherwise (the statement is planned in `ctx`
/// as it is).
///
/// Errors: an `UPDATE` assigning a metadata column
/// ([`ErrorKind::InvalidArgument`](crate::ErrorKind), naming it); DataFusion's, looking
/// the target up in the session's catalogs.
pub(super) async fn session(ctx: &SessionContext, sql: &str) -> Result<Option<SessionContext>> {
    let lower = sql.to_ascii_lowercase();
    if !crate::datafusion::metadata_columns::ALL
        .iter()
        .any(|name| lower.contains(name))
    {
        return Ok(None);
    }
    let state = ctx.state();
    let options = state.config().options().sql_parser.clone();
    let normalization = options.enable_ident_normalization;
    // parsed as module `dml_rewrite` parses it (Spark's `UPDATE SET *` / `INSERT *` marked)
    // (an `EXPLAIN [ANALYZE]` of one: the statement it explains)
    let merge = super::tokens::first_word_is(sql, &["MERGE"]);
    let statement = match super::dml_rewrite::parse_marked(ctx, sql, merge) {
        Some((statement, _)) => statement,
        None => match state.sql_to_statement(sql, &options.dialect) {
            Ok(DFStatement::Explain(explain)) => match *explain.statement {
                DFStatement::Statement(statement) => statement,
                _ => return Ok(None),
            },
            _ => return Ok(None),
        },
    };
    let relation = match statement.as_ref() {
        Statement::Delete(delete) => {
            let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) =
                &delete.from;
            match tables.as_slice() {
                [table] if table.joins.is_empty() && delete.using.is_none() => &table.relation,
                _ => return Ok(None),
            }
        }
        Statement::Update(update) if update.table.joins.is_empty() => &update.table.relation,
        Statement::Merge(merge) => &merge.table,
        _ => return Ok(None),
    };
    let TableFactor::Table {
        name,
        alias,
        args: None,
        version: None,
        ..
    } = relation
    else {
        return Ok(None);
    };
    let normalize = |id: &Ident| match normalization && id.quote_style.is_none() {
        true => id.value.to_ascii_lowercase(),
        false => id.value.clone(),
    };
    // the columns an UPDATE or MERGE assigns (last name part, normalized)
    let assigned: Vec<String> = assigned_columns(&statement)
        .into_iter()
        .filter_map(|name| name.0.last().and_then(ObjectNamePart::as_ident))
        .map(normalize)
        .collect();
    let assigns_metadata = assigned
        .iter()
        .any(|c| crate::datafusion::metadata_columns::ALL.contains(&c.as_str()));
    let reads_metadata = match statement.as_ref() {
        // a MERGE reads its target's metadata columns qualified (`t._pos`): an unqualified
        // one is its source's
        Statement::Merge(_) => {
            let mut qualifiers: Vec<String> = alias.iter().map(|a| normalize(&a.name)).collect();
            if alias.is_none() {
                qualifiers.extend(
                    name.0
                        .last()
                        .and_then(ObjectNamePart::as_ident)
                        .map(normalize),
                );
            }
            let mut finder = TargetMetadata {
                qualifiers,
                normalize: &normalize,
            };
            Visit::visit(statement.as_ref(), &mut finder).is_break()
        }
        _ => names_metadata_column(&statement, normalization),
    };
    if !assigns_metadata && !reads_metadata {
        return Ok(None);
    }
    let Ok(reference) = object_name_to_table_reference(name.clone(), normalization) else {
        return Ok(None);
    };
    let defaults = &state.config_options().catalog;
    let resolved = reference
        .clone()
        .resolve(&defaults.default_catalog, &defaults.default_schema);
    let Some(catalog) = state.catalog_list().catalog(&resolved.catalog) else {
        return Ok(None);
    };
    let Some(schema) = catalog.schema(&resolved.schema) else {
        return Ok(None);
    };
    let Some(provider) = schema.table(&resolved.table).await? else {
        return Ok(None);
    };
    let Some(iceberg) = provider.downcast_ref::<IcebergTableProvider>() else {
        return Ok(None);
    };
    let view = iceberg.clone().with_metadata_columns_for_row_level();
    // Spark refuses to assign a metadata column too
    let metadata = view.metadata_column_names();
    let statement_name = match statement.as_ref() {
        Statement::Merge(_) => "MERGE into",
        _ => "UPDATE of",
    };
    if let Some(column) = assigned.iter().find(|c| metadata.contains(&c.as_str())) {
        return Err(Error::invalid_argument(format!(
            "{statement_name} '{reference}' assigns metadata column '{column}': metadata \
             columns (_file, _pos, …) are read-only"
        )));
    }
    if let Statement::Merge(merge) = statement.as_ref() {
        // DataFusion takes an INSERT without columns to list every column of the target
        let unlisted = merge
            .clauses
            .iter()
            .any(|c| matches!(&c.action, MergeAction::Insert(i) if i.columns.is_empty()));
        if unlisted {
            return Err(Error::unsupported(format!(
                "MERGE into '{reference}' reading metadata columns of its target with an \
                 INSERT that lists no columns: list them (INSERT (id, …) VALUES (…))"
            )));
        }
    }
    let view: Arc<dyn TableProvider> = Arc::new(view);
    let target_schema = Arc::new(TargetSchema {
        inner: schema,
        table: resolved.table.to_string(),
        view,
    });
    let target_catalog = Arc::new(TargetCatalog {
        inner: catalog,
        schema_name: resolved.schema.to_string(),
        schema: target_schema,
    });
    let catalogs = Arc::new(MemoryCatalogProviderList::new());
    for name in state.catalog_list().catalog_names() {
        if name == *resolved.catalog {
            continue;
        }
        if let Some(c) = state.catalog_list().catalog(&name) {
            catalogs.register_catalog(name, c);
        }
    }
    catalogs.register_catalog(resolved.catalog.to_string(), target_catalog);
    let state = SessionStateBuilder::new_from_existing(state)
        .with_catalog_list(catalogs)
        .build();
    Ok(Some(SessionContext::new_with_state(state)))
}

/// A catalog as `inner`, but for its schema `schema_name`, which is `schema`.
#[derive(Debug)]
struct TargetCatalog {
    inner: Arc<dyn CatalogProvider>,
    schema_name: String,
    schema: Arc<TargetSchema>,
}

impl CatalogProvider for TargetCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.inner.schema_names()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        if name == self.schema_name {
            return Some(Arc::clone(&self.schema) as _);
        }
        self.inner.schema(name)
    }

    fn register_schema(
        &self,
        _name: &str,
        _schema: Arc<dyn SchemaProvider>,
    ) -> DFResult<Option<Arc<dyn SchemaProvider>>> {
        Err(read_only())
    }
}

/// A schema as `inner`, but for its table `table`, which is `view`.
#[derive(Debug)]
struct TargetSchema {
    inner: Arc<dyn SchemaProvider>,
    table: String,
    view: Arc<dyn TableProvider>,
}

#[async_trait]
impl SchemaProvider for TargetSchema {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        if name == self.table {
            return Ok(Some(Arc::clone(&self.view)));
        }
        self.inner.table(name).await
    }

    fn table_exist(&self, name: &str) -> bool {
        name == self.table || self.inner.table_exist(name)
    }
}

/// The error for a catalog change while a `DELETE`/`UPDATE` is planned here (none is
/// made: planning one registers nothing).
fn read_only() -> DataFusionError {
    DataFusionError::Plan(
        "the catalogs of a DELETE/UPDATE reading metadata columns are read-only while it \
         is planned"
            .to_string(),
    )
}

/// The names an `UPDATE` assigns, and those a `MERGE`'s `UPDATE SET` and `INSERT (…)`
/// clauses do.
fn assigned_columns(statement: &Statement) -> Vec<&ObjectName> {
    match statement {
        Statement::Update(update) => assignment_targets(&update.assignments),
        Statement::Merge(merge) => merge
            .clauses
            .iter()
            .flat_map(|c| match &c.action {
                MergeAction::Update(update) => assignment_targets(&update.assignments),
                MergeAction::Insert(insert) => insert.columns.iter().collect(),
                MergeAction::Delete { .. } => vec![],
            })
            .collect(),
        _ => vec![],
    }
}

/// The names `assignments` assign.
fn assignment_targets(assignments: &[Assignment]) -> Vec<&ObjectName> {
    assignments
        .iter()
        .flat_map(|a| match &a.target {
            AssignmentTarget::ColumnName(name) => vec![name],
            AssignmentTarget::Tuple(names) => names.iter().collect(),
        })
        .collect()
}

/// Finds a metadata column qualified by one of `qualifiers` (the target's alias, else its
/// name): `t._pos`, `t._partition.k`.
struct TargetMetadata<'a, F: Fn(&Ident) -> String> {
    qualifiers: Vec<String>,
    normalize: &'a F,
}

impl<F: Fn(&Ident) -> String> Visitor for TargetMetadata<'_, F> {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<()> {
        if let Expr::CompoundIdentifier(parts) = expr {
            let qualified = parts.windows(2).any(|pair| {
                self.qualifiers.contains(&(self.normalize)(&pair[0]))
                    && crate::datafusion::metadata_columns::ALL
                        .contains(&(self.normalize)(&pair[1]).as_str())
            });
            if qualified {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}
