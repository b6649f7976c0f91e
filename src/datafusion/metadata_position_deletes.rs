//! The `position_deletes` metadata table: one row per deleted position of the snapshot's
//! live position delete files and deletion vectors, as Spark's (Iceberg Java
//! `PositionDeletesTable`), read from the delete files themselves.
//!
//! Columns: `file_path` (the data file, as stored), `pos` (the deleted row's position
//! in it, from 0), `partition` (the delete file's partition tuple in the table's unified
//! partition type; no column for an unpartitioned table), `spec_id`, `delete_file_path`,
//! and, on v3 tables, `content_offset` / `content_size_in_bytes` of a deletion vector's
//! blob (null for a Parquet position delete file; v1 and v2 tables have no such columns,
//! as in Java). Rows are ordered by delete file (as the manifests list
//! them), then data file path, then position. Java's optional `row` column (the deleted
//! row's values, which writers rarely store) is not given.

use datafusion::arrow::record_batch::RecordBatch;

use super::metadata_files::partition_column;
use super::metadata_tables::{ints, longs, strings, Columns};
use super::unified_partition::{unified_partition_type, unified_values};
use crate::delete::position_delete::PositionDeleteLoader;
use crate::delete::{is_deletion_vector, referenced_data_file};
use crate::error::{Error, Result};
use crate::spec::{DataContentType, FormatVersion, Literal, ManifestEntry};
use crate::table::Table;

/// The rows of the table (see the module docs) for `entries`, the live entries of the
/// snapshot.
///
/// Errors: a delete file that is missing ([`crate::ErrorKind::NotFound`]) or corrupt
/// ([`crate::ErrorKind::InvalidData`]), named; a deletion vector without its
/// `referenced_data_file`; a position delete file in another format than Parquet
/// ([`crate::ErrorKind::Unsupported`]).
pub(crate) async fn position_deletes_table(
    table: &Table,
    entries: &[&ManifestEntry],
) -> Result<RecordBatch> {
    let metadata = table.metadata();
    let unified = unified_partition_type(metadata);
    let loader = PositionDeleteLoader::new(table.file_io().clone());
    let (mut file_path, mut pos, mut spec_id, mut delete_path) = (vec![], vec![], vec![], vec![]);
    let (mut offset, mut size) = (vec![], vec![]);
    let mut partitions: Vec<Vec<Option<Literal>>> = vec![];
    for entry in entries
        .iter()
        .filter(|e| e.data_file.content == DataContentType::PositionDeletes)
    {
        let file = &entry.data_file;
        let mut deleted: Vec<(String, Vec<u64>)> = if is_deletion_vector(file) {
            let data_file = referenced_data_file(file).ok_or_else(|| {
                Error::invalid_data(format!(
                    "deletion vector '{}' names no referenced_data_file",
                    file.file_path
                ))
            })?;
            let positions = loader.load_deletion_vector(entry).await?;
            vec![(data_file, positions.iter().collect())]
        } else {
            let parsed = loader.load_position_delete_file(entry).await?;
            parsed
                .by_data_file
                .iter()
                .map(|(path, positions)| (path.clone(), positions.iter().collect()))
                .collect()
        };
        deleted.sort_by(|a, b| a.0.cmp(&b.0));
        let partition = unified_values(metadata, &unified, entry);
        let dv = is_deletion_vector(file);
        for (data_file, positions) in deleted {
            for p in positions {
                file_path.push(Some(data_file.clone()));
                pos.push(Some(i64::try_from(p).map_err(|_| {
                    Error::invalid_data(format!(
                        "delete file '{}': position {p} beyond the long range",
                        file.file_path
                    ))
                })?));
                spec_id.push(Some(entry.spec_id));
                delete_path.push(Some(file.file_path.clone()));
                offset.push(file.content_offset.filter(|_| dv));
                size.push(file.content_size_in_bytes.filter(|_| dv));
                partitions.push(partition.clone());
            }
        }
    }
    let mut c = Columns::default();
    c.add("file_path", strings(file_path));
    c.add("pos", longs(pos));
    if let Some(p) = partition_column(&unified, &partitions)? {
        c.add("partition", p);
    }
    c.add("spec_id", ints(spec_id));
    c.add("delete_file_path", strings(delete_path));
    // Java's `PositionDeletesTable` has the deletion vector columns from v3 on only
    if metadata.format_version >= FormatVersion::V3 {
        c.add("content_offset", longs(offset));
        c.add("content_size_in_bytes", longs(size));
    }
    c.into_batch()
}
