//! The object stores of the CLI's session: a file path read as a table (`FROM
//! 's3://bucket/f.parquet'`), `CREATE EXTERNAL TABLE … STORED AS PARQUET LOCATION
//! 's3://…'` and `COPY … TO 's3://…'` reach their bucket through DataFusion's
//! `RuntimeEnv`, which serves only the stores registered in it. [`CliObjectStores`] builds
//! the store of a cloud URL on first use with icefloe's own io layer (the builder the
//! Iceberg FileIO uses: [`icefloe::io::FileIO::store`]), as `datafusion-cli` builds
//! stores from the environment; a URL no store can serve is refused naming it and what
//! icefloe reads, not with DataFusion's "No suitable object store … likely a bug".
//!
//! The stores, `iceberg_scan('s3://…')`, `--table t=s3://…` and `CREATE EXTERNAL TABLE
//! … STORED AS ICEBERG` all read with [`location_properties`]: the storage keys of the
//! `--catalog` config (`s3.*`, `gcs.*`, `adls.*`, `client.*`, `aws_*`, …), less those
//! the environment sets (`AWS_ENDPOINT` over `s3.endpoint`, `AWS_ACCESS_KEY_ID` over
//! `s3.access-key-id`, …): the environment still wins, and a table's `OPTIONS` win over
//! both.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use datafusion::common::{plan_datafusion_err, DataFusionError, Result as DFResult};
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use icefloe::datafusion::STORAGE_OPTION_PREFIXES;
use icefloe::io::{store_options, FileIO};
use object_store::{ObjectStore, ObjectStoreScheme};
use url::Url;

/// The storage properties of the catalog config `properties` (every key but the
/// catalog's own: `type`, `uri`, `credential`, …) that tables and files read by location
/// use, less those whose settings the environment `env` ((name, value) pairs, e.g.
/// `std::env::vars()`) gives: see the module docs.
pub fn location_properties<'a>(
    properties: impl IntoIterator<Item = (&'a String, &'a String)>,
    env: impl IntoIterator<Item = (String, String)>,
) -> HashMap<String, String> {
    let none = HashMap::<String, String>::new();
    let from_env: HashSet<String> = store_options(env, &none)
        .map(|options| options.into_keys().collect())
        .unwrap_or_default();
    properties
        .into_iter()
        .filter(|(key, _)| STORAGE_OPTION_PREFIXES.iter().any(|p| key.starts_with(p)))
        .filter(|(key, value)| {
            // the settings this key makes ("allow_http" goes with an http endpoint)
            let one = HashMap::from([((*key).clone(), (*value).clone())]);
            let made = store_options(std::iter::empty(), &one).unwrap_or_default();
            !made
                .keys()
                .any(|k| k != "allow_http" && from_env.contains(k))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// DataFusion's registry (the local file system), with the store of each cloud URL
/// built on first use from the session's storage properties: see the module docs.
#[derive(Debug)]
pub struct CliObjectStores {
    registered: DefaultObjectStoreRegistry,
    /// Builds the cloud stores.
    io: FileIO,
    /// The cloud stores built, by store URL.
    built: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
}

impl CliObjectStores {
    /// Stores configured with `properties` (see [`location_properties`]) and the
    /// environment.
    pub fn new(properties: HashMap<String, String>) -> Arc<Self> {
        Arc::new(Self {
            registered: DefaultObjectStoreRegistry::new(),
            io: FileIO::new(properties),
            built: Mutex::default(),
        })
    }
}

/// `scheme://authority` of `url`, its user part (an Azure container) included: the
/// store URL icefloe's FileIO keys stores by.
fn store_url(url: &Url) -> String {
    format!(
        "{}://{}",
        url.scheme(),
        &url[url::Position::BeforeUsername..url::Position::AfterPort]
    )
}

impl ObjectStoreRegistry for CliObjectStores {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.registered.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> DFResult<Arc<dyn ObjectStore>> {
        self.registered.deregister_store(url)
    }

    /// Errors: a plan error naming the URL for a scheme no store serves; icefloe's error
    /// naming the store URL (never a credential) when its store cannot be configured.
    fn get_store(&self, url: &Url) -> DFResult<Arc<dyn ObjectStore>> {
        if let Ok(store) = self.registered.get_store(url) {
            return Ok(store);
        }
        let store_url = store_url(url);
        match ObjectStoreScheme::parse(url) {
            Ok((ObjectStoreScheme::Local | ObjectStoreScheme::Memory, _)) | Err(_) => {
                Err(plan_datafusion_err!(
                    "no object store serves '{store_url}': the CLI reads local paths, \
                     file: URLs and object store URLs (s3://, s3a://, gs://, az://, abfs://, \
                     abfss://, http(s)://), with the storage properties of the --catalog \
                     config (s3.endpoint, s3.access-key-id, …) or the AWS_*, GOOGLE_* and \
                     AZURE_* environment"
                ))
            }
            Ok(_) => {
                let mut built = self
                    .built
                    .lock()
                    .map_err(|_| plan_datafusion_err!("the CLI's object stores are poisoned"))?;
                if let Some(store) = built.get(&store_url) {
                    return Ok(Arc::clone(store));
                }
                let store = self
                    .io
                    .store(&store_url)
                    .map_err(|e| DataFusionError::External(Box::new(e)))?;
                built.insert(store_url, Arc::clone(&store));
                Ok(store)
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
    fn catalog_storage_keys_serve_locations_unless_the_environment_sets_them() {
        let catalog = props(&[
            ("type", "rest"),
            ("uri", "http://h:1"),
            ("credential", "id:secret"),
            ("warehouse", "s3://wh"),
            ("s3.endpoint", "http://h:2"),
            ("s3.access-key-id", "id"),
            ("s3.secret-access-key", "secret"),
            ("s3.region", "us-east-1"),
        ]);
        let none = location_properties(&catalog, std::iter::empty());
        assert_eq!(
            none,
            props(&[
                ("s3.endpoint", "http://h:2"),
                ("s3.access-key-id", "id"),
                ("s3.secret-access-key", "secret"),
                ("s3.region", "us-east-1"),
            ])
        );
        let env = [
            ("AWS_ACCESS_KEY_ID".to_string(), "env-id".to_string()),
            ("AWS_REGION".to_string(), "eu-west-1".to_string()),
            ("HOME".to_string(), "/root".to_string()),
        ];
        let with_env = location_properties(&catalog, env);
        assert_eq!(
            with_env,
            props(&[
                ("s3.endpoint", "http://h:2"),
                ("s3.secret-access-key", "secret"),
            ])
        );
    }

    #[test]
    fn unserved_schemes_are_refused_naming_the_url() {
        let stores = CliObjectStores::new(HashMap::new());
        for url in ["hdfs://nn:9000/d/f.parquet", "memory:///x"] {
            let url = Url::parse(url).expect("url");
            let err = stores.get_store(&url).expect_err("no store").to_string();
            assert!(err.contains(&store_url(&url)), "{err}");
            assert!(err.contains("--catalog") && !err.contains("bug"), "{err}");
        }
        let local = Url::parse("file:///tmp/x.parquet").expect("url");
        assert!(stores.get_store(&local).is_ok());
    }

    #[cfg(feature = "cloud")]
    #[test]
    fn cloud_stores_are_built_once_per_bucket() {
        let stores = CliObjectStores::new(props(&[
            ("s3.endpoint", "http://127.0.0.1:1"),
            ("s3.region", "us-east-1"),
        ]));
        let a = Url::parse("s3://bucket-a/f.parquet").expect("url");
        let first = stores.get_store(&a).expect("s3 store");
        let again = stores.get_store(&a).expect("s3 store");
        assert!(Arc::ptr_eq(&first, &again));
    }
}
