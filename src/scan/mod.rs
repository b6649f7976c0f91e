//! Scan planning: snapshot → manifest list → manifests → [`FileScanTask`]s.
//!
//! Manifests are read concurrently. Only live entries (added or existing) are planned;
//! each data file becomes one task carrying its stored path, resolved location, partition
//! tuple and data sequence number. Delete files are collected alongside; applying them is
//! the business of the delete planner.

use std::sync::Arc;

use futures::stream::{self, StreamExt, TryStreamExt};

use crate::error::{Error, Result};
use crate::spec::{
    DataContentType, DataFile, ManifestContent, ManifestEntry, ManifestFile, Schema, Snapshot,
    TableMetadata,
};
use crate::table::Table;

/// How many manifests are fetched and decoded at once.
const MANIFEST_CONCURRENCY: usize = 16;

/// One data file to scan.
#[derive(Debug, Clone)]
pub struct FileScanTask {
    /// The manifest entry of the data file (inherited values filled in).
    pub entry: Arc<ManifestEntry>,
    /// The file's location after remapping (what to open).
    pub location: String,
}

impl FileScanTask {
    /// The data file.
    pub fn data_file(&self) -> &DataFile {
        &self.entry.data_file
    }
}

/// Counts from planning, for `EXPLAIN` and the CLI.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanMetrics {
    /// Manifests in the manifest list.
    pub manifests_total: usize,
    /// Manifests opened.
    pub manifests_scanned: usize,
    /// Live data files in the scanned manifests.
    pub data_files_total: usize,
    /// Data files planned.
    pub data_files_planned: usize,
    /// Live delete files in the scanned manifests.
    pub delete_files_total: usize,
}

/// The result of planning a scan.
#[derive(Debug, Clone, Default)]
pub struct ScanPlan {
    /// Data files to read.
    pub tasks: Vec<FileScanTask>,
    /// Live delete files (position, equality, deletion vectors).
    pub delete_entries: Vec<Arc<ManifestEntry>>,
    /// Planning counts.
    pub metrics: ScanMetrics,
}

/// A scan of one snapshot of a table.
#[derive(Debug, Clone)]
pub struct TableScan {
    table: Table,
    snapshot: Option<Snapshot>,
}

impl TableScan {
    /// A scan of `snapshot` (`None`: a table with no snapshot, which plans nothing).
    pub fn new(table: Table, snapshot: Option<Snapshot>) -> Self {
        Self { table, snapshot }
    }

    /// The snapshot scanned.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }

    /// Read the snapshot's manifest list.
    pub async fn manifest_list(&self) -> Result<Vec<ManifestFile>> {
        let Some(snapshot) = &self.snapshot else {
            return Ok(vec![]);
        };
        let Some(list) = &snapshot.manifest_list else {
            return Err(Error::unsupported(format!(
                "v1 snapshot {} without a manifest list (inline 'manifests')",
                snapshot.snapshot_id
            )));
        };
        let bytes = self.table.file_io().read(list).await?;
        crate::spec::manifest_list::parse_manifest_list(&bytes, list)
    }

    /// Plan the files of the snapshot.
    ///
    /// Errors: a manifest list or manifest that is missing ([`crate::ErrorKind::NotFound`])
    /// or corrupt ([`crate::ErrorKind::InvalidData`]), naming the file.
    pub async fn plan_files(&self) -> Result<ScanPlan> {
        let manifests = self.manifest_list().await?;
        let mut metrics = ScanMetrics {
            manifests_total: manifests.len(),
            ..Default::default()
        };
        let metadata = self.table.metadata_ref();
        let scanned: Vec<ManifestFile> = manifests.into_iter().filter(|m| m.has_live_files()).collect();
        metrics.manifests_scanned = scanned.len();
        let entries: Vec<Vec<ManifestEntry>> = stream::iter(scanned)
            .map(|m| {
                let table = self.table.clone();
                let metadata = Arc::clone(&metadata);
                async move { read_manifest(&table, &metadata, &m).await }
            })
            .buffered(MANIFEST_CONCURRENCY)
            .try_collect()
            .await?;
        let mut plan = ScanPlan::default();
        for entry in entries.into_iter().flatten().filter(ManifestEntry::is_alive) {
            match entry.data_file.content {
                DataContentType::Data => {
                    metrics.data_files_total += 1;
                    let location = self.table.file_io().remap(&entry.data_file.file_path)?;
                    plan.tasks.push(FileScanTask {
                        entry: Arc::new(entry),
                        location,
                    });
                }
                DataContentType::PositionDeletes | DataContentType::EqualityDeletes => {
                    metrics.delete_files_total += 1;
                    plan.delete_entries.push(Arc::new(entry));
                }
            }
        }
        metrics.data_files_planned = plan.tasks.len();
        plan.metrics = metrics;
        Ok(plan)
    }
}

/// Read one manifest, typed by its own partition spec.
async fn read_manifest(
    table: &Table,
    metadata: &TableMetadata,
    manifest: &ManifestFile,
) -> Result<Vec<ManifestEntry>> {
    let spec = metadata
        .partition_spec_by_id(manifest.partition_spec_id)
        .ok_or_else(|| {
            Error::invalid_data(format!(
                "manifest '{}' names partition spec {} which the table does not have",
                manifest.manifest_path, manifest.partition_spec_id
            ))
        })?;
    let mut schemas: Vec<&Schema> = vec![metadata.current_schema()];
    schemas.extend(metadata.schemas.iter().rev());
    let bytes = table.file_io().read(&manifest.manifest_path).await?;
    let entries = crate::spec::manifest::parse_manifest(
        &bytes,
        &manifest.manifest_path,
        manifest,
        spec,
        &schemas,
    )?;
    // A data manifest must hold only data files, a delete manifest only delete files.
    let expect_data = manifest.content == ManifestContent::Data;
    if let Some(bad) = entries
        .iter()
        .find(|e| (e.data_file.content == DataContentType::Data) != expect_data)
    {
        return Err(Error::invalid_data(format!(
            "manifest '{}' of content {:?} holds a file of content {:?} ('{}')",
            manifest.manifest_path, manifest.content, bad.data_file.content, bad.data_file.file_path
        )));
    }
    Ok(entries)
}
