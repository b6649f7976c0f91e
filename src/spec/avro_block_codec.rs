//! The codec of an Avro object container file's data blocks (the header's `avro.codec`;
//! Avro spec, "Object Container Files", "Required Codecs", "Optional Codecs"), and one
//! block inflated by it into at most a bound of bytes, so that a small manifest or
//! manifest list whose block inflates to GiBs (a compression bomb, report W67 F10) is an
//! error instead of exhausting memory.
//!
//! Java's Avro codecs (`DeflateCodec`, `SnappyCodec`, `ZstandardCodec`) inflate a block
//! into one buffer with no bound (a JVM fails inside its heap limit), and so do
//! `arrow-avro` 59 and `apache-avro` 0.21; a Rust process is aborted or killed instead.

use std::borrow::Cow;
use std::io::Read;

use crate::error::{Error, ErrorKind, Result};

/// The codecs of data blocks icefloe reads: those Iceberg writers use (Java's
/// `write.avro.compression-codec`: `uncompressed`, `gzip` (Avro's `deflate`), `snappy`,
/// `zstd`; `deflate` is Java's, PyIceberg's and iceberg-rust's default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockCodec {
    /// `null`: the block's bytes are its records.
    Null,
    /// `deflate`: raw deflate data (RFC 1951, no zlib or gzip framing).
    Deflate,
    /// `snappy`: snappy's raw format, then the 4-byte big-endian CRC-32 of the inflated
    /// bytes.
    Snappy,
    /// `zstandard`: Zstandard frames.
    Zstandard,
}

impl BlockCodec {
    /// The codec a header's `avro.codec` value names (`None`: the key is absent, which
    /// the spec reads as `null`).
    ///
    /// Errors, naming `location`: [`ErrorKind::Unsupported`] for `bzip2` and `xz` (Avro
    /// codecs no Iceberg writer uses), [`ErrorKind::InvalidData`] for a name the spec
    /// does not have.
    pub(crate) fn of_header_value(value: Option<&[u8]>, location: &str) -> Result<Self> {
        match value {
            None | Some(b"null") => Ok(Self::Null),
            Some(b"deflate") => Ok(Self::Deflate),
            Some(b"snappy") => Ok(Self::Snappy),
            Some(b"zstandard") => Ok(Self::Zstandard),
            Some(other @ (b"bzip2" | b"xz")) => Err(Error::unsupported(format!(
                "'{location}': Avro codec '{}' (icefloe reads the codecs Iceberg writes: \
                 null, deflate, snappy, zstandard)",
                String::from_utf8_lossy(other)
            ))),
            Some(other) => Err(Error::invalid_data(format!(
                "'{location}' is not a readable Avro file: unknown Avro codec '{}'",
                String::from_utf8_lossy(other)
            ))),
        }
    }
}

/// The least bound of [`inflated_bound`], in bytes (64 MiB).
const INFLATED_MIN_BOUND: usize = 64 << 20;

/// How many times its compressed size a block may inflate to past
/// [`INFLATED_MIN_BOUND`].
const INFLATED_RATIO: usize = 1000;

/// The most bytes any block may inflate to (1 GiB).
const INFLATED_MAX_BOUND: usize = 1 << 30;

/// The most bytes a data block of `compressed_len` bytes may inflate to: the larger of
/// 64 MiB and 1,000 times `compressed_len`, at most 1 GiB.
///
/// Why: Java's Avro writer ends a block once it holds 64,000 bytes (its default sync
/// interval, which Iceberg keeps), `apache-avro` (iceberg-rust, icefloe) and fastavro at
/// 16,000, so their blocks hold tens of KB plus one record (a manifest entry is KBs,
/// with full metrics of thousands of columns MBs); 64 MiB holds any of them whatever
/// they compress to. PyIceberg writes a whole manifest list as one block, so a list of
/// 100,000s of manifests can be a block of 100s of MB: it compresses 3–10 times (paths
/// and snapshot ids are random; the corpus's blocks 5 times at most), far below 1,000,
/// which only a block of one repeated value reaches (deflate's own limit is about
/// 1,032). A block past 1 GiB is no manifest (the Arrow batch decoded from it would be
/// larger still) and is refused whatever its ratio: that cap is what stops a large
/// deflate bomb (report W67 F10: 11 MB inflating to 2.5 GiB stops at 1 GiB), the ratio
/// stops a small zstd bomb (zstd reaches ratios of millions) at 64 MiB.
pub(crate) fn inflated_bound(compressed_len: usize) -> usize {
    compressed_len
        .saturating_mul(INFLATED_RATIO)
        .clamp(INFLATED_MIN_BOUND, INFLATED_MAX_BOUND)
}

/// The bytes of one data block (`data`: its bytes between its byte size and its sync
/// marker) inflated by `codec`, at most `bound` bytes of them; `data` itself for
/// [`BlockCodec::Null`]. While inflating, the memory held for the inflated bytes never
/// passes `bound` (a block within it takes twice its size for a moment, when its
/// segments are joined; see [`read_bounded`]), plus the decoder's own state: deflate's
/// 32 KiB window, zstd's window of at most 128 MiB (its default limit).
///
/// Errors, naming `location` and the block's byte offset `block_start` (all
/// [`ErrorKind::InvalidData`] but the last):
/// - "block at byte N inflates beyond M bytes" when it holds more than `bound` bytes
///   (inflating stops there);
/// - the codec's data is corrupt (deflate or zstd stream errors, a snappy block shorter
///   than its checksum or whose checksum does not match);
/// - [`ErrorKind::Io`] when memory for the inflated bytes cannot be allocated.
pub(crate) fn inflate<'a>(
    codec: BlockCodec,
    data: &'a [u8],
    bound: usize,
    location: &str,
    block_start: usize,
) -> Result<Cow<'a, [u8]>> {
    let context = Inflating {
        location,
        block_start,
        bound,
    };
    match codec {
        BlockCodec::Null => Ok(Cow::Borrowed(data)),
        BlockCodec::Deflate => read_bounded(
            flate2::read::DeflateDecoder::new(data),
            data.len(),
            &context,
        )
        .map(Cow::Owned),
        BlockCodec::Zstandard => {
            let decoder = zstd::stream::read::Decoder::with_buffer(data)
                .map_err(|e| context.corrupt().with_source(e))?;
            read_bounded(decoder, data.len(), &context).map(Cow::Owned)
        }
        BlockCodec::Snappy => inflate_snappy(data, &context).map(Cow::Owned),
    }
}

/// The block being inflated, for errors.
struct Inflating<'a> {
    location: &'a str,
    block_start: usize,
    bound: usize,
}

impl Inflating<'_> {
    fn corrupt(&self) -> Error {
        Error::invalid_data(format!("corrupt Avro data in '{}'", self.location))
            .context(format!("block at byte {}", self.block_start))
    }

    fn beyond(&self) -> Error {
        Error::invalid_data(format!("corrupt Avro data in '{}'", self.location))
            .context(format!(
                "block at byte {} inflates beyond {} bytes",
                self.block_start, self.bound
            ))
            .with_note("no manifest or manifest list holds blocks that large (a compression bomb?)")
    }

    fn cannot_allocate(&self, len: usize, e: std::collections::TryReserveError) -> Error {
        Error::new(
            ErrorKind::Io,
            format!(
                "cannot allocate {len} bytes to inflate the block at byte {} of '{}'",
                self.block_start, self.location
            ),
        )
        .with_source(e)
    }

    /// `out` grown to `len` bytes (zeroed), or an error when memory fails.
    fn grow(&self, out: &mut Vec<u8>, len: usize) -> Result<()> {
        out.try_reserve_exact(len.saturating_sub(out.len()))
            .map_err(|e| self.cannot_allocate(len, e))?;
        out.resize(len, 0);
        Ok(())
    }
}

/// All bytes `decoder` gives, at most `context.bound` of them. They are read into
/// segments (the first 4 times the compressed size, each next one twice the last), never
/// more of them than the bound, then joined into one buffer of the exact size, a segment
/// freed as soon as it is copied: a buffer doubled in place (`read_to_end`) would hold
/// its old and new copies at once, 1.5 times the bound when the bound is reached (a
/// 1 GiB bound took 1.7 GB of memory).
fn read_bounded(
    mut decoder: impl Read,
    compressed_len: usize,
    context: &Inflating,
) -> Result<Vec<u8>> {
    let bound = context.bound;
    let mut segments: Vec<Vec<u8>> = vec![];
    let mut total = 0;
    let mut size = compressed_len.saturating_mul(4).max(4096);
    loop {
        if total >= bound {
            // full at the bound: one byte more is past it
            let mut probe = [0u8; 1];
            if read_some(&mut decoder, &mut probe, context)? > 0 {
                return Err(context.beyond());
            }
            break;
        }
        let mut segment = Vec::new();
        context.grow(&mut segment, size.min(bound - total))?;
        let mut filled = 0;
        while filled < segment.len() {
            let n = read_some(&mut decoder, &mut segment[filled..], context)?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        let ended = filled < segment.len();
        segment.truncate(filled);
        total += filled;
        segments.push(segment);
        if ended {
            break;
        }
        size = size.saturating_mul(2);
    }
    if segments.len() == 1 {
        return Ok(segments.pop().unwrap_or_default());
    }
    let mut out = Vec::new();
    out.try_reserve_exact(total)
        .map_err(|e| context.cannot_allocate(total, e))?;
    for segment in segments {
        out.extend_from_slice(&segment);
    }
    Ok(out)
}

fn read_some(decoder: &mut impl Read, buf: &mut [u8], context: &Inflating) -> Result<usize> {
    loop {
        match decoder.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(context.corrupt().with_source(e)),
        }
    }
}

/// A snappy block: its inflated length is read from its first bytes and checked against
/// the bound before anything is allocated; the CRC-32 after the snappy data is checked
/// (Avro's `SnappyCodec`).
fn inflate_snappy(data: &[u8], context: &Inflating) -> Result<Vec<u8>> {
    let Some(split) = data.len().checked_sub(4) else {
        return Err(context
            .corrupt()
            .with_note("a snappy block shorter than its 4-byte checksum"));
    };
    let (compressed, crc) = data.split_at(split);
    let len =
        snap::raw::decompress_len(compressed).map_err(|e| context.corrupt().with_source(e))?;
    if len > context.bound {
        return Err(context.beyond());
    }
    let mut out = Vec::new();
    context.grow(&mut out, len)?;
    let n = snap::raw::Decoder::new()
        .decompress(compressed, &mut out)
        .map_err(|e| context.corrupt().with_source(e))?;
    out.truncate(n);
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32fast::hash(&out) != expected {
        return Err(context
            .corrupt()
            .with_note("the snappy block's CRC-32 does not match its bytes"));
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::spec) fn deflate(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    pub(in crate::spec) fn snappy(bytes: &[u8]) -> Vec<u8> {
        let mut out = snap::raw::Encoder::new().compress_vec(bytes).unwrap();
        out.extend_from_slice(&crc32fast::hash(bytes).to_be_bytes());
        out
    }

    pub(in crate::spec) fn zstandard(bytes: &[u8]) -> Vec<u8> {
        zstd::stream::encode_all(bytes, 3).unwrap()
    }

    #[test]
    fn the_bound_is_1000_times_the_compressed_size_from_64_mib_to_1_gib() {
        assert_eq!(inflated_bound(0), 64 << 20);
        assert_eq!(inflated_bound(60_000), 64 << 20);
        assert_eq!(inflated_bound(100_000), 100_000_000);
        assert_eq!(inflated_bound(1_073_741), 1_073_741_000);
        assert_eq!(inflated_bound(1_073_742), 1 << 30);
        assert_eq!(inflated_bound(usize::MAX), 1 << 30);
    }

    #[test]
    fn a_block_inflating_past_its_bound_is_an_error_naming_the_file_and_the_block() {
        let records: Vec<u8> = (0..10_000u32).map(|i| (i % 7) as u8).collect();
        for (codec, data) in [
            (BlockCodec::Deflate, deflate(&records)),
            (BlockCodec::Snappy, snappy(&records)),
            (BlockCodec::Zstandard, zstandard(&records)),
        ] {
            // exactly at the bound: read whole, in no more memory than the bound
            let out = inflate(codec, &data, 10_000, "/t/metadata/m.avro", 57).unwrap();
            assert_eq!(out.as_ref(), records.as_slice(), "{codec:?}");
            assert!(
                matches!(&out, Cow::Owned(v) if v.capacity() <= 10_000),
                "{codec:?}"
            );
            // one byte past it
            let err = inflate(codec, &data, 9_999, "/t/metadata/m.avro", 57).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidData, "{codec:?}");
            assert!(
                err.to_string().contains(
                    "block at byte 57 inflates beyond 9999 bytes: corrupt Avro data in \
                     '/t/metadata/m.avro'"
                ),
                "{codec:?}: {err}"
            );
        }
        let data = b"records".to_vec();
        let out = inflate(BlockCodec::Null, &data, 1, "m.avro", 0).unwrap();
        assert!(matches!(out, Cow::Borrowed(b"records")));
    }

    #[test]
    fn corrupt_compressed_data_is_an_error_naming_the_file_and_the_block() {
        let records = vec![7u8; 1000];
        let mut bad_crc = snappy(&records);
        let last = bad_crc.len() - 1;
        bad_crc[last] ^= 1;
        let mut cut_zstd = zstandard(&records);
        cut_zstd.truncate(cut_zstd.len() / 2);
        for (codec, data) in [
            (BlockCodec::Deflate, vec![0xff; 40]),
            (BlockCodec::Zstandard, vec![0xff; 40]),
            (BlockCodec::Zstandard, cut_zstd),
            (BlockCodec::Snappy, vec![0xff; 40]),
            (BlockCodec::Snappy, vec![1, 2, 3]),
            (BlockCodec::Snappy, bad_crc),
        ] {
            let err = inflate(codec, &data, 1 << 20, "/t/metadata/m.avro", 99).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidData, "{codec:?}");
            assert!(
                err.to_string()
                    .contains("block at byte 99: corrupt Avro data in '/t/metadata/m.avro'"),
                "{codec:?}: {err}"
            );
        }
    }

    #[test]
    fn codecs_are_read_by_their_avro_names() {
        let of = |v: Option<&[u8]>| BlockCodec::of_header_value(v, "/t/metadata/m.avro");
        assert_eq!(of(None).unwrap(), BlockCodec::Null);
        assert_eq!(of(Some(b"null")).unwrap(), BlockCodec::Null);
        assert_eq!(of(Some(b"deflate")).unwrap(), BlockCodec::Deflate);
        assert_eq!(of(Some(b"snappy")).unwrap(), BlockCodec::Snappy);
        assert_eq!(of(Some(b"zstandard")).unwrap(), BlockCodec::Zstandard);
        let err = of(Some(b"bzip2")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported);
        assert!(
            err.to_string()
                .contains("'/t/metadata/m.avro': Avro codec 'bzip2'"),
            "{err}"
        );
        let err = of(Some(b"zstd")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidData);
        assert!(
            err.to_string().contains("unknown Avro codec 'zstd'"),
            "{err}"
        );
    }
}
