//! What `remove_orphan_files` must know before it deletes anything: the other tables of
//! the catalog that could own files under the directories it lists, and the files the
//! catalog keeps there itself.
//!
//! The design is to refuse, not to exclude each file another table references: loading
//! every snapshot's manifests of every neighbour would cost a full scan of their
//! metadata, and a reference missed (a file being committed by the other table right
//! now) would lose data. What a table writes lies under its *file directories*:
//! `<location>/data` and `<location>/metadata` (Java's `LocationProviders` and
//! `TableMetadata` defaults), its `write.data.path`, `write.object-storage.path`,
//! `write.folder-storage.path` and `write.metadata.path` when set, and the directory of
//! its current metadata file. For each other table of the catalog and each listed
//! directory:
//!
//! - another table whose location *is* the listed directory, or one of whose file
//!   directories lies at or above it, may have files anywhere in it: the call is refused,
//!   naming that table and the directory (a table renamed and a new one created under its
//!   old name share one location; a `write.data.path` shared with another table; tester
//!   R65 F1, F2);
//! - another table's file directories strictly below the listed directory (a table whose
//!   `LOCATION` is the warehouse root, or table `ns.t.u` inside `ns.t`'s directory) are
//!   skipped: no file under them is an orphan (R65 F3).
//!
//! Java's `DeleteOrphanFilesSparkAction` checks none of this (it deletes such files).
//!
//! Cost: one listing of the catalog's namespaces and tables and one metadata file read
//! per other table, 16 at once (a catalog that cannot load a table answers with its
//! metadata file's location instead: that file's directory, and its parent when named
//! `metadata`, are taken as the table's directories; a table neither answers is an
//! error: its files cannot be told apart).

use futures::stream::{self, StreamExt, TryStreamExt};

use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, Result};
use crate::io::normalize_location;
use crate::spec::TableMetadata;

/// Tables loaded at once.
const CONCURRENT_LOADS: usize = 16;

/// Another table of the catalog: its name, location and file directories, normalised.
#[derive(Debug, Clone)]
pub(super) struct Neighbour {
    pub(super) ident: TableIdent,
    pub(super) location: String,
    pub(super) directories: Vec<String>,
}

/// What the catalog holds beside the table whose orphans are removed.
#[derive(Debug, Clone, Default)]
pub(super) struct Neighbours {
    pub(super) catalog: String,
    pub(super) tables: Vec<Neighbour>,
    /// [`Catalog::own_files`].
    pub(super) catalog_files: Vec<String>,
}

/// The directories a table with metadata `m` (current metadata file `metadata_file`)
/// writes its files under (see the module docs), normalised, without repeats.
pub(super) fn file_directories(m: &TableMetadata, metadata_file: &str) -> Vec<String> {
    let mut dirs = vec![
        format!("{}/data", m.location.trim_end_matches('/')),
        format!("{}/metadata", m.location.trim_end_matches('/')),
    ];
    for property in [
        "write.data.path",
        "write.object-storage.path",
        "write.folder-storage.path",
        "write.metadata.path",
    ] {
        if let Some(p) = m.properties.get(property).filter(|p| !p.trim().is_empty()) {
            dirs.push(p.trim().to_string());
        }
    }
    if let Some((dir, _)) = metadata_file.rsplit_once('/') {
        dirs.push(dir.to_string());
    }
    normalised(dirs)
}

fn normalised(dirs: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for d in dirs {
        let d = normalize_location(&d).unwrap_or(d);
        let d = d.trim_end_matches('/').to_string();
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// The other tables of `catalog` (every table but `ident`) and the catalog's own files.
///
/// Errors: listing errors; [`ErrorKind::NotFound`](crate::ErrorKind) or others for a
/// table whose metadata and metadata location both cannot be had, naming it.
pub(super) async fn neighbours(catalog: &dyn Catalog, ident: &TableIdent) -> Result<Neighbours> {
    let mut idents = vec![];
    for namespace in catalog.list_namespaces().await? {
        for t in catalog.list_tables(&namespace).await? {
            if &t != ident && !idents.contains(&t) {
                idents.push(t);
            }
        }
    }
    let tables = stream::iter(idents)
        .map(|t| async move { neighbour(catalog, t).await })
        .buffer_unordered(CONCURRENT_LOADS)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(Neighbours {
        catalog: catalog.name().to_string(),
        tables,
        catalog_files: catalog.own_files(),
    })
}

async fn neighbour(catalog: &dyn Catalog, ident: TableIdent) -> Result<Neighbour> {
    match catalog.load_table(&ident).await {
        Ok(table) => {
            let m = table.metadata();
            let location = normalize_location(&m.location).unwrap_or(m.location.clone());
            let directories = file_directories(m, table.metadata_location());
            Ok(Neighbour {
                ident,
                location,
                directories,
            })
        }
        Err(load) => {
            let file = catalog.metadata_location(&ident).await.map_err(|_| {
                load.context(format!(
                    "cannot tell which files table '{ident}' of catalog '{}' owns",
                    catalog.name()
                ))
            })?;
            let dir = file.rsplit_once('/').map(|(d, _)| d).unwrap_or(&file);
            let table_dir = dir.strip_suffix("/metadata").unwrap_or(dir);
            let directories = normalised(vec![dir.to_string(), format!("{table_dir}/data")]);
            let location = normalize_location(table_dir).unwrap_or_else(|_| table_dir.to_string());
            Ok(Neighbour {
                ident,
                location,
                directories,
            })
        }
    }
}

/// The refusal of listing `listed` because `table` may own files anywhere in it.
pub(super) fn refusal(catalog: &str, listed: &str, table: &Neighbour, why: &str) -> Error {
    Error::invalid_argument(format!(
        "cannot remove orphan files under '{listed}': table '{}' of catalog '{catalog}' \
         (location '{}') {why}, so its files there would be taken for orphans and deleted; \
         give that table (or this one) a location of its own",
        table.ident, table.location
    ))
}
