//! The Iceberg spec as data: types, schemas, partition specs, snapshots, table metadata,
//! manifest lists and manifests. No I/O happens here: parsers take bytes or text.

pub mod arrow;
pub(crate) mod arrow_compat;
#[cfg(test)]
mod avro;
mod avro_block_codec;
pub(crate) mod avro_columns;
pub(crate) mod avro_header;
pub mod column_stats;
pub mod int_map;
#[cfg(test)]
mod legacy_avro_decoder;
pub mod manifest;
mod manifest_columns;
pub mod manifest_list;
mod metadata_checks;
pub mod name_mapping;
pub mod partition;
pub mod schema;
pub mod snapshot;
pub mod sort_order;
pub mod table_metadata;
mod table_metadata_builder;
pub mod table_update;
pub mod types;
pub mod values;

pub use column_stats::ColumnStats;
pub use int_map::IntMap;
pub use manifest::{
    BoundBytes, DataContentType, DataFile, DataFileFormat, ManifestEntry, ManifestStatus,
};
pub use manifest_list::{FieldSummary, ManifestContent, ManifestFile};
pub use partition::{PartitionField, PartitionSpec, Transform};
pub use schema::Schema;
pub use snapshot::{
    BlobMetadata, PartitionStatisticsFile, Snapshot, SnapshotReference, StatisticsFile,
};
pub use sort_order::{NullOrder, SortDirection, SortField, SortOrder};
pub use table_metadata::{FormatVersion, TableMetadata, MAIN_BRANCH};
pub use table_metadata_builder::TableMetadataBuilder;
pub use table_update::{TableCommit, TableRequirement, TableUpdate};
pub use types::{ListType, MapType, NestedField, PrimitiveType, StructType, Type};
pub use values::Literal;
