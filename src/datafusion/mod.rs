//! The DataFusion integration: the only module that knows DataFusion planning types.

mod analyzer_rules;
#[cfg(feature = "ballista")]
pub mod ballista;
#[cfg(feature = "ballista")]
mod ballista_reads;
mod canonical_nan;
pub mod catalog;
mod changelog;
#[cfg(any(feature = "distributed", feature = "ballista"))]
mod codec;
mod column_defaults;
mod compared_groups;
pub mod cooperative_joins;
mod data_file_writer_exec;
mod deferred_files;
mod delete_planning;
#[cfg(feature = "distributed")]
pub mod distributed;
#[cfg(feature = "distributed")]
mod distributed_deferred;
pub mod dml;
mod equality_delete_exec;
mod error_chain;
mod expired_reads;
mod expr_adapter;
mod factory;
mod file_reader;
pub mod filter;
pub mod float_comparisons;
pub mod float_keys;
pub mod float_literals;
mod float_order;
pub mod followed_directory;
mod fresh_target;
pub mod fresh_view;
mod greatest_least;
mod iceberg_source;
pub mod in_list_pairs;
pub mod information_schema;
pub mod insert;
mod insert_casts;
mod insert_column_casts;
mod int96_units;
pub mod location_storage;
#[cfg(any(feature = "distributed", feature = "ballista"))]
mod logical_codec;
pub mod maintenance;
pub mod map_keys;
pub mod metadata_columns;
mod metadata_files;
mod metadata_position_deletes;
pub mod metadata_tables;
pub mod metrics;
pub mod min_max;
mod min_max_nested;
pub mod named_tables;
pub mod nan_safe_parquet;
mod nested_projection;
pub mod null_aware_in;
pub mod options;
mod partition_stats_file;
mod planned_file;
mod position_delete_exec;
pub mod read_only;
mod request_metrics;
mod rewrite_group;
mod row_count;
pub mod scalar;
mod scan_errors;
mod set_operation_types;
pub mod snapshot_metric;
mod sort_requirement;
mod spark_datetime;
mod spark_functions;
pub mod spark_isnan;
mod spark_text_casts;
pub mod sql;
mod statistics;
mod stats_pruning;
mod struct_defaults;
mod struct_fields;
mod struct_rename;
pub mod table_functions;
mod table_provider;
pub mod time_literals;
mod time_narrowing;
pub mod timestamp_literals;
mod transform_expr;
mod unified_partition;
pub mod uuid_literals;
pub mod values_fields;
pub mod values_subqueries;
mod write_distribution;
mod write_exec;
mod written_values;
mod zoned_arrays;
mod zoned_casts;
mod zoned_functions;
mod zoned_literals;
mod zoned_text_casts;
mod zoned_wall_clock;
mod zoned_writes;
mod zorder_udf;

pub use catalog::{IcebergCatalogProvider, IcebergSchemaProvider};
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub use codec::{plan_scalar_functions, IcebergPhysicalCodec};
pub use cooperative_joins::CooperativeJoins;
pub use data_file_writer_exec::{DataFileWriteState, IcebergDataFileWriterExec};
pub use delete_planning::{DeleteMetrics, EqualityDeletePolicy, PositionDeletePolicy};
pub use equality_delete_exec::EqualityDeleteExec;
pub use expr_adapter::{FieldIdExprAdapter, FieldIdExprAdapterFactory};
pub use factory::{register_iceberg_factory, IcebergTableProviderFactory, STORAGE_OPTION_PREFIXES};
/// The scan's Parquet reader factory, public for the parser-level fuzz tests only.
#[doc(hidden)]
pub use file_reader::IcebergParquetReaderFactory;
pub use float_keys::install_float_key_rule;
pub use float_literals::{install_float_literal_rule, use_decimal_literals};
pub use iceberg_source::{IcebergParquetSource, IcebergScanState};
pub use insert::{IcebergDataSink, WriteTarget};
pub use location_storage::LocationStorageProperties;
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub use logical_codec::IcebergLogicalCodec;
pub use map_keys::install_map_key_rule;
pub use min_max::{register_min_max, register_min_max_in};
pub use named_tables::IcebergNamesSchemaProvider;
pub use options::{register_iceberg_options, IcefloeOptions, OptionChoice};
pub use position_delete_exec::PositionDeleteExec;
pub use table_functions::register_iceberg_functions;
pub use table_provider::IcebergTableProvider;
pub use time_literals::install_time_literal_rule;
pub use timestamp_literals::install_timestamp_literal_rule;
pub use uuid_literals::install_uuid_literal_rule;
pub use values_fields::install_values_rule;
pub use write_exec::IcebergWriteExec;
pub use zoned_literals::install_session_zone_rule;
