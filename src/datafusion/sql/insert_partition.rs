//! Spark's partition clause of an `INSERT`: `INSERT INTO|OVERWRITE [TABLE] t PARTITION
//! (p = 'x', q) [(cols)] query` (Spark's order; sqlparser's `t [(cols)] PARTITION (…)`
//! too). DataFusion 55 parses the latter and refuses to plan it ("Partitioned inserts not
//! yet supported").
//!
//! As Spark plans it (`ResolveInsertInto` and `PartitioningUtils` for a v2 table):
//! - each name in the clause is an identity partition column of the table's default spec
//!   (Spark: "PARTITION clause cannot contain a non-partition column"), given at most
//!   once; a value is a literal (Spark's grammar takes constants only), NULL included;
//! - a column with a value (static) takes it in every row; the query gives the other
//!   columns (a column named without a value, dynamic, among them), in the table's
//!   order or the order of the column list, which must not name a static column;
//! - `INSERT OVERWRITE` with static values under `partition_overwrite_mode = 'static'`
//!   replaces the rows where every static column equals its value (`IS NULL` for NULL;
//!   Spark's `OverwriteByExpression` with a null-safe equality), no others: Java's
//!   `OverwriteFiles.overwriteByRowFilter`, which fails when a data file (one written
//!   before the column was a partition column) matches only in part, by its partition
//!   and column metrics. Under `'dynamic'`
//!   it replaces the partitions the rows fall in, as without the clause.
//!
//! The statement is run as the `INSERT` without the clause whose column list names every
//! column it writes, the static values appended to the query's rows (its `SELECT` list,
//! each `VALUES` row, or a `SELECT *, …` around any other query); a static overwrite's
//! target is the table provider with the row filter
//! ([`IcebergTableProvider::with_overwrite_filter`]).

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{ScalarValue, TableReference};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::{provider_as_source, source_as_provider, TableProvider};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{DmlStatement, LogicalPlan, WriteOp};
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, Expr, Ident, ObjectName, ObjectNamePart, Query, SelectItem, SetExpr, Statement,
    TableObject, UnaryOperator,
};
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::dml_rewrite::{reference, Names};
use super::tokens::{closing, is_keyword};
use crate::datafusion::filter::scalar_to_literal;
use crate::datafusion::IcebergTableProvider;
use crate::error::{Error, Result};
use crate::expr::{literal, BinaryOp, Predicate, Reference, UnaryOp};

/// The alias of the query wrapped to append the static values.
const SOURCE_ALIAS: &str = "icefloe_partition_source";

/// `statement` run when it is an `INSERT` with a `PARTITION` clause into an Iceberg
/// table (see the module docs); `None` for any other statement, or a target that is not
/// an Iceberg table (DataFusion then reports the clause).
///
/// Errors: [`crate::ErrorKind::InvalidArgument`] naming the table and column for a name
/// that is no identity partition column, one given twice, a value that is no literal or
/// does not convert to the column's type, a static column in the column list;
/// DataFusion's errors planning the rewritten statement.
pub(super) async fn plan(ctx: &SessionContext, statement: &str) -> Result<Option<DataFrame>> {
    if !statement.to_ascii_uppercase().contains("PARTITION") {
        return Ok(None);
    }
    let parsed = super::parse_statement(ctx, statement).or_else(|| {
        column_list_first(ctx, statement).and_then(|moved| super::parse_statement(ctx, &moved))
    });
    let Some(Statement::Insert(mut insert)) = parsed else {
        return Ok(None);
    };
    let Some(clause) = insert.partitioned.take() else {
        return Ok(None);
    };
    let TableObject::TableName(name) = &insert.table else {
        return Ok(None);
    };
    let state = ctx.state();
    let names = Names {
        normalize: state
            .config()
            .options()
            .sql_parser
            .enable_ident_normalization,
    };
    let Some(table) = names.parts(name).and_then(|p| reference(&p)) else {
        return Ok(None);
    };
    let Ok(provider) = ctx.table_provider(table.clone()).await else {
        return Ok(None);
    };
    let Some(iceberg) = provider.downcast_ref::<IcebergTableProvider>() else {
        return Ok(None);
    };
    let verb = match insert.overwrite {
        true => "INSERT OVERWRITE",
        false => "INSERT INTO",
    };
    let what = format!("{verb} {table} PARTITION (…)");
    let columns: Vec<String> = iceberg
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let (partition_columns, nested_partitions) = identity_partition_sources(iceberg);
    let resolve = |wanted: String| -> Result<String> {
        let found = columns.iter().find(|c| **c == wanted).or_else(|| {
            let mut folded = columns.iter().filter(|c| c.eq_ignore_ascii_case(&wanted));
            match (folded.next(), folded.next()) {
                (Some(c), None) => Some(c),
                _ => None,
            }
        });
        match found {
            Some(c) if partition_columns.contains(c) => Ok(c.clone()),
            _ => Err(Error::invalid_argument(format!(
                "{what}: '{wanted}' is not an identity partition column of the table \
                 (its identity partition columns: {}){}",
                match partition_columns.is_empty() {
                    true => "none".to_string(),
                    false => partition_columns.join(", "),
                },
                match nested_partitions.is_empty() {
                    true => String::new(),
                    false => format!(
                        "; its identity partitions of nested fields ({}) cannot be named \
                         in a PARTITION clause, as in Spark: give their values in the \
                         query's struct, with partition_overwrite_mode 'dynamic' for an \
                         overwrite of their partitions only",
                        nested_partitions.join(", ")
                    ),
                }
            ))),
        }
    };
    let compound = |parts: &[Ident]| -> String {
        parts
            .iter()
            .map(|p| names.of(p))
            .collect::<Vec<_>>()
            .join(".")
    };

    // the clause: static columns with their values, dynamic ones by name
    let mut statics: Vec<(String, Expr)> = Vec::new();
    let mut named: Vec<String> = Vec::new();
    for item in clause {
        let (column, value) = match item {
            Expr::Identifier(ident) => (resolve(names.of(&ident))?, None),
            Expr::CompoundIdentifier(parts) => (resolve(compound(&parts))?, None),
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Eq,
                right,
            } => match *left {
                Expr::Identifier(ident) => (resolve(names.of(&ident))?, Some(*right)),
                Expr::CompoundIdentifier(parts) => (resolve(compound(&parts))?, Some(*right)),
                other => {
                    return Err(Error::invalid_argument(format!(
                        "{what}: expected a partition column, got '{other}'"
                    )))
                }
            },
            other => {
                return Err(Error::invalid_argument(format!(
                    "{what}: expected 'column = value' or 'column', got '{other}'"
                )))
            }
        };
        if named.contains(&column) {
            return Err(Error::invalid_argument(format!(
                "{what}: partition column '{column}' is given twice"
            )));
        }
        named.push(column.clone());
        if let Some(value) = value {
            if !is_literal(&value) {
                return Err(Error::invalid_argument(format!(
                    "{what}: the value of partition column '{column}' must be a literal, \
                     got '{value}'"
                )));
            }
            statics.push((column, value));
        }
    }

    // the columns the query gives, then the static ones
    let listed: Vec<String> = match (insert.columns.is_empty(), insert.after_columns.is_empty()) {
        (true, true) => columns
            .iter()
            .filter(|c| !statics.iter().any(|(s, _)| s == *c))
            .cloned()
            .collect(),
        (false, true) => insert
            .columns
            .iter()
            .map(|n| {
                names
                    .parts(n)
                    .and_then(|p| p.last().cloned())
                    .unwrap_or_else(|| n.to_string())
            })
            .collect(),
        (true, false) => insert.after_columns.iter().map(|i| names.of(i)).collect(),
        (false, false) => {
            return Err(Error::invalid_argument(format!(
                "{what}: a column list both before and after the PARTITION clause"
            )))
        }
    };
    if let Some((column, _)) = statics.iter().find(|(s, _)| listed.contains(s)) {
        return Err(Error::invalid_argument(format!(
            "{what}: static partition column '{column}' is also in the column list"
        )));
    }
    let quote = super::quote_of(super::session_dialect(ctx).as_ref());
    insert.columns = listed
        .iter()
        .chain(statics.iter().map(|(c, _)| c))
        .map(|c| {
            ObjectName(vec![ObjectNamePart::Identifier(Ident::with_quote(
                quote, c,
            ))])
        })
        .collect();
    insert.after_columns = Vec::new();
    let values: Vec<Expr> = statics.iter().map(|(_, v)| v.clone()).collect();
    let Some(source) = insert.source.take() else {
        return Err(Error::invalid_argument(format!(
            "{what}: a query or VALUES is required"
        )));
    };
    insert.source = Some(Box::new(append_values(ctx, *source, &values)?));
    let filter = match insert.overwrite && !statics.is_empty() {
        true => Some(overwrite_filter(ctx, iceberg, &table, &what, &statics).await?),
        false => None,
    };
    let df = super::run_in_datafusion(ctx, &Statement::Insert(insert).to_string()).await?;
    let Some(filter) = filter else {
        return Ok(Some(df));
    };
    let (state, plan) = df.into_parts();
    let plan = plan
        .transform_down(|node| match node {
            LogicalPlan::Dml(dml) if dml.op == WriteOp::Insert(InsertOp::Overwrite) => {
                let target = source_as_provider(&dml.target)?;
                let Some(iceberg) = target.downcast_ref::<IcebergTableProvider>() else {
                    return Ok(Transformed::no(LogicalPlan::Dml(dml)));
                };
                let filtered = iceberg.with_overwrite_filter(filter.clone());
                Ok(Transformed::yes(LogicalPlan::Dml(DmlStatement::new(
                    dml.table_name,
                    provider_as_source(std::sync::Arc::new(filtered)),
                    dml.op,
                    dml.input,
                ))))
            }
            other => Ok(Transformed::no(other)),
        })?
        .data;
    Ok(Some(DataFrame::new(state, plan)))
}

/// Refuse `statement` when it is a `PREPARE` of an `INSERT` with a `PARTITION` clause into
/// an Iceberg table, naming the form: [`plan`] writes the clause's values into the
/// statement's text, but DataFusion keeps a prepared statement as its plan (and plans
/// the clause only to refuse it, "Partitioned inserts not yet supported"), and a static
/// `INSERT OVERWRITE`'s row filter would not reach the target a prepared statement
/// resolves again at each `EXECUTE`.
///
/// Errors: [`crate::ErrorKind::Unsupported`] naming the statement, the table and what to
/// write instead.
pub(super) async fn check_prepared(ctx: &SessionContext, statement: &str) -> Result<()> {
    if !statement.to_ascii_uppercase().contains("PARTITION") {
        return Ok(());
    }
    let parsed = super::parse_statement(ctx, statement).or_else(|| {
        column_list_first(ctx, statement).and_then(|moved| super::parse_statement(ctx, &moved))
    });
    let Some(Statement::Prepare {
        name,
        statement: inner,
        ..
    }) = parsed
    else {
        return Ok(());
    };
    let Statement::Insert(insert) = *inner else {
        return Ok(());
    };
    let (true, TableObject::TableName(table_name)) = (insert.partitioned.is_some(), &insert.table)
    else {
        return Ok(());
    };
    let names = Names {
        normalize: ctx
            .state()
            .config()
            .options()
            .sql_parser
            .enable_ident_normalization,
    };
    let Some(table) = names.parts(table_name).and_then(|p| reference(&p)) else {
        return Ok(());
    };
    let Ok(provider) = ctx.table_provider(table.clone()).await else {
        return Ok(());
    };
    if provider.downcast_ref::<IcebergTableProvider>().is_none() {
        return Ok(());
    }
    let verb = match insert.overwrite {
        true => "INSERT OVERWRITE",
        false => "INSERT INTO",
    };
    Err(Error::unsupported(format!(
        "PREPARE {name} AS {verb} {table} PARTITION (…): a PARTITION clause in a prepared \
         statement is not supported; run the {verb} … PARTITION statement directly, or \
         give the partition columns' values in the prepared statement's query instead"
    )))
}

/// `statement` with Spark's order `INSERT … t PARTITION (…) (c1, c2) query` (Spark's
/// grammar: the column list after the partition clause) as sqlparser parses it, the
/// column list before the clause (`t (c1, c2) PARTITION (…) query`); `None` when no list
/// of names follows the clause.
pub(super) fn column_list_first(ctx: &SessionContext, statement: &str) -> Option<String> {
    let toks = super::tokenize(ctx, statement)?;
    let at = toks
        .iter()
        .position(|t| is_keyword(&t.token, "PARTITION"))?;
    let clause_end = closing(&toks, at + 1)?;
    let list_end = closing(&toks, clause_end + 1)?;
    let inner = &toks[clause_end + 2..list_end];
    let names = inner.len() % 2 == 1
        && inner.iter().enumerate().all(|(i, t)| match i % 2 {
            0 => {
                matches!(t.token, Token::Word(_))
                    && !["SELECT", "VALUES", "WITH", "TABLE", "FROM"]
                        .iter()
                        .any(|k| is_keyword(&t.token, k))
            }
            _ => t.token == Token::Comma,
        });
    if !names {
        return None;
    }
    let (clause, list) = (
        toks[at].start..toks[clause_end].end,
        toks[clause_end + 1].start..toks[list_end].end,
    );
    Some(format!(
        "{}{} {}{}",
        statement.get(..clause.start)?,
        statement.get(list)?,
        statement.get(clause)?,
        statement.get(toks[list_end].end..)?
    ))
}

/// The sources of the identity fields of the table's default partition spec, in the
/// spec's order: the top-level columns, then the dotted names of the nested fields
/// (inside structs). Spark's partition clause names top-level columns only
/// (`ResolveInsertInto` takes identity transforms of one-part references), so the nested
/// ones cannot be given there.
fn identity_partition_sources(table: &IcebergTableProvider) -> (Vec<String>, Vec<String>) {
    let metadata = table.table().metadata();
    let schema = metadata.current_schema();
    let Some(spec) = metadata.default_partition_spec() else {
        return (Vec::new(), Vec::new());
    };
    let (mut top, mut nested) = (Vec::new(), Vec::new());
    for f in spec.fields.iter().filter(|f| f.transform.is_identity()) {
        match schema.columns().iter().find(|c| c.id == f.source_id) {
            Some(column) => top.push(column.name.clone()),
            None => nested.extend(crate::datafusion::sql::column_name(schema, f.source_id)),
        }
    }
    (top, nested)
}

/// Whether `value` is a literal as Spark's partition clause takes one: a number, string,
/// boolean or NULL, a typed literal (`DATE '…'`), or a signed number.
fn is_literal(value: &Expr) -> bool {
    match value {
        Expr::Value(_) | Expr::TypedString { .. } => true,
        Expr::UnaryOp {
            op: UnaryOperator::Minus | UnaryOperator::Plus,
            expr,
        } => matches!(expr.as_ref(), Expr::Value(_)),
        Expr::Nested(inner) => is_literal(inner),
        _ => false,
    }
}

/// `query` with `values` appended to each of its rows: to its `SELECT` lists (aliased, so
/// equal values do not clash) and `VALUES` rows, through set operations and parentheses
/// (equal constants on both sides keep what `UNION`, `INTERSECT` and `EXCEPT` answer;
/// `ORDER BY` and `LIMIT` see the same columns first), or through `SELECT *, …` around
/// any other query (`TABLE t`). A `VALUES` is not wrapped: DataFusion plans a `VALUES`
/// inside an `INSERT`'s query with the target's columns, which it then lacks.
fn append_values(ctx: &SessionContext, mut query: Query, values: &[Expr]) -> Result<Query> {
    if values.is_empty() {
        return Ok(query);
    }
    if appendable(&query.body) {
        append_to(&mut query.body, values);
        return Ok(query);
    }
    let list = values
        .iter()
        .enumerate()
        .map(|(i, v)| aliased(i, v).to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!("SELECT *, {list} FROM ({query}) AS {SOURCE_ALIAS}");
    let dialect = super::session_dialect(ctx);
    let mut parser = Parser::new(dialect.as_ref())
        .try_with_sql(&text)
        .map_err(|e| Error::invalid_argument(e.to_string()))?;
    parser
        .parse_query()
        .map(|q| *q)
        .map_err(|e| Error::invalid_argument(e.to_string()))
}

/// Whether every row source of `body` is a `SELECT` list or a `VALUES` row.
fn appendable(body: &SetExpr) -> bool {
    match body {
        SetExpr::Select(_) | SetExpr::Values(_) => true,
        SetExpr::SetOperation { left, right, .. } => appendable(left) && appendable(right),
        SetExpr::Query(q) => appendable(&q.body),
        _ => false,
    }
}

/// `values` appended to each `SELECT` list and `VALUES` row of `body` (see
/// [`appendable`]).
fn append_to(body: &mut SetExpr, values: &[Expr]) {
    match body {
        SetExpr::Select(select) => select
            .projection
            .extend(values.iter().enumerate().map(|(i, v)| aliased(i, v))),
        SetExpr::Values(rows) => {
            for row in &mut rows.rows {
                row.extend(values.iter().cloned());
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            append_to(left, values);
            append_to(right, values);
        }
        SetExpr::Query(q) => append_to(&mut q.body, values),
        _ => {}
    }
}

/// The `i`-th static value as a `SELECT` item with its own alias.
fn aliased(i: usize, value: &Expr) -> SelectItem {
    SelectItem::ExprWithAlias {
        expr: value.clone(),
        alias: Ident::new(format!("icefloe_partition_value_{i}")),
    }
}

/// The rows a static overwrite replaces: every static column equal to its value (cast
/// to the column's type as the written rows are), `IS NULL` for NULL, `IS NAN` for NaN.
///
/// The value is converted by the same cast the `INSERT` writes it with, run through the
/// session's analyzer (Spark's reading of date and timestamp text, the session zone for
/// `timestamptz`, sub-microsecond digits floored), so the rows replaced are those of the
/// partition the new rows go to: Arrow's cast alone read a zone-less string in UTC, the
/// date of a string naming an offset in UTC, and truncated nanoseconds toward zero.
async fn overwrite_filter(
    ctx: &SessionContext,
    table: &IcebergTableProvider,
    name: &TableReference,
    what: &str,
    statics: &[(String, Expr)],
) -> Result<Predicate> {
    let texts: Vec<String> = statics.iter().map(|(_, v)| v.to_string()).collect();
    let values = super::constant::constants(ctx, &texts).await.map_err(|e| {
        Error::invalid_argument(format!(
            "{what}: the value of partition column '{}': {}",
            statics[e.index].0, e.why
        ))
    })?;
    let schema = table.schema();
    let mut filter = Predicate::AlwaysTrue;
    for ((column, text), value) in statics.iter().zip(values) {
        let field = schema.field_with_name(column)?;
        let cast = written_value(ctx, table, name, column, value)
            .await
            .map_err(|e| {
                Error::invalid_argument(format!(
                    "{what}: the value {text} of partition column '{column}' is no {}: {e}",
                    field.data_type()
                ))
            })?;
        let term = Reference::new(column.clone());
        let leaf = match scalar_to_literal(&cast) {
            Some(None) => Predicate::unary(UnaryOp::IsNull, term),
            Some(Some(lit)) if literal::is_nan(&lit) => Predicate::unary(UnaryOp::IsNan, term),
            Some(Some(lit)) => Predicate::binary(BinaryOp::Eq, term, lit),
            None => {
                return Err(Error::invalid_argument(format!(
                    "{what}: the value {text} of partition column '{column}' ({}) cannot \
                     select rows to replace",
                    cast.data_type()
                )))
            }
        };
        filter = filter.and(leaf);
    }
    Ok(filter)
}

/// `value` as an `INSERT` writes it into `column` of `table` (named `name`): a
/// one-row `INSERT` of it (every other column a typed `NULL`) is planned, not run, and
/// put through the session's analyzer, whose rules rewrite the values a write casts
/// into its columns (see [`overwrite_filter`]); the analyzed row is then evaluated.
async fn written_value(
    ctx: &SessionContext,
    table: &IcebergTableProvider,
    name: &TableReference,
    column: &str,
    value: ScalarValue,
) -> datafusion::common::Result<ScalarValue> {
    use datafusion::logical_expr::{cast, lit, LogicalPlanBuilder};
    let schema = table.schema();
    let index = schema.index_of(column)?;
    let row = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let v = match i == index {
                true => value.clone(),
                false => ScalarValue::try_from(f.data_type())?,
            };
            Ok(cast(lit(v), f.data_type().clone()).alias(f.name()))
        })
        .collect::<datafusion::common::Result<Vec<_>>>()?;
    let input = LogicalPlanBuilder::empty(true).project(row)?.build()?;
    let target = provider_as_source(std::sync::Arc::new(table.clone()));
    let probe = LogicalPlan::Dml(DmlStatement::new(
        name.clone(),
        target,
        WriteOp::Insert(InsertOp::Overwrite),
        std::sync::Arc::new(input),
    ));
    let state = ctx.state();
    let analyzed = state
        .analyzer()
        .execute_and_check(probe, state.config_options(), |_, _| {})?;
    let LogicalPlan::Dml(dml) = analyzed else {
        return Err(datafusion::common::DataFusionError::Internal(
            "the partition value's probe INSERT lost its write".into(),
        ));
    };
    let row = ctx
        .execute_logical_plan(std::sync::Arc::unwrap_or_clone(dml.input))
        .await?
        .collect()
        .await?;
    match row.iter().find(|b| b.num_rows() > 0) {
        Some(b) => ScalarValue::try_from_array(b.column(index), 0),
        None => Err(datafusion::common::DataFusionError::Internal(
            "the partition value's probe INSERT returned no row".into(),
        )),
    }
}
