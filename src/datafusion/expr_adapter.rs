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
//! Nested columns (structs, lists, maps) are not left to DataFusion's casts, which match
//! struct fields by name and a map value's struct fields by position: each is read
//! through a [`NestedProjection`], which matches the fields at every depth by field id
//! (absent ones read their `initial-default`, or null) and pushes struct nulls down.
//! So is a column of a finer time unit than the table's (a migrated file's
//! `TIMESTAMP(NANOS)` in a microsecond `timestamp`): DataFusion's cast rounds a value
//! before 1970 toward zero (-1500 ns to -1 µs) where Java floors (-2 µs); the projection
//! floors ([`crate::time_narrowing`]). A filter on such a column prunes no row group
//! (DataFusion's statistics pruning does not see through the projection).
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
use super::nested_projection::{is_nested, Absent, NestedProjection, ProjectNestedExpr};
use super::values_fields::same_but_names;
use crate::spec::arrow::arrow_field_id;
use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;
use crate::spec::name_mapping::{MappedField, NameMapping};
use crate::time_narrowing::narrowed_type;

/// Creates [`FieldIdExprAdapter`]s: column mapping by Iceberg field id.
#[derive(Debug, Default, Clone)]
pub struct FieldIdExprAdapterFactory {
    /// Field id → `initial-default` value for columns and struct fields (at any depth)
    /// absent from older files.
    initial_defaults: HashMap<i32, ScalarValue>,
    /// Field ids of required fields, columns and nested fields (absent without a
    /// default → error).
    required: HashSet<i32>,
    /// Name mapping for files without field ids.
    name_mapping: Option<Arc<NameMapping>>,
    /// The table's columns with the field ids of their nested fields (the scan's table
    /// schema has none: see [`crate::spec::arrow::without_nested_field_ids`]), by the
    /// column's field id.
    id_columns: HashMap<i32, FieldRef>,
}

impl FieldIdExprAdapterFactory {
    /// A factory with the table's `initial-default`s (by field id, at any depth),
    /// required field ids (at any depth) and optional name mapping.
    pub fn new(
        initial_defaults: HashMap<i32, ScalarValue>,
        required: HashSet<i32>,
        name_mapping: Option<Arc<NameMapping>>,
    ) -> Self {
        Self {
            initial_defaults,
            required,
            name_mapping,
            id_columns: HashMap::new(),
        }
    }

    /// This factory matching the nested fields of the table's columns by the ids in
    /// `columns` (the table's Arrow schema with the ids of nested fields; columns
    /// without an id are left out). A scan's table schema whose nested fields carry no
    /// ids reads them by these; without them, its own ids are used.
    pub fn with_id_columns(mut self, columns: &ArrowSchema) -> Self {
        self.id_columns = columns
            .fields()
            .iter()
            .filter_map(|f| arrow_field_id(f).map(|id| (id, Arc::clone(f))))
            .collect();
        self
    }

    /// The table's columns with nested field ids ([`Self::with_id_columns`]), as an
    /// Arrow schema in field id order (for a plan codec, and the key of a file's checks).
    pub(crate) fn id_columns(&self) -> ArrowSchema {
        let mut ids: Vec<&i32> = self.id_columns.keys().collect();
        ids.sort_unstable();
        ArrowSchema::new(
            ids.into_iter()
                .map(|id| Arc::clone(&self.id_columns[id]))
                .collect::<Vec<_>>(),
        )
    }

    /// `column` (a table column of the scan's table schema) with the ids of its nested
    /// fields: the column of its id given to [`Self::with_id_columns`] when that has the
    /// same type but for nested metadata, else `column` as it is.
    pub(crate) fn with_nested_ids(&self, column: &Field) -> Field {
        arrow_field_id(column)
            .and_then(|id| self.id_columns.get(&id))
            .filter(|f| same_but_names(f.data_type(), column.data_type()))
            .map_or_else(
                || column.clone(),
                |f| column.clone().with_data_type(f.data_type().clone()),
            )
    }

    /// Field id → `initial-default` value.
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn initial_defaults(&self) -> &HashMap<i32, ScalarValue> {
        &self.initial_defaults
    }

    /// Field ids of required fields (at any depth).
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) fn required(&self) -> &HashSet<i32> {
        &self.required
    }

    /// The name mapping for files without field ids.
    pub(crate) fn name_mapping(&self) -> Option<&Arc<NameMapping>> {
        self.name_mapping.as_ref()
    }

    /// Field id → file column for the file's top-level columns: the ids the file
    /// carries, or those the name mapping assigns when it carries none.
    pub(crate) fn file_columns_by_id(
        &self,
        physical: &ArrowSchema,
    ) -> DFResult<HashMap<i32, FieldRef>> {
        let by_id: HashMap<i32, FieldRef> = physical
            .fields()
            .iter()
            .filter_map(|f| arrow_field_id(f).map(|id| (id, Arc::clone(f))))
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
                Some((id, Arc::new(with_mapped_ids(f, mapped))))
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
        let absent = Absent {
            defaults: &self.initial_defaults,
            required: &self.required,
        };
        let mut renames = HashMap::new();
        let mut substitutions = HashMap::new();
        let mut projections = HashMap::new();
        let mut unreadable = HashMap::new();
        let mut fields: Vec<Field> = Vec::with_capacity(logical_file_schema.fields().len());
        for f in logical_file_schema.fields() {
            // the file column of this table column: by field id (the name mapping's for
            // files without ids), by name for columns without an id
            let (target, file_field) = match arrow_field_id(f) {
                Some(id) => match file_ids.get(&id) {
                    Some(file_field) => (file_field.name().clone(), Some(Arc::clone(file_field))),
                    None => {
                        if let Some(default) = self.initial_defaults.get(&id) {
                            substitutions.insert(f.name().clone(), default.clone());
                        } else if self.required.contains(&id) {
                            unreadable.insert(
                                f.name().clone(),
                                format!(
                                    "required column '{}' (field id {id}) is absent from a \
                                     data file and has no initial-default",
                                    f.name()
                                ),
                            );
                        }
                        (format!("__icefloe_absent_field_{id}"), None)
                    }
                },
                None => (
                    f.name().clone(),
                    physical_file_schema
                        .index_of(f.name())
                        .ok()
                        .map(|i| Arc::clone(&physical_file_schema.fields()[i])),
                ),
            };
            if &target != f.name() {
                renames.insert(f.name().clone(), target.clone());
            }
            let mut field = f.as_ref().clone().with_name(target.clone());
            if let Some(file_field) = file_field.filter(|ff| {
                let nested = is_nested(f.data_type())
                    && (holds_struct(f.data_type()) || ff.data_type() != f.data_type());
                // DataFusion's cast divides: a finer time unit (`TIMESTAMP(NANOS)` in a
                // microsecond column) must floor instead, as Java's readers do
                nested || narrowed_type(ff.data_type(), f.data_type()) != *ff.data_type()
            }) {
                // matched by the ids of the nested fields, read as the scan's type
                let with_ids = self.with_nested_ids(f);
                match NestedProjection::new(&with_ids, &file_field, &absent)
                    .and_then(|p| p.reading_as(f))
                {
                    Ok(projection) => {
                        projections.insert(f.name().clone(), Arc::new(projection));
                    }
                    Err(message) => {
                        unreadable.insert(f.name().clone(), message);
                    }
                }
                // DataFusion's adapter sees the file's own column (no cast): the
                // projection gives it the table's type
                if let Ok(physical) = physical_file_schema.field_with_name(&target) {
                    field = physical.clone();
                }
            }
            fields.push(field);
        }
        let renamed_logical = Arc::new(ArrowSchema::new_with_metadata(
            fields,
            logical_file_schema.metadata().clone(),
        ));
        Ok(Arc::new(FieldIdExprAdapter {
            renames,
            substitutions,
            projections,
            unreadable,
            inner: DefaultPhysicalExprAdapter::new(renamed_logical, physical_file_schema),
        }))
    }
}

/// Whether values of `data_type` can hold a struct (at any depth).
fn holds_struct(data_type: &DataType) -> bool {
    match data_type {
        DataType::Struct(_) => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => holds_struct(f.data_type()),
        _ => false,
    }
}

/// Rewrites table columns to the file's columns of the same field id (or to their
/// `initial-default`), nested ones read through their [`NestedProjection`], then applies
/// DataFusion's default adaptation (casts, nulls for absent columns).
#[derive(Debug)]
pub struct FieldIdExprAdapter {
    /// Table column name → name of the same field id in the file (or an absent name).
    renames: HashMap<String, String>,
    /// Table column name → the `initial-default` it reads as in this file.
    substitutions: HashMap<String, ScalarValue>,
    /// Table column name → how its nested file column reads as the table's type.
    projections: HashMap<String, Arc<NestedProjection>>,
    /// Table columns this file cannot give (name → why): a required column absent with
    /// no default, or a nested required field so absent. Reading one is an error,
    /// checked per expression, after DataFusion has replaced the columns it knows to be
    /// constant in this file (identity partition values), so a required partition
    /// column missing from a migrated file still reads its value.
    unreadable: HashMap<String, String>,
    inner: DefaultPhysicalExprAdapter,
}

impl PhysicalExprAdapter for FieldIdExprAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> DFResult<Arc<dyn PhysicalExpr>> {
        // field accesses directly over their column (hoisting NaN canonicalization)
        let expr = field_access_inside(expr)?;
        if !self.unreadable.is_empty() {
            for column in collect_columns(&expr) {
                if let Some(why) = self.unreadable.get(column.name()) {
                    return Err(DataFusionError::Execution(why.clone()));
                }
            }
        }
        let renamed = if self.renames.is_empty() && self.projections.is_empty() {
            expr
        } else {
            expr.transform(|e| {
                let Some(col) = e.downcast_ref::<Column>() else {
                    return Ok(Transformed::no(e));
                };
                if let Some(value) = self.substitutions.get(col.name()) {
                    let lit: Arc<dyn PhysicalExpr> = Arc::new(Literal::new(value.clone()));
                    return Ok(Transformed::yes(lit));
                }
                let renamed = self.renames.get(col.name());
                let projection = self.projections.get(col.name());
                if renamed.is_none() && projection.is_none() {
                    return Ok(Transformed::no(e));
                }
                let target = renamed.map_or(col.name(), String::as_str);
                let mut new: Arc<dyn PhysicalExpr> = Arc::new(Column::new(target, col.index()));
                if let Some(projection) = projection {
                    new = Arc::new(ProjectNestedExpr::new(new, Arc::clone(projection)));
                }
                Ok(Transformed::yes(new))
            })
            .data()?
        };
        self.inner.rewrite(renamed)
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
