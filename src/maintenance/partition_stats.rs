//! Partition statistics of a snapshot (spec: "Partition Statistics" and "Partition
//! Statistics File"), as Spark's `compute_partition_stats` procedure computes them (Java
//! `PartitionStatsHandler`, `ComputePartitionStatsSparkAction`).
//!
//! One [`PartitionStats`] per partition tuple and spec: every manifest of the snapshot's
//! manifest list (data and delete manifests) is read, and each entry counts in the row of
//! its manifest's spec id and its partition tuple placed in the table's unified partition
//! type (a field its spec lacks is null):
//!
//! - a live entry (added or existing) adds its file: a data file to `data_record_count`,
//!   `data_file_count` and `total_data_file_size_in_bytes`; a position delete file to
//!   `position_delete_record_count` and `position_delete_file_count`; a deletion vector
//!   (a position delete in Puffin, v3) to `position_delete_record_count` (its cardinality)
//!   and `dv_count`; an equality delete file to `equality_delete_record_count` and
//!   `equality_delete_file_count`;
//! - every entry, deleted ones too, moves `last_updated_at` / `last_updated_snapshot_id`
//!   to the snapshot that wrote it when that snapshot is later (by its `timestamp-ms`;
//!   commits of one millisecond by sequence number, then commit order) and still in the
//!   table. So, as in Java, a partition whose files the snapshot itself
//!   deleted keeps a row of zero counts, last updated by that snapshot.
//!
//! `total_record_count` (rows after deletes) is left null, which the spec allows and Java
//! does (it needs reading the data when there are deletes). [`compute_partition_stats`]
//! reads every manifest; module `partition_stats_incremental` starts from an ancestor's
//! statistics file and reads only the manifests added since, when that gives the same
//! rows.
//!
//! Rows are sorted by partition, ascending, nulls first, field by field (strings, binary
//! and fixed by unsigned bytes; floats by IEEE total order, `-0.0 < 0.0`, NaN last, as
//! Java's `Float.compare`), then by spec id. The DataFusion layer writes them
//! ([`partition_stats_schema`] gives the file's schema) and
//! [`commit_partition_stats`] registers the file.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use crate::catalog::{metadata_dir, Catalog, TableIdent};
use crate::error::{Error, Result};
use crate::spec::{
    DataContentType, DataFileFormat, FormatVersion, Literal, ManifestFile, NestedField,
    PartitionStatisticsFile, PrimitiveType, Schema, Snapshot, StructType, TableMetadata, Type,
};
use crate::table::Table;
use crate::transaction::{Transaction, UpdatePartitionStatistics};
use crate::write::bounds::literal_to_bytes;

/// One field of the unified partition type: partition field id, name, result type.
#[derive(Debug, Clone, PartialEq)]
pub struct UnifiedPartitionField {
    /// The partition field id (the struct field's id in the file).
    pub field_id: i32,
    /// The field's name.
    pub name: String,
    /// The transform's result type.
    pub field_type: PrimitiveType,
}

/// The statistics of one partition tuple of one spec (spec: "Partition Statistics
/// File"; field ids in brackets).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionStats {
    /// (1) The partition tuple in the unified partition type, by field.
    pub partition: Vec<Option<Literal>>,
    /// (2) The partition spec id.
    pub spec_id: i32,
    /// (3) Records in live data files.
    pub data_record_count: i64,
    /// (4) Live data files.
    pub data_file_count: i32,
    /// (5) Bytes of live data files.
    pub total_data_file_size_in_bytes: i64,
    /// (6) Position deletes in live position delete files and deletion vectors.
    pub position_delete_record_count: i64,
    /// (7) Live position delete files, deletion vectors not counted.
    pub position_delete_file_count: i32,
    /// (8) Records in live equality delete files.
    pub equality_delete_record_count: i64,
    /// (9) Live equality delete files.
    pub equality_delete_file_count: i32,
    /// (10) Rows after deletes: never computed (null), as in Java.
    pub total_record_count: Option<i64>,
    /// (11) Milliseconds since the epoch of the latest snapshot that changed the
    /// partition, among the snapshots still in the table.
    pub last_updated_at: Option<i64>,
    /// (12) That snapshot's id.
    pub last_updated_snapshot_id: Option<i64>,
    /// (13, v3) Live deletion vectors.
    pub dv_count: i32,
}

impl PartitionStats {
    fn new(partition: Vec<Option<Literal>>, spec_id: i32) -> Self {
        Self {
            partition,
            spec_id,
            data_record_count: 0,
            data_file_count: 0,
            total_data_file_size_in_bytes: 0,
            position_delete_record_count: 0,
            position_delete_file_count: 0,
            equality_delete_record_count: 0,
            equality_delete_file_count: 0,
            total_record_count: None,
            last_updated_at: None,
            last_updated_snapshot_id: None,
            dv_count: 0,
        }
    }

    /// Move the last update to `snapshot` (of `metadata`) when it is later: by
    /// `timestamp-ms`, then, for commits of one millisecond, by [`commit_order`].
    fn updated_by(&mut self, metadata: &TableMetadata, snapshot: Option<&Snapshot>) {
        let Some(s) = snapshot else { return };
        let later = match (self.last_updated_at, self.last_updated_snapshot_id) {
            (None, _) => true,
            (Some(at), _) if at != s.timestamp_ms => at < s.timestamp_ms,
            (Some(_), Some(id)) => match metadata.snapshot_by_id(id) {
                Some(current) => commit_order(metadata, current) < commit_order(metadata, s),
                None => false,
            },
            (Some(_), None) => false,
        };
        if later {
            self.last_updated_at = Some(s.timestamp_ms);
            self.last_updated_snapshot_id = Some(s.snapshot_id);
        }
    }
}

/// The order of two commits of one `timestamp-ms` (a writer's clock ahead of the next
/// one's makes every later commit take the table's `last-updated-ms`): the higher
/// sequence number (v2+), then the later place in the table's `snapshots` list (commit
/// order; v1 has no sequence numbers). So the latest update of a partition does not
/// depend on the order the manifests are read in, and an incremental compute, which
/// takes the ancestor's rows first, names the snapshot a full compute names.
fn commit_order(metadata: &TableMetadata, snapshot: &Snapshot) -> (i64, usize) {
    let place = metadata
        .snapshots
        .iter()
        .position(|s| s.snapshot_id == snapshot.snapshot_id)
        .unwrap_or(0);
    (snapshot.sequence_number, place)
}

/// Whether the table can have partition statistics: one of its specs has a field that
/// is not `void` (Java `Partitioning.isPartitioned`).
pub fn is_partitioned(metadata: &TableMetadata) -> bool {
    metadata
        .partition_specs
        .iter()
        .any(|s| !s.is_unpartitioned())
}

/// The statistics of `snapshot` of `table`, one per spec and partition tuple, sorted
/// (see the module docs); `unified` is the table's unified partition type. A full
/// compute: every manifest of the snapshot is read
/// (`crate::maintenance::compute_partition_stats_incremental` reads only the new ones).
///
/// Errors: an unpartitioned table ([`crate::ErrorKind::InvalidArgument`]); reading the
/// manifest list or a manifest ([`crate::ErrorKind::Io`], [`crate::ErrorKind::NotFound`]
/// naming the file).
pub async fn compute_partition_stats(
    table: &Table,
    snapshot: &Snapshot,
    unified: &[UnifiedPartitionField],
) -> Result<Vec<PartitionStats>> {
    let mut stats = StatsAccumulator::new(table, unified)?;
    for manifest in &manifest_list(table, snapshot).await? {
        stats.add_manifest(manifest).await?;
    }
    Ok(stats.into_sorted())
}

/// The manifest list of `snapshot`.
pub(super) async fn manifest_list(table: &Table, snapshot: &Snapshot) -> Result<Vec<ManifestFile>> {
    crate::scan::TableScan::new(table.clone(), Some(snapshot.clone()))
        .manifest_list()
        .await
}

/// A row's key: spec id and the tuple's single-value bytes, ints widened to longs and
/// floats to doubles (so a value read back from a statistics file and one read from a
/// manifest match whatever width each was read at).
type Key = (i32, Vec<Option<Vec<u8>>>);

/// Partition statistics being summed, by spec id and tuple (see the module docs).
pub(super) struct StatsAccumulator<'a> {
    table: &'a Table,
    /// Unified partition field id → its position in a tuple.
    position: HashMap<i32, usize>,
    width: usize,
    stats: HashMap<Key, PartitionStats>,
}

impl<'a> StatsAccumulator<'a> {
    /// No rows yet.
    ///
    /// Errors: an unpartitioned table ([`crate::ErrorKind::InvalidArgument`]).
    pub(super) fn new(table: &'a Table, unified: &[UnifiedPartitionField]) -> Result<Self> {
        if !is_partitioned(table.metadata()) || unified.is_empty() {
            return Err(Error::invalid_argument(
                "Table must be partitioned to compute partition statistics",
            ));
        }
        Ok(Self {
            table,
            position: unified
                .iter()
                .enumerate()
                .map(|(i, f)| (f.field_id, i))
                .collect(),
            width: unified.len(),
            stats: HashMap::new(),
        })
    }

    fn key(spec_id: i32, tuple: &[Option<Literal>]) -> Key {
        let widened = |v: &Literal| match v {
            Literal::Int(x) => literal_to_bytes(&Literal::Long(i64::from(*x))),
            Literal::Float(x) => literal_to_bytes(&Literal::Double(f64::from(*x))),
            v => literal_to_bytes(v),
        };
        (
            spec_id,
            tuple.iter().map(|v| v.as_ref().map(widened)).collect(),
        )
    }

    /// Take `row` (of an earlier statistics file) as it is; false when a row of its spec
    /// and tuple is there already.
    pub(super) fn insert_row(&mut self, row: PartitionStats) -> bool {
        let key = Self::key(row.spec_id, &row.partition);
        match self.stats.entry(key) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(row);
                true
            }
        }
    }

    /// Count every entry of `manifest` (see the module docs).
    ///
    /// Errors: reading it ([`crate::ErrorKind::Io`], [`crate::ErrorKind::NotFound`]).
    pub(super) async fn add_manifest(&mut self, manifest: &ManifestFile) -> Result<()> {
        let metadata = self.table.metadata();
        let spec_id = manifest.partition_spec_id;
        let spec = metadata.partition_spec_by_id(spec_id);
        for entry in crate::scan::read_manifest(self.table, metadata, manifest).await? {
            let mut tuple = vec![None; self.width];
            for (i, value) in entry.data_file.partition.iter().enumerate() {
                let id = spec.map_or(1000 + i as i32, |s| s.field_id(i));
                if let Some(p) = self.position.get(&id) {
                    tuple[*p] = value.clone();
                }
            }
            let key = Self::key(spec_id, &tuple);
            let row = self
                .stats
                .entry(key)
                .or_insert_with(|| PartitionStats::new(tuple, spec_id));
            if entry.is_alive() {
                let file = &entry.data_file;
                match file.content {
                    DataContentType::Data => {
                        row.data_record_count =
                            row.data_record_count.saturating_add(file.record_count);
                        row.data_file_count += 1;
                        row.total_data_file_size_in_bytes = row
                            .total_data_file_size_in_bytes
                            .saturating_add(file.file_size_in_bytes);
                    }
                    DataContentType::PositionDeletes => {
                        row.position_delete_record_count = row
                            .position_delete_record_count
                            .saturating_add(file.record_count);
                        if file.file_format == DataFileFormat::Puffin {
                            row.dv_count += 1;
                        } else {
                            row.position_delete_file_count += 1;
                        }
                    }
                    DataContentType::EqualityDeletes => {
                        row.equality_delete_record_count = row
                            .equality_delete_record_count
                            .saturating_add(file.record_count);
                        row.equality_delete_file_count += 1;
                    }
                }
            }
            row.updated_by(metadata, metadata.snapshot_by_id(entry.snapshot_id));
        }
        Ok(())
    }

    /// The rows, sorted by partition then spec id.
    pub(super) fn into_sorted(self) -> Vec<PartitionStats> {
        let mut rows: Vec<PartitionStats> = self.stats.into_values().collect();
        rows.sort_by(|a, b| {
            compare_tuples(&a.partition, &b.partition).then(a.spec_id.cmp(&b.spec_id))
        });
        rows
    }
}

/// Tuples field by field, nulls first (see the module docs for each type's order).
fn compare_tuples(a: &[Option<Literal>], b: &[Option<Literal>]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(Literal::Float(x)), Some(Literal::Float(y))) => x.total_cmp(y),
            (Some(Literal::Double(x)), Some(Literal::Double(y))) => x.total_cmp(y),
            (Some(x), Some(y)) => crate::expr::literal::compare(x, y).unwrap_or(Ordering::Equal),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// The schema of a partition statistics file of a table of `format_version` whose
/// unified partition type is `unified` (spec: "Partition Statistics File"): `partition`
/// (1, a required struct of optional fields with the partition field ids), `spec_id`
/// (2), `data_record_count` (3), `data_file_count` (4), `total_data_file_size_in_bytes`
/// (5), the delete counts (6–9: optional before v3, required in v3), `total_record_count`
/// (10), `last_updated_at` (11), `last_updated_snapshot_id` (12), and in v3 `dv_count`
/// (13, required), in Java's order.
pub fn partition_stats_schema(
    unified: &[UnifiedPartitionField],
    format_version: FormatVersion,
) -> Schema {
    let partition = StructType {
        fields: unified
            .iter()
            .map(|f| {
                NestedField::optional(f.field_id, f.name.clone(), Type::Primitive(f.field_type))
            })
            .collect(),
    };
    let v3 = format_version >= FormatVersion::V3;
    let int = || Type::Primitive(PrimitiveType::Int);
    let long = || Type::Primitive(PrimitiveType::Long);
    let delete_count = |id: i32, name: &str, t: Type| {
        if v3 {
            NestedField::required(id, name, t)
        } else {
            NestedField::optional(id, name, t)
        }
    };
    let mut fields = vec![
        NestedField::required(1, "partition", Type::Struct(partition)),
        NestedField::required(2, "spec_id", int()),
        NestedField::required(3, "data_record_count", long()),
        NestedField::required(4, "data_file_count", int()),
        NestedField::required(5, "total_data_file_size_in_bytes", long()),
        delete_count(6, "position_delete_record_count", long()),
        delete_count(7, "position_delete_file_count", int()),
        delete_count(8, "equality_delete_record_count", long()),
        delete_count(9, "equality_delete_file_count", int()),
        NestedField::optional(10, "total_record_count", long()),
        NestedField::optional(11, "last_updated_at", long()),
        NestedField::optional(12, "last_updated_snapshot_id", long()),
    ];
    if v3 {
        fields.push(NestedField::required(13, "dv_count", int()));
    }
    Schema::new(0, fields)
}

/// Where a new partition statistics file of `snapshot_id` goes: next to the table's
/// metadata files, `partition-stats-<snapshot id>-<uuid>.parquet`, as Java names it.
pub fn partition_stats_location(metadata: &TableMetadata, snapshot_id: i64) -> String {
    format!(
        "{}/partition-stats-{snapshot_id}-{}.parquet",
        metadata_dir(metadata),
        uuid::Uuid::new_v4()
    )
}

/// Commit `file` (written by the caller) as its snapshot's partition statistics
/// (replacing any it had); the table after the commit. The file is deleted again when
/// the commit fails.
///
/// Errors: the snapshot expired meanwhile ([`crate::ErrorKind::NotFound`]); commit
/// errors.
pub async fn commit_partition_stats(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    table: &Table,
    file: PartitionStatisticsFile,
) -> Result<Table> {
    Transaction::new(Arc::clone(catalog), ident.clone(), table.clone())
        .add_action(UpdatePartitionStatistics::new().set_written_partition_statistics(file))
        .commit()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nulls first; floats by total order (-0.0 before 0.0, NaN last); strings by bytes;
    /// later fields break ties.
    #[test]
    fn tuples_sort_nulls_first_field_by_field() {
        let mut rows = [
            vec![Some(Literal::Double(f64::NAN)), None],
            vec![
                Some(Literal::Double(0.0)),
                Some(Literal::String("é".into())),
            ],
            vec![
                Some(Literal::Double(0.0)),
                Some(Literal::String("z".into())),
            ],
            vec![Some(Literal::Double(-0.0)), None],
            vec![None, Some(Literal::String("a".into()))],
            vec![Some(Literal::Double(0.0)), None],
        ];
        rows.sort_by(|a, b| compare_tuples(a, b));
        let shown: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
        assert_eq!(
            shown,
            [
                r#"[None, Some(String("a"))]"#,
                "[Some(Double(-0.0)), None]",
                "[Some(Double(0.0)), None]",
                r#"[Some(Double(0.0)), Some(String("z"))]"#,
                r#"[Some(Double(0.0)), Some(String("é"))]"#,
                "[Some(Double(NaN)), None]",
            ]
        );
    }

    #[test]
    fn v3_schema_requires_delete_counts_and_ends_with_dv_count() {
        let unified = [UnifiedPartitionField {
            field_id: 1000,
            name: "k".into(),
            field_type: PrimitiveType::Int,
        }];
        let v2 = partition_stats_schema(&unified, FormatVersion::V2);
        let v3 = partition_stats_schema(&unified, FormatVersion::V3);
        assert_eq!(v2.fields.fields.len(), 12);
        assert!(!v2.fields.fields[5].required);
        assert_eq!(v3.fields.fields.len(), 13);
        assert!(v3.fields.fields[5].required);
        assert_eq!(
            (v3.fields.fields[12].id, v3.fields.fields[12].name.as_str()),
            (13, "dv_count")
        );
    }
}
