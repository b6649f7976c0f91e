//! Writing Iceberg metadata: v2 manifests and manifest lists (Avro), table metadata
//! JSON, data-file metrics from Parquet footers, and a single-writer table on the local
//! filesystem ([`LocalTableWriter`]) whose `add_parquet_files` registers existing Parquet
//! files ("add_files").
//!
//! This is the writer the benchmarks build their tables with, and the start of a
//! general one: it writes what the reader in [`crate::spec`] reads back (the round trip
//! is tested), with the spec's field ids and names.

mod avro_values;
pub mod bounds;
pub mod manifest;
pub mod manifest_list;
pub mod metadata;
pub mod parquet_metrics;
pub mod table_writer;

pub use manifest::{ManifestWriter, NewEntry};
pub use manifest_list::write_manifest_list;
pub use metadata::table_metadata_to_json;
pub use parquet_metrics::{
    data_file_from_parquet, empty_data_file, read_parquet_metadata, schema_from_parquet,
};
pub use table_writer::{LocalTableWriter, PendingSnapshot};

#[cfg(test)]
mod tests;
