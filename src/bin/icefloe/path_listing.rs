//! The `ListingTable` a file path read as a table is ([`listing_table`]): DataFusion's
//! `DynamicListTableFactory` (as `datafusion-cli` reads `FROM 'dir/'`), with the files of
//! the path listed and their schema read anew for each statement, and:
//!
//! - a directory holding files of several formats (`a.csv` and `b.parquet`, or `a.csv`
//!   and `b.csv.gz`) is an error naming the formats found, where DataFusion reads the
//!   format of whichever file it lists first and silently skips the others (tester's D4);
//! - Parquet files whose string (binary) columns are of different Arrow types are read
//!   together: pyarrow writes `string`, DataFusion `string_view` (`Utf8View`), and
//!   DataFusion's merge of the files' schemas refuses the mix. Each file's schema is read
//!   by itself and its string and binary types, nested ones too, are made the one type
//!   the session reads Parquet strings as (`Utf8View`/`BinaryView` under
//!   `datafusion.execution.parquet.schema_force_view_types`, the default; else
//!   `Utf8`/`Binary`) before they are merged; the scan casts each file's columns to it.
//!   A column that some files lack is nullable (their rows read it as null), where
//!   DataFusion's merge keeps a non-nullable column so, and the read then fails.
//!
//! That later statements see the path as it is then (files added or removed since, and
//! their columns) is the session's doing: the CLI's runtime keeps no list-files cache
//! (see `main.rs`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::catalog::TableProvider;
use datafusion::common::{plan_err, DataFusionError, Result as DFResult};
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::execution::context::SessionState;
use futures::{StreamExt, TryStreamExt};
use icefloe::datafusion::nan_safe_parquet::parquet_format;
use icefloe::io::FooterCheckedStore;
use object_store::ObjectMeta;

/// The files of one format found under a path.
struct FormatFiles {
    factory: Arc<dyn FileFormatFactory>,
    /// The compression extension (`gz` of `f.csv.gz`), if any.
    compression: Option<String>,
    files: Vec<ObjectMeta>,
}

/// The read-everything `ListingTable` of the file, directory or glob `name` (a path or
/// URL), or `None` when `name` is no URL, cannot be listed, or holds no file of a format
/// the session knows from its extension.
///
/// Errors: a plan error naming the formats (by extension, with the number of files of
/// each) when the path holds files of more than one; DataFusion's errors reading the
/// files' schemas or partition directories.
pub async fn listing_table(
    state: &SessionState,
    name: &str,
) -> DFResult<Option<Arc<dyn TableProvider>>> {
    let Ok(url) = ListingTableUrl::parse(name) else {
        return Ok(None);
    };
    let store = state.runtime_env().object_store(&url)?;
    // as DataFusion's factory: a local path that cannot be listed reads as no table, and
    // the CLI's "not found" says what is on disk there; an object store's refusal (no
    // credentials, a missing bucket) is reported as icefloe's own reads report it
    let listed = match url.list_all_files(state, store.as_ref(), "").await {
        Ok(listed) => listed.try_collect::<Vec<_>>().await,
        Err(e) => Err(e),
    };
    let listed = match listed {
        Ok(listed) => listed,
        Err(e) if url.scheme() != "file" => return Err(listing_error(name, e)),
        Err(_) => return Ok(None),
    };
    let mut formats = formats(state, listed)?;
    if formats.len() > 1 {
        let found: Vec<String> = formats
            .iter()
            .map(|(ext, f)| format!("{} .{ext}", f.files.len()))
            .collect();
        let first = formats
            .keys()
            .next()
            .map(String::as_str)
            .unwrap_or("parquet");
        let glob = format!("{}/*.{first}", name.trim_end_matches('/'));
        return plan_err!(
            "'{name}' holds files of several formats ({} files); a path is read as one \
             format: name the files of one (FROM '{glob}'), or read each with CREATE \
             EXTERNAL TABLE",
            found.join(", ")
        );
    }
    let Some((extension, found)) = formats.pop_first() else {
        return Ok(None);
    };
    let mut format_options = HashMap::new();
    if let Some(compression) = &found.compression {
        format_options.insert("format.compression".to_string(), compression.clone());
    }
    let format = found.factory.create(state, &format_options)?;
    let options = ListingOptions::new(Arc::clone(&format)).with_file_extension(extension);
    let config = ListingTableConfig::new(url)
        .with_listing_options(options)
        .infer_partitions_from_path(state)
        .await?;
    let config = match parquet_format(format.as_ref()) {
        Some(parquet) => {
            let view = parquet.force_view_types();
            let schema = unified_schema(state, parquet, view, &store, found.files).await?;
            config.with_schema(Arc::new(schema))
        }
        None => config.infer_schema(state).await?,
    };
    Ok(Some(Arc::new(ListingTable::try_new(config)?)))
}

/// The error listing the object store URL `name` failed with: the store's error as
/// icefloe's io layer words it ([`icefloe::io::store_error`]: what to set when no
/// credentials are configured), naming `name`; other errors as they are.
fn listing_error(name: &str, e: DataFusionError) -> DataFusionError {
    match e {
        DataFusionError::ObjectStore(e) => {
            DataFusionError::External(Box::new(icefloe::io::store_error(name, *e)))
        }
        e => e.context(format!("listing '{name}'")),
    }
}

/// The schema of the Parquet files at `location` as `CREATE EXTERNAL TABLE … STORED AS
/// PARQUET LOCATION` reads them (a file, a glob, or a directory's `.parquet` files, as
/// DataFusion's `ListingTableFactory` lists them), merged as a path's are: each file's
/// string and binary types made the session's, a column that some files lack nullable
/// (see the module docs). `format_options` are the statement's `OPTIONS` (`format.*`).
/// `None` when nothing is listed there (DataFusion then reports it).
///
/// Errors: DataFusion's, for a location that is no URL, bad options, or files whose
/// schemas cannot be read or merged (a column of two types other than strings).
pub async fn parquet_location_schema(
    state: &SessionState,
    location: &str,
    format_options: &HashMap<String, String>,
) -> DFResult<Option<Schema>> {
    let mut url = ListingTableUrl::parse(location)?;
    if url.is_folder() && url.get_glob().is_none() {
        url = url.with_glob("*.parquet")?;
    }
    let Some(factory) = state.get_file_format_factory("parquet") else {
        return Ok(None);
    };
    let format = factory.create(state, format_options)?;
    let Some(parquet) = parquet_format(format.as_ref()) else {
        return Ok(None);
    };
    let store = state.runtime_env().object_store(&url)?;
    let files: Vec<ObjectMeta> = url
        .list_all_files(state, store.as_ref(), "")
        .await?
        .try_collect()
        .await?;
    if files.is_empty() {
        return Ok(None);
    }
    let view = parquet.force_view_types();
    unified_schema(state, parquet, view, &store, files)
        .await
        .map(Some)
}

/// The listed files by listing extension (`parquet`, `csv.gz`), those whose extension
/// names no format of the session left out (DataFusion's listing reads only files of
/// the table's extension).
fn formats(
    state: &SessionState,
    listed: Vec<ObjectMeta>,
) -> DFResult<BTreeMap<String, FormatFiles>> {
    let mut formats: BTreeMap<String, FormatFiles> = BTreeMap::new();
    for file in listed {
        let (extension, compression) =
            ListingTableConfig::infer_file_extension_and_compression_type(file.location.as_ref())?;
        let Some(factory) = state.get_file_format_factory(&extension) else {
            continue;
        };
        let listing_extension = match &compression {
            Some(c) => format!("{extension}.{c}"),
            None => extension,
        };
        formats
            .entry(listing_extension)
            .or_insert_with(|| FormatFiles {
                factory,
                compression,
                files: vec![],
            })
            .files
            .push(file);
    }
    Ok(formats)
}

/// The merged schema of `files` of `format`, each read by itself with its string and
/// binary types made one ([`strings_as`]: the views when `view`), a column that some
/// files lack nullable; empty files are skipped, as DataFusion does.
async fn unified_schema(
    state: &SessionState,
    format: &dyn FileFormat,
    view: bool,
    store: &Arc<dyn object_store::ObjectStore>,
    files: Vec<ObjectMeta>,
) -> DFResult<Schema> {
    let concurrency = state
        .config_options()
        .execution
        .meta_fetch_concurrency
        .get();
    let mut schemas: Vec<(String, Schema)> = futures::stream::iter(files)
        .filter(|f| futures::future::ready(f.size > 0))
        .map(|file| async move {
            // a footer length beyond the file is an error naming it (the `parquet`
            // crate's decoder would panic on it)
            let files = std::slice::from_ref(&file);
            let (checked, store) = FooterCheckedStore::for_objects(store, files);
            let schema = format
                .infer_schema(state, &store, files)
                .await
                .map_err(|e| checked.naming_corrupt_footer(e))?;
            Ok::<_, datafusion::error::DataFusionError>((
                file.location.to_string(),
                strings_as(&schema, view),
            ))
        })
        .buffer_unordered(concurrency)
        .try_collect()
        .await?;
    // the order DataFusion merges in (its columns' order follows the files')
    schemas.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
    let files = schemas.len();
    let mut in_files: HashMap<String, usize> = HashMap::new();
    for (_, schema) in &schemas {
        for field in schema.fields() {
            *in_files.entry(field.name().clone()).or_default() += 1;
        }
    }
    let merged = Schema::try_merge(schemas.into_iter().map(|(_, s)| s))?;
    // a column some files lack is null in their rows, whatever the others declare
    let fields: Vec<FieldRef> = merged
        .fields()
        .iter()
        .map(|f| match in_files.get(f.name()) {
            Some(&n) if n < files && !f.is_nullable() => {
                Arc::new(Field::clone(f).with_nullable(true))
            }
            _ => Arc::clone(f),
        })
        .collect();
    Ok(Schema::new_with_metadata(fields, merged.metadata().clone()))
}

/// `schema` with every string and binary type, at any depth, made one type:
/// `Utf8View`/`BinaryView` when `view`, else `Utf8`/`Binary` (from the views; `Large*`
/// kept).
fn strings_as(schema: &Schema, view: bool) -> Schema {
    let fields: Vec<FieldRef> = schema.fields().iter().map(|f| field_as(f, view)).collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

fn field_as(field: &FieldRef, view: bool) -> FieldRef {
    let data_type = type_as(field.data_type(), view);
    if &data_type == field.data_type() {
        Arc::clone(field)
    } else {
        Arc::new(Field::clone(field).with_data_type(data_type))
    }
}

fn type_as(data_type: &DataType, view: bool) -> DataType {
    use DataType::*;
    match data_type {
        Utf8 | LargeUtf8 if view => Utf8View,
        Binary | LargeBinary if view => BinaryView,
        Utf8View if !view => Utf8,
        BinaryView if !view => Binary,
        List(f) => List(field_as(f, view)),
        LargeList(f) => LargeList(field_as(f, view)),
        ListView(f) => ListView(field_as(f, view)),
        LargeListView(f) => LargeListView(field_as(f, view)),
        FixedSizeList(f, n) => FixedSizeList(field_as(f, view), *n),
        Struct(fields) => Struct(fields.iter().map(|f| field_as(f, view)).collect()),
        Map(f, sorted) => Map(field_as(f, view), *sorted),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_at_any_depth_become_one_type() {
        let item = Arc::new(Field::new("item", DataType::Utf8, true));
        let schema = Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new("b", DataType::LargeBinary, false),
            Field::new("l", DataType::List(item), true),
            Field::new(
                "st",
                DataType::Struct(vec![Field::new("v", DataType::Utf8View, true)].into()),
                true,
            ),
            Field::new("n", DataType::Int64, true),
        ]);
        let view = strings_as(&schema, true);
        let types: Vec<String> = view
            .fields()
            .iter()
            .map(|f| f.data_type().to_string())
            .collect();
        assert_eq!(
            types,
            [
                "Utf8View",
                "BinaryView",
                "List(Utf8View)",
                "Struct(\"v\": Utf8View)",
                "Int64"
            ]
        );
        assert!(!view.field(1).is_nullable());
        let plain = strings_as(&view, false);
        assert_eq!(plain.field(0).data_type(), &DataType::Utf8);
        assert_eq!(plain.field(1).data_type(), &DataType::Binary);
        assert_eq!(
            plain.field(3).data_type(),
            &DataType::Struct(vec![Field::new("v", DataType::Utf8, true)].into())
        );
    }
}
