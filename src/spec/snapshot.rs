//! Snapshots, refs and the logs of table metadata.
//!
//! Source: Iceberg spec, "Snapshots", "Snapshot References" and Appendix C.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// A snapshot: the state of the table at some time (spec: "Snapshots").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Snapshot {
    /// `snapshot-id`.
    pub snapshot_id: i64,
    /// `parent-snapshot-id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_snapshot_id: Option<i64>,
    /// `sequence-number` (v2+; 0 for v1 snapshots).
    #[serde(default)]
    pub sequence_number: i64,
    /// `timestamp-ms`: ms since epoch when the snapshot was created.
    pub timestamp_ms: i64,
    /// `manifest-list`: location of the manifest list (Avro).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_list: Option<String>,
    /// v1 only: `manifests`, the manifest locations when there is no manifest list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifests: Option<Vec<String>>,
    /// `summary`: must contain `operation` in v2+.
    #[serde(default)]
    pub summary: HashMap<String, String>,
    /// `schema-id`: the current schema when the snapshot was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_id: Option<i32>,
    /// v3 `first-row-id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_row_id: Option<i64>,
    /// v3 `added-rows`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_rows: Option<i64>,
    /// v3 `key-id`: the encryption key of the manifest list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
}

impl Snapshot {
    /// The `operation` of the summary (`append`, `replace`, `overwrite`, `delete`).
    pub fn operation(&self) -> Option<&str> {
        self.summary.get("operation").map(String::as_str)
    }
}

/// A named reference to a snapshot: a branch or a tag (spec: "Snapshot References").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SnapshotReference {
    /// The snapshot the ref points at.
    pub snapshot_id: i64,
    /// `branch` or `tag`.
    #[serde(rename = "type")]
    pub ref_type: String,
    /// Branches: minimum snapshots to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_snapshots_to_keep: Option<i32>,
    /// Branches: max snapshot age in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_snapshot_age_ms: Option<i64>,
    /// Max ref age in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ref_age_ms: Option<i64>,
}

/// An entry of `snapshot-log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SnapshotLogEntry {
    /// When the snapshot became current, ms since epoch.
    pub timestamp_ms: i64,
    /// The snapshot id.
    pub snapshot_id: i64,
}

/// An entry of `metadata-log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct MetadataLogEntry {
    /// When the metadata file was written, ms since epoch.
    pub timestamp_ms: i64,
    /// Location of the earlier metadata file.
    pub metadata_file: String,
}

/// Blob metadata of a statistics file (spec: "Table Statistics").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct BlobMetadata {
    /// Blob type, e.g. `apache-datasketches-theta-v1`.
    #[serde(rename = "type")]
    pub blob_type: String,
    /// Snapshot the blob was computed from.
    pub snapshot_id: i64,
    /// Sequence number of that snapshot.
    pub sequence_number: i64,
    /// Field ids the blob covers.
    pub fields: Vec<i32>,
    /// Extra properties.
    #[serde(default)]
    pub properties: HashMap<String, String>,
}

/// A Puffin statistics file of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct StatisticsFile {
    /// The snapshot the statistics describe.
    pub snapshot_id: i64,
    /// Location of the Puffin file.
    pub statistics_path: String,
    /// Size in bytes.
    pub file_size_in_bytes: i64,
    /// Footer size in bytes.
    pub file_footer_size_in_bytes: i64,
    /// Encryption key metadata (base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_metadata: Option<String>,
    /// The blobs in the file.
    #[serde(default)]
    pub blob_metadata: Vec<BlobMetadata>,
}

/// A partition statistics file of a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionStatisticsFile {
    /// The snapshot the statistics describe.
    pub snapshot_id: i64,
    /// Location of the file.
    pub statistics_path: String,
    /// Size in bytes.
    pub file_size_in_bytes: i64,
}

/// A v3 encryption key entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct EncryptionKey {
    /// Key id.
    pub key_id: String,
    /// Encrypted key metadata, base64.
    pub encrypted_key_metadata: String,
    /// Id of the key that encrypted this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_by_id: Option<String>,
    /// Extra properties.
    #[serde(default)]
    pub properties: HashMap<String, String>,
}
