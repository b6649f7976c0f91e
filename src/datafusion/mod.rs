//! STUB: being written.
use std::sync::Arc;
use ::datafusion::prelude::SessionContext;
use crate::error::{Error, Result};
use crate::table::Table;

#[derive(Debug)]
pub struct IcebergTableProvider {}
#[derive(Debug, Default)]
pub struct IcebergTableProviderFactory {}

impl IcebergTableProvider {
    pub async fn open(location: &str) -> Result<Self> { Self::try_new(Table::open(location).await?) }
    pub fn try_new(_table: Table) -> Result<Self> { Err(Error::unsupported("stub")) }
    pub fn with_snapshot_id(self, _id: i64) -> Result<Self> { Err(Error::unsupported("stub")) }
    pub fn with_ref(self, _name: &str) -> Result<Self> { Err(Error::unsupported("stub")) }
}
pub fn register_iceberg_factory(_ctx: &SessionContext) { let _ = Arc::new(IcebergTableProviderFactory::default()); }

use ::datafusion::arrow::datatypes::{Schema, SchemaRef};
use ::datafusion::catalog::Session;
use ::datafusion::datasource::{TableProvider, TableType};
use ::datafusion::logical_expr::Expr;
use ::datafusion::physical_plan::ExecutionPlan;

#[async_trait::async_trait]
impl TableProvider for IcebergTableProvider {
    fn as_any(&self) -> &dyn std::any::Any { self }
    fn schema(&self) -> SchemaRef { Arc::new(Schema::empty()) }
    fn table_type(&self) -> TableType { TableType::Base }
    async fn scan(&self, _s: &dyn Session, _p: Option<&Vec<usize>>, _f: &[Expr], _l: Option<usize>) -> ::datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        Err(Error::unsupported("stub").into())
    }
}
