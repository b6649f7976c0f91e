//! Hidden columns: what a scan adds after the table's columns for row-level changes,
//! metadata columns (`_file`, `_pos`, …, row lineage) and per-batch deletes, and the
//! projections that compute the metadata and lineage columns from them.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::catalog::Session;
use datafusion::common::DFSchema;
use datafusion::logical_expr::Expr;
use datafusion::parquet::arrow::RowNumber;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;

use crate::datafusion::delete_planning::DeletePlan;
use crate::datafusion::metadata_columns::{
    stored_lineage_fields, MetadataColumn, MetadataColumns, FIRST_ROW_ID_COLUMN, PARTITION_COLUMN,
    SEQUENCE_NUMBER_COLUMN, SPEC_ID_COLUMN, STORED_ROW_ID_COLUMN, STORED_SEQUENCE_NUMBER_COLUMN,
};
use crate::datafusion::metrics::{attach_counters, attach_scan_metrics, attach_table_name};
use crate::error::{Error, Result};
use crate::table::Table;

use super::IcebergTableProvider;

impl IcebergTableProvider {
    /// A scan of `files` (from [`Self::plan_row_level`]) for a row-level operation:
    /// every table column, then [`FILE_COLUMN`] (the row's data file location as
    /// stored) and [`POS_COLUMN`] (its 0-based ordinal in the file, as position deletes
    /// count), on v3 tables then [`ROW_ID_COLUMN`] and [`LAST_UPDATED_COLUMN`] (the
    /// row's lineage, stored or inherited; spec: "Row Lineage"), then, on a provider
    /// with metadata columns (a `DELETE`/`UPDATE`/`MERGE` naming them), those columns
    /// under their names (`_file`, `_pos`, …, valued as a query reads them), with the
    /// files' existing deletes applied. `prune_by` are filters used for row-group and
    /// page pruning (those on metadata columns are left out): rows not matching them
    /// may be left out, so only a scan that looks at the matching rows alone may pass
    /// any. The plan's pruning funnel and delete counts, when it has them (from
    /// [`Self::plan_row_level`]), are registered on the scan as a query's are, so
    /// `EXPLAIN ANALYZE` and the CLI's `--explain-pruning` show them.
    ///
    /// Errors: a filter that cannot be planned; an unusable file location.
    pub(crate) fn row_level_exec(
        &self,
        state: &dyn Session,
        files: DeletePlan,
        prune_by: &[Expr],
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let funnel = files.scan_metrics.clone();
        let deletes = files.metrics.counters();
        let exec = self.row_level_scan(state, files, prune_by)?;
        if let Some(funnel) = funnel {
            attach_counters(&exec, &deletes);
            attach_scan_metrics(&exec, &funnel);
            attach_table_name(&exec, &self.scan_name());
        }
        Ok(exec)
    }

    fn row_level_scan(
        &self,
        state: &dyn Session,
        files: DeletePlan,
        prune_by: &[Expr],
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // a filter on a metadata column prunes nothing here (the files hold no such column)
        let prune_by = &self.table_column_filters(prune_by);
        let v3 = self.table.metadata().format_version >= crate::spec::FormatVersion::V3;
        if !v3 && self.metadata_columns.is_none() {
            return self.build_scan(state, files, None, prune_by, None, Hidden::RowIds);
        }
        // v3: each row's `_row_id` and `_last_updated_sequence_number` too (as the
        // metadata columns compute them), after the file and position; a provider with
        // metadata columns (a `DELETE`/`UPDATE` naming them) then appends those
        let scan = self.build_scan(state, files, None, prune_by, None, Hidden::Metadata)?;
        let scan_schema = scan.schema();
        let df_schema = DFSchema::try_from(Arc::clone(&scan_schema))?;
        let hidden = |name: &str| Expr::Column(datafusion::common::Column::from_name(name));
        let n = self.arrow_schema.fields().len();
        let mut exprs: Vec<(Arc<dyn PhysicalExpr>, String)> = (0..n + 2)
            .map(|i| {
                let name = scan_schema.field(i).name().clone();
                let column: Arc<dyn PhysicalExpr> = Arc::new(
                    datafusion::physical_expr::expressions::Column::new(&name, i),
                );
                (column, name)
            })
            .collect();
        if v3 {
            for (expr, name) in [
                (
                    stored_or(
                        STORED_ROW_ID_COLUMN,
                        hidden(FIRST_ROW_ID_COLUMN) + hidden(POS_COLUMN),
                    )?,
                    ROW_ID_COLUMN,
                ),
                (
                    stored_or(
                        STORED_SEQUENCE_NUMBER_COLUMN,
                        hidden(SEQUENCE_NUMBER_COLUMN),
                    )?,
                    LAST_UPDATED_COLUMN,
                ),
            ] {
                exprs.push((
                    state.create_physical_expr(expr, &df_schema)?,
                    name.to_string(),
                ));
            }
        }
        if let Some((columns, _)) = &self.metadata_columns {
            for (kind, field) in &columns.columns {
                let expr = metadata_column_expr(*kind, state, &df_schema)?;
                exprs.push((expr, field.name().clone()));
            }
        }
        Ok(Arc::new(
            datafusion::physical_plan::projection::ProjectionExec::try_new(exprs, scan)?,
        ))
    }

    /// The filters of `filters` that read the table's columns alone (none of the metadata
    /// columns a provider with them appends): those a scan may prune data files, row
    /// groups and pages by, and those the Iceberg predicates of a row-level statement
    /// (its conflict-detection filter, spec "Scan Planning") are made of.
    pub(crate) fn table_column_filters(&self, filters: &[Expr]) -> Vec<Expr> {
        filters
            .iter()
            .filter(|f| {
                f.column_refs()
                    .iter()
                    .all(|c| self.arrow_schema.field_with_name(&c.name).is_ok())
            })
            .cloned()
            .collect()
    }

    /// The scan of a provider with metadata columns: `projection` indexes the table's
    /// columns then the metadata columns. Without metadata columns projected, the plain
    /// scan; else a row-level style scan with a projection computing them on top.
    pub(super) fn scan_with_metadata(
        &self,
        state: &dyn Session,
        deletes: DeletePlan,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
        columns: &MetadataColumns,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let n = self.arrow_schema.fields().len();
        let all: Vec<usize> = (0..n + columns.columns.len()).collect();
        let projection = projection.unwrap_or(&all);
        // filters on metadata columns stay with DataFusion (they are Inexact)
        let filters = self.table_column_filters(filters);
        if projection.iter().all(|i| *i < n) {
            return self.build_scan(
                state,
                deletes,
                Some(projection),
                &filters,
                limit,
                Hidden::None,
            );
        }
        let table_columns: Vec<usize> = projection.iter().copied().filter(|i| *i < n).collect();
        let scan = self.build_scan(
            state,
            deletes,
            Some(&table_columns),
            &filters,
            limit,
            Hidden::Metadata,
        )?;
        let scan_schema = scan.schema();
        let df_schema = DFSchema::try_from(Arc::clone(&scan_schema))?;
        let mut exprs: Vec<(Arc<dyn PhysicalExpr>, String)> = vec![];
        let mut table_at = 0;
        for i in projection {
            if *i < n {
                let field = scan_schema.field(table_at);
                let column =
                    datafusion::physical_expr::expressions::Column::new(field.name(), table_at);
                table_at += 1;
                exprs.push((Arc::new(column), field.name().clone()));
                continue;
            }
            let Some((kind, field)) = columns.columns.get(*i - n) else {
                return Err(Error::invalid_argument(format!(
                    "column {i} of table '{}' projected, which has {} columns",
                    self.table.metadata_location(),
                    n + columns.columns.len()
                )));
            };
            exprs.push((
                metadata_column_expr(*kind, state, &df_schema)?,
                field.name().clone(),
            ));
        }
        Ok(Arc::new(
            datafusion::physical_plan::projection::ProjectionExec::try_new(exprs, scan)?,
        ))
    }
}

/// The name of a row-level scan's column holding each row's data file location (as
/// stored in its manifest entry).
pub(crate) const FILE_COLUMN: &str = "__icefloe_file";
/// The name of a row-level scan's column holding each row's 0-based ordinal in its file.
pub(crate) const POS_COLUMN: &str = "__icefloe_pos";
/// The name of the hidden column holding each row's position in its file when position
/// deletes are applied per batch ([`PositionDeleteExec`]).
pub(crate) const DELETE_POS_COLUMN: &str = "__icefloe_delete_pos";
/// The name of the hidden per-file column holding the file's index in the
/// [`PositionDeleteExec`] above the scan.
pub(crate) const DELETE_FILE_INDEX_COLUMN: &str = "__icefloe_delete_file_index";
/// The name of a v3 row-level scan's column holding each row's `_row_id` (after
/// [`POS_COLUMN`]).
pub(crate) const ROW_ID_COLUMN: &str = "__icefloe_row_id";
/// The name of a v3 row-level scan's column holding each row's
/// `_last_updated_sequence_number` (after [`ROW_ID_COLUMN`]).
pub(crate) const LAST_UPDATED_COLUMN: &str = "__icefloe_last_updated_sequence_number";

/// The two columns a row-level scan adds after the table's: the data file (constant
/// per file) and the row's position in it (Parquet's row number, counted before any
/// deletes, as position deletes count).
pub(super) fn row_id_columns() -> [FieldRef; 2] {
    [
        Arc::new(Field::new(FILE_COLUMN, DataType::Utf8, false)),
        Arc::new(Field::new(POS_COLUMN, DataType::Int64, false).with_extension_type(RowNumber)),
    ]
}

/// The physical expression computing metadata column `kind` over a scan with
/// [`Hidden::Metadata`] columns (`df_schema`, the scan's schema); see
/// [`crate::datafusion::metadata_columns`] for the values.
///
/// Errors: a hidden column the scan lacks; DataFusion's planning errors.
fn metadata_column_expr(
    kind: MetadataColumn,
    state: &dyn Session,
    df_schema: &DFSchema,
) -> Result<Arc<dyn PhysicalExpr>> {
    let hidden = |name: &str| Expr::Column(datafusion::common::Column::from_name(name));
    let expr = match kind {
        MetadataColumn::File => hidden(FILE_COLUMN),
        MetadataColumn::Pos => {
            // Parquet's row number without its extension type: the field the view
            // declares (a type-only cast keeps the values and drops the extension keys;
            // DataFusion's aggregates refuse an input whose field metadata differs from
            // the logical plan's)
            let at = df_schema.as_arrow().index_of(POS_COLUMN)?;
            let column = Arc::new(datafusion::physical_expr::expressions::Column::new(
                POS_COLUMN, at,
            ));
            return Ok(Arc::new(
                datafusion::physical_expr::expressions::CastExpr::new(
                    column,
                    DataType::Int64,
                    None,
                ),
            ));
        }
        MetadataColumn::SpecId => hidden(SPEC_ID_COLUMN),
        MetadataColumn::Partition => hidden(PARTITION_COLUMN),
        MetadataColumn::Deleted => datafusion::logical_expr::lit(false),
        // spec "Row Lineage": null in the file → first_row_id + _pos
        MetadataColumn::RowId => stored_or(
            STORED_ROW_ID_COLUMN,
            hidden(FIRST_ROW_ID_COLUMN) + hidden(POS_COLUMN),
        )?,
        // null in the file → the file's data sequence number
        MetadataColumn::LastUpdatedSequenceNumber => stored_or(
            STORED_SEQUENCE_NUMBER_COLUMN,
            hidden(SEQUENCE_NUMBER_COLUMN),
        )?,
    };
    Ok(state.create_physical_expr(expr, df_schema)?)
}

/// `CASE WHEN stored IS NOT NULL THEN stored ELSE inherited END` over the hidden
/// column `stored` (a value a data file stores wins over the inherited one).
pub(super) fn stored_or(stored: &str, inherited: Expr) -> Result<Expr> {
    let stored = Expr::Column(datafusion::common::Column::from_name(stored));
    Ok(
        datafusion::logical_expr::when(stored.clone().is_not_null(), stored)
            .otherwise(inherited)?,
    )
}

/// The error for a write through a view with metadata columns.
pub(crate) fn read_only_metadata_view(table: &Table) -> Error {
    Error::unsupported(format!(
        "writing to table '{}' through its view with metadata columns (_file, _pos, …), \
         which is read-only",
        table.metadata_location()
    ))
}

/// Which hidden columns a scan adds after the table's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hidden {
    /// None: a query's scan.
    None,
    /// [`FILE_COLUMN`] and [`POS_COLUMN`]: a row-level operation's scan.
    RowIds,
    /// Those and what the metadata columns are computed from.
    Metadata,
}

/// Where a scan's hidden columns come from, and the order it returns them in: file,
/// position, spec id, partition (partitioned tables), and on v3 tables the file's
/// `first_row_id` and data sequence number, then `_row_id` and
/// `_last_updated_sequence_number` as stored in the file.
pub(super) struct HiddenLayout {
    pub(super) row_ids: bool,
    pub(super) metadata: Option<Arc<MetadataColumns>>,
    pub(super) lineage: bool,
}

impl HiddenLayout {
    pub(super) fn new(provider: &IcebergTableProvider, hidden: Hidden) -> Self {
        let metadata = (hidden == Hidden::Metadata).then(|| match &provider.metadata_columns {
            Some((columns, _)) => Arc::clone(columns),
            None => Arc::new(MetadataColumns::new(
                provider.table.metadata(),
                &provider.arrow_schema,
            )),
        });
        let lineage = metadata.is_some()
            && provider.table.metadata().format_version >= crate::spec::FormatVersion::V3;
        Self {
            row_ids: hidden != Hidden::None,
            metadata,
            lineage,
        }
    }

    /// Columns read from each data file after the table's.
    pub(super) fn file_fields(&self) -> Vec<FieldRef> {
        if self.lineage {
            stored_lineage_fields().to_vec()
        } else {
            vec![]
        }
    }

    /// Per-file values (DataFusion partition columns), after any equality-delete ones.
    pub(super) fn partition_fields(&self) -> Vec<FieldRef> {
        let mut out = vec![];
        if self.row_ids {
            let [file, _] = row_id_columns();
            out.push(file);
        }
        if let Some(columns) = &self.metadata {
            out.push(Arc::new(Field::new(SPEC_ID_COLUMN, DataType::Int32, false)));
            if columns.partitioned() {
                out.push(Arc::new(Field::new(
                    PARTITION_COLUMN,
                    columns.partition_type().clone(),
                    true,
                )));
            }
            if self.lineage {
                out.push(Arc::new(Field::new(
                    FIRST_ROW_ID_COLUMN,
                    DataType::Int64,
                    true,
                )));
                out.push(Arc::new(Field::new(
                    SEQUENCE_NUMBER_COLUMN,
                    DataType::Int64,
                    false,
                )));
            }
        }
        out
    }

    /// The hidden columns in the order the scan returns them.
    pub(super) fn output_fields(&self) -> Vec<FieldRef> {
        if !self.row_ids {
            return vec![];
        }
        let mut out = self.partition_fields();
        let [_, pos] = row_id_columns();
        out.insert(1, pos);
        out.extend(self.file_fields());
        out
    }

    /// The indices of [`Self::output_fields`] in the scan's table schema, whose file
    /// schema has `columns` table columns (then [`Self::file_fields`]) and whose partition
    /// columns start with `before` others.
    pub(super) fn scan_indices(&self, columns: usize, before: usize) -> Vec<usize> {
        if !self.row_ids {
            return vec![];
        }
        let extras = self.file_fields().len();
        let parts = self.partition_fields().len();
        let first = columns + extras + before;
        let mut out = vec![first, first + parts];
        out.extend(first + 1..first + parts);
        out.extend(columns..columns + extras);
        out
    }
}

/// The hidden per-file columns equality deletes need: data sequence number and scope.
pub(super) fn hidden_delete_columns() -> Vec<FieldRef> {
    vec![
        Arc::new(Field::new(
            "__icefloe_data_sequence_number",
            DataType::Int64,
            false,
        )),
        Arc::new(Field::new(
            "__icefloe_partition_scope",
            DataType::Int32,
            false,
        )),
    ]
}
