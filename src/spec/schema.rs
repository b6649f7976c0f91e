//! Iceberg schemas with field-id indexes.
//!
//! Source: Iceberg spec, "Schemas" and Appendix C ("Schemas"). A schema is a struct of
//! fields plus a `schema-id` and optional `identifier-field-ids`.

use std::collections::HashMap;
use std::sync::Arc;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as JsonValue;

use super::types::{NestedField, PrimitiveType, StructType, Type};

/// A table schema: the top-level struct with an id, indexed by field id.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// `schema-id` (0 when a v1 table's `schema` has none).
    pub schema_id: i32,
    /// `identifier-field-ids`: the row identifier (e.g. upsert key).
    pub identifier_field_ids: Vec<i32>,
    /// The top-level fields.
    pub fields: StructType,
    /// Every field (nested ones too) by id → the field.
    id_index: HashMap<i32, NestedField>,
}

/// A schema shared between plan nodes.
pub type SchemaRef = Arc<Schema>;

impl Schema {
    /// A schema of `fields` with the given id.
    pub fn new(schema_id: i32, fields: Vec<NestedField>) -> Self {
        let fields = StructType::new(fields);
        let mut id_index = HashMap::new();
        index_struct(&fields, &mut id_index);
        Self {
            schema_id,
            identifier_field_ids: vec![],
            fields,
            id_index,
        }
    }

    /// The top-level fields, in order.
    pub fn columns(&self) -> &[NestedField] {
        &self.fields.fields
    }

    /// Any field (nested ones included) by its id.
    pub fn field_by_id(&self, id: i32) -> Option<&NestedField> {
        self.id_index.get(&id)
    }

    /// The primitive type of the field with this id, if it is primitive.
    pub fn primitive_type(&self, id: i32) -> Option<PrimitiveType> {
        self.field_by_id(id)
            .and_then(|f| f.field_type.as_primitive().copied())
    }

    /// A top-level field by name (case-sensitive).
    pub fn field_by_name(&self, name: &str) -> Option<&NestedField> {
        self.fields.field_by_name(name)
    }

    /// Whether the field with this id is never null in a row: it is required and so is
    /// every field enclosing it. A required field inside an optional struct is null
    /// wherever the struct is (spec: "Nested Types": a required field of a struct must
    /// be present *when the struct is*), so its own `required` says nothing about rows
    /// or about a missing null count. `false` for an unknown id.
    pub fn is_never_null(&self, id: i32) -> bool {
        fn find(fields: &[NestedField], id: i32) -> Option<bool> {
            fields.iter().find_map(|f| find_in(f, id))
        }
        fn find_in(f: &NestedField, id: i32) -> Option<bool> {
            if f.id == id {
                return Some(f.required);
            }
            let inner = match f.field_type.as_ref() {
                Type::Struct(s) => find(&s.fields, id),
                Type::List(l) => find_in(&l.element_field, id),
                Type::Map(m) => find_in(&m.key_field, id).or_else(|| find_in(&m.value_field, id)),
                Type::Primitive(_) => None,
            };
            inner.map(|never_null| never_null && f.required)
        }
        find(self.columns(), id).unwrap_or(false)
    }

    /// The first field id used by two fields of this schema, with the two fields' dotted
    /// names, or `None` when every id is unique (spec: "Schemas": a field id is unique
    /// within the schema). The id index keeps one field per id, so a duplicate is found by
    /// walking the fields.
    pub fn duplicate_field_id(&self) -> Option<(i32, String, String)> {
        fn walk(
            f: &NestedField,
            path: &str,
            seen: &mut HashMap<i32, String>,
        ) -> Option<(i32, String, String)> {
            let name = if path.is_empty() {
                f.name.clone()
            } else {
                format!("{path}.{}", f.name)
            };
            if let Some(first) = seen.insert(f.id, name.clone()) {
                return Some((f.id, first, name));
            }
            match f.field_type.as_ref() {
                Type::Struct(s) => s.fields.iter().find_map(|c| walk(c, &name, seen)),
                Type::List(l) => walk(&l.element_field, &name, seen),
                Type::Map(m) => {
                    walk(&m.key_field, &name, seen).or_else(|| walk(&m.value_field, &name, seen))
                }
                Type::Primitive(_) => None,
            }
        }
        let mut seen = HashMap::new();
        self.columns().iter().find_map(|f| walk(f, "", &mut seen))
    }

    /// The highest field id in the schema (0 when empty).
    pub fn highest_field_id(&self) -> i32 {
        self.id_index.keys().copied().max().unwrap_or(0)
    }

    /// Parse the spec's JSON form of a schema.
    pub fn from_json(v: &JsonValue) -> Result<Schema, String> {
        let Type::Struct(fields) = Type::from_json(v)? else {
            return Err("a schema must be a struct type".into());
        };
        let o = v.as_object().ok_or("a schema must be an object")?;
        let schema_id = match o.get("schema-id") {
            None => 0,
            Some(id) => id
                .as_i64()
                .and_then(|i| i32::try_from(i).ok())
                .ok_or("invalid 'schema-id'")?,
        };
        let mut schema = Schema::new(schema_id, fields.fields);
        if let Some(ids) = o.get("identifier-field-ids") {
            schema.identifier_field_ids = serde_json::from_value(ids.clone())
                .map_err(|e| format!("invalid 'identifier-field-ids': {e}"))?;
        }
        Ok(schema)
    }

    /// The spec's JSON form of this schema.
    pub fn to_json(&self) -> JsonValue {
        let mut v = Type::Struct(self.fields.clone()).to_json();
        if let Some(o) = v.as_object_mut() {
            o.insert("schema-id".into(), self.schema_id.into());
            if !self.identifier_field_ids.is_empty() {
                o.insert(
                    "identifier-field-ids".into(),
                    self.identifier_field_ids.clone().into(),
                );
            }
        }
        v
    }
}

fn index_struct(s: &StructType, index: &mut HashMap<i32, NestedField>) {
    for f in &s.fields {
        index_field(f, index);
    }
}

fn index_field(f: &NestedField, index: &mut HashMap<i32, NestedField>) {
    index.insert(f.id, f.clone());
    match f.field_type.as_ref() {
        Type::Struct(s) => index_struct(s, index),
        Type::List(l) => index_field(&l.element_field, index),
        Type::Map(m) => {
            index_field(&m.key_field, index);
            index_field(&m.value_field, index);
        }
        Type::Primitive(_) => {}
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = JsonValue::deserialize(d)?;
        Schema::from_json(&v).map_err(D::Error::custom)
    }
}

impl Serialize for Schema {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_nested_ids() {
        let v = serde_json::json!({
            "type": "struct", "schema-id": 3, "identifier-field-ids": [1],
            "fields": [
                {"id": 1, "name": "id", "required": true, "type": "long"},
                {"id": 2, "name": "s", "required": false, "type": {"type": "struct", "fields": [
                    {"id": 3, "name": "a", "required": false, "type": "int"}]}}
            ]
        });
        let s = Schema::from_json(&v).unwrap();
        assert_eq!(s.schema_id, 3);
        assert_eq!(s.identifier_field_ids, vec![1]);
        assert_eq!(s.field_by_id(3).map(|f| f.name.as_str()), Some("a"));
        assert_eq!(s.primitive_type(1), Some(PrimitiveType::Long));
        assert_eq!(s.highest_field_id(), 3);
        assert_eq!(Schema::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn required_fields_under_optional_ancestors_can_be_null() {
        let v = serde_json::json!({
            "type": "struct", "fields": [
                {"id": 1, "name": "id", "required": true, "type": "long"},
                {"id": 2, "name": "a", "required": false, "type": {"type": "struct", "fields": [
                    {"id": 3, "name": "street", "required": true, "type": "string"},
                    {"id": 4, "name": "info", "required": true, "type": {"type": "struct", "fields": [
                        {"id": 5, "name": "city", "required": true, "type": "string"}]}}]}},
                {"id": 6, "name": "r", "required": true, "type": {"type": "struct", "fields": [
                    {"id": 7, "name": "x", "required": true, "type": "int"},
                    {"id": 8, "name": "o", "required": false, "type": {"type": "struct", "fields": [
                        {"id": 9, "name": "y", "required": true, "type": "int"}]}}]}},
                {"id": 10, "name": "l", "required": false, "type": {"type": "list", "element-id": 11,
                    "element-required": true, "element": {"type": "struct", "fields": [
                        {"id": 12, "name": "z", "required": true, "type": "int"}]}}},
                {"id": 13, "name": "m", "required": true, "type": {"type": "map", "key-id": 14,
                    "key": "string", "value-id": 15, "value-required": false, "value": {"type": "struct", "fields": [
                        {"id": 16, "name": "w", "required": true, "type": "int"}]}}}
            ]
        });
        let s = Schema::from_json(&v).unwrap();
        let never_null: Vec<i32> = (1..=17).filter(|id| s.is_never_null(*id)).collect();
        assert_eq!(never_null, vec![1, 6, 7, 13, 14]);
    }
}
