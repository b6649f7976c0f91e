//! The `DEFAULT` keyword as a written value, as Spark 3.4+ reads it
//! (`ResolveDefaultColumns`): `UPDATE t SET v = DEFAULT`, `MERGE … UPDATE SET v = DEFAULT`,
//! `MERGE … INSERT [(cols)] VALUES (…, DEFAULT)` and `INSERT INTO t [(cols)] VALUES (…,
//! DEFAULT), …` write the column's default: on an Iceberg table its v3 `write-default`
//! (spec "Default values"; the table provider's `get_column_default`), NULL without one
//! (which a required column refuses when written). DataFusion 55 read `DEFAULT` as a
//! column name ("No field named default").
//!
//! Only a value that is the keyword alone is replaced (unquoted, any case; `"default"`
//! quoted is a column); elsewhere in an expression it stays a name, as in Spark. `SET
//! st.a = DEFAULT` writes the struct field's own `write-default` (NULL without one).

use datafusion::sql::sqlparser::ast::{Assignment, AssignmentTarget, Expr, ObjectName};

use super::assignments::resolve_path;
use super::dml_rewrite::{Names, Relation};
use crate::error::Result;

/// Whether `e` is the keyword `DEFAULT`.
pub(super) fn is_default(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
}

/// Replace each `SET c = DEFAULT` of `assignments` by `c`'s default; `at` says where, for
/// messages. Returns whether any was replaced.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): the target's errors of
/// [`resolve_path`].
pub(super) fn replace_in_assignments(
    assignments: &mut [Assignment],
    target: &Relation,
    names: Names,
    at: &str,
) -> Result<bool> {
    let mut changed = false;
    for a in assignments {
        let AssignmentTarget::ColumnName(name) = &a.target else {
            continue;
        };
        if !is_default(&a.value) {
            continue;
        }
        match resolve_path(name, target, names, at)?.as_slice() {
            [column] => a.value = target.default_value(column),
            path => a.value = target.field_default_value(path),
        }
        changed = true;
    }
    Ok(changed)
}

/// Replace each `DEFAULT` of `rows` (values for `columns`, the target's columns in order
/// when empty) by its column's default; `at` says where. A `DEFAULT` beyond the columns
/// is left for DataFusion to report (the row has too many values). Returns whether any
/// was replaced.
///
/// Errors: the column list's errors of [`resolve_path`].
pub(super) fn replace_in_rows<'a>(
    columns: &[ObjectName],
    rows: impl IntoIterator<Item = &'a mut Vec<Expr>>,
    target: &Relation,
    names: Names,
    at: &str,
) -> Result<bool> {
    let mut rows: Vec<&mut Vec<Expr>> = rows
        .into_iter()
        .filter(|row| row.iter().any(is_default))
        .collect();
    if rows.is_empty() {
        return Ok(false);
    }
    let column_names: Vec<Option<String>> = if columns.is_empty() {
        target
            .schema
            .iter()
            .flat_map(|s| s.fields().iter().map(|f| Some(f.name().clone())))
            .collect()
    } else {
        columns
            .iter()
            .map(|c| Ok(resolve_path(c, target, names, at)?.first().cloned()))
            .collect::<Result<_>>()?
    };
    for row in &mut rows {
        for (value, column) in row.iter_mut().zip(&column_names) {
            if let (true, Some(column)) = (is_default(value), column) {
                *value = target.default_value(column);
            }
        }
    }
    Ok(true)
}
