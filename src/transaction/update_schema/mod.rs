//! [`UpdateSchema`]: schema evolution as one commit (Java `SchemaUpdate`; spec "Schema
//! Evolution").
//!
//! Changes address fields by name path (`["point", "x"]`; a list's element struct is
//! `element`, a map's value struct `value`, both may be left out) and apply in the
//! order given to the table's current schema. The result is a new schema with the next
//! schema id (or, as Java's `TableMetadata.Builder.addSchema` does, the id of an
//! existing schema with the same fields); new fields get ids after the table's
//! `last-column-id`, so ids are never reused, even for a dropped field's name.
//!
//! The rules (each refusal an [`ErrorKind::InvalidArgument`] error naming the column
//! and the rule, [`ErrorKind::NotFound`] for a name that does not exist):
//! - a new field is optional (existing rows have no value for it; Java's
//!   `addRequiredColumn` needs `allowIncompatibleChanges`), or, in v3, required with a
//!   default value; its name is new in its struct;
//! - default values (spec "Default values", v3 only: an error naming the rule on v1/v2
//!   tables): a field added with a default gets it as both `initial-default` (the
//!   value of the rows written before the field existed) and `write-default`; a later
//!   change sets or clears only the `write-default` (the `initial-default` never
//!   changes once set); defaults are primitive values of the field's type (not of
//!   `unknown`, `variant`, `geometry` or `geography`), stored in the spec's JSON
//!   single-value form (Appendix C); clearing a required field's `write-default` is
//!   allowed (writers must then be given its value); a promoted field's defaults are
//!   re-encoded for its new type (a `date` default becomes that day's midnight);
//! - a deleted field is not an identifier field and not the source of a field of the
//!   current partition spec or sort order (Java checks the same at commit);
//! - a list's element (`l.element`) and a map's value (`m.value`) are promoted and made
//!   optional like struct fields, a map's key (`m.key`) never changes (Java: "Cannot
//!   update map keys"), and none of the three is dropped, renamed, moved, commented or
//!   given a default;
//! - a type changes only by a valid primitive promotion (spec "Schema Evolution"):
//!   `int` → `long`, `float` → `double`, `decimal(P, S)` → `decimal(P', S)` with
//!   `P' > P`; in v3 also `date` → `timestamp`/`timestamp_ns` and `unknown` → any type.
//!   A `date` that is the source of a partition field other than `year`, `month`, `day`
//!   or `void` (in any of the table's specs) is not promoted: its partition values
//!   would change;
//! - a required field may become optional, never the reverse (an identifier field
//!   stays required: the spec requires it);
//! - identifier fields are required primitive fields other than `float` and `double`,
//!   not inside a list, a map or an optional struct (spec "Identifier Field IDs");
//! - a moved field moves within its own struct (`FIRST`, or after a sibling);
//! - the new schema has no two fields with the same full name (Java's `Schema`
//!   constructor, `TypeUtil.indexByName`): a top-level column renamed to `st.a` clashes
//!   with field `a` of struct `st`, and an added struct may not repeat a name;
//! - no column takes the name of a partition field (of any spec) sourced from another
//!   column still in the schema (Java's `PartitionSpec` builder refuses such a spec when
//!   it loads the table);
//! - no struct is left without fields, nor the table without columns (deleting every
//!   field of a struct; Java allows it, but Parquet cannot write an empty struct): drop
//!   the struct column instead.
//!
//! When the table has a name mapping (`schema.name-mapping.default`, for data files
//! written without field ids), it is updated in the same commit as Java does: renamed
//! fields keep their old names and gain the new one, added fields are mapped.
//!
//! Table properties naming a column (`write.metadata.metrics.column.<name>`, …) follow
//! a renamed column and go with a dropped one, as in Java (module `column_properties`).
//!
//! A retry re-applies the changes by name to the refreshed table's current schema, so a
//! concurrent schema change is built on, not overwritten (and a name it removed fails
//! the commit), but only while every name the changes address still means the same
//! field id: a name a concurrent commit gave to another field fails the commit (module
//! `transaction::pinned_names`).

use async_trait::async_trait;

use super::TransactionAction;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::name_mapping::{update_name_mapping, DEFAULT_NAME_MAPPING_PROPERTY};
use crate::spec::{
    Literal, NestedField, PrimitiveType, Schema, StructType, TableMetadata, TableUpdate, Type,
};
use crate::table::Table;
use crate::transaction::pinned_names::PinnedNames;
use paths::{
    check_member, field_at, key_refusal, locate, name, not_found, slot_at, struct_mut, Slot,
};

mod column_properties;
mod paths;
mod pinned;
mod rules;

pub use rules::check_promotion;
use rules::{
    check_deletable, check_no_new_empty_structs, check_partition_names,
    check_partition_values_keep, check_v3, default_json, promote_default,
};

/// Where a field goes within its struct (Java `moveFirst`, `moveAfter`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnPosition {
    /// The first field.
    First,
    /// Right after the named sibling.
    After(String),
}

#[derive(Debug, Clone)]
enum Change {
    Add {
        parent: Vec<String>,
        field: NestedField,
        /// The `initial-default` and `write-default` of the new field.
        default: Option<Literal>,
        position: Option<ColumnPosition>,
    },
    Delete(Vec<String>),
    UpdateDefault(Vec<String>, Option<Literal>),
    Rename(Vec<String>, String),
    UpdateType(Vec<String>, PrimitiveType),
    MakeOptional(Vec<String>),
    Require(Vec<String>),
    UpdateDoc(Vec<String>, Option<String>),
    Move(Vec<String>, ColumnPosition),
    SetIdentifiers(Vec<Vec<String>>),
    DropIdentifiers(Vec<Vec<String>>),
}

/// A set of schema changes committed as one new schema.
#[derive(Debug, Clone, Default)]
pub struct UpdateSchema {
    changes: Vec<Change>,
    /// The fields the changes name, as resolved on the first schema they were applied
    /// to (module `transaction::pinned_names`).
    pinned: Option<PinnedNames>,
}

impl UpdateSchema {
    /// No changes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add an optional field `name` of `field_type` to the struct at `parent` (empty:
    /// a top-level column), last or at `position`. Ids inside `field_type` are
    /// reassigned.
    pub fn add_column(
        mut self,
        parent: &[String],
        name: &str,
        field_type: Type,
        doc: Option<String>,
        position: Option<ColumnPosition>,
    ) -> Self {
        let mut field = NestedField::optional(0, name, field_type);
        field.doc = doc;
        self.changes.push(Change::Add {
            parent: parent.to_vec(),
            field,
            default: None,
            position,
        });
        self
    }

    /// Add a field with a default value (Java `addColumn(parent, name, type, doc,
    /// defaultValue)` / `addRequiredColumn(…, defaultValue)`): as [`Self::add_column`],
    /// with `default` as its `initial-default` and `write-default`, and `required`
    /// (rows written before it exist read the default, so a required field may be
    /// added). v3 only (spec "Default values"); `default` must be a value of
    /// `field_type` (see the module docs).
    pub fn add_column_with_default(
        mut self,
        parent: &[String],
        field: NestedField,
        default: Literal,
        position: Option<ColumnPosition>,
    ) -> Self {
        self.changes.push(Change::Add {
            parent: parent.to_vec(),
            field,
            default: Some(default),
            position,
        });
        self
    }

    /// Set (or with `None`, clear) the `write-default` of the field at `path` (Java
    /// `updateColumnDefault`); its `initial-default` stays. v3 only (spec "Default
    /// values").
    pub fn update_column_default(mut self, path: &[String], default: Option<Literal>) -> Self {
        self.changes
            .push(Change::UpdateDefault(path.to_vec(), default));
        self
    }

    /// Delete the field at `path` (and everything in it).
    pub fn delete_column(mut self, path: &[String]) -> Self {
        self.changes.push(Change::Delete(path.to_vec()));
        self
    }

    /// Rename the field at `path` to `new_name` (its id, and so its data, stay).
    pub fn rename_column(mut self, path: &[String], new_name: &str) -> Self {
        self.changes
            .push(Change::Rename(path.to_vec(), new_name.to_string()));
        self
    }

    /// Promote the primitive field at `path` to `new_type` (see the module docs).
    pub fn update_column(mut self, path: &[String], new_type: PrimitiveType) -> Self {
        self.changes
            .push(Change::UpdateType(path.to_vec(), new_type));
        self
    }

    /// Make the field at `path` optional.
    pub fn make_column_optional(mut self, path: &[String]) -> Self {
        self.changes.push(Change::MakeOptional(path.to_vec()));
        self
    }

    /// Keep the field at `path` required (Java `requireColumn` without
    /// `allowIncompatibleChanges`): a field already required is left as it is (Java's
    /// `internalUpdateColumnRequirement` returns early on the no-op); an optional one
    /// is refused with [`ErrorKind::InvalidArgument`] (rows already written may hold
    /// nulls), and a missing one with [`ErrorKind::NotFound`]. Checked against the
    /// schema the change is applied to, so a retry re-checks it.
    pub fn require_column(mut self, path: &[String]) -> Self {
        self.changes.push(Change::Require(path.to_vec()));
        self
    }

    /// Set (or with `None`, clear) the doc of the field at `path`.
    pub fn update_column_doc(mut self, path: &[String], doc: Option<String>) -> Self {
        self.changes.push(Change::UpdateDoc(path.to_vec(), doc));
        self
    }

    /// Move the field at `path` within its struct.
    pub fn move_column(mut self, path: &[String], position: ColumnPosition) -> Self {
        self.changes.push(Change::Move(path.to_vec(), position));
        self
    }

    /// Make the fields at `paths` the schema's identifier fields (Java
    /// `setIdentifierFields`; spec "Identifier Field IDs": required primitive fields, not
    /// `float` or `double`, not inside a list, a map or an optional struct).
    pub fn set_identifier_fields(mut self, paths: &[Vec<String>]) -> Self {
        self.changes.push(Change::SetIdentifiers(paths.to_vec()));
        self
    }

    /// Remove the fields at `paths` from the identifier fields (each must be one).
    pub fn drop_identifier_fields(mut self, paths: &[Vec<String>]) -> Self {
        self.changes.push(Change::DropIdentifiers(paths.to_vec()));
        self
    }

    /// The schema the changes make from `metadata`'s current schema, with its new id
    /// (see the module docs). Nothing is committed.
    ///
    /// Errors: a change that breaks a rule of the module docs, naming the column.
    pub fn apply(&self, metadata: &TableMetadata) -> Result<Schema> {
        let base = metadata.current_schema();
        let mut fields = base.fields.fields.clone();
        let mut last_id = metadata.last_column_id.max(base.highest_field_id());
        let mut identifiers = base.identifier_field_ids.clone();
        // a field inside a column also dropped goes with it (Java resolves each drop
        // against the base schema: `DROP COLUMNS (st, st.a)` is one drop of `st`)
        let dropped: Vec<&Vec<String>> = self
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Delete(p) => Some(p),
                _ => None,
            })
            .collect();
        let base_fields = fields.clone();
        let inside_dropped = |path: &Vec<String>| {
            dropped
                .iter()
                .any(|d| d.len() < path.len() && path.starts_with(d))
                && slot_at(&mut base_fields.clone(), path).is_ok()
        };
        for change in &self.changes {
            if matches!(change, Change::Delete(p) if inside_dropped(p)) {
                continue;
            }
            let applied = match change {
                Change::SetIdentifiers(paths) => paths
                    .iter()
                    .map(|p| identifier_id(&fields, p))
                    .collect::<Result<_>>()
                    .map(|ids| identifiers = ids),
                Change::DropIdentifiers(paths) => {
                    drop_identifiers(&fields, paths, &mut identifiers)
                }
                Change::Add { parent, field, .. } if !parent.is_empty() => {
                    check_parent_in_base(&base_fields, &fields, &dropped, parent, &field.name)
                        .and_then(|()| {
                            apply_change(&mut fields, change, metadata, &mut last_id, &identifiers)
                        })
                }
                other => apply_change(&mut fields, other, metadata, &mut last_id, &identifiers),
            };
            applied.map_err(|e| other_case(e, change, &fields))?;
        }
        let mut schema = Schema::new(base.schema_id, fields);
        schema.identifier_field_ids = identifiers;
        schema.check_field_names()?;
        check_no_new_empty_structs(base, &schema)?;
        check_partition_names(base, &schema, metadata)?;
        schema.schema_id = schema_id_in(metadata, &schema);
        Ok(schema)
    }
}

/// Drop `paths` from the identifier fields `identifiers` (ids in `fields`).
///
/// Errors: a path that names no field, or a field that is not an identifier field.
fn drop_identifiers(
    fields: &[NestedField],
    paths: &[Vec<String>],
    identifiers: &mut Vec<i32>,
) -> Result<()> {
    for p in paths {
        let id = find_id(fields, p)?;
        if !identifiers.contains(&id) {
            return Err(Error::invalid_argument(format!(
                "column '{}' is not an identifier field",
                name(p)
            )));
        }
        identifiers.retain(|i| *i != id);
    }
    Ok(())
}

/// `e`, a change's refusal, with the note that a top-level column the change names
/// exists in another case (`Msg` for the lowercased `msg`: module `crate::column_case`)
/// when `e` is a [`ErrorKind::NotFound`].
fn other_case(e: Error, change: &Change, fields: &[NestedField]) -> Error {
    if e.kind() != ErrorKind::NotFound {
        return e;
    }
    let columns: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let after;
    let paths: Vec<&[String]> = match change {
        Change::Add { parent, .. } => vec![parent.as_slice()],
        Change::Delete(p)
        | Change::UpdateDefault(p, _)
        | Change::Rename(p, _)
        | Change::UpdateType(p, _)
        | Change::MakeOptional(p)
        | Change::Require(p)
        | Change::UpdateDoc(p, _) => vec![p.as_slice()],
        Change::Move(p, position) => match (position, p.as_slice()) {
            // a top-level column moved after a sibling of another case
            (ColumnPosition::After(a), [_]) => {
                after = [a.clone()];
                vec![p.as_slice(), after.as_slice()]
            }
            _ => vec![p.as_slice()],
        },
        Change::SetIdentifiers(ps) | Change::DropIdentifiers(ps) => {
            ps.iter().map(Vec::as_slice).collect()
        }
    };
    crate::column_case::with_other_case_note(e, paths, &columns)
}

/// A field is added into a struct the table already has, as in Java's
/// `SchemaUpdate.addColumn`: not into one added by the same change (give the new struct
/// its fields in its type), nor into one the change drops. `changed`: the fields with
/// the earlier changes applied.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the new column and its parent.
fn check_parent_in_base(
    base: &[NestedField],
    changed: &[NestedField],
    dropped: &[&Vec<String>],
    parent: &[String],
    new: &str,
) -> Result<()> {
    let column = format!("{}.{new}", name(parent));
    // a parent nowhere is reported by the change itself (not found)
    let added = || slot_at(&mut changed.to_vec(), parent).is_ok();
    if slot_at(&mut base.to_vec(), parent).is_err() && added() {
        return Err(Error::invalid_argument(format!(
            "cannot add column '{column}': its parent '{}' is not in the table's schema \
             (a struct added by the same change gets its fields in its type)",
            name(parent)
        )));
    }
    if dropped.iter().any(|d| parent.starts_with(d)) {
        return Err(Error::invalid_argument(format!(
            "cannot add column '{column}': its parent '{}' is dropped by the same change",
            name(parent)
        )));
    }
    Ok(())
}

/// The id `schema` takes in `metadata`: that of a schema with the same fields and
/// identifier fields already there, else one above every schema id.
pub(in crate::transaction) fn schema_id_in(metadata: &TableMetadata, schema: &Schema) -> i32 {
    let same = |s: &Schema| {
        s.fields == schema.fields && s.identifier_field_ids == schema.identifier_field_ids
    };
    match metadata.schemas.iter().find(|s| same(s)) {
        Some(existing) => existing.schema_id,
        None => metadata
            .schemas
            .iter()
            .map(|s| s.schema_id)
            .max()
            .map_or(0, |id| id + 1),
    }
}

#[async_trait]
impl TransactionAction for UpdateSchema {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        let m = table.metadata();
        // a retry applies the changes by name again: each name must still mean its field
        let now = pinned::resolve(&self.changes, m.current_schema());
        PinnedNames::hold(&mut self.pinned, now, "schema change")?;
        let schema = self.apply(m)?;
        if schema.schema_id == m.current_schema_id {
            return Ok(vec![]);
        }
        let mut out = vec![];
        if let Some(mapping) = m.properties.get(DEFAULT_NAME_MAPPING_PROPERTY) {
            let updated = update_name_mapping(mapping, &schema)?;
            if &updated != mapping {
                out.push(TableUpdate::SetProperties {
                    updates: [(DEFAULT_NAME_MAPPING_PROPERTY.to_string(), updated)].into(),
                });
            }
        }
        out.extend(column_properties::column_property_updates(
            &m.properties,
            m.current_schema(),
            &schema,
        ));
        let id = schema.schema_id;
        if m.schema_by_id(id).is_none() {
            out.push(TableUpdate::AddSchema { schema });
            out.push(TableUpdate::SetCurrentSchema { schema_id: -1 });
        } else {
            out.push(TableUpdate::SetCurrentSchema { schema_id: id });
        }
        Ok(out)
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}

fn apply_change(
    fields: &mut Vec<NestedField>,
    change: &Change,
    metadata: &TableMetadata,
    last_id: &mut i32,
    identifiers: &[i32],
) -> Result<()> {
    match change {
        Change::Add {
            parent,
            field,
            default,
            position,
        } => {
            let full: Vec<String> = parent.iter().chain([&field.name]).cloned().collect();
            if field.name.is_empty() {
                return Err(Error::invalid_argument("a column needs a name"));
            }
            let siblings = struct_mut(fields, parent)?;
            if siblings.iter().any(|f| f.name == field.name) {
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!("column '{}' already exists", name(&full)),
                ));
            }
            let mut field = field.clone();
            match default {
                Some(value) => {
                    let json = default_json(&full, &field.field_type, value, metadata)?;
                    field.initial_default = Some(json.clone());
                    field.write_default = Some(json);
                }
                None => {
                    field.required = false;
                    field.initial_default = None;
                    field.write_default = None;
                }
            }
            assign_fresh_ids(&mut field, last_id);
            siblings.push(field);
            if let Some(p) = position {
                move_field(siblings, &full, p)?;
            }
        }
        Change::Delete(path) => {
            check_member(fields, path, "drop")?;
            let (siblings, i) = locate(fields, path)?;
            let removed = siblings.remove(i);
            check_deletable(&removed, path, metadata, identifiers)?;
        }
        Change::Rename(path, new_name) => {
            check_member(fields, path, "rename")?;
            let (siblings, i) = locate(fields, path)?;
            if new_name.is_empty() {
                return Err(Error::invalid_argument("a column needs a name"));
            }
            if siblings
                .iter()
                .enumerate()
                .any(|(j, f)| j != i && &f.name == new_name)
            {
                return Err(Error::new(
                    ErrorKind::AlreadyExists,
                    format!(
                        "cannot rename column '{}' to '{new_name}': a column of that name exists",
                        name(path)
                    ),
                ));
            }
            if let Some(f) = siblings.get_mut(i) {
                f.name.clone_from(new_name);
            }
        }
        Change::UpdateType(path, to) => {
            let (field, slot) = slot_at(fields, path)?;
            if slot == Slot::Key && *field.field_type != Type::Primitive(*to) {
                // Java's updateColumn: the same type is a no-op, even for a key
                return Err(key_refusal(path));
            }
            let Type::Primitive(from) = *field.field_type else {
                return Err(Error::invalid_argument(format!(
                    "cannot change column '{}' of type {} to {to}: only primitive types \
                     are promoted",
                    name(path),
                    field.field_type
                )));
            };
            check_promotion(from, *to, metadata.format_version)
                .map_err(|e| e.context(format!("cannot change column '{}'", name(path))))?;
            if from != *to {
                check_partition_values_keep(field.id, from, *to, metadata)
                    .map_err(|e| e.context(format!("cannot change column '{}'", name(path))))?;
            }
            if from != *to {
                let defaults = [&mut field.initial_default, &mut field.write_default];
                for json in defaults.into_iter().flatten() {
                    *json = promote_default(json, &from, to)
                        .map_err(|e| e.context(format!("cannot change column '{}'", name(path))))?;
                }
            }
            *field.field_type = Type::Primitive(*to);
        }
        Change::MakeOptional(path) => {
            let (field, _) = field_at(fields, path)?;
            if identifiers.contains(&field.id) {
                return Err(Error::invalid_argument(format!(
                    "cannot make column '{}' optional: it is an identifier field",
                    name(path)
                )));
            }
            field.required = false;
        }
        Change::Require(path) => {
            let (field, _) = field_at(fields, path)?;
            if !field.required {
                return Err(Error::invalid_argument(format!(
                    "cannot make column '{}' required (SET NOT NULL): it is optional, and \
                     rows already in the table may hold nulls (Iceberg allows only required \
                     to optional)",
                    name(path)
                )));
            }
        }
        Change::UpdateDoc(path, doc) => {
            let (field, slot) = field_at(fields, path)?;
            if slot != Slot::Member {
                // the spec's list and map types have no doc for these
                return Err(Error::invalid_argument(format!(
                    "cannot set a comment on {}: only struct fields have comments",
                    slot.describe(path)
                )));
            }
            field.doc.clone_from(doc);
        }
        Change::UpdateDefault(path, default) => {
            let (field, slot) = field_at(fields, path)?;
            if slot != Slot::Member {
                return Err(Error::invalid_argument(format!(
                    "cannot set a default value of {}: only struct fields have default \
                     values (spec \"Default values\")",
                    slot.describe(path)
                )));
            }
            field.write_default = match default {
                Some(value) => Some(default_json(path, &field.field_type, value, metadata)?),
                None => {
                    check_v3(path, metadata)?;
                    None
                }
            };
        }
        Change::Move(path, position) => {
            check_member(fields, path, "move")?;
            let (siblings, _) = locate(fields, path)?;
            move_field(siblings, path, position)?;
        }
        Change::SetIdentifiers(_) | Change::DropIdentifiers(_) => {}
    }
    Ok(())
}

/// The id of the field at `path`.
fn find_id(fields: &[NestedField], path: &[String]) -> Result<i32> {
    let mut fields = fields;
    let mut found = None;
    for part in path {
        let f = fields
            .iter()
            .find(|f| &f.name == part)
            .ok_or_else(|| not_found(path))?;
        fields = match f.field_type.as_ref() {
            Type::Struct(s) => &s.fields,
            _ => &[],
        };
        found = Some(f.id);
    }
    found.ok_or_else(|| not_found(path))
}

/// The id of the field at `path` if it may be an identifier field (spec "Identifier
/// Field IDs"): reached through required structs only, itself required and primitive,
/// not `float` or `double`.
fn identifier_id(fields: &[NestedField], path: &[String]) -> Result<i32> {
    let column = name(path);
    let refuse = |why: &str| {
        Err(Error::invalid_argument(format!(
            "column '{column}' cannot be an identifier field: {why}"
        )))
    };
    let mut fields = fields;
    let Some((last, parents)) = path.split_last() else {
        return Err(not_found(path));
    };
    for part in parents {
        let f = fields
            .iter()
            .find(|f| &f.name == part)
            .ok_or_else(|| not_found(path))?;
        fields = match f.field_type.as_ref() {
            Type::Struct(s) if f.required => &s.fields,
            Type::Struct(_) => return refuse(&format!("struct '{part}' is optional")),
            _ => return refuse(&format!("'{part}' is a list or map")),
        };
    }
    let f = fields
        .iter()
        .find(|f| &f.name == last)
        .ok_or_else(|| not_found(path))?;
    match f.field_type.as_ref() {
        Type::Primitive(PrimitiveType::Float | PrimitiveType::Double) => {
            refuse("float and double fields are not allowed")
        }
        Type::Primitive(_) if !f.required => refuse("it is optional (make it NOT NULL)"),
        Type::Primitive(_) => Ok(f.id),
        _ => refuse("it is not a primitive field"),
    }
}

/// Give `field` and every field inside it new ids after `last_id`: the field, then
/// each struct's fields before their nested fields (Java `TypeUtil.assignFreshIds`).
fn assign_fresh_ids(field: &mut NestedField, last_id: &mut i32) {
    *last_id += 1;
    field.id = *last_id;
    assign_nested_ids(&mut field.field_type, last_id);
}

fn assign_nested_ids(ty: &mut Type, last_id: &mut i32) {
    match ty {
        Type::Struct(StructType { fields }) => {
            for f in fields.iter_mut() {
                *last_id += 1;
                f.id = *last_id;
            }
            for f in fields.iter_mut() {
                assign_nested_ids(&mut f.field_type, last_id);
            }
        }
        Type::List(l) => {
            *last_id += 1;
            l.element_field.id = *last_id;
            assign_nested_ids(&mut l.element_field.field_type, last_id);
        }
        Type::Map(m) => {
            *last_id += 1;
            m.key_field.id = *last_id;
            *last_id += 1;
            m.value_field.id = *last_id;
            assign_nested_ids(&mut m.key_field.field_type, last_id);
            assign_nested_ids(&mut m.value_field.field_type, last_id);
        }
        Type::Primitive(_) => {}
    }
}

/// Move the field at `path` (in `siblings`) to `position`.
fn move_field(
    siblings: &mut Vec<NestedField>,
    path: &[String],
    position: &ColumnPosition,
) -> Result<()> {
    let last = path.last().map(String::as_str).unwrap_or_default();
    let i = siblings
        .iter()
        .position(|f| f.name == last)
        .ok_or_else(|| not_found(path))?;
    let field = siblings.remove(i);
    let at = match position {
        ColumnPosition::First => 0,
        ColumnPosition::After(after) => {
            if after == last {
                return Err(Error::invalid_argument(format!(
                    "cannot move column '{}' after itself",
                    name(path)
                )));
            }
            let mut sibling = path.to_vec();
            if let Some(l) = sibling.last_mut() {
                l.clone_from(after);
            }
            let j = siblings
                .iter()
                .position(|f| &f.name == after)
                .ok_or_else(|| {
                    Error::not_found(format!(
                        "cannot move column '{}' after '{}': no such column in the same \
                         struct",
                        name(path),
                        name(&sibling)
                    ))
                })?;
            j + 1
        }
    };
    siblings.insert(at, field);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::sort_order::{SortField, SortOrder};
    use crate::spec::{
        FormatVersion, ListType, MapType, PartitionSpec, TableMetadataBuilder, Transform,
    };

    fn p(t: PrimitiveType) -> Type {
        Type::Primitive(t)
    }

    fn path(text: &str) -> Vec<String> {
        text.split('.').map(str::to_string).collect()
    }

    /// 1 id long (identifier), 2 k int (sorted by), 3 l list<4 struct<5 a int>>,
    /// 6 m map<7 string, 8 struct<9 b int>>.
    fn metadata() -> TableMetadata {
        let strukt = |id: i32, name: &str| {
            Type::Struct(StructType::new(vec![NestedField::optional(
                id,
                name,
                p(PrimitiveType::Int),
            )]))
        };
        let mut schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", p(PrimitiveType::Long)),
                NestedField::optional(2, "k", p(PrimitiveType::Int)),
                NestedField::optional(
                    3,
                    "l",
                    Type::List(ListType {
                        element_field: NestedField::optional(4, "element", strukt(5, "a")),
                    }),
                ),
                NestedField::optional(
                    6,
                    "m",
                    Type::Map(MapType {
                        key_field: NestedField::required(7, "key", p(PrimitiveType::String)),
                        value_field: NestedField::optional(8, "value", strukt(9, "b")),
                    }),
                ),
            ],
        );
        schema.identifier_field_ids = vec![1];
        metadata_of(schema)
    }

    /// A v2 table of `schema`, sorted by field 2 when it is primitive (a table cannot be
    /// sorted by a nested column; unsorted otherwise).
    fn metadata_of(schema: Schema) -> TableMetadata {
        let sortable = schema
            .field_by_id(2)
            .is_some_and(|f| f.field_type.as_primitive().is_some());
        let order = SortOrder {
            order_id: i64::from(sortable),
            fields: sortable
                .then_some(SortField {
                    transform: Transform::Identity,
                    source_id: 2,
                    direction: crate::spec::SortDirection::Asc,
                    null_order: crate::spec::NullOrder::First,
                })
                .into_iter()
                .collect(),
        };
        TableMetadataBuilder::new_table(
            FormatVersion::V2,
            "file:///w/t",
            schema,
            PartitionSpec::unpartitioned(),
            order,
            Default::default(),
        )
        .unwrap()
        .build()
        .unwrap()
    }

    #[test]
    fn adds_into_list_elements_and_map_values_with_fresh_ids() {
        let m = metadata();
        let s = UpdateSchema::new()
            .add_column(&path("l"), "x", p(PrimitiveType::Int), None, None)
            .add_column(
                &path("l.element"),
                "y",
                p(PrimitiveType::Int),
                None,
                Some(ColumnPosition::First),
            )
            .add_column(&path("m.value"), "z", p(PrimitiveType::String), None, None)
            .add_column(
                &[],
                "s",
                Type::Struct(StructType::new(vec![NestedField::required(
                    1,
                    "inner",
                    p(PrimitiveType::Int),
                )])),
                Some("doc".into()),
                Some(ColumnPosition::After("id".into())),
            )
            .apply(&m)
            .unwrap();
        assert_eq!(s.schema_id, 1);
        assert_eq!(s.identifier_field_ids, vec![1]);
        let names: Vec<&str> = s.columns().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["id", "s", "k", "l", "m"]);
        assert_eq!(s.field_by_id(10).map(|f| f.name.as_str()), Some("x"));
        assert_eq!(s.field_by_id(11).map(|f| f.name.as_str()), Some("y"));
        assert_eq!(s.field_by_id(12).map(|f| f.name.as_str()), Some("z"));
        // the added struct and its field: ids 13, 14; an added field is optional
        let added = s.field_by_id(13).unwrap();
        assert_eq!((added.name.as_str(), added.required), ("s", false));
        assert_eq!(added.doc.as_deref(), Some("doc"));
        assert_eq!(s.field_by_id(14).map(|f| f.name.as_str()), Some("inner"));
        assert_eq!(
            s.field_by_id(4).unwrap().field_type.to_string(),
            "struct<y: int, a: int, x: int>"
        );
        assert_eq!(
            s.field_by_id(8).unwrap().field_type.to_string(),
            "struct<b: int, z: string>"
        );
    }

    /// Paths step through any nesting of lists and maps to the struct they hold:
    /// `l.element.value` (a list of maps of structs), `m.value.element` (a map of lists
    /// of structs); add, rename, promote and drop reach the fields there.
    #[test]
    fn evolves_structs_inside_lists_of_maps_and_maps_of_lists() {
        let strukt = |id: i32| {
            Type::Struct(StructType::new(vec![
                NestedField::optional(id, "a", p(PrimitiveType::Int)),
                NestedField::optional(id + 1, "b", p(PrimitiveType::String)),
            ]))
        };
        let key = |id: i32| NestedField::required(id, "key", p(PrimitiveType::String));
        let schema = Schema::new(
            0,
            vec![
                NestedField::optional(1, "id", p(PrimitiveType::Int)),
                NestedField::optional(
                    2,
                    "l",
                    Type::List(ListType {
                        element_field: NestedField::optional(
                            3,
                            "element",
                            Type::Map(MapType {
                                key_field: key(4),
                                value_field: NestedField::optional(5, "value", strukt(6)),
                            }),
                        ),
                    }),
                ),
                NestedField::optional(
                    8,
                    "m",
                    Type::Map(MapType {
                        key_field: key(9),
                        value_field: NestedField::optional(
                            10,
                            "value",
                            Type::List(ListType {
                                element_field: NestedField::optional(11, "element", strukt(12)),
                            }),
                        ),
                    }),
                ),
            ],
        );
        let s = UpdateSchema::new()
            .add_column(
                &path("l.element.value"),
                "c",
                p(PrimitiveType::Long),
                None,
                None,
            )
            .rename_column(&path("l.element.value.a"), "aa")
            .delete_column(&path("l.element.value.b"))
            .update_column(&path("m.value.element.a"), PrimitiveType::Long)
            .add_column(
                &path("m.value.element"),
                "d",
                p(PrimitiveType::Int),
                None,
                None,
            )
            .apply(&metadata_of(schema))
            .unwrap();
        assert_eq!(
            s.field_by_id(5).unwrap().field_type.to_string(),
            "struct<aa: int, c: long>"
        );
        assert_eq!(
            s.field_by_id(11).unwrap().field_type.to_string(),
            "struct<a: long, b: string, d: int>"
        );
        assert_eq!(s.field_by_id(14).map(|f| f.name.as_str()), Some("c"));
        assert_eq!(s.field_by_id(15).map(|f| f.name.as_str()), Some("d"));
    }

    #[test]
    fn refuses_dropping_identifier_and_sort_fields() {
        let m = metadata();
        let err = UpdateSchema::new()
            .delete_column(&path("id"))
            .apply(&m)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot drop column 'id': field 1 is an identifier field"),
            "{err}"
        );
        let err = UpdateSchema::new()
            .delete_column(&path("k"))
            .apply(&m)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot drop column 'k': the table's sort order uses it"),
            "{err}"
        );
        // a nested field can go (here replaced in the same change); renaming back reuses
        // the original schema's id
        let s = UpdateSchema::new()
            .delete_column(&path("m.value.b"))
            .add_column(&path("m.value"), "c", p(PrimitiveType::Long), None, None)
            .apply(&m)
            .unwrap();
        assert_eq!(
            s.field_by_id(8).unwrap().field_type.to_string(),
            "struct<c: long>"
        );
        let s = UpdateSchema::new()
            .rename_column(&path("k"), "kk")
            .rename_column(&path("kk"), "k")
            .apply(&m)
            .unwrap();
        assert_eq!(s.schema_id, 0);
    }

    fn refusal(m: &TableMetadata, u: UpdateSchema) -> String {
        let err = u.apply(m).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        err.to_string()
    }

    #[test]
    fn refuses_two_fields_with_one_full_name() {
        let m = metadata();
        let int = || p(PrimitiveType::Int);
        let twice = |name: &str| {
            Type::Struct(StructType::new(vec![
                NestedField::optional(0, name, int()),
                NestedField::optional(0, name, int()),
            ]))
        };
        // an added struct repeating a name, inside a list's element
        let err = refusal(
            &m,
            UpdateSchema::new().add_column(
                &[],
                "y",
                Type::List(ListType {
                    element_field: NestedField::optional(0, "element", twice("a")),
                }),
                None,
                None,
            ),
        );
        assert!(
            err.contains("two fields have the name 'y.element.a' (field ids 12 and 13)"),
            "{err}"
        );
        // a top-level name with a dot clashing with a nested path, by add and by rename
        let err = refusal(
            &m,
            UpdateSchema::new().add_column(&[], "l.element", int(), None, None),
        );
        assert!(
            err.contains("two fields have the name 'l.element' (field ids 4 and 10)"),
            "{err}"
        );
        let err = refusal(
            &m,
            UpdateSchema::new().rename_column(&path("k"), "m.value.b"),
        );
        assert!(
            err.contains("two fields have the name 'm.value.b' (field ids 2 and 9)"),
            "{err}"
        );
        // names are case-sensitive, as in Java: `A` next to `a` is a new name
        let s = UpdateSchema::new()
            .add_column(&path("l"), "A", int(), None, None)
            .rename_column(&path("k"), "K")
            .apply(&m)
            .unwrap();
        assert_eq!(
            s.field_by_id(4).unwrap().field_type.to_string(),
            "struct<a: int, A: int>"
        );
        assert_eq!(s.field_by_id(2).map(|f| f.name.as_str()), Some("K"));
    }

    #[test]
    fn adds_fields_only_into_structs_the_table_has() {
        let m = metadata();
        let int = || p(PrimitiveType::Int);
        let empty_struct =
            || Type::Struct(StructType::new(vec![NestedField::optional(0, "z", int())]));
        // into a struct added by the same change (Java: "Cannot find parent struct")
        let err = refusal(
            &m,
            UpdateSchema::new()
                .add_column(&[], "st", empty_struct(), None, None)
                .add_column(&path("st"), "q", int(), None, None),
        );
        assert!(
            err.contains("cannot add column 'st.q': its parent 'st' is not in the table's schema"),
            "{err}"
        );
        // into a struct the change drops
        let err = refusal(
            &m,
            UpdateSchema::new()
                .add_column(&path("m.value"), "c", int(), None, None)
                .delete_column(&path("m")),
        );
        assert!(
            err.contains(
                "cannot add column 'm.value.c': its parent 'm.value' is dropped by the same change"
            ),
            "{err}"
        );
        // into a struct the table has: fine, also next to other changes
        let s = UpdateSchema::new()
            .add_column(&[], "st", empty_struct(), None, None)
            .add_column(&path("m.value"), "c", int(), None, None)
            .apply(&m)
            .unwrap();
        assert_eq!(
            s.field_by_id(8).unwrap().field_type.to_string(),
            "struct<b: int, c: int>"
        );
    }

    #[test]
    fn refuses_leaving_a_struct_without_fields() {
        let m = metadata();
        let u = UpdateSchema::new()
            .add_column(
                &[],
                "st",
                Type::Struct(StructType::new(vec![
                    NestedField::optional(0, "a", p(PrimitiveType::Int)),
                    NestedField::optional(0, "b", p(PrimitiveType::String)),
                ])),
                None,
                None,
            )
            .apply(&m)
            .unwrap();
        let mut b = TableMetadataBuilder::from_base(m.clone(), None);
        b.apply_all(&[
            TableUpdate::AddSchema { schema: u },
            TableUpdate::SetCurrentSchema { schema_id: -1 },
        ])
        .unwrap();
        let with_st = b.build().unwrap();
        let err = refusal(
            &with_st,
            UpdateSchema::new()
                .delete_column(&path("st.a"))
                .delete_column(&path("st.b")),
        );
        assert!(
            err.contains("cannot leave struct 'st' without fields")
                && err.contains("drop the column 'st' instead"),
            "{err}"
        );
        // one field may go
        let s = UpdateSchema::new()
            .delete_column(&path("st.a"))
            .apply(&with_st)
            .unwrap();
        assert_eq!(
            s.field_by_name("st").unwrap().field_type.to_string(),
            "struct<b: string>"
        );
        // a list's element struct and a map's value struct: drop the list or map instead
        let err = refusal(&m, UpdateSchema::new().delete_column(&path("l.a")));
        assert!(
            err.contains("cannot leave struct 'l.element' without fields")
                && err.contains("drop the column 'l' instead"),
            "{err}"
        );
        let err = refusal(&m, UpdateSchema::new().delete_column(&path("m.value.b")));
        assert!(
            err.contains("struct 'm.value' without fields")
                && err.contains("drop the column 'm' instead"),
            "{err}"
        );
        // an empty struct added through the API, and every column of the table
        let err = refusal(
            &m,
            UpdateSchema::new().add_column(
                &[],
                "e",
                Type::Struct(StructType::new(vec![])),
                None,
                None,
            ),
        );
        assert!(
            err.contains("cannot leave struct 'e' without fields"),
            "{err}"
        );
        let mut all = UpdateSchema::new();
        for c in ["l", "m"] {
            all = all.delete_column(&path(c));
        }
        let mut bare = m.clone();
        bare.schemas[0].identifier_field_ids.clear();
        bare.sort_orders.clear();
        bare.default_sort_order_id = 0;
        let s = all.clone().delete_column(&path("k")).apply(&bare).unwrap();
        assert_eq!(s.columns().len(), 1);
        let err = refusal(
            &bare,
            all.delete_column(&path("k")).delete_column(&path("id")),
        );
        assert!(
            err.contains("cannot drop every column of the table"),
            "{err}"
        );
    }

    #[test]
    fn a_struct_empty_before_the_change_is_left_alone() {
        let mut m = metadata();
        let schema = Schema::new(
            0,
            vec![
                NestedField::optional(1, "id", p(PrimitiveType::Long)),
                NestedField::optional(2, "e", Type::Struct(StructType::new(vec![]))),
            ],
        );
        m.schemas = vec![schema];
        m.sort_orders.clear();
        m.default_sort_order_id = 0;
        let s = UpdateSchema::new()
            .add_column(&[], "x", p(PrimitiveType::Int), None, None)
            .apply(&m)
            .unwrap();
        assert_eq!(s.columns().len(), 3);
    }

    #[test]
    fn promotions_follow_the_spec() {
        use PrimitiveType as P;
        let dec = |precision, scale| P::Decimal { precision, scale };
        let v2 = FormatVersion::V2;
        assert!(check_promotion(P::Int, P::Long, v2).is_ok());
        assert!(check_promotion(P::Float, P::Double, v2).is_ok());
        assert!(check_promotion(dec(9, 2), dec(18, 2), v2).is_ok());
        assert!(check_promotion(P::Long, P::Long, v2).is_ok());
        let refused = [
            (P::Long, P::Int, "not a valid type promotion"),
            (P::Int, P::Double, "not a valid type promotion"),
            (P::Date, P::Timestamp, "not a valid type promotion"),
            (dec(9, 2), dec(18, 3), "scale cannot change"),
            (dec(9, 2), dec(8, 2), "precision can only widen"),
        ];
        for (from, to, needle) in refused {
            let err = check_promotion(from, to, v2).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument);
            assert!(err.to_string().contains(needle), "{from} -> {to}: {err}");
        }
        let v3 = FormatVersion::V3;
        assert!(check_promotion(P::Date, P::Timestamp, v3).is_ok());
        assert!(check_promotion(P::Date, P::TimestampNs, v3).is_ok());
        assert!(check_promotion(P::Unknown, P::String, v3).is_ok());
        assert!(check_promotion(P::Unknown, P::String, v2).is_err());
        let err = check_promotion(P::Date, P::Timestamptz, v3).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(
            err.to_string().contains("not a valid type promotion"),
            "{err}"
        );
    }

    /// A list's element and a map's value (at any depth, `ll.element.element`) are
    /// promoted and made optional as Java's `updateColumn`/`makeColumnOptional` do
    /// (Spark's `ALTER COLUMN l.element TYPE bigint`); a map's key is not updated, and an
    /// element, key or value is not dropped, renamed, moved, commented or given a
    /// default, each refusal naming it.
    #[test]
    fn promotes_list_elements_and_map_values() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::optional(
                    1,
                    "l",
                    Type::List(ListType {
                        element_field: NestedField::required(2, "element", p(PrimitiveType::Int)),
                    }),
                ),
                NestedField::optional(
                    3,
                    "m",
                    Type::Map(MapType {
                        key_field: NestedField::required(4, "key", p(PrimitiveType::Int)),
                        value_field: NestedField::required(5, "value", p(PrimitiveType::Float)),
                    }),
                ),
                NestedField::optional(
                    9,
                    "mk",
                    Type::Map(MapType {
                        key_field: NestedField::required(
                            10,
                            "key",
                            Type::Struct(StructType::new(vec![NestedField::required(
                                11,
                                "x",
                                p(PrimitiveType::Int),
                            )])),
                        ),
                        value_field: NestedField::optional(12, "value", p(PrimitiveType::Int)),
                    }),
                ),
                NestedField::optional(
                    6,
                    "ll",
                    Type::List(ListType {
                        element_field: NestedField::optional(
                            7,
                            "element",
                            Type::List(ListType {
                                element_field: NestedField::optional(
                                    8,
                                    "element",
                                    p(PrimitiveType::Decimal {
                                        precision: 5,
                                        scale: 2,
                                    }),
                                ),
                            }),
                        ),
                    }),
                ),
            ],
        );
        let m = metadata_of(schema);
        let s = UpdateSchema::new()
            .update_column(&path("l.element"), PrimitiveType::Long)
            .make_column_optional(&path("l.element"))
            .update_column(&path("m.value"), PrimitiveType::Double)
            .make_column_optional(&path("m.value"))
            .update_column(
                &path("ll.element.element"),
                PrimitiveType::Decimal {
                    precision: 10,
                    scale: 2,
                },
            )
            // the key's own type: a no-op, as in Java
            .update_column(&path("m.key"), PrimitiveType::Int)
            .apply(&m)
            .unwrap();
        assert_eq!(s.schema_id, 1);
        let types: Vec<String> = s
            .columns()
            .iter()
            .map(|f| f.field_type.to_string())
            .collect();
        assert_eq!(
            types,
            [
                "list<long>",
                "map<int, double>",
                "map<struct<x: int>, int>",
                "list<list<decimal(10, 2)>>"
            ]
        );
        let element = s.field_by_id(2).unwrap();
        assert_eq!(
            (element.name.as_str(), element.required),
            ("element", false)
        );
        assert!(!s.field_by_id(5).unwrap().required);
        assert!(s.field_by_id(4).unwrap().required);

        let refused = [
            (
                UpdateSchema::new().update_column(&path("m.key"), PrimitiveType::Long),
                "cannot change the key of map 'm': map keys cannot be updated",
            ),
            (
                UpdateSchema::new().make_column_optional(&path("m.key")),
                "cannot change the key of map 'm'",
            ),
            (
                UpdateSchema::new().delete_column(&path("m.key")),
                "cannot drop the key of map 'm': it is part of the type of 'm'",
            ),
            (
                UpdateSchema::new().delete_column(&path("ll.element.element")),
                "cannot drop the element of list 'll.element'",
            ),
            (
                UpdateSchema::new().rename_column(&path("m.value"), "v"),
                "cannot rename the value of map 'm'",
            ),
            (
                UpdateSchema::new().move_column(&path("l.element"), ColumnPosition::First),
                "cannot move the element of list 'l'",
            ),
            (
                UpdateSchema::new().update_column_doc(&path("l.element"), Some("d".into())),
                "cannot set a comment on the element of list 'l'",
            ),
            (
                UpdateSchema::new().update_column(&path("l.element"), PrimitiveType::Int),
                "",
            ),
            (
                UpdateSchema::new().add_column(
                    &path("mk.key"),
                    "y",
                    p(PrimitiveType::Int),
                    None,
                    None,
                ),
                "cannot change the key of map 'mk': map keys cannot be updated",
            ),
            (
                UpdateSchema::new().rename_column(&path("mk.key.x"), "z"),
                "cannot change the key of map 'mk'",
            ),
            (
                UpdateSchema::new().update_column(&path("mk.key.x"), PrimitiveType::Long),
                "cannot change the key of map 'mk'",
            ),
        ];
        for (update, needle) in refused {
            if needle.is_empty() {
                // the element's own type: a no-op
                assert_eq!(update.apply(&m).unwrap().schema_id, 0);
                continue;
            }
            let err = update.apply(&m).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
            assert!(err.to_string().contains(needle), "{needle}: {err}");
        }
    }

    /// `DROP COLUMNS (l, l.element.a)`: the nested field goes with its column, as Java
    /// resolves both against the base schema (was "column 'l.element.a' does not exist").
    #[test]
    fn dropping_a_column_and_a_field_inside_it() {
        let m = metadata();
        let s = UpdateSchema::new()
            .delete_column(&path("l.element.a"))
            .delete_column(&path("l"))
            .delete_column(&path("m.value.b"))
            .apply(&m)
            .unwrap_err();
        // m.value.b is the only field of m's value struct: refused as before
        assert!(s.to_string().contains("without fields"), "{s}");
        let s = UpdateSchema::new()
            .delete_column(&path("l"))
            .delete_column(&path("l.element.a"))
            .apply(&m)
            .unwrap();
        let names: Vec<&str> = s.columns().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["id", "k", "m"]);
        // a field that does not exist is still an error
        for missing in ["m.value.nope", "l.element.nope"] {
            let err = UpdateSchema::new()
                .delete_column(&path("l"))
                .delete_column(&path(missing))
                .apply(&m)
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
        }
    }
}
