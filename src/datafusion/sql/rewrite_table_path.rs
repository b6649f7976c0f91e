//! `CALL system.rewrite_table_path(table => 'ns.t', source_prefix => 's3://a/wh/ns/t',
//! target_prefix => 'file:///dr/ns/t', start_version => 'v2.metadata.json', end_version =>
//! 'v5.metadata.json', staging_location => '…', create_file_list => true)`: Spark's
//! procedure (Java `RewriteTablePathProcedure`). The work is
//! [`crate::maintenance::rewrite_table_path`]'s: rewritten copies of the table's metadata
//! in the staging location, nothing committed. One row: `latest_version` (the end
//! version's file name) and `file_list_location` (the CSV of `source,target` files to
//! copy; `N/A` with `create_file_list => false`).

use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::call_args::Value;
use super::procedures::{flag, Args};
use super::ResolvedTable;
use crate::error::{Error, ErrorKind, Result};
use crate::maintenance::{rewrite_table_path as rewrite, RewriteTablePath};

/// A string argument `name`; `None` when not given.
fn text(args: &Args, name: &str) -> Result<Option<String>> {
    match args.get(name) {
        None => Ok(None),
        Some(Value::Text(t)) => Ok(Some(t)),
        Some(other) => Err(Error::invalid_argument(format!(
            "{name} must be a string, got {other}"
        ))),
    }
}

/// Run `rewrite_table_path` of `table` with `args` (see the module docs).
///
/// Errors: a missing `source_prefix` or `target_prefix`, an argument of the wrong type
/// ([`ErrorKind::InvalidArgument`], naming it), and those of
/// [`crate::maintenance::rewrite_table_path`].
pub(super) async fn rewrite_table_path(
    ctx: &SessionContext,
    table: &ResolvedTable,
    args: &Args,
) -> Result<DataFrame> {
    let required = |name: &str| {
        text(args, name)?.ok_or_else(|| {
            Error::invalid_argument(format!(
                "the '{name}' argument (a location string) is missing"
            ))
        })
    };
    let mut options =
        RewriteTablePath::new(&required("source_prefix")?, &required("target_prefix")?)?;
    options.start_version = text(args, "start_version")?;
    options.end_version = text(args, "end_version")?;
    options.staging_location = text(args, "staging_location")?;
    options.create_file_list = flag(args, "create_file_list")?.unwrap_or(true);
    let loaded = table.target.catalog().load_table(&table.ident).await?;
    let r = rewrite(&loaded, &options).await?;
    let schema = Arc::new(ArrowSchema::new(vec![
        Field::new("latest_version", DataType::Utf8, false),
        Field::new("file_list_location", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec![r.latest_version])),
            Arc::new(StringArray::from(vec![r.file_list_location])),
        ],
    )
    .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}
