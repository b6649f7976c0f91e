//! The local file system store, reading regular files only.
//!
//! A FIFO, socket or device where a table file should be would block a read forever
//! (opening a FIFO waits for a writer) or never end (a character device). Before every
//! read the path's file type is checked (`stat`, following symlinks): anything but a
//! regular file or a directory is an error naming the path, before it is opened
//! (issue 16 item 10). Directories and missing files keep `LocalFileSystem`'s answers
//! (not found). Everything else is `LocalFileSystem`'s.

use std::fmt;
use std::ops::Range;

use super::delegating::delegating_object_store;
use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

/// [`LocalFileSystem`] that refuses to read anything but regular files.
#[derive(Debug, Default)]
pub(crate) struct RegularFileStore {
    inner: LocalFileSystem,
}

impl RegularFileStore {
    pub(crate) fn new() -> Self {
        Self {
            inner: LocalFileSystem::new(),
        }
    }

    /// An error when `location` exists and is neither a regular file nor a directory.
    fn check_readable(&self, location: &Path) -> object_store::Result<()> {
        let path = self.inner.path_to_filesystem(location)?;
        match std::fs::metadata(&path) {
            Ok(m) if !m.is_file() && !m.is_dir() => Err(object_store::Error::Generic {
                store: "LocalFileSystem",
                source: format!(
                    "'{}' is not a regular file ({}); refusing to read it",
                    path.display(),
                    file_type_name(&m.file_type())
                )
                .into(),
            }),
            _ => Ok(()),
        }
    }
}

/// What kind of non-regular file this is, for the error message.
fn file_type_name(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    let _ = t;
    "not a regular file"
}

impl fmt::Display for RegularFileStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RegularFiles({})", self.inner)
    }
}

delegating_object_store! {
    impl for RegularFileStore, inner,
    delegate [put_opts, put_multipart_opts, delete_stream, list, list_with_offset, list_with_delimiter, copy_opts, rename_opts],
    {
        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            self.check_readable(location)?;
            self.inner.get_opts(location, options).await
        }

        async fn get_ranges(
            &self,
            location: &Path,
            ranges: &[Range<u64>],
        ) -> object_store::Result<Vec<Bytes>> {
            self.check_readable(location)?;
            self.inner.get_ranges(location, ranges).await
        }
    }
}

/// Every regular file under `root` (recursively, symlinks not followed), as
/// `file:///…` locations; a missing `root` has none. A file or directory that goes
/// away while it is walked (a concurrent writer's temporary file renamed or removed, a
/// dropped table's directory) is left out, not an error: `remove_orphan_files` racing a
/// write failed with "cannot list" for a file it would never have listed.
pub(super) fn walk(root: &std::path::Path) -> std::io::Result<Vec<super::ListedFile>> {
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let mut out = vec![];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if gone(&e) => continue,
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) if gone(&e) => continue,
                Err(e) => return Err(e),
            };
            let meta = match entry.metadata() {
                Ok(meta) => meta,
                Err(e) if gone(&e) => continue,
                Err(e) => return Err(e),
            };
            let path = entry.path();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map(|d| d.as_millis() as i64)
                    .unwrap_or(0);
                out.push(super::ListedFile {
                    location: format!("file://{}", path.to_string_lossy()),
                    last_modified_ms: modified,
                    size: meta.len(),
                });
            }
        }
    }
    out.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// Files and directories created and removed while `walk` runs (a concurrent write's
    /// temporary files) never make it fail; files that stay are always listed.
    #[test]
    fn files_vanishing_during_a_walk_are_left_out() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().to_path_buf();
        std::fs::write(root.join("kept.parquet"), b"x").expect("kept");
        let stop = Arc::new(AtomicBool::new(false));
        let churn = {
            let (root, stop) = (root.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let sub = root.join(format!("d{}", i % 4));
                    let _ = std::fs::create_dir_all(&sub);
                    for j in 0..8 {
                        let _ = std::fs::write(sub.join(format!("f{j}.tmp")), b"t");
                    }
                    let _ = std::fs::remove_dir_all(&sub);
                    i += 1;
                }
            })
        };
        // walk for a while once the churn runs (about half a second)
        while !root.join("d0").exists() {
            std::thread::yield_now();
        }
        let until = std::time::Instant::now() + std::time::Duration::from_millis(500);
        while std::time::Instant::now() < until {
            let listed = super::walk(&root).expect("a walk racing removals succeeds");
            assert!(
                listed.iter().any(|f| f.location.ends_with("/kept.parquet")),
                "{listed:?}"
            );
        }
        stop.store(true, Ordering::Relaxed);
        churn.join().expect("churn");
    }
}
