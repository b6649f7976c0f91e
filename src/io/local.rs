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

#[async_trait]
impl ObjectStore for RegularFileStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

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

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

/// Every regular file under `root` (recursively, symlinks not followed), as
/// `file:///…` locations; a missing `root` has none.
pub(super) fn walk(root: &std::path::Path) -> std::io::Result<Vec<super::ListedFile>> {
    let mut out = vec![];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir == root => return Ok(out),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let meta = entry.metadata()?;
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
