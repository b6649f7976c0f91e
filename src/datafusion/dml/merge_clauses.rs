//! The rules a `MERGE`'s `WHEN` clauses obey before anything is read, as Spark's
//! analyzer checks them:
//!
//! - within each kind (`MATCHED`; `NOT MATCHED [BY TARGET]`; `NOT MATCHED BY SOURCE`)
//!   only the last clause may omit its `AND` condition: a clause after an unconditional
//!   one of its kind could never apply (Spark: `NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION`,
//!   `NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION`,
//!   `NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION`);
//! - a `NOT MATCHED [BY TARGET]` clause (its condition and `INSERT` values) reads only
//!   source columns, a `NOT MATCHED BY SOURCE` clause (its condition and `UPDATE SET`
//!   values) only target columns: the other side of such a row is all NULL (Spark
//!   resolves the clause against that side alone: "cannot resolve").
//!
//! `sql::execute` resolves unqualified names to the clause's side before DataFusion
//! plans the statement (module `sql::merge_scopes`, which also names the reference as
//! written); this check holds for plans made any other way too. DataFusion's optimizer
//! may fold a reference to a constant source's column away before the table sees the
//! clause; only the statement-level check sees those.

use datafusion::common::DFSchema;
use datafusion::logical_expr::dml::{MergeIntoAction, MergeIntoClause, MergeIntoClauseKind};
use datafusion::logical_expr::Expr;

use crate::error::{Error, Result};

/// Refuse `clauses` (over `merge_schema`: the target's `target_columns` columns, then the
/// source's) that break a rule of the module docs; `table` names the target in messages.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): a clause after an unconditional one of
/// its kind; a clause reading a column of the side it may not read, naming the clause
/// and the column.
pub(crate) fn check_merge_clauses(
    clauses: &[MergeIntoClause],
    merge_schema: &DFSchema,
    target_columns: usize,
    table: &str,
) -> Result<()> {
    check_clause_order(
        clauses.iter().map(|c| (c.kind, c.predicate.is_some())),
        table,
    )?;
    for clause in clauses {
        let kind = kind_name(clause.kind);
        let (reads_target, values): (bool, Vec<&Expr>) = match (&clause.kind, &clause.action) {
            (MergeIntoClauseKind::Matched, _) => continue,
            (MergeIntoClauseKind::NotMatchedBySource, MergeIntoAction::Update(a)) => {
                (true, a.iter().map(|(_, e)| e).collect())
            }
            (MergeIntoClauseKind::NotMatchedBySource, _) => (true, vec![]),
            (_, MergeIntoAction::Insert { values, .. }) => (false, values.iter().collect()),
            (_, _) => (false, vec![]),
        };
        for expr in clause.predicate.iter().chain(values) {
            for column in expr.column_refs() {
                let Ok(index) = merge_schema.index_of_column(column) else {
                    continue;
                };
                let is_target = index < target_columns;
                if is_target != reads_target {
                    let (side, other) = match reads_target {
                        true => ("target", "source"),
                        false => ("source", "target"),
                    };
                    return Err(Error::invalid_argument(format!(
                        "MERGE into '{table}': WHEN {kind} clause cannot resolve {other} \
                         column '{column}': such a clause reads only the {side}'s columns \
                         (there is no {other} row)"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Refuse a clause after an unconditional one of its kind (`clauses`: each one's kind
/// and whether it has an `AND` condition, in order); `table` names the target.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): naming the kind and Spark's error
/// class.
pub(crate) fn check_clause_order(
    clauses: impl IntoIterator<Item = (MergeIntoClauseKind, bool)>,
    table: &str,
) -> Result<()> {
    let mut unconditional: Vec<&'static str> = vec![];
    for (kind, conditional) in clauses {
        let name = kind_name(kind);
        if unconditional.contains(&name) {
            return Err(Error::invalid_argument(format!(
                "MERGE into '{table}': only the last WHEN {name} clause may omit its \
                 condition; a WHEN {name} clause after an unconditional one could never \
                 apply (Spark: {})",
                spark_error_class(kind)
            )));
        }
        if !conditional {
            unconditional.push(name);
        }
    }
    Ok(())
}

/// The clause kind as messages name it (`NOT MATCHED` and `NOT MATCHED BY TARGET` are one
/// kind).
fn kind_name(kind: MergeIntoClauseKind) -> &'static str {
    match kind {
        MergeIntoClauseKind::Matched => "MATCHED",
        MergeIntoClauseKind::NotMatchedBySource => "NOT MATCHED BY SOURCE",
        _ => "NOT MATCHED",
    }
}

fn spark_error_class(kind: MergeIntoClauseKind) -> &'static str {
    match kind {
        MergeIntoClauseKind::Matched => "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION",
        MergeIntoClauseKind::NotMatchedBySource => {
            "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION"
        }
        _ => "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION",
    }
}
