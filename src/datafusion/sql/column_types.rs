//! The Iceberg types of the columns `CREATE TABLE` and `ALTER TABLE … ADD COLUMN` plan:
//! the Arrow types DataFusion plans for a column list (or a CTAS query) converted to
//! Iceberg types with fresh field ids, the types the declaration gives where DataFusion's
//! plan does not tell them (`UUID`; timestamp precision and zone, at any depth), and
//! the format version the types need.

use std::collections::HashMap;

use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::sql::sqlparser::tokenizer::Token;

use super::create_table::{MAP_KEY, MAP_VALUE};
use super::tokens::{is_keyword, Cursor};
use crate::error::{Error, Result};
use crate::spec::{
    FormatVersion, ListType, MapType, NestedField, PrimitiveType, Schema, StructType, Type,
};

/// The Iceberg type a top-level column type at the cursor declares where DataFusion's
/// plan does not tell it: `UUID` (planned as binary). Spark-only spellings are read at
/// the top level only (nested, DataFusion plans or refuses them as it does).
pub(super) fn declared_type(c: &Cursor<'_>) -> Option<PrimitiveType> {
    c.peek()
        .is_some_and(|t| is_keyword(&t.token, "UUID"))
        .then_some(PrimitiveType::Uuid)
}

/// DataFusion's spelling of the Spark type name at the cursor, in a column's type at any
/// depth, where DataFusion reads the name otherwise or not at all: a bare `DECIMAL`,
/// `DEC` or `NUMERIC` is Spark's `decimal(10,0)` (DataFusion: `decimal(38,10)`), `DEC(p,
/// s)` is `DECIMAL(p, s)`, `SHORT` is `SMALLINT` and `BYTE` `TINYINT` (both stored as
/// Iceberg `int`, as Spark writes them). `None` for any other word, or a struct field of
/// that name (`STRUCT<dec INT>`: a name is followed by its type or a `:`).
///
/// Only column lists are read so (`CREATE TABLE`, `ALTER TABLE … ADD COLUMN`, `… TYPE`):
/// a `CAST(x AS DECIMAL)` in a query keeps DataFusion's meaning.
pub(super) fn spark_type_name(c: &Cursor<'_>) -> Option<&'static str> {
    let t = c.peek()?;
    let word = |kws: &[&str]| kws.iter().any(|kw| is_keyword(&t.token, kw));
    let next = c.peek_at(1).map(|t| &t.token);
    let is_name = match next {
        Some(Token::Colon) => true,
        Some(t @ Token::Word(_)) => !COLUMN_OPTIONS.iter().any(|kw| is_keyword(t, kw)),
        _ => false,
    };
    if is_name {
        return None;
    }
    if word(&["DECIMAL", "DEC", "NUMERIC"]) {
        return match next {
            Some(Token::LParen) => word(&["DEC"]).then_some("DECIMAL"),
            _ => Some("DECIMAL(10, 0)"),
        };
    }
    if word(&["SHORT"]) {
        return Some("SMALLINT");
    }
    word(&["BYTE"]).then_some("TINYINT")
}

/// The words that end a column's type in its definition (at depth 0).
pub(super) const COLUMN_OPTIONS: &[&str] = &[
    "NOT",
    "NULL",
    "DEFAULT",
    "COMMENT",
    "PRIMARY",
    "UNIQUE",
    "CHECK",
    "CONSTRAINT",
    "REFERENCES",
    "GENERATED",
    "COLLATE",
];

/// The Iceberg type of the timestamp type at the cursor (in a column's type, at any
/// depth): `TIMESTAMP[(p)] [WITHOUT TIME ZONE]` and `TIMESTAMP_NTZ` are `timestamp`;
/// `TIMESTAMPTZ`, `TIMESTAMP_LTZ` and `TIMESTAMP[(p)] WITH TIME ZONE` `timestamptz`;
/// with a precision of 9, `timestamp_ns` / `timestamptz_ns` (v3 types, spec "Primitive
/// Types"; refused on v1/v2 tables by [`check_v3_columns`]). `None` when the
/// cursor is not at one, or at a struct field of that name (`STRUCT<timestamp INT>`,
/// `STRUCT<timestamp: INT>`: a name is followed by its type).
///
/// Why the declaration decides: DataFusion plans `TIMESTAMP` and `TIMESTAMP(9)` alike as
/// Arrow nanoseconds, and a type with a time zone without one unless the session has a
/// time zone. A plain `TIMESTAMP` (any precision but 9) is microseconds, as Spark creates
/// it. A CTAS column of Arrow nanoseconds (the query's own type, e.g. `now()`, a
/// `TIMESTAMP` literal) stays microseconds: nothing in the query declares the precision,
/// and DataFusion gives nanoseconds to values that never had more than microseconds.
pub(super) fn timestamp_type(c: &Cursor<'_>) -> Option<PrimitiveType> {
    let word = |i: usize, kw: &str| c.peek_at(i).is_some_and(|t| is_keyword(&t.token, kw));
    let family = ["TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ"];
    if !family.iter().any(|kw| word(0, kw)) {
        return None;
    }
    // a struct field's name is followed by its type (or a `:`)
    let name = match c.peek_at(1).map(|t| &t.token) {
        Some(Token::Colon) => true,
        Some(t @ Token::Word(_)) => !["WITH", "WITHOUT"]
            .iter()
            .chain(COLUMN_OPTIONS)
            .any(|kw| is_keyword(t, kw)),
        _ => false,
    };
    if name {
        return None;
    }
    if word(0, "TIMESTAMPTZ") || word(0, "TIMESTAMP_LTZ") {
        return Some(PrimitiveType::Timestamptz);
    }
    if word(0, "TIMESTAMP_NTZ") {
        return Some(PrimitiveType::Timestamp);
    }
    // a precision: TIMESTAMP(9), TIMESTAMP(6) WITH TIME ZONE
    let precision = if c.peek_at(1).is_some_and(|t| t.token == Token::LParen) {
        match c.peek_at(2).map(|t| &t.token) {
            Some(Token::Number(n, _)) => Some(n.as_str()),
            _ => None,
        }
    } else {
        None
    };
    let at = if precision.is_some() { 4 } else { 1 };
    let zoned = word(at, "WITH") && word(at + 1, "TIME") && word(at + 2, "ZONE");
    Some(match (precision == Some("9"), zoned) {
        (true, false) => PrimitiveType::TimestampNs,
        (true, true) => PrimitiveType::TimestamptzNs,
        (false, true) => PrimitiveType::Timestamptz,
        (false, false) => PrimitiveType::Timestamp,
    })
}

/// Give the timestamp fields of `fields` (at any depth, in the order of the column
/// list: struct fields in order, a list's element, a map's key then value) the types
/// the column list declares, `declared` in that order ([`timestamp_type`]).
///
/// Errors ([`ErrorKind::Unsupported`]): a number of timestamp fields other than
/// `declared`'s (the column list was not read as DataFusion read it).
pub(super) fn declare_timestamps(
    fields: &mut [NestedField],
    declared: &[PrimitiveType],
) -> Result<()> {
    fn visit<'a>(
        ty: &mut Type,
        declared: &mut impl Iterator<Item = &'a PrimitiveType>,
        seen: &mut usize,
    ) {
        match ty {
            Type::Primitive(p @ (PrimitiveType::Timestamp | PrimitiveType::Timestamptz)) => {
                *seen += 1;
                if let Some(d) = declared.next() {
                    *p = *d;
                }
            }
            Type::Primitive(_) => {}
            Type::Struct(s) => {
                for f in &mut s.fields {
                    visit(&mut f.field_type, declared, seen);
                }
            }
            Type::List(l) => visit(&mut l.element_field.field_type, declared, seen),
            Type::Map(m) => {
                visit(&mut m.key_field.field_type, declared, seen);
                visit(&mut m.value_field.field_type, declared, seen);
            }
        }
    }
    let mut types = declared.iter();
    let mut seen = 0;
    for f in fields.iter_mut() {
        visit(&mut f.field_type, &mut types, &mut seen);
    }
    if seen != declared.len() {
        return Err(Error::unsupported(format!(
            "a column list whose {} timestamp types icefloe reads are {seen} in \
             DataFusion's plan (a spelling of a timestamp type icefloe does not read)",
            declared.len()
        )));
    }
    Ok(())
}

/// `CREATE TABLE`'s v3 types need format version 3 (spec: "Primitive Types":
/// `timestamp_ns`/`timestamptz_ns` and `unknown` are v3 types); an `unknown` field must
/// have a form in data files.
///
/// Errors: a field of `schema` (at any depth, named by its path: `st.a`, `l.element`,
/// `m.value`) of type `timestamp_ns`, `timestamptz_ns` or `unknown` (a CTAS column of
/// NULLs) when `properties` do not set `format-version` 3
/// ([`ErrorKind::InvalidArgument`]); an `unknown` list element, map key or value, or a
/// struct of `unknown` fields only ([`ErrorKind::Unsupported`], see
/// `crate::write::unknown`).
pub(super) fn check_v3_columns(
    schema: &Schema,
    properties: &HashMap<String, String>,
) -> Result<()> {
    if crate::table_properties::format_version(properties)? == Some(FormatVersion::V3) {
        if let Ok(arrow) = crate::spec::arrow::schema_to_arrow(schema) {
            crate::write::stored_schema(&arrow)?;
        }
        return Ok(());
    }
    fn check(path: &str, ty: &Type) -> Result<()> {
        match ty {
            Type::Primitive(p @ (PrimitiveType::TimestampNs | PrimitiveType::TimestamptzNs)) => {
                Err(Error::invalid_argument(format!(
                    "column '{path}': type {p} (TIMESTAMP(9)) needs format-version 3 (set \
                     TBLPROPERTIES ('format-version' = '3'), or use TIMESTAMP for microseconds)"
                )))
            }
            Type::Primitive(PrimitiveType::Unknown) => Err(Error::invalid_argument(format!(
                "column '{path}': type unknown (a column of NULLs) needs format-version 3 (set \
                 TBLPROPERTIES ('format-version' = '3'), or CAST the NULL to the column's type)"
            ))),
            Type::Primitive(_) => Ok(()),
            Type::Struct(s) => s
                .fields
                .iter()
                .try_for_each(|f| check(&format!("{path}.{}", f.name), &f.field_type)),
            Type::List(l) => check(&format!("{path}.element"), &l.element_field.field_type),
            Type::Map(m) => {
                check(&format!("{path}.key"), &m.key_field.field_type)?;
                check(&format!("{path}.value"), &m.value_field.field_type)
            }
        }
    }
    schema
        .columns()
        .iter()
        .try_for_each(|f| check(&f.name, &f.field_type))
}

/// Iceberg fields for Arrow fields, with fresh ids after `*ids`: the fields of a struct
/// first, then their nested fields (as Iceberg Java's `TypeUtil.assignFreshIds`).
pub(super) fn convert_struct(fields: &Fields, ids: &mut i32) -> Result<Vec<NestedField>> {
    let first = *ids + 1;
    *ids += i32::try_from(fields.len()).map_err(|_| Error::invalid_argument("too many columns"))?;
    fields
        .iter()
        .zip(first..)
        .map(|(f, id)| {
            let ty = convert_field_type(f, ids)
                .map_err(|e| e.context(format!("column '{}'", f.name())))?;
            Ok(field(id, f.name(), ty, !f.is_nullable()))
        })
        .collect()
}

fn field(id: i32, name: &str, ty: Type, required: bool) -> NestedField {
    if required {
        NestedField::required(id, name, ty)
    } else {
        NestedField::optional(id, name, ty)
    }
}

/// An Iceberg map of Arrow key and value fields: key and value ids first, then the ids
/// nested in them (as Iceberg Java's `TypeUtil.assignFreshIds`).
fn map_type(k: &Field, v: &Field, ids: &mut i32) -> Result<Type> {
    let (key_id, value_id) = (*ids + 1, *ids + 2);
    *ids += 2;
    let key = convert_field_type(k, ids)?;
    let value = convert_field_type(v, ids)?;
    Ok(Type::Map(MapType {
        key_field: field(key_id, "key", key, true),
        value_field: field(value_id, "value", value, !v.is_nullable()),
    }))
}

/// The Iceberg type of an Arrow field: its type's, but `uuid` for a field tagged as
/// one (a CTAS query reading a `uuid` column).
fn convert_field_type(f: &Field, ids: &mut i32) -> Result<Type> {
    if crate::spec::arrow::is_uuid_field(f) {
        return Ok(Type::Primitive(PrimitiveType::Uuid));
    }
    convert_type(f.data_type(), ids)
}

/// The Iceberg type of an Arrow type (see the parent module's table).
fn convert_type(dt: &DataType, ids: &mut i32) -> Result<Type> {
    use PrimitiveType as P;
    let mut next = || {
        *ids += 1;
        *ids
    };
    Ok(Type::Primitive(match dt {
        DataType::Struct(fields) => {
            return Ok(Type::Struct(StructType::new(convert_struct(fields, ids)?)))
        }
        DataType::List(e)
        | DataType::LargeList(e)
        | DataType::ListView(e)
        | DataType::LargeListView(e)
        | DataType::FixedSizeList(e, _) => {
            if let DataType::Struct(kv) = e.data_type() {
                if let [k, v] = &kv[..] {
                    if k.name() == MAP_KEY && v.name() == MAP_VALUE {
                        return map_type(k, v, ids);
                    }
                }
            }
            let id = next();
            let ty = convert_field_type(e, ids)?;
            return Ok(Type::List(ListType {
                element_field: field(id, "element", ty, !e.is_nullable()),
            }));
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(Error::invalid_argument("map entries are not a struct"));
            };
            let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
                return Err(Error::invalid_argument(
                    "map entries need a key and a value",
                ));
            };
            return map_type(k, v, ids);
        }
        DataType::Dictionary(_, value) => return convert_type(value, ids),
        // a CTAS column of NULLs: v3's `unknown`, as Iceberg's Spark integration makes
        // Spark's NullType (refused on v1/v2 by `check_v3_columns`)
        DataType::Null => P::Unknown,
        DataType::Boolean => P::Boolean,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::UInt8 | DataType::UInt16 => {
            P::Int
        }
        DataType::Int64 | DataType::UInt32 => P::Long,
        DataType::Float16 | DataType::Float32 => P::Float,
        DataType::Float64 => P::Double,
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s)
            if *p <= 38 && *s >= 0 =>
        {
            P::Decimal {
                precision: u32::from(*p),
                scale: u32::from(s.unsigned_abs()),
            }
        }
        DataType::Date32 | DataType::Date64 => P::Date,
        DataType::Time32(_) | DataType::Time64(_) => P::Time,
        DataType::Timestamp(_, None) => P::Timestamp,
        DataType::Timestamp(_, Some(_)) => P::Timestamptz,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => P::String,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => P::Binary,
        DataType::FixedSizeBinary(n) if *n > 0 => P::Fixed(n.unsigned_abs().into()),
        DataType::Decimal32(p, s)
        | DataType::Decimal64(p, s)
        | DataType::Decimal128(p, s)
        | DataType::Decimal256(p, s) => {
            return Err(Error::invalid_argument(format!(
                "type DECIMAL({p}, {s}) has no Iceberg type (Iceberg decimals have a \
                 precision of at most 38 and a scale of at least 0)"
            )))
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "type {other} has no Iceberg type"
            )))
        }
    }))
}

/// Make a field and everything in it optional (CTAS columns, as in Spark).
pub(super) fn make_optional(field: &mut NestedField) {
    field.required = false;
    match field.field_type.as_mut() {
        Type::Struct(s) => s.fields.iter_mut().for_each(make_optional),
        Type::List(l) => make_optional(&mut l.element_field),
        Type::Map(m) => make_optional(&mut m.value_field),
        Type::Primitive(_) => {}
    }
}
