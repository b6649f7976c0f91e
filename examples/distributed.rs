//! Run SQL over Iceberg tables on in-process datafusion-distributed workers (feature
//! `distributed`): every task's plan, deletes included, is encoded with icefloe's
//! `IcebergPhysicalCodec`, sent over datafusion-distributed's in-memory gRPC channel
//! and decoded by a worker, as between machines.
//!
//! ```text
//! cargo run --features distributed --example distributed -- \
//!     --table t=testdata/corpus/spark_v2_mor_position_deletes \
//!     -c "SELECT count(*) FROM t" --workers 3
//! ```
//!
//! `--explain` prints the distributed plan (its stages and tasks) instead of the rows.
//! Rows are printed as the `icefloe` CLI prints a table (NULL for nulls).
//!
//! `--engine ballista` (feature `ballista` too) runs the query on Ballista standalone
//! instead: an in-process scheduler and executor (`--workers` task slots) to which the
//! client sends the logical plan (tables as their identity, `IcebergLogicalCodec`) and
//! the scheduler the stages' physical plans (`IcebergBallistaPhysicalCodec`):
//!
//! ```text
//! cargo run --features distributed,ballista --example distributed -- --engine ballista \
//!     --table t=testdata/corpus/spark_v2_mor_position_deletes -c "SELECT count(*) FROM t"
//! ```

use std::sync::Arc;

use clap::{Parser, ValueEnum};
use datafusion::arrow::util::display::FormatOptions;
use datafusion::arrow::util::pretty::pretty_format_batches_with_options;
use datafusion::physical_plan::collect;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::display_plan_ascii;
use icefloe::datafusion::distributed::in_process_session;
use icefloe::IcebergTableProvider;

/// The distributed engine the query runs on.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Engine {
    /// In-process datafusion-distributed workers.
    Distributed,
    /// Ballista standalone (in-process scheduler and executor; feature `ballista`).
    Ballista,
}

#[derive(Parser)]
#[command(about = "Run SQL over Iceberg tables on in-process distributed workers")]
struct Args {
    /// A table to register: NAME=LOCATION (a table directory or metadata file); repeatable.
    #[arg(long = "table", value_name = "NAME=LOCATION", required = true)]
    tables: Vec<String>,
    /// The SQL to run.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    sql: String,
    /// The engine: datafusion-distributed workers or Ballista standalone.
    #[arg(long, value_enum, default_value_t = Engine::Distributed)]
    engine: Engine,
    /// How many in-process workers (Ballista: the executor's task slots).
    #[arg(long, default_value_t = 3)]
    workers: usize,
    /// Bytes of data files one scan partition of a task reads (smaller: more tasks).
    #[arg(long, default_value_t = 16 * 1024 * 1024)]
    bytes_per_partition: usize,
    /// Print the distributed plan instead of running the query (datafusion-distributed).
    #[arg(long)]
    explain: bool,
}

/// A Ballista standalone client whose executor has `slots` task slots.
#[cfg(feature = "ballista")]
async fn ballista_session(slots: usize) -> Result<SessionContext, Box<dyn std::error::Error>> {
    use ballista::prelude::SessionConfigExt;
    let config = SessionConfig::new_with_ballista().with_ballista_standalone_parallelism(slots);
    Ok(icefloe::datafusion::ballista::standalone_session(config).await?)
}

#[cfg(not(feature = "ballista"))]
async fn ballista_session(_slots: usize) -> Result<SessionContext, Box<dyn std::error::Error>> {
    Err("--engine ballista needs the example built with `--features distributed,ballista`".into())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    let ctx = match args.engine {
        Engine::Distributed => {
            in_process_session(args.workers, SessionConfig::new(), args.bytes_per_partition)?
        }
        Engine::Ballista => {
            if args.explain {
                return Err("--explain shows datafusion-distributed's stages: not with \
                            --engine ballista"
                    .into());
            }
            ballista_session(args.workers).await?
        }
    };
    for spec in &args.tables {
        let (name, location) = spec
            .split_once('=')
            .ok_or_else(|| format!("--table '{spec}': expected NAME=LOCATION"))?;
        let provider = IcebergTableProvider::open(location).await?;
        ctx.register_table(name, Arc::new(provider))?;
    }
    let plan = ctx.sql(&args.sql).await?.create_physical_plan().await?;
    if args.explain {
        println!("{}", display_plan_ascii(plan.as_ref(), false));
        return Ok(());
    }
    let batches = collect(plan, ctx.task_ctx()).await?;
    let options = FormatOptions::default()
        .with_display_error(true)
        .with_null("NULL");
    println!(
        "{}",
        pretty_format_batches_with_options(&batches, &options)?
    );
    Ok(())
}
