//! Whether a column stored in a data file with one Arrow type reads as the table's
//! column (spec: "Schema Evolution", type promotion; plus the other Parquet encodings of
//! one Iceberg type that readers accept), checked where data files are opened and where
//! existing files are registered (`add_files`).

use datafusion::arrow::datatypes::{DataType, Field};

use super::arrow::{arrow_field_id, primitive_from_arrow};

/// Whether a column stored as `file` reads as the table's `table` field: the same type or
/// a promotion the spec allows, recursing into structs (children matched by field id),
/// lists and maps. `path` is the column's dotted name, for the error.
pub(crate) fn check_field(table: &Field, file: &Field, path: &str) -> Result<(), String> {
    let file_type = match file.data_type() {
        DataType::Dictionary(_, value) => value.as_ref(),
        other => other,
    };
    match (file_type, table.data_type()) {
        (DataType::Null, _) => Ok(()),
        (DataType::Struct(file_fields), DataType::Struct(table_fields)) => {
            for t in table_fields {
                let Some(id) = arrow_field_id(t) else {
                    continue;
                };
                if let Some(f) = file_fields.iter().find(|f| arrow_field_id(f) == Some(id)) {
                    check_field(t, f, &format!("{path}.{}", t.name()))?;
                }
            }
            Ok(())
        }
        (
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _),
            DataType::List(t) | DataType::LargeList(t),
        ) => check_field(t, f, &format!("{path}.element")),
        (DataType::Map(f, _), DataType::Map(t, _)) => match (f.data_type(), t.data_type()) {
            (DataType::Struct(fkv), DataType::Struct(tkv)) if fkv.len() == 2 && tkv.len() == 2 => {
                check_field(&tkv[0], &fkv[0], &format!("{path}.key"))?;
                check_field(&tkv[1], &fkv[1], &format!("{path}.value"))
            }
            _ => Err(mismatch(table, file_type, path)),
        },
        (f, t) if readable_as(f, t) => Ok(()),
        _ => Err(mismatch(table, file_type, path)),
    }
}

fn mismatch(table: &Field, file_type: &DataType, path: &str) -> String {
    let id = arrow_field_id(table).map_or(String::new(), |id| format!(" (field id {id})"));
    let table_type = match primitive_from_arrow(table.data_type()) {
        Ok(p) => p.to_string(),
        Err(_) => table.data_type().to_string(),
    };
    format!(
        "column '{path}'{id} is stored as {file_type}, which does not read as the table's type \
         {table_type}: only the spec's type promotions are applied (int→long, float→double, \
         decimal precision widening, date→timestamp)"
    )
}

/// Whether a primitive stored as `file` (the Arrow type the Parquet reader gives it) holds
/// values of the table's `table` type exactly. Beyond the spec's promotions this allows
/// the other Parquet encodings of one Iceberg type: narrower integer logical types
/// (`INT(8|16)`, unsigned up to 32 bits), timestamps in any unit or INT96 (converted
/// exactly, see the scan), `TIME_MILLIS`, strings stored as unannotated `BYTE_ARRAY` (old
/// Hive/Impala writers), and the Arrow string/binary layouts.
pub(crate) fn readable_as(file: &DataType, table: &DataType) -> bool {
    use DataType::*;
    let stringy = |t: &DataType| matches!(t, Utf8 | LargeUtf8 | Utf8View);
    let bytes = |t: &DataType| matches!(t, Binary | LargeBinary | BinaryView);
    let decimal = |t: &DataType| match t {
        Decimal32(p, s) | Decimal64(p, s) => Some((*p, *s)),
        Decimal128(p, s) | Decimal256(p, s) => Some((*p, *s)),
        _ => None,
    };
    if file == table {
        return true;
    }
    match (file, table) {
        (Int8 | Int16 | Int32 | UInt8 | UInt16, Int32) => true,
        (Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32, Int64) => true,
        (Float16 | Float32, Float32) | (Float16 | Float32 | Float64, Float64) => true,
        (Date32 | Date64, Date32) => true,
        (Date32 | Date64 | Timestamp(..), Timestamp(..)) => true,
        (Time32(_) | Time64(_), Time64(_)) => true,
        (f, t) if stringy(t) => stringy(f) || bytes(f),
        (f, t) if bytes(t) => stringy(f) || bytes(f) || matches!(f, FixedSizeBinary(_)),
        (Binary | LargeBinary | BinaryView | FixedSizeBinary(_), FixedSizeBinary(_)) => {
            // a `fixed`/`uuid` column stored as plain binary: the lengths are checked by
            // the cast when values are read
            !matches!(file, FixedSizeBinary(_))
        }
        (f, t) => match (decimal(f), decimal(t)) {
            (Some((fp, fs)), Some((tp, ts))) => fs == ts && fp <= tp,
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::TimeUnit;

    #[test]
    fn only_promotions_and_encodings_of_the_same_type_read() {
        use DataType::*;
        for (file, table) in [
            (Int16, Int32),
            (Int32, Int64),
            (UInt32, Int64),
            (Float32, Float64),
            (Decimal128(9, 2), Decimal128(12, 2)),
            (Date32, Timestamp(TimeUnit::Microsecond, None)),
            (
                Timestamp(TimeUnit::Nanosecond, None),
                Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            ),
            (Binary, Utf8),
            (Utf8View, Utf8),
            (Time32(TimeUnit::Millisecond), Time64(TimeUnit::Microsecond)),
            (FixedSizeBinary(16), FixedSizeBinary(16)),
        ] {
            assert!(readable_as(&file, &table), "{file} as {table}");
        }
        for (file, table) in [
            (Float64, Int32),
            (Int64, Int32),
            (UInt64, Int64),
            (Float64, Float32),
            (Utf8, Int64),
            (Int64, Utf8),
            (Decimal128(12, 2), Decimal128(9, 2)),
            (Decimal128(10, 3), Decimal128(12, 2)),
            (Int64, Timestamp(TimeUnit::Microsecond, None)),
            (Timestamp(TimeUnit::Microsecond, None), Date32),
            (FixedSizeBinary(8), FixedSizeBinary(16)),
            (Boolean, Int32),
        ] {
            assert!(!readable_as(&file, &table), "{file} as {table}");
        }
    }
}
