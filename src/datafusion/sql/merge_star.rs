//! Spark's `MERGE … THEN UPDATE SET *` and `… THEN INSERT *`: every column of the target
//! from the source column of the same name (Spark's `UpdateStarAction` /
//! `InsertStarAction`).
//!
//! sqlparser does not parse `*` there, so [`mark_stars`] first replaces each in the text
//! by a marker column (`SET "__icefloe_star" = NULL`, `INSERT ("__icefloe_star") VALUES
//! (NULL)`), and [`expand_stars`] replaces the markers in the parsed statement by the
//! assignments: `SET c1 = s.c1, c2 = s.c2, …` and `INSERT (c1, c2, …) VALUES (s.c1,
//! s.c2, …)`, `s` the source's alias or name (none for an unaliased subquery, whose
//! columns DataFusion prefers). A target column the source does not have is an error
//! naming it, as in Spark (without `WITH SCHEMA EVOLUTION`, which icefloe does not take).

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, Ident, Merge, MergeAction, MergeInsertKind, ObjectName,
};
use datafusion::sql::sqlparser::tokenizer::Token;

use super::dml_rewrite::{Names, Relation};
use super::merge_scopes::source_schema;
use super::tokens::{is_keyword, Tok};
use crate::error::{Error, Result};

/// The marker column's name.
const STAR: &str = "__icefloe_star";

/// The words of Spark 4's `MERGE WITH SCHEMA EVOLUTION INTO …`.
const SCHEMA_EVOLUTION: [&str; 4] = ["MERGE", "WITH", "SCHEMA", "EVOLUTION"];

/// Refuses Spark 4's `MERGE WITH SCHEMA EVOLUTION INTO t USING s …` (the target table
/// gaining the source's new columns through `UPDATE SET *` / `INSERT *`), which icefloe
/// does not take, wherever it stands in the statement (after a `WITH` too): sqlparser
/// reads no such clause and its error ("Expected: USING, found: EVOLUTION") said neither
/// what the form is nor that it is unsupported. `toks` are the statement's tokens.
///
/// Errors: [`crate::ErrorKind::Unsupported`] naming `MERGE WITH SCHEMA EVOLUTION` and how
/// to write the change without it.
pub(super) fn refuse_schema_evolution(toks: &[Tok]) -> Result<()> {
    let found = toks.windows(SCHEMA_EVOLUTION.len()).any(|w| {
        w.iter()
            .zip(SCHEMA_EVOLUTION)
            .all(|(t, kw)| is_keyword(&t.token, kw))
    });
    if found {
        return Err(Error::unsupported(
            "MERGE WITH SCHEMA EVOLUTION is not supported: add the source's new columns to \
             the target first (ALTER TABLE … ADD COLUMN), then run MERGE INTO without it",
        ));
    }
    Ok(())
}

/// `sql` (a `MERGE`, tokenized as `toks`; `quote` the dialect's identifier quote) with each
/// `THEN UPDATE SET *` and `THEN INSERT *` replaced by its marker; `None` when it has
/// none.
pub(super) fn mark_stars(sql: &str, toks: &[Tok], quote: char) -> Option<String> {
    let marker = format!("{quote}{STAR}{quote}");
    let mut edits: Vec<(usize, usize, String)> = vec![];
    for (i, tok) in toks.iter().enumerate() {
        if !matches!(tok.token, Token::Mul) || i < 2 {
            continue;
        }
        let before = |n: usize| toks.get(i - n).map(|t| &t.token);
        let keyword = |n: usize, kw: &str| before(n).is_some_and(|t| is_keyword(t, kw));
        if keyword(1, "SET") && keyword(2, "UPDATE") && i >= 3 && keyword(3, "THEN") {
            edits.push((tok.start, tok.end, format!("{marker} = NULL")));
        } else if keyword(1, "INSERT") && keyword(2, "THEN") {
            edits.push((tok.start, tok.end, format!("({marker}) VALUES (NULL)")));
        }
    }
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + 64);
    let mut copied = 0;
    for (start, end, text) in edits {
        out.push_str(&sql[copied..start]);
        out.push_str(&text);
        copied = end;
    }
    out.push_str(&sql[copied..]);
    Some(out)
}

/// Replace the markers of [`mark_stars`] in `merge` (whose target is `target`) by the
/// target's columns from the source's; returns whether there were any.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): a target column the source does not
/// have, naming it; a source whose columns cannot be planned.
pub(super) async fn expand_stars(
    ctx: &SessionContext,
    merge: &mut Merge,
    target: &Relation,
    names: Names,
) -> Result<bool> {
    let is_marker = |name: &ObjectName| names.parts(name).is_some_and(|p| p == [STAR]);
    let has_star = merge.clauses.iter().any(|c| match &c.action {
        MergeAction::Update(u) => u
            .assignments
            .iter()
            .any(|a| matches!(&a.target, AssignmentTarget::ColumnName(n) if is_marker(n))),
        MergeAction::Insert(i) => i.columns.iter().any(is_marker),
        MergeAction::Delete { .. } => false,
    });
    if !has_star {
        return Ok(false);
    }
    let what = format!("MERGE into '{}'", target.display);
    let Some(source) = Relation::named(ctx, &merge.source, names) else {
        return Err(Error::invalid_argument(format!(
            "{what}: UPDATE SET * / INSERT * need a named source"
        )));
    };
    let Some(schema) = source_schema(ctx, merge).await else {
        return Err(Error::invalid_argument(format!(
            "{what}: the source of UPDATE SET * / INSERT * does not plan"
        )));
    };
    let columns: Vec<String> = target
        .schema
        .iter()
        .flat_map(|s| s.fields().iter().map(|f| f.name().clone()))
        .collect();
    let mut values = vec![];
    for column in &columns {
        if !schema.fields().iter().any(|f| f.name() == column) {
            return Err(Error::invalid_argument(format!(
                "{what}: UPDATE SET * / INSERT * assign every target column from the source \
                 column of its name, and the source ({}) has no column '{column}'",
                source.display
            )));
        }
        let quoted = Ident::with_quote('"', column.as_str());
        values.push(match &source.prefix {
            Some(prefix) => {
                Expr::CompoundIdentifier(prefix.iter().cloned().chain([quoted]).collect())
            }
            None => Expr::Identifier(quoted),
        });
    }
    let column_names: Vec<ObjectName> = columns
        .iter()
        .map(|c| ObjectName::from(vec![Ident::with_quote('"', c.as_str())]))
        .collect();
    for clause in &mut merge.clauses {
        match &mut clause.action {
            MergeAction::Update(update) => {
                if update
                    .assignments
                    .iter()
                    .any(|a| matches!(&a.target, AssignmentTarget::ColumnName(n) if is_marker(n)))
                {
                    update.assignments = column_names
                        .iter()
                        .zip(&values)
                        .map(|(name, value)| Assignment {
                            target: AssignmentTarget::ColumnName(name.clone()),
                            value: value.clone(),
                        })
                        .collect();
                }
            }
            MergeAction::Insert(insert) => {
                if insert.columns.iter().any(is_marker) {
                    insert.columns = column_names.clone();
                    if let MergeInsertKind::Values(v) = &mut insert.kind {
                        if let Some(row) = v.rows.first_mut() {
                            row.content = values.clone();
                        }
                    }
                }
            }
            MergeAction::Delete { .. } => {}
        }
    }
    Ok(true)
}
