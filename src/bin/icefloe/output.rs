//! Writing query results: aligned table, CSV, newline-delimited JSON or Parquet, to
//! stdout or to the file given with `-o`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::ValueEnum;
use datafusion::arrow::csv::WriterBuilder as CsvWriterBuilder;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::json::LineDelimitedWriter;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches_with_schema;
use datafusion::dataframe::DataFrame;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::physical_plan::execute_stream;
use futures::StreamExt;

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

/// Where results go. Create one per run and feed it every statement's result.
pub struct Output {
    format: Format,
    target: Target,
    /// Print each Iceberg scan's pruning funnel to stderr (`--explain-pruning`).
    pruning_report: bool,
}

enum Target {
    /// Text formats: stdout or a file, created once and written statement after statement.
    Text {
        writer: Box<dyn Write + Send>,
        /// Whether a table was printed already (tables are separated by a blank line).
        printed_table: bool,
    },
    /// Parquet: one file holds one result, so the file is created at the first result.
    Parquet {
        path: PathBuf,
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
                path: path.to_path_buf(),
                writer: None,
            },
            (_, Some(path)) => Target::Text {
                writer: Box::new(BufWriter::new(create(path)?)),
                printed_table: false,
            },
            (_, None) => Target::Text {
                writer: Box::new(BufWriter::new(io::stdout())),
                printed_table: false,
            },
        };
        Ok(Self {
            format,
            target,
            pruning_report: false,
        })
    }

    /// Print the pruning funnel of each Iceberg scan to stderr after each statement.
    pub fn with_pruning_report(mut self, enabled: bool) -> Self {
        self.pruning_report = enabled;
        self
    }

    /// Run `df` and write its result. Statements without output columns (DDL such as
    /// `CREATE EXTERNAL TABLE`) are run but print nothing.
    pub async fn write_dataframe(&mut self, df: DataFrame) -> Result<(), CliError> {
        let task_ctx = Arc::new(df.task_ctx());
        let plan = df.create_physical_plan().await?;
        let stream = execute_stream(Arc::clone(&plan), task_ctx)?;
        self.write_stream(stream).await?;
        for id in committed_snapshots(plan.as_ref()) {
            eprintln!("committed snapshot {id}");
        }
        if self.pruning_report {
            for line in crate::pruning::report(&plan) {
                eprintln!("{line}");
            }
        }
        Ok(())
    }

    async fn write_stream(
        &mut self,
        mut stream: SendableRecordBatchStream,
    ) -> Result<(), CliError> {
        let schema = stream.schema();
        if schema.fields().is_empty() {
            while let Some(batch) = stream.next().await {
                batch?;
            }
            return Ok(());
        }
        match (&mut self.target, self.format) {
            (
                Target::Text {
                    writer,
                    printed_table,
                },
                Format::Table,
            ) => {
                let mut batches = Vec::new();
                while let Some(batch) = stream.next().await {
                    batches.push(batch?);
                }
                let table = pretty_format_batches_with_schema(schema, &batches)?;
                if *printed_table {
                    writeln!(writer)?;
                }
                writeln!(writer, "{table}")?;
                *printed_table = true;
            }
            (Target::Text { writer, .. }, Format::Csv) => {
                let mut csv = CsvWriterBuilder::new()
                    .with_header(true)
                    .build(&mut *writer);
                let mut wrote_any = false;
                while let Some(batch) = stream.next().await {
                    csv.write(&batch?)?;
                    wrote_any = true;
                }
                if !wrote_any {
                    // Still print the header line.
                    csv.write(&RecordBatch::new_empty(schema))?;
                }
            }
            (Target::Text { writer, .. }, Format::Json) => {
                let mut json = LineDelimitedWriter::new(&mut *writer);
                while let Some(batch) = stream.next().await {
                    json.write(&batch?)?;
                }
                json.finish()?;
            }
            (Target::Parquet { path, writer }, _) => {
                if writer.is_some() {
                    return Err(CliError::new(format!(
                        "a Parquet file holds one result, but more than one statement \
                         returned rows for {}",
                        path.display()
                    )));
                }
                let parquet = writer.insert(parquet_writer(path, schema)?);
                while let Some(batch) = stream.next().await {
                    parquet.write(&batch?)?;
                }
            }
            (Target::Text { .. }, Format::Parquet) => {
                unreachable!("Output::new sends Parquet to a file")
            }
        }
        self.flush()
    }

    /// Flush text output (the REPL calls this after every statement).
    pub fn flush(&mut self) -> Result<(), CliError> {
        if let Target::Text { writer, .. } = &mut self.target {
            writer.flush()?;
        }
        Ok(())
    }

    /// Finish the output: flush text, write the Parquet footer.
    pub fn finish(self) -> Result<(), CliError> {
        match self.target {
            Target::Text { mut writer, .. } => writer.flush()?,
            Target::Parquet {
                writer: Some(writer),
                ..
            } => {
                writer.close()?;
            }
            Target::Parquet { path, writer: None } => {
                return Err(CliError::new(format!(
                    "no statement returned rows to write to {}",
                    path.display()
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

fn create(path: &Path) -> Result<File, CliError> {
    File::create(path).map_err(|e| {
        CliError::from(e).context(format!("cannot create output file {}", path.display()))
    })
}

fn parquet_writer(
    path: &Path,
    schema: SchemaRef,
) -> Result<Box<ArrowWriter<BufWriter<File>>>, CliError> {
    let file = BufWriter::new(create(path)?);
    Ok(Box::new(ArrowWriter::try_new(file, schema, None)?))
}

/// The snapshot ids the writes in `plan` committed (the Iceberg sink's
/// `committed_snapshot_id` metric).
fn committed_snapshots(plan: &dyn datafusion::physical_plan::ExecutionPlan) -> Vec<i64> {
    use datafusion::physical_plan::metrics::MetricValue;
    let mut out: Vec<i64> = plan
        .metrics()
        .iter()
        .flat_map(|set| set.iter().cloned().collect::<Vec<_>>())
        .filter_map(|m| match m.value() {
            MetricValue::Gauge { name, gauge }
                if name == icefloe::datafusion::insert::COMMITTED_SNAPSHOT_METRIC =>
            {
                i64::try_from(gauge.value()).ok()
            }
            _ => None,
        })
        .collect();
    for child in plan.children() {
        out.extend(committed_snapshots(child.as_ref()));
    }
    out
}
