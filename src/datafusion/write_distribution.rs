//! The distribution a write asks of its input (`write.distribution-mode`, see
//! [`DistributionMode`]): under `hash` and `range` the rows are hash-partitioned by
//! their partition values before the writers, so each partition's rows reach one writer
//! and a partition is written as one set of files, not one per writer.
//!
//! The hash keys are DataFusion's own expressions, which every engine built on
//! DataFusion can send to its workers without a codec: a key only has to give equal
//! values to rows of one partition (its rows then hash alike); it may merge partitions
//! (they then share a writer), and where no such expression exists the field is left
//! out of the key. A key must not fail on a value the table takes: years and months are
//! `date_part`s, which read any timestamp, where DataFusion 55's `date_trunc` to a year
//! or month goes through nanoseconds and failed outside 1677–2262 ("Timestamp … out of
//! range", a tester's `INSERT … SELECT` of `TIMESTAMP '1500-06-01 00:00:00'`). Per
//! transform (spec "Partition Transforms"):
//!
//! | transform | key |
//! |---|---|
//! | `identity` | the column |
//! | `year` of a timestamp or date | `date_part('year', column)` |
//! | `month` of a timestamp or date | `date_part('year', column) * 12 + date_part('month', column)` |
//! | `day`, `hour` of a timestamp | `date_trunc(unit, column)`; `day` of a date: the column |
//! | `truncate(W)` of a string | `left(column, W)` (both count code points) |
//! | `truncate(W)` of an `int`/`long` | `column - ((column % W) + W) % W` (the spec's formula) |
//! | `bucket(N)`, `truncate` of `decimal`/`binary`, `void`, nested sources | left out |

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Operator, ScalarUDF};
use datafusion::physical_expr::expressions::{BinaryExpr, Column, Literal};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};

use super::data_file_writer_exec::DataFileWriteState;
use crate::spec::{PrimitiveType, Transform};
use crate::write::DistributionMode;

/// The expressions the rows of a write into `state`'s table (rows of `schema`, the
/// provider's Arrow schema) are hash-partitioned by before its writers; `None` when the
/// write's mode ([`DistributionMode::resolve`]; an invalid value fails the write when it
/// starts) does not distribute, or no partition field has a key (see the module docs).
pub(crate) fn partition_distribution(
    state: &DataFileWriteState,
    schema: &SchemaRef,
) -> Option<Vec<Arc<dyn PhysicalExpr>>> {
    let partitioned = state
        .spec
        .fields
        .iter()
        .any(|f| f.transform != Transform::Void);
    let mode = DistributionMode::resolve(
        &state.properties,
        partitioned,
        state.sort_order_id.is_some(),
    )
    .ok()?;
    if !partitioned || !mode.distributes_by_partition() {
        return None;
    }
    let mut keys: Vec<Arc<dyn PhysicalExpr>> = vec![];
    for f in &state.spec.fields {
        let Some(field) = state.schema.columns().iter().find(|c| c.id == f.source_id) else {
            continue;
        };
        let (Some(source), Ok(index)) = (
            field.field_type.as_primitive(),
            schema.index_of(&field.name),
        ) else {
            continue;
        };
        let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new(&field.name, index));
        let data_type = schema.field(index).data_type();
        if let Some(key) = partition_key(f.transform.clone(), *source, column, data_type, schema) {
            keys.push(key);
        }
    }
    (!keys.is_empty()).then_some(keys)
}

/// The key of one partition field (see the module docs), if it has one.
fn partition_key(
    transform: Transform,
    source: PrimitiveType,
    column: Arc<dyn PhysicalExpr>,
    data_type: &DataType,
    schema: &SchemaRef,
) -> Option<Arc<dyn PhysicalExpr>> {
    use PrimitiveType as P;
    let unit = match transform {
        Transform::Identity => return Some(column),
        Transform::Year | Transform::Month => return calendar_key(transform, column, schema),
        Transform::Day if source == P::Date => return Some(column),
        Transform::Day => "day",
        Transform::Hour => "hour",
        Transform::Truncate(w) => return truncate_key(w, column, data_type, schema),
        _ => return None,
    };
    let timestamp = match data_type {
        DataType::Timestamp(..) => column,
        _ => return None,
    };
    function(
        datafusion::functions::datetime::date_trunc(),
        vec![utf8(unit), timestamp],
        schema,
    )
}

/// The key of a `year` or `month` field of a timestamp or date `column`: its year, or
/// its year * 12 + month (see the module docs).
fn calendar_key(
    transform: Transform,
    column: Arc<dyn PhysicalExpr>,
    schema: &SchemaRef,
) -> Option<Arc<dyn PhysicalExpr>> {
    let part = |unit: &str| {
        function(
            datafusion::functions::datetime::date_part(),
            vec![utf8(unit), Arc::clone(&column)],
            schema,
        )
    };
    let year = part("year")?;
    if transform == Transform::Year {
        return Some(year);
    }
    let twelve: Arc<dyn PhysicalExpr> = Arc::new(Literal::new(ScalarValue::Int32(Some(12))));
    let months: Arc<dyn PhysicalExpr> = Arc::new(BinaryExpr::new(year, Operator::Multiply, twelve));
    Some(Arc::new(BinaryExpr::new(
        months,
        Operator::Plus,
        part("month")?,
    )))
}

/// `truncate(w)`'s key for a string or integer column, if it has one.
fn truncate_key(
    w: u32,
    column: Arc<dyn PhysicalExpr>,
    data_type: &DataType,
    schema: &SchemaRef,
) -> Option<Arc<dyn PhysicalExpr>> {
    let width = match data_type {
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => {
            let width = Arc::new(Literal::new(ScalarValue::Int64(Some(i64::from(w)))));
            return function(
                datafusion::functions::unicode::left(),
                vec![column, width],
                schema,
            );
        }
        DataType::Int32 => ScalarValue::Int32(Some(i32::try_from(w).ok()?)),
        DataType::Int64 => ScalarValue::Int64(Some(i64::from(w))),
        _ => return None,
    };
    // v - (((v % W) + W) % W)
    let w: Arc<dyn PhysicalExpr> = Arc::new(Literal::new(width));
    let binary = |l: Arc<dyn PhysicalExpr>,
                  op,
                  r: Arc<dyn PhysicalExpr>|
     -> Arc<dyn PhysicalExpr> { Arc::new(BinaryExpr::new(l, op, r)) };
    let rem = binary(Arc::clone(&column), Operator::Modulo, Arc::clone(&w));
    let positive = binary(
        binary(rem, Operator::Plus, Arc::clone(&w)),
        Operator::Modulo,
        w,
    );
    Some(binary(column, Operator::Minus, positive))
}

fn utf8(s: &str) -> Arc<dyn PhysicalExpr> {
    Arc::new(Literal::new(ScalarValue::Utf8(Some(s.to_string()))))
}

fn function(
    udf: Arc<ScalarUDF>,
    args: Vec<Arc<dyn PhysicalExpr>>,
    schema: &SchemaRef,
) -> Option<Arc<dyn PhysicalExpr>> {
    ScalarFunctionExpr::try_new(udf, args, schema, Arc::new(ConfigOptions::default()))
        .ok()
        .map(|e| Arc::new(e) as Arc<dyn PhysicalExpr>)
}
