//! Spark's `SET spark.<key> = value`: the Spark session keys icefloe has an equivalent for
//! set that equivalent, with its value checks; any other `spark.*` key is refused, naming
//! it and the keys icefloe reads (DataFusion refused them all with "Could not find config
//! namespace \"spark\"", which stopped a Spark script at its first line and named no
//! equivalent). No key is ignored silently.
//!
//! | Spark key | icefloe |
//! |---|---|
//! | `spark.sql.sources.partitionOverwriteMode` (`static`, `dynamic`, any case) | `icefloe.partition_overwrite_mode` |
//! | `spark.sql.session.timeZone` | the session's time zone, as `SET TIME ZONE` sets it (`datafusion.execution.time_zone`) |
//! | `spark.wap.id` | `icefloe.wap_id` |
//!
//! As in Spark, the value is the text after `=` (trimmed; one quoted string, `'…'`, `"…"`
//! or `` `…` ``, is its content). `SET spark.<key>` without a value shows the
//! equivalent's value (`SHOW <icefloe key>`). Keys are matched as Spark names them,
//! ignoring case.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::tokenizer::Token;

use super::tokens::{is_keyword, string_literal, Cursor};
use crate::error::{Error, Result};

/// A Spark key icefloe reads, and its equivalent.
struct SparkKey {
    spark: &'static str,
    /// The option it sets; `None`: the session's time zone.
    option: Option<&'static str>,
}

/// The `spark.*` keys icefloe reads.
const SPARK_KEYS: &[SparkKey] = &[
    SparkKey {
        spark: "spark.sql.sources.partitionOverwriteMode",
        option: Some("icefloe.partition_overwrite_mode"),
    },
    SparkKey {
        spark: "spark.sql.session.timeZone",
        option: None,
    },
    SparkKey {
        spark: "spark.wap.id",
        option: Some("icefloe.wap_id"),
    },
];

/// The option that holds the session's time zone.
const TIME_ZONE_OPTION: &str = "datafusion.execution.time_zone";

/// Run `c`'s statement when it is `SET spark.<key> [= value]`: an empty result once the
/// equivalent is set (its value, without `= value`); `None` for any other statement.
///
/// Errors: [`crate::ErrorKind::Unsupported`] for a `spark.*` key icefloe does not read,
/// naming it and the keys it reads; the equivalent's value checks, naming the Spark key
/// ([`crate::ErrorKind::InvalidArgument`] for a time zone that is none; DataFusion's
/// error naming the icefloe option for an option's value).
pub(super) async fn set_spark_key(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let is_spark = c.peek_at(1).is_some_and(|t| is_keyword(&t.token, "spark"))
        && c.peek_at(2).is_some_and(|t| t.token == Token::Period);
    if !c.eat_keyword("SET") || !is_spark {
        return Ok(None);
    }
    let text = c.text();
    let key_start = c.offset();
    while c.peek().is_some_and(|t| t.token != Token::Eq) {
        c.advance();
    }
    let key = text[key_start..c.offset()].trim();
    let value = match c.eat(&Token::Eq) {
        true => Some(match (c.peek(), c.peek_at(1)) {
            (Some(t), None) => match &t.token {
                Token::Word(w) if w.quote_style == Some('`') => w.value.clone(),
                token => string_literal(token)
                    .map_or_else(|| text[t.start..].trim().to_string(), str::to_string),
            },
            _ => text[c.offset()..].trim().to_string(),
        }),
        false => None,
    };
    let known = known_key(key, "SET")?;
    let what = format!("SET {}", known.spark);
    let Some(value) = value else {
        let shown = known.option.unwrap_or(TIME_ZONE_OPTION);
        return Ok(Some(ctx.sql(&format!("SHOW {shown}")).await?));
    };
    match known.option {
        Some(option) => {
            let set = format!("SET {option} = '{}'", value.replace('\'', "''"));
            let result = async { ctx.sql(&set).await?.collect().await };
            result.await.map_err(|e| Error::from(e).context(&what))?;
        }
        None => super::set_time_zone::set_session_zone(ctx, &value, &what).await?,
    }
    super::empty(ctx).map(Some)
}

/// The option `RESET <key>` sets back to its default for the Spark key `key` (matched
/// ignoring case): the equivalent `SET <key>` sets (the session's time zone is
/// `datafusion.execution.time_zone`).
///
/// Errors: [`crate::ErrorKind::Unsupported`] for a `spark.*` key icefloe does not read,
/// naming it and the keys it reads, as `SET` does.
pub(super) fn reset_option(key: &str) -> Result<&'static str> {
    let known = known_key(key, "RESET")?;
    Ok(known.option.unwrap_or(TIME_ZONE_OPTION))
}

/// The Spark key icefloe reads that `key` names (ignoring case).
///
/// Errors: [`crate::ErrorKind::Unsupported`] naming `verb` and `key`, and the keys icefloe
/// reads.
fn known_key(key: &str, verb: &str) -> Result<&'static SparkKey> {
    SPARK_KEYS
        .iter()
        .find(|k| k.spark.eq_ignore_ascii_case(key))
        .ok_or_else(|| {
            let read: Vec<String> = SPARK_KEYS
                .iter()
                .map(|k| format!("{} ({})", k.spark, equivalent(k)))
                .collect();
            Error::unsupported(format!(
                "{verb} {key}: icefloe does not read this Spark setting (the spark.* keys it \
                 reads: {})",
                read.join(", ")
            ))
        })
}

/// What icefloe sets for `key`, for messages.
fn equivalent(key: &SparkKey) -> String {
    match key.option {
        Some(option) => option.to_string(),
        None => "SET TIME ZONE".to_string(),
    }
}
