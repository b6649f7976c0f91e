//! Every error from opening or decoding a data file names the file.
//!
//! icefloe's Parquet reader ([`file_reader`](super::file_reader)) names the file in the
//! errors it raises itself (I/O, footers, sizes, column types). Errors raised further in,
//! by DataFusion's Parquet opener and the `parquet` crate's page decoding (a corrupt
//! page header, a dictionary index out of range, a truncated column chunk), carry no path:
//! "Parquet error: Parquet error: Unexpected end of stream" tells no one which of a
//! table's thousand files to look at. [`NamedFileMorselizer`] wraps what DataFusion's
//! `ParquetSource` hands the scan (`create_morselizer`; its `create_file_opener` is
//! unsupported in DataFusion 55) and gives every such error the file's location (as the manifest
//! records it, and where it was read from when the table was moved): an [`Error`] of kind
//! [`ErrorKind::InvalidData`] ("cannot read data file '…': Parquet error: …", the
//! `Parquet error:` prefix once) or [`ErrorKind::Io`] for storage failures. Only errors of
//! reading and decoding the file are so named ([`is_decoding_error`]): errors that
//! already carry an icefloe [`Error`] (they name the file) and errors that are not about
//! the file pass unchanged: resources exhausted, a cancelled query, and any Arrow error of
//! an expression failing on the values — a projection or filter DataFusion evaluates
//! inside the scan (`1/0`, `CAST(s AS INT)` of `'a'`, a decimal too large for the
//! precision an `INSERT`'s cast gives it, a comparison of arrays of other types), which
//! the file is not to blame for. A panic of the decoders on a corrupt page ends the
//! file's stream with such an error too; when the scan also computes expressions pushed
//! into it (anything but reading columns: `m[named_struct(…)]`, whose DataFusion 55
//! `get_field` panics on maps with struct keys), the panic may be theirs, and the error
//! says so rather than calling the file corrupt ([`scan_panic`]).

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::error::ArrowError;
use datafusion::common::Result as DFResult;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::error::DataFusionError;
use datafusion::parquet::errors::ParquetError;
use datafusion_datasource::morsel::{Morsel, MorselPlan, MorselPlanner, Morselizer};
use futures::{FutureExt, StreamExt};
use object_store::path::Path;

use super::error_chain::holds_icefloe_error;
use crate::error::{Error, ErrorKind};

/// How data-file locations are shown: the store's URL and, for moved tables, the
/// locations the manifests record.
#[derive(Debug, Clone)]
pub(crate) struct Locations {
    /// The object store's URL (`file:///`, `s3://bucket`).
    pub store_url: String,
    /// Object path → location as recorded in the manifest (where the two differ).
    pub recorded: Arc<HashMap<Path, String>>,
}

impl Locations {
    /// The location of `path`, quoted: as recorded, plus where it was read from when that
    /// differs.
    pub fn describe(&self, path: &Path) -> String {
        let read_from = if self.store_url.starts_with("file:") {
            format!("/{path}")
        } else {
            format!("{}/{path}", self.store_url.trim_end_matches('/'))
        };
        match self.recorded.get(path) {
            Some(recorded) if same_local_file(recorded, &read_from) => format!("'{recorded}'"),
            Some(recorded) => format!("'{recorded}' (read from '{read_from}')"),
            None => format!("'{read_from}'"),
        }
    }
}

/// Whether the recorded location `recorded` is the local path `read_from` (`/a`,
/// `file:/a`, `file:///a`).
fn same_local_file(recorded: &str, read_from: &str) -> bool {
    let local = recorded
        .strip_prefix("file://")
        .or_else(|| recorded.strip_prefix("file:"))
        .unwrap_or(recorded);
    local == read_from
}

/// A Parquet error's text as our messages show it: `Parquet error: ` once, however often
/// the parquet crate and DataFusion nested it, and without the reader's own "Failed to
/// fetch metadata for file <path>: " (the message names the file itself, as the user can
/// open it; the store path there lacks its leading `/`).
pub(crate) fn parquet_cause(e: &ParquetError) -> String {
    let mut text = e.to_string();
    loop {
        let before = text.len();
        text = text.replace("Parquet error: Parquet error: ", "Parquet error: ");
        if let Some(start) = text.find("Failed to fetch metadata for file ") {
            if let Some(end) = text[start..].find(": ") {
                text.replace_range(start..start + end + 2, "");
            }
        }
        if text.len() == before {
            break;
        }
    }
    let text = text.strip_prefix("Parquet error: ").unwrap_or(&text);
    format!("Parquet error: {text}")
}

/// Whether `e`, an Arrow error out of a data file's stream, is one of reading or decoding
/// the file (a Parquet error, I/O, an external error of the store): the `parquet`
/// crate's decoders raise these. Every other Arrow error (division by zero, overflow, a
/// value that does not cast or parse or does not fit a decimal's precision, a compute
/// kernel refusing its input) is raised by the projections and filters DataFusion
/// pushes into the scan, evaluated on values read, which the file is not to blame for.
fn is_decoding_error(e: &ArrowError) -> bool {
    matches!(
        e,
        ArrowError::ParquetError(_) | ArrowError::IoError(..) | ArrowError::ExternalError(_)
    )
}

/// `e`, naming the data file `described` (see the module docs).
pub(crate) fn name_file(e: DataFusionError, described: &str) -> DataFusionError {
    if holds_icefloe_error(&e) {
        return e;
    }
    if let DataFusionError::ArrowError(inner, _) = &e {
        if !is_decoding_error(inner) {
            return e;
        }
    }
    let (kind, detail) = match e {
        DataFusionError::Context(context, inner) => {
            return DataFusionError::Context(context, Box::new(name_file(*inner, described)));
        }
        // "Parquet error: " once (DataFusion's prefix and the parquet crate's own)
        DataFusionError::ParquetError(inner) => (ErrorKind::InvalidData, parquet_cause(&inner)),
        DataFusionError::ArrowError(inner, _) => (ErrorKind::InvalidData, inner.to_string()),
        DataFusionError::ObjectStore(inner) => (ErrorKind::Io, inner.to_string()),
        DataFusionError::IoError(inner) => (ErrorKind::Io, inner.to_string()),
        DataFusionError::External(inner) => (ErrorKind::InvalidData, inner.to_string()),
        other => return other,
    };
    Error::new(kind, format!("cannot read data file {described}: {detail}")).into()
}

/// The error for a panic (caught) of the stream of the data file `described`: of the
/// `parquet`/`arrow` decoders when the scan only reads columns (`computes` false), a
/// corrupt file ([`ErrorKind::InvalidData`]); when the scan also computes expressions
/// pushed into it, the panic may be theirs (DataFusion 55's `get_field` on a map with
/// struct keys panics so), and the error ([`ErrorKind::DataFusion`]) says that, naming
/// the file it was reading without calling it corrupt.
fn scan_panic(
    panic: &(dyn std::any::Any + Send),
    described: &str,
    computes: bool,
) -> DataFusionError {
    let message = crate::error::panic_message(panic);
    if computes {
        return Error::new(
            ErrorKind::DataFusion,
            format!(
                "an expression the query computes in the scan of data file {described} \
                 panicked, or the Parquet decoder did ({message})"
            ),
        )
        .into();
    }
    Error::invalid_data(format!(
        "cannot read data file {described}: the Parquet decoder failed on it ({message})"
    ))
    .into()
}

/// The location of one data file as errors show it.
fn described(locations: &Locations, file: &PartitionedFile) -> Arc<str> {
    locations.describe(&file.object_meta.location).into()
}

/// A `Morselizer` whose planners and morsels name their file in errors.
#[derive(Debug)]
pub(crate) struct NamedFileMorselizer {
    inner: Box<dyn Morselizer>,
    locations: Locations,
    /// Whether the scan computes expressions pushed into it (not only columns read).
    computes: bool,
}

impl NamedFileMorselizer {
    /// Wrap `inner` (DataFusion's Parquet morselizer); `computes`: whether its scan
    /// evaluates expressions pushed into it besides reading columns (see [`scan_panic`]).
    pub fn new(inner: Box<dyn Morselizer>, locations: Locations, computes: bool) -> Self {
        Self {
            inner,
            locations,
            computes,
        }
    }
}

impl Morselizer for NamedFileMorselizer {
    fn plan_file(&self, file: PartitionedFile) -> DFResult<Box<dyn MorselPlanner>> {
        let described = described(&self.locations, &file);
        let inner = self
            .inner
            .plan_file(file)
            .map_err(|e| name_file(e, &described))?;
        Ok(Box::new(NamedFilePlanner {
            inner,
            described,
            computes: self.computes,
        }))
    }
}

#[derive(Debug)]
struct NamedFilePlanner {
    inner: Box<dyn MorselPlanner>,
    described: Arc<str>,
    computes: bool,
}

fn wrap_planner(
    inner: Box<dyn MorselPlanner>,
    described: &Arc<str>,
    computes: bool,
) -> Box<dyn MorselPlanner> {
    Box::new(NamedFilePlanner {
        inner,
        described: Arc::clone(described),
        computes,
    })
}

impl MorselPlanner for NamedFilePlanner {
    fn plan(self: Box<Self>) -> DFResult<Option<MorselPlan>> {
        let described = self.described;
        let computes = self.computes;
        let inner = self.inner;
        let planned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || inner.plan()))
            .unwrap_or_else(|panic| Err(scan_panic(panic.as_ref(), &described, computes)));
        let Some(mut plan) = planned.map_err(|e| name_file(e, &described))? else {
            return Ok(None);
        };
        let morsels = plan
            .take_morsels()
            .into_iter()
            .map(|inner| {
                Box::new(NamedFileMorsel {
                    inner,
                    described: Arc::clone(&described),
                    computes,
                }) as Box<dyn Morsel>
            })
            .collect();
        let planners = plan
            .take_ready_planners()
            .into_iter()
            .map(|p| wrap_planner(p, &described, computes))
            .collect();
        let pending = plan.take_pending_planner();
        let mut named = MorselPlan::new()
            .with_morsels(morsels)
            .with_planners(planners);
        if let Some(pending) = pending {
            let described = Arc::clone(&described);
            let pending = std::panic::AssertUnwindSafe(pending).catch_unwind();
            named.set_pending_planner(pending.map(move |result| match result {
                Ok(Ok(p)) => Ok(wrap_planner(p, &described, computes)),
                Ok(Err(e)) => Err(name_file(e, &described)),
                Err(panic) => Err(scan_panic(panic.as_ref(), &described, computes)),
            }));
        }
        Ok(Some(named))
    }
}

#[derive(Debug)]
struct NamedFileMorsel {
    inner: Box<dyn Morsel>,
    described: Arc<str>,
    computes: bool,
}

impl Morsel for NamedFileMorsel {
    fn into_stream(
        self: Box<Self>,
    ) -> futures::stream::BoxStream<'static, DFResult<datafusion::arrow::array::RecordBatch>> {
        let described = self.described;
        let computes = self.computes;
        // the `parquet` and `arrow` decoders panic on some corrupt pages (e.g. a DATA_PAGE
        // header without its data_page_header, a validity bitmap shorter than its
        // values): caught, the panic ends this file's stream with an error naming it
        std::panic::AssertUnwindSafe(self.inner.into_stream())
            .catch_unwind()
            .map(move |r| match r {
                Ok(r) => r.map_err(|e| name_file(e, &described)),
                Err(panic) => Err(scan_panic(panic.as_ref(), &described, computes)),
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::error::ArrowError;
    use datafusion::error::DataFusionError;
    use datafusion::parquet::errors::ParquetError;

    use super::{name_file, parquet_cause, scan_panic};
    use crate::error::Error;

    #[test]
    fn decode_errors_name_the_file_with_one_parquet_prefix() {
        let e = DataFusionError::ParquetError(Box::new(ParquetError::General(
            "Unexpected end of stream".into(),
        )));
        let named = name_file(e, "'/t/data/a.parquet'").to_string();
        assert_eq!(
            named,
            "External error: invalid data: cannot read data file '/t/data/a.parquet': \
             Parquet error: Unexpected end of stream"
        );
        let e = DataFusionError::ParquetError(Box::new(ParquetError::EOF("eof".into())));
        assert!(name_file(e, "'/a'")
            .to_string()
            .ends_with("cannot read data file '/a': Parquet error: EOF: eof"));
    }

    #[test]
    fn parquet_causes_have_one_prefix_and_no_store_path() {
        let e = ParquetError::General(
            "Failed to fetch metadata for file tmp/x/a.parquet: Parquet error: Parquet error: \
             Empty struct has fields"
                .to_string(),
        );
        assert_eq!(parquet_cause(&e), "Parquet error: Empty struct has fields");
        let e = ParquetError::EOF("eof".to_string());
        assert_eq!(parquet_cause(&e), "Parquet error: EOF: eof");
    }

    #[test]
    fn errors_naming_the_file_or_not_about_it_pass_unchanged() {
        let own: DataFusionError = Error::invalid_data("data file '/t/a.parquet' is short").into();
        let text = own.to_string();
        assert_eq!(name_file(own, "'/t/a.parquet'").to_string(), text);
        let e = DataFusionError::ResourcesExhausted("memory".into());
        assert!(matches!(
            name_file(e, "'/a'"),
            DataFusionError::ResourcesExhausted(_)
        ));
        // an expression evaluated in the scan failed, not the file
        for inner in [
            ArrowError::DivideByZero,
            ArrowError::CastError("Cannot cast string 'a' to value of Int32 type".into()),
            ArrowError::ArithmeticOverflow("Overflow happened on: 9 * 9".into()),
        ] {
            let text = inner.to_string();
            let named = name_file(DataFusionError::ArrowError(Box::new(inner), None), "'/a'");
            let named = named.to_string();
            assert!(named.contains(&text) && !named.contains("/a"), "{named}");
        }
        // nor any other Arrow error of an expression: a decimal an INSERT's cast cannot
        // hold, a comparison of arrays of other types (a map lookup by a struct key)
        for inner in [
            ArrowError::InvalidArgumentError(
                "12345.68 is too large to store in a Decimal128 of precision 5".into(),
            ),
            ArrowError::InvalidArgumentError("Can't compare arrays of different types".into()),
        ] {
            let text = inner.to_string();
            let named = name_file(DataFusionError::ArrowError(Box::new(inner), None), "'/a'");
            let named = named.to_string();
            assert!(named.contains(&text) && !named.contains("/a"), "{named}");
        }
        // a decoding error surfacing as an Arrow error still names the file
        let e = DataFusionError::ArrowError(
            Box::new(ArrowError::ParquetError("bad page".into())),
            None,
        );
        assert!(name_file(e, "'/a'")
            .to_string()
            .contains("cannot read data file '/a'"));
        let e = DataFusionError::Context(
            "scan".into(),
            Box::new(DataFusionError::ParquetError(Box::new(
                ParquetError::General("bad page".into()),
            ))),
        );
        let named = name_file(e, "'/a'").to_string();
        assert!(
            named.contains("cannot read data file '/a': Parquet error: bad page"),
            "{named}"
        );
        assert_eq!(named.matches("Parquet error:").count(), 1, "{named}");
    }

    /// A panic in a scan that only reads columns is the decoder's, on a corrupt file; in
    /// a scan that also computes pushed expressions it may be theirs, and the error does
    /// not call the file corrupt.
    #[test]
    fn panics_are_blamed_on_the_file_only_where_the_scan_computes_nothing() {
        let panic: Box<dyn std::any::Any + Send> = Box::new("assertion failed: idx < len");
        let decoder = scan_panic(panic.as_ref(), "'/t/a.parquet'", false).to_string();
        assert!(
            decoder.contains(
                "cannot read data file '/t/a.parquet': the Parquet decoder failed on it \
                 (assertion failed: idx < len)"
            ),
            "{decoder}"
        );
        let computed = scan_panic(panic.as_ref(), "'/t/a.parquet'", true).to_string();
        assert!(
            computed.contains(
                "an expression the query computes in the scan of data file '/t/a.parquet' \
                 panicked, or the Parquet decoder did (assertion failed: idx < len)"
            ),
            "{computed}"
        );
        assert!(
            !computed.contains("cannot read") && !computed.contains("invalid data"),
            "{computed}"
        );
    }
}
