//! The target of a prepared `INSERT`, `DELETE`, `UPDATE`, `TRUNCATE` or `MERGE INTO` on
//! an Iceberg table, resolved again by name at every `EXECUTE`, as the tables a prepared
//! query reads are ([`FreshView`]).
//!
//! DataFusion keeps the prepared plan with the table provider resolved at `PREPARE`; an
//! Iceberg provider holds the table as it was then (its metadata, `table-uuid`, schema,
//! spec and current snapshot). An `EXECUTE` of a prepared `INSERT` after `DROP TABLE ns.t`
//! and a new `CREATE TABLE ns.t` wrote its rows for the dropped table and the commit then
//! failed with "the table was replaced while the commit ran"; a prepared `DELETE` or
//! `UPDATE` read the rows of the `PREPARE`'s snapshot, so it silently changed none of the
//! rows written since (count 0, the rows left as they were, even after the session
//! itself inserted them), and a prepared `MERGE` failed its commit as conflicting with
//! them. A [`FreshTarget`] in the provider's place looks `ns.t` up in the session's
//! catalogs when the `EXECUTE` is planned, and writes to the table that name holds then
//! (its current snapshot, or its branch's head) when its columns are the ones the
//! statement was prepared for (the `VALUES`, query, conditions, `SET` values and `MERGE`
//! clauses were planned and cast for them); otherwise the `EXECUTE` fails before writing
//! anything, asking to prepare it again.
//!
//! [`FreshView`]: super::fresh_view::FreshView

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{Fields, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{
    Constraints, DFSchemaRef, DataFusionError, Result as DFResult, TableReference,
};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::dml::{InsertOp, MergeIntoClause};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;

/// A prepared statement's target table; see the module docs.
#[derive(Debug)]
pub struct FreshTarget {
    /// `prepared statement p`, for errors.
    statement: String,
    /// The name the statement gives the table (resolved in the session's default
    /// catalog and schema at `EXECUTE`).
    table_name: TableReference,
    /// The table's provider at `PREPARE`: the columns the statement was planned for, their
    /// defaults and constraints.
    prepared: Arc<dyn TableProvider>,
}

impl FreshTarget {
    /// The target `table_name` of prepared statement `statement`, `prepared` its provider
    /// at `PREPARE`.
    pub fn new(
        statement: &str,
        table_name: TableReference,
        prepared: Arc<dyn TableProvider>,
    ) -> Self {
        Self {
            statement: format!("prepared statement {statement}"),
            table_name,
            prepared,
        }
    }

    /// The table `table_name` holds now in `state`.
    ///
    /// Errors: it no longer exists; its columns (names and types, in order) are not the
    /// ones the statement was prepared for.
    async fn now(&self, state: &dyn Session) -> DFResult<Arc<dyn TableProvider>> {
        let table = match state
            .as_any()
            .downcast_ref::<datafusion::execution::SessionState>()
        {
            Some(state) => resolve_now(state, &self.table_name).await?,
            None => None,
        };
        let table = table.ok_or_else(|| {
            DataFusionError::Plan(format!(
                "{}: table {} no longer exists; nothing was written",
                self.statement, self.table_name
            ))
        })?;
        let (now, then) = (table.schema(), self.prepared.schema());
        if !same_columns(now.fields(), then.fields()) {
            return Err(DataFusionError::Plan(format!(
                "{}: the columns of table {} changed since it was prepared (now ({}), then \
                 ({})); nothing was written; prepare it again",
                self.statement,
                self.table_name,
                columns(now.fields()),
                columns(then.fields())
            )));
        }
        Ok(table)
    }
}

/// The table `table_name` holds now in `state` (resolved in the session's default
/// catalog and schema); `None` when there is none.
///
/// Errors: the catalog's, loading it.
pub(crate) async fn resolve_now(
    state: &datafusion::execution::SessionState,
    table_name: &TableReference,
) -> DFResult<Option<Arc<dyn TableProvider>>> {
    let defaults = &state.config_options().catalog;
    let resolved = table_name
        .clone()
        .resolve(&defaults.default_catalog, &defaults.default_schema);
    let schema = state
        .catalog_list()
        .catalog(&resolved.catalog)
        .and_then(|c| c.schema(&resolved.schema));
    match schema {
        Some(schema) => schema.table(&resolved.table).await,
        None => Ok(None),
    }
}

/// Whether `a` and `b` are the same columns: names and types, in order.
pub(crate) fn same_columns(a: &Fields, b: &Fields) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b.iter())
            .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type())
}

/// `name type, …`, for messages.
pub(crate) fn columns(fields: &Fields) -> String {
    fields
        .iter()
        .map(|f| format!("{} {}", f.name(), f.data_type()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[async_trait]
impl TableProvider for FreshTarget {
    fn schema(&self) -> SchemaRef {
        self.prepared.schema()
    }

    fn table_type(&self) -> TableType {
        self.prepared.table_type()
    }

    fn constraints(&self) -> Option<&Constraints> {
        self.prepared.constraints()
    }

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.prepared.get_column_default(column)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.now(state)
            .await?
            .scan(state, projection, filters, limit)
            .await
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.now(state)
            .await?
            .insert_into(state, input, insert_op)
            .await
    }

    async fn delete_from(
        &self,
        state: &dyn Session,
        filters: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.now(state).await?.delete_from(state, filters).await
    }

    async fn update(
        &self,
        state: &dyn Session,
        assignments: Vec<(String, Expr)>,
        filters: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.now(state)
            .await?
            .update(state, assignments, filters)
            .await
    }

    async fn truncate(&self, state: &dyn Session) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.now(state).await?.truncate(state).await
    }

    async fn merge_into(
        &self,
        state: &dyn Session,
        source: Arc<dyn ExecutionPlan>,
        merge_schema: DFSchemaRef,
        on: Expr,
        clauses: Vec<MergeIntoClause>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.now(state)
            .await?
            .merge_into(state, source, merge_schema, on, clauses)
            .await
    }
}
