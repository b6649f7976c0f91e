//! The `sort_order` argument of `CALL system.rewrite_data_files`: Spark's `zorder(a, b,
//! …)` (the columns of a z-order rewrite) or a sort order text (`id DESC NULLS LAST,
//! bucket(4, s)`, terms as in `WRITE ORDERED BY`) read against the table's schema.

use datafusion::prelude::SessionContext;

use super::cursor;
use crate::error::{Error, Result};

/// The columns of a `sort_order` string `zorder(a, b, …)` (Spark's form of a z-order
/// rewrite, whose arguments are identifiers of its SQL grammar), or `None` when the string
/// is not a `zorder(…)`. Names are tokenized as SQL: unquoted names as written, quoted
/// ones (`` `a, b` `` or `"a ""b"""`, the quote doubled inside) unescaped, so a quoted
/// name may hold commas, spaces and parentheses; `a.b` is the dotted path `a.b`.
///
/// Errors: `zorder` mixed with other sort terms, an empty list or an empty name, a token
/// that is no name (an unquoted name with spaces), a quote left open, naming the string.
pub(super) fn zorder_columns(order: &str) -> Result<Option<Vec<String>>> {
    use datafusion::sql::sqlparser::dialect::GenericDialect;
    use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

    let trimmed = order.trim();
    let Some(head) = trimmed.get(..6) else {
        return Ok(None);
    };
    if !head.eq_ignore_ascii_case("zorder") || !trimmed[6..].trim_start().starts_with('(') {
        return Ok(None);
    }
    let bad = |why: &str| {
        Error::invalid_argument(format!(
            "rewrite_data_files sort_order '{order}': {why} (expected 'zorder(column, …)', \
             which cannot be combined with other sort terms)"
        ))
    };
    // GenericDialect quotes identifiers with both ` and "
    let tokens = Tokenizer::new(&GenericDialect {}, trimmed)
        .tokenize()
        .map_err(|e| bad(&format!("it does not tokenize ({e})")))?;
    let tokens: Vec<Token> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
        .collect();
    // tokens: `zorder` `(` … `)`
    let Some(inner) = tokens.get(2..) else {
        return Err(bad("no closing parenthesis at the end"));
    };
    let Some((Token::RParen, inner)) = inner.split_last() else {
        return Err(bad("no closing parenthesis at the end"));
    };
    let mut columns = vec![];
    for term in inner.split(|t| *t == Token::Comma) {
        let mut parts = vec![];
        for (i, token) in term.iter().enumerate() {
            match token {
                Token::Word(w) if i % 2 == 0 => parts.push(w.value.as_str()),
                Token::Period if i % 2 == 1 => {}
                Token::LParen | Token::RParen => {
                    return Err(bad("a zorder term takes column names only"))
                }
                other => {
                    return Err(bad(&format!(
                        "'{other}' is not part of a column name (a zorder term takes column \
                         names only; quote a name with spaces or commas as `a b`)"
                    )))
                }
            }
        }
        if parts.is_empty() || parts.iter().any(|p| p.is_empty()) || term.len() % 2 == 0 {
            return Err(bad("an empty column name"));
        }
        columns.push(parts.join("."));
    }
    Ok(Some(columns))
}

/// Spark's `sort_order` string (`term [ASC|DESC] [NULLS FIRST|LAST], …`, terms as in
/// `WRITE ORDERED BY`) as a sort order of `table`'s current schema (a `zorder(…)` is
/// read by [`zorder_columns`] first).
///
/// Errors: a term that does not parse, an unknown column or a transform its type does
/// not take, naming it.
pub(super) fn sort_order(
    ctx: &SessionContext,
    table: &crate::table::Table,
    order: &str,
) -> Result<crate::spec::sort_order::SortOrder> {
    let what = || format!("sort_order '{order}'");
    let mut c = cursor(ctx, order)
        .ok_or_else(|| Error::invalid_argument(format!("{} does not parse", what())))?;
    if c.at_end() {
        return Err(Error::invalid_argument(format!("{} is empty", what())));
    }
    let terms = super::alter_partition::sort_terms(&mut c)
        .and_then(|t| c.expect_end().map(|()| t))
        .map_err(|e| e.context(what()))?;
    terms.apply(table.metadata()).map_err(|e| e.context(what()))
}
