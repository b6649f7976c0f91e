//! [`MapKeyLiterals`]: `column_sizes[1]` on `"t$files"` (and any `map<int, …>`).
//!
//! DataFusion 55 plans `m[k]` on a map as `get_field(m, k)` (nested accesses as
//! `get_field(s, 'field', k, …)`), which compares `k` with the map's keys as it is: an
//! integer literal is an `Int64`, so on a map with `Int32` keys (Iceberg `map<int, …>`,
//! as the metadata tables' `column_sizes`, `value_counts`, `null_value_counts`,
//! `nan_value_counts`, `lower_bounds`, `upper_bounds` are in Spark) the query fails with
//! "Invalid comparison operation: Int64 == Int32". `get_field` coerces no argument, and
//! `map_extract` (which does) answers a list, not the value.
//!
//! This expression rewrite, run before DataFusion's type coercion, restates each literal
//! key of a `get_field` on a map in the map's key type when that loses nothing (`1` as
//! `Int32`): a number as a number, a string as a string, bytes as bytes, and only when
//! casting it back gives the same value. Any other key is left as it is (`m[3000000000]`
//! on `Int32` keys still fails as before; a column as the key too).
//!
//! A map whose keys are nested (Iceberg allows struct, list and map keys) cannot be read
//! by key through `get_field`: DataFusion 55's compares the keys with a kernel that
//! panics on struct keys of the key's very type ("assertion failed: idx < bit_len", the
//! query failing as "task panicked", a `DELETE … WHERE m[named_struct(…)] = …` too)
//! and refuses them of another type ("Can't compare arrays of different types"). The
//! rewrite refuses such an access at planning, naming the map column, its key type and
//! the access, and pointing at `element_at(m, key)[1]` (`map_extract`), which compares
//! nested keys correctly. Installed (once) by
//! [`install_map_key_rule`], which [`register_iceberg_factory`](super::register_iceberg_factory)
//! and [`sql::execute`](super::sql::execute) (and so the CLI) call.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, DataFusionError, Result as DFResult, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Expr, ExprSchemable};
use datafusion::prelude::SessionContext;

use super::compared_groups::install_once;

/// The rewrite's name (as listed by the session's analyzer).
pub const MAP_KEY_LITERALS_RULE: &str = "icefloe_map_key_literals";

/// A [`FunctionRewrite`]: literal map keys in the map's key type (see the module docs).
#[derive(Debug, Default)]
pub struct MapKeyLiterals;

/// The key and value types of a map type.
fn map_types(ty: &DataType) -> Option<(&DataType, &DataType)> {
    let DataType::Map(entries, _) = ty else {
        return None;
    };
    let DataType::Struct(fields) = entries.data_type() else {
        return None;
    };
    match &fields[..] {
        [k, v] => Some((k.data_type(), v.data_type())),
        _ => None,
    }
}

fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_binary(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

/// `value` as a value of `key`, when it is one of the same kind and survives the
/// round trip unchanged.
fn restated(value: &ScalarValue, key: &DataType) -> Option<ScalarValue> {
    let from = value.data_type();
    if &from == key || value.is_null() {
        return None;
    }
    let same_kind = (from.is_numeric() && key.is_numeric())
        || (is_string(&from) && is_string(key))
        || (is_binary(&from) && is_binary(key));
    if !same_kind {
        return None;
    }
    let cast = value.cast_to(key).ok()?;
    (!cast.is_null() && cast.cast_to(&from).ok().as_ref() == Some(value)).then_some(cast)
}

/// Whether map keys of type `key` are nested (struct, list or map), which `get_field`
/// cannot look up (see the module docs).
fn is_nested_key(key: &DataType) -> bool {
    matches!(
        key,
        DataType::Struct(_)
            | DataType::List(_)
            | DataType::LargeList(_)
            | DataType::ListView(_)
            | DataType::LargeListView(_)
            | DataType::FixedSizeList(..)
            | DataType::Map(..)
    )
}

/// The keys of `get_field(base, k1, k2, …)` restated along the path; whether any changed.
///
/// Errors: a step of the path looks up a key of a map whose keys are nested
/// ([`is_nested_key`]), naming the map (the path to it), its key type and the key.
fn restate_keys(args: &mut [Expr], schema: &DFSchema) -> DFResult<bool> {
    let Some((base, keys)) = args.split_first_mut() else {
        return Ok(false);
    };
    let Ok(mut ty) = base.get_type(schema) else {
        return Ok(false);
    };
    // the path read so far, as the query writes it
    let mut path = written_path(base);
    let mut changed = false;
    for key in keys {
        let next = if let Some((key_type, value_type)) = map_types(&ty) {
            if is_nested_key(key_type) {
                return Err(DataFusionError::Plan(format!(
                    "{path}[{key}]: map column '{path}' has {} keys ({key_type}), which \
                     cannot be looked up by subscript (DataFusion's get_field does not \
                     compare nested keys); element_at({path}, key)[1] reads the value",
                    nested_kind(key_type)
                )));
            }
            path = format!("{path}[{key}]");
            if let Expr::Literal(value, metadata) = key {
                if let Some(value) = restated(value, key_type) {
                    *key = Expr::Literal(value, metadata.clone());
                    changed = true;
                }
            }
            value_type.clone()
        } else if let DataType::Struct(fields) = &ty {
            let name = match key {
                Expr::Literal(value, _) => value.try_as_str().flatten(),
                _ => None,
            };
            match name.and_then(|n| fields.iter().find(|f| f.name() == n)) {
                Some(f) => {
                    path = format!("{path}.{}", f.name());
                    f.data_type().clone()
                }
                None => break,
            }
        } else {
            break;
        };
        ty = next;
    }
    Ok(changed)
}

/// `expr` as a query writes a path into a column, for messages: `s.n` for
/// `get_field(s, 'n')` (DataFusion plans `s.n[k]` as `get_field(get_field(s, 'n'), k)`),
/// `m[k]` for another key; any other expression as DataFusion displays it.
fn written_path(expr: &Expr) -> String {
    let Expr::ScalarFunction(ScalarFunction { func, args }) = expr else {
        return expr.to_string();
    };
    let (true, Some((base, keys))) = (func.name() == "get_field", args.split_first()) else {
        return expr.to_string();
    };
    let mut path = written_path(base);
    for key in keys {
        match key {
            Expr::Literal(value, _) if value.try_as_str().flatten().is_some() => {
                path.push('.');
                path.push_str(value.try_as_str().flatten().unwrap_or_default());
            }
            _ => path.push_str(&format!("[{key}]")),
        }
    }
    path
}

/// What nested keys of type `key` are, for messages: "struct", "list" or "map".
fn nested_kind(key: &DataType) -> &'static str {
    match key {
        DataType::Struct(_) => "struct",
        DataType::Map(..) => "map",
        _ => "list",
    }
}

impl FunctionRewrite for MapKeyLiterals {
    fn name(&self) -> &str {
        MAP_KEY_LITERALS_RULE
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        let Expr::ScalarFunction(ScalarFunction { func, mut args }) = expr else {
            return Ok(Transformed::no(expr));
        };
        let changed = func.name() == "get_field" && restate_keys(&mut args, schema)?;
        let expr = Expr::ScalarFunction(ScalarFunction { func, args });
        Ok(if changed {
            Transformed::yes(expr)
        } else {
            Transformed::no(expr)
        })
    }
}

/// Add [`MapKeyLiterals`] to `ctx`'s analyzer, once (a second call does nothing).
pub fn install_map_key_rule(ctx: &SessionContext) {
    install_once(ctx, Arc::new(MapKeyLiterals));
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::prelude::SessionContext;

    use super::install_map_key_rule;

    /// `t(m map<int, string>, l map<bigint, string>, s struct<n map<int, bigint>>,
    /// v map<string, int>)`: one row.
    async fn session() -> SessionContext {
        let ctx = SessionContext::new();
        install_map_key_rule(&ctx);
        install_map_key_rule(&ctx);
        ctx.sql(
            "CREATE TABLE t AS SELECT \
             map([arrow_cast(1, 'Int32'), arrow_cast(2, 'Int32')], ['a', 'b']) AS m, \
             map([arrow_cast(7, 'Int64')], ['x']) AS l, \
             named_struct('n', map([arrow_cast(3, 'Int32')], [arrow_cast(30, 'Int64')])) AS s, \
             map([arrow_cast('k', 'Utf8View')], [5]) AS v",
        )
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
        ctx
    }

    async fn value(ctx: &SessionContext, expr: &str) -> String {
        let batches = ctx
            .sql(&format!("SELECT {expr} AS v FROM t"))
            .await
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{expr}: {e}"));
        pretty_format_batches(&batches)
            .unwrap()
            .to_string()
            .lines()
            .nth(3)
            .unwrap_or_default()
            .trim_matches(|c| c == '|' || c == ' ')
            .to_string()
    }

    #[tokio::test]
    async fn integer_literals_read_int_keyed_maps() {
        let ctx = session().await;
        assert_eq!(value(&ctx, "m[1]").await, "a");
        assert_eq!(value(&ctx, "m[2]").await, "b");
        assert_eq!(value(&ctx, "m[3]").await, "");
        assert_eq!(value(&ctx, "l[7]").await, "x");
        assert_eq!(value(&ctx, "s.n[3]").await, "30");
        assert_eq!(value(&ctx, "s['n'][3]").await, "30");
        assert_eq!(value(&ctx, "v['k']").await, "5");
        assert_eq!(value(&ctx, "m[1.0]").await, "a");
        // no lossless Int32: left as it is (DataFusion's error)
        let err = ctx
            .sql("SELECT m[3000000000] FROM t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap_err();
        assert!(err.to_string().contains("Int64 == Int32"), "{err}");
    }

    /// Helper B67, task 4: `m[named_struct(…)]` on a map with struct keys panicked in
    /// DataFusion's `get_field` ("task panicked"); it is refused at planning naming the
    /// column, the key type and the access, at any depth and whatever the key's type;
    /// `element_at(m, k)[1]` reads the value.
    #[tokio::test]
    async fn subscripts_of_maps_with_nested_keys_are_refused_at_planning() {
        let ctx = SessionContext::new();
        install_map_key_rule(&ctx);
        ctx.sql(
            "CREATE TABLE sk AS SELECT \
             map([named_struct('a', arrow_cast(1, 'Int32'), 'b', 'x')], ['one']) AS m, \
             named_struct('n', map([named_struct('a', arrow_cast(1, 'Int32'))], [7])) AS s, \
             map([[1, 2]], ['l']) AS lm",
        )
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
        for (expr, path, kind) in [
            (
                "m[named_struct('a', CAST(1 AS INT), 'b', 'x')]",
                "sk.m",
                "struct",
            ),
            ("m[named_struct('a', 1, 'b', 'x')]", "sk.m", "struct"),
            ("s.n[named_struct('a', CAST(1 AS INT))]", "sk.s.n", "struct"),
            ("lm[[1, 2]]", "sk.lm", "list"),
        ] {
            for sql in [
                format!("SELECT {expr} AS v FROM sk"),
                format!("SELECT 1 FROM sk WHERE {expr} IS NOT NULL"),
            ] {
                let err = match ctx.sql(&sql).await {
                    Ok(df) => df.collect().await.map(|_| ()).unwrap_err(),
                    Err(e) => e,
                };
                let text = err.to_string();
                assert!(
                    text.contains(&format!("map column '{path}' has {kind} keys"))
                        && text.contains("element_at"),
                    "{sql}: {text}"
                );
            }
        }
        let batches = ctx
            .sql(
                "SELECT element_at(m, named_struct('a', CAST(1 AS INT), 'b', 'x'))[1] AS v FROM sk",
            )
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let text = pretty_format_batches(&batches).unwrap().to_string();
        assert!(text.contains("| one |"), "{text}");
    }
}
