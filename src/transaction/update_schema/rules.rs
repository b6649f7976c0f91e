//! The rules of [`UpdateSchema`](super::UpdateSchema) that refuse a change: default
//! values (v3 only, their JSON form), deletable fields, no struct left empty, and type
//! promotions (spec "Schema Evolution"), each refusal an [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the rule.

use super::name;
use crate::error::{Error, Result};
use crate::spec::{
    FormatVersion, Literal, NestedField, PrimitiveType, Schema, TableMetadata, Transform, Type,
};

/// Refuses default values below format version 3 (spec "Default values").
pub(super) fn check_v3(path: &[String], metadata: &TableMetadata) -> Result<()> {
    if metadata.format_version < FormatVersion::V3 {
        return Err(Error::invalid_argument(format!(
            "cannot set a default value of column '{}': default values require format \
             version 3 (the table is v{})",
            name(path),
            metadata.format_version as u8
        )));
    }
    Ok(())
}

/// `value` in the JSON single-value form of the field's type (spec Appendix C), checked
/// against the rules of the module docs.
pub(super) fn default_json(
    path: &[String],
    field_type: &Type,
    value: &Literal,
    metadata: &TableMetadata,
) -> Result<serde_json::Value> {
    check_v3(path, metadata)?;
    let Type::Primitive(p) = field_type else {
        return Err(Error::invalid_argument(format!(
            "cannot set a default value of column '{}' of type {field_type}: only primitive \
             fields have default values (a struct's fields carry their own)",
            name(path)
        )));
    };
    value
        .to_json(p)
        .map_err(|e| e.context(format!("default value of column '{}'", name(path))))
}

/// A default's JSON form for a field promoted from `from` to `to`: the same except a
/// `date` promoted to a timestamp (v3), whose default becomes that day's midnight.
pub(super) fn promote_default(
    json: &serde_json::Value,
    from: &PrimitiveType,
    to: &PrimitiveType,
) -> Result<serde_json::Value> {
    let value = match (Literal::from_json(json, from)?, to) {
        (Literal::Date(d), PrimitiveType::Timestamp) => {
            Literal::Timestamp(i64::from(d) * 86_400_000_000)
        }
        (Literal::Date(d), PrimitiveType::TimestampNs) => {
            Literal::TimestampNs(i64::from(d) * 86_400_000_000_000)
        }
        (Literal::Int(v), PrimitiveType::Long) => Literal::Long(i64::from(v)),
        (Literal::Float(v), PrimitiveType::Double) => Literal::Double(f64::from(v)),
        (
            Literal::Decimal {
                unscaled, scale, ..
            },
            PrimitiveType::Decimal { precision, .. },
        ) => Literal::Decimal {
            unscaled,
            precision: *precision,
            scale,
        },
        (other, _) => other,
    };
    value.to_json(to)
}

/// Refuse deleting identifier fields and the sources of the current partition spec and
/// sort order.
pub(super) fn check_deletable(
    removed: &NestedField,
    path: &[String],
    m: &TableMetadata,
    identifiers: &[i32],
) -> Result<()> {
    let mut ids = vec![];
    removed.collect_ids(&mut ids);
    let column = name(path);
    if let Some(id) = identifiers.iter().find(|id| ids.contains(id)) {
        return Err(Error::invalid_argument(format!(
            "cannot drop column '{column}': field {id} is an identifier field of the table"
        )));
    }
    if let Some(f) = m
        .default_partition_spec()
        .into_iter()
        .flat_map(|s| &s.fields)
        // a void field (a v1 table's dropped partition field) needs no source column
        // (Java's `PartitionSpec.checkCompatibility` skips them)
        .find(|f| ids.contains(&f.source_id) && f.transform != Transform::Void)
    {
        return Err(Error::invalid_argument(format!(
            "cannot drop column '{column}': the current partition spec uses it (partition \
             field '{}', {}); drop the partition field first",
            f.name, f.transform
        )));
    }
    let order = m
        .sort_orders
        .iter()
        .find(|o| o.order_id == m.default_sort_order_id);
    if order
        .into_iter()
        .flat_map(|o| &o.fields)
        .any(|f| ids.contains(&f.source_id))
    {
        return Err(Error::invalid_argument(format!(
            "cannot drop column '{column}': the table's sort order uses it"
        )));
    }
    Ok(())
}

/// Refuse a schema change that leaves a struct without fields (deleting every field of
/// a struct, or adding an empty struct), or the table without columns, where `base` had
/// none such: Parquet cannot write an empty struct, so no row could be written to the
/// table. Iceberg Java's `SchemaUpdate` allows it (its `ApplyChanges.struct` leaves the
/// question open: "What happens if there are no fields left?"); icefloe refuses, and a
/// struct that was already empty in `base` is left alone.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the
/// struct and the column to drop instead.
pub(super) fn check_no_new_empty_structs(base: &Schema, new: &Schema) -> Result<()> {
    if new.columns().is_empty() && !base.columns().is_empty() {
        return Err(Error::invalid_argument(
            "cannot drop every column of the table: a table needs at least one column",
        ));
    }
    let mut before = vec![];
    empty_structs(base.columns(), &[], &mut before);
    let mut after = vec![];
    empty_structs(new.columns(), &[], &mut after);
    let Some((_, path)) = after
        .into_iter()
        .find(|(id, _)| !before.iter().any(|(b, _)| b == id))
    else {
        return Ok(());
    };
    // the field to drop instead: the struct itself, or the list or map holding it
    let mut column = path.as_slice();
    while let Some((last, rest)) = column.split_last() {
        if (last == "element" || last == "value") && !rest.is_empty() {
            column = rest;
        } else {
            break;
        }
    }
    Err(Error::invalid_argument(format!(
        "cannot leave struct '{}' without fields: Parquet cannot write an empty struct, so \
         no row could be written to the table; drop the column '{}' instead",
        name(&path),
        name(column)
    )))
}

/// The id and name path of every struct-typed field in `fields` with no fields.
fn empty_structs(fields: &[NestedField], parent: &[String], out: &mut Vec<(i32, Vec<String>)>) {
    for f in fields {
        let mut path = parent.to_vec();
        path.push(f.name.clone());
        walk_empty(f, path, out);
    }
}

fn walk_empty(f: &NestedField, path: Vec<String>, out: &mut Vec<(i32, Vec<String>)>) {
    let child = |word: &str| {
        let mut p = path.clone();
        p.push(word.to_string());
        p
    };
    match f.field_type.as_ref() {
        Type::Struct(s) if s.fields.is_empty() => out.push((f.id, path)),
        Type::Struct(s) => empty_structs(&s.fields, &path, out),
        Type::List(l) => walk_empty(&l.element_field, child("element"), out),
        Type::Map(m) => {
            walk_empty(&m.key_field, child("key"), out);
            walk_empty(&m.value_field, child("value"), out);
        }
        Type::Primitive(_) => {}
    }
}

/// Whether `from` may be promoted to `to` in a table of format `version` (spec "Schema
/// Evolution", valid primitive type promotions).
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the rule.
pub fn check_promotion(
    from: PrimitiveType,
    to: PrimitiveType,
    version: FormatVersion,
) -> Result<()> {
    use PrimitiveType as P;
    if from == to {
        return Ok(());
    }
    match (from, to) {
        (P::Int, P::Long) | (P::Float, P::Double) => Ok(()),
        (
            P::Decimal {
                precision: p,
                scale: s,
            },
            P::Decimal {
                precision: p2,
                scale: s2,
            },
        ) => {
            if s != s2 {
                Err(Error::invalid_argument(format!(
                    "from {from} to {to}: a decimal's scale cannot change"
                )))
            } else if p2 < p {
                Err(Error::invalid_argument(format!(
                    "from {from} to {to}: a decimal's precision can only widen"
                )))
            } else {
                Ok(())
            }
        }
        (P::Date, P::Timestamp | P::TimestampNs) | (P::Unknown, _)
            if version >= FormatVersion::V3 =>
        {
            Ok(())
        }
        _ => Err(Error::invalid_argument(format!(
            "from {from} to {to}: not a valid type promotion (allowed: int to long, float to \
             double, decimal(P, S) to decimal(P', S) with P' > P; in v3 also date to \
             timestamp or timestamp_ns, unknown to any type)"
        ))),
    }
}

/// Refuse a promotion of the source of a partition field (of any of the table's specs)
/// whose transform would give a different value for the promoted type (spec "Schema
/// Evolution"): for `date` to a timestamp, every transform but `year`, `month`, `day`
/// and `void` (identity values and bucket hashes change). The other promotions keep
/// every transform's values.
pub(super) fn check_partition_values_keep(
    id: i32,
    from: PrimitiveType,
    to: PrimitiveType,
    m: &TableMetadata,
) -> Result<()> {
    if from != PrimitiveType::Date {
        return Ok(());
    }
    let changed = m.partition_specs.iter().flat_map(|s| &s.fields).find(|f| {
        f.source_id == id
            && !matches!(
                f.transform,
                Transform::Year | Transform::Month | Transform::Day | Transform::Void
            )
    });
    match changed {
        Some(f) => Err(Error::invalid_argument(format!(
            "from {from} to {to}: partition field '{}' ({}) would change its values",
            f.name, f.transform
        ))),
        None => Ok(()),
    }
}

/// The (spec id, partition field name, source id, column id) of each partition field of
/// `m` whose name is the full name of a column of `schema` other than its source, while
/// its source is still in `schema`.
fn partition_name_clashes(schema: &Schema, m: &TableMetadata) -> Vec<(i32, String, i32, i32)> {
    let mut names = Vec::new();
    for f in schema.columns() {
        crate::write::metrics_config::field_names(f, "", &mut names);
    }
    let ids: std::collections::HashMap<String, i32> =
        names.into_iter().map(|(id, name)| (name, id)).collect();
    m.partition_specs
        .iter()
        .flat_map(|spec| spec.fields.iter().map(move |f| (spec.spec_id, f)))
        .filter_map(|(spec_id, f)| {
            let column = *ids.get(&f.name)?;
            (column != f.source_id && schema.field_by_id(f.source_id).is_some())
                .then(|| (spec_id, f.name.clone(), f.source_id, column))
        })
        .collect()
}

/// Refuse a schema change that gives a column the name of a partition field (of any
/// spec) whose source is another column still in the schema: Iceberg Java's
/// `PartitionSpec.Builder` refuses such a spec when it reads the table metadata
/// (`checkAndAddPartitionName`: "Cannot create identity partition sourced from different
/// field in schema"), so Spark could no longer load the table (`ADD COLUMN id_bucket` on
/// a table partitioned by `bucket(4, id)`, or `ADD COLUMN s` after the identity
/// partition source `s` was renamed). Clashes the table already had are left alone.
pub(super) fn check_partition_names(base: &Schema, new: &Schema, m: &TableMetadata) -> Result<()> {
    let before = partition_name_clashes(base, m);
    match partition_name_clashes(new, m)
        .into_iter()
        .find(|c| !before.contains(c))
    {
        Some((spec_id, name, source, _)) => {
            let source = new
                .field_by_id(source)
                .map_or_else(|| source.to_string(), |f| format!("'{}'", f.name));
            Err(Error::invalid_argument(format!(
                "column name '{name}' is the name of partition field '{name}' of spec \
                 {spec_id}, whose source is column {source}: Iceberg Java would refuse to \
                 load the table; choose another name"
            )))
        }
        None => Ok(()),
    }
}
