//! `CALL [cat.]system.<procedure>(…)` for Spark's maintenance procedures, with Spark's
//! arguments (positional or named `=>`) and result columns:
//!
//! | procedure | arguments | result |
//! |---|---|---|
//! | `expire_snapshots` | `table`, `older_than` (`TIMESTAMP '…'`, a constant expression such as `now() - INTERVAL '1' DAY`, or seconds since the epoch as Spark casts a `BIGINT`), `retain_last`, `max_concurrent_deletes`, `stream_results` (ignored), `snapshot_ids` (`array(…)`), `dry_run` (icefloe) | `deleted_data_files_count`, `deleted_position_delete_files_count`, `deleted_equality_delete_files_count`, `deleted_manifest_files_count`, `deleted_manifest_lists_count`, `deleted_statistics_files_count` |
//! | `remove_orphan_files` | `table`, `older_than` (default 3 days ago; within 24 h refused), `location` (the table location, `write.data.path` or `write.metadata.path`, or a directory in one; default: the table location, as in Java; refused where another table of the catalog could own files under it), `dry_run`, `max_concurrent_deletes`, `file_list_view` (refused), `equal_schemes`, `equal_authorities` (`map('from', 'to', …)`), `prefix_mismatch_mode` (`'ERROR'`, `'IGNORE'`, `'DELETE'`) | one row per file: `orphan_file_location` |
//! | `rewrite_data_files` | `table`, `strategy` (`'binpack'`, `'sort'`), `sort_order` (`'id DESC NULLS LAST, bucket(4, s)'`, the `sort` strategy's order instead of the table's; or `'zorder(a, b)'`, a z-order of the columns), `options` (`map('k', 'v', …)`; z-order: `var-length-contribution`, `max-output-size`), `where` (a SQL condition string) | `rewritten_data_files_count`, `added_data_files_count`, `rewritten_bytes_count`, `failed_data_files_count`, `removed_delete_files_count` |
//! | `rewrite_manifests` | `table`, `use_caching` (ignored), `spec_id` (only that spec's manifests; default: the table's current spec, as in Spark) | `rewritten_manifests_count`, `added_manifests_count` |
//! | `add_files` | `table`, `source_table` (`` '`parquet`.`/path/dir`' ``: a directory of Parquet files, Hive-style `column=value` directories for a partitioned table, or one file), `partition_filter` (`map('column', 'value', …)`), `check_duplicate_files` (default true), `parallelism` (ignored) | `added_files_count`, `changed_partition_count` |
//! | `rewrite_position_delete_files` | `table`, `options` (`map('k', 'v', …)`), `where` (a SQL condition string) | `rewritten_delete_files_count`, `added_delete_files_count`, `rewritten_bytes_count`, `added_bytes_count` |
//! | `compute_table_stats` | `table`, `snapshot_id` (default: the current snapshot), `columns` (`array('a', …)`; default: every top-level primitive column) | `statistics_file`: a Puffin file of theta sketches (distinct values) set on the snapshot (`crate::maintenance::commit_table_stats`) |
//! | `compute_partition_stats` | `table`, `snapshot_id` (default: the current snapshot) | `partition_statistics_file`: a Parquet partition statistics file set on the snapshot (module `partition_stats`) |
//! | `rewrite_table_path` | `table`, `source_prefix`, `target_prefix`, `start_version`, `end_version` (metadata file names, e.g. `'v5.metadata.json'`), `staging_location`, `create_file_list` (default true) | `latest_version`, `file_list_location`: rewritten copies of the metadata with the prefix moved, nothing committed (module `rewrite_table_path`) |
//! | `create_changelog_view` | `table`, `changelog_view`, `options` (`map('start-snapshot-id', '…', …)`), `compute_updates`, `identifier_columns` (`array(…)`), `net_changes` (module `changelog_view`) | `changelog_view` |
//!
//! A `NULL` argument is the parameter's default (module `call_args`).
//!
//! The work is [`crate::maintenance`]'s (`rewrite_position_delete_files` among it) and
//! [`rewrite_data_files`](crate::datafusion::maintenance::rewrite_data_files)'s. Errors
//! name the procedure and the table; a bad argument changes nothing.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema as ArrowSchema};
use datafusion::common::DFSchema;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use super::call_args::{arguments, evaluate, timestamp_argument, Value};
use super::rewrite_sort_order::{sort_order, zorder_columns};
use super::tokens::Cursor;
use super::{cursor, defaults, resolve_table, IcebergTarget, ResolvedTable};
use crate::datafusion::maintenance::{
    rewrite_data_files, RewriteDataFilesOptions, RewriteStrategy,
};
use crate::error::{Error, ErrorKind, Result};
use crate::expr::Predicate;
use crate::maintenance::{
    add_files, expire_snapshots, remove_orphan_files, rewrite_manifests,
    rewrite_position_delete_files, AddFiles, ExpireOptions, RemoveOrphanFiles,
    RewritePositionDeleteFilesOptions,
};
use crate::transaction::ExpireSnapshots;
use datafusion::arrow::array::timezone::Tz;

/// The maintenance procedures and their parameters, in Spark's order.
pub(super) const PROCEDURES: &[(&str, &[&str])] = &[
    (
        "expire_snapshots",
        &[
            "table",
            "older_than",
            "retain_last",
            "max_concurrent_deletes",
            "stream_results",
            "snapshot_ids",
            "clean_expired_metadata",
            "dry_run",
        ],
    ),
    (
        "remove_orphan_files",
        &[
            "table",
            "older_than",
            "location",
            "dry_run",
            "max_concurrent_deletes",
            "file_list_view",
            "equal_schemes",
            "equal_authorities",
            "prefix_mismatch_mode",
        ],
    ),
    (
        "rewrite_data_files",
        &["table", "strategy", "sort_order", "options", "where"],
    ),
    ("rewrite_manifests", &["table", "use_caching", "spec_id"]),
    (
        "add_files",
        &[
            "table",
            "source_table",
            "partition_filter",
            "check_duplicate_files",
            "parallelism",
        ],
    ),
    (
        "rewrite_position_delete_files",
        &["table", "options", "where"],
    ),
    ("compute_table_stats", &["table", "snapshot_id", "columns"]),
    ("compute_partition_stats", &["table", "snapshot_id"]),
    (
        "rewrite_table_path",
        &[
            "table",
            "source_prefix",
            "target_prefix",
            "start_version",
            "end_version",
            "staging_location",
            "create_file_list",
        ],
    ),
    (
        "create_changelog_view",
        &[
            "table",
            "changelog_view",
            "options",
            "compute_updates",
            "identifier_columns",
            "net_changes",
        ],
    ),
];

/// Run maintenance procedure `procedure` (one of [`PROCEDURES`]) of `target`, its
/// arguments at `c`; `what` names it in errors.
pub(super) async fn call(
    ctx: &SessionContext,
    target: &IcebergTarget,
    what: &str,
    procedure: &str,
    mut c: Cursor<'_>,
) -> Result<DataFrame> {
    let params = PROCEDURES
        .iter()
        .find(|(p, _)| *p == procedure)
        .map(|(_, params)| *params)
        .ok_or_else(|| Error::unsupported(format!("{what}: unknown procedure")))?;
    let zone = super::session_zone::session_zone(ctx)?;
    let mut values = arguments(&mut c, params, zone.as_ref()).map_err(|e| e.context(what))?;
    evaluate(ctx, params, &mut values, zone.as_ref())
        .await
        .map_err(|e| e.context(what))?;
    let args = Args {
        params,
        values,
        zone,
    };
    let table = resolve(ctx, target, what, args.get("table")).await?;
    let what = format!("{what}('{}')", table.ident);
    let before = super::committed_result::snapshot_ids(&table).await;
    // each procedure's future, boxed as `Send` (`execute` must stay `Send`)
    type Work<'a> =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<DataFrame>> + Send + 'a>>;
    let run: Work<'_> = match procedure {
        "expire_snapshots" => Box::pin(expire(ctx, &table, &args)),
        "remove_orphan_files" => Box::pin(orphans(ctx, &table, &args)),
        "rewrite_data_files" => Box::pin(rewrite_data(ctx, &table, &args)),
        "rewrite_position_delete_files" => Box::pin(rewrite_deletes(ctx, &table, &args)),
        "add_files" => Box::pin(import(ctx, &table, &args)),
        "compute_table_stats" => {
            Box::pin(super::table_stats::compute_table_stats(ctx, &table, &args))
        }
        "compute_partition_stats" => Box::pin(
            super::partition_stats::compute_partition_stats_procedure(ctx, &table, &args),
        ),
        "rewrite_table_path" => Box::pin(super::rewrite_table_path::rewrite_table_path(
            ctx, &table, &args,
        )),
        "create_changelog_view" => Box::pin(super::changelog_view::create_changelog_view(
            ctx, &table, &args,
        )),
        _ => Box::pin(manifests(ctx, &table, &args)),
    };
    let df = run.await.map_err(|e| e.context(&what))?;
    // the snapshots it committed, for the CLI's `committed snapshot <id>`
    let added = super::committed_result::new_snapshot_ids(&table, &before).await;
    super::committed_result::with_committed(ctx, df, added).await
}

/// The arguments of a call, by parameter.
pub(super) struct Args {
    params: &'static [&'static str],
    values: Vec<Option<Value>>,
    /// The session's time zone, for timestamp strings without one.
    zone: Option<Tz>,
}

impl Args {
    /// The value of parameter `param`; `None` when not given (or `NULL`).
    pub(super) fn get(&self, param: &str) -> Option<Value> {
        self.params
            .iter()
            .position(|p| *p == param)
            .and_then(|i| self.values.get(i).cloned().flatten())
    }
}

async fn expire(ctx: &SessionContext, table: &ResolvedTable, args: &Args) -> Result<DataFrame> {
    let mut action = ExpireSnapshots::new();
    if let Some(ms) = timestamp(args, "older_than")? {
        action = action.expire_older_than(ms);
    }
    if let Some(n) = number(args, "retain_last")? {
        action = action.retain_last(in_range(n, "retain_last", 1, i32::MAX)?);
    }
    match args.get("snapshot_ids") {
        None => {}
        Some(Value::Array(ids)) => {
            for id in ids {
                match id {
                    Value::Number(id) => action = action.expire_snapshot_id(id),
                    other => {
                        return Err(Error::invalid_argument(format!(
                            "snapshot_ids must hold snapshot ids, got {other}"
                        )))
                    }
                }
            }
        }
        Some(Value::Number(id)) => action = action.expire_snapshot_id(id),
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "snapshot_ids must be array(id, …), got {other}"
            )))
        }
    }
    if let Some(clean) = flag(args, "clean_expired_metadata")? {
        action = action.clean_expired_metadata(clean);
    }
    let mut options = ExpireOptions {
        dry_run: flag(args, "dry_run")?.unwrap_or(false),
        ..Default::default()
    };
    flag(args, "stream_results")?;
    if let Some(n) = number(args, "max_concurrent_deletes")? {
        options.max_concurrent_deletes = positive(n, "max_concurrent_deletes")?;
    }
    let (_, r) = expire_snapshots(table.target.catalog(), &table.ident, action, options).await?;
    if let Some(warning) = r.files_left_warning(&table.ident.to_string()) {
        // the commit stands and the procedure succeeds, as Spark's; Java's
        // `RemoveSnapshots` logs the failed cleanup as a warning
        eprintln!("warning: {warning}");
    }
    if let Some(warning) = r.kept_files_warning(&table.ident.to_string()) {
        eprintln!("warning: {warning}");
    }
    let counts = [
        ("deleted_data_files_count", r.deleted_data_files.len()),
        (
            "deleted_position_delete_files_count",
            r.deleted_position_delete_files.len(),
        ),
        (
            "deleted_equality_delete_files_count",
            r.deleted_equality_delete_files.len(),
        ),
        ("deleted_manifest_files_count", r.deleted_manifests.len()),
        (
            "deleted_manifest_lists_count",
            r.deleted_manifest_lists.len(),
        ),
        (
            "deleted_statistics_files_count",
            r.deleted_statistics_files.len(),
        ),
    ];
    one_row(
        ctx,
        counts
            .iter()
            .map(|(name, n)| (*name, Count::Long(*n as i64)))
            .collect(),
    )
}

async fn orphans(ctx: &SessionContext, table: &ResolvedTable, args: &Args) -> Result<DataFrame> {
    let mut options = RemoveOrphanFiles::new().dry_run(flag(args, "dry_run")?.unwrap_or(false));
    if let Some(ms) = timestamp(args, "older_than")? {
        options = options.older_than(ms);
    }
    match args.get("location") {
        None => {}
        Some(Value::Text(l)) => options = options.location(l),
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "location must be a string, got {other}"
            )))
        }
    }
    if let Some(n) = number(args, "max_concurrent_deletes")? {
        options = options.max_concurrent_deletes(positive(n, "max_concurrent_deletes")?);
    }
    if let Some(v) = args.get("file_list_view") {
        return Err(Error::unsupported(format!(
            "remove_orphan_files argument 'file_list_view' ({v}): icefloe lists the \
             table's directories itself"
        )));
    }
    for name in ["equal_schemes", "equal_authorities"] {
        match args.get(name) {
            None => {}
            Some(Value::Map(pairs)) if name == "equal_schemes" => {
                options = options.equal_schemes(&pairs)
            }
            Some(Value::Map(pairs)) => options = options.equal_authorities(&pairs),
            Some(other) => {
                return Err(Error::invalid_argument(format!(
                    "{name} must be map('key', 'value', …), got {other}"
                )))
            }
        }
    }
    match args.get("prefix_mismatch_mode") {
        None => {}
        Some(Value::Text(mode)) => options = options.prefix_mismatch_mode(mode.parse()?),
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "prefix_mismatch_mode must be 'ERROR', 'IGNORE' or 'DELETE', got {other}"
            )))
        }
    }
    let files =
        remove_orphan_files(table.target.catalog().as_ref(), &table.ident, &options).await?;
    let schema = Arc::new(ArrowSchema::new(vec![Field::new(
        "orphan_file_location",
        DataType::Utf8,
        false,
    )]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(files))])
        .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}

async fn rewrite_data(
    ctx: &SessionContext,
    table: &ResolvedTable,
    args: &Args,
) -> Result<DataFrame> {
    let strategy = match args.get("strategy") {
        None => RewriteStrategy::BinPack,
        Some(Value::Text(s)) if s.eq_ignore_ascii_case("binpack") => RewriteStrategy::BinPack,
        Some(Value::Text(s)) if s.eq_ignore_ascii_case("sort") => RewriteStrategy::Sort,
        Some(Value::Text(s)) if s.eq_ignore_ascii_case("zorder") => {
            return Err(Error::invalid_argument(format!(
                "unknown strategy '{s}': a z-order rewrite is strategy => 'sort' with \
                 sort_order => 'zorder(column, …)', as in Spark"
            )))
        }
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "unknown strategy {other} (expected 'binpack' or 'sort')"
            )))
        }
    };
    let mut options = RewriteDataFilesOptions::default().with_options(&map(args)?)?;
    options.strategy = strategy;
    let catalog = table.target.catalog();
    match args.get("sort_order") {
        None => {}
        Some(Value::Text(order)) => {
            if args.get("strategy").is_some() && strategy != RewriteStrategy::Sort {
                return Err(Error::invalid_argument(
                    "sort_order is given only with strategy 'sort'",
                ));
            }
            if let Some(columns) = zorder_columns(&order)? {
                options.strategy = RewriteStrategy::ZOrder;
                options.zorder_columns = columns;
            } else {
                options.strategy = RewriteStrategy::Sort;
                let loaded = catalog.load_table(&table.ident).await?;
                options.sort_order = Some(sort_order(ctx, &loaded, &order)?);
            }
        }
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "sort_order must be a string such as 'id DESC NULLS LAST, name', got {other}"
            )))
        }
    }
    options.filter = where_filter(ctx, table, args).await?;
    let (_, r) = rewrite_data_files(ctx, catalog, &table.ident, &options).await?;
    one_row(
        ctx,
        vec![
            (
                "rewritten_data_files_count",
                Count::Int(r.rewritten_data_files_count),
            ),
            (
                "added_data_files_count",
                Count::Int(r.added_data_files_count),
            ),
            (
                "rewritten_bytes_count",
                Count::Long(r.rewritten_bytes_count as i64),
            ),
            (
                "failed_data_files_count",
                Count::Int(r.failed_data_files_count),
            ),
            (
                "removed_delete_files_count",
                Count::Int(r.removed_delete_files_count),
            ),
        ],
    )
}

async fn rewrite_deletes(
    ctx: &SessionContext,
    table: &ResolvedTable,
    args: &Args,
) -> Result<DataFrame> {
    let mut options = RewritePositionDeleteFilesOptions::default().with_options(&map(args)?)?;
    options.filter = where_filter(ctx, table, args).await?;
    let (_, r) =
        rewrite_position_delete_files(table.target.catalog(), &table.ident, &options).await?;
    one_row(
        ctx,
        vec![
            (
                "rewritten_delete_files_count",
                Count::Int(r.rewritten_delete_files_count),
            ),
            (
                "added_delete_files_count",
                Count::Int(r.added_delete_files_count),
            ),
            (
                "rewritten_bytes_count",
                Count::Long(i64::try_from(r.rewritten_bytes_count).unwrap_or(i64::MAX)),
            ),
            (
                "added_bytes_count",
                Count::Long(i64::try_from(r.added_bytes_count).unwrap_or(i64::MAX)),
            ),
        ],
    )
}

/// The `options` argument: `map('key', 'value', …)`.
fn map(args: &Args) -> Result<Vec<(String, String)>> {
    match args.get("options") {
        None => Ok(vec![]),
        Some(Value::Map(m)) => Ok(m),
        Some(other) => Err(Error::invalid_argument(format!(
            "options must be map('key', 'value', …), got {other}"
        ))),
    }
}

/// The `where` argument, a SQL condition string over the table's columns, as a filter
/// that selects files.
async fn where_filter(
    ctx: &SessionContext,
    table: &ResolvedTable,
    args: &Args,
) -> Result<Option<Predicate>> {
    let Some(w) = args.get("where") else {
        return Ok(None);
    };
    let Value::Text(condition) = w else {
        return Err(Error::invalid_argument(format!(
            "where must be a string holding a condition, got {w}"
        )));
    };
    let loaded = table.target.catalog().load_table(&table.ident).await?;
    let provider = crate::IcebergTableProvider::try_new(loaded)?;
    let df_schema = DFSchema::try_from(provider.arrow_schema().as_ref().clone())?;
    super::procedure_where::where_predicate(ctx, provider.iceberg_schema(), df_schema, &condition)
        .map(Some)
}

async fn manifests(ctx: &SessionContext, table: &ResolvedTable, args: &Args) -> Result<DataFrame> {
    flag(args, "use_caching")?;
    let spec_id = number(args, "spec_id")?
        .map(|n| in_range(n, "spec_id", 0, i32::MAX))
        .transpose()?;
    // without spec_id, Spark rewrites the manifests of the table's current partition spec
    // alone (Java's `RewriteManifestsSparkAction` starts from `table.spec()`); those of
    // older specs are kept as they are
    let spec_id = match spec_id {
        Some(id) => id,
        None => {
            let loaded = table.target.catalog().load_table(&table.ident).await?;
            loaded.metadata().default_spec_id
        }
    };
    let (_, r) =
        rewrite_manifests(table.target.catalog(), &table.ident, None, Some(spec_id)).await?;
    one_row(
        ctx,
        vec![
            (
                "rewritten_manifests_count",
                Count::Int(r.rewritten_manifests_count),
            ),
            ("added_manifests_count", Count::Int(r.added_manifests_count)),
        ],
    )
}

async fn import(ctx: &SessionContext, table: &ResolvedTable, args: &Args) -> Result<DataFrame> {
    number(args, "parallelism")?;
    let source = match args.get("source_table") {
        Some(Value::Text(t)) => files_of_source(&t)?,
        None => {
            return Err(Error::invalid_argument(
                "the 'source_table' argument ('`parquet`.`/path`') is missing",
            ))
        }
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "source_table must be a string such as '`parquet`.`/path`', got {other}"
            )))
        }
    };
    let mut options = AddFiles::new(source);
    match args.get("partition_filter") {
        None => {}
        Some(Value::Map(pairs)) => options = options.partition_filter(pairs),
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "partition_filter must be map('column', 'value', …), got {other}"
            )))
        }
    }
    if let Some(check) = flag(args, "check_duplicate_files")? {
        options = options.check_duplicate_files(check);
    }
    let (_, r) = add_files(table.target.catalog(), &table.ident, options).await?;
    one_row(
        ctx,
        vec![
            ("added_files_count", Count::Long(r.added_files_count as i64)),
            (
                "changed_partition_count",
                Count::Long(r.changed_partition_count as i64),
            ),
        ],
    )
}

/// The location of Spark's `` `parquet`.`<path>` `` source (backquotes optional around
/// the format). Other formats, and catalog tables (Spark's Hive tables), are refused.
fn files_of_source(source: &str) -> Result<String> {
    let s = source.trim();
    let (format, rest) = match s.strip_prefix('`') {
        Some(r) => r
            .split_once('`')
            .map(|(f, rest)| (f, rest.strip_prefix('.')))
            .unwrap_or((r, None)),
        None => match s.split_once('.') {
            Some((f, rest)) => (f, Some(rest)),
            None => (s, None),
        },
    };
    let path = rest.map(|r| {
        r.strip_prefix('`')
            .and_then(|r| r.strip_suffix('`'))
            .unwrap_or(r)
    });
    match (format.to_ascii_lowercase().as_str(), path) {
        ("parquet", Some(path)) if !path.is_empty() => Ok(path.to_string()),
        ("orc" | "avro", Some(_)) => Err(Error::unsupported(format!(
            "add_files of {format} files (only Parquet)"
        ))),
        _ => Err(Error::unsupported(format!(
            "add_files from '{source}': only files named as '`parquet`.`/path`' can be \
             added (not a catalog table)"
        ))),
    }
}

/// The table named by the `table` argument, in the procedure's catalog: `t` in its
/// default namespace, `ns.t`, or `cat.ns.t`.
async fn resolve(
    ctx: &SessionContext,
    target: &IcebergTarget,
    what: &str,
    name: Option<Value>,
) -> Result<ResolvedTable> {
    let Some(Value::Text(name)) = name else {
        return Err(Error::invalid_argument(format!(
            "{what}: the 'table' argument (a name string such as 'ns.t') is missing"
        )));
    };
    let mut parts = cursor(ctx, &name)
        .and_then(|mut tc| tc.object_name().ok().filter(|_| tc.at_end()))
        .ok_or_else(|| Error::invalid_argument(format!("{what}: '{name}' is not a table name")))?;
    if parts.len() == 1 {
        parts.insert(0, defaults(ctx).1);
        parts.insert(0, target.name.clone());
    } else if ctx.catalog(&parts[0]).is_none() {
        parts.insert(0, target.name.clone());
    }
    let not_found = || {
        Error::not_found(format!(
            "{what}: '{name}' is not a table of Iceberg catalog '{}'",
            target.name
        ))
    };
    let table = resolve_table(ctx, &parts)?.filter(|t| t.target.name == target.name);
    match table {
        Some(table) if table.target.catalog().table_exists(&table.ident).await? => Ok(table),
        _ => Err(version_of_a_table(ctx, target, what, &name, &parts)
            .await?
            .unwrap_or_else(not_found)),
    }
}

/// The error for a `table` argument naming a version of a table, as Spark's identifiers
/// do in queries (`ns.t.branch_dev`, `ns.t.tag_v1`, `ns.t.snapshot_id_…`): the
/// procedures run on the table itself (its `main` branch), so this is refused naming the
/// table and the version rather than called an unknown table; `None` when `parts` do not
/// name such a version of an existing table.
async fn version_of_a_table(
    ctx: &SessionContext,
    target: &IcebergTarget,
    what: &str,
    name: &str,
    parts: &[String],
) -> Result<Option<Error>> {
    let Some((last, table_parts)) = parts.split_last() else {
        return Ok(None);
    };
    let Some(version) = super::time_travel::VERSION_PREFIXES
        .iter()
        .find_map(|p| last.strip_prefix(p).filter(|v| !v.is_empty()))
    else {
        return Ok(None);
    };
    let Some(table) = resolve_table(ctx, table_parts)?.filter(|t| t.target.name == target.name)
    else {
        return Ok(None);
    };
    if !table.target.catalog().table_exists(&table.ident).await? {
        return Ok(None);
    }
    Ok(Some(Error::unsupported(format!(
        "{what}: '{name}' names version '{version}' ({last}) of table '{}': maintenance \
         procedures run on the table and its main branch; give the table name '{}'",
        table.ident, table.ident
    ))))
}

fn number(args: &Args, name: &str) -> Result<Option<i64>> {
    match args.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(Some(n)),
        Some(other) => Err(Error::invalid_argument(format!(
            "{name} must be a number, got {other}"
        ))),
    }
}

pub(super) fn flag(args: &Args, name: &str) -> Result<Option<bool>> {
    match args.get(name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(other) => Err(Error::invalid_argument(format!(
            "{name} must be true or false, got {other}"
        ))),
    }
}

fn timestamp(args: &Args, name: &str) -> Result<Option<i64>> {
    args.get(name)
        .map(|value| timestamp_argument(name, &value, args.zone.as_ref()))
        .transpose()
}

fn positive(n: i64, name: &str) -> Result<usize> {
    let n = in_range(n, name, 1, i32::MAX)?;
    usize::try_from(n).map_err(|_| Error::invalid_argument(format!("{name} is {n}")))
}

/// `n`, argument `name`, within `min..=max`.
///
/// Errors: a value below `min` ("must be at least") or above `max` ("must be at most").
fn in_range(n: i64, name: &str, min: i32, max: i32) -> Result<i32> {
    if n < i64::from(min) {
        return Err(Error::invalid_argument(format!(
            "{name} must be at least {min}, got {n}"
        )));
    }
    i32::try_from(n)
        .ok()
        .filter(|n| *n <= max)
        .ok_or_else(|| Error::invalid_argument(format!("{name} must be at most {max}, got {n}")))
}

/// One result column's value.
enum Count {
    Int(usize),
    Long(i64),
}

fn one_row(ctx: &SessionContext, columns: Vec<(&str, Count)>) -> Result<DataFrame> {
    let mut fields = vec![];
    let mut arrays: Vec<ArrayRef> = vec![];
    for (name, v) in columns {
        match v {
            Count::Int(n) => {
                fields.push(Field::new(name, DataType::Int32, false));
                arrays.push(Arc::new(Int32Array::from(vec![
                    i32::try_from(n).unwrap_or(i32::MAX)
                ])));
            }
            Count::Long(n) => {
                fields.push(Field::new(name, DataType::Int64, false));
                arrays.push(Arc::new(Int64Array::from(vec![n])));
            }
        }
    }
    let batch = RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), arrays)
        .map_err(|e| Error::new(ErrorKind::DataFusion, "procedure result").with_source(e))?;
    Ok(ctx.read_batch(batch)?)
}
