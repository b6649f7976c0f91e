//! `ReplaceTable`: a table's schema, partition spec, sort order and properties replaced
//! and its current state emptied, its history kept (Iceberg Java's
//! `TableMetadata.buildReplacement` under `Catalog.newReplaceTableTransaction`; Spark's
//! `CREATE OR REPLACE TABLE` and `REPLACE TABLE [AS SELECT]`).
//!
//! What the replacement keeps and changes, as Java's:
//! - **Schema**: the new columns take the ids of the current schema's fields with the
//!   same full name (`a`, `s.x`, `l.element`, `m.key`), others fresh ids after
//!   `last-column-id` (`TypeUtil.assignFreshIds` with a base schema); the schema becomes
//!   current (an equal schema already in the table is reused).
//! - **Partition spec**: sources follow the new ids; a field with the source and
//!   transform of a field of any of the table's specs keeps that field's id, others take
//!   ids after `last-partition-id`; on v1 tables (positional partition tuples) every
//!   field of the current spec stays in place with its id, `void` when the new spec
//!   lacks it, and new fields follow; it becomes the default (an equal spec already in
//!   the table is reused). A kept column keeps its `initial-default` (set when a field
//!   is added).
//! - **Sort order**: unsorted (order 0) becomes the default.
//! - **Properties**: the statement's are set over the table's (`format-version` upgrades
//!   the table; a downgrade is refused). **Location**: changed when one is given.
//! - **Snapshots**: `main` is removed, so the table has no current snapshot until rows
//!   are appended in the same transaction (`AS SELECT`); every snapshot, other branch
//!   and tag stays, so time travel to the replaced table still reads it.
//!
//! Rows for `AS SELECT` are written against [`ReplaceTable::staged`] before the commit,
//! with the ids the replacement assigns; the commit re-checks that the table's schema
//! and partition ids did not move meanwhile (another writer's schema change would give
//! the replacement other ids), and fails without retrying when they did.

use std::collections::HashMap;

use async_trait::async_trait;

use super::TransactionAction;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::sort_order::SortOrder;
use crate::spec::{
    FormatVersion, NestedField, PartitionField, PartitionSpec, Schema, TableMetadata,
    TableMetadataBuilder, TableUpdate, Transform, Type, MAIN_BRANCH,
};
use crate::table::Table;

/// See the module docs.
#[derive(Debug, Clone)]
pub struct ReplaceTable {
    schema: Schema,
    spec: PartitionSpec,
    properties: HashMap<String, String>,
    location: Option<String>,
    /// (current schema id, last column id, last partition id) of the table the rows
    /// were staged against ([`Self::staged`]).
    staged_for: Option<(i32, i32, i32)>,
}

impl ReplaceTable {
    /// A replacement by `schema` (its own field ids, e.g. 1..n as `CREATE TABLE` plans
    /// them) partitioned by `spec` (sources by `schema`'s ids), with table `properties`
    /// set over the table's.
    pub fn new(schema: Schema, spec: PartitionSpec, properties: HashMap<String, String>) -> Self {
        Self {
            schema,
            spec,
            properties,
            location: None,
            staged_for: None,
        }
    }

    /// Move the table to `location` (Spark's `LOCATION` clause).
    pub fn with_location(mut self, location: Option<String>) -> Self {
        self.location = location.map(|l| l.trim_end_matches('/').to_string());
        self
    }

    /// `table` as this replacement leaves it, before anything is committed (its
    /// metadata location unchanged): rows written for `AS SELECT` use its schema and
    /// default spec. The commit then requires the table's schema and partition ids to be
    /// those of `table`.
    ///
    /// Errors: as [`Self::updates_for`].
    pub fn staged(&mut self, table: &Table) -> Result<Table> {
        let m = table.metadata();
        let updates = self.updates_for(m)?;
        let mut builder = TableMetadataBuilder::from_base(m.clone(), None);
        builder.apply_all(&updates)?;
        self.staged_for = Some((m.current_schema_id, m.last_column_id, m.last_partition_id));
        Ok(table.with_metadata(builder.metadata().clone(), table.metadata_location()))
    }

    /// The updates that replace the table described by `m` (see the module docs).
    ///
    /// Errors ([`ErrorKind::InvalidArgument`]): a `format-version` below the table's or
    /// not 1, 2 or 3; a reserved property (`uuid`, `snapshot-count`, …); a partition
    /// field whose source is not in the schema; a property value icefloe cannot use
    /// ([`validate_all`](crate::table_properties::validate_all)); a location other engines
    /// would not read ([`check_table_location`](crate::io::check_table_location)).
    pub fn updates_for(&self, m: &TableMetadata) -> Result<Vec<TableUpdate>> {
        let mut properties = self.properties.clone();
        super::check_reserved_not_given(properties.keys())?;
        crate::table_properties::validate_all(&properties)?;
        if let Some(location) = &self.location {
            crate::io::check_table_location("table location", location)?;
        }
        let mut out = vec![];
        let wanted = crate::table_properties::format_version(&properties)?;
        properties.remove(crate::table_properties::FORMAT_VERSION.name);
        if let Some(version) = wanted {
            if version < m.format_version {
                return Err(Error::invalid_argument(format!(
                    "table property 'format-version' is {}, below the table's {}: a \
                     replaced table keeps its format version or upgrades it",
                    version as i32, m.format_version as i32
                )));
            }
            if version > m.format_version {
                out.push(TableUpdate::UpgradeFormatVersion {
                    format_version: version as i32,
                });
            }
        }
        let base = m.current_schema();
        let mut last_id = m.last_column_id;
        let mut renumbered = HashMap::new();
        let columns = self
            .schema
            .columns()
            .iter()
            .map(|f| {
                let found = base.columns().iter().find(|b| b.name == f.name);
                reuse_ids(f, found, &mut last_id, &mut renumbered)
            })
            .collect::<Vec<_>>();
        let mut schema = Schema::new(0, columns);
        schema.schema_id = super::update_schema::schema_id_in(m, &schema);
        if m.schema_by_id(schema.schema_id).is_some() {
            out.push(TableUpdate::SetCurrentSchema {
                schema_id: schema.schema_id,
            });
        } else {
            out.push(TableUpdate::AddSchema { schema });
            out.push(TableUpdate::SetCurrentSchema { schema_id: -1 });
        }
        out.extend(self.spec_updates(m, &renumbered)?);
        if !m.sort_orders.iter().any(|o| o.order_id == 0) {
            out.push(TableUpdate::AddSortOrder {
                sort_order: SortOrder {
                    order_id: 0,
                    fields: vec![],
                },
            });
        }
        out.push(TableUpdate::SetDefaultSortOrder { sort_order_id: 0 });
        if let Some(location) = &self.location {
            if location != &m.location {
                out.push(TableUpdate::SetLocation {
                    location: location.clone(),
                });
            }
        }
        if !properties.is_empty() {
            out.push(TableUpdate::SetProperties {
                updates: properties.into_iter().collect(),
            });
        }
        if m.refs.contains_key(MAIN_BRANCH) || m.current_snapshot_id.is_some() {
            out.push(TableUpdate::RemoveSnapshotRef {
                ref_name: MAIN_BRANCH.to_string(),
            });
        }
        Ok(out)
    }

    /// The updates that make the new spec the default (`renumbered`: the statement's
    /// field ids → the table's).
    fn spec_updates(
        &self,
        m: &TableMetadata,
        renumbered: &HashMap<i32, i32>,
    ) -> Result<Vec<TableUpdate>> {
        let mut last_partition_id = m.last_partition_id.max(999);
        let mut wanted = Vec::with_capacity(self.spec.fields.len());
        for f in &self.spec.fields {
            let source_id = *renumbered.get(&f.source_id).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "partition field '{}': source field {} is not in the schema",
                    f.name, f.source_id
                ))
            })?;
            wanted.push(PartitionField {
                source_id,
                field_id: None,
                name: f.name.clone(),
                transform: f.transform.clone(),
            });
        }
        let mut fields = Vec::with_capacity(wanted.len());
        if m.format_version == FormatVersion::V1 {
            // v1 partition tuples are positional: every field of the current spec
            // stays where it is with its id, `void` when the new spec lacks it, and
            // new fields follow (Java's `reassignPartitionIds` for v1)
            let current = m
                .default_partition_spec()
                .cloned()
                .unwrap_or_else(PartitionSpec::unpartitioned);
            for (j, old) in current.fields.iter().enumerate() {
                let same = wanted
                    .iter()
                    .position(|w| w.source_id == old.source_id && w.transform == old.transform);
                let field = match same {
                    Some(i) => wanted.remove(i),
                    None => PartitionField {
                        transform: Transform::Void,
                        ..old.clone()
                    },
                };
                fields.push(PartitionField {
                    field_id: Some(current.field_id(j)),
                    ..field
                });
            }
        }
        for w in wanted {
            // a field of a source and transform some spec had keeps its id (v2+)
            let known = m
                .partition_specs
                .iter()
                .flat_map(|s| s.fields.iter().enumerate().map(move |(j, g)| (s, j, g)))
                .find(|(_, _, g)| g.source_id == w.source_id && g.transform == w.transform)
                .map(|(s, j, _)| s.field_id(j))
                .filter(|_| m.format_version != FormatVersion::V1);
            let field_id = match known {
                Some(id) => id,
                None => {
                    last_partition_id += 1;
                    last_partition_id
                }
            };
            fields.push(PartitionField {
                field_id: Some(field_id),
                ..w
            });
        }
        let mut spec = PartitionSpec { spec_id: 0, fields };
        spec.spec_id = super::update_partition_spec::spec_id_in(m, &spec);
        Ok(super::update_partition_spec::default_spec_updates(m, spec))
    }
}

/// `field` with the id of `base` (the current schema's field of the same full name)
/// when there is one, else the next id after `last_id`; its nested fields likewise,
/// matched by name within `base`. Records each id change in `renumbered`.
fn reuse_ids(
    field: &NestedField,
    base: Option<&NestedField>,
    last_id: &mut i32,
    renumbered: &mut HashMap<i32, i32>,
) -> NestedField {
    let id = match base {
        Some(b) => b.id,
        None => {
            *last_id += 1;
            *last_id
        }
    };
    renumbered.insert(field.id, id);
    let base_type = base.map(|b| b.field_type.as_ref());
    let field_type = match (field.field_type.as_ref(), base_type) {
        (Type::Struct(s), b) => {
            let base_fields = match b {
                Some(Type::Struct(bs)) => bs.fields.as_slice(),
                _ => &[],
            };
            let mut s = s.clone();
            s.fields = s
                .fields
                .iter()
                .map(|f| {
                    let found = base_fields.iter().find(|g| g.name == f.name);
                    reuse_ids(f, found, last_id, renumbered)
                })
                .collect();
            Type::Struct(s)
        }
        (Type::List(l), b) => {
            let found = match b {
                Some(Type::List(bl)) => Some(&bl.element_field),
                _ => None,
            };
            let mut l = l.clone();
            l.element_field = reuse_ids(&l.element_field, found, last_id, renumbered);
            Type::List(l)
        }
        (Type::Map(mt), b) => {
            let (key, value) = match b {
                Some(Type::Map(bm)) => (Some(&bm.key_field), Some(&bm.value_field)),
                _ => (None, None),
            };
            let mut mt = mt.clone();
            mt.key_field = reuse_ids(&mt.key_field, key, last_id, renumbered);
            mt.value_field = reuse_ids(&mt.value_field, value, last_id, renumbered);
            Type::Map(mt)
        }
        (t, _) => t.clone(),
    };
    // `initial-default` is set when a field is added (spec "Default values"): a field
    // kept by name keeps the table's, for the rows written before it
    let initial_default = match base {
        Some(b) => b.initial_default.clone(),
        None => field.initial_default.clone(),
    };
    NestedField {
        id,
        field_type: Box::new(field_type),
        initial_default,
        ..field.clone()
    }
}

#[async_trait]
impl TransactionAction for ReplaceTable {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        let m = table.metadata();
        if let Some(staged) = self.staged_for {
            if staged != (m.current_schema_id, m.last_column_id, m.last_partition_id) {
                return Err(Error::new(
                    ErrorKind::ValidationFailed,
                    "the table's schema or partition fields changed while it was being \
                     replaced: the replacement's rows were written with other field ids",
                ));
            }
        }
        self.updates_for(m)
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{ListType, PrimitiveType, StructType};

    fn field(id: i32, name: &str, ty: Type) -> NestedField {
        NestedField::optional(id, name, ty)
    }

    fn p(t: PrimitiveType) -> Type {
        Type::Primitive(t)
    }

    /// A v2 table (id long 1, s struct<x int 3, y string 4> 2, l list<int> 5/6),
    /// partitioned by bucket(8, id) as field 1000.
    fn table_metadata() -> TableMetadata {
        let schema = Schema::new(
            0,
            vec![
                field(1, "id", p(PrimitiveType::Long)),
                field(
                    2,
                    "s",
                    Type::Struct(StructType::new(vec![
                        field(3, "x", p(PrimitiveType::Int)),
                        field(4, "y", p(PrimitiveType::String)),
                    ])),
                ),
                field(
                    5,
                    "l",
                    Type::List(ListType {
                        element_field: field(6, "element", p(PrimitiveType::Int)),
                    }),
                ),
            ],
        );
        let spec = PartitionSpec {
            spec_id: 0,
            fields: vec![PartitionField {
                source_id: 1,
                field_id: Some(1000),
                name: "id_bucket".into(),
                transform: Transform::Bucket(8),
            }],
        };
        TableMetadataBuilder::new_table(
            FormatVersion::V2,
            "file:///t",
            schema,
            spec,
            SortOrder {
                order_id: 0,
                fields: vec![],
            },
            HashMap::from([("a".to_string(), "1".to_string())]),
        )
        .and_then(|b| b.build())
        .expect("metadata")
    }

    fn apply(m: &TableMetadata, r: &ReplaceTable) -> TableMetadata {
        let mut b = TableMetadataBuilder::from_base(m.clone(), None);
        b.apply_all(&r.updates_for(m).expect("updates"))
            .expect("apply");
        b.metadata().clone()
    }

    #[test]
    fn columns_of_the_same_name_keep_their_ids_and_new_ones_follow_the_last() {
        let m = table_metadata();
        // new schema as CREATE TABLE plans it: ids 1..n
        let new = Schema::new(
            0,
            vec![
                field(1, "z", p(PrimitiveType::Double)),
                field(
                    2,
                    "s",
                    Type::Struct(StructType::new(vec![
                        field(3, "y", p(PrimitiveType::String)),
                        field(4, "w", p(PrimitiveType::Int)),
                    ])),
                ),
                field(5, "id", p(PrimitiveType::Long)),
            ],
        );
        let spec = PartitionSpec {
            spec_id: 0,
            fields: vec![
                PartitionField {
                    source_id: 5,
                    field_id: Some(1000),
                    name: "id_bucket".into(),
                    transform: Transform::Bucket(8),
                },
                PartitionField {
                    source_id: 1,
                    field_id: Some(1001),
                    name: "z".into(),
                    transform: Transform::Identity,
                },
            ],
        };
        let r = ReplaceTable::new(new, spec, HashMap::from([("b".into(), "2".into())]));
        let out = apply(&m, &r);
        let s = out.current_schema();
        let ids: Vec<(String, i32)> = s.columns().iter().map(|f| (f.name.clone(), f.id)).collect();
        assert_eq!(
            ids,
            [
                ("z".to_string(), 7),
                ("s".to_string(), 2),
                ("id".to_string(), 1)
            ]
        );
        let Type::Struct(st) = s.columns()[1].field_type.as_ref() else {
            panic!("struct");
        };
        let nested: Vec<i32> = st.fields.iter().map(|f| f.id).collect();
        assert_eq!(nested, [4, 8], "y keeps 4, w is new");
        assert_eq!(out.last_column_id, 8);
        assert_eq!(s.schema_id, 1);
        // bucket(8, id) keeps field 1000 (source now id 1 still), z is new: 1001
        let spec = out.default_partition_spec().expect("spec");
        assert_eq!(spec.spec_id, 1);
        let fields: Vec<(i32, i32)> = spec
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.source_id, spec.field_id(i)))
            .collect();
        assert_eq!(fields, [(1, 1000), (7, 1001)]);
        // main removed, history kept, properties merged
        assert_eq!(out.current_snapshot_id, None);
        assert_eq!(out.properties.get("a").map(String::as_str), Some("1"));
        assert_eq!(out.properties.get("b").map(String::as_str), Some("2"));
        assert_eq!(out.default_sort_order_id, 0);
    }

    #[test]
    fn v1_keeps_every_partition_field_in_place_voiding_the_dropped() {
        let mut m = table_metadata();
        m.format_version = FormatVersion::V1;
        // new spec (truncate(2, y) of s.y, bucket(8, id)): bucket(8, id) keeps 1000 in
        // place, truncate is new (1001); replacing by (truncate) alone voids 1000
        let schema = m.current_schema().clone();
        let truncate = PartitionField {
            source_id: 4,
            field_id: Some(1000),
            name: "y_trunc".into(),
            transform: Transform::Truncate(2),
        };
        let bucket = PartitionField {
            source_id: 1,
            field_id: Some(1001),
            name: "id_bucket".into(),
            transform: Transform::Bucket(8),
        };
        let both = PartitionSpec {
            spec_id: 0,
            fields: vec![truncate.clone(), bucket],
        };
        let out = apply(&m, &ReplaceTable::new(schema.clone(), both, HashMap::new()));
        let spec = out.default_partition_spec().expect("spec");
        let got: Vec<(String, i32, Transform)> = spec
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name.clone(), spec.field_id(i), f.transform.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("id_bucket".to_string(), 1000, Transform::Bucket(8)),
                ("y_trunc".to_string(), 1001, Transform::Truncate(2))
            ]
        );
        let alone = PartitionSpec {
            spec_id: 0,
            fields: vec![truncate],
        };
        let out = apply(&m, &ReplaceTable::new(schema, alone, HashMap::new()));
        let spec = out.default_partition_spec().expect("spec");
        let got: Vec<(i32, Transform)> = spec
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| (spec.field_id(i), f.transform.clone()))
            .collect();
        assert_eq!(
            got,
            [(1000, Transform::Void), (1001, Transform::Truncate(2))]
        );
    }

    #[test]
    fn the_same_schema_and_spec_are_reused_and_a_downgrade_is_refused() {
        let m = table_metadata();
        let same = m.current_schema().clone();
        let spec = m.default_partition_spec().expect("spec").clone();
        let r = ReplaceTable::new(same, spec, HashMap::new());
        let out = apply(&m, &r);
        assert_eq!(out.schemas.len(), 1);
        assert_eq!(out.partition_specs.len(), 1);
        assert_eq!(out.last_column_id, m.last_column_id);
        let down = ReplaceTable::new(
            m.current_schema().clone(),
            PartitionSpec::unpartitioned(),
            HashMap::from([("format-version".into(), "1".into())]),
        );
        let e = down.updates_for(&m).expect_err("downgrade");
        assert!(e.to_string().contains("below the table's 2"), "{e}");
        // blanks around the version: refused, as Java's Integer.parseInt refuses them
        let blank = ReplaceTable::new(
            m.current_schema().clone(),
            PartitionSpec::unpartitioned(),
            HashMap::from([("format-version".into(), " 3".into())]),
        );
        let e = blank.updates_for(&m).expect_err("blank");
        assert!(
            e.to_string()
                .contains("table property 'format-version' is ' 3' (expected 1, 2 or 3)"),
            "{e}"
        );
        let up = ReplaceTable::new(
            m.current_schema().clone(),
            PartitionSpec::unpartitioned(),
            HashMap::from([("format-version".into(), "3".into())]),
        );
        let out = apply(&m, &up);
        assert_eq!(out.format_version, FormatVersion::V3);
        assert!(!out.properties.contains_key("format-version"));
        assert!(out
            .default_partition_spec()
            .expect("spec")
            .fields
            .is_empty());
    }
}
