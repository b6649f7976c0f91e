//! Table metadata: the root of the metadata tree (spec: "Table Metadata", Appendix C).
//!
//! [`TableMetadata::from_json`] reads format versions 1, 2 and 3 into one shape:
//! v1's single `schema` and `partition-spec` become one-element lists, v1's missing
//! `last-sequence-number` is 0, partition field ids omitted by v1 are assigned 1000, 1001, ….
//! A field required by the file's format version that is missing is an
//! [`ErrorKind::InvalidData`](crate::ErrorKind) error naming the field; unknown fields are
//! ignored. Format versions other than 1–3 are [`ErrorKind::Unsupported`](crate::ErrorKind).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value as JsonValue;

use super::partition::PartitionSpec;
use super::schema::Schema;
use super::snapshot::{
    EncryptionKey, MetadataLogEntry, PartitionStatisticsFile, Snapshot, SnapshotLogEntry,
    SnapshotReference, StatisticsFile,
};
use super::sort_order::SortOrder;
use crate::error::{Error, Result};

/// What `current_schema` answers for metadata built by hand without any schema
/// (`from_json` never produces such metadata).
static EMPTY_SCHEMA: std::sync::LazyLock<Schema> =
    std::sync::LazyLock::new(|| Schema::new(0, vec![]));

/// The name of the branch that holds the current snapshot.
pub const MAIN_BRANCH: &str = "main";

/// The format version of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FormatVersion {
    /// v1: analytic tables.
    V1 = 1,
    /// v2: row-level deletes.
    V2 = 2,
    /// v3: deletion vectors, row lineage, defaults, new types.
    V3 = 3,
}

/// Table metadata, normalised across format versions.
#[derive(Debug, Clone, PartialEq)]
pub struct TableMetadata {
    /// `format-version`.
    pub format_version: FormatVersion,
    /// `table-uuid` (optional in v1).
    pub table_uuid: Option<String>,
    /// `location`: the table's base location.
    pub location: String,
    /// `last-sequence-number` (0 in v1).
    pub last_sequence_number: i64,
    /// `last-updated-ms`.
    pub last_updated_ms: i64,
    /// `last-column-id`.
    pub last_column_id: i32,
    /// `schemas` (v1: the single `schema`).
    pub schemas: Vec<Schema>,
    /// `current-schema-id`.
    pub current_schema_id: i32,
    /// `partition-specs` (v1: the single `partition-spec`).
    pub partition_specs: Vec<PartitionSpec>,
    /// `default-spec-id`.
    pub default_spec_id: i32,
    /// `last-partition-id`.
    pub last_partition_id: i32,
    /// `properties`.
    pub properties: HashMap<String, String>,
    /// `current-snapshot-id` (`None` when the table has no snapshot; -1 is read as none).
    pub current_snapshot_id: Option<i64>,
    /// `snapshots`.
    pub snapshots: Vec<Snapshot>,
    /// `snapshot-log`.
    pub snapshot_log: Vec<SnapshotLogEntry>,
    /// `metadata-log`.
    pub metadata_log: Vec<MetadataLogEntry>,
    /// `sort-orders`.
    pub sort_orders: Vec<SortOrder>,
    /// `default-sort-order-id`.
    pub default_sort_order_id: i64,
    /// `refs` (a `main` branch is implied by `current-snapshot-id` when absent).
    pub refs: HashMap<String, SnapshotReference>,
    /// `statistics`.
    pub statistics: Vec<StatisticsFile>,
    /// `partition-statistics`.
    pub partition_statistics: Vec<PartitionStatisticsFile>,
    /// v3 `next-row-id`.
    pub next_row_id: Option<i64>,
    /// v3 `encryption-keys`.
    pub encryption_keys: Vec<EncryptionKey>,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct RawTableMetadata {
    format_version: Option<JsonValue>,
    table_uuid: Option<String>,
    location: Option<String>,
    last_sequence_number: Option<i64>,
    last_updated_ms: Option<i64>,
    last_column_id: Option<i32>,
    schema: Option<Schema>,
    schemas: Option<Vec<Schema>>,
    current_schema_id: Option<i32>,
    partition_spec: Option<Vec<super::partition::PartitionField>>,
    partition_specs: Option<Vec<PartitionSpec>>,
    default_spec_id: Option<i32>,
    last_partition_id: Option<i32>,
    properties: Option<HashMap<String, String>>,
    current_snapshot_id: Option<i64>,
    snapshots: Option<Vec<Snapshot>>,
    snapshot_log: Option<Vec<SnapshotLogEntry>>,
    metadata_log: Option<Vec<MetadataLogEntry>>,
    sort_orders: Option<Vec<SortOrder>>,
    default_sort_order_id: Option<i64>,
    refs: Option<HashMap<String, SnapshotReference>>,
    statistics: Option<Vec<StatisticsFile>>,
    partition_statistics: Option<Vec<PartitionStatisticsFile>>,
    next_row_id: Option<i64>,
    encryption_keys: Option<Vec<EncryptionKey>>,
}

fn required<T>(v: Option<T>, field: &str, version: FormatVersion) -> Result<T> {
    v.ok_or_else(|| {
        Error::invalid_data(format!(
            "missing required field '{field}' (format version {})",
            version as i32
        ))
    })
}

impl TableMetadata {
    /// Parse table metadata JSON text.
    ///
    /// Errors: [`InvalidData`](crate::ErrorKind::InvalidData) for malformed JSON or a
    /// missing required field (named), [`Unsupported`](crate::ErrorKind::Unsupported) for
    /// an unknown format version. Callers add the file name as context.
    pub fn from_json(text: &str) -> Result<TableMetadata> {
        let raw: RawTableMetadata = serde_json::from_str(text)
            .map_err(|e| Error::invalid_data("malformed table metadata JSON").with_source(e))?;
        let version = match raw.format_version {
            None => {
                return Err(Error::invalid_data(
                    "missing required field 'format-version'",
                ))
            }
            Some(JsonValue::Number(n)) => match n.as_i64() {
                Some(1) => FormatVersion::V1,
                Some(2) => FormatVersion::V2,
                Some(3) => FormatVersion::V3,
                _ => {
                    return Err(Error::unsupported(format!(
                        "Iceberg table format version {n} (supported: 1, 2, 3)"
                    )))
                }
            },
            Some(other) => {
                return Err(Error::invalid_data(format!(
                    "invalid 'format-version': {other}"
                )))
            }
        };
        let v2 = version >= FormatVersion::V2;

        let table_uuid = if v2 {
            Some(required(raw.table_uuid, "table-uuid", version)?)
        } else {
            raw.table_uuid
        };
        let location = required(raw.location, "location", version)?;
        let last_sequence_number = if v2 {
            required(raw.last_sequence_number, "last-sequence-number", version)?
        } else {
            raw.last_sequence_number.unwrap_or(0)
        };
        let last_updated_ms = required(raw.last_updated_ms, "last-updated-ms", version)?;
        let last_column_id = required(raw.last_column_id, "last-column-id", version)?;

        let (schemas, current_schema_id) = match (raw.schemas, raw.schema) {
            (Some(schemas), _) if !schemas.is_empty() => {
                let id = match raw.current_schema_id {
                    Some(id) => id,
                    None if !v2 => schemas.first().map(|s| s.schema_id).unwrap_or(0),
                    None => {
                        return Err(required::<i32>(None, "current-schema-id", version).unwrap_err())
                    }
                };
                (schemas, id)
            }
            (_, Some(schema)) if !v2 => {
                let id = schema.schema_id;
                (vec![schema], raw.current_schema_id.unwrap_or(id))
            }
            _ => return Err(required::<()>(None, "schemas", version).unwrap_err()),
        };

        let (mut partition_specs, default_spec_id) = match (raw.partition_specs, raw.partition_spec)
        {
            (Some(specs), _) if !specs.is_empty() => {
                let id = match raw.default_spec_id {
                    Some(id) => id,
                    None if !v2 => specs.first().map(|s| s.spec_id).unwrap_or(0),
                    None => {
                        return Err(required::<i32>(None, "default-spec-id", version).unwrap_err())
                    }
                };
                (specs, id)
            }
            (_, Some(fields)) if !v2 => (vec![PartitionSpec { spec_id: 0, fields }], 0),
            _ => return Err(required::<()>(None, "partition-specs", version).unwrap_err()),
        };
        for spec in &mut partition_specs {
            for i in 0..spec.fields.len() {
                let id = spec.field_id(i);
                spec.fields[i].field_id = Some(id);
            }
        }
        let last_partition_id = match raw.last_partition_id {
            Some(id) => id,
            None if !v2 => partition_specs
                .iter()
                .flat_map(|s| s.fields.iter().filter_map(|f| f.field_id))
                .max()
                .unwrap_or(999),
            None => return Err(required::<i32>(None, "last-partition-id", version).unwrap_err()),
        };

        let (sort_orders, default_sort_order_id) = if v2 {
            (
                required(raw.sort_orders, "sort-orders", version)?,
                required(raw.default_sort_order_id, "default-sort-order-id", version)?,
            )
        } else {
            (
                raw.sort_orders.unwrap_or_default(),
                raw.default_sort_order_id.unwrap_or(0),
            )
        };

        let current_snapshot_id = raw.current_snapshot_id.filter(|id| *id != -1);
        let snapshots = raw.snapshots.unwrap_or_default();
        if v2 {
            if let Some(s) = snapshots.iter().find(|s| s.manifest_list.is_none()) {
                return Err(Error::invalid_data(format!(
                    "snapshot {}: missing required field 'manifest-list'",
                    s.snapshot_id
                )));
            }
        }
        let mut refs = raw.refs.unwrap_or_default();
        if let Some(id) = current_snapshot_id {
            refs.entry("main".to_string()).or_insert(SnapshotReference {
                snapshot_id: id,
                ref_type: "branch".into(),
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: None,
                max_ref_age_ms: None,
            });
        }
        let next_row_id = if version >= FormatVersion::V3 {
            Some(required(raw.next_row_id, "next-row-id", version)?)
        } else {
            raw.next_row_id
        };

        let metadata = TableMetadata {
            format_version: version,
            table_uuid,
            location,
            last_sequence_number,
            last_updated_ms,
            last_column_id,
            schemas,
            current_schema_id,
            partition_specs,
            default_spec_id,
            last_partition_id,
            properties: raw.properties.unwrap_or_default(),
            current_snapshot_id,
            snapshots,
            snapshot_log: raw.snapshot_log.unwrap_or_default(),
            metadata_log: raw.metadata_log.unwrap_or_default(),
            sort_orders,
            default_sort_order_id,
            refs,
            statistics: raw.statistics.unwrap_or_default(),
            partition_statistics: raw.partition_statistics.unwrap_or_default(),
            next_row_id,
            encryption_keys: raw.encryption_keys.unwrap_or_default(),
        };
        metadata.validate_references()?;
        metadata.validate_consistency()?;
        Ok(metadata)
    }

    /// The current schema.
    pub fn current_schema(&self) -> &Schema {
        self.schema_by_id(self.current_schema_id)
            .or_else(|| self.schemas.last())
            .unwrap_or_else(|| &EMPTY_SCHEMA)
    }

    /// The schemas that type a partition spec's fields
    /// ([`PartitionSpec::partition_type`]) and an equality delete's columns: the current
    /// schema first, then every schema of `schemas`, newest (last added) first. The
    /// current schema appears twice; the first schema holding a field id wins.
    pub fn schemas_newest_first(&self) -> Vec<&Schema> {
        std::iter::once(self.current_schema())
            .chain(self.schemas.iter().rev())
            .collect()
    }

    /// A schema by id.
    pub fn schema_by_id(&self, id: i32) -> Option<&Schema> {
        self.schemas.iter().find(|s| s.schema_id == id)
    }

    /// A partition spec by id.
    pub fn partition_spec_by_id(&self, id: i32) -> Option<&PartitionSpec> {
        self.partition_specs.iter().find(|s| s.spec_id == id)
    }

    /// The default partition spec.
    pub fn default_partition_spec(&self) -> Option<&PartitionSpec> {
        self.partition_spec_by_id(self.default_spec_id)
    }

    /// The current snapshot, `None` for a table with no snapshot.
    pub fn current_snapshot(&self) -> Option<&Snapshot> {
        self.current_snapshot_id
            .and_then(|id| self.snapshot_by_id(id))
    }

    /// The snapshot a branch or tag points at (`main`: the current snapshot), `None`
    /// when the ref does not exist.
    pub fn ref_snapshot_id(&self, name: &str) -> Option<i64> {
        match self.refs.get(name) {
            Some(r) => Some(r.snapshot_id),
            None if name == MAIN_BRANCH => self.current_snapshot_id,
            None => None,
        }
    }

    /// A snapshot by id.
    pub fn snapshot_by_id(&self, id: i64) -> Option<&Snapshot> {
        self.snapshots.iter().find(|s| s.snapshot_id == id)
    }

    /// The schema a snapshot was written with (its `schema-id`), else (a snapshot of a
    /// writer that recorded none) the current schema.
    ///
    /// Errors: [`InvalidData`](crate::ErrorKind::InvalidData) naming the snapshot and the
    /// id when its `schema-id` names no schema in `schemas` (Iceberg Java's
    /// `SnapshotUtil.schemaFor` refuses it too): reading it with another schema would
    /// answer with other columns.
    pub fn schema_for_snapshot(&self, snapshot: &Snapshot) -> Result<&Schema> {
        match snapshot.schema_id {
            None => Ok(self.current_schema()),
            Some(id) => self.schema_by_id(id).ok_or_else(|| {
                Error::invalid_data(format!(
                    "snapshot {} has 'schema-id' {id}, which names no schema in 'schemas'",
                    snapshot.snapshot_id
                ))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2_json() -> JsonValue {
        serde_json::json!({
            "format-version": 2,
            "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location": "s3://bucket/t",
            "last-sequence-number": 1,
            "last-updated-ms": 1602638573590i64,
            "last-column-id": 2,
            "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "x", "required": true, "type": "long"},
                {"id": 2, "name": "y", "required": false, "type": "string"}]}],
            "default-spec-id": 0,
            "partition-specs": [{"spec-id": 0, "fields": [
                {"name": "x_bucket", "transform": "bucket[4]", "source-id": 1, "field-id": 1000}]}],
            "last-partition-id": 1000,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "current-snapshot-id": 7,
            "snapshots": [{"snapshot-id": 7, "sequence-number": 1, "timestamp-ms": 1,
                           "manifest-list": "s3://bucket/t/metadata/snap-7.avro",
                           "summary": {"operation": "append"}, "schema-id": 0}],
            "some-future-field": {"tolerated": true}
        })
    }

    #[test]
    fn reads_v2_and_implies_main() {
        let m = TableMetadata::from_json(&v2_json().to_string()).unwrap();
        assert_eq!(m.format_version, FormatVersion::V2);
        assert_eq!(m.current_snapshot().map(|s| s.snapshot_id), Some(7));
        assert_eq!(m.refs.get("main").map(|r| r.snapshot_id), Some(7));
        assert_eq!(m.current_schema().columns().len(), 2);
    }

    #[test]
    fn missing_required_field_is_named() {
        for field in [
            "location",
            "last-sequence-number",
            "table-uuid",
            "sort-orders",
            "last-column-id",
        ] {
            let mut j = v2_json();
            j.as_object_mut().unwrap().remove(field);
            let err = TableMetadata::from_json(&j.to_string()).unwrap_err();
            assert!(
                err.to_string().contains(&format!("'{field}'")),
                "{field}: {err}"
            );
        }
    }

    #[test]
    fn unknown_format_version_is_unsupported() {
        let mut j = v2_json();
        j["format-version"] = 4.into();
        let err = TableMetadata::from_json(&j.to_string()).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Unsupported);
        assert!(err.to_string().contains("format version 4"), "{err}");
    }

    #[test]
    fn v3_requires_next_row_id() {
        let mut j = v2_json();
        j["format-version"] = 3.into();
        let err = TableMetadata::from_json(&j.to_string()).unwrap_err();
        assert!(err.to_string().contains("'next-row-id'"), "{err}");
        j["next-row-id"] = 10.into();
        assert_eq!(
            TableMetadata::from_json(&j.to_string())
                .unwrap()
                .next_row_id,
            Some(10)
        );
    }

    #[test]
    fn reads_v1_single_schema_and_spec() {
        let j = serde_json::json!({
            "format-version": 1, "location": "/t", "last-updated-ms": 1, "last-column-id": 1,
            "schema": {"type": "struct", "fields": [{"id": 1, "name": "d", "required": false, "type": "date"}]},
            "partition-spec": [{"name": "d_year", "transform": "year", "source-id": 1}],
            "current-snapshot-id": -1
        });
        let m = TableMetadata::from_json(&j.to_string()).unwrap();
        assert_eq!(m.partition_specs[0].fields[0].field_id, Some(1000));
        assert_eq!(m.last_partition_id, 1000);
        assert!(m.current_snapshot().is_none());
        assert!(m.refs.is_empty());
    }

    /// `j` is rejected as invalid data with a message containing every one of `needles`.
    fn rejected(j: &JsonValue, needles: &[&str]) {
        let err = TableMetadata::from_json(&j.to_string()).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidData, "{err}");
        for n in needles {
            assert!(err.to_string().contains(n), "'{n}' not in: {err}");
        }
    }

    #[test]
    fn duplicate_field_ids_are_rejected_top_level_and_nested() {
        let mut j = v2_json();
        j["schemas"][0]["fields"][1]["id"] = 1.into();
        rejected(&j, &["schema 0", "field id 1", "'x'", "'y'"]);

        let mut j = v2_json();
        j["schemas"][0]["fields"][1]["type"] = serde_json::json!({"type": "struct", "fields": [
            {"id": 3, "name": "a", "required": false, "type": "int"},
            {"id": 3, "name": "b", "required": false, "type": "int"}]});
        rejected(&j, &["field id 3", "'y.a'", "'y.b'"]);

        let mut j = v2_json();
        j["schemas"][0]["fields"][1]["type"] = serde_json::json!({"type": "list",
            "element-id": 2, "element-required": false, "element": "int"});
        rejected(&j, &["field id 2", "'y'", "'y.element'"]);
    }

    #[test]
    fn ids_naming_nothing_are_rejected_naming_the_field() {
        let mut j = v2_json();
        j["current-schema-id"] = 5.into();
        rejected(&j, &["'current-schema-id' 5"]);

        let mut j = v2_json();
        j["default-spec-id"] = 3.into();
        rejected(&j, &["'default-spec-id' 3"]);

        let mut j = v2_json();
        j["default-sort-order-id"] = 4.into();
        rejected(&j, &["'default-sort-order-id' 4"]);

        let mut j = v2_json();
        j["current-snapshot-id"] = 8.into();
        rejected(&j, &["'current-snapshot-id' 8"]);

        let mut j = v2_json();
        j["refs"] = serde_json::json!({"main": {"snapshot-id": 7, "type": "branch"},
                                       "audit": {"snapshot-id": 99, "type": "tag"}});
        rejected(&j, &["'refs'", "'audit'", "'snapshot-id' 99"]);

        let mut j = v2_json();
        j["partition-specs"][0]["fields"][0]["source-id"] = 42.into();
        rejected(&j, &["partition spec 0", "'x_bucket'", "'source-id' 42"]);
    }

    #[test]
    fn legal_references_still_open() {
        // a spec partitioning by a column only an older schema has (dropped since)
        let mut j = v2_json();
        j["schemas"] = serde_json::json!([
            {"type": "struct", "schema-id": 0, "fields": [
                {"id": 1, "name": "x", "required": true, "type": "long"},
                {"id": 2, "name": "y", "required": false, "type": "string"}]},
            {"type": "struct", "schema-id": 1, "fields": [
                {"id": 2, "name": "y", "required": false, "type": "string"}]}]);
        j["current-schema-id"] = 1.into();
        j["partition-specs"] = serde_json::json!([
            {"spec-id": 0, "fields": [
                {"name": "x_bucket", "transform": "bucket[4]", "source-id": 1, "field-id": 1000}]},
            {"spec-id": 1, "fields": []}]);
        j["default-spec-id"] = 1.into();
        let m = TableMetadata::from_json(&j.to_string()).unwrap();
        assert_eq!(m.partition_specs[0].fields[0].source_id, 1);
        // an older spec may even name a column no remaining schema holds (its schemas
        // expired), and a void field of the default spec too
        j["schemas"].as_array_mut().unwrap().remove(0);
        j["partition-specs"][1]["fields"] = serde_json::json!([
            {"name": "gone", "transform": "void", "source-id": 9, "field-id": 1001}]);
        // the unsorted order's reserved id 0 need not be listed
        j["sort-orders"] = serde_json::json!([{"order-id": 1, "fields": []}]);
        j["default-sort-order-id"] = 0.into();
        // no current snapshot, written as -1; a tag on the one snapshot
        j["current-snapshot-id"] = (-1).into();
        j["refs"] = serde_json::json!({"t": {"snapshot-id": 7, "type": "tag"}});
        let m = TableMetadata::from_json(&j.to_string()).unwrap();
        assert_eq!(m.current_snapshot_id, None);
        assert_eq!(m.ref_snapshot_id("t"), Some(7));
        assert_eq!(m.partition_specs.len(), 2);
    }

    #[test]
    fn truncated_json_is_invalid_data() {
        let text = v2_json().to_string();
        let err = TableMetadata::from_json(&text[..text.len() / 2]).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
    }
}
