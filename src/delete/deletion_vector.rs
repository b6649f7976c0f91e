//! The `deletion-vector-v1` blob: a set of deleted row positions (Puffin spec,
//! "`deletion-vector-v1` blob type"; table spec, "Deletion Vectors").
//!
//! Layout of a blob of `n` bytes:
//!
//! | bytes          | content                                                     |
//! |----------------|-------------------------------------------------------------|
//! | 0..4           | `n - 8`: length of magic + vector, u32 **big-endian**       |
//! | 4..8           | magic `D1 D3 39 64`                                         |
//! | 8..n-4         | the vector: 64-bit Roaring "portable" serialization         |
//! | n-4..n         | CRC-32 of bytes 4..n-4 (magic + vector), u32 **big-endian** |
//!
//! The portable vector is: the number of 32-bit bitmaps as u64 little-endian, then per
//! bitmap its key (the high 32 bits of the positions it holds, u32 little-endian, keys in
//! ascending order, most significant bit 0) and a standard 32-bit Roaring bitmap of the
//! low 32 bits. This is exactly the layout of [`RoaringTreemap::serialize_into`]; it is
//! read here key by key so that key order, key range and trailing bytes are checked too.

use std::io::Cursor;

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::{Error, Result};

/// The magic bytes that open a deletion vector after its length field.
pub const DELETION_VECTOR_MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];

/// Bytes around the vector: length (4), magic (4) and CRC (4).
const OVERHEAD: usize = 12;

fn bad(location: &str, what: impl std::fmt::Display) -> Error {
    Error::invalid_data(format!("deletion vector in '{location}': {what}"))
}

fn be_u32(bytes: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[..4]);
    u32::from_be_bytes(b)
}

/// Decode a `deletion-vector-v1` blob into the set of deleted positions.
///
/// `location` names the Puffin file in errors. Checks, in order: the blob is at least 12
/// bytes, the length field equals the blob size minus 8, the magic, the CRC-32, then the
/// portable serialization (keys ascending and < 2^31, every bitmap whole, no trailing
/// bytes). Every failure is [`crate::ErrorKind::InvalidData`]; nothing panics on
/// truncated or corrupt input.
pub fn deserialize_deletion_vector(blob: &[u8], location: &str) -> Result<RoaringTreemap> {
    if blob.len() < OVERHEAD {
        return Err(bad(
            location,
            format!(
                "blob of {} bytes is truncated (at least {OVERHEAD} needed)",
                blob.len()
            ),
        ));
    }
    let length = be_u32(blob) as usize;
    let expected = blob.len() - 8;
    if length != expected {
        return Err(bad(
            location,
            format!(
                "length field is {length}, but the blob holds {expected} bytes of magic and vector"
            ),
        ));
    }
    let data = &blob[4..4 + length];
    if data[..4] != DELETION_VECTOR_MAGIC {
        return Err(bad(
            location,
            format!(
                "bad magic {:02X?}, expected {:02X?}",
                &data[..4],
                DELETION_VECTOR_MAGIC
            ),
        ));
    }
    let stored_crc = be_u32(&blob[4 + length..]);
    let crc = crc32fast::hash(data);
    if crc != stored_crc {
        return Err(bad(
            location,
            format!("CRC mismatch: computed {crc:#010x}, stored {stored_crc:#010x}"),
        ));
    }
    deserialize_portable(&data[4..])
        .map_err(|e| e.context(format!("deletion vector in '{location}'")))
}

/// Read the 64-bit Roaring portable serialization (see the module docs).
pub fn deserialize_portable(bytes: &[u8]) -> Result<RoaringTreemap> {
    let count_bytes: [u8; 8] = bytes
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| Error::invalid_data("vector truncated in its bitmap count"))?;
    let count = u64::from_le_bytes(count_bytes);
    let mut cursor = Cursor::new(&bytes[8..]);
    let mut bitmaps: Vec<(u32, RoaringBitmap)> = Vec::new();
    let mut last_key: Option<u32> = None;
    for i in 0..count {
        let pos = cursor.position() as usize;
        let rest = cursor.get_ref();
        let key_bytes: [u8; 4] = rest
            .get(pos..pos + 4)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| {
                Error::invalid_data(format!("vector truncated at bitmap {i} of {count}"))
            })?;
        let key = u32::from_le_bytes(key_bytes);
        cursor.set_position((pos + 4) as u64);
        if key > i32::MAX as u32 {
            return Err(Error::invalid_data(format!(
                "bitmap key {key} has its most significant bit set"
            )));
        }
        if last_key.is_some_and(|k| key <= k) {
            return Err(Error::invalid_data(format!(
                "bitmap keys are not ascending ({key} after {last_key:?})"
            )));
        }
        last_key = Some(key);
        let bitmap = RoaringBitmap::deserialize_from(&mut cursor).map_err(|e| {
            Error::invalid_data(format!(
                "bitmap {i} of {count} (key {key}) is corrupt or truncated"
            ))
            .with_source(e)
        })?;
        bitmaps.push((key, bitmap));
    }
    let consumed = cursor.position() as usize;
    if consumed != cursor.get_ref().len() {
        return Err(Error::invalid_data(format!(
            "{} bytes after the last of {count} bitmaps",
            cursor.get_ref().len() - consumed
        )));
    }
    Ok(RoaringTreemap::from_bitmaps(bitmaps))
}

/// Encode positions as a `deletion-vector-v1` blob (length, magic, portable vector, CRC).
///
/// Errors when a position is ≥ 2^63 (the spec's positions are positive) or the blob would
/// exceed 2^31 bytes.
pub fn serialize_deletion_vector(positions: &RoaringTreemap) -> Result<Vec<u8>> {
    if positions.max().is_some_and(|m| m > i64::MAX as u64) {
        return Err(Error::invalid_argument(
            "deletion vector positions must be < 2^63",
        ));
    }
    let mut data = Vec::with_capacity(4 + positions.serialized_size());
    data.extend_from_slice(&DELETION_VECTOR_MAGIC);
    positions
        .serialize_into(&mut data)
        .map_err(|e| Error::invalid_argument("cannot serialize deletion vector").with_source(e))?;
    let length = u32::try_from(data.len())
        .ok()
        .filter(|l| *l <= i32::MAX as u32)
        .ok_or_else(|| Error::invalid_argument("deletion vector larger than 2 GiB"))?;
    let mut blob = Vec::with_capacity(data.len() + 8);
    blob.extend_from_slice(&length.to_be_bytes());
    blob.extend_from_slice(&data);
    blob.extend_from_slice(&crc32fast::hash(&data).to_be_bytes());
    Ok(blob)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RoaringTreemap {
        let mut t: RoaringTreemap = [0u64, 1, 2, 1000, 70_000].into_iter().collect();
        t.insert_range(100_000..110_000); // a run container
        t.insert(5 << 32 | 7); // a second key
        t
    }

    #[test]
    fn round_trips() {
        let positions = sample();
        let blob = serialize_deletion_vector(&positions).unwrap();
        assert_eq!(&blob[4..8], &DELETION_VECTOR_MAGIC);
        assert_eq!(be_u32(&blob) as usize, blob.len() - 8);
        assert_eq!(
            deserialize_deletion_vector(&blob, "f.puffin").unwrap(),
            positions
        );
        let empty = serialize_deletion_vector(&RoaringTreemap::new()).unwrap();
        assert_eq!(empty.len(), 4 + 4 + 8 + 4);
        assert!(deserialize_deletion_vector(&empty, "f.puffin")
            .unwrap()
            .is_empty());
    }

    /// A blob assembled by hand from the spec's description (not by the roaring crate):
    /// positions {3, 4} under key 0, in a no-run-container 32-bit bitmap.
    #[test]
    fn reads_hand_built_spec_layout() {
        let mut vector = vec![];
        vector.extend_from_slice(&1u64.to_le_bytes()); // one bitmap
        vector.extend_from_slice(&0u32.to_le_bytes()); // key 0
        vector.extend_from_slice(&12346u32.to_le_bytes()); // cookie: no run containers
        vector.extend_from_slice(&1u32.to_le_bytes()); // one container
        vector.extend_from_slice(&0u16.to_le_bytes()); // container key
        vector.extend_from_slice(&1u16.to_le_bytes()); // cardinality - 1
        vector.extend_from_slice(&16u32.to_le_bytes()); // offset of the container from the cookie
        vector.extend_from_slice(&3u16.to_le_bytes());
        vector.extend_from_slice(&4u16.to_le_bytes());
        let mut data = DELETION_VECTOR_MAGIC.to_vec();
        data.extend_from_slice(&vector);
        let mut blob = (data.len() as u32).to_be_bytes().to_vec();
        blob.extend_from_slice(&data);
        blob.extend_from_slice(&crc32fast::hash(&data).to_be_bytes());
        let got = deserialize_deletion_vector(&blob, "f").unwrap();
        assert_eq!(got.iter().collect::<Vec<_>>(), [3, 4]);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let blob = serialize_deletion_vector(&sample()).unwrap();
        for len in 0..blob.len() {
            let err = deserialize_deletion_vector(&blob[..len], "t.puffin").unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidData);
            assert!(err.to_string().contains("t.puffin"), "{err}");
        }
    }

    #[test]
    fn detects_bad_length_magic_and_crc() {
        let blob = serialize_deletion_vector(&sample()).unwrap();
        let mut b = blob.clone();
        b[3] ^= 1;
        assert!(deserialize_deletion_vector(&b, "x")
            .unwrap_err()
            .to_string()
            .contains("length field"));
        let mut b = blob.clone();
        b[5] ^= 1;
        assert!(deserialize_deletion_vector(&b, "x")
            .unwrap_err()
            .to_string()
            .contains("bad magic"));
        let mut b = blob.clone();
        b[20] ^= 0x40;
        assert!(deserialize_deletion_vector(&b, "x")
            .unwrap_err()
            .to_string()
            .contains("CRC mismatch"));
        let mut b = blob.clone();
        let n = b.len();
        b[n - 1] ^= 1;
        assert!(deserialize_deletion_vector(&b, "x")
            .unwrap_err()
            .to_string()
            .contains("CRC mismatch"));
    }

    #[test]
    fn checks_keys_and_trailing_bytes() {
        let mut two = vec![];
        two.extend_from_slice(&2u64.to_le_bytes());
        for key in [5u32, 5] {
            two.extend_from_slice(&key.to_le_bytes());
            RoaringBitmap::from_iter([1u32])
                .serialize_into(&mut two)
                .unwrap();
        }
        assert!(deserialize_portable(&two)
            .unwrap_err()
            .to_string()
            .contains("not ascending"));
        let mut high = vec![];
        high.extend_from_slice(&1u64.to_le_bytes());
        high.extend_from_slice(&0x8000_0000u32.to_le_bytes());
        RoaringBitmap::from_iter([1u32])
            .serialize_into(&mut high)
            .unwrap();
        assert!(deserialize_portable(&high)
            .unwrap_err()
            .to_string()
            .contains("most significant bit"));
        let mut trailing = vec![];
        RoaringTreemap::from_iter([1u64])
            .serialize_into(&mut trailing)
            .unwrap();
        trailing.push(0);
        assert!(deserialize_portable(&trailing)
            .unwrap_err()
            .to_string()
            .contains("after the last"));
        // a huge count with no bitmaps behind it ends at the first missing key
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(&[0, 0]);
        assert!(deserialize_portable(&huge)
            .unwrap_err()
            .to_string()
            .contains("truncated"));
    }

    /// Java's `TestBitmapPositionDeleteIndex` cases: the same position sets serialize to
    /// blobs of the sizes of Java's golden files (20, 50, 56 and 94 bytes; verified
    /// byte-identical against them once, not vendored), and {1, 2} has the CRC Java's
    /// invalid-CRC test names (0x712fa6e8).
    #[test]
    fn java_position_delete_index_cases() {
        const CONTAINER: u64 = 1 << 16;
        const BITMAP: u64 = 1 << 32;
        let mut all_containers = RoaringTreemap::new();
        for (bitmap, small, compressible, dense) in [
            (0, [5, 7], (1, 1000), (1, CONTAINER - 1)),
            (1, [10, 20], (10, 500), (1, CONTAINER - 1)),
        ] {
            let base = bitmap * BITMAP;
            all_containers.extend(small.iter().map(|p| base + p));
            all_containers
                .insert_range(base + CONTAINER + compressible.0..base + CONTAINER + compressible.1);
            all_containers
                .insert_range(base + 2 * CONTAINER + dense.0..base + 2 * CONTAINER + dense.1);
        }
        let big = i32::MAX as u64;
        let cases: [(RoaringTreemap, usize); 4] = [
            (RoaringTreemap::new(), 20),
            ([1u64, 3, 5, 7, 9].into_iter().collect(), 50),
            ([100, 101, big + 100, big + 101].into_iter().collect(), 56),
            (all_containers, 94),
        ];
        for (positions, size) in cases {
            let blob = serialize_deletion_vector(&positions).unwrap();
            assert_eq!(blob.len(), size);
            assert_eq!(
                deserialize_deletion_vector(&blob, "golden").unwrap(),
                positions
            );
        }
        let blob = serialize_deletion_vector(&[1u64, 2].into_iter().collect()).unwrap();
        assert_eq!(be_u32(&blob[blob.len() - 4..]), 0x712f_a6e8);
        let mut bad = blob.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        let err = deserialize_deletion_vector(&bad, "s3://bucket/dv.puffin")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("s3://bucket/dv.puffin")
                && err.contains("0x712fa6e8")
                && err.contains("0x712fa6e9"),
            "{err}"
        );
    }
}
