//! The Parquet schema of the data files icefloe writes: Arrow's conversion of the
//! table's Arrow schema, with the logical types Iceberg Java writes that the conversion
//! cannot know: `UUID` on the `fixed_len_byte_array[16]` of a `uuid` field, at any depth
//! (spec "Parquet": `uuid` is `fixed_len_byte_array[16]` with logical type `UUID`).
//!
//! arrow-rs writes `UUID` only for a field carrying Arrow's canonical `arrow.uuid`
//! extension type, and only with the parquet crate's `arrow_canonical_extension_types`
//! feature, which would rebuild the whole Arrow/Parquet/DataFusion dependency tree and
//! tag the `uuid` columns of every file read with the extension (nested ones too). The
//! field ids of the leaves say which ones are `uuid`, so the writer gets this schema
//! instead (`ArrowWriterOptions::with_parquet_schema`).

use std::sync::Arc;

use datafusion::arrow::datatypes::Schema as ArrowSchema;
use datafusion::parquet::arrow::ArrowSchemaConverter;
use datafusion::parquet::basic::{LogicalType, Type as PhysicalType};
use datafusion::parquet::file::properties::WriterProperties;
use datafusion::parquet::schema::types::{SchemaDescriptor, Type, TypePtr};

use crate::error::{Error, Result};
use crate::spec::{PrimitiveType, Schema};

/// The Parquet schema of files of `schema` (an Iceberg schema) written from Arrow schema
/// `arrow` with `properties`: Arrow's conversion, `uuid` leaves annotated `UUID`.
/// `None` when no leaf is a `uuid` (Arrow's conversion is the schema then).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): an Arrow type Parquet has no type for,
/// or a Parquet type the annotation does not build.
pub(crate) fn parquet_schema(
    schema: &Schema,
    arrow: &ArrowSchema,
    properties: &WriterProperties,
) -> Result<Option<SchemaDescriptor>> {
    let is_uuid = |id: i32| schema.primitive_type(id) == Some(PrimitiveType::Uuid);
    let converted = ArrowSchemaConverter::new()
        .with_coerce_types(properties.coerce_types())
        .convert(arrow)
        .map_err(|e| {
            Error::invalid_argument("the Parquet schema of the data files").with_source(e)
        })?;
    let root = converted.root_schema_ptr();
    Ok(annotated(&root, &is_uuid)?.map(SchemaDescriptor::new))
}

/// `t` with its `uuid` leaves (by field id) annotated `UUID`; `None` when none is.
fn annotated(t: &TypePtr, is_uuid: &dyn Fn(i32) -> bool) -> Result<Option<TypePtr>> {
    let bad = |e| Error::invalid_argument("the Parquet schema of the data files").with_source(e);
    let info = t.get_basic_info();
    let id = info.has_id().then(|| info.id());
    match t.as_ref() {
        Type::PrimitiveType {
            physical_type: PhysicalType::FIXED_LEN_BYTE_ARRAY,
            type_length: 16,
            ..
        } if id.is_some_and(is_uuid) && info.logical_type_ref().is_none() => {
            let mut b =
                Type::primitive_type_builder(info.name(), PhysicalType::FIXED_LEN_BYTE_ARRAY)
                    .with_length(16)
                    .with_logical_type(Some(LogicalType::Uuid))
                    .with_id(id);
            if info.has_repetition() {
                b = b.with_repetition(info.repetition());
            }
            Ok(Some(Arc::new(b.build().map_err(bad)?)))
        }
        Type::PrimitiveType { .. } => Ok(None),
        Type::GroupType { fields, .. } => {
            let mut changed = false;
            let mut children = Vec::with_capacity(fields.len());
            for f in fields {
                match annotated(f, is_uuid)? {
                    Some(new) => {
                        changed = true;
                        children.push(new);
                    }
                    None => children.push(Arc::clone(f)),
                }
            }
            if !changed {
                return Ok(None);
            }
            let mut b = Type::group_type_builder(info.name())
                .with_fields(children)
                .with_converted_type(info.converted_type())
                .with_logical_type(info.logical_type_ref().cloned())
                .with_id(id);
            if info.has_repetition() {
                b = b.with_repetition(info.repetition());
            }
            Ok(Some(Arc::new(b.build().map_err(bad)?)))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::arrow::schema_to_arrow;
    use crate::spec::{ListType, MapType, NestedField, StructType, Type as IcebergType};

    use super::*;

    fn p(t: PrimitiveType) -> IcebergType {
        IcebergType::Primitive(t)
    }

    #[test]
    fn uuid_leaves_are_annotated_at_any_depth_and_nothing_else_changes() {
        let schema = Schema::new(
            0,
            vec![
                NestedField::required(1, "u", p(PrimitiveType::Uuid)),
                NestedField::optional(2, "f", p(PrimitiveType::Fixed(16))),
                NestedField::optional(
                    3,
                    "st",
                    IcebergType::Struct(StructType::new(vec![NestedField::optional(
                        4,
                        "u",
                        p(PrimitiveType::Uuid),
                    )])),
                ),
                NestedField::optional(
                    5,
                    "l",
                    IcebergType::List(ListType {
                        element_field: NestedField::optional(6, "element", p(PrimitiveType::Uuid)),
                    }),
                ),
                NestedField::optional(
                    7,
                    "m",
                    IcebergType::Map(MapType {
                        key_field: NestedField::required(8, "key", p(PrimitiveType::Uuid)),
                        value_field: NestedField::optional(9, "value", p(PrimitiveType::String)),
                    }),
                ),
            ],
        );
        let arrow = schema_to_arrow(&schema).unwrap();
        let props = WriterProperties::default();
        let descr = parquet_schema(&schema, &arrow, &props)
            .unwrap()
            .expect("uuids");
        let plain = ArrowSchemaConverter::new().convert(&arrow).unwrap();
        assert_eq!(descr.num_columns(), plain.num_columns());
        for i in 0..descr.num_columns() {
            let (ours, theirs) = (descr.column(i), plain.column(i));
            assert_eq!(ours.path(), theirs.path());
            assert_eq!(ours.physical_type(), theirs.physical_type());
            assert_eq!(
                ours.max_def_level(),
                theirs.max_def_level(),
                "{}",
                ours.path()
            );
            assert_eq!(
                ours.max_rep_level(),
                theirs.max_rep_level(),
                "{}",
                ours.path()
            );
            let id = ours.self_type().get_basic_info().id();
            let expected = match id {
                1 | 4 | 6 | 8 => Some(LogicalType::Uuid),
                _ => theirs.logical_type_ref().cloned(),
            };
            assert_eq!(ours.logical_type_ref().cloned(), expected, "field id {id}");
        }
        // no uuid: Arrow's conversion as it is
        let none = Schema::new(
            0,
            vec![NestedField::optional(1, "f", p(PrimitiveType::Fixed(16)))],
        );
        let arrow = schema_to_arrow(&none).unwrap();
        assert!(parquet_schema(&none, &arrow, &props).unwrap().is_none());
    }
}
