//! `CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '…'`.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProviderFactory};
use datafusion::common::Result as DFResult;
use datafusion::datasource::TableProvider;
use datafusion::logical_expr::CreateExternalTable;
use datafusion::prelude::SessionContext;

use super::table_provider::IcebergTableProvider;
use crate::table::{OpenOptions, Table};

/// Creates [`IcebergTableProvider`]s for `STORED AS ICEBERG`.
///
/// `LOCATION` is a metadata file or table directory. Options (`OPTIONS ('k' 'v', …)`):
/// `snapshot_id` (read that snapshot), `ref` (a branch or tag), `allow_moved_paths`
/// (`true`/`false`), `remap` (`old=>new`, several separated by `;`); other options are
/// passed to the object store (e.g. `aws_region`).
#[derive(Debug, Default)]
pub struct IcebergTableProviderFactory;

#[async_trait]
impl TableProviderFactory for IcebergTableProviderFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> DFResult<Arc<dyn TableProvider>> {
        let mut options = OpenOptions::default();
        let mut snapshot_id = None;
        let mut ref_name = None;
        for (key, value) in &cmd.options {
            // DataFusion prefixes format options with `format.`
            let key = key.strip_prefix("format.").unwrap_or(key);
            match key {
                "snapshot_id" => {
                    snapshot_id = Some(value.parse::<i64>().map_err(|_| {
                        crate::Error::invalid_argument(format!(
                            "option snapshot_id '{value}' is not a number"
                        ))
                    })?)
                }
                "ref" => ref_name = Some(value.clone()),
                "allow_moved_paths" => {
                    options.allow_moved_paths = value.eq_ignore_ascii_case("true")
                }
                "remap" => {
                    for rule in value.split(';').filter(|r| !r.trim().is_empty()) {
                        let (from, to) = rule.split_once("=>").ok_or_else(|| {
                            crate::Error::invalid_argument(format!(
                                "option remap '{rule}' is not 'old=>new'"
                            ))
                        })?;
                        options
                            .remap
                            .push((from.trim().to_string(), to.trim().to_string()));
                    }
                }
                _ => {
                    options
                        .storage_properties
                        .insert(key.to_string(), value.clone());
                }
            }
        }
        let [location] = cmd.locations.as_slice() else {
            return Err(crate::Error::invalid_argument(format!(
                "STORED AS ICEBERG takes exactly one LOCATION, found {}",
                cmd.locations.len()
            ))
            .into());
        };
        let table = Table::open_with(location, options).await?;
        let view_types = state
            .config_options()
            .execution
            .parquet
            .schema_force_view_types;
        let mut provider =
            IcebergTableProvider::try_new(table)?.with_schema_force_view_types(view_types)?;
        if let Some(id) = snapshot_id {
            provider = provider.with_snapshot_id(id)?;
        }
        if let Some(name) = ref_name {
            provider = provider.with_ref(&name)?;
        }
        Ok(Arc::new(provider))
    }
}

/// Register [`IcebergTableProviderFactory`] under `ICEBERG` in `ctx`, enabling
/// `CREATE EXTERNAL TABLE … STORED AS ICEBERG LOCATION '…'`.
pub fn register_iceberg_factory(ctx: &SessionContext) {
    ctx.state_ref()
        .write()
        .table_factories_mut()
        .insert("ICEBERG".to_string(), Arc::new(IcebergTableProviderFactory));
}
