//! Splitting SQL text into statements.
//!
//! The text is tokenized with the same sqlparser tokenizer (and dialect) DataFusion
//! parses with, so a `;` inside a string, a quoted identifier or a comment never ends a
//! statement. Each statement is then handed to DataFusion as the original text slice:
//! re-serialising a parsed AST could change the SQL.

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::dialect::{dialect_from_str, Dialect, GenericDialect};
use datafusion::sql::sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

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
        Err(e) if e.message.contains("Unterminated") || e.message.contains("EOF") => {
            Completeness::Incomplete
        }
        // Any other tokenizer error will not go away with more input: once the text
        // ends with `;`, run it so that the user sees the error.
        Err(_) if text.trim_end().ends_with(';') => Completeness::Complete,
        Err(_) => Completeness::Incomplete,
    }
}

/// Split `text` into statements at each `;` outside quotes and comments.
///
/// Returns slices of `text` without their terminating `;`; pieces holding only
/// whitespace and comments are dropped. If the text cannot be tokenized it is returned
/// whole, so that DataFusion reports the error.
pub fn split(text: &str, dialect: &dyn Dialect) -> Vec<String> {
    match Tokenizer::new(dialect, text).tokenize_with_location() {
        Ok(tokens) => split_tokens(text, &tokens).unwrap_or_else(|| whole(text)),
        Err(_) => whole(text),
    }
}

fn whole(text: &str) -> Vec<String> {
    if text.trim().is_empty() {
        Vec::new()
    } else {
        vec![text.to_string()]
    }
}

fn split_tokens(text: &str, tokens: &[TokenWithSpan]) -> Option<Vec<String>> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut statements = Vec::new();
    let mut start = 0;
    let mut has_content = false;
    for token in tokens {
        match token.token {
            Token::SemiColon => {
                let end = byte_offset(text, &line_starts, token.span.start)?;
                if has_content {
                    statements.push(text.get(start..end)?.trim().to_string());
                }
                // `;` is one byte long.
                start = end + 1;
                has_content = false;
            }
            ref t if is_blank(t) => {}
            _ => has_content = true,
        }
    }
    if has_content {
        statements.push(text.get(start..)?.trim().to_string());
    }
    Some(statements)
}

/// Byte offset of a tokenizer location (1-based line, 1-based column in chars).
fn byte_offset(text: &str, line_starts: &[usize], location: Location) -> Option<usize> {
    let line_start = *line_starts.get(usize::try_from(location.line).ok()?.checked_sub(1)?)?;
    let column = usize::try_from(location.column).ok()?.checked_sub(1)?;
    let line = text.get(line_start..)?;
    let offset = match line.char_indices().nth(column) {
        Some((i, _)) => i,
        None => line.len(),
    };
    let offset = line_start + offset;
    (text.as_bytes().get(offset) == Some(&b';')).then_some(offset)
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

    #[test]
    fn splits_on_semicolons_outside_quotes_and_comments() {
        let sql =
            "SELECT ';' AS a;\nSELECT \"x;y\" FROM t -- c;\n;\n/* ; */ SELECT 'é;' ; ; -- end";
        assert_eq!(
            split(sql, generic().as_ref()),
            vec![
                "SELECT ';' AS a",
                "SELECT \"x;y\" FROM t -- c;",
                "/* ; */ SELECT 'é;'"
            ]
        );
    }

    #[test]
    fn last_statement_needs_no_semicolon() {
        assert_eq!(
            split("SELECT 1; SELECT 2", generic().as_ref()),
            vec!["SELECT 1", "SELECT 2"]
        );
        assert!(split("  -- only a comment\n", generic().as_ref()).is_empty());
    }

    #[test]
    fn keeps_original_text() {
        let sql = "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION 'a;b'";
        assert_eq!(split(sql, generic().as_ref()), vec![sql]);
    }

    #[test]
    fn unterminated_input_is_returned_whole() {
        assert_eq!(
            split("SELECT 'abc; x", generic().as_ref()),
            vec!["SELECT 'abc; x"]
        );
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
}
