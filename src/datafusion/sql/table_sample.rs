//! `TABLESAMPLE` (and its `SAMPLE` spelling) is refused: DataFusion 55 parses the clause
//! on a table or subquery and drops it while planning (apache/datafusion#13563,
//! #16533), so `SELECT … FROM t TABLESAMPLE (10 ROWS)` read every row of `t`, and a CTAS
//! or `INSERT … SELECT` over it copied the whole table. Spark returns a sample (`n
//! PERCENT`: each row with that probability; `n ROWS`: the first `n` rows; `BUCKET x OUT
//! OF y`), so the clause is never a no-op and icefloe refuses it until it samples.
//!
//! The check walks the parsed statement (sqlparser's AST has the clause on the table
//! factor it follows, a table or a parenthesized subquery, and as a pipe operator), so
//! it holds at any depth — queries, subqueries, CTEs, CTAS, `INSERT … SELECT`, the
//! source of a `MERGE`, `UPDATE` or `DELETE`, views — and never on a name or string
//! that happens to read `tablesample`.

use std::ops::ControlFlow;

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    PipeOperator, Query, TableFactor, TableSample, TableSampleKind, Visit, Visitor,
};
use datafusion::sql::sqlparser::parser::Parser;

use super::tokens::{is_keyword, Tok};
use crate::error::{Error, Result};

/// Refuse `statement` (tokenized as `toks`) when it samples a table or subquery.
///
/// A statement the session's dialect does not parse whole (icefloe's own clauses, e.g.
/// `PARTITIONED BY (days(ts))` before a CTAS query, or `INSERT … PARTITION (…)`) is
/// checked as far as it parses and in each query it holds: the query parsed from each
/// `SELECT` and `WITH`.
///
/// Errors: [`crate::ErrorKind::Unsupported`] naming the clause as written and what it
/// samples ("TABLESAMPLE (10 ROWS) on db.big is not supported").
pub(super) fn refuse(ctx: &SessionContext, statement: &str, toks: &[Tok]) -> Result<()> {
    // the clause's keyword must be there for the AST to hold one (cheap: most statements
    // are not parsed again)
    if !toks
        .iter()
        .any(|t| is_keyword(&t.token, "TABLESAMPLE") || is_keyword(&t.token, "SAMPLE"))
    {
        return Ok(());
    }
    // the statement as far as it parses (sqlparser stops where it no longer reads it:
    // `CREATE TABLE u` of `CREATE TABLE u USING iceberg … AS SELECT …`), then each query
    let found = super::parse_statement(ctx, statement)
        .and_then(|parsed| first_sample(&parsed))
        .or_else(|| {
            let dialect = super::session_dialect(ctx);
            toks.iter()
                .filter(|t| is_keyword(&t.token, "SELECT") || is_keyword(&t.token, "WITH"))
                .filter_map(|t| {
                    Parser::new(dialect.as_ref())
                        .try_with_sql(statement.get(t.start..)?)
                        .and_then(|mut p| p.parse_query())
                        .ok()
                })
                .find_map(|query| first_sample(&query))
        });
    match found {
        Some(sampled) => Err(Error::unsupported(format!(
            "{sampled} is not supported: icefloe does not sample rows yet (DataFusion would \
             read every row); for about n% of the rows filter on random() (WHERE random() < \
             0.01), for n rows use LIMIT n"
        ))),
        None => Ok(()),
    }
}

/// The first sample clause of `node`, as `"<clause> on <what it samples>"`.
fn first_sample<N: Visit>(node: &N) -> Option<String> {
    match node.visit(&mut Samples) {
        ControlFlow::Break(found) => Some(found),
        ControlFlow::Continue(()) => None,
    }
}

/// Stops at the first sample clause.
struct Samples;

impl Visitor for Samples {
    type Break = String;

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<String> {
        let (sample, what) = match factor {
            TableFactor::Table { name, sample, .. } => (sample, name.to_string()),
            TableFactor::Derived { sample, .. } => (sample, "a subquery".to_string()),
            _ => return ControlFlow::Continue(()),
        };
        match sample {
            Some(TableSampleKind::BeforeTableAlias(s) | TableSampleKind::AfterTableAlias(s)) => {
                ControlFlow::Break(described(s, &what))
            }
            None => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<String> {
        for op in &query.pipe_operators {
            if let PipeOperator::TableSample { sample } = op {
                return ControlFlow::Break(described(sample, "a pipe's rows"));
            }
        }
        ControlFlow::Continue(())
    }
}

fn described(sample: &TableSample, what: &str) -> String {
    format!("{sample} on {what}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datafusion::sql::tokenize;

    fn check(sql: &str) -> Result<()> {
        let ctx = SessionContext::new();
        let toks = tokenize(&ctx, sql).expect("tokens");
        refuse(&ctx, sql, &toks)
    }

    #[test]
    fn refused_at_any_depth_and_only_as_a_clause() {
        for (sql, named) in [
            ("SELECT * FROM t TABLESAMPLE (1 PERCENT)", "TABLESAMPLE (1 PERCENT) on t"),
            ("SELECT * FROM t AS x TABLESAMPLE BERNOULLI (5)", "on t"),
            ("SELECT * FROM t TABLESAMPLE (BUCKET 1 OUT OF 10)", "BUCKET 1 OUT OF 10"),
            ("SELECT * FROM ns.t SAMPLE (10)", "SAMPLE (10) on ns.t"),
            ("SELECT * FROM (SELECT * FROM t) TABLESAMPLE (10 ROWS)", "on a subquery"),
            ("SELECT * FROM u WHERE id IN (SELECT id FROM t TABLESAMPLE (10 ROWS))", "on t"),
            ("WITH s AS (SELECT * FROM t TABLESAMPLE (10 ROWS)) SELECT * FROM s", "on t"),
            ("INSERT INTO u SELECT * FROM t TABLESAMPLE (10 ROWS)", "on t"),
            ("CREATE TABLE u AS SELECT * FROM t TABLESAMPLE (10 ROWS)", "on t"),
            (
                "CREATE TABLE u USING iceberg PARTITIONED BY (days(ts)) \
                 AS SELECT * FROM t TABLESAMPLE (10 ROWS)",
                "on t",
            ),
            ("CREATE VIEW v AS SELECT * FROM t TABLESAMPLE (10 ROWS)", "on t"),
            ("DELETE FROM u WHERE id IN (SELECT id FROM t TABLESAMPLE (1 PERCENT))", "on t"),
            ("UPDATE u SET x = 1 WHERE id IN (SELECT id FROM t TABLESAMPLE (5 ROWS))", "on t"),
            (
                "MERGE INTO u USING (SELECT * FROM t TABLESAMPLE (10 ROWS)) s ON u.id = s.id \
                 WHEN MATCHED THEN DELETE",
                "on t",
            ),
            ("MERGE INTO u USING t TABLESAMPLE (10 ROWS) ON u.id = t.id WHEN MATCHED THEN DELETE", "on t"),
        ] {
            let err = check(sql).expect_err(sql);
            assert_eq!(err.kind(), crate::ErrorKind::Unsupported, "{sql}: {err}");
            assert!(err.to_string().contains(named), "{sql}: {err}");
            assert!(err.to_string().contains("is not supported"), "{sql}: {err}");
        }
        for fine in [
            "SELECT tablesample, 'TABLESAMPLE (1 PERCENT)' FROM t",
            "SELECT \"sample\" FROM t",
            "SELECT * FROM t",
        ] {
            check(fine).unwrap_or_else(|e| panic!("{fine}: {e}"));
        }
    }
}
