//! Spark's timestamp type names in expressions: `TIMESTAMP_NTZ '2024-01-01 00:00:00'`,
//! `CAST(x AS TIMESTAMP_NTZ)`, `x::TIMESTAMP_LTZ`.
//!
//! Spark SQL names a timestamp without a time zone `TIMESTAMP_NTZ` (Iceberg `timestamp`)
//! and one with `TIMESTAMP_LTZ` (Iceberg `timestamptz`). icefloe's DDL takes both as
//! column types ([`column_types`](super::column_types)), but DataFusion 55 refuses them
//! in an expression ("Unsupported SQL type TIMESTAMP_NTZ"), so a Spark filter such as
//! `WHERE ts = TIMESTAMP_NTZ '2024-01-01 00:00:00'` failed.
//!
//! [`datafusion_names`] writes them as DataFusion's names where they are a type: before a
//! string literal (a typed literal), after `::`, and after the `AS` of a `CAST` or
//! `TRY_CAST`. `TIMESTAMP_NTZ` becomes `TIMESTAMP` (DataFusion's timestamp without a zone)
//! and `TIMESTAMP_LTZ` becomes `TIMESTAMPTZ` (a timestamp in the session's
//! `datafusion.execution.time_zone`, as Spark reads one in its session zone; DataFusion 55
//! gives it no zone when the session has none, which compares with a `timestamptz` column
//! in UTC). A quoted name, or one used as an identifier (`SELECT x AS timestamp_ntz`), is
//! left as written.

use std::borrow::Cow;

use datafusion::sql::sqlparser::tokenizer::Token;

use super::tokens::{is_keyword, Tok};

/// Spark's name and DataFusion's for each type.
const NAMES: &[(&str, &str)] = &[
    ("TIMESTAMP_NTZ", "TIMESTAMP"),
    ("TIMESTAMP_LTZ", "TIMESTAMPTZ"),
];

/// Whether `text` may name one of the types (a cheap test before tokenizing).
pub(super) fn candidate(text: &str) -> bool {
    let upper = text.to_ascii_uppercase();
    NAMES.iter().any(|(spark, _)| upper.contains(spark))
}

/// Whether the `(` that opens the group holding `tokens[at]` follows `CAST` or
/// `TRY_CAST`.
fn inside_cast(tokens: &[Tok], at: usize) -> bool {
    let mut depth = 0usize;
    for i in (0..at).rev() {
        match tokens[i].token {
            Token::RParen => depth += 1,
            Token::LParen if depth == 0 => {
                return i > 0
                    && ["CAST", "TRY_CAST"]
                        .iter()
                        .any(|kw| is_keyword(&tokens[i - 1].token, kw));
            }
            Token::LParen => depth -= 1,
            _ => {}
        }
    }
    false
}

/// `text` (tokenized as `tokens`) with Spark's timestamp type names written as
/// DataFusion's where they are a type (see the module docs); borrowed when nothing
/// changes.
pub(super) fn datafusion_names<'a>(text: &'a str, tokens: &[Tok]) -> Cow<'a, str> {
    let mut out = String::new();
    let mut copied = 0;
    for (i, t) in tokens.iter().enumerate() {
        let Some((_, name)) = NAMES.iter().find(|(spark, _)| is_keyword(&t.token, spark)) else {
            continue;
        };
        let next = tokens.get(i + 1).map(|t| &t.token);
        let previous = i.checked_sub(1).map(|p| &tokens[p].token);
        let typed_literal = matches!(next, Some(Token::SingleQuotedString(_)));
        let double_colon = matches!(previous, Some(Token::DoubleColon));
        let cast_target = previous.is_some_and(|p| is_keyword(p, "AS"))
            && matches!(next, Some(Token::RParen))
            && inside_cast(tokens, i - 1);
        if typed_literal || double_colon || cast_target {
            out.push_str(&text[copied..t.start]);
            out.push_str(name);
            copied = t.end;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::GenericDialect;

    use super::*;
    use crate::datafusion::sql::tokens::tokenize;

    fn rewrite(sql: &str) -> String {
        let toks = tokenize(sql, &GenericDialect {}).expect("tokens");
        datafusion_names(sql, &toks).into_owned()
    }

    #[test]
    fn spark_timestamp_types_become_datafusion_types_where_they_are_types() {
        assert_eq!(
            rewrite("SELECT * FROM t WHERE ts = timestamp_ntz '2024-01-01 00:00:00'"),
            "SELECT * FROM t WHERE ts = TIMESTAMP '2024-01-01 00:00:00'"
        );
        assert_eq!(
            rewrite(
                "SELECT CAST(s AS TIMESTAMP_NTZ), TRY_CAST(s AS TIMESTAMP_LTZ), s::TIMESTAMP_NTZ"
            ),
            "SELECT CAST(s AS TIMESTAMP), TRY_CAST(s AS TIMESTAMPTZ), s::TIMESTAMP"
        );
        // identifiers, quoted names and strings stay
        for sql in [
            "SELECT x AS timestamp_ntz FROM t",
            "SELECT (SELECT x AS timestamp_ntz) FROM t",
            "SELECT \"TIMESTAMP_NTZ\" FROM t",
            "SELECT 'TIMESTAMP_NTZ' FROM t",
            "CREATE TABLE t (a TIMESTAMP_NTZ, b TIMESTAMP_LTZ)",
        ] {
            assert_eq!(rewrite(sql), sql);
        }
    }
}
