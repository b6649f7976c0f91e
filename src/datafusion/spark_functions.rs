//! Spark's SQL functions that DataFusion 55 lacks, from the DataFusion project's
//! `datafusion-spark` crate (its Spark-compatible implementations): `date_add`/`dateadd`,
//! `date_sub`, `datediff`/`date_diff`, `add_months`, `last_day`, `next_day`, `unix_date`,
//! `unix_seconds`/`unix_millis`/`unix_micros`, `make_interval`, `sha1`/`sha`/`sha2`,
//! `crc32`, `xxhash64`, `hex`/`unhex`, `base64`/`unbase64`, `if`, `size`, `pmod`, `mod`,
//! `elt`, `space`, `format_string`/`printf`, `like`/`ilike`, the bitmap and bit functions,
//! `str_to_map`, `map_from_arrays`, `parse_url`, … and the aggregates `collect_list`,
//! `collect_set` and `try_sum`.
//!
//! Each is registered only under a name (or alias) the session does not have yet, so
//! DataFusion's own functions (`concat`, `date_part`, `round`, …), icefloe's (`year`,
//! `hour`, … of [`spark_datetime`](super::spark_datetime), which read a `timestamptz` on
//! the session zone's clock) and a user's keep their meaning (Spark's `trunc(date, fmt)`
//! is not there: DataFusion's numeric `trunc` has the name). `spark_cast`, the crate's
//! internal cast, is left out.
//!
//! Their arguments are typed as Spark types them: the crate's functions take Spark's
//! types exactly (`date_add(DATE, INT)`), where DataFusion types an integer literal as a
//! `BIGINT` (Spark: an `INT`) and adds no cast to a `DATE`. Each such function is
//! registered wrapped in [`SparkTyped`], whose coercion casts an integer to the integer
//! type the function takes (the narrowest one at least as wide, else Spark's `INT`: a
//! value out of its range is an error when the cast runs), and a string or timestamp to
//! `DATE` where it takes only a `DATE`, as Spark's implicit cast does (the session zone's
//! date of a `timestamptz`, through icefloe's rules for that cast). Functions whose
//! signatures are not exact lists of types are registered as the crate makes them.

use std::any::{Any, TypeId};
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{plan_err, DFSchema, Result as DFResult};
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::{
    AggregateUDF, Cast, ColumnarValue, Documentation, Expr, ExprSchemable, ReturnFieldArgs,
    ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
};
use datafusion::prelude::SessionContext;

use super::compared_groups::install_once;
use super::zoned_casts::SessionZoneCasts;

/// The rewrite's name (as listed by the session's analyzer).
pub const SPARK_DATE_ARGUMENTS_RULE: &str = "icefloe_spark_date_arguments";

/// The crate's function that is no Spark SQL function (its own cast helper).
const LEFT_OUT: &[&str] = &["spark_cast"];

/// `datafusion-spark`'s scalar functions none of whose names `has` knows, in the crate's
/// order, each [`SparkTyped`] where its signature lists exact types.
pub(crate) fn missing_scalar_functions(has: impl Fn(&str) -> bool) -> Vec<ScalarUDF> {
    datafusion_spark::all_default_scalar_functions()
        .into_iter()
        .filter(|f| !LEFT_OUT.contains(&f.name()))
        .filter(|f| !has(f.name()) && !f.aliases().iter().any(|a| has(a)))
        .map(
            |f| match exact_lists(&f.signature().type_signature).is_empty() {
                true => ScalarUDF::clone(&f),
                false => ScalarUDF::new_from_impl(SparkTyped::new(f)),
            },
        )
        .collect()
}

/// `datafusion-spark`'s aggregate functions none of whose names `has` knows.
pub(crate) fn missing_aggregate_functions(has: impl Fn(&str) -> bool) -> Vec<Arc<AggregateUDF>> {
    datafusion_spark::all_default_aggregate_functions()
        .into_iter()
        .filter(|f| !has(f.name()) && !f.aliases().iter().any(|a| has(a)))
        .collect()
}

/// The `datafusion-spark` scalar function named (or aliased) `name`, as
/// [`install_spark_functions`] registers it; for codecs decoding a plan in a session
/// that lacks it.
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn scalar_function(name: &str) -> Option<Arc<ScalarUDF>> {
    missing_scalar_functions(|_| false)
        .into_iter()
        .find(|f| f.name() == name || f.aliases().iter().any(|a| a == name))
        .map(Arc::new)
}

/// The `datafusion-spark` aggregate function named (or aliased) `name`.
#[cfg(any(feature = "distributed", feature = "ballista"))]
pub(crate) fn aggregate_function(name: &str) -> Option<Arc<AggregateUDF>> {
    missing_aggregate_functions(|_| false)
        .into_iter()
        .find(|f| f.name() == name || f.aliases().iter().any(|a| a == name))
}

/// Register in `ctx` each of `datafusion-spark`'s functions whose names it lacks (see
/// the module docs). A second call registers nothing more.
pub fn install_spark_functions(ctx: &SessionContext) {
    for f in missing_scalar_functions(|name| ctx.udf(name).is_ok()) {
        ctx.register_udf(f);
    }
    for f in missing_aggregate_functions(|name| ctx.udaf(name).is_ok()) {
        ctx.register_udaf(AggregateUDF::clone(&f));
    }
    install_once(ctx, Arc::new(SparkDateArguments));
}

/// The argument lists a signature takes exactly (`Exact`, and those inside `OneOf`).
fn exact_lists(signature: &TypeSignature) -> Vec<&[DataType]> {
    match signature {
        TypeSignature::Exact(types) => vec![types.as_slice()],
        TypeSignature::OneOf(all) => all.iter().flat_map(exact_lists).collect(),
        _ => vec![],
    }
}

/// The width in bytes of an integer type, `None` for any other.
fn integer_width(ty: &DataType) -> Option<usize> {
    ty.is_integer().then(|| ty.primitive_width()).flatten()
}

/// Whether an argument of type `given` may become `wanted` (see the module docs), where
/// `integers` are the types the function's argument lists take at that position: an
/// integer only the narrowest of them at least as wide as `given` (Spark's `INT` when
/// none is), a string or timestamp a `DATE`, a NULL anything.
fn spark_coercion(given: &DataType, wanted: &DataType, integers: &[&DataType]) -> bool {
    if given == wanted || given.is_null() {
        return true;
    }
    match (integer_width(given), integer_width(wanted)) {
        (Some(g), Some(w)) => {
            let wide_enough: Vec<usize> = integers
                .iter()
                .filter_map(|t| integer_width(t))
                .filter(|width| *width >= g)
                .collect();
            match wide_enough.iter().min() {
                Some(narrowest) => w == *narrowest,
                None => wanted == &DataType::Int32,
            }
        }
        _ => {
            wanted == &DataType::Date32
                && (given.is_string() || matches!(given, DataType::Timestamp(..)))
        }
    }
}

/// One of `datafusion-spark`'s functions, its arguments coerced as Spark would (see the
/// module docs); everything else is the function's own.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct SparkTyped {
    inner: Arc<ScalarUDF>,
    signature: Signature,
}

impl SparkTyped {
    fn new(inner: Arc<ScalarUDF>) -> Self {
        let signature = Signature::user_defined(inner.signature().volatility);
        Self { inner, signature }
    }
}

impl ScalarUDFImpl for SparkTyped {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> DFResult<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DFResult<FieldRef> {
        self.inner.return_field_from_args(args)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DFResult<ColumnarValue> {
        self.inner.invoke_with_args(args)
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> DFResult<ExprSimplifyResult> {
        self.inner.simplify(args, info)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    /// The first of the function's argument lists that every argument reaches by
    /// [`spark_coercion`]; an error naming the function and its lists when none does.
    fn coerce_types(&self, arg_types: &[DataType]) -> DFResult<Vec<DataType>> {
        match self.takes(arg_types) {
            Some(list) => Ok(list),
            None => {
                let shown: Vec<String> = exact_lists(&self.inner.signature().type_signature)
                    .iter()
                    .map(|l| format!("{}({})", self.name(), join(l)))
                    .collect();
                plan_err!(
                    "{}({}): no form of the function takes these argument types; it takes {}",
                    self.name(),
                    join(arg_types),
                    shown.join(", ")
                )
            }
        }
    }
}

impl SparkTyped {
    /// The first of the function's argument lists that every argument of `arg_types`
    /// reaches by [`spark_coercion`].
    fn takes(&self, arg_types: &[DataType]) -> Option<Vec<DataType>> {
        let lists: Vec<&[DataType]> = exact_lists(&self.inner.signature().type_signature)
            .into_iter()
            .filter(|l| l.len() == arg_types.len())
            .collect();
        let fits = |list: &&&[DataType]| {
            list.iter().enumerate().all(|(i, wanted)| {
                let integers: Vec<&DataType> = lists.iter().map(|l| &l[i]).collect();
                spark_coercion(&arg_types[i], wanted, &integers)
            })
        };
        lists.iter().find(fits).map(|list| list.to_vec())
    }
}

/// The Rust types of `datafusion-spark`'s scalar functions.
static SPARK_FUNCTION_TYPES: LazyLock<HashSet<TypeId>> = LazyLock::new(|| {
    datafusion_spark::all_default_scalar_functions()
        .iter()
        .map(|f| implementation(f))
        .collect()
});

/// The Rust type implementing `f`.
fn implementation(f: &ScalarUDF) -> TypeId {
    let any: &dyn Any = f.inner().as_ref();
    any.type_id()
}

/// Whether `f` is one of `datafusion-spark`'s functions (as registered here: wrapped
/// in [`SparkTyped`] or not), not a function of the same name from elsewhere.
fn is_spark_function(f: &ScalarUDF) -> bool {
    f.inner().downcast_ref::<SparkTyped>().is_some()
        || SPARK_FUNCTION_TYPES.contains(&implementation(f))
}

/// A [`FunctionRewrite`] (before DataFusion's coercion): each argument of a call of
/// one of `datafusion-spark`'s functions that the coercion makes a `DATE` is cast to it explicitly, through
/// icefloe's rule for that cast ([`SessionZoneCasts`]: a `timestamptz`'s date is the
/// session zone's), where the coercion's own cast would take the UTC date.
#[derive(Debug, Default)]
pub struct SparkDateArguments;

impl FunctionRewrite for SparkDateArguments {
    fn name(&self) -> &str {
        SPARK_DATE_ARGUMENTS_RULE
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        let Expr::ScalarFunction(ScalarFunction { func, args }) = expr else {
            return Ok(Transformed::no(expr));
        };
        if !is_spark_function(&func) {
            return Ok(Transformed::no(Expr::ScalarFunction(ScalarFunction {
                func,
                args,
            })));
        }
        let fields: Option<Vec<FieldRef>> = args
            .iter()
            .map(|a| a.to_field(schema).ok().map(|(_, f)| f))
            .collect();
        let types = |fs: &[FieldRef]| -> Vec<DataType> {
            fs.iter().map(|f| f.data_type().clone()).collect()
        };
        let wanted = fields.and_then(|fields| {
            let to = fields_with_udf(&fields, func.as_ref()).ok()?;
            Some((types(&to), types(&fields)))
        });
        let Some((wanted, types)) = wanted else {
            return Ok(Transformed::no(Expr::ScalarFunction(ScalarFunction {
                func,
                args,
            })));
        };
        let mut changed = false;
        let mut out = Vec::with_capacity(args.len());
        for ((arg, given), to) in args.into_iter().zip(&types).zip(&wanted) {
            if to == &DataType::Date32 && given != to && !given.is_null() {
                changed = true;
                let cast = Expr::Cast(Cast::new(Box::new(arg), DataType::Date32));
                out.push(SessionZoneCasts.rewrite(cast, schema, config)?.data);
            } else {
                out.push(arg);
            }
        }
        let call = Expr::ScalarFunction(ScalarFunction { func, args: out });
        Ok(Transformed::new_transformed(call, changed))
    }
}

/// `types` separated by `, `.
fn join(types: &[DataType]) -> String {
    types
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
