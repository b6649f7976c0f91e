//! [`UpdatePartitionStatistics`]: set or remove the partition statistics file of a snapshot
//! (Java `UpdatePartitionStatistics`; REST `set-partition-statistics` and
//! `remove-partition-statistics`; spec: "Partition Statistics").
//!
//! A snapshot has at most one partition statistics file: setting one replaces the one it
//! had. Like table statistics, they change no branch, so the commit asks nothing of the
//! table but that the snapshot is still there (as Java, which adds no requirement, a
//! retry re-applies the change to the refreshed table).

use async_trait::async_trait;

use super::TransactionAction;
use crate::error::{Error, Result};
use crate::spec::{PartitionStatisticsFile, TableUpdate};
use crate::table::Table;

/// Set or remove snapshots' partition statistics files in one commit.
#[derive(Debug, Clone, Default)]
pub struct UpdatePartitionStatistics {
    set: Vec<PartitionStatisticsFile>,
    removed: Vec<i64>,
    /// Files this action's caller wrote for it: deleted when the commit fails.
    written: Vec<String>,
}

impl UpdatePartitionStatistics {
    /// No changes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `file` as the partition statistics of its snapshot (`file.snapshot_id`).
    pub fn set_partition_statistics(mut self, file: PartitionStatisticsFile) -> Self {
        self.removed.retain(|id| *id != file.snapshot_id);
        self.set.retain(|f| f.snapshot_id != file.snapshot_id);
        self.set.push(file);
        self
    }

    /// [`Self::set_partition_statistics`] of a file the caller wrote for this commit:
    /// deleted again when the commit fails.
    pub fn set_written_partition_statistics(mut self, file: PartitionStatisticsFile) -> Self {
        self.written.push(file.statistics_path.clone());
        self.set_partition_statistics(file)
    }

    /// Remove the partition statistics of snapshot `snapshot_id` (nothing when it has
    /// none).
    pub fn remove_partition_statistics(mut self, snapshot_id: i64) -> Self {
        self.set.retain(|f| f.snapshot_id != snapshot_id);
        self.removed.push(snapshot_id);
        self
    }
}

#[async_trait]
impl TransactionAction for UpdatePartitionStatistics {
    /// Errors ([`crate::ErrorKind::NotFound`]): a snapshot the table no longer has (expired
    /// by a concurrent commit).
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        let m = table.metadata();
        let mut out = vec![];
        for file in &self.set {
            if m.snapshot_by_id(file.snapshot_id).is_none() {
                return Err(Error::not_found(format!(
                    "partition statistics for snapshot {}: the table has no such snapshot",
                    file.snapshot_id
                )));
            }
            out.push(TableUpdate::SetPartitionStatistics {
                partition_statistics: file.clone(),
            });
        }
        for id in &self.removed {
            if m.partition_statistics.iter().any(|s| s.snapshot_id == *id) {
                out.push(TableUpdate::RemovePartitionStatistics { snapshot_id: *id });
            }
        }
        Ok(out)
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        for location in std::mem::take(&mut self.written) {
            if !committed {
                // best effort: a file left behind is an orphan, never a wrong table
                let _ = table.file_io().delete(&location).await;
            }
        }
    }
}
