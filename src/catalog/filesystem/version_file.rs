//! The filesystem catalog's atomic writes on local disk: a commit's version file,
//! created only if absent and only while its base is still the table's, and the removal
//! of the empty directories a failed write left.

use super::leftovers;

/// Create `<dir>/<name>` holding `bytes`, only when no file has that name, only in the
/// existing directory `dir`, and only while `base_held()` says the base version file is
/// still the one the commit read: the bytes go to a hidden staging file in `dir`, which
/// is then hard-linked to `name` (atomic, fails when `name` exists) and removed. Unlike
/// an object store `put`, no missing directory is created, so a commit racing a `DROP
/// TABLE` (which renames the table directory away) fails instead of making `metadata/`
/// anew with one metadata file whose manifests are gone. `base_held` is asked before and
/// after the link: a table dropped and created again under the name (a new `metadata/`)
/// fails the commit, and a file linked into the new table's directory is removed again.
///
/// Errors: `AlreadyExists` (another commit won), `NotFound` (`dir` is gone, or
/// `base_held` said no), other I/O errors.
pub(super) fn create_version_file(
    dir: &std::path::Path,
    name: &str,
    bytes: &[u8],
    base_held: impl Fn() -> bool,
) -> std::io::Result<()> {
    use std::io::Write;
    let replaced = || {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the base metadata file is gone or was replaced",
        )
    };
    let staging = dir.join(leftovers::commit_staging_name(name));
    let target = dir.join(name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&staging)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| {
            // a version past the base is another commit's (a lost race, retried), even
            // when that commit removed the base file (`write.metadata.delete-after-commit`)
            if target.exists() {
                return Err(std::io::ErrorKind::AlreadyExists.into());
            }
            match base_held() {
                true => std::fs::hard_link(&staging, &target),
                false => Err(replaced()),
            }
        })
        .and_then(|()| match base_held() {
            true => Ok(()),
            false => {
                let _ = std::fs::remove_file(&target);
                Err(replaced())
            }
        });
    let _ = std::fs::remove_file(&staging);
    written
}

/// What tells a file from another that took its path: device and inode (Unix), size
/// and modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileIdentity {
    #[cfg(unix)]
    device_inode: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileIdentity {
    /// The identity of the file at `path`; `None` when it cannot be read.
    pub(super) fn of(path: &std::path::Path) -> Option<Self> {
        let m = std::fs::metadata(path).ok()?;
        Some(Self {
            #[cfg(unix)]
            device_inode: {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            },
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

/// Remove `dir` and the directories under it when they hold no file (bottom-up; a
/// directory that is not empty, or cannot be read, stays).
pub(super) fn remove_empty_dirs(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&e.path());
            }
        }
    }
    // fails, as it should, on a directory that is not empty
    let _ = std::fs::remove_dir(dir);
}
