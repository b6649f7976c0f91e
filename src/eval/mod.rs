//! Evaluators that decide which manifests and files a scan may skip, and what is left to
//! check inside each file.
//!
//! * [`InclusiveProjection`] / [`StrictProjection`]: a row filter as a filter on the
//!   partition values of one spec.
//! * [`ManifestEvaluator`]: a manifest against its partition summaries.
//! * [`evaluate_partition`]: a data or delete file's partition tuple.
//! * [`InclusiveMetricsEvaluator`]: a file's column metrics, through [`FileStats`].
//! * [`StrictMetricsEvaluator`]: whether every row of a file matches, by its metrics.
//! * [`ResidualEvaluator`]: what remains of the filter for the files of one partition.
//!
//! Every evaluator may keep too much; none drops a container that holds a matching row
//! (row semantics in [`crate::expr`]).

mod evaluator;
mod manifest;
mod metrics;
mod projection;
mod strict_metrics;

pub use evaluator::{
    eval_binary, eval_set, eval_unary, evaluate, evaluate_partition, ResidualEvaluator,
};
pub use manifest::ManifestEvaluator;
pub use metrics::{metrics_inconsistency, FileStats, InclusiveMetricsEvaluator, MetricsVerdict};
pub use projection::{
    BoundPartitionField, BoundPartitionSpec, InclusiveProjection, StrictProjection,
};
pub use strict_metrics::{StrictMetricsEvaluator, ROWS_MIGHT_NOT_MATCH, ROWS_MUST_MATCH};

/// Rows in the container might match.
pub const ROWS_MIGHT_MATCH: bool = true;
/// No row in the container can match.
pub const ROWS_CANNOT_MATCH: bool = false;
/// `in` predicates with more values than this are not checked against bounds.
pub const IN_PREDICATE_LIMIT: usize = 200;

#[cfg(test)]
mod tests;
