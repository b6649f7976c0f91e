//! A SQL catalog's namespace properties: the rows of `iceberg_namespace_properties`, read
//! and changed as Java's `JdbcCatalog` does (`loadNamespaceMetadata`, `setProperties`,
//! `removeProperties`).

use std::collections::HashMap;

use rusqlite::params;

use super::SqlCatalog;
use crate::catalog::{namespace_not_found, Catalog, Namespace};
use crate::error::{Error, Result};

impl SqlCatalog {
    /// The namespace's rows of `iceberg_namespace_properties` without the `exists`
    /// marker, and `location` (when none was set) where its tables go by default:
    /// `<warehouse>/<levels…>`, as Java's `JdbcCatalog.loadNamespaceMetadata` gives them.
    pub(super) async fn namespace_metadata(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        let mut properties = self.namespace_rows(namespace).await?;
        properties.remove("exists");
        if !properties.contains_key("location") {
            let mut location = self.warehouse.trim_end_matches('/').to_string();
            for level in namespace.levels() {
                location.push('/');
                location.push_str(level);
            }
            properties.insert("location".to_string(), location);
        }
        Ok(properties)
    }

    /// The namespace's rows of `iceberg_namespace_properties` as stored: the `exists`
    /// marker too, no default `location` (none when the database has no such table).
    pub(super) async fn namespace_rows(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        if namespace.is_root() || !self.namespace_exists(namespace).await? {
            return Err(namespace_not_found(&self.name, namespace));
        }
        Ok(if self.has_namespace_table {
            let (catalog, ns) = (self.name.clone(), namespace.to_string());
            self.with_conn(move |conn| {
                let mut stmt = conn.prepare(
                    "SELECT property_key, property_value FROM iceberg_namespace_properties \
                     WHERE catalog_name = ?1 AND namespace = ?2",
                )?;
                let rows = stmt.query_map(params![catalog, ns], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?))
                })?;
                rows.map(|r| r.map(|(k, v)| (k, v.unwrap_or_default())))
                    .collect()
            })
            .await?
        } else {
            HashMap::new()
        })
    }

    /// One SQLite transaction of `UPDATE`s (an `INSERT` for a new key) and `DELETE`s of
    /// the namespace's rows; the `exists` marker is reserved, as in Java's `JdbcCatalog`.
    pub(super) async fn update_properties(
        &self,
        namespace: &Namespace,
        updates: &HashMap<String, String>,
        removals: &[String],
    ) -> Result<Vec<String>> {
        if namespace.is_root() || !self.namespace_exists(namespace).await? {
            return Err(namespace_not_found(&self.name, namespace));
        }
        if !self.has_namespace_table {
            return Err(Error::unsupported(format!(
                "namespace properties: '{}' has no iceberg_namespace_properties table",
                self.db.display()
            )));
        }
        if let Some(key) = removals.iter().find(|k| updates.contains_key(k.as_str())) {
            return Err(Error::invalid_argument(format!(
                "namespace property '{key}' is both set and removed"
            )));
        }
        if updates.contains_key("exists") || removals.iter().any(|k| k == "exists") {
            return Err(Error::invalid_argument(
                "namespace property 'exists' is reserved: the SQL catalog marks a namespace \
                 with it",
            ));
        }
        let (catalog, ns) = (self.name.clone(), namespace.to_string());
        let updates = updates.clone();
        let removals = removals.to_vec();
        self.with_conn(move |conn| {
            let tx = conn.unchecked_transaction()?;
            for (k, v) in &updates {
                let changed = tx.execute(
                    "UPDATE iceberg_namespace_properties SET property_value = ?4 \
                     WHERE catalog_name = ?1 AND namespace = ?2 AND property_key = ?3",
                    params![catalog, ns, k, v],
                )?;
                if changed == 0 {
                    tx.execute(
                        "INSERT INTO iceberg_namespace_properties \
                         (catalog_name, namespace, property_key, property_value) \
                         VALUES (?1, ?2, ?3, ?4)",
                        params![catalog, ns, k, v],
                    )?;
                }
            }
            let mut missing = vec![];
            for k in &removals {
                let removed = tx.execute(
                    "DELETE FROM iceberg_namespace_properties \
                     WHERE catalog_name = ?1 AND namespace = ?2 AND property_key = ?3",
                    params![catalog, ns, k],
                )?;
                if removed == 0 {
                    missing.push(k.clone());
                }
            }
            tx.commit()?;
            Ok(missing)
        })
        .await
    }
}
