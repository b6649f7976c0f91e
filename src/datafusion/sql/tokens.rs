//! A cursor over a statement's sqlparser tokens, each with its byte range in the text,
//! for the few statements [`super::execute`] parses itself.

use std::ops::Range;

use datafusion::sql::sqlparser::dialect::Dialect;
use datafusion::sql::sqlparser::tokenizer::{Location, Token, Tokenizer};

use crate::error::{Error, Result};

/// A token and where it is in the statement text (bytes, end exclusive).
#[derive(Debug, Clone)]
pub(super) struct Tok {
    pub token: Token,
    pub start: usize,
    pub end: usize,
}

/// The first word of `text` after whitespace and comments, uppercased, when it is one of
/// `words` (a cheap check before tokenizing the whole statement).
pub(super) fn first_word_is(text: &str, words: &[&str]) -> bool {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
        } else {
            break;
        }
    }
    let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
    words.iter().any(|w| w.eq_ignore_ascii_case(&word))
}

/// The statement's tokens without whitespace and comments, or `None` when it cannot be
/// tokenized (DataFusion then reports the error).
pub(super) fn tokenize(text: &str, dialect: &dyn Dialect) -> Option<Vec<Tok>> {
    let tokens = Tokenizer::new(dialect, text)
        .tokenize_with_location()
        .ok()?;
    let mut locator = Locator::new(text);
    tokens
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF))
        .map(|t| {
            Some(Tok {
                start: locator.seek(t.span.start)?,
                end: locator.seek(t.span.end)?,
                token: t.token,
            })
        })
        .collect()
}

/// Turns tokenizer locations (1-based line, 1-based column in chars) into byte offsets,
/// moving forward through the text: linear in the text for locations in order.
pub(super) struct Locator<'a> {
    text: &'a str,
    line: u64,
    column: u64,
    byte: usize,
}

impl<'a> Locator<'a> {
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            line: 1,
            column: 1,
            byte: 0,
        }
    }

    pub fn seek(&mut self, to: Location) -> Option<usize> {
        if (to.line, to.column) < (self.line, self.column) {
            *self = Self::new(self.text);
        }
        while (self.line, self.column) < (to.line, to.column) {
            let c = self.text.get(self.byte..)?.chars().next()?;
            self.byte += c.len_utf8();
            if c == '\n' {
                self.line += 1;
                self.column = 1;
            } else {
                self.column += 1;
            }
        }
        Some(self.byte)
    }
}

/// Whether `token` is the unquoted keyword `kw` (any case).
pub(super) fn is_keyword(token: &Token, kw: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
}

/// A cursor over a statement's tokens.
#[derive(Debug, Clone)]
pub(super) struct Cursor<'a> {
    text: &'a str,
    toks: Vec<Tok>,
    pos: usize,
    /// Lowercase unquoted identifiers (DataFusion's `enable_ident_normalization`).
    normalize: bool,
    /// How the dialect quotes identifiers.
    quote: char,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str, toks: Vec<Tok>, normalize: bool) -> Self {
        Self {
            text,
            toks,
            pos: 0,
            normalize,
            quote: '"',
        }
    }

    /// Quote identifiers with `quote` in SQL made from this statement.
    pub fn with_identifier_quote(mut self, quote: char) -> Self {
        self.quote = quote;
        self
    }

    /// How the dialect quotes identifiers.
    pub fn identifier_quote(&self) -> char {
        self.quote
    }

    /// A cursor over the tokens in `range` (token indexes) of this one.
    pub fn sub(&self, range: Range<usize>) -> Cursor<'a> {
        Cursor::new(
            self.text,
            self.toks
                .get(range)
                .map(<[Tok]>::to_vec)
                .unwrap_or_default(),
            self.normalize,
        )
    }

    pub fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    pub fn peek_at(&self, ahead: usize) -> Option<&Tok> {
        self.toks.get(self.pos + ahead)
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    pub fn advance(&mut self) -> Option<&Tok> {
        let t = self.toks.get(self.pos);
        self.pos += 1;
        t
    }

    /// Byte offset where the current token starts (the text's length at the end).
    pub fn offset(&self) -> usize {
        self.peek().map_or(self.text.len(), |t| t.start)
    }

    /// Byte offset where the previous token ends.
    pub fn prev_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.toks.get(i))
            .map_or(0, |t| t.end)
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    pub fn peek_keyword(&self, kw: &str) -> bool {
        self.peek().is_some_and(|t| is_keyword(&t.token, kw))
    }

    /// Consume the keywords `kws` if the next tokens are exactly these.
    pub fn eat_keywords(&mut self, kws: &[&str]) -> bool {
        let all = kws
            .iter()
            .enumerate()
            .all(|(i, kw)| self.peek_at(i).is_some_and(|t| is_keyword(&t.token, kw)));
        if all {
            self.pos += kws.len();
        }
        all
    }

    pub fn eat_keyword(&mut self, kw: &str) -> bool {
        self.eat_keywords(&[kw])
    }

    pub fn eat(&mut self, token: &Token) -> bool {
        let found = self.peek().is_some_and(|t| &t.token == token);
        if found {
            self.pos += 1;
        }
        found
    }

    /// What the current token is, for messages.
    pub fn found(&self) -> String {
        self.peek().map_or_else(
            || "end of statement".to_string(),
            |t| format!("'{}'", t.token),
        )
    }

    /// The error "expected `what`" at the current token.
    pub fn expected(&self, what: &str) -> Error {
        Error::invalid_argument(format!("expected {what}, found {}", self.found()))
    }

    pub fn expect_keyword(&mut self, kw: &str) -> Result<()> {
        if self.eat_keyword(kw) {
            Ok(())
        } else {
            Err(self.expected(kw))
        }
    }

    pub fn expect(&mut self, token: &Token) -> Result<()> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{token}'")))
        }
    }

    pub fn expect_end(&self) -> Result<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.expected("end of statement"))
        }
    }

    /// An identifier: unquoted ones lowercased when normalizing, quoted ones as written.
    pub fn identifier(&mut self) -> Result<String> {
        match self.peek().map(|t| &t.token) {
            Some(Token::Word(w)) => {
                let name = if w.quote_style.is_none() && self.normalize {
                    w.value.to_lowercase()
                } else {
                    w.value.clone()
                };
                self.pos += 1;
                Ok(name)
            }
            _ => Err(self.expected("a name")),
        }
    }

    /// A dotted name: `a`, `a.b`, `"x".y.z`.
    pub fn object_name(&mut self) -> Result<Vec<String>> {
        let mut parts = vec![self.identifier()?];
        while self.eat(&Token::Period) {
            parts.push(self.identifier()?);
        }
        Ok(parts)
    }

    /// A string literal: single-quoted, or double-quoted as Spark reads `"…"` where only
    /// a string may stand ([`string_literal`]).
    pub fn string(&mut self) -> Result<String> {
        match self.peek().and_then(|t| string_literal(&t.token)) {
            Some(s) => {
                let s = s.to_string();
                self.pos += 1;
                Ok(s)
            }
            None => Err(self.expected("a quoted string")),
        }
    }

    /// A non-negative integer literal.
    pub fn number(&mut self) -> Result<u32> {
        match self.peek().map(|t| &t.token) {
            Some(Token::Number(n, _)) => {
                let n = n
                    .parse()
                    .map_err(|_| Error::invalid_argument(format!("expected a count, found {n}")))?;
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.expected("a number")),
        }
    }

    /// At `(`: skip to after the matching `)`; returns the token indexes inside.
    pub fn group(&mut self) -> Result<Range<usize>> {
        let open = self.pos;
        self.expect(&Token::LParen)?;
        let close = closing(&self.toks, open)
            .ok_or_else(|| Error::invalid_argument("unbalanced parentheses"))?;
        self.pos = close + 1;
        Ok(open + 1..close)
    }
}

/// The text of `token` when it is a string literal where only a string may stand (a
/// `COMMENT`, a property key or value, a `LOCATION`, a procedure argument): `'…'`, or
/// `"…"`, which Spark reads as a string literal (its default, unless
/// `spark.sql.ansi.doubleQuotedIdentifiers`) and DataFusion's dialects as a quoted
/// identifier (or, in the MySQL and Hive dialects, a double-quoted string); also the
/// other string literals DataFusion's tokenizer reads (`$$…$$`, `$tag$…$tag$`, `E'…'`,
/// `N'…'`, `U&'…'`), whose text is the string's value (a column `COMMENT $$…$$` was
/// dropped).
pub fn string_literal(token: &Token) -> Option<&str> {
    match token {
        Token::SingleQuotedString(s)
        | Token::DoubleQuotedString(s)
        | Token::EscapedStringLiteral(s)
        | Token::NationalStringLiteral(s)
        | Token::UnicodeStringLiteral(s) => Some(s),
        Token::DollarQuotedString(d) => Some(&d.value),
        Token::Word(w) if w.quote_style == Some('"') => Some(&w.value),
        _ => None,
    }
}

/// The maximal dotted names of `toks` (`a.b.c`, each part a word), in order: the indexes
/// of each name's words.
/// How deep a scan of a column's definition (from its type on) is inside `(…)`, `[…]`
/// and, in the type, `<…>` (`>>` closing two). After the type (a word of
/// [`COLUMN_OPTIONS`] outside brackets: `DEFAULT 1 < 2`, `COMMENT '…'`) `<` and `>` are
/// comparisons, not brackets.
///
/// [`COLUMN_OPTIONS`]: super::column_types::COLUMN_OPTIONS
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct TypeDepth {
    parens: usize,
    brackets: usize,
    angles: usize,
    /// Past the type, in the column's options.
    in_options: bool,
}

impl TypeDepth {
    /// Whether the scan is outside every bracket.
    pub fn is_top(&self) -> bool {
        self.parens == 0 && self.brackets == 0 && self.angles == 0
    }

    /// Step over `token`.
    pub fn step(&mut self, token: &Token) {
        if self.is_top()
            && super::column_types::COLUMN_OPTIONS
                .iter()
                .any(|o| is_keyword(token, o))
        {
            self.in_options = true;
        }
        let angles = !self.in_options;
        match token {
            Token::LParen => self.parens += 1,
            Token::RParen => self.parens = self.parens.saturating_sub(1),
            Token::LBracket => self.brackets += 1,
            Token::RBracket => self.brackets = self.brackets.saturating_sub(1),
            Token::Lt if angles => self.angles += 1,
            Token::Gt if angles => self.angles = self.angles.saturating_sub(1),
            Token::ShiftRight if angles => self.angles = self.angles.saturating_sub(2),
            _ => {}
        }
    }
}

/// The index of the `)` closing the `(` at index `open` of `toks`; `None` when no `(` is
/// there or it is not closed.
pub(super) fn closing(toks: &[Tok], open: usize) -> Option<usize> {
    if toks.get(open)?.token != Token::LParen {
        return None;
    }
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

pub(super) fn dotted_names(toks: &[Tok]) -> Vec<Vec<usize>> {
    let mut names = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !matches!(toks[i].token, Token::Word(_)) || (i > 0 && toks[i - 1].token == Token::Period)
        {
            i += 1;
            continue;
        }
        let mut parts = vec![i];
        let mut k = i;
        while toks.get(k + 1).is_some_and(|t| t.token == Token::Period)
            && toks
                .get(k + 2)
                .is_some_and(|t| matches!(t.token, Token::Word(_)))
        {
            k += 2;
            parts.push(k);
        }
        i = k + 1;
        names.push(parts);
    }
    names
}

/// `text` with each byte range of `edits` (in increasing order, not overlapping)
/// replaced by its text; `None` when there are no edits.
pub(super) fn splice(text: &str, edits: Vec<(std::ops::Range<usize>, String)>) -> Option<String> {
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut copied = 0;
    for (range, replacement) in edits {
        out.push_str(&text[copied..range.start]);
        out.push_str(&replacement);
        copied = range.end;
    }
    out.push_str(&text[copied..]);
    Some(out)
}
