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
}
