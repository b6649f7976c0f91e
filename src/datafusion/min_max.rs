//! `min` and `max` with Spark's NaN semantics (Spark SQL reference, "NaN Semantics"): a
//! NaN, whatever its bits, is one value greater than every number, and NULLs are ignored.
//! `max` of {1.5, NaN, 2.5} is NaN and `min` 1.5; `min` is NaN only when every non-NULL
//! value is NaN. The answer never depends on the order of the rows.
//!
//! DataFusion 55's `max`/`min` get it right for the one group of an ungrouped aggregate
//! (its `Accumulator`s order floats in IEEE 754 total order, where the positive NaN is
//! greatest), but not per group: their `GroupsAccumulator` for Float16/32/64 replaces a
//! group's value whenever `partial_cmp` answers `None`, i.e. whenever either side is NaN, so
//! a group's `max` of {1.5, NaN, 2.5} was 2.5 and its `min` 2.5. Total order also puts a NaN
//! with its sign bit set (x86 computes it for `0.0 / 0.0`) below every number; scans make
//! every NaN they read the canonical one ([`crate::nan`]), but a NaN computed in the query
//! reaches the aggregate as it is.
//!
//! [`MinMax`] wraps DataFusion's function and delegates everything (name, signature,
//! types, statistics, display names) to it but:
//! - groups of Float16/32/64 values: DataFusion's `PrimitiveGroupsAccumulator` (the same
//!   vectorized path, partial and final phases, `FILTER`, skipped partial aggregation) with
//!   an update that makes every NaN the canonical one and orders by total order;
//! - structs and lists (any nesting of them), grouped or not, window frames sliding or
//!   not: one total order, field by field and element by element, NULL fields and
//!   elements first, floats inside as above ([`super::min_max_nested`]; DataFusion's
//!   answer depended on the row order once a field was NULL, and its lists failed on an
//!   Iceberg table);
//! - other accumulators of floats (ungrouped, window frames): DataFusion's own, fed input
//!   with every NaN made canonical;
//! - anything else (integers, decimals, strings, …): DataFusion's own, untouched;
//! - the result field keeps the argument's metadata (a `uuid` stays tagged `arrow.uuid`);
//! - a map, at any depth, is refused when planning: maps have no order (Spark refuses
//!   them too);
//! - `min(DISTINCT x)` is `min(x)`, as Spark's optimizer makes it (`EliminateDistinct`).
//!
//! `-0.0` and `0.0`: total order puts `-0.0` below `0.0` (as the ungrouped path and
//! `ORDER BY` do), `DISTINCT` or not, at any depth. Spark compares them as equal and
//! returns whichever it met first.
//!
//! [`register_min_max`] puts the two in a session under DataFusion's names (column
//! names, plans and codecs name them so). Two of DataFusion's optimizations that go by
//! these names give wrong rows and are turned off: the `TopKAggregation` of `GROUP BY …
//! ORDER BY max(x) LIMIT n` ([`MinMax`] reports no `is_descending`) and the dynamic
//! filter of an ungrouped `min`/`max` (`enable_aggregate_dynamic_filter_pushdown` is set
//! to false when the functions are registered); see those places for why.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::{
    ArrowPrimitiveType, DataType, FieldRef, Float16Type, Float32Type, Float64Type,
};
use datafusion::common::{plan_err, Result as DFResult, ScalarValue};
use datafusion::execution::FunctionRegistry;
use datafusion::functions_aggregate::min_max::{max_udaf, min_udaf, Max, Min};
use datafusion::logical_expr::expr::{
    AggregateFunction, AggregateFunctionParams, WindowFunctionParams,
};
use datafusion::logical_expr::function::{
    AccumulatorArgs, AggregateFunctionSimplification, StateFieldsArgs,
};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Expr, GroupsAccumulator, Operator,
    ReversedUDAF, SetMonotonicity, Signature, StatisticsArgs,
};
use datafusion::prelude::SessionContext;
use datafusion_functions_aggregate_common::aggregate::groups_accumulator::prim_op::PrimitiveGroupsAccumulator;

use super::min_max_nested::{holds_map, is_nested, NestedAccumulator, NestedGroups, SlidingNested};
use crate::nan::{canonical_nans, holds_floats};

/// Which of the two functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extremum {
    /// `min`: the least value, NaN only when every value is NaN.
    Min,
    /// `max`: the greatest value, NaN when any value is NaN.
    Max,
}

/// DataFusion's `min` or `max` with Spark's NaN semantics (see the module docs).
#[derive(Debug)]
pub struct MinMax {
    extremum: Extremum,
    /// DataFusion's function of the same name.
    inner: Arc<dyn AggregateUDFImpl>,
}

impl MinMax {
    /// What a plan codec sends for `max` / `min` (decoded without a registry lookup).
    #[cfg(any(feature = "distributed", feature = "ballista"))]
    const ENCODED_MAX: &'static [u8] = b"icefloe.max";
    #[cfg(any(feature = "distributed", feature = "ballista"))]
    const ENCODED_MIN: &'static [u8] = b"icefloe.min";

    /// The function for `extremum`.
    pub fn new(extremum: Extremum) -> Self {
        let inner = match extremum {
            Extremum::Min => min_udaf(),
            Extremum::Max => max_udaf(),
        };
        Self {
            extremum,
            inner: Arc::clone(inner.inner()),
        }
    }

    /// Which of the two this is.
    pub fn extremum(&self) -> Extremum {
        self.extremum
    }
}

impl PartialEq for MinMax {
    fn eq(&self, other: &Self) -> bool {
        self.extremum == other.extremum
    }
}

impl Eq for MinMax {}

impl Hash for MinMax {
    fn hash<H: Hasher>(&self, state: &mut H) {
        "icefloe_min_max".hash(state);
        self.extremum.hash(state);
    }
}

/// `max` and `min` with Spark's NaN semantics, as DataFusion functions.
pub fn min_max_udafs() -> [Arc<AggregateUDF>; 2] {
    [Extremum::Max, Extremum::Min].map(|e| Arc::new(AggregateUDF::new_from_impl(MinMax::new(e))))
}

/// Put [`MinMax`] in `ctx` as `max` and `min` (see the module docs), where those names
/// are DataFusion's own functions or unregistered; a function of the user's under either
/// name stays. Calling it again changes nothing. `sql::execute`,
/// `register_iceberg_functions` and `register_iceberg_factory` call it.
pub fn register_min_max(ctx: &SessionContext) {
    let needed = {
        let state = ctx.state_ref();
        let state = state.read();
        min_max_udafs()
            .iter()
            .any(|f| replaces(state.aggregate_functions().get(f.name())))
    };
    if needed {
        let state = ctx.state_ref();
        let mut state = state.write();
        register_min_max_in(&mut *state);
        // DataFusion 55's dynamic filter of an ungrouped `min`/`max` drops rows: a
        // partition whose first values of one aggregate's argument are all NULL holds a
        // NULL bound for it for good, and the filter built from the bounds leaves that
        // aggregate out instead of letting every row through for it (`a < 1 OR b < 5`
        // becomes `b < 5`), so with exact per-file statistics the file holding the true
        // `min(a)` is pruned. Off once, when icefloe's functions are put in; a later
        // `SET` turns it on again.
        state
            .config_mut()
            .options_mut()
            .optimizer
            .enable_aggregate_dynamic_filter_pushdown = false;
    }
}

/// [`register_min_max`] in a function registry, e.g. the `SessionState` of a worker of a
/// distributed plan (whose plans name `max` / `min` and are resolved there by name).
pub fn register_min_max_in(registry: &mut dyn FunctionRegistry) {
    for f in min_max_udafs() {
        if replaces(registry.udaf(f.name()).ok().as_ref()) {
            // a `SessionState` never refuses a function
            let _ = registry.register_udaf(f);
        }
    }
}

/// Whether [`MinMax`] is to replace `registered` (a session's function of its name).
fn replaces(registered: Option<&Arc<AggregateUDF>>) -> bool {
    match registered {
        None => true,
        Some(f) => f.inner().is::<Max>() || f.inner().is::<Min>(),
    }
}

/// The bytes a plan codec sends for `udaf` when it is a [`MinMax`], else `None` (sent by
/// name).
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn encode_min_max(udaf: &AggregateUDF) -> Option<&'static [u8]> {
    let f = udaf.inner().downcast_ref::<MinMax>()?;
    Some(match f.extremum {
        Extremum::Max => MinMax::ENCODED_MAX,
        Extremum::Min => MinMax::ENCODED_MIN,
    })
}

/// The [`MinMax`] whose bytes are `buf` ([`encode_min_max`]), else `None`.
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn decode_min_max(buf: &[u8]) -> Option<Arc<AggregateUDF>> {
    let extremum = match buf {
        b if b == MinMax::ENCODED_MAX => Extremum::Max,
        b if b == MinMax::ENCODED_MIN => Extremum::Min,
        _ => return None,
    };
    Some(Arc::new(AggregateUDF::new_from_impl(MinMax::new(extremum))))
}

#[warn(clippy::missing_trait_methods)] // delegates: every method of the trait
impl AggregateUDFImpl for MinMax {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn schema_name(&self, params: &AggregateFunctionParams) -> DFResult<String> {
        self.inner.schema_name(params)
    }

    fn human_display(&self, params: &AggregateFunctionParams) -> DFResult<String> {
        self.inner.human_display(params)
    }

    fn window_function_schema_name(&self, params: &WindowFunctionParams) -> DFResult<String> {
        self.inner.window_function_schema_name(params)
    }

    fn display_name(&self, params: &AggregateFunctionParams) -> DFResult<String> {
        self.inner.display_name(params)
    }

    fn window_function_display_name(&self, params: &WindowFunctionParams) -> DFResult<String> {
        self.inner.window_function_display_name(params)
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> DFResult<DataType> {
        self.inner.return_type(arg_types)
    }

    /// DataFusion's field with the argument's metadata, as `first_value` keeps it: the
    /// extreme is one of the argument's values, so a `uuid` (`arrow.uuid`) stays one.
    /// Errors: a map argument, at any depth (maps have no order; Spark refuses them too).
    fn return_field(&self, arg_fields: &[FieldRef]) -> DFResult<FieldRef> {
        let field = self.inner.return_field(arg_fields)?;
        let [arg] = arg_fields else {
            return Ok(field);
        };
        if holds_map(arg.data_type()) {
            let f = self.name();
            return plan_err!(
                "{f}({}): a map has no order, so {f} of a map, or of a struct or list holding \
                 one, cannot be taken; take it of the map's keys or values instead \
                 (map_keys, map_values, element_at)",
                arg.name()
            );
        }
        Ok(match arg.metadata().is_empty() {
            true => field,
            false => Arc::new(field.as_ref().clone().with_metadata(arg.metadata().clone())),
        })
    }

    fn is_nullable(&self) -> bool {
        self.inner.is_nullable()
    }

    /// Structs and lists: [`NestedAccumulator`]; otherwise DataFusion's accumulator, fed
    /// canonical NaNs when the values can hold floats.
    fn accumulator(&self, args: AccumulatorArgs) -> DFResult<Box<dyn Accumulator>> {
        let data_type = args.return_field.data_type();
        if is_nested(data_type) {
            return Ok(Box::new(NestedAccumulator::try_new(
                data_type,
                self.extremum,
            )?));
        }
        let floats = holds_floats(data_type);
        let inner = self.inner.accumulator(args)?;
        Ok(match floats {
            true => Box::new(CanonicalNanAccumulator { inner }),
            false => inner,
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> DFResult<Vec<FieldRef>> {
        self.inner.state_fields(args)
    }

    /// Structs and lists too ([`NestedGroups`]; DataFusion has none for lists).
    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        is_nested(args.return_field.data_type()) || self.inner.groups_accumulator_supported(args)
    }

    /// Floats: [`float_groups`]; structs and lists: [`NestedGroups`]; anything else
    /// DataFusion's.
    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> DFResult<Box<dyn GroupsAccumulator>> {
        let data_type = args.return_field.data_type().clone();
        Ok(match &data_type {
            DataType::Float16 => float_groups::<Float16Type>(&data_type, self.extremum),
            DataType::Float32 => float_groups::<Float32Type>(&data_type, self.extremum),
            DataType::Float64 => float_groups::<Float64Type>(&data_type, self.extremum),
            t if is_nested(t) => Box::new(NestedGroups::try_new(t, self.extremum)?),
            _ => self.inner.create_groups_accumulator(args)?,
        })
    }

    /// Structs and lists: [`SlidingNested`]; otherwise DataFusion's sliding accumulator
    /// (window frames that drop rows), fed canonical NaNs when the values can hold floats.
    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> DFResult<Box<dyn Accumulator>> {
        let data_type = args.return_field.data_type();
        if is_nested(data_type) {
            return Ok(Box::new(SlidingNested::try_new(data_type, self.extremum)?));
        }
        let floats = holds_floats(data_type);
        let inner = self.inner.create_sliding_accumulator(args)?;
        Ok(match floats {
            true => Box::new(CanonicalNanAccumulator { inner }),
            false => inner,
        })
    }

    fn with_beneficial_ordering(
        self: Arc<Self>,
        beneficial_ordering: bool,
    ) -> DFResult<Option<Arc<dyn AggregateUDFImpl>>> {
        // DataFusion's min/max are order-insensitive: an ordered variant would be
        // DataFusion's own, so this one stays
        Ok(Arc::clone(&self.inner)
            .with_beneficial_ordering(beneficial_ordering)?
            .map(|_| self as Arc<dyn AggregateUDFImpl>))
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner.order_sensitivity()
    }

    /// `min(DISTINCT x)` is `min(x)` (Spark's optimizer rule `EliminateDistinct` does
    /// the same): duplicates cannot change an extreme, and DataFusion's plan of a
    /// `DISTINCT` aggregate groups by the value first, which makes `-0.0` and `0.0` one
    /// value (`min(DISTINCT x)` of {0.0, -0.0} was 0.0 where `min(x)` is -0.0).
    fn simplify(&self) -> Option<AggregateFunctionSimplification> {
        Some(Box::new(|mut f: AggregateFunction, _| {
            f.params.distinct = false;
            Ok(Expr::AggregateFunction(f))
        }))
    }

    fn simplify_expr_op_literal(
        &self,
        agg_function: &AggregateFunction,
        arg: &Expr,
        op: Operator,
        lit: &Expr,
        arg_is_left: bool,
    ) -> DFResult<Option<Expr>> {
        self.inner
            .simplify_expr_op_literal(agg_function, arg, op, lit, arg_is_left)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        match self.inner.reverse_expr() {
            // a reversed function of DataFusion's would drop the NaN semantics
            ReversedUDAF::Reversed(_) => ReversedUDAF::NotSupported,
            other => other,
        }
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> DFResult<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }

    /// `None`: DataFusion's `TopKAggregation` (`GROUP BY … ORDER BY max(x) LIMIT n`), the
    /// only user of this, keeps each group's extremum in its own heap, comparing floats
    /// by IEEE `partial_cmp`, so NaN groups came out in the wrong place and with values
    /// not their groups' extrema. Without it such a query aggregates every group, then
    /// sorts (right for every type; the heap was faster).
    fn is_descending(&self) -> Option<bool> {
        None
    }

    fn value_from_stats(&self, statistics_args: &StatisticsArgs) -> Option<ScalarValue> {
        self.inner.value_from_stats(statistics_args)
    }

    fn default_value(&self, data_type: &DataType) -> DFResult<ScalarValue> {
        self.inner.default_value(data_type)
    }

    fn supports_null_handling_clause(&self) -> bool {
        self.inner.supports_null_handling_clause()
    }

    fn supports_within_group_clause(&self) -> bool {
        self.inner.supports_within_group_clause()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.set_monotonicity(data_type)
    }
}

/// A float type's values as Spark orders them: every NaN made the canonical one, then
/// IEEE 754 total order (`-inf` < numbers < `inf` < NaN, `-0.0` < `0.0`).
trait SparkOrder: ArrowPrimitiveType + Send {
    /// The canonical (positive, quiet) NaN, the greatest value.
    const NAN: Self::Native;
    /// The least value once NaNs are canonical.
    const NEG_INFINITY: Self::Native;
    fn canonical(v: Self::Native) -> Self::Native;
    fn total_order(a: &Self::Native, b: &Self::Native) -> Ordering;
}

macro_rules! spark_order {
    ($($t:ty),*) => {$(
        impl SparkOrder for $t {
            const NAN: Self::Native = <Self::Native>::NAN;
            const NEG_INFINITY: Self::Native = <Self::Native>::NEG_INFINITY;
            fn canonical(v: Self::Native) -> Self::Native {
                if v.is_nan() {
                    Self::NAN
                } else {
                    v
                }
            }
            fn total_order(a: &Self::Native, b: &Self::Native) -> Ordering {
                a.total_cmp(b)
            }
        }
    )*};
}

spark_order!(Float16Type, Float32Type, Float64Type);

/// `cur` becomes `new` when `new` is greater in Spark's order.
fn keep_greater<P: SparkOrder>(cur: &mut P::Native, new: P::Native) {
    let new = P::canonical(new);
    if P::total_order(&new, cur) == Ordering::Greater {
        *cur = new;
    }
}

/// `cur` becomes `new` when `new` is less in Spark's order.
fn keep_less<P: SparkOrder>(cur: &mut P::Native, new: P::Native) {
    let new = P::canonical(new);
    if P::total_order(&new, cur) == Ordering::Less {
        *cur = new;
    }
}

/// The groups accumulator of `extremum` over floats of `data_type` (Arrow type `P`):
/// each group starts at the identity (`-inf` for `max`, NaN for `min`; a group with no
/// non-NULL value is NULL) and keeps the greater / lesser value in Spark's order.
fn float_groups<P: SparkOrder>(
    data_type: &DataType,
    extremum: Extremum,
) -> Box<dyn GroupsAccumulator> {
    // closures, not function pointers: the update is inlined into the per-row loop
    match extremum {
        Extremum::Max => Box::new(
            PrimitiveGroupsAccumulator::<P, _>::new(data_type, |cur, new| {
                keep_greater::<P>(cur, new)
            })
            .with_starting_value(P::NEG_INFINITY),
        ),
        Extremum::Min => Box::new(
            PrimitiveGroupsAccumulator::<P, _>::new(data_type, |cur, new| keep_less::<P>(cur, new))
                .with_starting_value(P::NAN),
        ),
    }
}

/// `arrays` with every NaN made the canonical one (nothing copied where none differs).
fn canonical(arrays: &[ArrayRef]) -> DFResult<Vec<ArrayRef>> {
    arrays
        .iter()
        .map(|a| Ok(canonical_nans(a)?.unwrap_or_else(|| Arc::clone(a))))
        .collect()
}

/// An accumulator fed its input with canonical NaNs.
#[derive(Debug)]
struct CanonicalNanAccumulator {
    inner: Box<dyn Accumulator>,
}

impl Accumulator for CanonicalNanAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> DFResult<()> {
        self.inner.update_batch(&canonical(values)?)
    }

    fn evaluate(&mut self) -> DFResult<ScalarValue> {
        self.inner.evaluate()
    }

    fn size(&self) -> usize {
        self.inner.size()
    }

    fn state(&mut self) -> DFResult<Vec<ScalarValue>> {
        self.inner.state()
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> DFResult<()> {
        self.inner.merge_batch(&canonical(states)?)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> DFResult<()> {
        self.inner.retract_batch(&canonical(values)?)
    }

    fn supports_retract_batch(&self) -> bool {
        self.inner.supports_retract_batch()
    }
}

#[cfg(test)]
#[path = "min_max_tests.rs"]
mod tests;
