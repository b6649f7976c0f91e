//! `a IS [NOT] DISTINCT FROM b AND c` read as Spark (and the SQL standard) reads it:
//! `(a IS [NOT] DISTINCT FROM b) AND c`.
//!
//! sqlparser 0.62, which DataFusion 55 parses with, reads the right operand of `IS [NOT]
//! DISTINCT FROM` as a whole expression, `AND` and `OR` included, so
//! `WHERE b IS DISTINCT FROM true AND id = 3` was `b IS DISTINCT FROM (true AND id = 3)`:
//! other rows, with no error (a `DELETE` deleted them). In Spark's grammar the right
//! operand is a value expression (arithmetic and comparisons, not `AND`/`OR`), and an
//! operand in parentheses is kept as written.
//!
//! [`parenthesized`] finds each such comparison in the parsed statement, takes the first
//! term of its right operand (the leftmost operand of the `AND`/`OR` chain) as the
//! operand, and gives the statement's text with the comparison in parentheses (the
//! statement as sqlparser prints it; only a statement holding such a comparison is
//! rewritten).

use std::borrow::Cow;
use std::ops::ControlFlow;

use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{
    visit_expressions, visit_expressions_mut, BinaryOperator, Expr,
};

use crate::error::{Error, Result};

/// Whether `sql` may hold `DISTINCT FROM` (the words next to each other, in any case):
/// a cheap test before the statement is parsed, so that `SELECT DISTINCT …` and
/// `count(DISTINCT …)` cost no second parse. Text with a comment is always parsed (a
/// comment may stand between the two words).
fn may_hold_distinct_from(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    if !lower.contains("distinct") {
        return false;
    }
    if lower.contains("--") || lower.contains("/*") {
        return true;
    }
    lower.match_indices("distinct").any(|(at, word)| {
        let rest = lower[at + word.len()..].trim_start();
        rest.starts_with("from")
            && !rest[4..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
    })
}

/// `sql` with each `IS [NOT] DISTINCT FROM` whose right operand swallowed an `AND`/`OR`
/// read as Spark reads it (see the module docs); borrowed when there is none, or when the
/// statement does not parse (DataFusion then reports it).
///
/// Errors: [`crate::ErrorKind::Unsupported`] for such a comparison in a statement other
/// than sqlparser's (DataFusion's own `EXPLAIN`, `COPY`, `CREATE EXTERNAL TABLE`), which
/// would otherwise read other rows than Spark's: it names the comparison and asks for
/// the parentheses.
pub(super) fn parenthesized<'a>(ctx: &SessionContext, sql: &'a str) -> Result<Cow<'a, str>> {
    if !may_hold_distinct_from(sql) {
        return Ok(Cow::Borrowed(sql));
    }
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    let Ok(statement) = state.sql_to_statement(sql, &dialect) else {
        return Ok(Cow::Borrowed(sql));
    };
    let DFStatement::Statement(mut inner) = statement else {
        return match misread(&statement) {
            Some(expr) => Err(refused(&expr)),
            None => Ok(Cow::Borrowed(sql)),
        };
    };
    if misread(&DFStatement::Statement(inner.clone())).is_none() {
        return Ok(Cow::Borrowed(sql));
    }
    // post-order: a comparison inside another's right operand is settled first
    let _ = visit_expressions_mut(inner.as_mut(), |expr| {
        regrouped(expr);
        ControlFlow::<()>::Continue(())
    });
    let text = inner.to_string();
    // the printed statement must read as intended; else refused rather than misread
    if let Ok(again) = state.sql_to_statement(&text, &dialect) {
        if let Some(expr) = misread(&again) {
            return Err(refused(&expr));
        }
    }
    Ok(Cow::Owned(text))
}

/// The first comparison of `statement` whose right operand is an `AND`/`OR` chain not
/// in parentheses, as text.
fn misread(statement: &DFStatement) -> Option<String> {
    let check = |expr: &Expr| match first_term(expr) {
        Some(_) => ControlFlow::Break(expr.to_string()),
        None => ControlFlow::Continue(()),
    };
    let found = match statement {
        DFStatement::Statement(inner) => visit_expressions(inner.as_ref(), check),
        DFStatement::Explain(explain) => return misread(&explain.statement),
        DFStatement::CopyTo(copy) => match &copy.source {
            datafusion::sql::parser::CopyToSource::Query(query) => {
                visit_expressions(query.as_ref(), check)
            }
            _ => ControlFlow::Continue(()),
        },
        _ => ControlFlow::Continue(()),
    };
    match found {
        ControlFlow::Break(text) => Some(text),
        ControlFlow::Continue(()) => None,
    }
}

/// For `a IS [NOT] DISTINCT FROM <chain>` whose right operand is an `AND`/`OR` chain not
/// in parentheses: that chain's first term.
fn first_term(expr: &Expr) -> Option<&Expr> {
    let (Expr::IsDistinctFrom(_, right) | Expr::IsNotDistinctFrom(_, right)) = expr else {
        return None;
    };
    let mut first = right.as_ref();
    while let Expr::BinaryOp {
        left,
        op: BinaryOperator::And | BinaryOperator::Or,
        ..
    } = first
    {
        first = left.as_ref();
    }
    (!std::ptr::eq(first, right.as_ref())).then_some(first)
}

/// `expr` regrouped when it is a misread comparison: its right operand's chain with the
/// first term replaced by the comparison of the left operand with it, in parentheses.
fn regrouped(expr: &mut Expr) {
    if first_term(expr).is_none() {
        return;
    }
    let placeholder = Expr::Value(datafusion::sql::sqlparser::ast::Value::Null.into());
    let (negated, left, mut chain) = match std::mem::replace(expr, placeholder) {
        Expr::IsDistinctFrom(left, right) => (false, left, *right),
        Expr::IsNotDistinctFrom(left, right) => (true, left, *right),
        other => {
            *expr = other;
            return;
        }
    };
    let mut slot = &mut chain;
    while let Expr::BinaryOp {
        left: inner,
        op: BinaryOperator::And | BinaryOperator::Or,
        ..
    } = slot
    {
        slot = inner.as_mut();
    }
    let term = Box::new(std::mem::replace(
        slot,
        Expr::Value(datafusion::sql::sqlparser::ast::Value::Null.into()),
    ));
    let comparison = match negated {
        false => Expr::IsDistinctFrom(left, term),
        true => Expr::IsNotDistinctFrom(left, term),
    };
    *slot = Expr::Nested(Box::new(comparison));
    *expr = chain;
}

fn refused(expr: &str) -> Error {
    Error::unsupported(format!(
        "'{expr}' would be read as 'a IS DISTINCT FROM (b AND|OR …)' here, where Spark reads \
         '(a IS DISTINCT FROM b) AND|OR …': write the parentheses"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(sql: &str) -> Result<String> {
        parenthesized(&SessionContext::new(), sql).map(Cow::into_owned)
    }

    /// Only text that may hold `DISTINCT FROM` is parsed again; `SELECT DISTINCT` and
    /// `count(DISTINCT …)` are not, and a comment between the words still is.
    #[test]
    fn only_text_with_distinct_from_is_parsed_again() {
        for sql in [
            "SELECT * FROM t WHERE a IS DISTINCT FROM b",
            "delete from t where a is not distinct\n\t from b and c",
            "SELECT a IS DISTINCT /* why */ FROM b",
            "SELECT indistinct FROM t",
        ] {
            assert!(may_hold_distinct_from(sql), "{sql}");
        }
        for sql in [
            "SELECT DISTINCT a FROM t",
            "SELECT count(DISTINCT from_date) FROM t",
            "SELECT count(DISTINCT from$x) FROM t",
            "INSERT INTO t VALUES (1, 'a')",
        ] {
            assert!(!may_hold_distinct_from(sql), "{sql}");
        }
    }

    #[test]
    fn and_or_after_the_right_operand_stay_outside() {
        for (sql, read) in [
            (
                "SELECT * FROM t WHERE b IS DISTINCT FROM true AND id = 3",
                "SELECT * FROM t WHERE (b IS DISTINCT FROM true) AND id = 3",
            ),
            (
                "DELETE FROM t WHERE -x + 1 IS NOT DISTINCT FROM CAST(y AS INT) OR z AND w",
                "DELETE FROM t WHERE (-x + 1 IS NOT DISTINCT FROM CAST(y AS INT)) OR z AND w",
            ),
            // operands in parentheses, over lines
            (
                "SELECT 'é' FROM t\nWHERE (a) IS DISTINCT FROM (b)\n  AND c",
                "SELECT 'é' FROM t WHERE ((a) IS DISTINCT FROM (b)) AND c",
            ),
            // one in another's right operand
            (
                "SELECT a IS DISTINCT FROM b AND c IS DISTINCT FROM d OR e",
                "SELECT (a IS DISTINCT FROM b) AND (c IS DISTINCT FROM d) OR e",
            ),
            (
                "UPDATE t SET x = 1 WHERE a IS NOT DISTINCT FROM NULL OR b IS DISTINCT FROM 2 AND c",
                "UPDATE t SET x = 1 WHERE (a IS NOT DISTINCT FROM NULL) OR (b IS DISTINCT FROM 2) AND c",
            ),
        ] {
            assert_eq!(fixed(sql).expect(sql), read);
        }
    }

    #[test]
    fn comparisons_read_alike_are_left_alone() {
        for sql in [
            "SELECT * FROM t WHERE b IS DISTINCT FROM true",
            "SELECT * FROM t WHERE b IS DISTINCT FROM (true AND c)",
            "SELECT * FROM t WHERE (b IS DISTINCT FROM true) AND c",
            "SELECT * FROM t WHERE a = 'IS DISTINCT FROM x AND y'",
            "SELECT DISTINCT a FROM t WHERE a AND b",
            "SELECT * FROM t WHERE a IS DISTINCT FROM b = c",
        ] {
            assert_eq!(fixed(sql).expect(sql), sql);
        }
    }

    #[test]
    fn datafusion_statements_holding_one_are_refused() {
        let e =
            fixed("EXPLAIN SELECT * FROM t WHERE a IS DISTINCT FROM b AND c").expect_err("EXPLAIN");
        assert!(e.to_string().contains("write the parentheses"), "{e}");
    }
}
