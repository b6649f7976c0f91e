//! Iceberg schema → Arrow schema, keeping field ids.
//!
//! Each Arrow field carries its Iceberg field id in the metadata key
//! [`PARQUET_FIELD_ID_META_KEY`] (`PARQUET:field_id`), the key the Parquet reader uses for
//! the ids it finds in a file, so table columns and file columns can be matched by id.
//!
//! Type mapping (what a DataFusion user sees):
//! boolean → Boolean, int → Int32, long → Int64, float → Float32, double → Float64,
//! decimal(P,S) → Decimal128(P,S), date → Date32, time → Time64(µs),
//! timestamp → Timestamp(µs, none), timestamptz → Timestamp(µs, "UTC"),
//! timestamp_ns / timestamptz_ns → Timestamp(ns, none / "UTC"), string → Utf8,
//! uuid → FixedSizeBinary(16), fixed(L) → FixedSizeBinary(L), binary → Binary,
//! struct → Struct, list → List, map → Map, unknown → Null.
//! variant, geometry and geography are not supported yet and give an error naming the column.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema as ArrowSchema, TimeUnit};

use super::schema::Schema;
use super::types::{NestedField, PrimitiveType, Type};
use crate::error::{Error, Result};

/// The Arrow field metadata key holding the Iceberg/Parquet field id.
pub const PARQUET_FIELD_ID_META_KEY: &str = "PARQUET:field_id";

/// The Arrow schema of an Iceberg schema, field ids in each field's metadata.
///
/// Errors with [`crate::ErrorKind::Unsupported`] naming the column for variant, geometry
/// and geography.
pub fn schema_to_arrow(schema: &Schema) -> Result<ArrowSchema> {
    let fields = schema
        .columns()
        .iter()
        .map(field_to_arrow)
        .collect::<Result<Vec<_>>>()?;
    Ok(ArrowSchema::new(fields))
}

/// `schema` with every nested field (struct fields at any depth, list elements, map
/// values) marked nullable, top-level columns and map keys as written: the Arrow schema a
/// table provider gives DataFusion, for reads and for the writes it plans.
///
/// Reads: a required field of an optional struct is null wherever the struct is (spec:
/// "Nested Types"), so a reader must not promise it is never null (DataFusion would fold
/// `s.f IS NULL` to false and count `s.f` as `count(*)`).
///
/// Writes: DataFusion 55 casts the values of `INSERT`, `UPDATE … SET` and `MERGE` to
/// the provider's column types, and its struct cast refuses a nullable field into a
/// non-nullable one whatever the values ("Unsupported CAST from Struct(a: Int32) to
/// Struct(a: non-null Int32)"): a required struct with a required field, or a required
/// list element struct, could not be written at all. The writers check every required
/// field's nulls against the Iceberg schema instead, value by value, naming the field
/// (`st.a`, `l.element`, `m.value`: [`crate::write`]'s `conform_batch`), as Spark's
/// `AssertNotNull` in its store assignment does. Map keys stay non-null (Arrow's map
/// keys are, and Iceberg's always are required).
///
/// [`schema_to_arrow`] keeps `required` as written (writers write files with it).
pub fn nullable_nested_fields(schema: &ArrowSchema) -> ArrowSchema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            f.as_ref()
                .clone()
                .with_data_type(nullable_nested_type(f.data_type()))
        })
        .collect();
    ArrowSchema::new_with_metadata(fields, schema.metadata().clone())
}

/// `data_type` with its nested fields nullable, map keys aside (see
/// [`nullable_nested_fields`]).
pub fn nullable_nested_type(data_type: &DataType) -> DataType {
    let nullable = |f: &Arc<Field>| -> Arc<Field> {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(nullable_nested_type(f.data_type()))
                .with_nullable(true),
        )
    };
    match data_type {
        DataType::Struct(children) => DataType::Struct(children.iter().map(nullable).collect()),
        DataType::List(e) => DataType::List(nullable(e)),
        DataType::LargeList(e) => DataType::LargeList(nullable(e)),
        DataType::FixedSizeList(e, n) => DataType::FixedSizeList(nullable(e), *n),
        DataType::Map(entries, sorted) => match entries.data_type() {
            // the entries struct is never null, nor is its key
            DataType::Struct(kv) => DataType::Map(
                Arc::new(
                    entries.as_ref().clone().with_data_type(DataType::Struct(
                        kv.iter()
                            .enumerate()
                            .map(|(i, c)| match i {
                                0 => Arc::new(
                                    c.as_ref()
                                        .clone()
                                        .with_data_type(nullable_nested_type(c.data_type())),
                                ),
                                _ => nullable(c),
                            })
                            .collect(),
                    )),
                ),
                *sorted,
            ),
            other => other.clone(),
        },
        other => other.clone(),
    }
}

/// `schema` without the field ids of nested fields (struct fields, list elements, map
/// entries, keys and values, at any depth): the [`PARQUET_FIELD_ID_META_KEY`] entry goes,
/// other metadata stays. Top-level fields keep theirs (a field's own metadata is not
/// part of its type).
///
/// Arrow compares types with the metadata of their nested fields, so a list column
/// carrying its element's id is not of the type `List(Int32)` that a function rebuilds
/// from a value (DataFusion 55's `ScalarValue` of a list keeps the element field's name
/// and nullability only: `first_value`, `lag`, `any_value` … of such a column failed
/// with "column types must match schema types"). Query engines plan against this schema;
/// the reader matches file columns by the ids of [`schema_to_arrow`], and writers write
/// them.
pub fn without_nested_field_ids(schema: &ArrowSchema) -> ArrowSchema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            f.as_ref()
                .clone()
                .with_data_type(type_without_field_ids(f.data_type()))
        })
        .collect();
    ArrowSchema::new_with_metadata(fields, schema.metadata().clone())
}

/// `data_type` without the field ids of its nested fields, at any depth (see
/// [`without_nested_field_ids`]).
pub fn type_without_field_ids(data_type: &DataType) -> DataType {
    let field = |f: &Arc<Field>| -> Arc<Field> {
        let mut metadata = f.metadata().clone();
        metadata.remove(PARQUET_FIELD_ID_META_KEY);
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(type_without_field_ids(f.data_type()))
                .with_metadata(metadata),
        )
    };
    match data_type {
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::ListView(f) => DataType::ListView(field(f)),
        DataType::LargeListView(f) => DataType::LargeListView(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        DataType::Dictionary(k, v) => {
            DataType::Dictionary(k.clone(), Box::new(type_without_field_ids(v)))
        }
        other => other.clone(),
    }
}

/// The Arrow field for an Iceberg field (with its field id in the metadata).
pub fn field_to_arrow(field: &NestedField) -> Result<Field> {
    let data_type = type_to_arrow(&field.field_type)
        .map_err(|e| e.context(format!("column '{}'", field.name)))?;
    Ok(
        Field::new(&field.name, data_type, !field.required).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            field.id.to_string(),
        )])),
    )
}

/// The Arrow type of an Iceberg primitive type (see the module docs for the mapping).
pub fn primitive_to_arrow(p: &PrimitiveType) -> Result<DataType> {
    Ok(match p {
        PrimitiveType::Boolean => DataType::Boolean,
        PrimitiveType::Int => DataType::Int32,
        PrimitiveType::Long => DataType::Int64,
        PrimitiveType::Float => DataType::Float32,
        PrimitiveType::Double => DataType::Float64,
        PrimitiveType::Decimal { precision, scale } => {
            let precision = u8::try_from(*precision)
                .map_err(|_| Error::invalid_data(format!("decimal precision {precision}")))?;
            let scale = i8::try_from(*scale)
                .map_err(|_| Error::invalid_data(format!("decimal scale {scale}")))?;
            DataType::Decimal128(precision, scale)
        }
        PrimitiveType::Date => DataType::Date32,
        PrimitiveType::Time => DataType::Time64(TimeUnit::Microsecond),
        PrimitiveType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
        PrimitiveType::Timestamptz => {
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        }
        PrimitiveType::TimestampNs => DataType::Timestamp(TimeUnit::Nanosecond, None),
        PrimitiveType::TimestamptzNs => {
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
        }
        PrimitiveType::String => DataType::Utf8,
        PrimitiveType::Uuid => DataType::FixedSizeBinary(16),
        PrimitiveType::Fixed(len) => DataType::FixedSizeBinary(
            i32::try_from(*len).map_err(|_| Error::invalid_data(format!("fixed length {len}")))?,
        ),
        PrimitiveType::Binary => DataType::Binary,
        PrimitiveType::Unknown => DataType::Null,
        PrimitiveType::Variant | PrimitiveType::Geometry | PrimitiveType::Geography => {
            return Err(Error::unsupported(format!("Iceberg type {p}")));
        }
    })
}

/// The Arrow type of any Iceberg type.
pub fn type_to_arrow(t: &Type) -> Result<DataType> {
    Ok(match t {
        Type::Primitive(p) => primitive_to_arrow(p)?,
        Type::Struct(s) => DataType::Struct(Fields::from(
            s.fields
                .iter()
                .map(field_to_arrow)
                .collect::<Result<Vec<_>>>()?,
        )),
        Type::List(l) => DataType::List(Arc::new(field_to_arrow(&l.element_field)?)),
        Type::Map(m) => {
            let entries = Field::new(
                "key_value",
                DataType::Struct(Fields::from(vec![
                    field_to_arrow(&m.key_field)?,
                    field_to_arrow(&m.value_field)?,
                ])),
                false,
            );
            DataType::Map(Arc::new(entries), false)
        }
    })
}

/// The Iceberg primitive type of an Arrow type (the inverse of [`primitive_to_arrow`];
/// narrower integers read as `int`, large and view strings/binaries as `string`/`binary`).
///
/// Errors with [`crate::ErrorKind::Unsupported`] for Arrow types Iceberg has no type for.
pub fn primitive_from_arrow(dt: &DataType) -> Result<PrimitiveType> {
    Ok(match dt {
        DataType::Boolean => PrimitiveType::Boolean,
        DataType::Int8 | DataType::Int16 | DataType::Int32 => PrimitiveType::Int,
        DataType::Int64 => PrimitiveType::Long,
        DataType::Float32 => PrimitiveType::Float,
        DataType::Float64 => PrimitiveType::Double,
        DataType::Decimal128(p, s) if *s >= 0 => PrimitiveType::Decimal {
            precision: u32::from(*p),
            scale: u32::from(s.unsigned_abs()),
        },
        DataType::Date32 => PrimitiveType::Date,
        DataType::Time64(TimeUnit::Microsecond) => PrimitiveType::Time,
        DataType::Timestamp(TimeUnit::Microsecond, None) => PrimitiveType::Timestamp,
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => PrimitiveType::Timestamptz,
        DataType::Timestamp(TimeUnit::Nanosecond, None) => PrimitiveType::TimestampNs,
        DataType::Timestamp(TimeUnit::Nanosecond, Some(_)) => PrimitiveType::TimestamptzNs,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => PrimitiveType::String,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => PrimitiveType::Binary,
        DataType::FixedSizeBinary(n) if *n >= 0 => PrimitiveType::Fixed(n.unsigned_abs().into()),
        DataType::Null => PrimitiveType::Unknown,
        other => {
            return Err(Error::unsupported(format!(
                "Arrow type {other} has no Iceberg type"
            )))
        }
    })
}

/// The Arrow field metadata key naming a field's extension type.
const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// Arrow's canonical extension type of UUIDs (a `FixedSizeBinary(16)`).
const UUID_EXTENSION_NAME: &str = "arrow.uuid";

/// Whether an Arrow field holds Iceberg `uuid` values: a `FixedSizeBinary(16)` tagged
/// with Arrow's canonical `arrow.uuid` extension type (`ARROW:extension:name`), as the
/// table provider tags its top-level `uuid` columns.
pub fn is_uuid_field(field: &Field) -> bool {
    field.data_type() == &DataType::FixedSizeBinary(16)
        && field.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) == Some(UUID_EXTENSION_NAME)
}

/// `field` (the Arrow field of a value of Iceberg type `iceberg`) tagged with Arrow's
/// canonical `arrow.uuid` extension type when `iceberg` is `uuid`, its other metadata
/// kept; unchanged otherwise. The one rule by which a `uuid` value is told from a
/// `fixed[16]` one in a result ([`is_uuid_field`]): the table provider's `uuid` columns
/// and the `uuid` values of the metadata tables and metadata columns (partition
/// tuples, `readable_metrics` bounds) carry it, so the CLI prints them 8-4-4-4-12, an
/// export keeps the type, and string literals compare with them as UUIDs.
pub fn with_uuid_extension(field: Field, iceberg: &PrimitiveType) -> Field {
    if *iceberg != PrimitiveType::Uuid {
        return field;
    }
    let mut metadata = field.metadata().clone();
    metadata.insert(
        EXTENSION_NAME_KEY.to_string(),
        UUID_EXTENSION_NAME.to_string(),
    );
    field.with_metadata(metadata)
}

/// The Iceberg field of an Arrow field that carries its field id in the metadata
/// ([`PARQUET_FIELD_ID_META_KEY`]), nested fields included. `FixedSizeBinary(16)` is a
/// `uuid` when tagged with Arrow's canonical `arrow.uuid` extension, else `fixed[16]`.
///
/// Errors: a field without a field id ([`crate::ErrorKind::InvalidArgument`], naming
/// it), a type Iceberg has no type for ([`crate::ErrorKind::Unsupported`]).
pub fn field_from_arrow(field: &Field) -> Result<NestedField> {
    let id = arrow_field_id(field).ok_or_else(|| {
        Error::invalid_argument(format!("Arrow field '{}' has no field id", field.name()))
    })?;
    let ty = match field.data_type() {
        _ if is_uuid_field(field) => Type::Primitive(PrimitiveType::Uuid),
        dt => type_from_arrow(dt).map_err(|e| e.context(format!("field '{}'", field.name())))?,
    };
    Ok(if field.is_nullable() {
        NestedField::optional(id, field.name(), ty)
    } else {
        NestedField::required(id, field.name(), ty)
    })
}

fn type_from_arrow(dt: &DataType) -> Result<Type> {
    Ok(match dt {
        DataType::Struct(fields) => Type::Struct(crate::spec::StructType::new(
            fields
                .iter()
                .map(|f| field_from_arrow(f))
                .collect::<Result<_>>()?,
        )),
        DataType::List(element) | DataType::LargeList(element) => {
            Type::List(crate::spec::ListType {
                element_field: field_from_arrow(element)?,
            })
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::invalid_argument("map entries are not a struct"));
            };
            let (Some(key), Some(value)) = (kv.first(), kv.get(1)) else {
                return Err(Error::invalid_argument(
                    "map entries need a key and a value",
                ));
            };
            Type::Map(crate::spec::MapType {
                key_field: field_from_arrow(key)?,
                value_field: field_from_arrow(value)?,
            })
        }
        other => Type::Primitive(primitive_from_arrow(other)?),
    })
}

/// The Iceberg schema (with id `schema_id`) of an Arrow schema whose fields carry field
/// ids — the inverse of [`schema_to_arrow`]. Errors as [`field_from_arrow`].
pub fn schema_from_arrow(schema: &ArrowSchema, schema_id: i32) -> Result<Schema> {
    let fields = schema
        .fields()
        .iter()
        .map(|f| field_from_arrow(f))
        .collect::<Result<Vec<_>>>()?;
    Ok(Schema::new(schema_id, fields))
}

/// The Iceberg field id stored in an Arrow field's metadata, if any.
pub fn arrow_field_id(field: &Field) -> Option<i32> {
    field
        .metadata()
        .get(PARQUET_FIELD_ID_META_KEY)
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_field_ids_and_maps_types() {
        let schema = Schema::from_json(&serde_json::json!({
            "type": "struct", "fields": [
                {"id": 1, "name": "ts", "required": true, "type": "timestamptz"},
                {"id": 2, "name": "l", "required": false, "type": {"type": "list", "element-id": 3, "element-required": false, "element": "decimal(10,2)"}}
            ]})).unwrap();
        let arrow = schema_to_arrow(&schema).unwrap();
        let ts = arrow.field(0);
        assert_eq!(
            ts.data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert!(!ts.is_nullable());
        assert_eq!(arrow_field_id(ts), Some(1));
        let DataType::List(el) = arrow.field(1).data_type() else {
            panic!("not a list")
        };
        assert_eq!(arrow_field_id(el), Some(3));
        assert_eq!(el.data_type(), &DataType::Decimal128(10, 2));
    }

    #[test]
    fn nested_fields_read_and_write_nullable() {
        let schema = Schema::from_json(&serde_json::json!({
            "type": "struct", "fields": [
                {"id": 1, "name": "a", "required": false, "type": {"type": "struct", "fields": [
                    {"id": 2, "name": "street", "required": true, "type": "string"},
                    {"id": 3, "name": "info", "required": true, "type": {"type": "struct", "fields": [
                        {"id": 4, "name": "city", "required": true, "type": "string"}]}}]}},
                {"id": 5, "name": "r", "required": true, "type": {"type": "struct", "fields": [
                    {"id": 6, "name": "x", "required": true, "type": "int"}]}},
                {"id": 7, "name": "l", "required": false, "type": {"type": "list", "element-id": 8,
                    "element-required": true, "element": {"type": "struct", "fields": [
                        {"id": 9, "name": "z", "required": true, "type": "int"}]}}},
                {"id": 10, "name": "m", "required": true, "type": {"type": "map", "key-id": 11,
                    "key": "string", "value-id": 12, "value-required": false, "value": {"type": "struct", "fields": [
                        {"id": 13, "name": "w", "required": true, "type": "int"}]}}}
            ]})).unwrap();
        let read = nullable_nested_fields(&schema_to_arrow(&schema).unwrap());
        let mut nullable_by_id = std::collections::BTreeMap::new();
        fn walk(f: &Field, out: &mut std::collections::BTreeMap<i32, bool>) {
            if let Some(id) = arrow_field_id(f) {
                out.insert(id, f.is_nullable());
            }
            match f.data_type() {
                DataType::Struct(c) => c.iter().for_each(|c| walk(c, out)),
                DataType::List(e) | DataType::Map(e, _) => walk(e, out),
                _ => {}
            }
        }
        read.fields()
            .iter()
            .for_each(|f| walk(f, &mut nullable_by_id));
        let nullable: Vec<i32> = nullable_by_id
            .iter()
            .filter(|(_, n)| **n)
            .map(|(id, _)| *id)
            .collect();
        // every nested field is nullable: the required field x (6) of the required
        // struct r (5), the required list element (8) and its field z (9), the map
        // value (12) and its field w (13); required top-level columns (5, 10) and the
        // map key (11) are not
        assert_eq!(nullable, vec![1, 2, 3, 4, 6, 7, 8, 9, 12, 13]);
    }

    #[test]
    fn round_trips_through_arrow() {
        let schema = Schema::from_json(&serde_json::json!({
            "type": "struct", "schema-id": 4, "fields": [
                {"id": 1, "name": "id", "required": true, "type": "long"},
                {"id": 2, "name": "st", "required": false, "type": {"type": "struct", "fields": [
                    {"id": 3, "name": "d", "required": false, "type": "decimal(12,3)"},
                    {"id": 4, "name": "l", "required": false, "type": {"type": "list", "element-id": 5, "element-required": true, "element": "fixed[16]"}}]}},
                {"id": 6, "name": "m", "required": false, "type": {"type": "map", "key-id": 7, "key": "string", "value-id": 8, "value-required": false, "value": "timestamptz_ns"}}
            ]})).unwrap();
        let arrow = schema_to_arrow(&schema).unwrap();
        assert_eq!(schema_from_arrow(&arrow, 4).unwrap(), schema);
        let no_ids = ArrowSchema::new(vec![Field::new("x", DataType::Int32, true)]);
        let err = schema_from_arrow(&no_ids, 0).unwrap_err();
        assert!(err.to_string().contains("'x' has no field id"), "{err}");
    }

    #[test]
    fn nested_field_ids_leave_the_planned_schema() {
        let schema = Schema::from_json(&serde_json::json!({
            "type": "struct", "fields": [
                {"id": 1, "name": "l", "required": false, "type": {"type": "list", "element-id": 2, "element-required": true, "element": "int"}},
                {"id": 3, "name": "st", "required": false, "type": {"type": "struct", "fields": [
                    {"id": 4, "name": "m", "required": false, "type": {"type": "map", "key-id": 5, "key": "string", "value-id": 6, "value-required": false, "value": {"type": "list", "element-id": 7, "element-required": false, "element": "double"}}}]}}
            ]})).unwrap();
        let mut arrow = schema_to_arrow(&schema).unwrap();
        // other metadata of a nested field stays
        let DataType::List(element) = arrow.field(0).data_type() else {
            panic!("not a list")
        };
        let mut tagged = element.metadata().clone();
        tagged.insert("ARROW:extension:name".into(), "arrow.uuid".into());
        let l = arrow
            .field(0)
            .clone()
            .with_data_type(DataType::List(Arc::new(
                element.as_ref().clone().with_metadata(tagged),
            )));
        arrow = ArrowSchema::new(vec![l, arrow.field(1).clone()]);
        let planned = without_nested_field_ids(&arrow);
        let plain_element = Field::new("element", DataType::Int32, false).with_metadata(
            HashMap::from([("ARROW:extension:name".into(), "arrow.uuid".into())]),
        );
        assert_eq!(
            planned.field(0).data_type(),
            &DataType::List(Arc::new(plain_element))
        );
        let inner = DataType::List(Arc::new(Field::new("element", DataType::Float64, true)));
        let entries = Field::new(
            "key_value",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", inner, true),
            ])),
            false,
        );
        let st = DataType::Struct(Fields::from(vec![Field::new(
            "m",
            DataType::Map(Arc::new(entries), false),
            true,
        )]));
        assert_eq!(planned.field(1).data_type(), &st);
        // the columns keep their own ids, which are not part of their types
        assert_eq!(arrow_field_id(planned.field(0)), Some(1));
        assert_eq!(arrow_field_id(planned.field(1)), Some(3));
    }

    #[test]
    fn maps_every_primitive() {
        let cases = [
            (
                "timestamp_ns",
                DataType::Timestamp(TimeUnit::Nanosecond, None),
            ),
            (
                "timestamptz_ns",
                DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
            ),
            ("time", DataType::Time64(TimeUnit::Microsecond)),
            ("uuid", DataType::FixedSizeBinary(16)),
            ("fixed[4]", DataType::FixedSizeBinary(4)),
            ("unknown", DataType::Null),
            ("date", DataType::Date32),
            ("binary", DataType::Binary),
        ];
        for (name, expected) in cases {
            let p = PrimitiveType::parse(name).unwrap();
            assert_eq!(primitive_to_arrow(&p).unwrap(), expected, "{name}");
        }
        for name in ["variant", "geometry", "geography(srid:4326)"] {
            let p = PrimitiveType::parse(name).unwrap();
            assert_eq!(
                primitive_to_arrow(&p).unwrap_err().kind(),
                crate::ErrorKind::Unsupported
            );
        }
    }

    #[test]
    fn variant_is_unsupported_naming_column() {
        let schema = Schema::from_json(&serde_json::json!({
            "type": "struct", "fields": [{"id": 1, "name": "v", "required": false, "type": "variant"}]})).unwrap();
        let err = schema_to_arrow(&schema).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Unsupported);
        assert!(err.to_string().contains("column 'v'"), "{err}");
    }
}
