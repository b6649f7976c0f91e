//! Deleting every file a table's metadata reaches (`DROP TABLE … PURGE`; Java
//! `CatalogUtil.dropTableData`): data and delete files of every retained snapshot, their
//! manifests and manifest lists, the statistics and partition statistics files the
//! metadata lists, and the metadata files in `metadata-log`.
//!
//! A table whose `gc.enabled` is false keeps its data and delete files: they may belong
//! to other tables too (Java's `dropTableData` skips them the same way; Spark's
//! `DROP TABLE … PURGE`, like icefloe's SQL, refuses such a table before dropping it).

use std::collections::HashSet;

use crate::error::Result;
use crate::spec::manifest_list::parse_manifest_list;
use crate::table::Table;

/// Delete the files of `table` (its data and delete files only when
/// [`gc_enabled`](crate::table_properties::gc_enabled)). Files shared by several
/// snapshots are deleted once; a missing file is not an error.
///
/// Errors: a manifest list or manifest that cannot be read (nothing after it is
/// deleted, so a retry finds the rest), or a failed delete, naming the file.
pub(crate) async fn purge_table_files(table: &Table) -> Result<()> {
    let io = table.file_io();
    let m = table.metadata();
    let content_files = crate::table_properties::gc_enabled(&m.properties);
    let mut manifests = HashSet::new();
    let mut files = HashSet::new();
    let mut lists = vec![];
    for s in &m.snapshots {
        let Some(list) = &s.manifest_list else {
            continue;
        };
        let bytes = match io.read(list).await {
            Ok(b) => b,
            Err(e) if e.kind() == crate::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        lists.push(list.clone());
        for mf in parse_manifest_list(&bytes, list)? {
            if !manifests.insert(mf.manifest_path.clone()) || !content_files {
                continue;
            }
            match crate::scan::read_manifest(table, m, &mf).await {
                Ok(entries) => files.extend(entries.into_iter().map(|e| e.data_file.file_path)),
                Err(e) if e.kind() == crate::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }
    for f in files.iter().chain(manifests.iter()).chain(lists.iter()) {
        io.delete(f).await?;
    }
    // statistics files belong to this table's snapshots alone (Java deletes them
    // whatever `gc.enabled` says)
    let statistics = m.statistics.iter().map(|s| &s.statistics_path);
    let partition_statistics = m.partition_statistics.iter().map(|s| &s.statistics_path);
    for f in statistics.chain(partition_statistics) {
        io.delete(f).await?;
    }
    for entry in &m.metadata_log {
        io.delete(&entry.metadata_file).await?;
    }
    io.delete(table.metadata_location()).await
}
