//! Writing v1, v2 and v3 manifests (spec: "Manifests", the `manifest_entry` and `data_file`
//! structs with their field ids).
//!
//! [`ManifestWriter`] collects entries of one content type (data or deletes) written
//! under one partition spec, and [`ManifestWriter::finish`] encodes them as an Avro
//! object container (deflate codec, as Java writes) with the key-value metadata readers
//! expect (`schema`, `schema-id`, `partition-spec`, `partition-spec-id`,
//! `format-version`, `content`), and returns the manifest's entry for the manifest list
//! with its counts and partition field summaries.

use std::cmp::Ordering;

use apache_avro::types::Value;
use apache_avro::{Codec, Schema as AvroSchema, Writer};
use serde_json::json;

use super::avro_values::{none, optional_field, some, with_header_schema};
use super::bounds::literal_to_bytes;
use crate::error::{Error, Result};
use crate::expr::compare;
use crate::spec::{
    DataContentType, DataFile, DataFileFormat, FieldSummary, FormatVersion, IntMap, Literal,
    ManifestContent, ManifestEntry, ManifestFile, ManifestStatus, NestedField, PartitionSpec,
    PrimitiveType, Schema, Transform, Type,
};

/// The bytes of the smallest two's-complement `fixed` that holds every unscaled value
/// of precision `precision` (spec: "Avro", decimal as `fixed`).
pub(crate) fn decimal_required_bytes(precision: u32) -> usize {
    let max = 10f64.powi(precision as i32);
    (1..=16usize)
        .find(|n| 2f64.powi((8 * *n as i32) - 1) >= max)
        .unwrap_or(16)
}

/// The Avro schema of a primitive partition value (spec: "Avro" type mapping); `field_id`
/// names the `fixed` types uniquely within the manifest schema.
fn avro_primitive(ty: &PrimitiveType, field_id: i32) -> Result<serde_json::Value> {
    Ok(match ty {
        PrimitiveType::Boolean => json!("boolean"),
        PrimitiveType::Int => json!("int"),
        PrimitiveType::Long => json!("long"),
        PrimitiveType::Float => json!("float"),
        PrimitiveType::Double => json!("double"),
        PrimitiveType::Date => json!({"type": "int", "logicalType": "date"}),
        PrimitiveType::Time => json!({"type": "long", "logicalType": "time-micros"}),
        PrimitiveType::Timestamp | PrimitiveType::Timestamptz => {
            json!({"type": "long", "logicalType": "timestamp-micros",
                   "adjust-to-utc": *ty == PrimitiveType::Timestamptz})
        }
        PrimitiveType::String => json!("string"),
        PrimitiveType::Binary => json!("bytes"),
        PrimitiveType::TimestampNs | PrimitiveType::TimestamptzNs => {
            json!({"type": "long", "logicalType": "timestamp-nanos",
                   "adjust-to-utc": *ty == PrimitiveType::TimestamptzNs})
        }
        PrimitiveType::Decimal { precision, scale } => json!({
            "type": "fixed", "name": format!("decimal_{field_id}"),
            "size": decimal_required_bytes(*precision),
            "logicalType": "decimal", "precision": precision, "scale": scale
        }),
        // plain fixed[16], without Java's `logicalType: uuid`: apache-avro 0.21 parses that
        // as a string-encoded UUID, and PyIceberg 0.12 reads it as `uuid.UUID` values that
        // its partition pruning compares with bytes, dropping every file
        PrimitiveType::Uuid => {
            json!({"type": "fixed", "name": format!("uuid_{field_id}"), "size": 16})
        }
        PrimitiveType::Fixed(len) => {
            json!({"type": "fixed", "name": format!("fixed_{field_id}"), "size": len})
        }
        other => {
            return Err(Error::unsupported(format!(
                "writing partition values of type {other}"
            )))
        }
    })
}

/// An Iceberg int-keyed map as Avro: an array of `{key, value}` records
/// (spec: "Avro", maps with non-string keys).
fn int_map_schema(name: &str, key_id: i32, value_id: i32, value: &str) -> serde_json::Value {
    json!(["null", {
        "type": "array",
        "logicalType": "map",
        "items": {
            "type": "record",
            "name": name,
            "fields": [
                {"name": "key", "type": "int", "field-id": key_id},
                {"name": "value", "type": value, "field-id": value_id}
            ]
        }
    }])
}

/// The `manifest_entry` Avro schema of `version` for a partition tuple of
/// `partition_fields`: v2's; v3 adds `first_row_id`, `content_offset` and
/// `content_size_in_bytes`; v1's has no sequence numbers, a required `snapshot_id`, and a
/// `data_file` without `content`, `equality_ids` and `referenced_data_file` but with the
/// deprecated `block_size_in_bytes` (spec: "Manifests", the v1 column of each field).
fn manifest_entry_schema(
    partition_fields: &[NestedField],
    version: FormatVersion,
) -> Result<serde_json::Value> {
    let v3 = version >= FormatVersion::V3;
    let partition = partition_fields
        .iter()
        .map(|f| {
            let ty = match f.field_type.as_primitive() {
                Some(p) => avro_primitive(p, f.id)?,
                None => return Err(Error::unsupported("nested partition values")),
            };
            Ok(json!({"name": f.name, "type": ["null", ty], "default": null, "field-id": f.id}))
        })
        .collect::<Result<Vec<_>>>()?;
    let data_file = json!({
        "type": "record",
        "name": "r2",
        "fields": [
            {"name": "content", "type": "int", "field-id": 134},
            {"name": "file_path", "type": "string", "field-id": 100},
            {"name": "file_format", "type": "string", "field-id": 101},
            {"name": "partition", "type": {"type": "record", "name": "r102", "fields": partition}, "field-id": 102},
            {"name": "record_count", "type": "long", "field-id": 103},
            {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
            {"name": "column_sizes", "type": int_map_schema("k117_v118", 117, 118, "long"), "default": null, "field-id": 108},
            {"name": "value_counts", "type": int_map_schema("k119_v120", 119, 120, "long"), "default": null, "field-id": 109},
            {"name": "null_value_counts", "type": int_map_schema("k121_v122", 121, 122, "long"), "default": null, "field-id": 110},
            {"name": "nan_value_counts", "type": int_map_schema("k138_v139", 138, 139, "long"), "default": null, "field-id": 137},
            {"name": "lower_bounds", "type": int_map_schema("k126_v127", 126, 127, "bytes"), "default": null, "field-id": 125},
            {"name": "upper_bounds", "type": int_map_schema("k129_v130", 129, 130, "bytes"), "default": null, "field-id": 128},
            optional_field("key_metadata", json!("bytes"), 131),
            optional_field("split_offsets", json!({"type": "array", "items": "long", "element-id": 133}), 132),
            optional_field("equality_ids", json!({"type": "array", "items": "int", "element-id": 136}), 135),
            optional_field("sort_order_id", json!("int"), 140),
            optional_field("referenced_data_file", json!("string"), 143),
        ]
    });
    let mut data_file = data_file;
    if version == FormatVersion::V1 {
        if let Some(fields) = data_file["fields"].as_array_mut() {
            fields.retain(|f| {
                !matches!(
                    f["name"].as_str(),
                    Some("content" | "equality_ids" | "referenced_data_file")
                )
            });
            // after file_size_in_bytes
            fields.insert(
                5,
                json!({"name": "block_size_in_bytes", "type": "long", "field-id": 105}),
            );
        }
        return Ok(json!({
            "type": "record",
            "name": "manifest_entry",
            "fields": [
                {"name": "status", "type": "int", "field-id": 0},
                {"name": "snapshot_id", "type": "long", "field-id": 1},
                {"name": "data_file", "type": data_file, "field-id": 2},
            ]
        }));
    }
    if v3 {
        if let Some(fields) = data_file["fields"].as_array_mut() {
            fields.extend([
                optional_field("first_row_id", json!("long"), 142),
                optional_field("content_offset", json!("long"), 144),
                optional_field("content_size_in_bytes", json!("long"), 145),
            ]);
        }
    }
    Ok(json!({
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            {"name": "status", "type": "int", "field-id": 0},
            optional_field("snapshot_id", json!("long"), 1),
            optional_field("sequence_number", json!("long"), 3),
            optional_field("file_sequence_number", json!("long"), 4),
            {"name": "data_file", "type": data_file, "field-id": 2},
        ]
    }))
}

fn opt_long(v: Option<i64>) -> Value {
    v.map_or_else(none, |v| some(Value::Long(v)))
}

/// An Iceberg `map<int, T>` (field id → value) as Avro key/value records, keys sorted;
/// null when not written ([`IntMap::is_written`]).
fn map_value<T>(m: &IntMap<T>, f: impl Fn(&T) -> Value) -> Value {
    // a map read as `{}` stays `{}`; one never written stays null
    if !m.is_written() {
        return none();
    }
    // pairs come in rising field-id order
    some(Value::Array(
        m.iter()
            .map(|(k, v)| {
                Value::Record(vec![("key".into(), Value::Int(*k)), ("value".into(), f(v))])
            })
            .collect(),
    ))
}

fn partition_value(lit: &Option<Literal>) -> Result<Value> {
    let Some(lit) = lit else {
        return Ok(none());
    };
    Ok(some(match lit {
        Literal::Boolean(b) => Value::Boolean(*b),
        Literal::Int(v) => Value::Int(*v),
        Literal::Date(v) => Value::Date(*v),
        Literal::Long(v) => Value::Long(*v),
        Literal::Time(v) => Value::TimeMicros(*v),
        Literal::Timestamp(v) | Literal::Timestamptz(v) => Value::TimestampMicros(*v),
        Literal::Float(v) => Value::Float(*v),
        Literal::Double(v) => Value::Double(*v),
        Literal::String(s) => Value::String(s.clone()),
        Literal::Binary(b) => Value::Bytes(b.clone()),
        Literal::TimestampNs(v) | Literal::TimestamptzNs(v) => Value::TimestampNanos(*v),
        Literal::Decimal { unscaled, .. } => {
            Value::Decimal(apache_avro::Decimal::from(unscaled.to_be_bytes().to_vec()))
        }
        Literal::Uuid(b) => Value::Fixed(16, b.to_vec()),
        Literal::Fixed(b) => Value::Fixed(b.len(), b.clone()),
    }))
}

fn format_name(f: DataFileFormat) -> &'static str {
    match f {
        DataFileFormat::Parquet => "PARQUET",
        DataFileFormat::Avro => "AVRO",
        DataFileFormat::Orc => "ORC",
        DataFileFormat::Puffin => "PUFFIN",
    }
}

/// The Avro name of partition field `i`: its own name when it is a valid Avro name,
/// else `p{i}` (readers match partition values by position and field id).
fn avro_field_name(name: &str, i: usize) -> String {
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        name.to_string()
    } else {
        format!("p{i}")
    }
}

/// `block_size_in_bytes` of v1 data files: deprecated, required, written as Java does
/// (its default, 64 MiB).
const V1_BLOCK_SIZE: i64 = 64 * 1024 * 1024;

fn data_file_value(
    f: &DataFile,
    partition_fields: &[NestedField],
    version: FormatVersion,
) -> Result<Value> {
    let v3 = version >= FormatVersion::V3;
    let content = match f.content {
        DataContentType::Data => 0,
        DataContentType::PositionDeletes => 1,
        DataContentType::EqualityDeletes => 2,
    };
    let partition = f
        .partition
        .iter()
        .zip(partition_fields)
        .map(|(v, field)| Ok((field.name.clone(), partition_value(v)?)))
        .collect::<Result<Vec<_>>>()?;
    let list = |items: Vec<Value>| {
        if items.is_empty() {
            none()
        } else {
            some(Value::Array(items))
        }
    };
    let mut fields: Vec<(String, Value)> = vec![
        ("content".into(), Value::Int(content)),
        ("file_path".into(), Value::String(f.file_path.clone())),
        (
            "file_format".into(),
            Value::String(format_name(f.file_format).into()),
        ),
        ("partition".into(), Value::Record(partition)),
        ("record_count".into(), Value::Long(f.record_count)),
        (
            "file_size_in_bytes".into(),
            Value::Long(f.file_size_in_bytes),
        ),
        (
            "column_sizes".into(),
            map_value(&f.column_sizes, |v| Value::Long(*v)),
        ),
        (
            "value_counts".into(),
            map_value(&f.value_counts, |v| Value::Long(*v)),
        ),
        (
            "null_value_counts".into(),
            map_value(&f.null_value_counts, |v| Value::Long(*v)),
        ),
        (
            "nan_value_counts".into(),
            map_value(&f.nan_value_counts, |v| Value::Long(*v)),
        ),
        (
            "lower_bounds".into(),
            map_value(&f.lower_bounds, |v| Value::Bytes(v.to_vec())),
        ),
        (
            "upper_bounds".into(),
            map_value(&f.upper_bounds, |v| Value::Bytes(v.to_vec())),
        ),
        (
            "key_metadata".into(),
            f.key_metadata
                .clone()
                .map_or_else(none, |b| some(Value::Bytes(b))),
        ),
        (
            "split_offsets".into(),
            list(f.split_offsets.iter().map(|v| Value::Long(*v)).collect()),
        ),
        (
            "equality_ids".into(),
            list(f.equality_ids.iter().map(|v| Value::Int(*v)).collect()),
        ),
        (
            "sort_order_id".into(),
            f.sort_order_id.map_or_else(none, |v| some(Value::Int(v))),
        ),
        (
            "referenced_data_file".into(),
            f.referenced_data_file
                .clone()
                .map_or_else(none, |s| some(Value::String(s))),
        ),
    ];
    if version == FormatVersion::V1 {
        fields.retain(|(name, _)| {
            !matches!(
                name.as_str(),
                "content" | "equality_ids" | "referenced_data_file"
            )
        });
        // after file_size_in_bytes
        fields.insert(
            5,
            ("block_size_in_bytes".into(), Value::Long(V1_BLOCK_SIZE)),
        );
    }
    if v3 {
        fields.extend([
            ("first_row_id".into(), opt_long(f.first_row_id)),
            ("content_offset".into(), opt_long(f.content_offset)),
            (
                "content_size_in_bytes".into(),
                opt_long(f.content_size_in_bytes),
            ),
        ]);
    }
    Ok(Value::Record(fields))
}

/// The running summary of one partition field over a manifest's entries.
#[derive(Default)]
struct SummaryBuilder {
    contains_null: bool,
    contains_nan: bool,
    lower: Option<Literal>,
    upper: Option<Literal>,
}

impl SummaryBuilder {
    fn update(&mut self, v: &Option<Literal>) {
        let Some(v) = v else {
            self.contains_null = true;
            return;
        };
        if matches!(v, Literal::Float(f) if f.is_nan())
            || matches!(v, Literal::Double(d) if d.is_nan())
        {
            self.contains_nan = true;
            return;
        }
        if self
            .lower
            .as_ref()
            .is_none_or(|l| compare(v, l) == Some(Ordering::Less))
        {
            self.lower = Some(v.clone());
        }
        if self
            .upper
            .as_ref()
            .is_none_or(|u| compare(v, u) == Some(Ordering::Greater))
        {
            self.upper = Some(v.clone());
        }
    }

    fn finish(self) -> FieldSummary {
        FieldSummary {
            contains_null: self.contains_null,
            contains_nan: Some(self.contains_nan),
            lower_bound: self.lower.as_ref().map(literal_to_bytes),
            upper_bound: self.upper.as_ref().map(literal_to_bytes),
        }
    }
}

/// One entry to write: its status, file and (for carried-over entries) explicit
/// sequence numbers. `None` sequence numbers are inherited by readers from the
/// manifest list (spec: "Sequence Number Inheritance"); only ADDED entries may do so.
#[derive(Debug, Clone)]
pub struct NewEntry {
    /// `status` (0).
    pub status: ManifestStatus,
    /// `sequence_number` (3), the data sequence number; `None` to inherit.
    pub data_sequence_number: Option<i64>,
    /// `file_sequence_number` (4); `None` to inherit.
    pub file_sequence_number: Option<i64>,
    /// `snapshot_id` (1); `None`: the writer's snapshot (ADDED and DELETED entries).
    pub snapshot_id: Option<i64>,
    /// `data_file` (2).
    pub data_file: DataFile,
}

impl NewEntry {
    /// An ADDED entry whose sequence numbers are inherited.
    pub fn added(data_file: DataFile) -> Self {
        Self {
            status: ManifestStatus::Added,
            data_sequence_number: None,
            file_sequence_number: None,
            snapshot_id: None,
            data_file,
        }
    }

    /// A carried-over EXISTING entry: the snapshot that added the file and its sequence
    /// numbers are kept (spec: "Manifests", entry `status`).
    pub fn existing(entry: &ManifestEntry) -> Self {
        Self {
            status: ManifestStatus::Existing,
            data_sequence_number: Some(entry.data_sequence_number),
            file_sequence_number: Some(entry.file_sequence_number),
            snapshot_id: Some(entry.snapshot_id),
            data_file: entry.data_file.clone(),
        }
    }

    /// A DELETED entry: the file is removed by the writer's snapshot; its sequence
    /// numbers are kept.
    pub fn deleted(entry: &ManifestEntry) -> Self {
        Self {
            status: ManifestStatus::Deleted,
            data_sequence_number: Some(entry.data_sequence_number),
            file_sequence_number: Some(entry.file_sequence_number),
            snapshot_id: None,
            data_file: entry.data_file.clone(),
        }
    }
}

/// Writes one v2 (or, [`ManifestWriter::with_format_version`], v1 or v3) manifest (Avro) of
/// data or delete files under one partition spec.
pub struct ManifestWriter {
    /// The schema the header states (the spec's JSON, see `avro_values::with_header_schema`).
    header_schema: serde_json::Value,
    /// The schema apache-avro encodes the entries with.
    avro_schema: AvroSchema,
    metadata: Vec<(String, String)>,
    content: ManifestContent,
    spec_id: i32,
    snapshot_id: i64,
    sequence_number: i64,
    values: Vec<Value>,
    /// The partition tuple's fields, named as Avro field names.
    partition_fields: Vec<NestedField>,
    summaries: Vec<SummaryBuilder>,
    counts: [(i32, i64); 3],
    min_sequence_number: Option<i64>,
    version: FormatVersion,
}

impl ManifestWriter {
    /// A writer for a manifest added by snapshot `snapshot_id` with sequence number
    /// `sequence_number`, holding files of `content` written under `spec`.
    ///
    /// `schemas` are the table's schemas, as [`TableMetadata::schemas_newest_first`]
    /// lists them: the first, the current schema, is the manifest's `schema`; all type
    /// the partition tuple ([`PartitionSpec::partition_type`]), so a field of an older
    /// spec whose source column the current schema dropped is written with the type its
    /// values have.
    ///
    /// Errors: no schema, or a partition field whose type cannot be written
    /// ([`crate::ErrorKind::Unsupported`]: an `identity` or `truncate` field whose source
    /// column is in none of `schemas`, named with its spec and source field id). A `void`
    /// field whose source column is in none of them (a v1 table's dropped partition field
    /// whose column was dropped too, when only the current schema is given) is written as
    /// an optional `int`: its values are all null, so the type holds none of them. (Java
    /// writes its `UnknownType`, Avro `null`, which arrow-avro 59 cannot decode inside
    /// the partition record.)
    ///
    /// [`TableMetadata::schemas_newest_first`]: crate::spec::TableMetadata::schemas_newest_first
    pub fn new(
        schemas: &[&Schema],
        spec: &PartitionSpec,
        content: ManifestContent,
        snapshot_id: i64,
        sequence_number: i64,
    ) -> Result<Self> {
        let schema = schemas.first().ok_or_else(|| {
            Error::invalid_argument(format!(
                "a manifest of partition spec {} needs the table's schema",
                spec.spec_id
            ))
        })?;
        let mut partition_type = spec.partition_type(schemas)?;
        for (f, pf) in partition_type.iter_mut().zip(&spec.fields) {
            if pf.transform == Transform::Void
                && *f.field_type == Type::Primitive(PrimitiveType::Unknown)
            {
                *f = NestedField::optional(f.id, &f.name, Type::Primitive(PrimitiveType::Int));
            }
        }
        if let Some((f, pf)) = partition_type
            .iter()
            .zip(&spec.fields)
            .find(|(f, _)| *f.field_type == Type::Primitive(PrimitiveType::Unknown))
        {
            return Err(Error::unsupported(format!(
                "writing partition field '{}' of spec {}: its source column (field id {}) is \
                 in none of the table's schemas, so the type of its values is unknown",
                f.name, spec.spec_id, pf.source_id
            )));
        }
        let partition_fields: Vec<NestedField> = partition_type
            .iter()
            .enumerate()
            .map(|(i, f)| {
                NestedField::optional(f.id, avro_field_name(&f.name, i), (*f.field_type).clone())
            })
            .collect();
        let header_schema = manifest_entry_schema(&partition_fields, FormatVersion::V2)?;
        let avro_schema = AvroSchema::parse(&header_schema)
            .map_err(|e| Error::invalid_data("manifest Avro schema").with_source(e))?;
        let schema_json = serde_json::to_string(schema)
            .map_err(|e| Error::invalid_data("table schema to JSON").with_source(e))?;
        let spec_json = serde_json::to_string(&spec.fields)
            .map_err(|e| Error::invalid_data("partition spec to JSON").with_source(e))?;
        let metadata = vec![
            ("schema".to_string(), schema_json),
            ("schema-id".to_string(), schema.schema_id.to_string()),
            ("partition-spec".to_string(), spec_json),
            ("partition-spec-id".to_string(), spec.spec_id.to_string()),
            ("format-version".to_string(), "2".to_string()),
            (
                "content".to_string(),
                match content {
                    ManifestContent::Data => "data",
                    ManifestContent::Deletes => "deletes",
                }
                .to_string(),
            ),
        ];
        Ok(Self {
            header_schema,
            avro_schema,
            metadata,
            content,
            spec_id: spec.spec_id,
            snapshot_id,
            sequence_number,
            values: vec![],
            summaries: partition_fields
                .iter()
                .map(|_| SummaryBuilder::default())
                .collect(),
            partition_fields,
            counts: [(0, 0); 3],
            min_sequence_number: None,
            version: FormatVersion::V2,
        })
    }

    /// Write the manifest in `format_version`'s layout: v3 adds the data file's
    /// `first_row_id` (null for an added data file, which inherits it; spec: "Row
    /// Lineage"), `content_offset` and `content_size_in_bytes`; v1 has no sequence
    /// numbers and no delete files (see `manifest_entry_schema`).
    ///
    /// Errors: a v1 manifest of delete files ([`crate::ErrorKind::Unsupported`]: v1
    /// has none).
    pub fn with_format_version(mut self, format_version: FormatVersion) -> Result<Self> {
        if format_version == FormatVersion::V1 && self.content == ManifestContent::Deletes {
            return Err(Error::unsupported(
                "delete files in a format-version 1 table (v1 has no delete files)",
            ));
        }
        if format_version == self.version {
            return Ok(self);
        }
        self.header_schema = manifest_entry_schema(&self.partition_fields, format_version)?;
        self.avro_schema = AvroSchema::parse(&self.header_schema)
            .map_err(|e| Error::invalid_data("manifest Avro schema").with_source(e))?;
        for (k, v) in &mut self.metadata {
            if k == "format-version" {
                *v = (format_version as i32).to_string();
            }
        }
        if format_version == FormatVersion::V1 {
            // v1 manifests hold data files only and say nothing of content
            self.metadata.retain(|(k, _)| k != "content");
        }
        self.version = format_version;
        Ok(self)
    }

    /// Add an entry.
    ///
    /// Errors ([`ErrorKind::InvalidArgument`](crate::ErrorKind) naming the file): a file
    /// whose content does not match the manifest's; a partition tuple of the wrong arity
    /// or holding a value not of its field's type
    /// ([`check_partition_types`](super::added_file_checks::check_partition_types)); an
    /// added file with a negative count
    /// ([`check_counts`](super::added_file_checks::check_counts)).
    pub fn add(&mut self, entry: &NewEntry) -> Result<()> {
        let f = &entry.data_file;
        if (f.content == DataContentType::Data) != (self.content == ManifestContent::Data) {
            return Err(Error::invalid_argument(format!(
                "file '{}' of content {:?} in a {:?} manifest",
                f.file_path, f.content, self.content
            )));
        }
        if f.partition.len() != self.summaries.len() {
            return Err(Error::invalid_argument(format!(
                "file '{}' has {} partition values, spec {} has {} fields",
                f.file_path,
                f.partition.len(),
                self.spec_id,
                self.summaries.len()
            )));
        }
        super::added_file_checks::check_partition_types(f, self.spec_id, &self.partition_fields)?;
        if entry.status == ManifestStatus::Added {
            super::added_file_checks::check_counts(f)?;
        }
        let status = match entry.status {
            ManifestStatus::Existing => 0,
            ManifestStatus::Added => 1,
            ManifestStatus::Deleted => 2,
        };
        // every entry, deleted ones too, counts in the partition summaries, as Java's
        // `ManifestWriter.addEntry` counts it (icefloe left deleted ones out: a manifest of
        // a `DELETE` showed narrower bounds than Java's); the minimum sequence number is
        // of live entries only
        for (s, v) in self.summaries.iter_mut().zip(&f.partition) {
            s.update(v);
        }
        if entry.status != ManifestStatus::Deleted {
            let seq = entry.data_sequence_number.unwrap_or(self.sequence_number);
            self.min_sequence_number = Some(self.min_sequence_number.map_or(seq, |m| m.min(seq)));
        }
        let count = &mut self.counts[status as usize];
        count.0 += 1;
        count.1 = count.1.saturating_add(f.record_count);
        let snapshot_id = Value::Long(entry.snapshot_id.unwrap_or(self.snapshot_id));
        let data_file = data_file_value(f, &self.partition_fields, self.version)?;
        self.values
            .push(Value::Record(if self.version == FormatVersion::V1 {
                vec![
                    ("status".into(), Value::Int(status)),
                    ("snapshot_id".into(), snapshot_id),
                    ("data_file".into(), data_file),
                ]
            } else {
                vec![
                    ("status".into(), Value::Int(status)),
                    ("snapshot_id".into(), some(snapshot_id)),
                    (
                        "sequence_number".into(),
                        opt_long(entry.data_sequence_number),
                    ),
                    (
                        "file_sequence_number".into(),
                        opt_long(entry.file_sequence_number),
                    ),
                    ("data_file".into(), data_file),
                ]
            }));
        Ok(())
    }

    /// Number of entries added so far.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Encode the manifest. Returns its bytes and its manifest-list entry for
    /// `manifest_path` (with `manifest_length` = the byte length).
    pub fn finish(self, manifest_path: &str) -> Result<(Vec<u8>, ManifestFile)> {
        let avro_err = |e: apache_avro::Error| {
            Error::invalid_data(format!("writing manifest '{manifest_path}'")).with_source(e)
        };
        let mut writer = Writer::with_codec(
            &self.avro_schema,
            Vec::new(),
            Codec::Deflate(Default::default()),
        );
        for (k, v) in &self.metadata {
            writer.add_user_metadata(k.clone(), v).map_err(avro_err)?;
        }
        for v in self.values {
            writer.append_value_ref(&v).map_err(avro_err)?;
        }
        let bytes = with_header_schema(
            writer.into_inner().map_err(avro_err)?,
            &self.header_schema,
            &format!("manifest '{manifest_path}'"),
        )?;
        let [existing, added, deleted] = self.counts;
        let file = ManifestFile {
            manifest_path: manifest_path.to_string(),
            manifest_length: bytes.len() as i64,
            partition_spec_id: self.spec_id,
            content: self.content,
            sequence_number: self.sequence_number,
            min_sequence_number: self.min_sequence_number.unwrap_or(self.sequence_number),
            added_snapshot_id: self.snapshot_id,
            added_files_count: Some(added.0),
            existing_files_count: Some(existing.0),
            deleted_files_count: Some(deleted.0),
            added_rows_count: Some(added.1),
            existing_rows_count: Some(existing.1),
            deleted_rows_count: Some(deleted.1),
            partitions: Some(
                self.summaries
                    .into_iter()
                    .map(SummaryBuilder::finish)
                    .collect(),
            ),
            key_metadata: None,
            first_row_id: None,
        };
        Ok((bytes, file))
    }
}
