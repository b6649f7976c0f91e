//! Files named as tables: `SELECT … FROM '/data/f1.parquet'` (or a directory, a relative
//! path, a `file:`/object store URL) reads the file as `datafusion-cli` does, through
//! DataFusion's `DynamicListTableFactory` (the format from the file extension, Hive
//! partitions from the directories).
//!
//! Unlike `SessionContext::enable_url_table`, which wraps every catalog and so hides the
//! Iceberg catalog providers icefloe's DDL looks up by type, only the default schema (where
//! an unqualified name resolves) is wrapped, and only a name that reads as a path (it holds
//! a `/`, a `\` or a `.`) is tried as one: a table of that name resolves first, and a
//! qualified name `ns.t` is always an Iceberg table (a missing one is an error, never a
//! file of the current directory). The CLI reads local files by `CREATE EXTERNAL TABLE` and
//! `COPY` already; this opens no other file.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{
    DynamicFileSchemaProvider, SchemaProvider, TableProvider, UrlTableFactory,
};
use datafusion::common::Result as DFResult;
use datafusion::datasource::dynamic_file::DynamicListTableFactory;
use datafusion::prelude::SessionContext;
use datafusion_session::SessionStore;

/// DataFusion's file-path tables, tried only for names that read as paths.
#[derive(Debug)]
pub struct PathTables {
    files: DynamicListTableFactory,
}

impl PathTables {
    /// The factory, not yet bound to a session ([`Self::bind`]).
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            files: DynamicListTableFactory::new(SessionStore::new()),
        })
    }

    /// `schema` with unknown names that read as paths read as files.
    pub fn wrap(self: &Arc<Self>, schema: Arc<dyn SchemaProvider>) -> Arc<dyn SchemaProvider> {
        let factory: Arc<dyn UrlTableFactory> = Arc::clone(self) as _;
        Arc::new(DynamicFileSchemaProvider::new(schema, factory))
    }

    /// Read files with the settings (object stores, formats) of `ctx`'s session.
    pub fn bind(&self, ctx: &SessionContext) {
        self.files.session_store().with_state(ctx.state_weak_ref());
    }
}

/// Whether a table name reads as a file path or URL.
fn reads_as_path(name: &str) -> bool {
    name.contains(['/', '\\', '.'])
}

#[async_trait]
impl UrlTableFactory for PathTables {
    async fn try_new(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        match reads_as_path(name) {
            true => self.files.try_new(name).await,
            false => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_are_tried() {
        for name in [
            "/d/f.parquet",
            "f.csv",
            "dir/",
            "s3://b/k",
            "C:\\d\\f.parquet",
        ] {
            assert!(reads_as_path(name), "{name}");
        }
        for name in ["t", "events", "my-table", "t$snapshots"] {
            assert!(!reads_as_path(name), "{name}");
        }
    }
}
