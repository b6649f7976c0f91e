//! The size rules of `rewrite_data_files` (Java's `SizeBasedFileRewritePlanner`, used
//! by `BinPackRewriteFilePlanner`): which files are outside the desired size range,
//! which groups are worth rewriting, how many files a group becomes and how much of its
//! input each of them takes.

/// The file size thresholds of one rewrite, in bytes: `target-file-size-bytes`,
/// `min-file-size-bytes` and `max-file-size-bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileRewriteSizes {
    /// The size the new files aim at.
    pub(crate) target: u64,
    /// Files smaller than this are rewritten (default 75 % of the target).
    pub(crate) min: u64,
    /// Files larger than this are rewritten (default 180 % of the target).
    pub(crate) max: u64,
}

impl FileRewriteSizes {
    /// The thresholds for `target`, with `min` and `max` when given, else Java's defaults
    /// (`MIN_FILE_SIZE_DEFAULT_RATIO` 0.75, `MAX_FILE_SIZE_DEFAULT_RATIO` 1.8).
    pub(crate) fn new(target: u64, min: Option<u64>, max: Option<u64>) -> Self {
        Self {
            target,
            min: min.unwrap_or((target as f64 * 0.75) as u64),
            max: max.unwrap_or((target as f64 * 1.8) as u64),
        }
    }

    /// Check the thresholds as Java's `SizeBasedFileRewritePlanner` does before planning:
    /// `min-file-size-bytes` below the target and `max-file-size-bytes` above it (else
    /// every file written would be outside the range again, and a second call would
    /// rewrite it again).
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] naming the options and their values.
    pub(crate) fn check(&self) -> crate::Result<()> {
        let (target, min, max) = (self.target, self.min, self.max);
        if min >= target {
            return Err(crate::Error::invalid_argument(format!(
                "option 'min-file-size-bytes' ({min}) must be below 'target-file-size-bytes' \
                 ({target}): every new file would be smaller than the minimum"
            )));
        }
        if max <= target {
            return Err(crate::Error::invalid_argument(format!(
                "option 'max-file-size-bytes' ({max}) must be above 'target-file-size-bytes' \
                 ({target}): every new file would be larger than the maximum"
            )));
        }
        Ok(())
    }

    /// Whether a file of `size` bytes is too small or too large (Java's
    /// `outsideDesiredFileSizeRange`).
    pub(crate) fn outside_desired_range(&self, size: u64) -> bool {
        size < self.min || size > self.max
    }

    /// Whether a group of `files` input files (manifest entries) and `size` bytes is
    /// worth rewriting by size: at least two files and `min_input_files` of them
    /// (`enoughInputFiles`), or two files and more than the target (`enoughContent`), or
    /// more than the maximum file size, even a single file (`tooMuchContent`: a file too
    /// large is split however alone it is).
    pub(crate) fn worth_rewriting(&self, files: usize, size: u64, min_input_files: usize) -> bool {
        (files > 1 && (files >= min_input_files || size > self.target)) || size > self.max
    }

    /// The size the writer of a group rolls its files at, at most (Java's
    /// `writeMaxFileSize`): the target plus half the way to the maximum, so that input
    /// that comes out a little larger than planned makes one file, not a file and a
    /// sliver.
    pub(crate) fn write_max_file_size(&self) -> u64 {
        self.target + self.max.saturating_sub(self.target) / 2
    }

    /// How many files a group of `input` bytes becomes (Java's `expectedOutputFiles`):
    /// one below the target; else the input over the target, rounded up when the
    /// remainder is larger than the minimum file size (a file of its own), rounded down
    /// when spreading the remainder over the other files keeps them under 110 % of the
    /// target and under [`Self::write_max_file_size`], else rounded up.
    pub(crate) fn expected_output_files(&self, input: u64) -> u64 {
        if input < self.target || self.target == 0 {
            return 1;
        }
        let floor = input / self.target;
        let ceil = input.div_ceil(self.target);
        let remainder = input % self.target;
        if remainder > self.min {
            return ceil;
        }
        let average = (input / floor) as f64;
        let bound = (1.1 * self.target as f64).min(self.write_max_file_size() as f64);
        if average < bound {
            floor
        } else {
            ceil
        }
    }

    /// The input bytes each new file of a group of `input` bytes takes (Java's
    /// `inputSplitSize`): the input over [`Self::expected_output_files`], at least the
    /// target and at most [`Self::write_max_file_size`]. Java adds 5 KB per split
    /// (`SPLIT_OVERHEAD`) because it packs whole files and row groups into splits; the
    /// splits here are cut between rows, where that overhead would only take
    /// (n − 1) × 5 KB from the last file.
    pub(crate) fn input_split_size(&self, input: u64) -> u64 {
        let estimated = input / self.expected_output_files(input);
        if estimated < self.target {
            self.target
        } else {
            estimated.min(self.write_max_file_size())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1_000_000;

    #[test]
    fn defaults_are_javas_ratios() {
        let s = FileRewriteSizes::new(200_000, None, None);
        assert_eq!((s.min, s.max), (150_000, 360_000));
        assert_eq!(s.write_max_file_size(), 280_000);
        let s = FileRewriteSizes::new(200_000, Some(10), Some(300_000));
        assert_eq!(
            (s.min, s.max, s.write_max_file_size()),
            (10, 300_000, 250_000)
        );
    }

    /// Java's documented example: 10.1 GB at a 1 GB target is 10 files of 1.01 GB, not
    /// 11 with one of 0.1 GB; a remainder above the minimum is a file of its own; one
    /// that would push the others past 110 % of the target is one too.
    #[test]
    fn expected_output_files_round_away_small_remainders() {
        let s = FileRewriteSizes::new(1000 * MB, None, None);
        assert_eq!(s.expected_output_files(10_100 * MB), 10);
        assert_eq!(s.expected_output_files(10_800 * MB), 11);
        assert_eq!(s.expected_output_files(500 * MB), 1);
        assert_eq!(s.expected_output_files(1000 * MB), 1);
        // 1.05 × target: one file of 1.05; 1.2 × target: 1.2 over one file passes 110 %,
        // so two files (the remainder, 0.2, below the minimum, goes in a file anyway)
        assert_eq!(s.expected_output_files(1050 * MB), 1);
        assert_eq!(s.expected_output_files(1200 * MB), 2);
        // 8.45 × target (a 1.69 MB file at a 200 KB target): 8 files of 1.056 × target
        let s = FileRewriteSizes::new(200_000, None, None);
        assert_eq!(s.expected_output_files(1_690_000), 8);
        assert_eq!(s.input_split_size(1_690_000), 1_690_000 / 8);
    }

    #[test]
    fn split_sizes_stay_between_target_and_write_max() {
        let s = FileRewriteSizes::new(200_000, None, None);
        // two files for 1.2 × target: splits of the target, the rest in the second
        assert_eq!(s.input_split_size(240_000), 200_000);
        assert_eq!(s.input_split_size(100_000), 200_000);
        // one file of 1.09 × target
        assert_eq!(s.input_split_size(218_000), 218_000);
        // under a tight maximum (writer's maximum 1.025 × target) 8.15 × target is 8
        // files of 1.019 × target, 8.2 × target 9 files (1.025 would reach the maximum)
        let tight = FileRewriteSizes::new(200_000, Some(150_000), Some(210_000));
        assert_eq!(tight.write_max_file_size(), 205_000);
        assert_eq!(tight.expected_output_files(1_630_000), 8);
        assert_eq!(tight.input_split_size(1_630_000), 203_750);
        assert_eq!(tight.expected_output_files(1_640_000), 9);
        assert_eq!(tight.input_split_size(1_640_000), 200_000);
    }

    /// A single file too large is rewritten alone (Java's `tooMuchContent` asks for no
    /// second file); a single small file is not; two files need more than the target or
    /// `min-input-files` of them.
    #[test]
    fn groups_worth_rewriting() {
        let s = FileRewriteSizes::new(200_000, None, None);
        assert!(s.worth_rewriting(1, 3_400_000, 5));
        assert!(!s.worth_rewriting(1, 100_000, 5));
        assert!(!s.worth_rewriting(1, 100_000, 1));
        assert!(s.worth_rewriting(2, 200_001, 5));
        assert!(!s.worth_rewriting(2, 200_000, 5));
        assert!(s.worth_rewriting(5, 5_000, 5));
    }
}
