//! The values of constant (Spark: foldable) expressions where a statement takes a value
//! before DataFusion plans it: a `CALL` argument (`older_than => now() - INTERVAL '1'
//! DAY`), a time-travel clause (`TIMESTAMP AS OF current_timestamp() - INTERVAL 1 HOUR`).
//!
//! Each expression is planned as `SELECT <expression>` in the session and refused when it
//! does not plan (it names a column), reads a table (a subquery over one) or is volatile
//! (`random()`: Spark's `rand()` is not foldable either). The accepted ones of a statement
//! are then run together as one `SELECT e1, e2, …`, so that `now()` and its kin
//! (`current_timestamp()`, `current_date()`) take one value in all of them, as Spark
//! evaluates `current_timestamp()` once per query.
//!
//! Number literals are Spark's, as in queries (module `literals`): `2Y` is a `TINYINT`,
//! `1.5D` a `DOUBLE`.
//!
//! Time zones: a `TIMESTAMP` value without a zone (`CAST('2026-01-01' AS TIMESTAMP)`,
//! `TIMESTAMP '…'`) is read as UTC, as icefloe reads a zone-less timestamp literal
//! everywhere (`"t@2026-01-01 10:00:00"`, `TIMESTAMP AS OF '…'`, procedure arguments);
//! one with a zone (`now()`, `… AT TIME ZONE …`) is its instant.

use std::ops::ControlFlow;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::visit_relations;

/// Why an expression is no constant: `index` is its position in the list given to
/// [`constants`], `why` the reason, for the caller's message naming the clause.
#[derive(Debug)]
pub(super) struct NotConstant {
    pub index: usize,
    pub why: String,
}

/// The values of the constant SQL expressions `texts`, in order, evaluated once and
/// together in `ctx` (see the module docs); a NULL value is a null [`ScalarValue`].
///
/// Errors: [`NotConstant`] for the first expression that does not plan, reads a table, is
/// volatile, or fails to evaluate (DataFusion's reason in `why`).
pub(super) async fn constants(
    ctx: &SessionContext,
    texts: &[String],
) -> std::result::Result<Vec<ScalarValue>, NotConstant> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    // Spark's number literals (`2Y`, `1.5D`, `1.0BD`) read as a query reads them (module
    // `literals`): a CALL is not rewritten as a whole, its arguments are, here
    let mut spark = Vec::with_capacity(texts.len());
    for (index, text) in texts.iter().enumerate() {
        let rewritten = match super::tokenize(ctx, text) {
            Some(toks) => super::literals::spark_number_literals(text, &toks)
                .map_err(|e| NotConstant {
                    index,
                    why: e.to_string(),
                })?
                .into_owned(),
            None => text.clone(),
        };
        spark.push(rewritten);
    }
    let texts = &spark;
    let state = ctx.state();
    for (index, text) in texts.iter().enumerate() {
        let refuse = |why: String| NotConstant { index, why };
        let select = format!("SELECT {text}");
        let plan = match state.create_logical_plan(&select).await {
            Ok(plan) => plan,
            // a table that does not plan (unknown, or Spark's `ns.t.snapshots`, which
            // statements read as a metadata table) is still a table read
            Err(_) if names_a_table(ctx, &select) => {
                return Err(refuse("not a constant (it reads a table)".to_string()))
            }
            Err(e) => return Err(refuse(format!("not a constant expression ({e})"))),
        };
        let LogicalPlan::Projection(projection) = &plan else {
            return Err(refuse("not one constant expression".to_string()));
        };
        if projection.expr.len() != 1 {
            return Err(refuse("not one value".to_string()));
        }
        if projection.expr.iter().any(|e| e.is_volatile()) {
            return Err(refuse(
                "not a constant: it is volatile (a new value each time it is evaluated)"
                    .to_string(),
            ));
        }
        let mut reads_a_table = false;
        let _ = plan.apply_with_subqueries(|node| {
            reads_a_table |= matches!(node, LogicalPlan::TableScan(_));
            Ok(match reads_a_table {
                true => TreeNodeRecursion::Stop,
                false => TreeNodeRecursion::Continue,
            })
        });
        if reads_a_table {
            return Err(refuse("not a constant (it reads a table)".to_string()));
        }
    }
    // one query for all: `now()` is one instant in every expression
    match run(ctx, texts).await {
        Ok(values) => Ok(values),
        // which one failed: each alone (the first that fails alone, else the first)
        Err(e) => {
            for (index, text) in texts.iter().enumerate() {
                if let Err(e) = run(ctx, std::slice::from_ref(text)).await {
                    return Err(NotConstant { index, why: e });
                }
            }
            Err(NotConstant { index: 0, why: e })
        }
    }
}

/// Whether `select` (parsed in the session's dialect) names a relation: a table, a view or
/// a CTE.
fn names_a_table(ctx: &SessionContext, select: &str) -> bool {
    super::parse_statement(ctx, select)
        .is_some_and(|parsed| visit_relations(&parsed, |_| ControlFlow::Break(())).is_break())
}

/// `SELECT (t1) AS c0, (t2) AS c1, …` run in `ctx`: its one row, or why it failed.
async fn run(
    ctx: &SessionContext,
    texts: &[String],
) -> std::result::Result<Vec<ScalarValue>, String> {
    let all = texts
        .iter()
        .enumerate()
        .map(|(i, t)| format!("({t}) AS c{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let cannot = |e: datafusion::error::DataFusionError| format!("cannot be evaluated ({e})");
    let plan = ctx
        .state()
        .create_logical_plan(&format!("SELECT {all}"))
        .await
        .map_err(cannot)?;
    let batches = ctx
        .execute_logical_plan(plan)
        .await
        .map_err(cannot)?
        .collect()
        .await
        .map_err(cannot)?;
    let batch = batches
        .iter()
        .find(|b| b.num_rows() > 0 && b.num_columns() == texts.len())
        .ok_or_else(|| "not one value".to_string())?;
    (0..texts.len())
        .map(|i| ScalarValue::try_from_array(batch.column(i), 0).map_err(cannot))
        .collect()
}

/// A timestamp or date `value` in milliseconds since the Unix epoch (floor of finer
/// units; a zone-less timestamp read as UTC, a date as its midnight UTC); `None` for a
/// null or a value of another type.
pub(super) fn timestamp_ms(value: &ScalarValue) -> Option<i64> {
    Some(match value {
        ScalarValue::TimestampSecond(Some(v), _) => v.checked_mul(1000)?,
        ScalarValue::TimestampMillisecond(Some(v), _) => *v,
        ScalarValue::TimestampMicrosecond(Some(v), _) => v.div_euclid(1000),
        ScalarValue::TimestampNanosecond(Some(v), _) => v.div_euclid(1_000_000),
        ScalarValue::Date32(Some(days)) => i64::from(*days) * 86_400_000,
        ScalarValue::Date64(Some(ms)) => *ms,
        _ => return None,
    })
}

/// A whole-number `value` as an `i64`; `None` for a null, a value of another type, or a
/// `UInt64` beyond `i64::MAX`.
pub(super) fn whole_number(value: &ScalarValue) -> Option<i64> {
    Some(match value {
        ScalarValue::Int8(Some(n)) => i64::from(*n),
        ScalarValue::Int16(Some(n)) => i64::from(*n),
        ScalarValue::Int32(Some(n)) => i64::from(*n),
        ScalarValue::Int64(Some(n)) => *n,
        ScalarValue::UInt8(Some(n)) => i64::from(*n),
        ScalarValue::UInt16(Some(n)) => i64::from(*n),
        ScalarValue::UInt32(Some(n)) => i64::from(*n),
        ScalarValue::UInt64(Some(n)) => i64::try_from(*n).ok()?,
        _ => return None,
    })
}

/// A string `value` (any of Arrow's string types); `None` for a null or another type.
pub(super) fn text(value: &ScalarValue) -> Option<&str> {
    match value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => Some(s),
        _ => None,
    }
}
