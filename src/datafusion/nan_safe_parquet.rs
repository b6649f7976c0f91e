//! Parquet files read by path (`SELECT … FROM 'f.parquet'`, `CREATE EXTERNAL TABLE …
//! STORED AS PARQUET`) without the NaN rows DataFusion's statistics would drop.
//!
//! Parquet writers leave NaN out of a float column's min/max (parquet-format
//! `parquet.thrift`: "NaNs should not be written to min or max statistics fields"), so a
//! chunk holding `1.5` and `NaN` says `min = max = 1.5`. DataFusion 55 trusts those
//! bounds for the `ListingTable` of a Parquet file:
//!
//! - the file's statistics (`ParquetFormat::infer_stats`) say min/max *exactly*, and the
//!   Parquet opener replaces a column whose exact min equals its max, with no nulls, by
//!   that literal (`constant_columns_from_stats`): the NaN row read as `1.5`;
//!   `max(f)` is answered from them (`1.5`, where NaN is the greatest value), and the
//!   file is pruned by them;
//! - row-group and page pruning drop the row groups and pages whose max is `1.5` for
//!   `f > 1.5`, though `NaN > 1.5` is true in DataFusion (and Spark).
//!
//! [`NanSafeParquetFormatFactory`] wraps DataFusion's `ParquetFormatFactory` (registered
//! for `parquet` by [`install_nan_safe_parquet`]): its format's statistics have no
//! min/max/sum for a column holding floats (`float`, `double`, `halffloat`, at any depth),
//! and a scan of a file schema holding floats has row-group and page pruning off (the
//! filters still run on every row). icefloe's Iceberg scans do the same from the files'
//! `nan_value_counts` (`table_provider/scan.rs`) and are not affected by this format.
//!
//! The format also reads the files' footers (schema, statistics and ordering inference)
//! through a [`FooterCheckedStore`]: a footer length field beyond its file, on which the
//! `parquet` crate's footer decoder would panic, is an error naming the file.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::stats::Precision;
use datafusion::common::{GetExt, Result as DFResult, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::parquet::{ParquetFormat, ParquetFormatFactory};
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory, FileMeta};
use datafusion::datasource::physical_plan::{FileScanConfig, FileSinkConfig, FileSource};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::context::SessionContext;
use datafusion::physical_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use object_store::{ObjectMeta, ObjectStore};

use crate::io::FooterCheckedStore;

/// DataFusion's `ParquetFormatFactory`, making [`NanSafeParquetFormat`]s (see the module
/// docs).
#[derive(Debug, Default)]
pub struct NanSafeParquetFormatFactory {
    inner: ParquetFormatFactory,
}

impl NanSafeParquetFormatFactory {
    /// The factory around `inner` (its session and statement options kept).
    pub fn new(inner: ParquetFormatFactory) -> Self {
        Self { inner }
    }

    /// DataFusion's factory inside (what a plan codec encodes).
    pub fn inner(&self) -> &ParquetFormatFactory {
        &self.inner
    }
}

impl GetExt for NanSafeParquetFormatFactory {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }
}

impl FileFormatFactory for NanSafeParquetFormatFactory {
    fn create(
        &self,
        state: &dyn Session,
        format_options: &HashMap<String, String>,
    ) -> DFResult<Arc<dyn FileFormat>> {
        let format = self.inner.create(state, format_options)?;
        Ok(wrap(format))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        wrap(self.inner.default())
    }
}

/// `format` wrapped when it is DataFusion's Parquet format; any other as it is.
fn wrap(format: Arc<dyn FileFormat>) -> Arc<dyn FileFormat> {
    match format.as_ref().downcast_ref::<ParquetFormat>() {
        Some(parquet) => Arc::new(NanSafeParquetFormat {
            inner: ParquetFormat::default().with_options(parquet.options().clone()),
        }),
        None => format,
    }
}

/// DataFusion's `ParquetFormat` with no min/max/sum statistics for columns holding
/// floats, and no row-group or page pruning of files holding floats (module docs).
#[derive(Debug)]
pub struct NanSafeParquetFormat {
    inner: ParquetFormat,
}

impl NanSafeParquetFormat {
    /// DataFusion's format inside (its options: `force_view_types`, …).
    pub fn inner(&self) -> &ParquetFormat {
        &self.inner
    }

    /// The format reading files of `schema`: pruning by row-group and page min/max off
    /// when it holds floats.
    fn for_schema(&self, schema: &SchemaRef) -> ParquetFormat {
        let mut options = self.inner.options().clone();
        if schema.fields().iter().any(|f| holds_floats(f.data_type())) {
            options.global.pruning = false;
            options.global.enable_page_index = false;
        }
        ParquetFormat::default().with_options(options)
    }
}

/// The Parquet format inside `format`: DataFusion's own, or the one a
/// [`NanSafeParquetFormat`] wraps; `None` for another format.
pub fn parquet_format(format: &dyn FileFormat) -> Option<&ParquetFormat> {
    let any: &dyn Any = format;
    any.downcast_ref::<ParquetFormat>().or_else(|| {
        any.downcast_ref::<NanSafeParquetFormat>()
            .map(NanSafeParquetFormat::inner)
    })
}

/// Whether `t` is or holds (in a struct, list or map) a floating-point type.
fn holds_floats(t: &DataType) -> bool {
    match t {
        DataType::Float16 | DataType::Float32 | DataType::Float64 => true,
        DataType::Struct(fields) => fields.iter().any(|f| holds_floats(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => holds_floats(f.data_type()),
        DataType::Dictionary(_, v) => holds_floats(v),
        DataType::RunEndEncoded(_, v) => holds_floats(v.data_type()),
        _ => false,
    }
}

/// `statistics` of a file of `schema` without min/max/sum for its columns holding floats:
/// Parquet's min/max leave NaN out.
fn without_float_bounds(mut statistics: Statistics, schema: &SchemaRef) -> Statistics {
    for (column, field) in statistics.column_statistics.iter_mut().zip(schema.fields()) {
        if holds_floats(field.data_type()) {
            column.min_value = Precision::Absent;
            column.max_value = Precision::Absent;
            column.sum_value = Precision::Absent;
        }
    }
    statistics
}

#[async_trait]
impl FileFormat for NanSafeParquetFormat {
    fn get_ext(&self) -> String {
        self.inner.get_ext()
    }

    fn get_ext_with_compression(
        &self,
        file_compression_type: &FileCompressionType,
    ) -> DFResult<String> {
        self.inner.get_ext_with_compression(file_compression_type)
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        self.inner.compression_type()
    }

    async fn infer_schema(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> DFResult<SchemaRef> {
        let (checked, store) = FooterCheckedStore::for_objects(store, objects);
        let schema = self.inner.infer_schema(state, &store, objects).await;
        schema.map_err(|e| checked.naming_corrupt_footer(e))
    }

    async fn infer_stats(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> DFResult<Statistics> {
        let (checked, store) = FooterCheckedStore::for_objects(store, std::slice::from_ref(object));
        let statistics = self
            .inner
            .infer_stats(state, &store, Arc::clone(&table_schema), object)
            .await
            .map_err(|e| checked.naming_corrupt_footer(e))?;
        Ok(without_float_bounds(statistics, &table_schema))
    }

    async fn infer_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> DFResult<Option<datafusion::physical_expr::LexOrdering>> {
        let (checked, store) = FooterCheckedStore::for_objects(store, std::slice::from_ref(object));
        self.inner
            .infer_ordering(state, &store, table_schema, object)
            .await
            .map_err(|e| checked.naming_corrupt_footer(e))
    }

    async fn infer_stats_and_ordering(
        &self,
        state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> DFResult<FileMeta> {
        let (checked, store) = FooterCheckedStore::for_objects(store, std::slice::from_ref(object));
        let meta = self
            .inner
            .infer_stats_and_ordering(state, &store, Arc::clone(&table_schema), object)
            .await
            .map_err(|e| checked.naming_corrupt_footer(e))?;
        Ok(
            FileMeta::new(without_float_bounds(meta.statistics, &table_schema))
                .with_ordering(meta.ordering),
        )
    }

    async fn create_physical_plan(
        &self,
        state: &dyn Session,
        conf: FileScanConfig,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let schema = Arc::clone(conf.file_schema());
        self.for_schema(&schema)
            .create_physical_plan(state, conf)
            .await
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.inner
            .create_writer_physical_plan(input, state, conf, order_requirements)
            .await
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        let schema = Arc::clone(table_schema.file_schema());
        self.for_schema(&schema).file_source(table_schema)
    }
}

/// Register [`NanSafeParquetFormatFactory`] as `ctx`'s `parquet` format, around the
/// session's DataFusion factory (a second call does nothing).
pub fn install_nan_safe_parquet(ctx: &SessionContext) {
    let state = ctx.state_ref();
    let mut state = state.write();
    let inner = match state.get_file_format_factory("parquet") {
        Some(f) => match f.as_ref().downcast_ref::<ParquetFormatFactory>() {
            Some(p) => match &p.options {
                Some(options) => ParquetFormatFactory::new_with_options(options.clone()),
                None => ParquetFormatFactory::new(),
            },
            None => return,
        },
        None => ParquetFormatFactory::new(),
    };
    let _ = state.register_file_format(Arc::new(NanSafeParquetFormatFactory::new(inner)), true);
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::util::pretty::pretty_format_batches;

    use super::*;

    async fn rows(ctx: &SessionContext, sql: &str) -> String {
        let df = ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        let batches = df.collect().await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        pretty_format_batches(&batches)
            .map(|t| t.to_string())
            .unwrap_or_default()
    }

    /// A session icefloe sets up reads a Parquet file holding `1.5` and `NaN` (chunk
    /// min = max = 1.5) as an external table with its NaN row: not as the constant 1.5.
    #[tokio::test]
    async fn an_external_table_keeps_the_nan_row() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f.parquet");
        let ctx = SessionContext::new();
        crate::datafusion::register_iceberg_factory(&ctx);
        rows(
            &ctx,
            &format!(
                "COPY (SELECT * FROM (VALUES (1, 1.5), (2, CAST('NaN' AS DOUBLE))) AS v(id, f)) \
                 TO '{}' STORED AS PARQUET",
                file.display()
            ),
        )
        .await;
        rows(
            &ctx,
            &format!(
                "CREATE EXTERNAL TABLE e STORED AS PARQUET LOCATION '{}'",
                file.display()
            ),
        )
        .await;
        let got = rows(
            &ctx,
            "SELECT (SELECT count(*) FROM e WHERE isnan(f)) AS nans, \
             (SELECT count(*) FROM e WHERE f > 1.5) AS above, \
             (SELECT max(f) FROM e) AS top",
        )
        .await;
        assert!(got.contains("| 1    | 1     | NaN |"), "{got}");
    }
}
