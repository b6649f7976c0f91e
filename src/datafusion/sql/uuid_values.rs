//! uuid values written as text: `INSERT INTO t VALUES (1, '550e8400-e29b-41d4-a716-446655440000')`,
//! `UPDATE t SET u = '…'`, `MERGE … THEN UPDATE SET u = '…'` / `THEN INSERT … VALUES (…, '…')`.
//!
//! An Iceberg `uuid` column is a `FixedSizeBinary(16)` value tagged `arrow.uuid` in
//! DataFusion (see `crate::spec::arrow`), and DataFusion 55 has no cast from a string to a
//! fixed-size binary: its SQL planner refuses `UPDATE … SET u = '…'` ("Cannot
//! automatically convert Utf8 to FixedSizeBinary(16)") before any analyzer rule runs, and
//! an `INSERT … VALUES` of a string fails when it runs. Spark shows a uuid column as a
//! string and DuckDB casts a string to a `UUID`, so their users write the text form.
//!
//! [`uuid_text_values`] finds, in such a statement whose target table has a uuid column,
//! each string literal that is written to that column directly: a value of a `VALUES`
//! row or an item of a `SELECT` list of the inserted query (by position, with the
//! statement's column list or the table's columns in order, those of Spark's
//! `PARTITION (p = '…')` clause aside; through `UNION`s), a static value of that clause, or the
//! value of a `SET u = '…'` assignment. It replaces the literal in the statement text by
//! the UUID's 16 bytes as a hexadecimal literal (`X'550e8400…'`), which DataFusion writes
//! into the column as it is. Only such literals change: a string elsewhere in the
//! statement, or written to another column, stays text. A string value computed by an
//! expression still meets DataFusion's error.

use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    Assignment, AssignmentTarget, BinaryOperator, Expr, Ident, MergeAction, MergeInsertKind,
    ObjectName, ObjectNamePart, Query, SelectItem, SetExpr, Statement, TableFactor, TableObject,
    Value,
};
use datafusion::sql::sqlparser::tokenizer::Location;

use super::tokens::Locator;
use crate::error::{Error, Result};
use crate::spec::arrow::is_uuid_field;

/// The uuid columns of the table a statement writes, by name (as DataFusion names them).
struct Target {
    /// The table's columns in order: (name, is a uuid).
    columns: Vec<(String, bool)>,
}

impl Target {
    fn is_uuid(&self, name: &str) -> bool {
        self.columns.iter().any(|(n, uuid)| *uuid && n == name)
    }

    /// The column `name` stands for: the one of that name, else the only one equal to
    /// it ignoring ASCII case.
    fn resolve(&self, name: &str) -> Option<String> {
        if self.columns.iter().any(|(n, _)| n == name) {
            return Some(name.to_string());
        }
        let mut folded = self
            .columns
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name));
        match (folded.next(), folded.next()) {
            (Some((n, _)), None) => Some(n.clone()),
            _ => None,
        }
    }

    /// Whether each column of the column list `names` (the table's columns when empty)
    /// is a uuid, by position.
    fn positions(&self, names: &[String]) -> Vec<Option<String>> {
        if names.is_empty() {
            return self
                .columns
                .iter()
                .map(|(n, uuid)| uuid.then(|| n.clone()))
                .collect();
        }
        names
            .iter()
            .map(|n| self.is_uuid(n).then(|| n.clone()))
            .collect()
    }
}

/// A string literal to replace: where it starts and ends (sqlparser locations) and the
/// uuid column it is written to.
struct Found {
    start: Location,
    end: Location,
    text: String,
    column: String,
}

/// `statement` (an `INSERT`, `UPDATE` or `MERGE`, parsed as `parsed`) with each string literal written
/// directly to a uuid column of its target table replaced by the UUID's bytes as
/// `X'…'` (see the module docs); `None` when nothing changes (no such literal, a
/// statement icefloe does not parse: DataFusion then reports it).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): a string written to a uuid column
/// that is not a UUID (32 hexadecimal digits, as `8-4-4-4-12` or without dashes),
/// naming the string and the column.
pub(super) async fn uuid_text_values(
    ctx: &SessionContext,
    statement: &str,
    parsed: &Statement,
) -> Result<Option<String>> {
    if !statement.contains('\'') {
        return Ok(None);
    }
    let normalize = ctx
        .state()
        .config_options()
        .sql_parser
        .enable_ident_normalization;
    let name_of = |o: &ObjectName| object_name(o, normalize);
    let mut found = Vec::new();
    match parsed {
        Statement::Insert(insert) => {
            let TableObject::TableName(table) = &insert.table else {
                return Ok(None);
            };
            let Some(target) = target(ctx, &name_of(table)).await else {
                return Ok(None);
            };
            let mut columns: Vec<String> = insert
                .columns
                .iter()
                .filter_map(|c| name_of(c).pop())
                .collect();
            if columns.is_empty() {
                columns = insert
                    .after_columns
                    .iter()
                    .map(|i| ident_name(i, normalize))
                    .collect();
            }
            if let Some(clause) = &insert.partitioned {
                // Spark's `PARTITION (p = v, q)`: a static value is written to its
                // column, the query gives the table's other columns
                let statics = partition_literals(clause, &target, normalize, &mut found);
                if columns.is_empty() {
                    columns = target
                        .columns
                        .iter()
                        .map(|(n, _)| n.clone())
                        .filter(|n| !statics.contains(n))
                        .collect();
                }
            }
            if let Some(source) = &insert.source {
                query_literals(source, &target.positions(&columns), &mut found);
            }
        }
        Statement::Update(update) => {
            let TableFactor::Table { name, .. } = &update.table.relation else {
                return Ok(None);
            };
            let Some(target) = target(ctx, &name_of(name)).await else {
                return Ok(None);
            };
            assignment_literals(&update.assignments, &target, normalize, &mut found);
        }
        Statement::Merge(merge) => {
            let TableFactor::Table { name, .. } = &merge.table else {
                return Ok(None);
            };
            let Some(target) = target(ctx, &name_of(name)).await else {
                return Ok(None);
            };
            for clause in &merge.clauses {
                match &clause.action {
                    MergeAction::Update(update) => {
                        assignment_literals(&update.assignments, &target, normalize, &mut found)
                    }
                    MergeAction::Insert(insert) => {
                        if let MergeInsertKind::Values(values) = &insert.kind {
                            let columns: Vec<String> = insert
                                .columns
                                .iter()
                                .filter_map(|c| name_of(c).pop())
                                .collect();
                            let positions = target.positions(&columns);
                            for row in &values.rows {
                                row_literals(&row.content, &positions, &mut found);
                            }
                        }
                    }
                    MergeAction::Delete { .. } => {}
                }
            }
        }
        _ => return Ok(None),
    }
    if found.is_empty() {
        return Ok(None);
    }
    splice(statement, found).map(Some)
}

/// The parts of `name`, unquoted ones lowercased when DataFusion normalizes identifiers.
pub(super) fn object_name(name: &ObjectName, normalize: bool) -> Vec<String> {
    name.0
        .iter()
        .map(|part| match part {
            ObjectNamePart::Identifier(ident) if ident.quote_style.is_none() && normalize => {
                ident.value.to_lowercase()
            }
            ObjectNamePart::Identifier(ident) => ident.value.clone(),
            ObjectNamePart::Function(f) => f.to_string(),
        })
        .collect()
}

/// The columns of the table `parts` names, when it has a uuid column.
async fn target(ctx: &SessionContext, parts: &[String]) -> Option<Target> {
    let reference = match parts {
        [t] => TableReference::bare(t.as_str()),
        [s, t] => TableReference::partial(s.as_str(), t.as_str()),
        [c, s, t] => TableReference::full(c.as_str(), s.as_str(), t.as_str()),
        _ => return None,
    };
    let provider = ctx.table_provider(reference).await.ok()?;
    let schema = provider.schema();
    let columns: Vec<(String, bool)> = schema
        .fields()
        .iter()
        .map(|f| (f.name().clone(), is_uuid_field(f)))
        .collect();
    columns
        .iter()
        .any(|(_, uuid)| *uuid)
        .then_some(Target { columns })
}

/// The string literals of the static values of a `PARTITION (p = v, q)` clause given to
/// uuid columns; returns the static columns (as the table names them: the one column
/// of that name, ASCII case aside, as `insert_partition` resolves them).
fn partition_literals(
    clause: &[Expr],
    target: &Target,
    normalize: bool,
    found: &mut Vec<Found>,
) -> Vec<String> {
    let mut statics = Vec::new();
    for item in clause {
        let Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } = item
        else {
            continue;
        };
        let Expr::Identifier(ident) = left.as_ref() else {
            continue;
        };
        let wanted = ident_name(ident, normalize);
        let column = target.resolve(&wanted).unwrap_or(wanted);
        if target.is_uuid(&column) {
            literal(right, &column, found);
        }
        statics.push(column);
    }
    statics
}

/// `ident` as DataFusion names it: lowercased when unquoted and identifiers normalize.
fn ident_name(ident: &Ident, normalize: bool) -> String {
    match ident.quote_style.is_none() && normalize {
        true => ident.value.to_lowercase(),
        false => ident.value.clone(),
    }
}

/// The string literals of `query`'s rows (or `SELECT` lists) at uuid `positions`.
fn query_literals(query: &Query, positions: &[Option<String>], found: &mut Vec<Found>) {
    set_expr_literals(&query.body, positions, found);
}

fn set_expr_literals(body: &SetExpr, positions: &[Option<String>], found: &mut Vec<Found>) {
    match body {
        SetExpr::Values(values) => {
            for row in &values.rows {
                row_literals(&row.content, positions, found);
            }
        }
        SetExpr::Select(select) => {
            for (item, column) in select.projection.iter().zip(positions) {
                let expr = match item {
                    SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
                    // positions after a wildcard are not known here
                    _ => break,
                };
                if let Some(column) = column {
                    literal(expr, column, found);
                }
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            set_expr_literals(left, positions, found);
            set_expr_literals(right, positions, found);
        }
        SetExpr::Query(q) => query_literals(q, positions, found),
        _ => {}
    }
}

fn row_literals(row: &[Expr], positions: &[Option<String>], found: &mut Vec<Found>) {
    for (expr, column) in row.iter().zip(positions) {
        if let Some(column) = column {
            literal(expr, column, found);
        }
    }
}

fn assignment_literals(
    assignments: &[Assignment],
    target: &Target,
    normalize: bool,
    found: &mut Vec<Found>,
) {
    for a in assignments {
        let AssignmentTarget::ColumnName(name) = &a.target else {
            continue;
        };
        if let Some(column) = object_name(name, normalize).pop() {
            if target.is_uuid(&column) {
                literal(&a.value, &column, found);
            }
        }
    }
}

/// `expr` when it is a string literal (in parentheses or not) of any quoting the
/// tokenizer reads (`'…'`, `$$…$$`, `E'…'`, `N'…'`, `U&'…'`, a Spark double-quoted string):
/// a `$$…$$` UUID went unrewritten and failed with Arrow's cast error (tester Y66).
fn literal(expr: &Expr, column: &str, found: &mut Vec<Found>) {
    match expr {
        Expr::Value(v) => {
            let text = match &v.value {
                Value::SingleQuotedString(s)
                | Value::DoubleQuotedString(s)
                | Value::EscapedStringLiteral(s)
                | Value::NationalStringLiteral(s)
                | Value::UnicodeStringLiteral(s) => Some(s),
                Value::DollarQuotedString(d) => Some(&d.value),
                _ => None,
            };
            if let Some(s) = text {
                found.push(Found {
                    start: v.span.start,
                    end: v.span.end,
                    text: s.clone(),
                    column: column.to_string(),
                });
            }
        }
        Expr::Nested(inner) => literal(inner, column, found),
        _ => {}
    }
}

/// `statement` with each found literal replaced by its UUID's bytes as `X'…'`.
fn splice(statement: &str, mut found: Vec<Found>) -> Result<String> {
    found.sort_by_key(|f| (f.start.line, f.start.column));
    let mut locator = Locator::new(statement);
    let mut out = String::with_capacity(statement.len());
    let mut copied = 0;
    for f in found {
        let parsed = uuid::Uuid::parse_str(&f.text).map_err(|_| {
            Error::invalid_argument(format!(
                "'{}' is not a UUID (32 hex digits, as 8-4-4-4-12), written to uuid column '{}'",
                f.text, f.column
            ))
        })?;
        let (Some(start), Some(end)) = (locator.seek(f.start), locator.seek(f.end)) else {
            return Err(Error::invalid_argument(format!(
                "cannot find the string '{}' written to uuid column '{}' in the statement",
                f.text, f.column
            )));
        };
        if start < copied || end > statement.len() || start > end {
            continue;
        }
        out.push_str(&statement[copied..start]);
        out.push_str(&format!("X'{}'", parsed.simple()));
        copied = end;
    }
    out.push_str(&statement[copied..]);
    Ok(out)
}
