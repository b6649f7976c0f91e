//! One object store URL (`s3://bucket`) served by several stores, chosen by path prefix.
//!
//! A REST catalog may vend different credentials for different location prefixes of one
//! bucket (REST spec `storage-credentials`: a client uses the credential with the
//! longest prefix matching the file's location). [`PrefixRoutedStore`] holds one store per
//! prefix, longest first, and a store for every other path; each request goes to the
//! store of the longest prefix covering its path (whole path segments). A copy or rename
//! between paths of different stores is refused (`NotSupported`).

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};

/// Stores by path prefix (see the module docs).
#[derive(Debug, Clone)]
pub struct PrefixRoutedStore {
    /// (object path prefix without slashes at the ends, store), longest prefix first.
    routes: Arc<Vec<(String, Arc<dyn ObjectStore>)>>,
    /// The store for paths under no prefix.
    fallback: Arc<dyn ObjectStore>,
}

impl PrefixRoutedStore {
    /// `routes` as (object path prefix, store) and the `fallback` store.
    pub fn new(
        mut routes: Vec<(String, Arc<dyn ObjectStore>)>,
        fallback: Arc<dyn ObjectStore>,
    ) -> Self {
        for (prefix, _) in routes.iter_mut() {
            *prefix = prefix.trim_matches('/').to_string();
        }
        routes.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        Self {
            routes: Arc::new(routes),
            fallback,
        }
    }

    /// The store serving `path`.
    fn store_for(&self, path: &str) -> &Arc<dyn ObjectStore> {
        self.routes
            .iter()
            .find(|(prefix, _)| {
                prefix.is_empty()
                    || path
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
            .map(|(_, store)| store)
            .unwrap_or(&self.fallback)
    }

    fn store_of(&self, path: Option<&Path>) -> &Arc<dyn ObjectStore> {
        self.store_for(path.map(|p| p.as_ref()).unwrap_or(""))
    }

    fn same_store(&self, from: &Path, to: &Path) -> object_store::Result<&Arc<dyn ObjectStore>> {
        let a = self.store_for(from.as_ref());
        if Arc::ptr_eq(a, self.store_for(to.as_ref())) {
            Ok(a)
        } else {
            Err(object_store::Error::NotSupported {
                source: format!(
                    "'{from}' and '{to}' are served with different credentials; \
                     copying between them is not supported"
                )
                .into(),
            })
        }
    }
}

impl fmt::Display for PrefixRoutedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PrefixRouted({} prefixes, {})",
            self.routes.len(),
            self.fallback
        )
    }
}

#[async_trait]
impl ObjectStore for PrefixRoutedStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.store_of(Some(location))
            .put_opts(location, payload, opts)
            .await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.store_of(Some(location))
            .put_multipart_opts(location, opts)
            .await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.store_of(Some(location))
            .get_opts(location, options)
            .await
    }

    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.store_of(Some(location))
            .get_ranges(location, ranges)
            .await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let this = self.clone();
        locations
            .then(move |location| {
                let this = this.clone();
                async move {
                    let location = location?;
                    this.store_of(Some(&location)).delete(&location).await?;
                    Ok(location)
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.store_of(prefix).list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.store_of(prefix).list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.store_of(prefix).list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.same_store(from, to)?
            .copy_opts(from, to, options)
            .await
    }

    async fn rename_opts(
        &self,
        from: &Path,
        to: &Path,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        self.same_store(from, to)?
            .rename_opts(from, to, options)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    #[tokio::test]
    async fn each_path_goes_to_its_longest_prefix() {
        let wide: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let narrow: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let other: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let routed = PrefixRoutedStore::new(
            vec![
                ("wh/".to_string(), Arc::clone(&wide)),
                ("wh/ns/t".to_string(), Arc::clone(&narrow)),
            ],
            Arc::clone(&other),
        );
        for (path, body) in [
            ("wh/ns/t/data/a", "narrow"),
            ("wh/ns/t2/data/a", "wide"),
            ("elsewhere/a", "other"),
        ] {
            routed
                .put(&Path::parse(path).unwrap(), Bytes::from(body).into())
                .await
                .unwrap();
        }
        let read = |s: Arc<dyn ObjectStore>, p: &'static str| async move {
            s.get(&Path::parse(p).unwrap())
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
        };
        assert_eq!(read(Arc::clone(&narrow), "wh/ns/t/data/a").await, "narrow");
        // `wh/ns/t2` shares the text of `wh/ns/t` but not its segment
        assert_eq!(read(Arc::clone(&wide), "wh/ns/t2/data/a").await, "wide");
        assert_eq!(read(Arc::clone(&other), "elsewhere/a").await, "other");
        let listed: Vec<_> = routed
            .list(Some(&Path::parse("wh/ns/t").unwrap()))
            .collect()
            .await;
        assert_eq!(listed.len(), 1);
        let err = routed
            .copy(
                &Path::parse("wh/ns/t/data/a").unwrap(),
                &Path::parse("elsewhere/b").unwrap(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, object_store::Error::NotSupported { .. }),
            "{err}"
        );
        routed
            .delete(&Path::parse("wh/ns/t/data/a").unwrap())
            .await
            .unwrap();
        assert!(narrow
            .head(&Path::parse("wh/ns/t/data/a").unwrap())
            .await
            .is_err());
    }
}
