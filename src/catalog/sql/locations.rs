//! A SQL catalog's check that a new table's location is no other table's: two tables in
//! one directory take each other's files for orphans (`remove_orphan_files`), and a
//! table renamed keeps its location, which a new table under the old name would get by
//! default (tester R65 F1).

use rusqlite::params;

use super::SqlCatalog;
use crate::catalog::{Namespace, TableIdent};
use crate::error::{Error, Result};
use crate::io::normalize_location;

impl SqlCatalog {
    /// Refuse `location` (normalised) for new table `ident` when a table of this catalog
    /// has its current metadata file directly in `<location>/metadata/` (where every
    /// catalog writes it unless `write.metadata.path` says otherwise): the table lives
    /// there. Java's `JdbcCatalog` accepts it; a given `LOCATION` and a default one are
    /// refused alike. One query over the catalog's rows; nothing is read from storage.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming both tables and
    /// the location; the query's errors.
    pub(super) async fn check_location_unused(
        &self,
        ident: &TableIdent,
        location: &str,
    ) -> Result<()> {
        let sql = format!(
            "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables \
             WHERE catalog_name = ?1{}",
            self.tables_only()
        );
        let catalog = self.name.clone();
        let rows: Vec<(String, String, Option<String>)> = self
            .with_conn(move |conn| {
                let mut stmt = conn.prepare(&sql)?;
                let rows = stmt.query_map(params![catalog], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })?;
                rows.collect()
            })
            .await?;
        let metadata_dir = format!("{}/metadata", location.trim_end_matches('/'));
        for (namespace, name, metadata_location) in rows {
            let other = TableIdent::new(Namespace::parse(&namespace), name);
            let Some(file) = metadata_location.filter(|_| &other != ident) else {
                continue;
            };
            let file = normalize_location(&file).unwrap_or(file);
            if file.rsplit_once('/').map(|(dir, _)| dir) == Some(metadata_dir.as_str()) {
                return Err(Error::invalid_argument(format!(
                    "cannot create table '{ident}' at '{location}': table '{other}' of catalog \
                     '{}' lives there (its metadata file is '{file}'), and two tables in one \
                     directory take each other's files for orphans; give the table another \
                     LOCATION",
                    self.name
                )));
            }
        }
        Ok(())
    }
}
