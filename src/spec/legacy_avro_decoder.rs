//! The decoder manifests and manifest lists had before the columnar one (apache-avro
//! `Value`s converted field by field), kept as the test oracle the columnar decoder is
//! checked against: every `.avro` file of the corpus must decode to the same values.

use apache_avro::types::Value;

use super::avro::{as_bytes, as_long, int_map, partition_literal, read_container, Record};
use super::manifest::{
    partition_field_types, BoundBytes, DataContentType, DataFile, DataFileFormat, ManifestEntry,
    ManifestStatus,
};
use super::manifest_list::{FieldSummary, ManifestContent, ManifestFile};
use super::partition::PartitionSpec;
use super::schema::Schema;
use super::types::PrimitiveType;
use crate::error::{Error, Result};

pub(super) fn parse_manifest_list(bytes: &[u8], location: &str) -> Result<Vec<ManifestFile>> {
    let (values, _) = read_container(bytes, location)?;
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            Record::from_value(v, "manifest_file")
                .and_then(manifest_file_from_record)
                .map_err(|e| e.context(format!("manifest list '{location}', entry {i}")))
        })
        .collect()
}

fn manifest_file_from_record(mut r: Record) -> Result<ManifestFile> {
    let content = match r.opt_int("content")?.unwrap_or(0) {
        0 => ManifestContent::Data,
        1 => ManifestContent::Deletes,
        other => {
            return Err(Error::invalid_data(format!(
                "field 'content': unknown value {other}"
            )))
        }
    };
    // v1 writers name the counts `added_data_files_count` etc.
    let count = |r: &Record, a: &str, b: &str| -> Result<Option<i32>> {
        Ok(r.opt_int(a)?.or(r.opt_int(b)?))
    };
    let partitions = match r.take("partitions") {
        None => None,
        Some(Value::Array(items)) => Some(
            items
                .into_iter()
                .map(|v| {
                    let s = Record::from_value(v, "field_summary")?;
                    Ok(FieldSummary {
                        contains_null: s.opt_bool("contains_null")?.unwrap_or(true),
                        contains_nan: s.opt_bool("contains_nan")?,
                        lower_bound: s.opt_bytes("lower_bound")?,
                        upper_bound: s.opt_bytes("upper_bound")?,
                    })
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        Some(_) => return Err(Error::invalid_data("field 'partitions': expected an array")),
    };
    let sequence_number = r.opt_long("sequence_number")?.unwrap_or(0);
    Ok(ManifestFile {
        manifest_path: r.location("manifest_path")?,
        manifest_length: r.long("manifest_length")?,
        partition_spec_id: r.int("partition_spec_id")?,
        content,
        sequence_number,
        min_sequence_number: r
            .opt_long("min_sequence_number")?
            .unwrap_or(sequence_number),
        added_snapshot_id: r.long("added_snapshot_id")?,
        added_files_count: count(&r, "added_files_count", "added_data_files_count")?,
        existing_files_count: count(&r, "existing_files_count", "existing_data_files_count")?,
        deleted_files_count: count(&r, "deleted_files_count", "deleted_data_files_count")?,
        added_rows_count: r.opt_long("added_rows_count")?,
        existing_rows_count: r.opt_long("existing_rows_count")?,
        deleted_rows_count: r.opt_long("deleted_rows_count")?,
        partitions,
        key_metadata: r.opt_bytes("key_metadata")?,
        first_row_id: r.opt_long("first_row_id")?,
    })
}

pub(super) fn parse_manifest(
    bytes: &[u8],
    location: &str,
    manifest: &ManifestFile,
    spec: &PartitionSpec,
    schemas: &[&Schema],
) -> Result<Vec<ManifestEntry>> {
    let (values, _meta) = read_container(bytes, location)?;
    let types = partition_field_types(spec, schemas)
        .map_err(|e| e.context(format!("manifest '{location}'")))?;
    let mut entries = values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            parse_entry(v, manifest, spec, &types)
                .map_err(|e| e.context(format!("manifest '{location}', entry {i}")))
        })
        .collect::<Result<Vec<_>>>()?;
    super::manifest::inherit_first_row_ids(&mut entries, manifest)?;
    Ok(entries)
}

fn parse_data_file(v: Value, spec: &PartitionSpec, types: &[PrimitiveType]) -> Result<DataFile> {
    let mut r = Record::from_value(v, "data_file")?;
    let content = match r.opt_int("content")?.unwrap_or(0) {
        0 => DataContentType::Data,
        1 => DataContentType::PositionDeletes,
        2 => DataContentType::EqualityDeletes,
        other => {
            return Err(Error::invalid_data(format!(
                "field 'content': unknown value {other}"
            )))
        }
    };
    let format = r.string("file_format")?;
    let file_format = match format.to_ascii_uppercase().as_str() {
        "PARQUET" => DataFileFormat::Parquet,
        "AVRO" => DataFileFormat::Avro,
        "ORC" => DataFileFormat::Orc,
        "PUFFIN" => DataFileFormat::Puffin,
        _ => {
            return Err(Error::invalid_data(format!(
                "field 'file_format': unknown format '{format}'"
            )))
        }
    };
    let partition = match r.take("partition") {
        None => vec![],
        Some(p) => {
            let values = Record::from_value(p, "partition")?.into_ordered();
            if values.len() != spec.fields.len() {
                return Err(Error::invalid_data(format!(
                    "field 'partition': {} values for spec {} with {} fields",
                    values.len(),
                    spec.spec_id,
                    spec.fields.len()
                )));
            }
            values
                .into_iter()
                .zip(spec.fields.iter().zip(types))
                .map(|(v, (f, ty))| match ty {
                    PrimitiveType::Unknown => Ok(None),
                    ty => partition_literal(v, ty, &f.name),
                })
                .collect::<Result<Vec<_>>>()?
        }
    };
    let longs = |r: &mut Record, name: &str| int_map(r.take(name), name, as_long);
    let bytes = |r: &mut Record, name: &str| {
        int_map(r.take(name), name, |v| {
            as_bytes(v).map(BoundBytes::from_vec)
        })
    };
    let list_of = |v: Option<Value>, name: &str| -> Result<Vec<i64>> {
        match v {
            None => Ok(vec![]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    as_long(i).ok_or_else(|| {
                        Error::invalid_data(format!("field '{name}': expected numbers"))
                    })
                })
                .collect(),
            Some(_) => Err(Error::invalid_data(format!(
                "field '{name}': expected an array"
            ))),
        }
    };
    let split_offsets = list_of(r.take("split_offsets"), "split_offsets")?;
    let equality_ids = list_of(r.take("equality_ids"), "equality_ids")?
        .into_iter()
        .map(|v| {
            i32::try_from(v).map_err(|_| Error::invalid_data("field 'equality_ids': out of range"))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(DataFile {
        content,
        file_path: r.location("file_path")?,
        file_format,
        partition,
        record_count: r.long("record_count")?,
        file_size_in_bytes: r.long("file_size_in_bytes")?,
        column_sizes: longs(&mut r, "column_sizes")?,
        value_counts: longs(&mut r, "value_counts")?,
        null_value_counts: longs(&mut r, "null_value_counts")?,
        nan_value_counts: longs(&mut r, "nan_value_counts")?,
        lower_bounds: bytes(&mut r, "lower_bounds")?,
        upper_bounds: bytes(&mut r, "upper_bounds")?,
        key_metadata: r.opt_bytes("key_metadata")?,
        split_offsets,
        equality_ids,
        sort_order_id: r.opt_int("sort_order_id")?,
        first_row_id: r.opt_long("first_row_id")?,
        referenced_data_file: match r.opt("referenced_data_file") {
            None => None,
            Some(_) => Some(r.string("referenced_data_file")?),
        },
        content_offset: r.opt_long("content_offset")?,
        content_size_in_bytes: r.opt_long("content_size_in_bytes")?,
    })
}

fn parse_entry(
    v: Value,
    manifest: &ManifestFile,
    spec: &PartitionSpec,
    types: &[PrimitiveType],
) -> Result<ManifestEntry> {
    let mut r = Record::from_value(v, "manifest_entry")?;
    let status = match r.int("status")? {
        0 => ManifestStatus::Existing,
        1 => ManifestStatus::Added,
        2 => ManifestStatus::Deleted,
        other => {
            return Err(Error::invalid_data(format!(
                "field 'status': unknown value {other}"
            )))
        }
    };
    // Inheritance (spec: "Sequence Number Inheritance"): a null sequence number is only
    // valid on an ADDED entry, which takes the manifest's sequence number.
    let inherit = |value: Option<i64>, name: &str| -> Result<i64> {
        match value {
            Some(v) => Ok(v),
            None if status == ManifestStatus::Added || manifest.sequence_number == 0 => {
                Ok(manifest.sequence_number)
            }
            None => Err(Error::invalid_data(format!(
                "field '{name}' is null on an entry that is not ADDED"
            ))),
        }
    };
    let data_sequence_number = inherit(r.opt_long("sequence_number")?, "sequence_number")?;
    let file_sequence_number =
        inherit(r.opt_long("file_sequence_number")?, "file_sequence_number")?;
    let snapshot_id = r
        .opt_long("snapshot_id")?
        .unwrap_or(manifest.added_snapshot_id);
    let data_file = r
        .take("data_file")
        .ok_or_else(|| Error::invalid_data("missing required field 'data_file'"))?;
    Ok(ManifestEntry {
        status,
        snapshot_id,
        data_sequence_number,
        file_sequence_number,
        spec_id: spec.spec_id,
        data_file: parse_data_file(data_file, spec, types)?,
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn avro_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                avro_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "avro") {
                out.push(p);
            }
        }
    }

    /// The spec and schema a manifest was written with, from its key-value metadata
    /// (spec: "Manifests", "partition-spec", "partition-spec-id", "schema").
    fn spec_and_schema(bytes: &[u8]) -> Option<(PartitionSpec, Schema)> {
        let reader = apache_avro::Reader::new(bytes).ok()?;
        let meta = reader.user_metadata();
        let text = |k: &str| meta.get(k).map(|v| String::from_utf8_lossy(v).to_string());
        let schema: Schema = serde_json::from_str(&text("schema")?).ok()?;
        let spec = match text("partition-spec") {
            None => PartitionSpec::unpartitioned(),
            Some(fields) => {
                let id = text("partition-spec-id").unwrap_or_else(|| "0".into());
                serde_json::from_str(&format!(r#"{{"spec-id": {id}, "fields": {fields}}}"#)).ok()?
            }
        };
        Some((spec, schema))
    }

    fn list_entry(sequence_number: i64, first_row_id: Option<i64>) -> ManifestFile {
        ManifestFile {
            manifest_path: "m.avro".into(),
            manifest_length: 1,
            partition_spec_id: 0,
            content: ManifestContent::Data,
            sequence_number,
            min_sequence_number: sequence_number,
            added_snapshot_id: 42,
            added_files_count: None,
            existing_files_count: None,
            deleted_files_count: None,
            added_rows_count: None,
            existing_rows_count: None,
            deleted_rows_count: None,
            partitions: None,
            key_metadata: None,
            first_row_id,
        }
    }

    fn same<T: PartialEq + std::fmt::Debug>(
        what: &Path,
        old: Result<T>,
        new: Result<T>,
        differ: &mut Vec<String>,
    ) -> bool {
        match (old, new) {
            (Ok(a), Ok(b)) if a == b => true,
            (Err(_), Err(_)) => false,
            (a, b) => {
                differ.push(format!("{}: old {a:?}\n new {b:?}", what.display()));
                false
            }
        }
    }

    /// Every manifest list and manifest of the corpus (`../shared/corpus` when present)
    /// and of `testdata` decodes to the same values with the columnar decoder as with
    /// the `Value` decoder, or fails with both.
    #[test]
    fn the_columnar_decoder_reads_every_corpus_avro_file_like_the_value_decoder() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let mut files = vec![];
        avro_files(&root.join("../shared/corpus"), &mut files);
        avro_files(&root.join("testdata"), &mut files);
        assert!(!files.is_empty(), "no .avro files in the corpus");
        let (mut lists, mut manifests, mut others, mut decoded) = (0, 0, 0, 0);
        let mut differ = vec![];
        for path in &files {
            let bytes = std::fs::read(path).expect("read corpus file");
            let location = path.to_string_lossy();
            let header = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
            if header.contains("\"manifest_entry\"") {
                manifests += 1;
                let Some((spec, schema)) = spec_and_schema(&bytes) else {
                    differ.push(format!("{location}: no spec/schema in its metadata"));
                    continue;
                };
                // v1-like inheritance (sequence number 0) and v2/v3 inheritance
                for listed in [list_entry(0, None), list_entry(7, Some(1000))] {
                    let old = parse_manifest(&bytes, &location, &listed, &spec, &[&schema]);
                    let new = super::super::manifest::parse_manifest(
                        &bytes,
                        &location,
                        &listed,
                        &spec,
                        &[&schema],
                    );
                    decoded += usize::from(same(path, old, new, &mut differ));
                }
            } else if header.contains("\"manifest_file\"") {
                lists += 1;
                let old = parse_manifest_list(&bytes, &location);
                let new = super::super::manifest_list::parse_manifest_list(&bytes, &location);
                decoded += usize::from(same(path, old, new, &mut differ));
            } else {
                others += 1;
            }
        }
        assert!(
            differ.is_empty(),
            "{} differ:\n{}",
            differ.len(),
            differ.join("\n")
        );
        eprintln!(
            "{} files: {lists} manifest lists, {manifests} manifests, {others} other; \
             {decoded} equal decodes",
            files.len()
        );
        // every list decodes, and each manifest at least once (sequence number 0)
        assert!(
            decoded >= lists + manifests,
            "{decoded} < {lists} + {manifests}"
        );
    }
}
