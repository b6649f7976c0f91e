//! `MERGE INTO t USING s ON … WHEN …`: planning and the per-row semantics.
//!
//! The target's rows (with their data file and position) are joined with the source on
//! the `ON` condition — an outer join on the side(s) whose unmatched rows a clause acts
//! on — by DataFusion's own join. Each joined row then takes the first `WHEN` clause of
//! its kind (`MATCHED`, `NOT MATCHED [BY TARGET]`, `NOT MATCHED BY SOURCE`) whose `AND`
//! condition is true, as the SQL standard and Spark do; a clause's condition and values
//! are computed only for the rows it may take (of its kind, not taken by an earlier
//! clause), so an expression that fails on other rows (`10 / t.k` where an earlier
//! clause took the `t.k = 0` rows) does not fail the statement:
//! - `UPDATE SET …`: the target row is deleted (by position) and its new version
//!   written (unassigned columns keep the target's values);
//! - `DELETE`: the target row is deleted;
//! - `INSERT [(cols)] VALUES (…)`: a new row (unlisted columns take their v3
//!   `write-default`, else NULL).
//!
//! A target row matched by more than one source row is an error when the statement has
//! a `MATCHED` clause (Spark: "matched a single row from the target table with multiple
//! rows of the source table"), and nothing is committed — except when the only
//! `MATCHED` clause is an unconditional `DELETE`, which deletes the row whichever source
//! rows match it (Spark `RewriteMergeIntoTable.shouldCheckCardinality`). The result
//! `count` is the rows updated, deleted and inserted (a target row deleted once
//! however many source rows match it).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{new_null_array, Array, ArrayRef, BooleanArray, RecordBatch};
use datafusion::arrow::compute::kernels::boolean::{and, and_not, or};
use datafusion::arrow::compute::{cast, filter_record_batch, CastOptions};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::common::{Column, DFSchema, DFSchemaRef, Result as DFResult, ScalarValue};
use datafusion::datasource::{provider_as_source, TableProvider, TableType};
use datafusion::logical_expr::dml::{MergeIntoAction, MergeIntoClause, MergeIntoClauseKind};
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{lit, Expr, JoinType, LogicalPlanBuilder};
use datafusion::physical_expr::expressions::Column as PhysicalColumn;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};

use super::required::table_rows;
use crate::datafusion::metadata_columns::append_lineage;
use crate::datafusion::struct_fields::check_assignment;
use crate::datafusion::table_provider::{FILE_COLUMN, POS_COLUMN, ROW_ID_COLUMN};
use crate::error::{Error, Result};
use crate::time_narrowing::cast_flooring;

/// The name of the joined rows' source-presence column.
pub(super) const SOURCE_PRESENT: &str = "__icefloe_source_present";

/// One `WHEN` clause, its expressions planned against the joined rows.
#[derive(Debug)]
pub(crate) struct MergeClause {
    kind: MergeIntoClauseKind,
    predicate: Option<Arc<dyn PhysicalExpr>>,
    action: MergeAction,
}

#[derive(Debug)]
enum MergeAction {
    /// Target column index → value.
    Update(Vec<(usize, Arc<dyn PhysicalExpr>)>),
    Delete,
    /// Target column index → value (columns not listed are NULL; their write-defaults
    /// are listed).
    Insert(Vec<(usize, Arc<dyn PhysicalExpr>)>),
}

/// The clauses of one `MERGE`, over joined rows laid out as: the target's columns, its
/// file and position columns (on v3 tables then its `_row_id` and
/// `_last_updated_sequence_number`), the source's columns, then the source-presence
/// column.
#[derive(Debug)]
pub(crate) struct MergeActions {
    clauses: Vec<MergeClause>,
    target_columns: usize,
    source_present: usize,
    target_schema: SchemaRef,
    check_cardinality: bool,
    /// v3: new rows carry the stored lineage columns after the table's (spec: "Row
    /// Lineage": an updated row keeps its `_row_id` with a null
    /// `_last_updated_sequence_number`; an inserted row has both null).
    lineage: bool,
    /// What the updated rows' errors name as their clause (`MERGE UPDATE`, or `UPDATE
    /// SET` for an `UPDATE` planned as a query).
    update_clause: &'static str,
}

/// What one joined batch does to the table.
pub(crate) struct MergeOutcome {
    /// Target rows deleted or updated (indices into the batch).
    pub removed: BooleanArray,
    /// New rows (the table's columns, on v3 then the stored lineage columns): updated
    /// versions and inserts.
    pub new_rows: Vec<RecordBatch>,
    /// Rows updated, deleted or inserted.
    pub count: u64,
    /// Target rows that matched a source row (for the cardinality check).
    pub matched: BooleanArray,
}

impl MergeActions {
    /// Whether a target row matched twice is an error.
    pub(crate) fn check_cardinality(&self) -> bool {
        self.check_cardinality
    }

    /// Apply the clauses to one joined batch.
    pub(crate) fn apply(&self, batch: &RecordBatch) -> Result<MergeOutcome> {
        let rows = batch.num_rows();
        let target = present(batch.column(self.target_columns).as_ref());
        let source = present(batch.column(self.source_present).as_ref());
        let matched = and(&target, &source)?;
        let by_target = and_not(&source, &target)?;
        let by_source = and_not(&target, &source)?;
        let mut handled = BooleanArray::from(vec![false; rows]);
        let mut removed = BooleanArray::from(vec![false; rows]);
        let (mut new_rows, mut count) = (vec![], 0u64);
        for clause in &self.clauses {
            let kind = match clause.kind {
                MergeIntoClauseKind::Matched => &matched,
                MergeIntoClauseKind::NotMatchedBySource => &by_source,
                _ => &by_target,
            };
            let mut applies = and_not(kind, &handled)?;
            if !applies.has_true() {
                continue;
            }
            if let Some(p) = &clause.predicate {
                // evaluated on the rows still open to this clause only, as Spark evaluates
                // a clause's condition only for rows no earlier clause took: `WHEN MATCHED
                // AND t.k = 0 THEN DELETE WHEN MATCHED AND 10 / t.k > 3 …` must not divide
                // by the deleted rows' zero (the rows it skips read as NULL, not true)
                let value = p.evaluate_selection(batch, &applies)?.into_array(rows)?;
                let value = cast(&value, &datafusion::arrow::datatypes::DataType::Boolean)?;
                let value = datafusion::arrow::array::AsArray::as_boolean(&value);
                // NULL is not true
                let truthy: BooleanArray = value.iter().map(|v| Some(v == Some(true))).collect();
                applies = and(&applies, &truthy)?;
            }
            let n = applies.true_count();
            if n == 0 {
                continue;
            }
            handled = or(&handled, &applies)?;
            count += n as u64;
            let selected = filter_record_batch(batch, &applies)?;
            match &clause.action {
                MergeAction::Delete => removed = or(&removed, &applies)?,
                MergeAction::Update(assignments) => {
                    removed = or(&removed, &applies)?;
                    let mut columns: Vec<ArrayRef> =
                        selected.columns()[..self.target_columns].to_vec();
                    for (index, expr) in assignments {
                        columns[*index] = self.value(expr, &selected, *index)?;
                    }
                    let rows = table_rows(&self.target_schema, columns, self.update_clause)?;
                    new_rows.push(if self.lineage {
                        // the target's `_row_id`, after its file and position columns
                        let row_id = Arc::clone(selected.column(self.target_columns + 2));
                        append_lineage(&rows, row_id, new_null_array(&DataType::Int64, n))?
                    } else {
                        rows
                    });
                }
                MergeAction::Insert(values) => {
                    let mut columns: Vec<ArrayRef> = self
                        .target_schema
                        .fields()
                        .iter()
                        .map(|f| new_null_array(f.data_type(), n))
                        .collect();
                    for (index, expr) in values {
                        columns[*index] = self.value(expr, &selected, *index)?;
                    }
                    let rows = table_rows(&self.target_schema, columns, "MERGE INSERT")?;
                    new_rows.push(if self.lineage {
                        let none = new_null_array(&DataType::Int64, n);
                        append_lineage(&rows, Arc::clone(&none), none)?
                    } else {
                        rows
                    });
                }
            }
        }
        Ok(MergeOutcome {
            removed,
            new_rows,
            count,
            matched,
        })
    }

    fn value(
        &self,
        expr: &Arc<dyn PhysicalExpr>,
        batch: &RecordBatch,
        index: usize,
    ) -> Result<ArrayRef> {
        let field = self.target_schema.field(index);
        let value = expr
            .evaluate(batch)
            .and_then(|v| v.into_array(batch.num_rows()))
            .map_err(|e| {
                Error::from(e).context(format!("computing the value of column '{}'", field.name()))
            })?;
        cast_flooring(&value, field.data_type(), &CastOptions::default()).map_err(|e| {
            Error::invalid_argument(format!(
                "cannot set column '{}' of type {} to a value of type {}",
                field.name(),
                field.data_type(),
                value.data_type()
            ))
            .with_source(e)
        })
    }
}

/// Which rows of `column` are not null, in a fresh buffer (bit offset 0). arrow 59.3.2's
/// `and_not` of two boolean arrays with different bit offsets reads the right one at the
/// left one's offset and panics ("offset + len out of bounds" / "buffer not large
/// enough"); an outer join's output has such null buffers (seen at TPC-H SF1).
fn present(column: &dyn Array) -> BooleanArray {
    match column.logical_nulls() {
        None => BooleanArray::from(vec![true; column.len()]),
        Some(nulls) => nulls.iter().map(Some).collect(),
    }
}

/// A table whose scan is a given plan (the target's row-level scan, or the source), so
/// that DataFusion can plan the join between them.
#[derive(Debug)]
pub(super) struct PlanTable {
    plan: Arc<dyn ExecutionPlan>,
    schema: SchemaRef,
}

impl PlanTable {
    /// `plan` with its columns renamed to `names` (unique), same order.
    pub(super) fn new(plan: Arc<dyn ExecutionPlan>, names: &[String]) -> Result<Self> {
        let fields: Vec<Field> = plan
            .schema()
            .fields()
            .iter()
            .zip(names)
            .map(|(f, n)| f.as_ref().clone().with_name(n))
            .collect();
        Ok(Self {
            plan,
            schema: Arc::new(ArrowSchema::new(fields)),
        })
    }
}

#[async_trait]
impl TableProvider for PlanTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let all: Vec<usize> = (0..self.schema.fields().len()).collect();
        let input_schema = self.plan.schema();
        // columns by index, renamed to this table's names
        let exprs: Vec<(Arc<dyn PhysicalExpr>, String)> = projection
            .unwrap_or(&all)
            .iter()
            .map(|i| {
                let original = input_schema.field(*i).name();
                let col: Arc<dyn PhysicalExpr> = Arc::new(PhysicalColumn::new(original, *i));
                (col, self.schema.field(*i).name().clone())
            })
            .collect();
        Ok(Arc::new(ProjectionExec::try_new(
            exprs,
            Arc::clone(&self.plan),
        )?))
    }
}

/// `clauses` with each `INSERT (cols) VALUES (…)` also listing the columns it leaves
/// out that have a v3 `write-default` (`write_defaults`: column name → literal), with
/// that value (spec "Default values").
pub(crate) fn with_write_defaults(
    clauses: Vec<MergeIntoClause>,
    target_schema: &SchemaRef,
    write_defaults: &HashMap<String, Expr>,
) -> Vec<MergeIntoClause> {
    clauses
        .into_iter()
        .map(|mut clause| {
            if let MergeIntoAction::Insert { columns, values } = &mut clause.action {
                // no column list: every column is given
                if !columns.is_empty() {
                    for field in target_schema.fields() {
                        let listed = columns.iter().any(|c| c == field.name());
                        if let (false, Some(default)) = (listed, write_defaults.get(field.name())) {
                            columns.push(field.name().clone());
                            values.push(default.clone());
                        }
                    }
                }
            }
            clause
        })
        .collect()
}

/// The conjuncts of a `MERGE`'s `on` condition that read target columns alone (the first
/// `columns` fields of `merge_schema`), with the columns unqualified, as filters on the
/// target table: a target row for which one of them is not true matches no source row.
/// Conjuncts reading a source column, none at all, a volatile function or a subquery are
/// left out.
pub(crate) fn target_conjuncts(on: &Expr, merge_schema: &DFSchema, columns: usize) -> Vec<Expr> {
    split_conjunction(on)
        .into_iter()
        .filter(|conjunct| {
            let refs = conjunct.column_refs();
            !refs.is_empty()
                && !conjunct.is_volatile()
                && !conjunct
                    .exists(|e| {
                        Ok(matches!(
                            e,
                            Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_)
                        ))
                    })
                    .unwrap_or(true)
                && refs
                    .iter()
                    .all(|c| merge_schema.index_of_column(c).is_ok_and(|i| i < columns))
        })
        .filter_map(|conjunct| {
            conjunct
                .clone()
                .transform(|e| {
                    Ok(match e {
                        Expr::Column(c) => {
                            Transformed::yes(Expr::Column(Column::new_unqualified(c.name)))
                        }
                        other => Transformed::no(other),
                    })
                })
                .data()
                .ok()
        })
        .collect()
}

/// Plan the join of the target's row-level `scan` (table columns, file, position; a v3
/// table's then `_row_id` and `_last_updated_sequence_number`; then the metadata columns
/// the statement reads of the target, if any) with `source` for `clauses`, and the
/// clauses over its rows. `target_schema` is the table's columns, `target_width` the
/// number of target fields before the source's in `merge_schema` (the table's columns
/// and those metadata columns). Returns the joined plan (rows laid out as
/// [`MergeActions`] describes) and the actions.
///
/// Errors: an `UPDATE`/`INSERT` of a column the table does not have; expressions that
/// cannot be planned.
pub(crate) async fn plan_merge(
    state: &datafusion::execution::SessionState,
    scan: Arc<dyn ExecutionPlan>,
    source: Arc<dyn ExecutionPlan>,
    merge_schema: &DFSchemaRef,
    on: Expr,
    clauses: Vec<MergeIntoClause>,
    (target_schema, target_width, struct_defaults): (
        &SchemaRef,
        usize,
        &HashMap<String, ScalarValue>,
    ),
) -> Result<(Arc<dyn ExecutionPlan>, MergeActions)> {
    let n = target_schema.fields().len();
    // a v3 table's row-level scan has the row's lineage after its file and position
    let lineage = scan.schema().index_of(ROW_ID_COLUMN).ok() == Some(n + 2);
    let target_qualifier =
        merge_schema.qualified_field(0).0.cloned().ok_or_else(|| {
            Error::invalid_argument("MERGE: the target's columns have no table name")
        })?;
    // the target: its columns under its own names, then file and position
    let target_names: Vec<String> = scan
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let target_table = PlanTable::new(scan, &target_names)?;
    // the source: unique names, aliased back to their qualified names after the scan
    let source_count = source.schema().fields().len();
    let source_names: Vec<String> = (0..source_count)
        .map(|i| format!("__icefloe_source_{i}"))
        .collect();
    let source_table = PlanTable::new(source, &source_names)?;
    let mut source_exprs: Vec<Expr> = vec![];
    for (i, name) in source_names.iter().enumerate() {
        let (qualifier, field) = merge_schema.qualified_field(target_width + i);
        source_exprs.push(
            Expr::Column(Column::new_unqualified(name.clone()))
                .alias_qualified(qualifier.cloned(), field.name()),
        );
    }
    source_exprs.push(lit(true).alias(SOURCE_PRESENT));
    let source_plan = LogicalPlanBuilder::scan(
        "__icefloe_merge_source",
        provider_as_source(Arc::new(source_table)),
        None,
    )?
    .project(source_exprs)?
    .build()?;
    let by_source = clauses
        .iter()
        .any(|c| c.kind == MergeIntoClauseKind::NotMatchedBySource);
    let by_target = clauses.iter().any(|c| c.kind.is_not_matched_by_target());
    let join_type = match (by_source, by_target) {
        (true, true) => JoinType::Full,
        (true, false) => JoinType::Left,
        (false, true) => JoinType::Right,
        (false, false) => JoinType::Inner,
    };
    let joined = LogicalPlanBuilder::scan(
        target_qualifier.clone(),
        provider_as_source(Arc::new(target_table)),
        None,
    )?
    .join_on(source_plan, join_type, vec![on])?
    .build()?;
    // the joined schema: target columns, file, position, source columns, presence
    let joined_schema: DFSchema = joined.schema().as_ref().clone();
    // DataFusion's own planner, not the session's query planner: the join runs where the
    // statement does, under `IcebergRowLevelExec`, which reads every partition of it. A
    // distributed session's planner (datafusion-distributed's) would make the join a
    // `DistributedExec`, which runs its partition 0 only, and a source of more than one
    // partition failed the MERGE. The joined plan holds no extension node for another
    // planner to plan: two scans of given plans, a join and a projection.
    let optimized = state.optimize(&joined)?;
    let plan = DefaultPhysicalPlanner::default()
        .create_physical_plan(&optimized, state)
        .await?;
    let check_cardinality = checks_cardinality(&clauses);
    let column_index = |name: &str| -> Result<usize> {
        target_schema.index_of(name).map_err(|_| {
            let columns = target_schema.fields().iter().map(|f| f.name().as_str());
            let e =
                Error::invalid_argument(format!("MERGE: the target table has no column '{name}'"));
            match crate::column_case::other_case_note(name, columns) {
                Some(note) => e.with_note(note),
                None => e,
            }
        })
    };
    let mut planned = vec![];
    for clause in clauses {
        let predicate = match clause.predicate {
            Some(p) => Some(state.create_physical_expr(p, &joined_schema)?),
            None => None,
        };
        let action = match clause.action {
            MergeIntoAction::Delete => MergeAction::Delete,
            MergeIntoAction::Update(assignments) => {
                let mut out = vec![];
                for (column, expr) in assignments {
                    // DataFusion names the column alone (a quoted `"a.b"` is one name)
                    let index = column_index(&column)?;
                    let expected = target_schema.field(index).data_type();
                    let expr = check_assignment(
                        "MERGE",
                        (&column, expected, struct_defaults.get(column.as_str())),
                        expr,
                        &joined_schema,
                    )?;
                    // planning folds a constant value (a scalar subquery's, run before)
                    // into the column's type: a value that does not fit fails here
                    let expr = state
                        .create_physical_expr(expr, &joined_schema)
                        .map_err(|e| value_error(e, "UPDATE SET", &column))?;
                    out.push((index, expr));
                }
                MergeAction::Update(out)
            }
            MergeIntoAction::Insert { columns, values } => {
                let columns: Vec<String> = if columns.is_empty() {
                    target_schema
                        .fields()
                        .iter()
                        .map(|f| f.name().clone())
                        .collect()
                } else {
                    columns
                };
                if columns.len() != values.len() {
                    return Err(Error::invalid_argument(format!(
                        "MERGE: INSERT of {} columns with {} values",
                        columns.len(),
                        values.len()
                    )));
                }
                let mut out = vec![];
                for (column, expr) in columns.iter().zip(values) {
                    let index = column_index(column)?;
                    let expected = target_schema.field(index).data_type();
                    let expr = check_assignment(
                        "MERGE",
                        (column, expected, struct_defaults.get(column.as_str())),
                        expr,
                        &joined_schema,
                    )?;
                    let expr = state
                        .create_physical_expr(expr, &joined_schema)
                        .map_err(|e| value_error(e, "INSERT", column))?;
                    out.push((index, expr));
                }
                MergeAction::Insert(out)
            }
        };
        planned.push(MergeClause {
            kind: clause.kind,
            predicate,
            action,
        });
    }
    let source_present = joined_schema
        .index_of_column(&Column::new_unqualified(SOURCE_PRESENT))
        .map_err(|e| {
            Error::invalid_data("MERGE: joined rows lost the source marker").with_source(e)
        })?;
    debug_assert_eq!(joined_schema.field(n).name(), FILE_COLUMN);
    debug_assert_eq!(joined_schema.field(n + 1).name(), POS_COLUMN);
    Ok((
        plan,
        MergeActions {
            clauses: planned,
            target_columns: n,
            source_present,
            target_schema: Arc::clone(target_schema),
            check_cardinality,
            lineage,
            update_clause: "MERGE UPDATE",
        },
    ))
}

/// The actions of a `DELETE`/`UPDATE` planned as a query whose every row is a target row
/// to change (module `correlated`), laid out as [`MergeActions`] reads joined rows: the
/// target's `target_columns` columns, its file, position and (`lineage`) row lineage
/// columns, the new values, and at `source_present` the presence column. Each row is
/// deleted, or with `update` (table column index → value) deleted and written again with
/// those columns set. A row met twice is an error.
pub(crate) fn matched_rows_actions(
    update: Option<Vec<(usize, Arc<dyn PhysicalExpr>)>>,
    target_columns: usize,
    source_present: usize,
    target_schema: &SchemaRef,
    lineage: bool,
) -> MergeActions {
    let action = match update {
        Some(assignments) => MergeAction::Update(assignments),
        None => MergeAction::Delete,
    };
    MergeActions {
        clauses: vec![MergeClause {
            kind: MergeIntoClauseKind::Matched,
            predicate: None,
            action,
        }],
        target_columns,
        source_present,
        target_schema: Arc::clone(target_schema),
        check_cardinality: true,
        lineage,
        update_clause: "UPDATE SET",
    }
}

/// Whether a target row matched by several source rows is an error: when the statement
/// has a `MATCHED` clause, unless its only one is an unconditional `DELETE` (Spark
/// `RewriteMergeIntoTable.shouldCheckCardinality`: the row is deleted however often it
/// matches).
fn checks_cardinality(clauses: &[MergeIntoClause]) -> bool {
    let matched: Vec<&MergeIntoClause> = clauses
        .iter()
        .filter(|c| c.kind == MergeIntoClauseKind::Matched)
        .collect();
    match matched.as_slice() {
        [] => false,
        [only] => !(only.predicate.is_none() && matches!(only.action, MergeIntoAction::Delete)),
        _ => true,
    }
}

/// The error of planning the value of target column `column` in a `MERGE` clause
/// (`clause`: `UPDATE SET` or `INSERT`), naming the column as the error of computing it
/// per row does: DataFusion folds a constant value (an uncorrelated scalar subquery's,
/// run before) into the column's type when it plans it, and a value that does not fit
/// failed naming only the table ("Can't cast value 3000000000 to type Int32").
fn value_error(e: datafusion::error::DataFusionError, clause: &str, column: &str) -> Error {
    Error::from(e).context(format!(
        "MERGE {clause}: computing the value of column '{column}'"
    ))
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{BooleanArray, StringArray};
    use datafusion::arrow::buffer::{BooleanBuffer, NullBuffer, OffsetBuffer};
    use datafusion::arrow::compute::kernels::boolean::and_not;

    use super::present;

    /// The shapes an SF1 outer join produced: a string column whose null buffer starts
    /// at bit 2588 of a 364-byte buffer, and a boolean column sliced at 2588.
    #[test]
    fn presence_masks_of_offset_null_buffers() {
        let bits: Vec<bool> = (0..2912).map(|i| i % 3 != 0).collect();
        let nulls = NullBuffer::new(BooleanBuffer::from(bits.clone()).slice(2588, 317));
        let target = StringArray::new(
            OffsetBuffer::from_lengths(vec![0; 317]),
            Vec::<u8>::new().into(),
            Some(nulls),
        );
        let source = BooleanArray::from(
            bits.iter()
                .map(|b| (!b).then_some(true))
                .collect::<Vec<_>>(),
        )
        .slice(2588, 317);
        let (t, s) = (present(&target), present(&source));
        let both = and_not(&t, &s).expect("and_not");
        for i in 0..317 {
            assert_eq!(t.value(i), bits[2588 + i], "target {i}");
            assert_eq!(s.value(i), !bits[2588 + i], "source {i}");
            // present in target and not in source: exactly the target's present rows
            assert_eq!(both.value(i), bits[2588 + i], "and_not {i}");
        }
    }
}
