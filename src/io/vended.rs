//! Vended S3 credentials that expire, refreshed before they do.
//!
//! A REST catalog may hand out short-lived storage credentials with a table (REST spec
//! `LoadTableResult.storage-credentials`, each a `StorageCredential` with a location
//! `prefix` and FileIO `config`). For S3 the config holds `s3.access-key-id`,
//! `s3.secret-access-key`, optionally `s3.session-token`, and the expiry
//! `s3.session-token-expires-at-ms` (ms since the Unix epoch; Iceberg Java's
//! `S3FileIOProperties.SESSION_TOKEN_EXPIRES_AT_MS`).
//!
//! [`VendedS3Credentials`] is the `object_store` [`CredentialProvider`] of a store built
//! from such a credential. object_store asks it for a credential before every request;
//! it answers the current one until the refresh point, then asks its
//! [`CredentialRefresher`] (the REST catalog's `loadCredentials` endpoint, or a table
//! reload) for fresh ones. The refresh point is 5 minutes before expiry, as Iceberg
//! Java's `VendedCredentialsProvider` prefetches, or half the credential's lifetime
//! when that is shorter. A failed refresh keeps the current credential while it is still
//! valid (retried at most once a second); an expired credential is never sent: the
//! request fails with a permission error naming the table and location (never a key,
//! secret or token).
//!
//! Providers are shared process-wide by key ([`shared_provider`]): loading the same
//! table again hands its (possibly fresher) credential to the provider the table's
//! store already uses, so the store, its connection pool and its cache entry in
//! [`shared_store`](super::shared_store) are reused.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use object_store::aws::AwsCredential;
use object_store::CredentialProvider;

use crate::error::{Error, ErrorKind, Result};

/// The S3 access key id property.
pub const S3_ACCESS_KEY_ID: &str = "s3.access-key-id";
/// The S3 secret access key property.
pub const S3_SECRET_ACCESS_KEY: &str = "s3.secret-access-key";
/// The S3 session token property.
pub const S3_SESSION_TOKEN: &str = "s3.session-token";
/// When the S3 credential expires, ms since the Unix epoch.
pub const S3_SESSION_TOKEN_EXPIRES_AT_MS: &str = "s3.session-token-expires-at-ms";

/// The longest a credential is refreshed ahead of its expiry (Iceberg Java prefetches
/// 5 minutes ahead).
const MAX_REFRESH_AHEAD_MS: i64 = 5 * 60 * 1000;
/// The least time between two refresh attempts after one failed.
const RETRY_AFTER_FAILURE_MS: i64 = 1000;

/// Where fresh credentials come from.
#[async_trait]
pub trait CredentialRefresher: fmt::Debug + Send + Sync {
    /// Fresh storage credentials as (location prefix, FileIO properties) pairs, the
    /// shape of the REST spec's `storage-credentials`.
    ///
    /// Errors: whatever fetching them failed with; the message must not hold a secret.
    async fn refresh(&self) -> Result<Vec<(String, HashMap<String, String>)>>;
}

/// An S3 credential from FileIO properties and its expiry.
#[derive(Clone)]
pub struct ExpiringS3Credential {
    credential: Arc<AwsCredential>,
    /// ms since the epoch; `None`: does not expire.
    expires_at_ms: Option<i64>,
}

impl fmt::Debug for ExpiringS3Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpiringS3Credential")
            .field("key_id", &"***")
            .field("expires_at_ms", &self.expires_at_ms)
            .finish()
    }
}

impl ExpiringS3Credential {
    /// The credential in `properties` (`s3.access-key-id`, `s3.secret-access-key`,
    /// optional `s3.session-token` and `s3.session-token-expires-at-ms`); `None` when
    /// there is no access key id.
    ///
    /// Errors: [`ErrorKind::InvalidData`] naming the property (never its value) when the
    /// secret is missing or the expiry is not a whole number of milliseconds.
    pub fn from_properties(properties: &HashMap<String, String>) -> Result<Option<Self>> {
        let Some(key_id) = properties.get(S3_ACCESS_KEY_ID).filter(|k| !k.is_empty()) else {
            return Ok(None);
        };
        let secret_key = properties
            .get(S3_SECRET_ACCESS_KEY)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                Error::invalid_data(format!(
                    "vended S3 credential has '{S3_ACCESS_KEY_ID}' but no '{S3_SECRET_ACCESS_KEY}'"
                ))
            })?;
        let expires_at_ms = properties
            .get(S3_SESSION_TOKEN_EXPIRES_AT_MS)
            .map(|v| {
                v.trim().parse::<i64>().map_err(|_| {
                    Error::invalid_data(format!(
                        "vended S3 credential's '{S3_SESSION_TOKEN_EXPIRES_AT_MS}' is '{v}', \
                         not milliseconds since the epoch"
                    ))
                })
            })
            .transpose()?;
        Ok(Some(Self {
            credential: Arc::new(AwsCredential {
                key_id: key_id.clone(),
                secret_key: secret_key.clone(),
                token: properties
                    .get(S3_SESSION_TOKEN)
                    .filter(|t| !t.is_empty())
                    .cloned(),
            }),
            expires_at_ms,
        }))
    }

    /// When it expires, ms since the epoch (`None`: never).
    pub fn expires_at_ms(&self) -> Option<i64> {
        self.expires_at_ms
    }
}

/// The current credential and when to refresh it.
struct State {
    current: ExpiringS3Credential,
    /// When to start refreshing (ms since the epoch).
    refresh_at_ms: Option<i64>,
    /// No refresh attempt before this (after a failed one).
    next_attempt_ms: i64,
    /// What the last failed refresh said.
    last_failure: Option<String>,
}

fn refresh_point(credential: &ExpiringS3Credential, now_ms: i64) -> Option<i64> {
    credential.expires_at_ms.map(|expires| {
        let lifetime = (expires - now_ms).max(0);
        expires - (lifetime / 2).min(MAX_REFRESH_AHEAD_MS)
    })
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn format_ms(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| format!("{ms} ms"))
}

/// An S3 [`CredentialProvider`] over a vended credential that refreshes it before it
/// expires (see the module docs).
pub struct VendedS3Credentials {
    /// What the credential is for, for messages: `table 'ns.t'`.
    owner: String,
    /// The location prefix the credential covers (`s3://bucket/path`).
    prefix: String,
    refresher: Option<Arc<dyn CredentialRefresher>>,
    state: tokio::sync::Mutex<State>,
}

impl fmt::Debug for VendedS3Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VendedS3Credentials")
            .field("owner", &self.owner)
            .field("prefix", &self.prefix)
            .field("refreshes", &self.refresher.is_some())
            .finish_non_exhaustive()
    }
}

impl VendedS3Credentials {
    /// A provider for `owner`'s credential on locations under `prefix`, refreshed by
    /// `refresher` (`None`: used until it expires, then refused).
    pub fn new(
        owner: &str,
        prefix: &str,
        credential: ExpiringS3Credential,
        refresher: Option<Arc<dyn CredentialRefresher>>,
    ) -> Self {
        let now = now_ms();
        Self {
            owner: owner.to_string(),
            prefix: prefix.to_string(),
            refresher,
            state: tokio::sync::Mutex::new(State {
                refresh_at_ms: refresh_point(&credential, now),
                current: credential,
                next_attempt_ms: now,
                last_failure: None,
            }),
        }
    }

    /// Take `credential` if it lives longer than the current one (a reload of the
    /// table vended a newer one).
    pub async fn offer(&self, credential: ExpiringS3Credential) {
        let mut state = self.state.lock().await;
        let newer = match (state.current.expires_at_ms, credential.expires_at_ms) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(old), Some(new)) => new > old,
        };
        if newer {
            state.refresh_at_ms = refresh_point(&credential, now_ms());
            state.current = credential;
            state.last_failure = None;
        }
    }

    /// The credential to sign a request with now.
    ///
    /// Errors: [`ErrorKind::PermissionDenied`] naming the owner and prefix when the
    /// credential has expired and no fresh one could be had.
    pub async fn credential(&self) -> Result<Arc<AwsCredential>> {
        let mut state = self.state.lock().await;
        let now = now_ms();
        let due = state.refresh_at_ms.is_some_and(|at| now >= at);
        if due && now >= state.next_attempt_ms {
            match &self.refresher {
                Some(refresher) => match self.fetch(refresher.as_ref()).await {
                    Ok(fresh) => {
                        state.refresh_at_ms = refresh_point(&fresh, now_ms());
                        state.current = fresh;
                        state.last_failure = None;
                    }
                    Err(e) => {
                        state.next_attempt_ms = now_ms() + RETRY_AFTER_FAILURE_MS;
                        state.last_failure = Some(e.to_string());
                    }
                },
                None => {
                    state.last_failure = Some(
                        "the catalog offers no refresh (client.refresh-credentials-enabled)"
                            .to_string(),
                    )
                }
            }
        }
        match state.current.expires_at_ms {
            Some(expires) if now_ms() >= expires => Err(Error::new(
                ErrorKind::PermissionDenied,
                format!(
                    "the vended S3 credential of {} for '{}' expired at {}{}",
                    self.owner,
                    self.prefix,
                    format_ms(expires),
                    match &state.last_failure {
                        Some(why) => format!(" and could not be refreshed: {why}"),
                        None => String::new(),
                    }
                ),
            )),
            _ => Ok(Arc::clone(&state.current.credential)),
        }
    }

    /// A fresh credential from the refresher: the one whose prefix is the longest
    /// covering this provider's prefix.
    async fn fetch(&self, refresher: &dyn CredentialRefresher) -> Result<ExpiringS3Credential> {
        let sets = refresher.refresh().await?;
        let best = sets
            .iter()
            .filter(|(p, _)| self.prefix.starts_with(p.as_str()))
            .max_by_key(|(p, _)| p.len())
            .ok_or_else(|| {
                Error::invalid_data(format!(
                    "the catalog's fresh credentials hold none for '{}'",
                    self.prefix
                ))
            })?;
        let fresh = ExpiringS3Credential::from_properties(&best.1)?.ok_or_else(|| {
            Error::invalid_data(format!(
                "the catalog's fresh credential for '{}' has no '{S3_ACCESS_KEY_ID}'",
                best.0
            ))
        })?;
        if fresh.expires_at_ms.is_some_and(|e| e <= now_ms()) {
            return Err(Error::invalid_data(format!(
                "the catalog's fresh credential for '{}' has already expired",
                best.0
            )));
        }
        Ok(fresh)
    }
}

#[async_trait]
impl CredentialProvider for VendedS3Credentials {
    type Credential = AwsCredential;

    async fn get_credential(&self) -> object_store::Result<Arc<AwsCredential>> {
        self.credential()
            .await
            .map_err(|e| object_store::Error::PermissionDenied {
                path: self.prefix.clone(),
                source: Box::new(e),
            })
    }
}

/// The provider registered under `key` (e.g. catalog URI, table and prefix), given
/// `credential` when it is newer; or a new one made by `make` and registered.
pub async fn shared_provider(
    key: &str,
    credential: ExpiringS3Credential,
    make: impl FnOnce(ExpiringS3Credential) -> VendedS3Credentials,
) -> Result<Arc<VendedS3Credentials>> {
    type Providers = Mutex<HashMap<String, Arc<VendedS3Credentials>>>;
    static PROVIDERS: OnceLock<Providers> = OnceLock::new();
    let existing = {
        let providers = PROVIDERS
            .get_or_init(Default::default)
            .lock()
            .map_err(|_| Error::new(ErrorKind::Io, "credential provider registry poisoned"))?;
        providers.get(key).cloned()
    };
    if let Some(p) = existing {
        p.offer(credential).await;
        return Ok(p);
    }
    let mut providers = PROVIDERS
        .get_or_init(Default::default)
        .lock()
        .map_err(|_| Error::new(ErrorKind::Io, "credential provider registry poisoned"))?;
    Ok(Arc::clone(
        providers
            .entry(key.to_string())
            .or_insert_with(|| Arc::new(make(credential))),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Hands out the credentials queued in it, one per refresh, then fails.
    #[derive(Debug, Default)]
    struct Queue {
        next: Mutex<Vec<(String, HashMap<String, String>)>>,
        calls: AtomicUsize,
    }

    #[async_trait]
    impl CredentialRefresher for Queue {
        async fn refresh(&self) -> Result<Vec<(String, HashMap<String, String>)>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let next = self.next.lock().unwrap().pop();
            next.map(|c| vec![c]).ok_or_else(|| {
                Error::new(
                    ErrorKind::PermissionDenied,
                    "catalog answered 403 Forbidden",
                )
            })
        }
    }

    fn props(key: &str, expires_in_ms: Option<i64>) -> HashMap<String, String> {
        let mut p = HashMap::from([
            (S3_ACCESS_KEY_ID.to_string(), key.to_string()),
            (S3_SECRET_ACCESS_KEY.to_string(), format!("secret-of-{key}")),
            (S3_SESSION_TOKEN.to_string(), format!("token-of-{key}")),
        ]);
        if let Some(ms) = expires_in_ms {
            p.insert(
                S3_SESSION_TOKEN_EXPIRES_AT_MS.to_string(),
                (now_ms() + ms).to_string(),
            );
        }
        p
    }

    fn cred(key: &str, expires_in_ms: Option<i64>) -> ExpiringS3Credential {
        ExpiringS3Credential::from_properties(&props(key, expires_in_ms))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn reads_credentials_and_refuses_bad_ones_without_their_values() {
        assert!(ExpiringS3Credential::from_properties(&HashMap::new())
            .unwrap()
            .is_none());
        let c = cred("k1", Some(60_000));
        assert_eq!(c.credential.key_id, "k1");
        assert_eq!(c.credential.token.as_deref(), Some("token-of-k1"));
        assert!(!format!("{c:?}").contains("k1"));
        let mut bad = props("k1", None);
        bad.insert(S3_SESSION_TOKEN_EXPIRES_AT_MS.into(), "soon".into());
        let err = ExpiringS3Credential::from_properties(&bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidData);
        assert!(err.to_string().contains("soon"), "{err}");
        bad.remove(S3_SECRET_ACCESS_KEY);
        let err = ExpiringS3Credential::from_properties(&bad)
            .unwrap_err()
            .to_string();
        assert!(
            !err.contains("secret-of") && !err.contains("token-of"),
            "{err}"
        );
    }

    #[test]
    fn refreshes_half_way_or_five_minutes_ahead() {
        let now = 1_000_000_000;
        let short = ExpiringS3Credential {
            expires_at_ms: Some(now + 10_000),
            ..cred("k", None)
        };
        assert_eq!(refresh_point(&short, now), Some(now + 5_000));
        let long = ExpiringS3Credential {
            expires_at_ms: Some(now + 3_600_000),
            ..cred("k", None)
        };
        assert_eq!(refresh_point(&long, now), Some(now + 3_300_000));
        assert_eq!(refresh_point(&cred("k", None), now), None);
    }

    #[tokio::test]
    async fn refreshes_before_expiry_and_never_sends_an_expired_credential() {
        let queue = Arc::new(Queue::default());
        queue
            .next
            .lock()
            .unwrap()
            .push(("s3://b/t".into(), props("k2", Some(3_600_000))));
        let provider = VendedS3Credentials::new(
            "table 'ns.t'",
            "s3://b/t",
            cred("k1", Some(400)),
            Some(Arc::clone(&queue) as Arc<dyn CredentialRefresher>),
        );
        // before the refresh point: the vended credential, no refresh
        assert_eq!(provider.credential().await.unwrap().key_id, "k1");
        assert_eq!(queue.calls.load(Ordering::SeqCst), 0);
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        assert_eq!(provider.credential().await.unwrap().key_id, "k2");
        assert_eq!(provider.credential().await.unwrap().key_id, "k2");
        assert_eq!(queue.calls.load(Ordering::SeqCst), 1);

        // a refresh that fails: the old credential while valid, then a clear error
        let provider = VendedS3Credentials::new(
            "table 'ns.t'",
            "s3://b/t",
            cred("k1", Some(400)),
            Some(Arc::clone(&queue) as Arc<dyn CredentialRefresher>),
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        assert_eq!(provider.credential().await.unwrap().key_id, "k1");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let err = provider.credential().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PermissionDenied);
        let text = err.to_string();
        assert!(
            text.contains("table 'ns.t'") && text.contains("s3://b/t") && text.contains("403"),
            "{text}"
        );
        assert!(
            !text.contains("k1") && !text.contains("secret-of") && !text.contains("token-of"),
            "{text}"
        );
        // without a refresher: used until it expires, then refused
        let provider = VendedS3Credentials::new("table 't'", "s3://b/t", cred("k1", Some(1)), None);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let err = provider.credential().await.unwrap_err().to_string();
        assert!(err.contains("offers no refresh"), "{err}");
    }

    #[tokio::test]
    async fn an_offered_newer_credential_replaces_the_old_one() {
        let key = format!("test-{}", uuid::Uuid::new_v4());
        let make = |c| VendedS3Credentials::new("t", "s3://b/t", c, None);
        let a = shared_provider(&key, cred("k1", Some(60_000)), make)
            .await
            .unwrap();
        let b = shared_provider(&key, cred("k0", Some(30_000)), make)
            .await
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.credential().await.unwrap().key_id, "k1");
        shared_provider(&key, cred("k2", Some(120_000)), make)
            .await
            .unwrap();
        assert_eq!(a.credential().await.unwrap().key_id, "k2");
    }
}
