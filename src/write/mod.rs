//! Writing Iceberg data and metadata: Parquet data files from record batches
//! ([`PartitionedDataFileWriter`], configured by [`DataFileWriterConfig`]), v2 and v3 manifests
//! and manifest lists (Avro), table metadata JSON, data-file metrics from Parquet footers, and a single-writer table on the local
//! filesystem ([`LocalTableWriter`]) whose `add_parquet_files` registers existing Parquet
//! files ("add_files").
//!
//! This is the writer the benchmarks build their tables with, and the start of a
//! general one: it writes what the reader in [`crate::spec`] reads back (the round trip
//! is tested), with the spec's field ids and names.

pub(crate) mod added_file_checks;
mod avro_values;
mod batch;
pub mod bounds;
pub mod data_file_writer;
pub mod manifest;
pub mod manifest_list;
pub mod metadata;
pub mod metrics_config;
pub mod parquet_metrics;
mod parquet_schema;
pub mod partition_path;
pub mod position_delete_writer;
pub mod puffin_writer;
pub mod statistics_file;
pub mod table_writer;
mod unknown;
mod upload;
pub mod writer_config;
pub mod written_files;

pub use data_file_writer::PartitionedDataFileWriter;

/// The values of an array of the Arrow type of Iceberg type `ty` (see
/// `crate::spec::arrow`) as literals, `None` for nulls.
///
/// Errors: an array of another type, or a type with no literal form.
pub(crate) fn batch_literals(
    array: &dyn datafusion::arrow::array::Array,
    ty: &crate::spec::PrimitiveType,
) -> crate::error::Result<Vec<Option<crate::spec::Literal>>> {
    batch::literals(array, None, ty)
}
pub use manifest::{ManifestWriter, NewEntry};
pub use manifest_list::write_manifest_list;
pub use metadata::table_metadata_to_json;
pub use metrics_config::{MetricsConfig, MetricsMode};
pub use parquet_metrics::{
    data_file_from_parquet, empty_data_file, read_parquet_metadata, schema_from_parquet,
    unsorted_order_id,
};
pub use position_delete_writer::{
    position_delete_schema, write_position_delete_file, DeleteGranularity,
};
pub use puffin_writer::write_deletion_vectors;
pub use table_writer::{LocalTableWriter, PendingSnapshot};
pub(crate) use unknown::stored_schema;
pub(crate) use writer_config::{check_bloom_filters, is_bloom_filter_key};
pub use writer_config::{
    check_file_format, parquet_compression, BloomFilterColumn, DataFileWriterConfig,
    DistributionMode,
};
pub use written_files::{decode_written_files, encode_written_files};

#[cfg(test)]
mod data_file_metrics_tests;
#[cfg(test)]
mod data_file_writer_tests;
#[cfg(test)]
mod tests;
