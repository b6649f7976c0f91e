//! A file the scan reads as DataFusion's `PartitionedFile`: its resolved object path and
//! its size in bytes as recorded (a data file's `file_size_in_bytes`, a manifest's
//! `manifest_length`). A data file's modification time is its
//! [`FileVersion::last_modified`] (derived from its manifest entry, so that DataFusion's
//! footer cache tells a file re-added at the same path from the one it cached, see
//! [`crate::scan::file_version`]); a manifest's is the epoch (manifests are never re-added
//! at a path: each commit writes new ones).

use datafusion::datasource::listing::PartitionedFile;
use object_store::path::Path as ObjectPath;
use object_store::ObjectMeta;

use crate::error::{Error, Result};
use crate::scan::file_version::FileVersion;
use crate::spec::{DataFile, ManifestEntry};

/// The `PartitionedFile` of the object at `location` (as resolved: `PartitionedFile::new`
/// would re-parse a string with `Path::from`, which encodes `%`, so a file named
/// `p=100%25` would be looked up as `p=100%2525`), `size` bytes long.
pub(crate) fn partitioned_file_at(location: ObjectPath, size: u64) -> PartitionedFile {
    PartitionedFile::new_from_meta(ObjectMeta {
        location,
        last_modified: chrono::DateTime::UNIX_EPOCH,
        size,
        e_tag: None,
        version: None,
    })
}

/// The `PartitionedFile` of the data file `entry` lists, at `location` (resolved, as
/// for [`partitioned_file_at`]): its `file_size_in_bytes` as the size and its
/// [`FileVersion::last_modified`] as the modification time.
///
/// Errors: a negative `file_size_in_bytes` ([`crate::ErrorKind::InvalidData`], naming
/// the file).
pub(crate) fn data_file_at(location: ObjectPath, entry: &ManifestEntry) -> Result<PartitionedFile> {
    let size = data_file_size(&entry.data_file)?;
    Ok(PartitionedFile::new_from_meta(ObjectMeta {
        location,
        last_modified: FileVersion::of(entry).last_modified(),
        size,
        e_tag: None,
        version: None,
    }))
}

/// `data_file`'s `file_size_in_bytes` in bytes.
///
/// Errors: a negative size ([`crate::ErrorKind::InvalidData`], naming the file).
pub(crate) fn data_file_size(data_file: &DataFile) -> Result<u64> {
    u64::try_from(data_file.file_size_in_bytes).map_err(|_| {
        Error::invalid_data(format!(
            "data file '{}' has negative file_size_in_bytes",
            data_file.file_path
        ))
    })
}
