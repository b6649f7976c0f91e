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
use crate::error::{Error, Result};

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

/// The row lineage fields a v3 table's data files may store beside its columns, by name
/// and reserved field id (spec: "Row Lineage", "Reserved Field IDs").
pub const ROW_LINEAGE_FIELDS: [(&str, i32); 2] = [
    ("_row_id", 2147483540),
    ("_last_updated_sequence_number", 2147483539),
];

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

    /// Check that no two fields of this schema have the same full name, the way every
    /// schema Iceberg Java builds indexes its names (`TypeUtil.indexByName`, run by the
    /// `Schema` constructor; PyIceberg refuses such a schema alike).
    ///
    /// A field's full name is its name after its parents' full names, joined with `.`; a
    /// list's element is named `element`, a map's key `key` and its value `value`
    /// (`l.element.x`, `m.value`). Names are compared exactly (case-sensitive), and a
    /// name holding a dot is not split, so a top-level column named `st.a` clashes with
    /// field `a` of a struct `st`.
    ///
    /// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the full
    /// name and the ids of the first two fields that share it.
    pub fn check_field_names(&self) -> Result<()> {
        fn walk(f: &NestedField, full: String, seen: &mut HashMap<String, i32>) -> Result<()> {
            if let Some(first) = seen.get(&full) {
                return Err(Error::invalid_argument(format!(
                    "invalid schema: two fields have the name '{full}' (field ids {first} and \
                     {}); full field names must be unique, nested ones as 'struct.field'",
                    f.id
                )));
            }
            seen.insert(full.clone(), f.id);
            let child = |name: &str| format!("{full}.{name}");
            match f.field_type.as_ref() {
                Type::Struct(s) => {
                    for c in &s.fields {
                        walk(c, child(&c.name), seen)?;
                    }
                    Ok(())
                }
                Type::List(l) => walk(&l.element_field, child("element"), seen),
                Type::Map(m) => {
                    walk(&m.key_field, child("key"), seen)?;
                    walk(&m.value_field, child("value"), seen)
                }
                Type::Primitive(_) => Ok(()),
            }
        }
        let mut seen = HashMap::new();
        for f in self.columns() {
            walk(f, f.name.clone(), &mut seen)?;
        }
        Ok(())
    }

    /// Whether a table of format version `version` can hold this schema: the types
    /// added in v3 (`timestamp_ns`, `timestamptz_ns`, `unknown`, `variant`, `geometry`,
    /// `geography`; spec "Primitive Types", "Version 3") need v3 (Java
    /// `Schema.checkCompatibility`).
    ///
    /// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the field
    /// (lowest id first) by its full name (`st.a`, `l.element`, `m.value`), its type and
    /// the version it needs.
    pub fn check_format_version(&self, version: super::FormatVersion) -> Result<()> {
        if version >= super::FormatVersion::V3 {
            return Ok(());
        }
        /// The fields of a v3 type under `f` (itself included): id, full name, type.
        fn walk(f: &NestedField, full: String, out: &mut Vec<(i32, String, PrimitiveType)>) {
            let child = |name: &str| format!("{full}.{name}");
            match f.field_type.as_ref() {
                Type::Primitive(
                    p @ (PrimitiveType::TimestampNs
                    | PrimitiveType::TimestamptzNs
                    | PrimitiveType::Unknown
                    | PrimitiveType::Variant
                    | PrimitiveType::Geometry
                    | PrimitiveType::Geography),
                ) => out.push((f.id, full, *p)),
                Type::Primitive(_) => {}
                Type::Struct(s) => {
                    for c in &s.fields {
                        walk(c, child(&c.name), out);
                    }
                }
                Type::List(l) => walk(&l.element_field, child("element"), out),
                Type::Map(m) => {
                    walk(&m.key_field, child("key"), out);
                    walk(&m.value_field, child("value"), out);
                }
            }
        }
        let mut found = Vec::new();
        for f in self.columns() {
            walk(f, f.name.clone(), &mut found);
        }
        match found.into_iter().min_by_key(|(id, _, _)| *id) {
            Some((id, name, p)) => Err(Error::invalid_argument(format!(
                "invalid type for field '{name}' (id {id}): {p} needs format version 3 (the \
                 table is v{})",
                version as u8
            ))),
            None => Ok(()),
        }
    }

    /// Whether a format-version 3 table can have these columns: none of its top-level
    /// columns has the name of a row lineage field (`_row_id`,
    /// `_last_updated_sequence_number`; spec "Row Lineage"). A v3 file rewritten by a
    /// row-level change or a compaction stores each row's lineage under those names
    /// beside the table's columns, so such a column would make two fields of one name in
    /// the file, which other readers refuse (PyIceberg: "multiple fields for name"), and
    /// reads of the lineage columns could not tell the two apart (Spark refuses reading a
    /// table whose columns conflict with metadata column names). Nested fields of those
    /// names do not clash. Names are compared regardless of ASCII case: engines that
    /// resolve columns so (Spark by default, DuckDB) would read a column `_ROW_ID` for
    /// the lineage field `_row_id` stored beside it.
    ///
    /// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the column
    /// and the rule.
    pub fn check_row_lineage_names(&self) -> Result<()> {
        for field in self.columns() {
            if let Some((name, id)) = ROW_LINEAGE_FIELDS
                .iter()
                .find(|(name, _)| field.name.eq_ignore_ascii_case(name))
            {
                let case = if field.name == *name {
                    String::new()
                } else {
                    format!(
                        " '{name}' in another case (engines that resolve names regardless \
                         of case, as Spark and DuckDB do, would read one for the other)"
                    )
                };
                return Err(Error::invalid_argument(format!(
                    "column '{}' (id {}) has the name of a row lineage field of format \
                     version 3{case} (spec \"Row Lineage\": data files store each row's \
                     '{name}' under field id {id} beside the table's columns); a \
                     format-version 3 table cannot have a column of that name",
                    field.name, field.id
                )));
            }
        }
        Ok(())
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

    fn names_clash(fields: serde_json::Value) -> Option<String> {
        let v = serde_json::json!({"type": "struct", "fields": fields});
        let s = Schema::from_json(&v).unwrap();
        s.check_field_names().err().map(|e| {
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
            e.to_string()
        })
    }

    #[test]
    fn full_field_names_are_unique_as_in_java_index_by_name() {
        let int = |id: i32, name: &str| serde_json::json!({"id": id, "name": name, "required": false, "type": "int"});
        let strukt = |id: i32, name: &str, fields: Vec<serde_json::Value>| {
            serde_json::json!(
            {"id": id, "name": name, "required": false, "type": {"type": "struct", "fields": fields}})
        };
        let clash = |fields: Vec<serde_json::Value>| names_clash(serde_json::Value::Array(fields));
        // unique names (case matters: `a` and `A` differ), nested and top-level alike
        assert_eq!(
            clash(vec![
                int(1, "a"),
                int(2, "A"),
                strukt(3, "s", vec![int(4, "a"), int(5, "s")]),
            ]),
            None
        );
        let cases = [
            (vec![int(1, "a"), int(2, "a")], "'a' (field ids 1 and 2)"),
            (
                vec![strukt(1, "s", vec![int(2, "x"), int(3, "x")])],
                "'s.x' (field ids 2 and 3)",
            ),
            // a top-level name with a dot against a nested field's path, either order
            (
                vec![int(1, "st.a"), strukt(2, "st", vec![int(3, "a")])],
                "'st.a' (field ids 1 and 3)",
            ),
            (
                vec![strukt(2, "st", vec![int(3, "a")]), int(1, "st.a")],
                "'st.a' (field ids 3 and 1)",
            ),
            // list elements and map keys and values are named element, key and value
            (
                vec![
                    serde_json::json!({"id": 1, "name": "l", "required": false, "type": {
                        "type": "list", "element-id": 2, "element-required": false,
                        "element": {"type": "struct", "fields": [int(3, "a"), int(4, "a")]}}}),
                ],
                "'l.element.a' (field ids 3 and 4)",
            ),
            (
                vec![
                    serde_json::json!({"id": 1, "name": "m", "required": false, "type": {
                        "type": "map", "key-id": 2, "key": "string", "value-id": 3,
                        "value-required": false, "value": "int"}}),
                    int(4, "m.value"),
                ],
                "'m.value' (field ids 3 and 4)",
            ),
        ];
        for (fields, needle) in cases {
            let err = clash(fields).expect(needle);
            assert!(
                err.contains(&format!("two fields have the name {needle}")),
                "{err}"
            );
        }
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
