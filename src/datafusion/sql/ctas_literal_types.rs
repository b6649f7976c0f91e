//! The column types a CTAS (`CREATE [OR REPLACE] TABLE … AS query`, `REPLACE TABLE … AS`)
//! gives integer literals: Spark's, where DataFusion's differ.
//!
//! Spark SQL types an integer literal that fits 32 bits as an `INT` (`SqlBaseParser`'s
//! `INTEGER_VALUE`, `Literal(Int)`), a larger one as a `BIGINT`; DataFusion types every
//! integer literal as `BIGINT` (Int64). So `CREATE TABLE t AS SELECT 1 AS i, array(1, 2)
//! AS arr, named_struct('a', 1) AS st` made `long`, `list<long>` and `struct<a: long>`
//! columns where Spark makes `int`, `array<int>` and `struct<a: int>`. Only the table's
//! column types follow Spark ([`spark_literal_types`]); the query itself keeps
//! DataFusion's typing (its rows are inserted with the casts an `INSERT` makes, and every
//! such value fits), so no query result changes.
//!
//! An output column takes Spark's type when it is, in every branch of the query's
//! `UNION`s (and in every row of a `VALUES`), an integer literal (signed, `NULL` too), or
//! `array(…)`, `named_struct(…)` or `struct(…)` of such values at any depth (a struct's
//! other fields keep DataFusion's types); the literals of a column are combined as Spark
//! combines `INT` and `BIGINT` (`array(1, 3000000000)` is `array<bigint>`). A column
//! computed otherwise (`1 + 1`, a subquery's column, a function of a literal) keeps
//! DataFusion's type. A `BIGINT` literal written `100L` stays a `long`: the query's
//! `nL` literals are planned as `CAST(n AS BIGINT)` for the columns
//! ([`super::literals::long_literals_as_casts`]), so a bare Int64 literal in the plan is
//! one written without a suffix.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Distinct, Expr, LogicalPlan};

/// What one expression contributes to its output column's type.
#[derive(Debug, Clone, PartialEq)]
enum Typed {
    /// A `NULL` literal: takes the type of the others.
    Null,
    /// Spark's type of the value.
    Spark(DataType),
}

/// Spark's type (as Arrow's) of each output column of `plan` (a CTAS query's plan) whose
/// type Spark gives otherwise than DataFusion did (see the module docs); `None` for a
/// column that keeps DataFusion's type. As many entries as `plan` has columns, or none
/// when no column changes.
pub(super) fn spark_literal_types(plan: &LogicalPlan) -> Vec<Option<DataType>> {
    let fields = plan.schema().fields();
    let Some(branches) = branches(plan) else {
        return vec![];
    };
    let mut out = vec![None; fields.len()];
    let mut changed = false;
    for (i, (slot, field)) in out.iter_mut().zip(fields.iter()).enumerate() {
        let column: Option<Vec<&Expr>> = branches.iter().map(|row| row.get(i).copied()).collect();
        let Some(column) = column else {
            continue;
        };
        if let Some(Typed::Spark(t)) = combine(column.iter().map(|e| typed(e, field.data_type()))) {
            if &t != field.data_type() {
                *slot = Some(t);
                changed = true;
            }
        }
    }
    if !changed {
        return vec![];
    }
    out
}

/// The expressions making `plan`'s columns: one list per `UNION` branch (or `VALUES`
/// row); `None` when a branch is no projection or `VALUES` (read through sorts, limits,
/// `DISTINCT` and aliases).
fn branches(plan: &LogicalPlan) -> Option<Vec<Vec<&Expr>>> {
    match plan {
        LogicalPlan::Projection(p) => Some(vec![p.expr.iter().collect()]),
        LogicalPlan::Values(v) => Some(v.values.iter().map(|row| row.iter().collect()).collect()),
        LogicalPlan::Union(u) => {
            let mut all = vec![];
            for input in &u.inputs {
                all.extend(branches(input)?);
            }
            Some(all)
        }
        LogicalPlan::Sort(s) => branches(&s.input),
        LogicalPlan::Limit(l) => branches(&l.input),
        LogicalPlan::SubqueryAlias(a) => branches(&a.input),
        LogicalPlan::Distinct(Distinct::All(input)) => branches(input),
        _ => None,
    }
}

/// Combine the types of one column's (or one list's elements') values as Spark does for
/// integers: all one type, or `INT` and `BIGINT` as `BIGINT`; `None` for any other mix or
/// a value that is not a literal.
fn combine(types: impl Iterator<Item = Option<Typed>>) -> Option<Typed> {
    let mut out = Typed::Null;
    for t in types {
        out = match (out, t?) {
            (Typed::Null, t) | (t, Typed::Null) => t,
            (Typed::Spark(a), Typed::Spark(b)) if a == b => Typed::Spark(a),
            (Typed::Spark(a), Typed::Spark(b))
                if [&a, &b]
                    .iter()
                    .all(|t| matches!(t, DataType::Int32 | DataType::Int64)) =>
            {
                Typed::Spark(DataType::Int64)
            }
            _ => return None,
        };
    }
    Some(out)
}

/// Spark's type of `expr`, whose type DataFusion planned as `planned`, when `expr` is a
/// literal or a constructor of them (see the module docs); `None` otherwise.
fn typed(expr: &Expr, planned: &DataType) -> Option<Typed> {
    match expr {
        Expr::Alias(a) => typed(&a.expr, planned),
        Expr::Literal(value, _) if value.is_null() => Some(Typed::Null),
        Expr::Literal(ScalarValue::Int64(Some(v)), _) => Some(Typed::Spark(integer(*v))),
        Expr::Negative(inner) => match inner.as_ref() {
            Expr::Literal(ScalarValue::Int64(Some(v)), _) => Some(Typed::Spark(
                v.checked_neg().map_or(DataType::Int64, integer),
            )),
            _ => None,
        },
        Expr::ScalarFunction(f) => match (f.name(), planned) {
            // DataFusion's `make_array`, or `datafusion-spark`'s `array`
            ("make_array" | "array", DataType::List(element)) => {
                let elements = f.args.iter().map(|a| typed(a, element.data_type()));
                match combine(elements)? {
                    // no element, or NULLs only: DataFusion's type
                    Typed::Null => None,
                    Typed::Spark(t) => Some(Typed::Spark(DataType::List(Arc::new(
                        element.as_ref().clone().with_data_type(t),
                    )))),
                }
            }
            ("named_struct", DataType::Struct(fields)) => {
                // (name, value) pairs: the values are every second argument
                let values: Vec<&Expr> = f.args.iter().skip(1).step_by(2).collect();
                Some(Typed::Spark(DataType::Struct(struct_fields(
                    fields, &values,
                )?)))
            }
            ("struct", DataType::Struct(fields)) => {
                let values: Vec<&Expr> = f.args.iter().collect();
                Some(Typed::Spark(DataType::Struct(struct_fields(
                    fields, &values,
                )?)))
            }
            _ => None,
        },
        _ => None,
    }
}

/// `fields` (a struct's, as planned) with Spark's type for each field whose value is a
/// literal of one; `None` when `values` do not match the fields one to one.
fn struct_fields(fields: &Fields, values: &[&Expr]) -> Option<Fields> {
    if fields.len() != values.len() {
        return None;
    }
    let typed: Vec<Field> = fields
        .iter()
        .zip(values)
        .map(|(field, value)| match typed(value, field.data_type()) {
            Some(Typed::Spark(t)) => field.as_ref().clone().with_data_type(t),
            _ => field.as_ref().clone(),
        })
        .collect();
    Some(typed.into())
}

/// Spark's type of the integer literal `v`: `INT` when it fits 32 bits, else `BIGINT`.
fn integer(v: i64) -> DataType {
    match i32::try_from(v) {
        Ok(_) => DataType::Int32,
        Err(_) => DataType::Int64,
    }
}

/// `fields` with the types of `spark` where it gives one (as many entries as fields).
pub(super) fn with_types(fields: &Fields, spark: &[Option<DataType>]) -> Fields {
    fields
        .iter()
        .zip(spark.iter().chain(std::iter::repeat(&None)))
        .map(|(f, t)| match t {
            Some(t) => Arc::new(f.as_ref().clone().with_data_type(t.clone())),
            None => Arc::clone(f),
        })
        .collect()
}
