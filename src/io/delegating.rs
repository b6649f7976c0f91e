//! `ObjectStore` wrappers that hand most requests to an inner store unchanged.
//!
//! icefloe's store wrappers ([`super::local::RegularFileStore`],
//! [`super::footer_checked_store::FooterCheckedStore`], [`super::retry::RetryingRequests`],
//! [`super::counting::CountingStore`]) each change a few of `ObjectStore`'s requests and
//! pass the rest through. [`delegating_object_store!`] writes the `ObjectStore` impl of such
//! a wrapper: the methods it changes, as written, plus a pass-through to `self.<field>` for
//! each method it names, so no wrapper repeats the pass-through signatures.
//!
//! ```ignore
//! delegating_object_store! {
//!     impl for MyStore, inner,
//!     delegate [put_opts, put_multipart_opts, delete_stream, list, list_with_offset,
//!               list_with_delimiter, copy_opts, rename_opts],
//!     {
//!         async fn get_opts(&self, location: &Path, options: GetOptions)
//!             -> object_store::Result<GetResult> { … }
//!         async fn get_ranges(…) -> … { … }
//!     }
//! }
//! ```
//!
//! The pass-throughs are expanded inside the macro (not by nested macro calls), so the
//! `#[async_trait]` attribute on the generated impl sees every `async fn`.

/// Writes `impl ObjectStore for $ty`: the methods in the last braces as written, and a
/// pass-through to `self.$inner` for each method named in `delegate [...]`
/// (`put_opts`, `put_multipart_opts`, `get_opts`, `get_ranges`, `delete_stream`, `list`,
/// `list_with_offset`, `list_with_delimiter`, `copy_opts`, `rename_opts`). The caller's
/// module imports the `object_store` types the signatures name (`Path`, `PutPayload`,
/// `PutOptions`, …), `BoxStream`, `Bytes`, `Range` and `async_trait`.
macro_rules! delegating_object_store {
    (impl for $ty:ty, $inner:ident, delegate [$($name:ident),* $(,)?], { $($own:tt)* }) => {
        delegating_object_store!(@acc [] $ty, $inner, [$($name),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [], { $($own:tt)* }) => {
        #[async_trait]
        impl ObjectStore for $ty {
            $($own)*
            $($acc)*
        }
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [put_opts $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            async fn put_opts(
                &self,
                location: &Path,
                payload: PutPayload,
                opts: PutOptions,
            ) -> object_store::Result<PutResult> {
                self.$inner.put_opts(location, payload, opts).await
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [put_multipart_opts $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            async fn put_multipart_opts(
                &self,
                location: &Path,
                opts: PutMultipartOptions,
            ) -> object_store::Result<Box<dyn MultipartUpload>> {
                self.$inner.put_multipart_opts(location, opts).await
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [get_opts $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            async fn get_opts(
                &self,
                location: &Path,
                options: GetOptions,
            ) -> object_store::Result<GetResult> {
                self.$inner.get_opts(location, options).await
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [get_ranges $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            async fn get_ranges(
                &self,
                location: &Path,
                ranges: &[Range<u64>],
            ) -> object_store::Result<Vec<Bytes>> {
                self.$inner.get_ranges(location, ranges).await
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [delete_stream $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            fn delete_stream(
                &self,
                locations: BoxStream<'static, object_store::Result<Path>>,
            ) -> BoxStream<'static, object_store::Result<Path>> {
                self.$inner.delete_stream(locations)
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [list $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            fn list(
                &self,
                prefix: Option<&Path>,
            ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
                self.$inner.list(prefix)
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [list_with_offset $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            fn list_with_offset(
                &self,
                prefix: Option<&Path>,
                offset: &Path,
            ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
                self.$inner.list_with_offset(prefix, offset)
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [list_with_delimiter $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            async fn list_with_delimiter(
                &self,
                prefix: Option<&Path>,
            ) -> object_store::Result<ListResult> {
                self.$inner.list_with_delimiter(prefix).await
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [copy_opts $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            async fn copy_opts(
                &self,
                from: &Path,
                to: &Path,
                options: CopyOptions,
            ) -> object_store::Result<()> {
                self.$inner.copy_opts(from, to, options).await
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
    (@acc [$($acc:tt)*] $ty:ty, $inner:ident, [rename_opts $(, $rest:ident)*], { $($own:tt)* }) => {
        delegating_object_store!(@acc [$($acc)*
            async fn rename_opts(
                &self,
                from: &Path,
                to: &Path,
                options: RenameOptions,
            ) -> object_store::Result<()> {
                self.$inner.rename_opts(from, to, options).await
            }
        ] $ty, $inner, [$($rest),*], { $($own)* });
    };
}

pub(super) use delegating_object_store;
