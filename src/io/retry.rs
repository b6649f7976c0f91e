//! The retries FileIO adds to object_store's own for requests that got no HTTP answer.
//!
//! object_store retries a transport failure only when it knows the request was not sent,
//! or when the request is idempotent and the failure is a timeout or a cut connection.
//! Other transport failures (a garbled or missing answer, an error the HTTP client does
//! not classify) come back at once. FileIO tries writes again after such a failure, and
//! every read of a cloud store ([`RetryingRequests`]: whole files, and the ranged reads of
//! DataFusion's Parquet scan), and every single-request overwrite `PUT` through it (the
//! data files DataFusion's writers upload whole); answers from the store (a status: 404,
//! 403, 412, a 5xx after object_store's own retries) are final.

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use super::delegating::delegating_object_store;
use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

/// Attempts of a request that failed in transport: the first and two more.
const ATTEMPTS: u32 = 3;

/// The wait before the second attempt, doubled before each later one (ms).
const FIRST_BACKOFF_MS: u64 = 50;

/// Run `request` until it succeeds, fails with an answer from the store, or has failed
/// in transport [`ATTEMPTS`] times, waiting 50 ms, then 100 ms between attempts.
pub(super) async fn retrying<T, F, Fut>(mut request: F) -> Result<T, object_store::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, object_store::Error>>,
{
    let mut attempt = 1;
    loop {
        match request().await {
            Err(e) if attempt < ATTEMPTS && is_transport_failure(&e) => {
                backoff(attempt).await;
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// Wait before attempt `attempt + 1` (`attempt` ≥ 1): 50 ms, then 100 ms.
async fn backoff(attempt: u32) {
    let ms = FIRST_BACKOFF_MS << attempt.saturating_sub(1).min(6);
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// Whether `e` is a request that got no HTTP answer (a transport failure object_store
/// gave up on), rather than an answer from the store.
#[cfg(feature = "cloud")]
fn is_transport_failure(e: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err
            .downcast_ref::<object_store::client::HttpError>()
            .is_some()
        {
            return true;
        }
        source = err.source();
    }
    false
}

/// Without the cloud stores, no store speaks HTTP.
#[cfg(not(feature = "cloud"))]
fn is_transport_failure(_: &object_store::Error) -> bool {
    false
}

/// A cloud store whose reads (and overwrite `PUT`s, below) are tried again after a
/// transport failure ([`retrying`]):
/// the ranged `GET`s of DataFusion's Parquet scan (footers, column chunks) go through
/// it, so a garbled or lost answer to one of them no longer fails the query. A `GET`'s
/// body is read whole inside the retry (a cut in the body is a transport failure too),
/// so each answer is held in memory once read, as the Parquet reader holds it anyway.
/// A `PUT` in `Overwrite` mode is tried again too: the same whole payload to the same key,
/// so a second attempt after a lost answer leaves the object as one attempt would (a
/// data file a writer uploads in one request, e.g. through object_store's `BufWriter`).
/// Conditional `PUT`s (`Create`, `Update`: a retry could meet its own first attempt),
/// multipart uploads, lists and deletes pass through unchanged (FileIO retries its own
/// create-if-absent writes, `FileIO::write_new`).
#[derive(Debug)]
pub(crate) struct RetryingRequests {
    inner: Arc<dyn ObjectStore>,
}

impl RetryingRequests {
    /// Reads of `inner` with retries.
    pub(crate) fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self { inner }
    }
}

impl fmt::Display for RetryingRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RetryingRequests({})", self.inner)
    }
}

delegating_object_store! {
    impl for RetryingRequests, inner,
    delegate [put_multipart_opts, delete_stream, list, list_with_offset, list_with_delimiter, copy_opts, rename_opts],
    {
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            if matches!(opts.mode, object_store::PutMode::Overwrite) {
                return retrying(|| self.inner.put_opts(location, payload.clone(), opts.clone())).await;
            }
            self.inner.put_opts(location, payload, opts).await
        }

        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            retrying(|| async {
                let result = self.inner.get_opts(location, options.clone()).await?;
                let (meta, range, attributes) = (
                    result.meta.clone(),
                    result.range.clone(),
                    result.attributes.clone(),
                );
                let body = result.bytes().await?;
                Ok(GetResult {
                    payload: GetResultPayload::Stream(
                        futures::stream::once(async { Ok(body) }).boxed(),
                    ),
                    meta,
                    range,
                    attributes,
                })
            })
            .await
        }

        async fn get_ranges(
            &self,
            location: &Path,
            ranges: &[Range<u64>],
        ) -> object_store::Result<Vec<Bytes>> {
            retrying(|| self.inner.get_ranges(location, ranges)).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_from_the_store_is_not_a_transport_failure() {
        let e = object_store::Error::NotFound {
            path: "x".into(),
            source: "gone".into(),
        };
        assert!(!is_transport_failure(&e));
    }

    /// A store holding `flaky` (ten bytes) whose answers are cut in the body (a
    /// transport failure) the first `cuts` times; any other path is not found. Counts
    /// the requests it answers.
    #[cfg(feature = "cloud")]
    #[derive(Debug)]
    struct Flaky {
        cuts: std::sync::atomic::AtomicU32,
        requests: std::sync::atomic::AtomicU32,
        /// The payloads of the `PUT`s that went through.
        put: std::sync::Mutex<Vec<Bytes>>,
    }

    /// A [`Flaky`] store that cuts its first `cuts` answers, behind [`RetryingRequests`].
    #[cfg(feature = "cloud")]
    fn flaky(cuts: u32) -> (RetryingRequests, Arc<Flaky>) {
        let inner = Arc::new(Flaky {
            cuts: std::sync::atomic::AtomicU32::new(cuts),
            requests: std::sync::atomic::AtomicU32::new(0),
            put: std::sync::Mutex::new(vec![]),
        });
        (RetryingRequests::new(inner.clone()), inner)
    }

    #[cfg(feature = "cloud")]
    impl fmt::Display for Flaky {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "Flaky")
        }
    }

    #[cfg(feature = "cloud")]
    #[async_trait]
    impl ObjectStore for Flaky {
        /// A `PUT` of `flaky` is cut (no answer) the first `cuts` times, else stored
        /// in `put`; any other path is not found.
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            _: PutOptions,
        ) -> object_store::Result<PutResult> {
            use std::sync::atomic::Ordering;
            self.requests.fetch_add(1, Ordering::SeqCst);
            if location.as_ref() != "flaky" {
                return Err(object_store::Error::NotFound {
                    path: location.to_string(),
                    source: "no such key".into(),
                });
            }
            let cut = self
                .cuts
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if cut {
                let lost = object_store::client::HttpError::new(
                    object_store::client::HttpErrorKind::Unknown,
                    std::io::Error::other("error sending request"),
                );
                return Err(object_store::Error::Generic {
                    store: "Flaky",
                    source: Box::new(lost),
                });
            }
            if let Ok(mut put) = self.put.lock() {
                put.push(Bytes::from(payload));
            }
            Ok(PutResult {
                e_tag: None,
                version: None,
            })
        }

        async fn put_multipart_opts(
            &self,
            _: &Path,
            _: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            Err(object_store::Error::NotImplemented {
                operation: "put".into(),
                implementer: "Flaky".into(),
            })
        }

        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            use std::sync::atomic::Ordering;
            self.requests.fetch_add(1, Ordering::SeqCst);
            if location.as_ref() != "flaky" {
                return Err(object_store::Error::NotFound {
                    path: location.to_string(),
                    source: "no such key".into(),
                });
            }
            let body = Bytes::from_static(b"0123456789");
            let range = match options.range {
                Some(object_store::GetRange::Bounded(r)) => r,
                _ => 0..body.len() as u64,
            };
            let part = body.slice(range.start as usize..range.end as usize);
            let cut = !options.head
                && self
                    .cuts
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
            let chunks: Vec<object_store::Result<Bytes>> = if options.head {
                vec![]
            } else if cut {
                let interrupted = object_store::client::HttpError::new(
                    object_store::client::HttpErrorKind::Interrupted,
                    std::io::Error::other("connection reset"),
                );
                vec![
                    Ok(part.slice(..part.len() / 2)),
                    Err(object_store::Error::Generic {
                        store: "Flaky",
                        source: Box::new(interrupted),
                    }),
                ]
            } else {
                vec![Ok(part)]
            };
            Ok(GetResult {
                payload: GetResultPayload::Stream(futures::stream::iter(chunks).boxed()),
                meta: ObjectMeta {
                    location: location.clone(),
                    last_modified: chrono::Utc::now(),
                    size: body.len() as u64,
                    e_tag: None,
                    version: None,
                },
                range,
                attributes: Default::default(),
            })
        }

        fn delete_stream(
            &self,
            locations: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            locations
        }

        fn list(&self, _: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            futures::stream::empty().boxed()
        }

        async fn list_with_delimiter(&self, _: Option<&Path>) -> object_store::Result<ListResult> {
            Ok(ListResult {
                common_prefixes: vec![],
                objects: vec![],
            })
        }

        async fn copy_opts(&self, _: &Path, _: &Path, _: CopyOptions) -> object_store::Result<()> {
            Ok(())
        }
    }

    /// Reads through [`RetryingRequests`]: a body cut twice is read on the third attempt
    /// (whole files, ranges, several ranges); a cut three times fails as a transport
    /// failure; `HEAD` reads no body; NotFound is final, asked once, and stays NotFound.
    #[cfg(feature = "cloud")]
    #[tokio::test]
    async fn reads_are_tried_again_after_a_cut_and_answers_are_final() {
        use object_store::ObjectStoreExt;
        use std::sync::atomic::Ordering;

        let path = Path::from("flaky");
        let (store, inner) = flaky(2);
        let whole = store.get(&path).await.expect("get").bytes().await;
        assert_eq!(whole.expect("body").as_ref(), b"0123456789");
        assert_eq!(inner.requests.load(Ordering::SeqCst), 3);
        let (store, inner) = flaky(2);
        let range = store.get_range(&path, 2..6).await.expect("range");
        assert_eq!(range.as_ref(), b"2345");
        assert_eq!(inner.requests.load(Ordering::SeqCst), 3);
        let (store, _) = flaky(1);
        let ranges = store.get_ranges(&path, &[0..1, 8..10]).await;
        assert_eq!(ranges.expect("ranges"), [&b"0"[..], &b"89"[..]]);
        let (store, inner) = flaky(3);
        let err = store.get_range(&path, 0..4).await.expect_err("cut 3 times");
        assert!(is_transport_failure(&err), "{err}");
        assert_eq!(inner.requests.load(Ordering::SeqCst), ATTEMPTS);

        let (store, inner) = flaky(0);
        let meta = store.head(&path).await.expect("head");
        assert_eq!(meta.size, 10);
        let missing = Path::from("missing");
        for err in [
            store.head(&missing).await.expect_err("head"),
            store.get(&missing).await.map(|_| ()).expect_err("get"),
            store
                .get_range(&missing, 0..1)
                .await
                .map(|_| ())
                .expect_err("range"),
        ] {
            assert!(matches!(err, object_store::Error::NotFound { .. }), "{err}");
        }
        assert_eq!(inner.requests.load(Ordering::SeqCst), 4, "each asked once");
    }

    /// `PUT`s through [`RetryingRequests`]: an overwrite whose answer was lost twice lands on
    /// the third attempt, once, with its payload; lost three times it fails as a transport
    /// failure; a conditional `PUT` (`Create`) is not tried again; NotFound is final.
    #[cfg(feature = "cloud")]
    #[tokio::test]
    async fn overwrite_puts_are_tried_again_after_a_lost_answer_and_conditional_ones_not() {
        use object_store::{ObjectStoreExt, PutMode};
        use std::sync::atomic::Ordering;

        let path = Path::from("flaky");
        let stored = |inner: &Flaky| inner.put.lock().map(|p| p.clone()).unwrap_or_default();

        let (store, inner) = flaky(2);
        store
            .put(&path, PutPayload::from_static(b"data file"))
            .await
            .expect("put after two lost answers");
        assert_eq!(inner.requests.load(Ordering::SeqCst), 3);
        assert_eq!(stored(&inner), [Bytes::from_static(b"data file")]);

        let (store, inner) = flaky(3);
        let err = store
            .put(&path, PutPayload::from_static(b"x"))
            .await
            .expect_err("lost three times");
        assert!(is_transport_failure(&err), "{err}");
        assert_eq!(inner.requests.load(Ordering::SeqCst), ATTEMPTS);
        assert!(stored(&inner).is_empty());

        let (store, inner) = flaky(1);
        let create = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        let err = store
            .put_opts(&path, PutPayload::from_static(b"x"), create)
            .await
            .expect_err("a conditional put is not tried again");
        assert!(is_transport_failure(&err), "{err}");
        assert_eq!(inner.requests.load(Ordering::SeqCst), 1);

        let (store, inner) = flaky(0);
        let err = store
            .put(&Path::from("missing"), PutPayload::from_static(b"x"))
            .await
            .expect_err("not found");
        assert!(matches!(err, object_store::Error::NotFound { .. }), "{err}");
        assert_eq!(inner.requests.load(Ordering::SeqCst), 1, "asked once");
    }
}
