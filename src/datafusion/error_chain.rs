//! What a [`DataFusionError`] holds: the icefloe errors of its source chain, found by the
//! crate's one walk ([`crate::error::icefloe_errors`]) across DataFusion's wrappers
//! (`External`, `Shared`, `Context`, `ArrowError`/`ParquetError` holding external errors).
//! The scan's checks of what failed use it: whether an error names its file already
//! (`scan_errors`), whether it is a failed read (`expired_reads`).

use datafusion::error::DataFusionError;

use crate::error::{icefloe_errors, Error};

/// The icefloe errors in `e`'s source chain, outermost first.
pub(crate) fn icefloe_errors_in(e: &DataFusionError) -> impl Iterator<Item = &Error> {
    icefloe_errors(e)
}

/// Whether `e`'s chain holds an icefloe [`Error`] (which names its file).
pub(crate) fn holds_icefloe_error(e: &DataFusionError) -> bool {
    icefloe_errors_in(e).next().is_some()
}

/// Whether `e`'s chain holds an icefloe error of a failed read (kinds `InvalidData`,
/// `NotFound`, `Io`: [`crate::error::ErrorKind::is_read_failure`]): a file that is gone or
/// not what its manifest says.
pub(crate) fn holds_read_failure(e: &DataFusionError) -> bool {
    icefloe_errors_in(e).any(|ours| ours.kind().is_read_failure())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::error::ErrorKind;

    /// A read failure is found under DataFusion's `Shared`, `Context` and Arrow's
    /// external error, and under an icefloe error of another kind; an icefloe error of
    /// another kind alone is no read failure, and a DataFusion error without one holds none.
    #[test]
    fn read_failures_are_found_under_datafusion_wrappers() {
        let gone = || Error::not_found("data file 'd.parquet' does not exist");
        let shared = DataFusionError::Shared(Arc::new(gone().into()));
        let context = DataFusionError::Context("scan".into(), Box::new(gone().into()));
        let arrow = DataFusionError::ArrowError(
            Box::new(datafusion::arrow::error::ArrowError::ExternalError(
                Box::new(DataFusionError::from(gone())),
            )),
            None,
        );
        let under_other =
            DataFusionError::from(Error::new(ErrorKind::DataFusion, "x").with_source(gone()));
        for e in [&shared, &context, &arrow, &under_other] {
            assert!(holds_read_failure(e), "{e}");
            assert!(holds_icefloe_error(e), "{e}");
        }
        let failed_expression = DataFusionError::from(Error::invalid_argument("bad option"));
        assert!(!holds_read_failure(&failed_expression));
        assert!(holds_icefloe_error(&failed_expression));
        let plain = DataFusionError::Plan("p".into());
        assert!(!holds_read_failure(&plain));
        assert!(!holds_icefloe_error(&plain));
    }
}
