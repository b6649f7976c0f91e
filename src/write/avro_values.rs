//! Avro pieces shared by the manifest and manifest-list writers: optional values (the
//! `["null", T]` unions the spec's Avro schemas use), optional schema fields, and the
//! header schema of a written file stated as the spec's JSON (with the attributes
//! apache-avro drops).

use apache_avro::types::Value;
use serde_json::json;

use crate::error::{Error, Result};

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

/// `file` (a whole Avro object container file apache-avro wrote) with the `avro.schema`
/// of its header replaced by `schema`, the JSON the records were written for (spec:
/// "Avro" type mapping): apache-avro's schema serialization drops attributes of logical
/// types it models (`adjust-to-utc` of `timestamp-micros`/`timestamp-nanos`, which tells
/// `timestamptz` from `timestamp`, as Java's `TypeToSchema` writes it) and writes a
/// `fixed` decimal's `logicalType`, `precision` and `scale` twice. The records' encoding
/// is the same under both schemas.
///
/// Errors ([`InvalidData`](crate::ErrorKind::InvalidData)): a header that does not
/// parse, named `what`.
pub(super) fn with_header_schema(
    file: Vec<u8>,
    schema: &serde_json::Value,
    what: &str,
) -> Result<Vec<u8>> {
    let bad = |why: String| Error::invalid_data(format!("rewriting the header of {what}: {why}"));
    let header =
        arrow_avro::reader::read_header_info(file.as_slice()).map_err(|e| bad(e.to_string()))?;
    let header_len = usize::try_from(header.header_len())
        .ok()
        .filter(|l| *l <= file.len())
        .ok_or_else(|| bad("header longer than the file".to_string()))?;
    crate::spec::avro_header::with_schema(&file, header_len, &schema.to_string()).map_err(bad)
}
