//! Which version of a data or delete file a manifest entry lists: the key under which a
//! session's caches keep what they learned from the file's bytes.
//!
//! The spec makes files immutable (spec: "Overview": files are written once and only
//! added to and removed from tables by snapshots), but it does not make a *path* name
//! one file forever: a file can leave the table in one commit and a file at the same
//! path, with other contents, can be added by a later one (Java's `add_files` checks
//! only the live files for duplicates; PyIceberg's `add_files` likewise; a writer reusing
//! file names does it too). The new manifest entry then describes the new file (its
//! record count, bounds, size). A cache keyed by the path alone, or by the path and
//! `file_size_in_bytes`, would hand a scan what it learned from the old bytes: a footer
//! whose row-group statistics prune rows that exist, checks that passed for other column
//! types, decoded deletes of another file.
//!
//! So every per-session cache keyed by a data or delete file's path keys it by the path
//! together with the [`FileVersion`] its manifest entry gives:
//! - `snapshot_id`: the snapshot that added the file (inherited when null; kept by
//!   EXISTING and DELETED entries, so rewritten and merged manifests keep it; spec:
//!   "Manifests", `snapshot_id`). A re-add is a new commit, hence another snapshot id, in
//!   every format version (in v1 the sequence numbers are all 0).
//! - `data_sequence_number`: also kept by rewritten manifests; a re-add gets a new one
//!   in v2 and later.
//! - `file_size_in_bytes` and `record_count`, as recorded.
//!
//! The same version of a file keeps its key across snapshots, queries and manifest
//! rewrites, so a second scan of an unchanged table hits every cache. A key can only be
//! too specific (a writer that rewrote EXISTING entries with new ids would cost a cache
//! miss, never a wrong answer).
//!
//! DataFusion's file-metadata cache (the Parquet footers) keys entries by object path
//! and checks the `size` and `last_modified` of the `ObjectMeta` a scan hands it; a
//! scan's files have no modification time of their own (reading one would cost a HEAD
//! request a file), so their `last_modified` is [`FileVersion::last_modified`], derived
//! from the adding snapshot's id: a re-added file at the same path gets another one and
//! its footer is read again.
//!
//! A file overwritten in place, with no commit (the spec forbids it), keeps its entry and
//! so its key: a session that cached its footer keeps reading with that footer (wrong
//! rows, or an error when the layout changed) until it ends, as every reader caching
//! immutable files does; a new session reads the new footer. A size that differs from the
//! manifest's is reported as "the file was replaced or truncated".

use chrono::{DateTime, Utc};

use crate::spec::ManifestEntry;

/// What a manifest entry says about the version of the file it lists (see the module
/// docs). Equal for the same file under every snapshot and manifest rewrite; differs for
/// a file re-added at the same path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileVersion {
    /// The id of the snapshot that added the file.
    pub snapshot_id: i64,
    /// The entry's data sequence number.
    pub data_sequence_number: i64,
    /// `file_size_in_bytes` (bytes).
    pub file_size_in_bytes: i64,
    /// `record_count` (rows; for a delete file, deletes).
    pub record_count: i64,
}

impl FileVersion {
    /// The version of the file `entry` lists (inherited values filled in).
    pub fn of(entry: &ManifestEntry) -> Self {
        Self {
            snapshot_id: entry.snapshot_id,
            data_sequence_number: entry.data_sequence_number,
            file_size_in_bytes: entry.data_file.file_size_in_bytes,
            record_count: entry.data_file.record_count,
        }
    }

    /// The `last_modified` handed to DataFusion for this file: the adding snapshot's id
    /// as nanoseconds since the epoch (any `i64` is a valid instant, and it survives
    /// DataFusion's plan serialization, which keeps nanoseconds). DataFusion's footer
    /// cache reads the footer again when it differs from the cached one's, as it does
    /// for a file the store says was modified.
    pub fn last_modified(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_nanos(self.snapshot_id)
    }

    /// `location` (as read, after remapping) keyed with this version, for the caches
    /// keyed by strings: the location, a line break (which no location the metadata
    /// names ends with before it), then the version.
    pub fn key(&self, location: &str) -> String {
        format!(
            "{location}\nsnapshot={} seq={} size={} records={}",
            self.snapshot_id, self.data_sequence_number, self.file_size_in_bytes, self.record_count
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{DataContentType, ManifestStatus};
    use crate::write::empty_data_file;

    fn entry(snapshot_id: i64, seq: i64, size: i64, records: i64) -> ManifestEntry {
        let mut data_file = empty_data_file("s3://b/t/data/f.parquet", DataContentType::Data);
        data_file.file_size_in_bytes = size;
        data_file.record_count = records;
        ManifestEntry {
            status: ManifestStatus::Added,
            snapshot_id,
            data_sequence_number: seq,
            file_sequence_number: seq,
            spec_id: 0,
            data_file,
        }
    }

    #[test]
    fn a_re_added_file_has_another_version_and_a_kept_one_the_same() {
        let first = FileVersion::of(&entry(11, 1, 666, 3));
        // the same entry carried over by a later snapshot or a manifest rewrite
        let mut kept = entry(11, 1, 666, 3);
        kept.status = ManifestStatus::Existing;
        kept.file_sequence_number = 5;
        assert_eq!(FileVersion::of(&kept), first);
        assert_eq!(
            FileVersion::of(&kept).key("f"),
            first.key("f"),
            "the key of an unchanged file"
        );
        assert_eq!(
            FileVersion::of(&kept).last_modified(),
            first.last_modified()
        );
        // re-added at the same path and size: another commit (v1: sequence numbers 0)
        for other in [entry(12, 1, 666, 3), entry(11, 2, 666, 3)] {
            let other = FileVersion::of(&other);
            assert_ne!(other.key("f"), first.key("f"));
        }
        let v1_re_add = FileVersion::of(&entry(12, 0, 666, 3));
        assert_ne!(
            v1_re_add.last_modified(),
            FileVersion::of(&entry(11, 0, 666, 3)).last_modified()
        );
        // another size or record count
        for other in [entry(11, 1, 667, 3), entry(11, 1, 666, 4)] {
            assert_ne!(FileVersion::of(&other).key("f"), first.key("f"));
        }
    }

    #[test]
    fn any_snapshot_id_is_a_last_modified_that_round_trips_through_nanoseconds() {
        for id in [i64::MIN, -1, 0, 1, 4_543_644_609_070_482_017, i64::MAX] {
            let at = FileVersion::of(&entry(id, 0, 1, 1)).last_modified();
            assert_eq!(at.timestamp_nanos_opt(), Some(id));
        }
    }
}
