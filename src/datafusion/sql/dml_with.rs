//! A `WITH` before `INSERT`, `MERGE`, `UPDATE` or `DELETE` (Spark's `dmlStatement: ctes?
//! dmlStatementNoWith`; its `INSERT INTO`/`INSERT OVERWRITE` forms take one too), which
//! DataFusion 55 does not plan ("Query MERGE INTO … not implemented yet").
//!
//! [`inline_ctes`] moves the common table expressions to where the statement reads
//! them: an `INSERT`'s query (`SELECT`, `VALUES`, a set operation) gets the `WITH` list in
//! front of its own, a `MERGE` source naming one becomes `(WITH … SELECT * FROM name) AS
//! name` (its alias kept), and every subquery of the statement (a `MERGE` source subquery,
//! scalar subqueries in `SET`, `WHERE`, `ON` and the clauses) gets the `WITH` list in front
//! of its own (a name it defines itself shadows the outer one, as SQL scoping has it). The
//! CTEs are plain queries, so reading them where they are used is reading them once per
//! use, with the same rows. The statement is then run as written without its `WITH`.
//!
//! Refused ([`crate::ErrorKind::Unsupported`]): `WITH RECURSIVE`, and a statement whose
//! target table is a CTE's name (a CTE cannot be written).

use std::ops::ControlFlow;

use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{
    Cte, Expr, FromTable, Ident, ObjectName, ObjectNamePart, Query, SetExpr, Statement, TableAlias,
    TableFactor, TableObject, VisitMut, VisitorMut, With,
};

use super::dml_rewrite::Names;
use super::tokens::first_word_is;
use crate::error::{Error, Result};

/// `sql` without its `WITH`, the CTEs moved into the `INSERT`/`MERGE`/`UPDATE`/`DELETE` after it
/// (see the module docs); `None` for any other statement.
///
/// Errors: `WITH RECURSIVE`; a target table named as a CTE.
pub(super) fn inline_ctes(ctx: &SessionContext, sql: &str) -> Result<Option<String>> {
    if !first_word_is(sql, &["WITH"]) {
        return Ok(None);
    }
    let state = ctx.state();
    let options = state.config().options().sql_parser.clone();
    let names = Names {
        normalize: options.enable_ident_normalization,
    };
    // a MERGE's `UPDATE SET *` / `INSERT *`, which do not parse, marked as the statement
    // without `WITH` has them marked (module `merge_star`); the markers survive inlining
    let marked = match sql.to_ascii_lowercase().contains("merge") {
        true => super::tokenize(ctx, sql).and_then(|toks| {
            super::merge_star::mark_stars(
                sql,
                &toks,
                super::quote_of(super::session_dialect(ctx).as_ref()),
            )
        }),
        false => None,
    };
    let sql = marked.as_deref().unwrap_or(sql);
    // Spark's `INSERT … t PARTITION (…) (cols) query`, which sqlparser parses with the
    // column list before the clause
    let parsed = state.sql_to_statement(sql, &options.dialect).or_else(|e| {
        match super::insert_partition::column_list_first(ctx, sql) {
            Some(moved) => state.sql_to_statement(&moved, &options.dialect),
            None => Err(e),
        }
    });
    let Ok(DFStatement::Statement(statement)) = parsed else {
        return Ok(None);
    };
    let Statement::Query(mut query) = *statement else {
        return Ok(None);
    };
    let mut inner = match query.body.as_ref() {
        SetExpr::Insert(s) | SetExpr::Merge(s) | SetExpr::Update(s) | SetExpr::Delete(s) => {
            s.clone()
        }
        _ => return Ok(None),
    };
    let Some(with) = query.with.take() else {
        return Ok(None);
    };
    let verb = match &inner {
        Statement::Insert(_) => "INSERT",
        Statement::Merge(_) => "MERGE",
        Statement::Update(_) => "UPDATE",
        _ => "DELETE",
    };
    if with.recursive {
        return Err(Error::unsupported(format!(
            "WITH RECURSIVE before {verb} is not supported"
        )));
    }
    let ctes = with.cte_tables;
    let cte_names: Vec<String> = ctes.iter().map(|c| names.of(&c.alias.name)).collect();
    let is_cte = |name: &ObjectName| match name.0.as_slice() {
        [ObjectNamePart::Identifier(ident)] => cte_names.contains(&names.of(ident)),
        _ => false,
    };
    let refuse_target = |name: &ObjectName| -> Result<()> {
        match is_cte(name) {
            true => Err(Error::unsupported(format!(
                "{verb} of '{name}': it is a common table expression of the statement's \
                 WITH, which cannot be written"
            ))),
            false => Ok(()),
        }
    };
    let mut attach = Attach {
        ctes: &ctes,
        names,
        depth: 0,
    };
    match &mut inner {
        Statement::Insert(insert) => {
            if let TableObject::TableName(name) = &insert.table {
                refuse_target(name)?;
            }
            // the query's own subqueries are in the scope of its `WITH`
            if let Some(source) = &mut insert.source {
                attach.query(source);
            }
        }
        Statement::Merge(merge) => {
            if let TableFactor::Table { name, .. } = &merge.table {
                refuse_target(name)?;
            }
            match &mut merge.source {
                TableFactor::Table { name, alias, .. } if is_cte(name) => {
                    let ident = match name.0.first() {
                        Some(ObjectNamePart::Identifier(ident)) => ident.clone(),
                        _ => return Ok(None),
                    };
                    let alias = alias.take().unwrap_or(TableAlias {
                        explicit: true,
                        name: ident.clone(),
                        columns: vec![],
                        at: None,
                    });
                    let Some(mut subquery) = select_all_from(&ident) else {
                        return Ok(None);
                    };
                    attach.query(&mut subquery);
                    merge.source = TableFactor::Derived {
                        lateral: false,
                        subquery: Box::new(subquery),
                        alias: Some(alias),
                        sample: None,
                    };
                }
                TableFactor::Derived { subquery, .. } => attach.query(subquery),
                _ => {}
            }
            let _ = merge.on.visit(&mut attach);
            for clause in &mut merge.clauses {
                let _ = clause.visit(&mut attach);
            }
        }
        Statement::Update(update) => {
            if let TableFactor::Table { name, .. } = &update.table.relation {
                refuse_target(name)?;
            }
            for a in &mut update.assignments {
                let _ = a.value.visit(&mut attach);
            }
            if let Some(selection) = &mut update.selection {
                let _ = selection.visit(&mut attach);
            }
        }
        Statement::Delete(delete) => {
            let (FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables)) =
                &delete.from;
            for t in tables {
                if let TableFactor::Table { name, .. } = &t.relation {
                    refuse_target(name)?;
                }
            }
            if let Some(selection) = &mut delete.selection {
                let _ = selection.visit(&mut attach);
            }
        }
        _ => return Ok(None),
    }
    Ok(Some(inner.to_string()))
}

/// `SELECT * FROM <name>`.
fn select_all_from(name: &Ident) -> Option<Query> {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::parser::Parser;
    Parser::new(&GenericDialect {})
        .try_with_sql(&format!("SELECT * FROM {name}"))
        .and_then(|mut p| p.parse_query())
        .ok()
        .map(|q| *q)
}

/// Puts the CTEs in front of each outermost subquery it visits.
struct Attach<'a> {
    ctes: &'a [Cte],
    names: Names,
    depth: usize,
}

impl Attach<'_> {
    /// `query` with the CTEs its own `WITH` does not define in front of it.
    fn query(&self, query: &mut Query) {
        let own: Vec<String> = query
            .with
            .iter()
            .flat_map(|w| w.cte_tables.iter().map(|c| self.names.of(&c.alias.name)))
            .collect();
        let outer: Vec<Cte> = self
            .ctes
            .iter()
            .filter(|c| !own.contains(&self.names.of(&c.alias.name)))
            .cloned()
            .collect();
        match &mut query.with {
            Some(with) => {
                let mut tables = outer;
                tables.append(&mut with.cte_tables);
                with.cte_tables = tables;
            }
            None => {
                query.with = Some(With {
                    with_token: AttachedToken::empty(),
                    recursive: false,
                    cte_tables: outer,
                })
            }
        }
    }
}

impl VisitorMut for Attach<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if self.depth == 0 {
            self.query(query);
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, _expr: &mut Expr) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}
