//! The rows order a writer sorts by for an Iceberg sort order (spec "Sorting", "Sort
//! Orders"): one DataFusion sort requirement per term, over the written rows' Arrow schema.
//!
//! A term's source is a primitive field of the current schema: a top-level column, or a
//! field of a struct at any depth (Java's `SortOrder` takes nested struct fields, Spark
//! sorts by them), reached through DataFusion's `get_field` from its top-level column. A
//! field inside a list or a map cannot be a source (Java's `SortOrder.Builder` refuses it
//! when the order is built; `ALTER TABLE … WRITE ORDERED BY` cannot name one). Identity
//! terms sort by the value, other transforms by `icefloe_partition_transform` of it,
//! `void` terms not at all.

use std::sync::Arc;

use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::Schema as ArrowSchema;
use datafusion::common::config::ConfigOptions;
use datafusion::common::ScalarValue;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::{
    LexRequirement, PhysicalExpr, PhysicalSortRequirement, ScalarFunctionExpr,
};

use super::transform_expr::partition_transform;
use crate::error::{Error, Result};
use crate::spec::sort_order::{NullOrder, SortDirection, SortOrder};
use crate::spec::{NestedField, Schema, Transform, Type};

/// The fields from a top-level column of `schema` down to field `id`, through structs
/// only; `None` when no such path exists (no field `id`, or one inside a list or map).
pub(crate) fn struct_path(schema: &Schema, id: i32) -> Option<Vec<&NestedField>> {
    fn find(fields: &[NestedField], id: i32) -> Option<Vec<&NestedField>> {
        fields.iter().find_map(|f| {
            if f.id == id {
                return Some(vec![f]);
            }
            let Type::Struct(s) = f.field_type.as_ref() else {
                return None;
            };
            find(&s.fields, id).map(|mut inner| {
                inner.insert(0, f);
                inner
            })
        })
    }
    find(schema.columns(), id)
}

/// The value of field `path` (top-level column first) over `arrow` (the written rows'
/// schema): the column, then `get_field` for each struct level.
///
/// Errors: a top-level column missing from `arrow`, or DataFusion's, typing `get_field`.
fn field_value(path: &[&NestedField], arrow: &ArrowSchema) -> Result<Arc<dyn PhysicalExpr>> {
    let Some((top, inner)) = path.split_first() else {
        return Err(Error::invalid_argument("an empty field path"));
    };
    let index = arrow.index_of(&top.name).map_err(|_| {
        Error::invalid_argument(format!("the written rows have no column '{}'", top.name))
    })?;
    let mut value: Arc<dyn PhysicalExpr> = Arc::new(Column::new(&top.name, index));
    for field in inner {
        let name: Arc<dyn PhysicalExpr> =
            Arc::new(Literal::new(ScalarValue::Utf8(Some(field.name.clone()))));
        value = Arc::new(ScalarFunctionExpr::try_new(
            datafusion::functions::core::get_field(),
            vec![value, name],
            arrow,
            Arc::new(ConfigOptions::default()),
        )?);
    }
    Ok(value)
}

/// The sort requirement of `order` over `arrow`, the rows a writer writes, whose columns
/// are those of `schema` (the table's current schema); `None` for an order with no term
/// to sort by (unsorted, or `void` terms only).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming the field): a source that is not
/// a primitive field reached through structs (missing from the schema, inside a list or
/// map), or a transform that does not apply to it. A writer never drops an order it
/// cannot apply: it fails instead.
pub(crate) fn sort_requirement_of(
    schema: &Schema,
    order: &SortOrder,
    arrow: &ArrowSchema,
) -> Result<Option<LexRequirement>> {
    let mut reqs = vec![];
    for f in &order.fields {
        if f.transform == Transform::Void {
            continue;
        }
        let name = || {
            crate::datafusion::sql::column_name(schema, f.source_id)
                .unwrap_or_else(|| format!("field id {}", f.source_id))
        };
        let refusal = |why: String| {
            Error::invalid_argument(format!(
                "cannot sort by {}({}) of sort order {}: {why}",
                f.transform,
                name(),
                order.order_id
            ))
        };
        let Some(path) = struct_path(schema, f.source_id) else {
            return Err(refusal(
                "no field of the current schema reached through structs only (a field \
                 inside a list or map cannot be sorted by)"
                    .into(),
            ));
        };
        let Some(field) = path.last() else {
            return Err(refusal("no such field".into()));
        };
        let Some(primitive) = field.field_type.as_primitive() else {
            return Err(refusal(format!("it is of type {}", field.field_type)));
        };
        let value = field_value(&path, arrow).map_err(|e| refusal(e.to_string()))?;
        let expr = match &f.transform {
            Transform::Identity => value,
            t => partition_transform(t.clone(), *primitive, value, arrow)
                .map_err(|e| refusal(e.to_string()))?,
        };
        reqs.push(PhysicalSortRequirement::new(
            expr,
            Some(SortOptions {
                descending: f.direction == SortDirection::Desc,
                nulls_first: f.null_order == NullOrder::First,
            }),
        ));
    }
    Ok(LexRequirement::new(reqs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PrimitiveType;

    /// A sort order whose transform icefloe does not know (`zorder_magic` in the
    /// metadata) is refused naming that transform: the message said `unknown(id)` and
    /// "transform unknown cannot apply to type long".
    #[test]
    fn an_unknown_transform_is_refused_by_its_name() {
        let schema = Schema::new(
            0,
            vec![NestedField::optional(
                1,
                "id",
                Type::Primitive(PrimitiveType::Long),
            )],
        );
        let arrow = crate::spec::arrow::schema_to_arrow(&schema).expect("arrow schema");
        let order = SortOrder {
            order_id: 1,
            fields: vec![crate::spec::sort_order::SortField {
                transform: "zorder_magic".parse().expect("transform"),
                source_id: 1,
                direction: SortDirection::Asc,
                null_order: NullOrder::First,
            }],
        };
        let err = sort_requirement_of(&schema, &order, &arrow).expect_err("refused");
        let message = err.to_string();
        assert!(
            message.contains("cannot sort by zorder_magic(id) of sort order 1")
                && message.contains("icefloe does not know the transform 'zorder_magic'"),
            "{message}"
        );
    }
}
