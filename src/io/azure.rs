//! Azure (ADLS Gen2 / Blob storage) locations and Iceberg's `adls.*` FileIO properties.
//!
//! Locations: `abfs[s]://<container>@<account>.dfs.core.windows.net/<path>` (Iceberg's
//! ADLS form), `wasb[s]://<container>@<account>.blob.core.windows.net/<path>` (the
//! Hadoop blob form, read through the same Blob API: object_store has no `wasb`
//! scheme, so it is given the `abfs` form of the same container and account), and
//! object_store's `az://<container>/<path>` (account from the properties).
//!
//! Properties, as Iceberg Java's `AzureProperties` and PyIceberg name them:
//! - `adls.account-name`, `adls.account-key` (PyIceberg), `adls.auth.shared-key.account.name`,
//!   `adls.auth.shared-key.account.key` (Iceberg Java): the shared key;
//! - `adls.connection-string.<account>`: for that account, either an endpoint URL
//!   (Iceberg Java: `http://127.0.0.1:10000/devstoreaccount1` for the Azurite emulator)
//!   or an Azure connection string (`BlobEndpoint=…;AccountName=…;AccountKey=…`);
//!   `adls.connection-string` without an account applies to every account;
//! - `adls.sas-token.<account>`: a SAS token for that account.
//!
//! An endpoint starting with `http://` allows plain HTTP (a local emulator).

use std::collections::HashMap;

/// The `(container, account)` of an Azure location's authority
/// (`container@account.dfs.core.windows.net`); `None` for other forms.
fn container_and_account(store_url: &str) -> Option<(&str, &str)> {
    let (_, rest) = store_url.split_once("://")?;
    let authority = rest.split('/').next()?;
    let (container, host) = authority.split_once('@')?;
    let account = host.split('.').next()?;
    Some((container, account))
}

/// The URL object_store parses for an Azure `store_url`: `wasb[s]://c@a.blob…` becomes
/// `abfs[s]://c@a.blob…` (the same container through the Blob API); others unchanged.
pub(crate) fn parseable_url(store_url: &str) -> String {
    for (from, to) in [("wasbs://", "abfss://"), ("wasb://", "abfs://")] {
        if let Some(rest) = store_url.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    store_url.to_string()
}

/// Whether `store_url` is an Azure location.
pub(crate) fn is_azure(store_url: &str) -> bool {
    [
        "abfs://", "abfss://", "wasb://", "wasbs://", "az://", "adl://", "azure://",
    ]
    .iter()
    .any(|p| store_url.starts_with(p))
}

/// object_store options from one `adls.connection-string` value: an endpoint URL, or
/// `Key=Value;…` pairs (`BlobEndpoint`, `AccountName`, `AccountKey`,
/// `SharedAccessSignature`).
fn connection_options(value: &str, options: &mut HashMap<String, String>) {
    let value = value.trim();
    let mut endpoint = None;
    if value.starts_with("http://") || value.starts_with("https://") {
        endpoint = Some(value.to_string());
    } else {
        for pair in value.split(';') {
            let Some((k, v)) = pair.split_once('=') else {
                continue;
            };
            let key = match k.trim() {
                "BlobEndpoint" => {
                    endpoint = Some(v.trim().to_string());
                    continue;
                }
                "AccountName" => "azure_storage_account_name",
                "AccountKey" => "azure_storage_account_key",
                "SharedAccessSignature" => "azure_storage_sas_key",
                _ => continue,
            };
            options.insert(key.to_string(), v.trim().to_string());
        }
    }
    if let Some(endpoint) = endpoint {
        if endpoint.starts_with("http://") {
            options.insert("allow_http".to_string(), "true".to_string());
        }
        options.insert(
            "azure_storage_endpoint".to_string(),
            endpoint.trim_end_matches('/').to_string(),
        );
    }
}

/// Add the object_store options of the `adls.*` properties for `store_url` (see the
/// module docs) to `options`; per-account properties of other accounts are ignored.
pub(crate) fn add_adls_options<'a>(
    store_url: &str,
    properties: impl IntoIterator<Item = (&'a String, &'a String)>,
    options: &mut HashMap<String, String>,
) {
    let properties: Vec<(&String, &String)> = properties.into_iter().collect();
    let account = container_and_account(store_url)
        .map(|(_, a)| a.to_string())
        .or_else(|| {
            properties
                .iter()
                .find(|(k, _)| {
                    matches!(
                        k.as_str(),
                        "adls.account-name" | "adls.auth.shared-key.account.name"
                    )
                })
                .map(|(_, v)| v.to_string())
        });
    if let Some(account) = &account {
        options.insert("azure_storage_account_name".into(), account.clone());
    }
    let for_account = |suffix: &str| account.as_deref().is_some_and(|a| a == suffix);
    // the generic connection string first, so an account's own one wins
    let mut ordered = properties;
    ordered.sort_by_key(|(k, _)| k.len());
    for (key, value) in ordered {
        match key.as_str() {
            "adls.account-name" | "adls.auth.shared-key.account.name" if account.is_none() => {
                options.insert("azure_storage_account_name".into(), value.clone());
            }
            "adls.account-key" | "adls.auth.shared-key.account.key" => {
                options.insert("azure_storage_account_key".into(), value.clone());
            }
            "adls.connection-string" => connection_options(value, options),
            _ => {
                if let Some(acct) = key.strip_prefix("adls.connection-string.") {
                    if for_account(acct) {
                        connection_options(value, options);
                    }
                } else if let Some(acct) = key.strip_prefix("adls.sas-token.") {
                    if for_account(acct) {
                        options.insert("azure_storage_sas_key".into(), value.clone());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn maps_adls_properties_for_the_locations_account() {
        let p = props(&[
            ("adls.auth.shared-key.account.key", "k"),
            ("adls.connection-string.acct", "http://127.0.0.1:10000/acct"),
            ("adls.connection-string.other", "https://other.example"),
            ("adls.sas-token.other", "sig"),
        ]);
        let mut o = HashMap::new();
        add_adls_options("abfss://c@acct.dfs.core.windows.net", &p, &mut o);
        assert_eq!(o["azure_storage_account_name"], "acct");
        assert_eq!(o["azure_storage_account_key"], "k");
        assert_eq!(o["azure_storage_endpoint"], "http://127.0.0.1:10000/acct");
        assert_eq!(o["allow_http"], "true");
        assert!(!o.contains_key("azure_storage_sas_key"));
        let conn = props(&[(
            "adls.connection-string",
            "DefaultEndpointsProtocol=http;AccountName=dev;AccountKey=a2V5;\
             BlobEndpoint=http://127.0.0.1:1/dev;",
        )]);
        let mut o = HashMap::new();
        add_adls_options("az://c", &conn, &mut o);
        assert_eq!(o["azure_storage_account_name"], "dev");
        assert_eq!(o["azure_storage_account_key"], "a2V5");
        assert_eq!(o["azure_storage_endpoint"], "http://127.0.0.1:1/dev");
    }

    #[test]
    fn wasb_is_read_through_the_blob_api() {
        assert_eq!(
            parseable_url("wasbs://c@a.blob.core.windows.net"),
            "abfss://c@a.blob.core.windows.net"
        );
        assert_eq!(parseable_url("s3://b"), "s3://b");
        assert!(is_azure("wasb://c@a.blob.core.windows.net"));
        assert!(!is_azure("s3://b"));
    }
}
