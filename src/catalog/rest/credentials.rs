//! Vended storage credentials of REST tables, and their refresh.
//!
//! A `LoadTableResult` (REST spec) carries FileIO properties for the table in `config`
//! and credentials by location prefix in `storage-credentials`. [`table_credentials`]
//! turns them into the table FileIO's [`StorageCredential`]s: one per entry (a
//! location uses the entry with the longest prefix matching it), and, when there are
//! none but `config` holds an S3 credential with an expiry, that credential for the
//! table's location.
//!
//! An S3 credential with `s3.session-token-expires-at-ms` is refreshed before it
//! expires (see [`crate::io::vended`]) unless `client.refresh-credentials-enabled` is
//! `false`: from `client.refresh-credentials-endpoint` when the table's config or the
//! catalog names one (relative to the catalog `uri`, as in Iceberg Java), else from the
//! REST `loadCredentials` endpoint (`GET /v1/{prefix}/namespaces/{namespace}/tables/
//! {table}/credentials`) when the server lists it among its `endpoints` in
//! `GET /v1/config`, else by loading the table again with
//! `X-Iceberg-Access-Delegation: vended-credentials`. An endpoint answering 404, 405 or
//! 501 falls back to the reload.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use reqwest::Method;
use url::Url;

use super::http::RestClient;
use super::types::{LoadCredentialsResponse, LoadTableResult};
use super::DELEGATION;
use crate::catalog::TableIdent;
use crate::error::{Error, Result};
use crate::io::vended::{
    shared_provider, CredentialRefresher, ExpiringS3Credential, VendedS3Credentials,
    S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_SESSION_TOKEN, S3_SESSION_TOKEN_EXPIRES_AT_MS,
};
use crate::io::StorageCredential;

/// Iceberg's property naming the endpoint that refreshes vended credentials.
pub const REFRESH_CREDENTIALS_ENDPOINT: &str = "client.refresh-credentials-endpoint";
/// Iceberg's property switching the refresh of vended credentials (default `true`).
pub const REFRESH_CREDENTIALS_ENABLED: &str = "client.refresh-credentials-enabled";
/// The `loadCredentials` endpoint as the REST spec's `CatalogConfig.endpoints` names it.
pub const LOAD_CREDENTIALS_ENDPOINT: &str =
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials";

/// Fetches fresh credentials of one table from the REST catalog.
#[derive(Debug)]
pub struct RestCredentialRefresher {
    client: Arc<RestClient>,
    /// The table, for messages.
    table: String,
    /// The credentials endpoint, when the server offers one.
    credentials_url: Option<Url>,
    /// The table's `loadTable` URL.
    table_url: Url,
}

#[async_trait]
impl CredentialRefresher for RestCredentialRefresher {
    async fn refresh(&self) -> Result<Vec<(String, HashMap<String, String>)>> {
        let context = || {
            format!(
                "refreshing the vended credentials of table '{}'",
                self.table
            )
        };
        if let Some(url) = &self.credentials_url {
            match self
                .client
                .send::<LoadCredentialsResponse>(Method::GET, url.clone(), None, &[], true)
                .await
            {
                Ok(Some(answer)) => {
                    return Ok(answer
                        .storage_credentials
                        .into_iter()
                        .map(|c| (c.prefix, c.config))
                        .collect())
                }
                Ok(None) => {
                    return Err(Error::invalid_data(format!(
                        "{}: GET {url} answered without credentials",
                        context()
                    )))
                }
                // the server does not serve it after all: reload the table instead
                Err(e) if matches!(e.status.map(|s| s.as_u16()), Some(404 | 405 | 501)) => {}
                Err(e) => return Err(e.error.context(context())),
            }
        }
        let answer: LoadTableResult = self
            .client
            .send(
                Method::GET,
                self.table_url.clone(),
                None,
                &[DELEGATION],
                true,
            )
            .await
            .map_err(|e| e.error.context(context()))?
            .ok_or_else(|| Error::invalid_data(format!("{}: no table in the answer", context())))?;
        let location = answer
            .metadata
            .get("location")
            .and_then(|l| l.as_str())
            .unwrap_or_default()
            .to_string();
        let mut out: Vec<(String, HashMap<String, String>)> = answer
            .storage_credentials
            .into_iter()
            .map(|c| (c.prefix, c.config))
            .collect();
        if out.is_empty() && answer.config.contains_key(S3_ACCESS_KEY_ID) {
            out.push((location, answer.config));
        }
        Ok(out)
    }
}

/// What [`table_credentials`] needs to know of the catalog.
pub struct CredentialContext<'a> {
    /// The catalog's HTTP client.
    pub client: &'a Arc<RestClient>,
    /// Names this catalog instance (providers are shared per instance, table and prefix).
    pub instance: &'a str,
    /// The catalog's properties after `GET /v1/config`.
    pub catalog_properties: &'a BTreeMap<String, String>,
    /// The catalog `uri` (base of a relative refresh endpoint).
    pub uri: &'a Url,
    /// Whether the server lists [`LOAD_CREDENTIALS_ENDPOINT`].
    pub offers_load_credentials: bool,
}

fn is_s3(prefix: &str) -> bool {
    prefix.starts_with("s3://") || prefix.starts_with("s3a://")
}

/// The FileIO credentials of a loaded table (see the module docs): `table_location` is
/// the metadata's `location`, `table_url` its `loadTable` URL.
///
/// Errors: [`ErrorKind::InvalidData`](crate::ErrorKind) for a credential without its
/// secret or with an expiry that is not milliseconds, naming the property (never a
/// value); [`ErrorKind::InvalidArgument`](crate::ErrorKind) for a prefix that is not a
/// location or a refresh endpoint that is not a URL path.
pub async fn table_credentials(
    ctx: &CredentialContext<'_>,
    ident: &TableIdent,
    table_location: &str,
    table_url: &Url,
    config: &HashMap<String, String>,
    vended: Vec<(String, HashMap<String, String>)>,
) -> Result<Vec<StorageCredential>> {
    let setting = |key: &str| {
        config
            .get(key)
            .or_else(|| ctx.catalog_properties.get(key))
            .map(|v| v.trim().to_string())
    };
    let mut vended = vended;
    if vended.is_empty()
        && config.contains_key(S3_ACCESS_KEY_ID)
        && config.contains_key(S3_SESSION_TOKEN_EXPIRES_AT_MS)
    {
        let keys = [
            S3_ACCESS_KEY_ID,
            S3_SECRET_ACCESS_KEY,
            S3_SESSION_TOKEN,
            S3_SESSION_TOKEN_EXPIRES_AT_MS,
        ];
        let credential = config
            .iter()
            .filter(|(k, _)| keys.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        vended.push((table_location.to_string(), credential));
    }
    if vended.is_empty() {
        return Ok(vec![]);
    }
    let enabled =
        !setting(REFRESH_CREDENTIALS_ENABLED).is_some_and(|v| v.eq_ignore_ascii_case("false"));
    let credentials_url = match setting(REFRESH_CREDENTIALS_ENDPOINT) {
        Some(endpoint) => {
            let mut base = ctx.uri.clone();
            if !base.path().ends_with('/') {
                base.set_path(&format!("{}/", base.path()));
            }
            Some(base.join(endpoint.trim_start_matches('/')).map_err(|e| {
                Error::invalid_argument(format!(
                    "'{REFRESH_CREDENTIALS_ENDPOINT}' '{endpoint}' is not a URL path"
                ))
                .with_source(e)
            })?)
        }
        None if ctx.offers_load_credentials => {
            let mut url = table_url.clone();
            url.path_segments_mut()
                .map_err(|_| Error::invalid_argument("REST catalog 'uri' has no path"))?
                .push("credentials");
            Some(url)
        }
        None => None,
    };
    let refresher: Arc<dyn CredentialRefresher> = Arc::new(RestCredentialRefresher {
        client: Arc::clone(ctx.client),
        table: ident.to_string(),
        credentials_url,
        table_url: table_url.clone(),
    });
    let mut out = vec![];
    for (prefix, properties) in vended {
        let mut credential = StorageCredential::new(&prefix, properties)?;
        let expiring = if is_s3(&credential.prefix) {
            ExpiringS3Credential::from_properties(&credential.properties)
                .map_err(|e| e.context(format!("table '{ident}' credential for '{prefix}'")))?
                .filter(|c| c.expires_at_ms().is_some())
        } else {
            None
        };
        if let Some(expiring) = expiring {
            let key = format!("{}|{ident}|{}", ctx.instance, credential.prefix);
            let owner = format!("table '{ident}'");
            let location = credential.prefix.clone();
            let refresher = enabled.then(|| Arc::clone(&refresher));
            let provider = shared_provider(&key, expiring, |c| {
                VendedS3Credentials::new(&owner, &location, c, refresher)
            })
            .await?;
            credential.s3_provider = Some((key, provider));
        }
        out.push(credential);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::rest::config::RestConfig;
    use crate::catalog::Namespace;

    fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[tokio::test]
    async fn credentials_from_storage_credentials_or_an_expiring_config() {
        let uri = Url::parse("http://127.0.0.1:1/api").unwrap();
        let config = RestConfig::new(
            "rest",
            BTreeMap::from([("uri".to_string(), uri.to_string())]),
        )
        .unwrap();
        let client = Arc::new(RestClient::new(&config).unwrap());
        let instance = format!("test-{}", uuid::Uuid::new_v4());
        let catalog_properties = BTreeMap::new();
        let ctx = CredentialContext {
            client: &client,
            instance: &instance,
            catalog_properties: &catalog_properties,
            uri: &uri,
            offers_load_credentials: false,
        };
        let ident = TableIdent::new(Namespace::parse("ns"), "t");
        let table_url = Url::parse("http://127.0.0.1:1/api/v1/namespaces/ns/tables/t").unwrap();
        let later = (chrono::Utc::now().timestamp_millis() + 3_600_000).to_string();
        let expiring = [
            (S3_ACCESS_KEY_ID, "k"),
            (S3_SECRET_ACCESS_KEY, "s"),
            (S3_SESSION_TOKEN_EXPIRES_AT_MS, later.as_str()),
        ];
        // nothing vended
        let none = table_credentials(
            &ctx,
            &ident,
            "s3://b/ns/t",
            &table_url,
            &HashMap::new(),
            vec![],
        )
        .await
        .unwrap();
        assert!(none.is_empty());
        // an expiring credential in `config` only: for the table's location, refreshed
        let from_config = table_credentials(
            &ctx,
            &ident,
            "s3://b/ns/t",
            &table_url,
            &props(&[
                ("s3.endpoint", "http://s3"),
                expiring[0],
                expiring[1],
                expiring[2],
            ]),
            vec![],
        )
        .await
        .unwrap();
        assert_eq!(from_config.len(), 1);
        assert_eq!(from_config[0].prefix, "s3://b/ns/t");
        assert!(from_config[0].s3_provider.is_some());
        assert!(!from_config[0].properties.contains_key("s3.endpoint"));
        // storage-credentials: a fixed one and an expiring one, each for its prefix
        let vended = table_credentials(
            &ctx,
            &ident,
            "s3://b/ns/t",
            &table_url,
            &HashMap::new(),
            vec![
                ("s3://b/".to_string(), props(&[expiring[0], expiring[1]])),
                ("s3://b/ns/t/data".to_string(), props(&expiring)),
            ],
        )
        .await
        .unwrap();
        assert_eq!(vended.len(), 2);
        assert_eq!(vended[0].prefix, "s3://b");
        assert!(vended[0].s3_provider.is_none());
        assert!(vended[1].s3_provider.is_some());
        let debug = format!("{vended:?}");
        assert!(
            !debug.contains("\"k\"") && !debug.contains("\"s\""),
            "{debug}"
        );
        // a broken expiry is an error naming the property, not the value of a secret
        let err = table_credentials(
            &ctx,
            &ident,
            "s3://b/ns/t",
            &table_url,
            &HashMap::new(),
            vec![(
                "s3://b/ns/t".to_string(),
                props(&[
                    expiring[0],
                    expiring[1],
                    (S3_SESSION_TOKEN_EXPIRES_AT_MS, "x"),
                ]),
            )],
        )
        .await
        .unwrap_err();
        assert!(
            err.to_string().contains(S3_SESSION_TOKEN_EXPIRES_AT_MS),
            "{err}"
        );
    }
}
