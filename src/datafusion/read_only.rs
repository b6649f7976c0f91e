//! [`ReadOnlyTable`]: a table provider that reads through another and refuses every
//! change. Metadata tables (`t$files`, `t$snapshots`, …) are built in memory; without it
//! a `DELETE` or `UPDATE` of one would change that copy and report rows changed while
//! the Iceberg table stays as it was.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::{not_impl_err, Result as DFResult};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;

/// Reads `inner`; `INSERT`, `DELETE`, `UPDATE`, `TRUNCATE` and `MERGE` fail with an error
/// naming `what`.
#[derive(Debug)]
pub struct ReadOnlyTable {
    inner: Arc<dyn TableProvider>,
    what: String,
}

impl ReadOnlyTable {
    /// `inner`, read-only; `what` names it in errors (e.g. "metadata table 'ns.t$files'").
    pub fn new(inner: Arc<dyn TableProvider>, what: impl Into<String>) -> Self {
        Self {
            inner,
            what: what.into(),
        }
    }

    /// What the table is, as errors name it (e.g. "metadata table 'files' of the table
    /// at '…'").
    pub fn what(&self) -> &str {
        &self.what
    }
}

#[async_trait]
impl TableProvider for ReadOnlyTable {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.inner.scan(state, projection, filters, limit).await
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DFResult<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        _input: Arc<dyn ExecutionPlan>,
        _op: InsertOp,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        not_impl_err!("{} is read-only", self.what)
    }

    async fn delete_from(
        &self,
        _state: &dyn Session,
        _filters: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        not_impl_err!("{} is read-only", self.what)
    }

    async fn update(
        &self,
        _state: &dyn Session,
        _assignments: Vec<(String, Expr)>,
        _filters: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        not_impl_err!("{} is read-only", self.what)
    }

    async fn truncate(&self, _state: &dyn Session) -> DFResult<Arc<dyn ExecutionPlan>> {
        not_impl_err!("{} is read-only", self.what)
    }
}
