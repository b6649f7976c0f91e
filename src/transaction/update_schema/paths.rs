//! Paths of field names inside a schema being changed (`st.a`, `l.element`, `m.value`):
//! finding the field a path names, the sibling list holding it, and what slot it sits in
//! (struct member, list element, map key or value), with the errors Iceberg Java's
//! `SchemaUpdate` gives for a missing column or a map key.

use crate::error::{Error, ErrorKind, Result};
use crate::spec::{NestedField, Type};

pub(super) fn name(path: &[String]) -> String {
    path.join(".")
}

pub(super) fn not_found(path: &[String]) -> Error {
    Error::not_found(format!("column '{}' does not exist", name(path)))
}

/// The fields of the struct a field holds: its own struct, or the struct of its list's
/// element or map's value, through any nesting of lists and maps (`l.element.value` of a
/// list of maps of structs). `rest` starting with `element`/`value` steps through each.
pub(super) fn children_mut<'a>(
    field: &'a mut NestedField,
    rest: &mut &[String],
) -> Option<&'a mut Vec<NestedField>> {
    let mut current = field;
    loop {
        current = match current.field_type.as_mut() {
            Type::Struct(s) => return Some(&mut s.fields),
            Type::List(l) => {
                skip_word(rest, "element");
                &mut l.element_field
            }
            Type::Map(m) => {
                skip_word(rest, "value");
                &mut m.value_field
            }
            Type::Primitive(_) => return None,
        };
    }
}

pub(super) fn skip_word(rest: &mut &[String], word: &str) {
    if let Some((first, tail)) = rest.split_first() {
        if first == word {
            *rest = tail;
        }
    }
}

/// The sibling list holding the struct at `path` (empty: the top level).
pub(super) fn struct_mut<'a>(
    fields: &'a mut Vec<NestedField>,
    path: &[String],
) -> Result<&'a mut Vec<NestedField>> {
    let mut current = fields;
    let mut rest = path;
    while let Some((first, tail)) = rest.split_first() {
        rest = tail;
        let field = current
            .iter_mut()
            .find(|f| &f.name == first)
            .ok_or_else(|| not_found(path))?;
        if matches!(field.field_type.as_ref(), Type::Map(_))
            && rest.first().map(String::as_str) == Some("key")
        {
            // Java: "Cannot add fields to map keys" / "Cannot alter map keys"
            let map = &path[..path.len() - rest.len()];
            return Err(key_refusal(&[map, &["key".to_string()]].concat()));
        }
        current = children_mut(field, &mut rest).ok_or_else(|| {
            Error::invalid_argument(format!("column '{}' is not a struct", name(path)))
        })?;
    }
    Ok(current)
}

/// The sibling list holding the field at `path`, and its index there.
pub(super) fn locate<'a>(
    fields: &'a mut Vec<NestedField>,
    path: &[String],
) -> Result<(&'a mut Vec<NestedField>, usize)> {
    let (last, parent) = path.split_last().ok_or_else(|| not_found(path))?;
    let siblings = struct_mut(fields, parent).map_err(|e| {
        if e.kind() == ErrorKind::NotFound {
            not_found(path)
        } else {
            e
        }
    })?;
    let i = siblings
        .iter()
        .position(|f| &f.name == last)
        .ok_or_else(|| not_found(path))?;
    Ok((siblings, i))
}

/// Where a field sits: in a struct, or as the element of a list, the key or the value of
/// a map (Java names these `l.element`, `m.key`, `m.value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Member,
    Element,
    Key,
    Value,
}

impl Slot {
    /// What the field is, for an error: `the element of list 'l'`.
    pub(super) fn describe(self, path: &[String]) -> String {
        let parent = path
            .split_last()
            .map(|(_, parent)| name(parent))
            .unwrap_or_default();
        match self {
            Slot::Member => format!("column '{}'", name(path)),
            Slot::Element => format!("the element of list '{parent}'"),
            Slot::Key => format!("the key of map '{parent}'"),
            Slot::Value => format!("the value of map '{parent}'"),
        }
    }
}

/// The field at `path` and its [`Slot`]: a struct field (through list elements and map
/// values holding structs, as [`struct_mut`]), or, when the path's last name is
/// `element` of a list or `key`/`value` of a map (at any depth: `l.element.element`),
/// that element, key or value itself, so `l.element` and `m.value` of primitives can be
/// promoted or made optional, as Java's `updateColumn`/`makeColumnOptional` allow.
pub(super) fn slot_at<'a>(
    fields: &'a mut Vec<NestedField>,
    path: &[String],
) -> Result<(&'a mut NestedField, Slot)> {
    let (last, parent) = path.split_last().ok_or_else(|| not_found(path))?;
    let slot = match (parent.is_empty(), last.as_str()) {
        (false, "element") => Slot::Element,
        (false, "key") => Slot::Key,
        (false, "value") => Slot::Value,
        _ => Slot::Member,
    };
    // else a struct field named `element`, `key` or `value`
    if slot != Slot::Member && holds(fields, parent, slot) {
        let (holder, _) = slot_at(fields, parent)?;
        return match (holder.field_type.as_mut(), slot) {
            (Type::List(l), Slot::Element) => Ok((&mut l.element_field, slot)),
            (Type::Map(m), Slot::Key) => Ok((&mut m.key_field, slot)),
            (Type::Map(m), Slot::Value) => Ok((&mut m.value_field, slot)),
            _ => Err(not_found(path)),
        };
    }
    let (siblings, i) = locate(fields, path)?;
    let field = siblings.get_mut(i).ok_or_else(|| not_found(path))?;
    Ok((field, Slot::Member))
}

/// Whether the field at `parent` is a list (for [`Slot::Element`]) or a map (for
/// [`Slot::Key`] and [`Slot::Value`]).
pub(super) fn holds(fields: &mut Vec<NestedField>, parent: &[String], slot: Slot) -> bool {
    matches!(
        slot_at(fields, parent).map(|(holder, _)| (holder.field_type.as_ref(), slot)),
        Ok((Type::List(_), Slot::Element)) | Ok((Type::Map(_), Slot::Key | Slot::Value))
    )
}

/// The field at `path` whose type, nullability, doc or default changes: a struct field,
/// a list's element or a map's value (a map's key is refused, as in Java: "Cannot update
/// map keys").
pub(super) fn field_at<'a>(
    fields: &'a mut Vec<NestedField>,
    path: &[String],
) -> Result<(&'a mut NestedField, Slot)> {
    let (field, slot) = slot_at(fields, path)?;
    if slot == Slot::Key {
        return Err(key_refusal(path));
    }
    Ok((field, slot))
}

pub(super) fn key_refusal(path: &[String]) -> Error {
    Error::invalid_argument(format!(
        "cannot change {}: map keys cannot be updated",
        Slot::Key.describe(path)
    ))
}

/// Refuse deleting, renaming or moving a list's element or a map's key or value: they
/// are part of their list's or map's type (Java: "Cannot delete map keys").
pub(super) fn check_member(
    fields: &mut Vec<NestedField>,
    path: &[String],
    what: &str,
) -> Result<()> {
    match slot_at(fields, path) {
        Ok((_, slot)) if slot != Slot::Member => Err(Error::invalid_argument(format!(
            "cannot {what} {}: it is part of the type of '{}'",
            slot.describe(path),
            name(&path[..path.len().saturating_sub(1)])
        ))),
        _ => Ok(()),
    }
}
