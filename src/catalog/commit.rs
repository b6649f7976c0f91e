//! The part of a commit every catalog shares: check the commit's requirements against
//! the table's current metadata, apply its updates with [`TableMetadataBuilder`], and
//! write the new metadata file — before the catalog swaps its pointer (spec: "Commit
//! Conflict Resolution and Retry"; REST `CommitTableRequest`).
//!
//! New metadata files are named as Iceberg Java and PyIceberg name them,
//! `<location>/metadata/<NNNNN>-<uuid>.metadata.json` with the version one above the
//! base's, under `write.metadata.path` when that property is set; the filesystem catalog
//! names them `v<N>.metadata.json` instead. A file is written with create-if-absent, so
//! two writers never overwrite each other's metadata.

use std::collections::HashMap;

use bytes::Bytes;

use super::TableIdent;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::sort_order::SortOrder;
use crate::spec::{
    FormatVersion, PartitionSpec, Schema, TableCommit, TableMetadata, TableMetadataBuilder,
};
use crate::table::{metadata_file_version, Table};
use crate::write::table_metadata_to_json;

/// Table property: where new metadata files go (default `<location>/metadata`).
pub const METADATA_PATH: &str = "write.metadata.path";

/// What a new table is made of (REST `CreateTableRequest`).
#[derive(Debug, Clone)]
pub struct TableCreation {
    /// The table location; `None`: the catalog's default for the name.
    pub location: Option<String>,
    /// The schema, field ids assigned.
    pub schema: Schema,
    /// The partition spec, field ids assigned (`PartitionSpec::unpartitioned()` for none).
    pub partition_spec: PartitionSpec,
    /// The sort order (order id 0 with no fields for unsorted).
    pub sort_order: SortOrder,
    /// Table properties (`format-version` is read from here: 1, 2 or 3; default 2).
    pub properties: HashMap<String, String>,
}

impl TableCreation {
    /// An unpartitioned, unsorted table of `schema`.
    pub fn new(schema: Schema) -> Self {
        Self {
            location: None,
            schema,
            partition_spec: PartitionSpec::unpartitioned(),
            sort_order: SortOrder {
                order_id: 0,
                fields: vec![],
            },
            properties: HashMap::new(),
        }
    }

    /// The metadata of the new table at `location`. The `format-version` property
    /// picks the format version and is not stored as a property.
    ///
    /// Errors: a `format-version` other than 1, 2, 3; a location other engines would not
    /// read ([`check_table_location`](crate::io::check_table_location): an object store
    /// location holding `#` or `?`, `az://`); the builder's checks.
    pub fn to_metadata(&self, location: &str) -> Result<TableMetadata> {
        crate::io::check_table_location("table location", location)?;
        crate::table_properties::validate_all(&self.properties)?;
        crate::write::metrics_config::check_metrics_columns(
            &self.properties,
            &self.schema,
            |_| true,
        )?;
        let mut properties = self.properties.clone();
        let version =
            crate::table_properties::format_version(&properties)?.unwrap_or(FormatVersion::V2);
        properties.remove(crate::table_properties::FORMAT_VERSION.name);
        crate::transaction::check_reserved_not_given(properties.keys())?;
        TableMetadataBuilder::new_table(
            version,
            location,
            self.schema.clone(),
            self.partition_spec.clone(),
            self.sort_order.clone(),
            properties,
        )?
        .build()
    }
}

/// `<metadata dir>/<NNNNN>-<uuid>.metadata.json` for the version after `base_location`'s.
pub(crate) fn next_metadata_location(
    metadata: &TableMetadata,
    base_location: Option<&str>,
) -> String {
    let version = base_location
        .and_then(metadata_file_version)
        .map_or(0, |v| v + 1);
    format!(
        "{}/{version:05}-{}.metadata.json",
        metadata_dir(metadata),
        uuid::Uuid::new_v4()
    )
}

/// Where a table's metadata files go.
pub(crate) fn metadata_dir(metadata: &TableMetadata) -> String {
    match metadata.properties.get(METADATA_PATH) {
        Some(p) => p.trim_end_matches('/').to_string(),
        None => format!("{}/metadata", metadata.location),
    }
}

/// Check `commit`'s requirements against `base`, apply its updates and return the new
/// metadata (not yet written).
///
/// Errors: [`ErrorKind::CommitConflict`] from a failed requirement (naming it), the
/// builder's errors for an update that breaks a rule.
pub(crate) fn apply_commit(base: &Table, commit: &TableCommit) -> Result<TableMetadata> {
    for r in &commit.requirements {
        r.check(Some(base.metadata()))?;
    }
    let mut builder =
        TableMetadataBuilder::from_base(base.metadata().clone(), Some(base.metadata_location()));
    builder.apply_all(&commit.updates)?;
    builder.build()
}

/// The table a staged create commits (REST `updateTable` with `assert-create`):
/// `commit`'s requirements checked against a missing table, its updates applied to
/// `staged` (from [`Catalog::stage_create_table`](super::Catalog::stage_create_table)),
/// at `staged`'s metadata location (no previous file is logged). Nothing is written.
///
/// Errors: a requirement other than `assert-create` ([`ErrorKind::NotFound`]: it needs
/// an existing table); the builder's errors for an update that breaks a rule.
pub(crate) fn apply_create(staged: &Table, commit: &TableCommit) -> Result<Table> {
    for r in &commit.requirements {
        r.check(None)?;
    }
    let mut builder = TableMetadataBuilder::from_base(staged.metadata().clone(), None);
    builder.apply_all(&commit.updates)?;
    Ok(staged.with_metadata(builder.build()?, staged.metadata_location()))
}

/// Write `metadata` as a new file at `location` (create-if-absent) and return the table
/// it makes, reading through `base`'s FileIO (or a fresh one).
///
/// Errors: [`ErrorKind::CommitConflict`] when another writer created that file first;
/// I/O errors naming the file.
pub(crate) async fn write_metadata_file(
    io: &crate::io::FileIO,
    metadata: &TableMetadata,
    location: &str,
) -> Result<()> {
    let json = table_metadata_to_json(metadata)?;
    let written = match io.write_new(location, Bytes::from(json)).await {
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(Error::new(
            ErrorKind::CommitConflict,
            format!("metadata file '{location}' was written by another commit first"),
        )
        .with_source(e)),
        other => other,
    };
    crate::failpoint::hit("after-metadata-file");
    written
}

/// After a commit: when `write.metadata.delete-after-commit.enabled` is true, delete the
/// metadata files `base` logged that `committed` no longer does (best effort: a file left
/// behind is an orphan, never a broken table).
pub(crate) async fn delete_dropped_metadata(
    base: &TableMetadata,
    committed: &TableMetadata,
    io: &crate::io::FileIO,
) {
    // after the commit landed: a value that is not a boolean (written by another engine)
    // reads as false, as Java's `Boolean.parseBoolean` does
    let enabled = crate::table_properties::METADATA_DELETE_AFTER_COMMIT_ENABLED
        .bool(&committed.properties)
        .ok()
        .flatten()
        .unwrap_or(false);
    if !enabled {
        return;
    }
    let kept: std::collections::HashSet<&str> = committed
        .metadata_log
        .iter()
        .map(|e| e.metadata_file.as_str())
        .collect();
    for e in &base.metadata_log {
        if !kept.contains(e.metadata_file.as_str()) {
            let _ = io.delete(&e.metadata_file).await;
        }
    }
}

/// The error for a write to a catalog that cannot take it.
pub(crate) fn read_only(catalog: &str, kind: &str, what: &str) -> Error {
    Error::unsupported(format!(
        "{what} in catalog '{catalog}': a {kind} catalog is read-only"
    ))
}

/// The default location of a table under a warehouse: `<warehouse>/<ns levels…>/<name>`
/// (Iceberg Java's `JdbcCatalog` / `HadoopCatalog` layout).
///
/// Errors: [`ErrorKind::InvalidArgument`] when a namespace level or the name cannot be
/// a directory there ([`check_directory_name`]).
pub(crate) fn default_table_location(warehouse: &str, ident: &TableIdent) -> Result<String> {
    let mut loc = warehouse.trim_end_matches('/').to_string();
    for l in ident.namespace.levels() {
        check_directory_name("namespace", l)?;
        loc.push('/');
        loc.push_str(l);
    }
    check_directory_name("table", &ident.name)?;
    loc.push('/');
    loc.push_str(&ident.name);
    Ok(loc)
}

/// A namespace level or table name (`what`) that becomes a directory of the warehouse
/// must be one directory: not empty, `.` or `..` (which would put a table's files in the
/// warehouse root or a namespace's directory, where `remove_orphan_files` and a
/// `DROP … PURGE` then reach every table) and without `/` (two names would share a
/// directory). Errors: [`ErrorKind::InvalidArgument`] naming the name.
pub(crate) fn check_directory_name(what: &str, name: &str) -> Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(Error::invalid_argument(format!(
            "{what} name '{name}' cannot be a directory of the warehouse: a name the \
             catalog makes a directory of must not be empty, '.' or '..', nor hold '/'"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_names() {
        assert_eq!(
            metadata_file_version("file:///t/metadata/v12.metadata.json"),
            Some(12)
        );
        assert_eq!(
            metadata_file_version("/t/metadata/00003-3d7164b9-8728.metadata.json"),
            Some(3)
        );
        let m = TableCreation::new(Schema::new(0, vec![]))
            .to_metadata("file:///w/t")
            .unwrap();
        let next = next_metadata_location(&m, Some("file:///w/t/metadata/00007-x.metadata.json"));
        assert!(next.starts_with("file:///w/t/metadata/00008-"), "{next}");
        assert_eq!(metadata_file_version(&next), Some(8));
        let first = next_metadata_location(&m, None);
        assert!(first.starts_with("file:///w/t/metadata/00000-"), "{first}");
    }

    #[test]
    fn format_version_property() {
        let mut c = TableCreation::new(Schema::new(0, vec![]));
        c.properties.insert("format-version".into(), "3".into());
        let m = c.to_metadata("file:///w/t").unwrap();
        assert_eq!(m.format_version, FormatVersion::V3);
        assert!(!m.properties.contains_key("format-version"));
        c.properties.insert("format-version".into(), "4".into());
        assert!(c.to_metadata("file:///w/t").is_err());
    }

    /// What Java's `Schema`, `PartitionSpec.checkCompatibility`, `SortOrder` and
    /// `Transforms` refuse is refused when a table is created, naming the field.
    #[test]
    fn invalid_metadata_is_refused_at_create() {
        use crate::spec::sort_order::{NullOrder, SortDirection, SortField};
        use crate::spec::{
            NestedField, PartitionField, PrimitiveType, StructType, Transform, Type,
        };
        let long = || Type::Primitive(PrimitiveType::Long);
        let schema = || {
            Schema::new(
                0,
                vec![
                    NestedField::optional(1, "id", long()),
                    NestedField::optional(
                        2,
                        "st",
                        Type::Struct(StructType::new(vec![NestedField::optional(3, "x", long())])),
                    ),
                ],
            )
        };
        let refused = |c: TableCreation, needle: &str| {
            let e = c.to_metadata("file:///w/t").unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
            assert!(e.to_string().contains(needle), "{e}");
        };
        let part = |source_id, transform| {
            let mut c = TableCreation::new(schema());
            c.partition_spec = PartitionSpec {
                spec_id: 0,
                fields: vec![PartitionField {
                    source_id,
                    field_id: Some(1000),
                    name: "p".into(),
                    transform,
                }],
            };
            c
        };
        refused(
            part(2, Transform::Identity),
            "partition spec 0: field 'p': cannot partition by column 'st' (id 2) of non-primitive \
             type",
        );
        refused(
            part(2, Transform::Bucket(4)),
            "cannot partition by column 'st'",
        );
        refused(
            part(1, Transform::Bucket(0)),
            "partition spec 0: field 'p': invalid transform bucket[0]",
        );
        refused(
            part(1, Transform::Truncate(0)),
            "invalid transform truncate[0]",
        );
        refused(
            part(1, Transform::Day),
            "transform day cannot apply to column 'id'",
        );
        assert!(part(1, Transform::Bucket(4))
            .to_metadata("file:///w/t")
            .is_ok());

        let dup = TableCreation::new(Schema::new(
            0,
            vec![
                NestedField::optional(1, "id", long()),
                NestedField::optional(1, "dup", long()),
            ],
        ));
        refused(dup, "field id 1 is used by both 'id' and 'dup'");

        let sorted = |transform| {
            let mut c = TableCreation::new(schema());
            c.sort_order = SortOrder {
                order_id: 1,
                fields: vec![SortField {
                    transform,
                    source_id: 1,
                    direction: SortDirection::Desc,
                    null_order: NullOrder::Last,
                }],
            };
            c
        };
        refused(
            sorted(Transform::Bucket(0)),
            "sort order 1: field bucket[0] 1: invalid transform",
        );
        let m = sorted(Transform::Identity)
            .to_metadata("file:///w/t")
            .unwrap();
        let json = serde_json::to_string(&m.sort_orders[0]).unwrap();
        assert!(
            json.contains(r#""direction":"desc","null-order":"nulls-last""#),
            "{json}"
        );
        // direction and null order are the spec's words (read in any case, as Java)
        for (direction, null_order, ok) in [
            ("asc", "nulls-first", true),
            ("DESC", "NULLS-LAST", true),
            ("sideways", "nulls-first", false),
            ("asc", "whatever", false),
        ] {
            let text = format!(
                r#"{{"order-id":1,"fields":[{{"transform":"identity","source-id":1,"direction":"{direction}","null-order":"{null_order}"}}]}}"#
            );
            let parsed = serde_json::from_str::<SortOrder>(&text);
            assert_eq!(parsed.is_ok(), ok, "{text}: {parsed:?}");
        }
    }
}
