//! Views over Iceberg tables that read the tables as they are when the view is queried,
//! as Spark's views do (a view is its query, resolved again at each use).
//!
//! DataFusion's `CREATE VIEW` keeps the plan it made: its table scans hold the table
//! providers resolved then, and an Iceberg provider reads the snapshot it was made at,
//! so a view of `ns.t` kept showing `ns.t` as it was when the view was created, even
//! after the session itself wrote to it. A [`FreshView`] keeps the same plan, but each
//! time it is scanned it resolves every Iceberg table of the plan (subqueries too) again
//! by the name the plan gives it, through the session's catalogs, and plans that. A
//! table named at a snapshot, tag or branch (`ns."t@v1"`) resolves to the same version;
//! a table that lost a column the view reads, or whose columns the view no longer
//! matches, is an error naming the view. A column dropped and added again under its name
//! and type is read by name (the new column), under the field id the view was made with.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::metadata::FieldMetadata;
use datafusion::common::tree_node::{Transformed, TreeNodeRecursion};
use datafusion::common::{Column, DataFusionError, Result as DFResult, TableReference};
use datafusion::datasource::{provider_as_source, source_as_provider, TableProvider, TableType};
use datafusion::execution::SessionState;
use datafusion::logical_expr::{
    Expr, LogicalPlan, LogicalPlanBuilder, TableProviderFilterPushDown, TableScan, TableScanBuilder,
};
use datafusion::physical_plan::ExecutionPlan;

use super::read_only::ReadOnlyTable;
use super::table_provider::IcebergTableProvider;

/// A view whose Iceberg tables are resolved again at every scan; see the module docs.
#[derive(Debug)]
pub struct FreshView {
    /// What errors name: `view v`, or `prepared statement q`.
    name: String,
    /// What errors ask the user to do when the tables changed too much.
    again: &'static str,
    /// When its plan was made, for errors: `created` (a view) or `prepared`.
    made: &'static str,
    plan: LogicalPlan,
    definition: Option<String>,
    schema: SchemaRef,
    /// A prepared query that selects `*`: its column list was expanded when it was
    /// prepared, so a column added to a table it reads since is refused, not left out.
    star: bool,
}

impl FreshView {
    /// The view `name` of `plan` (as `CREATE VIEW` planned it; `definition`: its SQL).
    pub fn new(name: String, plan: LogicalPlan, definition: Option<String>) -> Self {
        let schema = Arc::clone(plan.schema().inner());
        Self {
            name: format!("view {name}"),
            again: "create the view again",
            made: "created",
            plan,
            definition,
            schema,
            star: false,
        }
    }

    /// The Iceberg table `scan` reads, as a source resolved again at every scan: what
    /// `PREPARE name AS …` keeps in its plan in place of the table's provider, so each
    /// `EXECUTE name` reads the table as it is then. `statement`: the prepared statement's
    /// name, for errors. Filters and limits of `scan` stay on the scan. `star`: the
    /// prepared query selects `*` (or `t.*`) somewhere; a column added to the table since
    /// is then an error asking to prepare it again, as a dropped or retyped one is (the
    /// `*` was expanded to the columns of the PREPARE; Spark resolves a statement's `*`
    /// when it runs, which a kept plan cannot).
    pub fn for_prepared(statement: &str, scan: &TableScan, star: bool) -> DFResult<Self> {
        let whole =
            TableScanBuilder::new(scan.table_name.clone(), Arc::clone(&scan.source)).build()?;
        let plan = LogicalPlan::TableScan(whole);
        let schema = Arc::clone(plan.schema().inner());
        Ok(Self {
            name: format!("prepared statement {statement}"),
            again: "prepare it again",
            made: "prepared",
            plan,
            definition: None,
            schema,
            star,
        })
    }

    /// Whether `plan` reads an Iceberg table (in a subquery too): only such views need
    /// resolving again.
    pub fn reads_iceberg(plan: &LogicalPlan) -> bool {
        let mut found = false;
        let _ = plan.apply_with_subqueries(|node| {
            if let LogicalPlan::TableScan(scan) = node {
                if is_iceberg(scan) {
                    found = true;
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
            Ok(TreeNodeRecursion::Continue)
        });
        found
    }

    /// The view's plan with every Iceberg table resolved again in `state`.
    async fn refreshed(&self, state: &SessionState) -> DFResult<LogicalPlan> {
        let mut names: Vec<TableReference> = vec![];
        self.plan.apply_with_subqueries(|node| {
            if let LogicalPlan::TableScan(scan) = node {
                if is_iceberg(scan) && !names.contains(&scan.table_name) {
                    names.push(scan.table_name.clone());
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        let mut fresh: HashMap<TableReference, Arc<dyn TableProvider>> = HashMap::new();
        for name in names {
            let defaults = &state.config_options().catalog;
            let resolved = name
                .clone()
                .resolve(&defaults.default_catalog, &defaults.default_schema);
            let table = match state.catalog_list().catalog(&resolved.catalog) {
                Some(catalog) => match catalog.schema(&resolved.schema) {
                    Some(schema) => schema.table(&resolved.table).await?,
                    None => None,
                },
                None => None,
            };
            let table = table.ok_or_else(|| {
                DataFusionError::Plan(format!("{}: table {name} no longer exists", self.name))
            })?;
            if self.star {
                self.check_no_added_columns(&name, &table)?;
            }
            fresh.insert(name, table);
        }
        let (view, again) = (&self.name, self.again);
        let plan = self
            .plan
            .clone()
            .transform_up_with_subqueries(|node| match node {
                LogicalPlan::TableScan(scan) if fresh.contains_key(&scan.table_name) => {
                    let table = Arc::clone(&fresh[&scan.table_name]);
                    Ok(Transformed::yes(LogicalPlan::TableScan(rescan(
                        view, again, scan, table,
                    )?)))
                }
                other => Ok(Transformed::yes(other.recompute_schema()?)),
            })?
            .data;
        let same = plan.schema().fields().len() == self.schema.fields().len()
            && plan
                .schema()
                .fields()
                .iter()
                .zip(self.schema.fields())
                .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
        if !same {
            let columns = |fields: &datafusion::arrow::datatypes::Fields| {
                fields
                    .iter()
                    .map(|f| format!("{} {}", f.name(), f.data_type()))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(DataFusionError::Plan(format!(
                "{view}: the columns of the tables it reads changed since it was {} \
                 (now ({}), then ({})); {again}",
                self.made,
                columns(plan.schema().as_arrow().fields()),
                columns(self.schema.fields())
            )));
        }
        self.with_made_field_ids(plan)
    }

    /// `plan` (the view's plan over its tables now, of the view's column names and types)
    /// with each column carrying the metadata it had when the view was made: a column of
    /// a table dropped and added again under its name and type (`ALTER TABLE … DROP
    /// COLUMN v`, `ADD COLUMN v`) has another Iceberg field id, which DataFusion's
    /// physical planner refused under a query of the view that aggregates it ("Internal
    /// error: Physical input schema should be the same as the one converted from logical
    /// input schema", the query planned with the view's schema). The view reads its
    /// columns by name, as Spark's views are resolved again at each use, so its `v` is
    /// the new column (nulls for rows written before it), as the table queried directly
    /// gives. `plan` as it is when no column's metadata changed.
    ///
    /// Errors: DataFusion's, building the projection.
    fn with_made_field_ids(&self, plan: LogicalPlan) -> DFResult<LogicalPlan> {
        let made = self.schema.fields();
        let same = plan
            .schema()
            .fields()
            .iter()
            .zip(made)
            .all(|(now, then)| now.metadata() == then.metadata());
        if same {
            return Ok(plan);
        }
        let columns: Vec<Expr> = plan
            .schema()
            .iter()
            .zip(made)
            .map(|((qualifier, now), then)| {
                Expr::Column(Column::new(qualifier.cloned(), now.name()))
                    .alias_qualified_with_metadata(
                        qualifier.cloned(),
                        now.name(),
                        Some(FieldMetadata::new_from_field(then)),
                    )
            })
            .collect();
        LogicalPlanBuilder::from(plan).project(columns)?.build()
    }
}

impl FreshView {
    /// For a prepared `SELECT *` (one table scan, its whole table): fail when `table`
    /// (the table `name` now) has columns the table had not when it was prepared.
    fn check_no_added_columns(
        &self,
        name: &TableReference,
        table: &Arc<dyn TableProvider>,
    ) -> DFResult<()> {
        let added: Vec<String> = table
            .schema()
            .fields()
            .iter()
            .filter(|f| self.schema.field_with_name(f.name()).is_err())
            .map(|f| f.name().clone())
            .collect();
        if added.is_empty() {
            return Ok(());
        }
        Err(DataFusionError::Plan(format!(
            "{}: {name} has columns added since it was prepared ({}), which its `*` \
             does not list; {}",
            self.name,
            added.join(", "),
            self.again
        )))
    }
}

/// Whether `scan` reads an Iceberg table's provider or one of its metadata tables
/// (`t$snapshots`, `t$files`, …: a [`ReadOnlyTable`] built when the name was resolved).
pub(crate) fn is_iceberg(scan: &TableScan) -> bool {
    source_as_provider(&scan.source).ok().is_some_and(|p| {
        p.downcast_ref::<IcebergTableProvider>().is_some()
            || p.downcast_ref::<ReadOnlyTable>().is_some()
    })
}

/// `scan` reading `table` instead, the same columns by name.
fn rescan(
    view: &str,
    again: &str,
    scan: TableScan,
    table: Arc<dyn TableProvider>,
) -> DFResult<TableScan> {
    let old = scan.source.schema();
    let new = table.schema();
    let projection = Some(match &scan.projection {
        None => (0..old.fields().len()).collect::<Vec<_>>(),
        Some(p) => p.clone(),
    })
    .map(|indices| {
        indices
            .iter()
            .map(|&i| {
                let name = old.field(i).name();
                new.index_of(name).map_err(|_| {
                    DataFusionError::Plan(format!(
                        "{view}: column '{name}' of {} no longer exists; {again}",
                        scan.table_name
                    ))
                })
            })
            .collect::<DFResult<Vec<_>>>()
    })
    .transpose()?;
    TableScanBuilder::new(scan.table_name, provider_as_source(table))
        .with_projection(projection)
        .with_filters(scan.filters)
        .with_fetch(scan.fetch)
        .build()
}

#[async_trait]
impl TableProvider for FreshView {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    fn get_table_definition(&self) -> Option<&str> {
        self.definition.as_deref()
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DFResult<Vec<TableProviderFilterPushDown>> {
        // applied above the view's plan, as DataFusion's views do
        Ok(vec![TableProviderFilterPushDown::Exact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let session = state
            .as_any()
            .downcast_ref::<SessionState>()
            .ok_or_else(|| {
                DataFusionError::NotImplemented(format!(
                    "{} planned outside a DataFusion SessionState",
                    self.name
                ))
            })?;
        let plan = self.refreshed(session).await?;
        // as DataFusion's views: filters, then the columns asked for (none for a
        // `count(*)`), unless they are all of them in order
        let columns: Option<Vec<Expr>> = projection
            .filter(|p| !p.iter().copied().eq(0..plan.schema().fields().len()))
            .map(|p| {
                p.iter()
                    .map(|i| Expr::Column(Column::from(plan.schema().qualified_field(*i))))
                    .collect()
            });
        let mut builder = LogicalPlanBuilder::from(plan);
        if let Some(filter) = filters.iter().cloned().reduce(|a, b| a.and(b)) {
            builder = builder.filter(filter)?;
        }
        if let Some(columns) = columns {
            builder = builder.project(columns)?;
        }
        if let Some(limit) = limit {
            builder = builder.limit(0, Some(limit))?;
        }
        state.create_physical_plan(&builder.build()?).await
    }
}
