//! The retries FileIO adds to object_store's own for requests that got no HTTP answer.
//!
//! object_store retries a transport failure only when it knows the request was not sent,
//! or when the request is idempotent and the failure is a timeout or a cut connection.
//! Other transport failures (a garbled or missing answer, an error the HTTP client does
//! not classify) come back at once. FileIO tries whole-file reads and writes again after
//! such a failure; answers from the store (a status: 404, 403, 412, a 5xx after
//! object_store's own retries) are final.

use std::future::Future;
use std::time::Duration;

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
}
