//! Register existing Parquet files in a table without rewriting them (Spark's
//! `add_files` procedure, Java's `SparkTableUtil.importSparkTable`).
//!
//! The files under a source directory (or one file) become data files of one `append`
//! snapshot, with their record counts and column metrics read from their Parquet footers
//! under the table's metrics configuration (`write.metadata.metrics.*`). Files written
//! without Parquet field ids are read through the table's name mapping
//! (`schema.name-mapping.default`, spec "Column Projection"), which the commit sets from
//! the current schema when the table has none, as Java's `ensureNameMappingPresent` does.
//!
//! A partitioned table takes files from Hive-style directories `<column>=<value>` (identity
//! partitions only, as in Spark); `partition_filter` narrows the import to the directories
//! whose values equal the given ones. Files whose name or a directory of whose path starts
//! with `_` or `.` (`_SUCCESS`, `.crc` files) are skipped, as Spark's listing does.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use datafusion::arrow::datatypes::Schema as ArrowSchema;
use datafusion::parquet::arrow::parquet_to_arrow_schema;
use datafusion::parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::ObjectStoreExt;

use super::add_files_required::{check_required_columns, check_required_nested};
use crate::catalog::{Catalog, TableIdent};
use crate::delete::is_deletion_vector;
use crate::error::{Error, ErrorKind, Result};
use crate::expr::literal::{is_nan, literal_eq};
use crate::io::{normalize_location, FooterCheckedStore, ObjectRangeReader};
use crate::scan::TableScan;
use crate::spec::arrow::{arrow_field_id, schema_to_arrow};
use crate::spec::arrow_compat::check_field;
use crate::spec::name_mapping::{update_name_mapping, NameMapping, DEFAULT_NAME_MAPPING_PROPERTY};
use crate::spec::schema::ROW_LINEAGE_FIELDS;
use crate::spec::{DataFile, Literal, PartitionSpec, PrimitiveType, Schema, Transform};
use crate::table::Table;
use crate::transaction::paths_in_snapshot;
use crate::transaction::{check_writable, AppendFiles, Transaction, UpdateProperties};
use crate::write::parquet_metrics::{data_file_from_footer_ids, leaf_field_ids};
use crate::write::{MetricsConfig, MetricsMode};

/// Footers read at once.
const FOOTER_CONCURRENCY: usize = 16;

/// Hive's directory value for a null partition value.
const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// What to import.
#[derive(Debug, Clone)]
pub struct AddFiles {
    source: String,
    partition_filter: Vec<(String, String)>,
    check_duplicate_files: bool,
}

/// What [`add_files`] did: Spark's `added_files_count` and `changed_partition_count`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddFilesResult {
    /// Data files registered.
    pub added_files_count: usize,
    /// Partitions that got files (the snapshot's `changed-partition-count`).
    pub changed_partition_count: usize,
}

impl AddFiles {
    /// Import the Parquet files under `source` (a directory or one file: a local path or
    /// a `scheme://` location the table's storage settings reach).
    pub fn new(source: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            partition_filter: vec![],
            check_duplicate_files: true,
        }
    }

    /// Only the partition directories whose `column=value` pairs include these.
    pub fn partition_filter(mut self, filter: Vec<(String, String)>) -> Self {
        self.partition_filter = filter;
        self
    }

    /// Refuse files the table's current snapshot already holds (default true, as Spark).
    pub fn check_duplicate_files(mut self, check: bool) -> Self {
        self.check_duplicate_files = check;
        self
    }
}

/// Register the files `options` names in table `ident` in one `append` commit. When the
/// partition filter leaves no file, nothing is committed (zero counts).
///
/// Errors ([`ErrorKind::InvalidArgument`] unless said): a partitioned table with a
/// non-identity partition field ([`ErrorKind::Unsupported`]); a filter on a column that
/// is not a partition source, or on an unpartitioned table; a file outside
/// `<column>=<value>` directories of a partitioned table, or a value that is not one of
/// the column's type; a file that may give a null in a required column (holding nulls,
/// lacking null counts, or lacking the column); a file storing row lineage values (a
/// `_row_id` or `_last_updated_sequence_number` column, by reserved field id, that is not
/// all null: spec "Row Lineage"); a source that does not exist or holds no file
/// ([`ErrorKind::NotFound`]); a file that is not Parquet ([`ErrorKind::InvalidData`], naming
/// it); a file the table already holds (with `check_duplicate_files`,
/// [`ErrorKind::ValidationFailed`] naming up to 10); commit errors.
pub async fn add_files(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    options: AddFiles,
) -> Result<(Table, AddFilesResult)> {
    let base = catalog.load_table(ident).await?;
    check_writable(&base)?;
    let m = base.metadata();
    let schema = m.current_schema();
    let spec = m
        .default_partition_spec()
        .cloned()
        .unwrap_or_else(PartitionSpec::unpartitioned);
    let columns = partition_columns(&spec, schema)?;
    if spec.fields.is_empty() && !options.partition_filter.is_empty() {
        return Err(Error::invalid_argument(
            "partition_filter given for an unpartitioned table",
        ));
    }
    let filter = typed_filter(&options.partition_filter, &columns)?;
    let source = normalize_location(&options.source)?;
    let mut found = vec![];
    for (location, size) in list_source(&base, &source).await? {
        let relative = location
            .strip_prefix(&source)
            .unwrap_or(&location)
            .trim_start_matches('/');
        let segments: Vec<&str> = relative.split('/').collect();
        if segments
            .iter()
            .any(|s| s.starts_with('_') || s.starts_with('.'))
        {
            continue;
        }
        let dirs = &segments[..segments.len().saturating_sub(1)];
        let Some(partition) = partition_of(&location, dirs, &columns, &filter)? else {
            continue;
        };
        found.push((location, size, partition));
    }
    if found.is_empty() {
        return Ok((base, AddFilesResult::default()));
    }
    if options.check_duplicate_files {
        check_no_duplicates(&base, &found).await?;
    } else {
        check_no_deletion_vectors(&base, &found).await?;
    }
    let mapping_text = match m.properties.get(DEFAULT_NAME_MAPPING_PROPERTY) {
        Some(text) => text.clone(),
        None => update_name_mapping("[]", schema)?,
    };
    let mapping = NameMapping::from_json(&mapping_text)?;
    let modes = MetricsConfig::for_table(m)?.modes_by_field_id(schema);
    let table_columns = schema_to_arrow(schema)?;
    let files: Vec<DataFile> = stream::iter(found)
        .map(|(location, size, partition)| {
            let (base, mapping, modes) = (&base, &mapping, &modes);
            let (table_columns, columns) = (&table_columns, &columns);
            async move {
                let (meta, fetch) = read_footer(base, &location, size).await?;
                let physical = check_columns(&meta, table_columns, mapping, &location)?;
                check_no_row_lineage(&meta, &location)?;
                let ids = leaf_field_ids(&meta, Some(mapping));
                check_required_columns(&meta, &ids, schema, columns, &partition, &location)?;
                check_required_nested(&meta, &physical, schema, mapping, &location, fetch).await?;
                let mode_of = |id: i32| modes.get(&id).copied().unwrap_or(MetricsMode::DEFAULT);
                let size = i64::try_from(size).unwrap_or(i64::MAX);
                Ok::<_, Error>(data_file_from_footer_ids(
                    &meta,
                    size,
                    &location,
                    schema,
                    partition,
                    &mode_of,
                    &HashMap::new(),
                    &ids,
                ))
            }
        })
        .buffered(FOOTER_CONCURRENCY)
        .try_collect()
        .await?;
    let added_files_count = files.len();
    let distinct: BTreeSet<String> = files.iter().map(|f| format!("{:?}", f.partition)).collect();
    let mut append = AppendFiles::new(spec.spec_id, files)?;
    if options.check_duplicate_files {
        // again at each attempt: a concurrent add_files of the same files may land first
        append = append.validate_files_not_present();
    }
    let mut txn = Transaction::new(Arc::clone(catalog), ident.clone(), base.clone());
    if !m.properties.contains_key(DEFAULT_NAME_MAPPING_PROPERTY) {
        txn = txn
            .add_action(UpdateProperties::new().set(DEFAULT_NAME_MAPPING_PROPERTY, mapping_text)?);
    }
    let committed = txn.add_action(append).commit().await?;
    let changed_partition_count = committed
        .metadata()
        .current_snapshot()
        .and_then(|s| s.summary.get("changed-partition-count"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(distinct.len());
    Ok((
        committed,
        AddFilesResult {
            added_files_count,
            changed_partition_count,
        },
    ))
}

/// The source column (name, type) of each field of `spec`, all identity.
fn partition_columns(
    spec: &PartitionSpec,
    schema: &Schema,
) -> Result<Vec<(String, PrimitiveType)>> {
    spec.fields
        .iter()
        .map(|f| {
            let source = schema.field_by_id(f.source_id);
            match (f.transform.clone(), source) {
                (Transform::Identity, Some(field)) => {
                    let ty = *field.field_type.as_primitive().ok_or_else(|| {
                        Error::unsupported(format!(
                            "add_files into a table partitioned by the nested column '{}'",
                            field.name
                        ))
                    })?;
                    Ok((field.name.clone(), ty))
                }
                _ => Err(Error::unsupported(format!(
                    "add_files into a table partitioned by {}({}): only identity partitions \
                     take Hive-style directories",
                    f.transform,
                    source.map_or("?", |s| s.name.as_str())
                ))),
            }
        })
        .collect()
}

/// `(location, size in bytes)` of every file at or under `source` (a file, or a
/// directory listed at any depth).
async fn list_source(table: &Table, source: &str) -> Result<Vec<(String, u64)>> {
    let io = table.file_io();
    let resolved = io.resolve(source)?;
    let store = io.store(&resolved.store_url)?;
    // a directory has no object of its own (the local store answers NotFound too)
    if let Ok(meta) = store.head(&resolved.path).await {
        return Ok(vec![(source.to_string(), meta.size)]);
    }
    let mut files: Vec<(String, u64)> = io
        .list_files(source)
        .await?
        .into_iter()
        .map(|f| (f.location, f.size))
        .collect();
    if files.is_empty() {
        // a missing local directory lists nothing, as does a prefix with no objects
        return Err(Error::not_found(format!(
            "add_files source '{source}' does not exist or holds no files"
        )));
    }
    files.sort();
    Ok(files)
}

/// `partition_filter` as values of its partition columns: (index in `columns`, value;
/// `None` for `__HIVE_DEFAULT_PARTITION__`). Spark casts each value to its column's type.
///
/// Errors: [`ErrorKind::InvalidArgument`] for a
/// column that is not a partition column, or a value that is not one of its column's
/// type (naming the column, the value and the type).
fn typed_filter(
    filter: &[(String, String)],
    columns: &[(String, PrimitiveType)],
) -> Result<Vec<(usize, Option<Literal>)>> {
    filter
        .iter()
        .map(|(k, v)| {
            let Some(i) = columns
                .iter()
                .position(|(name, _)| name.eq_ignore_ascii_case(k))
            else {
                return Err(Error::invalid_argument(format!(
                    "partition_filter column '{k}' is not a partition column of the table"
                )));
            };
            let (name, ty) = &columns[i];
            let value = partition_value(v, ty).map_err(|e| {
                e.context(format!(
                    "partition_filter value '{v}' for column '{name}' of type {ty}"
                ))
            })?;
            Ok((i, value))
        })
        .collect()
}

/// The partition tuple of a file in directories `dirs` under the source, or `None` when
/// `filter` (see [`typed_filter`]) leaves it out: a directory value equal to the filter's
/// as a value of the column's type (`q=01` matches `'q', '1'` on an int column).
fn partition_of(
    location: &str,
    dirs: &[&str],
    columns: &[(String, PrimitiveType)],
    filter: &[(usize, Option<Literal>)],
) -> Result<Option<Vec<Option<Literal>>>> {
    let pairs: Vec<(String, String)> = dirs
        .iter()
        .filter_map(|d| d.split_once('='))
        .map(|(k, v)| (unescape(k), unescape(v)))
        .collect();
    for (i, (k, _)) in pairs.iter().enumerate() {
        if pairs[..i]
            .iter()
            .any(|(seen, _)| seen.eq_ignore_ascii_case(k))
        {
            return Err(Error::invalid_argument(format!(
                "file '{location}' is under two '{k}=<value>' directories"
            )));
        }
        // Spark's add_files takes partition directories only when they match the table's
        // identity partitions: their values would be lost otherwise
        if !columns.iter().any(|(name, _)| name.eq_ignore_ascii_case(k)) {
            return Err(Error::invalid_argument(format!(
                "file '{location}' is under partition directory '{k}=…' but the table is \
                 not partitioned by '{k}' (its values would be lost; partition the table by \
                 identity({k}) first)"
            )));
        }
    }
    let value_of = |column: &str| {
        pairs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(column))
            .map(|(_, v)| v.as_str())
    };
    for (i, wanted) in filter {
        let (name, ty) = &columns[*i];
        let Some(text) = value_of(name) else {
            return Ok(None);
        };
        let value = partition_value(text, ty).map_err(|e| {
            e.context(format!(
                "partition directory '{name}={text}' of '{location}'"
            ))
        })?;
        let equal = match (&value, wanted) {
            // `map('f', 'NaN')` names the `f=NaN` directory, as Spark's filter of the
            // directory names does
            (Some(a), Some(b)) => literal_eq(a, b) || (is_nan(a) && is_nan(b)),
            (None, None) => true,
            _ => false,
        };
        if !equal {
            return Ok(None);
        }
    }
    let mut partition = Vec::with_capacity(columns.len());
    for (name, ty) in columns {
        let Some(text) = value_of(name) else {
            return Err(Error::invalid_argument(format!(
                "file '{location}' is not under a '{name}=<value>' directory, as a file of \
                 a table partitioned by '{name}' must be"
            )));
        };
        partition.push(partition_value(text, ty).map_err(|e| {
            e.context(format!(
                "partition directory '{name}={text}' of '{location}'"
            ))
        })?);
    }
    Ok(Some(partition))
}

/// A Hive directory's value as a value of `ty` (`__HIVE_DEFAULT_PARTITION__`: null; a float's
/// `NaN`, `Infinity`, `-Infinity` as Spark writes them).
fn partition_value(text: &str, ty: &PrimitiveType) -> Result<Option<Literal>> {
    if text == HIVE_NULL {
        return Ok(None);
    }
    let bad = || Error::invalid_argument(format!("'{text}' is not a {ty}"));
    let json = match ty {
        PrimitiveType::Boolean => {
            serde_json::Value::Bool(match text.to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => return Err(bad()),
            })
        }
        PrimitiveType::Int | PrimitiveType::Long => {
            serde_json::Value::from(text.parse::<i64>().map_err(|_| bad())?)
        }
        PrimitiveType::Float | PrimitiveType::Double => {
            let v = text.parse::<f64>().map_err(|_| bad())?;
            if !v.is_finite() {
                // Spark's directories hold Java's `Double.toString`: `NaN`, `Infinity`,
                // `-Infinity` (read back by `Double.valueOf`), which JSON cannot hold
                return Ok(Some(match ty {
                    PrimitiveType::Float => Literal::Float(v as f32),
                    _ => Literal::Double(v),
                }));
            }
            serde_json::Value::from(v)
        }
        PrimitiveType::Decimal { .. } | PrimitiveType::Date | PrimitiveType::String => {
            serde_json::Value::String(text.to_string())
        }
        // Hive and Spark write `2024-01-02 03:04:05[.ffffff]` (colons escaped)
        PrimitiveType::Timestamp | PrimitiveType::TimestampNs => {
            serde_json::Value::String(text.replacen(' ', "T", 1))
        }
        // a zone-less wall-clock time has no instant without the writer's session zone
        PrimitiveType::Timestamptz | PrimitiveType::TimestamptzNs => {
            let iso = text.replacen(' ', "T", 1);
            if chrono::DateTime::parse_from_rfc3339(&iso).is_err() {
                return Err(Error::unsupported(format!(
                    "'{text}' as a {ty}: a partition directory of a timestamp with time zone \
                     needs an offset ('2024-01-02 03:04:05+00:00'); Hive-style directories \
                     hold wall-clock times in the writer's session zone, which add_files \
                     cannot know"
                )));
            }
            serde_json::Value::String(iso)
        }
        other => {
            return Err(Error::unsupported(format!(
                "add_files with a partition column of type {other}"
            )))
        }
    };
    Literal::from_json(&json, ty).map(Some).map_err(|_| bad())
}

/// Hive's path escaping undone: `%XX` is the byte `XX`.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The footer of the Parquet file at `location` (`size` bytes), read through the
/// table's storage settings: one ranged read of the last 64 KiB, a second one when the
/// footer is larger. With it, a reader of the file's other bytes.
async fn read_footer(
    table: &Table,
    location: &str,
    size: u64,
) -> Result<(ParquetMetaData, ObjectRangeReader)> {
    let io = table.file_io().without_remaps();
    let resolved = io.resolve(location)?;
    // the footer length is checked by the store the footer is read through
    let store = Arc::new(FooterCheckedStore::new(
        io.store(&resolved.store_url)?,
        [(resolved.path.clone(), size)],
    ));
    let fetch = ObjectRangeReader::new(Arc::clone(&store) as _, resolved.path);
    let meta = ParquetMetaDataReader::new()
        .with_prefetch_hint(Some(64 * 1024))
        .load_and_finish(fetch.clone(), size)
        .await
        .map_err(|e| {
            let unreadable = format!("'{location}' is not a readable Parquet file");
            match store.corrupt_footer() {
                Some(corrupt) => Error::invalid_data(format!("{unreadable}: {}", corrupt.cause)),
                None => Error::invalid_data(unreadable).with_source(e),
            }
        })?;
    Ok((meta, fetch))
}

/// Check that the file's columns read as the table's columns they map to (by Parquet
/// field id, else by `mapping`), with the scan's rules (`arrow_compat::check_field`), and
/// that at least one does: a file none of whose columns is the table's would read as
/// rows of nulls, and one of a type that does not read would make every scan fail.
/// Returns the file's Arrow schema.
fn check_columns(
    meta: &ParquetMetaData,
    table: &ArrowSchema,
    mapping: &NameMapping,
    location: &str,
) -> Result<ArrowSchema> {
    let fm = meta.file_metadata();
    let physical =
        parquet_to_arrow_schema(fm.schema_descr(), fm.key_value_metadata()).map_err(|e| {
            Error::invalid_data(format!("the Parquet schema of '{location}' cannot be read"))
                .with_source(e)
        })?;
    let mut matched = 0;
    for f in physical.fields() {
        let id = arrow_field_id(f).or_else(|| mapping.find(f.name()).and_then(|m| m.field_id));
        let Some(t) = id.and_then(|id| {
            table
                .fields()
                .iter()
                .find(|t| arrow_field_id(t) == Some(id))
        }) else {
            continue;
        };
        matched += 1;
        check_field(t, f, t.name())
            .map_err(|m| Error::invalid_argument(format!("file '{location}': {m}")))?;
    }
    if matched == 0 {
        let names: Vec<&str> = physical
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        return Err(Error::invalid_argument(format!(
            "file '{location}' has none of the table's columns (its columns: {}; names are \
             matched exactly, through the table's name mapping)",
            names.join(", ")
        )));
    }
    Ok(physical)
}

/// Fail when the file of `meta` stores a row lineage value (a top-level column with the
/// reserved field id of `_row_id` or `_last_updated_sequence_number` holding a non-null
/// value, or lacking a null count in some row group, so possibly holding one). Added
/// files bring new rows, whose lineage is assigned on read (spec "Row Lineage": an added
/// row's `_row_id` and `_last_updated_sequence_number` are null): a stored value, as a
/// v3 table's compacted or updated files hold, would be read as the row's by every
/// engine, repeating row ids of the table (or of the table the file came from) and
/// claiming sequence numbers of another history. Columns of nulls only (a v3 `MERGE`'s
/// inserted rows) are fine.
///
/// Errors: [`ErrorKind::InvalidArgument`] naming the file, the column and its field id.
fn check_no_row_lineage(meta: &ParquetMetaData, location: &str) -> Result<()> {
    let descr = meta.file_metadata().schema_descr();
    for leaf in 0..descr.num_columns() {
        let column = descr.column(leaf);
        let info = column.self_type().get_basic_info();
        let Some((name, id)) = info.has_id().then(|| info.id()).and_then(|id| {
            ROW_LINEAGE_FIELDS
                .iter()
                .find(|(_, lineage)| *lineage == id)
        }) else {
            continue;
        };
        if column.path().parts().len() != 1 {
            continue;
        }
        let mut values = 0;
        for group in meta.row_groups() {
            let nulls = group
                .column(leaf)
                .statistics()
                .and_then(|s| s.null_count_opt());
            match nulls {
                Some(n) => values += group.num_rows() - i64::try_from(n).unwrap_or(i64::MAX),
                None => values += group.num_rows(),
            }
        }
        if values > 0 {
            return Err(Error::invalid_argument(format!(
                "file '{location}': column '{name}' (field id {id}) may hold row lineage \
                 values (up to {values}); files added to a table bring new rows, whose \
                 `_row_id` and `_last_updated_sequence_number` must be null (spec \"Row \
                 Lineage\"): rewrite the file without the column"
            )));
        }
    }
    Ok(())
}

/// Fail when a live deletion vector of the table's current snapshot names one of `found`'s
/// files (added again under `check_duplicate_files => false`): the new entry would have a
/// later data sequence number than the vector, and readers (icefloe's and Java's
/// `DeleteFileIndex`) refuse a deletion vector older than an entry of its data file, so
/// the table would no longer read (spec: "Deletion Vectors": at most one vector per data
/// file, applying to rows of entries not newer than it).
async fn check_no_deletion_vectors<T, U>(table: &Table, found: &[(String, T, U)]) -> Result<()> {
    let Some(snapshot) = table.metadata().current_snapshot() else {
        return Ok(());
    };
    let plan = TableScan::new(table.clone(), Some(snapshot.clone()))
        .plan_files()
        .await?;
    let with_vectors: HashSet<&str> = plan
        .delete_entries
        .iter()
        .filter(|e| is_deletion_vector(&e.data_file))
        .filter_map(|e| e.data_file.referenced_data_file.as_deref())
        .collect();
    match found
        .iter()
        .find(|(l, _, _)| with_vectors.contains(l.as_str()))
    {
        Some((location, _, _)) => Err(Error::new(
            ErrorKind::ValidationFailed,
            format!(
                "cannot add '{location}' again: a deletion vector of the table's current \
                 snapshot applies to it, and a deletion vector older than an entry of its \
                 data file makes the table unreadable; compact the file first \
                 (rewrite_data_files) or add a copy of it"
            ),
        )),
        None => Ok(()),
    }
}

/// Fail when the table's current snapshot already holds one of `found`'s files.
async fn check_no_duplicates<T, U>(table: &Table, found: &[(String, T, U)]) -> Result<()> {
    let Some(snapshot) = table.metadata().current_snapshot() else {
        return Ok(());
    };
    let paths = found.iter().map(|(l, _, _)| l.as_str());
    let duplicates = paths_in_snapshot(table, snapshot, paths).await?;
    if duplicates.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = duplicates
        .iter()
        .take(10)
        .map(|d| format!("'{d}'"))
        .collect();
    Err(Error::new(
        ErrorKind::ValidationFailed,
        format!(
            "{} of the files to add are already in the table ({}{}); a table should \
             reference a file once; to add them anyway set check_duplicate_files => false",
            duplicates.len(),
            shown.join(", "),
            if duplicates.len() > 10 { ", …" } else { "" }
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hive_directories_give_typed_values_or_null() {
        let cols = vec![
            ("d".to_string(), PrimitiveType::Date),
            ("s".to_string(), PrimitiveType::String),
            ("n".to_string(), PrimitiveType::Int),
        ];
        let got = partition_of(
            "f",
            &["d=2024-01-31", "s=a%2Fb c", "n=__HIVE_DEFAULT_PARTITION__"],
            &cols,
            &[],
        )
        .unwrap();
        assert_eq!(
            got,
            Some(vec![
                Some(Literal::Date(19753)),
                Some(Literal::String("a/b c".into())),
                None
            ])
        );
        let filter = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            typed_filter(&pairs, &cols)
        };
        let dirs = ["d=2024-01-31", "s=x", "n=1"];
        let filtered = partition_of("f", &dirs, &cols, &filter(&[("S", "y")]).unwrap()).unwrap();
        assert_eq!(filtered, None);
        // values compare as values of the column's type
        for (k, v) in [("n", "1"), ("n", "01"), ("d", "2024-01-31"), ("s", "x")] {
            let kept = partition_of("f", &dirs, &cols, &filter(&[(k, v)]).unwrap()).unwrap();
            assert!(kept.is_some(), "{k} = {v}");
        }
        let null = partition_of(
            "f",
            &["d=2024-01-31", "s=x", "n=__HIVE_DEFAULT_PARTITION__"],
            &cols,
            &filter(&[("n", "__HIVE_DEFAULT_PARTITION__")]).unwrap(),
        )
        .unwrap();
        assert!(null.is_some());
        let err = filter(&[("n", "abc")]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(
            err.to_string()
                .contains("partition_filter value 'abc' for column 'n' of type int"),
            "{err}"
        );
        let err = filter(&[("q", "1")]).unwrap_err();
        assert!(
            err.to_string().contains("column 'q' is not a partition"),
            "{err}"
        );
        let err = partition_of("f", &["d=2024-01-31", "s=x", "n=one"], &cols, &[]).unwrap_err();
        assert!(err.to_string().contains("'one' is not a int"), "{err}");
        let err = partition_of("f", &["d=2024-01-31"], &cols, &[]).unwrap_err();
        assert!(err.to_string().contains("'s=<value>'"), "{err}");
        for (dirs, expected) in [
            (
                vec!["d=2024-01-31", "s=x", "n=1", "q=2"],
                "not partitioned by 'q'",
            ),
            (vec!["d=2024-01-31", "s=x", "S=y", "n=1"], "two 'S=<value>'"),
        ] {
            let err = partition_of("f", &dirs, &cols, &[]).unwrap_err();
            assert!(err.to_string().contains(expected), "{err}");
        }
        let err = partition_of("f", &["p=A"], &[], &[]).unwrap_err();
        assert!(err.to_string().contains("not partitioned by 'p'"), "{err}");
    }
}
