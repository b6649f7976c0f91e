//! The arguments of `CALL system.<procedure>(…)`, as Spark takes them: positional, or
//! named with `=>` (positional ones first), each a string, a whole number, `TRUE`/`FALSE`,
//! `TIMESTAMP '…'` (a zone-less one is UTC), `array(…)` or `map(k, v, …)`.
//!
//! Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind) for an unknown argument name,
//! too many arguments, an argument given twice, a positional one after a named one, or a
//! value that does not parse.

use datafusion::sql::sqlparser::tokenizer::Token;

use super::alter_table::long;
use super::tokens::Cursor;
use crate::catalog::parse_timestamp_ms;
use crate::error::{Error, Result};

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
        }
    }
}

/// The literals an argument takes, for messages.
const LITERALS: &str = "a string, a whole number, TRUE/FALSE, TIMESTAMP '…', array(…) or \
                        map(…)";

/// The `( … )` argument list, each value in the slot of its parameter.
pub(super) fn arguments(c: &mut Cursor<'_>, params: &[&str]) -> Result<Vec<Option<Value>>> {
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
        let value = value(c)?;
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

fn value(c: &mut Cursor<'_>) -> Result<Value> {
    if c.eat_keyword("TIMESTAMP") {
        let text = c.string()?;
        return parse_timestamp_ms(&text)
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
            items.push(value(c)?);
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
    match c.peek().map(|t| &t.token) {
        Some(Token::SingleQuotedString(_)) => return c.string().map(Value::Text),
        Some(Token::Number(..) | Token::Minus) => return long(c).map(Value::Number),
        _ => {}
    }
    // Spark's procedures take constants; icefloe evaluates no expression here
    if let (Some(Token::Word(w)), Some(Token::LParen)) =
        (c.peek().map(|t| &t.token), c.peek_at(1).map(|t| &t.token))
    {
        return Err(Error::unsupported(format!(
            "function call {}(…) as a procedure argument: give a literal ({LITERALS}), \
             e.g. TIMESTAMP '2026-01-01 00:00:00' or milliseconds since the epoch for a time",
            w.value
        )));
    }
    Err(c.expected(&format!("an argument value ({LITERALS})")))
}
