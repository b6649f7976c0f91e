//! The snapshot summary (spec: "Snapshots", `summary`; Java `SnapshotSummary`): what a
//! snapshot added and removed, and the table totals after it.
//!
//! Totals (`total-records`, `total-data-files`, …) are the parent's totals plus this
//! snapshot's changes; they are left out when the parent's summary does not have them
//! (as Iceberg Java does), so a wrong total is never written.
//!
//! Delete files are counted by kind as Java does: a deletion vector (a position delete in
//! Puffin) counts in `added-dvs`/`removed-dvs` and its size is its blob's
//! `content_size_in_bytes`, other position delete files in
//! `added-position-delete-files`/`removed-position-delete-files`, equality delete files in
//! `added-equality-delete-files`/`removed-equality-delete-files`; all of them in
//! `added-delete-files`/`removed-delete-files`.

use std::collections::{BTreeSet, HashMap};

use crate::delete::is_deletion_vector;
use crate::spec::{DataContentType, DataFile, Literal};

/// Counts of one snapshot's changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct SnapshotSummary {
    added_data_files: i64,
    deleted_data_files: i64,
    added_delete_files: i64,
    removed_delete_files: i64,
    added_position_delete_files: i64,
    removed_position_delete_files: i64,
    added_equality_delete_files: i64,
    removed_equality_delete_files: i64,
    added_dvs: i64,
    removed_dvs: i64,
    added_records: i64,
    deleted_records: i64,
    added_files_size: i64,
    removed_files_size: i64,
    added_position_deletes: i64,
    removed_position_deletes: i64,
    added_equality_deletes: i64,
    removed_equality_deletes: i64,
    partitions: BTreeSet<(i32, String)>,
    /// Written as `replace-partitions=true` (Java `SnapshotSummary.REPLACE_PARTITIONS_PROP`,
    /// set by `BaseReplacePartitions`): the snapshot replaced the partitions of its files.
    pub(crate) replace_partitions: bool,
    /// A manifest rewrite's counts (Java `BaseRewriteManifests.summary()`), written when
    /// set.
    pub(crate) manifest_rewrite: Option<ManifestRewriteCounts>,
}

/// What a manifest rewrite did, as Java's `BaseRewriteManifests.summary()` records it
/// (`SnapshotSummary.CREATED_MANIFESTS_COUNT` … `PROCESSED_MANIFEST_ENTRY_COUNT`), each
/// written even when 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ManifestRewriteCounts {
    /// `manifests-created`: manifests the rewrite wrote.
    pub created: i64,
    /// `manifests-kept`: manifests of the parent carried over as they are.
    pub kept: i64,
    /// `manifests-replaced`: manifests of the parent rewritten (left out of the new list).
    pub replaced: i64,
    /// `entries-processed`: the live entries of the replaced manifests, each written
    /// again (Java counts each `appendEntry`).
    pub entries_processed: i64,
}

/// The snapshot summary property of a dynamic partition overwrite (Java
/// `SnapshotSummary.REPLACE_PARTITIONS_PROP`).
pub(crate) const REPLACE_PARTITIONS: &str = "replace-partitions";

fn partition_key(spec_id: i32, partition: &[Option<Literal>]) -> (i32, String) {
    (spec_id, format!("{partition:?}"))
}

/// The bytes a file counts for in `added-files-size`/`removed-files-size`: a deletion
/// vector's blob length, else the whole file (Java `ScanTaskUtil.contentSizeInBytes`).
fn content_size(file: &DataFile) -> i64 {
    if is_deletion_vector(file) {
        file.content_size_in_bytes
            .unwrap_or(file.file_size_in_bytes)
    } else {
        file.file_size_in_bytes
    }
}

impl SnapshotSummary {
    /// The summary of a manifest rewrite: no file added or removed, `counts` recorded.
    pub(crate) fn of_manifest_rewrite(counts: ManifestRewriteCounts) -> Self {
        Self {
            manifest_rewrite: Some(counts),
            ..Self::default()
        }
    }

    /// Count a file the snapshot adds (under spec `spec_id`).
    pub(crate) fn add(&mut self, spec_id: i32, file: &DataFile) {
        self.partitions
            .insert(partition_key(spec_id, &file.partition));
        self.added_files_size += content_size(file);
        match file.content {
            DataContentType::Data => {
                self.added_data_files += 1;
                self.added_records = self.added_records.saturating_add(file.record_count);
            }
            DataContentType::PositionDeletes => {
                self.added_delete_files += 1;
                if is_deletion_vector(file) {
                    self.added_dvs += 1;
                } else {
                    self.added_position_delete_files += 1;
                }
                self.added_position_deletes = self
                    .added_position_deletes
                    .saturating_add(file.record_count);
            }
            DataContentType::EqualityDeletes => {
                self.added_delete_files += 1;
                self.added_equality_delete_files += 1;
                self.added_equality_deletes = self
                    .added_equality_deletes
                    .saturating_add(file.record_count);
            }
        }
    }

    /// The summary of a snapshot adding `added` (spec id → files).
    pub(crate) fn of_added(added: &std::collections::BTreeMap<i32, Vec<DataFile>>) -> Self {
        let mut s = Self::default();
        for (spec_id, files) in added {
            for f in files {
                s.add(*spec_id, f);
            }
        }
        s
    }

    /// Count a file the snapshot removes (under spec `spec_id`).
    pub(crate) fn remove(&mut self, spec_id: i32, file: &DataFile) {
        self.partitions
            .insert(partition_key(spec_id, &file.partition));
        self.removed_files_size += content_size(file);
        match file.content {
            DataContentType::Data => {
                self.deleted_data_files += 1;
                self.deleted_records = self.deleted_records.saturating_add(file.record_count);
            }
            DataContentType::PositionDeletes => {
                self.removed_delete_files += 1;
                if is_deletion_vector(file) {
                    self.removed_dvs += 1;
                } else {
                    self.removed_position_delete_files += 1;
                }
                self.removed_position_deletes = self
                    .removed_position_deletes
                    .saturating_add(file.record_count);
            }
            DataContentType::EqualityDeletes => {
                self.removed_delete_files += 1;
                self.removed_equality_delete_files += 1;
                self.removed_equality_deletes = self
                    .removed_equality_deletes
                    .saturating_add(file.record_count);
            }
        }
    }

    /// The summary map (without `operation`), with totals from `previous` (the
    /// parent's summary; `None` for the first snapshot, whose totals start at 0).
    pub(crate) fn to_map(
        &self,
        previous: Option<&HashMap<String, String>>,
    ) -> HashMap<String, String> {
        let mut out = HashMap::new();
        let mut put = |k: &str, v: i64| {
            if v != 0 {
                out.insert(k.to_string(), v.to_string());
            }
        };
        put("added-data-files", self.added_data_files);
        put("deleted-data-files", self.deleted_data_files);
        put("added-delete-files", self.added_delete_files);
        put("removed-delete-files", self.removed_delete_files);
        put(
            "added-position-delete-files",
            self.added_position_delete_files,
        );
        put(
            "removed-position-delete-files",
            self.removed_position_delete_files,
        );
        put(
            "added-equality-delete-files",
            self.added_equality_delete_files,
        );
        put(
            "removed-equality-delete-files",
            self.removed_equality_delete_files,
        );
        put("added-dvs", self.added_dvs);
        put("removed-dvs", self.removed_dvs);
        put("added-records", self.added_records);
        put("deleted-records", self.deleted_records);
        put("added-files-size", self.added_files_size);
        put("removed-files-size", self.removed_files_size);
        put("added-position-deletes", self.added_position_deletes);
        put("removed-position-deletes", self.removed_position_deletes);
        put("added-equality-deletes", self.added_equality_deletes);
        put("removed-equality-deletes", self.removed_equality_deletes);
        if self.replace_partitions {
            out.insert(REPLACE_PARTITIONS.to_string(), "true".to_string());
        }
        if let Some(m) = &self.manifest_rewrite {
            for (k, v) in [
                ("manifests-created", m.created),
                ("manifests-kept", m.kept),
                ("manifests-replaced", m.replaced),
                ("entries-processed", m.entries_processed),
            ] {
                out.insert(k.to_string(), v.to_string());
            }
        }
        out.insert(
            "changed-partition-count".to_string(),
            self.partitions.len().to_string(),
        );
        let totals = [
            ("total-records", self.added_records - self.deleted_records),
            (
                "total-files-size",
                self.added_files_size - self.removed_files_size,
            ),
            (
                "total-data-files",
                self.added_data_files - self.deleted_data_files,
            ),
            (
                "total-delete-files",
                self.added_delete_files - self.removed_delete_files,
            ),
            (
                "total-position-deletes",
                self.added_position_deletes - self.removed_position_deletes,
            ),
            (
                "total-equality-deletes",
                self.added_equality_deletes - self.removed_equality_deletes,
            ),
        ];
        for (key, change) in totals {
            let before = match previous {
                None => Some(0),
                Some(p) => p.get(key).and_then(|v| v.parse::<i64>().ok()),
            };
            if let Some(before) = before {
                out.insert(key.to_string(), (before + change).max(0).to_string());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::DataFileFormat;
    use crate::write::empty_data_file;

    #[test]
    fn totals_follow_the_parent() {
        let mut f = empty_data_file("file:///t/a.parquet", DataContentType::Data);
        f.record_count = 10;
        f.file_size_in_bytes = 100;
        let mut s = SnapshotSummary::default();
        s.add(0, &f);
        let first = s.to_map(None);
        assert_eq!(first["added-records"], "10");
        assert_eq!(first["total-records"], "10");
        assert_eq!(first["total-data-files"], "1");
        let mut s2 = SnapshotSummary::default();
        s2.remove(0, &f);
        let second = s2.to_map(Some(&first));
        assert_eq!(second["deleted-records"], "10");
        assert_eq!(second["total-records"], "0");
        // a parent without totals: none are written
        let third = s2.to_map(Some(&HashMap::new()));
        assert!(!third.contains_key("total-records"));
    }

    #[test]
    fn delete_files_are_counted_by_kind_as_java_does() {
        let mut pos = empty_data_file("file:///t/p.parquet", DataContentType::PositionDeletes);
        pos.record_count = 3;
        pos.file_size_in_bytes = 500;
        let mut dv = empty_data_file("file:///t/d.puffin", DataContentType::PositionDeletes);
        dv.file_format = DataFileFormat::Puffin;
        dv.record_count = 2;
        dv.file_size_in_bytes = 900;
        dv.content_size_in_bytes = Some(40);
        let mut eq = empty_data_file("file:///t/e.parquet", DataContentType::EqualityDeletes);
        eq.record_count = 5;
        eq.file_size_in_bytes = 300;
        let mut s = SnapshotSummary::default();
        s.add(0, &pos);
        s.add(0, &dv);
        s.add(0, &eq);
        let added = s.to_map(None);
        assert_eq!(added["added-delete-files"], "3");
        assert_eq!(added["added-position-delete-files"], "1");
        assert_eq!(added["added-dvs"], "1");
        assert_eq!(added["added-equality-delete-files"], "1");
        assert_eq!(added["added-position-deletes"], "5");
        assert_eq!(added["added-equality-deletes"], "5");
        // a DV counts its blob, not the Puffin file
        assert_eq!(added["added-files-size"], "840");
        let mut r = SnapshotSummary::default();
        r.remove(0, &dv);
        let removed = r.to_map(Some(&added));
        assert_eq!(removed["removed-dvs"], "1");
        assert_eq!(removed["removed-delete-files"], "1");
        assert!(!removed.contains_key("removed-position-delete-files"));
        assert_eq!(removed["removed-files-size"], "40");
        assert_eq!(removed["total-delete-files"], "2");
        assert_eq!(removed["total-files-size"], "800");
    }
}
