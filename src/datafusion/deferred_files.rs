//! A deferred scan's manifests as DataFusion work: each file group holds one
//! `PartitionedFile` per data manifest (marked with [`DeferredManifest`]), and the scan's
//! `Morselizer` ([`DeferredMorselizer`]) turns it, when the scan's stream reaches it,
//! into that manifest's planned data files ([`DeferredScan::plan_manifest`]), each then
//! read by DataFusion's Parquet morselizer as if it had been planned up front.
//!
//! This is DataFusion 55's morsel API: a `MorselPlanner` may return its next planner from
//! an I/O future (reading and decoding the manifest; `MorselPlan::with_pending_planner`)
//! and then child planners (`MorselPlan::with_planners`), one per data file, which the
//! file stream queues in order. The data files of a manifest are read by the stream
//! (output partition) that holds the manifest, in manifest order; memory holds what the
//! streams have in flight, not the table's file list.
//!
//! The data-file counts of the pruning funnel (`iceberg_data_files_*`) are added to the
//! scan's metrics as manifests are planned ([`DeferredCounts`]).

use std::fmt;
use std::sync::Arc;

use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricType,
};
use datafusion_datasource::morsel::{MorselPlan, MorselPlanner, Morselizer};

use datafusion::arrow::datatypes::SchemaRef;

use crate::datafusion::metrics::funnel;
use crate::datafusion::planned_file::{data_file_at, partitioned_file_at};
use crate::datafusion::statistics::file_statistics;
use crate::error::Error;
use crate::io::FileIO;
use crate::scan::{DeferredScan, FileScanTask, ScanMetrics};
use crate::spec::{Schema, TableMetadata};

/// The `PartitionedFile` extension marking a deferred scan's manifest: the index of the
/// manifest in [`DeferredScan::manifests`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeferredManifest {
    pub index: usize,
}

/// The data-file counters of a deferred scan's funnel, registered on the scan's metrics
/// set and counted up as manifests are planned.
#[derive(Debug, Clone)]
pub(crate) struct DeferredCounts {
    total: Count,
    by_partition: Count,
    by_metrics: Count,
    inconsistent: Count,
    planned: Count,
}

impl DeferredCounts {
    /// Register every funnel counter on `set` with the values known before any manifest
    /// is read (`known`: the manifest counts), keeping the data-file ones to count up.
    pub fn register(set: &ExecutionPlanMetricsSet, known: &ScanMetrics) -> Self {
        let counter = |name: &'static str| {
            MetricBuilder::new(set)
                .with_type(MetricType::Summary)
                .global_counter(name)
        };
        let mut data_file_counters = vec![];
        for (name, value) in funnel(known) {
            let count = counter(name);
            count.add(value);
            if name.starts_with("iceberg_data_files_") {
                data_file_counters.push((name, count));
            }
        }
        let take = |name: &str| {
            data_file_counters
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| c.clone())
                .unwrap_or_default()
        };
        Self {
            total: take("iceberg_data_files_total"),
            by_partition: take("iceberg_data_files_skipped_by_partition"),
            by_metrics: take("iceberg_data_files_skipped_by_metrics"),
            inconsistent: take("iceberg_data_files_with_inconsistent_metrics"),
            planned: take("iceberg_data_files_planned"),
        }
    }

    fn add(&self, m: &ScanMetrics) {
        self.total.add(m.data_files_total);
        self.by_partition.add(m.data_files_skipped_by_partition);
        self.by_metrics.add(m.data_files_skipped_by_metrics);
        self.inconsistent
            .add(m.data_files_with_inconsistent_metrics);
        self.planned.add(m.data_files_planned);
    }
}

/// What the statistics of a deferred scan's data files are computed from, as the
/// scan planned up front computes them (`statistics::file_statistics`): DataFusion's
/// Parquet opener also reads an exact min = max without nulls as that constant, which
/// is how an identity-partition column a migrated file lacks gets its value.
pub(crate) struct StatisticsInputs {
    pub schema: Arc<Schema>,
    pub arrow_schema: SchemaRef,
    pub metadata: Arc<TableMetadata>,
    /// Per table column, whether the scan reads it.
    pub read_columns: Vec<bool>,
}

/// What a deferred scan of one object store needs to plan its manifests: the
/// [`DeferredScan`], the table's FileIO and the store's URL (every planned data file must
/// be in that store), and the counters.
pub struct DeferredFiles {
    scan: DeferredScan,
    file_io: FileIO,
    store_url: String,
    counts: DeferredCounts,
    statistics: StatisticsInputs,
}

impl fmt::Debug for DeferredFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeferredFiles")
            .field("manifests", &self.scan.manifests().len())
            .field("store_url", &self.store_url)
            .finish()
    }
}

impl DeferredFiles {
    pub(crate) fn new(
        scan: DeferredScan,
        file_io: FileIO,
        store_url: &str,
        counts: DeferredCounts,
        statistics: StatisticsInputs,
    ) -> Self {
        Self {
            scan,
            file_io,
            store_url: store_url.to_string(),
            counts,
            statistics,
        }
    }

    /// The `PartitionedFile` of one planned data file.
    ///
    /// Errors: a location that does not resolve or is in another object store than the
    /// scan's, a negative `file_size_in_bytes`, a partition value of the wrong type.
    fn partitioned_file(&self, task: &FileScanTask) -> crate::error::Result<PartitionedFile> {
        let path = &task.data_file().file_path;
        let resolved = self.file_io.resolve_remapped(&task.location, path)?;
        if resolved.store_url != self.store_url {
            return Err(Error::unsupported(format!(
                "data file '{path}' is in object store '{}', not in '{}' as the table is: a \
                 scan planning each manifest as it reads it reads one store (set \
                 icefloe.deferred_planning_min_files = 0 to plan every file first)",
                resolved.store_url, self.store_url
            )));
        }
        let inputs = &self.statistics;
        let statistics = file_statistics(
            &inputs.schema,
            &inputs.arrow_schema,
            inputs.metadata.partition_spec_by_id(task.entry.spec_id),
            task.data_file(),
            false,
            &inputs.read_columns,
        )?;
        Ok(data_file_at(resolved.path, &task.entry)?.with_statistics(Arc::new(statistics)))
    }
}

/// One `PartitionedFile` per manifest of `scan` (see [`DeferredManifest`]), each with the
/// manifest's live row count (from the manifest list) as the weight to balance file
/// groups by.
///
/// Errors: a manifest location that does not resolve.
pub(crate) fn manifest_files(
    scan: &DeferredScan,
    file_io: &FileIO,
) -> crate::error::Result<Vec<(PartitionedFile, u64)>> {
    let mut out = Vec::with_capacity(scan.manifests().len());
    for (index, m) in scan.manifests().iter().enumerate() {
        let resolved = file_io.resolve(&m.manifest_path)?;
        let count = |n: Option<i64>| u64::try_from(n.unwrap_or(0)).unwrap_or(0);
        let rows = count(m.added_rows_count).saturating_add(count(m.existing_rows_count));
        let size = u64::try_from(m.manifest_length).unwrap_or(0);
        let file =
            partitioned_file_at(resolved.path, size).with_extension(DeferredManifest { index });
        out.push((file, rows));
    }
    Ok(out)
}

/// The morselizer of a deferred scan: a manifest ([`DeferredManifest`]) is planned into
/// its data files, which `inner` (DataFusion's Parquet morselizer, naming files in
/// errors) reads; any other file goes to `inner` directly.
#[derive(Debug)]
pub(crate) struct DeferredMorselizer {
    inner: Arc<dyn Morselizer>,
    files: Arc<DeferredFiles>,
}

impl DeferredMorselizer {
    pub fn new(inner: Arc<dyn Morselizer>, files: Arc<DeferredFiles>) -> Self {
        Self { inner, files }
    }
}

impl Morselizer for DeferredMorselizer {
    fn plan_file(&self, file: PartitionedFile) -> DFResult<Box<dyn MorselPlanner>> {
        match file.extension::<DeferredManifest>() {
            Some(manifest) => Ok(Box::new(ManifestPlanner {
                index: manifest.index,
                inner: Arc::clone(&self.inner),
                files: Arc::clone(&self.files),
            })),
            None => self.inner.plan_file(file),
        }
    }
}

/// A manifest not read yet: planning it is I/O (read, decode, prune).
#[derive(Debug)]
struct ManifestPlanner {
    index: usize,
    inner: Arc<dyn Morselizer>,
    files: Arc<DeferredFiles>,
}

impl MorselPlanner for ManifestPlanner {
    fn plan(self: Box<Self>) -> DFResult<Option<MorselPlan>> {
        let Self {
            index,
            inner,
            files,
        } = *self;
        let planned = async move {
            let manifest = files.scan.manifests().get(index).ok_or_else(|| {
                DataFusionError::Internal(format!("deferred scan has no manifest {index}"))
            })?;
            let plan = files.scan.plan_manifest(manifest).await?;
            files.counts.add(&plan.metrics);
            let data_files = plan
                .tasks
                .iter()
                .map(|task| files.partitioned_file(task))
                .collect::<crate::error::Result<Vec<_>>>()?;
            Ok::<_, DataFusionError>(
                Box::new(PlannedManifest { data_files, inner }) as Box<dyn MorselPlanner>
            )
        };
        Ok(Some(MorselPlan::new().with_pending_planner(planned)))
    }
}

/// A manifest planned: its data files, each handed to the Parquet morselizer.
#[derive(Debug)]
struct PlannedManifest {
    data_files: Vec<PartitionedFile>,
    inner: Arc<dyn Morselizer>,
}

impl MorselPlanner for PlannedManifest {
    fn plan(self: Box<Self>) -> DFResult<Option<MorselPlan>> {
        if self.data_files.is_empty() {
            return Ok(None);
        }
        let planners = self
            .data_files
            .into_iter()
            .map(|file| self.inner.plan_file(file))
            .collect::<DFResult<Vec<_>>>()?;
        Ok(Some(MorselPlan::new().with_planners(planners)))
    }
}
