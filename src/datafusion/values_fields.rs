//! [`ValuesNestedFields`]: `INSERT INTO t VALUES (…)` into a table with nested columns.
//!
//! A table's Arrow schema may carry metadata on nested fields (a list's element, a map's
//! key and value, a struct's fields; an Iceberg file's `PARQUET:field_id`s: icefloe's own
//! providers plan without them, see [`crate::spec::arrow::without_nested_field_ids`],
//! but other providers may not). For
//! `INSERT … VALUES` DataFusion 55 gives the `Values` node the table's column types and
//! casts each value to them; its constant folding then turns `CAST([1, 2] AS …)` into a
//! list *literal* whose element field has the right name and type but no metadata
//! (`ScalarValue::try_from_array` rebuilds a list's child field from its name and
//! nullability only). The `Values` node is then planned as a batch whose column type
//! differs from its schema only in nested field metadata, and Arrow refuses it
//! ("column types must match schema types, expected List(Int32, field: 'element',
//! metadata: {"PARQUET:field_id": "3"}) …"). The same happens for maps, lists of structs,
//! structs of lists, at any depth.
//!
//! This optimizer rule, run after DataFusion's own, gives each such literal of a
//! `Values` node the node's column type (same buffers, the field metadata and names of
//! the schema: [`relabel_data`]); values whose types differ in anything
//! else are left for DataFusion to report. The same rule names the table's column when a
//! `VALUES` row holds `NULL` for a required one (DataFusion's own error names the `Values`
//! node's `column1`). Installed by [`install_values_rule`]
//! (called by [`register_iceberg_factory`](super::register_iceberg_factory),
//! [`sql::execute`](super::sql::execute) and so the CLI, and
//! [`install_dml_guard`](super::dml::install_dml_guard)).

use std::sync::Arc;

use datafusion::arrow::array::{make_array, Array, ArrayData, AsArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DataFusionError, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{Expr, LogicalPlan, Values, WriteOp};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use datafusion::prelude::SessionContext;

/// The rule's name (as listed by the session's optimizer).
pub const VALUES_NESTED_FIELDS_RULE: &str = "icefloe_values_nested_fields";

/// An optimizer rule: nested literals of a `Values` node get the node's column types,
/// nested field metadata (Iceberg field ids) included (see the module docs).
#[derive(Debug, Default)]
pub struct ValuesNestedFields;

/// Whether two types are the same but for the names (and metadata) of nested fields.
pub(crate) fn same_but_names(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Struct(x), DataType::Struct(y)) => {
            x.len() == y.len()
                && x.iter().zip(y.iter()).all(|(p, q)| {
                    p.is_nullable() == q.is_nullable()
                        && same_but_names(p.data_type(), q.data_type())
                })
        }
        (DataType::List(x), DataType::List(y))
        | (DataType::LargeList(x), DataType::LargeList(y))
        | (DataType::Map(x, _), DataType::Map(y, _)) => {
            same_but_names(x.data_type(), y.data_type())
        }
        _ => a == b,
    }
}

/// An array's data with its type (and its children's types, recursively) replaced by
/// `target`, which must differ only in nested names ([`same_but_names`]): same buffers.
pub(crate) fn relabel_data(data: ArrayData, target: &DataType) -> DFResult<ArrayData> {
    let children: Vec<ArrayData> = match target {
        DataType::Struct(fields) => data
            .child_data()
            .iter()
            .zip(fields.iter())
            .map(|(c, f)| relabel_data(c.clone(), f.data_type()))
            .collect::<DFResult<_>>()?,
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => data
            .child_data()
            .iter()
            .map(|c| relabel_data(c.clone(), f.data_type()))
            .collect::<DFResult<_>>()?,
        _ => return Ok(data),
    };
    Ok(data
        .into_builder()
        .data_type(target.clone())
        .child_data(children)
        .build()?)
}

/// `value` with type `target` when the two differ only in nested field names or
/// metadata; `None` otherwise (or when nothing differs).
fn relabel_scalar(value: &ScalarValue, target: &DataType) -> DFResult<Option<ScalarValue>> {
    let current = value.data_type();
    if &current == target || !same_but_names(&current, target) {
        return Ok(None);
    }
    if !matches!(
        target,
        DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(..)
            | DataType::Struct(_)
            | DataType::Map(..)
    ) {
        return Ok(None);
    }
    let array = make_array(relabel_data(value.to_array()?.to_data(), target)?);
    Ok(Some(match target {
        DataType::List(_) => ScalarValue::List(Arc::new(array.as_list::<i32>().clone())),
        DataType::LargeList(_) => ScalarValue::LargeList(Arc::new(array.as_list::<i64>().clone())),
        DataType::FixedSizeList(..) => {
            ScalarValue::FixedSizeList(Arc::new(array.as_fixed_size_list().clone()))
        }
        DataType::Struct(_) => ScalarValue::Struct(Arc::new(array.as_struct().clone())),
        DataType::Map(..) => ScalarValue::Map(Arc::new(array.as_map().clone())),
        _ => return Ok(None),
    }))
}

impl OptimizerRule for ValuesNestedFields {
    fn name(&self) -> &str {
        VALUES_NESTED_FIELDS_RULE
    }

    fn apply_order(&self) -> Option<datafusion::optimizer::ApplyOrder> {
        Some(datafusion::optimizer::ApplyOrder::TopDown)
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> DFResult<Transformed<LogicalPlan>> {
        if let LogicalPlan::Dml(dml) = &plan {
            if matches!(dml.op, WriteOp::Insert(_)) {
                check_required_values(dml.input.as_ref())?;
            }
        }
        let LogicalPlan::Values(Values { schema, mut values }) = plan else {
            return Ok(Transformed::no(plan));
        };
        let mut changed = false;
        for row in &mut values {
            for (value, field) in row.iter_mut().zip(schema.fields().iter()) {
                // folded constants keep the alias of the expression they replaced
                let mut inner = value;
                while let Expr::Alias(alias) = inner {
                    inner = alias.expr.as_mut();
                }
                let Expr::Literal(scalar, metadata) = inner else {
                    continue;
                };
                if let Some(relabelled) = relabel_scalar(scalar, field.data_type())? {
                    *inner = Expr::Literal(relabelled, metadata.clone());
                    changed = true;
                }
            }
        }
        let plan = LogicalPlan::Values(Values { schema, values });
        Ok(if changed {
            Transformed::yes(plan)
        } else {
            Transformed::no(plan)
        })
    }
}

/// `value` without the aliases folded constants keep.
fn unaliased(mut value: &Expr) -> &Expr {
    while let Expr::Alias(alias) = value {
        value = alias.expr.as_ref();
    }
    value
}

/// For `INSERT … VALUES`: a `NULL` in a `VALUES` column that the table requires. DataFusion
/// gives such a column of the `Values` node the table column's nullability and then
/// refuses the batch naming the node's column (`column1`); this names the table's column,
/// as the writer does for nulls from a query.
///
/// Errors: an icefloe [`crate::ErrorKind::InvalidArgument`] (as
/// [`DataFusionError::External`]) "column 'id' is required (NOT NULL) but a row of VALUES
/// holds NULL for it".
fn check_required_values(input: &LogicalPlan) -> DFResult<()> {
    // `Dml ← Projection (columnN AS name, …) ← Values`, or `Dml ← Values`
    let (names, values): (Vec<(String, String)>, &Values) = match input {
        LogicalPlan::Projection(p) => {
            let LogicalPlan::Values(values) = p.input.as_ref() else {
                return Ok(());
            };
            let names = p
                .expr
                .iter()
                .filter_map(|e| match e {
                    Expr::Alias(a) => match a.expr.as_ref() {
                        Expr::Column(c) => Some((c.name.clone(), a.name.clone())),
                        _ => None,
                    },
                    Expr::Column(c) => Some((c.name.clone(), c.name.clone())),
                    _ => None,
                })
                .collect();
            (names, values)
        }
        LogicalPlan::Values(values) => {
            let names = values
                .schema
                .fields()
                .iter()
                .map(|f| (f.name().clone(), f.name().clone()))
                .collect();
            (names, values)
        }
        _ => return Ok(()),
    };
    for (index, field) in values.schema.fields().iter().enumerate() {
        if field.is_nullable() {
            continue;
        }
        let holds_null = values.values.iter().any(|row| {
            row.get(index)
                .is_some_and(|v| matches!(unaliased(v), Expr::Literal(s, _) if s.is_null()))
        });
        if !holds_null {
            continue;
        }
        let column = names
            .iter()
            .find(|(from, _)| from == field.name())
            .map_or(field.name().as_str(), |(_, to)| to.as_str());
        return Err(DataFusionError::External(Box::new(
            crate::error::Error::invalid_argument(format!(
                "column '{column}' is required (NOT NULL) but a row of VALUES holds NULL for it"
            )),
        )));
    }
    Ok(())
}

/// Add [`ValuesNestedFields`] to `ctx`'s optimizer, once (a second call does nothing).
/// A session that runs `INSERT INTO … VALUES` with nested values into Iceberg tables
/// through `ctx.sql` needs it (see the module docs). Also adds the analyzer rules every
/// write through `ctx.sql` needs: the check of struct fields
/// ([`StructFieldsCheck`](super::struct_fields::StructFieldsCheck)) and the flooring of
/// nanoseconds narrowed to a table's microseconds
/// ([`TimeNarrowingFloor`](super::time_narrowing::TimeNarrowingFloor)), and the rewrite
/// of scalar subqueries in `VALUES` rows
/// ([`ValuesScalarSubqueries`](super::values_subqueries::ValuesScalarSubqueries)), and
/// the check naming the column of an `INSERT` literal its type cannot hold
/// ([`InsertLiteralCasts`](super::insert_casts::InsertLiteralCasts)).
pub fn install_values_rule(ctx: &SessionContext) {
    let present = ctx
        .state()
        .optimizers()
        .iter()
        .any(|r| r.name() == VALUES_NESTED_FIELDS_RULE);
    if !present {
        ctx.add_optimizer_rule(Arc::new(ValuesNestedFields));
    }
    // every session that inserts through `ctx.sql` needs the check of struct fields too,
    // and narrowed timestamps floored
    super::struct_fields::install_struct_fields_rule(ctx);
    super::time_narrowing::install_time_narrowing_rule(ctx);
    // and scalar subqueries in `VALUES` rows run
    super::values_subqueries::install_values_subqueries_rule(ctx);
    // and a literal its column cannot hold named by table and column
    super::insert_casts::install_insert_casts_rule(ctx);
    // and a computed value its column cannot hold named so too (after the rules that
    // read the casts it replaces)
    super::insert_column_casts::install_insert_column_casts_rule(ctx);
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use datafusion::arrow::array::{Int32Array, StructArray};
    use datafusion::arrow::datatypes::Field;

    use super::*;
    use crate::spec::arrow::PARQUET_FIELD_ID_META_KEY;

    fn field(name: &str, id: i32) -> Field {
        Field::new(name, DataType::Int32, true).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    }

    #[test]
    fn relabels_without_copying_values() {
        let file_type = DataType::Struct(vec![field("a", 7)].into());
        let table_field = Field::new("st", DataType::Struct(vec![field("alpha", 7)].into()), true);
        assert!(same_but_names(&file_type, table_field.data_type()));
        assert!(!same_but_names(&DataType::Int64, &DataType::Int32));
        let values = StructArray::from(vec![(
            Arc::new(field("a", 7)),
            Arc::new(Int32Array::from(vec![1, 2])) as _,
        )]);
        let data = relabel_data(values.to_data(), table_field.data_type()).unwrap();
        assert_eq!(data.data_type(), table_field.data_type());
        assert_ne!(&file_type, table_field.data_type());
        let array = make_array(data);
        let st = array.as_any().downcast_ref::<StructArray>().unwrap();
        assert_eq!(st.column_by_name("alpha").map(|c| c.len()), Some(2));
    }
}
