//! The options of `rewrite_data_files` (Spark's procedure options, Java's
//! `RewriteDataFiles` constants) and the strategies it runs.

use crate::error::{Error, Result};
use crate::expr::Predicate;
use crate::maintenance::options::{option_count, option_flag as flag, option_number as num};
use crate::maintenance::zorder::MAX_VAR_LENGTH_CONTRIBUTION;

/// How files are rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum RewriteStrategy {
    /// Combine small files and split large ones, rows in their order (`binpack`).
    #[default]
    BinPack,
    /// As `BinPack`, each group's rows sorted by the table's sort order (`sort`; identity
    /// sort fields only).
    Sort,
    /// As `BinPack`, each group's rows sorted by the z-value of
    /// [`RewriteDataFilesOptions::zorder_columns`] (Spark's `sort` strategy with
    /// `sort_order => 'zorder(a, b, …)'`; see [`crate::maintenance::zorder`]).
    ZOrder,
}

/// The options of `rewrite_data_files` (Spark's names).
#[derive(Debug, Clone, PartialEq)]
pub struct RewriteDataFilesOptions {
    /// The strategy.
    pub strategy: RewriteStrategy,
    /// Only files that may hold rows matching this filter.
    pub filter: Option<Predicate>,
    /// `target-file-size-bytes` (default: table `write.target-file-size-bytes`).
    pub target_file_size_bytes: Option<u64>,
    /// `min-file-size-bytes` (default 75 % of the target).
    pub min_file_size_bytes: Option<u64>,
    /// `max-file-size-bytes` (default 180 % of the target).
    pub max_file_size_bytes: Option<u64>,
    /// `min-input-files` (default 5).
    pub min_input_files: usize,
    /// `delete-file-threshold` (default: never; 0: every file): a file with at least
    /// this many delete files applying to it is rewritten.
    pub delete_file_threshold: usize,
    /// `delete-ratio-threshold` (default 0.3; above 0, at most 1): a file is rewritten
    /// when the rows its file-scoped deletes (deletion vectors, position delete files of
    /// that one data file) delete are at least this share of its `record_count` (Java's
    /// `BinPackRewriteFilePlanner.DELETE_RATIO_THRESHOLD`, Iceberg ≥ 1.8).
    pub delete_ratio_threshold: f64,
    /// `rewrite-all` (default false).
    pub rewrite_all: bool,
    /// `max-file-group-size-bytes` (default 100 GiB).
    pub max_file_group_size_bytes: u64,
    /// The order the `sort` strategy writes rows in (default: the table's sort order).
    pub sort_order: Option<crate::spec::sort_order::SortOrder>,
    /// The columns a z-order rewrite orders by (names of top-level columns).
    pub zorder_columns: Vec<String>,
    /// `var-length-contribution` (z-order only; default 8, at most
    /// [`MAX_VAR_LENGTH_CONTRIBUTION`]): bytes of a string or binary value in the z-value.
    pub var_length_contribution: Option<usize>,
    /// `max-output-size` (z-order only; default: all): bytes of the z-value kept.
    pub max_output_size: Option<usize>,
    /// `partial-progress.enabled` (default false): commit groups in several commits, so
    /// a failing group does not undo the others.
    pub partial_progress_enabled: bool,
    /// `partial-progress.max-commits` (default 10, at least 1).
    pub partial_progress_max_commits: usize,
    /// `partial-progress.max-failed-commits` (default: `max-commits`).
    pub partial_progress_max_failed_commits: Option<usize>,
    /// `output-spec-id` (default: the table's default spec): the partition spec the new
    /// files are written and committed under (an existing spec of the table; Java
    /// `RewriteDataFiles.OUTPUT_SPEC_ID`). Files already under it are grouped by
    /// partition, files of other specs together.
    pub output_spec_id: Option<i32>,
}

impl Default for RewriteDataFilesOptions {
    fn default() -> Self {
        Self {
            strategy: RewriteStrategy::BinPack,
            filter: None,
            target_file_size_bytes: None,
            min_file_size_bytes: None,
            max_file_size_bytes: None,
            min_input_files: 5,
            delete_file_threshold: usize::MAX,
            delete_ratio_threshold: 0.3,
            rewrite_all: false,
            max_file_group_size_bytes: 100 * 1024 * 1024 * 1024,
            sort_order: None,
            zorder_columns: vec![],
            var_length_contribution: None,
            max_output_size: None,
            partial_progress_enabled: false,
            partial_progress_max_commits: 10,
            partial_progress_max_failed_commits: None,
            output_spec_id: None,
        }
    }
}

impl RewriteDataFilesOptions {
    /// Set options from Spark's `options` map.
    ///
    /// Errors: an unknown option or a value that does not parse, naming it; an option
    /// that is not supported (`use-starting-sequence-number` = `true`) as
    /// [`ErrorKind::Unsupported`].
    pub fn with_options(mut self, options: &[(String, String)]) -> Result<Self> {
        for (k, v) in options {
            match k.as_str() {
                "target-file-size-bytes" => self.target_file_size_bytes = Some(num(k, v)?),
                "min-file-size-bytes" => self.min_file_size_bytes = Some(num(k, v)?),
                "max-file-size-bytes" => self.max_file_size_bytes = Some(num(k, v)?),
                "min-input-files" => self.min_input_files = num(k, v)?,
                "delete-file-threshold" => self.delete_file_threshold = num(k, v)?,
                "delete-ratio-threshold" => self.delete_ratio_threshold = num(k, v)?,
                "rewrite-all" => self.rewrite_all = flag(k, v)?,
                "output-spec-id" => self.output_spec_id = Some(num(k, v)?),
                "var-length-contribution" => {
                    self.var_length_contribution = Some(num(k, v)?);
                }
                "max-output-size" => self.max_output_size = Some(num(k, v)?),
                "max-file-group-size-bytes" => self.max_file_group_size_bytes = num(k, v)?,
                "max-concurrent-file-group-rewrites" => {
                    // accepted for Spark's calls; groups are rewritten one after another
                    // (each one's scan and write already parallel)
                    option_count(k, v)?;
                }
                "remove-dangling-deletes" => {
                    // dangling deletes are always dropped: correct either way
                    flag(k, v)?;
                }
                "partial-progress.enabled" => self.partial_progress_enabled = flag(k, v)?,
                "partial-progress.max-commits" => {
                    self.partial_progress_max_commits = option_count(k, v)?
                }
                "partial-progress.max-failed-commits" => {
                    self.partial_progress_max_failed_commits = Some(num(k, v)?)
                }
                "use-starting-sequence-number" => {
                    if flag(k, v)? {
                        return Err(Error::unsupported(format!(
                            "rewrite_data_files option '{k}' = true"
                        )));
                    }
                }
                other => {
                    return Err(Error::invalid_argument(format!(
                        "unknown rewrite_data_files option '{other}' (known: \
                         target-file-size-bytes, min-file-size-bytes, max-file-size-bytes, \
                         min-input-files, delete-file-threshold, delete-ratio-threshold, \
                         rewrite-all, \
                         max-file-group-size-bytes, max-concurrent-file-group-rewrites, \
                         remove-dangling-deletes, partial-progress.enabled, \
                         partial-progress.max-commits, partial-progress.max-failed-commits, \
                         use-starting-sequence-number, output-spec-id, and for z-order \
                         var-length-contribution, max-output-size)"
                    )))
                }
            }
        }
        if self.min_input_files == 0 {
            return Err(Error::invalid_argument(
                "option 'min-input-files' must be at least 1",
            ));
        }
        if self.max_file_group_size_bytes == 0 {
            return Err(Error::invalid_argument(
                "option 'max-file-group-size-bytes' must be at least 1",
            ));
        }
        if let Some(v) = self.var_length_contribution {
            if !(1..=MAX_VAR_LENGTH_CONTRIBUTION).contains(&v) {
                return Err(Error::invalid_argument(format!(
                    "option 'var-length-contribution' is {v}: it must be 1 to \
                     {MAX_VAR_LENGTH_CONTRIBUTION} (bytes of a string or binary value)"
                )));
            }
        }
        if self.max_output_size == Some(0) {
            return Err(Error::invalid_argument(
                "option 'max-output-size' must be at least 1 (bytes)",
            ));
        }
        let ratio = self.delete_ratio_threshold;
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(Error::invalid_argument(format!(
                "option 'delete-ratio-threshold' is {ratio}: it must be above 0 and at most 1 \
                 (the share of a file's rows deleted)"
            )));
        }
        Ok(self)
    }
}
