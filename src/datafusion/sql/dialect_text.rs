//! A statement's text read in the session's SQL dialect
//! (`datafusion.sql_parser.dialect`): its tokens, a cursor over them, its parse, and the
//! nesting check every statement passes before it is planned.

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::Statement;
use datafusion::sql::sqlparser::dialect::{dialect_from_str, Dialect, GenericDialect};
use datafusion::sql::sqlparser::parser::Parser;

use super::depth::{self, DEFAULT_MAX_EXPRESSION_DEPTH};
use super::tokens::{self, Cursor};
use crate::error::Result;

/// `statement`'s tokens in the session's SQL dialect, or `None` when it cannot be
/// tokenized.
pub(super) fn tokenize(ctx: &SessionContext, statement: &str) -> Option<Vec<tokens::Tok>> {
    tokens::tokenize(statement, session_dialect(ctx).as_ref())
}

/// The session's SQL dialect (`datafusion.sql_parser.dialect`; generic when unknown). It
/// is not `Send`: callers do not hold it across an await.
pub(super) fn session_dialect(ctx: &SessionContext) -> Box<dyn Dialect> {
    let state = ctx.state();
    dialect_from_str(state.config_options().sql_parser.dialect.as_ref())
        .unwrap_or_else(|| Box::new(GenericDialect {}))
}

/// How `dialect` quotes identifiers.
pub(super) fn quote_of(dialect: &dyn Dialect) -> char {
    if dialect.is_delimited_identifier_start('"') {
        '"'
    } else {
        '`'
    }
}

/// `statement` parsed in the session's dialect, `None` when it does not parse (DataFusion
/// then reports it).
pub(super) fn parse_statement(ctx: &SessionContext, statement: &str) -> Option<Statement> {
    Parser::new(session_dialect(ctx).as_ref())
        .try_with_sql(statement)
        .and_then(|mut p| p.parse_statement())
        .ok()
}

/// Refuse a statement (tokenized as `toks`) when its expressions may nest deeper than
/// `icefloe.max_expression_depth` (default [`DEFAULT_MAX_EXPRESSION_DEPTH`](super::DEFAULT_MAX_EXPRESSION_DEPTH) when the
/// option is not registered): see [`depth`](super::depth).
///
/// Errors: [`ErrorKind::InvalidArgument`](crate::ErrorKind), "expression too deep".
pub(super) fn check_expression_depth(ctx: &SessionContext, toks: &[tokens::Tok]) -> Result<()> {
    let state = ctx.state();
    let limit = state
        .config_options()
        .extensions
        .get::<crate::datafusion::IcefloeOptions>()
        .map_or(DEFAULT_MAX_EXPRESSION_DEPTH, |o| o.max_expression_depth);
    depth::check_depth(toks, limit)
}

/// A cursor over `text` tokenized in the session's SQL dialect, or `None` when it
/// cannot be tokenized.
pub(super) fn cursor<'a>(ctx: &SessionContext, text: &'a str) -> Option<Cursor<'a>> {
    let normalize = ctx
        .state()
        .config_options()
        .sql_parser
        .enable_ident_normalization;
    let dialect = session_dialect(ctx);
    let toks = tokens::tokenize(text, dialect.as_ref())?;
    Some(Cursor::new(text, toks, normalize).with_identifier_quote(quote_of(dialect.as_ref())))
}
