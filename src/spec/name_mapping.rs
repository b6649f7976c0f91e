//! Name mapping: field ids for data files written without them.
//!
//! Source: Iceberg spec, "Column Projection" and Appendix C ("Name Mapping Serialization").
//! The table property `schema.name-mapping.default` holds a JSON list of mapped fields,
//! each `{"field-id": 1, "names": ["id", "record_id"], "fields": [...]}`; a file column
//! whose name is one of `names` has that field id. Nested `fields` map struct fields,
//! list elements (`element`) and map keys and values (`key`, `value`).

use serde::{Deserialize, Serialize};
use serde_json::Value as JsonValue;

use super::schema::Schema;
use super::types::{NestedField, Type};
use crate::error::{Error, Result};

/// The table property holding the default name mapping.
pub const DEFAULT_NAME_MAPPING_PROPERTY: &str = "schema.name-mapping.default";

/// One mapped field: the names it may have in files, its id and its nested fields.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct MappedField {
    /// The field id (absent: the names are known to map to no field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_id: Option<i32>,
    /// Names the field may have in data files.
    pub names: Vec<String>,
    /// Mappings of nested fields.
    #[serde(default)]
    pub fields: Vec<MappedField>,
}

/// A name mapping: the top-level mapped fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NameMapping {
    /// Top-level fields.
    pub fields: Vec<MappedField>,
}

impl NameMapping {
    /// Parse the JSON form; errors name the property.
    pub fn from_json(text: &str) -> Result<NameMapping> {
        let fields: Vec<MappedField> = serde_json::from_str(text).map_err(|e| {
            Error::invalid_data(format!(
                "table property '{DEFAULT_NAME_MAPPING_PROPERTY}' is not a valid name mapping"
            ))
            .with_source(e)
        })?;
        Ok(NameMapping { fields })
    }

    /// The top-level mapped field for a file column name.
    pub fn find(&self, name: &str) -> Option<&MappedField> {
        find_in(&self.fields, name)
    }
}

impl MappedField {
    /// The nested mapped field for a name.
    pub fn find(&self, name: &str) -> Option<&MappedField> {
        find_in(&self.fields, name)
    }
}

fn find_in<'a>(fields: &'a [MappedField], name: &str) -> Option<&'a MappedField> {
    fields.iter().find(|f| f.names.iter().any(|n| n == name))
}

/// The name mapping `text` (JSON) brought up to date with `schema` after a schema
/// change, as Iceberg Java's `SchemaUpdate` does through `MappingUtil.update`: a mapped
/// field whose name changed gets the new name added (the old names stay, since files
/// written before the rename use them); a field the mapping does not have, under a
/// mapped parent, gets a mapping of its current name. Mappings of dropped fields stay,
/// without the names a field of the schema has now (a dropped column's name taken by a
/// new one maps to the new one).
///
/// A name still mapped to a field the schema keeps (a column renamed, whose old name a
/// new or another renamed column takes) is not moved: Java moves it, and files without
/// field ids then read that column's values as the new column while their manifest
/// metrics stay keyed by the old field, so a filter on the renamed column pruned them by
/// values it no longer reads (`w IS NULL` dropped rows that read `w` null). Such a change
/// is refused instead.
///
/// Errors: `text` is not a name mapping (naming the property); a name mapped to a kept
/// field given to another ([`crate::ErrorKind::InvalidArgument`], naming both fields).
pub fn update_name_mapping(text: &str, schema: &Schema) -> Result<String> {
    let mut mapping: Vec<JsonValue> = serde_json::from_str(text).map_err(|e| {
        Error::invalid_data(format!(
            "table property '{DEFAULT_NAME_MAPPING_PROPERTY}' is not a valid name mapping"
        ))
        .with_source(e)
    })?;
    let top: Vec<&NestedField> = schema.columns().iter().collect();
    update_level(&mut mapping, &top, "")?;
    serde_json::to_string(&mapping)
        .map_err(|e| Error::invalid_data("cannot write the updated name mapping").with_source(e))
}

/// The fields nested directly in `field`: a struct's fields, a list's element, a map's
/// key and value (named `element`, `key`, `value` in a mapping).
fn children(field: &NestedField) -> Vec<&NestedField> {
    match field.field_type.as_ref() {
        Type::Struct(s) => s.fields.iter().collect(),
        Type::List(l) => vec![&l.element_field],
        Type::Map(m) => vec![&m.key_field, &m.value_field],
        Type::Primitive(_) => vec![],
    }
}

fn update_level(mapped: &mut Vec<JsonValue>, fields: &[&NestedField], parent: &str) -> Result<()> {
    for f in fields {
        let id = JsonValue::from(f.id);
        match mapped.iter_mut().find(|m| m.get("field-id") == Some(&id)) {
            Some(entry) => {
                let name = JsonValue::from(f.name.as_str());
                if let Some(names) = entry.get_mut("names").and_then(JsonValue::as_array_mut) {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                let nested = children(f);
                if nested.is_empty() {
                    continue;
                }
                if let Some(o) = entry.as_object_mut() {
                    let slot = o
                        .entry("fields")
                        .or_insert_with(|| JsonValue::Array(vec![]));
                    if let Some(list) = slot.as_array_mut() {
                        update_level(list, &nested, &format!("{parent}{}.", f.name))?;
                    }
                }
            }
            None => mapped.push(new_mapping(f)),
        }
    }
    // A name belongs to the field that has it now: a field dropped (or renamed) whose
    // old name a new or renamed field took loses it, as in Java's `MappingUtil.update`;
    // otherwise a file column of that name would map to two ids, and read as the old one.
    for f in fields {
        let (id, name) = (JsonValue::from(f.id), JsonValue::from(f.name.as_str()));
        for entry in mapped.iter_mut() {
            if entry.get("field-id") == Some(&id) {
                continue;
            }
            let Some(names) = entry.get_mut("names").and_then(JsonValue::as_array_mut) else {
                continue;
            };
            if !names.contains(&name) {
                continue;
            }
            let holder = entry.get("field-id").and_then(JsonValue::as_i64);
            if let Some(kept) = fields.iter().find(|k| Some(i64::from(k.id)) == holder) {
                return Err(Error::invalid_argument(format!(
                    "column '{parent}{}' (field id {}) cannot take the name '{}': the table's \
                     name mapping ('{DEFAULT_NAME_MAPPING_PROPERTY}') maps it to column \
                     '{parent}{}' (field id {}) for files without field ids (added by \
                     add_files or migrated), whose values under that name would then read as \
                     the new column while their metrics stay with the old one; choose another \
                     name, or rewrite those files (rewrite_data_files) and remove the name \
                     from the mapping",
                    f.name, f.id, f.name, kept.name, kept.id
                )));
            }
            if let Some(names) = entry.get_mut("names").and_then(JsonValue::as_array_mut) {
                names.retain(|n| n != &name);
            }
        }
    }
    mapped.retain(|entry| {
        entry
            .get("names")
            .and_then(JsonValue::as_array)
            .is_none_or(|names| !names.is_empty())
    });
    Ok(())
}

fn new_mapping(f: &NestedField) -> JsonValue {
    let nested: Vec<JsonValue> = children(f).into_iter().map(new_mapping).collect();
    let mut o = serde_json::Map::new();
    o.insert("field-id".into(), f.id.into());
    o.insert(
        "names".into(),
        vec![JsonValue::from(f.name.as_str())].into(),
    );
    if !nested.is_empty() {
        o.insert("fields".into(), nested.into());
    }
    JsonValue::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_finds() {
        let m = NameMapping::from_json(
            r#"[{"field-id": 1, "names": ["id", "record_id"]},
                {"field-id": 2, "names": ["loc"], "fields": [{"field-id": 3, "names": ["lat"]}]},
                {"names": ["ignored"]}]"#,
        )
        .unwrap();
        assert_eq!(m.find("record_id").and_then(|f| f.field_id), Some(1));
        assert_eq!(
            m.find("loc")
                .and_then(|f| f.find("lat"))
                .and_then(|f| f.field_id),
            Some(3)
        );
        assert_eq!(m.find("ignored").and_then(|f| f.field_id), None);
        assert!(m.find("other").is_none());
        assert!(NameMapping::from_json("{").is_err());
    }

    #[test]
    fn updates_for_renamed_and_added_fields() {
        use crate::spec::{PrimitiveType, StructType};
        let text = r#"[{"field-id": 1, "names": ["id"]},
            {"field-id": 2, "names": ["loc"], "fields": [{"field-id": 3, "names": ["lat"]}]},
            {"field-id": 9, "names": ["dropped"]}]"#;
        let int = || Type::Primitive(PrimitiveType::Int);
        let schema = Schema::new(
            1,
            vec![
                NestedField::optional(1, "key", int()),
                NestedField::optional(
                    2,
                    "loc",
                    Type::Struct(StructType::new(vec![
                        NestedField::optional(3, "lat", int()),
                        NestedField::optional(10, "lon", int()),
                    ])),
                ),
                NestedField::optional(11, "new", int()),
            ],
        );
        let updated = update_name_mapping(text, &schema).unwrap();
        let m = NameMapping::from_json(&updated).unwrap();
        // the old name still maps (files written before the rename), and the new one
        assert_eq!(m.find("id").and_then(|f| f.field_id), Some(1));
        assert_eq!(m.find("key").and_then(|f| f.field_id), Some(1));
        assert_eq!(
            m.find("loc")
                .and_then(|f| f.find("lon"))
                .and_then(|f| f.field_id),
            Some(10)
        );
        assert_eq!(m.find("new").and_then(|f| f.field_id), Some(11));
        assert_eq!(m.find("dropped").and_then(|f| f.field_id), Some(9));
        // a new column named as the dropped one takes its name (a tester's D2: the name
        // mapped to both ids, and an imported file's values read as the dropped column)
        let again = Schema::new(
            2,
            vec![
                NestedField::optional(1, "key", int()),
                NestedField::optional(12, "dropped", int()),
            ],
        );
        let m = NameMapping::from_json(&update_name_mapping(&updated, &again).unwrap()).unwrap();
        assert_eq!(m.find("dropped").and_then(|f| f.field_id), Some(12));
        assert_eq!(m.find("id").and_then(|f| f.field_id), Some(1));
        assert_eq!(m.find("key").and_then(|f| f.field_id), Some(1));
        // the old name of a column the schema keeps (1: `id`, now `key`) is not given to a
        // new column: files without ids would read their `id` as column 13 while their
        // metrics stay with column 1
        let taken = Schema::new(
            3,
            vec![
                NestedField::optional(1, "key", int()),
                NestedField::optional(13, "id", int()),
            ],
        );
        let err = update_name_mapping(&updated, &taken)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'id' (field id 13)") && err.contains("'key' (field id 1)"),
            "{err}"
        );
        let ids: Vec<Option<i32>> = m.fields.iter().map(|f| f.field_id).collect();
        assert!(!ids.contains(&Some(9)), "{ids:?}");
        assert!(update_name_mapping("{", &schema).is_err());
    }
}
