//! Spark's `INSERT` forms DataFusion's parser does not read, refused naming the form and
//! the way to write it here (DataFusion's own errors were the parser's `Expected: SELECT,
//! VALUES, or a subquery … found: BY` and `Query TABLE db.s not implemented yet`):
//!
//! - `INSERT INTO|OVERWRITE [TABLE] t [PARTITION (…)] BY NAME query` (Spark 3.5: the
//!   query's columns matched to the table's by name): write the column list,
//!   `INSERT INTO t (a, b) SELECT a, b …`, which matches by the names listed;
//! - `INSERT INTO|OVERWRITE [TABLE] t [PARTITION (…)] [(cols)] TABLE s` (Spark's `TABLE s`
//!   query, all of `s`): write `SELECT * FROM s`.

use datafusion::sql::sqlparser::tokenizer::Token;

use super::tokens::Cursor;
use crate::error::{Error, Result};

/// Refuse the `INSERT` at `c` when it is one of the module's forms; `Ok` for any other
/// statement (DataFusion or icefloe's `INSERT` planning report what else is wrong).
///
/// Errors: [`crate::ErrorKind::Unsupported`] naming the form, the target table as written
/// and the form to write instead.
pub(super) fn check(mut c: Cursor<'_>) -> Result<()> {
    if !c.eat_keyword("INSERT") {
        return Ok(());
    }
    let verb = if c.eat_keyword("INTO") {
        "INSERT INTO"
    } else if c.eat_keyword("OVERWRITE") {
        "INSERT OVERWRITE"
    } else {
        return Ok(());
    };
    c.eat_keyword("TABLE");
    let Ok(name) = c.object_name() else {
        return Ok(());
    };
    let table = name.join(".");
    // a partition clause and a column list (or a parenthesized query, after which
    // neither form can follow)
    if c.peek_keyword("PARTITION") && c.peek_at(1).is_some_and(|t| t.token == Token::LParen) {
        c.advance();
        if c.group().is_err() {
            return Ok(());
        }
    }
    if c.peek().is_some_and(|t| t.token == Token::LParen) && c.group().is_err() {
        return Ok(());
    }
    if c.eat_keywords(&["BY", "NAME"]) {
        return Err(Error::unsupported(format!(
            "{verb} {table} BY NAME: the columns of an INSERT's query are matched to the \
             table's by position; list the columns to match them by name: {verb} {table} \
             (a, b, …) SELECT a, b, …"
        )));
    }
    if c.eat_keyword("TABLE") {
        let source = c
            .object_name()
            .map_or_else(|_| "s".to_string(), |n| n.join("."));
        return Err(Error::unsupported(format!(
            "{verb} {table} … TABLE {source}: a TABLE query is not run here; write {verb} \
             {table} … SELECT * FROM {source}"
        )));
    }
    Ok(())
}
