//! The names a `MERGE` clause may read, as Spark resolves them (`ResolveReferences` of
//! `MergeIntoTable`): a `WHEN MATCHED` clause reads the target and the source, a
//! `WHEN NOT MATCHED [BY TARGET]` clause (its condition and `INSERT` values) the source
//! alone — there is no target row — and a `WHEN NOT MATCHED BY SOURCE` clause (its
//! condition and `UPDATE SET` values) the target alone.
//!
//! DataFusion 55 resolves every clause against both sides joined, so a `NOT MATCHED`
//! clause reading `t.v` read NULL (and wrote it), and an unqualified name both sides have
//! was "ambiguous" where Spark reads the clause's side. [`scope_merge_clauses`] rewrites
//! the clauses' column references (outside subqueries, which resolve against their own
//! tables first):
//! - an unqualified name (`v`, or `st.a` for a field of struct column `st`) gets the
//!   qualifier of the clause's side (the alias, else the table's name as written; an
//!   unaliased subquery source has none, and DataFusion prefers its columns already);
//! - a name of the other side (qualified by it, or unqualified and only the other side's)
//!   is an error naming the clause and the name ([`crate::ErrorKind::InvalidArgument`];
//!   Spark: "cannot resolve").
//!
//! The source's columns are planned (`SELECT * FROM <source>`) only when a `NOT MATCHED`
//! clause names a target column unqualified: the source may have it too.

use std::ops::ControlFlow;

use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    Expr, Ident, Merge, MergeAction, MergeClause, MergeClauseKind, MergeInsertKind, Query, SetExpr,
    Statement, TableWithJoins, VisitMut, VisitorMut,
};

use super::dml_rewrite::{Names, Relation};
use crate::error::{Error, Result};

/// Which side a clause reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Target,
    Source,
}

/// What becomes of one column reference.
enum Resolution {
    /// Left as written (it names the clause's side, or DataFusion reports it).
    Keep,
    /// Qualified by these parts.
    Prefix(Vec<Ident>),
    /// A name of the other side.
    Wrong,
    /// Whether it is the source's is known only from the source's columns.
    NeedSource,
}

/// Rewrite the column references of `merge`'s `NOT MATCHED` and `NOT MATCHED BY SOURCE`
/// clauses (see the module docs); `target` is the target table. Returns whether anything
/// changed.
///
/// Errors: a clause naming a column of the side it may not read, naming the clause, the
/// table and the name as written.
pub(super) async fn scope_merge_clauses(
    ctx: &SessionContext,
    merge: &mut Merge,
    target: &Relation,
    names: Names,
) -> Result<bool> {
    let Some(mut source) = Relation::named(ctx, &merge.source, names) else {
        return Ok(false);
    };
    let scoped = |clause: &MergeClause| match clause.clause_kind {
        MergeClauseKind::Matched => None,
        MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget => Some(Side::Source),
        MergeClauseKind::NotMatchedBySource => Some(Side::Target),
    };
    // first pass: are the source's columns needed?
    let mut needs_source = false;
    for clause in &mut merge.clauses {
        let Some(side) = scoped(clause) else { continue };
        visit_references(clause, &mut |e| {
            if let Some(parts) = reference_parts(e, names) {
                if matches!(
                    resolve(&parts, side, target, &source),
                    Resolution::NeedSource
                ) {
                    needs_source = true;
                }
            }
            Ok(())
        })?;
    }
    if needs_source {
        source.schema = source_schema(ctx, merge).await;
    }
    let mut changed = false;
    let table = &target.display;
    for clause in &mut merge.clauses {
        let Some(side) = scoped(clause) else { continue };
        let kind = clause.clause_kind;
        visit_references(clause, &mut |e| {
            let Some(parts) = reference_parts(e, names) else {
                return Ok(());
            };
            match resolve(&parts, side, target, &source) {
                Resolution::Keep | Resolution::NeedSource => {}
                Resolution::Prefix(prefix) => {
                    let idents = match e {
                        Expr::Identifier(ident) => vec![ident.clone()],
                        Expr::CompoundIdentifier(idents) => idents.clone(),
                        _ => return Ok(()),
                    };
                    *e = Expr::CompoundIdentifier(prefix.into_iter().chain(idents).collect());
                    changed = true;
                }
                Resolution::Wrong => {
                    let reads = match side {
                        Side::Source => "the source's columns (there is no target row)",
                        Side::Target => "the target's columns (there is no source row)",
                    };
                    return Err(Error::invalid_argument(format!(
                        "MERGE into '{table}': WHEN {kind} clause cannot resolve '{e}': such \
                         a clause reads only {reads}"
                    )));
                }
            }
            Ok(())
        })?;
    }
    Ok(changed)
}

/// The resolved parts of a column reference (`v`, `t.v`, `st.a`); `None` for other
/// expressions and session variables (`@x`).
fn reference_parts(e: &Expr, names: Names) -> Option<Vec<String>> {
    let idents: &[Ident] = match e {
        Expr::Identifier(ident) => std::slice::from_ref(ident),
        Expr::CompoundIdentifier(idents) => idents,
        _ => return None,
    };
    if idents.first()?.value.starts_with('@') {
        return None;
    }
    Some(idents.iter().map(|i| names.of(i)).collect())
}

/// How the reference `parts` in a clause reading `side` resolves.
fn resolve(parts: &[String], side: Side, target: &Relation, source: &Relation) -> Resolution {
    let (own, other) = match side {
        Side::Source => (source, target),
        Side::Target => (target, source),
    };
    if own.qualifier_len(parts).is_some() {
        return Resolution::Keep;
    }
    if let Some(q) = other.qualifier_len(parts) {
        // the other side's qualifier wins when it has the column (or its columns are not
        // known); else DataFusion would read the name as a column and its fields
        if other.schema.is_none() || other.has_column(&parts[q]) {
            return Resolution::Wrong;
        }
    }
    let name = &parts[0];
    match side {
        Side::Target if target.has_column(name) => own_prefix(target),
        Side::Target => Resolution::Wrong,
        Side::Source if !target.has_column(name) => Resolution::Keep,
        Side::Source => match &source.schema {
            None => Resolution::NeedSource,
            Some(_) if source.has_column(name) => own_prefix(source),
            Some(_) => Resolution::Wrong,
        },
    }
}

fn own_prefix(relation: &Relation) -> Resolution {
    match &relation.prefix {
        Some(prefix) => Resolution::Prefix(prefix.clone()),
        None => Resolution::Keep,
    }
}

/// The source's columns: `SELECT * FROM <source>` planned, with the metadata columns a
/// source query names (`(SELECT id, _pos FROM u)` has `_pos`; a source table's `*` shows
/// none, as in Spark); `None` when it does not plan (DataFusion then reports the
/// statement).
pub(super) async fn source_schema(
    ctx: &SessionContext,
    merge: &Merge,
) -> Option<datafusion::arrow::datatypes::SchemaRef> {
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    let Ok(DFStatement::Statement(mut statement)) =
        state.sql_to_statement("SELECT * FROM __icefloe_merge_source", &dialect)
    else {
        return None;
    };
    let Statement::Query(query) = statement.as_mut() else {
        return None;
    };
    let SetExpr::Select(select) = query.body.as_mut() else {
        return None;
    };
    select.from = vec![TableWithJoins {
        relation: merge.source.clone(),
        joins: vec![],
    }];
    // a source query reading metadata columns has them as columns
    if let Ok(Some(plan)) = super::metadata_columns::plan(ctx, &statement.to_string()).await {
        return Some(std::sync::Arc::clone(plan.schema().inner()));
    }
    let plan: LogicalPlan = state
        .statement_to_plan(DFStatement::Statement(statement))
        .await
        .ok()?;
    Some(std::sync::Arc::clone(plan.schema().inner()))
}

/// Call `f` on each column reference of `clause`'s condition and values, outside
/// subqueries.
fn visit_references(
    clause: &mut MergeClause,
    f: &mut dyn FnMut(&mut Expr) -> Result<()>,
) -> Result<()> {
    let mut visitor = References { depth: 0, f };
    let mut walk = |e: &mut Expr| match e.visit(&mut visitor) {
        ControlFlow::Break(error) => Err(error),
        ControlFlow::Continue(()) => Ok(()),
    };
    if let Some(predicate) = &mut clause.predicate {
        walk(predicate)?;
    }
    match &mut clause.action {
        MergeAction::Insert(insert) => {
            if let MergeInsertKind::Values(values) = &mut insert.kind {
                for row in &mut values.rows {
                    for e in &mut row.content {
                        walk(e)?;
                    }
                }
            }
        }
        MergeAction::Update(update) => {
            for a in &mut update.assignments {
                walk(&mut a.value)?;
            }
        }
        MergeAction::Delete { .. } => {}
    }
    Ok(())
}

/// Calls its function on identifiers outside subqueries.
struct References<'a> {
    depth: usize,
    f: &'a mut dyn FnMut(&mut Expr) -> Result<()>,
}

impl VisitorMut for References<'_> {
    type Break = Error;

    fn pre_visit_query(&mut self, _query: &mut Query) -> ControlFlow<Error> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut Query) -> ControlFlow<Error> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<Error> {
        if self.depth == 0 && matches!(expr, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
            if let Err(error) = (self.f)(expr) {
                return ControlFlow::Break(error);
            }
        }
        ControlFlow::Continue(())
    }
}
