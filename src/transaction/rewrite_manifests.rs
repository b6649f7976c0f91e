//! [`RewriteManifests`]: rewrite the current snapshot's manifests, clustered by partition,
//! into manifests of about `commit.manifest.target-size-bytes` each, in one `replace`
//! snapshot (Java `BaseRewriteManifests`; Spark `rewrite_manifests`).
//!
//! For each content (data, deletes) and partition spec (only spec
//! [`RewriteManifests::spec_id`] when given, Spark's `spec_id`) with more than one
//! manifest (or one holding deleted entries), the live entries are sorted by partition tuple and cut
//! into manifests of about the target size, estimated from the old manifests' bytes per
//! entry. Entries become `EXISTING`, keeping their snapshot ids and sequence numbers;
//! deleted entries are dropped. No file is added or removed, so rows are unchanged.
//! Each commit attempt reclusters the manifests of the (refreshed) current snapshot, so
//! a concurrent commit is carried over.
//!
//! Format version 3 (spec: "Row Lineage"): every rewritten entry is written with its
//! data file's `first_row_id` as read (stored, or inherited from its old manifest), so
//! no row's `_row_id` changes; its data sequence number, which `_last_updated_sequence_number`
//! inherits, is kept as for any existing entry. As Iceberg Java's manifest-list writer does,
//! each new data manifest is still given a `first_row_id` range covering its existing
//! rows (entries that carry their own id do not use it; entries of a table upgraded from
//! v2 that never had one get theirs from it).
//!
//! The snapshot summary holds Java's `manifests-created`, `manifests-kept` (manifests
//! carried over as they are), `manifests-replaced` and `entries-processed` (the live
//! entries written again), as `BaseRewriteManifests.summary()` does.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::snapshot_producer::SnapshotProducer;
use super::summary::{ManifestRewriteCounts, SnapshotSummary};
use super::validation::{partition_key, PartitionKey};
use super::TransactionAction;
use crate::error::{Error, Result};
use crate::spec::{ManifestContent, ManifestEntry, ManifestFile, TableUpdate};
use crate::table::Table;
use crate::write::NewEntry;

// the size manifests are rewritten to: `commit.manifest.target-size-bytes`
const DEFAULT_TARGET_SIZE: i64 = 8 * 1024 * 1024;

/// Recluster the current snapshot's manifests by partition.
#[derive(Debug)]
pub struct RewriteManifests {
    target_size_bytes: Option<i64>,
    spec_id: Option<i32>,
    producer: SnapshotProducer,
}

impl Default for RewriteManifests {
    fn default() -> Self {
        Self::new()
    }
}

impl RewriteManifests {
    /// Rewrite to the table's `commit.manifest.target-size-bytes`.
    pub fn new() -> Self {
        Self {
            target_size_bytes: None,
            spec_id: None,
            producer: SnapshotProducer::new(),
        }
    }

    /// Rewrite to manifests of about `bytes` (over the table property).
    pub fn target_size_bytes(mut self, bytes: i64) -> Self {
        self.target_size_bytes = Some(bytes);
        self
    }

    /// Rewrite only the manifests of partition spec `spec_id` (Java
    /// `RewriteManifests.rewriteIf` on `spec_id`, Spark 3.5's `spec_id`); the others are
    /// kept as they are. It must be a spec of the table (checked when the rewrite runs).
    pub fn spec_id(mut self, spec_id: i32) -> Self {
        self.spec_id = Some(spec_id);
        self
    }

    /// The id of the snapshot this rewrite commits.
    pub fn snapshot_id(&self) -> i64 {
        self.producer.snapshot_id()
    }

    fn target(&self, table: &Table) -> Result<i64> {
        let t = match self.target_size_bytes {
            Some(t) => t,
            None => crate::table_properties::MANIFEST_TARGET_SIZE_BYTES
                .int(&table.metadata().properties)?
                .unwrap_or(DEFAULT_TARGET_SIZE),
        };
        if t <= 0 {
            return Err(Error::invalid_argument(format!(
                "manifest target size must be positive, got {t}"
            )));
        }
        Ok(t)
    }
}

#[async_trait]
impl TransactionAction for RewriteManifests {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        SnapshotProducer::check_format(table)?;
        let target = self.target(table)?;
        if let Some(id) = self.spec_id {
            let specs = &table.metadata().partition_specs;
            if !specs.iter().any(|s| s.spec_id == id) {
                let mut ids: Vec<String> = specs.iter().map(|s| s.spec_id.to_string()).collect();
                ids.sort();
                return Err(Error::invalid_argument(format!(
                    "spec_id {id} is not a partition spec of the table (its specs: {})",
                    ids.join(", ")
                )));
            }
        }
        let parent = self.producer.parent(table).cloned();
        let Some(parent) = parent else {
            return Ok(vec![]);
        };
        let mut groups: BTreeMap<(bool, i32), Vec<ManifestFile>> = BTreeMap::new();
        for mf in SnapshotProducer::manifests_of(table, Some(&parent)).await? {
            groups
                .entry((mf.content == ManifestContent::Deletes, mf.partition_spec_id))
                .or_default()
                .push(mf);
        }
        let mut manifests = vec![];
        let mut counts = ManifestRewriteCounts::default();
        for ((_, spec_id), group) in groups {
            let worth =
                group.len() > 1 || group.iter().any(|m| m.deleted_files_count.unwrap_or(1) > 0);
            if !worth || self.spec_id.is_some_and(|id| id != spec_id) {
                counts.kept += group.len() as i64;
                manifests.extend(group);
                continue;
            }
            counts.replaced += group.len() as i64;
            let content = group[0].content;
            let (mut bytes, mut count) = (0i64, 0i64);
            let mut entries: Vec<(PartitionKey, ManifestEntry)> = vec![];
            for mf in &group {
                let all = SnapshotProducer::entries_of(table, mf).await?;
                bytes += mf.manifest_length;
                count += all.len() as i64;
                entries.extend(
                    all.into_iter()
                        .filter(ManifestEntry::is_alive)
                        .map(|e| (partition_key(&e.data_file.partition), e)),
                );
            }
            counts.entries_processed += entries.len() as i64;
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let per_entry = (bytes / count.max(1)).max(1);
            let per_manifest = (target / per_entry).max(1) as usize;
            for chunk in entries.chunks(per_manifest) {
                let new: Vec<NewEntry> = chunk.iter().map(|(_, e)| NewEntry::existing(e)).collect();
                manifests.push(
                    self.producer
                        .write_manifest(table, spec_id, content, &new)
                        .await?,
                );
                counts.created += 1;
            }
        }
        if counts.replaced == 0 {
            return Ok(vec![]);
        }
        let summary = SnapshotSummary::of_manifest_rewrite(counts);
        self.producer
            .commit_updates(table, "replace", manifests, &summary)
            .await
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        self.producer.clean_up(table, committed).await;
    }
}
