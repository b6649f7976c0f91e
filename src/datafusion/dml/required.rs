//! The rows a row-level statement writes (`UPDATE`'s new versions, `MERGE`'s updated and
//! inserted rows) hold a value in every required column (spec: "Schemas and Data Types":
//! a `required` field is never null), checked before they are assembled, so the error
//! names the column as `INSERT`'s does rather than Arrow's batch check.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::SchemaRef;

use crate::error::{Error, Result};

/// `columns` (the table's top-level columns, in order) as a batch of `schema`, the
/// table's Arrow schema; `clause` says what wrote them (`UPDATE SET`, `MERGE UPDATE`,
/// `MERGE INSERT`).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): a null in a required column, naming
/// the column and `clause`; columns that do not fit `schema`.
pub(super) fn table_rows(
    schema: &SchemaRef,
    columns: Vec<ArrayRef>,
    clause: &str,
) -> Result<RecordBatch> {
    for (field, column) in schema.fields().iter().zip(&columns) {
        let nulls = column.logical_nulls().map_or(0, |n| n.null_count());
        if !field.is_nullable() && nulls > 0 {
            return Err(Error::invalid_argument(format!(
                "column '{}' is required (NOT NULL) but a row to write holds null for it \
                 ({clause} gives it null)",
                field.name()
            )));
        }
    }
    Ok(RecordBatch::try_new(Arc::clone(schema), columns)?)
}
