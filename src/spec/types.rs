//! Iceberg data types: primitives, structs, lists and maps with their field ids.
//!
//! Source: Iceberg spec, "Schemas and Data Types" and Appendix C (JSON serialization).
//! Types parse from and print to the spec's JSON form (`"long"`, `"decimal(9,2)"`,
//! `"fixed[16]"`, `{"type": "struct", "fields": [...]}`, ...).

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as JsonValue;

/// A primitive Iceberg type (spec: "Primitive Types").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    /// True or false.
    Boolean,
    /// 32-bit signed integer.
    Int,
    /// 64-bit signed integer.
    Long,
    /// 32-bit IEEE 754 float.
    Float,
    /// 64-bit IEEE 754 float.
    Double,
    /// Fixed-point decimal: precision ≤ 38, scale.
    Decimal {
        /// Total number of digits.
        precision: u32,
        /// Digits after the point.
        scale: u32,
    },
    /// Calendar date, days since 1970-01-01.
    Date,
    /// Time of day, µs since midnight, no zone.
    Time,
    /// Timestamp without zone, µs since epoch.
    Timestamp,
    /// Timestamp with zone, stored as UTC µs since epoch.
    Timestamptz,
    /// v3: timestamp without zone, ns since epoch.
    TimestampNs,
    /// v3: timestamp with zone, UTC ns since epoch.
    TimestamptzNs,
    /// UTF-8 string.
    String,
    /// 16-byte UUID.
    Uuid,
    /// Fixed-length byte array of the given length.
    Fixed(u64),
    /// Arbitrary-length byte array.
    Binary,
    /// v3: a type whose values are always null.
    Unknown,
    /// v3: semi-structured variant (not supported yet for reading).
    Variant,
    /// v3: geometry (not supported yet for reading).
    Geometry,
    /// v3: geography (not supported yet for reading).
    Geography,
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrimitiveType::Boolean => f.write_str("boolean"),
            PrimitiveType::Int => f.write_str("int"),
            PrimitiveType::Long => f.write_str("long"),
            PrimitiveType::Float => f.write_str("float"),
            PrimitiveType::Double => f.write_str("double"),
            PrimitiveType::Decimal { precision, scale } => {
                write!(f, "decimal({precision}, {scale})")
            }
            PrimitiveType::Date => f.write_str("date"),
            PrimitiveType::Time => f.write_str("time"),
            PrimitiveType::Timestamp => f.write_str("timestamp"),
            PrimitiveType::Timestamptz => f.write_str("timestamptz"),
            PrimitiveType::TimestampNs => f.write_str("timestamp_ns"),
            PrimitiveType::TimestamptzNs => f.write_str("timestamptz_ns"),
            PrimitiveType::String => f.write_str("string"),
            PrimitiveType::Uuid => f.write_str("uuid"),
            PrimitiveType::Fixed(l) => write!(f, "fixed[{l}]"),
            PrimitiveType::Binary => f.write_str("binary"),
            PrimitiveType::Unknown => f.write_str("unknown"),
            PrimitiveType::Variant => f.write_str("variant"),
            PrimitiveType::Geometry => f.write_str("geometry"),
            PrimitiveType::Geography => f.write_str("geography"),
        }
    }
}

impl PrimitiveType {
    /// Parse the spec's string form, e.g. `"decimal(9, 2)"` or `"fixed[16]"`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let simple = match t {
            "boolean" => Some(PrimitiveType::Boolean),
            "int" => Some(PrimitiveType::Int),
            "long" => Some(PrimitiveType::Long),
            "float" => Some(PrimitiveType::Float),
            "double" => Some(PrimitiveType::Double),
            "date" => Some(PrimitiveType::Date),
            "time" => Some(PrimitiveType::Time),
            "timestamp" => Some(PrimitiveType::Timestamp),
            "timestamptz" => Some(PrimitiveType::Timestamptz),
            "timestamp_ns" => Some(PrimitiveType::TimestampNs),
            "timestamptz_ns" => Some(PrimitiveType::TimestamptzNs),
            "string" => Some(PrimitiveType::String),
            "uuid" => Some(PrimitiveType::Uuid),
            "binary" => Some(PrimitiveType::Binary),
            "unknown" => Some(PrimitiveType::Unknown),
            "variant" => Some(PrimitiveType::Variant),
            _ => None,
        };
        if let Some(p) = simple {
            return Ok(p);
        }
        if t.starts_with("geometry") {
            return Ok(PrimitiveType::Geometry);
        }
        if t.starts_with("geography") {
            return Ok(PrimitiveType::Geography);
        }
        if let Some(inner) = t.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
            let mut parts = inner.split(',').map(str::trim);
            let (Some(p), Some(s), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(format!("malformed decimal type '{s}'"));
            };
            let precision = p
                .parse()
                .map_err(|_| format!("bad decimal precision in '{s}'"))?;
            let scale = s
                .parse()
                .map_err(|_| format!("bad decimal scale in '{s}'"))?;
            if precision > 38 || scale > precision {
                return Err(format!("decimal precision/scale out of range in '{s}'"));
            }
            return Ok(PrimitiveType::Decimal { precision, scale });
        }
        if let Some(inner) = t.strip_prefix("fixed[").and_then(|r| r.strip_suffix(']')) {
            let len = inner
                .trim()
                .parse()
                .map_err(|_| format!("bad fixed length in '{s}'"))?;
            return Ok(PrimitiveType::Fixed(len));
        }
        Err(format!("unknown type '{s}'"))
    }
}

/// A field of a struct, or the element of a list, or the key/value of a map.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedField {
    /// The field id, unique within a table's schema history.
    pub id: i32,
    /// The field name.
    pub name: String,
    /// Whether values are required (non-null).
    pub required: bool,
    /// The field's type.
    pub field_type: Box<Type>,
    /// Documentation string.
    pub doc: Option<String>,
    /// v3 `initial-default`: value for rows written before the field existed (JSON form).
    pub initial_default: Option<JsonValue>,
    /// v3 `write-default`: value used by writers when none is supplied (JSON form).
    pub write_default: Option<JsonValue>,
}

impl NestedField {
    /// A new optional field.
    pub fn optional(id: i32, name: impl Into<String>, field_type: Type) -> Self {
        Self::new(id, name, field_type, false)
    }

    /// A new required field.
    pub fn required(id: i32, name: impl Into<String>, field_type: Type) -> Self {
        Self::new(id, name, field_type, true)
    }

    /// Push the id of this field and of every field nested in it (struct fields, list
    /// elements, map keys and values) onto `out`, depth first.
    pub fn collect_ids(&self, out: &mut Vec<i32>) {
        out.push(self.id);
        match self.field_type.as_ref() {
            Type::Struct(s) => s.fields.iter().for_each(|f| f.collect_ids(out)),
            Type::List(l) => l.element_field.collect_ids(out),
            Type::Map(m) => {
                m.key_field.collect_ids(out);
                m.value_field.collect_ids(out);
            }
            Type::Primitive(_) => {}
        }
    }

    fn new(id: i32, name: impl Into<String>, field_type: Type, required: bool) -> Self {
        Self {
            id,
            name: name.into(),
            required,
            field_type: Box::new(field_type),
            doc: None,
            initial_default: None,
            write_default: None,
        }
    }
}

/// A struct type: an ordered list of fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    /// The fields, in order.
    pub fields: Vec<NestedField>,
}

impl StructType {
    /// A struct of the given fields.
    pub fn new(fields: Vec<NestedField>) -> Self {
        Self { fields }
    }

    /// The direct child field with this id.
    pub fn field_by_id(&self, id: i32) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.id == id)
    }

    /// The direct child field with this name (exact match).
    pub fn field_by_name(&self, name: &str) -> Option<&NestedField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A list type: its element field (with its own id).
#[derive(Debug, Clone, PartialEq)]
pub struct ListType {
    /// The element field, named `element`.
    pub element_field: NestedField,
}

/// A map type: key and value fields (with their own ids).
#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    /// The key field, named `key`; always required.
    pub key_field: NestedField,
    /// The value field, named `value`.
    pub value_field: NestedField,
}

/// Any Iceberg type.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// A primitive type.
    Primitive(PrimitiveType),
    /// A struct.
    Struct(StructType),
    /// A list.
    List(ListType),
    /// A map.
    Map(MapType),
}

impl Type {
    /// The primitive type, if this is one.
    pub fn as_primitive(&self) -> Option<&PrimitiveType> {
        match self {
            Type::Primitive(p) => Some(p),
            _ => None,
        }
    }

    /// The struct type, if this is one.
    pub fn as_struct(&self) -> Option<&StructType> {
        match self {
            Type::Struct(s) => Some(s),
            _ => None,
        }
    }

    /// Parse the spec's JSON form of a type (Appendix C).
    pub fn from_json(v: &JsonValue) -> Result<Type, String> {
        match v {
            JsonValue::String(s) => PrimitiveType::parse(s).map(Type::Primitive),
            JsonValue::Object(o) => {
                let kind = o
                    .get("type")
                    .and_then(JsonValue::as_str)
                    .ok_or("nested type without 'type'")?;
                match kind {
                    "struct" => {
                        let fields = o
                            .get("fields")
                            .and_then(JsonValue::as_array)
                            .ok_or("struct type without 'fields'")?;
                        let fields = fields
                            .iter()
                            .map(field_from_json)
                            .collect::<Result<Vec<_>, _>>()?;
                        Ok(Type::Struct(StructType { fields }))
                    }
                    "list" => {
                        let id = get_i32(o, "element-id")?;
                        let required = get_bool(o, "element-required")?;
                        let element =
                            Type::from_json(o.get("element").ok_or("list without 'element'")?)?;
                        Ok(Type::List(ListType {
                            element_field: NestedField::new(id, "element", element, required),
                        }))
                    }
                    "map" => {
                        let key_id = get_i32(o, "key-id")?;
                        let value_id = get_i32(o, "value-id")?;
                        let required = get_bool(o, "value-required")?;
                        let key = Type::from_json(o.get("key").ok_or("map without 'key'")?)?;
                        let value = Type::from_json(o.get("value").ok_or("map without 'value'")?)?;
                        Ok(Type::Map(MapType {
                            key_field: NestedField::new(key_id, "key", key, true),
                            value_field: NestedField::new(value_id, "value", value, required),
                        }))
                    }
                    other => Err(format!("unknown nested type '{other}'")),
                }
            }
            other => Err(format!(
                "a type must be a string or an object, found {other}"
            )),
        }
    }

    /// The spec's JSON form of this type.
    pub fn to_json(&self) -> JsonValue {
        match self {
            Type::Primitive(p) => JsonValue::String(p.to_string()),
            Type::Struct(s) => serde_json::json!({
                "type": "struct",
                "fields": s.fields.iter().map(field_to_json).collect::<Vec<_>>(),
            }),
            Type::List(l) => serde_json::json!({
                "type": "list",
                "element-id": l.element_field.id,
                "element-required": l.element_field.required,
                "element": l.element_field.field_type.to_json(),
            }),
            Type::Map(m) => serde_json::json!({
                "type": "map",
                "key-id": m.key_field.id,
                "key": m.key_field.field_type.to_json(),
                "value-id": m.value_field.id,
                "value-required": m.value_field.required,
                "value": m.value_field.field_type.to_json(),
            }),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Primitive(p) => p.fmt(f),
            Type::Struct(s) => {
                f.write_str("struct<")?;
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", field.name, field.field_type)?;
                }
                f.write_str(">")
            }
            Type::List(l) => write!(f, "list<{}>", l.element_field.field_type),
            Type::Map(m) => write!(
                f,
                "map<{}, {}>",
                m.key_field.field_type, m.value_field.field_type
            ),
        }
    }
}

type JsonObject = serde_json::Map<String, JsonValue>;

fn get_i32(o: &JsonObject, key: &str) -> Result<i32, String> {
    o.get(key)
        .and_then(JsonValue::as_i64)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| format!("missing or invalid '{key}'"))
}

fn get_bool(o: &JsonObject, key: &str) -> Result<bool, String> {
    o.get(key)
        .and_then(JsonValue::as_bool)
        .ok_or_else(|| format!("missing or invalid '{key}'"))
}

fn field_from_json(v: &JsonValue) -> Result<NestedField, String> {
    let o = v.as_object().ok_or("a struct field must be an object")?;
    let id = get_i32(o, "id")?;
    let name = o
        .get("name")
        .and_then(JsonValue::as_str)
        .ok_or_else(|| format!("field {id}: missing 'name'"))?;
    let required = get_bool(o, "required").map_err(|e| format!("field '{name}': {e}"))?;
    let ty = Type::from_json(
        o.get("type")
            .ok_or_else(|| format!("field '{name}': missing 'type'"))?,
    )
    .map_err(|e| format!("field '{name}': {e}"))?;
    let mut field = NestedField::new(id, name, ty, required);
    field.doc = o.get("doc").and_then(JsonValue::as_str).map(str::to_string);
    field.initial_default = o.get("initial-default").cloned();
    field.write_default = o.get("write-default").cloned();
    Ok(field)
}

fn field_to_json(f: &NestedField) -> JsonValue {
    let mut o = serde_json::Map::new();
    o.insert("id".into(), f.id.into());
    o.insert("name".into(), f.name.clone().into());
    o.insert("required".into(), f.required.into());
    o.insert("type".into(), f.field_type.to_json());
    if let Some(doc) = &f.doc {
        o.insert("doc".into(), doc.clone().into());
    }
    if let Some(d) = &f.initial_default {
        o.insert("initial-default".into(), d.clone());
    }
    if let Some(d) = &f.write_default {
        o.insert("write-default".into(), d.clone());
    }
    JsonValue::Object(o)
}

impl<'de> Deserialize<'de> for Type {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = JsonValue::deserialize(d)?;
        Type::from_json(&v).map_err(D::Error::custom)
    }
}

impl Serialize for Type {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_primitives() {
        assert_eq!(
            PrimitiveType::parse("decimal(9, 2)"),
            Ok(PrimitiveType::Decimal {
                precision: 9,
                scale: 2
            })
        );
        assert_eq!(
            PrimitiveType::parse("fixed[16]"),
            Ok(PrimitiveType::Fixed(16))
        );
        assert_eq!(
            PrimitiveType::parse("timestamptz_ns"),
            Ok(PrimitiveType::TimestamptzNs)
        );
        assert!(PrimitiveType::parse("decimal(40,2)").is_err());
        assert!(PrimitiveType::parse("int128").is_err());
    }

    #[test]
    fn nested_round_trip() {
        let json = serde_json::json!({
            "type": "struct",
            "fields": [
                {"id": 1, "name": "m", "required": false, "type": {
                    "type": "map", "key-id": 2, "key": "string", "value-id": 3,
                    "value-required": false,
                    "value": {"type": "list", "element-id": 4, "element-required": true, "element": "int"}}},
                {"id": 5, "name": "x", "required": true, "type": "decimal(10,2)", "initial-default": "1.00"}
            ]
        });
        let t = Type::from_json(&json).unwrap();
        assert_eq!(
            t.to_string(),
            "struct<m: map<string, list<int>>, x: decimal(10, 2)>"
        );
        let back = Type::from_json(&t.to_json()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn missing_field_key_is_named() {
        let json = serde_json::json!({"type": "struct", "fields": [{"id": 1, "name": "a", "type": "int"}]});
        let err = Type::from_json(&json).unwrap_err();
        assert!(err.contains("'a'") && err.contains("required"), "{err}");
    }
}
