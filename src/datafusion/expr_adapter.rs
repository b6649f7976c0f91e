//! Field-id column mapping for DataFusion's Parquet scan.
//!
//! DataFusion adapts the scan's projection and predicate from the table ("logical file")
//! schema to each file's physical schema with a `PhysicalExprAdapter`, matching columns by
//! name. Iceberg columns must be matched by field id (spec: "Column Projection"): a
//! renamed column keeps its id, and a dropped-then-re-added column gets a new id and must
//! read as null from older files. [`FieldIdExprAdapterFactory`] renames each table
//! column to the name its field id has in the file and then delegates to DataFusion's
//! default adapter, which inserts the casts for promoted types.
//!
//! A column whose id is absent from the file reads as its v3 `initial-default` when it
//! has one, else as null; reading a *required* column absent with no default is an error
//! (unless DataFusion already replaced it with the file's identity partition value).
//! Struct fields absent from the file read as their `initial-default` too (see
//! [`super::nested_defaults`]).
//! Files written without field ids get ids from the table's name mapping
//! (`schema.name-mapping.default`); without one they cannot be read (error).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::datatypes::{
    DataType, Field, FieldRef, Fields, Schema as ArrowSchema, SchemaRef,
};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{DataFusionError, Result as DFResult, ScalarValue};
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapter, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};

use super::canonical_nan::field_access_inside;
use super::nested_defaults::{missing_defaults, Fill, FillDefaultsExpr};
use super::nested_ids::{rename_field_access, rename_to_file, same_but_names, RelabelExpr};
use super::struct_nulls::{holds_struct, PushStructNullsExpr};
use crate::spec::arrow::arrow_field_id;
use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;
use crate::spec::name_mapping::{MappedField, NameMapping};

/// Creates [`FieldIdExprAdapter`]s: column mapping by Iceberg field id.
#[derive(Debug, Default, Clone)]
pub struct FieldIdExprAdapterFactory {
    /// Field id → `initial-default` value for columns and struct fields absent from
    /// older files.
    initial_defaults: HashMap<i32, ScalarValue>,
    /// Field ids of required columns (absent without a default → error).
    required: HashSet<i32>,
    /// Name mapping for files without field ids.
    name_mapping: Option<Arc<NameMapping>>,
}

impl FieldIdExprAdapterFactory {
    /// A factory with the table's `initial-default`s (by field id), required field ids
    /// and optional name mapping.
    pub fn new(
        initial_defaults: HashMap<i32, ScalarValue>,
        required: HashSet<i32>,
        name_mapping: Option<Arc<NameMapping>>,
    ) -> Self {
        Self {
            initial_defaults,
            required,
            name_mapping,
        }
    }

    /// Field id → `initial-default` value.
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn initial_defaults(&self) -> &HashMap<i32, ScalarValue> {
        &self.initial_defaults
    }

    /// Field ids of required columns.
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn required(&self) -> &HashSet<i32> {
        &self.required
    }

    /// The name mapping for files without field ids.
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn name_mapping(&self) -> Option<&Arc<NameMapping>> {
        self.name_mapping.as_ref()
    }

    /// Field id → file column for the file's top-level columns: the ids the file
    /// carries, or those the name mapping assigns when it carries none.
    pub(crate) fn file_columns_by_id(
        &self,
        physical: &ArrowSchema,
    ) -> DFResult<HashMap<i32, Field>> {
        let by_id: HashMap<i32, Field> = physical
            .fields()
            .iter()
            .filter_map(|f| arrow_field_id(f).map(|id| (id, f.as_ref().clone())))
            .collect();
        if !by_id.is_empty() || physical.fields().is_empty() {
            return Ok(by_id);
        }
        let Some(mapping) = &self.name_mapping else {
            return Err(DataFusionError::NotImplemented(format!(
                "a Parquet data file without Iceberg field ids (columns: {}) in a table without \
                 a name mapping ('{}'): icefloe will not guess columns by name",
                physical
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                crate::spec::name_mapping::DEFAULT_NAME_MAPPING_PROPERTY
            )));
        };
        Ok(physical
            .fields()
            .iter()
            .filter_map(|f| {
                let mapped = mapping.find(f.name())?;
                let id = mapped.field_id?;
                Some((id, with_mapped_ids(f, mapped)))
            })
            .collect())
    }
}

/// A file field annotated with the field ids the name mapping gives it and its nested
/// fields (struct fields by name, list `element`, map `key` / `value`), so nested fields
/// of files without ids are matched by id too. Only the annotated copy carries the ids;
/// the file is still read with its own schema.
fn with_mapped_ids(field: &Field, mapped: &MappedField) -> Field {
    let mut metadata = field.metadata().clone();
    if let Some(id) = mapped.field_id {
        metadata.insert(PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string());
    }
    let child = |f: &FieldRef, name: &str| -> FieldRef {
        match mapped.find(name).or_else(|| mapped.find(f.name())) {
            Some(m) => Arc::new(with_mapped_ids(f, m)),
            None => Arc::clone(f),
        }
    };
    let data_type = match field.data_type() {
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|f| child(f, f.name())).collect())
        }
        DataType::List(e) => DataType::List(child(e, "element")),
        DataType::LargeList(e) => DataType::LargeList(child(e, "element")),
        DataType::Map(entries, sorted) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let kv: Fields = vec![child(&kv[0], "key"), child(&kv[1], "value")].into();
                DataType::Map(
                    Arc::new(
                        entries
                            .as_ref()
                            .clone()
                            .with_data_type(DataType::Struct(kv)),
                    ),
                    *sorted,
                )
            }
            _ => field.data_type().clone(),
        },
        other => other.clone(),
    };
    field
        .clone()
        .with_data_type(data_type)
        .with_metadata(metadata)
}

impl PhysicalExprAdapterFactory for FieldIdExprAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> DFResult<Arc<dyn PhysicalExprAdapter>> {
        let file_ids = self.file_columns_by_id(&physical_file_schema)?;
        let mut renames = HashMap::new();
        let mut substitutions = HashMap::new();
        let mut nested = HashMap::new();
        let mut missing_required = HashMap::new();
        let mut fills = HashMap::new();
        let mut fields: Vec<Field> = Vec::with_capacity(logical_file_schema.fields().len());
        for f in logical_file_schema.fields() {
            let mut data_type = f.data_type().clone();
            let target = match arrow_field_id(f) {
                Some(id) => match file_ids.get(&id) {
                    Some(file_field) => {
                        let missing = missing_defaults(
                            f.data_type(),
                            file_field.data_type(),
                            &self.initial_defaults,
                        );
                        if !missing.is_empty() {
                            fills.insert(f.name().clone(), Arc::new(missing));
                        }
                        data_type = rename_to_file(f.data_type(), file_field.data_type());
                        if &data_type != f.data_type() {
                            nested.insert(
                                f.name().clone(),
                                (f.data_type().clone(), data_type.clone()),
                            );
                        }
                        file_field.name().clone()
                    }
                    None => {
                        if let Some(default) = self.initial_defaults.get(&id) {
                            substitutions.insert(f.name().clone(), default.clone());
                        } else if self.required.contains(&id) {
                            missing_required.insert(f.name().clone(), id);
                        }
                        format!("__icefloe_absent_field_{id}")
                    }
                },
                None => f.name().clone(),
            };
            if &target != f.name() {
                renames.insert(f.name().clone(), target.clone());
            }
            fields.push(
                f.as_ref()
                    .clone()
                    .with_name(target)
                    .with_data_type(data_type),
            );
        }
        let renamed_logical = Arc::new(ArrowSchema::new_with_metadata(
            fields,
            logical_file_schema.metadata().clone(),
        ));
        Ok(Arc::new(FieldIdExprAdapter {
            renames,
            substitutions,
            fills,
            nested,
            missing_required,
            logical_file_schema,
            physical_file_schema: Arc::clone(&physical_file_schema),
            inner: DefaultPhysicalExprAdapter::new(renamed_logical, physical_file_schema),
        }))
    }
}

/// Rewrites table columns to the file's columns of the same field id (or to their
/// `initial-default`), then applies DataFusion's default adaptation (casts, nulls for
/// absent columns).
#[derive(Debug)]
pub struct FieldIdExprAdapter {
    /// Table column name → name of the same field id in the file (or an absent name).
    renames: HashMap<String, String>,
    /// Table column name → the `initial-default` it reads as in this file.
    substitutions: HashMap<String, ScalarValue>,
    /// Table column name → the struct fields absent from this file it fills with their
    /// `initial-default`.
    fills: HashMap<String, Arc<Vec<Fill>>>,
    /// Table column name → (table type, type renamed to the file's nested names), for
    /// nested columns whose nested names differ in this file.
    nested: HashMap<String, (DataType, DataType)>,
    /// Required table columns absent from this file with no default (name → field id):
    /// reading one is an error. Checked per expression, after DataFusion has replaced
    /// the columns it knows to be constant in this file (identity partition values), so
    /// a required partition column missing from a migrated file still reads its value.
    missing_required: HashMap<String, i32>,
    logical_file_schema: SchemaRef,
    physical_file_schema: SchemaRef,
    inner: DefaultPhysicalExprAdapter,
}

impl PhysicalExprAdapter for FieldIdExprAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> DFResult<Arc<dyn PhysicalExpr>> {
        // field accesses directly over their column, where the mapping below sees them
        let expr = field_access_inside(expr)?;
        if !self.missing_required.is_empty() {
            for column in collect_columns(&expr) {
                if let Some(id) = self.missing_required.get(column.name()) {
                    return Err(DataFusionError::Execution(format!(
                        "required column '{}' (field id {id}) is absent from a data file and \
                         has no initial-default",
                        column.name()
                    )));
                }
            }
        }
        if self.nested.is_empty() {
            return self.rewrite_columns(expr);
        }
        let table_field = expr.return_field(&self.logical_file_schema).ok();
        let accesses_renamed = Arc::clone(&expr)
            .transform(|e| {
                let renamed = rename_field_access(&e, |name| self.nested.get(name).cloned())?;
                Ok(match renamed {
                    Some(r) => Transformed::yes(r),
                    None => Transformed::no(e),
                })
            })
            .data()?;
        let rewritten = self.rewrite_columns(accesses_renamed)?;
        // give values of renamed nested types the table's names again
        if let Some(table_field) = table_field {
            let file_type = rewritten.data_type(&self.physical_file_schema)?;
            if &file_type != table_field.data_type()
                && same_but_names(&file_type, table_field.data_type())
            {
                return Ok(Arc::new(RelabelExpr::new(
                    rewritten,
                    table_field.as_ref().clone(),
                )));
            }
        }
        Ok(rewritten)
    }
}

impl FieldIdExprAdapter {
    /// Rename table columns to file columns (or their defaults), then adapt with
    /// DataFusion's default adapter.
    fn rewrite_columns(&self, expr: Arc<dyn PhysicalExpr>) -> DFResult<Arc<dyn PhysicalExpr>> {
        let renamed = if self.renames.is_empty() && self.fills.is_empty() {
            expr
        } else {
            expr.transform(|e| {
                if let Some(col) = e.downcast_ref::<Column>() {
                    if let Some(value) = self.substitutions.get(col.name()) {
                        let lit: Arc<dyn PhysicalExpr> = Arc::new(Literal::new(value.clone()));
                        return Ok(Transformed::yes(lit));
                    }
                    let renamed = self.renames.get(col.name());
                    let fills = self.fills.get(col.name());
                    if renamed.is_none() && fills.is_none() {
                        return Ok(Transformed::no(e));
                    }
                    let target = renamed.map_or(col.name(), String::as_str);
                    let mut new: Arc<dyn PhysicalExpr> = Arc::new(Column::new(target, col.index()));
                    if let Some(fills) = fills {
                        new = Arc::new(FillDefaultsExpr::new(new, Arc::clone(fills)));
                    }
                    return Ok(Transformed::yes(new));
                }
                Ok(Transformed::no(e))
            })
            .data()?
        };
        let adapted = self.inner.rewrite(renamed)?;
        // file columns holding structs get struct nulls pushed into their fields before
        // anything reads a field (see `struct_nulls`)
        adapted
            .transform_up(|e| {
                let Some(col) = e.downcast_ref::<Column>() else {
                    return Ok(Transformed::no(e));
                };
                let holds = self
                    .physical_file_schema
                    .fields()
                    .get(col.index())
                    .is_some_and(|f| f.name() == col.name() && holds_struct(f.data_type()));
                Ok(if holds {
                    Transformed::yes(Arc::new(PushStructNullsExpr::new(e)) as Arc<dyn PhysicalExpr>)
                } else {
                    Transformed::no(e)
                })
            })
            .data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int32Array, Int64Array, RecordBatch};
    use datafusion::arrow::datatypes::DataType;
    use datafusion::physical_expr::expressions::col;

    fn field(name: &str, dt: DataType, id: Option<i32>) -> Field {
        let f = Field::new(name, dt, true);
        match id {
            Some(id) => f.with_metadata(HashMap::from([(
                PARQUET_FIELD_ID_META_KEY.to_string(),
                id.to_string(),
            )])),
            None => f,
        }
    }

    fn eval(
        adapter: &Arc<dyn PhysicalExprAdapter>,
        logical: &ArrowSchema,
        name: &str,
        batch: &RecordBatch,
    ) -> Vec<Option<i64>> {
        let expr = adapter.rewrite(col(name, logical).unwrap()).unwrap();
        let out = expr
            .evaluate(batch)
            .unwrap()
            .into_array(batch.num_rows())
            .unwrap();
        let out = datafusion::arrow::compute::cast(&out, &DataType::Int64).unwrap();
        let out = out.as_any().downcast_ref::<Int64Array>().unwrap();
        out.iter().collect()
    }

    #[test]
    fn maps_by_id_with_promotion_default_and_reused_name() {
        // table: id(1) long renamed to `key`; `old`(4) re-added name of dropped id 2; `extra`(5) with default 7
        let logical = Arc::new(ArrowSchema::new(vec![
            field("key", DataType::Int64, Some(1)),
            field("old", DataType::Int64, Some(4)),
            field("extra", DataType::Int64, Some(5)),
        ]));
        // file: id(1) int named `id`, dropped id 2 named `old`
        let physical = Arc::new(ArrowSchema::new(vec![
            field("id", DataType::Int32, Some(1)),
            field("old", DataType::Int32, Some(2)),
        ]));
        let batch = RecordBatch::try_new(
            Arc::clone(&physical),
            vec![
                Arc::new(Int32Array::from(vec![1, 2])),
                Arc::new(Int32Array::from(vec![8, 9])),
            ],
        )
        .unwrap();
        let factory = FieldIdExprAdapterFactory::new(
            HashMap::from([(5, ScalarValue::Int64(Some(7)))]),
            HashSet::new(),
            None,
        );
        let adapter = factory.create(Arc::clone(&logical), physical).unwrap();
        assert_eq!(
            eval(&adapter, &logical, "key", &batch),
            vec![Some(1), Some(2)]
        );
        assert_eq!(eval(&adapter, &logical, "old", &batch), vec![None, None]);
        assert_eq!(
            eval(&adapter, &logical, "extra", &batch),
            vec![Some(7), Some(7)]
        );
    }

    #[test]
    fn required_absent_column_is_an_error() {
        let logical = Arc::new(ArrowSchema::new(vec![field("r", DataType::Int64, Some(3))]));
        let physical = Arc::new(ArrowSchema::new(vec![field(
            "id",
            DataType::Int32,
            Some(1),
        )]));
        let factory = FieldIdExprAdapterFactory::new(HashMap::new(), HashSet::from([3]), None);
        let adapter = factory.create(Arc::clone(&logical), physical).unwrap();
        let column = datafusion::physical_expr::expressions::col("r", &logical).unwrap();
        let err = adapter.rewrite(column).unwrap_err();
        assert!(
            err.to_string().contains("required column 'r' (field id 3)"),
            "{err}"
        );
        // an expression not reading it (e.g. after DataFusion replaced it with the file's
        // identity partition value) is fine
        let literal: Arc<dyn PhysicalExpr> = Arc::new(Literal::new(ScalarValue::Int64(Some(4))));
        assert!(adapter.rewrite(literal).is_ok());
    }

    #[test]
    fn files_without_ids_need_a_name_mapping() {
        let logical = Arc::new(ArrowSchema::new(vec![field(
            "id",
            DataType::Int64,
            Some(1),
        )]));
        let physical = Arc::new(ArrowSchema::new(vec![field(
            "record_id",
            DataType::Int64,
            None,
        )]));
        let err = FieldIdExprAdapterFactory::default()
            .create(Arc::clone(&logical), Arc::clone(&physical))
            .unwrap_err();
        assert!(
            err.to_string().contains("without Iceberg field ids"),
            "{err}"
        );

        let mapping =
            NameMapping::from_json(r#"[{"field-id": 1, "names": ["id", "record_id"]}]"#).unwrap();
        let factory =
            FieldIdExprAdapterFactory::new(HashMap::new(), HashSet::new(), Some(Arc::new(mapping)));
        let adapter = factory
            .create(Arc::clone(&logical), Arc::clone(&physical))
            .unwrap();
        let batch =
            RecordBatch::try_new(physical, vec![Arc::new(Int64Array::from(vec![5]))]).unwrap();
        assert_eq!(eval(&adapter, &logical, "id", &batch), vec![Some(5)]);
    }
}
