//! `bucket[N]`: 32-bit murmur3 (x86 variant, seed 0) of the value's hash bytes
//! (spec Appendix B), then `(hash & Integer.MAX_VALUE) % N`.

use std::io::Cursor;

use crate::spec::Literal;

/// murmur3_x86_32 with seed 0 of `bytes`, as a signed 32-bit value (as Java reports it).
fn murmur3(bytes: &[u8]) -> i32 {
    // reading from a slice cannot fail; 0 is never reached in practice
    murmur3::murmur3_32(&mut Cursor::new(bytes), 0).map_or(0, |h| h as i32)
}

fn hash_long(v: i64) -> i32 {
    murmur3(&v.to_le_bytes())
}

/// The minimal big-endian two's-complement bytes of `v` (Java `BigInteger.toByteArray`).
fn min_be_bytes(v: i128) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        let redundant = (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    bytes[start..].to_vec()
}

/// The 32-bit hash of a value (spec Appendix B), `None` for types that cannot be
/// bucketed (boolean, float, double).
///
/// int, long, date, time, timestamp and timestamptz hash as a little-endian long;
/// timestamp_ns / timestamptz_ns are floored to µs first; decimals hash their minimal
/// two's-complement unscaled bytes; strings their UTF-8 bytes; uuids their 16 big-endian
/// bytes; fixed and binary their bytes.
pub fn hash_literal(value: &Literal) -> Option<i32> {
    Some(match value {
        Literal::Int(v) | Literal::Date(v) => hash_long(i64::from(*v)),
        Literal::Long(v) | Literal::Time(v) | Literal::Timestamp(v) | Literal::Timestamptz(v) => {
            hash_long(*v)
        }
        Literal::TimestampNs(v) | Literal::TimestamptzNs(v) => hash_long(v.div_euclid(1000)),
        Literal::Decimal { unscaled, .. } => murmur3(&min_be_bytes(*unscaled)),
        Literal::String(s) => murmur3(s.as_bytes()),
        Literal::Uuid(u) => murmur3(u),
        Literal::Fixed(b) | Literal::Binary(b) => murmur3(b),
        Literal::Boolean(_) | Literal::Float(_) | Literal::Double(_) => return None,
    })
}

/// The bucket of a hash: `(hash & i32::MAX) % n`.
pub fn bucket_hash(hash: i32, n: u32) -> i32 {
    let n = i32::try_from(n).unwrap_or(i32::MAX);
    (hash & i32::MAX) % n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PrimitiveType;

    /// Spec Appendix B test values.
    #[test]
    fn appendix_b_hashes() {
        let ts = |s: &str| {
            chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
                .unwrap()
                .and_utc()
        };
        let dec = Literal::from_json(
            &"14.20".into(),
            &PrimitiveType::Decimal {
                precision: 9,
                scale: 2,
            },
        )
        .unwrap();
        let uuid = uuid::Uuid::parse_str("f79c3e09-677c-4bbd-a479-3f349cb785e7").unwrap();
        let cases: Vec<(Literal, i32)> = vec![
            (Literal::Int(34), 2017239379),
            (Literal::Long(34), 2017239379),
            (dec, -500754589),
            (Literal::Date(17486), -653330422),
            (Literal::Time(81068000000), -662762989),
            (
                Literal::Timestamp(ts("2017-11-16T22:31:08").timestamp_micros()),
                -2047944441,
            ),
            (
                Literal::Timestamp(ts("2017-11-16T22:31:08.000001").timestamp_micros()),
                -1207196810,
            ),
            (
                Literal::Timestamptz(ts("2017-11-16T22:31:08").timestamp_micros()),
                -2047944441,
            ),
            (
                Literal::TimestampNs(ts("2017-11-16T22:31:08").timestamp_nanos_opt().unwrap()),
                -2047944441,
            ),
            (
                Literal::TimestamptzNs(
                    ts("2017-11-16T22:31:08.000001001")
                        .timestamp_nanos_opt()
                        .unwrap(),
                ),
                -1207196810,
            ),
            (Literal::String("iceberg".into()), 1210000089),
            (Literal::Uuid(*uuid.as_bytes()), 1488055340),
            (Literal::Fixed(vec![0, 1, 2, 3]), -188683207),
            (Literal::Binary(vec![0, 1, 2, 3]), -188683207),
        ];
        for (v, h) in cases {
            assert_eq!(hash_literal(&v), Some(h), "hash of {v}");
        }
    }

    #[test]
    fn minimal_decimal_bytes() {
        assert_eq!(min_be_bytes(0), vec![0]);
        assert_eq!(min_be_bytes(-1), vec![0xff]);
        assert_eq!(min_be_bytes(127), vec![0x7f]);
        assert_eq!(min_be_bytes(128), vec![0x00, 0x80]);
        assert_eq!(min_be_bytes(-128), vec![0x80]);
        assert_eq!(min_be_bytes(-129), vec![0xff, 0x7f]);
        assert_eq!(min_be_bytes(1420), vec![0x05, 0x8c]);
    }

    #[test]
    fn buckets_are_non_negative() {
        assert_eq!(bucket_hash(-1, 16), i32::MAX % 16);
        assert_eq!(bucket_hash(2017239379, 16), 3);
    }
}
