//! Manifest merging on commit (Java `MergingSnapshotProducer` / `ManifestMergeManager`;
//! table properties `commit.manifest-merge.enabled` (default true),
//! `commit.manifest.min-count-to-merge` (100) and `commit.manifest.target-size-bytes`
//! (8 MiB)).
//!
//! Without merging, every append adds a manifest and planning slows as they pile up.
//! When a snapshot would carry at least `min-count-to-merge` manifests of one content and
//! partition spec, they are packed, in list order, into bins of about
//! `target-size-bytes` (by `manifest_length`), and each bin of two or more becomes one
//! manifest: files this snapshot adds stay ADDED, other live files become EXISTING
//! (keeping their snapshot ids and sequence numbers), and files deleted by earlier
//! snapshots are dropped. Files deleted by this snapshot stay DELETED.

use std::collections::{BTreeMap, HashMap};

use super::snapshot_producer::SnapshotProducer;
use crate::error::Result;
use crate::spec::{ManifestContent, ManifestFile, ManifestStatus};
use crate::table::Table;
use crate::table_properties as tp;
use crate::write::NewEntry;

/// The merge settings of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MergePolicy {
    enabled: bool,
    min_count: usize,
    target_bytes: i64,
}

impl MergePolicy {
    /// Read from table properties.
    ///
    /// Errors: a value that does not parse, naming the property.
    pub(crate) fn from_properties(p: &HashMap<String, String>) -> Result<Self> {
        Ok(Self {
            enabled: tp::MANIFEST_MERGE_ENABLED.bool(p)?.unwrap_or(true),
            min_count: tp::MANIFEST_MIN_MERGE_COUNT
                .int(p)?
                .map_or(100, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            target_bytes: tp::MANIFEST_TARGET_SIZE_BYTES
                .int(p)?
                .unwrap_or(8 * 1024 * 1024),
        })
    }
}

/// Merge `manifests` (the new snapshot's list, in order) per `policy`, writing merged
/// manifests through `producer`. Returns the new list.
pub(crate) async fn merge_manifests(
    table: &Table,
    producer: &mut SnapshotProducer,
    manifests: Vec<ManifestFile>,
) -> Result<Vec<ManifestFile>> {
    let policy = MergePolicy::from_properties(&table.metadata().properties)?;
    if !policy.enabled {
        return Ok(manifests);
    }
    let mut groups: BTreeMap<(bool, i32), Vec<ManifestFile>> = BTreeMap::new();
    for m in manifests {
        groups
            .entry((m.content == ManifestContent::Data, m.partition_spec_id))
            .or_default()
            .push(m);
    }
    let mut out = vec![];
    for ((_, spec_id), group) in groups.into_iter().rev() {
        if group.len() < policy.min_count.max(2) {
            out.extend(group);
            continue;
        }
        let mut bins: Vec<Vec<ManifestFile>> = vec![];
        let mut size = 0i64;
        for m in group {
            match bins.last_mut() {
                Some(bin) if size + m.manifest_length <= policy.target_bytes => {
                    size = size.saturating_add(m.manifest_length);
                    bin.push(m);
                }
                _ => {
                    size = m.manifest_length;
                    bins.push(vec![m]);
                }
            }
        }
        for bin in bins {
            if bin.len() < 2 {
                out.extend(bin);
                continue;
            }
            let content = bin[0].content;
            let mut entries = vec![];
            for m in &bin {
                let by_this_snapshot = m.added_snapshot_id == producer.snapshot_id();
                for e in SnapshotProducer::entries_of(table, m).await? {
                    match e.status {
                        ManifestStatus::Deleted if by_this_snapshot => {
                            entries.push(NewEntry::deleted(&e))
                        }
                        ManifestStatus::Deleted => {}
                        ManifestStatus::Added if by_this_snapshot => {
                            entries.push(NewEntry::added(e.data_file.clone()))
                        }
                        _ => entries.push(NewEntry::existing(&e)),
                    }
                }
            }
            out.push(
                producer
                    .write_manifest(table, spec_id, content, &entries)
                    .await?,
            );
        }
    }
    Ok(out)
}
