//! Splitting SQL text into statements.
//!
//! The text is tokenized with the same sqlparser tokenizer (and dialect) DataFusion
//! parses with, so a `;` inside a string, a quoted identifier or a comment never ends a
//! statement. Each statement is then handed to DataFusion as the original text slice:
//! re-serialising a parsed AST could change the SQL.

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::{dialect_from_str, Dialect, GenericDialect};
use datafusion::sql::sqlparser::tokenizer::{
    Location, Token, TokenWithSpan, Tokenizer, TokenizerError,
};

/// The sqlparser dialect the session parses with (`datafusion.sql_parser.dialect`).
pub fn session_dialect(ctx: &SessionContext) -> Box<dyn Dialect> {
    dialect(ctx.state().config_options().sql_parser.dialect.as_ref())
}

fn dialect(name: &str) -> Box<dyn Dialect> {
    dialect_from_str(name).unwrap_or_else(|| Box::new(GenericDialect {}))
}

/// How far along the text typed into the REPL is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completeness {
    /// Only whitespace and comments: nothing to run.
    Empty,
    /// A statement has begun but does not end with `;` yet (or a string, quoted
    /// identifier or comment is still open).
    Incomplete,
    /// Ends with a `;` outside quotes and comments: ready to run.
    Complete,
}

/// Whether `text` ends with a `;` that terminates a statement.
pub fn completeness(text: &str, dialect: &dyn Dialect) -> Completeness {
    match Tokenizer::new(dialect, text).tokenize_with_location() {
        Ok(tokens) => match tokens.iter().rev().find(|t| !is_blank(&t.token)) {
            None => Completeness::Empty,
            Some(t) if t.token == Token::SemiColon => Completeness::Complete,
            Some(_) => Completeness::Incomplete,
        },
        // An unterminated string, identifier or comment: more input may close it.
        Err(e) if left_open(&e) => Completeness::Incomplete,
        // Any other tokenizer error will not go away with more input: once the text
        // ends with `;`, run it so that the user sees the error.
        Err(_) if text.trim_end().ends_with(';') => Completeness::Complete,
        Err(_) => Completeness::Incomplete,
    }
}

/// Whether `text` ends inside a string, quoted identifier or comment that it opened
/// (the tokenizer's "Unterminated …" error), where a further line is part of it.
pub fn in_open_quote(text: &str, dialect: &dyn Dialect) -> bool {
    matches!(
        Tokenizer::new(dialect, text).tokenize_with_location(),
        Err(e) if left_open(&e)
    )
}

/// Whether a tokenizer error is a string, quoted identifier or comment the text ends in.
fn left_open(e: &TokenizerError) -> bool {
    e.message.contains("Unterminated") || e.message.contains("EOF")
}

/// One statement of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// Its text, without the terminating `;` and surrounding whitespace.
    pub text: String,
    /// The line (1-based) of the script its first token (not a comment) is on.
    pub line: usize,
    /// Its beginning from that token, for messages: see [`excerpt`].
    pub head: String,
    /// Where `text` begins in the script: 1-based line and column (in characters), to
    /// move the parser's positions, counted from `text`, into the script
    /// ([`Self::in_script`]).
    pub begins: (usize, usize),
}

impl Statement {
    /// `message` with each parser position in it (sqlparser's `Line: L, Column: C`,
    /// counted from the start of [`Self::text`]) moved to where it is in the script,
    /// `offset` lines further down (where the script began in a longer input).
    pub fn in_script(&self, message: &str, offset: usize) -> String {
        const LINE: &str = "Line: ";
        const COLUMN: &str = ", Column: ";
        let (line0, column0) = self.begins;
        let mut out = String::with_capacity(message.len());
        let mut rest = message;
        while let Some(at) = rest.find(LINE) {
            let (before, from) = rest.split_at(at);
            out.push_str(before);
            let digits = |s: &str| s.chars().take_while(char::is_ascii_digit).count();
            let after_line = &from[LINE.len()..];
            let line_len = digits(after_line);
            let parsed = after_line[..line_len]
                .parse::<usize>()
                .ok()
                .and_then(|line| {
                    let tail = after_line[line_len..].strip_prefix(COLUMN)?;
                    let column_len = digits(tail);
                    let column = tail[..column_len].parse::<usize>().ok()?;
                    Some((line, column, &tail[column_len..]))
                });
            match parsed {
                Some((line, column, tail)) if line >= 1 => {
                    let column = if line == 1 {
                        column + column0 - 1
                    } else {
                        column
                    };
                    let line = line + line0 - 1 + offset;
                    out.push_str(&format!("{LINE}{line}{COLUMN}{column}"));
                    rest = tail;
                }
                _ => {
                    out.push_str(LINE);
                    rest = after_line;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// Split `text` into statements at each `;` outside quotes and comments.
///
/// Returns slices of `text` without their terminating `;`; pieces holding only
/// whitespace and comments are dropped. Where the text cannot be tokenized (an
/// unterminated string, say), the statements ended by a `;` before that point are split
/// as usual and the rest of the text, from the statement the error is in, is the last
/// statement, so that DataFusion reports the error at that statement's line (as psql
/// and DuckDB's CLI run the statements before it).
pub fn split(text: &str, dialect: &dyn Dialect) -> Vec<Statement> {
    let mut tokens = Vec::new();
    match Tokenizer::new(dialect, text).tokenize_with_location_into_buf(&mut tokens) {
        Ok(()) => split_tokens(text, &tokens).unwrap_or_else(|| whole(text, 0)),
        // `tokens` holds the tokens before the error
        Err(_) => split_before_error(text, &tokens).unwrap_or_else(|| whole(text, 0)),
    }
}

/// The statements ended by the last `;` of `tokens` (those before a tokenizer error),
/// then the rest of `text` as one statement; `None` when no `;` came before the error.
fn split_before_error(text: &str, tokens: &[TokenWithSpan]) -> Option<Vec<Statement>> {
    let last = tokens.iter().rposition(|t| t.token == Token::SemiColon)?;
    let end = byte_offset(text, &line_starts(text), tokens[last].span.start)? + 1;
    let mut statements = split_tokens(text.get(..end)?, &tokens[..=last])?;
    statements.extend(whole(text, end));
    Some(statements)
}

/// `text` from byte `from` on as one statement (none if it is blank).
fn whole(text: &str, from: usize) -> Vec<Statement> {
    let Some(rest) = text.get(from..) else {
        return Vec::new();
    };
    let trimmed = rest.trim_start();
    if trimmed.is_empty() {
        return Vec::new();
    }
    let skipped = from + rest.len() - trimmed.len();
    let line = 1 + text[..skipped].matches('\n').count();
    vec![Statement {
        text: rest.trim().to_string(),
        line,
        head: excerpt(trimmed),
        begins: location(text, skipped),
    }]
}

fn split_tokens(text: &str, tokens: &[TokenWithSpan]) -> Option<Vec<Statement>> {
    let line_starts = line_starts(text);
    let mut statements = Vec::new();
    let mut start = 0;
    // where the current statement's first token is: (line, byte offset)
    let mut first: Option<(usize, usize)> = None;
    let mut push = |start: usize, end: usize, first: (usize, usize)| -> Option<()> {
        let piece = text.get(start..end)?;
        let begins = start + (piece.len() - piece.trim_start().len());
        statements.push(Statement {
            text: piece.trim().to_string(),
            line: first.0,
            head: excerpt(text.get(first.1..end)?),
            begins: location(text, begins),
        });
        Some(())
    };
    for token in tokens {
        match token.token {
            Token::SemiColon => {
                let end = byte_offset(text, &line_starts, token.span.start)?;
                if text.as_bytes().get(end) != Some(&b';') {
                    return None;
                }
                if let Some(first) = first.take() {
                    push(start, end, first)?;
                }
                // `;` is one byte long.
                start = end + 1;
            }
            ref t if is_blank(t) => {}
            _ if first.is_none() => {
                let at = byte_offset(text, &line_starts, token.span.start)?;
                first = Some((usize::try_from(token.span.start.line).ok()?, at));
            }
            _ => {}
        }
    }
    if let Some(first) = first {
        push(start, text.len(), first)?;
    }
    Some(statements)
}

/// Characters of a statement [`excerpt`] shows.
const EXCERPT_CHARS: usize = 60;

/// The first 60 characters of `text` on one line (each run of whitespace as one space),
/// with `…` when there is more.
pub fn excerpt(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let one_line = words.join(" ");
    let mut chars = one_line.chars();
    let head: String = chars.by_ref().take(EXCERPT_CHARS).collect();
    if chars.next().is_some() {
        format!("{}…", head.trim_end())
    } else {
        head
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn location(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        1 + before.matches('\n').count(),
        1 + before[line_start..].chars().count(),
    )
}

/// The byte offset of each line of `text` (for [`byte_offset`]).
pub fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// Byte offset of a tokenizer location (1-based line, 1-based column in chars).
pub fn byte_offset(text: &str, line_starts: &[usize], location: Location) -> Option<usize> {
    let line_start = *line_starts.get(usize::try_from(location.line).ok()?.checked_sub(1)?)?;
    let column = usize::try_from(location.column).ok()?.checked_sub(1)?;
    let line = text.get(line_start..)?;
    let offset = match line.char_indices().nth(column) {
        Some((i, _)) => i,
        None => line.len(),
    };
    Some(line_start + offset)
}

fn is_blank(token: &Token) -> bool {
    matches!(token, Token::Whitespace(_) | Token::EOF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic() -> Box<dyn Dialect> {
        dialect("generic")
    }

    fn texts(sql: &str) -> Vec<String> {
        split(sql, generic().as_ref())
            .into_iter()
            .map(|s| s.text)
            .collect()
    }

    #[test]
    fn splits_on_semicolons_outside_quotes_and_comments() {
        let sql =
            "SELECT ';' AS a;\nSELECT \"x;y\" FROM t -- c;\n;\n/* ; */ SELECT 'é;' ; ; -- end";
        assert_eq!(
            texts(sql),
            vec![
                "SELECT ';' AS a",
                "SELECT \"x;y\" FROM t -- c;",
                "/* ; */ SELECT 'é;'"
            ]
        );
    }

    #[test]
    fn last_statement_needs_no_semicolon() {
        assert_eq!(texts("SELECT 1; SELECT 2"), vec!["SELECT 1", "SELECT 2"]);
        assert!(split("  -- only a comment\n", generic().as_ref()).is_empty());
    }

    #[test]
    fn keeps_original_text() {
        let sql = "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION 'a;b'";
        assert_eq!(texts(sql), vec![sql]);
    }

    #[test]
    fn unterminated_input_is_returned_whole() {
        assert_eq!(
            split("\n\n  SELECT 'abc; x", generic().as_ref()),
            vec![Statement {
                text: "SELECT 'abc; x".to_string(),
                line: 3,
                head: "SELECT 'abc; x".to_string(),
                begins: (3, 3),
            }]
        );
    }

    #[test]
    fn statements_before_an_unterminated_string_are_split() {
        let sql = "SELECT 1;\n-- c;\n  SELECT 'a;b' ;\n\n  SELECT 'abc; x;\nSELECT 2;";
        let split = split(sql, generic().as_ref());
        let pieces: Vec<_> = split.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            pieces,
            vec![
                "SELECT 1",
                "-- c;\n  SELECT 'a;b'",
                "SELECT 'abc; x;\nSELECT 2;"
            ]
        );
        assert_eq!(
            split.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![1, 3, 5]
        );
        assert_eq!(split[2].begins, (5, 3));
        // the tokenizer's position, counted from the last statement, back in the script
        assert_eq!(
            split[2].in_script("Unterminated string literal at Line: 1, Column: 8", 0),
            "Unterminated string literal at Line: 5, Column: 10"
        );
        // an error before any `;`: the whole text
        assert_eq!(
            texts("SELECT $$a; SELECT 1;"),
            vec!["SELECT $$a; SELECT 1;"]
        );
    }

    #[test]
    fn open_quotes_are_seen() {
        let g = generic();
        for open in [
            "SELECT 'a",
            "SELECT \"a",
            "SELECT 1 /* c",
            "SELECT $$a",
            "x 'a''",
        ] {
            assert!(in_open_quote(open, g.as_ref()), "{open}");
        }
        for closed in [
            "",
            "SELECT 'a'",
            "SELECT 1 -- 'c",
            "SELECT 1 /* 'c */",
            "SELECT",
        ] {
            assert!(!in_open_quote(closed, g.as_ref()), "{closed}");
        }
    }

    #[test]
    fn statements_know_their_line_and_beginning() {
        let sql = "-- setup\nSELECT 1;\n\n/* the long one */ SELECT   a,\n  b\nFROM t WHERE \
                   x = 'a;b' AND y > 2 AND z < 3 AND w = 'some long text here';\n\
                   SELECT 'é' -- no semicolon";
        let got: Vec<(usize, String)> = split(sql, generic().as_ref())
            .into_iter()
            .map(|s| (s.line, s.head))
            .collect();
        assert_eq!(
            got,
            vec![
                (2, "SELECT 1".to_string()),
                (
                    4,
                    "SELECT a, b FROM t WHERE x = 'a;b' AND y > 2 AND z < 3 AND w…".to_string()
                ),
                (7, "SELECT 'é' -- no semicolon".to_string()),
            ]
        );
        assert_eq!(excerpt(&"x".repeat(60)), "x".repeat(60));
        assert_eq!(excerpt(&"é".repeat(61)), format!("{}…", "é".repeat(60)));
    }

    #[test]
    fn completeness_of_repl_input() {
        let d = generic();
        let c = |s| completeness(s, d.as_ref());
        assert_eq!(c(""), Completeness::Empty);
        assert_eq!(c("  -- hello"), Completeness::Empty);
        assert_eq!(c("SELECT 1"), Completeness::Incomplete);
        assert_eq!(c("SELECT\n1;"), Completeness::Complete);
        assert_eq!(c("SELECT 1; -- done"), Completeness::Complete);
        assert_eq!(c("SELECT 1 -- not done;"), Completeness::Incomplete);
        assert_eq!(c("SELECT 'a;"), Completeness::Incomplete);
        assert_eq!(c("SELECT 'a;\nb';"), Completeness::Complete);
        assert_eq!(c("SELECT 1 /* ; "), Completeness::Incomplete);
        assert_eq!(c("SELECT \"a;"), Completeness::Incomplete);
    }

    /// The parser counts lines and columns from the statement's text; the messages name
    /// the script's (found by a tester: `)` on line 6 of a file was named as line 3).
    #[test]
    fn parser_positions_are_moved_into_the_script() {
        let sql = "SELECT 1;\n\n\n  SELECT 2,\n3 +\n)";
        let statements = split(sql, generic().as_ref());
        let second = &statements[1];
        assert_eq!(second.begins, (4, 3));
        // sqlparser's message for the text "SELECT 2,\n3 +\n)": `)` on its line 3
        let message = "SQL error: ParserError(\"Expected: an expression, found: ) at Line: 3, \
                       Column: 1\")";
        assert_eq!(
            second.in_script(message, 0),
            "SQL error: ParserError(\"Expected: an expression, found: ) at Line: 6, Column: 1\")"
        );
        // on the statement's first line the column moves too; a script piped in from
        // line 10 moves every line by 9
        assert_eq!(
            second.in_script("x at Line: 1, Column: 8 and Line: 2, Column: 2.", 9),
            "x at Line: 13, Column: 10 and Line: 14, Column: 2."
        );
        // other text that looks a little like a position is left as it is
        assert_eq!(
            second.in_script("Line: x, Line: 2 Column: 3, Line: 1, Column: ", 0),
            "Line: x, Line: 2 Column: 3, Line: 1, Column: "
        );
    }
}
