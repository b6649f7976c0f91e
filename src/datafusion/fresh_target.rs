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
use datafusion::arrow::datatypes::{Field, Fields, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{
    Constraints, DFSchemaRef, DataFusionError, Result as DFResult, TableReference,
};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::dml::{InsertOp, MergeIntoClause};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;

use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;

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
    /// Errors: it no longer exists; its columns (names, types and field ids, in order)
    /// are not the ones the statement was prepared for; a column's write-default is not
    /// the one it was prepared with.
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
            let (now, then) = column_lists(now.fields(), then.fields());
            return Err(DataFusionError::Plan(format!(
                "{}: the columns of table {} changed since it was prepared (now ({now}), \
                 then ({then})); nothing was written; prepare it again",
                self.statement, self.table_name,
            )));
        }
        if let Some(column) = changed_default(table.as_ref(), self.prepared.as_ref()) {
            return Err(DataFusionError::Plan(format!(
                "{}: the write-default of column '{column}' of table {} changed since it \
                 was prepared; nothing was written; prepare it again",
                self.statement, self.table_name
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

/// Whether `a` and `b` are the same columns: names, types and Iceberg field ids
/// ([`PARQUET_FIELD_ID_META_KEY`] metadata), in order.
///
/// The field id counts: a column dropped and added again under its name and type
/// (`ALTER TABLE … DROP COLUMN v`, `ADD COLUMN v`; or `DROP TABLE` and a `CREATE TABLE`
/// assigning other ids) is another column (spec: "Columns are tracked by ID"), and a plan
/// made for the old one carries its id in its schema, which DataFusion's physical planner
/// refused against the new one ("Physical input schema should be the same as the one
/// converted from logical input schema").
pub(crate) fn same_columns(a: &Fields, b: &Fields) -> bool {
    let id = |f: &Field| f.metadata().get(PARQUET_FIELD_ID_META_KEY).cloned();
    a.len() == b.len()
        && a.iter()
            .zip(b.iter())
            .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type() && id(a) == id(b))
}

/// The first column of table `now` whose write-default (v3 `write-default`, as
/// [`TableProvider::get_column_default`] gives it) is not the one of `then`, the same
/// table as it was when a statement was prepared; `None` when all are the same.
///
/// A prepared `INSERT` that does not list a column (or writes `DEFAULT`) was planned
/// with the default of `PREPARE`; after `ALTER COLUMN … SET DEFAULT` or `DROP DEFAULT` it
/// must be planned again, as Spark, Trino and DuckDB bind defaults when a statement runs.
pub(crate) fn changed_default(now: &dyn TableProvider, then: &dyn TableProvider) -> Option<String> {
    now.schema()
        .fields()
        .iter()
        .map(|f| f.name())
        .find(|c| now.get_column_default(c) != then.get_column_default(c))
        .cloned()
}

/// `name type, …`, for messages.
pub(crate) fn columns(fields: &Fields) -> String {
    fields
        .iter()
        .map(|f| format!("{} {}", f.name(), f.data_type()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns `now` and `then` of a table as [`columns`] lists them, for a message
/// saying they changed; with each column's field id (`v Utf8 id 3`) when only ids
/// differ (a column dropped and added again under its name), which the lists would
/// otherwise not show.
pub(crate) fn column_lists(now: &Fields, then: &Fields) -> (String, String) {
    let (a, b) = (columns(now), columns(then));
    if a != b {
        return (a, b);
    }
    let with_ids = |fields: &Fields| {
        fields
            .iter()
            .map(|f| match f.metadata().get(PARQUET_FIELD_ID_META_KEY) {
                Some(id) => format!("{} {} id {id}", f.name(), f.data_type()),
                None => format!("{} {}", f.name(), f.data_type()),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    (with_ids(now), with_ids(then))
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
