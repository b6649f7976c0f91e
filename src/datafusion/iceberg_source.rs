//! [`IcebergParquetSource`]: DataFusion's `ParquetSource` with the Iceberg state a scan
//! needs to be rebuilt in another process.
//!
//! An Iceberg scan is DataFusion's own `DataSourceExec` over a `ParquetSource`, plus what
//! icefloe adds: the reader factory checking each file against its manifest
//! ([`IcebergParquetReaderFactory`](super::file_reader::IcebergParquetReaderFactory)), the
//! field-id column mapping ([`FieldIdExprAdapterFactory`]) and per-file row selections
//! for position deletes and deletion vectors (`ParquetRowSelection` in the
//! `PartitionedFile` extensions). `datafusion-proto` serializes a plain `ParquetSource`
//! by itself and would silently drop all three (issue 15). Wrapping the source keeps
//! `DataSourceExec`, `FileScanConfig` and every optimization on them unchanged (each call
//! is forwarded to the `ParquetSource`) while making the scan reach icefloe's
//! `PhysicalExtensionCodec` (feature `distributed`), which carries the whole state.
//! The file openers it hands out name the data file in every error
//! ([`scan_errors`](super::scan_errors)) and, for a catalog's table, say when the
//! snapshot read was expired meanwhile ([`expired_reads`](super::expired_reads)).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::Result as DFResult;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileOpener, FileScanConfig, FileSource};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::projection::ProjectionExprs;
use datafusion::physical_expr::{EquivalenceProperties, LexOrdering, PhysicalExpr};
use datafusion::physical_expr_common::sort_expr::PhysicalSortExpr;
use datafusion::physical_plan::filter_pushdown::{FilterPushdownPropagation, PushedDown};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::{DisplayFormatType, SortOrderPushdownResult};
use datafusion_datasource::morsel::Morselizer;
use object_store::path::Path;
use object_store::ObjectStore;

use super::deferred_files::{DeferredFiles, DeferredMorselizer};
use super::expired_reads::{ExpiredReadCheck, ExpiredReadMorselizer};
use super::expr_adapter::FieldIdExprAdapterFactory;
use super::scan_errors::{Locations, NamedFileMorselizer};
use super::stats_pruning::prunes_soundly;
use crate::io::FileIO;

/// What a scan of one object store needs besides DataFusion's own configuration: how
/// to reach the files and how to map their columns. Nothing here is process-local: the
/// object store is rebuilt from `file_io` on whichever process runs the scan.
#[derive(Debug, Clone)]
pub struct IcebergScanState {
    /// The table's FileIO (its properties configure cloud stores; its remaps move the
    /// table's locations).
    pub file_io: FileIO,
    /// The object store's URL (`file:///`, `s3://bucket`).
    pub store_url: String,
    /// Object path → location as recorded in the manifest, for moved tables.
    pub recorded: Arc<HashMap<Path, String>>,
    /// The field-id column mapping (`initial-default`s, required ids, name mapping).
    pub columns: Arc<FieldIdExprAdapterFactory>,
    /// A deferred scan's manifests, planned as the scan reads them (file groups then hold
    /// manifests; see [`deferred_files`](super::deferred_files)). Process-local: the
    /// codecs refuse such a scan.
    pub deferred: Option<Arc<DeferredFiles>>,
    /// For a catalog's table: how a read failure is told apart as a lost race with
    /// `expire_snapshots` ([`expired_reads`](super::expired_reads)). Process-local: a
    /// scan decoded in another process has none.
    pub expired_reads: Option<Arc<ExpiredReadCheck>>,
}

/// A `ParquetSource` (the `inner` source, with icefloe's reader factory set) and the
/// [`IcebergScanState`] it was built from. Every `FileSource` call is forwarded to the
/// inner source; the sources it returns are wrapped again.
#[derive(Clone)]
pub struct IcebergParquetSource {
    inner: Arc<dyn FileSource>,
    state: Arc<IcebergScanState>,
}

impl fmt::Debug for IcebergParquetSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IcebergParquetSource")
            .field("file_type", &self.inner.file_type())
            .field("state", &self.state)
            .finish()
    }
}

impl IcebergParquetSource {
    /// Wrap `inner` (a `ParquetSource`) built from `state`.
    pub fn new(inner: Arc<dyn FileSource>, state: Arc<IcebergScanState>) -> Self {
        Self { inner, state }
    }

    /// The wrapped source.
    pub fn inner(&self) -> &Arc<dyn FileSource> {
        &self.inner
    }

    /// The Iceberg state of the scan.
    pub fn state(&self) -> &Arc<IcebergScanState> {
        &self.state
    }

    /// How this scan's data files are named in errors.
    fn locations(&self) -> Locations {
        Locations {
            store_url: self.state.store_url.clone(),
            recorded: Arc::clone(&self.state.recorded),
        }
    }

    fn wrap(&self, inner: Arc<dyn FileSource>) -> Arc<dyn FileSource> {
        Arc::new(Self {
            inner,
            state: Arc::clone(&self.state),
        })
    }

    fn wrap_sort(
        &self,
        result: SortOrderPushdownResult<Arc<dyn FileSource>>,
    ) -> SortOrderPushdownResult<Arc<dyn FileSource>> {
        match result {
            SortOrderPushdownResult::Exact { inner } => SortOrderPushdownResult::Exact {
                inner: self.wrap(inner),
            },
            SortOrderPushdownResult::Inexact { inner } => SortOrderPushdownResult::Inexact {
                inner: self.wrap(inner),
            },
            other => other,
        }
    }
}

impl FileSource for IcebergParquetSource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> DFResult<Arc<dyn FileOpener>> {
        // DataFusion 55's ParquetSource reads through `create_morselizer` only
        self.inner
            .create_file_opener(object_store, base_config, partition)
    }

    fn create_morselizer(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> DFResult<Box<dyn Morselizer>> {
        let inner = self
            .inner
            .create_morselizer(object_store, base_config, partition)?;
        // a scan that evaluates more than the columns it reads (a pushed `get_field` of a
        // map, a cast): a panic in its stream may be the expression's, not the decoder's
        let computes = self.inner.projection().is_some_and(|projection| {
            projection
                .iter()
                .any(|p| p.expr.downcast_ref::<Column>().is_none())
        });
        let named = NamedFileMorselizer::new(inner, self.locations(), computes);
        let morselizer: Box<dyn Morselizer> = match &self.state.deferred {
            Some(files) => Box::new(DeferredMorselizer::new(Arc::new(named), Arc::clone(files))),
            None => Box::new(named),
        };
        Ok(match &self.state.expired_reads {
            Some(check) => Box::new(ExpiredReadMorselizer::new(morselizer, Arc::clone(check))),
            None => morselizer,
        })
    }

    fn table_schema(&self) -> &TableSchema {
        self.inner.table_schema()
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        self.wrap(self.inner.with_batch_size(batch_size))
    }

    fn filter(&self) -> Option<Arc<dyn PhysicalExpr>> {
        self.inner.filter()
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        self.inner.projection()
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        self.inner.metrics()
    }

    fn file_type(&self) -> &str {
        self.inner.file_type()
    }

    fn fmt_extra(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.fmt_extra(t, f)
    }

    fn supports_repartitioning(&self) -> bool {
        self.inner.supports_repartitioning()
    }

    fn repartitioned(
        &self,
        target_partitions: usize,
        repartition_file_min_size: usize,
        output_ordering: Option<LexOrdering>,
        config: &FileScanConfig,
    ) -> DFResult<Option<FileScanConfig>> {
        // a deferred scan's "files" are manifests: cut by byte range, each part would be
        // planned into all of the manifest's data files
        if self.state.deferred.is_some() {
            return Ok(None);
        }
        if output_ordering.is_none()
            && balanced_by_whole_files(&config.file_groups, target_partitions)
        {
            return Ok(None);
        }
        // `config` holds this wrapper as its source; the inner source only regroups files
        self.inner.repartitioned(
            target_partitions,
            repartition_file_min_size,
            output_ordering,
            config,
        )
    }

    /// Filters DataFusion's statistics pruning would answer wrongly (a negation, a cast
    /// to boolean: [`prunes_soundly`]) are not handed to the Parquet source: they stay
    /// above the scan (`PushedDown::No`), which evaluates them on every row.
    fn try_pushdown_filters(
        &self,
        filters: Vec<Arc<dyn PhysicalExpr>>,
        config: &ConfigOptions,
    ) -> DFResult<FilterPushdownPropagation<Arc<dyn FileSource>>> {
        let sound: Vec<bool> = filters.iter().map(prunes_soundly).collect();
        let handed: Vec<Arc<dyn PhysicalExpr>> = filters
            .into_iter()
            .zip(&sound)
            .filter_map(|(f, sound)| sound.then_some(f))
            .collect();
        if handed.is_empty() {
            return Ok(FilterPushdownPropagation::with_parent_pushdown_result(
                vec![PushedDown::No; sound.len()],
            ));
        }
        let result = self.inner.try_pushdown_filters(handed, config)?;
        let mut answers = result.filters.into_iter();
        let filters = sound
            .iter()
            .map(|&sound| match sound {
                true => answers.next().unwrap_or(PushedDown::No),
                false => PushedDown::No,
            })
            .collect();
        Ok(FilterPushdownPropagation {
            filters,
            updated_node: result.updated_node.map(|inner| self.wrap(inner)),
        })
    }

    fn try_pushdown_sort(
        &self,
        order: &[PhysicalSortExpr],
        eq_properties: &EquivalenceProperties,
    ) -> DFResult<SortOrderPushdownResult<Arc<dyn FileSource>>> {
        Ok(self.wrap_sort(self.inner.try_pushdown_sort(order, eq_properties)?))
    }

    fn reorder_files(&self, files: Vec<PartitionedFile>) -> Vec<PartitionedFile> {
        self.inner.reorder_files(files)
    }

    fn try_pushdown_projection(
        &self,
        projection: &ProjectionExprs,
    ) -> DFResult<Option<Arc<dyn FileSource>>> {
        Ok(self
            .inner
            .try_pushdown_projection(projection)?
            .map(|inner| self.wrap(inner)))
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        self.inner.apply_expressions(f)
    }
    // `try_to_proto` keeps its default (`Ok(None)`): the scan is then handed to the
    // `PhysicalExtensionCodec`, where icefloe's codec encodes the whole state.
}

/// Whether the scan's own file groups (icefloe's `split_into_groups`: runs of whole files
/// in the order planned, cut at each group's share of the bytes) already spread the work
/// as DataFusion's re-split by byte range would: at least `target_partitions` groups, and
/// no file larger than an eighth of a group's share of the bytes, so that two groups
/// differ by at most about that eighth. DataFusion's re-split then only costs: it copies
/// the whole `FileScanConfig` and every `PartitionedFile` in it (a plan of 1,000,000
/// files holds each path three times). A scan of a few large files is still cut by byte
/// range, where whole files could not balance.
fn balanced_by_whole_files(groups: &[FileGroup], target_partitions: usize) -> bool {
    if groups.len() < target_partitions.max(1) {
        return false;
    }
    let (total, largest) =
        groups
            .iter()
            .flat_map(|g| g.iter())
            .fold((0u64, 0u64), |(total, largest), f| {
                let size = f.effective_size();
                (total.saturating_add(size), largest.max(size))
            });
    let share = total / target_partitions.max(1) as u64;
    largest.saturating_mul(8) <= share
}

#[cfg(test)]
mod tests {
    use datafusion::datasource::listing::PartitionedFile;
    use datafusion::datasource::physical_plan::FileGroup;

    use super::balanced_by_whole_files;

    fn groups(sizes: &[&[u64]]) -> Vec<FileGroup> {
        sizes
            .iter()
            .map(|g| {
                FileGroup::new(
                    g.iter()
                        .enumerate()
                        .map(|(i, size)| PartitionedFile::new(format!("f{i}"), *size))
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn many_small_files_keep_their_groups_a_few_large_ones_are_cut() {
        // 2 groups of 16 equal files: each file is 1/16 of a group's share
        let many = groups(&[&[100; 16], &[100; 16]]);
        assert!(balanced_by_whole_files(&many, 2));
        // more partitions wanted than the scan has groups: DataFusion cuts
        assert!(!balanced_by_whole_files(&many, 4));
        // TPC-H lineitem: 2 files, 2 groups, each file the whole share
        assert!(!balanced_by_whole_files(&groups(&[&[1000], &[1000]]), 2));
        // one file above an eighth of the share (share 1000, file 126)
        let mut sizes = vec![126u64];
        sizes.extend([98u64; 9]);
        assert!(!balanced_by_whole_files(&groups(&[&sizes, &[1000]]), 2));
        // exactly an eighth is balanced enough
        let mut sizes = vec![125u64];
        sizes.extend([875u64 / 7; 7]);
        assert!(balanced_by_whole_files(&groups(&[&sizes, &[125; 8]]), 2));
        // nothing to read
        assert!(!balanced_by_whole_files(&[], 2));
    }
}
