//! Table metadata to JSON (spec: "Table Metadata", Appendix C "JSON serialization"),
//! the inverse of [`TableMetadata::from_json`] for format versions 1, 2 and 3.

use serde_json::{json, Map, Value as JsonValue};

use crate::error::{Error, Result};
use crate::spec::{FormatVersion, TableMetadata, Transform};

/// The error of [`table_metadata_to_json`] for a transform icefloe does not know.
fn refuse_unknown_transforms(metadata: &TableMetadata) -> Result<()> {
    let specs = metadata.partition_specs.iter().flat_map(|s| {
        s.fields.iter().map(move |f| {
            (
                format!("partition spec {} field '{}'", s.spec_id, f.name),
                &f.transform,
            )
        })
    });
    let orders = metadata.sort_orders.iter().flat_map(|o| {
        o.fields.iter().map(move |f| {
            (
                format!("sort order {} (source id {})", o.order_id, f.source_id),
                &f.transform,
            )
        })
    });
    for (what, transform) in specs.chain(orders) {
        if let Transform::Unknown(name) = transform {
            return Err(Error::unsupported(format!(
                "{what} has the transform '{name}', which icefloe does not know: icefloe \
                 does not write this table's metadata (reading the table works)"
            )));
        }
    }
    Ok(())
}

fn to_value<T: serde::Serialize>(v: &T, what: &str) -> Result<JsonValue> {
    serde_json::to_value(v)
        .map_err(|e| Error::invalid_data(format!("{what} to JSON")).with_source(e))
}

/// Serialize `metadata` as a metadata JSON document (pretty-printed). A v1 document
/// also carries the v1 fields `schema` (the current schema) and `partition-spec` (the
/// default spec's fields), as Iceberg Java writes them, and no sequence numbers.
///
/// Errors: [`crate::ErrorKind::InvalidData`] when a part cannot be serialized, or a v1
/// table's default spec is missing; [`crate::ErrorKind::Unsupported`] when a partition
/// spec or sort order has a transform icefloe does not know (read as
/// [`Transform::Unknown`](crate::spec::Transform), which keeps its name): icefloe cannot
/// check or apply it, so it writes no metadata holding one; the error names the field and
/// the transform.
pub fn table_metadata_to_json(metadata: &TableMetadata) -> Result<String> {
    refuse_unknown_transforms(metadata)?;
    let v1 = metadata.format_version == FormatVersion::V1;
    let mut m = Map::new();
    m.insert(
        "format-version".into(),
        json!(metadata.format_version as i32),
    );
    m.insert("table-uuid".into(), json!(metadata.table_uuid));
    m.insert("location".into(), json!(metadata.location));
    if !v1 {
        m.insert(
            "last-sequence-number".into(),
            json!(metadata.last_sequence_number),
        );
    }
    m.insert("last-updated-ms".into(), json!(metadata.last_updated_ms));
    m.insert("last-column-id".into(), json!(metadata.last_column_id));
    m.insert(
        "current-schema-id".into(),
        json!(metadata.current_schema_id),
    );
    if v1 {
        m.insert(
            "schema".into(),
            to_value(metadata.current_schema(), "schema")?,
        );
        let spec = metadata.default_partition_spec().ok_or_else(|| {
            Error::invalid_data(format!(
                "table metadata of '{}' has no default partition spec {}",
                metadata.location, metadata.default_spec_id
            ))
        })?;
        m.insert(
            "partition-spec".into(),
            to_value(&spec.fields, "partition-spec")?,
        );
    }
    m.insert("schemas".into(), to_value(&metadata.schemas, "schemas")?);
    m.insert("default-spec-id".into(), json!(metadata.default_spec_id));
    m.insert(
        "partition-specs".into(),
        to_value(&metadata.partition_specs, "partition-specs")?,
    );
    m.insert(
        "last-partition-id".into(),
        json!(metadata.last_partition_id),
    );
    m.insert(
        "properties".into(),
        to_value(&metadata.properties, "properties")?,
    );
    m.insert(
        "current-snapshot-id".into(),
        json!(metadata.current_snapshot_id.unwrap_or(-1)),
    );
    let mut snapshots = to_value(&metadata.snapshots, "snapshots")?;
    if v1 {
        // v1 snapshots have no sequence number
        if let Some(list) = snapshots.as_array_mut() {
            for s in list.iter_mut().filter_map(JsonValue::as_object_mut) {
                s.remove("sequence-number");
            }
        }
    }
    m.insert("snapshots".into(), snapshots);
    m.insert(
        "snapshot-log".into(),
        to_value(&metadata.snapshot_log, "snapshot-log")?,
    );
    m.insert(
        "metadata-log".into(),
        to_value(&metadata.metadata_log, "metadata-log")?,
    );
    m.insert(
        "sort-orders".into(),
        to_value(&metadata.sort_orders, "sort-orders")?,
    );
    m.insert(
        "default-sort-order-id".into(),
        json!(metadata.default_sort_order_id),
    );
    m.insert("refs".into(), to_value(&metadata.refs, "refs")?);
    m.insert(
        "statistics".into(),
        to_value(&metadata.statistics, "statistics")?,
    );
    m.insert(
        "partition-statistics".into(),
        to_value(&metadata.partition_statistics, "partition-statistics")?,
    );
    if let Some(id) = metadata.next_row_id {
        m.insert("next-row-id".into(), json!(id));
    }
    if !metadata.encryption_keys.is_empty() {
        m.insert(
            "encryption-keys".into(),
            to_value(&metadata.encryption_keys, "encryption-keys")?,
        );
    }
    serde_json::to_string_pretty(&JsonValue::Object(m))
        .map_err(|e| Error::invalid_data("table metadata to JSON").with_source(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transform icefloe does not know is read (the table reads), never written back
    /// as `unknown`: writing the metadata is refused naming the field.
    #[test]
    fn unknown_transforms_are_not_written_back() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/sample_table/metadata/v4.metadata.json"
        );
        let mut j: JsonValue =
            serde_json::from_str(&std::fs::read_to_string(path).expect("sample")).expect("json");
        let known = TableMetadata::from_json(&j.to_string()).expect("sample reads");
        assert!(table_metadata_to_json(&known).is_ok());
        j["partition-specs"][0]["fields"][0]["transform"] = "zorder_magic".into();
        let metadata = TableMetadata::from_json(&j.to_string()).expect("reads");
        let err = table_metadata_to_json(&metadata).expect_err("refused");
        assert_eq!(err.kind(), crate::ErrorKind::Unsupported);
        assert!(
            err.to_string().contains("partition spec 0 field")
                && err.to_string().contains("the transform 'zorder_magic'")
                && err.to_string().contains("does not know"),
            "{err}"
        );
    }
}
