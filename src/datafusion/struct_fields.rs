//! The fields of struct values written into a table's struct columns: each field of the
//! table's struct needs a field of the value of the same name, and the value has no other
//! field.
//!
//! DataFusion 55's casts to the table's column type (`INSERT`, `UPDATE … SET`) and
//! Arrow's `cast` (the values of `MERGE`) turn one struct into another by field name,
//! dropping the value's fields the target lacks and filling the target's fields the value
//! lacks with nulls. Written into a table that silently loses data
//! (`named_struct('a', 2, 'c', 5)` into `STRUCT<a INT, b STRING>` wrote `{a: 2, b: NULL}`),
//! so a write refuses such a value instead, as Spark's `TableOutputResolver` does, with its
//! words: "cannot write extra fields to struct 'st': 'c'", "cannot find data for output
//! column 'st.b'". Structs inside lists and maps, and structs of structs, are checked at
//! any depth (paths as Iceberg names them: `l.element.b`, `m.value.b`).
//!
//! Decision: fields match **by name** (in any order), ignoring case where that is
//! unambiguous (Spark's case-insensitive resolution), and by position only for a struct
//! whose fields have DataFusion's positional names (`struct(4, 'four')`: `c0`, `c1`) and
//! are as many as the table's. Spark's by-position `INSERT` matches nested struct fields
//! by position and ignores their names (`TableOutputResolver` with `byName = false`);
//! icefloe keeps names, because DataFusion's struct cast, which does the conversion,
//! matches by name, and a value whose named fields differ from the table's is more often
//! a mistake than a reordering: it is refused (naming each field it cannot place)
//! rather than written positionally. Before the check, a value's fields are renamed to
//! the table's names they match (module `struct_rename`), and the fields it lacks that
//! have a v3 `write-default` are filled with it (module `struct_defaults`).
//!
//! [`StructFieldsCheck`], an analyzer rule (it must see the casts DataFusion's planner
//! adds before constant folding removes them), checks `INSERT` and `UPDATE`; `MERGE`'s
//! planner calls [`check_assignment`]. Installed with the `VALUES`
//! rule ([`install_values_rule`](super::install_values_rule)).

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Fields};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, DataFusionError, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{
    Cast, Expr, ExprSchemable, LogicalPlan, Projection, TryCast, Values, WriteOp,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

use super::struct_defaults::fill_defaults;
use super::struct_rename::{rename_fields, renamed_type};
use crate::error::Error;

/// The rule's name (as listed by the session's analyzer).
pub const STRUCT_FIELDS_RULE: &str = "icefloe_struct_fields";

/// What is wrong with writing a value of type `given` into a column (or nested field) at
/// `path` of type `expected`: one message per struct that has fields the target lacks or
/// lacks fields the target has, at any depth; empty when nothing is.
pub(crate) fn struct_field_mismatches(
    path: &str,
    given: &DataType,
    expected: &DataType,
) -> Vec<String> {
    let mut problems = Vec::new();
    collect(path, given, expected, &mut problems);
    problems
}

fn collect(path: &str, given: &DataType, expected: &DataType, problems: &mut Vec<String>) {
    match (given, expected) {
        (DataType::Struct(given), DataType::Struct(expected)) => {
            collect_struct(path, given, expected, problems)
        }
        (
            DataType::List(g) | DataType::LargeList(g) | DataType::FixedSizeList(g, _),
            DataType::List(e) | DataType::LargeList(e) | DataType::FixedSizeList(e, _),
        ) => collect(
            &format!("{path}.element"),
            g.data_type(),
            e.data_type(),
            problems,
        ),
        (DataType::Map(g, _), DataType::Map(e, _)) => {
            if let (DataType::Struct(g), DataType::Struct(e)) = (g.data_type(), e.data_type()) {
                // entries are (key, value) by position; their names vary by writer
                for (i, name) in ["key", "value"].into_iter().enumerate() {
                    if let (Some(g), Some(e)) = (g.get(i), e.get(i)) {
                        collect(
                            &format!("{path}.{name}"),
                            g.data_type(),
                            e.data_type(),
                            problems,
                        );
                    }
                }
            }
        }
        _ => {}
    }
}

fn collect_struct(path: &str, given: &Fields, expected: &Fields, problems: &mut Vec<String>) {
    let extra: Vec<String> = given
        .iter()
        .filter(|g| expected.find(g.name()).is_none())
        .map(|g| format!("'{}'", g.name()))
        .collect();
    if !extra.is_empty() {
        problems.push(format!(
            "cannot write extra fields to struct '{path}': {}",
            extra.join(", ")
        ));
    }
    for e in expected.iter() {
        let field_path = format!("{path}.{}", e.name());
        match given.find(e.name()) {
            None => problems.push(format!("cannot find data for output column '{field_path}'")),
            Some((_, g)) => collect(&field_path, g.data_type(), e.data_type(), problems),
        }
    }
}

/// The error of a write of `statement` (e.g. "INSERT into 'ns.t'") whose values have
/// the struct fields `problems` name ([`struct_field_mismatches`]).
pub(crate) fn struct_fields_error(statement: &str, problems: &[String]) -> Error {
    Error::invalid_argument(format!(
        "{statement}: {} (struct fields are matched by name)",
        problems.join("; ")
    ))
}

/// For `MERGE`'s `UPDATE SET` / `INSERT VALUES` (planned by icefloe, not through a
/// `Dml` node): `expr` (over `schema`; under the cast to the column's type DataFusion may
/// have put on it) with its struct fields renamed to those of the column's type
/// `expected` they match ([`renamed_type`]), the `write-default`s of the struct fields
/// it lacks filled in from `defaults` (the column's defaults literal, module
/// `struct_defaults`), checked against it.
///
/// Errors: [`struct_fields_error`] of `statement`; DataFusion's, when `expr` has no type.
pub(crate) fn check_assignment(
    statement: &str,
    (column, expected, defaults): (&str, &DataType, Option<&ScalarValue>),
    expr: Expr,
    schema: &DFSchema,
) -> crate::error::Result<Expr> {
    let expr = match &expr {
        Expr::Cast(_) | Expr::TryCast(_) | Expr::Alias(_) => renamed_cast(expr, schema)?,
        _ => match renamed_type(&expr.get_type(schema)?, expected) {
            Some(renamed) => rename_fields(expr, &renamed)?,
            None => expr,
        },
    };
    let expr = match defaults {
        Some(defaults) => filled_under_cast(expr, schema, defaults)?,
        None => expr,
    };
    let given = uncast(&expr).get_type(schema)?;
    let problems = struct_field_mismatches(column, &given, expected);
    if problems.is_empty() {
        Ok(expr)
    } else {
        Err(struct_fields_error(statement, &problems))
    }
}

/// `expr` (a written value, over `schema`) with the value under its cast (and aliases)
/// renamed to the cast's struct field names it matches ([`renamed_type`]); other
/// expressions as they are.
fn renamed_cast(expr: Expr, schema: &DFSchema) -> DFResult<Expr> {
    match expr {
        Expr::Alias(mut alias) => {
            let inner = renamed_cast(*alias.expr, schema)?;
            alias.expr = Box::new(inner);
            Ok(Expr::Alias(alias))
        }
        Expr::Cast(Cast { expr, field }) => {
            let expr = renamed_under(*expr, field.data_type(), schema)?;
            Ok(Expr::Cast(Cast {
                expr: Box::new(expr),
                field,
            }))
        }
        Expr::TryCast(TryCast { expr, field }) => {
            let expr = renamed_under(*expr, field.data_type(), schema)?;
            Ok(Expr::TryCast(TryCast {
                expr: Box::new(expr),
                field,
            }))
        }
        other => Ok(other),
    }
}

/// `expr` (a written value, over `schema`) with the value under its cast (and aliases),
/// or itself when it has no cast, given the `write-default`s of `defaults`
/// ([`fill_defaults`]).
fn filled_under_cast(expr: Expr, schema: &DFSchema, defaults: &ScalarValue) -> DFResult<Expr> {
    match expr {
        Expr::Alias(mut alias) => {
            let inner = filled_under_cast(*alias.expr, schema, defaults)?;
            alias.expr = Box::new(inner);
            Ok(Expr::Alias(alias))
        }
        Expr::Cast(Cast { expr, field }) => {
            let given = expr.get_type(schema)?;
            Ok(Expr::Cast(Cast {
                expr: Box::new(fill_defaults(*expr, &given, defaults)),
                field,
            }))
        }
        Expr::TryCast(TryCast { expr, field }) => {
            let given = expr.get_type(schema)?;
            Ok(Expr::TryCast(TryCast {
                expr: Box::new(fill_defaults(*expr, &given, defaults)),
                field,
            }))
        }
        other => {
            let given = other.get_type(schema)?;
            Ok(fill_defaults(other, &given, defaults))
        }
    }
}

/// `value` renamed for a cast to `to` ([`renamed_type`]), or as it is.
fn renamed_under(value: Expr, to: &DataType, schema: &DFSchema) -> DFResult<Expr> {
    match renamed_type(&value.get_type(schema)?, to) {
        Some(renamed) => rename_fields(value, &renamed),
        None => Ok(value),
    }
}

/// The rows an `INSERT` or `UPDATE` writes (`Dml ← Projection`, `Dml ← Projection ←
/// Values`, `Dml ← Values`) with their struct values renamed ([`renamed_cast`]); the
/// types of the rows do not change (the casts stay).
fn renamed_written(input: &LogicalPlan) -> DFResult<Option<LogicalPlan>> {
    fn values(v: &Values) -> DFResult<Values> {
        let empty = DFSchema::empty();
        let rows = v
            .values
            .iter()
            .map(|row| {
                row.iter()
                    .map(|e| renamed_cast(e.clone(), &empty))
                    .collect::<DFResult<Vec<_>>>()
            })
            .collect::<DFResult<Vec<_>>>()?;
        Ok(Values {
            schema: Arc::clone(&v.schema),
            values: rows,
        })
    }
    match input {
        LogicalPlan::Projection(p) => {
            let exprs = p
                .expr
                .iter()
                .map(|e| renamed_cast(e.clone(), p.input.schema()))
                .collect::<DFResult<Vec<_>>>()?;
            let inner = match p.input.as_ref() {
                LogicalPlan::Values(v) => Arc::new(LogicalPlan::Values(values(v)?)),
                _ => Arc::clone(&p.input),
            };
            Ok(Some(LogicalPlan::Projection(
                Projection::try_new_with_schema(exprs, inner, Arc::clone(&p.schema))?,
            )))
        }
        LogicalPlan::Values(v) => Ok(Some(LogicalPlan::Values(values(v)?))),
        _ => Ok(None),
    }
}

/// `expr` without its aliases and the cast on top of it, if any.
fn uncast(expr: &Expr) -> &Expr {
    let mut inner = expr;
    while let Expr::Alias(alias) = inner {
        inner = alias.expr.as_ref();
    }
    match inner {
        Expr::Cast(Cast { expr, .. }) | Expr::TryCast(TryCast { expr, .. }) => expr.as_ref(),
        other => other,
    }
}

/// An analyzer rule: an `INSERT` or `UPDATE` that gives a struct column (or a struct
/// nested in one) other fields than the table's is refused, after renaming the fields
/// that match the table's but for case or by position (see the module docs).
#[derive(Debug, Default)]
pub struct StructFieldsCheck;

/// The casts to the table's column types that DataFusion's `INSERT` and `UPDATE`
/// planners put on top of the rows to write (`Dml ← Projection`, `Dml ← Projection ←
/// Values`, `Dml ← Values`), each with the table column it writes.
fn check_written(statement: &str, input: &LogicalPlan) -> DFResult<()> {
    let mut problems = Vec::new();
    let mut check = |column: &str, expr: &Expr, schema: &DFSchema| -> DFResult<()> {
        let mut inner = expr;
        while let Expr::Alias(alias) = inner {
            inner = alias.expr.as_ref();
        }
        let (Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field })) = inner
        else {
            return Ok(());
        };
        let given = expr.get_type(schema)?;
        problems.extend(struct_field_mismatches(column, &given, field.data_type()));
        Ok(())
    };
    let (values, names): (_, Vec<(String, String)>) = match input {
        LogicalPlan::Projection(p) => {
            for (expr, field) in p.expr.iter().zip(p.schema.fields().iter()) {
                check(field.name(), expr, p.input.schema())?;
            }
            let names = p
                .expr
                .iter()
                .zip(p.schema.fields().iter())
                .filter_map(|(e, f)| match e {
                    Expr::Alias(a) => match a.expr.as_ref() {
                        Expr::Column(c) => Some((c.name.clone(), f.name().clone())),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            (p.input.as_ref(), names)
        }
        other => (other, vec![]),
    };
    if let LogicalPlan::Values(values) = values {
        let empty = DFSchema::empty();
        for row in &values.values {
            for (expr, field) in row.iter().zip(values.schema.fields().iter()) {
                let column = names
                    .iter()
                    .find(|(from, _)| from == field.name())
                    .map_or(field.name().as_str(), |(_, to)| to.as_str());
                check(column, expr, &empty)?;
            }
        }
    }
    problems.dedup();
    if problems.is_empty() {
        return Ok(());
    }
    Err(DataFusionError::External(Box::new(struct_fields_error(
        statement, &problems,
    ))))
}

impl AnalyzerRule for StructFieldsCheck {
    fn name(&self) -> &str {
        STRUCT_FIELDS_RULE
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        plan.transform_down(|node| {
            let LogicalPlan::Dml(mut dml) = node else {
                return Ok(Transformed::no(node));
            };
            let statement = match dml.op {
                WriteOp::Insert(_) => format!("INSERT into '{}'", dml.table_name),
                WriteOp::Update => format!("UPDATE of '{}'", dml.table_name),
                _ => return Ok(Transformed::no(LogicalPlan::Dml(dml))),
            };
            let renamed = renamed_written(dml.input.as_ref())?;
            let mut changed = renamed.is_some();
            if let Some(input) = renamed {
                dml.input = Arc::new(input);
            }
            // the write-defaults of struct fields the values leave out (module
            // `struct_defaults`), before the check refuses what is still missing
            if let Some(input) = super::struct_defaults::filled_written(&dml)? {
                dml.input = Arc::new(input);
                changed = true;
            }
            check_written(&statement, dml.input.as_ref())?;
            Ok(match changed {
                true => Transformed::yes(LogicalPlan::Dml(dml)),
                false => Transformed::no(LogicalPlan::Dml(dml)),
            })
        })
        .map(|t| t.data)
    }
}

/// Add [`StructFieldsCheck`] to `ctx`'s analyzer, once (a second call does nothing).
pub(crate) fn install_struct_fields_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(StructFieldsCheck));
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::Field;

    use super::*;

    fn st(fields: &[&str]) -> DataType {
        DataType::Struct(
            fields
                .iter()
                .map(|n| Field::new(*n, DataType::Int32, true))
                .collect(),
        )
    }

    #[test]
    fn mismatches_at_any_depth() {
        let table = st(&["a", "b"]);
        assert!(struct_field_mismatches("st", &st(&["b", "a"]), &table).is_empty());
        assert_eq!(
            struct_field_mismatches("st", &st(&["a", "b", "c"]), &table),
            ["cannot write extra fields to struct 'st': 'c'"]
        );
        assert_eq!(
            struct_field_mismatches("st", &st(&["x", "y"]), &table),
            [
                "cannot write extra fields to struct 'st': 'x', 'y'",
                "cannot find data for output column 'st.a'",
                "cannot find data for output column 'st.b'"
            ]
        );
        let list = |t: DataType| DataType::new_list(t, true);
        assert_eq!(
            struct_field_mismatches("l", &list(st(&["a"])), &list(table.clone())),
            ["cannot find data for output column 'l.element.b'"]
        );
        let map = |t: DataType| {
            DataType::Map(
                Arc::new(Field::new(
                    "entries",
                    DataType::Struct(
                        vec![
                            Field::new("key", DataType::Utf8, false),
                            Field::new("value", t, true),
                        ]
                        .into(),
                    ),
                    false,
                )),
                false,
            )
        };
        assert_eq!(
            struct_field_mismatches("m", &map(st(&["a", "b", "z"])), &map(table)),
            ["cannot write extra fields to struct 'm.value': 'z'"]
        );
    }
}
