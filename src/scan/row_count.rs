//! The live row count of a snapshot from its manifest list alone.
//!
//! Each manifest list entry records the rows of the manifest's added and existing
//! entries (`added_rows_count` 512, `existing_rows_count` 513; spec: "Manifest Lists"),
//! which are exactly the manifest's live data files' `record_count`s. Summed over the
//! data manifests they are the snapshot's row count — *if* no delete file applies to any
//! of them. So the count is given only when the snapshot has no delete manifest that may
//! hold live files, and every data manifest that may hold live files has both counts
//! (v1 manifest lists may leave them out); otherwise `None`, and the caller plans the
//! files (opening every manifest) instead.

use super::{ScanMetrics, TableScan};
use crate::error::Result;
use crate::spec::{ManifestContent, ManifestFile};

/// The live rows of a snapshot whose manifest list is `manifests` (see the module
/// docs), `None` when the list alone cannot tell.
pub fn live_rows_from_manifest_list(manifests: &[ManifestFile]) -> Option<u64> {
    let mut rows: u64 = 0;
    for m in manifests.iter().filter(|m| m.has_live_files()) {
        if m.content != ManifestContent::Data {
            return None;
        }
        let added = u64::try_from(m.added_rows_count?).ok()?;
        let existing = u64::try_from(m.existing_rows_count?).ok()?;
        rows = rows.checked_add(added)?.checked_add(existing)?;
    }
    Some(rows)
}

impl TableScan {
    /// The snapshot's live row count read from its manifest list only, with the
    /// planning counts (manifests listed, none opened); `None` when a filter is set or
    /// the list cannot tell (a delete manifest with live files, a missing count: see the
    /// module docs). A table without a snapshot has 0 rows.
    ///
    /// Errors: the manifest list cannot be read or decoded (naming it).
    pub async fn live_row_count(&self) -> Result<Option<(u64, ScanMetrics)>> {
        if self.filter.is_some() {
            return Ok(None);
        }
        let manifests = self.manifest_list().await?;
        let Some(rows) = live_rows_from_manifest_list(&manifests) else {
            return Ok(None);
        };
        let metrics = ScanMetrics::of_manifest_list(&manifests);
        Ok(Some((rows, metrics)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(content: ManifestContent, files: Option<i32>, rows: Option<i64>) -> ManifestFile {
        ManifestFile {
            manifest_path: "m.avro".into(),
            manifest_length: 1,
            partition_spec_id: 0,
            content,
            sequence_number: 1,
            min_sequence_number: 1,
            added_snapshot_id: 1,
            added_files_count: files,
            existing_files_count: files.map(|_| 1),
            deleted_files_count: Some(0),
            added_rows_count: rows,
            existing_rows_count: rows.map(|r| r * 10),
            deleted_rows_count: Some(7),
            partitions: None,
            key_metadata: None,
            first_row_id: None,
        }
    }

    #[test]
    fn sums_added_and_existing_rows_of_data_manifests() {
        let list = [
            manifest(ManifestContent::Data, Some(2), Some(5)),
            manifest(ManifestContent::Data, Some(1), Some(3)),
        ];
        // deleted rows (7 per manifest) do not count
        assert_eq!(live_rows_from_manifest_list(&list), Some(5 + 50 + 3 + 30));
        assert_eq!(live_rows_from_manifest_list(&[]), Some(0));
    }

    #[test]
    fn a_live_delete_manifest_or_a_missing_count_means_unknown() {
        let data = manifest(ManifestContent::Data, Some(2), Some(5));
        let deletes = manifest(ManifestContent::Deletes, Some(1), Some(1));
        assert_eq!(live_rows_from_manifest_list(&[data.clone(), deletes]), None);
        // a v1 list without row counts
        let v1 = manifest(ManifestContent::Data, Some(2), None);
        assert_eq!(live_rows_from_manifest_list(&[data.clone(), v1]), None);
        // file counts missing: the manifest may hold live files, and its rows are known
        let unknown_files = manifest(ManifestContent::Data, None, Some(4));
        assert_eq!(
            live_rows_from_manifest_list(&[data.clone(), unknown_files]),
            Some(55 + 44)
        );
        // a delete manifest with no live files left does not stop it
        let mut dead = manifest(ManifestContent::Deletes, Some(0), Some(0));
        dead.existing_files_count = Some(0);
        assert_eq!(live_rows_from_manifest_list(&[data, dead]), Some(55));
    }
}
