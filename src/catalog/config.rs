//! Building a catalog from a URI or a config file (the CLI's `--catalog`).
//!
//! | `--catalog` value | catalog |
//! |---|---|
//! | `sqlite:PATH`, `jdbc:sqlite:PATH`, `PATH.db` / `.sqlite` / `.sqlite3` | [`SqlCatalog`] (created when missing) |
//! | `sqlite:///rel/path.db`, `sqlite:////abs/path.db` | [`SqlCatalog`], SQLAlchemy's URL form (PyIceberg's `uri`) |
//! | `….metadata.json`, or a table directory (has `metadata/`) | [`StaticCatalog`] with that one table in the root namespace |
//! | any other directory or URL (`file:`, `s3://…`) | [`FileSystemCatalog`] with that warehouse |
//! | `rest:http(s)://host:port[/path]?warehouse=W[&key=value…]` | [`RestCatalog`](super::RestCatalog) (Iceberg REST) |
//! | `….json` (not metadata) / `….properties` / `….conf` / `….cfg` | a config file, below |
//!
//! A SQLite URI may end in `?catalog=NAME` to pick the `catalog_name`; without it a
//! database holding exactly one catalog uses that one; an empty one, or one holding a
//! catalog named `default` (PyIceberg's usual name) among others, uses `default`.
//!
//! Config files hold properties, as a JSON object or `key=value` lines (`#` comments):
//! `type` (`sql`, `hadoop`/`filesystem`, `static`, `rest`), `name`, `uri` (SQL, REST),
//! `warehouse` (filesystem, REST; SQL: where new tables go, default the database's
//! directory), `table.<ns>.<name>` = location (static; JSON may use a
//! `tables` object instead); every other key is an object store property (e.g.
//! `s3.endpoint`, `aws_region`) or, for REST, a client property (`credential`, `token`,
//! `oauth2-server-uri`, `scope`, `header.<Name>`), with Iceberg's names as PyIceberg
//! and Spark take them. Relative paths are resolved against the config file's directory
//! (not for REST, whose `warehouse` may be a plain name). `Debug` output of a config
//! shows secret values as `***`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Catalog, FileSystemCatalog, SqlCatalog, StaticCatalog, TableIdent};
use crate::error::{Error, ErrorKind, Result};
use crate::table::OpenOptions;

/// Properties of a catalog, as read from a config file or derived from a URI.
#[derive(Clone, Default, PartialEq)]
pub struct CatalogConfig {
    /// `sql`, `hadoop` (or `filesystem`) or `static`.
    pub catalog_type: String,
    /// The catalog name (`None`: derived, see the module docs).
    pub name: Option<String>,
    /// SQL: the SQLite database file.
    pub uri: Option<String>,
    /// Filesystem, REST: the warehouse; SQL: where new tables go (default: the
    /// database file's directory).
    pub warehouse: Option<String>,
    /// Static: table identifier → metadata file or table directory.
    pub tables: BTreeMap<String, String>,
    /// Object store properties, passed to every table opened.
    pub properties: BTreeMap<String, String>,
}

impl std::fmt::Debug for CatalogConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogConfig")
            .field("catalog_type", &self.catalog_type)
            .field("name", &self.name)
            .field("uri", &self.uri)
            .field("warehouse", &self.warehouse)
            .field("tables", &self.tables)
            .field("properties", &crate::io::redacted(&self.properties))
            .finish()
    }
}

/// The config of a `rest:http(s)://…[?warehouse=…&key=value]` URI.
fn rest_spec(uri: &str) -> Result<CatalogConfig> {
    let parsed = url::Url::parse(uri).map_err(|e| {
        Error::invalid_argument(format!(
            "REST catalog URI '{}' is not a URL",
            without_secrets(uri)
        ))
        .with_source(e)
    })?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(Error::invalid_argument(format!(
            "REST catalog URI '{}' holds a user name or password: a URI is shown in \
             errors, logs and shell history, so put credentials in a config file \
             ('credential=…' or 'token=…')",
            without_secrets(uri)
        )));
    }
    let mut properties: BTreeMap<String, String> = parsed.query_pairs().into_owned().collect();
    if let Some(key) = properties.keys().find(|k| crate::io::is_secret(k)) {
        return Err(Error::invalid_argument(format!(
            "REST catalog URI '{}' holds the secret '{key}': a URI is shown in errors, logs \
             and shell history, so put secrets in a config file",
            without_secrets(uri)
        )));
    }
    let mut base = parsed.clone();
    base.set_query(None);
    Ok(CatalogConfig {
        catalog_type: "rest".into(),
        name: properties.remove("name"),
        uri: Some(base.to_string().trim_end_matches('/').to_string()),
        warehouse: properties.remove("warehouse"),
        tables: BTreeMap::new(),
        properties,
    })
}

/// `uri` as errors may show it: without its query and without a `user:password@`.
fn without_secrets(uri: &str) -> String {
    let base = uri.split(['?', '#']).next().unwrap_or_default();
    match base.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = authority.rsplit('@').next().unwrap_or(authority);
            let path = if path.is_empty() {
                String::new()
            } else {
                format!("/{path}")
            };
            format!("{scheme}://{host}{path}")
        }
        None => base.rsplit('@').next().unwrap_or(base).to_string(),
    }
}

impl CatalogConfig {
    /// A `--catalog` value (or any catalog URI) as an error may show it: the user info of
    /// a URL (`user:password@`) is `***`, and so is the value of every query parameter
    /// whose name is a secret's (`credential`, `token`, `password`, `…-key`, …, see
    /// [`is_secret`](crate::io::is_secret)); the fragment is dropped. Other values (paths,
    /// `warehouse=`, `?catalog=`) are kept as given.
    pub fn redacted_spec(spec: &str) -> String {
        let spec = spec.split('#').next().unwrap_or_default();
        let (head, query) = match spec.split_once('?') {
            Some((h, q)) => (h, Some(q)),
            None => (spec, None),
        };
        let head = match head.split_once("://") {
            Some((scheme, rest)) => {
                let (authority, path) = match rest.find('/') {
                    Some(i) => rest.split_at(i),
                    None => (rest, ""),
                };
                match authority.rsplit_once('@') {
                    Some((_, host)) => format!("{scheme}://***@{host}{path}"),
                    None => head.to_string(),
                }
            }
            None => head.to_string(),
        };
        let Some(query) = query else {
            return head;
        };
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| {
                let key = url::form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .map(|(k, _)| k.into_owned())
                    .unwrap_or_default();
                match pair.split_once('=') {
                    Some((raw_key, _)) if crate::io::is_secret(&key) => format!("{raw_key}=***"),
                    _ => pair.to_string(),
                }
            })
            .collect();
        format!("{head}?{}", pairs.join("&"))
    }
}

fn is_sqlite_path(s: &str) -> bool {
    [".db", ".sqlite", ".sqlite3"]
        .iter()
        .any(|ext| s.ends_with(ext))
}

fn is_config_path(s: &str) -> bool {
    (s.ends_with(".json") && !s.ends_with(".metadata.json"))
        || [".properties", ".conf", ".cfg"]
            .iter()
            .any(|ext| s.ends_with(ext))
}

/// The SQLite file of a SQL catalog URI, and a `?catalog=` name if present.
fn sqlite_path(uri: &str) -> (String, Option<String>) {
    let (uri, name) = match uri.split_once("?catalog=") {
        Some((u, n)) => (u, Some(n.to_string())),
        None => (uri, None),
    };
    let uri = uri.strip_prefix("jdbc:").unwrap_or(uri);
    let path = if let Some(rest) = uri.strip_prefix("sqlite:///") {
        // SQLAlchemy: three slashes then a relative path; a fourth makes it absolute
        rest.to_string()
    } else if let Some(rest) = uri.strip_prefix("sqlite://") {
        rest.to_string()
    } else if let Some(rest) = uri.strip_prefix("sqlite:") {
        rest.strip_prefix("file:").unwrap_or(rest).to_string()
    } else {
        uri.to_string()
    };
    (path, name)
}

impl CatalogConfig {
    /// The config a `--catalog` value stands for (see the module docs); config files are
    /// read.
    pub fn from_spec(spec: &str) -> Result<CatalogConfig> {
        let spec = spec.trim();
        if let Some(uri) = spec.strip_prefix("rest:") {
            return rest_spec(uri);
        }
        let lower = spec.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Err(Error::invalid_argument(format!(
                "catalog URI '{shown}' is an HTTP endpoint: to open it as a REST catalog write \
                 'rest:{shown}'",
                shown = Self::redacted_spec(spec)
            )));
        }
        if let Some(kind) = unsupported_catalog(spec) {
            return Err(Error::unsupported(format!(
                "catalog URI '{}' names a {kind}, which icefloe does not support \
                 (supported: REST catalogs as 'rest:http(s)://…', SQLite catalogs, warehouse \
                 directories, metadata files, config files)",
                Self::redacted_spec(spec)
            )));
        }
        if spec.starts_with("sqlite:") || spec.starts_with("jdbc:sqlite:") || is_sqlite_path(spec) {
            let (path, name) = sqlite_path(spec);
            return Ok(CatalogConfig {
                catalog_type: "sql".into(),
                name,
                uri: Some(path),
                ..Default::default()
            });
        }
        if is_config_path(spec) {
            return Self::from_file(Path::new(spec));
        }
        let local = !spec.contains("://") || spec.starts_with("file:");
        let path = spec
            .strip_prefix("file://")
            .or_else(|| spec.strip_prefix("file:"))
            .unwrap_or(spec);
        if spec.ends_with(".metadata.json") || (local && Path::new(path).join("metadata").is_dir())
        {
            return Ok(CatalogConfig {
                catalog_type: "static".into(),
                tables: BTreeMap::from([(table_name_of(spec), spec.to_string())]),
                ..Default::default()
            });
        }
        Ok(CatalogConfig {
            catalog_type: "hadoop".into(),
            warehouse: Some(spec.to_string()),
            ..Default::default()
        })
    }

    /// Read a config file: a JSON object, or properties in the Java properties format
    /// (`key=value`, `key: value` or `key value` lines, `#`/`!` comments, backslash escapes
    /// and continuation lines, as `java.util.Properties.load` reads them; see
    /// `java_properties`). Relative `uri`/`warehouse`/`table.*` paths are relative to the
    /// file's directory.
    pub fn from_file(path: &Path) -> Result<CatalogConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                ErrorKind::NotFound
            } else {
                ErrorKind::Io
            };
            Error::new(kind, format!("catalog config file '{}'", path.display())).with_source(e)
        })?;
        let mut props: BTreeMap<String, String> = BTreeMap::new();
        let mut tables = BTreeMap::new();
        if text.trim_start().starts_with('{') {
            let json: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
                .map_err(|e| {
                    Error::invalid_data(format!(
                        "catalog config file '{}' is not a JSON object",
                        path.display()
                    ))
                    .with_source(e)
                })?;
            for (k, v) in json {
                match (k.as_str(), v) {
                    ("tables", serde_json::Value::Object(t)) => {
                        for (ident, loc) in t {
                            let loc = loc
                                .as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| loc.to_string());
                            tables.insert(ident, loc);
                        }
                    }
                    (_, serde_json::Value::String(s)) => {
                        props.insert(k, s);
                    }
                    (_, other) => {
                        props.insert(k, other.to_string());
                    }
                }
            }
        } else {
            let file = path.display().to_string();
            for (k, v) in super::java_properties::parse(&text, &file)? {
                props.insert(k, v);
            }
        }
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let relative = |s: String| -> String {
            // `file:x` without a slash is a relative path too, resolved as `x` is (it was
            // against the working directory)
            let path = match s.strip_prefix("file:") {
                Some(rest) if !rest.starts_with('/') => rest.to_string(),
                _ => s.clone(),
            };
            let local = !path.contains("://")
                && !path.starts_with("file:")
                && !Path::new(&path).is_absolute();
            if local {
                base.join(path).to_string_lossy().to_string()
            } else {
                s
            }
        };
        for (k, v) in props.clone() {
            if let Some(ident) = k.strip_prefix("table.") {
                props.remove(&k);
                tables.insert(ident.to_string(), v);
            }
        }
        let tables = tables.into_iter().map(|(k, v)| (k, relative(v))).collect();
        if props.get("type").is_some_and(|t| t == "rest") {
            props.remove("type");
            return Ok(CatalogConfig {
                catalog_type: "rest".into(),
                name: props.remove("name"),
                uri: props.remove("uri"),
                warehouse: props.remove("warehouse"),
                tables,
                properties: props,
            });
        }
        let uri = props.remove("uri").map(|u| {
            let (p, name) = sqlite_path(&u);
            (relative(p), name)
        });
        let warehouse = props.remove("warehouse").map(relative);
        let catalog_type = props.remove("type").unwrap_or_else(|| {
            if uri.is_some() {
                "sql".into()
            } else if warehouse.is_some() {
                "hadoop".into()
            } else {
                "static".into()
            }
        });
        let name = props
            .remove("name")
            .or_else(|| uri.as_ref().and_then(|u| u.1.clone()));
        Ok(CatalogConfig {
            catalog_type,
            name,
            uri: uri.map(|u| u.0),
            warehouse,
            tables,
            properties: props,
        })
    }

    /// Build the catalog.
    ///
    /// Errors: an unknown `type` or a missing `uri` / `warehouse`
    /// ([`ErrorKind::InvalidArgument`]); a catalog type of Iceberg Java, Spark or PyIceberg
    /// that icefloe does not open (`hive`, `glue`, `nessie`, …: [`ErrorKind::Unsupported`]); a SQLite database holding several catalogs and no
    /// name given (naming them); the errors of opening the catalog.
    pub fn build(&self) -> Result<Arc<dyn Catalog>> {
        let options = OpenOptions {
            storage_properties: self.properties.clone().into_iter().collect(),
            ..Default::default()
        };
        match self.catalog_type.to_ascii_lowercase().as_str() {
            "sql" | "jdbc" | "sqlite" => {
                let uri = self
                    .uri
                    .as_deref()
                    .ok_or_else(|| Error::invalid_argument("SQL catalog config has no 'uri'"))?;
                let path = PathBuf::from(uri);
                // An empty file (`touch catalog.db`) is a new catalog, as a missing one is;
                // a non-empty database without the catalog tables is refused.
                let existing = std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() > 0);
                let name = match &self.name {
                    Some(n) if existing => {
                        // a name the database does not hold is most likely a typo
                        let names = SqlCatalog::catalog_names(&path)?;
                        if !names.is_empty() && !names.contains(n) {
                            return Err(Error::not_found(format!(
                                "catalog '{n}' in SQL catalog database '{uri}' (it holds: {})",
                                names.join(", ")
                            )));
                        }
                        n.clone()
                    }
                    Some(n) => n.clone(),
                    None if existing => {
                        let names = SqlCatalog::catalog_names(&path)?;
                        match names.as_slice() {
                            [] => "default".to_string(),
                            [one] => one.clone(),
                            many if many.iter().any(|n| n == "default") => "default".to_string(),
                            many => {
                                return Err(Error::invalid_argument(format!(
                                "SQL catalog '{uri}' holds several catalogs ({}); pick one with \
                                     '?catalog=NAME' or a config file with name=NAME",
                                many.join(", ")
                            )))
                            }
                        }
                    }
                    None => "default".to_string(),
                };
                let mut catalog =
                    SqlCatalog::open_or_create(&name, &path)?.with_open_options(options);
                // where new tables go, as PyIceberg's `SqlCatalog` takes it
                if let Some(warehouse) = &self.warehouse {
                    catalog = catalog.with_warehouse(warehouse)?;
                }
                Ok(Arc::new(catalog))
            }
            "hadoop" | "filesystem" | "fs" => {
                let warehouse = self.warehouse.as_deref().ok_or_else(|| {
                    Error::invalid_argument("filesystem catalog config has no 'warehouse'")
                })?;
                let name = self
                    .name
                    .clone()
                    .unwrap_or_else(|| table_name_of(warehouse));
                Ok(Arc::new(FileSystemCatalog::with_options(
                    &name, warehouse, options,
                )?))
            }
            "static" => {
                let name = self.name.clone().unwrap_or_else(|| "static".to_string());
                let mut catalog = StaticCatalog::new(&name).with_open_options(options);
                for (ident, location) in &self.tables {
                    catalog.add_table(TableIdent::parse(ident), location);
                }
                Ok(Arc::new(catalog))
            }
            "rest" => self.build_rest(),
            other => Err(match unsupported_catalog_type(other) {
                Some(kind) => Error::unsupported(format!(
                    "catalog type '{other}' ({kind}) is not supported by icefloe \
                     (supported types: sql (also jdbc), hadoop, static, rest)"
                )),
                None => Error::invalid_argument(format!(
                    "unknown catalog type '{other}' (expected sql, hadoop, static or rest)"
                )),
            }),
        }
    }
}

impl CatalogConfig {
    /// A [`RestCatalog`](super::RestCatalog) from `uri`, `warehouse` and the properties.
    #[cfg(feature = "cloud")]
    fn build_rest(&self) -> Result<Arc<dyn Catalog>> {
        let mut properties = self.properties.clone();
        let uri = self
            .uri
            .clone()
            .ok_or_else(|| Error::invalid_argument("REST catalog config has no 'uri'"))?;
        properties.insert("uri".into(), uri);
        if let Some(w) = &self.warehouse {
            properties.insert("warehouse".into(), w.clone());
        }
        let name = self.name.clone().unwrap_or_else(|| "rest".to_string());
        Ok(Arc::new(super::RestCatalog::new(&name, properties)?))
    }

    /// Without the `cloud` feature there is no HTTP client.
    #[cfg(not(feature = "cloud"))]
    fn build_rest(&self) -> Result<Arc<dyn Catalog>> {
        Err(Error::unsupported(
            "the REST catalog: icefloe was built without the 'cloud' feature; rebuild with \
             `--features cloud`",
        ))
    }
}

/// The kind of catalog a URI of a catalog type icefloe does not open names, if it is one.
fn unsupported_catalog(spec: &str) -> Option<&'static str> {
    let scheme = spec.split_once("://")?.0.to_ascii_lowercase();
    let scheme = scheme.strip_prefix("jdbc:").unwrap_or(&scheme);
    Some(match scheme {
        "postgresql" | "postgres" => "PostgreSQL (JDBC) catalog",
        "mysql" | "mariadb" => "MySQL (JDBC) catalog",
        "thrift" => "Hive Metastore catalog",
        "glue" => "AWS Glue catalog",
        "nessie" => "Nessie catalog",
        _ => return None,
    })
}

/// The kind of catalog a config file's `type` names when it is a type of Iceberg Java,
/// Spark or PyIceberg that icefloe does not open (`hive`, `glue`, …), if it is one.
fn unsupported_catalog_type(catalog_type: &str) -> Option<&'static str> {
    Some(match catalog_type {
        "hive" => "Hive Metastore catalog",
        "glue" => "AWS Glue catalog",
        "nessie" => "Nessie catalog",
        "dynamodb" => "DynamoDB catalog",
        "bigquery" => "BigQuery metastore catalog",
        "in-memory" | "inmemory" | "memory" => "in-memory catalog",
        _ => return None,
    })
}

/// A name for a table or warehouse at `location`: its directory name (for a metadata
/// file, the directory above `metadata/`), made SQL-friendly.
fn table_name_of(location: &str) -> String {
    let trimmed = location.trim_end_matches('/');
    let dir = if trimmed.ends_with(".json") {
        let parent = trimmed.rsplit_once('/').map_or("", |p| p.0);
        parent.strip_suffix("/metadata").unwrap_or(parent)
    } else {
        trimmed
    };
    let name = dir.rsplit('/').next().unwrap_or(dir);
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        "iceberg".into()
    } else {
        clean
    }
}

/// Build a catalog from a `--catalog` value: a URI, a path or a config file (see the
/// module docs).
pub fn load_catalog(spec: &str) -> Result<Arc<dyn Catalog>> {
    CatalogConfig::from_spec(spec)?.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        let c = CatalogConfig::from_spec("sqlite:///warehouse/catalog.db").unwrap();
        assert_eq!(
            (c.catalog_type.as_str(), c.uri.as_deref()),
            ("sql", Some("warehouse/catalog.db"))
        );
        let c = CatalogConfig::from_spec("sqlite:////abs/c.db?catalog=prod").unwrap();
        assert_eq!(
            (c.uri.as_deref(), c.name.as_deref()),
            (Some("/abs/c.db"), Some("prod"))
        );
        let c = CatalogConfig::from_spec("jdbc:sqlite:/abs/c.db").unwrap();
        assert_eq!(c.uri.as_deref(), Some("/abs/c.db"));
        let c = CatalogConfig::from_spec("/nonexistent/wh").unwrap();
        assert_eq!(c.catalog_type, "hadoop");
        let c = CatalogConfig::from_spec("/x/orders/metadata/v3.metadata.json").unwrap();
        assert_eq!(c.catalog_type, "static");
        assert!(c.tables.contains_key("orders"));
        assert_eq!(table_name_of("/a/My-Warehouse/"), "my_warehouse");
        for (uri, kind) in [
            ("postgresql://db/iceberg", "PostgreSQL"),
            ("jdbc:postgresql://db/iceberg", "PostgreSQL"),
            ("thrift://metastore:9083", "Hive Metastore"),
        ] {
            let err = CatalogConfig::from_spec(uri).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Unsupported, "{uri}");
            assert!(err.to_string().contains(kind), "{uri}: {err}");
        }
        // a bare HTTP endpoint is most likely a REST catalog missing its `rest:` prefix
        let err = CatalogConfig::from_spec("http://localhost:8181").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(
            err.to_string()
                .contains("write 'rest:http://localhost:8181'"),
            "{err}"
        );
    }

    /// `warehouse=` of a SQL catalog's config is where its new tables go, as in
    /// PyIceberg (it was ignored: tables went next to the database; a tester's).
    #[tokio::test]
    async fn sql_config_warehouse_places_new_tables() {
        use crate::catalog::{Namespace, TableCreation};
        use crate::spec::{NestedField, PrimitiveType, Schema, Type};

        let dir = tempfile::tempdir().unwrap();
        let absolute = dir.path().join("abs");
        for (i, (warehouse, expected)) in [
            ("tables".to_string(), dir.path().join("tables")),
            (format!("file://{}", absolute.display()), absolute.clone()),
            // a relative `file:` path is relative to the config file, as a bare one is
            // (it was relative to the working directory; a tester's)
            ("file:rel".to_string(), dir.path().join("rel")),
        ]
        .into_iter()
        .enumerate()
        {
            let p = dir.path().join("cat.properties");
            std::fs::write(
                &p,
                format!("type=sql\nuri=sqlite:///c.db\nwarehouse={warehouse}\n"),
            )
            .unwrap();
            let catalog = CatalogConfig::from_file(&p).unwrap().build().unwrap();
            let ns = Namespace::parse(&format!("ns{i}"));
            catalog
                .create_namespace(&ns, &Default::default())
                .await
                .unwrap();
            let schema = Schema::new(
                0,
                vec![NestedField::optional(
                    1,
                    "i",
                    Type::Primitive(PrimitiveType::Int),
                )],
            );
            let table = catalog
                .create_table(
                    &TableIdent::new(ns.clone(), "t"),
                    TableCreation::new(schema),
                )
                .await
                .unwrap();
            let want = format!("file://{}/{ns}/t", expected.display());
            assert_eq!(table.metadata().location, want);
            assert!(expected.join(ns.to_string()).join("t/metadata").is_dir());
        }
    }

    #[test]
    fn config_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cat.properties");
        std::fs::write(
            &p,
            "# a catalog\ntype=sql\nuri=sqlite:///c.db\nname=prod\naws_region=eu-west-1\n",
        )
        .unwrap();
        let c = CatalogConfig::from_file(&p).unwrap();
        assert_eq!(c.name.as_deref(), Some("prod"));
        assert_eq!(
            c.uri.as_deref(),
            Some(dir.path().join("c.db").to_str().unwrap())
        );
        assert_eq!(
            c.properties.get("aws_region").map(String::as_str),
            Some("eu-west-1")
        );
        let p = dir.path().join("cat.json");
        std::fs::write(&p, r#"{"type": "static", "tables": {"ns.t": "/x/t"}}"#).unwrap();
        let c = CatalogConfig::from_file(&p).unwrap();
        assert_eq!(c.tables.get("ns.t").map(String::as_str), Some("/x/t"));
        let err = CatalogConfig {
            catalog_type: "nessie".into(),
            ..Default::default()
        }
        .build()
        .unwrap_err();
        assert!(err.to_string().contains("'nessie'"), "{err}");
    }

    #[test]
    fn rest_uris_hold_no_secrets_and_errors_show_none() {
        for uri in [
            "rest:http://127.0.0.1:8181?credential=a:TOPSECRET",
            "rest:http://127.0.0.1:8181?warehouse=w&token=TOPSECRET",
            "rest:http://127.0.0.1:8181?s3.secret-access-key=TOPSECRET",
            "rest:http://user:TOPSECRET@127.0.0.1:8181",
            // not a URL at all: the message shows no query
            "rest:http://[bad?credential=a:TOPSECRET",
        ] {
            let err = CatalogConfig::from_spec(uri).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{uri}: {err}");
            let message = format!("{err} {err:?}");
            assert!(!message.contains("TOPSECRET"), "{uri}: {message}");
            assert!(message.contains("REST catalog URI"), "{uri}: {message}");
        }
        assert_eq!(
            without_secrets("http://u:p@host:1/a/b?x=1#f"),
            "http://host:1/a/b"
        );
    }

    /// A catalog URI an error echoes keeps no secret: not the user info, not a secret
    /// query parameter, in the unsupported-catalog and HTTP-endpoint errors too; the
    /// rest of it is kept so the message still names the catalog.
    #[test]
    fn redacted_specs_keep_no_secret() {
        for (spec, shown) in [
            (
                "rest:http://127.0.0.1:8181/api?warehouse=s3://wh&credential=id:TOPSECRET",
                "rest:http://127.0.0.1:8181/api?warehouse=s3://wh&credential=***",
            ),
            (
                "jdbc:postgresql://db:5432/ice?user=u&password=TOPSECRET&ssl=true",
                "jdbc:postgresql://db:5432/ice?user=u&password=***&ssl=true",
            ),
            (
                "thrift://admin:TOPSECRET@metastore:9083/x#TOPSECRET",
                "thrift://***@metastore:9083/x",
            ),
            (
                "http://h:1?s3.secret-access-key=TOPSECRET&token&header.X-Api=TOPSECRET",
                "http://h:1?s3.secret-access-key=***&token&header.X-Api=***",
            ),
            // percent-encoded names are secrets too
            (
                "http://h?cred%65ntial=TOPSECRET",
                "http://h?cred%65ntial=***",
            ),
            (
                "sqlite:///rel/c.db?catalog=prod",
                "sqlite:///rel/c.db?catalog=prod",
            ),
            ("/data/user@host/wh", "/data/user@host/wh"),
        ] {
            assert_eq!(CatalogConfig::redacted_spec(spec), shown, "{spec}");
        }
        for spec in [
            "jdbc:postgresql://db:5432/ice?user=u&password=TOPSECRET",
            "postgresql://u:TOPSECRET@db/ice",
            "https://catalog.example.com/api?credential=id:TOPSECRET",
        ] {
            let err = CatalogConfig::from_spec(spec).unwrap_err();
            let message = format!("{err} {err:?}");
            assert!(!message.contains("TOPSECRET"), "{spec}: {message}");
            assert!(message.contains("catalog URI '"), "{spec}: {message}");
        }
    }

    #[test]
    fn rest_uris_and_files() {
        let c = CatalogConfig::from_spec(
            "rest:http://127.0.0.1:8181/api/catalog?warehouse=s3://wh&s3.region=eu-west-1",
        )
        .unwrap();
        assert_eq!(c.catalog_type, "rest");
        assert_eq!(c.uri.as_deref(), Some("http://127.0.0.1:8181/api/catalog"));
        assert_eq!(c.warehouse.as_deref(), Some("s3://wh"));
        assert_eq!(c.properties["s3.region"], "eu-west-1");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lake.properties");
        std::fs::write(
            &p,
            "type=rest\nuri=http://127.0.0.1:8181\nwarehouse=analytics\ncredential=id:top-secret\n\
             s3.secret-access-key=also-secret\ns3.endpoint=http://127.0.0.1:8333\n",
        )
        .unwrap();
        let c = CatalogConfig::from_file(&p).unwrap();
        assert_eq!(c.warehouse.as_deref(), Some("analytics"));
        assert_eq!(c.uri.as_deref(), Some("http://127.0.0.1:8181"));
        let debug = format!("{c:?}");
        assert!(
            !debug.contains("top-secret") && !debug.contains("also-secret"),
            "{debug}"
        );
        assert!(debug.contains("http://127.0.0.1:8333"), "{debug}");
        let built = c.build();
        if cfg!(feature = "cloud") {
            let catalog = built.unwrap();
            assert_eq!(catalog.name(), "rest");
            let debug = format!("{catalog:?}");
            assert!(
                !debug.contains("top-secret") && !debug.contains("also-secret"),
                "{debug}"
            );
        } else {
            let err = built.unwrap_err().to_string();
            assert!(err.contains("'cloud' feature"), "{err}");
        }
    }
}
