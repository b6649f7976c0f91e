//! The DataFusion integration: the only module that knows DataFusion planning types.

mod expr_adapter;
mod factory;
pub mod filter;
pub mod metrics;
pub mod scalar;
mod table_provider;

pub use expr_adapter::{FieldIdExprAdapter, FieldIdExprAdapterFactory};
pub use factory::{register_iceberg_factory, IcebergTableProviderFactory};
pub use table_provider::IcebergTableProvider;
