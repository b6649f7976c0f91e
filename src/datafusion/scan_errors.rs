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
//! `Parquet error:` prefix once) or [`ErrorKind::Io`] for storage failures. Errors that
//! already carry an icefloe [`Error`] (they name the file) and errors that are not about
//! the file pass unchanged: resources exhausted, a cancelled query, and an expression that
//! fails on the values — a projection or filter DataFusion evaluates inside the scan
//! (`1/0`, `CAST(s AS INT)` of `'a'`; [`is_expression_error`]), which the file is not to
//! blame for. A panic of the decoders on a corrupt page ends the file's stream with such
//! an error too.

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

/// Whether `e` is an error of evaluating an expression on values read (division by zero,
/// overflow, a value that does not cast or parse, a compute kernel refusing its input):
/// the projections and filters DataFusion pushes into the scan raise these, reading a
/// Parquet file does not (its errors are Parquet, I/O and external ones).
fn is_expression_error(e: &ArrowError) -> bool {
    matches!(
        e,
        ArrowError::DivideByZero
            | ArrowError::ArithmeticOverflow(_)
            | ArrowError::CastError(_)
            | ArrowError::ParseError(_)
            | ArrowError::ComputeError(_)
    )
}

/// `e`, naming the data file `described` (see the module docs).
pub(crate) fn name_file(e: DataFusionError, described: &str) -> DataFusionError {
    if holds_icefloe_error(&e) {
        return e;
    }
    if let DataFusionError::ArrowError(inner, _) = &e {
        if is_expression_error(inner) {
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

/// The error for a panic of the `parquet`/`arrow` decoders (caught) on the data file
/// `described`.
fn decoder_panic(panic: &(dyn std::any::Any + Send), described: &str) -> DataFusionError {
    Error::invalid_data(format!(
        "cannot read data file {described}: the Parquet decoder failed on it ({})",
        crate::error::panic_message(panic)
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
}

impl NamedFileMorselizer {
    /// Wrap `inner` (DataFusion's Parquet morselizer).
    pub fn new(inner: Box<dyn Morselizer>, locations: Locations) -> Self {
        Self { inner, locations }
    }
}

impl Morselizer for NamedFileMorselizer {
    fn plan_file(&self, file: PartitionedFile) -> DFResult<Box<dyn MorselPlanner>> {
        let described = described(&self.locations, &file);
        let inner = self
            .inner
            .plan_file(file)
            .map_err(|e| name_file(e, &described))?;
        Ok(Box::new(NamedFilePlanner { inner, described }))
    }
}

#[derive(Debug)]
struct NamedFilePlanner {
    inner: Box<dyn MorselPlanner>,
    described: Arc<str>,
}

fn wrap_planner(inner: Box<dyn MorselPlanner>, described: &Arc<str>) -> Box<dyn MorselPlanner> {
    Box::new(NamedFilePlanner {
        inner,
        described: Arc::clone(described),
    })
}

impl MorselPlanner for NamedFilePlanner {
    fn plan(self: Box<Self>) -> DFResult<Option<MorselPlan>> {
        let described = self.described;
        let inner = self.inner;
        let planned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || inner.plan()))
            .unwrap_or_else(|panic| Err(decoder_panic(panic.as_ref(), &described)));
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
                }) as Box<dyn Morsel>
            })
            .collect();
        let planners = plan
            .take_ready_planners()
            .into_iter()
            .map(|p| wrap_planner(p, &described))
            .collect();
        let pending = plan.take_pending_planner();
        let mut named = MorselPlan::new()
            .with_morsels(morsels)
            .with_planners(planners);
        if let Some(pending) = pending {
            let described = Arc::clone(&described);
            let pending = std::panic::AssertUnwindSafe(pending).catch_unwind();
            named.set_pending_planner(pending.map(move |result| match result {
                Ok(Ok(p)) => Ok(wrap_planner(p, &described)),
                Ok(Err(e)) => Err(name_file(e, &described)),
                Err(panic) => Err(decoder_panic(panic.as_ref(), &described)),
            }));
        }
        Ok(Some(named))
    }
}

#[derive(Debug)]
struct NamedFileMorsel {
    inner: Box<dyn Morsel>,
    described: Arc<str>,
}

impl Morsel for NamedFileMorsel {
    fn into_stream(
        self: Box<Self>,
    ) -> futures::stream::BoxStream<'static, DFResult<datafusion::arrow::array::RecordBatch>> {
        let described = self.described;
        // the `parquet` and `arrow` decoders panic on some corrupt pages (e.g. a DATA_PAGE
        // header without its data_page_header, a validity bitmap shorter than its
        // values): caught, the panic ends this file's stream with an error naming it
        std::panic::AssertUnwindSafe(self.inner.into_stream())
            .catch_unwind()
            .map(move |r| match r {
                Ok(r) => r.map_err(|e| name_file(e, &described)),
                Err(panic) => Err(decoder_panic(panic.as_ref(), &described)),
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::error::ArrowError;
    use datafusion::error::DataFusionError;
    use datafusion::parquet::errors::ParquetError;

    use super::{name_file, parquet_cause};
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
}
