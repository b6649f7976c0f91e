//! `DELETE`/`UPDATE` whose condition or `SET` values hold a correlated subquery
//! (`WHERE EXISTS (SELECT 1 FROM s WHERE s.k = t.k)`, `WHERE t.x IN (SELECT y FROM s WHERE
//! s.k = t.k)`, `SET x = (SELECT max(y) FROM s WHERE s.k = t.k)`), as Spark runs them on
//! Iceberg tables.
//!
//! DataFusion 55 decorrelates such a subquery into a join, and then hands the table's
//! `delete_from`/`update` no filter for it (the DML guard refuses the statement there).
//! Here the statement is planned as a query instead: the target's row-level scan (the
//! table's columns, each row's data file and position, on v3 its lineage) takes the
//! target's place under the statement's own filter and `SET` values, DataFusion plans and
//! decorrelates that query as any other, and each row it returns is changed as a `MERGE`
//! changes a matched row (module `merge`: deleted, or deleted and written again with its
//! new values). The statement's conjuncts that read the target's columns alone (no
//! subquery, nothing volatile) prune the files scanned and are its conflict-detection
//! filter, as for other statements; with none, every file is read and any data file
//! committed concurrently conflicts under `serializable`.
//!
//! The statement layer ([`crate::datafusion::sql::execute`], so the CLI) routes a
//! statement here after running its uncorrelated `IN`/`EXISTS` subqueries (module
//! `subquery`): [`route_correlated`] turns the plan into a scan of
//! [`CorrelatedStatement`], which plans the statement each time it is planned (so a
//! `DataFrame` run twice runs the statement twice, each against the table as it is
//! then). Only the shapes DataFusion plans from SQL are taken: `Filter` over the target
//! (aliased or not) for `DELETE`, and a `Projection` of every column over that for
//! `UPDATE`; `UPDATE … FROM` (a join under the filter) is refused, as Spark has no such
//! statement.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, DFSchema, Result as DFResult};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::{provider_as_source, source_as_provider, TableProvider, TableType};
use datafusion::execution::SessionState;
use datafusion::logical_expr::dml::WriteOp;
use datafusion::logical_expr::{
    col, lit, DmlStatement, Expr, LogicalPlan, LogicalPlanBuilder, TableScan,
};
use datafusion::physical_plan::ExecutionPlan;

use super::exec::IcebergRowLevelExec;
use super::job::RowLevelOp;
use super::merge::{self, PlanTable, SOURCE_PRESENT};
use super::{
    isolation, new_job, writable, RowLevelMode, DELETE_ISOLATION_LEVEL, DELETE_MODE,
    UPDATE_ISOLATION_LEVEL, UPDATE_MODE,
};
use crate::datafusion::table_provider::{IcebergTableProvider, FILE_COLUMN, ROW_ID_COLUMN};
use crate::error::{Error, Result};

/// The prefix of the new values' column names in the planned query.
const SET_PREFIX: &str = "__icefloe_set_";

/// Whether `expr` holds a subquery that reads the outer row's columns.
fn is_correlated(expr: &Expr) -> bool {
    expr.exists(|e| {
        Ok(match e {
            Expr::ScalarSubquery(sq) => !sq.outer_ref_columns.is_empty(),
            Expr::InSubquery(i) => !i.subquery.outer_ref_columns.is_empty(),
            Expr::Exists(x) => !x.subquery.outer_ref_columns.is_empty(),
            _ => false,
        })
    })
    .unwrap_or(false)
}

/// `plan` (the unoptimized plan of one statement, as `SessionContext::sql` returns it),
/// when it is a `DELETE`/`UPDATE` of an Iceberg table holding a correlated subquery, as a
/// scan of a [`CorrelatedStatement`] that runs it; any other plan unchanged (`None`).
pub(crate) fn route_correlated(
    state: &SessionState,
    plan: &LogicalPlan,
) -> Result<Option<DataFrame>> {
    let LogicalPlan::Dml(dml) = plan else {
        return Ok(None);
    };
    if !matches!(dml.op, WriteOp::Delete | WriteOp::Update) {
        return Ok(None);
    }
    let mut correlated = false;
    dml.input.apply(|node| {
        correlated = node.expressions().iter().any(is_correlated);
        Ok(if correlated {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    if !correlated {
        return Ok(None);
    }
    let Ok(provider) = source_as_provider(&dml.target) else {
        return Ok(None);
    };
    let Some(provider) = provider.downcast_ref::<IcebergTableProvider>().cloned() else {
        // another table (or a prepared statement's target): the DML guard decides
        return Ok(None);
    };
    let table = CorrelatedStatement {
        provider,
        dml: dml.clone(),
        schema: count_schema(),
    };
    let scan = LogicalPlanBuilder::scan(
        "__icefloe_row_level_statement",
        provider_as_source(Arc::new(table)),
        None,
    )?
    .build()?;
    Ok(Some(DataFrame::new(state.clone(), scan)))
}

/// DataFusion's result of a DML statement: one `count` (`UInt64`).
fn count_schema() -> SchemaRef {
    Arc::new(ArrowSchema::new(vec![Field::new(
        "count",
        DataType::UInt64,
        false,
    )]))
}

/// A `DELETE`/`UPDATE` with a correlated subquery, as a table whose scan runs it (see
/// the module docs): one row, `count`, the rows deleted or updated.
#[derive(Debug)]
pub(crate) struct CorrelatedStatement {
    provider: IcebergTableProvider,
    dml: DmlStatement,
    schema: SchemaRef,
}

#[async_trait]
impl TableProvider for CorrelatedStatement {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    async fn scan(
        &self,
        state: &dyn Session,
        _projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(plan_correlated(&self.provider, state, &self.dml).await?)
    }
}

/// The parts of a statement's input: the `SET` values of an `UPDATE` (one per table
/// column, in order, aliased to its name), the condition (none: every row), and the target's scan with the
/// alias it is read under.
struct Parts<'a> {
    values: Option<&'a [Expr]>,
    condition: Option<&'a Expr>,
    alias: Option<&'a datafusion::common::TableReference>,
    scan: &'a TableScan,
}

/// The parts of `input` (see [`Parts`]).
///
/// Errors: another shape ([`crate::ErrorKind::Unsupported`]), e.g. `UPDATE … FROM`.
fn parts<'a>(input: &'a LogicalPlan, op: &WriteOp, table: &str) -> Result<Parts<'a>> {
    let unsupported = |what: &str| {
        Error::unsupported(format!(
            "{op} on '{table}' with a correlated subquery: a statement planned as {what} (only \
             a condition on the table itself, and SET values, are supported; UPDATE … FROM is \
             not: write it as a MERGE INTO … USING)"
        ))
    };
    let (values, below) = match (op, input) {
        (WriteOp::Update, LogicalPlan::Projection(p)) => {
            (Some(p.expr.as_slice()), p.input.as_ref())
        }
        (WriteOp::Delete, other) => (None, other),
        (_, other) => return Err(unsupported(other.display().to_string().as_str())),
    };
    // no WHERE (an UPDATE whose subquery is in a SET value alone): no condition
    let (condition, below) = match below {
        LogicalPlan::Filter(filter) => (Some(&filter.predicate), filter.input.as_ref()),
        other => (None, other),
    };
    let (alias, scan) = match below {
        LogicalPlan::TableScan(scan) => (None, scan),
        LogicalPlan::SubqueryAlias(a) => match a.input.as_ref() {
            LogicalPlan::TableScan(scan) => (Some(&a.alias), scan),
            other => return Err(unsupported(other.display().to_string().as_str())),
        },
        other => return Err(unsupported(other.display().to_string().as_str())),
    };
    Ok(Parts {
        values,
        condition,
        alias,
        scan,
    })
}

/// Plan the statement `dml` (a `DELETE`/`UPDATE` of `provider`'s table with a correlated
/// subquery) as described in the module docs.
///
/// Errors: as [`super::plan_delete`]; a statement of another shape (see [`parts`]);
/// planning errors of the query (DataFusion's, e.g. a subquery it cannot decorrelate).
pub(crate) async fn plan_correlated(
    provider: &IcebergTableProvider,
    state: &dyn Session,
    dml: &DmlStatement,
) -> Result<Arc<dyn ExecutionPlan>> {
    let (statement, mode_key, level_key) = match dml.op {
        WriteOp::Update => ("UPDATE", UPDATE_MODE, UPDATE_ISOLATION_LEVEL),
        _ => ("DELETE", DELETE_MODE, DELETE_ISOLATION_LEVEL),
    };
    let (target, session) = writable(provider, state, statement)?;
    let ident = target.ident.to_string();
    let parts = parts(dml.input.as_ref(), &dml.op, &ident)?;
    let table_schema = provider.arrow_schema();
    let n = table_schema.fields().len();
    let props = &provider.table().metadata().properties;
    let mode = RowLevelMode::from_properties(props, mode_key)?;
    let level = isolation(props, level_key)?;

    // The conjuncts on the target's columns alone choose the files read; they are the
    // conflict detection filter too.
    let scan_schema = parts.scan.projected_schema.as_ref();
    let target_schema = match parts.alias {
        Some(alias) => DFSchema::try_from_qualified_schema(alias.clone(), scan_schema.as_arrow())?,
        None => scan_schema.clone(),
    };
    let filters = match parts.condition {
        Some(condition) => merge::target_conjuncts(condition, &target_schema, n),
        None => vec![],
    };
    let (mut job, planned) = new_job(
        provider,
        target,
        session,
        (mode, level),
        &filters,
        statement,
    )
    .await?;
    let row_level = provider.row_level_exec(state, planned.clone(), &filters)?;
    job.set_plan(planned);

    // The query: the row-level scan in the target's place (same name, alias and
    // columns, then the row's file, position and lineage), the statement's filter, and
    // the columns laid out as `MergeActions` reads them.
    let names: Vec<String> = row_level
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let lineage = row_level.schema().index_of(ROW_ID_COLUMN).ok() == Some(n + 2);
    let source = provider_as_source(Arc::new(PlanTable::new(row_level, &names)?));
    let mut builder = LogicalPlanBuilder::scan(parts.scan.table_name.clone(), source, None)?;
    let qualifier = match parts.alias {
        Some(alias) => {
            builder = builder.alias(alias.clone())?;
            alias.clone()
        }
        None => parts.scan.table_name.clone(),
    };
    if let Some(condition) = parts.condition {
        builder = builder.filter(condition.clone())?;
    }
    let mut exprs: Vec<Expr> = names
        .iter()
        .map(|name| Expr::Column(Column::new(Some(qualifier.clone()), name)))
        .collect();
    let mut assigned = vec![];
    if let Some(values) = parts.values {
        for (i, (value, field)) in values.iter().zip(table_schema.fields()).enumerate() {
            let value = value.clone().unalias();
            // a column the statement leaves as it is
            if matches!(&value, Expr::Column(c) if c.name == *field.name()) {
                continue;
            }
            let name = format!("{SET_PREFIX}{i}");
            exprs.push(value.alias(name.as_str()));
            assigned.push((i, name));
        }
    }
    exprs.push(lit(true).alias(SOURCE_PRESENT));
    let query = builder.project(exprs)?.build()?;
    let query_schema = Arc::clone(query.schema());
    let plan = session.create_physical_plan(&query).await.map_err(|e| {
        Error::from(e).context(format!(
            "{statement} of '{ident}': planning its correlated subquery as a query (DataFusion \
             55 plans some correlated subqueries in no query, a SELECT included: e.g. an \
             aggregate correlated by an inequality, a scalar subquery that is not \
             aggregated, an EXISTS inside a SET value)"
        ))
    })?;
    let mut update = vec![];
    for (i, name) in assigned {
        update.push((
            i,
            session.create_physical_expr(col(name.as_str()), &query_schema)?,
        ));
    }
    debug_assert_eq!(query_schema.field(n).name(), FILE_COLUMN);
    let actions = merge::matched_rows_actions(
        parts.values.map(|_| update),
        n,
        query_schema.fields().len() - 1,
        table_schema,
        lineage,
    );
    job.set_operation(RowLevelOp::Merge(actions), None);
    Ok(Arc::new(IcebergRowLevelExec::new(plan, Arc::new(job))))
}
