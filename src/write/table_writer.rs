//! A v2 table on the local filesystem, created and committed to by one writer
//! (no concurrent commits, no catalog): the Hadoop layout that [`crate::Table::open`]
//! reads (`metadata/vN.metadata.json` plus `metadata/version-hint.text`).
//!
//! Each commit writes its new manifests, a manifest list carrying the previous
//! snapshot's manifests forward unchanged, and the next metadata file, with the next
//! sequence number (spec: "Sequence Numbers", "Commit Conflict Resolution and Retry"
//! does not arise with one writer). [`LocalTableWriter::add_parquet_files`] is
//! "add_files": it registers existing Parquet files with metrics from their footers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::manifest::{ManifestWriter, NewEntry};
use super::manifest_list::write_manifest_list;
use super::metadata::table_metadata_to_json;
use super::parquet_metrics::data_file_from_parquet;
use crate::error::{Error, ErrorKind, Result};
use crate::io::normalize_location;
use crate::spec::snapshot::SnapshotLogEntry;
use crate::spec::{
    DataContentType, DataFile, FormatVersion, ManifestContent, ManifestFile, PartitionSpec, Schema,
    Snapshot, SnapshotReference, TableMetadata,
};

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::new(ErrorKind::Io, format!("cannot write '{}'", path.display())).with_source(e)
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// A snapshot being written: its id and sequence number.
#[derive(Debug, Clone, Copy)]
pub struct PendingSnapshot {
    /// The new snapshot's id.
    pub snapshot_id: i64,
    /// Its sequence number (`last-sequence-number` + 1).
    pub sequence_number: i64,
}

/// Writes a v2 table under a local directory.
#[derive(Debug)]
pub struct LocalTableWriter {
    root: PathBuf,
    location: String,
    metadata: TableMetadata,
    manifests: Vec<ManifestFile>,
    version: u64,
    manifest_counter: u64,
}

impl LocalTableWriter {
    /// Create an empty v2 table at directory `root` (created if missing) with `schema`
    /// and `spec` (partition field ids must be set), and write `v1.metadata.json`.
    ///
    /// Errors: `root` already holds a table ([`ErrorKind::InvalidArgument`]), I/O.
    pub fn create(
        root: &Path,
        schema: Schema,
        spec: PartitionSpec,
        properties: HashMap<String, String>,
    ) -> Result<Self> {
        let metadata_dir = root.join("metadata");
        if metadata_dir.join("version-hint.text").exists() {
            return Err(Error::invalid_argument(format!(
                "a table already exists at '{}'",
                root.display()
            )));
        }
        std::fs::create_dir_all(&metadata_dir).map_err(io_err(&metadata_dir))?;
        let location = normalize_location(&root.to_string_lossy())?;
        let last_column_id = schema.highest_field_id();
        let last_partition_id = spec
            .fields
            .iter()
            .filter_map(|f| f.field_id)
            .max()
            .unwrap_or(999);
        let metadata = TableMetadata {
            format_version: FormatVersion::V2,
            table_uuid: Some(uuid::Uuid::new_v4().to_string()),
            location: location.clone(),
            last_sequence_number: 0,
            last_updated_ms: now_ms(),
            last_column_id,
            current_schema_id: schema.schema_id,
            schemas: vec![schema],
            default_spec_id: spec.spec_id,
            partition_specs: vec![spec],
            last_partition_id,
            properties,
            current_snapshot_id: None,
            snapshots: vec![],
            snapshot_log: vec![],
            metadata_log: vec![],
            sort_orders: vec![crate::spec::sort_order::SortOrder {
                order_id: 0,
                fields: vec![],
            }],
            default_sort_order_id: 0,
            refs: HashMap::new(),
            statistics: vec![],
            partition_statistics: vec![],
            next_row_id: None,
            encryption_keys: vec![],
        };
        let mut writer = Self {
            root: root.to_path_buf(),
            location,
            metadata,
            manifests: vec![],
            version: 0,
            manifest_counter: 0,
        };
        writer.write_metadata()?;
        Ok(writer)
    }

    /// The table's metadata as last committed.
    pub fn metadata(&self) -> &TableMetadata {
        &self.metadata
    }

    /// The table directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The current schema.
    pub fn schema(&self) -> &Schema {
        self.metadata.current_schema()
    }

    /// The default partition spec.
    pub fn spec(&self) -> Result<&PartitionSpec> {
        self.metadata
            .default_partition_spec()
            .ok_or_else(|| Error::invalid_data("table has no default partition spec"))
    }

    fn write_metadata(&mut self) -> Result<()> {
        self.version += 1;
        let dir = self.root.join("metadata");
        let path = dir.join(format!("v{}.metadata.json", self.version));
        let json = table_metadata_to_json(&self.metadata)?;
        std::fs::write(&path, json).map_err(io_err(&path))?;
        let hint = dir.join("version-hint.text");
        std::fs::write(&hint, self.version.to_string()).map_err(io_err(&hint))
    }

    /// Start a snapshot: the next id and sequence number.
    pub fn begin(&self) -> PendingSnapshot {
        let sequence_number = self.metadata.last_sequence_number + 1;
        PendingSnapshot {
            // Deterministic ids keep generated tables reproducible.
            snapshot_id: 1_000_000 + sequence_number,
            sequence_number,
        }
    }

    /// A writer for a manifest of `content` in snapshot `snap` under the default spec.
    pub fn manifest_writer(
        &self,
        snap: &PendingSnapshot,
        content: ManifestContent,
    ) -> Result<ManifestWriter> {
        ManifestWriter::new(
            &[self.schema()],
            self.spec()?,
            content,
            snap.snapshot_id,
            snap.sequence_number,
        )
    }

    /// Encode and write a finished manifest to `metadata/`, returning its list entry.
    pub fn write_manifest(
        &mut self,
        snap: &PendingSnapshot,
        writer: ManifestWriter,
    ) -> Result<ManifestFile> {
        self.manifest_counter += 1;
        let name = format!("snap-{}-m{}.avro", snap.snapshot_id, self.manifest_counter);
        let path = self.root.join("metadata").join(&name);
        let (bytes, file) = writer.finish(&format!("{}/metadata/{name}", self.location))?;
        std::fs::write(&path, bytes).map_err(io_err(&path))?;
        Ok(file)
    }

    /// Commit snapshot `snap` adding `new_manifests` (in front of the carried-over ones)
    /// with `operation` (`append`, `overwrite`, `delete`) in its summary.
    pub fn commit(
        &mut self,
        snap: PendingSnapshot,
        new_manifests: Vec<ManifestFile>,
        operation: &str,
    ) -> Result<Snapshot> {
        let mut manifests = new_manifests;
        manifests.append(&mut self.manifests);
        let name = format!("snap-{}-list.avro", snap.snapshot_id);
        let path = self.root.join("metadata").join(&name);
        let parent = self.metadata.current_snapshot_id;
        let bytes =
            write_manifest_list(&manifests, snap.snapshot_id, parent, snap.sequence_number)?;
        std::fs::write(&path, bytes).map_err(io_err(&path))?;
        let added = |c: ManifestContent| {
            manifests
                .iter()
                .filter(|m| m.content == c && m.added_snapshot_id == snap.snapshot_id)
                .map(|m| {
                    (
                        m.added_files_count.unwrap_or(0) as i64,
                        m.added_rows_count.unwrap_or(0),
                    )
                })
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        };
        let (data_files, data_rows) = added(ManifestContent::Data);
        let (delete_files, _) = added(ManifestContent::Deletes);
        let summary = HashMap::from([
            ("operation".to_string(), operation.to_string()),
            ("added-data-files".to_string(), data_files.to_string()),
            ("added-records".to_string(), data_rows.to_string()),
            ("added-delete-files".to_string(), delete_files.to_string()),
        ]);
        let ts = now_ms();
        let snapshot = Snapshot {
            snapshot_id: snap.snapshot_id,
            parent_snapshot_id: parent,
            sequence_number: snap.sequence_number,
            timestamp_ms: ts,
            manifest_list: Some(format!("{}/metadata/{name}", self.location)),
            manifests: None,
            summary,
            schema_id: Some(self.metadata.current_schema_id),
            first_row_id: None,
            added_rows: None,
            key_id: None,
        };
        self.manifests = manifests;
        let m = &mut self.metadata;
        m.last_sequence_number = snap.sequence_number;
        m.last_updated_ms = ts;
        m.current_snapshot_id = Some(snap.snapshot_id);
        m.snapshots.push(snapshot.clone());
        m.snapshot_log.push(SnapshotLogEntry {
            timestamp_ms: ts,
            snapshot_id: snap.snapshot_id,
        });
        m.refs.insert(
            "main".to_string(),
            SnapshotReference {
                snapshot_id: snap.snapshot_id,
                ref_type: "branch".to_string(),
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: None,
                max_ref_age_ms: None,
            },
        );
        self.write_metadata()?;
        Ok(snapshot)
    }

    /// Commit `data_files` and `delete_files` in one snapshot (one manifest each),
    /// `append` when there are no deletes, else `overwrite` (a row delta).
    pub fn row_delta(
        &mut self,
        data_files: Vec<DataFile>,
        delete_files: Vec<DataFile>,
    ) -> Result<Snapshot> {
        let snap = self.begin();
        let mut manifests = vec![];
        for (files, content) in [
            (data_files, ManifestContent::Data),
            (delete_files, ManifestContent::Deletes),
        ] {
            if files.is_empty() {
                continue;
            }
            let mut w = self.manifest_writer(&snap, content)?;
            for f in files {
                w.add(&NewEntry::added(f))?;
            }
            manifests.push(self.write_manifest(&snap, w)?);
        }
        let operation = if manifests
            .iter()
            .any(|m| m.content == ManifestContent::Deletes)
        {
            "overwrite"
        } else {
            "append"
        };
        self.commit(snap, manifests, operation)
    }

    /// Commit `data_files` as an `append` snapshot.
    pub fn append(&mut self, data_files: Vec<DataFile>) -> Result<Snapshot> {
        self.row_delta(data_files, vec![])
    }

    /// "add_files": register existing local Parquet files (unpartitioned tables) as one
    /// `append` snapshot, with metrics read from their footers. Columns are matched to
    /// the table schema by Parquet field id.
    pub fn add_parquet_files(&mut self, paths: &[PathBuf]) -> Result<Snapshot> {
        if !self.spec()?.is_unpartitioned() {
            return Err(Error::unsupported(
                "add_parquet_files on a partitioned table",
            ));
        }
        let schema = self.schema().clone();
        let files = paths
            .iter()
            .map(|p| {
                let location = normalize_location(&p.to_string_lossy())?;
                data_file_from_parquet(p, &location, &schema, vec![], DataContentType::Data, vec![])
            })
            .collect::<Result<Vec<_>>>()?;
        self.append(files)
    }
}
