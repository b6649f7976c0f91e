//! Writing a table statistics file (spec: "Table Statistics"; Puffin spec: "File
//! structure"): one Puffin file of blobs computed from one snapshot's rows, and the
//! [`StatisticsFile`] entry that table metadata keeps for it.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::json;

use super::puffin_writer::puffin_footer;
use crate::delete::puffin::PUFFIN_MAGIC;
use crate::error::Result;
use crate::io::FileIO;
use crate::spec::{BlobMetadata, StatisticsFile};

/// One blob of a statistics file, stored uncompressed.
#[derive(Debug, Clone, PartialEq)]
pub struct StatisticsBlob {
    /// Blob type, e.g. `apache-datasketches-theta-v1`.
    pub blob_type: String,
    /// The field ids the blob was computed for.
    pub fields: Vec<i32>,
    /// The snapshot whose rows it describes.
    pub snapshot_id: i64,
    /// That snapshot's sequence number.
    pub sequence_number: i64,
    /// The blob's bytes.
    pub data: Vec<u8>,
    /// Its properties (a theta sketch's `ndv`).
    pub properties: HashMap<String, String>,
}

/// Write `blobs` (all of snapshot `snapshot_id`) as a new Puffin file at `location` and
/// return its [`StatisticsFile`] (file and footer sizes in bytes, the blobs' metadata).
///
/// Errors: [`crate::ErrorKind::Io`] naming the file when storing it fails (a file that
/// exists there already is not replaced).
pub async fn write_statistics_file(
    file_io: &FileIO,
    location: &str,
    snapshot_id: i64,
    blobs: Vec<StatisticsBlob>,
) -> Result<StatisticsFile> {
    let mut bytes = PUFFIN_MAGIC.to_vec();
    let mut described = Vec::with_capacity(blobs.len());
    let mut metadata = Vec::with_capacity(blobs.len());
    for blob in blobs {
        let offset = bytes.len();
        bytes.extend_from_slice(&blob.data);
        described.push(json!({
            "type": blob.blob_type,
            "fields": blob.fields,
            "snapshot-id": blob.snapshot_id,
            "sequence-number": blob.sequence_number,
            "offset": offset,
            "length": blob.data.len(),
            "properties": blob.properties,
        }));
        metadata.push(BlobMetadata {
            blob_type: blob.blob_type,
            snapshot_id: blob.snapshot_id,
            sequence_number: blob.sequence_number,
            fields: blob.fields,
            properties: blob.properties,
        });
    }
    let footer = puffin_footer(described)?;
    bytes.extend_from_slice(&footer);
    let size = bytes.len();
    file_io.write_new(location, Bytes::from(bytes)).await?;
    Ok(StatisticsFile {
        snapshot_id,
        statistics_path: location.to_string(),
        file_size_in_bytes: size as i64,
        file_footer_size_in_bytes: footer.len() as i64,
        key_metadata: None,
        blob_metadata: metadata,
    })
}
