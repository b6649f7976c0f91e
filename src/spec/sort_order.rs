//! Sort orders (spec: "Sorting", Appendix C "Sort Orders").

use serde::{Deserialize, Serialize};

use super::partition::Transform;

/// One field of a sort order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SortField {
    /// The transform applied before sorting.
    pub transform: Transform,
    /// The source column's field id.
    pub source_id: i32,
    /// `asc` or `desc`.
    pub direction: String,
    /// `nulls-first` or `nulls-last`.
    pub null_order: String,
}

/// A sort order with its id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SortOrder {
    /// `order-id` (0 = unsorted).
    pub order_id: i64,
    /// The sort fields.
    pub fields: Vec<SortField>,
}
