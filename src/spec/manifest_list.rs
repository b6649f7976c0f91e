//! Manifest lists: one per snapshot, listing its manifests (spec: "Manifest Lists").
//!
//! Read from Avro for format versions 1, 2 and 3. v1 lists have no content, sequence
//! numbers or `min_sequence_number`: they read as data manifests with sequence number 0.

use apache_avro::types::Value;

use super::avro::{read_container, Record};
use crate::error::{Error, Result};

/// What a manifest tracks (`content`, field 517).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestContent {
    /// 0: data files.
    Data,
    /// 1: delete files.
    Deletes,
}

/// Partition-field summary of a manifest (`field_summary`, field 508).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldSummary {
    /// Whether any partition value of the field is null.
    pub contains_null: bool,
    /// Whether any value is NaN (`None` when not written).
    pub contains_nan: Option<bool>,
    /// Lower bound over all values, single-value binary form.
    pub lower_bound: Option<Vec<u8>>,
    /// Upper bound over all values, single-value binary form.
    pub upper_bound: Option<Vec<u8>>,
}

/// One entry of a manifest list: a manifest file and its summary.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestFile {
    /// `manifest_path` (500).
    pub manifest_path: String,
    /// `manifest_length` (501), bytes.
    pub manifest_length: i64,
    /// `partition_spec_id` (502): the spec its entries were written with.
    pub partition_spec_id: i32,
    /// `content` (517).
    pub content: ManifestContent,
    /// `sequence_number` (515): sequence number when the manifest was added.
    pub sequence_number: i64,
    /// `min_sequence_number` (516): lowest data sequence number of live entries.
    pub min_sequence_number: i64,
    /// `added_snapshot_id` (503).
    pub added_snapshot_id: i64,
    /// `added_files_count` (504).
    pub added_files_count: Option<i32>,
    /// `existing_files_count` (505).
    pub existing_files_count: Option<i32>,
    /// `deleted_files_count` (506).
    pub deleted_files_count: Option<i32>,
    /// `added_rows_count` (512).
    pub added_rows_count: Option<i64>,
    /// `existing_rows_count` (513).
    pub existing_rows_count: Option<i64>,
    /// `deleted_rows_count` (514).
    pub deleted_rows_count: Option<i64>,
    /// `partitions` (507): one summary per partition field.
    pub partitions: Option<Vec<FieldSummary>>,
    /// `key_metadata` (519).
    pub key_metadata: Option<Vec<u8>>,
    /// v3 `first_row_id` (520).
    pub first_row_id: Option<i64>,
}

impl ManifestFile {
    /// Whether the manifest may hold live files (added or existing).
    pub fn has_live_files(&self) -> bool {
        self.added_files_count.is_none_or(|c| c > 0)
            || self.existing_files_count.is_none_or(|c| c > 0)
    }

    fn from_record(mut r: Record) -> Result<ManifestFile> {
        let content = match r.opt_int("content")?.unwrap_or(0) {
            0 => ManifestContent::Data,
            1 => ManifestContent::Deletes,
            other => {
                return Err(Error::invalid_data(format!(
                    "field 'content': unknown value {other}"
                )))
            }
        };
        // v1 writers name the counts `added_data_files_count` etc.
        let count = |r: &Record, a: &str, b: &str| -> Result<Option<i32>> {
            Ok(r.opt_int(a)?.or(r.opt_int(b)?))
        };
        let partitions = match r.take("partitions") {
            None => None,
            Some(Value::Array(items)) => Some(
                items
                    .into_iter()
                    .map(|v| {
                        let s = Record::from_value(v, "field_summary")?;
                        Ok(FieldSummary {
                            contains_null: s.opt_bool("contains_null")?.unwrap_or(true),
                            contains_nan: s.opt_bool("contains_nan")?,
                            lower_bound: s.opt_bytes("lower_bound")?,
                            upper_bound: s.opt_bytes("upper_bound")?,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
            Some(_) => return Err(Error::invalid_data("field 'partitions': expected an array")),
        };
        let sequence_number = r.opt_long("sequence_number")?.unwrap_or(0);
        Ok(ManifestFile {
            manifest_path: r.location("manifest_path")?,
            manifest_length: r.long("manifest_length")?,
            partition_spec_id: r.int("partition_spec_id")?,
            content,
            sequence_number,
            min_sequence_number: r
                .opt_long("min_sequence_number")?
                .unwrap_or(sequence_number),
            added_snapshot_id: r.long("added_snapshot_id")?,
            added_files_count: count(&r, "added_files_count", "added_data_files_count")?,
            existing_files_count: count(&r, "existing_files_count", "existing_data_files_count")?,
            deleted_files_count: count(&r, "deleted_files_count", "deleted_data_files_count")?,
            added_rows_count: r.opt_long("added_rows_count")?,
            existing_rows_count: r.opt_long("existing_rows_count")?,
            deleted_rows_count: r.opt_long("deleted_rows_count")?,
            partitions,
            key_metadata: r.opt_bytes("key_metadata")?,
            first_row_id: r.opt_long("first_row_id")?,
        })
    }
}

/// Parse a manifest list file; errors name `location` and the field.
pub fn parse_manifest_list(bytes: &[u8], location: &str) -> Result<Vec<ManifestFile>> {
    let (values, _) = read_container(bytes, location)?;
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            Record::from_value(v, "manifest_file")
                .and_then(ManifestFile::from_record)
                .map_err(|e| e.context(format!("manifest list '{location}', entry {i}")))
        })
        .collect()
}
