//! Checks of a [`DataFile`]'s metadata before a manifest records it: the rules Iceberg
//! Java's `DataFiles.Builder` / `FileMetadata.Builder` enforce when a file is described
//! (`recordCount >= 0`, a file size), the counts the spec defines as counts (spec:
//! "Manifests", `record_count`, `file_size_in_bytes`, `value_counts`, …), and partition
//! values of the spec's partition type (spec: "Partitioning": a partition tuple is a
//! struct of the partition fields' result types). A file that breaks one would be
//! committed as metadata other engines read wrongly or cannot read at all.

use crate::error::{Error, Result};
use crate::spec::types::{PrimitiveType, Type};
use crate::spec::{DataFile, Literal, NestedField};

/// Check the counts of `f`, a file being added: `record_count`, `file_size_in_bytes`
/// and every count of its metrics (`column_sizes`, `value_counts`,
/// `null_value_counts`, `nan_value_counts`) are not negative.
///
/// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the file, the
/// count (and its field id) and the value.
pub(crate) fn check_counts(f: &DataFile) -> Result<()> {
    let bad = |what: String, v: i64| {
        Error::invalid_argument(format!(
            "file '{}': {what} is {v}, a count must not be negative",
            f.file_path
        ))
    };
    if f.record_count < 0 {
        return Err(bad("record_count".into(), f.record_count));
    }
    if f.file_size_in_bytes < 0 {
        return Err(bad("file_size_in_bytes".into(), f.file_size_in_bytes));
    }
    for (name, map) in [
        ("column_sizes", &f.column_sizes),
        ("value_counts", &f.value_counts),
        ("null_value_counts", &f.null_value_counts),
        ("nan_value_counts", &f.nan_value_counts),
    ] {
        if let Some((id, v)) = map.iter().find(|(_, v)| **v < 0) {
            return Err(bad(format!("{name} of field {id}"), *v));
        }
    }
    Ok(())
}

/// Check that each partition value of `f` is of its partition field's type
/// (`partition_fields`: the spec's partition type, in order; the arity is checked by the
/// caller). A null fits any field; a field of a type icefloe cannot name (`unknown`, a
/// lost source column) takes any value. Timestamps with and without zone share one
/// representation and fit each other's fields; a decimal must have the field's scale, a
/// fixed value the field's length.
///
/// Errors: [`InvalidArgument`](crate::ErrorKind::InvalidArgument) naming the file, the
/// partition field, the field's type and the value's type.
pub(crate) fn check_partition_types(
    f: &DataFile,
    spec_id: i32,
    partition_fields: &[NestedField],
) -> Result<()> {
    for (value, field) in f.partition.iter().zip(partition_fields) {
        let Some(value) = value else { continue };
        let Type::Primitive(t) = field.field_type.as_ref() else {
            continue;
        };
        if !fits(value, t) {
            return Err(Error::invalid_argument(format!(
                "file '{}': partition field '{}' of spec {spec_id} is of type {t}, but the \
                 file's value {value:?} is of type {}",
                f.file_path,
                field.name,
                value_type(value)
            )));
        }
    }
    Ok(())
}

/// Whether `v` is a value of type `t`.
fn fits(v: &Literal, t: &PrimitiveType) -> bool {
    use PrimitiveType as P;
    match (v, t) {
        (_, P::Unknown) => true,
        (Literal::Boolean(_), P::Boolean)
        | (Literal::Int(_), P::Int)
        | (Literal::Long(_), P::Long)
        | (Literal::Float(_), P::Float)
        | (Literal::Double(_), P::Double)
        | (Literal::Date(_), P::Date)
        | (Literal::Time(_), P::Time)
        | (Literal::Timestamp(_) | Literal::Timestamptz(_), P::Timestamp | P::Timestamptz)
        | (
            Literal::TimestampNs(_) | Literal::TimestamptzNs(_),
            P::TimestampNs | P::TimestamptzNs,
        )
        | (Literal::String(_), P::String)
        | (Literal::Uuid(_), P::Uuid)
        | (Literal::Binary(_), P::Binary) => true,
        (Literal::Decimal { scale, .. }, P::Decimal { scale: s, .. }) => scale == s,
        (Literal::Fixed(b), P::Fixed(len)) => b.len() as u64 == *len,
        _ => false,
    }
}

/// The type name of `v`, as the spec names types.
fn value_type(v: &Literal) -> String {
    match v {
        Literal::Boolean(_) => "boolean".into(),
        Literal::Int(_) => "int".into(),
        Literal::Long(_) => "long".into(),
        Literal::Float(_) => "float".into(),
        Literal::Double(_) => "double".into(),
        Literal::Decimal {
            precision, scale, ..
        } => format!("decimal({precision}, {scale})"),
        Literal::Date(_) => "date".into(),
        Literal::Time(_) => "time".into(),
        Literal::Timestamp(_) => "timestamp".into(),
        Literal::Timestamptz(_) => "timestamptz".into(),
        Literal::TimestampNs(_) => "timestamp_ns".into(),
        Literal::TimestamptzNs(_) => "timestamptz_ns".into(),
        Literal::String(_) => "string".into(),
        Literal::Uuid(_) => "uuid".into(),
        Literal::Fixed(b) => format!("fixed[{}]", b.len()),
        Literal::Binary(_) => "binary".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::DataContentType;

    fn file(partition: Vec<Option<Literal>>) -> DataFile {
        let mut f = crate::write::empty_data_file("s3://b/t/data/f.parquet", DataContentType::Data);
        f.partition = partition;
        f.record_count = 3;
        f.file_size_in_bytes = 10;
        f
    }

    #[test]
    fn negative_counts_are_refused_naming_the_count() {
        assert!(check_counts(&file(vec![])).is_ok());
        let mut f = file(vec![]);
        f.record_count = -5;
        let e = check_counts(&f).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert!(
            e.to_string()
                .contains("'s3://b/t/data/f.parquet': record_count is -5"),
            "{e}"
        );
        let mut f = file(vec![]);
        f.file_size_in_bytes = -1;
        assert!(check_counts(&f)
            .unwrap_err()
            .to_string()
            .contains("file_size_in_bytes is -1"));
        let mut f = file(vec![]);
        f.null_value_counts.insert(7, -2);
        assert!(check_counts(&f)
            .unwrap_err()
            .to_string()
            .contains("null_value_counts of field 7 is -2"));
    }

    #[test]
    fn partition_values_must_be_of_the_field_type() {
        let fields = vec![
            NestedField::optional(1000, "s", Type::Primitive(PrimitiveType::String)),
            NestedField::optional(1001, "ts_day", Type::Primitive(PrimitiveType::Timestamptz)),
        ];
        let ok = file(vec![
            Some(Literal::String("a".into())),
            Some(Literal::Timestamp(1)),
        ]);
        assert!(check_partition_types(&ok, 0, &fields).is_ok());
        assert!(check_partition_types(&file(vec![None, None]), 0, &fields).is_ok());
        let bad = file(vec![Some(Literal::Long(5)), None]);
        let e = check_partition_types(&bad, 0, &fields).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert_eq!(
            e.to_string(),
            "invalid argument: file 's3://b/t/data/f.parquet': partition field 's' of spec 0 is \
             of type string, but the file's value Long(5) is of type long"
        );
    }
}
