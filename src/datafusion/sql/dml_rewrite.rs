//! `UPDATE` and `MERGE` resolved as Spark resolves them, before DataFusion 55 plans them.
//!
//! DataFusion 55's planners read an assignment target by its last name part alone
//! (`UPDATE t SET st.a = 5` wrote the top-level column `a`, `SET no_such_table.a = 6` was
//! accepted, and `UPDATE`'s target was not normalized: `SET V = 7` wrote the quoted
//! column `"V"` while `WHERE V = 10` read `v`), and resolve every `MERGE` clause against
//! the target and the source together (a `NOT MATCHED` clause reading a target column
//! read NULLs; an unqualified name of both sides was "ambiguous"). [`plan`] rewrites such
//! a statement's syntax tree first:
//!
//! - assignment targets (`UPDATE … SET`, `MERGE … UPDATE SET`, `MERGE … INSERT (cols)`)
//!   resolve against the target table (module `assignments`): `t.a` / `alias.a` / `a` is
//!   column `a`, `st.a` field `a` of struct column `st` (written as `st = named_struct(…)`
//!   keeping the other fields), an unknown name or qualifier is an error;
//! - the expressions of `WHEN NOT MATCHED [BY TARGET]` clauses resolve against the source
//!   only, those of `WHEN NOT MATCHED BY SOURCE` against the target only (module
//!   `merge_scopes`).
//!
//! Names compare as DataFusion compares them: unquoted parts lowercased
//! (`datafusion.sql_parser.enable_ident_normalization`), quoted ones exact.

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::TableReference;
use datafusion::logical_expr::dml::MergeIntoClauseKind;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    Ident, MergeAction, MergeClauseKind, ObjectName, ObjectNamePart, Statement, TableFactor,
};

use super::assignments::{resolve_assignments, resolve_insert_columns, AssignmentScope};
use super::merge_scopes::scope_merge_clauses;
use super::tokens::first_word_is;
use crate::datafusion::dml::merge_clauses::check_clause_order;
use crate::error::Result;

/// The plan of `sql` when it is an `UPDATE` or `MERGE` whose names this module rewrote;
/// `None` when nothing changed or the statement is another one (run as it is), or its
/// target table is not found (DataFusion reports it).
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming the statement's table as written
/// and the name): an assignment to a column or field the table does not have, or under a
/// qualifier that is not the table's; a column assigned twice, or whole and by field;
/// a `MERGE` clause reading a column of the side it may not read; DataFusion's planning
/// errors of the rewritten statement.
pub(super) async fn plan(ctx: &SessionContext, sql: &str) -> Result<Option<LogicalPlan>> {
    if !first_word_is(sql, &["UPDATE", "MERGE"]) {
        return Ok(None);
    }
    let state = ctx.state();
    let options = state.config().options().sql_parser.clone();
    let Ok(DFStatement::Statement(mut statement)) = state.sql_to_statement(sql, &options.dialect)
    else {
        return Ok(None);
    };
    let names = Names {
        normalize: options.enable_ident_normalization,
    };
    let changed = match statement.as_mut() {
        Statement::Update(update) => {
            if !update.table.joins.is_empty() {
                return Ok(None);
            }
            let Some(target) = Relation::table(ctx, &update.table.relation, names).await else {
                return Ok(None);
            };
            let resolved =
                resolve_assignments(&update.assignments, &target, names, AssignmentScope::Update)?;
            let changed = resolved != update.assignments;
            update.assignments = resolved;
            changed
        }
        Statement::Merge(merge) => {
            let Some(target) = Relation::table(ctx, &merge.table, names).await else {
                return Ok(None);
            };
            check_clause_order(
                merge.clauses.iter().map(|c| {
                    let kind = match c.clause_kind {
                        MergeClauseKind::Matched => MergeIntoClauseKind::Matched,
                        MergeClauseKind::NotMatched => MergeIntoClauseKind::NotMatched,
                        MergeClauseKind::NotMatchedByTarget => {
                            MergeIntoClauseKind::NotMatchedByTarget
                        }
                        MergeClauseKind::NotMatchedBySource => {
                            MergeIntoClauseKind::NotMatchedBySource
                        }
                    };
                    (kind, c.predicate.is_some())
                }),
                &target.display,
            )?;
            let mut changed = scope_merge_clauses(ctx, merge, &target, names).await?;
            for clause in &mut merge.clauses {
                match &mut clause.action {
                    MergeAction::Update(update) => {
                        let resolved = resolve_assignments(
                            &update.assignments,
                            &target,
                            names,
                            AssignmentScope::Merge,
                        )?;
                        changed |= resolved != update.assignments;
                        update.assignments = resolved;
                    }
                    MergeAction::Insert(insert) => {
                        let resolved = resolve_insert_columns(&insert.columns, &target, names)?;
                        changed |= resolved != insert.columns;
                        insert.columns = resolved;
                    }
                    MergeAction::Delete { .. } => {}
                }
            }
            changed
        }
        _ => return Ok(None),
    };
    if !changed {
        return Ok(None);
    }
    let plan = state
        .statement_to_plan(DFStatement::Statement(statement))
        .await?;
    Ok(Some(plan))
}

/// How identifiers compare: unquoted ones lowercased when DataFusion normalizes them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Names {
    pub normalize: bool,
}

impl Names {
    /// `ident` as DataFusion resolves it.
    pub fn of(self, ident: &Ident) -> String {
        if self.normalize && ident.quote_style.is_none() {
            ident.value.to_lowercase()
        } else {
            ident.value.clone()
        }
    }

    /// Each part of `name` as DataFusion resolves it; `None` when a part is not an
    /// identifier.
    pub fn parts(self, name: &ObjectName) -> Option<Vec<String>> {
        name.0
            .iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(ident) => Some(self.of(ident)),
                ObjectNamePart::Function(_) => None,
            })
            .collect()
    }
}

/// A relation of a statement: the target table, or a `MERGE`'s source.
#[derive(Debug)]
pub(super) struct Relation {
    /// How messages name it: as the statement writes it (`ns.t`, a source's alias).
    pub display: String,
    /// The qualifiers that name its columns in the statement (resolved names): its alias,
    /// else each suffix of its full name (`t`, `ns.t`, `cat.ns.t`), as DataFusion matches
    /// a column's qualifier.
    pub qualifiers: Vec<Vec<String>>,
    /// What to write before one of its columns to name it alone (the alias or the name as
    /// written); `None` when it has no name (an unaliased subquery).
    pub prefix: Option<Vec<Ident>>,
    /// Its columns, when known.
    pub schema: Option<SchemaRef>,
}

impl Relation {
    /// The table `factor` names, with its schema; `None` when `factor` is not a table
    /// name or the table is not found.
    pub async fn table(ctx: &SessionContext, factor: &TableFactor, names: Names) -> Option<Self> {
        let TableFactor::Table { name, .. } = factor else {
            return None;
        };
        let mut relation = Self::named(ctx, factor, names)?;
        // messages name the table, not its alias
        relation.display = name.to_string();
        let parts = names.parts(name)?;
        let provider = ctx.table_provider(reference(&parts)?).await.ok()?;
        relation.schema = Some(provider.schema());
        Some(relation)
    }

    /// `factor`'s names (no schema yet): a table's alias or name, a subquery's alias.
    pub fn named(ctx: &SessionContext, factor: &TableFactor, names: Names) -> Option<Self> {
        let (name, alias) = match factor {
            TableFactor::Table { name, alias, .. } => (Some(name), alias.as_ref()),
            TableFactor::Derived { alias, .. } => (None, alias.as_ref()),
            other => (None, table_alias(other)),
        };
        if let Some(alias) = alias {
            return Some(Self {
                display: alias.name.to_string(),
                qualifiers: vec![vec![names.of(&alias.name)]],
                prefix: Some(vec![alias.name.clone()]),
                schema: None,
            });
        }
        let Some(name) = name else {
            return Some(Self {
                display: factor.to_string(),
                qualifiers: vec![],
                prefix: None,
                schema: None,
            });
        };
        let parts = names.parts(name)?;
        let full = reference(&parts)?.resolve(
            &ctx.state().config_options().catalog.default_catalog,
            &ctx.state().config_options().catalog.default_schema,
        );
        let full = [
            full.catalog.to_string(),
            full.schema.to_string(),
            full.table.to_string(),
        ];
        let idents = name
            .0
            .iter()
            .filter_map(|p| match p {
                ObjectNamePart::Identifier(ident) => Some(ident.clone()),
                ObjectNamePart::Function(_) => None,
            })
            .collect();
        Some(Self {
            display: name.to_string(),
            qualifiers: (0..3).map(|i| full[i..].to_vec()).collect(),
            prefix: Some(idents),
            schema: None,
        })
    }

    /// Whether the relation has a top-level column `name`.
    pub fn has_column(&self, name: &str) -> bool {
        self.schema
            .as_ref()
            .is_some_and(|s| s.fields().iter().any(|f| f.name() == name))
    }

    /// The length of the longest of its qualifiers that `parts` starts with, followed by
    /// at least one more part.
    pub fn qualifier_len(&self, parts: &[String]) -> Option<usize> {
        self.qualifiers
            .iter()
            .filter(|q| parts.len() > q.len() && parts.starts_with(q))
            .map(Vec::len)
            .max()
    }
}

/// The alias of a table factor other than a table or a subquery (a table function,
/// `UNNEST`, …), when it has one.
fn table_alias(factor: &TableFactor) -> Option<&datafusion::sql::sqlparser::ast::TableAlias> {
    match factor {
        TableFactor::TableFunction { alias, .. }
        | TableFactor::Function { alias, .. }
        | TableFactor::UNNEST { alias, .. }
        | TableFactor::NestedJoin { alias, .. } => alias.as_ref(),
        _ => None,
    }
}

/// The table reference of a name's resolved parts (1 to 3 of them).
fn reference(parts: &[String]) -> Option<TableReference> {
    Some(match parts {
        [t] => TableReference::bare(t.as_str()),
        [s, t] => TableReference::partial(s.as_str(), t.as_str()),
        [c, s, t] => TableReference::full(c.as_str(), s.as_str(), t.as_str()),
        _ => return None,
    })
}
