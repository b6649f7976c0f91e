//! The depth guard of [`execute`](super::execute): a statement whose expressions nest
//! deeper than `icefloe.max_expression_depth` fails with a clear "expression too deep"
//! error instead of overflowing the thread's stack.
//!
//! DataFusion builds, analyzes, optimizes and evaluates expressions recursively: a chain
//! of 2,000 `AND`/`OR` terms or `1 + 1 + …` is a tree 2,000 levels deep, and walking it
//! takes several KiB of stack per level (more in debug builds). On a thread with a small
//! stack (2 MiB, Tokio's and the Rust test harness's default) the process aborts. The
//! guard bounds the depth from the statement's tokens, before DataFusion parses it: in
//! each parenthesized group, the operators that chain (`AND`, `OR`, arithmetic, `||`,
//! bitwise) between two commas (or clause keywords) each add a level, a group adds
//! three, comparisons and other operators at most two. The bound is at least the real depth, so a statement
//! within the limit is never deeper.

use datafusion::sql::sqlparser::tokenizer::Token;

use super::tokens::{is_keyword, Tok};
use crate::error::{Error, Result};

/// The default of `icefloe.max_expression_depth`: what DataFusion plans and runs on a
/// 2 MiB stack in a debug build (a 200-level chain does; 300 levels overflow).
pub const DEFAULT_MAX_EXPRESSION_DEPTH: usize = 128;

/// Operators that chain, each adding a level to the expression tree.
fn chains(token: &Token) -> bool {
    matches!(
        token,
        Token::Plus
            | Token::Minus
            | Token::Mul
            | Token::Div
            | Token::Mod
            | Token::DuckIntDiv
            | Token::StringConcat
            | Token::Ampersand
            | Token::Pipe
            | Token::Caret
            | Token::ShiftLeft
            | Token::ShiftRight
    ) || is_keyword(token, "AND")
        || is_keyword(token, "OR")
}

/// Keywords that end one expression and start a sibling (a clause, a `CASE` arm, an
/// alias): the chain of operators before them does not continue after them.
const EXPRESSION_STARTS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "GROUP",
    "HAVING",
    "ORDER",
    "LIMIT",
    "OFFSET",
    "ON",
    "USING",
    "JOIN",
    "UNION",
    "INTERSECT",
    "EXCEPT",
    "SET",
    "VALUES",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "AS",
    "BY",
    "QUALIFY",
    "WINDOW",
    "RETURNING",
];

/// An upper bound on the depth of the expressions in `tokens` (see the module docs).
pub(super) fn depth_bound(tokens: &[Tok]) -> usize {
    // per open group: the depth it starts at, and the chaining operators of its
    // current comma-separated segment
    let mut groups: Vec<(usize, usize)> = vec![(0, 0)];
    let mut max = 0;
    for t in tokens {
        let (base, ops) = groups.last().copied().unwrap_or((0, 0));
        match &t.token {
            Token::LParen | Token::LBracket => groups.push((base + ops + 3, 0)),
            Token::RParen | Token::RBracket if groups.len() > 1 => {
                groups.pop();
            }
            tok if EXPRESSION_STARTS.iter().any(|kw| is_keyword(tok, kw)) => {
                if let Some(g) = groups.last_mut() {
                    g.1 = 0;
                }
            }
            Token::Comma => {
                if let Some(g) = groups.last_mut() {
                    g.1 = 0;
                }
            }
            tok if chains(tok) => {
                if let Some(g) = groups.last_mut() {
                    g.1 += 1;
                }
            }
            _ => {}
        }
        let (base, ops) = groups.last().copied().unwrap_or((0, 0));
        max = max.max(base + ops + 2);
    }
    max
}

/// Refuse a statement whose expressions may nest deeper than `limit`.
///
/// Errors: [`crate::ErrorKind::InvalidArgument`], "expression too deep", naming the
/// bound, the limit and the option.
pub(super) fn check_depth(tokens: &[Tok], limit: usize) -> Result<()> {
    let depth = depth_bound(tokens);
    if depth > limit {
        return Err(Error::invalid_argument(format!(
            "expression too deep: the statement nests up to {depth} operators deep, over \
             icefloe.max_expression_depth = {limit} (planning it could overflow the stack); \
             shorten the chain (e.g. `c IN (…)` for a long OR of equalities) or, on a thread \
             with a larger stack, raise the limit (the icefloe CLI runs with 256 MiB stacks \
             and a limit of 5000)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::GenericDialect;

    use super::*;
    use crate::datafusion::sql::tokens::tokenize;

    fn bound(sql: &str) -> usize {
        depth_bound(&tokenize(sql, &GenericDialect {}).unwrap())
    }

    #[test]
    fn bounds_chains_and_groups() {
        let chain = |n: usize, op: &str| {
            (0..n)
                .map(|i| format!("x = {i}"))
                .collect::<Vec<_>>()
                .join(op)
        };
        // 2,000 OR terms: 1,999 ORs, each operand a comparison
        assert_eq!(
            bound(&format!("SELECT 1 WHERE {}", chain(2000, " OR "))),
            2001
        );
        // clauses do not add up
        assert_eq!(
            bound(&format!(
                "SELECT a + b AS s FROM t WHERE {}",
                chain(10, " AND ")
            )),
            11
        );
        // independent select items do not add up
        let wide = (0..500).map(|_| "a + b").collect::<Vec<_>>().join(", ");
        assert_eq!(bound(&format!("SELECT {wide} FROM t")), 3);
        // nesting adds up
        assert_eq!(bound("SELECT f(a + (b + (c + d)))"), 14);
        assert!(bound("SELECT 1") <= 2);
    }

    #[test]
    fn refuses_over_the_limit_naming_it() {
        let sql = format!("SELECT {}", vec!["1"; 300].join(" + "));
        let toks = tokenize(&sql, &GenericDialect {}).unwrap();
        let err = check_depth(&toks, DEFAULT_MAX_EXPRESSION_DEPTH).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument);
        assert!(err.to_string().contains("expression too deep"), "{err}");
        assert!(err.to_string().contains("301"), "{err}");
        assert!(check_depth(&toks, 301).is_ok());
    }
}
