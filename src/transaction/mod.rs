//! Transactions: the one commit path under every write (spec: "Commit Conflict
//! Resolution and Retry"; Java `BaseTransaction` and `SnapshotProducer`; REST
//! `CommitTableRequest`).
//!
//! A [`Transaction`] over a loaded table collects actions ([`AppendFiles`],
//! [`OverwriteFiles`], …). [`Transaction::commit`] asks each action for its
//! [`TableUpdate`]s against the table as the commit will apply to it, derives the
//! [`TableRequirement`]s those updates need from the base (as the REST protocol's
//! `UpdateRequirements` does: the table uuid always; the branch's snapshot id for a new
//! snapshot; schema, spec and sort-order ids for changes to them) and calls
//! [`Catalog::commit_table`], whose check-and-put swaps the table's pointer.
//!
//! When the catalog answers [`ErrorKind::CommitConflict`] the transaction reloads the
//! table, and every action re-validates against it (an action's own conflict checks,
//! e.g. [`OverwriteFiles`]' "no new data in the overwritten range", fail the commit for
//! good) and re-applies on top of it: data files and the manifests of added files are
//! reused, a new manifest list and metadata file are written. Attempts back off
//! exponentially per `commit.retry.num-retries` (default 4), `commit.retry.min-wait-ms`
//! (100), `commit.retry.max-wait-ms` (60000) and `commit.retry.total-timeout-ms`
//! (1800000). A commit that finally fails removes the manifests and manifest lists it
//! wrote; [`ErrorKind::CommitStateUnknown`] removes nothing, since the commit may have
//! landed. It is never retried: the transaction reloads the table once and, when every
//! snapshot the commit added is in it, the commit landed and its table is returned
//! (Java's `checkCommitStatus`); otherwise the error stands.

mod append;
mod cherry_pick;
mod dropped_deletes;
mod expire_snapshots;
pub(crate) mod expired_base;
mod manage_snapshots;
mod manifest_merge;
mod overwrite;
pub(crate) mod pinned_names;
mod replace_sort_order;
mod replace_table;
mod retry;
mod rewrite_files;
mod rewrite_manifests;
mod row_delta;
mod snapshot_files;
mod snapshot_producer;
mod summary;
mod update_location;
mod update_partition_spec;
mod update_partition_statistics;
mod update_properties;
mod update_schema;
mod update_statistics;
mod validation;
mod written_schema;

use std::sync::Arc;

use async_trait::async_trait;

use crate::catalog::{Catalog, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{
    Schema, TableCommit, TableMetadataBuilder, TableRequirement, TableUpdate, MAIN_BRANCH,
};
use crate::table::Table;
use written_schema::check_written_schema;

pub(crate) use append::paths_in_snapshot;
pub use append::AppendFiles;
pub use cherry_pick::{CherryPickSnapshot, PUBLISHED_WAP_ID, SOURCE_SNAPSHOT_ID};
pub use expire_snapshots::{
    ExpirePlan, ExpireSnapshots, MAX_REF_AGE_MS, MAX_SNAPSHOT_AGE_MS, MIN_SNAPSHOTS_TO_KEEP,
};
pub use manage_snapshots::{ManageSnapshots, RefExists, RefRetention};
pub use overwrite::{IsolationLevel, OverwriteFiles};
pub use replace_sort_order::{NullOrder, ReplaceSortOrder, SortDirection};
pub use replace_table::ReplaceTable;
pub use retry::RetryPolicy;
pub use rewrite_files::RewriteFiles;
pub use rewrite_manifests::RewriteManifests;
pub use row_delta::RowDelta;
pub use snapshot_producer::STAGED_WAP_ID;
pub use update_location::UpdateLocation;
pub use update_partition_spec::{PartitionFieldRef, PartitionTerm, UpdatePartitionSpec};
pub use update_partition_statistics::UpdatePartitionStatistics;
pub use update_properties::{
    check_reserved_not_given, UpdateProperties, FORMAT_VERSION, RESERVED_PROPERTIES,
};
pub use update_schema::{check_promotion, ColumnPosition, UpdateSchema};
pub use update_statistics::UpdateStatistics;

/// Check that this crate writes `table`'s format version (v2 today), before any file
/// is written for a change to it.
///
/// Errors: [`ErrorKind::Unsupported`](crate::ErrorKind) naming what is missing.
pub fn check_writable(table: &Table) -> Result<()> {
    snapshot_producer::SnapshotProducer::check_format(table)
}

/// One change of a transaction.
#[async_trait]
pub trait TransactionAction: Send + Sync + std::fmt::Debug {
    /// Validate against `table` (the base of this attempt, with the transaction's
    /// earlier actions applied) and return the updates that make the change, writing
    /// any metadata files they need.
    ///
    /// Errors: a validation failure (e.g. conflicting files committed since the action's
    /// starting snapshot) fails the whole transaction without retry.
    async fn updates(&mut self, table: &Table) -> Result<Vec<TableUpdate>>;

    /// Whether the action adds files whose rows are typed by a schema (data files,
    /// equality delete files): the transaction then checks, at every attempt, that the
    /// table's current schema still reads them ([`Transaction::files_written_with`]).
    fn adds_typed_files(&self) -> bool {
        false
    }

    /// The ids of the partition specs of the files the action adds (data and delete
    /// files): while one of them is the table's default spec, the commit requires the
    /// default spec unchanged, so no commit can make it an old spec and remove it before
    /// this one lands (the retry then checks that the spec still exists).
    fn added_spec_ids(&self) -> Vec<i32> {
        vec![]
    }

    /// After the transaction: remove files this action wrote that the committed table
    /// does not use (`committed`), or all of them (after a failure, and when the last
    /// attempt had no update to commit: files an earlier attempt wrote are then unused).
    /// `committed` with a table that does not hold what the action wrote (its last
    /// attempt had nothing to add while another action committed) removes them too.
    async fn clean_up(&mut self, table: &Table, committed: bool);

    /// The branch the action commits to when it is not `main` (the transaction's
    /// errors name it); `None` for `main` and for actions that change no branch.
    fn branch(&self) -> Option<&str> {
        None
    }
}

/// A set of actions committed together, atomically, to one table.
#[derive(Debug)]
pub struct Transaction {
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    base: Table,
    actions: Vec<Box<dyn TransactionAction>>,
    /// The schema the actions' files were written with (the base's current one unless
    /// set by [`Self::files_written_with`]).
    written_schema: Schema,
    /// A staged create ([`Self::create`]): `base` is not in the catalog yet.
    creating: bool,
}

impl Transaction {
    /// A transaction on `base` (loaded from `catalog` as `ident`).
    pub fn new(catalog: Arc<dyn Catalog>, ident: TableIdent, base: Table) -> Self {
        let written_schema = base.metadata().current_schema().clone();
        Self {
            catalog,
            ident,
            base,
            actions: vec![],
            written_schema,
            creating: false,
        }
    }

    /// A transaction creating the table `staged` (from
    /// [`Catalog::stage_create_table`]) as `ident`: the actions apply to it as to a
    /// loaded table, and the one commit ([`Catalog::commit_create`], requirement
    /// `assert-create`) creates the table with their changes (Java's
    /// `createTransaction()`; Spark's CTAS). Never retried: a table created under the
    /// name meanwhile fails it ([`ErrorKind::AlreadyExists`]), and every file the
    /// actions wrote is removed.
    pub fn create(catalog: Arc<dyn Catalog>, ident: TableIdent, staged: Table) -> Self {
        Self {
            creating: true,
            ..Self::new(catalog, ident, staged)
        }
    }

    /// The files the actions add were written with `schema` (default: the base table's
    /// current schema; a `REPLACE TABLE … AS` writes with the replacement's). Every
    /// attempt checks that the schema the files are committed under reads them
    /// (`written_schema::check_written_schema`).
    pub fn files_written_with(mut self, schema: Schema) -> Self {
        self.written_schema = schema;
        self
    }

    /// The table the transaction started from.
    pub fn base(&self) -> &Table {
        &self.base
    }

    /// Add an action; actions apply in the order added.
    pub fn add_action(mut self, action: impl TransactionAction + 'static) -> Self {
        self.actions.push(Box::new(action));
        self
    }

    /// Commit, retrying on conflicts per the table's `commit.retry.*` properties.
    /// Returns the committed table.
    ///
    /// Errors: an action's validation error; [`ErrorKind::CommitConflict`] when the
    /// retries run out; [`ErrorKind::CommitStateUnknown`] when the catalog cannot say
    /// whether the last attempt landed (files are then kept); I/O errors.
    pub async fn commit(self) -> Result<Table> {
        self.commit_on_base().await.map(|(_, committed)| committed)
    }

    /// [`Self::commit`], returning also the table the successful attempt was applied to
    /// (its base: the table loaded before the first attempt, or reloaded for a retry),
    /// first, then the committed table. When the last attempt had no update to make
    /// (e.g. a retry that found nothing left to expire or recluster), nothing is
    /// committed and both are the base. What the committed table no longer reaches is
    /// what this commit removed from the base (Java's `RemoveSnapshots` cleans up against
    /// the base it committed on).
    ///
    /// Errors: as [`Self::commit`].
    pub async fn commit_on_base(mut self) -> Result<(Table, Table)> {
        // never fails: see `RetryPolicy::from_properties` for why a value icefloe
        // cannot use falls back to its default instead
        if self.creating {
            let base = self.base.clone();
            return self.commit_create().await.map(|t| (base, t));
        }
        let policy = RetryPolicy::from_properties(&self.base.metadata().properties);
        let mut base = self.base.clone();
        let mut attempt = 0u32;
        let started = std::time::Instant::now();
        loop {
            let result = match self.attempt(&base).await {
                // nothing to change: nothing is committed, so no file an earlier attempt
                // wrote is used (a retry that finds its work done by another commit)
                Ok(None) => {
                    self.clean_up_failed(&base).await;
                    return Ok((base.clone(), base));
                }
                Ok(Some((Err(e), added))) if e.kind() == ErrorKind::CommitStateUnknown => {
                    self.check_landed(e, &added).await
                }
                Ok(Some((Err(e), _))) if refused_as_invalid(&e) => {
                    self.changed_since(e, &base).await
                }
                // the catalog has no such table (any more)
                Ok(Some((Err(e), _))) if e.kind() == ErrorKind::NotFound => {
                    let error = Error::new(
                        ErrorKind::NotFound,
                        format!(
                            "commit to {} failed: the table was dropped (or renamed) while the commit ran",
                            self.target()
                        ),
                    )
                    .with_source(e);
                    self.clean_up_failed(&base).await;
                    return Err(error);
                }
                Ok(Some((catalog_answer, _))) => catalog_answer,
                // a file of `base` is gone: expired since `base` was read (its snapshot's
                // manifest list, when an `expire_snapshots` removed the snapshot a
                // statement started from); Java applies every attempt to the table
                // refreshed, so a retry against the table as it is now
                Err(e) if e.kind() == ErrorKind::NotFound => self.changed_since(e, &base).await,
                Err(e) => {
                    self.clean_up_failed(&base).await;
                    return Err(e);
                }
            };
            match result {
                Ok(table) => {
                    for a in &mut self.actions {
                        a.clean_up(&table, true).await;
                    }
                    return Ok((base, table));
                }
                Err(e) if e.kind() == ErrorKind::CommitConflict => {
                    attempt += 1;
                    if !policy.may_retry(attempt, started.elapsed()) {
                        self.clean_up_failed(&base).await;
                        let unusable = RetryPolicy::unusable(&self.base.metadata().properties);
                        let note = if unusable.is_empty() {
                            String::new()
                        } else {
                            format!(" (defaults used in place of: {})", unusable.join("; "))
                        };
                        let attempts = if attempt == 1 { "attempt" } else { "attempts" };
                        return Err(e.context(format!(
                            "commit to {} gave up after {attempt} {attempts}{note}",
                            self.target()
                        )));
                    }
                    tokio::time::sleep(policy.wait(attempt)).await;
                    base = match self.catalog.load_table(&self.ident).await {
                        Ok(t) => t,
                        Err(load) => {
                            self.clean_up_failed(&base).await;
                            return Err(match load.kind() {
                                ErrorKind::NotFound => self.dropped(&e, load),
                                _ => load,
                            });
                        }
                    };
                    if let Err(e) = self.check_same_table(&base) {
                        // what the attempts wrote lies under the table they started on
                        let started = self.base.clone();
                        self.clean_up_failed(&started).await;
                        return Err(e);
                    }
                }
                Err(e) if e.kind() == ErrorKind::CommitStateUnknown => return Err(e),
                Err(e) => {
                    self.clean_up_failed(&base).await;
                    return Err(e);
                }
            }
        }
    }

    /// The one attempt of a staged create ([`Self::create`]).
    async fn commit_create(mut self) -> Result<Table> {
        let base = self.base.clone();
        let result = match self.attempt(&base).await {
            Ok(None) => Ok(base.clone()),
            Ok(Some((Err(e), added))) if e.kind() == ErrorKind::CommitStateUnknown => {
                self.check_landed(e, &added).await
            }
            Ok(Some((answer, _))) => answer,
            Err(e) => Err(e),
        };
        match result {
            Ok(table) => {
                for a in &mut self.actions {
                    a.clean_up(&table, true).await;
                }
                Ok(table)
            }
            // the files stay: the create may have landed
            Err(e) if e.kind() == ErrorKind::CommitStateUnknown => Err(e),
            Err(e) => {
                self.clean_up_failed(&base).await;
                Err(e)
            }
        }
    }

    /// What the transaction commits to, for its errors: `table 'ns.t'`, or `branch 'dev'
    /// of table 'ns.t'` when an action commits to a branch other than `main`.
    fn target(&self) -> String {
        match self.actions.iter().find_map(|a| a.branch()) {
            Some(branch) => format!("branch '{branch}' of table '{}'", self.ident),
            None => format!("table '{}'", self.ident),
        }
    }

    /// A retry re-applies the actions to the table the catalog now holds under the name;
    /// that must be the table the transaction started on. When the name was dropped and
    /// created again, or the table renamed and another created under its name, the
    /// reloaded metadata has another `table-uuid` (Java's `checkUUID` on refresh: "Table
    /// UUID does not match"), and committing there would put files written for one
    /// table's schema and spec into another.
    ///
    /// Errors: [`ErrorKind::ValidationFailed`] naming the table and both uuids.
    fn check_same_table(&self, reloaded: &Table) -> Result<()> {
        let started = self.base.metadata().table_uuid.as_deref();
        let now = reloaded.metadata().table_uuid.as_deref();
        match (started, now) {
            (Some(started), Some(now)) if started != now => Err(Error::new(
                ErrorKind::ValidationFailed,
                format!(
                    "commit to {} not retried: the table was replaced while the commit ran \
                     (table-uuid {started} at the start, {now} now; dropped and created \
                     again, or renamed and another created under its name)",
                    self.target()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// The catalog refused updates that were valid against `base` (e.g. a v2 position
    /// delete file, or a snapshot without row lineage, while another writer upgraded the
    /// table to v3: no [`TableRequirement`] covers the format version), or an action
    /// found a file of `base` gone (removed by an `expire_snapshots` committed since).
    /// When the table changed since `base`, that is a lost race:
    /// [`ErrorKind::CommitConflict`], so the commit reloads the table and every action
    /// re-validates against it (and fails there with its own message when it cannot
    /// apply). Otherwise the error stands.
    async fn changed_since(&self, refused: Error, base: &Table) -> Result<Table> {
        match self.catalog.load_table(&self.ident).await {
            Err(load) if load.kind() == ErrorKind::NotFound => Err(self.dropped(&refused, load)),
            Ok(now) if now.metadata_location() != base.metadata_location() => Err(Error::new(
                ErrorKind::CommitConflict,
                format!(
                    "table '{}' changed since '{}' was read, and the commit could not be \
                     applied to that state ({refused})",
                    self.ident,
                    base.metadata_location()
                ),
            )),
            _ => Err(refused),
        }
    }

    /// The error for a commit whose table is gone (the catalog's answer `failed`, or the
    /// reload after `failed`: a lost race, or a file of the base gone): the table was
    /// dropped while the commit ran (a filesystem catalog's drop moves the files the base
    /// names, so `failed` may name a missing manifest list). [`ErrorKind::NotFound`],
    /// naming the table, with `source` (the reload's error) as its source.
    fn dropped(&self, failed: &dyn std::fmt::Display, source: Error) -> Error {
        Error::new(
            ErrorKind::NotFound,
            format!(
                "commit to {} failed: the table was dropped (or renamed) while the commit ran ({failed})",
                self.target()
            ),
        )
        .with_source(source)
    }

    async fn clean_up_failed(&mut self, table: &Table) {
        for a in &mut self.actions {
            a.clean_up(table, false).await;
        }
    }

    /// After an unknown commit outcome: reload the table; when it holds every snapshot
    /// the commit added (`added`, none: the outcome cannot be told), the commit landed.
    async fn check_landed(&self, unknown: Error, added: &[i64]) -> Result<Table> {
        if added.is_empty() {
            return Err(unknown);
        }
        match self.catalog.load_table(&self.ident).await {
            Ok(t)
                if added
                    .iter()
                    .all(|id| t.metadata().snapshot_by_id(*id).is_some()) =>
            {
                Ok(t)
            }
            Ok(_) => Err(unknown.context(format!(
                "table '{}' reloaded: snapshot {added:?} is not in it; not retried",
                self.ident
            ))),
            Err(load) => Err(unknown.context(format!(
                "table '{}' could not be reloaded to check ({load})",
                self.ident
            ))),
        }
    }

    /// One attempt over `base`: the outer error is the actions' (final), the inner
    /// result the catalog's answer, with the ids of the snapshots the commit added;
    /// `None` when the actions have no update to make (nothing is sent).
    async fn attempt(&mut self, base: &Table) -> Result<Option<(Result<Table>, Vec<i64>)>> {
        let mut working = base.clone();
        let mut updates = vec![];
        let mut adds_typed_files = false;
        let mut added_specs = vec![];
        for action in &mut self.actions {
            added_specs.extend(action.added_spec_ids());
            if action.adds_typed_files() {
                let m = working.metadata();
                check_written_schema(&self.written_schema, m.current_schema(), m.format_version)?;
                adds_typed_files = true;
            }
            let more = action.updates(&working).await?;
            // a staged table's metadata location is not written yet: nothing to log
            let logged = Some(working.metadata_location()).filter(|_| !self.creating);
            let mut builder = TableMetadataBuilder::from_base(working.metadata().clone(), logged);
            builder.apply_all(&more)?;
            let location = working.metadata_location().to_string();
            working = working.with_metadata(builder.build()?, &location);
            updates.extend(more);
        }
        if updates.is_empty() {
            // nothing to change (e.g. no snapshot old enough to expire): no new metadata
            return Ok(None);
        }
        let added: Vec<i64> = updates
            .iter()
            .filter_map(|u| match u {
                TableUpdate::AddSnapshot { snapshot } => Some(snapshot.snapshot_id),
                _ => None,
            })
            .collect();
        if self.creating {
            let commit = TableCommit {
                requirements: vec![TableRequirement::AssertCreate],
                updates,
            };
            let answer = self.catalog.commit_create(&self.ident, base, &commit).await;
            return Ok(Some((answer, added)));
        }
        let mut requirements = requirements_for(base, &updates);
        // Stricter than Java's append: the check above holds only while the schema stays
        // the one checked, so a schema change committed meanwhile is a conflict (the retry
        // checks again against the new schema).
        let schema_held = TableRequirement::AssertCurrentSchemaId {
            current_schema_id: base.metadata().current_schema_id,
        };
        if adds_typed_files && !requirements.contains(&schema_held) {
            requirements.push(schema_held);
        }
        // Stricter than Java's append, for the same reason: files written for the default
        // spec must not land after a commit made it an old spec and another removed it
        // (`SnapshotProducer::check_specs_exist` catches that on the retry); a file
        // written for an old spec still takes that spec's own risk, as in Java (no
        // requirement can hold a non-default spec in place).
        let default_spec = base.metadata().default_spec_id;
        let spec_held = TableRequirement::AssertDefaultSpecId {
            default_spec_id: default_spec,
        };
        if added_specs.contains(&default_spec) && !requirements.contains(&spec_held) {
            requirements.push(spec_held);
        }
        let commit = TableCommit {
            requirements,
            updates,
        };
        Ok(Some((
            self.catalog.commit_table(&self.ident, &commit).await,
            added,
        )))
    }
}

/// Whether the catalog's answer `e` refused the updates themselves (not a conflict, an
/// unknown outcome, or a storage or permission failure).
fn refused_as_invalid(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::InvalidArgument | ErrorKind::ValidationFailed | ErrorKind::Unsupported
    )
}

/// The requirements `updates` need on `base` (the REST protocol's
/// `UpdateRequirements.forUpdateTable`).
pub fn requirements_for(base: &Table, updates: &[TableUpdate]) -> Vec<TableRequirement> {
    let m = base.metadata();
    let mut out = vec![];
    if let Some(uuid) = &m.table_uuid {
        out.push(TableRequirement::AssertTableUuid { uuid: uuid.clone() });
    }
    let mut push = |r: TableRequirement| {
        if !out.contains(&r) {
            out.push(r);
        }
    };
    for u in updates {
        match u {
            TableUpdate::SetSnapshotRef { ref_name, .. }
            | TableUpdate::RemoveSnapshotRef { ref_name } => {
                push(TableRequirement::AssertRefSnapshotId {
                    reference: ref_name.clone(),
                    snapshot_id: m.ref_snapshot_id(ref_name),
                })
            }
            // which snapshots expire depends on where every ref is (ExpireSnapshots)
            TableUpdate::RemoveSnapshots { .. } => {
                let mut names: Vec<&String> = m.refs.keys().collect();
                names.sort();
                for name in names {
                    push(TableRequirement::AssertRefSnapshotId {
                        reference: name.clone(),
                        snapshot_id: m.ref_snapshot_id(name),
                    });
                }
            }
            TableUpdate::AddSchema { .. } => push(TableRequirement::AssertLastAssignedFieldId {
                last_assigned_field_id: m.last_column_id,
            }),
            TableUpdate::SetCurrentSchema { .. } => push(TableRequirement::AssertCurrentSchemaId {
                current_schema_id: m.current_schema_id,
            }),
            TableUpdate::AddSpec { .. } => push(TableRequirement::AssertLastAssignedPartitionId {
                last_assigned_partition_id: m.last_partition_id,
            }),
            TableUpdate::SetDefaultSpec { .. } => push(TableRequirement::AssertDefaultSpecId {
                default_spec_id: m.default_spec_id,
            }),
            // the default spec or current schema kept, and no other branch moved (its
            // writer could still use what is removed; Java `UpdateRequirements`)
            TableUpdate::RemovePartitionSpecs { .. } | TableUpdate::RemoveSchemas { .. } => {
                push(match u {
                    TableUpdate::RemoveSchemas { .. } => TableRequirement::AssertCurrentSchemaId {
                        current_schema_id: m.current_schema_id,
                    },
                    _ => TableRequirement::AssertDefaultSpecId {
                        default_spec_id: m.default_spec_id,
                    },
                });
                let mut branches: Vec<&String> = m
                    .refs
                    .iter()
                    .filter(|(name, r)| r.ref_type == "branch" && *name != MAIN_BRANCH)
                    .map(|(name, _)| name)
                    .collect();
                branches.sort();
                for name in branches {
                    push(TableRequirement::AssertRefSnapshotId {
                        reference: name.clone(),
                        snapshot_id: m.ref_snapshot_id(name),
                    });
                }
            }
            TableUpdate::SetDefaultSortOrder { .. } => {
                push(TableRequirement::AssertDefaultSortOrderId {
                    default_sort_order_id: m.default_sort_order_id,
                })
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests;
