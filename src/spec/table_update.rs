//! What a commit asks of the catalog: [`TableRequirement`]s that must hold on the
//! table's current metadata, and [`TableUpdate`]s applied to it.
//!
//! The names and JSON shapes are the Iceberg REST catalog's (`open-api/
//! rest-catalog-open-api.yaml`: `TableRequirement`, `TableUpdate`, `CommitTableRequest`),
//! so every catalog — SQLite, filesystem, REST — commits the same values. Requirements are
//! checked by [`TableRequirement::check`] against the metadata the catalog holds at swap
//! time; a failed requirement is an [`ErrorKind::CommitConflict`] error, which a
//! transaction answers by refreshing, re-validating and retrying (spec: "Commit Conflict
//! Resolution and Retry"). Updates are applied by
//! [`TableMetadataBuilder`](super::TableMetadataBuilder).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::partition::PartitionSpec;
use super::schema::Schema;
use super::snapshot::{PartitionStatisticsFile, Snapshot, SnapshotReference, StatisticsFile};
use super::sort_order::SortOrder;
use super::table_metadata::TableMetadata;
use crate::error::{Error, ErrorKind, Result};

/// A condition the table must meet for a commit to apply (REST `TableRequirement`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TableRequirement {
    /// The table must not exist yet (`assert-create`).
    AssertCreate,
    /// The table's `table-uuid` must be `uuid` (`assert-table-uuid`).
    AssertTableUuid {
        /// The expected uuid.
        uuid: String,
    },
    /// The ref must point at `snapshot_id`, or not exist when it is `None`
    /// (`assert-ref-snapshot-id`).
    AssertRefSnapshotId {
        /// The branch or tag name.
        #[serde(rename = "ref")]
        reference: String,
        /// The expected snapshot id (`null`: the ref must not exist).
        #[serde(rename = "snapshot-id")]
        snapshot_id: Option<i64>,
    },
    /// `last-column-id` must be this (`assert-last-assigned-field-id`).
    AssertLastAssignedFieldId {
        /// The expected last assigned field id.
        #[serde(rename = "last-assigned-field-id")]
        last_assigned_field_id: i32,
    },
    /// `current-schema-id` must be this (`assert-current-schema-id`).
    AssertCurrentSchemaId {
        /// The expected schema id.
        #[serde(rename = "current-schema-id")]
        current_schema_id: i32,
    },
    /// `last-partition-id` must be this (`assert-last-assigned-partition-id`).
    AssertLastAssignedPartitionId {
        /// The expected last assigned partition field id.
        #[serde(rename = "last-assigned-partition-id")]
        last_assigned_partition_id: i32,
    },
    /// `default-spec-id` must be this (`assert-default-spec-id`).
    AssertDefaultSpecId {
        /// The expected default spec id.
        #[serde(rename = "default-spec-id")]
        default_spec_id: i32,
    },
    /// `default-sort-order-id` must be this (`assert-default-sort-order-id`).
    AssertDefaultSortOrderId {
        /// The expected default sort order id.
        #[serde(rename = "default-sort-order-id")]
        default_sort_order_id: i64,
    },
}

fn conflict(message: String) -> Error {
    Error::new(ErrorKind::CommitConflict, message)
}

impl TableRequirement {
    /// Check the requirement against the table's current metadata (`None`: the table
    /// does not exist).
    ///
    /// Errors: [`ErrorKind::CommitConflict`] naming the requirement and what was found;
    /// [`ErrorKind::NotFound`] when a requirement other than `assert-create` meets no
    /// table.
    pub fn check(&self, current: Option<&TableMetadata>) -> Result<()> {
        let Some(m) = current else {
            return match self {
                TableRequirement::AssertCreate => Ok(()),
                other => Err(Error::not_found(format!(
                    "table for requirement {other:?}: it does not exist"
                ))),
            };
        };
        match self {
            TableRequirement::AssertCreate => {
                Err(Error::new(ErrorKind::AlreadyExists, "table already exists"))
            }
            TableRequirement::AssertTableUuid { uuid } => {
                if m.table_uuid.as_deref() == Some(uuid.as_str()) {
                    Ok(())
                } else {
                    Err(conflict(format!(
                        "table uuid is {:?}, the commit expected {uuid} (the table was replaced)",
                        m.table_uuid
                    )))
                }
            }
            TableRequirement::AssertRefSnapshotId {
                reference,
                snapshot_id,
            } => {
                let found = m.ref_snapshot_id(reference);
                if found == *snapshot_id {
                    Ok(())
                } else {
                    Err(conflict(format!(
                        "branch or tag '{reference}' is at snapshot {}, the commit expected {} \
                         (another commit landed first)",
                        found.map_or("none".to_string(), |s| s.to_string()),
                        snapshot_id.map_or("none".to_string(), |s| s.to_string()),
                    )))
                }
            }
            TableRequirement::AssertLastAssignedFieldId {
                last_assigned_field_id,
            } => expect_eq("last-column-id", m.last_column_id, *last_assigned_field_id),
            TableRequirement::AssertCurrentSchemaId { current_schema_id } => {
                expect_eq("current-schema-id", m.current_schema_id, *current_schema_id)
            }
            TableRequirement::AssertLastAssignedPartitionId {
                last_assigned_partition_id,
            } => expect_eq(
                "last-partition-id",
                m.last_partition_id,
                *last_assigned_partition_id,
            ),
            TableRequirement::AssertDefaultSpecId { default_spec_id } => {
                expect_eq("default-spec-id", m.default_spec_id, *default_spec_id)
            }
            TableRequirement::AssertDefaultSortOrderId {
                default_sort_order_id,
            } => expect_eq(
                "default-sort-order-id",
                m.default_sort_order_id,
                *default_sort_order_id,
            ),
        }
    }
}

fn expect_eq<T: PartialEq + std::fmt::Display>(field: &str, found: T, expected: T) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(conflict(format!(
            "{field} is {found}, the commit expected {expected} (the table changed)"
        )))
    }
}

/// A change to table metadata (REST `TableUpdate`), applied in order by
/// [`TableMetadataBuilder`](super::TableMetadataBuilder).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum TableUpdate {
    /// `assign-uuid`.
    AssignUuid {
        /// The new uuid.
        uuid: String,
    },
    /// `upgrade-format-version`.
    UpgradeFormatVersion {
        /// The new format version (1, 2 or 3).
        #[serde(rename = "format-version")]
        format_version: i32,
    },
    /// `add-schema`: a new schema (its field ids already assigned).
    AddSchema {
        /// The schema.
        schema: Schema,
    },
    /// `set-current-schema`; `-1` means the schema added last in this commit.
    SetCurrentSchema {
        /// The schema id.
        #[serde(rename = "schema-id")]
        schema_id: i32,
    },
    /// `add-spec`.
    AddSpec {
        /// The partition spec (field ids assigned).
        spec: PartitionSpec,
    },
    /// `set-default-spec`; `-1` means the spec added last in this commit.
    SetDefaultSpec {
        /// The spec id.
        #[serde(rename = "spec-id")]
        spec_id: i32,
    },
    /// `add-sort-order`.
    AddSortOrder {
        /// The sort order.
        #[serde(rename = "sort-order")]
        sort_order: SortOrder,
    },
    /// `set-default-sort-order`; `-1` means the order added last in this commit.
    SetDefaultSortOrder {
        /// The sort order id.
        #[serde(rename = "sort-order-id")]
        sort_order_id: i64,
    },
    /// `add-snapshot`.
    AddSnapshot {
        /// The snapshot.
        snapshot: Snapshot,
    },
    /// `set-snapshot-ref`: point a branch or tag at a snapshot.
    SetSnapshotRef {
        /// The ref name (`main` for the current snapshot).
        #[serde(rename = "ref-name")]
        ref_name: String,
        /// The ref.
        #[serde(flatten)]
        reference: SnapshotReference,
    },
    /// `remove-snapshots`.
    RemoveSnapshots {
        /// The snapshot ids.
        #[serde(rename = "snapshot-ids")]
        snapshot_ids: Vec<i64>,
    },
    /// `remove-snapshot-ref`.
    RemoveSnapshotRef {
        /// The ref name.
        #[serde(rename = "ref-name")]
        ref_name: String,
    },
    /// `remove-partition-specs`: partition specs no kept snapshot's manifests use (never
    /// the default spec).
    RemovePartitionSpecs {
        /// The spec ids.
        #[serde(rename = "spec-ids")]
        spec_ids: Vec<i32>,
    },
    /// `remove-schemas`: schemas no kept snapshot uses (never the current schema).
    RemoveSchemas {
        /// The schema ids.
        #[serde(rename = "schema-ids")]
        schema_ids: Vec<i32>,
    },
    /// `set-statistics`: the statistics file of the snapshot `statistics.snapshot_id`,
    /// replacing the one it had (spec: "Table Statistics").
    SetStatistics {
        /// The snapshot (the REST spec's deprecated copy of `statistics.snapshot_id`,
        /// written as Iceberg Java writes it).
        #[serde(
            rename = "snapshot-id",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        snapshot_id: Option<i64>,
        /// The statistics file.
        statistics: StatisticsFile,
    },
    /// `remove-statistics`: the statistics file of a snapshot.
    RemoveStatistics {
        /// The snapshot.
        #[serde(rename = "snapshot-id")]
        snapshot_id: i64,
    },
    /// `set-partition-statistics`: the partition statistics file of the snapshot
    /// `partition_statistics.snapshot_id`, replacing the one it had (spec: "Partition
    /// Statistics": at most one per snapshot).
    SetPartitionStatistics {
        /// The partition statistics file.
        #[serde(rename = "partition-statistics")]
        partition_statistics: PartitionStatisticsFile,
    },
    /// `remove-partition-statistics`: the partition statistics file of a snapshot.
    RemovePartitionStatistics {
        /// The snapshot.
        #[serde(rename = "snapshot-id")]
        snapshot_id: i64,
    },
    /// `set-location`.
    SetLocation {
        /// The new table location.
        location: String,
    },
    /// `set-properties`.
    SetProperties {
        /// Properties to set.
        updates: HashMap<String, String>,
    },
    /// `remove-properties`.
    RemoveProperties {
        /// Property keys to remove.
        removals: Vec<String>,
    },
}

/// The requirements and updates of one commit (REST `CommitTableRequest` without the
/// identifier).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableCommit {
    /// Checked against the current metadata before the updates apply.
    pub requirements: Vec<TableRequirement>,
    /// Applied in order.
    pub updates: Vec<TableUpdate>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shapes_are_the_rest_specs() {
        let r = TableRequirement::AssertRefSnapshotId {
            reference: "main".into(),
            snapshot_id: Some(7),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 7})
        );
        let u = TableUpdate::SetSnapshotRef {
            ref_name: "main".into(),
            reference: SnapshotReference {
                snapshot_id: 7,
                ref_type: "branch".into(),
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: None,
                max_ref_age_ms: None,
            },
        };
        assert_eq!(
            serde_json::to_value(&u).unwrap(),
            serde_json::json!({"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 7, "type": "branch"})
        );
        let back: TableUpdate = serde_json::from_value(serde_json::to_value(&u).unwrap()).unwrap();
        assert_eq!(back, u);
    }
}
