//! Delete files older than every live data file are dropped in the commit that makes them
//! so (Java `MergingSnapshotProducer.apply` → `ManifestFilterManager.dropDeleteFilesOlderThan`).
//!
//! A position delete file applies to data files whose data sequence number is at most its
//! own, an equality delete file to those strictly below its own (spec: "Scan Planning").
//! So a delete file whose data sequence number is below that of every data file the new
//! snapshot keeps applies to nothing: a commit that removes the last data files it could
//! apply to (a whole-file `INSERT OVERWRITE` or `DELETE`, a compaction) drops it, and the
//! snapshot summary counts it removed (`removed-delete-files`, `removed-position-deletes`,
//! … and so the totals). Without it the file stays live for good, counted by every
//! summary's totals and kept by every scan's planning.
//!
//! The smallest data sequence number is taken over the data manifests the snapshot lists,
//! from each manifest's `min_sequence_number` (of its live entries), as Java does; a
//! manifest with no live entry, or one this commit wrote holding only the files it adds
//! (whose `min_sequence_number` is the placeholder of the snapshot's own sequence number),
//! does not lower it. It starts from the new snapshot's sequence number, which the files
//! the commit adds take: when no data file stays, every delete file committed before
//! applies to nothing and is dropped. (Java starts from the base's last sequence number,
//! keeping a delete file of the previous commit one commit longer; icefloe drops it at
//! once, as nothing can read it.) Delete files added by this commit are never dropped;
//! entries without a sequence number (0, written before format version 2) are kept, as
//! Java keeps them.

use super::snapshot_producer::SnapshotProducer;
use super::summary::SnapshotSummary;
use crate::error::Result;
use crate::spec::{FormatVersion, ManifestContent, ManifestFile, ManifestStatus};
use crate::table::Table;
use crate::write::NewEntry;

/// `manifests` (the new snapshot's, before merging) with every delete file older than all
/// the data files they keep taken out (see the module docs): each delete manifest holding
/// one is rewritten (dropped entries `DELETED`, other live entries `EXISTING` with their
/// snapshot ids and sequence numbers; entries this commit already marked `DELETED` stay
/// so), the others are returned as they are. Dropped files are counted in `summary`.
/// A format-version 1 table, which has no delete files, is returned unchanged.
///
/// Errors: a manifest that cannot be read or written (I/O, decoding), naming it.
pub(crate) async fn drop_deletes_older_than_data(
    table: &Table,
    producer: &mut SnapshotProducer,
    manifests: Vec<ManifestFile>,
    summary: &mut SnapshotSummary,
) -> Result<Vec<ManifestFile>> {
    let m = table.metadata();
    if m.format_version == FormatVersion::V1 {
        return Ok(manifests);
    }
    let own = producer.snapshot_id();
    let floor =
        min_data_sequence_number(&manifests, own, SnapshotProducer::next_sequence_number(m));
    let mut out = Vec::with_capacity(manifests.len());
    for mf in manifests {
        // the manifest's minimum bounds its live entries' sequence numbers (Java
        // `ManifestFilterManager.canContainDroppedFiles`)
        if mf.content != ManifestContent::Deletes
            || mf.min_sequence_number <= 0
            || mf.min_sequence_number >= floor
        {
            out.push(mf);
            continue;
        }
        let entries = SnapshotProducer::entries_of(table, &mf).await?;
        let dropped = |e: &crate::spec::ManifestEntry| {
            e.is_alive()
                && e.snapshot_id != own
                && e.data_sequence_number > 0
                && e.data_sequence_number < floor
        };
        if !entries.iter().any(dropped) {
            out.push(mf);
            continue;
        }
        let written_here = mf.added_snapshot_id == own;
        let mut new_entries = vec![];
        for e in &entries {
            if dropped(e) {
                summary.remove(e.spec_id, &e.data_file);
                new_entries.push(NewEntry::deleted(e));
            } else if e.is_alive() {
                new_entries.push(NewEntry::existing(e));
            } else if written_here && e.status == ManifestStatus::Deleted {
                // removed by this commit already (and counted): the rewrite still says so
                new_entries.push(NewEntry::deleted(e));
            }
        }
        let rewritten = producer
            .write_manifest(table, mf.partition_spec_id, mf.content, &new_entries)
            .await?;
        out.push(rewritten);
    }
    Ok(out)
}

/// The smallest data sequence number of the data files `manifests` keep live: the least
/// `min_sequence_number` of the data manifests with a live entry, and at most `next`
/// (the new snapshot's sequence number, which the files it adds take). A manifest snapshot
/// `own` wrote whose minimum is not below its placeholder sequence number holds only files
/// the snapshot adds (its minimum is unassigned, Java's `UNASSIGNED_SEQ`).
fn min_data_sequence_number(manifests: &[ManifestFile], own: i64, next: i64) -> i64 {
    let live = |count: Option<i32>| count.is_none_or(|n| n > 0);
    manifests
        .iter()
        .filter(|f| f.content == ManifestContent::Data)
        .filter(|f| live(f.added_files_count) || live(f.existing_files_count))
        .filter(|f| !(f.added_snapshot_id == own && f.min_sequence_number >= f.sequence_number))
        .map(|f| f.min_sequence_number)
        .fold(next, i64::min)
}
