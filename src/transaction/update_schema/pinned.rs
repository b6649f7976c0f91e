//! The column names a schema change addresses, for pinning them across retries
//! ([`PinnedNames`]).

use super::paths::{name, slot_at};
use super::{Change, ColumnPosition};
use crate::spec::Schema;
use crate::transaction::pinned_names::PinnedNames;

/// The names `changes` address (the fields they drop, rename, retype, comment, move or
/// make identifiers, the structs they add into, the siblings they move after), resolved
/// in `schema`.
pub(super) fn resolve(changes: &[Change], schema: &Schema) -> PinnedNames {
    let mut fields = schema.fields.fields.clone();
    let pairs = addressed(changes)
        .iter()
        .map(|p| (name(p), slot_at(&mut fields, p).ok().map(|(f, _)| f.id)))
        .collect();
    PinnedNames::from_pairs(pairs)
}

/// The name paths `changes` address, in order (a path may repeat).
fn addressed(changes: &[Change]) -> Vec<Vec<String>> {
    let mut out = vec![];
    for change in changes {
        match change {
            Change::Add {
                parent, position, ..
            } => {
                if !parent.is_empty() {
                    out.push(parent.clone());
                }
                if let Some(ColumnPosition::After(sibling)) = position {
                    out.push(parent.iter().chain([sibling]).cloned().collect());
                }
            }
            Change::Delete(p)
            | Change::UpdateDefault(p, _)
            | Change::Rename(p, _)
            | Change::UpdateType(p, _)
            | Change::MakeOptional(p)
            | Change::Require(p)
            | Change::UpdateDoc(p, _) => out.push(p.clone()),
            Change::Move(p, position) => {
                out.push(p.clone());
                if let ColumnPosition::After(sibling) = position {
                    let parent = &p[..p.len().saturating_sub(1)];
                    out.push(parent.iter().chain([sibling]).cloned().collect());
                }
            }
            Change::SetIdentifiers(paths) | Change::DropIdentifiers(paths) => {
                out.extend(paths.iter().cloned())
            }
        }
    }
    out
}
