//! Puffin files: reading blobs by offset and the JSON footer (Puffin spec, "File
//! structure", "Footer structure", "Footer Payload").
//!
//! A Puffin file is `Magic Blob₁ … Blobₙ Footer`, the footer being
//! `Magic FooterPayload FooterPayloadSize Flags Magic` with `Magic` = `50 46 41 31`
//! ("PFA1"), `FooterPayloadSize` a 4-byte little-endian length in bytes and `Flags` 4
//! bytes (bit 0 of byte 0: payload LZ4-compressed). Deletion vectors are read directly by
//! the `content_offset` / `content_size_in_bytes` of their manifest entry, so scans only
//! need [`read_blob`]; [`parse_footer`] is for checks and tools.

use std::collections::HashMap;

use bytes::Bytes;
use object_store::ObjectStoreExt;
use serde::Deserialize;

use crate::error::{Error, ErrorKind, Result};
use crate::io::FileIO;

/// The 4 magic bytes at the start of a Puffin file and around its footer.
pub const PUFFIN_MAGIC: [u8; 4] = [0x50, 0x46, 0x41, 0x31];

/// The footer payload (Puffin spec, "FileMetadata").
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FileMetadata {
    /// The blobs in the file.
    pub blobs: Vec<BlobMetadata>,
    /// File properties, e.g. `created-by`.
    #[serde(default)]
    pub properties: HashMap<String, String>,
}

/// Where a blob is and what it holds (Puffin spec, "BlobMetadata").
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct BlobMetadata {
    /// Blob type, e.g. `deletion-vector-v1`.
    #[serde(rename = "type")]
    pub blob_type: String,
    /// Field ids the blob was computed for.
    #[serde(default)]
    pub fields: Vec<i32>,
    /// Snapshot id (-1 for deletion vectors).
    pub snapshot_id: i64,
    /// Sequence number (-1 for deletion vectors).
    pub sequence_number: i64,
    /// Byte offset of the blob in the file.
    pub offset: i64,
    /// Length of the blob in bytes (as stored).
    pub length: i64,
    /// `lz4` or `zstd`; absent when uncompressed (always for deletion vectors).
    #[serde(default)]
    pub compression_codec: Option<String>,
    /// Blob properties; deletion vectors carry `referenced-data-file` and `cardinality`.
    #[serde(default)]
    pub properties: HashMap<String, String>,
}

fn bad(location: &str, what: impl std::fmt::Display) -> Error {
    Error::invalid_data(format!("Puffin file '{location}': {what}"))
}

/// Parse the footer of a whole Puffin file held in memory.
///
/// Errors ([`ErrorKind::InvalidData`] naming `location`): a file too short, bad magic at
/// either end, a payload size that does not fit, or JSON that is not `FileMetadata`;
/// [`ErrorKind::Unsupported`] for an LZ4-compressed footer.
pub fn parse_footer(file: &[u8], location: &str) -> Result<FileMetadata> {
    let n = file.len();
    // header magic + footer magic + size + flags + trailing magic
    if n < 4 + 4 + 4 + 4 + 4 {
        return Err(bad(
            location,
            format!("{n} bytes is too short for a Puffin file"),
        ));
    }
    if file[..4] != PUFFIN_MAGIC || file[n - 4..] != PUFFIN_MAGIC {
        return Err(bad(location, "missing the PFA1 magic at the start or end"));
    }
    let flags = &file[n - 8..n - 4];
    let mut size = [0u8; 4];
    size.copy_from_slice(&file[n - 12..n - 8]);
    let size = i32::from_le_bytes(size);
    let payload_end = n - 12;
    let payload_start = usize::try_from(size)
        .ok()
        .and_then(|s| payload_end.checked_sub(s))
        .filter(|start| *start >= 8)
        .ok_or_else(|| {
            bad(
                location,
                format!("footer payload size {size} does not fit in {n} bytes"),
            )
        })?;
    if file[payload_start - 4..payload_start] != PUFFIN_MAGIC {
        return Err(bad(
            location,
            "missing the PFA1 magic before the footer payload",
        ));
    }
    if flags[0] & 1 != 0 {
        return Err(Error::unsupported(format!(
            "Puffin file '{location}': compressed footer payload"
        )));
    }
    serde_json::from_slice(&file[payload_start..payload_end])
        .map_err(|e| bad(location, "footer payload is not valid FileMetadata JSON").with_source(e))
}

/// Read a whole Puffin file and parse its footer (see [`parse_footer`]).
pub async fn read_file_metadata(file_io: &FileIO, location: &str) -> Result<FileMetadata> {
    let bytes = file_io.read(location).await?;
    parse_footer(&bytes, location)
}

/// Read `length` bytes at byte `offset` of the file at `location` (a stored path; the
/// FileIO remaps it), e.g. a deletion vector at `content_offset` /
/// `content_size_in_bytes`.
///
/// Errors: [`ErrorKind::NotFound`] when the file does not exist, [`ErrorKind::InvalidData`]
/// when the range lies beyond the end of the file (a truncated file), [`ErrorKind::Io`]
/// for other storage failures; all name the file.
pub async fn read_blob(
    file_io: &FileIO,
    location: &str,
    offset: u64,
    length: u64,
) -> Result<Bytes> {
    let end = offset.checked_add(length).ok_or_else(|| {
        bad(
            location,
            format!("blob offset {offset} + length {length} overflows"),
        )
    })?;
    let resolved = file_io.resolve(location)?;
    let store = file_io.store(&resolved.store_url)?;
    let truncated = |size: u64| {
        bad(
            location,
            format!("file has {size} bytes, but the blob at offset {offset} with length {length} ends at {end} (truncated file?)"),
        )
    };
    match store.get_range(&resolved.path, offset..end).await {
        Ok(bytes) if bytes.len() as u64 == length => Ok(bytes),
        Ok(bytes) => Err(truncated(offset + bytes.len() as u64)),
        Err(e @ object_store::Error::NotFound { .. }) => {
            let file = crate::io::file_context("Puffin file", file_io, location);
            Err(Error::not_found(format!("{file} does not exist")).with_source(e))
        }
        Err(e) => match store.head(&resolved.path).await {
            Ok(meta) if meta.size < end => Err(truncated(meta.size)),
            _ => Err(Error::new(
                ErrorKind::Io,
                format!("cannot read Puffin file '{location}'"),
            )
            .with_source(e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footer(json: &str) -> Vec<u8> {
        let mut f = PUFFIN_MAGIC.to_vec();
        f.extend_from_slice(b"blobdata");
        f.extend_from_slice(&PUFFIN_MAGIC);
        f.extend_from_slice(json.as_bytes());
        f.extend_from_slice(&(json.len() as i32).to_le_bytes());
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend_from_slice(&PUFFIN_MAGIC);
        f
    }

    #[test]
    fn parses_footer() {
        let json = r#"{"blobs":[{"type":"deletion-vector-v1","fields":[2147483645],"snapshot-id":-1,
            "sequence-number":-1,"offset":4,"length":8,"properties":{"referenced-data-file":"/d.parquet","cardinality":"2"}}],
            "properties":{"created-by":"test"}}"#;
        let meta = parse_footer(&footer(json), "f.puffin").unwrap();
        assert_eq!(meta.blobs.len(), 1);
        let blob = &meta.blobs[0];
        assert_eq!(
            (blob.blob_type.as_str(), blob.offset, blob.length),
            ("deletion-vector-v1", 4, 8)
        );
        assert_eq!(blob.properties["cardinality"], "2");
        assert_eq!(blob.compression_codec, None);
    }

    #[test]
    fn bad_footers_are_errors_naming_the_file() {
        let good = footer(r#"{"blobs":[]}"#);
        for len in 0..good.len() {
            let err = parse_footer(&good[..len], "t.puffin").unwrap_err();
            assert!(err.to_string().contains("t.puffin"), "{err}");
        }
        let mut big = good.clone();
        let n = big.len();
        big[n - 12..n - 8].copy_from_slice(&1000i32.to_le_bytes());
        assert!(parse_footer(&big, "t")
            .unwrap_err()
            .to_string()
            .contains("does not fit"));
        let mut compressed = good.clone();
        compressed[n - 8] = 1;
        assert_eq!(
            parse_footer(&compressed, "t").unwrap_err().kind(),
            ErrorKind::Unsupported
        );
    }

    #[tokio::test]
    async fn reads_ranges_and_reports_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.puffin");
        std::fs::write(&path, footer(r#"{"blobs":[]}"#)).unwrap();
        let loc = path.to_string_lossy().to_string();
        let io = FileIO::default();
        assert_eq!(&read_blob(&io, &loc, 4, 8).await.unwrap()[..], b"blobdata");
        let err = read_blob(&io, &loc, 4, 1000).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
        assert!(
            err.to_string().contains("f.puffin") && err.to_string().contains("truncated"),
            "{err}"
        );
        let err = read_blob(&io, "/nonexistent/icefloe/x.puffin", 0, 4)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
        assert!(err.to_string().contains("x.puffin"), "{err}");
    }
}
