//! Partition statistics computed incrementally (Java 1.10 `PartitionStatsHandler.
//! computeAndWriteStatsFile`): start from the statistics file of the snapshot's latest
//! ancestor that has one (itself excluded: its own file is the answer) and count only
//! what changed since, instead of reading every manifest.
//!
//! The rows must be those of a full compute ([`crate::maintenance::compute_partition_stats`]), always. A full
//! compute's rows are a sum over the snapshot's manifests (counts add up; the last update
//! is the latest still-existing snapshot of any entry; a row exists when any entry names
//! its partition). So when every manifest of the ancestor's snapshot is still listed by
//! the snapshot, its rows are the ancestor's rows plus the new manifests' entries,
//! counted as a full compute counts them; this is what is computed here. Otherwise the
//! full compute is needed, and [`IncrementalStats::FullComputeNeeded`] says why:
//!
//! - a manifest of the ancestor was replaced (a delete, overwrite, compaction or manifest
//!   rewrite): its entries no longer count, and the last update a row keeps, or whether
//!   the row is there at all, depends on entries the file does not hold. (Java's
//!   incremental compute subtracts the deleted entries of the snapshots since; it keeps a
//!   row of zeros, and a last update, that a full compute — its own as well — drops once
//!   the deleted entries are gone from the manifests.)
//! - a row's `last_updated_snapshot_id` names a snapshot that expired since (a full
//!   compute takes the latest snapshot still in the table);
//! - the file cannot be used (see [`crate::datafusion::maintenance::partition_stats_rows`]).

use std::collections::HashSet;

use super::partition_stats::{manifest_list, StatsAccumulator};
use super::{PartitionStats, UnifiedPartitionField};
use crate::error::Result;
use crate::spec::{PartitionStatisticsFile, Snapshot, TableMetadata};
use crate::table::Table;

/// What [`compute_partition_stats_incremental`] gave.
#[derive(Debug, Clone, PartialEq)]
pub enum IncrementalStats {
    /// The rows (as [`crate::maintenance::compute_partition_stats`] gives them) and how many manifests were
    /// read for them.
    Computed {
        /// The rows, sorted.
        rows: Vec<PartitionStats>,
        /// The manifests read: those the snapshot lists and the base snapshot did not.
        manifests_read: usize,
    },
    /// The base file cannot give the full compute's rows; why.
    FullComputeNeeded(String),
}

/// The partition statistics file of the latest ancestor of `snapshot` (itself included)
/// that has one, as Java's `PartitionStatsHandler.latestStatsFile`: parents are followed
/// while they are in the table.
pub fn latest_ancestor_stats_file<'a>(
    metadata: &'a TableMetadata,
    snapshot: &Snapshot,
) -> Option<&'a PartitionStatisticsFile> {
    let mut id = Some(snapshot.snapshot_id);
    let mut seen = HashSet::new();
    while let Some(current) = id {
        if !seen.insert(current) {
            return None;
        }
        if let Some(file) = metadata
            .partition_statistics
            .iter()
            .find(|f| f.snapshot_id == current)
        {
            return Some(file);
        }
        id = metadata
            .snapshot_by_id(current)
            .and_then(|s| s.parent_snapshot_id);
    }
    None
}

/// The statistics of `snapshot` from `base_rows`, the rows of statistics file `base` of
/// another snapshot (an ancestor), and the manifests `snapshot` lists that `base`'s
/// snapshot did not (see the module docs); `unified` is the table's unified partition
/// type, in which `base_rows` hold their tuples.
///
/// Errors: an unpartitioned table ([`crate::ErrorKind::InvalidArgument`]); reading a
/// manifest list or manifest ([`crate::ErrorKind::Io`], [`crate::ErrorKind::NotFound`]
/// naming the file).
pub async fn compute_partition_stats_incremental(
    table: &Table,
    snapshot: &Snapshot,
    base: &PartitionStatisticsFile,
    base_rows: Vec<PartitionStats>,
    unified: &[UnifiedPartitionField],
) -> Result<IncrementalStats> {
    let metadata = table.metadata();
    let need = |why: String| Ok(IncrementalStats::FullComputeNeeded(why));
    let Some(base_snapshot) = metadata.snapshot_by_id(base.snapshot_id) else {
        return need(format!("snapshot {} expired", base.snapshot_id));
    };
    let mut stats = StatsAccumulator::new(table, unified)?;
    for row in base_rows {
        if metadata.partition_spec_by_id(row.spec_id).is_none() {
            return need(format!(
                "a row of partition spec {} the table lacks",
                row.spec_id
            ));
        }
        if let Some(id) = row.last_updated_snapshot_id {
            if metadata.snapshot_by_id(id).is_none() {
                return need(format!(
                    "a row last updated by snapshot {id}, expired since"
                ));
            }
        }
        if !stats.insert_row(row) {
            return need("two rows of one partition".to_string());
        }
    }
    let base_manifests: HashSet<String> = manifest_list(table, base_snapshot)
        .await?
        .into_iter()
        .map(|m| m.manifest_path)
        .collect();
    let manifests = manifest_list(table, snapshot).await?;
    let kept = manifests
        .iter()
        .filter(|m| base_manifests.contains(&m.manifest_path))
        .count();
    if kept < base_manifests.len() {
        return need(format!(
            "{} manifests of snapshot {} were replaced since",
            base_manifests.len() - kept,
            base.snapshot_id
        ));
    }
    let mut manifests_read = 0;
    for manifest in manifests
        .iter()
        .filter(|m| !base_manifests.contains(&m.manifest_path))
    {
        stats.add_manifest(manifest).await?;
        manifests_read += 1;
    }
    Ok(IncrementalStats::Computed {
        rows: stats.into_sorted(),
        manifests_read,
    })
}
