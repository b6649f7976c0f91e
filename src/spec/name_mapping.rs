//! Name mapping: field ids for data files written without them.
//!
//! Source: Iceberg spec, "Column Projection" and Appendix C ("Name Mapping Serialization").
//! The table property `schema.name-mapping.default` holds a JSON list of mapped fields,
//! each `{"field-id": 1, "names": ["id", "record_id"], "fields": [...]}`; a file column
//! whose name is one of `names` has that field id. Nested `fields` map struct fields,
//! list elements (`element`) and map keys and values (`key`, `value`).

use serde::Deserialize;

use crate::error::{Error, Result};

/// The table property holding the default name mapping.
pub const DEFAULT_NAME_MAPPING_PROPERTY: &str = "schema.name-mapping.default";

/// One mapped field: the names it may have in files, its id and its nested fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct MappedField {
    /// The field id (absent: the names are known to map to no field).
    #[serde(default)]
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
}
