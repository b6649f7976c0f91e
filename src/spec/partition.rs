//! Partition specs, partition fields and transform names.
//!
//! Source: Iceberg spec, "Partitioning", "Partition Transforms" and Appendix C
//! ("Partition Specs"). Applying transforms to values lives in `crate::transform`; this
//! module only describes them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::schema::Schema;
use super::types::{NestedField, PrimitiveType, Type};
use crate::error::{Error, Result};

/// A partition transform (spec: "Partition Transforms").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transform {
    /// The source value, unmodified.
    Identity,
    /// `bucket[N]`: a 32-bit murmur3 hash of the value, mod N.
    Bucket(u32),
    /// `truncate[W]`: the value truncated to width W.
    Truncate(u32),
    /// Years since 1970.
    Year,
    /// Months since 1970-01.
    Month,
    /// Days since 1970-01-01.
    Day,
    /// Hours since 1970-01-01 00:00.
    Hour,
    /// Always null.
    Void,
    /// A transform this version does not know, by its name as the metadata gives it
    /// (Java's `UnknownTransform` keeps it too); files cannot be pruned by it, and it
    /// displays as that name, so messages name the transform the table has.
    Unknown(String),
}

impl Transform {
    /// The type of the transform's result for a source of type `source`.
    ///
    /// Errors when the transform cannot apply to that type.
    pub fn result_type(&self, source: &Type) -> Result<Type> {
        let p = source.as_primitive().copied();
        let bad = || Error::invalid_data(format!("transform {self} cannot apply to type {source}"));
        Ok(match self {
            Transform::Identity | Transform::Truncate(_) => source.clone(),
            Transform::Bucket(_) | Transform::Year | Transform::Month | Transform::Hour => {
                if matches!(self, Transform::Year | Transform::Month | Transform::Hour)
                    && !matches!(
                        p,
                        Some(
                            PrimitiveType::Date
                                | PrimitiveType::Timestamp
                                | PrimitiveType::Timestamptz
                                | PrimitiveType::TimestampNs
                                | PrimitiveType::TimestamptzNs
                        )
                    )
                {
                    return Err(bad());
                }
                if *self == Transform::Hour && p == Some(PrimitiveType::Date) {
                    return Err(bad());
                }
                Type::Primitive(PrimitiveType::Int)
            }
            Transform::Day => match p {
                Some(
                    PrimitiveType::Date
                    | PrimitiveType::Timestamp
                    | PrimitiveType::Timestamptz
                    | PrimitiveType::TimestampNs
                    | PrimitiveType::TimestamptzNs,
                ) => Type::Primitive(PrimitiveType::Date),
                _ => return Err(bad()),
            },
            Transform::Void | Transform::Unknown(_) => source.clone(),
        })
    }

    /// The type of the transform's result when its source column is in none of the
    /// table's schemas, so its type is lost (Iceberg Java's `PartitionSpec.resultType`,
    /// which applies the transform to an `unknown` source): `int` for `bucket`, `year`,
    /// `month` and `hour`, `date` for `day` (their result type does not depend on the
    /// source's); `unknown` for `identity`, `truncate`, `void` and unknown transforms,
    /// whose result type is the source's.
    pub fn result_type_of_lost_source(&self) -> Type {
        Type::Primitive(match self {
            Transform::Bucket(_) | Transform::Year | Transform::Month | Transform::Hour => {
                PrimitiveType::Int
            }
            Transform::Day => PrimitiveType::Date,
            Transform::Identity
            | Transform::Truncate(_)
            | Transform::Void
            | Transform::Unknown(_) => PrimitiveType::Unknown,
        })
    }

    /// Whether partition values equal the source value (identity).
    pub fn is_identity(&self) -> bool {
        *self == Transform::Identity
    }

    /// Whether this transform can partition or sort a column of type `source` (Iceberg
    /// Java's `Transform.canTransform`; spec "Partition Transforms", the "Source types"
    /// column): `bucket` takes int, long, decimal, date, time, timestamps, string,
    /// uuid, fixed and binary; `truncate` int, long, decimal, string and binary; the
    /// time transforms dates and timestamps (`hour` no date); `identity` any primitive
    /// but variant, geometry, geography and unknown; `void` anything.
    pub fn can_transform(&self, source: &Type) -> bool {
        use PrimitiveType as P;
        let p = source.as_primitive();
        let domain = match self {
            Transform::Void => true,
            Transform::Identity => p.is_some_and(|p| {
                !matches!(p, P::Variant | P::Geometry | P::Geography | P::Unknown)
            }),
            Transform::Bucket(_) => matches!(
                p,
                Some(
                    P::Int
                        | P::Long
                        | P::Decimal { .. }
                        | P::Date
                        | P::Time
                        | P::Timestamp
                        | P::Timestamptz
                        | P::TimestampNs
                        | P::TimestamptzNs
                        | P::String
                        | P::Uuid
                        | P::Fixed(_)
                        | P::Binary
                )
            ),
            Transform::Truncate(_) => matches!(
                p,
                Some(P::Int | P::Long | P::Decimal { .. } | P::String | P::Binary)
            ),
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => true,
            Transform::Unknown(_) => false,
        };
        domain && self.result_type(source).is_ok()
    }

    /// Check the transform's own argument: `bucket[N]` and `truncate[W]` need N, W above
    /// 0 (Java's `Transforms.bucket` / `Transforms.truncate` preconditions).
    ///
    /// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the
    /// transform.
    pub fn check_argument(&self) -> Result<()> {
        match self {
            Transform::Bucket(0) => Err(Error::invalid_argument(
                "invalid transform bucket[0]: the number of buckets must be above 0",
            )),
            Transform::Truncate(0) => Err(Error::invalid_argument(
                "invalid transform truncate[0]: the width must be above 0",
            )),
            _ => Ok(()),
        }
    }

    /// What makes two partition fields of one column redundant (Java's `dedupName`):
    /// the same transform, or any two of year, month, day and hour (`"time"`).
    pub fn dedup_name(&self) -> String {
        match self {
            Transform::Year | Transform::Month | Transform::Day | Transform::Hour => "time".into(),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::Identity => f.write_str("identity"),
            Transform::Bucket(n) => write!(f, "bucket[{n}]"),
            Transform::Truncate(w) => write!(f, "truncate[{w}]"),
            Transform::Year => f.write_str("year"),
            Transform::Month => f.write_str("month"),
            Transform::Day => f.write_str("day"),
            Transform::Hour => f.write_str("hour"),
            Transform::Void => f.write_str("void"),
            Transform::Unknown(name) => f.write_str(name),
        }
    }
}

impl FromStr for Transform {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let parse_arg = |inner: &str| {
            inner
                .trim()
                .parse::<u32>()
                .map_err(|_| Error::invalid_data(format!("bad transform argument in '{s}'")))
        };
        Ok(match s {
            "identity" => Transform::Identity,
            "year" => Transform::Year,
            "month" => Transform::Month,
            "day" => Transform::Day,
            "hour" => Transform::Hour,
            "void" => Transform::Void,
            _ => {
                if let Some(n) = s.strip_prefix("bucket[").and_then(|r| r.strip_suffix(']')) {
                    Transform::Bucket(parse_arg(n)?)
                } else if let Some(w) = s
                    .strip_prefix("truncate[")
                    .and_then(|r| r.strip_suffix(']'))
                {
                    Transform::Truncate(parse_arg(w)?)
                } else {
                    Transform::Unknown(s.to_string())
                }
            }
        })
    }
}

impl Serialize for Transform {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Transform {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// One field of a partition spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionField {
    /// The source column's field id.
    pub source_id: i32,
    /// The partition field's own id (≥ 1000 by convention). v1 specs may omit it; it is
    /// then assigned 1000, 1001, … in order when the metadata is read.
    #[serde(default)]
    pub field_id: Option<i32>,
    /// The partition field name.
    pub name: String,
    /// The transform applied to the source value.
    pub transform: Transform,
}

/// A partition spec: how a table's rows are grouped into files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PartitionSpec {
    /// `spec-id`.
    pub spec_id: i32,
    /// The partition fields, in order of the partition tuple.
    pub fields: Vec<PartitionField>,
}

impl PartitionSpec {
    /// The unpartitioned spec with id 0.
    pub fn unpartitioned() -> Self {
        Self {
            spec_id: 0,
            fields: vec![],
        }
    }

    /// Whether the spec has no fields, or only void fields.
    pub fn is_unpartitioned(&self) -> bool {
        self.fields.iter().all(|f| f.transform == Transform::Void)
    }

    /// Check that `schema` can be partitioned by this spec (Java's
    /// `PartitionSpec.checkCompatibility`, run when a table is created and a spec added):
    /// every field's transform has a valid argument ([`Transform::check_argument`]);
    /// every field but a `void` one has its source in `schema`, of a primitive type the
    /// transform takes ([`Transform::can_transform`]). With `allow_missing_sources`, a
    /// source column `schema` does not hold is skipped (a spec may keep a column a later
    /// schema dropped; Java checks such a field only when its source is found). Unknown
    /// transforms (another engine's) are not checked.
    ///
    /// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the spec, the
    /// partition field, the source column and its type.
    pub fn check_compatibility(&self, schema: &Schema, allow_missing_sources: bool) -> Result<()> {
        for f in &self.fields {
            let what = || format!("partition spec {}: field '{}'", self.spec_id, f.name);
            let Some(source) = transform_source(
                &f.transform,
                f.source_id,
                schema,
                allow_missing_sources,
                &what,
            )?
            else {
                continue;
            };
            if source.field_type.as_primitive().is_none() {
                return Err(Error::invalid_argument(format!(
                    "{}: cannot partition by column '{}' (id {}) of non-primitive type {}",
                    what(),
                    source.name,
                    source.id,
                    source.field_type
                )));
            }
            if !f.transform.can_transform(&source.field_type) {
                return Err(Error::invalid_argument(format!(
                    "{}: transform {} cannot apply to column '{}' (id {}) of type {}",
                    what(),
                    f.transform,
                    source.name,
                    source.id,
                    source.field_type
                )));
            }
        }
        Ok(())
    }

    /// The partition field's id (assigned 1000+i when a v1 spec omits it).
    pub fn field_id(&self, index: usize) -> i32 {
        self.fields
            .get(index)
            .and_then(|f| f.field_id)
            .unwrap_or(1000 + index as i32)
    }

    /// The partition tuple's struct type: one optional field per partition field (its
    /// `field-id` and name), typed by its transform's result type (spec: "Partition
    /// Transforms", the "Result type" column).
    ///
    /// `schemas` are searched in order for each field's source column: the table's
    /// current schema first, then its older schemas, newest first
    /// ([`crate::spec::TableMetadata::schemas_newest_first`]). A spec older than the
    /// current one may partition by a column the current schema dropped (spec:
    /// "Partition Evolution"); its files keep their partition values, and typing the
    /// field from the newest schema that still has the column keeps their real type, so
    /// they read and write back unchanged. Iceberg Java types every spec against the
    /// current schema only, which leaves an `identity` or `truncate` field of a dropped
    /// column `unknown` ([`Transform::result_type_of_lost_source`]); icefloe falls back
    /// to that only when no schema has the column any more.
    ///
    /// Errors: a transform that cannot apply to its source column's type
    /// ([`crate::ErrorKind::InvalidData`], naming the partition field).
    pub fn partition_type(&self, schemas: &[&Schema]) -> Result<Vec<NestedField>> {
        self.fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let result = match schemas.iter().find_map(|s| s.field_by_id(f.source_id)) {
                    Some(source) => f.transform.result_type(&source.field_type).map_err(|e| {
                        e.context(format!(
                            "partition field '{}' of spec {} (source column '{}')",
                            f.name, self.spec_id, source.name
                        ))
                    })?,
                    None => f.transform.result_type_of_lost_source(),
                };
                Ok(NestedField::optional(self.field_id(i), &f.name, result))
            })
            .collect()
    }
}

/// The source column of a partition or sort field with `transform` on `source_id`, after
/// checking the transform's argument (`bucket[0]` is refused); `None` when there is nothing
/// to check against the column: a `void` or unknown transform, or a source missing from
/// `schema` when `allow_missing_sources` (a commit after creation, as Java skips it).
/// `what` names the field in errors.
///
/// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) for a bad argument or a
/// missing source.
pub(crate) fn transform_source<'a>(
    transform: &Transform,
    source_id: i32,
    schema: &'a Schema,
    allow_missing_sources: bool,
    what: &dyn Fn() -> String,
) -> Result<Option<&'a NestedField>> {
    transform.check_argument().map_err(|e| e.context(what()))?;
    if matches!(transform, Transform::Void | Transform::Unknown(_)) {
        return Ok(None);
    }
    match schema.field_by_id(source_id) {
        Some(source) => Ok(Some(source)),
        None if allow_missing_sources => Ok(None),
        None => Err(Error::invalid_argument(format!(
            "{}: source id {source_id} is not in schema {}",
            what(),
            schema.schema_id
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_transforms() {
        for s in [
            "identity",
            "bucket[16]",
            "truncate[4]",
            "year",
            "month",
            "day",
            "hour",
            "void",
        ] {
            let t: Transform = s.parse().unwrap();
            assert_eq!(t.to_string(), s);
        }
        // an unknown transform keeps its name, and displays (and serializes) as it
        let unknown: Transform = "zorder_magic".parse().unwrap();
        assert_eq!(unknown, Transform::Unknown("zorder_magic".into()));
        assert_eq!(unknown.to_string(), "zorder_magic");
        assert_eq!(serde_json::to_string(&unknown).unwrap(), "\"zorder_magic\"");
        assert!("bucket[x]".parse::<Transform>().is_err());
    }

    #[test]
    fn result_types() {
        let ts = Type::Primitive(PrimitiveType::Timestamptz);
        assert_eq!(
            Transform::Day.result_type(&ts).unwrap(),
            Type::Primitive(PrimitiveType::Date)
        );
        assert_eq!(
            Transform::Hour.result_type(&ts).unwrap(),
            Type::Primitive(PrimitiveType::Int)
        );
        assert!(Transform::Hour
            .result_type(&Type::Primitive(PrimitiveType::Date))
            .is_err());
        assert!(Transform::Year
            .result_type(&Type::Primitive(PrimitiveType::String))
            .is_err());
    }

    fn field(source_id: i32, id: i32, name: &str, transform: Transform) -> PartitionField {
        PartitionField {
            source_id,
            field_id: Some(id),
            name: name.into(),
            transform,
        }
    }

    /// An old spec over columns the current schema dropped: each field is typed from
    /// the first schema (current, then newest first) that has its source column; the
    /// current schema's type wins over an older one (a promoted column); with no schema
    /// holding it, only the transforms of fixed result type keep a type (Java's).
    #[test]
    fn partition_type_of_a_spec_whose_source_columns_were_dropped() {
        let prim = |p: PrimitiveType| Type::Primitive(p);
        let oldest = Schema::new(
            0,
            vec![
                NestedField::optional(1, "id", prim(PrimitiveType::Int)),
                NestedField::optional(2, "p", prim(PrimitiveType::Int)),
                NestedField::optional(3, "ts", prim(PrimitiveType::Timestamp)),
                NestedField::optional(4, "s", prim(PrimitiveType::String)),
            ],
        );
        // `p` promoted to long, `ts` dropped
        let newer = Schema::new(
            1,
            vec![
                NestedField::optional(1, "id", prim(PrimitiveType::Int)),
                NestedField::optional(2, "p", prim(PrimitiveType::Long)),
                NestedField::optional(4, "s", prim(PrimitiveType::String)),
            ],
        );
        // `id` promoted to long, `p` dropped too
        let current = Schema::new(
            2,
            vec![
                NestedField::optional(1, "id", prim(PrimitiveType::Long)),
                NestedField::optional(4, "s", prim(PrimitiveType::String)),
            ],
        );
        let spec = PartitionSpec {
            spec_id: 0,
            fields: vec![
                field(2, 1000, "p", Transform::Identity),
                field(3, 1001, "ts_day", Transform::Day),
                field(2, 1002, "p_bucket", Transform::Bucket(4)),
                field(4, 1003, "s_trunc", Transform::Truncate(2)),
                field(1, 1004, "id", Transform::Identity),
                field(3, 1005, "ts_hour", Transform::Hour),
            ],
        };
        let types = |schemas: &[&Schema]| -> Vec<(i32, String, Type)> {
            spec.partition_type(schemas)
                .expect("partition type")
                .into_iter()
                .map(|f| (f.id, f.name.clone(), *f.field_type))
                .collect()
        };
        let named = |t: &[(i32, &str, PrimitiveType)]| -> Vec<(i32, String, Type)> {
            t.iter()
                .map(|(id, n, p)| (*id, n.to_string(), prim(*p)))
                .collect()
        };
        assert_eq!(
            types(&[&current, &current, &newer, &oldest]),
            named(&[
                (1000, "p", PrimitiveType::Long),
                (1001, "ts_day", PrimitiveType::Date),
                (1002, "p_bucket", PrimitiveType::Int),
                (1003, "s_trunc", PrimitiveType::String),
                (1004, "id", PrimitiveType::Long),
                (1005, "ts_hour", PrimitiveType::Int),
            ])
        );
        // the older schemas gone: identity of a lost column has no type
        assert_eq!(
            types(&[&current]),
            named(&[
                (1000, "p", PrimitiveType::Unknown),
                (1001, "ts_day", PrimitiveType::Date),
                (1002, "p_bucket", PrimitiveType::Int),
                (1003, "s_trunc", PrimitiveType::String),
                (1004, "id", PrimitiveType::Long),
                (1005, "ts_hour", PrimitiveType::Int),
            ])
        );
        for (t, want) in [
            (Transform::Identity, PrimitiveType::Unknown),
            (Transform::Truncate(3), PrimitiveType::Unknown),
            (Transform::Void, PrimitiveType::Unknown),
            (Transform::Unknown("zorder".into()), PrimitiveType::Unknown),
            (Transform::Bucket(8), PrimitiveType::Int),
            (Transform::Year, PrimitiveType::Int),
            (Transform::Month, PrimitiveType::Int),
            (Transform::Day, PrimitiveType::Date),
            (Transform::Hour, PrimitiveType::Int),
        ] {
            assert_eq!(t.result_type_of_lost_source(), prim(want), "{t}");
        }
    }

    /// A transform that cannot apply to its source's type names the partition field,
    /// its spec and the source column.
    #[test]
    fn partition_type_errors_name_the_field() {
        let schema = Schema::new(
            0,
            vec![NestedField::optional(
                1,
                "name",
                Type::Primitive(PrimitiveType::String),
            )],
        );
        let spec = PartitionSpec {
            spec_id: 3,
            fields: vec![field(1, 1000, "name_year", Transform::Year)],
        };
        let e = spec
            .partition_type(&[&schema])
            .expect_err("year of a string");
        assert_eq!(e.kind(), crate::ErrorKind::InvalidData, "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("'name_year' of spec 3") && msg.contains("'name'"),
            "{msg}"
        );
    }
}
