//! The HTTP side of the REST catalog: one `reqwest` client (rustls), the
//! `Authorization` and custom headers on every request, JSON bodies, retries with
//! backoff for idempotent requests answered 429 or 503, and the REST `ErrorModel`
//! (`{"error": {"message", "type", "code"}}`) turned into the crate's error kinds.
//!
//! | HTTP answer | kind |
//! |---|---|
//! | 400, 422 | `InvalidArgument` |
//! | 401, 403 (after one token refresh) | `PermissionDenied` |
//! | 404 | `NotFound` |
//! | 409 | `AlreadyExists` (the commit path maps it to `CommitConflict`, dropping a namespace to `InvalidArgument`: not empty; see [`HttpError::rekinded`]) |
//! | 429, 503 (retries spent), other 5xx | `Io` (the commit path: `CommitStateUnknown`) |
//! | no answer (refused, timed out) | `Io`, naming the URL |
//!
//! Messages name the method and URL and carry the server's message; request bodies,
//! tokens and credentials are never part of them.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use url::Url;

use super::auth::Auth;
use super::config::RestConfig;
use crate::error::{Error, ErrorKind, Result};

/// Attempts for an idempotent request answered 429/503 (the first included).
const MAX_ATTEMPTS: u32 = 4;
/// The first backoff wait; doubled per retry.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// A REST `ErrorModel`.
#[derive(Debug, Deserialize)]
struct ErrorResponse {
    error: ErrorModel,
}

#[derive(Debug, Deserialize)]
struct ErrorModel {
    #[serde(default)]
    message: String,
    #[serde(default, rename = "type")]
    error_type: String,
}

/// A failed request: the error, and the HTTP status when the server answered.
#[derive(Debug)]
pub struct HttpError {
    /// The status, `None` when no answer came.
    pub status: Option<StatusCode>,
    /// The server's error `type` (e.g. `CommitFailedException`), when it sent one.
    pub error_type: String,
    /// The error for the caller.
    pub error: Error,
}

impl HttpError {
    /// The server's answer as an error of `kind` after `context`, for a status whose
    /// meaning the caller knows (a 409 to dropping a namespace: it is not empty; to a
    /// commit: a conflict). The message carries the method, URL and the server's
    /// message, but not the generic kind of the status ("already exists" for every
    /// 409), which would contradict `kind`.
    pub fn rekinded(self, kind: ErrorKind, context: impl std::fmt::Display) -> Error {
        Error::new(kind, format!("{context}: {}", self.error.message()))
    }
}

impl From<HttpError> for Error {
    fn from(e: HttpError) -> Self {
        e.error
    }
}

/// The client: base URL, headers, authentication.
#[derive(Debug)]
pub struct RestClient {
    client: reqwest::Client,
    auth: Auth,
    headers: Vec<(String, String)>,
}

impl RestClient {
    /// A client for `config`.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] for a bad header or auth property.
    pub fn new(config: &RestConfig) -> Result<Self> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .build()
            .map_err(|e| {
                Error::invalid_argument("cannot build the REST catalog's HTTP client")
                    .with_source(e)
            })?;
        let headers = config.headers();
        for (name, value) in &headers {
            reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .ok()
                .zip(reqwest::header::HeaderValue::from_str(value).ok())
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "REST catalog property 'header.{name}' is not a valid HTTP header"
                    ))
                })?;
        }
        Ok(Self {
            client,
            auth: Auth::from_config(config)?,
            headers,
        })
    }

    /// Send a request and parse the JSON answer (`None` for 204 or an empty body).
    /// `idempotent` requests are retried with exponential backoff on 429 and 503.
    pub async fn send<T: DeserializeOwned>(
        &self,
        method: Method,
        url: Url,
        body: Option<&serde_json::Value>,
        extra_headers: &[(&str, &str)],
        idempotent: bool,
    ) -> Result<Option<T>, HttpError> {
        let mut attempt = 1;
        let mut refreshed_token = false;
        let mut force_refresh = false;
        loop {
            let auth = self
                .auth
                .header(&self.client, std::mem::take(&mut force_refresh))
                .await
                .map_err(|error| HttpError {
                    status: None,
                    error_type: String::new(),
                    error,
                })?;
            let mut request = self.client.request(method.clone(), url.clone());
            if let Some(a) = &auth {
                request = request.header(reqwest::header::AUTHORIZATION, a);
            }
            for (k, v) in &self.headers {
                request = request.header(k.as_str(), v.as_str());
            }
            for (k, v) in extra_headers {
                request = request.header(*k, *v);
            }
            if let Some(b) = body {
                let bytes = serde_json::to_vec(b).map_err(|e| HttpError {
                    status: None,
                    error_type: String::new(),
                    error: Error::invalid_argument("cannot encode a REST request").with_source(e),
                })?;
                request = request
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(bytes);
            }
            let response = match request.send().await {
                Ok(r) => r,
                Err(e) => {
                    let what = if e.is_timeout() {
                        "timed out"
                    } else if e.is_connect() {
                        "cannot connect"
                    } else {
                        "failed"
                    };
                    return Err(HttpError {
                        status: None,
                        error_type: String::new(),
                        error: Error::new(
                            ErrorKind::Io,
                            format!("REST catalog request {method} {url}: {what}"),
                        )
                        .with_source(WithCauses::new(e)),
                    });
                }
            };
            let status = response.status();
            let bytes = response.bytes().await.map_err(|e| HttpError {
                status: Some(status),
                error_type: String::new(),
                error: Error::new(
                    ErrorKind::Io,
                    format!("REST catalog request {method} {url}: reading the answer failed"),
                )
                .with_source(WithCauses::new(e)),
            })?;
            if status.is_success() {
                if bytes.is_empty() || status == StatusCode::NO_CONTENT {
                    return Ok(None);
                }
                return serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| HttpError {
                        status: Some(status),
                        error_type: String::new(),
                        error: Error::invalid_data(format!(
                            "REST catalog answer to {method} {url} is not the expected JSON"
                        ))
                        .with_source(e),
                    });
            }
            let retryable = matches!(
                status,
                StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
            );
            if idempotent && retryable && attempt < MAX_ATTEMPTS {
                tokio::time::sleep(FIRST_BACKOFF * 2u32.pow(attempt - 1)).await;
                attempt += 1;
                continue;
            }
            if status == StatusCode::UNAUTHORIZED
                && !refreshed_token
                && matches!(self.auth, Auth::ClientCredentials(_))
            {
                // the token may have expired early: fetch a new one once
                refreshed_token = true;
                force_refresh = true;
                continue;
            }
            return Err(error_for(&method, &url, status, &bytes));
        }
    }
}

/// A `reqwest` error shown with its causes (`error sending request: client error
/// (Connect): tcp connect error: Connection refused (os error 111)`, or the TLS
/// handshake's reason): reqwest's own message says only "error sending request". The
/// URL is dropped from it (the caller's message names the URL, which holds no secret).
#[derive(Debug)]
pub(super) struct WithCauses(reqwest::Error);

impl WithCauses {
    pub(super) fn new(e: reqwest::Error) -> Self {
        Self(e.without_url())
    }
}

impl std::fmt::Display for WithCauses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::error::with_causes(&self.0))
    }
}

/// Its causes are part of its message.
impl std::error::Error for WithCauses {}

/// The error for a non-success answer.
fn error_for(method: &Method, url: &Url, status: StatusCode, body: &[u8]) -> HttpError {
    let (message, error_type) = match serde_json::from_slice::<ErrorResponse>(body) {
        Ok(e) => (e.error.message, e.error.error_type),
        Err(_) => (
            String::from_utf8_lossy(&body[..body.len().min(200)])
                .trim()
                .to_string(),
            String::new(),
        ),
    };
    let kind = match status.as_u16() {
        400 | 422 => ErrorKind::InvalidArgument,
        401 | 403 => ErrorKind::PermissionDenied,
        404 => ErrorKind::NotFound,
        409 => ErrorKind::AlreadyExists,
        _ => ErrorKind::Io,
    };
    let detail = match (error_type.is_empty(), message.is_empty()) {
        (true, true) => String::new(),
        (true, false) => format!(": {message}"),
        (false, true) => format!(": {error_type}"),
        (false, false) => format!(": {error_type}: {message}"),
    };
    HttpError {
        status: Some(status),
        error_type,
        error: Error::new(
            kind,
            format!("REST catalog answered {status} to {method} {url}{detail}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_error_models() {
        let url = Url::parse("http://h/v1/ns/t").unwrap();
        let e = error_for(
            &Method::GET,
            &url,
            StatusCode::NOT_FOUND,
            br#"{"error":{"message":"Table does not exist: t","type":"NoSuchTableException","code":404}}"#,
        );
        assert_eq!(e.error.kind(), ErrorKind::NotFound);
        assert_eq!(e.error_type, "NoSuchTableException");
        let text = e.error.to_string();
        assert!(
            text.contains("http://h/v1/ns/t") && text.contains("Table does not exist"),
            "{text}"
        );
        let e = error_for(&Method::POST, &url, StatusCode::BAD_GATEWAY, b"<html>oops");
        assert_eq!(e.error.kind(), ErrorKind::Io);
        assert!(e.error.to_string().contains("oops"));
        let e = error_for(&Method::GET, &url, StatusCode::FORBIDDEN, b"");
        assert_eq!(e.error.kind(), ErrorKind::PermissionDenied);
    }

    /// A request that gets no answer says why: the refused connection, the failed TLS
    /// handshake (`https` to a plain HTTP server), not only "error sending request".
    #[tokio::test]
    async fn failed_requests_name_their_cause() {
        use std::io::{Read, Write};
        let client = reqwest::Client::new();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let e = client
            .get(format!("http://127.0.0.1:{port}/v1/config"))
            .send()
            .await
            .unwrap_err();
        let text = WithCauses::new(e).to_string();
        assert!(text.contains("Connection refused"), "{text}");
        assert!(!text.contains("/v1/config"), "{text}");

        let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = plain.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            if let Ok((mut s, _)) = plain.accept() {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
            }
        });
        let e = client
            .get(format!("https://127.0.0.1:{port}/v1/config"))
            .send()
            .await
            .unwrap_err();
        let text = WithCauses::new(e).to_string();
        server.join().unwrap();
        // reqwest's message, then the connection's and the TLS layer's reasons
        assert!(
            text.starts_with("error sending request") && text.matches(": ").count() >= 2,
            "{text}"
        );
    }
}
