//! Spark's property lists and the clauses around them, shared by `CREATE|REPLACE TABLE …
//! TBLPROPERTIES`, `ALTER TABLE … SET|UNSET TBLPROPERTIES`, `CREATE SCHEMA … WITH
//! DBPROPERTIES` and `ALTER NAMESPACE … SET|UNSET DBPROPERTIES`.
//!
//! The grammar is Spark 3.5's (`SqlBaseParser.g4`): `propertyList: '(' property (','
//! property)* ')'`, `property: propertyKey ('='? propertyValue)?`, `propertyKey:
//! identifier ('.' identifier)* | stringLit`, `propertyValue: INTEGER_VALUE |
//! DECIMAL_VALUE | booleanValue | stringLit`. As in Spark's `AstBuilder`
//! (`visitPropertyKey`, `visitPropertyValue`, `visitPropertyKeyValues`): an unquoted key is
//! kept as written (`write.delete.mode`, case kept), a boolean is `true` or `false`, a
//! number is its text (`1.5`), a key without a value is refused where values are set, and
//! a key given twice is refused (Spark's `DUPLICATE_KEY`).
//!
//! Reserved properties (Spark 3.5's `CatalogV2Util.NAMESPACE_RESERVED_PROPERTIES` and
//! `TABLE_RESERVED_PROPERTIES`, checked by `AstBuilder.cleanNamespaceProperties` and
//! `cleanTableProperties`, Spark's `UNSUPPORTED_FEATURE.SET_NAMESPACE_PROPERTY` and
//! `SET_TABLE_PROPERTY`) are refused in a property list, naming the clause that sets
//! them:
//!
//! - a namespace's `location` (the `LOCATION` clause, `ALTER NAMESPACE … SET LOCATION`)
//!   and `owner` (Spark sets it to the current user; icefloe sets none);
//! - a table's `location` (`LOCATION`, `ALTER TABLE … SET LOCATION`), `provider`
//!   (`USING`), `owner`, `external` (`CREATE EXTERNAL TABLE`) and `is_managed_location`.
//!
//! `comment` is reserved by Spark too but allowed in both lists (as Spark allows it): it
//! is the comment, and a `COMMENT` clause of the same statement wins over it.

use std::collections::HashSet;

use datafusion::sql::sqlparser::tokenizer::Token;

use super::literals::is_number_suffix;
use super::tokens::{string_literal, Cursor};
use crate::error::{Error, Result};

/// The namespace properties a property list may not set or unset, each with how it is
/// set instead (Spark 3.5's `cleanNamespaceProperties`).
const NAMESPACE_RESERVED: &[(&str, &str)] = &[
    ("location", "please use the LOCATION clause to specify it"),
    ("owner", "it will be set to the current user"),
];

/// The table properties a property list may not set or unset, each with how it is set
/// instead (Spark 3.5's `cleanTableProperties`).
const TABLE_RESERVED: &[(&str, &str)] = &[
    ("provider", "please use the USING clause to specify it"),
    ("location", "please use the LOCATION clause to specify it"),
    ("owner", "it will be set to the current user"),
    ("external", "please use CREATE EXTERNAL TABLE"),
    (
        "is_managed_location",
        "please remove it from the TBLPROPERTIES list",
    ),
];

/// Whether `key` is a reserved table property (not `comment`): what `SHOW CREATE TABLE`
/// leaves out of its `TBLPROPERTIES`, as Spark's does.
pub(super) fn is_reserved_table_property(key: &str) -> bool {
    TABLE_RESERVED.iter().any(|(k, _)| *k == key)
}

/// Refuse a reserved namespace property among `keys` (see the module docs).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the key and what sets it.
pub(super) fn check_namespace_keys<'k>(keys: impl IntoIterator<Item = &'k str>) -> Result<()> {
    check_keys(keys, NAMESPACE_RESERVED, "namespace")
}

/// Refuse a reserved table property among `keys` (see the module docs).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the key and what sets it.
pub(super) fn check_table_keys<'k>(keys: impl IntoIterator<Item = &'k str>) -> Result<()> {
    check_keys(keys, TABLE_RESERVED, "table")
}

fn check_keys<'k>(
    keys: impl IntoIterator<Item = &'k str>,
    reserved: &[(&str, &str)],
    what: &str,
) -> Result<()> {
    for key in keys {
        if let Some((_, instead)) = reserved.iter().find(|(k, _)| *k == key) {
            return Err(Error::invalid_argument(format!(
                "'{key}' is a reserved {what} property, {instead} (as Spark's \
                 UNSUPPORTED_FEATURE.SET_{}_PROPERTY)",
                what.to_uppercase()
            )));
        }
    }
    Ok(())
}

/// The clauses of one statement seen so far, to refuse one given twice (Spark's
/// `checkDuplicateClauses`, `DUPLICATE_CLAUSES`).
#[derive(Debug, Default)]
pub(super) struct Clauses(Vec<&'static str>);

impl Clauses {
    /// Note `clause` (`COMMENT`, `LOCATION`, `TBLPROPERTIES`, …).
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] when it was seen before.
    pub fn once(&mut self, clause: &'static str) -> Result<()> {
        if self.0.contains(&clause) {
            return Err(Error::invalid_argument(format!(
                "found duplicate clauses: {clause} (give it once)"
            )));
        }
        self.0.push(clause);
        Ok(())
    }
}

impl Cursor<'_> {
    /// The `(key [=] value, …)` list of a properties clause, in order.
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] for bad syntax, a key without a value
    /// or a key given twice, naming the key.
    pub fn properties(&mut self) -> Result<Vec<(String, String)>> {
        let mut out: Vec<(String, String)> = Vec::new();
        self.property_list(|c, key| {
            c.eat(&Token::Eq);
            if let Some(written) = c.suffixed_number() {
                return Err(Error::invalid_argument(format!(
                    "property value {written} of '{key}' is not a plain number, string or \
                     boolean: a number with a type suffix (L, Y, S, D, F, BD) is no property \
                     value, as in Spark; quote it ('{written}') to store it as written"
                )));
            }
            match c.property_value() {
                Some(value) => {
                    out.push((key, value));
                    Ok(())
                }
                None if c
                    .peek()
                    .is_some_and(|t| matches!(t.token, Token::Comma | Token::RParen)) =>
                {
                    Err(Error::invalid_argument(format!(
                        "values must be specified for key(s): '{key}'"
                    )))
                }
                None => Err(c.expected(&format!(
                    "a value for '{key}' (a quoted string, a number, true or false)"
                ))),
            }
        })?;
        Ok(out)
    }

    /// The `(key, …)` list of an `UNSET` clause, in order.
    ///
    /// Errors: [`crate::ErrorKind::InvalidArgument`] for bad syntax or a key given twice,
    /// naming the key.
    pub fn property_keys(&mut self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.property_list(|_, key| {
            out.push(key);
            Ok(())
        })?;
        Ok(out)
    }

    /// `(` property `,` … `)`: each key read, checked unique and handed to `rest` to read
    /// what follows it.
    fn property_list(
        &mut self,
        mut rest: impl FnMut(&mut Self, String) -> Result<()>,
    ) -> Result<()> {
        self.expect(&Token::LParen)?;
        if self.eat(&Token::RParen) {
            return Ok(());
        }
        let mut seen = HashSet::new();
        loop {
            let key = self.property_key()?;
            if !seen.insert(key.clone()) {
                return Err(Error::invalid_argument(format!(
                    "found duplicate keys '{key}'"
                )));
            }
            rest(self, key)?;
            if self.eat(&Token::RParen) {
                return Ok(());
            }
            self.expect(&Token::Comma)?;
        }
    }

    /// A quoted key, or an unquoted dotted one kept as written (`write.delete.mode`).
    fn property_key(&mut self) -> Result<String> {
        if let Some(s) = self.peek().and_then(|t| string_literal(&t.token)) {
            let key = s.to_string();
            self.advance();
            return Ok(key);
        }
        let mut parts = vec![self
            .word()
            .ok_or_else(|| self.expected("a property key (a quoted string or a dotted name)"))?];
        while self.eat(&Token::Period) {
            parts.push(
                self.word().ok_or_else(|| {
                    self.expected(&format!("a name after '{}.'", parts.join(".")))
                })?,
            );
        }
        Ok(parts.join("."))
    }

    /// A word as written (no case change): an unquoted name or a backquoted one.
    fn word(&mut self) -> Option<String> {
        match self.peek().map(|t| &t.token) {
            Some(Token::Word(w)) if w.quote_style.is_none_or(|q| q == '`') => {
                let word = w.value.clone();
                self.advance();
                Some(word)
            }
            _ => None,
        }
    }

    /// The number literal with a type suffix of Spark's (`10L`, `5Y`, `2s`, `1.5D`, `2F`,
    /// `1.0BD`: module `literals`) next, as written; `None`, consuming nothing, for
    /// anything else. Spark's `propertyValue` (`SqlBaseParser.g4`: an integer, a decimal,
    /// a boolean or a string) takes none of them: icefloe stored `10L` as `10` and read
    /// `5Y` as `5` followed by a stray `Y`.
    fn suffixed_number(&self) -> Option<String> {
        let t = self.peek()?;
        let Token::Number(_, long) = &t.token else {
            return None;
        };
        let end = if *long {
            t.end
        } else {
            // a suffix directly after the digits (sqlparser reads `L` itself)
            let next = self.peek_at(1)?;
            (next.start == t.end && is_number_suffix(&next.token)).then_some(next.end)?
        };
        self.text().get(t.start..end).map(str::to_string)
    }

    /// A string, a number (its text) or a boolean (`true`, `false`); `None`, consuming
    /// nothing, for anything else.
    fn property_value(&mut self) -> Option<String> {
        let value = match &self.peek()?.token {
            Token::Number(n, _) => n.clone(),
            Token::Word(w)
                if w.quote_style.is_none()
                    && (w.value.eq_ignore_ascii_case("true")
                        || w.value.eq_ignore_ascii_case("false")) =>
            {
                w.value.to_ascii_lowercase()
            }
            other => string_literal(other)?.to_string(),
        };
        self.advance();
        Some(value)
    }
}
