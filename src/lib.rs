//! icefloe: Apache Iceberg tables in Apache DataFusion.
pub mod datafusion;
pub mod error;
pub mod table;

pub use crate::datafusion::{register_iceberg_factory, IcebergTableProvider, IcebergTableProviderFactory};
pub use error::{Error, ErrorKind, Result};
pub use table::{OpenOptions, Table};
