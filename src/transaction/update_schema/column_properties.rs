//! Table properties named after a column follow the column through a schema change, as
//! Iceberg Java's `SchemaUpdate` keeps them (`PropertyUtil.applySchemaChanges`): a
//! renamed column's `write.metadata.metrics.column.<name>`,
//! `write.parquet.bloom-filter-enabled.column.<name>` and
//! `write.parquet.stats-enabled.column.<name>` take its new full name, a dropped
//! column's are removed (so a column added later under that name does not inherit them).
//!
//! Columns are matched by field id between the two schemas and named by their full
//! dotted names (`s.a`, `l.element`, `m.value`), so a field whose name changes because a
//! struct holding it was renamed (`s.a` to `t.a`) moves too, and the fields inside a
//! dropped struct lose theirs. Keys naming no column of the old schema stay as they are.

use std::collections::HashMap;

use crate::spec::{Schema, TableUpdate};
use crate::table_properties::METRICS_COLUMN;
use crate::write::metrics_config::field_names;

/// The per-column property prefixes Java's `SchemaUpdate` updates.
pub(super) const COLUMN_PROPERTY_PREFIXES: [&str; 3] = [
    METRICS_COLUMN.name,
    "write.parquet.bloom-filter-enabled.column.",
    "write.parquet.stats-enabled.column.",
];

/// Every field's full dotted name by field id.
fn names_by_id(schema: &Schema) -> HashMap<i32, String> {
    let mut out = Vec::new();
    for f in schema.columns() {
        field_names(f, "", &mut out);
    }
    out.into_iter().collect()
}

/// The property changes that make `properties` follow the columns of `old` into `new`
/// (see the module docs): a `SetProperties` of the renamed keys and a
/// `RemoveProperties` of the old keys, none when no key names a changed column.
pub(super) fn column_property_updates(
    properties: &HashMap<String, String>,
    old: &Schema,
    new: &Schema,
) -> Vec<TableUpdate> {
    let old_ids: HashMap<String, i32> = names_by_id(old)
        .into_iter()
        .map(|(id, name)| (name, id))
        .collect();
    let new_names = names_by_id(new);
    let (mut set, mut removed) = (HashMap::new(), Vec::new());
    let mut keys: Vec<&String> = properties.keys().collect();
    keys.sort();
    for key in keys {
        let Some((prefix, column)) = COLUMN_PROPERTY_PREFIXES
            .iter()
            .find_map(|p| key.strip_prefix(p).map(|c| (p, c)))
        else {
            continue;
        };
        let Some(id) = old_ids.get(column) else {
            continue;
        };
        match new_names.get(id) {
            Some(name) if name == column => {}
            Some(name) => {
                removed.push(key.clone());
                set.insert(format!("{prefix}{name}"), properties[key].clone());
            }
            None => removed.push(key.clone()),
        }
    }
    // a key that a renamed column's key replaces is set, not removed
    removed.retain(|k| !set.contains_key(k));
    let mut out = vec![];
    if !set.is_empty() {
        out.push(TableUpdate::SetProperties { updates: set });
    }
    if !removed.is_empty() {
        out.push(TableUpdate::RemoveProperties { removals: removed });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{NestedField, PrimitiveType, StructType, Type};

    fn int(id: i32, name: &str) -> NestedField {
        NestedField::optional(id, name, Type::Primitive(PrimitiveType::Int))
    }

    fn strukt(id: i32, name: &str, fields: Vec<NestedField>) -> NestedField {
        NestedField::optional(id, name, Type::Struct(StructType::new(fields)))
    }

    fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn renamed_columns_keep_and_dropped_columns_lose_their_properties() {
        let old = Schema::new(
            0,
            vec![
                int(1, "a"),
                int(2, "b"),
                strukt(3, "s", vec![int(4, "x")]),
                strukt(5, "gone", vec![int(6, "y")]),
                int(7, "c"),
            ],
        );
        // a -> a2, s -> t (so s.x -> t.x), gone dropped, b unchanged, c -> "stale"
        let new = Schema::new(
            1,
            vec![
                int(1, "a2"),
                int(2, "b"),
                strukt(3, "t", vec![int(4, "x")]),
                int(7, "stale"),
            ],
        );
        let p = props(&[
            ("write.metadata.metrics.column.a", "none"),
            ("write.parquet.bloom-filter-enabled.column.a", "true"),
            ("write.metadata.metrics.column.b", "counts"),
            ("write.metadata.metrics.column.s.x", "full"),
            ("write.parquet.stats-enabled.column.gone.y", "false"),
            ("write.metadata.metrics.column.gone", "none"),
            ("write.metadata.metrics.column.nope", "full"),
            // a key naming no old column is kept, and a renamed column's key replaces it
            ("write.metadata.metrics.column.stale", "none"),
            ("write.metadata.metrics.column.c", "counts"),
            ("owner", "me"),
        ]);
        let updates = column_property_updates(&p, &old, &new);
        let mut set = HashMap::new();
        let mut removed = vec![];
        for u in updates {
            match u {
                TableUpdate::SetProperties { updates } => set = updates,
                TableUpdate::RemoveProperties { removals } => removed = removals,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(
            set,
            props(&[
                ("write.metadata.metrics.column.a2", "none"),
                ("write.parquet.bloom-filter-enabled.column.a2", "true"),
                ("write.metadata.metrics.column.t.x", "full"),
                ("write.metadata.metrics.column.stale", "counts"),
            ])
        );
        removed.sort();
        assert_eq!(
            removed,
            [
                "write.metadata.metrics.column.a",
                "write.metadata.metrics.column.c",
                "write.metadata.metrics.column.gone",
                "write.metadata.metrics.column.s.x",
                "write.parquet.bloom-filter-enabled.column.a",
                "write.parquet.stats-enabled.column.gone.y",
            ]
        );
        // nothing to change: no updates
        assert!(column_property_updates(&p, &old, &old).is_empty());
    }
}
