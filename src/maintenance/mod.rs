//! Table maintenance (spec: "Maintenance"; Spark's Iceberg procedures and Java's
//! actions): the work that keeps cheap commits from piling up snapshots, manifests and
//! small files until planning is slow.
//!
//! | function | Spark procedure | commits |
//! |---|---|---|
//! | [`expire_snapshots`] | `expire_snapshots` | [`ExpireSnapshots`](crate::transaction::ExpireSnapshots), then deletes what only expired snapshots reached |
//! | [`remove_orphan_files`] | `remove_orphan_files` | nothing: deletes files no metadata references |
//! | [`rewrite_manifests`] | `rewrite_manifests` | [`crate::transaction::RewriteManifests`] |
//! | `icefloe::datafusion::maintenance::rewrite_data_files` | `rewrite_data_files` | [`RewriteFiles`](crate::transaction::RewriteFiles) (reads and writes rows through DataFusion) |
//! | [`rewrite_position_delete_files`] | `rewrite_position_delete_files` | [`RewriteFiles`](crate::transaction::RewriteFiles) of delete files (v3: deletion vectors) |
//! | [`compute_partition_stats`] | `compute_partition_stats` | [`UpdatePartitionStatistics`](crate::transaction::UpdatePartitionStatistics) of a Parquet partition statistics file (written by the DataFusion layer) |
//! | [`rewrite_table_path`] | `rewrite_table_path` | nothing: rewritten copies of the metadata in a staging location and the list of files to copy |
//! | [`add_files`] | `add_files` | [`AppendFiles`](crate::transaction::AppendFiles) of existing Parquet files (and the name mapping when the table has none) |
//!
//! Every commit goes through [`crate::transaction::Transaction`] and
//! [`crate::catalog::Catalog::commit_table`], with its retries
//! and conflict checks. Files are deleted only after the commit that stops referencing
//! them succeeded.

mod add_files;
mod add_files_required;
mod expire;
mod expire_guard;
pub(crate) mod file_rewrite_sizes;
pub(crate) mod options;
mod orphan_files;
mod orphan_neighbours;
mod partition_stats;
mod partition_stats_incremental;
mod reachable;
mod rewrite_position_deletes;
pub mod rewrite_table_path;
mod table_stats;
pub mod zorder;

use std::sync::Arc;

pub use add_files::{add_files, AddFiles, AddFilesResult};
pub use expire::{expire_snapshots, ExpireOptions, ExpireSnapshotsResult};
pub use orphan_files::{remove_orphan_files, PrefixMismatchMode, RemoveOrphanFiles};
pub use partition_stats::{
    commit_partition_stats, compute_partition_stats, is_partitioned, partition_stats_location,
    partition_stats_schema, PartitionStats, UnifiedPartitionField,
};
pub use partition_stats_incremental::{
    compute_partition_stats_incremental, latest_ancestor_stats_file, IncrementalStats,
};
pub use rewrite_position_deletes::{
    rewrite_position_delete_files, RewritePositionDeleteFilesOptions,
    RewritePositionDeleteFilesResult, DELETE_TARGET_FILE_SIZE_BYTES,
    DELETE_TARGET_FILE_SIZE_BYTES_DEFAULT,
};
pub use rewrite_table_path::{rewrite_table_path, RewriteTablePath, RewriteTablePathResult};
pub use table_stats::{commit_table_stats, NdvSketch, APACHE_DATASKETCHES_THETA_V1, NDV_PROPERTY};

use crate::catalog::{Catalog, TableIdent};
use crate::error::Result;
use crate::table::Table;
use crate::transaction::{RewriteManifests, Transaction};

/// What [`rewrite_manifests`] did: Spark's `rewritten_manifests_count` and
/// `added_manifests_count`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewriteManifestsResult {
    /// Manifests of the current snapshot replaced.
    pub rewritten_manifests_count: usize,
    /// Manifests written in their place.
    pub added_manifests_count: usize,
}

/// Recluster the manifests of table `ident`'s current snapshot by partition (see
/// [`RewriteManifests`]); `target_size_bytes` overrides
/// `commit.manifest.target-size-bytes`; `spec_id` limits the rewrite to the manifests of
/// that partition spec (Spark's `spec_id`). A table without snapshots, or whose manifests
/// need no rewrite, is left as it is (zero counts). The counts are those of the snapshot
/// this call committed: when a retry after a concurrent commit finds the manifests
/// already reclustered (a concurrent rewrite did the work), nothing is committed, the
/// manifests an earlier attempt wrote are removed, and the counts are zero. Unlike Java's
/// `BaseRewriteManifests`, which rewrites a set of manifests chosen once and so fails when
/// they are gone from the refreshed snapshot, every attempt here reclusters the refreshed
/// snapshot: a table found already clustered is the state the call asked for.
///
/// Errors: a v1 or v3 table ([`ErrorKind::Unsupported`](crate::ErrorKind)), a target
/// size that is not positive, a `spec_id` the table does not have
/// ([`ErrorKind::InvalidArgument`](crate::ErrorKind), naming it), commit errors.
pub async fn rewrite_manifests(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    target_size_bytes: Option<i64>,
    spec_id: Option<i32>,
) -> Result<(Table, RewriteManifestsResult)> {
    let base = catalog.load_table(ident).await?;
    let Some(current) = base.metadata().current_snapshot().cloned() else {
        return Ok((base, RewriteManifestsResult::default()));
    };
    let mut action = RewriteManifests::new();
    let snapshot_id = action.snapshot_id();
    if let Some(t) = target_size_bytes {
        action = action.target_size_bytes(t);
    }
    if let Some(id) = spec_id {
        action = action.spec_id(id);
    }
    let committed = Transaction::new(Arc::clone(catalog), ident.clone(), base.clone())
        .add_action(action)
        .commit()
        .await?;
    // only this call's snapshot counts: a retry that found the manifests already
    // reclustered by a concurrent commit commits nothing and reports zero counts
    let Some(after) = committed.metadata().snapshot_by_id(snapshot_id).cloned() else {
        return Ok((committed, RewriteManifestsResult::default()));
    };
    // against the snapshot the rewrite replaced (its parent: a retry may have moved on
    // from `current`)
    let parent = after
        .parent_snapshot_id
        .and_then(|p| committed.metadata().snapshot_by_id(p))
        .unwrap_or(&current)
        .clone();
    let paths = |table: &Table, s| {
        let table = table.clone();
        async move {
            reachable::manifests_of(&table, &s, false).await.map(|m| {
                m.unwrap_or_default()
                    .into_iter()
                    .map(|f| f.manifest_path)
                    .collect::<std::collections::HashSet<String>>()
            })
        }
    };
    let old = paths(&committed, parent).await?;
    let new = paths(&committed, after).await?;
    Ok((
        committed,
        RewriteManifestsResult {
            rewritten_manifests_count: old.difference(&new).count(),
            added_manifests_count: new.difference(&old).count(),
        },
    ))
}
