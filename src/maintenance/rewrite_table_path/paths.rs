//! Moving a location from one prefix to another, as Java's `RewriteTablePathUtil`
//! (`newPath`, `relativize`, `stagingPath`): a prefix matches whole path segments only
//! (`/a/t` is a prefix of `/a/t/x` and of `/a/t`, not of `/a/tt`), and a trailing `/` on
//! a prefix or a path does not matter. Locations are compared as text, as Java does: the
//! source prefix must be written as the table's metadata writes its locations (`file:/x`,
//! `file:///x` and `/x` are different prefixes).

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
        if with_separator(source) == with_separator(target) {
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

    /// `path` relative to the source prefix (`""` for the prefix itself); `None` when it
    /// is not under it.
    fn relative<'a>(&self, path: &'a str) -> Option<&'a str> {
        let prefix = with_separator(&self.source);
        if with_separator(path) == prefix {
            return Some("");
        }
        path.strip_prefix(prefix.as_str())
    }

    /// `path` under `base` instead of the source prefix.
    fn rebase(&self, path: &str, base: &str, what: &str) -> Result<String> {
        let relative = self.relative(path).ok_or_else(|| {
            Error::invalid_argument(format!(
                "{what}: '{path}' is not under the source prefix '{}'",
                self.source
            ))
        })?;
        Ok(if relative.is_empty() {
            base.to_string()
        } else {
            format!("{}{relative}", with_separator(base))
        })
    }

    /// `path` moved to the target prefix; `what` names the file or field it was read
    /// from in the error.
    ///
    /// Errors: `path` not under the source prefix
    /// ([`crate::ErrorKind::InvalidArgument`], naming `what`, the path and the prefix).
    pub fn new_path(&self, path: &str, what: &str) -> Result<String> {
        self.rebase(path, &self.target, what)
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
        assert!(PrefixRewrite::new("", "/a").is_err());
        assert!(PrefixRewrite::new("/a", "").is_err());
    }
}
