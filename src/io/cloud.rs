//! Object store configuration for cloud locations (`s3://`, `gs://`, `az://`, …).
//!
//! Options come from three places, later ones winning: the process environment
//! (`AWS_*`, `GOOGLE_*`, `AZURE_*` variables, as `object_store`'s builders read them),
//! the table's or catalog's properties under the Iceberg FileIO names
//! (`s3.endpoint`, `s3.region`, `s3.access-key-id`, `s3.secret-access-key`,
//! `s3.session-token`, `s3.path-style-access`, `adls.account-name`, `adls.account-key`,
//! `gcs.oauth2.token`), and `object_store`'s own keys (`aws_region`, `google_service_account`,
//! `azure_storage_account_name`, …) given directly.
//!
//! The cloud stores are compiled in with the `cloud` cargo feature (object_store's `aws`,
//! `gcp` and `azure`); without it such locations fail with an error naming the feature.

use std::collections::HashMap;

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
        _ => {
            let direct = ["aws_", "google_", "azure_"]
                .iter()
                .any(|p| key.starts_with(p));
            return direct.then(|| (key.to_string(), value.to_string()));
        }
    };
    Some((mapped.to_string(), value.to_string()))
}

/// The options for `object_store::parse_url_opts`: `env` (name, value) pairs, then
/// `properties`, later keys overriding earlier ones.
pub fn store_options<'a>(
    env: impl IntoIterator<Item = (String, String)>,
    properties: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> HashMap<String, String> {
    let mut options = HashMap::new();
    for (key, value) in env {
        let lower = key.to_ascii_lowercase();
        if ["aws_", "google_", "azure_"]
            .iter()
            .any(|p| lower.starts_with(p))
        {
            options.insert(lower, value);
        }
    }
    for (key, value) in properties {
        if let Some((k, v)) = iceberg_property_to_option(key, value) {
            options.insert(k, v);
        }
    }
    options
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let options = store_options(env, &props);
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
        assert!(!options.keys().any(|k| k.contains("compression")));
    }
}
