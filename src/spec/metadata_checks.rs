//! The checks [`TableMetadata::from_json`] makes on metadata it reads, beyond the fields
//! each format version requires: every id it refers to names something, ids are unique,
//! and the counters writers continue from (`last-sequence-number`, `next-row-id`) are not
//! behind what the snapshots already used. Metadata failing one is refused when it is
//! read, as Iceberg Java's `TableMetadata` refuses it, so that no read answers from a
//! snapshot other than the one writes build on, and no write reuses a sequence number or
//! a row id.

use std::collections::HashSet;

use super::partition::Transform;
use super::table_metadata::{FormatVersion, TableMetadata, MAIN_BRANCH};
use crate::error::{Error, Result};

impl TableMetadata {
    /// Check that every id the metadata refers to names something, once, when it is read
    /// (spec: "Table Metadata Fields", "Schemas", "Partition Specs", "Snapshot References"):
    ///
    /// - field ids are unique within each schema (spec: "every field has an id … unique
    ///   within the schema"; Java fails to index such a schema);
    /// - `current-schema-id` names a schema in `schemas`;
    /// - `default-spec-id` names a spec in `partition-specs`;
    /// - `default-sort-order-id` names an order in `sort-orders`, or is 0, the id the spec
    ///   reserves for the unsorted order (v1 writers may omit `sort-orders`);
    /// - `current-snapshot-id` (-1 or absent: none) and every ref's `snapshot-id` name a
    ///   snapshot in `snapshots`;
    /// - every field of the default partition spec (the one writers use) with a transform
    ///   other than `void` has a `source-id` naming a field of *some* schema. A spec may
    ///   keep partitioning by a column a later schema dropped, so an id only older schemas
    ///   hold is fine; older specs are not checked at all, because once the snapshots of
    ///   the schemas holding their column are expired, Java's metadata cleanup may remove
    ///   those schemas while manifests written with the spec stay live (Java binds such
    ///   specs unchecked).
    ///
    /// Errors: [`InvalidData`](crate::ErrorKind::InvalidData) naming the field and the id;
    /// the caller adds the metadata file's name.
    pub(super) fn validate_references(&self) -> Result<()> {
        for schema in &self.schemas {
            if let Some((id, first, second)) = schema.duplicate_field_id() {
                return Err(Error::invalid_data(format!(
                    "schema {}: field id {id} is used by both '{first}' and '{second}' \
                     (field ids must be unique within a schema)",
                    schema.schema_id
                )));
            }
        }
        if self.schema_by_id(self.current_schema_id).is_none() {
            return Err(Error::invalid_data(format!(
                "'current-schema-id' {} names no schema in 'schemas'",
                self.current_schema_id
            )));
        }
        if self.partition_spec_by_id(self.default_spec_id).is_none() {
            return Err(Error::invalid_data(format!(
                "'default-spec-id' {} names no spec in 'partition-specs'",
                self.default_spec_id
            )));
        }
        if self.default_sort_order_id != 0
            && !self
                .sort_orders
                .iter()
                .any(|o| o.order_id == self.default_sort_order_id)
        {
            return Err(Error::invalid_data(format!(
                "'default-sort-order-id' {} names no order in 'sort-orders'",
                self.default_sort_order_id
            )));
        }
        if let Some(id) = self.current_snapshot_id {
            if self.snapshot_by_id(id).is_none() {
                return Err(Error::invalid_data(format!(
                    "'current-snapshot-id' {id} names no snapshot in 'snapshots'"
                )));
            }
        }
        let mut refs: Vec<_> = self.refs.iter().collect();
        refs.sort_by(|a, b| a.0.cmp(b.0));
        for (name, r) in refs {
            if self.snapshot_by_id(r.snapshot_id).is_none() {
                return Err(Error::invalid_data(format!(
                    "'refs': '{name}' has 'snapshot-id' {} that names no snapshot in 'snapshots'",
                    r.snapshot_id
                )));
            }
        }
        if let Some(spec) = self.default_partition_spec() {
            for f in spec
                .fields
                .iter()
                .filter(|f| f.transform != Transform::Void)
            {
                if !self
                    .schemas
                    .iter()
                    .any(|s| s.field_by_id(f.source_id).is_some())
                {
                    return Err(Error::invalid_data(format!(
                        "partition spec {}: field '{}' has 'source-id' {} that names no field \
                         of any schema",
                        spec.spec_id, f.name, f.source_id
                    )));
                }
            }
        }
        Ok(())
    }

    /// Check the metadata's ids and counters against each other (spec: "Table Metadata
    /// Fields", "Snapshots", "Snapshot References", "Row Lineage"; Iceberg Java's
    /// `TableMetadata` and its snapshot and ref validation):
    ///
    /// - `schema-id`s, `spec-id`s, `order-id`s and `snapshot-id`s are each unique;
    /// - every ref's `type` is `branch` or `tag`, and `main` is a branch;
    /// - `current-snapshot-id` and the `main` branch name the same snapshot, or neither is
    ///   set (Java: "Current snapshot ID does not match main branch");
    /// - no snapshot's `sequence-number` is negative or above `last-sequence-number` (Java:
    ///   "Invalid snapshot with sequence number … greater than last sequence number");
    /// - every `bucket[N]` / `truncate[W]` of a partition spec or sort order has N, W above 0;
    /// - v3: `next-row-id` is not negative and not below any snapshot's `first-row-id` +
    ///   `added-rows` (the spec: it is higher than every row id assigned).
    ///
    /// Errors: [`InvalidData`](crate::ErrorKind::InvalidData) naming the fields and values;
    /// the caller adds the metadata file's name.
    pub(super) fn validate_consistency(&self) -> Result<()> {
        unique_ids(
            "'schemas': schema-id",
            self.schemas.iter().map(|s| i64::from(s.schema_id)),
        )?;
        unique_ids(
            "'partition-specs': spec-id",
            self.partition_specs.iter().map(|s| i64::from(s.spec_id)),
        )?;
        unique_ids(
            "'sort-orders': order-id",
            self.sort_orders.iter().map(|o| o.order_id),
        )?;
        unique_ids(
            "'snapshots': snapshot-id",
            self.snapshots.iter().map(|s| s.snapshot_id),
        )?;
        let mut refs: Vec<_> = self.refs.iter().collect();
        refs.sort_by(|a, b| a.0.cmp(b.0));
        for (name, r) in refs {
            if r.ref_type != "branch" && r.ref_type != "tag" {
                return Err(Error::invalid_data(format!(
                    "'refs': '{name}' has type '{}' (must be 'branch' or 'tag')",
                    r.ref_type
                )));
            }
        }
        let main = self.refs.get(MAIN_BRANCH);
        if let Some(main) = main.filter(|r| r.ref_type != "branch") {
            return Err(Error::invalid_data(format!(
                "'refs': '{MAIN_BRANCH}' is a {} (it must be a branch)",
                main.ref_type
            )));
        }
        match (self.current_snapshot_id, main) {
            (Some(current), Some(main)) if current != main.snapshot_id => {
                return Err(Error::invalid_data(format!(
                    "'current-snapshot-id' {current} does not match the '{MAIN_BRANCH}' \
                     branch's 'snapshot-id' {} in 'refs'",
                    main.snapshot_id
                )))
            }
            (None, Some(main)) => {
                return Err(Error::invalid_data(format!(
                    "'current-snapshot-id' is not set, but the '{MAIN_BRANCH}' branch in \
                     'refs' names snapshot {}",
                    main.snapshot_id
                )))
            }
            _ => {}
        }
        for snap in &self.snapshots {
            if snap.sequence_number < 0 || snap.sequence_number > self.last_sequence_number {
                return Err(Error::invalid_data(format!(
                    "snapshot {} has 'sequence-number' {}, outside 0..='last-sequence-number' \
                     {}",
                    snap.snapshot_id, snap.sequence_number, self.last_sequence_number
                )));
            }
        }
        let transforms = self
            .partition_specs
            .iter()
            .flat_map(|s| {
                s.fields
                    .iter()
                    .map(move |f| (format!("partition spec {}", s.spec_id), &f.transform))
            })
            .chain(self.sort_orders.iter().flat_map(|o| {
                o.fields
                    .iter()
                    .map(move |f| (format!("sort order {}", o.order_id), &f.transform))
            }));
        for (owner, transform) in transforms {
            if matches!(transform, Transform::Bucket(_) | Transform::Truncate(_)) {
                transform
                    .check_argument()
                    .map_err(|e| Error::invalid_data(format!("{owner}: {}", e.message())))?;
            }
        }
        if self.format_version >= FormatVersion::V3 {
            let next = self.next_row_id.unwrap_or(0);
            if next < 0 {
                return Err(Error::invalid_data(format!(
                    "'next-row-id' {next} is negative"
                )));
            }
            for snap in &self.snapshots {
                let (Some(first), Some(added)) = (snap.first_row_id, snap.added_rows) else {
                    continue;
                };
                if first.checked_add(added).is_none_or(|end| end > next) {
                    return Err(Error::invalid_data(format!(
                        "snapshot {} assigned row ids from 'first-row-id' {first} for \
                         'added-rows' {added}, beyond 'next-row-id' {next}",
                        snap.snapshot_id
                    )));
                }
            }
        }
        Ok(())
    }
}

/// An error naming `what` and the first id `ids` holds twice.
fn unique_ids(what: &str, ids: impl Iterator<Item = i64>) -> Result<()> {
    let mut seen = HashSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(Error::invalid_data(format!(
                "{what} {id} appears twice (ids must be unique)"
            )));
        }
    }
    Ok(())
}
