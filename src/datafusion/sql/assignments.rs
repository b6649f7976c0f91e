//! The assignments of `UPDATE … SET` and `MERGE … THEN UPDATE SET`, checked in the
//! statement's text before DataFusion plans it.
//!
//! DataFusion 55 folds the assignments of an `UPDATE` into one projection, so
//! `SET x = 1, x = 2` would silently write the last value; its `MERGE` planner refuses
//! the same with "Duplicate column 'x' in MERGE UPDATE". A column assigned twice in one
//! `SET` (by name, qualified or not, or in a tuple `SET (a, b) = …`) is refused for both
//! statements, as Spark (`UPDATE`: "Multiple assignments for 'x'") and DuckDB do.

use std::collections::HashSet;

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    Assignment, AssignmentTarget, MergeAction, ObjectName, Statement, TableFactor,
};

use super::uuid_values::object_name;
use crate::error::{Error, Result};

/// Refuse an `UPDATE` or `MERGE` (`parsed`) that assigns a column twice in one `SET`;
/// other statements pass.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): "Duplicate column 'x' in UPDATE SET
/// of 'ns.t'" (`MERGE UPDATE`), naming the column and the table as written.
pub(super) fn check_duplicate_assignments(ctx: &SessionContext, parsed: &Statement) -> Result<()> {
    let normalize = ctx
        .state()
        .config_options()
        .sql_parser
        .enable_ident_normalization;
    match parsed {
        Statement::Update(update) => {
            let table = match &update.table.relation {
                TableFactor::Table { name, .. } => name.to_string(),
                other => other.to_string(),
            };
            check(&update.assignments, normalize, "UPDATE SET", &table)
        }
        Statement::Merge(merge) => {
            let table = match &merge.table {
                TableFactor::Table { name, .. } => name.to_string(),
                other => other.to_string(),
            };
            for clause in &merge.clauses {
                if let MergeAction::Update(update) = &clause.action {
                    check(&update.assignments, normalize, "MERGE UPDATE SET", &table)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Each column `assignments` assign (the last part of its name, as DataFusion resolves
/// it) at most once.
fn check(assignments: &[Assignment], normalize: bool, clause: &str, table: &str) -> Result<()> {
    let mut seen = HashSet::new();
    for a in assignments {
        let names: Vec<&ObjectName> = match &a.target {
            AssignmentTarget::ColumnName(name) => vec![name],
            AssignmentTarget::Tuple(names) => names.iter().collect(),
        };
        for name in names {
            let Some(column) = object_name(name, normalize).pop() else {
                continue;
            };
            if !seen.insert(column.clone()) {
                return Err(Error::invalid_argument(format!(
                    "Duplicate column '{column}' in {clause} of '{table}': a column may be \
                     assigned once"
                )));
            }
        }
    }
    Ok(())
}
