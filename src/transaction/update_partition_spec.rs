//! [`UpdatePartitionSpec`]: partition evolution as one commit (Java
//! `BaseUpdatePartitionSpec`; spec "Partition Evolution"; REST `add-spec` and
//! `set-default-spec`).
//!
//! Fields are added (a transform of a column, with a name or Java's default name:
//! `id` for identity, `id_bucket_16`, `s_trunc_4`, `ts_year`, `ts_month`, `ts_day`,
//! `ts_hour`) and removed (by name or by transform and column) against the table's
//! default spec. The result becomes the new default spec:
//! - partition field ids are never reused for a different field: a new field gets the
//!   id after `last-partition-id`, except that in v2+ a field equal (same source and
//!   transform, and name when one is given) to a field of an earlier spec takes that
//!   field's id back, as Java does, since its values mean the same;
//! - v1 keeps a removed field in place with the `void` transform (v1 field ids are
//!   positional; spec "Partition Evolution"), v2 and later drop it; a new field taking
//!   the name of a `void` field (one removed now or earlier, so a v1 column can be
//!   partitioned by again after `DROP PARTITION FIELD`) renames the `void` field to
//!   `<name>_<field id>`, as Java does (`k` becomes `k_1000`);
//! - the spec id is that of an existing spec with the same fields (Java's
//!   `reuseOrCreateNewSpecId`), or one above the highest; a result equal to the
//!   default spec commits nothing.
//!
//! Refusals ([`ErrorKind::NotFound`](crate::ErrorKind) for a name that does not exist,
//! [`ErrorKind::InvalidArgument`](crate::ErrorKind) for the rest, each naming the
//! field): an unknown column; a transform the column's type does not take
//! ([`Transform::can_transform`]); a field equal or redundant to one the spec keeps
//! (two of year/month/day/hour on one column are redundant, as in Java); a name used
//! twice, empty, or naming a schema column other than an identity field's own source;
//! removing a field the default spec does not have, or one added in the same change.
//!
//! A retry re-applies the changes by name to the refreshed table's default spec and
//! schema, while each column a term names still means the same field (module
//! `transaction::pinned_names`: else the commit fails naming the column).

use std::collections::{BTreeSet, HashMap};

use async_trait::async_trait;

use super::pinned_names::PinnedNames;
use super::TransactionAction;
use crate::error::{Error, Result};
use crate::spec::{
    FormatVersion, NestedField, PartitionField, PartitionSpec, Schema, TableMetadata, TableUpdate,
    Transform, Type,
};
use crate::table::Table;

/// A transform of a column, the column a dotted name path (`id`, `point.x`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionTerm {
    /// The transform.
    pub transform: Transform,
    /// The source column's name (`a.b` for a field of struct `a`).
    pub column: String,
}

impl PartitionTerm {
    /// `transform` of `column`.
    pub fn new(transform: Transform, column: impl Into<String>) -> Self {
        Self {
            transform,
            column: column.into(),
        }
    }

    /// Iceberg Java's default partition field name for this term (`PartitionNameGenerator`
    /// of `BaseUpdatePartitionSpec`).
    pub fn default_name(&self) -> String {
        let c = &self.column;
        match self.transform {
            Transform::Identity => c.clone(),
            Transform::Bucket(n) => format!("{c}_bucket_{n}"),
            Transform::Truncate(w) => format!("{c}_trunc_{w}"),
            Transform::Year => format!("{c}_year"),
            Transform::Month => format!("{c}_month"),
            Transform::Day => format!("{c}_day"),
            Transform::Hour => format!("{c}_hour"),
            Transform::Void | Transform::Unknown(_) => format!("{c}_null"),
        }
    }
}

impl std::fmt::Display for PartitionTerm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.transform {
            Transform::Identity => write!(f, "{}", self.column),
            Transform::Bucket(n) => write!(f, "bucket({n}, {})", self.column),
            Transform::Truncate(w) => write!(f, "truncate({w}, {})", self.column),
            t => write!(f, "{t}({})", self.column),
        }
    }
}

/// A field of the default spec, by its name or by its term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionFieldRef {
    /// The partition field's name.
    Name(String),
    /// The field with this transform of this column.
    Term(PartitionTerm),
}

impl std::fmt::Display for PartitionFieldRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PartitionFieldRef::Name(n) => write!(f, "'{n}'"),
            PartitionFieldRef::Term(t) => write!(f, "{t}"),
        }
    }
}

/// Add and remove partition fields in one commit (see the module docs for the rules).
#[derive(Debug, Clone, Default)]
pub struct UpdatePartitionSpec {
    adds: Vec<(PartitionTerm, Option<String>)>,
    removes: Vec<PartitionFieldRef>,
    /// The columns the terms name, as resolved on the first schema the change was
    /// applied to (module `transaction::pinned_names`).
    pinned: Option<PinnedNames>,
}

impl UpdatePartitionSpec {
    /// No changes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a field partitioning by `term`, named `name` or by default.
    pub fn add_field(mut self, term: PartitionTerm, name: Option<String>) -> Self {
        self.adds.push((term, name));
        self
    }

    /// Remove a field of the default spec.
    pub fn remove_field(mut self, field: PartitionFieldRef) -> Self {
        self.removes.push(field);
        self
    }

    /// Replace a field of the default spec with a new one (Spark's `REPLACE PARTITION
    /// FIELD`): a removal and an addition.
    pub fn replace_field(
        self,
        field: PartitionFieldRef,
        term: PartitionTerm,
        name: Option<String>,
    ) -> Self {
        self.remove_field(field).add_field(term, name)
    }

    /// The new partition spec over `m`'s default spec (its id set as the commit will
    /// use it).
    ///
    /// Errors: see the module docs.
    pub fn apply(&self, m: &TableMetadata) -> Result<PartitionSpec> {
        let schema = m.current_schema();
        let spec = m.default_partition_spec().ok_or_else(|| {
            Error::invalid_data(format!("no partition spec {}", m.default_spec_id))
        })?;
        // removals: indexes into the default spec's fields
        let mut removed = BTreeSet::new();
        for r in &self.removes {
            let index = find_field(spec, schema, r)?;
            if !removed.insert(index) {
                return Err(Error::invalid_argument(format!(
                    "partition field {r} is removed twice"
                )));
            }
        }
        let mut fields: Vec<Option<PartitionField>> =
            spec.fields.iter().cloned().map(Some).collect();
        let mut next_id = m.last_partition_id;
        let mut added: Vec<PartitionField> = vec![];
        for (term, name) in &self.adds {
            let source = resolve_column(schema, &term.column)?;
            if matches!(term.transform, Transform::Void | Transform::Unknown(_)) {
                return Err(Error::invalid_argument(format!(
                    "cannot add partition field {term}: the {} transform is not for new fields",
                    term.transform
                )));
            }
            term.transform
                .check_argument()
                .map_err(|e| e.context(format!("cannot add partition field {term}")))?;
            if !term.transform.can_transform(&source.field_type) {
                return Err(Error::invalid_argument(format!(
                    "cannot add partition field {term}: transform {} cannot apply to column \
                     '{}' of type {}",
                    term.transform, term.column, source.field_type
                )));
            }
            if let Some(same) = added
                .iter()
                .find(|f| f.source_id == source.id && f.transform == term.transform)
            {
                return Err(Error::invalid_argument(format!(
                    "partition field {term} is added twice (as '{}')",
                    same.name
                )));
            }
            if let Some(f) = added.iter().find(|f| {
                f.source_id == source.id && f.transform.dedup_name() == term.transform.dedup_name()
            }) {
                return Err(Error::invalid_argument(format!(
                    "cannot add partition field {term}: redundant with the added field '{}' ({})",
                    f.name, f.transform
                )));
            }
            // a field the spec keeps with the same or a redundant transform
            let existing = spec.fields.iter().enumerate().find(|(_, f)| {
                f.source_id == source.id
                    && f.transform != Transform::Void
                    && f.transform.dedup_name() == term.transform.dedup_name()
            });
            if let Some((i, f)) = existing {
                if !removed.contains(&i) {
                    return Err(Error::invalid_argument(format!(
                        "cannot add partition field {term}: the spec already has '{}' ({}); \
                         drop or replace it",
                        f.name, f.transform
                    )));
                }
                if f.transform == term.transform {
                    // removed and added back: the same field, perhaps renamed (Java)
                    removed.remove(&i);
                    if let (Some(Some(kept)), Some(name)) = (fields.get_mut(i), name) {
                        kept.name = name.clone();
                    }
                    continue;
                }
            }
            let recycled = (m.format_version >= FormatVersion::V2)
                .then(|| {
                    m.partition_specs.iter().flat_map(|s| &s.fields).find(|f| {
                        f.source_id == source.id
                            && f.transform == term.transform
                            && f.field_id.is_some()
                            && name.as_ref().is_none_or(|n| *n == f.name)
                    })
                })
                .flatten();
            let field = match recycled {
                Some(f) => f.clone(),
                None => {
                    next_id += 1;
                    PartitionField {
                        source_id: source.id,
                        field_id: Some(next_id),
                        name: name.clone().unwrap_or_else(|| term.default_name()),
                        transform: term.transform.clone(),
                    }
                }
            };
            added.push(field);
        }
        let added_names: BTreeSet<&str> = added.iter().map(|f| f.name.as_str()).collect();
        for &i in &removed {
            let Some(slot) = fields.get_mut(i) else {
                continue;
            };
            if m.format_version == FormatVersion::V1 {
                // v1: the field stays in place, always null
                if let Some(f) = slot {
                    f.transform = Transform::Void;
                    f.field_id = Some(spec.field_id(i));
                }
            } else {
                *slot = None;
            }
        }
        // a void field (removed now, or by an earlier change) whose name a new field takes
        // is renamed `<name>_<field id>` (Java `BaseUpdatePartitionSpec.addField`)
        for (i, slot) in fields.iter_mut().enumerate() {
            if let Some(f) = slot {
                if f.transform == Transform::Void && added_names.contains(f.name.as_str()) {
                    let id = spec.field_id(i);
                    f.name = format!("{}_{id}", f.name);
                    f.field_id = Some(id);
                }
            }
        }
        let mut fields: Vec<PartitionField> = fields.into_iter().flatten().collect();
        fields.extend(added);
        check_names(&fields, schema)?;
        let mut new = PartitionSpec { spec_id: 0, fields };
        new.spec_id = spec_id_in(m, &new);
        Ok(new)
    }
}

/// The id `spec` takes in `m`: that of a spec with the same fields already there, else
/// one above every spec id.
pub(super) fn spec_id_in(m: &TableMetadata, spec: &PartitionSpec) -> i32 {
    match m.partition_specs.iter().find(|s| same_fields(s, spec)) {
        Some(s) => s.spec_id,
        None => {
            m.partition_specs
                .iter()
                .map(|s| s.spec_id)
                .max()
                .unwrap_or(-1)
                + 1
        }
    }
}

/// The `add-spec` / `set-default-spec` updates that make `spec` (its id from
/// [`spec_id_in`]) the default of `m`; none when it is the default already.
pub(super) fn default_spec_updates(m: &TableMetadata, spec: PartitionSpec) -> Vec<TableUpdate> {
    if spec.spec_id == m.default_spec_id {
        vec![]
    } else if m.partition_spec_by_id(spec.spec_id).is_some() {
        vec![TableUpdate::SetDefaultSpec {
            spec_id: spec.spec_id,
        }]
    } else {
        vec![
            TableUpdate::AddSpec { spec },
            TableUpdate::SetDefaultSpec { spec_id: -1 },
        ]
    }
}

/// Whether two specs have the same fields (ids, names, sources and transforms; v1
/// positional ids compared as assigned).
fn same_fields(a: &PartitionSpec, b: &PartitionSpec) -> bool {
    a.fields.len() == b.fields.len()
        && a.fields.iter().enumerate().all(|(i, f)| {
            let g = &b.fields[i];
            a.field_id(i) == b.field_id(i)
                && f.name == g.name
                && f.source_id == g.source_id
                && f.transform == g.transform
        })
}

/// Names: not empty, unique, and not a schema column's name unless the field is an
/// identity (or void) field of that very column (Java `checkAndAddPartitionName`).
fn check_names(fields: &[PartitionField], schema: &Schema) -> Result<()> {
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for f in fields {
        if f.name.is_empty() {
            return Err(Error::invalid_argument("a partition field name is empty"));
        }
        if seen.insert(&f.name, ()).is_some() {
            return Err(Error::invalid_argument(format!(
                "partition field name '{}' is used twice",
                f.name
            )));
        }
        if let Ok(column) = resolve_column(schema, &f.name) {
            let own_source = column.id == f.source_id
                && matches!(f.transform, Transform::Identity | Transform::Void);
            if !own_source {
                return Err(Error::invalid_argument(format!(
                    "partition field name '{}' is the name of a column; choose another \
                     name with AS",
                    f.name
                )));
            }
        }
    }
    Ok(())
}

/// The index in `spec` of the field `r` names.
fn find_field(spec: &PartitionSpec, schema: &Schema, r: &PartitionFieldRef) -> Result<usize> {
    let found = match r {
        PartitionFieldRef::Name(n) => spec.fields.iter().position(|f| &f.name == n),
        PartitionFieldRef::Term(t) => {
            let source = resolve_column(schema, &t.column)?;
            spec.fields
                .iter()
                .position(|f| f.source_id == source.id && f.transform == t.transform)
        }
    };
    found.ok_or_else(|| {
        Error::not_found(format!(
            "partition field {r} is not in the current partition spec {} ({})",
            spec.spec_id,
            if spec.fields.is_empty() {
                "unpartitioned".to_string()
            } else {
                spec.fields
                    .iter()
                    .map(|f| format!("{}: {}", f.name, f.transform))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ))
    })
}

/// `columns` (dotted name paths) with the field ids they resolve to in `schema`.
pub(crate) fn pinned_columns<'a>(
    columns: impl Iterator<Item = &'a String>,
    schema: &Schema,
) -> PinnedNames {
    let pairs = columns
        .map(|c| (c.clone(), resolve_column(schema, c).ok().map(|f| f.id)))
        .collect();
    PinnedNames::from_pairs(pairs)
}

/// A column by its dotted name path, through structs.
///
/// Errors: [`crate::ErrorKind::NotFound`] "column '…' does not exist", noting a top-level
/// column of the name in another case (module `crate::column_case`).
pub(crate) fn resolve_column<'s>(schema: &'s Schema, column: &str) -> Result<&'s NestedField> {
    let missing = || {
        let e = Error::not_found(format!("column '{column}' does not exist"));
        let top = column.split('.').next().unwrap_or(column);
        let columns = schema.columns().iter().map(|f| f.name.as_str());
        match crate::column_case::other_case_note(top, columns) {
            Some(note) => e.with_note(note),
            None => e,
        }
    };
    let mut parts = column.split('.');
    let first = parts.next().ok_or_else(missing)?;
    let mut field = schema.field_by_name(first).ok_or_else(missing)?;
    for part in parts {
        let Type::Struct(s) = field.field_type.as_ref() else {
            return Err(missing());
        };
        field = s
            .fields
            .iter()
            .find(|f| f.name == part)
            .ok_or_else(missing)?;
    }
    Ok(field)
}

#[async_trait]
impl TransactionAction for UpdatePartitionSpec {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        // a retry applies the terms by column name again: each must still mean its field
        let columns =
            self.adds
                .iter()
                .map(|(t, _)| &t.column)
                .chain(self.removes.iter().filter_map(|r| match r {
                    PartitionFieldRef::Term(t) => Some(&t.column),
                    PartitionFieldRef::Name(_) => None,
                }));
        let now = pinned_columns(columns, table.metadata().current_schema());
        PinnedNames::hold(&mut self.pinned, now, "partition spec change")?;
        self.updates_for(table.metadata())
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}

impl UpdatePartitionSpec {
    /// The `add-spec` / `set-default-spec` updates over `m` (none when the default spec
    /// does not change).
    pub(crate) fn updates_for(&self, m: &TableMetadata) -> Result<Vec<TableUpdate>> {
        Ok(default_spec_updates(m, self.apply(m)?))
    }
}

#[cfg(test)]
#[path = "update_partition_spec_tests.rs"]
mod tests;
