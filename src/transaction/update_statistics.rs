//! [`UpdateStatistics`]: set or remove the statistics file of a snapshot (Java
//! `UpdateStatistics`; REST `set-statistics` and `remove-statistics`; spec: "Table
//! Statistics").
//!
//! A snapshot has at most one statistics file: setting one replaces the one it had.
//! Statistics describe a snapshot's rows and change no branch, so the commit asks nothing
//! of the table but that the snapshot is still there (as Java, which adds no requirement,
//! a retry re-applies the change to the refreshed table).

use async_trait::async_trait;

use super::TransactionAction;
use crate::error::{Error, Result};
use crate::spec::{StatisticsFile, TableUpdate};
use crate::table::Table;

/// Set or remove snapshots' statistics files in one commit.
#[derive(Debug, Clone, Default)]
pub struct UpdateStatistics {
    set: Vec<StatisticsFile>,
    removed: Vec<i64>,
    /// Statistics files this action's caller wrote for it: deleted when the commit fails.
    written: Vec<String>,
}

impl UpdateStatistics {
    /// No changes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `file` as the statistics of its snapshot (`file.snapshot_id`).
    pub fn set_statistics(mut self, file: StatisticsFile) -> Self {
        self.removed.retain(|id| *id != file.snapshot_id);
        self.set.retain(|f| f.snapshot_id != file.snapshot_id);
        self.set.push(file);
        self
    }

    /// [`Self::set_statistics`] of a file the caller wrote for this commit: deleted again
    /// when the commit fails.
    pub fn set_written_statistics(mut self, file: StatisticsFile) -> Self {
        self.written.push(file.statistics_path.clone());
        self.set_statistics(file)
    }

    /// Remove the statistics of snapshot `snapshot_id` (nothing when it has none).
    pub fn remove_statistics(mut self, snapshot_id: i64) -> Self {
        self.set.retain(|f| f.snapshot_id != snapshot_id);
        self.removed.push(snapshot_id);
        self
    }
}

#[async_trait]
impl TransactionAction for UpdateStatistics {
    /// Errors ([`crate::ErrorKind::NotFound`]): a snapshot the table no longer has (expired
    /// by a concurrent commit).
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        let m = table.metadata();
        let mut out = vec![];
        for file in &self.set {
            if m.snapshot_by_id(file.snapshot_id).is_none() {
                return Err(Error::not_found(format!(
                    "statistics for snapshot {}: the table has no such snapshot",
                    file.snapshot_id
                )));
            }
            out.push(TableUpdate::SetStatistics {
                snapshot_id: Some(file.snapshot_id),
                statistics: file.clone(),
            });
        }
        for id in &self.removed {
            if m.statistics.iter().any(|s| s.snapshot_id == *id) {
                out.push(TableUpdate::RemoveStatistics { snapshot_id: *id });
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
