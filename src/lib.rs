//! icefloe: Apache Iceberg tables as first-class citizens of Apache DataFusion.
//!
//! ```no_run
//! use std::sync::Arc;
//! use datafusion::prelude::SessionContext;
//! use icefloe::IcebergTableProvider;
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let ctx = SessionContext::new();
//! // a table directory or a metadata.json file
//! let orders = IcebergTableProvider::open("warehouse/db/orders").await?;
//! ctx.register_table("orders", Arc::new(orders))?;
//! ctx.sql("SELECT count(*) FROM orders").await?.show().await?;
//! # Ok(())
//! # }
//! ```

mod blocking;
pub mod catalog;
mod column_case;
pub mod datafusion;
pub mod delete;
pub mod error;
pub mod eval;
pub mod expr;
pub mod failpoint;
pub mod io;
mod lru;
pub mod maintenance;
mod nan;
pub mod scan;
pub mod spark_datetime_text;
pub mod spec;
pub mod table;
pub mod table_properties;
mod time_narrowing;
pub mod transaction;
pub mod transform;
pub mod write;

pub use crate::datafusion::{
    register_iceberg_factory, IcebergTableProvider, IcebergTableProviderFactory,
};
pub use error::{Error, ErrorKind, Result};
pub use table::{OpenOptions, Table};
