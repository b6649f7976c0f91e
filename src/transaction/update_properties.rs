//! [`UpdateProperties`]: set and remove table properties (Java `UpdateProperties`,
//! `PropertiesUpdate`; REST `set-properties` and `remove-properties`).
//!
//! Properties that table metadata reports rather than stores (Java
//! `TableProperties.RESERVED_PROPERTIES`: `uuid`, `snapshot-count`, …) cannot be set or
//! removed. `format-version` is the one exception, as in Java's
//! `TableMetadata.replaceProperties`: setting it to a higher version upgrades the table
//! (REST `upgrade-format-version`), to the same version does nothing, to a lower one is
//! refused (spec: "Format Versioning": tables are upgraded, never downgraded).
//!
//! A value of a property icefloe reads must be one it can use
//! ([`crate::table_properties`]), so a property change can never break a later write;
//! other properties are free-form, as in Java. Removing a property is always allowed,
//! so a table given a bad value by another engine can be repaired.

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;

use super::TransactionAction;
use crate::error::{Error, Result};
use crate::spec::TableUpdate;
use crate::table::Table;
use crate::table_properties;

/// The property that names the table's format version.
pub const FORMAT_VERSION: &str = table_properties::FORMAT_VERSION.name;

/// Properties a commit may not set or remove (Java `TableProperties.RESERVED_PROPERTIES`):
/// values that live in table metadata fields and are only reported as properties.
/// `format-version` may be set to upgrade the table (see the module docs).
pub const RESERVED_PROPERTIES: &[&str] = &[
    FORMAT_VERSION,
    "uuid",
    "snapshot-count",
    "current-snapshot-id",
    "current-snapshot-summary",
    "current-snapshot-timestamp-ms",
    "current-schema",
    "default-partition-spec",
    "default-sort-order",
];

/// `Err` naming the first of `keys` that is reserved (other than `format-version`, which
/// picks or upgrades the version): such values live in metadata fields (Java's
/// `TableMetadata.newTableMetadata` refuses them in a new table's properties too).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the property.
pub fn check_reserved_not_given<'a>(keys: impl IntoIterator<Item = &'a String>) -> Result<()> {
    for key in keys {
        if key != FORMAT_VERSION && RESERVED_PROPERTIES.contains(&key.as_str()) {
            return Err(Error::invalid_argument(format!(
                "table property '{key}' is reserved: its value lives in the table's metadata"
            )));
        }
    }
    Ok(())
}

/// Set and remove table properties in one commit.
///
/// A retry re-applies the same sets and removals to the refreshed table (properties
/// are last-writer-wins, as in Java); removing a key that is not there is checked again
/// against the refreshed table unless [`remove_if_exists`](Self::remove_if_exists).
#[derive(Debug, Clone, Default)]
pub struct UpdateProperties {
    updates: BTreeMap<String, String>,
    removals: BTreeSet<String>,
    missing_ok: bool,
}

impl UpdateProperties {
    /// No changes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `key` to `value`.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`], naming the key): a reserved key
    /// other than `format-version`; a value icefloe cannot use for a property it reads
    /// ([`table_properties::validate`]: `format-version` 1, 2 or 3,
    /// `commit.retry.num-retries` a non-negative integer, …), naming the value and what
    /// the property takes; a key that is also removed.
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Result<Self> {
        let (key, value) = (key.into(), value.into());
        if key != FORMAT_VERSION {
            check_not_reserved(&key, "set")?;
        }
        table_properties::validate(&key, &value)?;
        if self.removals.contains(&key) {
            return Err(Error::invalid_argument(format!(
                "table property '{key}' is both set and removed"
            )));
        }
        self.updates.insert(key, value);
        Ok(self)
    }

    /// Remove `key`; the commit fails when the table does not have it.
    ///
    /// Errors: a reserved key (`format-version` included: a table always has one); a
    /// key that is also set.
    pub fn remove(mut self, key: impl Into<String>) -> Result<Self> {
        let key = key.into();
        check_not_reserved(&key, "removed")?;
        if self.updates.contains_key(&key) {
            return Err(Error::invalid_argument(format!(
                "table property '{key}' is both set and removed"
            )));
        }
        self.removals.insert(key);
        Ok(self)
    }

    /// Let removals of keys the table does not have pass (SQL `UNSET … IF EXISTS`).
    pub fn remove_if_exists(mut self) -> Self {
        self.missing_ok = true;
        self
    }
}

fn check_not_reserved(key: &str, verb: &str) -> Result<()> {
    if RESERVED_PROPERTIES.contains(&key) {
        return Err(Error::invalid_argument(format!(
            "table property '{key}' is reserved and cannot be {verb} (it is kept in table \
             metadata{})",
            if key == FORMAT_VERSION {
                "; set it to a higher version to upgrade the table"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

#[async_trait]
impl TransactionAction for UpdateProperties {
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        let m = table.metadata();
        let mut out = vec![];
        let mut updates = self.updates.clone();
        if let Some(v) = updates.remove(FORMAT_VERSION) {
            let wanted = table_properties::parse_format_version(&v)?;
            if wanted < m.format_version {
                return Err(Error::invalid_argument(format!(
                    "table property '{FORMAT_VERSION}': cannot downgrade format version {} \
                     to {}",
                    m.format_version as i32, wanted as i32
                )));
            }
            if wanted > m.format_version {
                out.push(TableUpdate::UpgradeFormatVersion {
                    format_version: wanted as i32,
                });
            }
        }
        if !self.missing_ok {
            if let Some(k) = self
                .removals
                .iter()
                .find(|k| !m.properties.contains_key(*k))
            {
                return Err(Error::not_found(format!(
                    "table property '{k}' is not set (use IF EXISTS to ignore it)"
                )));
            }
        }
        if !updates.is_empty() {
            // values valid only together (a compression level and its codec), as they
            // will be after this change
            let mut after = m.properties.clone();
            after.extend(updates.clone());
            table_properties::validate_together(&after, |k| updates.contains_key(k))?;
            // a metrics key set now names a column of the current schema (Java
            // `MetricsConfig`)
            crate::write::metrics_config::check_metrics_columns(&after, m.current_schema(), |k| {
                updates.contains_key(k)
            })?;
            out.push(TableUpdate::SetProperties {
                updates: updates.into_iter().collect(),
            });
        }
        let removals: Vec<String> = self
            .removals
            .iter()
            .filter(|k| m.properties.contains_key(*k))
            .cloned()
            .collect();
        if !removals.is_empty() {
            out.push(TableUpdate::RemoveProperties { removals });
        }
        Ok(out)
    }

    async fn clean_up(&mut self, _table: &Table, _committed: bool) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_reserved_and_contradictory_keys() {
        let err = UpdateProperties::new()
            .set("snapshot-count", "1")
            .unwrap_err();
        assert!(
            err.to_string().contains("'snapshot-count' is reserved"),
            "{err}"
        );
        let err = UpdateProperties::new().remove("uuid").unwrap_err();
        assert!(err.to_string().contains("'uuid' is reserved"), "{err}");
        let err = UpdateProperties::new()
            .set("a", "1")
            .and_then(|u| u.remove("a"))
            .unwrap_err();
        assert!(
            err.to_string().contains("'a' is both set and removed"),
            "{err}"
        );
        let err = UpdateProperties::new()
            .set(FORMAT_VERSION, "v2")
            .unwrap_err();
        assert!(err.to_string().contains("expected 1, 2 or 3"), "{err}");
        assert!(UpdateProperties::new().set(FORMAT_VERSION, "3").is_ok());
        for blank in [" 3", "3 ", "\t3"] {
            let err = UpdateProperties::new()
                .set(FORMAT_VERSION, blank)
                .unwrap_err();
            assert!(
                err.to_string().contains(&format!(
                    "'format-version' is '{blank}' (expected 1, 2 or 3)"
                )),
                "{err}"
            );
        }
    }
}
