//! `expire_snapshots`: commit an [`ExpireSnapshots`], then delete the files only the
//! expired snapshots reached (Java `ExpireSnapshotsSparkAction` with
//! `ReachableFileCleanup`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use futures::stream::{self, StreamExt};

use super::reachable::{content_files, located, manifests, statistics_files, Located};
use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, Result};
use crate::spec::{DataContentType, TableMetadata, TableMetadataBuilder};
use crate::table::Table;
use crate::transaction::{ExpireSnapshots, Transaction};

/// What an expiry removed (or, in a dry run, would remove). File lists hold locations
/// as the metadata stores them, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpireSnapshotsResult {
    /// The snapshots expired.
    pub expired_snapshot_ids: Vec<i64>,
    /// The refs removed (past their `max-ref-age-ms`).
    pub removed_refs: Vec<String>,
    /// Data files deleted.
    pub deleted_data_files: Vec<String>,
    /// Position delete files deleted (Puffin files of deletion vectors included).
    pub deleted_position_delete_files: Vec<String>,
    /// Equality delete files deleted.
    pub deleted_equality_delete_files: Vec<String>,
    /// Manifests deleted.
    pub deleted_manifests: Vec<String>,
    /// Manifest lists deleted.
    pub deleted_manifest_lists: Vec<String>,
    /// Statistics and partition statistics files deleted.
    pub deleted_statistics_files: Vec<String>,
    /// Files to delete whose deletion failed (left for `remove_orphan_files`; not in the
    /// lists above), sorted.
    pub files_left: Vec<String>,
    /// Why the files to delete could not be found after the commit (a manifest list or
    /// manifest unreadable): the snapshots are expired all the same, and none of their
    /// files was deleted (left for `remove_orphan_files`).
    pub cleanup_error: Option<String>,
    /// Files only the expired snapshots reached that were not deleted because they are
    /// not the table's own (outside its directories, or under another table of the
    /// catalog; see module `expire_guard`), each followed by why in parentheses, sorted.
    /// Not in the lists above. Java deletes them; icefloe refuses to delete what may
    /// belong to another table.
    pub kept_files: Vec<String>,
}

impl ExpireSnapshotsResult {
    /// When the expiry of `table` committed but left files it should have deleted
    /// ([`Self::files_left`], [`Self::cleanup_error`]): a warning saying how many
    /// snapshots expired and which files stay (the first three) or why none was deleted.
    pub fn files_left_warning(&self, table: &str) -> Option<String> {
        let what = match &self.cleanup_error {
            Some(e) => format!("none of their files was deleted: {e}"),
            None if self.files_left.is_empty() => return None,
            None => {
                let shown: Vec<&str> = self.files_left.iter().take(3).map(String::as_str).collect();
                let more = match self.files_left.len() - shown.len() {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                format!(
                    "{} of their files could not be deleted ({}{more})",
                    self.files_left.len(),
                    shown.join(", ")
                )
            }
        };
        Some(format!(
            "expire_snapshots of table '{table}' expired {} snapshot(s) (committed), but \
             {what}; the files left are orphans now: remove them with \
             CALL system.remove_orphan_files",
            self.expired_snapshot_ids.len()
        ))
    }
}

impl ExpireSnapshotsResult {
    /// When files were kept as not the table's own ([`Self::kept_files`]): a warning
    /// naming how many and the first three.
    pub fn kept_files_warning(&self, table: &str) -> Option<String> {
        if self.kept_files.is_empty() {
            return None;
        }
        let shown: Vec<&str> = self.kept_files.iter().take(3).map(String::as_str).collect();
        let more = match self.kept_files.len() - shown.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        Some(format!(
            "expire_snapshots of table '{table}' kept {} file(s) its expired snapshots \
             reference but that may belong to another table: {}{more}",
            self.kept_files.len(),
            shown.join(", ")
        ))
    }
}

/// How [`expire_snapshots`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpireOptions {
    /// List what would be removed; commit and delete nothing.
    pub dry_run: bool,
    /// Files deleted at once (Spark `max_concurrent_deletes`; at least 1).
    pub max_concurrent_deletes: usize,
}

impl Default for ExpireOptions {
    fn default() -> Self {
        Self {
            dry_run: false,
            max_concurrent_deletes: 16,
        }
    }
}

/// Expire snapshots of table `ident` per `expire` (see [`ExpireSnapshots`] for what is
/// kept), then delete exactly the manifest lists, manifests, data and delete files and
/// statistics files that the expired snapshots reached and no kept snapshot reaches —
/// computed by reading the metadata (reachability), never by listing directories.
/// Files are deleted only after the commit succeeded, and computed from the table the
/// commit was applied to: after a retry, that is the table reloaded for it, so snapshots
/// committed meanwhile and expired by the retry have their files deleted too, and a retry
/// that finds nothing left to expire (a concurrent expiry did it) commits, deletes and
/// reports nothing. Only the table's own files are deleted: one outside the table's
/// directories or under another table of the catalog is kept and listed in
/// [`ExpireSnapshotsResult::kept_files`] (see module `expire_guard`; Java deletes it).
/// A file that cannot be deleted stays behind as an orphan (for
/// `remove_orphan_files`), is not counted, and is listed in
/// [`ExpireSnapshotsResult::files_left`].
///
/// Once the commit went through the call succeeds, as Java's `RemoveSnapshots` (which
/// logs a failed cleanup) and Spark's procedure do: files that cannot be found (a
/// manifest list or manifest unreadable) are reported in
/// [`ExpireSnapshotsResult::cleanup_error`] with the expired snapshot ids, and nothing
/// is deleted.
///
/// Returns the committed table (the loaded one for a dry run or when nothing expires)
/// and what was removed.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) for a table whose
/// `gc.enabled` is false (Java's `RemoveSnapshots` refuses it: nothing is committed or
/// deleted, a dry run is refused too); the action's (bad retention, a ref's head named — the current snapshot
/// included, an unknown snapshot) before anything changes; commit errors
/// ([`ErrorKind::CommitConflict`](crate::ErrorKind) when the retries run out); in a dry
/// run, a manifest list or manifest that cannot be read.
pub async fn expire_snapshots(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    expire: ExpireSnapshots,
    options: ExpireOptions,
) -> Result<(Table, ExpireSnapshotsResult)> {
    if options.max_concurrent_deletes == 0 {
        return Err(Error::invalid_argument(
            "max_concurrent_deletes must be at least 1",
        ));
    }
    let before = catalog.load_table(ident).await?;
    crate::table_properties::check_gc_enabled(
        &before.metadata().properties,
        &format!("expire snapshots of table '{ident}'"),
    )?;
    let plan = expire.plan_for(&before).await?;
    // `base`: the table the commit applied to (a retry reloads it, and may expire
    // snapshots committed after `before` was loaded); what its snapshots reach and the
    // committed table's do not is what this call removed (Java's `RemoveSnapshots`
    // cleans up against the base it committed on)
    let committed = !plan.is_empty() && !options.dry_run;
    let (base, after) = if plan.is_empty() {
        (before.clone(), before)
    } else if options.dry_run {
        let mut builder = TableMetadataBuilder::from_base(
            before.metadata().clone(),
            Some(before.metadata_location()),
        );
        builder.apply_all(&plan.updates())?;
        let after = before.with_metadata(builder.build()?, before.metadata_location());
        (before, after)
    } else {
        Transaction::new(Arc::clone(catalog), ident.clone(), before)
            .add_action(expire)
            .commit_on_base()
            .await?
    };
    let mut result = match unreachable_files(&base, base.metadata(), after.metadata()).await {
        Ok(result) => result,
        // the commit stands: report it, and why its files stay
        Err(e) if committed => ExpireSnapshotsResult {
            expired_snapshot_ids: expired_ids(base.metadata(), after.metadata()),
            cleanup_error: Some(e.to_string()),
            ..Default::default()
        },
        Err(e) => return Err(e),
    };
    result.removed_refs = base
        .metadata()
        .refs
        .keys()
        .filter(|r| !after.metadata().refs.contains_key(*r))
        .cloned()
        .collect();
    result.removed_refs.sort();
    super::expire_guard::keep_foreign_files(catalog.as_ref(), ident, &base, &mut result).await;
    if !options.dry_run {
        delete_all(&base, &mut result, options.max_concurrent_deletes).await;
    }
    Ok((after, result))
}

/// The ids of `before`'s snapshots that `after` does not have, sorted.
fn expired_ids(before: &TableMetadata, after: &TableMetadata) -> Vec<i64> {
    let kept: HashSet<i64> = after.snapshots.iter().map(|s| s.snapshot_id).collect();
    let mut ids: Vec<i64> = before
        .snapshots
        .iter()
        .map(|s| s.snapshot_id)
        .filter(|id| !kept.contains(id))
        .collect();
    ids.sort_unstable();
    ids
}

/// The files `before`'s snapshots reach that `after`'s do not.
async fn unreachable_files(
    table: &Table,
    before: &TableMetadata,
    after: &TableMetadata,
) -> Result<ExpireSnapshotsResult> {
    let io = table.file_io();
    let kept_ids: HashSet<i64> = after.snapshots.iter().map(|s| s.snapshot_id).collect();
    let expired: Vec<_> = before
        .snapshots
        .iter()
        .filter(|s| !kept_ids.contains(&s.snapshot_id))
        .collect();
    let kept: Vec<_> = after.snapshots.iter().collect();
    let mut result = ExpireSnapshotsResult {
        expired_snapshot_ids: expired_ids(before, after),
        ..Default::default()
    };
    if expired.is_empty() {
        return Ok(result);
    }

    let kept_lists: HashSet<String> = kept
        .iter()
        .filter_map(|s| s.manifest_list.as_deref())
        .map(|l| io.remap(l))
        .collect::<Result<_>>()?;
    let mut lists = BTreeSet::new();
    for s in &expired {
        if let Some(l) = s.manifest_list.as_deref() {
            let l = located(io, l)?;
            if !kept_lists.contains(&l.key) {
                lists.insert(l);
            }
        }
    }
    let kept_manifests = manifests(table, &kept, false).await?;
    let expired_manifests: HashMap<String, _> = manifests(table, &expired, true)
        .await?
        .into_iter()
        .filter(|(k, _)| !kept_manifests.contains_key(k))
        .collect();
    let candidates = content_files(table, expired_manifests.values(), false, true).await?;
    let live = if candidates.is_empty() {
        HashMap::new()
    } else {
        content_files(table, kept_manifests.values(), true, false).await?
    };
    let mut files: BTreeSet<(u8, Located)> = BTreeSet::new();
    for (key, (content, stored)) in candidates {
        if live.contains_key(&key) {
            continue;
        }
        let kind = match content {
            DataContentType::Data => 0,
            DataContentType::PositionDeletes => 1,
            DataContentType::EqualityDeletes => 2,
        };
        files.insert((kind, Located { key, stored }));
    }
    for (kind, f) in files {
        match kind {
            0 => result.deleted_data_files.push(f.stored),
            1 => result.deleted_position_delete_files.push(f.stored),
            _ => result.deleted_equality_delete_files.push(f.stored),
        }
    }
    let mut manifest_paths: Vec<String> = expired_manifests
        .into_values()
        .map(|m| m.manifest_path)
        .collect();
    manifest_paths.sort();
    result.deleted_manifests = manifest_paths;
    result.deleted_manifest_lists = lists.into_iter().map(|l| l.stored).collect();
    let kept_stats: HashSet<String> = statistics_files(io, after)?
        .into_iter()
        .map(|l| l.key)
        .collect();
    let mut stats: Vec<String> = statistics_files(io, before)?
        .into_iter()
        .filter(|l| !kept_stats.contains(&l.key))
        .map(|l| l.stored)
        .collect();
    stats.sort();
    result.deleted_statistics_files = stats;
    Ok(result)
}

/// Delete every file of `result`, `concurrency` at a time; files that could not be
/// deleted are taken out of the lists into [`ExpireSnapshotsResult::files_left`] (they
/// stay behind as orphans).
async fn delete_all(table: &Table, result: &mut ExpireSnapshotsResult, concurrency: usize) {
    let mut left = vec![];
    let lists = [
        &mut result.deleted_data_files,
        &mut result.deleted_position_delete_files,
        &mut result.deleted_equality_delete_files,
        &mut result.deleted_manifests,
        &mut result.deleted_manifest_lists,
        &mut result.deleted_statistics_files,
    ];
    for list in lists {
        let failed: HashSet<String> = stream::iter(list.iter().cloned())
            .map(|path| async move {
                match table.file_io().delete(&path).await {
                    Ok(()) => None,
                    Err(_) => Some(path),
                }
            })
            .buffer_unordered(concurrency)
            .filter_map(|f| async move { f })
            .collect()
            .await;
        list.retain(|p| !failed.contains(p));
        left.extend(failed);
    }
    left.sort();
    result.files_left = left;
}
