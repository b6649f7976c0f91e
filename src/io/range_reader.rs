//! [`ObjectRangeReader`]: ranged reads of one object in an `object_store`, for the
//! `parquet` crate's footer reader (`MetadataFetch`) and its async record-batch reader
//! (`AsyncFileReader`) given a footer already decoded.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::{AsyncFileReader, MetadataFetch};
use datafusion::parquet::errors::{ParquetError, Result as ParquetResult};
use datafusion::parquet::file::metadata::ParquetMetaData;
use futures::future::BoxFuture;
use futures::FutureExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

/// Reads byte ranges (offsets in bytes from the object's start) of the object at `path`
/// in `store`. As an `AsyncFileReader` it does not read the footer: build the reader
/// with the decoded footer (`ParquetRecordBatchStreamBuilder::new_with_metadata`);
/// `get_metadata` fails with [`ParquetError::General`].
#[derive(Clone)]
pub(crate) struct ObjectRangeReader {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
}

impl ObjectRangeReader {
    /// A reader of the object at `path` in `store`.
    pub(crate) fn new(store: Arc<dyn ObjectStore>, path: ObjectPath) -> Self {
        Self { store, path }
    }
}

impl MetadataFetch for ObjectRangeReader {
    fn fetch(&mut self, range: Range<u64>) -> BoxFuture<'_, ParquetResult<Bytes>> {
        async move {
            self.store
                .get_range(&self.path, range)
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }
}

impl AsyncFileReader for ObjectRangeReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, ParquetResult<Bytes>> {
        self.fetch(range)
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, ParquetResult<Arc<ParquetMetaData>>> {
        async {
            Err(ParquetError::General(
                "the footer is given decoded, not read again".to_string(),
            ))
        }
        .boxed()
    }
}
