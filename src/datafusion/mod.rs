//! The DataFusion integration: the only module that knows DataFusion planning types.

pub mod catalog;
mod delete_planning;
mod equality_delete_exec;
mod expr_adapter;
mod factory;
mod nested_ids;
mod metadata_files;
pub mod metadata_tables;
pub mod filter;
pub mod metrics;
pub mod scalar;
mod table_provider;
pub mod table_functions;

pub use delete_planning::DeleteMetrics;
pub use equality_delete_exec::EqualityDeleteExec;
pub use expr_adapter::{FieldIdExprAdapter, FieldIdExprAdapterFactory};
pub use factory::{register_iceberg_factory, IcebergTableProviderFactory};
pub use table_provider::IcebergTableProvider;
pub use catalog::{IcebergCatalogProvider, IcebergSchemaProvider};
pub use table_functions::register_iceberg_functions;
