//! Manifest lists: one per snapshot, listing its manifests (spec: "Manifest Lists").
//!
//! Read from Avro for format versions 1, 2 and 3. v1 lists have no content, sequence
//! numbers or `min_sequence_number`: they read as data manifests with sequence number 0.

use datafusion::arrow::array::{Array, AsArray, BooleanArray, GenericListArray};

use super::avro_columns::{read_batches, BytesCol, Columns, LongCol, StrCol};
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
}

/// The columns of a manifest list, bound once per record batch.
struct ListColumns<'a> {
    manifest_path: StrCol<'a>,
    manifest_length: LongCol<'a>,
    partition_spec_id: LongCol<'a>,
    content: LongCol<'a>,
    sequence_number: LongCol<'a>,
    min_sequence_number: LongCol<'a>,
    added_snapshot_id: LongCol<'a>,
    // v1 writers name the counts `added_data_files_count` etc.
    added_files_count: (LongCol<'a>, LongCol<'a>),
    existing_files_count: (LongCol<'a>, LongCol<'a>),
    deleted_files_count: (LongCol<'a>, LongCol<'a>),
    added_rows_count: LongCol<'a>,
    existing_rows_count: LongCol<'a>,
    deleted_rows_count: LongCol<'a>,
    partitions: Option<(&'a GenericListArray<i32>, SummaryColumns<'a>)>,
    key_metadata: BytesCol<'a>,
    first_row_id: LongCol<'a>,
}

/// The columns of the `field_summary` records of a manifest list.
struct SummaryColumns<'a> {
    contains_null: Option<&'a BooleanArray>,
    contains_nan: Option<&'a BooleanArray>,
    lower_bound: BytesCol<'a>,
    upper_bound: BytesCol<'a>,
}

fn missing(name: &str) -> Error {
    Error::invalid_data(format!("missing required field '{name}'"))
}

fn flag(col: Option<&BooleanArray>, i: usize) -> Option<bool> {
    col.and_then(|c| c.is_valid(i).then(|| c.value(i)))
}

impl<'a> ListColumns<'a> {
    fn bind(c: &Columns<'a>) -> Result<Self> {
        let partitions = match c.list("partitions")? {
            None => None,
            Some(list) => {
                let items = list.values().as_struct_opt().ok_or_else(|| {
                    Error::invalid_data("field 'partitions': expected an array of records")
                })?;
                let s = Columns::of_struct(items);
                Some((
                    list,
                    SummaryColumns {
                        contains_null: s.boolean("contains_null")?,
                        contains_nan: s.boolean("contains_nan")?,
                        lower_bound: s.bytes("lower_bound")?,
                        upper_bound: s.bytes("upper_bound")?,
                    },
                ))
            }
        };
        Ok(ListColumns {
            manifest_path: c.string("manifest_path")?,
            manifest_length: c.long("manifest_length")?,
            partition_spec_id: c.long("partition_spec_id")?,
            content: c.long("content")?,
            sequence_number: c.long("sequence_number")?,
            min_sequence_number: c.long("min_sequence_number")?,
            added_snapshot_id: c.long("added_snapshot_id")?,
            added_files_count: (
                c.long("added_files_count")?,
                c.long("added_data_files_count")?,
            ),
            existing_files_count: (
                c.long("existing_files_count")?,
                c.long("existing_data_files_count")?,
            ),
            deleted_files_count: (
                c.long("deleted_files_count")?,
                c.long("deleted_data_files_count")?,
            ),
            added_rows_count: c.long("added_rows_count")?,
            existing_rows_count: c.long("existing_rows_count")?,
            deleted_rows_count: c.long("deleted_rows_count")?,
            partitions,
            key_metadata: c.bytes("key_metadata")?,
            first_row_id: c.long("first_row_id")?,
        })
    }

    fn manifest_file(&self, row: usize) -> Result<ManifestFile> {
        let content = match self.content.get_int(row, "content")?.unwrap_or(0) {
            0 => ManifestContent::Data,
            1 => ManifestContent::Deletes,
            other => {
                return Err(Error::invalid_data(format!(
                    "field 'content': unknown value {other}"
                )))
            }
        };
        let count = |(a, b): &(LongCol<'_>, LongCol<'_>), name: &str| -> Result<Option<i32>> {
            Ok(a.get_int(row, name)?.or(b.get_int(row, name)?))
        };
        let partitions = match &self.partitions {
            Some((list, s)) if list.is_valid(row) => {
                let offsets = list.value_offsets();
                let range = offsets[row] as usize..offsets[row + 1] as usize;
                Some(
                    range
                        .map(|i| FieldSummary {
                            contains_null: flag(s.contains_null, i).unwrap_or(true),
                            contains_nan: flag(s.contains_nan, i),
                            lower_bound: s.lower_bound.get(i).map(<[u8]>::to_vec),
                            upper_bound: s.upper_bound.get(i).map(<[u8]>::to_vec),
                        })
                        .collect(),
                )
            }
            _ => None,
        };
        let manifest_path = match self.manifest_path.get(row) {
            None => return Err(missing("manifest_path")),
            Some("") => return Err(Error::invalid_data("field 'manifest_path': empty location")),
            Some(p) => p.to_string(),
        };
        let sequence_number = self.sequence_number.get(row).unwrap_or(0);
        Ok(ManifestFile {
            manifest_path,
            manifest_length: self
                .manifest_length
                .get(row)
                .ok_or_else(|| missing("manifest_length"))?,
            partition_spec_id: self
                .partition_spec_id
                .get_int(row, "partition_spec_id")?
                .ok_or_else(|| missing("partition_spec_id"))?,
            content,
            sequence_number,
            min_sequence_number: self.min_sequence_number.get(row).unwrap_or(sequence_number),
            added_snapshot_id: self
                .added_snapshot_id
                .get(row)
                .ok_or_else(|| missing("added_snapshot_id"))?,
            added_files_count: count(&self.added_files_count, "added_files_count")?,
            existing_files_count: count(&self.existing_files_count, "existing_files_count")?,
            deleted_files_count: count(&self.deleted_files_count, "deleted_files_count")?,
            added_rows_count: self.added_rows_count.get(row),
            existing_rows_count: self.existing_rows_count.get(row),
            deleted_rows_count: self.deleted_rows_count.get(row),
            partitions,
            key_metadata: self.key_metadata.get(row).map(<[u8]>::to_vec),
            first_row_id: self.first_row_id.get(row),
        })
    }
}

/// Parse a manifest list file, decoded column-wise; errors name `location`, the entry
/// index and the field.
pub fn parse_manifest_list(bytes: &[u8], location: &str) -> Result<Vec<ManifestFile>> {
    let batches = read_batches(bytes, location)?;
    let mut out = Vec::with_capacity(batches.iter().map(|b| b.num_rows()).sum());
    for batch in &batches {
        let columns = Columns::of_batch(batch);
        let bound = ListColumns::bind(&columns)
            .map_err(|e| e.context(format!("manifest list '{location}'")))?;
        for row in 0..batch.num_rows() {
            let entry = out.len();
            out.push(
                bound
                    .manifest_file(row)
                    .map_err(|e| e.context(format!("manifest list '{location}', entry {entry}")))?,
            );
        }
    }
    Ok(out)
}
