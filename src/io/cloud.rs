//! Object store configuration for cloud locations (`s3://`, `gs://`, `az://`, …).
//!
//! Options come from three places, later ones winning: the process environment
//! (`AWS_*`, `GOOGLE_*`, `AZURE_*` variables, as `object_store`'s builders read them),
//! the table's or catalog's properties under the Iceberg FileIO names
//! (`s3.endpoint`, `s3.region`, `s3.access-key-id`, `s3.secret-access-key`,
//! `s3.session-token`, `s3.path-style-access`, `adls.account-name`, `adls.account-key`,
//! `gcs.oauth2.token`, `gcs.service.host`, `gcs.no-auth`; the ADLS names are mapped per
//! account by `azure`), and `object_store`'s own keys (`aws_region`, `google_service_account`,
//! `azure_storage_account_name`, …) given directly.
//!
//! Timeouts and retries, so that a store that stops answering fails a read instead of
//! hanging it: `s3.connect-timeout` (seconds, PyIceberg's name; default 5 s: establishing
//! the connection) and `s3.request-timeout` (seconds, PyIceberg's name; default 30 s: one
//! request, from sending it to the last byte of the answer), and Iceberg Java's
//! `s3.retry.num-retries` (default 10), `s3.retry.min-wait-ms` (default 100) and
//! `s3.retry.max-wait-ms` (default 15000): a request that times out, cannot connect or
//! gets a 5xx/429 answer is retried that often with exponential backoff between those
//! waits, all retries together within 3 minutes. GCS and Azure stores take object_store's
//! keys for the same (`google_timeout`, `google_connect_timeout`, `azure_timeout`, …;
//! durations such as `30s`) with the same defaults. So a store that accepts connections
//! and never answers fails a read after at most (retries + 1) × request timeout plus the
//! waits, with an error naming the file and the request's URL (never a credential).
//!
//! An `s3.endpoint` or `gcs.service.host` starting with `http://` (a local S3-compatible
//! server, a GCS emulator) also allows plain HTTP. Stores are shared process-wide ([`shared_store`]): one `ObjectStore` per
//! store URL (`s3://bucket`) and option set (credentials, endpoint, region), so every
//! table in a bucket reuses one HTTP connection pool.
//!
//! The cloud stores are compiled in with the `cloud` cargo feature (object_store's `aws`,
//! `gcp` and `azure`); without it such locations fail with an error naming the feature.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use object_store::ObjectStore;
use url::Url;

use crate::error::{Error, ErrorKind, Result};

/// Whether a property's value is a secret that must never be shown: names holding
/// `secret`, `password`, `token`, `credential`, `key-id`/`key_id`, or ending in
/// `key` (`adls.account-key`, `azure_storage_account_key`, `google_service_account_key`),
/// Azure connection strings (`adls.connection-string[.<account>]`, which may hold
/// `AccountKey=…` or `SharedAccessSignature=…`), and every `header.*` value.
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "secret",
        "password",
        "token",
        "credential",
        "key-id",
        "key_id",
        "connection-string",
        "connection_string",
    ]
    .iter()
    .any(|s| k.contains(s))
        || k.ends_with("key")
        || k.starts_with("header.")
}

/// Whether property or option `key` holds a URL icefloe sends requests to and may show
/// in a message: the REST catalog's `uri` and `oauth2-server-uri`, the stores'
/// endpoints (`s3.endpoint`, `gcs.service.host`, object_store's `aws_endpoint`,
/// `azure_storage_endpoint`, `google_base_url`, … any `…endpoint`, `…_url`, `…_uri`,
/// `…_host`), and `adls.connection-string[.<account>]`, an endpoint URL or pairs
/// holding a `BlobEndpoint`.
pub fn is_url_valued(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    matches!(
        k.as_str(),
        "uri" | "oauth2-server-uri" | "s3.endpoint" | "gcs.service.host"
    ) || k.starts_with("adls.connection-string")
        || ["endpoint", "_url", "_uri", "_host"]
            .iter()
            .any(|s| k.ends_with(s))
}

/// The properties and options whose value must be an `http://` or `https://` URL with a
/// host: object_store's clients panic on a request to one without a scheme
/// (`s3.endpoint=localhost:9000`, a tester's).
fn must_be_http(key: &str) -> bool {
    matches!(
        key.to_ascii_lowercase().as_str(),
        "uri"
            | "oauth2-server-uri"
            | "s3.endpoint"
            | "gcs.service.host"
            | "aws_endpoint"
            | "aws_endpoint_url"
            | "google_base_url"
            | "azure_storage_endpoint"
    )
}

/// Check URL-valued property `key` ([`is_url_valued`]): refuse a user name, password
/// or query string (requests' errors, the REST client's and object_store's, show the
/// URL they went to, so a secret in it would reach messages and logs), and a value that
/// is no `http(s)://` URL where one must be. In an `adls.connection-string`, the URL
/// form or its `BlobEndpoint` is checked. The message names the property, never its
/// value.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming `key`.
pub fn check_url_without_secrets(key: &str, value: &str) -> Result<()> {
    let value = value.trim();
    if key
        .to_ascii_lowercase()
        .starts_with("adls.connection-string")
    {
        if value.starts_with("http://") || value.starts_with("https://") {
            return check_url(key, value, true);
        }
        for (k, v) in value.split(';').filter_map(|pair| pair.split_once('=')) {
            if k.trim().eq_ignore_ascii_case("BlobEndpoint") {
                check_url(&format!("{key} (its BlobEndpoint)"), v.trim(), true)?;
            }
        }
        return Ok(());
    }
    check_url(key, value, must_be_http(key))
}

fn check_url(key: &str, value: &str, http: bool) -> Result<()> {
    let not_http = || {
        Error::invalid_argument(format!(
            "'{key}' is not an http:// or https:// URL with a host"
        ))
    };
    let url = match url::Url::parse(value) {
        Ok(url) => url,
        Err(_) if http => return Err(not_http()),
        Err(_) => return Ok(()),
    };
    if http && (!matches!(url.scheme(), "http" | "https") || url.host_str().is_none()) {
        return Err(not_http());
    }
    let held = if !url.username().is_empty() || url.password().is_some() {
        "a user name or password"
    } else if url.query().is_some() {
        "a query string"
    } else {
        return Ok(());
    };
    Err(Error::invalid_argument(format!(
        "'{key}' holds {held}: a URL is shown in errors and logs, so it may hold no \
         secret; give credentials as their own properties ('credential', 'token', \
         'header.<name>', 's3.access-key-id', …)"
    )))
}

/// `properties` with secret values replaced by `***`.
pub fn redacted<'a>(
    properties: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> BTreeMap<String, String> {
    properties
        .into_iter()
        .map(|(k, v)| {
            let v = if is_secret(k) {
                "***".to_string()
            } else {
                v.clone()
            };
            (k.clone(), v)
        })
        .collect()
}

/// The `object_store` option for an Iceberg FileIO property, if it has one.
fn iceberg_property_to_option(key: &str, value: &str) -> Option<(String, String)> {
    let mapped = match key {
        "s3.endpoint" => "aws_endpoint",
        "s3.region" | "client.region" => "aws_region",
        "s3.access-key-id" => "aws_access_key_id",
        "s3.secret-access-key" => "aws_secret_access_key",
        "s3.session-token" => "aws_session_token",
        "s3.path-style-access" => {
            // path-style access is the opposite of virtual-hosted-style requests
            let virtual_hosted = !value.eq_ignore_ascii_case("true");
            return Some((
                "aws_virtual_hosted_style_request".into(),
                virtual_hosted.to_string(),
            ));
        }
        "adls.account-name" => "azure_storage_account_name",
        "adls.account-key" => "azure_storage_account_key",
        "gcs.oauth2.token" => "google_bearer_token",
        // Iceberg Java's GCPProperties: another GCS host (an emulator)
        "gcs.service.host" => "google_base_url",
        "gcs.no-auth" => {
            // no OAuth token at all: object_store does this for a service-account key
            // with `disable_oauth` (its emulator mode); the key's other fields are unused
            if !value.eq_ignore_ascii_case("true") {
                return None;
            }
            return Some((
                "google_service_account_key".into(),
                r#"{"private_key": "", "private_key_id": "", "client_email": "", "disable_oauth": true}"#
                    .into(),
            ));
        }
        _ => {
            let direct = ["aws_", "google_", "azure_"]
                .iter()
                .any(|p| key.starts_with(p));
            return direct.then(|| (key.to_string(), value.to_string()));
        }
    };
    Some((mapped.to_string(), value.to_string()))
}

/// Option keys that carry Iceberg Java's `s3.retry.*` properties (milliseconds, counts)
/// to [`shared_store`], which builds the store's retry policy from them (object_store
/// has no option keys for it).
const RETRY_NUM_RETRIES: &str = "icefloe_retry_num_retries";
const RETRY_MIN_WAIT_MS: &str = "icefloe_retry_min_wait_ms";
const RETRY_MAX_WAIT_MS: &str = "icefloe_retry_max_wait_ms";

/// The object_store option for an Iceberg timeout or retry property (see the module
/// docs), `None` for other keys.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the property when its value is not a
/// non-negative number (seconds for the timeouts, a count or milliseconds for retries).
fn timeout_property_to_option(key: &str, value: &str) -> Result<Option<(String, String)>> {
    let invalid = |what: &str| {
        Error::invalid_argument(format!("property '{key}' is '{value}', expected {what}"))
    };
    let option = match key {
        "s3.connect-timeout" | "s3.request-timeout" => {
            let seconds: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                .ok_or_else(|| invalid("a number of seconds"))?;
            let name = if key == "s3.connect-timeout" {
                "aws_connect_timeout"
            } else {
                "aws_timeout"
            };
            // object_store reads durations as text; whole milliseconds keep 1.5 s exact
            let millis = (seconds * 1000.0).round() as u64;
            (name, format!("{millis}ms"))
        }
        "s3.retry.num-retries" | "s3.retry.min-wait-ms" | "s3.retry.max-wait-ms" => {
            let n: u64 = value
                .trim()
                .parse()
                .map_err(|_| invalid("a non-negative whole number"))?;
            let name = match key {
                "s3.retry.num-retries" => RETRY_NUM_RETRIES,
                "s3.retry.min-wait-ms" => RETRY_MIN_WAIT_MS,
                _ => RETRY_MAX_WAIT_MS,
            };
            (name, n.to_string())
        }
        _ => return Ok(None),
    };
    Ok(Some((option.0.to_string(), option.1)))
}

/// The options for [`shared_store`]: `env` (name, value) pairs, then `properties`,
/// later keys overriding earlier ones.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming a timeout or retry property whose value
/// is not a number (see the module docs), or a URL-valued one holding a user name,
/// password or query string ([`check_url_without_secrets`]).
pub fn store_options<'a>(
    env: impl IntoIterator<Item = (String, String)>,
    properties: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Result<HashMap<String, String>> {
    let mut options = HashMap::new();
    for (key, value) in env {
        let lower = key.to_ascii_lowercase();
        if ["aws_", "google_", "azure_"]
            .iter()
            .any(|p| lower.starts_with(p))
        {
            if is_url_valued(&lower) {
                check_url_without_secrets(&key, &value)?;
            }
            options.insert(lower, value);
        }
    }
    for (key, value) in properties {
        if is_url_valued(key) {
            check_url_without_secrets(key, value)?;
        }
        if matches!(key.as_str(), "s3.endpoint" | "gcs.service.host")
            && value.trim_start().starts_with("http://")
        {
            options.insert("allow_http".to_string(), "true".to_string());
        }
        if let Some((k, v)) = timeout_property_to_option(key, value)? {
            options.insert(k, v);
        } else if let Some((k, v)) = iceberg_property_to_option(key, value) {
            options.insert(k, v);
        }
    }
    Ok(options)
}

/// The retry policy of the HTTP stores: object_store's with the cloud stores, nothing
/// without them (no store then speaks HTTP).
#[cfg(feature = "cloud")]
type StoreRetry = object_store::RetryConfig;
#[cfg(not(feature = "cloud"))]
type StoreRetry = NoRetry;

/// The retry policy of a build without cloud stores: none.
#[cfg(not(feature = "cloud"))]
#[derive(Debug)]
struct NoRetry;

/// Without the cloud stores the retry keys are only removed from `options`.
#[cfg(not(feature = "cloud"))]
fn take_retry_config(options: &mut BTreeMap<String, String>) -> StoreRetry {
    for key in [RETRY_NUM_RETRIES, RETRY_MIN_WAIT_MS, RETRY_MAX_WAIT_MS] {
        options.remove(key);
    }
    NoRetry
}

/// The retry policy for a store from `options`' retry keys (object_store's defaults for
/// those not given), removing them from `options`.
#[cfg(feature = "cloud")]
fn take_retry_config(options: &mut BTreeMap<String, String>) -> StoreRetry {
    let mut retry = object_store::RetryConfig::default();
    let mut take = |key: &str| options.remove(key).and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = take(RETRY_NUM_RETRIES) {
        retry.max_retries = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(ms) = take(RETRY_MIN_WAIT_MS) {
        retry.backoff.init_backoff = std::time::Duration::from_millis(ms);
    }
    if let Some(ms) = take(RETRY_MAX_WAIT_MS) {
        retry.backoff.max_backoff = std::time::Duration::from_millis(ms);
    }
    if retry.backoff.max_backoff < retry.backoff.init_backoff {
        retry.backoff.max_backoff = retry.backoff.init_backoff;
    }
    retry
}

/// Build the store for `url` from `options` (keys object_store does not know are
/// ignored, as `object_store::parse_url_opts` ignores them), with `retry` for S3.
fn build_store(
    url: &Url,
    options: BTreeMap<String, String>,
    retry: StoreRetry,
) -> object_store::Result<Box<dyn ObjectStore>> {
    #[cfg(feature = "cloud")]
    {
        let (scheme, _) = object_store::ObjectStoreScheme::parse(url)?;
        if scheme == object_store::ObjectStoreScheme::AmazonS3 {
            let builder = s3_builder(url.as_str(), options);
            return Ok(Box::new(builder.with_retry(retry).build()?));
        }
    }
    let _ = retry;
    Ok(object_store::parse_url_opts(url, options)?.0)
}

/// An S3 store builder for `url` configured with `options` (keys object_store does not
/// know are ignored).
#[cfg(feature = "cloud")]
fn s3_builder(url: &str, options: BTreeMap<String, String>) -> object_store::aws::AmazonS3Builder {
    options.into_iter().fold(
        object_store::aws::AmazonS3Builder::new().with_url(url),
        |builder, (key, value)| match key.to_ascii_lowercase().parse() {
            Ok(k) => builder.with_config(k, value),
            Err(_) => builder,
        },
    )
}

/// The process-wide stores: (store URL, options) → store.
type Registry = Mutex<HashMap<(String, BTreeMap<String, String>), Arc<dyn ObjectStore>>>;

/// The object store for `store_url` (`s3://bucket`, `gs://bucket`, …) configured with
/// `options` (see [`store_options`]): built by `object_store::parse_url_opts` on first
/// use, then the same instance for every caller with the same URL and options.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the store URL when it cannot be
/// configured (never the option values: they hold credentials);
/// [`ErrorKind::Unsupported`] naming the `cloud` feature when icefloe was built without it.
pub fn shared_store(
    store_url: &str,
    options: HashMap<String, String>,
) -> Result<Arc<dyn ObjectStore>> {
    static STORES: OnceLock<Registry> = OnceLock::new();
    let key = (store_url.to_string(), options.into_iter().collect());
    let mut stores = STORES
        .get_or_init(Default::default)
        .lock()
        .map_err(|_| Error::new(ErrorKind::Io, "object store registry poisoned"))?;
    if let Some(store) = stores.get(&key) {
        return Ok(Arc::clone(store));
    }
    let url = Url::parse(store_url).map_err(|e| {
        Error::invalid_argument(format!("invalid store URL '{store_url}'")).with_source(e)
    })?;
    let mut options = key.1.clone();
    let retry = take_retry_config(&mut options);
    let store = build_store(&url, options, retry).map_err(|e| {
        if cfg!(feature = "cloud") {
            Error::invalid_argument(format!(
                "cannot configure the object store for '{store_url}'"
            ))
            .with_source(e)
        } else {
            Error::unsupported(format!(
                "object store for '{store_url}': icefloe was built without the 'cloud' \
                 feature (s3://, s3a://, gs://, az://); rebuild with `--features cloud`"
            ))
            .with_source(e)
        }
    })?;
    let store: Arc<dyn ObjectStore> = Arc::from(store);
    stores.insert(key, Arc::clone(&store));
    Ok(store)
}

/// Option keys that carry an S3 credential: left out of a store's cache key and
/// configuration when a [`CredentialProvider`](object_store::CredentialProvider) signs
/// its requests instead.
#[cfg(feature = "cloud")]
const S3_CREDENTIAL_OPTIONS: &[&str] = &[
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "aws_token",
];

/// The S3 store for `store_url` (`s3://bucket`, `s3a://bucket`) configured with
/// `options` but signing with `credentials` (vended credentials that refresh; see
/// [`VendedS3Credentials`](super::vended::VendedS3Credentials)); shared like
/// [`shared_store`], keyed by the store URL, the options other than credentials and
/// `credentials_key` (which names the credential source, e.g. catalog, table and
/// prefix).
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the store URL when it cannot be
/// configured (never the option values).
#[cfg(feature = "cloud")]
pub fn shared_s3_store_with_credentials(
    store_url: &str,
    options: HashMap<String, String>,
    credentials_key: &str,
    credentials: object_store::aws::AwsCredentialProvider,
) -> Result<Arc<dyn ObjectStore>> {
    static STORES: OnceLock<Registry> = OnceLock::new();
    let mut options: BTreeMap<String, String> = options
        .into_iter()
        .filter(|(k, _)| !S3_CREDENTIAL_OPTIONS.contains(&k.as_str()))
        .collect();
    let mut builder_options = options.clone();
    let retry = take_retry_config(&mut builder_options);
    options.insert(
        "icefloe.credentials".to_string(),
        credentials_key.to_string(),
    );
    let key = (store_url.to_string(), options);
    let mut stores = STORES
        .get_or_init(Default::default)
        .lock()
        .map_err(|_| Error::new(ErrorKind::Io, "object store registry poisoned"))?;
    if let Some(store) = stores.get(&key) {
        return Ok(Arc::clone(store));
    }
    let store = s3_builder(store_url, builder_options)
        .with_retry(retry)
        .with_credentials(credentials)
        .build()
        .map_err(|e| {
            Error::invalid_argument(format!(
                "cannot configure the object store for '{store_url}'"
            ))
            .with_source(e)
        })?;
    let store: Arc<dyn ObjectStore> = Arc::new(store);
    stores.insert(key, Arc::clone(&store));
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user name, password or query string in a store endpoint is refused, the message
    /// naming the property and not the value (object_store's errors show the URL: a
    /// tester's `s3.endpoint=http://s3user:S3-URL-PASSWORD@…` was printed).
    #[test]
    fn endpoints_holding_secrets_are_refused() {
        let prop = |k: &str, v: &str| [(k.to_string(), v.to_string())];
        // the refusal of property `key` = `value`
        let refusal = |key: &str, value: &str| {
            let props = prop(key, value);
            store_options([], props.iter().map(|(k, v)| (k, v)))
                .unwrap_err()
                .to_string()
        };
        for (key, value) in [
            ("s3.endpoint", "http://s3user:S3-URL-PASSWORD@127.0.0.1:1"),
            ("gcs.service.host", "http://127.0.0.1:1/?S3-URL-PASSWORD=1"),
            ("aws_endpoint", "http://:S3-URL-PASSWORD@127.0.0.1:1"),
            (
                "azure_storage_endpoint",
                "http://h/acct?sig=S3-URL-PASSWORD",
            ),
        ] {
            let err = refusal(key, value);
            assert!(err.contains(&format!("'{key}' holds")), "{err}");
            assert!(!err.contains("S3-URL-PASSWORD"), "{err}");
        }
        let env = [(
            "AWS_ENDPOINT".to_string(),
            "http://u:S3-URL-PASSWORD@h".to_string(),
        )];
        let err = store_options(env, []).unwrap_err().to_string();
        assert!(err.contains("'AWS_ENDPOINT' holds a user name"), "{err}");
        // plain endpoints pass
        let props = prop("s3.endpoint", "http://127.0.0.1:9000");
        let options = store_options([], props.iter().map(|(k, v)| (k, v))).unwrap();
        assert_eq!(options["aws_endpoint"], "http://127.0.0.1:9000");
        assert!(is_url_valued("oauth2-server-uri") && !is_url_valued("s3.region"));
        // a second tester's: an endpoint without a scheme made object_store panic, and
        // an Azure connection string's endpoint showed its password
        for (key, value, secret) in [
            ("s3.endpoint", "localhost:9000", "localhost"),
            ("s3.endpoint", "u:PW-SECRET@host:1", "PW-SECRET"),
            ("gcs.service.host", "localhost:4443", "localhost"),
            (
                "adls.connection-string.acct",
                "http://u:AZ-SECRET@127.0.0.1:1/acct",
                "AZ-SECRET",
            ),
            (
                "adls.connection-string",
                "https://h/acct?sig=AZ-SECRET",
                "AZ-SECRET",
            ),
            (
                "adls.connection-string",
                "AccountName=a;BlobEndpoint=http://u:AZ-SECRET@h/a;AccountKey=k",
                "AZ-SECRET",
            ),
        ] {
            let err = refusal(key, value);
            assert!(err.contains(&format!("'{key}")), "{err}");
            assert!(!err.contains(secret), "{err}");
        }
        let env = [("AWS_ENDPOINT".to_string(), "localhost:9000".to_string())];
        let err = store_options(env, []).unwrap_err().to_string();
        assert!(err.contains("'AWS_ENDPOINT' is not an http"), "{err}");
        // Azurite's endpoint and connection string pass
        for (key, value) in [
            ("adls.connection-string.acct", "http://127.0.0.1:10000/acct"),
            (
                "adls.connection-string",
                "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=k;\
                 BlobEndpoint=http://127.0.0.1:10000/a;",
            ),
        ] {
            let props = prop(key, value);
            store_options([], props.iter().map(|(k, v)| (k, v))).expect(key);
        }
    }

    #[test]
    fn secrets_are_redacted() {
        let props: HashMap<String, String> = [
            ("s3.secret-access-key", "sk"),
            ("s3.access-key-id", "ak"),
            ("s3.session-token", "st"),
            ("credential", "id:cs"),
            ("adls.account-key", "ak2"),
            ("header.Authorization", "hv"),
            ("azure_storage_account_key", "ak3"),
            ("google_service_account_key", "gk"),
            ("aws_access_key_id", "ak4"),
            ("s3.endpoint", "http://e"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let shown = redacted(&props);
        for (k, v) in &shown {
            if k == "s3.endpoint" {
                assert_eq!(v, "http://e");
            } else {
                assert_eq!(v, "***", "{k}");
            }
        }
    }

    #[test]
    fn maps_iceberg_names_and_layers_sources() {
        let env = vec![
            ("AWS_REGION".to_string(), "us-east-1".to_string()),
            ("HOME".to_string(), "/root".to_string()),
        ];
        let props: HashMap<String, String> = [
            ("s3.region", "eu-west-1"),
            ("s3.endpoint", "http://127.0.0.1:9000"),
            ("s3.path-style-access", "true"),
            ("adls.account-name", "acct"),
            ("write.parquet.compression-codec", "zstd"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let options = store_options(env, &props).unwrap();
        assert_eq!(
            options.get("aws_region").map(String::as_str),
            Some("eu-west-1")
        );
        assert_eq!(
            options.get("aws_endpoint").map(String::as_str),
            Some("http://127.0.0.1:9000")
        );
        assert_eq!(
            options
                .get("aws_virtual_hosted_style_request")
                .map(String::as_str),
            Some("false")
        );
        assert_eq!(
            options
                .get("azure_storage_account_name")
                .map(String::as_str),
            Some("acct")
        );
        assert!(!options.contains_key("home"));
        // a GCS emulator: its host, plain HTTP, no OAuth
        let gcs = HashMap::from([
            (
                "gcs.service.host".to_string(),
                "http://127.0.0.1:9023".to_string(),
            ),
            ("gcs.no-auth".to_string(), "true".to_string()),
        ]);
        let gcs = store_options(vec![], &gcs).unwrap();
        assert_eq!(gcs["google_base_url"], "http://127.0.0.1:9023");
        assert_eq!(gcs["allow_http"], "true");
        assert!(gcs["google_service_account_key"].contains("\"disable_oauth\": true"));
        assert!(!options.keys().any(|k| k.contains("compression")));
        assert_eq!(options.get("allow_http").map(String::as_str), Some("true"));
        let https = HashMap::from([(
            "s3.endpoint".to_string(),
            "https://s3.example.com".to_string(),
        )]);
        assert!(!store_options(vec![], &https)
            .unwrap()
            .contains_key("allow_http"));
    }

    #[cfg(feature = "cloud")]
    #[test]
    fn one_store_per_bucket_and_option_set() {
        let opts = |key: &str| {
            HashMap::from([
                ("aws_region".to_string(), "eu-west-1".to_string()),
                ("aws_access_key_id".to_string(), key.to_string()),
                ("aws_secret_access_key".to_string(), "s".to_string()),
            ])
        };
        let a = shared_store("s3://bucket-a", opts("k1")).unwrap();
        let again = shared_store("s3://bucket-a", opts("k1")).unwrap();
        let other_key = shared_store("s3://bucket-a", opts("k2")).unwrap();
        let other_bucket = shared_store("s3://bucket-b", opts("k1")).unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        assert!(!Arc::ptr_eq(&a, &other_key));
        assert!(!Arc::ptr_eq(&a, &other_bucket));
        // s3a:// is the Hadoop name of the same store
        let s3a = shared_store("s3a://bucket-a", opts("k1")).unwrap();
        assert!(s3a.to_string().contains("bucket-a"), "{s3a}");
    }
}
