//! Exponent literals are doubles: [`execute`](super::execute) rewrites every number
//! literal written with an exponent (`1e300`, `2.5E-3`, `.5e1`) into a `DOUBLE` value
//! before DataFusion parses the statement, so it is the same double in every statement
//! kind (queries, `INSERT … VALUES`, `UPDATE`/`DELETE`/`MERGE` conditions, CTAS).
//!
//! This is Spark SQL's literal grammar: a number with an exponent is a `DOUBLE`, one
//! with a decimal point and no exponent (`1.5`, `-0.0`) an exact `DECIMAL`, one without
//! either an integer. icefloe's sessions parse plain decimals exactly
//! (`datafusion.sql_parser.parse_float_as_decimal = true`), under which DataFusion 55
//! would read `1e300` as a decimal of scale −300 and refuse it ("Decimal scale -300
//! exceeds the minimum supported scale"), and `2.5E-3` as the decimal `0.0025`.
//!
//! The literal becomes `CAST('<value>' AS DOUBLE)`, `<value>` the literal's double
//! printed so that it reads back as the same double (DataFusion folds the cast into a
//! `Float64` literal when it simplifies the plan). A literal below the smallest
//! subnormal double is `0.0` (`1e-400`, as Spark reads it); one beyond the largest
//! double (`1e400`) is an error, as in Spark. A sign before the literal stays the
//! SQL negation of the double (`-0e0` is the double `-0.0`).
//!
//! Left as written: the values in `OPTIONS (…)`, `TBLPROPERTIES (…)`,
//! `[DB]PROPERTIES (…)` (strings for the table, not expressions), hexadecimal and
//! suffixed numbers, and whole `SET`, `RESET`, `SHOW` and `CALL` statements (option
//! values and procedure arguments that icefloe or DataFusion read as text).

use std::borrow::Cow;

use datafusion::sql::sqlparser::tokenizer::Token;

use super::tokens::{first_word_is, is_keyword, Tok};
use crate::error::{Error, Result};

/// Keywords whose parenthesized group holds properties, not expressions.
const PROPERTY_GROUPS: &[&str] = &["OPTIONS", "TBLPROPERTIES", "DBPROPERTIES", "PROPERTIES"];

/// The double an exponent-form number literal stands for, or `None` when `text` is
/// not one (an integer, a plain decimal, a hexadecimal number).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the literal when it is beyond
/// the largest double.
pub(super) fn exponent_literal(text: &str) -> Result<Option<f64>> {
    let digits: Cow<'_, str> = if text.contains('_') {
        Cow::Owned(text.replace('_', ""))
    } else {
        Cow::Borrowed(text)
    };
    let is_exponent_form = {
        let (mantissa, exponent) = match digits.find(['e', 'E']) {
            Some(at) => (&digits[..at], &digits[at + 1..]),
            None => return Ok(None),
        };
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        !exponent.is_empty()
            && exponent.bytes().all(|b| b.is_ascii_digit())
            && !(int.is_empty() && frac.is_empty())
            && int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    };
    if !is_exponent_form {
        return Ok(None);
    }
    match digits.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(Some(value)),
        _ => Err(Error::invalid_argument(format!(
            "number literal {text} is outside the range of a DOUBLE (at most {:e})",
            f64::MAX
        ))),
    }
}

/// `text` (tokenized as `tokens`) with each exponent-form number literal replaced by
/// `CAST('<value>' AS DOUBLE)` (see the module docs); borrowed when nothing changes.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming a literal beyond the largest
/// double.
pub(super) fn exponent_literals_as_doubles<'a>(
    text: &'a str,
    tokens: &[Tok],
) -> Result<Cow<'a, str>> {
    if first_word_is(text, &["SET", "RESET", "SHOW", "CALL"]) {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while let Some(t) = tokens.get(i) {
        i += 1;
        match &t.token {
            Token::Word(_) if PROPERTY_GROUPS.iter().any(|kw| is_keyword(&t.token, kw)) => {
                if matches!(tokens.get(i).map(|t| &t.token), Some(Token::LParen)) {
                    i = after_group(tokens, i);
                }
            }
            Token::Number(n, false) => {
                if let Some(value) = exponent_literal(n)? {
                    out.push_str(&text[copied..t.start]);
                    // `{:?}` prints the shortest text that reads back as `value`
                    out.push_str(&format!("CAST('{value:?}' AS DOUBLE)"));
                    copied = t.end;
                }
            }
            _ => {}
        }
    }
    if copied == 0 {
        return Ok(Cow::Borrowed(text));
    }
    out.push_str(&text[copied..]);
    Ok(Cow::Owned(out))
}

/// The index after the `)` closing the group opened at `tokens[open]` (the end when it
/// is not closed).
fn after_group(tokens: &[Tok], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::GenericDialect;

    use super::*;
    use crate::datafusion::sql::tokens::tokenize;

    fn rewrite(sql: &str) -> String {
        let toks = tokenize(sql, &GenericDialect {}).expect("tokens");
        exponent_literals_as_doubles(sql, &toks)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .into_owned()
    }

    #[test]
    fn only_exponent_forms_are_doubles() {
        assert_eq!(exponent_literal("1e300").unwrap(), Some(1e300));
        assert_eq!(exponent_literal("2.5E-3").unwrap(), Some(0.0025));
        assert_eq!(exponent_literal(".5e1").unwrap(), Some(5.0));
        assert_eq!(exponent_literal("1.e2").unwrap(), Some(100.0));
        assert_eq!(exponent_literal("1_000e+3").unwrap(), Some(1e6));
        assert_eq!(exponent_literal("1e-400").unwrap(), Some(0.0));
        for not_one in ["1", "1.5", "0.0", "12345678901234567890123", ".5", "0x1E"] {
            assert_eq!(exponent_literal(not_one).unwrap(), None, "{not_one}");
        }
        let err = exponent_literal("1e400").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert!(err.to_string().contains("1e400"), "{err}");
    }

    #[test]
    fn rewrites_literals_not_property_values() {
        assert_eq!(
            rewrite("SELECT 1e300, -2.5E-3, 1.5, x1e3 FROM t WHERE d > 1e-400"),
            "SELECT CAST('1e300' AS DOUBLE), -CAST('0.0025' AS DOUBLE), 1.5, x1e3 FROM t \
             WHERE d > CAST('0.0' AS DOUBLE)"
        );
        assert_eq!(
            rewrite("INSERT INTO t VALUES (1, 1e3, 'a 1e3 string')"),
            "INSERT INTO t VALUES (1, CAST('1000.0' AS DOUBLE), 'a 1e3 string')"
        );
        let ddl = "CREATE TABLE t (d DOUBLE) TBLPROPERTIES ('k' = 1e3) AS SELECT 1e3";
        assert_eq!(
            rewrite(ddl),
            "CREATE TABLE t (d DOUBLE) TBLPROPERTIES ('k' = 1e3) AS SELECT CAST('1000.0' AS DOUBLE)"
        );
        for untouched in [
            "SET datafusion.execution.batch_size = 1e3",
            "CALL system.expire_snapshots(table => 't', retain_last => 1e3)",
            "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION 'x' OPTIONS ('k' 1e3)",
            "SELECT 1.5, 2, -0.0",
        ] {
            assert_eq!(rewrite(untouched), untouched);
        }
    }
}
