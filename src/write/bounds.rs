//! Literals to the spec's single-value binary form (spec Appendix D, "Binary
//! single-value serialization"), the inverse of [`Literal::from_bytes`].

use crate::error::{Error, Result};
use crate::spec::Literal;

/// Encode `lit` in the single-value binary form used by `lower_bounds`, `upper_bounds`
/// and partition field summaries: little-endian for numbers, dates and times, UTF-8 for
/// strings, big-endian two's complement (minimal length) for decimals, 16 big-endian
/// bytes for UUIDs, raw bytes for fixed and binary.
pub fn literal_to_bytes(lit: &Literal) -> Vec<u8> {
    match lit {
        Literal::Boolean(b) => vec![u8::from(*b)],
        Literal::Int(v) | Literal::Date(v) => v.to_le_bytes().to_vec(),
        Literal::Long(v)
        | Literal::Time(v)
        | Literal::Timestamp(v)
        | Literal::Timestamptz(v)
        | Literal::TimestampNs(v)
        | Literal::TimestamptzNs(v) => v.to_le_bytes().to_vec(),
        Literal::Float(v) => v.to_le_bytes().to_vec(),
        Literal::Double(v) => v.to_le_bytes().to_vec(),
        Literal::Decimal { unscaled, .. } => decimal_to_be_bytes(*unscaled),
        Literal::String(s) => s.as_bytes().to_vec(),
        Literal::Uuid(u) => u.to_vec(),
        Literal::Fixed(b) | Literal::Binary(b) => b.clone(),
    }
}

/// The minimal big-endian two's-complement bytes of `v` (at least one byte).
pub fn decimal_to_be_bytes(v: i128) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    // Drop leading bytes that only repeat the sign of the next byte.
    while start < bytes.len() - 1 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    bytes[start..].to_vec()
}

/// An unscaled decimal from big-endian two's-complement bytes of any length ≤ 16
/// (Parquet's FIXED_LEN_BYTE_ARRAY / BYTE_ARRAY decimals).
pub fn decimal_from_parquet_bytes(bytes: &[u8]) -> Result<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return Err(Error::invalid_data(format!(
            "decimal of {} bytes (expected 1 to 16)",
            bytes.len()
        )));
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0x00 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(buf))
}

/// The lower bound of strings cut to `len` code points (spec: "Metrics", truncated
/// bounds; Java `UnicodeUtil.truncateStringMin`): the prefix itself.
pub fn truncate_string_lower(s: &str, len: usize) -> &str {
    crate::transform::truncate_str(s, len)
}

/// The upper bound of strings cut to `len` code points (Java
/// `UnicodeUtil.truncateStringMax`): `s` itself when it has at most `len` code points,
/// else the first `len` code points with the last one that can be incremented
/// incremented (code points after it dropped; surrogates skipped). `None` when no code
/// point can be incremented (all are U+10FFFF): no upper bound can be written.
pub fn truncate_string_upper(s: &str, len: usize) -> Option<String> {
    let prefix = crate::transform::truncate_str(s, len);
    if prefix.len() == s.len() {
        return Some(s.to_string());
    }
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match u32::from(last) + 1 {
            0xD800 => Some('\u{E000}'),
            n => char::from_u32(n),
        };
        if let Some(c) = next {
            chars.push(c);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The lower bound of binary values cut to `len` bytes (Java
/// `BinaryUtil.truncateBinaryMin`): the prefix.
pub fn truncate_binary_lower(b: &[u8], len: usize) -> &[u8] {
    &b[..b.len().min(len)]
}

/// The upper bound of binary values cut to `len` bytes (Java
/// `BinaryUtil.truncateBinaryMax`): `b` when at most `len` bytes, else the first `len`
/// bytes with the last byte below 0xFF incremented (bytes after it dropped). `None` when
/// all of them are 0xFF.
pub fn truncate_binary_upper(b: &[u8], len: usize) -> Option<Vec<u8>> {
    if b.len() <= len {
        return Some(b.to_vec());
    }
    let mut out = b[..len].to_vec();
    while let Some(last) = out.pop() {
        if last < 0xFF {
            out.push(last + 1);
            return Some(out);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PrimitiveType;

    #[test]
    fn round_trips_through_the_reader() {
        let cases = [
            (Literal::Int(-7), PrimitiveType::Int),
            (Literal::Long(1 << 40), PrimitiveType::Long),
            (Literal::Date(19000), PrimitiveType::Date),
            (Literal::Double(-1.5), PrimitiveType::Double),
            (Literal::String("héllo".into()), PrimitiveType::String),
            (
                Literal::Decimal {
                    unscaled: -12345,
                    precision: 15,
                    scale: 2,
                },
                PrimitiveType::Decimal {
                    precision: 15,
                    scale: 2,
                },
            ),
            (
                Literal::Decimal {
                    unscaled: 128,
                    precision: 15,
                    scale: 2,
                },
                PrimitiveType::Decimal {
                    precision: 15,
                    scale: 2,
                },
            ),
            (Literal::Boolean(true), PrimitiveType::Boolean),
        ];
        for (lit, ty) in cases {
            let bytes = literal_to_bytes(&lit);
            assert_eq!(Literal::from_bytes(&bytes, &ty).ok(), Some(lit));
        }
    }

    #[test]
    fn decimals_are_minimal() {
        assert_eq!(decimal_to_be_bytes(0), vec![0]);
        assert_eq!(decimal_to_be_bytes(127), vec![0x7f]);
        assert_eq!(decimal_to_be_bytes(128), vec![0x00, 0x80]);
        assert_eq!(decimal_to_be_bytes(-1), vec![0xff]);
        assert_eq!(decimal_to_be_bytes(-129), vec![0xff, 0x7f]);
        assert_eq!(decimal_from_parquet_bytes(&[0xff, 0x7f]).ok(), Some(-129));
    }
    #[test]
    fn truncated_bounds() {
        assert_eq!(truncate_string_lower("iceberg", 3), "ice");
        assert_eq!(truncate_string_upper("iceberg", 3).as_deref(), Some("icf"));
        assert_eq!(truncate_string_upper("ice", 3).as_deref(), Some("ice"));
        // multi-byte code points count as one
        assert_eq!(truncate_string_lower("é😀xyz", 2), "é😀");
        assert_eq!(truncate_string_upper("é😀xyz", 2).as_deref(), Some("é😁"));
        // U+10FFFF cannot be incremented: the one before it is, and it is dropped
        assert_eq!(
            truncate_string_upper("a\u{10FFFF}z", 2).as_deref(),
            Some("b")
        );
        assert_eq!(truncate_string_upper("\u{10FFFF}\u{10FFFF}z", 2), None);
        // the surrogate range is skipped
        assert_eq!(
            truncate_string_upper("\u{D7FF}zz", 1).as_deref(),
            Some("\u{E000}")
        );
        assert_eq!(truncate_binary_lower(&[1, 2, 3], 2), &[1, 2]);
        assert_eq!(truncate_binary_upper(&[1, 2, 3], 2), Some(vec![1, 3]));
        assert_eq!(truncate_binary_upper(&[1, 0xFF, 3], 2), Some(vec![2]));
        assert_eq!(truncate_binary_upper(&[0xFF, 0xFF, 3], 2), None);
        assert_eq!(truncate_binary_upper(&[1, 2], 2), Some(vec![1, 2]));
    }
}
