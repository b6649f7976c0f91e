//! Manifests: the entries that track data and delete files (spec: "Manifests").
//!
//! Read from Avro for format versions 1, 2 and 3. Entries written with null
//! `snapshot_id`, `sequence_number` or `file_sequence_number` inherit them from the
//! manifest's entry in the manifest list (spec: "Sequence Number Inheritance"); v1
//! entries all have sequence number 0. The partition tuple is typed by the manifest's own
//! partition spec.

use std::collections::HashMap;

use apache_avro::types::Value;

use super::avro::{as_bytes, as_long, int_map, partition_literal, read_container, Record};
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
    pub column_sizes: HashMap<i32, i64>,
    /// `value_counts` (109): field id → values incl. nulls and NaNs.
    pub value_counts: HashMap<i32, i64>,
    /// `null_value_counts` (110).
    pub null_value_counts: HashMap<i32, i64>,
    /// `nan_value_counts` (137).
    pub nan_value_counts: HashMap<i32, i64>,
    /// `lower_bounds` (125): field id → single-value binary.
    pub lower_bounds: HashMap<i32, Vec<u8>>,
    /// `upper_bounds` (128): field id → single-value binary.
    pub upper_bounds: HashMap<i32, Vec<u8>>,
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
}

/// The type of each partition field of `spec`: the transform's result type of the source
/// column, found in the first of `schemas` that has it (so specs whose source column was
/// later dropped still type correctly); `unknown` when no schema has it.
pub fn partition_field_types(
    spec: &PartitionSpec,
    schemas: &[&Schema],
) -> Result<Vec<PrimitiveType>> {
    spec.fields
        .iter()
        .map(|f| {
            let source = schemas.iter().find_map(|s| s.field_by_id(f.source_id));
            match source {
                None => Ok(PrimitiveType::Unknown),
                Some(source) => match f.transform.result_type(&source.field_type)? {
                    Type::Primitive(p) => Ok(p),
                    other => Err(Error::invalid_data(format!(
                        "partition field '{}' has non-primitive type {other}",
                        f.name
                    ))),
                },
            }
        })
        .collect()
}

fn parse_data_file(v: Value, spec: &PartitionSpec, types: &[PrimitiveType]) -> Result<DataFile> {
    let mut r = Record::from_value(v, "data_file")?;
    let content = match r.opt_int("content")?.unwrap_or(0) {
        0 => DataContentType::Data,
        1 => DataContentType::PositionDeletes,
        2 => DataContentType::EqualityDeletes,
        other => {
            return Err(Error::invalid_data(format!(
                "field 'content': unknown value {other}"
            )))
        }
    };
    let format = r.string("file_format")?;
    let file_format = match format.to_ascii_uppercase().as_str() {
        "PARQUET" => DataFileFormat::Parquet,
        "AVRO" => DataFileFormat::Avro,
        "ORC" => DataFileFormat::Orc,
        "PUFFIN" => DataFileFormat::Puffin,
        _ => {
            return Err(Error::invalid_data(format!(
                "field 'file_format': unknown format '{format}'"
            )))
        }
    };
    let partition = match r.take("partition") {
        None => vec![],
        Some(p) => {
            let values = Record::from_value(p, "partition")?.into_ordered();
            if values.len() != spec.fields.len() {
                return Err(Error::invalid_data(format!(
                    "field 'partition': {} values for spec {} with {} fields",
                    values.len(),
                    spec.spec_id,
                    spec.fields.len()
                )));
            }
            values
                .into_iter()
                .zip(spec.fields.iter().zip(types))
                .map(|(v, (f, ty))| match ty {
                    PrimitiveType::Unknown => Ok(None),
                    ty => partition_literal(v, ty, &f.name),
                })
                .collect::<Result<Vec<_>>>()?
        }
    };
    let longs = |r: &mut Record, name: &str| int_map(r.take(name), name, as_long);
    let bytes = |r: &mut Record, name: &str| int_map(r.take(name), name, as_bytes);
    let list_of = |v: Option<Value>, name: &str| -> Result<Vec<i64>> {
        match v {
            None => Ok(vec![]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    as_long(i).ok_or_else(|| {
                        Error::invalid_data(format!("field '{name}': expected numbers"))
                    })
                })
                .collect(),
            Some(_) => Err(Error::invalid_data(format!(
                "field '{name}': expected an array"
            ))),
        }
    };
    let split_offsets = list_of(r.take("split_offsets"), "split_offsets")?;
    let equality_ids = list_of(r.take("equality_ids"), "equality_ids")?
        .into_iter()
        .map(|v| {
            i32::try_from(v).map_err(|_| Error::invalid_data("field 'equality_ids': out of range"))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(DataFile {
        content,
        file_path: r.location("file_path")?,
        file_format,
        partition,
        record_count: r.long("record_count")?,
        file_size_in_bytes: r.long("file_size_in_bytes")?,
        column_sizes: longs(&mut r, "column_sizes")?,
        value_counts: longs(&mut r, "value_counts")?,
        null_value_counts: longs(&mut r, "null_value_counts")?,
        nan_value_counts: longs(&mut r, "nan_value_counts")?,
        lower_bounds: bytes(&mut r, "lower_bounds")?,
        upper_bounds: bytes(&mut r, "upper_bounds")?,
        key_metadata: r.opt_bytes("key_metadata")?,
        split_offsets,
        equality_ids,
        sort_order_id: r.opt_int("sort_order_id")?,
        first_row_id: r.opt_long("first_row_id")?,
        referenced_data_file: match r.opt("referenced_data_file") {
            None => None,
            Some(_) => Some(r.string("referenced_data_file")?),
        },
        content_offset: r.opt_long("content_offset")?,
        content_size_in_bytes: r.opt_long("content_size_in_bytes")?,
    })
}

/// Parse a manifest file.
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
    let (values, _meta) = read_container(bytes, location)?;
    let types = partition_field_types(spec, schemas)
        .map_err(|e| e.context(format!("manifest '{location}'")))?;
    let mut entries = values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            parse_entry(v, manifest, spec, &types)
                .map_err(|e| e.context(format!("manifest '{location}', entry {i}")))
        })
        .collect::<Result<Vec<_>>>()?;
    inherit_first_row_ids(&mut entries, manifest);
    Ok(entries)
}

/// Row-lineage inheritance (v3, spec: "Row Lineage", "First Row ID Inheritance"): in a
/// data manifest whose list entry has a `first_row_id`, each data file without one gets
/// that id plus the record counts of the files before it (in manifest order) that had
/// none.
fn inherit_first_row_ids(entries: &mut [ManifestEntry], manifest: &ManifestFile) {
    let Some(mut next) = manifest.first_row_id else {
        return;
    };
    for e in entries.iter_mut() {
        let f = &mut e.data_file;
        if f.content == DataContentType::Data && f.first_row_id.is_none() {
            f.first_row_id = Some(next);
            next += f.record_count;
        }
    }
}

fn parse_entry(
    v: Value,
    manifest: &ManifestFile,
    spec: &PartitionSpec,
    types: &[PrimitiveType],
) -> Result<ManifestEntry> {
    let mut r = Record::from_value(v, "manifest_entry")?;
    let status = match r.int("status")? {
        0 => ManifestStatus::Existing,
        1 => ManifestStatus::Added,
        2 => ManifestStatus::Deleted,
        other => {
            return Err(Error::invalid_data(format!(
                "field 'status': unknown value {other}"
            )))
        }
    };
    // Inheritance (spec: "Sequence Number Inheritance"): a null sequence number is only
    // valid on an ADDED entry, which takes the manifest's sequence number.
    let inherit = |value: Option<i64>, name: &str| -> Result<i64> {
        match value {
            Some(v) => Ok(v),
            None if status == ManifestStatus::Added || manifest.sequence_number == 0 => {
                Ok(manifest.sequence_number)
            }
            None => Err(Error::invalid_data(format!(
                "field '{name}' is null on an entry that is not ADDED"
            ))),
        }
    };
    let data_sequence_number = inherit(r.opt_long("sequence_number")?, "sequence_number")?;
    let file_sequence_number =
        inherit(r.opt_long("file_sequence_number")?, "file_sequence_number")?;
    let snapshot_id = r
        .opt_long("snapshot_id")?
        .unwrap_or(manifest.added_snapshot_id);
    let data_file = r
        .take("data_file")
        .ok_or_else(|| Error::invalid_data("missing required field 'data_file'"))?;
    Ok(ManifestEntry {
        status,
        snapshot_id,
        data_sequence_number,
        file_sequence_number,
        spec_id: spec.spec_id,
        data_file: parse_data_file(data_file, spec, types)?,
    })
}
