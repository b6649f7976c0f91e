//! The `where` argument of `rewrite_data_files` and `rewrite_position_delete_files`: a SQL
//! condition string over the table's columns, as an Iceberg [`Predicate`] that selects
//! files.
//!
//! The condition is typed as icefloe's own `SELECT … WHERE` types it (and as Spark's
//! procedures do, which resolve the string with Spark SQL's analyzer): the session's
//! analyzer function rewrites (icefloe's decimal-literal rule among them), then DataFusion's
//! type coercion against the table's schema casts each literal to its column's type (`x > 6`
//! on a `double`, `ts >= '2024-01-15'` on a `timestamp`, `id = '5'` on an `int`), then its
//! simplifier folds the casts into constants, which [`FilterConverter`] turns into
//! Iceberg terms. Quotes are read as Spark reads them there: `"…"` is a string, `` `…` ``
//! a column name ([`spark_quoting`]).

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::DFSchema;
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::{Cast, Expr};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use crate::datafusion::filter::FilterConverter;
use crate::error::{Error, Result};
use crate::expr::Predicate;
use crate::spec::Schema;

/// Whether `condition` holds the keyword `SELECT` (outside strings and quoted names): a
/// subquery.
fn has_subquery(ctx: &SessionContext, condition: &str) -> bool {
    super::tokenize(ctx, condition).is_some_and(|toks| {
        toks.iter()
            .any(|t| super::tokens::is_keyword(&t.token, "SELECT"))
    })
}

/// `condition` with its quotes read as Spark reads them in a procedure's `where` (Spark
/// SQL's default, `spark.sql.ansi.doubleQuotedIdentifiers` off): `"…"` is a string
/// literal (Iceberg's docs write `where => 'id = 3 and name = "foo"'`), `` `…` `` a
/// column name. DataFusion's dialects read `"foo"` as the column `foo`: an error naming
/// it, or, where a column has that name, a comparison of two columns (`cat = "cat"` was
/// `cat = cat`, true on every row). `None` when nothing changes (or the condition does
/// not tokenize: DataFusion reports it).
fn spark_quoting(ctx: &SessionContext, condition: &str) -> Option<String> {
    let toks = super::tokenize(ctx, condition)?;
    let quote = super::quote_of(super::session_dialect(ctx).as_ref());
    let edits = toks
        .iter()
        .filter_map(|t| match &t.token {
            Token::Word(w) if w.quote_style == Some('"') => {
                Some((t.start..t.end, format!("'{}'", w.value.replace('\'', "''"))))
            }
            Token::Word(w) if w.quote_style == Some('`') && quote != '`' => {
                let doubled = format!("{quote}{quote}");
                let name = w.value.replace(quote, &doubled);
                Some((t.start..t.end, format!("{quote}{name}{quote}")))
            }
            _ => None,
        })
        .collect();
    super::tokens::splice(condition, edits)
}

/// `condition` over a table of Iceberg schema `schema` (Arrow form `df_schema`) as the
/// predicate selecting the files it may match.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming the condition): it does not parse
/// or names an unknown column (DataFusion's message); a literal that cannot be cast to the
/// type of the column it is compared with ("value 'abc' cannot be cast to the type
/// of column 'id' (int)"); no part of it can be evaluated on file metadata (a column compared with a
/// constant, `IN`, `IS NULL`, `LIKE 'prefix%'`, … — e.g. `id % 8 = 2`).
pub(super) fn where_predicate(
    ctx: &SessionContext,
    schema: &Schema,
    df_schema: DFSchema,
    condition: &str,
) -> Result<Predicate> {
    let what = || format!("where '{condition}'");
    // a subquery reads other rows, not file metadata (and planning it named a table
    // it could not find among the tables it listed)
    if has_subquery(ctx, condition) {
        return Err(Error::invalid_argument(format!(
            "{}: a subquery cannot select files by their metadata; give the values it \
             would return (e.g. id IN (1, 2, 3))",
            what()
        )));
    }
    let spark_quoted = spark_quoting(ctx, condition);
    let parsed = ctx
        .parse_sql_expr(spark_quoted.as_deref().unwrap_or(condition), &df_schema)
        .map_err(|e| Error::from(e).context(what()))?;
    // as the analyzer's `apply_function_rewrites` rule does, before type coercion
    let state = ctx.state();
    let rewrites = state.analyzer().function_rewrites();
    let parsed = parsed
        .transform_up(|e| {
            let mut result = Transformed::no(e);
            for rewrite in rewrites {
                result = result
                    .transform_data(|e| rewrite.rewrite(e, &df_schema, state.config_options()))?;
            }
            Ok(result)
        })
        .map_err(|e| Error::invalid_argument(format!("{}: {}", what(), e.strip_backtrace())))?
        .data;
    // Spark's `isnan` (FALSE for NULL) where the session's `WHERE` has it, so `NOT isnan(d)`
    // selects the files of NULL `d` too
    let parsed = if crate::datafusion::spark_isnan::installed(ctx) {
        crate::datafusion::spark_isnan::spark_isnan(parsed)
            .map_err(|e| Error::invalid_argument(format!("{}: {}", what(), e.strip_backtrace())))?
            .data
    } else {
        parsed
    };
    let df_schema = std::sync::Arc::new(df_schema);
    let simplifier = ExprSimplifier::new(
        SimplifyContext::builder()
            .with_schema(std::sync::Arc::clone(&df_schema))
            .build(),
    );
    let coerced = simplifier
        .coerce(parsed, &df_schema)
        .map_err(|e| Error::invalid_argument(format!("{}: {}", what(), e.strip_backtrace())))?;
    check_literal_casts(schema, &coerced).map_err(|e| e.context(what()))?;
    let simplified = simplifier
        .simplify(coerced)
        .map_err(|e| Error::invalid_argument(format!("{}: {}", what(), e.strip_backtrace())))?;
    FilterConverter::new(schema)
        .convert(&simplified)
        .map(|c| c.predicate)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "{}: no part of it can select files by their metadata (icefloe uses \
                 comparisons of a column with a constant, IN, BETWEEN, IS [NOT] NULL, \
                 isnan and LIKE 'prefix%', joined by AND, OR, NOT)",
                what()
            ))
        })
}

/// Refuse a literal that coercion casts to a type it has no value in, naming the column
/// it is compared with, the value and the type (DataFusion's simplifier would fail with
/// "Cast error: Cannot cast string 'abc' to value of Int32 type", naming no column).
fn check_literal_casts(schema: &Schema, expr: &Expr) -> Result<()> {
    let mut failure = None;
    expr.apply(|node| {
        let mut children = vec![];
        match node {
            Expr::BinaryExpr(b) => children.extend([b.left.as_ref(), b.right.as_ref()]),
            Expr::InList(l) => children.extend(l.list.iter()),
            Expr::Between(b) => children.extend([b.low.as_ref(), b.high.as_ref()]),
            _ => {}
        }
        for child in children {
            let Expr::Cast(Cast { expr, field }) = child else {
                continue;
            };
            let Expr::Literal(value, _) = expr.as_ref() else {
                continue;
            };
            let data_type = field.data_type();
            if value.is_null() || value.cast_to(data_type).is_ok() {
                continue;
            }
            // the column's type as the table declares it (the cast may be to a wider
            // type DataFusion compares in, such as nanosecond timestamps)
            let column = node.column_refs().into_iter().next().map(|c| {
                let ty = schema
                    .field_by_name(&c.name)
                    .map_or_else(|| data_type.to_string(), |f| f.field_type.to_string());
                format!("column '{}' ({ty})", c.name)
            });
            let column = column.unwrap_or_else(|| format!("its operand ({data_type})"));
            let shown = match value.try_as_str() {
                Some(Some(s)) => format!("'{s}'"),
                _ => value.to_string(),
            };
            failure = Some(Error::invalid_argument(format!(
                "value {shown} cannot be cast to the type of {column}"
            )));
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    failure.map_or(Ok(()), Err)
}
