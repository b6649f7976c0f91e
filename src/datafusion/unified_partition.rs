//! The table's *unified* partition type (Iceberg Java's `Partitioning.partitionType`):
//! the `partition` struct of the `files`, `entries` and `partitions` metadata tables and
//! the `_partition` metadata column.
//!
//! Every partition field of every spec whose source column one of the table's schemas
//! types (a field whose source column was dropped stays, typed by the newest schema that
//! has it, so its files' values stay readable: Java's `partitionType` leaves such fields
//! out; a field no schema types is left out here too), one struct field each, ordered by
//! partition field id. A field is named as the latest spec holding it names it (a v1
//! field dropped and replaced by a new field of its name is renamed `name_<field id>`
//! there, as Java's `BaseUpdatePartitionSpec` does), and typed by its transform's result
//! (a v1 field dropped into `void` keeps the type it had). A file written under a spec
//! without a field has null there.
//!
//! Names are made unique: a v2+ table may give a new field the name of one dropped from
//! an earlier spec (Java allows it and its unified type then holds two fields of one
//! name, which Spark refuses to resolve as ambiguous). Here the field named by the latest
//! spec keeps the name and the older one is named `name_<field id>`, so that
//! `partition.name` means the field of the latest spec and no reference is ambiguous.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};

use datafusion::arrow::datatypes::{DataType, Field};

use super::metadata_tables::partition_types_by_spec;
use crate::spec::arrow::{primitive_to_arrow, with_uuid_extension};
use crate::spec::{Literal, ManifestEntry, PrimitiveType, TableMetadata, Transform};

/// One field of the unified partition type.
#[derive(Debug)]
pub(crate) struct UnifiedField {
    /// The partition field id.
    pub field_id: i32,
    /// The struct field's name (unique in the type).
    pub name: String,
    /// The transform's result type (`Null` when it cannot be told).
    pub data_type: DataType,
    /// The same as an Iceberg type (`None` when it cannot be told), the type of the
    /// field's values in manifests.
    pub primitive: Option<PrimitiveType>,
}

impl UnifiedField {
    /// The field's Arrow field (nullable: a file of a spec without the field has null
    /// there), a `uuid` field tagged as the table's `uuid` columns are
    /// ([`with_uuid_extension`]).
    pub fn arrow_field(&self) -> Field {
        let field = Field::new(&self.name, self.data_type.clone(), true);
        match &self.primitive {
            Some(p) => with_uuid_extension(field, p),
            None => field,
        }
    }
}

/// A field while the specs are read, latest first.
struct Seen {
    name: String,
    /// The spec the name is taken from (the latest holding the field).
    named_by: i32,
    data_type: DataType,
    primitive: Option<PrimitiveType>,
    void: bool,
}

/// The unified partition type of the table (see the module docs).
pub(crate) fn unified_partition_type(metadata: &TableMetadata) -> Vec<UnifiedField> {
    let types = partition_types_by_spec(metadata);
    let mut specs: Vec<_> = metadata.partition_specs.iter().collect();
    specs.sort_by_key(|s| std::cmp::Reverse(s.spec_id));
    let mut seen: BTreeMap<i32, Seen> = BTreeMap::new();
    for spec in specs {
        for (i, f) in spec.fields.iter().enumerate() {
            // a field whose source column was dropped keeps the type an older schema
            // gives it (its files' values stay readable); with no schema left holding its
            // source, it is left out
            let void = f.transform == Transform::Void;
            let primitive = types.get(&spec.spec_id).and_then(|t| t.get(i)).copied();
            let data_type = primitive
                .as_ref()
                .and_then(|p| primitive_to_arrow(p).ok())
                .unwrap_or(DataType::Null);
            if data_type == DataType::Null && !void {
                continue;
            }
            match seen.entry(spec.field_id(i)) {
                Entry::Vacant(e) => {
                    e.insert(Seen {
                        name: f.name.clone(),
                        named_by: spec.spec_id,
                        data_type,
                        primitive,
                        void,
                    });
                }
                // a v1 field dropped into void: the type of the field it was
                Entry::Occupied(mut e) if e.get().void && !void => {
                    let s = e.get_mut();
                    s.data_type = data_type;
                    s.primitive = primitive;
                    s.void = false;
                }
                Entry::Occupied(_) => {}
            }
        }
    }
    unique_names(seen)
}

/// The fields of `seen` (by field id) with unique names: of fields sharing a name, the
/// one named by the latest spec keeps it, the others are named `name_<field id>`.
fn unique_names(seen: BTreeMap<i32, Seen>) -> Vec<UnifiedField> {
    let mut keeper: BTreeMap<&str, (i32, i32)> = BTreeMap::new();
    for (id, s) in &seen {
        let e = keeper.entry(s.name.as_str()).or_insert((s.named_by, *id));
        if s.named_by > e.0 {
            *e = (s.named_by, *id);
        }
    }
    let keeps: HashSet<i32> = keeper.values().map(|(_, id)| *id).collect();
    let mut taken: HashSet<String> = seen
        .iter()
        .filter(|(id, _)| keeps.contains(id))
        .map(|(_, s)| s.name.clone())
        .collect();
    seen.into_iter()
        .map(|(field_id, s)| {
            let mut name = s.name;
            if !keeps.contains(&field_id) {
                while !taken.insert(name.clone()) {
                    name = format!("{name}_{field_id}");
                }
            }
            UnifiedField {
                field_id,
                name,
                data_type: s.data_type,
                primitive: s.primitive,
            }
        })
        .collect()
}

/// An entry's partition values placed in the unified type (null where its spec lacks a
/// field).
pub(crate) fn unified_values(
    metadata: &TableMetadata,
    unified: &[UnifiedField],
    entry: &ManifestEntry,
) -> Vec<Option<Literal>> {
    let mut out = vec![None; unified.len()];
    if let Some(spec) = metadata.partition_spec_by_id(entry.spec_id) {
        for (i, value) in entry.data_file.partition.iter().enumerate() {
            let id = spec.field_id(i);
            if let Some(pos) = unified.iter().position(|u| u.field_id == id) {
                out[pos] = value.clone();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(name: &str, named_by: i32) -> Seen {
        Seen {
            name: name.to_string(),
            named_by,
            data_type: DataType::Int32,
            primitive: Some(PrimitiveType::Int),
            void: false,
        }
    }

    #[test]
    fn the_latest_spec_keeps_a_shared_name() {
        let fields = unique_names(BTreeMap::from([
            (1000, seen("b", 0)),
            (1001, seen("b", 2)),
            (1002, seen("c", 2)),
            // a name the renaming would produce is taken already
            (1003, seen("c_1004", 2)),
            (1004, seen("c", 1)),
        ]));
        let names: Vec<(i32, &str)> = fields
            .iter()
            .map(|f| (f.field_id, f.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                (1000, "b_1000"),
                (1001, "b"),
                (1002, "c"),
                (1003, "c_1004"),
                (1004, "c_1004_1004"),
            ]
        );
    }
}
