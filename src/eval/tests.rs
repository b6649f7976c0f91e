//! Evaluator case tables, re-expressed from Java's `TestInclusiveMetricsEvaluator`,
//! `TestInclusiveManifestEvaluator` and `TestMetricsEvaluatorsNaNHandling` (own values),
//! and the pruning soundness property test.

mod cases;
mod soundness;
