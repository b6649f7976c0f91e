//! An Iceberg scan whose snapshot was expired while it read says so.
//!
//! A query reads the files of the snapshot it planned. A concurrent `expire_snapshots`
//! (retention shorter than the query's run) or `DROP TABLE … PURGE` may expire that
//! snapshot and delete the manifest list, manifests and data files only it referenced;
//! the read then fails on a file that is gone ("data file '…' does not exist", "manifest
//! list … does not exist"), though the table is whole. When the table came from a catalog
//! (the provider has a write target), its scan knows the table, the snapshot and how to
//! reload it: [`ExpiredReadCheck`] turns a read failure (an icefloe error of kind
//! `InvalidData`, `NotFound` or `Io` in the chain; not a failed expression, a cancelled
//! or out-of-memory query) into the same kind saying the snapshot was expired meanwhile
//! and the query can be run again, naming the table and snapshot and keeping the read
//! error ([`transaction::expired_base::expired_read`](crate::transaction::expired_base)),
//! when the catalog's table no longer holds the snapshot. Writes reading through such a
//! scan (`INSERT … SELECT`, `CREATE TABLE … AS SELECT`, `DELETE`/`UPDATE`/`MERGE`) turn
//! that into a lost race (`expired_base::lost_race`).
//!
//! Both the scan's planning ([`explain_planning`]: manifest list, manifests, delete files
//! read by `TableProvider::scan`) and its execution ([`ExpiredReadMorselizer`]: data
//! files, and a deferred scan's manifests) are covered. The check is process-local: a
//! scan sent to another process (feature `distributed`) reads without it.
//!
//! A table read by location (`--table`, `CREATE EXTERNAL TABLE`, `iceberg_scan`) is
//! checked against the current version in its directory: one registered by its
//! directory (loaded at each statement, [`super::followed_directory`]) says the same as a
//! catalog's table; one pinned at a metadata file or a snapshot says it is pinned there
//! and a later commit expired that snapshot and deleted its files.

use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::common::Result as DFResult;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::error::DataFusionError;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_datasource::morsel::{Morsel, MorselPlan, MorselPlanner, Morselizer};
use futures::future::{BoxFuture, Either};
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

use super::error_chain::holds_read_failure;
use super::table_provider::IcebergTableProvider;
use crate::catalog::{Catalog, TableIdent};
use crate::error::Error;
use crate::table::Table;
use crate::transaction::expired_base::{expired_location_read, expired_read};

/// What a scan needs to tell a read that lost a race with `expire_snapshots` (see the
/// module docs): where the table comes from and the snapshot read.
#[derive(Debug)]
pub struct ExpiredReadCheck {
    source: Source,
    snapshot_id: i64,
}

/// Where a scan's table comes from, to load its current version.
#[derive(Debug)]
enum Source {
    /// A catalog's table.
    Catalog {
        catalog: Arc<dyn Catalog>,
        ident: TableIdent,
    },
    /// A table read by location (`--table`, `CREATE EXTERNAL TABLE`, `iceberg_scan`):
    /// the table as loaded, its name, and whether it follows its directory (loaded at
    /// the statement, as a catalog's table is) or is pinned at its metadata file or at a
    /// snapshot.
    Location {
        table: Box<Table>,
        name: String,
        followed: bool,
    },
}

impl ExpiredReadCheck {
    /// The check for `provider`'s scans: `None` for a table without snapshots.
    pub(crate) fn for_provider(provider: &IcebergTableProvider) -> Option<Arc<Self>> {
        let snapshot = provider.snapshot()?;
        let source = match provider.write_target() {
            Some(target) => Source::Catalog {
                catalog: Arc::clone(&target.catalog),
                ident: target.ident.clone(),
            },
            None => Source::Location {
                table: Box::new(provider.table().clone()),
                name: provider.display_name(),
                // a followed table read at a fixed snapshot (`snapshot_id` option) is
                // pinned at that snapshot
                followed: provider.followed().is_some()
                    && provider
                        .table()
                        .metadata()
                        .current_snapshot()
                        .map(|s| s.snapshot_id)
                        == Some(snapshot.snapshot_id),
            },
        };
        Some(Arc::new(Self {
            source,
            snapshot_id: snapshot.snapshot_id,
        }))
    }

    /// `e`, saying the snapshot was expired when it is a read failure and the table's
    /// current version no longer holds the snapshot; otherwise `e` unchanged. For a
    /// table read by location at a fixed metadata file or snapshot, the message says
    /// the table is pinned there and a later commit expired it.
    pub(crate) async fn explain(&self, e: DataFusionError) -> DataFusionError {
        if !holds_read_failure(&e) {
            return e;
        }
        let e = Error::from(e);
        match &self.source {
            Source::Catalog { catalog, ident } => {
                expired_read(catalog.as_ref(), ident, self.snapshot_id, e)
                    .await
                    .into()
            }
            Source::Location {
                table,
                name,
                followed,
            } => {
                let now = match table.current_in_directory().await {
                    Ok(now) if now.metadata().snapshot_by_id(self.snapshot_id).is_none() => now,
                    _ => return e.into(),
                };
                if *followed {
                    return expired_location_read(name, self.snapshot_id, e).into();
                }
                pinned_read(table, name, self.snapshot_id, now.metadata_location(), e).into()
            }
        }
    }

    fn failed(self: Arc<Self>, e: DataFusionError) -> BoxFuture<'static, DataFusionError> {
        async move { self.explain(e).await }.boxed()
    }
}

/// `e`, a read of `snapshot` of `table` (read by location, pinned at its metadata file
/// or at that snapshot) that failed because a later commit, whose version is at
/// `current`, expired the snapshot and deleted its files: of `e`'s kind, naming the
/// table, its metadata file and the snapshot, `e` as the source.
fn pinned_read(table: &Table, name: &str, snapshot: i64, current: &str, e: Error) -> Error {
    Error::new(
        e.kind(),
        format!(
            "table '{name}' is pinned at metadata file '{}' (snapshot {snapshot}), which a \
             later commit expired: its files were deleted (the table's current metadata \
             '{current}' no longer holds the snapshot); register the table by its directory \
             to read its current version",
            table.metadata_location()
        ),
    )
    .with_source(e)
}

/// The result of `TableProvider::scan` of `provider`, its planning reads' failure
/// explained (see [`ExpiredReadCheck`]).
pub(crate) async fn explain_planning(
    provider: &IcebergTableProvider,
    planned: DFResult<Arc<dyn ExecutionPlan>>,
) -> DFResult<Arc<dyn ExecutionPlan>> {
    match (planned, ExpiredReadCheck::for_provider(provider)) {
        (Err(e), Some(check)) => Err(check.explain(e).await),
        (planned, _) => planned,
    }
}

/// A `Morselizer` whose planners' and morsels' read failures are explained by an
/// [`ExpiredReadCheck`]. A failure raised synchronously (`plan_file`, `plan`) is handed
/// back as a pending planner's, which may wait for the catalog.
#[derive(Debug)]
pub(crate) struct ExpiredReadMorselizer {
    inner: Box<dyn Morselizer>,
    check: Arc<ExpiredReadCheck>,
}

impl ExpiredReadMorselizer {
    /// Wrap `inner` (the scan's morselizer).
    pub fn new(inner: Box<dyn Morselizer>, check: Arc<ExpiredReadCheck>) -> Self {
        Self { inner, check }
    }
}

impl Morselizer for ExpiredReadMorselizer {
    fn plan_file(&self, file: PartitionedFile) -> DFResult<Box<dyn MorselPlanner>> {
        let check = Arc::clone(&self.check);
        Ok(match self.inner.plan_file(file) {
            Ok(inner) => Box::new(CheckedPlanner { inner, check }),
            Err(e) => Box::new(FailedPlanner { error: e, check }),
        })
    }
}

/// A plan whose only step fails with `e`, explained.
fn failing_plan(check: Arc<ExpiredReadCheck>, e: DataFusionError) -> MorselPlan {
    MorselPlan::new().with_pending_planner(async move { Err(check.failed(e).await) })
}

#[derive(Debug)]
struct FailedPlanner {
    error: DataFusionError,
    check: Arc<ExpiredReadCheck>,
}

impl MorselPlanner for FailedPlanner {
    fn plan(self: Box<Self>) -> DFResult<Option<MorselPlan>> {
        Ok(Some(failing_plan(self.check, self.error)))
    }
}

#[derive(Debug)]
struct CheckedPlanner {
    inner: Box<dyn MorselPlanner>,
    check: Arc<ExpiredReadCheck>,
}

fn checked(inner: Box<dyn MorselPlanner>, check: &Arc<ExpiredReadCheck>) -> Box<dyn MorselPlanner> {
    Box::new(CheckedPlanner {
        inner,
        check: Arc::clone(check),
    })
}

impl MorselPlanner for CheckedPlanner {
    fn plan(self: Box<Self>) -> DFResult<Option<MorselPlan>> {
        let check = self.check;
        let mut plan = match self.inner.plan() {
            Ok(Some(plan)) => plan,
            Ok(None) => return Ok(None),
            Err(e) => return Ok(Some(failing_plan(check, e))),
        };
        let morsels = plan
            .take_morsels()
            .into_iter()
            .map(|inner| {
                Box::new(CheckedMorsel {
                    inner,
                    check: Arc::clone(&check),
                }) as Box<dyn Morsel>
            })
            .collect();
        let planners = plan
            .take_ready_planners()
            .into_iter()
            .map(|p| checked(p, &check))
            .collect();
        let pending = plan.take_pending_planner();
        let mut wrapped = MorselPlan::new()
            .with_morsels(morsels)
            .with_planners(planners);
        if let Some(pending) = pending {
            wrapped.set_pending_planner(async move {
                match pending.await {
                    Ok(p) => Ok(checked(p, &check)),
                    Err(e) => Err(check.failed(e).await),
                }
            });
        }
        Ok(Some(wrapped))
    }
}

#[derive(Debug)]
struct CheckedMorsel {
    inner: Box<dyn Morsel>,
    check: Arc<ExpiredReadCheck>,
}

impl Morsel for CheckedMorsel {
    fn into_stream(self: Box<Self>) -> BoxStream<'static, DFResult<RecordBatch>> {
        let check = self.check;
        self.inner
            .into_stream()
            .then(move |r| match r {
                Ok(batch) => Either::Left(futures::future::ready(Ok(batch))),
                Err(e) => {
                    let failed = Arc::clone(&check).failed(e);
                    Either::Right(async move { Err(failed.await) })
                }
            })
            .boxed()
    }
}
