//! The columns of a manifest (spec: "Manifests", `manifest_entry` and `data_file`),
//! bound once per record batch, and the conversion of one row into a [`ManifestEntry`]
//! (keeping on data files the metrics of the columns a [`ColumnStats`] selects).

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StructArray};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Decimal256Type, Float32Type, Float64Type, Int32Type,
    Int64Type, Time64MicrosecondType, TimeUnit, TimestampMicrosecondType, TimestampNanosecondType,
};

use super::avro_columns::{BytesCol, Columns, IntMapCol, LongCol, LongListCol, StrCol};
use super::column_stats::ColumnStats;
use super::manifest::{
    BoundBytes, DataContentType, DataFile, DataFileFormat, ManifestEntry, ManifestStatus,
};
use super::manifest_list::ManifestFile;
use super::partition::PartitionSpec;
use super::types::PrimitiveType;
use super::values::{decimal_from_be_bytes, Literal};
use crate::error::{Error, Result};

fn missing(name: &str) -> Error {
    Error::invalid_data(format!("missing required field '{name}'"))
}

/// The columns of the `data_file` struct.
struct DataFileColumns<'a> {
    content: LongCol<'a>,
    file_path: StrCol<'a>,
    file_format: StrCol<'a>,
    /// The partition tuple's columns, in the order of the spec's fields; `None` when the
    /// file has no `partition` column (or its record has no fields).
    partition: Option<&'a StructArray>,
    record_count: LongCol<'a>,
    file_size_in_bytes: LongCol<'a>,
    column_sizes: IntMapCol<'a, LongCol<'a>>,
    value_counts: IntMapCol<'a, LongCol<'a>>,
    null_value_counts: IntMapCol<'a, LongCol<'a>>,
    nan_value_counts: IntMapCol<'a, LongCol<'a>>,
    lower_bounds: IntMapCol<'a, BytesCol<'a>>,
    upper_bounds: IntMapCol<'a, BytesCol<'a>>,
    key_metadata: BytesCol<'a>,
    split_offsets: LongListCol<'a>,
    equality_ids: LongListCol<'a>,
    sort_order_id: LongCol<'a>,
    first_row_id: LongCol<'a>,
    referenced_data_file: StrCol<'a>,
    content_offset: LongCol<'a>,
    content_size_in_bytes: LongCol<'a>,
}

/// The columns of a manifest's `manifest_entry` records.
pub(crate) struct EntryColumns<'a> {
    status: LongCol<'a>,
    snapshot_id: LongCol<'a>,
    sequence_number: LongCol<'a>,
    file_sequence_number: LongCol<'a>,
    data_file: Option<(&'a StructArray, DataFileColumns<'a>)>,
    types: &'a [PrimitiveType],
}

impl<'a> EntryColumns<'a> {
    /// Bind the columns of one batch; errors name a field of the wrong type.
    pub(crate) fn bind(
        c: &Columns<'a>,
        spec: &'a PartitionSpec,
        types: &'a [PrimitiveType],
    ) -> Result<Self> {
        let data_file = match c.struct_col("data_file")? {
            None => None,
            Some(s) => Some((s, DataFileColumns::bind(&Columns::of_struct(s), spec)?)),
        };
        Ok(EntryColumns {
            status: c.long("status")?,
            snapshot_id: c.long("snapshot_id")?,
            sequence_number: c.long("sequence_number")?,
            file_sequence_number: c.long("file_sequence_number")?,
            data_file,
            types,
        })
    }

    /// The entry at `row`, with null snapshot id and sequence numbers inherited from
    /// `manifest` (spec: "Sequence Number Inheritance").
    pub(crate) fn entry(
        &self,
        row: usize,
        manifest: &ManifestFile,
        spec: &PartitionSpec,
        stats: &ColumnStats,
    ) -> Result<ManifestEntry> {
        let status = match self
            .status
            .get_int(row, "status")?
            .ok_or_else(|| missing("status"))?
        {
            0 => ManifestStatus::Existing,
            1 => ManifestStatus::Added,
            2 => ManifestStatus::Deleted,
            other => {
                return Err(Error::invalid_data(format!(
                    "field 'status': unknown value {other}"
                )))
            }
        };
        // A null sequence number is only valid on an ADDED entry, which takes the
        // manifest's sequence number.
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
        let data_sequence_number = inherit(self.sequence_number.get(row), "sequence_number")?;
        let file_sequence_number =
            inherit(self.file_sequence_number.get(row), "file_sequence_number")?;
        let snapshot_id = self
            .snapshot_id
            .get(row)
            .unwrap_or(manifest.added_snapshot_id);
        let data_file = match &self.data_file {
            Some((array, columns)) if array.is_valid(row) => {
                columns.data_file(row, spec, self.types, stats)?
            }
            _ => return Err(missing("data_file")),
        };
        Ok(ManifestEntry {
            status,
            snapshot_id,
            data_sequence_number,
            file_sequence_number,
            spec_id: spec.spec_id,
            data_file,
        })
    }
}

impl<'a> DataFileColumns<'a> {
    fn bind(c: &Columns<'a>, spec: &PartitionSpec) -> Result<Self> {
        let partition = c.struct_col("partition")?;
        if let Some(p) = partition {
            if p.num_columns() != spec.fields.len() {
                return Err(Error::invalid_data(format!(
                    "field 'partition': {} values for spec {} with {} fields",
                    p.num_columns(),
                    spec.spec_id,
                    spec.fields.len()
                )));
            }
        }
        Ok(DataFileColumns {
            content: c.long("content")?,
            file_path: c.string("file_path")?,
            file_format: c.string("file_format")?,
            partition,
            record_count: c.long("record_count")?,
            file_size_in_bytes: c.long("file_size_in_bytes")?,
            column_sizes: c.long_map("column_sizes")?,
            value_counts: c.long_map("value_counts")?,
            null_value_counts: c.long_map("null_value_counts")?,
            nan_value_counts: c.long_map("nan_value_counts")?,
            lower_bounds: c.bytes_map("lower_bounds")?,
            upper_bounds: c.bytes_map("upper_bounds")?,
            key_metadata: c.bytes("key_metadata")?,
            split_offsets: c.long_list("split_offsets")?,
            equality_ids: c.long_list("equality_ids")?,
            sort_order_id: c.long("sort_order_id")?,
            first_row_id: c.long("first_row_id")?,
            referenced_data_file: c.string("referenced_data_file")?,
            content_offset: c.long("content_offset")?,
            content_size_in_bytes: c.long("content_size_in_bytes")?,
        })
    }

    fn data_file(
        &self,
        row: usize,
        spec: &PartitionSpec,
        types: &[PrimitiveType],
        stats: &ColumnStats,
    ) -> Result<DataFile> {
        let content = match self.content.get_int(row, "content")?.unwrap_or(0) {
            0 => DataContentType::Data,
            1 => DataContentType::PositionDeletes,
            2 => DataContentType::EqualityDeletes,
            other => {
                return Err(Error::invalid_data(format!(
                    "field 'content': unknown value {other}"
                )))
            }
        };
        let format = self
            .file_format
            .get(row)
            .ok_or_else(|| missing("file_format"))?;
        let file_format = if format.eq_ignore_ascii_case("PARQUET") {
            DataFileFormat::Parquet
        } else if format.eq_ignore_ascii_case("AVRO") {
            DataFileFormat::Avro
        } else if format.eq_ignore_ascii_case("ORC") {
            DataFileFormat::Orc
        } else if format.eq_ignore_ascii_case("PUFFIN") {
            DataFileFormat::Puffin
        } else {
            return Err(Error::invalid_data(format!(
                "field 'file_format': unknown format '{format}'"
            )));
        };
        let partition = match self.partition {
            Some(p) if p.is_valid(row) => p
                .columns()
                .iter()
                .zip(spec.fields.iter().zip(types))
                .map(|(col, (f, ty))| match ty {
                    PrimitiveType::Unknown => Ok(None),
                    ty => partition_literal(col, row, ty, &f.name),
                })
                .collect::<Result<Vec<_>>>()?,
            _ => vec![],
        };
        // Delete files keep every column's metrics (see `ColumnStats`).
        let keep = match content {
            DataContentType::Data => stats,
            _ => &ColumnStats::All,
        };
        let longs = |m: &IntMapCol<'_, LongCol<'_>>, name: &str| {
            m.get_kept(row, name, keep, |v: &LongCol<'_>, i| v.get(i))
        };
        let bytes = |m: &IntMapCol<'_, BytesCol<'_>>, name: &str| {
            m.get_kept(row, name, keep, |v: &BytesCol<'_>, i| {
                v.get(i).map(BoundBytes::from_slice)
            })
        };
        let file_path = match self.file_path.get(row) {
            None => return Err(missing("file_path")),
            Some("") => return Err(Error::invalid_data("field 'file_path': empty location")),
            Some(p) => p.to_string(),
        };
        let equality_ids = self
            .equality_ids
            .get(row, "equality_ids")?
            .into_iter()
            .map(|v| {
                i32::try_from(v)
                    .map_err(|_| Error::invalid_data("field 'equality_ids': out of range"))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DataFile {
            content,
            file_path,
            file_format,
            partition,
            record_count: self
                .record_count
                .get(row)
                .ok_or_else(|| missing("record_count"))?,
            file_size_in_bytes: self
                .file_size_in_bytes
                .get(row)
                .ok_or_else(|| missing("file_size_in_bytes"))?,
            column_sizes: longs(&self.column_sizes, "column_sizes")?,
            value_counts: longs(&self.value_counts, "value_counts")?,
            null_value_counts: longs(&self.null_value_counts, "null_value_counts")?,
            nan_value_counts: longs(&self.nan_value_counts, "nan_value_counts")?,
            lower_bounds: bytes(&self.lower_bounds, "lower_bounds")?,
            upper_bounds: bytes(&self.upper_bounds, "upper_bounds")?,
            key_metadata: self.key_metadata.get(row).map(<[u8]>::to_vec),
            split_offsets: self.split_offsets.get(row, "split_offsets")?,
            equality_ids,
            sort_order_id: self.sort_order_id.get_int(row, "sort_order_id")?,
            first_row_id: self.first_row_id.get(row),
            referenced_data_file: self.referenced_data_file.get(row).map(str::to_string),
            content_offset: self.content_offset.get(row),
            content_size_in_bytes: self.content_size_in_bytes.get(row),
        })
    }
}

/// The value at `row` of a partition column as a [`Literal`] of the partition field's
/// type `ty` (spec: "Avro" type mapping; a value written with a promoted type's narrower
/// form, e.g. int for long, is widened). `None` for null; an error naming the field for
/// a value of the wrong shape.
fn partition_literal(
    col: &ArrayRef,
    row: usize,
    ty: &PrimitiveType,
    field: &str,
) -> Result<Option<Literal>> {
    if col.is_null(row) {
        return Ok(None);
    }
    let bad = || {
        Error::invalid_data(format!(
            "partition field '{field}': value of Avro type read as {} does not match type {ty}",
            col.data_type()
        ))
    };
    let dt = col.data_type();
    let lit = match (ty, dt) {
        (PrimitiveType::Boolean, DataType::Boolean) => {
            Literal::Boolean(col.as_boolean().value(row))
        }
        (PrimitiveType::Int, DataType::Int32) => {
            Literal::Int(col.as_primitive::<Int32Type>().value(row))
        }
        (PrimitiveType::Long, DataType::Int64) => {
            Literal::Long(col.as_primitive::<Int64Type>().value(row))
        }
        (PrimitiveType::Long, DataType::Int32) => {
            Literal::Long(i64::from(col.as_primitive::<Int32Type>().value(row)))
        }
        (PrimitiveType::Float, DataType::Float32) => {
            Literal::Float(col.as_primitive::<Float32Type>().value(row))
        }
        (PrimitiveType::Double, DataType::Float64) => {
            Literal::Double(col.as_primitive::<Float64Type>().value(row))
        }
        (PrimitiveType::Double, DataType::Float32) => {
            Literal::Double(f64::from(col.as_primitive::<Float32Type>().value(row)))
        }
        (PrimitiveType::Date, DataType::Date32) => {
            Literal::Date(col.as_primitive::<Date32Type>().value(row))
        }
        (PrimitiveType::Date, DataType::Int32) => {
            Literal::Date(col.as_primitive::<Int32Type>().value(row))
        }
        (PrimitiveType::Time, DataType::Time64(TimeUnit::Microsecond)) => {
            Literal::Time(col.as_primitive::<Time64MicrosecondType>().value(row))
        }
        (PrimitiveType::Time, DataType::Int64) => {
            Literal::Time(col.as_primitive::<Int64Type>().value(row))
        }
        (
            PrimitiveType::Timestamp | PrimitiveType::Timestamptz,
            DataType::Timestamp(TimeUnit::Microsecond, _) | DataType::Int64,
        ) => {
            let v = match dt {
                DataType::Int64 => col.as_primitive::<Int64Type>().value(row),
                _ => col.as_primitive::<TimestampMicrosecondType>().value(row),
            };
            if *ty == PrimitiveType::Timestamp {
                Literal::Timestamp(v)
            } else {
                Literal::Timestamptz(v)
            }
        }
        (
            PrimitiveType::TimestampNs | PrimitiveType::TimestamptzNs,
            DataType::Timestamp(TimeUnit::Nanosecond, _) | DataType::Int64,
        ) => {
            let v = match dt {
                DataType::Int64 => col.as_primitive::<Int64Type>().value(row),
                _ => col.as_primitive::<TimestampNanosecondType>().value(row),
            };
            if *ty == PrimitiveType::TimestampNs {
                Literal::TimestampNs(v)
            } else {
                Literal::TimestamptzNs(v)
            }
        }
        (PrimitiveType::String, DataType::Utf8) => {
            Literal::String(col.as_string::<i32>().value(row).to_string())
        }
        (PrimitiveType::String, DataType::Utf8View) => {
            Literal::String(col.as_string_view().value(row).to_string())
        }
        (PrimitiveType::Uuid, DataType::FixedSizeBinary(16)) => {
            let mut arr = [0u8; 16];
            arr.copy_from_slice(col.as_fixed_size_binary().value(row));
            Literal::Uuid(arr)
        }
        (PrimitiveType::Uuid, DataType::Utf8) => Literal::Uuid(
            *uuid::Uuid::parse_str(col.as_string::<i32>().value(row))
                .map_err(|e| {
                    Error::invalid_data(format!("partition field '{field}': bad uuid"))
                        .with_source(e)
                })?
                .as_bytes(),
        ),
        (PrimitiveType::Fixed(_), DataType::FixedSizeBinary(_)) => {
            Literal::Fixed(col.as_fixed_size_binary().value(row).to_vec())
        }
        (PrimitiveType::Binary, _) => match BytesCol::of(col).and_then(|b| b.get(row)) {
            Some(b) => Literal::Binary(b.to_vec()),
            None => return Err(bad()),
        },
        (PrimitiveType::Decimal { precision, scale }, _) => {
            let unscaled = match dt {
                DataType::Decimal128(..) => col.as_primitive::<Decimal128Type>().value(row),
                DataType::Decimal256(..) => col
                    .as_primitive::<Decimal256Type>()
                    .value(row)
                    .to_i128()
                    .ok_or_else(|| {
                        Error::invalid_data(format!(
                            "partition field '{field}': decimal exceeds 16 bytes"
                        ))
                    })?,
                _ => match BytesCol::of(col).and_then(|b| b.get(row)) {
                    Some(b) => decimal_from_be_bytes(b)?,
                    None => return Err(bad()),
                },
            };
            Literal::Decimal {
                unscaled,
                precision: *precision,
                scale: *scale,
            }
        }
        _ => return Err(bad()),
    };
    Ok(Some(lit))
}
