//! `CALL system.compute_partition_stats(table => 'ns.t', snapshot_id => …)`: Spark's
//! procedure (Java `ComputePartitionStatsProcedure`, `ComputePartitionStatsSparkAction`).
//! It computes the partition statistics of the snapshot (default: the current snapshot;
//! [`crate::maintenance::compute_partition_stats`] has the counts), writes them as a
//! Parquet partition statistics file (module `partition_stats_file`) and commits it as
//! the snapshot's (REST `set-partition-statistics`). One row,
//! `partition_statistics_file`: the file's location. The rows are computed incrementally
//! from an ancestor's statistics file when that gives the full compute's rows (see
//! [`crate::datafusion::maintenance::partition_stats_rows`]).
//!
//! As in Java: a table without snapshots, or a snapshot without manifest entries, gives
//! no row and commits nothing; a snapshot that has a partition statistics file already
//! gives that file's location (nothing is written); a table none of whose specs has a
//! non-void field is refused ([`crate::ErrorKind::InvalidArgument`]).

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::procedures::Args;
use super::table_stats::{path_result, snapshot_argument};
use super::ResolvedTable;
use crate::datafusion::partition_stats_file::{
    partition_stats_rows, stats_partition_type, write_partition_stats_file,
};
use crate::error::{Error, Result};
use crate::maintenance::{commit_partition_stats, is_partitioned};

/// The procedure's result column.
const PARTITION_STATISTICS_FILE: &str = "partition_statistics_file";

/// Run `compute_partition_stats` of `table` with `args` (see the module docs).
///
/// Errors: a snapshot the table does not have ([`crate::ErrorKind::NotFound`]), an
/// unpartitioned table, reading the manifests, writing or committing the file.
pub(super) async fn compute_partition_stats_procedure(
    ctx: &SessionContext,
    table: &ResolvedTable,
    args: &Args,
) -> Result<DataFrame> {
    let catalog = table.target.catalog();
    let loaded = catalog.load_table(&table.ident).await?;
    let Some(snapshot) = snapshot_argument(&loaded, args)? else {
        return path_result(ctx, PARTITION_STATISTICS_FILE, None);
    };
    let metadata = loaded.metadata();
    if !is_partitioned(metadata) {
        return Err(Error::invalid_argument(
            "Table must be partitioned to compute partition statistics",
        ));
    }
    if let Some(existing) = metadata
        .partition_statistics
        .iter()
        .find(|f| f.snapshot_id == snapshot.snapshot_id)
    {
        return path_result(
            ctx,
            PARTITION_STATISTICS_FILE,
            Some(existing.statistics_path.clone()),
        );
    }
    let unified = stats_partition_type(metadata);
    let (rows, _) = partition_stats_rows(&loaded, &snapshot).await?;
    if rows.is_empty() {
        return path_result(ctx, PARTITION_STATISTICS_FILE, None);
    }
    let file = write_partition_stats_file(&loaded, snapshot.snapshot_id, &unified, &rows).await?;
    let path = file.statistics_path.clone();
    commit_partition_stats(catalog, &table.ident, &loaded, file).await?;
    path_result(ctx, PARTITION_STATISTICS_FILE, Some(path))
}
