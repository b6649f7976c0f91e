//! [`TableMetadataBuilder`]: new table metadata from a base and a list of
//! [`TableUpdate`]s, keeping the spec's invariants (spec: "Table Metadata",
//! "Sequence Numbers", "Row Lineage", "Snapshot References").
//!
//! Every catalog applies a commit's updates with this one builder, so the rules live in
//! one place: snapshot ids are unique and a snapshot's sequence number is above the
//! table's `last-sequence-number` (v2+); v3 snapshots take `first-row-id` from the
//! table's `next-row-id`, which grows by the snapshot's `added-rows`; setting `main`
//! makes a snapshot current and logs it in `snapshot-log`; schema and spec ids never
//! repeat and `last-column-id` / `last-partition-id` never go down; the previous metadata
//! file is appended to `metadata-log`, trimmed to `write.metadata.previous-versions-max`
//! (default 100).

use super::partition::PartitionSpec;
use super::schema::Schema;
use super::snapshot::{MetadataLogEntry, SnapshotLogEntry};
use super::sort_order::SortOrder;
use super::table_metadata::{FormatVersion, TableMetadata, MAIN_BRANCH};
use super::table_update::TableUpdate;
use crate::error::{Error, Result};

/// Default of `write.metadata.previous-versions-max`: how many previous metadata files
/// `metadata-log` keeps.
const PREVIOUS_VERSIONS_MAX_DEFAULT: usize = 100;

/// Builds the next [`TableMetadata`] from a base by applying [`TableUpdate`]s.
#[derive(Debug, Clone)]
pub struct TableMetadataBuilder {
    metadata: TableMetadata,
    base_location: Option<String>,
    base_last_updated_ms: i64,
    last_added_schema_id: Option<i32>,
    last_added_spec_id: Option<i32>,
    last_added_order_id: Option<i64>,
    added_snapshot_ids: Vec<i64>,
    changed: bool,
    /// The base's format version and current schema id (`None` for a new table): the
    /// row lineage names are checked when either changes.
    base_version: Option<(FormatVersion, i32)>,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl TableMetadataBuilder {
    /// Metadata of a new table: `schema`, `spec` and `sort_order` with their ids and
    /// field ids already assigned, a fresh `table-uuid`, no snapshot.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`]): two fields of the schema with the
    /// same id or the same full name ([`Schema::check_field_names`]); a partition or sort
    /// field whose source is not in the schema, is not primitive or does not take its
    /// transform, or whose transform is `bucket[0]` / `truncate[0]`
    /// ([`PartitionSpec::check_compatibility`], [`SortOrder::check_compatibility`]).
    pub fn new_table(
        format_version: FormatVersion,
        location: &str,
        schema: Schema,
        spec: PartitionSpec,
        sort_order: SortOrder,
        properties: std::collections::HashMap<String, String>,
    ) -> Result<Self> {
        check_field_ids(&schema)?;
        schema.check_field_names()?;
        schema.check_format_version(format_version)?;
        for f in &spec.fields {
            if schema.field_by_id(f.source_id).is_none() {
                return Err(Error::invalid_argument(format!(
                    "partition field '{}' has source id {} which is not in the schema",
                    f.name, f.source_id
                )));
            }
        }
        spec.check_compatibility(&schema, false)?;
        for f in &sort_order.fields {
            if schema.field_by_id(f.source_id).is_none() {
                return Err(Error::invalid_argument(format!(
                    "sort field has source id {} which is not in the schema",
                    f.source_id
                )));
            }
        }
        sort_order.check_compatibility(&schema, false)?;
        let now = now_ms();
        let metadata = TableMetadata {
            format_version,
            table_uuid: Some(uuid::Uuid::new_v4().to_string()),
            location: location.trim_end_matches('/').to_string(),
            last_sequence_number: 0,
            last_updated_ms: now,
            last_column_id: schema.highest_field_id(),
            current_schema_id: schema.schema_id,
            schemas: vec![schema],
            default_spec_id: spec.spec_id,
            last_partition_id: spec
                .fields
                .iter()
                .filter_map(|f| f.field_id)
                .max()
                .unwrap_or(999),
            partition_specs: vec![spec],
            properties,
            current_snapshot_id: None,
            snapshots: vec![],
            snapshot_log: vec![],
            metadata_log: vec![],
            default_sort_order_id: sort_order.order_id,
            sort_orders: vec![sort_order],
            refs: Default::default(),
            statistics: vec![],
            partition_statistics: vec![],
            next_row_id: (format_version >= FormatVersion::V3).then_some(0),
            encryption_keys: vec![],
        };
        Ok(Self {
            base_last_updated_ms: now,
            metadata,
            base_location: None,
            last_added_schema_id: None,
            last_added_spec_id: None,
            last_added_order_id: None,
            added_snapshot_ids: vec![],
            changed: true,
            base_version: None,
        })
    }

    /// A builder over `base`, read from `base_location` (logged in `metadata-log` when
    /// the built metadata differs).
    pub fn from_base(base: TableMetadata, base_location: Option<&str>) -> Self {
        Self {
            base_version: Some((base.format_version, base.current_schema_id)),
            base_last_updated_ms: base.last_updated_ms,
            metadata: base,
            base_location: base_location.map(str::to_string),
            last_added_schema_id: None,
            last_added_spec_id: None,
            last_added_order_id: None,
            added_snapshot_ids: vec![],
            changed: false,
        }
    }

    /// The metadata as updated so far.
    pub fn metadata(&self) -> &TableMetadata {
        &self.metadata
    }

    /// Apply every update in order.
    ///
    /// Errors: as [`apply`](Self::apply), for the first update that fails.
    pub fn apply_all<'a>(
        &mut self,
        updates: impl IntoIterator<Item = &'a TableUpdate>,
    ) -> Result<()> {
        for u in updates {
            self.apply(u)?;
        }
        Ok(())
    }

    /// Apply one update.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`], naming the rule): a duplicate
    /// snapshot id; a sequence number not above `last-sequence-number`; a v3 snapshot
    /// without `first-row-id` at or above `next-row-id`; a ref to an unknown snapshot;
    /// a downgrade of the format version; `-1` ids with nothing added in this commit;
    /// ids naming no schema, spec or sort order; an added schema, or one made current,
    /// with two fields of the same full name ([`Schema::check_field_names`]; Java's
    /// `Schema` constructor refuses it, so no reader could load the table); removing the
    /// default partition spec or the current schema.
    pub fn apply(&mut self, update: &TableUpdate) -> Result<()> {
        self.changed = true;
        let m = &mut self.metadata;
        match update {
            TableUpdate::AssignUuid { uuid } => m.table_uuid = Some(uuid.clone()),
            TableUpdate::UpgradeFormatVersion { format_version } => {
                let v = match format_version {
                    1 => FormatVersion::V1,
                    2 => FormatVersion::V2,
                    3 => FormatVersion::V3,
                    other => {
                        return Err(Error::unsupported(format!("format version {other}")));
                    }
                };
                if v < m.format_version {
                    return Err(Error::invalid_argument(format!(
                        "cannot downgrade format version {} to {}",
                        m.format_version as i32, v as i32
                    )));
                }
                if v >= FormatVersion::V3 && m.next_row_id.is_none() {
                    m.next_row_id = Some(0);
                }
                m.format_version = v;
            }
            TableUpdate::AddSchema { schema } => {
                check_field_ids(schema)
                    .and_then(|()| schema.check_field_names())
                    .and_then(|()| schema.check_format_version(m.format_version))
                    .map_err(|e| e.context(format!("add schema {}", schema.schema_id)))?;
                if let Some(existing) = m.schema_by_id(schema.schema_id) {
                    if existing != schema {
                        return Err(Error::invalid_argument(format!(
                            "schema id {} is already used by a different schema",
                            schema.schema_id
                        )));
                    }
                } else {
                    m.schemas.push(schema.clone());
                }
                m.last_column_id = m.last_column_id.max(schema.highest_field_id());
                self.last_added_schema_id = Some(schema.schema_id);
            }
            TableUpdate::SetCurrentSchema { schema_id } => {
                let id = resolve_last(*schema_id, self.last_added_schema_id, "schema")?;
                let Some(schema) = m.schema_by_id(id) else {
                    return Err(Error::invalid_argument(format!("no schema with id {id}")));
                };
                schema
                    .check_field_names()
                    .map_err(|e| e.context(format!("set current schema {id}")))?;
                m.current_schema_id = id;
            }
            TableUpdate::AddSpec { spec } => {
                if m.partition_spec_by_id(spec.spec_id).is_none() {
                    spec.check_compatibility(schema_for_new(m, self.last_added_schema_id), true)?;
                    m.partition_specs.push(spec.clone());
                }
                let highest = spec.fields.iter().filter_map(|f| f.field_id).max();
                m.last_partition_id = m.last_partition_id.max(highest.unwrap_or(999));
                self.last_added_spec_id = Some(spec.spec_id);
            }
            TableUpdate::SetDefaultSpec { spec_id } => {
                let id = resolve_last(*spec_id, self.last_added_spec_id, "partition spec")?;
                if m.partition_spec_by_id(id).is_none() {
                    return Err(Error::invalid_argument(format!(
                        "no partition spec with id {id}"
                    )));
                }
                m.default_spec_id = id;
            }
            TableUpdate::AddSortOrder { sort_order } => {
                if !m
                    .sort_orders
                    .iter()
                    .any(|o| o.order_id == sort_order.order_id)
                {
                    sort_order
                        .check_compatibility(schema_for_new(m, self.last_added_schema_id), true)?;
                    m.sort_orders.push(sort_order.clone());
                }
                self.last_added_order_id = Some(sort_order.order_id);
            }
            TableUpdate::SetDefaultSortOrder { sort_order_id } => {
                let id = if *sort_order_id == -1 {
                    self.last_added_order_id.ok_or_else(|| {
                        Error::invalid_argument("sort order id -1 but no sort order was added")
                    })?
                } else {
                    *sort_order_id
                };
                if !m.sort_orders.iter().any(|o| o.order_id == id) {
                    return Err(Error::invalid_argument(format!(
                        "no sort order with id {id}"
                    )));
                }
                m.default_sort_order_id = id;
            }
            TableUpdate::AddSnapshot { snapshot } => {
                if m.snapshot_by_id(snapshot.snapshot_id).is_some() {
                    return Err(Error::invalid_argument(format!(
                        "snapshot id {} already exists",
                        snapshot.snapshot_id
                    )));
                }
                if m.format_version >= FormatVersion::V2
                    && snapshot.sequence_number <= m.last_sequence_number
                {
                    return Err(Error::invalid_argument(format!(
                        "snapshot {} has sequence number {}, not above the table's \
                         last-sequence-number {}",
                        snapshot.snapshot_id, snapshot.sequence_number, m.last_sequence_number
                    )));
                }
                if m.format_version >= FormatVersion::V3 {
                    let next = m.next_row_id.unwrap_or(0);
                    match (snapshot.first_row_id, snapshot.added_rows) {
                        (Some(first), Some(added)) if first >= next && added >= 0 => {
                            m.next_row_id = Some(first + added);
                        }
                        _ => {
                            return Err(Error::invalid_argument(format!(
                                "v3 snapshot {} needs first-row-id >= next-row-id {next} and \
                                 added-rows",
                                snapshot.snapshot_id
                            )));
                        }
                    }
                }
                m.last_sequence_number = m.last_sequence_number.max(snapshot.sequence_number);
                m.last_updated_ms = snapshot.timestamp_ms;
                m.snapshots.push(snapshot.clone());
                self.added_snapshot_ids.push(snapshot.snapshot_id);
            }
            TableUpdate::SetSnapshotRef {
                ref_name,
                reference,
            } => {
                let Some(snapshot) = m.snapshot_by_id(reference.snapshot_id) else {
                    return Err(Error::invalid_argument(format!(
                        "ref '{ref_name}' names snapshot {} which does not exist",
                        reference.snapshot_id
                    )));
                };
                let ts = if self.added_snapshot_ids.contains(&reference.snapshot_id) {
                    snapshot.timestamp_ms
                } else {
                    now_ms()
                };
                if ref_name == MAIN_BRANCH {
                    if reference.ref_type != "branch" {
                        return Err(Error::invalid_argument("'main' must be a branch"));
                    }
                    if m.current_snapshot_id != Some(reference.snapshot_id) {
                        m.current_snapshot_id = Some(reference.snapshot_id);
                        m.snapshot_log.push(SnapshotLogEntry {
                            timestamp_ms: ts,
                            snapshot_id: reference.snapshot_id,
                        });
                    }
                    m.last_updated_ms = m.last_updated_ms.max(ts);
                }
                m.refs.insert(ref_name.clone(), reference.clone());
            }
            TableUpdate::RemoveSnapshots { snapshot_ids } => {
                m.snapshots
                    .retain(|s| !snapshot_ids.contains(&s.snapshot_id));
                m.refs.retain(|_, r| !snapshot_ids.contains(&r.snapshot_id));
                // an entry whose snapshot is gone drops the whole log before it too (Java's
                // `TableMetadata.Builder#updateSnapshotLog`): with [(t1, s1), (t2, s2),
                // (t3, s3)] and s2 removed, [(t1, s1), (t3, s3)] would say s1 was current
                // from t1 to t3, and time travel to a moment in s2's time would read s1
                let live: std::collections::HashSet<i64> =
                    m.snapshots.iter().map(|s| s.snapshot_id).collect();
                let mut log = Vec::with_capacity(m.snapshot_log.len());
                for entry in m.snapshot_log.drain(..) {
                    if live.contains(&entry.snapshot_id) {
                        log.push(entry);
                    } else {
                        log.clear();
                    }
                }
                m.snapshot_log = log;
                if m.current_snapshot_id
                    .is_some_and(|id| snapshot_ids.contains(&id))
                {
                    m.current_snapshot_id = None;
                }
                m.statistics
                    .retain(|s| !snapshot_ids.contains(&s.snapshot_id));
                m.partition_statistics
                    .retain(|s| !snapshot_ids.contains(&s.snapshot_id));
            }
            TableUpdate::RemoveSnapshotRef { ref_name } => {
                m.refs.remove(ref_name);
                if ref_name == MAIN_BRANCH {
                    m.current_snapshot_id = None;
                }
            }
            TableUpdate::RemovePartitionSpecs { spec_ids } => {
                if spec_ids.contains(&m.default_spec_id) {
                    return Err(Error::invalid_argument(format!(
                        "cannot remove the default partition spec {}",
                        m.default_spec_id
                    )));
                }
                m.partition_specs.retain(|s| !spec_ids.contains(&s.spec_id));
            }
            TableUpdate::RemoveSchemas { schema_ids } => {
                if schema_ids.contains(&m.current_schema_id) {
                    return Err(Error::invalid_argument(format!(
                        "cannot remove the current schema {}",
                        m.current_schema_id
                    )));
                }
                m.schemas.retain(|s| !schema_ids.contains(&s.schema_id));
            }
            TableUpdate::SetStatistics { statistics, .. } => {
                m.statistics
                    .retain(|s| s.snapshot_id != statistics.snapshot_id);
                m.statistics.push(statistics.clone());
            }
            TableUpdate::RemoveStatistics { snapshot_id } => {
                m.statistics.retain(|s| s.snapshot_id != *snapshot_id);
            }
            TableUpdate::SetPartitionStatistics {
                partition_statistics,
            } => {
                m.partition_statistics
                    .retain(|s| s.snapshot_id != partition_statistics.snapshot_id);
                m.partition_statistics.push(partition_statistics.clone());
            }
            TableUpdate::RemovePartitionStatistics { snapshot_id } => {
                m.partition_statistics
                    .retain(|s| s.snapshot_id != *snapshot_id);
            }
            TableUpdate::SetLocation { location } => {
                m.location = location.trim_end_matches('/').to_string();
            }
            TableUpdate::SetProperties { updates } => {
                m.properties
                    .extend(updates.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            TableUpdate::RemoveProperties { removals } => {
                for k in removals {
                    m.properties.remove(k);
                }
            }
        }
        Ok(())
    }

    /// The new metadata. When anything changed, `last-updated-ms` moves forward and the
    /// base's metadata file is logged in `metadata-log` (trimmed to
    /// `write.metadata.previous-versions-max`).
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`]): a format-version 3 table created, upgraded to v3 or given a
    /// new current schema whose current schema has a column named as a row lineage field
    /// ([`Schema::check_row_lineage_names`]).
    pub fn build(self) -> Result<TableMetadata> {
        let mut m = self.metadata;
        if !self.changed {
            return Ok(m);
        }
        // a v3 table's columns may not take the row lineage fields' names: checked when
        // the table is created, upgraded to v3 or its current schema changes (a table
        // another engine left so still takes other commits)
        if m.format_version >= FormatVersion::V3
            && self
                .base_version
                .is_none_or(|(v, schema)| v < FormatVersion::V3 || schema != m.current_schema_id)
        {
            let what = match self.base_version {
                Some((v, _)) if v < FormatVersion::V3 => "upgrade to format version 3",
                Some(_) => "schema change",
                None => "new format-version 3 table",
            };
            m.current_schema()
                .check_row_lineage_names()
                .map_err(|e| e.context(what))?;
        }
        m.last_updated_ms = m
            .last_updated_ms
            .max(now_ms())
            .max(self.base_last_updated_ms);
        if let Some(previous) = self.base_location {
            m.metadata_log.push(MetadataLogEntry {
                timestamp_ms: self.base_last_updated_ms,
                metadata_file: previous,
            });
        }
        // Every commit reads this, so a value icefloe cannot use (written by another
        // engine; icefloe's own SET refuses it) falls back to the default rather than
        // failing the commit: failing would lock the table against the very commit that
        // unsets it. The value only bounds the metadata log's length.
        let max = crate::table_properties::METADATA_PREVIOUS_VERSIONS_MAX
            .int(&m.properties)
            .ok()
            .flatten()
            .map_or(PREVIOUS_VERSIONS_MAX_DEFAULT, |n| {
                usize::try_from(n).unwrap_or(PREVIOUS_VERSIONS_MAX_DEFAULT)
            });
        if m.metadata_log.len() > max {
            let excess = m.metadata_log.len() - max;
            m.metadata_log.drain(..excess);
        }
        Ok(m)
    }
}

/// The schema a spec or sort order added by an update is checked against: the schema
/// the same commit added last, else the current one (Java checks against the current
/// schema, which its builders set before adding a spec or order).
fn schema_for_new(m: &TableMetadata, last_added_schema_id: Option<i32>) -> &Schema {
    last_added_schema_id
        .and_then(|id| m.schema_by_id(id))
        .unwrap_or_else(|| m.current_schema())
}

/// Field ids are unique within a schema (spec: "Schemas"; Java's `Schema` indexes them
/// by id and refuses a repeat).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the id and both fields.
fn check_field_ids(schema: &Schema) -> Result<()> {
    match schema.duplicate_field_id() {
        None => Ok(()),
        Some((id, first, second)) => Err(Error::invalid_argument(format!(
            "invalid schema {}: field id {id} is used by both '{first}' and '{second}' (field \
             ids must be unique within a schema)",
            schema.schema_id
        ))),
    }
}

fn resolve_last(id: i32, last_added: Option<i32>, what: &str) -> Result<i32> {
    if id == -1 {
        last_added.ok_or_else(|| {
            Error::invalid_argument(format!(
                "{what} id -1 but no {what} was added in this commit"
            ))
        })
    } else {
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{NestedField, PrimitiveType, Snapshot, SnapshotReference, Type};

    fn table(v: FormatVersion) -> TableMetadataBuilder {
        let schema = Schema::new(
            0,
            vec![NestedField::optional(
                1,
                "id",
                Type::Primitive(PrimitiveType::Long),
            )],
        );
        TableMetadataBuilder::new_table(
            v,
            "file:///w/t",
            schema,
            PartitionSpec::unpartitioned(),
            SortOrder {
                order_id: 0,
                fields: vec![],
            },
            Default::default(),
        )
        .unwrap()
    }

    fn snapshot(id: i64, parent: Option<i64>, seq: i64) -> Snapshot {
        Snapshot {
            snapshot_id: id,
            parent_snapshot_id: parent,
            sequence_number: seq,
            timestamp_ms: 1000 + seq,
            manifest_list: Some(format!("file:///w/t/metadata/snap-{id}.avro")),
            manifests: None,
            summary: [("operation".to_string(), "append".to_string())].into(),
            schema_id: Some(0),
            first_row_id: None,
            added_rows: None,
            key_id: None,
        }
    }

    fn main_at(id: i64) -> TableUpdate {
        TableUpdate::SetSnapshotRef {
            ref_name: MAIN_BRANCH.into(),
            reference: SnapshotReference {
                snapshot_id: id,
                ref_type: "branch".into(),
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: None,
                max_ref_age_ms: None,
            },
        }
    }

    /// Java's `updateSnapshotLog`: removing a snapshot drops its log entry and every entry
    /// before it, so no gap makes an older snapshot look current in its time.
    #[test]
    fn removing_a_snapshot_drops_the_log_before_it() {
        let mut b = table(FormatVersion::V2);
        for id in 1..=4 {
            let parent = (id > 1).then_some(id - 1);
            b.apply(&TableUpdate::AddSnapshot {
                snapshot: snapshot(id, parent, id),
            })
            .unwrap();
            b.apply(&main_at(id)).unwrap();
        }
        let m = b.build().unwrap();
        let log = |m: &TableMetadata| -> Vec<i64> {
            m.snapshot_log.iter().map(|e| e.snapshot_id).collect()
        };
        assert_eq!(log(&m), [1, 2, 3, 4]);
        let mut b = TableMetadataBuilder::from_base(m.clone(), None);
        b.apply(&TableUpdate::RemoveSnapshots {
            snapshot_ids: vec![2],
        })
        .unwrap();
        // s1 stays a snapshot (a tag may hold it) but not in the log: it was not
        // current from t1 to t3
        let after = b.build().unwrap();
        assert_eq!(log(&after), [3, 4]);
        assert!(after.snapshot_by_id(1).is_some());
        // removing the oldest keeps the rest of the log
        let mut b = TableMetadataBuilder::from_base(m, None);
        b.apply(&TableUpdate::RemoveSnapshots {
            snapshot_ids: vec![1],
        })
        .unwrap();
        assert_eq!(log(&b.build().unwrap()), [2, 3, 4]);
    }

    #[test]
    fn snapshots_advance_sequence_numbers_and_log() {
        let mut b = table(FormatVersion::V2);
        b.apply(&TableUpdate::AddSnapshot {
            snapshot: snapshot(1, None, 1),
        })
        .unwrap();
        b.apply(&main_at(1)).unwrap();
        let m = b.build().unwrap();
        assert_eq!(m.last_sequence_number, 1);
        assert_eq!(m.current_snapshot_id, Some(1));
        assert_eq!(m.snapshot_log.len(), 1);
        assert_eq!(m.snapshot_log[0].timestamp_ms, 1001);

        let mut b =
            TableMetadataBuilder::from_base(m, Some("file:///w/t/metadata/00001-a.metadata.json"));
        // a stale sequence number is refused
        let err = b
            .apply(&TableUpdate::AddSnapshot {
                snapshot: snapshot(2, Some(1), 1),
            })
            .unwrap_err();
        assert!(err.to_string().contains("last-sequence-number 1"), "{err}");
        b.apply(&TableUpdate::AddSnapshot {
            snapshot: snapshot(2, Some(1), 2),
        })
        .unwrap();
        // a duplicate id is refused
        assert!(b
            .apply(&TableUpdate::AddSnapshot {
                snapshot: snapshot(2, Some(1), 3)
            })
            .is_err());
        b.apply(&main_at(2)).unwrap();
        let m = b.build().unwrap();
        assert_eq!(m.current_snapshot_id, Some(2));
        assert_eq!(m.metadata_log.len(), 1);
        assert_eq!(
            m.metadata_log[0].metadata_file,
            "file:///w/t/metadata/00001-a.metadata.json"
        );
    }

    #[test]
    fn v3_assigns_row_ids() {
        let mut b = table(FormatVersion::V3);
        let mut s = snapshot(1, None, 1);
        assert!(b
            .apply(&TableUpdate::AddSnapshot {
                snapshot: s.clone()
            })
            .is_err());
        s.first_row_id = Some(0);
        s.added_rows = Some(10);
        b.apply(&TableUpdate::AddSnapshot { snapshot: s }).unwrap();
        assert_eq!(b.metadata().next_row_id, Some(10));
        let mut s2 = snapshot(2, Some(1), 2);
        s2.first_row_id = Some(5);
        s2.added_rows = Some(1);
        assert!(b.apply(&TableUpdate::AddSnapshot { snapshot: s2 }).is_err());
    }

    #[test]
    fn metadata_log_is_trimmed() {
        let mut m = table(FormatVersion::V2).build().unwrap();
        m.properties.insert(
            crate::table_properties::METADATA_PREVIOUS_VERSIONS_MAX
                .name
                .into(),
            "2".into(),
        );
        for i in 0..5 {
            let mut b = TableMetadataBuilder::from_base(m, Some(&format!("m{i}")));
            b.apply(&TableUpdate::SetProperties {
                updates: [("k".to_string(), i.to_string())].into(),
            })
            .unwrap();
            m = b.build().unwrap();
        }
        let files: Vec<&str> = m
            .metadata_log
            .iter()
            .map(|e| e.metadata_file.as_str())
            .collect();
        assert_eq!(files, ["m3", "m4"]);
    }

    #[test]
    fn schemas_with_a_full_name_twice_are_refused() {
        let int = || Type::Primitive(PrimitiveType::Int);
        let dup = Schema::new(
            1,
            vec![
                NestedField::optional(1, "id", int()),
                NestedField::optional(2, "id", int()),
            ],
        );
        // a new table
        let err = TableMetadataBuilder::new_table(
            FormatVersion::V2,
            "file:///w/t",
            dup.clone(),
            PartitionSpec::unpartitioned(),
            SortOrder {
                order_id: 0,
                fields: vec![],
            },
            Default::default(),
        )
        .unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert!(
            err.to_string()
                .contains("two fields have the name 'id' (field ids 1 and 2)"),
            "{err}"
        );
        // an added schema (the commit path of every catalog and of a transaction)
        let mut b = table(FormatVersion::V2);
        let err = b
            .apply(&TableUpdate::AddSchema {
                schema: dup.clone(),
            })
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("add schema 1: invalid schema: two fields have the name 'id'"),
            "{err}"
        );
        assert_eq!(b.metadata().schemas.len(), 1);
        assert_eq!(b.metadata().last_column_id, 1);
        // an existing schema made current (one written before this check)
        let mut m = table(FormatVersion::V2).build().unwrap();
        m.schemas.push(dup);
        let mut b = TableMetadataBuilder::from_base(m, None);
        let err = b
            .apply(&TableUpdate::SetCurrentSchema { schema_id: 1 })
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("set current schema 1: invalid schema"),
            "{err}"
        );
        assert_eq!(b.metadata().current_schema_id, 0);
    }

    /// Spec "Row Lineage": a v3 table's columns may not take the lineage fields' names
    /// when it is created, upgraded or its current schema changes; other commits of a
    /// table that has one (another engine's) go through.
    #[test]
    fn v3_columns_may_not_take_row_lineage_names() {
        let long = || Type::Primitive(PrimitiveType::Long);
        let with = |name: &str| {
            Schema::new(
                1,
                vec![
                    NestedField::optional(1, "id", long()),
                    NestedField::optional(2, name, long()),
                ],
            )
        };
        let create = |v: FormatVersion, schema: Schema| {
            TableMetadataBuilder::new_table(
                v,
                "file:///w/t",
                schema,
                PartitionSpec::unpartitioned(),
                SortOrder {
                    order_id: 0,
                    fields: vec![],
                },
                Default::default(),
            )
            .and_then(TableMetadataBuilder::build)
        };
        // in any case (tester P65 F1: `"_ROW_ID"` passed, and DuckDB then read it for
        // the lineage field)
        for name in [
            "_row_id",
            "_last_updated_sequence_number",
            "_ROW_ID",
            "_Row_Id",
            "_Last_Updated_Sequence_Number",
        ] {
            let err = create(FormatVersion::V3, with(name)).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
            assert!(
                err.to_string().contains(&format!(
                    "new format-version 3 table: column '{name}' (id 2) has the name of a row \
                     lineage field"
                )),
                "{err}"
            );
            // v2 keeps it; the upgrade is refused
            let v2 = create(FormatVersion::V2, with(name)).unwrap();
            let mut b = TableMetadataBuilder::from_base(v2.clone(), None);
            b.apply(&TableUpdate::UpgradeFormatVersion { format_version: 3 })
                .unwrap();
            let err = b.build().unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("upgrade to format version 3: column '{name}'")),
                "{err}"
            );
            // a v3 table given such a column
            let mut b =
                TableMetadataBuilder::from_base(table(FormatVersion::V3).build().unwrap(), None);
            b.apply(&TableUpdate::AddSchema { schema: with(name) })
                .unwrap();
            b.apply(&TableUpdate::SetCurrentSchema { schema_id: -1 })
                .unwrap();
            let err = b.build().unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("schema change: column '{name}'")),
                "{err}"
            );
            // a table that has one already takes other commits
            let mut m = v2;
            m.format_version = FormatVersion::V3;
            let mut b = TableMetadataBuilder::from_base(m, None);
            b.apply(&TableUpdate::SetProperties {
                updates: [("k".to_string(), "v".to_string())].into(),
            })
            .unwrap();
            assert_eq!(b.build().unwrap().properties["k"], "v");
        }
        // nested fields of those names, and other names, are fine
        let nested = Schema::new(
            1,
            vec![NestedField::optional(
                1,
                "st",
                Type::Struct(crate::spec::StructType::new(vec![NestedField::optional(
                    2,
                    "_row_id",
                    long(),
                )])),
            )],
        );
        create(FormatVersion::V3, nested).unwrap();
        create(FormatVersion::V3, with("row_id")).unwrap();
    }

    #[test]
    fn refs_must_name_snapshots_and_versions_only_go_up() {
        let mut b = table(FormatVersion::V2);
        assert!(b.apply(&main_at(9)).is_err());
        assert!(b
            .apply(&TableUpdate::UpgradeFormatVersion { format_version: 1 })
            .is_err());
        b.apply(&TableUpdate::UpgradeFormatVersion { format_version: 3 })
            .unwrap();
        assert_eq!(b.metadata().next_row_id, Some(0));
    }

    #[test]
    fn removing_specs_and_schemas_keeps_the_default_and_current_ones() {
        let mut b = table(FormatVersion::V2);
        let wider = Schema::new(
            1,
            vec![
                NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Long)),
                NestedField::optional(2, "x", Type::Primitive(PrimitiveType::Long)),
            ],
        );
        b.apply(&TableUpdate::AddSchema { schema: wider }).unwrap();
        b.apply(&TableUpdate::SetCurrentSchema { schema_id: 1 })
            .unwrap();
        let by_id = PartitionSpec {
            spec_id: 1,
            fields: vec![crate::spec::PartitionField {
                source_id: 1,
                field_id: Some(1000),
                name: "id".into(),
                transform: crate::spec::Transform::Identity,
            }],
        };
        b.apply(&TableUpdate::AddSpec { spec: by_id }).unwrap();
        b.apply(&TableUpdate::SetDefaultSpec { spec_id: 1 })
            .unwrap();
        for (update, expected) in [
            (
                TableUpdate::RemoveSchemas {
                    schema_ids: vec![1],
                },
                "cannot remove the current schema 1",
            ),
            (
                TableUpdate::RemovePartitionSpecs { spec_ids: vec![1] },
                "cannot remove the default partition spec 1",
            ),
        ] {
            let err = b.apply(&update).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
            assert!(err.to_string().contains(expected), "{err}");
        }
        b.apply(&TableUpdate::RemoveSchemas {
            schema_ids: vec![0],
        })
        .unwrap();
        b.apply(&TableUpdate::RemovePartitionSpecs { spec_ids: vec![0] })
            .unwrap();
        let m = b.build().unwrap();
        assert_eq!(
            m.schemas.iter().map(|s| s.schema_id).collect::<Vec<_>>(),
            [1]
        );
        assert_eq!(
            m.partition_specs
                .iter()
                .map(|s| s.spec_id)
                .collect::<Vec<_>>(),
            [1]
        );
        // the REST spec's shapes
        assert_eq!(
            serde_json::to_value(TableUpdate::RemovePartitionSpecs { spec_ids: vec![0] }).unwrap(),
            serde_json::json!({"action": "remove-partition-specs", "spec-ids": [0]})
        );
        assert_eq!(
            serde_json::to_value(TableUpdate::RemoveSchemas {
                schema_ids: vec![0]
            })
            .unwrap(),
            serde_json::json!({"action": "remove-schemas", "schema-ids": [0]})
        );
    }

    /// `set-statistics` replaces the snapshot's file, `remove-statistics` removes it; the
    /// REST spec's shapes (with the deprecated `snapshot-id`, as Java writes it).
    #[test]
    fn statistics_are_set_replaced_and_removed() {
        let file = |snapshot_id: i64, path: &str| crate::spec::StatisticsFile {
            snapshot_id,
            statistics_path: path.into(),
            file_size_in_bytes: 10,
            file_footer_size_in_bytes: 5,
            key_metadata: None,
            blob_metadata: vec![],
        };
        let mut b = table(FormatVersion::V2);
        for f in [file(1, "a.stats"), file(2, "b.stats"), file(1, "c.stats")] {
            b.apply(&TableUpdate::SetStatistics {
                snapshot_id: Some(f.snapshot_id),
                statistics: f,
            })
            .unwrap();
        }
        b.apply(&TableUpdate::RemoveStatistics { snapshot_id: 2 })
            .unwrap();
        let m = b.build().unwrap();
        assert_eq!(m.statistics, [file(1, "c.stats")]);
        assert_eq!(
            serde_json::to_value(TableUpdate::SetStatistics {
                snapshot_id: Some(1),
                statistics: file(1, "c.stats"),
            })
            .unwrap(),
            serde_json::json!({"action": "set-statistics", "snapshot-id": 1, "statistics": {
                "snapshot-id": 1, "statistics-path": "c.stats", "file-size-in-bytes": 10,
                "file-footer-size-in-bytes": 5, "blob-metadata": []}})
        );
        assert_eq!(
            serde_json::to_value(TableUpdate::RemoveStatistics { snapshot_id: 1 }).unwrap(),
            serde_json::json!({"action": "remove-statistics", "snapshot-id": 1})
        );
    }

    /// `set-partition-statistics` replaces the snapshot's file (spec: at most one per
    /// snapshot), `remove-partition-statistics` removes it; the REST spec's shapes.
    #[test]
    fn partition_statistics_are_set_replaced_and_removed() {
        let file = |snapshot_id: i64, path: &str| crate::spec::PartitionStatisticsFile {
            snapshot_id,
            statistics_path: path.into(),
            file_size_in_bytes: 10,
        };
        let mut b = table(FormatVersion::V2);
        for f in [
            file(1, "a.parquet"),
            file(2, "b.parquet"),
            file(1, "c.parquet"),
        ] {
            b.apply(&TableUpdate::SetPartitionStatistics {
                partition_statistics: f,
            })
            .unwrap();
        }
        b.apply(&TableUpdate::RemovePartitionStatistics { snapshot_id: 2 })
            .unwrap();
        let m = b.build().unwrap();
        assert_eq!(m.partition_statistics, [file(1, "c.parquet")]);
        assert_eq!(
            serde_json::to_value(TableUpdate::SetPartitionStatistics {
                partition_statistics: file(1, "c.parquet"),
            })
            .unwrap(),
            serde_json::json!({"action": "set-partition-statistics", "partition-statistics": {
                "snapshot-id": 1, "statistics-path": "c.parquet", "file-size-in-bytes": 10}})
        );
        assert_eq!(
            serde_json::to_value(TableUpdate::RemovePartitionStatistics { snapshot_id: 1 })
                .unwrap(),
            serde_json::json!({"action": "remove-partition-statistics", "snapshot-id": 1})
        );
    }
}
