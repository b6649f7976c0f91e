//! Row-level deletes: which delete files apply to a data file, and what they delete.
//!
//! Source: Iceberg spec, "Row-level Deletes", "Scan Planning", "Deletion Vectors",
//! "Position Delete Files", "Equality Delete Files", and the Puffin spec
//! (`deletion-vector-v1`). This module is the part that does not depend on DataFusion
//! plans; the scan turns its answers into row selections and anti-joins.
//!
//! - [`DeleteFileIndex`] assigns a snapshot's live delete files to data files by the
//!   spec's sequence-number and partition rules (Java's `DeleteFileIndex`).
//! - [`PositionDeleteLoader`] reads Parquet position delete files and Puffin deletion
//!   vectors (each file once) and answers the set of deleted row positions (0-based row
//!   ordinals in the data file) of one data file as a [`roaring::RoaringTreemap`];
//!   [`row_selection`] turns that into the Parquet row selection of the surviving rows.
//!   [`PositionDeletes`] is that set for one data file as a scan applies it (merged,
//!   fragmented or not, live rows as bits), kept per data file by the session cache.
//!   [`PositionDeleteCache`] keeps what it decodes across the scans of a session
//!   (delete files are immutable), bounded in bytes.
//! - [`EqualityDeleteLoader`] reads the equality columns of equality delete files (each
//!   file once) into Arrow record batches typed like the table's columns;
//!   [`EqualityDeleteKeys`] holds their keys with the greatest delete sequence number per
//!   scope and answers which data rows they delete; [`build_key_rows`] turns key batches
//!   into Arrow row-format keys.
//!
//! Paths: delete and data files are matched by their **stored** `file_path` (as written
//! in manifests and inside position delete files); files are opened through
//! [`crate::io::FileIO`], which applies the table's location remapping.
//!
//! Errors name the delete file: a missing file is [`crate::ErrorKind::NotFound`]; a
//! truncated or corrupt Parquet or Puffin file, a bad deletion-vector length, magic or
//! CRC, and a Parquet delete file whose size differs from its manifest entry's
//! `file_size_in_bytes` (replaced or truncated) are [`crate::ErrorKind::InvalidData`].
//! Nothing is skipped silently.

pub mod delete_file_index;
pub mod deletion_vector;
pub mod equality_delete;
pub mod equality_keys;
mod file_size;
pub mod planned;
pub mod position_delete;
pub mod position_delete_cache;
pub mod puffin;

pub use delete_file_index::{is_deletion_vector, referenced_data_file, DeleteFileIndex};
pub use equality_delete::{build_key_rows, equality_delete_schema, EqualityDeleteLoader};
pub use equality_keys::{EqualityDeleteKeys, GLOBAL_SCOPE};
pub use planned::{live_rows, PositionDeletes, ROWS_PER_RUN_FRAGMENTED};
pub use position_delete::{row_selection, PositionDeleteFile, PositionDeleteLoader};
pub use position_delete_cache::{
    PositionDeleteCache, PositionDeleteCacheStats, DEFAULT_POSITION_DELETE_CACHE_BYTES,
};

#[cfg(test)]
mod corpus_tests;
