//! The assignment targets of `UPDATE … SET`, `MERGE … THEN UPDATE SET` and
//! `MERGE … THEN INSERT (cols)`, resolved against the target table as Spark resolves them
//! (its `ResolveReferences` and `AssignmentUtils.alignUpdateAssignments`), before
//! DataFusion 55 plans the statement (see module `dml_rewrite`).
//!
//! A target names a column of the table, optionally under one of the table's qualifiers,
//! and then, for a struct column, a field at any depth:
//! - `a`, `t.a`, `ns.t.a` (`t` the table's name, or its alias when it has one: then only
//!   the alias) is column `a`; the qualifier reading wins when both readings exist;
//! - `st.a` (`st` a struct column) is field `a` of `st`: the assignment becomes
//!   `st = named_struct('a', <value>, 'b', get_field(st, 'b'), …)` over the struct's
//!   fields in order, the others keeping their values (several fields of one struct, at
//!   any depth, make one such value). As in Spark, a null struct becomes a struct whose
//!   unassigned fields are null;
//! - a quoted name is one part: `"a.b"` is column `a.b`.
//!
//! Each assignment is then written as the column's name alone, quoted, so DataFusion's
//! planners (which keep a target's last part, unnormalized in `UPDATE`) read it as
//! resolved here.
//!
//! Refused ([`crate::ErrorKind::InvalidArgument`], naming the clause, the table as
//! written and the target as written): a name that is not a column of the table, or under
//! a qualifier that is not the table's (`SET other.a = 1`); a field that the struct does
//! not have, or of a column that is not a struct; a column or field assigned twice in one
//! `SET` ("Duplicate column 'x'", as Spark's "Multiple assignments" and DuckDB do) or
//! both whole and by field (Spark: "Conflicting assignments"); a nested field in a
//! `MERGE … INSERT` column list (Spark: "INSERT assignment keys cannot be nested
//! fields").

use datafusion::arrow::datatypes::DataType;
use datafusion::sql::sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, Ident, ObjectName, Value,
};

use super::dml_rewrite::{Names, Relation};
use crate::error::{Error, Result};

/// Which statement's `SET` is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AssignmentScope {
    /// `UPDATE … SET`: the target's columns are the only ones in scope.
    Update,
    /// `MERGE … UPDATE SET`: the source's too, so the target's columns are qualified.
    Merge,
}

impl AssignmentScope {
    fn clause(self) -> &'static str {
        match self {
            Self::Update => "UPDATE SET",
            Self::Merge => "MERGE UPDATE SET",
        }
    }
}

/// A column's assignment: its value, or values of some of its fields.
#[derive(Debug)]
enum Assigned {
    Whole(Box<Expr>),
    Fields(Vec<(String, Assigned)>),
}

/// `assignments` with each target resolved against `target` (see the module docs): one
/// assignment per column assigned, in the order first assigned, its target the column's
/// quoted name. A tuple target (`SET (a, b) = …`, which DataFusion refuses) is checked
/// for repeated columns and kept as it is.
///
/// Errors: see the module docs.
pub(super) fn resolve_assignments(
    assignments: &[Assignment],
    target: &Relation,
    names: Names,
    scope: AssignmentScope,
) -> Result<Vec<Assignment>> {
    let at = format!("in {} of '{}'", scope.clause(), target.display);
    let mut columns: Vec<(String, Assigned)> = vec![];
    let mut tuple = false;
    for a in assignments {
        match &a.target {
            AssignmentTarget::ColumnName(name) => {
                let path = resolve_path(name, target, names, &at)?;
                insert(&mut columns, &path, Box::new(a.value.clone()), &at)?;
            }
            AssignmentTarget::Tuple(tuple_names) => {
                for name in tuple_names {
                    let path = resolve_path(name, target, names, &at)?;
                    insert(&mut columns, &path, Box::new(Expr::value(Value::Null)), &at)?;
                }
                tuple = true;
            }
        }
    }
    if tuple {
        return Ok(assignments.to_vec());
    }
    let base = |column: &str| -> Expr {
        let quoted = Ident::with_quote('"', column);
        match (scope, &target.prefix) {
            (AssignmentScope::Merge, Some(prefix)) => {
                Expr::CompoundIdentifier(prefix.iter().cloned().chain([quoted]).collect())
            }
            _ => Expr::Identifier(quoted),
        }
    };
    columns
        .into_iter()
        .map(|(column, assigned)| {
            let value = match assigned {
                Assigned::Whole(value) => *value,
                Assigned::Fields(fields) => match column_type(target, &column) {
                    Some(data_type) => named_struct(&data_type, base(&column), fields),
                    None => {
                        return Err(Error::invalid_argument(format!(
                            "no column '{column}' {at}{}",
                            other_case_note(target, &column)
                        )))
                    }
                },
            };
            Ok(Assignment {
                target: AssignmentTarget::ColumnName(quoted_name(&column)),
                value,
            })
        })
        .collect()
}

/// The columns of a `MERGE … INSERT (cols)` list resolved against `target`, each its
/// quoted name.
///
/// Errors: an unknown column or qualifier (as [`resolve_assignments`]); a nested field.
pub(super) fn resolve_insert_columns(
    columns: &[ObjectName],
    target: &Relation,
    names: Names,
) -> Result<Vec<ObjectName>> {
    let at = format!("in MERGE INSERT of '{}'", target.display);
    columns
        .iter()
        .map(
            |name| match resolve_path(name, target, names, &at)?.as_slice() {
                [column] => Ok(quoted_name(column)),
                _ => Err(Error::invalid_argument(format!(
                    "cannot insert into nested field '{name}' {at}: INSERT lists top-level \
                 columns (give the struct column a whole value, e.g. named_struct(…))"
                ))),
            },
        )
        .collect()
}

/// `; the table has a column "Msg": …` when `target` has no column `column` but one of
/// that name in another case (module `crate::column_case`), else nothing.
fn other_case_note(target: &Relation, column: &str) -> String {
    let Some(schema) = target.schema.as_ref() else {
        return String::new();
    };
    let columns = schema.fields().iter().map(|f| f.name().as_str());
    crate::column_case::other_case_note(column, columns)
        .map(|note| format!("; {note}"))
        .unwrap_or_default()
}

/// A column's name as one quoted part.
fn quoted_name(column: &str) -> ObjectName {
    ObjectName::from(vec![Ident::with_quote('"', column)])
}

/// The column and field names `name` assigns (see the module docs); `at` says where, for
/// messages.
pub(super) fn resolve_path(
    name: &ObjectName,
    target: &Relation,
    names: Names,
    at: &str,
) -> Result<Vec<String>> {
    let fail = |message: String| Error::invalid_argument(message);
    let Some(parts) = names.parts(name) else {
        return Err(fail(format!("'{name}' {at} is not a column name")));
    };
    let start = target
        .qualifier_len(&parts)
        .filter(|&q| target.has_column(&parts[q]))
        .unwrap_or(0);
    let column = &parts[start];
    let Some(mut data_type) = column_type(target, column) else {
        return Err(fail(match parts.len() {
            // the name looked up (`msg` for an unquoted `Msg`), not as written
            1 => format!(
                "no column '{column}' {at}{}",
                other_case_note(target, column)
            ),
            _ => format!(
                "cannot resolve '{name}' {at}: '{}' is neither a column of the table nor one \
                 of its names ({})",
                parts[0],
                target
                    .qualifiers
                    .iter()
                    .rev()
                    .map(|q| q.join("."))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }));
    };
    let mut path = vec![column.clone()];
    for field in &parts[start + 1..] {
        let DataType::Struct(fields) = &data_type else {
            return Err(fail(format!(
                "cannot assign '{name}' {at}: '{}' is {}, and only fields of structs can be \
                 assigned",
                path.join("."),
                kind(&data_type)
            )));
        };
        // the field of that name, else the one field whose name differs only in case
        // (Spark resolves struct fields case-insensitively)
        let folded = || {
            fields
                .iter()
                .filter(|f| f.name().eq_ignore_ascii_case(field))
        };
        let found = fields
            .iter()
            .find(|f| f.name() == field)
            .or_else(|| match folded().count() {
                1 => folded().next(),
                _ => None,
            });
        let Some(f) = found else {
            return Err(fail(format!(
                "cannot assign '{name}' {at}: struct '{}' has no field '{field}' (its fields: \
                 {})",
                path.join("."),
                fields
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let (name, inner) = (f.name().clone(), f.data_type().clone());
        data_type = inner;
        path.push(name);
    }
    Ok(path)
}

/// What a (non-struct) column is, for messages.
fn kind(data_type: &DataType) -> String {
    match data_type {
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
            "a list".to_string()
        }
        DataType::Map(..) => "a map".to_string(),
        other => format!("of type {other}"),
    }
}

/// The Arrow type of `target`'s column `name`.
fn column_type(target: &Relation, name: &str) -> Option<DataType> {
    let schema = target.schema.as_ref()?;
    schema
        .fields()
        .iter()
        .find(|f| f.name() == name)
        .map(|f| f.data_type().clone())
}

/// Record that `path` (column, then fields) is assigned `value` in `columns`; `at` says
/// where, for messages.
///
/// Errors: the path, or a path it is part of or that is part of it, is assigned already.
fn insert(
    columns: &mut Vec<(String, Assigned)>,
    path: &[String],
    value: Box<Expr>,
    at: &str,
) -> Result<()> {
    let mut level = columns;
    for (depth, name) in path.iter().enumerate() {
        let full = path[..=depth].join(".");
        let last = depth + 1 == path.len();
        let index = match level.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None if last => {
                level.push((name.clone(), Assigned::Whole(value)));
                return Ok(());
            }
            None => {
                level.push((name.clone(), Assigned::Fields(vec![])));
                level.len() - 1
            }
        };
        level = match (&mut level[index].1, last) {
            (Assigned::Fields(fields), false) => fields,
            (Assigned::Whole(_), true) => {
                return Err(Error::invalid_argument(format!(
                    "Duplicate column '{full}' {at}: a column may be assigned once"
                )))
            }
            _ => {
                return Err(Error::invalid_argument(format!(
                    "Conflicting assignments for '{full}' {at}: it is assigned both whole \
                     and by field"
                )))
            }
        };
    }
    Ok(())
}

/// `named_struct('f1', v1, …)` over the fields of `data_type` (a struct) in order: the
/// assigned ones' values, the others' current values read from `base`.
fn named_struct(data_type: &DataType, base: Expr, assigned: Vec<(String, Assigned)>) -> Expr {
    let DataType::Struct(fields) = data_type else {
        // resolve_path assigns fields of structs only
        return base;
    };
    let mut assigned = assigned;
    let mut args = vec![];
    for field in fields.iter() {
        let current = function("get_field", vec![base.clone(), string(field.name())]);
        let value = match assigned.iter().position(|(n, _)| n == field.name()) {
            None => current,
            Some(i) => match assigned.swap_remove(i).1 {
                Assigned::Whole(value) => *value,
                Assigned::Fields(inner) => named_struct(field.data_type(), current, inner),
            },
        };
        args.push(string(field.name()));
        args.push(value);
    }
    function("named_struct", args)
}

fn string(s: &str) -> Expr {
    Expr::value(Value::SingleQuotedString(s.to_string()))
}

/// A call of the function `name` with `args`.
fn function(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}
