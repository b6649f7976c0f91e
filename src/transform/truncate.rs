//! `truncate[W]` (spec: "Truncate Transform Details").
//!
//! int / long: `v - (((v % W) + W) % W)` (floor to a multiple of W, so `-1` → `-W`);
//! decimal: the same on the unscaled value; string: the first W code points; binary: the
//! first W bytes.

use datafusion::arrow::datatypes::{Decimal128Type, DecimalType};

use crate::spec::Literal;

/// The first `width` code points of `s`.
pub fn truncate_str(s: &str, width: usize) -> &str {
    match s.char_indices().nth(width) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The first `width` bytes of `b`.
pub fn truncate_binary(b: &[u8], width: usize) -> &[u8] {
    &b[..b.len().min(width)]
}

/// For int / long sources: the partition value that Java's wrapping arithmetic gives the
/// values just above the type's minimum, and the first correctly floored partition value
/// above them; `None` when no value wraps (the minimum is a multiple of the width).
pub(super) fn wrapped_partition(value: &Literal, width: u32) -> Option<(Literal, Literal)> {
    match value {
        Literal::Int(_) => {
            let w = i32::try_from(width).ok()?;
            let r = i32::MIN.rem_euclid(w);
            (r != 0).then(|| {
                (
                    Literal::Int(i32::MIN.wrapping_sub(r)),
                    Literal::Int(i32::MIN + (w - r)),
                )
            })
        }
        Literal::Long(_) => {
            let w = i64::from(width);
            let r = i64::MIN.rem_euclid(w);
            (r != 0).then(|| {
                (
                    Literal::Long(i64::MIN.wrapping_sub(r)),
                    Literal::Long(i64::MIN + (w - r)),
                )
            })
        }
        _ => None,
    }
}

/// Whether `value` has at most as many digits as its type allows (a decimal's unscaled
/// value below 10^precision in magnitude; true for other literals). `truncate[W]` of a
/// decimal near its type's limit can fall outside it (`truncate[10]` of `-9.99` as
/// `decimal(3, 2)` is `-10.00`); the spec types the result as the source type, and Java's
/// Avro writer (`DecimalUtil.toReusedFixLengthBytes`: "too large") and PyIceberg refuse
/// to write such a partition value.
pub(super) fn fits_precision(value: &Literal) -> bool {
    match value {
        Literal::Decimal {
            unscaled,
            precision,
            ..
        } => u8::try_from(*precision)
            .is_ok_and(|p| Decimal128Type::is_valid_decimal_precision(*unscaled, p)),
        _ => true,
    }
}

/// `truncate[width]` of a value; `None` for types truncate does not apply to.
pub(super) fn truncate(value: &Literal, width: u32) -> Option<Literal> {
    if width == 0 {
        return None;
    }
    let w = width as usize;
    Some(match value {
        // Java computes in int / long and wraps: values within W of the minimum land in a
        // partition near the maximum (see `wrapped_partition`)
        Literal::Int(v) => {
            let w = i32::try_from(width).ok()?;
            Literal::Int(v.wrapping_sub(v.rem_euclid(w)))
        }
        Literal::Long(v) => Literal::Long(v.wrapping_sub(v.rem_euclid(i64::from(width)))),
        Literal::Decimal {
            unscaled,
            precision,
            scale,
        } => Literal::Decimal {
            unscaled: unscaled.checked_sub(unscaled.rem_euclid(i128::from(width)))?,
            precision: *precision,
            scale: *scale,
        },
        Literal::String(s) => Literal::String(truncate_str(s, w).to_string()),
        Literal::Binary(b) => Literal::Binary(truncate_binary(b, w).to_vec()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::values::decimal_text;

    /// Spec "Truncate Transform Details" examples and Java `TestTruncate` cases.
    #[test]
    fn truncate_cases() {
        let dec = |u| Literal::Decimal {
            unscaled: u,
            precision: 9,
            scale: 2,
        };
        let cases: Vec<(u32, Literal, Literal)> = vec![
            (10, Literal::Int(1), Literal::Int(0)),
            (10, Literal::Int(-1), Literal::Int(-10)),
            (10, Literal::Int(0), Literal::Int(0)),
            (10, Literal::Int(5), Literal::Int(0)),
            (10, Literal::Int(9), Literal::Int(0)),
            (10, Literal::Int(10), Literal::Int(10)),
            (10, Literal::Int(11), Literal::Int(10)),
            (10, Literal::Int(-5), Literal::Int(-10)),
            (10, Literal::Int(-10), Literal::Int(-10)),
            (10, Literal::Int(-11), Literal::Int(-20)),
            (10, Literal::Long(-1), Literal::Long(-10)),
            // spec: 10.65 truncated to 50 (scale 2) is 10.50
            (50, dec(1065), dec(1050)),
            (10, dec(1234), dec(1230)),
            (10, dec(-5), dec(-10)),
            (
                3,
                Literal::String("iceberg".into()),
                Literal::String("ice".into()),
            ),
            (
                5,
                Literal::String("abc".into()),
                Literal::String("abc".into()),
            ),
            // code points, not bytes or UTF-16 units
            (
                2,
                Literal::String("é😀x".into()),
                Literal::String("é😀".into()),
            ),
            (
                3,
                Literal::Binary(vec![1, 2, 3, 4]),
                Literal::Binary(vec![1, 2, 3]),
            ),
        ];
        for (w, v, expected) in cases {
            assert_eq!(truncate(&v, w), Some(expected), "truncate[{w}]({v})");
        }
        // as in Java, flooring below the minimum wraps around
        assert_eq!(
            truncate(&Literal::Int(i32::MIN), 10),
            Some(Literal::Int(i32::MAX - 1))
        );
        assert_eq!(
            truncate(&Literal::Long(i64::MIN), 10),
            Some(Literal::Long(i64::MAX - 1))
        );
        assert_eq!(
            wrapped_partition(&Literal::Int(0), 10),
            Some((Literal::Int(i32::MAX - 1), Literal::Int(i32::MIN + 8)))
        );
        assert_eq!(wrapped_partition(&Literal::Int(0), 2), None);
        assert_eq!(truncate(&Literal::Double(1.0), 10), None);
        // decimals: the truncated value may fall outside the type's precision
        let d3 = |u| Literal::Decimal {
            unscaled: u,
            precision: 3,
            scale: 2,
        };
        assert!(fits_precision(&d3(999)));
        assert!(fits_precision(&d3(-999)));
        assert!(!fits_precision(&d3(-1000)));
        assert!(!fits_precision(&d3(1000)));
        let d38 = |u| Literal::Decimal {
            unscaled: u,
            precision: 38,
            scale: 0,
        };
        assert!(fits_precision(&d38(10i128.pow(38) - 1)));
        assert!(!fits_precision(&d38(-(10i128.pow(38)))));
        assert!(fits_precision(&Literal::Int(i32::MIN)));
        assert_eq!(decimal_text(-1_000_000_000, 2), "-10000000.00");
        assert_eq!(
            decimal_text(-(10i128.pow(38)), 0),
            format!("-1{}", "0".repeat(38))
        );
        assert_eq!(decimal_text(5, 3), "0.005");
    }
}
