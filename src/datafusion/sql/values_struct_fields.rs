//! `INSERT … VALUES` with a struct value whose fields differ from the table's struct
//! (`named_struct('a', 1)` into `STRUCT<a INT, b STRING>`, an extra field, at any depth).
//!
//! DataFusion 55 plans the `VALUES` of an `INSERT` with the table's column types and
//! refuses a value Arrow cannot cast to its column's type while it plans ("Types don't
//! match and no valid cast exists, received data of type Struct(…) for field of type
//! Struct(…)"), before the analyzer rule that names such fields
//! ([`StructFieldsCheck`](crate::datafusion::struct_fields)) sees the statement; an
//! `INSERT … SELECT` of the same value gets that rule's message. When planning an
//! `INSERT` fails, [`values_struct_fields_error`] checks its `VALUES` rows the way the
//! rule checks the casts, and gives the same message naming the column and the fields:
//! "INSERT into 'ns.t': cannot find data for output column 'st.b' (struct fields are
//! matched by name)".

use datafusion::common::{DFSchema, TableReference};
use datafusion::logical_expr::ExprSchemable;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{Expr, SetExpr, Statement, TableObject};

use super::uuid_values::object_name;
use crate::datafusion::struct_fields::{struct_field_mismatches, struct_fields_error};
use crate::error::Error;

/// Whether values of `dt` hold a struct at any depth.
fn holds_struct(dt: &datafusion::arrow::datatypes::DataType) -> bool {
    use datafusion::arrow::datatypes::DataType as D;
    match dt {
        D::Struct(_) => true,
        D::List(f) | D::LargeList(f) | D::FixedSizeList(f, _) | D::Map(f, _) => {
            holds_struct(f.data_type())
        }
        _ => false,
    }
}

/// The rows of the `VALUES` in `body` (through `UNION`s and parentheses).
fn values_rows<'a>(body: &'a SetExpr, rows: &mut Vec<&'a [Expr]>) {
    match body {
        SetExpr::Values(values) => rows.extend(values.rows.iter().map(|r| r.content.as_slice())),
        SetExpr::SetOperation { left, right, .. } => {
            values_rows(left, rows);
            values_rows(right, rows);
        }
        SetExpr::Query(q) => values_rows(&q.body, rows),
        _ => {}
    }
}

/// For an `INSERT` (the statement text `statement`) whose planning failed: the error
/// naming the struct fields its `VALUES` rows give a struct column (or a struct inside
/// one) that the column's type lacks or misses (see the module docs); `None` when the
/// statement is no such `INSERT`, its target is not found, or every struct value has the
/// column's fields (the planner's error stands).
pub(super) async fn values_struct_fields_error(
    ctx: &SessionContext,
    statement: &str,
) -> Option<Error> {
    let Some(Statement::Insert(insert)) = super::parse_statement(ctx, statement) else {
        return None;
    };
    let TableObject::TableName(table) = &insert.table else {
        return None;
    };
    let normalize = ctx
        .state()
        .config_options()
        .sql_parser
        .enable_ident_normalization;
    let parts = object_name(table, normalize);
    let reference = match parts.as_slice() {
        [t] => TableReference::bare(t.as_str()),
        [s, t] => TableReference::partial(s.as_str(), t.as_str()),
        [c, s, t] => TableReference::full(c.as_str(), s.as_str(), t.as_str()),
        _ => return None,
    };
    let schema = ctx.table_provider(reference).await.ok()?.schema();
    // the columns the rows give, in order: the column list, else the table's columns
    let columns: Vec<_> = if insert.columns.is_empty() {
        schema.fields().iter().cloned().collect()
    } else {
        insert
            .columns
            .iter()
            .map(|c| {
                let name = object_name(c, normalize).pop()?;
                schema
                    .field_with_name(&name)
                    .ok()
                    .map(|f| std::sync::Arc::new(f.clone()))
            })
            .collect::<Option<_>>()?
    };
    let mut rows = Vec::new();
    values_rows(&insert.source.as_ref()?.body, &mut rows);
    let state = ctx.state();
    let empty = DFSchema::empty();
    let mut problems = Vec::new();
    for row in rows {
        for (value, column) in row.iter().zip(&columns) {
            if !holds_struct(column.data_type()) {
                continue;
            }
            let Ok(expr) = state.create_logical_expr(&value.to_string(), &empty) else {
                continue;
            };
            let Ok(given) = expr.get_type(&empty) else {
                continue;
            };
            for p in struct_field_mismatches(column.name(), &given, column.data_type()) {
                if !problems.contains(&p) {
                    problems.push(p);
                }
            }
        }
    }
    (!problems.is_empty())
        .then(|| struct_fields_error(&format!("INSERT into '{}'", parts.join(".")), &problems))
}
