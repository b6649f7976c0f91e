//! Whether a manifest or manifest list read is the file the metadata means, checked
//! before it is decoded: a file replaced by another of the same kind (an older snapshot's
//! manifest list, another table's manifest) decodes fine and would answer other rows.
//!
//! - A manifest's length must be the `manifest_length` its manifest list records (spec:
//!   "Manifest Lists", field 501, the length of the manifest file in bytes), and the
//!   `partition-spec-id` key of its Avro header, when present, the list's
//!   `partition_spec_id` (spec: "Manifests": the header's `partition-spec-id` is the id of
//!   the spec the manifest was written with; Java's `ManifestWriter` and PyIceberg write
//!   it; it is not required, so a manifest without it is not refused).
//! - A manifest list has no recorded length; the `snapshot-id` key of its Avro header,
//!   when present, must be the snapshot's id (Java's `ManifestListWriter` and PyIceberg
//!   write it).
//!
//! Java checks none of these (tester W67 F8). Each check reads only bytes already read.

use crate::error::{Error, Result};
use crate::spec::avro_header::header_value;
use crate::spec::ManifestFile;

/// Check the manifest `bytes` against `manifest`, its entry in a manifest list (named
/// `listed_in` when known). Errors ([`crate::ErrorKind::InvalidData`]) name the manifest,
/// the list when known, and both values.
pub(crate) fn check_manifest(
    bytes: &[u8],
    manifest: &ManifestFile,
    listed_in: Option<&str>,
) -> Result<()> {
    let list = match listed_in {
        Some(l) => format!("the manifest list '{l}'"),
        None => "its manifest list".to_string(),
    };
    let path = &manifest.manifest_path;
    if u64::try_from(manifest.manifest_length).ok() != Some(bytes.len() as u64) {
        return Err(Error::invalid_data(format!(
            "manifest '{path}' is {} bytes, {list} says {} (manifest_length): the file was \
             replaced or truncated",
            bytes.len(),
            manifest.manifest_length
        )));
    }
    if let Some(text) = header_value(bytes, "partition-spec-id") {
        if text.trim().parse::<i32>().ok() != Some(manifest.partition_spec_id) {
            return Err(Error::invalid_data(format!(
                "manifest '{path}' was written for partition spec '{text}' \
                 (partition-spec-id in its header), {list} says {} (partition_spec_id): the \
                 file was replaced",
                manifest.partition_spec_id
            )));
        }
    }
    Ok(())
}

/// Check the manifest list `bytes` read at `location` for snapshot `snapshot_id`.
/// Errors ([`crate::ErrorKind::InvalidData`]) name the list and both ids.
pub(crate) fn check_manifest_list(bytes: &[u8], location: &str, snapshot_id: i64) -> Result<()> {
    match header_value(bytes, "snapshot-id") {
        Some(text) if text.trim().parse::<i64>().ok() != Some(snapshot_id) => {
            Err(Error::invalid_data(format!(
                "manifest list '{location}' was written for snapshot '{text}' (snapshot-id in \
                 its header), but snapshot {snapshot_id} names it: the file was replaced"
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::manifest_list::ManifestContent;

    /// An Avro header holding `pairs`, then a few bytes of blocks.
    fn avro(pairs: &[(&str, &str)]) -> Vec<u8> {
        let zigzag = |v: i64| {
            let mut n = ((v << 1) ^ (v >> 63)) as u64;
            let mut out = vec![];
            loop {
                let b = (n & 0x7f) as u8;
                n >>= 7;
                if n == 0 {
                    out.push(b);
                    return out;
                }
                out.push(b | 0x80);
            }
        };
        let mut out = b"Obj\x01".to_vec();
        out.extend(zigzag(pairs.len() as i64));
        for (k, v) in pairs {
            out.extend(zigzag(k.len() as i64));
            out.extend(k.as_bytes());
            out.extend(zigzag(v.len() as i64));
            out.extend(v.as_bytes());
        }
        out.extend(zigzag(0));
        out.extend([7u8; 16 + 8]);
        out
    }

    fn listed(bytes: &[u8], spec_id: i32) -> ManifestFile {
        ManifestFile {
            manifest_path: "file:///t/metadata/m.avro".into(),
            manifest_length: bytes.len() as i64,
            partition_spec_id: spec_id,
            content: ManifestContent::Data,
            sequence_number: 1,
            min_sequence_number: 1,
            added_snapshot_id: 1,
            added_files_count: None,
            existing_files_count: None,
            deleted_files_count: None,
            added_rows_count: None,
            existing_rows_count: None,
            deleted_rows_count: None,
            partitions: None,
            key_metadata: None,
            first_row_id: None,
        }
    }

    /// A manifest of another partition spec than its list says is refused naming both
    /// ids; one without the header key (not required) is read.
    #[test]
    fn the_header_partition_spec_id_must_be_the_lists() {
        let bytes = avro(&[("format-version", "2"), ("partition-spec-id", "3")]);
        check_manifest(&bytes, &listed(&bytes, 3), None).expect("the same spec");
        let err =
            check_manifest(&bytes, &listed(&bytes, 0), Some("file:///t/snap-1.avro")).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
        assert!(
            err.to_string().contains(
                "manifest 'file:///t/metadata/m.avro' was written for partition spec '3' \
                 (partition-spec-id in its header), the manifest list \
                 'file:///t/snap-1.avro' says 0 (partition_spec_id)"
            ),
            "{err}"
        );
        let bare = avro(&[("format-version", "2")]);
        check_manifest(&bare, &listed(&bare, 0), None).expect("no key: not refused");
        let mut short = listed(&bytes, 3);
        short.manifest_length += 1;
        let err = check_manifest(&bytes, &short, None).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "is {} bytes, its manifest list says {} (manifest_length)",
                bytes.len(),
                bytes.len() + 1
            )),
            "{err}"
        );
    }

    /// A manifest list of another snapshot is refused; one without `snapshot-id` is read.
    #[test]
    fn the_header_snapshot_id_must_be_the_snapshots() {
        let bytes = avro(&[("snapshot-id", "42")]);
        check_manifest_list(&bytes, "l.avro", 42).expect("its snapshot");
        let err = check_manifest_list(&bytes, "l.avro", 43).unwrap_err();
        assert!(
            err.to_string()
                .contains("manifest list 'l.avro' was written for snapshot '42'"),
            "{err}"
        );
        check_manifest_list(&avro(&[]), "l.avro", 43).expect("no key: not refused");
    }
}
