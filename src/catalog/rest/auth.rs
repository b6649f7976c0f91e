//! Authentication to a REST catalog: a fixed bearer `token`, or OAuth2 client
//! credentials (`credential` = `client_id:client_secret`, or just a secret) exchanged at
//! `oauth2-server-uri` (default `<uri>/v1/oauth/tokens`) for an access token with `scope`
//! (default `catalog`), as the REST spec's `/v1/oauth/tokens` and RFC 6749 §4.4 define
//! it. The token is fetched on first use and again before it expires (at 90 % of its
//! `expires_in`, or when a request was answered 401).
//!
//! Secrets never reach an error message or `Debug` output.

use std::fmt;
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::Mutex;
use url::Url;

use super::config::RestConfig;
use crate::error::{Error, ErrorKind, Result};

/// How requests authenticate.
pub enum Auth {
    /// No `Authorization` header.
    None,
    /// `Authorization: Bearer <token>`.
    Token(String),
    /// OAuth2 client credentials, exchanged for a token.
    ClientCredentials(Box<ClientCredentials>),
}

/// OAuth2 client credentials and the token they were last exchanged for.
pub struct ClientCredentials {
    /// The token endpoint.
    server_uri: Url,
    /// `client_id` (empty when the credential is only a secret).
    client_id: String,
    /// `client_secret`.
    client_secret: String,
    /// `scope`.
    scope: String,
    /// The current token and when to fetch a new one.
    cached: Mutex<Option<(String, Option<Instant>)>>,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::None => f.write_str("None"),
            Auth::Token(_) => f.write_str("Token(***)"),
            Auth::ClientCredentials(c) => f
                .debug_struct("ClientCredentials")
                .field("server_uri", &c.server_uri.as_str())
                .field("client_id", &c.client_id)
                .field("client_secret", &"***")
                .field("scope", &c.scope)
                .finish(),
        }
    }
}

/// The token endpoint's answer (RFC 6749 §5.1).
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// The token endpoint's error (RFC 6749 §5.2; some servers use the REST `ErrorModel`).
#[derive(Deserialize)]
struct TokenError {
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(default)]
    error_description: Option<String>,
}

impl Auth {
    /// The authentication `config` asks for: `token`, else `credential`, else none.
    ///
    /// Errors: an `oauth2-server-uri` that is not a URL.
    pub fn from_config(config: &RestConfig) -> Result<Self> {
        if let Some(token) = config.get("token") {
            return Ok(Auth::Token(token.to_string()));
        }
        let Some(credential) = config.get("credential") else {
            return Ok(Auth::None);
        };
        let (client_id, client_secret) = match credential.split_once(':') {
            Some((id, secret)) => (id.to_string(), secret.to_string()),
            None => (String::new(), credential.to_string()),
        };
        let server_uri = match config.get("oauth2-server-uri") {
            // the value is not shown: it may hold a secret the URL check could not see
            Some(u) => Url::parse(u).map_err(|e| {
                Error::invalid_argument("REST catalog 'oauth2-server-uri' is not a URL")
                    .with_source(e)
            })?,
            None => {
                let mut u = config.uri.clone();
                u.path_segments_mut()
                    .map_err(|_| Error::invalid_argument("REST catalog 'uri' has no path"))?
                    .pop_if_empty()
                    .extend(["v1", "oauth", "tokens"]);
                u
            }
        };
        Ok(Auth::ClientCredentials(Box::new(ClientCredentials {
            server_uri,
            client_id,
            client_secret,
            scope: config.get("scope").unwrap_or("catalog").to_string(),
            cached: Mutex::new(None),
        })))
    }

    /// The `Authorization` header value, fetching or refreshing an OAuth2 token when
    /// needed (`force_refresh`: the last token was refused).
    ///
    /// Errors: [`ErrorKind::PermissionDenied`] when the token endpoint refuses the
    /// credential (its error code and description, never the secret); [`ErrorKind::Io`]
    /// naming the endpoint when it cannot be reached.
    pub async fn header(
        &self,
        client: &reqwest::Client,
        force_refresh: bool,
    ) -> Result<Option<String>> {
        match self {
            Auth::None => Ok(None),
            Auth::Token(t) => Ok(Some(format!("Bearer {t}"))),
            Auth::ClientCredentials(c) => {
                let ClientCredentials {
                    server_uri,
                    client_id,
                    client_secret,
                    scope,
                    cached,
                } = c.as_ref();
                let mut cached = cached.lock().await;
                if let Some((token, refresh_at)) = cached.as_ref() {
                    let fresh = refresh_at.is_none_or(|at| Instant::now() < at);
                    if fresh && !force_refresh {
                        return Ok(Some(format!("Bearer {token}")));
                    }
                }
                let mut form = vec![
                    ("grant_type", "client_credentials"),
                    ("client_secret", client_secret.as_str()),
                    ("scope", scope.as_str()),
                ];
                if !client_id.is_empty() {
                    form.push(("client_id", client_id.as_str()));
                }
                let response = client
                    .post(server_uri.clone())
                    .form(&form)
                    .send()
                    .await
                    .map_err(|e| {
                        Error::new(
                            ErrorKind::Io,
                            format!("cannot reach the OAuth2 token endpoint {server_uri}"),
                        )
                        .with_source(super::http::WithCauses::new(e))
                    })?;
                let status = response.status();
                let body = response.bytes().await.unwrap_or_default();
                if !status.is_success() {
                    let detail = serde_json::from_slice::<TokenError>(&body)
                        .ok()
                        .map(|e| {
                            let code = match e.error {
                                Some(serde_json::Value::String(s)) => s,
                                Some(serde_json::Value::Object(o)) => o
                                    .get("message")
                                    .and_then(|m| m.as_str())
                                    .unwrap_or_default()
                                    .to_string(),
                                _ => String::new(),
                            };
                            match e.error_description {
                                Some(d) => format!("{code}: {d}"),
                                None => code,
                            }
                        })
                        .unwrap_or_default();
                    let kind = if matches!(status.as_u16(), 400 | 401 | 403) {
                        ErrorKind::PermissionDenied
                    } else {
                        ErrorKind::Io
                    };
                    return Err(Error::new(
                        kind,
                        format!(
                            "the OAuth2 token endpoint {server_uri} refused client '{client_id}' \
                             ({status}{}{detail})",
                            if detail.is_empty() { "" } else { ": " }
                        ),
                    ));
                }
                let token: TokenResponse = serde_json::from_slice(&body).map_err(|e| {
                    Error::invalid_data(format!(
                        "the OAuth2 token endpoint {server_uri} answered without an access_token"
                    ))
                    .with_source(e)
                })?;
                let refresh_at = token
                    .expires_in
                    .map(|s| Instant::now() + Duration::from_millis(s.saturating_mul(900)));
                let header = format!("Bearer {}", token.access_token);
                *cached = Some((token.access_token, refresh_at));
                Ok(Some(header))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn config(props: &[(&str, &str)]) -> RestConfig {
        let props: BTreeMap<String, String> = props
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RestConfig::new("rest", props).unwrap()
    }

    #[test]
    fn picks_the_scheme_and_hides_secrets() {
        let a = Auth::from_config(&config(&[
            ("uri", "http://h:1/api/catalog/"),
            ("credential", "me:s3cr3t"),
        ]))
        .unwrap();
        let debug = format!("{a:?}");
        assert!(!debug.contains("s3cr3t"), "{debug}");
        assert!(
            debug.contains("http://h:1/api/catalog/v1/oauth/tokens"),
            "{debug}"
        );
        assert!(debug.contains("\"catalog\""), "{debug}");
        let t = Auth::from_config(&config(&[("uri", "http://h"), ("token", "tok-123")])).unwrap();
        assert!(!format!("{t:?}").contains("tok-123"));
        let n = Auth::from_config(&config(&[("uri", "http://h")])).unwrap();
        assert!(matches!(n, Auth::None));
        let custom = Auth::from_config(&config(&[
            ("uri", "http://h"),
            ("credential", "only-secret"),
            ("oauth2-server-uri", "http://idp/token"),
            ("scope", "PRINCIPAL_ROLE:ALL"),
        ]))
        .unwrap();
        let Auth::ClientCredentials(c) = custom else {
            panic!("not client credentials");
        };
        assert_eq!(c.server_uri.as_str(), "http://idp/token");
        assert_eq!(
            (c.client_id.as_str(), c.scope.as_str()),
            ("", "PRINCIPAL_ROLE:ALL")
        );
    }
}
