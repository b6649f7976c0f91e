//! Which files snapshots reach: manifest lists, manifests, and the data and delete files
//! their entries name (Java `ReachableFileUtil`, `ReachableFileCleanup`). Files are
//! compared by location normalised and remapped ([`FileIO::remap`]), so `file:/x`,
//! `file:///x` and `/x` are one file.

use std::collections::{HashMap, HashSet};

use futures::stream::{self, StreamExt, TryStreamExt};

use crate::error::{ErrorKind, Result};
use crate::io::FileIO;
use crate::spec::{DataContentType, ManifestFile, Snapshot, TableMetadata};
use crate::table::Table;

/// How many manifests are read at once.
const READ_CONCURRENCY: usize = 16;

/// A file as the metadata stores its location, with its comparison key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Located {
    /// Normalised and remapped (what [`FileIO::remap`] returns).
    pub key: String,
    /// As stored in the metadata.
    pub stored: String,
}

pub(crate) fn located(io: &FileIO, stored: &str) -> Result<Located> {
    Ok(Located {
        key: io.remap(stored)?,
        stored: stored.to_string(),
    })
}

/// The manifests of `snapshot`'s manifest list (`Ok(None)` when the list is gone and
/// `missing_ok`).
pub(crate) async fn manifests_of(
    table: &Table,
    snapshot: &Snapshot,
    missing_ok: bool,
) -> Result<Option<Vec<ManifestFile>>> {
    match crate::scan::TableScan::new(table.clone(), Some(snapshot.clone()))
        .manifest_list()
        .await
    {
        Ok(m) => Ok(Some(m)),
        Err(e) if missing_ok && e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Every manifest of `snapshots`, by key. With `missing_ok`, a manifest list that is
/// gone is skipped (an expired snapshot's, already cleaned); otherwise it is an error.
pub(crate) async fn manifests(
    table: &Table,
    snapshots: &[&Snapshot],
    missing_ok: bool,
) -> Result<HashMap<String, ManifestFile>> {
    let mut out = HashMap::new();
    for s in snapshots {
        for mf in manifests_of(table, s, missing_ok)
            .await?
            .unwrap_or_default()
        {
            out.insert(table.file_io().remap(&mf.manifest_path)?, mf);
        }
    }
    Ok(out)
}

/// The content files `manifests` name, by key, with their content type (a Puffin file
/// of deletion vectors once). `live_only`: only added and existing entries. With
/// `missing_ok`, a manifest that is gone is skipped. Entries are decoded with the
/// table's partition specs and schemas.
pub(crate) async fn content_files<'a>(
    table: &Table,
    manifests: impl IntoIterator<Item = &'a ManifestFile>,
    live_only: bool,
    missing_ok: bool,
) -> Result<HashMap<String, (DataContentType, String)>> {
    let owned: Vec<ManifestFile> = manifests.into_iter().cloned().collect();
    let lists: Vec<Vec<(String, DataContentType, String)>> = stream::iter(owned)
        .map(|mf: ManifestFile| {
            let table = table.clone();
            async move {
                let entries = match crate::scan::read_manifest(&table, table.metadata(), &mf).await
                {
                    Ok(e) => e,
                    Err(e) if missing_ok && e.kind() == ErrorKind::NotFound => return Ok(vec![]),
                    Err(e) => return Err(e),
                };
                entries
                    .into_iter()
                    .filter(|e| !live_only || e.is_alive())
                    .map(|e| {
                        let key = table.file_io().remap(&e.data_file.file_path)?;
                        Ok((key, e.data_file.content, e.data_file.file_path))
                    })
                    .collect::<Result<Vec<_>>>()
            }
        })
        .buffer_unordered(READ_CONCURRENCY)
        .try_collect()
        .await?;
    Ok(lists
        .into_iter()
        .flatten()
        .map(|(k, c, p)| (k, (c, p)))
        .collect())
}

/// The statistics and partition statistics files of `m`, by key.
pub(crate) fn statistics_files(io: &FileIO, m: &TableMetadata) -> Result<HashSet<Located>> {
    m.statistics
        .iter()
        .map(|s| s.statistics_path.as_str())
        .chain(
            m.partition_statistics
                .iter()
                .map(|s| s.statistics_path.as_str()),
        )
        .map(|p| located(io, p))
        .collect()
}
