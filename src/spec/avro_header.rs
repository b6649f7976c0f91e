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

/// One metadata entry of an object container file's header: its key and its value.
pub(crate) type Entry<'a> = (&'a [u8], &'a [u8]);

/// The metadata entries (key, value) of an object container file's header `bytes`
/// (the whole header, `bytes.len()` its length), in file order (spec: Avro "Object
/// Container Files": the magic, a map of bytes values, the 16-byte sync marker).
///
/// Errors (a text for the caller to put in an error naming the file): the header is cut
/// short, or its metadata does not end 16 bytes (the sync marker) before its end.
pub(crate) fn entries(bytes: &[u8]) -> Result<Vec<Entry<'_>>, String> {
    let cut_short = || "header cut short".to_string();
    if bytes.get(..4).ok_or_else(cut_short)? != b"Obj\x01" {
        return Err("not an Avro object container file".to_string());
    }
    let mut at = 4;
    let mut out = vec![];
    loop {
        let mut count = long(bytes, &mut at).ok_or_else(cut_short)?;
        if count == 0 {
            break;
        }
        if count < 0 {
            // a negative count is followed by the block's size in bytes
            count = count.checked_neg().ok_or_else(cut_short)?;
            long(bytes, &mut at).ok_or_else(cut_short)?;
        }
        for _ in 0..count {
            let k_len = long(bytes, &mut at).ok_or_else(cut_short)?;
            let k = slice(bytes, &mut at, k_len).ok_or_else(cut_short)?;
            let v_len = long(bytes, &mut at).ok_or_else(cut_short)?;
            let v = slice(bytes, &mut at, v_len).ok_or_else(cut_short)?;
            out.push((k, v));
        }
    }
    if at.checked_add(16) != Some(bytes.len()) {
        return Err("header length does not match its metadata".to_string());
    }
    Ok(out)
}

/// The header `bytes` (the whole header, as [`entries`] takes it) with the metadata
/// values of the keys in `replace` replaced (keys not in the header are not added), the
/// other entries and the sync marker as they were.
///
/// Errors: as [`entries`].
pub(crate) fn with_values(bytes: &[u8], replace: &[(&str, &[u8])]) -> Result<Vec<u8>, String> {
    let entries = entries(bytes)?;
    let mut out =
        Vec::with_capacity(bytes.len() + replace.iter().map(|r| r.1.len()).sum::<usize>());
    out.extend_from_slice(b"Obj\x01");
    write_long(&mut out, entries.len() as i64);
    for (key, value) in entries {
        let value = replace
            .iter()
            .find(|(k, _)| k.as_bytes() == key)
            .map_or(value, |(_, v)| *v);
        write_long(&mut out, key.len() as i64);
        out.extend_from_slice(key);
        write_long(&mut out, value.len() as i64);
        out.extend_from_slice(value);
    }
    write_long(&mut out, 0);
    out.extend_from_slice(&bytes[bytes.len() - 16..]);
    Ok(out)
}

/// `bytes` (an object container file, or its header alone, whose header is
/// `header_len` bytes) with the `avro.schema` of its header replaced by `schema`, the
/// bytes after the header as they were (spec: Avro "Object Container Files": magic, a
/// metadata map of bytes, the sync marker, the data blocks).
///
/// Errors: as [`entries`].
pub(crate) fn with_schema(
    bytes: &[u8],
    header_len: usize,
    schema: &str,
) -> Result<Vec<u8>, String> {
    let header = bytes.get(..header_len).ok_or("file cut short")?;
    let mut out = with_values(header, &[("avro.schema", schema.as_bytes())])?;
    out.extend_from_slice(&bytes[header_len..]);
    Ok(out)
}

/// Append the Avro `long` `v` (zig-zag varint) to `out`.
pub(crate) fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
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
