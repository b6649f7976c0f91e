//! Field-id column mapping for DataFusion's Parquet scan.
//!
//! DataFusion adapts the scan's projection and predicate from the table ("logical file")
//! schema to each file's physical schema with a `PhysicalExprAdapter`, matching columns by
//! name. Iceberg columns must be matched by field id (spec: "Column Projection"): a
//! renamed column keeps its id, and a dropped-then-re-added column gets a new id and must
//! read as null from older files. [`FieldIdExprAdapterFactory`] renames each table
//! column to the name its field id has in the file (or to a name absent from the file
//! when the id is absent) and then delegates to DataFusion's default adapter, which
//! inserts the casts for promoted types and nulls for missing columns.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, Schema as ArrowSchema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapter, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};

use crate::spec::arrow::arrow_field_id;

/// Creates [`FieldIdExprAdapter`]s: column mapping by Iceberg field id.
#[derive(Debug, Default, Clone)]
pub struct FieldIdExprAdapterFactory;

impl PhysicalExprAdapterFactory for FieldIdExprAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> DFResult<Arc<dyn PhysicalExprAdapter>> {
        let file_ids: HashMap<i32, &Field> = physical_file_schema
            .fields()
            .iter()
            .filter_map(|f| arrow_field_id(f).map(|id| (id, f.as_ref())))
            .collect();
        if file_ids.is_empty() && !physical_file_schema.fields().is_empty() {
            return Err(DataFusionError::NotImplemented(
                "reading a Parquet file without Iceberg field ids (name mapping) is not supported yet"
                    .into(),
            ));
        }
        let mut renames = HashMap::new();
        let fields: Vec<Field> = logical_file_schema
            .fields()
            .iter()
            .map(|f| {
                let target = match arrow_field_id(f) {
                    Some(id) => match file_ids.get(&id) {
                        Some(file_field) => file_field.name().clone(),
                        None => format!("__icefloe_absent_field_{id}"),
                    },
                    None => f.name().clone(),
                };
                if &target != f.name() {
                    renames.insert(f.name().clone(), target.clone());
                }
                f.as_ref().clone().with_name(target)
            })
            .collect();
        let renamed_logical = Arc::new(ArrowSchema::new_with_metadata(
            fields,
            logical_file_schema.metadata().clone(),
        ));
        Ok(Arc::new(FieldIdExprAdapter {
            renames,
            inner: DefaultPhysicalExprAdapter::new(renamed_logical, physical_file_schema),
        }))
    }
}

/// Rewrites table columns to the file's columns of the same field id, then applies
/// DataFusion's default adaptation (casts, nulls for absent columns).
#[derive(Debug)]
pub struct FieldIdExprAdapter {
    /// Table column name → name of the same field id in the file (or an absent name).
    renames: HashMap<String, String>,
    inner: DefaultPhysicalExprAdapter,
}

impl PhysicalExprAdapter for FieldIdExprAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> DFResult<Arc<dyn PhysicalExpr>> {
        let renamed = if self.renames.is_empty() {
            expr
        } else {
            expr.transform(|e| {
                if let Some(col) = e.downcast_ref::<Column>() {
                    if let Some(target) = self.renames.get(col.name()) {
                        let new: Arc<dyn PhysicalExpr> = Arc::new(Column::new(target, col.index()));
                        return Ok(Transformed::yes(new));
                    }
                }
                Ok(Transformed::no(e))
            })
            .data()?
        };
        self.inner.rewrite(renamed)
    }
}
