//! `--catalog`: opening the catalog so that a typo fails loudly.
//!
//! A SQLite catalog (`sqlite:PATH`, `sqlite:///relative.db`, `sqlite:////absolute.db`,
//! `jdbc:sqlite:/absolute.db`, `PATH.db`, or `uri=` in a config file) must exist: a
//! missing file is the error "no catalog database at ABSOLUTE-PATH" unless
//! `--create-catalog` is given or `--catalog` has no value (the default
//! `./warehouse/catalog.db`, created when missing). An empty file is a new catalog. A
//! local warehouse directory must exist under the same rule. Every error names the
//! resolved absolute path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use icefloe::catalog::{Catalog, CatalogConfig};

use crate::CliError;

/// The catalog attached by a bare `--catalog`, and when it exists without one.
pub const DEFAULT_CATALOG: &str = "warehouse/catalog.db";

/// `path` made absolute against the working directory (not resolving links), for
/// messages.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A local directory named by a warehouse location, if it is one.
fn local_dir(location: &str) -> Option<PathBuf> {
    if let Some(rest) = location.strip_prefix("file://") {
        return Some(PathBuf::from(rest));
    }
    if let Some(rest) = location.strip_prefix("file:") {
        return Some(PathBuf::from(rest));
    }
    (!location.contains("://")).then(|| PathBuf::from(location))
}

/// Open the catalog `spec` names. `create`: create a missing SQLite database or
/// warehouse directory (`--create-catalog`, or the bare `--catalog`).
pub fn open(spec: &str, create: bool) -> Result<Arc<dyn Catalog>, CliError> {
    // what errors show of `spec`: no password or secret parameter (a REST URI refused
    // for holding a `credential`, a JDBC URL with `password=`)
    let shown = CatalogConfig::redacted_spec(spec);
    let fail = |e: icefloe::Error, place: Option<&Path>| {
        let place = place.map_or(String::new(), |p| format!(" ({})", absolute(p).display()));
        CliError::from(e).context(format!("cannot open catalog {shown}{place}"))
    };
    let config = CatalogConfig::from_spec(spec).map_err(|e| fail(e, None))?;
    let place: Option<PathBuf> = match config.catalog_type.to_ascii_lowercase().as_str() {
        "sql" | "jdbc" | "sqlite" => config.uri.as_deref().map(PathBuf::from),
        "hadoop" | "filesystem" | "fs" => config.warehouse.as_deref().and_then(local_dir),
        _ => None,
    };
    // what `create` makes of `place` and a failed open must not leave behind: the first
    // missing one of the path and its parents
    let made = place.as_deref().filter(|_| create).and_then(first_missing);
    if let Some(path) = &place {
        if !create && !path.exists() {
            let what = if config.catalog_type == "sql" {
                "no catalog database at"
            } else {
                "no warehouse directory at"
            };
            return Err(CliError::new(format!(
                "cannot open catalog {shown}: {what} {} (--create-catalog creates it)",
                absolute(path).display()
            )));
        }
        if create && config.catalog_type == "hadoop" {
            std::fs::create_dir_all(path).map_err(|e| {
                CliError::from(e).context(format!(
                    "cannot create warehouse directory {}",
                    absolute(path).display()
                ))
            })?;
        }
    }
    config.build().map_err(|e| {
        if let Some(made) = &made {
            remove_made(made);
        }
        fail(e, place.as_deref())
    })
}

/// The properties of the catalog config `spec` names other than the catalog's own
/// settings (object store and client keys: `s3.endpoint`, `credential`, …); none when it
/// does not parse (its open reports that).
pub fn storage_properties(spec: &str) -> BTreeMap<String, String> {
    CatalogConfig::from_spec(spec)
        .map(|config| config.properties)
        .unwrap_or_default()
}

/// The outermost of `path` and its parents that does not exist yet (`None`: `path`
/// exists).
fn first_missing(path: &Path) -> Option<PathBuf> {
    let path = absolute(path);
    let mut missing = None;
    for p in path.ancestors() {
        if p.as_os_str().is_empty() || p.exists() {
            break;
        }
        missing = Some(p.to_path_buf());
    }
    missing
}

/// Remove `path`, which a failed `--create-catalog` open made (a database file, or a
/// directory holding only what the open made). Best effort: the open's error is the one
/// reported.
fn remove_made(path: &Path) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    } else {
        let _ = std::fs::remove_file(path);
        // SQLite's rollback journal, should the failed open have left one
        let mut journal = path.as_os_str().to_owned();
        journal.push("-journal");
        let _ = std::fs::remove_file(journal);
    }
}
