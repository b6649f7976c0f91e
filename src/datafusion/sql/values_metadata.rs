//! A `VALUES` list of several rows where a row holds a scalar subquery reading an
//! Iceberg column: `SELECT * FROM (VALUES ((SELECT max(id) FROM ns.t)), (5))`.
//!
//! DataFusion 55 plans a `VALUES` outside an `INSERT` by asking each row's value for its
//! field metadata and refuses rows that disagree ("Inconsistent metadata across values
//! list at row 1 column 0. Was {\"PARQUET:field_id\": \"1\"} but found {}"). A scalar
//! subquery's value carries the metadata of its column, and an Iceberg table's columns
//! carry their field ids, so the subquery's row disagreed with a literal's. Spark,
//! DuckDB and PostgreSQL run the statement; field ids are no part of a value.
//!
//! [`rewritten_text`] writes each value of such a `VALUES` that holds a subquery as
//! `CASE WHEN TRUE THEN value END`, editing the statement's text only: the same value
//! and type, without metadata (DataFusion gives a `CASE` none). The optimizer folds the
//! `CASE` away once the `VALUES` is planned (the analyzer rule of
//! `crate::datafusion::values_subqueries` then writes it as one projection per row).
//! `sql::execute` runs a statement so written when DataFusion refused it for that reason
//! (a `MERGE`, whose source's refusal is reported as another error, is written so first).

use datafusion::sql::sqlparser::tokenizer::Token;

use super::tokens::{closing, is_keyword, Tok};
use crate::error::Error;

/// DataFusion's message for a `VALUES` whose rows carry different field metadata.
const INCONSISTENT: &str = "Inconsistent metadata across values list";

/// `text` (tokenized as `toks`) with each value of a `VALUES` list of several rows that
/// holds a `SELECT` written `CASE WHEN TRUE THEN value END`, by editing the text only
/// (icefloe's own syntax around it, as a `MERGE`'s `INSERT *` or a `CREATE TABLE …
/// PARTITIONED BY`, stays as written); `None` when there is no such value.
pub(super) fn rewritten_text(text: &str, toks: &[Tok]) -> Option<String> {
    let mut inserts: Vec<(usize, &'static str)> = Vec::new();
    for (at, t) in toks.iter().enumerate() {
        if !is_keyword(&t.token, "VALUES") {
            continue;
        }
        // the rows: `( … )` groups separated by commas
        let mut rows = Vec::new();
        let mut open = at + 1;
        while let Some(close) = closing(toks, open) {
            rows.push(open + 1..close);
            let comma = toks.get(close + 1).is_some_and(|t| t.token == Token::Comma);
            if !comma {
                break;
            }
            open = close + 2;
        }
        if rows.len() < 2 {
            continue;
        }
        for row in rows {
            let (mut depth, mut value_start) = (0usize, row.start);
            for i in row.start..=row.end {
                let token = toks.get(i).filter(|_| i < row.end).map(|t| &t.token);
                match token {
                    Some(Token::LParen | Token::LBracket) => depth += 1,
                    Some(Token::RParen | Token::RBracket) => depth = depth.saturating_sub(1),
                    Some(Token::Comma) if depth == 0 => {}
                    Some(_) => continue,
                    None => {}
                }
                if token.is_none() || (depth == 0 && token == Some(&Token::Comma)) {
                    wrap_value(toks.get(value_start..i).unwrap_or_default(), &mut inserts);
                    value_start = i + 1;
                }
            }
        }
    }
    if inserts.is_empty() {
        return None;
    }
    // stable: an outer value's insert before an inner one's at the same place (both
    // texts are the same there)
    inserts.sort_by_key(|(at, _)| *at);
    let mut out = String::with_capacity(text.len() + inserts.len() * 20);
    let mut from = 0;
    for (at, insert) in inserts {
        out.push_str(text.get(from..at)?);
        out.push_str(insert);
        from = at;
    }
    out.push_str(text.get(from..)?);
    Some(out)
}

/// Wrap the value of tokens `value` (a `VALUES` row's, between commas) when it holds a
/// `SELECT`.
fn wrap_value(value: &[Tok], inserts: &mut Vec<(usize, &'static str)>) {
    let subquery = value.iter().any(|t| is_keyword(&t.token, "SELECT"));
    if let (true, Some(first), Some(last)) = (subquery, value.first(), value.last()) {
        inserts.push((first.start, "CASE WHEN TRUE THEN "));
        inserts.push((last.end, " END"));
    }
}

/// Whether `error` is DataFusion's refusal of a `VALUES` whose rows' values carry
/// different field metadata.
pub(super) fn is_inconsistent_metadata(error: &Error) -> bool {
    error.to_string().contains(INCONSISTENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> Option<String> {
        let toks = super::super::tokens::tokenize(
            sql,
            &datafusion::sql::sqlparser::dialect::GenericDialect {},
        )?;
        rewritten_text(sql, &toks)
    }

    #[test]
    fn text_rewrite_wraps_subquery_values_of_lists_of_several_rows_only() {
        assert_eq!(
            rewritten(
                "MERGE INTO t USING (VALUES ((SELECT 1), 'a,(b'), (2, [(SELECT 3)])) s(a, b) \
                 ON t.a = s.a WHEN NOT MATCHED THEN INSERT *"
            )
            .as_deref(),
            Some(
                "MERGE INTO t USING (VALUES (CASE WHEN TRUE THEN (SELECT 1) END, 'a,(b'), \
                 (2, CASE WHEN TRUE THEN [(SELECT 3)] END)) s(a, b) ON t.a = s.a WHEN NOT \
                 MATCHED THEN INSERT *"
            )
        );
        // nested: the inner list of several rows too
        assert_eq!(
            rewritten("VALUES ((SELECT x FROM (VALUES ((SELECT 1)), (2)) v(x) LIMIT 1)), (3)")
                .as_deref(),
            Some(
                "VALUES (CASE WHEN TRUE THEN (SELECT x FROM (VALUES (CASE WHEN TRUE THEN \
                 (SELECT 1) END), (2)) v(x) LIMIT 1) END), (3)"
            )
        );
        // one row, no subquery, a string that reads as one: unchanged
        assert_eq!(rewritten("INSERT INTO t VALUES ((SELECT 1), 2)"), None);
        assert_eq!(rewritten("SELECT * FROM (VALUES (1), (2))"), None);
        assert_eq!(
            rewritten("SELECT * FROM (VALUES ('(SELECT 1)'), (2))"),
            None
        );
    }

    /// The statements icefloe plans itself (`CREATE TABLE … AS`, `MERGE`, `UPDATE`) with
    /// such a `VALUES` run too; they were refused ("Inconsistent metadata", or a `MERGE`'s
    /// "the source … does not plan").
    #[tokio::test]
    async fn values_rows_with_a_subquery_in_statements_icefloe_plans() {
        use crate::datafusion::sql::tests::{ok, session};
        let (ctx, _catalog, _dir) = session().await;
        ok(&ctx, "CREATE SCHEMA ns").await;
        ok(&ctx, "CREATE TABLE ns.t (id INT, s STRING)").await;
        ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')").await;
        ok(
            &ctx,
            "CREATE TABLE ns.c PARTITIONED BY (a) AS \
             SELECT * FROM (VALUES ((SELECT max(id) FROM ns.t)), (5)) v(a)",
        )
        .await;
        assert_eq!(
            ok(&ctx, "SELECT a FROM ns.c ORDER BY a").await,
            [["2"], ["5"]]
        );
        ok(
            &ctx,
            "MERGE INTO ns.t USING (VALUES ((SELECT min(id) FROM ns.t), 'q'), (10, 'r')) \
             AS src(id, s) ON ns.t.id = src.id \
             WHEN MATCHED THEN UPDATE SET s = src.s WHEN NOT MATCHED THEN INSERT *",
        )
        .await;
        ok(
            &ctx,
            "UPDATE ns.t SET s = 'u' WHERE id IN \
             (SELECT a FROM (VALUES ((SELECT max(id) FROM ns.t)), (2)) v(a))",
        )
        .await;
        assert_eq!(
            ok(&ctx, "SELECT id, s FROM ns.t ORDER BY id").await,
            [["1", "q"], ["2", "u"], ["10", "u"]]
        );
    }

    /// A `VALUES` of several rows, one a subquery over an Iceberg column (which carries
    /// its field id), runs as Spark runs it, in a query and in `INSERT … SELECT`; a
    /// subquery of more than one row is still an error.
    #[tokio::test]
    async fn values_rows_with_a_subquery_over_an_iceberg_column_run() {
        use crate::datafusion::sql::tests::{ok, run, session};
        let (ctx, _catalog, _dir) = session().await;
        ok(&ctx, "CREATE SCHEMA ns").await;
        ok(&ctx, "CREATE TABLE ns.t (id INT, s STRING)").await;
        ok(&ctx, "INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')").await;
        assert_eq!(
            ok(
                &ctx,
                "SELECT * FROM (VALUES ((SELECT max(id) FROM ns.t)), (5)) AS v(a) ORDER BY a"
            )
            .await,
            [["2"], ["5"]]
        );
        assert_eq!(
            ok(
                &ctx,
                "SELECT a, b FROM (VALUES ((SELECT max(s) FROM ns.t), 1), \
                 ('q', (SELECT id FROM ns.t WHERE id = 1))) AS v(a, b) ORDER BY a"
            )
            .await,
            [["b", "1"], ["q", "1"]]
        );
        ok(
            &ctx,
            "INSERT INTO ns.t SELECT * FROM (VALUES ((SELECT max(id) FROM ns.t) + 1, 'c'), \
             (9, (SELECT min(s) FROM ns.t)))",
        )
        .await;
        assert_eq!(
            ok(&ctx, "SELECT id, s FROM ns.t ORDER BY id").await,
            [["1", "a"], ["2", "b"], ["3", "c"], ["9", "a"]]
        );
        let err = run(&ctx, "SELECT * FROM (VALUES ((SELECT id FROM ns.t)), (5))")
            .await
            .unwrap_err();
        assert!(err.to_string().contains("more than one row"), "{err}");
    }
}
