//! `information_schema` (and so `SHOW TABLES`, `SHOW COLUMNS`) over Iceberg catalogs,
//! told apart from DataFusion's own in two ways:
//!
//! - `columns.data_type` shows the Arrow type without field metadata: icefloe's Arrow
//!   schemas carry each nested field's Iceberg id as `PARQUET:field_id` metadata, which
//!   DataFusion would print inside every struct, list and map type;
//! - a table that cannot be loaded (a missing or corrupt metadata file) does not make the
//!   whole view fail: it is listed in `tables` (as a base table), has no rows in
//!   `columns`, and querying it gives its own error;
//! - the Iceberg catalogs' namespace and table lists are read again before each of its
//!   tables is scanned: tables another session or process created or dropped since the
//!   catalog was attached are listed as they are now (DataFusion's view lists what the
//!   catalog providers held, which only this session's own DDL keeps up to date), as
//!   `SHOW TABLES` does.
//!
//! [`register_information_schema`] turns DataFusion's built-in view off and registers
//! this one as the schema `information_schema` of every catalog of the session.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Schema, SchemaRef};
use datafusion::catalog::information_schema::{InformationSchemaProvider, INFORMATION_SCHEMA};
use datafusion::catalog::{CatalogProvider, CatalogProviderList, SchemaProvider, Session};
use datafusion::common::{not_impl_err, DataFusionError, Result as DFResult};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;

use crate::datafusion::IcebergCatalogProvider;

/// Replace DataFusion's `information_schema` in `ctx` with this module's, in every
/// catalog registered so far (register catalogs first).
pub fn register_information_schema(ctx: &SessionContext) -> DFResult<()> {
    ctx.state_ref()
        .write()
        .config_mut()
        .options_mut()
        .catalog
        .information_schema = false;
    let state = ctx.state();
    let list: Arc<dyn CatalogProviderList> = Arc::new(ViewCatalogList {
        inner: Arc::clone(state.catalog_list()),
    });
    for name in ctx.catalog_names() {
        if let Some(catalog) = ctx.catalog(&name) {
            let schema = InformationSchemaProvider::new(Arc::clone(&list))
                .with_table_functions(state.table_functions().clone());
            let schema = ReadAnew {
                inner: schema,
                catalogs: Arc::clone(state.catalog_list()),
            };
            catalog.register_schema(INFORMATION_SCHEMA, Arc::new(schema))?;
        }
    }
    Ok(())
}

/// Whether the `information_schema` of `catalog` in `ctx` is this module's, whose tables
/// read the Iceberg catalogs' lists again when scanned.
pub(crate) fn reads_lists_anew(ctx: &SessionContext, catalog: &str) -> bool {
    read_anew(ctx, catalog).is_some()
}

/// The view's table `name` of `catalog` (`tables`, `columns`, …) as the catalogs' lists
/// are held now, not read again when scanned: for a statement that has just read them
/// ([`IcebergCatalogProvider::refresh`]). `None` when `catalog`'s `information_schema`
/// is not this module's or has no such table.
pub(crate) async fn as_listed(
    ctx: &SessionContext,
    catalog: &str,
    name: &str,
) -> DFResult<Option<Arc<dyn TableProvider>>> {
    match read_anew(ctx, catalog) {
        Some(schema) => {
            let any: &dyn Any = schema.as_ref();
            match any.downcast_ref::<ReadAnew>() {
                Some(view) => view.inner.table(name).await,
                None => Ok(None),
            }
        }
        None => Ok(None),
    }
}

fn read_anew(ctx: &SessionContext, catalog: &str) -> Option<Arc<dyn SchemaProvider>> {
    let schema = ctx.catalog(catalog)?.schema(INFORMATION_SCHEMA)?;
    let any: &dyn Any = schema.as_ref();
    any.is::<ReadAnew>().then_some(schema)
}

/// DataFusion's `information_schema` whose tables read the Iceberg catalogs' lists
/// again before they are scanned.
#[derive(Debug)]
struct ReadAnew {
    inner: InformationSchemaProvider,
    /// the session's catalogs (not the view's wrappers): the Iceberg ones are refreshed
    catalogs: Arc<dyn CatalogProviderList>,
}

#[async_trait]
impl SchemaProvider for ReadAnew {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        Ok(self.inner.table(name).await?.map(|inner| {
            Arc::new(RefreshedFirst {
                inner,
                catalogs: Arc::clone(&self.catalogs),
            }) as Arc<dyn TableProvider>
        }))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
    }
}

/// A table of the view, scanned after every Iceberg catalog of the session re-read its
/// namespace and table lists ([`IcebergCatalogProvider::refresh`]).
#[derive(Debug)]
struct RefreshedFirst {
    inner: Arc<dyn TableProvider>,
    catalogs: Arc<dyn CatalogProviderList>,
}

#[async_trait]
impl TableProvider for RefreshedFirst {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    /// Errors: a catalog's, listing its namespaces or tables (naming the catalog);
    /// then the view's.
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        for name in self.catalogs.catalog_names() {
            let Some(catalog) = self.catalogs.catalog(&name) else {
                continue;
            };
            let catalog: Arc<dyn Any + Send + Sync> = catalog;
            if let Ok(iceberg) = catalog.downcast::<IcebergCatalogProvider>() {
                iceberg.refresh().await.map_err(|e| {
                    DataFusionError::from(
                        e.context(format!("information_schema: listing catalog '{name}'")),
                    )
                })?;
            }
        }
        self.inner.scan(state, projection, filters, limit).await
    }
}

/// A data type with the metadata of its nested fields removed.
pub(crate) fn plain_type(data_type: &DataType) -> DataType {
    let field = |f: &FieldRef| -> FieldRef {
        Arc::new(Field::new(
            f.name(),
            plain_type(f.data_type()),
            f.is_nullable(),
        ))
    };
    match data_type {
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect::<Fields>()),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::ListView(f) => DataType::ListView(field(f)),
        DataType::LargeListView(f) => DataType::LargeListView(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        DataType::Dictionary(k, v) => DataType::Dictionary(k.clone(), Box::new(plain_type(v))),
        other => other.clone(),
    }
}

fn plain_schema(schema: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| Field::new(f.name(), plain_type(f.data_type()), f.is_nullable()))
            .collect::<Vec<_>>(),
    ))
}

/// The session's catalogs as the view sees them.
#[derive(Debug)]
struct ViewCatalogList {
    inner: Arc<dyn CatalogProviderList>,
}

impl CatalogProviderList for ViewCatalogList {
    fn register_catalog(
        &self,
        name: String,
        catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        self.inner.register_catalog(name, catalog)
    }

    fn catalog_names(&self) -> Vec<String> {
        self.inner.catalog_names()
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        let inner = self.inner.catalog(name)?;
        Some(Arc::new(ViewCatalog { inner }))
    }
}

#[derive(Debug)]
struct ViewCatalog {
    inner: Arc<dyn CatalogProvider>,
}

impl CatalogProvider for ViewCatalog {
    fn schema_names(&self) -> Vec<String> {
        self.inner.schema_names()
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        if name == INFORMATION_SCHEMA {
            return None;
        }
        let inner = self.inner.schema(name)?;
        Some(Arc::new(ViewSchema { inner }))
    }
}

#[derive(Debug)]
struct ViewSchema {
    inner: Arc<dyn SchemaProvider>,
}

#[async_trait]
impl SchemaProvider for ViewSchema {
    fn table_names(&self) -> Vec<String> {
        self.inner.table_names()
    }

    async fn table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        // a table that cannot be loaded has no columns to list
        match self.inner.table(name).await {
            Ok(Some(table)) => Ok(Some(Arc::new(ColumnsOnly {
                schema: plain_schema(&table.schema()),
                table_type: table.table_type(),
            }))),
            Ok(None) | Err(_) => Ok(None),
        }
    }

    async fn table_type(&self, name: &str) -> DFResult<Option<TableType>> {
        match self.inner.table_type(name).await {
            Ok(t) => Ok(t),
            // listed but broken: still a table
            Err(_) => Ok(Some(TableType::Base)),
        }
    }

    fn table_exist(&self, name: &str) -> bool {
        self.inner.table_exist(name)
    }
}

/// What the view reads of a table: its columns and type. Never scanned.
#[derive(Debug)]
struct ColumnsOnly {
    schema: SchemaRef,
    table_type: TableType,
}

#[async_trait]
impl TableProvider for ColumnsOnly {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        self.table_type
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        _projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        not_impl_err!("information_schema lists this table's columns; it is not read through it")
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn nested_field_ids_are_not_part_of_the_type() {
        let with_id = |name: &str, dt: DataType| {
            Field::new(name, dt, true).with_metadata(HashMap::from([(
                "PARQUET:field_id".to_string(),
                "7".to_string(),
            )]))
        };
        let item = with_id("element", DataType::Int64);
        let dt = DataType::Struct(Fields::from(vec![with_id(
            "xs",
            DataType::List(Arc::new(item)),
        )]));
        assert!(dt.to_string().contains("field_id"));
        let plain = plain_type(&dt);
        assert!(!plain.to_string().contains("field_id"), "{plain}");
        assert_eq!(
            plain.to_string(),
            DataType::Struct(Fields::from(vec![Field::new(
                "xs",
                DataType::List(Arc::new(Field::new("element", DataType::Int64, true))),
                true
            )]))
            .to_string()
        );
    }
}
