//! Comparing literals and converting them between types.
//!
//! [`compare`] is the order every evaluator uses (IEEE 754 for floats, so `-0.0 == 0.0`
//! and NaN is unordered; unsigned bytes for strings, binary, fixed and uuid). [`convert`]
//! turns a literal into a column's type; when the value has no exact counterpart (a
//! long beyond the int range, a double between two floats, a decimal with more digits
//! than the column's scale, nanoseconds under a microsecond column) it returns the
//! nearest representable values on either side, from which the binder builds an exact
//! equivalent predicate.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::spec::{Literal, PrimitiveType};

/// µs per day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;
/// ns per day.
pub const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Compare two literals; `None` when they are not comparable (different kinds, NaN).
///
/// int/long compare numerically with each other, as do timestamp/timestamptz (both µs)
/// and decimals of different scales.
pub fn compare(a: &Literal, b: &Literal) -> Option<Ordering> {
    use Literal as L;
    match (a, b) {
        (L::Boolean(x), L::Boolean(y)) => Some(x.cmp(y)),
        (L::Int(x), L::Int(y)) | (L::Date(x), L::Date(y)) => Some(x.cmp(y)),
        (L::Int(x), L::Long(y)) => Some(i64::from(*x).cmp(y)),
        (L::Long(x), L::Int(y)) => Some(x.cmp(&i64::from(*y))),
        (L::Long(x), L::Long(y))
        | (L::Time(x), L::Time(y))
        | (L::Timestamp(x) | L::Timestamptz(x), L::Timestamp(y) | L::Timestamptz(y))
        | (L::TimestampNs(x) | L::TimestamptzNs(x), L::TimestampNs(y) | L::TimestamptzNs(y)) => {
            Some(x.cmp(y))
        }
        (L::Float(x), L::Float(y)) => x.partial_cmp(y),
        (L::Double(x), L::Double(y)) => x.partial_cmp(y),
        (L::Float(x), L::Double(y)) => f64::from(*x).partial_cmp(y),
        (L::Double(x), L::Float(y)) => x.partial_cmp(&f64::from(*y)),
        (
            L::Decimal {
                unscaled: x,
                scale: sx,
                ..
            },
            L::Decimal {
                unscaled: y,
                scale: sy,
                ..
            },
        ) => {
            let s = (*sx).max(*sy);
            let x = rescale_up(*x, s - sx)?;
            let y = rescale_up(*y, s - sy)?;
            Some(x.cmp(&y))
        }
        (L::String(x), L::String(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (L::Uuid(x), L::Uuid(y)) => Some(x.cmp(y)),
        (L::Fixed(x) | L::Binary(x), L::Fixed(y) | L::Binary(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Whether `a` and `b` compare equal.
pub fn literal_eq(a: &Literal, b: &Literal) -> bool {
    compare(a, b) == Some(Ordering::Equal)
}

/// Whether the literal is a float or double NaN.
pub fn is_nan(l: &Literal) -> bool {
    match l {
        Literal::Float(f) => f.is_nan(),
        Literal::Double(d) => d.is_nan(),
        _ => false,
    }
}

fn rescale_up(v: i128, by: u32) -> Option<i128> {
    10i128.checked_pow(by).and_then(|p| v.checked_mul(p))
}

/// The result of converting a literal to a type.
#[derive(Debug, Clone, PartialEq)]
pub enum Conversion {
    /// The value exists in the target type.
    Exact(Literal),
    /// The value falls strictly between two values of the target type: `below` is the
    /// greatest value less than it and `above` the least value greater (`None` when the
    /// value is beyond the type's range on that side).
    Between {
        /// Greatest representable value below.
        below: Option<Literal>,
        /// Least representable value above.
        above: Option<Literal>,
    },
}

fn incompatible(l: &Literal, ty: &PrimitiveType) -> Error {
    Error::invalid_argument(format!("literal {l} cannot be compared with a {ty} column"))
}

/// Place an integer value `v` (known exactly, as `floor`/`ceil` in the target's units;
/// equal when exact) in the range `[min, max]` of the target type.
fn bracket(
    floor: i128,
    ceil: i128,
    min: i128,
    max: i128,
    make: impl Fn(i128) -> Literal,
) -> Conversion {
    if floor == ceil && (min..=max).contains(&floor) {
        return Conversion::Exact(make(floor));
    }
    // out of range, or strictly between floor and ceil
    let below = if floor > max {
        Some(max)
    } else if floor < min {
        None
    } else {
        Some(floor)
    };
    let above = if ceil < min {
        Some(min)
    } else if ceil > max {
        None
    } else {
        Some(ceil)
    };
    Conversion::Between {
        below: below.map(&make),
        above: above.map(&make),
    }
}

/// Floor and ceiling of `v / d` (d > 0).
fn div_floor_ceil(v: i128, d: i128) -> (i128, i128) {
    let floor = v.div_euclid(d);
    let ceil = if v.rem_euclid(d) == 0 {
        floor
    } else {
        floor + 1
    };
    (floor, ceil)
}

/// An integer-valued literal (int, long, decimal as unscaled at `scale`) at a target
/// decimal scale: (floor, ceil) of the unscaled value, `None` on overflow.
fn to_scale(unscaled: i128, from_scale: u32, to_scale: u32) -> Option<(i128, i128)> {
    if to_scale >= from_scale {
        let v = rescale_up(unscaled, to_scale - from_scale)?;
        Some((v, v))
    } else {
        let d = 10i128.checked_pow(from_scale - to_scale)?;
        Some(div_floor_ceil(unscaled, d))
    }
}

fn float_neighbours(d: f64) -> Conversion {
    let f = d as f32;
    let back = f64::from(f);
    if back == d || d.is_nan() {
        return Conversion::Exact(Literal::Float(f));
    }
    let (below, above) = if back < d {
        (f, f.next_up())
    } else {
        (f.next_down(), f)
    };
    Conversion::Between {
        below: Some(Literal::Float(below)),
        above: Some(Literal::Float(above)),
    }
}

fn int_to_double(v: i128) -> Conversion {
    let d = v as f64;
    // exact when the round trip keeps the value
    if d.is_finite() && d as i128 == v {
        return Conversion::Exact(Literal::Double(d));
    }
    let (below, above) = if (d as i128) < v {
        (d, d.next_up())
    } else {
        (d.next_down(), d)
    };
    Conversion::Between {
        below: Some(Literal::Double(below)),
        above: Some(Literal::Double(above)),
    }
}

/// Convert `literal` to the type `ty` of the column it is compared with.
///
/// Errors when the two cannot be compared at all (a string against an int column).
pub fn convert(literal: &Literal, ty: &PrimitiveType) -> Result<Conversion> {
    use Literal as L;
    use PrimitiveType as T;
    let i32_range = (i128::from(i32::MIN), i128::from(i32::MAX));
    let i64_range = (i128::from(i64::MIN), i128::from(i64::MAX));
    let exact = |l: Literal| Ok(Conversion::Exact(l));
    // integer-like sources as (value, scale)
    let integral: Option<(i128, u32)> = match literal {
        L::Int(v) => Some((i128::from(*v), 0)),
        L::Long(v) => Some((i128::from(*v), 0)),
        L::Decimal {
            unscaled, scale, ..
        } => Some((*unscaled, *scale)),
        _ => None,
    };
    match (literal, ty) {
        (L::Boolean(b), T::Boolean) => exact(L::Boolean(*b)),
        (L::Int(_) | L::Long(_) | L::Decimal { .. }, T::Int | T::Long | T::Decimal { .. }) => {
            let Some((v, s)) = integral else {
                return Err(incompatible(literal, ty));
            };
            let (target_scale, (min, max)) = match ty {
                T::Int => (0, i32_range),
                T::Long => (0, i64_range),
                T::Decimal { precision, scale } => {
                    let max = 10i128.checked_pow(*precision).map_or(i128::MAX, |p| p - 1);
                    (*scale, (-max, max))
                }
                _ => return Err(incompatible(literal, ty)),
            };
            let Some((floor, ceil)) = to_scale(v, s, target_scale) else {
                // overflow of i128: beyond any range on the value's side
                let positive = v > 0;
                return Ok(Conversion::Between {
                    below: positive.then(|| make_integral(ty, max)).flatten(),
                    above: (!positive).then(|| make_integral(ty, min)).flatten(),
                });
            };
            Ok(bracket(floor, ceil, min, max, |x| {
                make_integral(ty, x).unwrap_or(L::Long(0))
            }))
        }
        (L::Int(_) | L::Long(_), T::Float) => {
            let Some((v, _)) = integral else {
                return Err(incompatible(literal, ty));
            };
            Ok(match int_to_double(v) {
                Conversion::Exact(L::Double(d)) => float_neighbours(d),
                other => other,
            })
        }
        (L::Int(_) | L::Long(_), T::Double) => {
            let Some((v, _)) = integral else {
                return Err(incompatible(literal, ty));
            };
            Ok(int_to_double(v))
        }
        (L::Float(_) | L::Double(_), T::Int | T::Long) => {
            let d = match literal {
                L::Float(f) => f64::from(*f),
                L::Double(d) => *d,
                _ => return Err(incompatible(literal, ty)),
            };
            if d.is_nan() {
                return Err(incompatible(literal, ty));
            }
            let (min, max) = if *ty == T::Int { i32_range } else { i64_range };
            // saturating float → int casts keep infinities beyond the range
            let (floor, ceil) = (d.floor() as i128, d.ceil() as i128);
            Ok(bracket(floor, ceil, min, max, |x| {
                make_integral(ty, x).unwrap_or(L::Long(0))
            }))
        }
        (L::Float(f), T::Float) => exact(L::Float(*f)),
        (L::Float(f), T::Double) => exact(L::Double(f64::from(*f))),
        (L::Double(d), T::Double) => exact(L::Double(*d)),
        (L::Double(d), T::Float) => Ok(float_neighbours(*d)),
        (L::Date(d), T::Date) => exact(L::Date(*d)),
        (L::Date(d), T::Timestamp | T::Timestamptz) => {
            let us = i128::from(*d) * i128::from(MICROS_PER_DAY);
            Ok(bracket(us, us, i64_range.0, i64_range.1, |v| {
                timestamp_of(ty, v as i64)
            }))
        }
        (L::Date(d), T::TimestampNs | T::TimestamptzNs) => {
            let ns = i128::from(*d) * i128::from(NANOS_PER_DAY);
            Ok(bracket(ns, ns, i64_range.0, i64_range.1, |v| {
                timestamp_of(ty, v as i64)
            }))
        }
        (L::Timestamp(v) | L::Timestamptz(v), T::Timestamp | T::Timestamptz) => {
            exact(timestamp_of(ty, *v))
        }
        (L::Timestamp(v) | L::Timestamptz(v), T::TimestampNs | T::TimestamptzNs) => {
            let ns = i128::from(*v) * 1000;
            Ok(bracket(ns, ns, i64_range.0, i64_range.1, |x| {
                timestamp_of(ty, x as i64)
            }))
        }
        (L::TimestampNs(v) | L::TimestamptzNs(v), T::TimestampNs | T::TimestamptzNs) => {
            exact(timestamp_of(ty, *v))
        }
        (L::TimestampNs(v) | L::TimestamptzNs(v), T::Timestamp | T::Timestamptz) => {
            let (f, c) = div_floor_ceil(i128::from(*v), 1000);
            Ok(bracket(f, c, i64_range.0, i64_range.1, |x| {
                timestamp_of(ty, x as i64)
            }))
        }
        (L::Timestamp(v) | L::Timestamptz(v), T::Date) => {
            let (f, c) = div_floor_ceil(i128::from(*v), i128::from(MICROS_PER_DAY));
            Ok(bracket(f, c, i32_range.0, i32_range.1, |x| {
                L::Date(x as i32)
            }))
        }
        (L::TimestampNs(v) | L::TimestamptzNs(v), T::Date) => {
            let (f, c) = div_floor_ceil(i128::from(*v), i128::from(NANOS_PER_DAY));
            Ok(bracket(f, c, i32_range.0, i32_range.1, |x| {
                L::Date(x as i32)
            }))
        }
        (L::Time(t), T::Time) => exact(L::Time(*t)),
        (L::String(s), T::String) => exact(L::String(s.clone())),
        (L::String(s), T::Uuid) => uuid::Uuid::parse_str(s)
            .map(|u| Conversion::Exact(L::Uuid(*u.as_bytes())))
            .map_err(|_| incompatible(literal, ty)),
        (L::Uuid(u), T::Uuid) => exact(L::Uuid(*u)),
        (L::Fixed(b) | L::Binary(b), T::Uuid) => <[u8; 16]>::try_from(b.as_slice())
            .map(|u| Conversion::Exact(L::Uuid(u)))
            .map_err(|_| incompatible(literal, ty)),
        (L::Uuid(u), T::Fixed(16) | T::Binary) => exact(binary_of(ty, u.to_vec())),
        (L::Fixed(b) | L::Binary(b), T::Fixed(_) | T::Binary) => exact(binary_of(ty, b.clone())),
        _ => Err(incompatible(literal, ty)),
    }
}

fn make_integral(ty: &PrimitiveType, v: i128) -> Option<Literal> {
    Some(match ty {
        PrimitiveType::Int => Literal::Int(i32::try_from(v).ok()?),
        PrimitiveType::Long => Literal::Long(i64::try_from(v).ok()?),
        PrimitiveType::Decimal { precision, scale } => Literal::Decimal {
            unscaled: v,
            precision: *precision,
            scale: *scale,
        },
        _ => return None,
    })
}

fn timestamp_of(ty: &PrimitiveType, v: i64) -> Literal {
    match ty {
        PrimitiveType::Timestamptz => Literal::Timestamptz(v),
        PrimitiveType::TimestampNs => Literal::TimestampNs(v),
        PrimitiveType::TimestamptzNs => Literal::TimestamptzNs(v),
        _ => Literal::Timestamp(v),
    }
}

fn binary_of(ty: &PrimitiveType, b: Vec<u8>) -> Literal {
    match ty {
        PrimitiveType::Fixed(_) => Literal::Fixed(b),
        _ => Literal::Binary(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn between(below: Option<Literal>, above: Option<Literal>) -> Conversion {
        Conversion::Between { below, above }
    }

    #[test]
    fn conversions() {
        use Literal as L;
        use PrimitiveType as T;
        let dec = T::Decimal {
            precision: 9,
            scale: 2,
        };
        let d = |u| L::Decimal {
            unscaled: u,
            precision: 9,
            scale: 2,
        };
        let cases: Vec<(Literal, PrimitiveType, Conversion)> = vec![
            (L::Int(5), T::Long, Conversion::Exact(L::Long(5))),
            (L::Long(5), T::Int, Conversion::Exact(L::Int(5))),
            (
                L::Long(1 << 40),
                T::Int,
                between(Some(L::Int(i32::MAX)), None),
            ),
            (
                L::Long(-(1 << 40)),
                T::Int,
                between(None, Some(L::Int(i32::MIN))),
            ),
            (L::Int(3), dec, Conversion::Exact(d(300))),
            // 1.234 under scale 2: between 1.23 and 1.24
            (
                L::Decimal {
                    unscaled: 1234,
                    precision: 10,
                    scale: 3,
                },
                dec,
                between(Some(d(123)), Some(d(124))),
            ),
            (
                L::Decimal {
                    unscaled: -1234,
                    precision: 10,
                    scale: 3,
                },
                dec,
                between(Some(d(-124)), Some(d(-123))),
            ),
            (
                L::Decimal {
                    unscaled: 1230,
                    precision: 10,
                    scale: 3,
                },
                dec,
                Conversion::Exact(d(123)),
            ),
            (L::Double(0.5), T::Float, Conversion::Exact(L::Float(0.5))),
            (
                L::Double(1.1),
                T::Float,
                between(Some(L::Float(1.1f32.next_down())), Some(L::Float(1.1f32))),
            ),
            (
                L::Double(1e300),
                T::Float,
                between(Some(L::Float(f32::MAX)), Some(L::Float(f32::INFINITY))),
            ),
            (
                L::TimestampNs(1_500),
                T::Timestamptz,
                between(Some(L::Timestamptz(1)), Some(L::Timestamptz(2))),
            ),
            (
                L::TimestampNs(-1_500),
                T::Timestamp,
                between(Some(L::Timestamp(-2)), Some(L::Timestamp(-1))),
            ),
            (
                L::TimestampNs(3_000),
                T::Timestamp,
                Conversion::Exact(L::Timestamp(3)),
            ),
            (
                L::Date(1),
                T::Timestamptz,
                Conversion::Exact(L::Timestamptz(MICROS_PER_DAY)),
            ),
            (
                L::Timestamp(-1),
                T::Date,
                between(Some(L::Date(-1)), Some(L::Date(0))),
            ),
            (
                L::Double(2.5),
                T::Int,
                between(Some(L::Int(2)), Some(L::Int(3))),
            ),
            (L::Double(-2.0), T::Long, Conversion::Exact(L::Long(-2))),
            (
                L::Double(1e30),
                T::Int,
                between(Some(L::Int(i32::MAX)), None),
            ),
        ];
        for (lit, ty, expected) in cases {
            assert_eq!(convert(&lit, &ty).unwrap(), expected, "{lit} as {ty}");
        }
        assert!(convert(&L::String("a".into()), &T::Int).is_err());
    }

    #[test]
    fn ordering() {
        use Literal as L;
        assert_eq!(
            compare(&L::Double(-0.0), &L::Double(0.0)),
            Some(Ordering::Equal)
        );
        assert_eq!(compare(&L::Double(f64::NAN), &L::Double(0.0)), None);
        assert_eq!(
            compare(&L::String("é".into()), &L::String("z".into())),
            Some(Ordering::Greater)
        );
        assert_eq!(compare(&L::Int(3), &L::Long(4)), Some(Ordering::Less));
        let a = L::Decimal {
            unscaled: 120,
            precision: 9,
            scale: 2,
        };
        let b = L::Decimal {
            unscaled: 12,
            precision: 9,
            scale: 1,
        };
        assert_eq!(compare(&a, &b), Some(Ordering::Equal));
    }
}
