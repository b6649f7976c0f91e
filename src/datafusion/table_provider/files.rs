//! [`FileSetTable`]: a fixed set of a table's data files as a DataFusion table, read
//! without deletes — what an incremental changelog scan reads (the files a snapshot
//! added or removed), as Java's `BaseAddedRowsScanTask` / `BaseDeletedDataFileScanTask`
//! read them with no delete files.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::Result as DFResult;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;

use super::{Hidden, IcebergTableProvider};
use crate::datafusion::delete_planning::{DeletePlan, PlannedFile};
use crate::scan::FileScanTask;

/// The rows of `files` (data files of `provider`'s table), in the provider's schema
/// (columns matched by field id, so files written under older schemas read as the
/// current one). No delete file is applied.
#[derive(Debug, Clone)]
pub(crate) struct FileSetTable {
    provider: IcebergTableProvider,
    files: Vec<FileScanTask>,
}

impl FileSetTable {
    /// `files` of `provider`'s table.
    pub(crate) fn new(provider: IcebergTableProvider, files: Vec<FileScanTask>) -> Self {
        Self { provider, files }
    }
}

#[async_trait]
impl TableProvider for FileSetTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(self.provider.arrow_schema())
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let plan = DeletePlan {
            files: self
                .files
                .iter()
                .cloned()
                .map(PlannedFile::without_deletes)
                .collect(),
            ..Default::default()
        };
        Ok(self
            .provider
            .build_scan(state, plan, projection, &[], limit, Hidden::None)?)
    }
}
