mod add_files;
mod aggregates;
mod cli;
mod cli_catalogs;
mod cli_output;
mod cli_sessions;
mod cli_spark_messages;
mod cli_spark_scripts;
mod cli_terminal;
mod cli_writes;
mod namespace_ddl;

mod alter;
#[cfg(feature = "cloud")]
mod azurite;
mod bad_input;
mod cast_names;
// the TPC-H and delete tables of the datafusion-distributed tests, on Ballista standalone
#[cfg(all(feature = "ballista", feature = "distributed"))]
mod ballista_standalone;
mod catalog;
mod compaction_sizes;
mod concurrent_commits;
mod corrupt_footers;
mod create_table_as;
mod damaged_files;
mod deferred_planning;
mod deletes;
#[cfg(feature = "distributed")]
mod distributed;
mod dml;
mod dml_branches;
mod dml_resolution;
mod dml_spark_forms;
mod dml_statements;
mod dml_whole_files;
mod dropped_partition_source;
mod duplicate_entries;
mod equality_resolution;
mod evolution;
mod evolution_engines;
#[cfg(feature = "cloud")]
mod expire_cleanup;
mod fault_proxy;
mod filter_differential;
mod fixtures;
mod foreign_parquet;
mod fuzz;
mod fuzz_parsers;
mod gc_disabled;
mod guarded_server;
mod interop;
mod interop_writes;
mod isnan_nulls;
mod killed_leftovers;
mod locations;
mod maintenance;
mod maintenance_zorder;
mod map_access;
mod metadata_answers;
mod metadata_columns;
mod metadata_columns_dml;
mod metadata_parity;
mod nan_semantics;
mod nested_evolution;
mod nested_writes;
/// The conformance runner's Arrow -> canonical JSON conversion, shared (the interop tests
/// compare in the same form).
#[allow(dead_code)]
#[path = "../conformance/normalize.rs"]
mod normalize;
mod object_store_locations;
mod orphan_owners;
mod partition_evolution;
mod partition_stats;
mod partition_stats_incremental;
mod path_reads_nan;
mod per_batch_index;
mod python_runs;
mod read_corners;
mod replace_table;
mod request_counts;
#[cfg(feature = "cloud")]
mod rest_s3;
mod rewrite_table_path;
mod rewrite_table_path_deletes;
mod rewrite_table_path_stats;
#[cfg(feature = "cloud")]
mod seaweed;
mod session_caches;
mod session_setup;
mod session_zone_casts;
mod spark_datetime;
mod spark_functions;
mod statement_errors;
mod table_properties;
mod time_boundaries;
mod timestamp_range;
mod v1_writes;
mod v3_writes;
#[cfg(feature = "cloud")]
mod vended_credentials;
mod views;
mod writes;
mod written_bounds;
mod written_values;
mod zoned_pruning;
