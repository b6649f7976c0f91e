//! `greatest` and `least` of floats as Spark has them: NULLs skipped, every NaN (any sign)
//! one value above every number, `-0.0` and `0.0` equal, and among equal values the
//! first argument's.
//!
//! Spark's `Greatest` / `Least` fold their arguments left to right, replacing the running
//! value only by one strictly greater (less) under `SQLOrderingUtil.compareDoubles` (its
//! codegen's `reassignIfGreater` / `reassignIfSmaller`, the interpreted `ordering.gt`):
//! `greatest(-0.0, 0.0)` is `-0.0`, `greatest(0.0, -0.0)` is `0.0`, `greatest(NaN, 1.0)` is
//! NaN and `least(NaN, 1.0)` is `1.0`. DataFusion 55 compares in IEEE 754 total order
//! (`greatest(-0.0, 0.0)` is `0.0`, a NaN with its sign bit set, as x86 computes `0.0 /
//! 0.0`, is below every number) and keeps a later argument on ties.
//!
//! [`SparkGreatestLeast`] wraps DataFusion's function: its signature, coercion (all
//! arguments to one type), return type and documentation, and its evaluation for every
//! type but `Float16/32/64`; for those it evaluates as above, a NaN answered as the
//! canonical NaN. Floats inside structs or lists go DataFusion's way. Registered under
//! DataFusion's names by [`register_greatest_least`] (through
//! [`install_float_key_rule`](super::install_float_key_rule)); the plan codecs send it by
//! its own bytes, so that workers that resolve `greatest`/`least` by name to DataFusion's
//! run it too.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{new_null_array, Array, ArrayRef, AsArray};
use datafusion::arrow::compute::{cast, interleave};
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{exec_err, Result as DFResult, ScalarValue};
use datafusion::functions::core::greatest::GreatestFunc;
use datafusion::functions::core::least::LeastFunc;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};
use datafusion::prelude::SessionContext;

use crate::nan::canonical_nans;

/// Which of the two functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Extreme {
    Greatest,
    Least,
}

/// DataFusion's `greatest` / `least` with Spark's order of floats (see the module docs).
#[derive(Debug)]
pub struct SparkGreatestLeast {
    extreme: Extreme,
    inner: Arc<ScalarUDF>,
}

impl PartialEq for SparkGreatestLeast {
    fn eq(&self, other: &Self) -> bool {
        self.extreme == other.extreme
    }
}

impl Eq for SparkGreatestLeast {}

impl Hash for SparkGreatestLeast {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.extreme.hash(state);
    }
}

impl SparkGreatestLeast {
    fn new(extreme: Extreme) -> Self {
        let inner = match extreme {
            Extreme::Greatest => datafusion::functions::core::greatest(),
            Extreme::Least => datafusion::functions::core::least(),
        };
        Self { extreme, inner }
    }
}

/// Spark's comparison of two doubles (`SQLOrderingUtil.compareDoubles`): every NaN equal
/// and above every number, `-0.0 = 0.0`.
fn spark_compare(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

impl SparkGreatestLeast {
    /// The fold of the module docs over arguments of one float type.
    fn evaluate_floats(&self, args: &[ColumnarValue], rows: usize) -> DFResult<ColumnarValue> {
        let scalars = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let rows = if scalars { 1 } else { rows };
        let arrays = args
            .iter()
            .map(|a| a.to_array(rows))
            .collect::<DFResult<Vec<ArrayRef>>>()?;
        let Some(data_type) = arrays.first().map(|a| a.data_type().clone()) else {
            return exec_err!("{} takes at least one value", self.inner.name());
        };
        // Float16 and Float32 values are exact as doubles
        let doubles = arrays
            .iter()
            .map(|a| cast(a, &DataType::Float64))
            .collect::<Result<Vec<_>, _>>()?;
        let doubles: Vec<_> = doubles
            .iter()
            .map(|a| a.as_primitive::<Float64Type>())
            .collect();
        let wanted = match self.extreme {
            Extreme::Greatest => Ordering::Greater,
            Extreme::Least => Ordering::Less,
        };
        let null_source = arrays.len();
        let mut picks = Vec::with_capacity(rows);
        for row in 0..rows {
            let mut best: Option<(usize, f64)> = None;
            for (i, values) in doubles.iter().enumerate() {
                if values.is_null(row) {
                    continue;
                }
                let v = values.value(row);
                if best.is_none_or(|(_, b)| spark_compare(v, b) == wanted) {
                    best = Some((i, v));
                }
            }
            picks.push(best.map_or((null_source, 0), |(i, _)| (i, row)));
        }
        let nulls = new_null_array(&data_type, 1);
        let mut sources: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
        sources.push(nulls.as_ref());
        let picked = interleave(&sources, &picks)?;
        let picked = canonical_nans(&picked)?.unwrap_or(picked);
        Ok(match scalars {
            true => ColumnarValue::Scalar(ScalarValue::try_from_array(&picked, 0)?),
            false => ColumnarValue::Array(picked),
        })
    }
}

impl ScalarUDFImpl for SparkGreatestLeast {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> DFResult<DataType> {
        self.inner.return_type(arg_types)
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> DFResult<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        let floats = matches!(
            args.return_field.data_type(),
            DataType::Float16 | DataType::Float32 | DataType::Float64
        ) && args
            .args
            .iter()
            .all(|a| a.data_type() == *args.return_field.data_type());
        match floats {
            true => self.evaluate_floats(&args.args, args.number_rows),
            false => self.inner.invoke_with_args(args),
        }
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

/// The bytes a plan codec sends for `udf` when it is a [`SparkGreatestLeast`], else `None`
/// (sent by name, which a worker resolves to DataFusion's function).
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn encode_greatest_least(udf: &ScalarUDF) -> Option<&'static [u8]> {
    let f = udf.inner().downcast_ref::<SparkGreatestLeast>()?;
    Some(match f.extreme {
        Extreme::Greatest => ENCODED_GREATEST,
        Extreme::Least => ENCODED_LEAST,
    })
}

/// The [`SparkGreatestLeast`] whose bytes are `buf` ([`encode_greatest_least`]), else
/// `None`.
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn decode_greatest_least(buf: &[u8]) -> Option<Arc<ScalarUDF>> {
    let extreme = match buf {
        b if b == ENCODED_GREATEST => Extreme::Greatest,
        b if b == ENCODED_LEAST => Extreme::Least,
        _ => return None,
    };
    Some(Arc::new(ScalarUDF::new_from_impl(SparkGreatestLeast::new(
        extreme,
    ))))
}

/// icefloe's `greatest` and `least` ([`SparkGreatestLeast`]) where `existing(name)` is
/// DataFusion's function or none, for a codec that gives them to a task decoding a plan
/// that names them.
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn spark_greatest_least(
    existing: impl Fn(&str) -> Option<Arc<ScalarUDF>>,
) -> Vec<Arc<ScalarUDF>> {
    replacements(existing).into_iter().map(Arc::new).collect()
}

#[cfg(any(feature = "distributed", feature = "ballista"))]
const ENCODED_GREATEST: &[u8] = b"icefloe.spark_greatest";
#[cfg(any(feature = "distributed", feature = "ballista"))]
const ENCODED_LEAST: &[u8] = b"icefloe.spark_least";

/// The [`SparkGreatestLeast`] functions for a session whose function of each name is
/// `existing(name)`: `greatest` and `least` where those names are DataFusion's own
/// functions or unregistered (a function of the user's under either name stays).
fn replacements(existing: impl Fn(&str) -> Option<Arc<ScalarUDF>>) -> Vec<ScalarUDF> {
    [Extreme::Greatest, Extreme::Least]
        .into_iter()
        .map(SparkGreatestLeast::new)
        .filter(|udf| match existing(udf.name()) {
            None => true,
            Some(f) => f.inner().is::<GreatestFunc>() || f.inner().is::<LeastFunc>(),
        })
        .map(ScalarUDF::new_from_impl)
        .collect()
}

/// Put [`SparkGreatestLeast`] in `ctx` as `greatest` and `least`, where those names are
/// DataFusion's own functions or unregistered; a function of the user's under either name
/// stays. Calling it again changes nothing.
pub(crate) fn register_greatest_least(ctx: &SessionContext) {
    let udfs = replacements(|name| ctx.state_ref().read().scalar_functions().get(name).cloned());
    for udf in udfs {
        ctx.register_udf(udf);
    }
}

/// [`register_greatest_least`] for a session's `state`: a distributed worker's, which
/// resolves `greatest` and `least` by name (datafusion-distributed's codec sends them by
/// name, not by the bytes [`encode_greatest_least`] gives).
///
/// Errors: DataFusion's, registering them.
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn register_greatest_least_in(
    state: &mut datafusion::execution::SessionState,
) -> DFResult<()> {
    use datafusion::execution::FunctionRegistry;
    let udfs = replacements(|name| state.scalar_functions().get(name).cloned());
    for udf in udfs {
        state.register_udf(Arc::new(udf))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::Float64Array;
    use datafusion::arrow::datatypes::Field;

    use super::*;

    const NEG_NAN: f64 = f64::from_bits(f64::NAN.to_bits() | (1 << 63));

    fn call(extreme: Extreme, args: Vec<ColumnarValue>, rows: usize) -> ColumnarValue {
        let udf = SparkGreatestLeast::new(extreme);
        let field = Arc::new(Field::new("x", DataType::Float64, true));
        udf.invoke_with_args(ScalarFunctionArgs {
            args: args.clone(),
            arg_fields: vec![Arc::clone(&field); args.len()],
            number_rows: rows,
            return_field: field,
            config_options: Arc::default(),
        })
        .expect("invoke")
    }

    fn bits(v: &ColumnarValue) -> Vec<Option<u64>> {
        let array = v.to_array(1).expect("array");
        array
            .as_primitive::<Float64Type>()
            .iter()
            .map(|x| x.map(f64::to_bits))
            .collect()
    }

    /// Row by row: the first of equal values is kept (its sign of zero), any NaN is the
    /// greatest (answered canonical), NULLs are skipped; scalars give a scalar.
    #[test]
    fn floats_fold_left_to_right_in_spark_order() {
        let a = ColumnarValue::Array(Arc::new(Float64Array::from(vec![
            Some(-0.0),
            Some(0.0),
            Some(NEG_NAN),
            None,
            Some(1.0),
            None,
        ])));
        let b = ColumnarValue::Array(Arc::new(Float64Array::from(vec![
            Some(0.0),
            Some(-0.0),
            Some(1.0),
            Some(2.0),
            Some(f64::INFINITY),
            None,
        ])));
        let nan = f64::NAN.to_bits();
        let (zero, neg_zero) = (0.0f64.to_bits(), (-0.0f64).to_bits());
        let greatest = call(Extreme::Greatest, vec![a.clone(), b.clone()], 6);
        assert_eq!(
            bits(&greatest),
            vec![
                Some(neg_zero),
                Some(zero),
                Some(nan),
                Some(2.0f64.to_bits()),
                Some(f64::INFINITY.to_bits()),
                None
            ]
        );
        let least = call(Extreme::Least, vec![a, b], 6);
        assert_eq!(
            bits(&least),
            vec![
                Some(neg_zero),
                Some(zero),
                Some(1.0f64.to_bits()),
                Some(2.0f64.to_bits()),
                Some(1.0f64.to_bits()),
                None
            ]
        );
        let scalars = vec![
            ColumnarValue::Scalar(ScalarValue::Float64(Some(NEG_NAN))),
            ColumnarValue::Scalar(ScalarValue::Float64(Some(f64::INFINITY))),
        ];
        let ColumnarValue::Scalar(ScalarValue::Float64(Some(v))) =
            call(Extreme::Greatest, scalars, 1)
        else {
            panic!("not a scalar double")
        };
        assert_eq!(v.to_bits(), nan);
    }
}

#[cfg(all(test, any(feature = "distributed", feature = "ballista")))]
mod codec_tests {
    use super::*;

    /// Each function travels as its own bytes and comes back as itself; DataFusion's own
    /// `greatest` is sent by name (no bytes).
    #[test]
    fn plan_codecs_send_each_function_by_its_bytes() {
        for extreme in [Extreme::Greatest, Extreme::Least] {
            let udf = ScalarUDF::new_from_impl(SparkGreatestLeast::new(extreme));
            let bytes = encode_greatest_least(&udf).expect("encoded");
            let back = decode_greatest_least(bytes).expect("decoded");
            let back = back
                .inner()
                .downcast_ref::<SparkGreatestLeast>()
                .expect("icefloe's");
            assert_eq!(back.extreme, extreme);
            assert_eq!(back.name(), udf.name());
        }
        assert!(encode_greatest_least(&datafusion::functions::core::greatest()).is_none());
        assert!(decode_greatest_least(b"").is_none());
    }
}
