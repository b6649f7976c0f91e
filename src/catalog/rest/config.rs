//! The REST catalog's properties, with Iceberg's names (PyIceberg's and Java's
//! `RESTCatalog`): `uri`, `warehouse`, `credential`, `token`, `oauth2-server-uri`,
//! `scope`, `prefix`, `header.<Name>`, `rest.client.connection-timeout-ms`,
//! `rest.client.socket-timeout-ms`; every other property (`s3.endpoint`, …) is passed to
//! the FileIO of the tables it loads.
//!
//! Secrets (`credential`, `token`, and any property whose name holds `secret`,
//! `password`, `token` or `credential`) never appear in `Debug` output: [`redacted`]
//! replaces their values.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::Duration;

use url::Url;

use crate::error::{Error, Result};
pub use crate::io::redacted;

/// The properties a REST catalog was configured with, checked.
#[derive(Clone)]
pub struct RestConfig {
    /// The catalog's name.
    pub name: String,
    /// The service's base URL (`/v1/...` is appended).
    pub uri: Url,
    /// All properties as given (secrets included; see the `Debug` impl).
    pub properties: BTreeMap<String, String>,
    /// Connection timeout (`rest.client.connection-timeout-ms`, default 10 s).
    pub connect_timeout: Duration,
    /// Whole-request timeout (`rest.client.socket-timeout-ms`, default 120 s).
    pub request_timeout: Duration,
}

impl fmt::Debug for RestConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestConfig")
            .field("name", &self.name)
            .field("uri", &self.uri.as_str())
            .field("properties", &redacted(&self.properties))
            .finish()
    }
}

fn millis(properties: &BTreeMap<String, String>, key: &str, default: u64) -> Result<Duration> {
    match properties.get(key) {
        None => Ok(Duration::from_millis(default)),
        Some(v) => v
            .trim()
            .parse::<u64>()
            .map(Duration::from_millis)
            .map_err(|_| {
                Error::invalid_argument(format!(
                    "REST catalog property '{key}' is '{v}', not a number of milliseconds"
                ))
            }),
    }
}

impl RestConfig {
    /// Check the properties: `uri` must be an `http(s)://` URL.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming the property.
    pub fn new(name: &str, properties: BTreeMap<String, String>) -> Result<Self> {
        let uri_text = properties
            .get("uri")
            .ok_or_else(|| Error::invalid_argument("REST catalog config has no 'uri'"))?;
        let uri = Url::parse(uri_text.trim()).map_err(|e| {
            Error::invalid_argument(format!("REST catalog 'uri' '{uri_text}' is not a URL"))
                .with_source(e)
        })?;
        if !matches!(uri.scheme(), "http" | "https") || uri.host_str().is_none() {
            return Err(Error::invalid_argument(format!(
                "REST catalog 'uri' '{uri_text}' is not an http:// or https:// URL"
            )));
        }
        for key in ["uri", "oauth2-server-uri"] {
            if let Some(value) = properties.get(key) {
                crate::io::check_url_without_secrets(key, value)?;
            }
        }
        let connect_timeout = millis(&properties, "rest.client.connection-timeout-ms", 10_000)?;
        let request_timeout = millis(&properties, "rest.client.socket-timeout-ms", 120_000)?;
        Ok(Self {
            name: name.to_string(),
            uri,
            properties,
            connect_timeout,
            request_timeout,
        })
    }

    /// A property.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.properties.get(key).map(String::as_str)
    }

    /// The extra HTTP headers (`header.<Name>` = value).
    pub fn headers(&self) -> Vec<(String, String)> {
        self.properties
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix("header.")
                    .map(|h| (h.to_string(), v.clone()))
            })
            .collect()
    }

    /// The properties after the server's `GET /v1/config` answer: its `defaults` under
    /// ours, its `overrides` over them (REST spec: `CatalogConfig`).
    pub fn merged_with_server(
        &self,
        defaults: &HashMap<String, String>,
        overrides: &HashMap<String, String>,
    ) -> BTreeMap<String, String> {
        let mut out: BTreeMap<String, String> = defaults.clone().into_iter().collect();
        out.extend(self.properties.clone());
        out.extend(overrides.clone());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_uri_and_hides_secrets() {
        let props: BTreeMap<String, String> = [
            ("uri", "http://127.0.0.1:8181/api/catalog"),
            ("credential", "client:very-secret"),
            ("s3.secret-access-key", "s3-secret"),
            ("header.X-Api-Key", "header-secret"),
            ("warehouse", "s3://wh"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let c = RestConfig::new("rest", props.clone()).unwrap();
        let debug = format!("{c:?}");
        for secret in ["very-secret", "s3-secret", "header-secret"] {
            assert!(!debug.contains(secret), "{debug}");
        }
        assert!(debug.contains("s3://wh"), "{debug}");
        assert_eq!(
            c.headers(),
            vec![("X-Api-Key".to_string(), "header-secret".to_string())]
        );
        let mut bad = props.clone();
        bad.insert("uri".into(), "ftp://x".into());
        let err = RestConfig::new("rest", bad).unwrap_err();
        assert!(err.to_string().contains("ftp://x"), "{err}");
        let mut bad = props.clone();
        bad.insert("uri".into(), "http://u:pw@host".into());
        let err = RestConfig::new("rest", bad).unwrap_err().to_string();
        assert!(!err.contains("pw"), "{err}");
        // a tester's: secrets in the token endpoint's URL, or in the query of either, were
        // shown in the errors of requests to them
        for (key, url, secret) in [
            (
                "oauth2-server-uri",
                "http://idp-user:IDP-PASSWORD@idp/tokens",
                "IDP-PASSWORD",
            ),
            (
                "oauth2-server-uri",
                "http://idp/tokens?key=SECRETQ",
                "SECRETQ",
            ),
            (
                "uri",
                "http://127.0.0.1:8181/?api_key=API-KEY-SECRET",
                "API-KEY-SECRET",
            ),
        ] {
            let mut bad = props.clone();
            bad.insert(key.into(), url.into());
            let err = RestConfig::new("rest", bad).unwrap_err().to_string();
            assert!(err.contains(&format!("'{key}' holds")), "{err}");
            assert!(!err.contains(secret), "{err}");
        }
    }

    #[test]
    fn server_defaults_under_and_overrides_over() {
        let c = RestConfig::new(
            "rest",
            [("uri", "http://h"), ("warehouse", "mine"), ("a", "1")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
        .unwrap();
        let merged = c.merged_with_server(
            &HashMap::from([
                ("warehouse".to_string(), "theirs".to_string()),
                ("b".to_string(), "2".to_string()),
            ]),
            &HashMap::from([("a".to_string(), "forced".to_string())]),
        );
        assert_eq!(merged["warehouse"], "mine");
        assert_eq!(merged["b"], "2");
        assert_eq!(merged["a"], "forced");
    }
}
