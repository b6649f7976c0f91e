//! DataFusion filter `Expr`s → Iceberg [`Predicate`]s for pruning.
//!
//! Converted: `= != < <= > >=` (column on either side), `IS [NOT] DISTINCT FROM` (`<=>`:
//! `=`, or `IS NULL` for a NULL literal), `[NOT] IN (…)`, `IS [NOT] NULL`,
//! `isnan(c)`, `[NOT] BETWEEN`, `LIKE 'prefix%'` (→ `starts_with`) and `NOT LIKE
//! 'prefix%'` (→ `not_starts_with`), a boolean column alone, and `AND` / `OR` / `NOT` of
//! those. A column may be wrapped in casts only when every cast is a lossless widening
//! (int → long, float → double, decimal to a wider decimal, date → timestamp, a finer
//! timestamp unit, …), so `CAST(f AS INT) = 5` and `pk % 8 = 2` are not converted.
//!
//! The result is never narrower than the DataFusion filter: every row DataFusion keeps
//! satisfies the predicate. `NOT` is pushed down here under SQL semantics (not with
//! [`crate::expr::rewrite_not`]). Inside an `AND` the convertible parts are kept; an
//! `OR` with an unconvertible side is not converted. DataFusion orders floats totally
//! (`-0.0 < 0.0`, NaN above every number, `NaN = NaN`), so on float columns `x > v`
//! becomes `x > v OR is_nan(x)`, comparisons with `NaN` become `is_nan` / `not_nan`,
//! and strict comparisons with a zero are relaxed.

use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};

use crate::expr::{BinaryOp, Binder, Predicate, Reference, SetOp, UnaryOp};
use crate::spec::arrow::primitive_to_arrow;
use crate::spec::{Literal, PartitionSpec, PrimitiveType, Schema, Transform};

/// Converts DataFusion filters on a table with Iceberg schema `schema`.
#[derive(Debug, Clone, Copy)]
pub struct FilterConverter<'a> {
    schema: &'a Schema,
}

/// A converted filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The Iceberg predicate (by column name; it binds to the converter's schema).
    pub predicate: Predicate,
    /// Whether the predicate matches exactly the rows the filter keeps (nothing dropped
    /// or relaxed, no float column involved).
    pub exact: bool,
}

/// A column reached through lossless casts.
struct Col {
    name: String,
    ty: PrimitiveType,
    /// Some cast on the way may fail (overflow) for extreme values: exact where it
    /// succeeds, so fine under comparisons, but `CAST(x) IS NULL` is not `x IS NULL`.
    partial: bool,
}

type Conv = Option<(Predicate, bool)>;

impl<'a> FilterConverter<'a> {
    /// A converter for tables of `schema`.
    pub fn new(schema: &'a Schema) -> Self {
        Self { schema }
    }

    /// Convert one filter; `None` when no part of it can be converted.
    pub fn convert(&self, expr: &Expr) -> Option<Converted> {
        let (predicate, exact) = self.conv(expr, false)?;
        Some(Converted { predicate, exact })
    }

    /// The AND of every convertible filter (`None` when none converts).
    pub fn convert_all(&self, filters: &[Expr]) -> Option<Predicate> {
        filters
            .iter()
            .filter_map(|f| self.convert(f))
            .map(|c| c.predicate)
            .reduce(Predicate::and)
    }

    fn conv(&self, e: &Expr, negated: bool) -> Conv {
        match e {
            Expr::Not(inner) => self.conv(inner, !negated),
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
                Operator::And | Operator::Or => {
                    let conjunction = (*op == Operator::And) != negated;
                    let l = self.conv(left, negated);
                    let r = self.conv(right, negated);
                    if conjunction {
                        match (l, r) {
                            (Some((l, le)), Some((r, re))) => Some((l.and(r), le && re)),
                            (Some((p, _)), None) | (None, Some((p, _))) => Some((p, false)),
                            (None, None) => None,
                        }
                    } else {
                        let ((l, le), (r, re)) = (l?, r?);
                        Some((l.or(r), le && re))
                    }
                }
                Operator::IsNotDistinctFrom | Operator::IsDistinctFrom => {
                    let same = (*op == Operator::IsNotDistinctFrom) != negated;
                    if let (Some(col), Some(lit)) = (self.column(left), literal(right)) {
                        self.null_safe(col, lit, same)
                    } else if let (Some(lit), Some(col)) = (literal(left), self.column(right)) {
                        self.null_safe(col, lit, same)
                    } else {
                        None
                    }
                }
                _ => {
                    let op = comparison_op(*op)?;
                    let op = if negated { op.negate() } else { op };
                    if let (Some(col), Some(lit)) = (self.column(left), literal(right)) {
                        self.comparison(col, op, lit)
                    } else if let (Some(lit), Some(col)) = (literal(left), self.column(right)) {
                        self.comparison(col, op.flip()?, lit)
                    } else {
                        None
                    }
                }
            },
            Expr::IsNull(inner) | Expr::IsNotNull(inner) => {
                let col = self.column(inner)?;
                let is_null = matches!(e, Expr::IsNull(_)) != negated;
                if is_null && col.partial {
                    return None;
                }
                let op = if is_null {
                    UnaryOp::IsNull
                } else {
                    UnaryOp::NotNull
                };
                self.leaf(Predicate::col_unary(op, &col.name), true)
            }
            Expr::InList(list) => {
                let col = self.column(&list.expr)?;
                let values = list.list.iter().map(literal).collect::<Option<Vec<_>>>()?;
                self.in_list(col, values, list.negated != negated)
            }
            Expr::Between(b) => {
                let col = || self.column(&b.expr);
                let (low, high) = (literal(&b.low)?, literal(&b.high)?);
                if b.negated != negated {
                    let lt = self.comparison(col()?, BinaryOp::Lt, low)?;
                    let gt = self.comparison(col()?, BinaryOp::Gt, high)?;
                    Some((lt.0.or(gt.0), lt.1 && gt.1))
                } else {
                    let ge = self.comparison(col()?, BinaryOp::GtEq, low)?;
                    let le = self.comparison(col()?, BinaryOp::LtEq, high)?;
                    Some((ge.0.and(le.0), ge.1 && le.1))
                }
            }
            Expr::Like(like) if !like.case_insensitive => {
                let col = self.column(&like.expr)?;
                if col.ty != PrimitiveType::String {
                    return None;
                }
                let Some(Some(Literal::String(pattern))) = literal(&like.pattern) else {
                    return None;
                };
                let (prefix, is_prefix) = like_prefix(&pattern, like.escape_char)?;
                let negated = like.negated != negated;
                let op = match (is_prefix, negated) {
                    (true, false) => BinaryOp::StartsWith,
                    (true, true) => BinaryOp::NotStartsWith,
                    (false, false) => BinaryOp::Eq,
                    (false, true) => BinaryOp::NotEq,
                };
                self.leaf(
                    Predicate::col_binary(op, &col.name, Literal::String(prefix)),
                    true,
                )
            }
            // a truth test of Spark's two-valued `isnan(c) IS TRUE` (`super::spark_isnan`
            // wraps a user's `isnan(d) IS NOT TRUE` so): that value, or its negation
            Expr::IsTrue(inner) | Expr::IsNotFalse(inner) if is_spark_isnan(inner) => {
                self.conv(inner, negated)
            }
            Expr::IsNotTrue(inner) | Expr::IsFalse(inner) if is_spark_isnan(inner) => {
                self.conv(inner, !negated)
            }
            // Spark's `isnan` (FALSE for NULL, `super::spark_isnan`) and its truth tests
            Expr::IsTrue(inner)
            | Expr::IsNotTrue(inner)
            | Expr::IsFalse(inner)
            | Expr::IsNotFalse(inner)
                if super::spark_isnan::is_isnan(inner) =>
            {
                let Expr::ScalarFunction(f) = inner.as_ref() else {
                    return None;
                };
                let holds_for_nan = matches!(e, Expr::IsTrue(_) | Expr::IsNotFalse(_));
                let holds_for_null = matches!(e, Expr::IsNotTrue(_) | Expr::IsNotFalse(_));
                self.isnan_truth(
                    &f.args[0],
                    holds_for_nan != negated,
                    holds_for_null != negated,
                )
            }
            Expr::ScalarFunction(f) if f.func.name() == "isnan" && f.args.len() == 1 => {
                let col = self.column(&f.args[0])?;
                let op = if negated {
                    UnaryOp::NotNan
                } else {
                    UnaryOp::IsNan
                };
                self.leaf(Predicate::col_unary(op, &col.name), false)
            }
            Expr::Literal(ScalarValue::Boolean(b), _) => Some((
                match b {
                    Some(b) if *b != negated => Predicate::AlwaysTrue,
                    // false, or NULL (never true, negated or not)
                    _ => Predicate::AlwaysFalse,
                },
                true,
            )),
            Expr::Column(_) | Expr::ScalarFunction(_) => {
                let col = self.column(e)?;
                if col.ty != PrimitiveType::Boolean {
                    return None;
                }
                let lit = Literal::Boolean(!negated);
                self.leaf(Predicate::col_binary(BinaryOp::Eq, &col.name, lit), true)
            }
            _ => None,
        }
    }

    /// The rows where a truth test of `isnan(arg)` holds (`isnan(x) IS TRUE`, `IS NOT
    /// FALSE`, … and their `NOT`s): those whose `arg` is NaN (`nan`) or a number (`!nan`),
    /// and also those whose `arg` is NULL (`null`). The `null` half matters: this crate's
    /// `not_nan` is false for null ([`UnaryOp::NotNan`]), so `NOT (isnan(f) IS TRUE)` — TRUE
    /// for a NULL `f`, as Spark's `NOT isnan(f)` (`IsNaN`, `nullable = false`) — is
    /// `not_nan(f) OR is_null(f)`; as `not_nan(f)` alone it pruned the files and identity
    /// partitions of `f = NULL`, rows the filter keeps.
    fn isnan_truth(&self, arg: &Expr, nan: bool, null: bool) -> Conv {
        let col = self.column(arg)?;
        // `CAST(x) IS NULL` is not `x IS NULL` for a cast that may fail
        if null && col.partial {
            return None;
        }
        let values = Predicate::col_unary(
            if nan { UnaryOp::IsNan } else { UnaryOp::NotNan },
            &col.name,
        );
        let p = if null {
            values.or(Predicate::col_unary(UnaryOp::IsNull, &col.name))
        } else {
            values
        };
        self.leaf(p, false)
    }

    /// Keep `p` only if it binds to the schema.
    fn leaf(&self, p: Predicate, exact: bool) -> Conv {
        Binder::new(self.schema).bind(&p).ok()?;
        Some((p, exact))
    }

    /// `col <op> lit` under DataFusion's semantics (`lit` `None` for SQL NULL).
    fn comparison(&self, col: Col, op: BinaryOp, lit: Option<Literal>) -> Conv {
        let Some(lit) = lit else {
            // a comparison with NULL is never true
            return Some((Predicate::AlwaysFalse, true));
        };
        let name = col.name.as_str();
        let bin = |op, l: Literal| Predicate::col_binary(op, name, l);
        let un = |op| Predicate::col_unary(op, name);
        let column_is_float = matches!(col.ty, PrimitiveType::Float | PrimitiveType::Double);
        let p = match float_value(&lit) {
            // an int column compared as a double: NaN compares above every int
            Some(v) if !column_is_float && v.is_nan() => return None,
            _ if !column_is_float => return self.leaf(bin(op, lit), true),
            None => return None,
            Some(v) if v.is_nan() => match op {
                BinaryOp::Eq | BinaryOp::GtEq => un(UnaryOp::IsNan),
                BinaryOp::NotEq | BinaryOp::Lt => un(UnaryOp::NotNan),
                BinaryOp::LtEq => un(UnaryOp::NotNull),
                BinaryOp::Gt => Predicate::AlwaysFalse,
                BinaryOp::StartsWith | BinaryOp::NotStartsWith => return None,
            },
            Some(v) => {
                let zero = v == 0.0;
                match op {
                    BinaryOp::Lt if zero => bin(BinaryOp::LtEq, lit),
                    BinaryOp::NotEq if zero => un(UnaryOp::NotNull),
                    BinaryOp::Gt | BinaryOp::GtEq => {
                        let op = if zero { BinaryOp::GtEq } else { op };
                        bin(op, lit).or(un(UnaryOp::IsNan))
                    }
                    _ => bin(op, lit),
                }
            }
        };
        self.leaf(p, false)
    }

    /// `col IS NOT DISTINCT FROM lit` (`same`) or `col IS DISTINCT FROM lit`: with a NULL
    /// `lit`, `col IS [NOT] NULL`; else `col = lit` (a NULL `col` is not the same as a
    /// value), or `col <> lit OR col IS NULL`.
    fn null_safe(&self, col: Col, lit: Option<Literal>, same: bool) -> Conv {
        let is_null = Predicate::col_unary(UnaryOp::IsNull, &col.name);
        match (lit, same) {
            (Some(lit), true) => self.comparison(col, BinaryOp::Eq, Some(lit)),
            // `CAST(x) IS NULL` is not `x IS NULL` for a cast that may fail
            _ if col.partial => None,
            (Some(lit), false) => {
                let (differs, exact) = self.comparison(col, BinaryOp::NotEq, Some(lit))?;
                Some((differs.or(is_null), exact))
            }
            (None, true) => self.leaf(is_null, true),
            (None, false) => {
                let not_null = Predicate::col_unary(UnaryOp::NotNull, &col.name);
                self.leaf(not_null, true)
            }
        }
    }

    fn in_list(&self, col: Col, values: Vec<Option<Literal>>, not_in: bool) -> Conv {
        let has_null = values.iter().any(Option::is_none);
        let mut values: Vec<Literal> = values.into_iter().flatten().collect();
        if not_in && has_null {
            // `x NOT IN (…, NULL)` is never true
            return Some((Predicate::AlwaysFalse, true));
        }
        let name = col.name.as_str();
        let float = matches!(col.ty, PrimitiveType::Float | PrimitiveType::Double);
        if !float {
            if values
                .iter()
                .any(|v| float_value(v).is_some_and(f64::is_nan))
            {
                return None;
            }
            let op = if not_in { SetOp::NotIn } else { SetOp::In };
            return self.leaf(Predicate::col_set(op, name, values), true);
        }
        let nan = values
            .iter()
            .any(|v| float_value(v).is_some_and(f64::is_nan));
        values.retain(|v| !float_value(v).is_some_and(f64::is_nan));
        let p = if not_in {
            // -0.0 and 0.0 differ for DataFusion but not in Iceberg: drop zeros
            values.retain(|v| float_value(v) != Some(0.0));
            let rest = Predicate::col_set(SetOp::NotIn, name, values);
            if nan {
                rest.and(Predicate::col_unary(UnaryOp::NotNan, name))
            } else {
                rest
            }
        } else {
            let rest = Predicate::col_set(SetOp::In, name, values);
            if nan {
                rest.or(Predicate::col_unary(UnaryOp::IsNan, name))
            } else {
                rest
            }
        };
        self.leaf(p, false)
    }

    /// A column, possibly a nested struct field (`get_field`), through lossless casts.
    fn column(&self, e: &Expr) -> Option<Col> {
        self.column_typed(e).map(|(col, _)| col)
    }

    fn column_typed(&self, e: &Expr) -> Option<(Col, DataType)> {
        match e {
            Expr::Column(c) => {
                let ty = self
                    .schema
                    .field_by_name(&c.name)?
                    .field_type
                    .as_primitive()
                    .copied()?;
                let col = Col {
                    name: c.name.clone(),
                    ty,
                    partial: false,
                };
                Some((col, primitive_to_arrow(&ty).ok()?))
            }
            Expr::Cast(datafusion::logical_expr::Cast { expr, field })
            | Expr::TryCast(datafusion::logical_expr::TryCast { expr, field }) => {
                let (mut col, from) = self.column_typed(expr)?;
                let to = field.data_type();
                match cast_kind(&from, to)? {
                    CastKind::Total => {}
                    CastKind::Partial => col.partial = true,
                }
                Some((col, to.clone()))
            }
            Expr::ScalarFunction(f) if f.func.name() == "get_field" => {
                let name = self.struct_path(e)?;
                let bound = Binder::new(self.schema)
                    .bind_reference(&Reference::new(&name))
                    .ok()?;
                let ty = bound.field_type;
                Some((
                    Col {
                        name,
                        ty,
                        partial: false,
                    },
                    primitive_to_arrow(&ty).ok()?,
                ))
            }
            _ => None,
        }
    }

    /// The dotted path of a struct-typed column expression.
    fn struct_path(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Column(c) => Some(c.name.clone()),
            // get_field(base, 'a', 'b', …): one or more levels at once
            Expr::ScalarFunction(f) if f.func.name() == "get_field" && f.args.len() >= 2 => {
                let mut path = self.struct_path(&f.args[0])?;
                for arg in &f.args[1..] {
                    let Some(Some(Literal::String(child))) = literal(arg) else {
                        return None;
                    };
                    path = format!("{path}.{child}");
                }
                Some(path)
            }
            _ => None,
        }
    }
}

/// `e` is `isnan(x) IS TRUE`, Spark's `isnan` as [`super::spark_isnan`] writes it (never
/// NULL).
fn is_spark_isnan(e: &Expr) -> bool {
    matches!(e, Expr::IsTrue(inner) if super::spark_isnan::is_isnan(inner))
}

fn comparison_op(op: Operator) -> Option<BinaryOp> {
    Some(match op {
        Operator::Eq => BinaryOp::Eq,
        Operator::NotEq => BinaryOp::NotEq,
        Operator::Lt => BinaryOp::Lt,
        Operator::LtEq => BinaryOp::LtEq,
        Operator::Gt => BinaryOp::Gt,
        Operator::GtEq => BinaryOp::GtEq,
        _ => return None,
    })
}

fn float_value(l: &Literal) -> Option<f64> {
    match l {
        Literal::Float(f) => Some(f64::from(*f)),
        Literal::Double(d) => Some(*d),
        _ => None,
    }
}

/// A LIKE pattern as (prefix, true) for `prefix%…%`, or (text, false) for a pattern
/// without wildcards; `None` for anything else or when escapes are involved.
fn like_prefix(pattern: &str, escape: Option<char>) -> Option<(String, bool)> {
    let escape = escape.unwrap_or('\\');
    let cut = pattern.find(['%', '_']);
    let (prefix, rest) = match cut {
        Some(i) => pattern.split_at(i),
        None => (pattern, ""),
    };
    if prefix.contains(escape) || !rest.chars().all(|c| c == '%') {
        return None;
    }
    Some((prefix.to_string(), !rest.is_empty()))
}

fn utc_like(tz: &Option<std::sync::Arc<str>>) -> bool {
    match tz.as_deref() {
        None => true,
        Some(t) => matches!(
            t,
            "UTC" | "utc" | "Z" | "+00:00" | "+00" | "Etc/UTC" | "+0000"
        ),
    }
}

fn unit_rank(u: &TimeUnit) -> u8 {
    match u {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 1,
        TimeUnit::Microsecond => 2,
        TimeUnit::Nanosecond => 3,
    }
}

/// How a cast keeps values.
enum CastKind {
    /// Every value maps to an equal value, order kept.
    Total,
    /// Values that fit map to equal values, order kept; extreme values overflow (an
    /// error or null), e.g. decimal(38,10) → decimal(38,15).
    Partial,
}

fn cast_kind(from: &DataType, to: &DataType) -> Option<CastKind> {
    use DataType as D;
    if lossless(from, to) {
        return Some(CastKind::Total);
    }
    let widening = match (from, to) {
        (D::Decimal128(_, s1), D::Decimal128(_, s2)) => s2 >= s1,
        (D::Int8 | D::Int16 | D::Int32 | D::Int64, D::Decimal128(_, s)) => *s >= 0,
        (D::Date32, D::Timestamp(_, tz)) => utc_like(tz),
        (D::Timestamp(u1, tz1), D::Timestamp(u2, tz2)) => {
            unit_rank(u2) >= unit_rank(u1)
                && (tz1 == tz2
                    || (utc_like(tz1) && utc_like(tz2))
                    || (tz1.is_some() && tz2.is_some()))
        }
        _ => false,
    };
    widening.then_some(CastKind::Partial)
}

/// Whether casting `from` → `to` keeps every value and its order (a lossless widening).
pub fn lossless(from: &DataType, to: &DataType) -> bool {
    use DataType as D;
    let int_bits = |t: &DataType| match t {
        D::Int8 => Some(8),
        D::Int16 => Some(16),
        D::Int32 => Some(32),
        D::Int64 => Some(64),
        _ => None,
    };
    if from == to {
        return true;
    }
    match (from, to) {
        (a, b) if int_bits(a).is_some() && int_bits(b).is_some() => int_bits(a) <= int_bits(b),
        (D::Int8 | D::Int16, D::Float32 | D::Float64) | (D::Int32, D::Float64) => true,
        (D::Float32, D::Float64) => true,
        (a, D::Decimal128(p, s)) if int_bits(a).is_some() => {
            let digits = match int_bits(a) {
                Some(8) => 3,
                Some(16) => 5,
                Some(32) => 10,
                _ => 19,
            };
            i16::from(*p) - i16::from(*s) >= digits
        }
        (D::Decimal128(p1, s1), D::Decimal128(p2, s2)) => {
            s2 >= s1 && i16::from(*p2) - i16::from(*s2) >= i16::from(*p1) - i16::from(*s1)
        }
        (D::Date32, D::Timestamp(TimeUnit::Second | TimeUnit::Millisecond, tz)) => utc_like(tz),
        // zoned to zoned keeps the instants (the session zone's calendar functions put such
        // a cast on a `timestamptz` column)
        (D::Timestamp(u1, tz1), D::Timestamp(u2, tz2)) => {
            u1 == u2
                && (tz1 == tz2
                    || (utc_like(tz1) && utc_like(tz2))
                    || (tz1.is_some() && tz2.is_some()))
        }
        (D::Utf8, D::LargeUtf8 | D::Utf8View) | (D::LargeUtf8, D::Utf8View) => true,
        (D::Binary, D::LargeBinary | D::BinaryView) | (D::LargeBinary, D::BinaryView) => true,
        (D::FixedSizeBinary(_), D::Binary | D::LargeBinary | D::BinaryView) => true,
        _ => false,
    }
}

/// The value of a literal expression (through casts DataFusion did not fold):
/// `Some(None)` for SQL NULL, `None` when `e` is not a literal or its type has no
/// Iceberg counterpart.
fn literal(e: &Expr) -> Option<Option<Literal>> {
    match e {
        Expr::Literal(v, _) => scalar_to_literal(v),
        Expr::Cast(c) => match c.expr.as_ref() {
            Expr::Literal(v, _) => scalar_to_literal(&v.cast_to(c.field.data_type()).ok()?),
            _ => None,
        },
        _ => None,
    }
}

/// A DataFusion scalar as an Iceberg literal of its natural type (`Some(None)` for null).
pub fn scalar_to_literal(v: &ScalarValue) -> Option<Option<Literal>> {
    use ScalarValue as S;
    if v.is_null() {
        return Some(None);
    }
    let scaled = |x: i64, unit: i64| x.checked_mul(unit);
    Some(Some(match v {
        S::Boolean(Some(b)) => Literal::Boolean(*b),
        S::Int8(Some(x)) => Literal::Int(i32::from(*x)),
        S::Int16(Some(x)) => Literal::Int(i32::from(*x)),
        S::Int32(Some(x)) => Literal::Int(*x),
        S::Int64(Some(x)) => Literal::Long(*x),
        S::UInt8(Some(x)) => Literal::Int(i32::from(*x)),
        S::UInt16(Some(x)) => Literal::Int(i32::from(*x)),
        S::UInt32(Some(x)) => Literal::Long(i64::from(*x)),
        S::UInt64(Some(x)) => Literal::Long(i64::try_from(*x).ok()?),
        S::Float32(Some(x)) => Literal::Float(*x),
        S::Float64(Some(x)) => Literal::Double(*x),
        S::Decimal128(Some(x), p, s) => Literal::Decimal {
            unscaled: *x,
            precision: u32::from(*p),
            scale: u32::try_from(*s).ok()?,
        },
        S::Date32(Some(d)) => Literal::Date(*d),
        S::Utf8(Some(s)) | S::LargeUtf8(Some(s)) | S::Utf8View(Some(s)) => {
            Literal::String(s.clone())
        }
        S::Binary(Some(b)) | S::LargeBinary(Some(b)) | S::BinaryView(Some(b)) => {
            Literal::Binary(b.clone())
        }
        S::FixedSizeBinary(_, Some(b)) => Literal::Fixed(b.clone()),
        S::Time64Microsecond(Some(t)) => Literal::Time(*t),
        S::TimestampSecond(Some(x), tz) => micros(scaled(*x, 1_000_000)?, tz),
        S::TimestampMillisecond(Some(x), tz) => micros(scaled(*x, 1_000)?, tz),
        S::TimestampMicrosecond(Some(x), tz) => micros(*x, tz),
        S::TimestampNanosecond(Some(x), tz) => match tz {
            Some(_) => Literal::TimestamptzNs(*x),
            None => Literal::TimestampNs(*x),
        },
        _ => return None,
    }))
}

fn micros(v: i64, tz: &Option<std::sync::Arc<str>>) -> Literal {
    // Arrow timestamps with a zone hold UTC instants whatever the zone
    match tz {
        Some(_) => Literal::Timestamptz(v),
        None => Literal::Timestamp(v),
    }
}

/// Whether the rows a converted filter keeps are exactly those of the files its
/// partition pruning keeps: the conversion is exact and every column it uses is
/// identity-partitioned (and not a float) in every one of `specs`.
pub fn exact_by_identity_partitions(
    converted: &Converted,
    schema: &Schema,
    specs: &[PartitionSpec],
) -> bool {
    if !converted.exact || Binder::new(schema).bind(&converted.predicate).is_err() {
        return false;
    }
    converted.predicate.terms().iter().all(|term| {
        let Ok(bound) = Binder::new(schema).bind_reference(term) else {
            return false;
        };
        !matches!(
            bound.field_type,
            PrimitiveType::Float | PrimitiveType::Double
        ) && specs.iter().all(|spec| {
            spec.fields
                .iter()
                .any(|f| f.source_id == bound.field_id && f.transform == Transform::Identity)
        })
    })
}

#[cfg(test)]
mod tests;
