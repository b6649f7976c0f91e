//! Iceberg schemas and data-file metrics from Parquet footers, for registering
//! existing Parquet files in a table ("add_files") and for the files
//! [`super::PartitionedDataFileWriter`] writes ([`data_file_from_footer`], with metrics
//! modes and NaN counts).
//!
//! Metrics per leaf column with a Parquet field id and a primitive type in the table
//! schema (spec: "Manifests", fields 108–128; leaves nested in structs included, leaves
//! inside lists and maps get their column size only, as Iceberg Java does):
//! `column_sizes` (compressed bytes summed over row groups), `value_counts` (values
//! including nulls), `null_value_counts`, and `lower_bounds` / `upper_bounds` in the
//! single-value binary form, taken from the row-group statistics. A column whose
//! statistics are missing in any row group gets no bounds (and no null count) — a
//! missing metric only weakens pruning, a wrong one would drop rows.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use datafusion::parquet::arrow::parquet_to_arrow_schema;
use datafusion::parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
use datafusion::parquet::file::statistics::Statistics;
use datafusion::parquet::schema::types::ColumnDescriptor;

use super::bounds::{
    decimal_from_parquet_bytes, literal_to_bytes, truncate_binary_lower, truncate_binary_upper,
    truncate_string_lower, truncate_string_upper,
};
use super::metrics_config::MetricsMode;
use crate::error::{Error, ErrorKind, Result};
use crate::expr::compare;
use crate::expr::literal::is_nan;
use crate::io::parquet_statistics::trusted_min_max;
use crate::spec::name_mapping::NameMapping;
use crate::spec::{
    DataContentType, DataFile, DataFileFormat, IntMap, Literal, PrimitiveType, Schema,
};

/// The footer of a local Parquet file.
pub fn read_parquet_metadata(path: &Path) -> Result<ParquetMetaData> {
    let io = |e: std::io::Error| {
        Error::new(ErrorKind::Io, format!("cannot open '{}'", path.display())).with_source(e)
    };
    let file = File::open(path).map_err(io)?;
    let reader = SerializedFileReader::new(file).map_err(|e| {
        Error::invalid_data(format!(
            "'{}' is not a readable Parquet file",
            path.display()
        ))
        .with_source(e)
    })?;
    Ok(reader.metadata().clone())
}

/// The Iceberg schema (id 0) of a local Parquet file whose columns carry field ids (see
/// [`crate::spec::arrow::schema_from_arrow`]).
pub fn schema_from_parquet(path: &Path) -> Result<Schema> {
    let meta = read_parquet_metadata(path)?;
    let file_meta = meta.file_metadata();
    let arrow = parquet_to_arrow_schema(file_meta.schema_descr(), file_meta.key_value_metadata())
        .map_err(|e| {
        Error::invalid_data(format!("schema of '{}'", path.display())).with_source(e)
    })?;
    crate::spec::arrow::schema_from_arrow(&arrow, 0)
        .map_err(|e| e.context(format!("'{}'", path.display())))
}

/// A statistics value (min or max) as a literal of Iceberg type `ty`; `None` when the
/// physical and Iceberg types do not pair up (no bound is written then).
/// Nanoseconds per unit of an INT64 time or timestamp column (`TIMESTAMP(MILLIS|MICROS|
/// NANOS, _)`, `TIME(…)` or the legacy converted types), `None` when the column is not
/// annotated as one.
fn int64_time_unit_nanos(col: &ColumnDescriptor) -> Option<i64> {
    use datafusion::parquet::basic::{ConvertedType, LogicalType, TimeUnit};
    let unit = match col.logical_type_ref() {
        Some(LogicalType::Timestamp(t)) => t.unit,
        Some(LogicalType::Time(t)) => t.unit,
        _ => match col.converted_type() {
            ConvertedType::TIMESTAMP_MILLIS | ConvertedType::TIME_MILLIS => return Some(1_000_000),
            ConvertedType::TIMESTAMP_MICROS | ConvertedType::TIME_MICROS => return Some(1_000),
            _ => return None,
        },
    };
    Some(match unit {
        TimeUnit::MILLIS => 1_000_000,
        TimeUnit::MICROS => 1_000,
        TimeUnit::NANOS => 1,
    })
}

/// `v` (in units of `from` ns) in units of `to` ns, when that is exact: `None` for a
/// value with a part finer than `to` (a nanosecond bound of a microsecond column). A
/// bound is the column's value as read (spec "Metrics"; statistics give it as the exact
/// `MIN`/`MAX`), and such a value is read rounded: a bound rounded outward (the upper
/// one up) held the values but was not one, and `max(ts)` answered from it read a
/// microsecond no row holds.
fn rescale(v: i64, from: i64, to: i64) -> Option<i64> {
    if from >= to {
        v.checked_mul(from / to)
    } else {
        let d = to / from;
        (v.rem_euclid(d) == 0).then(|| v.div_euclid(d))
    }
}

/// A bound from row-group statistics as a literal of the Iceberg type `ty`. INT64 times
/// and timestamps are rescaled from the column's unit (`unit_nanos`, see
/// [`int64_time_unit_nanos`]) to the type's (µs, or ns for `timestamp_ns`); a value
/// finer than the type's unit, or one without a unit annotation, gives no bound. INT96 statistics give none either (their order
/// is not the values' order).
fn stat_literal(
    stats: &Statistics,
    min: bool,
    ty: &PrimitiveType,
    unit_nanos: Option<i64>,
) -> Option<Literal> {
    use PrimitiveType as P;
    let bytes = if min {
        stats.min_bytes_opt()?
    } else {
        stats.max_bytes_opt()?
    };
    match stats {
        Statistics::Boolean(_) => Some(Literal::Boolean(*bytes.first()? != 0)),
        Statistics::Int32(_) => {
            let v = i32::from_le_bytes(bytes.try_into().ok()?);
            match ty {
                P::Int => Some(Literal::Int(v)),
                P::Date => Some(Literal::Date(v)),
                P::Long => Some(Literal::Long(i64::from(v))),
                P::Decimal { precision, scale } => Some(Literal::Decimal {
                    unscaled: i128::from(v),
                    precision: *precision,
                    scale: *scale,
                }),
                _ => None,
            }
        }
        Statistics::Int64(_) => {
            let v = i64::from_le_bytes(bytes.try_into().ok()?);
            let micros = || rescale(v, unit_nanos?, 1_000);
            let nanos = || rescale(v, unit_nanos?, 1);
            match ty {
                P::Long => Some(Literal::Long(v)),
                P::Time => Some(Literal::Time(micros()?)),
                P::Timestamp => Some(Literal::Timestamp(micros()?)),
                P::Timestamptz => Some(Literal::Timestamptz(micros()?)),
                P::TimestampNs => Some(Literal::TimestampNs(nanos()?)),
                P::TimestamptzNs => Some(Literal::TimestamptzNs(nanos()?)),
                P::Decimal { precision, scale } => Some(Literal::Decimal {
                    unscaled: i128::from(v),
                    precision: *precision,
                    scale: *scale,
                }),
                _ => None,
            }
        }
        Statistics::Float(_) if *ty == P::Float => {
            Some(Literal::Float(f32::from_le_bytes(bytes.try_into().ok()?))).filter(|l| !is_nan(l))
        }
        Statistics::Double(_) if *ty == P::Double => {
            Some(Literal::Double(f64::from_le_bytes(bytes.try_into().ok()?))).filter(|l| !is_nan(l))
        }
        Statistics::ByteArray(_) | Statistics::FixedLenByteArray(_) => match ty {
            P::String => String::from_utf8(bytes.to_vec()).ok().map(Literal::String),
            P::Binary => Some(Literal::Binary(bytes.to_vec())),
            P::Fixed(_) => Some(Literal::Fixed(bytes.to_vec())),
            P::Uuid => Some(Literal::Uuid(bytes.try_into().ok()?)),
            P::Decimal { precision, scale } => Some(Literal::Decimal {
                unscaled: decimal_from_parquet_bytes(bytes).ok()?,
                precision: *precision,
                scale: *scale,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a leaf column holds unsigned integers (`UINT_8` … `UINT_64`, or the logical
/// type `INTEGER(bits, false)`), whose min/max statistics follow unsigned order.
fn is_unsigned(col: &ColumnDescriptor) -> bool {
    use datafusion::parquet::basic::{ConvertedType, LogicalType};
    matches!(col.logical_type_ref(), Some(LogicalType::Integer(int)) if !int.is_signed)
        || matches!(
            col.converted_type(),
            ConvertedType::UINT_8
                | ConvertedType::UINT_16
                | ConvertedType::UINT_32
                | ConvertedType::UINT_64
        )
}

/// Float/double metrics of one column gathered from the Arrow data while writing
/// (Parquet statistics leave NaN out and say nothing of how many there were).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FloatFieldStats {
    /// NaN values (nulls excluded).
    pub nan_count: i64,
    /// The smallest non-NaN value (`-0.0` below `0.0`), if any.
    pub lower: Option<f64>,
    /// The largest non-NaN value, if any.
    pub upper: Option<f64>,
}

impl FloatFieldStats {
    /// Count one non-null value.
    pub fn update(&mut self, v: f64) {
        if v.is_nan() {
            self.nan_count += 1;
            return;
        }
        if self.lower.is_none_or(|l| v.total_cmp(&l).is_lt()) {
            self.lower = Some(v);
        }
        if self.upper.is_none_or(|u| v.total_cmp(&u).is_gt()) {
            self.upper = Some(v);
        }
    }
}

/// Per-column accumulation over row groups.
struct ColumnMetrics {
    id: i32,
    ty: PrimitiveType,
    mode: MetricsMode,
    /// Inside a list or map: only the column size is kept (as Iceberg Java does).
    repeated: bool,
    size: i64,
    values: i64,
    nulls: Option<i64>,
    lower: Option<Literal>,
    upper: Option<Literal>,
    /// Cleared when a row group has no usable min/max.
    bounds_valid: bool,
}

impl ColumnMetrics {
    fn add_chunk(&mut self, cc: &ColumnChunkMetaData) {
        self.size += cc.compressed_size();
        self.values += cc.num_values();
        if self.repeated {
            return;
        }
        let stats = cc.statistics();
        let chunk_nulls = stats.and_then(Statistics::null_count_opt);
        self.nulls = match (self.nulls, chunk_nulls) {
            (Some(n), Some(c)) => Some(n + c as i64),
            _ => None,
        };
        if !self.mode.keeps_bounds() || !self.bounds_valid {
            return;
        }
        if chunk_nulls.is_some_and(|n| n as i64 == cc.num_values()) {
            return; // all null: no min/max to expect
        }
        let ty = &self.ty;
        let unit = int64_time_unit_nanos(cc.column_descr());
        // deprecated min/max of a column not in signed order are no bounds
        // (parquet_statistics)
        let bounds = stats
            .filter(|s| trusted_min_max(s, cc.column_descr()))
            .and_then(|s| {
                Some((
                    stat_literal(s, true, ty, unit)?,
                    stat_literal(s, false, ty, unit)?,
                ))
            });
        match bounds {
            None => self.bounds_valid = false,
            Some((lo, hi)) => {
                if self
                    .lower
                    .as_ref()
                    .is_none_or(|l| compare(&lo, l) == Some(Ordering::Less))
                {
                    self.lower = Some(lo);
                }
                if self
                    .upper
                    .as_ref()
                    .is_none_or(|u| compare(&hi, u) == Some(Ordering::Greater))
                {
                    self.upper = Some(hi);
                }
            }
        }
    }

    /// Record this column's metrics in `file`, per its mode.
    fn record(self, file: &mut DataFile, float: Option<&FloatFieldStats>) {
        let id = self.id;
        file.column_sizes.insert(id, self.size);
        if self.repeated {
            return;
        }
        file.value_counts.insert(id, self.values);
        if let Some(n) = self.nulls {
            file.null_value_counts.insert(id, n);
        }
        let (lower, upper) = match (float, &self.ty) {
            (Some(f), ty @ (PrimitiveType::Float | PrimitiveType::Double)) => {
                file.nan_value_counts.insert(id, f.nan_count);
                let lit = |v: f64| match ty {
                    PrimitiveType::Float => Literal::Float(v as f32),
                    _ => Literal::Double(v),
                };
                (f.lower.map(lit), f.upper.map(lit))
            }
            _ if self.bounds_valid => (self.lower, self.upper),
            _ => (None, None),
        };
        if !self.mode.keeps_bounds() {
            return;
        }
        let width = match self.mode {
            MetricsMode::Truncate(n) => n as usize,
            _ => usize::MAX,
        };
        if let Some(lo) = lower.and_then(|l| truncate_lower(l, width)) {
            file.lower_bounds.insert(id, literal_to_bytes(&lo));
        }
        if let Some(hi) = upper.and_then(|u| truncate_upper(u, width)) {
            file.upper_bounds.insert(id, literal_to_bytes(&hi));
        }
    }
}

/// A lower bound cut to `width` (strings by code points, binary by bytes); NaN dropped.
fn truncate_lower(l: Literal, width: usize) -> Option<Literal> {
    Some(match l {
        Literal::String(s) => Literal::String(truncate_string_lower(&s, width).to_string()),
        Literal::Binary(b) => Literal::Binary(truncate_binary_lower(&b, width).to_vec()),
        other if is_nan(&other) => return None,
        other => other,
    })
}

/// An upper bound cut to `width` and incremented; `None` when none exists, or NaN.
fn truncate_upper(u: Literal, width: usize) -> Option<Literal> {
    Some(match u {
        Literal::String(s) => Literal::String(truncate_string_upper(&s, width)?),
        Literal::Binary(b) => Literal::Binary(truncate_binary_upper(&b, width)?),
        other if is_nan(&other) => return None,
        other => other,
    })
}

/// A data (or delete) file entry for a local Parquet file with the metrics of its
/// footer, typed by `schema` (columns matched by Parquet field id).
///
/// `file_path` is the location to record (e.g. `file:///…`), `partition` the partition
/// tuple, `content` data or delete content, `equality_ids` for equality delete files.
///
/// Errors: an unreadable file ([`ErrorKind::Io`] / [`ErrorKind::InvalidData`]).
pub fn data_file_from_parquet(
    path: &Path,
    file_path: &str,
    schema: &Schema,
    partition: Vec<Option<Literal>>,
    content: DataContentType,
    equality_ids: Vec<i32>,
) -> Result<DataFile> {
    let meta = read_parquet_metadata(path)?;
    let file_size = std::fs::metadata(path)
        .map_err(|e| {
            Error::new(ErrorKind::Io, format!("cannot stat '{}'", path.display())).with_source(e)
        })?
        .len() as i64;
    Ok(data_file_from_metadata(
        &meta,
        file_size,
        file_path,
        schema,
        partition,
        content,
        equality_ids,
    ))
}

/// Like [`data_file_from_parquet`], from an already-read footer and the file's size in
/// bytes; every column's metrics in `full` mode.
pub fn data_file_from_metadata(
    meta: &ParquetMetaData,
    file_size_in_bytes: i64,
    file_path: &str,
    schema: &Schema,
    partition: Vec<Option<Literal>>,
    content: DataContentType,
    equality_ids: Vec<i32>,
) -> DataFile {
    let mut file = data_file_from_footer(
        meta,
        file_size_in_bytes,
        file_path,
        schema,
        partition,
        &|_| MetricsMode::Full,
        &HashMap::new(),
    );
    file.content = content;
    file.sort_order_id = unsorted_order_id(content);
    file.equality_ids = equality_ids;
    file
}

/// A data file entry (content `Data`) for a written Parquet file: record count, size in
/// bytes, split offsets (row-group starts) and per-column metrics (spec: "Manifests",
/// fields 108–128, 137) for leaf columns with a Parquet field id, as `mode_of(field id)`
/// asks:
///
/// - `none`: nothing; otherwise `column_sizes` (compressed bytes over row groups);
/// - leaves inside a list or map: the column size only (as Iceberg Java);
/// - `value_counts`; `null_value_counts` when every row group has statistics;
/// - float/double columns in `float_stats`: `nan_value_counts` and bounds from those
///   (never NaN); others: bounds from the row-group statistics, dropped when a row
///   group has none or when a bound would be NaN;
/// - `counts`: no bounds; `truncate(N)`: string bounds cut to N code points and binary
///   bounds to N bytes, the upper bound incremented (no upper bound when that is
///   impossible); `full`: exact bounds.
pub fn data_file_from_footer(
    meta: &ParquetMetaData,
    file_size_in_bytes: i64,
    file_path: &str,
    schema: &Schema,
    partition: Vec<Option<Literal>>,
    mode_of: &dyn Fn(i32) -> MetricsMode,
    float_stats: &HashMap<i32, FloatFieldStats>,
) -> DataFile {
    let ids = leaf_field_ids(meta, None);
    data_file_from_footer_ids(
        meta,
        file_size_in_bytes,
        file_path,
        schema,
        partition,
        mode_of,
        float_stats,
        &ids,
    )
}

/// The field id of each leaf column of a Parquet file: the one the file stores, else
/// (a file written without ids, e.g. one registered by `add_files`) the one `mapping`
/// gives its path (spec: "Column Projection", name mapping; list and map wrappers of the
/// Parquet three-level forms are stepped over). `None`: no id.
pub fn leaf_field_ids(meta: &ParquetMetaData, mapping: Option<&NameMapping>) -> Vec<Option<i32>> {
    let descr = meta.file_metadata().schema_descr();
    (0..descr.num_columns())
        .map(|i| {
            let col = descr.column(i);
            let info = col.self_type().get_basic_info();
            if info.has_id() {
                return Some(info.id());
            }
            let parts = col.path().parts();
            let (first, rest) = parts.split_first()?;
            let mut field = mapping?.find(first)?;
            for part in rest {
                field = match field.find(part) {
                    Some(f) => f,
                    // the repeated group of a three-level list or map
                    None if matches!(part.as_str(), "list" | "key_value" | "bag" | "array") => {
                        continue
                    }
                    None => return None,
                };
            }
            field.field_id
        })
        .collect()
}

/// [`data_file_from_footer`] with each leaf column's field id given (`ids`, by leaf
/// index; see [`leaf_field_ids`]).
#[allow(clippy::too_many_arguments)]
pub fn data_file_from_footer_ids(
    meta: &ParquetMetaData,
    file_size_in_bytes: i64,
    file_path: &str,
    schema: &Schema,
    partition: Vec<Option<Literal>>,
    mode_of: &dyn Fn(i32) -> MetricsMode,
    float_stats: &HashMap<i32, FloatFieldStats>,
    ids: &[Option<i32>],
) -> DataFile {
    let descr = meta.file_metadata().schema_descr();
    // Leaf column index → its accumulator (None: no field id, or mode `none`).
    let mut columns: Vec<Option<ColumnMetrics>> = (0..descr.num_columns())
        .map(|i| {
            let col = descr.column(i);
            let id = (*ids.get(i)?)?;
            let ty = schema.primitive_type(id)?;
            let mode = mode_of(id);
            if mode == MetricsMode::None {
                return None;
            }
            Some(ColumnMetrics {
                id,
                ty,
                mode,
                repeated: col.max_rep_level() > 0,
                size: 0,
                values: 0,
                nulls: Some(0),
                lower: None,
                upper: None,
                // unsigned integers are ordered as such in their statistics, read as
                // signed they would give wrong bounds (and prune rows away)
                bounds_valid: !is_unsigned(&col),
            })
        })
        .collect();
    let mut split_offsets = Vec::with_capacity(meta.num_row_groups());
    for rg in meta.row_groups() {
        if let Some(first) = rg.columns().first() {
            let offset = first
                .dictionary_page_offset()
                .unwrap_or_else(|| first.data_page_offset());
            split_offsets.push(offset);
        }
        for (cc, m) in rg.columns().iter().zip(columns.iter_mut()) {
            if let Some(m) = m {
                m.add_chunk(cc);
            }
        }
    }
    let mut file = empty_data_file(file_path, DataContentType::Data);
    file.partition = partition;
    file.record_count = meta.file_metadata().num_rows();
    file.file_size_in_bytes = file_size_in_bytes;
    file.split_offsets = split_offsets;
    for m in columns.into_iter().flatten() {
        let float = float_stats.get(&m.id);
        m.record(&mut file, float);
    }
    file
}

/// The `sort_order_id` of a file of `content` written in no particular order: 0, the
/// unsorted order, for data and equality delete files; none for position delete files
/// and deletion vectors (spec "Manifests": "Only data files and equality delete files
/// should be written with a non-null order id"; Java's `DataFiles.Builder` and
/// `FileMetadata.Builder` default alike).
pub fn unsorted_order_id(content: DataContentType) -> Option<i32> {
    match content {
        DataContentType::Data | DataContentType::EqualityDeletes => Some(0),
        DataContentType::PositionDeletes => None,
    }
}

/// A Parquet data or delete file entry with no partition values, no metrics and zero
/// counts, for callers that fill in what they know; its `sort_order_id` is
/// [`unsorted_order_id`] of `content`.
pub fn empty_data_file(file_path: &str, content: DataContentType) -> DataFile {
    DataFile {
        content,
        file_path: file_path.to_string(),
        file_format: DataFileFormat::Parquet,
        partition: vec![],
        record_count: 0,
        file_size_in_bytes: 0,
        column_sizes: IntMap::new(),
        value_counts: IntMap::new(),
        null_value_counts: IntMap::new(),
        nan_value_counts: IntMap::new(),
        lower_bounds: IntMap::new(),
        upper_bounds: IntMap::new(),
        key_metadata: None,
        split_offsets: vec![],
        equality_ids: vec![],
        sort_order_id: unsorted_order_id(content),
        first_row_id: None,
        referenced_data_file: None,
        content_offset: None,
        content_size_in_bytes: None,
    }
}
