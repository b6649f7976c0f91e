//! A literal an `INSERT` cannot write into its column (`INSERT INTO t VALUES ('x')` into
//! an `INT` column, `10000000000` into an `INT`), named by table and column.
//!
//! DataFusion 55 plans an `INSERT`'s values as casts to the table's column types
//! (`CAST(Utf8("x") AS Int32)` in the `VALUES` rows or in the projection over the query)
//! and its constant folding then fails on such a literal with Arrow's message alone:
//! "Optimizer rule 'simplify_expressions' failed … Cast error: Cannot cast string 'x' to
//! value of Int32 type", which names neither the table nor the column.
//! [`InsertLiteralCasts`] (an analyzer rule, so it runs before the optimizer) tries each
//! such cast of a literal and fails the statement with the same cast error, prefixed by
//! the table and the column, as `UPDATE … SET` names them: "INSERT INTO 'ns.t': cannot
//! set column 'a' (Int32): Arrow error: Cast error: …". The literals of a `VALUES`
//! column are cast as one array where Arrow's kernel alone decides the values (each is
//! cast alone only when that fails, to name it), so a large `INSERT … VALUES` is not
//! cast value by value a second time. A string written into a `date` or `timestamp`
//! column is checked as Spark's cast reads it
//! ([`spark_text_casts`](super::spark_text_casts), the rule that reads it so), not by
//! Arrow's cast. Only value errors are reported
//! here: a cast Arrow does not have between the two types (a uuid's text into
//! `FixedSizeBinary(16)`, which another rule rewrites) is left to the rules after it.

use std::sync::Arc;

use datafusion::arrow::compute::{can_cast_types, cast_with_options};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::format::DEFAULT_CAST_OPTIONS;
use datafusion::common::{DataFusionError, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{Cast, Expr, LogicalPlan, WriteOp};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;

use super::spark_text_casts::{spark_reads, unread_text};

/// The rule's name in the session's analyzer.
pub const INSERT_LITERAL_CASTS_RULE: &str = "icefloe_insert_literal_casts";

/// The analyzer rule of the module docs.
#[derive(Debug, Default)]
pub struct InsertLiteralCasts;

/// Add [`InsertLiteralCasts`] to `ctx`'s analyzer, once (a second call does nothing).
/// [`install_values_rule`](super::install_values_rule) calls it.
pub fn install_insert_casts_rule(ctx: &SessionContext) {
    super::analyzer_rules::add_analyzer_rule_once(ctx, Arc::new(InsertLiteralCasts));
}

impl AnalyzerRule for InsertLiteralCasts {
    fn name(&self) -> &str {
        INSERT_LITERAL_CASTS_RULE
    }

    /// Errors: an icefloe [`crate::ErrorKind::InvalidArgument`] (as
    /// [`DataFusionError::External`]) naming the table and column, for the first literal
    /// of an `INSERT` its column's type cannot hold; the plan is returned unchanged
    /// otherwise.
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> DFResult<LogicalPlan> {
        if let LogicalPlan::Dml(dml) = &plan {
            if matches!(dml.op, WriteOp::Insert(_)) {
                check_input(&dml.table_name.to_string(), &dml.input)?;
            }
        }
        Ok(plan)
    }
}

/// The casts of literals in `input` (the `INSERT`'s input: `Projection ← Values`, a
/// `Projection` over a query, whose casts may read a literal of the query's own
/// `Projection` by column, or `Values`), each checked against its column.
fn check_input(table: &str, input: &LogicalPlan) -> DFResult<()> {
    // the projection's names: `columnN AS name` of a `VALUES`, or the table's columns
    let mut names: Vec<(String, String)> = Vec::new();
    let values = match input {
        LogicalPlan::Projection(p) => {
            let query = match p.input.as_ref() {
                LogicalPlan::Projection(q) => Some(q),
                _ => None,
            };
            for e in &p.expr {
                if let Expr::Alias(a) = e {
                    match a.expr.as_ref() {
                        Expr::Column(c) => names.push((c.name.clone(), a.name.clone())),
                        Expr::Cast(Cast { expr, field }) => {
                            // `CAST(column AS type)` of the query's literal column
                            let literal = match (expr.as_ref(), query) {
                                (Expr::Column(c), Some(q)) => q
                                    .schema
                                    .fields()
                                    .iter()
                                    .position(|f| f.name() == &c.name)
                                    .and_then(|i| q.expr.get(i)),
                                _ => None,
                            };
                            let cast = match literal {
                                Some(l) => Expr::Cast(Cast::new(
                                    Box::new(l.clone()),
                                    field.data_type().clone(),
                                )),
                                None => a.expr.as_ref().clone(),
                            };
                            check_literal_cast(table, &a.name, &cast)?;
                        }
                        _ => {}
                    }
                }
            }
            match p.input.as_ref() {
                LogicalPlan::Values(v) => v,
                _ => return Ok(()),
            }
        }
        LogicalPlan::Values(v) => v,
        _ => return Ok(()),
    };
    for (i, field) in values.schema.fields().iter().enumerate() {
        let column = names
            .iter()
            .find(|(from, _)| from == field.name())
            .map_or(field.name().as_str(), |(_, to)| to.as_str());
        check_column_casts(
            table,
            column,
            values.values.iter().filter_map(|row| row.get(i)),
        )?;
    }
    Ok(())
}

/// The literal casts among `cells` (one column of a `VALUES`, a row each), checked with
/// one cast of an array per pair of types where Arrow's kernel alone decides the value
/// (strings, numbers and booleans into a type that is not nested): a `VALUES` of many
/// rows is not cast value by value. Only when that cast fails, or for other types, is
/// each value checked alone ([`check_value`]), which names the first that fails.
fn check_column_casts<'a>(
    table: &str,
    column: &str,
    cells: impl Iterator<Item = &'a Expr>,
) -> DFResult<()> {
    let mut groups: Vec<((DataType, &DataType), Vec<&ScalarValue>)> = Vec::new();
    for (value, data_type) in cells.filter_map(literal_cast) {
        let key = (value.data_type(), data_type);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, values)) => values.push(value),
            None => groups.push((key, vec![value])),
        }
    }
    for ((from, to), values) in groups {
        let kernel_decides = (from.is_primitive() && !from.is_temporal()
            || from.is_string()
            || from == DataType::Boolean)
            && !to.is_nested()
            && !spark_reads(&from, to);
        let fits = kernel_decides
            && ScalarValue::iter_to_array(values.iter().map(|v| (*v).clone()))
                .is_ok_and(|array| cast_with_options(&array, to, &DEFAULT_CAST_OPTIONS).is_ok());
        if !fits {
            for value in values {
                check_value(table, column, value, to)?;
            }
        }
    }
    Ok(())
}

/// `e` (aliases aside) when it is `CAST(literal AS type)` of castable types and the
/// literal is not NULL: the literal and the type.
fn literal_cast(e: &Expr) -> Option<(&ScalarValue, &DataType)> {
    let mut e = e;
    while let Expr::Alias(a) = e {
        e = a.expr.as_ref();
    }
    let Expr::Cast(Cast { expr, field }) = e else {
        return None;
    };
    let data_type = field.data_type();
    let mut expr = expr.as_ref();
    while let Expr::Alias(a) = expr {
        expr = a.expr.as_ref();
    }
    let Expr::Literal(value, _) = expr else {
        return None;
    };
    (!value.is_null() && can_cast_types(&value.data_type(), data_type))
        .then_some((value, data_type))
}

/// `e` when it is a literal cast ([`literal_cast`]): an error naming `table` and `column`
/// when the literal's value does not cast.
fn check_literal_cast(table: &str, column: &str, e: &Expr) -> DFResult<()> {
    match literal_cast(e) {
        Some((value, data_type)) => check_value(table, column, value, data_type),
        None => Ok(()),
    }
}

/// An error naming `table` and `column` when `value` does not cast to `data_type`: a
/// string cast to a date or timestamp as Spark reads it ([`unread_text`]), any other
/// value by Arrow's cast.
fn check_value(
    table: &str,
    column: &str,
    value: &ScalarValue,
    data_type: &DataType,
) -> DFResult<()> {
    let error = |err: String| {
        Err(DataFusionError::External(Box::new(
            crate::error::Error::invalid_argument(format!(
                "INSERT INTO '{table}': cannot set column '{column}' ({data_type}): {err}"
            )),
        )))
    };
    if spark_reads(&value.data_type(), data_type) {
        return match unread_text(value, data_type) {
            Some(reason) => error(reason),
            None => Ok(()),
        };
    }
    match value.cast_to(data_type) {
        Ok(_) => Ok(()),
        Err(err) => error(err.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use datafusion::logical_expr::lit;

    use super::*;

    fn cast(value: Expr, to: DataType) -> Expr {
        Expr::Cast(Cast::new(Box::new(value), to))
    }

    /// A column of many literals is checked as one array; the one value that does not
    /// fit is still named, whichever row holds it, and values of other types in the
    /// same column (a date cast to a timestamp) are checked one by one.
    #[test]
    fn a_column_of_literals_names_the_value_that_does_not_fit() {
        let mut cells: Vec<Expr> = (0..1000)
            .map(|i| cast(lit(i.to_string()), DataType::Int32))
            .collect();
        cells.push(cast(lit(5i64), DataType::Int32));
        cells.push(Expr::Cast(Cast::new(
            Box::new(lit(ScalarValue::Utf8(None))),
            DataType::Int32,
        )));
        assert!(check_column_casts("ns.t", "a", cells.iter()).is_ok());
        cells[700] = cast(lit("7x"), DataType::Int32);
        let err = check_column_casts("ns.t", "a", cells.iter())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("INSERT INTO 'ns.t': cannot set column 'a' (Int32)"),
            "{err}"
        );
        assert!(err.contains("'7x'"), "{err}");
        let big = [cast(lit(10_000_000_000i64), DataType::Int32)];
        let err = check_column_casts("ns.t", "b", big.iter())
            .unwrap_err()
            .to_string();
        assert!(err.contains("column 'b'"), "{err}");
        let date = [cast(
            lit(ScalarValue::Date32(Some(19_000))),
            DataType::Timestamp(datafusion::arrow::datatypes::TimeUnit::Microsecond, None),
        )];
        assert!(check_column_casts("ns.t", "ts", date.iter()).is_ok());
    }

    /// Strings into `date` and `timestamp` columns are checked as Spark's cast reads them:
    /// Spark's short forms pass where Arrow's cast fails, and one Spark reads no value of
    /// is named, in a column of many as alone.
    #[test]
    fn strings_into_dates_and_timestamps_are_checked_as_spark_reads_them() {
        use datafusion::arrow::datatypes::TimeUnit;
        let ts = DataType::Timestamp(TimeUnit::Microsecond, None);
        let mut cells = vec![
            cast(lit("2024-1-5"), DataType::Date32),
            cast(lit("2024"), DataType::Date32),
        ];
        assert!(check_column_casts("ns.t", "d", cells.iter()).is_ok());
        cells.push(cast(lit("2024-13-01"), DataType::Date32));
        let err = check_column_casts("ns.t", "d", cells.iter())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot set column 'd' (Date32): '2024-13-01' is not a date"),
            "{err}"
        );
        let fine = [cast(lit("2024-1-5 7:5"), ts.clone())];
        assert!(check_column_casts("ns.t", "ts", fine.iter()).is_ok());
        // a string into a string column is no date
        let text = [cast(lit("u"), DataType::Utf8View)];
        assert!(check_column_casts("ns.t", "s", text.iter()).is_ok());
        assert_eq!(
            unread_text(&ScalarValue::from("u"), &DataType::Utf8View),
            None
        );
        let bad = [cast(lit("10:30:00"), ts)];
        let err = check_column_casts("ns.t", "ts", bad.iter())
            .unwrap_err()
            .to_string();
        assert!(err.contains("'10:30:00' is not a timestamp"), "{err}");
    }
}
