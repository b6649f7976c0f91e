//! An object store that checks the Parquet footer length of the files it reads for a
//! footer decoder it does not drive itself.
//!
//! DataFusion reads a Parquet file's footer from an object store with its own code
//! (`DFParquetMetadata`, under its Parquet scans and `ParquetFormat::infer_schema`) and
//! hands the bytes to the `parquet` crate's `ParquetMetaDataPushDecoder`, which panics
//! on a footer length field beyond the file (see [`crate::io::parquet_footer`]).
//! [`FooterCheckedStore`] stands between that code and the store: a read of one of its
//! files that ends at the file's end (the footer: the decoder's 8-byte read, or the
//! suffix of `metadata_size_hint` bytes it reads first) is checked with
//! [`check_footer_length`] before the bytes are handed on. A footer that fails is an
//! error of the read, kept for the caller to report by the file's name
//! ([`FooterCheckedStore::corrupt_footer`]). It makes no request of its own, and every
//! other request passes through unchanged.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use super::delegating::delegating_object_store;
use async_trait::async_trait;
use bytes::Bytes;
use datafusion::error::DataFusionError;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

use super::parquet_footer::{check_footer_length, FooterLengthBeyondFile, FOOTER_TAIL_BYTES};

/// A file read through a [`FooterCheckedStore`] whose footer failed the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptFooter {
    /// The file's object path in its store.
    pub path: Path,
    /// What is wrong with its footer.
    pub cause: FooterLengthBeyondFile,
}

impl fmt::Display for CorruptFooter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Parquet file '{}': {}", self.path, self.cause)
    }
}

impl std::error::Error for CorruptFooter {}

/// `inner`, checking the footers of the Parquet files it was given (see the module
/// docs).
#[derive(Debug)]
pub struct FooterCheckedStore {
    inner: Arc<dyn ObjectStore>,
    /// The checked files: object path → size in bytes, as the footer's reader takes it
    /// (the manifest's `file_size_in_bytes`, or the listing's size).
    sizes: HashMap<Path, u64>,
    /// The first footer that failed the check.
    found: Mutex<Option<CorruptFooter>>,
}

impl FooterCheckedStore {
    /// `inner`, checking the footers of `files` (object path and size in bytes).
    pub fn new(inner: Arc<dyn ObjectStore>, files: impl IntoIterator<Item = (Path, u64)>) -> Self {
        Self {
            inner,
            sizes: files.into_iter().collect(),
            found: Mutex::new(None),
        }
    }

    /// `store` checking the footers of `objects` (as listed: their sizes), as itself and
    /// as the store to hand DataFusion's Parquet format (`FileFormat::infer_schema`,
    /// `infer_stats`, …).
    pub fn for_objects(
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> (Arc<Self>, Arc<dyn ObjectStore>) {
        let checked = Arc::new(Self::new(
            Arc::clone(store),
            objects.iter().map(|o| (o.location.clone(), o.size)),
        ));
        let store = Arc::clone(&checked) as Arc<dyn ObjectStore>;
        (checked, store)
    }

    /// `e`, raised reading footers through this store: when a footer failed its check,
    /// an error naming the file instead ([`CorruptFooter`]; DataFusion's wording of the
    /// failed read does not name it).
    pub fn naming_corrupt_footer(&self, e: DataFusionError) -> DataFusionError {
        match self.corrupt_footer() {
            Some(corrupt) => crate::error::Error::invalid_data(corrupt.to_string()).into(),
            None => e,
        }
    }

    /// The first of its files whose footer failed the check, if one did.
    pub fn corrupt_footer(&self) -> Option<CorruptFooter> {
        self.found
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Check `bytes`, read at `range` of `location`, when they end at the end of one of
    /// the checked files.
    fn check(
        &self,
        location: &Path,
        range: &Range<u64>,
        bytes: &Bytes,
    ) -> object_store::Result<()> {
        let Some(&size) = self.sizes.get(location) else {
            return Ok(());
        };
        if range.end != size || (bytes.len() as u64) < FOOTER_TAIL_BYTES {
            return Ok(());
        }
        check_footer_length(bytes, size).map_err(|cause| {
            let corrupt = CorruptFooter {
                path: location.clone(),
                cause,
            };
            let mut found = self
                .found
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            found.get_or_insert_with(|| corrupt.clone());
            object_store::Error::Generic {
                store: "Parquet footer",
                source: Box::new(corrupt),
            }
        })
    }
}

impl fmt::Display for FooterCheckedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FooterChecked({})", self.inner)
    }
}

delegating_object_store! {
    impl for FooterCheckedStore, inner,
    delegate [put_opts, put_multipart_opts, delete_stream, list, list_with_offset, list_with_delimiter, copy_opts, rename_opts],
    {
        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            let checked = !options.head && options.range.is_some() && self.sizes.contains_key(location);
            let result = self.inner.get_opts(location, options).await?;
            if !checked || Some(&result.range.end) != self.sizes.get(location) {
                return Ok(result);
            }
            // a ranged read of the file's end: small (a footer), so held to be checked
            let (meta, range, attributes) = (
                result.meta.clone(),
                result.range.clone(),
                result.attributes.clone(),
            );
            let body = result.bytes().await?;
            self.check(location, &range, &body)?;
            Ok(GetResult {
                payload: GetResultPayload::Stream(futures::stream::once(async { Ok(body) }).boxed()),
                meta,
                range,
                attributes,
            })
        }

        async fn get_ranges(
            &self,
            location: &Path,
            ranges: &[Range<u64>],
        ) -> object_store::Result<Vec<Bytes>> {
            let all = self.inner.get_ranges(location, ranges).await?;
            for (range, bytes) in ranges.iter().zip(&all) {
                self.check(location, range, bytes)?;
            }
            Ok(all)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use object_store::ObjectStoreExt;

    /// A 30-byte "file" ending in a footer whose length field is `length`.
    fn file(length: u32) -> Bytes {
        let mut bytes = vec![0u8; 22];
        bytes.extend_from_slice(&length.to_le_bytes());
        bytes.extend_from_slice(b"PAR1");
        Bytes::from(bytes)
    }

    async fn store_with(length: u32) -> (FooterCheckedStore, Path) {
        let inner = Arc::new(InMemory::new());
        let path = Path::from("d/f.parquet");
        inner.put(&path, file(length).into()).await.expect("put");
        (FooterCheckedStore::new(inner, [(path.clone(), 30)]), path)
    }

    #[tokio::test]
    async fn a_footer_length_inside_the_file_passes() {
        // 22 bytes of metadata + 8 = the whole file
        let (store, path) = store_with(22).await;
        assert_eq!(
            store
                .get_ranges(&path, std::slice::from_ref(&(22..30)))
                .await
                .expect("read")
                .len(),
            1
        );
        assert_eq!(store.get_range(&path, 0..30).await.expect("read").len(), 30);
        assert_eq!(store.corrupt_footer(), None);
    }

    #[tokio::test]
    async fn a_footer_length_beyond_the_file_fails_every_read_of_the_end() {
        let (store, path) = store_with(23).await;
        let corrupt = CorruptFooter {
            path: path.clone(),
            cause: FooterLengthBeyondFile {
                metadata_length: 23,
                file_size: 30,
            },
        };
        // the decoder's 8-byte read and a metadata_size_hint suffix, ranges and range
        for e in [
            store
                .get_ranges(&path, &[0..4, 22..30])
                .await
                .expect_err("8 bytes"),
            store.get_range(&path, 10..30).await.expect_err("suffix"),
        ] {
            assert_eq!(
                e.to_string(),
                format!("Generic Parquet footer error: {corrupt}")
            );
        }
        assert_eq!(store.corrupt_footer(), Some(corrupt));
        assert_eq!(
            store.corrupt_footer().map(|c| c.to_string()),
            Some(
                "Parquet file 'd/f.parquet': its footer gives a metadata length of 23 bytes, \
                 more than the 30-byte file holds (corrupt footer)"
                    .to_string()
            )
        );
        // reads not ending at the end are not footers
        assert_eq!(store.get_range(&path, 0..29).await.expect("read").len(), 29);
    }

    #[tokio::test]
    async fn files_it_was_not_given_and_non_parquet_tails_pass() {
        let (store, _) = store_with(u32::MAX).await;
        let other = Path::from("d/other.parquet");
        store.put(&other, file(u32::MAX).into()).await.expect("put");
        assert!(store.get_range(&other, 22..30).await.is_ok());
        let (store, path) = store_with(u32::MAX).await;
        let mut text = file(u32::MAX).to_vec();
        text[26..].copy_from_slice(b"text");
        store
            .put(&path, Bytes::from(text).into())
            .await
            .expect("put");
        assert!(store
            .get_ranges(&path, std::slice::from_ref(&(22..30)))
            .await
            .is_ok());
        assert_eq!(store.corrupt_footer(), None);
    }
}
