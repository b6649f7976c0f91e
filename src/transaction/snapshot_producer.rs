//! What every snapshot-producing action shares (Java: `SnapshotProducer`): a snapshot id
//! kept across retries, manifests written under the table's metadata directory, and on
//! each attempt a new manifest list over the attempt's base, the snapshot summary, and the
//! `add-snapshot` + `set-snapshot-ref` updates.
//!
//! Manifests of added files are written once and reused by every retry: their entries
//! inherit sequence numbers from the manifest list (spec: "Sequence Number
//! Inheritance"), so only their list entry's `sequence_number` changes between attempts.
//! On v3 tables the manifest list also gives each data manifest without a `first_row_id`
//! (this commit's, and after an upgrade the earlier ones) the next range of row ids
//! (spec: "First Row ID Assignment"; the snapshot's `added-rows` counts them all).
//! Every file written is remembered, so a commit that finally fails removes what it wrote
//! and no commit references ([`SnapshotProducer::clean_up`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use bytes::Bytes;

use super::summary::SnapshotSummary;
use crate::catalog::metadata_dir;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{
    DataContentType, DataFile, FormatVersion, ManifestContent, ManifestEntry, ManifestFile,
    Snapshot, SnapshotReference, TableUpdate, MAIN_BRANCH,
};
use crate::table::Table;
use crate::write::manifest_list::{write_manifest_list_for, write_manifest_list_v1};
use crate::write::{ManifestWriter, NewEntry};

/// The snapshot summary property of a staged write-audit-publish snapshot: its WAP id
/// (Java `SnapshotSummary.STAGED_WAP_ID_PROP`).
pub const STAGED_WAP_ID: &str = "wap.id";

/// A fresh positive snapshot id (as Iceberg Java: from a random UUID).
pub(crate) fn new_snapshot_id() -> i64 {
    let (hi, lo) = uuid::Uuid::new_v4().as_u64_pair();
    ((hi ^ lo) & (i64::MAX as u64)) as i64
}

/// Writes the files of one snapshot and the updates that add it.
#[derive(Debug)]
pub(crate) struct SnapshotProducer {
    snapshot_id: i64,
    commit_uuid: uuid::Uuid,
    attempt: u32,
    manifest_count: u32,
    branch: String,
    /// Every manifest and manifest list written, by location.
    written: Vec<String>,
    /// The manifests of the added files, written on the first attempt.
    added_manifests: Option<Vec<ManifestFile>>,
    /// Files kept by the last attempt (the committed ones, once the commit lands).
    committed: HashSet<String>,
    /// Summary properties set by the action (e.g. `source-snapshot-id` of a cherry-pick).
    extra_summary: BTreeMap<String, String>,
    /// The format version of the table the first attempt applied to: the one the
    /// action's files were written for.
    first_format: Option<FormatVersion>,
    /// Add the snapshot without pointing any branch at it (a staged write-audit-publish
    /// snapshot; Java `SnapshotProducer.stageOnly`).
    stage_only: bool,
    /// The branch to create when it does not exist (its retention settings), as Java's
    /// producer creates the branch it commits to; `None`: a missing branch is an error.
    new_branch: Option<SnapshotReference>,
}

impl SnapshotProducer {
    pub(crate) fn new() -> Self {
        Self {
            snapshot_id: new_snapshot_id(),
            commit_uuid: uuid::Uuid::new_v4(),
            attempt: 0,
            manifest_count: 0,
            branch: MAIN_BRANCH.to_string(),
            written: vec![],
            added_manifests: None,
            committed: HashSet::new(),
            extra_summary: BTreeMap::new(),
            first_format: None,
            stage_only: false,
            new_branch: None,
        }
    }

    /// Stage the snapshot for write-audit-publish (Java `SnapshotProducer.stageOnly`
    /// with `wap.id` set, as Spark's writes do under `spark.wap.id`): it is added with
    /// summary property `wap.id` = `wap_id`, its parent the branch's snapshot at the
    /// attempt that commits, and no branch moves (see [`Self::commit_updates`]).
    pub(crate) fn set_stage_only(&mut self, wap_id: &str) {
        self.stage_only = true;
        self.set_summary(STAGED_WAP_ID, wap_id.to_string());
    }

    /// Commit to branch `branch` instead of `main`: the new snapshot descends from the
    /// branch's, and only the branch moves (spec: "Branching and Tagging").
    pub(crate) fn set_branch(&mut self, branch: &str) {
        self.branch = branch.to_string();
    }

    /// Commit to branch `branch`, creating it with `reference`'s retention settings when
    /// it does not exist (its snapshot id is this producer's).
    pub(crate) fn set_new_branch(&mut self, branch: &str, reference: SnapshotReference) {
        self.branch = branch.to_string();
        self.new_branch = Some(reference);
    }

    /// `operation` committing to this producer's branch, as conflict errors name it.
    pub(crate) fn checked(&self, operation: &'static str) -> super::validation::Checked {
        super::validation::Checked::new(operation, &self.branch)
    }

    /// [`Self::checked`] for an action that started from snapshot `starting` and now
    /// commits onto `parent`: on the first attempt, when nothing was committed since
    /// `starting` (or the action named no starting snapshot), what the table lacks it
    /// lacked when the caller read it, so a missing file is the caller's mistake rather
    /// than a concurrent commit's doing.
    pub(crate) fn checked_from(
        &self,
        operation: &'static str,
        starting: Option<i64>,
        parent: Option<&Snapshot>,
    ) -> super::validation::Checked {
        let unchanged = starting.is_none() || starting == parent.map(|s| s.snapshot_id);
        self.checked(operation)
            .on_first_attempt(self.attempt == 0 && unchanged)
    }

    /// Record `table`'s format version on the first attempt; on a later one, the
    /// version the first attempt saw when `table`'s is higher (another commit upgraded
    /// the table while the write ran, e.g. `SET TBLPROPERTIES ('format-version'='3')`:
    /// no commit requirement asserts the version).
    pub(crate) fn upgraded_since_first_attempt(&mut self, table: &Table) -> Option<FormatVersion> {
        let now = table.metadata().format_version;
        let first = *self.first_format.get_or_insert(now);
        (first < now).then_some(first)
    }

    /// The error for an action (`operation`) whose files were written for format version
    /// `from` and cannot go into `table`, which another commit upgraded meanwhile; `what`
    /// says why (`its position delete file '…' is of format version 2 …`). It blames the
    /// upgrade, not a format version the writer never chose.
    ///
    /// Errors: [`ErrorKind::ValidationFailed`] (the commit cannot be retried; the
    /// statement, run again, writes for the new version).
    pub(crate) fn upgraded_error(
        table: &Table,
        from: FormatVersion,
        operation: &str,
        what: &str,
    ) -> Error {
        Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "the table was upgraded from format version {} to {} by another commit \
                 while this {operation} ran, and {what} (run the write again)",
                from as i32,
                table.metadata().format_version as i32
            ),
        )
    }

    /// The branch committed to, unless it is `main`.
    pub(crate) fn branch_other_than_main(&self) -> Option<&str> {
        (self.branch != MAIN_BRANCH).then_some(self.branch.as_str())
    }

    /// Set a snapshot summary property of the new snapshot.
    pub(crate) fn set_summary(&mut self, key: &str, value: String) {
        self.extra_summary.insert(key.to_string(), value);
    }

    /// The id of the snapshot this producer adds.
    pub(crate) fn snapshot_id(&self) -> i64 {
        self.snapshot_id
    }

    /// The snapshot the branch points at in `table`, which the new one descends from.
    pub(crate) fn parent<'a>(&self, table: &'a Table) -> Option<&'a Snapshot> {
        let m = table.metadata();
        m.ref_snapshot_id(&self.branch)
            .and_then(|id| m.snapshot_by_id(id))
    }

    /// Every format version is written (v1 without sequence numbers and delete
    /// files); kept as the one place to refuse a version a commit cannot write.
    pub(crate) fn check_format(table: &Table) -> Result<()> {
        match table.metadata().format_version {
            FormatVersion::V1 | FormatVersion::V2 | FormatVersion::V3 => Ok(()),
        }
    }

    /// The sequence number of the snapshot this producer adds to `m`: the next one;
    /// always 0 in a v1 table, which has none (spec: "Sequence Numbers").
    pub(super) fn next_sequence_number(m: &crate::spec::TableMetadata) -> i64 {
        if m.format_version == FormatVersion::V1 {
            0
        } else {
            m.last_sequence_number + 1
        }
    }

    /// Write a manifest of `entries` (all of one spec and content) and return its list
    /// entry, sequence numbers set for the table's next sequence number.
    pub(crate) async fn write_manifest(
        &mut self,
        table: &Table,
        spec_id: i32,
        content: ManifestContent,
        entries: &[NewEntry],
    ) -> Result<ManifestFile> {
        let m = table.metadata();
        let spec = m.partition_spec_by_id(spec_id).ok_or_else(|| {
            Error::invalid_argument(format!("the table has no partition spec {spec_id}"))
        })?;
        // the spec may be an older one whose source columns the current schema dropped:
        // all schemas type its partition tuple
        let mut writer = ManifestWriter::new(
            &m.schemas_newest_first(),
            spec,
            content,
            self.snapshot_id,
            Self::next_sequence_number(m),
        )?
        .with_format_version(m.format_version)?;
        for e in entries {
            writer.add(e)?;
        }
        self.manifest_count += 1;
        let location = format!(
            "{}/{}-m{}.avro",
            metadata_dir(m),
            self.commit_uuid,
            self.manifest_count
        );
        let (bytes, file) = writer.finish(&location)?;
        table.file_io().write(&location, Bytes::from(bytes)).await?;
        self.written.push(location);
        crate::failpoint::hit("after-manifest");
        Ok(file)
    }

    /// The manifests of the files the snapshot adds (`added`: spec id → files), one per
    /// spec and content (data, deletes); written on the first call and reused by every
    /// retry.
    pub(crate) async fn added_manifests(
        &mut self,
        table: &Table,
        added: &BTreeMap<i32, Vec<DataFile>>,
    ) -> Result<Vec<ManifestFile>> {
        Self::check_specs_exist(table, added, self.added_manifests.is_none())?;
        if let Some(m) = &self.added_manifests {
            return Ok(m.clone());
        }
        let mut out = vec![];
        for (spec_id, files) in added.iter().filter(|(_, f)| !f.is_empty()) {
            // data files in a data manifest, delete files in a delete manifest
            let (data, deletes): (Vec<&DataFile>, Vec<&DataFile>) = files
                .iter()
                .partition(|f| f.content == DataContentType::Data);
            for (content, files) in [
                (ManifestContent::Data, data),
                (ManifestContent::Deletes, deletes),
            ] {
                if files.is_empty() {
                    continue;
                }
                let entries: Vec<NewEntry> =
                    files.into_iter().cloned().map(NewEntry::added).collect();
                out.push(
                    self.write_manifest(table, *spec_id, content, &entries)
                        .await?,
                );
            }
        }
        self.added_manifests = Some(out.clone());
        Ok(out)
    }

    /// Every partition spec the files of `added` (spec id → files) were written for is
    /// still one of `table`'s. Checked at every attempt: another commit may have removed
    /// a spec since the files were written (`expire_snapshots` with
    /// `clean_expired_metadata` removes specs no kept snapshot uses), and a manifest
    /// naming a spec the table does not have makes every read of the table fail (spec:
    /// "Manifests": `partition-spec-id` must be one of the table's specs).
    ///
    /// `first`: this is the first attempt, so `table` is the one the transaction started
    /// from; a spec id above all of its specs' (ids only grow) or negative never existed,
    /// which is the caller's mistake, not another commit's doing.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] (a spec the table never had, naming the
    /// table's specs) or [`ErrorKind::ValidationFailed`] (another commit removed it),
    /// naming the spec and the table location.
    fn check_specs_exist(
        table: &Table,
        added: &BTreeMap<i32, Vec<DataFile>>,
        first: bool,
    ) -> Result<()> {
        let m = table.metadata();
        let missing = added
            .iter()
            .filter(|(_, files)| !files.is_empty())
            .map(|(spec_id, _)| *spec_id)
            .find(|spec_id| m.partition_spec_by_id(*spec_id).is_none());
        match missing {
            None => Ok(()),
            // spec ids only grow, and the highest one is the default's unless specs
            // were rolled back: an id above every spec's (or negative) never existed
            Some(spec_id)
                if first
                    && (spec_id < 0 || m.partition_specs.iter().all(|s| s.spec_id < spec_id)) =>
            {
                let ids: Vec<String> = m
                    .partition_specs
                    .iter()
                    .map(|s| s.spec_id.to_string())
                    .collect();
                Err(Error::invalid_argument(format!(
                    "cannot commit files written for partition spec {spec_id}: there is no \
                     partition spec {spec_id} in the table at '{}' (its specs: {})",
                    m.location,
                    ids.join(", ")
                )))
            }
            Some(spec_id) => Err(Error::new(
                ErrorKind::ValidationFailed,
                format!(
                    "cannot commit files written for partition spec {spec_id} to the table at \
                     '{}': another commit removed that spec meanwhile (expire_snapshots with \
                     clean_expired_metadata removes specs no snapshot uses); write them again",
                    m.location
                ),
            )),
        }
    }

    /// The ids of the partition specs `added`'s files (spec id → files) were written for.
    pub(crate) fn spec_ids(added: &BTreeMap<i32, Vec<DataFile>>) -> Vec<i32> {
        added
            .iter()
            .filter(|(_, files)| !files.is_empty())
            .map(|(spec_id, _)| *spec_id)
            .collect()
    }

    /// The manifests of `snapshot` (its manifest list).
    pub(crate) async fn manifests_of(
        table: &Table,
        snapshot: Option<&Snapshot>,
    ) -> Result<Vec<ManifestFile>> {
        crate::scan::TableScan::new(table.clone(), snapshot.cloned())
            .manifest_list()
            .await
    }

    /// The entries of a manifest (deleted ones included).
    pub(crate) async fn entries_of(
        table: &Table,
        manifest: &ManifestFile,
    ) -> Result<Vec<ManifestEntry>> {
        crate::scan::read_manifest(table, table.metadata(), manifest).await
    }

    /// Write this attempt's manifest list over `manifests` and return the updates that
    /// add the snapshot to `table` and point the branch at it (a staged snapshot: only
    /// add it, its parent the branch's snapshot; spec "Snapshots": a snapshot no
    /// reference points at is not current, and stays readable by id).
    ///
    /// `manifests` written by this producer get the attempt's sequence number. A manifest
    /// an earlier snapshot wrote that holds no live entry (no added and no existing files,
    /// only deleted ones) is left out, as Java's `MergingSnapshotProducer` leaves it out
    /// ("only keep manifests that have live data files or that were written by this
    /// commit"): the snapshot that deleted those files still lists it, later ones need not,
    /// and carried forward it would outlive every snapshot its entries describe. A manifest
    /// whose counts are missing is kept.
    pub(crate) async fn commit_updates(
        &mut self,
        table: &Table,
        operation: &str,
        mut manifests: Vec<ManifestFile>,
        summary: &SnapshotSummary,
    ) -> Result<Vec<TableUpdate>> {
        manifests.retain(|f| {
            let live = |count: Option<i32>| count.is_none_or(|n| n > 0);
            f.added_snapshot_id == self.snapshot_id
                || live(f.added_files_count)
                || live(f.existing_files_count)
        });
        let m = table.metadata();
        // the branch keeps its retention settings; a tag or a missing branch other than
        // main cannot take a commit
        let mut reference = match m.refs.get(&self.branch) {
            Some(r) if r.ref_type != "branch" => {
                return Err(Error::invalid_argument(format!(
                    "cannot commit to '{}': it is a tag, not a branch",
                    self.branch
                )))
            }
            Some(r) => r.clone(),
            None if self.branch == MAIN_BRANCH => SnapshotReference {
                snapshot_id: self.snapshot_id,
                ref_type: "branch".to_string(),
                min_snapshots_to_keep: None,
                max_snapshot_age_ms: None,
                max_ref_age_ms: None,
            },
            None => match &self.new_branch {
                Some(reference) => reference.clone(),
                None => {
                    return Err(Error::not_found(format!(
                        "branch '{}' does not exist (create it with ALTER TABLE … CREATE \
                         BRANCH)",
                        self.branch
                    )))
                }
            },
        };
        reference.snapshot_id = self.snapshot_id;
        let parent = self.parent(table);
        let sequence_number = Self::next_sequence_number(m);
        let v3 = m.format_version >= FormatVersion::V3;
        let mut next_row_id = m.next_row_id.unwrap_or(0);
        let first_row_id = next_row_id;
        for f in &mut manifests {
            let own = f.added_snapshot_id == self.snapshot_id;
            if own {
                // existing entries keep their (older) sequence numbers: the writer's
                // minimum is below its placeholder then, and stays
                if f.min_sequence_number >= f.sequence_number {
                    f.min_sequence_number = sequence_number;
                }
                f.sequence_number = sequence_number;
            }
            // spec "First Row ID Assignment", "Row Lineage for Upgraded Tables" (Java's v3
            // manifest-list writer): every data manifest without a `first_row_id` gets the
            // next range, sized by its added and existing rows — this commit's (again at
            // each attempt), and the ones carried over from before an upgrade to v3, so
            // their rows get ids in the first commit after it
            if v3 && f.content == ManifestContent::Data && (own || f.first_row_id.is_none()) {
                f.first_row_id = Some(next_row_id);
                next_row_id = f
                    .added_rows_count
                    .unwrap_or(0)
                    .checked_add(f.existing_rows_count.unwrap_or(0))
                    .and_then(|rows| next_row_id.checked_add(rows))
                    .ok_or_else(|| {
                        Error::invalid_data(format!(
                            "manifest '{}': its added and existing row counts run row ids past \
                             the largest row id",
                            f.manifest_path
                        ))
                    })?;
            }
        }
        self.attempt += 1;
        let list_location = format!(
            "{}/snap-{}-{}-{}.avro",
            metadata_dir(m),
            self.snapshot_id,
            self.attempt,
            self.commit_uuid
        );
        let bytes = if m.format_version == FormatVersion::V1 {
            write_manifest_list_v1(&manifests, self.snapshot_id, parent.map(|p| p.snapshot_id))?
        } else {
            write_manifest_list_for(
                &manifests,
                self.snapshot_id,
                parent.map(|p| p.snapshot_id),
                sequence_number,
                v3.then_some(first_row_id),
            )?
        };
        table
            .file_io()
            .write(&list_location, Bytes::from(bytes))
            .await?;
        self.written.push(list_location.clone());
        crate::failpoint::hit("after-manifest-list");
        self.committed = manifests
            .iter()
            .map(|f| f.manifest_path.clone())
            .chain(std::iter::once(list_location.clone()))
            .collect();
        let previous = parent.map(|p| &p.summary);
        let mut summary_map: HashMap<String, String> = summary.to_map(previous);
        summary_map.extend(self.extra_summary.clone());
        summary_map.insert("operation".to_string(), operation.to_string());
        let snapshot = Snapshot {
            snapshot_id: self.snapshot_id,
            parent_snapshot_id: parent.map(|p| p.snapshot_id),
            sequence_number,
            timestamp_ms: chrono::Utc::now().timestamp_millis().max(m.last_updated_ms),
            manifest_list: Some(list_location),
            manifests: None,
            summary: summary_map,
            schema_id: Some(m.current_schema_id),
            first_row_id: v3.then_some(first_row_id),
            added_rows: v3.then_some(next_row_id - first_row_id),
            key_id: None,
        };
        if self.stage_only {
            return Ok(vec![TableUpdate::AddSnapshot { snapshot }]);
        }
        Ok(vec![
            TableUpdate::AddSnapshot { snapshot },
            TableUpdate::SetSnapshotRef {
                ref_name: self.branch.clone(),
                reference,
            },
        ])
    }

    /// After the commit: remove manifests and manifest lists of earlier attempts that the
    /// committed snapshot does not use. After a final failure (`committed` false), or
    /// when the committed `table` does not hold this producer's snapshot (its last
    /// attempt had nothing to commit, e.g. a retried rewrite whose work another commit
    /// did, while another action of the transaction committed): remove every file
    /// written.
    pub(crate) async fn clean_up(&mut self, table: &Table, committed: bool) {
        let landed = committed && table.metadata().snapshot_by_id(self.snapshot_id).is_some();
        for location in std::mem::take(&mut self.written) {
            if landed && self.committed.contains(&location) {
                continue;
            }
            // Best effort: a file left behind is an orphan, never a wrong table.
            let _ = table.file_io().delete(&location).await;
        }
    }
}
