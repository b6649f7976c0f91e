//! One value of an Avro object container file's header metadata (the `Obj\x01` magic,
//! then a map of string keys to byte values, then the 16-byte sync marker; Avro spec,
//! "Object Container Files"), read without decoding the file: Iceberg writers put keys
//! there that tell which file it is (a manifest's `partition-spec-id`, a manifest list's
//! `snapshot-id`; spec: "Manifests", "Manifest Lists").

/// A zig-zag varint `long` at `*at`, advancing it; `None` past the end or beyond 64 bits.
fn long(bytes: &[u8], at: &mut usize) -> Option<i64> {
    let mut n: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some((n >> 1) as i64 ^ -((n & 1) as i64));
        }
    }
    None
}

/// `len` bytes at `*at` (a length read from the file), advancing it.
fn slice<'a>(bytes: &'a [u8], at: &mut usize, len: i64) -> Option<&'a [u8]> {
    let len = usize::try_from(len).ok()?;
    let end = at.checked_add(len)?;
    let out = bytes.get(*at..end)?;
    *at = end;
    Some(out)
}

/// The header metadata value of `key` in the Avro file `bytes`, as UTF-8 text. `None`
/// when the key is absent, or the header is not readable (the file's decoder reports
/// that, naming the file) or the value is not UTF-8.
pub(crate) fn header_value(bytes: &[u8], key: &str) -> Option<String> {
    if bytes.get(..4)? != b"Obj\x01" {
        return None;
    }
    let mut at = 4;
    loop {
        let mut count = long(bytes, &mut at)?;
        if count == 0 {
            return None;
        }
        if count < 0 {
            // a negative count is followed by the block's size in bytes
            count = count.checked_neg()?;
            long(bytes, &mut at)?;
        }
        for _ in 0..count {
            let k_len = long(bytes, &mut at)?;
            let k = slice(bytes, &mut at, k_len)?;
            let v_len = long(bytes, &mut at)?;
            let v = slice(bytes, &mut at, v_len)?;
            if k == key.as_bytes() {
                return std::str::from_utf8(v).ok().map(str::to_string);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::header_value;

    fn zigzag(v: i64) -> Vec<u8> {
        let mut n = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = vec![];
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    fn header(pairs: &[(&str, &str)], negative: bool) -> Vec<u8> {
        let mut out = b"Obj\x01".to_vec();
        let n = pairs.len() as i64;
        out.extend(zigzag(if negative { -n } else { n }));
        if negative {
            out.extend(zigzag(0));
        }
        for (k, v) in pairs {
            out.extend(zigzag(k.len() as i64));
            out.extend(k.as_bytes());
            out.extend(zigzag(v.len() as i64));
            out.extend(v.as_bytes());
        }
        out.extend(zigzag(0));
        out.extend([0u8; 16]);
        out
    }

    #[test]
    fn values_are_found_by_key_and_damage_is_no_value() {
        for negative in [false, true] {
            let h = header(
                &[("avro.codec", "deflate"), ("snapshot-id", "42")],
                negative,
            );
            assert_eq!(header_value(&h, "snapshot-id").as_deref(), Some("42"));
            assert_eq!(header_value(&h, "partition-spec-id"), None);
            for len in 0..h.len() - 17 {
                assert_eq!(header_value(&h[..len], "snapshot-id"), None);
            }
        }
        assert_eq!(header_value(b"PAR1", "snapshot-id"), None);
    }
}
