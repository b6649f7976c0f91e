//! Writing and deleting whole files through the object stores.
//!
//! object_store never retries a create-if-absent, and retries other requests only after
//! some transport failures; a commit cannot tell a lost answer from a failed write, so
//! these writes add their own retries ([`super::retry`]):
//!
//! * [`FileIO::write`] (replace) is idempotent: it is tried again after a transport
//!   failure, by the cloud store itself (`RetryingRequests` retries every overwrite
//!   `PUT`, the data files DataFusion's writers upload included);
//! * [`FileIO::write_new`] (create-if-absent) is tried again too, and an object that
//!   already holds exactly the bytes being written counts as written: an earlier attempt
//!   of the same call landed (ours or object_store's own retry) and its answer was lost.
//!   Identical bytes leave the same state whoever wrote them; different bytes are
//!   another writer's, and the create fails as before.

use bytes::Bytes;
use object_store::{ObjectStore, ObjectStoreExt};

use super::retry::retrying;
use super::FileIO;
use crate::error::{Error, ErrorKind, Result};

impl FileIO {
    /// Write a whole file, replacing any file at `location`.
    ///
    /// A request that fails in transport (no HTTP answer) is tried again, up to 3
    /// attempts with 50 ms, then 100 ms between them: a cloud store's overwrite `PUT`s
    /// retry themselves (`retry::RetryingRequests`), so the retries do not nest.
    ///
    /// Errors: [`ErrorKind::PermissionDenied`] when the store refuses the credentials,
    /// [`ErrorKind::Io`] naming the location otherwise.
    pub async fn write(&self, location: &str, bytes: Bytes) -> Result<()> {
        let resolved = self.resolve(location)?;
        let store = self.store(&resolved.store_url)?;
        store
            .put(&resolved.path, bytes.into())
            .await
            .map(|_| ())
            .map_err(|e| write_error(e, location))
    }

    /// Write a whole file only if nothing exists at `location` (an atomic
    /// create-if-absent where the store has one: local disk, S3 conditional puts).
    ///
    /// A request that fails in transport is tried again (as [`Self::write`]); an
    /// existing object whose bytes equal `bytes` counts as this write (module docs).
    ///
    /// Errors: [`ErrorKind::AlreadyExists`] naming the location when another file is
    /// there (another writer won), [`ErrorKind::Unsupported`] when the store cannot
    /// create atomically, [`ErrorKind::PermissionDenied`] when it refuses the
    /// credentials, [`ErrorKind::Io`] otherwise.
    pub async fn write_new(&self, location: &str, bytes: Bytes) -> Result<()> {
        let resolved = self.resolve(location)?;
        let store = self.store(&resolved.store_url)?;
        let create = || {
            let opts = object_store::PutOptions {
                mode: object_store::PutMode::Create,
                ..Default::default()
            };
            store.put_opts(&resolved.path, bytes.clone().into(), opts)
        };
        match retrying(create).await {
            Ok(_) => Ok(()),
            Err(e @ object_store::Error::AlreadyExists { .. }) => {
                match holds(store.as_ref(), &resolved.path, &bytes).await {
                    true => Ok(()),
                    false => Err(write_error(e, location)),
                }
            }
            Err(e) => Err(write_error(e, location)),
        }
    }

    /// Delete a file; a missing file is not an error.
    ///
    /// Errors: [`ErrorKind::Io`] naming the location.
    ///
    /// A local file named like object_store's staging files (`name#<digits>`: what a
    /// writer killed between writing and renaming leaves) is deleted too, though
    /// object_store's `LocalFileSystem` refuses such names, so `remove_orphan_files` can
    /// clean them up.
    pub async fn delete(&self, location: &str) -> Result<()> {
        let resolved = self.resolve(location)?;
        if resolved.store_url.starts_with("file:") && is_staging_name(&resolved.path) {
            return delete_local_staging_file(&resolved.path, location);
        }
        let store = self.store(&resolved.store_url)?;
        match store.delete(&resolved.path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(write_error(e, location)),
        }
    }
}

/// Whether `path`'s file name is `…#<digits>`, which object_store's `LocalFileSystem`
/// keeps for its own staging files and refuses to touch.
fn is_staging_name(path: &object_store::path::Path) -> bool {
    path.filename()
        .and_then(|name| name.rsplit_once('#'))
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Delete the local file at `path` (a path of the `file://` store, decoded the way
/// `LocalFileSystem` decodes it); a missing file is not an error.
fn delete_local_staging_file(path: &object_store::path::Path, location: &str) -> Result<()> {
    let invalid = || Error::invalid_argument(format!("'{location}' is not a local file path"));
    let mut url = url::Url::parse("file:///").map_err(|_| invalid())?;
    url.path_segments_mut()
        .map_err(|_| invalid())?
        .pop_if_empty()
        .extend(path.parts());
    let file = url.to_file_path().map_err(|_| invalid())?;
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => {
            Err(Error::new(ErrorKind::Io, format!("cannot delete '{location}'")).with_source(e))
        }
    }
}

/// Whether the object at `path` holds exactly `bytes` (false when it cannot be read).
async fn holds(store: &dyn ObjectStore, path: &object_store::path::Path, bytes: &Bytes) -> bool {
    let Ok(found) = store.get(path).await else {
        return false;
    };
    if found.meta.size != bytes.len() as u64 {
        return false;
    }
    matches!(found.bytes().await, Ok(b) if b == *bytes)
}

/// Whether an object store refused a request for its credentials
/// (`object_store::Error::PermissionDenied` or `Unauthenticated`: S3's 403
/// `AccessDenied`/`SignatureDoesNotMatch`, a 401) anywhere in `e`'s chain of causes,
/// `std::io::Error`s included: object_store's `BufWriter` hands its errors to the Parquet
/// writer as `io::Error`s, whose `source()` skips the error they wrap.
pub(crate) fn refused_by_store(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(store) = e.downcast_ref::<object_store::Error>() {
            return matches!(
                store,
                object_store::Error::PermissionDenied { .. }
                    | object_store::Error::Unauthenticated { .. }
            );
        }
        next = match e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner),
            None => e.source(),
        };
    }
    false
}

fn write_error(e: object_store::Error, location: &str) -> Error {
    if super::no_credentials_configured(&e) {
        return super::missing_credentials(location, e);
    }
    match e {
        object_store::Error::AlreadyExists { .. } => Error::new(
            ErrorKind::AlreadyExists,
            format!("file '{location}' already exists"),
        )
        .with_source(e),
        object_store::Error::NotImplemented { .. } => Error::unsupported(format!(
            "atomic create-if-absent of '{location}' on this object store"
        ))
        .with_source(e),
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => Error::new(
            ErrorKind::PermissionDenied,
            format!("writing '{location}' refused"),
        )
        .with_source(e),
        other => Error::new(ErrorKind::Io, format!("cannot write '{location}'"))
            .with_source(super::StoreCauses(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_create_over_the_same_bytes_counts_as_written_and_over_others_fails() {
        let dir = tempfile::tempdir().unwrap();
        let io = FileIO::new(Default::default());
        let loc = format!("file://{}/m.json", dir.path().display());
        io.write_new(&loc, Bytes::from_static(b"{\"v\":1}"))
            .await
            .unwrap();
        // the same bytes again: what a retried create whose answer was lost finds
        io.write_new(&loc, Bytes::from_static(b"{\"v\":1}"))
            .await
            .unwrap();
        for other in [&b"{\"v\":2}"[..], &b"{\"v\":1} "[..], &b"{"[..]] {
            let err = io
                .write_new(&loc, Bytes::copy_from_slice(other))
                .await
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::AlreadyExists, "{err}");
        }
        assert_eq!(io.read(&loc).await.unwrap().as_ref(), b"{\"v\":1}");
    }

    /// What a killed writer leaves (`…#1`, object_store's staging names) is deleted, in a
    /// directory whose name needs percent-encoding too; a name with `#` and more than
    /// digits goes through object_store as before.
    #[tokio::test]
    async fn staging_files_of_killed_writers_are_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("p=100% x");
        std::fs::create_dir(&sub).unwrap();
        let io = FileIO::new(Default::default());
        for name in ["00000-1.parquet#1", "v3.metadata.json#17", "a#b1"] {
            let file = sub.join(name);
            std::fs::write(&file, b"x").unwrap();
            io.delete(&format!("file://{}", file.display()))
                .await
                .unwrap();
            assert!(!file.exists(), "{name}");
            // gone already: not an error
            io.delete(&format!("file://{}", file.display()))
                .await
                .unwrap();
        }
    }
}
