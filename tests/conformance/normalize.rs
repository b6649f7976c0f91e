//! Expected-type parsing, Arrow -> canonical JSON conversion and result comparison for the
//! conformance runner.
//!
//! The corpus encodes values as described in `shared/corpus/README.md`: integers as JSON numbers;
//! floats as numbers except "NaN", "Infinity", "-Infinity", "-0.0"; decimals as strings with the
//! column scale; dates `YYYY-MM-DD`; timestamptz `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC), timestamp
//! without zone the same without `Z`; binary/fixed as lowercase hex; uuid canonical; structs as
//! objects; lists as arrays; maps as arrays of `[key, value]` sorted by key.
//!
//! Both sides go through [`canon`] (driven by the expected column type) before comparison, so the
//! expected JSON is never edited, only read.

use std::cmp::Ordering;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::*;
use serde_json::{Map, Number, Value};

/// A column type as written in `cases.json` (`columns[].type`).
#[derive(Debug, Clone, PartialEq)]
pub enum ExpType {
    Boolean,
    /// Signed integer of the given bit width.
    Int(u8),
    Float32,
    Float64,
    Decimal(u8, i8),
    String,
    Binary,
    Date,
    /// `tz == true`: instant (Spark `timestamp`, DuckDB `TIMESTAMP WITH TIME ZONE`).
    Timestamp {
        tz: bool,
    },
    /// Iceberg v3 `timestamp_ns` / `timestamptz_ns` (DuckDB `TIMESTAMP_NS`): nanoseconds,
    /// written with 9 fractional digits always.
    TimestampNs {
        tz: bool,
    },
    Time,
    Uuid,
    Struct(Vec<(String, ExpType)>),
    List(Box<ExpType>),
    Map(Box<ExpType>, Box<ExpType>),
    /// Not understood: values are compared structurally, the Arrow type is not checked.
    Unknown(String),
}

/// Which engine's type names `cases.json` uses. Matters for `timestamp`: Spark's is an instant,
/// DuckDB's is without zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Spark,
    DuckDb,
}

/// Parses a Spark simpleString or DuckDB type name. Never fails: unknown text gives `Unknown`.
pub fn parse_type(s: &str, dialect: Dialect) -> ExpType {
    let mut p = TypeParser {
        s: s.as_bytes(),
        pos: 0,
        dialect,
    };
    match p.ty() {
        Ok(t) if p.at_end() => t,
        _ => ExpType::Unknown(s.to_string()),
    }
}

struct TypeParser<'a> {
    s: &'a [u8],
    pos: usize,
    dialect: Dialect,
}

impl TypeParser<'_> {
    fn at_end(&mut self) -> bool {
        self.ws();
        self.pos >= self.s.len()
    }
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos] == b' ' {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.pos).copied()
    }
    fn eat(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at {}", c as char, self.pos))
        }
    }
    /// A word; may contain single spaces ("TIMESTAMP WITH TIME ZONE").
    fn word(&mut self) -> String {
        self.ws();
        let start = self.pos;
        while self.pos < self.s.len() && !b"<>(),:[]".contains(&self.s[self.pos]) {
            self.pos += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.pos])
            .trim()
            .to_string()
    }
    fn number(&mut self) -> Result<i64, String> {
        let w = self.word();
        w.parse().map_err(|_| format!("bad number {w:?}"))
    }
    fn ty(&mut self) -> Result<ExpType, String> {
        let name = self.word().to_ascii_lowercase();
        let mut t = match name.as_str() {
            "struct" => {
                self.eat(b'<')?;
                let mut fields = Vec::new();
                if self.peek() == Some(b'>') {
                    self.pos += 1;
                } else {
                    loop {
                        let fname = self.word();
                        let fname = fname.trim_matches('`').to_string();
                        self.eat(b':')?;
                        fields.push((fname, self.ty()?));
                        match self.peek() {
                            Some(b',') => self.pos += 1,
                            Some(b'>') => {
                                self.pos += 1;
                                break;
                            }
                            _ => return Err("bad struct".into()),
                        }
                    }
                }
                ExpType::Struct(fields)
            }
            "array" => {
                self.eat(b'<')?;
                let e = self.ty()?;
                self.eat(b'>')?;
                ExpType::List(Box::new(e))
            }
            "map" => {
                self.eat(b'<')?;
                let k = self.ty()?;
                self.eat(b',')?;
                let v = self.ty()?;
                self.eat(b'>')?;
                ExpType::Map(Box::new(k), Box::new(v))
            }
            "decimal" | "numeric" | "dec" => {
                if self.peek() == Some(b'(') {
                    self.pos += 1;
                    let p = self.number()?;
                    self.eat(b',')?;
                    let s = self.number()?;
                    self.eat(b')')?;
                    ExpType::Decimal(p as u8, s as i8)
                } else {
                    ExpType::Decimal(10, 0)
                }
            }
            "boolean" | "bool" => ExpType::Boolean,
            "tinyint" | "byte" => ExpType::Int(8),
            "smallint" | "short" => ExpType::Int(16),
            "int" | "integer" => ExpType::Int(32),
            "bigint" | "long" => ExpType::Int(64),
            "float" | "real" => ExpType::Float32,
            "double" => ExpType::Float64,
            "string" | "varchar" | "char" | "text" => {
                if self.peek() == Some(b'(') {
                    self.pos += 1;
                    self.number()?;
                    self.eat(b')')?;
                }
                ExpType::String
            }
            "binary" | "blob" | "bytea" | "varbinary" => ExpType::Binary,
            "date" => ExpType::Date,
            "timestamp" => ExpType::Timestamp {
                tz: self.dialect == Dialect::Spark,
            },
            "timestamp_ntz" | "timestamp without time zone" => ExpType::Timestamp { tz: false },
            "timestamp_ltz" | "timestamptz" | "timestamp with time zone" => {
                ExpType::Timestamp { tz: true }
            }
            "timestamp_ns" => ExpType::TimestampNs { tz: false },
            "timestamptz_ns" | "timestamp_ns with time zone" => ExpType::TimestampNs { tz: true },
            "time" => ExpType::Time,
            "uuid" => ExpType::Uuid,
            other => return Err(format!("unknown type {other:?}")),
        };
        // DuckDB list syntax: INTEGER[]
        while self.peek() == Some(b'[') {
            self.pos += 1;
            self.eat(b']')?;
            t = ExpType::List(Box::new(t));
        }
        Ok(t)
    }
}

/// Checks that the Arrow type can hold the expected type faithfully. Integer and float widths,
/// decimal precision/scale, timestamp zone-ness and struct field names must match; string,
/// binary, list and unit variants may differ.
pub fn check_type(exp: &ExpType, dt: &DataType) -> Result<(), String> {
    use DataType as D;
    if let D::Dictionary(_, v) = dt {
        return check_type(exp, v);
    }
    let ok = match (exp, dt) {
        (ExpType::Unknown(_), _) | (_, D::Null) => true,
        (ExpType::Boolean, D::Boolean) => true,
        (ExpType::Int(8), D::Int8) | (ExpType::Int(16), D::Int16) => true,
        (ExpType::Int(32), D::Int32) | (ExpType::Int(64), D::Int64) => true,
        (ExpType::Float32, D::Float32) | (ExpType::Float64, D::Float64) => true,
        (ExpType::Decimal(p, s), D::Decimal32(ap, as_) | D::Decimal64(ap, as_))
        | (ExpType::Decimal(p, s), D::Decimal128(ap, as_) | D::Decimal256(ap, as_)) => {
            p == ap && s == as_
        }
        (ExpType::String, D::Utf8 | D::LargeUtf8 | D::Utf8View) => true,
        (ExpType::Binary, D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_)) => {
            true
        }
        (ExpType::Uuid, D::FixedSizeBinary(16) | D::Utf8 | D::LargeUtf8 | D::Utf8View) => true,
        (ExpType::Date, D::Date32 | D::Date64) => true,
        (ExpType::Timestamp { tz }, D::Timestamp(_, atz)) => *tz == atz.is_some(),
        (ExpType::TimestampNs { tz }, D::Timestamp(TimeUnit::Nanosecond, atz)) => {
            *tz == atz.is_some()
        }
        (ExpType::Time, D::Time32(_) | D::Time64(_)) => true,
        (ExpType::Struct(fields), D::Struct(afields)) => {
            if fields.len() != afields.len() {
                return Err(format!(
                    "struct has {} fields, expected {}",
                    afields.len(),
                    fields.len()
                ));
            }
            for ((name, t), af) in fields.iter().zip(afields.iter()) {
                if !name.eq_ignore_ascii_case(af.name()) {
                    return Err(format!("struct field {:?}, expected {name:?}", af.name()));
                }
                check_type(t, af.data_type()).map_err(|e| format!("{name}: {e}"))?;
            }
            true
        }
        (
            ExpType::List(e),
            D::List(f)
            | D::LargeList(f)
            | D::FixedSizeList(f, _)
            | D::ListView(f)
            | D::LargeListView(f),
        ) => return check_type(e, f.data_type()).map_err(|m| format!("element: {m}")),
        (ExpType::Map(k, v), D::Map(entries, _)) => match entries.data_type() {
            D::Struct(kv) if kv.len() == 2 => {
                check_type(k, kv[0].data_type()).map_err(|m| format!("key: {m}"))?;
                return check_type(v, kv[1].data_type()).map_err(|m| format!("value: {m}"));
            }
            _ => false,
        },
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("expected {}, got Arrow {dt}", describe(exp)))
    }
}

fn describe(t: &ExpType) -> String {
    match t {
        ExpType::Timestamp { tz: true } => "timestamp with time zone".into(),
        ExpType::Timestamp { tz: false } => "timestamp without time zone".into(),
        ExpType::TimestampNs { tz: true } => "timestamptz_ns".into(),
        ExpType::TimestampNs { tz: false } => "timestamp_ns".into(),
        ExpType::Int(b) => format!("int{b}"),
        ExpType::Decimal(p, s) => format!("decimal({p},{s})"),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// JSON for a float: special values as the corpus spells them.
pub fn float_json(v: f64) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else if v == 0.0 && v.is_sign_negative() {
        Value::String("-0.0".into())
    } else {
        Number::from_f64(v)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// `digits` is the unscaled integer as decimal text (optional leading '-').
pub fn decimal_string(unscaled: &str, scale: i8) -> String {
    let (neg, digits) = match unscaled.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, unscaled),
    };
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if scale <= 0 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (-scale) as usize));
        if digits.chars().all(|c| c == '0') {
            return "0".into();
        }
        return out;
    }
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    out.push_str(int);
    out.push('.');
    out.push_str(frac);
    out
}

/// Rewrites a decimal text to exactly `scale` fractional digits when that loses nothing.
fn rescale_decimal(s: &str, scale: i8) -> Option<String> {
    let s = s.trim();
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let scale = scale.max(0) as usize;
    let mut frac = frac.to_string();
    while frac.len() > scale {
        if frac.ends_with('0') {
            frac.pop();
        } else {
            return None;
        }
    }
    while frac.len() < scale {
        frac.push('0');
    }
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let zero = int == "0" && frac.chars().all(|c| c == '0');
    let sign = if neg && !zero { "-" } else { "" };
    Some(if scale == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `YYYY-MM-DDTHH:MM:SS.ffffff[Z]`, with 9 fractional digits when `nine_digits` (the
/// corpus encoding of `timestamp_ns` / `timestamptz_ns`) or when the value has
/// sub-microsecond digits.
fn datetime_string(secs: i64, nanos: u32, zone: bool, nine_digits: bool) -> Result<String, String> {
    let dt = chrono::DateTime::from_timestamp(secs, nanos)
        .ok_or_else(|| format!("timestamp out of range: {secs}s"))?;
    let frac = if !nine_digits && nanos.is_multiple_of(1000) {
        format!("{:06}", nanos / 1000)
    } else {
        format!("{nanos:09}")
    };
    Ok(format!(
        "{}.{frac}{}",
        dt.format("%Y-%m-%dT%H:%M:%S"),
        if zone { "Z" } else { "" }
    ))
}

fn split_units(v: i64, unit: &TimeUnit) -> (i64, u32) {
    let per_sec: i64 = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let secs = v.div_euclid(per_sec);
    let sub = v.rem_euclid(per_sec);
    (secs, (sub * (1_000_000_000 / per_sec)) as u32)
}

fn time_string(v: i64, unit: &TimeUnit) -> String {
    let (secs, nanos) = split_units(v, unit);
    let frac = if nanos.is_multiple_of(1000) {
        format!("{:06}", nanos / 1000)
    } else {
        format!("{nanos:09}")
    };
    format!(
        "{:02}:{:02}:{:02}.{frac}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Orders JSON values: null < bool < numbers (numerically) < strings < arrays < objects.
pub fn cmp_json(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
        }
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&y.as_f64().unwrap_or(0.0)),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let o = cmp_json(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a)
            .cmp(&rank(b))
            .then_with(|| a.to_string().cmp(&b.to_string())),
    }
}

fn sort_pairs(pairs: &mut [Value]) {
    pairs.sort_by(|a, b| match (a, b) {
        (Value::Array(x), Value::Array(y)) if !x.is_empty() && !y.is_empty() => {
            cmp_json(&x[0], &y[0])
        }
        _ => cmp_json(a, b),
    });
}

/// Converts one Arrow cell to JSON in the corpus encoding. `hint` (the expected type) is used only
/// to render 16-byte fixed binaries as UUIDs and to print `timestamp_ns` / `timestamptz_ns`
/// with 9 fractional digits.
pub fn cell_to_json(arr: &dyn Array, row: usize, hint: Option<&ExpType>) -> Result<Value, String> {
    use DataType as D;
    if row >= arr.len() {
        return Err(format!("row {row} out of bounds ({})", arr.len()));
    }
    if let Some(dict) = arr.as_any_dictionary_opt() {
        if dict.keys().is_null(row) {
            return Ok(Value::Null);
        }
        let key = dict
            .normalized_keys()
            .get(row)
            .copied()
            .ok_or("bad dictionary key")?;
        return cell_to_json(dict.values().as_ref(), key, hint);
    }
    if matches!(arr.data_type(), D::Null) || arr.is_null(row) {
        return Ok(Value::Null);
    }
    let child_hint = |i: usize, name: &str| -> Option<ExpType> {
        match hint {
            Some(ExpType::Struct(fs)) => fs
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .or_else(|| fs.get(i))
                .map(|(_, t)| t.clone()),
            _ => None,
        }
    };
    let elem_hint = match hint {
        Some(ExpType::List(e)) => Some(e.as_ref().clone()),
        _ => None,
    };
    let v = match arr.data_type() {
        D::Boolean => Value::Bool(arr.as_boolean().value(row)),
        D::Int8 => arr.as_primitive::<Int8Type>().value(row).into(),
        D::Int16 => arr.as_primitive::<Int16Type>().value(row).into(),
        D::Int32 => arr.as_primitive::<Int32Type>().value(row).into(),
        D::Int64 => arr.as_primitive::<Int64Type>().value(row).into(),
        D::UInt8 => arr.as_primitive::<UInt8Type>().value(row).into(),
        D::UInt16 => arr.as_primitive::<UInt16Type>().value(row).into(),
        D::UInt32 => arr.as_primitive::<UInt32Type>().value(row).into(),
        D::UInt64 => arr.as_primitive::<UInt64Type>().value(row).into(),
        D::Float16 => float_json(arr.as_primitive::<Float16Type>().value(row).to_f64()),
        D::Float32 => float_json(arr.as_primitive::<Float32Type>().value(row) as f64),
        D::Float64 => float_json(arr.as_primitive::<Float64Type>().value(row)),
        D::Decimal32(_, s) => Value::String(decimal_string(
            &arr.as_primitive::<Decimal32Type>().value(row).to_string(),
            *s,
        )),
        D::Decimal64(_, s) => Value::String(decimal_string(
            &arr.as_primitive::<Decimal64Type>().value(row).to_string(),
            *s,
        )),
        D::Decimal128(_, s) => Value::String(decimal_string(
            &arr.as_primitive::<Decimal128Type>().value(row).to_string(),
            *s,
        )),
        D::Decimal256(_, s) => Value::String(decimal_string(
            &arr.as_primitive::<Decimal256Type>().value(row).to_string(),
            *s,
        )),
        D::Utf8 => Value::String(arr.as_string::<i32>().value(row).into()),
        D::LargeUtf8 => Value::String(arr.as_string::<i64>().value(row).into()),
        D::Utf8View => Value::String(arr.as_string_view().value(row).into()),
        D::Binary => Value::String(hex(arr.as_binary::<i32>().value(row))),
        D::LargeBinary => Value::String(hex(arr.as_binary::<i64>().value(row))),
        D::BinaryView => Value::String(hex(arr.as_binary_view().value(row))),
        D::FixedSizeBinary(n) => {
            let bytes = arr.as_fixed_size_binary().value(row);
            match (hint, uuid::Uuid::from_slice(bytes)) {
                (Some(ExpType::Uuid), Ok(u)) if *n == 16 => {
                    Value::String(u.hyphenated().to_string())
                }
                _ => Value::String(hex(bytes)),
            }
        }
        D::Date32 => {
            let days = arr.as_primitive::<Date32Type>().value(row) as i64;
            let (s, n) = (days * 86_400, 0);
            Value::String(datetime_string(s, n, false, false)?[..10].to_string())
        }
        D::Date64 => {
            let (s, n) = split_units(
                arr.as_primitive::<Date64Type>().value(row),
                &TimeUnit::Millisecond,
            );
            Value::String(datetime_string(s, n, false, false)?[..10].to_string())
        }
        D::Timestamp(unit, tz) => {
            let raw = match unit {
                TimeUnit::Second => arr.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => arr.as_primitive::<TimestampMillisecondType>().value(row),
                TimeUnit::Microsecond => arr.as_primitive::<TimestampMicrosecondType>().value(row),
                TimeUnit::Nanosecond => arr.as_primitive::<TimestampNanosecondType>().value(row),
            };
            let (s, n) = split_units(raw, unit);
            // nanosecond types print 9 digits always; a nanosecond Arrow column under a
            // microsecond expected type (e.g. a DataFusion cast) prints as microseconds
            let nine = match hint {
                Some(ExpType::TimestampNs { .. }) => true,
                None => *unit == TimeUnit::Nanosecond,
                Some(_) => false,
            };
            Value::String(datetime_string(s, n, tz.is_some(), nine)?)
        }
        D::Time32(unit) => {
            let raw = match unit {
                TimeUnit::Second => arr.as_primitive::<Time32SecondType>().value(row),
                _ => arr.as_primitive::<Time32MillisecondType>().value(row),
            };
            Value::String(time_string(raw as i64, unit))
        }
        D::Time64(unit) => {
            let raw = match unit {
                TimeUnit::Microsecond => arr.as_primitive::<Time64MicrosecondType>().value(row),
                _ => arr.as_primitive::<Time64NanosecondType>().value(row),
            };
            Value::String(time_string(raw, unit))
        }
        D::Struct(fields) => {
            let st = arr.as_struct();
            let mut obj = Map::new();
            for (i, f) in fields.iter().enumerate() {
                let h = child_hint(i, f.name());
                obj.insert(
                    f.name().clone(),
                    cell_to_json(st.column(i).as_ref(), row, h.as_ref())?,
                );
            }
            Value::Object(obj)
        }
        D::List(_) => list_json(arr.as_list::<i32>().value(row).as_ref(), elem_hint.as_ref())?,
        D::LargeList(_) => list_json(arr.as_list::<i64>().value(row).as_ref(), elem_hint.as_ref())?,
        D::FixedSizeList(_, _) => list_json(
            arr.as_fixed_size_list().value(row).as_ref(),
            elem_hint.as_ref(),
        )?,
        D::Map(_, _) => {
            let m = arr.as_map();
            let (kh, vh) = match hint {
                Some(ExpType::Map(k, v)) => (Some(k.as_ref()), Some(v.as_ref())),
                _ => (None, None),
            };
            let entries = m.value(row);
            if entries.num_columns() != 2 {
                return Err("map entries are not key/value pairs".into());
            }
            let mut pairs = Vec::with_capacity(entries.len());
            for i in 0..entries.len() {
                let k = cell_to_json(entries.column(0).as_ref(), i, kh)?;
                let v = cell_to_json(entries.column(1).as_ref(), i, vh)?;
                pairs.push(Value::Array(vec![k, v]));
            }
            sort_pairs(&mut pairs);
            Value::Array(pairs)
        }
        _ => {
            let s = datafusion::arrow::util::display::array_value_to_string(arr, row)
                .map_err(|e| format!("cannot display {}: {e}", arr.data_type()))?;
            Value::String(s)
        }
    };
    Ok(v)
}

fn list_json(values: &dyn Array, hint: Option<&ExpType>) -> Result<Value, String> {
    (0..values.len())
        .map(|i| cell_to_json(values, i, hint))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// Canonical form of a value of type `ty` (applied to expected and actual alike): floats as
/// `float_json`, decimals rescaled to the type's scale, maps sorted by key, nested recursively.
pub fn canon(v: &Value, ty: &ExpType) -> Value {
    match (ty, v) {
        (_, Value::Null) => Value::Null,
        (ExpType::Float32 | ExpType::Float64, Value::Number(n)) => {
            n.as_f64().map(float_json).unwrap_or_else(|| v.clone())
        }
        (ExpType::Float32 | ExpType::Float64, Value::String(s)) => match s.as_str() {
            "nan" | "NaN" => Value::String("NaN".into()),
            "inf" | "Infinity" | "+Infinity" => Value::String("Infinity".into()),
            "-inf" | "-Infinity" => Value::String("-Infinity".into()),
            _ => match s.parse::<f64>() {
                Ok(f) => float_json(f),
                Err(_) => v.clone(),
            },
        },
        (ExpType::Int(_), Value::Number(n)) if n.is_f64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => v.clone(),
        },
        (ExpType::Decimal(_, s), Value::String(t)) => rescale_decimal(t, *s)
            .map(Value::String)
            .unwrap_or_else(|| v.clone()),
        (ExpType::Decimal(_, s), Value::Number(n)) => rescale_decimal(&n.to_string(), *s)
            .map(Value::String)
            .unwrap_or_else(|| v.clone()),
        (ExpType::Struct(fields), Value::Object(obj)) => {
            let mut out = Map::new();
            for (k, x) in obj {
                let t = fields
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(k))
                    .map(|(_, t)| t);
                out.insert(
                    k.clone(),
                    t.map(|t| canon(x, t)).unwrap_or_else(|| x.clone()),
                );
            }
            Value::Object(out)
        }
        (ExpType::List(e), Value::Array(xs)) => {
            Value::Array(xs.iter().map(|x| canon(x, e)).collect())
        }
        (ExpType::Map(kt, vt), Value::Array(pairs)) => {
            let mut out: Vec<Value> = pairs
                .iter()
                .map(|p| match p {
                    Value::Array(kv) if kv.len() == 2 => {
                        Value::Array(vec![canon(&kv[0], kt), canon(&kv[1], vt)])
                    }
                    other => other.clone(),
                })
                .collect();
            sort_pairs(&mut out);
            Value::Array(out)
        }
        (ExpType::Uuid | ExpType::Binary, Value::String(s)) => {
            Value::String(s.to_ascii_lowercase())
        }
        _ => v.clone(),
    }
}

/// Equality of canonical values; non-integer numbers within a relative 1e-12.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(p), Some(q)) = (x.as_i64(), y.as_i64()) {
                return p == q;
            }
            if let (Some(p), Some(q)) = (x.as_u64(), y.as_u64()) {
                return p == q;
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => p == q || (p - q).abs() <= 1e-12 * p.abs().max(q.abs()),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, p)| {
                    y.iter()
                        .find(|(k2, _)| k2.eq_ignore_ascii_case(k))
                        .is_some_and(|(_, q)| json_eq(p, q))
                })
        }
        _ => a == b,
    }
}

/// Converts result batches to canonical rows.
pub fn batches_to_rows(batches: &[RecordBatch], types: &[ExpType]) -> Result<Vec<Value>, String> {
    let mut rows = Vec::new();
    for batch in batches {
        for r in 0..batch.num_rows() {
            let mut row = Vec::with_capacity(batch.num_columns());
            for (c, col) in batch.columns().iter().enumerate() {
                let ty = types
                    .get(c)
                    .cloned()
                    .unwrap_or(ExpType::Unknown(String::new()));
                let v = cell_to_json(col.as_ref(), r, Some(&ty))
                    .map_err(|e| format!("column {c}: {e}"))?;
                row.push(canon(&v, &ty));
            }
            rows.push(Value::Array(row));
        }
    }
    Ok(rows)
}

/// Canonicalises the expected rows of a case with the column types.
pub fn canon_expected(rows: &[Value], types: &[ExpType]) -> Result<Vec<Value>, String> {
    rows.iter()
        .enumerate()
        .map(|(i, r)| match r {
            Value::Array(cells) if cells.len() == types.len() => Ok(Value::Array(
                cells.iter().zip(types).map(|(v, t)| canon(v, t)).collect(),
            )),
            _ => Err(format!(
                "expected row {i} is not an array of {} values: {r}",
                types.len()
            )),
        })
        .collect()
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}...", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

/// The differing cells of two rows (`col N: expected X got Y`), or both rows when shapes differ.
fn describe_row_diff(e: &Value, a: &Value) -> String {
    match (e, a) {
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            let diffs: Vec<String> = x
                .iter()
                .zip(y)
                .enumerate()
                .filter(|(_, (p, q))| !json_eq(p, q))
                .map(|(c, (p, q))| format!("col {c}: expected {} got {}", short(p), short(q)))
                .collect();
            let more = if diffs.len() > 3 {
                format!(" (+{} more cells)", diffs.len() - 3)
            } else {
                String::new()
            };
            format!(
                "{}{more}",
                diffs.into_iter().take(3).collect::<Vec<_>>().join(", ")
            )
        }
        _ => format!("expected {} got {}", short(e), short(a)),
    }
}

/// Compares canonical rows; `ordered == false` compares as multisets.
pub fn compare_rows(expected: &[Value], actual: &[Value], ordered: bool) -> Result<(), String> {
    if ordered {
        for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
            if !json_eq(e, a) {
                return Err(format!(
                    "row {i} differs: {} ({} expected rows, {} actual)",
                    describe_row_diff(e, a),
                    expected.len(),
                    actual.len()
                ));
            }
        }
        if expected.len() != actual.len() {
            let extra = if actual.len() > expected.len() {
                format!("first extra row {}", short(&actual[expected.len()]))
            } else {
                format!("first missing row {}", short(&expected[actual.len()]))
            };
            return Err(format!(
                "expected {} rows, got {}; {extra}",
                expected.len(),
                actual.len()
            ));
        }
        return Ok(());
    }
    let mut e: Vec<&Value> = expected.iter().collect();
    let mut a: Vec<&Value> = actual.iter().collect();
    e.sort_by(|x, y| cmp_json(x, y));
    a.sort_by(|x, y| cmp_json(x, y));
    let (mut i, mut j) = (0, 0);
    let (mut missing, mut extra) = (Vec::new(), Vec::new());
    while i < e.len() || j < a.len() {
        if i < e.len() && j < a.len() && json_eq(e[i], a[j]) {
            i += 1;
            j += 1;
        } else if j >= a.len() || (i < e.len() && cmp_json(e[i], a[j]) == Ordering::Less) {
            missing.push(e[i]);
            i += 1;
        } else {
            extra.push(a[j]);
            j += 1;
        }
    }
    if missing.is_empty() && extra.is_empty() {
        return Ok(());
    }
    let list = |v: &[&Value]| {
        v.iter()
            .take(3)
            .map(|x| short(x))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(format!(
        "rows differ (unordered; {} expected, {} actual): {} missing [{}], {} unexpected [{}]",
        expected.len(),
        actual.len(),
        missing.len(),
        list(&missing),
        extra.len(),
        list(&extra)
    ))
}
