//! [`UpdateStatistics`]: set or remove the statistics file of a snapshot (Java
//! `UpdateStatistics`; REST `set-statistics` and `remove-statistics`; spec: "Table
//! Statistics").
//!
//! A snapshot has at most one statistics file: setting one replaces the one it had.
//! Statistics describe a snapshot's rows and change no branch, so the commit asks nothing
//! of the table but that the snapshot is still there (as Java, which adds no requirement,
//! a retry re-applies the change to the refreshed table).

use async_trait::async_trait;

use super::snapshot_files::SnapshotFileChanges;
use super::TransactionAction;
use crate::error::Result;
use crate::spec::{StatisticsFile, TableUpdate};
use crate::table::Table;

/// Set or remove snapshots' statistics files in one commit.
#[derive(Debug, Clone, Default)]
pub struct UpdateStatistics {
    changes: SnapshotFileChanges<StatisticsFile>,
}

impl UpdateStatistics {
    /// No changes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `file` as the statistics of its snapshot (`file.snapshot_id`).
    pub fn set_statistics(mut self, file: StatisticsFile) -> Self {
        self.changes.set(file);
        self
    }

    /// [`Self::set_statistics`] of a file the caller wrote for this commit: deleted again
    /// when the commit fails.
    pub fn set_written_statistics(mut self, file: StatisticsFile) -> Self {
        self.changes.set_written(file);
        self
    }

    /// Remove the statistics of snapshot `snapshot_id` (nothing when it has none).
    pub fn remove_statistics(mut self, snapshot_id: i64) -> Self {
        self.changes.remove(snapshot_id);
        self
    }
}

#[async_trait]
impl TransactionAction for UpdateStatistics {
    /// Errors ([`crate::ErrorKind::NotFound`]): a snapshot the table no longer has (expired
    /// by a concurrent commit).
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        self.changes.updates(table)
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        self.changes.clean_up(table, committed).await
    }
}
