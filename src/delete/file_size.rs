//! A delete file read whole is checked against the size its manifest entry records, as
//! data files are (`crate::datafusion::file_reader`): a delete file replaced by another
//! (or truncated) would otherwise delete other rows without any error.
//!
//! Source: Iceberg spec, "Manifests": `file_size_in_bytes` (field 104) is the total file
//! size in bytes. Java hands that length to its Parquet reader, which finds the footer
//! from it, so a file of another length fails there (`ParquetIO` / `Parquet.ReadBuilder`
//! reading an `InputFile` of the manifest's length).

use crate::error::{Error, Result};
use crate::io::FileIO;
use crate::spec::DataFile;

/// Fails when `read_len` (bytes, the length of the file as read from the store) differs
/// from `file`'s `file_size_in_bytes`.
///
/// `kind` names the file in the error ("position delete file", "equality delete file"),
/// which gives its stored location, where it was read for a moved table, both sizes and
/// the field. Errors: [`crate::ErrorKind::InvalidData`].
pub(crate) fn check_delete_file_size(
    kind: &str,
    file_io: &FileIO,
    file: &DataFile,
    read_len: u64,
) -> Result<()> {
    if u64::try_from(file.file_size_in_bytes).ok() == Some(read_len) {
        return Ok(());
    }
    Err(Error::invalid_data(format!(
        "{} is {read_len} bytes, the manifest says {} (file_size_in_bytes): the file was \
         replaced or truncated",
        crate::io::file_context(kind, file_io, &file.file_path),
        file.file_size_in_bytes
    )))
}
