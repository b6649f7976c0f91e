//! Avro pieces shared by the manifest and manifest-list writers: optional values (the
//! `["null", T]` unions the spec's Avro schemas use) and optional schema fields.

use apache_avro::types::Value;
use serde_json::json;

/// A present value of an optional (`["null", T]`) field.
pub(super) fn some(v: Value) -> Value {
    Value::Union(1, Box::new(v))
}

/// An absent value of an optional field.
pub(super) fn none() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

/// The schema of an optional field `name` of type `ty` with Iceberg field id `id`.
pub(super) fn optional_field(name: &str, ty: serde_json::Value, id: i32) -> serde_json::Value {
    json!({"name": name, "type": ["null", ty], "default": null, "field-id": id})
}
