//! The changes [`UpdateStatistics`](super::UpdateStatistics) and
//! [`UpdatePartitionStatistics`](super::UpdatePartitionStatistics) make: per-snapshot files
//! set or removed (a snapshot has at most one of each kind: setting one replaces the one it
//! had), the updates they commit, and the files their callers wrote, deleted again when
//! the commit fails.

use crate::error::{Error, Result};
use crate::spec::{PartitionStatisticsFile, StatisticsFile, TableMetadata, TableUpdate};
use crate::table::Table;

/// A kind of file a table keeps at most one of per snapshot.
pub(super) trait SnapshotFile: Clone {
    /// How errors name the kind (`statistics`, `partition statistics`).
    const KIND: &'static str;
    /// The snapshot the file describes.
    fn snapshot_id(&self) -> i64;
    /// The file's location.
    fn path(&self) -> &str;
    /// The update that sets the file on its snapshot.
    fn set_update(&self) -> TableUpdate;
    /// The update that removes snapshot `snapshot_id`'s file of this kind.
    fn remove_update(snapshot_id: i64) -> TableUpdate;
    /// Whether `m` holds a file of this kind for snapshot `snapshot_id`.
    fn held(m: &TableMetadata, snapshot_id: i64) -> bool;
    /// Whether `m` lists a file of this kind at `path`.
    fn listed(m: &TableMetadata, path: &str) -> bool;
}

impl SnapshotFile for StatisticsFile {
    const KIND: &'static str = "statistics";
    fn snapshot_id(&self) -> i64 {
        self.snapshot_id
    }
    fn path(&self) -> &str {
        &self.statistics_path
    }
    fn set_update(&self) -> TableUpdate {
        TableUpdate::SetStatistics {
            snapshot_id: Some(self.snapshot_id),
            statistics: self.clone(),
        }
    }
    fn remove_update(snapshot_id: i64) -> TableUpdate {
        TableUpdate::RemoveStatistics { snapshot_id }
    }
    fn held(m: &TableMetadata, snapshot_id: i64) -> bool {
        m.statistics.iter().any(|s| s.snapshot_id == snapshot_id)
    }
    fn listed(m: &TableMetadata, path: &str) -> bool {
        m.statistics.iter().any(|s| s.statistics_path == path)
    }
}

impl SnapshotFile for PartitionStatisticsFile {
    const KIND: &'static str = "partition statistics";
    fn snapshot_id(&self) -> i64 {
        self.snapshot_id
    }
    fn path(&self) -> &str {
        &self.statistics_path
    }
    fn set_update(&self) -> TableUpdate {
        TableUpdate::SetPartitionStatistics {
            partition_statistics: self.clone(),
        }
    }
    fn remove_update(snapshot_id: i64) -> TableUpdate {
        TableUpdate::RemovePartitionStatistics { snapshot_id }
    }
    fn held(m: &TableMetadata, snapshot_id: i64) -> bool {
        m.partition_statistics
            .iter()
            .any(|s| s.snapshot_id == snapshot_id)
    }
    fn listed(m: &TableMetadata, path: &str) -> bool {
        m.partition_statistics
            .iter()
            .any(|s| s.statistics_path == path)
    }
}

/// Files of kind `F` set or removed in one commit.
#[derive(Debug, Clone)]
pub(super) struct SnapshotFileChanges<F> {
    set: Vec<F>,
    removed: Vec<i64>,
    /// Files the caller wrote for this commit: deleted when the commit fails.
    written: Vec<String>,
}

impl<F> Default for SnapshotFileChanges<F> {
    fn default() -> Self {
        Self {
            set: vec![],
            removed: vec![],
            written: vec![],
        }
    }
}

impl<F: SnapshotFile> SnapshotFileChanges<F> {
    /// Set `file` on its snapshot (replacing an earlier change of that snapshot).
    pub(super) fn set(&mut self, file: F) {
        let id = file.snapshot_id();
        self.removed.retain(|r| *r != id);
        self.set.retain(|f| f.snapshot_id() != id);
        self.set.push(file);
    }

    /// [`Self::set`] of a file the caller wrote for this commit.
    pub(super) fn set_written(&mut self, file: F) {
        self.written.push(file.path().to_string());
        self.set(file);
    }

    /// Remove snapshot `snapshot_id`'s file (nothing when it has none).
    pub(super) fn remove(&mut self, snapshot_id: i64) {
        self.set.retain(|f| f.snapshot_id() != snapshot_id);
        self.removed.push(snapshot_id);
    }

    /// The updates of the changes on `table`.
    ///
    /// Errors ([`crate::ErrorKind::NotFound`]): a snapshot the table no longer has (expired
    /// by a concurrent commit).
    pub(super) fn updates(&self, table: &Table) -> Result<Vec<TableUpdate>> {
        let m = table.metadata();
        let mut out = vec![];
        for file in &self.set {
            if m.snapshot_by_id(file.snapshot_id()).is_none() {
                return Err(Error::not_found(format!(
                    "{} for snapshot {}: the table has no such snapshot",
                    F::KIND,
                    file.snapshot_id()
                )));
            }
            out.push(file.set_update());
        }
        for id in &self.removed {
            if F::held(m, *id) {
                out.push(F::remove_update(*id));
            }
        }
        Ok(out)
    }

    /// Delete the files the caller wrote unless the commit succeeded and the committed
    /// `table` lists them (a file set and then removed again, or a commit that had
    /// nothing to change, leaves one unused).
    pub(super) async fn clean_up(&mut self, table: &Table, committed: bool) {
        for location in std::mem::take(&mut self.written) {
            if !(committed && F::listed(table.metadata(), &location)) {
                // best effort: a file left behind is an orphan, never a wrong table
                let _ = table.file_io().delete(&location).await;
            }
        }
    }
}
