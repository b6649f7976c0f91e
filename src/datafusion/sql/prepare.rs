//! `PREPARE name [(types)] AS statement` over Iceberg tables: each `EXECUTE name` reads
//! the tables as they are then, as an `EXECUTE` of a query over DataFusion's listing
//! tables does (they list their files when the statement runs).
//!
//! DataFusion keeps the prepared plan, and with it the table providers resolved at
//! `PREPARE`; an Iceberg provider reads the snapshot it was made at, so `EXECUTE` kept
//! returning the rows of that snapshot after the session itself wrote to the table. Here
//! each Iceberg table scan of a prepared query is read through a [`FreshView`] of that
//! table, which resolves it again by name at every scan.
//!
//! A prepared `INSERT [OVERWRITE]`, `DELETE`, `UPDATE`, `TRUNCATE` or `MERGE INTO` on an
//! Iceberg table resolves its target again at each `EXECUTE` too ([`FreshTarget`]): it
//! changes the rows of the table the name holds then, at its current snapshot (rows
//! written since the `PREPARE` included; after the table was dropped and created again,
//! the new table's, when it has the same columns), or the `EXECUTE` fails naming the
//! change before writing anything. The Iceberg tables such a statement reads (an
//! `INSERT … SELECT`'s or `MERGE`'s source, a subquery of its condition) are read
//! through [`FreshView`]s as a prepared query's are; so are those a prepared `INSERT`
//! into a table of another catalog reads.
//!
//! A prepared `UPDATE` or `MERGE` is read as the same statement run directly is (module
//! `dml_rewrite`: `SET st.a` a struct field, `MERGE` clause scopes, `UPDATE SET *` /
//! `INSERT *`, `DEFAULT`); DataFusion alone wrote `SET st.a = …` into a top-level column
//! `a`.
//!
//! A `VALUES` of several rows holding a scalar subquery over an Iceberg column
//! (`PREPARE p AS INSERT INTO t VALUES ((SELECT max(x) FROM t), 'a'), ($1, 'b')`) is
//! written as one projection per row before DataFusion keeps the plan, as the analyzer
//! rule of `crate::datafusion::values_subqueries` writes it for a statement run directly:
//! DataFusion planned such a `VALUES` again from its values at every `EXECUTE` and
//! refused it there, the subquery's value carrying the column's field id ("Inconsistent
//! metadata across values list"; module `values_metadata`).
//!
//! A statement whose tables have other columns at `EXECUTE` than at `PREPARE` is
//! prepared again from its text first (module `prepare_rebind`), as DuckDB re-binds one:
//! a prepared `SELECT *` then lists a column added since. A change committed while the
//! `EXECUTE` is planned is still an error asking to prepare it again (a `*` expanded
//! at `PREPARE` does not list a column added since), rather than rows silently without
//! it.

use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNodeRecursion};
use datafusion::common::TableReference;
use datafusion::dataframe::DataFrame;
use datafusion::datasource::{provider_as_source, source_as_provider, TableProvider};
use datafusion::logical_expr::{
    DmlStatement, Execute, LogicalPlan, Prepare, Statement, TableScanBuilder,
};
use datafusion::optimizer::AnalyzerRule;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{self, SelectItem, SetExpr, Visit, Visitor};

use crate::datafusion::fresh_target::FreshTarget;
use crate::datafusion::fresh_view::{is_iceberg, FreshView};
use crate::datafusion::values_subqueries::ValuesScalarSubqueries;
use crate::error::Result;
use crate::IcebergTableProvider;

/// The statement `statement` executes, when it is an `EXECUTE` (as DataFusion plans it;
/// `None` for any other statement or one that does not plan).
pub(super) async fn executed(ctx: &SessionContext, statement: &str) -> Option<Execute> {
    match ctx.state().create_logical_plan(statement).await {
        Ok(LogicalPlan::Statement(Statement::Execute(execute))) => Some(execute),
        _ => None,
    }
}

/// The name of the prepared statement `statement` removes, when it is a `DEALLOCATE
/// [PREPARE] name`.
pub(super) async fn deallocated(ctx: &SessionContext, statement: &str) -> Option<String> {
    match ctx.state().create_logical_plan(statement).await {
        Ok(LogicalPlan::Statement(Statement::Deallocate(d))) => Some(d.name),
        _ => None,
    }
}

/// Run `statement` if it prepares a statement reading an Iceberg table or writing to
/// one (`INSERT`, `DELETE`, `UPDATE`, `TRUNCATE`, `MERGE INTO`): its result, the
/// statement's name and the Iceberg tables it reads or writes with their columns then
/// (for module `prepare_rebind`); `None` otherwise, for DDL, or when DataFusion cannot
/// plan it (DataFusion then runs it and reports the error).
///
/// Errors: DataFusion's, registering the prepared statement (e.g. a name taken).
pub(super) async fn prepare(ctx: &SessionContext, statement: &str) -> Result<Option<Prepared>> {
    // the prepared UPDATE or MERGE read as the same statement run directly is (module
    // `dml_rewrite`: assignment targets, MERGE clause scopes, `*`, `DEFAULT`)
    let planned = match super::dml_rewrite::plan_prepare(ctx, statement).await? {
        Some(plan) => Ok(plan),
        // a VALUES inside an INSERT's query, typed by its own rows (module `nested_values`)
        None => match super::nested_values::plan(ctx, statement).await? {
            Some(plan) => Ok(plan),
            None => ctx.state().create_logical_plan(statement).await,
        },
    };
    let Ok(LogicalPlan::Statement(Statement::Prepare(prepare))) = planned else {
        return Ok(None);
    };
    let writes_iceberg = writes_to_iceberg(&prepare.input);
    if (!writes_iceberg && !FreshView::reads_iceberg(&prepare.input)) || has_ddl(&prepare.input) {
        return Ok(None);
    }
    let name = prepare.name.clone();
    let star = super::parse_statement(ctx, statement).is_some_and(|s| selects_star(&s));
    let mut tables: Vec<(TableReference, Arc<dyn TableProvider>)> = Vec::new();
    let mut keep = |name: &TableReference, table: Arc<dyn TableProvider>| {
        if !tables.iter().any(|(n, _)| n == name) {
            tables.push((name.clone(), table));
        }
    };
    let input = Arc::unwrap_or_clone(prepare.input)
        .transform_up_with_subqueries(|node| match node {
            LogicalPlan::TableScan(scan) if is_iceberg(&scan) => {
                keep(&scan.table_name, source_as_provider(&scan.source)?);
                let fresh = FreshView::for_prepared(&name, &scan, star)?;
                let rescan =
                    TableScanBuilder::new(scan.table_name, provider_as_source(Arc::new(fresh)))
                        .with_projection(scan.projection)
                        .with_filters(scan.filters)
                        .with_fetch(scan.fetch)
                        .build()?;
                Ok(Transformed::yes(LogicalPlan::TableScan(rescan)))
            }
            LogicalPlan::Dml(dml) if writes_iceberg => {
                let prepared = source_as_provider(&dml.target)?;
                keep(&dml.table_name, Arc::clone(&prepared));
                let target = FreshTarget::new(&name, dml.table_name.clone(), prepared);
                Ok(Transformed::yes(LogicalPlan::Dml(DmlStatement::new(
                    dml.table_name,
                    provider_as_source(Arc::new(target)),
                    dml.op,
                    dml.input,
                ))))
            }
            other => Ok(Transformed::no(other)),
        })?
        .data;
    // a VALUES holding a scalar subquery written as one projection per row now, as the
    // analyzer rule does for a statement run directly: DataFusion optimizes the plan it
    // keeps without its analyzer (folding the `CASE` module `values_metadata` wraps such a
    // value in) and plans each VALUES again from its values at every EXECUTE, where a
    // subquery over an Iceberg column carries the column's field id and rows of other
    // values were refused ("Inconsistent metadata across values list")
    let input = ValuesScalarSubqueries.analyze(input, ctx.state().config_options())?;
    // a declared parameter written into a column of another type cast to it, as a value
    // written directly is (module `declared_parameters`)
    let input = super::declared_parameters::cast_declared(input, &prepare.fields)?;
    let plan = LogicalPlan::Statement(Statement::Prepare(Prepare {
        name: name.clone(),
        fields: prepare.fields,
        input: Arc::new(input),
    }));
    let df = ctx.execute_logical_plan(plan).await?;
    Ok(Some(Prepared { df, name, tables }))
}

/// A statement [`prepare`] registered.
pub(super) struct Prepared {
    /// `PREPARE`'s result.
    pub df: DataFrame,
    /// The statement's name.
    pub name: String,
    /// The Iceberg tables it reads or writes, each as it was at `PREPARE` (its columns
    /// and their write-defaults).
    pub tables: Vec<(TableReference, Arc<dyn TableProvider>)>,
}

/// Whether `statement` selects `*` or `t.*` in any of its queries (subqueries too);
/// `count(*)` is no column list.
fn selects_star(statement: &ast::Statement) -> bool {
    struct Star;
    impl Visitor for Star {
        type Break = ();
        fn pre_visit_query(&mut self, query: &ast::Query) -> ControlFlow<()> {
            match body_selects_star(&query.body) {
                true => ControlFlow::Break(()),
                false => ControlFlow::Continue(()),
            }
        }
    }
    fn body_selects_star(body: &SetExpr) -> bool {
        match body {
            SetExpr::Select(select) => select.projection.iter().any(|item| {
                matches!(
                    item,
                    SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)
                )
            }),
            SetExpr::SetOperation { left, right, .. } => {
                body_selects_star(left) || body_selects_star(right)
            }
            SetExpr::Query(query) => body_selects_star(&query.body),
            _ => false,
        }
    }
    statement.visit(&mut Star).is_break()
}

/// Whether `plan` is a DML statement (`INSERT [OVERWRITE]`, `DELETE`, `UPDATE`,
/// `TRUNCATE`, `MERGE INTO`) on an Iceberg table of a catalog.
fn writes_to_iceberg(plan: &LogicalPlan) -> bool {
    let LogicalPlan::Dml(dml) = plan else {
        return false;
    };
    source_as_provider(&dml.target)
        .ok()
        .is_some_and(|p| p.downcast_ref::<IcebergTableProvider>().is_some())
}

/// Whether `plan` holds DDL anywhere (left to DataFusion as it is).
fn has_ddl(plan: &LogicalPlan) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        if matches!(node, LogicalPlan::Ddl(_)) {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}
