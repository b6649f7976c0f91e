//! A client of the Iceberg REST catalog (`open-api/rest-catalog-open-api.yaml`).
//!
//! [`RestCatalog`] implements [`Catalog`]: namespaces (nested, listed level by level with
//! `?parent=`, paged), tables (list, load, create, drop with `purgeRequested`, rename,
//! register) and commits (`POST …/tables/{table}` with the `requirements` and `updates`
//! of [`TableCommit`], the values every icefloe catalog commits), and staged creates
//! (`stage-create`, then a commit with `assert-create`: [`staged`]). The first request
//! fetches `GET /v1/config?warehouse=…`: the server's `defaults` go under the
//! configured properties, its `overrides` (e.g. `prefix`) over them.
//!
//! Tables are loaded with `X-Iceberg-Access-Delegation: vended-credentials`; a table's
//! files are read and written through a FileIO configured from the catalog's storage
//! properties (`s3.*`, …), then the answer's `config`, then, for each file, the
//! `storage-credentials` entry with the longest prefix of its location. Vended S3
//! credentials that expire are refreshed before they do ([`credentials`]).
//!
//! Commit answers: 409 is [`ErrorKind::CommitConflict`] (the transaction refreshes and
//! retries); 500, 502, 503, 504, or no answer after the request was sent, is
//! [`ErrorKind::CommitStateUnknown`] (never retried blindly: the transaction reloads the
//! table to see whether the commit landed). See [`http`] for the other statuses, and
//! [`config`] and [`auth`] for the properties (`uri`, `warehouse`, `credential`,
//! `token`, `oauth2-server-uri`, `scope`, `header.*`).

mod auth;
mod config;
mod credentials;
mod http;
mod namespaces;
mod staged;
mod types;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use reqwest::{Method, StatusCode};
use serde_json::json;
use tokio::sync::OnceCell;
use url::Url;

use super::{namespace_not_found, table_not_found, Catalog, Namespace, TableCreation, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::spec::{TableCommit, TableMetadata};
use crate::table::{OpenOptions, Table};
use config::{redacted, RestConfig};
use http::{HttpError, RestClient};
use types::{
    CatalogConfigResponse, CommitTableResponse, ListNamespacesResponse, ListTablesResponse,
    LoadTableResult, NamespaceResponse, TableIdentifier, UpdateNamespacePropertiesResponse,
};

/// Properties that configure the catalog client, not the tables' FileIO.
const CLIENT_PROPERTIES: &[&str] = &[
    "type",
    "name",
    "uri",
    "credential",
    "token",
    "oauth2-server-uri",
    "scope",
    "prefix",
    "warehouse",
    "rest.client.connection-timeout-ms",
    "rest.client.socket-timeout-ms",
];

/// What `GET /v1/config` settled: the base URL of the catalog's routes and the merged
/// properties.
#[derive(Debug)]
struct Resolved {
    /// `<uri>/v1[/<prefix>]`.
    base: Url,
    properties: BTreeMap<String, String>,
    /// Whether the server lists the `loadCredentials` endpoint in `endpoints`.
    offers_load_credentials: bool,
}

/// An Iceberg REST catalog.
pub struct RestCatalog {
    config: RestConfig,
    client: Arc<RestClient>,
    resolved: OnceCell<Resolved>,
    /// Names this instance in the keys of shared credential providers.
    instance: String,
}

impl fmt::Debug for RestCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestCatalog")
            .field("config", &self.config)
            .field(
                "resolved",
                &self
                    .resolved
                    .get()
                    .map(|r| (r.base.as_str().to_string(), redacted(&r.properties))),
            )
            .finish()
    }
}

/// A namespace as one path segment: levels joined by the unit separator (REST spec).
fn namespace_segment(namespace: &Namespace) -> String {
    namespace.levels().join("\u{1f}")
}

impl RestCatalog {
    /// A catalog named `name` with Iceberg's REST properties (`uri` required; see the
    /// module docs). Nothing is sent until the first call.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] naming a bad property.
    pub fn new(name: &str, properties: BTreeMap<String, String>) -> Result<Self> {
        let config = RestConfig::new(name, properties)?;
        let client = Arc::new(RestClient::new(&config)?);
        Ok(Self {
            instance: format!("{}#{}", config.uri, uuid::Uuid::new_v4().simple()),
            config,
            client,
            resolved: OnceCell::new(),
        })
    }

    /// The catalog's properties after the server's `GET /v1/config` answer (secret
    /// values replaced by `***`).
    pub async fn properties(&self) -> Result<BTreeMap<String, String>> {
        Ok(redacted(&self.resolved().await?.properties))
    }

    async fn resolved(&self) -> Result<&Resolved> {
        self.resolved
            .get_or_try_init(|| async {
                let mut url = self.route_base(&self.config.uri, None)?;
                url.path_segments_mut()
                    .map_err(|_| Error::invalid_argument("REST catalog 'uri' has no path"))?
                    .push("config");
                if let Some(w) = self.config.get("warehouse") {
                    url.query_pairs_mut().append_pair("warehouse", w);
                }
                let answer: CatalogConfigResponse = self
                    .client
                    .send(Method::GET, url, None, &[], true)
                    .await
                    .map_err(|e| {
                        e.error.context(format!(
                            "REST catalog '{}': reading its configuration",
                            self.config.name
                        ))
                    })?
                    .unwrap_or_default();
                let properties = self
                    .config
                    .merged_with_server(&answer.defaults, &answer.overrides);
                let base = self.route_base(
                    &self.config.uri,
                    properties.get("prefix").map(String::as_str),
                )?;
                let offers_load_credentials = answer.endpoints.as_ref().is_some_and(|e| {
                    e.iter()
                        .any(|e| e.trim() == credentials::LOAD_CREDENTIALS_ENDPOINT)
                });
                Ok(Resolved {
                    base,
                    properties,
                    offers_load_credentials,
                })
            })
            .await
    }

    /// `<uri>/v1[/<prefix>]`.
    fn route_base(&self, uri: &Url, prefix: Option<&str>) -> Result<Url> {
        let mut url = uri.clone();
        url.set_query(None);
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|_| Error::invalid_argument("REST catalog 'uri' has no path"))?;
            segments.pop_if_empty().push("v1");
            if let Some(p) = prefix.filter(|p| !p.is_empty()) {
                segments.extend(p.split('/').filter(|s| !s.is_empty()));
            }
        }
        Ok(url)
    }

    /// `<base>/<segments…>` (each segment percent-encoded).
    async fn url(&self, segments: &[&str]) -> Result<Url> {
        let mut url = self.resolved().await?.base.clone();
        url.path_segments_mut()
            .map_err(|_| Error::invalid_argument("REST catalog 'uri' has no path"))?
            .extend(segments);
        Ok(url)
    }

    async fn namespace_url(&self, namespace: &Namespace, rest: &[&str]) -> Result<Url> {
        if namespace.is_root() {
            return Err(Error::invalid_argument(format!(
                "REST catalog '{}' has no root namespace: name tables as namespace.table",
                self.config.name
            )));
        }
        let ns = namespace_segment(namespace);
        let mut segments = vec!["namespaces", ns.as_str()];
        segments.extend_from_slice(rest);
        self.url(&segments).await
    }

    async fn table_url(&self, ident: &TableIdent) -> Result<Url> {
        self.namespace_url(&ident.namespace, &["tables", &ident.name])
            .await
    }

    /// The namespaces directly under `parent` (root: the top level), all pages.
    async fn list_children(&self, parent: &Namespace) -> Result<Vec<Namespace>> {
        let mut out = vec![];
        let mut page: Option<String> = None;
        loop {
            let mut url = self.url(&["namespaces"]).await?;
            {
                let mut q = url.query_pairs_mut();
                if !parent.is_root() {
                    q.append_pair("parent", &namespace_segment(parent));
                }
                if let Some(p) = &page {
                    q.append_pair("pageToken", p);
                }
            }
            let answer = self
                .client
                .send::<ListNamespacesResponse>(Method::GET, url, None, &[], true)
                .await;
            let answer: ListNamespacesResponse = match answer {
                Err(e) if parent.is_root() && e.status == Some(StatusCode::NOT_FOUND) => {
                    return Err(self.routes_not_found(e).await)
                }
                other => other.map_err(|e| self.namespace_error(e, parent))?,
            }
            .ok_or_else(|| Error::invalid_data("REST catalog listed no namespaces"))?;
            out.extend(answer.namespaces.into_iter().map(Namespace::new));
            match answer.next_page_token.filter(|t| !t.is_empty()) {
                Some(t) => page = Some(t),
                None => return Ok(out),
            }
        }
    }

    /// The error for a 404 to listing the top-level namespaces: not a missing namespace
    /// but routes the server does not have, most often a `warehouse` it does not know
    /// (the `prefix` its `GET /v1/config` answer gave then leads nowhere).
    async fn routes_not_found(&self, e: HttpError) -> Error {
        let prefix = match self.resolved().await {
            Ok(r) => r.properties.get("prefix").cloned(),
            Err(_) => None,
        };
        let config = match prefix {
            Some(p) => format!("its GET /v1/config answered prefix '{p}'"),
            None => "its GET /v1/config answered no prefix".to_string(),
        };
        let why = match self.config.get("warehouse") {
            Some(w) => format!("the server does not know warehouse '{w}' ({config})"),
            None => format!(
                "no catalog at this 'uri' without a 'warehouse' ({config}); set 'warehouse'"
            ),
        };
        Error::not_found(format!(
            "REST catalog '{}': listing its namespaces answered 404: {why}",
            self.config.name
        ))
        .with_source(e.error)
    }

    fn namespace_error(&self, e: HttpError, namespace: &Namespace) -> Error {
        if e.status == Some(StatusCode::NOT_FOUND) {
            namespace_not_found(&self.config.name, namespace).with_source(e.error)
        } else {
            e.error
        }
    }

    /// Whether the resource at `url` exists: HEAD, 204 or 200 yes, 404 no. An answer to
    /// HEAD has no body, so its error says no reason ("400 Bad Request" for a name the
    /// server refuses): on a client error other than 401 and 403 it asks again with GET,
    /// whose error carries the server's message.
    ///
    /// Errors: the GET's error (the server's message), or the HEAD's when no answer came.
    async fn resource_exists(&self, url: Url) -> Result<bool> {
        match self
            .client
            .send::<serde_json::Value>(Method::HEAD, url.clone(), None, &[], true)
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if e.status == Some(StatusCode::NOT_FOUND) => Ok(false),
            // (a refused credential is not asked again: that is a permission error)
            Err(e)
                if e.status.is_some_and(|s| {
                    s.is_client_error()
                        && s != StatusCode::UNAUTHORIZED
                        && s != StatusCode::FORBIDDEN
                }) =>
            {
                match self
                    .client
                    .send::<serde_json::Value>(Method::GET, url, None, &[], true)
                    .await
                {
                    Ok(_) => Ok(true),
                    Err(again) if again.status == Some(StatusCode::NOT_FOUND) => Ok(false),
                    Err(again) => Err(again.error),
                }
            }
            Err(e) => Err(e.error),
        }
    }

    fn table_error(&self, e: HttpError, ident: &TableIdent) -> Error {
        if e.status == Some(StatusCode::NOT_FOUND) {
            if e.error_type == "NoSuchNamespaceException" {
                namespace_not_found(&self.config.name, &ident.namespace).with_source(e.error)
            } else {
                table_not_found(&self.config.name, ident).with_source(e.error)
            }
        } else {
            e.error
        }
    }

    /// A loaded table: metadata from the answer, FileIO from the catalog's storage
    /// properties and the answer's `config`, with its vended `storage-credentials`
    /// (see [`credentials`]).
    async fn table_from(&self, ident: &TableIdent, result: LoadTableResult) -> Result<Table> {
        let location = result.metadata_location.ok_or_else(|| {
            Error::invalid_data(format!(
                "REST catalog '{}' returned table '{ident}' without a metadata-location",
                self.config.name
            ))
        })?;
        let metadata = TableMetadata::from_json(&result.metadata.to_string())
            .map_err(|e| e.context(format!("table '{ident}' metadata from the REST catalog")))?;
        let resolved = self.resolved().await?;
        let mut storage: HashMap<String, String> = resolved
            .properties
            .iter()
            .filter(|(k, _)| !CLIENT_PROPERTIES.contains(&k.as_str()) && !k.starts_with("header."))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        storage.extend(result.config.clone());
        let ctx = credentials::CredentialContext {
            client: &self.client,
            instance: &self.instance,
            catalog_properties: &resolved.properties,
            uri: &self.config.uri,
            offers_load_credentials: resolved.offers_load_credentials,
        };
        let vended = result
            .storage_credentials
            .into_iter()
            .map(|c| (c.prefix, c.config))
            .collect();
        let table_url = self.table_url(ident).await?;
        let credentials = credentials::table_credentials(
            &ctx,
            ident,
            &metadata.location,
            &table_url,
            &result.config,
            vended,
        )
        .await?;
        let table = Table::from_written(
            metadata,
            &location,
            &OpenOptions {
                storage_properties: storage,
                ..Default::default()
            },
        )?;
        if credentials.is_empty() {
            return Ok(table);
        }
        let io = table
            .file_io()
            .clone()
            .with_storage_credentials(credentials);
        Ok(table.with_file_io(io))
    }

    /// Register an existing table by its metadata file (REST `registerTable`; see
    /// [`Catalog::register_table`]).
    async fn register(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        let url = self.namespace_url(&ident.namespace, &["register"]).await?;
        let body = json!({"name": ident.name, "metadata-location": metadata_location});
        let answer: LoadTableResult = self
            .client
            .send(Method::POST, url, Some(&body), &[], false)
            .await
            .map_err(|e| self.already_exists_or(e, ident))?
            .ok_or_else(|| Error::invalid_data("REST registerTable answered without a table"))?;
        self.table_from(ident, answer).await
    }

    fn already_exists_or(&self, e: HttpError, ident: &TableIdent) -> Error {
        if e.status == Some(StatusCode::CONFLICT) {
            e.rekinded(
                ErrorKind::AlreadyExists,
                format!("table '{ident}' in catalog '{}'", self.config.name),
            )
        } else if e.status == Some(StatusCode::NOT_FOUND) {
            namespace_not_found(&self.config.name, &ident.namespace).with_source(e.error)
        } else {
            e.error
        }
    }
}

const DELEGATION: (&str, &str) = ("X-Iceberg-Access-Delegation", "vended-credentials");

#[async_trait]
impl Catalog for RestCatalog {
    fn name(&self) -> &str {
        &self.config.name
    }

    /// Every namespace, at every level: the top level, then each one's children.
    async fn list_namespaces(&self) -> Result<Vec<Namespace>> {
        let mut out = vec![];
        let mut queue = vec![Namespace::root()];
        while let Some(parent) = queue.pop() {
            for child in self.list_children(&parent).await? {
                // servers that do not nest may answer the parent itself
                if child != parent && !out.contains(&child) {
                    queue.push(child.clone());
                    out.push(child);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    async fn namespace_exists(&self, namespace: &Namespace) -> Result<bool> {
        if namespace.is_root() {
            return Ok(false);
        }
        let url = self.namespace_url(namespace, &[]).await?;
        self.resource_exists(url).await
    }

    /// The server's `updateProperties` ([`RestCatalog::update_namespace_properties`]).
    async fn update_namespace_properties(
        &self,
        namespace: &Namespace,
        updates: &HashMap<String, String>,
        removals: &[String],
    ) -> Result<Vec<String>> {
        RestCatalog::update_namespace_properties(self, namespace, updates, removals).await
    }

    /// The server's `loadNamespaceMetadata` answer ([`RestCatalog::namespace_properties`]).
    async fn load_namespace_metadata(
        &self,
        namespace: &Namespace,
    ) -> Result<HashMap<String, String>> {
        self.namespace_properties(namespace).await
    }

    async fn list_tables(&self, namespace: &Namespace) -> Result<Vec<TableIdent>> {
        let mut out = vec![];
        let mut page: Option<String> = None;
        loop {
            let mut url = self.namespace_url(namespace, &["tables"]).await?;
            if let Some(p) = &page {
                url.query_pairs_mut().append_pair("pageToken", p);
            }
            let answer: ListTablesResponse = self
                .client
                .send(Method::GET, url, None, &[], true)
                .await
                .map_err(|e| self.namespace_error(e, namespace))?
                .ok_or_else(|| Error::invalid_data("REST catalog listed no tables"))?;
            out.extend(
                answer
                    .identifiers
                    .into_iter()
                    .map(|t| TableIdent::new(Namespace::new(t.namespace), t.name)),
            );
            match answer.next_page_token.filter(|t| !t.is_empty()) {
                Some(t) => page = Some(t),
                None => break,
            }
        }
        out.sort();
        Ok(out)
    }

    async fn register_table(&self, ident: &TableIdent, metadata_location: &str) -> Result<Table> {
        self.register(ident, metadata_location).await
    }

    async fn load_table(&self, ident: &TableIdent) -> Result<Table> {
        let url = self.table_url(ident).await?;
        let answer: LoadTableResult = self
            .client
            .send(Method::GET, url, None, &[DELEGATION], true)
            .await
            .map_err(|e| self.table_error(e, ident))?
            .ok_or_else(|| Error::invalid_data("REST loadTable answered without a table"))?;
        self.table_from(ident, answer).await
    }

    async fn table_exists(&self, ident: &TableIdent) -> Result<bool> {
        let url = self.table_url(ident).await?;
        self.resource_exists(url).await
    }

    async fn create_namespace(
        &self,
        namespace: &Namespace,
        properties: &HashMap<String, String>,
    ) -> Result<()> {
        namespace.check_creatable()?;
        let url = self.url(&["namespaces"]).await?;
        let body = json!({"namespace": namespace.levels(), "properties": properties});
        match self
            .client
            .send::<serde_json::Value>(Method::POST, url, Some(&body), &[], false)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.status == Some(StatusCode::CONFLICT) => Err(e.rekinded(
                ErrorKind::AlreadyExists,
                format!("namespace '{namespace}' in catalog '{}'", self.config.name),
            )),
            Err(e) => Err(self.namespace_error(e, namespace)),
        }
    }

    /// Creates with `stage-create: false`. A server answers 409 for a taken name; as
    /// not every server does (SeaweedFS 4.48 replaces the table), the name is checked
    /// first with `HEAD`. A schema with two fields of the same full name is refused
    /// before anything is sent ([`Schema::check_field_names`](crate::spec::Schema::check_field_names)),
    /// as the other catalogs refuse it: not every server checks. So is a table property
    /// value icefloe could not use
    /// ([`table_properties::validate_all`](crate::table_properties::validate_all)).
    async fn create_table(&self, ident: &TableIdent, creation: TableCreation) -> Result<Table> {
        check_creation(&creation).map_err(|e| e.context(format!("create table '{ident}'")))?;
        if self.table_exists(ident).await? {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!("table '{ident}' in catalog '{}'", self.config.name),
            ));
        }
        let url = self.namespace_url(&ident.namespace, &["tables"]).await?;
        let body = create_table_request(ident, &creation, false);
        let answer: LoadTableResult = self
            .client
            .send(Method::POST, url, Some(&body), &[DELEGATION], false)
            .await
            .map_err(|e| self.already_exists_or(e, ident))?
            .ok_or_else(|| Error::invalid_data("REST createTable answered without a table"))?;
        self.table_from(ident, answer).await
    }

    /// `createTable` with `stage-create: true` (module `staged`).
    async fn stage_create_table(
        &self,
        ident: &TableIdent,
        creation: TableCreation,
    ) -> Result<Table> {
        self.stage_create(ident, creation).await
    }

    /// `updateTable` with `assert-create` (module `staged`).
    async fn commit_create(
        &self,
        ident: &TableIdent,
        staged: &Table,
        commit: &TableCommit,
    ) -> Result<Table> {
        self.commit_staged(ident, staged, commit).await
    }

    async fn commit_table(&self, ident: &TableIdent, commit: &TableCommit) -> Result<Table> {
        let url = self.table_url(ident).await?;
        let body = json!({
            "identifier": TableIdentifier {
                namespace: ident.namespace.levels().to_vec(),
                name: ident.name.clone(),
            },
            "requirements": commit.requirements,
            "updates": commit.updates,
        });
        let answer: CommitTableResponse = match self
            .client
            .send(Method::POST, url, Some(&body), &[], false)
            .await
        {
            Ok(Some(a)) => a,
            Ok(None) => {
                return Err(Error::new(
                    ErrorKind::CommitStateUnknown,
                    format!(
                        "commit to table '{ident}': the REST catalog answered without metadata"
                    ),
                ))
            }
            Err(e) => return Err(self.commit_error(e, ident)),
        };
        // The commit landed: whatever fails from here must not let the writer delete the
        // files the table now references, so every error is `CommitStateUnknown` (the
        // kind under which writers keep their files).
        let landed = |e: Error, what: &str| {
            Error::new(
                ErrorKind::CommitStateUnknown,
                format!(
                    "commit to table '{ident}' landed ({}), but {what}",
                    answer.metadata_location
                ),
            )
            .with_source(e)
        };
        let metadata = TableMetadata::from_json(&answer.metadata.to_string()).map_err(|e| {
            landed(
                e,
                "the metadata the REST catalog answered with cannot be read",
            )
        })?;
        // the committed table keeps the FileIO (and vended credentials) of a fresh load
        let table = self.load_table(ident).await;
        match table {
            Ok(t) if t.metadata_location() == answer.metadata_location => Ok(t),
            Ok(t) => Ok(t.with_metadata(metadata, &answer.metadata_location)),
            Err(e) => Err(landed(e, "reloading it failed")),
        }
    }

    async fn drop_table(&self, ident: &TableIdent, purge: bool) -> Result<()> {
        let mut url = self.table_url(ident).await?;
        url.query_pairs_mut()
            .append_pair("purgeRequested", if purge { "true" } else { "false" });
        self.client
            .send::<serde_json::Value>(Method::DELETE, url, None, &[], false)
            .await
            .map_err(|e| self.table_error(e, ident))?;
        Ok(())
    }

    async fn drop_namespace(&self, namespace: &Namespace) -> Result<()> {
        RestCatalog::drop_namespace(self, namespace).await
    }

    async fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        let url = self.url(&["tables", "rename"]).await?;
        let ident = |t: &TableIdent| TableIdentifier {
            namespace: t.namespace.levels().to_vec(),
            name: t.name.clone(),
        };
        let body = json!({"source": ident(from), "destination": ident(to)});
        match self
            .client
            .send::<serde_json::Value>(Method::POST, url, Some(&body), &[], false)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.status == Some(StatusCode::CONFLICT) => Err(e.rekinded(
                ErrorKind::AlreadyExists,
                format!("table '{to}' in catalog '{}'", self.config.name),
            )),
            // the server's 404 does not say which namespace it missed: the source's, or
            // the destination's
            Err(e)
                if e.status == Some(StatusCode::NOT_FOUND)
                    && e.error_type == "NoSuchNamespaceException"
                    && to.namespace != from.namespace
                    && !self.namespace_exists(&to.namespace).await.unwrap_or(true) =>
            {
                Err(namespace_not_found(&self.config.name, &to.namespace).with_source(e.error))
            }
            Err(e) => Err(self.table_error(e, from)),
        }
    }
}

impl RestCatalog {
    /// The error for a failed commit (REST `updateTable` responses).
    fn commit_error(&self, e: HttpError, ident: &TableIdent) -> Error {
        let context = format!("commit to table '{ident}'");
        match e.status.map(|s| s.as_u16()) {
            Some(409) => e.rekinded(ErrorKind::CommitConflict, context),
            Some(404) => self.table_error(e, ident),
            Some(500 | 502 | 503 | 504) => Error::new(
                ErrorKind::CommitStateUnknown,
                format!(
                    "{context}: the REST catalog failed ({}); the commit may have landed",
                    e.error
                ),
            ),
            // a success whose answer was cut off or is not the expected JSON: the server
            // applied the commit (or may have)
            Some(status) if (200..300).contains(&status) => Error::new(
                ErrorKind::CommitStateUnknown,
                format!(
                    "{context}: the REST catalog answered {status} but its answer cannot be \
                     read ({}); the commit may have landed",
                    e.error
                ),
            ),
            // the request may have reached the server before the connection failed
            None if e.error.kind() == ErrorKind::Io => Error::new(
                ErrorKind::CommitStateUnknown,
                format!("{context}: {}; the commit may have landed", e.error),
            ),
            _ => e.error.context(context),
        }
    }
}

/// The body of a REST `createTable` (`CreateTableRequest`) for `creation` under `ident`'s
/// name; `stage_create` asks for the metadata without creating the table (REST
/// `stage-create`, committed later with `assert-create`).
fn create_table_request(
    ident: &TableIdent,
    creation: &TableCreation,
    stage_create: bool,
) -> serde_json::Value {
    let mut body = json!({
        "name": ident.name,
        "schema": creation.schema,
        "partition-spec": creation.partition_spec,
        "write-order": creation.sort_order,
        "properties": creation.properties,
        "stage-create": stage_create,
    });
    if let (Some(location), Some(o)) = (&creation.location, body.as_object_mut()) {
        o.insert("location".into(), json!(location));
    }
    body
}

/// What a table creation must pass before anything is sent to the server, as the other
/// catalogs check it (not every server does): field names unique
/// ([`Schema::check_field_names`](crate::spec::Schema::check_field_names)), property values
/// icefloe can use ([`table_properties::validate_all`](crate::table_properties::validate_all)),
/// a location other engines can read ([`io::check_table_location`](crate::io::check_table_location)),
/// and metrics keys naming fields of the schema (as Java's `MetricsConfig`).
///
/// Errors: the first check that fails.
fn check_creation(creation: &TableCreation) -> Result<()> {
    creation
        .schema
        .check_field_names()
        .and_then(|()| crate::table_properties::validate_all(&creation.properties))
        .and_then(|()| match &creation.location {
            Some(l) => crate::io::check_table_location("table location", l),
            None => Ok(()),
        })
        .and_then(|()| {
            crate::write::metrics_config::check_metrics_columns(
                &creation.properties,
                &creation.schema,
                |_| true,
            )
        })
}
