//! `CREATE EXTERNAL TABLE … STORED AS PARQUET` reads a directory of Parquet files whose
//! strings are of different Arrow types (pyarrow writes `string`, DataFusion
//! `string_view`) as a path does ([`crate::path_listing`]): DataFusion's
//! `ListingTableFactory` merges the files' schemas as they are, and refuses the mix.
//!
//! [`UnifiedParquetFactory`] gives DataFusion's factory the schema a path reading the
//! same files has (Hive partition columns after the files' columns, as DataFusion infers
//! them), when the statement declares no columns, no `PARTITIONED BY` and names one
//! location; otherwise (declared columns, several locations) DataFusion's factory runs as
//! it is.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::{internal_datafusion_err, DFSchema, Result as DFResult};
use datafusion::datasource::listing::{ListingOptions, ListingTableUrl};
use datafusion::datasource::listing_table_factory::ListingTableFactory;
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::CreateExternalTable;
use datafusion::prelude::SessionContext;

/// DataFusion's `ListingTableFactory` for `STORED AS PARQUET`, its files' string types
/// made one (see the module docs).
#[derive(Debug, Default)]
pub struct UnifiedParquetFactory {
    inner: ListingTableFactory,
}

/// Make `CREATE EXTERNAL TABLE … STORED AS PARQUET` of `ctx` read its files' strings as
/// one type.
pub fn register(ctx: &SessionContext) {
    ctx.state_ref().write().table_factories_mut().insert(
        "PARQUET".to_string(),
        Arc::new(UnifiedParquetFactory::default()),
    );
}

#[async_trait]
impl TableProviderFactory for UnifiedParquetFactory {
    /// Errors: DataFusion's factory's; reading or merging the files' schemas.
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> DFResult<Arc<dyn TableProvider>> {
        let [location] = cmd.locations.as_slice() else {
            return self.inner.create(state, cmd).await;
        };
        if !cmd.schema.fields().is_empty() || !cmd.table_partition_cols.is_empty() {
            return self.inner.create(state, cmd).await;
        }
        let session = state
            .as_any()
            .downcast_ref::<SessionState>()
            .ok_or_else(|| {
                internal_datafusion_err!("CREATE EXTERNAL TABLE needs a SessionState")
            })?;
        let Some(schema) =
            crate::path_listing::parquet_location_schema(session, location, &cmd.options).await?
        else {
            return self.inner.create(state, cmd).await;
        };
        let mut unified = cmd.clone();
        let mut fields: Vec<FieldRef> = schema.fields().iter().cloned().collect();
        // Hive partition directories (`k=1/`): columns after the files' ones, of the type
        // DataFusion's factory infers them as
        if session
            .config_options()
            .execution
            .listing_table_factory_infer_partitions
        {
            let format = session
                .get_file_format_factory("parquet")
                .ok_or_else(|| internal_datafusion_err!("no Parquet format in the session"))?
                .create(session, &cmd.options)?;
            let url = ListingTableUrl::parse(location)?;
            let partitions = ListingOptions::new(format)
                .infer_partitions(session, &url)
                .await?;
            for name in &partitions {
                let dictionary =
                    DataType::Dictionary(Box::new(DataType::UInt16), Box::new(DataType::Utf8));
                fields.push(Arc::new(Field::new(name, dictionary, true)));
            }
            unified.table_partition_cols = partitions;
        }
        let schema = Schema::new_with_metadata(fields, schema.metadata().clone());
        unified.schema = Arc::new(DFSchema::try_from(schema)?);
        self.inner.create(state, &unified).await
    }
}
