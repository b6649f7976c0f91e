//! Comparing one query's results across engines whose result *types* differ (DuckDB's
//! `DECIMAL(38, s)` and `DOUBLE` against DataFusion's `Decimal128(p, s)` and `Float64`,
//! `Utf8` against `Utf8View`, `Int32` against `Int64`), as multisets of rows:
//!
//! * integers (any width, and decimals of scale 0) compare exactly;
//! * other numbers (decimals, floats) compare as `f64` within a relative tolerance of
//!   [`RELATIVE_TOLERANCE`] plus the last digit of each decimal side (`10^-scale`: DataFusion
//!   rounds `avg` of a decimal to the result's scale, DuckDB returns a `DOUBLE`);
//! * everything else (strings, dates, …) compares as the text Arrow's display formatter gives
//!   (so `Utf8View` and `LargeUtf8` equal `Utf8`), NULL as NULL.
//!
//! Rows are matched regardless of order: by their non-numeric cells first, then greedily on
//! the numbers.

use std::collections::HashMap;

use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::common::BoxError;

/// Numbers that are not integers are equal when they differ by at most this fraction of
/// the larger magnitude (plus the decimal sides' last digit).
pub const RELATIVE_TOLERANCE: f64 = 1e-9;

#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Int(i128),
    /// A value with `unit` the weight of its last digit (`10^-scale` for a decimal, 0 for a
    /// float).
    Num {
        value: f64,
        unit: f64,
    },
    Text(String),
}

impl Cell {
    fn value(&self) -> Option<f64> {
        match self {
            Cell::Int(i) => Some(*i as f64),
            Cell::Num { value, .. } => Some(*value),
            _ => None,
        }
    }

    fn unit(&self) -> f64 {
        match self {
            Cell::Num { unit, .. } => *unit,
            _ => 0.0,
        }
    }

    /// The part of a row's key this cell gives: numbers all look alike.
    fn key(&self) -> &str {
        match self {
            Cell::Null => "\0NULL",
            Cell::Int(_) | Cell::Num { .. } => "\0#",
            Cell::Text(s) => s,
        }
    }

    fn matches(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Int(a), Cell::Int(b)) => a == b,
            (Cell::Text(a), Cell::Text(b)) => a == b,
            (Cell::Null, Cell::Null) => true,
            _ => match (self.value(), other.value()) {
                (Some(a), Some(b)) => {
                    if a.is_nan() || b.is_nan() {
                        return a.is_nan() && b.is_nan();
                    }
                    let allowed =
                        RELATIVE_TOLERANCE * a.abs().max(b.abs()) + self.unit() + other.unit();
                    (a - b).abs() <= allowed
                }
                _ => false,
            },
        }
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Null => write!(f, "NULL"),
            Cell::Int(i) => write!(f, "{i}"),
            Cell::Num { value, .. } => write!(f, "{value}"),
            Cell::Text(s) => write!(f, "{s}"),
        }
    }
}

fn column_cells(c: &ArrayRef) -> Result<Vec<Cell>, BoxError> {
    use datafusion::arrow::array::{Float64Array, Int64Array};
    let n = c.len();
    let numbers = |dt: &DataType| -> Result<Vec<Cell>, BoxError> {
        let unit = match dt {
            DataType::Decimal32(_, s)
            | DataType::Decimal64(_, s)
            | DataType::Decimal128(_, s)
            | DataType::Decimal256(_, s) => 10f64.powi(-i32::from(*s)),
            _ => 0.0,
        };
        let f = cast(c, &DataType::Float64)?;
        let f = f
            .as_any()
            .downcast_ref::<Float64Array>()
            .ok_or("cast to Float64")?;
        Ok((0..n)
            .map(|r| {
                if f.is_null(r) {
                    Cell::Null
                } else {
                    Cell::Num {
                        value: f.value(r),
                        unit,
                    }
                }
            })
            .collect())
    };
    match c.data_type() {
        dt if dt.is_integer() => {
            let i = cast(c, &DataType::Int64)?;
            let i = i
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or("cast to Int64")?;
            Ok((0..n)
                .map(|r| {
                    if i.is_null(r) {
                        Cell::Null
                    } else {
                        Cell::Int(i128::from(i.value(r)))
                    }
                })
                .collect())
        }
        DataType::Decimal128(_, 0) => {
            let a = c
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Decimal128Array>()
                .ok_or("Decimal128")?;
            Ok((0..n)
                .map(|r| {
                    if a.is_null(r) {
                        Cell::Null
                    } else {
                        Cell::Int(a.value(r))
                    }
                })
                .collect())
        }
        dt @ (DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..)) => numbers(dt),
        _ => {
            let options = FormatOptions::default();
            let f = ArrayFormatter::try_new(c.as_ref(), &options)?;
            Ok((0..n)
                .map(|r| {
                    if c.is_null(r) {
                        Cell::Null
                    } else {
                        Cell::Text(f.value(r).to_string())
                    }
                })
                .collect())
        }
    }
}

/// The rows of `batches` as cells.
pub fn rows(batches: &[RecordBatch]) -> Result<Vec<Vec<Cell>>, BoxError> {
    let mut out = vec![];
    for b in batches {
        let columns = b
            .columns()
            .iter()
            .map(column_cells)
            .collect::<Result<Vec<_>, _>>()?;
        for r in 0..b.num_rows() {
            out.push(columns.iter().map(|c| c[r].clone()).collect());
        }
    }
    Ok(out)
}

fn row_text(row: &[Cell]) -> String {
    row.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("|")
}

/// `Ok(())` when `a` and `b` hold the same rows (see the module docs), else a short
/// description of the first difference.
pub fn same_rows(a: &[Vec<Cell>], b: &[Vec<Cell>]) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("{} rows against {}", a.len(), b.len()));
    }
    if let (Some(x), Some(y)) = (a.first(), b.first()) {
        if x.len() != y.len() {
            return Err(format!("{} columns against {}", x.len(), y.len()));
        }
    }
    let key = |row: &[Cell]| row.iter().map(Cell::key).collect::<Vec<_>>().join("\u{1}");
    let mut buckets: HashMap<String, Vec<&Vec<Cell>>> = HashMap::new();
    for row in b {
        buckets.entry(key(row)).or_default().push(row);
    }
    for row in a {
        let found = buckets.get_mut(&key(row)).and_then(|bucket| {
            let i = bucket
                .iter()
                .position(|other| row.iter().zip(other.iter()).all(|(x, y)| x.matches(y)))?;
            Some(bucket.swap_remove(i))
        });
        if found.is_none() {
            let theirs: Vec<String> = b.iter().take(3).map(|r| row_text(r)).collect();
            return Err(format!(
                "no match for row {} (the other side's first rows: {})",
                row_text(row),
                theirs.join("; ")
            ));
        }
    }
    Ok(())
}
