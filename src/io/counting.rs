//! Counting the requests a reader makes of an object store.
//!
//! [`CountingStore`] wraps any `ObjectStore` and reports each request to a
//! [`RequestObserver`] before handing the answer on: a GET (whole object or byte range)
//! with the bytes its answer carries, a HEAD, a LIST (one per `list`,
//! `list_with_offset` or `list_with_delimiter` call; a paginated listing counts once), a
//! PUT (whole object or one multipart upload). Counts are of requests *answered*
//! (failed requests are not counted).
//!
//! Ranged reads of several ranges (`get_ranges`) are counted as object_store's S3, GCS
//! and Azure clients make them: ranges less than 1 MiB apart
//! ([`OBJECT_STORE_COALESCE_DEFAULT`]) become one request, counted with the bytes it
//! spans, so a local table counts the requests the same table on S3 would make. On a
//! remote store they go through object_store's `coalesce_ranges` over this store's own
//! `get_range`, so each coalesced request is counted as it is answered. A store that
//! reads each range as asked ([`CountingStore::reading_ranges_exactly`], the local file
//! system) is handed the ranges themselves, and the coalesced requests are counted
//! without being made: coalescing there would read the gaps between the ranges too
//! (for TPC-H `lineitem` with four of its sixteen columns, 84 % more bytes) and slice
//! every range out of a copy. [`RequestCounts`] is an observer that keeps totals
//! (atomics, shared by clones of its `Arc`).

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::delegating::delegating_object_store;
use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
    OBJECT_STORE_COALESCE_DEFAULT,
};

/// One request made of an object store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreRequest {
    /// A GET of a whole object or a byte range; `bytes` is the length of the answer's
    /// body (the range it covers).
    Get {
        /// Bytes in the answer.
        bytes: u64,
    },
    /// A HEAD (object metadata only).
    Head,
    /// A LIST of a prefix.
    List,
    /// A PUT of a whole object, or the start of a multipart upload.
    Put,
}

/// Told of every request a [`CountingStore`] makes.
pub trait RequestObserver: fmt::Debug + Send + Sync {
    /// One request was answered.
    fn observe(&self, request: StoreRequest);
}

/// Request totals (an observer whose counts can be read at any time).
#[derive(Debug, Default)]
pub struct RequestCounts {
    gets: AtomicU64,
    heads: AtomicU64,
    lists: AtomicU64,
    puts: AtomicU64,
    bytes_read: AtomicU64,
}

/// The totals of a [`RequestCounts`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestTotals {
    /// GET requests (whole or ranged).
    pub gets: u64,
    /// HEAD requests.
    pub heads: u64,
    /// LIST requests.
    pub lists: u64,
    /// PUT requests (and multipart uploads started).
    pub puts: u64,
    /// Bytes in the GET answers.
    pub bytes_read: u64,
}

impl RequestCounts {
    /// The totals so far.
    pub fn totals(&self) -> RequestTotals {
        RequestTotals {
            gets: self.gets.load(Ordering::Relaxed),
            heads: self.heads.load(Ordering::Relaxed),
            lists: self.lists.load(Ordering::Relaxed),
            puts: self.puts.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
        }
    }
}

impl RequestObserver for RequestCounts {
    fn observe(&self, request: StoreRequest) {
        let counter = match request {
            StoreRequest::Get { bytes } => {
                self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
                &self.gets
            }
            StoreRequest::Head => &self.heads,
            StoreRequest::List => &self.lists,
            StoreRequest::Put => &self.puts,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// An object store that reports every request to an observer (see the module docs).
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    observer: Arc<dyn RequestObserver>,
    /// Whether `inner` reads each range of a `get_ranges` as asked, without coalescing.
    exact_ranges: bool,
}

impl CountingStore {
    /// `inner`, with its requests reported to `observer`.
    pub fn new(inner: Arc<dyn ObjectStore>, observer: Arc<dyn RequestObserver>) -> Self {
        Self {
            inner,
            observer,
            exact_ranges: false,
        }
    }

    /// This store, for an `inner` store whose `get_ranges` reads each range as asked
    /// (object_store's `LocalFileSystem`): it is handed the ranges as they are, and the
    /// requests a cloud store would make are counted (see the module docs).
    pub fn reading_ranges_exactly(mut self) -> Self {
        self.exact_ranges = true;
        self
    }
}

/// The requests object_store's cloud clients make for `ranges`: sorted, and joined
/// when less than `coalesce` bytes apart (or overlapping).
fn coalesced_requests(ranges: &[Range<u64>], coalesce: u64) -> Vec<Range<u64>> {
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable_by_key(|r| r.start);
    let mut requests: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for range in sorted {
        match requests.last_mut() {
            Some(last) if range.start.saturating_sub(last.end) <= coalesce => {
                last.end = last.end.max(range.end);
            }
            _ => requests.push(range),
        }
    }
    requests
}

impl fmt::Display for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Counting({})", self.inner)
    }
}

delegating_object_store! {
    impl for CountingStore, inner,
    delegate [delete_stream, copy_opts, rename_opts],
    {
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            let result = self.inner.put_opts(location, payload, opts).await?;
            self.observer.observe(StoreRequest::Put);
            Ok(result)
        }

        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            let upload = self.inner.put_multipart_opts(location, opts).await?;
            self.observer.observe(StoreRequest::Put);
            Ok(upload)
        }

        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            let head = options.head;
            let result = self.inner.get_opts(location, options).await?;
            self.observer.observe(if head {
                StoreRequest::Head
            } else {
                StoreRequest::Get {
                    bytes: result.range.end.saturating_sub(result.range.start),
                }
            });
            Ok(result)
        }

        async fn get_ranges(
            &self,
            location: &Path,
            ranges: &[Range<u64>],
        ) -> object_store::Result<Vec<Bytes>> {
            if self.exact_ranges {
                // object_store's local file system panics (its reading thread) on a range
                // that ends before it starts; the coalescing path answers an error for it
                if let Some(r) = ranges.iter().find(|r| r.start > r.end) {
                    return Err(object_store::Error::Generic {
                        store: "CountingStore",
                        source: format!("byte range {}..{} ends before it starts", r.start, r.end)
                            .into(),
                    });
                }
                let all = self.inner.get_ranges(location, ranges).await?;
                for request in coalesced_requests(ranges, OBJECT_STORE_COALESCE_DEFAULT) {
                    self.observer.observe(StoreRequest::Get {
                        bytes: request.end.saturating_sub(request.start),
                    });
                }
                return Ok(all);
            }
            use object_store::ObjectStoreExt;
            object_store::coalesce_ranges(
                ranges,
                |range| self.get_range(location, range),
                OBJECT_STORE_COALESCE_DEFAULT,
            )
            .await
        }

        fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.observer.observe(StoreRequest::List);
            self.inner.list(prefix)
        }

        fn list_with_offset(
            &self,
            prefix: Option<&Path>,
            offset: &Path,
        ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.observer.observe(StoreRequest::List);
            self.inner.list_with_offset(prefix, offset)
        }

        async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
            let result = self.inner.list_with_delimiter(prefix).await?;
            self.observer.observe(StoreRequest::List);
            Ok(result)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use object_store::memory::InMemory;
    use object_store::ObjectStoreExt;

    #[tokio::test]
    async fn counts_each_request_and_the_bytes_answered() {
        let counts = Arc::new(RequestCounts::default());
        let store = CountingStore::new(
            Arc::new(InMemory::new()),
            Arc::clone(&counts) as Arc<dyn RequestObserver>,
        );
        let path = Path::from("t/data/a.parquet");
        store
            .put(&path, Bytes::from(vec![7u8; 3 * 1024 * 1024]).into())
            .await
            .unwrap();
        assert_eq!(
            store.get(&path).await.unwrap().bytes().await.unwrap().len(),
            3 << 20
        );
        store.head(&path).await.unwrap();
        assert_eq!(store.get_range(&path, 10..110).await.unwrap().len(), 100);
        // 0..10 and 20..30 coalesce into one GET of 0..30; 2.5 MiB on is another GET
        let got = store
            .get_ranges(&path, &[0..10, 20..30, 2_621_440..2_621_450])
            .await
            .unwrap();
        assert_eq!(got.iter().map(Bytes::len).collect::<Vec<_>>(), [10, 10, 10]);
        let listed: Vec<_> = store.list(Some(&Path::from("t"))).collect().await;
        assert_eq!(listed.len(), 1);
        store
            .list_with_delimiter(Some(&Path::from("t")))
            .await
            .unwrap();
        // a failed GET is not counted
        assert!(store.get(&Path::from("t/missing")).await.is_err());
        assert_eq!(
            counts.totals(),
            RequestTotals {
                gets: 4,
                heads: 1,
                lists: 2,
                puts: 1,
                bytes_read: (3 << 20) + 100 + 30 + 10,
            }
        );
    }

    /// A store that records the ranges `get_ranges` is handed.
    #[derive(Debug, Default)]
    struct RangesSeen {
        inner: InMemory,
        seen: std::sync::Mutex<Vec<Vec<Range<u64>>>>,
    }

    impl fmt::Display for RangesSeen {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "RangesSeen")
        }
    }

    #[async_trait]
    impl ObjectStore for RangesSeen {
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            self.inner.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            self.inner.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            self.inner.get_opts(location, options).await
        }
        async fn get_ranges(
            &self,
            location: &Path,
            ranges: &[Range<u64>],
        ) -> object_store::Result<Vec<Bytes>> {
            self.seen.lock().unwrap().push(ranges.to_vec());
            self.inner.get_ranges(location, ranges).await
        }
        fn delete_stream(
            &self,
            locations: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            self.inner.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&Path>,
        ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&Path>,
        ) -> object_store::Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    #[tokio::test]
    async fn exact_ranges_are_read_as_asked_and_counted_as_a_cloud_store_would_request_them() {
        let inner = Arc::new(RangesSeen::default());
        let path = Path::from("t/data/a.parquet");
        let data: Vec<u8> = (0..3 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
        inner
            .put(&path, Bytes::from(data.clone()).into())
            .await
            .unwrap();
        let counts = Arc::new(RequestCounts::default());
        let store = CountingStore::new(
            Arc::clone(&inner) as Arc<dyn ObjectStore>,
            Arc::clone(&counts) as Arc<dyn RequestObserver>,
        )
        .reading_ranges_exactly();
        let ranges = [20..30, 0..10, 2_621_440..2_621_450, 25..40];
        let got = store.get_ranges(&path, &ranges).await.unwrap();
        for (range, bytes) in ranges.iter().zip(&got) {
            let (s, e) = (range.start as usize, range.end as usize);
            assert_eq!(bytes.as_ref(), &data[s..e], "{range:?}");
        }
        // the inner store got the ranges themselves, not the coalesced requests
        assert_eq!(*inner.seen.lock().unwrap(), vec![ranges.to_vec()]);
        // counted: 0..40 (three ranges less than 1 MiB apart) and 2.5 MiB on
        assert_eq!(
            counts.totals(),
            RequestTotals {
                gets: 2,
                bytes_read: 40 + 10,
                ..RequestTotals::default()
            }
        );
        // the same ranges through the coalescing path count the same
        let remote_counts = Arc::new(RequestCounts::default());
        let remote = CountingStore::new(
            Arc::clone(&inner) as Arc<dyn ObjectStore>,
            Arc::clone(&remote_counts) as Arc<dyn RequestObserver>,
        );
        let again = remote.get_ranges(&path, &ranges).await.unwrap();
        assert_eq!(again, got);
        assert_eq!(remote_counts.totals(), counts.totals());
    }

    /// A file of `len` bytes (`i % 251`) on the local file system, and the store over
    /// it both ways: exact (as `FileIO` builds it for `file://`) and coalescing.
    async fn local_pair(
        dir: &tempfile::TempDir,
        len: usize,
    ) -> (
        Path,
        Vec<u8>,
        CountingStore,
        Arc<RequestCounts>,
        CountingStore,
        Arc<RequestCounts>,
    ) {
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let file = dir.path().join("a.parquet");
        std::fs::write(&file, &data).unwrap();
        let path = Path::from_absolute_path(&file).unwrap();
        let local: Arc<dyn ObjectStore> = Arc::new(object_store::local::LocalFileSystem::new());
        let exact_counts = Arc::new(RequestCounts::default());
        let exact = CountingStore::new(
            Arc::clone(&local),
            Arc::clone(&exact_counts) as Arc<dyn RequestObserver>,
        )
        .reading_ranges_exactly();
        let remote_counts = Arc::new(RequestCounts::default());
        let remote = CountingStore::new(
            local,
            Arc::clone(&remote_counts) as Arc<dyn RequestObserver>,
        );
        (path, data, exact, exact_counts, remote, remote_counts)
    }

    /// Overlapping, unsorted, duplicate, nested, adjacent and zero-length ranges (within
    /// the file) read from the local file system: the exact path answers each range's
    /// bytes, as the coalescing path does, and counts the same requests.
    #[tokio::test]
    async fn exact_ranges_on_the_local_file_system_agree_with_coalescing() {
        let dir = tempfile::tempdir().unwrap();
        let len = 5 * 1024 * 1024 + 17;
        let (path, data, exact, exact_counts, remote, remote_counts) = local_pair(&dir, len).await;
        let len = len as u64;
        let cases: Vec<Vec<Range<u64>>> = vec![
            vec![],
            vec![0..len],
            vec![len - 1..len],
            vec![30..40, 0..10, 5..35, 0..10, 0..10],
            vec![100..200, 120..150, 4_000_000..4_000_100, 200..300],
            // exactly 1 MiB apart (joined) and one byte more (not)
            vec![0..10, 10 + (1 << 20)..20 + (1 << 20)],
            vec![0..10, 11 + (1 << 20)..20 + (1 << 20)],
            vec![
                3_000_000..3_000_010,
                10..20,
                2_000_000..2_000_001,
                len - 5..len,
            ],
            // a zero-length range between two others
            vec![10..20, 15..15, 30..40],
        ];
        // and random ones (xorshift, fixed seed): up to 8 ranges of up to 1.5 MiB,
        // anywhere in the file, some overlapping, some more than 1 MiB apart
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut cases = cases;
        for _ in 0..60 {
            let n = 1 + next(8);
            let ranges = (0..n)
                .map(|_| {
                    let start = next(len);
                    start..(start + 1 + next(3 << 19)).min(len)
                })
                .collect();
            cases.push(ranges);
        }
        for ranges in cases {
            let got = exact.get_ranges(&path, &ranges).await.unwrap();
            assert_eq!(got.len(), ranges.len(), "{ranges:?}");
            for (range, bytes) in ranges.iter().zip(&got) {
                let (s, e) = (range.start as usize, range.end as usize);
                assert_eq!(bytes.as_ref(), &data[s..e], "{range:?} of {ranges:?}");
            }
            let again = remote.get_ranges(&path, &ranges).await.unwrap();
            assert_eq!(again, got, "{ranges:?}");
            assert_eq!(exact_counts.totals(), remote_counts.totals(), "{ranges:?}");
        }
    }

    /// Errors of the inner store surface from the exact path, and nothing is counted
    /// for them: a missing file, a range starting past the end of the file, and a range
    /// whose start is after its end (an error, as on the coalescing path, not a panic
    /// of the local file system's reading thread).
    #[tokio::test]
    async fn exact_ranges_surface_the_errors_of_the_inner_store() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _, exact, exact_counts, remote, _) = local_pair(&dir, 1000).await;
        let missing = Path::from_absolute_path(dir.path().join("missing.parquet")).unwrap();
        let range = |start: u64, end: u64| Range { start, end };
        let err = exact
            .get_ranges(&missing, &[range(0, 10)])
            .await
            .unwrap_err();
        assert!(matches!(err, object_store::Error::NotFound { .. }), "{err}");
        assert!(exact.get_ranges(&path, &[range(2000, 2010)]).await.is_err());
        // a range whose start is after its end
        let reversed = range(20, 10);
        assert!(remote
            .get_ranges(&path, std::slice::from_ref(&reversed))
            .await
            .is_err());
        let err = exact
            .get_ranges(&path, &[range(0, 10), reversed])
            .await
            .unwrap_err();
        assert!(
            !matches!(err, object_store::Error::JoinError { .. }),
            "a reversed range panicked the reading thread: {err}"
        );
        assert!(
            err.to_string()
                .contains("byte range 20..10 ends before it starts"),
            "{err}"
        );
        assert_eq!(exact_counts.totals(), RequestTotals::default());
    }
}
