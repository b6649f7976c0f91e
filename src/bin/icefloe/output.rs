//! Writing query results: aligned table, CSV, newline-delimited JSON or Parquet, to
//! stdout or to the file given with `-o`.
//!
//! A file given with `-o` is written to a temporary file in the same directory and
//! renamed over FILE only when every statement succeeded ([`Output::finish`]), so a
//! failing run leaves an existing FILE as it was and never a truncated one. How values
//! are written in each format is described in [`crate::render`].

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::ValueEnum;
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::FormatOptions;
use datafusion::arrow::util::pretty::pretty_format_batches_with_options;
use datafusion::common::DFSchema;
use datafusion::dataframe::DataFrame;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::physical_plan::execute_stream;
use datafusion::physical_plan::stream::RecordBatchReceiverStreamBuilder;
use futures::StreamExt;
use icefloe::datafusion::snapshot_metric::committed_snapshots;
use tempfile::NamedTempFile;

use crate::render;
use crate::CliError;

/// How results are printed (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned table.
    Table,
    /// CSV with a header line.
    Csv,
    /// Newline-delimited JSON: one object per row.
    Json,
    /// Parquet file (needs `-o FILE`).
    Parquet,
}

impl Format {
    /// The format `-o FILE` implies when `--format` is not given: by the file's
    /// extension (`.parquet`, `.csv`, `.json`/`.ndjson`/`.jsonl`, any case), else
    /// [`Format::Table`] (also without `-o`).
    pub fn for_output_file(path: Option<&Path>) -> Format {
        let ext = path
            .and_then(|p| p.extension())
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("parquet") => Format::Parquet,
            Some("csv") => Format::Csv,
            Some("json" | "ndjson" | "jsonl") => Format::Json,
            _ => Format::Table,
        }
    }
}

/// What a statement produced.
#[derive(Debug, Clone, Copy, Default)]
pub struct Written {
    /// Rows in the result (`None`: the statement returns no columns, e.g. DDL).
    pub rows: Option<usize>,
}

/// Where results go. Create one per run and feed it every statement's result.
pub struct Output {
    format: Format,
    target: Target,
    /// Print each Iceberg scan's pruning funnel to stderr (`--explain-pruning`).
    pruning_report: bool,
    /// Show a progress line on stderr for slow queries.
    progress: bool,
    /// The CSV text of NULL.
    null_string: String,
}

/// A file being written: a temporary file beside the destination, renamed at the end.
struct PendingFile {
    path: PathBuf,
    temp: NamedTempFile,
}

enum Target {
    /// Text formats: stdout or a file, created once and written statement after statement.
    Text {
        writer: Box<dyn Write + Send>,
        file: Option<PendingFile>,
        /// Whether a table was printed already (tables are separated by a blank line).
        printed_table: bool,
    },
    /// Parquet: one file holds one result, so the writer is created at the first result.
    Parquet {
        file: PendingFile,
        writer: Option<Box<ArrowWriter<BufWriter<File>>>>,
    },
}

impl Output {
    /// Output in `format` to `path`, or to stdout without one.
    pub fn new(format: Format, path: Option<&Path>) -> Result<Self, CliError> {
        let target = match (format, path) {
            (Format::Parquet, None) => {
                return Err(CliError::new(
                    "--format parquet writes a binary file: name it with -o FILE",
                ))
            }
            (Format::Parquet, Some(path)) => Target::Parquet {
                file: PendingFile::new(path)?,
                writer: None,
            },
            (_, Some(path)) => {
                let file = PendingFile::new(path)?;
                let handle = file.temp.reopen().map_err(|e| file.error(e))?;
                Target::Text {
                    writer: Box::new(BufWriter::new(handle)),
                    file: Some(file),
                    printed_table: false,
                }
            }
            (_, None) => Target::Text {
                writer: Box::new(BufWriter::new(io::stdout())),
                file: None,
                printed_table: false,
            },
        };
        Ok(Self {
            format,
            target,
            pruning_report: false,
            progress: false,
            null_string: String::new(),
        })
    }

    /// Print the pruning funnel of each Iceberg scan to stderr after each statement.
    pub fn with_pruning_report(mut self, enabled: bool) -> Self {
        self.pruning_report = enabled;
        self
    }

    /// Show a progress line on stderr while a query runs longer than a second.
    pub fn with_progress(mut self, enabled: bool) -> Self {
        self.progress = enabled;
        self
    }

    /// The CSV text of NULL (`--null-string`).
    pub fn with_null_string(mut self, null: impl Into<String>) -> Self {
        self.null_string = null.into();
        self
    }

    /// Run `df` and write its result. Statements without output columns (DDL such as
    /// `CREATE EXTERNAL TABLE`) are run but print nothing.
    pub async fn write_dataframe(&mut self, df: DataFrame) -> Result<Written, CliError> {
        let task_ctx = Arc::new(df.task_ctx());
        let scanned = if self.pruning_report {
            crate::pruning::iceberg_scans(df.logical_plan())
        } else {
            vec![]
        };
        if matches!(self.format, Format::Json | Format::Parquet) {
            unique_names(df.schema(), self.format)?;
        }
        let plan = df.create_physical_plan().await?;
        let stream = on_runtime(execute_stream(Arc::clone(&plan), task_ctx)?);
        let progress = self
            .progress
            .then(|| crate::progress::Progress::start(Arc::clone(&plan)));
        let written = self.write_stream(stream).await;
        drop(progress);
        let written = written?;
        for (id, staged) in committed_snapshots(plan.as_ref()) {
            if staged {
                eprintln!(
                    "staged snapshot {id} (write-audit-publish: main is unchanged until \
                     published)"
                );
            } else {
                eprintln!("committed snapshot {id}");
            }
        }
        if self.pruning_report {
            for line in crate::pruning::report(&plan, &scanned) {
                eprintln!("{line}");
            }
        }
        Ok(written)
    }

    /// Write a result computed by the shell itself (`\d`).
    pub async fn write_batch(&mut self, batch: RecordBatch) -> Result<Written, CliError> {
        let schema = batch.schema();
        let stream =
            datafusion::physical_plan::memory::MemoryStream::try_new(vec![batch], schema, None)?;
        self.write_stream(Box::pin(stream)).await
    }

    async fn write_stream(
        &mut self,
        mut stream: SendableRecordBatchStream,
    ) -> Result<Written, CliError> {
        let schema = stream.schema();
        if schema.fields().is_empty() {
            while let Some(batch) = stream.next().await {
                batch?;
            }
            return Ok(Written { rows: None });
        }
        let mut rows = 0;
        match (&mut self.target, self.format) {
            (
                Target::Text {
                    writer,
                    printed_table,
                    ..
                },
                Format::Table,
            ) => {
                let mut batches = Vec::new();
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    rows += batch.num_rows();
                    batches.push(render::uuids_as_text(&batch)?);
                }
                if batches.is_empty() {
                    batches.push(RecordBatch::new_empty(render::uuids_as_text_schema(
                        &schema,
                    )));
                }
                let options = FormatOptions::default()
                    .with_display_error(true)
                    .with_null("NULL");
                let table = pretty_format_batches_with_options(&batches, &options)?;
                if *printed_table {
                    writeln!(writer)?;
                }
                writeln!(writer, "{table}")?;
                *printed_table = true;
            }
            (Target::Text { writer, .. }, Format::Csv) => {
                let header: Vec<String> = schema
                    .fields()
                    .iter()
                    .map(|f| render::csv_field(Some(f.name()), &self.null_string))
                    .collect();
                writeln!(writer, "{}", header.join(","))?;
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    rows += batch.num_rows();
                    write_csv(writer, &batch, &self.null_string)?;
                }
            }
            (Target::Text { writer, .. }, Format::Json) => {
                let mut text = String::new();
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    rows += batch.num_rows();
                    text.clear();
                    render::write_json_rows(&mut text, &batch)?;
                    writer.write_all(text.as_bytes())?;
                }
            }
            (Target::Parquet { file, writer }, _) => {
                if writer.is_some() {
                    return Err(CliError::new(format!(
                        "a Parquet file holds one result, but more than one statement \
                         returned rows for {}",
                        file.path.display()
                    )));
                }
                let parquet = writer.insert(parquet_writer(file, schema)?);
                while let Some(batch) = stream.next().await {
                    let batch = batch?;
                    rows += batch.num_rows();
                    parquet.write(&batch)?;
                }
            }
            (Target::Text { .. }, Format::Parquet) => {
                unreachable!("Output::new sends Parquet to a file")
            }
        }
        self.flush()?;
        Ok(Written { rows: Some(rows) })
    }

    /// Flush text output (the REPL calls this after every statement).
    pub fn flush(&mut self) -> Result<(), CliError> {
        if let Target::Text { writer, .. } = &mut self.target {
            writer.flush()?;
        }
        Ok(())
    }

    /// Finish the output: flush text, write the Parquet footer, and move a file given
    /// with `-o` into place.
    pub fn finish(self) -> Result<(), CliError> {
        match self.target {
            Target::Text {
                mut writer, file, ..
            } => {
                writer.flush()?;
                drop(writer);
                if let Some(file) = file {
                    file.persist()?;
                }
            }
            Target::Parquet {
                writer: Some(writer),
                file,
            } => {
                writer.close()?;
                file.persist()?;
            }
            Target::Parquet { file, writer: None } => {
                return Err(CliError::new(format!(
                    "no statement returned rows to write to {}",
                    file.path.display()
                )))
            }
        }
        Ok(())
    }

    /// Whether this output can serve an interactive session.
    pub fn supports_repl(&self) -> bool {
        matches!(self.target, Target::Text { .. })
    }
}

/// A result written as JSON objects or a Parquet file has a name per column: two columns
/// of one name (`SELECT * FROM x JOIN y` with `a` in both) would be one JSON key (whose
/// last value most readers keep) or a Parquet file reading back as one column.
///
/// A struct value (at any depth: in a struct, a list element, a map's keys or values)
/// is a JSON object or a Parquet group too, so its field names are checked alike
/// (`SELECT {a: 1, a: 2}`).
///
/// Errors: the name given twice, with the columns' qualifiers (or the struct column's
/// path), before the statement runs.
fn unique_names(schema: &DFSchema, format: Format) -> Result<(), CliError> {
    let mut seen: HashMap<&str, Vec<String>> = HashMap::new();
    let mut repeated: Vec<&str> = vec![];
    for (qualifier, field) in schema.iter() {
        let name = field.name().as_str();
        let columns = seen.entry(name).or_default();
        columns.push(match qualifier {
            Some(q) => format!("{q}.{name}"),
            None => name.to_string(),
        });
        if columns.len() == 2 {
            repeated.push(name);
        }
    }
    let what = match format {
        Format::Parquet => "a Parquet file needs",
        _ => "JSON objects need",
    };
    let Some(name) = repeated.first() else {
        for (_, field) in schema.iter() {
            if let Some((path, name)) = repeated_field(field.name(), field.data_type()) {
                return Err(CliError::new(format!(
                    "the struct '{path}' of the result has more than one field named \
                     '{name}'; {what} a name per field: name them apart"
                )));
            }
        }
        return Ok(());
    };
    let columns = seen.get(name).map(|c| c.join(", ")).unwrap_or_default();
    Err(CliError::new(format!(
        "the result has more than one column named '{name}' ({columns}); {what} a name \
         per column: name them apart (SELECT … AS {name}_1, …)"
    )))
}

/// The first struct inside a value of type `data_type` (of the column or field at
/// `path`) with two fields of one name: its path (`s`, `l.element`, `m.value.x`) and
/// the name.
fn repeated_field(path: &str, data_type: &DataType) -> Option<(String, String)> {
    match data_type {
        DataType::Struct(fields) => {
            let mut seen = std::collections::HashSet::new();
            if let Some(f) = fields.iter().find(|f| !seen.insert(f.name().as_str())) {
                return Some((path.to_string(), f.name().clone()));
            }
            fields
                .iter()
                .find_map(|f| repeated_field(&format!("{path}.{}", f.name()), f.data_type()))
        }
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => repeated_field(&format!("{path}.{}", f.name()), f.data_type()),
        DataType::Dictionary(_, value) => repeated_field(path, value),
        DataType::RunEndEncoded(_, values) => repeated_field(path, values.data_type()),
        _ => None,
    }
}

/// `stream` polled by a task of its own, so that a plan computing inside a single poll
/// never keeps the caller (and its Ctrl-C) waiting; dropping the result stops the task.
fn on_runtime(mut stream: SendableRecordBatchStream) -> SendableRecordBatchStream {
    let mut builder = RecordBatchReceiverStreamBuilder::new(stream.schema(), 2);
    let tx = builder.tx();
    builder.spawn(async move {
        while let Some(batch) = stream.next().await {
            if tx.send(batch).await.is_err() {
                break;
            }
        }
        Ok(())
    });
    builder.build()
}

fn write_csv(writer: &mut dyn Write, batch: &RecordBatch, null: &str) -> Result<(), CliError> {
    let schema = batch.schema();
    let mut line = String::new();
    for row in 0..batch.num_rows() {
        line.clear();
        for (i, (field, column)) in schema.fields().iter().zip(batch.columns()).enumerate() {
            if i > 0 {
                line.push(',');
            }
            let cell = render::csv_cell(column.as_ref(), field, row)?;
            line.push_str(&render::csv_field(cell.as_deref(), null));
        }
        line.push('\n');
        writer.write_all(line.as_bytes())?;
    }
    Ok(())
}

impl PendingFile {
    fn new(path: &Path) -> Result<Self, CliError> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".icefloe-output-");
        #[cfg(unix)]
        {
            // as a newly created file would be (the umask applies), or the old file's mode
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path).map_or(0o666, |m| m.permissions().mode());
            builder.permissions(std::fs::Permissions::from_mode(mode));
        }
        let temp = builder.tempfile_in(&dir).map_err(|e| {
            CliError::from(e).context(format!("cannot create output file {}", path.display()))
        })?;
        crate::interrupt::remove_on_exit(temp.path().to_path_buf());
        Ok(Self {
            path: path.to_path_buf(),
            temp,
        })
    }

    fn error(&self, e: io::Error) -> CliError {
        CliError::from(e).context(format!("cannot write output file {}", self.path.display()))
    }

    fn persist(self) -> Result<(), CliError> {
        let path = self.path;
        self.temp.persist(&path).map_err(|e| {
            CliError::from(e.error).context(format!("cannot write output file {}", path.display()))
        })?;
        Ok(())
    }
}

fn parquet_writer(
    file: &PendingFile,
    schema: SchemaRef,
) -> Result<Box<ArrowWriter<BufWriter<File>>>, CliError> {
    let handle = BufWriter::new(file.temp.reopen().map_err(|e| file.error(e))?);
    Ok(Box::new(ArrowWriter::try_new(handle, schema, None)?))
}
