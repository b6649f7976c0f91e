//! The arguments of `CALL system.<procedure>(…)`, as Spark takes them: positional, or
//! named with `=>` (positional ones first), each a string, a whole number, `TRUE`/`FALSE`,
//! `TIMESTAMP '…'` (a zone-less one in the session's time zone, module `session_zone`),
//! `array(…)` or `map(k, v, …)`, or a constant
//! expression (`now() - INTERVAL '1' DAY`): Spark takes any foldable expression there and
//! evaluates it once; [`evaluate`] does so through DataFusion (module `constant`: a
//! timestamp, a date, a whole number, a string or a boolean; one that reads a table or is
//! volatile is refused).
//!
//! A `NULL` argument (or an expression whose value is NULL) is the parameter's default,
//! as if it were not given: Spark's procedures read a null argument so. A whole number
//! for a timestamp parameter is seconds since the epoch ([`epoch_seconds`]), as Spark
//! casts a `BIGINT` to the parameter's `TIMESTAMP` type.
//!
//! Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) for an unknown argument name,
//! too many arguments, an argument given twice, a positional one after a named one, a
//! value that does not parse, or an expression that is not a constant of those types.

use datafusion::common::ScalarValue;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::alter_table::long;
use super::constant::{self, constants, timestamp_ms, whole_number};
use super::session_zone::timestamp_text_ms;
use super::tokens::Cursor;
use crate::error::{Error, Result};
use datafusion::arrow::array::timezone::Tz;

/// A procedure argument's value; it displays as the SQL text of that value (messages
/// show what the user gave in the form they gave it, never Rust's debug form).
#[derive(Debug, Clone)]
pub(super) enum Value {
    Text(String),
    Number(i64),
    Bool(bool),
    /// `TIMESTAMP '…'`, ms since the epoch.
    Timestamp(i64),
    /// `array(…)`.
    Array(Vec<Value>),
    /// `map(k, v, …)`.
    Map(Vec<(String, String)>),
    /// Any other argument: the text of an expression, until [`evaluate`] replaces it
    /// with its value.
    Expression(String),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let quoted = |s: &str| format!("'{}'", s.replace('\'', "''"));
        match self {
            Value::Text(t) => f.write_str(&quoted(t)),
            Value::Number(n) => write!(f, "{n}"),
            Value::Bool(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            Value::Timestamp(ms) => match chrono::DateTime::from_timestamp_millis(*ms) {
                Some(t) => write!(f, "TIMESTAMP '{}'", t.format("%Y-%m-%d %H:%M:%S%.3f")),
                None => write!(f, "TIMESTAMP of {ms} ms"),
            },
            Value::Array(items) => {
                f.write_str("array(")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str(")")
            }
            Value::Map(pairs) => {
                f.write_str("map(")?;
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}, {}", quoted(k), quoted(v))?;
                }
                f.write_str(")")
            }
            Value::Expression(text) => f.write_str(text),
        }
    }
}

/// The literals an argument takes, for messages.
const LITERALS: &str = "a string, a whole number, TRUE/FALSE, TIMESTAMP '…', array(…) or \
                        map(…)";

/// The `( … )` argument list, each value in the slot of its parameter.
pub(super) fn arguments(
    c: &mut Cursor<'_>,
    params: &[&str],
    zone: Option<&Tz>,
) -> Result<Vec<Option<Value>>> {
    let mut out: Vec<Option<Value>> = vec![None; params.len()];
    c.expect(&Token::LParen)?;
    let (mut position, mut named) = (0, false);
    while !c.eat(&Token::RParen) {
        let slot = if matches!(c.peek_at(1).map(|t| &t.token), Some(Token::RArrow)) {
            let name = c.identifier()?;
            c.advance();
            named = true;
            params.iter().position(|p| *p == name).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "unknown argument '{name}' (expected {})",
                    params.join(", ")
                ))
            })?
        } else if named {
            return Err(Error::invalid_argument(
                "positional arguments cannot follow named ones",
            ));
        } else {
            position += 1;
            position - 1
        };
        let value = argument(c, zone)?;
        let Some(entry) = out.get_mut(slot) else {
            return Err(Error::invalid_argument(format!(
                "too many arguments (expected {})",
                params.join(", ")
            )));
        };
        if entry.replace(value).is_some() {
            return Err(Error::invalid_argument(format!(
                "argument '{}' given twice",
                params.get(slot).copied().unwrap_or_default()
            )));
        }
        if !c.eat(&Token::Comma) {
            c.expect(&Token::RParen)?;
            break;
        }
    }
    c.expect_end()?;
    Ok(out)
}

/// One argument: a literal, else the text of an expression up to the next `,` or `)`
/// outside parentheses ([`Value::Expression`]).
fn argument(c: &mut Cursor<'_>, zone: Option<&Tz>) -> Result<Value> {
    let mut depth = 0usize;
    let mut len = 0;
    loop {
        match c.peek_at(len).map(|t| &t.token) {
            None => return Err(c.expected("`)`")),
            Some(Token::LParen | Token::LBracket) => depth += 1,
            Some(Token::RParen | Token::RBracket | Token::Comma) if depth == 0 => break,
            Some(Token::RParen | Token::RBracket) => depth -= 1,
            _ => {}
        }
        len += 1;
    }
    let end = c.peek_at(len).map_or(c.text().len(), |t| t.start);
    let mut literal = c.clone();
    if let Ok(v) = value(&mut literal, zone) {
        if literal.offset() == end {
            *c = literal;
            return Ok(v);
        }
    }
    if len == 0 {
        return Err(c.expected(&format!("an argument value ({LITERALS})")));
    }
    let text = c
        .text()
        .get(c.offset()..end)
        .unwrap_or_default()
        .trim()
        .to_string();
    for _ in 0..len {
        c.advance();
    }
    Ok(Value::Expression(text))
}

/// Replace each [`Value::Expression`] of `values` (the arguments of `params`, in order)
/// by its value: the expressions are evaluated together, once, as module `constant`
/// evaluates them (`now()` one instant in all). A NULL value (`NULL`, `CAST(NULL AS
/// TIMESTAMP)`) leaves the argument out (`None`): the parameter's default.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming the argument and the
/// expression: it does not plan (DataFusion's reason), reads a table, is volatile, or is
/// of a type no procedure argument takes. A zone-less timestamp value is read in `zone`,
/// the session's time zone (module `session_zone`).
pub(super) async fn evaluate(
    ctx: &SessionContext,
    params: &[&str],
    values: &mut [Option<Value>],
    zone: Option<&Tz>,
) -> Result<()> {
    let mut slots = Vec::new();
    let mut texts = Vec::new();
    for (param, slot) in params.iter().zip(values.iter_mut()) {
        if let Some(Value::Expression(text)) = slot {
            texts.push(text.clone());
            slots.push((*param, slot));
        }
    }
    let scalars = constants(ctx, &texts).await.map_err(|e| {
        let (param, text) = match (slots.get(e.index), texts.get(e.index)) {
            (Some((param, _)), Some(text)) => (*param, text.as_str()),
            _ => ("", ""),
        };
        refusal(param, text, &e.why)
    })?;
    for (((param, slot), text), scalar) in slots.into_iter().zip(&texts).zip(scalars) {
        *slot = value_of(param, text, scalar, zone)?;
    }
    Ok(())
}

/// The error for argument `param` given as the expression `text`, refused for `why`.
fn refusal(param: &str, text: &str, why: &str) -> Error {
    Error::invalid_argument(format!(
        "{param} => {text}: {why}; a procedure argument is a literal ({LITERALS}) or a \
         constant expression such as now() - INTERVAL '1' DAY"
    ))
}

/// The argument `param` (the expression `text`) of value `scalar`; `None` when it is
/// NULL.
fn value_of(
    param: &str,
    text: &str,
    scalar: ScalarValue,
    zone: Option<&Tz>,
) -> Result<Option<Value>> {
    if scalar.is_null() {
        return Ok(None);
    }
    if let Some(ms) = timestamp_ms(&scalar) {
        let ms = super::session_zone::scalar_ms(&scalar, ms, zone)
            .ok_or_else(|| refusal(param, text, "the time is out of range"))?;
        return Ok(Some(Value::Timestamp(ms)));
    }
    if let Some(n) = whole_number(&scalar) {
        return Ok(Some(Value::Number(n)));
    }
    if let Some(s) = constant::text(&scalar) {
        return Ok(Some(Value::Text(s.to_string())));
    }
    match scalar {
        ScalarValue::Boolean(Some(b)) => Ok(Some(Value::Bool(b))),
        ScalarValue::UInt64(Some(n)) => Err(refusal(param, text, &format!("{n} is too large"))),
        other => Err(refusal(
            param,
            text,
            &format!(
                "its type {} is none a procedure argument takes",
                other.data_type()
            ),
        )),
    }
}

/// The seconds since the epoch beyond which (or before which) a whole number given for
/// a timestamp is out of the range Spark's `TIMESTAMP` holds: 0001-01-01T00:00:00Z and
/// 9999-12-31T23:59:59Z.
const EPOCH_SECONDS: std::ops::RangeInclusive<i64> = -62_135_596_800..=253_402_300_799;

/// A whole number `seconds` given for timestamp parameter `param`, as Spark casts a
/// `BIGINT` to `TIMESTAMP` (`longToTimestamp`: seconds since 1970-01-01T00:00:00Z), in
/// milliseconds since the epoch.
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) when the time would be
/// outside years 1 to 9999, e.g. milliseconds given for seconds (which Spark would read as
/// a time some 50,000 years ahead and so expire or remove everything).
pub(super) fn epoch_seconds(param: &str, seconds: i64) -> Result<i64> {
    if !EPOCH_SECONDS.contains(&seconds) {
        return Err(Error::invalid_argument(format!(
            "{param} => {seconds}: a whole number for a timestamp is seconds since the epoch \
             (as Spark casts a BIGINT to TIMESTAMP), and {seconds} seconds is outside years \
             1 to 9999; milliseconds? give {} or a TIMESTAMP '…'",
            seconds.div_euclid(1000)
        )));
    }
    Ok(seconds.saturating_mul(1000))
}

fn value(c: &mut Cursor<'_>, zone: Option<&Tz>) -> Result<Value> {
    if c.eat_keyword("TIMESTAMP") {
        let text = c.string()?;
        return timestamp_text_ms(&text, zone)
            .map(Value::Timestamp)
            .ok_or_else(|| {
                Error::invalid_argument(format!("TIMESTAMP '{text}' is not a timestamp"))
            });
    }
    if c.eat_keyword("TRUE") {
        return Ok(Value::Bool(true));
    }
    if c.eat_keyword("FALSE") {
        return Ok(Value::Bool(false));
    }
    if c.peek_keyword("ARRAY") || c.peek_keyword("MAP") {
        let is_map = c.eat_keyword("MAP");
        if !is_map {
            c.advance();
        }
        c.expect(&Token::LParen)?;
        let mut items = vec![];
        while !c.eat(&Token::RParen) {
            items.push(value(c, zone)?);
            if !c.eat(&Token::Comma) {
                c.expect(&Token::RParen)?;
                break;
            }
        }
        if !is_map {
            return Ok(Value::Array(items));
        }
        if items.len() % 2 != 0 {
            return Err(Error::invalid_argument("map(…) needs key, value pairs"));
        }
        let text = |v: &Value| match v {
            Value::Text(t) => Ok(t.clone()),
            Value::Number(n) => Ok(n.to_string()),
            Value::Bool(b) => Ok(b.to_string()),
            other => Err(Error::invalid_argument(format!(
                "map(…) keys and values are strings, got {other}"
            ))),
        };
        let pairs = items
            .chunks(2)
            .map(|kv| Ok((text(&kv[0])?, text(&kv[1])?)))
            .collect::<Result<_>>()?;
        return Ok(Value::Map(pairs));
    }
    if c.peek()
        .is_some_and(|t| super::tokens::string_literal(&t.token).is_some())
    {
        return c.string().map(Value::Text);
    }
    if let Some(Token::Number(..) | Token::Minus) = c.peek().map(|t| &t.token) {
        return long(c).map(Value::Number);
    }
    Err(c.expected(&format!("an argument value ({LITERALS})")))
}

/// Timestamp parameter `param`'s argument `value` in ms since the epoch: a `TIMESTAMP`
/// (already read), a whole number of seconds ([`epoch_seconds`]), or a string read as a
/// timestamp (a zone-less one in the session's zone `zone`).
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) naming `param` for a string
/// that is no timestamp, seconds out of range, or a value of another kind.
pub(super) fn timestamp_argument(param: &str, value: &Value, zone: Option<&Tz>) -> Result<i64> {
    match value {
        Value::Timestamp(ms) => Ok(*ms),
        Value::Number(seconds) => epoch_seconds(param, *seconds),
        Value::Text(t) => timestamp_text_ms(t, zone)
            .ok_or_else(|| Error::invalid_argument(format!("{param}: '{t}' is not a timestamp"))),
        other => Err(Error::invalid_argument(format!(
            "{param} must be a timestamp (TIMESTAMP '…' or seconds since the epoch), got \
             {other}"
        ))),
    }
}
