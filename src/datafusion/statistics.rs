//! Per-file DataFusion `Statistics` from a manifest entry's metrics.
//!
//! The optimizer uses them to order joins, estimate filter selectivity and answer
//! `COUNT(*)`; the Parquet opener uses the bounds to skip whole files. So every value
//! given here must hold for the rows the scan returns:
//!
//! * **Row count**: `record_count`, exact only for a file no delete applies to.
//! * **Null count**: `null_value_counts` (spec field 110), exact only without deletes.
//! * **Min / max**: `lower_bounds` / `upper_bounds` (125 / 128). Float and double
//!   bounds are given only when the file's NaN count is known to be 0: the bounds
//!   exclude NaN, while DataFusion orders NaN above every number. UUID bounds are left
//!   out (writers have compared them both signed and unsigned). The spec promises a
//!   bound ("less than or equal to all non-null, non-NaN values"), and the writers
//!   (Iceberg Java, PyIceberg, icefloe) record the file's own minimum and maximum from
//!   the Parquet column statistics, so a bound is given as **exact** — DataFusion then
//!   answers `MIN`/`MAX` from it without reading the file (issue 18, item 5), and reads
//!   an exact min = max with no nulls as a constant column — only when it is the value:
//!   no delete applies to the file; the bound cannot have been cut (spec "Metrics":
//!   writers truncate `string` and `binary` bounds under the metrics mode `truncate(N)`,
//!   the default `truncate(16)`; Parquet writers may cut their statistics too), see
//!   [`bounds_are_values`]; and for `float` / `double` the NaN count is 0 and the bound
//!   is not zero (Parquet writers record a minimum of `+0.0` as `-0.0` and a maximum of
//!   `-0.0` as `+0.0`). Otherwise it is *inexact*. DataFusion's merge of the files'
//!   statistics keeps a column's min/max exact only when every file's is.
//! * **Identity partition columns**: the partition value is the column's value in every
//!   row of the file, deleted or not, so min = max is exact and the null count is 0 (for a
//!   NULL partition: every row, exact only without deletes). This is also how a column
//!   absent from a migrated file is filled: DataFusion's Parquet opener reads a column
//!   with exact min = max and no nulls as that constant.
//! * **Metrics that contradict themselves** (inverted bounds, a bound of the wrong width,
//!   more nulls than values: [`metrics_inconsistency`]) give nothing: the column's null
//!   count and bounds stay unknown for that file.
//! * **Byte size**: width × rows for fixed-width columns (DataFusion's in-memory size),
//!   `column_sizes` (108, bytes on disk) for the others.

use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, Statistics};

use super::scalar::literal_to_scalar;
use crate::error::Result;
use crate::eval::{metrics_inconsistency, FileStats};
use crate::spec::{DataFile, Literal, PartitionSpec, PrimitiveType, Schema};

/// The statistics of a node that only removes rows of its input (a delete node) and
/// keeps its `output_columns`: the input's, projected, made inexact (bounds still hold;
/// counts become upper estimates); unknown without input statistics.
pub(crate) fn after_removing_rows(
    input_stats: &[std::sync::Arc<datafusion::common::Statistics>],
    output_columns: &[usize],
    schema: &datafusion::arrow::datatypes::SchemaRef,
) -> std::sync::Arc<datafusion::common::Statistics> {
    use datafusion::common::Statistics;
    std::sync::Arc::new(match input_stats.first() {
        Some(input) => Statistics::clone(input)
            .project(Some(&output_columns))
            .to_inexact(),
        None => Statistics::new_unknown(schema),
    })
}

/// Statistics of one data file for a scan with `arrow_schema` (the Arrow form of
/// `schema`, one field per top-level column, same order).
///
/// `spec` is the partition spec the file was written with (`None` if unknown: identity
/// values are then not used). `has_deletes` is whether any delete file applies.
/// `wanted[i]` says whether column `i`'s metrics are filled (the columns the scan
/// reads; a plan of a million files should not carry bounds of unread columns); a
/// shorter `wanted` leaves the remaining columns unknown. Bounds are exact only where
/// [`bounds_are_values`] shows they were not cut and no delete applies.
///
/// Errors when an identity partition value cannot be represented in its column's Arrow
/// type; metrics that contradict themselves (an undecodable bound among them) leave the
/// column unknown instead.
pub(crate) fn file_statistics(
    schema: &Schema,
    arrow_schema: &SchemaRef,
    spec: Option<&PartitionSpec>,
    data_file: &DataFile,
    has_deletes: bool,
    wanted: &[bool],
) -> Result<Statistics> {
    let mut stats = Statistics::new_unknown(arrow_schema);
    // A negative `record_count` is unknown (Java's metrics evaluators take -1 as "might
    // match"): no row count, and none of the metrics that are read against it.
    let Ok(rows) = usize::try_from(data_file.record_count) else {
        if let Some(spec) = spec {
            // the values only: a NULL partition's null count would need the row count
            identity_partition_values(schema, arrow_schema, spec, data_file, true, &mut stats)?;
        }
        return Ok(stats);
    };
    stats.num_rows = if has_deletes {
        Precision::Inexact(rows)
    } else {
        Precision::Exact(rows)
    };
    for (((field, arrow_field), column), wanted) in schema
        .columns()
        .iter()
        .zip(arrow_schema.fields())
        .zip(stats.column_statistics.iter_mut())
        .zip(wanted)
    {
        let Some(ty) = field.field_type.as_primitive().filter(|_| *wanted) else {
            continue;
        };
        let exact_bounds = !has_deletes && bounds_are_values(data_file, field.id, ty);
        *column = metrics_column(
            data_file,
            field.id,
            ty,
            arrow_field.data_type(),
            rows,
            exact_bounds,
        );
        if has_deletes {
            *column = std::mem::take(column).to_inexact();
        }
    }
    if let Some(spec) = spec {
        identity_partition_values(
            schema,
            arrow_schema,
            spec,
            data_file,
            has_deletes,
            &mut stats,
        )?;
    }
    Ok(stats)
}

/// Whether the stored bounds of field `field_id` (type `ty`) in `data_file` are the
/// file's minimum and maximum, not values cut from them. Numbers, dates, times, UUIDs
/// and booleans are never cut. `string` and `binary` bounds are cut to N code points /
/// bytes under the metrics mode `truncate(N)` (spec "Metrics"; Java
/// `UnicodeUtil.truncateStringMax`, `BinaryUtil.truncateBinaryMax`), and Parquet writers
/// may cut the statistics they come from: which mode a file was written under is not
/// recorded (the table's mode today may be another, and not every writer follows it),
/// so they count as the values only when the lower bound equals the upper bound — a
/// cut upper bound is incremented, above every value and so above the lower bound. A
/// `fixed(L)` bound counts when it has all L bytes (a cut one is shorter).
fn bounds_are_values(data_file: &DataFile, field_id: i32, ty: &PrimitiveType) -> bool {
    let lower = data_file.lower_bounds.get(&field_id);
    let upper = data_file.upper_bounds.get(&field_id);
    match ty {
        PrimitiveType::String | PrimitiveType::Binary => {
            matches!((lower, upper), (Some(l), Some(u)) if l == u)
        }
        PrimitiveType::Fixed(width) => [lower, upper]
            .iter()
            .all(|b| b.is_some_and(|b| b.len() as u64 == *width)),
        _ => true,
    }
}

/// Whether a decoded bound may be given as the column's exact min or max: not a zero
/// float (whose sign Parquet writers choose, see the module docs).
fn exact_bound(bound: &Literal) -> bool {
    match bound {
        Literal::Float(v) => *v != 0.0,
        Literal::Double(v) => *v != 0.0,
        _ => true,
    }
}

/// A column's statistics from the file's metrics, as if the file had no deletes; bounds
/// are exact when `exact_bounds` says the column's are the values (no deletes, not
/// truncated) and the bound itself allows it ([`exact_bound`]).
fn metrics_column(
    data_file: &DataFile,
    field_id: i32,
    ty: &PrimitiveType,
    data_type: &DataType,
    rows: usize,
    exact_bounds: bool,
) -> ColumnStatistics {
    let mut column = ColumnStatistics::new_unknown();
    column.byte_size = match data_type.primitive_width() {
        // `rows` comes from the manifest (`record_count`), which may hold any value: a
        // product beyond `usize` is unknown, not a panic or a wrapped size
        Some(width) => width
            .checked_mul(rows)
            .map_or(Precision::Absent, Precision::Exact),
        // On-disk (compressed) bytes: an underestimate of the decoded size, but the
        // optimizer only compares sizes, and absent sizes stop it from comparing at all.
        None => data_file
            .column_sizes
            .get(&field_id)
            .and_then(|&bytes| usize::try_from(bytes).ok())
            .map_or(Precision::Absent, Precision::Inexact),
    };
    if metrics_inconsistency(data_file, field_id, ty).is_some() {
        return column;
    }
    if let Some(nulls) = data_file.null_count(field_id) {
        if let Ok(nulls) = usize::try_from(nulls) {
            column.null_count = Precision::Exact(nulls);
        }
    }
    let bounds_usable = match ty {
        PrimitiveType::Float | PrimitiveType::Double => data_file.nan_count(field_id) == Some(0),
        PrimitiveType::Uuid => false,
        _ => true,
    };
    if bounds_usable {
        let bound = |lit: Option<Literal>| {
            let Some(lit) = lit else {
                return Precision::Absent;
            };
            match literal_to_scalar(Some(&lit), data_type) {
                Ok(v) if exact_bounds && exact_bound(&lit) => Precision::Exact(v),
                Ok(v) => Precision::Inexact(v),
                Err(_) => Precision::Absent,
            }
        };
        column.min_value = bound(data_file.lower_bound(field_id, ty));
        column.max_value = bound(data_file.upper_bound(field_id, ty));
    }
    column
}

/// Overwrite the statistics of identity-partitioned columns with the partition value.
fn identity_partition_values(
    schema: &Schema,
    arrow_schema: &SchemaRef,
    spec: &PartitionSpec,
    data_file: &DataFile,
    has_deletes: bool,
    stats: &mut Statistics,
) -> Result<()> {
    let rows = usize::try_from(data_file.record_count).unwrap_or(0);
    for (field, value) in spec.fields.iter().zip(&data_file.partition) {
        if !field.transform.is_identity() {
            continue;
        }
        let Some(index) = schema
            .columns()
            .iter()
            .position(|c| c.id == field.source_id)
        else {
            continue;
        };
        let data_type = arrow_schema.field(index).data_type();
        let column = &mut stats.column_statistics[index];
        match value {
            // Every row of the file has the value, deleted or not, so it is exact for the
            // surviving rows too (a file whose rows are all position-deleted is not
            // scanned, and above equality deletes `EqualityDeleteExec` makes statistics
            // inexact). DataFusion reads the column as this constant, which also fills it
            // in where the file lacks it.
            Some(v) => {
                let scalar = literal_to_scalar(Some(v), data_type)?;
                column.min_value = Precision::Exact(scalar.clone());
                column.max_value = Precision::Exact(scalar);
                column.null_count = Precision::Exact(0);
            }
            None if !has_deletes => column.null_count = Precision::Exact(rows),
            None => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::common::ScalarValue;

    use super::*;
    use crate::spec::arrow::schema_to_arrow;
    use crate::spec::{DataContentType, NestedField, PartitionField, Transform, Type};
    use crate::write::empty_data_file;

    fn schema() -> Schema {
        Schema::new(
            0,
            vec![
                NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)),
                NestedField::optional(2, "name", Type::Primitive(PrimitiveType::String)),
                NestedField::optional(3, "score", Type::Primitive(PrimitiveType::Double)),
                NestedField::optional(4, "dt", Type::Primitive(PrimitiveType::Date)),
            ],
        )
    }

    /// A file of 10 rows: id in [1, 10] stored as an `int` bound (promoted to long),
    /// name in ["a", "k"] (truncated), score with unknown NaN count, dt = 19000.
    fn data_file() -> DataFile {
        let mut f = empty_data_file("f.parquet", DataContentType::Data);
        f.record_count = 10;
        f.partition = vec![Some(crate::spec::Literal::Date(19000))];
        f.null_value_counts = [(1, 0), (2, 3), (3, 0)].into();
        f.column_sizes = [(2, 55)].into();
        f.lower_bounds = [
            (1, 1_i32.to_le_bytes().to_vec()),
            (2, b"a".to_vec()),
            (3, 0.5_f64.to_le_bytes().to_vec()),
        ]
        .into();
        f.upper_bounds = [
            (1, 10_i32.to_le_bytes().to_vec()),
            (2, b"k".to_vec()),
            (3, 9.5_f64.to_le_bytes().to_vec()),
        ]
        .into();
        f
    }

    fn spec() -> PartitionSpec {
        PartitionSpec {
            spec_id: 0,
            fields: vec![PartitionField {
                source_id: 4,
                field_id: Some(1000),
                name: "dt".into(),
                transform: Transform::Identity,
            }],
        }
    }

    fn stats(file: &DataFile, has_deletes: bool) -> Statistics {
        let schema = schema();
        let arrow = Arc::new(schema_to_arrow(&schema).unwrap());
        file_statistics(
            &schema,
            &arrow,
            Some(&spec()),
            file,
            has_deletes,
            &[true; 4],
        )
        .unwrap()
    }

    #[test]
    fn only_wanted_columns_get_metrics() {
        let schema = schema();
        let arrow = Arc::new(schema_to_arrow(&schema).unwrap());
        let s =
            file_statistics(&schema, &arrow, None, &data_file(), false, &[false, true]).unwrap();
        assert_eq!(s.column_statistics[0], ColumnStatistics::new_unknown());
        assert_eq!(s.column_statistics[1].null_count, Precision::Exact(3));
        assert_eq!(s.column_statistics[2], ColumnStatistics::new_unknown());
    }

    #[test]
    fn bounds_are_exact_only_untruncated_and_counts_exact_without_deletes() {
        let s = stats(&data_file(), false);
        assert_eq!(s.num_rows, Precision::Exact(10));
        let id = &s.column_statistics[0];
        assert_eq!(id.null_count, Precision::Exact(0));
        assert_eq!(id.min_value, Precision::Exact(ScalarValue::Int64(Some(1))));
        assert_eq!(id.max_value, Precision::Exact(ScalarValue::Int64(Some(10))));
        // `name`'s bounds ["a", "k"] may have been cut: inexact
        assert_eq!(id.byte_size, Precision::Exact(80));
        let name = &s.column_statistics[1];
        assert_eq!(name.null_count, Precision::Exact(3));
        assert_eq!(name.min_value, Precision::Inexact(ScalarValue::from("a")));
        assert_eq!(name.max_value, Precision::Inexact(ScalarValue::from("k")));
        assert_eq!(name.byte_size, Precision::Inexact(55));
    }

    #[test]
    fn float_bounds_need_a_known_zero_nan_count() {
        let mut file = data_file();
        let score = stats(&file, false).column_statistics[2].clone();
        assert_eq!(score.min_value, Precision::Absent);
        assert_eq!(score.max_value, Precision::Absent);
        file.nan_value_counts.insert(3, 2);
        assert_eq!(
            stats(&file, false).column_statistics[2].max_value,
            Precision::Absent
        );
        file.nan_value_counts.insert(3, 0);
        let score = stats(&file, false).column_statistics[2].clone();
        assert_eq!(
            score.min_value,
            Precision::Exact(ScalarValue::Float64(Some(0.5)))
        );
        assert_eq!(
            score.max_value,
            Precision::Exact(ScalarValue::Float64(Some(9.5)))
        );
        // a zero bound may be -0.0 for +0.0 (Parquet's rule): inexact, the other exact
        file.lower_bounds
            .insert(3, (-0.0_f64).to_le_bytes().to_vec());
        let score = stats(&file, false).column_statistics[2].clone();
        assert_eq!(
            score.min_value,
            Precision::Inexact(ScalarValue::Float64(Some(-0.0)))
        );
        assert_eq!(
            score.max_value,
            Precision::Exact(ScalarValue::Float64(Some(9.5)))
        );
        // deletes: inexact
        let score = stats(&file, true).column_statistics[2].clone();
        assert_eq!(
            score.max_value,
            Precision::Inexact(ScalarValue::Float64(Some(9.5)))
        );
    }

    /// String and binary bounds count as the values only when equal, whatever the
    /// table's metrics mode (a file written under `truncate(16)` stays so after the mode
    /// becomes `full`); fixed bounds when they have the type's width.
    #[test]
    fn cut_bounds_are_never_exact() {
        use PrimitiveType as P;
        let mut file = data_file();
        assert!(bounds_are_values(&file, 1, &P::Long));
        // ["a", "k"]: either may be cut
        assert!(!bounds_are_values(&file, 2, &P::String));
        assert!(!bounds_are_values(&file, 2, &P::Binary));
        // "abcdefghijklmnop" / "abcdefghijklmnoq", truncate(16) of one 26-letter value
        file.lower_bounds.insert(2, b"abcdefghijklmnop".to_vec());
        file.upper_bounds.insert(2, b"abcdefghijklmnoq".to_vec());
        assert!(!bounds_are_values(&file, 2, &P::String));
        let name = stats(&file, false).column_statistics[1].clone();
        assert_eq!(
            name.max_value,
            Precision::Inexact(ScalarValue::from("abcdefghijklmnoq"))
        );
        // equal bounds: a cut upper bound is above every value, so neither was cut
        file.upper_bounds.insert(2, b"abcdefghijklmnop".to_vec());
        assert!(bounds_are_values(&file, 2, &P::String));
        let name = stats(&file, false).column_statistics[1].clone();
        assert_eq!(
            name.min_value,
            Precision::Exact(ScalarValue::from("abcdefghijklmnop"))
        );
        assert_eq!(name.max_value, name.min_value);
        assert_eq!(
            stats(&file, true).column_statistics[1].max_value,
            Precision::Inexact(ScalarValue::from("abcdefghijklmnop"))
        );
        // one bound missing (no upper bound for a run of U+10FFFF): not the values
        file.upper_bounds.remove(&2);
        assert!(!bounds_are_values(&file, 2, &P::String));
        // fixed(3): full width only
        file.lower_bounds.insert(2, vec![1, 2, 3]);
        file.upper_bounds.insert(2, vec![1, 2, 4]);
        assert!(bounds_are_values(&file, 2, &P::Fixed(3)));
        file.upper_bounds.insert(2, vec![1, 3]);
        assert!(!bounds_are_values(&file, 2, &P::Fixed(3)));
    }

    /// A negative `record_count` (-1: unknown) gives no row count and no metrics read
    /// against it (an exact count of 0 rows, or null count = rows, would drop the rows
    /// or read them as NULL); the partition value still fills its column.
    #[test]
    fn a_record_count_too_large_for_the_byte_size_leaves_it_unknown() {
        // 2^62 rows of an 8-byte column overflow `usize`: unknown, not a panic (a debug
        // build) or a wrapped size (a release build)
        let mut file = data_file();
        file.record_count = 1 << 62;
        let s = stats(&file, false);
        assert_eq!(s.num_rows, Precision::Exact(1 << 62));
        assert_eq!(s.column_statistics[0].byte_size, Precision::Absent);
        file.record_count = 1 << 40;
        let s = stats(&file, false);
        assert_eq!(s.column_statistics[0].byte_size, Precision::Exact(8 << 40));
    }

    #[test]
    fn an_unknown_record_count_gives_no_counts() {
        let mut file = data_file();
        file.record_count = -1;
        let s = stats(&file, false);
        assert_eq!(s.num_rows, Precision::Absent);
        assert!(s.column_statistics[..3]
            .iter()
            .all(|c| c.null_count == Precision::Absent && c.min_value == Precision::Absent));
        let date = ScalarValue::Date32(Some(19000));
        assert_eq!(s.column_statistics[3].min_value, Precision::Exact(date));
        file.partition = vec![None];
        assert_eq!(
            stats(&file, false).column_statistics[3].null_count,
            Precision::Absent
        );
    }

    #[test]
    fn identity_partition_values_are_exact_other_columns_only_without_deletes() {
        let date = ScalarValue::Date32(Some(19000));
        for has_deletes in [false, true] {
            let s = stats(&data_file(), has_deletes);
            let dt = &s.column_statistics[3];
            assert_eq!(dt.min_value, Precision::Exact(date.clone()));
            assert_eq!(dt.max_value, Precision::Exact(date.clone()));
            assert_eq!(dt.null_count, Precision::Exact(0));
        }
        let with = stats(&data_file(), true);
        assert_eq!(with.num_rows, Precision::Inexact(10));
        assert_eq!(with.column_statistics[1].null_count, Precision::Inexact(3));
        assert!(
            with.column_statistics[..3]
                .iter()
                .all(|c| c.min_value.is_exact() != Some(true)
                    && c.null_count.is_exact() != Some(true))
        );
        // a NULL partition: all rows NULL, a count known only without deletes
        let mut null_partition = data_file();
        null_partition.partition = vec![None];
        assert_eq!(
            stats(&null_partition, false).column_statistics[3].null_count,
            Precision::Exact(10)
        );
        assert_eq!(
            stats(&null_partition, true).column_statistics[3].null_count,
            Precision::Absent
        );
    }

    #[test]
    fn inconsistent_metrics_leave_the_column_unknown() {
        let unknown = |s: &Statistics, i: usize| {
            let c = &s.column_statistics[i];
            (c.min_value.clone(), c.max_value.clone(), c.null_count)
        };
        let absent = (Precision::Absent, Precision::Absent, Precision::Absent);
        // a 3-byte lower bound under a long: the well-formed upper bound goes too
        let mut file = data_file();
        file.lower_bounds.insert(1, vec![1, 2, 3]);
        // a string bound that is not UTF-8
        file.upper_bounds.insert(2, vec![0xff, 0xfe]);
        let s = stats(&file, false);
        assert_eq!(unknown(&s, 0), absent);
        assert_eq!(unknown(&s, 1), absent);
        assert_eq!(s.column_statistics[0].byte_size, Precision::Exact(80));
        // inverted bounds
        let mut file = data_file();
        file.lower_bounds.insert(1, 11_i32.to_le_bytes().to_vec());
        assert_eq!(unknown(&stats(&file, false), 0), absent);
        // more nulls than values
        let mut file = data_file();
        file.value_counts.insert(2, 2);
        assert_eq!(unknown(&stats(&file, false), 1), absent);
        // the untouched columns keep their metrics
        assert_eq!(
            stats(&file, false).column_statistics[0].min_value,
            Precision::Exact(ScalarValue::Int64(Some(1)))
        );
    }
}
