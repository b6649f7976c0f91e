//! [`DeleteFileIndex`]: which delete files apply to which data file.
//!
//! Source: Iceberg spec, "Scan Planning" (the scope rules for deletion vectors, position
//! delete files and equality delete files) and "Deletion Vectors"; the algorithm follows
//! Java's `DeleteFileIndex`: delete files are grouped (global equality deletes, by
//! partition, by referenced data file) and each group keeps its files sorted by sequence
//! number, so the files that apply to a data file are a suffix found by binary search.
//!
//! The rules, for a data file with data sequence number `s`:
//! - a **position delete file** applies when its data sequence number is `>= s` (deletes
//!   committed together with the data file apply to it) and it has the same spec id and
//!   partition tuple; if it names one data file (`referenced_data_file`, or equal
//!   `file_path` lower/upper bounds, field id 2147483546) it applies to that file only;
//! - a **deletion vector** (a position delete in Puffin format) applies to the data file it
//!   references; at most one per data file, and when present it replaces every position
//!   delete file of that data file;
//! - an **equality delete file** applies when its data sequence number is `> s` and it
//!   has the same spec id and partition tuple, or was written under an unpartitioned spec
//!   (a global delete). Like Java, files whose column statistics show that none of their
//!   keys can occur in the data file are left out (see [`DeleteFileIndex::for_data_file`]).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::spec::{
    BoundBytes, DataContentType, DataFile, DataFileFormat, IntMap, Literal, ManifestEntry,
    PartitionSpec, PrimitiveType, Schema, TableMetadata,
};

/// Field id of the `file_path` column of position delete files (spec: "Reserved Field IDs").
pub const DELETE_FILE_PATH_FIELD_ID: i32 = 2147483546;
/// Field id of the `pos` column of position delete files (spec: "Reserved Field IDs").
pub const DELETE_FILE_POS_FIELD_ID: i32 = 2147483545;

/// A partition value in a form that can be hashed: floats by their bits with NaN
/// normalised (spec "Scan Planning", note 3), decimals by unscaled value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum PartitionValue {
    Bool(bool),
    Int(i64),
    Wide(i128),
    Bits(u64),
    Str(String),
    Bytes(Vec<u8>),
}

impl PartitionValue {
    fn of(lit: &Literal) -> Self {
        match lit {
            Literal::Boolean(b) => Self::Bool(*b),
            Literal::Int(v) | Literal::Date(v) => Self::Int(i64::from(*v)),
            Literal::Long(v)
            | Literal::Time(v)
            | Literal::Timestamp(v)
            | Literal::Timestamptz(v)
            | Literal::TimestampNs(v)
            | Literal::TimestamptzNs(v) => Self::Int(*v),
            Literal::Float(f) => Self::Bits(u64::from(if f.is_nan() {
                f32::NAN.to_bits()
            } else {
                f.to_bits()
            })),
            Literal::Double(d) => Self::Bits(if d.is_nan() {
                f64::NAN.to_bits()
            } else {
                d.to_bits()
            }),
            Literal::Decimal { unscaled, .. } => Self::Wide(*unscaled),
            Literal::String(s) => Self::Str(s.clone()),
            Literal::Uuid(b) => Self::Bytes(b.to_vec()),
            Literal::Fixed(b) | Literal::Binary(b) => Self::Bytes(b.clone()),
        }
    }
}

/// A spec id with a partition tuple: delete files apply within one such key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PartitionKey {
    spec_id: i32,
    values: Vec<Option<PartitionValue>>,
}

impl PartitionKey {
    fn of(spec_id: i32, file: &DataFile) -> Self {
        Self {
            spec_id,
            values: file
                .partition
                .iter()
                .map(|v| v.as_ref().map(PartitionValue::of))
                .collect(),
        }
    }
}

/// The first index of `seqs` (sorted ascending) whose value is `>= seq`: the start of the
/// suffix of files that apply (Java's `findStartIndex`).
fn find_start_index(seqs: &[i64], seq: i64) -> usize {
    seqs.partition_point(|s| *s < seq)
}

/// Position delete files of one group, sorted by data sequence number.
#[derive(Debug, Default)]
struct PositionDeletes {
    seqs: Vec<i64>,
    files: Vec<Arc<ManifestEntry>>,
}

impl PositionDeletes {
    fn index(&mut self) {
        // stable: files with equal sequence numbers keep the order they were added in
        self.files.sort_by_key(|f| f.data_sequence_number);
        self.seqs = self.files.iter().map(|f| f.data_sequence_number).collect();
    }

    /// Files whose data sequence number is `>= seq`.
    fn filter(&self, seq: i64) -> &[Arc<ManifestEntry>] {
        &self.files[find_start_index(&self.seqs, seq)..]
    }
}

/// An equality delete file with its statistics decoded once.
#[derive(Debug)]
struct EqualityDeleteFile {
    entry: Arc<ManifestEntry>,
    /// `data_sequence_number - 1`: the highest data sequence number it applies to.
    apply_sequence_number: i64,
    /// One per equality field id the table's schemas know.
    fields: Vec<EqualityField>,
}

#[derive(Debug)]
struct EqualityField {
    id: i32,
    ty: PrimitiveType,
    required: bool,
    /// Decoded delete-file bounds (`None` when absent or not decodable).
    lower: Option<Literal>,
    upper: Option<Literal>,
}

/// Equality delete files of one group, sorted by apply sequence number.
#[derive(Debug, Default)]
struct EqualityDeletes {
    seqs: Vec<i64>,
    files: Vec<EqualityDeleteFile>,
}

impl EqualityDeletes {
    fn index(&mut self) {
        self.files.sort_by_key(|f| f.apply_sequence_number);
        self.seqs = self.files.iter().map(|f| f.apply_sequence_number).collect();
    }

    /// Files whose data sequence number is `> seq` and whose statistics allow a match.
    fn filter(&self, seq: i64, data: &DataFile, out: &mut Vec<Arc<ManifestEntry>>) {
        let start = find_start_index(&self.seqs, seq);
        for file in &self.files[start..] {
            if can_contain_eq_deletes_for_file(data, file) {
                out.push(Arc::clone(&file.entry));
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// An index of a snapshot's live delete files, answering which apply to a data file.
///
/// Build it once per scan from [`crate::scan::ScanPlan::delete_entries`] (entries with
/// inherited sequence numbers) and ask [`for_data_file`](Self::for_data_file) per data file.
#[derive(Debug, Default)]
pub struct DeleteFileIndex {
    global_eq: EqualityDeletes,
    eq_by_partition: HashMap<PartitionKey, EqualityDeletes>,
    pos_by_partition: HashMap<PartitionKey, PositionDeletes>,
    pos_by_path: HashMap<String, PositionDeletes>,
    dv_by_path: HashMap<String, Arc<ManifestEntry>>,
    len: usize,
}

/// The data file a position delete file or deletion vector is scoped to: its
/// `referenced_data_file`, else the `file_path` lower bound when it equals the upper bound
/// (Java's `ContentFileUtil.referencedDataFile`). Stored (not remapped) path; `None` for
/// equality deletes and for position deletes that span several data files.
pub fn referenced_data_file(file: &DataFile) -> Option<String> {
    if file.content != DataContentType::PositionDeletes {
        return None;
    }
    if let Some(path) = &file.referenced_data_file {
        return Some(path.clone());
    }
    let lower = file.lower_bounds.get(&DELETE_FILE_PATH_FIELD_ID)?;
    let upper = file.upper_bounds.get(&DELETE_FILE_PATH_FIELD_ID)?;
    if lower == upper {
        String::from_utf8(lower.to_vec()).ok()
    } else {
        None
    }
}

/// Whether a delete file is a deletion vector (a position delete stored in Puffin).
pub fn is_deletion_vector(file: &DataFile) -> bool {
    file.content == DataContentType::PositionDeletes && file.file_format == DataFileFormat::Puffin
}

impl DeleteFileIndex {
    /// Index the live delete files of a table's snapshot, using the table's partition specs
    /// and schemas (current schema first, for decoding equality-field statistics).
    pub fn for_table(
        metadata: &TableMetadata,
        delete_entries: impl IntoIterator<Item = Arc<ManifestEntry>>,
    ) -> Result<Self> {
        Self::new(
            delete_entries,
            &metadata.partition_specs,
            &metadata.schemas_newest_first(),
        )
    }

    /// Index delete entries.
    ///
    /// `specs` are the table's partition specs (each delete entry's `spec_id` must be one of
    /// them); `schemas` type the equality fields' statistics (the first schema holding a
    /// field id wins; fields no schema knows are never used to skip a file).
    ///
    /// Errors ([`crate::ErrorKind::InvalidData`]): an entry that is not a delete file, an
    /// unknown spec id, a deletion vector without `referenced_data_file`, or two deletion
    /// vectors for the same data file (spec "Deletion Vectors": at most one per data file).
    pub fn new(
        delete_entries: impl IntoIterator<Item = Arc<ManifestEntry>>,
        specs: &[PartitionSpec],
        schemas: &[&Schema],
    ) -> Result<Self> {
        let specs_by_id: HashMap<i32, &PartitionSpec> =
            specs.iter().map(|s| (s.spec_id, s)).collect();
        let mut index = DeleteFileIndex::default();
        for entry in delete_entries {
            let file = &entry.data_file;
            index.len += 1;
            match file.content {
                DataContentType::Data => {
                    return Err(Error::invalid_data(format!(
                        "'{}' is a data file, not a delete file",
                        file.file_path
                    )));
                }
                DataContentType::PositionDeletes if is_deletion_vector(file) => {
                    let path = file.referenced_data_file.clone().ok_or_else(|| {
                        Error::invalid_data(format!(
                            "deletion vector in '{}' has no referenced_data_file",
                            file.file_path
                        ))
                    })?;
                    if let Some(existing) = index.dv_by_path.get(&path) {
                        return Err(Error::invalid_data(format!(
                            "two deletion vectors for data file '{path}': {} and {}",
                            dv_desc(existing),
                            dv_desc(&entry)
                        )));
                    }
                    index.dv_by_path.insert(path, entry);
                }
                DataContentType::PositionDeletes => {
                    let group = match referenced_data_file(file) {
                        Some(path) => index.pos_by_path.entry(path).or_default(),
                        None => index
                            .pos_by_partition
                            .entry(PartitionKey::of(entry.spec_id, file))
                            .or_default(),
                    };
                    group.files.push(entry);
                }
                DataContentType::EqualityDeletes => {
                    let spec = specs_by_id.get(&entry.spec_id).ok_or_else(|| {
                        Error::invalid_data(format!(
                            "equality delete file '{}' names partition spec {} which the table does not have",
                            file.file_path, entry.spec_id
                        ))
                    })?;
                    let eq_file = equality_delete_file(entry.clone(), schemas);
                    let group = if spec.is_unpartitioned() {
                        &mut index.global_eq
                    } else {
                        index
                            .eq_by_partition
                            .entry(PartitionKey::of(entry.spec_id, file))
                            .or_default()
                    };
                    group.files.push(eq_file);
                }
            }
        }
        index.global_eq.index();
        index
            .eq_by_partition
            .values_mut()
            .for_each(EqualityDeletes::index);
        index
            .pos_by_partition
            .values_mut()
            .for_each(PositionDeletes::index);
        index
            .pos_by_path
            .values_mut()
            .for_each(PositionDeletes::index);
        Ok(index)
    }

    /// Whether no delete file was indexed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many delete files were indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether any equality delete file was indexed.
    pub fn has_equality_deletes(&self) -> bool {
        !self.global_eq.is_empty() || !self.eq_by_partition.is_empty()
    }

    /// Whether any position delete file or deletion vector was indexed.
    pub fn has_position_deletes(&self) -> bool {
        !self.pos_by_partition.is_empty()
            || !self.pos_by_path.is_empty()
            || !self.dv_by_path.is_empty()
    }

    /// The delete files that apply to the data file `data` (its entry, with its inherited
    /// data sequence number and spec id), in the order: global equality deletes, partition
    /// equality deletes, then either the deletion vector alone or the partition-scoped and
    /// file-scoped position delete files; within each group by ascending sequence number.
    ///
    /// Equality delete files are left out when their statistics prove no key can occur in
    /// the data file (Java's rules: null counts, then lower/upper bounds per equality
    /// field; float and double bounds are never used because NaN keys are not in bounds).
    ///
    /// Errors ([`crate::ErrorKind::InvalidData`], corrupt metadata, as Java raises them): a
    /// deletion vector or file-scoped position delete file for this data file written under
    /// another spec id or partition tuple, or a deletion vector whose data sequence number
    /// is lower than the data file's.
    pub fn for_data_file(&self, data: &ManifestEntry) -> Result<Vec<Arc<ManifestEntry>>> {
        let mut out = Vec::new();
        if self.is_empty() {
            return Ok(out);
        }
        let seq = data.data_sequence_number;
        let file = &data.data_file;
        let key = PartitionKey::of(data.spec_id, file);
        self.global_eq.filter(seq, file, &mut out);
        if let Some(group) = self.eq_by_partition.get(&key) {
            group.filter(seq, file, &mut out);
        }
        if let Some(dv) = self.dv_by_path.get(&file.file_path) {
            if dv.data_sequence_number < seq {
                return Err(Error::invalid_data(format!(
                    "deletion vector {} has data sequence number {}, lower than {} of data file '{}'",
                    dv_desc(dv),
                    dv.data_sequence_number,
                    seq,
                    file.file_path
                )));
            }
            validate_partition_match(dv, data, &key)?;
            out.push(Arc::clone(dv));
            return Ok(out);
        }
        if let Some(group) = self.pos_by_partition.get(&key) {
            out.extend(group.filter(seq).iter().cloned());
        }
        if let Some(group) = self.pos_by_path.get(&file.file_path) {
            for delete in group.filter(seq) {
                validate_partition_match(delete, data, &key)?;
                out.push(Arc::clone(delete));
            }
        }
        Ok(out)
    }
}

fn dv_desc(dv: &ManifestEntry) -> String {
    let f = &dv.data_file;
    format!(
        "'{}' (offset {:?}, length {:?})",
        f.file_path, f.content_offset, f.content_size_in_bytes
    )
}

fn validate_partition_match(
    delete: &ManifestEntry,
    data: &ManifestEntry,
    data_key: &PartitionKey,
) -> Result<()> {
    if delete.spec_id != data.spec_id
        || PartitionKey::of(delete.spec_id, &delete.data_file) != *data_key
    {
        return Err(Error::invalid_data(format!(
            "delete file '{}' (spec {}, partition {:?}) targets data file '{}' of spec {}, partition {:?}: metadata is corrupted",
            delete.data_file.file_path,
            delete.spec_id,
            delete.data_file.partition,
            data.data_file.file_path,
            data.spec_id,
            data.data_file.partition
        )));
    }
    Ok(())
}

fn equality_delete_file(entry: Arc<ManifestEntry>, schemas: &[&Schema]) -> EqualityDeleteFile {
    let file = &entry.data_file;
    let fields = file
        .equality_ids
        .iter()
        .filter_map(|id| {
            let schema = schemas.iter().find(|s| s.field_by_id(*id).is_some())?;
            let field = schema.field_by_id(*id)?;
            let ty = *field.field_type.as_primitive()?;
            let decode = |b: Option<&BoundBytes>| b.and_then(|b| Literal::from_bytes(b, &ty).ok());
            Some(EqualityField {
                id: *id,
                ty,
                // a required field inside an optional struct can still be null
                required: schema.is_never_null(*id),
                lower: decode(file.lower_bounds.get(id)),
                upper: decode(file.upper_bounds.get(id)),
            })
        })
        .collect();
    EqualityDeleteFile {
        apply_sequence_number: entry.data_sequence_number.saturating_sub(1),
        entry,
        fields,
    }
}

/// A test of which data files the equality delete file `delete` may remove rows of, by
/// column statistics alone (Java `DeleteFileIndex.canContainEqDeletesForFile`, the rule
/// [`DeleteFileIndex::for_data_file`] applies): `false` only when null counts or bounds
/// prove no key of `delete` can equal a row of the data file. Scope by partition and
/// sequence number is the caller's. `schemas` type the equality fields (current schema
/// first); statistics of fields no schema knows are not used.
pub(crate) fn equality_deletes_may_apply(
    delete: Arc<ManifestEntry>,
    schemas: &[&Schema],
) -> impl Fn(&DataFile) -> bool {
    let delete = equality_delete_file(delete, schemas);
    move |data| can_contain_eq_deletes_for_file(data, &delete)
}

/// Java's `canContainEqDeletesForFile`: false only when statistics prove that no delete
/// key of `delete` can equal a row of `data`. Missing statistics never exclude a file.
fn can_contain_eq_deletes_for_file(data: &DataFile, delete: &EqualityDeleteFile) -> bool {
    let del = &delete.entry.data_file;
    for field in &delete.fields {
        let id = field.id;
        let contains_null =
            |nulls: &IntMap<i64>| !field.required && nulls.get(&id).is_none_or(|n| *n > 0);
        let all_null = |nulls: &IntMap<i64>, values: &IntMap<i64>| {
            !field.required
                && matches!((nulls.get(&id), values.get(&id)), (Some(n), Some(v)) if n == v)
        };
        let all_non_null =
            |nulls: &IntMap<i64>| field.required || nulls.get(&id).is_some_and(|n| *n <= 0);

        if contains_null(&data.null_value_counts) && contains_null(&del.null_value_counts) {
            continue; // null keys are deleted and the data has nulls
        }
        if all_null(&data.null_value_counts, &data.value_counts)
            && all_non_null(&del.null_value_counts)
        {
            return false;
        }
        if all_null(&del.null_value_counts, &del.value_counts)
            && all_non_null(&data.null_value_counts)
        {
            return false;
        }
        if matches!(field.ty, PrimitiveType::Float | PrimitiveType::Double) {
            continue; // NaN keys are outside the bounds
        }
        let (Some(del_lower), Some(del_upper)) = (&field.lower, &field.upper) else {
            continue;
        };
        let decode =
            |b: Option<&BoundBytes>| b.and_then(|b| Literal::from_bytes(b, &field.ty).ok());
        let (Some(data_lower), Some(data_upper)) = (
            decode(data.lower_bounds.get(&id)),
            decode(data.upper_bounds.get(&id)),
        ) else {
            continue;
        };
        let disjoint = compare_literals(&data_lower, del_upper) == Some(Ordering::Greater)
            || compare_literals(del_lower, &data_upper) == Some(Ordering::Greater);
        if disjoint {
            return false;
        }
    }
    true
}

/// Order of two values of the same type; `None` when they cannot be compared safely (then
/// the ranges are assumed to overlap). UUID bounds are left out: writers have ordered them
/// both signed and unsigned.
fn compare_literals(a: &Literal, b: &Literal) -> Option<Ordering> {
    match (a, b) {
        (Literal::Uuid(_), _) | (_, Literal::Uuid(_)) => None,
        _ => crate::expr::compare(a, b),
    }
}

#[cfg(test)]
#[path = "delete_file_index_tests.rs"]
mod tests;
