//! Sort orders (spec: "Sorting", Appendix C "Sort Orders").

use std::fmt;

use serde::{Deserialize, Serialize};

use super::partition::Transform;
use super::schema::Schema;
use crate::error::{Error, Result};

/// A sort field's direction (spec: "Sort Orders", `direction`; Java `SortDirection`).
/// Written as `asc` / `desc`; read case-insensitively, as Java's `SortOrderParser`
/// reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortDirection {
    /// Ascending (`asc`).
    Asc,
    /// Descending (`desc`).
    Desc,
}

/// Where a sort field's nulls go (spec: "Sort Orders", `null-order`; Java `NullOrder`).
/// Written as `nulls-first` / `nulls-last`; read case-insensitively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NullOrder {
    /// `nulls-first`.
    First,
    /// `nulls-last`.
    Last,
}

impl SortDirection {
    /// The spec's name: `asc` or `desc`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SortDirection::Asc => "asc",
            SortDirection::Desc => "desc",
        }
    }

    /// Parse `asc` / `desc` (any case).
    ///
    /// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the text.
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "asc" => Ok(SortDirection::Asc),
            "desc" => Ok(SortDirection::Desc),
            _ => Err(Error::invalid_argument(format!(
                "invalid sort direction '{s}': expected 'asc' or 'desc'"
            ))),
        }
    }
}

impl NullOrder {
    /// The spec's name: `nulls-first` or `nulls-last`.
    pub fn as_str(&self) -> &'static str {
        match self {
            NullOrder::First => "nulls-first",
            NullOrder::Last => "nulls-last",
        }
    }

    /// Parse `nulls-first` / `nulls-last` (any case).
    ///
    /// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the text.
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "nulls-first" => Ok(NullOrder::First),
            "nulls-last" => Ok(NullOrder::Last),
            _ => Err(Error::invalid_argument(format!(
                "invalid null order '{s}': expected 'nulls-first' or 'nulls-last'"
            ))),
        }
    }
}

impl fmt::Display for SortDirection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for NullOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! serde_by_name {
    ($t:ty) => {
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(
                d: D,
            ) -> std::result::Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                <$t>::parse(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

serde_by_name!(SortDirection);
serde_by_name!(NullOrder);

/// One field of a sort order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SortField {
    /// The transform applied before sorting.
    pub transform: Transform,
    /// The source column's field id.
    pub source_id: i32,
    /// `asc` or `desc`.
    pub direction: SortDirection,
    /// `nulls-first` or `nulls-last`.
    pub null_order: NullOrder,
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

impl SortOrder {
    /// Check that `schema` can be sorted by this order (Java's
    /// `SortOrder.checkCompatibility`, run when a table is created and an order added):
    /// every field's transform has a valid argument; every field but a `void` one has
    /// its source in `schema`, of a primitive type the transform takes. With
    /// `allow_missing_sources`, a source `schema` does not hold is skipped. Unknown
    /// transforms are not checked.
    ///
    /// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the order,
    /// the source id or column and its type.
    pub fn check_compatibility(&self, schema: &Schema, allow_missing_sources: bool) -> Result<()> {
        for f in &self.fields {
            let what = || {
                format!(
                    "sort order {}: field {} {}",
                    self.order_id, f.transform, f.source_id
                )
            };
            let Some(source) = super::partition::transform_source(
                &f.transform,
                f.source_id,
                schema,
                allow_missing_sources,
                &what,
            )?
            else {
                continue;
            };
            if source.field_type.as_primitive().is_none()
                || !f.transform.can_transform(&source.field_type)
            {
                return Err(Error::invalid_argument(format!(
                    "{}: cannot sort by {} of column '{}' of type {}",
                    what(),
                    f.transform,
                    source.name,
                    source.field_type
                )));
            }
        }
        Ok(())
    }
}
