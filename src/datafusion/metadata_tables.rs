//! Metadata tables: a table's snapshots, history, refs, manifests and files as SQL
//! tables, with the columns Spark gives them (Iceberg docs, "Spark Queries" →
//! "Inspecting tables"; Iceberg Java `MetadataTableType`).
//!
//! | name | one row per | source |
//! |---|---|---|
//! | `snapshots` | snapshot | `snapshots` (spec: "Snapshots") |
//! | `history` | `snapshot-log` entry | Appendix C |
//! | `metadata_log_entries` | `metadata-log` entry, plus the current file | Appendix C |
//! | `refs` | branch or tag | spec: "Snapshot References" |
//! | `manifests` | manifest of the snapshot | spec: "Manifest Lists" |
//! | `all_manifests` | manifest of every snapshot (`reference_snapshot_id`) | |
//! | `files`, `data_files`, `delete_files` | live file of the snapshot | spec: "Manifests" |
//! | `entries` | manifest entry of the snapshot, deleted ones included | |
//! | `partitions` | partition of the snapshot's live files | |
//! | `all_files`, `all_data_files`, `all_delete_files`, `all_entries` | as above, over the manifests of every snapshot (each manifest once) | |
//! | `position_deletes` | deleted position of the snapshot's position delete files and deletion vectors | the delete files (module `metadata_position_deletes`) |
//!
//! Times are `timestamp(µs, UTC)`. The snapshot-scoped tables (`manifests`, the file
//! tables, `entries`, `partitions`) read the current snapshot unless another one is
//! given. `lower_bounds` / `upper_bounds` hold the spec's single-value binary form
//! (Appendix D); `readable_metrics` has them decoded to each column's type, for every
//! primitive field of the current schema (`st.x`, `tags.element`, `m.key`; sorted by
//! name, as Java's `MetricsUtil.readableMetricsSchema`). Tables are built in memory when
//! the query is planned.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, BooleanBuilder, Int32Array, Int64Array, ListBuilder, MapBuilder,
    MapFieldNames, StringArray, StringBuilder, StructBuilder, TimestampMicrosecondArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema as ArrowSchema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::MemTable;
use datafusion::datasource::TableProvider;
use futures::stream::{self, StreamExt, TryStreamExt};

use super::metadata_files::{
    entries_table, files_table, partition_summary_bound, partitions_table, FileFilter,
};
use crate::catalog::ancestors;
use crate::error::{Error, Result};
use crate::scan::{read_manifest, TableScan};
use crate::spec::{ManifestContent, ManifestEntry, ManifestFile, Snapshot, TableMetadata};
use crate::table::Table;

/// How many manifests are read at once.
const MANIFEST_CONCURRENCY: usize = 16;

/// The metadata tables (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetadataTableKind {
    /// `snapshots`
    Snapshots,
    /// `history`
    History,
    /// `metadata_log_entries`
    MetadataLogEntries,
    /// `refs`
    Refs,
    /// `manifests`
    Manifests,
    /// `all_manifests`
    AllManifests,
    /// `files`
    Files,
    /// `data_files`
    DataFiles,
    /// `delete_files`
    DeleteFiles,
    /// `entries`
    Entries,
    /// `partitions`
    Partitions,
    /// `all_data_files`: live data files of every snapshot's manifests
    AllDataFiles,
    /// `all_delete_files`: live delete files of every snapshot's manifests
    AllDeleteFiles,
    /// `all_files`: live files of every snapshot's manifests
    AllFiles,
    /// `all_entries`: entries of every snapshot's manifests
    AllEntries,
    /// `position_deletes`: deleted positions of the snapshot's position delete files
    /// and deletion vectors
    PositionDeletes,
}

impl MetadataTableKind {
    /// Every kind, in the order of the module docs.
    pub const ALL: [MetadataTableKind; 16] = [
        Self::Snapshots,
        Self::History,
        Self::MetadataLogEntries,
        Self::Refs,
        Self::Manifests,
        Self::AllManifests,
        Self::Files,
        Self::DataFiles,
        Self::DeleteFiles,
        Self::Entries,
        Self::Partitions,
        Self::AllDataFiles,
        Self::AllDeleteFiles,
        Self::AllFiles,
        Self::AllEntries,
        Self::PositionDeletes,
    ];

    /// The SQL name (`snapshots`, `all_manifests`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Snapshots => "snapshots",
            Self::History => "history",
            Self::MetadataLogEntries => "metadata_log_entries",
            Self::Refs => "refs",
            Self::Manifests => "manifests",
            Self::AllManifests => "all_manifests",
            Self::Files => "files",
            Self::DataFiles => "data_files",
            Self::DeleteFiles => "delete_files",
            Self::Entries => "entries",
            Self::Partitions => "partitions",
            Self::AllDataFiles => "all_data_files",
            Self::AllDeleteFiles => "all_delete_files",
            Self::AllFiles => "all_files",
            Self::AllEntries => "all_entries",
            Self::PositionDeletes => "position_deletes",
        }
    }

    /// The kind named `name` (case-insensitive).
    pub fn parse(name: &str) -> Option<MetadataTableKind> {
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }

    /// Whether the table describes one snapshot (and so can be time-travelled).
    pub fn is_snapshot_scoped(&self) -> bool {
        matches!(
            self,
            Self::Manifests
                | Self::Files
                | Self::DataFiles
                | Self::DeleteFiles
                | Self::Entries
                | Self::Partitions
                | Self::PositionDeletes
        )
    }
}

/// Columns of a table being built; each field takes its array's type, nullable.
#[derive(Default)]
pub(crate) struct Columns {
    fields: Vec<Field>,
    arrays: Vec<ArrayRef>,
}

impl Columns {
    pub(crate) fn add(&mut self, name: &str, array: ArrayRef) {
        self.fields
            .push(Field::new(name, array.data_type().clone(), true));
        self.arrays.push(array);
    }

    /// Adds `array` under `field` (its name, nullability and metadata, such as a `uuid`
    /// value's extension type); `field`'s type is `array`'s.
    pub(crate) fn add_field(&mut self, field: Field, array: ArrayRef) {
        self.fields
            .push(field.with_data_type(array.data_type().clone()));
        self.arrays.push(array);
    }

    pub(crate) fn into_batch(self) -> Result<RecordBatch> {
        Ok(RecordBatch::try_new(
            Arc::new(ArrowSchema::new(self.fields)),
            self.arrays,
        )?)
    }

    pub(crate) fn into_parts(self) -> (Fields, Vec<ArrayRef>) {
        (Fields::from(self.fields), self.arrays)
    }
}

/// A `timestamp(µs, UTC)` array from ms since the epoch.
pub(crate) fn timestamps_ms(values: impl IntoIterator<Item = Option<i64>>) -> ArrayRef {
    let micros: Vec<Option<i64>> = values.into_iter().map(|v| v.map(|ms| ms * 1000)).collect();
    Arc::new(TimestampMicrosecondArray::from(micros).with_timezone("UTC"))
}

pub(crate) fn longs(values: impl IntoIterator<Item = Option<i64>>) -> ArrayRef {
    Arc::new(Int64Array::from(values.into_iter().collect::<Vec<_>>()))
}

pub(crate) fn ints(values: impl IntoIterator<Item = Option<i32>>) -> ArrayRef {
    Arc::new(Int32Array::from(values.into_iter().collect::<Vec<_>>()))
}

pub(crate) fn strings<S: AsRef<str>>(values: impl IntoIterator<Item = Option<S>>) -> ArrayRef {
    let v: Vec<Option<S>> = values.into_iter().collect();
    Arc::new(StringArray::from_iter(
        v.iter().map(|s| s.as_ref().map(AsRef::as_ref)),
    ))
}

pub(crate) fn bools(values: impl IntoIterator<Item = Option<bool>>) -> ArrayRef {
    Arc::new(BooleanArray::from(values.into_iter().collect::<Vec<_>>()))
}

/// Map field names as Iceberg's Arrow mapping uses them.
pub(crate) fn map_names() -> MapFieldNames {
    MapFieldNames {
        entry: "key_value".into(),
        key: "key".into(),
        value: "value".into(),
    }
}

/// The snapshot a snapshot-scoped table reads: `snapshot`, else the current one.
fn snapshot_or_current<'a>(
    metadata: &'a TableMetadata,
    snapshot: Option<&'a Snapshot>,
) -> Option<&'a Snapshot> {
    snapshot.or_else(|| metadata.current_snapshot())
}

/// Build metadata table `kind` of `table`, at `snapshot` for the snapshot-scoped kinds
/// (default: the current snapshot).
///
/// Errors: missing or corrupt manifest lists and manifests, naming the file.
pub async fn metadata_table_batch(
    table: &Table,
    kind: MetadataTableKind,
    snapshot: Option<&Snapshot>,
) -> Result<RecordBatch> {
    let metadata = table.metadata();
    let snap = snapshot_or_current(metadata, snapshot);
    match kind {
        MetadataTableKind::Snapshots => snapshots_table(metadata),
        MetadataTableKind::History => history_table(metadata),
        MetadataTableKind::MetadataLogEntries => metadata_log_table(table),
        MetadataTableKind::Refs => refs_table(metadata),
        MetadataTableKind::Manifests => {
            let manifests = read_manifest_list(table, snap).await?;
            manifests_table(metadata, &manifests, None)
        }
        MetadataTableKind::AllManifests => {
            let mut all = vec![];
            let mut refs = vec![];
            for s in &metadata.snapshots {
                let manifests = read_manifest_list(table, Some(s)).await?;
                refs.extend(std::iter::repeat_n(s.snapshot_id, manifests.len()));
                all.extend(manifests);
            }
            manifests_table(metadata, &all, Some(&refs))
        }
        MetadataTableKind::Files
        | MetadataTableKind::DataFiles
        | MetadataTableKind::DeleteFiles => {
            let filter = match kind {
                MetadataTableKind::DataFiles => FileFilter::Data,
                MetadataTableKind::DeleteFiles => FileFilter::Deletes,
                _ => FileFilter::All,
            };
            let entries = read_entries(table, snap).await?;
            let live: Vec<&ManifestEntry> = entries.iter().filter(|e| e.is_alive()).collect();
            files_table(metadata, &live, filter)
        }
        MetadataTableKind::Entries => {
            let entries = read_entries(table, snap).await?;
            entries_table(metadata, &entries.iter().collect::<Vec<_>>())
        }
        MetadataTableKind::AllFiles
        | MetadataTableKind::AllDataFiles
        | MetadataTableKind::AllDeleteFiles => {
            let filter = match kind {
                MetadataTableKind::AllDataFiles => FileFilter::Data,
                MetadataTableKind::AllDeleteFiles => FileFilter::Deletes,
                _ => FileFilter::All,
            };
            let entries = read_all_entries(table).await?;
            let live: Vec<&ManifestEntry> = entries.iter().filter(|e| e.is_alive()).collect();
            files_table(metadata, &live, filter)
        }
        MetadataTableKind::AllEntries => {
            let entries = read_all_entries(table).await?;
            entries_table(metadata, &entries.iter().collect::<Vec<_>>())
        }
        MetadataTableKind::Partitions => {
            let entries = read_entries(table, snap).await?;
            let live: Vec<&ManifestEntry> = entries.iter().filter(|e| e.is_alive()).collect();
            partitions_table(metadata, &live)
        }
        MetadataTableKind::PositionDeletes => {
            let entries = read_entries(table, snap).await?;
            let live: Vec<&ManifestEntry> = entries.iter().filter(|e| e.is_alive()).collect();
            super::metadata_position_deletes::position_deletes_table(table, &live).await
        }
    }
}

/// Metadata table `kind` of `table` as a DataFusion table (in memory, read-only: changes
/// fail with [`ErrorKind::Unsupported`](crate::ErrorKind)).
pub async fn metadata_table_provider(
    table: &Table,
    kind: MetadataTableKind,
    snapshot: Option<&Snapshot>,
) -> Result<Arc<dyn TableProvider>> {
    let batch = metadata_table_batch(table, kind, snapshot).await?;
    let memory = Arc::new(MemTable::try_new(batch.schema(), vec![vec![batch]])?);
    Ok(Arc::new(super::read_only::ReadOnlyTable::new(
        memory,
        format!(
            "metadata table '{}' of the table at '{}'",
            kind.name(),
            table.metadata().location
        ),
    )))
}

async fn read_manifest_list(
    table: &Table,
    snapshot: Option<&Snapshot>,
) -> Result<Vec<ManifestFile>> {
    TableScan::new(table.clone(), snapshot.cloned())
        .manifest_list()
        .await
}

/// All entries of the snapshot's manifests (deleted ones included), in manifest-list
/// order.
pub(crate) async fn read_entries(
    table: &Table,
    snapshot: Option<&Snapshot>,
) -> Result<Vec<ManifestEntry>> {
    read_manifests(table, read_manifest_list(table, snapshot).await?).await
}

/// The entries of every manifest of every snapshot, each manifest read once (as Iceberg
/// Java's `all_*` tables: a file kept across snapshots appears once per manifest that
/// lists it).
async fn read_all_entries(table: &Table) -> Result<Vec<ManifestEntry>> {
    let mut seen = std::collections::HashSet::new();
    let mut manifests = vec![];
    for s in &table.metadata().snapshots {
        for m in read_manifest_list(table, Some(s)).await? {
            if seen.insert(m.manifest_path.clone()) {
                manifests.push(m);
            }
        }
    }
    read_manifests(table, manifests).await
}

/// The entries of `manifests` (deleted ones included), in order.
async fn read_manifests(table: &Table, manifests: Vec<ManifestFile>) -> Result<Vec<ManifestEntry>> {
    let metadata = table.metadata_ref();
    let per_manifest: Vec<Vec<ManifestEntry>> = stream::iter(manifests)
        .map(|m| {
            let metadata = Arc::clone(&metadata);
            async move { read_manifest(table, &metadata, &m).await }
        })
        .buffered(MANIFEST_CONCURRENCY)
        .try_collect()
        .await?;
    Ok(per_manifest.into_iter().flatten().collect())
}

fn snapshots_table(metadata: &TableMetadata) -> Result<RecordBatch> {
    let snaps = &metadata.snapshots;
    let mut summary = MapBuilder::new(
        Some(map_names()),
        StringBuilder::new(),
        StringBuilder::new(),
    );
    for s in snaps {
        let mut pairs: Vec<(&String, &String)> = s
            .summary
            .iter()
            .filter(|(k, _)| *k != "operation")
            .collect();
        pairs.sort();
        for (k, v) in pairs {
            summary.keys().append_value(k);
            summary.values().append_value(v);
        }
        summary.append(true)?;
    }
    let mut c = Columns::default();
    c.add(
        "committed_at",
        timestamps_ms(snaps.iter().map(|s| Some(s.timestamp_ms))),
    );
    c.add(
        "snapshot_id",
        longs(snaps.iter().map(|s| Some(s.snapshot_id))),
    );
    c.add(
        "parent_id",
        longs(snaps.iter().map(|s| s.parent_snapshot_id)),
    );
    c.add("operation", strings(snaps.iter().map(|s| s.operation())));
    c.add(
        "manifest_list",
        strings(snaps.iter().map(|s| s.manifest_list.as_deref())),
    );
    c.add("summary", Arc::new(summary.finish()));
    c.into_batch()
}

fn history_table(metadata: &TableMetadata) -> Result<RecordBatch> {
    let current: Vec<i64> = ancestors(metadata, metadata.current_snapshot_id)
        .iter()
        .map(|s| s.snapshot_id)
        .collect();
    let log = &metadata.snapshot_log;
    let mut c = Columns::default();
    c.add(
        "made_current_at",
        timestamps_ms(log.iter().map(|e| Some(e.timestamp_ms))),
    );
    c.add(
        "snapshot_id",
        longs(log.iter().map(|e| Some(e.snapshot_id))),
    );
    c.add(
        "parent_id",
        longs(log.iter().map(|e| {
            metadata
                .snapshot_by_id(e.snapshot_id)
                .and_then(|s| s.parent_snapshot_id)
        })),
    );
    c.add(
        "is_current_ancestor",
        bools(log.iter().map(|e| Some(current.contains(&e.snapshot_id)))),
    );
    c.into_batch()
}

fn metadata_log_table(table: &Table) -> Result<RecordBatch> {
    metadata_log_rows(table.metadata(), table.metadata_location())
}

/// The snapshot that was current at `ms` by the snapshot log alone (Java's
/// `SnapshotUtil.nullableSnapshotIdAsOfTime`: the newest entry at or before `ms`, the
/// first of equal ones); `None` before the first entry or with no log.
fn snapshot_log_id_as_of(metadata: &TableMetadata, ms: i64) -> Option<i64> {
    let mut best: Option<(i64, i64)> = None;
    for e in &metadata.snapshot_log {
        if e.timestamp_ms <= ms && best.is_none_or(|(t, _)| e.timestamp_ms > t) {
            best = Some((e.timestamp_ms, e.snapshot_id));
        }
    }
    best.map(|(_, id)| id)
}

/// `metadata_log_entries` of `metadata` read from `location`: the `metadata-log`, then the
/// current file. As Java's `MetadataLogEntriesTable`, `latest_snapshot_id` is the snapshot
/// the snapshot log names as current then (null before the first snapshot), and the schema
/// id and sequence number are that snapshot's (null when it is no longer in the metadata).
fn metadata_log_rows(metadata: &TableMetadata, location: &str) -> Result<RecordBatch> {
    let mut rows: Vec<(i64, String)> = metadata
        .metadata_log
        .iter()
        .map(|e| (e.timestamp_ms, e.metadata_file.clone()))
        .collect();
    rows.push((metadata.last_updated_ms, location.to_string()));
    let latest: Vec<Option<i64>> = rows
        .iter()
        .map(|(ts, _)| snapshot_log_id_as_of(metadata, *ts))
        .collect();
    let snapshot = |id: &Option<i64>| id.and_then(|id| metadata.snapshot_by_id(id));
    let mut c = Columns::default();
    c.add("timestamp", timestamps_ms(rows.iter().map(|r| Some(r.0))));
    c.add("file", strings(rows.iter().map(|r| Some(&r.1))));
    c.add("latest_snapshot_id", longs(latest.iter().copied()));
    c.add(
        "latest_schema_id",
        ints(
            latest
                .iter()
                .map(|id| snapshot(id).and_then(|s| s.schema_id)),
        ),
    );
    c.add(
        "latest_sequence_number",
        longs(
            latest
                .iter()
                .map(|id| snapshot(id).map(|s| s.sequence_number)),
        ),
    );
    c.into_batch()
}

fn refs_table(metadata: &TableMetadata) -> Result<RecordBatch> {
    let mut refs: Vec<_> = metadata.refs.iter().collect();
    refs.sort_by(|a, b| a.0.cmp(b.0));
    let mut c = Columns::default();
    c.add("name", strings(refs.iter().map(|r| Some(r.0))));
    c.add(
        "type",
        strings(refs.iter().map(|r| Some(r.1.ref_type.to_ascii_uppercase()))),
    );
    c.add(
        "snapshot_id",
        longs(refs.iter().map(|r| Some(r.1.snapshot_id))),
    );
    c.add(
        "max_reference_age_in_ms",
        longs(refs.iter().map(|r| r.1.max_ref_age_ms)),
    );
    c.add(
        "min_snapshots_to_keep",
        ints(refs.iter().map(|r| r.1.min_snapshots_to_keep)),
    );
    c.add(
        "max_snapshot_age_in_ms",
        longs(refs.iter().map(|r| r.1.max_snapshot_age_ms)),
    );
    c.into_batch()
}

fn manifests_table(
    metadata: &TableMetadata,
    manifests: &[ManifestFile],
    reference: Option<&[i64]>,
) -> Result<RecordBatch> {
    let is_data = |m: &ManifestFile| m.content == ManifestContent::Data;
    // a count the manifest list does not hold (v1 lists may leave them out) is null, as
    // in Java's `ManifestsTable`; the other content's counts are 0
    let count = |m: &ManifestFile, data: bool, v: Option<i32>| match is_data(m) == data {
        true => v,
        false => Some(0),
    };
    let summary_fields = Fields::from(vec![
        Field::new("contains_null", DataType::Boolean, false),
        Field::new("contains_nan", DataType::Boolean, true),
        Field::new("lower_bound", DataType::Utf8, true),
        Field::new("upper_bound", DataType::Utf8, true),
    ]);
    let mut summaries =
        ListBuilder::new(StructBuilder::from_fields(summary_fields.clone(), 0)).with_field(
            Arc::new(Field::new("item", DataType::Struct(summary_fields), true)),
        );
    let types = partition_types_by_spec(metadata);
    for m in manifests {
        let spec = metadata.partition_spec_by_id(m.partition_spec_id);
        let ptypes = types.get(&m.partition_spec_id);
        for (i, s) in m.partitions.iter().flatten().enumerate() {
            let field = spec.and_then(|spec| spec.fields.get(i));
            let ty = ptypes.and_then(|t| t.get(i));
            let bound = |b: &Option<Vec<u8>>| match (b, field, ty) {
                (Some(bytes), Some(f), Some(t)) => {
                    partition_summary_bound(bytes, t, f.transform.clone())
                }
                _ => None,
            };
            let row = summaries.values();
            row.field_builder::<BooleanBuilder>(0)
                .ok_or_else(|| Error::invalid_data("partition summary builder"))?
                .append_value(s.contains_null);
            row.field_builder::<BooleanBuilder>(1)
                .ok_or_else(|| Error::invalid_data("partition summary builder"))?
                .append_option(s.contains_nan);
            row.field_builder::<StringBuilder>(2)
                .ok_or_else(|| Error::invalid_data("partition summary builder"))?
                .append_option(bound(&s.lower_bound));
            row.field_builder::<StringBuilder>(3)
                .ok_or_else(|| Error::invalid_data("partition summary builder"))?
                .append_option(bound(&s.upper_bound));
            row.append(true);
        }
        // null when the manifest list does not hold the summaries (optional field 507),
        // as Java's `ManifestsTable.partitionSummariesToRows`
        summaries.append(m.partitions.is_some());
    }
    let mut c = Columns::default();
    c.add(
        "content",
        ints(
            manifests
                .iter()
                .map(|m| Some(if is_data(m) { 0 } else { 1 })),
        ),
    );
    c.add(
        "path",
        strings(manifests.iter().map(|m| Some(&m.manifest_path))),
    );
    c.add(
        "length",
        longs(manifests.iter().map(|m| Some(m.manifest_length))),
    );
    c.add(
        "partition_spec_id",
        ints(manifests.iter().map(|m| Some(m.partition_spec_id))),
    );
    c.add(
        "added_snapshot_id",
        longs(manifests.iter().map(|m| Some(m.added_snapshot_id))),
    );
    c.add(
        "added_data_files_count",
        ints(
            manifests
                .iter()
                .map(|m| count(m, true, m.added_files_count)),
        ),
    );
    c.add(
        "existing_data_files_count",
        ints(
            manifests
                .iter()
                .map(|m| count(m, true, m.existing_files_count)),
        ),
    );
    c.add(
        "deleted_data_files_count",
        ints(
            manifests
                .iter()
                .map(|m| count(m, true, m.deleted_files_count)),
        ),
    );
    c.add(
        "added_delete_files_count",
        ints(
            manifests
                .iter()
                .map(|m| count(m, false, m.added_files_count)),
        ),
    );
    c.add(
        "existing_delete_files_count",
        ints(
            manifests
                .iter()
                .map(|m| count(m, false, m.existing_files_count)),
        ),
    );
    c.add(
        "deleted_delete_files_count",
        ints(
            manifests
                .iter()
                .map(|m| count(m, false, m.deleted_files_count)),
        ),
    );
    c.add("partition_summaries", Arc::new(summaries.finish()));
    if let Some(reference) = reference {
        c.add(
            "reference_snapshot_id",
            longs(reference.iter().map(|r| Some(*r))),
        );
    }
    c.into_batch()
}

/// The partition field types of every spec (see [`crate::spec::manifest::partition_field_types`]).
pub(crate) fn partition_types_by_spec(
    metadata: &TableMetadata,
) -> HashMap<i32, Vec<crate::spec::PrimitiveType>> {
    let schemas = metadata.schemas_newest_first();
    metadata
        .partition_specs
        .iter()
        .filter_map(|spec| {
            crate::spec::manifest::partition_field_types(spec, &schemas)
                .ok()
                .map(|t| (spec.spec_id, t))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Array, ListArray};

    fn metadata() -> TableMetadata {
        let j = serde_json::json!({
            "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": "/t", "last-sequence-number": 1, "last-updated-ms": 1000,
            "last-column-id": 1, "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "k", "required": false, "type": "int"}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": [
                {"source-id": 1, "field-id": 1000, "name": "k", "transform": "identity"}]}],
            "last-partition-id": 1000, "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}]
        });
        TableMetadata::from_json(&j.to_string()).expect("metadata")
    }

    fn manifest(partitions: Option<Vec<crate::spec::FieldSummary>>) -> ManifestFile {
        ManifestFile {
            manifest_path: "/t/m.avro".into(),
            manifest_length: 10,
            partition_spec_id: 0,
            content: ManifestContent::Data,
            sequence_number: 1,
            min_sequence_number: 1,
            added_snapshot_id: 1,
            added_files_count: Some(1),
            existing_files_count: Some(0),
            deleted_files_count: Some(0),
            added_rows_count: Some(1),
            existing_rows_count: Some(0),
            deleted_rows_count: Some(0),
            partitions,
            key_metadata: None,
            first_row_id: None,
        }
    }

    /// `latest_snapshot_id` comes from the snapshot log alone, the first of entries of one
    /// time; an id the log names but the metadata no longer holds is kept, its schema id
    /// and sequence number null; with no log, null (Java's `MetadataLogEntriesTable`).
    #[test]
    fn metadata_log_latest_snapshot_as_java() {
        let mut j: serde_json::Value = serde_json::json!({
            "format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": "/t", "last-sequence-number": 3, "last-updated-ms": 5000,
            "last-column-id": 1, "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "k", "required": false, "type": "int"}]}],
            "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
            "last-partition-id": 999, "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "current-snapshot-id": 3,
            "snapshots": [
                {"snapshot-id": 2, "sequence-number": 2, "timestamp-ms": 2000,
                 "manifest-list": "/t/m2.avro", "summary": {"operation": "append"},
                 "schema-id": 0},
                {"snapshot-id": 3, "parent-snapshot-id": 2, "sequence-number": 3,
                 "timestamp-ms": 2000, "manifest-list": "/t/m3.avro",
                 "summary": {"operation": "append"}, "schema-id": 0}],
            "snapshot-log": [{"snapshot-id": 1, "timestamp-ms": 1000},
                             {"snapshot-id": 2, "timestamp-ms": 2000},
                             {"snapshot-id": 3, "timestamp-ms": 2000}],
            "metadata-log": [{"metadata-file": "/t/m0.json", "timestamp-ms": 500},
                             {"metadata-file": "/t/m1.json", "timestamp-ms": 1500},
                             {"metadata-file": "/t/m2.json", "timestamp-ms": 2000}]
        });
        let column = |batch: &RecordBatch, name: &str| -> Vec<Option<i64>> {
            let col = datafusion::arrow::compute::cast(
                batch.column_by_name(name).expect("column"),
                &DataType::Int64,
            )
            .expect("cast");
            let col = col.as_any().downcast_ref::<Int64Array>().expect("longs");
            col.iter().collect()
        };
        let m = TableMetadata::from_json(&j.to_string()).expect("metadata");
        let batch = metadata_log_rows(&m, "/t/m3.json").expect("rows");
        assert_eq!(
            column(&batch, "latest_snapshot_id"),
            vec![None, Some(1), Some(2), Some(2)]
        );
        assert_eq!(
            column(&batch, "latest_sequence_number"),
            vec![None, None, Some(2), Some(2)]
        );
        assert_eq!(
            column(&batch, "latest_schema_id"),
            vec![None, None, Some(0), Some(0)]
        );
        j["snapshot-log"] = serde_json::json!([]);
        let m = TableMetadata::from_json(&j.to_string()).expect("metadata");
        let batch = metadata_log_rows(&m, "/t/m3.json").expect("rows");
        assert_eq!(column(&batch, "latest_snapshot_id"), vec![None; 4]);
    }

    /// `partition_summaries` is null for a manifest without summaries, an empty list for
    /// one with an empty list, and the bounds as human strings otherwise (Java's
    /// `ManifestsTable`).
    #[test]
    fn partition_summaries_null_only_when_absent() {
        let summary = crate::spec::FieldSummary {
            contains_null: true,
            contains_nan: None,
            lower_bound: Some(3i32.to_le_bytes().to_vec()),
            upper_bound: Some(7i32.to_le_bytes().to_vec()),
        };
        let manifests = [
            manifest(None),
            manifest(Some(vec![])),
            manifest(Some(vec![summary])),
        ];
        let batch = manifests_table(&metadata(), &manifests, None).expect("manifests");
        let col = batch
            .column_by_name("partition_summaries")
            .expect("column")
            .as_any()
            .downcast_ref::<ListArray>()
            .expect("list")
            .clone();
        assert!(col.is_null(0));
        assert!(col.is_valid(1) && col.value(1).is_empty());
        let third = col.value(2);
        let row = third
            .as_any()
            .downcast_ref::<datafusion::arrow::array::StructArray>()
            .expect("struct");
        let text = |name: &str| {
            row.column_by_name(name)
                .expect("field")
                .as_any()
                .downcast_ref::<StringArray>()
                .expect("string")
                .value(0)
                .to_string()
        };
        assert_eq!(
            (text("lower_bound"), text("upper_bound")),
            ("3".into(), "7".into())
        );
    }

    /// A count a v1 manifest list leaves out is null, not 0 (Java's `ManifestsTable`
    /// returns the manifest's null count); the other content's counts stay 0.
    #[test]
    fn manifest_counts_left_out_are_null() {
        let mut unknown = manifest(None);
        unknown.added_files_count = None;
        unknown.existing_files_count = None;
        let batch =
            manifests_table(&metadata(), &[manifest(None), unknown], None).expect("manifests");
        let ints = |name: &str| -> Vec<Option<i32>> {
            batch
                .column_by_name(name)
                .expect("column")
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int32Array>()
                .expect("ints")
                .iter()
                .collect()
        };
        assert_eq!(ints("added_data_files_count"), [Some(1), None]);
        assert_eq!(ints("existing_data_files_count"), [Some(0), None]);
        assert_eq!(ints("deleted_data_files_count"), [Some(0), Some(0)]);
        assert_eq!(ints("added_delete_files_count"), [Some(0), Some(0)]);
    }
}
