//! Spark's `SET TIME ZONE 'zone'`: the session's time zone is DataFusion's
//! `datafusion.execution.time_zone` (which icefloe reads as Spark's
//! `spark.sql.session.timeZone`, see `session_zone`), and DataFusion 55 sets it only as
//! `SET datafusion.execution.time_zone = '…'`; Spark's form failed with "SET variant not
//! implemented yet: SetTimeZone { … }". `SET TIME ZONE LOCAL` and the `INTERVAL` form are
//! refused, saying what to write.

use datafusion::arrow::array::timezone::Tz;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::tokens::{string_literal, Cursor};
use crate::error::{Error, Result};

/// Run `c`'s statement when it is `SET TIME ZONE …`: an empty result once the session's
/// zone is set; `None` for any other statement.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`]): `LOCAL`, `INTERVAL …`, anything but
/// one string after `ZONE`; a string that is no time zone (region or offset).
pub(super) async fn set_time_zone(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    if !c.eat_keywords(&["SET", "TIME", "ZONE"]) {
        return Ok(None);
    }
    if c.peek_keyword("LOCAL") {
        return Err(Error::invalid_argument(
            "SET TIME ZONE LOCAL: icefloe does not take the machine's zone; name the zone \
             (SET TIME ZONE 'Europe/Paris', or an offset: '+02:00')",
        ));
    }
    if c.peek_keyword("INTERVAL") {
        return Err(Error::invalid_argument(
            "SET TIME ZONE INTERVAL …: give the offset as a string instead \
             (SET TIME ZONE '+05:30')",
        ));
    }
    let Some(zone) = c.peek().and_then(|t| string_literal(&t.token)) else {
        return Err(c.expected("a time zone as a string ('Europe/Paris', '+02:00')"));
    };
    let zone = zone.to_string();
    c.advance();
    c.expect_end()?;
    set_session_zone(ctx, &zone, "SET TIME ZONE").await?;
    Ok(Some(super::empty(ctx)?))
}

/// Make `zone` the session's time zone (`datafusion.execution.time_zone`), as `SET TIME
/// ZONE 'zone'` does; `what` is the statement, for messages.
///
/// Errors ([`crate::ErrorKind::InvalidArgument`], naming `what` and `zone`): a string
/// that is no time zone (region or offset).
pub(super) async fn set_session_zone(ctx: &SessionContext, zone: &str, what: &str) -> Result<()> {
    if zone.parse::<Tz>().is_err() {
        return Err(Error::invalid_argument(format!(
            "{what} '{zone}': not a time zone (a region such as 'Europe/Paris', or an \
             offset such as '+02:00')"
        )));
    }
    let set = format!(
        "SET datafusion.execution.time_zone = '{}'",
        zone.replace('\'', "''")
    );
    ctx.sql(&set).await?.collect().await?;
    Ok(())
}
