//! [`UuidStringLiterals`]: `WHERE u = '550e8400-e29b-41d4-a716-446655440000'` on a `uuid`
//! column.
//!
//! An Iceberg `uuid` is an Arrow `FixedSizeBinary(16)` here (tagged `arrow.uuid` at the top
//! level of a column, see the table provider), and DataFusion 55 has no coercion between a
//! string and a fixed-size binary: the comparison fails to plan ("Cannot infer common
//! argument type for comparison operation FixedSizeBinary(16) = Utf8"). Spark reads a
//! `uuid` as a string and DuckDB casts the string to its `UUID` type, so in both a UUID
//! written as a string literal compares with the column.
//!
//! This expression rewrite, run before DataFusion's type coercion (a [`FunctionRewrite`]
//! runs first in the analyzer), and the same rewrite of a binary comparison while the SQL
//! is planned ([`ComparisonPlanner`](super::compared_groups::ComparisonPlanner)) (DataFusion's planner types the operand of `NOT`
//! before any analyzer rule: `NOT (u = '…')` failed), turn each string literal compared with a
//! `FixedSizeBinary(16)` value into the 16 bytes of the UUID it spells (any form
//! `uuid::Uuid::parse_str` reads: `8-4-4-4-12` hex digits, plain, braced, `urn:uuid:`):
//! both sides of `=`, `<>`, `<`, `<=`, `>`, `>=`, `IS [NOT] DISTINCT FROM`, `IN` lists and
//! `BETWEEN`. DataFusion compares the bytes unsigned, one by one: the order of the UUIDs'
//! hex text, so `<` and `BETWEEN` mean what they say to a reader of the text.
//!
//! `CAST(u AS STRING)` of such a value gives its `8-4-4-4-12` text, as in Spark (DataFusion
//! has no cast from a fixed-size binary to a string).
//!
//! A string that is not a UUID, compared with a column tagged `uuid`, is an error naming
//! the string (as DuckDB's cast refuses it); compared with a `fixed[16]` value it is left
//! for DataFusion to report. Installed (once) by [`install_uuid_literal_rule`], which
//! [`register_iceberg_factory`](super::register_iceberg_factory) and
//! [`sql::execute`](super::sql::execute) (and so the CLI) call.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{plan_err, DFSchema, Result as DFResult, ScalarValue};
use datafusion::functions::encoding::expr_fn::encode;
use datafusion::functions::string::expr_fn::concat_ws;
use datafusion::functions::unicode::expr_fn::substring;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{lit, when, Expr, ExprSchemable};
use datafusion::prelude::SessionContext;

use super::compared_groups::{
    install_once, install_planner_once, unify_compared, ComparisonPlanner,
};
use crate::spec::arrow::is_uuid_field;

/// The rewrite's name (as listed by the session's analyzer).
pub const UUID_STRING_LITERALS_RULE: &str = "icefloe_uuid_string_literals";

/// A [`FunctionRewrite`]: string literals compared with a `FixedSizeBinary(16)` value
/// become that UUID's bytes (see the module docs).
#[derive(Debug, Default)]
pub struct UuidStringLiterals;

/// The text of a string literal.
fn string_literal(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)),
            _,
        ) => Some(s),
        _ => None,
    }
}

/// What `expr` is in `schema`: a `FixedSizeBinary(16)` value tagged as a UUID, one not
/// tagged, or neither.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fixed16 {
    Uuid,
    Untagged,
    No,
}

fn fixed16(expr: &Expr, schema: &DFSchema) -> Fixed16 {
    if string_literal(expr).is_some() {
        return Fixed16::No;
    }
    match expr.to_field(schema) {
        Ok((_, field)) if field.data_type() == &DataType::FixedSizeBinary(16) => {
            if is_uuid_field(&field) {
                Fixed16::Uuid
            } else {
                Fixed16::Untagged
            }
        }
        _ => Fixed16::No,
    }
}

/// When one of `group` is a `FixedSizeBinary(16)` value, replace each string literal in
/// it that spells a UUID by the UUID's 16 bytes. Returns whether anything changed.
///
/// Errors: a string literal that is not a UUID when the value is tagged `uuid`.
fn unify(group: &mut [&mut Expr], schema: &DFSchema) -> DFResult<bool> {
    let kinds: Vec<Fixed16> = group.iter().map(|e| fixed16(e, schema)).collect();
    let uuid = kinds.contains(&Fixed16::Uuid);
    if !uuid && !kinds.contains(&Fixed16::Untagged) {
        return Ok(false);
    }
    let mut changed = false;
    for expr in group.iter_mut() {
        let Some(text) = string_literal(expr) else {
            continue;
        };
        match uuid::Uuid::parse_str(text) {
            Ok(parsed) => {
                **expr = Expr::Literal(
                    ScalarValue::FixedSizeBinary(16, Some(parsed.as_bytes().to_vec())),
                    None,
                );
                changed = true;
            }
            Err(_) if uuid => {
                return plan_err!(
                    "'{text}' is not a UUID (32 hex digits, as 8-4-4-4-12), compared with a uuid value"
                );
            }
            Err(_) => {}
        }
    }
    Ok(changed)
}

/// `CAST(u AS STRING)` of a value tagged `uuid`: its `8-4-4-4-12` text in lower case (as
/// Spark casts a uuid, and as the CLI prints one), where DataFusion 55 has no cast from a
/// fixed-size binary to a string. Built from DataFusion's own functions (`encode`,
/// `substring`, `concat_ws`), so that a plan codec carries it. `None` for any other
/// expression.
fn uuid_as_text(expr: &Expr, schema: &DFSchema) -> Option<Expr> {
    let (value, to) = match expr {
        Expr::Cast(c) => (c.expr.as_ref(), c.field.data_type()),
        Expr::TryCast(c) => (c.expr.as_ref(), c.field.data_type()),
        _ => return None,
    };
    if !matches!(
        to,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    ) || fixed16(value, schema) != Fixed16::Uuid
    {
        return None;
    }
    let hex = encode(value.clone(), lit("hex"));
    let part = |from: i64, len: i64| substring(hex.clone(), lit(from), lit(len));
    let text = concat_ws(
        lit("-"),
        vec![
            part(1, 8),
            part(9, 4),
            part(13, 4),
            part(17, 4),
            part(21, 12),
        ],
    );
    // `concat_ws` skips nulls (its text of a null uuid was ''): a null stays null
    let text = when(value.clone().is_not_null(), text).end().ok()?;
    Some(match to {
        DataType::Utf8 => text,
        other => Expr::Cast(datafusion::logical_expr::Cast::new(
            Box::new(text),
            other.clone(),
        )),
    })
}

impl FunctionRewrite for UuidStringLiterals {
    fn name(&self) -> &str {
        UUID_STRING_LITERALS_RULE
    }

    fn rewrite(
        &self,
        mut expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> DFResult<Transformed<Expr>> {
        if let Some(text) = uuid_as_text(&expr, schema) {
            return Ok(Transformed::yes(text));
        }
        let changed = unify_compared(&mut expr, |group| unify(group, schema))?.unwrap_or(false);
        Ok(if changed {
            Transformed::yes(expr)
        } else {
            Transformed::no(expr)
        })
    }
}

/// Add [`UuidStringLiterals`] to `ctx`'s analyzer, and its rewrite of a comparison to
/// the SQL planner ([`ComparisonPlanner`]: `NOT (u = '…')`), once (a second call does
/// nothing).
pub fn install_uuid_literal_rule(ctx: &SessionContext) {
    install_once(ctx, Arc::new(UuidStringLiterals));
    install_planner_once(
        ctx,
        ComparisonPlanner {
            name: UUID_STRING_LITERALS_RULE,
            unify,
        },
    );
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use datafusion::arrow::array::{FixedSizeBinaryArray, Int32Array, RecordBatch};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::prelude::SessionContext;

    use super::install_uuid_literal_rule;

    const A: &str = "550e8400-e29b-41d4-a716-446655440000";
    const B: &str = "550e8400-e29b-41d4-a716-446655440001";
    const C: &str = "f47ac10b-58cc-4372-a567-0e02b2c3d479";

    /// `t(id int, u uuid, f fixed[16])`: rows 1, 2, 3 hold A, B, C in both columns, row
    /// 4 nulls.
    fn session() -> SessionContext {
        let tag = HashMap::from([("ARROW:extension:name".to_string(), "arrow.uuid".to_string())]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("u", DataType::FixedSizeBinary(16), true).with_metadata(tag),
            Field::new("f", DataType::FixedSizeBinary(16), true),
        ]));
        let bytes = |s: &str| uuid::Uuid::parse_str(s).unwrap().as_bytes().to_vec();
        let values = || {
            FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                [Some(bytes(A)), Some(bytes(B)), Some(bytes(C)), None].into_iter(),
                16,
            )
            .unwrap()
        };
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
                Arc::new(values()),
                Arc::new(values()),
            ],
        )
        .unwrap();
        let ctx = SessionContext::new();
        ctx.register_batch("t", batch).unwrap();
        install_uuid_literal_rule(&ctx);
        install_uuid_literal_rule(&ctx);
        ctx
    }

    async fn ids(ctx: &SessionContext, condition: &str) -> Vec<i32> {
        let sql = format!("SELECT id FROM t WHERE {condition} ORDER BY id");
        let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        batches
            .iter()
            .flat_map(|b| {
                let col = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
                col.values().to_vec()
            })
            .collect()
    }

    #[tokio::test]
    async fn string_literals_compare_with_uuid_values() {
        let ctx = session();
        assert_eq!(ids(&ctx, &format!("u = '{A}'")).await, [1]);
        assert_eq!(ids(&ctx, &format!("'{B}' = u")).await, [2]);
        assert_eq!(ids(&ctx, &format!("u <> '{A}'")).await, [2, 3]);
        assert_eq!(ids(&ctx, &format!("u > '{A}'")).await, [2, 3]);
        assert_eq!(ids(&ctx, &format!("u <= '{B}'")).await, [1, 2]);
        assert_eq!(
            ids(&ctx, &format!("u IS DISTINCT FROM '{A}'")).await,
            [2, 3, 4]
        );
        assert_eq!(ids(&ctx, &format!("u IN ('{A}', '{C}')")).await, [1, 3]);
        assert_eq!(ids(&ctx, &format!("u NOT IN ('{A}', '{C}')")).await, [2]);
        assert_eq!(
            ids(&ctx, &format!("u BETWEEN '{B}' AND '{C}'")).await,
            [2, 3]
        );
        // under NOT, which DataFusion's planner types at once
        assert_eq!(ids(&ctx, &format!("NOT (u = '{A}')")).await, [2, 3]);
        assert_eq!(ids(&ctx, &format!("NOT (u < '{B}')")).await, [2, 3]);
        assert_eq!(ids(&ctx, &format!("NOT ('{C}' <> f)")).await, [3]);
        assert_eq!(
            ids(&ctx, &format!("NOT (u = '{A}' OR u >= '{C}')")).await,
            [2]
        );
        // the other forms uuid reads: upper case, plain, braced, urn
        let upper = C.to_uppercase();
        assert_eq!(ids(&ctx, &format!("u = '{upper}'")).await, [3]);
        let plain = C.replace('-', "");
        assert_eq!(ids(&ctx, &format!("u = '{plain}'")).await, [3]);
        assert_eq!(ids(&ctx, &format!("u = '{{{C}}}'")).await, [3]);
        assert_eq!(ids(&ctx, &format!("u = 'urn:uuid:{C}'")).await, [3]);
        // a fixed[16] column compares with a string spelling a UUID too
        assert_eq!(ids(&ctx, &format!("f = '{B}'")).await, [2]);
        // the same rows as the binary literal gives
        let hex = B.replace('-', "");
        let by_bytes = ids(
            &ctx,
            &format!("u = arrow_cast(decode('{hex}', 'hex'), 'FixedSizeBinary(16)')"),
        )
        .await;
        assert_eq!(by_bytes, [2]);
        let plan = ctx
            .sql(&format!("EXPLAIN SELECT id FROM t WHERE u = '{A}'"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let text = pretty_format_batches(&plan).unwrap().to_string();
        assert!(!text.contains("Utf8"), "{text}");
    }

    #[tokio::test]
    async fn uuid_values_cast_to_their_text() {
        let ctx = session();
        let batches = ctx
            .sql(
                "SELECT CAST(u AS STRING) AS a, u::varchar AS b, TRY_CAST(u AS VARCHAR) AS c, \
                 arrow_typeof(CAST(u AS STRING)) AS ty FROM t ORDER BY id",
            )
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let text = pretty_format_batches(&batches).unwrap().to_string();
        for u in [A, B, C] {
            assert!(text.contains(&format!("| {u} | {u} | {u} |")), "{text}");
        }
        // the null row stays null
        assert!(text.contains("|                                      |                                      |                                      |"), "{text}");
        // and is null, not '' (`concat_ws` skips nulls)
        assert_eq!(ids(&ctx, "CAST(u AS STRING) IS NULL").await, [4]);
        assert_eq!(ids(&ctx, "TRY_CAST(u AS VARCHAR) IS NULL").await, [4]);
        // untagged fixed[16]: DataFusion's own answer, unchanged
        let err = failure(&ctx, "SELECT CAST(f AS STRING) FROM t").await;
        assert!(!err.contains("550e8400"), "{err}");
        // a string comparison of the text, as a Spark user writes it
        assert_eq!(
            ids(&ctx, &format!("CAST(u AS STRING) LIKE '{}%'", &C[..8])).await,
            [3]
        );
    }

    /// The error planning or running `sql` gives (the analyzer runs when the plan does).
    async fn failure(ctx: &SessionContext, sql: &str) -> String {
        match ctx.sql(sql).await {
            Err(e) => e.to_string(),
            Ok(df) => df.collect().await.unwrap_err().to_string(),
        }
    }

    #[tokio::test]
    async fn a_string_that_is_no_uuid_is_an_error_naming_it() {
        let ctx = session();
        for condition in [
            "u = 'not-a-uuid'",
            "u IN ('550e8400-e29b-41d4-a716-44665544000', 'x')",
            "u BETWEEN 'a' AND 'b'",
        ] {
            let err = failure(&ctx, &format!("SELECT id FROM t WHERE {condition}")).await;
            assert!(err.contains("is not a UUID"), "{condition}: {err}");
            assert!(
                err.contains("compared with a uuid value"),
                "{condition}: {err}"
            );
        }
        // an untagged fixed[16] column: DataFusion's own error, as before
        let err = failure(&ctx, "SELECT id FROM t WHERE f = 'abc'").await;
        assert!(!err.contains("is not a UUID"), "{err}");
        // other strings are not touched
        assert_eq!(ids(&ctx, "id = 1 AND 'x' = 'x'").await, [1]);
    }
}
