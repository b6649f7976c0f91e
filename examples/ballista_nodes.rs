//! A Ballista scheduler, executor and client that read Iceberg tables (feature
//! `ballista`): the processes of a deployment, each with icefloe's codecs registered
//! (README "Distributed queries"). Ballista's own `ballista-scheduler` /
//! `ballista-executor` binaries cannot decode icefloe's tables and plan nodes; build
//! these instead (or copy the few lines that register the codecs into yours).
//!
//! ```text
//! cargo build --release --features ballista --example ballista_nodes
//! ballista_nodes scheduler --bind 0.0.0.0 --port 50050
//! ballista_nodes executor --scheduler-host HOST --scheduler-port 50050 --port 50051 \
//!     --grpc-port 50052 --slots 8
//! ballista_nodes query --scheduler df://HOST:50050 \
//!     --table t=s3://bucket/warehouse/db/t -c "SELECT count(*) FROM t"
//! ```
//!
//! Executors read the tables' files themselves (object stores come from the table's
//! FileIO properties in the plan); the scheduler reads the metadata and manifests.

use std::sync::Arc;

use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use clap::{Parser, Subcommand};
use datafusion::arrow::util::display::FormatOptions;
use datafusion::arrow::util::pretty::pretty_format_batches_with_options;
use datafusion::prelude::SessionConfig;
use icefloe::datafusion::ballista::{
    ballista_logical_codec, remote_session, IcebergBallistaPhysicalCodec,
};
use icefloe::IcebergTableProvider;

#[derive(Parser)]
#[command(about = "Ballista scheduler / executor / client with icefloe's codecs")]
struct Args {
    #[command(subcommand)]
    node: Node,
}

#[derive(Subcommand)]
enum Node {
    /// A scheduler (plans queries; reads table metadata and manifests).
    Scheduler {
        #[arg(long, default_value = "127.0.0.1")]
        bind: String,
        #[arg(long, default_value_t = 50050)]
        port: u16,
    },
    /// An executor (runs tasks; reads data and delete files).
    Executor {
        #[arg(long, default_value = "localhost")]
        scheduler_host: String,
        #[arg(long, default_value_t = 50050)]
        scheduler_port: u16,
        #[arg(long, default_value = "127.0.0.1")]
        bind: String,
        /// The Arrow Flight port (shuffle data).
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// The gRPC port (tasks).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Concurrent tasks.
        #[arg(long, default_value_t = 4)]
        slots: usize,
    },
    /// A client: register tables, run one query, print the rows as the CLI does.
    Query {
        /// The scheduler, `df://HOST:PORT`.
        #[arg(long)]
        scheduler: String,
        /// A table to register: NAME=LOCATION (a table directory or metadata file).
        #[arg(long = "table", value_name = "NAME=LOCATION", required = true)]
        tables: Vec<String>,
        #[arg(short = 'c', long = "command", value_name = "SQL")]
        sql: String,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    match Args::parse().node {
        Node::Scheduler { bind, port } => {
            let config = SchedulerConfig {
                bind_host: bind.clone(),
                bind_port: port,
                override_logical_codec: Some(Arc::new(ballista_logical_codec())),
                override_physical_codec: Some(Arc::new(IcebergBallistaPhysicalCodec::default())),
                ..Default::default()
            };
            let cluster = BallistaCluster::new_from_config(&config).await?;
            start_server(cluster, format!("{bind}:{port}").parse()?, Arc::new(config)).await?;
        }
        Node::Executor {
            scheduler_host,
            scheduler_port,
            bind,
            port,
            grpc_port,
            slots,
        } => {
            let config = ExecutorProcessConfig {
                scheduler_host,
                scheduler_port,
                bind_host: bind,
                port,
                grpc_port,
                vcores: slots,
                override_logical_codec: Some(Arc::new(ballista_logical_codec())),
                override_physical_codec: Some(Arc::new(IcebergBallistaPhysicalCodec::default())),
                ..Default::default()
            };
            start_executor_process(Arc::new(config)).await?;
        }
        Node::Query {
            scheduler,
            tables,
            sql,
        } => {
            let ctx = remote_session(&scheduler, SessionConfig::new()).await?;
            for spec in &tables {
                let (name, location) = spec
                    .split_once('=')
                    .ok_or_else(|| format!("--table '{spec}': expected NAME=LOCATION"))?;
                let provider = IcebergTableProvider::open(location).await?;
                ctx.register_table(name, Arc::new(provider))?;
            }
            let batches = ctx.sql(&sql).await?.collect().await?;
            let options = FormatOptions::default()
                .with_display_error(true)
                .with_null("NULL");
            println!(
                "{}",
                pretty_format_batches_with_options(&batches, &options)?
            );
        }
    }
    Ok(())
}
