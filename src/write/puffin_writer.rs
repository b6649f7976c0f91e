//! Writing deletion vectors (table spec: "Deletion Vectors"; Puffin spec: "File
//! structure", "`deletion-vector-v1` blob type"): one Puffin file holding one
//! `deletion-vector-v1` blob per data file, each described by a delete-file entry that
//! points at its blob (`content_offset`, `content_size_in_bytes`) and names its data file
//! (`referenced_data_file`), as Iceberg Java writes them. Format-version 3 tables take
//! these instead of position delete files.

use bytes::Bytes;
use roaring::RoaringTreemap;
use serde_json::json;

use super::partition_path::{file_location, partition_path};
use crate::delete::deletion_vector::serialize_deletion_vector;
use crate::delete::puffin::PUFFIN_MAGIC;
use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::{DataContentType, DataFile, DataFileFormat, Literal, PartitionSpec};
use crate::write::empty_data_file;

/// The field id a deletion vector blob names: the reserved `_pos` column (2147483645).
pub const ROW_POSITION_FIELD_ID: i32 = 2147483645;

/// Write one Puffin file under `<data_location>/<partition path>/` with a deletion
/// vector per data file in `vectors` (data file location → deleted positions; all in
/// `partition` of `spec`), and return a delete file entry for each (content
/// `PositionDeletes`, format Puffin, `record_count` = the vector's cardinality,
/// `file_size_in_bytes` of the whole Puffin file).
///
/// Errors: an empty vector or none at all ([`crate::ErrorKind::InvalidArgument`]);
/// [`crate::ErrorKind::Io`] naming the file when storing it fails.
pub async fn write_deletion_vectors(
    file_io: &FileIO,
    data_location: &str,
    spec: &PartitionSpec,
    partition: Vec<Option<Literal>>,
    mut vectors: Vec<(String, RoaringTreemap)>,
) -> Result<Vec<DataFile>> {
    if vectors.is_empty() || vectors.iter().any(|(_, v)| v.is_empty()) {
        return Err(Error::invalid_argument(
            "a deletion vector needs at least one deleted row",
        ));
    }
    vectors.sort_by(|a, b| a.0.cmp(&b.0));
    let name = format!("{}-dv.puffin", uuid::Uuid::new_v4());
    let location = file_location(data_location, &partition_path(spec, &partition), &name);
    let mut bytes = PUFFIN_MAGIC.to_vec();
    let mut blobs = vec![];
    let mut placed = vec![];
    for (data_file, positions) in &vectors {
        let blob = serialize_deletion_vector(positions)
            .map_err(|e| e.context(format!("Puffin file '{location}'")))?;
        let offset = bytes.len() as i64;
        let length = blob.len() as i64;
        bytes.extend_from_slice(&blob);
        blobs.push(json!({
            "type": "deletion-vector-v1",
            "fields": [ROW_POSITION_FIELD_ID],
            "snapshot-id": -1,
            "sequence-number": -1,
            "offset": offset,
            "length": length,
            "properties": {
                "referenced-data-file": data_file,
                "cardinality": positions.len().to_string(),
            },
        }));
        placed.push((data_file.clone(), positions.len(), offset, length));
    }
    bytes.extend_from_slice(&puffin_footer(blobs)?);
    let size = bytes.len() as i64;
    file_io.write_new(&location, Bytes::from(bytes)).await?;
    Ok(placed
        .into_iter()
        .map(|(data_file, cardinality, offset, length)| {
            let mut f = empty_data_file(&location, DataContentType::PositionDeletes);
            f.file_format = DataFileFormat::Puffin;
            f.partition = partition.clone();
            f.record_count = cardinality as i64;
            f.file_size_in_bytes = size;
            f.referenced_data_file = Some(data_file);
            f.content_offset = Some(offset);
            f.content_size_in_bytes = Some(length);
            f
        })
        .collect())
}

/// The footer of a Puffin file whose blobs `blobs` describes (Puffin spec: "File
/// structure": magic, the UTF-8 JSON payload of the file metadata, its length as 4
/// little-endian bytes, 4 bytes of flags (none set: the payload is not compressed), magic),
/// with `created-by` naming icefloe. Its length is the `file-footer-size-in-bytes` of a
/// statistics file.
///
/// Errors: the JSON cannot be written ([`crate::ErrorKind::InvalidData`]).
pub(crate) fn puffin_footer(blobs: Vec<serde_json::Value>) -> Result<Vec<u8>> {
    let footer = json!({
        "blobs": blobs,
        "properties": {"created-by": concat!("icefloe ", env!("CARGO_PKG_VERSION"))},
    });
    let payload = serde_json::to_vec(&footer)
        .map_err(|e| Error::invalid_data("Puffin footer to JSON").with_source(e))?;
    let mut out = Vec::with_capacity(payload.len() + 16);
    out.extend_from_slice(&PUFFIN_MAGIC);
    out.extend_from_slice(&payload);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&PUFFIN_MAGIC);
    Ok(out)
}
