//! `truncate[W]` (spec: "Truncate Transform Details").
//!
//! int / long: `v - (((v % W) + W) % W)` (floor to a multiple of W, so `-1` → `-W`);
//! decimal: the same on the unscaled value; string: the first W code points; binary: the
//! first W bytes.

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

/// `truncate[width]` of a value; `None` for types truncate does not apply to.
pub(super) fn truncate(value: &Literal, width: u32) -> Option<Literal> {
    if width == 0 {
        return None;
    }
    let w = width as usize;
    Some(match value {
        Literal::Int(v) => {
            let w = i64::from(width);
            let v = i64::from(*v);
            Literal::Int(i32::try_from(v - v.rem_euclid(w)).ok()?)
        }
        Literal::Long(v) => {
            let w = i128::from(width);
            let v = i128::from(*v);
            Literal::Long(i64::try_from(v - v.rem_euclid(w)).ok()?)
        }
        Literal::Decimal { unscaled, precision, scale } => Literal::Decimal {
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

    /// Spec "Truncate Transform Details" examples and Java `TestTruncate` cases.
    #[test]
    fn truncate_cases() {
        let dec = |u| Literal::Decimal { unscaled: u, precision: 9, scale: 2 };
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
            (3, Literal::String("iceberg".into()), Literal::String("ice".into())),
            (5, Literal::String("abc".into()), Literal::String("abc".into())),
            // code points, not bytes or UTF-16 units
            (2, Literal::String("é😀x".into()), Literal::String("é😀".into())),
            (3, Literal::Binary(vec![1, 2, 3, 4]), Literal::Binary(vec![1, 2, 3])),
        ];
        for (w, v, expected) in cases {
            assert_eq!(truncate(&v, w), Some(expected), "truncate[{w}]({v})");
        }
        // i32::MIN cannot be floored further within int
        assert_eq!(truncate(&Literal::Int(i32::MIN), 10), None);
        assert_eq!(truncate(&Literal::Long(i64::MIN), 10), None);
        assert_eq!(truncate(&Literal::Double(1.0), 10), None);
    }
}
