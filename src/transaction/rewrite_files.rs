//! [`RewriteFiles`]: replace data files by new ones holding the same rows, in one
//! `replace` snapshot (Java `BaseRewriteFiles`; spec: "Snapshots", operation `replace`)
//! — what compaction (`rewrite_data_files`) commits.
//!
//! The new files hold the rows of the replaced files with their deletes applied, so
//! they get the snapshot's new data sequence number: the deletes committed before the
//! rewrite (lower sequence numbers) do not apply to them. Delete files that apply to no
//! live data file after the rewrite are dropped with
//! [`remove_dangling_deletes`](RewriteFiles::remove_dangling_deletes): a position delete
//! or deletion vector whose data sequence number is below that of every remaining data
//! file of its partition (or, file-scoped, whose data file was rewritten), an equality
//! delete whose sequence number is not above that of any remaining data file of its
//! partition (spec: "Scan Planning"; a delete written under an unpartitioned spec is
//! compared with every data file).
//!
//! **Validation** (re-run on every retry): every replaced file is still live
//! (Java `validateDeletedFiles`) in exactly as many manifest entries as the rewrite read
//! (a file added twice, e.g. by `add_files` with `check_duplicate_files => false`, is two
//! entries whose rows a scan returns twice; the commit removes a file by location, every
//! entry at once, as Java's `ManifestFilterManager` does, so an entry the rewrite did not
//! read would lose its rows — refused where Java would drop them), and no delete file added since the starting snapshot
//! applies to a replaced file (`validateNoNewDeletesForDataFiles`) — its rows would come
//! back in the new files. Data files appended concurrently are no conflict: the retry
//! carries them over. A failed check is [`ErrorKind::ValidationFailed`](crate::ErrorKind)
//! naming the file and snapshot.
//!
//! **Format version 3**: a rewritten row must keep its `_row_id` and
//! `_last_updated_sequence_number` (spec: "Row Lineage"), so the new files have to store
//! both for every row (the new files' own `first_row_id` and sequence number would
//! otherwise give it new ones). A rewrite replacing data files of a v3 table is refused
//! unless the caller says its files do so with
//! [`keeps_row_lineage`](RewriteFiles::keeps_row_lineage), as `rewrite_data_files` does.
//!
//! **Delete files only** (`rewrite_position_delete_files`, Java's
//! `RewritePositionDeletesCommitManager`): [`add_delete_files`](RewriteFiles::add_delete_files)
//! adds the compacted position delete files or deletion vectors in place of those
//! dropped with [`delete_delete_file`](RewriteFiles::delete_delete_file); every dropped
//! file must still be live at commit (a concurrent commit that removed it fails the
//! rewrite), and [`validate_data_file`](RewriteFiles::validate_data_file) names data
//! files that no delete file added since the start may touch (a new deletion vector
//! must not meet a concurrent one for the same data file). Any format version with
//! delete files (v2, v3) takes this form.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use async_trait::async_trait;

use super::dropped_deletes::drop_deletes_older_than_data;
use super::manifest_merge::merge_manifests;
use super::snapshot_producer::SnapshotProducer;
use super::summary::SnapshotSummary;
use super::validation::{
    check_all_removed, partition_key, remove_files, removed_key,
    validate_no_new_deletes_for_data_files, Coverage, PartitionKey,
};
use super::TransactionAction;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{DataContentType, DataFile, FormatVersion, ManifestEntry, TableUpdate};
use crate::table::Table;

/// Replace data files (and drop delete files) in one snapshot without changing rows.
#[derive(Debug)]
pub struct RewriteFiles {
    replaced: BTreeMap<String, (i32, DataFile)>,
    /// How many live manifest entries of each replaced file the rewrite read.
    replaced_entries: HashMap<String, usize>,
    removed_deletes: HashSet<String>,
    added: BTreeMap<i32, Vec<DataFile>>,
    /// Data files no concurrent delete may touch, besides the replaced ones.
    validated: Vec<(i32, DataFile)>,
    starting_snapshot_id: Option<i64>,
    remove_dangling_deletes: bool,
    keeps_row_lineage: bool,
    producer: SnapshotProducer,
}

impl RewriteFiles {
    /// A rewrite whose input files were read at `starting_snapshot_id`.
    pub fn new(starting_snapshot_id: Option<i64>) -> Self {
        Self {
            replaced: BTreeMap::new(),
            replaced_entries: HashMap::new(),
            removed_deletes: HashSet::new(),
            added: BTreeMap::new(),
            validated: vec![],
            starting_snapshot_id,
            remove_dangling_deletes: false,
            keeps_row_lineage: false,
            producer: SnapshotProducer::new(),
        }
    }

    /// Replace data file `file` (of spec `spec_id`, as the table lists it): one call per
    /// live manifest entry of it whose rows the new files hold (once, unless the file
    /// was added more than once). The commit removes every entry of the location and
    /// fails with [`crate::ErrorKind::ValidationFailed`] when that is not exactly as
    /// many entries as calls.
    ///
    /// Errors: a delete file ([`crate::ErrorKind::InvalidArgument`]).
    pub fn delete_data_file(mut self, spec_id: i32, file: DataFile) -> Result<Self> {
        if file.content != DataContentType::Data {
            return Err(Error::invalid_argument(format!(
                "rewrite replacing '{}' as a data file, which is a delete file",
                file.file_path
            )));
        }
        *self
            .replaced_entries
            .entry(file.file_path.clone())
            .or_default() += 1;
        self.replaced
            .insert(file.file_path.clone(), (spec_id, file));
        Ok(self)
    }

    /// Drop a delete file (by location; a deletion vector by location and offset).
    pub fn delete_delete_file(mut self, file: &DataFile) -> Self {
        self.removed_deletes.insert(removed_key(file));
        self
    }

    /// Add the new data files, written under spec `spec_id`.
    ///
    /// Errors: a delete file ([`crate::ErrorKind::InvalidArgument`]).
    pub fn add_data_files(mut self, spec_id: i32, files: Vec<DataFile>) -> Result<Self> {
        if let Some(f) = files.iter().find(|f| f.content != DataContentType::Data) {
            return Err(Error::invalid_argument(format!(
                "rewrite adding '{}', which is a delete file",
                f.file_path
            )));
        }
        self.added.entry(spec_id).or_default().extend(files);
        Ok(self)
    }

    /// Add delete files (compacted position deletes, deletion vectors) written under
    /// spec `spec_id`; their data sequence number is the new snapshot's.
    ///
    /// Errors: a data file ([`crate::ErrorKind::InvalidArgument`]).
    pub fn add_delete_files(mut self, spec_id: i32, files: Vec<DataFile>) -> Result<Self> {
        if let Some(f) = files.iter().find(|f| f.content == DataContentType::Data) {
            return Err(Error::invalid_argument(format!(
                "rewrite adding '{}' as a delete file, which is a data file",
                f.file_path
            )));
        }
        self.added.entry(spec_id).or_default().extend(files);
        Ok(self)
    }

    /// Fail the commit when a delete file added since the starting snapshot applies to
    /// data file `file` (of spec `spec_id`), as for a replaced file.
    pub fn validate_data_file(mut self, spec_id: i32, file: DataFile) -> Self {
        self.validated.push((spec_id, file));
        self
    }

    /// Also drop every delete file that applies to no live data file after the rewrite
    /// (see the module docs).
    pub fn remove_dangling_deletes(mut self) -> Self {
        self.remove_dangling_deletes = true;
        self
    }

    /// Declare that the added files store every row's `_row_id` and
    /// `_last_updated_sequence_number` (reserved field ids 2147483540 and 2147483539)
    /// as the replaced files had them, stored or inherited (spec: "Row Lineage").
    /// Without it a rewrite of a format-version 3 table is refused.
    pub fn keeps_row_lineage(mut self) -> Self {
        self.keeps_row_lineage = true;
        self
    }

    /// The id of the snapshot this rewrite commits.
    pub fn snapshot_id(&self) -> i64 {
        self.producer.snapshot_id()
    }

    /// The keys of the delete files of `entries` that apply to no data file that stays.
    fn dangling(&self, table: &Table, entries: &[ManifestEntry]) -> HashSet<String> {
        let m = table.metadata();
        // remaining live data files: min data sequence number per (spec, partition),
        // overall, and by path
        let mut min_by_scope: HashMap<(i32, PartitionKey), i64> = HashMap::new();
        let mut min_all = i64::MAX;
        let mut by_path: HashMap<&str, i64> = HashMap::new();
        for e in entries.iter().filter(|e| {
            e.is_alive()
                && e.data_file.content == DataContentType::Data
                && !self.replaced.contains_key(&e.data_file.file_path)
        }) {
            let seq = e.data_sequence_number;
            let scope = min_by_scope
                .entry((e.spec_id, partition_key(&e.data_file.partition)))
                .or_insert(i64::MAX);
            *scope = (*scope).min(seq);
            min_all = min_all.min(seq);
            by_path.insert(e.data_file.file_path.as_str(), seq);
        }
        let mut out = HashSet::new();
        for e in entries
            .iter()
            .filter(|e| e.is_alive() && e.data_file.content != DataContentType::Data)
        {
            let d = &e.data_file;
            let seq = e.data_sequence_number;
            let global = m
                .partition_spec_by_id(e.spec_id)
                .is_none_or(|s| s.is_unpartitioned());
            let min_seq = if global {
                min_all
            } else {
                min_by_scope
                    .get(&(e.spec_id, partition_key(&d.partition)))
                    .copied()
                    .unwrap_or(i64::MAX)
            };
            let applies = match d.content {
                DataContentType::PositionDeletes => match &d.referenced_data_file {
                    Some(path) => by_path.get(path.as_str()).is_some_and(|s| *s <= seq),
                    None => min_seq <= seq,
                },
                _ => min_seq < seq,
            };
            if !applies {
                out.insert(removed_key(d));
            }
        }
        out
    }
}

#[async_trait]
impl TransactionAction for RewriteFiles {
    fn added_spec_ids(&self) -> Vec<i32> {
        SnapshotProducer::spec_ids(&self.added)
    }

    fn adds_typed_files(&self) -> bool {
        self.added.values().flatten().any(|f| {
            matches!(
                f.content,
                DataContentType::Data | DataContentType::EqualityDeletes
            )
        })
    }

    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>> {
        SnapshotProducer::check_format(table)?;
        let upgraded = self.producer.upgraded_since_first_attempt(table);
        if table.metadata().format_version >= FormatVersion::V3
            && !self.replaced.is_empty()
            && !self.keeps_row_lineage
        {
            if let Some(from) = upgraded {
                let checked = self.producer.checked("rewrite");
                return Err(SnapshotProducer::upgraded_error(
                    table,
                    from,
                    &checked.to_string(),
                    "its files do not keep the rows' _row_id and \
                     _last_updated_sequence_number, as a v3 rewrite must (spec 'Row Lineage')",
                ));
            }
            return Err(Error::unsupported(
                "rewriting data files of a format-version 3 table with files not declared \
                 to keep each row's _row_id and _last_updated_sequence_number (spec 'Row \
                 Lineage'; see RewriteFiles::keeps_row_lineage)",
            ));
        }
        let added_manifests = self.producer.added_manifests(table, &self.added).await?;
        let parent = self.producer.parent(table).cloned();
        let starting = self.starting_snapshot_id;
        let checked = self
            .producer
            .checked_from("rewrite", starting, parent.as_ref());

        let touched: Vec<(i32, &DataFile)> = self
            .replaced
            .values()
            .chain(&self.validated)
            .map(|(s, f)| (*s, f))
            .collect();
        validate_no_new_deletes_for_data_files(
            table,
            parent.as_ref(),
            starting,
            &touched,
            &checked,
        )
        .await?;

        let mut removed_deletes = self.removed_deletes.clone();
        if self.remove_dangling_deletes {
            let mut all = vec![];
            for mf in SnapshotProducer::manifests_of(table, parent.as_ref()).await? {
                all.extend(SnapshotProducer::entries_of(table, &mf).await?);
            }
            removed_deletes.extend(self.dangling(table, &all));
        }

        let mut summary = SnapshotSummary::of_added(&self.added);
        let (replaced, removed_ref) = (&self.replaced, &removed_deletes);
        // live entries of each replaced file, counted as they are removed
        let live_entries: Mutex<HashMap<String, usize>> = Mutex::new(HashMap::new());
        let covered = |e: &ManifestEntry| -> Result<Coverage> {
            let f = &e.data_file;
            let hit = match f.content {
                DataContentType::Data => replaced.contains_key(&f.file_path),
                _ => removed_ref.contains(&removed_key(f)),
            };
            if hit && f.content == DataContentType::Data {
                let mut live = live_entries
                    .lock()
                    .map_err(|_| Error::invalid_data("rewrite entry count lock poisoned"))?;
                *live.entry(f.file_path.clone()).or_default() += 1;
            }
            Ok(if hit { Coverage::All } else { Coverage::None })
        };
        let (kept, removed) = remove_files(
            table,
            &mut self.producer,
            parent.as_ref(),
            &covered,
            &mut summary,
        )
        .await?;
        let wanted: HashSet<String> = self.replaced.keys().cloned().collect();
        check_all_removed(&wanted, &removed, &checked)?;
        let live_entries = live_entries
            .into_inner()
            .map_err(|_| Error::invalid_data("rewrite entry count lock poisoned"))?;
        for (path, read) in &self.replaced_entries {
            let live = live_entries.get(path).copied().unwrap_or(0);
            if live != *read {
                return Err(Error::new(
                    ErrorKind::ValidationFailed,
                    format!(
                        "data file '{path}' is referenced by {live} live manifest entries {} \
                         but the rewrite read {read}: removing it by location would {} \
                         (a concurrent commit added or removed an entry of it, or the \
                         rewrite's filter left an entry out)",
                        checked.live_in(),
                        if live > *read {
                            "drop the rows of the others"
                        } else {
                            "not match the rows written"
                        }
                    ),
                ));
            }
        }
        check_all_removed(&self.removed_deletes, &removed, &checked)?;
        let mut manifests = added_manifests;
        manifests.extend(kept);
        let manifests =
            drop_deletes_older_than_data(table, &mut self.producer, manifests, &mut summary)
                .await?;
        let manifests = merge_manifests(table, &mut self.producer, manifests).await?;
        self.producer
            .commit_updates(table, "replace", manifests, &summary)
            .await
    }

    async fn clean_up(&mut self, table: &Table, committed: bool) {
        self.producer.clean_up(table, committed).await;
    }
}
