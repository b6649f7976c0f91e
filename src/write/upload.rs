//! [`Upload`]: the object a data file is written to, as object_store's `BufWriter`,
//! remembering whether its completion was attempted, so that a failed write is cleaned up
//! the one way that fits.
//!
//! A `BufWriter` that has not been shut down may hold an open multipart upload, which
//! `abort` cancels. Once its shutdown began (the single `PUT` of a small file, or the
//! completion of a multipart upload) there is nothing left to abort — object_store's
//! `abort` then panics ("Already shut down") — and the object may or may not exist, so it
//! is deleted instead (best effort: nothing references it).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use object_store::buffered::BufWriter;
use tokio::io::AsyncWrite;

use crate::io::FileIO;

/// A `BufWriter` that remembers whether `poll_shutdown` was called (see the module docs).
pub(crate) struct Upload {
    inner: BufWriter,
    shut_down: bool,
}

impl Upload {
    /// An upload through `inner`.
    pub fn new(inner: BufWriter) -> Self {
        Self {
            inner,
            shut_down: false,
        }
    }

    /// Clean up after writing the file at `location` failed: abort the open upload, or,
    /// once completing it was attempted, delete whatever object may exist. Best effort:
    /// errors are dropped (the write's own error is the one to report).
    pub async fn abandon(mut self, file_io: &FileIO, location: &str) {
        if self.shut_down {
            let _ = file_io.delete(location).await;
        } else {
            let _ = self.inner.abort().await;
        }
    }
}

impl AsyncWrite for Upload {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shut_down = true;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
