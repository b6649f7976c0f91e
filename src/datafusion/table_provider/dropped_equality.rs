//! Equality deletes on columns the schema being read no longer has.
//!
//! An equality delete file names its delete columns by field id (spec: "Equality Delete
//! Files"), and which rows it deletes is fixed when it is committed: dropping one of its
//! columns later (`ALTER TABLE … DROP COLUMN`, any engine) changes neither. So a scan whose
//! schema (the current one, or a time-travel snapshot's) lacks such a column still applies
//! the delete: the column is read from the data files by its field id, typed as the newest
//! schema of the table that has it, matched against the delete keys and left out of the
//! scan's output, as Iceberg Java (1.11, `DeleteFilter` over the table's schema history),
//! iceberg-go and Trino do.

use std::sync::Arc;

use crate::datafusion::delete_planning::EqualityDeleteFile;
use crate::error::Result;
use crate::spec::{NestedField, Schema};

use super::hidden::Hidden;
use super::IcebergTableProvider;

/// The name a dropped equality column is read under (never shown): the prefix, its
/// field id, and underscores until no column of the schema has the name.
const DROPPED_COLUMN_PREFIX: &str = "_icefloe_dropped_equality_field_";

impl IcebergTableProvider {
    /// This provider with the top-level columns that `files`' equality ids name and its
    /// schema lacks appended after its columns (each optional, typed as the newest table
    /// schema holding it as a top-level column, under a name no column has), or `None`
    /// when the schema has them all. The appended columns follow the provider's columns,
    /// so projections of its columns keep their indices; its metadata columns (for
    /// `hidden`) are kept as the provider's own schema gives them.
    ///
    /// An id no schema has as a top-level column (a nested delete column) is left out:
    /// the scan then refuses it, naming the delete file.
    ///
    /// Errors: the widened schema cannot be converted to Arrow (a type the provider's
    /// own schema could not hold either).
    pub(super) fn with_dropped_equality_columns(
        &self,
        files: &[EqualityDeleteFile],
        hidden: Hidden,
    ) -> Result<Option<Self>> {
        let metadata = self.table.metadata();
        let schemas = metadata.schemas_newest_first();
        let mut added: Vec<NestedField> = vec![];
        for file in files {
            for id in &file.entry.data_file.equality_ids {
                let known = self.schema.columns().iter().any(|c| c.id == *id)
                    || added.iter().any(|c| c.id == *id);
                if known {
                    continue;
                }
                let Some(field) = schemas
                    .iter()
                    .find_map(|s| s.columns().iter().find(|c| c.id == *id))
                else {
                    continue;
                };
                let mut field = field.clone();
                field.required = false;
                field.name = format!("{DROPPED_COLUMN_PREFIX}{id}");
                while self.schema.field_by_name(&field.name).is_some() {
                    field.name.push('_');
                }
                added.push(field);
            }
        }
        if added.is_empty() {
            return Ok(None);
        }
        let mut widened = self.clone();
        if hidden == Hidden::Metadata && widened.metadata_columns.is_none() {
            // named against the columns the user sees, as the provider's own scan names them
            widened.set_metadata_columns();
        }
        let mut columns = self.schema.columns().to_vec();
        columns.extend(added);
        let mut schema = Schema::new(self.schema.schema_id, columns);
        schema.identifier_field_ids = self.schema.identifier_field_ids.clone();
        widened.arrow_schema = Arc::new(super::arrow_schema(&schema, self.view_types)?);
        widened.schema = Arc::new(schema);
        Ok(Some(widened))
    }
}
