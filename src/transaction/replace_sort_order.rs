//! [`ReplaceSortOrder`]: set the table's default sort order (Java `ReplaceSortOrder`,
//! `BaseReplaceSortOrder`; spec "Sorting", "Sort Orders"; REST `add-sort-order` and
//! `set-default-sort-order`).
//!
//! The order is a list of terms (a transform of a column) with a direction and a null
//! order; no terms is the unsorted order, whose id is always 0. Another order takes
//! the id of an existing order with the same fields (Java's
//! `reuseOrCreateNewSortOrderId`), or one above the highest. An order equal to the
//! default commits nothing. Writers then sort the rows of each data file by it and
//! record its id in the files (`sort_order_id`).
//!
//! Refusals ([`ErrorKind::NotFound`](crate::ErrorKind) for an unknown column,
//! [`ErrorKind::InvalidArgument`](crate::ErrorKind) otherwise, naming the term): a
//! transform the column's type does not take, a column that is not primitive, a field
//! inside a list or map (nested struct fields are sources, as in Java). A retry
//! applies the terms to the refreshed schema while each column still means the same
//! field (module `transaction::pinned_names`).

use async_trait::async_trait;

use super::pinned_names::PinnedNames;
use super::update_partition_spec::{pinned_columns, resolve_column, PartitionTerm};
use super::TransactionAction;
use crate::error::{Error, Result};
pub use crate::spec::sort_order::{NullOrder, SortDirection};
use crate::spec::sort_order::{SortField, SortOrder};
use crate::spec::{Schema, TableMetadata, TableUpdate, Transform, Type};
use crate::table::Table;

/// Replace the default sort order in one commit.
#[derive(Debug, Clone, Default)]
pub struct ReplaceSortOrder {
    terms: Vec<(PartitionTerm, SortDirection, NullOrder)>,
    /// The columns the terms name, as resolved on the first schema the change was
    /// applied to (module `transaction::pinned_names`).
    pinned: Option<PinnedNames>,
}

impl ReplaceSortOrder {
    /// The unsorted order (until terms are added).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sort by `term` in `direction`; nulls first for ascending, last for descending
    /// unless `nulls` says (Java's `SortOrder.Builder.asc/desc` defaults).
    pub fn sort_by(
        mut self,
        term: PartitionTerm,
        direction: SortDirection,
        nulls: Option<NullOrder>,
    ) -> Self {
        let nulls = nulls.unwrap_or(match direction {
            SortDirection::Asc => NullOrder::First,
            SortDirection::Desc => NullOrder::Last,
        });
        self.terms.push((term, direction, nulls));
        self
    }

    /// The new sort order over `m` (its id set as the commit will use it).
    ///
    /// Errors: see the module docs.
    pub fn apply(&self, m: &TableMetadata) -> Result<SortOrder> {
        let schema = m.current_schema();
        let mut fields = Vec::with_capacity(self.terms.len());
        for (term, direction, nulls) in &self.terms {
            if let Some(collection) = collection_on_path(schema, &term.column) {
                return Err(Error::invalid_argument(format!(
                    "cannot sort by '{}': it is inside a list or map ('{collection}'), and \
                     a sort order's source is a column or a field of structs only (Java's \
                     SortOrder refuses one in a list or map)",
                    term.column
                )));
            }
            let source = resolve_column(schema, &term.column)?;
            if let Transform::Unknown(name) = &term.transform {
                return Err(Error::invalid_argument(format!(
                    "cannot sort by {term}: icefloe does not know the transform '{name}'"
                )));
            }
            if source.field_type.as_primitive().is_none() {
                return Err(Error::invalid_argument(format!(
                    "cannot sort by {term}: column '{}' is of type {}",
                    term.column, source.field_type
                )));
            }
            term.transform
                .check_argument()
                .map_err(|e| e.context(format!("cannot sort by {term}")))?;
            if !term.transform.can_transform(&source.field_type) {
                return Err(Error::invalid_argument(format!(
                    "cannot sort by {term}: transform {} cannot apply to column '{}' of type {}",
                    term.transform, term.column, source.field_type
                )));
            }
            fields.push(SortField {
                transform: term.transform.clone(),
                source_id: source.id,
                direction: *direction,
                null_order: *nulls,
            });
        }
        let order_id = if fields.is_empty() {
            0
        } else {
            match m.sort_orders.iter().find(|o| o.fields == fields) {
                Some(o) => o.order_id,
                None => m.sort_orders.iter().map(|o| o.order_id).max().unwrap_or(0) + 1,
            }
        };
        Ok(SortOrder { order_id, fields })
    }

    /// The `add-sort-order` / `set-default-sort-order` updates over `m` (none when the
    /// default order does not change).
    pub(crate) fn updates_for(&self, m: &TableMetadata) -> Result<Vec<TableUpdate>> {
        let order = self.apply(m)?;
        Ok(if order.order_id == m.default_sort_order_id {
            vec![]
        } else if m.sort_orders.iter().any(|o| o.order_id == order.order_id) {
            vec![TableUpdate::SetDefaultSortOrder {
                sort_order_id: order.order_id,
            }]
        } else {
            vec![
                TableUpdate::AddSortOrder { sort_order: order },
                TableUpdate::SetDefaultSortOrder { sort_order_id: -1 },
            ]
        })
    }
}

/// The list or map (its dotted name) that dotted name `column` goes into, when the
/// name reaches past one (`l.x`, `l.element.x`, `m.value.y`); `None` otherwise.
fn collection_on_path(schema: &Schema, column: &str) -> Option<String> {
    let mut parts = column.split('.');
    let mut field = schema.field_by_name(parts.next()?)?;
    let mut path = field.name.clone();
    for part in parts {
        match field.field_type.as_ref() {
            Type::Struct(s) => {
                field = s.fields.iter().find(|f| f.name == part)?;
                path = format!("{path}.{}", field.name);
            }
            Type::List(_) | Type::Map(_) => return Some(path),
            Type::Primitive(_) => return None,
        }
    }
    None
}

#[async_trait]
impl TransactionAction for ReplaceSortOrder {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        // a retry applies the terms by column name again: each must still mean its field
        let columns = self.terms.iter().map(|(t, _, _)| &t.column);
        let now = pinned_columns(columns, table.metadata().current_schema());
        PinnedNames::hold(&mut self.pinned, now, "sort order change")?;
        self.updates_for(table.metadata())
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}
