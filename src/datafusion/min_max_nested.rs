//! `min` and `max` of nested values: structs, lists (`List`, `LargeList`,
//! `FixedSizeList`) and any nesting of them, in one total order, as Spark orders them
//! (its `InterpretedOrdering` of `StructType` and `ArrayType`, ascending):
//! - a struct compares field by field, a list element by element, the first difference
//!   deciding; a list that is a prefix of another is smaller (`[1] < [1, 2]`, `[] < [0]`);
//! - a NULL field or element is lower than every value (`{a: NULL, b: 1} < {a: 1, b: 0}`,
//!   `[NULL] < [1]`), so `max([NULL], [2], [1])` is `[2]` and `min` is `[NULL]`;
//! - floats at any depth as `min`/`max` of floats order them (`super::min_max`): every
//!   NaN the canonical one and greater than every number, `-0.0` below `0.0`;
//! - a NULL value itself (the whole struct or list) is ignored, as for every type.
//!
//! DataFusion 55's accumulators compared such values with `ScalarValue::partial_cmp`,
//! which answers `None` for a NULL field and keeps whichever value came first: `max` and
//! `min` of `{a: NULL, b: 1}, {a: 2, b: 1}, {a: 1, b: 1}` were both `{a: NULL, b: 1}` in
//! that row order and `{a: 2, b: 1}` / `{a: 1, b: 1}` in another; its lists ordered NULL
//! elements last. Here values are compared as Arrow's row format encodes them (ascending,
//! NULLs first at every depth: byte order is the order above), so the answer depends on
//! no row order, batch, partition or phase. Values come back as the argument's exact type
//! (field names and metadata of nested fields kept: DataFusion's `ScalarValue` of a list
//! drops its element field's metadata, which the `PARQUET:field_id` of an Iceberg list
//! column carries, and its aggregate then failed with "column types must match schema
//! types").
//!
//! Maps have no order (Spark refuses `min`/`max` of a map at analysis): [`holds_map`]
//! lets planning refuse them at any depth.

use std::collections::VecDeque;
use std::sync::Arc;

use datafusion::arrow::array::{new_null_array, Array, ArrayRef, AsArray, BooleanArray};
use datafusion::arrow::compute::{cast, SortOptions};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::row::{OwnedRow, RowConverter, Rows, SortField};
use datafusion::common::{DataFusionError, Result as DFResult, ScalarValue};
use datafusion::logical_expr::{Accumulator, EmitTo, GroupsAccumulator};
use datafusion_functions_aggregate_common::aggregate::groups_accumulator::nulls::apply_filter_as_nulls;

use super::min_max::Extremum;
use crate::nan::canonical_nans;

/// Whether `min`/`max` of `data_type` go through this module: structs and lists.
pub(super) fn is_nested(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::FixedSizeList(_, _)
    )
}

/// Whether values of `data_type` hold a map at any depth (a map, or a struct or list
/// with one inside), which has no order.
pub(super) fn holds_map(data_type: &DataType) -> bool {
    match data_type {
        DataType::Map(_, _) => true,
        DataType::Struct(fields) => fields.iter().any(|f| holds_map(f.data_type())),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => holds_map(f.data_type()),
        DataType::Dictionary(_, values) => holds_map(values),
        _ => false,
    }
}

/// The total order of the module docs over values of one nested type: each value as a
/// byte string (Arrow's row format, ascending, NULLs first) whose byte order is the
/// value order, and back.
struct NestedOrder {
    converter: RowConverter,
    /// The argument's type, which values come back as.
    data_type: DataType,
    extremum: Extremum,
    /// The encoding of a NULL value.
    null: OwnedRow,
}

impl NestedOrder {
    /// Errors: Arrow's, for a type its row format cannot encode.
    fn try_new(data_type: &DataType, extremum: Extremum) -> DFResult<Self> {
        let options = SortOptions {
            descending: false,
            nulls_first: true,
        };
        let converter = RowConverter::new(vec![SortField::new_with_options(
            data_type.clone(),
            options,
        )])?;
        let null = converter
            .convert_columns(&[new_null_array(data_type, 1)])?
            .row(0)
            .owned();
        Ok(Self {
            converter,
            data_type: data_type.clone(),
            extremum,
            null,
        })
    }

    /// `values` encoded, every NaN in them made the canonical one first.
    fn rows(&self, values: &ArrayRef) -> DFResult<Rows> {
        let values = canonical_nans(values)?.unwrap_or_else(|| Arc::clone(values));
        Ok(self.converter.convert_columns(&[values])?)
    }

    /// Whether `new` is to replace `current`: greater for `max`, less for `min`.
    fn better(&self, new: &[u8], current: &[u8]) -> bool {
        match self.extremum {
            Extremum::Max => new > current,
            Extremum::Min => new < current,
        }
    }

    /// The values encoded as `rows` (`None`: NULL), as an array of the argument's type.
    fn array<'a>(&self, rows: impl IntoIterator<Item = Option<&'a [u8]>>) -> DFResult<ArrayRef> {
        let parser = self.converter.parser();
        let decoded = self
            .converter
            .convert_rows(rows.into_iter().map(|r| match r {
                Some(bytes) => parser.parse(bytes),
                None => self.null.row(),
            }))?;
        let array = decoded.into_iter().next().ok_or_else(|| {
            DataFusionError::Internal("min/max: a row converter of one column decoded none".into())
        })?;
        // the row format decodes dictionaries as their values
        Ok(match array.data_type() == &self.data_type {
            true => array,
            false => cast(&array, &self.data_type)?,
        })
    }

    /// The value encoded as `row` (`None`: NULL) as a scalar of the argument's exact type.
    fn scalar(&self, row: Option<&[u8]>) -> DFResult<ScalarValue> {
        let array = self.array([row])?;
        Ok(match array.data_type() {
            DataType::List(_) => ScalarValue::List(Arc::new(array.as_list::<i32>().clone())),
            DataType::LargeList(_) => {
                ScalarValue::LargeList(Arc::new(array.as_list::<i64>().clone()))
            }
            DataType::FixedSizeList(_, _) => {
                ScalarValue::FixedSizeList(Arc::new(array.as_fixed_size_list().clone()))
            }
            DataType::Struct(_) => ScalarValue::Struct(Arc::new(array.as_struct().clone())),
            _ => ScalarValue::try_from_array(&array, 0)?,
        })
    }

    fn size(&self) -> usize {
        self.converter.size() + self.null.as_ref().len()
    }
}

/// Each group's extreme so far, encoded (`None`: no non-NULL value yet).
struct Extremes {
    order: NestedOrder,
    values: Vec<Option<Box<[u8]>>>,
    /// The bytes of `values`' encodings.
    bytes: usize,
}

impl Extremes {
    fn new(order: NestedOrder) -> Self {
        Self {
            order,
            values: vec![],
            bytes: 0,
        }
    }

    /// Offer each non-NULL value of `values` (`filter`: also where it is true) to its
    /// group (`group(i)` of row `i`).
    fn update(
        &mut self,
        values: &ArrayRef,
        filter: Option<&BooleanArray>,
        group: impl Fn(usize) -> usize,
    ) -> DFResult<()> {
        let rows = self.order.rows(values)?;
        let nulls = values.logical_nulls();
        for i in 0..values.len() {
            if nulls.as_ref().is_some_and(|n| n.is_null(i))
                || filter.is_some_and(|f| !f.is_valid(i) || !f.value(i))
            {
                continue;
            }
            let row = rows.row(i);
            let g = group(i);
            let Some(slot) = self.values.get_mut(g) else {
                return Err(DataFusionError::Internal(format!(
                    "min/max: group {g} of {} groups",
                    self.values.len()
                )));
            };
            let replace = match slot {
                None => true,
                Some(current) => self.order.better(row.as_ref(), current),
            };
            if replace {
                let new: Box<[u8]> = row.as_ref().into();
                self.bytes += new.len();
                if let Some(old) = slot.replace(new) {
                    self.bytes -= old.len();
                }
            }
        }
        Ok(())
    }

    /// The extremes of the groups `emit_to` names, removed, as an array.
    fn emit(&mut self, emit_to: EmitTo) -> DFResult<ArrayRef> {
        let emitted = emit_to.take_needed(&mut self.values);
        self.bytes -= emitted.iter().flatten().map(|v| v.len()).sum::<usize>();
        self.order.array(emitted.iter().map(Option::as_deref))
    }

    fn size(&self) -> usize {
        self.order.size()
            + self.values.capacity() * std::mem::size_of::<Option<Box<[u8]>>>()
            + self.bytes
    }
}

/// `min`/`max` of nested values per group (partial and final phases, `FILTER`, skipped
/// partial aggregation). The state is the value itself.
pub(super) struct NestedGroups {
    extremes: Extremes,
}

impl NestedGroups {
    /// Errors: Arrow's, for a type its row format cannot encode.
    pub(super) fn try_new(data_type: &DataType, extremum: Extremum) -> DFResult<Self> {
        Ok(Self {
            extremes: Extremes::new(NestedOrder::try_new(data_type, extremum)?),
        })
    }
}

impl GroupsAccumulator for NestedGroups {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> DFResult<()> {
        self.extremes.values.resize(total_num_groups, None);
        let values = one(values)?;
        if group_indices.len() != values.len() {
            return Err(DataFusionError::Internal(format!(
                "min/max: {} group indices for {} values",
                group_indices.len(),
                values.len()
            )));
        }
        self.extremes
            .update(values, opt_filter, |i| group_indices[i])
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> DFResult<ArrayRef> {
        self.extremes.emit(emit_to)
    }

    fn state(&mut self, emit_to: EmitTo) -> DFResult<Vec<ArrayRef>> {
        Ok(vec![self.extremes.emit(emit_to)?])
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> DFResult<()> {
        self.update_batch(values, group_indices, None, total_num_groups)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> DFResult<Vec<ArrayRef>> {
        let values = apply_filter_as_nulls(one(values)?, opt_filter)?;
        Ok(vec![canonical_nans(&values)?.unwrap_or(values)])
    }

    fn size(&self) -> usize {
        self.extremes.size()
    }
}

/// `min`/`max` of nested values of one group: an ungrouped aggregate, a window frame that
/// only grows.
#[derive(Debug)]
pub(super) struct NestedAccumulator {
    extremes: Extremes,
}

impl NestedAccumulator {
    /// Errors: Arrow's, for a type its row format cannot encode.
    pub(super) fn try_new(data_type: &DataType, extremum: Extremum) -> DFResult<Self> {
        let mut extremes = Extremes::new(NestedOrder::try_new(data_type, extremum)?);
        extremes.values.push(None);
        Ok(Self { extremes })
    }
}

impl Accumulator for NestedAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> DFResult<()> {
        self.extremes.update(one(values)?, None, |_| 0)
    }

    fn evaluate(&mut self) -> DFResult<ScalarValue> {
        let current = self.extremes.values.first().and_then(Option::as_deref);
        self.extremes.order.scalar(current)
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + self.extremes.size()
    }

    fn state(&mut self) -> DFResult<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> DFResult<()> {
        self.update_batch(states)
    }
}

/// `min`/`max` of nested values over a window frame that drops rows as it slides: the
/// candidates, oldest first, each better than every later one (a monotonic queue), so
/// the extreme is the first.
#[derive(Debug)]
pub(super) struct SlidingNested {
    order: NestedOrder,
    /// (sequence number of the non-NULL value, its encoding)
    candidates: VecDeque<(u64, Box<[u8]>)>,
    /// Non-NULL values added so far.
    added: u64,
    /// Non-NULL values retracted so far.
    retracted: u64,
    /// The bytes of the candidates' encodings.
    bytes: usize,
}

impl SlidingNested {
    /// Errors: Arrow's, for a type its row format cannot encode.
    pub(super) fn try_new(data_type: &DataType, extremum: Extremum) -> DFResult<Self> {
        Ok(Self {
            order: NestedOrder::try_new(data_type, extremum)?,
            candidates: VecDeque::new(),
            added: 0,
            retracted: 0,
            bytes: 0,
        })
    }
}

impl Accumulator for SlidingNested {
    fn update_batch(&mut self, values: &[ArrayRef]) -> DFResult<()> {
        let values = one(values)?;
        let rows = self.order.rows(values)?;
        let nulls = values.logical_nulls();
        for i in 0..values.len() {
            if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                continue;
            }
            let row = rows.row(i);
            // a candidate no better than the new value can never be the extreme again
            while self
                .candidates
                .back()
                .is_some_and(|(_, c)| !self.order.better(c, row.as_ref()))
            {
                if let Some((_, dropped)) = self.candidates.pop_back() {
                    self.bytes -= dropped.len();
                }
            }
            self.bytes += row.as_ref().len();
            self.candidates.push_back((self.added, row.as_ref().into()));
            self.added += 1;
        }
        Ok(())
    }

    /// The frame's oldest values leave it (NULLs were never added).
    fn retract_batch(&mut self, values: &[ArrayRef]) -> DFResult<()> {
        let values = one(values)?;
        for _ in 0..values.len() - values.logical_null_count() {
            if self
                .candidates
                .front()
                .is_some_and(|(seq, _)| *seq == self.retracted)
            {
                if let Some((_, dropped)) = self.candidates.pop_front() {
                    self.bytes -= dropped.len();
                }
            }
            self.retracted += 1;
        }
        Ok(())
    }

    fn supports_retract_batch(&self) -> bool {
        true
    }

    fn evaluate(&mut self) -> DFResult<ScalarValue> {
        self.order
            .scalar(self.candidates.front().map(|(_, v)| v.as_ref()))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.order.size()
            + self.candidates.capacity() * std::mem::size_of::<(u64, Box<[u8]>)>()
            + self.bytes
    }

    fn state(&mut self) -> DFResult<Vec<ScalarValue>> {
        Ok(vec![self.evaluate()?])
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> DFResult<()> {
        self.update_batch(states)
    }
}

/// The one argument of `min`/`max`.
fn one(values: &[ArrayRef]) -> DFResult<&ArrayRef> {
    match values {
        [v] => Ok(v),
        _ => Err(DataFusionError::Internal(format!(
            "min/max of nested values: {} columns, one expected",
            values.len()
        ))),
    }
}

impl std::fmt::Debug for NestedOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NestedOrder")
            .field("data_type", &self.data_type)
            .field("extremum", &self.extremum)
            .finish()
    }
}

impl std::fmt::Debug for Extremes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extremes")
            .field("order", &self.order)
            .field("groups", &self.values.len())
            .finish()
    }
}

#[cfg(test)]
#[path = "min_max_nested_tests.rs"]
mod tests;
