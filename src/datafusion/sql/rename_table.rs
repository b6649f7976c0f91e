//! `ALTER TABLE … RENAME TO …`; the other `ALTER TABLE` clauses are in module
//! `alter_table`.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::super::catalog::schema_name;
use super::tokens::Cursor;
use super::{empty, not_a_table, resolve_table};
use crate::catalog::TableIdent;
use crate::error::{Error, Result};

/// `ALTER TABLE`, after those keywords: `RENAME TO` here, the other clauses in
/// [`alter_table`](mod@super::alter_table).
pub(super) async fn alter_table(
    ctx: &SessionContext,
    mut c: Cursor<'_>,
) -> Result<Option<DataFrame>> {
    let Ok(from_parts) = c.object_name() else {
        return Ok(None);
    };
    if !c.eat_keywords(&["RENAME", "TO"]) {
        return super::alter_table::alter_table(ctx, &from_parts, c).await;
    }
    let Some(from) = resolve_table(ctx, &from_parts)? else {
        return Ok(None);
    };
    not_a_table::check_not_a_version(&from, "ALTER TABLE").await?;
    not_a_table::check_not_a_view(&from, "ALTER TABLE").await?;
    let what = format!("ALTER TABLE {} RENAME", from.display());
    let to_parts = c.object_name().map_err(|e| e.context(&what))?;
    c.expect_end().map_err(|e| e.context(&what))?;
    let to = match to_parts.as_slice() {
        [name] => TableIdent::new(from.ident.namespace.clone(), name.clone()),
        _ => match resolve_table(ctx, &to_parts)? {
            Some(to) if to.target.name == from.target.name => to.ident,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "{what}: '{}' is not in catalog '{}'",
                    to_parts.join("."),
                    from.target.name
                )))
            }
        },
    };
    not_a_table::check_new_table_name(&to.name, &what)?;
    let renamed = super::ResolvedTable::new(from.target.clone(), to.clone());
    not_a_table::check_no_view_named(&renamed, &what)?;
    from.target
        .catalog()
        .rename_table(&from.ident, &to)
        .await
        .map_err(|e| e.context(&what))?;
    if let Some(s) = from
        .target
        .iceberg()
        .namespace_schema(&schema_name(&from.ident.namespace))
    {
        s.remove_table_name(&from.ident.name);
    }
    from.target.schema(&to.namespace)?.add_table_name(&to.name);
    empty(ctx).map(Some)
}
