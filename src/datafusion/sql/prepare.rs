//! `PREPARE name [(types)] AS statement` over Iceberg tables: each `EXECUTE name` reads
//! the tables as they are then, as an `EXECUTE` of a query over DataFusion's listing
//! tables does (they list their files when the statement runs).
//!
//! DataFusion keeps the prepared plan, and with it the table providers resolved at
//! `PREPARE`; an Iceberg provider reads the snapshot it was made at, so `EXECUTE` kept
//! returning the rows of that snapshot after the session itself wrote to the table. Here
//! each Iceberg table scan of a prepared query is read through a [`FreshView`] of that
//! table, which resolves it again by name at every scan.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNodeRecursion};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::provider_as_source;
use datafusion::logical_expr::{LogicalPlan, Prepare, Statement, TableScanBuilder};
use datafusion::prelude::SessionContext;

use crate::datafusion::fresh_view::{is_iceberg, FreshView};
use crate::error::Result;

/// Run `statement` if it prepares a query reading an Iceberg table; `None` otherwise (or
/// when DataFusion cannot plan it: DataFusion then runs it and reports the error).
/// A prepared `INSERT`/`DELETE`/`UPDATE`/`MERGE` is left to DataFusion: its target is
/// resolved by the table provider when it runs.
///
/// Errors: DataFusion's, registering the prepared statement (e.g. a name taken).
pub(super) async fn prepare(ctx: &SessionContext, statement: &str) -> Result<Option<DataFrame>> {
    let Ok(LogicalPlan::Statement(Statement::Prepare(prepare))) =
        ctx.state().create_logical_plan(statement).await
    else {
        return Ok(None);
    };
    if !FreshView::reads_iceberg(&prepare.input) || writes(&prepare.input) {
        return Ok(None);
    }
    let name = prepare.name.clone();
    let input = Arc::unwrap_or_clone(prepare.input)
        .transform_up_with_subqueries(|node| match node {
            LogicalPlan::TableScan(scan) if is_iceberg(&scan) => {
                let fresh = FreshView::for_prepared(&name, &scan)?;
                let rescan =
                    TableScanBuilder::new(scan.table_name, provider_as_source(Arc::new(fresh)))
                        .with_projection(scan.projection)
                        .with_filters(scan.filters)
                        .with_fetch(scan.fetch)
                        .build()?;
                Ok(Transformed::yes(LogicalPlan::TableScan(rescan)))
            }
            other => Ok(Transformed::no(other)),
        })?
        .data;
    let plan = LogicalPlan::Statement(Statement::Prepare(Prepare {
        name,
        fields: prepare.fields,
        input: Arc::new(input),
    }));
    Ok(Some(ctx.execute_logical_plan(plan).await?))
}

/// Whether `plan` writes (a DML statement or DDL anywhere in it).
fn writes(plan: &LogicalPlan) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        if matches!(
            node,
            LogicalPlan::Dml(_) | LogicalPlan::Ddl(_) | LogicalPlan::Copy(_)
        ) {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}
