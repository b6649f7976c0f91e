//! FileIO: reading table files through `object_store`, with location remapping.
//!
//! Locations are normalised before use: a local absolute path `/a/b`, `file:/a/b` (the
//! Hadoop form Spark writes) and `file:///a/b` (the URL form PyIceberg writes) all become
//! `file:///a/b`. Remap rules (old prefix → new prefix) are then applied to the normalised
//! form, longest prefix first; this is how a table that was copied or moved still reads
//! (see [`crate::table::OpenOptions`]). Cloud URLs (`s3://`, `gs://`, `abfss://`, …) go to
//! stores built by `object_store::parse_url_opts` from the environment and the FileIO's
//! properties (see [`store_options`]; needs the `cloud` feature). Local files are read
//! only when they are regular files: a FIFO or device where a table file should be is an
//! error naming it, not a read that blocks forever.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::error::{Error, ErrorKind, Result};

mod azure;
mod cloud;
mod counting;
mod delegating;
mod footer_checked_store;
mod local;
pub mod parquet_footer;
pub mod parquet_statistics;
mod range_reader;
mod read_context;
mod redact;
mod retry;
mod routing;
mod table_location;
#[cfg(feature = "cloud")]
pub mod vended;
mod write;

#[cfg(feature = "cloud")]
pub use cloud::shared_s3_store_with_credentials;
pub use cloud::{
    check_url_without_secrets, is_secret, is_url_valued, redacted, shared_store, store_options,
};
pub use counting::{CountingStore, RequestCounts, RequestObserver, RequestTotals, StoreRequest};
pub use footer_checked_store::{CorruptFooter, FooterCheckedStore};
pub(crate) use range_reader::ObjectRangeReader;
pub(crate) use read_context::{file_context, when_moved};
pub use redact::redact_userinfo;
pub use routing::PrefixRoutedStore;
pub use table_location::{check_location_property, check_table_location};
pub(crate) use write::refused_by_store;

/// A location resolved to a store and a path inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedLocation {
    /// `scheme://authority` of the store, e.g. `file://` or `s3://bucket`.
    pub store_url: String,
    /// The object path inside the store (no leading slash).
    pub path: ObjectPath,
}

/// Storage properties for the locations under one prefix: a REST catalog's vended
/// `StorageCredential` (REST spec `LoadTableResult.storage-credentials`). A location
/// uses the credential with the longest prefix matching it (whole path segments), its
/// properties over the FileIO's own.
#[derive(Clone)]
pub struct StorageCredential {
    /// The location prefix (normalised, e.g. `s3://bucket/wh/ns/t`).
    pub prefix: String,
    /// FileIO properties (`s3.access-key-id`, …) for locations under it.
    pub properties: HashMap<String, String>,
    /// For an S3 credential that expires: the provider that refreshes it, and the key
    /// naming its source (shared stores are cached by it).
    #[cfg(feature = "cloud")]
    pub s3_provider: Option<(String, Arc<vended::VendedS3Credentials>)>,
}

impl std::fmt::Debug for StorageCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("StorageCredential");
        d.field("prefix", &self.prefix)
            .field("properties", &redacted(&self.properties));
        #[cfg(feature = "cloud")]
        d.field("refreshes", &self.s3_provider.is_some());
        d.finish()
    }
}

impl StorageCredential {
    /// A credential of fixed properties for locations under `prefix`.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] for a prefix that is not a location.
    pub fn new(prefix: &str, properties: HashMap<String, String>) -> Result<Self> {
        Ok(Self {
            prefix: normalize_location(prefix)?,
            properties,
            #[cfg(feature = "cloud")]
            s3_provider: None,
        })
    }
}

/// Reads and writes files of a table on local disk or object stores.
///
/// `Debug` shows the properties with secret values (keys, tokens) replaced by `***`.
#[derive(Clone, Default)]
pub struct FileIO {
    remaps: Vec<(String, String)>,
    properties: HashMap<String, String>,
    stores: Arc<Mutex<HashMap<String, Arc<dyn ObjectStore>>>>,
    /// Vended credentials by location prefix, longest prefix first.
    credentials: Arc<Vec<StorageCredential>>,
    /// Told of every request the stores of this FileIO make (see
    /// [`with_request_observer`](Self::with_request_observer)).
    observer: Option<Arc<dyn RequestObserver>>,
}

impl std::fmt::Debug for FileIO {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileIO")
            .field("remaps", &self.remaps)
            .field("properties", &redacted(&self.properties))
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

/// Normalise a location: local paths and `file:` forms become `file:///abs/path`; other
/// URLs are returned unchanged. Relative local paths are made absolute against the
/// current directory, and their `.` and `..` segments resolved. Trailing slashes are
/// removed. Nothing is percent-decoded: `%` is an ordinary character of a location.
pub fn normalize_location(location: &str) -> Result<String> {
    // Most locations are normal already (every data file of a planned scan is
    // normalized once more): they are returned as they are, without rebuilding them.
    if is_normal_location(location) {
        return Ok(location.to_string());
    }
    let loc = location.trim();
    let local = if let Some(rest) = loc.strip_prefix("file://") {
        Some(file_url_path(loc, rest)?)
    } else if let Some(rest) = loc.strip_prefix("file:") {
        Some(rest.to_string())
    } else if loc.contains("://") {
        None
    } else {
        Some(loc.to_string())
    };
    let out = match local {
        Some(path) => {
            let path = std::path::Path::new(&path);
            let abs = if path.is_absolute() {
                path.to_path_buf()
            } else {
                std::env::current_dir()
                    .map_err(|e| {
                        Error::new(ErrorKind::Io, "cannot read current directory").with_source(e)
                    })?
                    .join(path)
            };
            // `.` and `..` segments are resolved lexically, as for any local path (the
            // other characters are kept as they are: no percent-decoding)
            let mut clean = std::path::PathBuf::new();
            for part in abs.components() {
                match part {
                    std::path::Component::CurDir => {}
                    std::path::Component::ParentDir => {
                        clean.pop();
                    }
                    other => clean.push(other),
                }
            }
            format!("file://{}", clean.to_string_lossy())
        }
        None => loc.to_string(),
    };
    Ok(out.trim_end_matches('/').to_string())
}

/// The local path of `file://<rest>` (`location`), by RFC 8089: `rest` is an authority and
/// a path, and an empty authority or `localhost` is this machine, so `file:///x` and
/// `file://localhost/x` are both `/x`.
///
/// Errors: [`ErrorKind::InvalidArgument`] for another host (`file://server/x`), naming the
/// location and the host: only this machine's files are read.
fn file_url_path(location: &str, rest: &str) -> Result<String> {
    if rest.is_empty() || rest.starts_with('/') {
        return Ok(rest.to_string());
    }
    let (host, path) = match rest.split_once('/') {
        Some((host, path)) => (host, format!("/{path}")),
        None => (rest, "/".to_string()),
    };
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(path);
    }
    Err(Error::invalid_argument(format!(
        "location '{location}' names the host '{host}': a file: URL names a file of this \
         machine (file:///path or file://localhost/path)"
    )))
}

/// Whether [`normalize_location`] returns `location` unchanged: no surrounding white
/// space or trailing `/`, and either `file://` and an absolute path without empty, `.`
/// or `..` segments, or a URL of another scheme.
fn is_normal_location(location: &str) -> bool {
    if location.trim().len() != location.len() || location.ends_with('/') {
        return false;
    }
    match location.strip_prefix("file://") {
        Some(path) => path.strip_prefix('/').is_some_and(|rest| {
            rest.split('/')
                .all(|segment| !matches!(segment, "" | "." | ".."))
        }),
        None => !location.starts_with("file:") && location.contains("://"),
    }
}

impl FileIO {
    /// A FileIO with no remaps; `properties` configure cloud stores
    /// (keys as `object_store` accepts them, e.g. `aws_region`, `aws_endpoint`).
    pub fn new(properties: HashMap<String, String>) -> Self {
        Self {
            properties,
            ..Default::default()
        }
    }

    /// Add a remap rule: locations starting with `from` start with `to` instead.
    /// Both sides are normalised first.
    pub fn with_remap(mut self, from: &str, to: &str) -> Result<Self> {
        self.remaps
            .push((normalize_location(from)?, normalize_location(to)?));
        self.remaps.sort_by_key(|r| std::cmp::Reverse(r.0.len()));
        Ok(self)
    }

    /// A copy of this FileIO's properties with the remap rules of `other`.
    pub fn with_remaps_of(mut self, other: &FileIO) -> Result<Self> {
        self.remaps = other.remaps.clone();
        Ok(self)
    }

    /// This FileIO (same properties and remaps) with every request its stores make
    /// reported to `observer` ([`CountingStore`]): how one scan counts the GET, HEAD
    /// and LIST requests it makes. The stores themselves are the same shared ones.
    pub fn with_request_observer(&self, observer: Arc<dyn RequestObserver>) -> FileIO {
        FileIO {
            remaps: self.remaps.clone(),
            properties: self.properties.clone(),
            stores: Arc::clone(&self.stores),
            credentials: Arc::clone(&self.credentials),
            observer: Some(observer),
        }
    }

    /// This FileIO (same properties, credentials and stores) without remap rules: for
    /// locations that are remapped already, such as those [`Self::list_files`] lists
    /// (remapping one again applies a rule twice when the rule's new prefix starts with
    /// its old one: a table moved into a directory under its old location).
    pub(crate) fn without_remaps(&self) -> FileIO {
        FileIO {
            remaps: vec![],
            ..self.clone()
        }
    }

    /// This FileIO with `credentials` for the locations under their prefixes (see
    /// [`StorageCredential`]); stores made before are dropped.
    pub fn with_storage_credentials(mut self, mut credentials: Vec<StorageCredential>) -> Self {
        credentials.sort_by_key(|c| std::cmp::Reverse(c.prefix.len()));
        self.credentials = Arc::new(credentials);
        self.stores = Default::default();
        self
    }

    /// The vended credentials by prefix, longest prefix first.
    pub fn storage_credentials(&self) -> &[StorageCredential] {
        &self.credentials
    }

    /// The properties configuring cloud stores (secret values included: what a worker
    /// needs to rebuild this FileIO).
    pub fn properties(&self) -> &HashMap<String, String> {
        &self.properties
    }

    /// The remap rules in effect (normalised, longest prefix first).
    pub fn remaps(&self) -> &[(String, String)] {
        &self.remaps
    }

    /// Normalise `location` and apply the remap rules.
    pub fn remap(&self, location: &str) -> Result<String> {
        let norm = normalize_location(location)?;
        for (from, to) in &self.remaps {
            if let Some(rest) = norm.strip_prefix(from.as_str()) {
                if rest.is_empty() || rest.starts_with('/') {
                    return Ok(format!("{to}{rest}"));
                }
            }
        }
        Ok(norm)
    }

    /// Resolve a location (after remapping) to its store URL and object path.
    ///
    /// A location is an opaque string (Iceberg spec: file locations are stored as written):
    /// it is split at `scheme://authority/` and the rest is the object path *as is*, never
    /// percent-decoded or re-encoded. A data file in partition directory `p=x%2Fy` has a
    /// `%`, `2`, `F` in its name on the store; decoding it would name `p=x/y` instead.
    /// The object path keeps the location's characters ([`ObjectPath::parse`], not
    /// [`ObjectPath::from`], which would encode `%` as `%25`), and object_store's local
    /// and cloud stores map those characters to the file or key name literally.
    ///
    /// Errors: [`ErrorKind::InvalidArgument`] naming the location when it has no
    /// `scheme://`, or its path has an empty or `.`/`..` segment or control characters.
    pub fn resolve(&self, location: &str) -> Result<ResolvedLocation> {
        self.resolve_remapped(&self.remap(location)?, location)
    }

    /// [`Self::resolve`] of `remapped`, a location this FileIO has remapped already
    /// ([`Self::remap`] of `location`, e.g. a planned [`FileScanTask`](crate::scan::FileScanTask)'s):
    /// remapping it again would apply a rule twice when the rule's new prefix starts
    /// with its old one (a table moved into a directory under its old location).
    /// Errors name `location`, as [`Self::resolve`]'s do.
    pub fn resolve_remapped(&self, remapped: &str, location: &str) -> Result<ResolvedLocation> {
        let invalid = || Error::invalid_argument(format!("invalid location '{location}'"));
        // a scheme holds no ':', so the first one ends it (and a location without
        // `scheme://` is invalid)
        let (scheme, rest) = remapped
            .split_once(':')
            .and_then(|(scheme, rest)| Some((scheme, rest.strip_prefix("//")?)))
            .ok_or_else(invalid)?;
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return Err(invalid());
        }
        let (store_url, key) = if scheme.eq_ignore_ascii_case("file") {
            ("file://".to_string(), rest)
        } else {
            let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
            (format!("{scheme}://{authority}"), key)
        };
        let path = ObjectPath::parse(key).map_err(|e| {
            Error::invalid_argument(format!("invalid path in location '{location}'")).with_source(e)
        })?;
        Ok(ResolvedLocation { store_url, path })
    }

    /// The object store serving `store_url` (`file://`, `s3://bucket`, …), created on
    /// first use from this FileIO's properties; cloud stores are shared by every FileIO
    /// with the same bucket and options ([`shared_store`]). A cloud store's reads and
    /// overwrite `PUT`s are tried again after a transport failure (no HTTP answer; see
    /// `retry`). With a request observer ([`with_request_observer`](Self::with_request_observer)) the
    /// store reports its requests to it.
    pub fn store(&self, store_url: &str) -> Result<Arc<dyn ObjectStore>> {
        let mut store = self.base_store(store_url)?;
        // a cloud store's reads and overwrite PUTs are tried again after a transport
        // failure (the local file system has none)
        if store_url != "file://" {
            store = Arc::new(retry::RetryingRequests::new(store));
        }
        Ok(match &self.observer {
            Some(observer) => {
                let counting = CountingStore::new(store, Arc::clone(observer));
                // the local file system reads each range as asked
                Arc::new(if store_url == "file://" {
                    counting.reading_ranges_exactly()
                } else {
                    counting
                })
            }
            None => store,
        })
    }

    /// [`store`](Self::store) without the request observer.
    pub fn base_store(&self, store_url: &str) -> Result<Arc<dyn ObjectStore>> {
        let mut stores = self
            .stores
            .lock()
            .map_err(|_| Error::new(ErrorKind::Io, "object store registry poisoned"))?;
        if let Some(s) = stores.get(store_url) {
            return Ok(Arc::clone(s));
        }
        let store: Arc<dyn ObjectStore> = if store_url == "file://" {
            Arc::new(local::RegularFileStore::new())
        } else {
            self.cloud_store(store_url)?
        };
        stores.insert(store_url.to_string(), Arc::clone(&store));
        Ok(store)
    }

    /// The store for a cloud `store_url`: the shared store of this FileIO's properties,
    /// or, when vended credentials cover prefixes in it, a [`PrefixRoutedStore`] sending
    /// each path to the store of its credential.
    fn cloud_store(&self, store_url: &str) -> Result<Arc<dyn ObjectStore>> {
        let url = azure::parseable_url(store_url);
        let options_for = |properties: &HashMap<String, String>| -> Result<_> {
            let mut options = store_options(std::env::vars(), properties)?;
            if azure::is_azure(store_url) {
                azure::add_adls_options(store_url, properties, &mut options);
            }
            Ok(options)
        };
        let base = || shared_store(&url, options_for(&self.properties)?);
        let mut routes = vec![];
        for c in self.credentials.iter() {
            let Some(rest) = c.prefix.strip_prefix(store_url) else {
                continue;
            };
            if !(rest.is_empty() || rest.starts_with('/')) {
                continue;
            }
            let mut properties = self.properties.clone();
            properties.extend(c.properties.clone());
            let options = options_for(&properties)?;
            #[cfg(feature = "cloud")]
            let store = match &c.s3_provider {
                Some((key, provider)) => {
                    let provider: object_store::aws::AwsCredentialProvider = provider.clone();
                    shared_s3_store_with_credentials(&url, options, key, provider)?
                }
                None => shared_store(&url, options)?,
            };
            #[cfg(not(feature = "cloud"))]
            let store = shared_store(&url, options)?;
            routes.push((rest.trim_matches('/').to_string(), store));
        }
        Ok(match routes.len() {
            0 => base()?,
            1 if routes[0].0.is_empty() => routes.remove(0).1,
            _ => Arc::new(PrefixRoutedStore::new(routes, base()?)),
        })
    }

    /// Read a whole file. A request that got no HTTP answer is tried again, up to 3
    /// attempts 50 ms, then 100 ms apart (`io/retry.rs`).
    ///
    /// Errors: [`ErrorKind::NotFound`] naming the location when it does not exist,
    /// [`ErrorKind::Io`] for other storage failures.
    pub async fn read(&self, location: &str) -> Result<Bytes> {
        let resolved = self.resolve(location)?;
        let store = self.store(&resolved.store_url)?;
        // a cloud store's reads retry a transport failure themselves (`RetryingRequests`)
        async { store.get(&resolved.path).await?.bytes().await }
            .await
            .map_err(|e| map_store_error(e, location))
    }

    /// Read a whole file expected to be small: one GET, whose answer gives the file's
    /// size before its body is read, so a file longer than `limit` bytes (damaged, or not
    /// the file it should be) is refused without reading it.
    ///
    /// Errors: [`ErrorKind::InvalidData`] naming the location, its size and `limit`
    /// when the file is longer; otherwise as [`FileIO::read`].
    pub async fn read_at_most(&self, location: &str, limit: u64) -> Result<Bytes> {
        let resolved = self.resolve(location)?;
        let store = self.store(&resolved.store_url)?;
        let answer = store
            .get(&resolved.path)
            .await
            .map_err(|e| map_store_error(e, location))?;
        if answer.meta.size > limit {
            return Err(Error::invalid_data(format!(
                "'{location}' is {} bytes, more than the {limit} bytes it may hold",
                answer.meta.size
            )));
        }
        answer
            .bytes()
            .await
            .map_err(|e| map_store_error(e, location))
    }

    /// Whether a file exists.
    pub async fn exists(&self, location: &str) -> Result<bool> {
        self.head_exists(location, false).await
    }

    /// Whether a file exists at `location`, where a directory in its place is an error,
    /// not `false` as for [`Self::exists`] (object_store's local store answers a `head` of
    /// a directory "not found: is directory"): for a path the caller reads next, so that a
    /// directory is named a directory, not a missing file (a tester's: a metadata file
    /// replaced by a directory was "missing").
    ///
    /// Errors: [`ErrorKind::NotFound`] "'…' is a directory, not a file" naming
    /// `location`; the store's other errors, naming it.
    pub(crate) async fn file_exists(&self, location: &str) -> Result<bool> {
        self.head_exists(location, true).await
    }

    /// A `head` of `location`: `true` when it answers, `false` when the store says not
    /// found, except for a local directory when `directory_is_error` (then the error
    /// naming it a directory, [`map_store_error`]).
    async fn head_exists(&self, location: &str, directory_is_error: bool) -> Result<bool> {
        let resolved = self.resolve(location)?;
        let store = self.store(&resolved.store_url)?;
        match store.head(&resolved.path).await {
            Ok(_) => Ok(true),
            Err(e @ object_store::Error::NotFound { .. })
                if !(directory_is_error && is_local_directory(&e)) =>
            {
                Ok(false)
            }
            Err(e) => Err(map_store_error(e, location)),
        }
    }

    /// The file names (last path segment) directly under a directory location.
    pub async fn list_dir(&self, location: &str) -> Result<Vec<String>> {
        let resolved = self.resolve(location)?;
        let store = self.store(&resolved.store_url)?;
        let listing = store
            .list_with_delimiter(Some(&resolved.path))
            .await
            .map_err(|e| map_store_error(e, location))?;
        Ok(listing
            .objects
            .iter()
            .filter_map(|o| o.location.filename().map(str::to_string))
            .collect())
    }
}

/// A file found by [`FileIO::list_files`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFile {
    /// Its location, `scheme://authority/path` (`file:///abs/path` for local files),
    /// the path exactly as the store names it.
    pub location: String,
    /// When it was last modified, ms since the epoch.
    pub last_modified_ms: i64,
    /// Its size in bytes.
    pub size: u64,
}

impl FileIO {
    /// Every file under the directory `location` (after remapping), at any depth.
    /// Local directories are walked on disk (names kept as they are; symlinks not
    /// followed); object stores are listed by prefix. The listed locations are where
    /// the files are: act on them through [`Self::without_remaps`], not this FileIO
    /// (which would remap them again).
    ///
    /// Errors: [`ErrorKind::Io`] naming the location when it cannot be listed; a
    /// missing local directory lists nothing.
    pub async fn list_files(&self, location: &str) -> Result<Vec<ListedFile>> {
        let resolved = self.resolve(location)?;
        if resolved.store_url == "file://" {
            let root = std::path::PathBuf::from(format!("/{}", resolved.path.as_ref()));
            let location = location.to_string();
            return tokio::task::spawn_blocking(move || local::walk(&root))
                .await
                .map_err(|e| Error::new(ErrorKind::Io, "listing task failed").with_source(e))?
                .map_err(|e| {
                    Error::new(ErrorKind::Io, format!("cannot list '{location}'")).with_source(e)
                });
        }
        use futures::TryStreamExt;
        let store = self.store(&resolved.store_url)?;
        let prefix = resolved.path.clone();
        let metas: Vec<object_store::ObjectMeta> = store
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(|e| map_store_error(e, location))?;
        Ok(metas
            .into_iter()
            .map(|m| ListedFile {
                location: format!("{}/{}", resolved.store_url, m.location.as_ref()),
                last_modified_ms: m.last_modified.timestamp_millis(),
                size: m.size,
            })
            .collect())
    }
}

/// Whether `e` failed at a cloud instance-metadata endpoint (AWS EC2's and ECS's
/// link-local addresses): object_store asks there for credentials when none are
/// configured, so off such an instance the request fails there, and its error named only
/// that endpoint (a tester's "PUT http://169.254.169.254/latest/api/token … 403").
pub(crate) fn no_credentials_configured(e: &object_store::Error) -> bool {
    let text = crate::error::with_causes(e);
    text.contains("169.254.169.254") || text.contains("169.254.170.2")
}

/// The error for `location` when [`no_credentials_configured`]: what to set.
pub(crate) fn missing_credentials(location: &str, e: object_store::Error) -> Error {
    Error::new(
        ErrorKind::PermissionDenied,
        format!(
            "no credentials for '{location}': set 's3.access-key-id' and \
             's3.secret-access-key' in the catalog config (the CLI's --catalog file, whose \
             keys also serve tables and files read by location), in the OPTIONS of a table \
             read by location (CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '…' \
             OPTIONS ('s3.access-key-id' '…', 's3.secret-access-key' '…')), or the \
             AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY environment; or let the REST \
             catalog vend them. Without them object_store asked the cloud instance metadata \
             endpoint, which did not give any"
        ),
    )
    .with_source(StoreCauses(e))
}

/// The error for a failed request to `location`, as icefloe's own reads report it: a
/// missing file is [`ErrorKind::NotFound`], a refusal [`ErrorKind::PermissionDenied`],
/// no credentials configured says where to set them; all name `location`, never a
/// credential. For callers that reach a store by other means (DataFusion's listing of a
/// file path read as a table).
pub fn store_error(location: &str, e: object_store::Error) -> Error {
    map_store_error(e, location)
}

/// The source object_store's local store gives the `NotFound` of a path that is a
/// directory (object_store 0.13 `local::open_metadata`).
const LOCAL_DIRECTORY: &str = "is directory";

/// Whether `e` is the local store's `NotFound` of a path that is a directory.
fn is_local_directory(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::NotFound { source, .. } if source.to_string() == LOCAL_DIRECTORY)
}

fn map_store_error(e: object_store::Error, location: &str) -> Error {
    if no_credentials_configured(&e) {
        return missing_credentials(location, e);
    }
    match e {
        // object_store's local store opens a directory, then refuses it as "not found:
        // is directory" (`local::open_metadata`): the path exists, as no file
        _ if is_local_directory(&e) => {
            Error::not_found(format!("'{location}' is a directory, not a file"))
        }
        object_store::Error::NotFound { .. } => {
            Error::not_found(format!("file '{location}' does not exist")).with_source(e)
        }
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => Error::new(
            ErrorKind::PermissionDenied,
            format!("access to '{location}' refused"),
        )
        .with_source(e),
        other => Error::new(ErrorKind::Io, format!("cannot read '{location}'"))
            .with_source(StoreCauses(other)),
    }
}

/// An object store error shown with its causes: for a request that got no answer,
/// object_store's message ends in "HTTP error: error sending request", and only its
/// causes say why (`Connection refused (os error 111)`, a DNS failure, the TLS
/// handshake's reason). Each cause is shown once, unless an earlier text holds it
/// already. `source()` is the store error's own, so the chain stays walkable.
#[derive(Debug)]
pub(crate) struct StoreCauses(pub(crate) object_store::Error);

impl std::fmt::Display for StoreCauses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::error::with_causes(&self.0))
    }
}

impl std::error::Error for StoreCauses {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request that failed at the instance metadata endpoint (no S3 keys configured)
    /// says what to set, as a permission error; other errors keep their kind.
    #[test]
    fn failing_at_the_instance_metadata_endpoint_names_the_missing_credentials() {
        let generic = |text: &str| object_store::Error::Generic {
            store: "S3",
            source: text.to_string().into(),
        };
        let e = map_store_error(
            generic(
                "Error performing PUT http://169.254.169.254/latest/api/token in 1ms - \
                 Server returned non-2xx status code: 403 Forbidden: resolve_deny",
            ),
            "s3://b/t/metadata/snap-1.avro",
        );
        assert_eq!(e.kind(), ErrorKind::PermissionDenied);
        let text = e.to_string();
        assert!(
            text.contains("no credentials for 's3://b/t/metadata/snap-1.avro'")
                && text.contains("'s3.access-key-id'")
                && text.contains("catalog config")
                && text.contains("CREATE EXTERNAL TABLE")
                && text.contains("AWS_ACCESS_KEY_ID"),
            "{text}"
        );
        let e = map_store_error(generic("connection reset"), "s3://b/x");
        assert_eq!(e.kind(), ErrorKind::Io);
    }

    #[test]
    fn normalizes_local_forms() {
        for loc in [
            "/tmp/t/a.parquet",
            "file:/tmp/t/a.parquet",
            "file:///tmp/t/a.parquet",
        ] {
            assert_eq!(normalize_location(loc).unwrap(), "file:///tmp/t/a.parquet");
        }
        assert_eq!(normalize_location("s3://b/k/").unwrap(), "s3://b/k");
        // RFC 8089: the authority `localhost` is this machine, another host is refused
        for loc in [
            "file://localhost/tmp/t/a.parquet",
            "file://LOCALHOST/tmp/t/a.parquet",
        ] {
            assert_eq!(normalize_location(loc).unwrap(), "file:///tmp/t/a.parquet");
        }
        let err = normalize_location("file://server/tmp/t").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(
            err.to_string()
                .contains("'file://server/tmp/t' names the host 'server'"),
            "{err}"
        );
        assert_eq!(
            normalize_location("file:/tmp/./t/../u/p=%2E%2E/a").unwrap(),
            "file:///tmp/u/p=%2E%2E/a"
        );
    }

    /// The shortcut for locations that are normal already gives what the full
    /// normalization gives, for every form either path handles.
    #[test]
    fn normal_locations_are_recognized_exactly() {
        let prefixes = [
            "", "file:", "file:/", "file://", "file:///", "s3://", " ", "a",
        ];
        let parts = ["", "/", "//", ".", "..", "b", "%2E", " c", "file:", "://"];
        let mut checked = 0;
        for prefix in prefixes {
            for a in parts {
                for b in parts {
                    for c in parts {
                        let loc = format!("{prefix}{a}/{b}{c}");
                        for loc in [loc.clone(), format!("{loc} "), format!("{loc}/x")] {
                            let Ok(full) = normalize_location_fully(&loc) else {
                                continue;
                            };
                            if is_normal_location(&loc) {
                                assert_eq!(full, loc, "shortcut taken for {loc:?}");
                                checked += 1;
                            }
                            assert_eq!(normalize_location(&loc).unwrap(), full, "{loc:?}");
                        }
                    }
                }
            }
        }
        assert!(
            checked > 100,
            "only {checked} normal locations among the inputs"
        );
    }

    /// [`normalize_location`] without its shortcut: a trailing newline is never
    /// normal, and the full normalization trims white space first, so the result is
    /// `location`'s.
    fn normalize_location_fully(location: &str) -> Result<String> {
        normalize_location(&format!("{location}\n"))
    }

    #[test]
    fn remaps_by_whole_segments() {
        let io = FileIO::default()
            .with_remap("file:///tmp/iceberg-corpus/t", "/data/t")
            .unwrap();
        assert_eq!(
            io.remap("file:/tmp/iceberg-corpus/t/data/x.parquet")
                .unwrap(),
            "file:///data/t/data/x.parquet"
        );
        // a sibling table that shares the prefix text is not remapped
        assert_eq!(
            io.remap("file:/tmp/iceberg-corpus/t2/x").unwrap(),
            "file:///tmp/iceberg-corpus/t2/x"
        );
        let r = io
            .resolve("file:/tmp/iceberg-corpus/t/data/x.parquet")
            .unwrap();
        assert_eq!(r.store_url, "file://");
        assert_eq!(r.path.as_ref(), "data/t/data/x.parquet");
    }

    /// A directory where a file is read (a metadata file replaced by one) says it is a
    /// directory; object_store's local store calls it "not found: is directory", which
    /// read "file '…' does not exist" (a tester's). A missing file still does not exist.
    #[tokio::test]
    async fn a_directory_read_as_a_file_is_named_a_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("v3.metadata.json");
        std::fs::create_dir(&path).expect("directory");
        let location = format!("file://{}", path.display());
        let e = FileIO::default()
            .read(&location)
            .await
            .expect_err("a directory");
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(
            e.to_string(),
            format!("not found: '{location}' is a directory, not a file")
        );
        let missing = format!("file://{}", dir.path().join("v4.metadata.json").display());
        let e = FileIO::default().read(&missing).await.expect_err("missing");
        assert!(
            e.to_string()
                .starts_with(&format!("not found: file '{missing}' does not exist")),
            "{e}"
        );
    }

    #[test]
    fn locations_are_never_percent_decoded_or_encoded() {
        let io = FileIO::default();
        for (loc, path) in [
            ("file:/t/data/p=x%2Fy/a.parquet", "t/data/p=x%2Fy/a.parquet"),
            (
                "file:///t/data/p=100%25/q+r=2/a.parquet",
                "t/data/p=100%25/q+r=2/a.parquet",
            ),
            ("/t/data/p=%2541/a b.parquet", "t/data/p=%2541/a b.parquet"),
            (
                "/t/data/p=%C3%A9/é#1.parquet",
                "t/data/p=%C3%A9/é#1.parquet",
            ),
        ] {
            let r = io.resolve(loc).unwrap();
            assert_eq!((r.store_url.as_str(), r.path.as_ref()), ("file://", path));
        }
        let r = io.resolve("s3://bucket/wh/p=a%2Bb/k?v=1.parquet").unwrap();
        assert_eq!(r.store_url, "s3://bucket");
        assert_eq!(r.path.as_ref(), "wh/p=a%2Bb/k?v=1.parquet");
        for bad in ["ht tp://h/x", "s3://b/t/../x", "s3://b/a//c"] {
            let err = io.resolve(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{bad}: {err}");
        }
    }

    #[tokio::test]
    async fn reads_files_whose_names_hold_escapes_literally() {
        let dir = tempfile::tempdir().unwrap();
        // the decoded name exists too, with other content: it must not be the one read
        for (name, content) in [
            ("p=x%2Fy", "encoded"),
            ("p=100%25", "percent"),
            ("p=%2541", "twice"),
            ("q+r=2", "plus"),
            ("p=100%", "decoded"),
            ("q r=2", "space"),
        ] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
            std::fs::write(dir.path().join(name).join("f%20.avro"), content).unwrap();
        }
        let io = FileIO::default();
        for (name, content) in [
            ("p=x%2Fy", "encoded"),
            ("p=100%25", "percent"),
            ("p=%2541", "twice"),
            ("q+r=2", "plus"),
        ] {
            let loc = format!("file:{}/{name}/f%20.avro", dir.path().display());
            assert_eq!(io.read(&loc).await.unwrap().as_ref(), content.as_bytes());
            assert!(io.exists(&loc).await.unwrap());
        }
        let listed = io
            .list_dir(&format!("{}/p=100%25", dir.path().display()))
            .await
            .unwrap();
        assert_eq!(listed, vec!["f%20.avro".to_string()]);
        // writes keep the name as given too
        let loc = format!("{}/new%3Dv/x+y.json", dir.path().display());
        io.write_new(&loc, Bytes::from_static(b"w")).await.unwrap();
        assert!(dir.path().join("new%3Dv/x+y.json").is_file());
    }

    #[test]
    fn resolves_cloud_urls() {
        let r = FileIO::default()
            .resolve("s3://bucket/wh/t/data/a.parquet")
            .unwrap();
        assert_eq!(r.store_url, "s3://bucket");
        assert_eq!(r.path.as_ref(), "wh/t/data/a.parquet");
    }

    #[test]
    fn cloud_locations_name_the_feature_or_build_a_store() {
        let io = FileIO::new(HashMap::from([(
            "s3.region".to_string(),
            "eu-west-1".to_string(),
        )]));
        let result = io.store("s3://bucket");
        if cfg!(feature = "cloud") {
            assert!(result.is_ok(), "{:?}", result.err());
        } else {
            let err = result.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                err.contains("'cloud' feature") && err.contains("s3://bucket"),
                "{err}"
            );
        }
    }

    #[tokio::test]
    async fn write_new_refuses_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let loc = format!("{}/sub/a.json", dir.path().display());
        let io = FileIO::default();
        io.write_new(&loc, Bytes::from_static(b"one"))
            .await
            .unwrap();
        let err = io
            .write_new(&loc, Bytes::from_static(b"two"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::AlreadyExists, "{err}");
        assert_eq!(io.read(&loc).await.unwrap().as_ref(), b"one");
        io.write(&loc, Bytes::from_static(b"three")).await.unwrap();
        assert_eq!(io.read(&loc).await.unwrap().as_ref(), b"three");
        io.delete(&loc).await.unwrap();
        io.delete(&loc).await.unwrap();
        assert!(!io.exists(&loc).await.unwrap());
    }

    #[tokio::test]
    #[cfg(unix)]
    async fn a_fifo_is_an_error_not_a_blocked_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("v1.metadata.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let location = fifo.to_str().unwrap();
        let io = FileIO::default();
        let read =
            tokio::time::timeout(std::time::Duration::from_secs(10), io.read(location)).await;
        let Ok(result) = read else {
            // unblock the reader (a writer opens and closes the FIFO) before failing
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
            panic!("reading a FIFO blocked");
        };
        let err = result.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Io, "{err}");
        let text = err.to_string();
        assert!(text.contains(location) && text.contains("a FIFO"), "{text}");
        // a regular file next to it still reads; a directory is still "not found"
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        let f = dir.path().join("f");
        assert_eq!(&io.read(f.to_str().unwrap()).await.unwrap()[..], b"x");
        let err = io.read(dir.path().to_str().unwrap()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    }

    #[tokio::test]
    async fn missing_file_is_not_found_naming_it() {
        let err = FileIO::default()
            .read("/nonexistent/icefloe/x.avro")
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        assert!(
            err.to_string().contains("/nonexistent/icefloe/x.avro"),
            "{err}"
        );
    }
}
