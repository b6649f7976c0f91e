//! `rewrite_table_path`: copies of a table's metadata with every location moved from one
//! prefix to another, for copying the table elsewhere (disaster recovery, moving
//! storage). Spark's procedure and Java's `RewriteTablePathSparkAction` /
//! `RewriteTablePathUtil`.
//!
//! **What is written**, into the staging location (default: a fresh
//! `copy-table-staging-<uuid>/` beside the table's current metadata file, as Java), each
//! file at its place relative to the source prefix:
//!
//! * the metadata JSON of the end version and of each earlier version of its
//!   `metadata-log` back to (not including) the start version: `location`, each
//!   snapshot's `manifest-list`, the `metadata-log` files, the `statistics` and
//!   `partition-statistics` paths and the properties `write.data.path`,
//!   `write.metadata.path`, `write.object-storage.path` and `write.folder-storage.path`
//!   moved (spec: "Table Metadata");
//! * the manifest list of each snapshot of the end version that the start version does not
//!   have: `manifest_path` moved and `manifest_length` the rewritten manifest's length
//!   (Java keeps the old length, which a reader bounding its read by it would cut);
//! * the manifests those snapshots added (all manifests without a start version): each
//!   entry's `file_path` moved, and of delete files the `referenced_data_file` and the
//!   `file_path` bounds (field 2147483546); status, snapshot id and sequence numbers kept;
//! * the position delete files and deletion vector files of those manifests (see
//!   module `content`), whose new size, row group offsets, column sizes and `file_path`
//!   bounds the manifests record (Java keeps the source file's).
//!
//! Nothing is committed and no file of the table changes.
//!
//! **The file list** (`<staging>/file-list`, unless not asked for): one line
//! `source,target` (Java's CSV, no header, no quoting) per file to copy: the staged
//! metadata files to their targets, and the live data files, equality delete files
//! added by the new snapshots (without a start version: every live one, also of
//! snapshots older than the log), and the statistics files of the versions that exist
//! (not those the start version has: copied before; Java lists them again), from where they
//! lie. Copying every line and registering the target of the end version gives the table
//! at the target prefix; with a start version (already copied), only what is newer.
//!
//! A metadata file read from outside the source prefix (the current one of a table
//! registered from a copy) is taken as the file of that name in the table's metadata
//! directory (`write.metadata.path`, else `<location>/metadata`), where the later
//! versions' `metadata-log` names it; Java refuses it. Prefixes match the forms of one
//! local path alike (`file:/x`, `file:///x`, `/x`), and a local path moved to a local
//! target keeps its form, so that every reference to a file stays equal to its path
//! whatever forms the prefixes of this and earlier runs were given in (see
//! [`PrefixRewrite`]).
//!
//! **Refused** ([`ErrorKind::InvalidArgument`], naming the cause): an empty or equal
//! prefix, a table location not under the source prefix, a start or end version that is
//! not the current metadata file nor in its `metadata-log` (by file name, as Java), a start
//! version that is not older than the end version, a file or location not under the
//! source prefix (naming it), a staging location that is the source prefix (every file
//! would be staged over its live source; see module `staging`, which also writes staged
//! files create-if-absent among the table's files); ([`ErrorKind::Unsupported`]) a v1 snapshot without a
//! manifest list, position delete files in Avro or ORC.

mod content;
mod paths;
mod staging;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use bytes::Bytes;

pub use paths::PrefixRewrite;
use staging::Staging;

use crate::delete::delete_file_index::DELETE_FILE_PATH_FIELD_ID;
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{
    DataContentType, FormatVersion, ManifestContent, ManifestFile, Snapshot, TableMetadata,
};
use crate::table::Table;
use crate::write::manifest_list::{write_manifest_list_for, write_manifest_list_v1};
use crate::write::{table_metadata_to_json, ManifestWriter, NewEntry};

/// The arguments of [`rewrite_table_path`] (Spark's `source_prefix`, `target_prefix`,
/// `start_version`, `end_version`, `staging_location`, `create_file_list`).
#[derive(Debug, Clone)]
pub struct RewriteTablePath {
    /// The prefixes.
    pub prefixes: PrefixRewrite,
    /// A metadata file name (`v2.metadata.json`, `00002-<uuid>.metadata.json`) already
    /// copied: only what is newer is rewritten. `None`: everything.
    pub start_version: Option<String>,
    /// The metadata file name to rewrite up to; `None`: the current one.
    pub end_version: Option<String>,
    /// Where the rewritten files go; `None`: `copy-table-staging-<uuid>/` beside the
    /// current metadata file.
    pub staging_location: Option<String>,
    /// Whether to write the file list (default true).
    pub create_file_list: bool,
}

impl RewriteTablePath {
    /// Move `source_prefix` to `target_prefix`, every version, default staging.
    ///
    /// Errors: see [`PrefixRewrite::new`].
    pub fn new(source_prefix: &str, target_prefix: &str) -> Result<Self> {
        Ok(Self {
            prefixes: PrefixRewrite::new(source_prefix, target_prefix)?,
            start_version: None,
            end_version: None,
            staging_location: None,
            create_file_list: true,
        })
    }
}

/// What [`rewrite_table_path`] did (Java's `RewriteTablePath.Result`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteTablePathResult {
    /// The file name of the end version (`v5.metadata.json`).
    pub latest_version: String,
    /// The file list's location, or `N/A` when none was asked for (as Java).
    pub file_list_location: String,
    /// Where the rewritten files were written (ends with `/`).
    pub staging_location: String,
    /// Manifests rewritten.
    pub rewritten_manifest_file_paths_count: usize,
    /// Position delete files and deletion vector files rewritten.
    pub rewritten_delete_file_paths_count: usize,
    /// The file list's lines: (source, target), sorted.
    pub copy_plan: Vec<(String, String)>,
}

/// The file name of a location (after its last `/`).
fn file_name(location: &str) -> &str {
    location.rsplit('/').next().unwrap_or(location)
}

/// Rewrite `table`'s metadata per `options` into the staging location and list the
/// files to copy (see the module docs).
///
/// Errors: see the module docs; reading or writing a file ([`ErrorKind::Io`],
/// [`ErrorKind::NotFound`], naming it).
pub async fn rewrite_table_path(
    table: &Table,
    options: &RewriteTablePath,
) -> Result<RewriteTablePathResult> {
    let paths = &options.prefixes;
    let io = table.file_io();
    let current = table.metadata_location();
    let log: Vec<String> = table
        .metadata()
        .metadata_log
        .iter()
        .map(|e| e.metadata_file.clone())
        .collect();
    let end_location = match &options.end_version {
        None => current.to_string(),
        Some(v) => version_file(current, &log, v, "end_version")?,
    };
    let start_location = match &options.start_version {
        None => None,
        Some(v) => Some(version_file(current, &log, v, "start_version")?),
    };
    for (location, name) in std::iter::once((&end_location, "end_version"))
        .chain(start_location.as_ref().map(|s| (s, "start_version")))
    {
        if !io.exists(location).await? {
            return Err(Error::not_found(format!(
                "{name}: version file '{location}' does not exist"
            )));
        }
    }
    let end = Table::read_metadata(io, &end_location)
        .await
        .map_err(|e| e.context(format!("end version '{end_location}'")))?;
    if !paths.covers(&end.location) {
        return Err(Error::invalid_argument(format!(
            "source_prefix '{}' does not match the table location '{}': the table's files \
             must lie under it",
            paths.source(),
            end.location
        )));
    }
    // the versions to rewrite: the end one, then its log back to the start version
    let mut versions = vec![(end_location.clone(), end.clone())];
    // (without a start version: the whole log; a start equal to the end: none of it)
    let mut reached_start = start_location.is_none();
    if start_location.as_ref() != Some(&end_location) {
        for entry in end.metadata_log.iter().rev() {
            if Some(&entry.metadata_file) == start_location.as_ref() {
                reached_start = true;
                break;
            }
            let m = Table::read_metadata(io, &entry.metadata_file)
                .await
                .map_err(|e| e.context(format!("version file '{}'", entry.metadata_file)))?;
            versions.push((entry.metadata_file.clone(), m));
        }
    } else {
        reached_start = true;
    }
    if !reached_start {
        return Err(Error::invalid_argument(format!(
            "start_version '{}' is not older than end_version '{}' (not in its metadata-log)",
            options.start_version.as_deref().unwrap_or_default(),
            file_name(&end_location)
        )));
    }
    let start = match &start_location {
        Some(s) if *s != end_location => Some(
            Table::read_metadata(io, s)
                .await
                .map_err(|e| e.context(format!("start version '{s}'")))?,
        ),
        Some(_) => Some(end.clone()),
        None => None,
    };
    let staging = Staging::new(options.staging_location.as_deref(), current, paths)?;

    let mut run = Run {
        table: table.with_metadata(end.clone(), &end_location),
        paths,
        staging: staging.clone(),
        plan: BTreeSet::new(),
        delete_files: HashMap::new(),
        manifests: HashMap::new(),
        staged_deletes: HashSet::new(),
        start_statistics: start
            .iter()
            .flat_map(|m| {
                m.statistics
                    .iter()
                    .map(|s| s.statistics_path.clone())
                    .chain(
                        m.partition_statistics
                            .iter()
                            .map(|s| s.statistics_path.clone()),
                    )
            })
            .collect(),
    };
    for (location, metadata) in &versions {
        run.version_file(location, metadata).await?;
    }
    let start_ids: HashSet<i64> = start
        .as_ref()
        .map(|s| s.snapshots.iter().map(|s| s.snapshot_id).collect())
        .unwrap_or_default();
    let delta: HashSet<i64> = versions
        .iter()
        .flat_map(|(_, m)| m.snapshots.iter().map(|s| s.snapshot_id))
        .filter(|id| !start_ids.contains(id))
        .collect();
    let snapshots: Vec<&Snapshot> = end
        .snapshots
        .iter()
        .filter(|s| !start_ids.contains(&s.snapshot_id))
        .collect();
    for snapshot in snapshots {
        run.manifest_list(snapshot, &delta, start.is_none()).await?;
    }
    let rewritten_manifests = run.manifests.values().filter(|m| m.1).count();
    let rewritten_deletes = run.staged_deletes.len();
    let copy_plan: Vec<(String, String)> = run.plan.into_iter().collect();
    let file_list_location = if options.create_file_list {
        let location = format!("{}file-list", staging.dir);
        let mut text = String::new();
        for (from, to) in &copy_plan {
            text.push_str(from);
            text.push(',');
            text.push_str(to);
            text.push('\n');
        }
        staging.write(io, &location, Bytes::from(text)).await?;
        location
    } else {
        "N/A".to_string()
    };
    Ok(RewriteTablePathResult {
        latest_version: file_name(&end_location).to_string(),
        file_list_location,
        staging_location: staging.dir,
        rewritten_manifest_file_paths_count: rewritten_manifests,
        rewritten_delete_file_paths_count: rewritten_deletes,
        copy_plan,
    })
}

/// The metadata file `version` (a file name) names: the current one or one of `log`.
fn version_file(current: &str, log: &[String], version: &str, param: &str) -> Result<String> {
    if version.trim().is_empty() {
        return Err(Error::invalid_argument(format!("{param} cannot be empty")));
    }
    std::iter::once(current)
        .chain(log.iter().map(String::as_str))
        .find(|l| file_name(l) == version)
        .map(str::to_string)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "{param}: cannot find version file '{version}' in the metadata log of the \
                 table (its current metadata file is '{}')",
                file_name(current)
            ))
        })
}

/// The state of one rewrite.
struct Run<'a> {
    /// The table at its end version.
    table: Table,
    paths: &'a PrefixRewrite,
    staging: Staging,
    /// The file list.
    plan: BTreeSet<(String, String)>,
    /// Rewritten delete files by source location: new size, and the metrics of a
    /// Parquet one.
    delete_files: HashMap<String, (i64, Option<content::ParquetDeleteMetrics>)>,
    /// Rewritten manifests by source location: new length, and whether it was staged.
    manifests: HashMap<String, (i64, bool)>,
    /// Delete files written to staging.
    staged_deletes: HashSet<String>,
    /// The statistics files of the start version (copied before: not listed).
    start_statistics: HashSet<String>,
}

impl Run<'_> {
    fn moved(&self, path: &str, what: &str) -> Result<String> {
        self.paths.new_path(path, what)
    }

    fn staged(&self, path: &str, what: &str) -> Result<String> {
        self.paths.staging_path(path, &self.staging.dir, what)
    }

    /// Stage the rewritten metadata JSON `metadata` of `location`; list it and its
    /// statistics files.
    async fn version_file(&mut self, location: &str, metadata: &TableMetadata) -> Result<()> {
        let what = format!("metadata file '{location}'");
        let moved = self.metadata_moved(metadata, &what)?;
        let json = table_metadata_to_json(&moved)?;
        let location = &self.stored_location(location);
        let staged = self.staged(location, &what)?;
        self.staging
            .write(self.table.file_io(), &staged, Bytes::from(json))
            .await?;
        self.plan.insert((staged, self.moved(location, &what)?));
        let statistics = metadata.statistics.iter().map(|s| &s.statistics_path);
        let partition = metadata
            .partition_statistics
            .iter()
            .map(|s| &s.statistics_path);
        // a file an older version names may be gone with its expired snapshot: nothing
        // to copy (as the source, the target's old version names a missing file)
        for path in statistics.chain(partition) {
            if !self.start_statistics.contains(path) && self.table.file_io().exists(path).await? {
                let field = format!("{what}, statistics");
                self.plan.insert((path.clone(), self.moved(path, &field)?));
            }
        }
        Ok(())
    }

    /// Where metadata file `location` lies in the table: itself when under the source
    /// prefix; else (read from a copy registered elsewhere) its name in the table's
    /// metadata directory (`write.metadata.path`, else `<location>/metadata`), which the
    /// metadata-log of later versions names.
    fn stored_location(&self, location: &str) -> String {
        if self.paths.covers(location) {
            return location.to_string();
        }
        let m = self.table.metadata();
        let dir = match m.properties.get("write.metadata.path") {
            Some(p) => p.trim_end_matches('/').to_string(),
            None => format!("{}/metadata", m.location.trim_end_matches('/')),
        };
        format!("{dir}/{}", file_name(location))
    }

    /// `metadata` with its locations moved (Java's `RewriteTablePathUtil.replacePaths`).
    fn metadata_moved(&self, metadata: &TableMetadata, what: &str) -> Result<TableMetadata> {
        let mut m = metadata.clone();
        m.location = self.moved(&m.location, &format!("{what}, location"))?;
        for s in &mut m.snapshots {
            match &s.manifest_list {
                Some(list) => {
                    let field = format!("{what}, snapshot {} manifest-list", s.snapshot_id);
                    s.manifest_list = Some(self.moved(list, &field)?);
                }
                None => {
                    return Err(Error::unsupported(format!(
                        "rewrite_table_path of snapshot {} in {what}: a v1 snapshot without \
                         a manifest list",
                        s.snapshot_id
                    )))
                }
            }
        }
        for e in &mut m.metadata_log {
            e.metadata_file = self.moved(&e.metadata_file, &format!("{what}, metadata-log"))?;
        }
        for s in &mut m.statistics {
            s.statistics_path = self.moved(&s.statistics_path, &format!("{what}, statistics"))?;
        }
        for s in &mut m.partition_statistics {
            s.statistics_path =
                self.moved(&s.statistics_path, &format!("{what}, partition-statistics"))?;
        }
        for key in [
            "write.data.path",
            "write.metadata.path",
            "write.object-storage.path",
            "write.folder-storage.path",
        ] {
            if let Some(v) = m.properties.get(key).cloned() {
                let moved = self.moved(&v, &format!("{what}, property '{key}'"))?;
                m.properties.insert(key.to_string(), moved);
            }
        }
        Ok(m)
    }

    /// Stage the rewritten manifest list of `snapshot` and the manifests it lists that
    /// the `delta` snapshots added (every one when `all`).
    async fn manifest_list(
        &mut self,
        snapshot: &Snapshot,
        delta: &HashSet<i64>,
        all: bool,
    ) -> Result<()> {
        let Some(list) = snapshot.manifest_list.clone() else {
            return Err(Error::unsupported(format!(
                "rewrite_table_path of snapshot {}: a v1 snapshot without a manifest list",
                snapshot.snapshot_id
            )));
        };
        let what = format!("manifest list '{list}'");
        let manifests = crate::maintenance::reachable::manifests_of(&self.table, snapshot, false)
            .await?
            .unwrap_or_default();
        let mut moved = Vec::with_capacity(manifests.len());
        for mf in &manifests {
            let stage = all || delta.contains(&mf.added_snapshot_id);
            let length = self.manifest(mf, delta, all, stage).await?;
            let mut m = mf.clone();
            m.manifest_path = self.moved(&mf.manifest_path, &what)?;
            m.manifest_length = length;
            moved.push(m);
        }
        // v3 lists carry the snapshot's first row id; a snapshot from before an upgrade
        // to v3 has none and keeps the v2 layout
        let bytes = match self.table.metadata().format_version {
            FormatVersion::V1 => {
                write_manifest_list_v1(&moved, snapshot.snapshot_id, snapshot.parent_snapshot_id)?
            }
            FormatVersion::V2 | FormatVersion::V3 => write_manifest_list_for(
                &moved,
                snapshot.snapshot_id,
                snapshot.parent_snapshot_id,
                snapshot.sequence_number,
                snapshot.first_row_id,
            )?,
        };
        let staged = self.staged(&list, &what)?;
        self.staging
            .write(self.table.file_io(), &staged, Bytes::from(bytes))
            .await?;
        self.plan.insert((staged, self.moved(&list, &what)?));
        Ok(())
    }

    /// Rewrite manifest `mf`; return its new length. With `stage`, the manifest and its
    /// position delete files are written to staging and listed with the live files the
    /// `delta` snapshots added (every live file when `all`); otherwise (a manifest a start version already copied) only
    /// its length is computed.
    async fn manifest(
        &mut self,
        mf: &ManifestFile,
        delta: &HashSet<i64>,
        all: bool,
        stage: bool,
    ) -> Result<i64> {
        if let Some((length, staged)) = self.manifests.get(&mf.manifest_path).copied() {
            if staged || !stage {
                return Ok(length);
            }
        }
        let what = format!("manifest '{}'", mf.manifest_path);
        let table = self.table.clone();
        let metadata = table.metadata();
        let entries = crate::scan::read_manifest(&table, metadata, mf).await?;
        let spec = metadata
            .partition_spec_by_id(mf.partition_spec_id)
            .ok_or_else(|| {
                Error::invalid_data(format!(
                    "{what} names partition spec {} which the table does not have",
                    mf.partition_spec_id
                ))
            })?;
        // the manifest's own schema and format version (its header), so its rewrite does
        // not depend on the end version: a later incremental rewrite finds the length of
        // the copy an earlier one made
        let (schema_id, version) = manifest_header(&table, mf).await?;
        let mut schemas = metadata.schemas_newest_first();
        if let Some(own) = schema_id.and_then(|id| metadata.schema_by_id(id)) {
            schemas.insert(0, own);
        }
        let mut writer = ManifestWriter::new(
            &schemas,
            spec,
            mf.content,
            mf.added_snapshot_id,
            mf.sequence_number,
        )?
        .with_format_version(version.unwrap_or(metadata.format_version))?;
        for entry in entries {
            let mut file = entry.data_file.clone();
            let source = file.file_path.clone();
            file.file_path = self.moved(&source, &what)?;
            // without a start version every live file is copied, also those of snapshots
            // expired before the oldest logged version (Java lists only the logged ones)
            let listed = stage && entry.is_alive() && (all || delta.contains(&entry.snapshot_id));
            match (mf.content, file.content) {
                (ManifestContent::Data, _) | (_, DataContentType::EqualityDeletes) => {
                    if listed {
                        self.plan.insert((source.clone(), file.file_path.clone()));
                    }
                }
                (ManifestContent::Deletes, _) => {
                    self.position_delete(
                        &mut file,
                        &source,
                        &what,
                        entry.is_alive(),
                        stage,
                        listed,
                    )
                    .await?;
                }
            }
            writer.add(&NewEntry {
                status: entry.status,
                data_sequence_number: Some(entry.data_sequence_number),
                file_sequence_number: Some(entry.file_sequence_number),
                snapshot_id: Some(entry.snapshot_id),
                data_file: file,
            })?;
        }
        let target = self.moved(&mf.manifest_path, &what)?;
        let (bytes, _) = writer.finish(&target)?;
        let length = bytes.len() as i64;
        if stage {
            let staged = self.staged(&mf.manifest_path, &what)?;
            self.staging
                .write(self.table.file_io(), &staged, Bytes::from(bytes))
                .await?;
            self.plan.insert((staged, target));
        }
        self.manifests
            .insert(mf.manifest_path.clone(), (length, stage));
        Ok(length)
    }

    /// Move the locations of position delete file `file` (at `source`): its
    /// `referenced_data_file` and `file_path` bounds; its bytes rewritten (once per
    /// file) for its new size, staged and listed when `listed`. A file that is gone is
    /// an error unless its entry is a deleted one (`alive` false).
    async fn position_delete(
        &mut self,
        file: &mut crate::spec::DataFile,
        source: &str,
        what: &str,
        alive: bool,
        stage: bool,
        listed: bool,
    ) -> Result<()> {
        let field = format!("{what}, delete file '{source}'");
        if let Some(r) = &file.referenced_data_file {
            file.referenced_data_file = Some(self.moved(r, &field)?);
        }
        for bounds in [&mut file.lower_bounds, &mut file.upper_bounds] {
            if let Some(b) = bounds.get(&DELETE_FILE_PATH_FIELD_ID) {
                if let Ok(text) = std::str::from_utf8(b) {
                    if self.paths.covers(text) {
                        let moved = self.moved(text, &field)?;
                        bounds.insert(
                            DELETE_FILE_PATH_FIELD_ID,
                            crate::spec::manifest::BoundBytes::from_slice(moved.as_bytes()),
                        );
                    }
                }
            }
        }
        let write = stage && listed && !self.staged_deletes.contains(source);
        if write || !self.delete_files.contains_key(source) {
            let bytes = match self.table.file_io().read(source).await {
                Ok(bytes) => bytes,
                // a file only a deleted entry names may be gone (expired since): nothing
                // reads or copies it, its entry keeps the recorded size
                Err(e) if e.kind() == ErrorKind::NotFound && !alive => return Ok(()),
                Err(e) if e.kind() == ErrorKind::NotFound => return Err(e.context(what)),
                Err(e) => return Err(e),
            };
            let (rewritten, metrics) = content::rewrite_delete_file(file, bytes, self.paths)?;
            self.delete_files
                .insert(source.to_string(), (rewritten.len() as i64, metrics));
            if write {
                let staged = self.staged(source, &field)?;
                self.staging
                    .write(self.table.file_io(), &staged, Bytes::from(rewritten))
                    .await?;
                self.plan.insert((staged, file.file_path.clone()));
                self.staged_deletes.insert(source.to_string());
            }
        }
        if let Some((size, metrics)) = self.delete_files.get(source) {
            file.file_size_in_bytes = *size;
            if let Some(m) = metrics {
                record_rewritten_metrics(file, m);
            }
        }
        Ok(())
    }
}

/// The metrics `m` of a rewritten Parquet position delete file recorded in its entry
/// `file`: `split_offsets`, and the column sizes and `file_path` bounds the entry records
/// (a metric the source's writer left out stays out; a `file_path` bound, which may have
/// been truncated or name another form of the prefix, becomes the written file's exact
/// one, as Java's position delete writers record it: metrics mode `full`).
fn record_rewritten_metrics(file: &mut crate::spec::DataFile, m: &content::ParquetDeleteMetrics) {
    file.split_offsets = m.split_offsets.clone();
    for (id, size) in &m.column_sizes {
        if file.column_sizes.contains_key(id) {
            file.column_sizes.insert(*id, *size);
        }
    }
    let bound = |v: &str| crate::spec::manifest::BoundBytes::from_slice(v.as_bytes());
    match &m.path_bounds {
        Some((lower, upper)) => {
            if file.lower_bounds.contains_key(&DELETE_FILE_PATH_FIELD_ID) {
                file.lower_bounds
                    .insert(DELETE_FILE_PATH_FIELD_ID, bound(lower));
            }
            if file.upper_bounds.contains_key(&DELETE_FILE_PATH_FIELD_ID) {
                file.upper_bounds
                    .insert(DELETE_FILE_PATH_FIELD_ID, bound(upper));
            }
        }
        None => {
            file.lower_bounds.remove(&DELETE_FILE_PATH_FIELD_ID);
            file.upper_bounds.remove(&DELETE_FILE_PATH_FIELD_ID);
        }
    }
}

/// The `schema-id` and `format-version` of manifest `mf`'s Avro header, when given.
///
/// Errors: the manifest cannot be read ([`ErrorKind::NotFound`], [`ErrorKind::Io`]) or
/// is not Avro ([`ErrorKind::InvalidData`]), naming it.
async fn manifest_header(
    table: &Table,
    mf: &ManifestFile,
) -> Result<(Option<i32>, Option<FormatVersion>)> {
    let bytes = table.file_io().read(&mf.manifest_path).await?;
    let reader = apache_avro::Reader::new(&bytes[..]).map_err(|e| {
        Error::invalid_data(format!("manifest '{}': not Avro", mf.manifest_path)).with_source(e)
    })?;
    let meta = reader.user_metadata();
    let number = |key: &str| {
        meta.get(key)
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.trim().parse::<i32>().ok())
    };
    let version = match number("format-version") {
        Some(1) => Some(FormatVersion::V1),
        Some(2) => Some(FormatVersion::V2),
        Some(3) => Some(FormatVersion::V3),
        _ => None,
    };
    Ok((number("schema-id"), version))
}

/// The (source, target) lines of a file list, as [`rewrite_table_path`] writes it.
///
/// Errors: a line without a `,` ([`ErrorKind::InvalidData`], naming it).
pub fn parse_file_list(text: &str) -> Result<BTreeMap<String, String>> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            l.split_once(',')
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .ok_or_else(|| Error::invalid_data(format!("file list line '{l}' has no ','")))
        })
        .collect()
}
