//! CPU-bound work (decoding manifests, delete files) run off the async threads.

/// Run CPU-bound decoding off the async threads when inside a tokio runtime (inline
/// otherwise, so the loaders also work under other executors). `what` names the file.
pub(crate) async fn run_blocking<T: Send + 'static>(
    what: String,
    f: impl FnOnce() -> crate::Result<T> + Send + 'static,
) -> crate::Result<T> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle.spawn_blocking(f).await.map_err(|e| {
            crate::Error::new(crate::ErrorKind::Io, format!("reading {what} failed")).with_source(e)
        })?,
        Err(_) => f(),
    }
}
