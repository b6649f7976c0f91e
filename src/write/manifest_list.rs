//! Writing v1, v2 and v3 manifest lists (spec: "Manifest Lists", the `manifest_file`
//! struct with field ids 500–519, and v3's `first_row_id`, 520; v1's has no `content` and
//! no sequence numbers, and its file and row counts are optional).

use apache_avro::types::Value;
use apache_avro::{Codec, Schema as AvroSchema, Writer};
use serde_json::json;

use super::avro_values::{none, optional_field, some};
use crate::error::{Error, Result};
use crate::spec::{FieldSummary, ManifestContent, ManifestFile};

fn manifest_file_schema(v3: bool) -> serde_json::Value {
    let mut schema = json!({
        "type": "record",
        "name": "manifest_file",
        "fields": [
            {"name": "manifest_path", "type": "string", "field-id": 500},
            {"name": "manifest_length", "type": "long", "field-id": 501},
            {"name": "partition_spec_id", "type": "int", "field-id": 502},
            {"name": "content", "type": "int", "field-id": 517},
            {"name": "sequence_number", "type": "long", "field-id": 515},
            {"name": "min_sequence_number", "type": "long", "field-id": 516},
            {"name": "added_snapshot_id", "type": "long", "field-id": 503},
            {"name": "added_files_count", "type": "int", "field-id": 504},
            {"name": "existing_files_count", "type": "int", "field-id": 505},
            {"name": "deleted_files_count", "type": "int", "field-id": 506},
            {"name": "added_rows_count", "type": "long", "field-id": 512},
            {"name": "existing_rows_count", "type": "long", "field-id": 513},
            {"name": "deleted_rows_count", "type": "long", "field-id": 514},
            optional_field("partitions", json!({
                "type": "array",
                "element-id": 508,
                "items": {
                    "type": "record",
                    "name": "r508",
                    "fields": [
                        {"name": "contains_null", "type": "boolean", "field-id": 509},
                        optional_field("contains_nan", json!("boolean"), 518),
                        optional_field("lower_bound", json!("bytes"), 510),
                        optional_field("upper_bound", json!("bytes"), 511),
                    ]
                }
            }), 507),
            optional_field("key_metadata", json!("bytes"), 519),
        ]
    });
    if v3 {
        if let Some(fields) = schema["fields"].as_array_mut() {
            fields.push(optional_field("first_row_id", json!("long"), 520));
        }
    }
    schema
}

fn opt_bytes(b: &Option<Vec<u8>>) -> Value {
    b.as_ref()
        .map_or_else(none, |b| some(Value::Bytes(b.clone())))
}

fn summary_value(s: &FieldSummary) -> Value {
    Value::Record(vec![
        ("contains_null".into(), Value::Boolean(s.contains_null)),
        (
            "contains_nan".into(),
            s.contains_nan
                .map_or_else(none, |b| some(Value::Boolean(b))),
        ),
        ("lower_bound".into(), opt_bytes(&s.lower_bound)),
        ("upper_bound".into(), opt_bytes(&s.upper_bound)),
    ])
}

fn manifest_file_value(m: &ManifestFile, v3: bool) -> Value {
    let mut fields: Vec<(String, Value)> = vec![
        (
            "manifest_path".into(),
            Value::String(m.manifest_path.clone()),
        ),
        ("manifest_length".into(), Value::Long(m.manifest_length)),
        ("partition_spec_id".into(), Value::Int(m.partition_spec_id)),
        (
            "content".into(),
            Value::Int(match m.content {
                ManifestContent::Data => 0,
                ManifestContent::Deletes => 1,
            }),
        ),
        ("sequence_number".into(), Value::Long(m.sequence_number)),
        (
            "min_sequence_number".into(),
            Value::Long(m.min_sequence_number),
        ),
        ("added_snapshot_id".into(), Value::Long(m.added_snapshot_id)),
        (
            "added_files_count".into(),
            Value::Int(m.added_files_count.unwrap_or(0)),
        ),
        (
            "existing_files_count".into(),
            Value::Int(m.existing_files_count.unwrap_or(0)),
        ),
        (
            "deleted_files_count".into(),
            Value::Int(m.deleted_files_count.unwrap_or(0)),
        ),
        (
            "added_rows_count".into(),
            Value::Long(m.added_rows_count.unwrap_or(0)),
        ),
        (
            "existing_rows_count".into(),
            Value::Long(m.existing_rows_count.unwrap_or(0)),
        ),
        (
            "deleted_rows_count".into(),
            Value::Long(m.deleted_rows_count.unwrap_or(0)),
        ),
        (
            "partitions".into(),
            m.partitions.as_ref().map_or_else(none, |p| {
                some(Value::Array(p.iter().map(summary_value).collect()))
            }),
        ),
        ("key_metadata".into(), opt_bytes(&m.key_metadata)),
    ];
    if v3 {
        fields.push((
            "first_row_id".into(),
            m.first_row_id.map_or_else(none, |v| some(Value::Long(v))),
        ));
    }
    Value::Record(fields)
}

/// Encode a v2 manifest list for snapshot `snapshot_id` (sequence number
/// `sequence_number`, parent `parent_snapshot_id`) holding `manifests` in order.
///
/// Errors: an Avro encoding failure ([`crate::ErrorKind::InvalidData`]).
pub fn write_manifest_list(
    manifests: &[ManifestFile],
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
) -> Result<Vec<u8>> {
    write_manifest_list_for(
        manifests,
        snapshot_id,
        parent_snapshot_id,
        sequence_number,
        None,
    )
}

/// As [`write_manifest_list`]; with `first_row_id` (the snapshot's, v3) the list is
/// written in the v3 layout: each manifest's `first_row_id` (field 520, set by the
/// caller for data manifests; spec: "Row Lineage") and the `first-row-id` key.
///
/// Errors: an Avro encoding failure ([`crate::ErrorKind::InvalidData`]).
pub fn write_manifest_list_for(
    manifests: &[ManifestFile],
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    first_row_id: Option<i64>,
) -> Result<Vec<u8>> {
    let v3 = first_row_id.is_some();
    let mut meta = vec![
        ("snapshot-id", snapshot_id.to_string()),
        ("sequence-number", sequence_number.to_string()),
        ("format-version", if v3 { "3" } else { "2" }.to_string()),
    ];
    if let Some(p) = parent_snapshot_id {
        meta.push(("parent-snapshot-id", p.to_string()));
    }
    if let Some(id) = first_row_id {
        meta.push(("first-row-id", id.to_string()));
    }
    let values = manifests.iter().map(|m| manifest_file_value(m, v3));
    write_avro_list(&manifest_file_schema(v3), meta, values)
}

/// An Avro manifest list file: `schema`, the key-value metadata `meta`, one record per
/// value, deflate-compressed.
fn write_avro_list(
    schema: &serde_json::Value,
    meta: Vec<(&str, String)>,
    values: impl Iterator<Item = Value>,
) -> Result<Vec<u8>> {
    let avro_err =
        |e: apache_avro::Error| Error::invalid_data("writing manifest list").with_source(e);
    let schema = AvroSchema::parse(schema).map_err(avro_err)?;
    let mut writer = Writer::with_codec(&schema, Vec::new(), Codec::Deflate(Default::default()));
    for (k, v) in meta {
        writer
            .add_user_metadata(k.to_string(), v)
            .map_err(avro_err)?;
    }
    for value in values {
        writer.append_value_ref(&value).map_err(avro_err)?;
    }
    writer.into_inner().map_err(avro_err)
}

/// The v1 `manifest_file` schema (as Iceberg Java's `V1Metadata.MANIFEST_LIST_SCHEMA`):
/// no `content`, `sequence_number`, `min_sequence_number`; the counts optional.
fn manifest_file_schema_v1() -> serde_json::Value {
    let v2 = manifest_file_schema(false);
    let fields: Vec<serde_json::Value> = v2["fields"]
        .as_array()
        .map(|fields| {
            fields
                .iter()
                .filter(|f| {
                    !matches!(
                        f["name"].as_str(),
                        Some("content" | "sequence_number" | "min_sequence_number")
                    )
                })
                .map(|f| match f["name"].as_str() {
                    Some(
                        name @ ("added_files_count"
                        | "existing_files_count"
                        | "deleted_files_count"
                        | "added_rows_count"
                        | "existing_rows_count"
                        | "deleted_rows_count"),
                    ) => optional_field(
                        name,
                        f["type"].clone(),
                        f["field-id"].as_i64().unwrap_or(0) as i32,
                    ),
                    _ => f.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"type": "record", "name": "manifest_file", "fields": fields})
}

fn manifest_file_value_v1(m: &ManifestFile) -> Value {
    let count_i = |v: Option<i32>| v.map_or_else(none, |v| some(Value::Int(v)));
    let count_l = |v: Option<i64>| v.map_or_else(none, |v| some(Value::Long(v)));
    Value::Record(vec![
        (
            "manifest_path".into(),
            Value::String(m.manifest_path.clone()),
        ),
        ("manifest_length".into(), Value::Long(m.manifest_length)),
        ("partition_spec_id".into(), Value::Int(m.partition_spec_id)),
        ("added_snapshot_id".into(), Value::Long(m.added_snapshot_id)),
        ("added_files_count".into(), count_i(m.added_files_count)),
        (
            "existing_files_count".into(),
            count_i(m.existing_files_count),
        ),
        ("deleted_files_count".into(), count_i(m.deleted_files_count)),
        ("added_rows_count".into(), count_l(m.added_rows_count)),
        ("existing_rows_count".into(), count_l(m.existing_rows_count)),
        ("deleted_rows_count".into(), count_l(m.deleted_rows_count)),
        (
            "partitions".into(),
            m.partitions.as_ref().map_or_else(none, |p| {
                some(Value::Array(p.iter().map(summary_value).collect()))
            }),
        ),
        ("key_metadata".into(), opt_bytes(&m.key_metadata)),
    ])
}

/// Encode a v1 manifest list for snapshot `snapshot_id` (parent `parent_snapshot_id`)
/// holding `manifests` in order: the v1 layout and key-value metadata (`snapshot-id`,
/// `parent-snapshot-id`, `format-version` 1; no sequence number). Every manifest must
/// be a data manifest (v1 has no delete files).
///
/// Errors: a delete manifest ([`crate::ErrorKind::Unsupported`]); an Avro encoding
/// failure ([`crate::ErrorKind::InvalidData`]).
pub fn write_manifest_list_v1(
    manifests: &[ManifestFile],
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
) -> Result<Vec<u8>> {
    if let Some(m) = manifests
        .iter()
        .find(|m| m.content != ManifestContent::Data)
    {
        return Err(Error::unsupported(format!(
            "delete manifest '{}' in a format-version 1 table (v1 has no delete files)",
            m.manifest_path
        )));
    }
    let mut meta = vec![
        ("snapshot-id", snapshot_id.to_string()),
        ("format-version", "1".to_string()),
    ];
    if let Some(p) = parent_snapshot_id {
        meta.push(("parent-snapshot-id", p.to_string()));
    }
    let values = manifests.iter().map(manifest_file_value_v1);
    write_avro_list(&manifest_file_schema_v1(), meta, values)
}
