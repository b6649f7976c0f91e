//! `icefloe`: run SQL over Apache Iceberg tables with Apache DataFusion.
//!
//! Arguments are parsed here, the DataFusion session is set up, and the SQL from `-c`,
//! `-f` or the interactive shell ([`repl`]) is split into statements ([`statements`])
//! whose results are written by [`output`].

mod catalog;
mod copy_to;
mod create_target;
mod describe;
mod external_tables;
mod interrupt;
mod not_found;
mod object_stores;
mod output;
mod panics;
mod path_listing;
mod progress;
mod pruning;
mod render;
mod repl;
mod statements;
mod url_tables;

use std::fmt;
use std::io::{self, IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser};
use datafusion::catalog::{CatalogProvider, MemorySchemaProvider};
use datafusion::common::TableReference;
use datafusion::error::DataFusionError;
use datafusion::execution::cache::cache_manager::CacheManagerConfig;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::FutureExt;
use icefloe::datafusion::followed_directory::FollowedDirectory;
use icefloe::datafusion::IcebergNamesSchemaProvider;

use catalog::DEFAULT_CATALOG;

/// The process's allocator (feature `mimalloc`, default): planning a table of many files
/// allocates millions of small pieces, which glibc's allocator serves 1.2-2.2x slower
/// (benches/README.md, "Full plan of 1,000,000 files, round five").
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use output::{Format, Output};

const EXAMPLES: &str = "\
Examples:
  # Count the rows of an Iceberg table
  icefloe --table t=testdata/sample_table -c \"SELECT count(*) FROM t\"

  # Show how a query is planned
  icefloe --table t=testdata/sample_table -c \"EXPLAIN SELECT * FROM t LIMIT 10\"

  # Show how many manifests, files and row groups a filter pruned
  icefloe --table t=testdata/sample_table --explain-pruning -c \"SELECT count(*) FROM t WHERE id > 50\"

  # Open a table at a given metadata file
  icefloe --table t=warehouse/db/t/metadata/v3.metadata.json -c \"SELECT * FROM t LIMIT 10\"

  # Run the statements in a file, printing CSV
  icefloe -f queries.sql --format csv

  # Save a result as Parquet
  icefloe --table t=testdata/sample_table -c \"SELECT * FROM t\" --format parquet -o t.parquet

  # Register a table from SQL
  icefloe -c \"CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION 'testdata/sample_table'; SELECT * FROM t\"

  # Attach an Iceberg catalog (SQLite in the JDBC layout, a warehouse directory or a
  # config file); its namespaces are schemas. Without a value: ./warehouse/catalog.db
  icefloe --catalog sqlite:warehouse/catalog.db -c \"SELECT * FROM ns.orders LIMIT 10\"
  icefloe --catalog sqlite:new.db --create-catalog -c \"CREATE SCHEMA ns\"
  icefloe --catalog /data/warehouse -c 'SELECT * FROM ns.\"orders$snapshots\"'

  # Create a namespace and a partitioned table in it (Spark's Iceberg DDL)
  icefloe --catalog sqlite:warehouse/catalog.db -c \"CREATE SCHEMA ns; \\
    CREATE TABLE ns.events (id BIGINT, ts TIMESTAMP) PARTITIONED BY (days(ts))\"

  # Interactive shell (end statements with ';', quit with \\q or Ctrl-D)
  icefloe --table t=testdata/sample_table";

/// Query Apache Iceberg tables with SQL, using Apache DataFusion.
///
/// Runs the SQL given with -c or -f, or starts an interactive shell without either.
#[derive(Debug, Parser)]
#[command(name = "icefloe", version, after_help = EXAMPLES)]
struct Cli {
    /// Run these SQL statements (separated by ';') and exit
    // SQL may begin with '-' (a `-- comment`, `-1 AS x`): the next argument is the SQL
    #[arg(
        short = 'c',
        long = "command",
        value_name = "SQL",
        conflicts_with = "file",
        allow_hyphen_values = true
    )]
    command: Option<String>,

    /// Run the SQL statements in FILE ('-' for stdin) and exit; stops at the first
    /// failed statement, named by its line and beginning (FILE:LINE (SELECT …): error)
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    file: Option<PathBuf>,

    /// Number of partitions queries are run with [default: number of CPU cores]
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
    )]
    target_partitions: Option<usize>,

    #[command(flatten)]
    tables: TableArgs,

    #[command(flatten)]
    output: OutputArgs,
}

/// Where tables come from.
#[derive(Debug, Args)]
#[command(next_help_heading = "Tables")]
struct TableArgs {
    /// Attach an Iceberg catalog as the default catalog, its namespaces as schemas
    /// (SELECT * FROM ns.t): a SQLite catalog in the JDBC layout (sqlite:PATH, PATH.db,
    /// SQLAlchemy's sqlite:///relative.db and sqlite:////absolute.db, Java's
    /// jdbc:sqlite:/absolute.db), a warehouse directory (Hadoop layout), a metadata file
    /// or a config file. A missing database or directory is an error unless
    /// --create-catalog is given. Without a value: ./warehouse/catalog.db, created if
    /// missing. Without the option, that file is attached only if it exists
    #[arg(long = "catalog", value_name = "URI|CONFIG", num_args = 0..=1, default_missing_value = "")]
    catalog: Option<String>,

    /// Create the SQLite catalog database or warehouse directory named by --catalog if
    /// it does not exist
    #[arg(long = "create-catalog", requires = "catalog")]
    create_catalog: bool,

    /// Register the Iceberg table at LOCATION (a table directory or a metadata.json
    /// path or URL) as NAME; repeat for more tables. NAME is read as SQL reads a table
    /// name: unquoted it is lowercased (MyT is registered as myt: FROM MyT and FROM myt
    /// find it, FROM "MyT" does not), as CREATE EXTERNAL TABLE MyT does; double-quoted it
    /// keeps its case and any character ('"MyT"=…', then FROM "MyT")
    #[arg(long = "table", value_name = "NAME=LOCATION", value_parser = parse_table_arg)]
    tables: Vec<TableArg>,
}

#[derive(Debug, Args)]
#[command(next_help_heading = "Output")]
struct OutputArgs {
    /// Output format [default: from the extension of -o FILE (.parquet, .csv, .json,
    /// .ndjson, .jsonl), else table]
    #[arg(long, value_enum)]
    format: Option<Format>,

    /// Write output to FILE instead of stdout
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,

    /// Text written for NULL in CSV output, unquoted (so without ',', '"' or line
    /// breaks) [default: an empty field; an empty string is written as ""]. Table output
    /// shows NULL, JSON null
    #[arg(
        long = "null-string",
        value_name = "TEXT",
        default_value = "",
        hide_default_value = true,
        allow_hyphen_values = true,
        value_parser = parse_null_string
    )]
    null_string: String,

    /// After each query, print to stderr how each Iceberg scan was pruned: manifests and
    /// data files total / skipped, delete files applied, row groups and pages pruned
    #[arg(long = "explain-pruning")]
    explain_pruning: bool,

    /// No progress line on stderr (it is shown only when stderr is a terminal, for
    /// queries running longer than a second)
    #[arg(short = 'q', long = "quiet")]
    quiet: bool,
}

/// `--null-string TEXT`: written unquoted for each NULL (a string equal to it is quoted),
/// so it holds no character that CSV quotes (a `,`, `"` or line break would split or
/// open a field).
fn parse_null_string(value: &str) -> Result<String, String> {
    match value.chars().find(|c| matches!(c, ',' | '"' | '\n' | '\r')) {
        Some(c) => Err(format!(
            "holds {c:?}, which CSV reads as part of its syntax (NULL is written unquoted); \
             pick a text without ',', '\"' and line breaks"
        )),
        None => Ok(value.to_string()),
    }
}

/// `--table NAME=LOCATION`.
#[derive(Debug, Clone)]
struct TableArg {
    /// NAME as given.
    name: String,
    /// The table name NAME reads as in SQL (see [`parse_table_arg`]).
    table: String,
    location: String,
}

/// `NAME=LOCATION`: NAME is one SQL identifier, read as DataFusion reads a table name
/// (`TableReference::parse_str`): unquoted lowercased, double-quoted as written; a name
/// that is not an identifier (`my-t`) is taken as it is. A dotted name (`a.b`, a table in
/// a schema) is refused.
fn parse_table_arg(value: &str) -> Result<TableArg, String> {
    let Some((name, location)) = value
        .split_once('=')
        .map(|(n, l)| (n.trim(), l.trim()))
        .filter(|(n, l)| !n.is_empty() && !l.is_empty())
    else {
        return Err(format!("expected NAME=LOCATION, got '{value}'"));
    };
    match TableReference::parse_str(name) {
        TableReference::Bare { table } => Ok(TableArg {
            name: name.to_string(),
            table: table.to_string(),
            location: location.to_string(),
        }),
        qualified => Err(format!(
            "NAME '{name}' reads as the qualified name {qualified}; give one table name \
             (double-quote it to keep a '.': '\"{name}\"={location}')"
        )),
    }
}

/// An error to report as `error: <message>` (exit code 1).
#[derive(Debug)]
pub struct CliError {
    message: String,
    broken_pipe: bool,
    status: ExitStatus,
}

/// How a failed run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExitStatus {
    /// Print `error: <message>`, exit code 1.
    Failed,
    /// The errors were printed already (e.g. by the shell reading a script): exit code 1.
    Reported,
    /// Ctrl-C: exit code 130, as shells report SIGINT.
    Interrupted,
}

impl CliError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            broken_pipe: false,
            status: ExitStatus::Failed,
        }
    }

    /// Statements failed and their errors were printed.
    pub fn reported(failed: usize) -> Self {
        Self {
            status: ExitStatus::Reported,
            ..Self::new(format!("{failed} statement(s) failed"))
        }
    }

    /// The run was interrupted with Ctrl-C.
    pub fn interrupted() -> Self {
        Self {
            status: ExitStatus::Interrupted,
            ..Self::new("interrupted")
        }
    }

    /// Whether this is Ctrl-C.
    pub fn is_interrupted(&self) -> bool {
        self.status == ExitStatus::Interrupted
    }

    /// Prefix the message with what was being done.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// The parser positions in the message moved from `statement`'s text into its
    /// script, `offset` lines down ([`statements::Statement::in_script`]).
    pub fn in_script(mut self, statement: &statements::Statement, offset: usize) -> Self {
        self.message = statement.in_script(&self.message, offset);
        self
    }

    /// Stdout was closed (e.g. piped into `head`): stop quietly.
    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        Self {
            broken_pipe: e.kind() == io::ErrorKind::BrokenPipe,
            ..Self::new(e.to_string())
        }
    }
}

impl From<DataFusionError> for CliError {
    /// An icefloe error that crossed DataFusion (raised by a sink, a scan or one of
    /// icefloe's plan rules) is shown as itself; DataFusion's own errors as DataFusion
    /// words them.
    fn from(e: DataFusionError) -> Self {
        let e = icefloe::Error::from(e);
        if e.kind() == icefloe::ErrorKind::DataFusion {
            Self::new(DataFusionError::from(e).to_string())
        } else {
            Self::new(e.to_string())
        }
    }
}

impl From<icefloe::Error> for CliError {
    fn from(e: icefloe::Error) -> Self {
        Self::new(e.to_string())
    }
}

impl From<datafusion::arrow::error::ArrowError> for CliError {
    fn from(e: datafusion::arrow::error::ArrowError) -> Self {
        use datafusion::arrow::error::ArrowError;
        let broken_pipe =
            matches!(&e, ArrowError::IoError(_, io) if io.kind() == io::ErrorKind::BrokenPipe);
        Self {
            broken_pipe,
            ..Self::new(e.to_string())
        }
    }
}

impl From<datafusion::parquet::errors::ParquetError> for CliError {
    fn from(e: datafusion::parquet::errors::ParquetError) -> Self {
        Self::new(e.to_string())
    }
}

/// The stack of every thread that plans or runs statements: DataFusion walks expression
/// trees recursively, and a 2,000-term `AND`/`OR` or arithmetic chain needs tens of MiB
/// (debug builds); virtual memory, touched only as deep as a statement goes.
const STACK_BYTES: usize = 256 * 1024 * 1024;

/// The expression depth allowed with [`STACK_BYTES`] (`icefloe.max_expression_depth`;
/// deeper statements fail with "expression too deep").
const MAX_EXPRESSION_DEPTH: usize = 5000;

fn main() -> ExitCode {
    // a panic is reported as an error (panics.rs), not by the default hook
    panics::install_hook();
    // the runtime's threads, and the one driving it, get large stacks
    let driver = std::thread::Builder::new()
        .name("icefloe-main".into())
        .stack_size(STACK_BYTES)
        .spawn(|| {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_stack_size(STACK_BYTES)
                .build();
            match runtime {
                Ok(runtime) => runtime.block_on(async_main()),
                Err(e) => {
                    eprintln!("error: cannot start the async runtime: {e}");
                    std::process::exit(1)
                }
            }
        });
    match driver.map(|d| d.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(panic)) => {
            eprintln!("error: {}", panics::described(panic.as_ref()));
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: cannot start the main thread: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn async_main() -> ExitCode {
    let cli = Cli::parse();
    // The interactive shell handles Ctrl-C itself (cancelling the running query);
    // statements from -c or -f stop at once with status 130, as does a script piped
    // into the shell.
    let shell = cli.command.is_none() && cli.file.is_none() && io::stdin().is_terminal();
    interrupt::install(if shell {
        interrupt::Mode::Notify
    } else {
        interrupt::Mode::Exit
    });
    let code = match run(cli).await {
        Ok(()) => 0,
        Err(e) if e.is_broken_pipe() => 0,
        Err(e) => match e.status {
            ExitStatus::Failed => {
                eprintln!("error: {e}");
                1
            }
            ExitStatus::Reported => 1,
            ExitStatus::Interrupted => {
                eprintln!("interrupted");
                130
            }
        },
    };
    // Output is complete here. Exit without waiting for the runtime to shut down: a
    // cancelled query's task may still be inside a long computation.
    std::process::exit(code)
}

async fn run(cli: Cli) -> Result<(), CliError> {
    let format = cli
        .output
        .format
        .unwrap_or_else(|| Format::for_output_file(cli.output.output.as_deref()));
    let mut output = Output::new(format, cli.output.output.as_deref())?
        .with_pruning_report(cli.output.explain_pruning)
        .with_progress(!cli.output.quiet && io::stderr().is_terminal())
        .with_null_string(cli.output.null_string.clone());
    let ctx = session(&cli).await?;
    match (&cli.command, &cli.file) {
        (Some(sql), _) => run_sql(&ctx, sql, &mut output, Script::Command).await?,
        (None, Some(file)) => {
            let sql = read_sql_file(file)?;
            let name = if file.as_os_str() == "-" {
                STDIN_NAME.to_string()
            } else {
                file.display().to_string()
            };
            run_sql(&ctx, &sql, &mut output, Script::File(&name)).await?;
        }
        (None, None) => {
            if !output.supports_repl() {
                return Err(CliError::new(
                    "--format parquet needs statements from -c or -f; \
                     the interactive shell prints text formats only",
                ));
            }
            repl::run(&ctx, &mut output).await?;
        }
    }
    output.finish()
}

/// The DataFusion session, with the Iceberg tables from the command line registered.
async fn session(cli: &Cli) -> Result<SessionContext, CliError> {
    let mut config = icefloe::datafusion::register_iceberg_options(SessionConfig::new());
    if let Some(o) = config
        .options_mut()
        .extensions
        .get_mut::<icefloe::datafusion::IcefloeOptions>()
    {
        o.max_expression_depth = MAX_EXPRESSION_DEPTH;
        // what `RESET icefloe.max_expression_depth` restores
        o.keep_as_session_defaults();
    }
    if let Some(n) = cli.target_partitions {
        config = config.with_target_partitions(n);
    }
    let (catalog, spec) = match cli.tables.catalog.as_deref() {
        // the bare --catalog: the default database, created when missing
        Some("") => (Some(catalog::open(DEFAULT_CATALOG, true)?), DEFAULT_CATALOG),
        Some(spec) => (Some(catalog::open(spec, cli.tables.create_catalog)?), spec),
        None if std::path::Path::new(DEFAULT_CATALOG).is_file() => (
            Some(catalog::open(DEFAULT_CATALOG, false)?),
            DEFAULT_CATALOG,
        ),
        None => (None, ""),
    };
    // tables and files read by location (`iceberg_scan('s3://…')`, `--table`, `FROM
    // 's3://…/f.parquet'`, `COPY … TO 's3://…'`) read with the catalog config's storage
    // keys, those the AWS_* environment sets left out (see object_stores.rs)
    let storage = match &catalog {
        Some(_) => catalog::storage_properties(spec),
        None => Default::default(),
    };
    let location_properties = object_stores::location_properties(&storage, std::env::vars());
    config =
        icefloe::datafusion::LocationStorageProperties(location_properties.clone()).install(config);
    if let Some(c) = &catalog {
        config = config.with_default_catalog_and_schema(c.name(), "public");
    }
    // no list-files cache: a statement reading a path or an external table's directory
    // lists it as it is then, files added or removed since an earlier statement and their
    // columns included (tester's D3; DataFusion 55 caches listings for the session's life)
    let runtime = RuntimeEnvBuilder::new()
        .with_cache_manager(CacheManagerConfig::default().with_list_files_cache_limit(0))
        .with_object_store_registry(object_stores::CliObjectStores::new(
            location_properties.clone(),
        ))
        .build_arc()?;
    // joins yield to the scheduler, so that Ctrl-C stops a cancelled query's work
    // instead of leaving it running while the next statement waits (cooperative_joins)
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime)
        .with_default_features()
        .with_physical_optimizer_rule(Arc::new(icefloe::datafusion::CooperativeJoins))
        .build();
    let ctx = SessionContext::new_with_state(state);
    icefloe::register_iceberg_factory(&ctx);
    external_tables::register(&ctx);
    icefloe::datafusion::register_iceberg_functions(&ctx);
    // tables registered by name (--table, CREATE EXTERNAL TABLE) answer to "t$snapshots",
    // "t@v1", … as catalog tables do
    let public = Arc::new(IcebergNamesSchemaProvider::new(Arc::new(
        MemorySchemaProvider::new(),
    )));
    // and unknown names that read as paths are files: `FROM '/data/f.parquet'`
    let path_tables = url_tables::PathTables::new();
    path_tables.bind(&ctx);
    let public = path_tables.wrap(public);
    if let Some(c) = catalog {
        let name = c.name().to_string();
        let provider = icefloe::datafusion::IcebergCatalogProvider::try_new(c)
            .await
            .map_err(|e| CliError::from(e).context(format!("cannot list catalog {name}")))?;
        provider.register_schema("public", public)?;
        ctx.register_catalog(name, Arc::new(provider));
    } else if let Some(default) = ctx.catalog("datafusion") {
        default.register_schema("public", public)?;
    }
    for TableArg {
        name,
        table,
        location,
    } in &cli.tables.tables
    {
        let options = icefloe::table::OpenOptions {
            storage_properties: location_properties.clone(),
            ..Default::default()
        };
        // a directory is read at its current version at each statement, a metadata file
        // at its own
        let provider = FollowedDirectory::open(table.as_str(), location, options, None, None)
            .await
            .map_err(|e| {
                CliError::from(e).context(format!("cannot open table {name} at {location}"))
            })?;
        ctx.register_table(TableReference::bare(table.as_str()), Arc::new(provider))
            .map_err(|e| CliError::from(e).context(format!("cannot register table {name}")))?;
    }
    icefloe::datafusion::information_schema::register_information_schema(&ctx)?;
    Ok(ctx)
}

/// The SQL text of `-f FILE` (`-` for stdin), without the UTF-8 byte order mark editors
/// on Windows begin files with (DataFusion's parser refuses it as the first token).
fn read_sql_file(path: &PathBuf) -> Result<String, CliError> {
    let sql = if path.as_os_str() == "-" {
        let mut sql = String::new();
        io::stdin()
            .read_to_string(&mut sql)
            .map_err(|e| CliError::from(e).context("cannot read SQL from stdin"))?;
        sql
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| CliError::from(e).context(format!("cannot read {}", path.display())))?
    };
    Ok(without_byte_order_mark(sql))
}

/// `text` without a leading UTF-8 byte order mark (U+FEFF).
pub fn without_byte_order_mark(text: String) -> String {
    match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

/// How SQL text is named in errors: the name of a script's errors.
const STDIN_NAME: &str = "<stdin>";

/// Where statements come from, for the errors that name them.
#[derive(Debug, Clone, Copy)]
pub enum Script<'a> {
    /// `-c`: a failed statement is named by its place when there are several
    /// (`-c statement 2 (SELECT …)`).
    Command,
    /// `-f FILE` (`<stdin>` for `-f -`, and a script piped into the shell): a failed
    /// statement is always named, `FILE:LINE (first 60 characters)`.
    File(&'a str),
}

/// Run each statement in `sql` in turn ([`icefloe::datafusion::sql::execute`]: icefloe's
/// DDL against Iceberg catalogs, the rest through DataFusion), writing its result; stop
/// at the first error, which names the statement (see [`Script`]).
pub async fn run_sql(
    ctx: &SessionContext,
    sql: &str,
    output: &mut Output,
    script: Script<'_>,
) -> Result<(), CliError> {
    let dialect = statements::session_dialect(ctx);
    let statements = statements::split(sql, dialect.as_ref());
    let several = statements.len() > 1;
    for (i, statement) in statements.iter().enumerate() {
        run_statement(ctx, &statement.text, output)
            .await
            .map_err(|e| e.in_script(statement, 0))
            .map_err(|e| match script {
                Script::File(name) => e.context(statement_location(name, statement, 0)),
                Script::Command if several => {
                    e.context(format!("-c statement {} ({})", i + 1, statement.head))
                }
                Script::Command => e,
            })?;
    }
    Ok(())
}

/// `NAME:LINE (first characters)` of `statement`, its line moved down by `offset` lines
/// (where its text began in a longer script).
pub fn statement_location(name: &str, statement: &statements::Statement, offset: usize) -> String {
    format!("{name}:{} ({})", statement.line + offset, statement.head)
}

/// Run one statement and write its result; a panic while it runs is its error
/// ([`panics`]).
pub async fn run_statement(
    ctx: &SessionContext,
    statement: &str,
    output: &mut Output,
) -> Result<output::Written, CliError> {
    std::panic::AssertUnwindSafe(run_statement_body(ctx, statement, output))
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| Err(CliError::new(panics::described(panic.as_ref()))))
}

/// The statement's work for [`run_statement`].
async fn run_statement_body(
    ctx: &SessionContext,
    statement: &str,
    output: &mut Output,
) -> Result<output::Written, CliError> {
    let created = create_target::created_table(ctx, statement);
    if let Some(created) = &created {
        create_target::check_kept(ctx, created)?;
    }
    // the table being created is not read as a file of the same name meanwhile
    let _creating = created
        .as_ref()
        .and_then(|c| url_tables::creating(ctx, &c.catalog, &c.schema, &c.table));
    // a path reads its file after `USE ns` too
    let statement = url_tables::qualify_paths(ctx, statement);
    let df = icefloe::datafusion::sql::execute(ctx, &statement)
        .await
        .map_err(|e| {
            let e = statement_error(e);
            match not_found::explain_not_found(ctx, &e.message) {
                Some(message) => CliError::new(message),
                None => match not_found::several_level_namespace_hint(ctx, &e.message) {
                    Some(hint) => CliError::new(format!("{}; {hint}", e.message)),
                    None => e,
                },
            }
        })?;
    match copy_to::stage(&df) {
        Some((df, staged)) => {
            let written = output.write_dataframe(df).await;
            staged
                .finish(written.is_ok())
                .map_err(|e| CliError::new(e.to_string()))?;
            written
        }
        None => output.write_dataframe(df).await,
    }
}

/// A statement's error: DataFusion's own message when icefloe only passed it on.
fn statement_error(e: icefloe::Error) -> CliError {
    if e.kind() == icefloe::ErrorKind::DataFusion {
        match DataFusionError::from(e) {
            DataFusionError::External(inner) => CliError::new(inner.to_string()),
            df => CliError::from(df),
        }
    } else {
        CliError::from(e)
    }
}
