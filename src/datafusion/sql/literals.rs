//! Spark's number literals: [`execute`](super::execute) rewrites the number literals
//! Spark types differently from DataFusion before DataFusion parses the statement, so
//! each is the same value of the same type in every statement kind (queries, `INSERT …
//! VALUES`, `UPDATE`/`DELETE`/`MERGE` conditions, CTAS).
//!
//! This is Spark SQL's literal grammar (`SqlBaseLexer.g4`): a number with an exponent is
//! a `DOUBLE`, one with a decimal point and no exponent (`1.5`, `-0.0`) an exact
//! `DECIMAL`, one without either an integer; a suffix directly after the digits (no
//! space; any case) gives the type:
//!
//! | literal | Spark type | written for DataFusion as |
//! |---|---|---|
//! | `1e300`, `2.5E-3`, `.5e1` | `DOUBLE` | `CAST('<value>' AS DOUBLE)` |
//! | `1.5D`, `1d`, `1e3D` | `DOUBLE` | `CAST('<value>' AS DOUBLE)` |
//! | `1.5F`, `2f` | `FLOAT` | `CAST('<value>' AS FLOAT)` |
//! | `2.5BD`, `1e3BD` | `DECIMAL(p, s)`, `p` the digits and `s` those after the point (as Java's `BigDecimal`; `1e3BD` is `DECIMAL(4, 0)`) | `CAST('<value>' AS DECIMAL(p, s))` |
//! | `4S` (digits only) | `SMALLINT` | `CAST(4 AS SMALLINT)` |
//! | `3Y` (digits only) | `TINYINT` | `CAST(3 AS TINYINT)` |
//! | `100L` (sqlparser's tokenizer reads it), `100l` (digits only) | `BIGINT` | `100L` as is; `CAST(100 AS BIGINT)` |
//!
//! Without this, `SELECT 1.5D` was `SELECT 1.5 AS D` (a decimal column named `d`), and
//! `1.5D` elsewhere a parse error. icefloe's sessions parse plain decimals exactly
//! (`datafusion.sql_parser.parse_float_as_decimal = true`), under which DataFusion 55
//! would read `1e300` as a decimal of scale −300 and refuse it ("Decimal scale -300
//! exceeds the minimum supported scale"), and `2.5E-3` as the decimal `0.0025`.
//!
//! `<value>` is the literal's double (float) printed so that it reads back as the same
//! value (DataFusion folds the cast into a literal when it simplifies the plan). A
//! literal below the smallest subnormal is `0.0` (`1e-400`, as Spark reads it). A literal
//! outside its type's range (`1e400`, `1e39F`, `128Y`, `40000S`, a `BD` of more than 38
//! digits) is an error naming it, as in Spark; a sign before the literal stays the SQL
//! negation (`-0e0` is the double `-0.0`), except that `-128Y`, `-32768S` and
//! `-9223372036854775808l` are their type's least value, as in Spark. A suffix Spark's
//! grammar does not give the literal (`1.5S`, `1.5Y`) is left as written (Spark reads
//! it as an alias too), as is a word after a space (`SELECT 1.5 d`: the alias `d`).
//!
//! Left as written: the values in `OPTIONS (…)`, `TBLPROPERTIES (…)`,
//! `[DB]PROPERTIES (…)` (strings for the table, not expressions; a suffixed literal there
//! is refused by their parser, module `property_lists`, as Spark's grammar refuses it),
//! hexadecimal numbers,
//! and whole `RESET`, `SHOW` and `CALL` statements (a `CALL`'s arguments that are
//! expressions are rewritten as they are evaluated, module `constant`). A `SET key =
//! value` whose value is one suffixed literal (`SET icefloe.… = 10L`, `1.5D`) sets the
//! number it stands for (`10`, `1.5`): an option's value is text.

use std::borrow::Cow;

use datafusion::sql::sqlparser::keywords::Keyword;
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

/// `text` (tokenized as `tokens`) with each of Spark's number literals DataFusion types
/// otherwise written as the module docs' table gives; borrowed when nothing changes.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming a literal outside its type's
/// range.
pub(super) fn spark_number_literals<'a>(text: &'a str, tokens: &[Tok]) -> Result<Cow<'a, str>> {
    if first_word_is(text, &["SET"]) {
        return set_value(text, tokens);
    }
    if first_word_is(text, &["RESET", "SHOW", "CALL"]) {
        return Ok(Cow::Borrowed(text));
    }
    edit_numbers(text, tokens, |at, n, long| {
        let t = &tokens[at];
        if long {
            // sqlparser reads `100L` itself, and DataFusion types one beyond a `BIGINT` as
            // `UINT64` or a decimal (report T69 F5): checked here, left as written (the
            // least `BIGINT`, read with its sign, as a cast)
            let minus = unary_minus_before(tokens, at);
            let written = &text[minus.map_or(t.start, |m| m.start)..t.end];
            return Ok(Suffix::BigInt
                .literal(n, minus.is_some(), written)?
                .filter(|(_, signed)| *signed)
                .and_then(|(replacement, _)| {
                    Some(NumberEdit {
                        start: minus?.start,
                        end: t.end,
                        replacement,
                        suffix_taken: false,
                    })
                }));
        }
        // a suffix directly after the digits (sqlparser reads `L` itself)
        let suffixed = tokens
            .get(at + 1)
            .filter(|next| !long && next.start == t.end)
            .and_then(|next| Some((next, Suffix::of(&next.token)?)));
        Ok(match suffixed {
            Some((next, suffix)) => {
                let minus = unary_minus_before(tokens, at);
                let written = &text[t.start..next.end];
                suffix
                    .literal(n, minus.is_some(), written)?
                    .map(|(replacement, signed)| NumberEdit {
                        start: match (signed, minus) {
                            (true, Some(minus)) => minus.start,
                            _ => t.start,
                        },
                        end: next.end,
                        replacement,
                        suffix_taken: true,
                    })
            }
            // `{:?}` prints the shortest text that reads back as the value
            None => exponent_literal(n)?.map(|value| NumberEdit {
                start: t.start,
                end: t.end,
                replacement: format!("CAST('{value:?}' AS DOUBLE)"),
                suffix_taken: false,
            }),
        })
    })
}

/// `text`, a `SET key = value` statement (tokenized as `tokens`), with a value that is one
/// suffixed number literal (`10L`, `-2Y`, `3S`, `1.5D`, `2f`, `1.0BD`) written as the
/// number it stands for (`10`, `-2`, `3`, `1.5`, `2.0`, `1.0`): an option's value is
/// text, and a query reads the literal as that number; any other statement, or value,
/// as written.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming a literal outside its type's
/// range, as in a query.
fn set_value<'a>(text: &'a str, tokens: &[Tok]) -> Result<Cow<'a, str>> {
    let Some(eq) = tokens.iter().position(|t| t.token == Token::Eq) else {
        return Ok(Cow::Borrowed(text));
    };
    let mut value: Vec<&Tok> = tokens[eq + 1..]
        .iter()
        .filter(|t| t.token != Token::SemiColon)
        .collect();
    let minus = match value.first() {
        Some(t) if t.token == Token::Minus => Some(value.remove(0)),
        _ => None,
    };
    let (number, long, suffix) = match value.as_slice() {
        [t] => match &t.token {
            Token::Number(n, true) => (n, *t, Suffix::BigInt),
            _ => return Ok(Cow::Borrowed(text)),
        },
        [t, next] => match (&t.token, Suffix::of(&next.token)) {
            (Token::Number(n, false), Some(suffix)) if next.start == t.end => (n, *next, suffix),
            _ => return Ok(Cow::Borrowed(text)),
        },
        _ => return Ok(Cow::Borrowed(text)),
    };
    let start = minus.map_or(value[0].start, |m| m.start);
    let written = &text[start..long.end];
    // checked as a query checks it; `None`: a suffix Spark does not give this number
    if suffix.literal(number, minus.is_some(), written)?.is_none() {
        return Ok(Cow::Borrowed(text));
    }
    let sign = if minus.is_some() { "-" } else { "" };
    let plain = match suffix {
        Suffix::BigInt | Suffix::SmallInt | Suffix::TinyInt => format!("{sign}{number}"),
        Suffix::Double => match number.parse::<f64>() {
            Ok(v) => format!("{sign}{v:?}"),
            Err(_) => return Ok(Cow::Borrowed(text)),
        },
        Suffix::Float => match number.parse::<f32>() {
            Ok(v) => format!("{sign}{v:?}"),
            Err(_) => return Ok(Cow::Borrowed(text)),
        },
        Suffix::BigDecimal => match big_decimal(number) {
            Some((plain, _, _)) => format!("{sign}{plain}"),
            None => return Ok(Cow::Borrowed(text)),
        },
    };
    Ok(Cow::Owned(format!(
        "{}{plain}{}",
        &text[..start],
        &text[long.end..]
    )))
}

/// `text` (tokenized as `tokens`) with each `BIGINT` literal sqlparser reads itself
/// (`100L`: its number token marked long) written `CAST(100 AS BIGINT)`, as
/// [`spark_number_literals`] writes `100l`; borrowed when there is none. DataFusion plans
/// both forms as the same `BIGINT` value, but only the cast is told apart from an integer
/// literal without a suffix in the plan: the CTAS column types need that
/// (module `ctas_literal_types`). The values in property groups are left as written.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming a literal outside a `BIGINT`.
pub(super) fn long_literals_as_casts<'a>(text: &'a str, tokens: &[Tok]) -> Result<Cow<'a, str>> {
    edit_numbers(text, tokens, |at, n, long| {
        if !long {
            return Ok(None);
        }
        let t = &tokens[at];
        let minus = unary_minus_before(tokens, at);
        let written = &text[t.start..t.end];
        Ok(Suffix::BigInt
            .literal(n, minus.is_some(), written)?
            .map(|(replacement, signed)| NumberEdit {
                start: match (signed, minus) {
                    (true, Some(minus)) => minus.start,
                    _ => t.start,
                },
                end: t.end,
                replacement,
                suffix_taken: false,
            }))
    })
}

/// A rewrite of one number literal: the statement's bytes `start..end` replaced by
/// `replacement`; `suffix_taken` when the literal's suffix token is part of it.
struct NumberEdit {
    start: usize,
    end: usize,
    replacement: String,
    suffix_taken: bool,
}

/// `text` (tokenized as `tokens`) with each number token rewritten as `edit` says:
/// `edit(index of the token, its digits, whether sqlparser marked it long)` answers the
/// rewrite or `None` to keep it. The values in property groups (`TBLPROPERTIES (…)`,
/// `OPTIONS (…)`) are left as written, as they are option text. Borrowed when nothing
/// changes.
///
/// Errors: the first error of `edit`.
fn edit_numbers<'a>(
    text: &'a str,
    tokens: &[Tok],
    mut edit: impl FnMut(usize, &str, bool) -> Result<Option<NumberEdit>>,
) -> Result<Cow<'a, str>> {
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
            Token::Number(n, long) => {
                if let Some(e) = edit(i - 1, n, *long)? {
                    if e.suffix_taken {
                        i += 1;
                    }
                    out.push_str(&text[copied..e.start]);
                    out.push_str(&e.replacement);
                    copied = e.end;
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

/// Whether `token` is a suffix of Spark's number literals when it follows the digits
/// directly (`D`, `F`, `BD`, `S`, `Y` or `L`, unquoted, any case: [`Suffix`]).
pub(super) fn is_number_suffix(token: &Token) -> bool {
    Suffix::of(token).is_some()
}

/// A suffix of Spark's number literals (`SqlBaseLexer.g4`: `BIGINT_LITERAL`,
/// `SMALLINT_LITERAL`, `TINYINT_LITERAL`, `DOUBLE_LITERAL`, `FLOAT_LITERAL`,
/// `BIGDECIMAL_LITERAL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Suffix {
    Double,
    Float,
    BigDecimal,
    SmallInt,
    TinyInt,
    BigInt,
}

impl Suffix {
    /// The suffix `token` is: an unquoted word `D`, `F`, `BD`, `S`, `Y` or `L`, any case.
    fn of(token: &Token) -> Option<Self> {
        let Token::Word(w) = token else {
            return None;
        };
        if w.quote_style.is_some() {
            return None;
        }
        Some(match w.value.to_ascii_uppercase().as_str() {
            "D" => Self::Double,
            "F" => Self::Float,
            "BD" => Self::BigDecimal,
            "S" => Self::SmallInt,
            "Y" => Self::TinyInt,
            "L" => Self::BigInt,
            _ => return None,
        })
    }

    /// The SQL DataFusion reads as the literal `number` with this suffix (`written`, for
    /// messages), and whether it holds the sign (`negated`: a unary minus is before it;
    /// the least value of an integer type is read with its sign). `None` when Spark's
    /// grammar gives `number` no such suffix (`1.5S`, `1_000D`).
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] naming `written` when it is outside
    /// its type's range.
    fn literal(self, number: &str, negated: bool, written: &str) -> Result<Option<(String, bool)>> {
        let out_of_range = |what: &str| {
            Error::invalid_argument(format!(
                "number literal {written} is outside the range of a {what}"
            ))
        };
        let integer = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
        let (name, max) = match self {
            Self::SmallInt => ("SMALLINT", i16::MAX as u128),
            Self::TinyInt => ("TINYINT", i8::MAX as u128),
            Self::BigInt => ("BIGINT", i64::MAX as u128),
            Self::Double | Self::Float | Self::BigDecimal => {
                if number.contains('_') {
                    return Ok(None);
                }
                return Ok(Some((self.fractional(number, &out_of_range)?, false)));
            }
        };
        if !integer {
            return Ok(None);
        }
        match number.parse::<u128>() {
            Ok(v) if v <= max => Ok(Some((format!("CAST({number} AS {name})"), false))),
            Ok(v) if negated && v == max + 1 => {
                Ok(Some((format!("CAST(-{number} AS {name})"), true)))
            }
            _ => Err(out_of_range(name)),
        }
    }

    /// `number` (digits, a point, an exponent) as a `D`, `F` or `BD` literal.
    fn fractional(self, number: &str, out_of_range: &dyn Fn(&str) -> Error) -> Result<String> {
        match self {
            Self::Float => match number.parse::<f32>() {
                Ok(v) if v.is_finite() => Ok(format!("CAST('{v:?}' AS FLOAT)")),
                _ => Err(out_of_range("FLOAT")),
            },
            Self::BigDecimal => {
                let (value, precision, scale) =
                    big_decimal(number).ok_or_else(|| out_of_range("DECIMAL (38 digits)"))?;
                Ok(format!("CAST('{value}' AS DECIMAL({precision}, {scale}))"))
            }
            _ => match number.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(format!("CAST('{v:?}' AS DOUBLE)")),
                _ => Err(out_of_range("DOUBLE")),
            },
        }
    }
}

/// The most digits of a Spark decimal.
const MAX_DECIMAL_PRECISION: i64 = 38;

/// `number` (`digits[.digits][e[+-]digits]`) as Java's `BigDecimal` reads it and Spark
/// types it (`DecimalType.fromDecimal`, no negative scale): its plain text, precision
/// and scale. `None` beyond 38 digits.
fn big_decimal(number: &str) -> Option<(String, i64, i64)> {
    let (mantissa, exponent) = match number.find(['e', 'E']) {
        Some(at) => (&number[..at], number[at + 1..].parse::<i64>().ok()?),
        None => (number, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits = format!("{int}{frac}");
    let mut scale = (frac.len() as i64).checked_sub(exponent)?;
    if scale < 0 {
        if -scale > MAX_DECIMAL_PRECISION {
            return None;
        }
        digits.push_str(&"0".repeat(scale.unsigned_abs() as usize));
        scale = 0;
    }
    let significant = digits.trim_start_matches('0').len() as i64;
    let precision = significant.max(scale).max(1);
    if precision > MAX_DECIMAL_PRECISION {
        return None;
    }
    let scale_digits = scale as usize;
    while digits.len() <= scale_digits {
        digits.insert(0, '0');
    }
    let (whole, fraction) = digits.split_at(digits.len() - scale_digits);
    let text = match fraction.is_empty() {
        true => whole.to_string(),
        false => format!("{whole}.{fraction}"),
    };
    Some((text, precision, scale))
}

/// The `-` before `tokens[at]` when it is a unary minus (at the start, or after an
/// operator, `(`, `,` or a keyword; not after a value or a name).
fn unary_minus_before(tokens: &[Tok], at: usize) -> Option<&Tok> {
    let minus = tokens.get(at.checked_sub(1)?)?;
    if minus.token != Token::Minus {
        return None;
    }
    let operand = at
        .checked_sub(2)
        .and_then(|b| tokens.get(b))
        .is_some_and(|before| match &before.token {
            Token::Word(w) => w.quote_style.is_some() || w.keyword == Keyword::NoKeyword,
            Token::Number(..) | Token::RParen | Token::RBracket => true,
            other => super::tokens::string_literal(other).is_some(),
        });
    (!operand).then_some(minus)
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
        spark_number_literals(sql, &toks)
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
        assert_eq!(big_decimal("2.5"), Some(("2.5".to_string(), 2, 1)));
        assert_eq!(big_decimal("1e3"), Some(("1000".to_string(), 4, 0)));
        assert_eq!(big_decimal("0.05"), Some(("0.05".to_string(), 2, 2)));
        assert_eq!(big_decimal("0"), Some(("0".to_string(), 1, 0)));
        assert_eq!(big_decimal("1e-40"), None);
        assert_eq!(big_decimal("1e40"), None);
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
        // Spark's suffixes, directly after the digits only
        assert_eq!(
            rewrite("SELECT 1.5D, 1e3d, 2f, 4S, -128Y, 2 - 3y, 2.5BD, 1e-3bd, 7l, 1.5 d, 1.5S, 9L"),
            "SELECT CAST('1.5' AS DOUBLE), CAST('1000.0' AS DOUBLE), CAST('2.0' AS FLOAT), \
             CAST(4 AS SMALLINT), CAST(-128 AS TINYINT), 2 - CAST(3 AS TINYINT), \
             CAST('2.5' AS DECIMAL(2, 1)), CAST('0.001' AS DECIMAL(3, 3)), \
             CAST(7 AS BIGINT), 1.5 d, 1.5S, 9L"
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

    /// `100L`, which sqlparser reads itself, beyond a `BIGINT` is an error naming it as
    /// written (DataFusion typed it `UINT64` or a decimal: report T69 F5); the least
    /// `BIGINT` is read with its sign, as a cast.
    #[test]
    fn long_literals_beyond_a_bigint_are_errors() {
        for (sql, written) in [
            ("SELECT 9223372036854775808L", "9223372036854775808L"),
            ("SELECT -9223372036854775809L", "-9223372036854775809L"),
            ("SELECT 18446744073709551616L AS z", "18446744073709551616L"),
        ] {
            let toks = tokenize(sql, &GenericDialect {}).expect("tokens");
            let e = spark_number_literals(sql, &toks).expect_err(sql);
            assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
            assert!(
                e.to_string().contains(&format!(
                    "number literal {written} is outside the range of a BIGINT"
                )),
                "{e}"
            );
        }
        assert_eq!(
            rewrite("SELECT 9223372036854775807L, -9223372036854775808L, - 5L"),
            "SELECT 9223372036854775807L, CAST(-9223372036854775808 AS BIGINT), - 5L"
        );
    }
}
