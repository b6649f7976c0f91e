//! Request and response bodies of the Iceberg REST catalog (`open-api/
//! rest-catalog-open-api.yaml`), the parts icefloe sends and reads.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// `CatalogConfig`: the answer to `GET /v1/config`.
#[derive(Debug, Default, Deserialize)]
pub struct CatalogConfigResponse {
    /// Properties the client's own override.
    #[serde(default)]
    pub defaults: HashMap<String, String>,
    /// Properties that override the client's.
    #[serde(default)]
    pub overrides: HashMap<String, String>,
    /// The endpoints the server supports (`"GET /v1/{prefix}/namespaces"`, …); absent
    /// from older servers.
    #[serde(default)]
    pub endpoints: Option<Vec<String>>,
}

/// `ListNamespacesResponse`.
#[derive(Debug, Deserialize)]
pub struct ListNamespacesResponse {
    /// Each namespace as its levels.
    #[serde(default)]
    pub namespaces: Vec<Vec<String>>,
    /// The next page's token, when there is one.
    #[serde(default, rename = "next-page-token")]
    pub next_page_token: Option<String>,
}

/// `GetNamespaceResponse` / `CreateNamespaceResponse`.
#[derive(Debug, Deserialize)]
pub struct NamespaceResponse {
    /// The namespace's properties.
    #[serde(default)]
    pub properties: Option<HashMap<String, String>>,
}

/// `UpdateNamespacePropertiesResponse`.
#[derive(Debug, Deserialize)]
pub struct UpdateNamespacePropertiesResponse {
    /// Keys asked to be removed that were not there.
    #[serde(default)]
    pub missing: Option<Vec<String>>,
}

/// `TableIdentifier`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableIdentifier {
    /// Namespace levels.
    pub namespace: Vec<String>,
    /// Table name.
    pub name: String,
}

/// `ListTablesResponse`.
#[derive(Debug, Deserialize)]
pub struct ListTablesResponse {
    /// The tables.
    #[serde(default)]
    pub identifiers: Vec<TableIdentifier>,
    /// The next page's token, when there is one.
    #[serde(default, rename = "next-page-token")]
    pub next_page_token: Option<String>,
}

/// `StorageCredential`: FileIO properties for locations under `prefix`.
#[derive(Debug, Deserialize)]
pub struct StorageCredential {
    /// The location prefix the credential is for.
    pub prefix: String,
    /// The FileIO properties.
    #[serde(default)]
    pub config: HashMap<String, String>,
}

/// `LoadTableResult` (also the answer to `createTable` and `registerTable`).
#[derive(Debug, Deserialize)]
pub struct LoadTableResult {
    /// The current metadata file (absent for a staged create).
    #[serde(default, rename = "metadata-location")]
    pub metadata_location: Option<String>,
    /// The table metadata, as JSON (parsed by `TableMetadata::from_json`).
    pub metadata: serde_json::Value,
    /// FileIO properties for this table.
    #[serde(default)]
    pub config: HashMap<String, String>,
    /// Vended credentials by location prefix.
    #[serde(default, rename = "storage-credentials")]
    pub storage_credentials: Vec<StorageCredential>,
}

/// `LoadCredentialsResponse`: the answer to `loadCredentials`.
#[derive(Debug, Deserialize)]
pub struct LoadCredentialsResponse {
    /// Credentials by location prefix.
    #[serde(rename = "storage-credentials")]
    pub storage_credentials: Vec<StorageCredential>,
}

/// `CommitTableResponse`.
#[derive(Debug, Deserialize)]
pub struct CommitTableResponse {
    /// The new metadata file.
    #[serde(rename = "metadata-location")]
    pub metadata_location: String,
    /// The new metadata.
    pub metadata: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_load_table_results() {
        let r: LoadTableResult = serde_json::from_value(serde_json::json!({
            "metadata-location": "s3://b/t/metadata/v1.metadata.json",
            "metadata": {"format-version": 2},
            "config": {"s3.endpoint": "http://x"},
            "storage-credentials": [{"prefix": "s3://b/t", "config": {"s3.session-token": "t"}}]
        }))
        .unwrap();
        assert_eq!(r.storage_credentials[0].prefix, "s3://b/t");
        assert_eq!(r.config["s3.endpoint"], "http://x");
        let r: LoadTableResult =
            serde_json::from_value(serde_json::json!({"metadata": {}})).unwrap();
        assert!(r.metadata_location.is_none() && r.storage_credentials.is_empty());
    }
}
