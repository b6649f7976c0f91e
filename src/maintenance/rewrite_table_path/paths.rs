//! Moving a location from one prefix to another, as Java's `RewriteTablePathUtil`
//! (`newPath`, `relativize`, `stagingPath`): a prefix matches whole path segments only
//! (`/a/t` is a prefix of `/a/t/x` and of `/a/t`, not of `/a/tt`), and a trailing `/` on
//! a prefix or a path does not matter. Locations are compared as text, as Java does, but
//! for the forms of one local file: `file:/x`, `file:///x`, `file://localhost/x` and `/x`
//! match each other (Spark's Hadoop tables store `file:/x` paths under a `file:///x`
//! location; Java's text match leaves one of the two forms unmoved or fails). The part
//! after the prefix is kept as written, and so is the form of a local path moved to a
//! local target: `file:/a/t/x` moved from `/a/t` to `file:///b/u` is `file:/b/u/x`, `/a/t/x`
//! is `/b/u/x`. Engines compare the paths a table names as text (a deletion vector's
//! `referenced_data_file` with its data file's `file_path`), so the moved paths must be
//! equal where the source paths are, whichever forms the prefixes of this and of earlier
//! (incremental) runs were given in.

use crate::error::{Error, Result};

/// The `/` every location of a path rewrite is cut at (POSIX, as object stores use).
const SEPARATOR: char = '/';

/// A source prefix and the target prefix that replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixRewrite {
    source: String,
    target: String,
}

fn with_separator(path: &str) -> String {
    if path.ends_with(SEPARATOR) {
        path.to_string()
    } else {
        format!("{path}{SEPARATOR}")
    }
}

/// The form of local location `location` (`file:`, `file://`, `file://localhost` or
/// `""`: what comes before its absolute path) and that path; `None` for other locations.
fn local_parts(location: &str) -> Option<(&str, &str)> {
    let path = local_path(location)?;
    Some((&location[..location.len() - path.len()], path))
}

/// The absolute path of a local location (`file:/x`, `file:///x`, `file://localhost/x`,
/// `/x`: RFC 8089); `None` for other locations.
fn local_path(location: &str) -> Option<&str> {
    let path = match location.strip_prefix("file://") {
        Some(rest) => rest.strip_prefix("localhost").unwrap_or(rest),
        None => location.strip_prefix("file:").unwrap_or(location),
    };
    path.starts_with(SEPARATOR).then_some(path)
}

impl PrefixRewrite {
    /// `source` replaced by `target`.
    ///
    /// Errors ([`crate::ErrorKind::InvalidArgument`]): an empty prefix, or equal ones
    /// (Java's `Source prefix cannot be the same as target prefix`).
    pub fn new(source: &str, target: &str) -> Result<Self> {
        if source.is_empty() {
            return Err(Error::invalid_argument("source_prefix cannot be empty"));
        }
        if target.is_empty() {
            return Err(Error::invalid_argument("target_prefix cannot be empty"));
        }
        let local = |p: &'_ str| with_separator(local_path(p).unwrap_or(p));
        if local(source) == local(target) {
            return Err(Error::invalid_argument(format!(
                "source_prefix cannot be the same as target_prefix ({source})"
            )));
        }
        Ok(Self {
            source: source.to_string(),
            target: target.to_string(),
        })
    }

    /// The source prefix, as given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether `path` is the source prefix or lies under it.
    pub fn covers(&self, path: &str) -> bool {
        self.relative(path).is_some()
    }

    /// Whether `location` is the source prefix itself (in any of its local forms, with or
    /// without a trailing `/`).
    pub fn is_source(&self, location: &str) -> bool {
        self.relative(location) == Some("")
    }

    /// `path` relative to the source prefix (`""` for the prefix itself); `None` when it
    /// is not under it.
    fn relative<'a>(&self, path: &'a str) -> Option<&'a str> {
        let (path, source) = match (local_path(path), local_path(&self.source)) {
            (Some(p), Some(s)) => (p, s),
            _ => (path, self.source.as_str()),
        };
        let prefix = with_separator(source);
        if with_separator(path) == prefix {
            return Some("");
        }
        path.strip_prefix(prefix.as_str())
    }

    /// `path` under `base` instead of the source prefix.
    fn rebase(&self, path: &str, base: &str, what: &str) -> Result<String> {
        let relative = self.relative_or_err(path, what)?;
        Ok(if relative.is_empty() {
            base.to_string()
        } else {
            format!("{}{relative}", with_separator(base))
        })
    }

    /// [`Self::relative`], or an error naming `what`, `path` and the source prefix.
    fn relative_or_err<'a>(&self, path: &'a str, what: &str) -> Result<&'a str> {
        self.relative(path).ok_or_else(|| {
            Error::invalid_argument(format!(
                "{what}: '{path}' is not under the source prefix '{}'",
                self.source
            ))
        })
    }

    /// `path` moved to the target prefix; `what` names the file or field it was read
    /// from in the error. A local `path` moved to a local target keeps its form
    /// (`file:/`, `file:///`, `file://localhost/` or `/`; see the module docs).
    ///
    /// Errors: `path` not under the source prefix
    /// ([`crate::ErrorKind::InvalidArgument`], naming `what`, the path and the prefix).
    pub fn new_path(&self, path: &str, what: &str) -> Result<String> {
        match (local_parts(path), local_path(&self.target)) {
            (Some((form, _)), Some(target)) => self.rebase(path, &format!("{form}{target}"), what),
            _ => self.rebase(path, &self.target, what),
        }
    }

    /// Where the rewritten copy of `path` is staged: its place relative to the source
    /// prefix, under `staging` (Java's `stagingPath`). Same errors as [`Self::new_path`].
    pub fn staging_path(&self, path: &str, staging: &str, what: &str) -> Result<String> {
        self.rebase(path, staging, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_whole_segments() {
        let p = PrefixRewrite::new("s3://a/wh/db/t", "file:///dr/db/t/").expect("prefixes");
        let w = "test";
        assert_eq!(
            p.new_path("s3://a/wh/db/t/data/x.parquet", w)
                .expect("moved"),
            "file:///dr/db/t/data/x.parquet"
        );
        assert_eq!(
            p.new_path("s3://a/wh/db/t", w).expect("moved"),
            "file:///dr/db/t/"
        );
        assert_eq!(
            p.new_path("s3://a/wh/db/t/", w).expect("moved"),
            "file:///dr/db/t/"
        );
        let e = p
            .new_path("s3://a/wh/db/tt/x", w)
            .expect_err("not a segment");
        assert!(e.to_string().contains("s3://a/wh/db/tt/x"), "{e}");
        assert_eq!(
            p.staging_path("s3://a/wh/db/t/metadata/v1.metadata.json", "/st/", w)
                .expect("staged"),
            "/st/metadata/v1.metadata.json"
        );
        assert!(PrefixRewrite::new("/a", "/a/").is_err());
        // the forms of one local path match each other; the rest is kept as written, and
        // so is the form of the path (not the target prefix's), whatever form the
        // prefixes are given in
        for (source, target) in [
            ("file:///wh/t", "/dr/t"),
            ("/wh/t/", "file:/dr/t"),
            ("file:/wh/t/", "file://localhost/dr/t"),
        ] {
            let p = PrefixRewrite::new(source, target).expect("prefixes");
            for (path, moved) in [
                ("file:/wh/t/data/x", "file:/dr/t/data/x"),
                ("file:///wh/t/data/x", "file:///dr/t/data/x"),
                (
                    "file://localhost/wh/t/data/x",
                    "file://localhost/dr/t/data/x",
                ),
                ("/wh/t/data/x", "/dr/t/data/x"),
                ("file:///wh/t", "file:///dr/t"),
            ] {
                assert_eq!(
                    p.new_path(path, w).expect("moved"),
                    moved,
                    "{path} from {source} to {target}"
                );
            }
        }
        // a local path moved to a non-local target takes the target's form
        let p = PrefixRewrite::new("file:///wh/t", "s3://b/t").expect("prefixes");
        assert_eq!(
            p.new_path("/wh/t/data/x", w).expect("moved"),
            "s3://b/t/data/x"
        );
        let p = PrefixRewrite::new("file:///wh/t", "/dr/t").expect("prefixes");
        assert!(!p.covers("s3://b/wh/t/x"));
        assert!(!p.covers("file:/wh/tt/x"));
        assert!(PrefixRewrite::new("", "/a").is_err());
        assert!(PrefixRewrite::new("/a", "").is_err());
    }
}
