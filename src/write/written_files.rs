//! The data files a writer hands to the one that commits them, across processes (a
//! distributed `INSERT`: tasks on workers write, the coordinator commits once).
//!
//! The files travel as an in-memory manifest: ADDED `manifest_entry` records in the
//! spec's Avro layout ("Manifests"), written by [`ManifestWriter`] and read back by
//! [`parse_manifest`], so every `data_file` field (partition tuple, metrics, bounds,
//! split offsets, `sort_order_id`) crosses exactly as a commit would store it. The bytes
//! are never stored as a table file. (Iceberg Flink's committer carries its writers'
//! files between operators the same way.)

use crate::error::{Error, Result};
use crate::spec::manifest::parse_manifest;
use crate::spec::{
    DataContentType, DataFile, FormatVersion, ManifestContent, ManifestFile, PartitionSpec, Schema,
};
use crate::write::{ManifestWriter, NewEntry};

/// What the bytes are called in errors (they have no location).
const WHAT: &str = "written data files (in-memory manifest)";

/// Encode `files` (data files written under `spec` of `schema`) for the committer: the
/// Avro bytes of a manifest of ADDED entries, in the v3 layout for a v3 table and the v2
/// layout otherwise (v2 holds every field a v1 data file has).
///
/// Errors: a file that is not a data file or whose partition tuple does not fit `spec`
/// ([`crate::ErrorKind::InvalidArgument`]); a partition type that cannot be written.
pub fn encode_written_files(
    files: &[DataFile],
    schema: &Schema,
    spec: &PartitionSpec,
    format_version: FormatVersion,
) -> Result<Vec<u8>> {
    // snapshot id and sequence number are unknown until the commit: the entries inherit
    let mut writer = ManifestWriter::new(&[schema], spec, ManifestContent::Data, 0, 0)?;
    if format_version == FormatVersion::V3 {
        writer = writer.with_format_version(FormatVersion::V3)?;
    }
    for f in files {
        if f.content != DataContentType::Data {
            return Err(Error::invalid_argument(format!(
                "file '{}' is not a data file",
                f.file_path
            )));
        }
        writer.add(&NewEntry::added(f.clone()))?;
    }
    Ok(writer.finish(WHAT)?.0)
}

/// Decode what [`encode_written_files`] encoded with the same `schema` and `spec`: the
/// data files, in order.
///
/// Errors: bytes that are not such a manifest, or whose partition tuples do not fit
/// `spec` ([`crate::ErrorKind::InvalidData`]).
pub fn decode_written_files(
    bytes: &[u8],
    schema: &Schema,
    spec: &PartitionSpec,
) -> Result<Vec<DataFile>> {
    let manifest = ManifestFile {
        manifest_path: WHAT.to_string(),
        manifest_length: bytes.len() as i64,
        partition_spec_id: spec.spec_id,
        content: ManifestContent::Data,
        sequence_number: 0,
        min_sequence_number: 0,
        added_snapshot_id: 0,
        added_files_count: None,
        existing_files_count: None,
        deleted_files_count: None,
        added_rows_count: None,
        existing_rows_count: None,
        deleted_rows_count: None,
        partitions: None,
        key_metadata: None,
        first_row_id: None,
    };
    let entries = parse_manifest(bytes, WHAT, &manifest, spec, &[schema])?;
    Ok(entries.into_iter().map(|e| e.data_file).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{
        IntMap, Literal, NestedField, PartitionField, PrimitiveType, Transform, Type,
    };
    use crate::write::empty_data_file;

    fn table() -> (Schema, PartitionSpec) {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
                NestedField::optional(2, "name", Type::Primitive(PrimitiveType::String)),
            ],
        );
        let spec = PartitionSpec {
            spec_id: 3,
            fields: vec![PartitionField {
                source_id: 2,
                field_id: Some(1000),
                name: "name_trunc".into(),
                transform: Transform::Truncate(2),
            }],
        };
        (schema, spec)
    }

    fn file(path: &str, partition: Option<&str>) -> DataFile {
        DataFile {
            partition: vec![partition.map(|p| Literal::String(p.into()))],
            record_count: 7,
            file_size_in_bytes: 1234,
            column_sizes: IntMap::from([(1, 40), (2, 50)]),
            value_counts: IntMap::from([(1, 7), (2, 7)]),
            null_value_counts: IntMap::from([(1, 0), (2, 2)]),
            nan_value_counts: IntMap::new(),
            lower_bounds: IntMap::from([(1, 3i64.to_le_bytes().to_vec()), (2, b"ab".to_vec())]),
            upper_bounds: IntMap::from([(1, 9i64.to_le_bytes().to_vec()), (2, b"az".to_vec())]),
            split_offsets: vec![4],
            sort_order_id: Some(1),
            ..empty_data_file(path, DataContentType::Data)
        }
    }

    #[test]
    fn written_files_round_trip_field_by_field() {
        let (schema, spec) = table();
        let files = vec![
            file("s3://b/t/data/name_trunc=ab/00000-0-u.parquet", Some("ab")),
            file("s3://b/t/data/name_trunc=null/00000-1-u%20x.parquet", None),
        ];
        for version in [FormatVersion::V1, FormatVersion::V2, FormatVersion::V3] {
            let bytes = encode_written_files(&files, &schema, &spec, version).expect("encode");
            let back = decode_written_files(&bytes, &schema, &spec).expect("decode");
            assert_eq!(back, files, "{version:?}");
        }
        let none = encode_written_files(&[], &schema, &spec, FormatVersion::V2).expect("encode");
        assert!(decode_written_files(&none, &schema, &spec)
            .expect("decode")
            .is_empty());
    }

    #[test]
    fn delete_files_and_garbage_are_refused() {
        let (schema, spec) = table();
        let delete = DataFile {
            partition: vec![None],
            ..empty_data_file("d.parquet", DataContentType::PositionDeletes)
        };
        let err = encode_written_files(&[delete], &schema, &spec, FormatVersion::V2)
            .expect_err("not a data file");
        assert!(err.to_string().contains("d.parquet"), "{err}");
        let err = decode_written_files(b"not avro", &schema, &spec).expect_err("garbage");
        assert!(err.to_string().contains("in-memory manifest"), "{err}");
    }
}
