//! [`UpdateLocation`]: set the table's base location (Java `UpdateLocation`,
//! `SetLocation`; REST `set-location`; Spark's `ALTER TABLE … SET LOCATION`).
//!
//! Files already written keep their paths (manifests name every file by its full
//! location), so the table reads as before; files written afterwards go under the new
//! location (`<location>/data`, `<location>/metadata`) unless `write.data.path` /
//! `write.metadata.path` say otherwise. Nothing is moved or copied.

use async_trait::async_trait;

use super::TransactionAction;
use crate::error::{Error, Result};
use crate::io::normalize_location;
use crate::spec::TableUpdate;
use crate::table::Table;

/// Set the table's location in one commit.
#[derive(Debug, Clone)]
pub struct UpdateLocation {
    location: String,
}

impl UpdateLocation {
    /// Set the location to `location` (a URI or a local path, normalised as a table
    /// location is: no trailing `/`, a local path as `file://`).
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] for an empty or unreadable location,
    /// or one other engines would not read
    /// ([`check_table_location`](crate::io::check_table_location)).
    pub fn new(location: &str) -> Result<Self> {
        if location.trim().is_empty() {
            return Err(Error::invalid_argument("a table location cannot be empty"));
        }
        crate::io::check_table_location("table location", location)?;
        Ok(Self {
            location: normalize_location(location)?,
        })
    }
}

#[async_trait]
impl TransactionAction for UpdateLocation {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        if table.metadata().location == self.location {
            return Ok(Vec::new());
        }
        Ok(vec![TableUpdate::SetLocation {
            location: self.location.clone(),
        }])
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}
