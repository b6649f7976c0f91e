//! The position deletes of one data file as a scan applies them: the deleted positions
//! merged from all its position delete files and deletion vectors, whether they are
//! fragmented, and (built on first use) one bit per row of the file telling whether the
//! row is live.
//!
//! Source of the rules: Iceberg spec, "Scan Planning" (which delete files apply) and
//! "Position Delete Files" / "Deletion Vectors" (positions are 0-based row ordinals in
//! the data file). Working all of this out iterates every deleted position (a tenth of
//! a 1.5 M-row file: 150,000 of them, about 1 ms per pass), so a session keeps the
//! result per data file and set of delete files in its
//! [`PositionDeleteCache`](super::PositionDeleteCache): delete files are immutable, so
//! the same files always give the same answer.

use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::BooleanBufferBuilder;
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::parquet::arrow::arrow_reader::RowSelection;
use roaring::RoaringTreemap;

use super::row_selection;
use crate::error::{Error, Result};

/// A file's position deletes are *fragmented* when they form more than one run of
/// consecutive deleted rows per this many rows of the file on average. Then no Parquet
/// page (at most 20,000 rows as DataFusion writes them, usually fewer) and no decoded
/// batch (8,192 rows) is deleted whole, so a row selection skips no I/O, while its
/// cost grows with the number of runs (DataFusion 55 and parquet 59 split and re-count
/// the file's selectors for every row group). Chosen by measurement: see
/// `benches/README.md`, "Fragmented position deletes and deletion vectors".
pub const ROWS_PER_RUN_FRAGMENTED: u64 = 4096;

/// The position deletes of one data file, as planned (cheap to clone: shared parts).
#[derive(Debug, Clone)]
pub struct PositionDeletes {
    /// The deleted positions, all below the file's row count, at least one.
    pub deleted: Arc<RoaringTreemap>,
    /// The file's row count (`record_count`).
    pub total_rows: u64,
    /// Whether they are fragmented (see [`ROWS_PER_RUN_FRAGMENTED`]).
    pub fragmented: bool,
    /// One bit per row, set when the row is live; built by the first scan that asks
    /// (fragmented deletes only, see [`PositionDeletes::live_rows`]).
    live: Arc<OnceLock<BooleanBuffer>>,
}

impl PositionDeletes {
    /// The deletes `deleted` (non-empty, all below `total_rows`) of a file of
    /// `total_rows` rows, fragmented or not (see [`ROWS_PER_RUN_FRAGMENTED`]).
    pub fn new(deleted: RoaringTreemap, total_rows: u64) -> Self {
        let fragmented = runs(&deleted).saturating_mul(ROWS_PER_RUN_FRAGMENTED) > total_rows;
        Self {
            deleted: Arc::new(deleted),
            total_rows,
            fragmented,
            live: Arc::new(OnceLock::new()),
        }
    }

    /// The surviving rows as a Parquet row selection.
    ///
    /// Errors: see [`row_selection`].
    pub fn selection(&self, data_file_path: &str) -> Result<RowSelection> {
        row_selection(&self.deleted, self.total_rows, data_file_path)
    }

    /// One bit per row of the file, set when the row is live (length `total_rows`).
    /// Fragmented deletes build them on the first call and share them with every clone
    /// after it (a session cache counts their bits from the start); others build them
    /// per call (a cache counts none for them: kept, they would be held uncounted).
    ///
    /// Errors: see [`live_rows`].
    pub fn live_rows(&self) -> Result<BooleanBuffer> {
        if let Some(live) = self.live.get() {
            return Ok(live.clone());
        }
        let live = live_rows(&self.deleted, self.total_rows)?;
        if !self.fragmented {
            return Ok(live);
        }
        // another scan may have built it meanwhile: either is the same
        Ok(self.live.get_or_init(|| live).clone())
    }

    /// Estimated bytes held: the positions, and the live-row bits once built or when
    /// `with_live_rows` (a cache counts them before they are built).
    pub fn estimated_bytes(&self, with_live_rows: bool) -> u64 {
        let bits = if with_live_rows || self.live.get().is_some() {
            self.total_rows.div_ceil(8)
        } else {
            0
        };
        self.deleted.serialized_size() as u64 + bits
    }
}

/// The number of runs of consecutive positions in `deleted`.
pub fn runs(deleted: &RoaringTreemap) -> u64 {
    let mut runs = 0;
    let mut next = None;
    for p in deleted.iter() {
        if next != Some(p) {
            runs += 1;
        }
        next = p.checked_add(1);
    }
    runs
}

/// One bit per row of a file of `total_rows` rows, set unless the row's position is in
/// `deleted`.
///
/// Errors: [`crate::ErrorKind::InvalidData`] for a deleted position at or beyond
/// `total_rows`; [`crate::ErrorKind::Unsupported`] for more rows than memory can address.
pub fn live_rows(deleted: &RoaringTreemap, total_rows: u64) -> Result<BooleanBuffer> {
    let rows = usize::try_from(total_rows).map_err(|_| {
        Error::unsupported(format!(
            "a data file of {total_rows} rows (more than this machine addresses)"
        ))
    })?;
    if let Some(max) = deleted.max().filter(|m| *m >= total_rows) {
        return Err(Error::invalid_data(format!(
            "deleted position {max} of a file of {total_rows} rows"
        )));
    }
    let mut live = BooleanBufferBuilder::new(rows);
    live.append_n(rows, true);
    for p in deleted.iter() {
        // below total_rows (checked above), so it fits in usize
        live.set_bit(p as usize, false);
    }
    Ok(live.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_fragmentation() {
        let d: RoaringTreemap = [1u64, 2, 3, 7, 9, 10].into_iter().collect();
        assert_eq!(runs(&d), 3);
        assert_eq!(runs(&RoaringTreemap::new()), 0);
        // 3 runs in 12,288 rows: one per 4,096 rows is not more than one per 4,096
        assert!(!PositionDeletes::new(d.clone(), 3 * ROWS_PER_RUN_FRAGMENTED).fragmented);
        assert!(PositionDeletes::new(d, 3 * ROWS_PER_RUN_FRAGMENTED - 1).fragmented);
    }

    #[test]
    fn live_rows_are_built_once_and_shared_by_clones() {
        let deletes = PositionDeletes::new([0u64, 3, 4].into_iter().collect(), 6);
        assert_eq!(
            deletes.estimated_bytes(false),
            deletes.deleted.serialized_size() as u64
        );
        let copy = deletes.clone();
        let live = copy.live_rows().unwrap();
        assert_eq!(
            live.iter().collect::<Vec<_>>(),
            [false, true, true, false, false, true]
        );
        // the original sees the bits its clone built (the same buffer)
        assert!(deletes.live.get().is_some());
        assert_eq!(
            deletes.live_rows().unwrap().values().as_ptr(),
            live.values().as_ptr()
        );
        assert_eq!(
            deletes.estimated_bytes(false),
            deletes.deleted.serialized_size() as u64 + 1
        );
    }

    #[test]
    fn a_position_beyond_the_file_is_an_error() {
        let err = live_rows(&[3u64, 10].into_iter().collect(), 10).unwrap_err();
        assert!(
            err.to_string()
                .contains("deleted position 10 of a file of 10 rows"),
            "{err}"
        );
        let deletes = PositionDeletes::new([9u64].into_iter().collect(), 9);
        assert!(deletes.live_rows().is_err());
    }
}
