//! Z-order values: the sort key of `rewrite_data_files` with `sort_order => 'zorder(a, b,
//! …)'` (Spark's procedure; Iceberg Java's `SparkZOrderFileRewriteRunner` over
//! `ZOrderByteUtils`).
//!
//! Each column's value becomes a fixed number of bytes whose unsigned lexicographic order
//! is the value's order, and the z-value interleaves the bits of those byte strings, most
//! significant first, one bit of each column in turn (a column with no bits left at a
//! position is skipped). Sorting rows by it keeps rows that are close in every column
//! close in the file order, so the files written have narrow bounds on all the columns at
//! once and a filter on any of them prunes files.
//!
//! Byte forms, as Java's (8 bytes for every fixed-width type):
//! - integers (`int`, `long`), `date` (days), `time` and timestamps (their stored
//!   microseconds or nanoseconds): the 64-bit value with its sign bit flipped, big-endian;
//! - `float`, `double`: the `double`'s bits (NaN as the one canonical NaN, after every
//!   other value) with all bits flipped when negative, else the sign bit flipped;
//! - `decimal`: the unscaled 128-bit value with its sign bit flipped, 16 bytes (Java's
//!   Spark runner refuses decimals; the order is the value's order within a column);
//! - `string` (UTF-8), `binary`, `fixed`, `uuid`: the first `var-length-contribution`
//!   bytes, padded with zero bytes;
//! - `boolean`: `0x40` for false, `0x80` for true, then zeros;
//! - null: all zero bytes (first, as Java's; tied with a type's least value when that
//!   value's form is all zeros too, `i64::MIN` or the empty string).
//!
//! The z-value is cut to `max-output-size` bytes (default: all of them).

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};

use crate::error::{Error, Result};
use crate::spec::{TableMetadata, Transform, Type};

/// Bytes of a fixed-width column's ordered form (Java's `PRIMITIVE_BUFFER_SIZE`).
pub const PRIMITIVE_BYTES: usize = 8;

/// Bytes of a 128-bit decimal's ordered form.
const DECIMAL_BYTES: usize = 16;

/// The most bytes a string or binary column may contribute (`var-length-contribution`):
/// every row's z-value is held in memory while the rows are sorted, so a contribution of
/// millions of bytes would need that much memory per row of a batch (Java takes any
/// value). Longer prefixes order strings hardly any better.
pub const MAX_VAR_LENGTH_CONTRIBUTION: usize = 1024;

/// The options of a z-order rewrite (Spark's `rewrite_data_files` option names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZOrderOptions {
    /// `var-length-contribution`: bytes a string or binary column contributes (default
    /// 8; 1 to [`MAX_VAR_LENGTH_CONTRIBUTION`]).
    pub var_length_contribution: usize,
    /// `max-output-size`: bytes of the z-value kept (default: all; at least 1).
    pub max_output_size: usize,
}

impl Default for ZOrderOptions {
    fn default() -> Self {
        Self {
            var_length_contribution: PRIMITIVE_BYTES,
            max_output_size: i32::MAX as usize,
        }
    }
}

/// How a column's values are turned into ordered bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// 64-bit integers (and what is stored as one), sign bit flipped.
    Whole,
    /// Floating point, widened to `double`.
    Floating,
    /// 128-bit decimals.
    Decimal,
    /// Bytes (strings as UTF-8), truncated or zero-padded.
    Bytes,
    /// Booleans.
    Boolean,
}

/// The form of a column of Arrow type `data_type`; `None` for a type that cannot be
/// z-ordered (nested types, intervals, …).
fn form(data_type: &DataType) -> Option<Form> {
    use DataType::*;
    Some(match data_type {
        Int8
        | Int16
        | Int32
        | Int64
        | UInt8
        | UInt16
        | UInt32
        | Date32
        | Date64
        | Time32(_)
        | Time64(_)
        | Timestamp(_, _) => Form::Whole,
        Float16 | Float32 | Float64 => Form::Floating,
        Decimal32(_, _) | Decimal64(_, _) | Decimal128(_, _) => Form::Decimal,
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => {
            Form::Bytes
        }
        Boolean => Form::Boolean,
        Dictionary(_, value) => return form(value),
        _ => return None,
    })
}

/// Whether a column of Arrow type `data_type` can be z-ordered.
pub fn supports(data_type: &DataType) -> bool {
    form(data_type).is_some()
}

/// The ordered bytes of every row of `array`, `width` bytes per row, row after row.
fn ordered_bytes(array: &ArrayRef, form: Form, width: usize) -> Result<Vec<u8>> {
    let rows = array.len();
    let mut out = vec![0u8; rows * width];
    let data_type = match array.data_type() {
        DataType::Dictionary(_, value) => value.as_ref().clone(),
        other => other.clone(),
    };
    match form {
        Form::Whole => {
            let as_int = match data_type {
                DataType::Date32 => cast(&cast(array, &DataType::Int32)?, &DataType::Int64)?,
                DataType::Time32(_) => cast(&cast(array, &DataType::Int32)?, &DataType::Int64)?,
                _ => cast(array, &DataType::Int64)?,
            };
            let values = as_int.as_primitive::<Int64Type>();
            for (row, chunk) in valid_rows(&mut out, width, values) {
                let flipped = (values.value(row) as u64) ^ (1 << 63);
                chunk.copy_from_slice(&flipped.to_be_bytes());
            }
        }
        Form::Floating => {
            let as_double = cast(array, &DataType::Float64)?;
            let values = as_double.as_primitive::<Float64Type>();
            for (row, chunk) in valid_rows(&mut out, width, values) {
                chunk.copy_from_slice(&ordered_double(values.value(row)).to_be_bytes());
            }
        }
        Form::Decimal => {
            let precision = match data_type {
                DataType::Decimal32(p, _)
                | DataType::Decimal64(p, _)
                | DataType::Decimal128(p, _) => p,
                _ => 38,
            };
            let wide = cast(
                array,
                &DataType::Decimal128(precision.max(1), decimal_scale(&data_type)),
            )?;
            let values = wide.as_primitive::<datafusion::arrow::datatypes::Decimal128Type>();
            for (row, chunk) in valid_rows(&mut out, width, values) {
                let flipped = (values.value(row) as u128) ^ (1 << 127);
                chunk.copy_from_slice(&flipped.to_be_bytes());
            }
        }
        Form::Bytes => {
            let bytes = cast(array, &DataType::Binary)?;
            let values = bytes.as_binary::<i32>();
            for (row, chunk) in valid_rows(&mut out, width, values) {
                let v = values.value(row);
                let n = v.len().min(width);
                chunk[..n].copy_from_slice(&v[..n]);
            }
        }
        Form::Boolean => {
            let values = array.as_boolean_opt().ok_or_else(|| {
                Error::invalid_data(format!(
                    "z-order column of type {} is not boolean",
                    array.data_type()
                ))
            })?;
            for (row, chunk) in valid_rows(&mut out, width, values) {
                chunk[0] = if values.value(row) { 0x80 } else { 0x40 };
            }
        }
    }
    Ok(out)
}

/// The `width`-byte slice of `out` of each row of `array` that is not null, with the row.
fn valid_rows<'a>(
    out: &'a mut [u8],
    width: usize,
    array: &'a dyn Array,
) -> impl Iterator<Item = (usize, &'a mut [u8])> {
    out.chunks_exact_mut(width)
        .enumerate()
        .filter(move |(row, _)| array.is_valid(*row))
}

/// The scale of a decimal type (0 for others).
fn decimal_scale(data_type: &DataType) -> i8 {
    match data_type {
        DataType::Decimal32(_, s) | DataType::Decimal64(_, s) | DataType::Decimal128(_, s) => *s,
        _ => 0,
    }
}

/// A `double` as an unsigned integer in the value's order (NaN canonical, last).
fn ordered_double(value: f64) -> u64 {
    let bits = if value.is_nan() { f64::NAN } else { value }.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The bytes of `columns`' ordered forms interleaved bit by bit into `out` (see the
/// module docs): bit `k` of the output is the next bit, most significant first, of the
/// next column in turn that still has bits at that byte position.
fn interleave(columns: &[&[u8]], out: &mut [u8]) {
    let capacity = out.len() * 8;
    let longest = columns.iter().map(|c| c.len()).max().unwrap_or(0);
    let mut written = 0;
    for byte in 0..longest {
        for bit in (0..8).rev() {
            for column in columns {
                let Some(b) = column.get(byte) else { continue };
                if written == capacity {
                    return;
                }
                if (b >> bit) & 1 == 1 {
                    out[written / 8] |= 0x80 >> (written % 8);
                }
                written += 1;
            }
        }
    }
}

/// The z-value of each row of `columns` (equal lengths, one array per z-order column,
/// in the order given): a non-null binary array of as many rows.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): an empty column list, columns of
/// unequal lengths, a column whose type cannot be z-ordered (naming the type), a
/// `var-length-contribution` above [`MAX_VAR_LENGTH_CONTRIBUTION`], or z-values of more
/// than 2 GiB in all (a binary array's limit).
pub fn z_values(columns: &[ArrayRef], options: &ZOrderOptions) -> Result<BinaryArray> {
    let Some(first) = columns.first() else {
        return Err(Error::invalid_argument("z-order needs at least one column"));
    };
    if options.var_length_contribution > MAX_VAR_LENGTH_CONTRIBUTION {
        return Err(Error::invalid_argument(format!(
            "option 'var-length-contribution' is {}, more than the {MAX_VAR_LENGTH_CONTRIBUTION} \
             bytes a z-order takes of a string or binary value",
            options.var_length_contribution
        )));
    }
    let rows = first.len();
    let mut forms = Vec::with_capacity(columns.len());
    for c in columns {
        if c.len() != rows {
            return Err(Error::invalid_argument(
                "z-order columns have different lengths",
            ));
        }
        let form = form(c.data_type()).ok_or_else(|| {
            Error::invalid_argument(format!(
                "a column of type {} cannot be z-ordered",
                c.data_type()
            ))
        })?;
        let width = match form {
            Form::Bytes => options.var_length_contribution.max(1),
            Form::Decimal => DECIMAL_BYTES,
            _ => PRIMITIVE_BYTES,
        };
        forms.push((form, width));
    }
    let encoded: Vec<Vec<u8>> = columns
        .iter()
        .zip(&forms)
        .map(|(c, (form, width))| ordered_bytes(c, *form, *width))
        .collect::<Result<_>>()?;
    let total: usize = forms.iter().map(|(_, w)| w).sum();
    let size = total.min(options.max_output_size.max(1));
    if rows
        .checked_mul(size)
        .is_none_or(|bytes| i32::try_from(bytes).is_err())
    {
        return Err(Error::invalid_argument(format!(
            "the z-values of {rows} rows of {size} bytes each do not fit a binary array \
             (2 GiB): lower 'max-output-size' or 'var-length-contribution'"
        )));
    }
    let mut values = vec![0u8; rows * size];
    let mut parts: Vec<&[u8]> = Vec::with_capacity(columns.len());
    for (row, out) in values.chunks_exact_mut(size).enumerate() {
        parts.clear();
        for (bytes, (_, width)) in encoded.iter().zip(&forms) {
            parts.push(&bytes[row * width..(row + 1) * width]);
        }
        interleave(&parts, out);
    }
    let offsets = (0..=rows).map(|r| (r * size) as i32);
    let offsets = datafusion::arrow::buffer::OffsetBuffer::new(offsets.collect());
    BinaryArray::try_new(offsets, values.into(), None)
        .map_err(|e| Error::invalid_data("z-values do not fit a binary array").with_source(e))
}

/// The field ids of the z-order columns `names` (top-level columns of `metadata`'s
/// current schema, matched exactly, else case-insensitively as Spark does by default),
/// in the order given, leaving out the source columns of identity fields of the default
/// partition spec: their values are constant within a partition (Java leaves them out
/// too, with a warning).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming the column): no names; a name
/// that is not a top-level column (a nested field or an unknown one); a column of a
/// struct, list or map type; every column an identity partition source.
pub fn zorder_field_ids(metadata: &TableMetadata, names: &[String]) -> Result<Vec<i32>> {
    if names.is_empty() {
        return Err(Error::invalid_argument(
            "zorder() needs at least one column",
        ));
    }
    let schema = metadata.current_schema();
    let identity: Vec<i32> = metadata
        .default_partition_spec()
        .map(|spec| {
            spec.fields
                .iter()
                .filter(|f| f.transform == Transform::Identity)
                .map(|f| f.source_id)
                .collect()
        })
        .unwrap_or_default();
    let mut ids = vec![];
    for name in names {
        let columns = schema.columns();
        let field = match columns.iter().find(|c| c.name == *name) {
            Some(f) => f,
            None => {
                let mut found = columns.iter().filter(|c| c.name.eq_ignore_ascii_case(name));
                match (found.next(), found.next()) {
                    (Some(f), None) => f,
                    _ => {
                        return Err(Error::invalid_argument(format!(
                            "zorder column '{name}' is not a top-level column of the table \
                             (its columns: {})",
                            columns
                                .iter()
                                .map(|c| c.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )))
                    }
                }
            }
        };
        if !matches!(field.field_type.as_ref(), Type::Primitive(_)) {
            return Err(Error::invalid_argument(format!(
                "zorder column '{}' is of type {}, which cannot be z-ordered",
                field.name, field.field_type
            )));
        }
        if !identity.contains(&field.id) && !ids.contains(&field.id) {
            ids.push(field.id);
        }
    }
    if ids.is_empty() {
        return Err(Error::invalid_argument(format!(
            "zorder({}): every column is the source of an identity partition field, constant \
             within a partition, so there is nothing to z-order by",
            names.join(", ")
        )));
    }
    Ok(ids)
}

/// [`z_values`] as an Arrow array.
pub fn z_value_array(columns: &[ArrayRef], options: &ZOrderOptions) -> Result<ArrayRef> {
    Ok(Arc::new(z_values(columns, options)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{
        BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int32Array,
        Int64Array, StringArray, TimestampMicrosecondArray,
    };

    fn z(columns: Vec<ArrayRef>, options: &ZOrderOptions) -> Vec<Vec<u8>> {
        let values = z_values(&columns, options).expect("z-values");
        (0..values.len())
            .map(|r| values.value(r).to_vec())
            .collect()
    }

    fn single(column: ArrayRef) -> Vec<Vec<u8>> {
        z(vec![column], &ZOrderOptions::default())
    }

    /// The rows' z-values sort in the values' order (nulls first) for every type.
    #[test]
    fn one_column_sorts_in_the_values_order() {
        let cases: Vec<(&str, ArrayRef)> = vec![
            (
                "int",
                Arc::new(Int32Array::from(vec![
                    None,
                    Some(i32::MIN),
                    Some(-5),
                    Some(-1),
                    Some(0),
                    Some(1),
                    Some(300),
                    Some(i32::MAX),
                ])),
            ),
            (
                "long",
                Arc::new(Int64Array::from(vec![
                    None,
                    Some(i64::MIN),
                    Some(-1),
                    Some(0),
                    Some(i64::MAX),
                ])),
            ),
            (
                "double",
                Arc::new(Float64Array::from(vec![
                    None,
                    Some(f64::NEG_INFINITY),
                    Some(-2.5),
                    Some(-0.0),
                    Some(0.0),
                    Some(1e-300),
                    Some(2.5),
                    Some(f64::INFINITY),
                    Some(f64::NAN),
                ])),
            ),
            (
                "float",
                Arc::new(Float32Array::from(vec![
                    None,
                    Some(-1.5),
                    Some(0.25),
                    Some(7.0),
                ])),
            ),
            (
                "decimal",
                Arc::new(
                    Decimal128Array::from(vec![None, Some(-12345), Some(-1), Some(0), Some(99999)])
                        .with_precision_and_scale(9, 2)
                        .expect("decimal"),
                ),
            ),
            (
                "string",
                Arc::new(StringArray::from(vec![
                    None,
                    Some(""),
                    Some("a"),
                    Some("ab"),
                    Some("abc"),
                    Some("b"),
                    Some("é"),
                ])),
            ),
            (
                "date",
                Arc::new(Date32Array::from(vec![
                    None,
                    Some(-3),
                    Some(0),
                    Some(19000),
                ])),
            ),
            (
                "timestamp",
                Arc::new(TimestampMicrosecondArray::from(vec![
                    None,
                    Some(-1_000_000),
                    Some(0),
                    Some(1_700_000_000_000_000),
                ])),
            ),
            (
                "boolean",
                Arc::new(BooleanArray::from(vec![None, Some(false), Some(true)])),
            ),
        ];
        for (name, column) in cases {
            let values = single(column);
            // NULL's zero bytes tie with the least value of a type whose form can be all
            // zeros (`i64::MIN`, the empty string), as in Java: a tie, never an inversion
            assert!(values[0] <= values[1], "{name}: NULL after the least value");
            for pair in values[1..].windows(2) {
                assert!(pair[0] < pair[1], "{name}: {:?} !< {:?}", pair[0], pair[1]);
            }
        }
    }

    /// Strings contribute `var-length-contribution` bytes: longer prefixes tie.
    #[test]
    fn strings_are_cut_to_their_contribution() {
        let options = ZOrderOptions {
            var_length_contribution: 2,
            ..Default::default()
        };
        let values = z(
            vec![Arc::new(StringArray::from(vec!["abc", "abd", "a"]))],
            &options,
        );
        assert_eq!(values[0], b"ab".to_vec());
        assert_eq!(values[0], values[1]);
        assert_eq!(values[2], vec![b'a', 0]);
    }

    /// Bits are taken one per column in turn, most significant first.
    #[test]
    fn bits_interleave_one_per_column_in_turn() {
        let mut out = [0u8; 2];
        interleave(&[&[0b1111_0000], &[0b0000_1111]], &mut out);
        assert_eq!(out, [0b1010_1010, 0b0101_0101]);
        // a column with no byte left is skipped
        let mut out = [0u8; 3];
        interleave(&[&[0xFF, 0xFF], &[0x00]], &mut out);
        assert_eq!(out, [0b1010_1010, 0b1010_1010, 0xFF]);
        // cut to the output size
        let mut out = [0u8; 1];
        interleave(&[&[0xFF], &[0xFF]], &mut out);
        assert_eq!(out, [0xFF]);
    }

    /// A z-value never decreases when any one column's value grows (the property a
    /// z-order relies on), on a grid of signed values.
    #[test]
    fn z_values_grow_with_each_column() {
        let range: Vec<i64> = (-6..6).map(|v| v * 37).collect();
        let (mut xs, mut ys) = (vec![], vec![]);
        for &x in &range {
            for &y in &range {
                xs.push(x);
                ys.push(y);
            }
        }
        let values = z(
            vec![
                Arc::new(Int64Array::from(xs.clone())),
                Arc::new(Int64Array::from(ys.clone())),
            ],
            &ZOrderOptions::default(),
        );
        assert_eq!(values[0].len(), 16);
        for i in 0..xs.len() {
            for j in 0..xs.len() {
                if xs[i] <= xs[j] && ys[i] <= ys[j] {
                    assert!(
                        values[i] <= values[j],
                        "({}, {}) vs ({}, {})",
                        xs[i],
                        ys[i],
                        xs[j],
                        ys[j]
                    );
                }
            }
        }
        // max-output-size cuts the value
        let cut = z(
            vec![
                Arc::new(Int64Array::from(xs)),
                Arc::new(Int64Array::from(ys)),
            ],
            &ZOrderOptions {
                max_output_size: 3,
                ..Default::default()
            },
        );
        assert!(cut.iter().all(|v| v.len() == 3));
        assert_eq!(cut[5], values[5][..3].to_vec());
    }

    /// Every Arrow form a scan can give a column in is read (views, dictionaries, other
    /// widths and units), ordered as its canonical type.
    #[test]
    fn other_arrow_forms_order_like_their_type() {
        use datafusion::arrow::array::{
            Date64Array, DictionaryArray, FixedSizeBinaryArray, LargeStringArray, StringViewArray,
            Time64MicrosecondArray,
        };
        use datafusion::arrow::datatypes::Int32Type;
        let cases: Vec<(&str, ArrayRef)> = vec![
            (
                "utf8view",
                Arc::new(StringViewArray::from(vec![
                    Some("a"),
                    Some("b"),
                    Some("bb"),
                ])),
            ),
            (
                "largeutf8",
                Arc::new(LargeStringArray::from(vec![
                    Some("a"),
                    Some("b"),
                    Some("bb"),
                ])),
            ),
            (
                "dictionary",
                Arc::new(DictionaryArray::<Int32Type>::from_iter(["a", "b", "bb"])),
            ),
            (
                "fixed",
                Arc::new(
                    FixedSizeBinaryArray::try_from_iter(
                        [vec![0u8, 1], vec![0, 2], vec![9, 0]].into_iter(),
                    )
                    .expect("fixed"),
                ),
            ),
            (
                "time",
                Arc::new(Time64MicrosecondArray::from(vec![0, 5, 86_399_999_999])),
            ),
            (
                "date64",
                Arc::new(Date64Array::from(vec![-86_400_000, 0, 86_400_000])),
            ),
        ];
        for (name, column) in cases {
            let values = single(column);
            for pair in values.windows(2) {
                assert!(pair[0] < pair[1], "{name}: {:?} !< {:?}", pair[0], pair[1]);
            }
        }
    }

    #[test]
    fn refuses_what_cannot_be_ordered() {
        let err = z_values(&[], &ZOrderOptions::default()).unwrap_err();
        assert!(err.to_string().contains("at least one column"), "{err}");
        let list: ArrayRef = Arc::new(datafusion::arrow::array::ListArray::new_null(
            Arc::new(datafusion::arrow::datatypes::Field::new(
                "x",
                DataType::Int32,
                true,
            )),
            1,
        ));
        let err = z_values(&[list], &ZOrderOptions::default()).unwrap_err();
        assert!(err.to_string().contains("cannot be z-ordered"), "{err}");
        let a: ArrayRef = Arc::new(Int32Array::from(vec![1]));
        let b: ArrayRef = Arc::new(Int32Array::from(vec![1, 2]));
        assert!(z_values(&[a, b], &ZOrderOptions::default()).is_err());
        // a contribution that would need gigabytes per batch is refused before any
        // allocation; the largest one allowed still orders
        let s: ArrayRef = Arc::new(StringArray::from(vec!["b", "a"]));
        let huge = ZOrderOptions {
            var_length_contribution: 1_000_000_000,
            ..Default::default()
        };
        let err = z_values(std::slice::from_ref(&s), &huge).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert!(
            err.to_string().contains("more than the 1024 bytes"),
            "{err}"
        );
        let largest = ZOrderOptions {
            var_length_contribution: MAX_VAR_LENGTH_CONTRIBUTION,
            ..Default::default()
        };
        let values = z(vec![s], &largest);
        assert_eq!(values[0].len(), MAX_VAR_LENGTH_CONTRIBUTION);
        assert!(values[1] < values[0]);
    }
}
