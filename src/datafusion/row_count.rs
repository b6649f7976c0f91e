//! A scan that reads no column, answered from the manifest list (issue 18, item 5).
//!
//! `SELECT count(*) FROM t` asks the provider for no column and no filter: only the
//! number of rows matters. When the manifest list alone gives the snapshot's live row
//! count ([`TableScan::live_row_count`](crate::scan::TableScan::live_row_count): no live
//! delete manifest, every data manifest with its row counts), the scan is those rows
//! without columns, held in DataFusion's `MemorySourceConfig` as zero-column record
//! batches (no memory per row). Its statistics carry the count as *exact*, so
//! DataFusion's `AggregateStatistics` rule answers `COUNT(*)` from it at planning time;
//! run anyway (`SELECT 1 FROM t`), it yields that many rows. No manifest and no data
//! file is opened.

use std::sync::Arc;

use datafusion::arrow::datatypes::Schema as ArrowSchema;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::ExecutionPlan;

use crate::error::{Error, Result};

/// At most this many batches are made (larger batches for larger counts), so that a
/// count of billions of rows costs a few kilobytes.
const MAX_BATCHES: u64 = 1024;

/// A plan producing `rows` rows with no columns (at most `limit` of them), in batches of
/// at least `batch_size` rows (see the module docs).
///
/// Errors: a count beyond `usize` (a 32-bit target), naming it.
pub(crate) fn rows_without_columns(
    rows: u64,
    limit: Option<usize>,
    batch_size: usize,
) -> Result<Arc<dyn ExecutionPlan>> {
    let rows = match limit {
        Some(l) => rows.min(u64::try_from(l).unwrap_or(u64::MAX)),
        None => rows,
    };
    let schema = Arc::new(ArrowSchema::empty());
    if rows == 0 {
        return Ok(Arc::new(EmptyExec::new(schema)));
    }
    let per_batch = (batch_size.max(1) as u64).max(rows.div_ceil(MAX_BATCHES));
    let mut batches = Vec::new();
    let mut left = rows;
    while left > 0 {
        let n = left.min(per_batch);
        let count = usize::try_from(n)
            .map_err(|_| Error::unsupported(format!("a batch of {n} rows on this platform")))?;
        let options = RecordBatchOptions::new().with_row_count(Some(count));
        batches.push(RecordBatch::try_new_with_options(
            Arc::clone(&schema),
            vec![],
            &options,
        )?);
        left -= n;
    }
    Ok(MemorySourceConfig::try_new_exec(&[batches], schema, None)?)
}

#[cfg(test)]
mod tests {
    use datafusion::common::stats::Precision;
    use datafusion::physical_plan::statistics::{StatisticsArgs, StatisticsContext};
    use datafusion::prelude::SessionContext;

    use super::*;

    #[tokio::test]
    async fn yields_the_rows_with_exact_statistics() {
        let ctx = SessionContext::new();
        for (rows, limit, batch, batches) in [
            (0, None, 8192, 0),
            (10_000, None, 8192, 2),
            (10_000, Some(5), 8192, 1),
            (5_000_000_000, None, 8192, 1024),
        ] {
            let plan = rows_without_columns(rows, limit, batch).expect("plan");
            let expected = limit.map_or(rows, |l| rows.min(l as u64));
            assert_eq!(
                StatisticsContext::new()
                    .compute(plan.as_ref(), &StatisticsArgs::new())
                    .expect("stats")
                    .num_rows,
                Precision::Exact(expected as usize)
            );
            if rows < 1_000_000 {
                let out = datafusion::physical_plan::collect(plan, ctx.task_ctx())
                    .await
                    .expect("run");
                assert_eq!(out.len(), batches);
                let total: usize = out.iter().map(|b| b.num_rows()).sum();
                assert_eq!(total as u64, expected);
            }
        }
    }
}
