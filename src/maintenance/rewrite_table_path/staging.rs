//! Where `rewrite_table_path` stages its files, and how it writes them there.
//!
//! A staged file keeps its place relative to the source prefix, under the staging
//! location (Java's `RewriteTablePathUtil.stagingPath`). So a staging location equal to
//! the source prefix stages every rewritten file over the live file it was made from: the
//! table's own metadata JSON, manifest lists and manifests would then name the target
//! prefix, and other engines (which do not remap locations) could no longer read it. Java's
//! `RewriteTablePathSparkAction` has no such check (it overwrites staged files); icefloe
//! refuses that location, and writes staged files create-if-absent wherever the staging
//! location lies at or under the source prefix (as the default one,
//! `copy-table-staging-<uuid>/` beside the current metadata file, does), so that no live
//! file of the table is ever replaced. A staging location elsewhere is written over as in
//! Java, so that a run may be repeated into the same location.

use bytes::Bytes;

use super::PrefixRewrite;
use crate::error::{Error, ErrorKind, Result};
use crate::io::FileIO;

/// The staging location of one run.
#[derive(Debug, Clone)]
pub(super) struct Staging {
    /// The location, ending in `/`.
    pub(super) dir: String,
    /// Whether it lies at or under the source prefix, among the table's files: files are
    /// then written create-if-absent.
    among_source: bool,
}

impl Staging {
    /// The staging location `given` (else `copy-table-staging-<uuid>/` beside the
    /// metadata file `current`) for moving `paths`.
    ///
    /// Errors ([`ErrorKind::InvalidArgument`]): an empty location; one equal to the source
    /// prefix (in any local form), which would stage every file over its source.
    pub(super) fn new(given: Option<&str>, current: &str, paths: &PrefixRewrite) -> Result<Self> {
        let dir = match given {
            Some("") => return Err(Error::invalid_argument("staging_location cannot be empty")),
            Some(s) => format!("{}/", s.trim_end_matches('/')),
            None => {
                let dir = current.rsplit_once('/').map(|(d, _)| d).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "cannot find the metadata directory of '{current}'"
                    ))
                })?;
                format!("{dir}/copy-table-staging-{}/", uuid::Uuid::new_v4())
            }
        };
        if paths.is_source(&dir) {
            return Err(Error::invalid_argument(format!(
                "staging_location '{dir}' is the source prefix '{}': each rewritten file \
                 would be staged over the live file it is made from (the table's own \
                 metadata), as its place relative to the source prefix; give a staging \
                 location outside the table, or none (a new directory beside the metadata)",
                paths.source()
            )));
        }
        Ok(Self {
            among_source: paths.covers(&dir),
            dir,
        })
    }

    /// Write the staged file `location` (under [`Self::dir`]): create-if-absent when the
    /// staging location lies among the table's files (where the store cannot create
    /// atomically, only when nothing is found there), else replacing any file there.
    ///
    /// Errors: [`ErrorKind::AlreadyExists`] naming the location when a file is there
    /// already among the table's files; the store's errors, naming the location.
    pub(super) async fn write(&self, io: &FileIO, location: &str, bytes: Bytes) -> Result<()> {
        if !self.among_source {
            return io.write(location, bytes).await;
        }
        let exists = || {
            Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "staged file '{location}' exists already: the staging location '{}' lies \
                     among the table's files, where no file is replaced",
                    self.dir
                ),
            )
        };
        match io.write_new(location, bytes.clone()).await {
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(exists().with_source(e)),
            Err(e) if e.kind() == ErrorKind::Unsupported => match io.exists(location).await? {
                true => Err(exists()),
                false => io.write(location, bytes).await,
            },
            other => other,
        }
    }
}
