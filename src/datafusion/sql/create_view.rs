//! `CREATE [OR REPLACE] [TEMPORARY] VIEW name AS query` over Iceberg tables: planned by
//! DataFusion, registered as a [`FreshView`], which resolves the Iceberg tables again
//! whenever the view is read (DataFusion's own view would read them as they were when it
//! was created). Views of no Iceberg table stay DataFusion's.

use std::sync::Arc;

use datafusion::dataframe::DataFrame;
use datafusion::datasource::TableType;
use datafusion::logical_expr::{DdlStatement, LogicalPlan};
use datafusion::prelude::SessionContext;

use super::empty;
use crate::datafusion::fresh_view::FreshView;
use crate::error::{Error, ErrorKind, Result};

/// Run `statement` if it creates a view of an Iceberg table; `None` otherwise (or when
/// DataFusion cannot plan it: DataFusion then runs it and reports the error).
///
/// Errors: a view (or table) of that name exists and the statement has no `OR REPLACE`
/// ([`ErrorKind::AlreadyExists`], naming which); a table of an Iceberg namespace of that
/// name, even with `OR REPLACE`; the catalog's errors registering it.
pub(super) async fn create_view(
    ctx: &SessionContext,
    statement: &str,
) -> Result<Option<DataFrame>> {
    let Ok(LogicalPlan::Ddl(DdlStatement::CreateView(view))) =
        ctx.state().create_logical_plan(statement).await
    else {
        return Ok(None);
    };
    // the name as the catalog has it now, for the check below and DataFusion's own
    // (another process may have dropped or created the table since the session listed
    // the names: module `listed_names`)
    super::listed_names::recheck_table_name(ctx, &view.name).await;
    let name = view.name;
    // before DataFusion's own views too: its error ("Table '…' already exists") names a
    // view a table
    if ctx.table_exist(name.clone())? {
        let kind = match ctx.table_provider(name.clone()).await {
            Ok(p) if p.table_type() == TableType::View => "a view",
            _ => "a table",
        };
        // a view replaces a view; a table is kept (refused where the view would be
        // registered, an Iceberg namespace's schema, naming both)
        if !view.or_replace {
            return Err(Error::new(
                ErrorKind::AlreadyExists,
                format!(
                    "CREATE VIEW {name}: {name} already exists as {kind} (CREATE OR REPLACE \
                     VIEW replaces a view)"
                ),
            ));
        }
    }
    let input = Arc::unwrap_or_clone(view.input);
    if !FreshView::reads_iceberg(&input) {
        return Ok(None);
    }
    if ctx.table_exist(name.clone())? {
        ctx.deregister_table(name.clone())?;
    }
    let fresh = FreshView::new(name.to_string(), input, view.definition);
    ctx.register_table(name, Arc::new(fresh))?;
    empty(ctx).map(Some)
}
