//! Deleting every file a table's metadata reaches (`DROP TABLE … PURGE`; Java
//! `CatalogUtil.dropTableData`): data and delete files of every retained snapshot, their
//! manifests and manifest lists, the statistics and partition statistics files the
//! metadata lists, and the metadata files in `metadata-log`.
//!
//! A table whose `gc.enabled` is false keeps its data and delete files: they may belong
//! to other tables too (Java's `dropTableData` skips them the same way; Spark's
//! `DROP TABLE … PURGE`, like icefloe's SQL, refuses such a table before dropping it).
//!
//! Order (every catalog that purges itself): the files are listed from the metadata
//! before the table is dropped ([`files_to_purge`]), so a manifest list or manifest that
//! cannot be read fails the statement with the table still there; then the table is
//! dropped, and the files are deleted best effort ([`delete_dropped_table_files`]): the
//! drop stands, and a file that cannot be deleted is a warning naming it and the table's
//! location, as Java's `CatalogUtil.dropTableData` logs its failed deletes after the drop.

use std::collections::HashSet;

use crate::error::Result;
use crate::spec::manifest_list::parse_manifest_list;
use crate::table::Table;

/// The locations, as the metadata stores them, of every file a purge deletes, in the order it deletes them: data and delete files (only when
/// `gc.enabled`), manifests, manifest lists, statistics files, the logged metadata files
/// and the current one. Reads the metadata only.
///
/// Errors: a manifest list or manifest that cannot be read (missing included), naming the
/// file: the files only it reaches could not be listed, so nothing is dropped.
pub(crate) async fn files_to_purge(table: &Table) -> Result<Vec<String>> {
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
        // missing, a directory, or of a scheme no store serves (`hdfs://`): named as a
        // scan names it, and the table stays (Java's `dropTableData` fails on a missing
        // one too); skipping it left the files only it reaches behind, silently (report
        // T69 F7)
        let bytes = io
            .read(list)
            .await
            .map_err(|e| crate::scan::manifest_list_recorded(e, table, s.snapshot_id))?;
        lists.push(list.clone());
        crate::scan::check_manifest_list(&bytes, list, s.snapshot_id)
            .map_err(|e| crate::io::when_moved(e, "manifest list", io, list))?;
        let listed = parse_manifest_list(&bytes, list)
            .map_err(|e| crate::io::when_moved(e, "manifest list", io, list))?;
        for mf in listed {
            if !manifests.insert(mf.manifest_path.clone()) || !content_files {
                continue;
            }
            let read = crate::scan::read_manifest_keeping(
                table,
                m,
                &mf,
                Some(list),
                &crate::spec::column_stats::ColumnStats::All,
            );
            let entries = read.await?;
            files.extend(entries.into_iter().map(|e| e.data_file.file_path));
        }
    }
    let mut out: Vec<String> = files.into_iter().chain(manifests).chain(lists).collect();
    // statistics files belong to this table's snapshots alone (Java deletes them
    // whatever `gc.enabled` says)
    let statistics = m.statistics.iter().map(|s| &s.statistics_path);
    let partition_statistics = m.partition_statistics.iter().map(|s| &s.statistics_path);
    out.extend(statistics.chain(partition_statistics).cloned());
    out.extend(m.metadata_log.iter().map(|e| e.metadata_file.clone()));
    out.push(table.metadata_location().to_string());
    Ok(out)
}

/// Delete `files` (locations as [`files_to_purge`] returns them) through `table`'s
/// FileIO, except those `skip` names; a missing file is not an error.
///
/// Errors: a failed delete, naming the file (the files after it are not deleted).
async fn delete_files(table: &Table, files: &[String], skip: impl Fn(&str) -> bool) -> Result<()> {
    for f in files.iter().filter(|f| !skip(f)) {
        table.file_io().delete(f).await?;
        crate::failpoint::hit("purge-deleting");
    }
    Ok(())
}

/// Delete `files` of `table`, dropped from catalog `catalog` as `ident` already, except
/// those `skip` names ([`delete_files`]). The drop stands whatever happens here: a failed
/// delete is returned as a warning (to be shown, not raised) naming the table, the file
/// that could not be deleted, and the table location where that file and those after it
/// are left.
pub(crate) async fn delete_dropped_table_files(
    table: &Table,
    catalog: &str,
    ident: &crate::catalog::TableIdent,
    files: &[String],
    skip: impl Fn(&str) -> bool,
) -> Option<String> {
    let e = delete_files(table, files, skip).await.err()?;
    Some(format!(
        "table '{ident}' was dropped from catalog '{catalog}', but the purge stopped: {e}; \
         the files it had not deleted yet are left under '{}' and wherever the metadata \
         placed them",
        table.metadata().location
    ))
}
