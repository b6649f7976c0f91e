//! `CALL system.compute_table_stats(table => 'ns.t', snapshot_id => …, columns =>
//! array('a', 'b'))`: Spark's procedure (Java `ComputeTableStatsProcedure`). It reads the
//! snapshot's rows (default: the current snapshot; deletes applied) and keeps, per column,
//! a theta sketch of its distinct values in a Puffin statistics file set on the snapshot
//! ([`crate::maintenance::commit_table_stats`] has the format). Default columns: every
//! top-level primitive column of the snapshot's schema, as Java's. One row,
//! `statistics_file`: the file's location (no row for a table without snapshots).
//!
//! Refused ([`crate::ErrorKind::InvalidArgument`], naming it): a column the snapshot's
//! schema does not have or that is not primitive; ([`crate::ErrorKind::Unsupported`]) a
//! nested field (`s.x`), which Java accepts.

use std::sync::Arc;

use datafusion::arrow::array::{Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::common::ScalarValue;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use futures::StreamExt;

use super::call_args::Value;
use super::procedures::Args;
use super::ResolvedTable;
use crate::datafusion::filter::scalar_to_literal;
use crate::datafusion::IcebergTableProvider;
use crate::error::{Error, ErrorKind, Result};
use crate::maintenance::{commit_table_stats, NdvSketch};
use crate::spec::Snapshot;
use crate::table::Table;

/// Run `compute_table_stats` of `table` with `args` (see the module docs).
///
/// Errors: a bad argument, a snapshot the table does not have
/// ([`ErrorKind::NotFound`]), reading the rows, writing or committing the file.
pub(super) async fn compute_table_stats(
    ctx: &SessionContext,
    table: &ResolvedTable,
    args: &Args,
) -> Result<DataFrame> {
    let catalog = table.target.catalog();
    let loaded = catalog.load_table(&table.ident).await?;
    let snapshot = snapshot_argument(&loaded, args)?;
    let Some(snapshot) = snapshot else {
        return path_result(ctx, STATISTICS_FILE, None);
    };
    let schema = loaded.metadata().schema_for_snapshot(&snapshot)?.clone();
    let names = match args.get("columns") {
        None => schema
            .fields
            .fields
            .iter()
            .filter(|f| f.field_type.as_primitive().is_some())
            .map(|f| f.name.clone())
            .collect(),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                Value::Text(t) => Ok(t),
                other => Err(Error::invalid_argument(format!(
                    "columns must hold column names, got {other}"
                ))),
            })
            .collect::<Result<Vec<_>>>()?,
        Some(Value::Text(t)) => vec![t],
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "columns must be array('column', …), got {other}"
            )))
        }
    };
    let mut names_seen = vec![];
    let mut sketches = vec![];
    for name in names {
        if names_seen.contains(&name) {
            continue; // Java keeps each column once
        }
        let Some(field) = schema.field_by_name(&name) else {
            if name.contains('.') {
                return Err(Error::unsupported(format!(
                    "statistics of nested field '{name}': only top-level columns"
                )));
            }
            return Err(Error::invalid_argument(format!(
                "Can't find column {name} in the schema of snapshot {}",
                snapshot.snapshot_id
            )));
        };
        if field.field_type.as_primitive().is_none() {
            return Err(Error::invalid_argument(format!(
                "Can't compute stats on non-primitive type column: {name} ({})",
                field.field_type
            )));
        }
        sketches.push(NdvSketch::new(field.id)?);
        names_seen.push(name);
    }
    if sketches.is_empty() {
        return Err(Error::invalid_argument("No columns found to compute stats"));
    }
    let provider =
        IcebergTableProvider::try_new(loaded.clone())?.with_snapshot_id(snapshot.snapshot_id)?;
    let columns: Vec<&str> = names_seen.iter().map(String::as_str).collect();
    let df = ctx
        .read_table(Arc::new(provider))?
        .select_columns(&columns)?;
    let mut stream = df.execute_stream().await?;
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        for (sketch, column) in sketches.iter_mut().zip(batch.columns()) {
            for row in 0..column.len() {
                if column.is_null(row) {
                    continue;
                }
                let value = ScalarValue::try_from_array(column, row)?;
                match scalar_to_literal(&value) {
                    Some(Some(literal)) => sketch.update(&literal),
                    Some(None) => {}
                    None => {
                        return Err(Error::unsupported(format!(
                            "statistics of a column of Arrow type {}",
                            column.data_type()
                        )))
                    }
                }
            }
        }
    }
    let file = commit_table_stats(catalog, &table.ident, &loaded, &snapshot, &sketches).await?;
    path_result(ctx, STATISTICS_FILE, Some(file.statistics_path))
}

/// The result column of `compute_table_stats`.
const STATISTICS_FILE: &str = "statistics_file";

/// The snapshot of argument `snapshot_id` (default: the current snapshot; `None` for a
/// table without snapshots).
///
/// Errors: a snapshot the table does not have ([`ErrorKind::NotFound`]); a value that is
/// not a number ([`ErrorKind::InvalidArgument`]).
pub(super) fn snapshot_argument(loaded: &Table, args: &Args) -> Result<Option<Snapshot>> {
    Ok(match args.get("snapshot_id") {
        None => loaded.metadata().current_snapshot().cloned(),
        Some(Value::Number(id)) => Some(
            loaded
                .metadata()
                .snapshot_by_id(id)
                .cloned()
                .ok_or_else(|| Error::not_found(format!("Snapshot not found: {id}")))?,
        ),
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "snapshot_id must be a number, got {other}"
            )))
        }
    })
}

/// A procedure's one row (none without a file): the file's location in `column`.
pub(super) fn path_result(
    ctx: &SessionContext,
    column: &str,
    path: Option<String>,
) -> Result<DataFrame> {
    let schema = Arc::new(ArrowSchema::new(vec![Field::new(
        column,
        DataType::Utf8,
        true,
    )]));
    let rows: Vec<String> = path.into_iter().collect();
    let batch = RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(rows))])
        .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}
