//! Manifests: the entries that track data and delete files (spec: "Manifests").
//!
//! Read from Avro for format versions 1, 2 and 3. Entries written with null
//! `snapshot_id`, `sequence_number` or `file_sequence_number` inherit them from the
//! manifest's entry in the manifest list (spec: "Sequence Number Inheritance"); v1
//! entries all have sequence number 0. The partition tuple is typed by the manifest's own
//! partition spec.

use super::avro_columns::{read_batches, Columns};
use super::column_stats::ColumnStats;
use super::int_map::IntMap;
use super::manifest_columns::EntryColumns;
use super::manifest_list::ManifestFile;
use super::partition::PartitionSpec;
use super::schema::Schema;
use super::types::{PrimitiveType, Type};
use super::values::Literal;
use crate::error::{Error, Result};

/// `status` of a manifest entry (field 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestStatus {
    /// 0: the file was in an earlier snapshot and is still live.
    Existing,
    /// 1: the file was added by this manifest's snapshot.
    Added,
    /// 2: the file was removed by this manifest's snapshot.
    Deleted,
}

/// `content` of a data file (field 134).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataContentType {
    /// 0: data rows.
    Data,
    /// 1: position deletes (Parquet `file_path`, `pos`) or v3 deletion vectors (Puffin).
    PositionDeletes,
    /// 2: equality deletes.
    EqualityDeletes,
}

/// `file_format` of a data file (field 101).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFileFormat {
    /// Apache Parquet.
    Parquet,
    /// Apache Avro.
    Avro,
    /// Apache ORC.
    Orc,
    /// Puffin (v3 deletion vectors).
    Puffin,
}

/// A bound of `lower_bounds` / `upper_bounds` in the single-value binary form (spec:
/// Appendix D), held inline up to 16 bytes: every fixed-width type and the strings and
/// binaries of the default `truncate(16)` metrics mode need no allocation of their own.
pub type BoundBytes = smallvec::SmallVec<[u8; 16]>;

/// A data or delete file and its metrics (spec: "Manifests", `data_file` struct).
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    /// `content` (134).
    pub content: DataContentType,
    /// `file_path` (100), as stored (not remapped).
    pub file_path: String,
    /// `file_format` (101).
    pub file_format: DataFileFormat,
    /// `partition` (102): one value per field of the manifest's spec, `None` for null.
    pub partition: Vec<Option<Literal>>,
    /// `record_count` (103).
    pub record_count: i64,
    /// `file_size_in_bytes` (104).
    pub file_size_in_bytes: i64,
    /// `column_sizes` (108): field id → bytes.
    pub column_sizes: IntMap<i64>,
    /// `value_counts` (109): field id → values incl. nulls and NaNs.
    pub value_counts: IntMap<i64>,
    /// `null_value_counts` (110).
    pub null_value_counts: IntMap<i64>,
    /// `nan_value_counts` (137).
    pub nan_value_counts: IntMap<i64>,
    /// `lower_bounds` (125): field id → single-value binary.
    pub lower_bounds: IntMap<BoundBytes>,
    /// `upper_bounds` (128): field id → single-value binary.
    pub upper_bounds: IntMap<BoundBytes>,
    /// `key_metadata` (131).
    pub key_metadata: Option<Vec<u8>>,
    /// `split_offsets` (132), bytes.
    pub split_offsets: Vec<i64>,
    /// `equality_ids` (135): field ids of an equality delete file.
    pub equality_ids: Vec<i32>,
    /// `sort_order_id` (140).
    pub sort_order_id: Option<i32>,
    /// v3 `first_row_id` (142).
    pub first_row_id: Option<i64>,
    /// `referenced_data_file` (143): the one data file a position delete applies to.
    pub referenced_data_file: Option<String>,
    /// `content_offset` (144): byte offset of a deletion vector blob.
    pub content_offset: Option<i64>,
    /// `content_size_in_bytes` (145): length of a deletion vector blob.
    pub content_size_in_bytes: Option<i64>,
}

/// An entry of a manifest, with inherited values filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestEntry {
    /// `status` (0).
    pub status: ManifestStatus,
    /// `snapshot_id` (1), inherited when null.
    pub snapshot_id: i64,
    /// `sequence_number` (3): the data sequence number, inherited when null.
    pub data_sequence_number: i64,
    /// `file_sequence_number` (4), inherited when null.
    pub file_sequence_number: i64,
    /// The partition spec the entry was written with.
    pub spec_id: i32,
    /// `data_file` (2).
    pub data_file: DataFile,
}

impl ManifestEntry {
    /// Whether the entry's file is live in the snapshot (added or existing).
    pub fn is_alive(&self) -> bool {
        self.status != ManifestStatus::Deleted
    }

    /// An estimate of the memory the decoded entry holds, in bytes: the struct itself
    /// plus what its strings, vectors and maps own on the heap (by capacity; a map's
    /// slot is its `(field id, value)` pair). Used to bound caches of
    /// decoded manifests in bytes; allocator overhead is not counted.
    pub fn estimated_bytes(&self) -> u64 {
        let f = &self.data_file;
        fn counts(m: &IntMap<i64>) -> usize {
            m.capacity() * std::mem::size_of::<(i32, i64)>()
        }
        fn bounds(m: &IntMap<BoundBytes>) -> usize {
            m.capacity() * std::mem::size_of::<(i32, BoundBytes)>()
                + m.values()
                    .filter(|b| b.spilled())
                    .map(BoundBytes::capacity)
                    .sum::<usize>()
        }
        let partition = f.partition.capacity() * std::mem::size_of::<Option<Literal>>()
            + f.partition
                .iter()
                .flatten()
                .map(Literal::heap_bytes)
                .sum::<usize>();
        let heap = f.file_path.capacity()
            + partition
            + counts(&f.column_sizes)
            + counts(&f.value_counts)
            + counts(&f.null_value_counts)
            + counts(&f.nan_value_counts)
            + bounds(&f.lower_bounds)
            + bounds(&f.upper_bounds)
            + f.key_metadata.as_ref().map_or(0, Vec::capacity)
            + f.split_offsets.capacity() * std::mem::size_of::<i64>()
            + f.equality_ids.capacity() * std::mem::size_of::<i32>()
            + f.referenced_data_file.as_ref().map_or(0, String::capacity);
        (std::mem::size_of::<Self>() + heap) as u64
    }
}

/// The type of each partition field of `spec`, as [`PartitionSpec::partition_type`]
/// types it from `schemas` (the table's, current first, then newest first: see
/// [`super::TableMetadata::schemas_newest_first`]): so a spec whose source column was
/// later dropped still types correctly; `unknown` for an `identity` or `truncate` field
/// whose source column no schema has.
///
/// Errors: a transform that cannot apply to its source's type, or a non-primitive
/// result ([`crate::ErrorKind::InvalidData`], naming the partition field).
pub fn partition_field_types(
    spec: &PartitionSpec,
    schemas: &[&Schema],
) -> Result<Vec<PrimitiveType>> {
    spec.partition_type(schemas)?
        .into_iter()
        .map(|f| match *f.field_type {
            Type::Primitive(p) => Ok(p),
            other => Err(Error::invalid_data(format!(
                "partition field '{}' has non-primitive type {other}",
                f.name
            ))),
        })
        .collect()
}

/// Parse a manifest file, decoded column-wise.
///
/// `manifest` is its entry in the manifest list (for inheritance), `spec` the partition
/// spec it was written with, `schemas` the table's schemas (current first) used to type
/// the partition tuple. Errors name `location`, the entry index and the field.
pub fn parse_manifest(
    bytes: &[u8],
    location: &str,
    manifest: &ManifestFile,
    spec: &PartitionSpec,
    schemas: &[&Schema],
) -> Result<Vec<ManifestEntry>> {
    parse_manifest_keeping(bytes, location, manifest, spec, schemas, &ColumnStats::All)
}

/// [`parse_manifest`] keeping on data files only the metrics of the columns `stats`
/// selects (delete files keep all theirs; see [`ColumnStats`]). Same errors.
pub fn parse_manifest_keeping(
    bytes: &[u8],
    location: &str,
    manifest: &ManifestFile,
    spec: &PartitionSpec,
    schemas: &[&Schema],
    stats: &ColumnStats,
) -> Result<Vec<ManifestEntry>> {
    let types = partition_field_types(spec, schemas)
        .map_err(|e| e.context(format!("manifest '{location}'")))?;
    let batches = read_batches(bytes, location)?;
    let mut entries = Vec::with_capacity(batches.iter().map(|b| b.num_rows()).sum());
    for batch in &batches {
        let columns = Columns::of_batch(batch);
        let bound = EntryColumns::bind(&columns, spec, &types)
            .map_err(|e| e.context(format!("manifest '{location}'")))?;
        for row in 0..batch.num_rows() {
            let i = entries.len();
            entries.push(
                bound
                    .entry(row, manifest, spec, stats)
                    .map_err(|e| e.context(format!("manifest '{location}', entry {i}")))?,
            );
        }
    }
    inherit_first_row_ids(&mut entries, manifest)?;
    Ok(entries)
}

/// Row-lineage inheritance (v3, spec: "Row Lineage", "First Row ID Inheritance"): in a
/// data manifest whose list entry has a `first_row_id`, each live (added or existing)
/// data file without one gets that id plus the record counts of the live files before it
/// (in manifest order) that had none. Deleted entries take no ids, as in Java's reader:
/// the manifest list reserved a range for the added and existing rows only (a manifest
/// from before an upgrade to v3 can hold deleted entries without ids).
///
/// Errors: [`InvalidData`](crate::ErrorKind::InvalidData) naming the manifest when the
/// ids run past `i64` (a `record_count` no real file has).
pub(super) fn inherit_first_row_ids(
    entries: &mut [ManifestEntry],
    manifest: &ManifestFile,
) -> Result<()> {
    let Some(mut next) = manifest.first_row_id else {
        return Ok(());
    };
    for e in entries.iter_mut() {
        if e.status == ManifestStatus::Deleted {
            continue;
        }
        let f = &mut e.data_file;
        if f.content == DataContentType::Data && f.first_row_id.is_none() {
            f.first_row_id = Some(next);
            next = next.checked_add(f.record_count).ok_or_else(|| {
                Error::invalid_data(format!(
                    "manifest '{}': row ids inherited from 'first_row_id' {:?} run past the \
                     largest row id at data file '{}' ('record_count' {})",
                    manifest.manifest_path, manifest.first_row_id, f.file_path, f.record_count
                ))
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(status: ManifestStatus, rows: i64, first_row_id: Option<i64>) -> ManifestEntry {
        ManifestEntry {
            status,
            snapshot_id: 1,
            data_sequence_number: 1,
            file_sequence_number: 1,
            spec_id: 0,
            data_file: DataFile {
                record_count: rows,
                first_row_id,
                ..crate::write::empty_data_file(&format!("f{rows}"), DataContentType::Data)
            },
        }
    }

    /// Live files without an id take consecutive ranges from the manifest's
    /// `first_row_id`; deleted entries take none (the manifest list reserved ids for
    /// added and existing rows only), and files with an id keep it.
    #[test]
    fn first_row_ids_are_inherited_by_live_files_without_one() {
        use ManifestStatus::{Added, Deleted, Existing};
        let manifest = ManifestFile {
            manifest_path: "m.avro".into(),
            manifest_length: 1,
            partition_spec_id: 0,
            content: super::super::manifest_list::ManifestContent::Data,
            sequence_number: 2,
            min_sequence_number: 1,
            added_snapshot_id: 2,
            added_files_count: Some(1),
            existing_files_count: Some(2),
            deleted_files_count: Some(1),
            added_rows_count: Some(3),
            existing_rows_count: Some(12),
            deleted_rows_count: Some(10),
            partitions: None,
            key_metadata: None,
            first_row_id: Some(100),
        };
        let mut entries = vec![
            entry(Deleted, 10, None),
            entry(Existing, 5, None),
            entry(Existing, 7, Some(40)),
            entry(Added, 3, None),
        ];
        inherit_first_row_ids(&mut entries, &manifest).unwrap();
        let ids: Vec<Option<i64>> = entries.iter().map(|e| e.data_file.first_row_id).collect();
        // ids 100..108: within the 15 the manifest list reserved (added + existing rows)
        assert_eq!(ids, [None, Some(100), Some(40), Some(105)]);
        // a manifest without an id (written before an upgrade to v3) assigns none
        let mut entries = vec![entry(Added, 5, None)];
        let mut old = manifest.clone();
        old.first_row_id = None;
        inherit_first_row_ids(&mut entries, &old).unwrap();
        assert_eq!(entries[0].data_file.first_row_id, None);
    }
}
