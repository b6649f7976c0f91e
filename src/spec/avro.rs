//! Helpers of the test oracle `legacy_avro_decoder`: Iceberg's Avro records decoded to
//! generic `apache_avro::types::Value`s and converted into domain types by name. The
//! library reads manifests column-wise (`avro_columns`); this is compiled for tests only.

use std::collections::HashMap;

use apache_avro::types::Value;

use super::types::PrimitiveType;
use super::values::{decimal_from_be_bytes, Literal};
use crate::error::{Error, Result};

/// A decoded Avro record: field name → value, unions unwrapped.
pub(crate) struct Record {
    fields: HashMap<String, Value>,
    /// Field names in schema order (for partition tuples).
    order: Vec<String>,
}

fn unwrap_union(v: Value) -> Value {
    match v {
        Value::Union(_, inner) => unwrap_union(*inner),
        other => other,
    }
}

impl Record {
    /// Wrap a `Value::Record`; `what` names the record in errors.
    pub(crate) fn from_value(v: Value, what: &str) -> Result<Record> {
        match unwrap_union(v) {
            Value::Record(fields) => {
                let order = fields.iter().map(|(n, _)| n.clone()).collect();
                let fields = fields
                    .into_iter()
                    .map(|(n, v)| (n, unwrap_union(v)))
                    .collect();
                Ok(Record { fields, order })
            }
            other => Err(Error::invalid_data(format!(
                "{what}: expected an Avro record, found {other:?}"
            ))),
        }
    }

    /// The value of a field, `None` when absent or null.
    pub(crate) fn opt(&self, name: &str) -> Option<&Value> {
        match self.fields.get(name) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    /// Remove and return a field's value (`None` when absent or null).
    pub(crate) fn take(&mut self, name: &str) -> Option<Value> {
        match self.fields.remove(name) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    /// Field values in schema order.
    pub(crate) fn into_ordered(mut self) -> Vec<Value> {
        self.order
            .iter()
            .map(|n| self.fields.remove(n).unwrap_or(Value::Null))
            .collect()
    }

    fn missing(name: &str) -> Error {
        Error::invalid_data(format!("missing required field '{name}'"))
    }

    /// A required long (int accepted).
    pub(crate) fn long(&self, name: &str) -> Result<i64> {
        self.opt_long(name)?.ok_or_else(|| Self::missing(name))
    }

    /// An optional long (int accepted).
    pub(crate) fn opt_long(&self, name: &str) -> Result<Option<i64>> {
        match self.opt(name) {
            None => Ok(None),
            Some(Value::Long(v)) => Ok(Some(*v)),
            Some(Value::Int(v)) => Ok(Some(i64::from(*v))),
            Some(other) => Err(Error::invalid_data(format!(
                "field '{name}': expected long, found {other:?}"
            ))),
        }
    }

    /// A required int.
    pub(crate) fn int(&self, name: &str) -> Result<i32> {
        self.opt_int(name)?.ok_or_else(|| Self::missing(name))
    }

    /// An optional int.
    pub(crate) fn opt_int(&self, name: &str) -> Result<Option<i32>> {
        match self.opt_long(name)? {
            None => Ok(None),
            Some(v) => i32::try_from(v)
                .map(Some)
                .map_err(|_| Error::invalid_data(format!("field '{name}': {v} out of int range"))),
        }
    }

    /// A required string.
    pub(crate) fn string(&self, name: &str) -> Result<String> {
        match self.opt(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Enum(_, s)) => Ok(s.clone()),
            None => Err(Self::missing(name)),
            Some(other) => Err(Error::invalid_data(format!(
                "field '{name}': expected string, found {other:?}"
            ))),
        }
    }

    /// A required location (`manifest_path`, `file_path`): a non-empty string. Iceberg
    /// stores full locations (spec: "Manifest Lists" field 500, "Manifests" field 100);
    /// an empty one would resolve to the working directory.
    pub(crate) fn location(&self, name: &str) -> Result<String> {
        let s = self.string(name)?;
        if s.is_empty() {
            return Err(Error::invalid_data(format!(
                "field '{name}': empty location"
            )));
        }
        Ok(s)
    }

    /// Optional bytes.
    pub(crate) fn opt_bytes(&self, name: &str) -> Result<Option<Vec<u8>>> {
        match self.opt(name) {
            None => Ok(None),
            Some(v) => bytes_of(v)
                .map(Some)
                .ok_or_else(|| Error::invalid_data(format!("field '{name}': expected bytes"))),
        }
    }

    /// An optional boolean.
    pub(crate) fn opt_bool(&self, name: &str) -> Result<Option<bool>> {
        match self.opt(name) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(Error::invalid_data(format!(
                "field '{name}': expected boolean, found {other:?}"
            ))),
        }
    }
}

fn bytes_of(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Bytes(b) | Value::Fixed(_, b) => Some(b.clone()),
        _ => None,
    }
}

/// An Iceberg int→long or int→bytes map, stored as an array of `{key, value}` records.
pub(crate) fn int_map<T>(
    v: Option<Value>,
    name: &str,
    convert: impl Fn(&Value) -> Option<T>,
) -> Result<super::IntMap<T>> {
    let Some(v) = v else {
        return Ok(super::IntMap::new());
    };
    let bad = || Error::invalid_data(format!("field '{name}': malformed map"));
    let Value::Array(items) = v else {
        return Err(bad());
    };
    let mut out = super::IntMap::with_capacity(items.len());
    for item in items {
        let Value::Record(kv) = item else {
            return Err(bad());
        };
        let mut key = None;
        let mut value = None;
        for (k, v) in kv {
            match k.as_str() {
                "key" => key = Some(unwrap_union(v)),
                "value" => value = Some(unwrap_union(v)),
                _ => {}
            }
        }
        let key = match key {
            Some(Value::Int(k)) => k,
            _ => return Err(bad()),
        };
        if let Some(v) = value.as_ref().and_then(&convert) {
            out.insert(key, v);
        }
    }
    // present, even with no pairs: `{}`, not null
    Ok(out.into_written())
}

/// Convert an Avro value to a long.
pub(crate) fn as_long(v: &Value) -> Option<i64> {
    match v {
        Value::Long(l) => Some(*l),
        Value::Int(i) => Some(i64::from(*i)),
        _ => None,
    }
}

/// Convert an Avro value to bytes.
pub(crate) fn as_bytes(v: &Value) -> Option<Vec<u8>> {
    bytes_of(v)
}

/// An Avro value of a partition tuple as a [`Literal`] of the partition field's type.
/// `None` for null; an error naming the field for a value of the wrong shape.
pub(crate) fn partition_literal(
    v: Value,
    ty: &PrimitiveType,
    field: &str,
) -> Result<Option<Literal>> {
    let v = unwrap_union(v);
    let bad = |v: &Value| {
        Error::invalid_data(format!(
            "partition field '{field}': value {v:?} does not match type {ty}"
        ))
    };
    let lit = match (ty, v) {
        (_, Value::Null) => return Ok(None),
        (PrimitiveType::Boolean, Value::Boolean(b)) => Literal::Boolean(b),
        (PrimitiveType::Int, Value::Int(i)) => Literal::Int(i),
        (PrimitiveType::Long, Value::Long(l)) => Literal::Long(l),
        (PrimitiveType::Long, Value::Int(i)) => Literal::Long(i64::from(i)),
        (PrimitiveType::Float, Value::Float(f)) => Literal::Float(f),
        (PrimitiveType::Double, Value::Double(d)) => Literal::Double(d),
        (PrimitiveType::Double, Value::Float(f)) => Literal::Double(f64::from(f)),
        (PrimitiveType::Date, Value::Date(d) | Value::Int(d)) => Literal::Date(d),
        (PrimitiveType::Time, Value::TimeMicros(t) | Value::Long(t)) => Literal::Time(t),
        (
            PrimitiveType::Timestamp,
            Value::TimestampMicros(t) | Value::LocalTimestampMicros(t) | Value::Long(t),
        ) => Literal::Timestamp(t),
        (
            PrimitiveType::Timestamptz,
            Value::TimestampMicros(t) | Value::LocalTimestampMicros(t) | Value::Long(t),
        ) => Literal::Timestamptz(t),
        (
            PrimitiveType::TimestampNs,
            Value::TimestampNanos(t) | Value::LocalTimestampNanos(t) | Value::Long(t),
        ) => Literal::TimestampNs(t),
        (
            PrimitiveType::TimestamptzNs,
            Value::TimestampNanos(t) | Value::LocalTimestampNanos(t) | Value::Long(t),
        ) => Literal::TimestamptzNs(t),
        (PrimitiveType::String, Value::String(s)) => Literal::String(s),
        (PrimitiveType::Uuid, Value::Uuid(u)) => Literal::Uuid(*u.as_bytes()),
        (PrimitiveType::Uuid, Value::Fixed(16, b)) => {
            let mut arr = [0u8; 16];
            arr.copy_from_slice(&b);
            Literal::Uuid(arr)
        }
        (PrimitiveType::Uuid, Value::String(s)) => Literal::Uuid(
            *uuid::Uuid::parse_str(&s)
                .map_err(|e| {
                    Error::invalid_data(format!("partition field '{field}': bad uuid"))
                        .with_source(e)
                })?
                .as_bytes(),
        ),
        (PrimitiveType::Fixed(_), Value::Fixed(_, b)) => Literal::Fixed(b),
        (PrimitiveType::Binary, Value::Bytes(b) | Value::Fixed(_, b)) => Literal::Binary(b),
        (PrimitiveType::Decimal { precision, scale }, Value::Decimal(d)) => {
            let bytes = Vec::<u8>::try_from(&d).map_err(|e| {
                Error::invalid_data(format!("partition field '{field}': bad decimal"))
                    .with_source(e)
            })?;
            Literal::Decimal {
                unscaled: decimal_from_be_bytes(&bytes)?,
                precision: *precision,
                scale: *scale,
            }
        }
        (PrimitiveType::Decimal { precision, scale }, Value::Fixed(_, b) | Value::Bytes(b)) => {
            Literal::Decimal {
                unscaled: decimal_from_be_bytes(&b)?,
                precision: *precision,
                scale: *scale,
            }
        }
        (_, other) => return Err(bad(&other)),
    };
    Ok(Some(lit))
}

/// Decode all records of an Avro object container file.
///
/// Returns the records and the file's key-value metadata. Errors name `location`.
/// `apache-avro` panics on some corrupt headers (0.21: an embedded schema with an invalid
/// name is unwrapped); such a panic is caught here and becomes the same
/// [`InvalidData`](crate::ErrorKind::InvalidData) error as any other unreadable file.
pub(crate) fn read_container(
    bytes: &[u8],
    location: &str,
) -> Result<(Vec<Value>, HashMap<String, String>)> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decode_container(bytes, location)
    }))
    .unwrap_or_else(|_| {
        Err(Error::invalid_data(format!(
            "'{location}' is not a readable Avro file (the Avro decoder failed on it)"
        )))
    })
}

fn decode_container(bytes: &[u8], location: &str) -> Result<(Vec<Value>, HashMap<String, String>)> {
    let reader = apache_avro::Reader::new(bytes).map_err(|e| {
        Error::invalid_data(format!("'{location}' is not a readable Avro file")).with_source(e)
    })?;
    let meta = reader
        .user_metadata()
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).to_string()))
        .collect();
    let values = reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| {
            Error::invalid_data(format!("corrupt Avro data in '{location}'")).with_source(e)
        })?;
    Ok((values, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(schema: &str, record: Value) -> Vec<u8> {
        let schema = apache_avro::Schema::parse_str(schema).unwrap();
        let mut w = apache_avro::Writer::new(&schema, Vec::new());
        w.append(record).unwrap();
        w.into_inner().unwrap()
    }

    #[test]
    fn a_header_the_decoder_panics_on_is_an_error_naming_the_file() {
        // a nested record named like a manifest's partition struct
        let bytes = container(
            r#"{"type": "record", "name": "manifest_entry", "fields": [{"name": "p", "type":
                {"type": "record", "name": "r2", "fields": [{"name": "a", "type": "long"}]}}]}"#,
            Value::Record(vec![(
                "p".into(),
                Value::Record(vec![("a".into(), Value::Long(1))]),
            )]),
        );
        assert!(read_container(&bytes, "m.avro").is_ok());
        // an invalid record name in the embedded schema (same length, so the header
        // stays well-formed): apache-avro 0.21 unwraps the name check of nested records
        let needle = br#""name":"r2""#;
        let at = bytes
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("schema in the header")
            + br#""name":""#.len();
        let mut bad = bytes.clone();
        bad[at] = b'^';
        let err = read_container(&bad, "/t/metadata/m.avro").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
        assert!(err.to_string().contains("'/t/metadata/m.avro'"), "{err}");
    }

    #[test]
    fn an_empty_location_is_invalid() {
        let r = Record::from_value(
            Value::Record(vec![("file_path".into(), Value::String(String::new()))]),
            "entry",
        )
        .unwrap();
        let err = r.location("file_path").unwrap_err();
        assert!(
            err.to_string().contains("'file_path': empty location"),
            "{err}"
        );
    }
}
