//! `RESET icefloe.<name>`: DataFusion 55 resets its own options only
//! (`ConfigOptions::reset` refuses any other namespace: "Could not find config namespace
//! \"icefloe\""), so [`reset`] sets an icefloe option back to the session's default
//! ([`IcefloeOptions::reset_option`]) when the session has icefloe's options registered.
//! `RESET spark.<key>` resets the equivalent `SET spark.<key>` sets (module
//! `spark_settings`: an icefloe option to the session's default, or the session's time
//! zone to UTC, the zone icefloe's sessions start with), as Spark's `RESET key` restores
//! the key's default; a `spark.*` key icefloe does not read is refused naming it, as by
//! `SET`.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::{ResetStatement, Statement as DFStatement};

use super::empty;
use crate::datafusion::IcefloeOptions;
use crate::error::Result;

/// Run `sql` when it is `RESET icefloe.<name>` in a session with icefloe's options:
/// an empty result once the option is back to its default; `None` for any other
/// statement (DataFusion's to run or report).
///
/// Errors: an unknown icefloe option ([`crate::ErrorKind::InvalidArgument`], naming the
/// known ones); a `spark.*` key icefloe does not read ([`crate::ErrorKind::Unsupported`],
/// naming it and the keys it reads).
pub(super) async fn reset(ctx: &SessionContext, sql: &str) -> Result<Option<DataFrame>> {
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    let Ok(DFStatement::Reset(ResetStatement::Variable(name))) =
        state.sql_to_statement(sql, &dialect)
    else {
        return Ok(None);
    };
    // as DataFusion names the variable: its parts as written, lower-cased
    let variable = name
        .0
        .iter()
        .filter_map(|part| part.as_ident().map(|ident| ident.value.as_str()))
        .collect::<Vec<_>>()
        .join(".")
        .to_lowercase();
    // Spark's keys reset their equivalent (module `spark_settings`); the time zone's is
    // DataFusion's own option
    let option = match variable.strip_prefix("spark.") {
        Some(_) => {
            let option = super::spark_settings::reset_option(&variable)?;
            if option.strip_prefix("icefloe.").is_none() {
                // the session's time zone: back to UTC, the zone icefloe's sessions start
                // with (`register_iceberg_options`), as Spark always has a session zone;
                // DataFusion's RESET would leave none
                let sql = format!("SET {option} = 'UTC'");
                ctx.sql(&sql).await?.collect().await?;
                return empty(ctx).map(Some);
            }
            option
        }
        None => variable.as_str(),
    };
    let Some(key) = option.strip_prefix("icefloe.") else {
        return Ok(None);
    };
    {
        let shared = ctx.state_ref();
        let mut state = shared.write();
        let Some(options) = state
            .config_mut()
            .options_mut()
            .extensions
            .get_mut::<IcefloeOptions>()
        else {
            return Ok(None);
        };
        options.reset_option(key)?;
    }
    empty(ctx).map(Some)
}
