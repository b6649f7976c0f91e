//! Register an Iceberg table in a DataFusion `SessionContext` and run SQL on it.
//!
//! ```text
//! cargo run --example query -- testdata/sample_table "SELECT count(*) FROM t"
//! ```

use std::sync::Arc;

use datafusion::prelude::SessionContext;
use icefloe::IcebergTableProvider;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let location = args.next().ok_or("usage: query <table location> [SQL]")?;
    let sql = args
        .next()
        .unwrap_or_else(|| "SELECT * FROM t LIMIT 10".to_string());
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(IcebergTableProvider::open(&location).await?))?;
    ctx.sql(&sql).await?.show().await?;
    Ok(())
}
